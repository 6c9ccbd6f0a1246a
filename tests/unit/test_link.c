/* tests/unit/test_link.c - proto/link.c's lost-peer rule: a link whose own
 * loop stalled (longer than the silence limit) while the peer kept sending
 * is not declared lost at the first late tick, before the waiting messages
 * are read; a peer that is really silent still is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/net.h"
#include "proto/link.h"
#include "proto/msg.h"

#define HB_MS 100

struct peer {
    int fd;
    bool silent; /* sends nothing */
    atomic_bool stop;
};

/* The other end: a heartbeat every 30 ms (unless silent), reading out what
 * comes, until told to stop. */
static void *peer_main(void *arg)
{
    struct peer *p = arg;
    uint64_t seq = 0;
    while (!atomic_load(&p->stop)) {
        uint8_t frame[PROTO_HEARTBEAT_FRAME_MAX], junk[4096];
        size_t len;
        if (!p->silent &&
            proto_msg_heartbeat_frame(seq++, iof_now_ns(), frame, sizeof(frame), &len) == 0 &&
            write(p->fd, frame, len) != (ssize_t)len)
            break;
        while (recv(p->fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
            ;
        usleep(30000);
    }
    return NULL;
}

struct run {
    struct proto_link *link;
    int close_err;
    bool closed;
    uv_timer_t stall, stop;
    uv_check_t check;
};

static void on_msg(struct proto_link *l, const struct proto_msg *msg, void *arg)
{
    (void)l;
    (void)msg;
    (void)arg;
}

static void on_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct run *r = arg;
    (void)l;
    (void)why;
    r->closed = true;
    r->close_err = err;
    r->link = NULL;
    uv_close((uv_handle_t *)&r->stall, NULL);
    uv_close((uv_handle_t *)&r->stop, NULL);
    uv_close((uv_handle_t *)&r->check, NULL);
}

/* The loop stalls 6 heartbeat periods (twice the silence limit), after its
 * poll phase (a check handle): libuv 1.44 runs the next iteration's timers
 * before reading what arrived meanwhile. */
static void on_check(uv_check_t *h)
{
    uv_check_stop(h);
    usleep(6 * HB_MS * 1000);
}

static void on_stall(uv_timer_t *t)
{
    struct run *r = t->data;
    uv_check_start(&r->check, on_check);
}

static void on_stop(uv_timer_t *t)
{
    struct run *r = t->data;
    if (r->link)
        proto_link_close(r->link, 0, "done");
}

static void run_link(bool silent, struct run *r)
{
    static const struct proto_link_cbs cbs = {.on_msg = on_msg, .on_close = on_close};
    uv_loop_t loop;
    struct iof_conn *c = NULL;
    struct peer p = {.silent = silent};
    pthread_t th;
    int sv[2];

    memset(r, 0, sizeof(*r));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    p.fd = sv[1];
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(iof_conn_open_fd(&loop, sv[0], "peer", NULL, NULL, &c), 0);
    r->link = proto_link_new(&loop, c, &cbs, r);
    assert_non_null(r->link);
    proto_link_set_established(r->link, HB_MS);
    uv_timer_init(&loop, &r->stall);
    uv_timer_init(&loop, &r->stop);
    uv_check_init(&loop, &r->check);
    r->stall.data = r->stop.data = r;
    uv_timer_start(&r->stall, on_stall, 150, 0);
    uv_timer_start(&r->stop, on_stop, 1500, 0);
    assert_int_equal(pthread_create(&th, NULL, peer_main, &p), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    atomic_store(&p.stop, true);
    pthread_join(th, NULL);
    close(sv[1]);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_true(r->closed);
}

static void test_own_stall_is_not_a_lost_peer(void **state)
{
    struct run r;
    (void)state;
    run_link(false, &r);
    assert_int_equal(r.close_err, 0); /* closed by on_stop, not lost */
}

static void test_silent_peer_is_lost(void **state)
{
    struct run r;
    (void)state;
    run_link(true, &r);
    assert_int_equal(r.close_err, IOF_ELOST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_stall_is_not_a_lost_peer),
        cmocka_unit_test(test_silent_peer_is_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
