/* SPDX-License-Identifier: Apache-2.0 */
/* manager/serve.h - `iofleet serve`: a long-running manager that agents
 * dial into (--listen, as `iofleet run --listen`) and that answers the
 * versioned JSON API of docs/api.md (manager/api.h) on a loopback address.
 * It keeps every agent connected, welcomed and heartbeated between runs,
 * and remembers the ones that left for an hour.
 */
#ifndef IOF_MANAGER_SERVE_H
#define IOF_MANAGER_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "manager/api_auth.h"

#define MGR_SERVE_HTTP_PORT 7067  /* --http's default port */
#define MGR_SERVE_MAX_AGENTS 1024 /* agent connections at once */
#define MGR_SERVE_SEEN_S 3600     /* how long an agent that left is listed */
#define MGR_SERVE_MAX_SEEN 2048   /* agents listed at most, connected or not */

struct mgr_serve_opts {
    const char *http;                   /* "[ADDR:]PORT" of the API, never NULL */
    struct mgr_api_auth_opts http_auth; /* its HTTPS (manager/api_auth.h) */
    const char *listen;                 /* "[ADDR][:PORT]" to accept agents on, never NULL */
    const char *db;                     /* the run history the API shows, never NULL */
    const char *plans;   /* the user's plans (GET /api/v1/plans), never NULL; made 0700 */
    const char *configs; /* the shipped plans, read-only; NULL: none */
    bool insecure;
    const char *tls_ca, *tls_cert, *tls_key; /* all three, or none */
    uint32_t heartbeat_ms;                   /* 0: default */
    bool verbose;
};

/* Serves until SIGINT or SIGTERM, then says bye to every agent and returns
 * 0; or returns at once 2 (an option's value is wrong: a non-loopback
 * --http, a TLS file, a database that cannot be opened) or 3 (a port cannot be bound, plain TCP
 * without
 * --insecure), having said why on stderr. */
int mgr_serve(const struct mgr_serve_opts *o);

#endif
