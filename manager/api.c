/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api.c - `iofleet serve`'s JSON API (manager/api.h, docs/api.md):
 * a libmicrohttpd server (HTTP on loopback, or HTTPS: manager/api_auth.h),
 * one thread per connection admitted and timed by
 * manager/sinks/http_guard.c, routing GET /api/v1/... to
 * bodies the serve loop published, or to the run history
 * (manager/api_runs.c); every answer, errors included, is JSON.
 */
#include "manager/api.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/crypto.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/spec.h"
#include "manager/api_auth.h"
#include "manager/api_plans.h"
#include "manager/api_runs.h"
#include "manager/console_page.h"
#include "manager/history/query.h"
#include "proto/plan.h"
#include "manager/sinks/http.h"
#include "manager/sinks/http_guard.h"
#include "manager/sinks/http_mhd.h"
#include "proto/version.h"

#define API_IDLE_S 30              /* a connection without progress is closed after this */
#define API_MAX_BODY (16u << 20)   /* one answer; 2048 agents' inventories fit */
#define API_MAX_REQUEST (1u << 20) /* a POST body: a plan */
#define API_ENDPOINTS                                                                              \
    "/api/v1/version, /api/v1/agents, /api/v1/events, /api/v1/runs, /api/v1/runs/ID, "             \
    "/api/v1/runs/current, /api/v1/runs/last, /api/v1/runs/compare, /api/v1/runs/ID/report.html, " \
    "/api/v1/runs/ID/results.csv, /api/v1/runs/ID/results.json, /api/v1/runs/ID/iometer.csv, "     \
    "/api/v1/runs/ID/timeseries.csv, "                                                             \
    "POST /api/v1/plans/check, POST /api/v1/plans/import, POST /api/v1/plans/export, "             \
    "/api/v1/plans, /api/v1/plans/NAME (GET, PUT, DELETE), "                                       \
    "POST /api/v1/runs, POST /api/v1/runs/current/stop, "                                          \
    "POST /api/v1/runs/ID/tag, DELETE /api/v1/runs/ID, POST /api/v1/runs/prune, "                  \
    "POST /api/v1/session, POST /api/v1/session/end"

enum api_post_what {
    API_POST_CHECK,
    API_POST_RUN,
    API_POST_STOP,
    API_POST_TAG,
    API_POST_PRUNE,
    API_POST_SIGNIN,
    API_POST_SIGNOUT,
    API_POST_IMPORT,
    API_POST_EXPORT,
    API_PUT_PLAN,
};

/* A POST under way: its body, read up to API_MAX_REQUEST. */
struct api_post {
    enum api_post_what what;
    int64_t id;    /* API_POST_TAG: the run */
    char name[72]; /* API_PUT_PLAN: the plan's name, checked */
    struct iof_buf body;
    bool too_big;
};

struct mgr_api {
    struct MHD_Daemon *daemon;
    struct mgr_http_guard *guard;
    int fd; /* the listening socket until the daemon owns it */
    char host[INET6_ADDRSTRLEN];
    unsigned port;
    char url[96];
    char db[IOF_PATH_MAX]; /* the run history */
    pthread_mutex_t mu;    /* guards agents and runs */
    char *agents;          /* GET /api/v1/agents, published by the serve loop */
    size_t agents_len;
    const struct mgr_api_run_ops *runs;        /* the run endpoints, NULL until set */
    const struct mgr_api_console_ops *console; /* events and the last run, NULL until set */
    struct mgr_api_tls tls;                    /* HTTPS when tls.cert is set */
    struct mgr_api_auth *auth;                 /* tokens required, or NULL */
    struct mgr_api_plans_dirs *plans;          /* the plan library, NULL until set; then fixed */
};

static void api_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                          enum MHD_RequestTerminationCode why)
{
    struct mgr_api *api = cls;
    struct mgr_http_conn *c = mgr_http_mhd_conn(conn);
    struct api_post *post = *req_cls;

    (void)why;
    if (post) {
        iof_buf_free(&post->body);
        free(post);
        *req_cls = NULL;
    }
    if (c)
        mgr_http_guard_done(api->guard, c);
}

/* --- answers ----------------------------------------------------------------------------- */

/* Sends body (taken) with the headers of every answer and hname: hval. */
static enum MHD_Result api_send_hdr(struct MHD_Connection *conn, unsigned status, char *body,
                                    size_t len, const char *hname, const char *hval)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret;

    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy", "default-src 'none'");
    if (hname && hval)
        MHD_add_response_header(r, hname, hval);
    if (mgr_http_mhd_is_tls(conn)) /* a browser then never tries plain HTTP here */
        MHD_add_response_header(r, "Strict-Transport-Security", MGR_HTTP_HSTS);
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result api_send(struct MHD_Connection *conn, unsigned status, char *body,
                                size_t len, const char *allow)
{
    return api_send_hdr(conn, status, body, len, MHD_HTTP_HEADER_ALLOW, allow);
}

/* {"error": {"status": N, "message": "..."}}, with hname: hval. */
static enum MHD_Result api_verror(struct MHD_Connection *conn, unsigned status, const char *hname,
                                  const char *hval, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
static enum MHD_Result api_verror(struct MHD_Connection *conn, unsigned status, const char *hname,
                                  const char *hval, const char *fmt, va_list ap)
{
    char msg[512];
    struct iof_buf b;
    size_t len;
    char *body;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    iof_buf_init(&b, API_MAX_BODY);
    iof_json_open(&b, '{');
    iof_json_key(&b, "error");
    iof_json_open(&b, '{');
    iof_json_key(&b, "status");
    iof_json_u64(&b, status);
    iof_json_key(&b, "message");
    iof_json_escape(&b, msg, IOF_JSON_TEXT);
    iof_json_close(&b, '}');
    iof_json_close(&b, '}');
    iof_buf_addstr(&b, "\n");
    if (!(body = iof_buf_take(&b, &len)))
        return MHD_NO;
    return api_send_hdr(conn, status, body, len, hname, hval);
}

/* {"error": {"status": N, "message": "..."}} */
static enum MHD_Result api_error(struct MHD_Connection *conn, unsigned status, const char *allow,
                                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result api_error(struct MHD_Connection *conn, unsigned status, const char *allow,
                                 const char *fmt, ...)
{
    enum MHD_Result r;
    va_list ap;

    va_start(ap, fmt);
    r = api_verror(conn, status, MHD_HTTP_HEADER_ALLOW, allow, fmt, ap);
    va_end(ap);
    return r;
}

/* The same with the header hname: hval. */
static enum MHD_Result api_error_hdr(struct MHD_Connection *conn, unsigned status,
                                     const char *hname, const char *hval, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static enum MHD_Result api_error_hdr(struct MHD_Connection *conn, unsigned status,
                                     const char *hname, const char *hval, const char *fmt, ...)
{
    enum MHD_Result r;
    va_list ap;

    va_start(ap, fmt);
    r = api_verror(conn, status, hname, hval, fmt, ap);
    va_end(ap);
    return r;
}

/* Sends b's text (taken from it) with status; 500 when it ran out of memory. */
static enum MHD_Result api_send_buf(struct MHD_Connection *conn, unsigned status, struct iof_buf *b)
{
    size_t len;
    char *body = iof_buf_take(b, &len);

    if (!body)
        return api_error(conn, 500, NULL, "out of memory");
    return api_send(conn, status, body, len, NULL);
}

static enum MHD_Result api_version(struct MHD_Connection *conn)
{
    struct iof_buf b;

    iof_buf_init(&b, API_MAX_BODY);
    iof_json_open(&b, '{');
    iof_json_key(&b, "api");
    iof_json_str(&b, MGR_API_VERSION);
    iof_json_key(&b, "iofleet");
    iof_json_str(&b, IOF_VERSION);
    iof_json_key(&b, "protocol");
    iof_json_str(&b, proto_version_string());
    iof_json_close(&b, '}');
    iof_buf_addstr(&b, "\n");
    return api_send_buf(conn, 200, &b);
}

static enum MHD_Result api_agents(struct MHD_Connection *conn, struct mgr_api *api)
{
    char *body = NULL;
    size_t len = 0;

    pthread_mutex_lock(&api->mu);
    if (api->agents && (body = malloc(api->agents_len + 1))) {
        memcpy(body, api->agents, api->agents_len + 1);
        len = api->agents_len;
    }
    pthread_mutex_unlock(&api->mu);
    if (!body)
        return api_error(conn, 500, NULL, "out of memory");
    return api_send(conn, 200, body, len, NULL);
}

/* The query string of GET /api/v1/runs, one parameter at a time. */
struct api_args {
    struct mgr_api_runs_query q;
    struct iof_diag d;
    int64_t now_ns;
    int rc;
};

static enum MHD_Result api_runs_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    struct api_args *a = cls;

    (void)kind;
    a->rc = mgr_api_runs_param(&a->q, key, value, a->now_ns, &a->d);
    return a->rc ? MHD_NO : MHD_YES;
}

/* GET /api/v1/runs, or /api/v1/runs/ID with id the text after the slash. */
static enum MHD_Result api_runs(struct MHD_Connection *conn, struct mgr_api *api, const char *id)
{
    struct iof_diag d = {{0}};
    struct iof_buf b;
    int rc;

    iof_buf_init(&b, API_MAX_BODY);
    if (!id) {
        struct api_args *a = calloc(1, sizeof(*a));
        if (!a) {
            iof_buf_free(&b);
            return api_error(conn, 500, NULL, "out of memory");
        }
        mgr_api_runs_query_init(&a->q);
        a->now_ns = (int64_t)iof_wall_ns();
        MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, api_runs_arg, a);
        if (a->rc) {
            iof_buf_free(&b);
            snprintf(d.msg, sizeof(d.msg), "%s", a->d.msg);
            free(a);
            return api_error(conn, 400, NULL, "GET /api/v1/runs: %s", d.msg);
        }
        rc = mgr_api_runs_list(api->db, &a->q, &b, &d);
        free(a);
    } else {
        char *end;
        long long v;
        errno = 0;
        v = strtoll(id, &end, 10);
        if (!*id || *end || *id == '-' || *id == '+' || errno || v <= 0) {
            iof_buf_free(&b);
            return api_error(conn, 400, NULL,
                             "/api/v1/runs/%.100s: a run is named by its id, a number from 1", id);
        }
        rc = mgr_api_runs_get(api->db, (int64_t)v, &b, &d);
    }
    if (rc) {
        iof_buf_free(&b);
        return api_error(conn, rc == -ENOENT ? 404 : 500, NULL, "%s", d.msg);
    }
    return api_send_buf(conn, 200, &b);
}

/* The query string of GET /api/v1/runs/compare, one parameter at a time. */
struct api_cmp_args {
    struct mgr_api_runs_cmp c;
    struct iof_diag d;
    int rc;
};

static enum MHD_Result api_cmp_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    struct api_cmp_args *a = cls;

    (void)kind;
    a->rc = mgr_api_runs_cmp_param(&a->c, key, value, &a->d);
    return a->rc ? MHD_NO : MHD_YES;
}

/* GET /api/v1/runs/compare?a=ID&b=ID. */
static enum MHD_Result api_runs_compare(struct MHD_Connection *conn, struct mgr_api *api)
{
    struct api_cmp_args a = {{{0}}};
    struct iof_buf b;
    int rc;

    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, api_cmp_arg, &a);
    if (a.rc || mgr_api_runs_cmp_check(&a.c, &a.d))
        return api_error(conn, 400, NULL, "GET /api/v1/runs/compare: %s", a.d.msg);
    iof_buf_init(&b, API_MAX_BODY);
    if ((rc = mgr_api_runs_compare(api->db, &a.c, &b, &a.d))) {
        iof_buf_free(&b);
        return api_error(conn, rc == -ENOENT ? 404 : 500, NULL, "GET /api/v1/runs/compare: %s",
                         a.d.msg);
    }
    return api_send_buf(conn, 200, &b);
}

/* Sends r (its reference taken) as a 200 download named filename: type, no caching, the
 * policy csp (nothing loads when NULL). */
static enum MHD_Result api_send_download(struct MHD_Connection *conn, struct MHD_Response *r,
                                         const char *type, const char *filename, const char *csp)
{
    enum MHD_Result ret;
    char disp[160];

    snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", filename);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "Content-Disposition", disp);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy", csp ? csp : "default-src 'none'");
    if (mgr_http_mhd_is_tls(conn))
        MHD_add_response_header(r, "Strict-Transport-Security", MGR_HTTP_HSTS);
    ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

/* A download of run id that could not be prepared: 404, 409 (still being
 * written), 503 (enough are being prepared: Retry-After) or 500. */
static enum MHD_Result api_runs_fail(struct MHD_Connection *conn, int rc, int64_t id,
                                     const char *tail, const char *msg)
{
    return api_error_hdr(conn,
                         rc == -ENOENT   ? 404
                         : rc == -EBUSY  ? 409
                         : rc == -EAGAIN ? 503
                                         : 500,
                         MHD_HTTP_HEADER_RETRY_AFTER, rc == -EAGAIN ? "1" : NULL,
                         "GET /api/v1/runs/%lld%s: %s", (long long)id, tail, msg);
}

/* GET /api/v1/runs/ID/report.html: `iofleet report ID`'s page, a download. */
static enum MHD_Result api_runs_report(struct MHD_Connection *conn, struct mgr_api *api, int64_t id)
{
    struct iof_diag d = {{0}};
    struct MHD_Response *r;
    char *body, name[64];
    size_t len;
    int rc;

    if ((rc = mgr_api_runs_report(api->db, id, &body, &len, &d)))
        return api_runs_fail(conn, rc, id, "/report.html", d.msg);
    if (!(r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE))) {
        free(body);
        return MHD_NO;
    }
    snprintf(name, sizeof(name), "iofleet-run-%lld.html", (long long)id);
    return api_send_download(conn, r, "text/html; charset=utf-8", name,
                             "default-src 'none'; script-src 'unsafe-inline'; style-src "
                             "'unsafe-inline'; img-src data:");
}

/* GET /api/v1/runs/ID/results.csv (.json, iometer.csv, timeseries.csv): the
 * file `iofleet runs export ID` writes, a download streamed from a file
 * without a name. */
static enum MHD_Result api_runs_result(struct MHD_Connection *conn, struct mgr_api *api, int64_t id,
                                       const struct mgr_api_result_file *rf)
{
    struct iof_diag d = {{0}};
    struct MHD_Response *r;
    char name[96];
    uint64_t size;
    int rc, fd;

    if ((rc = mgr_api_runs_result(api->db, id, rf, &fd, &size, &d)))
        return api_runs_fail(conn, rc, id, rf->tail, d.msg);
    if (!(r = MHD_create_response_from_fd(size, fd))) {
        close(fd);
        return MHD_NO;
    }
    snprintf(name, sizeof(name), "iofleet-run-%lld%s", (long long)id, rf->suffix);
    return api_send_download(conn, r, rf->content_type, name, NULL);
}

static const struct mgr_api_run_ops *api_runs_ops(struct mgr_api *api)
{
    const struct mgr_api_run_ops *ops;

    pthread_mutex_lock(&api->mu);
    ops = api->runs;
    pthread_mutex_unlock(&api->mu);
    return ops;
}

static enum MHD_Result api_no_runs(struct MHD_Connection *conn)
{
    return api_error(conn, 503, NULL, "this server starts no runs");
}

/* {"id": N, "state": "..."} with status. */
static enum MHD_Result api_run_id(struct MHD_Connection *conn, unsigned status, int64_t id,
                                  const char *state)
{
    struct iof_buf b;

    iof_buf_init(&b, API_MAX_BODY);
    iof_buf_printf(&b, "{\"id\":%lld,\"state\":\"%s\"}\n", (long long)id, state);
    return api_send_buf(conn, status, &b);
}

/* POST /api/v1/runs: the plan in body checked by the loader `iofleet run`
 * uses (400 with its message), then started on the loop. */
static enum MHD_Result api_run_start(struct MHD_Connection *conn, struct mgr_api *api,
                                     const char *body, size_t len)
{
    const struct mgr_api_run_ops *ops = api_runs_ops(api);
    struct iof_diag d = {{0}};
    struct iof_plan *p;
    char *canon = NULL, msg[512] = "";
    int64_t id = 0;
    unsigned status;

    if (!ops)
        return api_no_runs(conn);
    if (!(p = calloc(1, sizeof(*p))))
        return api_error(conn, 500, NULL, "out of memory");
    if (proto_plan_parse_canonical("plan", body, len, NULL, 0, p, &canon, &d)) {
        free(p);
        return api_error(conn, 400, NULL, "%s", d.msg);
    }
    status = ops->start(ops->arg, p, canon, &id, msg, sizeof(msg));
    if (status == 202)
        return api_run_id(conn, 202, id, "started");
    return api_error(conn, status, NULL, "%s", msg);
}

/* POST /api/v1/runs/current/stop. */
static enum MHD_Result api_run_stop(struct MHD_Connection *conn, struct mgr_api *api)
{
    const struct mgr_api_run_ops *ops = api_runs_ops(api);
    char msg[512] = "";
    int64_t id = 0;
    unsigned status;

    if (!ops)
        return api_no_runs(conn);
    status = ops->stop(ops->arg, &id, msg, sizeof(msg));
    if (status == 202)
        return api_run_id(conn, 202, id, "stopping");
    return api_error(conn, status, NULL, "%s", msg);
}

/* The answer fn(arg) writes: its body with 200, else its status and message. */
static enum MHD_Result
api_op_answer(struct MHD_Connection *conn,
              unsigned (*fn)(void *arg, struct iof_buf *b, char *msg, size_t cap), void *arg)
{
    char msg[512] = "";
    struct iof_buf b;
    unsigned status;

    iof_buf_init(&b, API_MAX_BODY);
    status = fn(arg, &b, msg, sizeof(msg));
    if (status != 200) {
        iof_buf_free(&b);
        return api_error(conn, status, NULL, "%s", msg);
    }
    return api_send_buf(conn, 200, &b);
}

/* GET /api/v1/runs/current. */
static enum MHD_Result api_run_current(struct MHD_Connection *conn, struct mgr_api *api)
{
    const struct mgr_api_run_ops *ops = api_runs_ops(api);

    if (!ops)
        return api_error(conn, 404, NULL, "no run is under way");
    return api_op_answer(conn, ops->current, ops->arg);
}

/* The id of the run serve has under way (GET /api/v1/runs/current's
 * "id"), 0 when none. */
static int64_t api_running_id(struct mgr_api *api)
{
    const struct mgr_api_run_ops *ops = api_runs_ops(api);
    char msg[256];
    struct iof_buf b;
    long long id = 0;

    if (!ops)
        return 0;
    iof_buf_init(&b, API_MAX_BODY);
    if (ops->current(ops->arg, &b, msg, sizeof(msg)) != 200 || b.err || !b.p ||
        sscanf(b.p, "{\"id\":%lld", &id) != 1)
        id = 0;
    iof_buf_free(&b);
    return id;
}

/* "7" or "7/tag" (with tail "/tag"): the run id, 0 for anything else. */
static int64_t api_run_ref(const char *rest, const char *tail)
{
    char buf[32];
    size_t n = strlen(rest), t = tail ? strlen(tail) : 0;
    int64_t id = 0;

    if (n < t || (t && strcmp(rest + n - t, tail)) || n - t >= sizeof(buf))
        return 0;
    memcpy(buf, rest, n - t);
    buf[n - t] = '\0';
    return mgr_query_id(buf, &id) ? id : 0;
}

/* The run history's answer in b (200), or its error: 400 a bad request,
 * 404 no such run, 409 the run under way, 500 else. */
static enum MHD_Result api_history_answer(struct MHD_Connection *conn, int rc, struct iof_buf *b,
                                          const struct iof_diag *d)
{

    if (rc) {
        iof_buf_free(b);
        return api_error(conn,
                         rc == -EINVAL   ? 400
                         : rc == -ENOENT ? 404
                         : rc == -EBUSY  ? 409
                                         : 500,
                         NULL, "%s", d->msg);
    }
    return api_send_buf(conn, 200, b);
}

static const struct mgr_api_console_ops *api_console_ops(struct mgr_api *api)
{
    const struct mgr_api_console_ops *ops;

    pthread_mutex_lock(&api->mu);
    ops = api->console;
    pthread_mutex_unlock(&api->mu);
    return ops;
}

/* GET /api/v1/runs/last: the run under way, else the last one that ended. */
static enum MHD_Result api_run_last(struct MHD_Connection *conn, struct mgr_api *api)
{
    const struct mgr_api_console_ops *ops = api_console_ops(api);

    if (!ops)
        return api_error(conn, 503, NULL, "this server keeps no run state");
    return api_op_answer(conn, ops->last, ops->arg);
}

/* POST /api/v1/runs/ID/tag, POST /api/v1/runs/prune with their body. */
static enum MHD_Result api_history_post(struct MHD_Connection *conn, struct mgr_api *api,
                                        const struct api_post *post)
{
    const char *body = post->body.p ? post->body.p : "";
    struct iof_diag d = {{0}};
    struct mgr_api_prune p;
    struct iof_buf b;
    int rc;

    iof_buf_init(&b, API_MAX_BODY);
    if (post->what == API_POST_TAG) {
        rc = mgr_api_runs_tag(api->db, post->id, body, post->body.len, &b, &d);
    } else {
        rc = mgr_api_runs_prune_parse(body, post->body.len, (int64_t)iof_wall_ns(), &p, &d);
        if (!rc)
            rc = mgr_api_runs_prune(api->db, &p, api_running_id(api), &b, &d);
        mgr_api_runs_prune_release(&p);
    }
    return api_history_answer(conn, rc, &b, &d);
}

/* DELETE /api/v1/runs/ID. */
static enum MHD_Result api_run_delete(struct MHD_Connection *conn, struct mgr_api *api,
                                      const char *rest)
{
    struct iof_diag d = {{0}};
    int64_t id = api_run_ref(rest, NULL);
    struct iof_buf b;

    if (!id)
        return api_error(conn, 400, NULL,
                         "/api/v1/runs/%.100s: a run is named by its id, a number from 1", rest);
    iof_buf_init(&b, API_MAX_BODY);
    return api_history_answer(conn, mgr_api_runs_delete(api->db, id, api_running_id(api), &b, &d),
                              &b, &d);
}

static int64_t api_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec;
}

/* The credential a request was let in with (tokens on): its line, and the
 * session id when a session cookie was what counted. */
struct api_cred {
    bool on;
    struct mgr_api_token tok;
    char sid[MGR_API_SESSION_ID_LEN + 1];
};

/* GET /api/v1/events: Server-Sent Events, in one of the guard's stream
 * slots (503 over its caps), ended when cred (tokens on) no longer holds. */
static enum MHD_Result api_events(struct MHD_Connection *conn, struct mgr_api *api,
                                  const struct api_cred *cred)
{
    const struct mgr_api_console_ops *ops = api_console_ops(api);
    const char *after = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID");
    struct mgr_http_conn *slot = mgr_http_mhd_conn(conn);
    struct mgr_api_gate gate;
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (!ops)
        return api_error(conn, 503, NULL, "this server has no event stream");
    if (!slot || mgr_http_guard_stream(api->guard, slot))
        return api_error(conn, 503, NULL,
                         "too many event streams (at most %d, %d per network); try again later",
                         MGR_HTTP_MAX_SSE, MGR_HTTP_MAX_SSE_PER_NET);
    if (!after)
        after = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "after");
    if (cred->on && mgr_api_auth_gate(api->auth, &cred->tok, cred->sid, &gate))
        return api_error(conn, 500, NULL, "out of memory");
    if (!(r = ops->events(ops->arg, after, cred->on ? &gate : NULL)))
        return api_error(conn, 500, NULL, "out of memory");
    MHD_add_response_header(r, "Content-Security-Policy", "default-src 'none'");
    ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

/* GET of a path outside /api/: the console page and its files (manager/
 * console_page.h). The page runs no inline script and loads nothing from
 * elsewhere: its script, style and Chart.js come from this server. */
static enum MHD_Result api_page_send(struct MHD_Connection *conn, struct iof_buf *b,
                                     const char *type);

static enum MHD_Result api_console_get(struct MHD_Connection *conn, struct mgr_api *api,
                                       const char *url)
{
    const struct mgr_api_console_ops *ops = api_console_ops(api);
    const char *type = NULL;
    struct iof_buf b;
    unsigned status;

    if (!ops)
        return api_error(conn, 404, NULL, "no such endpoint: %.200s", url);
    iof_buf_init(&b, API_MAX_BODY);
    /* The page itself lists the history and, to a session, a sign-out. */
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        status = mgr_console_page(
            ops->arg, api->db,
            api->auth && MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, MGR_API_SESSION_COOKIE),
            &b, &type);
    else
        status = ops->get(ops->arg, url, &b, &type);
    if (status != 200) {
        iof_buf_free(&b);
        return api_error(conn, 404, NULL,
                         "no such page: %.200s (the console is at /, the API under /api/v1/)", url);
    }
    return api_page_send(conn, &b, type);
}

/* Sends b (taken) as a page of type with the console's headers (its CSP). */
static enum MHD_Result api_page_send(struct MHD_Connection *conn, struct iof_buf *b,
                                     const char *type)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    size_t len;
    char *body;

    if (!(body = iof_buf_take(b, &len)))
        return api_error(conn, 500, NULL, "out of memory");
    if (!(r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE))) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy", MGR_API_CONSOLE_CSP);
    if (mgr_http_mhd_is_tls(conn))
        MHD_add_response_header(r, "Strict-Transport-Security", MGR_HTTP_HSTS);
    ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

/* POST /api/v1/plans/check: the plan in body checked by the loader `iofleet
 * validate` and `iofleet run` use; 400 with its message when refused. */
static enum MHD_Result api_plan_check(struct MHD_Connection *conn, const char *body, size_t len)
{
    struct iof_diag d = {{0}};
    struct iof_plan p;
    struct iof_test *tests;
    struct iof_buf b;
    char *canon = NULL, *out;
    size_t ntests = 0, olen;

    if (proto_plan_parse_canonical("plan", body, len, NULL, 0, &p, &canon, &d))
        return api_error(conn, 400, NULL, "%s", d.msg);
    tests = iof_plan_expand(&p, &ntests);
    iof_buf_init(&b, API_MAX_BODY);
    iof_json_open(&b, '{');
    iof_json_key(&b, "valid");
    iof_json_bool(&b, true);
    iof_json_key(&b, "tests");
    iof_json_u64(&b, ntests);
    iof_json_key(&b, "plan");
    iof_json_raw(&b, canon, strlen(canon));
    iof_json_close(&b, '}');
    iof_buf_addstr(&b, "\n");
    free(tests);
    free(canon);
    iof_plan_free(&p);
    if (!tests || !(out = iof_buf_take(&b, &olen))) {
        iof_buf_free(&b);
        return api_error(conn, 500, NULL, "out of memory");
    }
    return api_send(conn, 200, out, olen, NULL);
}

/* The query of POST /api/v1/plans/import, one parameter at a time. */
struct api_import_args {
    struct mgr_api_import *q;
    struct iof_diag d;
    int rc;
};

static enum MHD_Result api_import_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    struct api_import_args *a = cls;

    (void)kind;
    a->rc = mgr_api_import_param(a->q, key, value, &a->d);
    return a->rc ? MHD_NO : MHD_YES;
}

/* POST /api/v1/plans/import and /export (manager/api_plans.c): changes
 * nothing here. Import answers JSON; export the .icf file's text. */
static enum MHD_Result api_plans_post(struct MHD_Connection *conn, const struct api_post *post)
{
    const char *body = post->body.p ? post->body.p : "";
    struct api_import_args a = {0};
    struct MHD_Response *r;
    struct iof_buf b;
    size_t len;
    char *text;

    iof_buf_init(&b, API_MAX_BODY);
    if (post->what == API_POST_IMPORT) {
        if (!(a.q = mgr_api_import_new()))
            return api_error(conn, 500, NULL, "out of memory");
        MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, api_import_arg, &a);
        if (!a.rc)
            a.rc = mgr_api_import_run(a.q, body, post->body.len, &b, &a.d);
        mgr_api_import_free(a.q);
        if (a.rc) {
            iof_buf_free(&b);
            return api_error(conn, a.rc == -ENOMEM ? 500 : 400, NULL, "%s", a.d.msg);
        }
        return api_send_buf(conn, 200, &b);
    }
    a.rc = mgr_api_plans_export(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "format"),
                                body, post->body.len, &b, &a.d);
    if (a.rc) {
        iof_buf_free(&b);
        return api_error(conn, a.rc == -ENOMEM ? 500 : 400, NULL, "%s", a.d.msg);
    }
    if (!(text = iof_buf_take(&b, &len)))
        return api_error(conn, 500, NULL, "out of memory");
    if (!(r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE))) {
        free(text);
        return MHD_NO;
    }
    return api_send_download(conn, r, "text/plain; charset=utf-8", "plan.icf", NULL);
}

static const struct mgr_api_plans_dirs *api_plans_dirs(struct mgr_api *api)
{
    const struct mgr_api_plans_dirs *d;

    pthread_mutex_lock(&api->mu);
    d = api->plans;
    pthread_mutex_unlock(&api->mu);
    return d;
}

/* The plan library (manager/api_plans.c): GET /api/v1/plans (name NULL),
 * GET, PUT (body) or DELETE /api/v1/plans/NAME. */
static enum MHD_Result api_library(struct MHD_Connection *conn, struct mgr_api *api,
                                   const char *method, const char *name, const struct api_post *put)
{
    const struct mgr_api_plans_dirs *d = api_plans_dirs(api);
    struct iof_diag diag = {{0}};
    bool created = false;
    struct iof_buf b;
    int rc;

    if (!d)
        return api_error(conn, 503, NULL, "this server keeps no plan library");
    iof_buf_init(&b, API_MAX_BODY);
    if (put)
        rc = mgr_api_plans_put(d, put->name, put->body.p ? put->body.p : "", put->body.len, &b,
                               &created, &diag);
    else if (!name)
        rc = mgr_api_plans_list(d, &b, &diag);
    else if (!strcmp(method, "DELETE"))
        rc = mgr_api_plans_delete(d, name, &b, &diag);
    else
        rc = mgr_api_plans_get(
            d, name, MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "source"), &b, &diag);
    if (rc) {
        iof_buf_free(&b);
        return api_error(conn,
                         rc == -EINVAL || rc == IOF_EPLAN ? 400
                         : rc == -ENOENT                  ? 404
                         : rc == -EPERM                   ? 403
                         : rc == -ELOOP                   ? 409
                                                          : 500,
                         NULL, "%s", diag.msg);
    }
    return api_send_buf(conn, created ? 201 : 200, &b);
}

/* The body of an import is the file itself: application/octet-stream,
 * which a form on another site cannot send either. */
static bool api_octet_stream(struct MHD_Connection *conn)
{
    const char *type =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    size_t n = strlen("application/octet-stream");

    return type && !strncasecmp(type, "application/octet-stream", n) &&
           (!type[n] || type[n] == ';' || type[n] == ' ');
}

/* A state-changing request must come from a script or this server's own
 * page, never from a form on another site: Content-Type application/json
 * (which a cross-site form cannot send without a CORS preflight this server
 * never grants), and an Origin, when there is one, naming this server as
 * the Host header does (https: an https:// Origin). json false, for a
 * DELETE (which no form can send, nor a script elsewhere without that
 * preflight): the Origin check only. *refused false: go on; true: the
 * refusal is queued, and its result returned. */
static enum MHD_Result api_csrf(struct MHD_Connection *conn, const char *host, bool json,
                                bool https, bool *refused)
{
    const char *scheme = https ? "https://" : "http://";
    const char *type =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    size_t n = strlen("application/json");

    *refused = true;
    if (json && (!type || strncasecmp(type, "application/json", n) ||
                 (type[n] && type[n] != ';' && type[n] != ' ')))
        return api_error(conn, 415, NULL,
                         "a POST needs Content-Type: application/json, got '%.100s' (a form on "
                         "another site cannot send it: docs/api.md, CSRF)",
                         type ? type : "");
    if (origin &&
        (strncmp(origin, scheme, strlen(scheme)) || strcasecmp(origin + strlen(scheme), host)))
        return api_error(conn, 403, NULL,
                         "Origin '%.200s' is not this server (%s%.200s): a page elsewhere "
                         "may not change anything here (docs/api.md, CSRF)",
                         origin, scheme, host);
    *refused = false;
    return MHD_YES;
}

/* The Host header names this server: a loopback address or "localhost",
 * with or without its port. Anything else is a name a page elsewhere
 * made resolve here (DNS rebinding): refused. */
static bool api_host_ok(const struct mgr_api *api, const char *host)
{
    char name[300];
    const char *colon;
    size_t n;

    if (!host || !*host)
        return false;
    if (host[0] == '[') {
        const char *end = strchr(host, ']');
        if (!end)
            return false;
        n = (size_t)(end - host - 1);
        colon = end[1] == ':' ? end + 1 : end[1] ? host : NULL;
        if (colon == host)
            return false;
        if (n >= sizeof(name))
            return false;
        memcpy(name, host + 1, n);
    } else {
        colon = strchr(host, ':');
        n = colon ? (size_t)(colon - host) : strlen(host);
        if (n >= sizeof(name))
            return false;
        memcpy(name, host, n);
    }
    name[n] = '\0';
    if (colon) {
        char *end;
        unsigned long p = strtoul(colon + 1, &end, 10);
        if (*end || p != api->port)
            return false;
    }
    if (!strcasecmp(name, "localhost"))
        return true;
    {
        unsigned char bin[sizeof(struct in6_addr)];
        if (inet_pton(AF_INET, name, bin) == 1)
            return bin[0] == 127;
        if (inet_pton(AF_INET6, name, bin) == 1)
            return IN6_IS_ADDR_LOOPBACK((struct in6_addr *)bin);
    }
    return false;
}

/* The session cookie's attributes: HttpOnly, Secure over HTTPS (plain HTTP
 * is only ever loopback: mgr_api_bind_check()), SameSite=Strict, Path=/. */
static void api_cookie(char *out, size_t cap, bool https, const char *id, int max_age)
{
    snprintf(out, cap, "%s=%s; HttpOnly;%s SameSite=Strict; Path=/; Max-Age=%d",
             MGR_API_SESSION_COOKIE, id, https ? " Secure;" : "", max_age);
}

/* 503 while the tokens file is unusable (manager/api_auth.h): the reason
 * is in serve's log only. */
static enum MHD_Result api_closed(struct MHD_Connection *conn)
{
    return api_error_hdr(conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "5",
                         "this server's tokens file is unusable: every token and session is "
                         "refused until it is fixed (the server's log says why; docs/api.md, "
                         "Security)");
}

/* POST /api/v1/session: {"token": "..."} checked as a Bearer token is
 * (failures throttled and counted the same), then a session cookie. */
static enum MHD_Result api_signin(struct MHD_Connection *conn, struct mgr_api *api,
                                  const char *body, size_t len)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    cJSON *j = cJSON_ParseWithLength(body, len), *t = cJSON_GetObjectItemCaseSensitive(j, "token");
    char id[MGR_API_SESSION_ID_LEN + 1], cookie[256], *out;
    struct mgr_api_token tok;
    enum mgr_api_auth_result r;
    struct iof_buf b;
    size_t olen;

    OPENSSL_cleanse((char *)body, len); /* the request's copy of the token; j has its own */
    if (!cJSON_IsObject(j) || !cJSON_IsString(t)) {
        cJSON_Delete(j);
        return api_error(conn, 400, NULL,
                         "a sign-in is a JSON object {\"token\": \"TOKEN\"} (docs/api.md, "
                         "Sign-in)");
    }
    r = mgr_api_auth_signin(api->auth, t->valuestring, strlen(t->valuestring),
                            ci ? ci->client_addr : NULL, api_now(), "/api/v1/session", &tok, id);
    OPENSSL_cleanse(t->valuestring, strlen(t->valuestring));
    cJSON_Delete(j);
    switch (r) {
    case MGR_API_AUTH_OK:
        break;
    case MGR_API_AUTH_THROTTLED:
        return api_error_hdr(conn, 429, MHD_HTTP_HEADER_RETRY_AFTER, "60",
                             "too many failed authentications from this address: try again "
                             "within %d s (docs/api.md, Security)",
                             MGR_API_FAIL_WINDOW_S);
    case MGR_API_AUTH_ERROR:
        return api_error(conn, 500, NULL, "no random session id (RAND_bytes failed)");
    case MGR_API_AUTH_CLOSED:
        return api_closed(conn);
    default:
        return api_error(conn, 401, NULL,
                         "the token is not one this server knows (docs/api.md, Security)");
    }
    api_cookie(cookie, sizeof(cookie), api->tls.cert != NULL, id, MGR_API_SESSION_S);
    OPENSSL_cleanse(id, sizeof(id));
    iof_buf_init(&b, 4096);
    iof_json_open(&b, '{');
    iof_json_key(&b, "name");
    iof_json_str(&b, tok.name);
    iof_json_key(&b, "scope");
    iof_json_str(&b, mgr_api_scope_name(tok.scope));
    iof_json_key(&b, "expires_in_s");
    iof_json_u64(&b, MGR_API_SESSION_S);
    iof_json_close(&b, '}');
    iof_buf_addstr(&b, "\n");
    if (!(out = iof_buf_take(&b, &olen))) {
        iof_buf_free(&b);
        OPENSSL_cleanse(cookie, sizeof(cookie));
        return api_error(conn, 500, NULL, "out of memory");
    }
    {
        enum MHD_Result ret = api_send_hdr(conn, 200, out, olen, "Set-Cookie", cookie);
        OPENSSL_cleanse(cookie, sizeof(cookie));
        return ret;
    }
}

/* POST /api/v1/session/end: the request's session (already authorized)
 * removed and its cookie cleared. */
static enum MHD_Result api_signout(struct MHD_Connection *conn, struct mgr_api *api)
{
    const char *sid = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, MGR_API_SESSION_COOKIE);
    bool had = sid && mgr_api_auth_signout(api->auth, sid);
    char cookie[256], *out;

    api_cookie(cookie, sizeof(cookie), api->tls.cert != NULL, "", 0);
    if (!(out = strdup(had ? "{\"signed_out\": true}\n" : "{\"signed_out\": false}\n")))
        return api_error(conn, 500, NULL, "out of memory");
    return api_send_hdr(conn, 200, out, strlen(out), "Set-Cookie", cookie);
}

/* With tokens, every request needs one (manager/api_auth.h): 401 without
 * or with a wrong one, 403 for a viewer's beyond GET and HEAD, 429 after
 * too many failures from the peer. *refused as api_csrf(). */
static enum MHD_Result api_authorize(struct mgr_api *api, struct MHD_Connection *conn,
                                     const char *method, const char *url, const char *cn,
                                     bool write, bool *refused, struct api_cred *who)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const char *authz =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *sid = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, MGR_API_SESSION_COOKIE);
    struct mgr_api_token tok;
    enum mgr_api_auth_result r = MGR_API_AUTH_MISSING;

    *refused = true;
    /* a client certificate a "cert" line names, else the token or session */
    if (cn)
        r = mgr_api_auth_check_cert(api->auth, cn, write, ci ? ci->client_addr : NULL, api_now(),
                                    method, url, &tok);
    if (r == MGR_API_AUTH_MISSING)
        r = mgr_api_auth_check(api->auth, authz, sid, write, ci ? ci->client_addr : NULL, api_now(),
                               method, url, &tok);
    switch (r) {
    case MGR_API_AUTH_OK:
        *refused = false;
        who->on = true;
        who->tok = tok;
        /* a session counted when neither a certificate nor a Bearer token did */
        if (!tok.cert && sid && (!authz || strncasecmp(authz, "Bearer", 6)))
            snprintf(who->sid, sizeof(who->sid), "%s", sid);
        return MHD_YES;
    case MGR_API_AUTH_MISSING:
        return api_error_hdr(conn, 401, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                             "Bearer realm=\"iofleet\"",
                             "this API needs a token: Authorization: Bearer TOKEN (iofleet serve "
                             "token new makes one; docs/api.md, Security)");
    case MGR_API_AUTH_WRONG:
        return api_error_hdr(conn, 401, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                             "Bearer realm=\"iofleet\", error=\"invalid_token\"",
                             (!authz || strncasecmp(authz, "Bearer", 6)) && sid
                                 ? "the session cookie is unknown or expired: sign in again at / "
                                   "(docs/api.md, Sign-in)"
                                 : "the token is not one this server knows (docs/api.md, "
                                   "Security)");
    case MGR_API_AUTH_SCOPE:
        return api_error(conn, 403, NULL,
                         "%s '%s' is a viewer's: %.16s %.200s needs an operator's "
                         "(docs/api.md, Security)",
                         tok.cert ? "certificate" : "token", tok.name[0] ? tok.name : "?", method,
                         url);
    case MGR_API_AUTH_CLOSED:
        return api_closed(conn);
    default:
        return api_error_hdr(conn, 429, MHD_HTTP_HEADER_RETRY_AFTER, "60",
                             "too many failed authentications from this address: try again "
                             "within %d s (docs/api.md, Security)",
                             MGR_API_FAIL_WINDOW_S);
    }
}

static enum MHD_Result api_request(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload_data,
                                   size_t *upload_data_size, void **req_cls)
{
    struct mgr_api *api = cls;
    struct mgr_http_conn *c = mgr_http_mhd_conn(conn);
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), check, stop, runs, prune, tag,
         imp, out;
    struct api_post *post = *req_cls;
    const struct mgr_api_result_file *rfile;
    struct api_cred cred = {0};
    int64_t rid = 0;

    (void)version;
    if (post) { /* a POST's body, then its end */
        if (*upload_data_size) {
            if (post->body.len + *upload_data_size > API_MAX_REQUEST)
                post->too_big = true;
            else
                iof_buf_add(&post->body, upload_data, *upload_data_size);
            *upload_data_size = 0;
            return MHD_YES;
        }
        if (post->too_big)
            return api_error(conn, 413, NULL, "the request body is over %u bytes", API_MAX_REQUEST);
        if (post->body.err)
            return api_error(conn, 500, NULL, "out of memory");
        switch (post->what) {
        case API_POST_RUN:
            return api_run_start(conn, api, post->body.p ? post->body.p : "", post->body.len);
        case API_POST_STOP:
            return api_run_stop(conn, api);
        case API_POST_TAG:
        case API_POST_PRUNE:
            return api_history_post(conn, api, post);
        case API_POST_SIGNIN:
            return api_signin(conn, api, post->body.p ? post->body.p : "", post->body.len);
        case API_POST_SIGNOUT:
            return api_signout(conn, api);
        case API_POST_IMPORT:
        case API_POST_EXPORT:
            return api_plans_post(conn, post);
        case API_PUT_PLAN:
            return api_library(conn, api, method, NULL, post);
        default:
            return api_plan_check(conn, post->body.p ? post->body.p : "", post->body.len);
        }
    }
    if (!c || !mgr_http_guard_request(api->guard, c)) /* closed by the guard meanwhile */
        return MHD_NO;
    /* Over HTTPS a name made to resolve here fails the certificate's check
     * in the browser: only plain HTTP needs the Host rule. */
    if (!api->tls.cert && !api_host_ok(api, host))
        return api_error(conn, 403, NULL,
                         "Host '%.200s' is not this server's address: requests must name a "
                         "loopback address or localhost (docs/api.md)",
                         host ? host : "");
    if (api->auth) {
        /* Sign-in (docs/api.md, Sign-in): POST /api/v1/session needs no
         * credentials; without any, GET / is the sign-in page. */
        bool refused, signin = !strcmp(url, "/api/v1/session"),
                      signout = !strcmp(url, "/api/v1/session/end");
        char cn[128];
        bool cert = api->tls.client_ca && mgr_api_request_cert(conn, cn, sizeof(cn));
        enum MHD_Result r;
        struct mgr_api_token ct;
        /* a certificate no "cert" line names: the sign-in page as without one */
        if (get &&
            !MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION) &&
            (!strcmp(url, "/signin.js") || !strcmp(url, "/console.css") ||
             (!strcmp(url, "/") &&
              !mgr_api_auth_session_live(
                  api->auth,
                  MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, MGR_API_SESSION_COOKIE),
                  api_now()))) &&
            (!cert || mgr_api_auth_check_cert(api->auth, cn, false, NULL, api_now(), method, url,
                                              &ct) == MGR_API_AUTH_MISSING)) {
            struct iof_buf b;
            const char *type = NULL;
            iof_buf_init(&b, API_MAX_BODY);
            mgr_console_signin_get(url, &b, &type);
            return api_page_send(conn, &b, type);
        }
        if (!signin && ((r = api_authorize(api, conn, method, url, cert ? cn : NULL,
                                           !get && !signout, &refused, &cred)) != MHD_YES ||
                        refused))
            return r;
        if (signin || signout) {
            if (strcmp(method, "POST"))
                return api_error(conn, 405, "POST", "%s %s: only POST", method, url);
            if ((r = api_csrf(conn, host, true, api->tls.cert != NULL, &refused)) != MHD_YES ||
                refused)
                return r;
            if (!(post = calloc(1, sizeof(*post))))
                return api_error(conn, 500, NULL, "out of memory");
            post->what = signin ? API_POST_SIGNIN : API_POST_SIGNOUT;
            iof_buf_init(&post->body, API_MAX_REQUEST);
            *req_cls = post; /* the body follows; freed by api_completed */
            return MHD_YES;
        }
    } else if (!strncmp(url, "/api/v1/session", 15) && (!url[15] || !strcmp(url + 15, "/end"))) {
        return api_error(conn, 404, NULL,
                         "%.200s: there is no sign-in, serve was started without "
                         "--http-tokens (docs/api.md, Sign-in)",
                         url);
    }
    check = !strcmp(url, "/api/v1/plans/check");
    stop = !strcmp(url, "/api/v1/runs/current/stop");
    runs = !strcmp(url, "/api/v1/runs");
    prune = !strcmp(url, "/api/v1/runs/prune");
    tag = !strncmp(url, "/api/v1/runs/", 13) && api_run_ref(url + 13, "/tag");
    imp = !strcmp(url, "/api/v1/plans/import");
    out = !strcmp(url, "/api/v1/plans/export");
    if (check || stop || prune || tag || imp || out || (runs && !get)) {
        bool refused;
        enum MHD_Result r;
        if (strcmp(method, "POST"))
            return runs ? api_error(conn, 405, "GET, HEAD, POST", "%s %s: only GET or POST", method,
                                    url)
                        : api_error(conn, 405, "POST", "%s %s: only POST", method, url);
        if ((r = api_csrf(conn, host, !(imp && api_octet_stream(conn)), api->tls.cert != NULL,
                          &refused)) != MHD_YES ||
            refused)
            return r;
        if (!(post = calloc(1, sizeof(*post))))
            return api_error(conn, 500, NULL, "out of memory");
        post->what = check   ? API_POST_CHECK
                     : imp   ? API_POST_IMPORT
                     : out   ? API_POST_EXPORT
                     : runs  ? API_POST_RUN
                     : prune ? API_POST_PRUNE
                     : tag   ? API_POST_TAG
                             : API_POST_STOP;
        post->id = tag ? api_run_ref(url + 13, "/tag") : 0;
        iof_buf_init(&post->body, API_MAX_REQUEST);
        *req_cls = post; /* the body follows; freed by api_completed */
        return MHD_YES;
    }
    if (!strcmp(url, "/api/v1/plans"))
        return get ? api_library(conn, api, method, NULL, NULL)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strncmp(url, "/api/v1/plans/", 14)) {
        bool refused;
        enum MHD_Result r;
        if (get)
            return api_library(conn, api, method, url + 14, NULL);
        if (strcmp(method, "PUT") && strcmp(method, "DELETE"))
            return api_error(conn, 405, "GET, HEAD, PUT, DELETE", "%s %s: only GET, PUT or DELETE",
                             method, url);
        if ((r = api_csrf(conn, host, !strcmp(method, "PUT"), api->tls.cert != NULL, &refused)) !=
                MHD_YES ||
            refused)
            return r;
        if (!strcmp(method, "DELETE"))
            return api_library(conn, api, method, url + 14, NULL);
        {
            struct iof_diag d = {{0}};
            if (mgr_api_plans_name_check(url + 14, &d))
                return api_error(conn, 400, NULL, "%s", d.msg);
        }
        if (!(post = calloc(1, sizeof(*post))))
            return api_error(conn, 500, NULL, "out of memory");
        post->what = API_PUT_PLAN;
        snprintf(post->name, sizeof(post->name), "%s", url + 14);
        iof_buf_init(&post->body, API_MAX_REQUEST);
        *req_cls = post; /* the body follows; freed by api_completed */
        return MHD_YES;
    }
    if (!strcmp(url, "/api/v1/runs/current"))
        return get ? api_run_current(conn, api)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strcmp(url, "/api/v1/runs/last"))
        return get ? api_run_last(conn, api)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strcmp(url, "/api/v1/events"))
        return get ? api_events(conn, api, &cred)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strcmp(url, "/api/v1/version"))
        return get ? api_version(conn)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strcmp(url, "/api/v1/agents"))
        return get ? api_agents(conn, api)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strcmp(url, "/api/v1/runs"))
        return get ? api_runs(conn, api, NULL)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strncmp(url, "/api/v1/runs/", 13) && api_run_ref(url + 13, "/report.html"))
        return get ? api_runs_report(conn, api, api_run_ref(url + 13, "/report.html"))
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strncmp(url, "/api/v1/runs/", 13) && (rfile = mgr_api_runs_result_of(url + 13, &rid)))
        return get ? api_runs_result(conn, api, rid, rfile)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strcmp(url, "/api/v1/runs/compare"))
        return get ? api_runs_compare(conn, api)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    if (!strncmp(url, "/api/v1/runs/", 13)) {
        bool refused;
        enum MHD_Result r;
        if (get)
            return api_runs(conn, api, url + 13);
        if (strcmp(method, "DELETE"))
            return api_error(conn, 405, "GET, HEAD, DELETE", "%s %s: only GET or DELETE", method,
                             url);
        if ((r = api_csrf(conn, host, false, api->tls.cert != NULL, &refused)) != MHD_YES ||
            refused)
            return r;
        return api_run_delete(conn, api, url + 13);
    }
    if (strncmp(url, "/api/", 5))
        return get ? api_console_get(conn, api, url)
                   : api_error(conn, 405, "GET, HEAD", "%s %s: only GET", method, url);
    return api_error(conn, 404, NULL, "no such endpoint: %.200s (there are " API_ENDPOINTS ")",
                     url);
}

/* --- the server -------------------------------------------------------------------------- */

/* Frees api; diag's message prefixed with "--http ", as the CLI says it. */
static int api_fail(struct mgr_api *api, int rc, struct iof_diag *diag)
{
    char why[sizeof(diag->msg)];

    snprintf(why, sizeof(why), "%s", diag->msg);
    mgr_api_close(api);
    return iof_diag_set(diag, rc, "--http %s", why);
}

void mgr_api_set_runs(struct mgr_api *api, const struct mgr_api_run_ops *ops)
{
    pthread_mutex_lock(&api->mu);
    api->runs = ops;
    pthread_mutex_unlock(&api->mu);
}

int mgr_api_set_plans(struct mgr_api *api, const char *user, const char *shipped)
{
    struct mgr_api_plans_dirs *d = calloc(1, sizeof(*d));

    if (!d)
        return -ENOMEM;
    snprintf(d->user, sizeof(d->user), "%s", user);
    snprintf(d->shipped, sizeof(d->shipped), "%s", shipped ? shipped : "");
    pthread_mutex_lock(&api->mu);
    if (api->plans) { /* set once: a request may hold the first */
        pthread_mutex_unlock(&api->mu);
        free(d);
        return -EEXIST;
    }
    api->plans = d;
    pthread_mutex_unlock(&api->mu);
    return 0;
}

void mgr_api_set_console(struct mgr_api *api, const struct mgr_api_console_ops *ops)
{
    pthread_mutex_lock(&api->mu);
    api->console = ops;
    pthread_mutex_unlock(&api->mu);
}

void mgr_api_set_agents(struct mgr_api *api, char *json, size_t len)
{
    char *old;

    pthread_mutex_lock(&api->mu);
    old = api->agents;
    api->agents = json;
    api->agents_len = len;
    pthread_mutex_unlock(&api->mu);
    free(old);
}

const char *mgr_api_url(const struct mgr_api *api)
{
    return api->url;
}

void mgr_api_reload_tokens(struct mgr_api *api)
{
    if (api && api->auth)
        mgr_api_auth_refresh(api->auth, api_now(), true);
}

void mgr_api_close(struct mgr_api *api)
{
    if (!api)
        return;
    if (api->daemon)
        MHD_stop_daemon(api->daemon);
    else if (api->fd >= 0)
        close(api->fd);
    mgr_http_guard_free(api->guard);
    mgr_api_tls_free(&api->tls);
    mgr_api_auth_free(api->auth);
    pthread_mutex_destroy(&api->mu);
    free(api->agents);
    free(api->plans);
    free(api);
}

int mgr_api_open(const char *spec, const char *db, const struct mgr_api_auth_opts *auth,
                 struct mgr_api **out, struct iof_diag *diag)
{
    struct MHD_OptionItem tls_opts[5];
    unsigned tls_flag;
    struct mgr_api *api;
    uint16_t port, bound = 0;
    bool loopback = false;
    int rc;

    *out = NULL;
    if (!(api = calloc(1, sizeof(*api))))
        return iof_diag_set(diag, -ENOMEM, "--http %s: out of memory", spec);
    api->fd = -1;
    snprintf(api->db, sizeof(api->db), "%s", db);
    pthread_mutex_init(&api->mu, NULL);
    if ((rc = mgr_http_parse(spec, api->host, sizeof(api->host), &port, diag)))
        return api_fail(api, rc, diag);
    {
        unsigned char bin[sizeof(struct in6_addr)];
        loopback = strchr(api->host, ':')
                       ? inet_pton(AF_INET6, api->host, bin) == 1 &&
                             IN6_IS_ADDR_LOOPBACK((struct in6_addr *)bin)
                       : inet_pton(AF_INET, api->host, bin) == 1 && bin[0] == 127;
    }
    if ((rc = mgr_api_tls_load(auth, &api->tls, diag)) ||
        (auth->tokens && (rc = mgr_api_auth_new(auth->tokens, &api->auth, diag))) ||
        (rc = mgr_api_bind_check(spec, api->host, loopback, api->tls.cert != NULL,
                                 api->auth != NULL, diag))) {
        mgr_api_close(api);
        return rc;
    }
    tls_flag = mgr_http_mhd_tls(api->tls.cert, api->tls.key, MGR_API_TLS_PRIORITIES, tls_opts);
    if (api->tls.client_ca) { /* ask for a client certificate (not required): before the end */
        tls_opts[4] = tls_opts[3];
        tls_opts[3] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, (void *)api->tls.client_ca};
    }
    if ((rc = mgr_http_guard_new(&api->guard))) {
        mgr_api_close(api);
        return iof_diag_set(diag, rc, "--http %s: cannot start the HTTP server: %s", spec,
                            strerror(-rc));
    }
    if ((rc = mgr_http_listen(api->host, port, &bound, &loopback, diag)) < 0)
        return api_fail(api, rc, diag);
    api->fd = rc;
    api->port = bound;
    api->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
            (strchr(api->host, ':') ? MHD_USE_IPv6 : 0) | tls_flag,
        0, mgr_http_mhd_accept, api->guard, api_request, api, MHD_OPTION_LISTEN_SOCKET, api->fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)MGR_HTTP_SLOTS, MHD_OPTION_NOTIFY_CONNECTION,
        mgr_http_mhd_notify, api->guard, MHD_OPTION_NOTIFY_COMPLETED, api_completed, api,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)API_IDLE_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)32768, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    if (!api->daemon) {
        mgr_api_close(api);
        return iof_diag_set(diag, -EIO, "--http %s: cannot start the HTTP server", spec);
    }
    snprintf(api->url, sizeof(api->url), strchr(api->host, ':') ? "%s://[%s]:%u/" : "%s://%s:%u/",
             api->tls.cert ? "https" : "http", api->host, bound);
    *out = api;
    return 0;
}
