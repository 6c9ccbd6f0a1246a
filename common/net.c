#include "common/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONN_RBUF 65536

struct iof_conn {
    uv_tcp_t tcp; /* first: handle->data is not used, the cast is */
    uv_loop_t *loop;
    uv_getaddrinfo_t gai;
    uv_connect_t creq;
    struct iof_conn_cbs cbs;
    void *arg;
    char peer[80];
    uint16_t port;
    bool closing;
    bool loopback;
    int close_err;
    size_t queued;
    uint8_t rbuf[CONN_RBUF];
};

struct conn_wreq {
    uv_write_t req;
    struct iof_conn *conn;
    size_t len;
    uint8_t data[];
};

struct iof_listener {
    uv_tcp_t tcp;
    iof_accept_fn on_accept;
    void *arg;
    uint16_t port;
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

/* Records the peer's name and whether both ends are loopback. */
static void conn_note_addresses(struct iof_conn *c)
{
    struct sockaddr_storage peer, self;
    int plen = sizeof(peer), slen = sizeof(self);

    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&peer, &plen) == 0 &&
        uv_tcp_getsockname(&c->tcp, (struct sockaddr *)&self, &slen) == 0) {
        format_sockaddr(&peer, c->peer, sizeof(c->peer));
        c->loopback = sockaddr_is_loopback(&peer) && sockaddr_is_loopback(&self);
    }
}

static void conn_on_uv_close(uv_handle_t *h)
{
    struct iof_conn *c = (struct iof_conn *)h;
    if (c->cbs.on_close)
        c->cbs.on_close(c, c->close_err, c->arg);
    free(c);
}

void iof_conn_close(struct iof_conn *c, int err)
{
    if (!c || c->closing)
        return;
    c->closing = true;
    c->close_err = err;
    uv_read_stop((uv_stream_t *)&c->tcp);
    uv_close((uv_handle_t *)&c->tcp, conn_on_uv_close);
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct iof_conn *c = (struct iof_conn *)h;
    (void)suggested;
    buf->base = (char *)c->rbuf;
    buf->len = sizeof(c->rbuf);
}

static void conn_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct iof_conn *c = (struct iof_conn *)s;
    (void)buf;
    if (n > 0) {
        if (!c->closing && c->cbs.on_data)
            c->cbs.on_data(c, c->rbuf, (size_t)n, c->arg);
    } else if (n < 0) {
        iof_conn_close(c, n == UV_EOF ? -EPIPE : (int)n);
    }
}

static int conn_start_reading(struct iof_conn *c)
{
    uv_tcp_nodelay(&c->tcp, 1);
    conn_note_addresses(c);
    return uv_read_start((uv_stream_t *)&c->tcp, conn_alloc, conn_on_read);
}

static void conn_on_write(uv_write_t *req, int status)
{
    struct conn_wreq *w = (struct conn_wreq *)req;
    w->conn->queued -= w->len;
    if (status < 0 && status != UV_ECANCELED)
        iof_conn_close(w->conn, status);
    free(w);
}

int iof_conn_write(struct iof_conn *c, const void *buf, size_t len)
{
    struct conn_wreq *w;
    uv_buf_t b;
    int r;

    if (c->closing)
        return -ENOTCONN;
    if (c->queued + len > IOF_CONN_WQ_MAX) {
        iof_conn_close(c, -ENOBUFS);
        return -ENOBUFS;
    }
    w = malloc(sizeof(*w) + len);
    if (!w)
        return -ENOMEM;
    w->conn = c;
    w->len = len;
    memcpy(w->data, buf, len);
    b = uv_buf_init((char *)w->data, (unsigned)len);
    r = uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, conn_on_write);
    if (r < 0) {
        free(w);
        iof_conn_close(c, r);
        return r;
    }
    c->queued += len;
    return 0;
}

static struct iof_conn *conn_new(uv_loop_t *loop, const struct iof_conn_cbs *cbs, void *arg)
{
    struct iof_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (uv_tcp_init(loop, &c->tcp) < 0) {
        free(c);
        return NULL;
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
    if (c->cbs.on_connect)
        c->cbs.on_connect(c, status, c->arg);
    if (status < 0)
        iof_conn_close(c, status);
}

static void conn_on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct iof_conn *c = req->data;
    int r = status;

    if (r == 0 && !c->closing) {
        struct sockaddr_storage ss;
        memcpy(&ss, res->ai_addr, res->ai_addrlen);
        format_sockaddr(&ss, c->peer, sizeof(c->peer));
        c->creq.data = c;
        r = uv_tcp_connect(&c->creq, &c->tcp, res->ai_addr, conn_on_connect);
    } else if (r == 0) {
        r = -ECANCELED;
    }
    uv_freeaddrinfo(res);
    if (r < 0) {
        if (c->cbs.on_connect)
            c->cbs.on_connect(c, r, c->arg);
        iof_conn_close(c, r);
    }
}

int iof_conn_connect(uv_loop_t *loop, const char *host, uint16_t port,
                     const struct iof_conn_cbs *cbs, void *arg, struct iof_conn **out)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct iof_conn *c = conn_new(loop, cbs, arg);
    char ports[8];
    int r;

    if (!c)
        return -ENOMEM;
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
    *out = c;
    return 0;
}

const char *iof_conn_peer(const struct iof_conn *c)
{
    return c->peer;
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

static void listener_on_conn(uv_stream_t *server, int status)
{
    struct iof_listener *l = (struct iof_listener *)server;
    struct iof_conn *c;

    if (status < 0)
        return;
    c = conn_new(server->loop, NULL, NULL);
    if (!c)
        return;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0 || conn_start_reading(c) < 0) {
        iof_conn_close(c, -ECONNABORTED);
        return;
    }
    l->on_accept(l, c, l->arg);
}

int iof_listener_start(uv_loop_t *loop, const char *host, uint16_t port, iof_accept_fn on_accept,
                       void *arg, struct iof_listener **out, struct iof_diag *diag)
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
    l->arg = arg;
    r = uv_tcp_init(loop, &l->tcp);
    if (r < 0) {
        free(l);
        return iof_diag_set(diag, r, "cannot create a socket: %s", uv_strerror(r));
    }
    r = uv_tcp_bind(&l->tcp, (struct sockaddr *)&ss, 0);
    if (r == 0)
        r = uv_listen((uv_stream_t *)&l->tcp, 1024, listener_on_conn);
    if (r < 0) {
        iof_diag_set(diag, r, "cannot listen on %s:%u: %s", h, port, uv_strerror(r));
        uv_close((uv_handle_t *)&l->tcp, (uv_close_cb)free);
        return r;
    }
    uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&ss, &len);
    l->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                            : ((struct sockaddr_in6 *)&ss)->sin6_port);
    *out = l;
    return 0;
}

uint16_t iof_listener_port(const struct iof_listener *l)
{
    return l->port;
}

void iof_listener_close(struct iof_listener *l)
{
    if (l)
        uv_close((uv_handle_t *)&l->tcp, (uv_close_cb)free);
}
