/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_auth.h - the safety of `iofleet serve --http` (docs/api.md,
 * Security): HTTPS with a certificate and key given on the command line
 * (checked here, served by libmicrohttpd over GnuTLS), and the rule that an
 * address other than loopback is served only with HTTPS and authentication.
 */
#ifndef IOF_MANAGER_API_AUTH_H
#define IOF_MANAGER_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

/* GnuTLS priorities of the API's HTTPS: TLS 1.3 and 1.2 only, GnuTLS's
 * NORMAL ciphers (AEAD and forward secrecy first). */
#define MGR_API_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define MGR_API_TLS_FILE_MAX (256u << 10) /* a PEM certificate chain or key */

/* What `iofleet serve` was given for its API; each may be NULL. */
struct mgr_api_auth_opts {
    const char *tls_cert; /* PEM certificate (chain), with tls_key */
    const char *tls_key;  /* PEM private key, unencrypted */
};

/* The certificate and key of the API's HTTPS, as PEM text. */
struct mgr_api_tls {
    char *cert, *key;
};

/* Reads and checks tls_cert and tls_key (a certificate, a private key, the
 * one matching the other; a key others may read is warned about), and that
 * libmicrohttpd was built with TLS. 0, or -EINVAL (-ENOMEM) with diag
 * naming the option, the file and the reason. */
int mgr_api_tls_load(const struct mgr_api_auth_opts *o, struct mgr_api_tls *t,
                     struct iof_diag *diag);
/* Frees t's text (the key wiped first); t may be empty. */
void mgr_api_tls_free(struct mgr_api_tls *t);

/* The rule for the API's address: loopback is always served; any other
 * address only with HTTPS (tls) and authentication. 0, or -EACCES with
 * diag ("--http SPEC: ADDR is not a loopback address: ...") naming what
 * to add. */
int mgr_api_bind_check(const char *spec, const char *host, bool loopback, bool tls,
                       struct iof_diag *diag);

#endif
