/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_data.c - dynamo/data: the layout of a unit (random part,
 * zero tail) for each compress share, the duplicate share over many writes,
 * the pool shared across seeds, unique units never repeated, and multi-unit
 * writes. Fixed seeds; tolerances are 5 sigma and printed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamo/data.h"

struct fixture {
    struct iof_data_cfg cfg;
    struct dyn_data d;
    uint8_t *area, *buf;
    size_t buflen;
};

static void fx_init(struct fixture *f, uint32_t dedupe, uint32_t compress, uint32_t unit,
                    size_t buflen, uint64_t pool_seed, uint64_t unique_seed)
{
    memset(f, 0, sizeof(*f));
    f->cfg = (struct iof_data_cfg){
        .enabled = true, .dedupe_pct = dedupe, .compress_pct = compress, .unit = unit};
    assert_int_equal(posix_memalign((void **)&f->area, 4096, dyn_data_area_size(&f->cfg)), 0);
    assert_int_equal(posix_memalign((void **)&f->buf, 4096, buflen), 0);
    memset(f->buf, 0xa5, buflen);
    f->buflen = buflen;
    dyn_data_init(&f->d, &f->cfg, f->area, pool_seed, unique_seed);
    dyn_data_prepare(&f->d, f->buf, buflen);
}

static void fx_free(struct fixture *f)
{
    free(f->area);
    free(f->buf);
}

static void test_rand_len(void **state)
{
    (void)state;
    struct iof_data_cfg c = {.enabled = true, .unit = 4096};
    const uint32_t pct[] = {0, 50, 60, 80, 99, 100};
    const uint32_t want[] = {4096, 2048, 1632, 832, 32, 32};

    for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
        c.compress_pct = pct[i];
        assert_int_equal(dyn_data_rand_len(&c), want[i]);
    }
    c.unit = 512;
    c.compress_pct = 0;
    assert_int_equal(dyn_data_rand_len(&c), 512);
}

/* Every unit written has zeros past rand_len and non-zero words before. */
static void test_layout(void **state)
{
    (void)state;
    struct fixture f;

    fx_init(&f, 30, 60, 4096, 4 * 4096, 1, 2);
    for (int n = 0; n < 1000; n++) {
        const uint8_t *p = dyn_data_fill(&f.d, f.buf, 4 * 4096);
        assert_ptr_equal(p, f.buf);
        for (int u = 0; u < 4; u++) {
            const uint8_t *b = p + u * 4096;
            size_t zeros = 0;
            for (size_t i = f.d.rand_len; i < 4096; i++)
                assert_int_equal(b[i], 0);
            for (size_t i = 0; i < f.d.rand_len; i++)
                zeros += b[i] == 0;
            /* Random bytes: about 1 in 256 is zero. */
            assert_true(zeros < f.d.rand_len / 32);
        }
    }
    fx_free(&f);
}

static int cmp_unit(const void *a, const void *b)
{
    return memcmp(*(const uint8_t *const *)a, *(const uint8_t *const *)b, 4096);
}

/* Of N one-unit writes, dedupe % come from the pool (the same DYN_DATA_POOL
 * units), the rest are all distinct. */
static void dup_share(uint32_t dedupe)
{
    enum { N = 20000 };
    struct fixture f;
    uint8_t *copies = malloc((size_t)N * 4096);
    const uint8_t **ptr = malloc(N * sizeof(*ptr));
    size_t from_pool = 0, distinct = 1;
    double share, sigma;

    assert_non_null(copies);
    assert_non_null(ptr);
    fx_init(&f, dedupe, 0, 4096, 4096, 11, 12);
    for (size_t i = 0; i < N; i++) {
        const uint8_t *p = dyn_data_fill(&f.d, f.buf, 4096);
        if (p != f.buf) {
            assert_true(p >= f.d.pool && p < f.d.pool + (size_t)DYN_DATA_POOL * 4096);
            from_pool++;
        }
        memcpy(copies + i * 4096, p, 4096);
        ptr[i] = copies + i * 4096;
    }
    qsort(ptr, N, sizeof(*ptr), cmp_unit);
    for (size_t i = 1; i < N; i++)
        distinct += memcmp(ptr[i - 1], ptr[i], 4096) != 0;
    share = 100.0 * (double)from_pool / N;
    sigma = 100.0 * sqrt(dedupe / 100.0 * (1 - dedupe / 100.0) / N);
    printf("dedupe %u%%: %.2f%% duplicates, %zu distinct of %d\n", dedupe, share, distinct, N);
    assert_true(fabs(share - dedupe) <= 5 * sigma + 1e-9);
    /* Unique writes are all different; duplicates add at most the pool. */
    assert_true(distinct >= N - from_pool);
    assert_true(distinct <= N - from_pool + DYN_DATA_POOL);
    if (from_pool > 10 * DYN_DATA_POOL)
        assert_int_equal(distinct, N - from_pool + DYN_DATA_POOL);
    fx_free(&f);
    free(copies);
    free(ptr);
}

static void test_dup_share(void **state)
{
    (void)state;
    dup_share(0);
    dup_share(50);
    dup_share(75);
    dup_share(100);
}

/* Same pool seed: the same pool whatever the unique seed (other workers and
 * nodes); another unique seed: other unique units. */
static void test_pool_shared(void **state)
{
    (void)state;
    struct fixture a, b;

    fx_init(&a, 50, 50, 4096, 4096, 99, 1);
    fx_init(&b, 50, 50, 4096, 4096, 99, 2);
    assert_memory_equal(a.d.pool, b.d.pool, (size_t)DYN_DATA_POOL * 4096);
    assert_memory_not_equal(a.d.src, b.d.src, 4096);
    fx_free(&b);
    /* Another compress share: another pool (its units look different). */
    fx_init(&b, 50, 60, 4096, 4096, 99, 1);
    assert_memory_not_equal(a.d.pool, b.d.pool, 4096);
    fx_free(&a);
    fx_free(&b);
}

/* A multi-unit write with every unit a duplicate copies pool units into the
 * buffer; with dedupe 100 % a one-unit write points at the pool. */
static void test_multi_unit(void **state)
{
    (void)state;
    struct fixture f;

    fx_init(&f, 100, 50, 1024, 8 * 1024, 5, 6);
    assert_ptr_equal(dyn_data_fill(&f.d, f.buf, 8 * 1024), f.buf);
    for (int u = 0; u < 8; u++) {
        int found = 0;
        for (uint32_t k = 0; k < DYN_DATA_POOL && !found; k++)
            found = !memcmp(f.buf + u * 1024, f.d.pool + k * 1024, 1024);
        assert_true(found);
    }
    assert_ptr_not_equal(dyn_data_fill(&f.d, f.buf, 1024), f.buf);
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rand_len),   cmocka_unit_test(test_layout),
        cmocka_unit_test(test_dup_share),  cmocka_unit_test(test_pool_shared),
        cmocka_unit_test(test_multi_unit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
