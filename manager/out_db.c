/* manager/out_db.c - the run history sink: records a run into the SQLite
 * store (manager/store.h) as it goes. run_begin inserts the run, its plan and
 * the agents; test_begin the test; every interval and row is inserted when it
 * arrives; test_end inserts the ALL row and marks the test complete in one
 * transaction; run_end sets the exit code. Intervals and rows go in batches:
 * one transaction from the first of them until the interval's ALL row, the
 * run's 50 ms tick (flush) or DB_BATCH_ROWS rows, whichever comes first
 * (one per row cost ~100 us each, 10,000 agents' intervals a second took
 * a core). Everything else is its own transaction, and every one is
 * short, so a killed manager leaves every finished test (and the intervals
 * of the one running, but for the last tick's) and other managers are never
 * held up long.
 *
 * Latency histograms are kept as the JSON document's `latency` object
 * ({"read": {..., "buckets": [[low_ns, width_ns, count], ...]}, "write":
 * ...}), so imported and recorded runs read the same; a TARGET row's is
 * NULL in a test past the size mgr_target_hists() allows, as in --json.
 * Nothing of the run is held in memory: the sink keeps only the ids of the
 * run and the running test.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/hist.h"
#include "common/log.h"
#include "manager/report.h"
#include "manager/store.h"

enum db_stmt { DB_INTERVAL, DB_ROW, DB_NSTMT };

/* Rows and intervals in one transaction at most: its commit writes them
 * to the WAL at once (~6.6 KB each with their histograms), a stall of the
 * loop that grows with the batch; 256 keep it to a few ms. */
#define DB_BATCH_ROWS 256

struct db_sink {
    struct mgr_store *st;
    char *tag;
    int64_t run_id;
    bool reserved; /* run_id taken by mgr_db_sink_reserve, the row filled at run_begin */
    bool begun;
    int64_t test_id;   /* the running test, 0 when none */
    unsigned test_idx; /* its 1-based index */
    int64_t row_seq, iv_seq;
    bool target_hists;           /* the running test's TARGET rows keep their histograms */
    const struct iof_plan *plan; /* from run_begin, valid until close */
    const struct mgr_agent_info *agents;
    size_t nagents;
    bool ended;
    char first_error[256];
    sqlite3_stmt *stmt[DB_NSTMT];
    unsigned batch; /* intervals and rows in the open transaction; 0: none open */
};

#define COLNAME(name, kind) ", " #name
#define COLPARAM(name, kind) ", ?"

static const char *const db_sql[DB_NSTMT] = {
    [DB_INTERVAL] = "INSERT INTO intervals(test_id, seq, interval, time_s, node, reported, lost, "
                    "late" MGR_STORE_METRICS(COLNAME) ", latency) VALUES(?, ?, ?, ?, ?, ?, ?, "
                                                      "?" MGR_STORE_METRICS(COLPARAM) ", ?)",
    [DB_ROW] = "INSERT INTO rows(test_id, seq, row_type, node, worker, target, status, "
               "queue_depth, n_nodes, n_workers, n_targets, window_start_s, "
               "window_end_s" MGR_STORE_METRICS(COLNAME) ", latency) VALUES(?, ?, ?, ?, ?, ?, "
                                                         "?, ?, ?, ?, ?, ?, "
                                                         "?" MGR_STORE_METRICS(COLPARAM) ", ?)",
};

/* Remembers the first failure; the run goes on (the other sinks and the
 * terminal still have the figures) and close reports it once. */
static void db_fail(struct mgr_sink *s, const char *what)
{
    struct db_sink *d = s->priv;

    if (s->write_error)
        return;
    s->write_error = -EIO;
    snprintf(d->first_error, sizeof(d->first_error), "%s: %s", what,
             d->st ? sqlite3_errmsg(d->st->db) : "no database");
}

static bool db_exec(struct mgr_sink *s, const char *sql)
{
    struct db_sink *d = s->priv;

    if (sqlite3_exec(d->st->db, sql, NULL, NULL, NULL) == SQLITE_OK)
        return true;
    db_fail(s, sql);
    return false;
}

/* Commits the open batch, if any. A failed commit loses the batch (rolled
 * back) and is reported at close, as a failed write. */
static void db_batch_end(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    if (!d->batch)
        return;
    d->batch = 0;
    if (!db_exec(s, "COMMIT"))
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Opens a batch for the next interval or row unless one is open (when the
 * transaction cannot begin, the write goes alone). */
static void db_batch_add(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    if (d->batch >= DB_BATCH_ROWS)
        db_batch_end(s);
    if (!d->batch && sqlite3_exec(d->st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return;
    d->batch++;
}

/* Steps a fully bound statement once and resets it. */
static bool db_step(struct mgr_sink *s, sqlite3_stmt *q, const char *what)
{
    int rc = sqlite3_step(q);

    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW)
        return true;
    db_fail(s, what);
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

/* {"count":..,"sum_ns":..,"min_ns":..,"max_ns":..,"buckets":[[low,width,count],..]}
 * (buckets null when the histogram has none: its percentiles are unknown).
 * The buckets, a few hundred per histogram and one row per node per
 * interval, are formatted by hand and only from min's to max's: through
 * sqlite3_str_appendf they were most of a row's cost. */
static void hist_json(sqlite3_str *b, const struct iof_hist *h)
{
    char sum[IOF_U128_DIGITS + 1];
    bool first = true;

    sqlite3_str_appendf(b, "{\"count\":%" PRIu64 ",\"sum_ns\":%s,", h->count,
                        iof_u128_str(h->sum_ns, sum));
    if (h->count)
        sqlite3_str_appendf(b, "\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",", h->min_ns,
                            h->max_ns);
    else
        sqlite3_str_appendall(b, "\"min_ns\":null,\"max_ns\":null,");
    if (!iof_hist_has_buckets(h)) {
        sqlite3_str_appendall(b, "\"buckets\":null}");
        return;
    }
    sqlite3_str_appendall(b, "\"buckets\":[");
    for (unsigned i = iof_hist_lo(h); i < iof_hist_hi(h); i++) {
        char one[4 + 3 * 20], *p = one;
        if (!h->buckets[i])
            continue;
        if (!first)
            *p++ = ',';
        *p++ = '[';
        p = put_u64(p, iof_hist_bucket_low(i));
        *p++ = ',';
        p = put_u64(p, iof_hist_bucket_width(i));
        *p++ = ',';
        p = put_u64(p, h->buckets[i]);
        *p++ = ']';
        sqlite3_str_append(b, one, (int)(p - one));
        first = false;
    }
    sqlite3_str_appendall(b, "]}");
}

/* Binds the latency object at i (NULL when it cannot be built). */
static void bind_latency(sqlite3_stmt *q, int i, const struct iof_stats *st)
{
    sqlite3_str *b = sqlite3_str_new(NULL);
    char *text;

    sqlite3_str_appendall(b, "{\"read\":");
    hist_json(b, &st->rd.lat);
    sqlite3_str_appendall(b, ",\"write\":");
    hist_json(b, &st->wr.lat);
    sqlite3_str_appendall(b, "}");
    text = sqlite3_str_finish(b);
    if (text)
        sqlite3_bind_text(q, i, text, -1, sqlite3_free);
    else
        sqlite3_bind_null(q, i);
}

/* Binds the MGR_STORE_METRICS columns from index i on; returns the next
 * index. known: false for a lost interval (counts and rates unknown). */
static int bind_metrics(sqlite3_stmt *q, int i, const struct iof_stats *st,
                        const struct mgr_metrics *mm, bool known, const struct proto_cpu *cpu)
{
    const struct mgr_metrics m = *mm;
    bool any = st->rd.lat.count + st->wr.lat.count > 0, pct, rates;

    rates = m.rates && known;
    pct = any && m.percentiles;
    bind_real(q, i++, m.seconds, true);
    bind_real(q, i++, m.iops, rates);
    bind_real(q, i++, m.read_iops, rates);
    bind_real(q, i++, m.write_iops, rates);
    bind_real(q, i++, m.mibps, rates);
    bind_real(q, i++, m.read_mibps, rates);
    bind_real(q, i++, m.write_mibps, rates);
    bind_real(q, i++, m.avg_ms, any);
    bind_real(q, i++, m.avg_read_ms, st->rd.lat.count > 0);
    bind_real(q, i++, m.avg_write_ms, st->wr.lat.count > 0);
    bind_real(q, i++, m.p50_ms, pct);
    bind_real(q, i++, m.p90_ms, pct);
    bind_real(q, i++, m.p95_ms, pct);
    bind_real(q, i++, m.p99_ms, pct);
    bind_real(q, i++, m.p999_ms, pct);
    bind_real(q, i++, m.p9999_ms, pct);
    bind_real(q, i++, m.max_ms, any);
    bind_u64(q, i++, m.read_ios, known);
    bind_u64(q, i++, m.write_ios, known);
    bind_u64(q, i++, m.bytes_read, known);
    bind_u64(q, i++, m.bytes_written, known);
    bind_u64(q, i++, m.errors, known);
    bind_real(q, i++, cpu && cpu->valid ? cpu->busy_pct : 0, cpu && cpu->valid);
    return i;
}

/* --- sink ops ---------------------------------------------------------------------------- */

static void db_free(struct db_sink *d)
{
    if (!d)
        return;
    for (int i = 0; i < DB_NSTMT; i++)
        sqlite3_finalize(d->stmt[i]);
    mgr_store_close(d->st);
    free(d->tag);
    free(d);
}

static int db_open(struct mgr_sink *s, const char *path, struct iof_diag *diag)
{
    struct db_sink *d = calloc(1, sizeof(*d));
    int r;

    if (!d)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    r = mgr_store_open(path, &d->st, diag);
    for (int i = 0; !r && i < DB_NSTMT; i++)
        if (sqlite3_prepare_v3(d->st->db, db_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &d->stmt[i],
                               NULL) != SQLITE_OK)
            r = iof_diag_set(diag, -EIO, "%s: %s", path, sqlite3_errmsg(d->st->db));
    if (r) {
        db_free(d);
        return r;
    }
    s->priv = d;
    return 0;
}

/* The agent as the JSON document has it (docs/results.md, agents[]), made
 * by SQLite's json functions so every string is escaped. */
static void db_agent(struct mgr_sink *s, size_t seq, const struct mgr_agent_info *a)
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
    struct db_sink *d = s->priv;
    const struct proto_hello *h = a->hello;
    sqlite3_stmt *q;
    sqlite3_int64 row;
    char ver[32], budget[160];

    if (sqlite3_prepare_v2(d->st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        db_fail(s, "agents");
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
    db_step(s, q, "agents");
    sqlite3_finalize(q);
    /* The row just inserted, by its rowid: (run_id, seq) has no index of
     * its own, and a search by run_id walks every agent of the run, once per
     * target: seconds of a blocked loop at 10,000 agents. */
    row = sqlite3_last_insert_rowid(d->st->db);
    if (!h || !h->inventory.ntargets)
        return;
    if (sqlite3_prepare_v2(d->st->db, tsql, -1, &q, NULL) != SQLITE_OK) {
        db_fail(s, "agent targets");
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
        if (!db_step(s, q, "agent targets"))
            break;
    }
    sqlite3_finalize(q);
}

static void db_run_begin(struct mgr_sink *s, const struct mgr_run_info *ri)
{
    static const char sql[] =
        "INSERT INTO runs(start_unix_ns, plan_name, plan, tests_planned, iofleet_version, "
        "source, tag) VALUES(?, ?, json(?), ?, ?, 'run', ?)";
    /* A run whose id was reserved (a {run} file name): its row is filled. */
    static const char upd[] =
        "UPDATE runs SET start_unix_ns = ?1, plan_name = ?2, plan = json(?3), "
        "tests_planned = ?4, iofleet_version = ?5, source = 'run', tag = ?6 "
        "WHERE id = ?7";
    struct db_sink *d = s->priv;
    sqlite3_stmt *q;

    db_batch_end(s);

    d->begun = true;
    d->plan = ri->plan;
    d->agents = ri->agents;
    d->nagents = ri->nagents;
    if (!db_exec(s, "BEGIN IMMEDIATE"))
        return;
    if (sqlite3_prepare_v2(d->st->db, d->reserved ? upd : sql, -1, &q, NULL) != SQLITE_OK) {
        db_fail(s, "runs");
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
        return;
    }
    bind_u64(q, 1, ri->start_wall_ns, true);
    bind_text(q, 2, ri->plan ? ri->plan->name : NULL);
    bind_text(q, 3, ri->plan_text);
    bind_u64(q, 4, ri->plan ? ri->plan->nspecs * iof_plan_cycle_steps(ri->plan) : 0,
             ri->plan != NULL);
    bind_text(q, 5, IOF_VERSION);
    bind_text(q, 6, d->tag);
    if (d->reserved)
        sqlite3_bind_int64(q, 7, d->run_id);
    if (db_step(s, q, "runs") && !d->reserved)
        d->run_id = sqlite3_last_insert_rowid(d->st->db);
    sqlite3_finalize(q);
    for (size_t i = 0; d->run_id && i < ri->nagents; i++)
        db_agent(s, i, &ri->agents[i]);
    if (s->write_error || !db_exec(s, "COMMIT")) {
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
        d->run_id = 0;
    }
}

static void db_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    static const char sql[] =
        "INSERT INTO tests(run_id, idx, spec, cycle, cycle_param, cycle_value, start_unix_ns) "
        "VALUES(?, ?, ?, ?, ?, ?, ?)";
    struct db_sink *d = s->priv;
    sqlite3_stmt *q;
    bool cyc = ti->test && ti->test->cycle_param != IOF_CYCLE_NONE;

    db_batch_end(s);

    d->test_id = 0;
    d->row_seq = d->iv_seq = 0;
    d->test_idx = ti->test ? ti->test->index + 1 : d->test_idx + 1;
    d->target_hists = mgr_target_hists(d->plan, d->agents, d->nagents, ti->test);
    if (!d->run_id)
        return;
    if (sqlite3_prepare_v2(d->st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        db_fail(s, "tests");
        return;
    }
    sqlite3_bind_int64(q, 1, d->run_id);
    sqlite3_bind_int(q, 2, (int)d->test_idx);
    bind_text(q, 3, ti->spec ? ti->spec : "");
    bind_text(q, 4, ti->cycle ? ti->cycle : "");
    bind_text(q, 5, cyc ? iof_cycle_param_name(ti->test->cycle_param) : NULL);
    bind_u64(q, 6, cyc ? ti->test->cycle_value : 0, cyc);
    bind_u64(q, 7, ti->start_wall_ns, true);
    if (db_step(s, q, "tests"))
        d->test_id = sqlite3_last_insert_rowid(d->st->db);
    sqlite3_finalize(q);
}

static void db_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct db_sink *d = s->priv;
    sqlite3_stmt *q = d->stmt[DB_INTERVAL];
    bool known = !(iv->node && iv->lost);
    int i = 1;

    if (!d->test_id)
        return;
    sqlite3_bind_int64(q, i++, d->test_id);
    sqlite3_bind_int64(q, i++, d->iv_seq++);
    bind_u64(q, i++, iv->k + 1, true);
    sqlite3_bind_double(q, i++, iv->time_s);
    bind_text(q, i++, iv->node ? iv->node : "ALL");
    sqlite3_bind_int(q, i++, (int)iv->reported);
    sqlite3_bind_int(q, i++, (int)iv->lost);
    sqlite3_bind_int(q, i++, iv->late);
    i = bind_metrics(q, i, iv->stats, iv->m, known, iv->cpu);
    if (known)
        bind_latency(q, i, iv->stats);
    db_batch_add(s);
    db_step(s, q, "intervals");
    /* The interval's ALL row: every node's is in. Not a late report's own
     * ALL row: a commit per late report would slow a manager that is
     * already behind. */
    if (!iv->node && !iv->late)
        db_batch_end(s);
}

static void db_add_row(struct mgr_sink *s, const struct mgr_row *r)
{
    struct db_sink *d = s->priv;
    sqlite3_stmt *q = d->stmt[DB_ROW];
    bool absent = r->status == MGR_STATUS_ABSENT;
    int i = 1;

    if (!d->test_id)
        return;
    sqlite3_bind_int64(q, i++, d->test_id);
    sqlite3_bind_int64(q, i++, d->row_seq++);
    bind_text(q, i++, mgr_row_type_name(r->type));
    bind_text(q, i++, r->type == MGR_ROW_ALL ? NULL : r->node);
    bind_text(q, i++, r->type == MGR_ROW_WORKER || r->type == MGR_ROW_TARGET ? r->worker : NULL);
    bind_text(q, i++, r->type == MGR_ROW_TARGET ? r->target : NULL);
    bind_text(q, i++, mgr_row_status_name(r->status));
    bind_u64(q, i++, r->queue_depth,
             !(r->type == MGR_ROW_NODE || (r->type == MGR_ROW_ALL && !r->queue_depth)));
    sqlite3_bind_int(q, i++, (int)r->nodes);
    sqlite3_bind_int(q, i++, (int)r->workers);
    sqlite3_bind_int(q, i++, (int)r->targets);
    bind_real(q, i++, (double)r->window_start_ns / 1e9, !absent);
    bind_real(q, i++, (double)r->window_end_ns / 1e9, !absent);
    /* CPU belongs to NODE and (as the nodes' mean) ALL rows only. */
    i = bind_metrics(q, i, r->stats, r->m, true,
                     r->type == MGR_ROW_NODE || r->type == MGR_ROW_ALL ? r->cpu : NULL);
    if (r->type != MGR_ROW_TARGET || d->target_hists)
        bind_latency(q, i, r->stats);
    db_step(s, q, "rows");
}

static void db_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    (void)ti;
    if (((struct db_sink *)s->priv)->test_id)
        db_batch_add(s);
    db_add_row(s, r);
}

static void db_flush(struct mgr_sink *s)
{
    db_batch_end(s);
}

static void db_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    static const char sql[] =
        "UPDATE tests SET end_unix_ns = ?, start_skew_ms = ?, nodes = ?, lost = ?, absent = "
        "'[]', interrupted = ?, complete = 1 WHERE id = ?";
    static const char asql[] = "UPDATE tests SET absent = json_insert(absent, '$[#]', ?) "
                               "WHERE id = ?";
    struct db_sink *d = s->priv;
    sqlite3_stmt *q;

    db_batch_end(s);

    if (!d->test_id)
        return;
    if (!db_exec(s, "BEGIN IMMEDIATE"))
        return;
    if (te->all)
        db_add_row(s, te->all);
    if (sqlite3_prepare_v2(d->st->db, sql, -1, &q, NULL) == SQLITE_OK) {
        bind_u64(q, 1, te->end_wall_ns, te->end_wall_ns != 0);
        sqlite3_bind_double(q, 2, te->start_skew_ms);
        sqlite3_bind_int(q, 3, (int)te->nodes);
        sqlite3_bind_int(q, 4, (int)te->lost);
        sqlite3_bind_int(q, 5, te->interrupted);
        sqlite3_bind_int64(q, 6, d->test_id);
        db_step(s, q, "tests");
        sqlite3_finalize(q);
    } else {
        db_fail(s, "tests");
    }
    if (te->nabsent && sqlite3_prepare_v2(d->st->db, asql, -1, &q, NULL) == SQLITE_OK) {
        for (size_t i = 0; i < te->nabsent; i++) {
            bind_text(q, 1, te->absent[i]);
            sqlite3_bind_int64(q, 2, d->test_id);
            db_step(s, q, "tests");
        }
        sqlite3_finalize(q);
    }
    if (s->write_error || !db_exec(s, "COMMIT"))
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
    d->test_id = 0;
}

static void db_run_end(struct mgr_sink *s, int exit_code)
{
    struct db_sink *d = s->priv;
    char sql[128];

    db_batch_end(s);

    if (d->ended || !d->run_id)
        return;
    d->ended = true;
    snprintf(sql, sizeof(sql), "UPDATE runs SET exit_code = %d WHERE id = %" PRId64, exit_code,
             d->run_id);
    db_exec(s, sql);
}

static void db_close(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    db_batch_end(s);

    /* A reserved id whose run never began (refused before it started):
     * no empty run in the history; AUTOINCREMENT never hands the id out
     * again, so the file names it went into stay unique. */
    if (d->reserved && !d->begun && d->run_id) {
        char sql[96];
        snprintf(sql, sizeof(sql), "DELETE FROM runs WHERE id = %" PRId64, d->run_id);
        sqlite3_exec(d->st->db, sql, NULL, NULL, NULL);
    }

    if (s->write_error)
        IOF_ERROR("%s: run history write failed: %s", s->path, d->first_error);
    db_free(d);
    s->priv = NULL;
}

static const struct mgr_sink_ops mgr_sink_db = {
    .name = "db",
    .open = db_open,
    .run_begin = db_run_begin,
    .test_begin = db_test_begin,
    .interval = db_interval,
    .row = db_row,
    .test_end = db_test_end,
    .run_end = db_run_end,
    .flush = db_flush,
    .close = db_close,
};

int mgr_db_sink_open(const char *path, const char *tag, struct mgr_sink **out,
                     struct iof_diag *diag)
{
    struct db_sink *d;
    int r = mgr_sink_open(&mgr_sink_db, path, out, diag);

    if (r)
        return r;
    d = (*out)->priv;
    if (tag && !(d->tag = strdup(tag))) {
        mgr_sink_close(*out);
        *out = NULL;
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    return 0;
}

int64_t mgr_db_sink_reserve(struct mgr_sink *s, struct iof_diag *diag)
{
    static const char sql[] = "INSERT INTO runs(start_unix_ns, iofleet_version, source, tag) "
                              "VALUES(?, ?, 'run', ?)";
    struct db_sink *d = s->priv;
    sqlite3_stmt *q;
    int rc;

    if (d->run_id)
        return d->run_id;
    if (sqlite3_prepare_v2(d->st->db, sql, -1, &q, NULL) != SQLITE_OK)
        return iof_diag_set(diag, -EIO, "%s: %s", s->path, sqlite3_errmsg(d->st->db));
    bind_u64(q, 1, iof_wall_ns(), true);
    bind_text(q, 2, IOF_VERSION);
    bind_text(q, 3, d->tag);
    rc = sqlite3_step(q);
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE)
        return iof_diag_set(diag, -EIO, "%s: %s", s->path, sqlite3_errmsg(d->st->db));
    d->run_id = sqlite3_last_insert_rowid(d->st->db);
    d->reserved = true;
    return d->run_id;
}

int64_t mgr_db_sink_run_id(const struct mgr_sink *s)
{
    const struct db_sink *d = s->priv;
    return d ? d->run_id : 0;
}
