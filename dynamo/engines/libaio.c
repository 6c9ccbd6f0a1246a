/* SPDX-License-Identifier: Apache-2.0 */
/* libaio engine: Linux native AIO with O_DIRECT. Each submit call is one
 * io_submit of the iocbs it is given (the worker sizes the batches, see
 * worker_submit in dynamo/run.c). Completions are taken from the completion
 * ring the kernel shares with the process, without a system call, when it
 * holds enough; io_getevents waits for the rest. EAGAIN from io_submit
 * (kernel out of AIO resources) leaves the rest queued for the caller to
 * retry after reaping. */
#include <errno.h>
#include <libaio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "dynamo/engine.h"

/* The completion ring of an AIO context, mapped into the process: the
 * address io_setup returns as the context (the kernel's struct aio_ring in
 * fs/aio.c, part of its ABI). The kernel appends at tail; the process may
 * consume from head itself, and the kernel counts what it consumed when it
 * next needs room (user_refill_reqs_available). */
struct aio_shared_ring {
    unsigned id;
    unsigned nr; /* events the ring holds */
    unsigned head;
    unsigned tail;
    unsigned magic;
    unsigned compat_features;
    unsigned incompat_features;
    unsigned header_length;
    struct io_event events[];
};
#define AIO_SHARED_RING_MAGIC 0xa10a10a1u

struct dyn_engine {
    io_context_t ctx;
    struct aio_shared_ring *ring; /* NULL: every reap is io_getevents */
    unsigned depth;
    struct iocb *iocbs;      /* one per slot */
    struct iocb **batch;     /* scratch for io_submit */
    struct io_event *events; /* scratch for io_getevents */
};

static int aio_open(struct dyn_engine **out, struct dyn_io *slots, unsigned depth,
                    const struct dyn_engine_opts *opts, struct iof_diag *diag)
{
    struct dyn_engine *e = calloc(1, sizeof(*e));
    int r;
    (void)opts;

    if (!e)
        return iof_diag_set(diag, -ENOMEM, "libaio engine: out of memory");
    e->depth = depth;
    e->iocbs = calloc(depth, sizeof(*e->iocbs));
    e->batch = calloc(depth, sizeof(*e->batch));
    e->events = calloc(depth, sizeof(*e->events));
    if (!e->iocbs || !e->batch || !e->events) {
        free(e->iocbs);
        free(e->batch);
        free(e->events);
        free(e);
        return iof_diag_set(diag, -ENOMEM, "libaio engine: out of memory");
    }
    r = io_setup((int)depth, &e->ctx);
    if (r < 0) {
        free(e->iocbs);
        free(e->batch);
        free(e->events);
        free(e);
        return iof_diag_set(diag, r, "libaio engine: io_setup(%u) failed: %s%s", depth,
                            strerror(-r), r == -EAGAIN ? " (raise /proc/sys/fs/aio-max-nr)" : "");
    }
    {
        struct aio_shared_ring *ring = (struct aio_shared_ring *)e->ctx;
        if (ring->magic == AIO_SHARED_RING_MAGIC && ring->incompat_features == 0 &&
            ring->nr >= depth && ring->header_length == sizeof(*ring))
            e->ring = ring;
    }
    for (unsigned i = 0; i < depth; i++) {
        slots[i].priv = &e->iocbs[i];
        e->iocbs[i].data = &slots[i];
    }
    *out = e;
    return 0;
}

static void aio_close(struct dyn_engine *e)
{
    if (!e)
        return;
    io_destroy(e->ctx);
    free(e->iocbs);
    free(e->batch);
    free(e->events);
    free(e);
}

static int aio_submit(struct dyn_engine *e, struct dyn_io **ios, unsigned n)
{
    int r;

    for (unsigned i = 0; i < n; i++) {
        struct dyn_io *io = ios[i];
        struct iocb *cb = io->priv;
        if (io->write)
            io_prep_pwrite(cb, io->fd, io->buf, io->len, (long long)io->offset);
        else
            io_prep_pread(cb, io->fd, io->buf, io->len, (long long)io->offset);
        cb->data = io;
        e->batch[i] = cb;
    }
    do {
        r = io_submit(e->ctx, (long)n, e->batch);
    } while (r == -EINTR);
    if (r == -EAGAIN)
        return 0;
    return r;
}

/* Moves up to max completions from the shared ring into done[] (no system
 * call). The tail is read with acquire so the events before it are seen
 * whole; the head is published with release once they have been read. */
static unsigned aio_take(struct dyn_engine *e, unsigned max, struct dyn_io **done)
{
    struct aio_shared_ring *ring = e->ring;
    unsigned nr = ring->nr, head = ring->head, n = 0;
    unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);

    if (head >= nr || tail >= nr) {
        e->ring = NULL; /* not a ring this code understands: system calls only */
        return 0;
    }
    while (head != tail && n < max) {
        const struct io_event *ev = &ring->events[head];
        struct dyn_io *io = ev->data;
        io->result = (long)ev->res;
        done[n++] = io;
        head = head + 1 == nr ? 0 : head + 1;
    }
    if (n)
        __atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
    return n;
}

static int aio_reap(struct dyn_engine *e, unsigned min, unsigned max, uint64_t timeout_ns,
                    struct dyn_io **done)
{
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000ULL),
                          .tv_nsec = (long)(timeout_ns % 1000000000ULL)};
    unsigned got = 0;
    int r;

    if (max > e->depth)
        max = e->depth;
    if (e->ring) {
        got = aio_take(e, max, done);
        if (got >= min || got == max)
            return (int)got;
    }
    do {
        r = io_getevents(e->ctx, (long)(min - got), (long)(max - got), e->events, &ts);
    } while (r == -EINTR);
    if (r < 0)
        return got ? (int)got : r;
    for (int i = 0; i < r; i++) {
        struct dyn_io *io = e->events[i].data;
        long res = (long)e->events[i].res;
        io->result = res;
        done[got + (unsigned)i] = io;
    }
    return (int)got + r;
}

const struct dyn_engine_ops dyn_engine_libaio = {
    .facts = &iof_engine_facts[IOF_ENGINE_LIBAIO],
    .open = aio_open,
    .close = aio_close,
    .submit = aio_submit,
    .reap = aio_reap,
};
