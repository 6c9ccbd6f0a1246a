/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/gen.c - the access-spec generator (gen.h): per-test thresholds and
 * per-region slot counts computed once, so each uniform I/O takes raw PRNG
 * draws, compares and multiplies only; a skewed distribution adds a few
 * floating-point operations per random I/O, its constants also precomputed. */
#include "dynamo/gen.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "common/err.h"

/* splitmix64: expands one 64-bit seed into well-mixed state words. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void dyn_rng_seed(struct dyn_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

uint64_t dyn_gen_threshold(uint32_t pct)
{
    return (uint64_t)(((unsigned __int128)pct << 64) / 100);
}

/* ---- zipf by rejection-inversion (Hoermann & Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions",
 * 1996): exact for any theta > 0 (1 included), O(1) expected work per draw
 * and O(1) setup - no zeta sum over the slots. The hat is the integral
 * H(x) of x^-theta; a draw inverts H at a uniform point and is accepted at
 * once when it lands close to an integer, else after one comparison. ---- */

/* log1p(x) / x and expm1(x) / x, continuous at 0 (theta = 1 is ln x). */
static double zipf_log1p_over(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x * (0.5 - x / 3.0);
}

static double zipf_expm1_over(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0);
}

/* H(x) = (x^(1-theta) - 1) / (1 - theta) (ln x at theta 1). */
static double zipf_H(double x, double theta)
{
    double lx = log(x);
    return zipf_expm1_over((1.0 - theta) * lx) * lx;
}

static double zipf_H_inv(double y, double theta)
{
    double t = y * (1.0 - theta);
    if (t < -1.0)
        t = -1.0; /* rounding at the far end: x = 0, clamped to rank 1 */
    return exp(zipf_log1p_over(t) * y);
}

static double zipf_h(double x, double theta)
{
    return exp(-theta * log(x));
}

/* A uniform double in [0, 1) from the top 53 bits of a draw. */
static inline double gen_u01(struct dyn_rng *rng)
{
    return (double)(dyn_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* Rank 0..n-1 (0 the most frequent) of a zipf draw. */
static uint64_t gen_zipf(struct dyn_gen *g, const struct dyn_gen_line *l, double hn, uint64_t n)
{
    const double theta = l->dp[0], hx1 = l->dp[1], sconst = l->dp[2];

    if (n <= 1)
        return 0;
    for (;;) {
        double u = hn + gen_u01(&g->rng) * (hx1 - hn);
        double x = zipf_H_inv(u, theta);
        double kd = floor(x + 0.5);
        uint64_t k;
        if (kd < 1.0)
            kd = 1.0;
        else if (kd > (double)n)
            kd = (double)n;
        k = (uint64_t)kd;
        if (kd - x <= sconst || u >= zipf_H(kd + 0.5, theta) - zipf_h(kd, theta))
            return k <= n ? k - 1 : n - 1;
    }
}

/* A standard normal deviate (Marsaglia's polar method; every second call
 * returns the pair's other half). */
static double gen_normal(struct dyn_gen *g)
{
    if (g->has_spare) {
        g->has_spare = false;
        return g->normal_spare;
    }
    for (;;) {
        double u = 2.0 * gen_u01(&g->rng) - 1.0, v = 2.0 * gen_u01(&g->rng) - 1.0;
        double q = u * u + v * v;
        if (q > 0.0 && q < 1.0) {
            double f = sqrt(-2.0 * log(q) / q);
            g->normal_spare = v * f;
            g->has_spare = true;
            return u * f;
        }
    }
}

/* floor(n * pct / 100) without overflow for any n (pct <= 100); the
 * divisions are by the constant 100, so multiplications. */
static inline uint64_t gen_pct_of(uint64_t n, unsigned pct)
{
    return n / 100 * pct + n % 100 * pct / 100;
}

/* The slot of a random I/O under a non-uniform distribution, < n. */
__attribute__((noinline)) static uint64_t
gen_skewed(struct dyn_gen *g, const struct dyn_gen_line *l, double hn, uint64_t n)
{
    uint64_t rank;

    switch (l->dist) {
    case IOF_DIST_ZIPF:
        rank = gen_zipf(g, l, hn, n);
        break;
    case IOF_DIST_PARETO:
        rank = (uint64_t)((double)n * pow(gen_u01(&g->rng), l->dp[0]));
        break;
    case IOF_DIST_NORMAL: {
        double x;
        do
            x = 0.5 + l->dp[0] * gen_normal(g);
        while (!(x >= 0.0 && x < 1.0));
        rank = (uint64_t)(x * (double)n);
        break;
    }
    case IOF_DIST_ZONED: {
        /* The zone by a percentile 0..99 (bias < 100 / 2^64), then uniform
         * in its slots (bias < slots / 2^64, below 2^-24 for any range a
         * device has): no rejection loop, no division by a runtime value. */
        const struct iof_dist_cfg *z = l->zones;
        unsigned p = (unsigned)(((unsigned __int128)dyn_rng_next(&g->rng) * 100) >> 64);
        unsigned acc = 0, lo_pct = 0, i = 0;
        uint64_t lo, hi;
        while (i + 1 < z->nzones && p >= acc + z->access[i]) {
            acc += z->access[i];
            lo_pct += z->range[i];
            i++;
        }
        lo = gen_pct_of(n, lo_pct);
        hi = gen_pct_of(n, lo_pct + z->range[i]);
        if (lo >= n)
            lo = n - 1;
        return hi > lo
                   ? lo + (uint64_t)(((unsigned __int128)dyn_rng_next(&g->rng) * (hi - lo)) >> 64)
                   : lo;
    }
    default:
        return dyn_rng_below(&g->rng, n);
    }
    return dyn_gen_scatter(rank < n ? rank : n - 1, n);
}

#define SCATTER_M1 0x9e3779b97f4a7c15ULL
#define SCATTER_C1 0x632be59bd9b4e019ULL
#define SCATTER_M2 0xbf58476d1ce4e5b9ULL

uint64_t dyn_gen_scatter(uint64_t x, uint64_t n)
{
    unsigned bits, sh;
    uint64_t mask;

    if (n <= 1)
        return 0;
    /* A bijection of [0, 2^bits) (2^bits >= n > 2^(bits-1)): odd multiplies
     * and xor-shifts modulo 2^bits; values past n walk the cycle on to the
     * next one inside (fewer than two rounds on average). */
    bits = 64u - (unsigned)__builtin_clzll(n - 1);
    mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    sh = (bits + 1) / 2;
    do {
        x = (x * SCATTER_M1 + SCATTER_C1) & mask;
        x ^= x >> sh;
        x = (x * SCATTER_M2) & mask;
        x ^= x >> sh;
    } while (x >= n);
    return x;
}

uint64_t dyn_gen_pass_slot(uint64_t x, uint64_t n, uint64_t key, uint64_t mask, unsigned sh)
{
    uint64_t k2 = (key >> 17) | 1;

    if (n <= 1)
        return 0;
    /* The scatter's rounds with the key mixed in: each step (xor or add a
     * constant, multiply by an odd number, xor-shift) is a bijection of
     * [0, 2^bits); walking the cycle past n keeps it one of [0, n). */
    do {
        x = ((x ^ key) * SCATTER_M1 + SCATTER_C1) & mask;
        x ^= x >> sh;
        x = (x * SCATTER_M2 + k2) & mask;
        x ^= x >> sh;
    } while (x >= n);
    return x;
}

/* The inverse of an odd number modulo 2^64 (Newton: each step doubles the
 * correct low bits, 3 to start with). */
static uint64_t odd_inverse(uint64_t m)
{
    uint64_t inv = m;
    for (int i = 0; i < 5; i++)
        inv *= 2 - m * inv;
    return inv;
}

uint64_t dyn_gen_unscatter(uint64_t x, uint64_t n)
{
    unsigned bits, sh;
    uint64_t mask, i1 = odd_inverse(SCATTER_M1), i2 = odd_inverse(SCATTER_M2);

    if (n <= 1)
        return 0;
    bits = 64u - (unsigned)__builtin_clzll(n - 1);
    mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    sh = (bits + 1) / 2; /* 2 sh >= bits: each xor-shift is its own inverse */
    do {
        x ^= x >> sh;
        x = (x * i2) & mask;
        x ^= x >> sh;
        x = ((x - SCATTER_C1) * i1) & mask;
    } while (x >= n);
    return x;
}

static uint8_t gen_chance_mode(uint32_t pct)
{
    return pct == 0 ? DYN_CHANCE_NEVER : pct >= 100 ? DYN_CHANCE_ALWAYS : DYN_CHANCE_DRAW;
}

int dyn_gen_init(struct dyn_gen *g, const struct iof_spec *spec, uint64_t seed)
{
    uint64_t total = 0, cum = 0;

    if (spec->nlines == 0 || spec->nlines > DYN_GEN_MAX_LINES)
        return -EINVAL;
    g->spec = spec;
    g->nshare = 0;
    for (size_t i = 0; i < spec->nlines; i++) {
        const struct iof_line *l = &spec->lines[i];
        struct dyn_gen_line *gl = &g->lines[i];
        gl->size = l->size;
        gl->align = l->align ? l->align : l->size;
        gl->delay_ns = l->delay_ns;
        gl->burst = l->burst ? l->burst : 1;
        gl->read = gen_chance_mode(l->read_pct);
        gl->read_thr = gl->read == DYN_CHANCE_DRAW ? dyn_gen_threshold(l->read_pct) : 0;
        gl->random = gen_chance_mode(l->random_pct);
        gl->random_thr = gl->random == DYN_CHANCE_DRAW ? dyn_gen_threshold(l->random_pct) : 0;
        gl->dist = (uint8_t)l->dist.kind;
        gl->once = l->random_once && l->dist.kind == IOF_DIST_UNIFORM;
        gl->zones = &l->dist;
        gl->dp[0] = gl->dp[1] = gl->dp[2] = 0.0;
        if (l->dist.kind == IOF_DIST_ZIPF) {
            double t = l->dist.param;
            gl->dp[0] = t;
            gl->dp[1] = zipf_H(1.5, t) - 1.0;
            gl->dp[2] = 2.0 - zipf_H_inv(zipf_H(2.5, t) - zipf_h(2.0, t), t);
        } else if (l->dist.kind == IOF_DIST_PARETO) {
            gl->dp[0] = log(l->dist.param) / log(1.0 - l->dist.param);
        } else if (l->dist.kind == IOF_DIST_NORMAL) {
            gl->dp[0] = l->dist.param / 100.0;
        }
        total += l->share;
    }
    for (size_t i = 0; i < spec->nlines; i++) {
        if (spec->lines[i].share == 0)
            continue;
        cum += spec->lines[i].share;
        /* floor(cum * 2^64 / total); the last entry is never compared. */
        g->pick_thr[g->nshare] =
            cum < total ? (uint64_t)(((unsigned __int128)cum << 64) / total) : UINT64_MAX;
        g->line_of[g->nshare] = (uint32_t)i;
        g->nshare++;
    }
    if (g->nshare == 0)
        return -EINVAL;
    dyn_rng_seed(&g->rng, seed);
    g->line = 0;
    g->burst_left = 0;
    g->has_spare = false;
    g->normal_spare = 0.0;
    return 0;
}

void dyn_gen_region_init(struct dyn_gen_region *r, const struct dyn_gen *g, uint64_t start,
                         uint64_t end, uint64_t min_align)
{
    r->start = start;
    r->end = end;
    r->min_align = min_align ? min_align : 1;
    r->next_seq = start;
    if (!g)
        return;
    for (size_t i = 0; i < g->spec->nlines; i++) {
        const struct dyn_gen_line *gl = &g->lines[i];
        uint64_t sa = g->spec->lines[i].align ? g->spec->lines[i].align : r->min_align;
        /* Aligned slots k with start + k*align + size <= end. */
        uint64_t n = gl->size <= end - start ? (end - start - gl->size) / gl->align + 1 : 1;
        r->line[i].slots = n;
        r->line[i].reject = -n % n;
        r->line[i].seq_align = sa;
        r->line[i].seq_mask = (sa & (sa - 1)) == 0 ? sa - 1 : 0;
        r->line[i].zipf_hn = gl->dist == IOF_DIST_ZIPF ? zipf_H((double)n + 0.5, gl->dp[0]) : 0.0;
        {
            unsigned bits = n > 1 ? 64u - (unsigned)__builtin_clzll(n - 1) : 1;
            r->line[i].perm_mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
            r->line[i].perm_sh = (bits + 1) / 2;
            r->line[i].pass_done = n; /* the first random I/O starts a pass */
            r->line[i].pass_key = 0;
        }
    }
}

uint64_t dyn_gen_stream_start(uint64_t len, uint64_t inc, bool pct, uint64_t i)
{
    unsigned __int128 step = pct ? (unsigned __int128)len * inc / 100 : inc;
    return (uint64_t)(step * i % len);
}

void dyn_gen_region_seek(struct dyn_gen_region *r, uint64_t rel)
{
    r->next_seq = r->start + rel;
}

static void gen_pick_line(struct dyn_gen *g)
{
    unsigned i = 0;

    if (g->nshare > 1) {
        uint64_t x = dyn_rng_next(&g->rng);
        while (i < g->nshare - 1 && x >= g->pick_thr[i])
            i++;
    }
    g->line = g->line_of[i];
    g->burst_left = g->lines[g->line].burst;
}

/* Draws an event decided by mode and threshold (struct dyn_gen_line). */
static inline bool gen_chance(struct dyn_gen *g, uint8_t mode, uint64_t thr)
{
    if (mode != DYN_CHANCE_DRAW)
        return mode == DYN_CHANCE_ALWAYS;
    return dyn_rng_next(&g->rng) < thr;
}

/* Uniform in [0, n) with reject = 2^64 mod n: dyn_rng_below without its
 * modulo (the same values for the same draws). */
static inline uint64_t gen_below(struct dyn_rng *rng, uint64_t n, uint64_t reject)
{
    unsigned __int128 m = (unsigned __int128)dyn_rng_next(rng) * n;
    while ((uint64_t)m < reject)
        m = (unsigned __int128)dyn_rng_next(rng) * n;
    return (uint64_t)(m >> 64);
}

uint64_t dyn_gen_next(struct dyn_gen *g, struct dyn_gen_region *r, struct dyn_io_desc *out)
{
    const struct dyn_gen_line *l;
    uint64_t off;
    unsigned li;

    if (g->burst_left == 0)
        gen_pick_line(g);
    li = g->line;
    l = &g->lines[li];

    out->size = (uint32_t)l->size;
    out->line = li;
    out->write = !gen_chance(g, l->read, l->read_thr);
    if (gen_chance(g, l->random, l->random_thr)) {
        uint64_t k;
        if (__builtin_expect(l->dist == IOF_DIST_UNIFORM && !l->once, 1)) {
            k = gen_below(&g->rng, r->line[li].slots, r->line[li].reject);
        } else if (l->once) {
            if (r->line[li].pass_done >= r->line[li].slots) { /* a new pass, a new order */
                r->line[li].pass_done = 0;
                r->line[li].pass_key = dyn_rng_next(&g->rng);
            }
            k = dyn_gen_pass_slot(r->line[li].pass_done++, r->line[li].slots, r->line[li].pass_key,
                                  r->line[li].perm_mask, r->line[li].perm_sh);
        } else
            k = gen_skewed(g, l, r->line[li].zipf_hn, r->line[li].slots);
        off = r->start + k * l->align;
    } else {
        /* Sequential I/O follows on contiguously: only an explicit alignment
         * (or the device's block size) moves it forward. A power-of-two
         * alignment (every block size, every usual align) takes a mask;
         * any other one a division. */
        uint64_t sa = r->line[li].seq_align, mask = r->line[li].seq_mask;
        uint64_t rel, mis;
        off = r->next_seq;
        rel = off - r->start;
        mis = mask ? rel & mask : sa > 1 ? rel % sa : 0;
        if (mis)
            off += sa - mis;
        if (off + l->size > r->end || off < r->start)
            off = r->start;
    }
    out->offset = off;
    r->next_seq = off + l->size;

    if (--g->burst_left == 0)
        return l->delay_ns;
    return 0;
}

int dyn_gen_check(const struct iof_spec *spec, const struct dyn_gen_region *r,
                  struct iof_diag *diag)
{
    for (size_t i = 0; i < spec->nlines; i++) {
        const struct iof_line *l = &spec->lines[i];
        uint64_t align = l->align ? l->align : l->size;
        if (l->size > r->end - r->start)
            return iof_diag_set(diag, IOF_EALIGN,
                                "spec '%s' line %zu: transfer size %" PRIu64
                                " exceeds the target range of %" PRIu64 " bytes",
                                spec->name, i, l->size, r->end - r->start);
        if (align % r->min_align || l->size % r->min_align)
            return iof_diag_set(diag, IOF_EALIGN,
                                "spec '%s' line %zu: size %" PRIu64 " / alignment %" PRIu64
                                " is not a multiple of the target's logical block size %" PRIu64
                                " (required for direct I/O)",
                                spec->name, i, l->size, align, r->min_align);
    }
    return 0;
}
