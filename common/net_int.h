/* SPDX-License-Identifier: Apache-2.0 */
/* common/net_int.h - internal to the connection layer: the structures of a
 * connection and a listener, shared by the portable part (common/net.c: TCP,
 * TLS, listeners) and the part each system does its own way (common/os/
 * net_linux.c: unix-domain sockets, peer credentials, io_uring batches;
 * common/os/net_win.c: their Windows refusals). Nothing else includes it. */
#ifndef IOF_COMMON_NET_INT_H
#define IOF_COMMON_NET_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/net.h"

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
    bool have_cred;    /* cred_* hold the peer's credentials (Linux: SO_PEERCRED) */
    uint32_t cred_uid;
    long cred_pid;
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
    uint64_t accept_warned_ns;            /* last warning of a failed accept (monotonic) */
    /* Admission (iof_listener_set_admission): handshakes running at once,
     * and the accepted connections waiting for one, oldest first. */
    unsigned max_active, nactive, nqueued, peak_queued;
    struct iof_conn *qhead, *qtail;
    char *unix_path;       /* a unix socket's path, unlinked at close */
    const char *unix_base; /* its name in its directory (within unix_path) */
    int unix_dirfd;        /* its directory, checked at start */
    uint64_t unix_dev;     /* the socket file we bound, to unlink only it */
    uint64_t unix_ino;
};

/* ---- common/net.c, for the per-system part ---- */

/* A new connection on loop: a TCP handle, or a unix-domain one (uv_pipe_t)
 * when unix_sock; tls (may be NULL) referenced. NULL when out of memory. */
struct iof_conn *iof_net_conn_new(uv_loop_t *loop, const struct iof_conn_cbs *cbs, void *arg,
                                  struct iof_tls_ctx *tls, bool unix_sock);
/* Notes the peer's address and starts reading. 0 or a uv error. */
int iof_net_conn_start_reading(struct iof_conn *c);
/* Sends len bytes after whatever is queued (to the socket at once when it
 * takes them). 0 or a uv error; the caller closes. */
int iof_net_conn_send(struct iof_conn *c, const void *buf, size_t len);
/* Sends the ciphertext c's TLS session produced. Does not close. */
int iof_net_conn_tls_flush(struct iof_conn *c);
/* Encrypts buf into c's TLS session; on failure closes c. */
int iof_net_conn_tls_encrypt(struct iof_conn *c, const void *buf, size_t len);
/* A listener's libuv callbacks: a connection came; the handle closed. */
void iof_net_listener_on_conn(uv_stream_t *server, int status);
void iof_net_listener_on_closed(uv_handle_t *h);

/* ---- the per-system part, for common/net.c ---- */

/* Sends this thread's batch of small writes now (a connection in it is
 * written otherwise). */
void iof_net_batch_send(void);
/* A connection accepted on the unix-domain listener l: its peer's
 * credentials and name. */
void iof_net_os_accepted(struct iof_listener *l, struct iof_conn *c);
/* A unix-domain listener closes: its socket file is removed (if still the
 * one it bound); its handle closed: what it held is let go. */
void iof_net_os_listener_unlink(struct iof_listener *l);
void iof_net_os_listener_closed(struct iof_listener *l);

#endif
