/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/run.h - one test on this node: worker threads driving targets with
 * an access spec, measured over a ramp-up and a measured window.
 *
 * Independent of how it is driven (in-process by `iofleet run`, or by the
 * agent daemon on behalf of a remote manager). The driver starts a test,
 * polls interval snapshots from its own thread, and joins it:
 *
 *   start_ns ---- ramp ---- measure_start ---- interval 0 | 1 | ... ---- end
 *
 * I/Os completing before measure_start or after end are not counted.
 * Interval k covers completions in [measure_start + k*interval, +interval),
 * the last one cut at end. Each worker records straight into its own ring of
 * interval slots; it publishes a slot with a release store of its counter,
 * so the per-I/O path takes no lock and shares no cache line.
 */
#ifndef IOF_DYNAMO_RUN_H
#define IOF_DYNAMO_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/spec.h"
#include "common/stats.h"

struct dyn_test_params {
    const struct iof_spec *spec; /* borrowed; outlives the test */
    /* Borrowed, ngroups entries, or NULL: every group runs `spec`. Else
     * group g runs group_specs[g] (Iometer's per-worker assignment), and a
     * NULL entry idles it: no workers, its targets not opened. */
    const struct iof_spec *const *group_specs;
    const struct iof_worker_cfg *groups; /* borrowed; cycle overrides applied */
    size_t ngroups;
    uint64_t start_ns; /* local CLOCK_MONOTONIC time the ramp-up begins (dyn_test_start) */
    uint64_t ramp_ns;
    uint64_t duration_ns; /* measured window */
    uint64_t interval_ns;
    uint64_t seed; /* for groups without a seed of their own */
    /* A rate cycle's step (borrowed, one per worker in result order, or
     * NULL): worker i runs at worker_iops[i] IOPS (0: unthrottled) in place
     * of its group's rate. */
    const double *worker_iops;
    /* Identity of the data this node writes in this test ("data" content):
     * a hash of the node name, and a value never used by another test or
     * run (the agent draws it from getrandom). */
    uint64_t node_id;
    uint64_t run_nonce;
    bool allow_destructive; /* see dyn_target_open() */
    /* Borrowed: the workdir and --allow entries every target is opened from. */
    struct dyn_scope *scope;
    /* Benchmarks (tests/bench/rate): when set, worker 0, if rated, writes
     * the scheduled and the submission time of its first `ntrace` I/Os to
     * trace[2i] and trace[2i+1] (borrowed; 2 x ntrace entries). */
    uint64_t *trace;
    size_t ntrace;
};

struct dyn_test;

/* One verification mismatch, as the first few of a test are kept. */
#define DYN_VERIFY_REPORTS 8
struct dyn_verify_report {
    size_t worker;
    size_t target; /* index among the worker's targets */
    uint64_t offset;
    uint32_t length;       /* what was expected there: the rest of the read */
    int cls;               /* enum dyn_verify_class */
    uint64_t e_generation; /* the generation expected there, 0 when unknown */
    /* The header found (dynamo/verify.h fields), unless f_none: no header
     * where the generation map expected this node's last write. */
    uint64_t f_offset, f_node, f_generation;
    uint32_t f_length, f_worker;
    bool f_none;
};

/* Sets the test up without starting it: opens the targets, allocates and
 * fills the buffers, opens the engines (p->start_ns is not used). Returns 0
 * and a new test in *out, or an error with a message naming the target or
 * engine. All of this costs time (4 workers x QD 64 x 512 KiB fill 256 MiB)
 * and is done before the start time is fixed: a worker leaving the start
 * barrier more than DYN_START_LATE_MAX_NS after its measured window began
 * fails the test (dyn_test_join) at once, stopping the other workers,
 * instead of counting intervals without its I/O. */
int dyn_test_setup(const struct dyn_test_params *p, struct dyn_test **out, struct iof_diag *diag);

/* Starts a set-up test: the worker threads wait for start_ns (local
 * CLOCK_MONOTONIC), the ramp-up and the measured window follow it. Once per
 * test. Returns 0, or an error (no thread left running; free the test). */
int dyn_test_go(struct dyn_test *t, uint64_t start_ns, struct iof_diag *diag);

/* dyn_test_setup, then dyn_test_go at p->start_ns. */
int dyn_test_start(const struct dyn_test_params *p, struct dyn_test **out, struct iof_diag *diag);

size_t dyn_test_nworkers(const struct dyn_test *t);
size_t dyn_test_ntargets(const struct dyn_test *t, size_t w);
/* Group index of worker w, and the target config of its target i (borrowed). */
size_t dyn_test_worker_group(const struct dyn_test *t, size_t w);
const struct iof_target_cfg *dyn_test_target_cfg(const struct dyn_test *t, size_t w, size_t i);
/* Number of intervals in the measured window: ceil(duration / interval). */
uint64_t dyn_test_nintervals(const struct dyn_test *t);

/* Interval k of worker w: returns 1 and points *stats at its per-target
 * stats (dyn_test_ntargets entries, valid until dyn_test_interval_release);
 * 0 when not published yet; -ENOENT when the worker finished without it
 * (stopped early or failed); -EOVERFLOW when the worker had to reuse the slot
 * because the driver fell behind (the interval is lost for the time series,
 * never for the totals). Only the driver thread calls this. */
int dyn_test_interval(struct dyn_test *t, size_t w, uint64_t k, const struct iof_stats **stats);
void dyn_test_interval_release(struct dyn_test *t, size_t w, uint64_t k);

/* True once every worker has finished (window over, stopped or failed). */
bool dyn_test_finished(const struct dyn_test *t);

/* Asks every worker to stop submitting now; in-flight I/O is reaped, what
 * completed inside the window stays counted. Async-signal-safe. */
void dyn_test_stop(struct dyn_test *t);

/* Waits for every worker thread. Returns 0, or the first fatal worker error
 * with its message (I/O errors are not fatal: they are counted). */
int dyn_test_join(struct dyn_test *t, struct iof_diag *diag);

/* After join: totals of worker w over the whole measured window, per target. */
const struct iof_stats *dyn_test_totals(const struct dyn_test *t, size_t w);

/* After join: the first mismatches (at most DYN_VERIFY_REPORTS) in *out;
 * returns how many. Every bad block is also counted once in its target's
 * verify_errors, every failing read of one in its verify_bad_reads. */
size_t dyn_test_verify_reports(const struct dyn_test *t, const struct dyn_verify_report **out);

/* After join: the lateness (submission less scheduled time, ns) of the
 * rated workers' I/Os counted in the measured window - exactly those in
 * their targets' rd/wr counts and rated.svc - merged into h (reset by the
 * caller), and in *over how many were more than IOF_RATE_ONTIME_NS late.
 * False (h untouched, *over 0) when no worker is rated. */
bool dyn_test_lateness(const struct dyn_test *t, struct iof_hist *h, uint64_t *over);

/* CPU time (user+system, ns) consumed by the worker threads, after join. */
/* The read-back of verify_mode "after": bytes read (or passed over) of
 * the total; true while a worker is reading back. */
bool dyn_test_verify_progress(const struct dyn_test *t, uint64_t *done, uint64_t *total);

uint64_t dyn_test_cpu_ns(const struct dyn_test *t);

/* When the last worker stopped counting - the window's end, a stop, or,
 * when every worker reached its io_limit, its last completion (local
 * monotonic ns) - once every worker has; 0 while one still counts. A driver
 * that has seen a worker's last interval (dyn_test_interval) sees its end. */
uint64_t dyn_test_ended_ns(const struct dyn_test *t);

/* After join: the earliest and latest time (local monotonic ns) a worker
 * left the start barrier - the node's own start skew; 0 when none started. */
void dyn_test_start_spread(const struct dyn_test *t, uint64_t *first, uint64_t *last);

/* Joins if needed and frees everything. Accepts NULL. */
void dyn_test_free(struct dyn_test *t);

#endif
