/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/engine.h - the I/O engine interface: one ops table (struct
 * dyn_engine_ops) per engine (dynamo/engines/<name>.c), found by name in a
 * static registry; what each engine is (O_DIRECT, ring descriptor, hipri,
 * submit batch) is its row of common/engine_facts.h. Engines are called only
 * through their ops, by one worker thread each; an engine instance (struct
 * dyn_engine) is never shared between threads.
 */
#ifndef IOF_DYNAMO_ENGINE_H
#define IOF_DYNAMO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/engine_facts.h"

struct iof_diag;
struct iovec;

/* One I/O slot. The worker owns the slots and fills the request fields;
 * the engine fills `result` at completion and may use `priv` freely. */
struct dyn_io {
    int fd;
    void *buf;
    uint64_t offset;
    uint32_t len;
    bool write;
    uint32_t target;    /* worker-local target index */
    uint64_t submit_ns; /* where its latency starts: the issue stamp, or with a rate
                         * the time the I/O was scheduled for */
    uint64_t sent_ns;   /* with a rate: when it was handed to the engine */
    int64_t result;     /* bytes transferred, or -errno */
    void *priv;         /* engine-private per-slot state */
};

/* I/Os in flight from which the device has work while a plugged batch is
 * set up (Linux plugs the block queue for a submission of more than 2 and
 * dispatches nothing until the last is ready): below it a refill goes out in
 * small steps so the first I/O reaches an idle device at once, from it the
 * rest goes in one call (the worker's submit to its engine; the io_uring
 * engine itself sends an SQE alone only to an idle device,
 * URING_EAGER_INFLIGHT). docs/performance.md, "Submission batches". */
#define DYN_BATCH_INFLIGHT 8u

/* Submission batching that adapts to the CPU. A worker samples its thread's
 * scheduler account (time run, time waited runnable: dyn_os_thread_sched)
 * every DYN_BATCH_WINDOW_NS. When it was running or runnable nearly all the
 * time (CPU-bound), or waited for a CPU a good part of it (the host's CPUs
 * are busy), a system call saved is CPU given back to the I/O, so a refill
 * goes in one call once anything is in flight. Otherwise the worker waits on
 * the device (latency-bound) and a refill goes in the engine's small steps
 * until DYN_BATCH_INFLIGHT are in flight, so the first I/O reaches a nearly
 * idle device before the block layer's plug. The switch back needs clearly
 * lower figures, so a stretch near a threshold does not flip the policy at
 * every window. Measured beside a CPU hog and on a quiet host in
 * docs/performance.md, "Submission batches". */
#define DYN_BATCH_WINDOW_NS 50000000ull /* 50 ms */
#define DYN_BATCH_BUSY_ON 90u           /* % of the window run or runnable */
#define DYN_BATCH_BUSY_OFF 75u
#define DYN_BATCH_WAIT_ON 8u /* % of the window runnable, not run */
#define DYN_BATCH_WAIT_OFF 3u

struct dyn_batch_policy {
    uint64_t at_ns, run_ns, wait_ns; /* the last sample */
    bool sampled;                    /* at_ns, run_ns and wait_ns hold one */
    bool batched;                    /* one call per refill */
};

/* Takes the thread's account (run_ns, wait_ns: totals so far) at now; from
 * the second sample on, at least DYN_BATCH_WINDOW_NS after the one before,
 * decides the policy for the next window. */
static inline void dyn_batch_sample(struct dyn_batch_policy *p, uint64_t now, uint64_t run_ns,
                                    uint64_t wait_ns)
{
    if (p->sampled) {
        uint64_t wall, run, wait;
        if (now < p->at_ns || now - p->at_ns < DYN_BATCH_WINDOW_NS)
            return;
        wall = now - p->at_ns;
        run = run_ns >= p->run_ns ? run_ns - p->run_ns : 0;
        wait = wait_ns >= p->wait_ns ? wait_ns - p->wait_ns : 0;
        if ((run + wait) * 100 >= wall * DYN_BATCH_BUSY_ON ||
            wait * 100 >= wall * DYN_BATCH_WAIT_ON)
            p->batched = true;
        else if ((run + wait) * 100 < wall * DYN_BATCH_BUSY_OFF &&
                 wait * 100 < wall * DYN_BATCH_WAIT_OFF)
            p->batched = false;
    }
    p->at_ns = now;
    p->run_ns = run_ns;
    p->wait_ns = wait_ns;
    p->sampled = true;
}

/* I/Os in flight from which the rest of a refill goes in one call. */
static inline unsigned dyn_batch_from(const struct dyn_batch_policy *p)
{
    return p->batched ? 1u : DYN_BATCH_INFLIGHT;
}

/* How many I/Os of a refill of n go to the engine in its next call, when
 * `sent` of them went in the calls before and `inflight` were in flight
 * before the refill; `step` is the engine's small step (its submit batch).
 * The rest goes in one call once dyn_batch_from() are in flight, or when
 * the engine takes it in one step anyway (io_uring). Below that, a refill of at most
 * DYN_BATCH_INFLIGHT goes in at most two calls: the first I/O alone when nothing is in flight, so
 * it reaches an idle device at once, then the rest, whose plug is a few microseconds. A larger
 * refill goes in steps until DYN_BATCH_INFLIGHT are in flight, so the device has work while the
 * plug of the rest is set up. Measured in docs/performance.md, "Submission batches". */
static inline unsigned dyn_batch_chunk(const struct dyn_batch_policy *p, unsigned inflight,
                                       unsigned sent, unsigned n, unsigned step)
{
    unsigned busy = inflight + sent, left = n - sent;

    if (step >= left || busy >= dyn_batch_from(p) || (n <= DYN_BATCH_INFLIGHT && busy > 0))
        return left;
    return n <= DYN_BATCH_INFLIGHT ? 1 : step;
}

struct dyn_engine; /* an engine instance, private to each engine */

/* What a worker fixes for its whole test, handed to open. Engines ignore what
 * they cannot use. */
struct dyn_engine_opts {
    bool hipri; /* poll for completions instead of waiting for interrupts */
    /* Every buffer an I/O will use lies inside one of these (an engine may
     * register them with the kernel); borrowed for the instance's life. */
    const struct iovec *bufs;
    unsigned nbufs;
};

struct dyn_engine_ops {
    /* Its row of the engine facts: name, O_DIRECT (targets opened with it,
     * buffers aligned), touches_files (false for null: targets are never
     * opened), ring descriptor, hipri, submit batch. */
    const struct iof_engine_facts *facts;
    /* Checks that this kernel can run the engine at all (0, or a negative
     * error with the reason in diag). NULL: always available. */
    int (*probe)(struct iof_diag *diag);
    /* Creates an instance able to hold `depth` I/Os in flight. Slots are
     * passed so the engine can attach per-slot state (e.g. an iocb); their
     * fds are set and do not change afterwards. opts may be NULL. */
    int (*open)(struct dyn_engine **out, struct dyn_io *slots, unsigned depth,
                const struct dyn_engine_opts *opts, struct iof_diag *diag);
    /* Destroys an instance; all I/O must have been reaped. Accepts NULL. */
    void (*close)(struct dyn_engine *e);
    /* Starts n I/Os. Returns how many were accepted (a prefix of ios, possibly
     * fewer than n when the kernel is out of resources: the caller reaps and
     * retries the rest), or a negative error for a fatal failure. An engine
     * may queue accepted I/Os and hand them to the kernel at the next reap
     * at the latest: the caller reaps whenever I/Os are in flight. */
    int (*submit)(struct dyn_engine *e, struct dyn_io **ios, unsigned n);
    /* Waits up to timeout_ns for at least `min` completions and stores up to
     * `max` completed slots in done[]. Returns the count (possibly 0 on
     * timeout) or a negative error. */
    int (*reap)(struct dyn_engine *e, unsigned min, unsigned max, uint64_t timeout_ns,
                struct dyn_io **done);
};

extern const struct dyn_engine_ops dyn_engine_libaio;
extern const struct dyn_engine_ops dyn_engine_uring;
extern const struct dyn_engine_ops dyn_engine_sync;
extern const struct dyn_engine_ops dyn_engine_null;

/* The engine called `name`, or NULL. */
const struct dyn_engine_ops *dyn_engine_find(const char *name);

/* The engine called `name`; or NULL with IOF_EENGINE in diag saying why this
 * agent has none: "engine windows is not available on this node: it is an
 * engine of Windows agents, and this one runs Linux (its engines: libaio,
 * io_uring, sync, null)", or that no engine has the name. */
const struct dyn_engine_ops *dyn_engine_lookup(const char *name, struct iof_diag *diag);

/* The registry's engines, for walking it: the i-th of dyn_engine_count(), or
 * NULL past the end. */
size_t dyn_engine_count(void);
const struct dyn_engine_ops *dyn_engine_at(size_t i);

#endif
