/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_pki.c - manager/pki.c, `iofleet pki init`.
 *
 * Each case runs mgr_cli_main() on `iofleet pki ...` (stdout and stderr captured in files) or
 * mgr_pki_init() into its own directory and reads the results back with
 * OpenSSL: chains verified with an X509_STORE for both TLS purposes, names,
 * SANs, key usages, basic constraints, lifetimes, serials, key types and
 * key/certificate pairs, file and directory modes, refusals and their
 * messages, and enrolment of new agents under an existing CA.
 *
 * Files live in a mkdtemp directory under $IOF_TEST_TMPDIR (created if
 * missing; /tmp otherwise), removed at the end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "manager/cli.h"
#include "manager/pki.h"
#include "tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static char g_dir[PATH_MAX];
static char g_out[8192], g_err[8192]; /* the last run_pki()'s stdout and stderr */

static void fmt(char *buf, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, len, f, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < len);
}

/* g_dir/name (a case's own directory, not created). */
static void case_dir(char *out, const char *name)
{
    fmt(out, PATH_MAX, "%s/%s", g_dir, name);
}

static void read_fd_into(int fd, char *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
}

/* Runs `iofleet pki ARGS... NULL` with stdout and stderr captured in
 * g_out and g_err; returns the exit code. */
static int run_pki(const char *first, ...)
{
    char *argv[64] = {"iofleet", "pki", (char *)first};
    int argc = first ? 3 : 2, rc, saved_out, saved_err, fo, fe;
    char po[PATH_MAX], pe[PATH_MAX];
    va_list ap;

    va_start(ap, first);
    for (char *a; first && (a = va_arg(ap, char *));) {
        assert_true(argc < 63);
        argv[argc++] = a;
    }
    va_end(ap);
    fmt(po, sizeof(po), "%s/stdout.XXXXXX", g_dir);
    fmt(pe, sizeof(pe), "%s/stderr.XXXXXX", g_dir);
    fo = mkstemp(po);
    fe = mkstemp(pe);
    assert_true(fo >= 0 && fe >= 0);
    fflush(stdout);
    fflush(stderr);
    saved_out = dup(STDOUT_FILENO);
    saved_err = dup(STDERR_FILENO);
    assert_true(saved_out >= 0 && saved_err >= 0);
    dup2(fo, STDOUT_FILENO);
    dup2(fe, STDERR_FILENO);
    rc = mgr_cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    close(saved_out);
    close(saved_err);
    read_fd_into(fo, g_out, sizeof(g_out));
    read_fd_into(fe, g_err, sizeof(g_err));
    close(fo);
    close(fe);
    unlink(po);
    unlink(pe);
    return rc;
}

static X509 *load_cert(const char *dir, const char *base)
{
    char p[PATH_MAX];
    fmt(p, sizeof(p), "%s/%s.pem", dir, base);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(x);
    return x;
}

static EVP_PKEY *load_key(const char *dir, const char *base)
{
    char p[PATH_MAX], line[64] = "";
    fmt(p, sizeof(p), "%s/%s-key.pem", dir, base);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    /* Unencrypted PKCS#8, as documented. */
    assert_non_null(fgets(line, sizeof(line), f));
    assert_string_equal(line, "-----BEGIN PRIVATE KEY-----\n");
    rewind(f);
    EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(k);
    return k;
}

/* Whole file into a new string. */
static char *slurp(const char *dir, const char *name)
{
    char p[PATH_MAX];
    fmt(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 65535, f);
    fclose(f);
    assert_true(n > 0);
    return buf;
}

static bool exists(const char *dir, const char *name)
{
    char p[PATH_MAX];
    struct stat st;
    fmt(p, sizeof(p), "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (unsigned)(st.st_mode & 07777);
}

/* X509_verify_cert() of x against ca alone, for a TLS purpose. */
static int verify(X509 *ca, X509 *x, int purpose, const char *host)
{
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ok;

    assert_non_null(store);
    assert_non_null(ctx);
    assert_int_equal(X509_STORE_add_cert(store, ca), 1);
    assert_int_equal(X509_STORE_CTX_init(ctx, store, x, NULL), 1);
    assert_int_equal(X509_STORE_CTX_set_purpose(ctx, purpose), 1);
    if (host)
        assert_int_equal(X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0), 1);
    ok = X509_verify_cert(ctx);
    if (ok != 1)
        print_message("verify: %s\n", X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    ERR_clear_error();
    return ok;
}

/* The subject entry `nid` as a string ("" when absent). */
static void subject_entry(X509 *x, int nid, char *buf, size_t len)
{
    const X509_NAME *name = X509_get_subject_name(x);
    int i = X509_NAME_get_index_by_NID(name, nid, -1);
    buf[0] = '\0';
    if (i < 0)
        return;
    const ASN1_STRING *s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    assert_true((size_t)ASN1_STRING_length(s) < len);
    memcpy(buf, ASN1_STRING_get0_data(s), (size_t)ASN1_STRING_length(s));
    buf[ASN1_STRING_length(s)] = '\0';
    /* Exactly one such entry. */
    assert_int_equal(X509_NAME_get_index_by_NID(name, nid, i), -1);
}

static bool ext_critical(X509 *x, int nid)
{
    int i = X509_get_ext_by_NID(x, nid, -1);
    assert_true(i >= 0);
    return X509_EXTENSION_get_critical(X509_get_ext(x, i)) == 1;
}

/* Lifetime in whole days (notBefore is backdated by an hour). */
static int lifetime_days(X509 *x)
{
    int days = 0, secs = 0;
    assert_int_equal(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(x), X509_get0_notAfter(x)),
                     1);
    return days;
}

static void check_ec_p256(EVP_PKEY *k)
{
    char group[64] = "";
    size_t glen = 0;
    assert_true(EVP_PKEY_is_a(k, "EC"));
    assert_int_equal(
        EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group), &glen),
        1);
    assert_string_equal(group, "prime256v1");
    assert_int_equal(EVP_PKEY_get_bits(k), 256);
}

static void check_ca(X509 *ca)
{
    char org[64], cn[128];
    BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(ca, NID_basic_constraints, NULL, NULL);

    assert_int_equal(X509_get_version(ca), X509_VERSION_3);
    assert_non_null(bc);
    assert_true(bc->ca);
    BASIC_CONSTRAINTS_free(bc);
    assert_true(ext_critical(ca, NID_basic_constraints));
    assert_int_equal(X509_check_ca(ca), 1);
    assert_int_equal(X509_get_key_usage(ca), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
    assert_true(ext_critical(ca, NID_key_usage));
    assert_non_null(X509_get0_subject_key_id(ca));
    assert_int_equal(X509_get_signature_nid(ca), NID_ecdsa_with_SHA256);
    /* Self-signed and ten years long. */
    assert_int_equal(X509_NAME_cmp(X509_get_subject_name(ca), X509_get_issuer_name(ca)), 0);
    EVP_PKEY *pub = X509_get0_pubkey(ca);
    assert_int_equal(X509_verify(ca, pub), 1);
    check_ec_p256(pub);
    assert_int_equal(lifetime_days(ca), MGR_PKI_CA_DAYS);
    subject_entry(ca, NID_organizationName, org, sizeof(org));
    subject_entry(ca, NID_commonName, cn, sizeof(cn));
    assert_string_equal(org, MGR_PKI_ORG);
    assert_memory_equal(cn, "iofleet CA ", 11);
}

/* A manager or agent certificate named `name` with role `ou`. */
static void check_leaf(X509 *ca, X509 *x, const char *name, const char *ou, int days)
{
    char buf[128];
    BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(x, NID_basic_constraints, NULL, NULL);
    GENERAL_NAMES *sans = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);

    assert_int_equal(X509_get_version(x), X509_VERSION_3);
    assert_non_null(bc);
    assert_false(bc->ca);
    BASIC_CONSTRAINTS_free(bc);
    assert_int_equal(X509_check_ca(x), 0);
    assert_int_equal(X509_get_key_usage(x), KU_DIGITAL_SIGNATURE);
    assert_int_equal(X509_get_extended_key_usage(x), XKU_SSL_SERVER | XKU_SSL_CLIENT);
    assert_int_equal(X509_get_signature_nid(x), NID_ecdsa_with_SHA256);
    check_ec_p256(X509_get0_pubkey(x));

    /* Exactly one SAN: DNS:name. */
    assert_non_null(sans);
    assert_int_equal(sk_GENERAL_NAME_num(sans), 1);
    GENERAL_NAME *gn = sk_GENERAL_NAME_value(sans, 0);
    assert_int_equal(gn->type, GEN_DNS);
    assert_int_equal(ASN1_STRING_length(gn->d.dNSName), (int)strlen(name));
    assert_memory_equal(ASN1_STRING_get0_data(gn->d.dNSName), name, strlen(name));
    GENERAL_NAMES_free(sans);

    subject_entry(x, NID_commonName, buf, sizeof(buf));
    assert_string_equal(buf, name);
    subject_entry(x, NID_organizationalUnitName, buf, sizeof(buf));
    assert_string_equal(buf, ou);
    subject_entry(x, NID_organizationName, buf, sizeof(buf));
    assert_string_equal(buf, MGR_PKI_ORG);

    /* Issued by this CA: names, key identifiers, signature and chain. */
    assert_int_equal(X509_NAME_cmp(X509_get_issuer_name(x), X509_get_subject_name(ca)), 0);
    assert_int_equal(X509_check_issued(ca, x), X509_V_OK);
    const ASN1_OCTET_STRING *aki = X509_get0_authority_key_id(x);
    assert_non_null(aki);
    assert_int_equal(ASN1_OCTET_STRING_cmp(aki, X509_get0_subject_key_id(ca)), 0);
    assert_non_null(X509_get0_subject_key_id(x));
    assert_int_equal(verify(ca, x, X509_PURPOSE_SSL_SERVER, name), 1);
    assert_int_equal(verify(ca, x, X509_PURPOSE_SSL_CLIENT, name), 1);
    assert_int_equal(X509_check_host(x, name, 0, 0, NULL), 1);
    assert_int_equal(X509_check_host(x, "other-name", 0, 0, NULL), 0);
    assert_int_equal(lifetime_days(x), days);
}

/* Pairwise distinct, 128-bit-ish serial numbers. */
static void check_serials(X509 **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(v[i]), NULL);
        assert_non_null(bn);
        assert_false(BN_is_negative(bn));
        assert_true(BN_num_bits(bn) > 96 && BN_num_bits(bn) <= 128);
        BN_free(bn);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(
                ASN1_INTEGER_cmp(X509_get0_serialNumber(v[i]), X509_get0_serialNumber(v[j])), 0);
    }
}

static void check_modes(const char *dir, const char *const *bases, size_t n)
{
    char p[PATH_MAX];
    assert_int_equal(mode_of(dir), 0700);
    for (size_t i = 0; i < n; i++) {
        fmt(p, sizeof(p), "%s/%s.pem", dir, bases[i]);
        assert_int_equal(mode_of(p), 0600);
        fmt(p, sizeof(p), "%s/%s-key.pem", dir, bases[i]);
        assert_int_equal(mode_of(p), 0600);
    }
}

/* ---- cases ------------------------------------------------------------- */

static void test_init_fresh(void **state)
{
    static const char *const bases[] = {"ca", "manager", "node1", "node_2.lab"};
    char dir[PATH_MAX], p[PATH_MAX];
    X509 *certs[4];
    EVP_PKEY *keys[4];
    (void)state;

    /* A missing parent is created too. */
    case_dir(dir, "fresh/pki");
    assert_int_equal(run_pki("init", dir, "--agent", "node1", "--agent=node_2.lab", NULL), 0);
    assert_string_equal(g_err, "");
    for (size_t i = 0; i < 4; i++) {
        certs[i] = load_cert(dir, bases[i]);
        keys[i] = load_key(dir, bases[i]);
        check_ec_p256(keys[i]);
        /* Each key matches its own certificate and no other. */
        assert_int_equal(X509_check_private_key(certs[i], keys[i]), 1);
        if (i)
            assert_int_equal(X509_check_private_key(certs[i - 1], keys[i]), 0);
        ERR_clear_error();
        fmt(p, sizeof(p), "wrote %s/%s.pem", dir, bases[i]);
        assert_non_null(strstr(g_out, p));
        fmt(p, sizeof(p), "wrote %s/%s-key.pem", dir, bases[i]);
        assert_non_null(strstr(g_out, p));
    }
    check_ca(certs[0]);
    check_leaf(certs[0], certs[1], MGR_PKI_MANAGER_NAME, MGR_PKI_OU_MANAGER, MGR_PKI_DEFAULT_DAYS);
    check_leaf(certs[0], certs[2], "node1", MGR_PKI_OU_AGENT, MGR_PKI_DEFAULT_DAYS);
    check_leaf(certs[0], certs[3], "node_2.lab", MGR_PKI_OU_AGENT, MGR_PKI_DEFAULT_DAYS);
    /* An agent's certificate does not pass for the manager, nor the reverse. */
    assert_int_equal(X509_check_host(certs[2], MGR_PKI_MANAGER_NAME, 0, 0, NULL), 0);
    assert_int_equal(X509_check_host(certs[1], "node1", 0, 0, NULL), 0);
    check_serials(certs, 4);
    check_modes(dir, bases, 4);
    case_dir(p, "fresh");
    assert_int_equal(mode_of(p), 0700);
    /* Nothing else in the directory (no temporary files left). */
    DIR *d = opendir(dir);
    size_t nfiles = 0;
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        nfiles += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(nfiles, 8);
    for (size_t i = 0; i < 4; i++) {
        X509_free(certs[i]);
        EVP_PKEY_free(keys[i]);
    }
}

/* Files and the directory get exactly 0600 and 0700 whatever the umask. */
static void test_modes_ignore_umask(void **state)
{
    static const char *const bases[] = {"ca", "manager", "n1"};
    char dir[PATH_MAX];
    (void)state;

    case_dir(dir, "umask");
    mode_t old = umask(0);
    int rc = run_pki("init", dir, "--agent", "n1", NULL);
    umask(old);
    assert_int_equal(rc, 0);
    check_modes(dir, bases, 3);
}

static void test_no_overwrite_without_force(void **state)
{
    char dir[PATH_MAX];
    (void)state;

    case_dir(dir, "noforce");
    assert_int_equal(run_pki("init", dir, "--agent", "node1", NULL), 0);
    char *ca = slurp(dir, "ca.pem"), *cert = slurp(dir, "node1.pem");
    char *key = slurp(dir, "node1-key.pem"), *mgr = slurp(dir, "manager.pem");

    /* Again: the agent's files exist, nothing is replaced. */
    assert_int_equal(run_pki("init", dir, "--agent", "node1", NULL), 1);
    assert_non_null(strstr(g_err, "node1-key.pem: already exists (use --force"));
    char *cert2 = slurp(dir, "node1.pem"), *key2 = slurp(dir, "node1-key.pem");
    assert_string_equal(cert, cert2);
    assert_string_equal(key, key2);
    free(cert2);
    free(key2);

    /* A refused run writes nothing, even for the names that were free. */
    assert_int_equal(run_pki("init", dir, "--agent", "node9", "--agent", "node1", NULL), 1);
    assert_false(exists(dir, "node9.pem"));
    assert_false(exists(dir, "node9-key.pem"));

    /* --force replaces the agent's files, keeps the CA and the manager. */
    assert_int_equal(run_pki("init", dir, "--agent", "node1", "--force", NULL), 0);
    cert2 = slurp(dir, "node1.pem");
    key2 = slurp(dir, "node1-key.pem");
    char *ca2 = slurp(dir, "ca.pem"), *mgr2 = slurp(dir, "manager.pem");
    assert_string_not_equal(cert, cert2);
    assert_string_not_equal(key, key2);
    assert_string_equal(ca, ca2);
    assert_string_equal(mgr, mgr2);
    X509 *cax = load_cert(dir, "ca"), *x = load_cert(dir, "node1");
    EVP_PKEY *k = load_key(dir, "node1");
    check_leaf(cax, x, "node1", MGR_PKI_OU_AGENT, MGR_PKI_DEFAULT_DAYS);
    assert_int_equal(X509_check_private_key(x, k), 1);
    static const char *const bases[] = {"ca", "manager", "node1"};
    check_modes(dir, bases, 3);
    X509_free(cax);
    X509_free(x);
    EVP_PKEY_free(k);
    free(ca);
    free(cert);
    free(key);
    free(mgr);
    free(cert2);
    free(key2);
    free(ca2);
    free(mgr2);
}

/* A stray file blocks a new CA before anything is written; a symlink in the
 * way is never followed. */
static void test_stray_file_blocks_new_ca(void **state)
{
    char dir[PATH_MAX], p[PATH_MAX], target[PATH_MAX];
    (void)state;

    case_dir(dir, "stray");
    assert_int_equal(mkdir(dir, 0700), 0);
    fmt(target, sizeof(target), "%s/victim", g_dir);
    fmt(p, sizeof(p), "%s/node1-key.pem", dir);
    assert_int_equal(symlink(target, p), 0);
    assert_int_equal(run_pki("init", dir, "--agent", "node1", NULL), 1);
    assert_non_null(strstr(g_err, "node1-key.pem: already exists"));
    assert_false(exists(dir, "ca.pem"));
    assert_false(exists(dir, "ca-key.pem"));
    assert_false(exists(dir, "manager.pem"));
    assert_false(exists(g_dir, "victim"));

    /* With --force the symlink itself is replaced, its target untouched. */
    assert_int_equal(run_pki("init", dir, "--agent", "node1", "--force", NULL), 0);
    assert_false(exists(g_dir, "victim"));
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
}

static void test_add_agent_to_existing_ca(void **state)
{
    char dir[PATH_MAX];
    (void)state;

    case_dir(dir, "enrol");
    assert_int_equal(
        run_pki("init", dir, "--agent", "node1", "--manager-name", "mgr.lab", "--days", "30", NULL),
        0);
    char *ca = slurp(dir, "ca.pem"), *cakey = slurp(dir, "ca-key.pem");
    char *mgr = slurp(dir, "manager.pem"), *mgrkey = slurp(dir, "manager-key.pem");

    assert_int_equal(run_pki("init", dir, "--agent", "node3", "--agent", "node4", NULL), 0);
    assert_non_null(strstr(g_out, "using the CA in"));
    assert_null(strstr(g_out, "manager.pem"));
    /* CA and manager untouched. */
    char *ca2 = slurp(dir, "ca.pem"), *cakey2 = slurp(dir, "ca-key.pem");
    char *mgr2 = slurp(dir, "manager.pem"), *mgrkey2 = slurp(dir, "manager-key.pem");
    assert_string_equal(ca, ca2);
    assert_string_equal(cakey, cakey2);
    assert_string_equal(mgr, mgr2);
    assert_string_equal(mgrkey, mgrkey2);

    X509 *v[5] = {load_cert(dir, "ca"), load_cert(dir, "manager"), load_cert(dir, "node1"),
                  load_cert(dir, "node3"), load_cert(dir, "node4")};
    check_ca(v[0]);
    check_leaf(v[0], v[1], "mgr.lab", MGR_PKI_OU_MANAGER, 30);
    check_leaf(v[0], v[2], "node1", MGR_PKI_OU_AGENT, 30);
    check_leaf(v[0], v[3], "node3", MGR_PKI_OU_AGENT, MGR_PKI_DEFAULT_DAYS);
    check_leaf(v[0], v[4], "node4", MGR_PKI_OU_AGENT, MGR_PKI_DEFAULT_DAYS);
    EVP_PKEY *k = load_key(dir, "node3");
    assert_int_equal(X509_check_private_key(v[3], k), 1);
    EVP_PKEY_free(k);
    check_serials(v, 5);
    static const char *const bases[] = {"ca", "manager", "node1", "node3", "node4"};
    check_modes(dir, bases, 5);

    /* The existing manager's name stays reserved; another name is refused. */
    assert_int_equal(run_pki("init", dir, "--agent", "MGR.lab", NULL), 2);
    assert_non_null(strstr(g_err, "is the manager's name"));
    assert_int_equal(run_pki("init", dir, "--agent", "n5", "--manager-name", "other", NULL), 2);
    assert_non_null(strstr(g_err, "already names the manager 'mgr.lab'"));
    assert_false(exists(dir, "n5.pem"));
    /* Nothing to add. */
    assert_int_equal(run_pki("init", dir, NULL), 2);
    assert_non_null(strstr(g_err, "nothing to do"));

    /* A missing manager certificate is issued again by the same CA. */
    char p[PATH_MAX];
    fmt(p, sizeof(p), "%s/manager.pem", dir);
    assert_int_equal(unlink(p), 0);
    fmt(p, sizeof(p), "%s/manager-key.pem", dir);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(run_pki("init", dir, NULL), 0);
    X509 *m = load_cert(dir, "manager");
    check_leaf(v[0], m, MGR_PKI_MANAGER_NAME, MGR_PKI_OU_MANAGER, MGR_PKI_DEFAULT_DAYS);
    X509_free(m);

    for (size_t i = 0; i < 5; i++)
        X509_free(v[i]);
    free(ca);
    free(cakey);
    free(mgr);
    free(mgrkey);
    free(ca2);
    free(cakey2);
    free(mgr2);
    free(mgrkey2);
}

/* An existing CA whose key does not match, or that is not a CA, is refused. */
static void test_bad_existing_ca(void **state)
{
    char a[PATH_MAX], b[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
    (void)state;

    case_dir(a, "ca_a");
    case_dir(b, "ca_b");
    assert_int_equal(run_pki("init", a, NULL), 0);
    assert_int_equal(run_pki("init", b, NULL), 0);
    fmt(from, sizeof(from), "%s/ca-key.pem", b);
    fmt(to, sizeof(to), "%s/ca-key.pem", a);
    assert_int_equal(rename(from, to), 0);
    assert_int_equal(run_pki("init", a, "--agent", "n1", NULL), 1);
    assert_non_null(strstr(g_err, "ca-key.pem does not match"));
    assert_false(exists(a, "n1.pem"));

    /* b has no CA key at all now. */
    assert_int_equal(run_pki("init", b, "--agent", "n1", NULL), 1);
    assert_non_null(strstr(g_err, "needs the CA's key"));

    /* A leaf in the CA's place. */
    fmt(from, sizeof(from), "%s/manager.pem", a);
    fmt(to, sizeof(to), "%s/ca.pem", a);
    assert_int_equal(rename(from, to), 0);
    fmt(from, sizeof(from), "%s/manager-key.pem", a);
    fmt(to, sizeof(to), "%s/ca-key.pem", a);
    assert_int_equal(rename(from, to), 0);
    assert_int_equal(run_pki("init", a, "--agent", "n1", NULL), 1);
    assert_non_null(strstr(g_err, "not a CA certificate"));
}

static void expect_refused(const char *name, const char *why)
{
    char dir[PATH_MAX];
    struct iof_diag diag = {{0}};
    const char *agents[] = {"ok1", name};
    struct mgr_pki_opts o = {.agents = agents, .nagents = 2};

    case_dir(dir, "refused");
    o.dir = dir;
    assert_int_equal(mgr_pki_init(&o, NULL, &diag), IOF_EUSAGE);
    if (!strstr(diag.msg, why))
        fail_msg("name '%s': got '%s', expected '%s'", name, diag.msg, why);
    /* Checked before anything is created. */
    assert_int_equal(access(dir, F_OK), -1);
}

static void test_bad_names(void **state)
{
    char longname[PROTO_NODE_NAME_MAX + 2];
    (void)state;

    expect_refused("", "must not be empty");
    expect_refused("a/b", "byte 1 (0x2f) is not allowed");
    expect_refused("../x", "byte 2 (0x2f) is not allowed");
    expect_refused("node 1", "is not allowed");
    expect_refused("n\xc3\xa9", "is not allowed");
    expect_refused("*.lab", "is not allowed");
    expect_refused(".lab", "must not start with '.'");
    expect_refused("ca", "reserved");
    expect_refused("manager", "reserved");
    expect_refused("n1-key", "must not end in '-key'");
    expect_refused(MGR_PKI_MANAGER_NAME, "is the manager's name");
    expect_refused("IOFLEET-Manager", "is the manager's name");
    expect_refused("OK1", "given twice");
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    expect_refused(longname, "longer than 64 bytes");
    longname[PROTO_NODE_NAME_MAX] = '\0'; /* exactly 64 is fine */
    assert_int_equal(mgr_pki_name_check("agent name", longname, NULL), 0);

    /* Through the command line: exit 2 and the name in the message. */
    char dir[PATH_MAX];
    case_dir(dir, "refused");
    assert_int_equal(run_pki("init", dir, "--agent", "node1", "--agent", "bad/name", NULL), 2);
    assert_non_null(strstr(g_err, "agent name 'bad/name': byte 3 (0x2f) is not allowed"));
    assert_int_equal(run_pki("init", dir, "--manager-name", "-", "--agent", "-", NULL), 2);
    assert_non_null(strstr(g_err, "is the manager's name"));
    assert_int_equal(access(dir, F_OK), -1);
}

static void test_usage(void **state)
{
    char dir[PATH_MAX];
    (void)state;

    case_dir(dir, "usage");
    assert_int_equal(run_pki(NULL), 2);
    assert_int_equal(run_pki("frobnicate", NULL), 2);
    assert_non_null(strstr(g_err, "unknown command 'frobnicate'"));
    assert_int_equal(run_pki("init", NULL), 2);
    assert_non_null(strstr(g_err, "needs a directory"));
    assert_int_equal(run_pki("init", dir, "--agent", NULL), 2);
    assert_non_null(strstr(g_err, "--agent needs a value"));
    assert_int_equal(run_pki("init", dir, "--days", "0", NULL), 2);
    assert_non_null(strstr(g_err, "--days must be a number 1..3650, got '0'"));
    assert_int_equal(run_pki("init", dir, "--days", "3651", NULL), 2);
    assert_int_equal(run_pki("init", dir, "--days", "-5", NULL), 2);
    assert_int_equal(run_pki("init", dir, "--days", "12x", NULL), 2);
    assert_int_equal(run_pki("init", dir, "--bogus", NULL), 2);
    assert_non_null(strstr(g_err, "unknown option '--bogus'"));
    assert_int_equal(run_pki("init", dir, "other", NULL), 2);
    assert_non_null(strstr(g_err, "one directory only"));
    assert_int_equal(access(dir, F_OK), -1);
    assert_int_equal(run_pki("--help", NULL), 0);
    assert_non_null(strstr(g_out, "usage: iofleet pki init DIR"));
}

/* I/O problems exit 1 and name the path. */
static void test_io_errors(void **state)
{
    char dir[PATH_MAX], file[PATH_MAX];
    (void)state;

    fmt(file, sizeof(file), "%s/plainfile", g_dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(run_pki("init", file, "--agent", "n1", NULL), 1);
    assert_non_null(strstr(g_err, "plainfile: Not a directory"));
    fmt(dir, sizeof(dir), "%s/plainfile/sub", g_dir);
    assert_int_equal(run_pki("init", dir, "--agent", "n1", NULL), 1);
    assert_non_null(strstr(g_err, "plainfile"));

    /* A directory in the place of an output file is refused even with --force. */
    case_dir(dir, "dirinway");
    assert_int_equal(mkdir(dir, 0700), 0);
    fmt(file, sizeof(file), "%s/n1.pem", dir);
    assert_int_equal(mkdir(file, 0700), 0);
    assert_int_equal(run_pki("init", dir, "--agent", "n1", "--force", NULL), 1);
    assert_non_null(strstr(g_err, "n1.pem: Is a directory"));
    assert_false(exists(dir, "ca.pem"));
}

/* ---- fixture ----------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    if (test_tmpdir_make(g_dir, "test_pki") < 0)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (g_dir[0])
        test_tmpdir_remove(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_fresh),
        cmocka_unit_test(test_modes_ignore_umask),
        cmocka_unit_test(test_no_overwrite_without_force),
        cmocka_unit_test(test_stray_file_blocks_new_ca),
        cmocka_unit_test(test_add_agent_to_existing_ca),
        cmocka_unit_test(test_bad_existing_ca),
        cmocka_unit_test(test_bad_names),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_io_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
