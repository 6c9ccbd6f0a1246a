/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_batch.c - the worker's submission batching policy
 * (dynamo/engine.h, dyn_batch_sample): small steps while the worker waits on
 * the device, one call per refill while it is CPU-bound or waits for a CPU,
 * with a gap between the two switch points; and the thread's scheduler
 * account it reads (dynamo/os/os.h, dyn_os_thread_sched). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <time.h>

#include "dynamo/engine.h"
#include "dynamo/os/os.h"

#define MS 1000000ull
#define W DYN_BATCH_WINDOW_NS

/* One window of `wall` ns in which the thread ran `run_pct` % and waited
 * runnable `wait_pct` %, after the policy's state in p. */
static void window(struct dyn_batch_policy *p, uint64_t *now, uint64_t *run, uint64_t *wait,
                   uint64_t wall, unsigned run_pct, unsigned wait_pct)
{
    *now += wall;
    *run += wall * run_pct / 100;
    *wait += wall * wait_pct / 100;
    dyn_batch_sample(p, *now, *run, *wait);
}

/* The figures measured on the project's VM (docs/performance.md, "Submission
 * batches"): a libaio worker at QD 8 on the loop device ran 56 % and waited
 * 1 % of the time on a quiet host; beside a CPU hog it ran 48 % and waited
 * 19-20 %. */
static void test_quiet_keeps_small_steps_hog_batches(void **state)
{
    struct dyn_batch_policy p = {0};
    uint64_t now = 1000 * MS, run = 7 * MS, wait = 3 * MS;

    (void)state;
    dyn_batch_sample(&p, now, run, wait);
    assert_int_equal(dyn_batch_from(&p), DYN_BATCH_INFLIGHT);
    for (int i = 0; i < 10; i++) {
        window(&p, &now, &run, &wait, W, 56, 1);
        assert_false(p.batched);
        assert_int_equal(dyn_batch_from(&p), DYN_BATCH_INFLIGHT);
    }
    window(&p, &now, &run, &wait, W, 48, 20);
    assert_true(p.batched);
    assert_int_equal(dyn_batch_from(&p), 1);
    window(&p, &now, &run, &wait, W, 56, 1); /* the hog gone */
    assert_false(p.batched);
}

/* A worker that runs (or waits runnable) nearly all the time batches even
 * with no one else wanting its CPU. */
static void test_cpu_bound_batches(void **state)
{
    struct dyn_batch_policy p = {0};
    uint64_t now = 0, run = 0, wait = 0;

    (void)state;
    dyn_batch_sample(&p, now, run, wait);
    window(&p, &now, &run, &wait, W, 89, 0);
    assert_false(p.batched);
    window(&p, &now, &run, &wait, W, 90, 0);
    assert_true(p.batched);
    window(&p, &now, &run, &wait, W, 85, 2); /* between the two points: kept */
    assert_true(p.batched);
    window(&p, &now, &run, &wait, W, 70, 2);
    assert_false(p.batched);
}

/* Between the switch points the policy keeps what it has, both ways, so a
 * host hovering near a threshold does not flip it at every window. */
static void test_gap_between_switch_points(void **state)
{
    struct dyn_batch_policy p = {0};
    uint64_t now = 0, run = 0, wait = 0;

    (void)state;
    dyn_batch_sample(&p, now, run, wait);
    window(&p, &now, &run, &wait, W, 50, 7); /* under WAIT_ON, over WAIT_OFF */
    assert_false(p.batched);
    window(&p, &now, &run, &wait, W, 50, 8);
    assert_true(p.batched);
    window(&p, &now, &run, &wait, W, 50, 5);
    assert_true(p.batched);
    window(&p, &now, &run, &wait, W, 50, 3); /* not under WAIT_OFF yet */
    assert_true(p.batched);
    window(&p, &now, &run, &wait, W, 50, 2);
    assert_false(p.batched);
}

/* A sample sooner than a window after the last, or with the clock behind
 * it, decides nothing and does not move the window's start; an account
 * behind the last sample counts as no time run or waited. */
static void test_short_or_backward_windows(void **state)
{
    struct dyn_batch_policy p = {0};
    uint64_t now = 0, run = 0, wait = 0;

    (void)state;
    dyn_batch_sample(&p, now, run, wait);
    window(&p, &now, &run, &wait, W / 2, 10, 90);
    assert_false(p.batched);
    assert_int_equal(p.at_ns, 0);
    /* Together with the half window before, a whole one of 45 % waiting. */
    window(&p, &now, &run, &wait, W / 2, 10, 0);
    assert_true(p.batched);
    dyn_batch_sample(&p, now - 1, run, wait);
    assert_true(p.batched);
    dyn_batch_sample(&p, now + W, run - 1, wait - 1); /* run and wait went back */
    assert_false(p.batched);
}

/* The account the worker samples: where the platform keeps one it grows with
 * the thread's own CPU time; elsewhere it says so with -ENOSYS or the
 * reason, and the policy is never asked. */
static void test_thread_account(void **state)
{
    uint64_t run0 = 0, wait0 = 0, run1 = 0, wait1 = 0;
    struct timespec a, b;
    volatile uint64_t x = 0;
    int r = dyn_os_thread_sched(&run0, &wait0);

    (void)state;
    if (r < 0) {
        assert_true(r == -ENOSYS || r == -ENOENT || r == -EACCES);
        return;
    }
    /* Busy for 20 ms of this thread's own CPU time. */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do {
        for (int i = 0; i < 10000; i++)
            x += (uint64_t)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) < 20000000LL);
    assert_int_equal(dyn_os_thread_sched(&run1, &wait1), 0);
    assert_true(run1 >= run0 + 15 * MS);
    assert_true(wait1 >= wait0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quiet_keeps_small_steps_hog_batches),
        cmocka_unit_test(test_cpu_bound_batches),
        cmocka_unit_test(test_gap_between_switch_points),
        cmocka_unit_test(test_short_or_backward_windows),
        cmocka_unit_test(test_thread_account),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
