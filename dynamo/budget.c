/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/budget.c - the agent's budget: what a plan's tests need on this node
 * (common/budget.c) against what the agent's flags allow and the host has
 * free (threads, I/O buffer memory, AIO events, descriptors), checked before
 * anything starts. */
#include "dynamo/budget.h"
#include "dynamo/os/os.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

void dyn_budget_limits(const struct dyn_budget *b, struct dyn_budget_limits *out)
{
    struct dyn_os_resources r;
    uint64_t reserve;

    dyn_os_resources(&r);
    reserve = r.aio_max == UINT64_MAX ? 0 : r.aio_max / DYN_BUDGET_AIO_RESERVE_DIV;
    out->workers =
        b->max_workers ? b->max_workers : (uint64_t)dyn_os_ncpus() * DYN_BUDGET_WORKERS_PER_CPU;
    out->buffer_mem = r.mem_free == UINT64_MAX ? UINT64_MAX : r.mem_free / 2;
    if (b->max_buffer_mem)
        out->buffer_mem = min_u64(out->buffer_mem, b->max_buffer_mem);
    if (r.aio_max == UINT64_MAX || r.aio_used == UINT64_MAX)
        out->aio_events = UINT64_MAX; /* no /proc: io_setup will tell */
    else
        out->aio_events = r.aio_used + reserve >= r.aio_max ? 0 : r.aio_max - r.aio_used - reserve;
    if (b->max_aio_events)
        out->aio_events = min_u64(out->aio_events, b->max_aio_events);
    out->fds = UINT64_MAX;
    if (r.fd_limit != UINT64_MAX) {
        uint64_t used = r.fd_in_use + DYN_BUDGET_FD_RESERVE;
        out->fds = r.fd_limit > used ? r.fd_limit - used : 0;
    }
}

int dyn_budget_check(const struct iof_budget_need *need, const struct dyn_budget_limits *lim,
                     const struct dyn_budget *b, struct iof_diag *diag)
{
    char n[32], l[32];

    if (need->workers > lim->workers) {
        if (b->max_workers)
            return iof_diag_set(diag, IOF_EDENIED,
                                "needs %" PRIu64 " worker threads, the agent's limit is %" PRIu64
                                " (--max-workers)",
                                need->workers, lim->workers);
        return iof_diag_set(diag, IOF_EDENIED,
                            "needs %" PRIu64 " worker threads, the agent's limit is %" PRIu64
                            " (%d x %u online CPUs; raise it with dynamo --max-workers)",
                            need->workers, lim->workers, DYN_BUDGET_WORKERS_PER_CPU,
                            dyn_os_ncpus());
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
