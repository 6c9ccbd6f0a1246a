/* SPDX-License-Identifier: Apache-2.0 */
/* common/os/win.c - Windows implementations of common/os/os.h and of the
 * parts of common/ that Win32 does differently (the clock and its sleep).
 * Built only for Windows (cmake/windows.cmake). */
#ifdef _WIN32
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
/* after windows.h, whose types they use */
#include <aclapi.h>
#include <stdio.h>

#include "common/clock.h"
#include "common/os/os.h"

#ifndef CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
#define CREATE_WAITABLE_TIMER_HIGH_RESOLUTION 0x00000002
#endif

char *strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = malloc(len + 1);

    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

#define OS_ERRNAME(n) {n, #n},
static const struct {
    int e;
    const char *name;
} os_errnames[] = {
    /* The C runtime's, then the POSIX supplement of mingw-w64's errno.h. */
    OS_ERRNAME(EPERM) OS_ERRNAME(ENOENT) OS_ERRNAME(ESRCH) OS_ERRNAME(EINTR) OS_ERRNAME(
        EIO) OS_ERRNAME(ENXIO) OS_ERRNAME(E2BIG) OS_ERRNAME(ENOEXEC) OS_ERRNAME(EBADF)
        OS_ERRNAME(ECHILD) OS_ERRNAME(EAGAIN) OS_ERRNAME(ENOMEM) OS_ERRNAME(EACCES) OS_ERRNAME(
            EFAULT) OS_ERRNAME(EBUSY) OS_ERRNAME(EEXIST) OS_ERRNAME(EXDEV) OS_ERRNAME(ENODEV)
            OS_ERRNAME(ENOTDIR) OS_ERRNAME(EISDIR) OS_ERRNAME(EINVAL) OS_ERRNAME(ENFILE) OS_ERRNAME(
                EMFILE) OS_ERRNAME(ENOTTY) OS_ERRNAME(EFBIG) OS_ERRNAME(ENOSPC) OS_ERRNAME(ESPIPE)
                OS_ERRNAME(EROFS) OS_ERRNAME(EMLINK) OS_ERRNAME(EPIPE) OS_ERRNAME(EDOM) OS_ERRNAME(
                    ERANGE) OS_ERRNAME(EDEADLK) OS_ERRNAME(ENAMETOOLONG) OS_ERRNAME(ENOLCK)
                    OS_ERRNAME(ENOSYS) OS_ERRNAME(ENOTEMPTY) OS_ERRNAME(EILSEQ) OS_ERRNAME(
                        EADDRINUSE) OS_ERRNAME(EADDRNOTAVAIL) OS_ERRNAME(EAFNOSUPPORT)
                        OS_ERRNAME(EALREADY) OS_ERRNAME(EBADMSG) OS_ERRNAME(ECANCELED) OS_ERRNAME(
                            ECONNABORTED) OS_ERRNAME(ECONNREFUSED) OS_ERRNAME(ECONNRESET)
                            OS_ERRNAME(EDESTADDRREQ) OS_ERRNAME(EHOSTUNREACH) OS_ERRNAME(
                                EIDRM) OS_ERRNAME(EINPROGRESS) OS_ERRNAME(EISCONN) OS_ERRNAME(ELOOP)
                                OS_ERRNAME(EMSGSIZE) OS_ERRNAME(ENETDOWN) OS_ERRNAME(ENETRESET)
                                    OS_ERRNAME(ENETUNREACH) OS_ERRNAME(ENOBUFS) OS_ERRNAME(ENODATA)
                                        OS_ERRNAME(ENOLINK) OS_ERRNAME(ENOMSG) OS_ERRNAME(
                                            ENOPROTOOPT) OS_ERRNAME(ENOSR) OS_ERRNAME(ENOSTR)
                                            OS_ERRNAME(ENOTCONN) OS_ERRNAME(ENOTRECOVERABLE)
                                                OS_ERRNAME(ENOTSOCK) OS_ERRNAME(ENOTSUP)
                                                    OS_ERRNAME(EOPNOTSUPP) OS_ERRNAME(EOVERFLOW)
                                                        OS_ERRNAME(EOWNERDEAD) OS_ERRNAME(EPROTO)
                                                            OS_ERRNAME(EPROTONOSUPPORT) OS_ERRNAME(
                                                                EPROTOTYPE) OS_ERRNAME(ETIME)
                                                                OS_ERRNAME(ETIMEDOUT)
                                                                    OS_ERRNAME(ETXTBSY)
                                                                        OS_ERRNAME(EWOULDBLOCK)};
#undef OS_ERRNAME

const char *iof_os_errname(int e)
{
    for (size_t i = 0; i < sizeof(os_errnames) / sizeof(os_errnames[0]); i++)
        if (os_errnames[i].e == e)
            return os_errnames[i].name;
    return NULL;
}

int iof_os_win_errno(unsigned long err)
{
    switch (err) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
        return -ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_PRIVILEGE_NOT_HELD:
    case ERROR_WRITE_PROTECT:
        return -EACCES;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
        return -EEXIST;
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_BUSY:
        return -EBUSY;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
        return -ENOSPC;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
        return -ENOMEM;
    case ERROR_INVALID_PARAMETER:
    case ERROR_INVALID_NAME:
    case ERROR_INVALID_HANDLE:
        return -EINVAL;
    case ERROR_DIRECTORY:
        return -ENOTDIR;
    case ERROR_TOO_MANY_OPEN_FILES:
        return -EMFILE;
    case ERROR_NOT_SUPPORTED:
    case ERROR_INVALID_FUNCTION:
        return -ENOTSUP;
    case ERROR_CANT_ACCESS_FILE:
    case ERROR_CANT_RESOLVE_FILENAME:
        return -ELOOP;
    case ERROR_FILENAME_EXCED_RANGE:
        return -ENAMETOOLONG;
    default:
        return -EIO;
    }
}

int iof_os_dacl_exposed(const void *dacl_, char *who, size_t cap)
{
    static const WELL_KNOWN_SID_TYPE wide[] = {WinWorldSid, WinAuthenticatedUserSid,
                                               WinBuiltinUsersSid, WinBuiltinGuestsSid,
                                               WinAnonymousSid};
    static const char *const names[] = {"Everyone", "Authenticated Users", "BUILTIN\\Users",
                                        "BUILTIN\\Guests", "ANONYMOUS LOGON"};
    const DWORD read = FILE_READ_DATA | GENERIC_READ | GENERIC_ALL;
    PACL dacl = (PACL)(uintptr_t)dacl_;

    if (!dacl) {
        snprintf(who, cap, "anyone (the file has no DACL)");
        return 1;
    }
    for (DWORD i = 0; i < dacl->AceCount; i++) {
        ACE_HEADER *h;
        if (!GetAce(dacl, i, (void **)&h) || h->AceType != ACCESS_ALLOWED_ACE_TYPE ||
            (h->AceFlags & INHERIT_ONLY_ACE))
            continue;
        ACCESS_ALLOWED_ACE *a = (ACCESS_ALLOWED_ACE *)h;
        if (!(a->Mask & read))
            continue;
        for (size_t k = 0; k < sizeof(wide) / sizeof(wide[0]); k++)
            if (IsWellKnownSid((PSID)&a->SidStart, wide[k])) {
                snprintf(who, cap, "%s", names[k]);
                return 1;
            }
    }
    return 0;
}

int iof_os_key_exposed(const char *path, char *who, size_t cap)
{
    PSECURITY_DESCRIPTOR sd = NULL;
    wchar_t w[MAX_PATH * 4];
    PACL dacl = NULL;
    DWORD e;
    int r;

    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, MAX_PATH * 4) <= 0)
        return -EINVAL;
    e = GetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &dacl, NULL,
                              &sd);
    if (e != ERROR_SUCCESS)
        return iof_os_win_errno(e);
    r = iof_os_dacl_exposed(dacl, who, cap);
    LocalFree(sd);
    return r;
}

uint64_t iof_os_now_ns(void)
{
    static volatile LONGLONG freq; /* constant: a racing first read stores the same value */
    LARGE_INTEGER c, f;
    uint64_t hz;

    if (!freq) {
        QueryPerformanceFrequency(&f);
        freq = f.QuadPart;
    }
    hz = (uint64_t)freq;
    QueryPerformanceCounter(&c);
    return (uint64_t)c.QuadPart / hz * IOF_NS_PER_S + (uint64_t)c.QuadPart % hz * IOF_NS_PER_S / hz;
}

/* One waitable timer per thread: high resolution where the system has it
 * (Windows 10 1803 and later), else the ordinary one, else Sleep. */
static HANDLE os_thread_timer(void)
{
    static __thread HANDLE timer;
    static __thread bool tried;

    if (!tried) {
        tried = true;
        timer = CreateWaitableTimerExW(NULL, NULL, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
                                       TIMER_ALL_ACCESS);
        if (!timer)
            timer = CreateWaitableTimerExW(NULL, NULL, 0, TIMER_ALL_ACCESS);
    }
    return timer;
}

/* winpthreads' clock_nanosleep knows only CLOCK_REALTIME, so the Linux
 * version (clock.c) would return at once here. */
void iof_sleep_until(uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = iof_now_ns();
        uint64_t left;
        HANDLE timer;

        if (now >= deadline_ns)
            return;
        left = deadline_ns - now;
        timer = os_thread_timer();
        if (timer) {
            LARGE_INTEGER due;
            /* Relative, in 100 ns units, rounded up. */
            due.QuadPart = -(LONGLONG)((left + 99) / 100);
            if (SetWaitableTimer(timer, &due, 0, NULL, NULL, FALSE)) {
                WaitForSingleObject(timer, INFINITE);
                continue;
            }
        }
        if (left > 60 * IOF_NS_PER_S)
            left = 60 * IOF_NS_PER_S;
        Sleep((DWORD)((left + IOF_NS_PER_MS - 1) / IOF_NS_PER_MS));
    }
}
#endif
