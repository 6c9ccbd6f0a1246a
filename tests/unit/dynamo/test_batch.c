/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_batch.c - the worker's submission batching policy
 * (dynamo/engine.h, dyn_batch_sample): small steps while the worker waits on
 * the device, one call per refill while it is CPU-bound or waits for a CPU,
 * with a gap between the two switch points; the calls a refill goes in
 * (dyn_batch_chunk); and the thread's scheduler
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

/* The calls a refill of n goes in (dyn_batch_chunk), written into calls[]
 * as the worker makes them when the engine accepts each whole; returns how
 * many. */
static unsigned split(const struct dyn_batch_policy *p, unsigned inflight, unsigned n,
                      unsigned step, unsigned *calls)
{
    unsigned sent = 0, k = 0;

    while (sent < n) {
        unsigned c = dyn_batch_chunk(p, inflight, sent, n, step);
        assert_true(c >= 1 && c <= n - sent);
        calls[k++] = c;
        sent += c;
    }
    return k;
}

#define EXPECT_CALLS(p, inflight, n, step, ...)                                                    \
    do {                                                                                           \
        const unsigned want_[] = {__VA_ARGS__};                                                    \
        unsigned got_[64];                                                                         \
        unsigned k_ = split(p, inflight, n, step, got_);                                           \
        assert_int_equal(k_, sizeof(want_) / sizeof(want_[0]));                                    \
        for (unsigned i_ = 0; i_ < k_; i_++)                                                       \
            assert_int_equal(got_[i_], want_[i_]);                                                 \
    } while (0)

/* While the worker waits on the device: a refill of at most
 * DYN_BATCH_INFLIGHT in at most two calls (the first I/O alone to an idle
 * device); a larger one in steps until DYN_BATCH_INFLIGHT are in flight,
 * then the rest at once. */
static void test_chunks_latency_bound(void **state)
{
    struct dyn_batch_policy p = {0};

    (void)state;
    EXPECT_CALLS(&p, 0, 1, 2, 1);
    EXPECT_CALLS(&p, 0, 2, 2, 2);
    EXPECT_CALLS(&p, 0, 8, 2, 1, 7);
    EXPECT_CALLS(&p, 3, 5, 2, 5);
    EXPECT_CALLS(&p, 7, 1, 2, 1);
    EXPECT_CALLS(&p, 0, 9, 2, 2, 2, 2, 2, 1);
    EXPECT_CALLS(&p, 0, 32, 2, 2, 2, 2, 2, 24);
    EXPECT_CALLS(&p, 5, 27, 2, 2, 2, 23);
    EXPECT_CALLS(&p, 8, 24, 2, 24);
    EXPECT_CALLS(&p, 100, 28, 2, 28);
}

/* A CPU-bound worker sends the rest in one call once anything is in flight. */
static void test_chunks_batched(void **state)
{
    struct dyn_batch_policy p = {.batched = true};

    (void)state;
    EXPECT_CALLS(&p, 0, 8, 2, 1, 7);
    EXPECT_CALLS(&p, 0, 32, 2, 2, 30);
    EXPECT_CALLS(&p, 1, 31, 2, 31);
    EXPECT_CALLS(&p, 0, 2, 2, 2);
}

/* An engine that takes a whole refill in one step (io_uring) always gets it
 * in one call; it orders its own submission. */
static void test_chunks_whole_refill_engine(void **state)
{
    struct dyn_batch_policy quiet = {0}, busy = {.batched = true};

    (void)state;
    EXPECT_CALLS(&quiet, 0, 1, 4096, 1);
    EXPECT_CALLS(&quiet, 0, 8, 4096, 8);
    EXPECT_CALLS(&quiet, 0, 128, 4096, 128);
    EXPECT_CALLS(&busy, 0, 64, 4096, 64);
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
        cmocka_unit_test(test_chunks_latency_bound),
        cmocka_unit_test(test_chunks_batched),
        cmocka_unit_test(test_chunks_whole_refill_engine),
        cmocka_unit_test(test_thread_account),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
