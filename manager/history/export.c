/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/export.c - a stored run fed again to the result-file
 * sinks: the run, its agents, then per test its intervals and rows in the
 * order they were recorded and its end with the ALL row, each rebuilt as
 * the structs the run handed the sinks (figures read back exactly: SQLite
 * keeps doubles and integers as they were bound).
 */
#include "manager/history/export.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "common/hist.h"
#include "common/log.h"
#include "manager/metrics.h"
#include "proto/plan.h"

#define EXP_COL(name, kind) ", " #name

/* The figures and the schema-3 columns, in this order after each query's
 * own first columns. */
#define FIG_COLS MGR_STORE_METRICS(EXP_COL) ", latency" MGR_STORE_MORE(EXP_COL)

enum {
    F_DURATION,
    F_IOPS,
    F_READ_IOPS,
    F_WRITE_IOPS,
    F_MIBPS,
    F_READ_MIBPS,
    F_WRITE_MIBPS,
    F_AVG,
    F_AVG_READ,
    F_AVG_WRITE,
    F_P50,
    F_P90,
    F_P95,
    F_P99,
    F_P999,
    F_P9999,
    F_MAX,
    F_READ_IOS,
    F_WRITE_IOS,
    F_BYTES_READ,
    F_BYTES_WRITTEN,
    F_ERRORS,
    F_CPU,
    F_LATENCY,
    F_WINDOW_NS,
    F_INTERRUPTED,
    F_READ_ERRORS,
    F_WRITE_ERRORS,
    F_VERIFY_ERRORS,
    F_VERIFY_BAD,
    F_VERIFY_OVERLAID,
    F_FIRST_ERROR,
    F_FIRST_ERROR_OFF,
    F_USER,
    F_SYS,
    F_AGENT,
    F_NODE0, /* PROTO_CPU_NODE_N of them */
    F_SVC_IOS = F_NODE0 + PROTO_CPU_NODE_N,
    F_AVG_SVC,
    F_MAX_SVC,
    F_LATE,
    F_LN_COUNT,
    F_LN_OVER,
    F_LN_OVER_PCT,
    F_LN_AVG,
    F_LN_P50,
    F_LN_P99,
    F_LN_P999,
    F_LN_MAX,
    F_NCOLS
};

/* One figure set read back: what a row or an interval points to. */
struct exp_fig {
    struct iof_stats stats; /* large: the two histograms */
    struct mgr_metrics m;
    struct proto_cpu cpu;
    bool cpu_known;
    uint64_t ns;
    bool interrupted;
    bool old; /* no schema-3 figures */
};

static int exp_err(struct mgr_store *st, struct iof_diag *diag, const char *what)
{
    return iof_diag_set(diag, -EIO, "%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

static bool col_null(sqlite3_stmt *q, int c)
{
    return sqlite3_column_type(q, c) == SQLITE_NULL;
}

static double col_dbl(sqlite3_stmt *q, int c)
{
    return sqlite3_column_double(q, c);
}

/* An integer column (a counter past INT64_MAX was stored as REAL). */
static uint64_t col_u64(sqlite3_stmt *q, int c)
{
    if (sqlite3_column_type(q, c) == SQLITE_FLOAT)
        return (uint64_t)sqlite3_column_double(q, c);
    return (uint64_t)sqlite3_column_int64(q, c);
}

static const char *col_text(sqlite3_stmt *q, int c)
{
    return (const char *)sqlite3_column_text(q, c);
}

/* Decimal text to a 128-bit integer (a latency sum). */
static iof_u128 parse_u128(const char *s)
{
    iof_u128 v = 0;
    for (; s && *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (unsigned)(*s - '0');
    return v;
}

/* h from the latency object's direction dir ("read", "write") of json:
 * its summary and its buckets ([low_ns, width_ns, count]); without a
 * latency object only the count (ios) is known. */
static int hist_read(struct mgr_store *st, sqlite3_stmt *hq, const char *json, const char *dir,
                     uint64_t ios, struct iof_hist *h, struct iof_diag *diag)
{
    char path[64];
    int rc;

    iof_hist_reset(h);
    if (!json) {
        h->count = ios;
        return 0;
    }
    snprintf(path, sizeof(path), "$.%s", dir);
    sqlite3_bind_text(hq, 1, json, -1, SQLITE_STATIC);
    sqlite3_bind_text(hq, 2, path, -1, SQLITE_TRANSIENT);
    while ((rc = sqlite3_step(hq)) == SQLITE_ROW) {
        const char *key = col_text(hq, 0);
        if (!key)
            continue;
        if (!strcmp(key, "count"))
            h->count = col_u64(hq, 1);
        else if (!strcmp(key, "sum_ns"))
            h->sum_ns = parse_u128(col_text(hq, 2));
        else if (!strcmp(key, "min_ns") && !col_null(hq, 1))
            h->min_ns = col_u64(hq, 1);
        else if (!strcmp(key, "max_ns") && !col_null(hq, 1))
            h->max_ns = col_u64(hq, 1);
        else if (!strcmp(key, "bucket"))
            h->buckets[iof_hist_index(col_u64(hq, 1))] = col_u64(hq, 3);
    }
    sqlite3_reset(hq);
    sqlite3_clear_bindings(hq);
    return rc == SQLITE_DONE ? 0 : exp_err(st, diag, "cannot read a latency histogram");
}

/* The figures at column c0 of q. */
static int fig_read(struct mgr_store *st, sqlite3_stmt *q, int c0, sqlite3_stmt *hq,
                    struct exp_fig *f, struct iof_diag *diag)
{
    struct mgr_metrics *m = &f->m;
    struct iof_stats *s = &f->stats;
    const char *lat = col_text(q, c0 + F_LATENCY);
    int r;
#define C(k) (c0 + (k))

    memset(m, 0, sizeof(*m));
    memset(&f->cpu, 0, sizeof(f->cpu));
    m->seconds = col_dbl(q, C(F_DURATION));
    m->rates = !col_null(q, C(F_IOPS));
    m->iops = col_dbl(q, C(F_IOPS));
    m->read_iops = col_dbl(q, C(F_READ_IOPS));
    m->write_iops = col_dbl(q, C(F_WRITE_IOPS));
    m->mibps = col_dbl(q, C(F_MIBPS));
    m->read_mibps = col_dbl(q, C(F_READ_MIBPS));
    m->write_mibps = col_dbl(q, C(F_WRITE_MIBPS));
    m->avg_ms = col_dbl(q, C(F_AVG));
    m->avg_read_ms = col_dbl(q, C(F_AVG_READ));
    m->avg_write_ms = col_dbl(q, C(F_AVG_WRITE));
    m->percentiles = !col_null(q, C(F_P50));
    m->p50_ms = col_dbl(q, C(F_P50));
    m->p90_ms = col_dbl(q, C(F_P90));
    m->p95_ms = col_dbl(q, C(F_P95));
    m->p99_ms = col_dbl(q, C(F_P99));
    m->p999_ms = col_dbl(q, C(F_P999));
    m->p9999_ms = col_dbl(q, C(F_P9999));
    m->max_ms = col_dbl(q, C(F_MAX));
    m->read_ios = col_u64(q, C(F_READ_IOS));
    m->write_ios = col_u64(q, C(F_WRITE_IOS));
    m->bytes_read = col_u64(q, C(F_BYTES_READ));
    m->bytes_written = col_u64(q, C(F_BYTES_WRITTEN));
    m->errors = col_u64(q, C(F_ERRORS));
    m->rated = !col_null(q, C(F_LATE));
    m->avg_svc_ms = col_dbl(q, C(F_AVG_SVC));
    m->max_svc_ms = col_dbl(q, C(F_MAX_SVC));
    m->late_ios = col_u64(q, C(F_LATE));
    m->lateness.known = !col_null(q, C(F_LN_COUNT));
    m->lateness.count = col_u64(q, C(F_LN_COUNT));
    m->lateness.over_20us = col_u64(q, C(F_LN_OVER));
    m->lateness.over_20us_pct = col_dbl(q, C(F_LN_OVER_PCT));
    m->lateness.avg_us = col_dbl(q, C(F_LN_AVG));
    m->lateness.p50_us = col_dbl(q, C(F_LN_P50));
    m->lateness.p99_us = col_dbl(q, C(F_LN_P99));
    m->lateness.p999_us = col_dbl(q, C(F_LN_P999));
    m->lateness.max_us = col_dbl(q, C(F_LN_MAX));

    f->old = col_null(q, C(F_WINDOW_NS));
    f->ns = f->old ? (uint64_t)llround(m->seconds * 1e9) : col_u64(q, C(F_WINDOW_NS));
    f->interrupted = sqlite3_column_int(q, C(F_INTERRUPTED)) != 0;
    f->cpu_known = !col_null(q, C(F_CPU));
    f->cpu.valid = f->cpu_known;
    f->cpu.busy_pct = col_dbl(q, C(F_CPU));
    f->cpu.user_pct = col_dbl(q, C(F_USER));
    f->cpu.sys_pct = col_dbl(q, C(F_SYS));
    f->cpu.agent_pct = col_dbl(q, C(F_AGENT));
    f->cpu.node_valid = f->cpu_known && !col_null(q, C(F_NODE0));
    /* proto_cpu_node_values' order */
    f->cpu.dpc_pct = col_dbl(q, C(F_NODE0));
    f->cpu.irq_pct = col_dbl(q, C(F_NODE0 + 1));
    f->cpu.intr_per_s = col_dbl(q, C(F_NODE0 + 2));
    f->cpu.packets_per_s = col_dbl(q, C(F_NODE0 + 3));
    f->cpu.packet_errors = col_dbl(q, C(F_NODE0 + 4));
    f->cpu.retrans_per_s = col_dbl(q, C(F_NODE0 + 5));

    s->rd.ios = m->read_ios;
    s->wr.ios = m->write_ios;
    s->rd.bytes = m->bytes_read;
    s->wr.bytes = m->bytes_written;
    s->rd.errors = col_u64(q, C(F_READ_ERRORS));
    s->wr.errors = col_u64(q, C(F_WRITE_ERRORS));
    s->first_error = sqlite3_column_int(q, C(F_FIRST_ERROR));
    s->first_error_offset = col_u64(q, C(F_FIRST_ERROR_OFF));
    iof_hist_summary_reset(&s->rated.svc);
    s->rated.svc.count = col_u64(q, C(F_SVC_IOS));
    s->rated.late = m->late_ios;
    s->verify_errors = col_u64(q, C(F_VERIFY_ERRORS));
    s->verify_bad_reads = col_u64(q, C(F_VERIFY_BAD));
    s->verify_overlaid = col_u64(q, C(F_VERIFY_OVERLAID));
#undef C
    if ((r = hist_read(st, hq, lat, "read", s->rd.ios, &s->rd.lat, diag)))
        return r;
    return hist_read(st, hq, lat, "write", s->wr.ios, &s->wr.lat, diag);
}

/* --- agents ----------------------------------------------------------------------------- */

struct exp_agents {
    struct mgr_agent_info *info;
    struct proto_hello *hello;
    size_t n;
    char **strs; /* every string they point to */
    size_t nstrs, capstrs;
};

static const char *keep_str(struct exp_agents *a, const char *s, bool *oom)
{
    char *c;

    if (!s)
        return NULL;
    if (iof_array_grow((void **)&a->strs, &a->capstrs, a->nstrs + 1, sizeof(*a->strs)) ||
        !(c = strdup(s))) {
        *oom = true;
        return NULL;
    }
    a->strs[a->nstrs++] = c;
    return c;
}

static void agents_free(struct exp_agents *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->hello[i].inventory.targets);
    for (size_t i = 0; i < a->nstrs; i++)
        free(a->strs[i]);
    free(a->strs);
    free(a->info);
    free(a->hello);
}

/* The agents as recorded (the --json document's agents[]), as the run's
 * agent infos. */
static int agents_read(struct mgr_store *st, int64_t id, struct exp_agents *a,
                       struct iof_diag *diag)
{
    static const char sql[] =
        "SELECT name, doc->>'endpoint', doc->>'software', doc->>'protocol', doc->>'hostname', "
        "doc->>'cpus', doc->>'memory_bytes', doc->>'kernel', doc->>'budget.workers', "
        "doc->>'budget.buffer_mem', doc->>'budget.aio_events', doc->>'budget.fds', "
        "json_type(doc, '$.budget'), json_array_length(doc, '$.targets'), doc FROM agents "
        "WHERE run_id = ? ORDER BY seq";
    static const char tsql[] = "SELECT t.value->>'path', t.value->>'size', "
                               "t.value->>'logical_block_size', t.value->>'rotational', "
                               "t.value->>'model' FROM json_each(?, '$.targets') t ORDER BY t.key";
    sqlite3_stmt *q, *tq;
    size_t cap = 0, capi = 0;
    bool oom = false;
    int rc;

    memset(a, 0, sizeof(*a));
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
        return exp_err(st, diag, "cannot read the agents");
    if (sqlite3_prepare_v2(st->db, tsql, -1, &tq, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return exp_err(st, diag, "cannot read the agents");
    }
    sqlite3_bind_int64(q, 1, id);
    while (!oom && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct proto_hello *h;
        struct mgr_agent_info *ai;
        const char *proto = col_text(q, 3);
        size_t nt = (size_t)sqlite3_column_int64(q, 13);

        if (iof_array_grow((void **)&a->hello, &cap, a->n + 1, sizeof(*a->hello)) ||
            iof_array_grow((void **)&a->info, &capi, a->n + 1, sizeof(*a->info))) {
            oom = true;
            break;
        }
        h = &a->hello[a->n];
        ai = &a->info[a->n];
        memset(h, 0, sizeof(*h));
        memset(ai, 0, sizeof(*ai));
        a->n++;
        ai->name = keep_str(a, col_text(q, 0), &oom);
        ai->endpoint = keep_str(a, col_text(q, 1), &oom);
        if (!proto) /* recorded without a hello */
            continue;
        ai->hello = h;
        sscanf(proto, "%u.%u", &h->major, &h->minor);
        h->software = keep_str(a, col_text(q, 2), &oom);
        h->inventory.hostname = keep_str(a, col_text(q, 4), &oom);
        h->inventory.cpus = (uint32_t)sqlite3_column_int64(q, 5);
        h->inventory.memory_bytes = col_u64(q, 6);
        h->inventory.kernel = keep_str(a, col_text(q, 7), &oom);
        h->inventory.has_budget = col_text(q, 12) && !strcmp(col_text(q, 12), "object");
        h->inventory.budget.workers = col_u64(q, 8);
        h->inventory.budget.buffer_mem = col_u64(q, 9);
        h->inventory.budget.aio_events = col_u64(q, 10);
        h->inventory.budget.fds = col_u64(q, 11);
        if (!nt)
            continue;
        h->inventory.targets = calloc(nt, sizeof(*h->inventory.targets));
        if (!h->inventory.targets) {
            oom = true;
            break;
        }
        sqlite3_bind_text(tq, 1, col_text(q, 14), -1, SQLITE_TRANSIENT);
        while (h->inventory.ntargets < nt && sqlite3_step(tq) == SQLITE_ROW) {
            struct proto_target_info *t = &h->inventory.targets[h->inventory.ntargets++];
            t->path = keep_str(a, col_text(tq, 0), &oom);
            t->size = col_u64(tq, 1);
            t->logical_block_size = (uint32_t)sqlite3_column_int64(tq, 2);
            t->rotational = col_null(tq, 3) ? -1 : sqlite3_column_int(tq, 3) != 0;
            t->model = keep_str(a, col_text(tq, 4), &oom);
            t->ram_backed = -1;
            t->in_use = -1;
        }
        sqlite3_reset(tq);
    }
    sqlite3_finalize(q);
    sqlite3_finalize(tq);
    if (oom) {
        agents_free(a);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    return 0;
}

/* --- tests ------------------------------------------------------------------------------ */

static const char iv_sql[] = "SELECT interval, time_s, node, reported, lost, late" FIG_COLS
                             " FROM intervals WHERE test_id = ? ORDER BY seq";
#define IV_C0 6

static const char row_sql[] =
    "SELECT row_type, node, worker, target, status, queue_depth, n_nodes, "
    "n_workers, n_targets, window_start_s, window_end_s" FIG_COLS MGR_STORE_ROW_MORE(
        EXP_COL) " FROM rows WHERE test_id = ? "
                 "ORDER BY seq";
#define ROW_C0 11
#define ROW_MORE (ROW_C0 + F_NCOLS)

/* The latency object's entries: key, integer value, its JSON text, and for
 * a bucket its count ("bucket" rows: value = low_ns). */
static const char hist_sql[] =
    "SELECT key, value, ?1 -> (?2 || '.' || key), NULL FROM json_each(?1, ?2) "
    "WHERE key <> 'buckets' UNION ALL SELECT 'bucket', b.value->>0, NULL, b.value->>2 FROM "
    "json_each(?1, ?2 || '.buckets') b";

static uint64_t ns_of(double s)
{
    return s > 0 ? (uint64_t)llround(s * 1e9) : 0;
}

struct exp_run {
    struct mgr_store *st;
    struct mgr_sink *const *sinks;
    size_t nsinks;
    sqlite3_stmt *iv, *row, *hist;
    struct exp_fig *fig;
    bool old;
};

#define EXP_SINKS(x, call)                                                                         \
    do {                                                                                           \
        for (size_t i_ = 0; i_ < (x)->nsinks; i_++) {                                              \
            struct mgr_sink *s_ = (x)->sinks[i_];                                                  \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

static int feed_intervals(struct exp_run *x, int64_t test_id, struct mgr_test_info *ti,
                          struct iof_diag *diag)
{
    sqlite3_stmt *q = x->iv;
    int rc, r = 0;

    sqlite3_bind_int64(q, 1, test_id);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct exp_fig *f = x->fig;
        const char *node = col_text(q, 2);
        struct mgr_interval iv = {0};

        if ((r = fig_read(x->st, q, IV_C0, x->hist, f, diag)))
            break;
        x->old |= f->old;
        iv.test = ti;
        iv.k = col_u64(q, 0) - 1;
        iv.time_s = col_dbl(q, 1);
        iv.node = node && strcmp(node, "ALL") ? node : NULL;
        iv.stats = &f->stats;
        iv.m = &f->m;
        iv.ns = f->ns;
        iv.reported = (unsigned)sqlite3_column_int(q, 3);
        iv.lost = (unsigned)sqlite3_column_int(q, 4);
        iv.late = sqlite3_column_int(q, 5) != 0;
        iv.interrupted = f->interrupted;
        iv.cpu = f->cpu_known ? &f->cpu : NULL;
        iv.cpu_busy_pct = f->cpu_known ? f->cpu.busy_pct : 0;
        EXP_SINKS(x, s_->ops->interval(s_, &iv));
    }
    sqlite3_reset(q);
    if (!r && rc != SQLITE_DONE)
        r = exp_err(x->st, diag, "cannot read the intervals");
    return r;
}

static double le_dbl(const unsigned char *p)
{
    uint64_t u = 0;
    double v;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | p[i];
    memcpy(&v, &u, sizeof(v));
    return v;
}

/* The rows of a test, the ALL row kept for its end (*all, in all_fig). */
static int feed_rows(struct exp_run *x, int64_t test_id, struct mgr_test_info *ti,
                     struct exp_fig *all_fig, struct mgr_row *all, struct iof_diag *diag)
{
    sqlite3_stmt *q = x->row;
    struct proto_cpu_one *cpus = NULL;
    size_t capcpus = 0;
    int rc, r = 0;

    sqlite3_bind_int64(q, 1, test_id);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *type = col_text(q, 0);
        bool is_all = type && !strcmp(type, "ALL");
        struct exp_fig *f = is_all ? all_fig : x->fig;
        struct mgr_row row = {0};
        struct mgr_place place = {0};
        int st;
        size_t ncpus = (size_t)sqlite3_column_bytes(q, ROW_MORE + 6) / MGR_STORE_CPU_BYTES;
        const unsigned char *blob = sqlite3_column_blob(q, ROW_MORE + 6);

        if ((r = fig_read(x->st, q, ROW_C0, x->hist, f, diag)))
            break;
        x->old |= f->old;
        for (int t = MGR_ROW_ALL; type && t <= MGR_ROW_GROUP; t++)
            if (!strcmp(type, mgr_row_type_name((enum mgr_row_type)t)))
                row.type = (enum mgr_row_type)t;
        row.node = col_text(q, 1);
        row.worker = col_text(q, 2);
        row.target = col_text(q, 3);
        st = mgr_row_status_parse(col_text(q, 4));
        row.status = st < 0 ? MGR_STATUS_OK : (enum mgr_row_status)st;
        row.queue_depth = (uint32_t)sqlite3_column_int64(q, 5);
        row.nodes = (uint32_t)sqlite3_column_int64(q, 6);
        row.workers = (uint32_t)sqlite3_column_int64(q, 7);
        row.targets = (uint32_t)sqlite3_column_int64(q, 8);
        row.window_start_ns = ns_of(col_dbl(q, 9));
        row.window_end_ns = ns_of(col_dbl(q, 10));
        row.stats = &f->stats;
        row.m = &f->m;
        row.ns = f->ns;
        row.group = col_text(q, ROW_MORE);
        row.range_offset = col_u64(q, ROW_MORE + 1);
        row.range_size = col_u64(q, ROW_MORE + 2);
        if (!col_null(q, ROW_MORE + 5)) {
            place.path = row.target;
            place.device = (char *)col_text(q, ROW_MORE + 3);
            place.fstype = (char *)col_text(q, ROW_MORE + 4);
            place.ram_backed = sqlite3_column_int(q, ROW_MORE + 5);
            row.place = &place;
        }
        if (ncpus && blob) {
            if (iof_array_grow((void **)&cpus, &capcpus, ncpus, sizeof(*cpus))) {
                r = iof_diag_set(diag, -ENOMEM, "out of memory");
                break;
            }
            for (size_t i = 0; i < ncpus; i++) {
                const unsigned char *p = blob + i * MGR_STORE_CPU_BYTES;
                cpus[i].id = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24;
                cpus[i].busy_pct = le_dbl(p + 4);
                cpus[i].user_pct = le_dbl(p + 12);
                cpus[i].sys_pct = le_dbl(p + 20);
                cpus[i].dpc_pct = le_dbl(p + 28);
                cpus[i].irq_pct = le_dbl(p + 36);
            }
            row.cpus = cpus;
            row.ncpus = ncpus;
        }
        if (f->cpu_known && (row.type == MGR_ROW_NODE || row.type == MGR_ROW_ALL)) {
            row.cpu = &f->cpu;
            row.cpu_busy_pct = f->cpu.busy_pct;
        }
        ti->interrupted = f->interrupted;
        if (is_all) {
            *all = row;
            all->place = NULL;
            all->cpus = NULL; /* an ALL row has none */
            all->ncpus = 0;
            continue;
        }
        EXP_SINKS(x, s_->ops->row(s_, ti, &row));
    }
    free(cpus);
    sqlite3_reset(q);
    if (!r && rc != SQLITE_DONE)
        r = exp_err(x->st, diag, "cannot read the rows");
    return r;
}

/* The absent agents of a test (its JSON array of names) as a new array of
 * new strings (absent_free); NULL and 0 when none or out of memory. */
static const char **absent_read(struct mgr_store *st, const char *json, size_t *n)
{
    sqlite3_stmt *q;
    const char **v = NULL;
    size_t cap = 0;

    *n = 0;
    if (!json || sqlite3_prepare_v2(st->db, "SELECT value FROM json_each(?) ORDER BY key", -1, &q,
                                    NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_text(q, 1, json, -1, SQLITE_STATIC);
    while (sqlite3_step(q) == SQLITE_ROW) {
        char *name = col_text(q, 0) ? strdup(col_text(q, 0)) : NULL;
        if (!name || iof_array_grow((void **)&v, &cap, *n + 1, sizeof(*v))) {
            free(name);
            break;
        }
        v[(*n)++] = name;
    }
    sqlite3_finalize(q);
    return v;
}

static void absent_free(const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free((void *)v[i]);
    free((void *)v);
}

static int feed_tests(struct exp_run *x, int64_t id, const struct iof_test *tests, size_t ntests,
                      struct iof_diag *diag)
{
    static const char sql[] =
        "SELECT id, idx, spec, cycle, start_unix_ns, end_unix_ns, start_skew_ms, nodes, lost, "
        "absent, interrupted, complete, rate_frac, rate_target FROM tests WHERE run_id = ? "
        "ORDER BY idx";
    struct exp_fig *all_fig = calloc(1, sizeof(*all_fig));
    sqlite3_stmt *q;
    int rc, r = 0;

    if (!all_fig)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    if (sqlite3_prepare_v2(x->st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        free(all_fig);
        return exp_err(x->st, diag, "cannot read the tests");
    }
    sqlite3_bind_int64(q, 1, id);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t test_id = sqlite3_column_int64(q, 0);
        unsigned idx = (unsigned)sqlite3_column_int(q, 1);
        struct iof_test t = {.index = idx ? idx - 1 : 0};
        struct mgr_test_info ti = {0};
        struct mgr_test_end te = {0};
        struct mgr_row all = {0};

        if (idx && idx <= ntests)
            t = tests[idx - 1];
        t.rate_frac = col_dbl(q, 12);
        t.rate_target = col_dbl(q, 13);
        ti.test = &t;
        ti.ntests = ntests;
        ti.spec = col_text(q, 2);
        ti.cycle = col_text(q, 3);
        ti.start_wall_ns = col_u64(q, 4);
        EXP_SINKS(x, s_->ops->test_begin(s_, &ti));
        if ((r = feed_intervals(x, test_id, &ti, diag)))
            break;
        all.type = (enum mgr_row_type) - 1;
        if ((r = feed_rows(x, test_id, &ti, all_fig, &all, diag)))
            break;
        if (!sqlite3_column_int(q, 11)) /* the manager died before the test ended */
            continue;
        ti.interrupted = sqlite3_column_int(q, 10) != 0;
        te.test = &ti;
        te.status = ti.interrupted ? MGR_TEST_INTERRUPTED : MGR_TEST_OK;
        te.end_wall_ns = col_u64(q, 5);
        te.all = all.type == MGR_ROW_ALL ? &all : NULL;
        te.start_skew_ms = col_dbl(q, 6);
        te.nodes = (unsigned)sqlite3_column_int(q, 7);
        te.lost = (unsigned)sqlite3_column_int(q, 8);
        te.absent = absent_read(x->st, col_text(q, 9), &te.nabsent);
        te.interrupted = ti.interrupted;
        if (te.all)
            EXP_SINKS(x, s_->ops->test_end(s_, &te));
        absent_free(te.absent, te.nabsent);
    }
    if (!r && rc != SQLITE_DONE)
        r = exp_err(x->st, diag, "cannot read the tests");
    sqlite3_finalize(q);
    free(all_fig);
    return r;
}

int mgr_export_check(struct mgr_store *st, int64_t id, struct iof_diag *diag)
{
    sqlite3_stmt *q;
    int rc;
    bool ended = false;

    if (sqlite3_prepare_v2(st->db, "SELECT exit_code FROM runs WHERE id = ?", -1, &q, NULL) !=
        SQLITE_OK)
        return exp_err(st, diag, "cannot look up a run");
    sqlite3_bind_int64(q, 1, id);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        ended = !col_null(q, 0);
    sqlite3_finalize(q);
    if (rc == SQLITE_DONE)
        return iof_diag_set(diag, -ENOENT, "%s: no run %" PRId64, st->path, id);
    if (rc != SQLITE_ROW)
        return exp_err(st, diag, "cannot look up a run");
    if (!ended)
        return iof_diag_set(diag, -EBUSY,
                            "%s: run %" PRId64 " has no exit code: it is still being written "
                            "(or its manager was killed before the end)",
                            st->path, id);
    return 0;
}

int mgr_export_write(struct mgr_store *st, int64_t id, struct mgr_sink *const *sinks, size_t n,
                     bool *old, struct iof_diag *diag)
{
    static const char sql[] = "SELECT start_unix_ns, plan, exit_code FROM runs WHERE id = ?";
    struct exp_run x = {.st = st, .sinks = sinks, .nsinks = n};
    struct exp_agents ag = {0};
    struct iof_plan plan = {0};
    bool have_plan = false;
    struct iof_test *tests = NULL;
    size_t ntests = 0;
    struct mgr_run_info ri = {0};
    char *plan_text = NULL;
    sqlite3_stmt *q = NULL;
    int exit_code = 0, r;

    if (old)
        *old = false;
    if ((r = mgr_export_check(st, id, diag)))
        goto abort;
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        r = exp_err(st, diag, "cannot read the run");
        goto abort;
    }
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) != SQLITE_ROW) {
        r = exp_err(st, diag, "cannot read the run");
        sqlite3_finalize(q);
        goto abort;
    }
    ri.start_wall_ns = col_u64(q, 0);
    exit_code = sqlite3_column_int(q, 2);
    if (col_text(q, 1) && !(plan_text = strdup(col_text(q, 1)))) {
        sqlite3_finalize(q);
        r = iof_diag_set(diag, -ENOMEM, "out of memory");
        goto abort;
    }
    sqlite3_finalize(q);
    if (plan_text) {
        struct iof_diag pd = {{0}};
        if (proto_plan_parse("the recorded plan", plan_text, strlen(plan_text), NULL, 0, &plan,
                             &pd) == 0) {
            have_plan = true;
            tests = iof_plan_expand(&plan, &ntests);
        } else {
            IOF_WARN("run %" PRId64 ": %s (its Iometer specs and test details left out)", id,
                     pd.msg);
        }
    }
    r = agents_read(st, id, &ag, diag);
    x.fig = calloc(1, sizeof(*x.fig));
    if (!r && !x.fig)
        r = iof_diag_set(diag, -ENOMEM, "out of memory");
    if (!r && (sqlite3_prepare_v2(st->db, iv_sql, -1, &x.iv, NULL) != SQLITE_OK ||
               sqlite3_prepare_v2(st->db, row_sql, -1, &x.row, NULL) != SQLITE_OK ||
               sqlite3_prepare_v2(st->db, hist_sql, -1, &x.hist, NULL) != SQLITE_OK))
        r = exp_err(st, diag, "cannot read the run");
    if (!r) {
        ri.plan = have_plan ? &plan : NULL;
        ri.plan_text = plan_text;
        ri.agents = ag.info;
        ri.nagents = ag.n;
        EXP_SINKS(&x, s_->ops->run_begin(s_, &ri));
        r = feed_tests(&x, id, tests, ntests, diag);
        EXP_SINKS(&x, s_->ops->run_end(s_, exit_code));
    }
    if (old)
        *old = x.old;
    sqlite3_finalize(x.iv);
    sqlite3_finalize(x.row);
    sqlite3_finalize(x.hist);
    free(x.fig);
    /* The sinks borrow the run info until close. */
    for (size_t i = 0; i < n; i++) {
        int e;
        if (r) {
            mgr_sink_abort(sinks[i]);
            continue;
        }
        /* the first error's message is kept */
        if ((e = mgr_sink_close(sinks[i])) && !r)
            r = iof_diag_set(diag, e, "%s: not written: %s", sinks[i]->path, strerror(-e));
    }
    free(tests);
    agents_free(&ag);
    if (have_plan)
        iof_plan_free(&plan);
    free(plan_text);
    return r;
abort:
    for (size_t i = 0; i < n; i++)
        mgr_sink_abort(sinks[i]);
    return r;
}

int mgr_export_fd(struct mgr_store *st, int64_t id, const char *option, int *fd, uint64_t *size,
                  struct iof_diag *diag)
{
    const struct mgr_sink_ops *ops = mgr_sink_for_option(option);
    const char *tmp = getenv("TMPDIR");
    char dir[IOF_PATH_MAX], path[IOF_PATH_MAX + 16];
    struct mgr_sink *s;
    struct stat sb;
    int r;

    *fd = -1;
    *size = 0;
    if (!ops)
        return iof_diag_set(diag, -EINVAL, "%s: no such result file", option);
    if (snprintf(dir, sizeof(dir), "%s/iofleet-export.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp") >=
        (int)sizeof(dir))
        return iof_diag_set(diag, -ENAMETOOLONG, "%s: TMPDIR too long for the export", tmp);
    if (!mkdtemp(dir))
        return iof_diag_set(diag, -errno, "%s: cannot make a directory for the export: %s", dir,
                            strerror(errno));
    snprintf(path, sizeof(path), "%s/result", dir);
    r = mgr_sink_open(ops, path, 0, &s, diag);
    if (!r)
        r = mgr_export_write(st, id, &s, 1, NULL, diag);
    if (!r && ((*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 || fstat(*fd, &sb)))
        r = iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    if (!r)
        *size = (uint64_t)sb.st_size;
    unlink(path);
    rmdir(dir);
    if (r && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return r;
}
