/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/budget.c - the agent's budget: what a plan's tests need on this node
 * (common/budget.c) against what the agent's flags allow and the host has
 * free (threads, I/O buffer memory, AIO events, descriptors), checked before
 * anything starts. */
#include "dynamo/budget.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A cgroup limit at or above this is "no limit" (v1 reports ~2^63). */
#define BUDGET_NO_LIMIT (1ull << 60)

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
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
            if (lim < BUDGET_NO_LIMIT)
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

void dyn_budget_limits(const struct dyn_budget *b, struct dyn_budget_limits *out)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t free_mem = min_u64(mem_available(), cgroup_room());
    uint64_t aio_max = read_u64("/proc/sys/fs/aio-max-nr"),
             aio_nr = read_u64("/proc/sys/fs/aio-nr");
    uint64_t reserve = aio_max == UINT64_MAX ? 0 : aio_max / DYN_BUDGET_AIO_RESERVE_DIV;
    struct rlimit rl;

    out->workers = b->max_workers ? b->max_workers
                                  : (uint64_t)(cpus > 0 ? cpus : 1) * DYN_BUDGET_WORKERS_PER_CPU;
    out->buffer_mem = free_mem == UINT64_MAX ? UINT64_MAX : free_mem / 2;
    if (b->max_buffer_mem)
        out->buffer_mem = min_u64(out->buffer_mem, b->max_buffer_mem);
    if (aio_max == UINT64_MAX || aio_nr == UINT64_MAX)
        out->aio_events = UINT64_MAX; /* no /proc: io_setup will tell */
    else
        out->aio_events = aio_nr + reserve >= aio_max ? 0 : aio_max - aio_nr - reserve;
    if (b->max_aio_events)
        out->aio_events = min_u64(out->aio_events, b->max_aio_events);
    out->fds = UINT64_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t used = open_fds() + DYN_BUDGET_FD_RESERVE;
        out->fds = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
    }
}

int dyn_budget_check(const struct iof_budget_need *need, const struct dyn_budget_limits *lim,
                     const struct dyn_budget *b, struct iof_diag *diag)
{
    char n[32], l[32];

    if (need->workers > lim->workers) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (b->max_workers)
            return iof_diag_set(diag, IOF_EDENIED,
                                "needs %" PRIu64 " worker threads, the agent's limit is %" PRIu64
                                " (--max-workers)",
                                need->workers, lim->workers);
        return iof_diag_set(diag, IOF_EDENIED,
                            "needs %" PRIu64 " worker threads, the agent's limit is %" PRIu64
                            " (%d x %ld online CPUs; raise it with dynamo --max-workers)",
                            need->workers, lim->workers, DYN_BUDGET_WORKERS_PER_CPU,
                            cpus > 0 ? cpus : 1);
    }
    if (need->buffer_mem > lim->buffer_mem) {
        iof_budget_format_bytes(need->buffer_mem, n, sizeof(n));
        iof_budget_format_bytes(lim->buffer_mem, l, sizeof(l));
        return iof_diag_set(diag, IOF_EDENIED,
                            "needs %s of I/O buffers (queue depth x transfer size x workers), "
                            "the agent's limit is %s (%s)",
                            n, l,
                            b->max_buffer_mem && lim->buffer_mem == b->max_buffer_mem
                                ? "--max-buffer-mem"
                                : "half of the memory free: MemAvailable and the cgroup limit");
    }
    if (need->aio_events > lim->aio_events)
        return iof_diag_set(
            diag, IOF_EDENIED,
            "needs %" PRIu64 " AIO events (libaio queue depth x targets x workers), the agent's "
            "limit is %" PRIu64 " (%s)",
            need->aio_events, lim->aio_events,
            b->max_aio_events && lim->aio_events == b->max_aio_events
                ? "--max-aio-events"
                : "/proc/sys/fs/aio-max-nr - aio-nr, less 1/8 of aio-max-nr kept for the host");
    if (need->fds > lim->fds)
        return iof_diag_set(diag, IOF_EDENIED,
                            "needs %" PRIu64
                            " descriptors for its targets, the agent can open %" PRIu64
                            " more (RLIMIT_NOFILE, less those open and %d kept for connections)",
                            need->fds, lim->fds, DYN_BUDGET_FD_RESERVE);
    return 0;
}

int dyn_budget_start_time(uint64_t start_at_ns, int64_t offset_ns, uint64_t ramp_ns,
                          uint64_t now_ns, uint64_t *start_ns, struct iof_diag *diag)
{
    double off_s = (double)offset_ns / 1e9;
    uint64_t s, measure;

    if (offset_ns >= 0) {
        if (start_at_ns > UINT64_MAX - (uint64_t)offset_ns)
            return iof_diag_set(diag, -ERANGE,
                                "start time %" PRIu64 " ns with clock offset %+.3f s overflows",
                                start_at_ns, off_s);
        s = start_at_ns + (uint64_t)offset_ns;
    } else {
        uint64_t back = (uint64_t)(-(offset_ns + 1)) + 1;
        if (start_at_ns < back)
            return iof_diag_set(diag, -ERANGE,
                                "start time %" PRIu64 " ns with clock offset %+.3f s is before "
                                "this node's clock began",
                                start_at_ns, off_s);
        s = start_at_ns - back;
    }
    measure = s > UINT64_MAX - ramp_ns ? UINT64_MAX : s + ramp_ns;
    if (now_ns > measure && now_ns - measure > DYN_START_LATE_MAX_NS)
        return iof_diag_set(diag, -ERANGE,
                            "the start time is %.3f s in the past on this node's clock (its "
                            "measured window began %.3f s ago; clock offset to the manager "
                            "%+.3f s): refused rather than report a cut window as a full one; "
                            "check both clocks",
                            (double)(now_ns - s) / 1e9, (double)(now_ns - measure) / 1e9, off_s);
    if (s > now_ns && s - now_ns > DYN_START_AHEAD_MAX_NS)
        return iof_diag_set(diag, -ERANGE,
                            "the start time is %.3f s ahead on this node's clock (clock offset "
                            "to the manager %+.3f s), more than the %llu s an agent waits; "
                            "check both clocks",
                            (double)(s - now_ns) / 1e9, off_s,
                            DYN_START_AHEAD_MAX_NS / 1000000000ull);
    *start_ns = s;
    return 0;
}
