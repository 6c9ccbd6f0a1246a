/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_hist.c - common/hist: layout, error bound, merge, wire format.
 *
 * Random samples come from a fixed-seed splitmix64 so every run sees the same
 * data. The error-bound test prints the measured worst relative error per
 * distribution and percentile. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "common/hist.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TOP_NS ((uint64_t)1 << (IOF_HIST_MAX_BITS + 1)) /* first overflow value */
#define LAST_BUCKET (IOF_HIST_BUCKETS - 1)
#define BOUND (1.0 / (2.0 * IOF_HIST_SUB)) /* the 0.78 % hist.h promises */
#define NSAMPLES 1000000

struct rng {
    uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so log() is safe. */
static double rng_unit(struct rng *r)
{
    return ((double)(rng_next(r) >> 11) + 0.5) * 0x1p-53;
}

static double rng_normal(struct rng *r)
{
    return sqrt(-2.0 * log(rng_unit(r))) * cos(2.0 * M_PI * rng_unit(r));
}

static uint64_t to_ns(double v)
{
    return v < 1.0 ? 1 : (uint64_t)llround(v);
}

static struct iof_hist *hist_new(void)
{
    struct iof_hist *h = test_malloc(sizeof(*h));
    iof_hist_reset(h);
    return h;
}

/* ---- layout -------------------------------------------------------------- */

static void check_value(uint64_t v)
{
    unsigned i = iof_hist_index(v);
    uint64_t lo, w;

    assert_true(i < IOF_HIST_BUCKETS);
    lo = iof_hist_bucket_low(i);
    w = iof_hist_bucket_width(i);
    assert_true(v >= lo);
    if (v < TOP_NS)
        assert_true(v - lo < w);
    else
        assert_int_equal(i, LAST_BUCKET);
}

static void test_layout_buckets(void **state)
{
    unsigned i;
    (void)state;

    assert_int_equal(IOF_HIST_BUCKETS, 2432);
    assert_int_equal(iof_hist_bucket_low(0), 0);
    for (i = 0; i < IOF_HIST_BUCKETS; i++) {
        uint64_t lo = iof_hist_bucket_low(i), w = iof_hist_bucket_width(i);
        assert_true(w >= 1);
        if (i < 2 * IOF_HIST_SUB) {
            assert_int_equal(lo, i);
            assert_int_equal(w, 1);
        } else {
            assert_true(w * IOF_HIST_SUB <= lo);
        }
        if (i + 1 < IOF_HIST_BUCKETS)
            assert_int_equal(lo + w, iof_hist_bucket_low(i + 1));
        else
            assert_int_equal(lo + w, TOP_NS);
        assert_int_equal(iof_hist_index(lo), i);
        assert_int_equal(iof_hist_index(lo + w - 1), i);
    }
    assert_int_equal(iof_hist_bucket_low(IOF_HIST_BUCKETS), 0);
    assert_int_equal(iof_hist_bucket_width(IOF_HIST_BUCKETS), 0);
}

static void test_layout_values(void **state)
{
    struct rng r = {1};
    uint64_t v;
    unsigned k;
    (void)state;

    for (v = 0; v < 2 * IOF_HIST_SUB; v++)
        assert_int_equal(iof_hist_index(v), v);
    for (v = 0; v < (1u << 18); v++)
        check_value(v);
    for (k = 1; k < 64; k++) {
        uint64_t p = (uint64_t)1 << k;
        check_value(p - 1);
        check_value(p);
        check_value(p + 1);
        check_value(p + (p >> 1));
    }
    for (k = 0; k < 1000000; k++) {
        uint64_t x = rng_next(&r);
        check_value(x >> (x & 63));
    }
    assert_int_equal(iof_hist_index(TOP_NS - 1), LAST_BUCKET);
    assert_int_equal(iof_hist_index(TOP_NS), LAST_BUCKET);
    assert_int_equal(iof_hist_index(UINT64_MAX), LAST_BUCKET);
}

/* ---- percentiles and the error bound ------------------------------------- */

static void test_percentile_basics(void **state)
{
    struct iof_hist *h = hist_new();
    uint64_t v;
    (void)state;

    assert_int_equal(iof_hist_percentile(h, 0.5), 0);
    assert_true(iof_hist_mean(h) == 0.0);

    for (v = 1; v <= 100; v++)
        iof_hist_record(h, v);
    assert_int_equal(iof_hist_percentile(h, 0.5), 50);
    assert_int_equal(iof_hist_percentile(h, 0.505), 51);
    assert_int_equal(iof_hist_percentile(h, 0.001), 1);
    assert_int_equal(iof_hist_percentile(h, 0.999), 100);
    assert_int_equal(iof_hist_percentile(h, 0.0), 1);
    assert_int_equal(iof_hist_percentile(h, -3.0), 1);
    assert_int_equal(iof_hist_percentile(h, NAN), 1);
    assert_int_equal(iof_hist_percentile(h, 1.0), 100);
    assert_int_equal(iof_hist_percentile(h, 7.0), 100);
    assert_true(iof_hist_mean(h) == 50.5);

    /* One value: every percentile is clamped to it, even in the overflow bucket. */
    iof_hist_reset(h);
    iof_hist_record(h, 123456789);
    assert_int_equal(iof_hist_percentile(h, 0.5), 123456789);
    assert_int_equal(iof_hist_percentile(h, 0.99), 123456789);
    iof_hist_reset(h);
    iof_hist_record(h, UINT64_MAX / 3);
    assert_int_equal(iof_hist_percentile(h, 0.5), UINT64_MAX / 3);
    assert_int_equal(h->max_ns, UINT64_MAX / 3);
    test_free(h);
}

static uint64_t gen_uniform(struct rng *r)
{
    return 20 + rng_next(r) % 5000000; /* 20 ns .. 5 ms, covers the exact range */
}

static uint64_t gen_exponential(struct rng *r)
{
    return to_ns(-log(rng_unit(r)) * 250e3); /* mean 250 us */
}

static uint64_t gen_lognormal(struct rng *r)
{
    return to_ns(exp(log(400e3) + 1.2 * rng_normal(r))); /* median 400 us */
}

static uint64_t gen_bimodal(struct rng *r)
{
    if (rng_next(r) % 10 < 8)
        return to_ns(150e3 + 15e3 * rng_normal(r)); /* cache hits */
    return to_ns(25e6 + 3e6 * rng_normal(r));       /* media */
}

static uint64_t gen_span(struct rng *r)
{
    return to_ns(100.0 * exp(rng_unit(r) * log(60e9 / 100.0))); /* 100 ns .. 60 s */
}

struct dist {
    const char *name;
    uint64_t (*gen)(struct rng *r);
};

static const struct dist dists[] = {
    {"uniform", gen_uniform}, {"exponential", gen_exponential}, {"lognormal", gen_lognormal},
    {"bimodal", gen_bimodal}, {"100ns-60s", gen_span},
};

static const double quantiles[] = {0.5, 0.9, 0.99, 0.999, 0.9999};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The exact percentile under the same rank definition: ceil(q*n)-th smallest. */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

static double rel_error(uint64_t got, uint64_t want)
{
    if (want == 0)
        return got == 0 ? 0.0 : INFINITY;
    return fabs((double)got - (double)want) / (double)want;
}

static void test_error_bound(void **state)
{
    uint64_t *s = test_malloc(NSAMPLES * sizeof(*s));
    struct iof_hist *h = hist_new();
    size_t d, i;
    (void)state;

    print_message("max relative error (bound %.4f%%):\n", 100.0 * BOUND);
    for (d = 0; d < sizeof(dists) / sizeof(dists[0]); d++) {
        struct rng r = {0x10f1ee7 + d};
        uint64_t sum = 0;
        double err[5], sweep = 0.0;
        int k;

        iof_hist_reset(h);
        for (i = 0; i < NSAMPLES; i++) {
            s[i] = dists[d].gen(&r);
            sum += s[i];
            iof_hist_record(h, s[i]);
        }
        qsort(s, NSAMPLES, sizeof(*s), cmp_u64);

        assert_int_equal(h->count, NSAMPLES);
        assert_int_equal(h->sum_ns, sum);
        assert_int_equal(h->min_ns, s[0]);
        assert_int_equal(h->max_ns, s[NSAMPLES - 1]);
        assert_true(iof_hist_mean(h) == (double)sum / (double)NSAMPLES);

        for (k = 0; k < 5; k++) {
            double q = quantiles[k];
            err[k] = rel_error(iof_hist_percentile(h, q), exact_percentile(s, NSAMPLES, q));
            assert_true(err[k] <= 0.01);
            assert_true(err[k] <= BOUND + 1e-12);
        }
        /* Every per-mille quantile, so the bound is not only met at the usual points. */
        for (k = 1; k < 1000; k++) {
            double q = k / 1000.0;
            double e = rel_error(iof_hist_percentile(h, q), exact_percentile(s, NSAMPLES, q));
            assert_true(e <= BOUND + 1e-12);
            if (e > sweep)
                sweep = e;
        }
        print_message("  %-12s p50 %.4f%%  p90 %.4f%%  p99 %.4f%%  p99.9 %.4f%%  p99.99 %.4f%%"
                      "  (all per-mille: %.4f%%)\n",
                      dists[d].name, 100 * err[0], 100 * err[1], 100 * err[2], 100 * err[3],
                      100 * err[4], 100 * sweep);
    }
    test_free(h);
    test_free(s);
}

/* ---- merge ----------------------------------------------------------------- */

static void test_merge(void **state)
{
    struct iof_hist *all = hist_new(), *part[3], *m = hist_new();
    struct rng r = {7};
    int i;
    (void)state;

    for (i = 0; i < 3; i++)
        part[i] = hist_new();
    /* part[2] stays empty: merging an empty histogram must change nothing. */
    for (i = 0; i < 200000; i++) {
        uint64_t x = rng_next(&r), v = x >> (x & 63);
        iof_hist_record(all, v);
        iof_hist_record(part[(x >> 8) & 1], v);
    }
    for (i = 0; i < 3; i++)
        iof_hist_merge(m, part[i]);
    assert_memory_equal(m, all, sizeof(*m));
    assert_int_equal(iof_hist_percentile(m, 0.99), iof_hist_percentile(all, 0.99));

    iof_hist_reset(m);
    iof_hist_merge(m, part[2]);
    iof_hist_reset(all);
    assert_memory_equal(m, all, sizeof(*m));

    for (i = 0; i < 3; i++)
        test_free(part[i]);
    test_free(all);
    test_free(m);
}

/* iof_hist_clear leaves exactly what iof_hist_reset does, so one scratch
 * histogram can be reused per message: here as the manager keeps a node's
 * latencies encoded (decode into the cleared scratch, merge, encode, clear),
 * interval after interval, against a plain merge of the same intervals. */
static void test_clear_reuse(void **state)
{
    struct iof_hist *all = hist_new(), *one = hist_new(), *scratch = hist_new();
    struct iof_hist *empty = hist_new(), *back = hist_new();
    struct rng r = {11};
    uint8_t *kept = NULL;
    size_t kept_len = 0;
    (void)state;

    for (int k = 0; k < 40; k++) {
        size_t max;
        long len;
        /* Intervals of different spreads, some far apart (widening the range). */
        unsigned shift = (unsigned)(rng_next(&r) % 30);
        iof_hist_clear(one);
        assert_memory_equal(one, empty, sizeof(*one));
        for (int i = 0; i < 500; i++)
            iof_hist_record(one, (rng_next(&r) >> (34 + rng_next(&r) % 20)) << shift);
        iof_hist_merge(all, one);
        if (kept_len)
            assert_int_equal(iof_hist_decode_add(scratch, kept, kept_len), 0);
        iof_hist_merge(scratch, one);
        max = iof_hist_encoded_max(scratch);
        kept = test_realloc(kept, max);
        len = iof_hist_encode(scratch, kept, max);
        assert_int_equal(len, (long)max);
        kept_len = (size_t)len;
        iof_hist_clear(scratch);
        assert_memory_equal(scratch, empty, sizeof(*scratch));
    }
    assert_int_equal(iof_hist_decode(back, kept, kept_len), 0);
    assert_memory_equal(back, all, sizeof(*all));
    /* Clearing an empty histogram keeps it empty. */
    iof_hist_clear(empty);
    iof_hist_reset(back);
    assert_memory_equal(empty, back, sizeof(*back));

    test_free(kept);
    test_free(back);
    test_free(empty);
    test_free(scratch);
    test_free(one);
    test_free(all);
}

/* ---- wire format ----------------------------------------------------------- */

/* The run form: exact length, identical histogram back (also merged into
 * an empty one, with its summary), one encoding, no overrun. */
static void roundtrip_runs(const struct iof_hist *h)
{
    size_t max = iof_hist_runs_encoded_len(h);
    uint8_t *buf = test_malloc(max + 1), *again = test_malloc(max + 1);
    struct iof_hist *out = hist_new();
    struct iof_hist_summary one;
    long len;

    buf[max] = 0xa5;
    len = iof_hist_encode_runs(h, buf, max);
    assert_int_equal(len, (long)max);
    assert_int_equal(buf[max], 0xa5);
    memset(out, 0x5a, sizeof(*out));
    assert_int_equal(iof_hist_decode_runs(out, buf, (size_t)len), 0);
    assert_memory_equal(out, h, sizeof(*h));
    assert_int_equal(iof_hist_encode_runs(out, again, max), len);
    assert_memory_equal(again, buf, (size_t)len);
    assert_int_equal(iof_hist_encode_runs(h, again, max - 1), -ENOBUFS);
    iof_hist_reset(out);
    assert_int_equal(iof_hist_decode_runs_add_summary(out, buf, (size_t)len, &one), 0);
    assert_memory_equal(out, h, sizeof(*h));
    assert_true(one.count == h->count && one.sum_ns == h->sum_ns && one.min_ns == h->min_ns &&
                one.max_ns == h->max_ns);
    test_free(out);
    test_free(again);
    test_free(buf);
}

static void roundtrip(const struct iof_hist *h)
{
    size_t max = iof_hist_encoded_max(h);
    uint8_t *buf = test_malloc(max + 1), *again = test_malloc(max + 1);
    struct iof_hist *out = hist_new();
    long len;

    buf[max] = 0xa5;
    len = iof_hist_encode(h, buf, max);
    assert_true(len > 0);
    assert_int_equal((size_t)len, max);
    assert_int_equal(buf[max], 0xa5);

    memset(out, 0x5a, sizeof(*out));
    assert_int_equal(iof_hist_decode(out, buf, (size_t)len), 0);
    assert_memory_equal(out, h, sizeof(*h));

    /* One encoding per histogram: re-encoding gives the same bytes. */
    assert_int_equal(iof_hist_encode(out, again, max), len);
    assert_memory_equal(again, buf, (size_t)len);

    memset(again, 0x77, max);
    assert_int_equal(iof_hist_encode(h, again, max - 1), -ENOBUFS);
    assert_int_equal(again[0], 0x77);

    test_free(out);
    test_free(again);
    test_free(buf);
    roundtrip_runs(h);
}

static void test_roundtrip_empty(void **state)
{
    struct iof_hist *h = hist_new();
    uint8_t buf[32];
    (void)state;

    roundtrip(h);
    assert_int_equal(iof_hist_encode(h, buf, sizeof(buf)), 14);
    assert_int_equal(iof_hist_encode(h, NULL, 0), -ENOBUFS);
    test_free(h);
}

static void test_roundtrip_one(void **state)
{
    struct iof_hist *h = hist_new();
    (void)state;

    iof_hist_record(h, 0);
    roundtrip(h);
    iof_hist_reset(h);
    iof_hist_record(h, 987654);
    roundtrip(h);
    iof_hist_reset(h);
    iof_hist_record(h, UINT64_MAX);
    roundtrip(h);
    test_free(h);
}

static void test_roundtrip_dense(void **state)
{
    struct iof_hist *h = hist_new();
    unsigned i, k;
    (void)state;

    for (i = 0; i < IOF_HIST_BUCKETS; i++)
        for (k = 0; k <= i % 7; k++)
            iof_hist_record(h, iof_hist_bucket_low(i) + k % iof_hist_bucket_width(i));
    iof_hist_record(h, UINT64_MAX);
    /* A count that needs a 9-byte varint. */
    h->buckets[300] += (uint64_t)1 << 62;
    h->count += (uint64_t)1 << 62;
    roundtrip(h);
    test_free(h);
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static size_t craft(uint8_t *buf, const uint64_t *f, size_t nf)
{
    size_t i, n = 0;
    for (i = 0; i < nf; i++)
        n += put_varint(buf + n, f[i]);
    return n;
}

#define CRAFT(buf, ...)                                                                            \
    craft(buf, (const uint64_t[]){__VA_ARGS__},                                                    \
          sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

/* True when decode refuses buf with IOF_EPROTO and leaves a reset histogram. */
static bool rejects(const uint8_t *buf, size_t len)
{
    struct iof_hist *h = hist_new(), *empty = hist_new();
    bool ok;

    memset(h, 0x5a, sizeof(*h));
    ok = iof_hist_decode(h, buf, len) == IOF_EPROTO && memcmp(h, empty, sizeof(*h)) == 0;
    test_free(empty);
    test_free(h);
    return ok;
}

static bool accepts(const uint8_t *buf, size_t len)
{
    struct iof_hist *h = hist_new();
    bool ok = iof_hist_decode(h, buf, len) == 0;
    test_free(h);
    return ok;
}

static void test_decode_rejects(void **state)
{
    /* Base message: 10 ns twice and 1000 ns once. */
    const unsigned i1000 = iof_hist_index(1000);
    const uint64_t top = iof_hist_bucket_low(LAST_BUCKET);
    uint8_t b[256];
    size_t n, cut;
    (void)state;

    n = CRAFT(b, 3, 1020, 10, 1000, 2, 10, 2, i1000 - 10, 1);
    assert_true(accepts(b, n));

    /* Truncated anywhere, including no input at all. */
    for (cut = 0; cut < n; cut++)
        assert_true(rejects(b, cut));
    assert_true(rejects(NULL, 0));

    /* Trailing bytes. */
    b[n] = 0;
    assert_true(rejects(b, n + 1));

    /* Varints: 11 bytes; a 10-byte min carrying a 65th bit (UINT64_MAX without
     * it); a non-minimal nnz. */
    memcpy(b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x00", 11);
    assert_true(rejects(b, 11));
    n = 0;
    b[n++] = 0;
    b[n++] = 0;
    memcpy(b + n, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x03", 10);
    n += 10;
    b[n++] = 0;
    b[n++] = 0;
    assert_true(rejects(b, n));
    b[n - 3] = 0x01;
    assert_true(accepts(b, n));
    n = CRAFT(b, 0, 0, UINT64_MAX, 0, 0);
    assert_true(accepts(b, n));
    b[n - 1] = 0x80;
    b[n] = 0x00;
    assert_true(rejects(b, n + 1));

    /* Bucket index out of range: as the first index, and reached by a delta. */
    n = CRAFT(b, 1, top, top, top, 1, IOF_HIST_BUCKETS, 1);
    assert_true(rejects(b, n));
    n = CRAFT(b, 1, top, top, top, 1, LAST_BUCKET, 1);
    assert_true(accepts(b, n));
    n = CRAFT(b, 2, 2 * top, top, top, 2, LAST_BUCKET, 1, 1, 1);
    assert_true(rejects(b, n));
    n = CRAFT(b, 3, 1020, 10, 1000, IOF_HIST_BUCKETS + 1, 10, 2, i1000 - 10, 1);
    assert_true(rejects(b, n));

    /* Indices not strictly increasing. */
    n = CRAFT(b, 3, 30, 10, 10, 2, 10, 2, 0, 1);
    assert_true(rejects(b, n));

    /* A listed bucket with count 0. */
    n = CRAFT(b, 3, 1020, 10, 1000, 3, 10, 2, 5, 0, i1000 - 15, 1);
    assert_true(rejects(b, n));

    /* Bucket sum != count: short, long, and equal only after 64-bit wrap-around. */
    n = CRAFT(b, 4, 1020, 10, 1000, 2, 10, 2, i1000 - 10, 1);
    assert_true(rejects(b, n));
    n = CRAFT(b, 2, 1020, 10, 1000, 2, 10, 2, i1000 - 10, 1);
    assert_true(rejects(b, n));
    n = CRAFT(b, 5, 50, 10, 1000, 3, 10, (uint64_t)1 << 63, 1, (uint64_t)1 << 63, i1000 - 11, 5);
    assert_true(rejects(b, n));

    /* min > max with values present, both inside the one bucket [1000, 1008). */
    n = CRAFT(b, 2, 2006, 1001, 1005, 1, i1000, 2);
    assert_true(accepts(b, n));
    n = CRAFT(b, 2, 2006, 1005, 1001, 1, i1000, 2);
    assert_true(rejects(b, n));

    /* min or max outside the first or last non-empty bucket. */
    n = CRAFT(b, 3, 1020, 11, 1000, 2, 10, 2, i1000 - 10, 1);
    assert_true(rejects(b, n));
    n = CRAFT(b, 3, 1020, 10, 2000, 2, 10, 2, i1000 - 10, 1);
    assert_true(rejects(b, n));

    /* Empty histogram not in its reset state. */
    n = CRAFT(b, 0, 5, UINT64_MAX, 0, 0);
    assert_true(rejects(b, n));
    n = CRAFT(b, 0, 0, 0, 0, 0);
    assert_true(rejects(b, n));
    n = CRAFT(b, 0, 0, UINT64_MAX, 0, 1, 10, 1);
    assert_true(rejects(b, n));
}

/* The sum must be a possible sum: count*min <= sum <= count*max. */
/* True when the run-form decoder refuses buf and leaves a reset histogram. */
static bool runs_reject(const uint8_t *buf, size_t len)
{
    struct iof_hist *h = hist_new(), *empty = hist_new();
    bool ok;

    memset(h, 0x5a, sizeof(*h));
    ok = iof_hist_decode_runs(h, buf, len) == IOF_EPROTO && memcmp(h, empty, sizeof(*h)) == 0;
    test_free(empty);
    test_free(h);
    return ok;
}

static void test_runs_rejects(void **state)
{
    /* 10 ns twice, 11 ns once and 1000 ns once: runs [10, 11] and [i1000]. */
    const uint64_t i1000 = iof_hist_index(1000), top = LAST_BUCKET;
    uint8_t buf[256];
    size_t n;
    (void)state;

    n = CRAFT(buf, 4, 1031, 10, 1000, 2, 10, 2, 2, 1, i1000 - 12, 1, 1);
    {
        struct iof_hist *h = hist_new();
        assert_int_equal(iof_hist_decode_runs(h, buf, n), 0);
        assert_true(h->buckets[10] == 2 && h->buckets[11] == 1 && h->buckets[i1000] == 1);
        test_free(h);
    }
    for (size_t k = 0; k < n; k++)
        assert_true(runs_reject(buf, k)); /* every truncation */
    buf[n] = 0;
    assert_true(runs_reject(buf, n + 1)); /* a trailing byte */
    /* A gap of 0 between runs (not maximal), a run of length 0, a count of
     * 0, counts that do not add up, min or max outside the end runs. */
    n = CRAFT(buf, 4, 1031, 10, 1000, 2, 10, 2, 2, 1, 0, 1, 1);
    assert_true(runs_reject(buf, n));
    n = CRAFT(buf, 4, 1031, 10, 1000, 3, 10, 2, 2, 1, i1000 - 12, 1, 1, 1, 0);
    assert_true(runs_reject(buf, n));
    n = CRAFT(buf, 4, 1031, 10, 1000, 2, 10, 2, 2, 0, i1000 - 12, 1, 2);
    assert_true(runs_reject(buf, n));
    n = CRAFT(buf, 4, 1031, 10, 1000, 2, 10, 2, 2, 1, i1000 - 12, 1, 2);
    assert_true(runs_reject(buf, n));
    n = CRAFT(buf, 4, 1031, 11, 1000, 2, 10, 2, 2, 1, i1000 - 12, 1, 1);
    assert_true(runs_reject(buf, n));
    n = CRAFT(buf, 4, 1031, 10, 999, 2, 10, 2, 2, 1, i1000 - 12, 1, 1);
    assert_true(runs_reject(buf, n));
    /* Past the last bucket: a run starting after it, one running over it. */
    n = CRAFT(buf, 1, 1000, 1000, 1000, 1, top + 1, 1, 1);
    assert_true(runs_reject(buf, n));
    n = CRAFT(buf, 2, UINT64_MAX, UINT64_MAX / 2, UINT64_MAX / 2 + 1, 1, top, 2, 1, 1);
    assert_true(runs_reject(buf, n));
    /* More runs than buckets can hold. */
    n = CRAFT(buf, 0, 0, UINT64_MAX, 0, IOF_HIST_BUCKETS);
    assert_true(runs_reject(buf, n));
    /* Empty: exactly the reset values and no run. */
    n = CRAFT(buf, 0, 0, UINT64_MAX, 0, 0);
    assert_false(runs_reject(buf, n));
    n = CRAFT(buf, 0, 0, UINT64_MAX, 0, 1, 5, 1, 1);
    assert_true(runs_reject(buf, n));
}

/* As runs_reject, for iof_hist_decode_runs_add_summary (which leaves its
 * destination to be discarded on error). */
static bool runs_add_reject(const uint8_t *buf, size_t len)
{
    struct iof_hist *h = hist_new();
    struct iof_hist_summary one;
    bool ok = iof_hist_decode_runs_add_summary(h, buf, len, &one) == IOF_EPROTO;
    test_free(h);
    return ok;
}

/* The decoders read most varints inline: one or two bytes (a bucket's count)
 * anywhere, up to 9 bytes where 10 are left, a sum of up to 9 bytes in 64
 * bits; the rest, and every error, the long way. Every varint length in
 * either place round-trips; each thing the long way refuses is refused
 * where the inline reading meets it (early in the body, 10 bytes and more
 * to go), by both the run decoders and the sparse one. */
static void test_varint_fast_paths(void **state)
{
    struct iof_hist *h = hist_new();
    const unsigned i1000 = iof_hist_index(1000);
    /* Sums of 8, 9 (the most read in 64 bits) and 10 bytes, and past 2^64. */
    static const uint64_t pairs[][2] = {{UINT64_C(1) << 55, (UINT64_C(1) << 55) - 1},
                                        {UINT64_C(1) << 62, (UINT64_C(1) << 62) - 1},
                                        {UINT64_C(1) << 62, UINT64_C(1) << 62},
                                        {UINT64_MAX, UINT64_MAX}};
    uint8_t b[512], tail[64];
    size_t n, t;
    (void)state;

    /* Counts of every length, 1..10 bytes, both ways round (the last ones
     * are read where fewer than 10 bytes are left), in two runs. */
    for (int dir = 0; dir < 2; dir++) {
        unsigned i = 40;
        iof_hist_reset(h);
        for (int k = 0; k < 10; k++) {
            int len = dir ? 9 - k : k;
            /* 2^(7 len) - 1 is len bytes long, 2^(7 len) one more; 2^63 is
             * 10 bytes, and with 2^62 - 1 the count stays below 2^64. */
            uint64_t lo = len == 9 ? UINT64_C(1) << 63 : len ? (UINT64_C(1) << (7 * len)) - 1 : 1;
            uint64_t hi = len == 9 ? (UINT64_C(1) << 62) - 1 : UINT64_C(1) << (7 * len);
            if (k == 5)
                i += 3; /* a gap: a second run */
            h->buckets[i++] = lo;
            h->buckets[i++] = hi;
            h->count += lo + hi;
        }
        h->min_ns = 40; /* below 128, a bucket per value */
        h->max_ns = i - 1;
        for (unsigned j = 40; j < i; j++)
            h->sum_ns += (iof_u128)h->buckets[j] * j;
        roundtrip(h);
    }
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
        iof_hist_reset(h);
        iof_hist_record(h, pairs[k][0]);
        iof_hist_record(h, pairs[k][1]);
        roundtrip(h);
    }

    /* Counts that add up past 2^64 to exactly the count (2^63 + 2^63 + 5
     * wraps to 5): the total is not the count. */
    n = CRAFT(b, 5, 55, 10, 12, 1, 10, 3, UINT64_C(1) << 63, UINT64_C(1) << 63, 5);
    assert_true(runs_reject(b, n));
    assert_true(runs_add_reject(b, n));
    n = CRAFT(b, 5, 55, 10, 12, 3, 10, UINT64_C(1) << 63, 1, UINT64_C(1) << 63, 1, 5);
    assert_true(rejects(b, n));
    /* A count of 0 inside a run, not only at its end. */
    n = CRAFT(b, 4, 1032, 10, 1000, 2, 10, 3, 2, 0, 1, i1000 - 13, 1, 1);
    assert_true(runs_reject(b, n));
    assert_true(runs_add_reject(b, n));

    /* 10 ns twice, 11, 12 and 1000 ns once: runs [10, 12] and [i1000]. */
    n = CRAFT(b, 5, 1043, 10, 1000, 2, 10, 3, 2, 1, 1, i1000 - 13, 1, 1);
    assert_false(runs_reject(b, n));
    assert_false(runs_add_reject(b, n));
    /* The same with a non-minimal two-byte count (1 as 81 00) inside the
     * first run, the rest of the body after it. */
    t = CRAFT(tail, 1, i1000 - 13, 1, 1);
    n = CRAFT(b, 5, 1043, 10, 1000, 2, 10, 3, 2);
    memcpy(b + n, "\x81\x00", 2);
    memcpy(b + n + 2, tail, t);
    assert_true(runs_reject(b, n + 2 + t));
    assert_true(runs_add_reject(b, n + 2 + t));

    /* Summary fields read inline (10 bytes and more left), each not minimal
     * or past 64 bits, in both forms: the count (5 as 85 00), the sum (1043
     * as 93 88 00), min (10 bytes, the last carrying bit 64). */
    for (int form = 0; form < 2; form++) {
        static const char *const heads[] = {"\x85\x00\x93\x08\x0a\xe8\x07",
                                            "\x05\x93\x88\x00\x0a\xe8\x07",
                                            "\x05\x93\x08\x8a\x80\x80\x80\x80\x80\x80"
                                            "\x80\x80\x02\xe8\x07",
                                            "\x05\x93\x08\x0a\xe8\x07"};
        static const size_t head_len[] = {7, 7, 15, 6};
        for (size_t k = 0; k < 4; k++) {
            bool bad = k < 3;
            memcpy(b, heads[k], head_len[k]);
            n = head_len[k];
            if (form) /* sparse: 4 buckets as (delta, count) */
                n += CRAFT(b + n, 4, 10, 2, 1, 1, 1, 1, i1000 - 12, 1);
            else
                n += CRAFT(b + n, 2, 10, 3, 2, 1, 1, i1000 - 13, 1, 1);
            if (form)
                assert_true(bad ? rejects(b, n) : accepts(b, n));
            else
                assert_true(bad == runs_reject(b, n));
        }
    }
    test_free(h);
}

/* A latency spread as iof_simagent records it (log-normal, sigma 0.3, 2000
 * values): the run form takes fewer bytes than the sparse one. */
static void test_runs_size(void **state)
{
    struct iof_hist *h = hist_new();
    struct rng r = {42};
    (void)state;

    for (int i = 0; i < 2000; i++)
        iof_hist_record(h, to_ns(180e3 * exp(0.30 * rng_normal(&r))));
    roundtrip(h);
    print_message("2000 log-normal latencies: sparse %zu bytes, runs %zu bytes\n",
                  iof_hist_encoded_max(h), iof_hist_runs_encoded_len(h));
    assert_true(iof_hist_runs_encoded_len(h) < iof_hist_encoded_max(h));
    test_free(h);
}

static void test_decode_sum_bounds(void **state)
{
    const unsigned i1000 = iof_hist_index(1000);
    uint8_t b[256];
    size_t n;
    (void)state;

    n = CRAFT(b, 3, 1020, 10, 1000, 2, 10, 2, i1000 - 10, 1);
    assert_true(accepts(b, n));
    n = CRAFT(b, 3, 29, 10, 1000, 2, 10, 2, i1000 - 10, 1); /* below 3 x 10 */
    assert_true(rejects(b, n));
    n = CRAFT(b, 3, 30, 10, 1000, 2, 10, 2, i1000 - 10, 1); /* the bound itself */
    assert_true(accepts(b, n));
    n = CRAFT(b, 3, 3001, 10, 1000, 2, 10, 2, i1000 - 10, 1); /* above 3 x 1000 */
    assert_true(rejects(b, n));
    n = CRAFT(b, 3, 3000, 10, 1000, 2, 10, 2, i1000 - 10, 1);
    assert_true(accepts(b, n));
    n = CRAFT(b, 1, 0, 1000, 1000, 1, i1000, 1); /* a sum that "wrapped" to 0 */
    assert_true(rejects(b, n));
}

/* A cluster's merge: 10^4 agents x 24 h of 1 M IOPS at 10 ms is 8.64e21 ns,
 * far past 2^64: kept exactly, through the wire path and plain merges, and
 * sums past 2^64 travel (varint of up to 128 bits). */
static void test_merge_cluster_day(void **state)
{
    const uint64_t ios = 86400ULL * 1000000, lat = 10000000; /* per agent */
    const unsigned agents = 10000;
    struct iof_hist *one = calloc(1, sizeof(*one)), *sum = calloc(1, sizeof(*sum)),
                    *plain = calloc(1, sizeof(*plain)), *back = calloc(1, sizeof(*back));
    uint8_t buf[256];
    long n;
    char digits[IOF_U128_DIGITS + 1];
    (void)state;

    assert_non_null(one);
    assert_non_null(sum);
    assert_non_null(plain);
    assert_non_null(back);
    iof_hist_reset(one);
    iof_hist_reset(sum);
    iof_hist_reset(plain);
    one->buckets[iof_hist_index(lat)] = ios;
    one->count = ios;
    one->sum_ns = (iof_u128)ios * lat;
    one->min_ns = one->max_ns = lat;
    n = iof_hist_encode(one, buf, sizeof(buf));
    assert_true(n > 0);
    for (unsigned i = 0; i < agents; i++) {
        assert_int_equal(iof_hist_decode_add(sum, buf, (size_t)n), 0);
        iof_hist_merge(plain, one);
    }
    assert_true(sum->sum_ns == (iof_u128)ios * lat * agents);
    assert_true(plain->sum_ns == sum->sum_ns);
    assert_true(sum->sum_ns > (iof_u128)UINT64_MAX);
    assert_true(sum->count == ios * agents);
    assert_true(iof_hist_mean(sum) == (double)lat);
    assert_string_equal(iof_u128_str(sum->sum_ns, digits), "8640000000000000000000");
    /* The merged histogram itself encodes and decodes exactly. */
    n = iof_hist_encode(sum, buf, sizeof(buf));
    assert_true(n > 0);
    assert_int_equal(iof_hist_decode(back, buf, (size_t)n), 0);
    assert_true(back->sum_ns == sum->sum_ns && back->count == sum->count);
    assert_string_equal(iof_u128_str(0, digits), "0");
    assert_string_equal(iof_u128_str(~(iof_u128)0, digits),
                        "340282366920938463463374607431768211455");
    free(one);
    free(sum);
    free(plain);
    free(back);
}

/* A span fed interval after interval holds exactly what merging whole
 * histograms gives: intervals that widen it below and above, empty ones,
 * one value; iof_hist_span_add_merge gives the same span and the same
 * merge. */
static void test_span_same_as_merge(void **state)
{
    struct iof_hist *ref = malloc(sizeof(*ref)), *add = malloc(sizeof(*add)),
                    *got = malloc(sizeof(*got)), *dst = malloc(sizeof(*dst)),
                    *dref = malloc(sizeof(*dref));
    struct iof_hist_span sp = {0}, sp2 = {0};
    struct rng r = {77};
    (void)state;

    assert_true(ref && add && got && dst && dref);
    iof_hist_reset(ref);
    iof_hist_reset(got);
    iof_hist_span_get(&sp, got); /* empty: leaves it reset */
    assert_memory_equal(got, ref, sizeof(*ref));
    /* iof_hist_span_add_merge's other histogram starts with values of its
     * own (an interval's sum with other nodes' in it). */
    iof_hist_reset(dst);
    for (int i = 0; i < 300; i++)
        iof_hist_record(dst, (uint64_t)(2e4 * exp(0.5 * rng_normal(&r))) + 1);
    *dref = *dst;
    for (int k = 0; k < 60; k++) {
        /* Each interval around its own median, 1 us .. 100 ms. */
        double median = exp(log(1e3) + rng_unit(&r) * log(1e5));
        int n = k % 7 == 3 ? 0 : k % 11 == 5 ? 1 : 500;
        iof_hist_reset(add);
        for (int i = 0; i < n; i++)
            iof_hist_record(add, (uint64_t)(median * exp(0.5 * rng_normal(&r))) + 1);
        iof_hist_merge(ref, add);
        iof_hist_merge(dref, add);
        assert_int_equal(iof_hist_span_add(&sp, add), 0);
        /* The same in one pass with a merge: the span as above, the other
         * histogram as iof_hist_merge makes it. */
        assert_int_equal(iof_hist_span_add_merge(&sp2, dst, add), 0);
        assert_memory_equal(dst, dref, sizeof(*dst));
        iof_hist_reset(got);
        iof_hist_span_get(&sp, got);
        assert_true(got->count == ref->count && got->sum_ns == ref->sum_ns &&
                    got->min_ns == ref->min_ns && got->max_ns == ref->max_ns);
        assert_memory_equal(got->buckets, ref->buckets, sizeof(ref->buckets));
        /* Only the span the values need. */
        assert_int_equal(sp.n, iof_hist_hi(ref) - iof_hist_lo(ref));
        iof_hist_reset(got);
        iof_hist_span_get(&sp2, got);
        assert_memory_equal(got, ref, sizeof(*ref));
        assert_true(sp2.lo == sp.lo && sp2.n == sp.n);
    }
    iof_hist_span_free(&sp);
    iof_hist_span_free(&sp2);
    assert_true(!sp.c32 && !sp.c64);
    assert_int_equal(sp.s.count, 0);
    free(ref);
    free(add);
    free(got);
    free(dst);
    free(dref);
}

/* A span keeps its counts in 32 bits while its count fits them, then in
 * 64: up to a count of exactly 2^32 - 1 narrow, from 2^32 wide, with one
 * bucket reaching 2^32 itself; the buckets are always those of the merge,
 * as the span widens below in the add that makes its counts wide, and
 * above once they are. */
static void test_span_wide_counts(void **state)
{
    struct iof_hist *ref = malloc(sizeof(*ref)), *add = malloc(sizeof(*add)),
                    *got = malloc(sizeof(*got)), *dst = malloc(sizeof(*dst));
    struct iof_hist_span sp = {0};
    /* {first bucket, its count, second bucket, its count}; below 128 a
     * bucket per value. */
    static const uint64_t adds[][4] = {
        {50, UINT64_C(1) << 31, 60, 7},
        {50, (UINT64_C(1) << 31) - 9, 61, 1}, /* the span's count: 2^32 - 1 */
        {48, 1, 70, 0},                       /* 2^32: wide, and wider */
        {50, UINT64_C(1) << 31, 70, UINT64_C(1) << 40},
    };
    (void)state;

    assert_true(ref && add && got && dst);
    iof_hist_reset(ref);
    iof_hist_reset(dst);
    for (size_t k = 0; k < sizeof(adds) / sizeof(adds[0]); k++) {
        iof_hist_reset(add);
        add->buckets[adds[k][0]] = adds[k][1];
        add->buckets[adds[k][2]] += adds[k][3];
        add->count = adds[k][1] + adds[k][3];
        add->min_ns = adds[k][0];
        add->max_ns = adds[k][3] ? adds[k][2] : adds[k][0];
        add->sum_ns = (iof_u128)adds[k][0] * adds[k][1] + (iof_u128)adds[k][2] * adds[k][3];
        iof_hist_merge(ref, add);
        assert_int_equal(iof_hist_span_add_merge(&sp, dst, add), 0);
        assert_memory_equal(dst, ref, sizeof(*ref));
        iof_hist_reset(got);
        iof_hist_span_get(&sp, got);
        assert_memory_equal(got, ref, sizeof(*ref));
        assert_true(k < 2 ? sp.c32 && !sp.c64 : sp.c64 && !sp.c32);
    }
    assert_true(ref->count > UINT32_MAX && ref->buckets[50] > UINT32_MAX);
    iof_hist_span_free(&sp);
    free(ref);
    free(add);
    free(got);
    free(dst);
}

/* iof_hist_percentiles over two (or three) histograms gives, for every
 * quantile, what iof_hist_percentile gives for their merge: random pairs
 * (either or both empty, one value, disjoint or overlapping spreads, the
 * overflow bucket), the edge quantiles 0, NaN and 1 included, and a
 * histogram whose count exceeds its buckets (corrupted: max). */
/* iof_hist_count_above brackets the exact count above a threshold by the
 * buckets: exact where the threshold ends a bucket or lies outside the
 * values, at most the threshold's own bucket wide otherwise. */
static void test_count_above(void **state)
{
    struct rng r = {42};
    struct iof_hist *h = malloc(sizeof(*h));
    uint64_t *v = malloc(20000 * sizeof(*v)), surely, maybe;
    const uint64_t thr[] = {0, 1, 127, 128, 20000, 20223, 20224, 1000000, TOP_NS, UINT64_MAX};

    (void)state;
    assert_non_null(h);
    assert_non_null(v);
    iof_hist_reset(h);
    iof_hist_count_above(h, 0, &surely, &maybe);
    assert_true(surely == 0 && maybe == 0);
    for (int i = 0; i < 20000; i++) {
        v[i] = rng_next(&r) % 100000;
        iof_hist_record(h, v[i]);
    }
    for (size_t k = 0; k < sizeof(thr) / sizeof(thr[0]); k++) {
        uint64_t exact = 0;
        unsigned j = iof_hist_index(thr[k]);
        for (int i = 0; i < 20000; i++)
            exact += v[i] > thr[k];
        iof_hist_count_above(h, thr[k], &surely, &maybe);
        assert_true(surely <= exact && exact <= maybe);
        assert_true(maybe - surely <= (thr[k] < h->max_ns ? h->buckets[j] : 0));
        if (thr[k] < 128 || thr[k] + 1 == iof_hist_bucket_low(j) + iof_hist_bucket_width(j) ||
            thr[k] >= h->max_ns)
            assert_true(surely == exact && maybe == exact);
    }
    /* 20000 ns lies inside the bucket [19968, 20224): only that bucket is in doubt. */
    iof_hist_reset(h);
    iof_hist_record(h, 19999);
    iof_hist_record(h, 20001);
    iof_hist_record(h, 20224);
    iof_hist_count_above(h, 20000, &surely, &maybe);
    assert_true(surely == 1 && maybe == 3);
    free(v);
    free(h);
}

static void test_percentiles_same_as_merge(void **state)
{
    static const double qs[] = {0.0, 1e-9, 0.25, 0.5, 0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0};
    struct iof_hist *h[3], *merged = malloc(sizeof(*merged));
    const struct iof_hist *in[3];
    uint64_t got[sizeof(qs) / sizeof(qs[0])];
    struct rng r = {2026};
    (void)state;

    assert_non_null(merged);
    for (int j = 0; j < 3; j++) {
        h[j] = malloc(sizeof(*h[j]));
        assert_non_null(h[j]);
        in[j] = h[j];
    }
    for (int k = 0; k < 400; k++) {
        unsigned n = k % 5 == 4 ? 3 : 2;
        iof_hist_reset(merged);
        for (unsigned j = 0; j < n; j++) {
            int kind = (int)(rng_next(&r) % 6);
            int count = kind == 0 ? 0 : kind == 1 ? 1 : 1 + (int)(rng_next(&r) % 3000);
            double median = exp(log(100.0) + rng_unit(&r) * log(1e8));
            iof_hist_reset(h[j]);
            for (int i = 0; i < count; i++)
                iof_hist_record(h[j], kind == 5 && i % 97 == 0
                                          ? TOP_NS + i
                                          : (uint64_t)(median * exp(rng_normal(&r))) + 1);
            iof_hist_merge(merged, h[j]);
        }
        iof_hist_percentiles(in, n, qs, sizeof(qs) / sizeof(qs[0]), got);
        for (size_t q = 0; q < sizeof(qs) / sizeof(qs[0]); q++)
            if (got[q] != iof_hist_percentile(merged, qs[q]))
                fail_msg("case %d, q %g: %llu, merged %llu", k, qs[q], (unsigned long long)got[q],
                         (unsigned long long)iof_hist_percentile(merged, qs[q]));
    }
    /* NaN first counts as 0: min. */
    {
        const double nan_q[] = {NAN, 0.5};
        iof_hist_reset(h[0]);
        iof_hist_reset(h[1]);
        iof_hist_record(h[0], 1000);
        iof_hist_record(h[1], 5000);
        iof_hist_percentiles(in, 2, nan_q, 2, got);
        assert_int_equal(got[0], 1000);
        assert_int_equal(got[1], iof_hist_bucket_low(iof_hist_index(1000)) +
                                     iof_hist_bucket_width(iof_hist_index(1000)) / 2);
    }
    /* A count its buckets do not hold: max, as for the merge. */
    h[0]->count += 10;
    iof_hist_reset(merged);
    iof_hist_merge(merged, h[0]);
    iof_hist_merge(merged, h[1]);
    iof_hist_percentiles(in, 2, qs, sizeof(qs) / sizeof(qs[0]), got);
    for (size_t q = 0; q < sizeof(qs) / sizeof(qs[0]); q++)
        assert_int_equal(got[q], iof_hist_percentile(merged, qs[q]));
    assert_int_equal(got[9], 5000);
    for (int j = 0; j < 3; j++)
        free(h[j]);
    free(merged);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_buckets),
        cmocka_unit_test(test_layout_values),
        cmocka_unit_test(test_percentile_basics),
        cmocka_unit_test(test_error_bound),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_clear_reuse),
        cmocka_unit_test(test_roundtrip_empty),
        cmocka_unit_test(test_roundtrip_one),
        cmocka_unit_test(test_roundtrip_dense),
        cmocka_unit_test(test_decode_rejects),
        cmocka_unit_test(test_decode_sum_bounds),
        cmocka_unit_test(test_runs_rejects),
        cmocka_unit_test(test_runs_size),
        cmocka_unit_test(test_varint_fast_paths),
        cmocka_unit_test(test_merge_cluster_day),
        cmocka_unit_test(test_span_same_as_merge),
        cmocka_unit_test(test_span_wide_counts),
        cmocka_unit_test(test_percentiles_same_as_merge),
        cmocka_unit_test(test_count_above),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
