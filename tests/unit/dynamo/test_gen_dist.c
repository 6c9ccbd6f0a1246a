/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_gen_dist.c - dynamo/gen: skewed random offsets (a line's
 * "distribution", fio's random_distribution): zipf, pareto, normal and
 * zoned histograms against their analytical distributions, the scatter
 * permutation, alignment and bounds, determinism; and the parser of the
 * distribution text (common/spec.h).
 *
 * Tolerance: every histogram bucket's count must lie within 5 sigma of its
 * expectation, sigma = sqrt(n p (1 - p)) the binomial deviation of a bucket
 * of probability p over n = 10^6 draws. That is the bound pure sampling
 * noise respects (a correct generator misses it with probability < 6e-7
 * per bucket; the seeds are fixed, so a run is repeatable), and it is tight
 * where it matters: a bucket holding >= 1 % of the draws must be within
 * 5 % of its expectation (>= 10 %: within 1.5 %), far finer than the
 * difference between two thetas 0.05 apart or between an exact zipf and
 * fio's approximation of it. Each test prints its largest deviation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/spec.h"
#include "dynamo/gen.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NDRAWS 1000000
#define BS 4096ull
#define MAXB 64

/* P(value < m) of the distribution under test. */
typedef double (*cdf_fn)(uint64_t m, uint64_t n, const struct iof_dist_cfg *d);

struct hist {
    uint64_t bounds[MAXB + 1]; /* bucket b: bounds[b] <= value < bounds[b+1] */
    size_t nb;
    uint64_t count[MAXB];
};

/* Draws NDRAWS random 4k I/Os of `dist` over n slots (a region that does not
 * start at 0) and buckets each one's rank (unscattered) or slot. Asserts
 * every offset is aligned and inside the region. */
static void sample(const char *dist, uint64_t n, bool ranks, struct hist *h, uint64_t seed)
{
    struct iof_line line = {.size = BS, .share = 100, .read_pct = 100, .random_pct = 100};
    struct iof_spec spec = {.name = "d", .lines = &line, .nlines = 1};
    struct dyn_gen g;
    struct dyn_gen_region r;
    const uint64_t start = 7 * BS, end = start + n * BS;

    assert_int_equal(iof_dist_parse(dist, &line.dist, NULL, 0), 0);
    assert_int_equal(dyn_gen_init(&g, &spec, seed), 0);
    dyn_gen_region_init(&r, &g, start, end, 512);
    assert_int_equal(r.line[0].slots, n);
    memset(h->count, 0, sizeof(h->count));
    for (int i = 0; i < NDRAWS; i++) {
        struct dyn_io_desc d;
        uint64_t v, lo = 0, hi = h->nb;
        dyn_gen_next(&g, &r, &d);
        assert_true(d.offset >= start && d.offset + BS <= end);
        assert_int_equal((d.offset - start) % BS, 0);
        v = (d.offset - start) / BS;
        if (ranks)
            v = dyn_gen_unscatter(v, n);
        while (hi - lo > 1) { /* bounds[lo] <= v < bounds[hi] */
            uint64_t mid = (lo + hi) / 2;
            if (v >= h->bounds[mid])
                lo = mid;
            else
                hi = mid;
        }
        h->count[lo]++;
    }
}

/* Every bucket within 5 sigma of the analytical count; prints the table's
 * largest deviation (in sigma, and relative for buckets >= 1 %). */
static void check(const char *what, const struct hist *h, uint64_t n, cdf_fn cdf,
                  const struct iof_dist_cfg *d)
{
    double worst_sigma = 0, worst_rel = 0;

    for (size_t b = 0; b < h->nb; b++) {
        double p = cdf(h->bounds[b + 1], n, d) - cdf(h->bounds[b], n, d);
        double e = p * NDRAWS, sd = sqrt(NDRAWS * p * (1 - p));
        double dev = fabs((double)h->count[b] - e);
        if (dev > 5 * sd + 1e-9)
            fail_msg("%s: bucket [%llu, %llu): %llu draws, expected %.1f (%.1f sigma)", what,
                     (unsigned long long)h->bounds[b], (unsigned long long)h->bounds[b + 1],
                     (unsigned long long)h->count[b], e, sd > 0 ? dev / sd : INFINITY);
        if (sd > 0 && dev / sd > worst_sigma)
            worst_sigma = dev / sd;
        if (p >= 0.01 && dev / e > worst_rel)
            worst_rel = dev / e;
    }
    printf("    %-34s %2zu buckets: worst %.2f sigma, %.2f %% of a bucket >= 1 %%\n", what, h->nb,
           worst_sigma, 100 * worst_rel);
}

/* ---- analytical distributions ---- */

/* Zipf over ranks 1..n: P(rank <= m) = H(m) / H(n), H(m) = sum k^-theta.
 * Exact sums (cached for the last n and theta). */
static double zipf_cdf(uint64_t m, uint64_t n, const struct iof_dist_cfg *d)
{
    static double *prefix;
    static uint64_t pn;
    static double ptheta;

    if (!prefix || pn != n || ptheta != d->param) {
        free(prefix);
        prefix = malloc((n + 1) * sizeof(*prefix));
        assert_non_null(prefix);
        prefix[0] = 0;
        for (uint64_t k = 1; k <= n; k++)
            prefix[k] = prefix[k - 1] + pow((double)k, -d->param);
        pn = n;
        ptheta = d->param;
    }
    return prefix[m] / prefix[n];
}

/* fio's pareto: rank = floor(n u^e), e = log h / log(1 - h):
 * P(rank < m) = (m / n)^(1/e). */
static double pareto_cdf(uint64_t m, uint64_t n, const struct iof_dist_cfg *d)
{
    double e = log(d->param) / log(1 - d->param);
    return pow((double)m / (double)n, 1 / e);
}

static double phi(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

/* Normal around n/2 with sigma = param % of n, cut to [0, n). */
static double normal_cdf(uint64_t m, uint64_t n, const struct iof_dist_cfg *d)
{
    double s = d->param / 100, lo = phi(-0.5 / s), hi = phi(0.5 / s);
    return (phi(((double)m / (double)n - 0.5) / s) - lo) / (hi - lo);
}

/* Zones in order: zone i holds access[i] % of the draws, uniform over slots
 * [floor(n R_i / 100), floor(n R_(i+1) / 100)), R_i the range % before it. */
static double zoned_cdf(uint64_t m, uint64_t n, const struct iof_dist_cfg *d)
{
    unsigned r = 0;
    double p = 0;

    for (size_t i = 0; i < d->nzones; i++) {
        uint64_t lo = n * r / 100, hi = n * (r + d->range[i]) / 100;
        r += d->range[i];
        if (m >= hi)
            p += d->access[i] / 100.0;
        else if (m > lo)
            p += d->access[i] / 100.0 * (double)(m - lo) / (double)(hi - lo);
    }
    return p;
}

/* ---- histogram tests ---- */

static void set_bounds(struct hist *h, const uint64_t *b, size_t nb1)
{
    memcpy(h->bounds, b, nb1 * sizeof(*b));
    h->nb = nb1 - 1;
}

static void test_zipf(void **state)
{
    static const char *const thetas[] = {"zipf:0.8", "zipf:1", "zipf:1.2", "zipf:2.5"};
    const uint64_t small[] = {0, 1, 2, 3, 4, 6, 10, 20, 50, 100, 300, 1000};
    struct hist h;
    (void)state;

    for (size_t t = 0; t < sizeof(thetas) / sizeof(thetas[0]); t++) {
        struct iof_dist_cfg d;
        assert_int_equal(iof_dist_parse(thetas[t], &d, NULL, 0), 0);
        set_bounds(&h, small, sizeof(small) / sizeof(small[0]));
        sample(thetas[t], 1000, true, &h, 11 + t);
        check(thetas[t], &h, 1000, zipf_cdf, &d);
    }

    /* A large range: 2^24 + 3 slots (64 GiB of 4k blocks, not a power of
     * two, so the scatter walks its cycle), buckets growing 4x. */
    {
        const uint64_t n = (1ull << 24) + 3;
        struct iof_dist_cfg d;
        size_t k = 0;
        h.bounds[k++] = 0;
        for (uint64_t b = 1; b < n; b *= 4)
            h.bounds[k++] = b;
        h.bounds[k++] = n;
        h.nb = k - 1;
        assert_int_equal(iof_dist_parse("zipf:1.2", &d, NULL, 0), 0);
        sample("zipf:1.2", n, true, &h, 5);
        check("zipf:1.2 over 2^24+3 slots", &h, n, zipf_cdf, &d);
    }
}

static void test_pareto(void **state)
{
    static const char *const hs[] = {"pareto:0.2", "pareto:0.5", "pareto:0.05"};
    const uint64_t n = 1000003;
    struct hist h;
    (void)state;

    for (size_t t = 0; t < sizeof(hs) / sizeof(hs[0]); t++) {
        struct iof_dist_cfg d;
        size_t k = 0;
        h.bounds[k++] = 0;
        h.bounds[k++] = n / 1000;
        h.bounds[k++] = n / 100;
        for (int i = 1; i <= 10; i++)
            h.bounds[k++] = n * (uint64_t)i / 10;
        h.nb = k - 1;
        assert_int_equal(iof_dist_parse(hs[t], &d, NULL, 0), 0);
        sample(hs[t], n, true, &h, 21 + t);
        check(hs[t], &h, n, pareto_cdf, &d);
    }
    /* The 80/20 rule of pareto:0.2, read off the same figures. */
    {
        struct iof_dist_cfg d;
        assert_int_equal(iof_dist_parse("pareto:0.2", &d, NULL, 0), 0);
        assert_true(fabs(pareto_cdf(n / 5, n, &d) - 0.8) < 1e-5);
    }
}

static void test_normal(void **state)
{
    static const char *const ss[] = {"normal:10", "normal:2.5", "normal:60"};
    const uint64_t n = 100003;
    struct hist h;
    (void)state;

    for (size_t t = 0; t < sizeof(ss) / sizeof(ss[0]); t++) {
        struct iof_dist_cfg d;
        for (int i = 0; i <= 40; i++)
            h.bounds[i] = n * (uint64_t)i / 40;
        h.nb = 40;
        assert_int_equal(iof_dist_parse(ss[t], &d, NULL, 0), 0);
        sample(ss[t], n, true, &h, 31 + t);
        check(ss[t], &h, n, normal_cdf, &d);
    }
}

/* Zoned: zones are where they are written (no scatter): each zone's share
 * and the uniformity inside it, checked on five sub-buckets per zone. */
static void test_zoned(void **state)
{
    static const char *const zs[] = {"zoned:60/10:30/20:10/70", "zoned:0/50:100/50",
                                     "zoned:4/10:30/1:10/29:20/5:9/25:20/10:7/20", "zoned:100/100"};
    static const uint64_t ns[] = {1000, 12347};
    struct hist h;
    (void)state;

    for (size_t t = 0; t < sizeof(zs) / sizeof(zs[0]); t++) {
        for (size_t ni = 0; ni < 2; ni++) {
            struct iof_dist_cfg d;
            uint64_t n = ns[ni];
            unsigned r = 0;
            char what[96];
            size_t k = 0;
            assert_int_equal(iof_dist_parse(zs[t], &d, NULL, 0), 0);
            for (size_t i = 0; i < d.nzones; i++) {
                uint64_t lo = n * r / 100, hi = n * (r + d.range[i]) / 100;
                for (int s = 0; s < 5; s++)
                    if (k == 0 || lo + (hi - lo) * (uint64_t)s / 5 > h.bounds[k - 1])
                        h.bounds[k++] = lo + (hi - lo) * (uint64_t)s / 5;
                r += d.range[i];
            }
            h.bounds[k++] = n;
            h.nb = k - 1;
            sample(zs[t], n, false, &h, 41 + t);
            snprintf(what, sizeof(what), "%.22s%s n=%llu", zs[t], strlen(zs[t]) > 22 ? ".." : "",
                     (unsigned long long)n);
            check(what, &h, n, zoned_cdf, &d);
        }
    }
}

/* ---- scatter, bounds, determinism ---- */

static void test_scatter_bijective(void **state)
{
    static const uint64_t ns[] = {1, 2, 3, 5, 8, 9, 1000, 4097, 65536, 100003};
    (void)state;

    for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
        uint64_t n = ns[t];
        unsigned char *seen = calloc(n, 1);
        assert_non_null(seen);
        for (uint64_t x = 0; x < n; x++) {
            uint64_t y = dyn_gen_scatter(x, n);
            assert_true(y < n);
            assert_false(seen[y]);
            seen[y] = 1;
            assert_int_equal(dyn_gen_unscatter(y, n), x);
        }
        free(seen);
    }
    /* Large n (no table): round trips, and the hottest ranks are spread
     * over the range, not packed at its start. */
    {
        const uint64_t n = (1ull << 40) + 12345;
        double mean = 0;
        for (uint64_t x = 0; x < 1000; x++) {
            uint64_t y = dyn_gen_scatter(x, n);
            assert_true(y < n);
            assert_int_equal(dyn_gen_unscatter(y, n), x);
            mean += (double)y / (double)n / 1000;
        }
        assert_true(mean > 0.4 && mean < 0.6);
    }
}

/* Every distribution keeps offsets aligned and inside the range, also with
 * an alignment other than the size, a range not starting at a multiple of
 * it, and ranges of 1, 2 and 3 slots (zones then get no slot of their own). */
static void test_bounds_alignment(void **state)
{
    static const char *const ds[] = {"zipf:1.2",
                                     "zipf:0.5",
                                     "pareto:0.2",
                                     "pareto:0.9",
                                     "normal:1",
                                     "normal:100",
                                     "zoned:60/10:30/20:10/70",
                                     "zoned:1/1:1/1:98/98"};
    static const uint64_t sizes[] = {1, 2, 3, 17, 100000};
    (void)state;

    for (size_t t = 0; t < sizeof(ds) / sizeof(ds[0]); t++) {
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
            struct iof_line line = {
                .size = BS, .share = 100, .read_pct = 50, .random_pct = 100, .align = 2 * BS};
            struct iof_spec spec = {.name = "b", .lines = &line, .nlines = 1};
            struct dyn_gen g;
            struct dyn_gen_region r;
            const uint64_t start = 3 * BS, end = start + (sizes[si] - 1) * 2 * BS + BS + 512;
            assert_int_equal(iof_dist_parse(ds[t], &line.dist, NULL, 0), 0);
            assert_int_equal(dyn_gen_init(&g, &spec, 7), 0);
            dyn_gen_region_init(&r, &g, start, end, 512);
            assert_int_equal(r.line[0].slots, sizes[si]);
            for (int i = 0; i < 20000; i++) {
                struct dyn_io_desc d;
                dyn_gen_next(&g, &r, &d);
                assert_true(d.offset >= start);
                assert_true(d.offset + d.size <= end);
                assert_int_equal((d.offset - start) % (2 * BS), 0);
            }
        }
    }
}

static void test_determinism(void **state)
{
    struct iof_line line = {.size = BS, .share = 100, .read_pct = 70, .random_pct = 100};
    struct iof_spec spec = {.name = "z", .lines = &line, .nlines = 1};
    struct dyn_gen a, b;
    struct dyn_gen_region ra, rb;
    (void)state;

    assert_int_equal(iof_dist_parse("zipf:1.1", &line.dist, NULL, 0), 0);
    assert_int_equal(dyn_gen_init(&a, &spec, 99), 0);
    assert_int_equal(dyn_gen_init(&b, &spec, 99), 0);
    dyn_gen_region_init(&ra, &a, 0, 1ull << 30, 512);
    dyn_gen_region_init(&rb, &b, 0, 1ull << 30, 512);
    for (int i = 0; i < 10000; i++) {
        struct dyn_io_desc da, db;
        dyn_gen_next(&a, &ra, &da);
        dyn_gen_next(&b, &rb, &db);
        assert_int_equal(da.offset, db.offset);
        assert_int_equal(da.write, db.write);
    }
}

/* Sequential I/O of a skewed line is still sequential. */
static void test_sequential_unaffected(void **state)
{
    struct iof_line line = {.size = BS, .share = 100, .read_pct = 100, .random_pct = 0};
    struct iof_spec spec = {.name = "s", .lines = &line, .nlines = 1};
    struct dyn_gen g;
    struct dyn_gen_region r;
    (void)state;

    assert_int_equal(iof_dist_parse("zoned:90/10:10/90", &line.dist, NULL, 0), 0);
    assert_int_equal(dyn_gen_init(&g, &spec, 1), 0);
    dyn_gen_region_init(&r, &g, 0, 100 * BS, 512);
    for (uint64_t i = 0; i < 250; i++) {
        struct dyn_io_desc d;
        dyn_gen_next(&g, &r, &d);
        assert_int_equal(d.offset, i % 100 * BS);
    }
}

/* ---- the text ---- */

static void test_parse(void **state)
{
    static const struct {
        const char *in, *label;
    } good[] = {
        {"uniform", "uniform"},
        {"zipf:1.2", "zipf:1.2"},
        {"zipf:1", "zipf:1"},
        {"zipf:10", "zipf:10"},
        {"pareto:0.2", "pareto:0.2"},
        {"pareto:.5", "pareto:0.5"},
        {"normal:100", "normal:100"},
        {"normal:0.5", "normal:0.5"},
        {"zoned:100/100", "zoned:100/100"},
        {"zoned:60/10:30/20:10/70", "zoned:60/10:30/20:10/70"},
        {"zoned:0/99:100/1", "zoned:0/99:100/1"},
    };
    static const char *const bad[] = {
        "",
        "random",
        "zipf",
        "zipf:",
        "zipf:0",
        "zipf:10.01",
        "zipf:-1",
        "zipf:1e1",
        "zipf:inf",
        "zipf:nan",
        "zipf:0x1",
        "zipf:1.2:0.5",
        "zipf:1..2",
        "pareto:0",
        "pareto:1",
        "pareto:1.5",
        "normal:0",
        "normal:100.5",
        "zoned:",
        "zoned:100",
        "zoned:100/",
        "zoned:50/50",
        "zoned:60/10:40/80",
        "zoned:101/100",
        "zoned:50/0:50/100",
        "zoned:100/100:",
        "zoned:100/100,100/100",
        "zoned:1000/100",
        "zoned: 100/100",
        "ZIPF:1.2",
    };
    char err[256], label[IOF_DIST_LABEL_MAX], many[IOF_DIST_LABEL_MAX + 64];
    struct iof_dist_cfg d;
    size_t o;
    (void)state;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (iof_dist_parse(good[i].in, &d, err, sizeof(err)) != 0)
            fail_msg("'%s' refused: %s", good[i].in, err);
        iof_dist_label(&d, label, sizeof(label));
        assert_string_equal(label, good[i].label);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (iof_dist_parse(bad[i], &d, err, sizeof(err)) != -EINVAL)
            fail_msg("'%s' accepted", bad[i]);
        assert_true(err[0] != '\0');
        assert_null(strchr(err, '\n'));
    }
    /* At most IOF_DIST_MAX_ZONES zones; that many fit a label buffer. */
    o = (size_t)snprintf(many, sizeof(many), "zoned");
    for (int i = 0; i < IOF_DIST_MAX_ZONES; i++)
        o += (size_t)snprintf(many + o, sizeof(many) - o, ":%d/%d", i < 4 ? 25 : 0,
                              i < 4 ? 4 : (i == IOF_DIST_MAX_ZONES - 1 ? 100 - 4 * 4 - 27 : 1));
    assert_int_equal(iof_dist_parse(many, &d, err, sizeof(err)), 0);
    assert_int_equal(d.nzones, IOF_DIST_MAX_ZONES);
    iof_dist_label(&d, label, sizeof(label));
    assert_string_equal(label, many);
    snprintf(many + o, sizeof(many) - o, ":0/1");
    assert_int_equal(iof_dist_parse(many, &d, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "more than 32 zones");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_scatter_bijective),
        cmocka_unit_test(test_bounds_alignment),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_sequential_unaffected),
        cmocka_unit_test(test_zipf),
        cmocka_unit_test(test_pareto),
        cmocka_unit_test(test_normal),
        cmocka_unit_test(test_zoned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
