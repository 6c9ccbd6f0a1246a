/* SPDX-License-Identifier: Apache-2.0 */
/* manager/serve_live.c - the console's state of `iofleet serve` and its
 * Server-Sent Events (manager/serve_live.h): a sink records the run's
 * intervals and ended tests, serve publishes the agents list; both append
 * typed events to a ring under one lock. Each stream's thread renders the
 * events it has not sent from the ring, so the loop never waits for one.
 */
#include "manager/serve_live.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/hist.h"
#include "common/jsonw.h"
#include "manager/serve_live_int.h"
#include "manager/sink.h"

#define LIVE_MAX_EVENT (8u << 20) /* one rendered event or state */
#define LIVE_RETRY_MS 2000        /* the browser's reconnect delay */
#define LIVE_KEEPALIVE_S 10       /* a comment line when nothing happened */

const char *const mgr_live_fig_names[LF_N] = {
    "iops",   "read_iops",   "write_iops",   "mibps",  "read_mibps",  "write_mibps",
    "avg_ms", "read_avg_ms", "write_avg_ms", "p99_ms", "read_p99_ms", "write_p99_ms",
};
static const char *const live_ev_names[] = {"agents", "run", "interval", "test", "end"};

/* --- recording (loop thread, lock held) ------------------------------------------------------- */

static void live_emit(struct mgr_serve_live *l, struct live_ev ev)
{
    ev.run = ev.run ? ev.run : l->id;
    l->seq++;
    l->ev[l->seq % MGR_LIVE_EVENTS] = ev;
    pthread_cond_broadcast(&l->cv);
}

static double live_p99(const struct iof_hist *h)
{
    if (!h->count || !iof_hist_has_buckets(h))
        return NAN;
    return (double)iof_hist_percentile(h, 0.99) / 1e6;
}

static void live_figs_of(const struct mgr_metrics *m, const struct iof_stats *s,
                         struct live_figs *f)
{
    for (size_t i = 0; i < LF_N; i++)
        f->v[i] = NAN;
    if (!m)
        return;
    if (m->rates) {
        f->v[LF_IOPS] = m->iops;
        f->v[LF_READ_IOPS] = m->read_iops;
        f->v[LF_WRITE_IOPS] = m->write_iops;
        f->v[LF_MIBPS] = m->mibps;
        f->v[LF_READ_MIBPS] = m->read_mibps;
        f->v[LF_WRITE_MIBPS] = m->write_mibps;
    }
    f->v[LF_AVG_MS] = m->avg_ms;
    if (s) {
        f->v[LF_READ_AVG_MS] = s->rd.lat.count ? m->avg_read_ms : NAN;
        f->v[LF_WRITE_AVG_MS] = s->wr.lat.count ? m->avg_write_ms : NAN;
        f->v[LF_READ_P99_MS] = live_p99(&s->rd.lat);
        f->v[LF_WRITE_P99_MS] = live_p99(&s->wr.lat);
    }
    if (m->percentiles)
        f->v[LF_P99_MS] = m->p99_ms;
}

/* The index of node name + 1 (0 when there is no memory for it). */
static uint32_t live_node(struct mgr_serve_live *l, const char *name)
{
    for (size_t i = 0; i < l->nnames; i++)
        if (!strcmp(l->names[i], name))
            return (uint32_t)i + 1;
    if (iof_array_grow((void **)&l->names, &l->capnames, l->nnames + 1, sizeof(*l->names)))
        return 0;
    snprintf(l->names[l->nnames], sizeof(l->names[0]), "%s", name);
    return (uint32_t)++l->nnames;
}

static void live_tests_free(struct mgr_serve_live *l)
{
    for (size_t i = 0; i < l->ndone; i++)
        free(l->tests[i].rows);
    l->ndone = 0;
    free(l->row_test.rows);
    memset(&l->row_test, 0, sizeof(l->row_test));
}

/* A sink's state: the run it records. */
struct live_sink {
    struct mgr_serve_live *l;
    int64_t id;
    bool ended; /* run_end came, with exit_code */
    int exit_code;
};

static struct mgr_serve_live *live_of(struct mgr_sink *s, int64_t *id)
{
    struct live_sink *ls = s->priv;
    *id = ls->id;
    return ls->l;
}

static void live_run_begin(struct mgr_sink *s, const struct mgr_run_info *ri)
{
    int64_t id;
    struct mgr_serve_live *l = live_of(s, &id);
    size_t n = 0;
    struct iof_test *tests = iof_plan_expand(ri->plan, &n);
    bool expanded = tests != NULL;

    free(tests);
    pthread_mutex_lock(&l->mu);
    live_tests_free(l);
    l->id = id;
    snprintf(l->plan, sizeof(l->plan), "%s", ri->plan->name);
    l->running = true;
    l->stopping = false;
    l->exit_code = 0;
    l->start_wall_ns = ri->start_wall_ns;
    l->end_wall_ns = 0;
    l->ntests = expanded ? n : 0;
    l->cur = 0;
    l->spec[0] = l->cycle[0] = '\0';
    l->nnames = 0;
    l->nspecs = 0;
    for (size_t i = 0; i < ri->nagents; i++)
        live_node(l, ri->agents[i].name);
    l->run_pt0 = l->pending = l->npts;
    live_emit(l, (struct live_ev){.type = LEV_RUN});
    pthread_mutex_unlock(&l->mu);
}

static void live_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    int64_t id;
    struct mgr_serve_live *l = live_of(s, &id);

    pthread_mutex_lock(&l->mu);
    l->cur = ti->test->index + 1;
    if (ti->ntests > l->ntests)
        l->ntests = ti->ntests;
    snprintf(l->spec, sizeof(l->spec), "%s", ti->spec);
    snprintf(l->cycle, sizeof(l->cycle), "%s", ti->cycle ? ti->cycle : "");
    if (l->cur <= l->nspecs ||
        !iof_array_grow((void **)&l->specs, &l->capspecs, l->cur, sizeof(*l->specs))) {
        for (; l->nspecs < l->cur; l->nspecs++)
            memset(&l->specs[l->nspecs], 0, sizeof(l->specs[0]));
        snprintf(l->specs[l->cur - 1].spec, sizeof(l->specs[0].spec), "%s", l->spec);
        snprintf(l->specs[l->cur - 1].cycle, sizeof(l->specs[0].cycle), "%s", l->cycle);
    }
    pthread_mutex_unlock(&l->mu);
}

/* Each node's interval is kept as it comes; ALL's closes the interval
 * (the nodes' come first) and makes its event. */
static void live_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    int64_t id;
    struct mgr_serve_live *l = live_of(s, &id);
    struct live_point p = {
        .test = (uint32_t)(iv->test->test->index + 1), .k = iv->k, .t = iv->time_s};

    if (iv->node && iv->lost)
        return;
    if (!iv->node && iv->late) {
        /* ALL of one node's late report, right after that node's: not
         * the cluster's figure. The node's point is dropped too (a gap in
         * its line), not added to the next interval. */
        pthread_mutex_lock(&l->mu);
        if (l->npts > l->pending)
            l->npts--;
        pthread_mutex_unlock(&l->mu);
        return;
    }
    live_figs_of(iv->m, iv->stats, &p.f);
    pthread_mutex_lock(&l->mu);
    if (iv->node && !(p.node = live_node(l, iv->node))) {
        pthread_mutex_unlock(&l->mu);
        return;
    }
    l->pts[l->npts % MGR_LIVE_POINTS] = p;
    l->npts++;
    if (!iv->node) {
        live_emit(l, (struct live_ev){.type = LEV_INTERVAL,
                                      .pt_first = l->pending,
                                      .npt = (uint32_t)(l->npts - l->pending)});
        l->pending = l->npts;
    }
    pthread_mutex_unlock(&l->mu);
}

static void live_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    int64_t id;
    struct mgr_serve_live *l = live_of(s, &id);
    struct live_test *t = &l->row_test;
    struct live_row row = {.status = r->status};

    (void)ti;
    if (r->type != MGR_ROW_NODE || !r->node)
        return;
    live_figs_of(r->status == MGR_STATUS_ABSENT ? NULL : r->m, r->stats, &row.f);
    pthread_mutex_lock(&l->mu);
    if ((row.node = live_node(l, r->node)) &&
        !iof_array_grow((void **)&t->rows, &t->caprows, t->nrows + 1, sizeof(*t->rows)))
        t->rows[t->nrows++] = row;
    pthread_mutex_unlock(&l->mu);
}

static void live_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    int64_t id;
    struct mgr_serve_live *l = live_of(s, &id);
    struct live_test *t;

    pthread_mutex_lock(&l->mu);
    if (iof_array_grow((void **)&l->tests, &l->capdone, l->ndone + 1, sizeof(*l->tests))) {
        pthread_mutex_unlock(&l->mu);
        return;
    }
    t = &l->tests[l->ndone];
    *t = l->row_test; /* the rows move with it */
    memset(&l->row_test, 0, sizeof(l->row_test));
    t->index = te->test->test->index + 1;
    snprintf(t->spec, sizeof(t->spec), "%s", te->test->spec);
    snprintf(t->cycle, sizeof(t->cycle), "%s", te->test->cycle ? te->test->cycle : "");
    t->status = te->status;
    t->nodes = te->nodes;
    t->lost = te->lost;
    live_figs_of(te->all ? te->all->m : NULL, te->all ? te->all->stats : NULL, &t->all);
    live_emit(l, (struct live_ev){.type = LEV_TEST, .test = l->ndone++});
    pthread_mutex_unlock(&l->mu);
}

/* The run's end waits for the sink's close (after the run history's
 * record is complete), so a client told of it finds it in the history. */
static void live_run_end(struct mgr_sink *s, int exit_code)
{
    struct live_sink *ls = s->priv;

    ls->ended = true;
    ls->exit_code = exit_code;
}

static void live_sink_close(struct mgr_sink *s)
{
    struct live_sink *ls = s->priv;
    struct mgr_serve_live *l = ls->l;

    pthread_mutex_lock(&l->mu);
    if (ls->ended && l->id == ls->id && l->running) {
        l->running = false;
        l->exit_code = ls->exit_code;
        l->end_wall_ns = iof_wall_ns();
        live_emit(l, (struct live_ev){.type = LEV_END, .exit_code = ls->exit_code});
    }
    pthread_mutex_unlock(&l->mu);
    free(ls);
    s->priv = NULL;
}

static const struct mgr_sink_ops live_sink_ops = {
    .name = "console",
    .run_begin = live_run_begin,
    .test_begin = live_test_begin,
    .interval = live_interval,
    .row = live_row,
    .test_end = live_test_end,
    .run_end = live_run_end,
    .close = live_sink_close,
};

/* --- rendering (lock held) ------------------------------------------------------------------ */

/* "ok", "interrupted", "failed", as `iofleet runs` counts exit codes. */
static const char *live_status(int exit_code)
{
    return exit_code == 0 ? "ok" : exit_code == 130 ? "interrupted" : "failed";
}

static void live_json_figs(struct iof_buf *b, const struct live_figs *f)
{
    for (size_t i = 0; i < LF_N; i++) {
        iof_json_key(b, mgr_live_fig_names[i]);
        iof_json_dbl(b, f->v[i]); /* null when not finite */
    }
}

static const char *live_name(const struct mgr_serve_live *l, uint32_t node)
{
    return node && node <= l->nnames ? l->names[node - 1] : "ALL";
}

static void live_json_time(struct iof_buf *b, uint64_t wall_ns)
{
    char ts[40];
    time_t sec = (time_t)(wall_ns / IOF_NS_PER_S);
    struct tm tm;

    if (!wall_ns || !gmtime_r(&sec, &tm)) {
        iof_json_null(b);
        return;
    }
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    iof_json_str(b, ts);
}

/* Whether point i is still in the ring and of the last run. */
static bool live_pt_kept(const struct mgr_serve_live *l, uint64_t i)
{
    return i >= l->run_pt0 && i < l->npts && i + MGR_LIVE_POINTS >= l->npts;
}

/* {"test":..,"k":..,"t":..,"all":{..},"nodes":[{"name":..,..}]}: points
 * [first, first + n), ALL last. */
static void live_json_interval(struct iof_buf *b, const struct mgr_serve_live *l, uint64_t first,
                               uint32_t n, bool with_run)
{
    const struct live_point *all = &l->pts[(first + n - 1) % MGR_LIVE_POINTS];

    iof_json_open(b, '{');
    if (with_run) {
        iof_json_key(b, "id");
        iof_json_u64(b, (uint64_t)l->id);
    }
    iof_json_key(b, "test");
    iof_json_u64(b, all->test);
    iof_json_key(b, "spec");
    iof_json_escape(b, all->test && all->test <= l->nspecs ? l->specs[all->test - 1].spec : NULL,
                    IOF_JSON_TEXT | IOF_JSON_SCRIPT);
    iof_json_key(b, "cycle");
    iof_json_escape(b, all->test && all->test <= l->nspecs ? l->specs[all->test - 1].cycle : NULL,
                    IOF_JSON_TEXT | IOF_JSON_SCRIPT);
    iof_json_key(b, "k");
    iof_json_u64(b, all->k);
    iof_json_key(b, "t");
    iof_json_dbl(b, all->t);
    iof_json_key(b, "all");
    iof_json_open(b, '{');
    live_json_figs(b, &all->f);
    iof_json_close(b, '}');
    iof_json_key(b, "nodes");
    iof_json_open(b, '[');
    for (uint64_t i = first; i + 1 < first + n; i++) {
        const struct live_point *p = &l->pts[i % MGR_LIVE_POINTS];
        iof_json_open(b, '{');
        iof_json_key(b, "name");
        iof_json_escape(b, live_name(l, p->node), IOF_JSON_TEXT | IOF_JSON_SCRIPT);
        live_json_figs(b, &p->f);
        iof_json_close(b, '}');
    }
    iof_json_close(b, ']');
    iof_json_close(b, '}');
}

static void live_json_test(struct iof_buf *b, const struct mgr_serve_live *l,
                           const struct live_test *t, bool with_run)
{
    iof_json_open(b, '{');
    if (with_run) {
        iof_json_key(b, "id");
        iof_json_u64(b, (uint64_t)l->id);
    }
    iof_json_key(b, "index");
    iof_json_u64(b, t->index);
    iof_json_key(b, "spec");
    iof_json_escape(b, t->spec, IOF_JSON_TEXT | IOF_JSON_SCRIPT);
    iof_json_key(b, "cycle");
    iof_json_escape(b, t->cycle, IOF_JSON_TEXT | IOF_JSON_SCRIPT);
    iof_json_key(b, "status");
    iof_json_str(b, mgr_test_status_name(t->status));
    iof_json_key(b, "nodes_reported");
    iof_json_u64(b, t->nodes);
    iof_json_key(b, "nodes_lost");
    iof_json_u64(b, t->lost);
    iof_json_key(b, "all");
    iof_json_open(b, '{');
    live_json_figs(b, &t->all);
    iof_json_close(b, '}');
    iof_json_key(b, "nodes");
    iof_json_open(b, '[');
    for (size_t i = 0; i < t->nrows; i++) {
        iof_json_open(b, '{');
        iof_json_key(b, "name");
        iof_json_escape(b, live_name(l, t->rows[i].node), IOF_JSON_TEXT | IOF_JSON_SCRIPT);
        iof_json_key(b, "status");
        iof_json_str(b, mgr_row_status_name(t->rows[i].status));
        live_json_figs(b, &t->rows[i].f);
        iof_json_close(b, '}');
    }
    iof_json_close(b, ']');
    iof_json_close(b, '}');
}

static void live_json_run_head(struct iof_buf *b, const struct mgr_serve_live *l)
{
    iof_json_key(b, "id");
    iof_json_u64(b, (uint64_t)l->id);
    iof_json_key(b, "plan");
    iof_json_escape(b, l->plan, IOF_JSON_TEXT | IOF_JSON_SCRIPT);
    iof_json_key(b, "state");
    iof_json_str(b, l->running ? "running" : "done");
    iof_json_key(b, "status");
    if (l->running)
        iof_json_null(b);
    else
        iof_json_str(b, live_status(l->exit_code));
    iof_json_key(b, "exit_code");
    if (l->running)
        iof_json_null(b);
    else
        iof_json_int(b, l->exit_code);
    iof_json_key(b, "stopping");
    iof_json_bool(b, l->running && l->stopping);
    iof_json_key(b, "started_at");
    live_json_time(b, l->start_wall_ns);
    iof_json_key(b, "ended_at");
    live_json_time(b, l->running ? 0 : l->end_wall_ns);
    iof_json_key(b, "tests");
    iof_json_u64(b, l->ntests);
    iof_json_key(b, "nodes");
    iof_json_open(b, '[');
    for (size_t i = 0; i < l->nnames; i++) {
        iof_json_sep(b);
        iof_json_escape(b, l->names[i], IOF_JSON_TEXT | IOF_JSON_SCRIPT);
    }
    iof_json_close(b, ']');
}

/* The whole last run: its head, the current test, every interval kept
 * and every ended test. */
void mgr_live_json_run(struct iof_buf *b, const struct mgr_serve_live *l)
{
    uint64_t first = l->run_pt0;

    if (first + MGR_LIVE_POINTS < l->npts)
        first = l->npts - MGR_LIVE_POINTS;
    iof_json_open(b, '{');
    live_json_run_head(b, l);
    iof_json_key(b, "test");
    if (l->cur) {
        iof_json_open(b, '{');
        iof_json_key(b, "index");
        iof_json_u64(b, l->cur);
        iof_json_key(b, "spec");
        iof_json_escape(b, l->spec, IOF_JSON_TEXT | IOF_JSON_SCRIPT);
        iof_json_key(b, "cycle");
        iof_json_escape(b, l->cycle, IOF_JSON_TEXT | IOF_JSON_SCRIPT);
        iof_json_close(b, '}');
    } else {
        iof_json_null(b);
    }
    /* The ring may have cut the first interval kept: some of its nodes are
     * missing. */
    iof_json_key(b, "intervals");
    iof_json_open(b, '[');
    for (uint64_t i = first, start = first; i < l->pending; i++) {
        if (l->pts[i % MGR_LIVE_POINTS].node)
            continue;
        live_json_interval(b, l, start, (uint32_t)(i - start + 1), false);
        start = i + 1;
    }
    iof_json_close(b, ']');
    iof_json_key(b, "finished");
    iof_json_open(b, '[');
    for (size_t i = 0; i < l->ndone; i++)
        live_json_test(b, l, &l->tests[i], false);
    iof_json_close(b, ']');
    iof_json_close(b, '}');
}

/* The data of event seq, into b: false when it cannot be rendered any more
 * (its figures left the ring, or its run is not the last one). */
static bool live_json_event(struct iof_buf *b, const struct mgr_serve_live *l,
                            const struct live_ev *ev)
{
    switch (ev->type) {
    case LEV_AGENTS:
        if (!l->agents)
            return false;
        iof_json_raw(b, l->agents, l->agents_len);
        return true;
    case LEV_RUN:
        if (ev->run != l->id)
            return false;
        iof_json_open(b, '{');
        live_json_run_head(b, l);
        iof_json_close(b, '}');
        return true;
    case LEV_INTERVAL:
        if (ev->run != l->id || !ev->npt || !live_pt_kept(l, ev->pt_first))
            return false;
        live_json_interval(b, l, ev->pt_first, ev->npt, true);
        return true;
    case LEV_TEST:
        if (ev->run != l->id || ev->test >= l->ndone)
            return false;
        live_json_test(b, l, &l->tests[ev->test], true);
        return true;
    case LEV_END:
        iof_json_open(b, '{');
        iof_json_key(b, "id");
        iof_json_u64(b, (uint64_t)ev->run);
        iof_json_key(b, "status");
        iof_json_str(b, live_status(ev->exit_code));
        iof_json_key(b, "exit_code");
        iof_json_int(b, ev->exit_code);
        iof_json_close(b, '}');
        return true;
    }
    return false;
}

/* --- the event stream (an HTTP thread per client) ------------------------------------------- */

struct mgr_serve_live_stream {
    struct mgr_serve_live *l;
    struct mgr_api_gate gate; /* allowed NULL: always */
    uint64_t next;            /* the next event's seq */
    bool greeted;
    struct iof_buf out; /* the event being written, bounded */
    size_t off;
};

/* Lock held: the next thing to send into c->out, or false to wait. */
static bool live_next(struct mgr_serve_live_stream *c)
{
    struct mgr_serve_live *l = c->l;
    uint64_t oldest = l->seq >= MGR_LIVE_EVENTS ? l->seq - MGR_LIVE_EVENTS + 1 : 1;

    iof_buf_reset(&c->out);
    c->off = 0;
    if (!c->greeted) {
        c->greeted = true;
        iof_buf_printf(&c->out, "retry: %u\n\n", LIVE_RETRY_MS);
        return true;
    }
    if (c->next < oldest) { /* too far behind: skip to the oldest kept */
        uint64_t n = oldest - c->next;
        l->skipped += n;
        c->next = oldest;
        iof_buf_printf(&c->out, "event: resync\ndata:{\"skipped\":%" PRIu64 "}\n\n", n);
        return true;
    }
    while (c->next <= l->seq) {
        const struct live_ev *ev = &l->ev[c->next % MGR_LIVE_EVENTS];
        size_t at;
        iof_buf_printf(&c->out, "id: %" PRIu64 "\nevent: %s\ndata:", c->next,
                       live_ev_names[ev->type]);
        at = c->out.len;
        c->next++;
        if (live_json_event(&c->out, l, ev)) {
            /* One data line: the JSON holds no newline but the agents
             * list's last byte. */
            for (size_t i = at; i < c->out.len; i++)
                if (c->out.p[i] == '\n' || c->out.p[i] == '\r')
                    c->out.p[i] = ' ';
            iof_buf_addstr(&c->out, "\n\n");
            return true;
        }
        l->skipped++;
        iof_buf_reset(&c->out);
    }
    return false;
}

ssize_t mgr_serve_live_stream_read(struct mgr_serve_live_stream *c, char *buf, size_t max)
{
    struct mgr_serve_live *l = c->l;

    if (c->off >= c->out.len) {
        struct timespec until, step;
        bool have;

        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += LIVE_KEEPALIVE_S;
        for (;;) { /* a second at a time, the gate asked before each */
            int rc = 0;
            if (c->gate.allowed && !c->gate.allowed(c->gate.arg))
                return MHD_CONTENT_READER_END_OF_STREAM;
            clock_gettime(CLOCK_MONOTONIC, &step);
            step.tv_sec += 1;
            if (step.tv_sec > until.tv_sec ||
                (step.tv_sec == until.tv_sec && step.tv_nsec > until.tv_nsec))
                step = until;
            pthread_mutex_lock(&l->mu);
            while (!(have = live_next(c)) && !l->closed && rc == 0)
                rc = pthread_cond_timedwait(&l->cv, &l->mu, &step);
            if (have || l->closed || (step.tv_sec == until.tv_sec && step.tv_nsec == until.tv_nsec))
                break; /* the lock held */
            pthread_mutex_unlock(&l->mu);
        }
        if (!have && l->closed) {
            pthread_mutex_unlock(&l->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (!have) {
            iof_buf_reset(&c->out);
            c->off = 0;
            iof_buf_addstr(&c->out, ": keep-alive\n\n");
        }
        pthread_mutex_unlock(&l->mu);
        if (c->out.err)
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    return (ssize_t)iof_buf_read(&c->out, &c->off, buf, max);
}

void mgr_serve_live_stream_free(struct mgr_serve_live_stream *c)
{
    if (!c)
        return;
    iof_buf_free(&c->out);
    if (c->gate.free)
        c->gate.free(c->gate.arg);
    free(c);
}

static ssize_t live_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    return mgr_serve_live_stream_read(cls, buf, max);
}

static void live_stream_free(void *cls)
{
    mgr_serve_live_stream_free(cls);
}

struct mgr_serve_live_stream *mgr_serve_live_stream_new(struct mgr_serve_live *l, const char *after,
                                                        const struct mgr_api_gate *gate)
{
    struct mgr_serve_live_stream *c = calloc(1, sizeof(*c));

    if (!c) {
        if (gate && gate->free)
            gate->free(gate->arg);
        return NULL;
    }
    c->l = l;
    if (gate)
        c->gate = *gate;
    iof_buf_init(&c->out, LIVE_MAX_EVENT);
    pthread_mutex_lock(&l->mu);
    c->next = l->seq + 1;
    if (after && *after) {
        char *end;
        unsigned long long v;
        errno = 0;
        v = strtoull(after, &end, 10);
        if (!*end && !errno && *after != '-' && v <= l->seq)
            c->next = v + 1;
    }
    pthread_mutex_unlock(&l->mu);
    return c;
}

struct MHD_Response *mgr_serve_live_events(struct mgr_serve_live *l, const char *after,
                                           const struct mgr_api_gate *gate)
{
    struct mgr_serve_live_stream *c = mgr_serve_live_stream_new(l, after, gate);
    struct MHD_Response *r;

    if (!c)
        return NULL;
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, live_read, c, live_stream_free);
    if (!r) {
        mgr_serve_live_stream_free(c);
        return NULL;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    return r;
}

/* --- the rest ------------------------------------------------------------------------------- */

unsigned mgr_serve_live_last(struct mgr_serve_live *l, struct iof_buf *b, char *msg, size_t cap)
{
    unsigned status = 200;

    pthread_mutex_lock(&l->mu);
    if (!l->id) {
        status = 404;
        snprintf(msg, cap,
                 "no run has begun since this server started (GET /api/v1/runs lists "
                 "the runs of the history)");
    } else {
        mgr_live_json_run(b, l);
        iof_buf_addstr(b, "\n");
    }
    pthread_mutex_unlock(&l->mu);
    if (status == 200 && b->err) {
        snprintf(msg, cap, "out of memory");
        status = 500;
    }
    return status;
}

void mgr_serve_live_snapshot(struct mgr_serve_live *l, struct iof_buf *run, struct iof_buf *agents,
                             uint64_t *seq)
{
    pthread_mutex_lock(&l->mu);
    if (l->id)
        mgr_live_json_run(run, l);
    else
        iof_buf_addstr(run, "null");
    if (l->agents)
        iof_json_raw(agents, l->agents, l->agents_len);
    else
        iof_buf_addstr(agents, "{\"agents\":[]}");
    *seq = l->seq;
    pthread_mutex_unlock(&l->mu);
}

void mgr_serve_live_agents(struct mgr_serve_live *l, const char *json, size_t len, const char *html)
{
    char *copy = malloc(len + 1), *rows = html ? strdup(html) : NULL, *old, *old_rows;

    if (!copy || (html && !rows)) {
        free(copy);
        free(rows);
        return;
    }
    memcpy(copy, json, len);
    while (len && (copy[len - 1] == '\n' || copy[len - 1] == '\r'))
        len--;
    copy[len] = '\0';
    pthread_mutex_lock(&l->mu);
    old = l->agents;
    old_rows = l->agents_html;
    l->agents = copy;
    l->agents_len = len;
    l->agents_html = rows;
    live_emit(l, (struct live_ev){.type = LEV_AGENTS});
    pthread_mutex_unlock(&l->mu);
    free(old);
    free(old_rows);
}

struct mgr_sink *mgr_serve_live_sink(struct mgr_serve_live *l, int64_t id)
{
    struct mgr_sink *s = calloc(1, sizeof(*s));
    struct live_sink *ls = calloc(1, sizeof(*ls));

    if (!s || !ls) {
        free(s);
        free(ls);
        return NULL;
    }
    ls->l = l;
    ls->id = id;
    s->ops = &live_sink_ops;
    s->priv = ls;
    snprintf(s->path, sizeof(s->path), "console");
    return s;
}

void mgr_serve_live_stopping(struct mgr_serve_live *l)
{
    pthread_mutex_lock(&l->mu);
    l->stopping = true;
    pthread_mutex_unlock(&l->mu);
}

void mgr_serve_live_close(struct mgr_serve_live *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->closed = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void mgr_serve_live_stats(struct mgr_serve_live *l, struct mgr_serve_live_stats *st)
{
    pthread_mutex_lock(&l->mu);
    st->events = l->seq;
    st->skipped = l->skipped;
    pthread_mutex_unlock(&l->mu);
}

int mgr_serve_live_new(struct mgr_serve_live **out)
{
    struct mgr_serve_live *l = calloc(1, sizeof(*l));
    pthread_condattr_t ca;
    int rc;

    *out = NULL;
    if (!l || !(l->pts = calloc(MGR_LIVE_POINTS, sizeof(*l->pts)))) {
        free(l);
        return -ENOMEM;
    }
    if ((rc = pthread_mutex_init(&l->mu, NULL))) {
        free(l->pts);
        free(l);
        return -rc;
    }
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc) {
        pthread_mutex_destroy(&l->mu);
        free(l->pts);
        free(l);
        return -rc;
    }
    *out = l;
    return 0;
}

void mgr_serve_live_free(struct mgr_serve_live *l)
{
    if (!l)
        return;
    live_tests_free(l);
    free(l->tests);
    free(l->names);
    free(l->specs);
    free(l->pts);
    free(l->agents);
    free(l->agents_html);
    free(l->chartjs);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
