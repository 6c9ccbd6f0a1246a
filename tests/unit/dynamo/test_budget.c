/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_budget.c - common/budget.c and dynamo/budget.c: what a test
 * needs on a node (threads, buffer memory, AIO events, descriptors), the
 * refusal messages naming the limit and both numbers, and the start-time
 * check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/spec.h"
#include "dynamo/budget.h"

#define MIB (1024ull * 1024)
#define S_NS 1000000000ull
#define MS_NS 1000000ull

static struct iof_line line16m = {.size = 16 * MIB, .share = 100, .read_pct = 100, .burst = 1};
static struct iof_line line4k = {.size = 4096, .share = 100, .read_pct = 100, .burst = 1};

static struct iof_spec spec_of(struct iof_line *l)
{
    struct iof_spec s = {.name = "s", .lines = l, .nlines = 1};
    return s;
}

static struct iof_worker_cfg group(const char *engine, uint32_t count, uint32_t qd, size_t ntargets,
                                   enum iof_pattern pat)
{
    struct iof_worker_cfg g = {
        .count = count, .queue_depth = qd, .ntargets = ntargets, .pattern = pat};
    snprintf(g.engine, sizeof(g.engine), "%s", engine);
    return g;
}

static void test_need_counts_what_run_allocates(void **state)
{
    struct iof_spec big = spec_of(&line16m), small = spec_of(&line4k);
    const struct iof_spec *bigs[] = {&big, &big}, *smalls[] = {&small, &small};
    const struct iof_spec *mixed[] = {&big, NULL};
    struct iof_worker_cfg g[2];
    struct iof_budget_need n = {0};

    (void)state;
    /* QD 64 x 16 MiB, repeat pattern: 64 read buffers + 1 write source. */
    g[0] = group("sync", 1, 64, 1, IOF_PATTERN_REPEAT);
    iof_budget_need_add(&n, bigs, g, 1);
    assert_int_equal(n.workers, 1);
    assert_int_equal(n.buffer_mem, 65 * 16 * MIB);
    assert_int_equal(n.aio_events, 0);
    assert_int_equal(n.fds, 1);

    /* 15 libaio workers x QD 4096 x 1 target (random data: a write buffer per slot),
     * plus 2 x 1024 null workers in another group. */
    memset(&n, 0, sizeof(n));
    g[0] = group("libaio", 15, 4096, 1, IOF_PATTERN_RANDOM);
    g[1] = group("null", 1024, 1, 3, IOF_PATTERN_REPEAT);
    iof_budget_need_add(&n, smalls, g, 2);
    assert_int_equal(n.workers, 15 + 1024);
    assert_int_equal(n.aio_events, 15 * 4096);
    assert_int_equal(n.buffer_mem, 15 * 2 * 4096ull * 4096 + 1024 * (3 * 4096ull + 4096));
    assert_int_equal(n.fds, 1); /* null opens nothing */

    /* io_uring: no AIO events, a ring descriptor per worker. */
    memset(&n, 0, sizeof(n));
    g[0] = group("io_uring", 3, 32, 2, IOF_PATTERN_REPEAT);
    iof_budget_need_add(&n, smalls, g, 1);
    assert_int_equal(n.aio_events, 0);
    assert_int_equal(n.fds, 2 + 3);
    memset(&n, 0, sizeof(n));
    n.aio_events = 15 * 4096;

    /* Several tests: the largest need of each kind is kept. */
    g[0] = group("libaio", 2048, 1, 4, IOF_PATTERN_REPEAT);
    iof_budget_need_add(&n, smalls, g, 1);
    assert_int_equal(n.workers, 2048);
    assert_int_equal(n.aio_events, 15 * 4096);
    assert_int_equal(n.fds, 4);

    /* Groups running their own specs: each by its spec's transfer size; an
     * idle group (no spec in this test) takes nothing. */
    memset(&n, 0, sizeof(n));
    g[0] = group("sync", 1, 64, 1, IOF_PATTERN_REPEAT);
    g[1] = group("libaio", 7, 8, 2, IOF_PATTERN_REPEAT);
    iof_budget_need_add(&n, mixed, g, 2);
    assert_int_equal(n.workers, 1);
    assert_int_equal(n.buffer_mem, 65 * 16 * MIB);
    assert_int_equal(n.aio_events, 0);
    assert_int_equal(n.fds, 1);
}

/* Verified test files add their generation maps (IOF_GENMAP_BYTES per 4 KiB
 * granule), once per file however many groups name it; devices, absolute
 * paths, files too large to map and sizes left open add nothing. */
static void test_need_counts_generation_maps(void **state)
{
    struct iof_spec small = spec_of(&line4k);
    const struct iof_spec *smalls[] = {&small, &small}, *one_idle[] = {&small, NULL};
    struct iof_target_cfg t0[4] = {{.path = "a", .size = 1024 * MIB},
                                   {.path = "/dev/sdb"},
                                   {.path = "big", .size = 100 * 1024 * MIB},
                                   {.path = "open"}};
    struct iof_target_cfg t1[2] = {{.path = "a", .size = 1024 * MIB}, {.path = "d", .size = 4097}};
    struct iof_target_cfg abs0[4], abs1[2];
    struct iof_worker_cfg g[2];
    struct iof_budget_need with = {0}, without = {0}, idle = {0};

    (void)state;
    memcpy(abs0, t0, sizeof(t0));
    memcpy(abs1, t1, sizeof(t1));
    for (size_t i = 0; i < 4; i++)
        snprintf(abs0[i].path, sizeof(abs0[i].path), "/srv/%zu", i);
    for (size_t i = 0; i < 2; i++)
        snprintf(abs1[i].path, sizeof(abs1[i].path), "/srv/1%zu", i);
    g[0] = group("libaio", 2, 4, 4, IOF_PATTERN_REPEAT);
    g[1] = group("libaio", 1, 1, 2, IOF_PATTERN_REPEAT);
    g[0].verify.algo = g[1].verify.algo = IOF_VERIFY_XXH64;
    g[0].targets = abs0;
    g[1].targets = abs1;
    iof_budget_need_add(&without, smalls, g, 2);
    g[0].targets = t0;
    g[1].targets = t1;
    iof_budget_need_add(&with, smalls, g, 2);
    assert_int_equal(with.buffer_mem - without.buffer_mem,
                     (1024 * MIB / 4096 + 2) * IOF_GENMAP_BYTES);
    /* The second group idles: its file "d" has no map in this test. */
    iof_budget_need_add(&idle, one_idle, g, 2);
    g[0].verify.algo = g[1].verify.algo = IOF_VERIFY_NONE;
    memset(&without, 0, sizeof(without));
    iof_budget_need_add(&without, one_idle, g, 2);
    assert_true(idle.buffer_mem > without.buffer_mem); /* verify's write buffers */
    g[0].targets = abs0;
    g[0].verify.algo = IOF_VERIFY_XXH64;
    memset(&without, 0, sizeof(without));
    iof_budget_need_add(&without, one_idle, g, 2);
    assert_int_equal(idle.buffer_mem - without.buffer_mem, 1024 * MIB / 4096 * IOF_GENMAP_BYTES);
}

static void test_check_names_limit_and_numbers(void **state)
{
    struct dyn_budget b = {.max_workers = 16, .max_buffer_mem = 512 * MIB, .max_aio_events = 100};
    struct dyn_budget_limits lim = {
        .workers = 16, .buffer_mem = 512 * MIB, .aio_events = 100, .fds = 1000};
    struct iof_budget_need n = {
        .workers = 16, .buffer_mem = 512 * MIB, .aio_events = 100, .fds = 1000};
    struct iof_diag d = {{0}};

    (void)state;
    assert_int_equal(dyn_budget_check(&n, &lim, &b, &d), 0); /* at the limits: fits */

    n.workers = 2049;
    assert_int_equal(dyn_budget_check(&n, &lim, &b, &d), IOF_EDENIED);
    assert_string_equal(d.msg,
                        "needs 2049 worker threads, the agent's limit is 16 (--max-workers)");
    n.workers = 1;

    n.buffer_mem = 65 * 16 * MIB;
    assert_int_equal(dyn_budget_check(&n, &lim, &b, &d), IOF_EDENIED);
    assert_string_equal(d.msg, "needs 1.0 GiB of I/O buffers (queue depth x transfer size x "
                               "workers), the agent's limit is 512.0 MiB (--max-buffer-mem)");
    /* Below the flag, the host's free memory was the tighter limit. */
    lim.buffer_mem = 300 * MIB;
    assert_int_equal(dyn_budget_check(&n, &lim, &b, &d), IOF_EDENIED);
    assert_string_equal(d.msg,
                        "needs 1.0 GiB of I/O buffers (queue depth x transfer size x workers), "
                        "the agent's limit is 300.0 MiB (half of the memory free: MemAvailable "
                        "and the cgroup limit)");
    n.buffer_mem = 0;

    n.aio_events = 61440;
    assert_int_equal(dyn_budget_check(&n, &lim, &b, &d), IOF_EDENIED);
    assert_string_equal(d.msg, "needs 61440 AIO events (libaio queue depth x targets x workers), "
                               "the agent's limit is 100 (--max-aio-events)");
    b.max_aio_events = 0;
    lim.aio_events = 4096;
    assert_int_equal(dyn_budget_check(&n, &lim, &b, &d), IOF_EDENIED);
    assert_string_equal(d.msg, "needs 61440 AIO events (libaio queue depth x targets x workers), "
                               "the agent's limit is 4096 (/proc/sys/fs/aio-max-nr - aio-nr, "
                               "less 1/8 of aio-max-nr kept for the host)");
    n.aio_events = 0;

    n.fds = 1001;
    assert_int_equal(dyn_budget_check(&n, &lim, &b, &d), IOF_EDENIED);
    assert_string_equal(d.msg, "needs 1001 descriptors for its targets, the agent can open 1000 "
                               "more (RLIMIT_NOFILE, less those open and 128 kept for "
                               "connections)");
}

static void test_default_workers_are_a_multiple_of_cpus(void **state)
{
    struct dyn_budget b = {0};
    struct dyn_budget_limits lim;
    struct iof_budget_need n = {0};
    struct iof_diag d = {{0}};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char want[256];

    (void)state;
    dyn_budget_limits(&b, &lim);
    assert_int_equal(lim.workers, (uint64_t)cpus * DYN_BUDGET_WORKERS_PER_CPU);
    n.workers = lim.workers + 1;
    assert_int_equal(dyn_budget_check(&n, &lim, &b, &d), IOF_EDENIED);
    snprintf(want, sizeof(want),
             "needs %llu worker threads, the agent's limit is %llu (8 x %ld online CPUs; raise "
             "it with dynamo --max-workers)",
             (unsigned long long)n.workers, (unsigned long long)lim.workers, cpus);
    assert_string_equal(d.msg, want);
    /* A flag lowers the memory and AIO limits, never raises them. */
    b.max_buffer_mem = UINT64_MAX - 1;
    b.max_aio_events = UINT64_MAX - 1;
    dyn_budget_limits(&b, &lim);
    assert_true(lim.buffer_mem < UINT64_MAX - 1);
    assert_true(lim.aio_events < UINT64_MAX - 1);
}

static void test_start_time(void **state)
{
    struct iof_diag d = {{0}};
    uint64_t s = 0, now = 1000 * S_NS;

    (void)state;
    /* In the future, with a negative offset (this node's clock behind). */
    assert_int_equal(
        dyn_budget_start_time(now + 5300 * MS_NS, -(int64_t)(5 * S_NS), 0, now, &s, &d), 0);
    assert_int_equal(s, now + 300 * MS_NS);
    /* A start late by less than the ramp: the ramp absorbs it. */
    assert_int_equal(dyn_budget_start_time(now - 2 * S_NS, 0, 10 * S_NS, now, &s, &d), 0);
    assert_int_equal(s, now - 2 * S_NS);
    /* Late past the measured window's start: refused, naming the difference. */
    assert_int_equal(
        dyn_budget_start_time(now - 12 * S_NS, (int64_t)(2 * S_NS), 0, now + 0, &s, &d), -ERANGE);
    assert_string_equal(d.msg, "the start time is 10.000 s in the past on this node's clock (its "
                               "measured window began 10.000 s ago; clock offset to the manager "
                               "+2.000 s): refused rather than report a cut window as a full "
                               "one; check both clocks");
    /* Far ahead. */
    assert_int_equal(dyn_budget_start_time(now + 3600 * S_NS, 0, 0, now, &s, &d), -ERANGE);
    assert_string_equal(d.msg, "the start time is 3600.000 s ahead on this node's clock (clock "
                               "offset to the manager +0.000 s), more than the 600 s an agent "
                               "waits; check both clocks");
    /* Hostile arithmetic: no signed overflow, no wrap. */
    assert_int_equal(dyn_budget_start_time(UINT64_MAX - 1, INT64_MAX, 0, now, &s, &d), -ERANGE);
    assert_int_equal(dyn_budget_start_time(5, INT64_MIN, 0, now, &s, &d), -ERANGE);
    assert_string_equal(d.msg, "start time 5 ns with clock offset -9223372036.855 s is before "
                               "this node's clock began");
    assert_int_equal(dyn_budget_start_time(now, 0, UINT64_MAX, now, &s, &d), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_need_counts_what_run_allocates),
        cmocka_unit_test(test_need_counts_generation_maps),
        cmocka_unit_test(test_check_names_limit_and_numbers),
        cmocka_unit_test(test_default_workers_are_a_multiple_of_cpus),
        cmocka_unit_test(test_start_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
