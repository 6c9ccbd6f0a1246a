/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run.h - `iofleet run` against dynamo agents: connects to or
 * accepts the agents, hands them the plan, prepares, synchronises clocks,
 * starts every test at one time on every node, merges interval stats live
 * and final results exactly, and prints them.
 *
 * With neither agents nor a listen address, it starts one local dynamo on
 * loopback (Iometer's "(Local)") allowed exactly the plan's absolute paths,
 * uses it and stops it.
 *
 * A run is an object on a libuv loop: mgr_run_start() starts it (with its
 * own agents, or with the connected agents of a fleet it borrows, as
 * `iofleet serve` does), mgr_run_interrupt() stops it as Ctrl-C does, and its
 * done callback says when it is over. Nothing in it is global: one process
 * may run one after the other, on one loop.
 */
#ifndef IOF_MANAGER_RUN_H
#define IOF_MANAGER_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "common/spec.h"
#include "manager/sink.h"

/* A manager's loop sleeps this long before it polls again after an
 * iteration that read anything (iof_net_coalesce_start): reports that come
 * in meanwhile are read in one wake-up, not a few at a time. Only while a
 * test runs (mgr_run_set_phase): never while clocks are probed. */
#define MGR_COALESCE_MS 1

struct mgr_fleet;
struct mgr_run;

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

/* Where a run runs and whom it tells that it is over. */
struct mgr_run_env {
    uv_loop_t *loop;
    /* NULL: the run has agents of its own (o's agents, listen address or
     * the embedded agent). Else the run borrows this fleet (its agents
     * connected and welcomed, manager/agent_conn.h) and runs on the agents
     * whose session is up when it starts, taking over the fleet's callbacks
     * until it is over; o's agents, listen, TLS and wait are not used. Each
     * agent of the run is told bye at its end, as by `iofleet run`. */
    struct mgr_fleet *fleet;
    bool signals; /* SIGINT and SIGTERM interrupt it (mgr_run_interrupt) */
    /* Called once, on the loop, when the run is over: its result files have
     * had run_end, its handles are closed, a borrowed fleet is handed back.
     * rc is the exit code (mgr_run_plan). The run may then be freed. */
    void (*done)(struct mgr_run *r, int rc, void *arg);
    void *arg;
};

/* Starts plan p (plan_text: its canonical JSON, sent to agents; p, the
 * text, o and its sinks are borrowed until done). Returns 0 and the run in
 * *out, or an exit code (1 out of memory, 2 TLS files, 3 plain TCP without
 * --insecure) having said why, with nothing started. */
int mgr_run_start(const struct iof_plan *p, const char *plan_text, const struct mgr_run_opts *o,
                  const struct mgr_run_env *env, struct mgr_run **out);

/* Interrupts r as Ctrl-C does: a test under way is stopped and every
 * figure measured so far kept (exit code 130). Again, or with force: ends
 * without waiting for the agents' results. A run already over ignores it. */
void mgr_run_interrupt(struct mgr_run *r, bool force);

/* Frees r (NULL is fine): after its done callback, and for a run with
 * agents of its own once its loop has run out of work (their connections
 * closed). */
void mgr_run_free(struct mgr_run *r);

/* Runs plan p on the default loop until it is over, with SIGINT and
 * SIGTERM interrupting it. Returns the exit code of the product brief: 0,
 * 1 (I/O errors, failed or lost agents), 2 (plan names nodes that are not
 * there), 3 (agents unreachable or refused), 130 (interrupted; results so
 * far are printed). */
int mgr_run_plan(const struct iof_plan *p, const char *plan_text, const struct mgr_run_opts *o);

/* Prints a plan's warning (proto_plan_map_check's) as the run does:
 * "iofleet: warning: MSG". arg is unused. */
void mgr_run_warn_line(void *arg, const char *msg);

#endif
