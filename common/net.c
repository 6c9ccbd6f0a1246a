/* SPDX-License-Identifier: Apache-2.0 */
/* common/net.c - byte-stream connections and listeners on the libuv loop:
 * address parsing, TCP, TLS sessions pumped through the same interface, caps
 * on unauthenticated connections. What each system does its own way (unix-
 * domain sockets, peer credentials, batched writes) is in common/os/
 * (net_linux.c, net_win.c), behind common/net_int.h. */
#include "common/net.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net_int.h"

#define CONN_RBUF 65536
/* One read buffer per loop thread, shared by every connection: libuv reads
 * one stream at a time and every reader consumes (copies or decodes) the
 * bytes before returning, so a connection costs no 64 KiB of its own - which
 * matters for an agent flooded with connections or a manager with
 * thousands of agents. */
static _Thread_local uint8_t conn_rbuf[CONN_RBUF];

struct conn_wreq {
    uv_write_t req;
    struct iof_conn *conn;
    size_t len;
    uint8_t data[];
};

int iof_addr_parse(const char *s, char *host, size_t cap, uint16_t default_port, uint16_t *port,
                   struct iof_diag *diag)
{
    const char *colon;
    size_t hlen;

    *port = default_port;
    if (!s)
        s = "";
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close)
            return iof_diag_set(diag, -EINVAL, "address '%s': missing ']'", s);
        hlen = (size_t)(close - s - 1);
        if (hlen >= cap)
            return iof_diag_set(diag, -EINVAL, "address '%s': host too long", s);
        memcpy(host, s + 1, hlen);
        host[hlen] = '\0';
        colon = close[1] == ':' ? close + 1 : NULL;
        if (close[1] && !colon)
            return iof_diag_set(diag, -EINVAL, "address '%s': junk after ']'", s);
    } else {
        colon = strrchr(s, ':');
        if (colon && strchr(s, ':') != colon)
            return iof_diag_set(diag, -EINVAL, "address '%s': write IPv6 addresses as [ADDR]:PORT",
                                s);
        hlen = colon ? (size_t)(colon - s) : strlen(s);
        if (hlen >= cap)
            return iof_diag_set(diag, -EINVAL, "address '%s': host too long", s);
        memcpy(host, s, hlen);
        host[hlen] = '\0';
    }
    if (colon) {
        char *end;
        unsigned long p;
        errno = 0;
        p = strtoul(colon + 1, &end, 10);
        if (!colon[1] || *end || errno || p > 65535)
            return iof_diag_set(diag, -EINVAL, "address '%s': port must be 0..65535", s);
        *port = (uint16_t)p;
    }
    return 0;
}

static bool sockaddr_is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
            return true;
        return !memcmp(in6->sin6_addr.s6_addr, v4mapped, 12) && in6->sin6_addr.s6_addr[12] == 127;
    }
    return false;
}

static void format_sockaddr(const struct sockaddr_storage *ss, char *buf, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        uv_ip4_name(in, ip, sizeof(ip));
        snprintf(buf, cap, "%s:%u", ip, ntohs(in->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(in6, ip, sizeof(ip));
        snprintf(buf, cap, "[%s]:%u", ip, ntohs(in6->sin6_port));
    } else {
        snprintf(buf, cap, "?");
    }
}

/* The address alone (no port): what per-source limits count. */
static void format_addr(const struct sockaddr_storage *ss, char *buf, size_t cap)
{
    if (ss->ss_family == AF_INET)
        uv_ip4_name((const struct sockaddr_in *)ss, buf, cap);
    else if (ss->ss_family == AF_INET6)
        uv_ip6_name((const struct sockaddr_in6 *)ss, buf, cap);
    else
        snprintf(buf, cap, "?");
}

/* Records the peer's name and whether both ends are loopback. */
static void conn_note_addresses(struct iof_conn *c)
{
    struct sockaddr_storage peer, self;
    int plen = sizeof(peer), slen = sizeof(self);

    if (c->unix_sock)
        return;
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&peer, &plen) == 0 &&
        uv_tcp_getsockname(&c->h.tcp, (struct sockaddr *)&self, &slen) == 0) {
        format_sockaddr(&peer, c->peer, sizeof(c->peer));
        format_addr(&peer, c->addr, sizeof(c->addr));
        c->loopback = sockaddr_is_loopback(&peer) && sockaddr_is_loopback(&self);
    }
}

static void conn_release(struct iof_conn *c)
{
    if (--c->open_handles)
        return;
    if (c->cbs.on_close)
        c->cbs.on_close(c, c->close_err, c->arg);
    iof_tls_sess_free(c->tls);
    iof_tls_ctx_free(c->tls_ctx);
    free(c);
}

static void conn_on_handle_closed(uv_handle_t *h)
{
    conn_release(h->data);
}

static void listener_admit(struct iof_listener *l);
static void listener_unqueue(struct iof_listener *l, struct iof_conn *c);

static void conn_unlink_pending(struct iof_conn *c)
{
    struct iof_listener *l = c->listener;
    if (!l)
        return;
    if (c->hs_queued)
        listener_unqueue(l, c);
    if (c->lprev)
        c->lprev->lnext = c->lnext;
    else
        l->pending = c->lnext;
    if (c->lnext)
        c->lnext->lprev = c->lprev;
    c->lprev = c->lnext = NULL;
    c->listener = NULL;
    l->npending--;
    if (c->hs_active) {
        c->hs_active = false;
        l->nactive--;
        listener_admit(l); /* its slot goes to the oldest waiting connection */
    }
}

void iof_conn_close(struct iof_conn *c, int err)
{
    if (!c || c->closing)
        return;
    if (c->secure) {
        /* An orderly end of the TLS session; like any queued write it goes
         * out if the socket takes it now (uv_write tries at once). */
        iof_tls_sess_shutdown(c->tls);
        iof_net_conn_tls_flush(c);
    }
    c->closing = true;
    c->close_err = err;
    conn_unlink_pending(c);
    if (c->resolving) /* conn_on_resolved() still runs, then releases c */
        uv_cancel((uv_req_t *)&c->gai);
    uv_read_stop(&c->h.stream);
    uv_close(&c->h.handle, conn_on_handle_closed);
    if (c->tls_ctx)
        uv_close((uv_handle_t *)&c->hs_timer, conn_on_handle_closed);
}

/* Closes c because of err before or after authentication. Before it, the
 * application hears of it once: on_connect(err) for an outgoing connection,
 * the listener's on_reject for an incoming one. why (may be NULL) becomes
 * iof_conn_error(). Any TLS alert for the peer is sent first. */
static void conn_fail(struct iof_conn *c, int err, const char *why)
{
    struct iof_listener *l = c->listener;
    bool announce = !c->secure;

    if (c->closing)
        return;
    if (why && *why)
        snprintf(c->err, sizeof(c->err), "%s", why);
    if (c->tls && !c->secure)
        iof_net_conn_tls_flush(c);
    iof_conn_close(c, err);
    if (!announce)
        return;
    if (c->outgoing) {
        if (c->cbs.on_connect)
            c->cbs.on_connect(c, err, c->arg);
    } else if (l) {
        if (l->on_reject)
            l->on_reject(l, c, err, l->arg);
        else
            IOF_WARN("refused connection from %s: %s", c->peer, iof_conn_error(c));
    }
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct iof_conn *c = (struct iof_conn *)h;
    (void)suggested;
    (void)c;
    buf->base = (char *)conn_rbuf;
    buf->len = sizeof(conn_rbuf);
}

static void conn_tls_on_read(struct iof_conn *c, ssize_t n);

/* Reads this thread's loop has taken (iof_net_coalesce_start). */
static _Thread_local uint64_t net_reads;

static void conn_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct iof_conn *c = (struct iof_conn *)s;
    (void)buf;
    net_reads++;
    if (c->tls_ctx) {
        conn_tls_on_read(c, n);
        return;
    }
    if (n > 0) {
        if (!c->closing && c->cbs.on_data)
            c->cbs.on_data(c, conn_rbuf, (size_t)n, c->arg);
    } else if (n < 0) {
        iof_conn_close(c, n == UV_EOF ? -EPIPE : (int)n);
    }
}

int iof_net_conn_start_reading(struct iof_conn *c)
{
    if (!c->unix_sock)
        uv_tcp_nodelay(&c->h.tcp, 1);
    conn_note_addresses(c);
    return uv_read_start(&c->h.stream, conn_alloc, conn_on_read);
}

static void conn_on_write(uv_write_t *req, int status)
{
    struct conn_wreq *w = (struct conn_wreq *)req;
    struct iof_conn *c = w->conn;

    c->queued -= w->len;
    free(w);
    if ((status == UV_EPIPE || status == UV_ECONNRESET) && !c->closing) {
        /* The peer is gone, but what it sent before going (a refusal
         * saying why) may still be waiting to be read: the reader delivers
         * it, then the end of the stream closes c. Nothing more is sent. */
        c->write_broken = true;
        return;
    }
    if (status < 0 && status != UV_ECANCELED)
        iof_conn_close(c, status);
}

/* Sends w (len bytes of w->data), taking it. Returns 0 or a uv error (w is
 * then freed; the caller closes). */
static int conn_submit(struct iof_conn *c, struct conn_wreq *w, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)len);
    int r;

    w->conn = c;
    /* Counted with the request's own bookkeeping: a flood of tiny replies
     * (clock probes) costs far more than its payload bytes. */
    w->len = sizeof(*w) + len;
    r = uv_write(&w->req, &c->h.stream, &b, 1, conn_on_write);
    if (r < 0) {
        free(w);
        return r;
    }
    c->queued += w->len;
    return 0;
}

/* Sends len bytes of buf after whatever is queued. With nothing queued they
 * go to the socket at once (uv_try_write): most writes (heartbeats, stats,
 * replies) fit the socket's buffer whole, and then cost neither a copy and
 * a write request nor libuv's re-arming of the descriptor (an epoll_ctl per
 * write: a manager writes 10,000 heartbeats a second). The rest, if any, is
 * copied and queued in order. Returns 0 or a uv error (the caller closes). */
int iof_net_conn_send(struct iof_conn *c, const void *buf, size_t len)
{
    struct conn_wreq *w;

    if (!c->queued) {
        uv_buf_t b = uv_buf_init((char *)(uintptr_t)buf, (unsigned)len);
        int r = uv_try_write(&c->h.stream, &b, 1);
        if (r >= 0) {
            buf = (const uint8_t *)buf + r;
            len -= (size_t)r;
            if (!len)
                return 0;
        } else if (r == UV_EPIPE || r == UV_ECONNRESET) {
            c->write_broken = true; /* as conn_on_write: read out what the peer said */
            return 0;
        } else if (r != UV_EAGAIN) {
            return r;
        }
    }
    w = malloc(sizeof(*w) + len);
    if (!w)
        return -ENOMEM;
    memcpy(w->data, buf, len);
    return conn_submit(c, w, len);
}

/* Sends whatever ciphertext the TLS session produced. Does not close. */
int iof_net_conn_tls_flush(struct iof_conn *c)
{
    uint8_t out[16384 + 1024]; /* a full TLS record and its overhead */
    size_t n;

    if (c->batched) /* its batched records go first */
        iof_net_batch_send();
    while (c->tls && iof_tls_sess_out_pending(c->tls) > 0) {
        int r;
        if (!(n = iof_tls_sess_out_take(c->tls, out, sizeof(out))))
            break;
        if ((r = iof_net_conn_send(c, out, n)) < 0)
            return r;
    }
    return 0;
}

/* Encrypts buf into c's TLS session (the records wait there); on failure
 * closes c, with the session's reason as iof_conn_error(). */
int iof_net_conn_tls_encrypt(struct iof_conn *c, const void *buf, size_t len)
{
    struct iof_diag d = {{0}};
    int r = iof_tls_sess_write(c->tls, buf, len, &d);

    if (r < 0) {
        if (d.msg[0])
            snprintf(c->err, sizeof(c->err), "%s", d.msg);
        iof_conn_close(c, r);
    }
    return r;
}

int iof_conn_write(struct iof_conn *c, const void *buf, size_t len)
{
    int r;

    if (c->closing)
        return -ENOTCONN;
    if (c->batched) /* its batched bytes go first */
        iof_net_batch_send();
    if (c->write_broken)
        return -EPIPE; /* closing as soon as the peer's last bytes are read */
    if (c->tls_ctx && !c->secure)
        return -ENOTCONN; /* nothing but the handshake before authentication */
    if (c->queued + sizeof(struct conn_wreq) + len > IOF_CONN_WQ_MAX) {
        iof_conn_close(c, -ENOBUFS);
        return -ENOBUFS;
    }
    if (c->tls) {
        if ((r = iof_net_conn_tls_encrypt(c, buf, len)) == 0 && (r = iof_net_conn_tls_flush(c)) < 0)
            iof_conn_close(c, r);
        return r;
    }
    r = iof_net_conn_send(c, buf, len);
    if (r < 0)
        iof_conn_close(c, r);
    return r;
}

/* ---- the TLS transport: socket bytes through the session's memory BIOs ---- */

static void conn_secure(struct iof_conn *c)
{
    struct iof_listener *l = c->listener;

    c->secure = true;
    uv_timer_stop(&c->hs_timer);
    if (c->outgoing) {
        if (c->cbs.on_connect)
            c->cbs.on_connect(c, 0, c->arg);
    } else if (l) {
        conn_unlink_pending(c);
        l->on_accept(l, c, l->arg);
    }
}

/* Advances the handshake, then hands out plaintext, with what was fed. */
static void conn_tls_pump(struct iof_conn *c)
{
    struct iof_diag d = {{0}};
    ssize_t n;
    int r, fr;

    if (!c->secure) {
        r = iof_tls_sess_handshake(c->tls, &d);
        fr = iof_net_conn_tls_flush(c);
        if (r < 0) {
            conn_fail(c, r, d.msg);
            return;
        }
        if (fr < 0) {
            snprintf(d.msg, sizeof(d.msg), "cannot send to %s: %s", c->peer, uv_strerror(fr));
            conn_fail(c, fr, d.msg);
            return;
        }
        if (r == 0)
            return;
        conn_secure(c);
    }
    while (!c->closing) {
        n = iof_tls_sess_read(c->tls, conn_rbuf, sizeof(conn_rbuf), &d);
        fr = iof_net_conn_tls_flush(c);
        if (n < 0) {
            conn_fail(c, (int)n, d.msg);
            return;
        }
        if (fr < 0) {
            iof_conn_close(c, fr);
            return;
        }
        if (n == 0)
            return;
        if (c->cbs.on_data)
            c->cbs.on_data(c, conn_rbuf, (size_t)n, c->arg);
        /* Nothing more fed in: no read to find that out (an SSL_read that
         * fails, per message; the on_data above may have closed c). */
        if (c->closing || !c->tls || !iof_tls_sess_has_input(c->tls))
            return;
    }
}

static void conn_tls_on_read(struct iof_conn *c, ssize_t n)
{
    struct iof_diag d = {{0}};
    int r;

    if (c->closing || n == 0 || !c->tls)
        return;
    if (n < 0) {
        if (c->secure) {
            iof_conn_close(c, n == UV_EOF ? -EPIPE : (int)n);
        } else {
            r = iof_tls_sess_eof(c->tls, n == UV_EOF ? 0 : (int)n, &d);
            conn_fail(c, r, d.msg);
        }
        return;
    }
    r = iof_tls_sess_feed(c->tls, conn_rbuf, (size_t)n, &d);
    if (r < 0) {
        conn_fail(c, r, d.msg);
        return;
    }
    conn_tls_pump(c);
}

static void conn_on_hs_timeout(uv_timer_t *t)
{
    struct iof_conn *c = t->data;
    char why[160];
    snprintf(why, sizeof(why), "TLS handshake with %s did not complete within %.1f s", c->peer,
             (double)iof_tls_ctx_handshake_ms(c->tls_ctx) / 1000);
    conn_fail(c, IOF_ETIMEOUT, why);
}

/* TCP is up: create the session and start the handshake clock. */
static int conn_tls_begin(struct iof_conn *c)
{
    c->tls = iof_tls_sess_new(c->tls_ctx, c->peer);
    if (!c->tls)
        return -ENOMEM;
    return uv_timer_start(&c->hs_timer, conn_on_hs_timeout, iof_tls_ctx_handshake_ms(c->tls_ctx),
                          0);
}

struct iof_conn *iof_net_conn_new(uv_loop_t *loop, const struct iof_conn_cbs *cbs, void *arg,
                                  struct iof_tls_ctx *tls, bool unix_sock)
{
    struct iof_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if ((unix_sock ? uv_pipe_init(loop, &c->h.pipe, 0) : uv_tcp_init(loop, &c->h.tcp)) < 0) {
        free(c);
        return NULL;
    }
    c->unix_sock = unix_sock;
    c->h.handle.data = c;
    c->open_handles = 1;
    if (tls) {
        uv_timer_init(loop, &c->hs_timer);
        c->hs_timer.data = c;
        c->open_handles++;
        c->tls_ctx = iof_tls_ctx_ref(tls);
    }
    c->loop = loop;
    if (cbs)
        c->cbs = *cbs;
    c->arg = arg;
    snprintf(c->peer, sizeof(c->peer), "?");
    return c;
}

static void conn_on_connect(uv_connect_t *req, int status)
{
    struct iof_conn *c = req->data;
    if (status == 0)
        status = iof_net_conn_start_reading(c);
    if (status < 0 && !c->closing)
        snprintf(c->err, sizeof(c->err), "cannot connect to %s: %s", c->peer, uv_strerror(status));
    if (c->tls_ctx && !c->closing) {
        if (status == 0)
            status = conn_tls_begin(c);
        if (status < 0)
            conn_fail(c, status, NULL);
        else
            conn_tls_pump(c); /* sends the ClientHello */
        return;
    }
    if (c->cbs.on_connect)
        c->cbs.on_connect(c, status, c->arg);
    if (status < 0)
        iof_conn_close(c, status);
}

static void conn_on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct iof_conn *c = req->data;
    int r = status;

    c->resolving = false;
    if (c->closing) {
        r = -ECANCELED; /* closed by the application meanwhile */
    } else if (r == 0) {
        struct sockaddr_storage ss;
        memcpy(&ss, res->ai_addr, res->ai_addrlen);
        format_sockaddr(&ss, c->peer, sizeof(c->peer));
        c->creq.data = c;
        r = uv_tcp_connect(&c->creq, &c->h.tcp, res->ai_addr, conn_on_connect);
    }
    uv_freeaddrinfo(res);
    if (r < 0) {
        if (r != -ECANCELED)
            snprintf(c->err, sizeof(c->err), "cannot connect to %s: %s", c->peer, uv_strerror(r));
        if (c->cbs.on_connect)
            c->cbs.on_connect(c, r, c->arg);
        iof_conn_close(c, r);
    }
    conn_release(c); /* the resolution's hold, taken in conn_connect() */
}

static int conn_connect(uv_loop_t *loop, const char *host, uint16_t port, struct iof_tls_ctx *tls,
                        const struct iof_conn_cbs *cbs, void *arg, struct iof_conn **out)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct iof_conn *c = iof_net_conn_new(loop, cbs, arg, tls, false);
    char ports[8];
    int r;

    if (!c)
        return -ENOMEM;
    c->outgoing = true;
    c->port = port;
    snprintf(c->peer, sizeof(c->peer), "%s:%u", host, port);
    snprintf(ports, sizeof(ports), "%u", port);
    c->gai.data = c;
    r = uv_getaddrinfo(loop, &c->gai, conn_on_resolved, host, ports, &hints);
    if (r < 0) {
        c->cbs.on_close = NULL;
        iof_conn_close(c, r);
        return r;
    }
    c->resolving = true;
    c->open_handles++;
    *out = c;
    return 0;
}

int iof_conn_connect(uv_loop_t *loop, const char *host, uint16_t port,
                     const struct iof_conn_cbs *cbs, void *arg, struct iof_conn **out)
{
    return conn_connect(loop, host, port, NULL, cbs, arg, out);
}

int iof_conn_connect_tls(uv_loop_t *loop, const char *host, uint16_t port, struct iof_tls_ctx *tls,
                         const struct iof_conn_cbs *cbs, void *arg, struct iof_conn **out)
{
    if (!tls || iof_tls_ctx_role(tls) != IOF_TLS_CLIENT)
        return -EINVAL;
    return conn_connect(loop, host, port, tls, cbs, arg, out);
}

const char *iof_conn_peer(const struct iof_conn *c)
{
    return c->peer;
}

const char *iof_conn_peer_addr(const struct iof_conn *c)
{
    return c->addr;
}

bool iof_conn_is_loopback(const struct iof_conn *c)
{
    return c->loopback;
}

void iof_conn_set_cbs(struct iof_conn *c, const struct iof_conn_cbs *cbs, void *arg)
{
    c->cbs = *cbs;
    c->arg = arg;
}

size_t iof_conn_queued(const struct iof_conn *c)
{
    return c->queued;
}

const char *iof_conn_error(const struct iof_conn *c)
{
    if (c->err[0])
        return c->err;
    if (c->closing && c->close_err)
        return iof_strerror(c->close_err);
    return "";
}

bool iof_conn_is_tls(const struct iof_conn *c)
{
    return c->tls_ctx != NULL;
}

bool iof_conn_tls_resumed(const struct iof_conn *c)
{
    return c->secure && c->tls && iof_tls_sess_resumed(c->tls);
}

bool iof_conn_peer_has_cert(const struct iof_conn *c)
{
    return c->secure && iof_tls_sess_peer_has_cert(c->tls);
}

const char *iof_conn_peer_name(const struct iof_conn *c)
{
    return c->secure ? iof_tls_sess_peer_name(c->tls) : NULL;
}

int iof_conn_check_peer_name(const struct iof_conn *c, const char *expected, struct iof_diag *diag)
{
    if (!c->tls_ctx)
        return iof_diag_set(diag, -EACCES, "%s is a plain connection: no certificate to check",
                            c->peer);
    if (!c->secure)
        return iof_diag_set(diag, -EACCES, "%s is not authenticated yet", c->peer);
    return iof_tls_sess_check_name(c->tls, expected, diag);
}

static struct iof_conn *listener_oldest(struct iof_listener *l, const char *addr, unsigned *n)
{
    struct iof_conn *old = NULL;
    *n = 0;
    for (struct iof_conn *p = l->pending; p; p = p->lnext) /* newest first */
        if (!addr || !strcmp(p->addr, addr)) {
            old = p;
            (*n)++;
        }
    return old;
}

/* Makes room for one more pending handshake from c's address: drops the
 * oldest of that address past max_per_source, else the oldest of all past
 * max_pending. An unauthenticated peer can thus hold at most max_pending
 * descriptors, and a flood from one address cannot crowd out the others;
 * a real manager's fresh connection is never the one dropped. */
static void listener_make_room(struct iof_listener *l, const struct iof_conn *c)
{
    struct iof_conn *old = NULL;
    unsigned n;

    if (l->max_per_source) {
        old = listener_oldest(l, c->addr, &n);
        if (n < l->max_per_source)
            old = NULL;
    }
    if (!old && l->max_pending && l->npending >= l->max_pending)
        old = listener_oldest(l, NULL, &n);
    if (!old)
        return;
    if (l->evicted++ % 1000 == 0) /* one line per 1000: a flood must not flood the log */
        IOF_WARN("%u unauthenticated connections pending (%u from %s): dropping the oldest, "
                 "from %s (%lu dropped so far)",
                 l->npending, n, old->addr, old->peer, l->evicted);
    snprintf(old->err, sizeof(old->err), "%s dropped: too many unauthenticated connections",
             old->peer);
    iof_conn_close(old, -ECONNABORTED); /* not announced: it never was a session */
}

void iof_net_listener_on_conn(uv_stream_t *server, int status)
{
    struct iof_listener *l = (struct iof_listener *)server;
    struct iof_conn *c;

    if (status < 0) {
        /* EMFILE/ENFILE: libuv closes the waiting connections and the
         * agents redial; say why, at most every 10 s. */
        uint64_t now = iof_now_ns();
        if (!l->accept_warned_ns || now - l->accept_warned_ns >= 10 * IOF_NS_PER_S) {
            l->accept_warned_ns = now;
            IOF_WARN("listener on port %u: cannot accept connections: %s; they are closed until "
                     "it can (open-file limit? docs/scaling.md)",
                     l->port, uv_strerror(status));
        }
        return;
    }
    c = iof_net_conn_new(server->loop, NULL, NULL, l->tls, l->unix_path != NULL);
    if (!c)
        return;
    if (uv_accept(server, &c->h.stream) < 0) {
        iof_conn_close(c, -ECONNABORTED);
        return;
    }
    if (l->tls && l->max_active) {
        /* Admission: the handshake starts when a slot is free; until then
         * the ClientHello waits in the socket, unread. */
        conn_note_addresses(c);
        listener_make_room(l, c);
        c->listener = l;
        c->lnext = l->pending;
        if (l->pending)
            l->pending->lprev = c;
        l->pending = c;
        l->npending++;
        c->hs_queued = true;
        c->queued_ns = iof_now_ns();
        c->qprev = l->qtail;
        if (l->qtail)
            l->qtail->qnext = c;
        else
            l->qhead = c;
        l->qtail = c;
        l->nqueued++;
        if (l->nqueued > l->peak_queued)
            l->peak_queued = l->nqueued;
        listener_admit(l);
        return;
    }
    if (iof_net_conn_start_reading(c) < 0) {
        iof_conn_close(c, -ECONNABORTED);
        return;
    }
    if (c->unix_sock)
        iof_net_os_accepted(l, c);
    if (l->tls) {
        /* Announced by conn_secure() once authenticated. */
        if (conn_tls_begin(c) < 0) {
            iof_conn_close(c, -ENOMEM);
            return;
        }
        listener_make_room(l, c);
        c->listener = l;
        c->lnext = l->pending;
        if (l->pending)
            l->pending->lprev = c;
        l->pending = c;
        l->npending++;
        return;
    }
    l->on_accept(l, c, l->arg);
}

/* Takes c out of the admission queue. */
static void listener_unqueue(struct iof_listener *l, struct iof_conn *c)
{
    if (c->qprev)
        c->qprev->qnext = c->qnext;
    else
        l->qhead = c->qnext;
    if (c->qnext)
        c->qnext->qprev = c->qprev;
    else
        l->qtail = c->qprev;
    c->qprev = c->qnext = NULL;
    c->hs_queued = false;
    l->nqueued--;
}

/* Starts waiting handshakes while fewer than max_active run, the NEWEST
 * first: under a storm, the peers that dialled last are the ones still
 * waiting, while those that waited twice as long as a handshake may take
 * have given up and are closed unread. The handshake clock starts here, not at accept. */
static void listener_admit(struct iof_listener *l)
{
    uint64_t now = iof_now_ns();
    /* Twice the handshake time: a dialler's own timeout is usually the same
     * default, but its clock may have started before ours. */
    uint64_t stale = 2ull * iof_tls_ctx_handshake_ms(l->tls) * IOF_NS_PER_MS;

    while (l->qhead && now - l->qhead->queued_ns > stale) {
        struct iof_conn *c = l->qhead;
        snprintf(c->err, sizeof(c->err),
                 "%s waited %.1f s for a TLS handshake slot (%u running): closed unread", c->peer,
                 (double)(now - c->queued_ns) / 1e9, l->nactive);
        listener_unqueue(l, c);
        iof_conn_close(c, -ETIMEDOUT); /* not announced: its peer has given up */
    }
    while (l->qtail && l->nactive < l->max_active) {
        struct iof_conn *c = l->qtail;
        listener_unqueue(l, c);
        c->hs_active = true;
        l->nactive++;
        if (iof_net_conn_start_reading(c) < 0 || conn_tls_begin(c) < 0)
            iof_conn_close(c, -ECONNABORTED); /* frees its slot: admits the next */
    }
}

void iof_net_listener_on_closed(uv_handle_t *h)
{
    struct iof_listener *l = (struct iof_listener *)h;
    iof_tls_ctx_free(l->tls);
    iof_net_os_listener_closed(l);
    free(l->unix_path);
    free(l);
}

static int listener_start(uv_loop_t *loop, const char *host, uint16_t port, struct iof_tls_ctx *tls,
                          iof_accept_fn on_accept, iof_reject_fn on_reject, void *arg,
                          struct iof_listener **out, struct iof_diag *diag)
{
    struct iof_listener *l = calloc(1, sizeof(*l));
    struct sockaddr_storage ss;
    int len = sizeof(ss), r;
    const char *h = host && *host ? host : "0.0.0.0";

    if (!l)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    if (uv_ip4_addr(h, port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(h, port, (struct sockaddr_in6 *)&ss) != 0) {
        free(l);
        return iof_diag_set(diag, -EINVAL, "listen address '%s' is not a numeric IP address", h);
    }
    l->on_accept = on_accept;
    l->on_reject = on_reject;
    l->arg = arg;
    r = uv_tcp_init(loop, &l->h.tcp);
    if (r < 0) {
        free(l);
        return iof_diag_set(diag, r, "cannot create a socket: %s", uv_strerror(r));
    }
    r = uv_tcp_bind(&l->h.tcp, (struct sockaddr *)&ss, 0);
    if (r == 0)
        r = uv_listen(&l->h.stream, 1024, iof_net_listener_on_conn);
    if (r < 0) {
        iof_diag_set(diag, r, "cannot listen on %s:%u: %s", h, port, uv_strerror(r));
        uv_close(&l->h.handle, iof_net_listener_on_closed);
        return r;
    }
    if (tls)
        l->tls = iof_tls_ctx_ref(tls);
    uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&ss, &len);
    l->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                            : ((struct sockaddr_in6 *)&ss)->sin6_port);
    *out = l;
    return 0;
}

int iof_listener_start(uv_loop_t *loop, const char *host, uint16_t port, iof_accept_fn on_accept,
                       void *arg, struct iof_listener **out, struct iof_diag *diag)
{
    return listener_start(loop, host, port, NULL, on_accept, NULL, arg, out, diag);
}

int iof_listener_start_tls(uv_loop_t *loop, const char *host, uint16_t port,
                           struct iof_tls_ctx *tls, iof_accept_fn on_accept,
                           iof_reject_fn on_reject, void *arg, struct iof_listener **out,
                           struct iof_diag *diag)
{
    if (!tls || iof_tls_ctx_role(tls) != IOF_TLS_SERVER)
        return iof_diag_set(diag, -EINVAL, "a TLS listener needs a server TLS context");
    return listener_start(loop, host, port, tls, on_accept, on_reject, arg, out, diag);
}

uint16_t iof_listener_port(const struct iof_listener *l)
{
    return l->port;
}

void iof_listener_set_limits(struct iof_listener *l, unsigned max_pending, unsigned max_per_source)
{
    l->max_pending = max_pending;
    l->max_per_source = max_per_source;
}

void iof_listener_set_admission(struct iof_listener *l, unsigned max_active)
{
    l->max_active = max_active;
}

unsigned iof_listener_peak_queued(const struct iof_listener *l)
{
    return l ? l->peak_queued : 0;
}

void iof_listener_close(struct iof_listener *l)
{
    if (!l)
        return;
    l->max_active = 0; /* closing: no more admissions */
    while (l->pending) /* unlinks itself */
        iof_conn_close(l->pending, -ECANCELED);
    iof_net_os_listener_unlink(l);
    uv_close(&l->h.handle, iof_net_listener_on_closed);
}

/* ---- unix-domain connections ---- */

bool iof_addr_is_unix(const char *s, const char **path)
{
    if (!s || strncmp(s, "unix:", 5))
        return false;
    if (path)
        *path = s + 5;
    return true;
}

bool iof_conn_is_unix(const struct iof_conn *c)
{
    return c->unix_sock;
}

/* --- wake-up coalescing ------------------------------------------------------------------ */

/* iof_net_coalesce_pause: this thread's loop polls at once for now. */
static _Thread_local bool net_coalesce_paused;

void iof_net_coalesce_pause(bool paused)
{
    net_coalesce_paused = paused;
}

static void coalesce_prepare(uv_prepare_t *h)
{
    struct iof_net_coalesce *co = h->data;

    if (net_reads == co->seen)
        return;
    co->seen = net_reads;
    if (net_coalesce_paused)
        return;
    uv_sleep(co->ms);
}

void iof_net_coalesce_start(uv_loop_t *loop, struct iof_net_coalesce *co, unsigned ms)
{
    co->ms = ms;
    co->seen = net_reads;
    co->on = co->ms > 0;
    if (!co->on)
        return;
    uv_prepare_init(loop, &co->prep);
    co->prep.data = co;
    uv_prepare_start(&co->prep, coalesce_prepare);
    uv_unref((uv_handle_t *)&co->prep);
}

void iof_net_coalesce_stop(struct iof_net_coalesce *co)
{
    if (!co->on)
        return;
    co->on = false;
    uv_close((uv_handle_t *)&co->prep, NULL);
}

void iof_net_run_coalesced(uv_loop_t *loop, unsigned ms)
{
    struct iof_net_coalesce co;

    iof_net_coalesce_start(loop, &co, ms);
    uv_run(loop, UV_RUN_DEFAULT);
    iof_net_coalesce_stop(&co);
    uv_run(loop, UV_RUN_NOWAIT); /* the handle's close */
}
