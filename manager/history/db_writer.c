/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/db_writer.c - the run history's writer thread: turns the records
 * the loop queued (manager/sinks/db.c) into SQL on the connection it owns
 * while it runs. Intervals and rows go in batches: one transaction from
 * the first of them until the interval's ALL row, the run's 50 ms tick
 * (a flush record) or DB_BATCH_ROWS rows, whichever comes first; a run's
 * row and agents, a test's begin, its end with the ALL row, and the run's
 * end are transactions of their own. Once it has written all it was handed
 * and no batch is open, it syncs the database's files (db_sync).
 */
#include "manager/history/db_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "manager/metrics.h"

/* Rows and intervals in one transaction at most: a commit writes them to
 * the WAL at once (~6.6 KB each with their histograms) while other
 * managers' writers wait; 256 keep it to a few ms. */
#define DB_BATCH_ROWS 256

/* The writer's niceness above the loop's: the loop (agents' reads,
 * heartbeats, intervals) always comes first for the CPU; the writer takes
 * what is left, and the queue absorbs the difference. */
#define DB_WRITER_NICE 10
/* Records the writer finishes before it gives their bytes back to the queue. */
#define DB_RELEASE_STEP 64

#define COLNAME(name, kind) ", " #name
#define COLPARAM(name, kind) ", ?"

static const char *const db_sql[MGR_DBW_NSTMT] = {
    [MGR_DBW_STMT_INTERVAL] =
        "INSERT INTO intervals(test_id, seq, interval, time_s, node, reported, lost, "
        "late" MGR_STORE_METRICS(COLNAME) ", latency" MGR_STORE_MORE(
            COLNAME) ") VALUES(?, ?, ?, ?, ?, ?, ?, "
                     "?" MGR_STORE_METRICS(COLPARAM) ", ?" MGR_STORE_MORE(COLPARAM) ")",
    [MGR_DBW_STMT_ROW] =
        "INSERT INTO rows(test_id, seq, row_type, node, worker, target, status, "
        "queue_depth, n_nodes, n_workers, n_targets, window_start_s, "
        "window_end_s" MGR_STORE_METRICS(COLNAME) ", latency" MGR_STORE_MORE(COLNAME)
            MGR_STORE_ROW_MORE(COLNAME) ") VALUES(?, ?, ?, ?, ?, ?, "
                                        "?, ?, ?, ?, ?, ?, "
                                        "?" MGR_STORE_METRICS(COLPARAM) ", ?" MGR_STORE_MORE(
                                            COLPARAM) MGR_STORE_ROW_MORE(COLPARAM) ")",
};

/* Remembers the writer's first failure; the run goes on (the other sinks
 * and the terminal still have the figures) and close reports it once. */
static void db_fail(struct mgr_dbw *d, const char *what)
{
    if (d->error)
        return;
    d->error = -EIO;
    snprintf(d->first_error, sizeof(d->first_error), "%s: %s", what,
             d->st ? sqlite3_errmsg(d->st->db) : "no database");
}

static bool db_exec(struct mgr_dbw *d, const char *sql)
{
    if (sqlite3_exec(d->st->db, sql, NULL, NULL, NULL) == SQLITE_OK)
        return true;
    db_fail(d, sql);
    return false;
}

/* Commits the open batch, if any. A failed commit loses the batch (rolled
 * back) and is reported at close, as a failed write. */
static void db_batch_end(struct mgr_dbw *d)
{
    if (!d->batch)
        return;
    d->batch = 0;
    if (!db_exec(d, "COMMIT"))
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Opens a batch for the next interval or row unless one is open (when the
 * transaction cannot begin, the write goes alone). */
static void db_batch_add(struct mgr_dbw *d)
{
    if (d->batch >= DB_BATCH_ROWS)
        db_batch_end(d);
    if (!d->batch && sqlite3_exec(d->st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return;
    d->batch++;
}

/* Steps a fully bound statement once and resets it. */
static bool db_step(struct mgr_dbw *d, sqlite3_stmt *q, const char *what)
{
    int rc = sqlite3_step(q);

    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW)
        return true;
    db_fail(d, what);
    return false;
}

static void bind_text(sqlite3_stmt *q, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(q, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(q, i);
}

static void bind_real(sqlite3_stmt *q, int i, double v, bool have)
{
    if (have)
        sqlite3_bind_double(q, i, v);
    else
        sqlite3_bind_null(q, i);
}

static void bind_u64(sqlite3_stmt *q, int i, uint64_t v, bool have)
{
    /* SQLite integers are signed 64-bit: larger counters keep their
     * magnitude as REAL rather than wrap. */
    if (!have)
        sqlite3_bind_null(q, i);
    else if (v > INT64_MAX)
        sqlite3_bind_double(q, i, (double)v);
    else
        sqlite3_bind_int64(q, i, (int64_t)v);
}

/* v in decimal at p (at most 20 bytes); returns the byte after. */
static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    size_t n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* Skips one LEB128 varint at p (< end); NULL when it runs past end. */
static const unsigned char *skip_varint(const unsigned char *p, const unsigned char *end)
{
    while (p < end && (*p & 0x80))
        p++;
    return p < end ? p + 1 : NULL;
}

/* Reads one LEB128 varint of up to 64 bits at p (< end); NULL when it runs
 * past end or past 64 bits. */
static const unsigned char *get_varint(const unsigned char *p, const unsigned char *end,
                                       uint64_t *v)
{
    uint64_t x = 0;

    for (unsigned s = 0; p && p < end && s < 64; s += 7) {
        unsigned char c = *p++;
        x |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80)) {
            *v = x;
            return p;
        }
    }
    return NULL;
}

/* {"count":..,"sum_ns":..,"min_ns":..,"max_ns":..,"buckets":[[low,width,count],..]}
 * (buckets null when the histogram has none: its percentiles are unknown).
 * The buckets come straight from the run form the loop made
 * (common/hist.h: count, sum, min, max, then runs of (gap, length,
 * counts...)), formatted by hand: through sqlite3_str_appendf they were
 * most of a row's cost. */
static void hist_json(sqlite3_str *b, const struct mgr_dbw_hist *h, const unsigned char *tail)
{
    char sum[IOF_U128_DIGITS + 1];
    const unsigned char *p, *end;
    uint64_t nruns = 0, pos = 0;
    bool first = true;

    sqlite3_str_appendf(b, "{\"count\":%" PRIu64 ",\"sum_ns\":%s,", h->count,
                        iof_u128_str(h->sum_ns, sum));
    if (h->count)
        sqlite3_str_appendf(b, "\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",", h->min_ns,
                            h->max_ns);
    else
        sqlite3_str_appendall(b, "\"min_ns\":null,\"max_ns\":null,");
    if (!h->buckets) {
        sqlite3_str_appendall(b, "\"buckets\":null}");
        return;
    }
    sqlite3_str_appendall(b, "\"buckets\":[");
    p = tail + h->off;
    end = p + h->len;
    for (int i = 0; i < 4; i++) /* count, sum, min, max: in h already */
        p = p ? skip_varint(p, end) : NULL;
    p = get_varint(p, end, &nruns);
    for (uint64_t r = 0; p && r < nruns; r++) {
        uint64_t gap = 0, len = 0;
        p = get_varint(p, end, &gap);
        p = get_varint(p, end, &len);
        pos += gap;
        for (uint64_t k = 0; p && k < len && pos < IOF_HIST_BUCKETS; k++, pos++) {
            char one[4 + 3 * 20], *o = one;
            uint64_t n = 0;
            if (!(p = get_varint(p, end, &n)))
                break;
            if (!first)
                *o++ = ',';
            *o++ = '[';
            o = put_u64(o, iof_hist_bucket_low((unsigned)pos));
            *o++ = ',';
            o = put_u64(o, iof_hist_bucket_width((unsigned)pos));
            *o++ = ',';
            o = put_u64(o, n);
            *o++ = ']';
            sqlite3_str_append(b, one, (int)(o - one));
            first = false;
        }
    }
    sqlite3_str_appendall(b, "]}");
}

/* Binds the latency object at i (NULL when it cannot be built). */
static void bind_latency(sqlite3_stmt *q, int i, const struct mgr_dbw_fig *f,
                         const unsigned char *tail)
{
    sqlite3_str *b = sqlite3_str_new(NULL);
    char *text;

    sqlite3_str_appendall(b, "{\"read\":");
    hist_json(b, &f->rd, tail);
    sqlite3_str_appendall(b, ",\"write\":");
    hist_json(b, &f->wr, tail);
    sqlite3_str_appendall(b, "}");
    text = sqlite3_str_finish(b);
    if (text)
        sqlite3_bind_text(q, i, text, -1, sqlite3_free);
    else
        sqlite3_bind_null(q, i);
}

/* Binds the MGR_STORE_MORE columns from index i on, in its order; returns
 * the next index. */
static int bind_more(sqlite3_stmt *q, int i, const struct mgr_dbw_fig *f)
{
    const struct mgr_metrics *m = &f->m;
    const struct mgr_lateness *l = &m->lateness;
    bool node = f->cpu_valid && f->cpu.node_valid;
    double nv[PROTO_CPU_NODE_N];

    bind_u64(q, i++, f->ns, true);
    sqlite3_bind_int(q, i++, f->interrupted);
    bind_u64(q, i++, f->rd_errors, f->known);
    bind_u64(q, i++, f->wr_errors, f->known);
    bind_u64(q, i++, f->verify_errors, f->known);
    bind_u64(q, i++, f->verify_bad_reads, f->known);
    bind_u64(q, i++, f->verify_overlaid, f->known);
    sqlite3_bind_int(q, i++, f->first_error);
    bind_u64(q, i++, f->first_error_offset, true);
    bind_real(q, i++, f->cpu.user_pct, f->cpu_valid);
    bind_real(q, i++, f->cpu.sys_pct, f->cpu_valid);
    bind_real(q, i++, f->cpu.agent_pct, f->cpu_valid);
    if (node)
        proto_cpu_node_values(&f->cpu, nv);
    for (size_t k = 0; k < PROTO_CPU_NODE_N; k++)
        bind_real(q, i++, node ? nv[k] : 0, node);
    bind_u64(q, i++, f->svc_ios, m->rated);
    bind_real(q, i++, m->avg_svc_ms, m->rated);
    bind_real(q, i++, m->max_svc_ms, m->rated);
    bind_u64(q, i++, m->late_ios, m->rated);
    bind_u64(q, i++, l->count, l->known);
    bind_u64(q, i++, l->over_20us, l->known);
    bind_real(q, i++, l->over_20us_pct, l->known);
    bind_real(q, i++, l->avg_us, l->known);
    bind_real(q, i++, l->p50_us, l->known);
    bind_real(q, i++, l->p99_us, l->known);
    bind_real(q, i++, l->p999_us, l->known);
    bind_real(q, i++, l->max_us, l->known);
    return i;
}

/* Binds the MGR_STORE_METRICS columns from index i on, then the latency
 * object; returns the next index. */
static int bind_figures(sqlite3_stmt *q, int i, const struct mgr_dbw_fig *f,
                        const unsigned char *tail)
{
    const struct mgr_metrics *m = &f->m;
    bool any = f->rd.count + f->wr.count > 0, pct, rates;

    rates = m->rates && f->known;
    pct = any && m->percentiles;
    bind_real(q, i++, m->seconds, true);
    bind_real(q, i++, m->iops, rates);
    bind_real(q, i++, m->read_iops, rates);
    bind_real(q, i++, m->write_iops, rates);
    bind_real(q, i++, m->mibps, rates);
    bind_real(q, i++, m->read_mibps, rates);
    bind_real(q, i++, m->write_mibps, rates);
    bind_real(q, i++, m->avg_ms, any);
    bind_real(q, i++, m->avg_read_ms, f->rd.count > 0);
    bind_real(q, i++, m->avg_write_ms, f->wr.count > 0);
    bind_real(q, i++, m->p50_ms, pct);
    bind_real(q, i++, m->p90_ms, pct);
    bind_real(q, i++, m->p95_ms, pct);
    bind_real(q, i++, m->p99_ms, pct);
    bind_real(q, i++, m->p999_ms, pct);
    bind_real(q, i++, m->p9999_ms, pct);
    bind_real(q, i++, m->max_ms, any);
    bind_u64(q, i++, m->read_ios, f->known);
    bind_u64(q, i++, m->write_ios, f->known);
    bind_u64(q, i++, m->bytes_read, f->known);
    bind_u64(q, i++, m->bytes_written, f->known);
    bind_u64(q, i++, m->errors, f->known);
    bind_real(q, i++, f->cpu_pct, f->cpu_valid);
    if (f->latency)
        bind_latency(q, i, f, tail);
    return bind_more(q, i + 1, f);
}

/* The agent as the JSON document has it (docs/results.md, agents[]), made
 * by SQLite's json functions so every string is escaped. */
static void w_agent(struct mgr_dbw *d, size_t seq, const struct mgr_agent_info *a)
{
    static const char sql[] =
        "INSERT INTO agents(run_id, seq, name, doc) VALUES(?1, ?2, ?3, json_object('name', ?3, "
        "'endpoint', ?4, 'software', ?5, 'protocol', ?6, 'hostname', ?7, 'cpus', ?8, "
        "'memory_bytes', ?9, 'kernel', ?10, 'budget', json(?11), 'targets', json('[]')))";
    static const char tsql[] =
        "UPDATE agents SET doc = json_insert(doc, '$.targets[#]', json_object('path', ?1, "
        "'size', ?2, 'logical_block_size', ?3, 'rotational', CASE ?4 WHEN -1 THEN NULL ELSE "
        "json(CASE ?4 WHEN 0 THEN 'false' ELSE 'true' END) END, 'model', ?5)) "
        "WHERE rowid = ?6";
    const struct proto_hello *h = a->hello;
    sqlite3_stmt *q;
    sqlite3_int64 row;
    char ver[32], budget[160];

    if (sqlite3_prepare_v2(d->st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        db_fail(d, "agents");
        return;
    }
    sqlite3_bind_int64(q, 1, d->run_id);
    sqlite3_bind_int64(q, 2, (int64_t)seq);
    bind_text(q, 3, a->name);
    bind_text(q, 4, a->endpoint);
    bind_text(q, 5, h ? h->software : NULL);
    snprintf(ver, sizeof(ver), "%u.%u", h ? h->major : 0, h ? h->minor : 0);
    bind_text(q, 6, h ? ver : NULL);
    bind_text(q, 7, h ? h->inventory.hostname : NULL);
    bind_u64(q, 8, h ? h->inventory.cpus : 0, h != NULL);
    bind_u64(q, 9, h ? h->inventory.memory_bytes : 0, h != NULL);
    bind_text(q, 10, h ? h->inventory.kernel : NULL);
    if (h && h->inventory.has_budget) {
        const struct proto_budget *b = &h->inventory.budget;
        snprintf(budget, sizeof(budget),
                 "{\"workers\":%" PRIu64 ",\"buffer_mem\":%" PRIu64 ",\"aio_events\":%" PRIu64
                 ",\"fds\":%" PRIu64 "}",
                 b->workers, b->buffer_mem, b->aio_events, b->fds);
        bind_text(q, 11, budget);
    }
    db_step(d, q, "agents");
    sqlite3_finalize(q);
    /* The row just inserted, by its rowid: (run_id, seq) has no index of
     * its own, and a search by run_id walks every agent of the run, once per
     * target: seconds at 10,000 agents. */
    row = sqlite3_last_insert_rowid(d->st->db);
    if (!h || !h->inventory.ntargets)
        return;
    if (sqlite3_prepare_v2(d->st->db, tsql, -1, &q, NULL) != SQLITE_OK) {
        db_fail(d, "agent targets");
        return;
    }
    for (size_t i = 0; i < h->inventory.ntargets; i++) {
        const struct proto_target_info *t = &h->inventory.targets[i];
        bind_text(q, 1, t->path);
        bind_u64(q, 2, t->size, true);
        sqlite3_bind_int64(q, 3, t->logical_block_size);
        sqlite3_bind_int(q, 4, t->rotational < 0 ? -1 : t->rotational != 0);
        bind_text(q, 5, t->model);
        sqlite3_bind_int64(q, 6, row);
        if (!db_step(d, q, "agent targets"))
            break;
    }
    sqlite3_finalize(q);
}

/* The run's row (taken on the loop at run_begin or by mgr_db_sink_reserve)
 * filled, and its agents, in one transaction. */
static void w_run(struct mgr_dbw *d, const struct mgr_dbw_rec *r)
{
    static const char sql[] =
        "UPDATE runs SET start_unix_ns = ?1, plan_name = ?2, plan = json(?3), "
        "tests_planned = ?4, iofleet_version = ?5, source = 'run', tag = ?6 "
        "WHERE id = ?7";
    sqlite3_stmt *q;

    if (!db_exec(d, "BEGIN IMMEDIATE"))
        return;
    if (sqlite3_prepare_v2(d->st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        db_fail(d, "runs");
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
        return;
    }
    bind_u64(q, 1, r->u.run.start_wall_ns, true);
    bind_text(q, 2, r->u.run.plan_name);
    bind_text(q, 3, r->u.run.plan_text);
    bind_u64(q, 4, r->u.run.tests_planned, r->u.run.have_plan);
    bind_text(q, 5, IOF_VERSION);
    bind_text(q, 6, d->tag);
    sqlite3_bind_int64(q, 7, d->run_id);
    db_step(d, q, "runs");
    sqlite3_finalize(q);
    for (size_t i = 0; !d->error && i < r->u.run.nagents; i++)
        w_agent(d, i, &r->u.run.agents[i]);
    if (d->error || !db_exec(d, "COMMIT"))
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
}

static void w_test(struct mgr_dbw *d, const struct mgr_dbw_rec *r)
{
    static const char sql[] =
        "INSERT INTO tests(run_id, idx, spec, cycle, cycle_param, cycle_value, start_unix_ns, "
        "rate_frac, rate_target) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)";
    sqlite3_stmt *q;
    bool cyc = r->u.test.cycle_param != NULL;

    d->test_id = 0;
    d->row_seq = d->iv_seq = 0;
    if (sqlite3_prepare_v2(d->st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        db_fail(d, "tests");
        return;
    }
    sqlite3_bind_int64(q, 1, d->run_id);
    sqlite3_bind_int(q, 2, (int)r->u.test.idx);
    bind_text(q, 3, r->u.test.spec);
    bind_text(q, 4, r->u.test.cycle);
    bind_text(q, 5, r->u.test.cycle_param);
    bind_u64(q, 6, r->u.test.cycle_value, cyc);
    bind_u64(q, 7, r->u.test.start_wall_ns, true);
    sqlite3_bind_double(q, 8, r->u.test.rate_frac);
    sqlite3_bind_double(q, 9, r->u.test.rate_target);
    if (db_step(d, q, "tests"))
        d->test_id = sqlite3_last_insert_rowid(d->st->db);
    sqlite3_finalize(q);
}

static void w_interval(struct mgr_dbw *d, const struct mgr_dbw_rec *r)
{
    sqlite3_stmt *q = d->stmt[MGR_DBW_STMT_INTERVAL];
    int i = 1;

    sqlite3_bind_int64(q, i++, d->test_id);
    sqlite3_bind_int64(q, i++, d->iv_seq++);
    bind_u64(q, i++, r->u.iv.k + 1, true);
    sqlite3_bind_double(q, i++, r->u.iv.time_s);
    bind_text(q, i++, r->u.iv.node ? r->u.iv.node : "ALL");
    sqlite3_bind_int(q, i++, (int)r->u.iv.reported);
    sqlite3_bind_int(q, i++, (int)r->u.iv.lost);
    sqlite3_bind_int(q, i++, r->u.iv.late);
    bind_figures(q, i, &r->fig, r->tail);
    db_batch_add(d);
    if (db_step(d, q, "intervals"))
        d->written++;
    /* The interval's ALL row: every node's is in. Not a late report's own
     * ALL row: a commit per late report would slow a writer that is
     * already behind. */
    if (!r->u.iv.node && !r->u.iv.late)
        db_batch_end(d);
}

static void w_row(struct mgr_dbw *d, const struct mgr_dbw_rec *r)
{
    sqlite3_stmt *q = d->stmt[MGR_DBW_STMT_ROW];
    const struct mgr_dbw_row *w = &r->row;
    bool absent = w->status == MGR_STATUS_ABSENT;
    int i = 1;

    sqlite3_bind_int64(q, i++, d->test_id);
    sqlite3_bind_int64(q, i++, d->row_seq++);
    bind_text(q, i++, mgr_row_type_name(w->type));
    bind_text(q, i++, w->node);
    bind_text(q, i++, w->worker);
    bind_text(q, i++, w->target);
    bind_text(q, i++, mgr_row_status_name(w->status));
    bind_u64(q, i++, w->queue_depth,
             !(w->type == MGR_ROW_NODE || (w->type == MGR_ROW_ALL && !w->queue_depth)));
    sqlite3_bind_int(q, i++, (int)w->nodes);
    sqlite3_bind_int(q, i++, (int)w->workers);
    sqlite3_bind_int(q, i++, (int)w->targets);
    bind_real(q, i++, (double)w->window_start_ns / 1e9, !absent);
    bind_real(q, i++, (double)w->window_end_ns / 1e9, !absent);
    i = bind_figures(q, i, &r->fig, r->tail);
    bind_text(q, i++, w->group);
    bind_u64(q, i++, w->range_offset, w->type == MGR_ROW_TARGET);
    bind_u64(q, i++, w->range_size, w->type == MGR_ROW_TARGET);
    bind_text(q, i++, w->device);
    bind_text(q, i++, w->fstype);
    if (w->ram_backed >= -1)
        sqlite3_bind_int(q, i, w->ram_backed);
    i++;
    if (w->ncpus)
        sqlite3_bind_blob(q, i, w->cpus, (int)(w->ncpus * MGR_STORE_CPU_BYTES), SQLITE_TRANSIENT);
    if (db_step(d, q, "rows"))
        d->written++;
}

/* The ALL row and the test marked complete, in one transaction. */
static void w_end(struct mgr_dbw *d, const struct mgr_dbw_rec *r)
{
    static const char sql[] =
        "UPDATE tests SET end_unix_ns = ?, start_skew_ms = ?, nodes = ?, lost = ?, absent = "
        "'[]', interrupted = ?, complete = 1 WHERE id = ?";
    static const char asql[] = "UPDATE tests SET absent = json_insert(absent, '$[#]', ?) "
                               "WHERE id = ?";
    sqlite3_stmt *q;

    if (!db_exec(d, "BEGIN IMMEDIATE"))
        return;
    if (r->u.end.has_all)
        w_row(d, r);
    if (sqlite3_prepare_v2(d->st->db, sql, -1, &q, NULL) == SQLITE_OK) {
        bind_u64(q, 1, r->u.end.end_wall_ns, r->u.end.end_wall_ns != 0);
        sqlite3_bind_double(q, 2, r->u.end.start_skew_ms);
        sqlite3_bind_int(q, 3, (int)r->u.end.nodes);
        sqlite3_bind_int(q, 4, (int)r->u.end.lost);
        sqlite3_bind_int(q, 5, r->u.end.interrupted);
        sqlite3_bind_int64(q, 6, d->test_id);
        db_step(d, q, "tests");
        sqlite3_finalize(q);
    } else {
        db_fail(d, "tests");
    }
    if (r->u.end.nabsent && sqlite3_prepare_v2(d->st->db, asql, -1, &q, NULL) == SQLITE_OK) {
        for (size_t i = 0; i < r->u.end.nabsent; i++) {
            bind_text(q, 1, r->u.end.absent[i]);
            sqlite3_bind_int64(q, 2, d->test_id);
            db_step(d, q, "tests");
        }
        sqlite3_finalize(q);
    }
    if (d->error || !db_exec(d, "COMMIT"))
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
}

static void w_run_end(struct mgr_dbw *d, int exit_code)
{
    char sql[128];

    if (d->ended)
        return;
    d->ended = true;
    snprintf(sql, sizeof(sql), "UPDATE runs SET exit_code = %d WHERE id = %" PRId64, exit_code,
             d->run_id);
    db_exec(d, sql);
}

static void w_apply(struct mgr_dbw *d, const struct mgr_dbw_rec *r)
{
    switch (r->kind) {
    case MGR_DBW_INTERVAL:
        if (d->test_id)
            w_interval(d, r);
        return;
    case MGR_DBW_ROW:
        if (d->test_id) {
            db_batch_add(d);
            w_row(d, r);
        }
        return;
    case MGR_DBW_FLUSH:
        db_batch_end(d);
        return;
    case MGR_DBW_RUN:
        db_batch_end(d);
        w_run(d, r);
        return;
    case MGR_DBW_TEST:
        db_batch_end(d);
        w_test(d, r);
        return;
    case MGR_DBW_END:
        db_batch_end(d);
        if (d->test_id)
            w_end(d, r);
        d->test_id = 0;
        return;
    case MGR_DBW_RUN_END:
        db_batch_end(d);
        w_run_end(d, r->u.exit_code);
        return;
    }
}

/* Puts the database's files on disk: the WAL, the shared-memory index
 * (written through a mapping, so the kernel's write-back would otherwise
 * take it, and the journal commit of its times, whenever it chose) and the
 * database. Called once the writer has written all it was handed and before
 * it hands the last of it back, when no batch is open, so a drain after a
 * flush record (db_quiesce, before a test's start) returns with nothing of
 * the history left for the kernel to write during the measured window. A file that is not there is
 * skipped; a failure to sync is reported like a failed write. */
static void db_sync(struct mgr_dbw *d)
{
    static const char *const suffix[] = {"-wal", "-shm", ""};
    const char *db = sqlite3_db_filename(d->st->db, "main");
    char path[4096];

    if (!db || !*db)
        return;
    for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        if (snprintf(path, sizeof(path), "%s%s", db, suffix[i]) >= (int)sizeof(path))
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (fsync(fd) != 0 && errno != EINVAL && !d->error) {
            d->error = -errno;
            snprintf(d->first_error, sizeof(d->first_error), "fsync %.200s: %s", path,
                     strerror(errno));
        }
        close(fd);
    }
}

/* The writer: owns the connection from run_begin until close joins it. */
void *mgr_dbw_main(void *arg)
{
    struct mgr_dbw *d = arg;
    struct mgr_dbq_item *list;
    struct timespec t0, t1;

    /* Linux: a thread id as PRIO_PROCESS's who sets that thread only. */
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, tid);
    if (errno == 0)
        setpriority(PRIO_PROCESS, tid, nice_now + DB_WRITER_NICE);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    while ((list = mgr_dbq_take(d->queue))) {
        struct mgr_dbq_item *done = list;
        unsigned n = 0;

        while (list) {
            struct mgr_dbq_item *it = list;
            list = list->next;
            w_apply(d, (struct mgr_dbw_rec *)it);
            /* All it was handed is committed (no batch waits for its ALL
             * row or a flush): on disk before it is handed back. */
            if (!list && !d->batch && sqlite3_total_changes64(d->st->db) != d->synced_changes) {
                db_sync(d);
                d->synced_changes = sqlite3_total_changes64(d->st->db);
            }
            /* Handed back in steps, not a locked call per record; the loop
             * frees them. */
            if (++n == DB_RELEASE_STEP || !list) {
                it->next = NULL;
                mgr_dbq_release(d->queue, done);
                done = list;
                n = 0;
            }
        }
    }
    db_batch_end(d);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    d->cpu_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t1.tv_nsec -
                (uint64_t)t0.tv_nsec;
    return NULL;
}

int mgr_dbw_init(struct mgr_dbw *w, struct mgr_store *st, struct iof_diag *diag)
{
    w->st = st;
    for (int i = 0; i < MGR_DBW_NSTMT; i++)
        if (sqlite3_prepare_v3(st->db, db_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->stmt[i],
                               NULL) != SQLITE_OK)
            return iof_diag_set(diag, -EIO, "%s: %s", st->path, sqlite3_errmsg(st->db));
    return 0;
}

void mgr_dbw_fini(struct mgr_dbw *w)
{
    for (int i = 0; i < MGR_DBW_NSTMT; i++) {
        sqlite3_finalize(w->stmt[i]);
        w->stmt[i] = NULL;
    }
}
