/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/host.c - the machine and the process on Windows
 * (dynamo/os/os.h): CPUs (GetActiveProcessorCount), memory
 * (GlobalMemoryStatusEx) and the system's version (RtlGetVersion, which,
 * unlike GetVersionEx, is not capped at the version the program's manifest
 * names) for the hello, what the budget weighs (no AIO event limit; the C
 * runtime's descriptor table), random bytes (BCryptGenRandom), the heap's
 * trim. */
#ifdef _WIN32
#include "dynamo/os/os.h"

#include "common/budget.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <windows.h>
/* after windows.h, whose types it uses */
#include <bcrypt.h>

/* The descriptors msvcrt's low-level I/O table holds: every target a worker
 * opens is one (_open_osfhandle). */
#define OS_WIN_CRT_FDS 2048u

typedef LONG(WINAPI *os_rtl_get_version_fn)(OSVERSIONINFOW *);
typedef const char *(__cdecl *os_wine_version_fn)(void);

void dyn_os_machine(struct dyn_os_machine *m)
{
    MEMORYSTATUSEX ms = {.dwLength = sizeof(ms)};
    OSVERSIONINFOW v = {.dwOSVersionInfoSize = sizeof(v)};
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    os_rtl_get_version_fn get_version = NULL;
    os_wine_version_fn wine_version = NULL;
    size_t n;

    memset(m, 0, sizeof(*m));
    m->cpus = dyn_os_ncpus();
    if (GlobalMemoryStatusEx(&ms))
        m->memory_bytes = ms.ullTotalPhys;
    if (ntdll) {
        /* Function pointers from GetProcAddress: the cast is Win32's idiom. */
        get_version = (os_rtl_get_version_fn)(void (*)(void))GetProcAddress(ntdll, "RtlGetVersion");
        wine_version =
            (os_wine_version_fn)(void (*)(void))GetProcAddress(ntdll, "wine_get_version");
    }
    if (get_version && get_version(&v) == 0)
        snprintf(m->kernel, sizeof(m->kernel), "Windows NT %lu.%lu build %lu",
                 (unsigned long)v.dwMajorVersion, (unsigned long)v.dwMinorVersion,
                 (unsigned long)v.dwBuildNumber);
    /* Under Wine, say so: its figures are not Windows' (docs/windows.md). */
    n = strlen(m->kernel);
    if (wine_version && n < sizeof(m->kernel))
        snprintf(m->kernel + n, sizeof(m->kernel) - n, "%sWine %s", n ? " on " : "",
                 wine_version());
}

unsigned dyn_os_ncpus(void)
{
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    return n > 0 ? (unsigned)n : 1;
}

void dyn_os_resources(struct dyn_os_resources *r)
{
    MEMORYSTATUSEX ms = {.dwLength = sizeof(ms)};

    r->mem_free = GlobalMemoryStatusEx(&ms) ? ms.ullAvailPhys : UINT64_MAX;
    r->aio_max = UINT64_MAX; /* no system-wide limit of asynchronous I/Os */
    r->aio_used = UINT64_MAX;
    r->fd_limit = dyn_os_fd_limit();
    r->fd_in_use = 0; /* unknown */
}

int dyn_os_random(void *buf, size_t len)
{
    if (len > ULONG_MAX)
        return -EINVAL;
    return BCRYPT_SUCCESS(BCryptGenRandom(NULL, buf, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG))
               ? 0
               : -EIO;
}

/* Aligned for unbuffered I/O (FILE_FLAG_NO_BUFFERING wants sector-aligned
 * buffers). Large pages need SeLockMemoryPrivilege, which the agent does not
 * ask for: the buffers keep the normal page size. */
void *dyn_os_io_buf_alloc(size_t len)
{
    return _aligned_malloc(len ? len : 1, IOF_IO_BUF_ALIGN);
}

void dyn_os_io_buf_free(void *p)
{
    _aligned_free(p);
}

void dyn_os_thread_name(const char *name)
{
    (void)name; /* SetThreadDescription is not in every supported Windows */
}

int dyn_os_thread_short_slice(uint64_t slice_ns)
{
    (void)slice_ns;
    return -ENOSYS;
}

int dyn_os_thread_sched(uint64_t *run_ns, uint64_t *wait_ns)
{
    (void)run_ns; /* Windows keeps no time waited runnable per thread */
    (void)wait_ns;
    return -ENOSYS;
}

void dyn_os_trim_memory(void)
{
    HeapCompact(GetProcessHeap(), 0);
}

uint64_t dyn_os_fd_limit(void)
{
    return OS_WIN_CRT_FDS;
}

/* No process groups to leave: Ctrl-C reaches a console's processes through
 * dynamo/os/windows/stop.c. */
void dyn_os_own_job(void) {}

/* Nothing to raise: the C runtime's table is fixed. */
void dyn_os_raise_fd_limit(void) {}

/* No SIGPIPE on Windows (a closed peer is an error from the write). A
 * missing disk or medium must not open a dialog box on a headless agent.
 * Ctrl-C, Ctrl-Break and the console's close stop the agent
 * (dynamo/os/windows/stop.c). */
void dyn_os_process_init(void)
{
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
    dyn_win_stop_console_init();
}
#endif
