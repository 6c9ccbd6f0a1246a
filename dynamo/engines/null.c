/* SPDX-License-Identifier: Apache-2.0 */
/* null engine: completes every I/O at once without touching any file. It
 * measures the generator's and the stats path's own overhead. */
#include <errno.h>
#include <stdlib.h>

#include "common/err.h"
#include "dynamo/engine.h"

struct dyn_engine {
    struct dyn_io **done; /* completed, not yet reaped */
    unsigned ndone;
    unsigned depth;
};

static int null_open(struct dyn_engine **out, struct dyn_io *slots, unsigned depth,
                     const struct dyn_engine_opts *opts, struct iof_diag *diag)
{
    struct dyn_engine *e = calloc(1, sizeof(*e));
    (void)opts;
    (void)slots;
    if (!e || !(e->done = calloc(depth, sizeof(*e->done)))) {
        free(e);
        return iof_diag_set(diag, -ENOMEM, "null engine: out of memory");
    }
    e->depth = depth;
    *out = e;
    return 0;
}

static void null_close(struct dyn_engine *e)
{
    if (!e)
        return;
    free(e->done);
    free(e);
}

static int null_submit(struct dyn_engine *e, struct dyn_io **ios, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        ios[i]->result = ios[i]->len;
        e->done[e->ndone++] = ios[i];
    }
    return (int)n;
}

static int null_reap(struct dyn_engine *e, unsigned min, unsigned max, uint64_t timeout_ns,
                     struct dyn_io **done)
{
    unsigned n = e->ndone < max ? e->ndone : max;
    (void)min;
    (void)timeout_ns;
    for (unsigned i = 0; i < n; i++)
        done[i] = e->done[--e->ndone];
    return (int)n;
}

const struct dyn_engine_ops dyn_engine_null = {
    .facts = &iof_engine_facts[IOF_ENGINE_NULL],
    .open = null_open,
    .close = null_close,
    .submit = null_submit,
    .reap = null_reap,
};
