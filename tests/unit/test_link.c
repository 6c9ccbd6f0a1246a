/* tests/unit/test_link.c - proto/link.c's lost-peer rule: a link whose own
 * loop stalled (longer than the silence limit) while the peer kept sending
 * is not declared lost at the first late tick, before the waiting messages
 * are read; a peer that is really silent still is. And its heartbeats: none
 * in a period in which something else was sent, one in every other, so the
 * peer never waits more than two periods for a frame, also while the loop
 * spends many periods in one callback handling another link's messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
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
    /* What the link sent: heartbeats counted, and the longest wait between
     * two reads that returned something (after the first). */
    char *got;
    size_t got_len, got_cap;
    uint64_t first_rx_ns, last_rx_ns, max_gap_ns;
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
            send(p->fd, frame, len, MSG_NOSIGNAL) != (ssize_t)len) /* the link may have closed */
            break;
        for (ssize_t n; (n = recv(p->fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0;) {
            uint64_t now = iof_now_ns();
            if (!p->first_rx_ns)
                p->first_rx_ns = now;
            if (p->last_rx_ns && now - p->last_rx_ns > p->max_gap_ns)
                p->max_gap_ns = now - p->last_rx_ns;
            p->last_rx_ns = now;
            if (p->got && p->got_len + (size_t)n <= p->got_cap) {
                memcpy(p->got + p->got_len, junk, (size_t)n);
                p->got_len += (size_t)n;
            }
        }
        usleep(p->got ? 10000 : 30000);
    }
    return NULL;
}

struct run {
    struct proto_link *link;
    int close_err;
    bool closed;
    uv_timer_t stall, stop, send;
    uv_check_t check;
    unsigned send_ms; /* the application sends a message this often; 0: never */
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
    uv_close((uv_handle_t *)&r->send, NULL);
    uv_close((uv_handle_t *)&r->check, NULL);
}

static void on_send(uv_timer_t *t)
{
    struct run *r = t->data;
    struct proto_msg m;

    proto_msg_init(&m, PROTO_MSG_STOP);
    m.u.stop.reason = "a message that is not a heartbeat";
    if (r->link)
        assert_int_equal(proto_link_send(r->link, &m), 0);
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

/* stall: the loop stalls once (on_stall); p: the peer (its fd is set here). */
static void run_link_with(bool stall, struct run *r, struct peer *p)
{
    static const struct proto_link_cbs cbs = {.on_msg = on_msg, .on_close = on_close};
    uv_loop_t loop;
    struct iof_conn *c = NULL;
    pthread_t th;
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    p->fd = sv[1];
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(iof_conn_open_fd(&loop, sv[0], "peer", NULL, NULL, &c), 0);
    r->link = proto_link_new(&loop, c, &cbs, r);
    assert_non_null(r->link);
    proto_link_set_established(r->link, HB_MS);
    uv_timer_init(&loop, &r->stall);
    uv_timer_init(&loop, &r->stop);
    uv_timer_init(&loop, &r->send);
    uv_check_init(&loop, &r->check);
    r->stall.data = r->stop.data = r->send.data = r;
    if (stall)
        uv_timer_start(&r->stall, on_stall, 150, 0);
    if (r->send_ms)
        uv_timer_start(&r->send, on_send, r->send_ms, r->send_ms);
    uv_timer_start(&r->stop, on_stop, 1500, 0);
    assert_int_equal(pthread_create(&th, NULL, peer_main, p), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    atomic_store(&p->stop, true);
    pthread_join(th, NULL);
    close(sv[1]);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_true(r->closed);
}

static void run_link(bool silent, struct run *r)
{
    struct peer p = {.silent = silent};
    memset(r, 0, sizeof(*r));
    run_link_with(true, r, &p);
}

/* Heartbeats the link sent in 1.5 s while the application sent a message
 * every send_ms (0: none); *gap the longest wait for a frame, ms. */
static unsigned heartbeats_sent(unsigned send_ms, double *gap)
{
    static char got[1 << 20];
    struct peer p = {.got = got, .got_cap = sizeof(got)};
    struct run r;
    unsigned n = 0;

    memset(&r, 0, sizeof(r));
    r.send_ms = send_ms;
    run_link_with(false, &r, &p);
    assert_int_equal(r.close_err, 0);
    assert_true(p.got_len < sizeof(got));
    for (const char *q = got; (q = memmem(q, (size_t)(got + p.got_len - q), "\"heartbeat\"", 11));
         q += 11)
        n++;
    *gap = (double)p.max_gap_ns / 1e6;
    return n;
}

/* Silent application: a heartbeat every period. Messages more often than
 * the period: no heartbeat at all. Messages every 4.5 periods: heartbeats
 * fill the silence, so no wait for a frame is longer than two periods. */
static void test_heartbeat_only_when_quiet(void **state)
{
    double gap;
    unsigned n;
    (void)state;

    n = heartbeats_sent(0, &gap);
    print_message("no messages: %u heartbeats in 1.5 s, longest wait %.0f ms\n", n, gap);
    assert_true(n >= 10);
    n = heartbeats_sent(HB_MS * 4 / 10, &gap);
    print_message("a message every %d ms: %u heartbeats\n", HB_MS * 4 / 10, n);
    assert_true(n <= 2); /* a tick with no send in its period only when this loop ran late */
    n = heartbeats_sent(HB_MS * 9 / 2, &gap);
    print_message("a message every %d ms: %u heartbeats, longest wait %.0f ms\n", HB_MS * 9 / 2, n,
                  gap);
    assert_true(n >= 5);
    /* Two periods, with room for a late tick on a loaded machine; without
     * the heartbeats the wait would be 4.5 periods. */
    assert_true(gap < 3.5 * HB_MS);
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

/* --- a burst of slow messages on one link --------------------------------------------- */

#define BURST 40
#define BURST_MS 25 /* each message's handling: 40 x 25 ms = 10 periods in one callback */

struct burst {
    struct proto_link *a, *b;
    int a_fd; /* a's peer: the test writes the burst itself */
    unsigned closed, handled;
    int b_err;
    uint64_t burst_ns; /* when the burst was written */
    uv_timer_t early, establish, send, stop;
};

static void on_msg_slow(struct proto_link *l, const struct proto_msg *msg, void *arg)
{
    struct burst *bu = arg;
    (void)l;
    (void)msg;
    bu->handled++;
    usleep(BURST_MS * 1000);
}

static void on_close_burst(struct proto_link *l, int err, const char *why, void *arg)
{
    struct burst *bu = arg;
    (void)why;
    if (l == bu->b)
        bu->b_err = err;
    if (++bu->closed == 2) {
        uv_close((uv_handle_t *)&bu->early, NULL);
        uv_close((uv_handle_t *)&bu->establish, NULL);
        uv_close((uv_handle_t *)&bu->send, NULL);
        uv_close((uv_handle_t *)&bu->stop, NULL);
    }
}

/* All of the burst in one write: the loop reads it in one callback. */
static void on_burst(uv_timer_t *t)
{
    struct burst *bu = t->data;
    uint8_t buf[BURST * 256];
    size_t used = 0;

    for (int i = 0; i < BURST; i++) {
        struct proto_msg m;
        struct iof_diag d = {{0}};
        uint8_t *frame = NULL;
        size_t len;
        proto_msg_init(&m, PROTO_MSG_STOP);
        m.u.stop.reason = "slow to handle";
        assert_int_equal(proto_msg_encode_frame(&m, 1 << 20, &frame, &len, &d), 0);
        assert_true(used + len <= sizeof(buf));
        memcpy(buf + used, frame, len);
        used += len;
        free(frame);
    }
    assert_int_equal(send(bu->a_fd, buf, used, MSG_NOSIGNAL), (ssize_t)used);
    bu->burst_ns = iof_now_ns();
}

/* A message on a, before any link is established (as a hello is). */
static void on_early(uv_timer_t *t)
{
    struct burst *bu = t->data;
    uint8_t *frame = NULL;
    struct iof_diag d = {{0}};
    struct proto_msg m;
    size_t len;

    proto_msg_init(&m, PROTO_MSG_STOP);
    m.u.stop.reason = "before the heartbeats";
    assert_int_equal(proto_msg_encode_frame(&m, 1 << 20, &frame, &len, &d), 0);
    assert_int_equal(send(bu->a_fd, frame, len, MSG_NOSIGNAL), (ssize_t)len);
    free(frame);
}

static void on_establish(uv_timer_t *t)
{
    struct burst *bu = t->data;
    proto_link_set_established(bu->a, HB_MS);
    proto_link_set_established(bu->b, HB_MS);
}

static void on_burst_stop(uv_timer_t *t)
{
    struct burst *bu = t->data;
    proto_link_close(bu->a, 0, "done");
    proto_link_close(bu->b, 0, "done");
}

/* Link a's messages take 10 periods to handle in one callback, so the
 * loop's timers cannot run meanwhile: link b, on the same loop, still sends
 * its heartbeats between a's messages, and its peer never waits much more
 * than two periods for a frame (10 without the catch-up), also when a
 * message had reached the loop before any link had heartbeats. */
static void test_busy_loop_still_heartbeats(void **state)
{
    static const struct proto_link_cbs cbs = {.on_msg = on_msg_slow, .on_close = on_close_burst};
    static char got[1 << 20];
    struct peer pb = {.got = got, .got_cap = sizeof(got)};
    struct iof_conn *ca = NULL, *cb = NULL;
    struct burst bu = {0};
    int sa[2], sb[2];
    uv_loop_t loop;
    pthread_t th;
    (void)state;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sa), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sb), 0);
    bu.a_fd = sa[1];
    pb.fd = sb[1];
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(iof_conn_open_fd(&loop, sa[0], "a", NULL, NULL, &ca), 0);
    assert_int_equal(iof_conn_open_fd(&loop, sb[0], "b", NULL, NULL, &cb), 0);
    bu.a = proto_link_new(&loop, ca, &cbs, &bu);
    bu.b = proto_link_new(&loop, cb, &cbs, &bu);
    assert_true(bu.a && bu.b);
    uv_timer_init(&loop, &bu.early);
    uv_timer_init(&loop, &bu.establish);
    uv_timer_init(&loop, &bu.send);
    uv_timer_init(&loop, &bu.stop);
    bu.early.data = bu.establish.data = bu.send.data = bu.stop.data = &bu;
    /* A message first reaches a link while no heartbeat runs (a hello);
     * the links are established later, as a session's are. */
    uv_timer_start(&bu.early, on_early, 5, 0);
    uv_timer_start(&bu.establish, on_establish, 15, 0);
    uv_timer_start(&bu.send, on_burst, 150, 0);
    uv_timer_start(&bu.stop, on_burst_stop, 150 + BURST * BURST_MS + 250, 0);
    assert_int_equal(pthread_create(&th, NULL, peer_main, &pb), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    atomic_store(&pb.stop, true);
    pthread_join(th, NULL);
    close(sa[1]);
    close(sb[1]);
    assert_int_equal(uv_loop_close(&loop), 0);
    print_message("%u slow messages; b's peer waited at most %.0f ms for a frame\n", bu.handled,
                  (double)pb.max_gap_ns / 1e6);
    assert_int_equal(bu.handled, BURST + 1);
    assert_int_equal(bu.b_err, 0);
    /* b's peer heard from b before the burst: the gap spans it. */
    assert_true(pb.first_rx_ns && pb.first_rx_ns < bu.burst_ns);
    assert_true(pb.max_gap_ns < 3.5 * HB_MS * IOF_NS_PER_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_stall_is_not_a_lost_peer),
        cmocka_unit_test(test_silent_peer_is_lost),
        cmocka_unit_test(test_heartbeat_only_when_quiet),
        cmocka_unit_test(test_busy_loop_still_heartbeats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
