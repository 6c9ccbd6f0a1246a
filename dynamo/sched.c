/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/sched.c - the arrival schedule of a rated worker: setup (the per-I/O
 * steps are inline in sched.h). */
#include "dynamo/sched.h"

#include <string.h>

#include "common/clock.h"

void dyn_sched_init(struct dyn_sched *s, const struct iof_rate *r, uint64_t origin, uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    if (r->unit == IOF_RATE_MIBPS)
        s->ns_per_byte = (double)IOF_NS_PER_S / (r->value * 1048576.0);
    else
        s->ns_per_io = (double)IOF_NS_PER_S / r->value;
    s->origin = origin;
    s->poisson = r->arrival == IOF_ARRIVAL_POISSON;
    dyn_rng_seed(&s->rng, seed ^ 0x5851f42d4c957f2dULL);
}
