/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/agent.h - the dynamo agent daemon: one manager session at a time,
 * over a listening socket (TCP with TLS or --insecure, or a unix socket: the
 * manager dials in), a dial-out connection with capped exponential backoff,
 * or an inherited socketpair (the embedded agent of `iofleet run`). Runs the assigned tests with
 * the engine of dynamo/run.h and streams interval stats and final results.
 *
 * Dead-man rule: when the manager is silent for PROTO_HEARTBEAT_MISSES
 * heartbeats or the connection drops, the agent stops all I/O at once,
 * discards the session and goes back to waiting (or reconnecting).
 */
#ifndef IOF_DYNAMO_AGENT_H
#define IOF_DYNAMO_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dyn_agent_opts {
    const char *listen;       /* "[ADDR][:PORT]", or NULL */
    const char *manager;      /* "HOST[:PORT]" to dial, or NULL */
    const char *name;         /* node name; NULL: the hostname */
    const char *workdir;      /* test files; created if missing */
    const char *const *allow; /* absolute paths the agent may open */
    size_t nallow;
    bool insecure;
    bool allow_destructive;
    const char *tls_ca, *tls_cert, *tls_key; /* all three, or none */
    const char *manager_name; /* the manager's certificate name; NULL: iofleet-manager */
    uint32_t heartbeat_ms;    /* 0: PROTO_HEARTBEAT_MS_DEFAULT */
    bool once;                /* exit after the first session ends (embedded agent) */
    /* The agent's budget (dynamo/budget.h); 0: the documented default. */
    uint64_t max_workers;
    uint64_t max_buffer_mem;
    uint64_t max_aio_events;
    bool use_manager_fd; /* the manager is connected on manager_fd (a unix socketpair) */
    int manager_fd;
};

/* Runs the daemon until SIGINT/SIGTERM or dyn_agent_request_stop() (or the
 * first session's end with `once`). Returns the process exit code: 0, or 2
 * for bad options, 1 when the listening socket cannot be opened. One at a
 * time per process. */
int dyn_agent_main(const struct dyn_agent_opts *o);

/* Asks the running dyn_agent_main() to stop as SIGTERM does (its test
 * stopped, every connection closed); callable from any thread, e.g. a
 * service manager's stop. Returns 0, or -ESRCH when no agent runs (not
 * started yet, or already stopping its loop). */
int dyn_agent_request_stop(void);

#endif
