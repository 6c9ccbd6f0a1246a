/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/report_json.c - the comparison of runs as one JSON
 * document: `iofleet report --format json` writes it and serve's GET
 * /api/v1/runs/compare answers it, both through mgr_rpt_json, so the two
 * are the same bytes. The figures and ratios are the report's
 * (report_html.c); what changed in the plans is found by SQLite's
 * json_tree over the two plan texts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "manager/history/report_html.h"

static const char *const split_key[MGR_RPT_NSPLIT] = {
#define RPT_SPLIT_KEY(id, col) [MGR_RPT_##id] = #col,
    MGR_RPT_SPLIT(RPT_SPLIT_KEY)
#undef RPT_SPLIT_KEY
};

static void json_num(struct iof_buf *b, const char *key, double v, bool have)
{
    iof_json_key(b, key);
    if (have)
        iof_json_dbl(b, v);
    else
        iof_json_null(b);
}

static void json_text(struct iof_buf *b, const char *key, const char *v)
{
    iof_json_key(b, key);
    iof_json_escape(b, v, IOF_JSON_TEXT);
}

/* The leaves of a JSON text (and its empty objects and arrays): path and
 * the value as JSON text. */
#define PLAN_LEAVES(p)                                                                             \
    "SELECT fullkey AS k, CASE type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN "       \
    "'null' THEN 'null' WHEN 'text' THEN json_quote(value) ELSE CAST(value AS TEXT) END AS v "     \
    "FROM json_tree(" p ") WHERE type NOT IN ('object', 'array') OR value IN ('{}', '[]')"

/* What changed from plan a to plan b: [{"path", "a", "b"}], a value absent
 * on one side null, in path order. */
static int plan_changes(struct iof_buf *b, sqlite3 *db, const char *pa, const char *pb,
                        struct iof_diag *diag)
{
    static const char sql[] = "WITH a AS (" PLAN_LEAVES("?1") "), b AS (" PLAN_LEAVES(
        "?2") ") SELECT a.k, a.v, b.v FROM a LEFT JOIN b ON a.k = b.k WHERE b.v IS NOT a.v "
              "UNION ALL SELECT b.k, NULL, b.v FROM b WHERE b.k NOT IN (SELECT k FROM a) "
              "ORDER BY 1";
    sqlite3_stmt *s;
    int rc;

    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return iof_diag_set(diag, -EIO, "plan comparison: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(s, 1, pa, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, pb, -1, SQLITE_STATIC);
    iof_json_open(b, '[');
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        iof_json_open(b, '{');
        json_text(b, "path", (const char *)sqlite3_column_text(s, 0));
        for (int i = 1; i <= 2; i++) {
            const char *v = (const char *)sqlite3_column_text(s, i);
            iof_json_key(b, i == 1 ? "a" : "b");
            if (v)
                iof_json_raw(b, v, strlen(v));
            else
                iof_json_null(b);
        }
        iof_json_close(b, '}');
    }
    iof_json_close(b, ']');
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return iof_diag_set(diag, -EIO, "plan comparison: %s", sqlite3_errmsg(db));
    return 0;
}

static int json_run(struct iof_buf *b, sqlite3 *db, const struct mgr_rpt_run *first,
                    const struct mgr_rpt_run *r, struct iof_diag *diag)
{
    int rc = 0;

    iof_json_open(b, '{');
    iof_json_key(b, "id");
    if (r->id)
        iof_json_u64(b, (uint64_t)r->id);
    else
        iof_json_null(b);
    json_text(b, "label", r->label);
    json_text(b, "plan_name", r->plan_name);
    json_text(b, "tag", r->tag);
    iof_json_key(b, "start_time");
    mgr_store_json_time(b, r->start_unix_ns);
    iof_json_key(b, "exit_code");
    if (r->has_exit)
        iof_json_int(b, r->exit_code);
    else
        iof_json_null(b);
    iof_json_key(b, "status");
    iof_json_str(b, mgr_store_status_name(r->has_exit, r->exit_code));
    json_text(b, "iofleet", r->version);
    iof_json_key(b, "tests");
    iof_json_u64(b, r->ntests);
    /* The first run is what the others are compared with. */
    iof_json_key(b, "plan_changes");
    if (r == first || !first->plan || !r->plan)
        iof_json_null(b);
    else
        rc = plan_changes(b, db, first->plan, r->plan, diag);
    iof_json_close(b, '}');
    return rc;
}

/* One run's figures of a test: its ALL row. */
static void json_figs(struct iof_buf *b, const struct mgr_rpt_test *t)
{
    const struct mgr_rpt_row *all = t->all;

    iof_json_open(b, '{');
    iof_json_key(b, "index");
    iof_json_int(b, t->idx);
    iof_json_key(b, "complete");
    iof_json_bool(b, t->complete);
    iof_json_key(b, "interrupted");
    iof_json_bool(b, t->interrupted);
    json_text(b, "status", all ? all->status : NULL);
    for (int m = 0; m < MGR_RPT_NMETRICS; m++)
        json_num(b, mgr_rpt_metric_key((enum mgr_rpt_metric)m), all ? all->f.v[m] : 0,
                 all && all->f.have[m]);
    for (int k = 0; k < MGR_RPT_NSPLIT; k++)
        json_num(b, split_key[k], all ? all->split[k] : 0, all && all->have_split[k]);
    iof_json_close(b, '}');
}

static void json_test(struct iof_buf *b, const struct mgr_rpt_run *runs, size_t n, const char *name)
{
    const struct mgr_rpt_fig *a = mgr_rpt_all_fig(mgr_rpt_find(&runs[0], name));

    iof_json_open(b, '{');
    json_text(b, "name", name);
    iof_json_key(b, "runs");
    iof_json_open(b, '[');
    for (size_t i = 0; i < n; i++) {
        const struct mgr_rpt_test *t = mgr_rpt_find(&runs[i], name);
        if (t)
            json_figs(b, t);
        else
            iof_json_null(b);
    }
    iof_json_close(b, ']');
    /* ratios[i]: run i over the first run, per compared metric. */
    iof_json_key(b, "ratios");
    iof_json_open(b, '[');
    for (size_t i = 0; i < n; i++) {
        const struct mgr_rpt_fig *fb = mgr_rpt_all_fig(mgr_rpt_find(&runs[i], name));
        if (!i) {
            iof_json_null(b);
            continue;
        }
        iof_json_open(b, '{');
        for (size_t k = 0; k < mgr_rpt_ncmp; k++) {
            enum mgr_rpt_metric m = mgr_rpt_cmp_metrics[k];
            double rt;
            int better;
            iof_json_key(b, mgr_rpt_metric_key(m));
            if (!mgr_rpt_ratio(a, fb, m, &rt, &better)) {
                iof_json_null(b);
                continue;
            }
            iof_json_open(b, '{');
            iof_json_key(b, "ratio");
            iof_json_dbl(b, rt);
            iof_json_key(b, "change");
            iof_json_str(b, better > 0 ? "better" : better < 0 ? "worse" : "same");
            iof_json_close(b, '}');
        }
        iof_json_close(b, '}');
    }
    iof_json_close(b, ']');
    iof_json_close(b, '}');
}

int mgr_rpt_json(struct iof_buf *b, const struct mgr_rpt_run *runs, size_t n, struct iof_diag *diag)
{
    const char **names = NULL;
    size_t nnames;
    sqlite3 *db = NULL;
    int rc = 0;

    if (n < 2)
        return iof_diag_set(diag, -EINVAL, "a comparison needs two or more runs, got %zu", n);
    nnames = mgr_rpt_test_names(runs, n, &names);
    if (!names && nnames == 0) {
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any = any || runs[i].ntests;
        if (any)
            return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
        SQLITE_OK) {
        sqlite3_close(db);
        free(names);
        return iof_diag_set(diag, -ENOMEM, "plan comparison: cannot open SQLite in memory");
    }
    iof_json_open(b, '{');
    iof_json_key(b, "runs");
    iof_json_open(b, '[');
    for (size_t i = 0; i < n && !rc; i++)
        rc = json_run(b, db, &runs[0], &runs[i], diag);
    iof_json_close(b, ']');
    iof_json_key(b, "metrics");
    iof_json_open(b, '[');
    for (size_t k = 0; k < mgr_rpt_ncmp; k++)
        iof_json_str(b, mgr_rpt_metric_key(mgr_rpt_cmp_metrics[k]));
    iof_json_close(b, ']');
    iof_json_key(b, "tests");
    iof_json_open(b, '[');
    for (size_t q = 0; q < nnames && !rc; q++)
        json_test(b, runs, n, names[q]);
    iof_json_close(b, ']');
    iof_json_close(b, '}');
    iof_buf_addstr(b, "\n");
    sqlite3_close(db);
    free(names);
    if (!rc && b->err)
        rc = iof_diag_set(diag, b->err, "the comparison: %s", iof_strerror(b->err));
    return rc;
}
