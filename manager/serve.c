/* SPDX-License-Identifier: Apache-2.0 */
/* manager/serve.c - `iofleet serve` (manager/serve.h): one libuv loop that
 * accepts agents on --listen through the run's own connection layer
 * (manager/agent_conn.h), keeps them welcomed and heartbeated, remembers
 * each one by name (connected, or when and why it left), and publishes
 * that list as JSON to the API's threads (manager/api.h) at every change.
 * Runs started through the API (manager/serve_run.h) borrow its agents and
 * its loop; at their end the agents are told bye and dial back.
 * SIGINT or SIGTERM: a run under way is interrupted and recorded, then
 * every agent is told bye, then everything is freed.
 */
#include "manager/serve.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/net.h"
#include "common/tls.h"
#include "manager/agent_conn.h"
#include "manager/api.h"
#include "manager/console.h"
#include "manager/history/store.h"
#include "manager/run.h"
#include "manager/console_page.h"
#include "manager/serve_live.h"
#include "manager/serve_run.h"
#include "proto/link.h"
#include "proto/msg.h"

#define SERVE_TICK_MS 1000 /* forgetting agents that left long ago */
#define SERVE_MAX_JSON (64u << 20)

enum serve_status {
    SERVE_CONNECTED, /* welcomed, its link up */
    SERVE_LEFT,      /* its link closed: since left_ns, for `why` */
};

/* An agent the server knows by name: connected now, or seen in the last
 * MGR_SERVE_SEEN_S seconds. */
struct serve_seen {
    char name[PROTO_NAME_MAX + 1];
    char endpoint[256];
    char why[512]; /* as struct mgr_agent's */
    char *hello;   /* its hello as `iofleet agents --json` prints it; owned */
    /* What the console's fleet table shows of its hello. */
    uint32_t cpus;
    uint64_t memory;
    char software[32];
    char disks[1024];
    bool tls; /* its name is its verified certificate's */
    enum serve_status status;
    struct mgr_agent *a;            /* its slot while connected, else NULL */
    uint64_t connected_ns, left_ns; /* wall clock */
};

struct serve {
    uv_loop_t *loop;
    const struct mgr_serve_opts *o;
    struct mgr_fleet f;
    struct mgr_live live; /* the connection layer ends its line before it logs */
    int rc;               /* raised by failing agents; not the exit code */
    struct iof_listener *listener;
    struct iof_tls_ctx *tls_server;
    uv_signal_t sigint, sigterm, sighup;
    uv_timer_t tick;
    struct mgr_api *api;
    struct serve_seen *seen;
    size_t nseen;
    bool stopping;
    unsigned told_bye;
    struct mgr_serve_runs *runs;
    struct mgr_serve_live *console; /* GET /api/v1/events, /api/v1/runs/last */
    struct mgr_api_console_ops console_ops;
    unsigned signals;    /* SIGINT and SIGTERM received */
    bool stop_after_run; /* a signal came during a run: stop at its end */
};

/* --- what the API shows ------------------------------------------------------------------ */

/* The "hello" object of `iofleet agents --json` for h: new text, or NULL. */
static char *serve_hello_json(const char *endpoint, const struct proto_hello *h)
{
    char *report = proto_agent_report_json(endpoint, h, NULL), *at, *hello = NULL;
    size_t n;

    /* {"endpoint":"ADDR","reachable":true,"hello":{...}}: the endpoint is
     * an address, so the first "hello": is the key. */
    if (report && (at = strstr(report, "\"hello\":")) && (n = strlen(at)) > 9) {
        at += 8;
        n -= 9; /* the key, and the report's closing brace */
        if ((hello = malloc(n + 1))) {
            memcpy(hello, at, n);
            hello[n] = '\0';
        }
    }
    free(report);
    return hello;
}

static int serve_by_name(const void *x, const void *y)
{
    const struct serve_seen *a = *(const struct serve_seen *const *)x;
    const struct serve_seen *b = *(const struct serve_seen *const *)y;
    return strcmp(a->name, b->name);
}

/* Renders GET /api/v1/agents and hands it to the API. */
static void serve_publish(struct serve *sv)
{
    const struct serve_seen **order = calloc(sv->nseen + 1, sizeof(*order));
    struct iof_buf b, html;
    size_t len;
    char *text;

    if (!order) {
        IOF_WARN("serve: out of memory for the agent list");
        return;
    }
    for (size_t i = 0; i < sv->nseen; i++)
        order[i] = &sv->seen[i];
    qsort(order, sv->nseen, sizeof(*order), serve_by_name);
    iof_buf_init(&b, SERVE_MAX_JSON);
    iof_json_open(&b, '{');
    iof_json_key(&b, "agents");
    iof_json_open(&b, '[');
    for (size_t i = 0; i < sv->nseen; i++) {
        const struct serve_seen *s = order[i];
        iof_json_open(&b, '{');
        iof_json_key(&b, "name");
        iof_json_escape(&b, s->name, IOF_JSON_TEXT);
        iof_json_key(&b, "status");
        iof_json_str(&b, s->status == SERVE_CONNECTED ? "connected" : "disconnected");
        iof_json_key(&b, "endpoint");
        iof_json_escape(&b, s->endpoint, IOF_JSON_TEXT);
        iof_json_key(&b, "certificate");
        if (s->tls)
            iof_json_escape(&b, s->name, IOF_JSON_TEXT);
        else
            iof_json_null(&b);
        iof_json_key(&b, "connected_at");
        mgr_store_json_time(&b, (int64_t)s->connected_ns);
        iof_json_key(&b, "disconnected_at");
        if (s->status == SERVE_LEFT)
            mgr_store_json_time(&b, (int64_t)s->left_ns);
        else
            iof_json_null(&b);
        iof_json_key(&b, "reason");
        iof_json_escape(&b, s->status == SERVE_LEFT ? s->why : NULL, IOF_JSON_TEXT);
        iof_json_key(&b, "hello");
        if (s->hello)
            iof_json_raw(&b, s->hello, strlen(s->hello));
        else
            iof_json_null(&b);
        iof_json_close(&b, '}');
    }
    iof_json_close(&b, ']');
    iof_json_close(&b, '}');
    iof_buf_addstr(&b, "\n");
    iof_buf_init(&html, SERVE_MAX_JSON);
    for (size_t i = 0; i < sv->nseen; i++) {
        const struct serve_seen *s = order[i];
        bool up = s->status == SERVE_CONNECTED;
        mgr_console_agent_row(&html, s->name, up ? "connected" : "disconnected", up,
                              s->tls ? s->name : NULL, s->connected_ns, s->left_ns, s->cpus,
                              s->memory, s->disks, s->software, up ? s->endpoint : s->why);
    }
    free(order);
    if (!(text = iof_buf_take(&b, &len))) {
        IOF_WARN("serve: out of memory for the agent list");
        iof_buf_free(&html);
        return;
    }
    mgr_serve_live_agents(sv->console, text, len, html.err ? NULL : iof_buf_str(&html));
    iof_buf_free(&html);
    mgr_api_set_agents(sv->api, text, len);
}

static struct serve_seen *serve_find(struct serve *sv, const char *name)
{
    for (size_t i = 0; i < sv->nseen; i++)
        if (!strcmp(sv->seen[i].name, name))
            return &sv->seen[i];
    return NULL;
}

static void serve_forget(struct serve *sv, size_t i)
{
    free(sv->seen[i].hello);
    sv->seen[i] = sv->seen[--sv->nseen];
}

/* A record for name: its own, a new one, or the longest gone one's; NULL
 * when every record is a connected agent. */
static struct serve_seen *serve_record(struct serve *sv, const char *name)
{
    struct serve_seen *s = serve_find(sv, name);
    size_t oldest = SIZE_MAX;

    if (s)
        return s;
    if (sv->nseen == MGR_SERVE_MAX_SEEN) {
        for (size_t i = 0; i < sv->nseen; i++)
            if (sv->seen[i].status == SERVE_LEFT &&
                (oldest == SIZE_MAX || sv->seen[i].left_ns < sv->seen[oldest].left_ns))
                oldest = i;
        if (oldest == SIZE_MAX)
            return NULL;
        serve_forget(sv, oldest);
    }
    s = &sv->seen[sv->nseen++];
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    return s;
}

/* s is agent a, connected now. */
static void serve_connected(struct serve_seen *s, struct mgr_agent *a)
{
    free(s->hello);
    s->hello = serve_hello_json(a->endpoint, &a->info);
    s->cpus = a->info.inventory.cpus;
    s->memory = a->info.inventory.memory_bytes;
    snprintf(s->software, sizeof(s->software), "%s", a->info.software ? a->info.software : "");
    mgr_console_disks(&a->info.inventory, s->disks, sizeof(s->disks));
    snprintf(s->endpoint, sizeof(s->endpoint), "%s", a->endpoint);
    s->tls = a->link && proto_link_is_tls(a->link);
    s->status = SERVE_CONNECTED;
    s->a = a;
    s->why[0] = '\0';
    s->connected_ns = iof_wall_ns();
}

/* During a run the agents' callbacks are the run's: the list follows their
 * sessions instead, on serve's tick. An agent listed as connected whose
 * session is no longer up has left (why: its own); one whose session is up
 * and that is not listed has come (a rejoin). */
static void serve_sync(struct serve *sv)
{
    unsigned char *listed;
    bool changed = false;

    for (size_t i = 0; i < sv->nseen; i++) {
        struct serve_seen *s = &sv->seen[i];
        if (s->status != SERVE_CONNECTED ||
            (s->a && mgr_session_is_up(mgr_agent_state(s->a)) && !strcmp(s->a->name, s->name)))
            continue;
        s->status = SERVE_LEFT;
        s->left_ns = iof_wall_ns();
        snprintf(s->why, sizeof(s->why), "%s",
                 s->a && s->a->why[0] ? s->a->why : "connection closed during a run");
        s->a = NULL;
        changed = true;
    }
    /* The agents already listed as connected, by slot: only the others are
     * looked up by name (a linear search: once per agent, not per tick). */
    listed = sv->f.nagents ? calloc(sv->f.nagents, 1) : NULL;
    for (size_t i = 0; listed && i < sv->nseen; i++)
        if (sv->seen[i].status == SERVE_CONNECTED && sv->seen[i].a &&
            (size_t)(sv->seen[i].a - sv->f.agents) < sv->f.nagents)
            listed[sv->seen[i].a - sv->f.agents] = 1;
    for (size_t i = 0; i < sv->f.nagents; i++) {
        struct mgr_agent *a = &sv->f.agents[i];
        struct serve_seen *s;
        if (!a->name[0] || !mgr_session_is_up(mgr_agent_state(a)) || (listed && listed[i]))
            continue;
        s = serve_find(sv, a->name);
        if (s && s->status == SERVE_CONNECTED)
            continue;
        if (!(s = serve_record(sv, a->name)))
            continue;
        serve_connected(s, a);
        changed = true;
    }
    free(listed);
    if (changed)
        serve_publish(sv);
}

/* --- the agents' connections (manager/agent_conn.h) ---------------------------------------- */

static bool sv_admit(void *run, struct mgr_agent *a)
{
    (void)run;
    (void)a;
    return true;
}

/* One agent per name, as in a run; and room to list it. */
static int sv_on_hello(void *run, struct mgr_agent *a, char *why, size_t cap)
{
    struct serve *sv = run;
    bool room = sv->nseen < MGR_SERVE_MAX_SEEN || serve_find(sv, a->name);

    for (size_t i = 0; i < sv->f.nagents; i++) {
        enum mgr_session_state o = mgr_agent_state(&sv->f.agents[i]);
        if (&sv->f.agents[i] != a && (o == MGR_SESSION_HELLO || mgr_session_is_up(o)) &&
            !strcmp(sv->f.agents[i].name, a->name)) {
            snprintf(why, cap, "another agent already uses the name '%s'", a->name);
            return -1;
        }
    }
    for (size_t i = 0; i < sv->nseen && !room; i++)
        room = sv->seen[i].status == SERVE_LEFT;
    if (!room) {
        snprintf(why, cap, "this manager has %d agents connected already", MGR_SERVE_MAX_SEEN);
        return -1;
    }
    return 0;
}

static void sv_on_welcome(void *run, struct mgr_agent *a, bool back)
{
    struct serve *sv = run;
    struct serve_seen *s = serve_record(sv, a->name);

    (void)back;
    if (!s) { /* filled by others between its hello and its welcome */
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 1, "this manager has %d agents connected already",
                       MGR_SERVE_MAX_SEEN);
        return;
    }
    serve_connected(s, a);
    IOF_USER("iofleet serve: agent %s (%s) connected: dynamo %s, %u CPUs", a->name, a->endpoint,
             a->info.software ? a->info.software : "?", a->info.inventory.cpus);
    serve_publish(sv);
}

/* An agent sends nothing unasked between runs: any of these is a breach. */
static void sv_on_error(void *run, struct mgr_agent *a, const struct proto_error *e)
{
    (void)run;
    mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 1, "refused: %s", e->message);
}

static void sv_unexpected(struct mgr_agent *a, const char *what)
{
    mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 1, "unexpected %s: no run is under way", what);
}

static void sv_on_prepared(void *run, struct mgr_agent *a, const struct proto_prepared *p)
{
    (void)run;
    (void)p;
    sv_unexpected(a, "prepared");
}

static void sv_on_ready(void *run, struct mgr_agent *a, const struct proto_ready *r)
{
    (void)run;
    (void)r;
    sv_unexpected(a, "ready");
}

static void sv_on_clock_reply(void *run, struct mgr_agent *a, const struct proto_clock_reply *r)
{
    (void)run;
    (void)r;
    sv_unexpected(a, "clock reply");
}

static void sv_on_stats(void *run, struct mgr_agent *a, const struct proto_stats *st)
{
    (void)run;
    (void)st;
    sv_unexpected(a, "stats");
}

static void sv_on_result(void *run, struct mgr_agent *a, const struct proto_stats *st)
{
    (void)run;
    (void)st;
    sv_unexpected(a, "result");
}

static void sv_on_verify_progress(void *run, struct mgr_agent *a,
                                  const struct proto_prepare_progress *p)
{
    (void)run;
    (void)p;
    sv_unexpected(a, "verify progress");
}

/* Nothing is dialled: never called. */
static void sv_on_unanswered(void *run, struct mgr_agent *a, int err)
{
    (void)run;
    (void)a;
    (void)err;
}

static void sv_on_unreachable(void *run, struct mgr_agent *a)
{
    (void)run;
    (void)a;
}

/* Its link closed: a welcomed agent is listed as gone, with why; its slot
 * is freed for the next connection. */
static void sv_on_lost(void *run, struct mgr_agent *a)
{
    struct serve *sv = run;
    struct serve_seen *s = a->name[0] ? serve_find(sv, a->name) : NULL;

    if (s && s->a == a) {
        s->status = SERVE_LEFT;
        s->a = NULL;
        s->left_ns = iof_wall_ns();
        snprintf(s->why, sizeof(s->why), "%s", a->why[0] ? a->why : "connection closed");
        serve_publish(sv);
    }
    if (!a->link &&
        (mgr_agent_state(a) == MGR_SESSION_LOST || mgr_agent_state(a) == MGR_SESSION_FAILED))
        mgr_agent_fire(a, MGR_SESSION_EV_DROP);
}

static const struct mgr_agent_ops sv_agent_ops = {
    .admit = sv_admit,
    .on_hello = sv_on_hello,
    .on_welcome = sv_on_welcome,
    .on_error = sv_on_error,
    .on_prepared = sv_on_prepared,
    .on_ready = sv_on_ready,
    .on_clock_reply = sv_on_clock_reply,
    .on_stats = sv_on_stats,
    .on_result = sv_on_result,
    .on_verify_progress = sv_on_verify_progress,
    .on_unanswered = sv_on_unanswered,
    .on_unreachable = sv_on_unreachable,
    .on_lost = sv_on_lost,
};

/* --- the loop ---------------------------------------------------------------------------- */

static void sv_on_tick(uv_timer_t *t)
{
    struct serve *sv = t->data;
    uint64_t now;
    bool changed = false;

    if (mgr_serve_runs_busy(sv->runs))
        serve_sync(sv);
    now = iof_wall_ns(); /* after the sync: no left_ns is later */
    for (size_t i = sv->nseen; i-- > 0;)
        if (sv->seen[i].status == SERVE_LEFT &&
            now - sv->seen[i].left_ns > (uint64_t)MGR_SERVE_SEEN_S * IOF_NS_PER_S) {
            serve_forget(sv, i);
            changed = true;
        }
    if (changed)
        serve_publish(sv);
}

static void sv_close_handle(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h))
        uv_close(h, NULL);
}

/* Stops accepting, says bye to every agent and closes every handle: the
 * loop ends once the last link has closed. */
static void sv_stop(struct serve *sv)
{
    if (sv->stopping)
        return;
    sv->stopping = true;
    mgr_serve_runs_close(sv->runs);
    sv->f.stage = MGR_FLEET_OVER;
    for (size_t i = 0; i < sv->f.nagents; i++) {
        struct mgr_agent *a = &sv->f.agents[i];
        uv_timer_stop(&a->retry);
        sv_close_handle((uv_handle_t *)&a->retry);
        if (a->link) {
            sv->told_bye += mgr_session_is_up(mgr_agent_state(a));
            proto_link_close(a->link, 0, "manager stopping");
        }
    }
    if (sv->listener) {
        iof_listener_close(sv->listener);
        sv->listener = NULL;
    }
    sv_close_handle((uv_handle_t *)&sv->tick);
    sv_close_handle((uv_handle_t *)&sv->sigint);
    sv_close_handle((uv_handle_t *)&sv->sigterm);
    sv_close_handle((uv_handle_t *)&sv->sighup);
}

/* After a run (manager/serve_run.h): its agents were told bye and dial
 * back; each is listed as gone until it does, and its slot is freed once
 * its link has closed. */
static void sv_after_run(void *arg, int64_t id)
{
    struct serve *sv = arg;
    uint64_t now = iof_wall_ns();
    char why[160];

    snprintf(why, sizeof(why), "told bye at the end of run %" PRId64 " (an agent dials back)", id);
    for (size_t i = 0; i < sv->nseen; i++) {
        struct serve_seen *s = &sv->seen[i];
        if (s->status != SERVE_CONNECTED)
            continue;
        s->status = SERVE_LEFT;
        s->a = NULL;
        s->left_ns = now;
        snprintf(s->why, sizeof(s->why), "%s", why);
    }
    for (size_t i = 0; i < sv->f.nagents; i++) {
        struct mgr_agent *a = &sv->f.agents[i];
        if (mgr_session_is_up(mgr_agent_state(a))) {
            snprintf(a->why, sizeof(a->why), "%s", why);
            mgr_agent_fire(a, MGR_SESSION_EV_LOST);
            if (a->link)
                proto_link_close(a->link, 0, "run finished");
        }
        if (!a->link &&
            (mgr_agent_state(a) == MGR_SESSION_LOST || mgr_agent_state(a) == MGR_SESSION_FAILED))
            mgr_agent_fire(a, MGR_SESSION_EV_DROP);
    }
    serve_publish(sv);
    if (sv->stop_after_run)
        sv_stop(sv);
}

/* A run under way is interrupted first (a second signal: without waiting
 * for its results), and recorded; serve stops at its end. */
static void sv_on_signal(uv_signal_t *h, int sig)
{
    struct serve *sv = h->data;

    sv->signals++;
    if (mgr_serve_runs_busy(sv->runs)) {
        IOF_USER("iofleet serve: %s: stopping after the run under way",
                 sig == SIGINT ? "interrupted" : "terminated");
        sv->stop_after_run = true;
        mgr_serve_runs_close(sv->runs);
        mgr_serve_runs_interrupt(sv->runs, sv->signals > 1);
        return;
    }
    IOF_USER("iofleet serve: %s: stopping", sig == SIGINT ? "interrupted" : "terminated");
    sv_stop(sv);
}

/* SIGHUP: the API's tokens file read again (manager/api_auth.h). */
static void sv_on_hup(uv_signal_t *h, int sig)
{
    struct serve *sv = h->data;

    (void)sig;
    IOF_USER("iofleet serve: SIGHUP: reading the tokens file again");
    mgr_api_reload_tokens(sv->api);
}

static unsigned sv_console_last(void *arg, struct iof_buf *b, char *msg, size_t cap)
{
    return mgr_serve_live_last(arg, b, msg, cap);
}

static struct MHD_Response *sv_console_events(void *arg, const char *after,
                                              const struct mgr_api_gate *gate)
{
    return mgr_serve_live_events(arg, after, gate);
}

static unsigned sv_console_get(void *arg, const char *url, struct iof_buf *b, const char **type)
{
    return mgr_console_get(arg, url, b, type);
}

static int sv_start(struct serve *sv)
{
    const struct mgr_serve_opts *o = sv->o;
    struct iof_diag d = {{0}};
    char host[256] = "";
    uint16_t port = 0;
    int rc;

    if (!o->tls_ca && !o->insecure) {
        IOF_USER("iofleet serve: --listen %s: plain TCP authenticates nobody (loopback included: "
                 "any local user could pose as an agent); use TLS (--tls-ca, --tls-cert, "
                 "--tls-key or --pki), or --insecure here and on the agents",
                 o->listen);
        return 3;
    }
    if (o->tls_ca &&
        iof_tls_config_load(NULL, o->tls_ca, o->tls_cert, o->tls_key, true, &sv->tls_server, &d)) {
        IOF_USER("iofleet serve: %s", d.msg);
        return 2;
    }
    if (iof_addr_parse(o->listen, host, sizeof(host), IOF_DEFAULT_PORT, &port, &d)) {
        IOF_USER("iofleet serve: --listen %s: %s", o->listen, d.msg);
        return 2;
    }
    {
        /* An explicit --db must work, as for iofleet run: checked (and
         * created) now, not at the first request. */
        struct mgr_store *st;
        if (mgr_store_open(o->db, &st, &d)) {
            IOF_USER("iofleet serve: --db %s", d.msg);
            return 2;
        }
        mgr_store_close(st);
    }
    { /* the plan library's folder: made now, as --db is */
        struct stat st;
        if (mkdir(o->plans, 0700) && errno != EEXIST) {
            IOF_USER("iofleet serve: --plans %s: %s", o->plans, strerror(errno));
            return 2;
        }
        if (stat(o->plans, &st) || !S_ISDIR(st.st_mode)) {
            IOF_USER("iofleet serve: --plans %s: not a directory", o->plans);
            return 2;
        }
    }
    {
        struct mgr_serve_runs_cfg rc_cfg = {.loop = sv->loop,
                                            .fleet = &sv->f,
                                            .db = o->db,
                                            .live = sv->console,
                                            .verbose = o->verbose,
                                            .after = sv_after_run,
                                            .arg = sv};
        if (mgr_serve_runs_new(&rc_cfg, &sv->runs)) {
            IOF_USER("iofleet serve: out of memory");
            return 1;
        }
    }
    if ((rc = mgr_api_open(o->http, o->db, &o->http_auth, &sv->api, &d))) {
        IOF_USER("iofleet serve: %s", d.msg);
        return rc == -EINVAL || rc == -EACCES ? 2 : 3; /* a wrong value, or a taken port */
    }
    mgr_api_set_runs(sv->api, mgr_serve_runs_ops(sv->runs));
    if (mgr_api_set_plans(sv->api, o->plans, o->configs)) {
        IOF_USER("iofleet serve: out of memory");
        return 1;
    }
    { /* before the page can be asked for */
        char why[512];
        if (mgr_console_chartjs(sv->console, why, sizeof(why)))
            IOF_WARN("iofleet serve: the console draws no chart: %s", why);
    }
    sv->console_ops = (struct mgr_api_console_ops){.last = sv_console_last,
                                                   .events = sv_console_events,
                                                   .get = sv_console_get,
                                                   .arg = sv->console};
    mgr_api_set_console(sv->api, &sv->console_ops);
    serve_publish(sv);
    if (sv->tls_server
            ? iof_listener_start_tls(sv->loop, host, port, sv->tls_server, mgr_agent_on_accept,
                                     mgr_agent_on_reject, &sv->f, &sv->listener, &d)
            : iof_listener_start(sv->loop, host, port, mgr_agent_on_accept, &sv->f, &sv->listener,
                                 &d)) {
        IOF_USER("iofleet serve: %s", d.msg);
        return 3;
    }
    IOF_USER("iofleet serve: API on %sapi/v1/ (docs/api.md), console on %s; agents on %s:%u (%s)",
             mgr_api_url(sv->api), mgr_api_url(sv->api), host[0] ? host : "*",
             iof_listener_port(sv->listener), sv->tls_server ? "TLS" : "plain TCP, --insecure");
    return 0;
}

int mgr_serve(const struct mgr_serve_opts *o)
{
    struct serve *sv = calloc(1, sizeof(*sv));
    int rc;

    if (!sv || !(sv->seen = calloc(MGR_SERVE_MAX_SEEN, sizeof(*sv->seen))) ||
        !(sv->f.agents = calloc(MGR_SERVE_MAX_AGENTS, sizeof(*sv->f.agents))) ||
        mgr_serve_live_new(&sv->console)) {
        IOF_USER("iofleet serve: out of memory");
        if (sv) {
            free(sv->seen);
            free(sv->f.agents);
        }
        free(sv);
        return 1;
    }
    sv->o = o;
    sv->loop = uv_default_loop();
    mgr_live_init(&sv->live, true);
    sv->f.capagents = MGR_SERVE_MAX_AGENTS;
    sv->f.loop = sv->loop;
    sv->f.ops = &sv_agent_ops;
    sv->f.run = sv;
    sv->f.live = &sv->live;
    sv->f.rc = &sv->rc;
    sv->f.heartbeat_ms = o->heartbeat_ms;
    sv->f.insecure = o->insecure;
    sv->f.verbose = o->verbose;
    sv->f.quiet = true;
    /* Agents come and go at any time, as after a run's start: one whose
     * link closes is lost (its slot then freed), not failed. */
    sv->f.stage = MGR_FLEET_STARTED;
    rc = sv_start(sv);
    if (rc == 0) {
        uv_timer_init(sv->loop, &sv->tick);
        sv->tick.data = sv;
        uv_timer_start(&sv->tick, sv_on_tick, SERVE_TICK_MS, SERVE_TICK_MS);
        uv_signal_init(sv->loop, &sv->sigint);
        uv_signal_init(sv->loop, &sv->sigterm);
        sv->sigint.data = sv;
        sv->sigterm.data = sv;
        uv_signal_start(&sv->sigint, sv_on_signal, SIGINT);
        uv_signal_start(&sv->sigterm, sv_on_signal, SIGTERM);
        uv_signal_init(sv->loop, &sv->sighup);
        sv->sighup.data = sv;
        uv_signal_start(&sv->sighup, sv_on_hup, SIGHUP);
    } else {
        sv_stop(sv);
    }
    iof_net_run_coalesced(sv->loop, MGR_COALESCE_MS);
    uv_loop_close(sv->loop);
    if (rc == 0)
        IOF_USER("iofleet serve: stopped; %u agent%s told bye", sv->told_bye,
                 sv->told_bye == 1 ? "" : "s");
    mgr_serve_live_close(sv->console); /* event streams end */
    mgr_api_close(sv->api);
    if (sv->console) {
        struct mgr_serve_live_stats st;
        mgr_serve_live_stats(sv->console, &st);
        if (st.skipped)
            IOF_INFO("iofleet serve: %llu of %llu events skipped by event streams too far "
                     "behind (docs/api.md, GET /api/v1/events)",
                     (unsigned long long)st.skipped, (unsigned long long)st.events);
    }
    mgr_serve_live_free(sv->console);
    mgr_serve_runs_free(sv->runs);
    iof_tls_ctx_free(sv->tls_server);
    for (size_t i = 0; i < sv->f.nagents; i++) {
        mgr_session_detach(&sv->f.agents[i].s);
        mgr_agg_node_free(&sv->f.agents[i].agg);
        proto_hello_free(&sv->f.agents[i].info);
        free(sv->f.agents[i].base_iops);
        free(sv->f.agents[i].rates);
    }
    for (size_t i = 0; i < sv->nseen; i++)
        free(sv->seen[i].hello);
    free(sv->seen);
    free(sv->f.agents);
    free(sv);
    return rc;
}
