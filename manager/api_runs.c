/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_runs.c - the run history as `iofleet serve`'s API shows it
 * (GET /api/v1/runs and /api/v1/runs/ID, docs/api.md): the list `iofleet
 * runs --json` prints, and one run's tests and final rows as the report
 * loads them (manager/history/report_html.h). Each call opens its own
 * connection to the database: HTTP threads share nothing. */
#include "manager/api_runs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "manager/history/export.h"
#include "manager/history/query.h"
#include "manager/history/report_html.h"

/* --- GET /api/v1/runs?tag=&q=&since=&limit=&offset= ------------------------------------- */

enum { RUNS_P_TAG, RUNS_P_Q, RUNS_P_SINCE, RUNS_P_LIMIT, RUNS_P_OFFSET, RUNS_NP };

static const char *const runs_params[RUNS_NP] = {
    [RUNS_P_TAG] = "tag",     [RUNS_P_Q] = "q",           [RUNS_P_SINCE] = "since",
    [RUNS_P_LIMIT] = "limit", [RUNS_P_OFFSET] = "offset",
};

void mgr_api_runs_query_init(struct mgr_api_runs_query *q)
{
    memset(q, 0, sizeof(*q));
}

/* A text value (tag, q) copied into buf; too long or with control
 * characters refused. */
static int runs_param_text(const char *v, char *buf, size_t cap, bool is_tag, struct iof_diag *diag)
{
    int rc;

    if (strlen(v) >= cap)
        return iof_diag_set(diag, -EINVAL, "is over %zu bytes", cap - 1);
    if (is_tag && (rc = mgr_query_tag(v, false, diag)))
        return rc;
    if (!is_tag && !*v)
        return iof_diag_set(diag, -EINVAL, "must not be empty");
    memcpy(buf, v, strlen(v) + 1);
    return 0;
}

int mgr_api_runs_param(struct mgr_api_runs_query *q, const char *key, const char *value,
                       int64_t now_ns, struct iof_diag *diag)
{
    struct iof_diag d = {{0}};
    long n = 0;
    int p, rc;

    for (p = 0; p < RUNS_NP && strcmp(key, runs_params[p]); p++)
        ;
    if (p == RUNS_NP)
        return iof_diag_set(diag, -EINVAL,
                            "unknown parameter '%.64s' (GET /api/v1/runs takes tag, q, since, "
                            "limit and offset)",
                            key);
    if (q->seen & (1u << p))
        return iof_diag_set(diag, -EINVAL, "parameter '%s' is given twice", key);
    q->seen |= 1u << p;
    if (!value)
        return iof_diag_set(diag, -EINVAL, "parameter '%s' needs a value (%s=...)", key, key);
    switch (p) {
    case RUNS_P_TAG:
        if (!(rc = runs_param_text(value, q->tag, sizeof(q->tag), true, &d)))
            q->f.tag = q->tag;
        break;
    case RUNS_P_Q:
        if (!(rc = runs_param_text(value, q->text, sizeof(q->text), false, &d)))
            q->f.text = q->text;
        break;
    case RUNS_P_SINCE:
        rc = mgr_query_time(value, now_ns, &q->f.since_unix_ns, &d);
        break;
    case RUNS_P_LIMIT:
        if (!(rc = mgr_query_count(value, 1, MGR_API_RUNS_LIMIT_MAX, &n, &d)))
            q->f.limit = n;
        break;
    default:
        if (!(rc = mgr_query_count(value, 0, INT32_MAX, &n, &d)))
            q->f.offset = n;
        break;
    }
    if (rc)
        return iof_diag_set(diag, rc, "parameter '%s': %s", key, d.msg);
    return 0;
}

int mgr_api_runs_list(const char *db, const struct mgr_api_runs_query *q, struct iof_buf *b,
                      struct iof_diag *diag)
{
    struct mgr_store *st;
    char *text = NULL;
    size_t len = 0;
    int64_t total = 0;
    FILE *f;
    int rc;

    if ((rc = mgr_store_open(db, &st, diag)))
        return rc;
    if (!(f = open_memstream(&text, &len))) {
        mgr_store_close(st);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    rc = mgr_store_list(st, &q->f, true, f, diag);
    if (!rc)
        rc = mgr_store_count(st, &q->f, &total, diag);
    mgr_store_close(st);
    if (fclose(f) && !rc)
        rc = iof_diag_set(diag, -ENOMEM, "out of memory");
    if (!rc) {
        iof_json_open(b, '{');
        iof_json_key(b, "runs");
        iof_json_raw(b, text, len && text[len - 1] == '\n' ? len - 1 : len);
        iof_json_key(b, "total");
        iof_json_u64(b, (uint64_t)total);
        iof_json_key(b, "offset");
        iof_json_u64(b, (uint64_t)q->f.offset);
        iof_json_key(b, "limit");
        if (q->f.limit > 0)
            iof_json_u64(b, (uint64_t)q->f.limit);
        else
            iof_json_null(b);
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

/* --- GET /api/v1/runs/compare?a=ID&b=ID ------------------------------------------------ */

static const char *const cmp_params[2] = {"a", "b"};

int mgr_api_runs_cmp_param(struct mgr_api_runs_cmp *c, const char *key, const char *value,
                           struct iof_diag *diag)
{
    int p;

    for (p = 0; p < 2 && strcmp(key, cmp_params[p]); p++)
        ;
    if (p == 2)
        return iof_diag_set(diag, -EINVAL,
                            "unknown parameter '%.64s' (GET /api/v1/runs/compare takes a and b, "
                            "two run ids)",
                            key);
    if (c->seen & (1u << p))
        return iof_diag_set(diag, -EINVAL, "parameter '%s' is given twice", key);
    c->seen |= 1u << p;
    if (!value)
        return iof_diag_set(diag, -EINVAL, "parameter '%s' needs a value (%s=ID)", key, key);
    if (!mgr_query_id(value, &c->id[p]))
        return iof_diag_set(diag, -EINVAL,
                            "parameter '%s': a run is named by its id, a number from 1, got "
                            "'%.64s'",
                            key, value);
    return 0;
}

int mgr_api_runs_cmp_check(const struct mgr_api_runs_cmp *c, struct iof_diag *diag)
{
    for (int p = 0; p < 2; p++)
        if (!(c->seen & (1u << p)))
            return iof_diag_set(diag, -EINVAL,
                                "parameter '%s' is missing: GET /api/v1/runs/compare?a=ID&b=ID "
                                "compares run b with run a",
                                cmp_params[p]);
    return 0;
}

int mgr_api_runs_compare(const char *db, const struct mgr_api_runs_cmp *c, struct iof_buf *b,
                         struct iof_diag *diag)
{
    struct mgr_rpt_run r[2] = {{0}};
    struct iof_diag d = {{0}};
    struct mgr_store *st;
    int rc = 0;

    if ((rc = mgr_api_runs_cmp_check(c, diag)))
        return rc;
    if ((rc = mgr_store_open(db, &st, diag)))
        return rc;
    for (int p = 0; p < 2 && !rc; p++)
        if ((rc = mgr_rpt_load(st, c->id[p], &r[p], &d)))
            iof_diag_set(diag, rc, "parameter '%s': %s", cmp_params[p], d.msg);
    mgr_store_close(st);
    if (!rc)
        rc = mgr_rpt_json(b, r, 2, diag);
    mgr_rpt_free(&r[0]);
    mgr_rpt_free(&r[1]);
    return rc;
}

/* --- GET /api/v1/runs/ID/report.html ---------------------------------------------------- */

/* Downloads export a stored run on the request's thread, reading the whole
 * run from the database: at most MGR_API_EXPORTS_MAX at once, so a burst of
 * them cannot take every core and the disk from a run being recorded. */
static atomic_uint runs_exports;

int mgr_api_runs_export_enter(struct iof_diag *diag)
{
    if (atomic_fetch_add(&runs_exports, 1) < MGR_API_EXPORTS_MAX)
        return 0;
    atomic_fetch_sub(&runs_exports, 1);
    return iof_diag_set(diag, -EAGAIN,
                        "%u downloads are being prepared already: try again in a moment",
                        MGR_API_EXPORTS_MAX);
}

void mgr_api_runs_export_leave(void)
{
    atomic_fetch_sub(&runs_exports, 1);
}

int mgr_api_runs_report(const char *db, int64_t id, char **body, size_t *len, struct iof_diag *diag)
{
    char ref[32];
    const char *refs[1] = {ref};
    struct mgr_report_opts o = {
        .refs = refs, .nrefs = 1, .db = db, .format = MGR_REPORT_HTML, .history_only = true};
    FILE *f;
    int rc;

    *body = NULL;
    *len = 0;
    snprintf(ref, sizeof(ref), "%lld", (long long)id);
    if ((rc = mgr_api_runs_export_enter(diag)))
        return rc;
    if (!(f = open_memstream(body, len))) {
        mgr_api_runs_export_leave();
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    rc = mgr_report_emit(&o, f, diag);
    mgr_api_runs_export_leave();
    if ((fclose(f) || !*body) && !rc)
        rc = iof_diag_set(diag, -ENOMEM, "out of memory");
    if (rc) {
        free(*body);
        *body = NULL;
        *len = 0;
    }
    return rc;
}

/* --- GET /api/v1/runs/ID/results.csv, results.json, iometer.csv, timeseries.csv --------- */

static const struct mgr_api_result_file result_files[] = {
    {"/results.csv", "--csv", "text/csv; charset=utf-8", ".csv"},
    {"/results.json", "--json", "application/json", ".json"},
    {"/iometer.csv", "--iometer-csv", "text/csv; charset=utf-8", "-iometer.csv"},
    {"/timeseries.csv", "--timeseries", "text/csv; charset=utf-8", "-timeseries.csv"},
};

const struct mgr_api_result_file *mgr_api_runs_result_of(const char *rest, int64_t *id)
{
    size_t n = strlen(rest);

    for (size_t i = 0; i < sizeof(result_files) / sizeof(result_files[0]); i++) {
        const struct mgr_api_result_file *rf = &result_files[i];
        size_t t = strlen(rf->tail);
        char buf[32];

        if (n <= t || strcmp(rest + n - t, rf->tail) || n - t >= sizeof(buf))
            continue;
        memcpy(buf, rest, n - t);
        buf[n - t] = '\0';
        return mgr_query_id(buf, id) ? rf : NULL;
    }
    return NULL;
}

int mgr_api_runs_result(const char *db, int64_t id, const struct mgr_api_result_file *rf, int *fd,
                        uint64_t *size, struct iof_diag *diag)
{
    struct mgr_store *st;
    int rc;

    *fd = -1;
    *size = 0;
    if ((rc = mgr_api_runs_export_enter(diag)))
        return rc;
    if (!(rc = mgr_store_open(db, &st, diag))) {
        rc = mgr_export_fd(st, id, rf->option, fd, size, diag);
        mgr_store_close(st);
    }
    mgr_api_runs_export_leave();
    return rc;
}

/* --- tag, delete, prune ----------------------------------------------------------------- */

struct runs_tag_body {
    char *tag;
    size_t cap;
    bool seen;
};

static int runs_tag_member(void *arg, const char *key, const char *type, const char *text,
                           struct iof_diag *diag)
{
    struct runs_tag_body *t = arg;
    struct iof_diag d = {{0}};
    int rc;

    if (strcmp(key, "tag"))
        return iof_diag_set(diag, -EINVAL, "unknown member '%.64s' (the body is {\"tag\": NAME})",
                            key);
    t->seen = true;
    if (!strcmp(type, "null")) {
        t->tag[0] = '\0';
        return 0;
    }
    if (strcmp(type, "text"))
        return iof_diag_set(diag, -EINVAL, "tag: must be a string or null, got %s", type);
    if (strlen(text) >= t->cap)
        return iof_diag_set(diag, -EINVAL, "tag: is over %zu bytes", t->cap - 1);
    if ((rc = mgr_query_tag(text, true, &d)))
        return iof_diag_set(diag, rc, "tag: %s", d.msg);
    memcpy(t->tag, text, strlen(text) + 1);
    return 0;
}

int mgr_api_runs_tag_parse(const char *body, size_t len, char *tag, size_t cap,
                           struct iof_diag *diag)
{
    struct runs_tag_body t = {.tag = tag, .cap = cap};
    int rc;

    tag[0] = '\0';
    if ((rc = mgr_query_json_members(body, len, runs_tag_member, &t, diag)))
        return rc;
    if (!t.seen)
        return iof_diag_set(diag, -EINVAL,
                            "the body needs a tag: {\"tag\": NAME} (\"\" or null removes it)");
    return 0;
}

int mgr_api_runs_tag(const char *db, int64_t id, const char *body, size_t len, struct iof_buf *b,
                     struct iof_diag *diag)
{
    struct mgr_store *st;
    char tag[256];
    int rc;

    if ((rc = mgr_api_runs_tag_parse(body, len, tag, sizeof(tag), diag)))
        return rc;
    if ((rc = mgr_store_open(db, &st, diag)))
        return rc;
    rc = mgr_store_set_tag(st, id, tag, diag);
    mgr_store_close(st);
    if (rc)
        return rc;
    iof_json_open(b, '{');
    iof_json_key(b, "id");
    iof_json_u64(b, (uint64_t)id);
    iof_json_key(b, "tag");
    if (tag[0])
        iof_json_escape(b, tag, IOF_JSON_TEXT);
    else
        iof_json_null(b);
    iof_json_close(b, '}');
    iof_buf_addstr(b, "\n");
    return b->err;
}

/* The removal's figures, members of the object open in b. */
static void runs_removal(struct iof_buf *b, const struct mgr_store_removal *out)
{
    iof_json_key(b, "removed");
    iof_json_u64(b, out->removed);
    iof_json_key(b, "compacted");
    iof_json_bool(b, out->compacted);
    iof_json_key(b, "bytes_before");
    iof_json_u64(b, (uint64_t)out->bytes_before);
    iof_json_key(b, "bytes_after");
    iof_json_u64(b, (uint64_t)out->bytes_after);
    if (out->not_compacted[0]) {
        iof_json_key(b, "warning");
        iof_json_escape(b, out->not_compacted, IOF_JSON_TEXT);
    }
}

int mgr_api_runs_delete(const char *db, int64_t id, int64_t running, struct iof_buf *b,
                        struct iof_diag *diag)
{
    struct mgr_store_removal out;
    struct mgr_store *st;
    int64_t found;
    char ref[32];
    int rc;

    if (id == running)
        return iof_diag_set(diag, -EBUSY,
                            "run %lld is under way: stop it first (POST "
                            "/api/v1/runs/current/stop), then delete it",
                            (long long)id);
    if ((rc = mgr_store_open(db, &st, diag)))
        return rc;
    snprintf(ref, sizeof(ref), "%lld", (long long)id);
    if (!(rc = mgr_store_resolve(st, ref, &found, diag)))
        rc = mgr_store_remove(st, &id, 1, &out, diag);
    mgr_store_close(st);
    if (rc)
        return rc;
    iof_json_open(b, '{');
    iof_json_key(b, "id");
    iof_json_u64(b, (uint64_t)id);
    runs_removal(b, &out);
    iof_json_close(b, '}');
    iof_buf_addstr(b, "\n");
    return b->err;
}

enum { PRUNE_OLDER, PRUNE_KEEP, PRUNE_TAG, PRUNE_DRY, PRUNE_RUNS, PRUNE_N };
static const char *const prune_members[PRUNE_N] = {"older_than", "keep", "tag", "dry_run", "runs"};

struct runs_prune_body {
    struct mgr_api_prune *p;
    int64_t now_ns;
    unsigned seen;
};

static int prune_id_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* "runs": [ids], as a dry run's answer lists them; json is the array as
 * JSON text. Sorted into p->only for the search in mgr_api_runs_prune. */
static int runs_prune_ids(struct mgr_api_prune *p, const char *json, struct iof_diag *diag)
{
    size_t cap = 1;
    const char *c = json + 1;

    for (const char *q = c; *q; q++)
        cap += *q == ',';
    if (!(p->only = malloc(cap * sizeof(*p->only))))
        return iof_diag_set(diag, -ENOMEM, "runs: out of memory");
    for (;;) {
        char *end;
        long long v;
        while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')
            c++;
        if (*c == ']' && !p->nonly)
            break;
        errno = 0;
        v = *c >= '1' && *c <= '9' ? strtoll(c, &end, 10) : 0;
        if (v < 1 || errno || (*end != ',' && *end != ']' && *end != ' '))
            return iof_diag_set(diag, -EINVAL,
                                "runs: must be an array of run ids (whole numbers from 1, as a "
                                "dry run lists them), got %.64s",
                                json);
        p->only[p->nonly++] = v;
        for (c = end; *c == ' '; c++)
            ;
        if (*c++ == ']')
            break;
    }
    qsort(p->only, p->nonly, sizeof(*p->only), prune_id_cmp);
    return 0;
}

static int runs_prune_member(void *arg, const char *key, const char *type, const char *text,
                             struct iof_diag *diag)
{
    struct runs_prune_body *pb = arg;
    struct mgr_api_prune *p = pb->p;
    struct iof_diag d = {{0}};
    int64_t age;
    long n;
    int m, rc = 0;

    for (m = 0; m < PRUNE_N && strcmp(key, prune_members[m]); m++)
        ;
    if (m == PRUNE_N)
        return iof_diag_set(diag, -EINVAL,
                            "unknown member '%.64s' (a prune takes older_than, keep, tag, "
                            "dry_run and runs)",
                            key);
    if (pb->seen & (1u << m))
        return iof_diag_set(diag, -EINVAL, "%s: given twice", key);
    pb->seen |= 1u << m;
    switch (m) {
    case PRUNE_OLDER:
        if (strcmp(type, "text"))
            return iof_diag_set(diag, -EINVAL, "older_than: must be a string (\"30d\"), got %s",
                                type);
        if (!(rc = mgr_query_age(text, &age, &d)))
            p->sel.before_unix_ns = pb->now_ns - age;
        break;
    case PRUNE_KEEP:
        if (strcmp(type, "integer"))
            return iof_diag_set(diag, -EINVAL, "keep: must be a whole number >= 0, got %s %s", type,
                                text ? text : "");
        if (!(rc = mgr_query_count(text, 0, INT32_MAX, &n, &d)))
            p->sel.keep = n;
        break;
    case PRUNE_TAG:
        if (strcmp(type, "text"))
            return iof_diag_set(diag, -EINVAL, "tag: must be a string, got %s", type);
        if (strlen(text) >= sizeof(p->tag))
            return iof_diag_set(diag, -EINVAL, "tag: is over %zu bytes", sizeof(p->tag) - 1);
        if (!(rc = mgr_query_tag(text, false, &d))) {
            memcpy(p->tag, text, strlen(text) + 1);
            p->sel.tag = p->tag;
        }
        break;
    case PRUNE_DRY:
        if (strcmp(type, "true") && strcmp(type, "false"))
            return iof_diag_set(diag, -EINVAL, "dry_run: must be true or false, got %s", type);
        p->dry_run = !strcmp(type, "true");
        break;
    default:
        if (strcmp(type, "array"))
            return iof_diag_set(diag, -EINVAL,
                                "runs: must be an array of run ids (as a dry run lists them), "
                                "got %s",
                                type);
        return runs_prune_ids(p, text, diag);
    }
    if (rc)
        return iof_diag_set(diag, rc, "%s: %s", key, d.msg);
    return 0;
}

int mgr_api_runs_prune_parse(const char *body, size_t len, int64_t now_ns, struct mgr_api_prune *p,
                             struct iof_diag *diag)
{
    struct runs_prune_body pb = {.p = p, .now_ns = now_ns};
    int rc;

    memset(p, 0, sizeof(*p));
    p->sel.keep = -1;
    if ((rc = mgr_query_json_members(body, len, runs_prune_member, &pb, diag)))
        return rc;
    if (!(pb.seen & ((1u << PRUNE_OLDER) | (1u << PRUNE_KEEP))))
        return iof_diag_set(diag, -EINVAL,
                            "a prune needs older_than (\"30d\") or keep (a count), as iofleet "
                            "runs prune needs --older-than or --keep");
    return 0;
}

void mgr_api_runs_prune_release(struct mgr_api_prune *p)
{
    free(p->only);
    p->only = NULL;
    p->nonly = 0;
}

int mgr_api_runs_prune(const char *db, const struct mgr_api_prune *p, int64_t running,
                       struct iof_buf *b, struct iof_diag *diag)
{
    struct mgr_store_removal out;
    struct mgr_store *st;
    int64_t *ids = NULL;
    size_t n = 0, k = 0;
    bool skipped = false;
    int rc;

    if ((rc = mgr_store_open(db, &st, diag)))
        return rc;
    if (!(rc = mgr_store_select(st, &p->sel, &ids, &n, diag))) {
        for (size_t i = 0; i < n; i++) {
            /* Only runs the caller saw listed go: a rule evaluated again
             * may pick runs recorded since (keep) or newly old enough. */
            if (p->only && !bsearch(&ids[i], p->only, p->nonly, sizeof(*p->only), prune_id_cmp))
                continue;
            if (ids[i] != running) /* the run under way stays */
                ids[k++] = ids[i];
            else
                skipped = true;
        }
        rc = mgr_store_remove(st, ids, p->dry_run ? 0 : k, &out, diag);
    }
    mgr_store_close(st);
    if (!rc) {
        iof_json_open(b, '{');
        iof_json_key(b, "dry_run");
        iof_json_bool(b, p->dry_run);
        iof_json_key(b, "runs");
        iof_json_open(b, '[');
        for (size_t i = 0; i < k; i++)
            iof_json_u64(b, (uint64_t)ids[i]);
        iof_json_close(b, ']');
        iof_json_key(b, "skipped_running");
        if (skipped)
            iof_json_u64(b, (uint64_t)running);
        else
            iof_json_null(b);
        runs_removal(b, &out);
        iof_json_close(b, '}');
        iof_buf_addstr(b, "\n");
        rc = b->err;
    }
    free(ids);
    return rc;
}
