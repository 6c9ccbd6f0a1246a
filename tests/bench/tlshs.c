/* SPDX-License-Identifier: Apache-2.0 */
/* tests/bench/tlshs.c - iof_tlshs: the CPU of one TLS 1.3 handshake as
 * iofleet does it (common/tls.c), full against resumed, server and client
 * side apart, and the bytes each puts on the wire (tests/bench/tls-handshake).
 *
 * usage: iof_tlshs CA SERVER_CERT SERVER_KEY CLIENT_CERT CLIENT_KEY N
 *
 * One client and one server context talk through their memory BIOs in this
 * thread (no sockets, no loop): N full handshakes (the client's tickets
 * forgotten before each), then N resumed ones (each offering the ticket of
 * the one before). Each side's calls are timed with the thread CPU clock.
 * Prints one line per kind:
 *   full     server_us=S client_us=C bytes_s2c=B bytes_c2s=B resumed=0/N */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/tls.h"

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct tally {
    uint64_t srv_ns, cli_ns, s2c, c2s, resumed;
};

/* One handshake; returns 0 or -1 (with a message). */
static int one(struct iof_tls_ctx *cli, struct iof_tls_ctx *srv, struct tally *t)
{
    static uint8_t buf[64 << 10];
    struct iof_tls_sess *c = iof_tls_sess_new(cli, "10.0.0.1:7066");
    struct iof_tls_sess *s = iof_tls_sess_new(srv, "10.0.0.2:40000");
    struct iof_diag d = {{0}};
    int rc = 0, rs = 0;
    uint64_t t0;
    size_t n;

    if (!c || !s) {
        fprintf(stderr, "iof_tlshs: out of memory\n");
        return -1;
    }
    for (int round = 0; round < 20 && !(rc == 1 && rs == 1); round++) {
        t0 = cpu_ns();
        if (rc != 1)
            rc = iof_tls_sess_handshake(c, &d);
        while (rc >= 0 && (n = iof_tls_sess_out_take(c, buf, sizeof(buf))) > 0) {
            t->c2s += n;
            t->cli_ns += cpu_ns() - t0;
            t0 = cpu_ns();
            if (iof_tls_sess_feed(s, buf, n, &d) < 0)
                rs = -1;
            t->srv_ns += cpu_ns() - t0;
            t0 = cpu_ns();
        }
        t->cli_ns += cpu_ns() - t0;
        t0 = cpu_ns();
        if (rs >= 0 && rs != 1)
            rs = iof_tls_sess_handshake(s, &d);
        while (rs >= 0 && (n = iof_tls_sess_out_take(s, buf, sizeof(buf))) > 0) {
            t->s2c += n;
            t->srv_ns += cpu_ns() - t0;
            t0 = cpu_ns();
            if (iof_tls_sess_feed(c, buf, n, &d) < 0)
                rc = -1;
            t->cli_ns += cpu_ns() - t0;
            t0 = cpu_ns();
        }
        t->srv_ns += cpu_ns() - t0;
        if (rc < 0 || rs < 0)
            break;
    }
    if (rc != 1 || rs != 1) {
        fprintf(stderr, "iof_tlshs: handshake failed: %s\n", d.msg[0] ? d.msg : "no progress");
        iof_tls_sess_free(c);
        iof_tls_sess_free(s);
        return -1;
    }
    t->resumed += iof_tls_sess_resumed(s);
    iof_tls_sess_free(c);
    iof_tls_sess_free(s);
    return 0;
}

static void print(const char *kind, const struct tally *t, unsigned n)
{
    printf("%-8s server_us=%.1f client_us=%.1f bytes_s2c=%.0f bytes_c2s=%.0f resumed=%" PRIu64
           "/%u\n",
           kind, (double)t->srv_ns / n / 1000, (double)t->cli_ns / n / 1000, (double)t->s2c / n,
           (double)t->c2s / n, t->resumed, n);
}

int main(int argc, char **argv)
{
    struct iof_tls_ctx *srv = NULL, *cli = NULL;
    struct iof_diag d = {{0}};
    struct tally full = {0}, res = {0};
    unsigned n;

    if (argc != 7 || (n = (unsigned)strtoul(argv[6], NULL, 10)) == 0) {
        fprintf(stderr, "usage: iof_tlshs CA SERVER_CERT SERVER_KEY CLIENT_CERT CLIENT_KEY N\n");
        return 2;
    }
    if (iof_tls_config_load(NULL, argv[1], argv[2], argv[3], true, &srv, &d) ||
        iof_tls_config_load(NULL, argv[1], argv[4], argv[5], false, &cli, &d)) {
        fprintf(stderr, "iof_tlshs: %s\n", d.msg);
        iof_tls_ctx_free(srv);
        return 2;
    }
    /* One untimed handshake first (lazy initialisation inside OpenSSL). */
    if (one(cli, srv, &(struct tally){0}))
        goto fail;
    for (unsigned i = 0; i < n; i++) {
        iof_tls_ctx_forget_tickets(cli);
        if (one(cli, srv, &full))
            goto fail;
    }
    for (unsigned i = 0; i < n; i++)
        if (one(cli, srv, &res))
            goto fail;
    print("full", &full, n);
    print("resumed", &res, n);
    iof_tls_ctx_free(cli);
    iof_tls_ctx_free(srv);
    return 0;
fail:
    iof_tls_ctx_free(cli);
    iof_tls_ctx_free(srv);
    return 1;
}
