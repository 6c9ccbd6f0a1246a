/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_tls.c - the TLS transport under iof_conn (common/tls.c,
 * common/net.c): TLS 1.3, mutual certificate authentication, over libuv on
 * 127.0.0.1 (ephemeral ports).
 *
 * The PKI is made here with the OpenSSL API (EC P-256): a CA; "node1" (the
 * server: CN node1.example, DNS SAN node1, so the SAN must win); the manager
 * "iofleet-manager" (CN only); an expired certificate and a not-yet-valid
 * one, both from the CA; "iofleet-manager" again from another CA.
 *
 * Each scenario runs one listener and one client on a fresh loop until both
 * sides have reported their outcome, then checks who said what: both peer
 * names and 1 MiB + many small writes each way on success; for each failure
 * the documented code and text on each side. The loop must end with every
 * handle closed (uv_loop_close() == 0); ASan checks the rest.
 *
 * Files live in a mkdtemp directory under $IOF_TEST_TMPDIR (created if
 * missing; /tmp otherwise), removed at the end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/net.h"
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

/* ---- the PKI ---------------------------------------------------------------------------- */

static char g_dir[PATH_MAX];

static void path_of(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", g_dir, name);
}

static void add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509_EXTENSION *ext;

    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    assert_non_null(ext);
    assert_int_equal(X509_add_ext(cert, ext, -1), 1);
    X509_EXTENSION_free(ext);
}

/* A certificate for key, valid from now+from_s to now+to_s, signed by
 * issuer/issuer_key (self-signed when issuer is NULL). */
static X509 *make_cert(EVP_PKEY *key, const char *cn, const char *san, bool ca, X509 *issuer,
                       EVP_PKEY *issuer_key, long from_s, long to_s)
{
    static long serial = 1;
    X509 *cert = X509_new();
    X509_NAME *name;

    assert_non_null(cert);
    assert_int_equal(X509_set_version(cert, X509_VERSION_3), 1);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
    assert_non_null(X509_gmtime_adj(X509_getm_notBefore(cert), from_s));
    assert_non_null(X509_gmtime_adj(X509_getm_notAfter(cert), to_s));
    assert_int_equal(X509_set_pubkey(cert, key), 1);
    name = X509_get_subject_name(cert);
    assert_int_equal(
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0),
        1);
    assert_int_equal(X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name), 1);
    if (ca) {
        add_ext(cert, issuer ? issuer : cert, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(cert, issuer ? issuer : cert, NID_key_usage, "critical,keyCertSign,cRLSign");
        add_ext(cert, issuer ? issuer : cert, NID_subject_key_identifier, "hash");
    } else {
        add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE");
        add_ext(cert, issuer, NID_key_usage, "critical,digitalSignature");
        add_ext(cert, issuer, NID_ext_key_usage, "serverAuth,clientAuth");
        if (san) {
            char v[300];
            snprintf(v, sizeof(v), "DNS:%s", san);
            add_ext(cert, issuer, NID_subject_alt_name, v);
        }
    }
    assert_true(X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256()) > 0);
    return cert;
}

static void write_cert(const char *file, X509 *cert)
{
    char p[4200];
    FILE *f;
    path_of(p, sizeof(p), file);
    f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_X509(f, cert), 1);
    fclose(f);
}

static void write_key(const char *file, EVP_PKEY *key)
{
    char p[4200];
    FILE *f;
    path_of(p, sizeof(p), file);
    f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
}

/* Makes NAME.pem + NAME.key. */
static void make_leaf(const char *file, const char *cn, const char *san, X509 *ca, EVP_PKEY *ca_key,
                      long from_s, long to_s)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    X509 *cert;
    char f[64];

    assert_non_null(key);
    cert = make_cert(key, cn, san, false, ca, ca_key, from_s, to_s);
    snprintf(f, sizeof(f), "%s.pem", file);
    write_cert(f, cert);
    snprintf(f, sizeof(f), "%s.key", file);
    write_key(f, key);
    X509_free(cert);
    EVP_PKEY_free(key);
}

static void make_pki(void)
{
    const long day = 86400;
    EVP_PKEY *ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    EVP_PKEY *other_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    X509 *ca, *other;
    char p[4200];
    FILE *f;

    assert_non_null(ca_key);
    assert_non_null(other_key);
    ca = make_cert(ca_key, "iofleet test CA", NULL, true, NULL, NULL, -day, 3650 * day);
    other = make_cert(other_key, "some other CA", NULL, true, NULL, NULL, -day, 3650 * day);
    write_cert("ca.pem", ca);
    write_cert("other-ca.pem", other);
    make_leaf("node1", "node1.example", "node1", ca, ca_key, -day, 365 * day);
    make_leaf("manager", "iofleet-manager", NULL, ca, ca_key, -day, 365 * day);
    make_leaf("expired", "old-peer", NULL, ca, ca_key, -30 * day, -2 * day);
    make_leaf("future", "future-peer", NULL, ca, ca_key, 30 * day, 60 * day);
    make_leaf("rogue", "iofleet-manager", NULL, other, other_key, -day, 365 * day);
    path_of(p, sizeof(p), "garbage.pem");
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("this is not a certificate\n", f);
    fclose(f);
    X509_free(ca);
    X509_free(other);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(other_key);
}

/* ---- contexts ----------------------------------------------------------------------------- */

static struct iof_tls_ctx *load(const char *ca, const char *cert, const char *key,
                                enum iof_tls_role role, uint32_t hs_ms)
{
    char pca[4200], pcert[4200], pkey[4200];
    struct iof_tls_config cfg = {.role = role, .handshake_ms = hs_ms};
    struct iof_diag d = {{0}};
    struct iof_tls_ctx *ctx = NULL;
    int r;

    path_of(pca, sizeof(pca), ca);
    cfg.ca_file = pca;
    if (cert) {
        path_of(pcert, sizeof(pcert), cert);
        path_of(pkey, sizeof(pkey), key);
        cfg.cert_file = pcert;
        cfg.key_file = pkey;
    }
    r = iof_tls_ctx_new(&cfg, &ctx, &d);
    if (r)
        fprintf(stderr, "load %s: %s\n", cert ? cert : "(none)", d.msg);
    assert_int_equal(r, 0);
    assert_non_null(ctx);
    return ctx;
}

/* ---- scenario runner ---------------------------------------------------------------------- */

#define BIG ((size_t)1 << 20)
#define NSMALL 3000
#define SMALL_SIZE(k) (1 + (size_t)(k) % 37)

enum plain_srv { PSRV_FRAME, PSRV_CLOSE, PSRV_SILENT };
enum plain_cli { PCLI_FRAME, PCLI_SILENT, PCLI_BAD_TLS, PCLI_HUGE_HELLO };

struct side {
    struct iof_conn *conn;
    bool connected; /* on_connect(0) / on_accept */
    bool done;      /* final outcome known */
    int err;        /* on_connect(err) / on_reject(err) */
    char why[512];  /* iof_conn_error() then */
    bool closed;    /* on_close seen */
    int close_err;
    char close_why[512];
    char name[IOF_TLS_NAME_MAX];
    bool has_cert;
    bool is_tls;
    uint8_t first[2]; /* first bytes received (plain peers) */
    size_t nfirst;
    size_t rx;
    bool rx_bad;
    int check_ok, check_bad;
    char check_why[512];
};

struct scenario {
    struct iof_tls_ctx *srv_tls; /* NULL: plain listener behaving as plain_srv */
    struct iof_tls_ctx *cli_tls; /* NULL: plain client behaving as plain_cli */
    enum plain_srv plain_srv;
    enum plain_cli plain_cli;
    bool data;
    bool close_on_connect;      /* the TLS client closes once authenticated */
    uint64_t close_listener_ms; /* close the listener that long after start */
};

struct run {
    uv_loop_t loop;
    const struct scenario *sc;
    struct iof_listener *l;
    uv_timer_t guard;
    uv_timer_t closer;
    bool finished;
    bool timed_out;
    struct side srv, cli;
    bool sent;       /* maybe_send_streams */
    uint8_t *stream; /* the bytes each side sends (same generator, own seed) */
    size_t total;
};

static uint8_t pattern(size_t i, unsigned seed)
{
    return (uint8_t)(i * 131u + (i >> 9) + seed * 17u);
}

static size_t stream_total(void)
{
    size_t t = BIG;
    for (unsigned k = 0; k < NSMALL; k++)
        t += SMALL_SIZE(k);
    return t;
}

static uint8_t *stream_bytes(unsigned seed)
{
    size_t total = stream_total();
    uint8_t *buf = malloc(total);

    assert_non_null(buf);
    for (size_t i = 0; i < total; i++)
        buf[i] = pattern(i, seed);
    return buf;
}

/* Both sides' streams, once both are authenticated (they share the loop):
 * the first small writes of both, interleaved, as one batch's
 * (iof_conn_write_batched: each a record encrypted at once; a connection
 * written twice sends the batch, so the batches hold one write of each
 * side and go through io_uring where the kernel has it); then the 1 MiB
 * and the other small writes of each, in order with the batched ones. */
static void send_streams(struct iof_conn *srv, struct iof_conn *cli)
{
    struct iof_conn *c[2] = {srv, cli};
    uint8_t *buf[2] = {stream_bytes(1), stream_bytes(2)};
    size_t off[2] = {0, 0};

    iof_conn_batch_begin();
    for (unsigned k = 0; k < NSMALL / 2; k++)
        for (int i = 0; i < 2; i++) {
            /* The last one as an ordinary write while a record of its
             * connection waits in the batch: the record must go first. */
            if (k + 1 < NSMALL / 2)
                assert_int_equal(iof_conn_write_batched(c[i], buf[i] + off[i], SMALL_SIZE(k)), 0);
            else
                assert_int_equal(iof_conn_write(c[i], buf[i] + off[i], SMALL_SIZE(k)), 0);
            off[i] += SMALL_SIZE(k);
        }
    iof_conn_batch_end();
    print_message("batched records went through %s\n",
                  iof_conn_batch_state() == 1 ? "io_uring" : "plain writes");
    for (int i = 0; i < 2; i++) {
        assert_int_equal(iof_conn_write(c[i], buf[i] + off[i], BIG), 0);
        off[i] += BIG;
        for (unsigned k = NSMALL / 2; k < NSMALL; k++) {
            assert_int_equal(iof_conn_write(c[i], buf[i] + off[i], SMALL_SIZE(k)), 0);
            off[i] += SMALL_SIZE(k);
        }
        assert_int_equal(off[i], stream_total());
        free(buf[i]);
    }
}

static void maybe_send_streams(struct run *r)
{
    if (!r->sc->data || r->sent || !r->srv.conn || !r->cli.conn || !r->srv.connected ||
        !r->cli.connected)
        return;
    r->sent = true;
    send_streams(r->srv.conn, r->cli.conn);
}

static void finish(struct run *r)
{
    if (r->finished || !r->srv.done || !r->cli.done)
        return;
    r->finished = true;
    uv_timer_stop(&r->guard);
    if (r->l)
        iof_listener_close(r->l);
    r->l = NULL;
}

static void check_rx(struct side *s, const uint8_t *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern(s->rx + i, seed))
            s->rx_bad = true;
    s->rx += len;
}

static void maybe_done_data(struct run *r)
{
    size_t total = stream_total();
    if (r->srv.rx == total && r->cli.rx == total && r->cli.conn)
        iof_conn_close(r->cli.conn, 0);
}

static void note_first(struct side *s, const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len && s->nfirst < 2; i++)
        s->first[s->nfirst++] = buf[i];
}

static void record_peer(struct side *s, struct iof_conn *c)
{
    const char *n = iof_conn_peer_name(c);
    s->connected = true;
    s->conn = c;
    s->is_tls = iof_conn_is_tls(c);
    s->has_cert = iof_conn_peer_has_cert(c);
    snprintf(s->name, sizeof(s->name), "%s", n ? n : "(null)");
}

/* server side */

static void srv_on_data(struct iof_conn *c, const uint8_t *buf, size_t len, void *arg)
{
    struct run *r = arg;
    note_first(&r->srv, buf, len);
    if (r->sc->srv_tls) {
        check_rx(&r->srv, buf, len, 2);
        maybe_done_data(r);
        return;
    }
    /* A plain endpoint receiving a TLS ClientHello. */
    if (r->srv.nfirst == 2 && iof_tls_sniff(r->srv.first, 2) == IOF_TLS_SNIFF_HANDSHAKE &&
        !r->srv.why[0]) {
        snprintf(r->srv.why, sizeof(r->srv.why), "%s", IOF_TLS_MSG_ON_PLAIN);
        r->srv.err = IOF_EPROTO;
        if (r->sc->plain_srv == PSRV_FRAME || r->sc->plain_srv == PSRV_CLOSE)
            iof_conn_close(c, IOF_EPROTO);
    }
}

static void srv_on_close(struct iof_conn *c, int err, void *arg)
{
    struct run *r = arg;
    r->srv.closed = true;
    r->srv.close_err = err;
    snprintf(r->srv.close_why, sizeof(r->srv.close_why), "%s", iof_conn_error(c));
    r->srv.conn = NULL;
    r->srv.done = true;
    finish(r);
}

static void srv_on_accept(struct iof_listener *l, struct iof_conn *c, void *arg)
{
    static const struct iof_conn_cbs cbs = {.on_data = srv_on_data, .on_close = srv_on_close};
    static const uint8_t frame[] = {'I', 'F', 1, 0, 0, 0, 0, 2, '{', '}'};
    struct run *r = arg;
    struct iof_diag d = {{0}};

    (void)l;
    record_peer(&r->srv, c);
    iof_conn_set_cbs(c, &cbs, r);
    if (r->sc->srv_tls) {
        if (iof_conn_check_peer_name(c, "iofleet-manager", &d) == 0)
            r->srv.check_ok++;
        if (iof_conn_check_peer_name(c, "node1", &d) == -EACCES)
            r->srv.check_bad++;
        snprintf(r->srv.check_why, sizeof(r->srv.check_why), "%s", d.msg);
        maybe_send_streams(r);
    } else if (r->sc->plain_srv == PSRV_FRAME) {
        assert_int_equal(iof_conn_write(c, frame, sizeof(frame)), 0);
    }
}

static void srv_on_reject(struct iof_listener *l, struct iof_conn *c, int err, void *arg)
{
    struct run *r = arg;
    (void)l;
    assert_false(r->srv.done);
    assert_true(strlen(iof_conn_peer(c)) > 1);
    r->srv.err = err;
    snprintf(r->srv.why, sizeof(r->srv.why), "%s", iof_conn_error(c));
    r->srv.done = true;
    finish(r);
}

/* client side */

static void cli_on_data(struct iof_conn *c, const uint8_t *buf, size_t len, void *arg)
{
    struct run *r = arg;
    (void)c;
    note_first(&r->cli, buf, len);
    if (r->sc->cli_tls) {
        check_rx(&r->cli, buf, len, 1);
        maybe_done_data(r);
    }
}

static void cli_on_connect(struct iof_conn *c, int err, void *arg)
{
    static const uint8_t frame[] = {'I', 'F', 1, 0, 0, 0, 0, 2, '{', '}'};
    static const uint8_t bad_tls[] = {0x16, 0x03, 0x01, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o'};
    struct run *r = arg;
    struct iof_diag d = {{0}};

    assert_false(r->cli.connected);
    if (err) {
        r->cli.err = err;
        snprintf(r->cli.why, sizeof(r->cli.why), "%s", iof_conn_error(c));
        return; /* on_close follows */
    }
    record_peer(&r->cli, c);
    if (r->sc->cli_tls) {
        if (iof_conn_check_peer_name(c, "node1", &d) == 0)
            r->cli.check_ok++;
        if (iof_conn_check_peer_name(c, "node1.example", &d) == -EACCES)
            r->cli.check_bad++;
        snprintf(r->cli.check_why, sizeof(r->cli.check_why), "%s", d.msg);
        maybe_send_streams(r);
        if (r->sc->close_on_connect)
            iof_conn_close(c, 0);
    } else if (r->sc->plain_cli == PCLI_FRAME) {
        assert_int_equal(iof_conn_write(c, frame, sizeof(frame)), 0);
    } else if (r->sc->plain_cli == PCLI_BAD_TLS) {
        assert_int_equal(iof_conn_write(c, bad_tls, sizeof(bad_tls)), 0);
    } else if (r->sc->plain_cli == PCLI_HUGE_HELLO) {
        /* Full-size handshake records carrying the start of a ClientHello that
         * claims 131056 bytes (OpenSSL itself would wait for up to 128 KiB). */
        enum { REC = 5 + 16384, NREC = 5 };
        uint8_t *b = calloc(NREC, REC);
        assert_non_null(b);
        for (int i = 0; i < NREC; i++) {
            uint8_t *h = b + (size_t)i * REC;
            h[0] = 0x16, h[1] = 0x03, h[2] = 0x01, h[3] = 0x40, h[4] = 0x00;
        }
        b[5] = 0x01, b[6] = 0x01, b[7] = 0xff, b[8] = 0xf0;
        assert_int_equal(iof_conn_write(c, b, (size_t)NREC * REC), 0);
        free(b);
    }
}

static void cli_on_close(struct iof_conn *c, int err, void *arg)
{
    struct run *r = arg;
    r->cli.closed = true;
    r->cli.close_err = err;
    snprintf(r->cli.close_why, sizeof(r->cli.close_why), "%s", iof_conn_error(c));
    r->cli.conn = NULL;
    r->cli.done = true;
    finish(r);
}

static void on_guard(uv_timer_t *t)
{
    struct run *r = t->data;
    r->timed_out = true;
    if (r->cli.conn)
        iof_conn_close(r->cli.conn, -ECANCELED);
    if (r->srv.conn)
        iof_conn_close(r->srv.conn, -ECANCELED);
    r->srv.done = r->cli.done = true;
    finish(r);
}

static void on_closer(uv_timer_t *t)
{
    struct run *r = t->data;
    iof_listener_close(r->l);
    r->l = NULL;
    r->srv.done = true; /* nothing more can happen on the server side */
    finish(r);
}

static void run_scenario(struct run *r, const struct scenario *sc)
{
    static const struct iof_conn_cbs ccbs = {
        .on_connect = cli_on_connect, .on_data = cli_on_data, .on_close = cli_on_close};
    struct iof_diag d = {{0}};
    struct iof_conn *c = NULL;
    int rc;

    memset(r, 0, sizeof(*r));
    r->sc = sc;
    assert_int_equal(uv_loop_init(&r->loop), 0);
    if (sc->srv_tls)
        rc = iof_listener_start_tls(&r->loop, "127.0.0.1", 0, sc->srv_tls, srv_on_accept,
                                    srv_on_reject, r, &r->l, &d);
    else
        rc = iof_listener_start(&r->loop, "127.0.0.1", 0, srv_on_accept, r, &r->l, &d);
    assert_int_equal(rc, 0);
    if (sc->cli_tls) {
        rc = iof_conn_connect_tls(&r->loop, "127.0.0.1", iof_listener_port(r->l), sc->cli_tls,
                                  &ccbs, r, &c);
        assert_int_equal(rc, 0);
        /* Nothing but the handshake before authentication. */
        assert_int_equal(iof_conn_write(c, "x", 1), -ENOTCONN);
    } else {
        rc = iof_conn_connect(&r->loop, "127.0.0.1", iof_listener_port(r->l), &ccbs, r, &c);
        assert_int_equal(rc, 0);
    }
    r->cli.conn = c;
    uv_timer_init(&r->loop, &r->guard);
    r->guard.data = r;
    uv_timer_start(&r->guard, on_guard, 20000, 0);
    uv_timer_init(&r->loop, &r->closer);
    r->closer.data = r;
    if (sc->close_listener_ms)
        uv_timer_start(&r->closer, on_closer, sc->close_listener_ms, 0);
    uv_run(&r->loop, UV_RUN_DEFAULT);
    /* Everything ended: only our two timers are left. */
    uv_close((uv_handle_t *)&r->guard, NULL);
    uv_close((uv_handle_t *)&r->closer, NULL);
    uv_run(&r->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&r->loop), 0);
    assert_false(r->timed_out);
    if (getenv("IOF_TEST_VERBOSE"))
        fprintf(stderr,
                "  server: err %d '%s', close %d '%s'\n  client: err %d '%s', close %d '%s'\n",
                r->srv.err, r->srv.why, r->srv.close_err, r->srv.close_why, r->cli.err, r->cli.why,
                r->cli.close_err, r->cli.close_why);
}

/* ---- fixtures ----------------------------------------------------------------------------- */

struct fx {
    struct iof_tls_ctx *srv;         /* node1 */
    struct iof_tls_ctx *cli;         /* iofleet-manager */
    struct iof_tls_ctx *srv_expired; /* expired server certificate */
    struct iof_tls_ctx *srv_future;  /* not yet valid server certificate */
    struct iof_tls_ctx *srv_rogue;   /* server certificate from another CA */
    struct iof_tls_ctx *cli_expired;
    struct iof_tls_ctx *cli_rogue;
    struct iof_tls_ctx *cli_nocert;
    struct iof_tls_ctx *srv_fast; /* 300 ms handshake timeout */
    struct iof_tls_ctx *cli_fast;
};

static struct fx g_fx;

static int group_setup(void **state)
{
    (void)state;
    if (test_tmpdir_make(g_dir, "test_tls") < 0)
        return -1;
    make_pki();
    g_fx.srv = load("ca.pem", "node1.pem", "node1.key", IOF_TLS_SERVER, 0);
    g_fx.cli = load("ca.pem", "manager.pem", "manager.key", IOF_TLS_CLIENT, 0);
    g_fx.srv_expired = load("ca.pem", "expired.pem", "expired.key", IOF_TLS_SERVER, 0);
    g_fx.srv_future = load("ca.pem", "future.pem", "future.key", IOF_TLS_SERVER, 0);
    g_fx.srv_rogue = load("ca.pem", "rogue.pem", "rogue.key", IOF_TLS_SERVER, 0);
    g_fx.cli_expired = load("ca.pem", "expired.pem", "expired.key", IOF_TLS_CLIENT, 0);
    g_fx.cli_rogue = load("ca.pem", "rogue.pem", "rogue.key", IOF_TLS_CLIENT, 0);
    g_fx.cli_nocert = load("ca.pem", NULL, NULL, IOF_TLS_CLIENT, 0);
    g_fx.srv_fast = load("ca.pem", "node1.pem", "node1.key", IOF_TLS_SERVER, 300);
    g_fx.cli_fast = load("ca.pem", "manager.pem", "manager.key", IOF_TLS_CLIENT, 300);
    return 0;
}

static int group_teardown(void **state)
{
    struct iof_tls_ctx **all = (struct iof_tls_ctx **)&g_fx;
    (void)state;
    for (size_t i = 0; i < sizeof(g_fx) / sizeof(*all); i++)
        iof_tls_ctx_free(all[i]);
    test_tmpdir_remove(g_dir);
    return 0;
}

#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("'%s' does not contain '%s'", (hay), (needle));                               \
    } while (0)

/* ---- tests -------------------------------------------------------------------------------- */

static void test_handshake_and_data(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .cli_tls = g_fx.cli, .data = true};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    /* Both authenticated, each sees the other's name (SAN over CN; CN). */
    assert_true(r->cli.connected);
    assert_true(r->srv.connected);
    assert_int_equal(r->cli.err, 0);
    assert_int_equal(r->srv.err, 0);
    assert_string_equal(r->cli.name, "node1");
    assert_string_equal(r->srv.name, "iofleet-manager");
    assert_true(r->cli.is_tls && r->srv.is_tls);
    assert_true(r->cli.has_cert && r->srv.has_cert);
    /* Name checks: exact name passes; another name fails with a message. */
    assert_int_equal(r->cli.check_ok, 1);
    assert_int_equal(r->cli.check_bad, 1);
    assert_contains(r->cli.check_why, "presented a certificate for 'node1', expected "
                                      "'node1.example'");
    assert_int_equal(r->srv.check_ok, 1);
    assert_int_equal(r->srv.check_bad, 1);
    assert_contains(r->srv.check_why, "expected 'node1'");
    /* 1 MiB + NSMALL small writes each way, intact. */
    assert_int_equal(r->cli.rx, stream_total());
    assert_int_equal(r->srv.rx, stream_total());
    assert_false(r->cli.rx_bad);
    assert_false(r->srv.rx_bad);
    /* The client closed; the server saw the close_notify as a peer close. */
    assert_int_equal(r->cli.close_err, 0);
    assert_int_equal(r->srv.close_err, -EPIPE);
    assert_contains(r->srv.close_why, "closed the TLS session");
    free(r);
}

/* The server sends nothing: the client learns that it was accepted from the
 * server's ticket alone. */
static void test_handshake_without_data(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .cli_tls = g_fx.cli, .close_on_connect = true};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_true(r->cli.connected);
    assert_true(r->srv.connected);
    assert_string_equal(r->cli.name, "node1");
    assert_string_equal(r->srv.name, "iofleet-manager");
    assert_int_equal(r->cli.close_err, 0);
    assert_int_equal(r->srv.close_err, -EPIPE);
    assert_int_equal(r->srv.rx, 0);
    free(r);
}

static void test_client_cert_unknown_ca(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .cli_tls = g_fx.cli_rogue};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_false(r->srv.connected);
    assert_false(r->cli.connected);
    assert_int_equal(r->srv.err, -EACCES);
    assert_contains(r->srv.why, "certificate of 127.0.0.1:");
    assert_contains(r->srv.why, "(\"iofleet-manager\") is not signed by the configured CA");
    assert_int_equal(r->cli.err, -EACCES);
    assert_contains(r->cli.why, "refused our certificate: not signed by a CA it trusts");
    assert_int_equal(r->cli.close_err, -EACCES);
    assert_string_equal(r->cli.close_why, r->cli.why);
    free(r);
}

static void test_server_cert_unknown_ca(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv_rogue, .cli_tls = g_fx.cli};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->cli.err, -EACCES);
    assert_contains(r->cli.why, "is not signed by the configured CA");
    assert_contains(r->cli.why, "ca.pem");
    assert_int_equal(r->srv.err, -EACCES);
    assert_contains(r->srv.why, "refused our certificate: not signed by a CA it trusts");
    free(r);
}

static void test_client_cert_expired(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .cli_tls = g_fx.cli_expired};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->srv.err, -EACCES);
    assert_contains(r->srv.why, "(\"old-peer\") expired on ");
    assert_contains(r->srv.why, " UTC");
    assert_int_equal(r->cli.err, -EACCES);
    assert_contains(r->cli.why, "refused our certificate as expired or not yet valid");
    free(r);
}

static void test_server_cert_expired(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv_expired, .cli_tls = g_fx.cli};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->cli.err, -EACCES);
    assert_contains(r->cli.why, "(\"old-peer\") expired on ");
    assert_int_equal(r->srv.err, -EACCES);
    assert_contains(r->srv.why, "refused our certificate as expired");
    free(r);
}

static void test_server_cert_not_yet_valid(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv_future, .cli_tls = g_fx.cli};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->cli.err, -EACCES);
    assert_contains(r->cli.why, "(\"future-peer\") is not valid before ");
    assert_int_equal(r->srv.err, -EACCES);
    assert_contains(r->srv.why, "refused our certificate");
    free(r);
}

static void test_no_client_cert(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .cli_tls = g_fx.cli_nocert};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->srv.err, -EACCES);
    assert_contains(r->srv.why, "presented no certificate");
    assert_int_equal(r->cli.err, -EACCES);
    assert_contains(r->cli.why, "requires a certificate and we presented none (TLS alert "
                                "\"certificate required\")");
    free(r);
}

static void test_plain_client_on_tls_port(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .plain_cli = PCLI_FRAME};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->srv.err, IOF_EPROTO);
    assert_contains(r->srv.why, "plain (non-TLS) connection on a TLS port");
    assert_contains(r->srv.why, "a plain iofleet peer");
    /* The plain side got a TLS alert record, which its decoder reports as TLS. */
    assert_true(r->cli.connected);
    assert_false(r->cli.is_tls);
    assert_string_equal(r->cli.name, "(null)"); /* no peer name on plain connections */
    assert_false(r->cli.has_cert);
    assert_int_equal(r->cli.nfirst, 2);
    assert_int_equal(iof_tls_sniff(r->cli.first, 2), IOF_TLS_SNIFF_ALERT);
    assert_int_equal(r->cli.close_err, -EPIPE);
    free(r);
}

static void test_garbage_after_tls_header(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .plain_cli = PCLI_BAD_TLS};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->srv.err, IOF_EPROTO);
    assert_contains(r->srv.why, "127.0.0.1:");
    free(r);
}

static void test_handshake_size_bound(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .plain_cli = PCLI_HUGE_HELLO};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->srv.err, IOF_ETOOBIG);
    assert_contains(r->srv.why, "sent more than 64 KiB during the TLS handshake");
    free(r);
}

static void test_tls_client_to_plain_server(void **state)
{
    struct scenario sc = {.cli_tls = g_fx.cli, .plain_srv = PSRV_FRAME};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    /* The plain side recognises the ClientHello... */
    assert_int_equal(r->srv.err, IOF_EPROTO);
    assert_string_equal(r->srv.why, IOF_TLS_MSG_ON_PLAIN);
    /* ...and the TLS client says the peer does not speak TLS. */
    assert_int_equal(r->cli.err, IOF_EPROTO);
    assert_contains(r->cli.why, "is not speaking TLS (first bytes 0x49 0x46: a plain iofleet peer");
    free(r);
}

static void test_tls_client_to_plain_server_closing(void **state)
{
    struct scenario sc = {.cli_tls = g_fx.cli, .plain_srv = PSRV_CLOSE};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_string_equal(r->srv.why, IOF_TLS_MSG_ON_PLAIN);
    assert_int_equal(r->cli.err, IOF_EPROTO);
    assert_contains(r->cli.why, "closed the connection without answering the TLS handshake");
    free(r);
}

static void test_handshake_timeout_server(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv_fast, .plain_cli = PCLI_SILENT};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->srv.err, IOF_ETIMEOUT);
    assert_contains(r->srv.why, "did not complete within 0.3 s");
    assert_int_equal(r->cli.close_err, -EPIPE);
    free(r);
}

static void test_handshake_timeout_client(void **state)
{
    struct scenario sc = {.cli_tls = g_fx.cli_fast, .plain_srv = PSRV_SILENT};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->cli.err, IOF_ETIMEOUT);
    assert_contains(r->cli.why, "TLS handshake with 127.0.0.1:");
    assert_contains(r->cli.why, "did not complete within 0.3 s");
    assert_int_equal(r->cli.close_err, IOF_ETIMEOUT);
    free(r);
}

static void test_listener_close_aborts_handshakes(void **state)
{
    struct scenario sc = {.srv_tls = g_fx.srv, .plain_cli = PCLI_SILENT, .close_listener_ms = 100};
    struct run *r = calloc(1, sizeof(*r));
    (void)state;

    run_scenario(r, &sc);
    assert_int_equal(r->srv.err, 0); /* not reported as a rejection */
    assert_false(r->srv.connected);
    assert_int_equal(r->cli.close_err, -EPIPE);
    free(r);
}

struct early {
    int connect_err;
    int connects;
    int closes;
    int close_err;
    char why[512];
};

static void early_on_connect(struct iof_conn *c, int err, void *arg)
{
    struct early *e = arg;
    e->connects++;
    e->connect_err = err;
    snprintf(e->why, sizeof(e->why), "%s", iof_conn_error(c));
    assert_int_equal(e->closes, 0); /* on_connect comes first */
}

static void early_on_close(struct iof_conn *c, int err, void *arg)
{
    struct early *e = arg;
    (void)c;
    e->closes++;
    e->close_err = err;
}

/* Closing while the name is being resolved: on_connect(-ECANCELED), then
 * on_close, and nothing touches the connection after it is freed. */
static void test_close_while_resolving(void **state)
{
    static const struct iof_conn_cbs cbs = {.on_connect = early_on_connect,
                                            .on_close = early_on_close};
    struct early plain = {0}, tls = {0};
    struct iof_conn *c1 = NULL, *c2 = NULL;
    uv_loop_t loop;
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(iof_conn_connect(&loop, "localhost", 1, &cbs, &plain, &c1), 0);
    assert_int_equal(iof_conn_connect_tls(&loop, "localhost", 1, g_fx.cli, &cbs, &tls, &c2), 0);
    iof_conn_close(c1, 0);
    iof_conn_close(c2, 0);
    assert_string_equal(iof_conn_error(c2), "");
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(plain.connects, 1);
    assert_int_equal(plain.connect_err, -ECANCELED);
    assert_int_equal(plain.closes, 1);
    assert_int_equal(tls.connects, 1);
    assert_int_equal(tls.connect_err, -ECANCELED);
    assert_int_equal(tls.closes, 1);
    assert_int_equal(tls.close_err, 0);
}

/* A refused TCP connection reports the reason through iof_conn_error(). */
static void test_connect_refused(void **state)
{
    static const struct iof_conn_cbs cbs = {.on_connect = early_on_connect,
                                            .on_close = early_on_close};
    struct early e = {0};
    struct iof_conn *c = NULL;
    struct iof_listener *l = NULL;
    struct iof_diag d = {{0}};
    uint16_t port;
    uv_loop_t loop;
    (void)state;

    /* A port that was just free. */
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(iof_listener_start(&loop, "127.0.0.1", 0, srv_on_accept, NULL, &l, &d), 0);
    port = iof_listener_port(l);
    iof_listener_close(l);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(iof_conn_connect_tls(&loop, "127.0.0.1", port, g_fx.cli, &cbs, &e, &c), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(e.connects, 1);
    assert_int_equal(e.connect_err, -ECONNREFUSED);
    assert_contains(e.why, "cannot connect to 127.0.0.1:");
    assert_contains(e.why, ": connection refused");
    assert_int_equal(e.closes, 1);
    assert_int_equal(e.close_err, -ECONNREFUSED);
}

static void test_wrong_role(void **state)
{
    uv_loop_t loop;
    struct iof_listener *l = NULL;
    struct iof_conn *c = NULL;
    struct iof_diag d = {{0}};
    static const struct iof_conn_cbs cbs = {0};
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(
        iof_listener_start_tls(&loop, "127.0.0.1", 0, g_fx.cli, srv_on_accept, NULL, NULL, &l, &d),
        -EINVAL);
    assert_contains(d.msg, "server TLS context");
    assert_int_equal(iof_conn_connect_tls(&loop, "127.0.0.1", 1, g_fx.srv, &cbs, NULL, &c),
                     -EINVAL);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void expect_load_error(const char *ca, const char *cert, const char *key, bool server,
                              int err, const char *text)
{
    char pca[4200], pcert[4200], pkey[4200];
    struct iof_tls_config cfg = {0};
    static char sentinel;
    struct iof_tls_ctx *ctx = (struct iof_tls_ctx *)(void *)&sentinel;
    struct iof_diag d = {{0}};

    path_of(pca, sizeof(pca), ca);
    if (cert)
        path_of(pcert, sizeof(pcert), cert);
    if (key)
        path_of(pkey, sizeof(pkey), key);
    assert_int_equal(
        iof_tls_config_load(&cfg, pca, cert ? pcert : NULL, key ? pkey : NULL, server, &ctx, &d),
        err);
    assert_null(ctx);
    assert_contains(d.msg, text);
}

static void test_config_errors(void **state)
{
    char p[4200], want[4300];
    (void)state;

    path_of(p, sizeof(p), "agent.pem");
    snprintf(want, sizeof(want), "cannot read certificate %s: No such file or directory", p);
    expect_load_error("ca.pem", "agent.pem", "node1.key", true, -ENOENT, want);
    expect_load_error("nope.pem", "node1.pem", "node1.key", true, -ENOENT,
                      "cannot read CA certificate ");
    expect_load_error("ca.pem", "node1.pem", "nope.key", false, -ENOENT, "cannot read key ");
    expect_load_error("ca.pem", "node1.pem", "manager.key", true, -EBADMSG,
                      "does not match certificate");
    expect_load_error("ca.pem", "garbage.pem", "node1.key", true, -EBADMSG,
                      "cannot read certificate ");
    expect_load_error("garbage.pem", "node1.pem", "node1.key", true, -EBADMSG,
                      "cannot read CA certificate ");
    expect_load_error("ca.pem", "node1.pem", "garbage.pem", true, -EBADMSG, "cannot read key ");
    expect_load_error("ca.pem", NULL, NULL, true, -EINVAL, "a TLS server needs a certificate");
    expect_load_error("ca.pem", "node1.pem", NULL, false, -EINVAL,
                      "both a certificate and its key");
}

static void test_config_load_fills_cfg(void **state)
{
    char pca[4200], pcert[4200], pkey[4200];
    struct iof_tls_config cfg = {.handshake_ms = 1234};
    struct iof_tls_ctx *ctx = NULL;
    struct iof_diag d = {{0}};
    (void)state;

    path_of(pca, sizeof(pca), "ca.pem");
    path_of(pcert, sizeof(pcert), "node1.pem");
    path_of(pkey, sizeof(pkey), "node1.key");
    assert_int_equal(iof_tls_config_load(&cfg, pca, pcert, pkey, true, &ctx, &d), 0);
    assert_int_equal(cfg.role, IOF_TLS_SERVER);
    assert_ptr_equal(cfg.cert_file, pcert);
    assert_int_equal(iof_tls_ctx_role(ctx), IOF_TLS_SERVER);
    assert_int_equal(iof_tls_ctx_handshake_ms(ctx), 1234);
    iof_tls_ctx_free(ctx);
    assert_int_equal(iof_tls_config_load(NULL, pca, pcert, pkey, false, &ctx, &d), 0);
    assert_int_equal(iof_tls_ctx_role(ctx), IOF_TLS_CLIENT);
    assert_int_equal(iof_tls_ctx_handshake_ms(ctx), IOF_TLS_HANDSHAKE_MS);
    iof_tls_ctx_free(ctx);
    iof_tls_ctx_free(NULL);
}

static void test_sniff(void **state)
{
    static const uint8_t hello[] = {0x16, 0x03, 0x01};
    static const uint8_t alert[] = {0x15, 0x03};
    static const uint8_t plain[] = {'I', 'F', 1};
    static const uint8_t http[] = {'G', 'E'};
    (void)state;

    assert_int_equal(iof_tls_sniff(hello, 0), IOF_TLS_SNIFF_MORE);
    assert_int_equal(iof_tls_sniff(hello, 1), IOF_TLS_SNIFF_MORE);
    assert_int_equal(iof_tls_sniff(hello, 3), IOF_TLS_SNIFF_HANDSHAKE);
    assert_int_equal(iof_tls_sniff(alert, 2), IOF_TLS_SNIFF_ALERT);
    assert_int_equal(iof_tls_sniff(plain, 3), IOF_TLS_SNIFF_OTHER);
    assert_int_equal(iof_tls_sniff(http, 2), IOF_TLS_SNIFF_OTHER);
}

/* ---- admission: how many handshakes a listener runs at once --------------------------------- */

struct adm {
    uv_loop_t loop;
    struct iof_listener *l;
    struct iof_conn *silent, *silent2, *srv;
    int nsilent, connected;
    int accepted, rejected, cli_ok, cli_err;
    uint64_t t0, t_ok;
    unsigned peak;
    bool finished;
    uv_timer_t guard;
};

static void adm_finish(struct adm *a)
{
    if (a->finished)
        return;
    a->finished = true;
    a->peak = iof_listener_peak_queued(a->l);
    iof_conn_close(a->silent, 0);
    iof_conn_close(a->silent2, 0);
    iof_conn_close(a->srv, 0);
    iof_listener_close(a->l);
    uv_timer_stop(&a->guard);
}

static void adm_srv_accept(struct iof_listener *l, struct iof_conn *c, void *arg)
{
    struct adm *a = arg;
    (void)l;
    a->accepted++;
    a->srv = c; /* closed with the listener (closing it at once would fail the client) */
}

static void adm_srv_reject(struct iof_listener *l, struct iof_conn *c, int err, void *arg)
{
    struct adm *a = arg;
    (void)l;
    (void)c;
    (void)err;
    a->rejected++;
}

static void adm_nop_close(struct iof_conn *c, int err, void *arg)
{
    (void)c;
    (void)err;
    (void)arg;
}

static void adm_cli_connect(struct iof_conn *c, int err, void *arg)
{
    struct adm *a = arg;
    if (err) {
        a->cli_err = err;
    } else {
        a->cli_ok++;
        a->t_ok = iof_now_ns();
        iof_conn_close(c, 0);
    }
    adm_finish(a);
}

static void adm_silent_close(struct iof_conn *c, int err, void *arg)
{
    struct adm *a = arg;
    (void)err;
    if (a->silent == c)
        a->silent = NULL;
    if (a->silent2 == c)
        a->silent2 = NULL;
}

/* The silent peer is connected (so accepted first): now the TLS client. */
static void adm_silent_connect(struct iof_conn *c, int err, void *arg)
{
    static const struct iof_conn_cbs cbs = {.on_connect = adm_cli_connect,
                                            .on_close = adm_nop_close};
    struct adm *a = arg;
    struct iof_conn *cli;
    (void)c;
    assert_int_equal(err, 0);
    if (++a->connected < a->nsilent)
        return;
    a->t0 = iof_now_ns();
    assert_int_equal(iof_conn_connect_tls(&a->loop, "127.0.0.1", iof_listener_port(a->l), g_fx.cli,
                                          &cbs, a, &cli),
                     0);
}

static void adm_on_guard(uv_timer_t *t)
{
    adm_finish(t->data);
}

/* A silent peer (TCP, no ClientHello) and then a real TLS client, to a
 * listener whose handshake timeout is 300 ms. */
static void run_admission(struct adm *a, unsigned max_active, int nsilent)
{
    static const struct iof_conn_cbs scbs = {.on_connect = adm_silent_connect,
                                             .on_close = adm_silent_close};
    struct iof_diag d = {{0}};

    memset(a, 0, sizeof(*a));
    a->nsilent = nsilent;
    assert_int_equal(uv_loop_init(&a->loop), 0);
    assert_int_equal(iof_listener_start_tls(&a->loop, "127.0.0.1", 0, g_fx.srv_fast, adm_srv_accept,
                                            adm_srv_reject, a, &a->l, &d),
                     0);
    iof_listener_set_admission(a->l, max_active);
    uv_timer_init(&a->loop, &a->guard);
    a->guard.data = a;
    uv_timer_start(&a->guard, adm_on_guard, 10000, 0);
    assert_int_equal(
        iof_conn_connect(&a->loop, "127.0.0.1", iof_listener_port(a->l), &scbs, a, &a->silent), 0);
    if (nsilent > 1)
        assert_int_equal(
            iof_conn_connect(&a->loop, "127.0.0.1", iof_listener_port(a->l), &scbs, a, &a->silent2),
            0);
    uv_run(&a->loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&a->guard, NULL);
    uv_run(&a->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&a->loop), 0);
}

/* With one handshake at a time, a silent peer holds the slot until its
 * 300 ms timeout; the client accepted meanwhile waits, unread, then
 * completes (its handshake clock started at admission, not at accept).
 * Without admission it completes at once, beside the silent peer. */
static void test_admission_queues_handshakes(void **state)
{
    struct adm *a = calloc(1, sizeof(*a));
    (void)state;
    assert_non_null(a);

    run_admission(a, 1, 1);
    assert_int_equal(a->cli_err, 0);
    assert_int_equal(a->cli_ok, 1);
    assert_int_equal(a->accepted, 1);
    assert_int_equal(a->rejected, 1); /* the silent peer's timeout freed the slot */
    assert_true(a->peak >= 1);
    assert_true(a->t_ok - a->t0 >= 250 * IOF_NS_PER_MS);

    run_admission(a, 0, 1);
    assert_int_equal(a->cli_ok, 1);
    assert_int_equal(a->accepted, 1);
    assert_int_equal(a->rejected, 0);
    assert_int_equal(a->peak, 0);
    assert_true(a->t_ok - a->t0 < 250 * IOF_NS_PER_MS);

    /* Two silent peers, then the client: the newest waiting connection is
     * admitted first, so the client's turn comes when the first silent peer
     * times out, not after the second. */
    run_admission(a, 1, 2);
    assert_int_equal(a->cli_ok, 1);
    assert_int_equal(a->rejected, 1);
    assert_true(a->peak >= 2);
    assert_true(a->t_ok - a->t0 >= 250 * IOF_NS_PER_MS);
    assert_true(a->t_ok - a->t0 < 550 * IOF_NS_PER_MS);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sniff),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_config_load_fills_cfg),
        cmocka_unit_test(test_wrong_role),
        cmocka_unit_test(test_close_while_resolving),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_handshake_and_data),
        cmocka_unit_test(test_handshake_without_data),
        cmocka_unit_test(test_client_cert_unknown_ca),
        cmocka_unit_test(test_server_cert_unknown_ca),
        cmocka_unit_test(test_client_cert_expired),
        cmocka_unit_test(test_server_cert_expired),
        cmocka_unit_test(test_server_cert_not_yet_valid),
        cmocka_unit_test(test_no_client_cert),
        cmocka_unit_test(test_plain_client_on_tls_port),
        cmocka_unit_test(test_garbage_after_tls_header),
        cmocka_unit_test(test_handshake_size_bound),
        cmocka_unit_test(test_tls_client_to_plain_server),
        cmocka_unit_test(test_tls_client_to_plain_server_closing),
        cmocka_unit_test(test_handshake_timeout_server),
        cmocka_unit_test(test_handshake_timeout_client),
        cmocka_unit_test(test_listener_close_aborts_handshakes),
        cmocka_unit_test(test_admission_queues_handshakes),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
