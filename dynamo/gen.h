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
 *   - a random offset is uniform over the aligned offsets that fit the range;
 *     the alignment defaults to the transfer size (as fio does);
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
