/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/report_html.c - writes the report model (report_html.h) as one
 * self-contained HTML page or as Markdown tables.
 *
 * The page: tables are static HTML written here; the charts are drawn in the
 * browser by the inlined Chart.js from the data of one JSON object (IOF)
 * embedded in the page. A Content-Security-Policy of default-src 'none'
 * makes the browser refuse any request the page might make; the page makes
 * none. Every canvas gets data-points (how many values it drew) once drawn,
 * for the tests.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/jsonw.h"
#include "common/text.h"
#include "manager/history/report_html.h"

static const struct {
    const char *col, *label;
    bool higher_better;
} rpt_metric[MGR_RPT_NMETRICS] = {
#define MGR_RPT_DESC(id, col, label, hb) {#col, label, hb},
    MGR_RPT_METRICS(MGR_RPT_DESC)
#undef MGR_RPT_DESC
};

/* The metrics compared side by side (errors are in the per-run tables). */
const enum mgr_rpt_metric mgr_rpt_cmp_metrics[] = {MGR_RPT_IOPS, MGR_RPT_MIBPS, MGR_RPT_AVG,
                                                   MGR_RPT_P50,  MGR_RPT_P99,   MGR_RPT_P999};
#define NCMP (sizeof(mgr_rpt_cmp_metrics) / sizeof(mgr_rpt_cmp_metrics[0]))
const size_t mgr_rpt_ncmp = NCMP;

const char *mgr_rpt_metric_key(enum mgr_rpt_metric m)
{
    return rpt_metric[m].col;
}

/* --- escaping ---------------------------------------------------------------------------- */

/* HTML text or attribute value: markup characters as entities, and what
 * common/text.h refuses (controls, bidirectional overrides) shown as its
 * escape ("\x1b"), so a name from an old run or a result file cannot
 * reorder the page's text. */
static void html(FILE *f, const char *s)
{
    iof_text_fput_html(f, s);
}

/* A JSON string safe inside <script>: '<' and '>' as \u escapes, so no
 * "</script>" or "<!--" can end or change the element. */
static void jstr(FILE *f, const char *s)
{
    iof_json_fput(f, s, IOF_JSON_TEXT | IOF_JSON_SCRIPT);
}

static void jnum(FILE *f, double v, bool have)
{
    if (have && isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

/* Markdown text (a table cell, a heading): common/text.h's escaper, so a
 * name is shown as written, never as a link, HTML or another column. */
static void md(FILE *f, const char *s)
{
    iof_text_fput_md(f, s);
}

static void fmt_num(char *buf, size_t cap, double v, bool have, enum mgr_rpt_metric m)
{
    if (!have || !isfinite(v))
        snprintf(buf, cap, "-");
    else if (m == MGR_RPT_ERRORS)
        snprintf(buf, cap, "%.0f", v);
    else if (m == MGR_RPT_IOPS)
        snprintf(buf, cap, "%.1f", v);
    else if (m == MGR_RPT_MIBPS)
        snprintf(buf, cap, "%.2f", v);
    else
        snprintf(buf, cap, "%.4f", v);
}

static void fmt_time(int64_t ns, char *buf, size_t cap)
{
    time_t t = (time_t)(ns / 1000000000);
    struct tm tm;

    if (ns <= 0 || !gmtime_r(&t, &tm))
        snprintf(buf, cap, "-");
    else
        strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* When the page says it was written: now, or SOURCE_DATE_EPOCH (seconds)
 * when set, so that a report can be written again byte for byte. */
static int64_t written_ns(void)
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    char *end;
    long long v;

    if (e && *e) {
        v = strtoll(e, &end, 10);
        if (!*end && v > 0 && v < INT64_MAX / 1000000000)
            return (int64_t)v * 1000000000;
    }
    return (int64_t)time(NULL) * 1000000000;
}

static const char *run_status(const struct mgr_rpt_run *r)
{
    return mgr_store_status_name(r->has_exit, r->exit_code);
}

/* B/A, and whether B is better: the ratio of a higher-is-better figure
 * above 1, of a latency below 1. Returns false when there is no ratio. */
bool mgr_rpt_ratio(const struct mgr_rpt_fig *a, const struct mgr_rpt_fig *b, enum mgr_rpt_metric m,
                   double *r, int *better)
{
    if (!a || !b || !a->have[m] || !b->have[m] || a->v[m] == 0)
        return false;
    *r = b->v[m] / a->v[m];
    if (fabs(*r - 1) < 0.005)
        *better = 0;
    else
        *better = (*r > 1) == rpt_metric[m].higher_better ? 1 : -1;
    return true;
}

/* Every test name of the runs, first appearance order. */
size_t mgr_rpt_test_names(const struct mgr_rpt_run *runs, size_t n, const char ***out)
{
    size_t cap = 0, k = 0;
    const char **names = NULL;

    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < runs[i].ntests; j++) {
            const char *name = runs[i].tests[j].name;
            bool seen = false;
            for (size_t q = 0; q < k && !seen; q++)
                seen = !strcmp(names[q], name);
            if (seen)
                continue;
            if (iof_array_grow((void **)&names, &cap, k + 1, sizeof(*names))) {
                free(names);
                *out = NULL;
                return 0;
            }
            names[k++] = name;
        }
    *out = names;
    return k;
}

/* The specs that ran at two or more cycle steps in some run (a queue depth,
 * worker or target cycle): their tests make a latency-against-IOPS curve. */
static size_t curve_specs(const struct mgr_rpt_run *runs, size_t n, const char ***out)
{
    size_t cap = 0, k = 0;
    const char **specs = NULL;

    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < runs[i].ntests; j++) {
            const char *spec = runs[i].tests[j].spec;
            size_t steps = 0;
            bool seen = false;
            for (size_t q = 0; q < runs[i].ntests; q++)
                steps += !strcmp(runs[i].tests[q].spec, spec) && runs[i].tests[q].cycle[0];
            for (size_t q = 0; q < k && !seen; q++)
                seen = !strcmp(specs[q], spec);
            if (steps < 2 || seen)
                continue;
            if (iof_array_grow((void **)&specs, &cap, k + 1, sizeof(*specs))) {
                free(specs);
                *out = NULL;
                return 0;
            }
            specs[k++] = spec;
        }
    *out = specs;
    return k;
}

const struct mgr_rpt_fig *mgr_rpt_all_fig(const struct mgr_rpt_test *t)
{
    return t && t->all ? &t->all->f : NULL;
}

/* Under a test's table, one line per row that is not ok (the ALL row, then
 * each NODE row) saying where its figures come from: `pre`, "ALL" or "node
 * NAME", ": STATUS: NOTE" written with `esc`, then `post`; `first` comes
 * before the first line. */
static void status_notes(FILE *f, const struct mgr_rpt_test *t, void (*esc)(FILE *, const char *),
                         const char *first, const char *pre, const char *post)
{
    char note[512];
    bool any = false;

    for (size_t k = 0; k < t->nrows; k++) {
        const struct mgr_rpt_row *r = &t->rows[k];
        bool all = r->type && !strcmp(r->type, "ALL");
        if (!all && (!r->type || strcmp(r->type, "NODE")))
            continue;
        if (!*mgr_rpt_status_note(t, r, note, sizeof(note)))
            continue;
        fprintf(f, "%s%s%s", any ? "" : first, pre, all ? "ALL" : "node ");
        any = true;
        if (!all)
            esc(f, r->node);
        fputs(": ", f);
        esc(f, r->status);
        fputs(": ", f);
        esc(f, note);
        fputs(post, f);
    }
}

/* --- HTML -------------------------------------------------------------------------------- */

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;"
    "padding:0 1em}h1{font-size:1.6em}h2{border-bottom:2px solid #ccd;padding-bottom:.2em;"
    "margin-top:2em}table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid "
    "#ccd;padding:.25em .5em;text-align:right}th{background:#eef}td.l,th.l{text-align:left}"
    "td.better{background:#d4f5d4;color:#064}td.worse{background:#fbd5d5;color:#900}"
    ".charts{display:flex;flex-wrap:wrap;gap:1em}.chart{width:560px;height:300px;position:"
    "relative}pre{background:#f6f6fa;padding:.5em;overflow:auto;max-height:30em}"
    ".meta{color:#555}section{margin-bottom:1em}";

static void th_row(FILE *f, const char *const *cells, size_t n, size_t left)
{
    fputs("<tr>", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i < left ? "<th class=\"l\">" : "<th>", f);
        html(f, cells[i]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
}

static void td_fig(FILE *f, const struct mgr_rpt_fig *fig, enum mgr_rpt_metric m)
{
    char buf[64];
    fmt_num(buf, sizeof(buf), fig ? fig->v[m] : 0, fig && fig->have[m], m);
    fprintf(f, "<td data-metric=\"%s\">%s</td>", rpt_metric[m].col, buf);
}

static void html_runs(FILE *f, const struct mgr_rpt_run *runs, size_t n)
{
    static const char *const head[] = {"run",  "plan",   "start",   "tests",
                                       "exit", "status", "iofleet", "source"};
    fputs("<section id=\"runs\"><h2>Runs</h2><table>", f);
    th_row(f, head, 8, 8);
    for (size_t i = 0; i < n; i++) {
        const struct mgr_rpt_run *r = &runs[i];
        char when[64];
        size_t done = 0;
        for (size_t j = 0; j < r->ntests; j++)
            done += r->tests[j].complete;
        fmt_time(r->start_unix_ns, when, sizeof(when));
        fputs("<tr><td class=\"l\">", f);
        html(f, r->label);
        fputs("</td><td class=\"l\">", f);
        html(f, r->plan_name);
        fprintf(f, "</td><td class=\"l\">%s</td><td class=\"l\">%zu</td><td class=\"l\">", when,
                done);
        if (r->has_exit)
            fprintf(f, "%d", r->exit_code);
        else
            fputs("-", f);
        fprintf(f, "</td><td class=\"l\">%s</td><td class=\"l\">", run_status(r));
        html(f, r->version);
        fputs("</td><td class=\"l\">", f);
        html(f, r->source);
        fputs("</td></tr>\n", f);
    }
    fputs("</table></section>\n", f);
}

static void html_summary(FILE *f, const struct mgr_rpt_run *r)
{
    fputs("<section id=\"summary\"><h2>Summary</h2><table><tr><th>#</th><th class=\"l\">test</th>",
          f);
    for (int m = 0; m < MGR_RPT_NMETRICS; m++)
        fprintf(f, "<th>%s</th>", rpt_metric[m].label);
    fputs("<th class=\"l\">status</th></tr>\n", f);
    for (size_t j = 0; j < r->ntests; j++) {
        const struct mgr_rpt_test *t = &r->tests[j];
        fprintf(f, "<tr><td>%d</td><td class=\"l\">", t->idx);
        html(f, t->name);
        if (!t->complete)
            fputs(" (unfinished)", f);
        else if (t->interrupted)
            fputs(" (interrupted)", f);
        fputs("</td>", f);
        for (int m = 0; m < MGR_RPT_NMETRICS; m++)
            td_fig(f, mgr_rpt_all_fig(t), m);
        fputs("<td class=\"l\">", f);
        html(f, t->all && t->all->status ? t->all->status : "-");
        fputs("</td></tr>\n", f);
    }
    fputs("</table><div class=\"charts\"><div class=\"chart\"><canvas id=\"sum-iops\"></canvas>"
          "</div><div class=\"chart\"><canvas id=\"sum-mibps\"></canvas></div><div "
          "class=\"chart\"><canvas id=\"sum-lat\"></canvas></div></div></section>\n",
          f);
}

static void html_comparison(FILE *f, const struct mgr_rpt_run *runs, size_t n, const char **names,
                            size_t nnames)
{
    fputs("<section id=\"comparison\"><h2>Comparison</h2><p class=\"meta\">Tests matched by spec "
          "name; each ratio is the run over the first run (B/A), green where it is better "
          "(more IOPS or MiB/s, less latency), red where worse.</p><table><tr><th "
          "class=\"l\" rowspan=\"2\">test</th>",
          f);
    for (size_t k = 0; k < NCMP; k++)
        fprintf(f, "<th colspan=\"%zu\">%s</th>", n + (n - 1),
                rpt_metric[mgr_rpt_cmp_metrics[k]].label);
    fputs("</tr><tr>", f);
    for (size_t k = 0; k < NCMP; k++)
        for (size_t i = 0; i < n; i++) {
            fputs("<th>", f);
            html(f, runs[i].label);
            fputs("</th>", f);
            if (i)
                fprintf(f, "<th>%c/A</th>", (int)('A' + i));
        }
    fputs("</tr>\n", f);
    for (size_t q = 0; q < nnames; q++) {
        fputs("<tr data-test=\"", f);
        html(f, names[q]);
        fputs("\"><td class=\"l\">", f);
        html(f, names[q]);
        fputs("</td>", f);
        for (size_t k = 0; k < NCMP; k++) {
            enum mgr_rpt_metric m = mgr_rpt_cmp_metrics[k];
            const struct mgr_rpt_fig *a = mgr_rpt_all_fig(mgr_rpt_find(&runs[0], names[q]));
            for (size_t i = 0; i < n; i++) {
                const struct mgr_rpt_fig *b = mgr_rpt_all_fig(mgr_rpt_find(&runs[i], names[q]));
                double rt;
                int better;
                td_fig(f, b, m);
                if (!i)
                    continue;
                if (mgr_rpt_ratio(a, b, m, &rt, &better))
                    fprintf(f,
                            "<td class=\"ratio %s\" data-metric=\"%s\" data-run=\"%zu\" "
                            "data-ratio=\"%.17g\">%.3f</td>",
                            better > 0   ? "better"
                            : better < 0 ? "worse"
                                         : "same",
                            rpt_metric[m].col, i, rt, rt);
                else
                    fprintf(f, "<td class=\"ratio\" data-metric=\"%s\" data-run=\"%zu\">-</td>",
                            rpt_metric[m].col, i);
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</table><div class=\"charts\">", f);
    for (size_t k = 0; k < NCMP; k++)
        fprintf(f, "<div class=\"chart\"><canvas id=\"cmp-%s\"></canvas></div>",
                rpt_metric[mgr_rpt_cmp_metrics[k]].col);
    fputs("</div></section>\n", f);
}

static void html_timeseries(FILE *f, const struct mgr_rpt_run *runs, size_t n)
{
    fputs("<section id=\"timeseries\"><h2>Time series</h2><p class=\"meta\">IOPS per interval, "
          "ALL and per node, seconds since the run started; the shaded part is the ramp "
          "(not measured).</p>",
          f);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < runs[i].ntests; j++) {
            fputs("<h3>", f);
            html(f, runs[i].label);
            fprintf(f, ": test %d, ", runs[i].tests[j].idx);
            html(f, runs[i].tests[j].name);
            fprintf(f,
                    "</h3><div class=\"charts\"><div class=\"chart\"><canvas id=\"ts-%zu-%zu\">"
                    "</canvas></div><div class=\"chart\"><canvas id=\"tsl-%zu-%zu\"></canvas>"
                    "</div></div>\n",
                    i, j, i, j);
        }
    fputs("</section>\n", f);
}

static void html_latency(FILE *f, size_t nnames, const char **names)
{
    fputs("<section id=\"latency\"><h2>Latency distribution</h2><p class=\"meta\">Percentile "
          "curves from the merged histogram of each test (read and write), on a log axis: "
          "latency at each percentile.</p><div class=\"charts\">",
          f);
    for (size_t q = 0; q < nnames; q++) {
        fputs("<div class=\"chart\"><canvas id=\"pct-", f);
        fprintf(f, "%zu\" data-test=\"", q);
        html(f, names[q]);
        fputs("\"></canvas></div>", f);
    }
    fputs("</div></section>\n", f);
}

static void html_curves(FILE *f, const char **specs, size_t nspecs)
{
    if (!nspecs)
        return;
    fputs("<section id=\"curves\"><h2>Curves</h2><p class=\"meta\">Tests of one spec at "
          "each step of a cycle (queue depth, workers, targets, or a rate curve or find_max "
          "search): latency against IOPS, one "
          "point per step.</p><div class=\"charts\">",
          f);
    for (size_t q = 0; q < nspecs; q++) {
        fprintf(f, "<div class=\"chart\"><canvas id=\"curve-%zu\" data-spec=\"", q);
        html(f, specs[q]);
        fputs("\"></canvas></div>", f);
    }
    fputs("</div></section>\n", f);
}

static void html_row_table(FILE *f, const struct mgr_rpt_test *t, const char *type)
{
    bool worker = !strcmp(type, "WORKER");
    size_t shown = 0;

    for (size_t k = 0; k < t->nrows; k++)
        shown += t->rows[k].type && !strcmp(t->rows[k].type, type);
    if (!shown)
        return;
    fprintf(f, "<table class=\"rows-%s\"><tr><th class=\"l\">node</th>", type);
    if (worker)
        fputs("<th class=\"l\">worker</th>", f);
    fputs("<th class=\"l\">status</th>", f);
    for (int m = 0; m < MGR_RPT_NMETRICS; m++)
        fprintf(f, "<th>%s</th>", rpt_metric[m].label);
    fputs("</tr>\n", f);
    for (size_t k = 0; k < t->nrows; k++) {
        const struct mgr_rpt_row *r = &t->rows[k];
        if (!r->type || strcmp(r->type, type))
            continue;
        fputs("<tr><td class=\"l\">", f);
        html(f, r->node);
        if (worker) {
            fputs("</td><td class=\"l\">", f);
            html(f, r->worker);
        }
        fputs("</td><td class=\"l\">", f);
        html(f, r->status);
        fputs("</td>", f);
        for (int m = 0; m < MGR_RPT_NMETRICS; m++)
            td_fig(f, &r->f, m);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void html_nodes(FILE *f, const struct mgr_rpt_run *runs, size_t n)
{
    fputs("<section id=\"nodes\"><h2>Nodes and workers</h2>", f);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < runs[i].ntests; j++) {
            fputs("<h3>", f);
            html(f, runs[i].label);
            fprintf(f, ": test %d, ", runs[i].tests[j].idx);
            html(f, runs[i].tests[j].name);
            fputs("</h3>", f);
            html_row_table(f, &runs[i].tests[j], "NODE");
            status_notes(f, &runs[i].tests[j], html, "", "<p class=\"meta status-note\">",
                         "</p>\n");
            html_row_table(f, &runs[i].tests[j], "WORKER");
        }
    fputs("</section>\n", f);
}

static void html_plan(FILE *f, const struct mgr_rpt_run *runs, size_t n)
{
    fputs("<section id=\"plan\"><h2>Plan and inventory</h2>", f);
    for (size_t i = 0; i < n; i++) {
        const struct mgr_rpt_run *r = &runs[i];
        fputs("<h3>", f);
        html(f, r->label);
        fputs("</h3><table><tr><th class=\"l\">agent</th><th class=\"l\">host</th><th>CPUs</th>"
              "<th>memory GiB</th><th class=\"l\">kernel</th><th class=\"l\">software</th><th "
              "class=\"l\">targets</th></tr>\n",
              f);
        for (size_t k = 0; k < r->nagents; k++) {
            const struct mgr_rpt_agent *a = &r->agentv[k];
            fputs("<tr><td class=\"l\">", f);
            html(f, a->name);
            fputs("</td><td class=\"l\">", f);
            html(f, a->hostname);
            fprintf(f, "</td><td>%" PRId64 "</td><td>%.1f</td><td class=\"l\">", a->cpus,
                    (double)a->memory_bytes / (1024.0 * 1024 * 1024));
            html(f, a->kernel);
            fputs("</td><td class=\"l\">", f);
            html(f, a->software);
            fputs("</td><td class=\"l\">", f);
            html(f, a->targets ? a->targets : "-");
            fputs("</td></tr>\n", f);
        }
        fprintf(f, "</table><pre class=\"plan\" id=\"plan-%zu\">", i);
        html(f, r->plan ? r->plan : "(no plan recorded)");
        fputs("</pre>\n", f);
    }
    fputs("</section>\n", f);
}

/* The chart data: IOF = {runs: [{label, tests: [{name, idx, all: {iops, ...}, start_s,
 * ramp_end_s, series: {NODE: [[t, iops, p99_ms], ...]}, curve: [[1/(1-q), ms], ...]}]}]}. */
static void html_data(FILE *f, const struct mgr_rpt_run *runs, size_t n, const char **names,
                      size_t nnames, const char **specs, size_t nspecs)
{
    fputs("<script>\"use strict\";const IOF={names:[", f);
    for (size_t q = 0; q < nnames; q++) {
        if (q)
            fputc(',', f);
        jstr(f, names[q]);
    }
    fputs("],curves:[", f);
    for (size_t q = 0; q < nspecs; q++) {
        if (q)
            fputc(',', f);
        jstr(f, specs[q]);
    }
    fputs("],runs:[", f);
    for (size_t i = 0; i < n; i++) {
        const struct mgr_rpt_run *r = &runs[i];
        fprintf(f, "%s{label:", i ? "," : "");
        jstr(f, r->label);
        fputs(",tests:[", f);
        for (size_t j = 0; j < r->ntests; j++) {
            const struct mgr_rpt_test *t = &r->tests[j];
            const struct mgr_rpt_fig *a = mgr_rpt_all_fig(t);
            double total = 0, cum = 0;
            bool first = true;

            fprintf(f, "%s{name:", j ? "," : "");
            jstr(f, t->name);
            fputs(",spec:", f);
            jstr(f, t->spec);
            fputs(",cycle:", f);
            jstr(f, t->cycle);
            fprintf(f, ",idx:%d,all:", t->idx);
            if (a) {
                fputc('{', f);
                for (int m = 0; m < MGR_RPT_NMETRICS; m++) {
                    fprintf(f, "%s%s:", m ? "," : "", rpt_metric[m].col);
                    jnum(f, a->v[m], a->have[m]);
                }
                fputc('}', f);
            } else {
                fputs("null", f);
            }
            fputs(",start_s:", f);
            jnum(f, t->start_s, true);
            fputs(",ramp_end_s:", f);
            jnum(f, t->measure_start_s, t->measure_start_s >= 0);
            fputs(",series:{", f);
            /* One array per node name, in first-seen order (ALL first). */
            for (size_t k = 0; k < t->nivs; k++) {
                const char *node = t->ivs[k].node ? t->ivs[k].node : "?";
                bool seen = false;
                for (size_t p = 0; p < k && !seen; p++)
                    seen = t->ivs[p].node && !strcmp(t->ivs[p].node, node);
                if (seen)
                    continue;
                fprintf(f, "%s", first ? "" : ",");
                first = false;
                jstr(f, node);
                fputs(":[", f);
                for (size_t p = k, c = 0; p < t->nivs; p++) {
                    const struct mgr_rpt_iv *v = &t->ivs[p];
                    if (!v->node || strcmp(v->node, node) || v->late)
                        continue;
                    fprintf(f, "%s[", c++ ? "," : "");
                    jnum(f, v->time_s, true);
                    fputc(',', f);
                    jnum(f, v->f.v[MGR_RPT_IOPS], v->f.have[MGR_RPT_IOPS] && !v->lost);
                    fputc(',', f);
                    jnum(f, v->f.v[MGR_RPT_P99], v->f.have[MGR_RPT_P99] && !v->lost);
                    fputc(']', f);
                }
                fputc(']', f);
            }
            fputs("},curve:[", f);
            for (size_t k = 0; k < t->nhist; k++)
                total += t->hist[k].count;
            for (size_t k = 0; k < t->nhist && total > 0; k++) {
                double q, mid = (t->hist[k].low_ns + floor(t->hist[k].width_ns / 2)) / 1e6;
                cum += t->hist[k].count;
                q = cum / total;
                /* x = 1/(1-q): 10 is p90, 1000 p99.9; the last bucket sits at the count. */
                fprintf(f, "%s[%.17g,%.17g]", k ? "," : "", q < 1 ? 1 / (1 - q) : total, mid);
            }
            fputs("]}", f);
        }
        fputs("]}", f);
    }
    fputs("]};</script>\n", f);
}

/* Draws the charts from IOF; plain ES2017, no request of any kind. */
static const char report_js[] =
    "<script>\"use strict\";\n"
    "(function(){\n"
    "Chart.defaults.animation=false;Chart.defaults.responsive=true;"
    "Chart.defaults.maintainAspectRatio=false;\n"
    "const C=['#1f77b4','#ff7f0e','#2ca02c','#d62728','#9467bd','#8c564b','#e377c2','#7f7f7f',"
    "'#bcbd22','#17becf'];\n"
    "function col(i){return C[i%C.length];}\n"
    "function done(id,chart){const el=document.getElementById(id);let n=0;"
    "for(const d of chart.data.datasets)for(const v of d.data){const y=(v&&typeof v==='object')?"
    "v.y:v;if(y!==null&&y!==undefined&&!Number.isNaN(y))n++;}el.dataset.points=n;}\n"
    "function bar(id,title,labels,sets,ylabel){const el=document.getElementById(id);if(!el)"
    "return;const ch=new Chart(el,{type:'bar',data:{labels:labels,datasets:sets.map((s,i)=>"
    "({label:s.label,data:s.data,backgroundColor:col(i)}))},options:{plugins:{title:{display:"
    "true,text:title}},scales:{y:{beginAtZero:true,title:{display:true,text:ylabel}}}}});"
    "done(id,ch);}\n"
    "const ramp={id:'ramp',beforeDatasetsDraw(ch,a,o){if(!o||o.end===null||o.end===undefined)"
    "return;const x=ch.scales.x,ar=ch.chartArea;const x0=Math.max(x.getPixelForValue(o.start),"
    "ar.left),x1=Math.min(x.getPixelForValue(o.end),ar.right);if(x1<=x0)return;const "
    "c=ch.ctx;c.save();c.fillStyle='rgba(128,128,128,0.18)';c.fillRect(x0,ar.top,x1-x0,"
    "ar.bottom-ar.top);c.fillStyle='#666';c.fillText('ramp',x0+4,ar.top+12);c.restore();}};\n"
    "const M=[['iops','IOPS'],['mibps','MiB/s'],['avg_lat_ms','avg ms'],['p50_lat_ms','p50 ms'],"
    "['p99_lat_ms','p99 ms'],['p999_lat_ms','p99.9 ms']];\n"
    "function fig(r,name,key){const t=r.tests.find(t=>t.name===name);return t&&t.all?"
    "t.all[key]:null;}\n"
    "if(IOF.runs.length===1){const r=IOF.runs[0];const names=r.tests.map(t=>t.name);\n"
    "bar('sum-iops','IOPS per test',names,[{label:'IOPS',data:r.tests.map(t=>t.all?t.all.iops:"
    "null)}],'IOPS');\n"
    "bar('sum-mibps','MiB/s per test',names,[{label:'MiB/s',data:r.tests.map(t=>t.all?"
    "t.all.mibps:null)}],'MiB/s');\n"
    "bar('sum-lat','Latency per test',names,M.slice(2).map(m=>({label:m[1],data:r.tests.map("
    "t=>t.all?t.all[m[0]]:null)})),'ms');}\n"
    "else{for(const m of M)bar('cmp-'+m[0],m[1]+' per test',IOF.names,IOF.runs.map(r=>({label:"
    "r.label,data:IOF.names.map(n=>fig(r,n,m[0]))})),m[1]);}\n"
    "IOF.runs.forEach((r,i)=>r.tests.forEach((t,j)=>{const nodes=Object.keys(t.series).sort("
    "(a,b)=>a==='ALL'?-1:b==='ALL'?1:a<b?-1:a>b?1:0);"
    "const mk=(k,id,title,y)=>{const el=document.getElementById(id);if(!el)return;const "
    "ch=new Chart(el,{type:'line',data:{datasets:nodes.map((n,q)=>({label:n,data:t.series[n]."
    "map(p=>({x:p[0],y:p[k]})),borderColor:col(q),backgroundColor:col(q),borderWidth:n==='ALL'"
    "?3:1.5,pointRadius:2}))},options:{parsing:false,plugins:{title:{display:true,text:title},"
    "ramp:{start:t.start_s,end:t.ramp_end_s}},scales:{x:{type:'linear',min:t.start_s,title:"
    "{display:true,text:'seconds since the run started'}},y:{beginAtZero:true,title:{display:"
    "true,text:y}}}},plugins:[ramp]});done(id,ch);};\n"
    "mk(1,'ts-'+i+'-'+j,'IOPS: '+t.name,'IOPS');mk(2,'tsl-'+i+'-'+j,'p99 latency: '+t.name,"
    "'ms');}));\n"
    "IOF.names.forEach((name,q)=>{const id='pct-'+q;const el=document.getElementById(id);"
    "if(!el)return;const sets=[];IOF.runs.forEach((r,i)=>{const t=r.tests.find(t=>t.name==="
    "name);if(t&&t.curve.length)sets.push({label:r.label,data:t.curve.map(p=>({x:p[0],y:p[1]}"
    ")),borderColor:col(i),backgroundColor:col(i),pointRadius:1.5,stepped:true});});"
    "const ch=new Chart(el,{type:'line',data:{datasets:sets},options:{parsing:false,plugins:"
    "{title:{display:true,text:'Latency percentiles: '+name},tooltip:{callbacks:{label:c=>"
    "c.dataset.label+': p'+(100*(1-1/c.parsed.x)).toPrecision(6)+' '+c.parsed.y.toFixed(4)+"
    "' ms'}}},scales:{x:{type:'logarithmic',min:1,title:{display:true,text:'percentile'},"
    "ticks:{callback:v=>{const l=Math.log10(v);return Number.isInteger(l)&&l>0?('p'+(100*(1-"
    "1/v)).toString()):(v===1?'p0':'');}}},y:{type:'logarithmic',title:{display:true,text:"
    "'latency ms'}}}}});done(id,ch);});\n"
    "IOF.curves.forEach((spec,q)=>{const id='curve-'+q;const el=document.getElementById(id);"
    "if(!el)return;const sets=[];IOF.runs.forEach((r,i)=>{const ts=r.tests.filter(t=>t.spec==="
    "spec&&t.all&&t.all.iops!==null);if(ts.length<2)return;for(const k of [['p99_lat_ms','p99'"
    "],['avg_lat_ms','avg']])sets.push({label:r.label+' '+k[1],data:ts.map(t=>({x:t.all.iops,"
    "y:t.all[k[0]],step:t.cycle})),borderColor:col(2*i+(k[1]==='avg'?1:0)),backgroundColor:"
    "col(2*i+(k[1]==='avg'?1:0)),showLine:true,pointRadius:3});});const ch=new Chart(el,{type:"
    "'scatter',data:{datasets:sets},options:{plugins:{title:{display:true,text:'Latency against "
    "IOPS: '+spec},tooltip:{callbacks:{label:c=>c.dataset.label+' '+c.raw.step+': '+"
    "c.raw.x.toFixed(0)+' IOPS, '+c.raw.y.toFixed(4)+' ms'}}},scales:{x:{beginAtZero:true,title:"
    "{display:true,text:'IOPS'}},y:{beginAtZero:true,title:{display:true,text:'latency ms'}}}}}"
    ");done(id,ch);});\n"
    "for(const p of document.querySelectorAll('pre.plan')){try{p.textContent=JSON.stringify("
    "JSON.parse(p.textContent),null,2);}catch(e){}}\n"
    "document.body.dataset.ready='1';\n"
    "})();\n"
    "</script>\n";

/* Writes text inside a <script> element: "</script" cannot occur in
 * Chart.js's code, but a "</" is written as "<\/" (the same in JS strings
 * and regular expressions) so no copy of the library can end the element. */
static void script_text(FILE *f, const char *s)
{
    for (const char *p; (p = strstr(s, "</"));) {
        fwrite(s, 1, (size_t)(p - s), f);
        fputs("<\\/", f);
        s = p + 2;
    }
    fputs(s, f);
}

int mgr_rpt_html(FILE *f, const struct mgr_rpt_run *runs, size_t n, const char *chartjs,
                 const char *chartjs_version)
{
    const char **names, **specs;
    size_t nnames = mgr_rpt_test_names(runs, n, &names), nspecs = curve_specs(runs, n, &specs);
    char now[64];

    if (!names && nnames == 0 && n && runs[0].ntests) {
        free(specs);
        return -1;
    }
    fmt_time(written_ns(), now, sizeof(now));
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          f);
    fputs(n > 1 ? "iofleet comparison: " : "iofleet report: ", f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(" vs ", f);
        html(f, runs[i].label);
    }
    fprintf(f, "</title>\n<style>%s</style>\n</head><body>\n<h1>", css);
    fputs(n > 1 ? "iofleet comparison" : "iofleet report", f);
    fprintf(f,
            "</h1>\n<p class=\"meta\">Written %s by iofleet %s. Charts: <span "
            "id=\"chartjs-version\">Chart.js %s</span> (inlined; the page makes no network "
            "request).</p>\n",
            now, IOF_VERSION, chartjs_version);
    html_runs(f, runs, n);
    if (n == 1)
        html_summary(f, &runs[0]);
    else
        html_comparison(f, runs, n, names, nnames);
    html_timeseries(f, runs, n);
    html_latency(f, nnames, names);
    html_curves(f, specs, nspecs);
    html_nodes(f, runs, n);
    html_plan(f, runs, n);
    fputs("<script>", f);
    script_text(f, chartjs);
    fputs("</script>\n", f);
    html_data(f, runs, n, names, nnames, specs, nspecs);
    fputs(report_js, f);
    fputs("</body></html>\n", f);
    free(names);
    free(specs);
    return 0;
}

/* --- Markdown ---------------------------------------------------------------------------- */

static void md_figs(FILE *f, const struct mgr_rpt_fig *fig)
{
    char buf[64];
    for (int m = 0; m < MGR_RPT_NMETRICS; m++) {
        fmt_num(buf, sizeof(buf), fig ? fig->v[m] : 0, fig && fig->have[m], m);
        fprintf(f, " %s |", buf);
    }
}

/* The head of a table: its first columns, the figures, then `status` (last,
 * so the figures keep their place for scripts). */
static void md_head(FILE *f, const char *first, int nleft)
{
    fprintf(f, "| %s |", first);
    for (int m = 0; m < MGR_RPT_NMETRICS; m++)
        fprintf(f, " %s |", rpt_metric[m].label);
    fputs(" status |\n|", f);
    for (int i = 0; i < nleft; i++)
        fputs(" :-- |", f);
    for (int m = 0; m < MGR_RPT_NMETRICS; m++)
        fputs(" --: |", f);
    fputs(" :-- |\n", f);
}

/* The status cell of a row ("-" without one). */
static void md_status(FILE *f, const struct mgr_rpt_row *r)
{
    fputc(' ', f);
    md(f, r && r->status ? r->status : "-");
    fputs(" |", f);
}

int mgr_rpt_md(FILE *f, const struct mgr_rpt_run *runs, size_t n)
{
    const char **names;
    size_t nnames = mgr_rpt_test_names(runs, n, &names);

    fprintf(f, "# iofleet %s\n\n", n > 1 ? "comparison" : "report");
    fputs("| run | plan | start | tests | exit | status |\n| :-- | :-- | :-- | --: | --: | :-- |\n",
          f);
    for (size_t i = 0; i < n; i++) {
        char when[64];
        fmt_time(runs[i].start_unix_ns, when, sizeof(when));
        fputs("| ", f);
        md(f, runs[i].label);
        fputs(" | ", f);
        md(f, runs[i].plan_name);
        fprintf(f, " | %s | %zu | ", when, runs[i].ntests);
        if (runs[i].has_exit)
            fprintf(f, "%d", runs[i].exit_code);
        else
            fputs("-", f);
        fprintf(f, " | %s |\n", run_status(&runs[i]));
    }
    if (n > 1) {
        fputs("\n## Comparison\n\nRatios are each run over the first (B/A).\n\n| test |", f);
        for (size_t k = 0; k < NCMP; k++)
            for (size_t i = 0; i < n; i++) {
                fprintf(f, " %s ", rpt_metric[mgr_rpt_cmp_metrics[k]].label);
                md(f, runs[i].label);
                fputs(" |", f);
                if (i)
                    fprintf(f, " %s %c/A |", rpt_metric[mgr_rpt_cmp_metrics[k]].label,
                            (int)('A' + i));
            }
        fputs("\n| :-- |", f);
        for (size_t k = 0; k < NCMP * (2 * n - 1); k++)
            fputs(" --: |", f);
        fputc('\n', f);
        for (size_t q = 0; q < nnames; q++) {
            fputs("| ", f);
            md(f, names[q]);
            fputs(" |", f);
            for (size_t k = 0; k < NCMP; k++) {
                enum mgr_rpt_metric m = mgr_rpt_cmp_metrics[k];
                const struct mgr_rpt_fig *a = mgr_rpt_all_fig(mgr_rpt_find(&runs[0], names[q]));
                for (size_t i = 0; i < n; i++) {
                    const struct mgr_rpt_fig *b = mgr_rpt_all_fig(mgr_rpt_find(&runs[i], names[q]));
                    char buf[64];
                    double rt;
                    int better;
                    fmt_num(buf, sizeof(buf), b ? b->v[m] : 0, b && b->have[m], m);
                    fprintf(f, " %s |", buf);
                    if (i && mgr_rpt_ratio(a, b, m, &rt, &better))
                        fprintf(f, " %.3f%s |", rt,
                                better > 0   ? " (better)"
                                : better < 0 ? " (worse)"
                                             : "");
                    else if (i)
                        fputs(" - |", f);
                }
            }
            fputc('\n', f);
        }
    }
    for (size_t i = 0; i < n; i++) {
        fputs("\n## ", f);
        md(f, runs[i].label);
        fputs("\n\n", f);
        md_head(f, "test", 1);
        for (size_t j = 0; j < runs[i].ntests; j++) {
            fputs("| ", f);
            md(f, runs[i].tests[j].name);
            fputs(" |", f);
            md_figs(f, mgr_rpt_all_fig(&runs[i].tests[j]));
            md_status(f, runs[i].tests[j].all);
            fputc('\n', f);
        }
        for (size_t j = 0; j < runs[i].ntests; j++) {
            const struct mgr_rpt_test *t = &runs[i].tests[j];
            fprintf(f, "\n### Test %d: ", t->idx);
            md(f, t->name);
            fputs("\n\n", f);
            md_head(f, "node | worker", 2);
            for (size_t k = 0; k < t->nrows; k++) {
                const struct mgr_rpt_row *r = &t->rows[k];
                if (!r->type || (strcmp(r->type, "NODE") && strcmp(r->type, "WORKER")))
                    continue;
                fputs("| ", f);
                md(f, r->node);
                fputs(" | ", f);
                md(f, r->worker ? r->worker : "");
                fputs(" |", f);
                md_figs(f, &r->f);
                md_status(f, r);
                fputc('\n', f);
            }
            status_notes(f, t, md, "\n", "- ", "\n");
        }
    }
    free(names);
    return 0;
}
