/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_clock_sleep.c - the clock and its sleep (common/clock.h) on
 * the system it runs on: time never goes back, iof_sleep_until never returns
 * before its deadline (on Windows, where clock_nanosleep knows only
 * CLOCK_REALTIME, common/os/win.c implements it). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/clock.h"

static void test_now_monotonic(void **state)
{
    uint64_t prev = iof_now_ns(), now;
    (void)state;

    assert_true(prev > 0);
    for (int i = 0; i < 100000; i++) {
        now = iof_now_ns();
        assert_true(now >= prev);
        prev = now;
    }
}

static void test_sleep_until_deadline(void **state)
{
    (void)state;

    for (uint64_t ms = 1; ms <= 40; ms *= 3) {
        uint64_t deadline = iof_now_ns() + ms * IOF_NS_PER_MS;
        iof_sleep_until(deadline);
        assert_true(iof_now_ns() >= deadline);
    }
}

static void test_sleep_until_past(void **state)
{
    uint64_t t0 = iof_now_ns();
    (void)state;

    iof_sleep_until(t0 > IOF_NS_PER_S ? t0 - IOF_NS_PER_S : 0);
    iof_sleep_until(0);
    /* Returns at once: far less than a second on any machine. */
    assert_true(iof_now_ns() - t0 < IOF_NS_PER_S);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_now_monotonic),
        cmocka_unit_test(test_sleep_until_deadline),
        cmocka_unit_test(test_sleep_until_past),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
