/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_gen.c - dynamo/gen: the access-spec generator against
 * Iometer's semantics (gen.h): read/write mix, line shares per burst,
 * random/sequential mix, alignment and uniformity of random offsets,
 * sequential wrap, burst/delay, determinism, dyn_gen_check, dyn_gen_init.
 *
 * Statistical tests draw NDRAWS I/Os from fixed seeds, so every run sees the
 * same sequence; tolerances are 5 sigma or more, and the measured figures are
 * printed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "common/spec.h"
#include "dynamo/gen.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NDRAWS 1000000
#define KIB ((uint64_t)1024)
#define MIB (1024 * KIB)
#define TIB (1024 * 1024 * MIB)

static struct iof_line line_mk(uint64_t size, uint32_t share, uint32_t read, uint32_t random,
                               uint64_t align)
{
    struct iof_line l = {.size = size,
                         .share = share,
                         .read_pct = read,
                         .random_pct = random,
                         .align = align,
                         .delay_ns = 0,
                         .burst = 1};
    return l;
}

static void spec_mk(struct iof_spec *s, const char *name, struct iof_line *lines, size_t n)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->lines = lines;
    s->nlines = n;
}

/* Where a sequential I/O of `size` would start after one that ended at
 * prev_end (gen.h): rounded up to align relative to the region start, back to
 * the start when it would cross the end. */
static uint64_t seq_expect(const struct dyn_gen_region *r, uint64_t prev_end, uint64_t size,
                           uint64_t align)
{
    uint64_t rel = prev_end - r->start;
    uint64_t off = r->start + (rel + align - 1) / align * align;
    return off + size > r->end ? r->start : off;
}

/* --- read/write mix ------------------------------------------------------ */

static void test_read_mix_70(void **state)
{
    struct iof_line l = line_mk(4 * KIB, 100, 70, 100, 0);
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;
    uint64_t reads = 0;
    double frac;

    (void)state;
    spec_mk(&s, "70r", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 1), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * TIB, 512);
    for (int i = 0; i < NDRAWS; i++) {
        dyn_gen_next(&g, &r, &d);
        reads += !d.write;
    }
    frac = (double)reads / NDRAWS;
    print_message("read fraction for 70 %% reads: %.5f\n", frac);
    assert_true(frac >= 0.695 && frac <= 0.705);
}

static void test_read_mix_extremes(void **state)
{
    struct iof_line l[2] = {line_mk(4 * KIB, 50, 0, 100, 0), line_mk(8 * KIB, 50, 100, 100, 0)};
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    spec_mk(&s, "0r/100r", l, 2);
    assert_int_equal(dyn_gen_init(&g, &s, 2), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * TIB, 512);
    for (int i = 0; i < 100000; i++) {
        dyn_gen_next(&g, &r, &d);
        /* line 0 writes only, line 1 reads only */
        assert_int_equal(d.write, d.line == 0);
        assert_int_equal(d.size, l[d.line].size);
    }
}

/* --- line shares --------------------------------------------------------- */

static void test_share_weights(void **state)
{
    /* Line 1 has share 0 and sits between the others, so the cumulative
     * table's index -> line mapping is exercised too. */
    struct iof_line l[4] = {line_mk(4 * KIB, 20, 50, 100, 0), line_mk(512, 0, 50, 100, 0),
                            line_mk(8 * KIB, 30, 50, 100, 0), line_mk(16 * KIB, 50, 50, 100, 0)};
    const double want[4] = {0.20, 0.0, 0.30, 0.50};
    uint64_t count[4] = {0};
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    spec_mk(&s, "shares", l, 4);
    assert_int_equal(dyn_gen_init(&g, &s, 3), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * TIB, 512);
    for (int i = 0; i < NDRAWS; i++) {
        assert_int_equal(dyn_gen_next(&g, &r, &d), 0);
        assert_true(d.line < 4);
        assert_int_equal(d.size, l[d.line].size);
        count[d.line]++;
    }
    print_message("line frequencies (20/0/30/50): %.5f %.5f %.5f %.5f\n", (double)count[0] / NDRAWS,
                  (double)count[1] / NDRAWS, (double)count[2] / NDRAWS, (double)count[3] / NDRAWS);
    assert_int_equal(count[1], 0);
    for (int i = 0; i < 4; i++) {
        double f = (double)count[i] / NDRAWS;
        assert_true(f >= want[i] - 0.005 && f <= want[i] + 0.005);
    }
}

static void test_share_single_line(void **state)
{
    /* One positive share among zeros: always that line, whatever its index. */
    struct iof_line l[3] = {line_mk(4 * KIB, 0, 50, 100, 0), line_mk(4 * KIB, 0, 50, 100, 0),
                            line_mk(8 * KIB, 7, 50, 100, 0)};
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    spec_mk(&s, "one", l, 3);
    assert_int_equal(dyn_gen_init(&g, &s, 4), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * MIB, 512);
    for (int i = 0; i < 10000; i++) {
        dyn_gen_next(&g, &r, &d);
        assert_int_equal(d.line, 2);
        assert_int_equal(d.size, 8 * KIB);
    }
}

static void test_share_burst(void **state)
{
    /* burst 4 on every line: the line is drawn once per 4 I/Os, so I/Os
     * 4k..4k+3 share a line, and the per-burst frequencies follow the shares. */
    struct iof_line l[3] = {line_mk(4 * KIB, 20, 50, 100, 0), line_mk(8 * KIB, 30, 50, 100, 0),
                            line_mk(16 * KIB, 50, 50, 100, 0)};
    const double want[3] = {0.20, 0.30, 0.50};
    uint64_t count[3] = {0}, changes = 0;
    unsigned prev = UINT32_MAX;
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;
    const int nbursts = NDRAWS / 4;

    (void)state;
    for (int i = 0; i < 3; i++)
        l[i].burst = 4;
    spec_mk(&s, "burst4", l, 3);
    assert_int_equal(dyn_gen_init(&g, &s, 5), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * TIB, 512);
    for (int b = 0; b < nbursts; b++) {
        unsigned line;
        dyn_gen_next(&g, &r, &d);
        line = d.line;
        for (int i = 1; i < 4; i++) {
            dyn_gen_next(&g, &r, &d);
            assert_int_equal(d.line, line);
        }
        count[line]++;
        changes += line != prev;
        prev = line;
    }
    print_message("per-burst line frequencies (20/30/50, burst 4): %.5f %.5f %.5f\n",
                  (double)count[0] / nbursts, (double)count[1] / nbursts,
                  (double)count[2] / nbursts);
    for (int i = 0; i < 3; i++) {
        double f = (double)count[i] / nbursts;
        assert_true(f >= want[i] - 0.005 && f <= want[i] + 0.005);
    }
    /* Lines are redrawn per burst: with these shares P(change) = 0.62. */
    assert_true(changes > (uint64_t)nbursts / 2);
}

static void test_share_mixed_bursts(void **state)
{
    /* Each line keeps its own burst length: after a line is picked, exactly
     * burst(line) I/Os use it before the next draw. */
    struct iof_line l[3] = {line_mk(4 * KIB, 40, 50, 100, 0), line_mk(8 * KIB, 40, 50, 100, 0),
                            line_mk(16 * KIB, 20, 50, 100, 0)};
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;
    int i = 0;

    (void)state;
    l[0].burst = 1;
    l[1].burst = 3;
    l[2].burst = 0; /* 0 is treated as 1 */
    spec_mk(&s, "mixed", l, 3);
    assert_int_equal(dyn_gen_init(&g, &s, 6), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * TIB, 512);
    while (i < 300000) {
        unsigned line, n;
        dyn_gen_next(&g, &r, &d);
        i++;
        line = d.line;
        n = l[line].burst ? l[line].burst : 1;
        for (unsigned k = 1; k < n; k++, i++) {
            dyn_gen_next(&g, &r, &d);
            assert_int_equal(d.line, line);
        }
    }
}

/* --- random / sequential ----------------------------------------------------- */

/* Fraction of I/Os not at the sequential position, over NDRAWS. The region is
 * 1 TiB, so a random offset lands on the sequential one with p ~ 4e-9. */
static double nonseq_fraction(uint32_t random_pct, uint64_t seed)
{
    struct iof_line l = line_mk(4 * KIB, 100, 50, random_pct, 4 * KIB);
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;
    uint64_t prev_end, nonseq = 0;

    spec_mk(&s, "mix", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, seed), 0);
    dyn_gen_region_init(&r, &g, 64 * KIB, 64 * KIB + 1 * TIB, 512);
    prev_end = r.start;
    for (int i = 0; i < NDRAWS; i++) {
        dyn_gen_next(&g, &r, &d);
        nonseq += d.offset != seq_expect(&r, prev_end, d.size, 4 * KIB);
        prev_end = d.offset + d.size;
    }
    return (double)nonseq / NDRAWS;
}

static void test_random_pct(void **state)
{
    double f25, f0, f100;

    (void)state;
    f25 = nonseq_fraction(25, 7);
    f0 = nonseq_fraction(0, 8);
    f100 = nonseq_fraction(100, 9);
    print_message("non-sequential fraction: 25 %% random %.5f, 0 %% %.5f, 100 %% %.5f\n", f25, f0,
                  f100);
    assert_true(f25 >= 0.245 && f25 <= 0.255);
    assert_true(f0 == 0.0);
    assert_true(f100 >= 0.9999);
}

/* --- alignment and uniformity -------------------------------------------------- */

static void test_align_random(void **state)
{
    /* Region start 7*512: not a multiple of align, so alignment must be
     * relative to the start; size 12k > align 8k; the region's length is
     * not a multiple of align. */
    struct iof_line l = line_mk(12 * KIB, 100, 50, 100, 8 * KIB);
    const uint64_t start = 7 * 512, end = start + 1 * MIB + 3 * 512;
    const uint64_t last = start + (end - start - 12 * KIB) / (8 * KIB) * (8 * KIB);
    uint64_t lo = UINT64_MAX, hi = 0;
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    spec_mk(&s, "align", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 10), 0);
    dyn_gen_region_init(&r, &g, start, end, 512);
    assert_int_equal(dyn_gen_check(&s, &r, NULL), 0);
    for (int i = 0; i < NDRAWS; i++) {
        dyn_gen_next(&g, &r, &d);
        assert_true(d.offset >= start);
        assert_true(d.offset + d.size <= end);
        assert_int_equal((d.offset - start) % (8 * KIB), 0);
        lo = d.offset < lo ? d.offset : lo;
        hi = d.offset > hi ? d.offset : hi;
    }
    /* Both extreme slots are reachable. */
    assert_int_equal(lo, start);
    assert_int_equal(hi, last);
}

static void test_align_zero(void **state)
{
    /* align 0 (gen.h, spec.h): random offsets are aligned to the transfer
     * size, as fio does - 12k I/Os land on 12k slots relative to the region
     * start, whatever the region's min_align; sequential I/O stays
     * contiguous (rounded up to min_align only). */
    struct iof_line l = line_mk(12 * KIB, 100, 50, 100, 0);
    const uint64_t start = 5 * 512, end = start + 64 * MIB;
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;
    uint64_t odd = 0, prev_end;

    (void)state;
    spec_mk(&s, "align0", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 11), 0);
    dyn_gen_region_init(&r, &g, start, end, 512);
    assert_int_equal(dyn_gen_check(&s, &r, NULL), 0);
    for (int i = 0; i < 100000; i++) {
        dyn_gen_next(&g, &r, &d);
        assert_int_equal((d.offset - start) % (12 * KIB), 0);
        assert_true(d.offset >= start && d.offset + d.size <= end);
        odd += ((d.offset - start) % (24 * KIB)) != 0;
    }
    assert_true(odd > 0); /* 12k slots, not some coarser grid */

    l.random_pct = 0;
    assert_int_equal(dyn_gen_init(&g, &s, 12), 0);
    dyn_gen_region_init(&r, &g, start, end, 512);
    prev_end = start;
    for (int i = 0; i < 10000; i++) {
        dyn_gen_next(&g, &r, &d);
        assert_int_equal(d.offset, seq_expect(&r, prev_end, d.size, 512));
        prev_end = d.offset + d.size;
    }

    /* min_align 0 means 1 (dyn_gen_region_init) */
    dyn_gen_region_init(&r, NULL, 0, 64 * MIB, 0);
    assert_int_equal(r.min_align, 1);
}

static void test_uniformity(void **state)
{
    /* 16384 4k slots in 64 MiB, 16 buckets of 1024 slots. Expected 62500 per
     * bucket, sigma ~242 (0.39 %): +-2 % is over 5 sigma. */
    struct iof_line l = line_mk(4 * KIB, 100, 50, 100, 4 * KIB);
    const uint64_t start = 1 * MIB, len = 64 * MIB;
    uint64_t bucket[16] = {0};
    const double expect = NDRAWS / 16.0;
    double chi2 = 0, worst = 0;
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    spec_mk(&s, "uniform", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 13), 0);
    dyn_gen_region_init(&r, &g, start, start + len, 512);
    for (int i = 0; i < NDRAWS; i++) {
        dyn_gen_next(&g, &r, &d);
        bucket[(d.offset - start) / (len / 16)]++;
    }
    for (int i = 0; i < 16; i++) {
        double dev = ((double)bucket[i] - expect) / expect;
        chi2 += ((double)bucket[i] - expect) * ((double)bucket[i] - expect) / expect;
        if (dev < 0)
            dev = -dev;
        worst = dev > worst ? dev : worst;
        assert_true(dev <= 0.02);
    }
    print_message("uniformity: 16 buckets, worst deviation %.3f %%, chi-square %.2f (15 dof)\n",
                  100.0 * worst, chi2);
    assert_true(chi2 < 37.7); /* p = 0.001 for 15 degrees of freedom */
}

/* --- sequential wrap ------------------------------------------------------------- */

static void seq_walk(uint64_t start, uint64_t len, uint64_t size, uint64_t align,
                     const uint64_t *want_rel, size_t nwant, int rounds)
{
    struct iof_line l = line_mk(size, 100, 0, 0, align);
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    spec_mk(&s, "seq", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 14), 0);
    dyn_gen_region_init(&r, &g, start, start + len, 4096);
    assert_int_equal(dyn_gen_check(&s, &r, NULL), 0);
    for (int k = 0; k < rounds; k++) {
        for (size_t i = 0; i < nwant; i++) {
            assert_int_equal(dyn_gen_next(&g, &r, &d), 0);
            assert_int_equal(d.offset, start + want_rel[i]);
            assert_int_equal(d.size, size);
            assert_true(d.write);
        }
    }
}

static void test_seq_wrap(void **state)
{
    uint64_t want[16];
    const uint64_t want12[] = {0, 12 * KIB, 24 * KIB, 36 * KIB, 48 * KIB};
    const uint64_t want_a16[] = {0, 16 * KIB, 32 * KIB, 48 * KIB};
    const uint64_t want_full[] = {0};

    (void)state;
    for (int i = 0; i < 16; i++)
        want[i] = (uint64_t)i * 4 * KIB;
    /* 4k over 64k: 0, 4k, ..., 60k, 0, 4k, ... */
    seq_walk(0, 64 * KIB, 4 * KIB, 0, want, 16, 3);
    /* the same with the region starting at 1 MiB + 4k */
    seq_walk(1 * MIB + 4 * KIB, 64 * KIB, 4 * KIB, 0, want, 16, 3);
    /* 12k does not divide 64k: after 48k the next (60k..72k) would cross */
    seq_walk(0, 64 * KIB, 12 * KIB, 0, want12, 5, 3);
    seq_walk(3 * MIB, 64 * KIB, 12 * KIB, 4 * KIB, want12, 5, 3);
    /* align 16k > size 4k: each end (4k past) rounds up to the next 16k */
    seq_walk(8 * KIB, 64 * KIB, 4 * KIB, 16 * KIB, want_a16, 4, 3);
    /* transfer size == region: always the start */
    seq_walk(4 * KIB, 64 * KIB, 64 * KIB, 0, want_full, 1, 5);
}

static void test_full_region_random(void **state)
{
    /* A random I/O the size of the region has exactly one slot. */
    struct iof_line l = line_mk(64 * KIB, 100, 50, 100, 4 * KIB);
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    spec_mk(&s, "full", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 15), 0);
    dyn_gen_region_init(&r, &g, 12 * KIB, 76 * KIB, 4096);
    assert_int_equal(dyn_gen_check(&s, &r, NULL), 0);
    for (int i = 0; i < 1000; i++) {
        dyn_gen_next(&g, &r, &d);
        assert_int_equal(d.offset, 12 * KIB);
    }
}

/* --- burst / delay ------------------------------------------------------------ */

static void test_burst_delay(void **state)
{
    struct iof_line l = line_mk(4 * KIB, 100, 50, 50, 0);
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    l.burst = 3;
    l.delay_ns = 5000000;
    spec_mk(&s, "burst", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 16), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * MIB, 512);
    for (int i = 0; i < 30000; i++) {
        uint64_t p = dyn_gen_next(&g, &r, &d);
        assert_int_equal(p, (i % 3 == 2) ? 5000000 : 0);
    }
}

static void test_burst_delay_per_line(void **state)
{
    /* Two lines with their own burst and delay; a line with delay 0 never
     * pauses. The pause returned is the delay of the line whose burst ended. */
    struct iof_line l[3] = {line_mk(4 * KIB, 40, 50, 100, 0), line_mk(8 * KIB, 30, 50, 100, 0),
                            line_mk(16 * KIB, 30, 50, 100, 0)};
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;
    uint64_t pauses = 0;
    int i = 0;

    (void)state;
    l[0].burst = 2;
    l[0].delay_ns = 1000;
    l[1].burst = 5;
    l[1].delay_ns = 0;
    l[2].burst = 1;
    l[2].delay_ns = 777777;
    spec_mk(&s, "delays", l, 3);
    assert_int_equal(dyn_gen_init(&g, &s, 17), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * MIB, 512);
    while (i < 100000) {
        uint64_t p = dyn_gen_next(&g, &r, &d);
        unsigned line = d.line;
        for (uint32_t k = 1; k < l[line].burst; k++) {
            assert_int_equal(p, 0);
            p = dyn_gen_next(&g, &r, &d);
            assert_int_equal(d.line, line);
        }
        i += (int)l[line].burst;
        assert_int_equal(p, l[line].delay_ns);
        pauses += p != 0;
    }
    assert_true(pauses > 0);
}

/* --- determinism ------------------------------------------------------------------ */

static uint64_t run_digest(uint64_t seed, struct dyn_io_desc *first, size_t nfirst)
{
    struct iof_line l[3] = {line_mk(4 * KIB, 50, 70, 60, 0), line_mk(8 * KIB, 30, 20, 10, 8 * KIB),
                            line_mk(64 * KIB, 20, 100, 100, 0)};
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;
    uint64_t h = 1469598103934665603ull;

    l[1].burst = 3;
    l[1].delay_ns = 100;
    spec_mk(&s, "det", l, 3);
    assert_int_equal(dyn_gen_init(&g, &s, seed), 0);
    dyn_gen_region_init(&r, &g, 0, 256 * MIB, 512);
    for (size_t i = 0; i < 100000; i++) {
        uint64_t p = dyn_gen_next(&g, &r, &d);
        uint64_t v[4] = {d.offset, d.size, (uint64_t)d.line << 1 | d.write, p};
        if (i < nfirst)
            first[i] = d;
        for (int k = 0; k < 4; k++)
            h = (h ^ v[k]) * 1099511628211ull;
    }
    return h;
}

static void test_determinism(void **state)
{
    struct dyn_io_desc a[256], b[256], c[256];
    uint64_t ha, hb, hc;
    int same = 0;

    (void)state;
    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    memset(c, 0, sizeof(c));
    ha = run_digest(42, a, 256);
    hb = run_digest(42, b, 256);
    hc = run_digest(43, c, 256);
    assert_int_equal(ha, hb);
    for (int i = 0; i < 256; i++) {
        assert_int_equal(a[i].offset, b[i].offset);
        assert_int_equal(a[i].size, b[i].size);
        assert_int_equal(a[i].line, b[i].line);
        assert_int_equal(a[i].write, b[i].write);
        same += a[i].offset == c[i].offset && a[i].write == c[i].write && a[i].line == c[i].line;
    }
    assert_true(ha != hc);
    assert_true(same < 128); /* a different seed gives a different sequence */
}

/* --- precomputed thresholds ------------------------------------------------------ */

static void test_threshold_exact(void **state)
{
    /* floor(pct * 2^64 / 100) for every pct, so a raw draw is below it with
     * probability pct/100 - e, 0 <= e < 2^-64. */
    (void)state;
    assert_true(dyn_gen_threshold(50) == (uint64_t)1 << 63);
    assert_true(dyn_gen_threshold(25) == (uint64_t)1 << 62);
    assert_true(dyn_gen_threshold(1) == 0x028F5C28F5C28F5CULL);
    for (uint32_t p = 1; p < 100; p++) {
        unsigned __int128 t = dyn_gen_threshold(p), want = (unsigned __int128)p << 64;
        assert_true(t * 100 <= want && (t + 1) * 100 > want);
        assert_true(dyn_gen_threshold(p) > dyn_gen_threshold(p - 1) || p == 1);
    }
}

/* The decisions of one I/O come from raw draws in a fixed order: read vs
 * write (one draw, only when 0 < read < 100), random vs sequential (the same),
 * then the random offset (dyn_rng_below's multiply, same value for the same
 * draw). A second generator of the same seed replays them. */
static void test_one_draw_per_decision(void **state)
{
    struct iof_line l = line_mk(4 * KIB, 100, 70, 40, 0);
    const uint64_t start = 1 * MIB, len = 3 * 1000 * 4 * KIB; /* 3000 slots: rejections */
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;
    struct dyn_rng ref;
    uint64_t next_seq = start;

    (void)state;
    spec_mk(&s, "draws", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 21), 0);
    dyn_gen_region_init(&r, &g, start, start + len, 512);
    dyn_rng_seed(&ref, 21);
    for (int i = 0; i < 100000; i++) {
        bool write = !(dyn_rng_next(&ref) < dyn_gen_threshold(70));
        bool random = dyn_rng_next(&ref) < dyn_gen_threshold(40);
        uint64_t off = random ? start + dyn_rng_below(&ref, 3000) * 4 * KIB : next_seq;
        if (off + 4 * KIB > start + len)
            off = start;
        dyn_gen_next(&g, &r, &d);
        assert_int_equal(d.write, write);
        assert_int_equal(d.offset, off);
        next_seq = off + 4 * KIB;
    }
    /* 0 % and 100 % take no draw: the stream is the offsets' alone. */
    l = line_mk(4 * KIB, 100, 100, 100, 0);
    assert_int_equal(dyn_gen_init(&g, &s, 22), 0);
    dyn_gen_region_init(&r, &g, start, start + len, 512);
    dyn_rng_seed(&ref, 22);
    for (int i = 0; i < 10000; i++) {
        dyn_gen_next(&g, &r, &d);
        assert_false(d.write);
        assert_int_equal(d.offset, start + dyn_rng_below(&ref, 3000) * 4 * KIB);
    }
}

/* Frequencies over a sweep of percentages, against the exact probability and
 * against the former decision (dyn_rng_below(100) < pct) on its own stream:
 * both within 5 sigma. */
static void test_pct_sweep_unchanged(void **state)
{
    static const uint32_t pcts[] = {1, 5, 13, 33, 50, 67, 90, 99};

    (void)state;
    for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
        uint32_t p = pcts[k];
        struct iof_line l = line_mk(4 * KIB, 100, p, p, 0);
        struct iof_spec s;
        struct dyn_gen g;
        struct dyn_gen_region r;
        struct dyn_io_desc d;
        struct dyn_rng old;
        uint64_t reads = 0, randoms = 0, old_hits = 0, prev_end = 0;
        double want = p / 100.0, sigma = sqrt(want * (1 - want) / NDRAWS), fr, fx, fo;

        spec_mk(&s, "sweep", &l, 1);
        assert_int_equal(dyn_gen_init(&g, &s, 100 + p), 0);
        dyn_gen_region_init(&r, &g, 0, 1 * TIB, 512);
        dyn_rng_seed(&old, 200 + p);
        for (int i = 0; i < NDRAWS; i++) {
            dyn_gen_next(&g, &r, &d);
            reads += !d.write;
            randoms += d.offset != prev_end; /* a sequential hit at random is ~2^-28 */
            prev_end = d.offset + d.size;
            old_hits += dyn_rng_below(&old, 100) < p;
        }
        fr = (double)reads / NDRAWS;
        fx = (double)randoms / NDRAWS;
        fo = (double)old_hits / NDRAWS;
        print_message("pct %2u: read %.5f random %.5f former %.5f (sigma %.5f)\n", p, fr, fx, fo,
                      sigma);
        assert_true(fabs(fr - want) <= 5 * sigma);
        assert_true(fabs(fx - want) <= 5 * sigma);
        assert_true(fabs(fr - fo) <= 5 * sigma * M_SQRT2);
    }
}

/* --- sequential streams per worker (offset_increment) --------------------------- */

static void test_stream_start(void **state)
{
    const uint64_t len = 1024 * MIB;
    struct iof_line l = line_mk(4 * KIB, 100, 0, 0, 0);
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    /* bytes: i x 64m, wrapping at 1g */
    assert_int_equal(dyn_gen_stream_start(len, 64 * MIB, false, 0), 0);
    assert_int_equal(dyn_gen_stream_start(len, 64 * MIB, false, 3), 192 * MIB);
    assert_int_equal(dyn_gen_stream_start(len, 64 * MIB, false, 16), 0);
    assert_int_equal(dyn_gen_stream_start(len, 64 * MIB, false, 17), 64 * MIB);
    assert_int_equal(dyn_gen_stream_start(len, 768 * MIB, false, 2), 512 * MIB);
    /* percent of the range: 25 % of 4 000 KiB steps 1 000 KiB */
    assert_int_equal(dyn_gen_stream_start(4000 * KIB, 25, true, 1), 1000 * KIB);
    assert_int_equal(dyn_gen_stream_start(4000 * KIB, 25, true, 3), 3000 * KIB);
    assert_int_equal(dyn_gen_stream_start(4000 * KIB, 25, true, 4), 0);
    assert_int_equal(dyn_gen_stream_start(4000 * KIB, 100, true, 7), 0);
    assert_int_equal(dyn_gen_stream_start(4000 * KIB, 0, true, 7), 0);
    /* huge products do not overflow */
    assert_int_equal(dyn_gen_stream_start(3 * TIB, 2 * TIB, false, 1ULL << 40), 2 * TIB);

    /* A seek to an unaligned offset: the stream starts at the next aligned
     * one, goes on sequentially and wraps to the range start. */
    spec_mk(&s, "seq", &l, 1);
    assert_int_equal(dyn_gen_init(&g, &s, 30), 0);
    dyn_gen_region_init(&r, &g, 1 * MIB, 1 * MIB + 64 * KIB, 4096);
    dyn_gen_region_seek(&r, 52 * KIB + 512);
    for (uint64_t want = 56; want < 64; want += 4) {
        dyn_gen_next(&g, &r, &d);
        assert_int_equal(d.offset, 1 * MIB + want * KIB);
    }
    dyn_gen_next(&g, &r, &d);
    assert_int_equal(d.offset, 1 * MIB);
}

/* --- dyn_gen_check / dyn_gen_init ------------------------------------------------------ */

static void test_check(void **state)
{
    struct iof_line l[2] = {line_mk(4 * KIB, 50, 50, 100, 0), line_mk(4 * KIB, 50, 50, 100, 0)};
    struct iof_spec s;
    struct dyn_gen_region r;
    struct iof_diag diag;

    (void)state;
    spec_mk(&s, "My Spec", l, 2);
    dyn_gen_region_init(&r, NULL, 0, 64 * KIB, 4096);
    assert_int_equal(dyn_gen_check(&s, &r, &diag), 0);

    /* size == region fits; one byte more does not */
    l[1].size = 64 * KIB;
    assert_int_equal(dyn_gen_check(&s, &r, &diag), 0);
    l[1].size = 68 * KIB;
    memset(&diag, 0, sizeof(diag));
    assert_int_equal(dyn_gen_check(&s, &r, &diag), IOF_EALIGN);
    print_message("size > region: %s\n", diag.msg);
    assert_non_null(strstr(diag.msg, "My Spec"));
    assert_non_null(strstr(diag.msg, "line 1"));
    assert_int_equal(dyn_gen_check(&s, &r, NULL), IOF_EALIGN); /* NULL diag is fine */

    /* size not a multiple of min_align */
    l[1].size = 6000;
    memset(&diag, 0, sizeof(diag));
    assert_int_equal(dyn_gen_check(&s, &r, &diag), IOF_EALIGN);
    print_message("size %% min_align: %s\n", diag.msg);
    assert_non_null(strstr(diag.msg, "My Spec"));
    assert_non_null(strstr(diag.msg, "line 1"));

    /* align not a multiple of min_align, on line 0 this time */
    l[1].size = 4 * KIB;
    l[0].align = 1000;
    memset(&diag, 0, sizeof(diag));
    assert_int_equal(dyn_gen_check(&s, &r, &diag), IOF_EALIGN);
    print_message("align %% min_align: %s\n", diag.msg);
    assert_non_null(strstr(diag.msg, "My Spec"));
    assert_non_null(strstr(diag.msg, "line 0"));

    /* a multiple of min_align is fine; align 0 means the transfer size */
    l[0].align = 8 * KIB;
    assert_int_equal(dyn_gen_check(&s, &r, &diag), 0);
    l[0].align = 0;
    assert_int_equal(dyn_gen_check(&s, &r, &diag), 0);

    /* with min_align 512 (and align 0 = size), 6000 is still not a multiple;
     * 6144 is */
    dyn_gen_region_init(&r, NULL, 0, 64 * KIB, 512);
    l[0].size = 6000;
    assert_int_equal(dyn_gen_check(&s, &r, NULL), IOF_EALIGN);
    l[0].size = 6144;
    assert_int_equal(dyn_gen_check(&s, &r, NULL), 0);
}

static void test_init_rejects(void **state)
{
    struct iof_line l[DYN_GEN_MAX_LINES + 1];
    struct iof_spec s;
    struct dyn_gen g;

    (void)state;
    for (int i = 0; i <= DYN_GEN_MAX_LINES; i++)
        l[i] = line_mk(4 * KIB, 0, 50, 100, 0);
    spec_mk(&s, "zeros", l, 3);
    assert_int_equal(dyn_gen_init(&g, &s, 1), -EINVAL);
    spec_mk(&s, "empty", l, 0);
    assert_int_equal(dyn_gen_init(&g, &s, 1), -EINVAL);
    l[2].share = 1;
    spec_mk(&s, "one", l, 3);
    assert_int_equal(dyn_gen_init(&g, &s, 1), 0);
    for (int i = 0; i <= DYN_GEN_MAX_LINES; i++)
        l[i].share = 1;
    spec_mk(&s, "max", l, DYN_GEN_MAX_LINES);
    assert_int_equal(dyn_gen_init(&g, &s, 1), 0);
    spec_mk(&s, "too many", l, DYN_GEN_MAX_LINES + 1);
    assert_int_equal(dyn_gen_init(&g, &s, 1), -EINVAL);
}

static void test_max_lines_uniform(void **state)
{
    /* 64 equal lines: every line is drawn, and the last one too (the
     * cumulative search reaches the end of the table). */
    struct iof_line l[DYN_GEN_MAX_LINES];
    uint64_t count[DYN_GEN_MAX_LINES] = {0};
    struct iof_spec s;
    struct dyn_gen g;
    struct dyn_gen_region r;
    struct dyn_io_desc d;

    (void)state;
    for (int i = 0; i < DYN_GEN_MAX_LINES; i++)
        l[i] = line_mk(512 * (uint64_t)(i + 1), 1, 50, 100, 0);
    spec_mk(&s, "64", l, DYN_GEN_MAX_LINES);
    assert_int_equal(dyn_gen_init(&g, &s, 18), 0);
    dyn_gen_region_init(&r, &g, 0, 1 * TIB, 512);
    for (int i = 0; i < 640000; i++) {
        dyn_gen_next(&g, &r, &d);
        assert_int_equal(d.size, l[d.line].size);
        count[d.line]++;
    }
    for (int i = 0; i < DYN_GEN_MAX_LINES; i++)
        assert_true(count[i] > 9000 && count[i] < 11000); /* expect 10000, sigma 99 */
}

/* random_map once_per_pass (fio's random map): a pass over a region's n
 * slots touches every slot exactly once, the next pass again in another
 * order; only random I/Os advance the pass. Regions of odd slot counts
 * (cycle-walking past n) and of a power of two. */
static void test_once_per_pass(void **state)
{
    static const uint64_t sizes[] = {1 * MIB, 1 * MIB + 4 * KIB * 37, 3 * MIB + 4 * KIB};
    (void)state;
    for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
        struct iof_line l = line_mk(4 * KIB, 100, 50, 100, 0);
        struct iof_spec s;
        struct dyn_gen g;
        struct dyn_gen_region r;
        uint64_t n = sizes[t] / (4 * KIB);
        uint8_t seen[1024];
        uint64_t first[8]; /* some offsets of passes 0 and 1 */

        l.random_once = true;
        spec_mk(&s, "once", &l, 1);
        assert_int_equal(dyn_gen_init(&g, &s, 42 + t), 0);
        dyn_gen_region_init(&r, &g, 8 * MIB, 8 * MIB + sizes[t], 512);
        assert_int_equal(r.line[0].slots, n);
        assert_true(n <= sizeof(seen));
        for (int pass = 0; pass < 3; pass++) {
            memset(seen, 0, sizeof(seen));
            for (uint64_t i = 0; i < n; i++) {
                struct dyn_io_desc io;
                dyn_gen_next(&g, &r, &io);
                assert_int_equal((io.offset - 8 * MIB) % (4 * KIB), 0);
                assert_true(io.offset + io.size <= 8 * MIB + sizes[t]);
                seen[(io.offset - 8 * MIB) / (4 * KIB)]++;
                if (i < 8 && pass < 2)
                    first[pass * 4 + i / 2] = io.offset;
            }
            for (uint64_t k = 0; k < n; k++)
                assert_int_equal(seen[k], 1);
        }
        assert_true(memcmp(first, first + 4, 4 * sizeof(first[0]))); /* a new order */
        printf("once_per_pass: %" PRIu64 " slots, 3 passes, each slot once per pass\n", n);
    }
    /* half the I/Os sequential: the random half still covers each slot once */
    {
        struct iof_line l = line_mk(4 * KIB, 100, 100, 50, 0);
        struct iof_spec s;
        struct dyn_gen g;
        struct dyn_gen_region r;
        uint8_t seen[256] = {0};
        uint64_t nrand = 0;
        l.random_once = true;
        spec_mk(&s, "half", &l, 1);
        assert_int_equal(dyn_gen_init(&g, &s, 7), 0);
        dyn_gen_region_init(&r, &g, 0, 1 * MIB, 512);
        while (nrand < 256) {
            struct dyn_io_desc io;
            uint64_t before = r.line[0].pass_done;
            dyn_gen_next(&g, &r, &io);
            if (r.line[0].pass_done != before || (before == 256 && r.line[0].pass_done == 1)) {
                seen[io.offset / (4 * KIB)]++;
                nrand++;
            }
        }
        for (size_t k = 0; k < 256; k++)
            assert_int_equal(seen[k], 1);
    }
}

/* dyn_gen_pass_slot is a permutation of [0, n) for any key. */
static void test_pass_slot_permutation(void **state)
{
    (void)state;
    for (uint64_t n = 1; n < 300; n += 7) {
        unsigned bits = n > 1 ? 64u - (unsigned)__builtin_clzll(n - 1) : 1;
        uint64_t mask = (1ull << bits) - 1;
        for (uint64_t key = 0; key < 4; key++) {
            uint8_t seen[300] = {0};
            for (uint64_t i = 0; i < n; i++)
                seen[dyn_gen_pass_slot(i, n, key * 0x9e3779b97f4a7c15ULL, mask, (bits + 1) / 2)]++;
            for (uint64_t k = 0; k < n; k++)
                assert_int_equal(seen[k], 1);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_mix_70),
        cmocka_unit_test(test_read_mix_extremes),
        cmocka_unit_test(test_share_weights),
        cmocka_unit_test(test_share_single_line),
        cmocka_unit_test(test_share_burst),
        cmocka_unit_test(test_share_mixed_bursts),
        cmocka_unit_test(test_random_pct),
        cmocka_unit_test(test_align_random),
        cmocka_unit_test(test_align_zero),
        cmocka_unit_test(test_uniformity),
        cmocka_unit_test(test_seq_wrap),
        cmocka_unit_test(test_full_region_random),
        cmocka_unit_test(test_burst_delay),
        cmocka_unit_test(test_burst_delay_per_line),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_init_rejects),
        cmocka_unit_test(test_max_lines_uniform),
        cmocka_unit_test(test_threshold_exact),
        cmocka_unit_test(test_one_draw_per_decision),
        cmocka_unit_test(test_pct_sweep_unchanged),
        cmocka_unit_test(test_stream_start),
        cmocka_unit_test(test_once_per_pass),
        cmocka_unit_test(test_pass_slot_permutation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
