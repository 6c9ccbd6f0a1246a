/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/linux/host.c - the machine and the process on Linux (dynamo/os/os.h):
 * CPUs, memory and kernel release for the hello, what the budget weighs
 * (/proc/meminfo, the memory cgroup, aio-nr, descriptors), and the
 * process's start-up, random bytes and memory trim. */
#include "dynamo/os/os.h"

#include "common/budget.h"
#include "common/log.h"
#include "common/net.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

/* A cgroup limit at or above this is "no limit" (v1 reports ~2^63). */
#define OS_NO_LIMIT (1ull << 60)

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

void dyn_os_machine(struct dyn_os_machine *m)
{
    struct utsname u;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

    memset(m, 0, sizeof(*m));
    m->cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    m->memory_bytes = (uint64_t)pages * (uint64_t)page;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof(m->kernel), "%s", u.release);
}

unsigned dyn_os_ncpus(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? (unsigned)cpus : 1;
}

/* The first number in file `path`, or UINT64_MAX when unreadable or "max". */
static uint64_t read_u64(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v;
    int n;

    if (!f)
        return UINT64_MAX;
    n = fscanf(f, "%llu", &v);
    fclose(f);
    return n == 1 ? (uint64_t)v : UINT64_MAX;
}

static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kib;
    uint64_t v = UINT64_MAX;

    if (!f)
        return v;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
            v = (uint64_t)kib * 1024;
            break;
        }
    fclose(f);
    return v;
}

/* Room left under the memory cgroup limits of this process (the tightest of
 * its cgroup and every ancestor), or UINT64_MAX when none is set. Cgroup v2
 * (memory.max, memory.current) and v1 (memory.limit_in_bytes,
 * memory.usage_in_bytes); a cgroup path not visible from here (a container's
 * own cgroup namespace) is read at the mount's root. */
static uint64_t cgroup_room(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[4096];
    uint64_t room = UINT64_MAX;

    if (!f)
        return room;
    while (fgets(line, sizeof(line), f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *rel;
        const char *base, *fmax, *fcur;
        char dir[4096 + 64], p[4096 + 128];
        bool v2;

        if (!c2)
            continue;
        *c2 = '\0';
        rel = c2 + 1;
        rel[strcspn(rel, "\n")] = '\0';
        v2 = c1 == line + 1 && line[0] == '0' && c1[1] == '\0';
        if (!v2 && !strstr(c1 + 1, "memory"))
            continue;
        base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
        fmax = v2 ? "memory.max" : "memory.limit_in_bytes";
        fcur = v2 ? "memory.current" : "memory.usage_in_bytes";
        snprintf(dir, sizeof(dir), "%s%s", base, rel);
        snprintf(p, sizeof(p), "%s/%s", dir, fmax);
        if (access(p, R_OK))
            snprintf(dir, sizeof(dir), "%s", base);
        for (;;) {
            uint64_t lim, cur;
            char *slash;
            snprintf(p, sizeof(p), "%s/%s", dir, fmax);
            lim = read_u64(p);
            snprintf(p, sizeof(p), "%s/%s", dir, fcur);
            cur = read_u64(p);
            if (lim < OS_NO_LIMIT)
                room = min_u64(room, cur == UINT64_MAX || cur >= lim ? 0 : lim - cur);
            if (strlen(dir) <= strlen(base))
                break;
            slash = strrchr(dir, '/');
            *slash = '\0';
        }
    }
    fclose(f);
    return room;
}

static uint64_t open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    uint64_t n = 0;

    if (!d)
        return 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n > 3 ? n - 3 : 0; /* ".", ".." and the directory's own descriptor */
}

uint64_t dyn_os_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        return rl.rlim_cur;
    return UINT64_MAX;
}

void dyn_os_resources(struct dyn_os_resources *r)
{
    r->mem_free = min_u64(mem_available(), cgroup_room());
    r->aio_max = read_u64("/proc/sys/fs/aio-max-nr");
    r->aio_used = read_u64("/proc/sys/fs/aio-nr");
    r->fd_limit = dyn_os_fd_limit();
    r->fd_in_use = r->fd_limit == UINT64_MAX ? 0 : open_fds();
}

int dyn_os_random(void *buf, size_t len)
{
    ssize_t n = getrandom(buf, len, 0);
    if (n < 0)
        return -errno;
    return (size_t)n == len ? 0 : -EIO;
}

/* glibc's malloc_trim. Not under AddressSanitizer: its allocator replaces
 * malloc, and glibc's trim of an arena that was never set up crashed
 * (tls_resume under ASan). */
#if defined(__SANITIZE_ADDRESS__)
#define OS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OS_ASAN 1
#endif
#endif

/* The size of a transparent huge page on x86-64 and arm64 with 4 KiB pages. */
#define OS_HUGE_PAGE (2u << 20)

void *dyn_os_io_buf_alloc(size_t len)
{
    void *p;
    size_t align = len >= OS_HUGE_PAGE ? OS_HUGE_PAGE : IOF_IO_BUF_ALIGN;

    if (posix_memalign(&p, align, len ? len : 1))
        return NULL;
    /* Only a hint: without transparent huge pages the buffer keeps 4 KiB
     * pages and nothing else changes. */
    if (len >= OS_HUGE_PAGE)
        (void)madvise(p, len / OS_HUGE_PAGE * OS_HUGE_PAGE, MADV_HUGEPAGE);
    return p;
}

void dyn_os_io_buf_free(void *p)
{
    free(p);
}

void dyn_os_thread_name(const char *name)
{
    char n[16];

    snprintf(n, sizeof(n), "%s", name);
    pthread_setname_np(pthread_self(), n);
}

int dyn_os_thread_short_slice(uint64_t slice_ns)
{
#if defined(SYS_sched_setattr) && defined(SYS_sched_getattr)
    struct { /* struct sched_attr (uapi), SCHED_ATTR_SIZE_VER0 */
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t prio;
        uint64_t runtime, deadline, period;
    } a = {0};

    if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof(a), 0) < 0)
        return -errno;
    if (a.policy != 0 /* SCHED_OTHER */ && a.policy != 3 /* SCHED_BATCH */)
        return -EPERM; /* real-time or idle: not ours to change */
    a.size = sizeof(a);
    a.flags = 0;
    a.runtime = slice_ns;
    if (syscall(SYS_sched_setattr, 0, &a, 0) < 0)
        return -errno;
    return 0;
#else
    (void)slice_ns;
    return -ENOSYS;
#endif
}

int dyn_os_thread_sched(uint64_t *run_ns, uint64_t *wait_ns)
{
    char b[96];
    unsigned long long run, wait;
    ssize_t n;
    int err, fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    n = read(fd, b, sizeof(b) - 1);
    err = n < 0 ? -errno : -EIO; /* before close can change errno */
    close(fd);
    if (n <= 0)
        return err;
    b[n] = '\0';
    if (sscanf(b, "%llu %llu", &run, &wait) != 2)
        return -EIO;
    *run_ns = run;
    *wait_ns = wait;
    return 0;
}

void dyn_os_trim_memory(void)
{
#ifndef OS_ASAN
    malloc_trim(0);
#endif
}

/* systemd's default soft limit is 1024. */
void dyn_os_raise_fd_limit(void)
{
    unsigned long long was = 0, now = 0;
    int rc = iof_net_raise_fd_limit(&was, &now);

    if (rc < 0)
        IOF_WARN("cannot raise the descriptor limit from %llu: %s", was, strerror(-rc));
    else if (now != was)
        IOF_INFO("descriptor limit raised from %llu to %llu", was, now);
}

void dyn_os_process_init(void)
{
    signal(SIGPIPE, SIG_IGN);
}

void dyn_os_own_job(void)
{
    signal(SIGTTOU, SIG_IGN);
    /* EPERM: already a session leader (started by something else than
     * iofleet run): its own group already. */
    if (setpgid(0, 0) < 0 && errno != EPERM)
        IOF_WARN("dynamo: cannot leave the terminal's process group: %s", strerror(errno));
}

void dyn_os_agent_stopped(void) {}

/* systemd runs the agent on Linux (packaging/systemd): no service command. */
int dyn_os_service(int argc, char **argv, dyn_os_agent_fn agent)
{
    (void)argc, (void)argv, (void)agent;
    return -1;
}
