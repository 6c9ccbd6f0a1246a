/* SPDX-License-Identifier: Apache-2.0 */
/* manager/console_page.c - the console page of `iofleet serve`
 * (manager/console_page.h): the HTML rendered from the console's state
 * under its lock, with the same tables the script (manager/console/
 * console.js) then keeps up to date, and the state itself as JSON in a
 * non-executed script element; the page's files; Chart.js read once.
 */
#include "manager/console_page.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/jsonw.h"
#include "common/text.h"
#include "manager/api_runs.h"
#include "manager/serve_live_int.h"

#define CONSOLE_MAX_CHARTJS (8u << 20)

/* manager/console/embed.cmake's output. */
extern const char mgr_console_console_js[], mgr_console_console_css[];
extern const size_t mgr_console_console_js_len, mgr_console_console_css_len;
extern const char mgr_console_signin_js[];
extern const size_t mgr_console_signin_js_len;
extern const char mgr_console_library_js[]; /* the plan library's controls */
extern const size_t mgr_console_library_js_len;
extern const char mgr_console_editor_js[];
extern const size_t mgr_console_editor_js_len;

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
    "<title>iofleet console</title>\n<link rel=\"icon\" href=\"data:,\">\n"
    "<link rel=\"stylesheet\" href=\"/console.css\">\n</head><body>\n"
    "<header><h1>iofleet console</h1> <span id=\"conn\" class=\"muted\">as loaded</span>";
static const char page_signout[] =
    " <button id=\"signout-button\" type=\"button\">Sign out</button>";

static const char fig_head[] =
    "<th>IOPS</th><th class=\"wide\">read IOPS</th><th class=\"wide\">write IOPS</th>"
    "<th>MiB/s</th><th class=\"wide\">read mean ms</th><th class=\"wide\">write mean ms</th>"
    "<th>read p99 ms</th><th>write p99 ms</th>";

static void page_text(struct iof_buf *b, const char *s)
{
    iof_text_add_html(b, s ? s : "");
}

/* As console.js size(). */
static void page_size(struct iof_buf *b, uint64_t bytes)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    size_t i = 0;

    if (!bytes) {
        iof_buf_addc(b, '-');
        return;
    }
    while (v >= 1024 && i < sizeof(u) / sizeof(u[0]) - 1) {
        v /= 1024;
        i++;
    }
    iof_buf_printf(b, "%.*f %s", i ? 1 : 0, v, u[i]);
}

/* <td[ class]>figure</td> as console.js fmt(): "-" when unknown. */
static void page_fig(struct iof_buf *b, double v, int prec, const char *cls)
{
    iof_buf_printf(b, cls ? "<td class=\"%s\">" : "<td>", cls);
    if (isfinite(v))
        iof_buf_printf(b, "%.*f", prec, v);
    else
        iof_buf_addc(b, '-');
    iof_buf_addstr(b, "</td>");
}

/* As console.js figRow(), without the closing </tr>. */
static void page_fig_row(struct iof_buf *b, const char *name, const struct live_figs *f,
                         const char *cls)
{
    iof_buf_printf(b, "<tr class=\"%s\"><td class=\"name\">", cls);
    page_text(b, name);
    iof_buf_addstr(b, "</td>");
    page_fig(b, f->v[LF_IOPS], 0, NULL);
    page_fig(b, f->v[LF_READ_IOPS], 0, "wide");
    page_fig(b, f->v[LF_WRITE_IOPS], 0, "wide");
    page_fig(b, f->v[LF_MIBPS], 2, NULL);
    page_fig(b, f->v[LF_READ_AVG_MS], 3, "wide");
    page_fig(b, f->v[LF_WRITE_AVG_MS], 3, "wide");
    page_fig(b, f->v[LF_READ_P99_MS], 3, NULL);
    page_fig(b, f->v[LF_WRITE_P99_MS], 3, NULL);
}

/* A wall clock time in ns as the API writes it: RFC 3339 UTC to the second. */
static void page_time(struct iof_buf *b, uint64_t ns)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    char text[32];

    if (!ns || !gmtime_r(&t, &tm) || !strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm))
        iof_buf_addstr(b, "-");
    else
        iof_buf_addstr(b, text);
}

void mgr_console_agent_row(struct iof_buf *b, const char *name, const char *status, bool up,
                           const char *certificate, uint64_t connected_ns, uint64_t left_ns,
                           uint32_t cpus, uint64_t memory, const char *disks, const char *software,
                           const char *where)
{
    iof_buf_addstr(b, "<tr><td class=\"name\">");
    page_text(b, name);
    iof_buf_printf(b, "</td><td class=\"%s\">", up ? "ok" : "bad");
    page_text(b, status);
    iof_buf_addstr(b, "</td><td class=\"wrap cert\">");
    page_text(b, certificate ? certificate : "none (plain TCP)");
    iof_buf_addstr(b, "</td><td class=\"seen\">");
    if (up) {
        iof_buf_addstr(b, "now, since ");
        page_time(b, connected_ns);
    } else {
        page_time(b, left_ns);
    }
    if (cpus)
        iof_buf_printf(b, "</td><td>%u</td><td class=\"wide\">", cpus);
    else
        iof_buf_addstr(b, "</td><td>-</td><td class=\"wide\">");
    page_size(b, memory);
    iof_buf_addstr(b, "</td><td class=\"wrap\">");
    page_text(b, disks && *disks ? disks : "-");
    iof_buf_addstr(b, "</td><td class=\"wide\">");
    page_text(b, software && *software ? software : "-");
    iof_buf_addstr(b, "</td><td class=\"wrap wide\">");
    page_text(b, where);
    iof_buf_addstr(b, "</td></tr>");
}

void mgr_console_disks(const struct proto_inventory *inv, char *out, size_t cap)
{
    struct iof_buf b;
    char *text;
    size_t len;

    iof_buf_init(&b, cap);
    if (inv->workdir.path) {
        iof_buf_printf(&b, "workdir %s (%s, ", inv->workdir.path,
                       inv->workdir.fstype ? inv->workdir.fstype : "?");
        page_size(&b, inv->workdir.free);
        iof_buf_printf(&b, " free%s)", inv->workdir.ram_backed == 1 ? ", RAM" : "");
    }
    for (size_t i = 0; i < inv->ntargets; i++) {
        const struct proto_target_info *t = &inv->targets[i];
        iof_buf_printf(&b, "%s%s ", b.len ? "; " : "", t->path ? t->path : "?");
        page_size(&b, t->size);
        if (t->model)
            iof_buf_printf(&b, " %s", t->model);
        if (t->ram_backed == 1)
            iof_buf_addstr(&b, " (RAM)");
    }
    text = iof_buf_take(&b, &len);
    snprintf(out, cap, "%s", text && len ? text : "-");
    free(text);
}

static const char *page_status(const struct mgr_serve_live *l)
{
    if (!l->id)
        return "";
    if (l->running)
        return l->stopping ? "stopping" : "running";
    return l->exit_code == 0 ? "ok" : l->exit_code == 130 ? "interrupted" : "failed";
}

/* One bar of page_bars(): a node's (or ALL's) figures. */
struct page_bar {
    const char *name;
    const struct live_figs *f;
};

/* As console.js showBars(): per figure a bar per row (rows[0] ALL), its width a class
 * w0..w100 of console.css (the page's policy allows no style attribute). */
static void page_bars(struct iof_buf *b, const struct page_bar *rows, size_t n)
{
    static const struct {
        int fig, prec;
        const char *title;
    } sets[] = {{LF_IOPS, 0, "Total I/Os per second"},
                {LF_MIBPS, 2, "MiB/s"},
                {LF_AVG_MS, 3, "mean latency (ms)"},
                {LF_P99_MS, 3, "p99 latency (ms)"}};

    for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
        double max = 0;
        for (size_t i = 0; i < n; i++) {
            double v = rows[i].f->v[sets[s].fig];
            if (isfinite(v) && v > max)
                max = v;
        }
        iof_buf_printf(b, "<div class=\"barset\"><h4>%s</h4>", sets[s].title);
        for (size_t i = 0; i < n; i++) {
            double v = rows[i].f->v[sets[s].fig];
            long w = max > 0 && isfinite(v) && v > 0 ? lround(v / max * 100) : 0;
            iof_buf_printf(b, "<div class=\"bar-row%s\"><span class=\"bar-name\">",
                           i ? "" : " all");
            page_text(b, rows[i].name);
            iof_buf_printf(b,
                           "</span><span class=\"bar\"><span class=\"bar-fill w%ld\"></span>"
                           "</span><span class=\"bar-value\">",
                           w);
            if (isfinite(v))
                iof_buf_printf(b, "%.*f", sets[s].prec, v);
            else
                iof_buf_addc(b, '-');
            iof_buf_addstr(b, "</span></div>");
        }
        iof_buf_addstr(b, "</div>");
    }
}

/* Lock held: the bars' selector and bars of the newest ended test once the run is over,
 * else of the last interval (all, its nodes pts[first, last)), as console.js draws them. */
static void page_run_bars(struct iof_buf *b, const struct mgr_serve_live *l,
                          const struct live_point *all, uint64_t first, uint64_t last)
{
    const struct live_test *t = l->id && !l->running && l->ndone ? &l->tests[l->ndone - 1] : NULL;
    size_t n = t ? t->nrows : all ? (size_t)(last - first) : 0;
    struct page_bar *rows = NULL;

    iof_buf_addstr(b, "<h3>Bars <select id=\"bars-test\" aria-label=\"the test the bars "
                      "show\"><option value=\"live\">last interval</option>");
    for (size_t i = 0; l->id && i < l->ndone; i++) {
        const struct live_test *x = &l->tests[i];
        iof_buf_printf(b, "<option value=\"%zu\"%s>test %zu: ", x->index, x == t ? " selected" : "",
                       x->index);
        page_text(b, x->spec);
        if (x->cycle[0]) {
            iof_buf_addstr(b, " [");
            page_text(b, x->cycle);
            iof_buf_addc(b, ']');
        }
        iof_buf_addstr(b, "</option>");
    }
    iof_buf_addstr(b, "</select></h3>\n<div id=\"bars\" class=\"bars\">");
    if ((t || all) && (rows = calloc(n + 1, sizeof(*rows)))) {
        rows[0] = (struct page_bar){"ALL", t ? &t->all : &all->f};
        for (size_t i = 0; i < n; i++) {
            uint32_t node = t ? t->rows[i].node : l->pts[(first + i) % MGR_LIVE_POINTS].node;
            rows[i + 1].name = node && node <= l->nnames ? l->names[node - 1] : "?";
            rows[i + 1].f = t ? &t->rows[i].f : &l->pts[(first + i) % MGR_LIVE_POINTS].f;
        }
        page_bars(b, rows, n + 1);
    } else if (t || all) {
        b->err = -ENOMEM;
    }
    free(rows);
    iof_buf_addstr(b, "</div></section>\n");
}

/* Lock held: the run section. */
static void page_run(struct iof_buf *b, const struct mgr_serve_live *l)
{
    const struct live_point *all = NULL;
    uint64_t last = 0, first = 0; /* the last interval: its nodes [first, last), ALL last */

    if (l->pending > l->run_pt0 && l->pending - 1 + MGR_LIVE_POINTS >= l->npts) {
        last = first = l->pending - 1;
        all = &l->pts[last % MGR_LIVE_POINTS];
        while (first > l->run_pt0 && first - 1 + MGR_LIVE_POINTS >= l->npts &&
               l->pts[(first - 1) % MGR_LIVE_POINTS].node)
            first--;
    }
    iof_buf_addstr(b, "<section id=\"run\"><h2>Run <span id=\"run-id\">");
    if (l->id)
        iof_buf_printf(b, "#%lld", (long long)l->id);
    iof_buf_addstr(b, "</span></h2>\n<p><b id=\"run-plan\">");
    page_text(b, l->id ? l->plan : "no run yet");
    iof_buf_printf(b, "</b> <span id=\"run-state\"%s>%s</span> <span id=\"run-test\">",
                   l->id && !l->running && l->exit_code ? " class=\"bad\"" : "", page_status(l));
    if (l->id && l->cur) {
        iof_buf_printf(b, "test %zu/%zu: ", l->cur, l->ntests);
        page_text(b, l->spec);
        if (l->cycle[0]) {
            iof_buf_addstr(b, " [");
            page_text(b, l->cycle);
            iof_buf_addc(b, ']');
        }
    }
    iof_buf_printf(b, "</span> <button id=\"stop-button\" type=\"button\"%s>Stop</button></p>\n",
                   l->id && l->running ? "" : " disabled");
    iof_buf_addstr(b, "<p><label>figures <select id=\"chart-dir\"><option value=\"total\">"
                      "read + write</option><option value=\"read\">read</option><option "
                      "value=\"write\">write</option></select></label></p>\n"
                      "<p id=\"no-charts\" class=\"muted\" hidden>No chart: this manager has no "
                      "Chart.js (Debian's libjs-chart.js); the tables are complete.</p>\n"
                      "<div class=\"charts\"><div class=\"chart\"><canvas id=\"chart-iops\">"
                      "</canvas></div><div class=\"chart\"><canvas id=\"chart-mibps\"></canvas>"
                      "</div><div class=\"chart\"><canvas id=\"chart-p99\"></canvas></div></div>\n"
                      "<h3>Last interval <span id=\"interval-at\" class=\"muted\">");
    if (all)
        iof_buf_printf(b, "test %u, interval %llu, %.0f s into the run", all->test,
                       (unsigned long long)all->k + 1, all->t);
    iof_buf_printf(b,
                   "</span></h3>\n<div class=\"scroll\"><table id=\"interval\"><thead><tr>"
                   "<th class=\"l\">node</th>%s</tr></thead><tbody id=\"interval-body\">",
                   fig_head);
    if (all) {
        page_fig_row(b, "ALL", &all->f, "all");
        iof_buf_addstr(b, "</tr>");
        for (uint64_t i = first; i < last; i++) {
            const struct live_point *p = &l->pts[i % MGR_LIVE_POINTS];
            page_fig_row(b, p->node && p->node <= l->nnames ? l->names[p->node - 1] : "?", &p->f,
                         "node");
            iof_buf_addstr(b, "</tr>");
        }
    }
    iof_buf_printf(b,
                   "</tbody></table></div>\n<h3>Tests</h3>\n<div class=\"scroll\"><table "
                   "id=\"summary\"><thead><tr><th class=\"l\">test / node</th>%s<th "
                   "class=\"l\">status</th></tr></thead><tbody id=\"summary-body\">",
                   fig_head);
    for (size_t i = 0; i < l->ndone; i++) {
        const struct live_test *t = &l->tests[i];
        struct iof_buf name;
        iof_buf_init(&name, 0);
        iof_buf_printf(&name, "%zu. %s", t->index, t->spec);
        if (t->cycle[0])
            iof_buf_printf(&name, " [%s]", t->cycle);
        page_fig_row(b, name.err ? t->spec : iof_buf_str(&name), &t->all,
                     t->status == MGR_TEST_OK ? "all" : "all bad");
        iof_buf_free(&name);
        iof_buf_printf(b, "<td class=\"l\">%s</td></tr>", mgr_test_status_name(t->status));
        for (size_t k = 0; k < t->nrows; k++) {
            const struct live_row *r = &t->rows[k];
            page_fig_row(b, r->node && r->node <= l->nnames ? l->names[r->node - 1] : "?", &r->f,
                         "node");
            iof_buf_printf(b, "<td class=\"l\">%s</td></tr>", mgr_row_status_name(r->status));
        }
    }
    iof_buf_addstr(b, "</tbody></table></div>\n");
    page_run_bars(b, l, all, first, last);
}

/* The start form: the plan editor's containers (manager/console/editor.js fills them,
 * and shows them instead of the textarea) above the plan's JSON, which works alone. */
static const char page_form[] =
    "<section id=\"start\"><h2>Start a run</h2><form id=\"start-form\">"
    "<p><label>plan file <input type=\"file\" id=\"plan-file\" "
    "accept=\".json,application/json\"></label></p>"
    "<p id=\"editor-tabs\" class=\"tabs\" hidden><button type=\"button\" "
    "id=\"editor-form-tab\" aria-pressed=\"true\">Form</button><button type=\"button\" "
    "id=\"editor-json-tab\" aria-pressed=\"false\">JSON</button></p>"
    "<div id=\"editor\" hidden><p id=\"editor-note\" class=\"muted\" role=\"status\"></p>"
    "<fieldset id=\"editor-fields\"><legend>Plan</legend><p id=\"editor-run\"></p>"
    "<h3>Access specifications</h3><div id=\"editor-specs\"></div>"
    "<p><button type=\"button\" id=\"spec-add\">Add spec</button></p>"
    "<h3>Worker groups</h3><div id=\"editor-groups\"></div>"
    "<p><button type=\"button\" id=\"group-add\">Add worker group</button></p>"
    "<h3>Cycling</h3><p id=\"editor-cycle\"></p>"
    "</fieldset></div>"
    "<textarea id=\"plan-text\" spellcheck=\"false\" placeholder=\"a plan, as JSON "
    "(iofleet-plan(5)); checked as iofleet validate checks it\"></textarea>"
    "<p id=\"destroy\" class=\"bad\" hidden><label><input type=\"checkbox\" "
    "id=\"destroy-confirm\"> I know this plan writes to devices, destroying their data: "
    "<span id=\"destroy-what\"></span></label></p>"
    "<p><button type=\"button\" id=\"check-button\">Check</button>"
    "<button type=\"submit\" id=\"start-button\">Start</button></p>"
    "<p id=\"plan-message\" role=\"status\"></p></form></section>\n";

/* --- the history (GET /api/v1/runs) --------------------------------------------------------- */

static const char *page_jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double page_jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* A run's downloads, as console.js DOWNLOADS lists them: the report and
 * the result files (GET /api/v1/runs/ID/...). */
static const struct {
    const char *path, *suffix, *label;
} page_downloads[] = {
    {"report.html", ".html", "report"},
    {"results.csv", ".csv", "csv"},
    {"iometer.csv", "-iometer.csv", "iometer"},
    {"results.json", ".json", "json"},
};

/* One run of the list as console.js historyRow() writes it. */
static void page_history_row(struct iof_buf *b, const cJSON *r)
{
    long long id = (long long)page_jnum(r, "id");
    const char *status = page_jstr(r, "status"), *tag = page_jstr(r, "tag");
    double tests = page_jnum(r, "tests"), planned = page_jnum(r, "tests_planned");
    bool bad = status && (!strcmp(status, "failed") || !strcmp(status, "interrupted"));

    iof_buf_printf(b, "<tr data-id=\"%lld\"><td><input type=\"checkbox\" class=\"pick\" ", id);
    iof_buf_printf(b, "value=\"%lld\" aria-label=\"compare run %lld\"></td>", id, id);
    iof_buf_printf(b, "<td>%lld</td><td class=\"name\">", id);
    page_text(b, page_jstr(r, "plan"));
    iof_buf_addstr(b, "</td><td class=\"l\">");
    page_text(b, page_jstr(r, "start_time"));
    iof_buf_addstr(b, bad ? "</td><td class=\"l bad\">" : "</td><td class=\"l\">");
    page_text(b, status);
    iof_buf_addstr(b, "</td><td class=\"name\">");
    page_text(b, tag);
    iof_buf_addstr(b, "</td><td>");
    if (tests >= 0)
        iof_buf_printf(b, "%.0f", tests);
    if (planned >= 0)
        iof_buf_printf(b, "/%.0f", planned);
    iof_buf_addstr(b, "</td><td class=\"l\"><button type=\"button\" class=\"tag\">tag</button>");
    iof_buf_addstr(b, "<button type=\"button\" class=\"delete\">delete</button>");
    for (size_t i = 0; i < sizeof(page_downloads) / sizeof(page_downloads[0]); i++) {
        iof_buf_printf(b, "<a href=\"/api/v1/runs/%lld/%s\" ", id, page_downloads[i].path);
        iof_buf_printf(b, "download=\"iofleet-run-%lld%s\">%s</a>", id, page_downloads[i].suffix,
                       page_downloads[i].label);
    }
    iof_buf_addstr(b, "</td></tr>");
}

static const char page_history_form[] =
    "<form id=\"history-form\"><input id=\"history-q\" type=\"search\" placeholder=\"plan or "
    "tag\" aria-label=\"search\"> <input id=\"history-tag\" type=\"search\" placeholder=\"tag\" "
    "aria-label=\"tag\" size=\"10\"> <button type=\"submit\" id=\"history-search\">Search"
    "</button></form>\n";

/* POST /api/v1/runs/prune's two rules (console.js prune()). */
static const char page_prune_form[] =
    "<form id=\"prune-form\">Prune: keep the newest <input id=\"prune-keep\" type=\"number\" "
    "min=\"0\" step=\"1\" size=\"4\" aria-label=\"keep the newest N runs\"> runs, remove runs "
    "older than <input id=\"prune-days\" type=\"number\" min=\"1\" step=\"1\" size=\"4\" "
    "aria-label=\"remove runs older than D days\"> days <button type=\"submit\" "
    "id=\"prune-button\">Prune</button></form>\n";

static const char page_history_head[] =
    "<div class=\"scroll\"><table id=\"history-list\"><thead><tr><th></th><th>id</th><th "
    "class=\"l\">plan</th><th class=\"l\">started</th><th class=\"l\">status</th><th "
    "class=\"l\">tag</th><th>tests</th><th class=\"l\"></th></tr></thead><tbody "
    "id=\"history-body\">";

static const char page_compare[] =
    "<div id=\"compare\" hidden><h3>Compare <span id=\"compare-runs\"></span></h3>\n"
    "<h4>Plan changes</h4><p id=\"compare-none\" class=\"muted\" hidden>the same plan</p>"
    "<div class=\"scroll\"><table id=\"compare-changes\"><thead><tr><th class=\"l\">path</th>"
    "<th class=\"l\">A</th><th class=\"l\">B</th></tr></thead><tbody "
    "id=\"compare-changes-body\"></tbody></table></div>\n<h4>Tests</h4><div class=\"scroll\">"
    "<table id=\"compare-tests\"><thead><tr><th class=\"l\">test / figure</th><th>A</th>"
    "<th>B</th><th>B/A</th></tr></thead><tbody id=\"compare-body\"></tbody></table></div>"
    "</div>";

/* The history section from list (GET /api/v1/runs's JSON; NULL: not read,
 * why in err). */
static void page_history(struct iof_buf *b, const cJSON *list, const char *err)
{
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(list, "runs");
    long long total = list ? (long long)page_jnum(list, "total") : 0;
    long long offset = list ? (long long)page_jnum(list, "offset") : 0;
    int n = cJSON_GetArraySize(runs);

    iof_buf_addstr(b, "<section id=\"history\"><h2>History <span id=\"history-total\" "
                      "class=\"muted\">");
    if (list && n)
        iof_buf_printf(b, "runs %lld-%lld of %lld", offset + 1, offset + n, total);
    else if (list)
        iof_buf_addstr(b, "no run recorded");
    iof_buf_addstr(b, "</span></h2>\n");
    iof_buf_addstr(b, page_history_form);
    iof_buf_addstr(b, err ? "<p id=\"history-message\" role=\"status\" class=\"bad\">"
                          : "<p id=\"history-message\" role=\"status\">");
    page_text(b, err);
    iof_buf_addstr(b, "</p>\n");
    iof_buf_addstr(b, page_history_head);
    for (int i = n - 1; i >= 0; i--) /* newest first */
        page_history_row(b, cJSON_GetArrayItem(runs, i));
    iof_buf_addstr(b, "</tbody></table></div>\n<p>");
    iof_buf_addstr(b, "<button type=\"button\" id=\"history-prev\" disabled>Newer</button>");
    iof_buf_addstr(b, offset > 0
                          ? "<button type=\"button\" id=\"history-next\">Older</button>"
                          : "<button type=\"button\" id=\"history-next\" disabled>Older</button>");
    iof_buf_addstr(b, "<button type=\"button\" id=\"compare-button\" disabled>Compare the two "
                      "picked</button></p>\n");
    iof_buf_addstr(b, page_prune_form);
    iof_buf_addstr(b, page_compare);
    iof_buf_addstr(b, "</section>\n");
}

/* The whole page, lock held; history as page_history(). */
static void page_render(struct iof_buf *b, const struct mgr_serve_live *l, bool signed_in,
                        const cJSON *list, const char *list_json, const char *err)
{
    unsigned up = 0;

    for (const char *p = l->agents_html; p && (p = strstr(p, "<td class=\"ok\">")); p++)
        up++;
    iof_buf_addstr(b, page_head);
    if (signed_in)
        iof_buf_addstr(b, page_signout);
    iof_buf_addstr(b, "</header>\n");
    iof_buf_printf(b,
                   "<section id=\"fleet\"><h2>Fleet <span id=\"agents-count\" class=\"muted\">"
                   "%u connected</span></h2>\n<div class=\"scroll\"><table id=\"agents\"><thead>"
                   "<tr><th class=\"l\">agent</th><th class=\"l\">status</th><th class=\"l\">"
                   "certificate</th><th class=\"l\">last seen</th><th>CPUs</th><th "
                   "class=\"wide\">memory</th><th class=\"l\">disks</th><th class=\"wide l\">"
                   "dynamo</th><th class=\"wide l\">endpoint / reason</th></tr></thead><tbody "
                   "id=\"agents-body\">",
                   up);
    if (l->agents_html)
        iof_buf_addstr(b, l->agents_html);
    iof_buf_addstr(b, "</tbody></table></div></section>\n");
    page_run(b, l);
    iof_buf_addstr(b, page_form);
    page_history(b, list, err);
    iof_buf_printf(b, "<script type=\"application/json\" id=\"state\">{\"seq\":%llu,\"agents\":",
                   (unsigned long long)l->seq);
    if (l->agents)
        iof_json_script_safe(b, l->agents, l->agents_len);
    else
        iof_buf_addstr(b, "{\"agents\":[]}");
    iof_buf_addstr(b, ",\"run\":");
    if (l->id) {
        struct iof_buf run;
        iof_buf_init(&run, b->max);
        mgr_live_json_run(&run, l);
        if (run.err)
            b->err = run.err;
        else
            iof_json_script_safe(b, run.p, run.len);
        iof_buf_free(&run);
    } else {
        iof_buf_addstr(b, "null");
    }
    iof_buf_addstr(b, ",\"history\":");
    if (list)
        iof_json_script_safe(b, list_json, strlen(list_json));
    else
        iof_buf_addstr(b, "null");
    iof_buf_addstr(b, "}</script>\n");
    if (l->chartjs)
        iof_buf_addstr(b, "<script src=\"/chart.js\"></script>\n");
    iof_buf_addstr(b, "<script src=\"/console.js\"></script>\n"
                      "<script src=\"/editor.js\"></script>\n"
                      "<script src=\"/library.js\"></script>\n</body></html>\n");
}

unsigned mgr_console_page(struct mgr_serve_live *l, const char *db, bool signed_in,
                          struct iof_buf *b, const char **type)
{
    struct mgr_api_runs_query q;
    struct iof_diag d = {{0}};
    struct iof_buf hb;
    cJSON *list = NULL;
    char *line = NULL;
    const char *err = NULL;

    /* The history first, outside the lock the events take. The list is
     * oldest first: the page opens on its last MGR_CONSOLE_HISTORY_PAGE. */
    mgr_api_runs_query_init(&q);
    q.f.limit = MGR_CONSOLE_HISTORY_PAGE;
    iof_buf_init(&hb, b->max);
    for (int pass = 0; pass < 2 && !err; pass++) {
        cJSON_Delete(list);
        list = NULL;
        hb.len = 0;
        if (!db || !*db)
            err = "this server keeps no run history";
        else if (mgr_api_runs_list(db, &q, &hb, &d))
            err = d.msg;
        else if (hb.err || !(list = cJSON_ParseWithLength(hb.p, hb.len)))
            err = "the run history could not be read: out of memory";
        else if (page_jnum(list, "total") <= MGR_CONSOLE_HISTORY_PAGE)
            break;
        else
            q.f.offset = (long)page_jnum(list, "total") - MGR_CONSOLE_HISTORY_PAGE;
    }
    if (!err && !(line = cJSON_PrintUnformatted(list))) /* one line in the page's JSON */
        err = "the run history could not be read: out of memory";
    *type = "text/html; charset=utf-8";
    pthread_mutex_lock(&l->mu);
    page_render(b, l, signed_in, err ? NULL : list, line, err);
    pthread_mutex_unlock(&l->mu);
    cJSON_free(line);
    cJSON_Delete(list);
    iof_buf_free(&hb);
    return 200;
}

unsigned mgr_console_get(struct mgr_serve_live *l, const char *url, struct iof_buf *b,
                         const char **type)
{
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        return mgr_console_page(l, NULL, false, b, type);
    if (!strcmp(url, "/console.js")) {
        *type = "text/javascript; charset=utf-8";
        iof_buf_add(b, mgr_console_console_js, mgr_console_console_js_len);
        return 200;
    }
    if (!strcmp(url, "/library.js")) {
        *type = "text/javascript; charset=utf-8";
        iof_buf_add(b, mgr_console_library_js, mgr_console_library_js_len);
        return 200;
    }
    if (!strcmp(url, "/editor.js")) {
        *type = "text/javascript; charset=utf-8";
        iof_buf_add(b, mgr_console_editor_js, mgr_console_editor_js_len);
        return 200;
    }
    if (!strcmp(url, "/console.css")) {
        *type = "text/css; charset=utf-8";
        iof_buf_add(b, mgr_console_console_css, mgr_console_console_css_len);
        return 200;
    }
    if (!strcmp(url, "/chart.js")) {
        /* Read once and never changed after serve started. */
        if (!l->chartjs)
            return 404;
        *type = "text/javascript; charset=utf-8";
        iof_buf_add(b, l->chartjs, l->chartjs_len);
        return 200;
    }
    return 404;
}

int mgr_console_chartjs(struct mgr_serve_live *l, char *msg, size_t cap)
{
    const char *path = getenv("IOF_CHARTJS");
    struct iof_buf b;
    char chunk[65536];
    size_t n, len;
    FILE *f;
    int rc = 0;

    if (!path || !*path)
        path = IOF_CHARTJS_PATH;
    if (!(f = fopen(path, "rb"))) {
        rc = -errno;
        snprintf(msg, cap,
                 "cannot read Chart.js at %s: %s (install Debian's libjs-chart.js, or set "
                 "IOF_CHARTJS to its chart.min.js)",
                 path, strerror(-rc));
        return rc;
    }
    iof_buf_init(&b, CONSOLE_MAX_CHARTJS);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        iof_buf_add(&b, chunk, n);
    if (ferror(f))
        rc = -EIO;
    fclose(f);
    if (!rc && b.err)
        rc = b.err;
    if (rc) {
        iof_buf_free(&b);
        snprintf(msg, cap, "cannot read Chart.js at %s: %s", path, strerror(-rc));
        return rc;
    }
    pthread_mutex_lock(&l->mu);
    free(l->chartjs);
    l->chartjs = iof_buf_take(&b, &len);
    l->chartjs_len = len;
    pthread_mutex_unlock(&l->mu);
    return 0;
}

/* --- sign-in (serve --http-tokens) --------------------------------------------------------- */

static const char signin_page[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
    "<title>iofleet console: sign in</title>\n<link rel=\"icon\" href=\"data:,\">\n"
    "<link rel=\"stylesheet\" href=\"/console.css\">\n"
    "<script src=\"/signin.js\" defer></script>\n</head><body>\n"
    "<header><h1>iofleet console</h1></header>\n<main>\n<section>\n<h2>Sign in</h2>\n"
    "<p>This server asks for a token (<code>iofleet serve token new</code> makes one). It is "
    "exchanged for a session cookie that lasts 12 hours or until serve stops.</p>\n"
    "<form id=\"signin\" autocomplete=\"off\">\n"
    "<label for=\"token\">Token</label>\n"
    "<input id=\"token\" name=\"token\" type=\"password\" size=\"72\" required autofocus>\n"
    "<button type=\"submit\">Sign in</button>\n</form>\n"
    "<p id=\"signin-msg\" class=\"muted\" role=\"status\"></p>\n"
    "</section>\n</main>\n</body></html>\n";

unsigned mgr_console_signin_get(const char *url, struct iof_buf *b, const char **type)
{
    if (!strcmp(url, "/")) {
        *type = "text/html; charset=utf-8";
        iof_buf_add(b, signin_page, sizeof(signin_page) - 1);
        return 200;
    }
    if (!strcmp(url, "/signin.js")) {
        *type = "text/javascript; charset=utf-8";
        iof_buf_add(b, mgr_console_signin_js, mgr_console_signin_js_len);
        return 200;
    }
    if (!strcmp(url, "/console.css")) {
        *type = "text/css; charset=utf-8";
        iof_buf_add(b, mgr_console_console_css, mgr_console_console_css_len);
        return 200;
    }
    return 404;
}
