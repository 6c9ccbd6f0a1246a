/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_tls_resume.c - TLS 1.3 session resumption (common/tls.c):
 * a client that got a ticket offers it on its next connection to the same
 * address and the server that issued it resumes the session with the peer
 * identities of the full handshake, the ticket being the id of a session the
 * server keeps; a ticket tampered with on the wire, one from another server
 * context (another process), or one for another address
 * ends in a full, certificate-checked handshake; a client certificate that
 * expired after the ticket was issued is refused.
 *
 * The two engines talk through their memory BIOs in this process (no
 * sockets). The PKI is made with the OpenSSL API (EC P-256) in a mkdtemp
 * directory under $IOF_TEST_TMPDIR (or /tmp), removed at the end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/tls.h"
#include "tmpdir.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static char g_dir[PATH_MAX];

static void path_of(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", g_dir, name);
}

static X509 *make_cert(EVP_PKEY *key, const char *cn, bool ca, X509 *issuer, EVP_PKEY *issuer_key,
                       long to_s)
{
    static long serial = 1;
    X509 *cert = X509_new();
    X509_NAME *name;

    assert_non_null(cert);
    assert_int_equal(X509_set_version(cert, X509_VERSION_3), 1);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
    assert_non_null(X509_gmtime_adj(X509_getm_notBefore(cert), -86400));
    assert_non_null(X509_gmtime_adj(X509_getm_notAfter(cert), to_s));
    assert_int_equal(X509_set_pubkey(cert, key), 1);
    name = X509_get_subject_name(cert);
    assert_int_equal(
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0),
        1);
    assert_int_equal(X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name), 1);
    if (ca) {
        X509V3_CTX v3;
        X509_EXTENSION *ext;
        X509V3_set_ctx(&v3, cert, cert, NULL, NULL, 0);
        ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
        assert_non_null(ext);
        assert_int_equal(X509_add_ext(cert, ext, -1), 1);
        X509_EXTENSION_free(ext);
    }
    assert_true(X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256()) > 0);
    return cert;
}

static void write_pem(const char *file, X509 *cert, EVP_PKEY *key)
{
    char p[4200];
    FILE *f;
    path_of(p, sizeof(p), file);
    f = fopen(p, "w");
    assert_non_null(f);
    if (cert)
        assert_int_equal(PEM_write_X509(f, cert), 1);
    else
        assert_int_equal(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
}

static void make_leaf(const char *base, const char *cn, X509 *ca, EVP_PKEY *ca_key, long to_s)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    X509 *cert;
    char f[64];

    assert_non_null(key);
    cert = make_cert(key, cn, false, ca, ca_key, to_s);
    snprintf(f, sizeof(f), "%s.pem", base);
    write_pem(f, cert, NULL);
    snprintf(f, sizeof(f), "%s.key", base);
    write_pem(f, NULL, key);
    X509_free(cert);
    EVP_PKEY_free(key);
}

/* The CA, kept for the certificate a test makes when it needs it. */
static X509 *g_ca;
static EVP_PKEY *g_ca_key;

static int group_setup(void **state)
{
    EVP_PKEY *ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    X509 *ca;

    (void)state;
    if (!ca_key || test_tmpdir_make(g_dir, "test_tls_resume") < 0)
        return -1;
    ca = make_cert(ca_key, "iofleet test CA", true, NULL, NULL, 3650L * 86400);
    write_pem("ca.pem", ca, NULL);
    make_leaf("manager", "iofleet-manager", ca, ca_key, 365L * 86400);
    make_leaf("node1", "node1", ca, ca_key, 365L * 86400);
    g_ca = ca;
    g_ca_key = ca_key;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    X509_free(g_ca);
    EVP_PKEY_free(g_ca_key);
    test_tmpdir_remove(g_dir);
    return 0;
}

static struct iof_tls_ctx *load(const char *cert, bool server)
{
    char ca[4200], c[4200], k[4200], f[64];
    struct iof_tls_ctx *ctx = NULL;
    struct iof_diag d = {{0}};

    path_of(ca, sizeof(ca), "ca.pem");
    snprintf(f, sizeof(f), "%s.pem", cert);
    path_of(c, sizeof(c), f);
    snprintf(f, sizeof(f), "%s.key", cert);
    path_of(k, sizeof(k), f);
    if (iof_tls_config_load(NULL, ca, c, k, server, &ctx, &d))
        fail_msg("load %s: %s", cert, d.msg);
    return ctx;
}

/* Offset of the first PSK identity in a ClientHello record at buf, or 0
 * when it carries no pre_shared_key extension (type 41). */
static size_t psk_identity_at(const uint8_t *buf, size_t len, size_t *idlen)
{
    size_t p = 5 + 4 + 2 + 32, end;
    if (len < p + 1 || buf[0] != 0x16 || buf[5] != 0x01)
        return 0;
    p += 1 + buf[p];                             /* session id */
    p += 2 + ((size_t)buf[p] << 8 | buf[p + 1]); /* cipher suites */
    p += 1 + buf[p];                             /* compression */
    end = p + 2 + ((size_t)buf[p] << 8 | buf[p + 1]);
    p += 2;
    while (p + 8 <= end && end <= len) {
        unsigned type = (unsigned)buf[p] << 8 | buf[p + 1];
        size_t elen = (size_t)buf[p + 2] << 8 | buf[p + 3];
        if (type == 41) { /* identities<2>, identity<2>, ticket */
            *idlen = (size_t)buf[p + 6] << 8 | buf[p + 7];
            return p + 8;
        }
        p += 4 + elen;
    }
    return 0;
}

/* Changes one byte in the middle of the ticket stored for peer (what the
 * server looks up), as an attacker with the client's memory could. */
static void tamper_ticket(struct iof_tls_ctx *cli, const char *peer)
{
    uint8_t *der = NULL;
    size_t len = 0;
    bool done = false;

    assert_int_equal(iof_tls_ctx_ticket_export(cli, peer, &der, &len), 0);
    /* The ticket is the DER session's [10] EXPLICIT OCTET STRING: 0xaa L
     * 0x04 L-2, both lengths in the short form (a 32-byte session id). */
    for (size_t i = 0; i + 4 < len && !done; i++) {
        size_t n = der[i + 3];
        if (der[i] == 0xaa && der[i + 2] == 0x04 && der[i + 1] < 0x80 && n + 2 == der[i + 1] &&
            n >= 16 && i + 4 + n <= len) {
            der[i + 4 + n / 2] ^= 0x5a;
            done = true;
        }
    }
    assert_true(done);
    assert_int_equal(iof_tls_ctx_ticket_import(cli, peer, der, len), 0);
    free(der);
}

struct hs {
    int cli, srv; /* last results of iof_tls_sess_handshake */
    struct iof_diag dc, ds;
    bool offered; /* the ClientHello carried a ticket */
    size_t idlen; /* its length */
};

/* Runs one handshake between a new client session (of cli, for address
 * peer) and a new server session (of srv) to its end. The sessions are
 * returned for checks. */
static void handshake(struct iof_tls_ctx *cli, struct iof_tls_ctx *srv, const char *peer,
                      struct hs *h, struct iof_tls_sess **pc, struct iof_tls_sess **ps)
{
    struct iof_tls_sess *c = iof_tls_sess_new(cli, peer), *s = iof_tls_sess_new(srv, "client");
    uint8_t buf[64 << 10];
    bool first = true;

    assert_non_null(c);
    assert_non_null(s);
    memset(h, 0, sizeof(*h));
    for (int round = 0; round < 20 && !(h->cli == 1 && h->srv == 1); round++) {
        size_t n;
        if (h->cli >= 0 && h->cli != 1)
            h->cli = iof_tls_sess_handshake(c, &h->dc);
        while ((n = iof_tls_sess_out_take(c, buf, sizeof(buf))) > 0) {
            if (first) {
                size_t idlen = 0;
                h->offered = psk_identity_at(buf, n, &idlen) > 0 && idlen >= 16;
                h->idlen = idlen;
                first = false;
            }
            assert_int_equal(iof_tls_sess_feed(s, buf, n, &h->ds), 0);
        }
        if (h->srv >= 0 && h->srv != 1)
            h->srv = iof_tls_sess_handshake(s, &h->ds);
        while ((n = iof_tls_sess_out_take(s, buf, sizeof(buf))) > 0)
            if (iof_tls_sess_feed(c, buf, n, &h->dc) < 0)
                break;
        if (h->cli < 0 || h->srv < 0)
            break;
    }
    *pc = c;
    *ps = s;
}

/* A handshake that must succeed; returns whether it resumed (checked on both
 * sides alike) and checks both identities. */
static bool handshake_ok(struct iof_tls_ctx *cli, struct iof_tls_ctx *srv, const char *peer,
                         const char *client_name, bool *offered)
{
    struct iof_tls_sess *c, *s;
    struct iof_diag d = {{0}};
    struct hs h;
    bool resumed;

    handshake(cli, srv, peer, &h, &c, &s);
    if (h.cli != 1 || h.srv != 1)
        fail_msg("handshake: client %d '%s', server %d '%s'", h.cli, h.dc.msg, h.srv, h.ds.msg);
    resumed = iof_tls_sess_resumed(c);
    assert_int_equal(iof_tls_sess_resumed(s), resumed);
    /* The identities hold whether or not certificates were on the wire. */
    assert_true(iof_tls_sess_peer_has_cert(s));
    assert_string_equal(iof_tls_sess_peer_name(s), client_name);
    assert_int_equal(iof_tls_sess_check_name(s, client_name, &d), 0);
    assert_int_equal(iof_tls_sess_check_name(s, "someone-else", &d), -EACCES);
    assert_string_equal(iof_tls_sess_peer_name(c), "node1");
    assert_int_equal(iof_tls_sess_check_name(c, "node1", &d), 0);
    /* And data flows. */
    {
        uint8_t buf[4096], out[64];
        size_t n;
        assert_int_equal(iof_tls_sess_write(c, "ping", 4, &d), 0);
        while ((n = iof_tls_sess_out_take(c, buf, sizeof(buf))) > 0)
            assert_int_equal(iof_tls_sess_feed(s, buf, n, &d), 0);
        assert_int_equal(iof_tls_sess_read(s, out, sizeof(out), &d), 4);
        assert_memory_equal(out, "ping", 4);
    }
    if (offered)
        *offered = h.offered;
    iof_tls_sess_free(c);
    iof_tls_sess_free(s);
    return resumed;
}

static void test_resumes_with_the_same_identities(void **state)
{
    struct iof_tls_ctx *cli = load("manager", false), *srv = load("node1", true);
    struct iof_tls_counts k;
    bool offered;

    (void)state;
    assert_false(handshake_ok(cli, srv, "10.0.0.1:7066", "iofleet-manager", &offered));
    assert_false(offered);
    assert_int_equal(iof_tls_ctx_tickets(cli), 1);
    /* Reconnect: the ticket is offered and accepted; a new one replaces it. */
    for (int i = 0; i < 3; i++) {
        assert_true(handshake_ok(cli, srv, "10.0.0.1:7066", "iofleet-manager", &offered));
        assert_true(offered);
        assert_int_equal(iof_tls_ctx_tickets(cli), 1);
    }
    iof_tls_ctx_counts(srv, &k);
    assert_int_equal(k.full, 1);
    assert_int_equal(k.resumed, 3);
    iof_tls_ctx_counts(cli, &k);
    assert_int_equal(k.full, 1);
    assert_int_equal(k.resumed, 3);
    assert_int_equal(k.refused_tickets, 0);
    /* Another address: no ticket to offer, a full handshake. */
    assert_false(handshake_ok(cli, srv, "10.0.0.2:7066", "iofleet-manager", &offered));
    assert_false(offered);
    assert_int_equal(iof_tls_ctx_tickets(cli), 2);
    iof_tls_ctx_forget_tickets(cli);
    assert_int_equal(iof_tls_ctx_tickets(cli), 0);
    assert_false(handshake_ok(cli, srv, "10.0.0.1:7066", "iofleet-manager", &offered));
    assert_false(offered);
    iof_tls_ctx_free(cli);
    iof_tls_ctx_free(srv);
}

static void test_tampered_ticket_means_full_handshake(void **state)
{
    struct iof_tls_ctx *cli = load("manager", false), *srv = load("node1", true);
    struct iof_tls_counts k;
    bool offered;

    (void)state;
    assert_false(handshake_ok(cli, srv, "10.0.0.1:7066", "iofleet-manager", NULL));
    tamper_ticket(cli, "10.0.0.1:7066");
    assert_false(handshake_ok(cli, srv, "10.0.0.1:7066", "iofleet-manager", &offered));
    assert_true(offered);
    iof_tls_ctx_counts(cli, &k);
    assert_int_equal(k.full, 2);
    assert_int_equal(k.resumed, 0);
    assert_int_equal(k.refused_tickets, 1);
    /* The full handshake's ticket resumes again. */
    assert_true(handshake_ok(cli, srv, "10.0.0.1:7066", "iofleet-manager", NULL));
    iof_tls_ctx_free(cli);
    iof_tls_ctx_free(srv);
}

/* The ticket is the id of a session the server keeps (stateful tickets):
 * nothing is sealed on a full handshake nor unsealed on a resumption. The
 * server context holds one session per client whose ticket is still good,
 * also when the connection ended without a close_notify (a lost link) or
 * with the client's. */
static void test_ticket_is_a_kept_session(void **state)
{
    struct iof_tls_ctx *srv = load("node1", true), *cli[3];
    char peer[32];
    struct iof_tls_sess *c, *s;
    struct hs h;

    (void)state;
    assert_int_equal(iof_tls_ctx_sessions(srv), 0);
    for (int i = 0; i < 3; i++) {
        cli[i] = load("manager", false);
        assert_false(handshake_ok(cli[i], srv, "10.0.0.1:7066", "iofleet-manager", NULL));
    }
    assert_int_equal(iof_tls_ctx_sessions(srv), 3);
    for (int i = 0; i < 3; i++) {
        snprintf(peer, sizeof(peer), "10.0.0.1:7066");
        handshake(cli[i], srv, peer, &h, &c, &s);
        assert_int_equal(h.cli, 1);
        assert_int_equal(h.srv, 1);
        assert_true(h.offered);
        assert_true(h.idlen <= 32);
        assert_true(iof_tls_sess_resumed(s));
        iof_tls_sess_free(c); /* no shutdown on either side */
        iof_tls_sess_free(s);
    }
    assert_int_equal(iof_tls_ctx_sessions(srv), 3 + 3);
    for (int i = 0; i < 3; i++) {
        /* The client ends the session in order (close_notify), the server
         * reads that end: the ticket still resumes. */
        uint8_t buf[4096];
        size_t n;
        handshake(cli[i], srv, peer, &h, &c, &s);
        assert_int_equal(h.srv, 1);
        assert_true(iof_tls_sess_resumed(s));
        iof_tls_sess_shutdown(c);
        while ((n = iof_tls_sess_out_take(c, buf, sizeof(buf))) > 0)
            assert_int_equal(iof_tls_sess_feed(s, buf, n, &h.ds), 0);
        assert_int_equal(iof_tls_sess_read(s, buf, sizeof(buf), &h.ds), -EPIPE);
        iof_tls_sess_free(c);
        iof_tls_sess_free(s);
    }
    for (int i = 0; i < 3; i++) {
        assert_true(handshake_ok(cli[i], srv, "10.0.0.1:7066", "iofleet-manager", NULL));
        iof_tls_ctx_free(cli[i]);
    }
    iof_tls_ctx_free(srv);
}

static void test_foreign_ticket_means_full_handshake(void **state)
{
    struct iof_tls_ctx *cli = load("manager", false), *srv = load("node1", true);
    struct iof_tls_ctx *srv2 = load("node1", true); /* same certificate, own ticket keys */
    struct iof_tls_counts k;
    bool offered;

    (void)state;
    assert_false(handshake_ok(cli, srv, "10.0.0.1:7066", "iofleet-manager", NULL));
    assert_false(handshake_ok(cli, srv2, "10.0.0.1:7066", "iofleet-manager", &offered));
    assert_true(offered);
    iof_tls_ctx_counts(srv2, &k);
    assert_int_equal(k.full, 1);
    assert_int_equal(k.resumed, 0);
    iof_tls_ctx_free(cli);
    iof_tls_ctx_free(srv);
    iof_tls_ctx_free(srv2);
}

#define BRIEF_S 5L
static void test_expired_since_the_ticket_is_refused(void **state)
{
    struct iof_tls_ctx *cli, *srv;
    struct iof_tls_sess *c, *s;
    struct hs h;
    uint64_t made;

    (void)state;
    /* Valid for BRIEF_S from now: it expires between the full handshake
     * below and the resumption, however slowly a loaded machine gets to
     * the first. */
    made = iof_wall_ns();
    make_leaf("brief", "brief", g_ca, g_ca_key, BRIEF_S);
    cli = load("brief", false);
    srv = load("node1", true);
    assert_false(handshake_ok(cli, srv, "10.0.0.1:7066", "brief", NULL));
    while (iof_wall_ns() < made + (BRIEF_S + 1) * IOF_NS_PER_S)
        usleep(100 * 1000);
    handshake(cli, srv, "10.0.0.1:7066", &h, &c, &s);
    assert_true(h.offered);
    assert_int_equal(h.srv, -EACCES);
    assert_non_null(strstr(h.ds.msg, "expired on"));
    assert_non_null(strstr(h.ds.msg, "resumed session"));
    assert_true(h.cli != 1);
    iof_tls_sess_free(c);
    iof_tls_sess_free(s);
    iof_tls_ctx_free(cli);
    iof_tls_ctx_free(srv);
}

/* iof_tls_sess_has_input says whether a read would find anything: after
 * the last record fed in was read, nothing; with two records fed in at
 * once, one read leaves the other. */
static void test_has_input(void **state)
{
    struct iof_tls_ctx *cli = load("manager", false), *srv = load("node1", true);
    struct iof_tls_sess *c, *s;
    struct iof_diag d = {{0}};
    uint8_t buf[4096], out[64];
    struct hs h;
    size_t n;
    (void)state;

    handshake(cli, srv, "10.0.0.1:7066", &h, &c, &s);
    assert_true(h.cli == 1 && h.srv == 1);
    while (iof_tls_sess_has_input(s)) /* what the handshake left (none on the server) */
        assert_true(iof_tls_sess_read(s, out, sizeof(out), &d) >= 0);
    assert_int_equal(iof_tls_sess_write(c, "a", 1, &d), 0);
    assert_int_equal(iof_tls_sess_write(c, "bc", 2, &d), 0);
    n = iof_tls_sess_out_take(c, buf, sizeof(buf));
    assert_true(n > 0);
    assert_int_equal(iof_tls_sess_feed(s, buf, n, &d), 0);
    assert_true(iof_tls_sess_has_input(s));
    assert_int_equal(iof_tls_sess_read(s, out, sizeof(out), &d), 1);
    assert_true(iof_tls_sess_has_input(s));
    assert_int_equal(iof_tls_sess_read(s, out + 1, sizeof(out) - 1, &d), 2);
    assert_memory_equal(out, "abc", 3);
    assert_false(iof_tls_sess_has_input(s));
    assert_int_equal(iof_tls_sess_read(s, out, sizeof(out), &d), 0);
    iof_tls_sess_free(c);
    iof_tls_sess_free(s);
    iof_tls_ctx_free(cli);
    iof_tls_ctx_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resumes_with_the_same_identities),
        cmocka_unit_test(test_tampered_ticket_means_full_handshake),
        cmocka_unit_test(test_ticket_is_a_kept_session),
        cmocka_unit_test(test_foreign_ticket_means_full_handshake),
        cmocka_unit_test(test_expired_since_the_ticket_is_refused),
        cmocka_unit_test(test_has_input),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
