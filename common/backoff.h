/* SPDX-License-Identifier: Apache-2.0 */
/* common/backoff.h - the delay before a dial is retried: capped exponential
 * backoff with jitter, so that thousands of agents that lost their manager
 * at the same instant do not all dial it again at the same instant. dynamo's
 * redial and the fleet simulator (tests/bench/simagent.c) use the same rule. */
#ifndef IOF_COMMON_BACKOFF_H
#define IOF_COMMON_BACKOFF_H

#include <stdint.h>

/* dynamo's redial to its manager: from 0.5 s, doubling up to 30 s. */
#define IOF_REDIAL_MIN_MS 500
#define IOF_REDIAL_MAX_MS 30000

/* A backoff: the base delay doubles after each failed dial from min_ms up
 * to max_ms; the delay actually waited is the base with "equal jitter",
 * uniformly in [base/2, base]. */
struct iof_backoff {
    uint64_t min_ms;
    uint64_t max_ms;
    uint64_t base_ms; /* the current base, min_ms after a reset */
    uint64_t rng;     /* state of the jitter's generator */
};

/* Starts at min_ms (made at least 1, and max_ms at least min_ms); seed
 * picks the jitter sequence (pass something that differs per process). */
void iof_backoff_init(struct iof_backoff *b, uint64_t min_ms, uint64_t max_ms, uint64_t seed);

/* After a dial that led to a session: back to min_ms. */
void iof_backoff_reset(struct iof_backoff *b);

/* The delay to wait before the next dial (jittered current base), and
 * doubles the base (capped at max_ms) for the one after. */
uint64_t iof_backoff_next(struct iof_backoff *b);

/* The pure parts, for tests: a splitmix64 step, and base jittered by a
 * random word into [base/2, base]. */
uint64_t iof_backoff_rand(uint64_t *state);
uint64_t iof_backoff_jitter(uint64_t base_ms, uint64_t rnd);

#endif
