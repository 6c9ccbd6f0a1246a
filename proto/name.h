/* SPDX-License-Identifier: Apache-2.0 */
/* proto/name.h - the one rule for a node's name, wherever a name is given:
 * `dynamo --name` (or the host name or certificate name it defaults to), a
 * certificate's name (`iofleet pki init --agent`, `--manager-name`) and a
 * plan's `workers[].nodes` entries. docs/security.md, "Names". */
#ifndef IOF_PROTO_NAME_H
#define IOF_PROTO_NAME_H

#include "common/err.h"

/* The longest node name: the upper bound of a certificate's common name
 * (RFC 5280's ub-common-name). The wire carries up to PROTO_NAME_MAX. */
#define PROTO_NODE_NAME_MAX 64

/* 0 when name is a node name: 1..PROTO_NODE_NAME_MAX bytes of ASCII
 * letters, digits, '.', '_' and '-' (proto_name_check()), not starting with
 * '.' (X509_check_host() would read it as "any subdomain"), not ending in
 * "-key" (iofleet pki's NAME.pem would be another name's key file), and not
 * one of the reserved names, whole and ignoring case as DNS names compare:
 * "ALL" (the cluster's rows in the result files), "ca" and "manager"
 * (iofleet pki's own files). Else -EINVAL with the one message
 * "WHAT 'NAME': WHY" in diag (NAME printable, cut at 32 bytes). */
int proto_node_name_check(const char *what, const char *name, struct iof_diag *diag);

#endif
