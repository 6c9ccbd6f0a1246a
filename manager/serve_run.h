/* SPDX-License-Identifier: Apache-2.0 */
/* manager/serve_run.h - runs started through `iofleet serve`'s API
 * (docs/api.md): POST /api/v1/runs, GET /api/v1/runs/current and POST
 * /api/v1/runs/current/stop. A run is manager/run.h's, on serve's loop with
 * the agents connected to serve (a borrowed fleet), recorded into the run
 * history as `iofleet run --db` records it; its state is the live view's
 * (manager/sinks/http_view.h). One run at a time. The API's threads ask the
 * loop through an async handle and wait for its answer.
 */
#ifndef IOF_MANAGER_SERVE_RUN_H
#define IOF_MANAGER_SERVE_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "manager/api.h"

struct mgr_fleet;
struct mgr_serve_live;
struct mgr_serve_runs;

struct mgr_serve_runs_cfg {
    uv_loop_t *loop;
    struct mgr_fleet *fleet;     /* serve's agents, lent to each run (borrowed) */
    const char *db;              /* the run history (borrowed) */
    struct mgr_serve_live *live; /* the console's state each run feeds (borrowed) */
    bool verbose;
    /* On the loop after each run, its fleet handed back and its record
     * complete: id is its run in the history. */
    void (*after)(void *arg, int64_t id);
    void *arg;
};

/* 0 and a new set in *out, or -errno. */
int mgr_serve_runs_new(const struct mgr_serve_runs_cfg *cfg, struct mgr_serve_runs **out);
/* What the API calls (borrowed from sr, valid until it is freed). */
const struct mgr_api_run_ops *mgr_serve_runs_ops(struct mgr_serve_runs *sr);
/* A run is under way. */
bool mgr_serve_runs_busy(const struct mgr_serve_runs *sr);
/* Interrupts the run under way as Ctrl-C does (force: without waiting for
 * its results); its end still calls after. */
void mgr_serve_runs_interrupt(struct mgr_serve_runs *sr, bool force);
/* No request is taken any more (503; a request waiting is answered so):
 * called as serve stops, before the API is closed. */
void mgr_serve_runs_close(struct mgr_serve_runs *sr);
/* After the API is closed and the loop has ended; NULL is fine. */
void mgr_serve_runs_free(struct mgr_serve_runs *sr);

#endif
