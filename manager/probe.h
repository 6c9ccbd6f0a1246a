/* SPDX-License-Identifier: Apache-2.0 */
/* manager/probe.h - asks one agent who it is: connects, reads the hello an
 * agent sends first (name, inventory and budget), and says goodbye without
 * starting a session. Used by `iofleet validate --agent`. */
#ifndef IOF_MANAGER_PROBE_H
#define IOF_MANAGER_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include <stdio.h>

#include "common/spec.h"
#include "proto/msg.h"

struct mgr_probe_opts {
    const char *endpoint;                    /* "HOST[:PORT]" or "unix:PATH" */
    const char *tls_ca, *tls_cert, *tls_key; /* all three, or none */
    bool insecure;                           /* plain TCP (no authentication) */
    uint64_t wait_ms;                        /* for the connection and the hello */
};

/* 0 and the agent's hello in *out (a deep copy: proto_hello_clear() it), or
 * an error with the reason in diag ("127.0.0.1:7066: connection refused"). */
int mgr_probe_hello(const struct mgr_probe_opts *o, struct proto_hello *out, struct iof_diag *diag);

/* The manager name a probe's session gives in its hello. */
#define MGR_PROBE_MANAGER_NAME "iofleet"
/* How long `iofleet clean` waits for an agent's cleaned. */
#define MGR_PROBE_CLEAN_WAIT_MS 120000

/* What an agent's clean removed (proto_cleaned, owned). */
struct mgr_clean_result {
    char *workdir;
    uint64_t files, bytes, failed;
    char **removed;
    size_t nremoved;
};

/* `iofleet clean`: a session with the agent (hello, welcome) that sends
 * clean and waits for cleaned (docs/protocol.md), then says bye. 0 with
 * the agent's hello in *out (proto_hello_free() it) and what was removed
 * in *r (mgr_clean_result_free() it, whatever the result); IOF_EVERSION for
 * an agent of a protocol before 1.2, IOF_EBUSY when it serves another manager or
 * runs a test, or another error; diag says why. */
int mgr_probe_clean(const struct mgr_probe_opts *o, struct proto_hello *out,
                    struct mgr_clean_result *r, struct iof_diag *diag);
void mgr_clean_result_free(struct mgr_clean_result *r);

/* `iofleet validate --agent`: prints the agent's budget beside what the
 * plan's largest test needs on that node (the groups selecting its name).
 * Returns 0 when it fits, 1 when the agent would refuse the plan, 3 when
 * the agent cannot be reached (the message on stderr). */
int mgr_probe_budget(const struct iof_plan *p, const struct mgr_probe_opts *o, FILE *out);

#endif
