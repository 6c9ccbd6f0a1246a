/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/report_data.c - `iofleet report`'s inputs: resolves each RUN (a
 * history id or tag, or a --json result file, imported into a private
 * in-memory store), loads it into the report model and hands the runs to
 * the HTML or Markdown writer. Chart.js is found and read here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/outfile.h"
#include "common/buf.h"
#include "manager/history/report_html.h"
#include "manager/sink.h"

static char *dup_col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? strdup((const char *)t) : NULL;
}

/* The figures from columns i.. in MGR_RPT_METRICS order. */
static void load_fig(sqlite3_stmt *s, int i, struct mgr_rpt_fig *f)
{
    for (int m = 0; m < MGR_RPT_NMETRICS; m++, i++) {
        f->have[m] = sqlite3_column_type(s, i) != SQLITE_NULL;
        f->v[m] = sqlite3_column_double(s, i);
    }
}

/* Column i as a double, or dflt when NULL. */
static double col_or(sqlite3_stmt *s, int i, double dflt)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? dflt : sqlite3_column_double(s, i);
}

#define RPT_COL(id, col, label, hb) ", " #col
#define RPT_COLS MGR_RPT_METRICS(RPT_COL)
#define RPT_SPLIT_COL(id, col) ", " #col

static int load_rows(struct mgr_store *st, int64_t test_id, struct mgr_rpt_test *t)
{
    static const char sql[] =
        "SELECT row_type, node, worker, target, status, duration_s, "
        "window_start_s, window_end_s" RPT_COLS MGR_RPT_SPLIT(
            RPT_SPLIT_COL) " FROM rows WHERE test_id = ? ORDER BY CASE row_type WHEN 'ALL' "
                           "THEN 0 WHEN 'NODE' THEN 1 WHEN 'WORKER' THEN 2 ELSE 3 END, node, "
                           "worker, target, seq";
    sqlite3_stmt *s;
    size_t cap = 0;
    int rc;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(s, 1, test_id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct mgr_rpt_row *r;
        if (iof_array_grow((void **)&t->rows, &cap, t->nrows + 1, sizeof(*t->rows))) {
            sqlite3_finalize(s);
            return -ENOMEM;
        }
        r = &t->rows[t->nrows++];
        *r = (struct mgr_rpt_row){.type = dup_col(s, 0),
                                  .node = dup_col(s, 1),
                                  .worker = dup_col(s, 2),
                                  .target = dup_col(s, 3),
                                  .status = dup_col(s, 4)};
        r->duration_s = col_or(s, 5, -1);
        r->window_start_s = col_or(s, 6, -1);
        r->window_end_s = col_or(s, 7, -1);
        load_fig(s, 8, &r->f);
        for (int k = 0; k < MGR_RPT_NSPLIT; k++) {
            r->have_split[k] = sqlite3_column_type(s, 8 + MGR_RPT_NMETRICS + k) != SQLITE_NULL;
            r->split[k] = sqlite3_column_double(s, 8 + MGR_RPT_NMETRICS + k);
        }
    }
    sqlite3_finalize(s);
    for (size_t i = 0; i < t->nrows; i++)
        if (t->rows[i].type && !strcmp(t->rows[i].type, "ALL"))
            t->all = &t->rows[i];
    return rc == SQLITE_DONE ? 0 : -EIO;
}

static int load_ivs(struct mgr_store *st, int64_t test_id, struct mgr_rpt_test *t)
{
    static const char sql[] = "SELECT interval, time_s, duration_s, node, lost, late" RPT_COLS
                              " FROM intervals WHERE test_id = ? ORDER BY interval, seq";
    sqlite3_stmt *s;
    size_t cap = 0;
    int rc;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(s, 1, test_id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct mgr_rpt_iv *v;
        if (iof_array_grow((void **)&t->ivs, &cap, t->nivs + 1, sizeof(*t->ivs))) {
            sqlite3_finalize(s);
            return -ENOMEM;
        }
        v = &t->ivs[t->nivs++];
        *v = (struct mgr_rpt_iv){.k = sqlite3_column_int64(s, 0),
                                 .time_s = sqlite3_column_double(s, 1),
                                 .duration_s = sqlite3_column_double(s, 2),
                                 .node = dup_col(s, 3),
                                 .lost = sqlite3_column_int(s, 4) != 0,
                                 .late = sqlite3_column_int(s, 5) != 0};
        load_fig(s, 6, &v->f);
        if (v->node && !strcmp(v->node, "ALL") && !v->late &&
            (t->measure_start_s < 0 || v->time_s - v->duration_s < t->measure_start_s))
            t->measure_start_s = v->time_s - v->duration_s;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The ALL row's read and write histograms merged (equal low_ns added). */
static int load_hist(struct mgr_store *st, int64_t test_id, struct mgr_rpt_test *t)
{
    static const char sql[] =
        "SELECT low, max(width), sum(c) FROM (SELECT json_extract(b.value, '$[0]') AS low, "
        "json_extract(b.value, '$[1]') AS width, json_extract(b.value, '$[2]') AS c FROM rows r, "
        "json_each(r.latency, '$.read.buckets') b WHERE r.test_id = ?1 AND r.row_type = 'ALL' "
        "AND json_type(r.latency, '$.read.buckets') = 'array' UNION ALL SELECT "
        "json_extract(b.value, '$[0]'), json_extract(b.value, '$[1]'), json_extract(b.value, "
        "'$[2]') FROM rows r, json_each(r.latency, '$.write.buckets') b WHERE r.test_id = ?1 AND "
        "r.row_type = 'ALL' AND json_type(r.latency, '$.write.buckets') = 'array') GROUP BY low "
        "ORDER BY low";
    sqlite3_stmt *s;
    size_t cap = 0;
    int rc;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(s, 1, test_id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (iof_array_grow((void **)&t->hist, &cap, t->nhist + 1, sizeof(*t->hist))) {
            sqlite3_finalize(s);
            return -ENOMEM;
        }
        t->hist[t->nhist++] = (struct mgr_rpt_bucket){.low_ns = sqlite3_column_double(s, 0),
                                                      .width_ns = sqlite3_column_double(s, 1),
                                                      .count = sqlite3_column_double(s, 2)};
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -EIO;
}

static int load_tests(struct mgr_store *st, struct mgr_rpt_run *r)
{
    static const char sql[] = "SELECT id, idx, spec, cycle, complete, interrupted, start_unix_ns "
                              "FROM tests WHERE run_id = ? ORDER BY idx";
    sqlite3_stmt *s;
    size_t cap = 0;
    int rc, err = 0;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(s, 1, r->id);
    while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct mgr_rpt_test *t;
        const char *spec = (const char *)sqlite3_column_text(s, 2);
        const char *cycle = (const char *)sqlite3_column_text(s, 3);
        int64_t test_id = sqlite3_column_int64(s, 0);

        if (iof_array_grow((void **)&r->tests, &cap, r->ntests + 1, sizeof(*r->tests))) {
            err = -ENOMEM;
            break;
        }
        t = &r->tests[r->ntests++];
        *t = (struct mgr_rpt_test){.idx = sqlite3_column_int(s, 1),
                                   .complete = sqlite3_column_int(s, 4) != 0,
                                   .interrupted = sqlite3_column_int(s, 5) != 0,
                                   .measure_start_s = -1};
        if (sqlite3_column_type(s, 6) != SQLITE_NULL && r->start_unix_ns)
            t->start_s = (double)(sqlite3_column_int64(s, 6) - r->start_unix_ns) / 1e9;
        if (cycle && *cycle) {
            size_t n = strlen(spec ? spec : "") + strlen(cycle) + 4;
            if ((t->name = malloc(n)))
                snprintf(t->name, n, "%s [%s]", spec ? spec : "", cycle);
        } else {
            t->name = strdup(spec ? spec : "");
        }
        t->spec = strdup(spec ? spec : "");
        t->cycle = strdup(cycle ? cycle : "");
        if (!t->name || !t->spec || !t->cycle)
            err = -ENOMEM;
        if (!err)
            err = load_rows(st, test_id, t);
        if (!err)
            err = load_ivs(st, test_id, t);
        if (!err)
            err = load_hist(st, test_id, t);
    }
    sqlite3_finalize(s);
    if (err)
        return err;
    return rc == SQLITE_DONE ? 0 : -EIO;
}

static int load_agents(struct mgr_store *st, struct mgr_rpt_run *r)
{
    static const char sql[] =
        "SELECT json_extract(doc, '$.name'), json_extract(doc, '$.hostname'), "
        "json_extract(doc, '$.kernel'), json_extract(doc, '$.software'), (SELECT "
        "group_concat(json_extract(t.value, '$.path') || ' (' || json_extract(t.value, '$.size') "
        "|| ' B)', ', ') FROM json_each(doc, '$.targets') t), json_extract(doc, '$.cpus'), "
        "json_extract(doc, '$.memory_bytes') FROM agents WHERE run_id = ? ORDER BY seq";
    sqlite3_stmt *s;
    size_t cap = 0;
    int rc;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(s, 1, r->id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (iof_array_grow((void **)&r->agentv, &cap, r->nagents + 1, sizeof(*r->agentv))) {
            sqlite3_finalize(s);
            return -ENOMEM;
        }
        r->agentv[r->nagents++] =
            (struct mgr_rpt_agent){.name = dup_col(s, 0),
                                   .hostname = dup_col(s, 1),
                                   .kernel = dup_col(s, 2),
                                   .software = dup_col(s, 3),
                                   .targets = dup_col(s, 4),
                                   .cpus = sqlite3_column_int64(s, 5),
                                   .memory_bytes = sqlite3_column_int64(s, 6)};
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -EIO;
}

int mgr_rpt_load(struct mgr_store *st, int64_t id, struct mgr_rpt_run *r, struct iof_diag *diag)
{
    static const char sql[] =
        "SELECT plan_name, tag, plan, iofleet_version, source, start_unix_ns, exit_code, "
        "(SELECT json_group_array(json(doc)) FROM (SELECT doc FROM agents WHERE run_id = ?1 "
        "ORDER BY seq)) FROM runs WHERE id = ?1";
    sqlite3_stmt *s;
    int rc, err;
    char label[160];

    *r = (struct mgr_rpt_run){.id = id};
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return iof_diag_set(diag, -EIO, "%s: %s", st->path, sqlite3_errmsg(st->db));
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        return iof_diag_set(diag, -ENOENT, "%s: no run %" PRId64, st->path, id);
    }
    r->plan_name = dup_col(s, 0);
    r->tag = dup_col(s, 1);
    r->plan = dup_col(s, 2);
    r->version = dup_col(s, 3);
    r->source = dup_col(s, 4);
    r->start_unix_ns = sqlite3_column_int64(s, 5);
    r->has_exit = sqlite3_column_type(s, 6) != SQLITE_NULL;
    r->exit_code = sqlite3_column_int(s, 6);
    r->agents = dup_col(s, 7);
    sqlite3_finalize(s);
    if (r->tag)
        snprintf(label, sizeof(label), "run %" PRId64 " (%s)", id, r->tag);
    else
        snprintf(label, sizeof(label), "run %" PRId64, id);
    r->label = strdup(label);
    err = r->label ? load_tests(st, r) : -ENOMEM;
    if (!err)
        err = load_agents(st, r);
    if (err)
        return iof_diag_set(diag, err, "%s: cannot load run %" PRId64 ": %s", st->path, id,
                            err == -EIO ? sqlite3_errmsg(st->db) : iof_strerror(err));
    return 0;
}

void mgr_rpt_free(struct mgr_rpt_run *r)
{
    for (size_t i = 0; i < r->ntests; i++) {
        struct mgr_rpt_test *t = &r->tests[i];
        for (size_t j = 0; j < t->nrows; j++) {
            free(t->rows[j].type);
            free(t->rows[j].node);
            free(t->rows[j].worker);
            free(t->rows[j].target);
            free(t->rows[j].status);
        }
        for (size_t j = 0; j < t->nivs; j++)
            free(t->ivs[j].node);
        free(t->rows);
        free(t->ivs);
        free(t->hist);
        free(t->name);
        free(t->spec);
        free(t->cycle);
    }
    for (size_t i = 0; i < r->nagents; i++) {
        struct mgr_rpt_agent *a = &r->agentv[i];
        free(a->name);
        free(a->hostname);
        free(a->kernel);
        free(a->software);
        free(a->targets);
    }
    free(r->agentv);
    free(r->tests);
    free(r->label);
    free(r->plan_name);
    free(r->tag);
    free(r->plan);
    free(r->agents);
    free(r->version);
    free(r->source);
    *r = (struct mgr_rpt_run){0};
}

const char *mgr_rpt_status_note(const struct mgr_rpt_test *t, const struct mgr_rpt_row *r,
                                char *buf, size_t cap)
{
    int st = mgr_row_status_parse(r->status);
    enum mgr_row_type type = MGR_ROW_NODE;
    double test_s = t->all ? t->all->duration_s : -1;

    if (r->type && !strcmp(r->type, "ALL"))
        type = MGR_ROW_ALL;
    else if (r->type && !strcmp(r->type, "GROUP"))
        type = MGR_ROW_GROUP;
    if (st <= MGR_STATUS_OK) {
        if (cap)
            buf[0] = '\0';
        return buf;
    }
    return mgr_status_note(buf, cap, type, (enum mgr_row_status)st, r->duration_s,
                           r->window_start_s, r->window_end_s, test_s);
}

const struct mgr_rpt_test *mgr_rpt_find(const struct mgr_rpt_run *r, const char *name)
{
    for (size_t i = 0; i < r->ntests; i++)
        if (!strcmp(r->tests[i].name, name))
            return &r->tests[i];
    return NULL;
}

/* --- Chart.js ---------------------------------------------------------------------------- */

/* The file's text (new) and the version from its banner ("3.9.1"). */
static char *read_chartjs(const char *path, char *version, size_t cap)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL, *v;
    long len;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len + 1))) {
        if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
            free(buf);
            buf = NULL;
        } else {
            buf[len] = '\0';
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    snprintf(version, cap, "unknown");
    v = strstr(buf, "Chart.js v");
    if (v && v - buf < 512) {
        size_t n = strspn(v + 10, "0123456789.");
        if (n && n < cap)
            snprintf(version, cap, "%.*s", (int)n, v + 10);
    }
    return buf;
}

/* --- the command ------------------------------------------------------------------------- */

/* A RUN naming an existing regular file is a result document. */
static bool is_file(const char *ref)
{
    struct stat st;
    return stat(ref, &st) == 0 && S_ISREG(st.st_mode);
}

int mgr_report_emit(const struct mgr_report_opts *o, FILE *f, struct iof_diag *diag)
{
    struct mgr_rpt_run *runs = calloc(o->nrefs, sizeof(*runs));
    struct mgr_store *hist = NULL, *mem = NULL;
    char version[32] = "", *chartjs = NULL;
    const char *cjs_path = getenv("IOF_CHARTJS");
    size_t n = 0;
    int rc = 0;

    if (!runs)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    if (o->format == MGR_REPORT_HTML) {
        if (!cjs_path || !*cjs_path)
            cjs_path = IOF_CHARTJS_PATH;
        errno = 0;
        chartjs = read_chartjs(cjs_path, version, sizeof(version));
        if (!chartjs) {
            rc = iof_diag_set(diag, -EIO,
                              "cannot read Chart.js at %s: %s (install Debian's "
                              "libjs-chart.js, or set IOF_CHARTJS to its chart.min.js; --format "
                              "md needs none)",
                              cjs_path, strerror(errno ? errno : ENOENT));
            free(runs);
            return rc;
        }
    }
    for (; n < o->nrefs && !rc; n++) {
        const char *ref = o->refs[n];
        int64_t id;
        if (!o->history_only && is_file(ref)) {
            char path[IOF_PATH_MAX];
            if (!mem && (rc = mgr_store_open(":memory:", &mem, diag)))
                break;
            if ((rc = mgr_store_import(mem, ref, NULL, &id, diag)) ||
                (rc = mgr_rpt_load(mem, id, &runs[n], diag)))
                break;
            /* A file's run is named by its file. */
            snprintf(path, sizeof(path), "%s", strrchr(ref, '/') ? strrchr(ref, '/') + 1 : ref);
            free(runs[n].label);
            runs[n].label = strdup(path);
            runs[n].id = 0;
            if (!runs[n].label)
                rc = iof_diag_set(diag, -ENOMEM, "out of memory");
            continue;
        }
        if (!hist) {
            char path[IOF_PATH_MAX];
            if (o->db)
                snprintf(path, sizeof(path), "%s", o->db);
            if ((!o->db && (rc = mgr_store_default_path(path, sizeof(path), diag))) ||
                (rc = mgr_store_open(path, &hist, diag)))
                break;
        }
        if (!(rc = mgr_store_resolve(hist, ref, &id, diag)))
            rc = mgr_rpt_load(hist, id, &runs[n], diag);
    }
    if (!rc) {
        if (o->format == MGR_REPORT_JSON) {
            struct iof_buf b = IOF_BUF_INIT;
            rc = mgr_rpt_json(&b, runs, n, diag);
            if (!rc && b.len && fwrite(b.p, 1, b.len, f) != b.len)
                rc = iof_diag_set(diag, -EIO, "write failed");
            iof_buf_free(&b);
        } else if ((o->format == MGR_REPORT_HTML ? mgr_rpt_html(f, runs, n, chartjs, version)
                                                 : mgr_rpt_md(f, runs, n))) {
            rc = iof_diag_set(diag, -EIO, "write failed");
        }
    }
    for (size_t i = 0; i < o->nrefs; i++)
        mgr_rpt_free(&runs[i]);
    free(runs);
    free(chartjs);
    mgr_store_close(hist);
    mgr_store_close(mem);
    return rc;
}

int mgr_report_write(const struct mgr_report_opts *o)
{
    struct iof_outfile of = IOF_OUTFILE_INIT;
    struct iof_diag d = {{0}};
    FILE *f = NULL;
    int rc;

    if (iof_outfile_open(&of, o->out, 0, o->force ? IOF_OUTFILE_FORCE : 0, &d) ||
        !(f = iof_outfile_stdio(&of))) {
        IOF_USER("iofleet report: %s", d.msg[0] ? d.msg : strerror(errno));
        iof_outfile_abort(&of);
        return 1;
    }
    rc = mgr_report_emit(o, f, &d);
    /* A report that could not be written whole leaves nothing behind. */
    if (rc) {
        iof_outfile_abort(&of);
        if (rc == -EIO && !strcmp(d.msg, "write failed"))
            IOF_USER("iofleet report: %s: write failed", o->out);
        else
            IOF_USER("iofleet report: %s", d.msg);
        return 1;
    }
    if (fflush(f) || ferror(f)) {
        iof_outfile_abort(&of);
        IOF_USER("iofleet report: %s: write failed", o->out);
        return 1;
    }
    if (iof_outfile_close(&of, false, &d)) {
        IOF_USER("iofleet report: %s", d.msg);
        return 1;
    }
    return 0;
}
