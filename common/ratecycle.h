/* common/ratecycle.h - the steps of a rate cycle (plan "cycle": {"rate":
 * ...}): a curve (vdbench iorate=curve) offers fixed percentages of the
 * IOPS the unthrottled test reached; find_max searches the offered rate for
 * the highest IOPS whose latency stays within a target (the knee).
 *
 * Both start with an unthrottled test (step 0). Each later step offers a
 * fraction f of it: every worker runs at f x the IOPS it did itself
 * unthrottled, so the load is shared as the unthrottled test shared it.
 *
 * find_max is a bisection of the fraction over [0, 1]: the unthrottled test
 * either meets the target (the answer) or is the first miss (hi = 1); each
 * step offers (lo + hi) / 2 and moves lo (met) or hi (missed). Latency
 * grows with the offered rate, so the met/missed answer is monotone in f
 * and bisection is the search with the fewest steps in the worst case that
 * needs no model of the latency curve. It stops when hi - lo <=
 * IOF_FIND_MAX_PRECISION (of the unthrottled IOPS): at most
 * IOF_FIND_MAX_STEPS rated steps, so at most 1 + IOF_FIND_MAX_STEPS tests.
 * The answer is the achieved IOPS of the highest step that met the target;
 * the true knee lies within one final bracket (2 % of the unthrottled IOPS)
 * above it. When every step missed, the lowest one tried (1/64 of the
 * unthrottled IOPS) is reported as missed.
 *
 * Pure functions; no I/O.
 */
#ifndef IOF_COMMON_RATECYCLE_H
#define IOF_COMMON_RATECYCLE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/spec.h"

#define IOF_FIND_MAX_PRECISION 0.02 /* of the unthrottled IOPS */
#define IOF_FIND_MAX_STEPS 6        /* ceil(log2(1 / precision)) rated steps */

/* Tests of one spec: 1 + the curve's points, or 1 + IOF_FIND_MAX_STEPS. */
size_t iof_rate_cycle_steps(const struct iof_rate_cycle *rc);

/* The fraction a curve offers at step (0: unthrottled). */
double iof_rate_curve_frac(const struct iof_rate_cycle *rc, size_t step);

/* A find_max search, zero-initialised or reset with iof_knee_init(). */
struct iof_knee {
    double lo, hi;                  /* fractions: lo met the target (0: none yet), hi missed */
    double base_iops;               /* what the unthrottled step achieved */
    double best_iops;               /* achieved IOPS of the highest step that met (0: none) */
    double best_lat_ns, low_lat_ns; /* its latency; the latency of the lowest miss */
    double low_iops;                /* the lowest miss's achieved IOPS */
    size_t steps;                   /* steps fed */
    bool done;
};

void iof_knee_init(struct iof_knee *k);

/* Feeds the step just run: the fraction it offered (0: the unthrottled
 * step), the IOPS it achieved and its latency (the metric the search
 * targets, ns). Returns the next fraction to offer, or 0 when the search is
 * over (k->done; k->best_iops is the answer, 0 when no step met). */
double iof_knee_feed(struct iof_knee *k, const struct iof_rate_cycle *rc, double frac, double iops,
                     double lat_ns);

/* The headline: "max 412 k IOPS at p99 <= 2 ms (7 steps)" or "no rate met
 * p99 <= 2 ms: ..." (UTF-8 free, one line). */
void iof_knee_headline(const struct iof_knee *k, const struct iof_rate_cycle *rc, char *buf,
                       size_t cap);

#endif
