/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_auth.h - the safety of `iofleet serve --http` (docs/api.md,
 * Security): HTTPS with a certificate and key given on the command line
 * (checked here, served by libmicrohttpd over GnuTLS); bearer tokens with
 * a scope, kept hashed in a tokens file; and the rule that an address other
 * than loopback is served only with HTTPS and tokens.
 *
 * The tokens file (--http-tokens F): one token a line, "SCOPE NAME HASH":
 * SCOPE viewer (every GET and HEAD) or operator (POST too), NAME a node
 * name's characters (proto/name.h) unique in the file, HASH the SHA-256 of
 * the token as 64 hex digits; blank lines and lines starting with '#' are
 * skipped. A line "cert NAME SCOPE" lets in, with SCOPE, a client certificate
 * whose subject CN is NAME, verified against --http-client-ca (the pki's
 * CA); names are unique among token lines and among cert lines. The file
 * must be a regular file of the effective user (or root)
 * that no one else may read or write (mode 0600 or stricter).
 *
 * Revocation without a restart: serve reads the file again when it changes
 * (its device, inode, size or mtime, looked at before a request at most
 * once a second: an editor that renames a new file into place changes the
 * inode) and on SIGHUP. A token whose line is gone is refused at once and
 * the sessions signed in with it end; a session follows its token's scope
 * as the file now says. A file that becomes unreadable, insecure or
 * malformed closes the API: every token and session is refused (503) until
 * the file is good again, the reason logged once per change.
 */
#ifndef IOF_MANAGER_API_AUTH_H
#define IOF_MANAGER_API_AUTH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/err.h"

/* GnuTLS priorities of the API's HTTPS: TLS 1.3 and 1.2 only, GnuTLS's
 * NORMAL ciphers (AEAD and forward secrecy first). */
#define MGR_API_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define MGR_API_TLS_FILE_MAX (256u << 10) /* a PEM certificate chain or key */

#define MGR_API_TOKENS_MAX 4096 /* lines with a token in a tokens file */
#define MGR_API_TOKENS_FILE_MAX (1u << 20)
#define MGR_API_TOKEN_PREFIX "iofleet_" /* then 64 hex digits: 256 random bits */
#define MGR_API_TOKEN_LEN (sizeof(MGR_API_TOKEN_PREFIX) - 1 + 64)
#define MGR_API_FAIL_WINDOW_S 60 /* failed authentications counted per peer over */
#define MGR_API_FAIL_MAX 20      /* failures in the window, then 429 until it ends */
#define MGR_API_FAIL_PEERS 64    /* peers remembered (the oldest forgotten) */

/* Sign-in (POST /api/v1/session): a token checked as a Bearer token is
 * exchanged for a session cookie, so that a browser can use the console.
 * Sessions live in serve's memory only (they die with it). */
#define MGR_API_SESSION_COOKIE "iofleet_session" /* its value: 64 hex digits */
#define MGR_API_SESSION_ID_LEN 64                /* 256 random bits */
#define MGR_API_SESSION_S (12 * 3600)            /* a session's life from sign-in */
#define MGR_API_SESSIONS_MAX 256                 /* then the oldest is dropped */

/* What `iofleet serve` was given for its API; each may be NULL. */
struct mgr_api_auth_opts {
    const char *tls_cert;  /* PEM certificate (chain), with tls_key */
    const char *tls_key;   /* PEM private key, unencrypted */
    const char *tokens;    /* the tokens file: every request then needs one */
    const char *client_ca; /* PEM CA: client certificates it signed, mapped by "cert" lines */
};

enum mgr_api_scope {
    MGR_API_SCOPE_NONE = 0,
    MGR_API_SCOPE_VIEWER = 1,   /* GET and HEAD */
    MGR_API_SCOPE_OPERATOR = 2, /* and POST: start and stop runs, check plans */
};

struct mgr_api_token {
    enum mgr_api_scope scope;
    char name[65];          /* a certificate's: its subject CN */
    unsigned char hash[32]; /* SHA-256 of the token; zeros for a certificate */
    unsigned line;          /* in the tokens file */
    bool cert;              /* a "cert NAME SCOPE" line */
};

struct mgr_api_tokens {
    struct mgr_api_token *v;
    size_t n;
};

/* "viewer", "operator"; NULL for another value. */
const char *mgr_api_scope_name(enum mgr_api_scope s);
/* The scope named s, or MGR_API_SCOPE_NONE. */
enum mgr_api_scope mgr_api_scope_parse(const char *s);

/* SHA-256 of token (len bytes). */
void mgr_api_token_hash(const char *token, size_t len, unsigned char out[32]);

/* Parses a tokens file's text (len bytes; path only names it in messages)
 * into out (new; mgr_api_tokens_free). 0, or -EINVAL with diag "PATH:LINE:
 * REASON" (-ENOMEM). An empty file is refused: it would let nobody in. */
int mgr_api_tokens_parse(const char *path, const char *text, size_t len, struct mgr_api_tokens *out,
                         struct iof_diag *diag);
/* Reads path (its owner and mode checked as above, then parsed). 0, or
 * -EINVAL / -errno with diag naming the file and the reason. */
int mgr_api_tokens_load(const char *path, struct mgr_api_tokens *out, struct iof_diag *diag);
void mgr_api_tokens_free(struct mgr_api_tokens *t);

/* The entry whose hash is token's (len bytes), every entry compared in
 * constant time (CRYPTO_memcmp, no early exit); NULL when none. */
const struct mgr_api_token *mgr_api_tokens_find(const struct mgr_api_tokens *t, const char *token,
                                                size_t len);
/* The same by the token's SHA-256 (a session's). Never a cert line. */
const struct mgr_api_token *mgr_api_tokens_find_hash(const struct mgr_api_tokens *t,
                                                     const unsigned char hash[32]);
/* The cert line of the certificate named cn, or NULL. */
const struct mgr_api_token *mgr_api_tokens_find_cert(const struct mgr_api_tokens *t,
                                                     const char *cn);

/* The token of an Authorization header value: "Bearer TOKEN" (the scheme in
 * any case, spaces around TOKEN skipped). true with *tok, *len; false when
 * hdr is NULL or another scheme. */
bool mgr_api_bearer(const char *hdr, const char **tok, size_t *len);

/* Makes a new token (MGR_API_TOKEN_PREFIX and 64 hex digits from
 * RAND_bytes) into token (MGR_API_TOKEN_LEN + 1 bytes) and appends "SCOPE
 * NAME HASH" to path, which is created mode 0600 when missing, else checked
 * and parsed as mgr_api_tokens_load() does (a NAME already there is
 * refused). 0, or -EINVAL / -errno with diag. */
int mgr_api_token_new(const char *path, enum mgr_api_scope scope, const char *name, char *token,
                      struct iof_diag *diag);

/* The sessions of signed-in browsers. Not locked: struct mgr_api_auth's
 * mutex guards its table. Only the SHA-256 of an id is kept, and of the
 * token signed in with (looked up in the tokens file as it is now at each
 * request, so that a session ends with its token's line). */
struct mgr_api_session {
    unsigned char hash[32]; /* of the id */
    unsigned char tok[32];  /* of the token signed in with */
    bool used;              /* false: a free slot */
    int64_t born, expires;  /* monotonic seconds */
};

struct mgr_api_sessions {
    struct mgr_api_session v[MGR_API_SESSIONS_MAX];
};

/* A new session for tok at now, expiring MGR_API_SESSION_S later, its id
 * (MGR_API_SESSION_ID_LEN hex digits from RAND_bytes) written to id; when
 * the table is full the oldest session is dropped. 0, or IOF_EINTERNAL when
 * RAND_bytes fails. */
int mgr_api_session_new(struct mgr_api_sessions *s, const unsigned char tok[32], int64_t now,
                        char id[MGR_API_SESSION_ID_LEN + 1]);
/* Whether id (NULL-safe) is a live session's, every slot compared in
 * constant time, then its token's hash in tok; an expired session found is
 * removed. */
bool mgr_api_session_find(struct mgr_api_sessions *s, const char *id, int64_t now,
                          unsigned char tok[32]);
/* Ends every session whose token is not in t (t NULL: every session).
 * Returns how many ended. */
size_t mgr_api_session_keep(struct mgr_api_sessions *s, const struct mgr_api_tokens *t);
/* Removes the session whose id is id: true when there was one. */
bool mgr_api_session_end(struct mgr_api_sessions *s, const char *id);
/* Live sessions at now. */
size_t mgr_api_session_count(const struct mgr_api_sessions *s, int64_t now);

/* The tokens file as last looked at: stat's fields, or the errno of a
 * stat that failed. */
struct mgr_api_file_sig {
    uint64_t dev, ino, size;
    int64_t mtime_ns;
    int err;
};

/* A request's authentication against a tokens file, with failures counted
 * per peer address. Lock order: reload_mu, then table_mu, then mu. */
struct mgr_api_auth {
    char *path;                /* the tokens file */
    pthread_rwlock_t table_mu; /* guards tokens, closed and why (written by a reload) */
    struct mgr_api_tokens tokens;
    bool closed;               /* the file is unusable: every token and session refused */
    char why[512];             /* then why, naming the file (and the line) */
    pthread_mutex_t reload_mu; /* one reload at a time; guards sig and checked */
    struct mgr_api_file_sig sig;
    int64_t checked;    /* the monotonic second of the last look */
    atomic_bool hup;    /* a reload asked for (SIGHUP) */
    pthread_mutex_t mu; /* guards fails and sessions */
    struct mgr_api_sessions sessions;
    struct mgr_api_fail {
        unsigned char addr[16]; /* IPv4 mapped, or the IPv6 address */
        int64_t since;          /* the window's start, monotonic seconds */
        unsigned count;
    } fails[MGR_API_FAIL_PEERS];
};

enum mgr_api_auth_result {
    MGR_API_AUTH_OK,        /* the token's scope allows the method */
    MGR_API_AUTH_MISSING,   /* no Authorization header, or not Bearer: 401 */
    MGR_API_AUTH_WRONG,     /* a token no line has: 401 */
    MGR_API_AUTH_SCOPE,     /* a viewer's token on a POST: 403 */
    MGR_API_AUTH_THROTTLED, /* too many failures from the peer: 429 */
    MGR_API_AUTH_ERROR,     /* sign-in: no random session id (RAND_bytes failed): 500 */
    MGR_API_AUTH_CLOSED,    /* the tokens file is unusable: everyone refused, 503 */
};

/* Loads the tokens file into a (new; mgr_api_auth_free). 0, or -EINVAL
 * (-ENOMEM) with diag as mgr_api_tokens_load() sets it. */
int mgr_api_auth_new(const char *path, struct mgr_api_auth **out, struct iof_diag *diag);
void mgr_api_auth_free(struct mgr_api_auth *a);
/* Reads the tokens file again if it changed since the last look (its
 * mgr_api_file_sig), looking at most once a monotonic second (now) unless
 * force or a SIGHUP was noted (mgr_api_auth_hup). A good file replaces the
 * table (sessions of tokens no longer there end); a bad one closes the API
 * until a good one. Logs what changed. Any thread; every check below calls
 * it first. */
void mgr_api_auth_refresh(struct mgr_api_auth *a, int64_t now, bool force);
/* Notes a reload asked for: the next refresh reads the file. Async-signal-safe. */
void mgr_api_auth_hup(struct mgr_api_auth *a);
/* Whether the API is closed by a bad tokens file; why (cap bytes) then says why. */
bool mgr_api_auth_closed(struct mgr_api_auth *a, char *why, size_t cap);
/* Checks a request: authz its Authorization header (or NULL), session its
 * MGR_API_SESSION_COOKIE cookie (or NULL; used when authz is not Bearer: an
 * unknown or expired one is MGR_API_AUTH_WRONG), write true for a method
 * beyond GET and HEAD, peer its address (may be NULL), now monotonic
 * seconds. *tok a copy of the token's entry when one matched (zeroed
 * otherwise). A failure is logged (the peer, the method, the URL, never
 * the token) and counted; MGR_API_AUTH_CLOSED is neither. Any thread. */
enum mgr_api_auth_result mgr_api_auth_check(struct mgr_api_auth *a, const char *authz,
                                            const char *session, bool write,
                                            const struct sockaddr *peer, int64_t now,
                                            const char *method, const char *url,
                                            struct mgr_api_token *tok);
/* Sign-in: token (len bytes, from the request's body) checked as a Bearer
 * token is, failures throttled and counted the same; when it is known, a
 * new session for it with its id in id. MGR_API_AUTH_OK (then *tok), _WRONG
 * (also for an empty token), _THROTTLED, _CLOSED or _ERROR. Any thread. */
enum mgr_api_auth_result mgr_api_auth_signin(struct mgr_api_auth *a, const char *token, size_t len,
                                             const struct sockaddr *peer, int64_t now,
                                             const char *url, struct mgr_api_token *tok,
                                             char id[MGR_API_SESSION_ID_LEN + 1]);
/* A request that came with a client certificate verified against
 * --http-client-ca, cn its subject CN: MGR_API_AUTH_OK (a copy of its line
 * in *tok), _SCOPE, _CLOSED, or _MISSING when no "cert" line names it (the
 * request then goes on to its token or session). Logged as the others. Any
 * thread. */
enum mgr_api_auth_result mgr_api_auth_check_cert(struct mgr_api_auth *a, const char *cn, bool write,
                                                 const struct sockaddr *peer, int64_t now,
                                                 const char *method, const char *url,
                                                 struct mgr_api_token *tok);
/* The client certificate of a TLS session (a gnutls_session_t): true, its
 * subject CN in cn (cap bytes), when the peer sent one that GnuTLS verifies
 * against the session's trusted CA (--http-client-ca), valid now and for
 * TLS client authentication; false otherwise, why (wcap bytes) then says
 * why ("" when none was sent). */
bool mgr_api_client_cert(void *tls_session, char *cn, size_t cap, char *why, size_t wcap);
/* The same for a request of libmicrohttpd (conn a struct MHD_Connection *;
 * with --http-client-ca): one sent that fails the check is logged, at most
 * one line every 10 s (a client could send one per request). */
bool mgr_api_request_cert(void *conn, char *cn, size_t cap);

/* Whether session (NULL-safe) is a live session's id whose token the file
 * still has; nothing counted. */
bool mgr_api_auth_session_live(struct mgr_api_auth *a, const char *session, int64_t now);
/* Whether a credential accepted earlier still holds (an open event stream
 * asks): the tokens file usable, tok's line (a certificate's name, else its
 * token's hash) still in it, and session (NULL-safe: when the request came
 * with one) still live. Reads the file again first if it changed; nothing
 * counted or logged. Any thread. */
bool mgr_api_auth_still(struct mgr_api_auth *a, const struct mgr_api_token *tok,
                        const char *session, int64_t now);
/* What lets an open event stream go on: allowed(arg), asked before each event
 * and keep-alive and at least once a second, ends it when false (a revoked
 * token or session); free(arg) once the stream is gone. */
struct mgr_api_gate {
    bool (*allowed)(void *arg);
    void (*free)(void *arg);
    void *arg;
};
/* A gate in *out that allows while mgr_api_auth_still(a, tok, session) does
 * (its own copies). 0, or -ENOMEM. */
int mgr_api_auth_gate(struct mgr_api_auth *a, const struct mgr_api_token *tok, const char *session,
                      struct mgr_api_gate *out);
/* Sign-out: removes the session whose id is session. true when there was one. */
bool mgr_api_auth_signout(struct mgr_api_auth *a, const char *session);

/* The certificate and key of the API's HTTPS, as PEM text. */
struct mgr_api_tls {
    char *cert, *key;
    char *client_ca; /* --http-client-ca, or NULL */
};

/* Reads and checks tls_cert and tls_key (a certificate, a private key, the
 * one matching the other; a key others may read is warned about), and
 * client_ca (a PEM certificate; it needs tls_cert and tokens), and that
 * libmicrohttpd was built with TLS. 0, or -EINVAL (-ENOMEM) with diag
 * naming the option, the file and the reason. */
int mgr_api_tls_load(const struct mgr_api_auth_opts *o, struct mgr_api_tls *t,
                     struct iof_diag *diag);
/* Frees t's text (the key wiped first); t may be empty. */
void mgr_api_tls_free(struct mgr_api_tls *t);

/* The rule for the API's address: loopback is always served; any other
 * address only with HTTPS (tls) and tokens. 0, or -EACCES with diag
 * ("--http SPEC: ADDR is not a loopback address: ...") naming what to add. */
int mgr_api_bind_check(const char *spec, const char *host, bool loopback, bool tls, bool tokens,
                       struct iof_diag *diag);

#endif
