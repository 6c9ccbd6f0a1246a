/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/db.c - the run history sink: records a run into the SQLite
 * store (manager/history/store.h) from a writer thread of its own so the
 * database never holds up the manager's loop, a test at a time: a test's
 * records wait in the queue while it is measured (mgr_dbq_hold), and before
 * the next test's start the writer has written and synced them (db_quiesce),
 * so nothing of the history reaches a disk during a measured window.
 *
 * The loop only copies each event's figures into a record (a row's metrics,
 * its names, its histograms in their compact run form: a few hundred bytes)
 * and queues it (manager/history/db_queue.h); the writer thread, which owns the
 * database connection from run_begin to close, turns records into SQL
 * (manager/history/db_writer.c: batches of intervals and rows, a transaction per
 * test begin and end). At run_begin the loop takes the run's id itself (one
 * short insert), so the id is known at once; the writer fills the run's
 * row, its plan and its agents. A killed manager leaves every test whose
 * end the writer reached: the writer is the queue behind the loop,
 * milliseconds unless the database is held by another writer.
 *
 * Back-pressure: the queue holds at most DB_QUEUE_MAX_BYTES of records. The
 * loop never waits for the writer (but before a test's start, at most
 * DB_QUIESCE_MAX_NS): an interval or row that would pass the
 * bound is not recorded, counted, and close reports the count as a write
 * error (the run's exit code is then 1). A test's begin and end, and the
 * run's end, always go in.
 *
 * Latency histograms are kept as the JSON document's `latency` object
 * ({"read": {..., "buckets": [[low_ns, width_ns, count], ...]}, "write":
 * ...}), so imported and recorded runs read the same; a TARGET row's is
 * NULL in a test past the size mgr_target_hists() allows, as in --json,
 * and a node interval's in a run past the size mgr_interval_hists() allows
 * (the --json document has none for intervals).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/hist.h"
#include "common/log.h"
#include "manager/history/db_queue.h"
#include "manager/history/db_writer.h"
#include "manager/metrics.h"
#include "manager/history/store.h"

/* The records queued for the writer at most, in bytes: ~0.95 KB per row with
 * its histograms (a record's head is 808 bytes), so ~280,000 rows, 1.6 times
 * the final rows of a test of 10,000 agents of 8 workers and targets each
 * (170,000). */
#define DB_QUEUE_MAX_BYTES (256u << 20)

/* The records a test may hold back while it is measured, in bytes. A node
 * interval's record is about 1 KB, so this is hours of a one-node run at
 * 1 s intervals, about 11 minutes at 100 agents, a minute at 1,000. Past
 * it the writer writes them during the window rather than let the queue's
 * bound refuse them; with --verbose close says so. A fleet's history is
 * rarely on a disk under test; a local run's is held whole. */
#define DB_HOLD_MAX_BYTES (64u << 20)

/* How long a test's start waits for the writer at most (db_quiesce): a
 * database held by another process must not hold up the run. */
#define DB_QUIESCE_MAX_NS 2000000000ull

struct db_sink {
    struct mgr_store *st;
    char *tag;
    int64_t run_id;
    bool reserved; /* run_id taken by mgr_db_sink_reserve, the row filled at run_begin */
    bool begun;
    bool verbose; /* close says what the writer did */
    struct mgr_dbq queue;
    bool queue_ready;
    bool writing; /* the writer thread runs */
    pthread_t thread;
    bool target_hists;           /* the running test's TARGET rows keep their histograms */
    unsigned test_idx;           /* the running test's 1-based index */
    bool node_iv_hists;          /* node intervals keep their histograms (mgr_interval_hists) */
    const struct iof_plan *plan; /* from run_begin, valid until run_end */
    const struct mgr_agent_info *agents;
    size_t nagents;
    bool unflushed;       /* intervals or rows queued since the last flush record */
    unsigned busy_starts; /* tests started while the writer was still busy */
    uint64_t dropped;     /* intervals and rows refused by the full queue */
    int loop_error;       /* a failure on the loop's side (before the writer ran) */
    char loop_msg[1024];
    struct mgr_dbw w; /* the writer's (the loop reads it only after the join) */
};

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
static void hist_take(struct mgr_dbw_hist *dh, const struct iof_hist *h, bool latency)
{
    dh->count = h->count;
    dh->sum_ns = h->sum_ns;
    dh->min_ns = h->min_ns;
    dh->max_ns = h->max_ns;
    dh->buckets = latency && iof_hist_has_buckets(h);
    dh->len = dh->buckets ? (uint32_t)iof_hist_runs_encoded_len(h) : 0;
    dh->off = 0;
}

static void fig_take(struct mgr_dbw_fig *f, const struct iof_stats *st, const struct mgr_metrics *m,
                     bool known, bool latency, const struct proto_cpu *cpu)
{
    f->m = *m;
    f->known = known;
    f->latency = latency;
    f->cpu_valid = cpu && cpu->valid;
    f->cpu_pct = f->cpu_valid ? cpu->busy_pct : 0;
    memset(&f->cpu, 0, sizeof(f->cpu));
    if (f->cpu_valid)
        f->cpu = *cpu;
    f->rd_errors = st->rd.errors;
    f->wr_errors = st->wr.errors;
    f->verify_errors = st->verify_errors;
    f->verify_bad_reads = st->verify_bad_reads;
    f->verify_overlaid = st->verify_overlaid;
    f->first_error = st->first_error;
    f->first_error_offset = st->first_error_offset;
    f->svc_ios = st->rated.svc.count;
    hist_take(&f->rd, &st->rd.lat, latency);
    hist_take(&f->wr, &st->wr.lat, latency);
}

static size_t str_size(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* Appends s to r's tail at *used; returns the copy (NULL for NULL). */
static const char *tail_str(struct mgr_dbw_rec *r, size_t *used, const char *s)
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
static void tail_fig(struct mgr_dbw_rec *r, size_t *used, const struct iof_stats *st)
{
    struct mgr_dbw_hist *dh[2] = {&r->fig.rd, &r->fig.wr};
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
static struct mgr_dbw_rec *rec_new(enum mgr_dbw_kind kind, size_t tail)
{
    /* The tail is all written by the caller: only the head is cleared. */
    struct mgr_dbw_rec *r = malloc(sizeof(*r) + tail);

    if (!r)
        return NULL;
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->q.bytes = sizeof(*r) + tail;
    return r;
}

/* Queues r for the writer, with mgr_dbq_push's flags (MGR_DBQ_MUST: a
 * record that is never refused); a refused interval or row is counted, for
 * close to report. */
/* Begins, ends and flushes: never refused, and the writer starts on them. */
#define REC_MUST (MGR_DBQ_MUST | MGR_DBQ_WAKE)

static void rec_push(struct db_sink *d, struct mgr_dbw_rec *r, unsigned flags)
{
    bool must = flags & MGR_DBQ_MUST;

    if (!r) {
        if (must)
            loop_fail(d, "out of memory", "");
        else
            d->dropped++;
        return;
    }
    /* Read before the push: from then on the writer may have freed r. */
    bool figures = r->kind == MGR_DBW_INTERVAL || r->kind == MGR_DBW_ROW;
    if (mgr_dbq_push(&d->queue, &r->q, flags)) {
        free(r);
        if (!must)
            d->dropped++;
        return;
    }
    if (figures)
        d->unflushed = true;
}

static unsigned char *le_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

static unsigned char *le_dbl(unsigned char *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    return le_u64(p, u);
}

/* One CPU of a node as the cpus column holds it (MGR_STORE_CPU_BYTES). */
static void cpu_put(unsigned char *p, const struct proto_cpu_one *c)
{
    for (int i = 0; i < 4; i++)
        *p++ = (unsigned char)(c->id >> (8 * i));
    p = le_dbl(p, c->busy_pct);
    p = le_dbl(p, c->user_pct);
    p = le_dbl(p, c->sys_pct);
    p = le_dbl(p, c->dpc_pct);
    le_dbl(p, c->irq_pct);
}

/* A row's record: head bytes of the caller's own (aligned for pointers)
 * first in the tail, then the row's names and histograms. */
static struct mgr_dbw_rec *rec_row(struct db_sink *d, enum mgr_dbw_kind kind,
                                   const struct mgr_row *row, size_t head)
{
    struct mgr_dbw_rec *r;
    struct mgr_dbw_fig f;
    const char *node = row->type == MGR_ROW_ALL ? NULL : row->node;
    const char *worker =
        row->type == MGR_ROW_WORKER || row->type == MGR_ROW_TARGET ? row->worker : NULL;
    const char *target = row->type == MGR_ROW_TARGET ? row->target : NULL;
    const char *group =
        row->type == MGR_ROW_GROUP || row->type == MGR_ROW_WORKER || row->type == MGR_ROW_TARGET
            ? row->group
            : NULL;
    const char *device = row->place ? row->place->device : NULL;
    const char *fstype = row->place ? row->place->fstype : NULL;
    size_t cpus = row->ncpus * MGR_STORE_CPU_BYTES;
    size_t used = head;

    /* CPU belongs to NODE and (as the nodes' mean) ALL rows only. */
    fig_take(&f, row->stats, row->m, true, row->type != MGR_ROW_TARGET || d->target_hists,
             row->type == MGR_ROW_NODE || row->type == MGR_ROW_ALL ? row->cpu : NULL);
    f.ns = row->ns;
    r = rec_new(kind, head + str_size(node) + str_size(worker) + str_size(target) +
                          str_size(group) + str_size(device) + str_size(fstype) + cpus + f.rd.len +
                          f.wr.len);
    if (!r)
        return NULL;
    r->fig = f;
    r->row = (struct mgr_dbw_row){.type = row->type,
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
    r->row.group = tail_str(r, &used, group);
    r->row.device = tail_str(r, &used, device);
    r->row.fstype = tail_str(r, &used, fstype);
    r->row.range_offset = row->range_offset;
    r->row.range_size = row->range_size;
    r->row.ram_backed = row->place ? row->place->ram_backed : -2;
    r->row.cpus = r->tail + used;
    r->row.ncpus = row->ncpus;
    for (size_t i = 0; i < row->ncpus; i++)
        cpu_put(r->tail + used + i * MGR_STORE_CPU_BYTES, &row->cpus[i]);
    used += cpus;
    tail_fig(r, &used, row->stats);
    return r;
}

/* --- sink ops ---------------------------------------------------------------------------- */

static void db_free(struct db_sink *d)
{
    if (!d)
        return;
    mgr_dbw_fini(&d->w);
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
        return iof_diag_set(diag, -ENOMEM, "%s: out of memory", path);
    r = mgr_dbq_init(&d->queue, DB_QUEUE_MAX_BYTES);
    if (r) {
        free(d);
        return iof_diag_set(diag, r, "run history queue: %s", strerror(-r));
    }
    d->queue_ready = true;
    r = mgr_store_open(path, &d->st, diag);
    if (!r)
        r = mgr_dbw_init(&d->w, d->st, diag);
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
    struct mgr_dbw_rec *r;
    sigset_t all, old;
    int e;

    if (d->begun)
        return;
    d->begun = true;
    d->plan = ri->plan;
    d->agents = ri->agents;
    d->nagents = ri->nagents;
    d->node_iv_hists = mgr_interval_hists(ri->plan, ri->nagents);
    if (!d->run_id && mgr_db_sink_reserve(s, &diag) <= 0) {
        loop_fail(d, "", diag.msg);
        d->run_id = 0;
        return;
    }
    r = rec_new(MGR_DBW_RUN, 0);
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
    rec_push(d, r, REC_MUST);
    d->w.tag = d->tag;
    d->w.run_id = d->run_id;
    d->w.queue = &d->queue;
    /* Signals stay with the loop thread (libuv's handlers). */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e = pthread_create(&d->thread, NULL, mgr_dbw_main, &d->w);
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
    struct mgr_dbw_rec *r;
    size_t used = 0;

    d->test_idx = ti->test ? ti->test->index + 1 : d->test_idx + 1;
    d->target_hists = mgr_target_hists(d->plan, d->agents, d->nagents, ti->test);
    if (!d->writing)
        return;
    /* Nothing of the test goes to disk until it ends, its start included:
     * the history's writes stay out of its measured window. */
    mgr_dbq_hold(&d->queue, true, DB_HOLD_MAX_BYTES);
    r = rec_new(MGR_DBW_TEST, str_size(spec) + str_size(cycle));
    if (r) {
        r->u.test.idx = d->test_idx;
        r->u.test.spec = tail_str(r, &used, spec);
        r->u.test.cycle = tail_str(r, &used, cycle);
        r->u.test.cycle_param = cyc ? iof_cycle_param_name(ti->test->cycle_param) : NULL;
        r->u.test.cycle_value = cyc ? ti->test->cycle_value : 0;
        r->u.test.start_wall_ns = ti->start_wall_ns;
        r->u.test.rate_frac = ti->test ? ti->test->rate_frac : 0;
        r->u.test.rate_target = ti->test ? ti->test->rate_target : 0;
    }
    rec_push(d, r, REC_MUST);
}

static void db_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct db_sink *d = s->priv;
    bool known = !(iv->node && iv->lost);
    struct mgr_dbw_fig f;
    struct mgr_dbw_rec *r;
    size_t used = 0;

    if (!d->writing)
        return;
    fig_take(&f, iv->stats, iv->m, known, known && (!iv->node || d->node_iv_hists), iv->cpu);
    f.ns = iv->ns;
    f.interrupted = iv->interrupted;
    r = rec_new(MGR_DBW_INTERVAL, str_size(iv->node) + f.rd.len + f.wr.len);
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
    /* The ALL interval ends the writer's batch: it goes to the database at
     * once, the nodes' intervals before it in the same wake-up. */
    rec_push(d, r, iv->node ? 0 : MGR_DBQ_WAKE);
}

static void db_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    struct db_sink *d = s->priv;

    struct mgr_dbw_rec *rec;

    if (!d->writing)
        return;
    rec = rec_row(d, MGR_DBW_ROW, r, 0);
    if (rec)
        rec->fig.interrupted = ti && ti->interrupted;
    rec_push(d, rec, 0);
}

static void db_flush(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    if (!d->writing || !d->unflushed)
        return;
    d->unflushed = false;
    rec_push(d, rec_new(MGR_DBW_FLUSH, 0), REC_MUST);
}

static void db_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    struct db_sink *d = s->priv;
    size_t head = te->nabsent * sizeof(char *), used = head;
    struct mgr_dbw_rec *r;

    if (!d->writing)
        return;
    for (size_t i = 0; i < te->nabsent; i++)
        head += str_size(te->absent[i]);
    if (te->all) {
        r = rec_row(d, MGR_DBW_END, te->all, head);
        if (r)
            r->fig.interrupted = te->test && te->test->interrupted;
    } else {
        r = rec_new(MGR_DBW_END, head);
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
    rec_push(d, r, REC_MUST);
    /* The writer takes the whole test now; db_quiesce waits for it before
     * the next test's start. */
    mgr_dbq_hold(&d->queue, false, 0);
}

/* Before a test's start time is fixed: returns once everything queued is
 * committed and synced (manager/history/db_writer.c), so neither the
 * writer nor the kernel's write-back of its files touches a disk while the
 * test is measured, whatever disk the history is on. */
static void db_quiesce(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    if (!d->writing)
        return;
    d->unflushed = false; /* the flush record commits an open batch */
    rec_push(d, rec_new(MGR_DBW_FLUSH, 0), REC_MUST);
    if (mgr_dbq_drain_for(&d->queue, DB_QUIESCE_MAX_NS) == -ETIMEDOUT)
        d->busy_starts++;
}

static void db_run_end(struct mgr_sink *s, int exit_code)
{
    struct db_sink *d = s->priv;
    struct mgr_dbw_rec *r;

    if (!d->writing)
        return;
    r = rec_new(MGR_DBW_RUN_END, 0);
    if (r)
        r->u.exit_code = exit_code;
    rec_push(d, r, REC_MUST);
    /* The run's agent infos and plan text, which the writer borrows, are
     * freed after run_end (manager/run.c); the loop has stopped by then
     * (every link closed), so waiting here holds nothing up. */
    mgr_dbq_drain(&d->queue);
}

static void db_close(struct mgr_sink *s)
{
    struct db_sink *d = s->priv;

    if (d->writing) {
        mgr_dbq_close(&d->queue);
        pthread_join(d->thread, NULL);
        d->writing = false;
        if (d->verbose)
            IOF_INFO("%s: run history: %" PRIu64
                     " intervals and rows in %.3f s of its writer's CPU "
                     "(%.1f us each), queue peak %.1f MiB",
                     s->path, d->w.written, (double)d->w.cpu_ns / 1e9,
                     d->w.written ? (double)d->w.cpu_ns / 1e3 / (double)d->w.written : 0.0,
                     (double)d->queue.peak_bytes / (1 << 20));
        if (d->verbose && d->busy_starts)
            IOF_INFO("%s: run history: %u tests started while its writer was still busy (a "
                     "database held by another process, or a slow disk): its writes may have "
                     "fallen in their measured windows",
                     s->path, d->busy_starts);
        if (d->verbose && d->queue.spilled)
            IOF_INFO("%s: run history: a test's records passed %u MiB and were written while it "
                     "was measured (%" PRIu64 " times)",
                     s->path, DB_HOLD_MAX_BYTES >> 20, d->queue.spilled);
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
    } else if (d->w.error) {
        s->write_error = d->w.error;
        IOF_ERROR("%s: run history write failed: %s", s->path, d->w.first_error);
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
    .quiesce = db_quiesce,
    .close = db_close,
};

int mgr_db_sink_open(const char *path, const char *tag, struct mgr_sink **out,
                     struct iof_diag *diag)
{
    struct db_sink *d;
    int r = mgr_sink_open(&mgr_sink_db, path, 0, out, diag);

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
    sqlite3_bind_int64(q, 1, (int64_t)iof_wall_ns());
    sqlite3_bind_text(q, 2, IOF_VERSION, -1, SQLITE_STATIC);
    if (d->tag)
        sqlite3_bind_text(q, 3, d->tag, -1, SQLITE_STATIC);
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
