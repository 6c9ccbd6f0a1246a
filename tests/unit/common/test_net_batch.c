/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_net_batch.c - batched small writes (common/net.h,
 * iof_conn_batch_*): what a batch sends reaches every connection in the
 * order it was written, also when a connection is written twice in one
 * batch, written outside the batch meanwhile, or its socket is full (the
 * refused send is queued and goes out before anything written after it);
 * and the batch goes through io_uring where the kernel has it, through
 * plain writes where it does not (this program also runs under
 * iof_no_uring, with IOF_TEST_NO_URING set). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/net.h"

#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct pair {
    int peer; /* the test reads here */
    struct iof_conn *c;
};

static void on_close_count(struct iof_conn *c, int err, void *arg)
{
    (void)c;
    (void)err;
    (*(int *)arg)++;
}

static int g_closed;

/* fill: bytes written to the connection's socket before it is wrapped, with
 * a small send buffer, until the kernel refuses more (its peer reads none). */
static void open_pair(uv_loop_t *loop, struct pair *p, bool fill)
{
    static const struct iof_conn_cbs cbs = {.on_close = on_close_count};
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    if (fill) {
        static const char zeros[4096];
        int small = 4096;
        assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
        for (int i = 0; i < 100000 && send(sv[0], zeros, sizeof(zeros), MSG_DONTWAIT) > 0; i++)
            ;
        assert_int_equal(send(sv[0], zeros, 1, MSG_DONTWAIT), -1);
    }
    p->peer = sv[1];
    assert_int_equal(iof_conn_open_fd(loop, sv[0], "pair", &cbs, &g_closed, &p->c), 0);
}

/* Everything the peer can read now (up to cap), as a string. */
static size_t drain(int fd, char *buf, size_t cap)
{
    size_t got = 0;
    ssize_t n;
    while (got < cap && (n = recv(fd, buf + got, cap - got, MSG_DONTWAIT)) > 0)
        got += (size_t)n;
    buf[got < cap ? got : cap - 1] = '\0';
    return got;
}

static void close_pairs(uv_loop_t *loop, struct pair *p, int n)
{
    g_closed = 0;
    for (int i = 0; i < n; i++) {
        iof_conn_close(p[i].c, 0);
        close(p[i].peer);
    }
    assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(g_closed, n);
    assert_int_equal(uv_loop_close(loop), 0);
}

/* What this thread's batches should have used. */
static void check_state(void)
{
    int want = 1;
    struct io_uring ring;
    if (getenv("IOF_TEST_NO_URING") || io_uring_queue_init(4, &ring, 0) < 0)
        want = -1;
    else
        io_uring_queue_exit(&ring);
    print_message("batches went through %s\n",
                  iof_conn_batch_state() == 1 ? "io_uring" : "plain writes");
    assert_int_equal(iof_conn_batch_state(), want);
}

static void test_batch_order(void **state)
{
    struct pair p[3];
    uv_loop_t loop;
    char got[64];
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    for (int i = 0; i < 3; i++)
        open_pair(&loop, &p[i], false);
    iof_conn_batch_begin();
    assert_int_equal(iof_conn_write_batched(p[0].c, "a0", 2), 0);
    assert_int_equal(iof_conn_write_batched(p[1].c, "a1", 2), 0);
    assert_int_equal(iof_conn_write_batched(p[2].c, "a2", 2), 0);
    /* Nothing leaves before the end (or a reason to send earlier). */
    assert_int_equal(drain(p[2].peer, got, sizeof(got)), 0);
    assert_int_equal(iof_conn_write(p[1].c, "p1", 2), 0); /* a plain write meanwhile */
    iof_conn_batch_begin();                               /* nested: the outer end sends */
    assert_int_equal(iof_conn_write_batched(p[0].c, "b0", 2), 0);
    assert_int_equal(iof_conn_write_batched(p[0].c, "c0", 2), 0); /* twice in one batch */
    iof_conn_batch_end();
    assert_int_equal(iof_conn_write_batched(p[2].c, "b2", 2), 0);
    iof_conn_batch_end();
    drain(p[0].peer, got, sizeof(got));
    assert_string_equal(got, "a0b0c0");
    drain(p[1].peer, got, sizeof(got));
    assert_string_equal(got, "a1p1");
    drain(p[2].peer, got, sizeof(got));
    assert_string_equal(got, "a2b2");
    check_state();
    /* Outside a batch: an ordinary write. */
    assert_int_equal(iof_conn_write_batched(p[0].c, "d0", 2), 0);
    drain(p[0].peer, got, sizeof(got));
    assert_string_equal(got, "d0");
    close_pairs(&loop, p, 3);
}

/* Connection 0's socket is full: its batched bytes are queued, and leave
 * before what is written to it after the batch, once the peer reads. */
static void test_batch_full_socket(void **state)
{
    struct pair p[2];
    uv_loop_t loop;
    static char got[1 << 22];
    size_t total = 0;
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    open_pair(&loop, &p[0], true);
    open_pair(&loop, &p[1], false);
    iof_conn_batch_begin();
    assert_int_equal(iof_conn_write_batched(p[0].c, "X", 1), 0);
    assert_int_equal(iof_conn_write_batched(p[1].c, "x1", 2), 0);
    iof_conn_batch_end();
    assert_int_equal(iof_conn_write(p[0].c, "Y", 1), 0);
    drain(p[1].peer, got, sizeof(got));
    assert_string_equal(got, "x1");
    /* Read p[0]'s peer out while the loop writes what was queued. */
    for (int i = 0; i < 2000; i++) {
        ssize_t n = recv(p[0].peer, got + total, sizeof(got) - total, MSG_DONTWAIT);
        if (n > 0)
            total += (size_t)n;
        uv_run(&loop, UV_RUN_NOWAIT);
        if (total >= 2 && got[total - 1] == 'Y')
            break;
        if (n <= 0)
            usleep(1000);
    }
    assert_true(total >= 2);
    assert_int_equal(got[total - 2], 'X');
    assert_int_equal(got[total - 1], 'Y');
    for (size_t i = 0; i + 2 < total; i++)
        if (got[i] != 0)
            fail_msg("byte %zu of %zu is 0x%02x: the batched byte went ahead", i, total,
                     (unsigned char)got[i]);
    close_pairs(&loop, p, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_order),
        cmocka_unit_test(test_batch_full_socket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
