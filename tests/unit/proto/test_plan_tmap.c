/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_plan_tmap.c - per-node target maps (a target's
 * `path` as {"node1": PATH, "*": PATH}): the loader's rules and messages,
 * brace ranges per entry, --set and --unset of one entry, the check once the
 * agents are known, and the plan text each agent receives.
 *
 * Plans are written with single quotes; sq() turns them into JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/spec.h"
#include "proto/plan.h"

static char *sq(const char *s)
{
    static char buf[16 * 1024];
    size_t n = strlen(s);

    assert_true(n < sizeof(buf));
    for (size_t i = 0; i <= n; i++)
        buf[i] = s[i] == '\'' ? '"' : s[i];
    return buf;
}

#define HEAD "{'name':'p','run':{'duration':'5s'},'specs':[{'name':'a','lines':[{'size':'4k'}]}],"
/* One group with target `T` (the text of one targets[] entry), nodes `N`. */
#define PLAN(N, T) HEAD "'workers':[{" N "'targets':[" T "]}]}"

static int parse(const char *plan, const char *const *ov, size_t nov, struct iof_plan *p,
                 char **canon, struct iof_diag *d)
{
    const char *text = sq(plan);

    return proto_plan_parse_canonical("plan.json", text, strlen(text), ov, nov, p, canon, d);
}

static void expect_msg(const char *plan, const char *const *ov, size_t nov, const char *msg)
{
    struct iof_plan p;
    struct iof_diag d = {{0}};

    assert_int_equal(parse(plan, ov, nov, &p, NULL, &d), IOF_EPLAN);
    assert_string_equal(d.msg, msg);
    assert_null(p.workers);
    iof_plan_free(&p);
}

static void load(const char *plan, const char *const *ov, size_t nov, struct iof_plan *p,
                 char **canon)
{
    struct iof_diag d = {{0}};
    int rc = parse(plan, ov, nov, p, canon, &d);

    if (rc)
        fail_msg("unexpected error %d: %s", rc, d.msg);
}

static void test_good_map(void **state)
{
    struct iof_plan p;
    const struct iof_target_cfg *t;
    char *canon = NULL, *wire;

    (void)state;
    load(PLAN("", "{'path':{'node1':'/dev/sdb','node2':'/dev/nvme1n1','*':'/dev/sdc'}}"), NULL, 0,
         &p, NULL);
    assert_int_equal(p.workers[0].ntargets, 1);
    t = &p.workers[0].targets[0];
    assert_string_equal(t->path, "/dev/sdc");
    assert_int_equal(t->nnode_paths, 2);
    assert_string_equal(t->node_paths[0].node, "node1");
    assert_string_equal(t->node_paths[0].path, "/dev/sdb");
    assert_string_equal(t->node_paths[1].node, "node2");
    assert_string_equal(t->node_paths[1].path, "/dev/nvme1n1");
    assert_string_equal(iof_target_path(t, "node1"), "/dev/sdb");
    assert_string_equal(iof_target_path(t, "node2"), "/dev/nvme1n1");
    assert_string_equal(iof_target_path(t, "node9"), "/dev/sdc");
    assert_true(proto_plan_has_target_maps(&p));
    iof_plan_free(&p);

    /* Without "*": only the named nodes have a path. */
    load(PLAN("'nodes':['n1','n2'],", "{'path':{'n1':'a.dat','n2':'b.dat'},'size':'1m'}"), NULL, 0,
         &p, NULL);
    t = &p.workers[0].targets[0];
    assert_string_equal(t->path, "");
    assert_string_equal(iof_target_path(t, "n2"), "b.dat");
    assert_string_equal(iof_target_path(t, "n3"), "");
    iof_plan_free(&p);

    /* "*" alone is a plain path, and goes to the agents as one. */
    load(PLAN("", "{'path':{'*':'/dev/sdc'}}"), NULL, 0, &p, &canon);
    assert_string_equal(p.workers[0].targets[0].path, "/dev/sdc");
    assert_int_equal(p.workers[0].targets[0].nnode_paths, 0);
    assert_false(proto_plan_has_target_maps(&p));
    wire = proto_plan_wire_text(canon);
    assert_non_null(strstr(wire, "\"targets\":[{\"path\":\"/dev/sdc\"}]"));
    free(wire);
    free(canon);
    iof_plan_free(&p);

    load(PLAN("", "{'path':'/dev/sdc'}"), NULL, 0, &p, NULL);
    assert_false(proto_plan_has_target_maps(&p));
    iof_plan_free(&p);
}

static void test_braces(void **state)
{
    struct iof_plan p;

    (void)state;
    /* Each entry expands on its own; target j takes every entry's j-th. */
    load(PLAN("", "{'path':{'n1':'/dev/disk{1..3}','n2':'/dev/nvme{1..3}n1','*':'f{00..02}.dat'},"
                  "'size':'1m'},{'path':'/dev/last'}"),
         NULL, 0, &p, NULL);
    assert_int_equal(p.workers[0].ntargets, 4);
    assert_string_equal(p.workers[0].targets[0].path, "f00.dat");
    assert_string_equal(iof_target_path(&p.workers[0].targets[0], "n1"), "/dev/disk1");
    assert_string_equal(iof_target_path(&p.workers[0].targets[2], "n1"), "/dev/disk3");
    assert_string_equal(iof_target_path(&p.workers[0].targets[2], "n2"), "/dev/nvme3n1");
    assert_string_equal(p.workers[0].targets[2].path, "f02.dat");
    assert_string_equal(p.workers[0].targets[3].path, "/dev/last");
    assert_int_equal(p.workers[0].targets[3].nnode_paths, 0);
    iof_plan_free(&p);

    expect_msg(PLAN("", "{'path':{'n1':'/dev/disk{1..3}','n2':'/dev/nvme1n1'}}"), NULL, 0,
               "plan.json: workers[0].targets[0].path: the entry of 'n1' names 3 targets and the "
               "entry of 'n2' 1: every entry must name the same number of targets");
    expect_msg(PLAN("", "{'path':{'n1':'/dev/disk{1..3}','n2':'/dev/disk{3..1}'}}"), NULL, 0,
               "plan.json: workers[0].targets[0].path.n2: range '{3..1}' counts down: write "
               "{1..3}");
}

static void test_bad_maps(void **state)
{
    (void)state;
    expect_msg(PLAN("", "{'path':{'node1':5}}"), NULL, 0,
               "plan.json: workers[0].targets[0].path.node1: must be a string, got number");
    expect_msg(PLAN("", "{'path':{}}"), NULL, 0,
               "plan.json: workers[0].targets[0].path: an empty map names no path: give "
               "{\"NODE\": \"PATH\", ...}, with \"*\" for every other node");
    expect_msg(PLAN("", "{'path':{'bad key':'/dev/sdb'}}"), NULL, 0,
               "plan.json: workers[0].targets[0].path: node name 'bad key': byte 3 (0x20) is "
               "not allowed: use ASCII letters, digits, '.', '_' and '-' (a key of a per-node map "
               "is an agent's name or "
               "\"*\")");
    expect_msg(PLAN("", "{'path':{'n1':'/dev/sdb','n1':'/dev/sdc'}}"), NULL, 0,
               "plan.json: workers[0].targets[0].path: node 'n1' is given twice");
    expect_msg(PLAN("", "{'path':{'n1':'/dev/sdb','n2':'../x'}}"), NULL, 0,
               "plan.json: workers[0].targets[0].path.n2: must not contain a '..' component");
    expect_msg(PLAN("", "{'path':{'n1':'/dev/sdb','n2':'x.dat'}}"), NULL, 0,
               "plan.json: workers[0].targets[0].size: 'x.dat' is a test file to create (the "
               "path of 'n2'): give it a size greater than 0");
    expect_msg(PLAN("'nodes':['n1','n3'],", "{'path':{'n1':'/dev/sdb','n2':'/dev/sdc'}}"), NULL, 0,
               "plan.json: workers[0].targets[0].path: no path for node 'n3' and no \"*\" entry");
    /* One test file, one size, whichever node's entry names it. */
    expect_msg(HEAD "'workers':[{'targets':[{'path':{'n1':'a.dat','*':'b.dat'},'size':'1m'}]},"
                    "{'targets':[{'path':'a.dat','size':'2m'}]}]}",
               NULL, 0,
               "plan.json: workers[1].targets[0].size: test file 'a.dat' is 1m in "
               "workers[0].targets[0]; one file cannot have two sizes, got 2m");
}

static void test_set(void **state)
{
    struct iof_plan p;
    char *canon = NULL;
    const char *ov[] = {"workers[0].targets[0].path.node1=/dev/sdb",
                        "workers[0].targets[0].path.node-2=/dev/sdd"};
    const char *obj[] = {"workers[0].targets[0].path={\"n1\":\"/dev/sdb\",\"*\":\"/dev/sdc\"}"};
    const char *un[] = {"workers[0].targets[0].path.n1=/dev/sdb", "workers[0].targets[0].path.n1"};
    const char *deep[] = {"workers[0].targets[0].path.n1[0]=/dev/sdb"};
    /* Node names as hosts are named: dots, and up to PROTO_NODE_NAME_MAX. */
    const char *dotted[] = {
        "workers[0].targets[0].path.esx01.lab.example=/dev/sdb",
        "workers[0].targets[0].path.n1234567890123456789012345678901234567890123456789012345"
        "678901.x=/dev/sdd"};
    const char *badname[] = {"workers[0].targets[0].path..esx01=/dev/sdb"};

    (void)state;
    /* A plain path becomes the map's "*" entry. */
    load(PLAN("", "{'path':'/dev/sdc'}"), ov, 2, &p, &canon);
    assert_string_equal(p.workers[0].targets[0].path, "/dev/sdc");
    assert_string_equal(iof_target_path(&p.workers[0].targets[0], "node1"), "/dev/sdb");
    assert_string_equal(iof_target_path(&p.workers[0].targets[0], "node-2"), "/dev/sdd");
    assert_non_null(strstr(canon, "\"path\":{\"*\":\"/dev/sdc\",\"node1\":\"/dev/sdb\""));
    free(canon);
    iof_plan_free(&p);

    load(PLAN("", "{'path':'/dev/sdx'}"), obj, 1, &p, NULL);
    assert_string_equal(iof_target_path(&p.workers[0].targets[0], "n1"), "/dev/sdb");
    assert_string_equal(p.workers[0].targets[0].path, "/dev/sdc");
    iof_plan_free(&p);

    /* --unset of an entry. */
    load(PLAN("", "{'path':{'*':'/dev/sdc'}}"), un, 2, &p, NULL);
    assert_int_equal(p.workers[0].targets[0].nnode_paths, 0);
    iof_plan_free(&p);

    expect_msg(PLAN("", "{'path':'/dev/sdc'}"), deep, 1,
               "--set workers[0].targets[0].path.n1[0]=/dev/sdb: 'workers[0].targets[0].path.n1' "
               "is a path, it has no keys");

    load(PLAN("", "{'path':'/dev/sdc'}"), dotted, 2, &p, NULL);
    assert_string_equal(iof_target_path(&p.workers[0].targets[0], "esx01.lab.example"), "/dev/sdb");
    assert_string_equal(iof_target_path(&p.workers[0].targets[0],
                                        "n123456789012345678901234567890123456789012345678901234"
                                        "5678901.x"),
                        "/dev/sdd");
    assert_string_equal(iof_target_path(&p.workers[0].targets[0], "esx01"), "/dev/sdc");
    iof_plan_free(&p);
    expect_msg(
        PLAN("", "{'path':'/dev/sdc'}"), badname, 1,
        "--set workers[0].targets[0].path..esx01=/dev/sdb: node name '.esx01': must not start "
        "with '.'");
}

struct warns {
    char msg[4][512];
    size_t n;
};

static void warn_fn(void *arg, const char *msg)
{
    struct warns *w = arg;
    if (w->n < 4)
        snprintf(w->msg[w->n++], sizeof(w->msg[0]), "%s", msg);
}

static void test_map_check(void **state)
{
    struct iof_plan p;
    struct iof_diag d = {{0}};
    struct warns w = {0};
    char *canon = NULL;
    const char *agents[] = {"node1", "node2", "node3"};

    (void)state;
    load(PLAN("", "{'path':{'node1':'/dev/sdb','node2':'/dev/sdc','node22':'/dev/sdd'}}"), NULL, 0,
         &p, &canon);
    /* Without agents a group of "*" cannot be checked. */
    assert_int_equal(proto_plan_map_check(canon, NULL, 0, warn_fn, &w, &d), 0);
    assert_int_equal(w.n, 0);
    /* node3 runs it and has no path; node22 names no node (a typo). */
    assert_int_equal(proto_plan_map_check(canon, agents, 3, warn_fn, &w, &d), IOF_EPLAN);
    assert_string_equal(d.msg,
                        "workers[0].targets[0].path: no path for node 'node3' and no \"*\" entry");
    assert_int_equal(w.n, 1); /* the typo is told before the error */
    w.n = 0;
    assert_int_equal(proto_plan_map_check(canon, agents, 2, warn_fn, &w, &d), 0);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.msg[0], "workers[0].targets[0].path: key 'node22' names no node the "
                                  "group runs on (did you mean 'node2'?)");
    free(canon);
    iof_plan_free(&p);

    /* A group naming its nodes is checked without agents too. */
    w.n = 0;
    load(PLAN("'nodes':['alpha','beta'],", "{'path':{'alpha':'/dev/sdb','betta':'/dev/sdc','*':"
                                           "'/dev/sdd'}}"),
         NULL, 0, &p, &canon);
    assert_int_equal(proto_plan_map_check(canon, NULL, 0, warn_fn, &w, &d), 0);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.msg[0], "workers[0].targets[0].path: key 'betta' names no node the "
                                  "group runs on (did you mean 'beta'?)");
    free(canon);
    iof_plan_free(&p);
}

static void test_node_text(void **state)
{
    struct iof_plan p, q;
    struct iof_diag d = {{0}};
    char *canon = NULL, *t1, *t3;

    (void)state;
    load(HEAD "'workers':[{'nodes':['n1','n2'],'targets':[{'path':{'n1':'/dev/sdb','n2':'/dev/"
              "sdc'}}]},{'targets':[{'path':{'n2':'/dev/sdx','*':'/dev/sdy'}}]}]}",
         NULL, 0, &p, &canon);
    t1 = proto_plan_node_text(canon, "n1", &d);
    assert_non_null(t1);
    assert_non_null(strstr(t1, "\"targets\":[{\"path\":\"/dev/sdb\"}]"));
    assert_non_null(strstr(t1, "\"targets\":[{\"path\":\"/dev/sdy\"}]"));
    /* What the agent parses: plain paths, its own. */
    assert_int_equal(proto_plan_parse("wire", t1, strlen(t1), NULL, 0, &q, &d), 0);
    assert_false(proto_plan_has_target_maps(&q));
    iof_plan_free(&q);
    /* n3 does not run the first group: any path will do there. */
    t3 = proto_plan_node_text(canon, "n3", &d);
    assert_non_null(t3);
    assert_non_null(strstr(t3, "\"targets\":[{\"path\":\"/dev/sdy\"}]"));
    free(t1);
    free(t3);
    free(canon);
    iof_plan_free(&p);

    /* A node a group runs on without a path in its map: refused. */
    load(PLAN("", "{'path':{'n1':'/dev/sdb'}}"), NULL, 0, &p, &canon);
    assert_null(proto_plan_node_text(canon, "n2", &d));
    assert_string_equal(d.msg,
                        "workers[0].targets[0].path: no path for node 'n2' and no \"*\" entry");
    free(canon);
    iof_plan_free(&p);
}

static void test_print(void **state)
{
    struct iof_plan p;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    assert_non_null(f);
    load(PLAN("", "{'path':{'n1':'/dev/sdb','*':'/dev/sdc'}}"), NULL, 0, &p, NULL);
    proto_plan_print(&p, f);
    fclose(f);
    assert_non_null(strstr(buf, "  target {n1 '/dev/sdb', * '/dev/sdc'} (existing size)\n"));
    free(buf);
    iof_plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_map),  cmocka_unit_test(test_braces),
        cmocka_unit_test(test_bad_maps),  cmocka_unit_test(test_set),
        cmocka_unit_test(test_map_check), cmocka_unit_test(test_node_text),
        cmocka_unit_test(test_print),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
