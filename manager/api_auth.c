/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_auth.c - the API's HTTPS files, tokens and address rule
 * (manager/api_auth.h): TLS files read and checked with OpenSSL before
 * libmicrohttpd is given them, so that a wrong file is named with its
 * reason rather than as a server that will not start; tokens hashed with
 * SHA-256 and compared in constant time (OpenSSL's EVP and CRYPTO_memcmp),
 * made from RAND_bytes. */
#include "manager/api_auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/log.h"

/* The whole of the checked regular file fd (st its size) into *text (new,
 * NUL-terminated); opt and path name it in an error. */
static int auth_read_fd(const char *opt, const char *path, int fd, const struct stat *st,
                        char **text, size_t *len, struct iof_diag *diag)
{
    ssize_t n = 0;

    *len = 0;
    if (!(*text = malloc((size_t)st->st_size + 1)))
        return iof_diag_set(diag, -ENOMEM, "%s %s: out of memory", opt, path);
    while (*len < (size_t)st->st_size &&
           (n = pread(fd, *text + *len, (size_t)st->st_size - *len, (off_t)*len)) > 0)
        *len += (size_t)n;
    (*text)[*len] = '\0';
    if (n < 0) {
        int e = errno;
        OPENSSL_cleanse(*text, *len);
        free(*text);
        *text = NULL;
        return iof_diag_set(diag, -e, "%s %s: %s", opt, path, strerror(e));
    }
    return 0;
}

/* The whole of path (at most MGR_API_TLS_FILE_MAX bytes), NUL-terminated,
 * into *out (new); *mode its permission bits. */
static int auth_read(const char *opt, const char *path, char **out, mode_t *mode,
                     struct iof_diag *diag)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
    struct stat st;
    size_t len;

    *out = NULL;
    if (fd < 0)
        return iof_diag_set(diag, -EINVAL, "%s %s: %s", opt, path, strerror(errno));
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return iof_diag_set(diag, -EINVAL, "%s %s: %s", opt, path, strerror(e));
    }
    if (!S_ISREG(st.st_mode) || st.st_size > (off_t)MGR_API_TLS_FILE_MAX) {
        close(fd);
        return iof_diag_set(diag, -EINVAL, "%s %s: %s", opt, path,
                            S_ISREG(st.st_mode) ? "over 256 KiB: not a PEM file"
                                                : "not a regular file");
    }
    *mode = st.st_mode & 07777;
    rc = auth_read_fd(opt, path, fd, &st, out, &len, diag);
    close(fd);
    if (rc)
        return rc;
    if (strlen(*out) != len) {
        OPENSSL_cleanse(*out, len);
        free(*out);
        *out = NULL;
        return iof_diag_set(diag, -EINVAL, "%s %s: not a PEM file (a NUL byte)", opt, path);
    }
    return 0;
}

/* The last OpenSSL error as text, the queue cleared. */
static const char *auth_ossl(char *buf, size_t cap)
{
    unsigned long e = ERR_peek_last_error();
    snprintf(buf, cap, "no PEM block found");
    if (e)
        ERR_error_string_n(e, buf, cap);
    ERR_clear_error();
    return buf;
}

int mgr_api_tls_load(const struct mgr_api_auth_opts *o, struct mgr_api_tls *t,
                     struct iof_diag *diag)
{
    char why[256];
    X509 *x = NULL;
    EVP_PKEY *k = NULL;
    BIO *b;
    mode_t mode = 0;
    int rc;

    memset(t, 0, sizeof(*t));
    if (!o->tls_cert != !o->tls_key)
        return iof_diag_set(diag, -EINVAL, "HTTPS needs both --http-tls-cert and --http-tls-key");
    if (o->client_ca && !o->tls_cert)
        return iof_diag_set(diag, -EINVAL,
                            "--http-client-ca needs HTTPS: add --http-tls-cert F --http-tls-key F");
    if (!o->tls_cert)
        return 0;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return iof_diag_set(diag, -EINVAL,
                            "--http-tls-cert: this libmicrohttpd was built without TLS");
    if ((rc = auth_read("--http-tls-cert", o->tls_cert, &t->cert, &mode, diag)) ||
        (rc = auth_read("--http-tls-key", o->tls_key, &t->key, &mode, diag)))
        goto fail;
    if (mode & (S_IRWXG | S_IRWXO))
        IOF_WARN("--http-tls-key %s is mode %04o: others than its owner can read it and pose as "
                 "this server; fix it with: chmod 600 %s",
                 o->tls_key, (unsigned)mode, o->tls_key);
    if (!(b = BIO_new_mem_buf(t->cert, -1)) || !(x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
        BIO_free(b);
        rc = iof_diag_set(diag, -EINVAL, "--http-tls-cert %s: not a PEM certificate (%s)",
                          o->tls_cert, auth_ossl(why, sizeof(why)));
        goto fail;
    }
    BIO_free(b);
    if (!(b = BIO_new_mem_buf(t->key, -1)) ||
        !(k = PEM_read_bio_PrivateKey(b, NULL, NULL, (void *)""))) {
        BIO_free(b);
        rc = iof_diag_set(diag, -EINVAL,
                          "--http-tls-key %s: not an unencrypted PEM private key (%s)", o->tls_key,
                          auth_ossl(why, sizeof(why)));
        goto fail;
    }
    BIO_free(b);
    if (X509_check_private_key(x, k) != 1) {
        ERR_clear_error();
        rc = iof_diag_set(diag, -EINVAL, "--http-tls-key %s is not the key of --http-tls-cert %s",
                          o->tls_key, o->tls_cert);
        goto fail;
    }
    if (X509_cmp_current_time(X509_get0_notAfter(x)) <= 0) {
        rc = iof_diag_set(diag, -EINVAL,
                          "--http-tls-cert %s: the certificate has expired (iofleet pki init "
                          "--force issues a new one)",
                          o->tls_cert);
        goto fail;
    }
    if (o->client_ca) {
        X509_free(x);
        x = NULL;
        if (!o->tokens) {
            rc = iof_diag_set(diag, -EINVAL,
                              "--http-client-ca needs --http-tokens: its \"cert NAME SCOPE\" "
                              "lines say which certificates may do what (docs/api.md, Security)");
            goto fail;
        }
        if ((rc = auth_read("--http-client-ca", o->client_ca, &t->client_ca, &mode, diag)))
            goto fail;
        if (!(b = BIO_new_mem_buf(t->client_ca, -1)) ||
            !(x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
            BIO_free(b);
            rc = iof_diag_set(diag, -EINVAL, "--http-client-ca %s: not a PEM certificate (%s)",
                              o->client_ca, auth_ossl(why, sizeof(why)));
            goto fail;
        }
        BIO_free(b);
        if (X509_check_ca(x) < 1) {
            rc = iof_diag_set(diag, -EINVAL,
                              "--http-client-ca %s: not a CA certificate (give the pki's ca.pem)",
                              o->client_ca);
            goto fail;
        }
    }
    X509_free(x);
    EVP_PKEY_free(k);
    return 0;
fail:
    X509_free(x);
    EVP_PKEY_free(k);
    mgr_api_tls_free(t);
    return rc;
}

void mgr_api_tls_free(struct mgr_api_tls *t)
{
    if (t->key)
        OPENSSL_cleanse(t->key, strlen(t->key));
    free(t->key);
    free(t->cert);
    free(t->client_ca);
    t->key = t->cert = t->client_ca = NULL;
}

int mgr_api_bind_check(const char *spec, const char *host, bool loopback, bool tls, bool tokens,
                       struct iof_diag *diag)
{
    if (loopback || (tls && tokens))
        return 0;
    return iof_diag_set(diag, -EACCES,
                        "--http %s: %s is not a loopback address: the API is served elsewhere "
                        "only over HTTPS and with tokens: add %s%s%s (docs/api.md, Security), or "
                        "serve it on 127.0.0.1 or ::1 and reach it through an SSH tunnel",
                        spec, host, tls ? "" : "--http-tls-cert F --http-tls-key F",
                        !tls && !tokens ? " and " : "", tokens ? "" : "--http-tokens F");
}

/* --- tokens ------------------------------------------------------------------------------- */

const char *mgr_api_scope_name(enum mgr_api_scope s)
{
    return s == MGR_API_SCOPE_VIEWER ? "viewer" : s == MGR_API_SCOPE_OPERATOR ? "operator" : NULL;
}

enum mgr_api_scope mgr_api_scope_parse(const char *s)
{
    return !strcmp(s, "viewer")     ? MGR_API_SCOPE_VIEWER
           : !strcmp(s, "operator") ? MGR_API_SCOPE_OPERATOR
                                    : MGR_API_SCOPE_NONE;
}

void mgr_api_token_hash(const char *token, size_t len, unsigned char out[32])
{
    unsigned int n = 32;
    if (EVP_Digest(token, len, out, &n, EVP_sha256(), NULL) != 1)
        memset(out, 0, 32); /* never a token's: every file hash is checked non-zero */
}

/* A token's name: 1..64 of [A-Za-z0-9._-]. NULL, or why not. */
static const char *auth_name_bad(const char *name)
{
    size_t n = strlen(name);
    if (!n)
        return "is empty";
    if (n > 64)
        return "is over 64 characters";
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return "may hold only letters, digits, '.', '_' and '-'";
    }
    return NULL;
}

static int auth_hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A field of a tokens-file line as a message quotes it: never a token
 * pasted in by mistake, nor more than 40 bytes of anything (it may be a
 * secret in the wrong place), which the log would then keep. */
static const char *auth_quote(const char *f, char *q, size_t cap)
{
    if (!strncmp(f, MGR_API_TOKEN_PREFIX, sizeof(MGR_API_TOKEN_PREFIX) - 1))
        snprintf(q, cap, "(a token itself, not shown: the file holds tokens' SHA-256)");
    else if (strlen(f) > 40)
        snprintf(q, cap, "(%zu characters, not shown)", strlen(f));
    else
        snprintf(q, cap, "'%s'", f);
    return q;
}

/* One line's "SCOPE NAME HASH" into e; NULL or why not. */
static const char *auth_line(char *line, struct mgr_api_token *e, char *why, size_t cap)
{
    char *f[4] = {0}, *save = NULL, *w, q[96];
    const char *bad;
    int nf = 0;
    bool zero = true;

    for (w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        if (nf < 4)
            f[nf++] = w;
        else
            nf++;
    if (nf != 3) {
        snprintf(why, cap, "%d fields, not 3 (SCOPE NAME SHA256-HEX, or cert NAME SCOPE)", nf);
        return why;
    }
    if (!strcmp(f[0], "cert")) { /* a client certificate: cert NAME SCOPE */
        e->cert = true;
        if ((bad = auth_name_bad(f[1]))) {
            snprintf(why, cap, "certificate name %s %s", auth_quote(f[1], q, sizeof(q)), bad);
            return why;
        }
        snprintf(e->name, sizeof(e->name), "%s", f[1]);
        if (!(e->scope = mgr_api_scope_parse(f[2]))) {
            snprintf(why, cap, "scope %s is neither viewer nor operator",
                     auth_quote(f[2], q, sizeof(q)));
            return why;
        }
        return NULL;
    }
    if (!(e->scope = mgr_api_scope_parse(f[0]))) {
        snprintf(why, cap, "scope %s is neither viewer nor operator",
                 auth_quote(f[0], q, sizeof(q)));
        return why;
    }
    if ((bad = auth_name_bad(f[1]))) {
        snprintf(why, cap, "name %s %s", auth_quote(f[1], q, sizeof(q)), bad);
        return why;
    }
    snprintf(e->name, sizeof(e->name), "%s", f[1]);
    if (strlen(f[2]) != 64) {
        snprintf(why, cap, "the hash is %zu characters, not 64 hex digits (the token's SHA-256)",
                 strlen(f[2]));
        return why;
    }
    for (int i = 0; i < 32; i++) {
        int hi = auth_hex(f[2][2 * i]), lo = auth_hex(f[2][2 * i + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(why, cap, "the hash holds a character that is not a hex digit");
            return why;
        }
        e->hash[i] = (unsigned char)(hi << 4 | lo);
        zero = zero && !e->hash[i];
    }
    if (zero) {
        snprintf(why, cap, "the hash is all zeros");
        return why;
    }
    return NULL;
}

int mgr_api_tokens_parse(const char *path, const char *text, size_t len, struct mgr_api_tokens *out,
                         struct iof_diag *diag)
{
    char line[512], why[160];
    size_t at = 0, lineno = 0, cap = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    while (at < len && !rc) {
        const char *nl = memchr(text + at, '\n', len - at), *p;
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        struct mgr_api_token e = {0};
        const char *bad;

        lineno++;
        p = text + at;
        at += n + (nl ? 1 : 0);
        if (n && p[n - 1] == '\r')
            n--;
        while (n && (*p == ' ' || *p == '\t'))
            p++, n--;
        if (!n || *p == '#')
            continue;
        if (n >= sizeof(line) || memchr(p, '\0', n)) {
            rc = iof_diag_set(diag, -EINVAL, "%s:%zu: %s", path, lineno,
                              n >= sizeof(line) ? "a line over 511 bytes" : "a NUL byte");
            break;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        if ((bad = auth_line(line, &e, why, sizeof(why)))) {
            rc = iof_diag_set(diag, -EINVAL, "%s:%zu: %s", path, lineno, bad);
            break;
        }
        for (size_t i = 0; i < out->n && !rc; i++) {
            if (out->v[i].cert != e.cert)
                continue; /* a token and a certificate may share a name */
            if (!strcmp(out->v[i].name, e.name))
                rc = iof_diag_set(diag, -EINVAL, "%s:%zu: %s '%s' is on line %u too", path, lineno,
                                  e.cert ? "certificate name" : "name", e.name, out->v[i].line);
            else if (!e.cert && !CRYPTO_memcmp(out->v[i].hash, e.hash, sizeof(e.hash)))
                rc = iof_diag_set(diag, -EINVAL, "%s:%zu: the same hash as line %u ('%s')", path,
                                  lineno, out->v[i].line, out->v[i].name);
        }
        if (rc)
            break;
        if (out->n == MGR_API_TOKENS_MAX) {
            rc = iof_diag_set(diag, -EINVAL, "%s:%zu: more than %u tokens", path, lineno,
                              MGR_API_TOKENS_MAX);
            break;
        }
        if (out->n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            struct mgr_api_token *v = realloc(out->v, nc * sizeof(*v));
            if (!v) {
                rc = iof_diag_set(diag, -ENOMEM, "%s: out of memory", path);
                break;
            }
            out->v = v;
            cap = nc;
        }
        e.line = (unsigned)lineno;
        out->v[out->n++] = e;
    }
    if (!rc && !out->n)
        rc = iof_diag_set(diag, -EINVAL,
                          "%s: no token in it (iofleet serve token new --http-tokens %s adds one)",
                          path, path);
    if (rc)
        mgr_api_tokens_free(out);
    return rc;
}

/* Opens path for reading, or appending (append; *created when it was
 * made, mode 0600), and checks it: a regular file, not a symbolic link,
 * owned by the effective user or root, that no one else may read or write.
 * Returns the descriptor or -errno with diag. */
static int auth_open_tokens(const char *path, bool append, bool *created, struct stat *st,
                            struct iof_diag *diag)
{
    int fl = O_CLOEXEC | O_NOFOLLOW | (append ? O_RDWR | O_APPEND : O_RDONLY);
    int fd = open(path, fl);

    if (created)
        *created = false;
    if (fd < 0 && errno == ENOENT && append) {
        fd = open(path, fl | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 && created)
            *created = true;
    }
    if (fd < 0) {
        int e = errno;
        return iof_diag_set(diag, -e, "--http-tokens %s: %s", path,
                            e == ELOOP ? "a symbolic link (name the file itself)" : strerror(e));
    }
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return iof_diag_set(diag, -EINVAL, "--http-tokens %s: not a regular file", path);
    }
    if (st->st_uid != geteuid() && st->st_uid != 0) {
        close(fd);
        return iof_diag_set(diag, -EINVAL,
                            "--http-tokens %s: owned by uid %lu, not by this user (uid %lu) or "
                            "root: whoever owns it can add a token",
                            path, (unsigned long)st->st_uid, (unsigned long)geteuid());
    }
    if (st->st_mode & (S_IRWXG | S_IRWXO)) {
        close(fd);
        return iof_diag_set(diag, -EINVAL,
                            "--http-tokens %s: mode %04o lets others than its owner %s it: "
                            "fix it with: chmod 600 %s",
                            path, (unsigned)(st->st_mode & 07777),
                            st->st_mode & (S_IWGRP | S_IWOTH) ? "write (add a token to)" : "read",
                            path);
    }
    if (st->st_size > (off_t)MGR_API_TOKENS_FILE_MAX) {
        close(fd);
        return iof_diag_set(diag, -EINVAL, "--http-tokens %s: over 1 MiB", path);
    }
    return fd;
}

int mgr_api_tokens_load(const char *path, struct mgr_api_tokens *out, struct iof_diag *diag)
{
    struct stat st;
    char *text;
    size_t len;
    int fd = auth_open_tokens(path, false, NULL, &st, diag), rc;

    memset(out, 0, sizeof(*out));
    if (fd < 0)
        return fd;
    rc = auth_read_fd("--http-tokens", path, fd, &st, &text, &len, diag);
    close(fd);
    if (rc)
        return rc;
    rc = mgr_api_tokens_parse(path, text, len, out, diag);
    free(text);
    if (rc && diag->msg[0] && strncmp(diag->msg, "--http-tokens ", 14)) {
        char why[sizeof(diag->msg)];
        snprintf(why, sizeof(why), "%s", diag->msg);
        iof_diag_set(diag, rc, "--http-tokens %s", why);
    }
    return rc;
}

void mgr_api_tokens_free(struct mgr_api_tokens *t)
{
    if (t->v)
        OPENSSL_cleanse(t->v, t->n * sizeof(*t->v));
    free(t->v);
    t->v = NULL;
    t->n = 0;
}

const struct mgr_api_token *mgr_api_tokens_find(const struct mgr_api_tokens *t, const char *token,
                                                size_t len)
{
    unsigned char h[32];

    mgr_api_token_hash(token, len, h);
    return mgr_api_tokens_find_hash(t, h);
}

const struct mgr_api_token *mgr_api_tokens_find_hash(const struct mgr_api_tokens *t,
                                                     const unsigned char hash[32])
{
    const struct mgr_api_token *hit = NULL;

    for (size_t i = 0; i < t->n; i++) {
        /* every entry compared, whichever matches */
        int same = !CRYPTO_memcmp(t->v[i].hash, hash, 32);
        if (same && !t->v[i].cert && !hit)
            hit = &t->v[i];
    }
    return hit;
}

const struct mgr_api_token *mgr_api_tokens_find_cert(const struct mgr_api_tokens *t, const char *cn)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].cert && !strcmp(t->v[i].name, cn))
            return &t->v[i];
    return NULL;
}

bool mgr_api_bearer(const char *hdr, const char **tok, size_t *len)
{
    const char *p, *end;

    if (!hdr)
        return false;
    while (*hdr == ' ' || *hdr == '\t')
        hdr++;
    if (strncasecmp(hdr, "Bearer", 6) || (hdr[6] != ' ' && hdr[6] != '\t'))
        return false;
    for (p = hdr + 6; *p == ' ' || *p == '\t'; p++)
        ;
    for (end = p + strlen(p); end > p && (end[-1] == ' ' || end[-1] == '\t'); end--)
        ;
    *tok = p;
    *len = (size_t)(end - p);
    return true;
}

int mgr_api_token_new(const char *path, enum mgr_api_scope scope, const char *name, char *token,
                      struct iof_diag *diag)
{
    static const char head[] = "# iofleet serve --http-tokens: SCOPE NAME SHA256-HEX, one token "
                               "a line (docs/api.md, Security)\n";
    unsigned char raw[32], h[32];
    char line[200], *text = NULL;
    struct mgr_api_tokens t = {0};
    struct stat st;
    bool created;
    const char *bad;
    size_t len = 0, n;
    int fd, rc = 0;

    token[0] = '\0';
    if (!mgr_api_scope_name(scope))
        return iof_diag_set(diag, -EINVAL, "--scope must be viewer or operator");
    if ((bad = auth_name_bad(name)))
        return iof_diag_set(diag, -EINVAL, "--name '%.70s' %s", name, bad);
    if ((fd = auth_open_tokens(path, true, &created, &st, diag)) < 0)
        return fd;
    if (!created && (rc = auth_read_fd("--http-tokens", path, fd, &st, &text, &len, diag)))
        goto out;
    if (len && (rc = mgr_api_tokens_parse(path, text, len, &t, diag)) && t.n == 0 &&
        strstr(diag->msg, ": no token in it"))
        rc = 0; /* only comments so far */
    if (rc)
        goto out;
    for (size_t i = 0; i < t.n; i++)
        if (!t.v[i].cert && !strcmp(t.v[i].name, name)) {
            rc = iof_diag_set(diag, -EEXIST,
                              "--name %s: %s already has a token of that name (line %u); "
                              "remove that line to replace it",
                              name, path, t.v[i].line);
            goto out;
        }
    if (RAND_bytes(raw, sizeof(raw)) != 1) {
        rc = iof_diag_set(diag, IOF_EINTERNAL, "RAND_bytes failed: no random token");
        goto out;
    }
    n = (size_t)snprintf(token, MGR_API_TOKEN_LEN + 1, "%s", MGR_API_TOKEN_PREFIX);
    for (size_t i = 0; i < sizeof(raw); i++)
        n += (size_t)snprintf(token + n, MGR_API_TOKEN_LEN + 1 - n, "%02x", raw[i]);
    OPENSSL_cleanse(raw, sizeof(raw));
    mgr_api_token_hash(token, n, h);
    n = (size_t)snprintf(line, sizeof(line), "%s%s%s %s ", created ? head : "",
                         len && text[len - 1] != '\n' ? "\n" : "", mgr_api_scope_name(scope), name);
    for (size_t i = 0; i < sizeof(h); i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%02x", h[i]);
    n += (size_t)snprintf(line + n, sizeof(line) - n, "\n");
    if (write(fd, line, n) != (ssize_t)n || fsync(fd) < 0) {
        rc = iof_diag_set(diag, -errno, "--http-tokens %s: %s", path, strerror(errno));
        OPENSSL_cleanse(token, MGR_API_TOKEN_LEN);
        token[0] = '\0';
    }
out:
    close(fd);
    if (rc && created)
        unlink(path);
    free(text);
    mgr_api_tokens_free(&t);
    return rc;
}

/* --- requests ----------------------------------------------------------------------------- */

/* The signature of path as lstat sees it now. */
static struct mgr_api_file_sig auth_sig(const char *path)
{
    struct mgr_api_file_sig g = {0};
    struct stat st;

    if (lstat(path, &st) < 0) {
        g.err = errno ? errno : EIO;
        return g;
    }
    g.dev = (uint64_t)st.st_dev;
    g.ino = (uint64_t)st.st_ino;
    g.size = (uint64_t)st.st_size;
    g.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return g;
}

int mgr_api_auth_new(const char *path, struct mgr_api_auth **out, struct iof_diag *diag)
{
    struct mgr_api_auth *a = calloc(1, sizeof(*a));
    int rc;

    *out = NULL;
    if (!a || !(a->path = strdup(path))) {
        free(a);
        return iof_diag_set(diag, -ENOMEM, "--http-tokens %s: out of memory", path);
    }
    a->sig = auth_sig(path);
    if ((rc = mgr_api_tokens_load(path, &a->tokens, diag))) {
        free(a->path);
        free(a);
        return rc == -ENOMEM ? rc : -EINVAL; /* a wrong option's value */
    }
    {
        /* a reload is rare and short: readers must not keep it waiting */
        pthread_rwlockattr_t at;
        pthread_rwlockattr_init(&at);
        pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        pthread_rwlock_init(&a->table_mu, &at);
        pthread_rwlockattr_destroy(&at);
    }
    pthread_mutex_init(&a->reload_mu, NULL);
    pthread_mutex_init(&a->mu, NULL);
    atomic_init(&a->hup, false);
    a->checked = INT64_MIN;
    *out = a;
    return 0;
}

void mgr_api_auth_free(struct mgr_api_auth *a)
{
    if (!a)
        return;
    mgr_api_tokens_free(&a->tokens);
    OPENSSL_cleanse(&a->sessions, sizeof(a->sessions));
    pthread_mutex_destroy(&a->mu);
    pthread_mutex_destroy(&a->reload_mu);
    pthread_rwlock_destroy(&a->table_mu);
    free(a->path);
    free(a);
}

void mgr_api_auth_hup(struct mgr_api_auth *a)
{
    atomic_store(&a->hup, true);
}

bool mgr_api_auth_closed(struct mgr_api_auth *a, char *why, size_t cap)
{
    bool closed;

    pthread_rwlock_rdlock(&a->table_mu);
    closed = a->closed;
    if (why && cap)
        snprintf(why, cap, "%s", closed ? a->why : "");
    pthread_rwlock_unlock(&a->table_mu);
    return closed;
}

/* t's entry for the same token (its hash) or certificate (its name) as e. */
static const struct mgr_api_token *auth_like(const struct mgr_api_tokens *t,
                                             const struct mgr_api_token *e)
{
    return e->cert ? mgr_api_tokens_find_cert(t, e->name) : mgr_api_tokens_find_hash(t, e->hash);
}

/* Reads the file again (reload_mu held): a good one replaces the table and
 * ends the sessions of tokens gone; a bad one closes the API. */
static void auth_reload(struct mgr_api_auth *a)
{
    struct iof_diag d = {{0}};
    struct mgr_api_tokens t, old;
    size_t gone = 0, added = 0, rescoped = 0, ended;
    bool was_closed, same;
    int rc = mgr_api_tokens_load(a->path, &t, &d);

    if (rc) {
        pthread_rwlock_wrlock(&a->table_mu);
        was_closed = a->closed;
        same = was_closed && !strcmp(a->why, d.msg);
        a->closed = true;
        snprintf(a->why, sizeof(a->why), "%s", d.msg);
        pthread_rwlock_unlock(&a->table_mu);
        if (!same)
            IOF_ERROR("--http: %s: every token and session is refused until the file is "
                      "fixed (docs/api.md, Security)",
                      d.msg);
        return;
    }
    /* only this thread writes the table: reading a->tokens needs no lock */
    for (size_t i = 0; i < a->tokens.n; i++) {
        const struct mgr_api_token *o = &a->tokens.v[i], *e = auth_like(&t, o);
        gone += !e;
        rescoped += e && e->scope != o->scope;
    }
    for (size_t i = 0; i < t.n; i++)
        added += !auth_like(&a->tokens, &t.v[i]);
    pthread_rwlock_wrlock(&a->table_mu);
    was_closed = a->closed;
    old = a->tokens;
    a->tokens = t;
    a->closed = false;
    a->why[0] = '\0';
    pthread_mutex_lock(&a->mu);
    ended = mgr_api_session_keep(&a->sessions, &a->tokens);
    pthread_mutex_unlock(&a->mu);
    pthread_rwlock_unlock(&a->table_mu);
    mgr_api_tokens_free(&old);
    IOF_WARN("--http-tokens %s read again%s: %zu line%s (%zu gone, %zu new, %zu with another "
             "scope); %zu session%s ended",
             a->path, was_closed ? " and good: the API is open again" : "", t.n,
             t.n == 1 ? "" : "s", gone, added, rescoped, ended, ended == 1 ? "" : "s");
}

void mgr_api_auth_refresh(struct mgr_api_auth *a, int64_t now, bool force)
{
    struct mgr_api_file_sig g;

    force = atomic_exchange(&a->hup, false) || force;
    pthread_mutex_lock(&a->reload_mu);
    if (!force && now == a->checked) {
        pthread_mutex_unlock(&a->reload_mu);
        return;
    }
    a->checked = now;
    g = auth_sig(a->path);
    if (force || g.dev != a->sig.dev || g.ino != a->sig.ino || g.size != a->sig.size ||
        g.mtime_ns != a->sig.mtime_ns || g.err != a->sig.err) {
        a->sig = g;
        auth_reload(a);
    }
    pthread_mutex_unlock(&a->reload_mu);
}

/* The peer's key (IPv4 as ::ffff:a.b.c.d, IPv6 its /64) and its text. */
static void auth_peer(const struct sockaddr *sa, unsigned char key[16], char *text, size_t cap)
{
    memset(key, 0, 16);
    snprintf(text, cap, "?");
    if (sa && sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)sa;
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &in->sin_addr, 4);
        inet_ntop(AF_INET, &in->sin_addr, text, (socklen_t)cap);
    } else if (sa && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)sa;
        memcpy(key, &in6->sin6_addr, 8);
        inet_ntop(AF_INET6, &in6->sin6_addr, text, (socklen_t)cap);
    }
}

/* s for a log line: at most cap-1 bytes, anything but printable ASCII '?'. */
static void auth_printable(const char *s, char *out, size_t cap)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < cap; i++)
        out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    out[i] = '\0';
}

/* The peer's failure window: its slot, or the oldest one taken over. */
static struct mgr_api_fail *auth_slot(struct mgr_api_auth *a, const unsigned char key[16],
                                      int64_t now, bool take)
{
    struct mgr_api_fail *old = NULL;
    for (size_t i = 0; i < MGR_API_FAIL_PEERS; i++) {
        struct mgr_api_fail *f = &a->fails[i];
        if (f->count && !memcmp(f->addr, key, 16)) {
            if (now - f->since >= MGR_API_FAIL_WINDOW_S) {
                f->since = now;
                f->count = 0;
            }
            return f;
        }
        if (!old || (old->count && (!f->count || f->since < old->since)))
            old = f; /* the first free slot, else the oldest */
    }
    if (!take)
        return NULL;
    memcpy(old->addr, key, 16);
    old->since = now;
    old->count = 0;
    return old;
}

/* The session id's hash: false when id is not MGR_API_SESSION_ID_LEN lower-case hex digits. */
static bool session_hash(const char *id, unsigned char h[32])
{
    size_t i = 0;

    if (!id)
        return false;
    for (; i < MGR_API_SESSION_ID_LEN; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
            return false;
    if (id[i])
        return false;
    mgr_api_token_hash(id, MGR_API_SESSION_ID_LEN, h);
    return true;
}

/* The slot holding id's hash (every slot compared), or NULL. */
static struct mgr_api_session *session_slot(struct mgr_api_sessions *s, const char *id)
{
    struct mgr_api_session *found = NULL;
    unsigned char h[32];

    if (!session_hash(id, h))
        return NULL;
    for (size_t i = 0; i < MGR_API_SESSIONS_MAX; i++)
        if (!CRYPTO_memcmp(s->v[i].hash, h, sizeof(h)) && s->v[i].used)
            found = &s->v[i];
    return found;
}

int mgr_api_session_new(struct mgr_api_sessions *s, const unsigned char tok[32], int64_t now,
                        char id[MGR_API_SESSION_ID_LEN + 1])
{
    struct mgr_api_session *slot = NULL;
    unsigned char raw[MGR_API_SESSION_ID_LEN / 2];

    id[0] = '\0';
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return IOF_EINTERNAL;
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(id + 2 * i, 3, "%02x", raw[i]);
    OPENSSL_cleanse(raw, sizeof(raw));
    for (size_t i = 0; i < MGR_API_SESSIONS_MAX; i++) {
        struct mgr_api_session *e = &s->v[i];
        if (e->used && e->expires <= now)
            memset(e, 0, sizeof(*e)); /* expired: free again */
        if (!slot || (slot->used && (!e->used || e->born < slot->born)))
            slot = e; /* the first free slot, else the oldest session */
    }
    mgr_api_token_hash(id, MGR_API_SESSION_ID_LEN, slot->hash);
    memcpy(slot->tok, tok, sizeof(slot->tok));
    slot->used = true;
    slot->born = now;
    slot->expires = now + MGR_API_SESSION_S;
    return 0;
}

bool mgr_api_session_find(struct mgr_api_sessions *s, const char *id, int64_t now,
                          unsigned char tok[32])
{
    struct mgr_api_session *e = session_slot(s, id);

    if (!e)
        return false;
    if (e->expires <= now) {
        memset(e, 0, sizeof(*e));
        return false;
    }
    memcpy(tok, e->tok, 32);
    return true;
}

size_t mgr_api_session_keep(struct mgr_api_sessions *s, const struct mgr_api_tokens *t)
{
    size_t n = 0;

    for (size_t i = 0; i < MGR_API_SESSIONS_MAX; i++)
        if (s->v[i].used && (!t || !mgr_api_tokens_find_hash(t, s->v[i].tok))) {
            OPENSSL_cleanse(&s->v[i], sizeof(s->v[i]));
            n++;
        }
    return n;
}

bool mgr_api_session_end(struct mgr_api_sessions *s, const char *id)
{
    struct mgr_api_session *e = session_slot(s, id);

    if (e)
        memset(e, 0, sizeof(*e));
    return e != NULL;
}

size_t mgr_api_session_count(const struct mgr_api_sessions *s, int64_t now)
{
    size_t n = 0;
    for (size_t i = 0; i < MGR_API_SESSIONS_MAX; i++)
        n += s->v[i].used && s->v[i].expires > now;
    return n;
}

/* How a request presents itself. */
enum auth_cred { AUTH_NONE, AUTH_BEARER, AUTH_SESSION };

/* mgr_api_auth_check() and mgr_api_auth_signin(): the throttle, the lookup
 * of the token (t, len) or the session (t) in the table as the file is
 * now, the scope, the log line. */
static enum mgr_api_auth_result auth_check(struct mgr_api_auth *a, enum auth_cred cred,
                                           const char *t, size_t len, bool other_scheme, bool write,
                                           const struct sockaddr *peer, int64_t now,
                                           const char *method, const char *url,
                                           struct mgr_api_token *tok)
{
    unsigned char key[16], th[32];
    char who[64], m[16], u[128];
    const struct mgr_api_token *e = NULL;
    enum mgr_api_auth_result r;
    struct mgr_api_fail *f;
    bool has_session = false, closed;

    memset(tok, 0, sizeof(*tok));
    mgr_api_auth_refresh(a, now, false);
    auth_peer(peer, key, who, sizeof(who));
    pthread_mutex_lock(&a->mu);
    f = auth_slot(a, key, now, false);
    r = f && f->count >= MGR_API_FAIL_MAX ? MGR_API_AUTH_THROTTLED : MGR_API_AUTH_OK;
    if (r == MGR_API_AUTH_OK && cred == AUTH_SESSION)
        has_session = mgr_api_session_find(&a->sessions, t, now, th);
    pthread_mutex_unlock(&a->mu);
    if (r == MGR_API_AUTH_THROTTLED)
        return r;
    pthread_rwlock_rdlock(&a->table_mu);
    closed = a->closed;
    if (!closed && cred == AUTH_BEARER && len)
        e = mgr_api_tokens_find(&a->tokens, t, len);
    else if (!closed && has_session)
        e = mgr_api_tokens_find_hash(&a->tokens, th);
    if (e)
        *tok = *e; /* a copy: a reload may free the table */
    pthread_rwlock_unlock(&a->table_mu);
    auth_printable(method, m, sizeof(m));
    auth_printable(url, u, sizeof(u));
    if (closed) {
        IOF_WARN("--http: %s %s from %s refused: the tokens file is unusable", m, u, who);
        return MGR_API_AUTH_CLOSED;
    }
    if (cred == AUTH_NONE)
        r = MGR_API_AUTH_MISSING;
    else if (!e)
        r = MGR_API_AUTH_WRONG;
    else if (write && tok->scope != MGR_API_SCOPE_OPERATOR)
        r = MGR_API_AUTH_SCOPE;
    if (has_session && !e) { /* its token's line is gone (a reload ends these too) */
        pthread_mutex_lock(&a->mu);
        mgr_api_session_end(&a->sessions, t);
        pthread_mutex_unlock(&a->mu);
    }
    if (r == MGR_API_AUTH_MISSING || r == MGR_API_AUTH_WRONG) {
        unsigned n;
        pthread_mutex_lock(&a->mu);
        f = auth_slot(a, key, now, true);
        n = ++f->count;
        pthread_mutex_unlock(&a->mu);
        IOF_WARN("--http: %s %s from %s refused: %s (failure %u of %u in %d s from there)", m, u,
                 who,
                 cred == AUTH_SESSION  ? "a session cookie that is unknown or expired"
                 : cred == AUTH_BEARER ? "a token that is not in the tokens file"
                 : other_scheme        ? "an Authorization header that is not Bearer"
                                       : "no token",
                 n, MGR_API_FAIL_MAX, MGR_API_FAIL_WINDOW_S);
    } else if (r == MGR_API_AUTH_SCOPE) {
        IOF_WARN("--http: %s %s from %s refused: token '%s' is a viewer's", m, u, who, tok->name);
    }
    return r;
}

enum mgr_api_auth_result mgr_api_auth_check(struct mgr_api_auth *a, const char *authz,
                                            const char *session, bool write,
                                            const struct sockaddr *peer, int64_t now,
                                            const char *method, const char *url,
                                            struct mgr_api_token *tok)
{
    const char *t = NULL;
    size_t len = 0;

    if (mgr_api_bearer(authz, &t, &len))
        return auth_check(a, AUTH_BEARER, t, len, false, write, peer, now, method, url, tok);
    if (session)
        return auth_check(a, AUTH_SESSION, session, 0, false, write, peer, now, method, url, tok);
    return auth_check(a, AUTH_NONE, NULL, 0, authz != NULL, write, peer, now, method, url, tok);
}

enum mgr_api_auth_result mgr_api_auth_signin(struct mgr_api_auth *a, const char *token, size_t len,
                                             const struct sockaddr *peer, int64_t now,
                                             const char *url, struct mgr_api_token *tok,
                                             char id[MGR_API_SESSION_ID_LEN + 1])
{
    enum mgr_api_auth_result r =
        auth_check(a, AUTH_BEARER, token, len, false, false, peer, now, "POST", url, tok);
    int rc;

    id[0] = '\0';
    if (r != MGR_API_AUTH_OK)
        return r;
    pthread_mutex_lock(&a->mu);
    rc = mgr_api_session_new(&a->sessions, tok->hash, now, id);
    pthread_mutex_unlock(&a->mu);
    if (rc) {
        IOF_ERROR("--http: sign-in of token '%s': RAND_bytes failed, no session id", tok->name);
        return MGR_API_AUTH_ERROR;
    }
    IOF_INFO("--http: token '%s' (%s) signed in a browser session", tok->name,
             mgr_api_scope_name(tok->scope));
    return r;
}

bool mgr_api_auth_session_live(struct mgr_api_auth *a, const char *session, int64_t now)
{
    unsigned char th[32];
    bool live;

    mgr_api_auth_refresh(a, now, false);
    pthread_mutex_lock(&a->mu);
    live = mgr_api_session_find(&a->sessions, session, now, th);
    pthread_mutex_unlock(&a->mu);
    if (!live)
        return false;
    pthread_rwlock_rdlock(&a->table_mu);
    live = !a->closed && mgr_api_tokens_find_hash(&a->tokens, th);
    pthread_rwlock_unlock(&a->table_mu);
    return live;
}

bool mgr_api_auth_still(struct mgr_api_auth *a, const struct mgr_api_token *tok,
                        const char *session, int64_t now)
{
    bool still;

    if (session && *session && !mgr_api_auth_session_live(a, session, now))
        return false;
    mgr_api_auth_refresh(a, now, false);
    pthread_rwlock_rdlock(&a->table_mu);
    still = !a->closed && (tok->cert ? mgr_api_tokens_find_cert(&a->tokens, tok->name) != NULL
                                     : mgr_api_tokens_find_hash(&a->tokens, tok->hash) != NULL);
    pthread_rwlock_unlock(&a->table_mu);
    return still;
}

struct auth_gate {
    struct mgr_api_auth *a;
    struct mgr_api_token tok;
    char sid[MGR_API_SESSION_ID_LEN + 1];
};

static bool auth_gate_allowed(void *arg)
{
    struct auth_gate *g = arg;
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return mgr_api_auth_still(g->a, &g->tok, g->sid[0] ? g->sid : NULL, (int64_t)ts.tv_sec);
}

static void auth_gate_free(void *arg)
{
    if (arg)
        OPENSSL_cleanse(arg, sizeof(struct auth_gate));
    free(arg);
}

int mgr_api_auth_gate(struct mgr_api_auth *a, const struct mgr_api_token *tok, const char *session,
                      struct mgr_api_gate *out)
{
    struct auth_gate *g = calloc(1, sizeof(*g));

    if (!g)
        return -ENOMEM;
    g->a = a;
    g->tok = *tok;
    snprintf(g->sid, sizeof(g->sid), "%s", session ? session : "");
    *out = (struct mgr_api_gate){.allowed = auth_gate_allowed, .free = auth_gate_free, .arg = g};
    return 0;
}

bool mgr_api_auth_signout(struct mgr_api_auth *a, const char *session)
{
    bool had;

    pthread_mutex_lock(&a->mu);
    had = mgr_api_session_end(&a->sessions, session);
    pthread_mutex_unlock(&a->mu);
    return had;
}

enum mgr_api_auth_result mgr_api_auth_check_cert(struct mgr_api_auth *a, const char *cn, bool write,
                                                 const struct sockaddr *peer, int64_t now,
                                                 const char *method, const char *url,
                                                 struct mgr_api_token *tok)
{
    const struct mgr_api_token *e = NULL;
    unsigned char key[16];
    char who[64], m[16], u[128];
    bool closed;

    memset(tok, 0, sizeof(*tok));
    mgr_api_auth_refresh(a, now, false);
    pthread_rwlock_rdlock(&a->table_mu);
    closed = a->closed;
    if (!closed && (e = mgr_api_tokens_find_cert(&a->tokens, cn)))
        *tok = *e;
    pthread_rwlock_unlock(&a->table_mu);
    if (!closed && !e)
        return MGR_API_AUTH_MISSING;
    auth_peer(peer, key, who, sizeof(who));
    auth_printable(method, m, sizeof(m));
    auth_printable(url, u, sizeof(u));
    if (closed) {
        IOF_WARN("--http: %s %s from %s refused: the tokens file is unusable", m, u, who);
        return MGR_API_AUTH_CLOSED;
    }
    if (write && tok->scope != MGR_API_SCOPE_OPERATOR) {
        IOF_WARN("--http: %s %s from %s refused: certificate '%s' is a viewer's", m, u, who,
                 tok->name);
        return MGR_API_AUTH_SCOPE;
    }
    return MGR_API_AUTH_OK;
}

bool mgr_api_client_cert(void *tls_session, char *cn, size_t cap, char *why, size_t wcap)
{
    gnutls_session_t s = tls_session;
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (void *)GNUTLS_KP_TLS_WWW_CLIENT};
    const gnutls_datum_t *peers;
    gnutls_x509_crt_t crt;
    unsigned n = 0, status = 0;
    size_t len = cap;
    int rc;

    cn[0] = '\0';
    snprintf(why, wcap, "%s", "");
    if (!s || gnutls_certificate_type_get(s) != GNUTLS_CRT_X509 ||
        !(peers = gnutls_certificate_get_peers(s, &n)) || !n)
        return false; /* none sent */
    if ((rc = gnutls_certificate_verify_peers(s, &purpose, 1, &status)) < 0) {
        snprintf(why, wcap, "not verified: %s", gnutls_strerror(rc));
        return false;
    }
    if (status) {
        gnutls_datum_t txt = {0};
        if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &txt, 0) >= 0)
            snprintf(why, wcap, "%s", (const char *)txt.data);
        else
            snprintf(why, wcap, "not verified (status 0x%x)", status);
        gnutls_free(txt.data);
        return false;
    }
    if (gnutls_x509_crt_init(&crt) < 0)
        return false;
    rc = gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER);
    if (rc >= 0)
        rc = gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &len);
    gnutls_x509_crt_deinit(crt);
    if (rc < 0 || !cn[0] || strlen(cn) != len) {
        cn[0] = '\0';
        snprintf(why, wcap, "no usable subject CN");
        return false;
    }
    return true;
}

bool mgr_api_request_cert(void *conn, char *cn, size_t cap)
{
    static _Atomic int64_t last = INT64_MIN / 2;
    const union MHD_ConnectionInfo *ti;
    struct timespec ts;
    int64_t prev = atomic_load(&last);
    char why[256];

    cn[0] = '\0';
    if (!(ti = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION)))
        return false;
    if (mgr_api_client_cert(ti->tls_session, cn, cap, why, sizeof(why)))
        return true;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (why[0] && (int64_t)ts.tv_sec - prev >= 10 &&
        atomic_compare_exchange_strong(&last, &prev, (int64_t)ts.tv_sec))
        IOF_WARN("--http: a client certificate not accepted (this line at most every 10 s): %s",
                 why);
    return false;
}
