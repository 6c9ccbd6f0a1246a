/* manager/out_db.c - the run history sink: records a run into the SQLite
 * store (manager/store.h) as it goes, from a writer thread of its own so the
 * database never holds up the manager's loop.
 *
 * The loop only copies each event's figures into a record (a row's metrics,
 * its names, its histograms in their compact run form: a few hundred bytes)
 * and queues it (manager/db_queue.h); the writer thread, which owns the
 * database connection from run_begin to close, turns records into SQL. At
 * run_begin the loop takes the run's id itself (one short insert), so the id
 * is known at once; the writer then fills the run's row, its plan and the
 * agents. Intervals and rows go in batches: one transaction from the first
 * of them until the interval's ALL row, the run's 50 ms tick (flush) or
 * DB_BATCH_ROWS rows, whichever comes first. A test's begin and end, and the
 * run's end, are transactions of their own, so a killed manager leaves every
 * test whose end the writer reached (it is at most the queue behind the loop:
 * milliseconds unless the database is held by another writer) and other
 * managers are never held up long.
 *
 * Back-pressure: the queue holds at most DB_QUEUE_MAX_BYTES of records. The
 * loop never waits for the writer: an interval or row that would pass the
 * bound is not recorded, counted, and close reports the count as a write
 * error (the run's exit code is then 1). A test's begin and end, and the
 * run's end, always go in.
 *
 * Latency histograms are kept as the JSON document's `latency` object
 * ({"read": {..., "buckets": [[low_ns, width_ns, count], ...]}, "write":
 * ...}), so imported and recorded runs read the same; a TARGET row's is
 * NULL in a test past the size mgr_target_hists() allows, as in --json.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hist.h"
#include "common/log.h"
#include "manager/db_queue.h"
#include "manager/report.h"
#include "manager/store.h"

enum db_stmt { DB_INTERVAL, DB_ROW, DB_NSTMT };

/* Rows and intervals in one transaction at most: a commit writes them to
 * the WAL at once (~6.6 KB each with their histograms) while other
 * managers' writers wait; 256 keep it to a few ms. */
#define DB_BATCH_ROWS 256

/* The records queued for the writer at most, in bytes: ~1 KB per row with
 * its histograms, so ~250,000 rows, the final rows of a test of 10,000
 * agents of 8 workers and targets each (170,000) with room to spare. */
#define DB_QUEUE_MAX_BYTES (256u << 20)

/* The writer's niceness above the loop's: the loop (agents' reads,
 * heartbeats, intervals) always comes first for the CPU; the writer takes
 * what is left, and the queue absorbs the difference. */
#define DB_WRITER_NICE 10

enum db_kind { DB_REC_RUN, DB_REC_TEST, DB_REC_INTERVAL, DB_REC_ROW, DB_REC_END, DB_REC_RUN_END,
               DB_REC_FLUSH };

/* A latency histogram as the writer needs it: its summary, and (buckets)
 * its buckets in the run form of iof_hist_encode_runs, in the record's
 * tail at off. */
struct db_hist {
    uint64_t count;
    iof_u128 sum_ns;
    uint64_t min_ns, max_ns;
    bool buckets;
    uint32_t off, len;
};

/* The figures of an interval or a row, copied on the loop. */
struct db_fig {
    struct mgr_metrics m;
    struct db_hist rd, wr;
    bool known;   /* counts and rates known (false: a lost interval) */
    bool latency; /* the latency object is stored (else NULL) */
    bool cpu_valid;
    double cpu_pct;
};

struct db_rowinfo {
    enum mgr_row_type type;
    enum mgr_row_status status;
    const char *node, *worker, *target; /* in the tail, NULL where they do not apply */
    uint32_t queue_depth, nodes, workers, targets;
    uint64_t window_start_ns, window_end_ns;
};

/* One event for the writer, allocated as one block with its tail (names,
 * histograms). Borrowed pointers (DB_REC_RUN) stay valid until close, which
 * joins the writer. */
struct db_rec {
    struct mgr_dbq_item q;
    enum db_kind kind;
    union {
        struct {
            uint64_t start_wall_ns, tests_planned;
            bool have_plan;
            const char *plan_name, *plan_text;
            const struct mgr_agent_info *agents;
            size_t nagents;
        } run;
        struct {
            unsigned idx;
            const char *spec, *cycle, *cycle_param; /* cycle_param: static, NULL none */
            uint64_t cycle_value, start_wall_ns;
        } test;
        struct {
            uint64_t k;
            double time_s;
            const char *node; /* NULL: ALL */
            unsigned reported, lost;
            bool late;
        } iv;
        struct {
            uint64_t end_wall_ns;
            double start_skew_ms;
            unsigned nodes, lost;
            bool interrupted, has_all;
            size_t nabsent;
            const char **absent; /* in the tail */
        } end;
        int exit_code;
    } u;
    struct db_rowinfo row; /* DB_REC_ROW, and DB_REC_END's ALL row */
    struct db_fig fig;     /* DB_REC_INTERVAL, DB_REC_ROW, DB_REC_END's ALL row */
    unsigned char tail[];
};

struct db_sink {
    struct mgr_store *st;
    char *tag;
    int64_t run_id;
    bool reserved; /* run_id taken by mgr_db_sink_reserve, the row filled at run_begin */
    bool begun;
    bool verbose; /* close says what the writer did */
    sqlite3_stmt *stmt[DB_NSTMT];

    /* The loop's side. */
    struct mgr_dbq queue;
    bool queue_ready;
    bool writing; /* the writer thread runs */
    pthread_t thread;
    bool target_hists;           /* the running test's TARGET rows keep their histograms */
    unsigned test_idx;           /* the running test's 1-based index */
    const struct iof_plan *plan; /* from run_begin, valid until close */
    const struct mgr_agent_info *agents;
    size_t nagents;
    bool unflushed;     /* intervals or rows queued since the last flush record */
    uint64_t dropped;   /* intervals and rows refused by the full queue */
    int loop_error;     /* a failure on the loop's side (before the writer ran) */
    char loop_msg[1024];

    /* The writer's side (the loop reads it only after the join). */
    int64_t test_id;   /* the running test, 0 when none */
    int64_t row_seq, iv_seq;
    bool ended;
    unsigned batch; /* intervals and rows in the open transaction; 0: none open */
    int error;
    char first_error[256];
    uint64_t written;  /* intervals and rows inserted */
    uint64_t cpu_ns;  /* the writer thread's CPU time */
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

/* Remembers the writer's first failure; the run goes on (the other sinks
 * and the terminal still have the figures) and close reports it once. */
static void db_fail(struct db_sink *d, const char *what)
{
    if (d->error)
        return;
    d->error = -EIO;
    snprintf(d->first_error, sizeof(d->first_error), "%s: %s", what,
             d->st ? sqlite3_errmsg(d->st->db) : "no database");
}

static bool db_exec(struct db_sink *d, const char *sql)
{
    if (sqlite3_exec(d->st->db, sql, NULL, NULL, NULL) == SQLITE_OK)
        return true;
    db_fail(d, sql);
    return false;
}

/* Commits the open batch, if any. A failed commit loses the batch (rolled
 * back) and is reported at close, as a failed write. */
static void db_batch_end(struct db_sink *d)
{
    if (!d->batch)
        return;
    d->batch = 0;
    if (!db_exec(d, "COMMIT"))
        sqlite3_exec(d->st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Opens a batch for the next interval or row unless one is open (when the
 * transaction cannot begin, the write goes alone). */
static void db_batch_add(struct db_sink *d)
{
    if (d->batch >= DB_BATCH_ROWS)
        db_batch_end(d);
    if (!d->batch && sqlite3_exec(d->st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return;
    d->batch++;
}

/* Steps a fully bound statement once and resets it. */
static bool db_step(struct db_sink *d, sqlite3_stmt *q, const char *what)
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
static void hist_json(sqlite3_str *b, const struct db_hist *h, const unsigned char *tail)
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
static void bind_latency(sqlite3_stmt *q, int i, const struct db_fig *f, const unsigned char *tail)
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

/* Binds the MGR_STORE_METRICS columns from index i on, then the latency
 * object; returns the next index. */
static int bind_figures(sqlite3_stmt *q, int i, const struct db_fig *f, const unsigned char *tail)
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
    return i + 1;
}

/* --- the writer thread ---------------------------------------------------------------------- */

/* The agent as the JSON document has it (docs/results.md, agents[]), made
 * by SQLite's json functions so every string is escaped. */
static void w_agent(struct db_sink *d, size_t seq, const struct mgr_agent_info *a)
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
static void w_run(struct db_sink *d, const struct db_rec *r)
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

static void w_test(struct db_sink *d, const struct db_rec *r)
{
    static const char sql[] =
        "INSERT INTO tests(run_id, idx, spec, cycle, cycle_param, cycle_value, start_unix_ns) "
        "VALUES(?, ?, ?, ?, ?, ?, ?)";
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
    if (db_step(d, q, "tests"))
        d->test_id = sqlite3_last_insert_rowid(d->st->db);
    sqlite3_finalize(q);
}

static void w_interval(struct db_sink *d, const struct db_rec *r)
{
    sqlite3_stmt *q = d->stmt[DB_INTERVAL];
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

static void w_row(struct db_sink *d, const struct db_rec *r)
{
    sqlite3_stmt *q = d->stmt[DB_ROW];
    const struct db_rowinfo *w = &r->row;
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
    bind_figures(q, i, &r->fig, r->tail);
    if (db_step(d, q, "rows"))
        d->written++;
}

/* The ALL row and the test marked complete, in one transaction. */
static void w_end(struct db_sink *d, const struct db_rec *r)
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

static void w_run_end(struct db_sink *d, int exit_code)
{
    char sql[128];

    if (d->ended)
        return;
    d->ended = true;
    snprintf(sql, sizeof(sql), "UPDATE runs SET exit_code = %d WHERE id = %" PRId64, exit_code,
             d->run_id);
    db_exec(d, sql);
}

static void w_apply(struct db_sink *d, const struct db_rec *r)
{
    switch (r->kind) {
    case DB_REC_INTERVAL:
        if (d->test_id)
            w_interval(d, r);
        return;
    case DB_REC_ROW:
        if (d->test_id) {
            db_batch_add(d);
            w_row(d, r);
        }
        return;
    case DB_REC_FLUSH:
        db_batch_end(d);
        return;
    case DB_REC_RUN:
        db_batch_end(d);
        w_run(d, r);
        return;
    case DB_REC_TEST:
        db_batch_end(d);
        w_test(d, r);
        return;
    case DB_REC_END:
        db_batch_end(d);
        if (d->test_id)
            w_end(d, r);
        d->test_id = 0;
        return;
    case DB_REC_RUN_END:
        db_batch_end(d);
        w_run_end(d, r->u.exit_code);
        return;
    }
}

/* The writer: owns the connection from run_begin until close joins it. */
static void *db_writer(void *arg)
{
    struct db_sink *d = arg;
    struct mgr_dbq_item *list;
    struct timespec t0, t1;

    /* Linux: a thread id as PRIO_PROCESS's who sets that thread only. */
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, tid);
    if (errno == 0)
        setpriority(PRIO_PROCESS, tid, nice_now + DB_WRITER_NICE);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    while ((list = mgr_dbq_take(&d->queue))) {
        while (list) {
            struct db_rec *r = (struct db_rec *)list;
            size_t bytes = r->q.bytes;
            list = list->next;
            w_apply(d, r);
            free(r);
            mgr_dbq_release(&d->queue, bytes);
        }
    }
    db_batch_end(d);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    d->cpu_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t1.tv_nsec -
                (uint64_t)t0.tv_nsec;
    return NULL;
}

/* --- the loop's side: records ---------------------------------------------------------------- */

static void loop_fail(struct db_sink *d, const char *what, const char *detail)
{
    if (d->loop_error)
        return;
    d->loop_error = -EIO;
    snprintf(d->loop_msg, sizeof(d->loop_msg), "%s%s", what, detail);
}

/* The summary of h, and whether (and in how many bytes) its buckets go in
 * the record. */
static void hist_take(struct db_hist *dh, const struct iof_hist *h, bool latency)
{
    dh->count = h->count;
    dh->sum_ns = h->sum_ns;
    dh->min_ns = h->min_ns;
    dh->max_ns = h->max_ns;
    dh->buckets = latency && iof_hist_has_buckets(h);
    dh->len = dh->buckets ? (uint32_t)iof_hist_runs_encoded_len(h) : 0;
    dh->off = 0;
}

static void fig_take(struct db_fig *f, const struct iof_stats *st, const struct mgr_metrics *m,
                     bool known, bool latency, const struct proto_cpu *cpu)
{
    f->m = *m;
    f->known = known;
    f->latency = latency;
    f->cpu_valid = cpu && cpu->valid;
    f->cpu_pct = f->cpu_valid ? cpu->busy_pct : 0;
    hist_take(&f->rd, &st->rd.lat, latency);
    hist_take(&f->wr, &st->wr.lat, latency);
}

static size_t str_size(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* Appends s to r's tail at *used; returns the copy (NULL for NULL). */
static const char *tail_str(struct db_rec *r, size_t *used, const char *s)
{
    char *p;
    size_t n = str_size(s);

    if (!s)
        return NULL;
    p = (char *)r->tail + *used;
    memcpy(p, s, n);
    *used += n;
    return p;
}

/* Encodes the histograms whose buckets go in the record into its tail. */
static void tail_fig(struct db_rec *r, size_t *used, const struct iof_stats *st)
{
    struct db_hist *dh[2] = {&r->fig.rd, &r->fig.wr};
    const struct iof_hist *h[2] = {&st->rd.lat, &st->wr.lat};

    for (int i = 0; i < 2; i++) {
        if (!dh[i]->len)
            continue;
        dh[i]->off = (uint32_t)*used;
        if (iof_hist_encode_runs(h[i], r->tail + *used, dh[i]->len) != (long)dh[i]->len)
            dh[i]->buckets = false; /* cannot happen: the length was measured */
        *used += dh[i]->len;
    }
}

/* A new record of kind with tail bytes after it (zeroed head); NULL when
 * out of memory. */
static struct db_rec *rec_new(enum db_kind kind, size_t tail)
{
    struct db_rec *r = calloc(1, sizeof(*r) + tail);

    if (!r)
        return NULL;
    r->kind = kind;
    r->q.bytes = sizeof(*r) + tail;
    return r;
}

/* Queues r for the writer (must: a record that is never refused); a
 * refused interval or row is counted, for close to report. */
static void rec_push(struct db_sink *d, struct db_rec *r, bool must)
{
    if (!r) {
        if (must)
            loop_fail(d, "out of memory", "");
        else
            d->dropped++;
        return;
    }
    if (mgr_dbq_push(&d->queue, &r->q, must)) {
        free(r);
        if (!must)
            d->dropped++;
        return;
    }
    if (r->kind == DB_REC_INTERVAL || r->kind == DB_REC_ROW)
        d->unflushed = true;
}

/* A row's record: head bytes of the caller's own (aligned for pointers)
 * first in the tail, then the row's names and histograms. */
static struct db_rec *rec_row(struct db_sink *d, enum db_kind kind, const struct mgr_row *row,
                              size_t head)
{
    struct db_rec *r;
    struct db_fig f;
    const char *node = row->type == MGR_ROW_ALL ? NULL : row->node;
    const char *worker =
        row->type == MGR_ROW_WORKER || row->type == MGR_ROW_TARGET ? row->worker : NULL;
    const char *target = row->type == MGR_ROW_TARGET ? row->target : NULL;
    size_t used = head;

    /* CPU belongs to NODE and (as the nodes' mean) ALL rows only. */
    fig_take(&f, row->stats, row->m, true, row->type != MGR_ROW_TARGET || d->target_hists,
             row->type == MGR_ROW_NODE || row->type == MGR_ROW_ALL ? row->cpu : NULL);
    r = rec_new(kind, head + str_size(node) + str_size(worker) + str_size(target) + f.rd.len +
                          f.wr.len);
    if (!r)
        return NULL;
    r->fig = f;
    r->row = (struct db_rowinfo){.type = row->type,
                                 .status = row->status,
                                 .queue_depth = row->queue_depth,
                                 .nodes = row->nodes,
                                 .workers = row->workers,
                                 .targets = row->targets,
                                 .window_start_ns = row->window_start_ns,
                                 .window_end_ns = row->window_end_ns};
    r->row.node = tail_str(r, &used, node);
    r->row.worker = tail_str(r, &used, worker);
    r->row.target = tail_str(r, &used, target);
    tail_fig(r, &used, row->stats);
    return r;
}

/* --- sink ops ---------------------------------------------------------------------------- */

static void db_free(struct db_sink *d)
{
    if (!d)
        return;
    for (int i = 0; i < DB_NSTMT; i++)
        sqlite3_finalize(d->stmt[i]);
    if (d->queue_ready)
        mgr_dbq_destroy(&d->queue);
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
    r = mgr_dbq_init(&d->queue, DB_QUEUE_MAX_BYTES);
    if (r) {
        free(d);
        return iof_diag_set(diag, r, "run history queue: %s", strerror(-r));
    }
    d->queue_ready = true;
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

/* Takes the run's id (unless reserved), queues the run's row and agents
 * and starts the writer, which owns the connection from here on. */
static void db_run_begin(struct mgr_sink *s, const struct mgr_run_info *ri)
{
    struct db_sink *d = s->priv;
    struct iof_diag diag = {{0}};
    struct db_rec *r;
    sigset_t all, old;
    int e;

    if (d->begun)
        return;
    d->begun = true;
    d->plan = ri->plan;
    d->agents = ri->agents;
    d->nagents = ri->nagents;
    if (!d->run_id && mgr_db_sink_reserve(s, &diag) <= 0) {
        loop_fail(d, "", diag.msg);
        d->run_id = 0;
        return;
    }
    r = rec_new(DB_REC_RUN, 0);
    if (!r) {
        loop_fail(d, "out of memory", "");
        return;
    }
    r->u.run.start_wall_ns = ri->start_wall_ns;
    r->u.run.have_plan = ri->plan != NULL;
    r->u.run.plan_name = ri->plan ? ri->plan->name : NULL;
    r->u.run.plan_text = ri->plan_text;
    r->u.run.tests_planned = ri->plan ? ri->plan->nspecs * iof_plan_cycle_steps(ri->plan) : 0;
    r->u.run.agents = ri->agents;
    r->u.run.nagents = ri->nagents;
    rec_push(d, r, true);
    /* Signals stay with the loop thread (libuv's handlers). */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e = pthread_create(&d->thread, NULL, db_writer, d);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        loop_fail(d, "cannot start the writer thread: ", strerror(e));
        return;
    }
    d->writing = true;
}

static void db_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    struct db_sink *d = s->priv;
    bool cyc = ti->test && ti->test->cycle_param != IOF_CYCLE_NONE;
    const char *spec = ti->spec ? ti->spec : "", *cycle = ti->cycle ? ti->cycle : "";
    struct db_rec *r;
    size_t used = 0;

    d->test_idx = ti->test ? ti->test->index + 1 : d->test_idx + 1;
    d->target_hists = mgr_target_hists(d->plan, d->agents, d->nagents, ti->test);
    if (!d->writing)
        return;
    r = rec_new(DB_REC_TEST, str_size(spec) + str_size(cycle));
    if (r) {
        r->u.test.idx = d->test_idx;
        r->u.test.spec = tail_str(r, &used, spec);
        r->u.test.cycle = tail_str(r, &used, cycle);
        r->u.test.cycle_param = cyc ? iof_cycle_param_name(ti->test->cycle_param) : NULL;
        r->u.test.cycle_value = cyc ? ti->test->cycle_value : 0;
        r->u.test.start_wall_ns = ti->start_wall_ns;
    }
    rec_push(d, r, true);
}

static void db_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct db_sink *d = s->priv;
    bool known = !(iv->node && iv->lost);
    struct db_fig f;
    struct db_rec *r;
    size_t used = 0;

    if (!d->writing)
        return;
    fig_take(&f, iv->stats, iv->m, known, known, iv->cpu);
    r = rec_new(DB_REC_INTERVAL, str_size(iv->node) + f.rd.len + f.wr.len);
    if (r) {
        r->fig = f;
        r->u.iv.k = iv->k;
        r->u.iv.time_s = iv->time_s;
        r->u.iv.node = tail_str(r, &used, iv->node);
        r->u.iv.reported = iv->reported;
        r->u.iv.lost = iv->lost;
        r->u.iv.late = iv->late;
        tail_fig(r, &used, iv->stats);
    }
    rec_push(d, r, false);
}

static void db_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    struct db_sink *d = s->priv;

    (void)ti;
    if (d->writing)
        rec_push(d, rec_row(d, DB_REC_ROW, r, 0), false);
}

static void db_flush(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    if (!d->writing || !d->unflushed)
        return;
    d->unflushed = false;
    rec_push(d, rec_new(DB_REC_FLUSH, 0), true);
}

static void db_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    struct db_sink *d = s->priv;
    size_t head = te->nabsent * sizeof(char *), used = head;
    struct db_rec *r;

    if (!d->writing)
        return;
    for (size_t i = 0; i < te->nabsent; i++)
        head += str_size(te->absent[i]);
    if (te->all) {
        r = rec_row(d, DB_REC_END, te->all, head);
    } else {
        r = rec_new(DB_REC_END, head);
    }
    if (r) {
        r->u.end.end_wall_ns = te->end_wall_ns;
        r->u.end.start_skew_ms = te->start_skew_ms;
        r->u.end.nodes = te->nodes;
        r->u.end.lost = te->lost;
        r->u.end.interrupted = te->interrupted;
        r->u.end.has_all = te->all != NULL;
        r->u.end.nabsent = te->nabsent;
        r->u.end.absent = (const char **)(void *)r->tail;
        for (size_t i = 0; i < te->nabsent; i++)
            r->u.end.absent[i] = tail_str(r, &used, te->absent[i]);
    }
    rec_push(d, r, true);
}

static void db_run_end(struct mgr_sink *s, int exit_code)
{
    struct db_sink *d = s->priv;
    struct db_rec *r;

    if (!d->writing)
        return;
    r = rec_new(DB_REC_RUN_END, 0);
    if (r)
        r->u.exit_code = exit_code;
    rec_push(d, r, true);
}

static void db_close(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    if (d->writing) {
        mgr_dbq_close(&d->queue);
        pthread_join(d->thread, NULL);
        d->writing = false;
        if (d->verbose)
            IOF_INFO("%s: run history: %" PRIu64 " intervals and rows in %.3f s of its writer's CPU "
                 "(%.1f us each), queue peak %.1f MiB",
                 s->path, d->written, (double)d->cpu_ns / 1e9,
                 d->written ? (double)d->cpu_ns / 1e3 / (double)d->written : 0.0,
                 (double)d->queue.peak_bytes / (1 << 20));
    }

    /* A reserved id whose run never began (refused before it started):
     * no empty run in the history; AUTOINCREMENT never hands the id out
     * again, so the file names it went into stay unique. */
    if (d->reserved && !d->begun && d->run_id) {
        char sql[96];
        snprintf(sql, sizeof(sql), "DELETE FROM runs WHERE id = %" PRId64, d->run_id);
        sqlite3_exec(d->st->db, sql, NULL, NULL, NULL);
    }

    if (d->loop_error) {
        s->write_error = d->loop_error;
        IOF_ERROR("%s: run history write failed: %s", s->path, d->loop_msg);
    } else if (d->error) {
        s->write_error = d->error;
        IOF_ERROR("%s: run history write failed: %s", s->path, d->first_error);
    }
    if (d->dropped) {
        if (!s->write_error)
            s->write_error = -ENOBUFS;
        IOF_ERROR("%s: run history: %" PRIu64 " intervals and rows not recorded: the database "
                  "fell more than %zu MiB of records behind the run",
                  s->path, d->dropped, d->queue.max_bytes >> 20);
    }
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
    if (d->writing)
        return iof_diag_set(diag, -EBUSY, "%s: the run has begun", s->path);
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

void mgr_db_sink_sync(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    if (d && d->writing)
        mgr_dbq_drain(&d->queue);
}

void mgr_db_sink_verbose(struct mgr_sink *s)
{
    ((struct db_sink *)s->priv)->verbose = true;
}

void mgr_db_sink_queue_max(struct mgr_sink *s, size_t bytes)
{
    struct db_sink *d = s->priv;

    pthread_mutex_lock(&d->queue.mu);
    d->queue.max_bytes = bytes;
    pthread_mutex_unlock(&d->queue.mu);
}
