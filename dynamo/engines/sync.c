/* SPDX-License-Identifier: Apache-2.0 */
/* sync engine: pread/pwrite, one I/O at a time (queue depth is effectively 1
 * per worker, as with fio's psync). Buffered I/O through the page cache. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/err.h"
#include "dynamo/engine.h"

struct dyn_engine {
    struct dyn_io *done; /* the one completed I/O, or NULL */
};

static int sync_open(struct dyn_engine **out, struct dyn_io *slots, unsigned depth,
                     const struct dyn_engine_opts *opts, struct iof_diag *diag)
{
    struct dyn_engine *e = calloc(1, sizeof(*e));
    (void)opts;
    (void)slots;
    (void)depth;
    if (!e)
        return iof_diag_set(diag, -ENOMEM, "sync engine: out of memory");
    *out = e;
    return 0;
}

static void sync_close(struct dyn_engine *e)
{
    free(e);
}

static int sync_submit(struct dyn_engine *e, struct dyn_io **ios, unsigned n)
{
    struct dyn_io *io;
    ssize_t r;

    if (n == 0 || e->done)
        return 0;
    io = ios[0];
    do {
        r = io->write ? pwrite(io->fd, io->buf, io->len, (off_t)io->offset)
                      : pread(io->fd, io->buf, io->len, (off_t)io->offset);
    } while (r < 0 && errno == EINTR);
    io->result = r < 0 ? -errno : r;
    e->done = io;
    return 1;
}

static int sync_reap(struct dyn_engine *e, unsigned min, unsigned max, uint64_t timeout_ns,
                     struct dyn_io **done)
{
    (void)min;
    (void)timeout_ns;
    if (!e->done || max == 0)
        return 0;
    done[0] = e->done;
    e->done = NULL;
    return 1;
}

const struct dyn_engine_ops dyn_engine_sync = {
    .facts = &iof_engine_facts[IOF_ENGINE_SYNC],
    .open = sync_open,
    .close = sync_close,
    .submit = sync_submit,
    .reap = sync_reap,
};
