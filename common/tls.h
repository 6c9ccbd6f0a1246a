/* SPDX-License-Identifier: Apache-2.0 */
/* common/tls.h - TLS 1.3 with mutual certificate authentication, as a
 * transport under iof_conn (common/net.h).
 *
 * Applications only load a context here (iof_tls_config_load() or
 * iof_tls_ctx_new()) and pass it to iof_conn_connect_tls() or
 * iof_listener_start_tls(); everything else goes through common/net.h.
 *
 * The verification policy is fixed, not configurable:
 *   - TLS 1.3 only, on both sides;
 *   - each side verifies the peer's certificate chain against the configured
 *     CA file and refuses a peer without a certificate
 *     (SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
 *   - a server sends one TLS 1.3 session ticket after each handshake it
 *     accepted (stateful: the session, with the client's verified
 *     certificate, stays in the server context's memory, i.e. per process,
 *     never written anywhere, at most IOF_TLS_SESSIONS_MAX of them; the
 *     ticket is its id, valid IOF_TLS_TICKET_LIFETIME_S). The client takes
 *     its arrival as the signal that the server accepted its certificate
 *     (see net.h), keeps the latest ticket per server address in its
 *     context and offers it, once, on its next connection to that address:
 *     the server that issued it resumes
 *     the session (PSK with a fresh ECDHE key exchange, no certificates on
 *     the wire, the peer identity is the one verified at the full
 *     handshake, and a certificate that has expired since is refused); any
 *     other server (or this one once the session is gone) does a full
 *     handshake.
 * The peer's name (first DNS subjectAltName, else subject CN) is checked by
 * the application with iof_conn_check_peer_name(): this layer proves the
 * peer holds a certificate from the CA, not which peer it is.
 *
 * The lower half of this header ("engine") is the OpenSSL-over-memory-BIO
 * state machine used by common/net.c: bytes in, bytes out, no sockets, no
 * libuv. It is public so it can be tested on its own; applications do not
 * need it. No OpenSSL header leaks out of this file.
 */
#ifndef IOF_COMMON_TLS_H
#define IOF_COMMON_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/* Default time a peer has to complete the handshake (TCP connected to
 * authenticated on both sides). */
#define IOF_TLS_HANDSHAKE_MS 10000u
/* Ciphertext a peer may send before the handshake completes on our side
 * (a real handshake flight is a few KiB); also the largest certificate chain
 * accepted. */
#define IOF_TLS_HANDSHAKE_MAX ((size_t)64 << 10)
/* Hard cap on unread ciphertext at any time (one read plus a partial record). */
#define IOF_TLS_INBUF_MAX ((size_t)160 << 10)
/* The peer name buffer (first DNS SAN or CN). */
#define IOF_TLS_NAME_MAX 256
/* How long a session ticket resumes a session (the server's session timeout;
 * a resumption does not extend it past the first full handshake). */
#define IOF_TLS_TICKET_LIFETIME_S 3600L
/* Sessions a server context keeps for resumption (its stateful tickets);
 * past it the oldest goes, and its ticket means a full handshake. */
#define IOF_TLS_SESSIONS_MAX 32768L
/* Tickets a client context keeps (one per server address). */
#define IOF_TLS_TICKETS_MAX 16384u

/* Handshakes completed on a context (both sides authenticated). */
struct iof_tls_counts {
    uint64_t full;            /* certificates exchanged and verified */
    uint64_t resumed;         /* a ticket resumed an earlier session */
    uint64_t refused_tickets; /* client: a ticket offered, a full handshake done */
};

enum iof_tls_role {
    IOF_TLS_CLIENT, /* dials: iof_conn_connect_tls() */
    IOF_TLS_SERVER, /* listens: iof_listener_start_tls() */
};

struct iof_tls_config {
    const char *ca_file;   /* PEM CA certificate(s) the peer must chain to. Required. */
    const char *cert_file; /* PEM certificate (chain) shown to the peer. Required for a
                              server; NULL for a client means no certificate, which every
                              iofleet server refuses (only useful to test that refusal). */
    const char *key_file;  /* PEM private key of cert_file (NULL iff cert_file is NULL). */
    enum iof_tls_role role;
    uint32_t handshake_ms; /* 0 = IOF_TLS_HANDSHAKE_MS */
};

/* A loaded SSL_CTX plus policy; reference-counted, shared by connections. */
struct iof_tls_ctx;

/* Creates a context from cfg (borrowed; the files are read now, not later).
 * Returns 0 and *out (new: iof_tls_ctx_free() it), or:
 *   -EINVAL  cfg incomplete ("a TLS server needs a certificate and a key");
 *   -errno   a file cannot be opened ("cannot read certificate /x/agent.pem:
 *            No such file or directory");
 *   -EBADMSG a file does not hold what it should ("cannot read key /x/k.pem:
 *            <OpenSSL reason>", "key /k.pem does not match certificate /c.pem");
 *   -ENOMEM.
 * diag names the file and the reason. */
int iof_tls_ctx_new(const struct iof_tls_config *cfg, struct iof_tls_ctx **out,
                    struct iof_diag *diag);

/* Convenience for CLIs: fills *cfg (may be NULL; its handshake_ms is kept)
 * with the borrowed paths and role, then iof_tls_ctx_new(). */
int iof_tls_config_load(struct iof_tls_config *cfg, const char *ca, const char *cert,
                        const char *key, bool server, struct iof_tls_ctx **out,
                        struct iof_diag *diag);

/* Takes another reference (for a connection or listener). Returns ctx. */
struct iof_tls_ctx *iof_tls_ctx_ref(struct iof_tls_ctx *ctx);

/* Drops the caller's reference; connections still using the context keep
 * theirs. Accepts NULL. */
void iof_tls_ctx_free(struct iof_tls_ctx *ctx);

enum iof_tls_role iof_tls_ctx_role(const struct iof_tls_ctx *ctx);

/* The identity in this context's own certificate (first DNS SAN, else CN),
 * or NULL. Borrowed from ctx. */
const char *iof_tls_ctx_own_name(const struct iof_tls_ctx *ctx);

/* Copies the handshake counters of ctx into *out. */
void iof_tls_ctx_counts(const struct iof_tls_ctx *ctx, struct iof_tls_counts *out);
/* Server: sessions kept for resumption (the tickets still good). */
size_t iof_tls_ctx_sessions(const struct iof_tls_ctx *ctx);
/* Client: tickets stored (one per server address); forgetting them makes
 * the next connections full handshakes. */
size_t iof_tls_ctx_tickets(const struct iof_tls_ctx *ctx);
void iof_tls_ctx_forget_tickets(struct iof_tls_ctx *ctx);
/* The stored ticket for peer as DER (an SSL_SESSION: the session secret in
 * clear, handle as a key), new in *der (free() it): 0, -ENOENT when there is
 * none, -ENOMEM. And back: stores a DER session as peer's ticket (0, -EINVAL
 * when it does not decode or ctx is a server's). For tests and tools. */
int iof_tls_ctx_ticket_export(struct iof_tls_ctx *ctx, const char *peer, uint8_t **der,
                              size_t *len);
int iof_tls_ctx_ticket_import(struct iof_tls_ctx *ctx, const char *peer, const uint8_t *der,
                              size_t len);

/* The name a manager's certificate carries (iofleet pki init). */
#define IOF_TLS_MANAGER_NAME "iofleet-manager"
uint32_t iof_tls_ctx_handshake_ms(const struct iof_tls_ctx *ctx);

/* What the first bytes of a stream are, for ports that must tell TLS from
 * plain iofleet without a decoder (common/ cannot use proto/). Borrows bytes. */
enum iof_tls_sniff {
    IOF_TLS_SNIFF_MORE,      /* fewer than 2 bytes */
    IOF_TLS_SNIFF_HANDSHAKE, /* 0x16 0x03: a TLS handshake record (ClientHello...) */
    IOF_TLS_SNIFF_ALERT,     /* 0x15 0x03: a TLS alert record */
    IOF_TLS_SNIFF_OTHER,     /* anything else: not a TLS handshake */
};
enum iof_tls_sniff iof_tls_sniff(const uint8_t *bytes, size_t n);

/* What a plain endpoint should report when iof_tls_sniff() says
 * IOF_TLS_SNIFF_HANDSHAKE. */
#define IOF_TLS_MSG_ON_PLAIN "TLS handshake received on a plain connection"
/* What a TLS server reports for a peer whose first bytes are not TLS. */
#define IOF_TLS_MSG_PLAIN_ON_TLS "plain (non-TLS) connection on a TLS port"

/* ---- engine: one connection's TLS state, used by common/net.c ---------------
 *
 * Error convention of the engine: 0 / positive progress, or a negative code
 * with diag filled:
 *   -EACCES       authentication failed (certificate refused, on either side);
 *   IOF_EPROTO    the peer does not speak TLS 1.3 or broke the protocol;
 *   IOF_ETOOBIG   the peer sent more than the bounds above;
 *   -EPIPE        the peer closed the TLS session (close_notify);
 *   -ENOMEM.
 * After an error the session is dead; flush its output (it may hold an alert
 * for the peer), then free it. */
struct iof_tls_sess;

/* New session for ctx's role (takes a reference on ctx). peer is a label for
 * messages ("10.0.0.5:7066"), copied. Returns NULL when out of memory. */
struct iof_tls_sess *iof_tls_sess_new(struct iof_tls_ctx *ctx, const char *peer);
/* Accepts NULL. */
void iof_tls_sess_free(struct iof_tls_sess *s);

/* Hands over ciphertext received from the peer (copied). Checks that the
 * stream starts like TLS and the bounds. Returns 0 or an error. */
int iof_tls_sess_feed(struct iof_tls_sess *s, const uint8_t *buf, size_t len,
                      struct iof_diag *diag);

/* Advances the handshake with what was fed (a client calls it once with
 * nothing fed to produce its ClientHello). Returns 1 once both sides are
 * authenticated (server: the client's certificate and Finished verified;
 * client: the server's certificate verified AND the server has accepted
 * ours), 0 when more input is needed, or an error. Idempotent after 1. */
int iof_tls_sess_handshake(struct iof_tls_sess *s, struct iof_diag *diag);

/* After the handshake: decrypts into buf. Returns the number of bytes (>0),
 * 0 when more input is needed, or an error (-EPIPE: close_notify). */
ssize_t iof_tls_sess_read(struct iof_tls_sess *s, uint8_t *buf, size_t cap, struct iof_diag *diag);
/* Whether anything fed in is still to be read (decrypted data, or bytes of
 * records not yet processed): when not, another iof_tls_sess_read could
 * only return 0, so the caller can stop without it. */
bool iof_tls_sess_has_input(const struct iof_tls_sess *s);

/* After the handshake: encrypts all of buf into the output. 0 or an error. */
int iof_tls_sess_write(struct iof_tls_sess *s, const void *buf, size_t len, struct iof_diag *diag);

/* Queues a close_notify (best effort, after the handshake only). */
void iof_tls_sess_shutdown(struct iof_tls_sess *s);

/* Ciphertext waiting to be sent to the peer, and taking it (returns bytes
 * copied, at most cap). */
size_t iof_tls_sess_out_pending(const struct iof_tls_sess *s);
size_t iof_tls_sess_out_take(struct iof_tls_sess *s, uint8_t *buf, size_t cap);

/* The transport ended (err: 0 for EOF, or a negative errno) before the
 * handshake completed: returns the error that explains it, with diag. */
int iof_tls_sess_eof(struct iof_tls_sess *s, int err, struct iof_diag *diag);

/* True once iof_tls_sess_handshake() returned 1. */
bool iof_tls_sess_established(const struct iof_tls_sess *s);
/* True once established by resuming an earlier session with a ticket. */
bool iof_tls_sess_resumed(const struct iof_tls_sess *s);
/* The verified peer certificate's name: first DNS subjectAltName, else the
 * subject CN; NULL before the handshake or when the name holds characters
 * other than printable ASCII. Borrowed from s. */
const char *iof_tls_sess_peer_name(const struct iof_tls_sess *s);
bool iof_tls_sess_peer_has_cert(const struct iof_tls_sess *s);
/* 0 when the verified certificate is issued to `expected` (any DNS SAN, or
 * the CN when it has no DNS SAN; exact, case-insensitive, no wildcards);
 * otherwise -EACCES with diag "PEER presented a certificate for 'X', expected
 * 'Y'". */
int iof_tls_sess_check_name(const struct iof_tls_sess *s, const char *expected,
                            struct iof_diag *diag);

#endif
