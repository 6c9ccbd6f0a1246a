/* common/net.h - byte-stream connections on the libuv loop: TCP today, TLS
 * as another transport under the same interface. Framing lives above this
 * (proto/link.h). Only the loop thread may call these functions.
 *
 * Ownership: a connection is created by iof_conn_connect() or by a listener
 * and is freed by the library after its on_close callback has run (the
 * callback is the last use of the pointer). Callers close with
 * iof_conn_close(), which is idempotent.
 */
#ifndef IOF_COMMON_NET_H
#define IOF_COMMON_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/err.h"

#define IOF_DEFAULT_PORT 7066
/* Bytes queued for writing beyond which a peer that does not read is cut off. */
#define IOF_CONN_WQ_MAX ((size_t)64 << 20)

struct iof_conn;

struct iof_conn_cbs {
    /* Connected (outgoing only): err 0, or the reason it failed (then
     * on_close follows). */
    void (*on_connect)(struct iof_conn *c, int err, void *arg);
    /* Bytes from the peer, borrowed for the duration of the call. */
    void (*on_data)(struct iof_conn *c, const uint8_t *buf, size_t len, void *arg);
    /* The connection is gone: err 0 after iof_conn_close(), -ECONNRESET,
     * UV_EOF mapped to -EPIPE when the peer closed, or another error. */
    void (*on_close)(struct iof_conn *c, int err, void *arg);
};

/* Parses "HOST[:PORT]", "[V6]:PORT" or ":PORT" into host (cap bytes) and
 * port (default_port when absent). Returns 0 or -EINVAL with a message. */
int iof_addr_parse(const char *s, char *host, size_t cap, uint16_t default_port, uint16_t *port,
                   struct iof_diag *diag);

/* Dials host:port (name or address, resolved asynchronously). Returns 0 and
 * the new connection, whose on_connect reports the outcome. */
int iof_conn_connect(uv_loop_t *loop, const char *host, uint16_t port,
                     const struct iof_conn_cbs *cbs, void *arg, struct iof_conn **out);

/* Queues a copy of buf for sending. -ENOBUFS (and the connection is closed)
 * when the peer has not read IOF_CONN_WQ_MAX bytes; -ENOTCONN after close. */
int iof_conn_write(struct iof_conn *c, const void *buf, size_t len);

/* Starts closing; on_close(c, err) follows from the loop. Idempotent. */
void iof_conn_close(struct iof_conn *c, int err);

/* "ADDR:PORT" of the peer, for messages. */
const char *iof_conn_peer(const struct iof_conn *c);
/* True when both ends are loopback addresses. */
bool iof_conn_is_loopback(const struct iof_conn *c);
/* Replaces the callbacks and their argument (e.g. when a listener hands a
 * connection to a session). */
void iof_conn_set_cbs(struct iof_conn *c, const struct iof_conn_cbs *cbs, void *arg);
size_t iof_conn_queued(const struct iof_conn *c);

struct iof_listener;

/* Called for each accepted connection; it must set callbacks with
 * iof_conn_set_cbs() or close it. */
typedef void (*iof_accept_fn)(struct iof_listener *l, struct iof_conn *c, void *arg);

/* Listens on host:port ("" or NULL host = all addresses; port 0 = ephemeral).
 * Returns 0 and the listener; the bound port is iof_listener_port(). */
int iof_listener_start(uv_loop_t *loop, const char *host, uint16_t port, iof_accept_fn on_accept,
                       void *arg, struct iof_listener **out, struct iof_diag *diag);
uint16_t iof_listener_port(const struct iof_listener *l);
/* Stops and frees (asynchronously). Accepts NULL. */
void iof_listener_close(struct iof_listener *l);

#endif
