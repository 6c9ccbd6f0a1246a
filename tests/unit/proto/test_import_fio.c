/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_import_fio.c - proto/import_fio.c: each fio construct as
 * the plan it becomes (checked through the plan loader), fio's defaults, the
 * exact messages for ignored and unmappable options, and garbage refused
 * without a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
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

/* Imports text as "j.fio" with flags; a successful import must load as a
 * valid plan. */
static void import_flags(const char *text, unsigned flags, struct result *r)
{
    memset(r, 0, sizeof(*r));
    r->rc = proto_import_fio("j.fio", text, strlen(text), flags, &r->json, &r->msgs, &r->diag);
    if (!r->rc) {
        int prc = proto_plan_parse("j.fio", r->json.p, r->json.len, NULL, 0, &r->plan, &r->diag);
        if (prc)
            print_error("%s\n%s\n", r->diag.msg, r->json.p);
        assert_int_equal(prc, 0);
    }
}

static void import(const char *text, struct result *r)
{
    import_flags(text, 0, r);
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

/* Imports text, which must be refused (IOF_EPLAN) with a message holding want. */
static void refused(const char *text, const char *want)
{
    struct result r;

    import(text, &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    if (!strstr(msgs(&r), want))
        print_error("messages:\n%s", msgs(&r));
    assert_non_null(strstr(msgs(&r), want));
    done(&r);
}

static void test_defaults_are_fios(void **state)
{
    struct result r;
    (void)state;
    import("[j]\nsize=1g\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nspecs, 1);
    assert_int_equal(r.plan.specs[0].nlines, 1);
    assert_int_equal(r.plan.specs[0].lines[0].size, 4096);    /* bs 4k */
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 100); /* rw=read */
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 0); /* sequential */
    assert_int_equal(r.plan.specs[0].io_limit, 1ull << 30);   /* size without time_based */
    assert_int_equal(r.plan.workers[0].count, 1);             /* numjobs 1 */
    assert_int_equal(r.plan.workers[0].queue_depth, 1);       /* iodepth 1 */
    assert_string_equal(r.plan.workers[0].engine, "sync");    /* psync */
    assert_string_equal(r.plan.workers[0].targets[0].path, "j.0.0");
    assert_int_equal(r.plan.workers[0].targets[0].size, 1ull << 30);
    /* fio's psync with direct=0 is iofleet's sync engine: buffered, exact. */
    assert_null(strstr(msgs(&r), "direct"));
    assert_int_equal(r.plan.nnotes, 0);
    done(&r);
}

static void test_four_corners(void **state)
{
    struct result r;
    (void)state;
    import("[global]\nioengine=libaio\niodepth=64\ndirect=1\nnumjobs=4\nfilesize=20g\n"
           "size=100g\nnorandommap\ngroup_reporting\n"
           "[rr]\nrw=randread\nblocksize=4k\nfilename=/mnt/bench\nstonewall\n"
           "[rw]\nrw=randwrite\nblocksize=4k\nfilename=/mnt/bench\nstonewall\n"
           "[sr]\nrw=read\nblocksize=512k\nfilename=/mnt/bench\nstonewall\n"
           "[sw]\nrw=write\nbs=512k\nfilename=/mnt/bench\nstonewall\n",
           &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nspecs, 4);
    assert_int_equal(r.plan.nworkers, 1);
    assert_int_equal(r.plan.workers[0].count, 4);
    assert_int_equal(r.plan.workers[0].queue_depth, 64);
    assert_string_equal(r.plan.workers[0].engine, "libaio");
    assert_string_equal(r.plan.workers[0].targets[0].path, "bench");
    assert_int_equal(r.plan.workers[0].targets[0].size, 20ull << 30);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 100);
    assert_int_equal(r.plan.specs[1].lines[0].read_pct, 0);
    assert_int_equal(r.plan.specs[2].lines[0].size, 512 * 1024);
    assert_int_equal(r.plan.specs[3].lines[0].read_pct, 0);
    assert_int_equal(r.plan.specs[3].lines[0].random_pct, 0);
    /* fio caps size at the file's size: 20g per job. */
    assert_int_equal(r.plan.specs[0].io_limit, 20ull << 30);
    assert_string_equal(r.plan.specs[0].name, "rr (4k random read)");
    assert_non_null(strstr(msgs(&r), "j.fio:8: ignored: norandommap (does not change the load)\n"
                                     "j.fio:9: ignored: group_reporting (does not change the "
                                     "load)\n"));
    assert_non_null(strstr(msgs(&r), "j.fio:13: note: /mnt/bench is a test file 'bench' in the "
                                     "agent's workdir"));
    assert_null(strstr(msgs(&r), "direct=0"));
    done(&r);
}

static void test_mixes_and_bssplit(void **state)
{
    struct result r;
    (void)state;
    import_flags("[m]\nrw=randrw\nrwmixwrite=30\nbssplit=4k/10:64k/50:32k/\nsize=1g\n"
                 "percentage_random=80\nblockalign=8k\n",
                 IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].nlines, 3);
    assert_int_equal(r.plan.specs[0].lines[0].share, 10);
    assert_int_equal(r.plan.specs[0].lines[1].size, 65536);
    assert_int_equal(r.plan.specs[0].lines[2].share, 40);
    assert_int_equal(r.plan.specs[0].lines[2].read_pct, 70);
    assert_int_equal(r.plan.specs[0].lines[2].random_pct, 80);
    assert_int_equal(r.plan.specs[0].lines[0].align, 8192);
    done(&r);

    import_flags("[m]\nrw=readwrite\nrwmixread=70\nsize=1g\n", IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 70);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 0);
    assert_string_equal(r.plan.specs[0].name, "m (4k sequential 70% read)");
    done(&r);

    /* bs=R,W: the direction the job uses counts. */
    import("[w]\nrw=write\nbs=4k,16k\nsize=1g\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].size, 16384);
    done(&r);
}

/* fio keeps a sequential position per direction (a read follows the job's
 * last read, a write its last write); a plan's worker one for both. Measured
 * by tests/bench/import-vs-fio (p1-seqrw-mix70): fio's sequential reads and
 * writes each continue their own stream, the plan's interleave one. So a
 * mixed job with sequential I/O is refused, or approximated with a note; a
 * mixed job that is all random, or a job of one direction, is exact. */
static void test_mixed_sequential_positions(void **state)
{
    struct result r;
    (void)state;
    refused("[j]\nfilename=/dev/sdb\nioengine=libaio\ndirect=1\nsize=1g\nrw=rw\nrwmixread=70\n",
            "j.fio:6: error: cannot map rw=rw of job 'j': fio keeps a sequential position per "
            "direction (a read continues after the job's last read, a write after its last "
            "write), a plan's worker one for both (import with --approximate to continue after "
            "the last I/O of either)\n");
    refused("[j]\nsize=1g\nrw=randrw\npercentage_random=50\n",
            "j.fio:3: error: cannot map randrw with percentage_random=50 of job 'j'");

    import_flags("[j]\nsize=1g\nrw=rw\n", IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 50);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 0);
    assert_int_equal(r.plan.nnotes, 1);
    assert_string_equal(r.plan.notes[0], "j.fio:3: note: job 'j' mixes reads and writes with "
                                         "sequential I/O (rw=rw): fio continues each direction "
                                         "after its own last I/O, the plan after the last I/O of "
                                         "either (--approximate)");
    done(&r);

    /* One direction, or all random: exact. */
    import("[j]\nsize=1g\nrw=rw\nrwmixread=100\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nnotes, 0);
    done(&r);
    import("[j]\nsize=1g\nrw=randrw\nrwmixread=70\nnorandommap\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].read_pct, 70);
    assert_int_equal(r.plan.nnotes, 0);
    done(&r);
}

/* fio's thinktime at an iodepth above 1 waits for every I/O in flight before
 * it thinks (io_u_quiesce); a plan's delay pauses submission only. Measured
 * by tests/bench/import-vs-fio (p2-thinktime-qd8): fio moves more I/Os per
 * pause. Refused, or approximated with a note; at iodepth 1 (or with a
 * synchronous engine) exact. */
static void test_thinktime_depth(void **state)
{
    struct result r;
    (void)state;
#define TJ "[j]\nfilename=/dev/sdb\nioengine=libaio\ndirect=1\nsize=1g\nrw=randread\n"
    refused(TJ "iodepth=8\nthinktime=2000\nthinktime_blocks=4\n",
            "j.fio:8: error: cannot map thinktime of job 'j' at iodepth 8: fio waits for every "
            "I/O in flight to complete before it thinks, a plan's delay pauses submission only "
            "(use iodepth=1, or import with --approximate to pause without waiting)\n");

    import_flags(TJ "iodepth=8\nthinktime=2000\nthinktime_blocks=4\n", IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].queue_depth, 8);
    assert_int_equal(r.plan.specs[0].lines[0].delay_ns, 2000000);
    assert_int_equal(r.plan.specs[0].lines[0].burst, 4);
    assert_int_equal(r.plan.nnotes, 1);
    assert_string_equal(r.plan.notes[0], "j.fio:8: note: job 'j' thinks at iodepth 8: fio waits "
                                         "for every I/O in flight before it thinks, the plan "
                                         "pauses submission only (--approximate)");
    done(&r);

    import(TJ "iodepth=1\nthinktime=2000\nthinktime_blocks=4\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].delay_ns, 2000000);
    assert_int_equal(r.plan.nnotes, 0);
    done(&r);
    import("[j]\nioengine=psync\ndirect=1\nsize=1g\niodepth=8\nthinktime=3ms\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].queue_depth, 1);
    assert_int_equal(r.plan.specs[0].lines[0].delay_ns, 3000000);
    done(&r);
#undef TJ
}

/* fio's zipf is Gray et al.'s approximation of the law, with more of the I/O
 * on the hottest blocks than the exact law a plan's zipf draws (measured by
 * tests/bench/import-vs-fio, p3-zipf): refused, or the exact law with a
 * note. A sequential job's distribution changes nothing: no message. */
static void test_zipf_is_approximated(void **state)
{
    struct result r;
    (void)state;
    refused("[j]\nfilename=/dev/sdb\nioengine=libaio\ndirect=1\nrw=randread\nsize=1g\n"
            "random_distribution=zipf:1.2\n",
            "j.fio:7: error: cannot map random_distribution=zipf:1.2 of job 'j': fio draws Zipf "
            "ranks with an approximation that puts more of the I/O on the hottest blocks than "
            "the Zipf law a plan draws exactly (import with --approximate to draw the law)\n");
    import_flags("[global]\nrandom_distribution=zipf:1.2\n[j]\nrw=randread\nsize=1g\n",
                 IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].dist.kind, IOF_DIST_ZIPF);
    assert_int_equal(r.plan.nnotes, 1);
    assert_string_equal(r.plan.notes[0], "j.fio:2: note: job 'j': random_distribution=zipf:1.2 "
                                         "drawn with the exact Zipf law; fio's approximation puts "
                                         "more of the I/O on the hottest blocks (--approximate)");
    done(&r);
    import("[j]\nrw=read\nsize=1g\nrandom_distribution=zipf:1.2\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nnotes, 0);
    done(&r);
    import("[j]\nrw=randread\nsize=1g\nrandom_distribution=pareto:0.2\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].dist.kind, IOF_DIST_PARETO);
    assert_int_equal(r.plan.nnotes, 0);
    done(&r);
}

/* fio's normal:DEV averages 12 uniform draws and adds one of DEV %: a
 * standard deviation of sqrt(1/144 + (DEV/100)^2/12) of the range (8.82 %
 * for 10), not DEV % (measured by tests/bench/import-vs-fio, p4-normal):
 * refused, or with --approximate the normal law of that deviation. */
static void test_normal_is_fios_sum(void **state)
{
    struct result r;
    (void)state;
    refused("[j]\nfilename=/dev/sdb\nioengine=libaio\ndirect=1\nrw=randread\n"
            "random_distribution=normal:10\n",
            "j.fio:6: error: cannot map random_distribution=normal:10 of job 'j': fio's normal "
            "sums uniform draws, a standard deviation of 8.82 % of the range and not a normal "
            "law (import with --approximate for normal:8.82, the normal law of that "
            "deviation)\n");
    import_flags("[j]\nrw=randread\nsize=1g\nrandom_distribution=normal:1\n",
                 IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].lines[0].dist.kind, IOF_DIST_NORMAL);
    assert_true(r.plan.specs[0].lines[0].dist.param > 8.33 &&
                r.plan.specs[0].lines[0].dist.param < 8.35);
    assert_int_equal(r.plan.nnotes, 1);
    assert_string_equal(r.plan.notes[0], "j.fio:4: note: job 'j': random_distribution=normal:1 "
                                         "drawn as normal:8.34, the normal law of the standard "
                                         "deviation of fio's sum of uniform draws "
                                         "(--approximate)");
    done(&r);
}

static void test_time_rate_distribution_files(void **state)
{
    struct result r;
    (void)state;
    import_flags("[global]\ntime_based\nruntime=2m\nramp_time=500ms\nioengine=io_uring\n"
                 "direct=1\n[t]\nrw=randread\nrate_iops=500\nrate_process=poisson\n"
                 "random_distribution=zipf:1.2\nfilename=/dev/nvme0n1:/dev/nvme1n1\noffset=1g\n"
                 "size=10g\nnumjobs=2\noffset_increment=25%\nthinktime=100\nthinktime_blocks=8\n",
                 IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    /* A job-wide runtime and ramp_time are the run's. */
    assert_int_equal(r.plan.run.duration_ns, 120000000000ull);
    assert_int_equal(r.plan.run.ramp_ns, 500000000ull);
    assert_int_equal(r.plan.specs[0].duration_ns, 0);
    assert_int_equal(r.plan.specs[0].ramp_ns, 0);
    assert_int_equal(r.plan.specs[0].io_limit, 0);
    assert_int_equal(r.plan.workers[0].rate.unit, IOF_RATE_IOPS);
    assert_true(r.plan.workers[0].rate.value == 500.0);
    assert_int_equal(r.plan.workers[0].rate.arrival, IOF_ARRIVAL_POISSON);
    assert_int_equal(r.plan.workers[0].ntargets, 2);
    assert_string_equal(r.plan.workers[0].targets[1].path, "/dev/nvme1n1");
    assert_int_equal(r.plan.workers[0].targets[0].range_offset, 1ull << 30);
    assert_int_equal(r.plan.workers[0].targets[0].range_size, 5ull << 30);
    assert_true(r.plan.workers[0].offset_increment_pct);
    assert_int_equal(r.plan.workers[0].offset_increment, 25);
    /* thinktime is in microseconds; a plan's delay in milliseconds: with
     * --approximate rounded up, with a note. */
    assert_int_equal(r.plan.specs[0].lines[0].delay_ns, 1000000);
    assert_non_null(strstr(msgs(&r), "j.fio:17: note: thinktime=100: rounded up to 1ms (a plan's "
                                     "delay is in milliseconds; --approximate)\n"));
    assert_int_equal(r.plan.specs[0].lines[0].burst, 8);
    assert_int_not_equal(r.plan.specs[0].lines[0].dist.kind, 0);
    done(&r);

    import("[d]\ndirectory=/data\nfilename=a\\:b\nsize=64m\ndirect=1\n", &r);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.plan.workers[0].targets[0].path, "a:b");
    assert_non_null(strstr(msgs(&r), "j.fio:3: note: /data/a:b is a test file 'a:b'"));
    done(&r);
}

static void test_concurrent_jobs_are_groups(void **state)
{
    struct result r;
    (void)state;
    /* Two jobs at once with the same workload on different files: two groups. */
    import("[global]\nrw=randread\nnorandommap\nsize=1g\ndirect=1\n[a]\nfilename=a.dat\n[b]"
           "\nfilename=b.dat\n"
           "iodepth=8\nioengine=libaio\n",
           &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nspecs, 1);
    assert_int_equal(r.plan.nworkers, 2);
    assert_int_equal(r.plan.workers[1].queue_depth, 8);
    done(&r);

    /* Two jobs at once with different workloads: each group runs its own
     * spec (per-group specs), named after its job. */
    import("[a]\nrw=read\nsize=1g\n[b]\nrw=write\nsize=1g\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nspecs, 2);
    assert_int_equal(r.plan.nworkers, 2);
    assert_string_equal(r.plan.workers[0].name, "a");
    assert_string_equal(r.plan.workers[1].name, "b");
    assert_true(r.plan.workers[0].has_specs && r.plan.workers[1].has_specs);
    assert_int_equal(r.plan.workers[0].nspecs, 1);
    assert_string_equal(r.plan.specs[r.plan.workers[0].specs[0]].name, "a (4k sequential read)");
    assert_string_equal(r.plan.specs[r.plan.workers[1].specs[0]].name, "b (4k sequential write)");
    assert_int_equal(r.plan.specs[r.plan.workers[1].specs[0]].lines[0].read_pct, 0);
    done(&r);

    /* Two steps of the same two groups: each group lists a spec per test;
     * job names that are not plain words become group names that are. */
    import("[global]\nsize=1g\ndirect=1\nnorandommap\n[read "
           "me]\nfilename=x\nrw=randread\n[w]\nfilename=y\n"
           "rw=write\n[read me]\nstonewall\nfilename=x\nrw=randwrite\n[w]\nfilename=y\nrw=read\n",
           &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nspecs, 4);
    assert_int_equal(r.plan.nworkers, 2);
    assert_string_equal(r.plan.workers[0].name, "read-me");
    assert_int_equal(r.plan.workers[0].nspecs, 2);
    assert_string_equal(r.plan.specs[r.plan.workers[0].specs[0]].name, "read me (4k random read)");
    assert_string_equal(r.plan.specs[r.plan.workers[0].specs[1]].name, "read me (4k random write)");
    assert_string_equal(r.plan.specs[r.plan.workers[1].specs[1]].name, "w (4k sequential read)");
    done(&r);

    /* Steps whose groups differ cannot be one plan's groups. */
    refused(
        "[a]\nrw=read\nsize=1g\nfilename=x\n[b]\nstonewall\nrw=write\nsize=1g\nioengine=libaio\n"
        "filename=x\ndirect=1\n",
        "j.fio:5: error: job 'b' and the jobs after it up to the next "
        "stonewall run with other workers, engine, queue depth, files "
        "or rate than the jobs from 'a' (line 1): a plan's worker "
        "groups are the same in every test\n");

    refused("[a]\nrw=read\nsize=1g\nfilename=x\n[b]\nrw=read\nsize=1g\nfilename=y\n[c]\nstonewall\n"
            "rw=write\nsize=1g\nfilename=x\n",
            "j.fio:9: error: the step from job 'c' runs 1 job at once "
            "where the first runs 2: a plan's worker groups are the same "
            "in every test\n");
}

static void test_unmappable_options(void **state)
{
    struct result r;
    (void)state;
    import("[a]\nrw=trim\nsize=1g\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_string_equal(msgs(&r), "j.fio:2: error: cannot map rw=trim: iofleet issues reads and "
                                  "writes only (read, write, randread, randwrite, rw, randrw)\n");
    assert_string_equal(r.diag.msg, "j.fio: cannot be imported (the reasons are above)");
    done(&r);

    refused("[a]\nrw=randrw\nbs=4k,8k\nsize=1g\n",
            "j.fio:3: error: cannot map bs=4k,8k: reads and writes of "
            "different sizes in one mix");

    refused("[a]\nrw=read\ntime_based\n", "j.fio:1: error: job 'a' has no end iofleet knows");

    /* What changes the load and has no plan key is refused, never
     * imported with a warning. */
    refused("[a]\nsize=1g\ndirect=1\nrw=read:64k\n",
            "j.fio:4: error: cannot map the ':64k' of rw=read:64k: sequential I/O with holes");
    refused("[a]\nsize=1g\ndirect=1\nrate_min=1m\n",
            "j.fio:4: error: cannot map rate_min=1m: no such setting in iofleet's plan");

    refused("size=1g\n[a]\n", "j.fio:1: error: option outside a section");

    refused("[global]\nsize=1g\n", "j.fio:1: error: no job section");

    refused("[a]\nbssplit=4k/50:8k/60\nsize=1g\n",
            "j.fio:2: error: cannot map bssplit=4k/50:8k/60: the "
            "percentages must sum to 100\n");
}

static void test_garbage_is_refused(void **state)
{
    struct result r;
    char *big = malloc(IOF_IMPORT_MAX_LINE + 16);
    (void)state;
    assert_non_null(big);
    memset(big, 'x', IOF_IMPORT_MAX_LINE + 10);
    memcpy(big, "[a]\n", 4);
    big[IOF_IMPORT_MAX_LINE + 10] = 0;
    refused(big, "j.fio:2: error: line longer than 4096 bytes\n");
    free(big);

    refused("[unterminated\n=\n[]\n\x01\x02=\xff\n", "j.fio:1: error: malformed section header");

    /* Control bytes in a key, a value or a section name are refused
     * (common/text.h), shown escaped, never raw. */
    refused("[a]\nsize=1g\nrw\x1dwrite\n", "j.fio:3: error: option name 'rw\\x1dwrite': must not "
                                           "contain control characters, got \\x1d (a control "
                                           "character) at byte 2\n");
    refused("[a\x1b]\nsize=1g\n", "j.fio:1: error: section name 'a\\x1b': must not contain "
                                  "control characters, got \\x1b (a control character) at "
                                  "byte 1\n");
    refused("[a/b]\nsize=1g\n", "j.fio:1: error: a '/' in a section name\n");
    import("[a]\nsize=1g\nfilename=/dev/sd\x1b]0;x\x07"
           "b\n",
           &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    /* fio ends the line at the ';' */
    assert_non_null(strstr(msgs(&r), "j.fio:3: error: filename '/dev/sd\\x1b]0': must not "
                                     "contain control characters, got \\x1b (a control "
                                     "character) at byte 7\n"));
    assert_null(strchr(msgs(&r), '\x1b'));
    done(&r);
    refused("[a]\nsize=1g\nname=job\xc2\x9b"
            "2J\n",
            "j.fio:3: error: name 'job\\u009b2J': must not contain "
            "control characters, got \\u009b (a C1 control character) "
            "at byte 3\n");

    memset(&r, 0, sizeof(r));
    r.rc = proto_import_fio("j.fio", "[a]\0size=1g\n", 12, 0, &r.json, &r.msgs, &r.diag);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_string_equal(r.diag.msg, "j.fio: a NUL byte: not a fio job file");
    done(&r);
}

/* fio's own syntax: a ';' or '#' anywhere ends the line (fio's
 * strip_blank_end()), ${VAR} comes from the environment, a value in
 * parentheses is arithmetic, and identical per-direction rates are one. */
static void test_fio_syntax(void **state)
{
    struct result r;
    (void)state;
    setenv("IOF_TEST_FIO_BS", "8k", 1);
    unsetenv("IOF_TEST_FIO_UNSET");
    import("[j] ; the job\nrw=randread   # random\nbs=${IOF_TEST_FIO_BS} ; from the environment\n"
           "size=(5*1024*1024/8)\nruntime=(2*30)\ntime_based\nrate_iops=300,300,300\n"
           "iodepth=4;comment\nnorandommap\n",
           &r);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.plan.specs[0].name, "j (8k random read)");
    assert_int_equal(r.plan.specs[0].lines[0].size, 8192);
    assert_int_equal(r.plan.specs[0].lines[0].random_pct, 100);
    assert_int_equal(r.plan.workers[0].targets[0].size, 655360);
    assert_true(r.plan.workers[0].rate.value == 300.0);
    assert_int_equal(r.plan.workers[0].queue_depth, 1); /* sync engine */
    assert_null(strstr(msgs(&r), "cannot map"));
    done(&r);

    import("[j]\nsize=1g\nbs=${IOF_TEST_FIO_UNSET}\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "j.fio:3: error: ${IOF_TEST_FIO_UNSET} is not set in the "
                                     "environment (fio takes it from there)\n"));
    done(&r);

    import("[j]\nsize=5*1024*1024*$mb_memory/8\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "j.fio:2: error: cannot map size=5*1024*1024*$mb_memory/8: "
                                     "$mb_memory is a value of the machine that runs the job, "
                                     "which the manager cannot know: write the number\n"));
    done(&r);

    import("[j]\nsize=1g\nnumjobs=$ncpus\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "j.fio:3: error: cannot map numjobs=$ncpus: $ncpus is"));
    done(&r);

    import("[j]\nsize=(1g/0)\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "j.fio:2: error: cannot map size=(1g/0): division by zero"));
    done(&r);

    import("[j]\nfilename=/dev/sdz\nsize=2z\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "j.fio:3: error: cannot map size=2z: zones (a zoned "
                                     "device's zone size) have no size iofleet knows\n"));
    done(&r);

    refused("[j]\nsize=1g\nrw=randrw\nrate=1m,2m\n",
            "j.fio:4: error: cannot map rate=1m,2m of job 'j': fio caps a mixed job's reads and "
            "writes separately");
}

/* fio options that change the load: mapped exactly or refused. */
static void test_load_options(void **state)
{
    struct result r;
    (void)state;
#define J "[global]\ndirect=1\nioengine=libaio\nsize=1g\nnorandommap\n"
    /* rate=R,: reads only; a write job is not capped, a read job is */
    import(J "[w]\nrw=write\nrate=500k,\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].rate.unit, IOF_RATE_NONE);
    done(&r);
    import(J "[r]\nrw=randread\nrate=512k,\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].rate.unit, IOF_RATE_MIBPS);
    assert_true(r.plan.workers[0].rate.value == 0.5);
    done(&r);
    /* one rate caps both directions of a mixed job separately */
    refused(J "[m]\nrw=randrw\nrate_iops=300\n",
            "j.fio:8: error: cannot map rate_iops=300 of job 'm': fio caps a mixed job's reads");
    /* rate_iops with bssplit paces in bytes of the smallest size */
    import(J "[b]\nrw=randread\nbssplit=4k/50:64k/50\nrate_iops=256\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].rate.unit, IOF_RATE_MIBPS);
    assert_true(r.plan.workers[0].rate.value == 1.0);
    /* and every bssplit size is aligned to the smallest (blockalign) */
    assert_int_equal(r.plan.specs[0].lines[1].align, 4096);
    done(&r);
    /* loops and number_ios end the job */
    import(J "[l]\nrw=read\nloops=3\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].io_limit, 3ull << 30);
    done(&r);
    import(J "[n]\nrw=randread\nbs=8k\nnumber_ios=1000\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.specs[0].io_limit, 8192000);
    done(&r);
    /* exitall: exact when every job runs for the same time */
    import(J "time_based\nruntime=10s\nexitall\n[a]\nrw=read\n[b]\nrw=write\n", &r);
    assert_int_equal(r.rc, 0);
    done(&r);
    refused(J "exitall\n[a]\nrw=read\n[b]\nrw=write\nsize=2g\n",
            "j.fio:6: error: cannot map exitall: job 'a' is not time_based");
    /* startdelay: the same for all is only a pause; else refused */
    import(J "startdelay=5\n[a]\nrw=read\n", &r);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(msgs(&r), "j.fio:6: ignored: startdelay"));
    done(&r);
    refused(J "[a]\nrw=read\n[b]\nrw=write\nstartdelay=2\n",
            "j.fio:10: error: cannot map startdelay: jobs 'a' and 'b' start at different times");
    refused(J "[a]\nrw=read\nstartdelay=1-5\n",
            "j.fio:8: error: cannot map startdelay=1-5: a random start delay in a range");
    refused(J "[a]\nrw=read\n[b]\nwait_for=a\nrw=write\n",
            "j.fio:9: error: cannot map wait_for=a: a job waiting for one named job");
    refused(J "[a]\nrw=randread:8\n",
            "j.fio:7: error: cannot map the ':8' of rw=randread:8: runs of sequential I/Os");
    refused(J "[a]\nrw=read\nthinktime=1500\n",
            "j.fio:8: error: cannot map thinktime=1500: a plan's delay is in whole milliseconds");
    /* verify: a write job is read back after it, a read job checks inline */
    import(J "[w]\nrw=write\nverify=crc32c\nverify_fatal=1\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].verify.algo, IOF_VERIFY_CRC32C);
    assert_int_equal(r.plan.workers[0].verify.mode, IOF_VERIFY_AFTER);
    assert_true(r.plan.workers[0].verify.stop);
    done(&r);
    refused(J "[w]\nrw=write\nverify=md5\n",
            "j.fio:8: error: cannot map verify=md5: the plan verifies with crc32c or xxh64");
    import_flags(J "[w]\nrw=write\nverify=md5\n", IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nnotes, 1);
    assert_string_equal(r.plan.notes[0], "j.fio:8: note: verify=md5: checked with crc32c "
                                         "(--approximate)");
    done(&r);
    refused(J "[m]\nrw=randrw\nverify=crc32c\n",
            "j.fio:8: error: cannot map verify in job 'm': fio verifies a mixed job's reads");
    /* dedupe and compression: the plan's data */
    import(J "[w]\nrw=write\nbs=8k\ndedupe_percentage=30\nbuffer_compress_percentage=60\n", &r);
    assert_int_equal(r.rc, 0);
    assert_true(r.plan.workers[0].data.enabled);
    assert_int_equal(r.plan.workers[0].data.dedupe_pct, 30);
    assert_int_equal(r.plan.workers[0].data.compress_pct, 60);
    assert_int_equal(r.plan.workers[0].data.unit, 8192);
    done(&r);
    /* approximations need --approximate */
    refused(J "[w]\nrw=write\nzero_buffers\nfilename=f\n",
            "j.fio:8: error: cannot map zero_buffers: iofleet writes no all-zero data");
    refused(J "[w]\nrw=write\nnumjobs=4\n",
            "j.fio:6: error: job 'w' has no filename: fio gives each of its 4 jobs a file of its "
            "own");
    import_flags(J "[w]\nrw=write\nnumjobs=4\n", IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nnotes, 1);
    done(&r);
    /* fio's random map: every block once per pass, unless norandommap */
    import("[global]\ndirect=1\nsize=1g\n[r]\nrw=randwrite\n", &r);
    assert_int_equal(r.rc, 0);
    assert_true(r.plan.specs[0].lines[0].random_once);
    done(&r);
    refused("[global]\ndirect=1\nsize=1g\n[r]\nrw=randwrite\nbssplit=4k/50:8k/50\n",
            "j.fio:5: error: job 'r' is random with bssplit and without norandommap");
    {
        /* the plan's random_map: once_per_pass needs the uniform distribution */
        static const char bad[] =
            "{\"name\": \"p\", \"run\": {\"duration\": \"1s\"}, \"specs\": [{\"name\": \"s\", "
            "\"lines\": [{\"size\": \"4k\", \"distribution\": \"zipf:1.2\", \"random_map\": "
            "\"once_per_pass\"}]}], \"workers\": [{\"targets\": [{\"path\": \"t\", \"size\": "
            "\"1m\"}]}]}";
        struct iof_plan p = {0};
        struct iof_diag d = {{0}};
        assert_int_equal(proto_plan_parse("p.json", bad, strlen(bad), NULL, 0, &p, &d), IOF_EPLAN);
        assert_non_null(strstr(d.msg, "specs[0].lines[0].random_map: once_per_pass needs the "
                                      "uniform distribution"));
    }
    import_flags("[global]\ndirect=1\nsize=1g\n[r]\nrw=randwrite\nrandom_distribution=zipf:1.1\n",
                 IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0); /* fio has no map with a skewed distribution */
    assert_false(r.plan.specs[0].lines[0].random_once);
    done(&r);
    /* zoned: a last zone without a size takes the rest */
    import("[global]\ndirect=1\nsize=1g\n[r]\nrw=randread\n"
           "random_distribution=zoned:50/5:30/15:20/\n",
           &r);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.json.p, "\"zoned:50/5:30/15:20/80\""));
    done(&r);
#undef J
}

/* An engine iofleet does not have is refused by name and line (once for a
 * [global] one), never run as local libaio I/O. */
static void test_foreign_engines_refused(void **state)
{
    static const char *const engines[] = {"net",  "netsplice", "rdma",  "http",
                                          "nfs",  "cpuio",     "exec",  "external:/x/e.so",
                                          "mmap", "posixaio",  "splice"};
    struct result r;
    char job[256], want[256];
    (void)state;
    for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
        snprintf(job, sizeof(job), "[a]\nsize=1g\ndirect=1\nioengine=%s\n", engines[i]);
        import(job, &r);
        assert_int_equal(r.rc, IOF_EPLAN);
        snprintf(want, sizeof(want),
                 "j.fio:4: error: cannot map ioengine=%s: iofleet's engines are libaio, "
                 "io_uring, null, windowsaio (iofleet's windows) and sync (fio's sync, psync, "
                 "vsync, pvsync, pvsync2)\n",
                 engines[i]);
        assert_string_equal(msgs(&r), want);
        done(&r);
    }
    import("[global]\nioengine=net\nsize=1g\n[a]\n[b]\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_string_equal(msgs(&r), "j.fio:2: error: cannot map ioengine=net: iofleet's engines are "
                                  "libaio, io_uring, null, windowsaio (iofleet's windows) and "
                                  "sync (fio's sync, psync, vsync, pvsync, pvsync2)\n");
    assert_int_equal(r.json.len, 0);
    done(&r);

    /* the engine is the reason, not the options that only it has */
    import("[global]\nnfs_url=nfs://127.0.0.1/nfs\n[j]\nioengine=nfs\nsize=1g\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_string_equal(msgs(&r), "j.fio:4: error: cannot map ioengine=nfs: iofleet's engines are "
                                  "libaio, io_uring, null, windowsaio (iofleet's windows) and "
                                  "sync (fio's sync, psync, vsync, pvsync, pvsync2)\n");
    done(&r);
}

/* Buffered I/O (direct=0, fio's default) with an O_DIRECT engine is refused
 * naming the option and line; with IOF_IMPORT_APPROXIMATE it is run with
 * O_DIRECT, printed and kept in the plan's notes. fio's synchronous engines
 * map exactly either way: buffered to iofleet's (buffered) sync engine,
 * direct=1 to libaio at queue depth 1. */
static void test_buffered_io(void **state)
{
    struct result r;
    (void)state;
    import("[global]\nioengine=libaio\ndirect=0\n[j]\nsize=1g\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_string_equal(msgs(&r), "j.fio:3: error: cannot map direct=0 of job 'j': buffered I/O, "
                                  "and iofleet's libaio engine always uses O_DIRECT (set "
                                  "direct=1, use ioengine=psync: iofleet's sync engine is "
                                  "buffered, or import with --approximate)\n");
    done(&r);

    import("[j]\nioengine=io_uring\nsize=1g\n", &r);
    assert_int_equal(r.rc, IOF_EPLAN);
    assert_non_null(strstr(msgs(&r), "j.fio:1: error: cannot map direct=0 (fio's default) of job "
                                     "'j': buffered I/O, and iofleet's io_uring engine"));
    done(&r);

    import_flags("[j]\nioengine=libaio\nsize=1g\nbuffered=1\n", IOF_IMPORT_APPROXIMATE, &r);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.plan.workers[0].engine, "libaio");
    assert_string_equal(msgs(&r), "j.fio:4: note: job 'j' has direct=0 (buffered I/O): run with "
                                  "O_DIRECT, as iofleet's libaio engine always does "
                                  "(--approximate)\n");
    assert_int_equal(r.plan.nnotes, 1);
    assert_string_equal(r.plan.notes[0], "j.fio:4: note: job 'j' has direct=0 (buffered I/O): run "
                                         "with O_DIRECT, as iofleet's libaio engine always does "
                                         "(--approximate)");
    done(&r);

    import("[j]\nioengine=psync\ndirect=1\niodepth=8\nsize=1g\n", &r);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.plan.workers[0].engine, "libaio");
    assert_int_equal(r.plan.workers[0].queue_depth, 1);
    done(&r);
}

/* runtime/ramp_time that every job shares are the plan's run.duration and
 * run.ramp, so --set run.duration=... changes an imported plan; jobs with
 * their own keep them in their specs. */
static void test_runtime_is_the_runs(void **state)
{
    static const char job[] =
        "[global]\nruntime=60\nramp_time=5\ntime_based\nsize=16m\n"
        "filename=x\nnorandommap\n[a]\nrw=randread\n[b]\nstonewall\nrw=randwrite\n";
    const char *ov[] = {"run.duration=5s", "run.ramp=0s"};
    struct result r;
    struct iof_plan p;
    struct iof_diag d;
    (void)state;
    import(job, &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.nspecs, 2);
    assert_int_equal(r.plan.run.duration_ns, 60000000000ull);
    assert_int_equal(r.plan.run.ramp_ns, 5000000000ull);
    assert_int_equal(r.plan.specs[0].duration_ns, 0);
    assert_int_equal(r.plan.specs[1].ramp_ns, 0);
    memset(&p, 0, sizeof(p));
    assert_int_equal(proto_plan_parse("j.fio", r.json.p, r.json.len, ov, 2, &p, &d), 0);
    assert_int_equal(p.run.duration_ns, 5000000000ull);
    assert_int_equal(p.run.ramp_ns, 0);
    assert_int_equal(p.specs[0].duration_ns, 0);
    iof_plan_free(&p);
    done(&r);

    import("[global]\ntime_based\nsize=16m\nfilename=x\n[a]\nruntime=30\n[b]\nstonewall\n"
           "runtime=60\n",
           &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.run.duration_ns, 0);
    assert_int_equal(r.plan.specs[0].duration_ns, 30000000000ull);
    assert_int_equal(r.plan.specs[1].duration_ns, 60000000000ull);
    done(&r);
}

/* fio's region is [offset, offset+size) (filesetup.c: io_size = size per
 * file, the file extended to offset + io_size): a 256m offset with size 1g
 * is a 1g range in a 1280m test file, not 768m. With filesize the file is
 * that size and the region runs from the offset to its end. */
static void test_offset_plus_size(void **state)
{
    struct result r;
    (void)state;
    import("[j]\nfilename=f\nsize=1g\noffset=256m\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].targets[0].size, 1280ull << 20);
    assert_int_equal(r.plan.workers[0].targets[0].range_offset, 256ull << 20);
    assert_int_equal(r.plan.workers[0].targets[0].range_size, 1ull << 30);
    assert_int_equal(r.plan.specs[0].io_limit, 1ull << 30);
    done(&r);

    import("[j]\nfilename=f\nfilesize=1g\nsize=1g\noffset=256m\n", &r);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.plan.workers[0].targets[0].size, 1ull << 30);
    assert_int_equal(r.plan.workers[0].targets[0].range_offset, 256ull << 20);
    assert_int_equal(r.plan.workers[0].targets[0].range_size, 768ull << 20);
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_fios),
        cmocka_unit_test(test_four_corners),
        cmocka_unit_test(test_mixes_and_bssplit),
        cmocka_unit_test(test_normal_is_fios_sum),
        cmocka_unit_test(test_zipf_is_approximated),
        cmocka_unit_test(test_thinktime_depth),
        cmocka_unit_test(test_mixed_sequential_positions),
        cmocka_unit_test(test_time_rate_distribution_files),
        cmocka_unit_test(test_concurrent_jobs_are_groups),
        cmocka_unit_test(test_unmappable_options),
        cmocka_unit_test(test_garbage_is_refused),
        cmocka_unit_test(test_fio_syntax),
        cmocka_unit_test(test_foreign_engines_refused),
        cmocka_unit_test(test_buffered_io),
        cmocka_unit_test(test_runtime_is_the_runs),
        cmocka_unit_test(test_offset_plus_size),
        cmocka_unit_test(test_load_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
