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
 * the value; ages, times and days convert to the expected nanoseconds. The
 * bodies of POST /api/v1/runs/ID/tag and /api/v1/runs/prune: a tag set,
 * removed with null or "", refused when a number, with a control character,
 * not a string, missing or beside an unknown member; a prune's older_than,
 * keep, tag and dry_run fill the store's selection as `iofleet runs prune`
 * does, one of older_than and keep needed, every wrong type and value and
 * a body that is not a JSON object refused naming the member. GET
 * /api/v1/runs/compare's a and b: both needed, each a run id, given once,
 * anything else refused naming the parameter. */
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

static void test_tag_body(void **state)
{
    static const struct {
        const char *body, *want; /* want NULL: refused */
        const char *words;
    } cases[] = {
        {"{\"tag\": \"nightly\"}", "nightly", NULL},
        {"{\"tag\": null}", "", NULL},
        {"{\"tag\": \"\"}", "", NULL},
        {"{\"tag\": \"caf\u00e9 \\u00e9\"}", "caf\u00e9 \u00e9", NULL},
        {"{\"tag\": \"12\"}", NULL, "tag: a tag cannot be a number"},
        {"{\"tag\": \"a\\u001bb\"}", NULL, "tag: must not contain control characters"},
        {"{\"tag\": 12}", NULL, "tag: must be a string or null, got integer"},
        {"{\"tag\": [\"a\"]}", NULL, "got array"},
        {"{}", NULL, "the body needs a tag"},
        {"{\"tag\": \"a\", \"x\": 1}", NULL, "unknown member 'x'"},
        {"[\"a\"]", NULL, "not a JSON object"},
        {"{\"tag\": ", NULL, "not a JSON object"},
        {"", NULL, "not a JSON object"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct iof_diag d = {{0}};
        char tag[256];
        int rc = mgr_api_runs_tag_parse(cases[i].body, strlen(cases[i].body), tag, sizeof(tag), &d);
        if (cases[i].want) {
            if (rc || strcmp(tag, cases[i].want))
                fail_msg("%s: rc %d '%s' (%s)", cases[i].body, rc, tag, d.msg);
        } else if (rc != -EINVAL || !strstr(d.msg, cases[i].words)) {
            fail_msg("%s: rc %d '%s', want '%s'", cases[i].body, rc, d.msg, cases[i].words);
        }
    }
}

static void test_prune_body(void **state)
{
    static const struct {
        const char *body, *words;
    } bad[] = {
        {"{}", "needs older_than"},
        {"{\"dry_run\": true}", "needs older_than"},
        {"{\"keep\": -1}", "keep: must be a number 0.."},
        {"{\"keep\": 1.5}", "keep: must be a whole number >= 0, got real"},
        {"{\"keep\": \"2\"}", "keep: must be a whole number >= 0, got text"},
        {"{\"older_than\": \"30x\"}", "older_than: must be a number and s, m, h, d or w"},
        {"{\"older_than\": 30}", "older_than: must be a string"},
        {"{\"keep\": 1, \"tag\": \"5\"}", "tag: a tag cannot be a number"},
        {"{\"keep\": 1, \"tag\": \"\"}", "tag: must not be empty"},
        {"{\"keep\": 1, \"dry_run\": 1}", "dry_run: must be true or false"},
        {"{\"keep\": 1, \"keep\": 2}", "keep: given twice"},
        {"{\"keep\": 1, \"force\": true}", "unknown member 'force'"},
        {"keep=1", "not a JSON object"},
        {"{\"keep\": 1, \"runs\": 3}", "runs: must be an array of run ids"},
        {"{\"keep\": 1, \"runs\": [0]}", "runs: must be an array of run ids"},
        {"{\"keep\": 1, \"runs\": [2, 1e3]}", "got [2,1e3]"},
        {"{\"keep\": 1, \"runs\": [99999999999999999999]}", "whole numbers from 1"},
        {"{\"keep\": 1, \"runs\": [1], \"runs\": [2]}", "runs: given twice"},
    };
    struct mgr_api_prune p;
    struct iof_diag d = {{0}};

    (void)state;
    assert_int_equal(mgr_api_runs_prune_parse("{\"keep\": 3}", 11, NOW_NS, &p, &d), 0);
    assert_int_equal(p.sel.keep, 3);
    assert_null(p.sel.tag);
    assert_true(p.sel.before_unix_ns == 0);
    assert_false(p.dry_run);
    {
        const char *b =
            "{\"older_than\": \"30d\", \"keep\": 0, \"tag\": \"base\", \"dry_run\": true}";
        assert_int_equal(mgr_api_runs_prune_parse(b, strlen(b), NOW_NS, &p, &d), 0);
        assert_true(p.sel.before_unix_ns == NOW_NS - 30 * 86400LL * 1000000000LL);
        assert_int_equal(p.sel.keep, 0);
        assert_string_equal(p.sel.tag, "base");
        assert_true(p.dry_run);
    }
    {
        const char *b = "{\"older_than\": \"2w\"}";
        assert_int_equal(mgr_api_runs_prune_parse(b, strlen(b), NOW_NS, &p, &d), 0);
        assert_int_equal(p.sel.keep, -1); /* no keep: any */
        assert_null(p.only);
    }
    {
        const char *b = "{\"keep\": 0, \"runs\": [12, 3, 7]}";
        assert_int_equal(mgr_api_runs_prune_parse(b, strlen(b), NOW_NS, &p, &d), 0);
        assert_int_equal(p.nonly, 3); /* sorted for the search */
        assert_true(p.only[0] == 3 && p.only[1] == 7 && p.only[2] == 12);
        mgr_api_runs_prune_release(&p);
        assert_null(p.only);
        b = "{\"keep\": 0, \"runs\": []}";
        assert_int_equal(mgr_api_runs_prune_parse(b, strlen(b), NOW_NS, &p, &d), 0);
        assert_non_null(p.only); /* given and empty: nothing goes */
        assert_int_equal(p.nonly, 0);
        mgr_api_runs_prune_release(&p);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = mgr_api_runs_prune_parse(bad[i].body, strlen(bad[i].body), NOW_NS, &p, &d);
        if (rc != -EINVAL || !strstr(d.msg, bad[i].words))
            fail_msg("%s: rc %d '%s', want '%s'", bad[i].body, rc, d.msg, bad[i].words);
        mgr_api_runs_prune_release(&p);
    }
}

/* GET /api/v1/runs/compare: a and b fill the ids; each bad one refused
 * naming the parameter. */
static void test_compare_params(void **state)
{
    static const struct {
        const char *key, *value, *w1, *w2;
    } bad[] = {
        {"c", "1", "unknown parameter 'c'", "takes a and b"},
        {"a", "x", "parameter 'a'", "got 'x'"},
        {"a", "0", "parameter 'a'", "a number from 1"},
        {"b", "-3", "parameter 'b'", "got '-3'"},
        {"b", "+3", "parameter 'b'", "got '+3'"},
        {"b", "", "parameter 'b'", "got ''"},
        {"b", "99999999999999999999", "parameter 'b'", "a number from 1"},
        {"a", NULL, "parameter 'a' needs a value", "a=ID"},
    };
    struct mgr_api_runs_cmp c = {{0}};
    struct iof_diag d = {{0}};

    (void)state;
    assert_int_equal(mgr_api_runs_cmp_check(&c, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "parameter 'a' is missing"));
    assert_int_equal(mgr_api_runs_cmp_param(&c, "b", "12", &d), 0);
    assert_int_equal(mgr_api_runs_cmp_check(&c, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "parameter 'a' is missing"));
    assert_int_equal(mgr_api_runs_cmp_param(&c, "a", "7", &d), 0);
    assert_int_equal(mgr_api_runs_cmp_check(&c, &d), 0);
    assert_true(c.id[0] == 7 && c.id[1] == 12);
    assert_int_equal(mgr_api_runs_cmp_param(&c, "a", "8", &d), -EINVAL);
    assert_non_null(strstr(d.msg, "parameter 'a' is given twice"));
    assert_true(c.id[0] == 7);
    c = (struct mgr_api_runs_cmp){{0}};
    assert_int_equal(mgr_api_runs_cmp_param(&c, "a", "1", &d), 0);
    assert_int_equal(mgr_api_runs_cmp_check(&c, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "parameter 'b' is missing"));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc;
        c = (struct mgr_api_runs_cmp){{0}};
        rc = mgr_api_runs_cmp_param(&c, bad[i].key, bad[i].value, &d);
        if (rc != -EINVAL || !strstr(d.msg, bad[i].w1) || !strstr(d.msg, bad[i].w2))
            fail_msg("%s=%s: rc %d '%s', want '%s' and '%s'", bad[i].key,
                     bad[i].value ? bad[i].value : "(none)", rc, d.msg, bad[i].w1, bad[i].w2);
    }
}

/* The result files' paths: RUN/NAME with a run id, nothing else. */
static void test_result_paths(void **state)
{
    const struct mgr_api_result_file *rf;
    int64_t id = 0;

    (void)state;
    rf = mgr_api_runs_result_of("3/results.csv", &id);
    assert_non_null(rf);
    assert_int_equal(id, 3);
    assert_string_equal(rf->option, "--csv");
    assert_string_equal(rf->suffix, ".csv");
    rf = mgr_api_runs_result_of("12/results.json", &id);
    assert_non_null(rf);
    assert_int_equal(id, 12);
    assert_string_equal(rf->option, "--json");
    assert_string_equal(rf->content_type, "application/json");
    rf = mgr_api_runs_result_of("7/iometer.csv", &id);
    assert_non_null(rf);
    assert_string_equal(rf->option, "--iometer-csv");
    assert_string_equal(rf->suffix, "-iometer.csv");
    rf = mgr_api_runs_result_of("7/timeseries.csv", &id);
    assert_non_null(rf);
    assert_string_equal(rf->option, "--timeseries");
    assert_null(mgr_api_runs_result_of("x/results.csv", &id));
    assert_null(mgr_api_runs_result_of("0/results.csv", &id));
    assert_null(mgr_api_runs_result_of("/results.csv", &id));
    assert_null(mgr_api_runs_result_of("results.csv", &id));
    assert_null(mgr_api_runs_result_of("3/report.html", &id));
    assert_null(mgr_api_runs_result_of("3/results.csv/x", &id));
    assert_null(mgr_api_runs_result_of("3/4/results.csv", &id));
}

/* Downloads being prepared at once: MGR_API_EXPORTS_MAX, then -EAGAIN
 * before the database is touched; every way out gives its place back. */
static void test_export_gate(void **state)
{
    const struct mgr_api_result_file *rf;
    struct iof_diag d = {{0}};
    uint64_t size = 1;
    char *body = (char *)"x";
    size_t len = 1;
    int64_t id;
    int fd = 0;

    (void)state;
    rf = mgr_api_runs_result_of("3/results.csv", &id);
    for (unsigned i = 0; i < MGR_API_EXPORTS_MAX; i++)
        assert_int_equal(mgr_api_runs_export_enter(&d), 0);
    assert_int_equal(mgr_api_runs_export_enter(&d), -EAGAIN);
    assert_non_null(strstr(d.msg, "2 downloads are being prepared already"));
    assert_int_equal(mgr_api_runs_result("/nonexistent/runs.db", 3, rf, &fd, &size, &d), -EAGAIN);
    assert_int_equal(fd, -1);
    assert_true(size == 0);
    assert_int_equal(mgr_api_runs_report("/nonexistent/runs.db", 3, &body, &len, &d), -EAGAIN);
    assert_null(body);
    mgr_api_runs_export_leave();
    /* A download that fails gives its place back too. */
    for (int i = 0; i < 3; i++) {
        int rc = mgr_api_runs_result("/nonexistent/runs.db", 3, rf, &fd, &size, &d);
        assert_true(rc != 0 && rc != -EAGAIN);
    }
    assert_int_equal(mgr_api_runs_export_enter(&d), 0);
    assert_int_equal(mgr_api_runs_export_enter(&d), -EAGAIN);
    for (unsigned i = 0; i < MGR_API_EXPORTS_MAX; i++)
        mgr_api_runs_export_leave();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_all_parameters),
        cmocka_unit_test(test_query_refusals),
        cmocka_unit_test(test_query_twice),
        cmocka_unit_test(test_query_words),
        cmocka_unit_test(test_tag_body),
        cmocka_unit_test(test_prune_body),
        cmocka_unit_test(test_compare_params),
        cmocka_unit_test(test_result_paths),
        cmocka_unit_test(test_export_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
