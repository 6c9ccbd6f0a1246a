/* SPDX-License-Identifier: Apache-2.0 */
/* manager/pki.h - `iofleet pki init`: a private CA, the manager's certificate
 * and one certificate per agent, for mutual TLS between iofleet and dynamo.
 *
 * Certificates made here (all ECDSA P-256 keys, SHA-256 signatures, random
 * 128-bit serial numbers, notBefore backdated by MGR_PKI_BACKDATE_S for clock
 * skew between nodes):
 *   CA       subject O=iofleet, CN=iofleet CA <date> <8 hex>; basicConstraints
 *            critical CA:TRUE, pathlen:0; keyUsage critical keyCertSign,
 *            cRLSign; subjectKeyIdentifier; MGR_PKI_CA_DAYS.
 *   manager  subject O=iofleet, OU=manager, CN=<name>; SAN DNS:<name>
 *            (default MGR_PKI_MANAGER_NAME); basicConstraints critical
 *            CA:FALSE; keyUsage critical digitalSignature; extendedKeyUsage
 *            serverAuth, clientAuth (the manager dials agents and also listens
 *            for agents that dial out); subject and authority key identifiers.
 *   agent    as the manager with OU=agent and CN, SAN DNS = the node name.
 * The role (OU) and the name (CN = the only DNS SAN) are what the TLS layer
 * checks; pki init never issues an agent certificate that carries the
 * manager's name, so within one CA a name identifies exactly one role.
 *
 * Files: DIR/ca.pem, DIR/ca-key.pem, DIR/manager.pem, DIR/manager-key.pem,
 * DIR/NAME.pem, DIR/NAME-key.pem. Keys are unencrypted PKCS#8 PEM. Every
 * file is created mode 0600 with O_CREAT|O_EXCL (never following a symlink);
 * with `force` an existing file is replaced atomically (temporary file +
 * rename). DIR and missing parents are created mode 0700.
 */
#ifndef IOF_MANAGER_PKI_H
#define IOF_MANAGER_PKI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/err.h"
#include "common/tls.h"
#include "proto/name.h"

#define MGR_PKI_MANAGER_NAME IOF_TLS_MANAGER_NAME /* CN and DNS SAN of the manager */
#define MGR_PKI_ORG "iofleet"                     /* O of every subject */
#define MGR_PKI_OU_MANAGER "manager"              /* OU of the manager's subject */
#define MGR_PKI_OU_AGENT "agent"                  /* OU of an agent's subject */
#define MGR_PKI_CA_DAYS 3650                      /* CA lifetime: 10 years */
#define MGR_PKI_DEFAULT_DAYS 825                  /* manager and agents: ~2 years */
#define MGR_PKI_MAX_DAYS 3650                     /* --days upper bound */
#define MGR_PKI_BACKDATE_S 3600                   /* notBefore = now - 1 hour */

struct mgr_pki_opts {
    const char *dir;           /* created 0700 when missing */
    const char *const *agents; /* node names; borrowed */
    size_t nagents;            /* may be 0 (CA and manager only) */
    const char *manager_name;  /* NULL: MGR_PKI_MANAGER_NAME */
    unsigned days;             /* leaf lifetime; 0: MGR_PKI_DEFAULT_DAYS */
    bool force;                /* replace existing leaf files */
};

/* Checks a name for a certificate: the one rule of a node's name,
 * proto_node_name_check() (at most PROTO_NODE_NAME_MAX bytes, reserved
 * names, no '.' first, no "-key" last). `what` ("agent name") starts the
 * diag. Returns 0 or IOF_EUSAGE. */
int mgr_pki_name_check(const char *what, const char *name, struct iof_diag *diag);

/* Issues the files described above into o->dir.
 *
 * When DIR/ca.pem does not exist, a new CA is made and every file is written.
 * When it exists, the CA (ca.pem + ca-key.pem, which must match and be
 * valid) is reused: the agents' files are added, signed by it, and the
 * manager's files are written only when DIR/manager.pem is missing. `force`
 * never replaces an existing CA: a new CA needs a new, empty directory.
 *
 * Every name is checked and every output path probed before any key is made,
 * so a refused run writes nothing. Progress lines ("wrote PATH (...)") and
 * warnings go to `out` (NULL: silent).
 *
 * Returns 0; IOF_EUSAGE for a bad option or name, duplicate names, an agent
 * named like the manager, or nothing to do; -EEXIST when an output exists and
 * !force; -errno for I/O; IOF_EINTERNAL when OpenSSL fails or the existing
 * CA is unusable. diag names the file or option and the reason. */
int mgr_pki_init(const struct mgr_pki_opts *o, FILE *out, struct iof_diag *diag);

#endif
