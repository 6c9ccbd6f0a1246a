/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/budget.h - what one agent lets a plan take of its node: worker
 * threads, I/O buffer memory, AIO events and descriptors. The limits are the
 * agent's own (its command line and what the host has free), never the
 * manager's: a plan that needs more is refused before anything starts, with
 * a message naming the limit and both numbers.
 *
 * Defaults (each flag overrides one):
 *   workers     8 x online CPUs                      (--max-workers N)
 *   buffer mem  half of what is free: MemAvailable, and the cgroup limit
 *               minus its usage where one is set       (--max-buffer-mem SIZE)
 *   AIO events  aio-max-nr - aio-nr, less a reserve of 1/8 of aio-max-nr
 *               for the rest of the host               (--max-aio-events N)
 *   descriptors the soft RLIMIT_NOFILE less those open and 128 kept for
 *               connections
 * A flag lowers the derived limit, never raises it above what is free.
 */
#ifndef IOF_DYNAMO_BUDGET_H
#define IOF_DYNAMO_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "common/budget.h"
#include "common/err.h"
#include "common/spec.h"

#define DYN_BUDGET_WORKERS_PER_CPU 8
#define DYN_BUDGET_FD_RESERVE 128
#define DYN_BUDGET_AIO_RESERVE_DIV 8 /* keep aio-max-nr / 8 for the rest of the host */

/* The agent's configured caps; 0 means "derive from the host". */
struct dyn_budget {
    uint64_t max_workers;
    uint64_t max_buffer_mem; /* bytes */
    uint64_t max_aio_events;
};

/* The limits in force now: the caps of b lowered to what the host has free.
 * Every field is set (never 0, except when nothing at all is free). */
struct dyn_budget_limits {
    uint64_t workers, buffer_mem, aio_events, fds;
};

/* The limits in force now for the caps in b (reads /proc and the cgroup). */
void dyn_budget_limits(const struct dyn_budget *b, struct dyn_budget_limits *out);

/* 0 when need fits lim, else IOF_EDENIED with the first limit exceeded
 * named in diag: "needs 2048 worker threads, the agent's limit is 16 (8 x 2
 * online CPUs; raise it with dynamo --max-workers)". b tells which limits
 * came from a flag. */
int dyn_budget_check(const struct iof_budget_need *need, const struct dyn_budget_limits *lim,
                     const struct dyn_budget *b, struct iof_diag *diag);

/* How far ahead a test's start may lie, and how late past the start of its
 * measured window it may arrive, on this node's clock. */
#define DYN_START_AHEAD_MAX_NS (600ull * 1000000000ull) /* 10 min */
#define DYN_START_LATE_MAX_NS (100ull * 1000000ull)     /* 100 ms */

/* The local time (CLOCK_MONOTONIC ns) at which a test begins when the manager
 * asks for start_at_ns on its clock and measured this node's clock offset_ns
 * ahead of its own. Refuses (-ERANGE, the clock difference named in diag) a
 * start whose measured window, ramp_ns after it, began more than
 * DYN_START_LATE_MAX_NS before now_ns (its result would be a cut window
 * reported as a full one), one more than DYN_START_AHEAD_MAX_NS ahead, and
 * a sum that overflows. */
int dyn_budget_start_time(uint64_t start_at_ns, int64_t offset_ns, uint64_t ramp_ns,
                          uint64_t now_ns, uint64_t *start_ns, struct iof_diag *diag);

#endif
