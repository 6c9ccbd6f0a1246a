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

int dyn_gen_init(struct dyn_gen *g, const struct iof_spec *spec, uint64_t seed)
{
    uint32_t total = 0;

    if (spec->nlines == 0 || spec->nlines > DYN_GEN_MAX_LINES)
        return -EINVAL;
    g->spec = spec;
    g->nshare = 0;
    for (size_t i = 0; i < spec->nlines; i++) {
        if (spec->lines[i].share == 0)
            continue;
        total += spec->lines[i].share;
        g->cum_share[g->nshare] = total;
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

void dyn_gen_region_init(struct dyn_gen_region *r, uint64_t start, uint64_t end, uint64_t min_align)
{
    r->start = start;
    r->end = end;
    r->min_align = min_align ? min_align : 1;
    r->next_seq = start;
}

static void gen_pick_line(struct dyn_gen *g)
{
    uint32_t total = g->cum_share[g->nshare - 1];
    unsigned i = 0;

    if (g->nshare > 1) {
        uint32_t x = (uint32_t)dyn_rng_below(&g->rng, total);
        while (x >= g->cum_share[i])
            i++;
    }
    g->line = g->line_of[i];
    g->burst_left = g->spec->lines[g->line].burst ? g->spec->lines[g->line].burst : 1;
}

/* Draws an event of probability pct/100. */
static inline bool gen_chance(struct dyn_gen *g, uint32_t pct)
{
    if (pct >= 100)
        return true;
    if (pct == 0)
        return false;
    return dyn_rng_below(&g->rng, 100) < pct;
}

uint64_t dyn_gen_next(struct dyn_gen *g, struct dyn_gen_region *r, struct dyn_io_desc *out)
{
    const struct iof_line *l;
    uint64_t align, off;

    if (g->burst_left == 0)
        gen_pick_line(g);
    l = &g->spec->lines[g->line];
    align = l->align ? l->align : l->size;

    out->size = (uint32_t)l->size;
    out->line = g->line;
    out->write = !gen_chance(g, l->read_pct);
    if (gen_chance(g, l->random_pct)) {
        /* Aligned slots k with start + k*align + size <= end. */
        uint64_t slots = (r->end - r->start - l->size) / align + 1;
        off = r->start + dyn_rng_below(&g->rng, slots) * align;
    } else {
        /* Sequential I/O follows on contiguously: only an explicit alignment
         * (or the device's block size) moves it forward. */
        uint64_t salign = l->align ? l->align : r->min_align;
        uint64_t rel;
        off = r->next_seq;
        rel = off - r->start;
        if (rel % salign)
            off += salign - rel % salign;
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
