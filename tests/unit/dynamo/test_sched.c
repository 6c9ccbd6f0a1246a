/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_sched.c - dynamo/sched: the arrival schedule of a rated
 * worker. Uniform spacing is exact (no drift over 10^6 I/Os, gaps that are
 * not whole nanoseconds included); MiB/s gaps follow each I/O's size;
 * Poisson gaps over NDRAWS draws have the mean, coefficient of variation
 * and tail of an exponential distribution.
 *
 * Tolerances: from fixed seeds, so every run sees the same draws; each is
 * 7 standard errors or more of the estimate over NDRAWS draws (stated
 * beside it), and the measured figures are printed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/spec.h"
#include "dynamo/sched.h"

#define NDRAWS 1000000

static void test_uniform_iops_no_drift(void **state)
{
    /* 3 IOPS: a gap of 333333333.33 ns; the n-th I/O is due within a
     * nanosecond of origin + n x 10^9 / 3, however far n goes. */
    const struct iof_rate r = {IOF_RATE_IOPS, 3, IOF_ARRIVAL_UNIFORM};
    const uint64_t origin = 123456789;
    struct dyn_sched s;

    (void)state;
    dyn_sched_init(&s, &r, origin, 1);
    for (uint64_t n = 0; n < NDRAWS; n++) {
        uint64_t due = dyn_sched_take(&s, 4096);
        uint64_t want = origin + (uint64_t)((n * IOF_NS_PER_S) / 3);
        assert_true(due + 1 >= want && due <= want + 1);
    }
    /* The next one after 10^6 is at 10^6 / 3 s. */
    assert_true(llabs((long long)(dyn_sched_due(&s) - origin) -
                      (long long)(NDRAWS * IOF_NS_PER_S / 3)) <= 1);
}

static void test_uniform_spacing_even(void **state)
{
    /* 200000 IOPS: every gap 5 us exactly. */
    const struct iof_rate r = {IOF_RATE_IOPS, 200000, IOF_ARRIVAL_UNIFORM};
    struct dyn_sched s;
    uint64_t prev;

    (void)state;
    dyn_sched_init(&s, &r, 1000, 7);
    prev = dyn_sched_take(&s, 512);
    assert_int_equal(prev, 1000);
    for (int n = 1; n < NDRAWS; n++) {
        uint64_t due = dyn_sched_take(&s, 512);
        assert_int_equal(due - prev, 5000);
        prev = due;
    }
}

static void test_uniform_mibps_by_size(void **state)
{
    /* 100 MiB/s: a 4 KiB I/O is followed by 39062.5 ns, a 64 KiB one by
     * 625 us; a mix of sizes moves exactly the bytes the rate allows. */
    const struct iof_rate r = {IOF_RATE_MIBPS, 100, IOF_ARRIVAL_UNIFORM};
    struct dyn_sched s;
    uint64_t bytes = 0;

    (void)state;
    dyn_sched_init(&s, &r, 0, 3);
    assert_int_equal(dyn_sched_take(&s, 4096), 0);
    assert_int_equal(dyn_sched_take(&s, 4096), 39062); /* 39062.5, truncated */
    assert_int_equal(dyn_sched_take(&s, 65536), 78125);
    assert_int_equal(dyn_sched_due(&s), 78125 + 625000);
    dyn_sched_init(&s, &r, 0, 3);
    for (int n = 0; n < NDRAWS; n++) {
        uint64_t size = (uint64_t)(n % 3 == 0 ? 65536 : 4096);
        dyn_sched_take(&s, size);
        bytes += size;
    }
    /* bytes / (100 MiB/s), within a nanosecond */
    assert_true(fabs((double)dyn_sched_due(&s) - (double)bytes / (100.0 * 1048576) * 1e9) <= 1);
}

static void test_poisson_gaps(void **state)
{
    /* 20000 IOPS, Poisson: gaps exponential with mean 50 us. Over 10^6
     * draws the standard error of the mean is 0.1 % of it (we allow 1 %),
     * of the CV about 0.14 % (allow 1 %), of P(gap > mean) = 1/e about
     * 0.0005 (allow 0.005), of P(gap > 3 x mean) = e^-3 about 0.0002
     * (allow 0.002). */
    const struct iof_rate r = {IOF_RATE_IOPS, 20000, IOF_ARRIVAL_POISSON};
    const double mean_want = 50000;
    struct dyn_sched s;
    double sum = 0, sum2 = 0, mean, sd, cv, min = 1e300;
    uint64_t prev, above = 0, above3 = 0;

    (void)state;
    dyn_sched_init(&s, &r, 0, 42);
    prev = dyn_sched_take(&s, 4096);
    for (int n = 0; n < NDRAWS; n++) {
        uint64_t due = dyn_sched_take(&s, 4096);
        double g = (double)(due - prev);
        prev = due;
        sum += g;
        sum2 += g * g;
        above += g > mean_want;
        above3 += g > 3 * mean_want;
        if (g < min)
            min = g;
    }
    mean = sum / NDRAWS;
    sd = sqrt(sum2 / NDRAWS - mean * mean);
    cv = sd / mean;
    print_message("poisson: mean gap %.1f ns (want %.0f), CV %.4f, P(>mean) %.4f (1/e %.4f), "
                  "P(>3 mean) %.5f (%.5f)\n",
                  mean, mean_want, cv, (double)above / NDRAWS, exp(-1), (double)above3 / NDRAWS,
                  exp(-3));
    assert_true(fabs(mean / mean_want - 1) < 0.01);
    assert_true(fabs(cv - 1) < 0.01);
    assert_true(fabs((double)above / NDRAWS - exp(-1)) < 0.005);
    assert_true(fabs((double)above3 / NDRAWS - exp(-3)) < 0.002);
    assert_true(min >= 0);
}

static void test_poisson_deterministic(void **state)
{
    const struct iof_rate r = {IOF_RATE_MIBPS, 10, IOF_ARRIVAL_POISSON};
    struct dyn_sched a, b, c;
    int differ = 0;

    (void)state;
    dyn_sched_init(&a, &r, 0, 5);
    dyn_sched_init(&b, &r, 0, 5);
    dyn_sched_init(&c, &r, 0, 6);
    for (int n = 0; n < 1000; n++) {
        uint64_t x = dyn_sched_take(&a, 8192), y = dyn_sched_take(&b, 8192);
        assert_int_equal(x, y);
        differ += x != dyn_sched_take(&c, 8192);
    }
    assert_true(differ > 900);
}

static void test_exp1_range(void **state)
{
    /* -ln(U) for U in (0, 1]: never negative, never infinite (U = 0 is
     * not drawn), at most -ln(2^-53) ~ 36.7. */
    struct dyn_rng rng;

    (void)state;
    dyn_rng_seed(&rng, 9);
    for (int n = 0; n < NDRAWS; n++) {
        double e = dyn_sched_exp1(&rng);
        assert_true(e >= 0 && e <= 36.8);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_iops_no_drift), cmocka_unit_test(test_uniform_spacing_even),
        cmocka_unit_test(test_uniform_mibps_by_size), cmocka_unit_test(test_poisson_gaps),
        cmocka_unit_test(test_poisson_deterministic), cmocka_unit_test(test_exp1_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
