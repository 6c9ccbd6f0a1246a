/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/test_win_link.c - the connection layer on Windows (common/net.c
 * with common/os/net_win.c, proto/link.c), under Wine: a message framed by
 * proto/link.c goes over loopback TCP to a listener and an answer comes back,
 * with the error's code by name; the Linux-only parts (unix-domain sockets,
 * socketpairs, peer credentials, io_uring batches) are refused with a
 * reason or are plain writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <uv.h>

#include "common/err.h"
#include "common/net.h"
#include "proto/link.h"
#include "proto/msg.h"

struct trip {
    uv_loop_t loop;
    uv_timer_t deadline;
    struct iof_listener *listener;
    struct proto_link *server, *client;
    int server_code, client_code;
    char server_got[64], client_got[64];
    bool server_loopback, client_closed, server_closed, timed_out;
    int connect_err;
};

static void server_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg)
{
    struct trip *t = arg;

    if (m->type != PROTO_MSG_ERROR)
        return;
    t->server_code = m->u.error.code;
    snprintf(t->server_got, sizeof(t->server_got), "%s", m->u.error.message);
    proto_link_send_error(l, -EEXIST, "pong %s", m->u.error.message);
}

static void server_on_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct trip *t = arg;
    (void)l, (void)err, (void)why;
    t->server = NULL;
    t->server_closed = true;
}

static void client_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg)
{
    struct trip *t = arg;

    if (m->type != PROTO_MSG_ERROR)
        return;
    t->client_code = m->u.error.code;
    snprintf(t->client_got, sizeof(t->client_got), "%s", m->u.error.message);
    proto_link_close(l, 0, "done");
}

static void client_on_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct trip *t = arg;
    (void)l, (void)err, (void)why;
    t->client = NULL;
    t->client_closed = true;
    if (t->server)
        proto_link_close(t->server, 0, NULL);
    iof_listener_close(t->listener);
    t->listener = NULL;
    uv_close((uv_handle_t *)&t->deadline, NULL);
}

static void on_accept(struct iof_listener *l, struct iof_conn *c, void *arg)
{
    static const struct proto_link_cbs cbs = {.on_msg = server_on_msg, .on_close = server_on_close};
    struct trip *t = arg;
    (void)l;
    t->server_loopback = iof_conn_is_loopback(c);
    t->server = proto_link_new(&t->loop, c, &cbs, t);
}

static void on_connect(struct iof_conn *c, int err, void *arg)
{
    static const struct proto_link_cbs cbs = {.on_msg = client_on_msg, .on_close = client_on_close};
    struct trip *t = arg;

    t->connect_err = err;
    if (err)
        return;
    t->client = proto_link_new(&t->loop, c, &cbs, t);
    assert_non_null(t->client);
    assert_int_equal(proto_link_send_error(t->client, -ENOENT, "ping"), 0);
}

static void on_conn_close(struct iof_conn *c, int err, void *arg)
{
    (void)c, (void)err, (void)arg;
}

static void on_deadline(uv_timer_t *h)
{
    struct trip *t = h->data;
    t->timed_out = true;
    uv_stop(&t->loop);
}

/* A frame each way between a client and a listener on 127.0.0.1. */
static void test_round_trip_over_loopback_tcp(void **state)
{
    static const struct iof_conn_cbs ccbs = {.on_connect = on_connect, .on_close = on_conn_close};
    struct iof_diag d = {{0}};
    struct iof_conn *c = NULL;
    struct trip t;

    (void)state;
    memset(&t, 0, sizeof(t));
    assert_int_equal(uv_loop_init(&t.loop), 0);
    assert_int_equal(uv_timer_init(&t.loop, &t.deadline), 0);
    t.deadline.data = &t;
    uv_timer_start(&t.deadline, on_deadline, 60000, 0);
    assert_int_equal(iof_listener_start(&t.loop, "127.0.0.1", 0, on_accept, &t, &t.listener, &d),
                     0);
    assert_true(iof_listener_port(t.listener) > 0);
    assert_int_equal(
        iof_conn_connect(&t.loop, "127.0.0.1", iof_listener_port(t.listener), &ccbs, &t, &c), 0);
    uv_run(&t.loop, UV_RUN_DEFAULT);
    assert_false(t.timed_out);
    assert_int_equal(t.connect_err, 0);
    assert_true(t.server_loopback);
    /* The codes crossed by name (ENOENT, EEXIST), the texts whole. */
    assert_int_equal(t.server_code, -ENOENT);
    assert_string_equal(t.server_got, "ping");
    assert_int_equal(t.client_code, -EEXIST);
    assert_string_equal(t.client_got, "pong ping");
    assert_true(t.client_closed);
    /* Both ends' handles are closed. */
    while (!t.server_closed && uv_run(&t.loop, UV_RUN_ONCE))
        ;
    assert_true(t.server_closed);
    assert_int_equal(uv_loop_close(&t.loop), 0);
}

static void on_accept_none(struct iof_listener *l, struct iof_conn *c, void *arg)
{
    (void)l, (void)c, (void)arg;
}

/* What Linux does with unix-domain sockets is refused with the reason. */
static void test_unix_sockets_refused(void **state)
{
    struct iof_diag d = {{0}};
    struct iof_listener *l = NULL;
    struct iof_conn *c = NULL;
    uv_loop_t loop;

    (void)state;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(
        iof_listener_start_unix(&loop, "C:/iofleet/dynamo.sock", on_accept_none, NULL, &l, &d),
        -ENOTSUP);
    assert_null(l);
    assert_non_null(strstr(d.msg, "unix:C:/iofleet/dynamo.sock"));
    assert_non_null(strstr(d.msg, "not available in iofleet on Windows"));
    assert_int_equal(iof_conn_connect_unix(&loop, "C:/x.sock", NULL, NULL, &c), -ENOTSUP);
    assert_int_equal(iof_conn_open_fd(&loop, 0, "parent", NULL, NULL, &c), -ENOTSUP);
    assert_null(c);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Batches are plain writes: the state says so at once. */
static void test_batches_are_plain_writes(void **state)
{
    (void)state;
    iof_conn_batch_begin();
    iof_conn_batch_end();
    assert_int_equal(iof_conn_batch_state(), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_over_loopback_tcp),
        cmocka_unit_test(test_unix_sockets_refused),
        cmocka_unit_test(test_batches_are_plain_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
