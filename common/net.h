/* SPDX-License-Identifier: Apache-2.0 */
/* common/net.h - byte-stream connections on the libuv loop: plain TCP, or
 * TLS 1.3 with mutual certificate authentication (common/tls.h) as another
 * transport under the same interface. Framing lives above this
 * (proto/link.h). Only the loop thread may call these functions.
 *
 * Ownership: a connection is created by iof_conn_connect[_tls]() or by a
 * listener and is freed by the library after its on_close callback has run
 * (the callback is the last use of the pointer). Callers close with
 * iof_conn_close(), which is idempotent.
 *
 * TLS connections behave like plain ones once authenticated; until then the
 * application never sees them:
 *   - outgoing (iof_conn_connect_tls): on_connect(c, 0) fires only when the
 *     handshake is complete on BOTH sides: we verified the server's chain,
 *     and the server verified ours (it sent its session ticket). On any
 *     failure (DNS, TCP, handshake, timeout) on_connect(c, err) fires, then
 *     on_close(c, err); iof_conn_error(c) has the text in both.
 *   - incoming (iof_listener_start_tls): on_accept fires only after the
 *     handshake; a connection that fails it goes to on_reject instead.
 *   - no application byte is read from or written to the peer before that.
 * Then the application checks WHO the peer is: iof_conn_check_peer_name()
 * (or iof_conn_peer_name()) against the name it expects.
 *
 * Error codes of TLS failures (on_connect/on_reject/on_close):
 *   -EACCES       certificate refused, by us or by the peer (unknown CA,
 *                 expired, not yet valid, no certificate);
 *   IOF_EPROTO    the peer does not speak TLS 1.3 (plain peer on a TLS port,
 *                 plain server answering a TLS client) or broke the protocol;
 *   IOF_ETIMEOUT  the handshake did not complete in time;
 *   IOF_ETOOBIG   the peer sent more than the handshake bounds;
 *   -EPIPE / -ECONNRESET  the peer went away.
 * After authentication a TLS connection closes like a plain one: the peer's
 * close_notify or EOF is -EPIPE, a TLS error IOF_EPROTO; iof_conn_close()
 * sends a close_notify.
 * The text (iof_conn_error) names the peer and the cause, e.g.
 *   "certificate of 10.0.0.5:7066 ("node1") is not signed by the configured CA (ca.pem)"
 *   "certificate of 10.0.0.5:7066 ("node1") expired on 2024-01-01 00:00:00 UTC"
 *   "10.0.0.5:40112 presented no certificate"
 *   "10.0.0.5:7066 refused our certificate: not signed by a CA it trusts (...)"
 *   "plain (non-TLS) connection on a TLS port from 10.0.0.5:40112 (...)"
 *   "10.0.0.5:7066 is not speaking TLS (first bytes 0x49 0x46: a plain iofleet peer: ...)"
 *   "TLS handshake with 10.0.0.5:7066 did not complete within 10.0 s"
 */
#ifndef IOF_COMMON_NET_H
#define IOF_COMMON_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "common/err.h"
#include "common/tls.h"

#define IOF_DEFAULT_PORT 7066
/* Caps for a TLS listener's connections still in their handshake
 * (unauthenticated), overall and per source address, as an agent sets them
 * (iof_listener_set_limits); a listener starts without caps. */
#define IOF_LISTENER_MAX_PENDING 256
#define IOF_LISTENER_MAX_PER_SOURCE 32
/* Bytes queued for writing (payload plus each write request's own size)
 * beyond which a peer that does not read is cut off. */
#define IOF_CONN_WQ_MAX ((size_t)64 << 20)

struct iof_conn;

struct iof_conn_cbs {
    /* Connected (outgoing only): err 0, or the reason it failed (then
     * on_close follows). For TLS: after the mutual authentication. */
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

/* Like iof_conn_connect() over TLS with tls (a client context: -EINVAL
 * otherwise; the connection takes a reference). on_connect(c, 0) means both
 * sides verified each other's certificate; see the top of this file. */
int iof_conn_connect_tls(uv_loop_t *loop, const char *host, uint16_t port, struct iof_tls_ctx *tls,
                         const struct iof_conn_cbs *cbs, void *arg, struct iof_conn **out);

/* "unix:PATH" names a unix-domain socket: true, and *path (may be NULL)
 * points at PATH inside s. */
bool iof_addr_is_unix(const char *s, const char **path);

/* Dials the unix-domain socket at path; on_connect reports the outcome.
 * The peer's credentials are read at connect (iof_conn_peer_cred). */
int iof_conn_connect_unix(uv_loop_t *loop, const char *path, const struct iof_conn_cbs *cbs,
                          void *arg, struct iof_conn **out);

/* Wraps fd, a connected unix-domain stream socket (one end of a
 * socketpair(), inherited from a parent), and takes it: closed with the
 * connection, also on failure. name labels the peer in messages. No
 * on_connect: the connection is up. -ENOTSOCK when fd is not a unix stream
 * socket. */
int iof_conn_open_fd(uv_loop_t *loop, int fd, const char *name, const struct iof_conn_cbs *cbs,
                     void *arg, struct iof_conn **out);

/* True for a unix-domain connection (accepted, dialled or from a fd). */
bool iof_conn_is_unix(const struct iof_conn *c);
/* The peer's uid and pid as the kernel recorded them (SO_PEERCRED): 0, or
 * -ENOTSUP on TCP. Either pointer may be NULL. */
int iof_conn_peer_cred(const struct iof_conn *c, uid_t *uid, pid_t *pid);
/* The rule for unauthenticated sessions: 0 when c is a unix-domain
 * connection whose peer is root or runs as this process's effective user;
 * else -EACCES with the reason (naming the peer's pid and uid). TCP is
 * never proven local ("loopback" is no identity on a shared host). */
int iof_conn_check_local_peer(const struct iof_conn *c, struct iof_diag *diag);

/* Queues a copy of buf for sending (through TLS on a TLS connection). -ENOBUFS (and the connection
 * is closed) when the peer has not read IOF_CONN_WQ_MAX bytes; -ENOTCONN after close. */
int iof_conn_write(struct iof_conn *c, const void *buf, size_t len);

/* Small writes to many connections at once (a manager's heartbeats: one
 * tick of a heartbeat slot writes to hundreds of agents). Between
 * iof_conn_batch_begin() and iof_conn_batch_end(), iof_conn_write_batched()
 * collects writes of at most IOF_CONN_BATCH_MSG_MAX bytes to connections
 * with nothing queued (over TLS, the record, encrypted at once), and the end
 * (or a full batch) hands them to the kernel in one io_uring_enter, each a
 * non-blocking send: a send the socket refuses or takes in part is queued as
 * iof_conn_write() would, and a connection written (or sending TLS records)
 * outside the batch meanwhile sends the batch first, so a connection's bytes
 * stay in order. A connection written twice in one batch sends the batch
 * first too. One with queued bytes, a batch of one, and a thread whose
 * kernel lacks io_uring (or does not refuse a full socket's non-blocking
 * send at once, tested on first use) write as iof_conn_write() does.
 * Outside a batch, iof_conn_write_batched() is iof_conn_write().
 * Batches nest (the outermost end sends). Loop thread only. */
#define IOF_CONN_BATCH_MSG_MAX 96
void iof_conn_batch_begin(void);
int iof_conn_write_batched(struct iof_conn *c, const void *buf, size_t len);
void iof_conn_batch_end(void);
/* Whether this thread's batches go through io_uring: 1 yes, 0 not tried
 * yet, -1 no (they are plain writes). For the tests. */
int iof_conn_batch_state(void);

/* Starts closing; on_close(c, err) follows from the loop. Idempotent. */
void iof_conn_close(struct iof_conn *c, int err);

/* "ADDR:PORT" of the peer, for messages. */
const char *iof_conn_peer(const struct iof_conn *c);
/* The peer's address without the port ("" on unix sockets): the source
 * that per-address limits count. */
const char *iof_conn_peer_addr(const struct iof_conn *c);
/* True when both ends are loopback addresses (informational: loopback is
 * no identity; see iof_conn_check_local_peer). */
bool iof_conn_is_loopback(const struct iof_conn *c);
/* Replaces the callbacks and their argument (e.g. when a listener hands a
 * connection to a session). */
void iof_conn_set_cbs(struct iof_conn *c, const struct iof_conn_cbs *cbs, void *arg);
size_t iof_conn_queued(const struct iof_conn *c);

/* The text of the error that closed (or is closing) c: the TLS layer's
 * explanation when it has one, else iof_strerror() of the code; "" while
 * the connection is healthy. Borrowed from c, valid until on_close returns. */
const char *iof_conn_error(const struct iof_conn *c);
/* True for a connection made by iof_conn_connect_tls() or a TLS listener. */
bool iof_conn_is_tls(const struct iof_conn *c);
/* True for a TLS connection authenticated by resuming an earlier session
 * (a session ticket, common/tls.h) rather than a full handshake. */
bool iof_conn_tls_resumed(const struct iof_conn *c);
/* True once the peer presented a certificate that chains to our CA (always
 * true for an authenticated TLS connection, false for plain TCP). */
bool iof_conn_peer_has_cert(const struct iof_conn *c);
/* The authenticated peer's name from its certificate: the first DNS
 * subjectAltName, else the subject CN. NULL on plain connections, before
 * the handshake, or when the name is not printable ASCII. Borrowed. */
const char *iof_conn_peer_name(const struct iof_conn *c);
/* 0 when the peer's verified certificate is issued to `expected` (any of
 * its DNS subjectAltNames, or its CN when it has none; case-insensitive, no
 * wildcards). -EACCES otherwise, with diag ("10.0.0.5:7066 presented a
 * certificate for 'node2', expected 'node1'"), also on plain connections. */
int iof_conn_check_peer_name(const struct iof_conn *c, const char *expected, struct iof_diag *diag);

struct iof_listener;

/* Called for each accepted connection; it must set callbacks with
 * iof_conn_set_cbs() or close it. */
typedef void (*iof_accept_fn)(struct iof_listener *l, struct iof_conn *c, void *arg);

/* Listens on host:port ("" or NULL host = all addresses; port 0 = ephemeral).
 * Returns 0 and the listener; the bound port is iof_listener_port(). */
int iof_listener_start(uv_loop_t *loop, const char *host, uint16_t port, iof_accept_fn on_accept,
                       void *arg, struct iof_listener **out, struct iof_diag *diag);

/* An incoming TLS connection failed before authentication (handshake error,
 * timeout, plain peer). c is borrowed for the call and already closing: use
 * iof_conn_peer(c), iof_conn_error(c), iof_conn_is_loopback(c); do not keep
 * it. */
typedef void (*iof_reject_fn)(struct iof_listener *l, struct iof_conn *c, int err, void *arg);

/* Like iof_listener_start() for TLS (tls: a server context, else -EINVAL; the
 * listener takes a reference). on_accept fires after the handshake, with the
 * peer authenticated; on_reject (may be NULL: then the refusal is logged as a
 * warning) for each connection that fails it. Closing the listener aborts
 * the handshakes in progress (-ECANCELED, not reported). */
int iof_listener_start_tls(uv_loop_t *loop, const char *host, uint16_t port,
                           struct iof_tls_ctx *tls, iof_accept_fn on_accept,
                           iof_reject_fn on_reject, void *arg, struct iof_listener **out,
                           struct iof_diag *diag);
/* Listens on the unix-domain socket path (absolute). Its directory must be
 * owned by root or this process's user and writable by nobody else (-EPERM),
 * and not be a symbolic link (-ELOOP); a missing one is created (0755,
 * root's) when we are root, else -ENOENT. The socket file is created mode
 * 0600 (owner only) by bind() under a umask of 0177, never chmod()ed by
 * name; a stale socket there (nobody listening) is removed relative to the
 * directory's descriptor, a live one or anything that is not a socket is
 * refused (-EADDRINUSE, -EEXIST, with diag). The file is removed when the
 * listener closes, if it is still the one bound. Accepted connections carry
 * their peer's credentials; checking them (iof_conn_check_local_peer) is the
 * caller's job.
 * The umask is process-wide: call this before the process starts threads
 * (dynamo does, at start-up), or another thread's files made meanwhile
 * would be created 0600 too. */
int iof_listener_start_unix(uv_loop_t *loop, const char *path, iof_accept_fn on_accept, void *arg,
                            struct iof_listener **out, struct iof_diag *diag);
/* Caps a TLS listener's unauthenticated connections (still handshaking):
 * max_pending overall, max_per_source per peer address; 0 = no cap. A new
 * connection over a cap drops the oldest pending one (of its address when
 * that cap is hit), with a warning every 1000 drops. A new listener has no
 * caps (a manager accepting thousands of agents at once must not drop
 * them); an agent sets IOF_LISTENER_MAX_PENDING, IOF_LISTENER_MAX_PER_SOURCE
 * or less. */
void iof_listener_set_limits(struct iof_listener *l, unsigned max_pending, unsigned max_per_source);
/* Admission for a TLS listener: at most max_active handshakes run at once
 * (0 = no limit, the default). A connection accepted beyond waits, unread
 * (its ClientHello stays in the socket); when a handshake ends, the NEWEST
 * waiting one starts (its handshake clock starting then), and those that
 * waited more than twice the handshake timeout are closed unread (their
 * dialler has given up and redials). Waiting ones still count against
 * iof_listener_set_limits' caps. A manager accepting thousands of agents at
 * once so keeps every loop iteration short (welcomed sessions' heartbeats
 * keep going) and spends its CPU on handshakes whose peer still waits. */
void iof_listener_set_admission(struct iof_listener *l, unsigned max_active);
/* The most connections that waited for admission at once. */
unsigned iof_listener_peak_queued(const struct iof_listener *l);
uint16_t iof_listener_port(const struct iof_listener *l);
/* Stops and frees (asynchronously). Accepts NULL. */
void iof_listener_close(struct iof_listener *l);

/* Fewer wake-ups for a loop that many peers write to at once (a manager at
 * an interval's end): before the loop polls again after an iteration that
 * read anything, it sleeps ms, so the next poll takes every report that
 * came meanwhile in one wake-up instead of a few at a time. A 10,000-agent
 * manager woke ~2,300 times a second, each wake-up costing more than
 * reading a report; the price is at most ms of delay on what comes in.
 * The handle does not keep the loop alive; stop closes it (the loop must
 * run once more, as for any handle, before it can be closed). */
struct iof_net_coalesce {
    uv_prepare_t prep;
    uint64_t seen;
    unsigned ms;
    bool on;
};
void iof_net_coalesce_start(uv_loop_t *loop, struct iof_net_coalesce *co, unsigned ms);
void iof_net_coalesce_stop(struct iof_net_coalesce *co);
/* Pauses (or resumes) the sleep for loops on this thread: while a reply's
 * arrival time is measured (a clock probe's round trip), the loop must
 * read it as soon as it comes, not up to ms later. */
void iof_net_coalesce_pause(bool paused);
/* uv_run(loop, UV_RUN_DEFAULT) with coalescing of ms, its handle closed
 * before it returns (the loop can then be closed). */
void iof_net_run_coalesced(uv_loop_t *loop, unsigned ms);

/* Raises the soft limit of open descriptors to the hard one (systemd's and a
 * login shell's default soft limit, 1024, is about 1,000 connections): the
 * manager and the agent do it at start. 0 with *was and *now (either may be
 * NULL) the limit before and after, or -errno with it unchanged. On Windows,
 * where sockets have no such limit, 0 and both 0. */
int iof_net_raise_fd_limit(unsigned long long *was, unsigned long long *now);

#endif
