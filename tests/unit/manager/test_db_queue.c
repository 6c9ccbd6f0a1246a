/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_db_queue.c - manager/history/db_queue.c, the run history's
 * bounded hand-over from the loop to its writer thread.
 *
 * Checked: records come out oldest first, all at once; a push past the
 * bound is refused (-ENOBUFS) and counted, never waited on, unless it must
 * go in; bytes come back only as the consumer releases them, and the
 * released records are freed by the next push; drain waits
 * for a consumer thread to finish everything pushed (waking it); a waiting
 * consumer is woken by a push that asks for it or by MGR_DBQ_WAKE_COUNT
 * queued records, not by every push; a hold keeps it from taking anything
 * until lifted, its bound, a drain (bounded or not) or the close; after
 * close, pushes are refused and take returns what is left, then NULL. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "manager/history/db_queue.h"

struct rec {
    struct mgr_dbq_item q;
    int n;
};

static struct rec *rec(int n, size_t bytes)
{
    struct rec *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    r->n = n;
    r->q.bytes = bytes;
    return r;
}

static void test_fifo_and_bound(void **state)
{
    struct mgr_dbq q;
    struct mgr_dbq_item *list;
    struct rec *over;
    int n = 0;
    (void)state;

    assert_int_equal(mgr_dbq_init(&q, 100), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(mgr_dbq_push(&q, &rec(i, 25)->q, 0), 0);
    over = rec(4, 1);
    assert_int_equal(mgr_dbq_push(&q, &over->q, 0), -ENOBUFS);
    assert_int_equal(q.refused, 1);
    /* A record that must go in does, past the bound. */
    assert_int_equal(mgr_dbq_push(&q, &over->q, MGR_DBQ_MUST), 0);
    assert_int_equal(q.bytes, 101);
    list = mgr_dbq_take(&q);
    /* Taken is not finished: the bytes still count. */
    struct rec *late = rec(5, 10);
    assert_int_equal(mgr_dbq_push(&q, &late->q, 0), -ENOBUFS);
    while (list) {
        struct rec *r = (struct rec *)list;
        assert_int_equal(r->n, n++);
        list = list->next;
        r->q.next = NULL;
        mgr_dbq_release(&q, &r->q);
    }
    assert_int_equal(n, 5);
    assert_int_equal(q.bytes, 0);
    assert_int_equal(q.peak_bytes, 101);
    /* Finished records wait for the producer's next push, which frees them
     * (on its own thread). */
    assert_non_null(q.spent);
    assert_int_equal(mgr_dbq_push(&q, &late->q, 0), 0);
    assert_null(q.spent);
    mgr_dbq_close(&q);
    struct rec *after = rec(6, 1);
    assert_int_equal(mgr_dbq_push(&q, &after->q, MGR_DBQ_MUST), -EPIPE);
    free(after);
    list = mgr_dbq_take(&q);
    assert_ptr_equal(list, &late->q);
    assert_null(list->next);
    mgr_dbq_release(&q, &late->q);
    assert_null(mgr_dbq_take(&q));
    mgr_dbq_destroy(&q);
}

static int g_sum, g_takes;

/* Hands a taken list back in one call, as the writer does in steps. */
static void *consumer(void *arg)
{
    struct mgr_dbq *q = arg;
    struct mgr_dbq_item *list;

    while ((list = mgr_dbq_take(q))) {
        __atomic_add_fetch(&g_takes, 1, __ATOMIC_SEQ_CST);
        for (struct mgr_dbq_item *it = list; it; it = it->next)
            __atomic_add_fetch(&g_sum, ((struct rec *)it)->n, __ATOMIC_SEQ_CST);
        mgr_dbq_release(q, list);
    }
    return NULL;
}

static uint64_t done_of(struct mgr_dbq *q)
{
    pthread_mutex_lock(&q->mu);
    uint64_t n = q->done;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* Waits up to 5 s for the consumer to have finished `want` records. */
static void wait_done(struct mgr_dbq *q, uint64_t want)
{
    for (int i = 0; i < 5000 && done_of(q) < want; i++)
        usleep(1000);
    assert_int_equal(done_of(q), want);
}

/* Waits up to 5 s for the consumer to wait in mgr_dbq_take. */
static void wait_waiting(struct mgr_dbq *q)
{
    for (int i = 0; i < 5000; i++) {
        pthread_mutex_lock(&q->mu);
        bool w = q->waiting;
        pthread_mutex_unlock(&q->mu);
        if (w)
            return;
        usleep(1000);
    }
    fail_msg("the consumer never waited");
}

/* A fresh queue with a consumer thread that has come to wait on it (it is
 * waiting once it has nothing). */
static void start_consumer(struct mgr_dbq *q, pthread_t *t)
{
    g_sum = g_takes = 0;
    assert_int_equal(mgr_dbq_init(q, 1 << 20), 0);
    assert_int_equal(pthread_create(t, NULL, consumer, q), 0);
    wait_waiting(q);
}

/* A waiting consumer is not woken per push: records pushed without
 * MGR_DBQ_WAKE wait until one asks for it (and go together), or until
 * MGR_DBQ_WAKE_COUNT of them are queued. */
static void test_wakes_when_asked_or_full(void **state)
{
    struct mgr_dbq q;
    pthread_t t;
    (void)state;

    start_consumer(&q, &t);
    for (int i = 1; i <= 10; i++)
        assert_int_equal(mgr_dbq_push(&q, &rec(i, 64)->q, 0), 0);
    usleep(100 * 1000);
    assert_int_equal(done_of(&q), 0);
    assert_int_equal(__atomic_load_n(&g_takes, __ATOMIC_SEQ_CST), 0);
    assert_int_equal(mgr_dbq_push(&q, &rec(11, 64)->q, MGR_DBQ_WAKE), 0);
    wait_done(&q, 11);
    /* All eleven in one take. */
    assert_int_equal(__atomic_load_n(&g_takes, __ATOMIC_SEQ_CST), 1);
    assert_int_equal(__atomic_load_n(&g_sum, __ATOMIC_SEQ_CST), 66);
    /* Enough records wake it without being asked. */
    for (int i = 0; i < MGR_DBQ_WAKE_COUNT; i++)
        assert_int_equal(mgr_dbq_push(&q, &rec(1, 64)->q, 0), 0);
    wait_done(&q, 11 + MGR_DBQ_WAKE_COUNT);
    mgr_dbq_close(&q);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(q.bytes, 0);
    mgr_dbq_destroy(&q);
}

static void test_drain_waits_for_consumer(void **state)
{
    struct mgr_dbq q;
    pthread_t t;
    int want = 0;
    (void)state;

    g_sum = g_takes = 0;
    assert_int_equal(mgr_dbq_init(&q, 1 << 20), 0);
    assert_int_equal(pthread_create(&t, NULL, consumer, &q), 0);
    for (int round = 0; round < 50; round++) {
        for (int i = 1; i <= 100; i++) {
            assert_int_equal(mgr_dbq_push(&q, &rec(i, 64)->q, 0), 0);
            want += i;
        }
        mgr_dbq_drain(&q);
        /* Everything pushed is finished: the consumer's sum is complete. */
        assert_int_equal(__atomic_load_n(&g_sum, __ATOMIC_SEQ_CST), want);
    }
    mgr_dbq_close(&q);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(q.bytes, 0);
    assert_int_equal(q.done, q.pushed);
    mgr_dbq_destroy(&q);
}

/* While held, nothing is taken, however the pushes ask (a test being
 * measured); lifting the hold hands it all over in one take; a hold gives
 * way at its bound (counted in spilled), to a drain and to the close. */
static void test_hold(void **state)
{
    struct mgr_dbq q;
    pthread_t t;
    (void)state;

    start_consumer(&q, &t);
    mgr_dbq_hold(&q, true, 1000);
    for (int i = 1; i <= 10; i++)
        assert_int_equal(mgr_dbq_push(&q, &rec(i, 64)->q, i % 2 ? MGR_DBQ_WAKE : MGR_DBQ_MUST), 0);
    assert_int_equal(mgr_dbq_push(&q, &rec(0, 64)->q, MGR_DBQ_MUST | MGR_DBQ_WAKE), 0);
    for (int i = 0; i < MGR_DBQ_WAKE_COUNT; i++) /* more than would wake an unheld one */
        assert_int_equal(mgr_dbq_push(&q, &rec(0, 0)->q, 0), 0);
    usleep(100 * 1000);
    assert_int_equal(done_of(&q), 0);
    assert_int_equal(__atomic_load_n(&g_takes, __ATOMIC_SEQ_CST), 0);
    mgr_dbq_hold(&q, false, 0);
    wait_done(&q, 11 + MGR_DBQ_WAKE_COUNT);
    assert_int_equal(__atomic_load_n(&g_takes, __ATOMIC_SEQ_CST), 1);
    assert_int_equal(__atomic_load_n(&g_sum, __ATOMIC_SEQ_CST), 55);
    assert_int_equal(q.spilled, 0);

    /* At its bound (1000 bytes: the 16th record of 64) the hold gives way. */
    wait_waiting(&q);
    mgr_dbq_hold(&q, true, 1000);
    for (int i = 0; i < 15; i++)
        assert_int_equal(mgr_dbq_push(&q, &rec(1, 64)->q, MGR_DBQ_WAKE), 0);
    usleep(50 * 1000);
    assert_int_equal(done_of(&q), 11 + MGR_DBQ_WAKE_COUNT);
    assert_int_equal(mgr_dbq_push(&q, &rec(1, 64)->q, 0), 0);
    wait_done(&q, 27 + MGR_DBQ_WAKE_COUNT);
    assert_int_equal(q.spilled, 1);

    /* A drain lifts it and waits for everything. */
    wait_waiting(&q);
    mgr_dbq_hold(&q, true, 1000);
    assert_int_equal(mgr_dbq_push(&q, &rec(100, 64)->q, MGR_DBQ_WAKE), 0);
    assert_int_equal(mgr_dbq_drain_for(&q, 5000000000ull), 0);
    assert_int_equal(__atomic_load_n(&g_sum, __ATOMIC_SEQ_CST), 55 + 16 + 100);

    /* So does the close: the consumer takes what is left and ends. */
    wait_waiting(&q);
    mgr_dbq_hold(&q, true, 1000);
    assert_int_equal(mgr_dbq_push(&q, &rec(7, 64)->q, MGR_DBQ_WAKE), 0);
    mgr_dbq_close(&q);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(__atomic_load_n(&g_sum, __ATOMIC_SEQ_CST), 55 + 16 + 100 + 7);
    assert_int_equal(q.bytes, 0);
    mgr_dbq_destroy(&q);
}

/* A drain with a bound returns -ETIMEDOUT when the consumer has not
 * finished by then (here there is none), 0 once it has. */
static void test_drain_for_bound(void **state)
{
    struct mgr_dbq q;
    struct mgr_dbq_item *list;
    (void)state;

    assert_int_equal(mgr_dbq_init(&q, 1 << 20), 0);
    assert_int_equal(mgr_dbq_drain_for(&q, 1000000ull), 0); /* nothing pushed */
    mgr_dbq_hold(&q, true, 1000);
    assert_int_equal(mgr_dbq_push(&q, &rec(1, 64)->q, MGR_DBQ_WAKE), 0);
    assert_int_equal(mgr_dbq_drain_for(&q, 50000000ull), -ETIMEDOUT);
    assert_false(q.held); /* lifted even so */
    list = mgr_dbq_take(&q);
    assert_non_null(list);
    mgr_dbq_release(&q, list);
    assert_int_equal(mgr_dbq_drain_for(&q, 50000000ull), 0);
    mgr_dbq_destroy(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_and_bound),
        cmocka_unit_test(test_drain_waits_for_consumer),
        cmocka_unit_test(test_wakes_when_asked_or_full),
        cmocka_unit_test(test_hold),
        cmocka_unit_test(test_drain_for_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
