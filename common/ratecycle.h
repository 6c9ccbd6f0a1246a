/* SPDX-License-Identifier: Apache-2.0 */
/* common/ratecycle.h - the steps of a rate cycle (plan "cycle": {"rate":
 * ...}): a curve (vdbench iorate=curve) offers fixed percentages of the
 * IOPS the unthrottled test reached; find_max searches the offered rate for
 * the highest IOPS whose latency stays within a target (the knee).
 *
 * Both start with an unthrottled test (step 0). Each later step offers a
 * fraction f of it: every worker runs at f x the IOPS it did itself
 * unthrottled, so the load is shared as the unthrottled test shared it.
 *
 * find_max (docs/workloads.md "The knee, found for you"):
 * - The unthrottled test only measures the ceiling (base IOPS). It is never
 *   judged: its latency runs from each I/O's issue in a closed loop, while a
 *   rated step's runs from the I/O's scheduled time, and only the latter is
 *   what a load offered at that rate would see. Every judged test is rated.
 * - The search bisects the fraction over (0, 1), 1 standing for a miss (an
 *   open-loop rate at the ceiling queues without bound): each step offers
 *   (lo + hi) / 2 and moves lo (met) or hi (missed), until hi - lo <=
 *   IOF_FIND_MAX_PRECISION: at most IOF_FIND_MAX_STEPS steps.
 * - A run meets the target when its latency is within it and it achieved
 *   IOF_FIND_MAX_KEEP_UP of the rate offered: a run that fell behind ends
 *   with a backlog whose latency its figures never saw, and a longer run at
 *   that rate would miss.
 * - A run whose latency is within IOF_FIND_MAX_BAND of the target is close:
 *   noise can flip it. A close run that met is run again, up to
 *   IOF_FIND_MAX_RUNS runs, and the step is met only if every run met; a
 *   miss decides it at once. A met decision is what can become the answer,
 *   so it needs the stronger evidence: a bisection settles where its
 *   decision is a coin toss, and with a majority rule that is where one run
 *   in two misses; with "every run" it is where a run meets 4 times in 5.
 * - The highest fraction met is confirmed by one more run at it. If that
 *   misses, the search steps down to the next lower fraction met (or half
 *   the rate when there is none) and confirms again, at most
 *   IOF_FIND_MAX_CONFIRMS times. The answer is the confirmed step.
 * So at most IOF_FIND_MAX_TESTS tests per spec.
 *
 * Pure functions; no I/O.
 */
#ifndef IOF_COMMON_RATECYCLE_H
#define IOF_COMMON_RATECYCLE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/spec.h"

#define IOF_FIND_MAX_PRECISION 0.02 /* of the unthrottled IOPS */
#define IOF_FIND_MAX_STEPS 6        /* ceil(log2(1 / precision)) search steps */
#define IOF_FIND_MAX_RUNS 3         /* runs of one search step at most */
#define IOF_FIND_MAX_BAND 0.25      /* a run within +-25 % of the target is close */
#define IOF_FIND_MAX_CONFIRMS 3     /* confirmation runs at most */
#define IOF_FIND_MAX_KEEP_UP 0.95   /* of the offered rate a run must achieve to meet */
/* The unthrottled test, the search, the confirmations: 22. */
#define IOF_FIND_MAX_TESTS (1 + IOF_FIND_MAX_STEPS * IOF_FIND_MAX_RUNS + IOF_FIND_MAX_CONFIRMS)
#define IOF_FIND_MAX_LOG (IOF_FIND_MAX_STEPS + IOF_FIND_MAX_CONFIRMS)

/* Tests of one spec: 1 + the curve's points, or IOF_FIND_MAX_TESTS (at
 * most: a search usually ends sooner, and the rest are skipped). */
size_t iof_rate_cycle_steps(const struct iof_rate_cycle *rc);

/* Whether step (0: unthrottled) of a spec counts in the run's planned
 * time: every step of a curve; of find_max, the shortest search (the
 * unthrottled test, IOF_FIND_MAX_STEPS steps, one confirmation). */
#define IOF_FIND_MAX_SHORTEST (1 + IOF_FIND_MAX_STEPS + 1)
bool iof_rate_cycle_planned(const struct iof_rate_cycle *rc, size_t step);

/* The fraction a curve offers at step (0: unthrottled). */
double iof_rate_curve_frac(const struct iof_rate_cycle *rc, size_t step);

enum iof_knee_phase {
    IOF_KNEE_BASE,    /* waiting for the unthrottled test */
    IOF_KNEE_SEARCH,  /* bisecting */
    IOF_KNEE_CONFIRM, /* confirming the highest fraction met */
    IOF_KNEE_DONE,
};

/* One step of the search, or one confirmation run. */
struct iof_knee_step {
    double frac;                      /* offered, of the unthrottled IOPS */
    bool confirm;                     /* a confirmation run, else a search step */
    bool decided, met;                /* met: the decision */
    unsigned runs, nmet;              /* runs so far, runs within the target */
    double iops[IOF_FIND_MAX_RUNS];   /* achieved, per run */
    double lat_ns[IOF_FIND_MAX_RUNS]; /* the target's metric, per run */
};

/* A find_max search, reset with iof_knee_init(). */
struct iof_knee {
    enum iof_knee_phase phase;
    double base_iops; /* what the unthrottled test achieved */
    double lo, hi;    /* fractions: lo met (0: none yet), hi missed (1: the ceiling) */
    struct iof_knee_step step[IOF_FIND_MAX_LOG];
    size_t nsteps;   /* entries of step[], the current one last */
    size_t tests;    /* tests fed, the unthrottled one included */
    size_t confirms; /* confirmation runs so far */
    /* The answer (phase DONE; best_iops 0: none): the confirmed fraction,
     * the confirmation run's achieved IOPS and latency, and the runs at
     * that fraction, search and confirmation, that met (all of them). */
    double frac, best_iops, best_lat_ns;
    unsigned runs_met, runs;
    /* Without an answer: the lowest miss (the fraction, IOPS, latency). */
    double low_frac, low_iops, low_lat_ns;
    bool done;
};

void iof_knee_init(struct iof_knee *k);

/* Feeds the test just run: the fraction it offered (0: the unthrottled
 * test, the first fed), the IOPS it achieved and its latency (the metric
 * the search targets, ns). Returns the fraction the next test offers (the
 * same again for a repeated run), or 0 when the search is over (k->done). */
double iof_knee_feed(struct iof_knee *k, const struct iof_rate_cycle *rc, double frac, double iops,
                     double lat_ns);

/* What the last fed run did: "step 3, 62.5 % (41.2 k IOPS offered): p99
 * 8.1 ms: met, close to the target: run 2 of at most 3 next" and the like
 * (one line, no UTF-8). Empty before the unthrottled test. */
void iof_knee_progress(const struct iof_knee *k, const struct iof_rate_cycle *rc, char *buf,
                       size_t cap);

/* The headline: "max 41.2 k IOPS at p99 <= 10 ms (confirmed: p99 7.9 ms;
 * 3 of 3 runs met; 11 tests)" or "no rate met p99 <= 2 ms: ..." (one
 * line, no UTF-8). */
void iof_knee_headline(const struct iof_knee *k, const struct iof_rate_cycle *rc, char *buf,
                       size_t cap);

#endif
