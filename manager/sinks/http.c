/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http.c - the live view's HTTP server: libmicrohttpd, one
 * thread per connection (admitted and timed by manager/sinks/http_guard.c), fed
 * as a result sink. The loop thread only updates the locked view
 * (manager/sinks/http_view.c) in the sink callbacks; HTTP threads render it under
 * the lock into their own bounded buffers and write outside it, so no client
 * can stall the run. */
#include "manager/sinks/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "manager/sinks/http_guard.h"
#include "manager/sinks/http_mhd.h"
#include "manager/sinks/http_page.h"
#include "manager/sinks/http_view.h"

#define HTTP_IDLE_S 30           /* a connection without progress is closed after this */
#define HTTP_MAX_BODY (4u << 20) /* one rendering; a run has at most a few hundred nodes */
#define SSE_RETRY_MS 2000        /* the browser's reconnect delay */
#define SSE_KEEPALIVE_S 10       /* a comment line when nothing changed */
#define HTTP_STR_(x) #x
#define HTTP_STR(x) HTTP_STR_(x)

struct http_sink {
    struct mgr_view view;
    struct MHD_Daemon *daemon;
    struct mgr_http_guard *guard;
    int fd; /* the listening socket (MHD closes it in MHD_stop_daemon) */
    unsigned linger_s;
    char url[96];
};

/* One /events client: what it has been sent, and the event being written. */
struct sse_client {
    struct http_sink *h;
    uint64_t sent_seq;
    bool sent_any;
    struct iof_buf out;
    size_t off;
};

/* --- address --------------------------------------------------------------------------- */

int mgr_http_parse(const char *spec, char *host, size_t cap, uint16_t *port, struct iof_diag *diag)
{
    const char *colon = strrchr(spec, ':'), *p = colon ? colon + 1 : spec;
    char addr[INET6_ADDRSTRLEN + 2] = "127.0.0.1";
    unsigned char bin[sizeof(struct in6_addr)];
    unsigned long v;
    char *end;

    if (colon) {
        size_t n = (size_t)(colon - spec);
        if (n >= sizeof(addr))
            return iof_diag_set(diag, -EINVAL, "'%s': not [ADDR:]PORT (ADDR too long)", spec);
        memcpy(addr, spec, n);
        addr[n] = '\0';
        if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
            memmove(addr, addr + 1, n - 2);
            addr[n - 2] = '\0';
            if (inet_pton(AF_INET6, addr, bin) != 1)
                return iof_diag_set(diag, -EINVAL, "'%s': '%s' is not an IPv6 address", spec, addr);
        } else if (inet_pton(AF_INET, addr, bin) != 1) {
            return iof_diag_set(diag, -EINVAL,
                                "'%s': '%s' is not an IPv4 address (IPv6 goes in brackets: "
                                "[::1]:PORT)",
                                spec, addr);
        }
    }
    errno = 0;
    v = strtoul(p, &end, 10);
    if (!*p || *end || *p == '-' || *p == '+' || errno || v > 65535)
        return iof_diag_set(diag, -EINVAL, "'%s': the port must be a number 0..65535", spec);
    if (strlen(addr) >= cap)
        return iof_diag_set(diag, -EINVAL, "'%s': address too long", spec);
    snprintf(host, cap, "%s", addr);
    *port = (uint16_t)v;
    return 0;
}

int mgr_http_listen(const char *host, uint16_t port, uint16_t *bound, bool *loopback,
                    struct iof_diag *diag)
{
    struct sockaddr_storage ss = {0};
    socklen_t len;
    int fd, one = 1, family = strchr(host, ':') ? AF_INET6 : AF_INET;

    if (family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(port);
        inet_pton(AF_INET6, host, &s6->sin6_addr);
        *loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
        len = sizeof(*s6);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        inet_pton(AF_INET, host, &s4->sin_addr);
        *loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
        len = sizeof(*s4);
    }
    fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return iof_diag_set(diag, -errno, "%s:%u: cannot listen: %s", host, port, strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
        int e = errno;
        close(fd);
        return iof_diag_set(diag, -e, "%s:%u: cannot listen: %s", host, port, strerror(e));
    }
    len = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &len);
    *bound = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                      : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

static void http_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                           enum MHD_RequestTerminationCode why)
{
    struct http_sink *h = cls;
    struct mgr_http_conn *c = mgr_http_mhd_conn(conn);

    (void)req_cls;
    (void)why;
    if (c)
        mgr_http_guard_done(h->guard, c);
}

/* --- responses ------------------------------------------------------------------------- */

static enum MHD_Result http_send(struct MHD_Connection *conn, unsigned status, const char *type,
                                 void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    enum MHD_Result ret;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (!strncmp(type, "text/html", 9))
        /* The page loads nothing but itself and its event stream. */
        MHD_add_response_header(r, "Content-Security-Policy", mgr_http_page_csp());
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result http_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
    return http_send(conn, status, "text/plain; charset=utf-8", (void *)text, strlen(text),
                     MHD_RESPMEM_PERSISTENT);
}

/* The view rendered by fn, sent as type. */
static enum MHD_Result http_render(struct MHD_Connection *conn, struct http_sink *h,
                                   void (*fn)(const struct mgr_view *, uint64_t, struct iof_buf *),
                                   const char *type)
{
    struct iof_buf b;
    size_t len;
    char *body;

    iof_buf_init(&b, HTTP_MAX_BODY);
    mgr_view_lock(&h->view);
    fn(&h->view, iof_wall_ns(), &b);
    mgr_view_unlock(&h->view);
    if (!(body = iof_buf_take(&b, &len)))
        return http_text(conn, 500, "out of memory\n");
    return http_send(conn, 200, type, body, len, MHD_RESPMEM_MUST_FREE);
}

/* Lock held: the next event of c into c->out. */
static void sse_event(struct sse_client *c)
{
    struct mgr_view *v = &c->h->view;

    iof_buf_reset(&c->out);
    c->off = 0;
    if (!c->sent_any)
        iof_buf_printf(&c->out, "retry: %u\n", SSE_RETRY_MS);
    iof_buf_printf(&c->out, "id: %llu\nevent: run\ndata: ", (unsigned long long)v->seq);
    mgr_view_json(v, iof_wall_ns(), &c->out);
    iof_buf_addstr(&c->out, "\n\n");
    c->sent_seq = v->seq;
    c->sent_any = true;
}

/* MHD asks for more of the stream: the rest of the current event, else the
 * next one once the view changes, else a keep-alive comment. Blocks only
 * this connection's thread, never while holding the lock for I/O. */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct sse_client *c = cls;
    struct mgr_view *v = &c->h->view;
    (void)pos;
    if (c->off >= c->out.len) {
        struct timespec until;
        int rc = 0;

        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += SSE_KEEPALIVE_S;
        mgr_view_lock(v);
        while (c->sent_any && v->seq == c->sent_seq && !v->stopping && rc == 0)
            rc = pthread_cond_timedwait(&v->cv, &v->mu, &until);
        if (v->stopping && c->sent_any && v->seq == c->sent_seq) {
            mgr_view_unlock(v);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (!c->sent_any || v->seq != c->sent_seq) {
            sse_event(c);
        } else {
            iof_buf_reset(&c->out);
            c->off = 0;
            iof_buf_addstr(&c->out, ": keep-alive\n\n");
        }
        mgr_view_unlock(v);
        if (c->out.err)
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    return (ssize_t)iof_buf_read(&c->out, &c->off, buf, max);
}

static void sse_free(void *cls)
{
    struct sse_client *c = cls;
    iof_buf_free(&c->out);
    free(c);
}

/* 503 and close: every event-stream slot of the client's network, or of
 * the server, is taken. */
static enum MHD_Result http_streams_busy(struct MHD_Connection *conn)
{
    static const char text[] =
        "too many event streams (at most " HTTP_STR(MGR_HTTP_MAX_SSE) ", " HTTP_STR(
            MGR_HTTP_MAX_SSE_PER_NET) " per network); try again later\n";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(sizeof(text) - 1, (void *)text, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "5");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(conn, 503, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result http_events(struct MHD_Connection *conn, struct http_sink *h)
{
    const char *last = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
    struct mgr_http_conn *slot = mgr_http_mhd_conn(conn);
    struct sse_client *c;
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (!slot || mgr_http_guard_stream(h->guard, slot))
        return http_streams_busy(conn);
    if (!(c = calloc(1, sizeof(*c))))
        return http_text(conn, 500, "out of memory\n");
    c->h = h;
    iof_buf_init(&c->out, HTTP_MAX_BODY);
    if (last && *last) {
        /* A reconnect that has seen the current state waits for the next
         * change; any other gets the full current state at once. */
        char *end;
        unsigned long long id = strtoull(last, &end, 10);
        mgr_view_lock(&h->view);
        if (!*end && id == h->view.seq) {
            c->sent_seq = id;
            c->sent_any = true;
            iof_buf_printf(&c->out, "retry: %u\n\n", SSE_RETRY_MS);
        }
        mgr_view_unlock(&h->view);
    }
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, c, sse_free);
    if (!r) {
        sse_free(c);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result http_request(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **req_cls)
{
    struct http_sink *h = cls;
    struct mgr_http_conn *c = mgr_http_mhd_conn(conn);

    (void)version;
    (void)upload_data;
    (void)req_cls;
    if (!c || !mgr_http_guard_request(h->guard, c)) /* closed by the guard meanwhile */
        return MHD_NO;
    if (*upload_data_size) /* no request here has a body */
        return http_text(conn, 413, "no request body is accepted\n");
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return http_text(conn, 405, "only GET\n");
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        return http_render(conn, h, mgr_http_page, "text/html; charset=utf-8");
    if (!strcmp(url, "/events"))
        return http_events(conn, h);
    if (!strcmp(url, "/metrics"))
        return http_render(conn, h, mgr_view_metrics, "text/plain; version=0.0.4; charset=utf-8");
    if (!strcmp(url, "/api/run"))
        return http_render(conn, h, mgr_view_json, "application/json");
    return http_text(conn, 404, "not found: try /, /events, /metrics or /api/run\n");
}

/* --- the sink -------------------------------------------------------------------------- */

static void http_run_begin(struct mgr_sink *s, const struct mgr_run_info *ri)
{
    mgr_view_run_begin(&((struct http_sink *)s->priv)->view, ri);
}

static void http_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    mgr_view_test_begin(&((struct http_sink *)s->priv)->view, ti);
}

static void http_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    mgr_view_interval(&((struct http_sink *)s->priv)->view, iv);
}

static void http_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    (void)ti;
    mgr_view_row(&((struct http_sink *)s->priv)->view, r);
}

static void http_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    mgr_view_test_end(&((struct http_sink *)s->priv)->view, te);
}

static void http_run_end(struct mgr_sink *s, int exit_code)
{
    mgr_view_run_end(&((struct http_sink *)s->priv)->view, exit_code);
}

static void http_free(struct http_sink *h)
{
    if (!h)
        return;
    if (h->daemon) {
        mgr_view_stop(&h->view);
        MHD_stop_daemon(h->daemon);
    } else if (h->fd >= 0) {
        close(h->fd);
    }
    if (h->guard) {
        struct mgr_http_guard_stats st;
        mgr_http_guard_stats(h->guard, &st);
        if (st.timed_out || st.evicted || st.refused || st.streams_refused)
            IOF_INFO("live view: %llu connections closed without request headers in %u s, "
                     "%llu closed to admit others, %llu refused, %llu event streams refused "
                     "(docs/security.md)",
                     (unsigned long long)st.timed_out, MGR_HTTP_HEADER_S,
                     (unsigned long long)st.evicted, (unsigned long long)st.refused,
                     (unsigned long long)st.streams_refused);
        mgr_http_guard_free(h->guard);
    }
    mgr_view_destroy(&h->view);
    free(h);
}

static void http_close(struct mgr_sink *s)
{
    struct http_sink *h = s->priv;

    /* Linger only after a run: not when the run never started. */
    if (h && h->linger_s && h->view.state == MGR_VIEW_DONE) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000000L};
        for (unsigned i = 0; i < h->linger_s * 10; i++)
            nanosleep(&ts, NULL);
    }
    http_free(h);
    s->priv = NULL;
}

static int http_open_path(struct mgr_sink *s, const char *path, struct iof_diag *diag)
{
    (void)s;
    (void)path;
    return iof_diag_set(diag, -EINVAL, "the live view is opened with mgr_http_open");
}

static const struct mgr_sink_ops mgr_sink_http = {
    .name = "http",
    .open = http_open_path,
    .run_begin = http_run_begin,
    .test_begin = http_test_begin,
    .interval = http_interval,
    .row = http_row,
    .test_end = http_test_end,
    .run_end = http_run_end,
    .close = http_close,
};

int mgr_http_open(const char *spec, unsigned linger_s, struct mgr_sink **out, struct iof_diag *diag)
{
    char host[INET6_ADDRSTRLEN];
    uint16_t port, bound = 0;
    bool loopback = false;
    struct http_sink *h;
    struct mgr_sink *s;
    int rc;

    *out = NULL;
    if ((rc = mgr_http_parse(spec, host, sizeof(host), &port, diag)))
        return rc;
    s = calloc(1, sizeof(*s));
    h = calloc(1, sizeof(*h));
    if (!s || !h || mgr_view_init(&h->view)) {
        free(s);
        free(h);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    h->fd = -1;
    h->linger_s = linger_s;
    if ((rc = mgr_http_guard_new(&h->guard))) {
        http_free(h);
        free(s);
        return iof_diag_set(diag, rc, "--http %s: cannot start the HTTP server: %s", spec,
                            strerror(-rc));
    }
    if ((rc = mgr_http_listen(host, port, &bound, &loopback, diag)) < 0) {
        http_free(h);
        free(s);
        return rc;
    }
    h->fd = rc;
    h->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
            (strchr(host, ':') ? MHD_USE_IPv6 : 0),
        0, mgr_http_mhd_accept, h->guard, http_request, h, MHD_OPTION_LISTEN_SOCKET, h->fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)MGR_HTTP_SLOTS, MHD_OPTION_NOTIFY_CONNECTION,
        mgr_http_mhd_notify, h->guard, MHD_OPTION_NOTIFY_COMPLETED, http_completed, h,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)32768, MHD_OPTION_END);
    if (!h->daemon) {
        http_free(h);
        free(s);
        return iof_diag_set(diag, -EIO, "%s:%u: cannot start the HTTP server", host, port);
    }
    snprintf(h->url, sizeof(h->url), strchr(host, ':') ? "http://[%s]:%u/" : "http://%s:%u/", host,
             bound);
    s->ops = &mgr_sink_http;
    snprintf(s->path, sizeof(s->path), "%s", h->url);
    s->priv = h;
    IOF_USER("iofleet: live view on %s (/metrics, /events, /api/run)", h->url);
    if (!loopback)
        IOF_WARN("--http %s: the live view is served beyond this machine without "
                 "authentication or TLS; anyone who can reach it sees the run (docs/security.md)",
                 spec);
    *out = s;
    return 0;
}
