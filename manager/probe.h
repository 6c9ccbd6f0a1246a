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

/* `iofleet validate --agent`: prints the agent's budget beside what the
 * plan's largest test needs on that node (the groups selecting its name).
 * Returns 0 when it fits, 1 when the agent would refuse the plan, 3 when
 * the agent cannot be reached (the message on stderr). */
int mgr_probe_budget(const struct iof_plan *p, const struct mgr_probe_opts *o, FILE *out);

#endif
