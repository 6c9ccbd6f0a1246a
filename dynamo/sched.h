/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/sched.h - the arrival schedule of a rated worker (workers[].rate):
 * when each I/O is due, evenly spaced or with exponential (Poisson) gaps of
 * the same mean, for a rate in IOPS or MiB/s (where an I/O's gap is in
 * proportion to its size).
 *
 * Times are ns since the schedule's origin in a double (53 bits: 1/64 ns
 * resolution over a day), so gaps that are not whole nanoseconds (3 IOPS,
 * 100 MiB/s of 4k) are kept. A uniform due time is computed as a product
 * (I/Os or bytes taken x the gap), never summed gap by gap, so it does not
 * drift: the n-th I/O is due within a nanosecond of origin + n x gap,
 * whatever n. Poisson gaps are summed (they are random anyway). One per
 * worker; not thread-safe; deterministic for a seed.
 */
#ifndef IOF_DYNAMO_SCHED_H
#define IOF_DYNAMO_SCHED_H

#include <math.h>
#include <stdint.h>

#include "common/spec.h"
#include "dynamo/gen.h"

struct dyn_sched {
    double ns_per_io;    /* IOPS: the mean gap; 0 for MiB/s */
    double ns_per_byte;  /* MiB/s: the mean gap per byte of the I/O; 0 for IOPS */
    double t;            /* when the next I/O is due, ns after origin */
    uint64_t ios, bytes; /* taken so far */
    uint64_t origin;     /* CLOCK_MONOTONIC ns */
    int poisson;
    struct dyn_rng rng; /* the gaps' own stream: the access pattern does not shift */
};

/* Prepares s for rate r (unit not NONE, value > 0) from `origin` on: the
 * first I/O is due at origin. */
void dyn_sched_init(struct dyn_sched *s, const struct iof_rate *r, uint64_t origin, uint64_t seed);

/* When the next I/O is due (absolute ns). */
static inline uint64_t dyn_sched_due(const struct dyn_sched *s)
{
    return s->origin + (uint64_t)s->t;
}

/* A unit exponential draw: -ln(U), U uniform in (0, 1] from 53 random bits. */
static inline double dyn_sched_exp1(struct dyn_rng *r)
{
    return -log((double)((dyn_rng_next(r) >> 11) + 1) * 0x1p-53);
}

/* Takes the due I/O, of `bytes` bytes: returns its scheduled time and moves
 * the schedule on by its gap. */
static inline uint64_t dyn_sched_take(struct dyn_sched *s, uint64_t bytes)
{
    uint64_t due = dyn_sched_due(s);

    s->ios++;
    s->bytes += bytes;
    if (s->poisson)
        s->t += (s->ns_per_io + s->ns_per_byte * (double)bytes) * dyn_sched_exp1(&s->rng);
    else
        s->t = s->ns_per_io * (double)s->ios + s->ns_per_byte * (double)s->bytes;
    return due;
}

#endif
