/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_net_coalesce.c - wake-up coalescing
 * (iof_net_coalesce_start): after an iteration that read anything, the loop
 * sleeps before it polls again, so what came meanwhile is read in one
 * wake-up; an iteration that read nothing does not sleep, nor one while
 * paused; the handle does not keep the loop alive, and stop closes it. Only lower bounds of time
 * are checked, and one generous upper bound, so a loaded host cannot fail it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/net.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SLEEP_MS 60

struct reader {
    int peer;
    int reads;
    size_t bytes;
    uint64_t at[8];
};

static void on_data(struct iof_conn *c, const uint8_t *buf, size_t len, void *arg)
{
    struct reader *r = arg;
    (void)c;
    (void)buf;
    if (r->reads < 8)
        r->at[r->reads] = iof_now_ns();
    r->reads++;
    r->bytes += len;
    /* The next message is there at once: only the coalescing sleep stands
     * between it and the next read. The fourth read ends the conversation. */
    if (r->reads < 4)
        assert_int_equal(send(r->peer, "x", 1, 0), 1);
    else
        iof_conn_close(c, 0);
}

static void on_close(struct iof_conn *c, int err, void *arg)
{
    (void)c;
    (void)err;
    (void)arg;
}

/* Four reads over a socket pair, each next message sent from the read
 * before, on a loop coalescing ms (paused or not) into r. The loop returns
 * once the connection is closed: the coalescing handle alone does not keep
 * it running; once stopped, the loop closes. */
static void converse(unsigned ms, bool paused, struct reader *r)
{
    static const struct iof_conn_cbs cbs = {.on_data = on_data, .on_close = on_close};
    struct iof_net_coalesce co;
    struct iof_conn *c;
    uv_loop_t loop;
    int sv[2];

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    r->peer = sv[1];
    assert_int_equal(iof_conn_open_fd(&loop, sv[0], "pair", &cbs, r, &c), 0);
    iof_net_coalesce_start(&loop, &co, ms);
    iof_net_coalesce_pause(paused);
    assert_int_equal(send(r->peer, "x", 1, 0), 1);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    iof_net_coalesce_pause(false);
    assert_int_equal(r->reads, 4);
    iof_net_coalesce_stop(&co);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    close(r->peer);
}

static void test_sleeps_after_a_read(void **state)
{
    struct reader r = {0};

    (void)state;
    converse(SLEEP_MS, false, &r);
    for (int i = 1; i < 4; i++) {
        uint64_t gap = r.at[i] - r.at[i - 1];
        print_message("read %d came %.1f ms after the one before\n", i + 1, (double)gap / 1e6);
        assert_true(gap >= SLEEP_MS * IOF_NS_PER_MS);
    }
}

/* Paused (a clock probe's round trip is measured): reads follow each other
 * at once; four of them take far less than one sleep of 2 s. */
static void test_paused(void **state)
{
    struct reader r = {0};

    (void)state;
    converse(2000, true, &r);
    assert_true(r.at[3] - r.at[0] < 1500 * IOF_NS_PER_MS);
}

static void on_tick(uv_timer_t *t)
{
    int *left = t->data;
    if (--*left == 0)
        uv_timer_stop(t);
}

/* Iterations that read nothing (timers here) never sleep: ten of them take
 * far less than one sleep of 2 s. */
static void test_no_sleep_without_reads(void **state)
{
    struct iof_net_coalesce co;
    uv_loop_t loop;
    uv_timer_t t;
    int left = 10;
    uint64_t t0;

    (void)state;
    assert_int_equal(uv_loop_init(&loop), 0);
    iof_net_coalesce_start(&loop, &co, 2000);
    uv_timer_init(&loop, &t);
    t.data = &left;
    uv_timer_start(&t, on_tick, 1, 1);
    t0 = iof_now_ns();
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(left, 0);
    assert_true(iof_now_ns() - t0 < 1500 * IOF_NS_PER_MS);
    uv_close((uv_handle_t *)&t, NULL);
    iof_net_coalesce_stop(&co);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sleeps_after_a_read),
        cmocka_unit_test(test_no_sleep_without_reads),
        cmocka_unit_test(test_paused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
