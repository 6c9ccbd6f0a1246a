/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_fd_limit.c - iof_net_raise_fd_limit (common/net.h):
 * the soft limit of open descriptors goes up to the hard one, which the
 * manager and the agent do at start so that a fleet is not capped at the
 * default 1024. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/net.h"

#include <sys/resource.h>

static void test_raises_soft_to_hard(void **state)
{
    struct rlimit rl, low;
    unsigned long long was = 0, now = 0;

    (void)state;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 64) {
        print_message("hard limit %llu: nothing to raise, skipped\n",
                      (unsigned long long)rl.rlim_max);
        skip();
    }
    low = rl;
    low.rlim_cur = 64;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    assert_int_equal(iof_net_raise_fd_limit(&was, &now), 0);
    assert_int_equal(was, 64);
    assert_int_equal(now, (unsigned long long)rl.rlim_max);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &low), 0);
    assert_int_equal(low.rlim_cur, rl.rlim_max);
    /* At the hard limit already: nothing changes, and it says so. */
    assert_int_equal(iof_net_raise_fd_limit(&was, &now), 0);
    assert_int_equal(was, now);
    assert_int_equal(iof_net_raise_fd_limit(NULL, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raises_soft_to_hard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
