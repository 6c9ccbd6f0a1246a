/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http_view.c - the live view's state of a run (per node and ALL:
 * last interval, counters over the run, up/lost, whole-run progress) and its
 * two renderings: the JSON of /api/run and /events, and the Prometheus text
 * exposition of /metrics (docs/monitoring.md names every metric). */
#include "manager/sinks/http_view.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/jsonw.h"

/* A node missing from this many published intervals in a row is down. */
#define VIEW_DOWN_AFTER 2

int mgr_view_init(struct mgr_view *v)
{
    pthread_condattr_t ca;
    int rc;

    memset(v, 0, sizeof(*v));
    if ((rc = pthread_mutex_init(&v->mu, NULL)))
        return -rc;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = pthread_cond_init(&v->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc) {
        pthread_mutex_destroy(&v->mu);
        return -rc;
    }
    return 0;
}

void mgr_view_destroy(struct mgr_view *v)
{
    pthread_cond_destroy(&v->cv);
    pthread_mutex_destroy(&v->mu);
    free(v->test_s);
    free(v->ramp_s);
    free(v->nodes);
    free(v->done);
}

void mgr_view_lock(struct mgr_view *v)
{
    pthread_mutex_lock(&v->mu);
}

void mgr_view_unlock(struct mgr_view *v)
{
    pthread_mutex_unlock(&v->mu);
}

/* Lock held: the change is done; wake the event streams. */
static void view_changed(struct mgr_view *v)
{
    v->seq++;
    pthread_cond_broadcast(&v->cv);
}

/* Lock held: the node called name, added when new; NULL without memory. */
static struct mgr_view_node *view_node(struct mgr_view *v, const char *name)
{
    struct mgr_view_node *n;

    for (size_t i = 0; i < v->nnodes; i++)
        if (!strcmp(v->nodes[i].name, name))
            return &v->nodes[i];
    if (iof_array_grow((void **)&v->nodes, &v->cap, v->nnodes + 1, sizeof(*v->nodes)))
        return NULL;
    n = &v->nodes[v->nnodes++];
    memset(n, 0, sizeof(*n));
    snprintf(n->name, sizeof(n->name), "%s", name);
    n->up = true;
    n->seen_at = v->published;
    return n;
}

void mgr_view_run_begin(struct mgr_view *v, const struct mgr_run_info *ri)
{
    size_t n = 0;
    struct iof_test *tests = iof_plan_expand(ri->plan, &n);

    mgr_view_lock(v);
    snprintf(v->plan, sizeof(v->plan), "%s", ri->plan->name);
    v->run_wall_ns = ri->start_wall_ns;
    v->state = MGR_VIEW_RUNNING;
    free(v->test_s);
    free(v->ramp_s);
    v->test_s = tests ? calloc(n ? n : 1, sizeof(double)) : NULL;
    v->ramp_s = tests ? calloc(n ? n : 1, sizeof(double)) : NULL;
    v->ntests = v->test_s && v->ramp_s ? n : 0;
    for (size_t i = 0; i < v->ntests; i++) {
        struct iof_run_cfg rc = iof_test_run(ri->plan, &tests[i]);
        v->ramp_s[i] = (double)rc.ramp_ns / 1e9;
        /* A find_max search's tests past its shortest path are not planned
         * (progress jumps over the ones skipped, the ETA stays a lower bound). */
        v->test_s[i] =
            iof_test_planned(ri->plan, &tests[i]) ? (double)(rc.ramp_ns + rc.duration_ns) / 1e9 : 0;
    }
    free(tests);
    for (size_t i = 0; i < ri->nagents; i++)
        view_node(v, ri->agents[i].name);
    view_changed(v);
    mgr_view_unlock(v);
}

void mgr_view_test_begin(struct mgr_view *v, const struct mgr_test_info *ti)
{
    mgr_view_lock(v);
    v->cur = ti->test->index;
    v->started = true;
    if (ti->ntests > v->ntests) /* the plan could not be expanded here */
        v->ntests = 0;
    snprintf(v->spec, sizeof(v->spec), "%s", ti->spec);
    snprintf(v->cycle, sizeof(v->cycle), "%s", ti->cycle ? ti->cycle : "");
    v->test_wall_ns = ti->start_wall_ns;
    v->k = 0;
    view_changed(v);
    mgr_view_unlock(v);
}

void mgr_view_interval(struct mgr_view *v, const struct mgr_interval *iv)
{
    mgr_view_lock(v);
    if (iv->node) {
        struct mgr_view_node *n = view_node(v, iv->node);
        if (n) {
            n->up = true;
            n->lost = false;
            n->seen_at = v->published;
            if (!iv->lost) {
                const struct iof_stats *s = iv->stats;
                n->m = *iv->m; /* computed once for every sink (manager/aggregate.c) */
                n->have = true;
                n->read_ios += s->rd.ios;
                n->write_ios += s->wr.ios;
                n->bytes_read += s->rd.bytes;
                n->bytes_written += s->wr.bytes;
                n->errors += s->rd.errors + s->wr.errors;
                n->lat_sum_ns += s->rd.lat.sum_ns + s->wr.lat.sum_ns;
                n->intervals++;
            }
        }
        /* Nodes change the view when ALL is published, once per interval. */
        mgr_view_unlock(v);
        return;
    }
    if (!iv->late) {
        v->all = *iv->m;
        v->have_all = true;
        v->all_test = v->started ? v->cur + 1 : 0;
        v->k = iv->k;
        v->reported = iv->reported;
        v->lost = iv->lost;
        v->published++;
        for (size_t i = 0; i < v->nnodes; i++)
            if (v->published - v->nodes[i].seen_at > VIEW_DOWN_AFTER)
                v->nodes[i].up = false;
    }
    view_changed(v);
    mgr_view_unlock(v);
}

void mgr_view_row(struct mgr_view *v, const struct mgr_row *r)
{
    if (r->type != MGR_ROW_NODE || !r->node)
        return;
    if (r->status != MGR_STATUS_PARTIAL && r->status != MGR_STATUS_LOST_BEFORE_START)
        return;
    mgr_view_lock(v);
    struct mgr_view_node *n = view_node(v, r->node);
    if (n) {
        n->lost = true;
        n->up = false;
    }
    view_changed(v);
    mgr_view_unlock(v);
}

void mgr_view_test_end(struct mgr_view *v, const struct mgr_test_end *te)
{
    struct mgr_view_test *t;

    mgr_view_lock(v);
    if (!iof_array_grow((void **)&v->done, &v->capdone, v->ndone + 1, sizeof(*v->done))) {
        t = &v->done[v->ndone++];
        memset(t, 0, sizeof(*t));
        t->index = te->test->test->index + 1;
        snprintf(t->spec, sizeof(t->spec), "%s", te->test->spec);
        snprintf(t->cycle, sizeof(t->cycle), "%s", te->test->cycle ? te->test->cycle : "");
        t->status = te->status;
        t->nodes = te->nodes;
        t->lost = te->lost;
        if (te->all && te->all->m)
            t->all = *te->all->m;
    }
    view_changed(v);
    mgr_view_unlock(v);
}

void mgr_view_run_end(struct mgr_view *v, int exit_code)
{
    mgr_view_lock(v);
    v->state = MGR_VIEW_DONE;
    v->exit_code = exit_code;
    v->end_wall_ns = iof_wall_ns();
    view_changed(v);
    mgr_view_unlock(v);
}

void mgr_view_stop(struct mgr_view *v)
{
    mgr_view_lock(v);
    v->stopping = true;
    pthread_cond_broadcast(&v->cv);
    mgr_view_unlock(v);
}

/* Seconds of the current test so far (0 before it, its end after the run). */
static double view_test_elapsed(const struct mgr_view *v, uint64_t now)
{
    if (!v->started)
        return 0;
    if (v->state == MGR_VIEW_DONE && v->end_wall_ns)
        now = v->end_wall_ns;
    return now > v->test_wall_ns ? (double)(now - v->test_wall_ns) / 1e9 : 0;
}

void mgr_view_progress(const struct mgr_view *v, uint64_t now_wall_ns, double *done_s,
                       double *total_s)
{
    double total = 0, done = 0;

    for (size_t i = 0; i < v->ntests; i++) {
        total += v->test_s[i];
        if (v->started && i < v->cur)
            done += v->test_s[i];
    }
    if (v->started && v->cur < v->ntests) {
        double e = view_test_elapsed(v, now_wall_ns);
        done += e < v->test_s[v->cur] ? e : v->test_s[v->cur];
    }
    if (v->state == MGR_VIEW_DONE && v->exit_code == 0)
        done = total;
    *done_s = done;
    *total_s = total;
}

/* "ramp", "measure", or "" before the first test and after the run. */
static const char *view_phase(const struct mgr_view *v, uint64_t now)
{
    if (!v->started || v->state != MGR_VIEW_RUNNING)
        return "";
    if (v->cur < v->ntests && view_test_elapsed(v, now) < v->ramp_s[v->cur])
        return "ramp";
    return "measure";
}

static const char *view_state_name(enum mgr_view_state s)
{
    switch (s) {
    case MGR_VIEW_WAITING:
        return "waiting";
    case MGR_VIEW_RUNNING:
        return "running";
    case MGR_VIEW_DONE:
        return "done";
    }
    return "?";
}

/* What the run's end says in words. */
static void view_state_text(const struct mgr_view *v, char *buf, size_t cap)
{
    switch (v->state) {
    case MGR_VIEW_WAITING:
        snprintf(buf, cap, "waiting for agents");
        return;
    case MGR_VIEW_RUNNING:
        snprintf(buf, cap, "running");
        return;
    case MGR_VIEW_DONE:
        break;
    }
    switch (v->exit_code) {
    case 0:
        snprintf(buf, cap, "done");
        break;
    case 1:
        snprintf(buf, cap, "done with errors or lost agents (exit 1)");
        break;
    case 2:
        snprintf(buf, cap, "refused: a plan or usage error (exit 2)");
        break;
    case 3:
        snprintf(buf, cap, "ended: agents unreachable or refused (exit 3)");
        break;
    case 130:
        snprintf(buf, cap, "interrupted");
        break;
    default:
        snprintf(buf, cap, "ended (exit %d)", v->exit_code);
        break;
    }
}

void mgr_view_state(const struct mgr_view *v, uint64_t now, struct mgr_view_now *st)
{
    double done, total;
    uint64_t end = v->state == MGR_VIEW_DONE && v->end_wall_ns ? v->end_wall_ns : now;

    memset(st, 0, sizeof(*st));
    mgr_view_progress(v, now, &done, &total);
    st->state = view_state_name(v->state);
    view_state_text(v, st->state_text, sizeof(st->state_text));
    st->phase = view_phase(v, now);
    st->elapsed_s = !v->run_wall_ns        ? -1
                    : end > v->run_wall_ns ? (double)(end - v->run_wall_ns) / 1e9
                                           : 0;
    st->test_elapsed_s = view_test_elapsed(v, now);
    st->progress = total > 0 ? done / total : -1;
    st->eta_s = v->state == MGR_VIEW_DONE ? 0 : total > 0 ? total - done : -1;
    if (!v->have_all)
        snprintf(st->figures, sizeof(st->figures), "no interval yet");
    else if (v->state == MGR_VIEW_DONE)
        snprintf(st->figures, sizeof(st->figures),
                 "the last interval of the run (test %zu/%zu); each test's final figures are "
                 "under Tests",
                 v->all_test, v->ntests);
    else if (v->started && v->all_test != v->cur + 1)
        snprintf(st->figures, sizeof(st->figures),
                 "the last interval of test %zu/%zu: test %zu/%zu has none yet", v->all_test,
                 v->ntests, v->cur + 1, v->ntests);
}

size_t mgr_view_done_first(const struct mgr_view *v)
{
    return v->ndone > MGR_VIEW_DONE_SHOWN ? v->ndone - MGR_VIEW_DONE_SHOWN : 0;
}

/* --- JSON --------------------------------------------------------------------------- */

/* s as a JSON string under the text policy: control characters escaped, so
 * the text never holds a newline (an SSE data line). */
static void json_str(struct iof_buf *b, const char *s)
{
    iof_json_escape(b, s, IOF_JSON_TEXT);
}

/* "KEY":NUMBER, or null when v is not finite or unknown. */
static void json_num(struct iof_buf *b, const char *key, bool known, double v)
{
    if (known && isfinite(v))
        iof_buf_printf(b, "\"%s\":%.6g,", key, v);
    else
        iof_buf_printf(b, "\"%s\":null,", key);
}

static void json_metrics(struct iof_buf *b, bool have, const struct mgr_metrics *m)
{
    json_num(b, "iops", have && m->rates, m->iops);
    json_num(b, "read_iops", have && m->rates, m->read_iops);
    json_num(b, "write_iops", have && m->rates, m->write_iops);
    json_num(b, "mibps", have && m->rates, m->mibps);
    json_num(b, "avg_ms", have, m->avg_ms);
    json_num(b, "p50_ms", have && m->percentiles, m->p50_ms);
    json_num(b, "p99_ms", have && m->percentiles, m->p99_ms);
    json_num(b, "p999_ms", have && m->percentiles, m->p999_ms);
    json_num(b, "max_ms", have, m->max_ms);
}

void mgr_view_all(const struct mgr_view *v, struct mgr_view_node *all)
{
    memset(all, 0, sizeof(*all));
    snprintf(all->name, sizeof(all->name), "ALL");
    all->up = true;
    for (size_t i = 0; i < v->nnodes; i++) {
        const struct mgr_view_node *n = &v->nodes[i];
        all->read_ios += n->read_ios;
        all->write_ios += n->write_ios;
        all->bytes_read += n->bytes_read;
        all->bytes_written += n->bytes_written;
        all->errors += n->errors;
        all->lat_sum_ns += n->lat_sum_ns;
    }
    all->intervals = v->published;
    all->have = v->have_all;
    all->m = v->all;
}

static void json_node(struct iof_buf *b, const struct mgr_view_node *n)
{
    iof_buf_addstr(b, "{\"name\":");
    json_str(b, n->name);
    iof_buf_printf(b, ",\"up\":%s,\"lost\":%s,", n->up ? "true" : "false",
                   n->lost ? "true" : "false");
    json_metrics(b, n->have, &n->m);
    iof_buf_printf(b,
                   "\"read_ios\":%llu,\"write_ios\":%llu,\"bytes_read\":%llu,"
                   "\"bytes_written\":%llu,\"errors\":%llu}",
                   (unsigned long long)n->read_ios, (unsigned long long)n->write_ios,
                   (unsigned long long)n->bytes_read, (unsigned long long)n->bytes_written,
                   (unsigned long long)n->errors);
}

/* A test that ended, as /api/run lists it under "finished". */
static void json_done(struct iof_buf *b, const struct mgr_view_test *t)
{
    iof_buf_addc(b, '{');
    json_metrics(b, true, &t->all);
    iof_buf_printf(b, "\"index\":%zu,\"spec\":", t->index);
    json_str(b, t->spec);
    iof_buf_addstr(b, ",\"cycle\":");
    json_str(b, t->cycle);
    iof_buf_printf(b, ",\"status\":\"%s\",\"nodes\":%u,\"lost\":%u}",
                   mgr_test_status_name(t->status), t->nodes, t->lost);
}

void mgr_view_json(const struct mgr_view *v, uint64_t now, struct iof_buf *b)
{
    struct mgr_view_node all;
    struct mgr_view_now st;

    mgr_view_state(v, now, &st);
    mgr_view_all(v, &all);
    iof_buf_printf(b, "{\"seq\":%llu,\"plan\":", (unsigned long long)v->seq);
    json_str(b, v->plan);
    iof_buf_printf(b, ",\"state\":\"%s\",\"state_text\":", st.state);
    json_str(b, st.state_text);
    iof_buf_addc(b, ',');
    if (v->state == MGR_VIEW_DONE)
        iof_buf_printf(b, "\"exit_code\":%d,", v->exit_code);
    else
        iof_buf_addstr(b, "\"exit_code\":null,");
    iof_buf_printf(b, "\"tests\":%zu,\"test\":", v->ntests);
    if (v->started) {
        iof_buf_printf(b, "{\"index\":%zu,\"spec\":", v->cur + 1);
        json_str(b, v->spec);
        iof_buf_addstr(b, ",\"cycle\":");
        json_str(b, v->cycle);
        iof_buf_printf(b, ",\"phase\":\"%s\",", st.phase);
        json_num(b, "elapsed_s", true, st.test_elapsed_s);
        json_num(b, "planned_s", v->cur < v->ntests, v->cur < v->ntests ? v->test_s[v->cur] : 0);
        json_num(b, "ramp_s", v->cur < v->ntests, v->cur < v->ntests ? v->ramp_s[v->cur] : 0);
        iof_buf_printf(b, "\"interval\":%llu}", (unsigned long long)v->k);
    } else {
        iof_buf_addstr(b, "null");
    }
    iof_buf_addc(b, ',');
    json_num(b, "elapsed_s", st.elapsed_s >= 0, st.elapsed_s);
    json_num(b, "progress", st.progress >= 0, st.progress);
    json_num(b, "eta_s", st.eta_s >= 0, st.eta_s);
    iof_buf_printf(b, "\"intervals\":%llu,\"reported\":%u,\"lost\":%u,\"interval_test\":",
                   (unsigned long long)v->published, v->reported, v->lost);
    if (v->have_all)
        iof_buf_printf(b, "%zu", v->all_test);
    else
        iof_buf_addstr(b, "null");
    iof_buf_addstr(b, ",\"figures\":");
    json_str(b, st.figures);
    iof_buf_addstr(b, ",\"all\":");
    json_node(b, &all);
    iof_buf_addstr(b, ",\"nodes\":[");
    for (size_t i = 0; i < v->nnodes; i++) {
        if (i)
            iof_buf_addc(b, ',');
        json_node(b, &v->nodes[i]);
    }
    iof_buf_printf(b, "],\"finished_total\":%zu,\"finished\":[", v->ndone);
    for (size_t i = mgr_view_done_first(v); i < v->ndone; i++) {
        if (i > mgr_view_done_first(v))
            iof_buf_addc(b, ',');
        json_done(b, &v->done[i]);
    }
    iof_buf_addstr(b, "]}");
}

/* --- Prometheus text exposition (version 0.0.4) -------------------------------------- */

/* A label value: backslash, quote and newline escaped. */
static void prom_label(struct iof_buf *b, const char *s)
{
    iof_buf_addc(b, '"');
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            iof_buf_printf(b, "\\%c", *s);
        else if (*s == '\n')
            iof_buf_addstr(b, "\\n");
        else
            iof_buf_addc(b, *s);
    }
    iof_buf_addc(b, '"');
}

static void prom_head(struct iof_buf *b, const char *name, const char *type, const char *help)
{
    iof_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_value(struct iof_buf *b, double v)
{
    if (isfinite(v))
        iof_buf_printf(b, " %.9g\n", v);
    else
        iof_buf_addstr(b, " NaN\n");
}

/* name{node="N"[,EXTRA]} v */
static void prom_node(struct iof_buf *b, const char *name, const char *node, const char *extra,
                      double v)
{
    iof_buf_printf(b, "%s{node=", name);
    prom_label(b, node);
    if (extra)
        iof_buf_printf(b, ",%s", extra);
    iof_buf_addc(b, '}');
    prom_value(b, v);
}

static void prom_counter(struct iof_buf *b, const char *name, const char *node, const char *extra,
                         uint64_t v)
{
    iof_buf_printf(b, "%s{node=", name);
    prom_label(b, node);
    if (extra)
        iof_buf_printf(b, ",%s", extra);
    iof_buf_printf(b, "} %llu\n", (unsigned long long)v);
}

void mgr_view_metrics(const struct mgr_view *v, uint64_t now, struct iof_buf *b)
{
    struct mgr_view_node all;
    const struct mgr_view_node *rows[2] = {&all, NULL};
    double done, total;

    mgr_view_progress(v, now, &done, &total);
    mgr_view_all(v, &all);

    prom_head(b, "iofleet_run_info", "gauge", "The run being served (always 1).");
    iof_buf_addstr(b, "iofleet_run_info{plan=");
    prom_label(b, v->plan);
    iof_buf_printf(b, ",state=\"%s\"} 1\n", view_state_name(v->state));
    prom_head(b, "iofleet_tests", "gauge", "Tests in the run.");
    iof_buf_printf(b, "iofleet_tests %zu\n", v->ntests);
    prom_head(b, "iofleet_test_index", "gauge",
              "1-based index of the current test (the last one after the run; 0 before).");
    iof_buf_printf(b, "iofleet_test_index %zu\n", v->started ? v->cur + 1 : 0);
    prom_head(b, "iofleet_test_ramp", "gauge", "1 while the current test ramps up.");
    iof_buf_printf(b, "iofleet_test_ramp %d\n", !strcmp(view_phase(v, now), "ramp"));
    prom_head(b, "iofleet_interval_test_index", "gauge",
              "1-based test of the last published interval, whose figures the interval "
              "metrics hold (0 before the first).");
    iof_buf_printf(b, "iofleet_interval_test_index %zu\n", v->have_all ? v->all_test : 0);
    prom_head(b, "iofleet_run_progress_ratio", "gauge",
              "Planned ramp and measurement time of the run done, 0..1.");
    iof_buf_addstr(b, "iofleet_run_progress_ratio");
    prom_value(b, total > 0 ? done / total : 0);
    prom_head(b, "iofleet_run_eta_seconds", "gauge",
              "Planned ramp and measurement time of the run left.");
    iof_buf_addstr(b, "iofleet_run_eta_seconds");
    prom_value(b, v->state == MGR_VIEW_DONE ? 0 : total - done); /* an interrupted run too */
    prom_head(b, "iofleet_agents_reported", "gauge",
              "Agents whose figures are in the last published interval.");
    iof_buf_printf(b, "iofleet_agents_reported %u\n", v->reported);

    prom_head(b, "iofleet_agent_up", "gauge",
              "1 when the agent reported in one of the last two intervals and is not lost.");
    for (size_t i = 0; i < v->nnodes; i++)
        prom_node(b, "iofleet_agent_up", v->nodes[i].name, NULL, v->nodes[i].up);

    /* Gauges of the last published interval, ALL first; absent until the
     * first, then kept through the next test's start and ramp. */
    static const struct {
        const char *name, *help;
    } gauges[] = {
        {"iofleet_iops", "I/Os per second in the last interval."},
        {"iofleet_read_iops", "Reads per second in the last interval."},
        {"iofleet_write_iops", "Writes per second in the last interval."},
        {"iofleet_mibps", "MiB per second (read + write) in the last interval."},
        {"iofleet_latency_avg_seconds", "Mean I/O latency in the last interval."},
    };
    for (size_t g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++) {
        prom_head(b, gauges[g].name, "gauge", gauges[g].help);
        for (size_t i = 0; i < v->nnodes + 1; i++) {
            const struct mgr_view_node *n = i == 0 ? rows[0] : &v->nodes[i - 1];
            const struct mgr_metrics *m = &n->m;
            if (!n->have)
                continue;
            switch (g) {
            case 0:
                if (m->rates)
                    prom_node(b, gauges[g].name, n->name, NULL, m->iops);
                break;
            case 1:
                if (m->rates)
                    prom_node(b, gauges[g].name, n->name, NULL, m->read_iops);
                break;
            case 2:
                if (m->rates)
                    prom_node(b, gauges[g].name, n->name, NULL, m->write_iops);
                break;
            case 3:
                if (m->rates)
                    prom_node(b, gauges[g].name, n->name, NULL, m->mibps);
                break;
            default:
                prom_node(b, gauges[g].name, n->name, NULL, m->avg_ms / 1e3);
                break;
            }
        }
    }

    /* Latency as a summary: the quantiles of the last interval from the
     * merged histograms (1: the maximum), _sum and _count over the run's
     * intervals, so rate(_sum) / rate(_count) is the mean over a window. */
    prom_head(b, "iofleet_latency_seconds", "summary",
              "I/O latency: quantiles of the last interval (quantile 1: the maximum); "
              "sum and count over the run's intervals.");
    for (size_t i = 0; i < v->nnodes + 1; i++) {
        const struct mgr_view_node *n = i == 0 ? &all : &v->nodes[i - 1];
        const struct mgr_metrics *m = &n->m;
        static const char *const q[] = {"quantile=\"0.5\"", "quantile=\"0.9\"", "quantile=\"0.99\"",
                                        "quantile=\"0.999\""};
        if (n->have && m->percentiles) {
            const double ms[] = {m->p50_ms, m->p90_ms, m->p99_ms, m->p999_ms};
            for (size_t k = 0; k < sizeof(ms) / sizeof(ms[0]); k++)
                prom_node(b, "iofleet_latency_seconds", n->name, q[k], ms[k] / 1e3);
        }
        if (n->have)
            prom_node(b, "iofleet_latency_seconds", n->name, "quantile=\"1\"", m->max_ms / 1e3);
        prom_node(b, "iofleet_latency_seconds_sum", n->name, NULL, (double)n->lat_sum_ns / 1e9);
        prom_counter(b, "iofleet_latency_seconds_count", n->name, NULL, n->read_ios + n->write_ios);
    }

    /* Counters over the run, ALL first. */
    prom_head(b, "iofleet_ios_total", "counter", "I/Os completed in the run's intervals.");
    for (size_t i = 0; i < v->nnodes + 1; i++) {
        const struct mgr_view_node *n = i == 0 ? &all : &v->nodes[i - 1];
        prom_counter(b, "iofleet_ios_total", n->name, "op=\"read\"", n->read_ios);
        prom_counter(b, "iofleet_ios_total", n->name, "op=\"write\"", n->write_ios);
    }
    prom_head(b, "iofleet_bytes_total", "counter", "Bytes transferred in the run's intervals.");
    for (size_t i = 0; i < v->nnodes + 1; i++) {
        const struct mgr_view_node *n = i == 0 ? &all : &v->nodes[i - 1];
        prom_counter(b, "iofleet_bytes_total", n->name, "op=\"read\"", n->bytes_read);
        prom_counter(b, "iofleet_bytes_total", n->name, "op=\"write\"", n->bytes_written);
    }
    prom_head(b, "iofleet_errors_total", "counter", "I/O errors in the run's intervals.");
    for (size_t i = 0; i < v->nnodes + 1; i++) {
        const struct mgr_view_node *n = i == 0 ? &all : &v->nodes[i - 1];
        prom_counter(b, "iofleet_errors_total", n->name, NULL, n->errors);
    }
    prom_head(b, "iofleet_intervals_total", "counter",
              "Intervals with figures (ALL: intervals published).");
    for (size_t i = 0; i < v->nnodes + 1; i++) {
        const struct mgr_view_node *n = i == 0 ? &all : &v->nodes[i - 1];
        prom_counter(b, "iofleet_intervals_total", n->name, NULL, n->intervals);
    }
}
