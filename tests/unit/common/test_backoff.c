/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_backoff.c - common/backoff.c: the redial delay doubles up
 * to its cap, is jittered into [base/2, base], goes back to the minimum after
 * a reset, and spreads a fleet's redials instead of syncing them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/backoff.h"

static void test_jitter_bounds(void **state)
{
    (void)state;
    uint64_t rng = 42;
    for (int i = 0; i < 10000; i++) {
        uint64_t d = iof_backoff_jitter(1000, iof_backoff_rand(&rng));
        assert_true(d >= 500 && d <= 1000);
    }
    assert_int_equal(iof_backoff_jitter(1000, 0), 500);
    assert_int_equal(iof_backoff_jitter(1000, 500), 1000);
    assert_int_equal(iof_backoff_jitter(1, 0), 0);
    assert_int_equal(iof_backoff_jitter(1, 1), 1);
}

static void test_doubles_to_cap_and_resets(void **state)
{
    (void)state;
    struct iof_backoff b;
    uint64_t base = IOF_REDIAL_MIN_MS;
    iof_backoff_init(&b, IOF_REDIAL_MIN_MS, IOF_REDIAL_MAX_MS, 7);
    for (int i = 0; i < 20; i++) {
        uint64_t d = iof_backoff_next(&b);
        assert_true(d >= base / 2 && d <= base);
        base = base * 2 > IOF_REDIAL_MAX_MS ? IOF_REDIAL_MAX_MS : base * 2;
        assert_int_equal(b.base_ms, base);
    }
    assert_int_equal(b.base_ms, IOF_REDIAL_MAX_MS);
    iof_backoff_reset(&b);
    assert_int_equal(b.base_ms, IOF_REDIAL_MIN_MS);
    uint64_t d = iof_backoff_next(&b);
    assert_true(d >= IOF_REDIAL_MIN_MS / 2 && d <= IOF_REDIAL_MIN_MS);
}

static void test_init_clamps(void **state)
{
    (void)state;
    struct iof_backoff b;
    iof_backoff_init(&b, 0, 0, 1);
    assert_int_equal(b.min_ms, 1);
    assert_int_equal(b.max_ms, 1);
    iof_backoff_init(&b, 800, 100, 1);
    assert_int_equal(b.max_ms, 800);
    assert_true(iof_backoff_next(&b) <= 800);
    assert_int_equal(b.base_ms, 800);
}

/* 10,000 agents that lost their manager at once: their first redials fall
 * over the whole [250, 500] ms window, not on one instant (no 50 ms slot of
 * the window gets more than twice its fair share). */
static void test_fleet_spread(void **state)
{
    (void)state;
    enum { N = 10000, SLOTS = 5 };
    unsigned slot[SLOTS] = {0};
    uint64_t lo = UINT64_MAX, hi = 0;
    for (unsigned i = 0; i < N; i++) {
        struct iof_backoff b;
        iof_backoff_init(&b, IOF_REDIAL_MIN_MS, IOF_REDIAL_MAX_MS, 0x1234ull ^ ((uint64_t)i << 40));
        uint64_t d = iof_backoff_next(&b);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
        unsigned k = (unsigned)((d - 250) / 50);
        slot[k < SLOTS ? k : SLOTS - 1]++;
    }
    assert_true(lo < 260);
    assert_true(hi > 490);
    for (int k = 0; k < SLOTS; k++)
        assert_true(slot[k] < 2 * N / SLOTS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jitter_bounds),
        cmocka_unit_test(test_doubles_to_cap_and_resets),
        cmocka_unit_test(test_init_clamps),
        cmocka_unit_test(test_fleet_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
