/* dynamo/gen.c - the access-spec generator (gen.h): per-test thresholds and
 * per-region slot counts computed once, so each I/O takes raw PRNG draws,
 * compares and multiplies only. */
#include "dynamo/gen.h"

#include <errno.h>
#include <inttypes.h>

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
        off = r->start + gen_below(&g->rng, r->line[li].slots, r->line[li].reject) * l->align;
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
