/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_agg_status.c - manager/aggregate.c: the status of the rows
 * a test gives every sink, as docs/results.md says it.
 *
 * A plan of three worker groups, each on one node: node-a runs the whole
 * test, node-b is lost after its first interval, node-c is absent. The
 * aggregate feeds the real --csv and --iometer-csv writers; the files are
 * read back:
 *   - ALL is partial (a node was lost in the test);
 *   - GROUP ga, whose only node was healthy, is ok; GROUP gb, whose node was
 *     lost, is partial; gc, which never ran, has no row;
 *   - node-b's rows are partial, rated over the second that arrived, the
 *     same figures in both files; node-c is absent;
 *   - --iometer-csv says each status on its comment lines;
 *   - the run's summary on the terminal says the test was partial.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/hist.h"
#include "common/stats.h"
#include "manager/aggregate.h"
#include "manager/console.h"
#include "manager/sink.h"
#include "proto/msg.h"
#include "proto/plan.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char PLAN[] =
    "{\"name\": \"groups\", \"run\": {\"ramp\": \"0s\", \"duration\": \"2s\", \"interval\": "
    "\"1s\"},"
    " \"specs\": [{\"name\": \"mix\", \"lines\": [{\"size\": \"4k\", \"read\": 70}]}],"
    " \"workers\": ["
    "  {\"name\": \"ga\", \"nodes\": [\"node-a\"], \"count\": 1, \"engine\": \"null\","
    "   \"targets\": [{\"path\": \"a\", \"size\": \"64m\"}]},"
    "  {\"name\": \"gb\", \"nodes\": [\"node-b\"], \"count\": 1, \"engine\": \"null\","
    "   \"targets\": [{\"path\": \"b\", \"size\": \"64m\"}]},"
    "  {\"name\": \"gc\", \"nodes\": [\"node-c\"], \"count\": 1, \"engine\": \"null\","
    "   \"targets\": [{\"path\": \"c\", \"size\": \"64m\"}]}]}";

#define NS_PER_S UINT64_C(1000000000)

static unsigned hook_two(void *arg)
{
    (void)arg;
    return 2;
}

static char *tmp_path(const char *name)
{
    const char *dir = getenv("IOF_TEST_TMPDIR");
    char *p = malloc(4096);
    assert_non_null(p);
    if (!dir)
        dir = "/tmp";
    (void)mkdir(dir, 0755);
    snprintf(p, 4096, "%s/agg-status-%ld-%s", dir, (long)getpid(), name);
    unlink(p);
    return p;
}

/* Node n's report of interval k: one worker, one target, ios reads. */
static void report(struct mgr_agg *g, struct mgr_agg_node *n, uint64_t k, uint64_t ios)
{
    struct iof_stats *t = calloc(1, sizeof(*t));
    struct proto_worker_stats w;
    struct proto_msg in;
    struct iof_diag d = {{0}};

    assert_non_null(t);
    iof_stats_reset(t);
    for (uint64_t i = 0; i < ios; i++)
        iof_hist_record(&t->rd.lat, 100000 + 10 * i);
    t->rd.ios = ios;
    t->rd.bytes = ios * 4096;
    w = (struct proto_worker_stats){1, t};
    proto_msg_init(&in, PROTO_MSG_STATS);
    in.u.stats.interval = k;
    in.u.stats.nworkers = 1;
    in.u.stats.workers = &w;
    if (mgr_agg_stats(g, n, &in.u.stats, &d))
        fail_msg("mgr_agg_stats: %s", d.msg);
    free(t);
}

/* The whole file as lines (LF or CRLF), NULL-terminated. */
static char **read_lines(const char *path)
{
    FILE *f = fopen(path, "rb");
    char **lines = calloc(4096, sizeof(*lines)), buf[8192];
    size_t n = 0;

    assert_non_null(f);
    assert_non_null(lines);
    while (fgets(buf, sizeof(buf), f) && n < 4095) {
        buf[strcspn(buf, "\r\n")] = '\0';
        lines[n++] = strdup(buf);
    }
    fclose(f);
    return lines;
}

static void free_lines(char **lines)
{
    for (size_t i = 0; lines[i]; i++)
        free(lines[i]);
    free(lines);
}

/* Field i (0-based) of a plain comma-separated line (no quoted fields in
 * this test's names), into out. */
static void field(const char *line, int i, char *out, size_t cap)
{
    const char *p = line, *e;
    for (; i > 0 && p; i--)
        p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    assert_non_null(p);
    e = strchr(p, ',');
    snprintf(out, cap, "%.*s", (int)(e ? (size_t)(e - p) : strlen(p)), p);
}

static int column(const char *header, const char *name)
{
    char f[128];
    for (int i = 0; i < 200; i++) {
        field(header, i, f, sizeof(f));
        if (!strcmp(f, name))
            return i;
        if (!strchr(header, ','))
            break;
    }
    fail_msg("no column %s", name);
    return -1;
}

/* The CSV line of row_type type and name (node or group), or NULL. */
static const char *csv_row(char **lines, int c_type, int c_node, int c_group, const char *type,
                           const char *name)
{
    char t[64], n[64];
    for (size_t i = 1; lines[i]; i++) {
        field(lines[i], c_type, t, sizeof(t));
        if (strcmp(t, type))
            continue;
        field(lines[i], strcmp(type, "GROUP") ? c_node : c_group, n, sizeof(n));
        if (!name || !strcmp(n, name))
            return lines[i];
    }
    return NULL;
}

static bool has_line(char **lines, const char *prefix)
{
    for (size_t i = 0; lines[i]; i++)
        if (!strncmp(lines[i], prefix, strlen(prefix)))
            return true;
    return false;
}

static void test_group_and_node_status(void **state)
{
    static const struct mgr_agg_hooks hooks = {.live = hook_two, .members = hook_two};
    const uint64_t t0 = UINT64_C(1000) * NS_PER_S;
    struct iof_plan plan;
    struct iof_test *tests;
    size_t ntests;
    struct iof_diag d = {{0}};
    struct mgr_agg g;
    struct mgr_live live;
    struct mgr_sink *sinks[2] = {NULL, NULL};
    struct mgr_agg_node nodes[3];
    struct iof_run_cfg run;
    char *csv = tmp_path("r.csv"), *iom = tmp_path("r.iom.csv");
    char **lines, st[64], v[64];
    int c_type, c_node, c_group, c_status, c_iops, c_dur;
    const char *r;
    (void)state;

    if (proto_plan_parse("plan", PLAN, strlen(PLAN), NULL, 0, &plan, &d))
        fail_msg("plan: %s", d.msg);
    tests = iof_plan_expand(&plan, &ntests);
    assert_non_null(tests);
    assert_int_equal(mgr_sink_open(&mgr_sink_csv, csv, 0, &sinks[0], &d), 0);
    assert_int_equal(mgr_sink_open(&mgr_sink_iometer, iom, 0, &sinks[1], &d), 0);
    {
        struct mgr_run_info ri = {.plan = &plan, .plan_text = "{}", .start_wall_ns = 1};
        for (int i = 0; i < 2; i++)
            sinks[i]->ops->run_begin(sinks[i], &ri);
    }
    memset(nodes, 0, sizeof(nodes));
    nodes[0].name = "node-a";
    nodes[1].name = "node-b";
    nodes[2].name = "node-c";
    mgr_live_init(&live, true);
    mgr_agg_init(&g, &plan, tests, ntests, sinks, 2, &live, &hooks, false, t0 - NS_PER_S);
    run = iof_test_run(&plan, &tests[0]);
    mgr_agg_test_begin(&g, 0, &run, t0);
    mgr_agg_node_take_part(&nodes[0]);
    mgr_agg_node_take_part(&nodes[1]);

    /* interval 1: both; interval 2 and the result: node-a only */
    report(&g, &nodes[0], 0, 100);
    report(&g, &nodes[1], 0, 60);
    mgr_agg_publish_ready(&g, 2, false);
    report(&g, &nodes[0], 1, 100);
    {
        struct iof_stats *t = calloc(1, sizeof(*t));
        struct proto_worker_stats w;
        struct proto_msg in;
        assert_non_null(t);
        iof_stats_reset(t);
        for (int i = 0; i < 200; i++)
            iof_hist_record(&t->rd.lat, 100000 + 10 * (uint64_t)i);
        t->rd.ios = 200;
        t->rd.bytes = 200 * 4096;
        w = (struct proto_worker_stats){1, t};
        proto_msg_init(&in, PROTO_MSG_RESULT);
        in.u.result.measured_ns = run.duration_ns;
        in.u.result.nworkers = 1;
        in.u.result.workers = &w;
        mgr_agg_result(&g, &nodes[0], &in.u.result, t0, t0);
        free(t);
    }
    mgr_agg_mark_lost(&nodes[1], "lost in the test");
    mgr_agg_publish_ready(&g, 1, true);
    mgr_agg_lost(&g, &nodes[1]);
    mgr_agg_absent(&g, &nodes[2], "not back yet");
    {
        struct mgr_agg_node *np[] = {&nodes[0], &nodes[1], &nodes[2]};
        struct mgr_agg_end e = {.nodes = np, .nnodes = 3, .measured_ns = run.duration_ns};
        mgr_agg_test_end(&g, &e);
    }
    /* The run's summary has the test, partial, with the ALL row's figures;
     * reads only: no write latency. */
    assert_int_equal(g.summary.n, 1);
    assert_int_equal(g.summary.tests[0].test, 1);
    assert_string_equal(g.summary.tests[0].name, "mix");
    assert_int_equal(g.summary.tests[0].status, MGR_TEST_PARTIAL);
    assert_string_equal(mgr_test_status_name(g.summary.tests[0].status), "partial");
    assert_true(g.summary.tests[0].m.iops > 129.9 && g.summary.tests[0].m.iops < 130.1);
    assert_true(g.summary.tests[0].read_p99_ms > 0.1 && g.summary.tests[0].read_p99_ms < 0.2);
    assert_true(g.summary.tests[0].write_p99_ms < 0);
    for (int i = 0; i < 2; i++) {
        sinks[i]->ops->run_end(sinks[i], 1);
        assert_int_equal(mgr_sink_close(sinks[i]), 0);
    }
    for (int n = 0; n < 3; n++)
        mgr_agg_node_free(&nodes[n]);
    mgr_agg_free(&g);
    free(tests);
    iof_plan_free(&plan);

    /* --csv */
    lines = read_lines(csv);
    assert_non_null(lines[0]);
    c_type = column(lines[0], "row_type");
    c_node = column(lines[0], "node");
    c_group = column(lines[0], "group");
    c_status = column(lines[0], "status");
    c_iops = column(lines[0], "iops");
    c_dur = column(lines[0], "duration_s");
    r = csv_row(lines, c_type, c_node, c_group, "ALL", NULL);
    assert_non_null(r);
    field(r, c_status, st, sizeof(st));
    assert_string_equal(st, "partial");
    field(r, c_iops, v, sizeof(v));
    assert_string_equal(v, "130.000"); /* (200 + 60) / 2 s */
    r = csv_row(lines, c_type, c_node, c_group, "GROUP", "ga");
    assert_non_null(r);
    field(r, c_status, st, sizeof(st));
    assert_string_equal(st, "ok"); /* its only node was healthy */
    r = csv_row(lines, c_type, c_node, c_group, "GROUP", "gb");
    assert_non_null(r);
    field(r, c_status, st, sizeof(st));
    assert_string_equal(st, "partial");
    field(r, c_iops, v, sizeof(v));
    assert_string_equal(v, "30.000"); /* over the whole window, like ALL */
    assert_null(csv_row(lines, c_type, c_node, c_group, "GROUP", "gc")); /* never ran */
    r = csv_row(lines, c_type, c_node, c_group, "NODE", "node-b");
    assert_non_null(r);
    field(r, c_status, st, sizeof(st));
    assert_string_equal(st, "partial");
    field(r, c_iops, v, sizeof(v));
    assert_string_equal(v, "60.000"); /* over its own second */
    field(r, c_dur, v, sizeof(v));
    assert_string_equal(v, "1.000000");
    r = csv_row(lines, c_type, c_node, c_group, "NODE", "node-c");
    assert_non_null(r);
    field(r, c_status, st, sizeof(st));
    assert_string_equal(st, "absent");
    field(r, c_iops, v, sizeof(v));
    assert_string_equal(v, ""); /* no window: no rates, not 0 */
    free_lines(lines);

    /* --iometer-csv: the same figures, the statuses on comment lines */
    lines = read_lines(iom);
    assert_true(has_line(lines, "'Status: ALL All partial: a node was lost during the test"));
    assert_true(has_line(lines, "'Status: MANAGER node-b partial: lost during the test: its rows "
                                "hold the 1.000 s of the 2.000 s window"));
    assert_true(has_line(lines, "'Status: MANAGER node-c absent: not in this test"));
    assert_false(has_line(lines, "'Status: MANAGER node-a"));
    assert_true(has_line(lines, "ALL,All,mix,2,2,2,130.000000,"));
    assert_true(has_line(lines, "MANAGER,node-b,mix,,1,1,60.000000,"));
    assert_true(has_line(lines, "MANAGER,node-a,mix,,1,1,100.000000,"));
    assert_false(has_line(lines, "MANAGER,node-c,"));
    free_lines(lines);
    unlink(csv);
    unlink(iom);
    free(csv);
    free(iom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_and_node_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
