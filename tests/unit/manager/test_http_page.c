/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_http_page.c - manager/sinks/http_page.c and the view it
 * renders: the first HTML holds the run's state (never "connecting"),
 * names from the plan and the agents escaped (a <script> injected in the
 * plan's, a spec's and a node's name), finished tests kept with their final
 * figures, the last test's figures marked as such until the next test has
 * an interval, "elapsed" frozen and the ETA 0 once the run is done; and no
 * fixed width above a phone's 390 px. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats.h"
#include "manager/metrics.h"
#include "manager/sinks/http_page.h"
#include "manager/sinks/http_view.h"
#include "proto/plan.h"

#define S UINT64_C(1000000000)
#define T0 (UINT64_C(1700000000) * S)

static const char PLAN[] =
    "{\"name\": \"<b>plan</b>\", \"run\": {\"ramp\": \"1s\", \"duration\": \"3s\", "
    "\"interval\": \"1s\"},"
    " \"specs\": [{\"name\": \"<script>alert(1)</script>\", \"lines\": [{\"size\": \"4k\"}]},"
    "             {\"name\": \"64k 'x' & \\\"y\\\"\", \"lines\": [{\"size\": \"64k\"}]}],"
    " \"workers\": [{\"count\": 1, \"engine\": \"null\","
    "   \"targets\": [{\"path\": \"t\", \"size\": \"1m\"}]}]}";

static const char NODE[] = "<script>node()</script>";

static char *render(struct mgr_view *v, uint64_t now, bool page)
{
    struct iof_buf b;
    size_t len;
    char *s;

    iof_buf_init(&b, 1u << 22);
    mgr_view_lock(v);
    if (page)
        mgr_http_page(v, now, &b);
    else
        mgr_view_json(v, now, &b);
    mgr_view_unlock(v);
    s = iof_buf_take(&b, &len);
    assert_non_null(s);
    return s;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* One interval k of `ios` reads over 1 s, of ALL (node NULL) or a node. */
static void interval(struct mgr_view *v, const struct mgr_test_info *ti, const char *node,
                     uint64_t k, uint64_t ios)
{
    struct iof_stats *st = calloc(1, sizeof(*st));
    struct mgr_metrics m;
    struct mgr_interval iv = {.test = ti, .k = k, .node = node, .ns = S, .reported = 1};

    assert_non_null(st);
    iof_stats_reset(st);
    for (uint64_t i = 0; i < ios; i++)
        iof_hist_record(&st->rd.lat, 100000);
    st->rd.ios = ios;
    st->rd.bytes = ios * 4096;
    mgr_metrics_compute(st, S, &m);
    iv.stats = st;
    iv.m = &m;
    mgr_view_interval(v, &iv);
    free(st);
}

/* No width (max- widths excepted: they only bound) above 390 px, counting
 * an em as 16 px; and no media query is needed to fit. */
static void no_wide_width(const char *page)
{
    for (const char *p = page; (p = strstr(p, "width:")); p++) {
        double n;
        char unit[4] = "";
        if (p - page >= 4 && !strncmp(p - 4, "max-", 4))
            continue;
        if (sscanf(p + 6, "%lf%3[a-z%]", &n, unit) < 2)
            continue; /* a script's expression */
        if (!strcmp(unit, "px") && n > 390)
            fail_msg("a fixed width above 390 px: %.40s", p);
        if ((!strcmp(unit, "em") || !strcmp(unit, "rem")) && n * 16 > 390)
            fail_msg("a fixed width above 390 px: %.40s", p);
    }
}

static void test_page(void **state)
{
    struct iof_plan plan;
    struct iof_test *tests;
    size_t ntests;
    struct iof_diag d = {{0}};
    struct mgr_view v;
    struct mgr_agent_info agents[] = {{.name = NODE, .endpoint = "x"}};
    char *s;
    (void)state;

    if (proto_plan_parse("plan", PLAN, strlen(PLAN), NULL, 0, &plan, &d))
        fail_msg("plan: %s", d.msg);
    tests = iof_plan_expand(&plan, &ntests);
    assert_non_null(tests);
    assert_int_equal(mgr_view_init(&v), 0);

    /* Before the run: the state is known, the page says it. */
    s = render(&v, T0, true);
    assert_null(strstr(s, "connecting"));
    assert_non_null(strstr(s, "<span id=\"state\">waiting for agents</span>"));
    free(s);

    struct mgr_run_info ri = {.plan = &plan, .agents = agents, .nagents = 1, .start_wall_ns = T0};
    mgr_view_run_begin(&v, &ri);
    struct mgr_test_info t1 = {.test = &tests[0],
                               .ntests = 2,
                               .spec = plan.specs[0].name,
                               .cycle = "",
                               .start_wall_ns = T0 + S};
    mgr_view_test_begin(&v, &t1);
    interval(&v, &t1, NODE, 0, 1000);
    interval(&v, &t1, NULL, 0, 1000);

    /* During test 1: every name escaped, the page's own script the only one. */
    s = render(&v, T0 + 3 * S, true);
    assert_non_null(strstr(s, "&lt;b&gt;plan&lt;/b&gt;"));
    assert_non_null(strstr(s, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(s, "<td class=\"name\">&lt;script&gt;node()&lt;/script&gt;</td>"));
    assert_int_equal(count(s, "<script"), 1);
    assert_int_equal(count(s, "<b>"), 0);
    assert_null(strstr(s, "connecting"));
    assert_non_null(strstr(s, "<span id=\"state\">running</span>"));
    assert_non_null(strstr(s, "<span id=\"test\">1/2</span>"));
    assert_non_null(strstr(s, "<span id=\"interval\">1</span>"));
    assert_non_null(strstr(s, "<span id=\"elapsed\">3s</span>"));
    assert_non_null(strstr(s, "<td>1000.0</td>"));
    assert_non_null(strstr(s, "<p class=\"muted\" id=\"figures\"></p>"));
    assert_non_null(strstr(s, "\">none yet</td>"));
    no_wide_width(s);
    free(s);

    /* Test 1 ends, test 2 begins: test 1 is kept with its final figures,
     * and its last interval stays on the page, marked as such. */
    {
        struct iof_stats *st = calloc(1, sizeof(*st));
        struct mgr_metrics m;
        assert_non_null(st);
        iof_stats_reset(st);
        iof_hist_record(&st->rd.lat, 200000);
        st->rd.ios = 3000;
        mgr_metrics_compute(st, 3 * S, &m);
        struct mgr_row all = {.type = MGR_ROW_ALL, .stats = st, .m = &m, .ns = 3 * S};
        struct mgr_test_end te = {
            .test = &t1, .status = MGR_TEST_OK, .all = &all, .nodes = 1, .end_wall_ns = T0 + 5 * S};
        mgr_view_test_end(&v, &te);
        free(st);
    }
    struct mgr_test_info t2 = {.test = &tests[1],
                               .ntests = 2,
                               .spec = plan.specs[1].name,
                               .cycle = "",
                               .start_wall_ns = T0 + 6 * S};
    mgr_view_test_begin(&v, &t2);
    s = render(&v, T0 + 6 * S, true);
    assert_non_null(strstr(s, "<span id=\"test\">2/2</span>"));
    assert_non_null(strstr(s, "64k &#39;x&#39; &amp; &quot;y&quot;"));
    assert_non_null(strstr(s, "id=\"figures\">the last interval of test 1/2: test 2/2 has none "
                              "yet</p>"));
    assert_non_null(strstr(s, "<td>1000.0</td>")); /* not blank */
    assert_non_null(strstr(s, "<tr class=\"\"><td>1</td><td class=\"name\">&lt;script&gt;alert(1)"
                              "&lt;/script&gt;</td><td>ok</td><td>1000.0</td>"));
    assert_null(strstr(s, "\">none yet</td>"));
    assert_int_equal(count(s, "<script"), 1);
    free(s);
    s = render(&v, T0 + 6 * S, false);
    assert_non_null(strstr(s, "\"interval_test\":1,"));
    assert_non_null(strstr(s, "\"finished_total\":1,\"finished\":[{\"iops\":1000,"));
    assert_non_null(strstr(s, "\"status\":\"ok\",\"nodes\":1,\"lost\":0}]"));
    free(s);

    /* Interrupted during test 2: "elapsed" stops at the end, the ETA is 0. */
    interval(&v, &t2, NULL, 0, 500);
    {
        struct mgr_test_end te = {.test = &t2, .status = MGR_TEST_INTERRUPTED, .nodes = 1};
        mgr_view_test_end(&v, &te);
    }
    mgr_view_run_end(&v, 130);
    v.end_wall_ns = T0 + 8 * S; /* the run's end, as the clock said it */
    for (int later = 10; later <= 100; later += 90) {
        s = render(&v, T0 + (uint64_t)later * S, true);
        assert_non_null(strstr(s, "<span id=\"state\">interrupted</span>"));
        assert_non_null(strstr(s, "<span id=\"elapsed\">8s</span>"));
        assert_non_null(strstr(s, "<span id=\"eta\">0s</span>"));
        assert_non_null(strstr(s, "<span id=\"phase\" class=\"muted\"></span>"));
        assert_non_null(strstr(s, "<td>interrupted</td>"));
        assert_non_null(strstr(s, "the last interval of the run (test 2/2)"));
        free(s);
        s = render(&v, T0 + (uint64_t)later * S, false);
        assert_non_null(strstr(s, "\"state\":\"done\",\"state_text\":\"interrupted\","));
        assert_non_null(strstr(s, "\"elapsed_s\":8,"));
        assert_non_null(strstr(s, "\"eta_s\":0,"));
        free(s);
    }

    mgr_view_destroy(&v);
    free(tests);
    iof_plan_free(&plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
