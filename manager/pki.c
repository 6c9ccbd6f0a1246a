/* SPDX-License-Identifier: Apache-2.0 */
/* manager/pki.c - `iofleet pki init`: CA, manager and agent certificates
 * built with the OpenSSL 3 X509 API (contract in manager/pki.h). */
#include "manager/pki.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/outfile.h"
#include "proto/msg.h"
#include "proto/name.h"

/* ---- helpers ----------------------------------------------------------- */

/* Sets diag from the last OpenSSL error and clears the error queue. */
static int pki_ossl_fail(struct iof_diag *diag, const char *what)
{
    char buf[256] = "unknown OpenSSL error";
    unsigned long e = ERR_peek_last_error();
    if (e)
        ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    return iof_diag_set(diag, IOF_EINTERNAL, "%s: %s", what, buf);
}

/* DIR/BASE.pem and DIR/BASE-key.pem. */
static int pki_paths(const char *dir, const char *base, char cert[PATH_MAX], char key[PATH_MAX],
                     struct iof_diag *diag)
{
    int n = snprintf(cert, PATH_MAX, "%s/%s.pem", dir, base);
    int k = snprintf(key, PATH_MAX, "%s/%s-key.pem", dir, base);
    if (n < 0 || k < 0 || n >= PATH_MAX || k >= PATH_MAX)
        return iof_diag_set(diag, -ENAMETOOLONG, "%s/%s-key.pem: %s", dir, base,
                            strerror(ENAMETOOLONG));
    return 0;
}

/* "2035-05-30" (UTC) for a certificate time. */
static void pki_date(const ASN1_TIME *t, char buf[32])
{
    struct tm tm;
    if (!t || !ASN1_TIME_to_tm(t, &tm) || !strftime(buf, 32, "%Y-%m-%d", &tm))
        snprintf(buf, 32, "?");
}

/* The first CN of a certificate's subject into buf, or "" when it has none. */
static void pki_cn(X509 *x, char *buf, size_t len)
{
    const X509_NAME *name = X509_get_subject_name(x);
    int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
    const ASN1_STRING *s = i >= 0 ? X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)) : NULL;
    int n = s ? ASN1_STRING_length(s) : 0;
    if (n < 0 || (size_t)n >= len)
        n = 0;
    if (n)
        memcpy(buf, ASN1_STRING_get0_data(s), (size_t)n);
    buf[n] = '\0';
}

/* Never prompt for a passphrase: encrypted CA keys are not supported. */
static int pki_no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

int mgr_pki_name_check(const char *what, const char *name, struct iof_diag *diag)
{
    return proto_node_name_check(what, name, diag) ? IOF_EUSAGE : 0;
}

/* ---- files ------------------------------------------------------------- */

/* Creates DIR (and missing parents) mode 0700, or checks that it is a
 * directory. Warns on `out` when an existing DIR is open to others. */
static int pki_mkdir(const char *dir, FILE *out, struct iof_diag *diag)
{
    char p[PATH_MAX];
    struct stat st;

    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return iof_diag_set(diag, -ENOTDIR, "%s: %s", dir, strerror(ENOTDIR));
        if ((st.st_mode & 077) && out)
            fprintf(out,
                    "warning: %s is mode %04o: other users can list it (the files are 0600; "
                    "chmod 700 recommended)\n",
                    dir, (unsigned)(st.st_mode & 07777));
        return 0;
    }
    if (errno != ENOENT)
        return iof_diag_set(diag, -errno, "%s: %s", dir, strerror(errno));
    if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
        return iof_diag_set(diag, -ENAMETOOLONG, "%s: %s", dir, strerror(ENAMETOOLONG));
    for (char *s = p + 1;; s++) {
        char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
            return iof_diag_set(diag, -errno, "%s: cannot create directory: %s", p,
                                strerror(errno));
        *s = c;
        if (!c)
            break;
    }
    /* mkdir's mode is filtered by the umask; the contract is exactly 0700. */
    if (chmod(dir, 0700) < 0)
        return iof_diag_set(diag, -errno, "%s: chmod 0700: %s", dir, strerror(errno));
    if (out)
        fprintf(out, "created %s (mode 0700)\n", dir);
    return 0;
}

/* Fails with -EEXIST when path exists and !force; a directory in the way
 * fails even with force. */
static int pki_probe(const char *path, bool force, struct iof_diag *diag)
{
    struct stat st;
    if (lstat(path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        return iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return iof_diag_set(diag, -EISDIR, "%s: %s", path, strerror(EISDIR));
    if (!force)
        return iof_diag_set(diag, -EEXIST, "%s: already exists (use --force to replace it)", path);
    return 0;
}

/* Writes data to path, mode 0600, through common/outfile.h: a new file
 * renamed into place, so readers see the old or the new file, never half of
 * one; an existing name (a symbolic link too, never followed) is replaced
 * only with force. */
static int pki_write_file(const char *path, const char *data, size_t len, bool force,
                          struct iof_diag *diag)
{
    return iof_outfile_write(path, 0600, force ? IOF_OUTFILE_FORCE : 0, data, len, diag);
}

/* PEM of a certificate, or of a private key as unencrypted PKCS#8 (in a
 * secure-memory BIO, cleared when freed), written with pki_write_file(). */
static int pki_write_pem(const char *path, X509 *cert, EVP_PKEY *key, bool force,
                         struct iof_diag *diag)
{
    BIO *b = BIO_new(key ? BIO_s_secmem() : BIO_s_mem());
    char *data = NULL;
    long n;
    int rc;

    if (!b || !(key ? PEM_write_bio_PKCS8PrivateKey(b, key, NULL, NULL, 0, NULL, NULL)
                    : PEM_write_bio_X509(b, cert))) {
        BIO_free(b);
        return pki_ossl_fail(diag, path);
    }
    n = BIO_get_mem_data(b, &data);
    rc = n > 0 ? pki_write_file(path, data, (size_t)n, force, diag) : pki_ossl_fail(diag, path);
    BIO_free(b);
    return rc;
}

/* ---- certificates ------------------------------------------------------ */

static int pki_serial(X509 *x)
{
    unsigned char b[16] = {0};
    BIGNUM *bn = NULL;
    ASN1_INTEGER *ai = NULL;
    int ok;

    /* 128 random bits as a positive integer (17 DER octets at most, under
     * RFC 5280's 20); zero is not a valid serial. */
    do {
        if (RAND_bytes(b, sizeof(b)) != 1)
            return -1;
    } while (!memcmp(b, (unsigned char[16]){0}, sizeof(b)));
    bn = BN_bin2bn(b, sizeof(b), NULL);
    ai = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
    ok = ai && X509_set_serialNumber(x, ai);
    ASN1_INTEGER_free(ai);
    BN_free(bn);
    return ok ? 0 : -1;
}

static int pki_add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
    X509_EXTENSION *e = X509V3_EXT_nconf_nid(NULL, ctx, nid, value);
    int ok = e && X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
    return ok ? 0 : -1;
}

/* A new certificate for `key`: the CA (issuer == NULL, self-signed) or a
 * leaf signed by issuer/issuer_key whose notAfter is capped at the issuer's
 * (*capped then set). Returns new or NULL with diag set. */
static X509 *pki_cert(EVP_PKEY *key, const char *ou, const char *cn, X509 *issuer,
                      EVP_PKEY *issuer_key, unsigned days, bool *capped, struct iof_diag *diag)
{
    X509 *x = X509_new();
    X509_NAME *name = X509_NAME_new();
    X509V3_CTX ctx;
    char san[PROTO_NODE_NAME_MAX + 8];
    bool ok;

    ok = x && name && X509_set_version(x, X509_VERSION_3) && pki_serial(x) == 0;
    ok = ok && X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                                          (const unsigned char *)MGR_PKI_ORG, -1, -1, 0);
    if (ou)
        ok = ok && X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_ASC, (const unsigned char *)ou,
                                              -1, -1, 0);
    ok = ok &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    ok = ok && X509_set_subject_name(x, name) &&
         X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    /* Backdated so that a node whose clock is a little behind accepts it. */
    ok = ok && X509_gmtime_adj(X509_getm_notBefore(x), -(long)MGR_PKI_BACKDATE_S) &&
         X509_time_adj_ex(X509_getm_notAfter(x), (int)days, 0, NULL);
    if (ok && issuer && ASN1_TIME_compare(X509_get0_notAfter(x), X509_get0_notAfter(issuer)) > 0) {
        ok = X509_set1_notAfter(x, X509_get0_notAfter(issuer));
        *capped = true;
    }
    ok = ok && X509_set_pubkey(x, key);
    if (ok) {
        X509V3_set_ctx_nodb(&ctx);
        X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
    }
    if (ok && !issuer) {
        ok = !pki_add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
             !pki_add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign") &&
             !pki_add_ext(x, &ctx, NID_subject_key_identifier, "hash");
    } else if (ok) {
        snprintf(san, sizeof(san), "DNS:%s", cn); /* cn is [A-Za-z0-9._-] only */
        ok = !pki_add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") &&
             !pki_add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature") &&
             !pki_add_ext(x, &ctx, NID_ext_key_usage, "serverAuth,clientAuth") &&
             !pki_add_ext(x, &ctx, NID_subject_alt_name, san) &&
             !pki_add_ext(x, &ctx, NID_subject_key_identifier, "hash") &&
             !pki_add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always");
    }
    ok = ok && X509_sign(x, issuer ? issuer_key : key, EVP_sha256()) > 0;
    X509_NAME_free(name);
    if (!ok) {
        X509_free(x);
        pki_ossl_fail(diag, cn);
        return NULL;
    }
    return x;
}

/* Makes a key and a certificate and writes DIR/BASE-key.pem, DIR/BASE.pem.
 * issuer == NULL makes the CA and returns it in *ca_out and *ca_key_out. */
static int pki_issue(const struct mgr_pki_opts *o, const char *base, const char *what,
                     const char *ou, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
                     unsigned days, FILE *out, X509 **ca_out, EVP_PKEY **ca_key_out,
                     struct iof_diag *diag)
{
    char cert_path[PATH_MAX], key_path[PATH_MAX], until[32];
    EVP_PKEY *key = NULL;
    X509 *x = NULL;
    bool capped = false;
    int rc = pki_paths(o->dir, base, cert_path, key_path, diag);

    if (rc)
        return rc;
    key = EVP_EC_gen("P-256");
    if (!key)
        return pki_ossl_fail(diag, "EC P-256 key generation");
    x = pki_cert(key, ou, cn, issuer, issuer_key, days, &capped, diag);
    if (!x) {
        EVP_PKEY_free(key);
        return IOF_EINTERNAL;
    }
    pki_date(X509_get0_notAfter(x), until);
    /* Key first: a run cut short leaves a key without its certificate, which
     * the next run refuses to overwrite, rather than a certificate whose key
     * was never written. */
    rc = pki_write_pem(key_path, NULL, key, o->force, diag);
    if (!rc && out)
        fprintf(out, "wrote %s (%s private key)\n", key_path, what);
    if (!rc)
        rc = pki_write_pem(cert_path, x, NULL, o->force, diag);
    if (!rc && out)
        fprintf(out, "wrote %s (%s certificate \"%s\", valid until %s%s)\n", cert_path, what, cn,
                until, capped ? ", the CA's expiry" : "");
    if (!rc && ca_out) {
        *ca_out = x;
        *ca_key_out = key;
        return 0;
    }
    X509_free(x);
    EVP_PKEY_free(key);
    return rc;
}

/* Loads and checks the CA of an existing directory: a CA certificate, not
 * expired, and a key that matches it. */
static int pki_load_ca(const char *dir, FILE *out, X509 **ca, EVP_PKEY **ca_key,
                       struct iof_diag *diag)
{
    char cert_path[PATH_MAX], key_path[PATH_MAX], until[32], cn[256];
    struct stat st;
    FILE *f;
    int rc = pki_paths(dir, "ca", cert_path, key_path, diag);

    if (rc)
        return rc;
    if (!(f = fopen(cert_path, "re")))
        return iof_diag_set(diag, -errno, "%s: %s", cert_path, strerror(errno));
    *ca = PEM_read_X509(f, NULL, pki_no_passphrase, NULL);
    fclose(f);
    if (!*ca)
        return pki_ossl_fail(diag, cert_path);
    if (!(f = fopen(key_path, "re")))
        return iof_diag_set(diag, -errno, "%s: %s (adding certificates needs the CA's key)",
                            key_path, strerror(errno));
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077) && out)
        fprintf(out, "warning: %s is mode %04o: others can read the CA's key (chmod 600)\n",
                key_path, (unsigned)(st.st_mode & 07777));
    *ca_key = PEM_read_PrivateKey(f, NULL, pki_no_passphrase, NULL);
    fclose(f);
    if (!*ca_key) {
        char why[256] = "unknown OpenSSL error";
        unsigned long e = ERR_peek_last_error();
        if (e)
            ERR_error_string_n(e, why, sizeof(why));
        ERR_clear_error();
        return iof_diag_set(diag, IOF_EINTERNAL, "%s: not a readable unencrypted private key (%s)",
                            key_path, why);
    }
    pki_date(X509_get0_notAfter(*ca), until);
    pki_cn(*ca, cn, sizeof(cn));
    if (X509_check_ca(*ca) < 1)
        return iof_diag_set(diag, IOF_EINTERNAL, "%s: not a CA certificate", cert_path);
    if (X509_check_private_key(*ca, *ca_key) != 1) {
        ERR_clear_error();
        return iof_diag_set(diag, IOF_EINTERNAL, "%s does not match %s", key_path, cert_path);
    }
    if (X509_cmp_current_time(X509_get0_notAfter(*ca)) <= 0)
        return iof_diag_set(diag, IOF_EINTERNAL,
                            "%s: the CA expired on %s; make a new CA in a new directory "
                            "(docs/security.md)",
                            cert_path, until);
    if (out)
        fprintf(out, "using the CA in %s (\"%s\", valid until %s)\n", cert_path, cn, until);
    return 0;
}

static int pki_strcasecmp_p(const void *a, const void *b)
{
    return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names are DNS names in the certificates, so "Node1" and "node1" are one. */
static int pki_check_duplicates(const struct mgr_pki_opts *o, struct iof_diag *diag)
{
    const char **v;
    int rc = 0;

    if (o->nagents < 2)
        return 0;
    if (!(v = malloc(o->nagents * sizeof(*v))))
        return iof_diag_set(diag, -ENOMEM, "%s", strerror(ENOMEM));
    memcpy(v, o->agents, o->nagents * sizeof(*v));
    qsort(v, o->nagents, sizeof(*v), pki_strcasecmp_p);
    for (size_t i = 1; i < o->nagents && !rc; i++)
        if (!strcasecmp(v[i - 1], v[i]))
            rc = iof_diag_set(diag, IOF_EUSAGE,
                              "agent name '%s' is given twice (names are compared without case)",
                              v[i]);
    free(v);
    return rc;
}

int mgr_pki_init(const struct mgr_pki_opts *o, FILE *out, struct iof_diag *diag)
{
    const char *mname = o->manager_name ? o->manager_name : MGR_PKI_MANAGER_NAME;
    unsigned days = o->days ? o->days : MGR_PKI_DEFAULT_DAYS;
    char ca_path[PATH_MAX], ca_key_path[PATH_MAX], mgr_path[PATH_MAX], mgr_key_path[PATH_MAX];
    char cert_path[PATH_MAX], key_path[PATH_MAX], mgr_cn[256] = "";
    X509 *ca = NULL, *mgr = NULL;
    EVP_PKEY *ca_key = NULL;
    struct stat st;
    bool have_ca, want_manager = true;
    int rc;

    if (!o->dir || !*o->dir)
        return iof_diag_set(diag, IOF_EUSAGE, "no directory given");
    if (days > MGR_PKI_MAX_DAYS)
        return iof_diag_set(diag, IOF_EUSAGE, "--days must be 1..%d, got %u", MGR_PKI_MAX_DAYS,
                            days);
    if ((rc = mgr_pki_name_check("--manager-name", mname, diag)))
        return rc;
    for (size_t i = 0; i < o->nagents; i++) {
        if ((rc = mgr_pki_name_check("agent name", o->agents[i], diag)))
            return rc;
        if (!strcasecmp(o->agents[i], mname) || !strcasecmp(o->agents[i], MGR_PKI_MANAGER_NAME))
            return iof_diag_set(diag, IOF_EUSAGE,
                                "agent name '%s' is the manager's name: an agent with that "
                                "certificate could pose as the manager",
                                o->agents[i]);
    }
    if ((rc = pki_check_duplicates(o, diag)))
        return rc;
    if ((rc = pki_paths(o->dir, "ca", ca_path, ca_key_path, diag)) ||
        (rc = pki_paths(o->dir, "manager", mgr_path, mgr_key_path, diag)))
        return rc;

    /* DIR itself first, so that its problems are not reported as ca.pem's. */
    if (stat(o->dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return iof_diag_set(diag, -ENOTDIR, "%s: %s", o->dir, strerror(ENOTDIR));
    if (stat(o->dir, &st) < 0 && errno != ENOENT)
        return iof_diag_set(diag, -errno, "%s: %s", o->dir, strerror(errno));
    if (lstat(ca_path, &st) == 0) {
        have_ca = true;
    } else if (errno == ENOENT) {
        have_ca = false;
    } else {
        return iof_diag_set(diag, -errno, "%s: %s", ca_path, strerror(errno));
    }

    if (have_ca) {
        if ((rc = pki_load_ca(o->dir, out, &ca, &ca_key, diag)))
            goto done;
        /* An existing manager certificate is kept; its name still may not be
         * given to an agent. */
        if (lstat(mgr_path, &st) == 0) {
            FILE *f = fopen(mgr_path, "re");
            if (!f) {
                rc = iof_diag_set(diag, -errno, "%s: %s", mgr_path, strerror(errno));
                goto done;
            }
            mgr = PEM_read_X509(f, NULL, pki_no_passphrase, NULL);
            fclose(f);
            if (!mgr) {
                rc = pki_ossl_fail(diag, mgr_path);
                goto done;
            }
            pki_cn(mgr, mgr_cn, sizeof(mgr_cn));
            want_manager = false;
            if (o->manager_name && strcmp(o->manager_name, mgr_cn)) {
                rc = iof_diag_set(diag, IOF_EUSAGE,
                                  "--manager-name %s: %s already names the manager '%s' (remove "
                                  "manager.pem and manager-key.pem to issue a new one)",
                                  o->manager_name, mgr_path, mgr_cn);
                goto done;
            }
            for (size_t i = 0; i < o->nagents; i++) {
                if (!strcasecmp(o->agents[i], mgr_cn)) {
                    rc = iof_diag_set(diag, IOF_EUSAGE,
                                      "agent name '%s' is the manager's name in %s", o->agents[i],
                                      mgr_path);
                    goto done;
                }
            }
        }
        if (!want_manager && o->nagents == 0) {
            rc = iof_diag_set(diag, IOF_EUSAGE,
                              "nothing to do: %s and %s exist; name the agents to add with "
                              "--agent",
                              ca_path, mgr_path);
            goto done;
        }
    }

    /* Every output is probed before the first key is made. */
    if ((rc = pki_mkdir(o->dir, out, diag)))
        goto done;
    if (!have_ca && ((rc = pki_probe(ca_key_path, o->force, diag)) ||
                     (rc = pki_probe(ca_path, o->force, diag))))
        goto done;
    if (want_manager && ((rc = pki_probe(mgr_key_path, o->force, diag)) ||
                         (rc = pki_probe(mgr_path, o->force, diag))))
        goto done;
    for (size_t i = 0; i < o->nagents; i++) {
        if ((rc = pki_paths(o->dir, o->agents[i], cert_path, key_path, diag)) ||
            (rc = pki_probe(key_path, o->force, diag)) ||
            (rc = pki_probe(cert_path, o->force, diag)))
            goto done;
    }

    if (!have_ca) {
        char cn[64], date[16];
        unsigned char r[4];
        time_t now = time(NULL);
        struct tm tm;
        if (RAND_bytes(r, sizeof(r)) != 1) {
            rc = pki_ossl_fail(diag, "RAND_bytes");
            goto done;
        }
        gmtime_r(&now, &tm);
        strftime(date, sizeof(date), "%Y-%m-%d", &tm);
        /* A date and random suffix tell apart CAs made on different days or
         * hosts when an operator has more than one. */
        snprintf(cn, sizeof(cn), "iofleet CA %s %02x%02x%02x%02x", date, r[0], r[1], r[2], r[3]);
        rc = pki_issue(o, "ca", "CA", NULL, cn, NULL, NULL, MGR_PKI_CA_DAYS, out, &ca, &ca_key,
                       diag);
        if (rc)
            goto done;
    }
    if (want_manager) {
        rc = pki_issue(o, "manager", "manager", MGR_PKI_OU_MANAGER, mname, ca, ca_key, days, out,
                       NULL, NULL, diag);
        if (rc)
            goto done;
    }
    for (size_t i = 0; i < o->nagents; i++) {
        rc = pki_issue(o, o->agents[i], "agent", MGR_PKI_OU_AGENT, o->agents[i], ca, ca_key, days,
                       out, NULL, NULL, diag);
        if (rc)
            goto done;
    }
    if (out && o->nagents)
        fprintf(out, "copy ca.pem, NAME.pem and NAME-key.pem to each node; ca-key.pem stays here "
                     "(docs/security.md)\n");
done:
    X509_free(mgr);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    ERR_clear_error();
    return rc;
}
