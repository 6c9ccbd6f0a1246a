/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http_guard.h - who may hold a connection to the live view
 * (manager/sinks/http.c) and for how long: request headers complete within
 * MGR_HTTP_HEADER_S of connecting (MGR_HTTP_KEEPALIVE_S of the previous
 * response on a kept-alive connection), at most
 * MGR_HTTP_MAX_CONN connections for the page, /metrics and /api/run and
 * MGR_HTTP_MAX_SSE event streams on top of them, each with a cap per IPv4 /24
 * or IPv6 /64. A connection over a cap takes the place of the oldest one of
 * its network (else of any) still waiting for headers; with none to take,
 * it is refused. No libmicrohttpd here: manager/sinks/http_mhd.c calls these from
 * the callbacks both HTTP servers use, and the unit test calls them directly.
 */
#ifndef IOF_MANAGER_SINKS_HTTP_GUARD_H
#define IOF_MANAGER_SINKS_HTTP_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define MGR_HTTP_HEADER_S 5        /* request headers must be complete within this */
#define MGR_HTTP_KEEPALIVE_S 30    /* the next request's, after a response */
#define MGR_HTTP_MAX_CONN 48       /* page, /metrics, /api/run and those reading headers */
#define MGR_HTTP_MAX_PER_NET 16    /* of them from one IPv4 /24 or IPv6 /64 */
#define MGR_HTTP_MAX_SSE 16        /* event streams, besides MGR_HTTP_MAX_CONN */
#define MGR_HTTP_MAX_SSE_PER_NET 8 /* of them from one /24 or /64 */
/* Connections libmicrohttpd may hold: the above and some being closed. */
#define MGR_HTTP_SLOTS (MGR_HTTP_MAX_CONN + MGR_HTTP_MAX_SSE + 16)

struct mgr_http_guard;
struct mgr_http_conn;

/* What the guard closed or refused since it started. */
struct mgr_http_guard_stats {
    uint64_t timed_out;       /* closed: no complete request headers in time */
    uint64_t evicted;         /* closed while waiting for headers, for a new connection */
    uint64_t refused;         /* new connections refused: over a cap, none to close */
    uint64_t streams_refused; /* /events answered 503: over a stream cap */
};

/* Returns 0 and a new guard whose own thread closes connections past the
 * header deadline (free with mgr_http_guard_free), or -errno. */
int mgr_http_guard_new(struct mgr_http_guard **out);
/* Stops its thread; NULL is fine. Every connection must be closed first. */
void mgr_http_guard_free(struct mgr_http_guard *g);

/* A connection from sa is about to be accepted: true when it may be, after
 * closing a connection waiting for headers if a cap requires; false: refuse. */
bool mgr_http_guard_admit(struct mgr_http_guard *g, const struct sockaddr *sa, socklen_t len);
/* The admitted connection is open on fd (borrowed; the guard only ever
 * shutdown()s it, and only before mgr_http_guard_closed). Returns its entry,
 * or NULL when every slot is taken (the caller closes it). */
struct mgr_http_conn *mgr_http_guard_opened(struct mgr_http_guard *g, const struct sockaddr *sa,
                                            socklen_t len, int fd);
/* Its request headers are complete. false: it was already closed, do not serve. */
bool mgr_http_guard_request(struct mgr_http_guard *g, struct mgr_http_conn *c);
/* The request is for an event stream: 0 when a stream slot is free (the
 * connection now holds it), -EBUSY over a cap. */
int mgr_http_guard_stream(struct mgr_http_guard *g, struct mgr_http_conn *c);
/* Its response is done: it waits for the next request's headers, for
 * MGR_HTTP_KEEPALIVE_S (a scraper reusing its connection every few seconds
 * keeps it); a stream that ended is closed. */
void mgr_http_guard_done(struct mgr_http_guard *g, struct mgr_http_conn *c);
/* It is closed: its entry is free again. */
void mgr_http_guard_closed(struct mgr_http_guard *g, struct mgr_http_conn *c);

/* Closes the connections whose headers are late at monotonic time now_ns
 * (the guard's thread calls it; the unit test too). */
void mgr_http_guard_sweep(struct mgr_http_guard *g, uint64_t now_ns);
void mgr_http_guard_stats(struct mgr_http_guard *g, struct mgr_http_guard_stats *st);

#endif
