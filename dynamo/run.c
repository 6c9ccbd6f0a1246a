/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/run.c - one test on this node: the worker threads' I/O loop (refill
 * free slots, submit, reap, stamp, count), interval cutting and publishing,
 * and the driver-side API of run.h. */
#include "dynamo/run.h"
#include "dynamo/run_int.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/budget.h"
#include "common/clock.h"
#include "common/log.h"
#include "dynamo/budget.h"
#include "dynamo/data.h"
#include "dynamo/engine.h"
#include "dynamo/gen.h"
#include "dynamo/sched.h"
#include "dynamo/genmap.h"
#include "dynamo/os/os.h"
#include "dynamo/target.h"
#include "dynamo/verify.h"

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * IOF_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* --- worker side ------------------------------------------------------- */

/* Sleeps until `until` or until the test is stopped, whichever is first:
 * every wait of a worker (start time, ramp, burst delay) goes through here. */
static void worker_wait_until(const struct dyn_test *t, uint64_t until)
{
    uint64_t now;

    while ((now = iof_now_ns()) < until && !atomic_load_explicit(&t->stop, memory_order_relaxed))
        iof_sleep_until(until - now > RUN_WAIT_SLICE_NS ? now + RUN_WAIT_SLICE_NS : until);
}

/* The slot interval k is counted in. Ring slots come back from the driver
 * already cleared (dyn_test_interval_release), so cutting an interval clears
 * nothing on the I/O path; only the scratch slot, used when the driver is
 * RUN_RING intervals behind, is cleared here. */
static struct iof_stats *worker_slot(struct run_worker *w, uint64_t k)
{
    uint64_t rel = atomic_load_explicit(&w->released, memory_order_acquire);

    if (k - rel >= RUN_RING) {
        /* The driver fell behind: count into scratch; the interval is lost
         * for the time series only (totals still get it at the cut). */
        for (size_t i = 0; i < w->ntargets; i++)
            iof_stats_reset(&w->scratch[i]);
        return w->scratch;
    }
    w->ring_interval[k % RUN_RING] = k;
    return &w->ring[(k % RUN_RING) * w->ntargets];
}

/* Closes interval k (held in cur): folds it into the totals and publishes it. */
static void worker_cut(struct run_worker *w, uint64_t k, struct iof_stats *cur)
{
    for (size_t i = 0; i < w->ntargets; i++)
        iof_stats_merge(&w->totals[i], &cur[i]);
    /* A scratch cut leaves the ring slot's tag alone: it still names an
     * older, unreleased interval, so the driver sees k as lost. */
    atomic_store_explicit(&w->published, k + 1, memory_order_release);
}

/* Where a worker is in the measured window. */
struct run_cursor {
    uint64_t k;        /* interval being counted */
    uint64_t next_cut; /* its end */
    struct iof_stats *cur;
    bool measuring;
    uint64_t cpu0;
};

static uint64_t interval_end(const struct dyn_test *t, uint64_t k)
{
    uint64_t e = t->measure_start + (k + 1) * t->p.interval_ns;
    return e < t->end ? e : t->end;
}

/* Cuts every interval boundary that `now` has passed. */
static void worker_advance(struct run_worker *w, uint64_t now, struct run_cursor *c)
{
    const struct dyn_test *t = w->test;

    if (now < t->measure_start)
        return;
    if (!c->measuring) {
        c->measuring = true;
        c->cpu0 = thread_cpu_ns();
        if (w->io_limit)
            w->io_left = w->io_limit;
    }
    while (now >= c->next_cut && c->k < t->nintervals) {
        worker_cut(w, c->k, c->cur);
        c->k++;
        if (c->k < t->nintervals) {
            c->cur = worker_slot(w, c->k);
            c->next_cut = interval_end(t, c->k);
        }
    }
}

/* Inlined in both collect loops: as a call it cost an unrated worker
 * several % more instructions per I/O (docs/performance.md, rate accuracy). */
static inline __attribute__((always_inline)) void worker_complete(struct iof_stats *cur,
                                                                  struct dyn_io *io, uint64_t lat)
{
    struct iof_stats *s = &cur[io->target];
    struct iof_dirstats *d = io->write ? &s->wr : &s->rd;

    if (io->result == (int64_t)io->len) {
        d->ios++;
        d->bytes += io->len;
        iof_hist_record(&d->lat, lat);
        return;
    }
    d->errors++;
    if (!s->first_error) {
        s->first_error = io->result < 0 ? (int)io->result : -EIO; /* short transfer */
        s->first_error_offset = io->offset;
    }
}

/* worker_complete for a rated I/O: also its service latency (from when it
 * was handed to the engine) and how late it started, for the interval and
 * for the test's lateness (the same I/Os as the interval's counts). */
static void worker_complete_rated(struct run_worker *w, struct iof_stats *cur, struct dyn_io *io,
                                  uint64_t now)
{
    struct iof_stats *s = &cur[io->target];
    uint64_t late = io->sent_ns - io->submit_ns;

    worker_complete(cur, io, now - io->submit_ns);
    if (io->result != (int64_t)io->len)
        return;
    iof_hist_summary_record(&s->rated.svc, now - io->sent_ns);
    s->rated.late += late > IOF_RATE_LATE_NS;
    iof_hist_record(w->lateness, late);
    w->over_ontime += late > IOF_RATE_ONTIME_NS;
}

/* Makes a `random`-pattern write buffer unique: a fresh random word in every
 * 512-byte sector (the rest is random from setup), so no block written is
 * ever the same twice - neither compressible nor dedupable - for a cost of
 * one PRNG step per sector. */
static void worker_stamp(struct run_worker *w, uint8_t *buf, uint32_t len)
{
    for (uint32_t off = 0; off < len; off += 512) {
        uint64_t v = dyn_rng_next(&w->gen.rng);
        memcpy(buf + off, &v, sizeof(v));
    }
}

/* The most distinct bad blocks a node's test tells apart: beyond, each
 * failing read of a block not seen yet counts as a new one. */
#define RUN_VBAD_MAX (1u << 20)

static uint64_t vbad_key(const char *path, uint64_t off)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *path; path++)
        h = (h ^ (uint8_t)*path) * 0x100000001b3ULL;
    h ^= off + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ULL;
    return (h ^ (h >> 29)) | 1; /* never 0: the empty slot */
}

/* Adds key to the set (vlock held). Returns whether it was new. */
static bool vbad_add(struct dyn_test *t, uint64_t key)
{
    size_t i;

    if (t->vbad_n * 2 >= t->vbad_cap) {
        size_t cap = t->vbad_cap ? t->vbad_cap * 2 : 64;
        uint64_t *n = cap <= 2 * (size_t)RUN_VBAD_MAX ? calloc(cap, sizeof(*n)) : NULL;
        if (!n)
            return true; /* full: counted as new */
        for (size_t k = 0; k < t->vbad_cap; k++) {
            if (!t->vbad[k])
                continue;
            for (i = (size_t)t->vbad[k] & (cap - 1); n[i]; i = (i + 1) & (cap - 1))
                ;
            n[i] = t->vbad[k];
        }
        free(t->vbad);
        t->vbad = n;
        t->vbad_cap = cap;
    }
    for (i = (size_t)key & (t->vbad_cap - 1); t->vbad[i]; i = (i + 1) & (t->vbad_cap - 1))
        if (t->vbad[i] == key)
            return false;
    t->vbad[i] = key;
    t->vbad_n++;
    return true;
}

/* A block that failed verification: each failing read counted for its
 * target in verify_bad_reads, the block once in verify_errors (in the
 * totals, whatever the window: a mismatch is never outside the test), the
 * first few distinct blocks kept with what was found, and the test stopped
 * with verify_stop. */
static void worker_verify_error(struct run_worker *w, size_t ti, uint64_t off, uint32_t len,
                                enum dyn_verify_class cls, uint64_t want,
                                const struct dyn_verify_hdr *f)
{
    struct dyn_test *t = w->test;

    w->totals[ti].verify_bad_reads++;
    pthread_mutex_lock(&t->vlock);
    if (vbad_add(t, vbad_key(w->targets[ti]->path, off)))
        w->totals[ti].verify_errors++;
    /* The first few distinct blocks: a bad block read again and again
     * would otherwise fill every report and hide the others. */
    bool seen = false;
    for (size_t i = 0; i < t->nvrep && !seen; i++)
        seen = t->vrep[i].worker == w->index && t->vrep[i].target == ti && t->vrep[i].offset == off;
    if (!seen && t->nvrep < DYN_VERIFY_REPORTS)
        t->vrep[t->nvrep++] = (struct dyn_verify_report){.worker = w->index,
                                                         .target = ti,
                                                         .offset = off,
                                                         .length = len,
                                                         .cls = (int)cls,
                                                         .e_generation = want,
                                                         .f_offset = f->offset,
                                                         .f_node = f->node,
                                                         .f_generation = f->generation,
                                                         .f_length = f->length,
                                                         .f_worker = f->worker,
                                                         .f_none = f->magic != DYN_VERIFY_MAGIC};
    pthread_mutex_unlock(&t->vlock);
    if (t->p.groups[w->group].verify.stop)
        atomic_store_explicit(&t->stop, true, memory_order_relaxed);
}

/* Checks every verify block that starts in the first lim bytes of a read of
 * len bytes at off; blocks without a header (never written with verify, or
 * only partly read) are skipped. Returns how far it got, for the read-back
 * pass: at a block that runs past len it stops there (`*partial` set) so
 * the caller can read it whole. */
static uint32_t worker_verify_buf(struct run_worker *w, size_t ti, const uint8_t *buf, uint32_t len,
                                  uint32_t lim, uint64_t off, bool stale_ok, bool *partial)
{
    const struct dyn_genmap *gm = stale_ok ? w->vmap[ti] : NULL;
    uint32_t pos = 0, used;

    *partial = false;
    while (pos < len && pos < lim) {
        struct dyn_verify_hdr f;
        uint64_t want = gm ? dyn_genmap_expected(gm, off + pos) : 0;
        enum dyn_verify_class k =
            dyn_verify_check(buf + pos, len - pos, off + pos, want, &f, &used);
        /* Staleness is judged only on this node's own blocks: another
         * writer's later block is not a lost write. */
        if (k == DYN_VERIFY_STALE && f.node != w->test->p.node_id)
            k = DYN_VERIFY_OK;
        /* No header at all where this node's last write there left one
         * (zeroed, or replaced by other data): corrupt, found nothing. */
        if (k == DYN_VERIFY_NO_HEADER && want && f.magic != DYN_VERIFY_MAGIC &&
            len - pos >= DYN_VERIFY_SECTOR)
            k = DYN_VERIFY_CORRUPT;
        if (k == DYN_VERIFY_NO_HEADER && f.magic == DYN_VERIFY_MAGIC && used == len - pos &&
            pos > 0) {
            *partial = true;
            break;
        }
        /* Overlaid: partly replaced by later writes, which the next turns
         * judge where they start; the rest was checked by its tags only. */
        if (k == DYN_VERIFY_OVERLAID)
            w->totals[ti].verify_overlaid++;
        else if (k != DYN_VERIFY_OK && k != DYN_VERIFY_NO_HEADER)
            worker_verify_error(w, ti, off + pos, len - pos, k, want, &f);
        pos += used;
    }
    return pos;
}

/* Marks reads and writes of this worker in flight on the same bytes as io:
 * such a read may see either write, or part of each, and is not checked
 * (a check would report a mix the test itself caused). O(queue depth), only
 * with verify. */
static void worker_verify_overlap(struct run_worker *w, struct dyn_io *io)
{
    size_t me = (size_t)(io - w->slots);

    w->vskip[me] = 0;
    /* Slot i serves target i % ntargets: only those of io's target. */
    for (unsigned i = io->target; i < w->depth; i += (unsigned)w->ntargets) {
        const struct dyn_io *o = &w->slots[i];
        if (!w->vbusy[i] || o->write == io->write || o->target != io->target ||
            o->offset >= io->offset + io->len || io->offset >= o->offset + o->len)
            continue;
        w->vskip[io->write ? i : me] = 1;
    }
    w->vbusy[me] = 1;
}

/* Verify bookkeeping of a completed I/O (also while draining, `check`
 * false: nothing is read any more, but the expected generations must follow
 * what was written). */
static void worker_verify_done(struct run_worker *w, struct dyn_io *io, bool check)
{
    size_t si = (size_t)(io - w->slots);
    struct dyn_genmap *gm = w->vmap[io->target];
    bool ok = io->result == (int64_t)io->len, partial, calm = true, quiet = false;

    w->vbusy[si] = 0;
    if (io->write) {
        if (gm)
            dyn_genmap_write_done(gm, io->offset, io->len, w->vgens[si], ok);
        return;
    }
    if (!check || w->vskip[si] || !ok)
        return;
    if (gm) {
        calm = dyn_genmap_read_calm(gm, io->offset, io->len, &w->vtk[si]);
        quiet = calm && dyn_genmap_read_quiet(gm, io->offset, io->len, &w->vtk[si]);
    }
    if (calm)
        worker_verify_buf(w, io->target, io->buf, io->len, io->len, io->offset, quiet, &partial);
}

static struct dyn_io *freeq_pop(struct run_worker *w)
{
    struct dyn_io *io = w->freeq[w->fq_head];
    if (++w->fq_head == w->depth)
        w->fq_head = 0;
    w->fq_count--;
    return io;
}

/* worker_take with verify: a write is sealed in its own slot, and both
 * directions are registered for the overlap and generation bookkeeping. */
static void worker_take_verified(struct run_worker *w, struct dyn_io *io,
                                 const struct dyn_io_desc *d)
{
    if (d->write) {
        uint8_t *b = w->wbuf + (size_t)(io - w->slots) * w->maxsize;
        const struct dyn_verify_hdr h = {.offset = d->offset,
                                         .algo = w->valgo,
                                         .worker = (uint32_t)w->index,
                                         .node = w->test->p.node_id,
                                         .generation = ++w->vgen};
        dyn_verify_seal(b, d->size, &h);
        io->buf = b;
        w->vgens[io - w->slots] = h.generation;
        if (w->vmap[io->target])
            dyn_genmap_write_start(w->vmap[io->target], d->offset, d->size);
    } else {
        io->buf = w->rbufs + (size_t)(io - w->slots) * w->maxsize;
    }
    worker_verify_overlap(w, io);
    if (!d->write && w->vmap[io->target])
        dyn_genmap_read_start(w->vmap[io->target], d->offset, d->size, &w->vtk[io - w->slots]);
}

/* Hands slot io the request d: its place, direction and buffer. */
static inline __attribute__((always_inline)) void
worker_take(struct run_worker *w, struct dyn_io *io, const struct dyn_io_desc *d)
{
    io->offset = d->offset;
    io->len = d->size;
    io->write = d->write;
    if (w->valgo) {
        worker_take_verified(w, io, d);
        return;
    }
    if (d->write) {
        if (w->has_data) {
            uint8_t *b = w->wbuf + (size_t)(io - w->slots) * w->maxsize;
            io->buf = (void *)dyn_data_fill(&w->data, b, d->size);
        } else if (w->pattern == IOF_PATTERN_RANDOM) {
            io->buf = w->wbuf + (size_t)(io - w->slots) * w->maxsize;
            worker_stamp(w, io->buf, d->size);
        } else {
            io->buf = w->wbuf;
        }
    } else {
        io->buf = w->rbufs + (size_t)(io - w->slots) * w->maxsize;
    }
}

/* Hands every free slot a new request, longest-free first, until a burst ends
 * with a delay; appends them to the batch. Returns the pause (0 if none).
 * The path of a worker without rate or io_limit: nothing else per I/O. */
static uint64_t worker_fill(struct run_worker *w, unsigned *npending)
{
    unsigned n = *npending;
    uint64_t pause = 0;

    while (w->fq_count && !pause) {
        struct dyn_io *io = freeq_pop(w);
        struct dyn_io_desc d;
        pause = dyn_gen_next(&w->gen, &w->regions[io->target], &d);
        worker_take(w, io, &d);
        w->batch[n++] = io;
    }
    *npending = n;
    return pause;
}

/* worker_fill for a worker with a rate or an io_limit: also stops when the
 * io_limit is reached or - rated - no I/O is due at `now`; a rated I/O's
 * latency starts at its scheduled time. */
static uint64_t worker_fill_paced(struct run_worker *w, unsigned *npending, uint64_t now)
{
    unsigned n = *npending;
    uint64_t pause = 0;

    while (w->fq_count && !pause && w->io_left) {
        struct dyn_io *io;
        struct dyn_io_desc d;
        if (w->rated && dyn_sched_due(&w->sched) > now)
            break;
        io = freeq_pop(w);
        pause = dyn_gen_next(&w->gen, &w->regions[io->target], &d);
        w->io_left -= d.size < w->io_left ? d.size : w->io_left;
        if (w->rated)
            io->submit_ns = dyn_sched_take(&w->sched, d.size);
        worker_take(w, io, &d);
        w->batch[n++] = io;
    }
    *npending = n;
    return pause;
}

static void worker_fail(struct run_worker *w, int err, const char *what)
{
    if (!w->error) {
        w->error = err;
        iof_diag_set(&w->diag, err, "worker %zu: %s: %s", w->index, what, iof_strerror(err));
    }
}

/* Issues the batch: every I/O in it gets one issue time, `issued`, taken when
 * the free slots were handed their requests (an I/O the engine refused
 * earlier is issued again now), then the engine is given it in the calls
 * the batching policy chooses (dyn_batch_chunk: small steps until
 * DYN_BATCH_INFLIGHT are in flight, or 1 when the worker is CPU-bound, then
 * the rest in one call; a small refill in at most two). Time spent waiting behind earlier chunks
 * is part of the I/O's latency: the slot is busy from the application's
 * side. A rated I/O keeps its scheduled time as the start of its latency;
 * `issued` starts its service latency. Returns how many were accepted, or a
 * negative error. */
static int worker_submit(struct run_worker *w, uint64_t issued, unsigned inflight,
                         unsigned *npending)
{
    unsigned off = 0, n = *npending;
    int r = 0;

    if (w->rated) {
        for (unsigned i = 0; i < n; i++)
            w->batch[i]->sent_ns = issued;
        for (unsigned i = 0; i < n && w->trace_left; i++, w->trace_left--) {
            *w->trace++ = w->batch[i]->submit_ns;
            *w->trace++ = issued;
        }
    } else
        for (unsigned i = 0; i < n; i++)
            w->batch[i]->submit_ns = issued;
    while (off < n) {
        unsigned c = dyn_batch_chunk(&w->bpol, inflight, off, n, w->submit_batch);
        r = w->eng->submit(w->ctx, w->batch + off, c);
        if (r < 0)
            return r;
        off += (unsigned)r;
        if ((unsigned)r < c)
            break;
    }
    *npending = n - off;
    if (*npending)
        memmove(w->batch, w->batch + off, *npending * sizeof(*w->batch));
    return (int)off;
}

/* Counts one reaped batch, stamped `now`, and frees its slots. */
static void worker_collect(struct run_worker *w, struct run_cursor *c, uint64_t now, int r)
{
    const struct dyn_test *t = w->test;
    bool counted = now >= t->measure_start && now < t->end;

    if (w->rated) {
        for (int i = 0; i < r; i++) {
            struct dyn_io *io = w->done[i];
            if (counted)
                worker_complete_rated(w, c->cur, io, now);
            freeq_push(w, io);
        }
        return;
    }
    for (int i = 0; i < r; i++) {
        struct dyn_io *io = w->done[i];
        if (counted)
            worker_complete(c->cur, io, now - io->submit_ns);
        if (w->valgo)
            worker_verify_done(w, io, true);
        freeq_push(w, io);
    }
}

/* The read-back of verify_mode "after": worker k of the group's n on this
 * node reads the k-th n-th of each target's range (blocks that start in it,
 * to their end), with plain preads into its read buffers, and checks every
 * verify block found. */
void run_verify_after_share(const struct run_worker *w, size_t ti, uint64_t *pos, uint64_t *stop)
{
    const struct dyn_test *t = w->test;
    const struct dyn_target *tg = w->targets[ti];
    uint64_t n = t->p.groups[w->group].count ? t->p.groups[w->group].count : 1;
    uint64_t len = tg->end - tg->start, g = tg->lbs > DYN_VERIFY_SECTOR ? tg->lbs : 512;

    *pos = tg->start + len / n * w->in_group / g * g;
    *stop = w->in_group + 1 == n ? tg->end : tg->start + len / n * (w->in_group + 1) / g * g;
}

static void worker_verify_after(struct run_worker *w)
{
    struct dyn_test *t = w->test;
    size_t cap = (size_t)w->depth * w->maxsize;

    for (size_t ti = 0; ti < w->ntargets; ti++) {
        const struct dyn_target *tg = w->targets[ti];
        uint64_t pos, stop;
        unsigned retries = 0;
        run_verify_after_share(w, ti, &pos, &stop);
        while (pos < stop && !atomic_load_explicit(&t->stop, memory_order_relaxed)) {
            size_t want = tg->end - pos < cap ? (size_t)(tg->end - pos) : cap;
            struct dyn_genmap *gm = w->vmap[ti];
            struct dyn_genmap_ticket tk;
            ssize_t r;
            uint32_t done;
            bool partial, calm = true, quiet = false;
            if (gm)
                dyn_genmap_read_start(gm, pos, (uint32_t)want, &tk);
            r = pread(tg->fd, w->rbufs, want, (off_t)pos);
            if (r < 0) {
                worker_fail(w, -errno, "verify read-back failed");
                return;
            }
            if (r == 0)
                break;
            /* Whole sectors only; blocks starting at or past `stop` are the
             * next worker's. */
            r &= ~(ssize_t)(DYN_VERIFY_SECTOR - 1);
            if (r == 0)
                break;
            if (gm) {
                calm = dyn_genmap_read_calm(gm, pos, (uint32_t)r, &tk);
                quiet = calm && dyn_genmap_read_quiet(gm, pos, (uint32_t)r, &tk);
            }
            if (!calm && ++retries < RUN_VERIFY_RETRIES) {
                /* A write of this node was still in flight there (another
                 * worker draining): read it again once it is done. */
                iof_sleep_until(iof_now_ns() + IOF_NS_PER_MS);
                continue;
            }
            retries = 0;
            if (!calm) {
                pos += (uint64_t)r; /* still busy (a write never completed): not judged */
                continue;
            }
            done =
                worker_verify_buf(w, ti, w->rbufs, (uint32_t)r,
                                  stop - pos < (uint64_t)r ? (uint32_t)(stop - pos) : (uint32_t)r,
                                  pos, quiet, &partial);
            if (done == 0)
                done = (uint32_t)r; /* a block longer than the buffer: cannot be checked */
            pos += done;
            atomic_fetch_add_explicit(&t->vafter_done, done, memory_order_relaxed);
        }
        /* What was not read (a short file, a stop) is behind us too. */
        if (stop > pos)
            atomic_fetch_add_explicit(&t->vafter_done, stop - pos, memory_order_relaxed);
    }
}

/* A rated worker's margin after a timed wait meant to end at `target` ended
 * at `now`: a stochastic estimate of the 99th percentile of its oversleep
 * (one step up after a wake-up past the estimate, one small step down after
 * one within it), so rare long preemptions do not keep the margin, and the
 * CPU time it costs, high; within RUN_SPIN_MAX_NS. */
static void run_spin_update(struct run_worker *w, uint64_t target, uint64_t now)
{
    uint64_t over = now > target ? now - target : 0, est = w->spin_ns - RUN_SPIN_PAD_NS;

    if (over > est)
        est += RUN_SPIN_UP_NS;
    else
        est -= est < RUN_SPIN_DOWN_NS ? est : RUN_SPIN_DOWN_NS;
    if (est > RUN_SPIN_MAX_NS - RUN_SPIN_PAD_NS)
        est = RUN_SPIN_MAX_NS - RUN_SPIN_PAD_NS;
    w->spin_ns = est + RUN_SPIN_PAD_NS;
}

/* Samples the thread's scheduler account for the batching policy
 * (dyn_batch_sample); where the platform keeps none, the policy stays at
 * small steps and the worker stops asking. */
static void run_batch_sample(struct run_worker *w, uint64_t now)
{
    uint64_t run, wait;

    if (dyn_os_thread_sched(&run, &wait) < 0) {
        w->bpol_next = UINT64_MAX;
        return;
    }
    dyn_batch_sample(&w->bpol, now, run, wait);
    w->bpol_next = now + DYN_BATCH_WINDOW_NS;
}

static void *worker_main(void *arg)
{
    struct run_worker *w = arg;
    struct dyn_test *t = w->test;
    const uint64_t ms = t->measure_start, end = t->end;
    uint64_t now, paused_until = 0;
    unsigned inflight = 0, npending = 0;
    struct run_cursor c = {.cur = worker_slot(w, 0), .next_cut = interval_end(t, 0)};

    {
        char name[16];
        snprintf(name, sizeof(name), "worker %zu", w->index);
        dyn_os_thread_name(name);
    }
    /* A rated worker sleeps between due I/Os: without the default 50 us of
     * timer slack its wake-ups land where the schedule says. Its wake-ups
     * would still wait for the CPU behind whatever runs there, up to a whole
     * scheduler slice, and count as its own lateness: it asks for a short
     * slice (kept where the platform takes no such request). */
    if (w->rated) {
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        (void)dyn_os_thread_short_slice(RUN_SLICE_NS);
    }
    /* Wait for the common start, staying responsive to stop. */
    worker_wait_until(t, t->p.start_ns);
    now = iof_now_ns();
    w->started_ns = now;
    /* A worker leaving the barrier after the measured window began would
     * count leading intervals without its I/O as measured: refused, naming
     * why it was late: set up too late, or set up in time (its thread
     * started before the window) and then not run by a busy host. */
    if (now > ms && now - ms > DYN_START_LATE_MAX_NS &&
        !atomic_load_explicit(&t->stop, memory_order_relaxed)) {
        w->error = IOF_ETIMEOUT;
        iof_diag_set(&w->diag, IOF_ETIMEOUT,
                     "worker %zu: first I/O %.3f s after the measured window began (more than "
                     "%llu ms late; %s): refused rather than count a window without its I/O",
                     w->index, (double)(now - ms) / 1e9, DYN_START_LATE_MAX_NS / 1000000ull,
                     t->go_ns > ms ? "its set-up ended too close to the start time"
                                   : "set up in time, its thread was not run until then: the "
                                     "host's CPUs are busy; a ramp-up (run.ramp) absorbs a late "
                                     "start");
        atomic_store_explicit(&w->ended_ns, ms, memory_order_release);
        atomic_store_explicit(&w->done_flag, true, memory_order_release);
        /* The test has failed: the other workers stop now rather than run
         * the whole ramp and window for nothing. */
        atomic_store_explicit(&t->stop, true, memory_order_relaxed);
        return NULL;
    }

    run_batch_sample(w, now);
    for (;;) {
        int r;

        worker_advance(w, now, &c);
        if (now >= w->bpol_next)
            run_batch_sample(w, now);
        if (now >= end || atomic_load_explicit(&t->stop, memory_order_relaxed))
            break;
        if (!w->io_left && !inflight && !npending) {
            /* io_limit reached and every I/O of it counted: done. */
            atomic_store_explicit(&w->ended_ns, now, memory_order_release);
            break;
        }

        if (now >= paused_until && (w->fq_count || npending)) {
            uint64_t issued = iof_now_ns();
            uint64_t pause =
                w->paced ? worker_fill_paced(w, &npending, issued) : worker_fill(w, &npending);
            if (pause)
                paused_until = now + pause;
            r = worker_submit(w, issued, inflight, &npending);
            if (r < 0) {
                worker_fail(w, r, "submit failed");
                break;
            }
            inflight += (unsigned)r;
        }

        {
            uint64_t wake = end;
            bool due_wake = false; /* wake is a due I/O's, less the margin */
            if (ms > now && ms < wake)
                wake = ms;
            else if (now >= ms && c.next_cut < wake)
                wake = c.next_cut;
            if (paused_until > now && paused_until < wake)
                wake = paused_until;
            if (w->rated && w->fq_count && w->io_left && paused_until <= now) {
                /* The next I/O's due time (not before now: one is due
                 * already when the fill stopped at a burst's end), less the
                 * margin: within it the worker polls instead of sleeping. */
                uint64_t due = dyn_sched_due(&w->sched);
                if (due <= now + w->spin_ns)
                    wake = now;
                else if (due - w->spin_ns < wake) {
                    wake = due - w->spin_ns;
                    due_wake = true;
                }
            }
            if (wake > now + RUN_WAIT_SLICE_NS) {
                wake = now + RUN_WAIT_SLICE_NS; /* look at the stop flag at least this often */
                due_wake = false;
            }
            if (inflight) {
                /* Wait for one completion, then take the burst in chunks,
                 * each with its own stamp. Completions after a boundary
                 * belong to the next interval. */
                unsigned min = 1;
                do {
                    r = w->eng->reap(w->ctx, min, RUN_REAP_CHUNK, wake > now ? wake - now : 0,
                                     w->done);
                    if (r < 0)
                        break;
                    now = iof_now_ns();
                    if (due_wake && r == 0)
                        run_spin_update(w, wake, now); /* the wait timed out */
                    due_wake = false;
                    worker_advance(w, now, &c);
                    worker_collect(w, &c, now, r);
                    inflight -= (unsigned)r;
                    min = 0;
                    wake = now;
                } while ((unsigned)r == RUN_REAP_CHUNK && inflight);
                if (r < 0) {
                    worker_fail(w, r, "reap failed");
                    break;
                }
            } else {
                if (npending && paused_until <= now) {
                    /* The kernel refused the whole batch (EAGAIN) with nothing
                     * in flight to wait for: back off briefly, then retry. */
                    if (now + IOF_NS_PER_MS < wake)
                        wake = now + IOF_NS_PER_MS;
                }
                if (wake > now)
                    worker_wait_until(t, wake);
                now = iof_now_ns();
                if (due_wake)
                    run_spin_update(w, wake, now);
            }
        }
    }

    if (!atomic_load_explicit(&w->ended_ns, memory_order_relaxed))
        atomic_store_explicit(&w->ended_ns, now < end ? now : end, memory_order_release);
    /* Requests handed out but never accepted by the engine wrote nothing. */
    for (unsigned i = 0; w->valgo && i < npending; i++) {
        struct dyn_io *io = w->batch[i];
        w->vbusy[io - w->slots] = 0;
        if (io->write && w->vmap[io->target])
            dyn_genmap_write_done(w->vmap[io->target], io->offset, io->len, 0, false);
    }

    /* Stopped early: publish the partial interval so nothing counted is lost. */
    if (c.measuring && c.k < t->nintervals)
        worker_cut(w, c.k, c.cur);
    if (c.measuring)
        w->cpu_ns = thread_cpu_ns() - c.cpu0;

    /* Drain: completions after the window are not counted. */
    {
        uint64_t deadline = iof_now_ns() + RUN_DRAIN_NS;
        while (inflight) {
            uint64_t n2 = iof_now_ns();
            int r;
            if (n2 >= deadline) {
                IOF_ERROR("worker %zu: %u I/Os still in flight after %llu s; giving up", w->index,
                          inflight, RUN_DRAIN_NS / IOF_NS_PER_S);
                break;
            }
            r = w->eng->reap(w->ctx, 1, RUN_REAP_CHUNK, deadline - n2, w->done);
            if (r < 0) {
                worker_fail(w, r, "reap failed while draining");
                break;
            }
            for (int i = 0; w->valgo && i < r; i++)
                worker_verify_done(w, w->done[i], false);
            inflight -= (unsigned)r;
        }
    }
    if (w->vafter && !w->error && !atomic_load_explicit(&t->stop, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&t->vafter_active, 1, memory_order_relaxed);
        worker_verify_after(w);
        atomic_fetch_sub_explicit(&t->vafter_active, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&w->done_flag, true, memory_order_release);
    return NULL;
}

/* --- driver side -------------------------------------------------------- */

/* 64-bit finaliser (splitmix64's): mixes the parts of a data seed. */

int dyn_test_go(struct dyn_test *t, uint64_t start_ns, struct iof_diag *diag)
{
    int r;

    if (t->going)
        return iof_diag_set(diag, -EALREADY, "test already started");
    t->going = true;
    t->p.start_ns = start_ns;
    t->measure_start = start_ns + t->p.ramp_ns;
    t->end = t->measure_start + t->p.duration_ns;
    t->go_ns = iof_now_ns();
    for (size_t w = 0; w < t->nworkers; w++) {
        struct run_worker *wk = &t->workers[w];
        const struct iof_worker_cfg *g = &t->p.groups[wk->group];
        if (wk->rated)
            dyn_sched_init(&wk->sched, &wk->rate, start_ns,
                           (g->has_seed ? g->seed : t->p.seed) + wk->index);
    }
    for (size_t w = 0; w < t->nworkers; w++) {
        r = -pthread_create(&t->workers[w].thread, NULL, worker_main, &t->workers[w]);
        if (r) {
            iof_diag_set(diag, r, "cannot start worker thread: %s", strerror(-r));
            dyn_test_stop(t);
            return r;
        }
        t->workers[w].started = true;
    }
    return 0;
}

int dyn_test_start(const struct dyn_test_params *p, struct dyn_test **out, struct iof_diag *diag)
{
    struct dyn_test *t;
    int r = dyn_test_setup(p, &t, diag);

    if (r)
        return r;
    r = dyn_test_go(t, p->start_ns, diag);
    if (r) {
        dyn_test_free(t);
        return r;
    }
    *out = t;
    return 0;
}

size_t dyn_test_nworkers(const struct dyn_test *t)
{
    return t->nworkers;
}

size_t dyn_test_ntargets(const struct dyn_test *t, size_t w)
{
    return t->workers[w].ntargets;
}

size_t dyn_test_worker_group(const struct dyn_test *t, size_t w)
{
    return t->workers[w].group;
}

const struct iof_target_cfg *dyn_test_target_cfg(const struct dyn_test *t, size_t w, size_t i)
{
    return &t->workers[w].tcfg[i];
}

uint64_t dyn_test_nintervals(const struct dyn_test *t)
{
    return t->nintervals;
}

int dyn_test_interval(struct dyn_test *t, size_t wi, uint64_t k, const struct iof_stats **stats)
{
    struct run_worker *w = &t->workers[wi];
    uint64_t pub = atomic_load_explicit(&w->published, memory_order_acquire);

    if (pub <= k) {
        if (!atomic_load_explicit(&w->done_flag, memory_order_acquire))
            return 0;
        pub = atomic_load_explicit(&w->published, memory_order_acquire);
        if (pub <= k)
            return -ENOENT;
    }
    if (w->ring_interval[k % RUN_RING] != k)
        return -EOVERFLOW;
    *stats = &w->ring[(k % RUN_RING) * w->ntargets];
    return 1;
}

void dyn_test_interval_release(struct dyn_test *t, size_t wi, uint64_t k)
{
    struct run_worker *w = &t->workers[wi];
    uint64_t rel = atomic_load_explicit(&w->released, memory_order_relaxed);

    /* Clear the slots handed back before the worker can see them free: the
     * worker writes the slot of interval m only once m < released + RUN_RING,
     * and every m it may be writing now is above k, so none of these. A slot
     * whose tag is not j still holds an older interval, cleared when that
     * was released. */
    if (rel > k)
        return;
    if (k + 1 - rel > RUN_RING)
        rel = k + 1 - RUN_RING;
    for (uint64_t j = rel; j <= k; j++) {
        if (w->ring_interval[j % RUN_RING] != j)
            continue;
        for (size_t i = 0; i < w->ntargets; i++)
            iof_stats_reset(&w->ring[(j % RUN_RING) * w->ntargets + i]);
    }
    atomic_store_explicit(&w->released, k + 1, memory_order_release);
}

bool dyn_test_finished(const struct dyn_test *t)
{
    for (size_t w = 0; w < t->nworkers; w++)
        if (!atomic_load_explicit(&t->workers[w].done_flag, memory_order_acquire))
            return false;
    return true;
}

void dyn_test_stop(struct dyn_test *t)
{
    atomic_store(&t->stop, true);
}

int dyn_test_join(struct dyn_test *t, struct iof_diag *diag)
{
    int err = 0;

    if (!t->joined) {
        for (size_t w = 0; w < t->nworkers; w++)
            if (t->workers[w].started)
                pthread_join(t->workers[w].thread, NULL);
        t->joined = true;
    }
    for (size_t w = 0; w < t->nworkers; w++) {
        if (t->workers[w].error && !err) {
            err = t->workers[w].error;
            if (diag)
                *diag = t->workers[w].diag;
        }
    }
    return err;
}

const struct iof_stats *dyn_test_totals(const struct dyn_test *t, size_t w)
{
    return t->workers[w].totals;
}

size_t dyn_test_verify_reports(const struct dyn_test *t, const struct dyn_verify_report **out)
{
    *out = t->vrep;
    return t->nvrep;
}

bool dyn_test_verify_progress(const struct dyn_test *t, uint64_t *done, uint64_t *total)
{
    struct dyn_test *m = (struct dyn_test *)t; /* atomics read, nothing changed */
    uint64_t d = atomic_load_explicit(&m->vafter_done, memory_order_relaxed);

    *total = t->vafter_total;
    *done = d < t->vafter_total ? d : t->vafter_total;
    return atomic_load_explicit(&m->vafter_active, memory_order_relaxed) > 0;
}

bool dyn_test_lateness(const struct dyn_test *t, struct iof_hist *h, uint64_t *over)
{
    bool any = false;

    *over = 0;
    for (size_t w = 0; w < t->nworkers; w++) {
        const struct run_worker *wk = &t->workers[w];
        if (!wk->lateness)
            continue;
        iof_hist_merge(h, wk->lateness);
        *over += wk->over_ontime;
        any = true;
    }
    return any;
}

uint64_t dyn_test_cpu_ns(const struct dyn_test *t)
{
    uint64_t sum = 0;
    for (size_t w = 0; w < t->nworkers; w++)
        sum += t->workers[w].cpu_ns;
    return sum;
}

uint64_t dyn_test_ended_ns(const struct dyn_test *t)
{
    uint64_t last = 0;
    for (size_t w = 0; w < t->nworkers; w++) {
        uint64_t e = atomic_load_explicit(&t->workers[w].ended_ns, memory_order_acquire);
        if (!e)
            return 0;
        if (e > last)
            last = e;
    }
    return last;
}

void dyn_test_start_spread(const struct dyn_test *t, uint64_t *first, uint64_t *last)
{
    *first = UINT64_MAX;
    *last = 0;
    for (size_t w = 0; w < t->nworkers; w++) {
        uint64_t s = t->workers[w].started_ns;
        if (!s)
            continue;
        if (s < *first)
            *first = s;
        if (s > *last)
            *last = s;
    }
    if (*first == UINT64_MAX)
        *first = 0;
}
