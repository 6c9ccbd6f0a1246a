/* tests/unit/test_table.c - manager/report.c's table for a fleet: when the
 * final table is summarised, and what the summary shows (the slowest and
 * fastest nodes by IOPS, how many nodes and rows are hidden, the files that
 * keep every row), on synthetic rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/report.h"

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
    assert_non_null(f);
    *shown = mgr_table_summary(f, nodes, n, rows, files);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_slowest_and_fastest),
        cmocka_unit_test(test_few_nodes_many_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
