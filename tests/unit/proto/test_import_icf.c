/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_import_icf.c - proto/import_icf.c: Iometer configuration
 * files of several shapes (1.1.0 and date-style headers, merged workers, two
 * managers, queue-depth cycling, old field layouts) as the plans they become
 * (checked through the plan loader), --map of Windows target names, the
 * placeholder the loader refuses by name, and the exact messages for lines
 * that cannot be mapped. The .icf files are tests/data/iometer/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/spec.h"
#include "proto/import.h"
#include "proto/plan.h"

#ifndef IOF_SRC_DIR
#error "IOF_SRC_DIR must be defined"
#endif

struct result {
    int rc, prc;
    struct iof_buf json, msgs;
    struct iof_diag diag;
    struct iof_plan plan;
};

static char *slurp(const char *rel)
{
    char path[512];
    FILE *f;
    char *text = calloc(1, 1 << 20);
    size_t n;

    snprintf(path, sizeof(path), "%s/tests/data/iometer/%s", IOF_SRC_DIR, rel);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(text);
    n = fread(text, 1, (1 << 20) - 1, f);
    text[n] = 0;
    fclose(f);
    return text;
}

/* Imports with --sector-size `sector` (0: not given). */
static void import_ss(const char *text, const char *const *maps, size_t nmaps, unsigned sector,
                      struct result *r)
{
    memset(r, 0, sizeof(*r));
    r->rc = proto_import_icf("t.icf", text, strlen(text), maps, nmaps, sector, &r->json, &r->msgs,
                             &r->diag);
    r->prc = -1;
    if (!r->rc)
        r->prc = proto_plan_parse("t.icf", r->json.p, r->json.len, NULL, 0, &r->plan, &r->diag);
}

/* The files above count 512-byte sectors. */
static void import(const char *text, const char *const *maps, size_t nmaps, struct result *r)
{
    import_ss(text, maps, nmaps, 512, r);
}

static void done(struct result *r)
{
    iof_buf_free(&r->json);
    iof_buf_free(&r->msgs);
    iof_plan_free(&r->plan);
}

static const char *msgs(const struct result *r)
{
    return r->msgs.p ? r->msgs.p : "";
}

static void test_two_workers_merge(void **state)
{
    static const char *const maps[] = {"1:=/dev/sdb"};
    char *text = slurp("two-workers.icf");
    struct result r;
    (void)state;

    import(text, maps, 1, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.prc, 0);
    assert_string_equal(r.plan.name, "vsan 4k mixed");
    assert_int_equal(r.plan.run.duration_ns, 30000000000ull);
    assert_int_equal(r.plan.run.ramp_ns, 5000000000ull);
    assert_int_equal(r.plan.nspecs, 2);
    assert_string_equal(r.plan.specs[0].name, "4K; 70% Read; 100% random");
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 70);
    assert_int_equal(r.plan.specs[1].nlines, 2);
    assert_int_equal(r.plan.specs[1].lines[1].share, 20);
    assert_int_equal(r.plan.specs[1].lines[1].delay_ns, 2000000);
    assert_int_equal(r.plan.specs[1].lines[1].burst, 4);
    /* Iometer's align 0 is the sector. */
    assert_int_equal(r.plan.specs[1].lines[1].align, 512);
    assert_int_equal(r.plan.nworkers, 1);
    assert_int_equal(r.plan.workers[0].count, 2);
    assert_int_equal(r.plan.workers[0].queue_depth, 16);
    assert_true(r.plan.workers[0].has_seed);
    assert_int_equal(r.plan.workers[0].seed, 42);
    assert_int_equal(r.plan.workers[0].pattern, IOF_PATTERN_PSEUDO);
    assert_string_equal(r.plan.workers[0].targets[0].path, "/dev/sdb");
    assert_int_equal(r.plan.workers[0].targets[0].range_size, 1ull << 30);
    assert_non_null(strstr(msgs(&r), "t.icf:10: ignored: Default Disk Workers to Spawn"));
    assert_non_null(strstr(
        msgs(&r), "t.icf:28: ignored: lines 28-33, the results display (Iometer's screen)\n"));
    done(&r);

    /* Without --map: the placeholder, which the plan loader refuses by name. */
    import(text, NULL, 0, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.prc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "t.icf:66: note: target '1: \"VMware Virtual disk\"' has no "
                                     "--map"));
    assert_non_null(strstr(r.diag.msg, "Iometer target placeholder"));
    done(&r);
    free(text);
}

static void test_date_header_and_cycle(void **state)
{
    static const char *const maps[] = {"PHYSICALDRIVE:1=/dev/sdc"};
    char *text = slurp("qd-sweep-2006.icf");
    struct result r;
    (void)state;

    import(text, maps, 1, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.prc, 0);
    assert_int_equal(r.plan.cycle.param, IOF_CYCLE_QUEUE_DEPTH);
    assert_int_equal(r.plan.cycle.from, 1);
    assert_int_equal(r.plan.cycle.to, 32);
    assert_true(r.plan.cycle.exponential);
    assert_int_equal(r.plan.workers[0].queue_depth, 1);
    assert_int_equal(r.plan.workers[0].pattern, IOF_PATTERN_REPEAT);
    assert_int_equal(r.plan.workers[0].targets[0].range_offset, 2048 * 512);
    assert_int_equal(r.plan.workers[0].targets[0].range_size, 131072ull * 512);
    assert_int_equal(r.plan.specs[0].lines[0].size, 512);
    done(&r);
    free(text);
}

static void test_two_managers(void **state)
{
    static const char *const maps[] = {"C:=/dev/sdb", "D:=/dev/sdc"};
    char *text = slurp("two-managers-2004.icf");
    struct result r;
    (void)state;

    import(text, maps, 2, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.prc, 0);
    assert_int_equal(r.plan.nworkers, 2);
    assert_string_equal(r.plan.workers[0].nodes[0], "node1");
    assert_string_equal(r.plan.workers[1].nodes[0], "node2");
    assert_string_equal(r.plan.workers[1].targets[0].path, "/dev/sdc");
    assert_int_equal(r.plan.workers[0].pattern, IOF_PATTERN_RANDOM);
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 0);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 0);
    done(&r);
    free(text);
}

static void test_unmappable(void **state)
{
    char *text = slurp("two-workers.icf");
    char *p;
    struct result r;
    (void)state;

    /* Worker 2 runs the Idle spec second. */
    p = strstr(strstr(text, "\tWorker 2"), "\tOLTP mix");
    assert_non_null(p);
    memcpy(p, "\tIdle    ", 9);
    import(text, NULL, 0, &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "t.icf:84: error: cannot map the Idle specification: every "
                                     "worker group of a plan runs in every test\n"));
    done(&r);
    free(text);

    import("Version 1997.01.01\n", NULL, 0, &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_string_equal(msgs(&r), "t.icf:1: error: version 1997.01.01: configuration files older "
                                  "than 1998.05.21 (unnamed access specifications) are not "
                                  "mapped\n");
    done(&r);

    import("[global]\nrw=read\n", NULL, 0, &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_string_equal(msgs(&r), "t.icf:1: error: not an Iometer configuration file (the first "
                                  "line is not 'Version ...')\n");
    done(&r);

    text = slurp("qd-sweep-2006.icf");
    p = strstr(text, "\t0          1          0");
    memcpy(p, "\t0          0          0", 24);
    p = strstr(text, "CYCLE_OUTSTANDING_IOS");
    memcpy(p, "INCREMENT_TARGETS_PARA", 21);
    import(text, NULL, 0, &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "t.icf:7: error: no run time (Iometer runs until stopped)"));
    done(&r);
    free(text);
}

static void test_garbage(void **state)
{
    struct result r;
    (void)state;
    import("Version 1.1.0\n'MANAGER LIST ===\n'Worker\n\tw\n\x01\x02\n'END manager list\n", NULL, 0,
           &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "t.icf:3: error: a worker before any 'Manager ID"));
    assert_non_null(strstr(msgs(&r), "t.icf:5: cannot map this line: a value without its comment "
                                     "line\n"));
    done(&r);
    import("Version 1.1.0\n'ACCESS SPECIFICATIONS\n'Access specification name,default "
           "assignment\n\tx,NONE\n'size,% of size\n\t4096,100,170,0,0,1,0,0\n",
           NULL, 0, &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "t.icf:6: error: cannot map this access specification line"));
    done(&r);
}

/* The two-workers file with `from` (found once) replaced by `to`. */
static char *edited(const char *from, const char *to)
{
    char *text = slurp("two-workers.icf"), *at = strstr(text, from), *out;

    assert_non_null(at);
    out = calloc(1, strlen(text) + strlen(to) + 1);
    assert_non_null(out);
    memcpy(out, text, (size_t)(at - text));
    strcat(out, to);
    strcat(out, at + strlen(from));
    free(text);
    return out;
}

/* A control character in any name or path of the file is refused by
 * common/text.h's policy, with the line, the field and the character
 * escaped; none reaches the messages raw. */
static void test_control_characters_refused(void **state)
{
    static const struct {
        const char *from, *to, *msg;
    } cases[] = {
        {"vsan 4k mixed", "vsan\x1b]0;owned\x07",
         "t.icf:4: error: test description 'vsan\\x1b]0;owned\\x07': must not contain control "
         "characters, got \\x1b (a control character) at byte 4\n"},
        {"4K; 70% Read; 100% random,NONE", "4K\x1b[2J,NONE",
         "t.icf:36: error: access specification name '4K\\x1b[2J': must not contain control "
         "characters, got \\x1b (a control character) at byte 2\n"},
        {"1,TESTVM1", "1,TEST\x07VM1",
         "t.icf:47: error: manager name 'TEST\\x07VM1': must not contain control characters, got "
         "\\x07 (a control character) at byte 4\n"},
        {"Worker 1\n",
         "Worker\x7f"
         "1\n",
         "t.icf:51: error: worker name 'Worker\\x7f1': must not contain control characters, got "
         "\\x7f (a control character) at byte 6\n"},
        {"1: \"VMware Virtual disk\"",
         "1: \"VMware\xc2\x9b"
         "disk\"",
         "t.icf:66: error: target name '1: \"VMware\\u009bdisk\"': must not contain control "
         "characters, got \\u009b (a C1 control character) at byte 10\n"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = edited(cases[i].from, cases[i].to);
        struct result r;
        import(text, NULL, 0, &r);
        assert_int_equal(r.rc, IOF_EPLAN);
        if (!strstr(msgs(&r), cases[i].msg))
            fail_msg("case %zu: %s", i, msgs(&r));
        assert_null(strpbrk(msgs(&r), "\x1b\x07\x7f"));
        done(&r);
        free(text);
    }
}

/* How many lines of the messages hold `what`. */
static unsigned count_lines(const struct result *r, const char *what)
{
    unsigned n = 0;
    for (const char *p = msgs(r); (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* Starting sector, maximum disk size and align 0 are in the disk's
 * sectors: 4096 bytes with --sector-size 4096, and without it a non-zero
 * region is refused (one error) while align 0 is 512, noted once. */
static void test_sector_size(void **state)
{
    static const char *const maps[] = {"PHYSICALDRIVE:1=/dev/sdb"};
    char *text = slurp("sectors-4kn.icf");
    struct result r;
    (void)state;

    import_ss(text, maps, 1, 4096, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.prc, 0);
    assert_int_equal(r.plan.workers[0].targets[0].range_offset, 256ull * 4096);
    assert_int_equal(r.plan.workers[0].targets[0].range_size, 262144ull * 4096);
    assert_int_equal(r.plan.specs[0].lines[0].align, 4096);
    assert_null(strstr(msgs(&r), "align 0"));
    done(&r);

    import_ss(text, maps, 1, 512, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].targets[0].range_offset, 256ull * 512);
    assert_int_equal(r.plan.workers[0].targets[0].range_size, 262144ull * 512);
    assert_int_equal(r.plan.specs[0].lines[0].align, 512);
    done(&r);

    import_ss(text, maps, 1, 0, &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "t.icf:32: error: maximum disk size 262144 and starting "
                                     "sector 256 of worker 'Worker 1' are counted in the disk's "
                                     "sectors, whose size the file does not say: give "
                                     "--sector-size 512, or 4096 for 4Kn disks\n"));
    assert_int_equal(count_lines(&r, "error:"), 1);
    done(&r);
    free(text);

    /* No region: imports; align 0 is 512, said once. */
    text = slurp("after-end.icf");
    import_ss(text, maps, 1, 0, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.prc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].align, 512);
    assert_non_null(strstr(msgs(&r), "t.icf:17: note: align 0 (Iometer: on the disk's sectors) is "
                                     "written as 512"));
    assert_int_equal(count_lines(&r, "align 0"), 1);
    done(&r);
    free(text);
}

/* A worker written after 'END manager list: Iometer never reads it; one
 * warning naming the lines, not one per line. */
static void test_worker_after_end(void **state)
{
    static const char *const maps[] = {"PHYSICALDRIVE:1=/dev/sdb"};
    char *text = slurp("after-end.icf");
    struct result r;
    (void)state;

    import(text, maps, 1, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.prc, 0);
    assert_int_equal(r.plan.nworkers, 1);
    assert_int_equal(r.plan.workers[0].count, 1);
    assert_non_null(strstr(msgs(&r), "t.icf:47: ignored: lines 47-67, manager list entries after "
                                     "its 'END manager list (line 46): Iometer stops reading "
                                     "there, so these workers do not run in Iometer either; move "
                                     "them above line 46 to run them\n"));
    assert_int_equal(count_lines(&r, "\n"), 1);
    done(&r);
    free(text);

    /* Stray lines with no worker among them: one warning too. */
    import("Version 1.1.0\n'Junk\n\tone\n\ttwo\n'More junk\n\tthree\n", NULL, 0, &r);
    assert_non_null(strstr(msgs(&r), "t.icf:2: ignored: lines 2-6, outside every section "
                                     "(Iometer skips them)\n"));
    assert_int_equal(count_lines(&r, "outside every section"), 1);
    done(&r);
}

/* A second section of a kind: Iometer reads the first only; one warning
 * each, and the workers are not doubled. */
static void test_repeated_sections(void **state)
{
    static const char *const maps[] = {"PHYSICALDRIVE:1=/dev/sdb"};
    char *text = slurp("repeated.icf");
    struct result r;
    (void)state;

    import(text, maps, 1, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.prc, 0);
    assert_int_equal(r.plan.nspecs, 1);
    assert_int_equal(r.plan.nworkers, 1);
    assert_int_equal(r.plan.workers[0].count, 1);
    assert_non_null(strstr(msgs(&r), "t.icf:47: ignored: lines 47-52, a second access "
                                     "specifications section (the first begins at line 13): "
                                     "Iometer reads only the first\n"));
    assert_non_null(strstr(msgs(&r), "t.icf:53: ignored: lines 53-80, a second manager list "
                                     "section (the first begins at line 19): Iometer reads only "
                                     "the first\n"));
    assert_int_equal(count_lines(&r, "\n"), 2);
    done(&r);
    free(text);
}

/* Wrong lines in a row, or the same fault in every worker: one message. */
static void test_one_message_per_fault(void **state)
{
    char *text = slurp("two-workers.icf"), *p;
    struct result r;
    (void)state;

    /* Both workers assign a spec the file does not define. */
    while ((p = strstr(text, "\tOLTP mix\n")))
        memcpy(p, "\tOLTP miz\n", 10);
    import(text, NULL, 0, &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_int_equal(count_lines(&r, "error:"), 1);
    assert_non_null(strstr(msgs(&r), "t.icf:62: error: access specification 'OLTP miz' is not "
                                     "defined in the access specifications Iometer reads (the "
                                     "first such section), nor are more assigned after it\n"));
    done(&r);
    free(text);

    import("Version 1.1.0\n'ACCESS SPECIFICATIONS\n\ta\n\tb\n\tc\n'END access "
           "specifications\n",
           NULL, 0, &r);
    assert_non_null(strstr(msgs(&r), "t.icf:3: cannot map lines 3-5: values without their "
                                     "comment line\n"));
    assert_int_equal(count_lines(&r, "values without"), 1);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_workers_merge), cmocka_unit_test(test_date_header_and_cycle),
        cmocka_unit_test(test_two_managers),      cmocka_unit_test(test_unmappable),
        cmocka_unit_test(test_garbage),           cmocka_unit_test(test_control_characters_refused),
        cmocka_unit_test(test_sector_size),       cmocka_unit_test(test_worker_after_end),
        cmocka_unit_test(test_repeated_sections), cmocka_unit_test(test_one_message_per_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
