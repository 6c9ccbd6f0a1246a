/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_http_guard.c - manager/sinks/http_guard.c: connections are
 * counted per IPv4 /24 and IPv6 /64 (IPv4-mapped IPv6 as IPv4); over a cap a
 * new connection closes the oldest of its network still waiting for
 * headers, or is refused when all are busy; event streams have their own
 * caps; late headers are closed by the sweep (5 s from connecting, 30 s
 * after a response), a busy request never. A connection closed by the
 * guard is a socketpair end the peer sees shut. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "manager/sinks/http_guard.h"

struct peer {
    struct sockaddr_storage sa;
    socklen_t len;
    int fd[2]; /* fd[0] is the server's end, fd[1] the client's */
    struct mgr_http_conn *c;
};

static void peer_addr(struct peer *p, const char *addr)
{
    memset(p, 0, sizeof(*p));
    if (strchr(addr, ':')) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&p->sa;
        s6->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, addr, &s6->sin6_addr), 1);
        p->len = sizeof(*s6);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&p->sa;
        s4->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, addr, &s4->sin_addr), 1);
        p->len = sizeof(*s4);
    }
}

/* Admitted and opened: true; refused: false. */
static bool peer_open(struct mgr_http_guard *g, struct peer *p, const char *addr)
{
    peer_addr(p, addr);
    if (!mgr_http_guard_admit(g, (struct sockaddr *)&p->sa, p->len))
        return false;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, p->fd), 0);
    p->c = mgr_http_guard_opened(g, (struct sockaddr *)&p->sa, p->len, p->fd[0]);
    assert_non_null(p->c);
    return true;
}

/* The guard shut the server's end down: the client reads the end. */
static bool peer_shut(const struct peer *p)
{
    char ch;
    return recv(p->fd[1], &ch, 1, MSG_DONTWAIT) == 0;
}

static void peer_close(struct mgr_http_guard *g, struct peer *p)
{
    if (!p->c)
        return;
    mgr_http_guard_closed(g, p->c);
    close(p->fd[0]);
    close(p->fd[1]);
    p->c = NULL;
}

static struct peer peers[MGR_HTTP_SLOTS + 8];

static void close_all(struct mgr_http_guard *g)
{
    for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
        peer_close(g, &peers[i]);
}

static void test_net_cap_evicts_oldest_waiting(void **state)
{
    struct mgr_http_guard *g;
    struct mgr_http_guard_stats st;
    char a[64];

    (void)state;
    assert_int_equal(mgr_http_guard_new(&g), 0);
    for (int i = 0; i < MGR_HTTP_MAX_PER_NET; i++) {
        snprintf(a, sizeof(a), "127.0.0.%d", 2 + i);
        assert_true(peer_open(g, &peers[i], a));
    }
    /* The next of 127.0.0.0/24 closes the oldest waiting one... */
    assert_true(peer_open(g, &peers[MGR_HTTP_MAX_PER_NET], "127.0.0.200"));
    assert_true(peer_shut(&peers[0]));
    assert_false(peer_shut(&peers[1]));
    /* ...and busy ones are never closed: with all busy it is refused. */
    for (int i = 1; i <= MGR_HTTP_MAX_PER_NET; i++)
        assert_true(mgr_http_guard_request(g, peers[i].c));
    assert_false(mgr_http_guard_request(g, peers[0].c)); /* closed: not served */
    peer_close(g, &peers[0]);
    assert_false(peer_open(g, &peers[0], "127.0.0.1"));
    /* Another /24 (of loopback too) is not affected. */
    assert_true(peer_open(g, &peers[MGR_HTTP_MAX_PER_NET + 1], "127.0.1.1"));
    mgr_http_guard_stats(g, &st);
    assert_int_equal(st.evicted, 1);
    assert_int_equal(st.refused, 1);
    /* A request done waits for headers again: the next newcomer may close it. */
    mgr_http_guard_done(g, peers[5].c);
    assert_true(peer_open(g, &peers[0], "127.0.0.1"));
    assert_true(peer_shut(&peers[5]));
    close_all(g);
    mgr_http_guard_free(g);
}

static void test_ipv6_by_64_and_mapped_v4(void **state)
{
    struct mgr_http_guard *g;
    char a[64];

    (void)state;
    assert_int_equal(mgr_http_guard_new(&g), 0);
    for (int i = 0; i < MGR_HTTP_MAX_PER_NET; i++) {
        snprintf(a, sizeof(a), "2001:db8:1:2::%x", 1 + i);
        assert_true(peer_open(g, &peers[i], a));
        assert_true(mgr_http_guard_request(g, peers[i].c));
    }
    /* The same /64 is full of busy connections; the next /64 is not. */
    assert_false(peer_open(g, &peers[MGR_HTTP_MAX_PER_NET], "2001:db8:1:2:ffff::1"));
    assert_true(peer_open(g, &peers[MGR_HTTP_MAX_PER_NET], "2001:db8:1:3::1"));
    close_all(g);
    /* IPv4-mapped addresses count with their IPv4 /24. */
    for (int i = 0; i < MGR_HTTP_MAX_PER_NET; i++) {
        snprintf(a, sizeof(a), "::ffff:198.18.0.%d", 1 + i);
        assert_true(peer_open(g, &peers[i], a));
        assert_true(mgr_http_guard_request(g, peers[i].c));
    }
    assert_false(peer_open(g, &peers[MGR_HTTP_MAX_PER_NET], "198.18.0.99"));
    close_all(g);
    mgr_http_guard_free(g);
}

static void test_total_cap(void **state)
{
    struct mgr_http_guard *g;
    char a[64];
    int i;

    (void)state;
    assert_int_equal(mgr_http_guard_new(&g), 0);
    for (i = 0; i < MGR_HTTP_MAX_CONN; i++) {
        snprintf(a, sizeof(a), "10.%d.0.1", i);
        assert_true(peer_open(g, &peers[i], a));
    }
    /* Full: the oldest waiting one anywhere makes room. */
    assert_true(peer_open(g, &peers[i], "10.200.0.1"));
    assert_true(peer_shut(&peers[0]));
    for (int j = 1; j <= i; j++)
        assert_true(mgr_http_guard_request(g, peers[j].c));
    peer_close(g, &peers[0]);
    assert_false(peer_open(g, &peers[0], "10.201.0.1"));
    close_all(g);
    mgr_http_guard_free(g);
}

static void test_streams(void **state)
{
    struct mgr_http_guard *g;
    char a[64];
    int i, n = 0;

    (void)state;
    assert_int_equal(mgr_http_guard_new(&g), 0);
    for (i = 0; i < MGR_HTTP_MAX_SSE_PER_NET; i++) {
        snprintf(a, sizeof(a), "127.0.0.%d", 2 + i);
        assert_true(peer_open(g, &peers[n], a));
        assert_true(mgr_http_guard_request(g, peers[n].c));
        assert_int_equal(mgr_http_guard_stream(g, peers[n].c), 0);
        n++;
    }
    assert_true(peer_open(g, &peers[n], "127.0.0.100"));
    assert_true(mgr_http_guard_request(g, peers[n].c));
    assert_int_equal(mgr_http_guard_stream(g, peers[n].c), -EBUSY);
    n++;
    /* Streams do not take the page's and /metrics' places in their network. */
    for (i = 0; i < MGR_HTTP_MAX_PER_NET - 1; i++) {
        snprintf(a, sizeof(a), "127.0.0.%d", 150 + i);
        assert_true(peer_open(g, &peers[n], a));
        assert_true(mgr_http_guard_request(g, peers[n].c));
        n++;
    }
    /* Other networks fill the server's stream slots. */
    for (i = 0; i < MGR_HTTP_MAX_SSE - MGR_HTTP_MAX_SSE_PER_NET; i++) {
        snprintf(a, sizeof(a), "10.0.%d.1", i);
        assert_true(peer_open(g, &peers[n], a));
        assert_true(mgr_http_guard_request(g, peers[n].c));
        assert_int_equal(mgr_http_guard_stream(g, peers[n].c), 0);
        n++;
    }
    assert_true(peer_open(g, &peers[n], "10.1.0.1"));
    assert_true(mgr_http_guard_request(g, peers[n].c));
    assert_int_equal(mgr_http_guard_stream(g, peers[n].c), -EBUSY);
    /* A stream that ends is closed, and its slot is free again. */
    mgr_http_guard_done(g, peers[0].c);
    assert_true(peer_shut(&peers[0]));
    peer_close(g, &peers[0]);
    assert_int_equal(mgr_http_guard_stream(g, peers[n].c), 0);
    close_all(g);
    mgr_http_guard_free(g);
}

static void test_header_deadline(void **state)
{
    struct mgr_http_guard *g;
    struct mgr_http_guard_stats st;
    uint64_t now = iof_now_ns();

    (void)state;
    assert_int_equal(mgr_http_guard_new(&g), 0);
    assert_true(peer_open(g, &peers[0], "127.0.0.2"));
    assert_true(peer_open(g, &peers[1], "127.0.0.3"));
    assert_true(mgr_http_guard_request(g, peers[1].c));
    mgr_http_guard_sweep(g, now + (MGR_HTTP_HEADER_S - 1) * IOF_NS_PER_S);
    assert_false(peer_shut(&peers[0]));
    mgr_http_guard_sweep(g, now + (MGR_HTTP_HEADER_S + 1) * IOF_NS_PER_S);
    assert_true(peer_shut(&peers[0]));
    assert_false(peer_shut(&peers[1])); /* a request being answered is not timed here */
    /* After a response the next request's headers get the keep-alive wait. */
    mgr_http_guard_done(g, peers[1].c);
    now = iof_now_ns();
    mgr_http_guard_sweep(g, now + (MGR_HTTP_HEADER_S + 1) * IOF_NS_PER_S);
    assert_false(peer_shut(&peers[1]));
    mgr_http_guard_sweep(g, now + (MGR_HTTP_KEEPALIVE_S + 1) * IOF_NS_PER_S);
    assert_true(peer_shut(&peers[1]));
    mgr_http_guard_stats(g, &st);
    assert_int_equal(st.timed_out, 2);
    close_all(g);
    mgr_http_guard_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_net_cap_evicts_oldest_waiting),
        cmocka_unit_test(test_ipv6_by_64_and_mapped_v4),
        cmocka_unit_test(test_total_cap),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_header_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
