/* SPDX-License-Identifier: Apache-2.0 */
/* manager/serve_run.c - runs started through `iofleet serve`'s API
 * (manager/serve_run.h): the API's requests handed to the serve loop and
 * answered from it, the one run under way (manager/run.h on a borrowed
 * fleet) with its live state and its record in the run history.
 */
#include "manager/serve_run.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "manager/agent_conn.h"
#include "manager/history/store.h"
#include "manager/run.h"
#include "manager/serve_live.h"
#include "manager/sink.h"
#include "manager/sinks/http_view.h"

#define SR_NAMED 16 /* agents a refusal names at most */

enum sr_what { SR_START, SR_STOP };

/* A request of an HTTP thread, on its stack, answered by the loop. */
struct sr_call {
    enum sr_what what;
    struct iof_plan *p; /* START: taken by the loop when it picks the call */
    char *text;
    unsigned status;
    int64_t id;
    char msg[512];
    bool answered;
};

/* The run under way (loop thread, but view, read by HTTP threads under its
 * lock while published). */
struct sr_run {
    struct mgr_serve_runs *sr;
    struct mgr_run *run;
    struct iof_plan plan;
    char *text;
    struct mgr_run_opts o;
    struct mgr_sink *sinks[3]; /* the live state, the console's, the run history */
    struct mgr_view view;
    int64_t id;
};

struct mgr_serve_runs {
    struct mgr_serve_runs_cfg cfg;
    struct mgr_api_run_ops ops;
    uv_async_t async;
    pthread_mutex_t call_mu; /* one request at a time goes to the loop */
    pthread_mutex_t mu;      /* guards closed, call and the published run */
    pthread_cond_t cv;       /* a call answered, or closed */
    bool closed;
    struct sr_call *call;
    struct sr_run *shown; /* GET /api/v1/runs/current, NULL when idle */
    bool stopping;        /* shown was asked to stop */
    struct sr_run *run;   /* loop thread: the run under way */
};

/* --- the live state, as a sink (manager/sinks/http_view.h) ---------------------------------- */

static struct mgr_view *sr_view(struct mgr_sink *s)
{
    return s->priv;
}

static void sr_run_begin(struct mgr_sink *s, const struct mgr_run_info *ri)
{
    mgr_view_run_begin(sr_view(s), ri);
}

static void sr_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    mgr_view_test_begin(sr_view(s), ti);
}

static void sr_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    mgr_view_interval(sr_view(s), iv);
}

static void sr_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    (void)ti;
    mgr_view_row(sr_view(s), r);
}

static void sr_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    mgr_view_test_end(sr_view(s), te);
}

static void sr_run_end(struct mgr_sink *s, int exit_code)
{
    mgr_view_run_end(sr_view(s), exit_code);
}

static void sr_close(struct mgr_sink *s)
{
    s->priv = NULL; /* the view is the run's (struct sr_run) */
}

static const struct mgr_sink_ops sr_view_sink = {
    .name = "state",
    .run_begin = sr_run_begin,
    .test_begin = sr_test_begin,
    .interval = sr_interval,
    .row = sr_row,
    .test_end = sr_test_end,
    .run_end = sr_run_end,
    .close = sr_close,
};

/* --- the run (loop thread) ------------------------------------------------------------------- */

static void sr_run_free(struct sr_run *r)
{
    if (!r)
        return;
    mgr_run_free(r->run);
    mgr_view_destroy(&r->view);
    iof_plan_free(&r->plan);
    free(r->text);
    free(r);
}

/* The run is over: its record completed (the writer joined) before it
 * leaves runs/current, so a client that sees it gone finds it in the
 * history. */
static void sr_on_done(struct mgr_run *run, int rc, void *arg)
{
    struct sr_run *r = arg;
    struct mgr_serve_runs *sr = r->sr;
    int64_t id = r->id;

    (void)run;
    if (mgr_sink_close(r->sinks[2]))
        IOF_WARN("iofleet serve: run %" PRId64 ": its record in %s is incomplete", id, sr->cfg.db);
    pthread_mutex_lock(&sr->mu);
    sr->shown = NULL;
    sr->stopping = false;
    pthread_mutex_unlock(&sr->mu);
    mgr_sink_close(r->sinks[0]);
    mgr_sink_close(r->sinks[1]); /* the console's "end" event, the record complete */
    sr->run = NULL;
    IOF_USER("iofleet serve: run %" PRId64 " %s (exit code %d)", id,
             mgr_store_status_name(true, rc), rc);
    sr_run_free(r);
    if (sr->cfg.after)
        sr->cfg.after(sr->cfg.arg, id);
}

/* Appends "name, name" of the fleet's connected agents to b. */
static void sr_connected(const struct mgr_fleet *f, struct iof_buf *b)
{
    unsigned n = 0;

    for (size_t i = 0; i < f->nagents; i++) {
        if (!mgr_session_is_up(mgr_agent_state(&f->agents[i])))
            continue;
        if (n++ == SR_NAMED) {
            iof_buf_addstr(b, ", ...");
            break;
        }
        iof_buf_printf(b, "%s%s", n > 1 ? ", " : "", f->agents[i].name);
    }
}

/* Every node a worker group names is a connected agent: 0, or 409 with
 * the ones that are not. */
static unsigned sr_check_nodes(const struct mgr_fleet *f, const struct iof_plan *p, char *msg,
                               size_t cap)
{
    struct iof_buf missing = IOF_BUF_INIT, have = IOF_BUF_INIT;
    unsigned n = 0, status = 0;

    for (size_t g = 0; g < p->nworkers; g++)
        for (size_t i = 0; i < p->workers[g].nnodes; i++) {
            const char *node = p->workers[g].nodes[i];
            bool found = !strcmp(node, "*");
            for (size_t k = 0; k < f->nagents && !found; k++)
                found = mgr_session_is_up(mgr_agent_state(&f->agents[k])) &&
                        !strcmp(f->agents[k].name, node);
            if (!found && n++ < SR_NAMED)
                iof_buf_printf(&missing, "%sworkers[%zu].nodes: '%s'", n > 1 ? ", " : "", g, node);
        }
    if (n) {
        sr_connected(f, &have);
        snprintf(msg, cap,
                 "the plan names %u agent%s not connected to this manager: %s%s "
                 "(connected: %s)",
                 n, n == 1 ? "" : "s", iof_buf_str(&missing), n > SR_NAMED ? ", ..." : "",
                 have.len ? iof_buf_str(&have) : "none");
        status = 409;
    }
    iof_buf_free(&missing);
    iof_buf_free(&have);
    return status;
}

/* POST /api/v1/runs on the loop: k->p and k->text are the run's from here. */
static void sr_start(struct mgr_serve_runs *sr, struct sr_call *k, struct iof_plan *p, char *text)
{
    struct mgr_fleet *f = sr->cfg.fleet;
    struct iof_diag d = {{0}};
    struct mgr_run_env env = {.loop = sr->cfg.loop, .fleet = f};
    struct sr_run *r = NULL;
    int rc;

    k->status = 500;
    if (sr->run) {
        k->status = 409;
        snprintf(k->msg, sizeof(k->msg),
                 "run %" PRId64 " is under way: one run at a time (POST "
                 "/api/v1/runs/current/stop stops it)",
                 sr->run->id);
        goto refused;
    }
    if (!mgr_session_tally_count(&f->tally, mgr_session_is_up, false)) {
        k->status = 409;
        snprintf(k->msg, sizeof(k->msg),
                 "no agent is connected to this manager (GET /api/v1/agents lists them)");
        goto refused;
    }
    if ((k->status = sr_check_nodes(f, p, k->msg, sizeof(k->msg))))
        goto refused;
    k->status = 500;
    if (!(r = calloc(1, sizeof(*r))) || mgr_view_init(&r->view)) {
        free(r);
        r = NULL;
        snprintf(k->msg, sizeof(k->msg), "out of memory");
        goto refused;
    }
    r->sr = sr;
    r->plan = *p;
    free(p);
    p = NULL;
    r->text = text;
    text = NULL;
    if (!(r->sinks[0] = calloc(1, sizeof(*r->sinks[0])))) {
        snprintf(k->msg, sizeof(k->msg), "out of memory");
        goto failed;
    }
    r->sinks[0]->ops = &sr_view_sink;
    r->sinks[0]->priv = &r->view;
    snprintf(r->sinks[0]->path, sizeof(r->sinks[0]->path), "runs/current");
    if (mgr_db_sink_open(sr->cfg.db, NULL, &r->sinks[2], &d) ||
        (r->id = mgr_db_sink_reserve(r->sinks[2], &d)) <= 0) {
        snprintf(k->msg, sizeof(k->msg), "run history: %.480s", d.msg);
        goto failed;
    }
    if (sr->cfg.verbose)
        mgr_db_sink_verbose(r->sinks[2]);
    if (!(r->sinks[1] = mgr_serve_live_sink(sr->cfg.live, r->id))) {
        snprintf(k->msg, sizeof(k->msg), "out of memory");
        goto failed;
    }
    r->o.quiet = true;
    r->o.verbose = sr->cfg.verbose;
    r->o.sinks = r->sinks;
    r->o.nsinks = 3;
    env.done = sr_on_done;
    env.arg = r;
    if ((rc = mgr_run_start(&r->plan, r->text, &r->o, &env, &r->run))) {
        snprintf(k->msg, sizeof(k->msg),
                 "the run could not start (exit code %d: the reason is "
                 "in serve's log)",
                 rc);
        goto failed;
    }
    sr->run = r;
    k->id = r->id;
    k->status = 202;
    IOF_USER("iofleet serve: run %" PRId64 " started: plan '%s' on %u agents", r->id, r->plan.name,
             mgr_session_tally_count(&f->tally, mgr_session_is_up, false));
    /* mgr_run_begin may have ended it already (its end comes from the loop). */
    pthread_mutex_lock(&sr->mu);
    sr->shown = r;
    sr->stopping = false;
    pthread_mutex_unlock(&sr->mu);
    return;
failed:
    mgr_sink_abort(r->sinks[2]);
    mgr_sink_close(r->sinks[1]);
    mgr_sink_close(r->sinks[0]);
    sr_run_free(r);
refused:
    if (p) {
        iof_plan_free(p);
        free(p);
    }
    free(text);
}

static void sr_stop(struct mgr_serve_runs *sr, struct sr_call *k)
{
    if (!sr->run) {
        k->status = 409;
        snprintf(k->msg, sizeof(k->msg), "no run is under way");
        return;
    }
    k->id = sr->run->id;
    k->status = 202;
    IOF_USER("iofleet serve: run %" PRId64 ": stop asked through the API", k->id);
    pthread_mutex_lock(&sr->mu);
    sr->stopping = true;
    pthread_mutex_unlock(&sr->mu);
    mgr_serve_live_stopping(sr->cfg.live);
    mgr_run_interrupt(sr->run->run, false);
}

static void sr_on_async(uv_async_t *h)
{
    struct mgr_serve_runs *sr = h->data;
    struct sr_call *k;
    struct iof_plan *p = NULL;
    char *text = NULL;

    pthread_mutex_lock(&sr->mu);
    k = sr->call;
    sr->call = NULL;
    if (k && k->what == SR_START) {
        p = k->p;
        text = k->text;
        k->p = NULL;
        k->text = NULL;
    }
    pthread_mutex_unlock(&sr->mu);
    if (!k)
        return;
    if (k->what == SR_START)
        sr_start(sr, k, p, text);
    else
        sr_stop(sr, k);
    pthread_mutex_lock(&sr->mu);
    k->answered = true;
    pthread_cond_broadcast(&sr->cv);
    pthread_mutex_unlock(&sr->mu);
}

/* --- what the API's threads call ---------------------------------------------------------------
 */

/* Hands k to the loop and waits for its answer (503 when serve stops). */
static void sr_call(struct mgr_serve_runs *sr, struct sr_call *k)
{
    pthread_mutex_lock(&sr->call_mu);
    pthread_mutex_lock(&sr->mu);
    if (!sr->closed) {
        sr->call = k;
        uv_async_send(&sr->async);
        while (!k->answered && !sr->closed)
            pthread_cond_wait(&sr->cv, &sr->mu);
        if (sr->call == k)
            sr->call = NULL;
    }
    if (!k->answered) {
        k->status = 503;
        snprintf(k->msg, sizeof(k->msg), "iofleet serve is stopping");
    }
    pthread_mutex_unlock(&sr->mu);
    pthread_mutex_unlock(&sr->call_mu);
    if (k->p) { /* never picked */
        iof_plan_free(k->p);
        free(k->p);
    }
    free(k->text);
}

static unsigned sr_api_start(void *arg, struct iof_plan *p, char *text, int64_t *id, char *msg,
                             size_t cap)
{
    struct sr_call k = {.what = SR_START, .p = p, .text = text};

    sr_call(arg, &k);
    *id = k.id;
    snprintf(msg, cap, "%s", k.msg);
    return k.status;
}

static unsigned sr_api_stop(void *arg, int64_t *id, char *msg, size_t cap)
{
    struct sr_call k = {.what = SR_STOP};

    sr_call(arg, &k);
    *id = k.id;
    snprintf(msg, cap, "%s", k.msg);
    return k.status;
}

/* {"id": N, "stopping": B, ...the live view's /api/run object}. */
static unsigned sr_api_current(void *arg, struct iof_buf *b, char *msg, size_t cap)
{
    struct mgr_serve_runs *sr = arg;
    struct iof_buf v;
    unsigned status = 200;

    iof_buf_init(&v, b->max);
    pthread_mutex_lock(&sr->mu);
    if (!sr->shown) {
        status = 404;
        snprintf(msg, cap, "no run is under way (GET /api/v1/runs lists the runs that ended)");
    } else {
        iof_buf_printf(b, "{\"id\":%" PRId64 ",\"stopping\":%s,", sr->shown->id,
                       sr->stopping ? "true" : "false");
        mgr_view_lock(&sr->shown->view);
        mgr_view_json(&sr->shown->view, iof_wall_ns(), &v);
        mgr_view_unlock(&sr->shown->view);
    }
    pthread_mutex_unlock(&sr->mu);
    if (status == 200) {
        if (v.err || v.len < 2)
            status = 500;
        else
            iof_buf_add(b, v.p + 1, v.len - 1); /* the view's object, past its '{' */
        iof_buf_addstr(b, "\n");
        if (status == 500 || b->err) {
            status = 500;
            snprintf(msg, cap, "out of memory");
        }
    }
    iof_buf_free(&v);
    return status;
}

/* --- the set ------------------------------------------------------------------------------------
 */

int mgr_serve_runs_new(const struct mgr_serve_runs_cfg *cfg, struct mgr_serve_runs **out)
{
    struct mgr_serve_runs *sr = calloc(1, sizeof(*sr));
    int r;

    *out = NULL;
    if (!sr)
        return -ENOMEM;
    sr->cfg = *cfg;
    sr->ops.start = sr_api_start;
    sr->ops.stop = sr_api_stop;
    sr->ops.current = sr_api_current;
    sr->ops.arg = sr;
    if ((r = uv_async_init(cfg->loop, &sr->async, sr_on_async)) < 0) {
        free(sr);
        return r;
    }
    sr->async.data = sr;
    pthread_mutex_init(&sr->call_mu, NULL);
    pthread_mutex_init(&sr->mu, NULL);
    pthread_cond_init(&sr->cv, NULL);
    *out = sr;
    return 0;
}

const struct mgr_api_run_ops *mgr_serve_runs_ops(struct mgr_serve_runs *sr)
{
    return &sr->ops;
}

bool mgr_serve_runs_busy(const struct mgr_serve_runs *sr)
{
    return sr && sr->run;
}

void mgr_serve_runs_interrupt(struct mgr_serve_runs *sr, bool force)
{
    if (sr && sr->run)
        mgr_run_interrupt(sr->run->run, force);
}

void mgr_serve_runs_close(struct mgr_serve_runs *sr)
{
    if (!sr)
        return;
    pthread_mutex_lock(&sr->mu);
    if (sr->closed) {
        pthread_mutex_unlock(&sr->mu);
        return;
    }
    sr->closed = true;
    pthread_cond_broadcast(&sr->cv);
    pthread_mutex_unlock(&sr->mu);
    uv_close((uv_handle_t *)&sr->async, NULL);
}

void mgr_serve_runs_free(struct mgr_serve_runs *sr)
{
    if (!sr)
        return;
    pthread_cond_destroy(&sr->cv);
    pthread_mutex_destroy(&sr->mu);
    pthread_mutex_destroy(&sr->call_mu);
    free(sr);
}
