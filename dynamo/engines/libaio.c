/* SPDX-License-Identifier: Apache-2.0 */
/* libaio engine: Linux native AIO with O_DIRECT. Each submit call is one
 * io_submit of the iocbs it is given (the worker gives at most two, see
 * RUN_SUBMIT_CHUNK in dynamo/run.c); completions are reaped with io_getevents.
 * EAGAIN from io_submit (kernel out of AIO resources) leaves the rest queued
 * for the caller to retry after reaping. */
#include <errno.h>
#include <libaio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "dynamo/engine.h"

struct dyn_engine {
    io_context_t ctx;
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

static int aio_reap(struct dyn_engine *e, unsigned min, unsigned max, uint64_t timeout_ns,
                    struct dyn_io **done)
{
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000ULL),
                          .tv_nsec = (long)(timeout_ns % 1000000000ULL)};
    int r;

    if (max > e->depth)
        max = e->depth;
    do {
        r = io_getevents(e->ctx, (long)min, (long)max, e->events, &ts);
    } while (r == -EINTR);
    if (r < 0)
        return r;
    for (int i = 0; i < r; i++) {
        struct dyn_io *io = e->events[i].data;
        long res = (long)e->events[i].res;
        io->result = res;
        done[i] = io;
    }
    return r;
}

const struct io_engine dyn_engine_libaio = {
    .name = "libaio",
    .direct = true,
    .touches_files = true,
    .open = aio_open,
    .close = aio_close,
    .submit = aio_submit,
    .reap = aio_reap,
};
