/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_link.c - proto/link.c's lost-peer rule: a link whose own
 * loop stalled (longer than the silence limit) while the peer kept sending
 * is not declared lost at the first late tick, before the waiting messages
 * are read; a peer that is really silent still is. And its heartbeats: none
 * in a period in which something else was sent, one in every other, so the
 * peer never waits more than two periods for a frame, also while the loop
 * spends many periods in one callback handling another link's messages.
 * A peer that falls silent right after one of the link's ticks is declared
 * lost PROTO_HEARTBEAT_MISSES periods after its last frame, not at the tick
 * after that (up to a period later: the dead-man rule's 15 s became 20 s). */
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
#include "proto/frame.h"
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
    unsigned send_ms;  /* the application sends a message this often; 0: never */
    int send_err;      /* the first refused send, checked after the loop */
    unsigned limit_ms; /* the session's dead-man limit (0: 3 periods) */
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
    /* No assertion here: a failed one would leave uv_run, and the test,
     * with the peer thread still reading this frame's stack. */
    if (r->link) {
        int err = proto_link_send(r->link, &m);
        if (err && !r->send_err)
            r->send_err = err;
    }
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
    proto_link_set_established(r->link, HB_MS, r->limit_ms);
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
static unsigned heartbeats_sent_limit(unsigned send_ms, unsigned limit_ms, double *gap)
{
    static char got[1 << 20];
    struct peer p = {.got = got, .got_cap = sizeof(got)};
    struct run r;
    unsigned n = 0;

    memset(&r, 0, sizeof(r));
    r.send_ms = send_ms;
    r.limit_ms = limit_ms;
    run_link_with(false, &r, &p);
    assert_int_equal(r.close_err, 0);
    assert_int_equal(r.send_err, 0);
    assert_true(p.got_len < sizeof(got));
    for (const char *q = got; (q = memmem(q, (size_t)(got + p.got_len - q), "\"heartbeat\"", 11));
         q += 11)
        n++;
    *gap = (double)p.max_gap_ns / 1e6;
    return n;
}

static unsigned heartbeats_sent(unsigned send_ms, double *gap)
{
    return heartbeats_sent_limit(send_ms, 0, gap);
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

/* A limit under 3 periods (1.8's sparse heartbeat): a message in the last
 * half period stands for a tick's heartbeat, an older one does not. With a
 * message every 0.7 periods, a tick finds the last one older than half a
 * period about 2 times in 7 (none is sent on 3 periods' rule, as every
 * period had a message); with one every 0.4 periods, never. */
static void test_sparse_heartbeat_half_period(void **state)
{
    double gap;
    unsigned n, classic;
    (void)state;

    n = heartbeats_sent_limit(HB_MS * 4 / 10, HB_MS * 9 / 4, &gap);
    print_message("sparse, a message every %d ms: %u heartbeats\n", HB_MS * 4 / 10, n);
    assert_true(n <= 2);
    n = heartbeats_sent_limit(HB_MS * 7 / 10, HB_MS * 9 / 4, &gap);
    classic = heartbeats_sent(HB_MS * 7 / 10, &gap);
    print_message("a message every %d ms: %u heartbeats sparse, %u on 3 periods\n", HB_MS * 7 / 10,
                  n, classic);
    assert_true(n >= 2);
    assert_true(classic <= 2);
    assert_true(n > classic);
}

/* What an agent agrees to: the sparse offer with its limit from a 1.8
 * manager; the 1.5 offer and 3 periods from a 1.7 one; its own longer
 * period, or a cap, with 3 periods. */
static void test_heartbeat_agree(void **state)
{
    struct proto_hello h = {.minor = 8,
                            .heartbeat_ms = 1000,
                            .heartbeat_offer_ms = PROTO_HEARTBEAT_MS_OFFER,
                            .heartbeat_sparse_ms = PROTO_HEARTBEAT_MS_SPARSE,
                            .heartbeat_limit_ms = PROTO_HEARTBEAT_LIMIT_MS_SPARSE};
    uint32_t limit, asked;
    (void)state;

    assert_int_equal(proto_link_heartbeat_agree(&h, 0, 5000, &limit, &asked), 4000);
    assert_int_equal(limit, 9000);
    assert_int_equal(asked, 0);
    assert_int_equal(proto_link_heartbeat_agree(&h, 4500, 5000, &limit, &asked), 4500);
    assert_int_equal(limit, 0);
    assert_int_equal(proto_link_heartbeat_agree(&h, 1000, 3500, &limit, &asked), 3500);
    assert_int_equal(limit, 0);
    assert_int_equal(asked, 4000);
    h.minor = 7;
    assert_int_equal(proto_link_heartbeat_agree(&h, 0, 5000, &limit, &asked), 3000);
    assert_int_equal(limit, 0);
    h.minor = 4;
    assert_int_equal(proto_link_heartbeat_agree(&h, 0, 5000, &limit, &asked), 1000);
    assert_int_equal(limit, 0);
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

/* --- the verdict at the silence limit, not at the next tick ------------------------------ */

#define LIMIT_HB_MS 400

struct hush {
    int fd;
    atomic_bool stop;
    _Atomic uint64_t last_tx_ns; /* the peer's last frame */
    uint64_t closed_ns;
    int close_err;
    char why[256];
};

/* The peer answers the link's first heartbeat (a tick) 50 ms later (more
 * than the ticks drift in three periods: libuv's timers count whole ms)
 * with its last frame, then says nothing: its silence starts a little after
 * a tick, the worst case for a verdict at ticks only. */
static void *hush_main(void *arg)
{
    struct hush *h = arg;
    uint8_t frame[PROTO_HEARTBEAT_FRAME_MAX], junk[4096];
    size_t len;

    if (recv(h->fd, junk, sizeof(junk), 0) > 0 && usleep(50000) == 0 &&
        proto_msg_heartbeat_frame(0, iof_now_ns(), frame, sizeof(frame), &len) == 0 &&
        send(h->fd, frame, len, MSG_NOSIGNAL) == (ssize_t)len)
        atomic_store(&h->last_tx_ns, iof_now_ns());
    while (!atomic_load(&h->stop)) {
        while (recv(h->fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
            ;
        usleep(10000);
    }
    return NULL;
}

static void on_close_hush(struct proto_link *l, int err, const char *why, void *arg)
{
    struct hush *h = arg;
    (void)l;
    h->closed_ns = iof_now_ns();
    h->close_err = err;
    snprintf(h->why, sizeof(h->why), "%s", why);
}

/* The link with limit_ms (0: 3 periods) of LIMIT_HB_MS, its peer silent
 * after one frame: ms from that frame to the verdict, and why. */
static double lost_after(unsigned limit_ms, struct hush *h);

static void test_lost_at_the_limit(void **state)
{
    struct hush h = {0};
    double after_ms;
    (void)state;

    after_ms = lost_after(0, &h);
    print_message("lost %.0f ms after the peer's last frame (limit %d ms): %s\n", after_ms,
                  PROTO_HEARTBEAT_MISSES * LIMIT_HB_MS, h.why);
    /* At the limit, with room for a late timer on a loaded machine; the
     * tick after the limit comes a period later, less the peer's 50 ms. */
    assert_true(after_ms >= PROTO_HEARTBEAT_MISSES * LIMIT_HB_MS - 1);
    assert_true(after_ms < PROTO_HEARTBEAT_MISSES * LIMIT_HB_MS + LIMIT_HB_MS / 2);
    assert_non_null(strstr(h.why, "(3 heartbeats missed)"));
}

/* 1.8's sparse limit, 2.25 periods: the verdict at it, and said so. */
static void test_lost_at_the_sparse_limit(void **state)
{
    struct hush h = {0};
    double after_ms;
    (void)state;

    after_ms = lost_after(LIMIT_HB_MS * 9 / 4, &h);
    print_message("lost %.0f ms after the peer's last frame (limit %d ms): %s\n", after_ms,
                  LIMIT_HB_MS * 9 / 4, h.why);
    assert_true(after_ms >= LIMIT_HB_MS * 9 / 4 - 1);
    assert_true(after_ms < LIMIT_HB_MS * 9 / 4 + LIMIT_HB_MS / 2);
    assert_non_null(strstr(h.why, "(the limit, 0.9 s, at a heartbeat every 0.4 s)"));
}

static double lost_after(unsigned limit_ms, struct hush *h)
{
    static const struct proto_link_cbs cbs = {.on_msg = on_msg, .on_close = on_close_hush};
    struct iof_conn *c = NULL;
    struct proto_link *l;
    uv_loop_t loop;
    pthread_t th;
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    h->fd = sv[1];
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(iof_conn_open_fd(&loop, sv[0], "peer", NULL, NULL, &c), 0);
    l = proto_link_new(&loop, c, &cbs, h);
    assert_non_null(l);
    proto_link_set_established(l, LIMIT_HB_MS, limit_ms);
    assert_int_equal(pthread_create(&th, NULL, hush_main, h), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    atomic_store(&h->stop, true);
    pthread_join(th, NULL);
    close(sv[1]);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(h->close_err, IOF_ELOST);
    assert_true(atomic_load(&h->last_tx_ns) != 0);
    return (double)(h->closed_ns - atomic_load(&h->last_tx_ns)) / 1e6;
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
    proto_link_set_established(bu->a, HB_MS, 0);
    proto_link_set_established(bu->b, HB_MS, 0);
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

/* --- results handled after the reads -------------------------------------------------- */

#define DQ_LINKS 5    /* links whose peers send results */
#define DQ_PER_LINK 2 /* results per link */
#define DQ_SLOW_MS 20 /* each result's handling */

struct dq {
    struct proto_link *res[DQ_LINKS], *rep;
    int res_fd[DQ_LINKS], rep_fd;
    atomic_uint results;
    int last_test[DQ_LINKS];
    bool in_order, stop0_after_results, report_seen;
    unsigned results_before_report, closed, results_at_close[DQ_LINKS];
    int close_err[DQ_LINKS];
    char why[DQ_LINKS][128];
    uint64_t report_sent_ns, report_wait_ns;
};

static int dq_index(struct dq *q, struct proto_link *l)
{
    for (int i = 0; i < DQ_LINKS; i++)
        if (q->res[i] == l)
            return i;
    return -1;
}

static void dq_close_all(struct dq *q)
{
    for (int i = 0; i < DQ_LINKS; i++)
        proto_link_close(q->res[i], 0, NULL);
    proto_link_close(q->rep, 0, NULL);
}

static void dq_on_msg(struct proto_link *l, const struct proto_msg *msg, void *arg)
{
    struct dq *q = arg;
    int i = dq_index(q, l);

    if (msg->type == PROTO_MSG_RESULT) {
        assert_true(i >= 0);
        if ((int)msg->u.result.test <= q->last_test[i])
            q->in_order = false;
        q->last_test[i] = (int)msg->u.result.test;
        atomic_fetch_add(&q->results, 1);
        usleep(DQ_SLOW_MS * 1000);
    } else if (msg->type == PROTO_MSG_STOP && i == 0) {
        /* Not a deferred type, but behind link 0's results. */
        q->stop0_after_results = q->last_test[0] == DQ_PER_LINK - 1;
    } else if (msg->type == PROTO_MSG_STOP && l == q->rep) {
        q->report_seen = true;
        q->results_before_report = atomic_load(&q->results);
        q->report_wait_ns = iof_now_ns() - q->report_sent_ns;
    }
    if (q->rep && q->report_seen && atomic_load(&q->results) == DQ_LINKS * DQ_PER_LINK &&
        q->stop0_after_results)
        dq_close_all(q);
}

static void dq_on_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct dq *q = arg;
    int i = dq_index(q, l);

    if (i >= 0) {
        q->results_at_close[i] = (unsigned)(q->last_test[i] + 1);
        q->close_err[i] = err;
        snprintf(q->why[i], sizeof(q->why[i]), "%s", why ? why : "");
        q->res[i] = NULL;
    } else {
        q->rep = NULL;
    }
    q->closed++;
}

static size_t dq_frame(uint8_t *buf, size_t cap, const struct proto_msg *m)
{
    struct iof_diag d = {{0}};
    uint8_t *frame = NULL;
    size_t len;

    if (proto_msg_encode_frame(m, 1 << 20, &frame, &len, &d))
        fail_msg("encode: %s", d.msg);
    assert_true(len <= cap);
    memcpy(buf, frame, len);
    free(frame);
    return len;
}

static size_t dq_result(uint8_t *buf, size_t cap, uint32_t test)
{
    struct proto_msg m;
    proto_msg_init(&m, PROTO_MSG_RESULT);
    m.u.result.test = test;
    m.u.result.measured_ns = IOF_NS_PER_S;
    return dq_frame(buf, cap, &m);
}

static size_t dq_stop(uint8_t *buf, size_t cap)
{
    struct proto_msg m;
    proto_msg_init(&m, PROTO_MSG_STOP);
    m.u.stop.reason = "a message of a type handled at once";
    return dq_frame(buf, cap, &m);
}

/* The peers: each result link's results (and link 0's stop behind them) in
 * one write; once the loop has begun to handle them, the report. */
static void *dq_peers(void *arg)
{
    struct dq *q = arg;
    uint8_t buf[4096];

    for (int i = 0; i < DQ_LINKS; i++) {
        size_t used = 0;
        for (uint32_t t = 0; t < DQ_PER_LINK; t++)
            used += dq_result(buf + used, sizeof(buf) - used, t);
        if (i == 0)
            used += dq_stop(buf + used, sizeof(buf) - used);
        assert_int_equal(send(q->res_fd[i], buf, used, MSG_NOSIGNAL), (ssize_t)used);
    }
    for (int n = 0; n < 5000 && !atomic_load(&q->results); n++)
        usleep(1000);
    size_t len = dq_stop(buf, sizeof(buf));
    q->report_sent_ns = iof_now_ns();
    assert_int_equal(send(q->rep_fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
    return NULL;
}

static void dq_open(uv_loop_t *loop, struct proto_link **l, int *peer_fd, void *arg)
{
    static const struct proto_link_cbs cbs = {.on_msg = dq_on_msg, .on_close = dq_on_close};
    struct iof_conn *c = NULL;
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    *peer_fd = sv[1];
    assert_int_equal(iof_conn_open_fd(loop, sv[0], "peer", NULL, NULL, &c), 0);
    *l = proto_link_new(loop, c, &cbs, arg);
    assert_non_null(*l);
    proto_link_set_deferred(*l, 1u << PROTO_MSG_RESULT);
}

/* Ten results that take 200 ms to handle reach the loop together; a report
 * written to another link once their handling has begun is handled before
 * they are all done (inline it would wait behind all ten), and each link's
 * messages keep their order, including one of a type handled at once that
 * came behind results. */
static void test_results_after_reads(void **state)
{
    struct dq q = {.in_order = true};
    uv_loop_t loop;
    pthread_t th;
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    for (int i = 0; i < DQ_LINKS; i++) {
        dq_open(&loop, &q.res[i], &q.res_fd[i], &q);
        q.last_test[i] = -1;
    }
    dq_open(&loop, &q.rep, &q.rep_fd, &q);
    assert_int_equal(pthread_create(&th, NULL, dq_peers, &q), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    pthread_join(th, NULL);
    for (int i = 0; i < DQ_LINKS; i++)
        close(q.res_fd[i]);
    close(q.rep_fd);
    assert_int_equal(uv_loop_close(&loop), 0);
    print_message("report handled after %u of %d results, %.1f ms after it was written\n",
                  q.results_before_report, DQ_LINKS * DQ_PER_LINK, (double)q.report_wait_ns / 1e6);
    assert_int_equal(q.closed, DQ_LINKS + 1);
    assert_int_equal(atomic_load(&q.results), DQ_LINKS * DQ_PER_LINK);
    assert_true(q.in_order);
    assert_true(q.stop0_after_results);
    assert_true(q.report_seen);
    assert_true(q.results_before_report < DQ_LINKS * DQ_PER_LINK);
}

/* Peers that send results and close at once: every result that came before
 * the close is handled before the link's on_close, also those the loop had
 * not reached when the close came; a bad one among them ends the link with
 * its reason, and what came after it is dropped. */
static void test_waiting_results_before_close(void **state)
{
    struct dq q = {.in_order = true};
    uv_loop_t loop;
    uint8_t buf[4096];
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    for (int i = 0; i < 2; i++) {
        dq_open(&loop, &q.res[i], &q.res_fd[i], &q);
        q.last_test[i] = -1;
    }
    for (int i = 0; i < 2; i++) {
        size_t used = 0;
        used += dq_result(buf, sizeof(buf), 0);
        if (i == 1) {
            static const char bad[] = "{\"type\":\"result\",\"test\":\"one\"}";
            size_t len;
            assert_int_equal(proto_frame_encode(bad, sizeof(bad) - 1, 1 << 20, buf + used,
                                                sizeof(buf) - used, &len, NULL),
                             0);
            used += len;
        }
        used += dq_result(buf + used, sizeof(buf) - used, 1);
        assert_int_equal(send(q.res_fd[i], buf, used, MSG_NOSIGNAL), (ssize_t)used);
        close(q.res_fd[i]);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(q.closed, 2);
    assert_true(q.in_order);
    assert_int_equal(q.results_at_close[0], 2);
    assert_int_equal(q.close_err[0], -EPIPE);
    assert_int_equal(q.results_at_close[1], 1);
    assert_int_equal(q.close_err[1], IOF_EPROTO);
    assert_non_null(strstr(q.why[1], "bad message"));
    assert_int_equal(atomic_load(&q.results), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_stall_is_not_a_lost_peer),
        cmocka_unit_test(test_silent_peer_is_lost),
        cmocka_unit_test(test_lost_at_the_limit),
        cmocka_unit_test(test_lost_at_the_sparse_limit),
        cmocka_unit_test(test_heartbeat_agree),
        cmocka_unit_test(test_sparse_heartbeat_half_period),
        cmocka_unit_test(test_heartbeat_only_when_quiet),
        cmocka_unit_test(test_busy_loop_still_heartbeats),
        cmocka_unit_test(test_results_after_reads),
        cmocka_unit_test(test_waiting_results_before_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
