/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_auth.c - the API's HTTPS files and address rule
 * (manager/api_auth.h): files read and checked with OpenSSL before
 * libmicrohttpd is given them, so that a wrong file is named with its
 * reason rather than as a server that will not start. */
#include "manager/api_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/log.h"

/* The whole of path (at most MGR_API_TLS_FILE_MAX bytes), NUL-terminated,
 * into *out (new); *mode its permission bits. */
static int auth_read(const char *opt, const char *path, char **out, mode_t *mode,
                     struct iof_diag *diag)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    size_t len = 0;
    char *p;
    ssize_t n;

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
    if (!(p = malloc((size_t)st.st_size + 1))) {
        close(fd);
        return iof_diag_set(diag, -ENOMEM, "%s %s: out of memory", opt, path);
    }
    while (len < (size_t)st.st_size && (n = read(fd, p + len, (size_t)st.st_size - len)) > 0)
        len += (size_t)n;
    close(fd);
    p[len] = '\0';
    if (strlen(p) != len) {
        OPENSSL_cleanse(p, len);
        free(p);
        return iof_diag_set(diag, -EINVAL, "%s %s: not a PEM file (a NUL byte)", opt, path);
    }
    *out = p;
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
    t->key = t->cert = NULL;
}

int mgr_api_bind_check(const char *spec, const char *host, bool loopback, bool tls,
                       struct iof_diag *diag)
{
    if (loopback)
        return 0;
    return iof_diag_set(
        diag, -EACCES,
        "--http %s: %s is not a loopback address: the API is served elsewhere only over "
        "HTTPS (%s) with authentication, which it does not have yet; serve it on "
        "127.0.0.1 or ::1 and reach it through an SSH tunnel (docs/api.md, "
        "Security)",
        spec, host, tls ? "given" : "add --http-tls-cert F --http-tls-key F");
}
