/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_plan.c - the plan loader (proto/plan.c) and plan
 * expansion (common/spec.c): good plans with every default checked, bad plans
 * with their exact message, units, cycles, --set overrides, printing.
 *
 * Plans are written with single quotes for readability; sq() turns them into
 * JSON. Messages are compared verbatim. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/spec.h"
#include "proto/plan.h"

#define MIB (1024ull * 1024)
#define S_NS 1000000000ull
#define MS_NS 1000000ull

/* JSON from single-quoted text (tests never need a literal apostrophe). */
static char *sq(const char *s)
{
    static char buf[64 * 1024];
    size_t n = strlen(s);

    assert_true(n < sizeof(buf));
    for (size_t i = 0; i <= n; i++)
        buf[i] = s[i] == '\'' ? '"' : s[i];
    return buf;
}

static int parse_ov(const char *plan, const char *const *ov, size_t nov, struct iof_plan *p,
                    struct iof_diag *d)
{
    const char *text = sq(plan);

    return proto_plan_parse("plan.json", text, strlen(text), ov, nov, p, d);
}

static void load_good(const char *plan, const char *const *ov, size_t nov, struct iof_plan *p)
{
    struct iof_diag d = {{0}};
    int rc = parse_ov(plan, ov, nov, p, &d);

    if (rc)
        fail_msg("unexpected error %d: %s", rc, d.msg);
}

static void expect_msg(const char *plan, const char *const *ov, size_t nov, const char *msg)
{
    struct iof_plan p;
    struct iof_diag d = {{0}};
    int rc = parse_ov(plan, ov, nov, &p, &d);

    assert_int_equal(rc, IOF_EPLAN);
    assert_string_equal(d.msg, msg);
    /* On failure the plan is left empty. */
    assert_null(p.specs);
    assert_null(p.workers);
    assert_int_equal(p.nspecs, 0);
    iof_plan_free(&p);
}

/* Building blocks of a minimal valid plan. */
#define NAME "'name':'p'"
#define RUN "'run':{'duration':'5s'}"
#define SPECS "'specs':[{'name':'a','lines':[{'size':'4k'}]}]"
#define WORKERS "'workers':[{'targets':[{'path':'f.dat','size':'1m'}]}]"
#define GOOD "{" NAME "," RUN "," SPECS "," WORKERS "}"
/* The engine of a group that names none: the one of the agent's system
 * (common/engine_facts.h, IOF_ENGINE_DEFAULT). */
#ifdef _WIN32
#define DEF_ENGINE "windows"
#else
#define DEF_ENGINE "libaio"
#endif
#define PLAN_RUN(r) "{" NAME ",'run':" r "," SPECS "," WORKERS "}"
#define PLAN_LINES(l) "{" NAME "," RUN ",'specs':[{'name':'a','lines':[" l "]}]," WORKERS "}"
#define PLAN_SPECS(s) "{" NAME "," RUN ",'specs':" s "," WORKERS "}"
#define PLAN_WORKERS(w) "{" NAME "," RUN "," SPECS ",'workers':" w "}"
#define PLAN_GROUP(g) PLAN_WORKERS("[{" g "}]")
#define PLAN_TARGETS(t) PLAN_GROUP("'targets':[" t "]")
#define PLAN_CYCLE(c) "{" NAME "," RUN "," SPECS "," WORKERS ",'cycle':" c "}"

/* One cmocka test per bad plan, so a failure names the case. */
#define BAD(id, plan, msg)                                                                         \
    static void test_bad_##id(void **state)                                                        \
    {                                                                                              \
        (void)state;                                                                               \
        expect_msg(plan, NULL, 0, msg);                                                            \
    }
#define BAD_SET(id, plan, set, msg)                                                                \
    static void test_bad_##id(void **state)                                                        \
    {                                                                                              \
        const char *ov[] = {set};                                                                  \
        (void)state;                                                                               \
        expect_msg(plan, ov, 1, msg);                                                              \
    }

/* ---- document level ---- */
BAD(json_syntax, "{'name':",
    "plan.json: invalid JSON at line 1, column 9, at the end of the text: the text ends where a "
    "value should be")
BAD(json_trailing, GOOD " x",
    "plan.json: invalid JSON at line 1, column 140: unexpected text after the plan")
BAD(json_empty, "",
    "plan.json: invalid JSON at line 1, column 1, at the end of the text: empty: a plan is one "
    "JSON object")
BAD(json_line_col, "{\n  'name': 'p',\n  'run': {'duration': '5s',}\n}",
    "plan.json: invalid JSON at line 3, column 27, at ',': a trailing comma before '}': JSON "
    "allows none after the last member")

/* A syntax error names the line and column, the token there and the likely
 * cause (raw text: no single-quote shorthand). */
static void test_json_syntax_causes(void **state)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"{\"name\": \"p\",\n \"specs\": [{\"name\": \"a\"},]}",
         "line 2, column 25, at ',': a trailing comma before ']': JSON allows none after the last "
         "element"},
        {"{\"name\": \"p\"\n \"run\": {}}",
         "line 2, column 2, at '\"': a missing ',' before this member"},
        {"{\"lines\": [1 2]}", "line 1, column 14, at '2': a missing ',' before this element"},
        {"{\n  name: \"p\"}",
         "line 2, column 3, at 'name': an unquoted key: JSON keys need double quotes (\"name\")"},
        {"{\"name\": \"p\", // the plan\n}",
         "line 1, column 15, at '//': a comment: JSON has no comments (remove it)"},
        {"{\"name\": \"p\" /* x */}",
         "line 1, column 14, at '/*': a comment: JSON has no comments (remove it)"},
        {"# plan\n{}", "line 1, column 1, at '#': a comment: JSON has no comments (remove it)"},
        {"{'name': 'p'}",
         "line 1, column 2, at \"'\": single quotes: JSON keys need double quotes"},
        {"{\"name\": 'p'}",
         "line 1, column 10, at \"'\": single quotes: JSON strings need double quotes"},
        {"{\"size\": 4k}", "line 1, column 10, at '4k': a number followed by text: a size or "
                           "duration with a unit is a string (\"4k\", \"10s\")"},
        {"{\"run\": {\"duration\": 10s}}",
         "line 1, column 22, at '10s': a number followed by text: a size or duration with a unit "
         "is a string (\"4k\", \"10s\")"},
        {"{\"path\": \"C:\\data\"}",
         "line 1, column 13, at '\\': an invalid escape: use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or "
         "\\uXXXX (a Windows path needs \\\\ or /)"},
        {"{\"name\": \"p", "line 1, column 10, at '\"': a string that is never closed (a missing "
                           "'\"')"},
        {"{\"name\": \"p\"", "line 1, column 13, at the end of the text: the text ends inside an "
                             "object (a missing '}')"},
        {"{\"name\" \"p\"}", "line 1, column 9, at '\"': a missing ':' after the key"},
        {"{\"a\": [1}", "line 1, column 9, at '}': '}' where ',' or ']' should close the array"},
    };
    int bad = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct iof_plan p;
        struct iof_diag d = {{0}};
        char want[512];
        int rc =
            proto_plan_parse("plan.json", cases[i].text, strlen(cases[i].text), NULL, 0, &p, &d);
        snprintf(want, sizeof(want), "plan.json: invalid JSON at %s", cases[i].msg);
        assert_int_equal(rc, IOF_EPLAN);
        if (strcmp(d.msg, want)) {
            print_error("case %zu:\n got  %s\n want %s\n", i, d.msg, want);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}
BAD(root_array, "[1]", "plan.json: must be a JSON object, got array")
BAD(nul_escape, "{'name':'a\\u0000b'}",
    "plan.json: line 1, column 11: \\u0000 (NUL) is not allowed in strings")
BAD(root_unknown_key, "{" NAME "," RUN "," SPECS "," WORKERS ",'foo':1}",
    "plan.json: unknown key 'foo' (expected one of: name, run, specs, workers, cycle, notes)")
BAD(root_typo_key, "{" NAME "," RUN "," SPECS ",'worker':[]}",
    "plan.json: unknown key 'worker' (did you mean 'workers'?)")
BAD(root_duplicate_key, "{" NAME "," NAME "," RUN "," SPECS "," WORKERS "}",
    "plan.json: duplicate key 'name'")
BAD(name_missing, "{" RUN "," SPECS "," WORKERS "}", "plan.json: name: required but missing")
BAD(name_number, "{'name':5," RUN "," SPECS "," WORKERS "}",
    "plan.json: name: must be a string, got number")
BAD(name_empty, "{'name':''," RUN "," SPECS "," WORKERS "}", "plan.json: name: must not be empty")

/* "notes": what an import approximated, kept and printed by validate, never
 * sent to the agents; strings only. */
static void test_good_notes(void **state)
{
    struct iof_plan p;
    char *buf = NULL, *wire;
    size_t len = 0;
    FILE *f;

    (void)state;
    load_good("{" NAME ",'notes':['j.fio:3: note: one','two']," RUN "," SPECS "," WORKERS "}", NULL,
              0, &p);
    assert_int_equal(p.nnotes, 2);
    assert_string_equal(p.notes[0], "j.fio:3: note: one");
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    proto_plan_print(&p, f);
    fclose(f);
    assert_non_null(strstr(buf, "notes: j.fio:3: note: one\n       two\n"));
    free(buf);
    iof_plan_free(&p);
    load_good(GOOD, NULL, 0, &p);
    assert_int_equal(p.nnotes, 0);
    iof_plan_free(&p);
    wire = proto_plan_wire_text(sq("{'name':'p','notes':['x'],'run':{'duration':'5s'}}"));
    assert_non_null(wire);
    assert_null(strstr(wire, "notes"));
    free(wire);
}
BAD(notes_not_string, "{" NAME ",'notes':[1]," RUN "," SPECS "," WORKERS "}",
    "plan.json: notes[0]: must be a string, got number")
BAD(notes_not_array, "{" NAME ",'notes':'x'," RUN "," SPECS "," WORKERS "}",
    "plan.json: notes: must be an array, got string")

/* ---- run ---- */
/* run.interval_histograms: left out AUTO, true ALWAYS, false NEVER; --set
 * too; the manager's key, never on the wire. */
static void test_good_interval_histograms(void **state)
{
    struct iof_plan p;
    const char *ov[] = {"run.interval_histograms=false"};
    char *wire;

    (void)state;
    load_good(GOOD, NULL, 0, &p);
    assert_int_equal(p.run.interval_hists, IOF_TARGET_HISTS_AUTO);
    iof_plan_free(&p);
    load_good(PLAN_RUN("{'duration':'5s','interval_histograms':true}"), NULL, 0, &p);
    assert_int_equal(p.run.interval_hists, IOF_TARGET_HISTS_ALWAYS);
    iof_plan_free(&p);
    load_good(GOOD, ov, 1, &p);
    assert_int_equal(p.run.interval_hists, IOF_TARGET_HISTS_NEVER);
    iof_plan_free(&p);
    wire = proto_plan_wire_text(
        sq("{'name':'p','run':{'duration':'5s','interval_histograms':true,'interval':'1s'}}"));
    assert_non_null(wire);
    assert_null(strstr(wire, "interval_histograms"));
    assert_non_null(strstr(wire, "\"interval\""));
    free(wire);
}
BAD(run_missing, "{" NAME "," SPECS "," WORKERS "}", "plan.json: run: required but missing")
BAD(run_array, PLAN_RUN("[]"), "plan.json: run: must be an object, got array")
BAD(run_unknown_key, PLAN_RUN("{'duration':'5s','time':'5s'}"),
    "plan.json: run: unknown key 'time' (expected one of: ramp, duration, interval, cleanup, "
    "target_histograms, interval_histograms)")
BAD(run_target_histograms_type, PLAN_RUN("{'duration':'5s','target_histograms':'yes'}"),
    "plan.json: run.target_histograms: must be true or false, got string")
BAD(run_interval_histograms_type, PLAN_RUN("{'duration':'5s','interval_histograms':1}"),
    "plan.json: run.interval_histograms: must be true or false, got number")
BAD(run_cleanup_type, PLAN_RUN("{'duration':'5s','cleanup':'yes'}"),
    "plan.json: run.cleanup: must be true or false, got string")
BAD(duration_missing, PLAN_RUN("{'ramp':'1s'}"),
    "plan.json: run.duration: required but missing (specs[0] has neither a duration nor an "
    "io_limit of its own)")
BAD(duration_zero, PLAN_RUN("{'duration':'0s'}"), "plan.json: run.duration: must be greater than 0")
BAD(duration_no_unit, PLAN_RUN("{'duration':'10'}"),
    "plan.json: run.duration: invalid duration '10': missing unit (ms, s, m or h); did you mean "
    "\"10s\"?")
BAD(duration_fraction, PLAN_RUN("{'duration':'1.5s'}"),
    "plan.json: run.duration: invalid duration '1.5s': fractions are not allowed; use a smaller "
    "unit")
BAD(duration_bad_unit, PLAN_RUN("{'duration':'5x'}"),
    "plan.json: run.duration: invalid duration '5x': unknown unit (use ms, s, m or h)")
BAD(ramp_too_long, PLAN_RUN("{'ramp':'100000h','duration':'5s'}"),
    "plan.json: run.ramp: must be at most 1h, got '100000h'")
BAD(duration_too_long, PLAN_RUN("{'duration':'169h'}"),
    "plan.json: run.duration: must be at most 168h, got '169h'")
BAD(duration_too_long_seconds, PLAN_RUN("{'duration':604801}"),
    "plan.json: run.duration: must be at most 168h, got 604801")
BAD(duration_negative, PLAN_RUN("{'duration':'-5s'}"),
    "plan.json: run.duration: invalid duration '-5s': must not be negative")
BAD(duration_bool, PLAN_RUN("{'duration':true}"),
    "plan.json: run.duration: must be a duration (a string like \"10s\", or seconds), got boolean")
BAD(duration_fraction_number, PLAN_RUN("{'duration':1.5}"),
    "plan.json: run.duration: must be a whole number of seconds, got 1.5")
BAD(duration_overflow, PLAN_RUN("{'duration':'99999999999h'}"),
    "plan.json: run.duration: invalid duration '99999999999h': too large")
BAD(ramp_negative, PLAN_RUN("{'ramp':-1,'duration':'5s'}"),
    "plan.json: run.ramp: must not be negative, got -1")
BAD(interval_small, PLAN_RUN("{'duration':'5s','interval':'50ms'}"),
    "plan.json: run.interval: must be at least 100ms, got '50ms'")
BAD(interval_long, PLAN_RUN("{'duration':'5s','interval':'10s'}"),
    "plan.json: run.interval: must not exceed run.duration (5s), got '10s'")
BAD(duration_below_default_interval, PLAN_RUN("{'duration':'500ms'}"),
    "plan.json: run.duration: must be at least run.interval (1s when not given), got '500ms'")

/* ---- specs and lines ---- */
BAD(specs_missing, "{" NAME "," RUN "," WORKERS "}", "plan.json: specs: required but missing")
BAD(specs_empty, PLAN_SPECS("[]"), "plan.json: specs: must not be empty")
BAD(specs_object, PLAN_SPECS("{}"), "plan.json: specs: must be an array, got object")
BAD(spec_not_object, PLAN_SPECS("['4k']"), "plan.json: specs[0]: must be an object, got string")
BAD(spec_name_missing, PLAN_SPECS("[{'lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].name: required but missing")
BAD(spec_name_duplicate,
    PLAN_SPECS("[{'name':'a','lines':[{'size':'4k'}]},{'name':'a','lines':[{'size':'8k'}]}]"),
    "plan.json: specs[1].name: duplicate spec name 'a' (also specs[0])")
BAD(lines_missing, PLAN_SPECS("[{'name':'a'}]"), "plan.json: specs[0].lines: required but missing")
BAD(lines_empty, PLAN_LINES(""), "plan.json: specs[0].lines: must not be empty")
BAD(line_not_object, PLAN_LINES("5"), "plan.json: specs[0].lines[0]: must be an object, got number")
BAD(dist_unknown, PLAN_LINES("{'size':'4k','distribution':'gauss:3'}"),
    "plan.json: specs[0].lines[0].distribution: must be \"uniform\", \"zipf:THETA\", "
    "\"pareto:H\", \"normal:SIGMA_PCT\" or \"zoned:ACCESS_PCT/RANGE_PCT:...\", got 'gauss:3'")
BAD(dist_theta, PLAN_LINES("{'size':'4k','distribution':'zipf:-1'}"),
    "plan.json: specs[0].lines[0].distribution: zipf theta must be a number > 0 and <= 10 (e.g. "
    "\"zipf:1.2\"), got 'zipf:-1'")
BAD(dist_pareto, PLAN_LINES("{'size':'4k','distribution':'pareto:1.0'}"),
    "plan.json: specs[0].lines[0].distribution: pareto h must be a number > 0 and < 1 (e.g. "
    "\"pareto:0.2\"), got 'pareto:1.0'")
BAD(dist_normal, PLAN_LINES("{'size':'4k','distribution':'normal:101'}"),
    "plan.json: specs[0].lines[0].distribution: normal sigma must be a percentage of the range > "
    "0 and <= 100 (e.g. \"normal:10\"), got 'normal:101'")
BAD(dist_zones_sum, PLAN_LINES("{'size':'4k','distribution':'zoned:60/10:30/90'}"),
    "plan.json: specs[0].lines[0].distribution: zones' access percentages add up to 90, not 100, "
    "got 'zoned:60/10:30/90'")
BAD(dist_zones_range, PLAN_LINES("{'size':'4k','distribution':'zoned:50/50:50/60'}"),
    "plan.json: specs[0].lines[0].distribution: zones' range percentages add up to 110, not 100, "
    "got 'zoned:50/50:50/60'")
BAD(dist_zone_form, PLAN_LINES("{'size':'4k','distribution':'zoned:50:50/100'}"),
    "plan.json: specs[0].lines[0].distribution: zone 0 must be ACCESS_PCT/RANGE_PCT in whole "
    "percentages (e.g. \"60/10\"), got 'zoned:50:50/100'")
BAD(dist_type, PLAN_LINES("{'size':'4k','distribution':1.2}"),
    "plan.json: specs[0].lines[0].distribution: must be a string, got number")

#define TWO_SPECS                                                                                  \
    "'specs':[{'name':'4k-70r','lines':[{'size':'4k','read':70}]},"                                \
    "{'name':'64k-seq-read','lines':[{'size':'64k','random':0}]},"                                 \
    "{'name':'8k-w','lines':[{'size':'8k','read':0}]}]"
#define GROUP(extra) "{" extra "'targets':[{'path':'f.dat','size':'1m'}]}"
#define PLAN_GROUPS(g) "{" NAME "," RUN "," TWO_SPECS ",'workers':[" g "]}"

BAD(group_spec_unknown, PLAN_GROUPS(GROUP("'name':'oltp','specs':['4k-70r','nope'],")),
    "plan.json: workers[0].specs[1]: names no spec of the plan's specs, got 'nope'")
BAD(group_spec_empty, PLAN_GROUPS(GROUP("'specs':[],")),
    "plan.json: workers[0].specs: must not be empty")
BAD(group_spec_type, PLAN_GROUPS(GROUP("'specs':'4k-70r',")),
    "plan.json: workers[0].specs: must be an array, got string")
BAD(group_name_dup, PLAN_GROUPS(GROUP("'name':'oltp',") "," GROUP("") "," GROUP("'name':'oltp',")),
    "plan.json: workers[2].name: duplicate group name 'oltp' (also workers[0])")
BAD(group_name_empty, PLAN_GROUPS(GROUP("'name':'',")),
    "plan.json: workers[0].name: must not be empty")

/* Iometer's per-worker assignment: test position i runs each listed
 * group's i-th spec and the plan's i-th spec in the other groups; a group
 * whose list ended idles. */
static void test_group_specs(void **state)
{
    struct iof_plan p;
    struct iof_test *t;
    size_t n;
    char label[256];
    (void)state;

    load_good(PLAN_GROUPS(GROUP("'name':'oltp','specs':['4k-70r'],") "," GROUP(
                  "'name':'backup','specs':['64k-"
                  "seq-read','8k-w','4k-70r','64k-"
                  "seq-read'],") "," GROUP("")),
              NULL, 0, &p);
    assert_string_equal(p.workers[0].name, "oltp");
    assert_string_equal(p.workers[2].name, "workers[2]");
    assert_false(p.workers[2].has_specs);
    assert_int_equal(iof_plan_positions(&p), 4);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 4);
    /* test 0: oltp 4k-70r, backup 64k-seq-read, the plain group the plan's spec 0 */
    assert_ptr_equal(iof_test_spec(&p, &t[0], 0), &p.specs[0]);
    assert_ptr_equal(iof_test_spec(&p, &t[0], 1), &p.specs[1]);
    assert_ptr_equal(iof_test_spec(&p, &t[0], 2), &p.specs[0]);
    iof_test_spec_label(&p, &t[0], label, sizeof(label));
    assert_string_equal(label, "4k-70r + 64k-seq-read");
    /* test 1: oltp's list ended */
    assert_null(iof_test_spec(&p, &t[1], 0));
    assert_ptr_equal(iof_test_spec(&p, &t[1], 1), &p.specs[2]);
    assert_ptr_equal(iof_test_spec(&p, &t[1], 2), &p.specs[1]);
    iof_test_spec_label(&p, &t[1], label, sizeof(label));
    assert_string_equal(label, "8k-w + 64k-seq-read");
    /* test 3: past the plan's three specs, only backup runs */
    assert_null(iof_test_spec(&p, &t[3], 0));
    assert_ptr_equal(iof_test_spec(&p, &t[3], 1), &p.specs[1]);
    assert_null(iof_test_spec(&p, &t[3], 2));
    iof_test_spec_label(&p, &t[3], label, sizeof(label));
    assert_string_equal(label, "64k-seq-read");
    free(t);
    iof_plan_free(&p);

    /* Every group with a list: as many positions as the longest list. */
    load_good(PLAN_GROUPS(GROUP("'specs':['8k-w'],") "," GROUP("'specs':['4k-70r','8k-w'],")), NULL,
              0, &p);
    assert_int_equal(iof_plan_positions(&p), 2);
    iof_plan_free(&p);

    /* With a queue-depth cycle: each position at every step. */
    load_good("{" NAME "," RUN "," TWO_SPECS ",'workers':[" GROUP("'specs':['8k-w'],") "," GROUP(
                  "'specs':['4k-70r','8k-w'],") "],'cycle':{'queue_depth':{'from':1,'to':4,"
                                                "'step':'x2'}}}",
              NULL, 0, &p);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 6);
    assert_int_equal(t[2].spec_index, 0);
    assert_int_equal(t[3].spec_index, 1);
    assert_null(iof_test_spec(&p, &t[3], 0));
    free(t);
    iof_plan_free(&p);
}

/* Groups running different specs at once share one window: the longest
 * ramp and duration of the specs that run in the test. */
static void test_group_specs_window(void **state)
{
    struct iof_plan p;
    struct iof_test *t;
    struct iof_run_cfg r;
    size_t n;
    (void)state;

    load_good("{" NAME ",'run':{'duration':'3s','ramp':'1s'},'specs':["
              "{'name':'a','duration':'2s','lines':[{'size':'4k'}]},"
              "{'name':'b','duration':'5s','ramp':'500ms','lines':[{'size':'4k'}]},"
              "{'name':'c','lines':[{'size':'4k'}]}],'workers':[" GROUP(
                  "'specs':['a','a'],") "," GROUP("'specs':['b','c'],") "]}",
              NULL, 0, &p);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 2);
    r = iof_test_run(&p, &t[0]); /* a (2s, ramp 1s) beside b (5s, ramp 0.5s) */
    assert_int_equal(r.duration_ns, 5 * S_NS);
    assert_int_equal(r.ramp_ns, 1 * S_NS);
    r = iof_test_run(&p, &t[1]); /* a beside c (the plan's 3s) */
    assert_int_equal(r.duration_ns, 3 * S_NS);
    free(t);
    iof_plan_free(&p);
}

/* A spec cycle expands first; a group listing a cycled spec runs its
 * expansions in order, so two groups listing two cycled specs run them side
 * by side, step by step. */
static void test_group_specs_cycle(void **state)
{
    struct iof_plan p;
    struct iof_test *t;
    size_t n;
    char label[256];
    (void)state;

    load_good("{" NAME "," RUN ",'specs':[{'name':'oltp','lines':[{'size':'4k','read':70}]},"
              "{'name':'backup','lines':[{'size':'64k','random':0}]},"
              "{'name':'mixed','lines':[{'size':'4k','share':50},{'size':'8k','share':50}]}],"
              "'workers':[" GROUP("'name':'a','specs':['oltp','mixed'],") "," GROUP(
                  "'name':'b','specs':['backup'],") "],'cycle':{'size':['4k','16k']}}",
              NULL, 0, &p);
    assert_int_equal(p.nspecs, 5); /* oltp x2, backup x2, mixed */
    assert_int_equal(p.workers[0].nspecs, 3);
    assert_int_equal(p.workers[1].nspecs, 2);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 3);
    iof_test_spec_label(&p, &t[0], label, sizeof(label));
    assert_string_equal(label, "oltp: 4k 70% read 100% random + backup: 4k 100% read 0% random");
    iof_test_spec_label(&p, &t[1], label, sizeof(label));
    assert_string_equal(label, "oltp: 16k 70% read 100% random + backup: 16k 100% read 0% random");
    assert_string_equal(iof_test_spec(&p, &t[2], 0)->name, "mixed");
    assert_null(iof_test_spec(&p, &t[2], 1));
    free(t);
    iof_plan_free(&p);
}

/* "distribution" in fio's syntax: kind and parameter reach the line; the
 * default is uniform; the spec cycle's expansion keeps it. */
static void test_distribution(void **state)
{
    struct iof_plan p;
    char label[IOF_DIST_LABEL_MAX];
    (void)state;

    load_good(PLAN_LINES("{'size':'4k','share':40,'distribution':'zipf:1.2'},"
                         "{'size':'8k','share':30,'distribution':'zoned:60/10:30/20:10/70'},"
                         "{'size':'8k','share':20,'distribution':'pareto:0.2'},"
                         "{'size':'8k','share':10,'distribution':'normal:12.5'}"),
              NULL, 0, &p);
    assert_int_equal(p.specs[0].lines[0].dist.kind, IOF_DIST_ZIPF);
    assert_true(p.specs[0].lines[0].dist.param == 1.2);
    assert_int_equal(p.specs[0].lines[1].dist.kind, IOF_DIST_ZONED);
    assert_int_equal(p.specs[0].lines[1].dist.nzones, 3);
    assert_int_equal(p.specs[0].lines[1].dist.access[1], 30);
    assert_int_equal(p.specs[0].lines[1].dist.range[2], 70);
    iof_dist_label(&p.specs[0].lines[1].dist, label, sizeof(label));
    assert_string_equal(label, "zoned:60/10:30/20:10/70");
    assert_int_equal(p.specs[0].lines[2].dist.kind, IOF_DIST_PARETO);
    assert_int_equal(p.specs[0].lines[3].dist.kind, IOF_DIST_NORMAL);
    iof_dist_label(&p.specs[0].lines[3].dist, label, sizeof(label));
    assert_string_equal(label, "normal:12.5");
    iof_plan_free(&p);

    load_good(GOOD, NULL, 0, &p);
    assert_int_equal(p.specs[0].lines[0].dist.kind, IOF_DIST_UNIFORM);
    iof_plan_free(&p);

    load_good("{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':'4k',"
              "'distribution':'zipf:0.9'}]}]," WORKERS ",'cycle':{'size':['4k','8k']}}",
              NULL, 0, &p);
    assert_int_equal(p.nspecs, 2);
    for (size_t i = 0; i < p.nspecs; i++) {
        assert_int_equal(p.specs[i].lines[0].dist.kind, IOF_DIST_ZIPF);
        assert_true(p.specs[i].lines[0].dist.param == 0.9);
    }
    iof_plan_free(&p);
}
/* The product brief's own example. */
BAD(read_range_brief,
    PLAN_SPECS(
        "[{'name':'a','lines':[{'size':'4k'}]},{'name':'b','lines':[{'size':'4k','read':170}]}]"),
    "plan.json: specs[1].lines[0].read: must be 0..100, got 170")
BAD(read_fraction, PLAN_LINES("{'size':'4k','read':50.5}"),
    "plan.json: specs[0].lines[0].read: must be an integer, got 50.5")
BAD(read_string, PLAN_LINES("{'size':'4k','read':'70'}"),
    "plan.json: specs[0].lines[0].read: must be an integer, got string")
BAD(random_negative, PLAN_LINES("{'size':'4k','random':-1}"),
    "plan.json: specs[0].lines[0].random: must be 0..100, got -1")
BAD(size_missing, PLAN_LINES("{'read':50}"),
    "plan.json: specs[0].lines[0].size: required but missing")
BAD(size_zero, PLAN_LINES("{'size':0}"), "plan.json: specs[0].lines[0].size: must be 1..64m, got 0")
BAD(size_too_big, PLAN_LINES("{'size':'128m'}"),
    "plan.json: specs[0].lines[0].size: must be 1..64m, got '128m'")
BAD(size_fraction, PLAN_LINES("{'size':'1.5m'}"),
    "plan.json: specs[0].lines[0].size: invalid size '1.5m': fractions are not allowed; use a "
    "smaller unit")
BAD(size_unknown_unit, PLAN_LINES("{'size':'4kbit'}"),
    "plan.json: specs[0].lines[0].size: invalid size '4kbit': unknown unit (use k, m, g or t, "
    "also written kb or KiB: powers of 1024)")
BAD(size_decimal_unit, PLAN_LINES("{'size':'4kB2'}"),
    "plan.json: specs[0].lines[0].size: invalid size '4kB2': unknown unit (use k, m, g or t, "
    "also written kb or KiB: powers of 1024)")
BAD(size_empty, PLAN_LINES("{'size':''}"),
    "plan.json: specs[0].lines[0].size: invalid size '': empty")
BAD(size_negative_string, PLAN_LINES("{'size':'-4k'}"),
    "plan.json: specs[0].lines[0].size: invalid size '-4k': must not be negative")
BAD(size_space, PLAN_LINES("{'size':' 4k'}"),
    "plan.json: specs[0].lines[0].size: invalid size ' 4k': must start with a digit")
BAD(size_fraction_number, PLAN_LINES("{'size':4096.5}"),
    "plan.json: specs[0].lines[0].size: must be a whole number of bytes, got 4096.5")
BAD(size_negative_number, PLAN_LINES("{'size':-4096}"),
    "plan.json: specs[0].lines[0].size: must not be negative, got -4096")
BAD(size_beyond_2_53, PLAN_LINES("{'size':18014398509481984}"),
    "plan.json: specs[0].lines[0].size: too large for a JSON number, got 1.8014398509482e+16; "
    "write it as a string like \"16t\"")
BAD(size_overflow_digits, PLAN_LINES("{'size':'99999999999999999999'}"),
    "plan.json: specs[0].lines[0].size: invalid size '99999999999999999999': too large")
BAD(size_overflow_suffix, PLAN_LINES("{'size':'20000000t'}"),
    "plan.json: specs[0].lines[0].size: invalid size '20000000t': too large")
BAD(size_type, PLAN_LINES("{'size':[4096]}"),
    "plan.json: specs[0].lines[0].size: must be a size (bytes, or a string like \"4k\"), got array")
BAD(size_odirect, PLAN_LINES("{'size':1000}"),
    "plan.json: specs[0].lines[0].size: size not aligned for O_DIRECT: 1000 is not a multiple "
    "of 512 (workers[0] uses engine " DEF_ENGINE ")")
BAD(size_exceeds_target,
    "{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':'4m'}]}]," WORKERS "}",
    "plan.json: specs[0].lines[0].size: 4m does not fit workers[0].targets[0] ('f.dat', 1m "
    "usable)")
BAD(share_required, PLAN_LINES("{'size':'4k'},{'size':'8k','share':50}"),
    "plan.json: specs[0].lines[0].share: required when a spec has more than one line")
BAD(share_sum, PLAN_LINES("{'size':'4k','share':40},{'size':'8k','share':50}"),
    "plan.json: specs[0].lines: shares must add up to 100, got 90")
BAD(share_range, PLAN_LINES("{'size':'4k','share':101}"),
    "plan.json: specs[0].lines[0].share: must be 0..100, got 101")
BAD(align_odd, PLAN_LINES("{'size':'4k','align':100}"),
    "plan.json: specs[0].lines[0].align: must be 0 (automatic: aligned to the transfer size) "
    "or a multiple of 512, got 100")
BAD(burst_zero, PLAN_LINES("{'size':'4k','burst':0}"),
    "plan.json: specs[0].lines[0].burst: must be 1..65535, got 0")
BAD(burst_big, PLAN_LINES("{'size':'4k','burst':65536}"),
    "plan.json: specs[0].lines[0].burst: must be 1..65535, got 65536")
BAD(delay_long, PLAN_LINES("{'size':'4k','delay':'2h'}"),
    "plan.json: specs[0].lines[0].delay: must be at most 1h, got '2h'")
BAD(line_typo_key, PLAN_LINES("{'size':'4k','reed':50}"),
    "plan.json: specs[0].lines[0]: unknown key 'reed' (did you mean 'read'?)")
BAD(line_duplicate_key, PLAN_LINES("{'size':'4k','read':50,'read':60}"),
    "plan.json: specs[0].lines[0]: duplicate key 'read'")

/* ---- workers and targets ---- */
BAD(workers_missing, "{" NAME "," RUN "," SPECS "}", "plan.json: workers: required but missing")
BAD(workers_empty, PLAN_WORKERS("[]"), "plan.json: workers: must not be empty")
BAD(worker_unknown_key, PLAN_GROUP("'qd':4,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0]: unknown key 'qd' (expected one of: name, specs, nodes, count, engine, "
    "queue_depth, targets, pattern, seed, offset_increment, hipri, rate, data, verify, "
    "verify_mode, verify_stop)")
BAD(count_zero, PLAN_GROUP("'count':0,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].count: must be 1..1024, got 0")
BAD(count_big, PLAN_GROUP("'count':2000,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].count: must be 1..1024, got 2000")
BAD(engine_unknown, PLAN_GROUP("'engine':'posixaio','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].engine: must be one of libaio, io_uring, sync, null, windows, got "
    "'posixaio'")
BAD(engine_number, PLAN_GROUP("'engine':5,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].engine: must be a string, got number")
BAD(hipri_not_bool,
    PLAN_GROUP("'engine':'io_uring','hipri':1,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].hipri: must be true or false, got number")
BAD(hipri_string,
    PLAN_GROUP("'engine':'io_uring','hipri':'yes','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].hipri: must be true or false, got string")
BAD(hipri_libaio, PLAN_GROUP("'hipri':true,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].hipri: polled completion needs engine io_uring (this group "
    "uses " DEF_ENGINE ")")
BAD(hipri_sync, PLAN_GROUP("'engine':'sync','hipri':true,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].hipri: polled completion needs engine io_uring (this group uses sync)")
#define DATA_TGT ",'targets':[{'path':'f.dat','size':'1m'}]"
BAD(data_not_object, PLAN_GROUP("'data':'50%'" DATA_TGT),
    "plan.json: workers[0].data: must be an object, got string")
BAD(data_unknown_key, PLAN_GROUP("'data':{'dedup':'50%'}" DATA_TGT),
    "plan.json: workers[0].data: unknown key 'dedup' (did you mean 'dedupe'?)")
BAD(data_dedupe_range, PLAN_GROUP("'data':{'dedupe':'150%'}" DATA_TGT),
    "plan.json: workers[0].data.dedupe: must be a whole percentage 0%..100%, got '150%'")
BAD(data_compress_number, PLAN_GROUP("'data':{'compress':101}" DATA_TGT),
    "plan.json: workers[0].data.compress: must be 0..100, got 101")
BAD(data_compress_fraction, PLAN_GROUP("'data':{'compress':'50.5%'}" DATA_TGT),
    "plan.json: workers[0].data.compress: must be a whole percentage 0%..100%, got '50.5%'")
BAD(data_unit_pow2, PLAN_GROUP("'data':{'dedupe_unit':'6k'}" DATA_TGT),
    "plan.json: workers[0].data.dedupe_unit: must be a power of two, got '6k'")
BAD(data_unit_small, PLAN_GROUP("'data':{'dedupe_unit':256}" DATA_TGT),
    "plan.json: workers[0].data.dedupe_unit: must be 512..1m, got 256")
BAD(data_with_pattern, PLAN_GROUP("'pattern':'repeat','data':{}" DATA_TGT),
    "plan.json: workers[0].pattern: cannot be given with \"data\" (the data content replaces "
    "the pattern)")
BAD(data_whole_units,
    "{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':'4k','read':0}]}],"
    "'workers':[{'data':{'dedupe_unit':'8k'}" DATA_TGT "}]}",
    "plan.json: specs[0].lines[0].size: writes of 4k are not a whole number of dedupe units "
    "(workers[0] has data.dedupe_unit 8k)")
BAD(verify_unknown, PLAN_GROUP("'verify':'md5'" DATA_TGT),
    "plan.json: workers[0].verify: must be one of none, crc32c, xxh64, got 'md5'")
BAD(verify_mode_alone, PLAN_GROUP("'verify_mode':'after'" DATA_TGT),
    "plan.json: workers[0].verify_mode: needs \"verify\" (a checksum: crc32c or xxh64)")
BAD(verify_mode_bad, PLAN_GROUP("'verify':'crc32c','verify_mode':'later'" DATA_TGT),
    "plan.json: workers[0].verify_mode: must be one of inline, after, got 'later'")
BAD(verify_stop_alone, PLAN_GROUP("'verify_stop':true" DATA_TGT),
    "plan.json: workers[0].verify_stop: needs \"verify\" (a checksum: crc32c or xxh64)")
BAD(verify_with_data, PLAN_GROUP("'verify':true,'data':{}" DATA_TGT),
    "plan.json: workers[0].verify: cannot be combined with \"data\" (a verified block carries a "
    "header that makes it unique and less compressible)")
BAD(verify_null_engine, PLAN_GROUP("'engine':'null','verify':'xxh64'" DATA_TGT),
    "plan.json: workers[0].verify: needs an engine that does I/O (this group uses null)")
BAD(verify_sector,
    "{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':1000,'read':50}]}],"
    "'workers':[{'engine':'sync','verify':'crc32c'" DATA_TGT "}]}",
    "plan.json: specs[0].lines[0].size: 1000 is not a multiple of 512 (workers[0] verifies: "
    "every block carries a header and a tag per 512-byte sector)")
BAD(size_odirect_uring,
    "{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':1000}]}],"
    "'workers':[{'engine':'sync','targets':[{'path':'f.dat','size':'1m'}]},"
    "{'engine':'io_uring','targets':[{'path':'f.dat','size':'1m'}]}]}",
    "plan.json: specs[0].lines[0].size: size not aligned for O_DIRECT: 1000 is not a multiple "
    "of 512 (workers[1] uses engine io_uring)")
BAD(qd_big, PLAN_GROUP("'queue_depth':5000,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].queue_depth: must be 1..4096, got 5000")
BAD(pattern_unknown, PLAN_GROUP("'pattern':'zeros','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].pattern: must be one of repeat, pseudo, random, got 'zeros'")
BAD(seed_negative, PLAN_GROUP("'seed':-1,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].seed: must be 0..9007199254740992, got -1")
BAD(offset_increment_unaligned,
    PLAN_GROUP("'offset_increment':100,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].offset_increment: must be a multiple of 512, got 100")
BAD(offset_increment_pct_big,
    PLAN_GROUP("'offset_increment':'150%','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].offset_increment: must be a whole percentage 0%..100%, got '150%'")
BAD(offset_increment_pct_fraction,
    PLAN_GROUP("'offset_increment':'12.5%','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].offset_increment: must be a whole percentage 0%..100%, got '12.5%'")
BAD(offset_increment_bool,
    PLAN_GROUP("'offset_increment':true,'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].offset_increment: must be a size (\"64m\") or a percentage of the "
    "range (\"25%\"), got boolean")
BAD(offset_increment_bad_size,
    PLAN_GROUP("'offset_increment':'4q','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].offset_increment: invalid size '4q': unknown unit (use k, m, g or t, "
    "also written kb or KiB: powers of 1024)")
BAD(nodes_empty, PLAN_GROUP("'nodes':[],'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].nodes: must not be empty")
BAD(nodes_string, PLAN_GROUP("'nodes':'a','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].nodes: must be an array, got string")
BAD(node_empty, PLAN_GROUP("'nodes':[''],'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].nodes[0]: must not be empty")
BAD(node_duplicate, PLAN_GROUP("'nodes':['a','b','a'],'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].nodes[2]: duplicate node 'a' (also nodes[0])")
/* A node name follows the one rule of dynamo --name and certificates (proto/name.h). */
BAD(node_reserved, PLAN_GROUP("'nodes':['n1','all'],'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].nodes[1]: node name 'all': reserved (ALL names the cluster's rows in "
    "the result files; ca and manager are iofleet pki's own files)")
BAD(node_too_long,
    PLAN_GROUP("'nodes':['a234567890123456789012345678901234567890123456789012345678901234x'],"
               "'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].nodes[0]: node name 'a2345678901234567890123456789012...': longer "
    "than 64 bytes (the limit of a certificate's common name)")
BAD(node_bad_char, PLAN_GROUP("'nodes':['esx 07'],'targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].nodes[0]: node name 'esx 07': byte 3 (0x20) is not allowed: use ASCII "
    "letters, digits, '.', '_' and '-'")
BAD(targets_missing, PLAN_GROUP("'count':1"), "plan.json: workers[0].targets: required but missing")
BAD(targets_empty, PLAN_TARGETS(""), "plan.json: workers[0].targets: must not be empty")
BAD(target_path_missing, PLAN_TARGETS("{'size':'1m'}"),
    "plan.json: workers[0].targets[0].path: required but missing")
BAD(target_path_empty, PLAN_TARGETS("{'path':'','size':'1m'}"),
    "plan.json: workers[0].targets[0].path: must not be empty")
BAD(target_path_newline, PLAN_TARGETS("{'path':'f\\n2026-12-01 agent: forged.dat','size':'1m'}"),
    "plan.json: workers[0].targets[0].path: must not contain control characters, got \\x0a (a "
    "control character) at byte 1 of 'f\\x0a2026-12-01 agent: forged.dat'")
BAD(target_path_escape, PLAN_TARGETS("{'path':'/dev/sd\\u001b[2Jb'}"),
    "plan.json: workers[0].targets[0].path: must not contain control characters, got \\x1b (a "
    "control character) at byte 7 of '/dev/sd\\x1b[2Jb'")
/* fio's and Iometer's spellings of a size, all powers of 1024. */
static void test_size_unit_spellings(void **state)
{
    static const struct {
        const char *s;
        uint64_t v;
    } ok[] = {
        {"4096", 4096},     {"4096b", 4096},     {"4096B", 4096},      {"4k", 4096},
        {"4K", 4096},       {"4kb", 4096},       {"4KB", 4096},        {"4kB", 4096},
        {"4KiB", 4096},     {"4kib", 4096},      {"4ki", 4096},        {"64m", 64 * MIB},
        {"64MB", 64 * MIB}, {"64MiB", 64 * MIB}, {"2g", 2048 * MIB},   {"2GiB", 2048 * MIB},
        {"1t", 1ull << 40}, {"1TB", 1ull << 40}, {"1TiB", 1ull << 40},
    };
    static const char *const bad[] = {"4kbb", "4bk", "4 k", "4kk", "4KiBs", "4p", "k", "4.5k"};
    struct iof_plan p;
    uint64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        v = 0;
        if (proto_plan_parse_size(ok[i].s, &v) || v != ok[i].v)
            fail_msg("'%s': got %llu, expected %llu", ok[i].s, (unsigned long long)v,
                     (unsigned long long)ok[i].v);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (!proto_plan_parse_size(bad[i], &v))
            fail_msg("'%s' was accepted", bad[i]);
    /* in a plan too */
    load_good(PLAN_LINES("{'size':'4kb','align':'4KiB'}"), NULL, 0, &p);
    assert_int_equal(p.specs[0].lines[0].size, 4096);
    iof_plan_free(&p);
}

/* One policy (common/text.h) for every name: the plan's, a spec's, a group's. */
static void test_names_utf8_allowed(void **state)
{
    struct iof_plan p;

    (void)state;
    load_good("{'name':'d\\u00e9bit \\u65e5\\u672c'," RUN
              ",'specs':[{'name':'4K \\u00b5s \\u2192 read','lines':[{'size':'4k'}]}]," WORKERS "}",
              NULL, 0, &p);
    assert_string_equal(p.name, "d\xc3\xa9"
                                "bit \xe6\x97\xa5\xe6\x9c\xac");
    assert_string_equal(p.specs[0].name, "4K \xc2\xb5s \xe2\x86\x92 read");
    iof_plan_free(&p);
}
BAD(plan_name_escape, "{'name':'p\\u001b]0;owned\\u0007'," RUN "," SPECS "," WORKERS "}",
    "plan.json: name: must not contain control characters, got \\x1b (a control character) at "
    "byte 1 of 'p\\x1b]0;owned\\x07'")
BAD(spec_name_bel, PLAN_SPECS("[{'name':'4k\\u0007','lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].name: must not contain control characters, got \\x07 (a control "
    "character) at byte 2 of '4k\\x07'")
BAD(spec_name_del, PLAN_SPECS("[{'name':'a\\u007f','lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].name: must not contain control characters, got \\x7f (a control "
    "character) at byte 1 of 'a\\x7f'")
BAD(spec_name_c1_csi, PLAN_SPECS("[{'name':'a\\u009b2J','lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].name: must not contain control characters, got \\u009b (a C1 control "
    "character) at byte 1 of 'a\\u009b2J'")
BAD(group_name_bidi, PLAN_GROUP("'name':'g\\u202eevil','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].name: must not contain control characters, got \\u202e (a "
    "bidirectional control character) at byte 1 of 'g\\u202eevil'")
BAD(group_name_tab, PLAN_GROUP("'name':'g\\tx','targets':[{'path':'f.dat','size':'1m'}]"),
    "plan.json: workers[0].name: must not contain control characters, got \\x09 (a control "
    "character) at byte 1 of 'g\\x09x'")
BAD(spec_name_not_utf8,
    PLAN_SPECS("[{'name':'a\xff"
               "b','lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].name: must not contain control characters, got \\xff (a byte that is "
    "not UTF-8) at byte 1 of 'a\\xffb'")
BAD(target_path_dotdot, PLAN_TARGETS("{'path':'data/../../etc/x','size':'1m'}"),
    "plan.json: workers[0].targets[0].path: must not contain a '..' component")
BAD(target_path_dotdot_absolute, PLAN_TARGETS("{'path':'/allowed/../etc/shadow'}"),
    "plan.json: workers[0].targets[0].path: must not contain a '..' component")
BAD(target_path_reserved, PLAN_TARGETS("{'path':'.iofleet-testfiles','size':'1m'}"),
    "plan.json: workers[0].targets[0].path: '.iofleet-testfiles': names starting with "
    "'.iofleet-' are reserved for the agent's own files (its test-file ledger and verify state)")
BAD(target_path_reserved_sub, PLAN_TARGETS("{'path':'/data/.iofleet-verify-1.gen'}"),
    "plan.json: workers[0].targets[0].path: '/data/.iofleet-verify-1.gen': names starting with "
    "'.iofleet-' are reserved for the agent's own files (its test-file ledger and verify state)")
BAD(target_relative_no_size, PLAN_TARGETS("{'path':'f.dat'}"),
    "plan.json: workers[0].targets[0].size: a relative path is a test file to create: give it a "
    "size greater than 0")
BAD(target_size_unaligned, PLAN_TARGETS("{'path':'/dev/sdb','size':6000}"),
    "plan.json: workers[0].targets[0].size: must be a multiple of 4096, got 6000")
BAD(target_unknown_key, PLAN_TARGETS("{'path':'f.dat','size':'1m','offset':0}"),
    "plan.json: workers[0].targets[0]: unknown key 'offset' (expected one of: path, size, range)")
BAD(range_unknown_key, PLAN_TARGETS("{'path':'f.dat','size':'1m','range':{'length':'4k'}}"),
    "plan.json: workers[0].targets[0].range: unknown key 'length' (expected one of: offset, "
    "size)")
BAD(range_offset_unaligned, PLAN_TARGETS("{'path':'/dev/sdb','range':{'offset':100}}"),
    "plan.json: workers[0].targets[0].range.offset: must be a multiple of 512, got 100")
BAD(range_past_end,
    PLAN_TARGETS("{'path':'f.dat','size':'1m','range':{'offset':'512k','size':'1m'}}"),
    "plan.json: workers[0].targets[0].range: offset 512k + size 1m goes past the end of the "
    "target (size 1m)")
BAD(range_offset_outside, PLAN_TARGETS("{'path':'f.dat','size':'1m','range':{'offset':'1m'}}"),
    "plan.json: workers[0].targets[0].range: offset 1m is not inside the target (size 1m)")
/* Working set as a percentage of the target. */
BAD(range_pct_offset_100, PLAN_TARGETS("{'path':'/dev/sdb','range':{'offset':'100%'}}"),
    "plan.json: workers[0].targets[0].range.offset: must be a whole percentage 0%..99% of the "
    "target, got '100%'")
BAD(range_pct_size_0, PLAN_TARGETS("{'path':'/dev/sdb','range':{'size':'0%'}}"),
    "plan.json: workers[0].targets[0].range.size: must be a whole percentage 1%..100% of the "
    "target, got '0%'")
BAD(range_pct_fraction, PLAN_TARGETS("{'path':'/dev/sdb','range':{'size':'2.5%'}}"),
    "plan.json: workers[0].targets[0].range.size: must be a whole percentage 1%..100% of the "
    "target, got '2.5%'")
BAD(range_pct_big, PLAN_TARGETS("{'path':'/dev/sdb','range':{'size':'1000%'}}"),
    "plan.json: workers[0].targets[0].range.size: must be a whole percentage 1%..100% of the "
    "target, got '1000%'")
BAD(range_pct_sum, PLAN_TARGETS("{'path':'/dev/sdb','range':{'offset':'60%','size':'50%'}}"),
    "plan.json: workers[0].targets[0].range: offset 60% + size 50% is more than 100% of the "
    "target")
BAD(range_pct_mixed_past_end,
    PLAN_TARGETS("{'path':'f.dat','size':'1m','range':{'offset':'768k','size':'50%'}}"),
    "plan.json: workers[0].targets[0].range: offset 768k + size 50% does not fit the target "
    "(size 1m)")
BAD(range_pct_line_too_big,
    PLAN_TARGETS("{'path':'f.dat','size':'256k','range':{'offset':'0%','size':'1%'}}"),
    "plan.json: specs[0].lines[0].size: 4k does not fit workers[0].targets[0] ('f.dat', 2560 "
    "usable)")
/* Target path templates. */
BAD(template_two, PLAN_TARGETS("{'path':'/dev/sd{0..1}/{0..1}'}"),
    "plan.json: workers[0].targets[0].path: may hold one {A..B} range, got more in "
    "'/dev/sd{0..1}/{0..1}'")
BAD(template_letters, PLAN_TARGETS("{'path':'/dev/sd{b..e}'}"),
    "plan.json: workers[0].targets[0].path: range '{b..e}' must be {A..B} with whole numbers of "
    "at most 9 digits, as in {0..9}")
BAD(template_open_end, PLAN_TARGETS("{'path':'d{3..}.dat','size':'1m'}"),
    "plan.json: workers[0].targets[0].path: range '{3..}' must be {A..B} with whole numbers of "
    "at most 9 digits, as in {0..9}")
BAD(template_long_number, PLAN_TARGETS("{'path':'d{0..1234567890}.dat','size':'1m'}"),
    "plan.json: workers[0].targets[0].path: range '{0..1234567890}' must be {A..B} with whole "
    "numbers of at most 9 digits, as in {0..9}")
BAD(template_down, PLAN_TARGETS("{'path':'d{9..0}.dat','size':'1m'}"),
    "plan.json: workers[0].targets[0].path: range '{9..0}' counts down: write {0..9}")
BAD(template_huge, PLAN_TARGETS("{'path':'d{0..999999999}.dat','size':'1m'}"),
    "plan.json: workers[0].targets[0].path: range '{0..999999999}' names 1000000000 targets, "
    "the maximum is 256")
BAD(template_total,
    PLAN_TARGETS("{'path':'a{0..199}','size':'1m'},{'path':'b{1..57}','size':'1m'}"),
    "plan.json: workers[0].targets: 2 entries name 257 targets once their {A..B} ranges are "
    "expanded, the maximum is 256")
BAD(template_two_sizes,
    PLAN_TARGETS("{'path':'d{0..3}.dat','size':'1m'},{'path':'d2.dat','size':'2m'}"),
    "plan.json: workers[0].targets[4].size: test file 'd2.dat' is 1m in workers[0].targets[2]; "
    "one file cannot have two sizes, got 2m")
/* Cycling the spec itself. */
#define SCYCLE(cy) PLAN_CYCLE("{" cy "}")
BAD(scycle_not_array, SCYCLE("'size':'4k'"), "plan.json: cycle.size: must be an array, got string")
BAD(scycle_empty, SCYCLE("'read':[]"), "plan.json: cycle.read: must not be empty")
BAD(scycle_read_range, SCYCLE("'read':[100,170]"),
    "plan.json: cycle.read[1]: must be 0..100, got 170")
BAD(scycle_size_zero, SCYCLE("'size':['4k',0]"), "plan.json: cycle.size[1]: must be 1..64m, got 0")
BAD(scycle_repeat, SCYCLE("'size':['4k','8k','4k']"),
    "plan.json: cycle.size[2]: repeats size[0], got '4k'")
BAD(scycle_odirect,
    "{" NAME "," RUN "," SPECS ",'workers':[{'engine':'libaio','targets':[{'path':'f.dat','size':"
    "'1m'}]}],'cycle':{'size':['4k',1000]}}",
    "plan.json: cycle.size[1]: size not aligned for O_DIRECT: 1000 is not a multiple of 512 "
    "(workers[0] uses engine libaio)")
BAD(scycle_too_big, SCYCLE("'size':['4k','2m']"),
    "plan.json: cycle.size[1]: 2m does not fit workers[0].targets[0] ('f.dat', 1m usable)")
BAD(scycle_no_single,
    "{" NAME "," RUN ",'specs':[{'name':'mix','lines':[{'size':'4k','share':50},{'size':'8k',"
    "'share':50}]}]," WORKERS ",'cycle':{'random':[0,100]}}",
    "plan.json: cycle: random: no spec has a single line to cycle (a spec with several lines "
    "keeps its mix)")
BAD(scycle_two_params,
    SCYCLE("'size':['4k'],'queue_depth':{'from':1,'to':2,'step':'+1'},"
           "'workers':{'from':1,'to':2,'step':'+1'}"),
    "plan.json: cycle: names both 'queue_depth' and 'workers': cycle one parameter at a time")
BAD(scycle_name_clash,
    "{" NAME "," RUN ",'specs':[{'name':'4k 100% read 0% random','lines':[{'size':'4k',"
    "'share':50},{'size':'8k','share':50}]},{'name':'b','lines':[{'size':'4k'}]}]," WORKERS
    ",'cycle':{'random':[0,100]}}",
    "plan.json: cycle: expands to the spec name '4k 100% read 0% random' twice: rename the spec "
    "that has it")
BAD(test_file_two_sizes,
    PLAN_WORKERS(
        "[{'targets':[{'path':'f.dat','size':'1m'}]},{'targets':[{'path':'f.dat','size':'2m'}]}]"),
    "plan.json: workers[1].targets[0].size: test file 'f.dat' is 1m in workers[0].targets[0]; "
    "one file cannot have two sizes, got 2m")

/* ---- cycle ---- */
BAD(cycle_empty, PLAN_CYCLE("{}"),
    "plan.json: cycle: must name one of rate, queue_depth, workers, targets, size, read, random")
BAD(cycle_two_params,
    PLAN_CYCLE(
        "{'queue_depth':{'from':1,'to':4,'step':'x2'},'workers':{'from':1,'to':4,'step':'+1'}}"),
    "plan.json: cycle: names both 'queue_depth' and 'workers': cycle one parameter at a time")
BAD(cycle_unknown_param, PLAN_CYCLE("{'qd':{'from':1,'to':4,'step':'x2'}}"),
    "plan.json: cycle: unknown key 'qd' (expected one of: rate, queue_depth, workers, targets, "
    "size, read, random)")
BAD(cycle_from_zero, PLAN_CYCLE("{'queue_depth':{'from':0,'to':4,'step':'x2'}}"),
    "plan.json: cycle.queue_depth.from: must be 1..4096, got 0")
BAD(cycle_to_below_from, PLAN_CYCLE("{'queue_depth':{'from':8,'to':4,'step':'x2'}}"),
    "plan.json: cycle.queue_depth.to: must not be less than from (8), got 4")
BAD(cycle_step_x1, PLAN_CYCLE("{'queue_depth':{'from':1,'to':4,'step':'x1'}}"),
    "plan.json: cycle.queue_depth.step: an exponential step must be at least x2, got 'x1'")
BAD(cycle_step_plus0, PLAN_CYCLE("{'queue_depth':{'from':1,'to':4,'step':'+0'}}"),
    "plan.json: cycle.queue_depth.step: a linear step must be at least +1, got '+0'")
BAD(cycle_step_bare, PLAN_CYCLE("{'queue_depth':{'from':1,'to':4,'step':'2'}}"),
    "plan.json: cycle.queue_depth.step: must be \"+N\" (linear) or \"xN\" (exponential), got '2'")
BAD(cycle_step_number, PLAN_CYCLE("{'queue_depth':{'from':1,'to':4,'step':2}}"),
    "plan.json: cycle.queue_depth.step: must be a string, got number")
BAD(cycle_step_missing, PLAN_CYCLE("{'queue_depth':{'from':1,'to':4}}"),
    "plan.json: cycle.queue_depth.step: required but missing")
BAD(cycle_workers_big, PLAN_CYCLE("{'workers':{'from':1,'to':2000,'step':'x2'}}"),
    "plan.json: cycle.workers.to: must be 1..1024, got 2000")
BAD(cycle_targets_beyond,
    "{" NAME "," RUN "," SPECS ",'workers':[{'targets':[{'path':'a','size':'1m'},{'path':'b','size'"
    ":'1m'},{'path':'c','size':'1m'}]},"
    "{'targets':[{'path':'a','size':'1m'},{'path':'b','size':'1m'}]}],"
    "'cycle':{'targets':{'from':1,'to':3,'step':'+1'}}}",
    "plan.json: cycle.targets.to: must be at most 2: workers[1] has only 2 targets, got 3")

/* ---- --set ---- */
BAD_SET(set_unknown_root, GOOD, "foo=1",
        "--set foo=1: unknown key 'foo' (expected one of: name, run, specs, workers, cycle, notes)")
BAD_SET(
    set_unknown_nested, GOOD, "workers[0].qd=32",
    "--set workers[0].qd=32: unknown key 'qd' (expected one of: name, specs, nodes, count, engine, "
    "queue_depth, targets, pattern, seed, offset_increment, hipri, rate, data, verify, "
    "verify_mode, verify_stop)")
BAD_SET(set_typo, GOOD, "run.duraton=5s",
        "--set run.duraton=5s: unknown key 'duraton' (did you mean 'duration'?)")
BAD_SET(set_index_range, GOOD, "workers[3].count=2",
        "--set workers[3].count=2: index 3 is out of range: 'workers' has 1 entry (1 appends)")
BAD_SET(unset_bad_key, GOOD, "run.durations",
        "--unset run.durations: unknown key 'durations' (did you mean 'duration'?)")
BAD_SET(unset_past_end, GOOD, "specs[1]",
        "--unset specs[1]: index 1 is out of range: 'specs' has 1 entry")
BAD_SET(set_array_as_object, GOOD, "workers.count=2",
        "--set workers.count=2: 'workers' is an array: index it like workers[0]")
BAD_SET(set_object_as_array, GOOD, "run[0]=1", "--set run[0]=1: 'run' is not an array")
BAD_SET(set_into_value, GOOD, "run.duration.x=1",
        "--set run.duration.x=1: 'run.duration' is a single value, it has no keys")
BAD_SET(set_into_node, GOOD, "workers[0].nodes[0].x=1",
        "--set workers[0].nodes[0].x=1: 'workers[0].nodes' entries are single values, they have "
        "no keys")
BAD_SET(set_bad_syntax, GOOD, "workers[0]..count=1",
        "--set workers[0]..count=1: invalid key: expected a key name")
BAD_SET(set_dot_index, GOOD, "workers.[0].count=1",
        "--set workers.[0].count=1: invalid key: expected a key name")
BAD_SET(set_empty_key, GOOD, "=1", "--set =1: invalid key: empty key")
BAD_SET(set_bad_index, GOOD, "workers[x].count=1",
        "--set workers[x].count=1: invalid key: expected an index like [0]")
BAD_SET(set_nul, GOOD, "name=\"a\\u0000\"",
        "--set name=\"a\\u0000\": \\u0000 (NUL) is not allowed in strings")
BAD_SET(set_bad_value, GOOD, "run.duration=0s",
        "plan.json: run.duration: must be greater than 0 (after --set run.duration=0s)")
BAD_SET(set_bad_read, GOOD, "specs[0].lines[0].read=170",
        "plan.json: specs[0].lines[0].read: must be 0..100, got 170 (after --set "
        "specs[0].lines[0].read=170)")
BAD_SET(unset_required, GOOD, "name", "plan.json: name: required but missing (after --unset name)")
BAD_SET(set_object_value, GOOD, "cycle={\"queue_depth\":{\"from\":4,\"to\":2,\"step\":\"x2\"}}",
        "plan.json: cycle.queue_depth.to: must not be less than from (4), got 2 (after --set "
        "cycle={\"queue_depth\":{\"from\":4,\"to\":2,\"step\":\"x2\"}})")
/* The override is checked like the file: here by the cross-check of line sizes. */
BAD_SET(set_engine_odirect,
        "{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':1000}]}],"
        "'workers':[{'engine':'sync','targets':[{'path':'f.dat','size':'1m'}]}]}",
        "workers[0].engine=libaio",
        "plan.json: specs[0].lines[0].size: size not aligned for O_DIRECT: 1000 is not a multiple "
        "of 512 (workers[0] uses engine libaio)")
BAD_SET(set_hipri_libaio, GOOD, "workers[0].hipri=true",
        "plan.json: workers[0].hipri: polled completion needs engine io_uring (this group "
        "uses " DEF_ENGINE ") (after --set workers[0].hipri=true)")
BAD_SET(set_engine_typo, GOOD, "workers[0].engine=libaoi",
        "plan.json: workers[0].engine: must be one of libaio, io_uring, sync, null, windows, got "
        "'libaoi' "
        "(after "
        "--set workers[0].engine=libaoi)")

/* ---- bad plans that need code to build ---- */

static void test_bad_raw_nul(void **state)
{
    static const char text[] = "{\"name\":\"a\0b\"}";
    struct iof_plan p;
    struct iof_diag d;

    (void)state;
    assert_int_equal(proto_plan_parse("plan.json", text, sizeof(text) - 1, NULL, 0, &p, &d),
                     IOF_EPLAN);
    assert_string_equal(d.msg, "plan.json: line 1, column 11: NUL byte in the text");
}

static void test_bad_too_many_lines(void **state)
{
    char plan[8192], lines[4096];
    size_t o = 0;

    (void)state;
    for (int i = 0; i < 65; i++)
        o += (size_t)snprintf(lines + o, sizeof(lines) - o, "%s{'size':'4k','share':%d}",
                              i ? "," : "", i == 0 ? 36 : 1);
    snprintf(plan, sizeof(plan), PLAN_LINES("%s"), lines);
    expect_msg(plan, NULL, 0, "plan.json: specs[0].lines: has 65 entries, the maximum is 64");
}

static void test_bad_name_too_long(void **state)
{
    char plan[1024], name[201];

    (void)state;
    memset(name, 'n', 200);
    name[200] = '\0';
    snprintf(plan, sizeof(plan), "{'name':'%s'," RUN "," SPECS "," WORKERS "}", name);
    expect_msg(plan, NULL, 0, "plan.json: name: is too long: 200 bytes, the maximum is 127");
}

static void test_bad_path_too_long(void **state)
{
    static char plan[8192], path[5001];

    (void)state;
    memset(path, 'p', 5000);
    path[5000] = '\0';
    snprintf(plan, sizeof(plan), PLAN_TARGETS("{'path':'%s','size':'1m'}"), path);
    expect_msg(plan, NULL, 0,
               "plan.json: workers[0].targets[0].path: is too long: 5000 bytes, the maximum is "
               "4095");
}

static void test_bad_unknown_key_escaped(void **state)
{
    (void)state;
    /* A key with a control character is shown escaped, never raw. */
    expect_msg("{" NAME "," RUN "," SPECS "," WORKERS ",'a\\nb':1}", NULL, 0,
               "plan.json: unknown key 'a\\x0ab' (expected one of: name, run, specs, workers, "
               "cycle, notes)");
}

static void test_bad_file_missing(void **state)
{
    struct iof_plan p;
    struct iof_diag d;

    (void)state;
    assert_int_equal(proto_plan_load("/nonexistent/plan.json", NULL, 0, &p, &d), IOF_EPLAN);
    assert_string_equal(d.msg, "/nonexistent/plan.json: cannot open: No such file or directory");
    assert_null(p.specs);
}

/* ---- good plans ---- */

/* ---- rate, and a spec's own duration, ramp and io_limit ---- */
#define RATED(r) PLAN_GROUP("'rate':" r ",'targets':[{'path':'f.dat','size':'1m'}]")
BAD(rate_empty, RATED("{}"), "plan.json: workers[0].rate: needs iops or mibps")
BAD(rate_both, RATED("{'iops':10,'mibps':1}"),
    "plan.json: workers[0].rate: give one of iops and mibps, not both")
BAD(rate_zero, RATED("{'iops':0}"),
    "plan.json: workers[0].rate.iops: must be 0.001..10000000 per worker, got 0")
BAD(rate_negative, RATED("{'mibps':-5}"),
    "plan.json: workers[0].rate.mibps: must be 0.001..1048576 per worker, got -5")
BAD(rate_huge, RATED("{'iops':1e300}"),
    "plan.json: workers[0].rate.iops: must be 0.001..10000000 per worker, got 1e+300")
BAD(rate_string, RATED("{'iops':'1k'}"),
    "plan.json: workers[0].rate.iops: must be a number, got string")
BAD(rate_arrival, RATED("{'iops':10,'arrival':'bursty'}"),
    "plan.json: workers[0].rate.arrival: must be one of uniform, poisson, got 'bursty'")
BAD(rate_unknown, RATED("{'iops':10,'iops_max':20}"),
    "plan.json: workers[0].rate: unknown key 'iops_max' (expected one of: iops, mibps, arrival)")
BAD(rate_not_object, RATED("1000"), "plan.json: workers[0].rate: must be an object, got number")
BAD(spec_duration_zero, PLAN_SPECS("[{'name':'a','duration':0,'lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].duration: must be greater than 0")
BAD(spec_ramp_big, PLAN_SPECS("[{'name':'a','ramp':'2h','lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].ramp: must be at most 1h, got '2h'")
BAD(io_limit_zero, PLAN_SPECS("[{'name':'a','io_limit':0,'lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].io_limit: must be greater than 0 (leave it out for no limit)")
BAD(io_limit_bad, PLAN_SPECS("[{'name':'a','io_limit':'4q','lines':[{'size':'4k'}]}]"),
    "plan.json: specs[0].io_limit: invalid size '4q': unknown unit (use k, m, g or t, also "
    "written kb or KiB: powers of 1024)")
BAD(spec_duration_below_interval,
    "{" NAME ",'run':{'duration':'5s','interval':'2s'},'specs':[{'name':'a','duration':'1s',"
    "'lines':[{'size':'4k'}]}]," WORKERS "}",
    "plan.json: specs[0].duration: must be at least run.interval (2s), got '1s'")
BAD(no_duration_anywhere,
    "{" NAME ",'run':{},'specs':[{'name':'a','io_limit':'1m','lines':[{'size':'4k'}]},"
    "{'name':'b','lines':[{'size':'4k'}]}]," WORKERS "}",
    "plan.json: run.duration: required but missing (specs[1] has neither a duration nor an "
    "io_limit of its own)")

static void test_good_rate_and_spec_timing(void **state)
{
    struct iof_plan p;
    const char *ov[] = {"workers[0].rate.mibps=2.5", "workers[0].rate.arrival=poisson"};
    struct iof_test t0 = {.spec_index = 0}, t1 = {.spec_index = 1}, t2 = {.spec_index = 2};
    struct iof_run_cfg r;

    (void)state;
    load_good(RATED("{'iops':1500.5}"), NULL, 0, &p);
    assert_int_equal(p.workers[0].rate.unit, IOF_RATE_IOPS);
    assert_true(p.workers[0].rate.value == 1500.5);
    assert_int_equal(p.workers[0].rate.arrival, IOF_ARRIVAL_UNIFORM);
    iof_plan_free(&p);
    load_good(GOOD, ov, 2, &p);
    assert_int_equal(p.workers[0].rate.unit, IOF_RATE_MIBPS);
    assert_true(p.workers[0].rate.value == 2.5);
    assert_int_equal(p.workers[0].rate.arrival, IOF_ARRIVAL_POISSON);
    iof_plan_free(&p);
    load_good(GOOD, NULL, 0, &p);
    assert_int_equal(p.workers[0].rate.unit, IOF_RATE_NONE);
    iof_plan_free(&p);

    /* No run.duration: each spec has its own, or an io_limit (capped). */
    load_good("{" NAME ",'run':{'ramp':'2s'},'specs':["
              "{'name':'a','duration':'7s','ramp':'1s','lines':[{'size':'4k'}]},"
              "{'name':'b','io_limit':'1g','lines':[{'size':'4k'}]},"
              "{'name':'c','io_limit':'1g','duration':'30s','lines':[{'size':'4k'}]}]," WORKERS "}",
              NULL, 0, &p);
    r = iof_test_run(&p, &t0);
    assert_int_equal(r.duration_ns, 7 * IOF_NS_PER_S);
    assert_int_equal(r.ramp_ns, 1 * IOF_NS_PER_S);
    r = iof_test_run(&p, &t1);
    assert_int_equal(r.duration_ns, IOF_IO_LIMIT_MAX_DURATION_NS);
    assert_int_equal(r.ramp_ns, 2 * IOF_NS_PER_S);
    assert_int_equal(p.specs[1].io_limit, 1ull << 30);
    r = iof_test_run(&p, &t2);
    assert_int_equal(r.duration_ns, 30 * IOF_NS_PER_S);
    iof_plan_free(&p);

    /* With run.duration, a spec without its own takes it; the spec cycle
     * keeps a spec's timing in every spec it expands to. */
    load_good("{" NAME "," RUN ",'specs':[{'name':'a','ramp':'3s','io_limit':'8m','lines':[{'size':"
              "'4k'}]}]," WORKERS ",'cycle':{'size':['4k','8k']}}",
              NULL, 0, &p);
    assert_int_equal(p.nspecs, 2);
    for (unsigned i = 0; i < 2; i++) {
        struct iof_test t = {.spec_index = i};
        r = iof_test_run(&p, &t);
        assert_int_equal(r.duration_ns, 5 * IOF_NS_PER_S);
        assert_int_equal(r.ramp_ns, 3 * IOF_NS_PER_S);
        assert_int_equal(p.specs[i].io_limit, 8 * MIB);
    }
    iof_plan_free(&p);
}

static void test_good_offset_increment(void **state)
{
    struct iof_plan p;
    const char *ov[] = {"workers[0].offset_increment=25%"};

    (void)state;
    load_good(PLAN_GROUP("'count':4,'offset_increment':'64m','targets':[{'path':'f.dat','size':"
                         "'1g'}]"),
              NULL, 0, &p);
    assert_int_equal(p.workers[0].offset_increment, 64 * MIB);
    assert_false(p.workers[0].offset_increment_pct);
    iof_plan_free(&p);
    load_good(PLAN_GROUP("'offset_increment':'25%','targets':[{'path':'f.dat','size':'1m'}]"), NULL,
              0, &p);
    assert_int_equal(p.workers[0].offset_increment, 25);
    assert_true(p.workers[0].offset_increment_pct);
    iof_plan_free(&p);
    load_good(GOOD, ov, 1, &p);
    assert_int_equal(p.workers[0].offset_increment, 25);
    assert_true(p.workers[0].offset_increment_pct);
    iof_plan_free(&p);
}

static void test_good_data(void **state)
{
    struct iof_plan p;

    (void)state;
    load_good(PLAN_GROUP("'data':{'dedupe':'50%','compress':60,'dedupe_unit':'8k'}" DATA_TGT), NULL,
              0, &p);
    assert_true(p.workers[0].data.enabled);
    assert_int_equal(p.workers[0].data.dedupe_pct, 50);
    assert_int_equal(p.workers[0].data.compress_pct, 60);
    assert_int_equal(p.workers[0].data.unit, 8192);
    iof_plan_free(&p);
    /* Defaults: nothing duplicated or compressible, 4 KiB units; reads of
     * any size. */
    load_good("{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':'1k','read':100}]}],"
              "'workers':[{'data':{}" DATA_TGT "}]}",
              NULL, 0, &p);
    assert_true(p.workers[0].data.enabled);
    assert_int_equal(p.workers[0].data.dedupe_pct, 0);
    assert_int_equal(p.workers[0].data.compress_pct, 0);
    assert_int_equal(p.workers[0].data.unit, 4096);
    iof_plan_free(&p);
    load_good(GOOD, NULL, 0, &p);
    assert_false(p.workers[0].data.enabled);
    iof_plan_free(&p);
}

static void test_good_verify(void **state)
{
    struct iof_plan p;

    (void)state;
    load_good(PLAN_GROUP("'verify':'crc32c','verify_mode':'after','verify_stop':true" DATA_TGT),
              NULL, 0, &p);
    assert_int_equal(p.workers[0].verify.algo, IOF_VERIFY_CRC32C);
    assert_int_equal(p.workers[0].verify.mode, IOF_VERIFY_AFTER);
    assert_true(p.workers[0].verify.stop);
    iof_plan_free(&p);
    load_good(PLAN_GROUP("'verify':true" DATA_TGT), NULL, 0, &p);
    assert_int_equal(p.workers[0].verify.algo, IOF_VERIFY_DEFAULT);
    assert_int_equal(p.workers[0].verify.mode, IOF_VERIFY_INLINE);
    assert_false(p.workers[0].verify.stop);
    iof_plan_free(&p);
    load_good(PLAN_GROUP("'verify':false" DATA_TGT), NULL, 0, &p);
    assert_int_equal(p.workers[0].verify.algo, IOF_VERIFY_NONE);
    iof_plan_free(&p);
    load_good(GOOD, NULL, 0, &p);
    assert_int_equal(p.workers[0].verify.algo, IOF_VERIFY_NONE);
    iof_plan_free(&p);
}

/* run.target_histograms: left out AUTO, true ALWAYS, false NEVER; --set too. */
static void test_good_target_histograms(void **state)
{
    struct iof_plan p;
    const char *ov[] = {"run.target_histograms=true"};

    (void)state;
    load_good(GOOD, NULL, 0, &p);
    assert_int_equal(p.run.target_hists, IOF_TARGET_HISTS_AUTO);
    iof_plan_free(&p);
    load_good(PLAN_RUN("{'duration':'5s','target_histograms':true}"), NULL, 0, &p);
    assert_int_equal(p.run.target_hists, IOF_TARGET_HISTS_ALWAYS);
    iof_plan_free(&p);
    load_good(PLAN_RUN("{'duration':'5s','target_histograms':false}"), NULL, 0, &p);
    assert_int_equal(p.run.target_hists, IOF_TARGET_HISTS_NEVER);
    iof_plan_free(&p);
    load_good(GOOD, ov, 1, &p);
    assert_int_equal(p.run.target_hists, IOF_TARGET_HISTS_ALWAYS);
    iof_plan_free(&p);
    /* the manager's key: agents never see it */
    {
        char *wire = proto_plan_wire_text(
            sq("{'name':'p','run':{'duration':'5s','target_histograms':true,'interval':'1s'}}"));
        assert_non_null(wire);
        assert_null(strstr(wire, "target_histograms"));
        assert_non_null(strstr(wire, "\"interval\""));
        free(wire);
    }
}

static void test_good_defaults(void **state)
{
    struct iof_plan p;
    const struct iof_line *l;
    const struct iof_worker_cfg *w;

    (void)state;
    load_good(GOOD, NULL, 0, &p);
    assert_string_equal(p.name, "p");
    assert_int_equal(p.run.ramp_ns, 0);
    assert_int_equal(p.run.duration_ns, 5 * S_NS);
    assert_int_equal(p.run.interval_ns, 1 * S_NS);
    assert_int_equal(p.nspecs, 1);
    assert_string_equal(p.specs[0].name, "a");
    assert_int_equal(p.specs[0].nlines, 1);
    l = &p.specs[0].lines[0];
    assert_int_equal(l->size, 4096);
    assert_int_equal(l->share, 100);
    assert_int_equal(l->read_pct, 100);
    assert_int_equal(l->random_pct, 100);
    assert_int_equal(l->align, 0);
    assert_int_equal(l->delay_ns, 0);
    assert_int_equal(l->burst, 1);
    assert_int_equal(p.nworkers, 1);
    w = &p.workers[0];
    assert_int_equal(w->nnodes, 1);
    assert_string_equal(w->nodes[0], "*");
    assert_int_equal(w->count, 1);
    assert_string_equal(w->engine, DEF_ENGINE);
    assert_int_equal(w->queue_depth, 1);
    assert_int_equal(w->ntargets, 1);
    assert_string_equal(w->targets[0].path, "f.dat");
    assert_int_equal(w->targets[0].size, MIB);
    assert_int_equal(w->targets[0].range_offset, 0);
    assert_int_equal(w->targets[0].range_size, 0);
    assert_int_equal(w->pattern, IOF_PATTERN_RANDOM);
    assert_false(w->has_seed);
    assert_int_equal(w->offset_increment, 0); /* Iometer: every worker from the start */
    assert_false(w->offset_increment_pct);
    assert_false(w->hipri);
    assert_int_equal(p.cycle.param, IOF_CYCLE_NONE);
    assert_int_equal(iof_plan_cycle_steps(&p), 1);
    iof_plan_free(&p);
    assert_null(p.specs);
    assert_int_equal(p.nworkers, 0);
    iof_plan_free(&p); /* twice is harmless */
    iof_plan_free(NULL);
}

/* The example plan of the product brief, every field given. */
static const char brief_plan[] =
    "{\n"
    "  'name': 'vsan-4k-70-30',\n"
    "  'run':   {'ramp': '10s', 'duration': '60s', 'interval': '1s'},\n"
    "  'specs': [\n"
    "    {'name': '4K 70% read 100% random',\n"
    "     'lines': [{'size': '4k', 'share': 100, 'read': 70, 'random': 100,\n"
    "                'align': '4k', 'delay': '0ms', 'burst': 1}]}\n"
    "  ],\n"
    "  'workers': [\n"
    "    {'nodes': ['*'], 'count': 2, 'engine': 'libaio', 'queue_depth': 16,\n"
    "     'targets': [{'path': 'iofleet.dat', 'size': '1g'}],\n"
    "     'pattern': 'random', 'seed': 42}\n"
    "  ],\n"
    "  'cycle': {'queue_depth': {'from': 1, 'to': 64, 'step': 'x2'}}\n"
    "}\n";

static void test_good_brief_example(void **state)
{
    struct iof_plan p;
    const struct iof_line *l;
    const struct iof_worker_cfg *w;

    (void)state;
    load_good(brief_plan, NULL, 0, &p);
    assert_string_equal(p.name, "vsan-4k-70-30");
    assert_int_equal(p.run.ramp_ns, 10 * S_NS);
    assert_int_equal(p.run.duration_ns, 60 * S_NS);
    assert_int_equal(p.run.interval_ns, S_NS);
    assert_string_equal(p.specs[0].name, "4K 70% read 100% random");
    l = &p.specs[0].lines[0];
    assert_int_equal(l->size, 4096);
    assert_int_equal(l->share, 100);
    assert_int_equal(l->read_pct, 70);
    assert_int_equal(l->random_pct, 100);
    assert_int_equal(l->align, 4096);
    assert_int_equal(l->delay_ns, 0);
    assert_int_equal(l->burst, 1);
    w = &p.workers[0];
    assert_int_equal(w->count, 2);
    assert_string_equal(w->engine, "libaio");
    assert_int_equal(w->queue_depth, 16);
    assert_string_equal(w->targets[0].path, "iofleet.dat");
    assert_int_equal(w->targets[0].size, 1024 * MIB);
    assert_int_equal(w->pattern, IOF_PATTERN_RANDOM);
    assert_true(w->has_seed);
    assert_int_equal(w->seed, 42);
    assert_int_equal(p.cycle.param, IOF_CYCLE_QUEUE_DEPTH);
    assert_int_equal(p.cycle.from, 1);
    assert_int_equal(p.cycle.to, 64);
    assert_int_equal(p.cycle.step, 2);
    assert_true(p.cycle.exponential);
    assert_int_equal(iof_plan_cycle_steps(&p), 7);
    iof_plan_free(&p);
}

static void test_good_everything(void **state)
{
    struct iof_plan p;
    const struct iof_worker_cfg *w;
    const struct iof_line *l;

    (void)state;
    load_good("{'name':'full','run':{'ramp':0,'duration':90,'interval':'500ms'},"
              "'specs':[{'name':'mix','lines':["
              "{'size':512,'share':60,'read':0,'random':0,'align':'1m','delay':'250ms','burst':16},"
              "{'size':'1M','share':40,'read':33,'random':50,'align':0,'delay':2}]},"
              "{'name':'second','lines':[{'size':'64k'}]}],"
              "'workers':[{'nodes':['node-1','node-2'],'count':4,'engine':'sync','queue_depth':32,"
              "'targets':[{'path':'/dev/sdb','range':{'offset':'1m','size':'10g'}},"
              "{'path':'/data/f','size':'2g','range':{'offset':'1g'}}],"
              "'pattern':'repeat','seed':0},"
              "{'engine':'null','targets':[{'path':'x.dat','size':'16t'}],'pattern':'pseudo',"
              "'seed':9007199254740992}]}",
              NULL, 0, &p);
    assert_int_equal(p.run.ramp_ns, 0);
    assert_int_equal(p.run.duration_ns, 90 * S_NS); /* bare integers are seconds */
    assert_int_equal(p.run.interval_ns, 500 * MS_NS);
    assert_int_equal(p.nspecs, 2);
    l = &p.specs[0].lines[0];
    assert_int_equal(l->size, 512);
    assert_int_equal(l->share, 60);
    assert_int_equal(l->read_pct, 0);
    assert_int_equal(l->random_pct, 0);
    assert_int_equal(l->align, MIB);
    assert_int_equal(l->delay_ns, 250 * MS_NS);
    assert_int_equal(l->burst, 16);
    l = &p.specs[0].lines[1];
    assert_int_equal(l->size, MIB);
    assert_int_equal(l->share, 40);
    assert_int_equal(l->read_pct, 33);
    assert_int_equal(l->random_pct, 50);
    assert_int_equal(l->delay_ns, 2 * S_NS);
    assert_int_equal(l->burst, 1);
    assert_int_equal(p.nworkers, 2);
    w = &p.workers[0];
    assert_int_equal(w->nnodes, 2);
    assert_string_equal(w->nodes[0], "node-1");
    assert_string_equal(w->nodes[1], "node-2");
    assert_int_equal(w->count, 4);
    assert_string_equal(w->engine, "sync");
    assert_int_equal(w->queue_depth, 32);
    assert_int_equal(w->ntargets, 2);
    assert_string_equal(w->targets[0].path, "/dev/sdb");
    assert_int_equal(w->targets[0].size, 0);
    assert_int_equal(w->targets[0].range_offset, MIB);
    assert_int_equal(w->targets[0].range_size, 10240 * MIB);
    assert_int_equal(w->targets[1].size, 2048 * MIB);
    assert_int_equal(w->targets[1].range_offset, 1024 * MIB);
    assert_int_equal(w->targets[1].range_size, 0);
    assert_int_equal(w->pattern, IOF_PATTERN_REPEAT);
    assert_true(w->has_seed);
    assert_int_equal(w->seed, 0);
    w = &p.workers[1];
    assert_string_equal(w->engine, "null");
    assert_int_equal(w->targets[0].size, 16ull << 40);
    assert_int_equal(w->pattern, IOF_PATTERN_PSEUDO);
    assert_int_equal(w->seed, 9007199254740992ull);
    iof_plan_free(&p);
}

static void test_good_quickstart_config(void **state)
{
    char path[4096];
    const char *slash = strrchr(__FILE__, '/');
    struct iof_plan p;
    struct iof_diag d;
    int rc;

    (void)state;
    /* __FILE__ is tests/unit/proto/test_plan.c under the source tree. */
    if (!slash || __FILE__[0] != '/')
        skip();
    snprintf(path, sizeof(path), "%.*s/../../../configs/quickstart.json", (int)(slash - __FILE__),
             __FILE__);
    if (access(path, R_OK) != 0)
        skip();
    rc = proto_plan_load(path, NULL, 0, &p, &d);
    if (rc)
        fail_msg("%s", d.msg);
    assert_string_equal(p.name, "quickstart");
    assert_int_equal(p.run.ramp_ns, S_NS);
    assert_int_equal(p.run.duration_ns, 5 * S_NS);
    assert_int_equal(p.run.interval_ns, S_NS);
    assert_int_equal(p.nspecs, 2);
    assert_int_equal(p.specs[0].lines[0].size, 4096);
    assert_int_equal(p.specs[0].lines[0].read_pct, 70);
    assert_int_equal(p.specs[0].lines[0].random_pct, 100);
    assert_int_equal(p.specs[1].lines[0].size, 65536);
    assert_int_equal(p.specs[1].lines[0].read_pct, 100);
    assert_int_equal(p.specs[1].lines[0].random_pct, 0);
    assert_int_equal(p.nworkers, 1);
    assert_int_equal(p.workers[0].count, 2);
    assert_string_equal(p.workers[0].engine, "libaio");
    assert_int_equal(p.workers[0].queue_depth, 8);
    assert_string_equal(p.workers[0].targets[0].path, "iofleet-quickstart.dat");
    assert_int_equal(p.workers[0].targets[0].size, 64 * MIB);
    assert_int_equal(p.workers[0].pattern, IOF_PATTERN_RANDOM);
    assert_int_equal(p.workers[0].seed, 1);
    iof_plan_free(&p);
}

static void test_good_load_file(void **state)
{
    char path[] = "/tmp/iof_test_plan_XXXXXX";
    int fd = mkstemp(path);
    const char *text = sq(GOOD);
    const char *ov[] = {"run.duration=7s"};
    struct iof_plan p;
    struct iof_diag d;
    int rc;

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    rc = proto_plan_load(path, ov, 1, &p, &d);
    unlink(path);
    if (rc)
        fail_msg("%s", d.msg);
    assert_int_equal(p.run.duration_ns, 7 * S_NS);
    iof_plan_free(&p);
}

static void test_good_no_diag(void **state)
{
    struct iof_plan p;
    const char *text = "{}";

    (void)state;
    /* diag is optional. */
    assert_int_equal(proto_plan_parse("x", text, strlen(text), NULL, 0, &p, NULL), IOF_EPLAN);
}

/* ---- units ---- */

static void test_units_sizes(void **state)
{
    static const struct {
        const char *s;
        int rc;
        uint64_t v;
    } cases[] = {
        {"0", 0, 0},
        {"512", 0, 512},
        {"4k", 0, 4096},
        {"4K", 0, 4096},
        {"1m", 0, MIB},
        {"64M", 0, 64 * MIB},
        {"1g", 0, 1024 * MIB},
        {"2t", 0, 2ull << 40},
        {"16777215t", 0, 16777215ull << 40},
        {"18446744073709551615", 0, UINT64_MAX},
        {"18446744073709551616", -ERANGE, 0},
        {"16777216t", -ERANGE, 0},
        {"", -EINVAL, 0},
        {"k", -EINVAL, 0},
        {"1.5m", -EINVAL, 0},
        {"-1", -EINVAL, 0},
        {"+1", -EINVAL, 0},
        {" 1", -EINVAL, 0},
        {"1 ", -EINVAL, 0},
        {"4kb", 0, 4096},
        {"4KiB", 0, 4096},
        {"16777215TiB", 0, 16777215ull << 40},
        {"16777216tb", -ERANGE, 0},
        {"4p", -EINVAL, 0},
        {"0x10", -EINVAL, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 12345;
        int rc = proto_plan_parse_size(cases[i].s, &v);
        if (rc != cases[i].rc || (rc == 0 && v != cases[i].v))
            fail_msg("size '%s': rc %d v %llu", cases[i].s, rc, (unsigned long long)v);
    }
}

static void test_units_durations(void **state)
{
    static const struct {
        const char *s;
        int rc;
        uint64_t v;
    } cases[] = {
        {"0s", 0, 0},
        {"0ms", 0, 0},
        {"500ms", 0, 500 * MS_NS},
        {"10s", 0, 10 * S_NS},
        {"10S", 0, 10 * S_NS},
        {"2m", 0, 120 * S_NS},
        {"1h", 0, 3600 * S_NS},
        {"18446744073709ms", 0, 18446744073709ull * MS_NS},
        {"18446744074s", -ERANGE, 0},
        {"10", -EINVAL, 0},
        {"", -EINVAL, 0},
        {"s", -EINVAL, 0},
        {"1.5s", -EINVAL, 0},
        {"-1s", -EINVAL, 0},
        {"10us", -EINVAL, 0},
        {"10sec", -EINVAL, 0},
        {"1d", -EINVAL, 0},
        {"10 s", -EINVAL, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 12345;
        int rc = proto_plan_parse_duration(cases[i].s, &v);
        if (rc != cases[i].rc || (rc == 0 && v != cases[i].v))
            fail_msg("duration '%s': rc %d v %llu", cases[i].s, rc, (unsigned long long)v);
    }
}

static void test_units_format(void **state)
{
    char b[32];

    (void)state;
    proto_plan_format_size(0, b, sizeof(b));
    assert_string_equal(b, "0");
    proto_plan_format_size(1536, b, sizeof(b));
    assert_string_equal(b, "1536");
    proto_plan_format_size(4096, b, sizeof(b));
    assert_string_equal(b, "4k");
    proto_plan_format_size(1536 * 1024, b, sizeof(b));
    assert_string_equal(b, "1536k");
    proto_plan_format_size(64 * MIB, b, sizeof(b));
    assert_string_equal(b, "64m");
    proto_plan_format_size(3ull << 40, b, sizeof(b));
    assert_string_equal(b, "3t");
    proto_plan_format_duration(0, b, sizeof(b));
    assert_string_equal(b, "0s");
    proto_plan_format_duration(500 * MS_NS, b, sizeof(b));
    assert_string_equal(b, "500ms");
    proto_plan_format_duration(1500 * MS_NS, b, sizeof(b));
    assert_string_equal(b, "1500ms");
    proto_plan_format_duration(10 * S_NS, b, sizeof(b));
    assert_string_equal(b, "10s");
    proto_plan_format_duration(120 * S_NS, b, sizeof(b));
    assert_string_equal(b, "2m");
    proto_plan_format_duration(90 * S_NS, b, sizeof(b));
    assert_string_equal(b, "1m30s");
    proto_plan_format_duration(3723 * S_NS, b, sizeof(b));
    assert_string_equal(b, "1h2m3s");
    proto_plan_format_duration(7200 * S_NS, b, sizeof(b));
    assert_string_equal(b, "2h");
    proto_plan_format_duration(5, b, sizeof(b));
    assert_string_equal(b, "5ns");
}

static void test_units_in_plans(void **state)
{
    struct iof_plan p;

    (void)state;
    /* JSON integers: bytes for sizes, seconds for durations. */
    load_good("{" NAME ",'run':{'ramp':2,'duration':3600,'interval':60}," SPECS
              ",'workers':[{'targets':[{'path':'f.dat','size':1048576}]}]}",
              NULL, 0, &p);
    assert_int_equal(p.run.ramp_ns, 2 * S_NS);
    assert_int_equal(p.run.duration_ns, 3600 * S_NS);
    assert_int_equal(p.run.interval_ns, 60 * S_NS);
    assert_int_equal(p.workers[0].targets[0].size, MIB);
    iof_plan_free(&p);
    /* Line sizes need not be 512-aligned when no group uses libaio. */
    load_good("{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':1000}]}],"
              "'workers':[{'engine':'sync','targets':[{'path':'f.dat','size':'1m'}]}]}",
              NULL, 0, &p);
    assert_int_equal(p.specs[0].lines[0].size, 1000);
    iof_plan_free(&p);
    /* The maxima themselves are accepted: ramp 1h, duration 168h. */
    load_good(PLAN_RUN("{'ramp':'1h','duration':'168h'}"), NULL, 0, &p);
    assert_int_equal(p.run.ramp_ns, PROTO_PLAN_MAX_RAMP_NS);
    assert_int_equal(p.run.duration_ns, PROTO_PLAN_MAX_DURATION_NS);
    iof_plan_free(&p);
}

/* ---- cycles and expansion ---- */

static void test_expand_exponential(void **state)
{
    struct iof_plan p;
    struct iof_test *t;
    size_t n;
    static const uint64_t want[] = {1, 2, 4, 8, 16, 32, 64};

    (void)state;
    load_good(PLAN_CYCLE("{'queue_depth':{'from':1,'to':64,'step':'x2'}}"), NULL, 0, &p);
    assert_int_equal(iof_plan_cycle_steps(&p), 7);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++) {
        struct iof_worker_cfg w = iof_test_worker(&p, &t[i], 0);
        assert_int_equal(t[i].index, i);
        assert_int_equal(t[i].spec_index, 0);
        assert_int_equal(t[i].cycle_param, IOF_CYCLE_QUEUE_DEPTH);
        assert_int_equal(t[i].cycle_value, want[i]);
        assert_int_equal(w.queue_depth, want[i]);
        assert_int_equal(w.count, 1);
    }
    free(t);
    iof_plan_free(&p);
}

static void test_expand_linear(void **state)
{
    struct iof_plan p;
    struct iof_test *t;
    size_t n;

    (void)state;
    load_good(PLAN_CYCLE("{'workers':{'from':1,'to':10,'step':'+4'}}"), NULL, 0, &p);
    assert_int_equal(iof_plan_cycle_steps(&p), 3);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 3);
    assert_int_equal(t[0].cycle_value, 1);
    assert_int_equal(t[1].cycle_value, 5);
    assert_int_equal(t[2].cycle_value, 9);
    for (size_t i = 0; i < n; i++) {
        struct iof_worker_cfg w = iof_test_worker(&p, &t[i], 0);
        assert_int_equal(w.count, t[i].cycle_value);
        assert_int_equal(w.queue_depth, 1); /* untouched */
    }
    free(t);
    iof_plan_free(&p);
}

static void test_expand_exponential_uneven(void **state)
{
    struct iof_plan p;
    struct iof_test *t;
    size_t n;

    (void)state;
    /* 3, 9, 27, 81: the next (243) is past `to`, which is not forced in. */
    load_good(PLAN_CYCLE("{'queue_depth':{'from':3,'to':100,'step':'x3'}}"), NULL, 0, &p);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 4);
    assert_int_equal(t[3].cycle_value, 81);
    free(t);
    iof_plan_free(&p);
    /* from == to: one step. */
    load_good(PLAN_CYCLE("{'queue_depth':{'from':4096,'to':4096,'step':'x2'}}"), NULL, 0, &p);
    assert_int_equal(iof_plan_cycle_steps(&p), 1);
    iof_plan_free(&p);
}

static void test_expand_spec_major(void **state)
{
    struct iof_plan p;
    struct iof_test *t;
    size_t n;
    char label[32];

    (void)state;
    load_good("{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':'4k'}]},"
              "{'name':'b','lines':[{'size':'8k'}]}]," WORKERS
              ",'cycle':{'queue_depth':{'from':1,'to':4,'step':'x2'}}}",
              NULL, 0, &p);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(t[i].index, i);
        assert_int_equal(t[i].spec_index, i / 3);
        assert_int_equal(t[i].cycle_value, 1u << (i % 3));
    }
    iof_test_cycle_label(&t[5], label, sizeof(label));
    assert_string_equal(label, "queue_depth=4");
    free(t);
    iof_plan_free(&p);

    /* No cycle: one test per spec, empty label, workers unchanged. */
    load_good("{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':'4k'}]},"
              "{'name':'b','lines':[{'size':'8k'}]}],"
              "'workers':[{'queue_depth':7,'count':3,'targets':[{'path':'f.dat','size':'1m'}]}]}",
              NULL, 0, &p);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 2);
    assert_int_equal(t[1].spec_index, 1);
    assert_int_equal(t[1].cycle_param, IOF_CYCLE_NONE);
    iof_test_cycle_label(&t[1], label, sizeof(label));
    assert_string_equal(label, "");
    {
        struct iof_worker_cfg w = iof_test_worker(&p, &t[1], 0);
        assert_int_equal(w.queue_depth, 7);
        assert_int_equal(w.count, 3);
        assert_int_equal(w.ntargets, 1);
        assert_ptr_equal(w.targets, p.workers[0].targets); /* borrowed */
        w = iof_test_worker(&p, &t[1], 5);                 /* no such group */
        assert_int_equal(w.count, 0);
        assert_null(w.targets);
    }
    free(t);
    iof_plan_free(&p);
}

static void test_expand_targets_and_workers(void **state)
{
    struct iof_plan p;
    struct iof_test *t;
    size_t n;
    char label[32];

    (void)state;
    load_good(
        "{" NAME "," RUN "," SPECS ",'workers':["
        "{'count':2,'queue_depth':4,'targets':[{'path':'a','size':'1m'},{'path':'b','size':'1m'},"
        "{'path':'c','size':'1m'}]},"
        "{'count':5,'targets':[{'path':'a','size':'1m'},{'path':'b','size':'1m'}]}],"
        "'cycle':{'targets':{'from':1,'to':2,'step':'+1'}}}",
        NULL, 0, &p);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        for (size_t g = 0; g < 2; g++) {
            struct iof_worker_cfg w = iof_test_worker(&p, &t[i], g);
            assert_int_equal(w.ntargets, i + 1);
            assert_int_equal(w.count, g ? 5 : 2);
            assert_string_equal(w.targets[0].path, "a");
        }
    }
    iof_test_cycle_label(&t[1], label, sizeof(label));
    assert_string_equal(label, "targets=2");
    free(t);
    iof_plan_free(&p);

    /* A hand-built worker cycle applies to every group. */
    load_good(
        PLAN_WORKERS(
            "[{'targets':[{'path':'a','size':'1m'}]},{'count':9,'targets':[{'path':'/dev/x'}]}]"),
        NULL, 0, &p);
    p.cycle = (struct iof_cycle){IOF_CYCLE_WORKERS, 2, 16, 2, true};
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 4);
    assert_int_equal(iof_test_worker(&p, &t[3], 0).count, 16);
    assert_int_equal(iof_test_worker(&p, &t[3], 1).count, 16);
    iof_test_cycle_label(&t[3], label, sizeof(label));
    assert_string_equal(label, "workers=16");
    iof_test_cycle_label(&t[3], label, 4); /* truncates, stays terminated */
    assert_string_equal(label, "wor");
    free(t);
    iof_plan_free(&p);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(iof_pattern_name(IOF_PATTERN_REPEAT), "repeat");
    assert_string_equal(iof_pattern_name(IOF_PATTERN_PSEUDO), "pseudo");
    assert_string_equal(iof_pattern_name(IOF_PATTERN_RANDOM), "random");
    assert_string_equal(iof_cycle_param_name(IOF_CYCLE_NONE), "none");
    assert_string_equal(iof_cycle_param_name(IOF_CYCLE_QUEUE_DEPTH), "queue_depth");
    assert_string_equal(iof_cycle_param_name(IOF_CYCLE_WORKERS), "workers");
    assert_string_equal(iof_cycle_param_name(IOF_CYCLE_TARGETS), "targets");
}

/* ---- --set, good ---- */

static void test_set_good(void **state)
{
    const char *ov[] = {
        "run.duration=10s",
        "run.ramp=2", /* JSON number: seconds */
        "workers[0].queue_depth=32",
        "workers[0].targets[0].size=64m",
        "specs[0].lines[0].read=70",
        "specs[0].name=\"quoted name\"", /* JSON string */
        "name=bare words",               /* not JSON: a bare string */
        "workers[0].nodes=[\"n1\",\"n2\"]",
        "workers[0].nodes[2]=n3", /* append */
        "workers[0].engine=sync",
        "workers[0].engine=null", /* a bare word is a value: the null engine */
        "workers[0].targets[1]={\"path\":\"/dev/sdc\"}",
        "cycle.queue_depth={\"from\":1,\"to\":8,\"step\":\"x2\"}",
        "run.interval=500ms",
        "run.interval=2s", /* later wins */
    };
    struct iof_plan p;
    const struct iof_worker_cfg *w;

    (void)state;
    load_good(GOOD, ov, sizeof(ov) / sizeof(ov[0]), &p);
    assert_string_equal(p.name, "bare words");
    assert_int_equal(p.run.duration_ns, 10 * S_NS);
    assert_int_equal(p.run.ramp_ns, 2 * S_NS);
    assert_int_equal(p.run.interval_ns, 2 * S_NS);
    assert_string_equal(p.specs[0].name, "quoted name");
    assert_int_equal(p.specs[0].lines[0].read_pct, 70);
    w = &p.workers[0];
    assert_int_equal(w->queue_depth, 32);
    assert_string_equal(w->engine, "null");
    assert_int_equal(w->nnodes, 3);
    assert_string_equal(w->nodes[2], "n3");
    assert_int_equal(w->ntargets, 2);
    assert_int_equal(w->targets[0].size, 64 * MIB);
    assert_string_equal(w->targets[1].path, "/dev/sdc");
    assert_int_equal(p.cycle.param, IOF_CYCLE_QUEUE_DEPTH);
    assert_int_equal(iof_plan_cycle_steps(&p), 4);
    iof_plan_free(&p);
}

static void test_set_creates_and_removes(void **state)
{
    const char *add[] = {"cycle.workers.from=2", "cycle.workers.to=8", "cycle.workers.step=+2"};
    const char *rm[] = {"cycle"};
    const char *rm2[] = {"workers[0].engine=sync", "workers[0].engine", "workers[0].targets[1]",
                         "specs[0].lines[0].read", "cycle.workers"};
    const char *app[] = {"specs[1].name=b", "specs[1].lines[0].size=8k"};
    struct iof_plan p;

    (void)state;
    /* Missing parents are created. */
    load_good(GOOD, add, 3, &p);
    assert_int_equal(p.cycle.param, IOF_CYCLE_WORKERS);
    assert_int_equal(iof_plan_cycle_steps(&p), 4);
    iof_plan_free(&p);
    /* --unset (a key without '=') removes an optional key. */
    load_good(PLAN_CYCLE("{'queue_depth':{'from':1,'to':4,'step':'x2'}}"), rm, 1, &p);
    assert_int_equal(p.cycle.param, IOF_CYCLE_NONE);
    iof_plan_free(&p);
    /* ... an array entry (here the one --set appended), a key back to its
     * default, and a key that is not there is no error. */
    {
        const char *both[] = {"workers[0].targets[1]={\"path\":\"/dev/sdc\"}",
                              rm2[0],
                              rm2[1],
                              rm2[2],
                              rm2[3],
                              rm2[4]};
        load_good(GOOD, both, 6, &p);
        assert_string_equal(p.workers[0].engine, DEF_ENGINE);
        assert_int_equal(p.workers[0].ntargets, 1);
        assert_int_equal(p.specs[0].lines[0].read_pct, 100);
        assert_int_equal(p.cycle.param, IOF_CYCLE_NONE);
        iof_plan_free(&p);
    }
    /* Index == length appends a new object. */
    load_good(GOOD, app, 2, &p);
    assert_int_equal(p.nspecs, 2);
    assert_string_equal(p.specs[1].name, "b");
    assert_int_equal(p.specs[1].lines[0].size, 8192);
    iof_plan_free(&p);
}

/* ---- printing ---- */

static void test_print_plan(void **state)
{
    struct iof_plan p;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    load_good(brief_plan, NULL, 0, &p);
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    proto_plan_print(&p, f);
    fclose(f);
    assert_non_null(strstr(buf, "plan 'vsan-4k-70-30'\n"));
    assert_non_null(strstr(buf, "run: ramp 10s, duration 1m, interval 1s\n"));
    assert_non_null(strstr(buf, "cycle: queue_depth 1..64 step x2 (7 steps)\n"));
    assert_non_null(
        strstr(buf, "tests: 7 (1 spec x 7 cycle steps), 8m10s of ramp and measurement\n"));
    assert_non_null(strstr(buf, "spec 0 '4K 70% read 100% random'\n"));
    assert_non_null(
        strstr(buf, "     0       4k   100%   70%    100%       4k       0s      1  uniform\n"));
    assert_non_null(strstr(buf, "test 1/7: spec 0 '4K 70% read 100% random', queue_depth=1\n"));
    assert_non_null(strstr(buf, "test 7/7: spec 0 '4K 70% read 100% random', queue_depth=64\n"
                                "  workers[0]: nodes *, 2 workers, libaio, qd 64, 1 target: "
                                "'iofleet.dat', pattern random, seed 42\n"));
    free(buf);
    iof_plan_free(&p);
}

/* io_uring with polled completion: parsed, overridable, printed. */
static void test_good_io_uring_hipri(void **state)
{
    const char *off[] = {"workers[0].hipri=false"};
    struct iof_plan p;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    load_good(PLAN_GROUP("'engine':'io_uring','hipri':true,'queue_depth':32,"
                         "'targets':[{'path':'f.dat','size':'1m'}]"),
              NULL, 0, &p);
    assert_string_equal(p.workers[0].engine, "io_uring");
    assert_true(p.workers[0].hipri);
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    proto_plan_print(&p, f);
    fclose(f);
    assert_non_null(strstr(buf, "  workers[0]: nodes *, 1 worker, io_uring, qd 32, 1 target: "
                                "'f.dat', pattern random, polled completion (hipri)\n"));
    free(buf);
    iof_plan_free(&p);
    load_good(PLAN_GROUP("'engine':'io_uring','hipri':true,"
                         "'targets':[{'path':'f.dat','size':'1m'}]"),
              off, 1, &p);
    assert_false(p.workers[0].hipri);
    iof_plan_free(&p);
}

/* ---- one node's share of a test fits one stats message ---- */

/* A plan of groups given as "COUNT:NTARGETS:NODES" ("*" or names joined by
 * '+'), with an optional cycle; 0 or the error message. */
static int node_plan(const char *const *groups, size_t ng, const char *cycle, struct iof_diag *d)
{
    static char buf[4 << 20];
    size_t n = 0;
    struct iof_plan p;
    int rc;

    n +=
        (size_t)snprintf(buf + n, sizeof(buf) - n,
                         "{\"name\":\"p\",\"run\":{\"duration\":\"1s\"},\"specs\":[{\"name\":\"a\","
                         "\"lines\":[{\"size\":\"4k\"}]}],\"workers\":[");
    for (size_t g = 0; g < ng; g++) {
        unsigned count, nt;
        char nodes[256], *tok, *save = NULL;
        assert_int_equal(sscanf(groups[g], "%u:%u:%255s", &count, &nt, nodes), 3);
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              "%s{\"count\":%u,\"engine\":\"null\",\"nodes\":[", g ? "," : "",
                              count);
        for (tok = strtok_r(nodes, "+", &save); tok; tok = strtok_r(NULL, "+", &save))
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\"%s\"",
                                  buf[n - 1] == '[' ? "" : ",", tok);
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "],\"targets\":[");
        for (unsigned t = 0; t < nt; t++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s{\"path\":\"t%u\",\"size\":\"1m\"}",
                                  t ? "," : "", t);
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "]}");
    }
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "]%s%s}", cycle ? ",\"cycle\":" : "",
                          cycle ? cycle : "");
    assert_true(n < sizeof(buf));
    rc = proto_plan_parse("plan.json", buf, n, NULL, 0, &p, d);
    iof_plan_free(&p);
    return rc;
}

static void test_node_share_limits(void **state)
{
    struct iof_diag d = {{0}};
    (void)state;

    /* 5 x 256 targets validated once, then could not be reported. */
    const char *five[] = {"5:256:*"};
    assert_int_equal(node_plan(five, 1, NULL, &d), IOF_EPLAN);
    assert_string_equal(d.msg, "plan.json: workers: every node would run 1280 targets in one "
                               "test (the workers x targets of the groups that select it), at "
                               "most 512, what one node's stats carry");
    /* The largest that validates: exactly the limit. */
    const char *two[] = {"2:256:*"};
    assert_int_equal(node_plan(two, 1, NULL, &d), 0);
    /* Groups add up on the nodes they select, not elsewhere. */
    const char *apart[] = {"2:200:n1", "2:200:n2"};
    assert_int_equal(node_plan(apart, 2, NULL, &d), 0);
    const char *together[] = {"2:200:n1", "1:200:n2+n1"};
    assert_int_equal(node_plan(together, 2, NULL, &d), IOF_EPLAN);
    assert_non_null(strstr(d.msg, "node 'n1' would run 600 targets"));
    const char *star[] = {"1:256:*", "1:10:n3", "1:256:n2+n3"};
    assert_int_equal(node_plan(star, 3, NULL, &d), IOF_EPLAN);
    assert_non_null(strstr(d.msg, "node 'n3' would run 522 targets"));
    const char *fits[] = {"1:256:*", "1:256:n2", "1:256:n3"};
    assert_int_equal(node_plan(fits, 3, NULL, &d), 0);
    /* The cycle's largest step counts: 1..3 workers of 200 targets. */
    const char *cyc[] = {"1:200:*"};
    assert_int_equal(node_plan(cyc, 1, "{\"workers\":{\"from\":1,\"to\":3,\"step\":\"+1\"}}", &d),
                     IOF_EPLAN);
    assert_non_null(strstr(d.msg, "would run 600 targets"));
    assert_int_equal(node_plan(cyc, 1, "{\"workers\":{\"from\":1,\"to\":2,\"step\":\"+1\"}}", &d),
                     0);
}

/* "offset"/"size" as percentages: kept as written, resolved against the
 * target's size by iof_target_range() (the agent calls it once the size is
 * known), rounded down to the alignment. */
static void test_good_range_pct(void **state)
{
    struct iof_plan p;
    const struct iof_target_cfg *t;
    uint64_t st, en;

    (void)state;
    load_good(PLAN_TARGETS("{'path':'/dev/sdb','range':{'offset':'0%','size':'10%'}},"
                           "{'path':'f.dat','size':'1m','range':{'offset':'50%'}},"
                           "{'path':'g.dat','size':'1m','range':{'offset':'128k','size':'25%'}}"),
              NULL, 0, &p);
    t = &p.workers[0].targets[0];
    assert_true(t->range_offset_pct);
    assert_true(t->range_size_pct);
    assert_int_equal(t->range_offset, 0);
    assert_int_equal(t->range_size, 10);
    /* 10% of 1000 MiB + 1 byte: 100 MiB, rounded down to 4 KiB. */
    assert_int_equal(iof_target_range(t, 1000 * MIB + 1, 4096, &st, &en), 0);
    assert_int_equal(st, 0);
    assert_int_equal(en, 100 * MIB);
    /* 10% of 100005 bytes is 10000; aligned down to 512: 9728. */
    assert_int_equal(iof_target_range(t, 100005, 512, &st, &en), 0);
    assert_int_equal(en, 9728);
    /* Too small a target: 10% rounds to nothing. */
    assert_int_equal(iof_target_range(t, 4096, 512, &st, &en), -ERANGE);
    /* No overflow near 2^64. */
    assert_int_equal(iof_target_range(t, UINT64_MAX - 4095, 4096, &st, &en), 0);
    assert_true(en > (UINT64_MAX / 10) - 4096 && en <= UINT64_MAX / 10);
    assert_int_equal(en % 4096, 0);

    t = &p.workers[0].targets[1];
    assert_true(t->range_offset_pct);
    assert_false(t->range_size_pct);
    assert_int_equal(iof_target_range(t, MIB, 512, &st, &en), 0);
    assert_int_equal(st, MIB / 2);
    assert_int_equal(en, MIB);

    t = &p.workers[0].targets[2];
    assert_false(t->range_offset_pct);
    assert_true(t->range_size_pct);
    assert_int_equal(iof_target_range(t, MIB, 512, &st, &en), 0);
    assert_int_equal(st, 128 * 1024);
    assert_int_equal(en, 128 * 1024 + MIB / 4);
    assert_int_equal(iof_target_range(t, 128 * 1024, 512, &st, &en), -ERANGE);
    iof_plan_free(&p);

    /* Byte ranges resolve as before. */
    load_good(PLAN_TARGETS("{'path':'f.dat','size':'1m','range':{'offset':'4k','size':'8k'}}"),
              NULL, 0, &p);
    t = &p.workers[0].targets[0];
    assert_false(t->range_offset_pct || t->range_size_pct);
    assert_int_equal(iof_target_range(t, MIB, 4096, &st, &en), 0);
    assert_int_equal(st, 4096);
    assert_int_equal(en, 12288);
    iof_plan_free(&p);
}

/* {A..B} in a target path: B-A+1 targets in order, the entry's other keys
 * copied to each; zero padding as bash's {00..09}; braces without ".." are
 * plain characters. */
static void test_good_path_template(void **state)
{
    struct iof_plan p;
    const struct iof_worker_cfg *w;
    char want[32];

    (void)state;
    load_good(PLAN_TARGETS("{'path':'vmdk{0..9}.dat','size':'1m','range':{'size':'10%'}},"
                           "{'path':'/dev/nvme{2..3}n1'},{'path':'/dev/x{b}'},"
                           "{'path':'d{08..10}','size':'4k'},{'path':'one{5..5}','size':'4k'}"),
              NULL, 0, &p);
    w = &p.workers[0];
    assert_int_equal(w->ntargets, 10 + 2 + 1 + 3 + 1);
    for (size_t i = 0; i < 10; i++) {
        snprintf(want, sizeof(want), "vmdk%zu.dat", i);
        assert_string_equal(w->targets[i].path, want);
        assert_int_equal(w->targets[i].size, MIB);
        assert_true(w->targets[i].range_size_pct);
        assert_int_equal(w->targets[i].range_size, 10);
    }
    assert_string_equal(w->targets[10].path, "/dev/nvme2n1");
    assert_string_equal(w->targets[11].path, "/dev/nvme3n1");
    assert_string_equal(w->targets[12].path, "/dev/x{b}");
    assert_string_equal(w->targets[13].path, "d08");
    assert_string_equal(w->targets[14].path, "d09");
    assert_string_equal(w->targets[15].path, "d10");
    assert_string_equal(w->targets[16].path, "one5");
    iof_plan_free(&p);

    /* Exactly the maximum, and a cycle over the expanded targets. */
    load_good("{" NAME "," RUN "," SPECS
              ",'workers':[{'targets':[{'path':'t{1..256}','size':'4k'}]}],"
              "'cycle':{'targets':{'from':1,'to':256,'step':'x2'}}}",
              NULL, 0, &p);
    assert_int_equal(p.workers[0].ntargets, 256);
    assert_string_equal(p.workers[0].targets[255].path, "t256");
    assert_int_equal(iof_plan_cycle_steps(&p), 9);
    iof_plan_free(&p);
}

/* "cycle": {"size", "read", "random"} expands each single-line spec into
 * the cross product, first axis outermost, named after what each line does;
 * a worker-parameter cycle multiplies the tests as before. */
static void test_scycle_expand(void **state)
{
    static const char *want[] = {
        "4k 100% read 100% random", "4k 0% read 100% random",   "4k 100% read 0% random",
        "4k 0% read 0% random",     "8k 100% read 100% random", "8k 0% read 100% random",
        "8k 100% read 0% random",   "8k 0% read 0% random",     "64k 100% read 100% random",
        "64k 0% read 100% random",  "64k 100% read 0% random",  "64k 0% read 0% random"};
    struct iof_plan p;
    struct iof_test *t;
    size_t n;

    (void)state;
    load_good("{" NAME "," RUN ",'specs':[{'name':'m','lines':[{'size':'512','read':70,"
              "'random':50,'delay':'1ms','burst':4}]}]," WORKERS
              ",'cycle':{'size':['4k','8k','64k'],'random':[100,0],'read':[100,0]}}",
              NULL, 0, &p);
    assert_int_equal(p.nspecs, 12);
    assert_int_equal(p.nspecs_cycled, 1);
    assert_int_equal(p.nspec_cycle, 3);
    for (size_t i = 0; i < 12; i++) {
        const struct iof_line *l = &p.specs[i].lines[0];
        char name[64];
        assert_int_equal(p.specs[i].nlines, 1);
        assert_string_equal(p.specs[i].name, want[i]);
        snprintf(name, sizeof(name), "%" PRIu64 "k %u%% read %u%% random", l->size / 1024,
                 l->read_pct, l->random_pct);
        assert_string_equal(p.specs[i].name, name);
        /* Only the cycled fields change. */
        assert_int_equal(l->delay_ns, MS_NS);
        assert_int_equal(l->burst, 4);
        assert_int_equal(l->share, 100);
    }
    iof_plan_free(&p);

    /* With a queue_depth cycle, a multi-line spec kept as written and two
     * single-line specs (named "spec: ..."): (2 x 2 + 1) specs x 3 steps. */
    load_good("{" NAME "," RUN ",'specs':[{'name':'a','lines':[{'size':'4k'}]},"
              "{'name':'mix','lines':[{'size':'4k','share':50},{'size':'8k','share':50}]},"
              "{'name':'b','lines':[{'size':'8k','read':30}]}]," WORKERS
              ",'cycle':{'queue_depth':{'from':1,'to':4,'step':'x2'},'random':[0,100]}}",
              NULL, 0, &p);
    assert_int_equal(p.nspecs, 5);
    assert_string_equal(p.specs[0].name, "a: 4k 100% read 0% random");
    assert_string_equal(p.specs[1].name, "a: 4k 100% read 100% random");
    assert_string_equal(p.specs[2].name, "mix");
    assert_int_equal(p.specs[2].nlines, 2);
    assert_string_equal(p.specs[3].name, "b: 8k 30% read 0% random");
    assert_string_equal(p.specs[4].name, "b: 8k 30% read 100% random");
    assert_int_equal(p.cycle.param, IOF_CYCLE_QUEUE_DEPTH);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 15);
    assert_int_equal(t[14].spec_index, 4);
    assert_int_equal(t[14].cycle_value, 4);
    free(t);
    iof_plan_free(&p);

    /* 32 x 32 = 1024 specs is the maximum; one more value is refused. */
    {
        char plan[4096], *q = plan;
        q += sprintf(q, "{" NAME "," RUN "," SPECS "," WORKERS ",'cycle':{'read':[");
        for (int i = 0; i < 32; i++)
            q += sprintf(q, "%s%d", i ? "," : "", i);
        q += sprintf(q, "],'random':[");
        for (int i = 0; i < 32; i++)
            q += sprintf(q, "%s%d", i ? "," : "", i);
        sprintf(q, "]}}");
        load_good(plan, NULL, 0, &p);
        assert_int_equal(p.nspecs, 1024);
        iof_plan_free(&p);
        sprintf(q, ",32]}}");
        expect_msg(plan, NULL, 0,
                   "plan.json: cycle: expands 1 single-line spec into 1056 specs, the maximum "
                   "is 1024");
    }
}

int main(void)
{
#define T(f) cmocka_unit_test(f)
#define B(id) cmocka_unit_test(test_bad_##id)
    const struct CMUnitTest tests[] = {
        B(json_syntax),
        B(json_trailing),
        B(json_empty),
        B(json_line_col),
        B(root_array),
        B(nul_escape),
        B(raw_nul),
        B(root_unknown_key),
        B(root_typo_key),
        B(root_duplicate_key),
        B(name_missing),
        B(name_number),
        B(name_empty),
        B(name_too_long),
        B(unknown_key_escaped),
        B(run_missing),
        B(run_array),
        B(run_unknown_key),
        B(run_target_histograms_type),
        B(run_interval_histograms_type),
        B(run_cleanup_type),
        B(duration_missing),
        B(duration_zero),
        B(duration_no_unit),
        B(duration_fraction),
        B(duration_bad_unit),
        B(duration_negative),
        B(duration_bool),
        B(duration_fraction_number),
        B(duration_overflow),
        B(ramp_negative),
        B(interval_small),
        B(interval_long),
        B(duration_below_default_interval),
        B(specs_missing),
        B(specs_empty),
        B(specs_object),
        B(spec_not_object),
        B(spec_name_missing),
        B(spec_name_duplicate),
        B(lines_missing),
        B(lines_empty),
        B(too_many_lines),
        B(line_not_object),
        B(dist_unknown),
        B(dist_theta),
        B(dist_pareto),
        B(dist_normal),
        B(dist_zones_sum),
        B(dist_zones_range),
        B(dist_zone_form),
        B(dist_type),
        T(test_distribution),
        B(group_spec_unknown),
        B(group_spec_empty),
        B(group_spec_type),
        B(group_name_dup),
        B(group_name_empty),
        T(test_group_specs),
        T(test_group_specs_cycle),
        T(test_group_specs_window),
        B(read_range_brief),
        B(read_fraction),
        B(read_string),
        B(random_negative),
        B(size_missing),
        B(size_zero),
        B(size_too_big),
        B(size_fraction),
        B(size_empty),
        B(size_negative_string),
        B(size_space),
        B(size_fraction_number),
        B(size_negative_number),
        B(size_beyond_2_53),
        B(size_overflow_digits),
        B(size_overflow_suffix),
        B(size_type),
        B(size_odirect),
        B(size_exceeds_target),
        B(share_required),
        B(share_sum),
        B(share_range),
        B(align_odd),
        B(burst_zero),
        B(burst_big),
        B(delay_long),
        B(ramp_too_long),
        B(duration_too_long),
        B(duration_too_long_seconds),
        B(target_path_newline),
        B(target_path_escape),
        T(test_names_utf8_allowed),
        T(test_json_syntax_causes),
        T(test_size_unit_spellings),
        B(size_unknown_unit),
        B(size_decimal_unit),
        B(plan_name_escape),
        B(spec_name_bel),
        B(spec_name_del),
        B(spec_name_c1_csi),
        B(group_name_bidi),
        B(group_name_tab),
        B(spec_name_not_utf8),
        B(line_typo_key),
        B(line_duplicate_key),
        B(workers_missing),
        B(workers_empty),
        B(worker_unknown_key),
        B(count_zero),
        B(count_big),
        B(engine_unknown),
        B(engine_number),
        B(hipri_not_bool),
        B(hipri_string),
        B(hipri_libaio),
        B(hipri_sync),
        B(data_not_object),
        B(data_unknown_key),
        B(data_dedupe_range),
        B(data_compress_number),
        B(data_compress_fraction),
        B(data_unit_pow2),
        B(data_unit_small),
        B(data_with_pattern),
        B(data_whole_units),
        B(verify_unknown),
        B(verify_mode_alone),
        B(verify_mode_bad),
        B(verify_stop_alone),
        B(verify_with_data),
        B(verify_null_engine),
        B(verify_sector),
        B(size_odirect_uring),
        B(qd_big),
        B(pattern_unknown),
        B(seed_negative),
        B(nodes_empty),
        B(nodes_string),
        B(node_empty),
        B(node_duplicate),
        B(node_reserved),
        B(node_too_long),
        B(node_bad_char),
        B(targets_missing),
        B(targets_empty),
        B(target_path_missing),
        B(target_path_empty),
        B(path_too_long),
        B(target_path_dotdot),
        B(target_path_reserved),
        B(target_path_reserved_sub),
        B(target_path_dotdot_absolute),
        B(target_relative_no_size),
        B(target_size_unaligned),
        B(target_unknown_key),
        B(range_unknown_key),
        B(range_offset_unaligned),
        B(range_past_end),
        B(range_offset_outside),
        B(test_file_two_sizes),
        B(cycle_empty),
        B(cycle_two_params),
        B(cycle_unknown_param),
        B(cycle_from_zero),
        B(cycle_to_below_from),
        B(cycle_step_x1),
        B(cycle_step_plus0),
        B(cycle_step_bare),
        B(cycle_step_number),
        B(cycle_step_missing),
        B(cycle_workers_big),
        B(cycle_targets_beyond),
        B(set_unknown_root),
        B(set_unknown_nested),
        B(set_typo),
        B(set_index_range),
        B(unset_bad_key),
        B(unset_past_end),
        B(set_array_as_object),
        B(set_object_as_array),
        B(set_into_value),
        B(set_into_node),
        B(set_bad_syntax),
        B(set_bad_index),
        B(set_dot_index),
        B(set_empty_key),
        B(set_nul),
        B(set_bad_value),
        B(set_bad_read),
        B(unset_required),
        B(set_object_value),
        B(set_engine_odirect),
        B(set_engine_typo),
        B(set_hipri_libaio),
        B(file_missing),
        T(test_good_defaults),
        T(test_good_target_histograms),
        T(test_good_interval_histograms),
        T(test_good_notes),
        B(notes_not_string),
        B(notes_not_array),
        T(test_good_offset_increment),
        T(test_good_rate_and_spec_timing),
        B(rate_empty),
        B(rate_both),
        B(rate_zero),
        B(rate_negative),
        B(rate_huge),
        B(rate_string),
        B(rate_arrival),
        B(rate_unknown),
        B(rate_not_object),
        B(spec_duration_zero),
        B(spec_ramp_big),
        B(io_limit_zero),
        B(io_limit_bad),
        B(spec_duration_below_interval),
        B(no_duration_anywhere),
        T(test_good_data),
        T(test_good_verify),
        B(offset_increment_unaligned),
        B(offset_increment_pct_big),
        B(offset_increment_pct_fraction),
        B(offset_increment_bool),
        B(offset_increment_bad_size),
        T(test_good_brief_example),
        T(test_good_everything),
        T(test_good_quickstart_config),
        T(test_good_load_file),
        T(test_good_no_diag),
        T(test_units_sizes),
        T(test_units_durations),
        T(test_units_format),
        T(test_units_in_plans),
        T(test_expand_exponential),
        T(test_expand_linear),
        T(test_expand_exponential_uneven),
        T(test_expand_spec_major),
        T(test_expand_targets_and_workers),
        T(test_names),
        T(test_set_good),
        T(test_set_creates_and_removes),
        T(test_print_plan),
        T(test_good_io_uring_hipri),
        T(test_node_share_limits),
        B(range_pct_offset_100),
        B(range_pct_size_0),
        B(range_pct_fraction),
        B(range_pct_big),
        B(range_pct_sum),
        B(range_pct_mixed_past_end),
        B(range_pct_line_too_big),
        B(template_two),
        B(template_letters),
        B(template_open_end),
        B(template_long_number),
        B(template_down),
        B(template_huge),
        B(template_total),
        B(template_two_sizes),
        T(test_good_range_pct),
        T(test_good_path_template),
        B(scycle_not_array),
        B(scycle_empty),
        B(scycle_read_range),
        B(scycle_size_zero),
        B(scycle_repeat),
        B(scycle_odirect),
        B(scycle_too_big),
        B(scycle_no_single),
        B(scycle_two_params),
        B(scycle_name_clash),
        T(test_scycle_expand),
    };
#undef B
#undef T
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
