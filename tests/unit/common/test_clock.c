/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_clock.c - time arithmetic on values from the wire
 * (common/clock.h): never a signed overflow, out-of-range sums refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "common/clock.h"

static void test_time_add_offset(void **state)
{
    uint64_t out = 0;
    (void)state;

    assert_int_equal(iof_time_add_offset(1000, -400, &out), 0);
    assert_true(out == 600);
    assert_int_equal(iof_time_add_offset(1000, 5, &out), 0);
    assert_true(out == 1005);
    assert_int_equal(iof_time_add_offset((uint64_t)INT64_MAX, 0, &out), 0);
    assert_true(out == (uint64_t)INT64_MAX);
    assert_int_equal(iof_time_add_offset(0, 0, &out), 0);
    assert_true(out == 0);
    /* Hostile pairs: signed overflow before, now refused. */
    out = 7;
    assert_int_equal(iof_time_add_offset((uint64_t)INT64_MAX, INT64_MAX, &out), -ERANGE);
    assert_int_equal(iof_time_add_offset((uint64_t)INT64_MAX, 1, &out), -ERANGE);
    assert_int_equal(iof_time_add_offset(UINT64_MAX, 0, &out), -ERANGE);
    assert_int_equal(iof_time_add_offset((uint64_t)INT64_MAX + 1, INT64_MIN, &out), -ERANGE);
    assert_int_equal(iof_time_add_offset(5, -6, &out), -ERANGE);
    assert_int_equal(iof_time_add_offset(0, INT64_MIN, &out), -ERANGE);
    assert_true(out == 7); /* untouched on failure */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_add_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
