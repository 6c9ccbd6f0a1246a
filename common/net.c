/* SPDX-License-Identifier: Apache-2.0 */
/* common/net.c - byte-stream connections and listeners on the libuv loop:
 * address parsing, TCP and unix-domain sockets, TLS sessions pumped through
 * the same interface, caps on unauthenticated connections. */
#include "common/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

#define CONN_RBUF 65536
/* One read buffer per loop thread, shared by every connection: libuv reads
 * one stream at a time and every reader consumes (copies or decodes) the
 * bytes before returning, so a connection costs no 64 KiB of its own - which
 * matters for an agent flooded with connections or a manager with
 * thousands of agents. */
static _Thread_local uint8_t conn_rbuf[CONN_RBUF];

/* A connection's or listener's libuv handle: TCP, or a unix-domain socket
 * (uv_pipe_t). First in both structs: callbacks cast the handle back. */
union conn_handle {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
};

struct iof_conn {
    union conn_handle h; /* first: callbacks cast the stream to the connection */
    uv_loop_t *loop;
    uv_getaddrinfo_t gai;
    uv_connect_t creq;
    struct iof_conn_cbs cbs;
    void *arg;
    char peer[80];
    uint16_t port;
    bool closing;
    bool loopback;
    bool outgoing;
    bool unix_sock;    /* a unix-domain socket (h.pipe), else TCP (h.tcp) */
    bool write_broken; /* a write failed with EPIPE/ECONNRESET: reading out the rest */
    bool have_cred;    /* cred holds the peer's SO_PEERCRED */
    struct ucred cred;
    char addr[INET6_ADDRSTRLEN]; /* the peer's address without the port ("" for unix) */
    int close_err;
    size_t queued;
    /* What must end before c is freed: tcp, the handshake timer (TLS), the
     * address resolution (outgoing, while in flight). */
    unsigned open_handles;
    bool resolving;
    /* TLS transport (NULL for plain TCP). tls_ctx is referenced from the
     * start; the session exists once TCP is connected. */
    struct iof_tls_ctx *tls_ctx;
    struct iof_tls_sess *tls;
    uv_timer_t hs_timer;
    bool secure;                    /* TLS: authenticated and announced */
    struct iof_listener *listener;  /* TLS incoming, until announced */
    struct iof_conn *lprev, *lnext; /* in listener->pending meanwhile */
    bool hs_active;                 /* counted in listener->nactive */
    bool hs_queued;                 /* in the listener's admission queue */
    struct iof_conn *qprev, *qnext; /* there, oldest first */
    uint64_t queued_ns;             /* when it was queued (iof_now_ns) */
    char err[sizeof(((struct iof_diag *)0)->msg)];
    bool batched; /* has a write in this thread's open batch (iof_conn_write_batched) */
    /* Socket bytes; for TLS reused for plaintext once fed to the session. */
};

struct conn_wreq {
    uv_write_t req;
    struct iof_conn *conn;
    size_t len;
    uint8_t data[];
};

struct iof_listener {
    union conn_handle h;
    iof_accept_fn on_accept;
    iof_reject_fn on_reject;
    void *arg;
    uint16_t port;
    struct iof_tls_ctx *tls;  /* referenced; NULL for plain */
    struct iof_conn *pending; /* TLS connections still handshaking, newest first */
    unsigned npending;
    unsigned max_pending, max_per_source; /* 0: unlimited */
    unsigned long evicted;                /* pending connections dropped for newer ones */
    /* Admission (iof_listener_set_admission): handshakes running at once,
     * and the accepted connections waiting for one, oldest first. */
    unsigned max_active, nactive, nqueued, peak_queued;
    struct iof_conn *qhead, *qtail;
    char *unix_path;       /* a unix socket's path, unlinked at close */
    const char *unix_base; /* its name in its directory (within unix_path) */
    int unix_dirfd;        /* its directory, checked at start */
    dev_t unix_dev;        /* the socket file we bound, to unlink only it */
    ino_t unix_ino;
};

/* Removes the listener's socket file, by its name in the directory opened at
 * start, and only the socket it bound: not one another agent bound there
 * since, nor whatever replaced it. */
static void listener_unix_unlink(struct iof_listener *l)
{
    struct stat st;

    if (l->unix_path && fstatat(l->unix_dirfd, l->unix_base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISSOCK(st.st_mode) && st.st_dev == l->unix_dev && st.st_ino == l->unix_ino)
        unlinkat(l->unix_dirfd, l->unix_base, 0);
}

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

static int conn_tls_flush(struct iof_conn *c);

void iof_conn_close(struct iof_conn *c, int err)
{
    if (!c || c->closing)
        return;
    if (c->secure) {
        /* An orderly end of the TLS session; like any queued write it goes
         * out if the socket takes it now (uv_write tries at once). */
        iof_tls_sess_shutdown(c->tls);
        conn_tls_flush(c);
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
        conn_tls_flush(c);
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

static void conn_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct iof_conn *c = (struct iof_conn *)s;
    (void)buf;
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

static int conn_start_reading(struct iof_conn *c)
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
static int conn_send(struct iof_conn *c, const void *buf, size_t len)
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

static void conn_batch_send(void);

/* Sends whatever ciphertext the TLS session produced. Does not close. */
static int conn_tls_flush(struct iof_conn *c)
{
    uint8_t out[16384 + 1024]; /* a full TLS record and its overhead */
    size_t n;

    if (c->batched) /* its batched records go first */
        conn_batch_send();
    while (c->tls && iof_tls_sess_out_pending(c->tls) > 0) {
        int r;
        if (!(n = iof_tls_sess_out_take(c->tls, out, sizeof(out))))
            break;
        if ((r = conn_send(c, out, n)) < 0)
            return r;
    }
    return 0;
}

/* Encrypts buf into c's TLS session (the records wait there); on failure
 * closes c, with the session's reason as iof_conn_error(). */
static int conn_tls_encrypt(struct iof_conn *c, const void *buf, size_t len)
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
        conn_batch_send();
    if (c->write_broken)
        return -EPIPE; /* closing as soon as the peer's last bytes are read */
    if (c->tls_ctx && !c->secure)
        return -ENOTCONN; /* nothing but the handshake before authentication */
    if (c->queued + sizeof(struct conn_wreq) + len > IOF_CONN_WQ_MAX) {
        iof_conn_close(c, -ENOBUFS);
        return -ENOBUFS;
    }
    if (c->tls) {
        if ((r = conn_tls_encrypt(c, buf, len)) == 0 && (r = conn_tls_flush(c)) < 0)
            iof_conn_close(c, r);
        return r;
    }
    r = conn_send(c, buf, len);
    if (r < 0)
        iof_conn_close(c, r);
    return r;
}

/* ---- batched small writes through io_uring ---- */

#define CONN_BATCH_MAX 256

struct conn_batch {
    struct io_uring ring;
    int state;      /* 1 usable, 0 not tried, -1 plain writes */
    unsigned depth; /* nested iof_conn_batch_begin() */
    unsigned n;
    struct {
        struct iof_conn *c;
        uint8_t len;
        int res;
        uint8_t data[IOF_CONN_BATCH_MSG_MAX + 64]; /* a TLS record: ciphertext, header, tag */
    } e[CONN_BATCH_MAX];
};

static _Thread_local struct conn_batch *conn_batch;

/* The batch relies on the kernel failing a non-blocking send to a full
 * socket at once (-EAGAIN in the CQE when io_uring_enter returns), not
 * arming a retry that would complete later, after bytes written since:
 * tried once per thread on a socket pair with its buffer filled. */
static bool conn_batch_probe(struct conn_batch *b)
{
    static const char msg[] = "probe";
    struct io_uring_cqe *cqe;
    char fill[4096];
    int sv[2], r, got[2] = {1, 1};
    unsigned head, seen = 0;
    bool ok = false;

    memset(fill, 0, sizeof(fill));
    if (io_uring_queue_init(CONN_BATCH_MAX, &b->ring, 0) < 0)
        return false;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
        io_uring_queue_exit(&b->ring);
        return false;
    }
    for (int i = 0; i < 4096 && send(sv[0], fill, sizeof(fill), MSG_DONTWAIT) > 0; i++)
        ;
    for (int i = 0; i < 2; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);
        /* 0: to the full end; 1: the other way, which has room */
        io_uring_prep_send(sqe, sv[i], msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL);
        sqe->user_data = (uint64_t)i;
    }
    r = io_uring_submit(&b->ring);
    io_uring_for_each_cqe(&b->ring, head, cqe)
    {
        if (cqe->user_data < 2)
            got[cqe->user_data] = cqe->res;
        seen++;
    }
    io_uring_cq_advance(&b->ring, seen);
    ok = r == 2 && seen == 2 && got[0] == -EAGAIN && got[1] == (int)sizeof(msg);
    close(sv[0]);
    close(sv[1]);
    if (!ok)
        io_uring_queue_exit(&b->ring); /* waits for a send still armed */
    return ok;
}

/* An entry's bytes (a TLS connection's are its ciphertext) as an ordinary
 * write: to the socket now, or queued. */
static void conn_batch_plain(struct conn_batch *b, unsigned i)
{
    struct iof_conn *c = b->e[i].c;
    int r;
    if (!c->closing && !c->write_broken && (r = conn_send(c, b->e[i].data, b->e[i].len)) < 0)
        iof_conn_close(c, r);
}

/* Sends what the batch holds: each entry's send in one io_uring_enter, then
 * what a socket refused or took in part through the ordinary path. */
static void conn_batch_flush(struct conn_batch *b)
{
    struct io_uring_cqe *cqe;
    unsigned n = b->n, prepped = 0, head, seen = 0;
    int r;

    b->n = 0;
    for (unsigned i = 0; i < n; i++)
        b->e[i].c->batched = false;
    if (b->state == 0 && n >= 2)
        b->state = conn_batch_probe(b) ? 1 : -1;
    if (b->state < 0 || n < 2) {
        for (unsigned i = 0; i < n; i++)
            conn_batch_plain(b, i);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        struct iof_conn *c = b->e[i].c;
        uv_os_fd_t fd;
        b->e[i].res = INT32_MIN; /* not sent here */
        /* Closed since, or queued behind something written since. */
        if (c->closing || c->queued || c->write_broken ||
            uv_fileno((const uv_handle_t *)&c->h.stream, &fd))
            continue;
        struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);
        io_uring_prep_send(sqe, fd, b->e[i].data, b->e[i].len, MSG_DONTWAIT | MSG_NOSIGNAL);
        sqe->user_data = i;
        prepped++;
    }
    r = prepped ? io_uring_submit(&b->ring) : 0;
    if (r < 0 || (unsigned)r != prepped) {
        /* Not expected after the probe: no more batches in this thread. */
        IOF_WARN("batched writes: io_uring_submit: %s; writing one by one from now on",
                 r < 0 ? strerror(-r) : "not every send was taken");
        io_uring_queue_exit(&b->ring);
        b->state = -1;
        for (unsigned i = 0; i < n; i++)
            conn_batch_plain(b, i);
        return;
    }
    io_uring_for_each_cqe(&b->ring, head, cqe)
    {
        if (cqe->user_data < n)
            b->e[cqe->user_data].res = cqe->res;
        seen++;
    }
    io_uring_cq_advance(&b->ring, seen);
    if (seen != prepped) {
        IOF_WARN("batched writes: %u of %u sends not complete at once; writing one by one from "
                 "now on",
                 prepped - seen, prepped);
        io_uring_queue_exit(&b->ring);
        b->state = -1;
    }
    for (unsigned i = 0; i < n; i++) {
        struct iof_conn *c = b->e[i].c;
        int res = b->e[i].res;
        if (res == (int)b->e[i].len)
            continue;
        if (res == INT32_MIN) {
            conn_batch_plain(b, i);
        } else if (res >= 0 || res == -EAGAIN) {
            size_t done = res > 0 ? (size_t)res : 0;
            if (!c->closing && (r = conn_send(c, b->e[i].data + done, b->e[i].len - done)) < 0)
                iof_conn_close(c, r);
        } else if (res == -EPIPE || res == -ECONNRESET) {
            c->write_broken = true; /* as conn_send: read out what the peer said */
        } else if (!c->closing) {
            iof_conn_close(c, res);
        }
    }
}

/* Sends this thread's batch now (a connection in it is written otherwise). */
static void conn_batch_send(void)
{
    if (conn_batch)
        conn_batch_flush(conn_batch);
}

void iof_conn_batch_begin(void)
{
    if (!conn_batch) {
        conn_batch = calloc(1, sizeof(*conn_batch));
        if (!conn_batch)
            return;
    }
    conn_batch->depth++;
}

void iof_conn_batch_end(void)
{
    struct conn_batch *b = conn_batch;
    if (!b || !b->depth)
        return;
    if (--b->depth == 0)
        conn_batch_flush(b);
}

int iof_conn_batch_state(void)
{
    return conn_batch ? conn_batch->state : 0;
}

int iof_conn_write_batched(struct iof_conn *c, const void *buf, size_t len)
{
    struct conn_batch *b = conn_batch;

    if (!b || !b->depth || b->state < 0 || len > IOF_CONN_BATCH_MSG_MAX || c->closing ||
        c->write_broken || c->queued || (c->tls_ctx && (!c->secure || !c->tls)))
        return iof_conn_write(c, buf, len);
    if (c->batched || b->n == CONN_BATCH_MAX)
        conn_batch_flush(b);
    if (c->tls) {
        /* Encrypted now, in the session's order; the record is what waits. */
        int r = conn_tls_encrypt(c, buf, len);
        if (r < 0)
            return r;
        if (iof_tls_sess_out_pending(c->tls) > sizeof(b->e[0].data)) {
            /* more than one small record: not batched */
            if ((r = conn_tls_flush(c)) < 0)
                iof_conn_close(c, r);
            return r;
        }
        if (!iof_tls_sess_out_pending(c->tls))
            return 0;
        b->e[b->n].len =
            (uint8_t)iof_tls_sess_out_take(c->tls, b->e[b->n].data, sizeof(b->e[0].data));
    } else {
        b->e[b->n].len = (uint8_t)len;
        memcpy(b->e[b->n].data, buf, len);
    }
    b->e[b->n].c = c;
    b->n++;
    c->batched = true;
    return 0;
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
        fr = conn_tls_flush(c);
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
        fr = conn_tls_flush(c);
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

static struct iof_conn *conn_new(uv_loop_t *loop, const struct iof_conn_cbs *cbs, void *arg,
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
        status = conn_start_reading(c);
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
    struct iof_conn *c = conn_new(loop, cbs, arg, tls, false);
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

/* Reads the peer's credentials of a unix-domain connection (taken by the
 * kernel when the peer called connect() or socketpair(), or listen() for
 * the server's: it cannot lie about them). */
static void conn_note_cred(struct iof_conn *c)
{
    uv_os_fd_t fd;
    socklen_t len = sizeof(c->cred);

    if (uv_fileno(&c->h.handle, &fd) == 0 &&
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) == 0 && len == sizeof(c->cred))
        c->have_cred = true;
}

/* The oldest pending handshake, of source addr when addr is not NULL, and
 * how many there are of it. */
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

static void listener_on_conn(uv_stream_t *server, int status)
{
    struct iof_listener *l = (struct iof_listener *)server;
    struct iof_conn *c;

    if (status < 0)
        return;
    c = conn_new(server->loop, NULL, NULL, l->tls, l->unix_path != NULL);
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
    if (conn_start_reading(c) < 0) {
        iof_conn_close(c, -ECONNABORTED);
        return;
    }
    if (c->unix_sock) {
        conn_note_cred(c);
        if (c->have_cred)
            snprintf(c->peer, sizeof(c->peer), "pid %ld uid %lu on unix:%s", (long)c->cred.pid,
                     (unsigned long)c->cred.uid, l->unix_path);
        else
            snprintf(c->peer, sizeof(c->peer), "unix:%s", l->unix_path);
    }
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
        if (conn_start_reading(c) < 0 || conn_tls_begin(c) < 0)
            iof_conn_close(c, -ECONNABORTED); /* frees its slot: admits the next */
    }
}

static void listener_on_closed(uv_handle_t *h)
{
    struct iof_listener *l = (struct iof_listener *)h;
    iof_tls_ctx_free(l->tls);
    if (l->unix_path)
        close(l->unix_dirfd);
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
        r = uv_listen(&l->h.stream, 1024, listener_on_conn);
    if (r < 0) {
        iof_diag_set(diag, r, "cannot listen on %s:%u: %s", h, port, uv_strerror(r));
        uv_close(&l->h.handle, listener_on_closed);
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

/* The directory that holds a unix socket, split from its path (absolute):
 * dir gets the directory ("/" for a socket at the root), *base the socket's
 * name within it. */
static int unix_path_split(const char *path, char *dir, size_t cap, const char **base,
                           struct iof_diag *diag)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash == path ? 1 : (size_t)(slash - path);

    *base = slash + 1;
    if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
        return iof_diag_set(diag, -EINVAL, "unix socket path '%s' names no socket file", path);
    if (n >= cap)
        return iof_diag_set(diag, -ENAMETOOLONG, "unix socket path '%s' is too long", path);
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 0;
}

/* Creates dir (its parent must exist), mode 0755 and owned by root, as
 * systemd's RuntimeDirectory= would: for an agent run as root outside
 * systemd, whose /run/iofleet went with the last reboot. The mode is set on
 * the descriptor, not by name. */
static int unix_dir_create(const char *dir, struct iof_diag *diag)
{
    char parent[PATH_MAX];
    const char *leaf;
    int pfd, fd = -1, r = 0;

    if (unix_path_split(dir, parent, sizeof(parent), &leaf, diag) < 0)
        return -ENOENT;
    pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0 && errno == ENOENT)
        return iof_diag_set(diag, -ENOENT,
                            "the socket's directory %s does not exist, nor its parent %s", dir,
                            parent);
    if (pfd < 0)
        return iof_diag_set(diag, -errno, "cannot create the socket's directory %s: %s: %s", dir,
                            parent, strerror(errno));
    if (mkdirat(pfd, leaf, 0755) < 0) {
        /* One made meanwhile is judged like any other by the caller. */
        if (errno != EEXIST)
            r = iof_diag_set(diag, -errno, "cannot create the socket's directory %s: %s", dir,
                             strerror(errno));
    } else if ((fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
               fchown(fd, 0, 0) < 0 || fchmod(fd, 0755) < 0) {
        r = iof_diag_set(diag, -errno, "%s: %s", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
    } else {
        IOF_INFO("created %s (mode 0755, owner root) for the unix socket", dir);
        close(fd);
    }
    close(pfd);
    return r;
}

/* Opens the directory of a unix socket (its last component not followed:
 * a symbolic link there is refused) and checks that nobody but root and
 * this process's user can write in it: whoever can could put a symlink or
 * their own socket in the socket's place. A missing directory is created
 * when we are root (unix_dir_create), else reported missing. */
static int unix_dir_open(const char *dir, int *out, struct iof_diag *diag)
{
    struct stat st;
    uid_t me = geteuid();
    int fd, r;

    fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if (me != 0)
            return iof_diag_set(diag, -ENOENT,
                                "the socket's directory %s does not exist: create it (writable "
                                "only by root or uid %lu), or run dynamo as root, which creates it",
                                dir, (unsigned long)me);
        if ((r = unix_dir_create(dir, diag)) < 0)
            return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        r = -errno;
        if ((r == -ELOOP || r == -ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
            return iof_diag_set(diag, -ELOOP,
                                "the socket's directory %s is a symbolic link: name the directory "
                                "it points to",
                                dir);
        return iof_diag_set(diag, r, "the socket's directory %s: %s", dir, strerror(-r));
    }
    if (fstat(fd, &st) < 0) {
        r = -errno;
        close(fd);
        return iof_diag_set(diag, r, "%s: %s", dir, strerror(-r));
    }
    if ((st.st_uid != 0 && st.st_uid != me) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        char who[48] = "root";
        if (me != 0)
            snprintf(who, sizeof(who), "root and uid %lu (this process)", (unsigned long)me);
        close(fd);
        return iof_diag_set(diag, -EPERM,
                            "the socket's directory %s (mode %04o, owner uid %lu) can be written "
                            "by others than %s, who could replace the socket: use a directory "
                            "owned by %s and not writable by group or others (chmod go-w), such "
                            "as /run/iofleet",
                            dir, (unsigned)(st.st_mode & 07777), (unsigned long)st.st_uid, who,
                            me ? "root or this user" : "root");
    }
    *out = fd;
    return 0;
}

/* What is at base in dirfd before we bind there: nothing (0), a stale
 * socket nobody listens on (removed, 0), or a reason to refuse. Never
 * removes anything but a socket, and only from dirfd. */
static int unix_path_clear(int dirfd, const char *base, const char *path, struct iof_diag *diag)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    struct stat st, again;
    int fd, r;

    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    if (!S_ISSOCK(st.st_mode))
        return iof_diag_set(diag, -EEXIST, "%s exists and is not a socket: not replacing it", path);
    /* A socket file: is anybody listening on it? */
    memcpy(sun.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return iof_diag_set(diag, -errno, "socket: %s", strerror(errno));
    r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
    r = r < 0 ? -errno : 0;
    close(fd);
    if (r == 0)
        return iof_diag_set(diag, -EADDRINUSE, "%s: another process is listening on it", path);
    if (r != -ECONNREFUSED)
        return iof_diag_set(diag, r, "%s: %s", path, strerror(-r));
    /* Still the socket we probed (the directory is root's or ours). */
    if (fstatat(dirfd, base, &again, AT_SYMLINK_NOFOLLOW) < 0 || again.st_dev != st.st_dev ||
        again.st_ino != st.st_ino || !S_ISSOCK(again.st_mode))
        return iof_diag_set(diag, -EAGAIN, "%s changed while it was checked: not removing it",
                            path);
    if (unlinkat(dirfd, base, 0) < 0 && errno != ENOENT)
        return iof_diag_set(diag, -errno, "cannot remove the stale socket %s: %s", path,
                            strerror(errno));
    IOF_INFO("removed the stale socket %s (nobody listened on it)", path);
    return 0;
}

/* Binds a new unix stream socket to path, mode 0600 from bind() itself: no
 * chmod() by name afterwards, which a symlink swapped in meanwhile would
 * redirect to another file. The umask is process-wide: the caller runs
 * before it starts any thread (see iof_listener_start_unix). */
static int unix_bind(const char *path, int *out, struct iof_diag *diag)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    mode_t old_mask;
    int fd, r;

    memcpy(sun.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return iof_diag_set(diag, -errno, "socket: %s", strerror(errno));
    old_mask = umask(0177);
    r = bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ? -errno : 0;
    umask(old_mask);
    if (r < 0) {
        close(fd);
        return iof_diag_set(diag, r, "cannot bind unix:%s: %s", path, strerror(-r));
    }
    *out = fd;
    return 0;
}

int iof_listener_start_unix(uv_loop_t *loop, const char *path, iof_accept_fn on_accept, void *arg,
                            struct iof_listener **out, struct iof_diag *diag)
{
    struct iof_listener *l;
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    const char *base;
    struct stat st;
    int dirfd = -1, fd = -1, r;

    if (!path || path[0] != '/')
        return iof_diag_set(diag, -EINVAL, "unix socket path '%s' must be absolute",
                            path ? path : "");
    if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return iof_diag_set(diag, -ENAMETOOLONG, "unix socket path '%s' is longer than %zu bytes",
                            path, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
    if ((r = unix_path_split(path, dir, sizeof(dir), &base, diag)) < 0 ||
        (r = unix_dir_open(dir, &dirfd, diag)) < 0)
        return r;
    if ((r = unix_path_clear(dirfd, base, path, diag)) < 0 ||
        (r = unix_bind(path, &fd, diag)) < 0) {
        close(dirfd);
        return r;
    }
    /* What we bound, to remove only it at close. */
    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode)) {
        close(fd);
        close(dirfd);
        return iof_diag_set(diag, -EAGAIN, "unix:%s: the socket vanished after bind", path);
    }
    l = calloc(1, sizeof(*l));
    if (!l || !(l->unix_path = strdup(path))) {
        free(l);
        unlinkat(dirfd, base, 0);
        close(fd);
        close(dirfd);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    l->on_accept = on_accept;
    l->arg = arg;
    l->unix_dirfd = dirfd;
    l->unix_base = l->unix_path + (base - path);
    l->unix_dev = st.st_dev;
    l->unix_ino = st.st_ino;
    /* Opened, not bound, by libuv: it then never unlinks the path by name. */
    r = uv_pipe_init(loop, &l->h.pipe, 0);
    if (r < 0) {
        unlinkat(dirfd, base, 0);
        close(fd);
        close(dirfd);
        free(l->unix_path);
        free(l);
        return iof_diag_set(diag, r, "cannot create a socket: %s", uv_strerror(r));
    }
    r = uv_pipe_open(&l->h.pipe, fd);
    if (r < 0)
        close(fd);
    else
        r = uv_listen(&l->h.stream, 1024, listener_on_conn);
    if (r < 0) {
        iof_diag_set(diag, r, "cannot listen on unix:%s: %s", path, uv_strerror(r));
        listener_unix_unlink(l);
        uv_close(&l->h.handle, listener_on_closed);
        return r;
    }
    *out = l;
    return 0;
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
    listener_unix_unlink(l);
    uv_close(&l->h.handle, listener_on_closed);
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

static void conn_on_pipe_connect(uv_connect_t *req, int status)
{
    struct iof_conn *c = req->data;
    if (status == 0)
        status = conn_start_reading(c);
    if (status == 0)
        conn_note_cred(c);
    if (status < 0 && !c->closing)
        snprintf(c->err, sizeof(c->err), "cannot connect to %s: %s", c->peer, uv_strerror(status));
    if (c->cbs.on_connect)
        c->cbs.on_connect(c, status, c->arg);
    if (status < 0)
        iof_conn_close(c, status);
}

int iof_conn_connect_unix(uv_loop_t *loop, const char *path, const struct iof_conn_cbs *cbs,
                          void *arg, struct iof_conn **out)
{
    struct iof_conn *c;

    if (!path || !path[0] || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return -ENAMETOOLONG;
    c = conn_new(loop, cbs, arg, NULL, true);
    if (!c)
        return -ENOMEM;
    c->outgoing = true;
    snprintf(c->peer, sizeof(c->peer), "unix:%s", path);
    c->creq.data = c;
    uv_pipe_connect(&c->creq, &c->h.pipe, path, conn_on_pipe_connect);
    *out = c;
    return 0;
}

int iof_conn_open_fd(uv_loop_t *loop, int fd, const char *name, const struct iof_conn_cbs *cbs,
                     void *arg, struct iof_conn **out)
{
    struct iof_conn *c;
    int type = 0, domain = 0, r;
    socklen_t len = sizeof(type), dlen = sizeof(domain);

    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) < 0)
        return -errno;
    if (type != SOCK_STREAM || domain != AF_UNIX)
        return -ENOTSOCK;
    c = conn_new(loop, cbs, arg, NULL, true);
    if (!c)
        return -ENOMEM;
    r = uv_pipe_open(&c->h.pipe, fd);
    if (r == 0)
        r = conn_start_reading(c);
    if (r < 0) {
        c->cbs.on_close = NULL;
        iof_conn_close(c, r);
        return r;
    }
    conn_note_cred(c);
    if (c->have_cred)
        snprintf(c->peer, sizeof(c->peer), "%s (pid %ld uid %lu)", name ? name : "socketpair",
                 (long)c->cred.pid, (unsigned long)c->cred.uid);
    else
        snprintf(c->peer, sizeof(c->peer), "%s", name ? name : "socketpair");
    *out = c;
    return 0;
}

bool iof_conn_is_unix(const struct iof_conn *c)
{
    return c->unix_sock;
}

int iof_conn_peer_cred(const struct iof_conn *c, uid_t *uid, pid_t *pid)
{
    if (!c->have_cred)
        return -ENOTSUP;
    if (uid)
        *uid = c->cred.uid;
    if (pid)
        *pid = c->cred.pid;
    return 0;
}

int iof_conn_check_local_peer(const struct iof_conn *c, struct iof_diag *diag)
{
    uid_t me = geteuid();

    if (!c->unix_sock)
        return iof_diag_set(diag, -EACCES, "%s is a network connection: its user cannot be known",
                            c->peer);
    if (!c->have_cred)
        return iof_diag_set(diag, -EACCES, "%s: the peer's credentials cannot be read", c->peer);
    if (c->cred.uid == 0 || c->cred.uid == me)
        return 0;
    return iof_diag_set(diag, -EACCES,
                        "%s: uid %lu is neither root nor this process's user (uid %lu)", c->peer,
                        (unsigned long)c->cred.uid, (unsigned long)me);
}
