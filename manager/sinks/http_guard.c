/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http_guard.c - the live view's connection caps and header
 * deadline (manager/sinks/http_guard.h): one table of connections under a mutex,
 * counted by network on each admission, and a thread that closes those
 * whose request headers are late. Closing is shutdown(2) of the socket: the
 * connection's own thread then sees the end and libmicrohttpd closes it. */
#include "manager/sinks/http_guard.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

#define GUARD_TICK_MS 200 /* how often late headers are looked for */

enum mgr_http_conn_state {
    HTTP_CONN_FREE,
    HTTP_CONN_HEADERS, /* waiting for complete request headers */
    HTTP_CONN_BUSY,    /* a request of the page, /metrics or /api/run */
    HTTP_CONN_STREAM,  /* an event stream */
    HTTP_CONN_CLOSING, /* shut down by the guard, not yet closed */
};

/* The network a peer belongs to: family, then the /24 or /64 prefix. */
struct http_net {
    uint8_t b[9];
};

struct mgr_http_conn {
    enum mgr_http_conn_state state;
    int fd;
    struct http_net net;
    uint64_t since_ns;    /* when it began waiting for headers */
    uint64_t deadline_ns; /* when it is closed if they are not complete */
};

struct mgr_http_guard {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC; signalled to stop the thread */
    bool stop, cv_init, thread_started;
    pthread_t thread;
    struct mgr_http_guard_stats st;
    struct mgr_http_conn conns[MGR_HTTP_SLOTS];
};

/* IPv4 (and IPv4-mapped IPv6) by /24, IPv6 by /64. */
static struct http_net guard_net(const struct sockaddr *sa, socklen_t len)
{
    struct http_net n = {{0}};

    if (sa && sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        n.b[0] = 4;
        memcpy(n.b + 1, &((const struct sockaddr_in *)sa)->sin_addr, 3);
    } else if (sa && sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            n.b[0] = 4;
            memcpy(n.b + 1, a->s6_addr + 12, 3);
        } else {
            n.b[0] = 6;
            memcpy(n.b + 1, a->s6_addr, 8);
        }
    }
    return n;
}

static bool guard_same_net(const struct http_net *a, const struct http_net *b)
{
    return !memcmp(a->b, b->b, sizeof(a->b));
}

/* Lock held. */
static void guard_close(struct mgr_http_conn *c)
{
    c->state = HTTP_CONN_CLOSING;
    shutdown(c->fd, SHUT_RDWR);
}

/* Lock held: the connection waiting longest for headers, of net when given. */
static struct mgr_http_conn *guard_oldest_waiting(struct mgr_http_guard *g,
                                                  const struct http_net *net)
{
    struct mgr_http_conn *old = NULL;

    for (size_t i = 0; i < MGR_HTTP_SLOTS; i++) {
        struct mgr_http_conn *c = &g->conns[i];
        if (c->state == HTTP_CONN_HEADERS && (!net || guard_same_net(&c->net, net)) &&
            (!old || c->since_ns < old->since_ns))
            old = c;
    }
    return old;
}

static void guard_sweep_locked(struct mgr_http_guard *g, uint64_t now)
{
    for (size_t i = 0; i < MGR_HTTP_SLOTS; i++) {
        struct mgr_http_conn *c = &g->conns[i];
        if (c->state == HTTP_CONN_HEADERS && now >= c->deadline_ns) {
            guard_close(c);
            g->st.timed_out++;
        }
    }
}

void mgr_http_guard_sweep(struct mgr_http_guard *g, uint64_t now_ns)
{
    pthread_mutex_lock(&g->mu);
    guard_sweep_locked(g, now_ns);
    pthread_mutex_unlock(&g->mu);
}

static void *guard_thread(void *arg)
{
    struct mgr_http_guard *g = arg;

    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += GUARD_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->cv, &g->mu, &until);
        guard_sweep_locked(g, iof_now_ns());
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int mgr_http_guard_new(struct mgr_http_guard **out)
{
    struct mgr_http_guard *g = calloc(1, sizeof(*g));
    pthread_condattr_t ca;
    int rc;

    *out = NULL;
    if (!g)
        return -ENOMEM;
    if ((rc = pthread_mutex_init(&g->mu, NULL))) {
        free(g);
        return -rc;
    }
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = pthread_cond_init(&g->cv, &ca);
    pthread_condattr_destroy(&ca);
    g->cv_init = !rc;
    if (!rc && !(rc = pthread_create(&g->thread, NULL, guard_thread, g)))
        g->thread_started = true;
    if (rc) {
        mgr_http_guard_free(g);
        return -rc;
    }
    *out = g;
    return 0;
}

void mgr_http_guard_free(struct mgr_http_guard *g)
{
    if (!g)
        return;
    if (g->thread_started) {
        pthread_mutex_lock(&g->mu);
        g->stop = true;
        pthread_cond_signal(&g->cv);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->thread, NULL);
    }
    if (g->cv_init)
        pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

bool mgr_http_guard_admit(struct mgr_http_guard *g, const struct sockaddr *sa, socklen_t len)
{
    struct http_net net = guard_net(sa, len);
    unsigned in_net = 0, all = 0;
    struct mgr_http_conn *victim;
    bool ok = true;

    pthread_mutex_lock(&g->mu);
    guard_sweep_locked(g, iof_now_ns());
    for (size_t i = 0; i < MGR_HTTP_SLOTS; i++) {
        const struct mgr_http_conn *c = &g->conns[i];
        if (c->state != HTTP_CONN_HEADERS && c->state != HTTP_CONN_BUSY)
            continue;
        all++;
        in_net += guard_same_net(&c->net, &net);
    }
    if (in_net >= MGR_HTTP_MAX_PER_NET) {
        if ((victim = guard_oldest_waiting(g, &net))) {
            guard_close(victim);
            g->st.evicted++;
            all--;
        } else {
            ok = false;
        }
    }
    if (ok && all >= MGR_HTTP_MAX_CONN) {
        if ((victim = guard_oldest_waiting(g, NULL))) {
            guard_close(victim);
            g->st.evicted++;
        } else {
            ok = false;
        }
    }
    if (!ok)
        g->st.refused++;
    pthread_mutex_unlock(&g->mu);
    return ok;
}

struct mgr_http_conn *mgr_http_guard_opened(struct mgr_http_guard *g, const struct sockaddr *sa,
                                            socklen_t len, int fd)
{
    struct mgr_http_conn *c = NULL;

    pthread_mutex_lock(&g->mu);
    for (size_t i = 0; i < MGR_HTTP_SLOTS && !c; i++)
        if (g->conns[i].state == HTTP_CONN_FREE)
            c = &g->conns[i];
    if (c) {
        c->state = HTTP_CONN_HEADERS;
        c->fd = fd;
        c->net = guard_net(sa, len);
        c->since_ns = iof_now_ns();
        c->deadline_ns = c->since_ns + (uint64_t)MGR_HTTP_HEADER_S * IOF_NS_PER_S;
    } else {
        g->st.refused++;
    }
    pthread_mutex_unlock(&g->mu);
    return c;
}

bool mgr_http_guard_request(struct mgr_http_guard *g, struct mgr_http_conn *c)
{
    bool ok;

    pthread_mutex_lock(&g->mu);
    if (c->state == HTTP_CONN_HEADERS)
        c->state = HTTP_CONN_BUSY;
    ok = c->state != HTTP_CONN_CLOSING;
    pthread_mutex_unlock(&g->mu);
    return ok;
}

int mgr_http_guard_stream(struct mgr_http_guard *g, struct mgr_http_conn *c)
{
    unsigned in_net = 0, all = 0;
    int rc = 0;

    pthread_mutex_lock(&g->mu);
    if (c->state != HTTP_CONN_STREAM) {
        for (size_t i = 0; i < MGR_HTTP_SLOTS; i++) {
            const struct mgr_http_conn *o = &g->conns[i];
            if (o->state != HTTP_CONN_STREAM)
                continue;
            all++;
            in_net += guard_same_net(&o->net, &c->net);
        }
        if (c->state == HTTP_CONN_CLOSING || all >= MGR_HTTP_MAX_SSE ||
            in_net >= MGR_HTTP_MAX_SSE_PER_NET) {
            g->st.streams_refused++;
            rc = -EBUSY;
        } else {
            c->state = HTTP_CONN_STREAM;
        }
    }
    pthread_mutex_unlock(&g->mu);
    return rc;
}

void mgr_http_guard_done(struct mgr_http_guard *g, struct mgr_http_conn *c)
{
    pthread_mutex_lock(&g->mu);
    if (c->state == HTTP_CONN_STREAM) {
        guard_close(c);
    } else if (c->state == HTTP_CONN_BUSY) {
        c->state = HTTP_CONN_HEADERS;
        c->since_ns = iof_now_ns();
        c->deadline_ns = c->since_ns + (uint64_t)MGR_HTTP_KEEPALIVE_S * IOF_NS_PER_S;
    }
    pthread_mutex_unlock(&g->mu);
}

void mgr_http_guard_closed(struct mgr_http_guard *g, struct mgr_http_conn *c)
{
    pthread_mutex_lock(&g->mu);
    c->state = HTTP_CONN_FREE;
    c->fd = -1;
    pthread_mutex_unlock(&g->mu);
}

void mgr_http_guard_stats(struct mgr_http_guard *g, struct mgr_http_guard_stats *st)
{
    pthread_mutex_lock(&g->mu);
    *st = g->st;
    pthread_mutex_unlock(&g->mu);
}
