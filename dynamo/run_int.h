/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/run_int.h - what the worker loop (dynamo/run.c) and the test's
 * set-up and tear-down (dynamo/run_setup.c) share: the worker's and the
 * test's state. Not for other modules: they use dynamo/run.h. */
#ifndef IOF_DYNAMO_RUN_INT_H
#define IOF_DYNAMO_RUN_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "dynamo/data.h"
#include "dynamo/engine.h"
#include "dynamo/gen.h"
#include "dynamo/genmap.h"
#include "dynamo/run.h"
#include "dynamo/sched.h"
#include "dynamo/target.h"
#include "dynamo/verify.h"

_Static_assert((int)IOF_VERIFY_CRC32C == (int)DYN_VERIFY_CRC32C &&
                   (int)IOF_VERIFY_XXH64 == (int)DYN_VERIFY_XXH64,
               "a group's verify algorithm is the header's");

/* Interval slots per worker: the driver may fall this many intervals behind
 * before an interval is lost for the time series (never for the totals). */
#define RUN_RING 8
/* How long a stopping worker waits for in-flight I/O before giving up. */
#define RUN_DRAIN_NS (30ULL * IOF_NS_PER_S)
/* Most completions taken in one reap. Every reap is stamped with its own
 * clock read, so a burst of completions is split over several stamps instead
 * of all sharing the one taken after the last was collected. */
#define RUN_REAP_CHUNK 16u
/* How many times (1 ms apart) the read-back reads a chunk again while a
 * write of the node is still in flight on it. */
#define RUN_VERIFY_RETRIES 1000u
/* Longest a worker sleeps or waits for completions without looking at the
 * stop flag: stop, the dead-man rule and SIGTERM end any wait within it. */
#define RUN_WAIT_SLICE_NS (50 * IOF_NS_PER_MS)
/* A rated worker wakes this much before its next due I/O at most and polls
 * (completions, the clock) until it is due: a timed sleep ends late by the
 * scheduler's wake-up latency (tens of microseconds in a VM), and an I/O
 * submitted late has that much more latency from its scheduled time. The
 * margin in use is the 99th percentile of the worker's own oversleep, tracked
 * as it goes (run_spin_update), so a host that wakes on time spins little. */
#define RUN_SPIN_MAX_NS (100 * IOF_NS_PER_US)
/* Added to the oversleep estimate: the time from the wake-up to the submit. */
#define RUN_SPIN_PAD_NS (2 * IOF_NS_PER_US)
/* Where the oversleep estimate starts, before the first timed wake-up. */
#define RUN_SPIN_INIT_NS (20 * IOF_NS_PER_US)
/* The scheduler slice a rated worker asks for (the kernel's minimum). */
#define RUN_SLICE_NS (100 * IOF_NS_PER_US)
/* The percentile tracker's steps: down after a wake-up within the estimate,
 * up after one past it. In equilibrium P(oversleep > estimate) is
 * DOWN / (DOWN + UP) = 1 %. */
#define RUN_SPIN_DOWN_NS 50u
#define RUN_SPIN_UP_NS 4950u

struct run_worker {
    struct dyn_test *test;
    size_t index;
    size_t group;
    uint32_t in_group; /* index among the group's workers on this node */
    const struct dyn_engine_ops *eng;
    struct dyn_engine *ctx;
    unsigned submit_batch;        /* most I/Os handed to the engine in one submit call */
    struct dyn_batch_policy bpol; /* small steps or one call per refill (dynamo/engine.h) */
    uint64_t bpol_next;           /* when the policy samples the thread's account next */
    uint32_t qd;
    size_t ntargets;
    struct dyn_target **targets; /* borrowed from the test */
    const struct iof_target_cfg *tcfg;
    struct dyn_gen gen;
    struct dyn_gen_region *regions;
    unsigned depth;       /* ntargets * qd */
    struct dyn_io *slots; /* depth; slot i serves target i % ntargets */
    /* Free slots in the order they completed (a FIFO ring of depth entries):
     * refilling them in that order treats every target alike and, with
     * burst/delay, rotates over the targets. */
    struct dyn_io **freeq;
    unsigned fq_head, fq_count;
    struct dyn_io **batch; /* issued I/Os: [0, npending) are not yet accepted */
    struct dyn_io **done;  /* RUN_REAP_CHUNK */
    uint8_t *rbufs;        /* read buffers, one per slot */
    uint8_t *wbuf;         /* write source */
    size_t wbuf_len;
    size_t maxsize;
    enum iof_pattern pattern;
    /* workers[].rate: I/Os are issued when the schedule says they are due
     * (and a slot is free), their latency runs from that time. */
    bool rated;
    struct iof_rate rate; /* its schedule starts at the test's start (dyn_test_go) */
    struct dyn_sched sched;
    uint64_t spin_ns; /* rated: how long before a due I/O the worker stops sleeping */
    uint64_t *trace;  /* dyn_test_params.trace, for worker 0 */
    size_t trace_left;
    /* Rated: the lateness (submission less scheduled time) of exactly the
     * I/Os counted in rd/wr, and how many were over IOF_RATE_ONTIME_NS;
     * NULL for an unrated worker. */
    struct iof_hist *lateness;
    uint64_t over_ontime;
    /* io_limit: bytes the worker may still issue. UINT64_MAX until the
     * measured window starts (ramp-up I/O does not count) or without one. */
    uint64_t io_left;
    uint64_t io_limit;    /* 0: none */
    bool paced;           /* rated or limited: worker_fill_paced */
    bool has_data;        /* "data" content instead of the pattern */
    struct dyn_data data; /* its pool and random buffer lie in wbuf, past the slots */
    /* "verify": every write sealed with a header, reads checked. */
    uint8_t valgo;                 /* enum dyn_verify_algo; 0: off */
    bool vafter;                   /* read the range back after the test */
    uint64_t vgen;                 /* generation of the last write sealed: unique, increasing */
    uint8_t *vbusy;                /* per slot: in flight */
    uint8_t *vskip;                /* per slot: a read that overlapped a write in flight */
    uint64_t *vgens;               /* per slot: the generation of the write in it */
    struct dyn_genmap_ticket *vtk; /* per slot: a read's ticket */
    struct dyn_genmap **vmap;      /* per target: expected generations, or NULL (borrowed) */

    struct iof_stats *ring; /* RUN_RING * ntargets */
    uint64_t ring_interval[RUN_RING];
    struct iof_stats *scratch;  /* ntargets: used when the ring is full */
    struct iof_stats *totals;   /* ntargets */
    bool may_write;             /* its spec has a line with writes */
    _Atomic uint64_t published; /* intervals [0, published) are readable */
    _Atomic uint64_t released;  /* intervals [0, released) are back to the worker */
    _Atomic bool done_flag;

    int error;
    struct iof_diag diag;
    uint64_t cpu_ns;
    uint64_t started_ns; /* when the worker left the start barrier */
    /* When it stopped counting: the window's end, a stop, or the last
     * completion of its io_limit. Stored (release) before its last interval
     * is published, so a driver that sees that interval sees it too. */
    _Atomic uint64_t ended_ns;
    pthread_t thread;
    bool started;
    /* Separate the worker's hot state from its neighbour's. */
    char pad[64];
};

struct dyn_test {
    struct dyn_test_params p;
    pthread_mutex_t vlock; /* vrep and vbad, on the mismatch path only */
    /* The distinct bad blocks found so far (an open-addressed set of keys
     * from the target's path and the block's offset, 0 = empty): a block
     * counts once in verify_errors however often it is read. */
    uint64_t *vbad;
    size_t vbad_cap, vbad_n;
    struct dyn_verify_report vrep[DYN_VERIFY_REPORTS];
    size_t nvrep;
    uint64_t measure_start;
    uint64_t end;
    uint64_t nintervals;
    _Atomic bool stop;
    struct dyn_target ***group_targets; /* [group][target], borrowed by workers */
    /* [group][target]: expected generations of verified test files; a file
     * named in several groups shares the first one's (gm_own false). */
    struct dyn_genmap ***group_gm;
    bool **gm_own;
    size_t *group_ntargets;
    size_t ngroups;
    struct run_worker *workers;
    size_t nworkers;
    bool going;     /* dyn_test_go called */
    uint64_t go_ns; /* when it started the workers' threads, set up */
    bool joined;
    /* The read-back of verify_mode "after": bytes to read in all, read so
     * far, and workers reading now (dyn_test_verify_progress). */
    uint64_t vafter_total;
    _Atomic uint64_t vafter_done;
    _Atomic unsigned vafter_active;
};

/* Whether spec s has a line with writes. */
static inline bool spec_writes(const struct iof_spec *s)
{
    for (size_t i = 0; i < s->nlines; i++)
        if (s->lines[i].share && s->lines[i].read_pct < 100)
            return true;
    return false;
}

/* Appends a free slot to the worker's free queue. */
static inline void freeq_push(struct run_worker *w, struct dyn_io *io)
{
    unsigned i = w->fq_head + w->fq_count++;
    w->freeq[i < w->depth ? i : i - w->depth] = io;
}

/* The part [*pos, *stop) of target ti the worker reads back after the test
 * (verify_mode "after"). */
void run_verify_after_share(const struct run_worker *w, size_t ti, uint64_t *pos, uint64_t *stop);

#endif
