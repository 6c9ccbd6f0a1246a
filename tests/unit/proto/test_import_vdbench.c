/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_import_vdbench.c - proto/import_vdbench.c: each vdbench
 * parameter as the plan it becomes (checked through the plan loader),
 * vdbench's defaults, and what cannot be exact refused with FILE:LINE and the
 * parameter, or with --approximate kept in the plan's notes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/spec.h"
#include "proto/import.h"
#include "proto/plan.h"

struct result {
    int rc;
    struct iof_buf json, msgs;
    struct iof_diag diag;
    struct iof_plan plan;
};

/* Imports text as "p.vdb"; a successful import must load as a valid plan. */
static void import_flags(const char *text, unsigned flags, struct result *r)
{
    memset(r, 0, sizeof(*r));
    r->rc = proto_import_vdbench("p.vdb", text, strlen(text), flags, NULL, NULL, 0, &r->json,
                                 &r->msgs, &r->diag);
    if (!r->rc) {
        int prc = proto_plan_parse("p.vdb", r->json.p, r->json.len, NULL, 0, &r->plan, &r->diag);
        if (prc)
            print_error("%s\n%s\n", r->diag.msg, r->json.p);
        assert_int_equal(prc, 0);
    }
}

static void import(const char *text, struct result *r)
{
    import_flags(text, 0, r);
    if (r->rc)
        print_error("%s", r->msgs.p ? r->msgs.p : "");
    assert_int_equal(r->rc, 0);
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

static void refused_flags(const char *text, unsigned flags, const char *want)
{
    struct result r;

    import_flags(text, flags, &r);
    if (r.rc != IOF_EPLAN || !strstr(msgs(&r), want))
        print_error("rc %d, messages:\n%s", r.rc, msgs(&r));
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), want));
    done(&r);
}

static void refused(const char *text, const char *want)
{
    refused_flags(text, 0, want);
}

#define SD "sd=sd1,lun=/dev/sdb,openflags=o_direct\n"

static void test_hcibench_profile(void **state)
{
    struct result r;
    (void)state;
    import("* HCIBench: 10 vmdk, 10 % working set, 4k, 70 % read, 50 % random, 2 threads\n"
           "sd=default,openflags=o_direct,size=1000m,range=(0,10),threads=2\n"
           "sd=sd1,lun=vmdk0.dat\nsd=sd2,lun=vmdk1.dat\nsd=sd3,lun=vmdk2.dat\n"
           "wd=wd1,sd=(sd1-sd3),xfersize=4k,rdpct=70,seekpct=50\n"
           "rd=run1,wd=wd1,iorate=max,elapsed=330,warmup=30,interval=1\n",
           &r);
    assert_int_equal(r.plan.nspecs, 1);
    assert_int_equal(r.plan.specs[0].nlines, 1);
    assert_int_equal(r.plan.specs[0].lines[0].size, 4096);
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 70);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 50);
    assert_int_equal(r.plan.run.ramp_ns, 30000000000ull);
    assert_int_equal(r.plan.run.duration_ns, 300000000000ull);
    assert_int_equal(r.plan.nworkers, 1);
    assert_int_equal(r.plan.workers[0].queue_depth, 2);
    assert_int_equal(r.plan.workers[0].count, 1);
    /* the three luns as one template, each 10 % of 1000m */
    assert_non_null(strstr(r.json.p, "\"path\": \"vmdk{0..2}.dat\", \"size\": \"1000m\", "
                                     "\"range\": {\"offset\": \"0%\", \"size\": \"10%\"}"));
    assert_string_equal(msgs(&r), "");
    done(&r);
}

static void test_defaults_are_vdbenchs(void **state)
{
    struct result r;
    (void)state;
    /* xfersize 4k, rdpct 100, seekpct 100, threads 8, elapsed 30 with the
     * first interval left out, interval 1 */
    import(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n", &r);
    assert_int_equal(r.plan.specs[0].lines[0].size, 4096);
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 100);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 100);
    assert_int_equal(r.plan.workers[0].queue_depth, 8);
    assert_int_equal(r.plan.run.ramp_ns, 1000000000ull);
    assert_int_equal(r.plan.run.duration_ns, 29000000000ull);
    assert_non_null(strstr(r.json.p, "\"nodes\": [\"*\"]"));
    assert_non_null(strstr(r.json.p, "\"pattern\": \"random\""));
    done(&r);
}

static void test_syntax_comments_continuation_defaults(void **state)
{
    struct result r;
    (void)state;
    import("* a comment\n/ another\n# and another\n"
           "sd=sd1,lun=/dev/sdb,\n  openflags=o_direct,\n  threads=16\r\n"
           "wd=default,xfersize=8k\n"
           "WD=wd1,sd=sd1,\n    rdpct=0\n"
           "rd=default,elapsed=20,warmup=5\n"
           "rd=rd1,wd=wd*,iorate=max\n",
           &r);
    assert_int_equal(r.plan.specs[0].lines[0].size, 8192);
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 0);
    assert_int_equal(r.plan.workers[0].queue_depth, 16);
    assert_int_equal(r.plan.run.duration_ns, 15000000000ull);
    done(&r);
}

static void test_xfersize_distribution_and_skew(void **state)
{
    struct result r;
    (void)state;
    /* by I/O count: hot has 40 % of the I/Os, half 4k half 8k; cold the rest */
    import(SD "wd=hot,sd=sd1,xfersize=(4k,50,8k,50),rdpct=70,seekpct=random,skew=40\n"
              "wd=cold,sd=sd1,xfersize=64k,rdpct=0,seekpct=seq\n"
              "rd=rd1,wd=(hot,cold),iorate=max\n",
           &r);
    assert_int_equal(r.plan.specs[0].nlines, 3);
    assert_int_equal(r.plan.specs[0].lines[0].share, 20);
    assert_int_equal(r.plan.specs[0].lines[1].size, 8192);
    assert_int_equal(r.plan.specs[0].lines[1].share, 20);
    assert_int_equal(r.plan.specs[0].lines[2].size, 65536);
    assert_int_equal(r.plan.specs[0].lines[2].share, 60);
    assert_int_equal(r.plan.specs[0].lines[2].random_pct, 0);
    assert_int_equal(r.plan.specs[0].lines[2].read_pct, 0);
    done(&r);
    refused(SD "wd=a,sd=sd1,xfersize=(4k,50,8k,50),skew=33\nwd=b,sd=sd1\n"
               "rd=rd1,wd=(a,b),iorate=max\n",
            "p.vdb:2: error: wd=a: skew 33% of a 50% transfer size is not a whole percentage");
    refused(SD "wd=wd1,sd=sd1,xfersize=(4k,50,8k,40)\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:2: error: cannot map xfersize=(4k,50,8k,40): the percentages add up to 90");
    refused(SD "wd=wd1,sd=sd1,xfersize=(4k,64k,4k)\nrd=rd1,wd=wd1,iorate=max\n",
            "cannot map xfersize=(4k,64k,4k): (MIN,MAX,ALIGN) picks each transfer size at random");
    refused(SD "sd=sd2,lun=/dev/sdc,openflags=o_direct\nwd=a,sd=sd1\nwd=b,sd=sd2\n"
               "rd=rd1,wd=(a,b),iorate=max\n",
            "p.vdb:4: error: rd=rd1 runs wd=a and wd=b on different SDs or ranges at once");
}

static void test_seekpct_forms(void **state)
{
    struct result r;
    (void)state;
    import("sd=sd1,lun=f,size=64m,openflags=o_direct\n"
           "wd=wd1,sd=sd1,xfersize=1m,seekpct=eof\nrd=rd1,wd=wd1,iorate=max\n",
           &r);
    /* one pass to the end of the file: io_limit = the file */
    assert_int_equal(r.plan.specs[0].io_limit, 64ull << 20);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 0);
    done(&r);
    refused(SD "wd=wd1,sd=sd1,seekpct=eof\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:1: error: seekpct=eof reads sd=sd1 to its end once, and its size is not in");
    refused(SD "wd=wd1,sd=sd1,seekpct=12.5\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:2: error: cannot map seekpct=12.5: a fraction of a percent");
    import_flags(SD "wd=wd1,sd=sd1,seekpct=12.5\nrd=rd1,wd=wd1,iorate=max\n",
                 IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 13);
    assert_int_equal(r.plan.nnotes, 1);
    assert_string_equal(r.plan.notes[0],
                        "p.vdb:2: note: seekpct=12.5: rounded to 13% random (--approximate)");
    done(&r);
}

static void test_rates_and_curves(void **state)
{
    struct result r;
    (void)state;
    import("hd=default,jvms=2\nhd=h1,system=10.0.0.1\nhd=h2,system=10.0.0.2\n" SD
           "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=1000,distribution=deterministic\n",
           &r);
    /* the run's rate divided between its two hosts, one worker each */
    assert_non_null(strstr(r.json.p, "\"nodes\": [\"h1\", \"h2\"]"));
    assert_non_null(strstr(r.json.p, "\"rate\": {\"iops\": 500, \"arrival\": \"uniform\"}"));
    done(&r);
    import(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=200\n", &r);
    /* vdbench's default arrivals are exponential */
    assert_non_null(strstr(r.json.p, "\"rate\": {\"iops\": 200, \"arrival\": \"poisson\"}"));
    done(&r);
    import(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=curve\n", &r);
    assert_non_null(strstr(r.json.p, "\"cycle\": {\"rate\": {\"curve\": [10, 50, 70, 80, 90, "
                                     "100]}}"));
    done(&r);
    refused(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=curve,curve=(50,100,120)\n",
            "p.vdb:3: error: cannot map curve=(50,100,120): '120': the plan's curve takes whole "
            "percentages 1..100");
    refused(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=(100,200)\n",
            "p.vdb:3: error: cannot map iorate=(100,200): expected max, curve or one I/O rate");
    refused(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1\n", "p.vdb:3: error: rd=rd1 has no iorate=");
}

static void test_for_loops(void **state)
{
    struct result r;
    (void)state;
    import(SD "wd=wd1,sd=sd1\n"
              "rd=rd1,wd=wd1,iorate=max,forxfersize=(4k,64k),forrdpct=(100,0),"
              "forseekpct=(random,seq),forthreads=(1,2,4,8)\n",
           &r);
    assert_int_equal(r.plan.nspec_cycle, 3);
    assert_int_equal(r.plan.nspecs, 8);
    assert_int_equal(r.plan.cycle.param, IOF_CYCLE_QUEUE_DEPTH);
    assert_int_equal(r.plan.cycle.from, 1);
    assert_int_equal(r.plan.cycle.to, 8);
    done(&r);
    refused(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,forthreads=(1,2),forrdpct=(0,100)\n",
            "p.vdb:3: error: cannot map forthreads=(1,2): forthreads before another for-loop");
    refused(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,forthreads=(1,3,4)\n",
            "cannot map forthreads=(1,3,4): the plan cycles the queue depth in equal steps");
    refused(SD "wd=wd1,sd=sd1,xfersize=(4k,50,8k,50)\nrd=rd1,wd=wd1,iorate=max,"
               "forrdpct=(0,100)\n",
            "cannot map forrdpct=(0,100): a for-loop over a mix");
}

static void test_refused_by_name(void **state)
{
    (void)state;
    refused(SD "wd=wd1,sd=sd1,rhpct=50\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:2: error: cannot map rhpct=50: cache hit percentages");
    refused(SD "wd=wd1,sd=sd1,hotband=(10,20)\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:2: error: cannot map hotband=(10,20): vdbench skews the I/O inside the band "
            "toward its lower LBAs by a law its documentation does not give");
    refused("fsd=fsd1,anchor=/mnt\n", "p.vdb:1: error: cannot map fsd=fsd1: file-system");
    refused("sd=sd1,lun=$lun\n",
            "p.vdb:1: error: $lun has no value: vdbench takes it from its command line "
            "(lun=VALUE); give it with --var lun=VALUE");
    refused(SD "wd=wd1,sd=sd1,bogus=1\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:2: error: cannot map bogus=1: not a vdbench raw-I/O parameter of wd=");
    refused(SD "include=more.vdb\n", "p.vdb:2: error: cannot map include=more.vdb");
    refused(SD "wd=wd1,sd=sd9\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:2: error: sd=sd9: no sd= named 'sd9'");
    refused(SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max,elapsed=1\n",
            "p.vdb:3: error: rd=rd1: elapsed=1 leaves no measured time");
    refused("xfersize=4k\n", "p.vdb:1: error: xfersize=4k outside a definition");
    refused("sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:1: error: cannot map sd=sd1 without openflags=o_direct");
    refused("hd=h1,clients=4\n" SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:1: error: cannot map clients=4");
}

static void test_hot_bands_and_ranges(void **state)
{
    struct result r;
    (void)state;
    /* --approximate: each band a zoned distribution, uniform inside it, noted */
    import_flags(SD "wd=hot,sd=sd1,hotband=(10,11),skew=30\n"
                    "wd=warm,sd=sd1,hotband=(40,45),skew=20,rdpct=0\n"
                    "wd=cold,sd=sd1\n"
                    "rd=rd1,wd=(hot,warm,cold),iorate=max\n",
                 IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].nlines, 3);
    assert_non_null(strstr(r.json.p,
                           "{\"size\": \"4k\", \"share\": 30, \"read\": 100, "
                           "\"random\": 100, \"distribution\": \"zoned:0/10:100/1:0/89\"}"));
    assert_non_null(strstr(r.json.p, "\"share\": 20, \"read\": 0, \"random\": 100, "
                                     "\"distribution\": \"zoned:0/40:100/5:0/55\"}"));
    assert_non_null(strstr(r.json.p, "{\"size\": \"4k\", \"share\": 50, \"read\": 100, "
                                     "\"random\": 100}"));
    assert_int_equal(r.plan.nnotes, 2);
    assert_string_equal(r.plan.notes[0],
                        "p.vdb:2: note: hotband=(10,11): run uniform over 10%..11% of each SD "
                        "(distribution zoned:0/10:100/1:0/89); vdbench skews the I/O inside the "
                        "band toward its lower LBAs (--approximate)");
    done(&r);
    refused_flags(SD "wd=wd1,sd=sd1,hotband=(10,20),seekpct=50\nrd=rd1,wd=wd1,iorate=max\n",
                  IOF_IMPORT_APPROXIMATE,
                  "p.vdb:2: error: cannot map hotband=(10,20): a hot band with sequential I/O");
    refused_flags(SD "wd=wd1,sd=sd1,hotband=(1g,2g)\nrd=rd1,wd=wd1,iorate=max\n",
                  IOF_IMPORT_APPROXIMATE,
                  "p.vdb:2: error: cannot map hotband=(1g,2g): the plan's zones take whole");
    refused_flags(SD "wd=wd1,sd=sd1,range=(0,50),hotband=(10,20)\nrd=rd1,wd=wd1,iorate=max\n",
                  IOF_IMPORT_APPROXIMATE,
                  "p.vdb:2: error: cannot map hotband=(10,20): a hot band of an SD or workload "
                  "with its own range=");
    /* a workload's range= is each SD's region (it was left out before) */
    import(SD "wd=wd1,sd=sd1,range=(20,30)\nrd=rd1,wd=wd1,iorate=max\n", &r);
    assert_non_null(strstr(r.json.p, "{\"path\": \"/dev/sdb\", \"range\": {\"offset\": \"20%\", "
                                     "\"size\": \"10%\"}}"));
    done(&r);
    refused("sd=sd1,lun=/dev/sdb,openflags=o_direct,range=(0,50)\nwd=wd1,sd=sd1,range=(20,30)\n"
            "rd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:2: error: cannot map range=(20,30): a wd= range= on sd=sd1, which has a range= "
            "of its own");
    /* cache hits: refused, saying why */
    refused(SD "wd=wd1,sd=sd1,whpct=10\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:2: error: cannot map whpct=10: cache hit percentages: vdbench sends that share "
            "of the I/Os to each SD's hit area");
}

static void test_buffered_approximated(void **state)
{
    struct result r;
    (void)state;
    import_flags("sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n",
                 IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nnotes, 1);
    assert_string_equal(r.plan.notes[0], "p.vdb:1: note: sd=sd1 has no openflags=o_direct "
                                         "(buffered I/O): run with O_DIRECT (--approximate)");
    done(&r);
}

static void test_data_and_several_runs(void **state)
{
    struct result r;
    (void)state;
    import("compratio=2,dedupratio=4\ndedupunit=4k\n" SD "wd=wd1,sd=sd1\n"
           "rd=rd1,wd=wd1,iorate=max,elapsed=60\nrd=rd2,wd=wd1,iorate=max,elapsed=120,"
           "xfersize=64k\n",
           &r);
    assert_non_null(
        strstr(r.json.p, "\"data\": {\"dedupe\": \"75%\", \"compress\": \"50%\", \"dedupe_unit\": "
                         "\"4k\"}"));
    assert_int_equal(r.plan.nspecs, 2);
    assert_true(r.plan.specs[1].has_duration);
    assert_int_equal(r.plan.specs[1].duration_ns, 119000000000ull);
    assert_int_equal(r.plan.specs[1].lines[0].size, 65536);
    done(&r);
    refused("compratio=3\n" SD "wd=wd1,sd=sd1\nrd=rd1,wd=wd1,iorate=max\n",
            "p.vdb:1: error: cannot map compratio=3: 1:3 leaves 33.33% of the data "
            "incompressible");
    refused(SD "sd=sd2,lun=/dev/sdc,openflags=o_direct\nwd=wd1,sd=sd1\nwd=wd2,sd=sd2\n"
               "rd=rd1,wd=wd1,iorate=max\nrd=rd2,wd=wd2,iorate=max\n",
            "p.vdb:6: error: rd=rd2 runs other SDs, threads, data or rate than rd=rd1");
}

static void test_variables(void **state)
{
    static const char *const vars[] = {"lun=/dev/sdc", "t=4", "xfer=8k", "unused_1=x"};
    const char *text = "sd=sd1,lun=$lun,openflags=o_direct,threads=!t\n"
                       "wd=wd1,sd=sd1,xfersize=$xfer\nrd=rd1,wd=wd1,iorate=max\n",
               *unset = "sd=sd1,lun=/dev/sdb,openflags=o_direct\nwd=w,sd=sd1\n"
                        "rd=r,wd=w,iorate=max,elapsed=!elapsed\n";
    static const char *const bad[] = {"a b=1"};
    struct result r;
    (void)state;
    /* $NAME and !NAME take --var's value; a var the file does not use is a warning */
    memset(&r, 0, sizeof(r));
    r.rc = proto_import_vdbench("p.vdb", text, strlen(text), 0, NULL, vars, 4, &r.json, &r.msgs,
                                &r.diag);
    assert_int_equal(r.rc, 0);
    assert_int_equal(proto_plan_parse("p.vdb", r.json.p, r.json.len, NULL, 0, &r.plan, &r.diag), 0);
    assert_non_null(strstr(r.json.p, "\"path\": \"/dev/sdc\""));
    assert_int_equal(r.plan.workers[0].queue_depth, 4);
    assert_int_equal(r.plan.specs[0].lines[0].size, 8192);
    assert_string_equal(msgs(&r), "p.vdb: warning: --var unused_1: the file has no $unused_1 or "
                                  "!unused_1, so it is not used\n");
    done(&r);
    /* one without a value: named as written, with its line */
    memset(&r, 0, sizeof(r));
    r.rc = proto_import_vdbench("p.vdb", unset, strlen(unset), 0, NULL, vars, 4, &r.json, &r.msgs,
                                &r.diag);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "p.vdb:3: error: !elapsed has no value: vdbench takes it "
                                     "from its command line (elapsed=VALUE); give it with --var "
                                     "elapsed=VALUE\n"));
    done(&r);
    /* a malformed var */
    memset(&r, 0, sizeof(r));
    r.rc = proto_import_vdbench("p.vdb", text, strlen(text), 0, NULL, bad, 1, &r.json, &r.msgs,
                                &r.diag);
    assert_int_equal(r.rc, IOF_EPLAN);
    done(&r);
}

static void test_detect(void **state)
{
    const char *a = "* c\n\nsd=sd1,lun=/dev/sdb\n", *b = "[global]\nbs=4k\n";
    (void)state;
    assert_true(proto_import_vdbench_detect(a, strlen(a)));
    assert_false(proto_import_vdbench_detect(b, strlen(b)));
}

static void test_garbage(void **state)
{
    static const char *const bad[] = {"sd=",    "=x",        "sd=sd1,lun=(",         ",,,,",
                                      "rd=rd1", "wd=(a,b\n", "sd=sd1,lun=\x1b[2J\n", "\xff\xfe"};
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct result r;
        import_flags(bad[i], 0, &r);
        assert_int_not_equal(r.rc, 0);
        done(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hcibench_profile),
        cmocka_unit_test(test_defaults_are_vdbenchs),
        cmocka_unit_test(test_syntax_comments_continuation_defaults),
        cmocka_unit_test(test_xfersize_distribution_and_skew),
        cmocka_unit_test(test_seekpct_forms),
        cmocka_unit_test(test_rates_and_curves),
        cmocka_unit_test(test_for_loops),
        cmocka_unit_test(test_refused_by_name),
        cmocka_unit_test(test_hot_bands_and_ranges),
        cmocka_unit_test(test_buffered_approximated),
        cmocka_unit_test(test_data_and_several_runs),
        cmocka_unit_test(test_variables),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
