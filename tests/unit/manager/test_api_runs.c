/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_api_runs.c - the parameters of serve's run history
 * endpoints (manager/api_runs.c) and the words they share with `iofleet runs`
 * (manager/history/query.c).
 *
 * Checked: every GET /api/v1/runs parameter fills the store's filter; an
 * unknown one, one given twice, one without a value and each bad value
 * (limit 0 or past the bound, a negative offset, a since that is neither an
 * age nor a UTC time nor a day, a numeric tag, a tag with a control
 * character, an empty q) is refused with a message naming the parameter and
 * the value; ages, times and days convert to the expected nanoseconds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "manager/api_runs.h"
#include "manager/history/query.h"

#define NOW_NS (1800000000LL * 1000000000LL) /* 2027-01-15T08:00:00Z */

static void test_query_all_parameters(void **state)
{
    struct mgr_api_runs_query q;
    struct iof_diag d = {{0}};

    (void)state;
    mgr_api_runs_query_init(&q);
    assert_int_equal(mgr_api_runs_param(&q, "tag", "base", NOW_NS, &d), 0);
    assert_int_equal(mgr_api_runs_param(&q, "q", "Alpha seq", NOW_NS, &d), 0);
    assert_int_equal(mgr_api_runs_param(&q, "since", "2d", NOW_NS, &d), 0);
    assert_int_equal(mgr_api_runs_param(&q, "limit", "25", NOW_NS, &d), 0);
    assert_int_equal(mgr_api_runs_param(&q, "offset", "50", NOW_NS, &d), 0);
    assert_string_equal(q.f.tag, "base");
    assert_string_equal(q.f.text, "Alpha seq");
    assert_true(q.f.since_unix_ns == NOW_NS - 2 * 86400LL * 1000000000LL);
    assert_int_equal(q.f.limit, 25);
    assert_int_equal(q.f.offset, 50);

    mgr_api_runs_query_init(&q);
    assert_null(q.f.tag);
    assert_null(q.f.text);
    assert_int_equal(q.f.limit, 0);
    assert_int_equal(q.f.offset, 0);
    assert_true(q.f.since_unix_ns == 0);
}

/* key=value refused, the message holding each of the words. */
static void refused(const char *key, const char *value, const char *w1, const char *w2)
{
    struct mgr_api_runs_query q;
    struct iof_diag d = {{0}};

    mgr_api_runs_query_init(&q);
    assert_int_equal(mgr_api_runs_param(&q, key, value, NOW_NS, &d), -EINVAL);
    if (!strstr(d.msg, w1) || (w2 && !strstr(d.msg, w2)))
        fail_msg("%s=%s: '%s' lacks '%s' or '%s'", key, value ? value : "(none)", d.msg, w1,
                 w2 ? w2 : "");
}

static void test_query_refusals(void **state)
{
    (void)state;
    refused("sort", "id", "unknown parameter 'sort'", "tag, q, since, limit and offset");
    refused("limit", "0", "parameter 'limit'", "1..10000, got '0'");
    refused("limit", "10001", "parameter 'limit'", "'10001'");
    refused("limit", "ten", "parameter 'limit'", "'ten'");
    refused("limit", "+5", "parameter 'limit'", "'+5'");
    refused("limit", NULL, "parameter 'limit'", "needs a value");
    refused("offset", "-1", "parameter 'offset'", "'-1'");
    refused("offset", "", "parameter 'offset'", "got ''");
    refused("since", "yesterday", "parameter 'since'", "'yesterday'");
    refused("since", "2026-13-01", "parameter 'since'", "'2026-13-01'");
    refused("since", "2026-12-06T14:40:00", "parameter 'since'", "2026-12-06T14:40:00Z");
    refused("since", "30x", "parameter 'since'", "'30x'");
    refused("tag", "7", "parameter 'tag'", "numbers are run ids");
    refused("tag", "a\x1b[31mb", "parameter 'tag'", "control characters");
    refused("tag", "", "parameter 'tag'", "empty");
    refused("q", "", "parameter 'q'", "empty");
}

static void test_query_twice(void **state)
{
    struct mgr_api_runs_query q;
    struct iof_diag d = {{0}};

    (void)state;
    mgr_api_runs_query_init(&q);
    assert_int_equal(mgr_api_runs_param(&q, "limit", "1", NOW_NS, &d), 0);
    assert_int_equal(mgr_api_runs_param(&q, "limit", "2", NOW_NS, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "parameter 'limit' is given twice"));
    assert_int_equal(q.f.limit, 1);
}

static void test_query_words(void **state)
{
    struct iof_diag d = {{0}};
    int64_t v = 0;

    (void)state;
    assert_int_equal(mgr_query_age("90m", &v, &d), 0);
    assert_true(v == 90LL * 60 * 1000000000LL);
    assert_int_equal(mgr_query_age("2w", &v, &d), 0);
    assert_true(v == 14LL * 86400 * 1000000000LL);
    assert_int_equal(mgr_query_age("-1d", &v, &d), -EINVAL);
    assert_int_equal(mgr_query_age("99999999999999w", &v, &d), -EINVAL);
    assert_int_equal(mgr_query_time("2026-12-06T14:40:00Z", NOW_NS, &v, &d), 0);
    assert_true(v == 1796568000LL * 1000000000LL);
    assert_int_equal(mgr_query_time("2026-12-06", NOW_NS, &v, &d), 0);
    assert_true(v == 1796515200LL * 1000000000LL);
    assert_int_equal(mgr_query_time("12h", NOW_NS, &v, &d), 0);
    assert_true(v == NOW_NS - 12 * 3600LL * 1000000000LL);
    assert_true(mgr_query_id("12", &v) && v == 12);
    assert_false(mgr_query_id("0", &v));
    assert_false(mgr_query_id("+3", &v));
    assert_false(mgr_query_id("3a", &v));
    assert_int_equal(mgr_query_tag("nightly", false, &d), 0);
    assert_int_equal(mgr_query_tag("", true, &d), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_all_parameters),
        cmocka_unit_test(test_query_refusals),
        cmocka_unit_test(test_query_twice),
        cmocka_unit_test(test_query_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
