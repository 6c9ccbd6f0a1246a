/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_store.c - manager/history/store.c and the history sink
 * (manager/sinks/db.c), read back through the report model (report_data.c).
 *
 * Checked: a new file is created with its directory, in WAL mode, at the
 * current schema version, also while another connection writes the fresh
 * file in rollback mode; a run driven through the sink's ops (2 tests, a
 * node with quotes and UTF-8 in its name, intervals, NODE/WORKER rows, an
 * ALL row at test end) reads back with the figures the metrics code
 * computes, and p99 recomputed from the stored buckets equals the
 * histogram's own; an unfinished test (no test_end) is kept as incomplete;
 * run ids and tags resolve (the newest run of a tag); rm removes every row of
 * a run; a version 1 file made by hand is migrated to the current version
 * keeping its runs; a file from a newer version is refused; a tag column
 * query works after migration; the list prints the headline of the fastest
 * test; a run of 20,000 agents with two targets each is recorded at
 * run_begin in linear time (each agent's targets under its own row), not
 * with a search per target that blocked a manager's loop for seconds;
 * intervals and rows are written in batches, visible to another connection
 * only once the interval's ALL row (not a late report's), a flush or the
 * test's end commits them; node intervals keep their histograms as
 * run.interval_histograms says (by default up to 1024 agents); the sink's calls do not wait for a
 * database another connection holds, and what they handed over is all recorded once it is free;
 * over the writer's queue bound, intervals and rows are not recorded, the test's end still is, and
 * close fails naming how many were left out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hist.h"
#include "manager/metrics.h"
#include "manager/history/report_html.h"
#include "manager/history/store.h"
#include "tmpdir.h"

static char g_dir[PATH_MAX];
static unsigned g_seq;

/* A row's or interval's metrics, computed once before every sink gets it, as
 * manager/aggregate.c does for a run. */
static const struct mgr_metrics *metrics_of(const struct iof_stats *s, uint64_t ns,
                                            struct mgr_metrics *m)
{
    mgr_metrics_compute(s, ns, m);
    return m;
}

static void fresh_path(char *buf, size_t cap, const char *name)
{
    int n = snprintf(buf, cap, "%s/%u/%s", g_dir, ++g_seq, name);
    assert_true(n > 0 && (size_t)n < cap);
}

static int setup_dir(void **state)
{
    (void)state;
    return test_tmpdir_make(g_dir, "test_store");
}

static int teardown_dir(void **state)
{
    (void)state;
    test_tmpdir_remove(g_dir);
    return 0;
}

static int64_t query_int(struct mgr_store *st, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = -1;
    assert_int_equal(sqlite3_prepare_v2(st->db, sql, -1, &s, NULL), SQLITE_OK);
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* No row and no interval is left without its test. */
static void assert_no_orphan_rows(struct mgr_store *st)
{
    assert_int_equal(query_int(st, "SELECT count(*) FROM rows WHERE test_id NOT IN "
                                   "(SELECT id FROM tests)"),
                     0);
    assert_int_equal(query_int(st, "SELECT count(*) FROM intervals WHERE test_id NOT IN "
                                   "(SELECT id FROM tests)"),
                     0);
}

static void fill(struct iof_stats *s, unsigned n, uint64_t base, uint64_t bs)
{
    iof_stats_reset(s);
    for (unsigned i = 0; i < n; i++) {
        iof_hist_record(&s->rd.lat, base + (i * 7919u) % 100000u);
        if (i % 3 == 0)
            iof_hist_record(&s->wr.lat, 2 * base + (i * 104729u) % 300000u);
    }
    s->rd.ios = s->rd.lat.count;
    s->wr.ios = s->wr.lat.count;
    s->rd.bytes = s->rd.ios * bs;
    s->wr.bytes = s->wr.ios * bs;
}

static const char *const node = "n\"ode\\ \xc3\xa9";

/* Drives one run of `ntests` tests through the sink; the last test is left
 * without its end when `cut`. Returns the run id. */
static int64_t record_run(const char *db, const char *tag, unsigned ntests, bool cut,
                          struct iof_stats *all_stats)
{
    struct mgr_sink *s = NULL;
    struct iof_diag d = {{0}};
    struct proto_target_info tgt = {
        .path = "/dev/x\"y", .size = 1 << 20, .logical_block_size = 512, .rotational = -1};
    struct proto_hello hello = {.major = 1,
                                .minor = 1,
                                .software = "0.1.0",
                                .inventory = {.hostname = "h\"ost",
                                              .cpus = 4,
                                              .memory_bytes = 1 << 30,
                                              .kernel = "6.1",
                                              .ntargets = 1,
                                              .targets = &tgt}};
    struct mgr_agent_info agent = {.name = node, .endpoint = "127.0.0.1:1", .hello = &hello};
    struct mgr_run_info ri = {.plan_text = "{\"name\":\"p\",\"x\":[1,2]}",
                              .agents = &agent,
                              .nagents = 1,
                              .start_wall_ns = 1700000000000000000ull};
    struct iof_stats *st = malloc(sizeof(*st));
    int64_t id;

    assert_non_null(st);
    assert_int_equal(mgr_db_sink_open(db, tag, &s, &d), 0);
    s->ops->run_begin(s, &ri);
    for (unsigned t = 0; t < ntests; t++) {
        struct iof_test test = {.index = t};
        char spec[32];
        struct mgr_test_info ti = {.test = &test,
                                   .ntests = ntests,
                                   .spec = spec,
                                   .cycle = "",
                                   .start_wall_ns = ri.start_wall_ns + t * 2000000000ull};
        snprintf(spec, sizeof(spec), "spec %u", t);
        s->ops->test_begin(s, &ti);
        for (unsigned k = 0; k < 2; k++) {
            fill(st, 1000 + k, 1000 * (t + 1), 4096);
            struct mgr_interval iv = {.test = &ti,
                                      .k = k,
                                      .time_s = 1.0 + k,
                                      .node = node,
                                      .stats = st,
                                      .ns = 500000000,
                                      .reported = 1};
            struct mgr_metrics m;
            iv.m = metrics_of(iv.stats, iv.ns, &m);
            s->ops->interval(s, &iv);
            iv.node = NULL;
            s->ops->interval(s, &iv);
        }
        fill(st, 2000 * (t + 1), 1000 * (t + 1), 4096);
        struct mgr_row nr = {.type = MGR_ROW_NODE,
                             .node = node,
                             .stats = st,
                             .ns = 1000000000,
                             .status = MGR_STATUS_OK,
                             .nodes = 1};
        struct mgr_metrics m;
        nr.m = metrics_of(nr.stats, nr.ns, &m);
        s->ops->row(s, &ti, &nr);
        struct mgr_row wr = nr;
        wr.type = MGR_ROW_WORKER;
        wr.worker = "w0";
        s->ops->row(s, &ti, &wr);
        if (cut && t == ntests - 1)
            break;
        struct mgr_row ar = {.type = MGR_ROW_ALL,
                             .stats = st,
                             .ns = 1000000000,
                             .status = MGR_STATUS_OK,
                             .nodes = 1};
        struct mgr_test_end te = {
            .test = &ti, .end_wall_ns = ti.start_wall_ns + 1, .all = &ar, .nodes = 1};
        struct mgr_metrics am;
        ar.m = metrics_of(ar.stats, ar.ns, &am);
        s->ops->test_end(s, &te);
        if (all_stats)
            *all_stats = *st;
    }
    if (!cut)
        s->ops->run_end(s, 0);
    id = mgr_db_sink_run_id(s);
    assert_int_equal(mgr_sink_close(s), 0);
    free(st);
    return id;
}

/* A TARGET row's histograms are kept or dropped (latency NULL) as
 * run.target_histograms and mgr_target_hists() say; other rows keep theirs. */
static void test_target_histograms(void **state)
{
    static const enum iof_target_hists modes[] = {IOF_TARGET_HISTS_ALWAYS, IOF_TARGET_HISTS_NEVER};
    struct iof_stats *st = malloc(sizeof(*st));
    (void)state;

    assert_non_null(st);
    fill(st, 1000, 1000, 4096);
    for (size_t i = 0; i < 2; i++) {
        char db[PATH_MAX], name[32];
        struct mgr_sink *s = NULL;
        struct mgr_store *store;
        struct iof_diag d = {{0}};
        struct iof_plan plan = {.run = {.target_hists = modes[i]}};
        struct mgr_agent_info agent = {.name = "a"};
        struct mgr_run_info ri = {.plan = &plan, .plan_text = "{}", .agents = &agent, .nagents = 1};
        struct iof_test test = {.index = 0};
        struct mgr_test_info ti = {.test = &test, .ntests = 1, .spec = "s", .cycle = ""};
        struct mgr_row row = {.type = MGR_ROW_TARGET,
                              .node = "a",
                              .worker = "w0",
                              .target = "t",
                              .stats = st,
                              .ns = 1000000000,
                              .nodes = 1};
        struct mgr_row all = row;
        struct mgr_test_end te = {.test = &ti, .end_wall_ns = 1, .all = &all, .nodes = 1};
        struct mgr_metrics m;

        snprintf(name, sizeof(name), "tgt%zu.db", i);
        fresh_path(db, sizeof(db), name);
        assert_int_equal(mgr_db_sink_open(db, NULL, &s, &d), 0);
        s->ops->run_begin(s, &ri);
        s->ops->test_begin(s, &ti);
        row.m = metrics_of(row.stats, row.ns, &m);
        s->ops->row(s, &ti, &row);
        all.type = MGR_ROW_ALL;
        all.node = all.worker = all.target = NULL;
        all.m = row.m;
        s->ops->test_end(s, &te);
        s->ops->run_end(s, 0);
        assert_int_equal(mgr_sink_close(s), 0);
        assert_int_equal(mgr_store_open(db, &store, &d), 0);
        assert_int_equal(query_int(store, "SELECT count(*) FROM rows WHERE row_type = 'TARGET' "
                                          "AND latency IS NULL AND read_ios > 0"),
                         modes[i] == IOF_TARGET_HISTS_NEVER);
        assert_int_equal(query_int(store, "SELECT count(*) FROM rows WHERE latency IS NULL"),
                         modes[i] == IOF_TARGET_HISTS_NEVER);
        assert_int_equal(query_int(store, "SELECT count(*) FROM rows"), 2);
        mgr_store_close(store);
    }
    free(st);
}

/* A node interval's histograms are kept (latency not NULL) as
 * run.interval_histograms and mgr_interval_hists() say: by default only in
 * runs of at most IOF_INTERVAL_HISTS_AUTO_MAX agents; the ALL interval's
 * always. */
static void test_interval_histograms(void **state)
{
    static const struct {
        enum iof_target_hists mode;
        size_t nagents;
        bool kept;
    } cases[] = {{IOF_TARGET_HISTS_AUTO, 1, true},
                 {IOF_TARGET_HISTS_AUTO, IOF_INTERVAL_HISTS_AUTO_MAX + 1, false},
                 {IOF_TARGET_HISTS_ALWAYS, IOF_INTERVAL_HISTS_AUTO_MAX + 1, true},
                 {IOF_TARGET_HISTS_NEVER, 1, false}};
    struct iof_stats *st = malloc(sizeof(*st));
    struct mgr_agent_info *agents = calloc(IOF_INTERVAL_HISTS_AUTO_MAX + 1, sizeof(*agents));
    (void)state;

    assert_non_null(st);
    assert_non_null(agents);
    for (size_t i = 0; i <= IOF_INTERVAL_HISTS_AUTO_MAX; i++)
        agents[i].name = "a";
    fill(st, 1000, 1000, 4096);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char db[PATH_MAX];
        struct mgr_sink *s = NULL;
        struct mgr_store *store;
        struct iof_diag d = {{0}};
        struct iof_plan plan = {.run = {.interval_hists = cases[i].mode}};
        struct mgr_run_info ri = {
            .plan = &plan, .plan_text = "{}", .agents = agents, .nagents = cases[i].nagents};
        struct iof_test test = {.index = 0};
        struct mgr_test_info ti = {.test = &test, .ntests = 1, .spec = "s", .cycle = ""};
        struct mgr_metrics m;
        struct mgr_interval iv = {
            .test = &ti, .node = "a", .stats = st, .ns = 1000000000, .reported = 1, .m = &m};

        fresh_path(db, sizeof(db), "ivh.db");
        mgr_metrics_compute(st, iv.ns, &m);
        assert_int_equal(mgr_db_sink_open(db, NULL, &s, &d), 0);
        s->ops->run_begin(s, &ri);
        s->ops->test_begin(s, &ti);
        s->ops->interval(s, &iv);
        iv.node = NULL;
        s->ops->interval(s, &iv);
        s->ops->run_end(s, 0);
        assert_int_equal(mgr_sink_close(s), 0);
        assert_int_equal(mgr_store_open(db, &store, &d), 0);
        assert_int_equal(query_int(store, "SELECT count(*) FROM intervals WHERE node = 'a' AND "
                                          "latency IS NOT NULL AND p99_lat_ms > 0"),
                         cases[i].kept);
        assert_int_equal(query_int(store, "SELECT count(*) FROM intervals WHERE node = 'ALL' "
                                          "AND json_type(latency, '$.read.buckets') = 'array'"),
                         1);
        mgr_store_close(store);
    }
    free(agents);
    free(st);
}

/* Node intervals wait for their interval's ALL row, rows for the next
 * flush (the run's tick) or the test's end; nothing is lost at either. */
static void test_intervals_batched(void **state)
{
    struct iof_stats *st = malloc(sizeof(*st));
    struct mgr_agent_info agent = {.name = "a", .endpoint = "127.0.0.1:1"};
    struct mgr_run_info ri = {.plan_text = "{}", .agents = &agent, .nagents = 1};
    struct iof_test test = {.index = 0};
    struct mgr_test_info ti = {.test = &test, .ntests = 1, .spec = "s", .cycle = ""};
    struct mgr_sink *s = NULL;
    struct mgr_store *rd;
    struct iof_diag d = {{0}};
    struct mgr_metrics m;
    char db[PATH_MAX];
    (void)state;

    assert_non_null(st);
    fill(st, 100, 1000, 4096);
    fresh_path(db, sizeof(db), "batch.db");
    assert_int_equal(mgr_db_sink_open(db, NULL, &s, &d), 0);
    s->ops->run_begin(s, &ri);
    s->ops->test_begin(s, &ti);
    assert_int_equal(mgr_store_open(db, &rd, &d), 0);

    struct mgr_interval iv = {.test = &ti, .node = "a", .stats = st, .ns = 1000000000};
    iv.m = metrics_of(st, iv.ns, &m);
    s->ops->interval(s, &iv);
    iv.node = "b";
    s->ops->interval(s, &iv);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM intervals"), 0);
    iv.node = NULL;
    s->ops->interval(s, &iv);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM intervals"), 3);

    struct mgr_row nr = {.type = MGR_ROW_NODE,
                         .node = "a",
                         .stats = st,
                         .ns = 1000000000,
                         .status = MGR_STATUS_OK,
                         .nodes = 1,
                         .m = &m};
    s->ops->row(s, &ti, &nr);
    iv.node = "a";
    iv.k = 1;
    s->ops->interval(s, &iv);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM rows"), 0);
    s->ops->flush(s);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM rows"), 1);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM intervals"), 4);
    /* A late report and its own ALL row wait for the flush too. */
    iv.k = 0;
    s->ops->interval(s, &iv);
    iv.node = NULL;
    iv.late = true;
    s->ops->interval(s, &iv);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM intervals"), 4);
    s->ops->flush(s);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM intervals"), 6);

    nr.node = "b";
    s->ops->row(s, &ti, &nr);
    struct mgr_row ar = nr;
    ar.type = MGR_ROW_ALL;
    ar.node = NULL;
    struct mgr_test_end te = {.test = &ti, .end_wall_ns = 1, .all = &ar, .nodes = 2};
    s->ops->test_end(s, &te);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM rows"), 3);
    mgr_db_sink_sync(s);
    assert_int_equal(query_int(rd, "SELECT count(*) FROM tests WHERE complete"), 1);
    s->ops->run_end(s, 0);
    assert_int_equal(mgr_sink_close(s), 0);
    mgr_store_close(rd);
    free(st);
}

/* run_end waits for the writer: the run's agent infos and plan text, which
 * the writer reads, are freed after run_end and before close (as
 * manager/run.c does). */
static void test_run_end_finishes_writer(void **state)
{
    enum { N = 2000 };
    char db[PATH_MAX];
    struct mgr_sink *s = NULL;
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    struct mgr_agent_info *agents = calloc(N, sizeof(*agents));
    char(*names)[16] = calloc(N, sizeof(*names));
    char *plan = strdup("{\"name\":\"freed\"}");
    struct mgr_run_info ri = {.agents = agents, .nagents = N, .start_wall_ns = 1};
    (void)state;

    assert_non_null(agents);
    assert_non_null(names);
    assert_non_null(plan);
    for (unsigned i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "a-%05u", i);
        agents[i] = (struct mgr_agent_info){.name = names[i], .endpoint = "127.0.0.1:1"};
    }
    ri.plan_text = plan;
    fresh_path(db, sizeof(db), "freed.db");
    assert_int_equal(mgr_db_sink_open(db, NULL, &s, &d), 0);
    s->ops->run_begin(s, &ri);
    s->ops->run_end(s, 0);
    memset(names, 'x', N * sizeof(*names));
    free(names);
    free(agents);
    free(plan);
    assert_int_equal(mgr_sink_close(s), 0);
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    assert_int_equal(query_int(st, "SELECT count(*) FROM agents WHERE name LIKE 'a-%'"), N);
    assert_int_equal(query_int(st, "SELECT count(*) FROM runs WHERE exit_code = 0 AND "
                                   "json_extract(plan, '$.name') = 'freed'"),
                     1);
    mgr_store_close(st);
}

/* A run of one test of `n` node intervals (each with its ALL row) and `n`
 * NODE rows through s, the database held by another connection from the
 * test's begin until `hold` is committed (the caller then ends the run:
 * run_end waits for the writer); returns the seconds the sink's calls
 * took. */
static double locked_run(struct mgr_sink *s, sqlite3 *hold, unsigned n)
{
    struct iof_stats *st = malloc(sizeof(*st));
    struct mgr_agent_info agent = {.name = "a", .endpoint = "127.0.0.1:1"};
    struct mgr_run_info ri = {.plan_text = "{}", .agents = &agent, .nagents = 1};
    struct iof_test test = {.index = 0};
    struct mgr_test_info ti = {.test = &test, .ntests = 1, .spec = "s", .cycle = ""};
    struct mgr_metrics m;
    struct timespec t0, t1;

    assert_non_null(st);
    fill(st, 200, 1000, 4096);
    mgr_metrics_compute(st, 1000000000, &m);
    s->ops->run_begin(s, &ri);
    s->ops->test_begin(s, &ti);
    mgr_db_sink_sync(s);
    assert_int_equal(sqlite3_exec(hold, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned k = 0; k < n; k++) {
        struct mgr_interval iv = {.test = &ti,
                                  .k = k,
                                  .node = "a",
                                  .stats = st,
                                  .m = &m,
                                  .ns = 1000000000,
                                  .reported = 1};
        struct mgr_row nr = {.type = MGR_ROW_NODE,
                             .node = "a",
                             .stats = st,
                             .m = &m,
                             .ns = 1000000000,
                             .status = MGR_STATUS_OK,
                             .nodes = 1};
        s->ops->interval(s, &iv);
        iv.node = NULL;
        s->ops->interval(s, &iv);
        s->ops->row(s, &ti, &nr);
        s->ops->flush(s);
    }
    struct mgr_row ar = {.type = MGR_ROW_ALL,
                         .stats = st,
                         .m = &m,
                         .ns = 1000000000,
                         .status = MGR_STATUS_OK,
                         .nodes = 1};
    struct mgr_test_end te = {.test = &ti, .end_wall_ns = 1, .all = &ar, .nodes = 1};
    s->ops->test_end(s, &te);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(st);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* Another connection holds the database (another manager's transaction,
 * a reader's checkpoint): the sink's calls, made on the manager's loop,
 * return at once rather than wait for it (up to MGR_STORE_BUSY_MS, 15 s);
 * once it is free every interval and row is recorded. */
static void test_locked_database_does_not_block(void **state)
{
    char db[PATH_MAX];
    struct mgr_sink *s = NULL;
    struct mgr_store *other;
    struct iof_diag d = {{0}};
    double secs;
    (void)state;

    fresh_path(db, sizeof(db), "locked.db");
    assert_int_equal(mgr_db_sink_open(db, NULL, &s, &d), 0);
    assert_int_equal(mgr_store_open(db, &other, &d), 0);
    secs = locked_run(s, other->db, 50);
    /* The writer waits on the lock all this while. */
    usleep(200 * 1000);
    assert_int_equal(query_int(other, "SELECT count(*) FROM intervals"), 0);
    assert_int_equal(sqlite3_exec(other->db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_true(secs < 1.0);
    s->ops->run_end(s, 0);
    assert_int_equal(mgr_sink_close(s), 0);
    assert_int_equal(query_int(other, "SELECT count(*) FROM intervals"), 100);
    assert_int_equal(query_int(other, "SELECT count(*) FROM rows"), 51);
    assert_int_equal(query_int(other, "SELECT count(*) FROM tests WHERE complete"), 1);
    assert_int_equal(query_int(other, "SELECT count(*) FROM runs WHERE exit_code = 0"), 1);
    mgr_store_close(other);
}

/* The writer's queue full (its database held): intervals and rows past the
 * bound are left out, never waited for; the test's end still goes in, and
 * close fails saying how many were left out. */
static void test_queue_overflow_reported(void **state)
{
    char db[PATH_MAX], errpath[PATH_MAX], want[128], text[4096] = "";
    struct mgr_sink *s = NULL;
    struct mgr_store *other;
    struct iof_diag d = {{0}};
    int64_t kept;
    FILE *f;
    int saved;
    (void)state;

    fresh_path(db, sizeof(db), "full.db");
    assert_true(strlen(db) + 8 < sizeof(errpath));
    memcpy(errpath, db, strlen(db));
    memcpy(errpath + strlen(db), ".stderr", 8);
    assert_int_equal(mgr_db_sink_open(db, NULL, &s, &d), 0);
    mgr_db_sink_queue_max(s, 64 << 10);
    assert_int_equal(mgr_store_open(db, &other, &d), 0);
    assert_true(locked_run(s, other->db, 200) < 1.0);
    assert_int_equal(sqlite3_exec(other->db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    s->ops->run_end(s, 0);
    fflush(stderr);
    saved = dup(2);
    f = fopen(errpath, "w");
    assert_non_null(f);
    dup2(fileno(f), 2);
    assert_int_not_equal(mgr_sink_close(s), 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(f);
    f = fopen(errpath, "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
    fclose(f);
    kept = query_int(other, "SELECT count(*) FROM intervals") +
           query_int(other, "SELECT count(*) FROM rows WHERE row_type = 'NODE'");
    assert_true(kept > 0 && kept < 600);
    snprintf(want, sizeof(want), "%" PRId64 " intervals and rows not recorded", 600 - kept);
    if (!strstr(text, want))
        fail_msg("close said \"%s\", not \"%s\"", text, want);
    assert_int_equal(query_int(other, "SELECT count(*) FROM tests WHERE complete"), 1);
    assert_int_equal(query_int(other, "SELECT count(*) FROM rows WHERE row_type = 'ALL'"), 1);
    mgr_store_close(other);
}

static void test_creates_wal_current_schema(void **state)
{
    char db[PATH_MAX];
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    sqlite3_stmt *s;
    (void)state;

    fresh_path(db, sizeof(db), "sub/dir/runs.db");
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    assert_int_equal(query_int(st, "PRAGMA user_version"), MGR_STORE_SCHEMA);
    assert_int_equal(sqlite3_prepare_v2(st->db, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
    sqlite3_finalize(s);
    mgr_store_close(st);
}

static void *end_write_later(void *arg)
{
    usleep(150 * 1000);
    assert_int_equal(sqlite3_exec(arg, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    return NULL;
}

/* A fresh file another connection is writing in rollback mode (as when a
 * second manager creates the same --db at the same moment): switching it to
 * WAL needs the write lock, for which SQLite does not call the busy handler.
 * The open waits for the other connection instead of failing with "database
 * is locked". */
static void test_wal_switch_waits_for_writer(void **state)
{
    char db[PATH_MAX];
    struct mgr_store *st = NULL;
    struct iof_diag d = {{0}};
    sqlite3 *other;
    sqlite3_stmt *s;
    pthread_t t;
    (void)state;

    fresh_path(db, sizeof(db), "race/runs.db");
    assert_int_equal(mgr_store_open(db, &st, &d), 0); /* makes the directory */
    mgr_store_close(st);
    assert_int_equal(unlink(db), 0);
    assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other,
                                  "CREATE TABLE t(x); BEGIN IMMEDIATE; INSERT INTO t VALUES(1);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(pthread_create(&t, NULL, end_write_later, other), 0);
    if (mgr_store_open(db, &st, &d))
        fail_msg("open during another connection's write: %s", d.msg);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(sqlite3_prepare_v2(st->db, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
    sqlite3_finalize(s);
    assert_int_equal(query_int(st, "PRAGMA user_version"), MGR_STORE_SCHEMA);
    mgr_store_close(st);
    sqlite3_close(other);
}

static void test_records_and_reads_back(void **state)
{
    char db[PATH_MAX];
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    struct mgr_rpt_run r;
    struct iof_stats *all = malloc(sizeof(*all));
    struct mgr_metrics m;
    int64_t id;
    (void)state;

    assert_non_null(all);
    fresh_path(db, sizeof(db), "runs.db");
    id = record_run(db, "nvme", 2, false, all);
    assert_true(id > 0);
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    assert_int_equal(mgr_rpt_load(st, id, &r, &d), 0);
    assert_string_equal(r.tag, "nvme");
    assert_true(r.has_exit);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.ntests, 2);
    assert_int_equal(r.nagents, 1);
    assert_string_equal(r.agentv[0].name, node);
    assert_string_equal(r.agentv[0].hostname, "h\"ost");
    assert_int_equal(r.agentv[0].cpus, 4);
    assert_non_null(strstr(r.plan, "\"x\":[1,2]"));
    assert_string_equal(r.tests[1].name, "spec 1");
    assert_true(r.tests[1].complete);
    assert_non_null(r.tests[1].all);
    /* ALL, NODE, WORKER rows; 2 intervals x (node + ALL). */
    assert_int_equal(r.tests[1].nrows, 3);
    assert_int_equal(r.tests[1].nivs, 4);
    mgr_metrics_compute(all, 1000000000, &m);
    assert_true(fabs(r.tests[1].all->f.v[MGR_RPT_IOPS] - m.iops) < 1e-9);
    assert_true(fabs(r.tests[1].all->f.v[MGR_RPT_P99] - m.p99_ms) < 1e-12);
    assert_true(fabs(r.tests[1].all->f.v[MGR_RPT_AVG] - m.avg_ms) < 1e-12);
    /* p99 recomputed from the stored buckets by the documented rule. */
    {
        const struct mgr_rpt_test *t = &r.tests[1];
        double total = 0, cum = 0, need, p99 = -1;
        for (size_t k = 0; k < t->nhist; k++)
            total += t->hist[k].count;
        assert_true(total == (double)(all->rd.lat.count + all->wr.lat.count));
        need = ceil(0.99 * total);
        for (size_t k = 0; k < t->nhist && p99 < 0; k++) {
            cum += t->hist[k].count;
            if (cum >= need)
                p99 = t->hist[k].low_ns + floor(t->hist[k].width_ns / 2);
        }
        assert_true(fabs(p99 / 1e6 - m.p99_ms) < 1e-12);
    }
    assert_true(r.tests[0].measure_start_s >= 0.49 && r.tests[0].measure_start_s <= 0.51);
    mgr_rpt_free(&r);
    mgr_store_close(st);
    free(all);
}

static void test_unfinished_test_kept(void **state)
{
    char db[PATH_MAX];
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    struct mgr_rpt_run r;
    int64_t id;
    (void)state;

    fresh_path(db, sizeof(db), "runs.db");
    id = record_run(db, NULL, 2, true, NULL);
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    assert_int_equal(mgr_rpt_load(st, id, &r, &d), 0);
    assert_false(r.has_exit);
    assert_int_equal(r.ntests, 2);
    assert_true(r.tests[0].complete);
    assert_false(r.tests[1].complete);
    assert_null(r.tests[1].all);
    assert_int_equal(r.tests[1].nivs, 4);
    mgr_rpt_free(&r);
    mgr_store_close(st);
}

static void test_resolve_and_rm(void **state)
{
    char db[PATH_MAX];
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    int64_t a, b, c, got = 0;
    (void)state;

    fresh_path(db, sizeof(db), "runs.db");
    a = record_run(db, "x", 1, false, NULL);
    b = record_run(db, "x", 1, false, NULL);
    c = record_run(db, "y", 1, false, NULL);
    assert_true(a < b && b < c);
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    assert_int_equal(mgr_store_resolve(st, "x", &got, &d), 0);
    assert_int_equal(got, b); /* the newest with the tag */
    assert_int_equal(mgr_store_resolve(st, "1", &got, &d), 0);
    assert_int_equal(got, a);
    assert_int_equal(mgr_store_resolve(st, "nope", &got, &d), -ENOENT);
    assert_non_null(strstr(d.msg, "nope"));
    assert_int_equal(mgr_store_rm(st, b, &d), 0);
    assert_int_equal(mgr_store_resolve(st, "x", &got, &d), 0);
    assert_int_equal(got, a);
    assert_int_equal(mgr_store_rm(st, b, &d), -ENOENT);
    assert_int_equal(query_int(st, "SELECT count(*) FROM tests WHERE run_id NOT IN "
                                   "(SELECT id FROM runs)"),
                     0);
    assert_no_orphan_rows(st);
    assert_int_equal(query_int(st, "SELECT count(*) FROM agents WHERE run_id NOT IN "
                                   "(SELECT id FROM runs)"),
                     0);
    assert_int_equal(query_int(st, "SELECT count(*) FROM runs"), 2);
    mgr_store_close(st);
}

/* The ids mgr_store_select() picks, as "1,2,3". */
static void select_str(struct mgr_store *st, const struct mgr_store_sel *sel, char *buf, size_t cap)
{
    struct iof_diag d = {{0}};
    int64_t *ids;
    size_t n, len = 0;

    assert_int_equal(mgr_store_select(st, sel, &ids, &n, &d), 0);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, i ? "," : "", ids[i]);
    free(ids);
}

/* Housekeeping: selection by age, by the newest N kept, by tag and by id
 * range (each alone and combined); deleting many in one transaction, which
 * skips ids already gone and leaves nothing of the runs behind; retagging
 * and untagging; VACUUM giving the space back to the file system. */
static void test_select_prune_tag_vacuum(void **state)
{
    char db[PATH_MAX], got[256];
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    struct stat before, after;
    int64_t id[6], *ids;
    size_t n, removed;
    (void)state;

    fresh_path(db, sizeof(db), "runs.db");
    for (int i = 0; i < 6; i++)
        id[i] = record_run(db, i % 2 ? "odd" : "even", 3, false, NULL);
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    /* Starts one day apart: run ID started 7 - ID days before 2024-01-10. */
    assert_int_equal(mgr_store_exec(st,
                                    "UPDATE runs SET start_unix_ns = 1704844800000000000 - "
                                    "(7 - id) * 86400000000000",
                                    &d),
                     0);
    assert_int_equal(id[0], 1);
    assert_int_equal(id[5], 6);

    select_str(st, &(struct mgr_store_sel){.keep = -1}, got, sizeof(got));
    assert_string_equal(got, "1,2,3,4,5,6");
    /* Older than 3 days before 2024-01-10: started 6, 5 and 4 days before. */
    select_str(st,
               &(struct mgr_store_sel){.before_unix_ns = 1704844800000000000 - 3 * 86400000000000,
                                       .keep = -1},
               got, sizeof(got));
    assert_string_equal(got, "1,2,3");
    select_str(st, &(struct mgr_store_sel){.keep = 4}, got, sizeof(got));
    assert_string_equal(got, "1,2");
    select_str(st, &(struct mgr_store_sel){.keep = 0}, got, sizeof(got));
    assert_string_equal(got, "1,2,3,4,5,6");
    select_str(st, &(struct mgr_store_sel){.tag = "odd", .keep = 1}, got, sizeof(got));
    assert_string_equal(got, "2,4");
    select_str(st, &(struct mgr_store_sel){.tag = "even", .keep = -1}, got, sizeof(got));
    assert_string_equal(got, "1,3,5");
    select_str(st, &(struct mgr_store_sel){.from = 2, .to = 4, .keep = -1}, got, sizeof(got));
    assert_string_equal(got, "2,3,4");
    select_str(st, &(struct mgr_store_sel){.from = 2, .to = 4, .tag = "odd", .keep = -1}, got,
               sizeof(got));
    assert_string_equal(got, "2,4");
    select_str(st, &(struct mgr_store_sel){.tag = "none", .keep = -1}, got, sizeof(got));
    assert_string_equal(got, "");

    /* Retag, untag, and a missing run. */
    assert_int_equal(mgr_store_set_tag(st, 6, "best", &d), 0);
    assert_int_equal(query_int(st, "SELECT count(*) FROM runs WHERE id = 6 AND tag = 'best'"), 1);
    assert_int_equal(mgr_store_set_tag(st, 5, NULL, &d), 0);
    assert_int_equal(query_int(st, "SELECT count(*) FROM runs WHERE id = 5 AND tag IS NULL"), 1);
    assert_int_equal(mgr_store_set_tag(st, 99, "x", &d), -ENOENT);
    assert_non_null(strstr(d.msg, "no run 99"));

    /* Delete 2..4 and an id that is not there, then compact. */
    mgr_store_close(st);
    assert_int_equal(stat(db, &before), 0);
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    assert_int_equal(
        mgr_store_select(st, &(struct mgr_store_sel){.from = 2, .to = 4, .keep = -1}, &ids, &n, &d),
        0);
    assert_int_equal(n, 3);
    ids[1] = 77; /* gone meanwhile: skipped */
    assert_int_equal(mgr_store_rm_many(st, ids, n, &removed, &d), 0);
    free(ids);
    assert_int_equal(removed, 2);
    select_str(st, &(struct mgr_store_sel){.keep = -1}, got, sizeof(got));
    assert_string_equal(got, "1,3,5,6");
    assert_int_equal(mgr_store_rm_many(st, (int64_t[]){1, 3, 5}, 3, &removed, &d), 0);
    assert_int_equal(removed, 3);
    assert_int_equal(query_int(st, "SELECT count(*) FROM tests WHERE run_id <> 6"), 0);
    assert_no_orphan_rows(st);
    assert_int_equal(query_int(st, "SELECT count(*) FROM agents WHERE run_id <> 6"), 0);
    assert_int_equal(query_int(st, "SELECT count(*) FROM tests WHERE run_id = 6"), 3);
    assert_int_equal(mgr_store_vacuum(st, &d), 0);
    mgr_store_close(st);
    assert_int_equal(stat(db, &after), 0);
    assert_true(after.st_size < before.st_size);
}

/* The version 1 layout, as a build of that version wrote it. */
static const char v1_sql[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, start_unix_ns INTEGER, "
    "plan_name TEXT, plan TEXT, tests_planned INTEGER, exit_code INTEGER, "
    "iofleet_version TEXT, source TEXT);"
    "CREATE TABLE agents(run_id INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT, doc TEXT);"
    "CREATE TABLE tests(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, idx INTEGER NOT NULL, "
    "spec TEXT, cycle TEXT, cycle_param TEXT, cycle_value INTEGER, start_unix_ns INTEGER, "
    "end_unix_ns INTEGER, start_skew_ms REAL, nodes INTEGER, lost INTEGER, absent TEXT, "
    "interrupted INTEGER, complete INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE rows(test_id INTEGER NOT NULL, seq INTEGER NOT NULL, row_type TEXT NOT NULL, "
    "node TEXT, worker TEXT, target TEXT, status TEXT, queue_depth INTEGER, n_nodes INTEGER, "
    "n_workers INTEGER, n_targets INTEGER, window_start_s REAL, window_end_s REAL, duration_s "
    "REAL, iops REAL, read_iops REAL, write_iops REAL, mibps REAL, read_mibps REAL, write_mibps "
    "REAL, avg_lat_ms REAL, avg_read_lat_ms REAL, avg_write_lat_ms REAL, p50_lat_ms REAL, "
    "p90_lat_ms REAL, p95_lat_ms REAL, p99_lat_ms REAL, p999_lat_ms REAL, p9999_lat_ms REAL, "
    "max_lat_ms REAL, read_ios INT, write_ios INT, bytes_read INT, bytes_written INT, errors "
    "INT, cpu_pct REAL, latency TEXT);"
    "CREATE TABLE intervals(test_id INTEGER NOT NULL, seq INTEGER NOT NULL, interval INTEGER "
    "NOT NULL, time_s REAL, node TEXT, reported INTEGER, lost INTEGER, late INTEGER, duration_s "
    "REAL, iops REAL, read_iops REAL, write_iops REAL, mibps REAL, read_mibps REAL, write_mibps "
    "REAL, avg_lat_ms REAL, avg_read_lat_ms REAL, avg_write_lat_ms REAL, p50_lat_ms REAL, "
    "p90_lat_ms REAL, p95_lat_ms REAL, p99_lat_ms REAL, p999_lat_ms REAL, p9999_lat_ms REAL, "
    "max_lat_ms REAL, read_ios INT, write_ios INT, bytes_read INT, bytes_written INT, errors "
    "INT, cpu_pct REAL, latency TEXT);"
    "INSERT INTO runs(start_unix_ns, plan_name, exit_code, source) VALUES(1, 'old', 0, 'run');"
    "INSERT INTO tests(run_id, idx, spec, complete) VALUES(1, 1, 's', 1);"
    "INSERT INTO rows(test_id, seq, row_type, iops, p99_lat_ms) VALUES(1, 0, 'ALL', 1234.5, 0.5);"
    "PRAGMA user_version=1;";

static void test_migrates_v1(void **state)
{
    char db[PATH_MAX];
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    sqlite3 *raw;
    int64_t got = 0;
    (void)state;

    fresh_path(db, sizeof(db), "old.db");
    assert_int_equal(mgr_store_open(db, &st, &d), 0); /* creates the directory */
    mgr_store_close(st);
    unlink(db);
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, v1_sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);

    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    assert_int_equal(query_int(st, "PRAGMA user_version"), MGR_STORE_SCHEMA);
    assert_int_equal(query_int(st, "SELECT count(*) FROM runs WHERE plan_name = 'old'"), 1);
    assert_int_equal(mgr_store_exec(st, "UPDATE runs SET tag = 'kept' WHERE id = 1", &d), 0);
    assert_int_equal(mgr_store_resolve(st, "kept", &got, &d), 0);
    assert_int_equal(got, 1);
    mgr_store_close(st);
    /* The migrated file takes new runs. */
    assert_int_equal(record_run(db, "new", 1, false, NULL), 2);
}

static void test_refuses_newer(void **state)
{
    char db[PATH_MAX];
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    sqlite3 *raw;
    (void)state;

    fresh_path(db, sizeof(db), "new.db");
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    mgr_store_close(st);
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "PRAGMA user_version=99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_not_equal(mgr_store_open(db, &st, &d), 0);
    assert_null(st);
    assert_non_null(strstr(d.msg, "schema version 99 is newer"));
}

static void test_list_headline(void **state)
{
    char db[PATH_MAX], out[PATH_MAX + 8], line[512];
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    FILE *f;
    bool found = false;
    (void)state;

    fresh_path(db, sizeof(db), "runs.db");
    record_run(db, "hl", 2, false, NULL);
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    snprintf(out, sizeof(out), "%s.json", db);
    f = fopen(out, "w+");
    assert_non_null(f);
    assert_int_equal(mgr_store_list(st, NULL, true, f, &d), 0);
    rewind(f);
    while (fgets(line, sizeof(line), f))
        if (strstr(line, "\"tag\":\"hl\"")) {
            /* test 2 has the most I/O: 4000 reads + 1334 writes in 1 s */
            assert_non_null(strstr(line, "\"iops\":5334,"));
            assert_non_null(strstr(line, "\"tests\":2,"));
            assert_non_null(strstr(line, "\"status\":\"finished\""));
            found = true;
        }
    assert_true(found);
    fclose(f);
    mgr_store_close(st);
}

static void test_many_agents_linear(void **state)
{
    enum { N = 20000 };
    char db[PATH_MAX], sql[160];
    struct mgr_sink *s = NULL;
    struct mgr_store *st;
    struct iof_diag d = {{0}};
    struct proto_target_info tgt[2] = {{.path = "/dev/a", .size = 1 << 20},
                                       {.path = "/dev/b", .size = 2 << 20}};
    struct proto_hello hello = {
        .major = 1, .minor = 1, .software = "0.1.0", .inventory = {.ntargets = 2, .targets = tgt}};
    struct mgr_agent_info *agents = calloc(N, sizeof(*agents));
    char(*names)[16] = calloc(N, sizeof(*names));
    struct mgr_run_info ri = {.plan_text = "{}", .nagents = N, .start_wall_ns = 1};
    struct timespec t0, t1;
    double secs;
    (void)state;

    assert_non_null(agents);
    assert_non_null(names);
    for (unsigned i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "sim-%05u", i + 1);
        agents[i] =
            (struct mgr_agent_info){.name = names[i], .endpoint = "127.0.0.1:1", .hello = &hello};
    }
    ri.agents = agents;
    /* A quarter of the agents first, then all of them, each into a new
     * database: linear costs 4x the time, a search by run_id per target
     * (2 N^2 row visits) 16x. Judged by that ratio of the process's CPU
     * time (the writer thread's SQL included), which other work on the
     * machine does not stretch as it does wall time, and only when the full
     * run costs seconds at all (well under one here). */
    double quarter = 0;
    for (unsigned pass = 0; pass < 2; pass++) {
        ri.nagents = pass ? N : N / 4;
        fresh_path(db, sizeof(db), "runs.db");
        assert_int_equal(mgr_db_sink_open(db, "many", &s, &d), 0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        s->ops->run_begin(s, &ri);
        mgr_db_sink_sync(s);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        s->ops->run_end(s, 0);
        assert_int_equal(mgr_sink_close(s), 0);
        secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (!pass)
            quarter = secs;
    }
    if (secs > 2 && secs > 8 * quarter)
        fail_msg("run_begin of %d agents took %.1f s of CPU, of %d %.2f s: not linear", N, secs,
                 N / 4, quarter);
    assert_int_equal(mgr_store_open(db, &st, &d), 0);
    assert_int_equal(query_int(st, "SELECT count(*) FROM agents"), N);
    assert_int_equal(
        query_int(st, "SELECT count(*) FROM agents WHERE json_array_length(doc, '$.targets') = 2"),
        N);
    snprintf(sql, sizeof(sql),
             "SELECT json_extract(doc, '$.targets[1].size') FROM agents WHERE name = 'sim-%05u'",
             N / 2);
    assert_int_equal(query_int(st, sql), 2 << 20);
    snprintf(sql, sizeof(sql), "SELECT seq FROM agents WHERE name = 'sim-%05u'", N / 2);
    assert_int_equal(query_int(st, sql), N / 2 - 1);
    mgr_store_close(st);
    free(agents);
    free(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creates_wal_current_schema),
        cmocka_unit_test(test_wal_switch_waits_for_writer),
        cmocka_unit_test(test_records_and_reads_back),
        cmocka_unit_test(test_unfinished_test_kept),
        cmocka_unit_test(test_resolve_and_rm),
        cmocka_unit_test(test_select_prune_tag_vacuum),
        cmocka_unit_test(test_migrates_v1),
        cmocka_unit_test(test_refuses_newer),
        cmocka_unit_test(test_list_headline),
        cmocka_unit_test(test_many_agents_linear),
        cmocka_unit_test(test_target_histograms),
        cmocka_unit_test(test_intervals_batched),
        cmocka_unit_test(test_interval_histograms),
        cmocka_unit_test(test_run_end_finishes_writer),
        cmocka_unit_test(test_locked_database_does_not_block),
        cmocka_unit_test(test_queue_overflow_reported),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
