/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_table.c - manager/console.c's final table: for a fleet,
 * when it is summarised and what the summary shows (the slowest and fastest
 * nodes by IOPS, how many nodes and rows are hidden, the files that keep
 * every row); on a terminal, how it fits the width (columns left out by
 * priority, names cut, the line saying so); on synthetic rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/console.h"

enum { NODES = 100 };

static char names[NODES][32];
static struct mgr_metrics metrics[NODES];
static struct mgr_table_node nodes[NODES];

/* Node k (in a shuffled order) does (k + 1) * 100 IOPS. */
static void fleet(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = (i * 37) % n; /* 37 is prime to every n used here */
        snprintf(names[i], sizeof(names[i]), "node-%03zu", k);
        memset(&metrics[i], 0, sizeof(metrics[i]));
        metrics[i].rates = true;
        metrics[i].iops = (double)(k + 1) * 100;
        nodes[i].name = names[i];
        nodes[i].m = &metrics[i];
    }
}

static char *summary(size_t n, size_t rows, const char *files, int *shown)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    struct mgr_table t;
    assert_non_null(f);
    mgr_table_init(&t, f, 0, true, 8, files);
    *shown = mgr_table_summary(&t, nodes, n, rows);
    fclose(f);
    return out;
}

static void test_fits(void **state)
{
    (void)state;
    assert_true(mgr_table_fits(0, 0));
    assert_true(mgr_table_fits(MGR_TABLE_MAX_NODES, MGR_TABLE_MAX_ROWS));
    assert_false(mgr_table_fits(MGR_TABLE_MAX_NODES + 1, MGR_TABLE_MAX_NODES + 1));
    assert_false(mgr_table_fits(4, MGR_TABLE_MAX_ROWS + 1));
}

static void test_slowest_and_fastest(void **state)
{
    (void)state;
    int shown;
    fleet(NODES);
    char *out = summary(NODES, NODES * 17, "r.csv, r.json", &shown);
    assert_int_equal(shown, 2 * MGR_TABLE_EXTREMES);
    /* The five slowest in order, then the five fastest, fastest first. */
    const char *order[] = {"node-000", "node-001", "node-002", "node-003", "node-004",
                           "node-099", "node-098", "node-097", "node-096", "node-095"};
    const char *at = out;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        const char *p = strstr(at, order[i]);
        assert_non_null(p);
        at = p;
    }
    assert_null(strstr(out, "node-005"));
    assert_null(strstr(out, "node-050"));
    assert_null(strstr(out, "node-094"));
    assert_non_null(strstr(out, "slowest"));
    assert_non_null(strstr(out, "10 of 100 nodes shown and 1690 of 1700"));
    assert_non_null(strstr(out, "every row is in r.csv, r.json"));
    /* One line each: two headings, ten rows, the closing line. */
    size_t lines = 0;
    for (const char *p = out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 13);
    free(out);
}

/* Few nodes with many rows each: every node is shown, slowest first; only
 * the WORKER and TARGET rows are hidden. */
static void test_few_nodes_many_rows(void **state)
{
    (void)state;
    int shown;
    fleet(7);
    char *out = summary(7, 7 * 40, NULL, &shown);
    assert_int_equal(shown, 7);
    const char *at = out;
    for (int k = 0; k < 7; k++) {
        char want[16];
        snprintf(want, sizeof(want), "node-%03d", k);
        const char *p = strstr(at, want);
        assert_non_null(p);
        at = p;
    }
    assert_null(strstr(out, "slowest"));
    assert_non_null(strstr(out, "7 of 7 nodes shown and 273 of 280"));
    assert_non_null(strstr(out, "--csv FILE or --json FILE keeps every row"));
    free(out);
}

/* Columns of the widest line of out, and its number of lines. */
static size_t widest(const char *out, size_t *lines)
{
    size_t w = 0, cur = 0;
    *lines = 0;
    for (const char *p = out; *p; p++) {
        if (*p == '\n') {
            w = cur > w ? cur : w;
            cur = 0;
            ++*lines;
        } else if (((unsigned char)*p & 0xc0) != 0x80) {
            cur++;
        }
    }
    return w;
}

/* out with its lines joined: a wrapped line reads as one (in place). */
static char *joined(char *out)
{
    char *w = out;
    for (const char *r = out; *r; r++) {
        if (*r == '\n' && r[1] == ' ') {
            *w++ = ' ';
            while (r[1] == ' ')
                r++;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return out;
}

static const char *long_name = "node-a/w12:a-rather-long-name-for-a-test-file-of-this-run.dat";

/* A table of an ALL row, a rated NODE row and a TARGET row with a long
 * name, `width` columns wide (0: not a terminal). */
static char *table(unsigned width, const char *name, const char *files)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    struct mgr_table t;
    struct mgr_metrics m = {.rates = true,
                            .percentiles = true,
                            .iops = 123456.7,
                            .read_iops = 86419.7,
                            .write_iops = 37037.0,
                            .mibps = 482.25,
                            .avg_ms = 0.000812,
                            .p50_ms = 0.0011,
                            .p99_ms = 0.0234,
                            .p999_ms = 1.5,
                            .max_ms = 1234.5,
                            .errors = 7};
    assert_non_null(f);
    mgr_table_init(&t, f, width, true, strlen(name), files);
    mgr_table_header(&t, 1, 2, "4k 70% read 100% random", "queue_depth=64", 60.0,
                     "5 nodes, start skew 0.123 ms, agents lost: yes, absent: 2");
    mgr_table_row(&t, "ALL", "*", &m);
    m.rated = true;
    m.avg_svc_ms = 0.0005;
    m.max_svc_ms = 2.5;
    m.late_ios = 3;
    mgr_table_row(&t, "NODE", "node-a", &m);
    m.rated = false;
    mgr_table_row(&t, "TARGET", name, &m);
    mgr_table_end(&t);
    fclose(f);
    return out;
}

/* Not a terminal: every column, in the order scripts read them, names
 * whole, no line about columns left out. */
static void test_not_a_terminal(void **state)
{
    (void)state;
    char *out = table(0, long_name, "r.csv");
    assert_non_null(strstr(out, "\nrow     name                             IOPS    read_IOPS   "
                                "write_IOPS      MiB/s     avg     p50     p99   p99.9     max   "
                                "errors\n"));
    assert_non_null(strstr(out, "\nALL     *                            123456.7      86419.7      "
                                "37037.0     482.25   812ns  1.10µs  23.4µs  1.50ms   1.23s        "
                                "7\n"));
    assert_non_null(strstr(out, long_name));
    assert_non_null(strstr(out, "service (from submit): avg 500ns  max 2.50ms  late > 1 ms: 3"));
    assert_null(strstr(out, "left out"));
    free(out);
}

/* A wide terminal with short names: the full table, nothing said. */
static void test_wide_terminal(void **state)
{
    (void)state;
    size_t lines;
    char *out = table(140, "node-a/w0:a.dat", "r.csv");
    assert_true(widest(out, &lines) <= 140);
    assert_non_null(strstr(out, "read_IOPS   write_IOPS      MiB/s     avg     p50     p99   "
                                "p99.9     max   errors\n"));
    assert_null(strstr(out, "left out"));
    free(out);
}

/* Narrow terminals: every line within the width, IOPS, avg and errors
 * always there, the least needed columns gone first, the line saying
 * which and where the rest is. */
static void test_narrow_terminals(void **state)
{
    (void)state;
    static const unsigned widths[] = {140, 120, 100, 80, 72, 60};
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
        size_t lines;
        char *out = table(widths[i], long_name, "r.csv, r.json");
        size_t w = widest(out, &lines);
        if (w > widths[i])
            fail_msg("%u columns: a line of %zu:\n%s", widths[i], w, out);
        const char *at = strstr(out, "\nrow ");
        char head[256];
        assert_non_null(at);
        snprintf(head, sizeof(head), "%.*s", (int)strcspn(at + 1, "\n") + 2, at);
        assert_non_null(strstr(head, " IOPS "));
        assert_non_null(strstr(head, " avg "));
        assert_non_null(strstr(head, " errors\n"));
        assert_null(strstr(head, "p50")); /* the first to go */
        assert_non_null(strstr(joined(out), "every column and row is in r.csv, r.json"));
        assert_non_null(strstr(out, "service (from submit)"));
        free(out);
    }
    size_t lines;
    char *out = table(80, long_name, NULL);
    assert_true(widest(out, &lines) <= 80);
    /* The name cut in the middle: its node and its file's end stay. */
    assert_non_null(strstr(out, "\nTARGET  node-a/w12:~this-run.dat "));
    joined(out);
    assert_non_null(strstr(out, "left out to fit 80 columns: read_IOPS, write_IOPS, MiB/s, p50, "));
    assert_non_null(strstr(out, "long names cut with '~'; --csv FILE or --json FILE keeps every"));
    free(out);
}

/* The summary of a fleet fits a narrow terminal too. */
static void test_summary_narrow(void **state)
{
    (void)state;
    char *out = NULL;
    size_t len = 0, lines;
    FILE *f = open_memstream(&out, &len);
    struct mgr_table t;
    assert_non_null(f);
    fleet(NODES);
    mgr_table_init(&t, f, 80, true, 8, "/var/tmp/a-long-directory/results.csv");
    assert_int_equal(mgr_table_summary(&t, nodes, NODES, NODES * 17), 10);
    fclose(f);
    assert_true(widest(out, &lines) <= 80);
    /* Two headings, ten rows, the closing line on three. */
    assert_int_equal(lines, 15);
    assert_non_null(strstr(out, "\n    /var/tmp/a-long-directory/results.csv\n"));
    free(out);
}

/* --rows LIST: the words, and a bad one named in the error. */
static void test_rows_parse(void **state)
{
    (void)state;
    struct iof_diag d = {{0}};
    unsigned rows = 99;

    assert_int_equal(mgr_table_rows_parse("worker", &rows, &d), 0);
    assert_int_equal(rows, MGR_TABLE_ROWS_WORKER);
    assert_int_equal(mgr_table_rows_parse("target,group", &rows, &d), 0);
    assert_int_equal(rows, MGR_TABLE_ROWS_TARGET | MGR_TABLE_ROWS_GROUP);
    assert_int_equal(mgr_table_rows_parse("all", &rows, &d), 0);
    assert_int_equal(rows, MGR_TABLE_ROWS_ALL);
    assert_int_equal(mgr_table_rows_parse("worker,target,worker", &rows, &d), 0);
    assert_int_equal(rows, MGR_TABLE_ROWS_WORKER | MGR_TABLE_ROWS_TARGET);
    const char *bad[][2] = {{"workers", "'workers'"}, {"", "''"},
                            {"worker,", "''"},        {"worker,,target", "''"},
                            {"Worker", "'Worker'"},   {"node", "'node'"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(mgr_table_rows_parse(bad[i][0], &rows, &d), -EINVAL);
        assert_non_null(strstr(d.msg, bad[i][1]));
        assert_non_null(strstr(d.msg, "group, worker, target, or all"));
    }
}

/* The default table (ALL and NODE): a fleet's summary counts and names
 * NODE rows only; the line under a table names the hidden types. */
static void test_rows_default(void **state)
{
    (void)state;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    struct mgr_table t;
    assert_non_null(f);
    fleet(40);
    mgr_table_init(&t, f, 0, true, 8, "r.csv");
    t.rows = MGR_TABLE_ROWS_DEFAULT;
    assert_int_equal(mgr_table_summary(&t, nodes, 40, 40), 10);
    mgr_table_rows_hint(&t, MGR_TABLE_ROWS_WORKER | MGR_TABLE_ROWS_TARGET);
    mgr_table_rows_hint(&t, MGR_TABLE_ROWS_ALL);
    mgr_table_rows_hint(&t, 0);
    fclose(f);
    assert_non_null(strstr(out, "10 of 40 nodes shown and 30 of 40 NODE rows hidden"));
    assert_non_null(strstr(out, "\n  not shown: WORKER and TARGET rows (--rows worker,target or "
                                "--rows all shows them); every row is in r.csv\n"));
    assert_non_null(strstr(out, "\n  not shown: GROUP, WORKER and TARGET rows (--rows "
                                "group,worker,target or --rows all shows them); every row is in "
                                "r.csv\n"));
    /* Nothing hidden: no line. */
    assert_int_equal(out[len - 1], '\n');
    assert_string_equal(strchr(strstr(out, "GROUP, WORKER"), '\n'), "\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_slowest_and_fastest),
        cmocka_unit_test(test_few_nodes_many_rows),
        cmocka_unit_test(test_not_a_terminal),
        cmocka_unit_test(test_wide_terminal),
        cmocka_unit_test(test_narrow_terminals),
        cmocka_unit_test(test_summary_narrow),
        cmocka_unit_test(test_rows_parse),
        cmocka_unit_test(test_rows_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
