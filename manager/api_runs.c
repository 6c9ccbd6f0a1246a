/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_runs.c - the run history as `iofleet serve`'s API shows it
 * (GET /api/v1/runs and /api/v1/runs/ID, docs/api.md): the list `iofleet
 * runs --json` prints, and one run's tests and final rows as the report
 * loads them (manager/history/report_html.h). Each call opens its own
 * connection to the database: HTTP threads share nothing. */
#include "manager/api_runs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/jsonw.h"
#include "manager/history/report_html.h"
#include "manager/history/store.h"

int mgr_api_runs_list(const char *db, struct iof_buf *b, struct iof_diag *diag)
{
    struct mgr_store *st;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    int rc;

    if ((rc = mgr_store_open(db, &st, diag)))
        return rc;
    if (!(f = open_memstream(&text, &len))) {
        mgr_store_close(st);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    rc = mgr_store_list(st, true, f, diag);
    mgr_store_close(st);
    if (fclose(f) && !rc)
        rc = iof_diag_set(diag, -ENOMEM, "out of memory");
    if (!rc) {
        iof_json_open(b, '{');
        iof_json_key(b, "runs");
        iof_json_raw(b, text, len && text[len - 1] == '\n' ? len - 1 : len);
        iof_json_close(b, '}');
        iof_buf_addstr(b, "\n");
    }
    free(text);
    return rc;
}

static void runs_str(struct iof_buf *b, const char *key, const char *v)
{
    iof_json_key(b, key);
    iof_json_escape(b, v, IOF_JSON_TEXT);
}

static void runs_row(struct iof_buf *b, const struct mgr_rpt_row *r)
{
    static const char *const keys[MGR_RPT_NMETRICS] = {
#define RUNS_KEY(id, col, label, higher_better) [MGR_RPT_##id] = #col,
        MGR_RPT_METRICS(RUNS_KEY)
#undef RUNS_KEY
    };

    iof_json_open(b, '{');
    runs_str(b, "row_type", r->type);
    runs_str(b, "node", r->node);
    runs_str(b, "worker", r->worker);
    runs_str(b, "target", r->target);
    runs_str(b, "status", r->status);
    iof_json_key(b, "duration_s");
    if (r->duration_s >= 0)
        iof_json_dbl(b, r->duration_s);
    else
        iof_json_null(b);
    for (int m = 0; m < MGR_RPT_NMETRICS; m++) {
        iof_json_key(b, keys[m]);
        if (r->f.have[m])
            iof_json_dbl(b, r->f.v[m]);
        else
            iof_json_null(b);
    }
    iof_json_close(b, '}');
}

int mgr_api_runs_get(const char *db, int64_t id, struct iof_buf *b, struct iof_diag *diag)
{
    struct mgr_store *st;
    struct mgr_rpt_run r;
    int rc;

    if ((rc = mgr_store_open(db, &st, diag)))
        return rc;
    rc = mgr_rpt_load(st, id, &r, diag);
    mgr_store_close(st);
    if (rc)
        return rc;
    iof_json_open(b, '{');
    iof_json_key(b, "id");
    iof_json_u64(b, (uint64_t)r.id);
    runs_str(b, "plan_name", r.plan_name);
    runs_str(b, "tag", r.tag);
    iof_json_key(b, "start_time");
    mgr_store_json_time(b, r.start_unix_ns);
    iof_json_key(b, "exit_code");
    if (r.has_exit)
        iof_json_int(b, r.exit_code);
    else
        iof_json_null(b);
    iof_json_key(b, "status");
    iof_json_str(b, mgr_store_status_name(r.has_exit, r.exit_code));
    runs_str(b, "iofleet", r.version);
    iof_json_key(b, "tests");
    iof_json_open(b, '[');
    for (size_t t = 0; t < r.ntests; t++) {
        const struct mgr_rpt_test *te = &r.tests[t];
        iof_json_open(b, '{');
        iof_json_key(b, "index");
        iof_json_int(b, te->idx);
        runs_str(b, "spec", te->spec);
        runs_str(b, "cycle", te->cycle);
        iof_json_key(b, "complete");
        iof_json_bool(b, te->complete);
        iof_json_key(b, "interrupted");
        iof_json_bool(b, te->interrupted);
        iof_json_key(b, "results");
        iof_json_open(b, '[');
        for (size_t k = 0; k < te->nrows; k++)
            runs_row(b, &te->rows[k]);
        iof_json_close(b, ']');
        iof_json_key(b, "intervals");
        iof_json_u64(b, te->nivs);
        iof_json_close(b, '}');
    }
    iof_json_close(b, ']');
    iof_json_close(b, '}');
    iof_buf_addstr(b, "\n");
    mgr_rpt_free(&r);
    return b->err;
}
