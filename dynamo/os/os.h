/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/os.h - the agent's platform layer: what dynamo needs of the
 * operating system that is not plain C, POSIX files or libuv. One
 * implementation per OS (dynamo/os/linux/, later dynamo/os/windows/); the
 * rest of dynamo includes no OS-specific header (tests/integration/layering.sh).
 *
 * The layer is this header and the OS-facing modules whose headers stay
 * beside the code that uses them and whose implementations live in the OS
 * folder: dynamo/scope.h (opening a target safely, the exclusive claim of a
 * device), dynamo/devguard.h (may a device be written, iofleet's marker),
 * the probes of dynamo/inventory.h (dyn_inventory_target/_workdir/_place,
 * dyn_fstype_name, dyn_dev_ram_backed) and dynamo/cpustat.h
 * (dyn_cpu_sample). docs/architecture.md ("The platform layer") lists which
 * file implements what. Nothing here is on the per-I/O path: the engines
 * call the OS directly. */
#ifndef IOF_DYNAMO_OS_H
#define IOF_DYNAMO_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An opened target as the OS names it: a file descriptor on Linux (widened),
 * a HANDLE on Windows. */
typedef intptr_t dyn_os_handle;

/* What the hello tells of the machine. */
struct dyn_os_machine {
    uint32_t cpus;         /* online CPUs */
    uint64_t memory_bytes; /* physical memory */
    char kernel[128];      /* the kernel's release (raw: the caller escapes it) */
};

/* Fills *m; a figure that cannot be read is 0 (kernel ""). */
void dyn_os_machine(struct dyn_os_machine *m);

/* Online CPUs, at least 1. */
unsigned dyn_os_ncpus(void);

/* What the host has free for a test, as the budget weighs it (dynamo/budget.h).
 * UINT64_MAX: unknown or unlimited. */
struct dyn_os_resources {
    uint64_t mem_free;  /* available memory, within the process's memory cgroup */
    uint64_t aio_max;   /* the host's AIO event limit (Linux aio-max-nr) */
    uint64_t aio_used;  /* AIO events in use now (aio-nr) */
    uint64_t fd_limit;  /* the soft descriptor limit */
    uint64_t fd_in_use; /* descriptors this process holds (0: unknown) */
};

void dyn_os_resources(struct dyn_os_resources *r);

/* A block device's size in bytes and logical sector size, from the opened
 * target `h`. 0, or a negative errno. */
int dyn_os_blockdev_geometry(dyn_os_handle h, uint64_t *size, uint64_t *lbs);

/* The identity of the file `base` in the directory open as `dirfd`, not
 * following a last symbolic link: for the workdir's ledger (dynamo/clean.h). */
struct dyn_os_file_id {
    bool regular;   /* a regular file */
    bool mine;      /* owned by the agent's effective user */
    uint64_t dev;   /* the filesystem's device number */
    uint64_t ino;   /* the inode number */
    uint64_t size;  /* bytes */
    uint64_t btime; /* creation time in ns since the epoch; 0: unknown */
    uint64_t nlink; /* hard links */
};

/* 0, or a negative errno. */
int dyn_os_file_id(int dirfd, const char *base, struct dyn_os_file_id *out);

struct iof_diag;

/* Judges the file the agent opened as `fd` before it reuses, fills or
 * removes it (a test file, the ledger): a regular file (not a link, a
 * junction, a directory or a device), with one link, of the agent's user -
 * Linux: st_uid == euid; Windows: owned by SYSTEM, Administrators or the
 * agent's account, and no one else allowed to write it, delete it or change
 * its permissions (dynamo/os/windows/acl.c). 0, or IOF_EDENIED (or a
 * negative errno) with diag naming `what` 'name', the owner and the reason,
 * e.g. "target 'a.dat': not a plain file of the agent's user: owned by
 * nobody (uid 65534), not by the agent's (root, uid 0)". */
int dyn_os_file_check(int fd, const char *what, const char *name, struct iof_diag *diag);

/* Drops the clean cached pages of the file or block device open as `fd`,
 * after the agent read or wrote it through the page cache (a test file's
 * fill, the device guard's and the inventory's probes, the marker), and of a
 * test file reused as it is (what others read of it). Left there, a test
 * file's fill holds memory the size of the file, and a block device keeps
 * them until its last close: every O_DIRECT read of the test then flushes
 * the range first and every write invalidates it. Linux: posix_fadvise
 * DONTNEED; Windows: nothing (no call drops one file's cached pages). */
void dyn_os_drop_cache(int fd);

/* Fills buf with len bytes from the OS's random source. 0, or a negative errno. */
int dyn_os_random(void *buf, size_t len);

/* I/O buffers of a worker: `len` bytes aligned for direct I/O, backed by
 * huge pages where the OS offers them for the asking (Linux: transparent huge
 * pages in "madvise" mode, for buffers of 2 MiB or more), so that setting
 * them up faults a page per 2 MiB instead of per 4 KiB and the kernel pins
 * one page instead of 128 for a 512 KiB transfer. NULL when out of memory.
 * Freed with dyn_os_io_buf_free. */
void *dyn_os_io_buf_alloc(size_t len);
void dyn_os_io_buf_free(void *p);

/* Gives memory freed by the allocator back to the OS where it can. */
void dyn_os_trim_memory(void);

/* Names the calling thread (at most 15 characters kept) where the platform
 * shows thread names: top -H, ps -L, /proc/PID/task/TID/comm. */
void dyn_os_thread_name(const char *name);

/* Asks the scheduler for a short slice for the calling thread, keeping its
 * priority and policy, so that it runs soon when it wakes (a rated worker):
 * Linux 6.12+ (sched_attr.sched_runtime under EEVDF). 0, or -errno where the
 * request is not taken (older kernels, a real-time thread, Windows). */
int dyn_os_thread_short_slice(uint64_t slice_ns);

/* The calling thread's scheduler account so far: nanoseconds it ran on a CPU
 * and nanoseconds it waited runnable for one (Linux: /proc/thread-self/
 * schedstat). 0, or -errno where the platform does not keep it (Windows, a
 * kernel without CONFIG_SCHED_INFO). */
int dyn_os_thread_sched(uint64_t *run_ns, uint64_t *wait_ns);

/* The process's soft descriptor limit (Windows: the CRT's), UINT64_MAX when
 * unlimited or unknown. */
uint64_t dyn_os_fd_limit(void);

/* First thing in main, before any socket or pipe is written: a peer that
 * closes is an error to handle, not a signal that kills (SIGPIPE ignored). */
void dyn_os_process_init(void);

/* The local agent of `iofleet run` (--manager-fd), as soon as its options
 * are read: a process group of its own in the manager's session, so a
 * terminal's Ctrl-C (sent to the foreground group) reaches the manager
 * alone, which stops the test and collects its results. The session stays
 * the one the user ran iofleet in, so the scheduler treats the agent's
 * workers as that command's (autogroup: one group per session), as it would
 * fio started from the same shell. Writing to that terminal from a
 * background group must not stop it (SIGTTOU ignored). Called again, it
 * changes nothing. Between the fork and this call (the exec, the loader) a
 * Ctrl-C still reaches the agent, which then ends: the run reports it lost.
 * Nothing on Windows. */
void dyn_os_own_job(void);

/* After dyn_agent_main() has returned (every test's I/O ended, every
 * connection closed): a stop the system asked for is logged with the time
 * it took (Windows: Ctrl-C, Ctrl-Break, the console's close, the service's
 * stop, dynamo/os/windows/stop.c). Nothing on Linux, where SIGINT and
 * SIGTERM are the agent's own (dynamo/agent.c). */
void dyn_os_agent_stopped(void);

/* Once logging is set up: the soft descriptor limit raised to the hard one
 * (logged), as connections, targets and a flood's worth of pending
 * handshakes all need descriptors. */
void dyn_os_raise_fd_limit(void);

/* Parses dynamo's options (argv[0] the program, then the options) and runs the
 * agent until it stops: its exit code. With check_only, stops after the checks
 * (0 when the options are good). dynamo/main.c's. */
typedef int (*dyn_os_agent_fn)(int argc, char **argv, bool check_only);

/* The system's service command, `dynamo service ...` (Windows: install, uninstall,
 * start, stop, and run, which the service manager starts; dynamo/os/windows/
 * service.c): its exit code, or -1 when argv is no such command (always on Linux,
 * where systemd runs the agent), and main() goes on as usual. */
int dyn_os_service(int argc, char **argv, dyn_os_agent_fn agent);

#endif
