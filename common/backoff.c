/* SPDX-License-Identifier: Apache-2.0 */
/* common/backoff.c - capped exponential backoff with equal jitter for
 * redials (see backoff.h). */
#include "common/backoff.h"

uint64_t iof_backoff_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t iof_backoff_jitter(uint64_t base_ms, uint64_t rnd)
{
    uint64_t half = base_ms / 2;
    return half + rnd % (base_ms - half + 1);
}

void iof_backoff_init(struct iof_backoff *b, uint64_t min_ms, uint64_t max_ms, uint64_t seed)
{
    b->min_ms = min_ms ? min_ms : 1;
    b->max_ms = max_ms < b->min_ms ? b->min_ms : max_ms;
    b->base_ms = b->min_ms;
    b->rng = seed;
}

void iof_backoff_reset(struct iof_backoff *b)
{
    b->base_ms = b->min_ms;
}

uint64_t iof_backoff_next(struct iof_backoff *b)
{
    uint64_t d = iof_backoff_jitter(b->base_ms, iof_backoff_rand(&b->rng));
    b->base_ms = b->base_ms > b->max_ms / 2 ? b->max_ms : b->base_ms * 2;
    return d;
}
