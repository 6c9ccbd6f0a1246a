/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api.h - `iofleet serve`'s JSON API over HTTP (docs/api.md):
 * libmicrohttpd on its own threads, connections admitted and timed by
 * manager/sinks/http_guard.h, over HTTP on a loopback address, or over
 * HTTPS, with bearer tokens when given (manager/api_auth.h: another address
 * needs both).
 * Over plain HTTP it answers only requests whose Host names that address
 * (a page elsewhere cannot reach it by DNS rebinding; over HTTPS the
 * certificate's name does that). The serve
 * loop publishes what the API shows as ready JSON text; HTTP threads copy
 * it under a lock and never touch the loop's state.
 */
#ifndef IOF_MANAGER_API_H
#define IOF_MANAGER_API_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/spec.h"
#include "manager/api_auth.h"

#define MGR_API_VERSION "v1"
/* The console page's policy: scripts, style and requests from this server
 * only, no inline script or style, no frame, no form posted elsewhere. */
#define MGR_API_CONSOLE_CSP                                                                        \
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "                \
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

struct mgr_api;

/* Parses spec ("[ADDR:]PORT", manager/sinks/http.h), loads auth's HTTPS
 * files (manager/api_auth.h; -EINVAL when one is wrong),
 * refuses an address that is not loopback unless mgr_api_bind_check()
 * allows it (-EACCES), binds and starts serving; the run history's
 * endpoints read the database at db (copied). Returns 0 and a new API
 * (mgr_api_close), or an error with diag ("--http ...: REASON"). */
int mgr_api_open(const char *spec, const char *db, const struct mgr_api_auth_opts *auth,
                 struct mgr_api **out, struct iof_diag *diag);

/* Reads the tokens file again now (SIGHUP; manager/api_auth.h), if there
 * is one. Any thread. */
void mgr_api_reload_tokens(struct mgr_api *api);

/* "http://127.0.0.1:PORT/" ("https://" with TLS), the port bound. Borrowed. */
const char *mgr_api_url(const struct mgr_api *api);

/* Publishes the body of GET /api/v1/agents: json (len bytes, new, taken)
 * replaces the previous one. Any thread. */
void mgr_api_set_agents(struct mgr_api *api, char *json, size_t len);

/* What the run endpoints ask of the serve loop (manager/serve_run.h). Each
 * is called from an HTTP thread and returns the HTTP status; an error
 * status comes with msg (cap bytes). */
struct mgr_api_run_ops {
    /* POST /api/v1/runs: starts plan p (valid, new, taken) whose canonical
     * JSON is text (new, taken): 202 and the run's id, or 409, 500, 503. */
    unsigned (*start)(void *arg, struct iof_plan *p, char *text, int64_t *id, char *msg,
                      size_t cap);
    /* POST /api/v1/runs/current/stop: 202 and the run's id, or 409, 503. */
    unsigned (*stop)(void *arg, int64_t *id, char *msg, size_t cap);
    /* GET /api/v1/runs/current: 200 with the JSON appended to b, or 404. */
    unsigned (*current)(void *arg, struct iof_buf *b, char *msg, size_t cap);
    void *arg;
};

/* What the console's endpoints ask (manager/serve_live.h), from HTTP
 * threads. */
struct MHD_Response;
struct mgr_api_console_ops {
    /* GET /api/v1/runs/last: 200 with the JSON appended to b, or 404. */
    unsigned (*last)(void *arg, struct iof_buf *b, char *msg, size_t cap);
    /* GET /api/v1/events: a new event stream sending the events after
     * `after` (NULL: from now), or NULL without memory; gate (may be NULL;
     * copied, its free called once the stream ends, also on failure) ends
     * the stream once it no longer allows it. */
    struct MHD_Response *(*events)(void *arg, const char *after, const struct mgr_api_gate *gate);
    /* GET of any path outside /api/ (the console page and its files): 200
     * with the body appended to b and its Content-Type in *type, or 404. */
    unsigned (*get)(void *arg, const char *url, struct iof_buf *b, const char **type);
    void *arg;
};

/* Makes the console's endpoints call ops (borrowed until mgr_api_close);
 * until then they answer 503. Any thread. */
void mgr_api_set_console(struct mgr_api *api, const struct mgr_api_console_ops *ops);

/* Sets the plan library's folders (manager/api_plans.h; copied): user, the
 * user's plans (serve --plans, existing), shipped (NULL or "": none) the
 * shipped configs. Until then /api/v1/plans answers 503. Once only: 0,
 * -EEXIST or -ENOMEM. Any thread. */
int mgr_api_set_plans(struct mgr_api *api, const char *user, const char *shipped);

/* Makes the run endpoints call ops (borrowed until mgr_api_close); until
 * then they answer 503. Any thread. */
void mgr_api_set_runs(struct mgr_api *api, const struct mgr_api_run_ops *ops);

/* Stops serving (requests under way finish) and frees api; NULL is fine. */
void mgr_api_close(struct mgr_api *api);

#endif
