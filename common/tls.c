/* SPDX-License-Identifier: Apache-2.0 */
/* common/tls.c - TLS 1.3 with mutual certificate authentication over OpenSSL
 * memory BIOs: context loading, the verification policy, session resumption
 * by stateful tickets, handshake, record I/O and one-line reasons for every
 * failure. */
#include "common/tls.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/log.h"
#include "common/os/os.h"

/* A client's ticket for one server address (the peer label of the
 * connection that got it). */
struct tls_ticket {
    struct tls_ticket *next;
    SSL_SESSION *sess; /* owned */
    char peer[96];
};

#define TLS_TICKET_BUCKETS 64

struct iof_tls_ctx {
    SSL_CTX *ssl_ctx;
    unsigned refs;
    enum iof_tls_role role;
    uint32_t handshake_ms;
    char ca_file[512];  /* for messages */
    char own_name[256]; /* the identity in our own certificate */
    /* Client: the latest resumable ticket per server address, allocated on
     * the first ticket; at most IOF_TLS_TICKETS_MAX. */
    struct tls_ticket **tickets;
    size_t ntickets;
    struct iof_tls_counts counts;
};

struct iof_tls_sess {
    struct iof_tls_ctx *ctx;
    SSL *ssl;
    BIO *rbio; /* ciphertext from the peer (owned by ssl) */
    BIO *wbio; /* ciphertext for the peer (owned by ssl) */
    bool server;
    uint8_t first[2]; /* the first bytes of the peer's stream */
    size_t nfirst;
    uint64_t bytes_in;
    bool hs_done;     /* SSL_do_handshake() returned 1 */
    bool offered;     /* client: a stored ticket was offered */
    bool resumed;     /* the handshake resumed a session (no certificates exchanged) */
    bool ticket_seen; /* client: the server sent a ticket, so it accepted us */
    bool established; /* reported to the caller */
    bool failed;
    bool peer_closed; /* the failure is the peer's close_notify: an orderly end */
    /* The first certificate verification failure, recorded by verify_cb. */
    int vfy_err;
    int vfy_depth;
    char vfy_name[IOF_TLS_NAME_MAX]; /* name of the leaf being verified */
    char vfy_subject[IOF_TLS_NAME_MAX];
    char vfy_date[40];
    int alert_rcvd;  /* (level << 8 | description), -1 when none */
    X509 *peer_cert; /* verified, owned */
    char peer_name[IOF_TLS_NAME_MAX];
    bool peer_name_ok;
    char peer[96]; /* address label for messages */
};

/* ---- small helpers ------------------------------------------------------------------------ */

static void openssl_reason(char *buf, size_t cap)
{
    unsigned long e = ERR_peek_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    snprintf(buf, cap, "%s", r ? r : "unknown OpenSSL error");
    ERR_clear_error();
}

/* A name is reported and compared only when it is printable ASCII without
 * quotes or backslashes (it ends up in logs and messages). */
static bool name_copy(char *dst, size_t cap, const unsigned char *src, int len)
{
    if (len <= 0 || (size_t)len >= cap)
        return false;
    for (int i = 0; i < len; i++)
        if (src[i] < 0x20 || src[i] > 0x7e || src[i] == '"' || src[i] == '\\')
            return false;
    memcpy(dst, src, (size_t)len);
    dst[len] = '\0';
    return true;
}

/* First DNS subjectAltName, else subject CN. Returns false when neither is
 * usable (dst is then "" ). */
static bool cert_name(X509 *cert, char *dst, size_t cap)
{
    GENERAL_NAMES *sans;
    bool ok = false;

    dst[0] = '\0';
    if (!cert)
        return false;
    sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    if (sans) {
        for (int i = 0; i < sk_GENERAL_NAME_num(sans) && !ok; i++) {
            const GENERAL_NAME *gn = sk_GENERAL_NAME_value(sans, i);
            if (gn->type == GEN_DNS) {
                ok = name_copy(dst, cap, ASN1_STRING_get0_data(gn->d.dNSName),
                               ASN1_STRING_length(gn->d.dNSName));
                break; /* the first DNS name decides */
            }
        }
        GENERAL_NAMES_free(sans);
        if (ok)
            return true;
    }
    {
        const X509_NAME *subj = X509_get_subject_name(cert);
        int idx = subj ? X509_NAME_get_index_by_NID(subj, NID_commonName, -1) : -1;
        if (idx >= 0) {
            ASN1_STRING *d = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, idx));
            unsigned char *utf8 = NULL;
            int n = ASN1_STRING_to_UTF8(&utf8, d);
            if (n > 0)
                ok = name_copy(dst, cap, utf8, n);
            OPENSSL_free(utf8);
        }
    }
    if (!ok)
        dst[0] = '\0';
    return ok;
}

static void asn1_date(const ASN1_TIME *t, char *buf, size_t cap)
{
    struct tm tm;
    if (t && ASN1_TIME_to_tm(t, &tm) == 1 && strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm))
        return;
    snprintf(buf, cap, "?");
}

/* ---- contexts ----------------------------------------------------------------------------- */

/* fopen() first so a missing or unreadable file gets the errno message
 * rather than an OpenSSL error chain. A private key (key) that its group or
 * others may read or write gets a warning, as OpenSSH refuses one: whoever
 * reads it can pose as this node or manager. */
static int check_readable(const char *what, const char *path, bool key, struct iof_diag *diag)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    char who[64];

    if (!f) {
        int e = errno;
        return iof_diag_set(diag, -e, "cannot read %s %s: %s", what, path, strerror(e));
    }
    if (key && fstat(fileno(f), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)))
        IOF_WARN("private key %s is %s by others than its owner (mode %04o, owner uid %lu): "
                 "whoever can read it can pose as this peer; fix it with: chmod 600 %s",
                 path, st.st_mode & (S_IRGRP | S_IROTH) ? "readable" : "accessible",
                 (unsigned)(st.st_mode & 07777), (unsigned long)st.st_uid, path);
    else if (key && iof_os_key_exposed(path, who, sizeof(who)) > 0) /* Windows: its ACL */
        IOF_WARN("private key %s may be read by %s: whoever can read it can pose as this peer; "
                 "fix it with: icacls \"%s\" /inheritance:r /grant:r \"%%USERNAME%%\":R",
                 path, who, path);
    fclose(f);
    return 0;
}

static int verify_cb(int ok, X509_STORE_CTX *store);
static void info_cb(const SSL *ssl, int where, int ret);
static int new_session_cb(SSL *ssl, SSL_SESSION *sess);

int iof_tls_ctx_new(const struct iof_tls_config *cfg, struct iof_tls_ctx **out,
                    struct iof_diag *diag)
{
    struct iof_tls_ctx *ctx;
    SSL_CTX *sc;
    char why[256];
    int r;
    bool server = cfg->role == IOF_TLS_SERVER;

    *out = NULL;
    if (!cfg->ca_file || !*cfg->ca_file)
        return iof_diag_set(diag, -EINVAL, "TLS needs a CA certificate file");
    if (!cfg->cert_file != !cfg->key_file)
        return iof_diag_set(diag, -EINVAL, "TLS needs both a certificate and its key");
    if (server && !cfg->cert_file)
        return iof_diag_set(diag, -EINVAL, "a TLS server needs a certificate and a key");
    if ((r = check_readable("CA certificate", cfg->ca_file, false, diag)) ||
        (cfg->cert_file && (r = check_readable("certificate", cfg->cert_file, false, diag))) ||
        (cfg->key_file && (r = check_readable("key", cfg->key_file, true, diag))))
        return r;

    ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    ctx->refs = 1;
    ctx->role = cfg->role;
    ctx->handshake_ms = cfg->handshake_ms ? cfg->handshake_ms : IOF_TLS_HANDSHAKE_MS;
    snprintf(ctx->ca_file, sizeof(ctx->ca_file), "%s", cfg->ca_file);

    ERR_clear_error();
    sc = ctx->ssl_ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!sc) {
        free(ctx);
        return iof_diag_set(diag, -ENOMEM, "cannot create a TLS context");
    }
    if (!SSL_CTX_set_min_proto_version(sc, TLS1_3_VERSION) ||
        !SSL_CTX_set_max_proto_version(sc, TLS1_3_VERSION)) {
        openssl_reason(why, sizeof(why));
        r = iof_diag_set(diag, -EINVAL, "this OpenSSL cannot do TLS 1.3: %s", why);
        goto fail;
    }
    SSL_CTX_set_verify(sc, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, verify_cb);
    SSL_CTX_set_verify_depth(sc, 8);
    SSL_CTX_set_max_cert_list(sc, (long)IOF_TLS_HANDSHAKE_MAX);
    SSL_CTX_set_info_callback(sc, info_cb);
    SSL_CTX_set_mode(sc, SSL_MODE_RELEASE_BUFFERS);
    if (server) {
        /* Stateful tickets (SSL_OP_NO_TICKET with TLS 1.3): the session,
         * with the client's verified certificate, stays in this SSL_CTX's
         * cache, in this process's memory only, and the ticket the client
         * gets is its 32-byte id: a ticket from another process (or a
         * restarted one) finds nothing and the handshake is a full one.
         * Against sealed (stateless) tickets this saves sealing the session
         * on every full handshake (~130 of ~1100 us of the server's CPU,
         * tests/bench/tls-handshake) and unsealing it, certificate and all,
         * on every resumption (~360 of ~600 us); a resumption adds the
         * session it made, for its own ticket, until the lifetime ends. At
         * most IOF_TLS_SESSIONS_MAX sessions, the oldest go first. One
         * ticket per handshake: its arrival also tells the client that we
         * accepted its certificate (see iof_tls_sess_handshake). The session
         * id context must be set for a server that verifies client
         * certificates to resume at all. */
        static const unsigned char sid_ctx[] = "iofleet";
        SSL_CTX_set_options(sc, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(sc, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(sc, IOF_TLS_SESSIONS_MAX);
        SSL_CTX_set_num_tickets(sc, 1);
        SSL_CTX_set_timeout(sc, IOF_TLS_TICKET_LIFETIME_S);
        if (SSL_CTX_set_session_id_context(sc, sid_ctx, sizeof(sid_ctx) - 1) != 1) {
            openssl_reason(why, sizeof(why));
            r = iof_diag_set(diag, -EINVAL, "cannot set the TLS session context: %s", why);
            goto fail;
        }
    } else {
        /* The callback sees the server's tickets and keeps the latest
         * resumable one per server address (ctx->tickets), not OpenSSL's
         * internal cache. */
        SSL_CTX_set_session_cache_mode(sc,
                                       SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(sc, new_session_cb);
    }

    if (SSL_CTX_load_verify_locations(sc, cfg->ca_file, NULL) != 1) {
        openssl_reason(why, sizeof(why));
        r = iof_diag_set(diag, -EBADMSG, "cannot read CA certificate %s: %s", cfg->ca_file, why);
        goto fail;
    }
    if (server) {
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->ca_file);
        if (names)
            SSL_CTX_set_client_CA_list(sc, names);
        ERR_clear_error();
    }
    if (cfg->cert_file) {
        if (SSL_CTX_use_certificate_chain_file(sc, cfg->cert_file) != 1) {
            openssl_reason(why, sizeof(why));
            r = iof_diag_set(diag, -EBADMSG, "cannot read certificate %s: %s", cfg->cert_file, why);
            goto fail;
        }
        if (SSL_CTX_use_PrivateKey_file(sc, cfg->key_file, SSL_FILETYPE_PEM) != 1) {
            unsigned long e = ERR_peek_last_error();
            if (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH) {
                ERR_clear_error();
                r = iof_diag_set(diag, -EBADMSG, "key %s does not match certificate %s",
                                 cfg->key_file, cfg->cert_file);
            } else {
                openssl_reason(why, sizeof(why));
                r = iof_diag_set(diag, -EBADMSG, "cannot read key %s: %s", cfg->key_file, why);
            }
            goto fail;
        }
        if (SSL_CTX_check_private_key(sc) != 1) {
            ERR_clear_error();
            r = iof_diag_set(diag, -EBADMSG, "key %s does not match certificate %s", cfg->key_file,
                             cfg->cert_file);
            goto fail;
        }
        cert_name(SSL_CTX_get0_certificate(sc), ctx->own_name, sizeof(ctx->own_name));
    }
    *out = ctx;
    return 0;
fail:
    SSL_CTX_free(sc);
    free(ctx);
    ERR_clear_error();
    return r;
}

int iof_tls_config_load(struct iof_tls_config *cfg, const char *ca, const char *cert,
                        const char *key, bool server, struct iof_tls_ctx **out,
                        struct iof_diag *diag)
{
    struct iof_tls_config local = {0};
    if (!cfg)
        cfg = &local;
    cfg->ca_file = ca;
    cfg->cert_file = cert;
    cfg->key_file = key;
    cfg->role = server ? IOF_TLS_SERVER : IOF_TLS_CLIENT;
    return iof_tls_ctx_new(cfg, out, diag);
}

struct iof_tls_ctx *iof_tls_ctx_ref(struct iof_tls_ctx *ctx)
{
    ctx->refs++;
    return ctx;
}

static void tickets_free(struct iof_tls_ctx *ctx)
{
    if (!ctx->tickets)
        return;
    for (size_t b = 0; b < TLS_TICKET_BUCKETS; b++)
        for (struct tls_ticket *t = ctx->tickets[b], *n; t; t = n) {
            n = t->next;
            SSL_SESSION_free(t->sess);
            free(t);
        }
    free(ctx->tickets);
    ctx->tickets = NULL;
    ctx->ntickets = 0;
}

void iof_tls_ctx_free(struct iof_tls_ctx *ctx)
{
    if (!ctx || --ctx->refs)
        return;
    tickets_free(ctx);
    SSL_CTX_free(ctx->ssl_ctx);
    free(ctx);
}

void iof_tls_ctx_counts(const struct iof_tls_ctx *ctx, struct iof_tls_counts *out)
{
    *out = ctx->counts;
}

size_t iof_tls_ctx_sessions(const struct iof_tls_ctx *ctx)
{
    return ctx->role == IOF_TLS_SERVER ? (size_t)SSL_CTX_sess_number(ctx->ssl_ctx) : 0;
}

size_t iof_tls_ctx_tickets(const struct iof_tls_ctx *ctx)
{
    return ctx->ntickets;
}

void iof_tls_ctx_forget_tickets(struct iof_tls_ctx *ctx)
{
    tickets_free(ctx);
}

static size_t ticket_bucket(const char *peer);
static struct tls_ticket *ticket_take(struct iof_tls_ctx *ctx, const char *peer);
static bool ticket_put(struct iof_tls_ctx *ctx, const char *peer, SSL_SESSION *sess);

int iof_tls_ctx_ticket_export(struct iof_tls_ctx *ctx, const char *peer, uint8_t **der, size_t *len)
{
    struct tls_ticket *t = ticket_take(ctx, peer);
    unsigned char *p = NULL;
    int n;

    *der = NULL;
    *len = 0;
    if (!t)
        return -ENOENT;
    n = i2d_SSL_SESSION(t->sess, &p);
    if (!ticket_put(ctx, peer, t->sess))
        SSL_SESSION_free(t->sess);
    free(t);
    if (n <= 0) {
        ERR_clear_error();
        return -ENOMEM;
    }
    *der = malloc((size_t)n);
    if (*der) {
        memcpy(*der, p, (size_t)n);
        *len = (size_t)n;
    }
    OPENSSL_free(p);
    return *der ? 0 : -ENOMEM;
}

int iof_tls_ctx_ticket_import(struct iof_tls_ctx *ctx, const char *peer, const uint8_t *der,
                              size_t len)
{
    const unsigned char *p = der;
    SSL_SESSION *sess;

    if (ctx->role != IOF_TLS_CLIENT || len > (size_t)INT32_MAX)
        return -EINVAL;
    sess = d2i_SSL_SESSION(NULL, &p, (long)len);
    if (!sess) {
        ERR_clear_error();
        return -EINVAL;
    }
    if (!ticket_put(ctx, peer, sess)) {
        SSL_SESSION_free(sess);
        return -ENOMEM;
    }
    return 0;
}

static size_t ticket_bucket(const char *peer)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *p = peer; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return h % TLS_TICKET_BUCKETS;
}

/* Unlinks and returns the ticket stored for peer (the caller owns it), or
 * NULL. A ticket is offered once: the server sends a new one on resumption. */
static struct tls_ticket *ticket_take(struct iof_tls_ctx *ctx, const char *peer)
{
    struct tls_ticket **pp;
    if (!ctx->tickets)
        return NULL;
    for (pp = &ctx->tickets[ticket_bucket(peer)]; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->peer, peer)) {
            struct tls_ticket *t = *pp;
            *pp = t->next;
            ctx->ntickets--;
            return t;
        }
    return NULL;
}

/* Stores sess (takes the caller's reference) as peer's ticket, replacing an
 * older one. When the table is full, the bucket's oldest ticket goes. Returns
 * false when out of memory (sess not taken). */
static bool ticket_put(struct iof_tls_ctx *ctx, const char *peer, SSL_SESSION *sess)
{
    struct tls_ticket *t = ticket_take(ctx, peer), **pp;
    if (!ctx->tickets && !(ctx->tickets = calloc(TLS_TICKET_BUCKETS, sizeof(*ctx->tickets))))
        return false;
    if (!t && !(t = calloc(1, sizeof(*t))))
        return false;
    SSL_SESSION_free(t->sess);
    t->sess = sess;
    snprintf(t->peer, sizeof(t->peer), "%s", peer);
    pp = &ctx->tickets[ticket_bucket(peer)];
    if (ctx->ntickets >= IOF_TLS_TICKETS_MAX && *pp) {
        struct tls_ticket **last = pp;
        while ((*last)->next)
            last = &(*last)->next;
        SSL_SESSION_free((*last)->sess);
        free(*last);
        *last = NULL;
        ctx->ntickets--;
    }
    t->next = *pp;
    *pp = t;
    ctx->ntickets++;
    return true;
}

const char *iof_tls_ctx_own_name(const struct iof_tls_ctx *ctx)
{
    return ctx->own_name[0] ? ctx->own_name : NULL;
}

enum iof_tls_role iof_tls_ctx_role(const struct iof_tls_ctx *ctx)
{
    return ctx->role;
}

uint32_t iof_tls_ctx_handshake_ms(const struct iof_tls_ctx *ctx)
{
    return ctx->handshake_ms;
}

enum iof_tls_sniff iof_tls_sniff(const uint8_t *bytes, size_t n)
{
    if (n < 2)
        return IOF_TLS_SNIFF_MORE;
    if (bytes[1] == 0x03 && bytes[0] == 0x16)
        return IOF_TLS_SNIFF_HANDSHAKE;
    if (bytes[1] == 0x03 && bytes[0] == 0x15)
        return IOF_TLS_SNIFF_ALERT;
    return IOF_TLS_SNIFF_OTHER;
}

/* ---- OpenSSL callbacks -------------------------------------------------------------------- */

static int verify_cb(int ok, X509_STORE_CTX *store)
{
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    struct iof_tls_sess *s = ssl ? SSL_get_app_data(ssl) : NULL;
    X509 *cur;

    if (ok || !s || s->vfy_err)
        return ok;
    s->vfy_err = X509_STORE_CTX_get_error(store);
    s->vfy_depth = X509_STORE_CTX_get_error_depth(store);
    cur = X509_STORE_CTX_get_current_cert(store);
    if (!cert_name(X509_STORE_CTX_get0_cert(store), s->vfy_name, sizeof(s->vfy_name)))
        snprintf(s->vfy_name, sizeof(s->vfy_name), "?");
    if (!cert_name(cur, s->vfy_subject, sizeof(s->vfy_subject)))
        snprintf(s->vfy_subject, sizeof(s->vfy_subject), "?");
    if (s->vfy_err == X509_V_ERR_CERT_NOT_YET_VALID)
        asn1_date(cur ? X509_get0_notBefore(cur) : NULL, s->vfy_date, sizeof(s->vfy_date));
    else
        asn1_date(cur ? X509_get0_notAfter(cur) : NULL, s->vfy_date, sizeof(s->vfy_date));
    return ok;
}

static void info_cb(const SSL *ssl, int where, int ret)
{
    struct iof_tls_sess *s = SSL_get_app_data(ssl);
    if (s && (where & SSL_CB_READ_ALERT) == SSL_CB_READ_ALERT && s->alert_rcvd < 0)
        s->alert_rcvd = ret & 0xffff;
}

/* Client: a ticket arrived (after every handshake the server accepted).
 * A copy is kept: sess is also the connection's own session, which OpenSSL
 * marks not resumable when the connection ends without a close_notify, and
 * a lost link is exactly when the ticket is wanted. */
static int new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
    struct iof_tls_sess *s = SSL_get_app_data(ssl);
    SSL_SESSION *copy;
    if (!s)
        return 0;
    s->ticket_seen = true;
    if (s->failed || !SSL_SESSION_is_resumable(sess) || !(copy = SSL_SESSION_dup(sess)))
        return 0;
    if (!ticket_put(s->ctx, s->peer, copy))
        SSL_SESSION_free(copy);
    return 0;
}

/* ---- sessions ----------------------------------------------------------------------------- */

struct iof_tls_sess *iof_tls_sess_new(struct iof_tls_ctx *ctx, const char *peer)
{
    struct iof_tls_sess *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->ssl = SSL_new(ctx->ssl_ctx);
    s->rbio = BIO_new(BIO_s_mem());
    s->wbio = BIO_new(BIO_s_mem());
    if (!s->ssl || !s->rbio || !s->wbio) {
        BIO_free(s->rbio);
        BIO_free(s->wbio);
        SSL_free(s->ssl);
        free(s);
        ERR_clear_error();
        return NULL;
    }
    /* An empty read BIO means "retry later", not EOF. */
    BIO_set_mem_eof_return(s->rbio, -1);
    SSL_set_bio(s->ssl, s->rbio, s->wbio);
    SSL_set_app_data(s->ssl, s);
    s->server = ctx->role == IOF_TLS_SERVER;
    if (s->server)
        SSL_set_accept_state(s->ssl);
    else
        SSL_set_connect_state(s->ssl);
    s->alert_rcvd = -1;
    s->ctx = ctx;
    ctx->refs++;
    snprintf(s->peer, sizeof(s->peer), "%s", peer ? peer : "?");
    if (!s->server) {
        /* Offer the ticket this server gave us last time, if any. A server
         * that no longer holds its session (another process) answers with
         * a full handshake, certificates and all. */
        struct tls_ticket *t = ticket_take(ctx, s->peer);
        if (t) {
            s->offered = SSL_SESSION_is_resumable(t->sess) && SSL_set_session(s->ssl, t->sess);
            SSL_SESSION_free(t->sess);
            free(t);
            ERR_clear_error();
        }
    }
    return s;
}

void iof_tls_sess_free(struct iof_tls_sess *s)
{
    if (!s)
        return;
    /* SSL_free() drops the session from the server's cache unless we sent
     * a close_notify: right for a session that failed, wrong for a lost
     * link or one the client closed, which is when its ticket is wanted. */
    if (s->server && s->established && (!s->failed || s->peer_closed))
        SSL_set_shutdown(s->ssl, SSL_get_shutdown(s->ssl) | SSL_SENT_SHUTDOWN);
    SSL_free(s->ssl);
    X509_free(s->peer_cert);
    iof_tls_ctx_free(s->ctx);
    free(s);
}

static int sess_fail(struct iof_tls_sess *s, int err, struct iof_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int sess_fail(struct iof_tls_sess *s, int err, struct iof_diag *diag, const char *fmt, ...)
{
    va_list ap;
    s->failed = true;
    if (diag) {
        va_start(ap, fmt);
        vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
        va_end(ap);
    }
    ERR_clear_error();
    return err;
}

/* The peer, for messages: its address and, once known, its certificate name. */
static const char *sess_label(const struct iof_tls_sess *s, const char *name, char *buf, size_t cap)
{
    if (name && *name && strcmp(name, "?"))
        snprintf(buf, cap, "%s (\"%s\")", s->peer, name);
    else
        snprintf(buf, cap, "%s", s->peer);
    return buf;
}

static const char *not_tls_hint(const uint8_t first[2])
{
    if (first[0] == 'I' && first[1] == 'F')
        return "a plain iofleet peer: configure TLS on it, or pass --insecure to both sides";
    return "not TLS at all";
}

int iof_tls_sess_feed(struct iof_tls_sess *s, const uint8_t *buf, size_t len, struct iof_diag *diag)
{
    static const uint8_t alert_protocol_version[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 70};
    size_t pending;

    if (s->failed)
        return sess_fail(s, IOF_EPROTO, diag, "TLS session already failed");
    if (s->nfirst < 2 && len > 0) {
        /* Check the first two bytes of the stream before OpenSSL sees them. */
        size_t take = len < 2 - s->nfirst ? len : 2 - s->nfirst;
        memcpy(s->first + s->nfirst, buf, take);
        s->nfirst += take;
        if (s->nfirst == 2) {
            enum iof_tls_sniff k = iof_tls_sniff(s->first, 2);
            if (s->server && k != IOF_TLS_SNIFF_HANDSHAKE) {
                /* A plain iofleet peer will see an alert record, which its
                 * frame decoder reports as TLS on a plain connection. */
                BIO_write(s->wbio, alert_protocol_version, sizeof(alert_protocol_version));
                return sess_fail(s, IOF_EPROTO, diag, "%s from %s (first bytes 0x%02x 0x%02x: %s)",
                                 IOF_TLS_MSG_PLAIN_ON_TLS, s->peer, s->first[0], s->first[1],
                                 not_tls_hint(s->first));
            }
            if (!s->server && k == IOF_TLS_SNIFF_OTHER)
                return sess_fail(s, IOF_EPROTO, diag,
                                 "%s is not speaking TLS (first bytes 0x%02x 0x%02x: %s)", s->peer,
                                 s->first[0], s->first[1], not_tls_hint(s->first));
        }
    }
    if (!s->hs_done && s->bytes_in + len > IOF_TLS_HANDSHAKE_MAX)
        return sess_fail(s, IOF_ETOOBIG, diag, "%s sent more than %zu KiB during the TLS handshake",
                         s->peer, IOF_TLS_HANDSHAKE_MAX >> 10);
    pending = BIO_ctrl_pending(s->rbio);
    if (pending + len > IOF_TLS_INBUF_MAX)
        return sess_fail(s, IOF_ETOOBIG, diag, "%s sent more than %zu KiB of unread TLS data",
                         s->peer, IOF_TLS_INBUF_MAX >> 10);
    if (len > (size_t)INT32_MAX || BIO_write(s->rbio, buf, (int)len) != (int)len)
        return sess_fail(s, -ENOMEM, diag, "out of memory");
    s->bytes_in += len;
    return 0;
}

/* OpenSSL 3.0 has no names for the TLS 1.3 alerts. */
static const char *alert_name(int alert)
{
    switch (alert & 0xff) {
    case TLS13_AD_CERTIFICATE_REQUIRED:
        return "certificate required";
    case TLS13_AD_MISSING_EXTENSION:
        return "missing extension";
    default:
        return SSL_alert_desc_string_long(alert);
    }
}

/* Explains a received alert: the peer refused us. */
static int alert_error(struct iof_tls_sess *s, struct iof_diag *diag)
{
    int desc = s->alert_rcvd & 0xff;
    const char *name = alert_name(s->alert_rcvd);

    switch (desc) {
    case SSL_AD_UNKNOWN_CA:
        return sess_fail(s, -EACCES, diag,
                         "%s refused our certificate: not signed by a CA it trusts (TLS alert "
                         "\"%s\")",
                         s->peer, name);
    case SSL_AD_CERTIFICATE_EXPIRED:
        return sess_fail(s, -EACCES, diag,
                         "%s refused our certificate as expired or not yet valid (TLS alert "
                         "\"%s\")",
                         s->peer, name);
    case TLS13_AD_CERTIFICATE_REQUIRED:
        return sess_fail(s, -EACCES, diag,
                         "%s requires a certificate and we presented none (TLS alert \"%s\")",
                         s->peer, name);
    case SSL_AD_BAD_CERTIFICATE:
    case SSL_AD_UNSUPPORTED_CERTIFICATE:
    case SSL_AD_CERTIFICATE_REVOKED:
    case SSL_AD_CERTIFICATE_UNKNOWN:
    case SSL_AD_ACCESS_DENIED:
        return sess_fail(s, -EACCES, diag, "%s refused our certificate (TLS alert \"%s\")", s->peer,
                         name);
    case SSL_AD_PROTOCOL_VERSION:
        return sess_fail(s, IOF_EPROTO, diag, "%s does not accept TLS 1.3 (TLS alert \"%s\")",
                         s->peer, name);
    case SSL_AD_CLOSE_NOTIFY:
        return sess_fail(s, -EPIPE, diag, "%s closed the TLS session during the handshake",
                         s->peer);
    default:
        return sess_fail(s, IOF_EPROTO, diag, "%s aborted the TLS handshake (TLS alert \"%s\")",
                         s->peer, name);
    }
}

/* Explains our own verification failure of the peer's certificate. */
static int verify_error(struct iof_tls_sess *s, struct iof_diag *diag)
{
    char who[IOF_TLS_NAME_MAX + 128];
    char chain[IOF_TLS_NAME_MAX + 64] = "";

    sess_label(s, s->vfy_name, who, sizeof(who));
    if (s->vfy_depth > 0)
        snprintf(chain, sizeof(chain), " (CA certificate \"%s\" in its chain)", s->vfy_subject);
    switch (s->vfy_err) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
        return sess_fail(s, -EACCES, diag,
                         "certificate of %s is not signed by the configured CA (%s)", who,
                         s->ctx->ca_file);
    case X509_V_ERR_CERT_HAS_EXPIRED:
        return sess_fail(s, -EACCES, diag, "certificate of %s%s expired on %s", who, chain,
                         s->vfy_date);
    case X509_V_ERR_CERT_NOT_YET_VALID:
        return sess_fail(s, -EACCES, diag,
                         "certificate of %s%s is not valid before %s (check the clocks)", who,
                         chain, s->vfy_date);
    default:
        return sess_fail(s, -EACCES, diag, "certificate of %s%s refused: %s", who, chain,
                         X509_verify_cert_error_string(s->vfy_err));
    }
}

/* Maps a failed SSL_do_handshake()/SSL_peek() to a message. */
static int handshake_error(struct iof_tls_sess *s, int ret, struct iof_diag *diag)
{
    int e = SSL_get_error(s->ssl, ret);
    unsigned long err = ERR_peek_error();
    char why[256];

    if (s->vfy_err)
        return verify_error(s, diag);
    if (s->alert_rcvd >= 0)
        return alert_error(s, diag);
    if (e == SSL_ERROR_ZERO_RETURN)
        return sess_fail(s, -EPIPE, diag, "%s closed the TLS session during the handshake",
                         s->peer);
    if (ERR_GET_LIB(err) == ERR_LIB_SSL) {
        switch (ERR_GET_REASON(err)) {
        case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
            return sess_fail(s, -EACCES, diag, "%s presented no certificate", s->peer);
        case SSL_R_UNSUPPORTED_PROTOCOL:
        case SSL_R_NO_PROTOCOLS_AVAILABLE:
        case SSL_R_WRONG_SSL_VERSION:
            return sess_fail(s, IOF_EPROTO, diag, "%s does not speak TLS 1.3", s->peer);
        case SSL_R_WRONG_VERSION_NUMBER:
        case SSL_R_PACKET_LENGTH_TOO_LONG:
        case SSL_R_RECORD_LENGTH_MISMATCH:
        case SSL_R_HTTP_REQUEST:
            return sess_fail(s, IOF_EPROTO, diag, "%s is not speaking TLS (%s)", s->peer,
                             ERR_reason_error_string(err));
        case SSL_R_EXCESSIVE_MESSAGE_SIZE:
            return sess_fail(s, IOF_ETOOBIG, diag,
                             "%s sent a TLS handshake message over the %zu KiB limit", s->peer,
                             IOF_TLS_HANDSHAKE_MAX >> 10);
        default:
            break;
        }
    }
    if (e == SSL_ERROR_SYSCALL && !err)
        return sess_fail(s, -EPIPE, diag, "%s closed the connection during the TLS handshake",
                         s->peer);
    openssl_reason(why, sizeof(why));
    return sess_fail(s, IOF_EPROTO, diag, "TLS handshake with %s failed: %s", s->peer, why);
}

/* The handshake is complete on our side: keep the verified certificate. */
static int sess_accept_peer(struct iof_tls_sess *s, struct iof_diag *diag)
{
    X509 *cert = SSL_get1_peer_certificate(s->ssl);
    if (!cert)
        return sess_fail(s, -EACCES, diag, "%s presented no certificate", s->peer);
    if (SSL_get_verify_result(s->ssl) != X509_V_OK) {
        X509_free(cert);
        return sess_fail(s, -EACCES, diag, "certificate of %s failed verification: %s", s->peer,
                         X509_verify_cert_error_string(SSL_get_verify_result(s->ssl)));
    }
    s->resumed = SSL_session_reused(s->ssl) == 1;
    if (s->resumed && X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0) {
        /* The chain was verified when the ticket was issued; a certificate
         * that has expired since then no longer authenticates anybody. */
        char date[40], who[IOF_TLS_NAME_MAX + 128], name[IOF_TLS_NAME_MAX];
        asn1_date(X509_get0_notAfter(cert), date, sizeof(date));
        cert_name(cert, name, sizeof(name));
        X509_free(cert);
        return sess_fail(s, -EACCES, diag, "certificate of %s expired on %s (resumed session)",
                         sess_label(s, name, who, sizeof(who)), date);
    }
    s->peer_cert = cert;
    s->peer_name_ok = cert_name(cert, s->peer_name, sizeof(s->peer_name));
    return 0;
}

int iof_tls_sess_handshake(struct iof_tls_sess *s, struct iof_diag *diag)
{
    int r;

    if (s->established)
        return 1;
    if (s->failed)
        return sess_fail(s, IOF_EPROTO, diag, "TLS session already failed");
    if (!s->hs_done) {
        ERR_clear_error();
        r = SSL_do_handshake(s->ssl);
        if (r != 1) {
            int e = SSL_get_error(s->ssl, r);
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                return handshake_error(s, r, diag);
            if (BIO_ctrl_pending(s->rbio) > IOF_TLS_HANDSHAKE_MAX)
                return sess_fail(s, IOF_ETOOBIG, diag,
                                 "%s sent more than %zu KiB during the TLS handshake", s->peer,
                                 IOF_TLS_HANDSHAKE_MAX >> 10);
            return 0;
        }
        s->hs_done = true;
        if ((r = sess_accept_peer(s, diag)) < 0)
            return r;
    }
    if (!s->server && !s->ticket_seen) {
        /* In TLS 1.3 the client finishes before the server has checked its
         * certificate. Wait for the server's ticket (sent once it accepted
         * us) or its first data; a refusal arrives as an alert instead. */
        uint8_t b;
        ERR_clear_error();
        r = SSL_peek(s->ssl, &b, 1);
        if (r <= 0) {
            int e = SSL_get_error(s->ssl, r);
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                return handshake_error(s, r, diag);
            if (!s->ticket_seen)
                return 0;
        }
    }
    s->established = true;
    if (s->resumed)
        s->ctx->counts.resumed++;
    else
        s->ctx->counts.full++;
    if (s->offered && !s->resumed)
        s->ctx->counts.refused_tickets++;
    return 1;
}

ssize_t iof_tls_sess_read(struct iof_tls_sess *s, uint8_t *buf, size_t cap, struct iof_diag *diag)
{
    int r, e;
    char why[256];

    if (!s->established || s->failed)
        return sess_fail(s, -ENOTCONN, diag, "TLS session not established");
    ERR_clear_error();
    r = SSL_read(s->ssl, buf, cap > INT32_MAX ? INT32_MAX : (int)cap);
    if (r > 0)
        return r;
    e = SSL_get_error(s->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    if (e == SSL_ERROR_ZERO_RETURN) {
        s->peer_closed = true;
        return sess_fail(s, -EPIPE, diag, "%s closed the TLS session", s->peer);
    }
    if (s->alert_rcvd >= 0)
        return sess_fail(s, IOF_EPROTO, diag, "%s sent TLS alert \"%s\"", s->peer,
                         alert_name(s->alert_rcvd));
    openssl_reason(why, sizeof(why));
    return sess_fail(s, IOF_EPROTO, diag, "TLS error from %s: %s", s->peer, why);
}

bool iof_tls_sess_has_input(const struct iof_tls_sess *s)
{
    return SSL_has_pending(s->ssl) || BIO_ctrl_pending(s->rbio) > 0;
}

int iof_tls_sess_write(struct iof_tls_sess *s, const void *buf, size_t len, struct iof_diag *diag)
{
    const uint8_t *p = buf;
    char why[256];

    if (!s->established || s->failed)
        return sess_fail(s, -ENOTCONN, diag, "TLS session not established");
    while (len > 0) {
        int chunk = len > ((size_t)1 << 20) ? 1 << 20 : (int)len;
        int r;
        ERR_clear_error();
        r = SSL_write(s->ssl, p, chunk);
        if (r <= 0) {
            openssl_reason(why, sizeof(why));
            return sess_fail(s, SSL_get_error(s->ssl, r) == SSL_ERROR_SSL ? IOF_EPROTO : -ENOMEM,
                             diag, "TLS write to %s failed: %s", s->peer, why);
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

void iof_tls_sess_shutdown(struct iof_tls_sess *s)
{
    if (s && s->established && !s->failed) {
        ERR_clear_error();
        SSL_shutdown(s->ssl);
        ERR_clear_error();
    }
}

size_t iof_tls_sess_out_pending(const struct iof_tls_sess *s)
{
    return BIO_ctrl_pending(s->wbio);
}

size_t iof_tls_sess_out_take(struct iof_tls_sess *s, uint8_t *buf, size_t cap)
{
    int n = BIO_read(s->wbio, buf, cap > INT32_MAX ? INT32_MAX : (int)cap);
    return n > 0 ? (size_t)n : 0;
}

int iof_tls_sess_eof(struct iof_tls_sess *s, int err, struct iof_diag *diag)
{
    if (s->failed)
        return IOF_EPROTO;
    if (s->server) {
        if (s->bytes_in == 0)
            return sess_fail(s, err ? err : -EPIPE, diag,
                             "%s closed the connection before the TLS handshake%s%s", s->peer,
                             err ? ": " : "", err ? strerror(-err) : "");
        return sess_fail(s, err ? err : -EPIPE, diag,
                         "%s closed the connection during the TLS handshake%s%s", s->peer,
                         err ? ": " : "", err ? strerror(-err) : "");
    }
    if (s->bytes_in == 0)
        return sess_fail(s, IOF_EPROTO, diag,
                         "%s closed the connection without answering the TLS handshake%s%s (is "
                         "it a plain iofleet peer, or does it refuse this address?)",
                         s->peer, err ? ": " : "", err ? strerror(-err) : "");
    if (s->hs_done)
        return sess_fail(s, -EACCES, diag,
                         "%s closed the connection after the TLS handshake without accepting "
                         "our certificate%s%s",
                         s->peer, err ? ": " : "", err ? strerror(-err) : "");
    return sess_fail(s, err ? err : -EPIPE, diag,
                     "%s closed the connection during the TLS handshake%s%s", s->peer,
                     err ? ": " : "", err ? strerror(-err) : "");
}

bool iof_tls_sess_established(const struct iof_tls_sess *s)
{
    return s->established;
}

bool iof_tls_sess_resumed(const struct iof_tls_sess *s)
{
    return s->established && s->resumed;
}

const char *iof_tls_sess_peer_name(const struct iof_tls_sess *s)
{
    return s->established && s->peer_name_ok ? s->peer_name : NULL;
}

bool iof_tls_sess_peer_has_cert(const struct iof_tls_sess *s)
{
    return s->established && s->peer_cert;
}

int iof_tls_sess_check_name(const struct iof_tls_sess *s, const char *expected,
                            struct iof_diag *diag)
{
    char shown[IOF_TLS_NAME_MAX];

    if (!s->established || !s->peer_cert)
        return iof_diag_set(diag, -EACCES, "%s is not authenticated", s->peer);
    if (expected && *expected &&
        X509_check_host(s->peer_cert, expected, strlen(expected), X509_CHECK_FLAG_NO_WILDCARDS,
                        NULL) == 1)
        return 0;
    ERR_clear_error();
    if (!s->peer_name_ok)
        snprintf(shown, sizeof(shown), "(unprintable name)");
    else
        snprintf(shown, sizeof(shown), "%s", s->peer_name);
    return iof_diag_set(diag, -EACCES, "%s presented a certificate for '%s', expected '%s'",
                        s->peer, shown, expected ? expected : "");
}
