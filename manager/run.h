/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run.h - `iofleet run` against dynamo agents: connects to or
 * accepts the agents, hands them the plan, prepares, synchronises clocks,
 * starts every test at one time on every node, merges interval stats live
 * and final results exactly, and prints them.
 *
 * With neither agents nor a listen address, it starts one local dynamo on
 * loopback (Iometer's "(Local)") allowed exactly the plan's absolute paths,
 * uses it and stops it.
 */
#ifndef IOF_MANAGER_RUN_H
#define IOF_MANAGER_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/spec.h"
#include "manager/sink.h"

struct mgr_run_opts {
    const char *const *agents; /* "HOST[:PORT]" to dial */
    size_t nagents;
    const char *listen;  /* "[ADDR][:PORT]" to accept agents on, or NULL */
    unsigned expect;     /* agents to wait for on `listen` */
    const char *workdir; /* the embedded agent's workdir */
    const char *dynamo;  /* the dynamo binary for the embedded agent */
    bool quiet;
    unsigned rows;          /* the table's rows besides ALL and NODE (MGR_TABLE_ROWS_*) */
    bool verbose;           /* log per-interval aggregation timing */
    bool allow_destructive; /* the embedded agent's --allow-destructive */
    bool insecure;
    const char *tls_ca, *tls_cert, *tls_key; /* all three, or none (plain TCP) */
    uint32_t heartbeat_ms;                   /* 0: default */
    uint64_t wait_ms;                        /* how long to wait for agents */
    unsigned min_agents;                     /* start with this many when the wait ends; 0: all */
    struct mgr_sink **sinks;                 /* opened result files (borrowed) */
    size_t nsinks;
};

/* Runs plan p (plan_text: its canonical JSON, sent to agents). Returns the
 * exit code of the product brief: 0, 1 (I/O errors, failed or lost agents),
 * 2 (plan names nodes that are not there), 3 (agents unreachable or
 * refused), 130 (interrupted; results so far are printed). */
int mgr_run_plan(const struct iof_plan *p, const char *plan_text, const struct mgr_run_opts *o);

#endif
