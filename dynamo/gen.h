/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/gen.h - the access-spec generator: decides, per I/O, which line,
 * read or write, random or sequential, and the offset - with Iometer's
 * semantics:
 *   - a line is drawn per burst with probability share/100;
 *   - read vs write is drawn per I/O with probability read_pct/100;
 *   - random vs sequential is drawn per I/O with probability random_pct/100;
 *   - a sequential I/O starts where the previous I/O on the same target (by
 *     this worker) ended, rounded up to the line's explicit alignment (or the
 *     target's logical block size), wrapping to the start of the range when
 *     it would cross the end;
 *   - a random offset is one of the aligned offsets that fit the range (the
 *     line's slots), the alignment defaulting to the transfer size (as fio
 *     does); which one follows the line's distribution: uniform, or as fio's
 *     random_distribution (zipf, pareto, normal: a skewed rank scattered
 *     over the slots by one fixed permutation; zoned: uniform inside each
 *     zone, zones in the range's order);
 *   - with random_map "once_per_pass" (fio's random map), a line's random
 *     I/Os on a region walk its slots in a keyed permutation: every slot
 *     exactly once per pass, a new order each pass, O(1) memory (no bitmap);
 *   - after `burst` I/Os, submission pauses for `delay` before the next burst.
 * One generator per worker thread; not thread-safe; deterministic for a seed.
 */
#ifndef IOF_DYNAMO_GEN_H
#define IOF_DYNAMO_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/spec.h"

/* xoshiro256** - fast, 256-bit state, good statistical quality. */
struct dyn_rng {
    uint64_t s[4];
};

void dyn_rng_seed(struct dyn_rng *r, uint64_t seed);

static inline uint64_t dyn_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t dyn_rng_next(struct dyn_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = dyn_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = dyn_rng_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, n), unbiased (Lemire's multiply-and-reject). n > 0. */
static inline uint64_t dyn_rng_below(struct dyn_rng *r, uint64_t n)
{
    unsigned __int128 m = (unsigned __int128)dyn_rng_next(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t thresh = -n % n;
        while (lo < thresh) {
            m = (unsigned __int128)dyn_rng_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

#define DYN_GEN_MAX_LINES IOF_PLAN_MAX_LINES /* the plan limit (common/spec.h) */

/* How an event of probability pct/100 is decided: without a draw at 0 and
 * 100 %, else by one raw 64-bit draw against a precomputed threshold. */
enum dyn_chance { DYN_CHANCE_NEVER, DYN_CHANCE_ALWAYS, DYN_CHANCE_DRAW };

/* Everything about a line that is fixed for a test, precomputed by
 * dyn_gen_init so the per-I/O path does no division. */
struct dyn_gen_line {
    uint64_t size;
    uint64_t align; /* of random offsets: the line's, else its size */
    uint64_t delay_ns;
    uint64_t read_thr; /* read when a raw draw is below this */
    uint64_t random_thr;
    uint32_t burst;       /* >= 1 */
    uint8_t read, random; /* enum dyn_chance */
    uint8_t dist;         /* enum iof_dist of the random offsets */
    bool once;            /* random_map once_per_pass */
    /* Fixed for the test: zipf {theta, H(1.5) - 1, s} (rejection-inversion);
     * pareto {log h / log(1-h)}; normal {sigma as a fraction of the range}. */
    double dp[3];
    const struct iof_dist_cfg *zones; /* zoned: the line's (borrowed from the spec) */
};

/* Region of one target as one worker walks it, with the per-line figures
 * that depend on the region (dyn_gen_region_init). */
struct dyn_gen_region {
    uint64_t start;     /* first byte of the range */
    uint64_t end;       /* one past the last byte */
    uint64_t min_align; /* the target's logical block size (align 0 means this) */
    uint64_t next_seq;  /* where the next sequential I/O starts */
    struct {
        uint64_t slots;     /* aligned random offsets that fit */
        uint64_t reject;    /* Lemire's rejection bound for slots: 2^64 mod slots */
        uint64_t seq_align; /* sequential alignment: the line's, else min_align */
        uint64_t seq_mask;  /* seq_align - 1 when a power of two, else 0 */
        double zipf_hn;     /* zipf: H(slots + 0.5), the far end of the inversion */
        /* once_per_pass: random I/Os of this pass so far, the pass's key,
         * and the permutation's domain 2^bits >= slots (mask, shift). */
        uint64_t pass_done, pass_key, perm_mask;
        unsigned perm_sh;
    } line[DYN_GEN_MAX_LINES];
};

struct dyn_gen {
    const struct iof_spec *spec;
    struct dyn_rng rng;
    struct dyn_gen_line lines[DYN_GEN_MAX_LINES];
    uint64_t pick_thr[DYN_GEN_MAX_LINES]; /* line pick: raw draw below pick_thr[i] */
    uint32_t line_of[DYN_GEN_MAX_LINES];  /* line index for each pick_thr entry */
    unsigned nshare;
    unsigned line;       /* current burst's line */
    uint32_t burst_left; /* I/Os left in the current burst */
    double normal_spare; /* the polar method's second deviate, when has_spare */
    bool has_spare;
};

struct dyn_io_desc {
    uint64_t offset;
    uint32_t size;
    uint32_t line;
    bool write;
};

/* Prepares g for spec (borrowed; must outlive g). -EINVAL if the spec has no
 * line with a positive share or more than DYN_GEN_MAX_LINES lines. */
int dyn_gen_init(struct dyn_gen *g, const struct iof_spec *spec, uint64_t seed);

/* Threshold for an event of probability pct/100 (0 < pct < 100) decided by
 * `dyn_rng_next() < threshold`: floor(pct * 2^64 / 100), off by less than
 * 2^-64 from pct/100. */
uint64_t dyn_gen_threshold(uint32_t pct);

/* Sets up a region of g's spec (borrowed, must outlive r); start/end are
 * absolute byte offsets. g may be NULL for a region only given to
 * dyn_gen_check. Lines that do not fit the region (dyn_gen_check refuses
 * them) get one slot. */
void dyn_gen_region_init(struct dyn_gen_region *r, const struct dyn_gen *g, uint64_t start,
                         uint64_t end, uint64_t min_align);

/* Where sequential stream i starts, relative to the start of a range of len
 * bytes (len > 0): i x inc bytes, or i x inc percent of len when pct,
 * wrapping in the range (fio's offset_increment). */
uint64_t dyn_gen_stream_start(uint64_t len, uint64_t inc, bool pct, uint64_t i);

/* The fixed permutation of [0, n) that scatters a skewed distribution's
 * ranks over the slots (fio hashes them for the same reason): rank 0, the
 * hottest, is not always the range's first block, and hot slots are spread
 * over the whole range. The same for every worker, run and seed, so workers
 * share one hot set as an application's users would. n > 0. */
uint64_t dyn_gen_scatter(uint64_t rank, uint64_t n);

/* The i-th slot (i < n) of the pass keyed `key` of a once_per_pass line:
 * for a fixed key a permutation of [0, n), so i = 0..n-1 gives every slot
 * once. mask = 2^bits - 1 >= n - 1, sh = (bits + 1) / 2 (the region's). */
uint64_t dyn_gen_pass_slot(uint64_t i, uint64_t n, uint64_t key, uint64_t mask, unsigned sh);

/* The rank that dyn_gen_scatter(rank, n) maps to slot; slot < n. */
uint64_t dyn_gen_unscatter(uint64_t slot, uint64_t n);

/* Makes the next sequential I/O on r start at (or, aligned, just after)
 * r->start + rel; rel < r->end - r->start. */
void dyn_gen_region_seek(struct dyn_gen_region *r, uint64_t rel);

/* Next I/O on region r. Returns the pause in ns that must pass before the
 * *next* call (non-zero only when this I/O ended a burst whose line has a
 * delay). The caller checks beforehand that the line's size fits the region
 * (dyn_gen_check). */
uint64_t dyn_gen_next(struct dyn_gen *g, struct dyn_gen_region *r, struct dyn_io_desc *out);

/* 0 when every line of spec fits region r with its alignment, else -IOF_EALIGN
 * style error with a message naming the line. */
struct iof_diag;
int dyn_gen_check(const struct iof_spec *spec, const struct dyn_gen_region *r,
                  struct iof_diag *diag);

#endif
