/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_live.c - manager/console.c's live line (not a terminal:
 * one line per interval on stderr): the test's last interval says so and
 * adds nothing to the run's ETA, which is 0 at the run's last interval;
 * other intervals count the rest of the test and the tests after it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/console.h"
#include "proto/plan.h"

/* Two tests of 1 s ramp and 3 s measurement each. */
static const char PLAN[] =
    "{\"name\": \"live\", \"run\": {\"ramp\": \"1s\", \"duration\": \"3s\", \"interval\": "
    "\"1s\"},"
    " \"specs\": [{\"name\": \"a\", \"lines\": [{\"size\": \"4k\"}]},"
    "             {\"name\": \"b\", \"lines\": [{\"size\": \"64k\"}]}],"
    " \"workers\": [{\"count\": 1, \"engine\": \"null\","
    "   \"targets\": [{\"path\": \"t\", \"size\": \"1m\"}]}]}";

/* The line mgr_live_line prints for test `test` at elapsed_s of 3 s. */
static char *line(const struct iof_plan *p, const struct iof_test *tests, size_t ntests,
                  unsigned test, double elapsed_s, bool last)
{
    struct mgr_metrics m = {.rates = true, .iops = 1000, .percentiles = true};
    struct mgr_live l;
    char *out = calloc(1, 4096);
    FILE *f = tmpfile();
    int saved = dup(STDERR_FILENO);

    assert_non_null(out);
    assert_non_null(f);
    assert_true(saved >= 0);
    fflush(stderr);
    assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
    mgr_live_init(&l, false);
    mgr_live_plan(&l, p, tests, ntests);
    mgr_live_line(&l, "run", test, (unsigned)ntests, elapsed_s, 3.0, last, &m, 1, 1);
    mgr_live_done(&l);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    rewind(f);
    assert_true(fread(out, 1, 4095, f) > 0);
    fclose(f);
    return out;
}

static void test_last_interval(void **state)
{
    struct iof_plan plan;
    struct iof_test *tests;
    size_t ntests;
    struct iof_diag d = {{0}};
    char *s;
    (void)state;

    if (proto_plan_parse("plan", PLAN, strlen(PLAN), NULL, 0, &plan, &d))
        fail_msg("plan: %s", d.msg);
    tests = iof_plan_expand(&plan, &ntests);
    assert_non_null(tests);
    assert_int_equal(ntests, 2);

    /* Mid-test: 1 s of test 1 left, then test 2's 1 s ramp and 3 s. */
    s = line(&plan, tests, ntests, 1, 2.0, false);
    assert_non_null(strstr(s, "[run] test 1/2    2.0/3.0s  IOPS"));
    assert_null(strstr(s, "last interval"));
    assert_non_null(strstr(s, "  ETA 5s"));
    free(s);
    /* Test 1's last interval: said, and only test 2 is left. */
    s = line(&plan, tests, ntests, 1, 3.0, true);
    assert_non_null(strstr(s, "[run] test 1/2    3.0/3.0s last interval  IOPS"));
    assert_non_null(strstr(s, "  ETA 4s"));
    free(s);
    /* The run's last interval: ETA 0, even when it ended short of the
     * planned time (a cut last interval). */
    s = line(&plan, tests, ntests, 2, 3.0, true);
    assert_non_null(strstr(s, "[run] test 2/2    3.0/3.0s last interval"));
    assert_non_null(strstr(s, "  ETA 0s"));
    free(s);
    s = line(&plan, tests, ntests, 2, 2.5, true);
    assert_non_null(strstr(s, "last interval"));
    assert_non_null(strstr(s, "  ETA 0s"));
    free(s);
    /* One line each, no redraw: not a terminal. */
    s = line(&plan, tests, ntests, 2, 1.0, false);
    assert_null(strchr(s, '\r'));
    assert_non_null(strstr(s, "  ETA 2s  agents 1/1\n"));
    free(s);

    free(tests);
    iof_plan_free(&plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
