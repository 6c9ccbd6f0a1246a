/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/store.c - the run history database: opening (WAL, busy timeout),
 * the schema and its migrations, and the whole-run operations of `iofleet
 * runs` (list, rm, import of a --json document) and of the report (resolve a
 * run by id or tag). The per-event writes of a live run are in manager/sinks/db.c.
 */
#include "manager/history/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/buf.h"
#include "common/jsonw.h"
#include "common/text.h"

#define METRIC_COL(name, kind) ", " #name " " #kind
#define ROW_COLS                                                                                   \
    "test_id INTEGER NOT NULL, seq INTEGER NOT NULL, row_type TEXT NOT NULL, node TEXT, "          \
    "worker TEXT, target TEXT, status TEXT, queue_depth INTEGER, n_nodes INTEGER, "                \
    "n_workers INTEGER, n_targets INTEGER, window_start_s REAL, window_end_s REAL"
#define IV_COLS                                                                                    \
    "test_id INTEGER NOT NULL, seq INTEGER NOT NULL, interval INTEGER NOT NULL, time_s REAL, "     \
    "node TEXT, reported INTEGER, lost INTEGER, late INTEGER"

#define ADD_ROW_COL(name, kind) "ALTER TABLE rows ADD COLUMN " #name " " #kind ";"
#define ADD_IV_COL(name, kind) "ALTER TABLE intervals ADD COLUMN " #name " " #kind ";"

/* Migration N brings the schema from version N-1 to N; each runs in one
 * transaction with the user_version update. Never edit a released step:
 * add one. */
static const char *const store_migrations[MGR_STORE_SCHEMA] = {
    /* 1: runs, their agents, tests, final rows and intervals */
    "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, start_unix_ns INTEGER, "
    "plan_name TEXT, plan TEXT, tests_planned INTEGER, exit_code INTEGER, "
    "iofleet_version TEXT, source TEXT);"
    "CREATE TABLE agents(run_id INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT, doc TEXT);"
    "CREATE TABLE tests(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, idx INTEGER NOT NULL, "
    "spec TEXT, cycle TEXT, cycle_param TEXT, cycle_value INTEGER, start_unix_ns INTEGER, "
    "end_unix_ns INTEGER, start_skew_ms REAL, nodes INTEGER, lost INTEGER, absent TEXT, "
    "interrupted INTEGER, complete INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE rows(" ROW_COLS MGR_STORE_METRICS(
        METRIC_COL) ", latency TEXT);"
                    "CREATE TABLE intervals(" IV_COLS MGR_STORE_METRICS(
                        METRIC_COL) ", latency TEXT);"
                                    "CREATE INDEX agents_run ON agents(run_id);"
                                    "CREATE INDEX tests_run ON tests(run_id, idx);"
                                    "CREATE INDEX rows_test ON rows(test_id, seq);"
                                    "CREATE INDEX intervals_test ON intervals(test_id, seq);",
    /* 2: tags */
    "ALTER TABLE runs ADD COLUMN tag TEXT;"
    "CREATE INDEX runs_tag ON runs(tag, id);",
    /* 3: every figure of the result files (iofleet runs export) */
    MGR_STORE_MORE(ADD_ROW_COL) MGR_STORE_ROW_MORE(ADD_ROW_COL)
        MGR_STORE_MORE(ADD_IV_COL) "ALTER TABLE tests ADD COLUMN rate_frac REAL;"
                                   "ALTER TABLE tests ADD COLUMN rate_target REAL;",
};

static int store_err(struct mgr_store *st, struct iof_diag *diag, const char *what)
{
    return iof_diag_set(diag, -EIO, "%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

int mgr_store_exec(struct mgr_store *st, const char *sql, struct iof_diag *diag)
{
    char *msg = NULL;
    int r;

    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    r = iof_diag_set(diag, -EIO, "%s: %s", st->path, msg ? msg : sqlite3_errmsg(st->db));
    sqlite3_free(msg);
    return r;
}

int mgr_store_default_path(char *buf, size_t cap, struct iof_diag *diag)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int n;

    /* The XDG spec: a relative $XDG_DATA_HOME is invalid and ignored. */
    if (xdg && xdg[0] == '/')
        n = snprintf(buf, cap, "%s/iofleet/runs.db", xdg);
    else if (home && home[0])
        n = snprintf(buf, cap, "%s/.local/share/iofleet/runs.db", home);
    else
        return iof_diag_set(diag, -ENOENT,
                            "no run history: neither XDG_DATA_HOME nor HOME is set (give --db "
                            "PATH or --no-db)");
    if (n < 0 || (size_t)n >= cap)
        return iof_diag_set(diag, -ENAMETOOLONG, "the run history path is too long");
    return 0;
}

/* mkdir -p of path's directory, new directories 0700 (the history holds
 * host names and paths of the user's machines). */
static int store_mkdirs(const char *path, struct iof_diag *diag)
{
    char dir[IOF_PATH_MAX];
    char *slash;

    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
        return iof_diag_set(diag, -ENAMETOOLONG, "%s: path too long", path);
    slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return iof_diag_set(diag, -errno, "%s: cannot create: %s", dir, strerror(errno));
        *p = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return iof_diag_set(diag, -errno, "%s: cannot create: %s", dir, strerror(errno));
    return 0;
}

static int store_user_version(struct mgr_store *st, int *v)
{
    sqlite3_stmt *s;
    int rc;

    if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return -EIO;
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : -EIO;
}

/* Brings the schema to MGR_STORE_SCHEMA. BEGIN IMMEDIATE takes the write
 * lock first, so two managers opening a fresh file migrate it once: the
 * second sees the new version inside its own transaction. */
static int store_migrate(struct mgr_store *st, struct iof_diag *diag)
{
    int v = 0, r;

    if (store_user_version(st, &v))
        return store_err(st, diag, "cannot read the schema version");
    if (v == MGR_STORE_SCHEMA)
        return 0;
    if (v > MGR_STORE_SCHEMA)
        return iof_diag_set(diag, -EPROTO,
                            "%s: schema version %d is newer than this iofleet's (%d): use a "
                            "newer iofleet, or another --db",
                            st->path, v, MGR_STORE_SCHEMA);
    r = mgr_store_exec(st, "BEGIN IMMEDIATE", diag);
    if (r)
        return r;
    if (store_user_version(st, &v)) {
        r = store_err(st, diag, "cannot read the schema version");
        goto rollback;
    }
    for (; v < MGR_STORE_SCHEMA; v++) {
        char pragma[64];
        r = mgr_store_exec(st, store_migrations[v], diag);
        if (r)
            goto rollback;
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", v + 1);
        r = mgr_store_exec(st, pragma, diag);
        if (r)
            goto rollback;
    }
    return mgr_store_exec(st, "COMMIT", diag);
rollback:
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return r;
}

/* WAL: readers never block the writer. Switching a fresh file to WAL needs
 * its exclusive lock, and SQLite returns SQLITE_BUSY for that without
 * calling the busy handler, so two managers creating one database at once
 * would see "database is locked": retry within the busy timeout. The mode
 * is kept in the file, so this only waits on a file being created. */
static int store_wal(struct mgr_store *st, struct iof_diag *diag)
{
    const struct timespec nap = {0, 5 * 1000 * 1000};
    sqlite3_stmt *s;
    int rc, waited_ms = 0;

    for (;;) {
        char mode[16] = "";

        if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode=WAL", -1, &s, NULL) != SQLITE_OK)
            return store_err(st, diag, "cannot set the journal mode");
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW && sqlite3_column_text(s, 0))
            snprintf(mode, sizeof(mode), "%s", (const char *)sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
        if (rc == SQLITE_ROW) {
            /* An in-memory database stays "memory". */
            if (!strcmp(mode, "wal") || !strcmp(mode, "memory"))
                return 0;
            return iof_diag_set(diag, -EIO, "%s: cannot switch to WAL: journal mode stays '%s'",
                                st->path, mode);
        }
        if ((rc & 0xff) != SQLITE_BUSY)
            return store_err(st, diag, "cannot set the journal mode");
        if (waited_ms >= MGR_STORE_BUSY_MS)
            return iof_diag_set(diag, -EBUSY,
                                "%s: cannot switch to WAL: the database stayed locked for %d ms",
                                st->path, waited_ms);
        nanosleep(&nap, NULL);
        waited_ms += 5;
    }
}

int mgr_store_open(const char *path, struct mgr_store **out, struct iof_diag *diag)
{
    struct mgr_store *st;
    bool mem = !strcmp(path, ":memory:");
    int r;

    *out = NULL;
    if (!*path)
        return iof_diag_set(diag, -EINVAL, "empty database path");
    if (!mem && (r = store_mkdirs(path, diag)))
        return r;
    st = calloc(1, sizeof(*st));
    if (!st)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    snprintf(st->path, sizeof(st->path), "%s", path);
    if (sqlite3_open_v2(path, &st->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
                        NULL) != SQLITE_OK) {
        r = iof_diag_set(diag, -EIO, "%s: cannot open: %s", path,
                         st->db ? sqlite3_errmsg(st->db) : "out of memory");
        mgr_store_close(st);
        return r;
    }
    sqlite3_busy_timeout(st->db, MGR_STORE_BUSY_MS);
    sqlite3_extended_result_codes(st->db, 1);
    r = store_wal(st, diag);
    /* NORMAL: a commit is durable against a killed process (it is in the
     * WAL), fsynced at checkpoints. */
    if (!r)
        r = mgr_store_exec(st, "PRAGMA synchronous=NORMAL", diag);
    if (!r)
        r = store_migrate(st, diag);
    if (r) {
        mgr_store_close(st);
        return r;
    }
    *out = st;
    return 0;
}

void mgr_store_close(struct mgr_store *st)
{
    if (!st)
        return;
    sqlite3_close_v2(st->db);
    free(st);
}

int mgr_store_resolve(struct mgr_store *st, const char *ref, int64_t *id, struct iof_diag *diag)
{
    sqlite3_stmt *s;
    char *end;
    long long n;
    int rc;

    errno = 0;
    n = strtoll(ref, &end, 10);
    if (*ref && !*end && !errno && n > 0) {
        rc = sqlite3_prepare_v2(st->db, "SELECT id FROM runs WHERE id = ?", -1, &s, NULL);
        if (rc == SQLITE_OK)
            sqlite3_bind_int64(s, 1, n);
    } else {
        rc = sqlite3_prepare_v2(st->db, "SELECT max(id) FROM runs WHERE tag = ? HAVING count(*)",
                                -1, &s, NULL);
        if (rc == SQLITE_OK)
            sqlite3_bind_text(s, 1, ref, -1, SQLITE_TRANSIENT);
    }
    if (rc != SQLITE_OK)
        return store_err(st, diag, "cannot look up a run");
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc != SQLITE_DONE)
        return store_err(st, diag, "cannot look up a run");
    return iof_diag_set(diag, -ENOENT, "%s: no run with id or tag '%s'", st->path, ref);
}

/* The statements that delete run id and everything recorded of it, for one
 * transaction. */
static void store_rm_sql(char *sql, size_t cap, int64_t id)
{
    snprintf(sql, cap,
             "DELETE FROM rows WHERE test_id IN (SELECT id FROM tests WHERE run_id = %" PRId64 ");"
             "DELETE FROM intervals WHERE test_id IN (SELECT id FROM tests WHERE run_id = %" PRId64
             ");"
             "DELETE FROM tests WHERE run_id = %" PRId64 ";"
             "DELETE FROM agents WHERE run_id = %" PRId64 ";"
             "DELETE FROM runs WHERE id = %" PRId64 ";",
             id, id, id, id, id);
}

int mgr_store_select(struct mgr_store *st, const struct mgr_store_sel *sel, int64_t **ids,
                     size_t *n, struct iof_diag *diag)
{
    static const char sql[] =
        "SELECT id FROM runs WHERE (?1 IS NULL OR tag = ?1) AND (?2 = 0 OR id >= ?2) AND "
        "(?3 = 0 OR id <= ?3) AND (?4 = 0 OR start_unix_ns < ?4) AND (?5 < 0 OR id NOT IN "
        "(SELECT id FROM runs WHERE ?1 IS NULL OR tag = ?1 ORDER BY id DESC LIMIT ?5)) "
        "ORDER BY id";
    sqlite3_stmt *s;
    size_t cap = 0;
    bool oom = false;
    int rc;

    *ids = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return store_err(st, diag, "cannot select runs");
    if (sel->tag)
        sqlite3_bind_text(s, 1, sel->tag, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, sel->from);
    sqlite3_bind_int64(s, 3, sel->to);
    sqlite3_bind_int64(s, 4, sel->before_unix_ns);
    sqlite3_bind_int64(s, 5, sel->keep);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        oom = iof_array_grow((void **)ids, &cap, *n + 1, sizeof(**ids)) != 0;
        if (oom)
            break;
        (*ids)[(*n)++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    if (oom || rc != SQLITE_DONE) {
        free(*ids);
        *ids = NULL;
        *n = 0;
        return oom ? iof_diag_set(diag, -ENOMEM, "out of memory")
                   : store_err(st, diag, "cannot select runs");
    }
    return 0;
}

int mgr_store_rm_many(struct mgr_store *st, const int64_t *ids, size_t n, size_t *removed,
                      struct iof_diag *diag)
{
    char sql[1024];
    size_t done = 0;
    int r = mgr_store_exec(st, "BEGIN IMMEDIATE", diag);

    if (removed)
        *removed = 0;
    if (r)
        return r;
    for (size_t i = 0; i < n; i++) {
        store_rm_sql(sql, sizeof(sql), ids[i]);
        if ((r = mgr_store_exec(st, sql, diag))) {
            sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
            return r;
        }
        done += sqlite3_changes(st->db) > 0; /* the runs row, deleted last */
    }
    if ((r = mgr_store_exec(st, "COMMIT", diag))) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return r;
    }
    if (removed)
        *removed = done;
    return 0;
}

int mgr_store_set_tag(struct mgr_store *st, int64_t id, const char *tag, struct iof_diag *diag)
{
    sqlite3_stmt *s;
    int rc;

    if (sqlite3_prepare_v2(st->db, "UPDATE runs SET tag = ? WHERE id = ?", -1, &s, NULL) !=
        SQLITE_OK)
        return store_err(st, diag, "cannot tag a run");
    if (tag && *tag)
        sqlite3_bind_text(s, 1, tag, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, id);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, diag, "cannot tag a run");
    if (!sqlite3_changes(st->db))
        return iof_diag_set(diag, -ENOENT, "%s: no run %" PRId64, st->path, id);
    return 0;
}

int mgr_store_vacuum(struct mgr_store *st, struct iof_diag *diag)
{
    int rc = sqlite3_exec(st->db, "VACUUM", NULL, NULL, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_exec(st->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        return 0;
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
        return iof_diag_set(diag, -EBUSY,
                            "%s: not compacted: another process is using the database (%s)",
                            st->path, sqlite3_errmsg(st->db));
    return store_err(st, diag, "cannot compact");
}

/* The database file and its WAL, in bytes. */
static int64_t store_bytes(const struct mgr_store *st)
{
    char wal[IOF_PATH_MAX + 8];
    struct stat sb;
    int64_t n = 0;

    if (stat(st->path, &sb) == 0)
        n += sb.st_size;
    snprintf(wal, sizeof(wal), "%s-wal", st->path);
    if (stat(wal, &sb) == 0)
        n += sb.st_size;
    return n;
}

int mgr_store_remove(struct mgr_store *st, const int64_t *ids, size_t n,
                     struct mgr_store_removal *out, struct iof_diag *diag)
{
    struct iof_diag vd = {{0}};
    int rc;

    memset(out, 0, sizeof(*out));
    out->bytes_before = out->bytes_after = store_bytes(st);
    if (!n)
        return 0;
    if ((rc = mgr_store_rm_many(st, ids, n, &out->removed, diag)))
        return rc;
    if (mgr_store_vacuum(st, &vd))
        snprintf(out->not_compacted, sizeof(out->not_compacted), "%s", vd.msg);
    else
        out->compacted = true;
    out->bytes_after = store_bytes(st);
    return 0;
}

int mgr_store_rm(struct mgr_store *st, int64_t id, struct iof_diag *diag)
{
    char sql[1024];
    int r;

    memcpy(sql, "BEGIN IMMEDIATE;", sizeof("BEGIN IMMEDIATE;"));
    store_rm_sql(sql + strlen(sql), sizeof(sql) - strlen(sql), id);
    r = mgr_store_exec(st, sql, diag);
    if (r) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return r;
    }
    if (!sqlite3_changes(st->db)) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return iof_diag_set(diag, -ENOENT, "%s: no run %" PRId64, st->path, id);
    }
    return mgr_store_exec(st, "COMMIT", diag);
}

const char *mgr_store_status_name(bool has_exit, int exit_code)
{
    if (!has_exit)
        return "unfinished";
    if (exit_code == 0)
        return "finished";
    if (exit_code == 130)
        return "interrupted";
    return "failed";
}

/* --- import ---------------------------------------------------------------------------- */

/* The whole file, NUL-terminated: new, or NULL with *err and diag set. */
static char *read_file(const char *path, int *err, struct iof_diag *diag)
{
    struct iof_buf text = IOF_BUF_INIT;
    FILE *f = fopen(path, "rb");
    char *out;

    *err = 0;
    if (!f) {
        *err = iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        size_t n;
        if (iof_buf_reserve(&text, 64 * 1024))
            break;
        n = fread(text.p + text.len, 1, 64 * 1024, f);
        iof_buf_commit(&text, n);
        if (n == 0)
            break;
    }
    if (text.err || ferror(f)) {
        *err = iof_diag_set(diag, text.err ? text.err : -EIO, "%s: %s", path,
                            text.err ? iof_strerror(text.err) : "read error");
        iof_buf_free(&text);
        fclose(f);
        return NULL;
    }
    fclose(f);
    out = iof_buf_take(&text, NULL);
    if (!out)
        *err = iof_diag_set(diag, -ENOMEM, "%s: out of memory", path);
    return out;
}

#define JSON_COL(name, kind) ", " #name
#define JSON_VAL(name, kind) ", json_extract(r.value, '$." #name "')"

/* The document is parsed by SQLite's JSON functions, inside the one
 * transaction that writes it: a malformed file leaves nothing behind. */
static const char import_sql[] =
    "INSERT INTO runs(start_unix_ns, plan_name, plan, tests_planned, exit_code, "
    "iofleet_version, source, tag) SELECT json_extract(:doc, '$.run.start_unix_ns'), "
    "json_extract(:doc, '$.plan.name'), json_extract(:doc, '$.plan'), "
    "json_extract(:doc, '$.run.tests_planned'), json_extract(:doc, '$.run.exit_code'), "
    "json_extract(:doc, '$.iofleet.version'), :source, :tag;"
    "INSERT INTO agents(run_id, seq, name, doc) SELECT last_insert_rowid(), a.key, "
    "json_extract(a.value, '$.name'), a.value FROM json_each(:doc, '$.agents') a;"
    "INSERT INTO tests(run_id, idx, spec, cycle, cycle_param, cycle_value, start_unix_ns, "
    "end_unix_ns, start_skew_ms, nodes, lost, absent, interrupted, complete) "
    "SELECT (SELECT max(id) FROM runs), json_extract(t.value, '$.index'), "
    "json_extract(t.value, '$.spec'), json_extract(t.value, '$.cycle'), "
    "json_extract(t.value, '$.cycle_param'), json_extract(t.value, '$.cycle_value'), "
    "json_extract(t.value, '$.start_unix_ns'), json_extract(t.value, '$.end_unix_ns'), "
    "json_extract(t.value, '$.start_skew_ms'), json_extract(t.value, '$.nodes'), "
    "json_extract(t.value, '$.lost'), json_extract(t.value, '$.absent'), "
    "json_extract(t.value, '$.interrupted'), coalesce(json_extract(t.value, '$.complete'), 0) "
    "FROM json_each(:doc, '$.tests') t;"
    "INSERT INTO rows(test_id, seq, row_type, node, worker, target, status, queue_depth, "
    "n_nodes, n_workers, n_targets, window_start_s, window_end_s" MGR_STORE_METRICS(
        JSON_COL) ", latency) SELECT x.id, r.key, json_extract(r.value, '$.row_type'), "
                  "json_extract(r.value, '$.node'), json_extract(r.value, '$.worker'), "
                  "json_extract(r.value, '$.target'), json_extract(r.value, '$.status'), "
                  "json_extract(r.value, '$.queue_depth'), "
                  /* format 1 named them n_nodes, n_workers, n_targets */
                  "coalesce(json_extract(r.value, '$.nodes'), json_extract(r.value, '$.n_nodes')), "
                  "coalesce(json_extract(r.value, '$.workers'), "
                  "json_extract(r.value, '$.n_workers')), "
                  "coalesce(json_extract(r.value, '$.targets'), "
                  "json_extract(r.value, '$.n_targets')), "
                  "json_extract(r.value, '$.window_start_s'), "
                  "json_extract(r.value, '$.window_end_s')" MGR_STORE_METRICS(
                      JSON_VAL) ", json_extract(r.value, '$.latency') FROM json_each(:doc, "
                                "'$.tests') t JOIN tests x ON x.run_id = (SELECT max(id) FROM "
                                "runs) AND x.idx = json_extract(t.value, '$.index'), "
                                "json_each(t.value, '$.results') r;"
                                "INSERT INTO intervals(test_id, seq, interval, time_s, node, "
                                "reported, lost, "
                                "late" MGR_STORE_METRICS(
                                    JSON_COL) ", latency) SELECT x.id, r.key, "
                                              "json_extract(r.value, "
                                              "'$.interval'), json_extract(r.value, '$.time_s'), "
                                              "json_extract(r.value, '$.node'), "
                                              "json_extract(r.value, "
                                              "'$.reported'), json_extract(r.value, '$.lost'), "
                                              "json_extract(r.value, '$.late')" MGR_STORE_METRICS(
                                                  JSON_VAL) ", NULL FROM json_each(:doc, "
                                                            "'$.tests') t "
                                                            "JOIN tests x ON x.run_id = (SELECT "
                                                            "max(id) "
                                                            "FROM runs) AND x.idx = "
                                                            "json_extract(t.value, "
                                                            "'$.index'), json_each(t.value, "
                                                            "'$.intervals') r;";

/* Checks the document's shape before anything is written: an iofleet
 * result document with a tests array. */
static int import_check(struct mgr_store *st, const char *doc, const char *path,
                        struct iof_diag *diag)
{
    sqlite3_stmt *s;
    int rc, ok = 0;

    rc = sqlite3_prepare_v2(st->db,
                            "SELECT json_valid(?1) AND json_type(?1, '$.iofleet.format') = "
                            "'integer' AND json_type(?1, '$.tests') = 'array' AND "
                            "json_type(?1, '$.run') = 'object'",
                            -1, &s, NULL);
    if (rc != SQLITE_OK)
        return store_err(st, diag, "cannot check the document");
    sqlite3_bind_text(s, 1, doc, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW)
        ok = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if (!ok)
        return iof_diag_set(diag, -EINVAL,
                            "%s: not an iofleet result document (iofleet run --json)", path);
    return 0;
}

int mgr_store_import(struct mgr_store *st, const char *path, const char *tag, int64_t *id,
                     struct iof_diag *diag)
{
    char source[IOF_PATH_MAX + 16];
    const char *sql = import_sql;
    int r = 0;
    char *doc = read_file(path, &r, diag);

    if (!doc)
        return r;
    r = import_check(st, doc, path, diag);
    if (r) {
        free(doc);
        return r;
    }
    snprintf(source, sizeof(source), "import:%s", path);
    r = mgr_store_exec(st, "BEGIN IMMEDIATE", diag);
    while (!r && *sql) {
        sqlite3_stmt *s;
        const char *tail;
        if (sqlite3_prepare_v2(st->db, sql, -1, &s, &tail) != SQLITE_OK) {
            r = store_err(st, diag, "import");
            break;
        }
        if (!s) { /* trailing whitespace */
            sql = tail;
            continue;
        }
        for (int i = 1; i <= sqlite3_bind_parameter_count(s); i++) {
            const char *name = sqlite3_bind_parameter_name(s, i);
            if (!strcmp(name, ":doc"))
                sqlite3_bind_text(s, i, doc, -1, SQLITE_STATIC);
            else if (!strcmp(name, ":source"))
                sqlite3_bind_text(s, i, source, -1, SQLITE_STATIC);
            else if (!strcmp(name, ":tag") && tag)
                sqlite3_bind_text(s, i, tag, -1, SQLITE_STATIC);
        }
        if (sqlite3_step(s) != SQLITE_DONE)
            r = iof_diag_set(diag, -EIO, "%s: cannot import %s: %s", st->path, path,
                             sqlite3_errmsg(st->db));
        else if (sql == import_sql)
            *id = sqlite3_last_insert_rowid(st->db);
        sqlite3_finalize(s);
        sql = tail;
    }
    if (!r)
        r = mgr_store_exec(st, "COMMIT", diag);
    if (r)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    free(doc);
    return r;
}

/* --- list ------------------------------------------------------------------------------ */

/* The runs a filter picks (struct mgr_store_filter): ?1 tag, ?2 text in the
 * plan name or tag (ASCII case folded), ?3 started at or after. */
#define LIST_WHERE                                                                                 \
    " WHERE (?1 IS NULL OR r.tag = ?1) AND (?2 IS NULL OR instr(lower(coalesce(r.plan_name, '') "  \
    "|| char(10) || coalesce(r.tag, '')), lower(?2)) > 0) AND (?3 = 0 OR r.start_unix_ns >= ?3)"

/* One line per run; the headline is the ALL row of the run's fastest test.
 * ?4 and ?5: LIMIT and OFFSET. */
static const char list_sql[] =
    "SELECT r.id, r.start_unix_ns, r.plan_name, r.tag, "
    "(SELECT count(*) FROM agents a WHERE a.run_id = r.id), "
    "(SELECT count(*) FROM tests t WHERE t.run_id = r.id AND t.complete), r.tests_planned, "
    "h.iops, h.p99_lat_ms, r.exit_code "
    "FROM runs r LEFT JOIN (SELECT t.run_id AS run_id, w.iops AS iops, w.p99_lat_ms AS "
    "p99_lat_ms, row_number() OVER (PARTITION BY t.run_id ORDER BY w.iops DESC) AS n "
    "FROM tests t JOIN rows w ON w.test_id = t.id AND w.row_type = 'ALL') h "
    "ON h.run_id = r.id AND h.n = 1" LIST_WHERE " ORDER BY r.id LIMIT ?4 OFFSET ?5";

static const char count_sql[] = "SELECT count(*) FROM runs r" LIST_WHERE;

static void list_bind(sqlite3_stmt *s, const struct mgr_store_filter *flt)
{
    if (flt && flt->tag)
        sqlite3_bind_text(s, 1, flt->tag, -1, SQLITE_TRANSIENT);
    if (flt && flt->text)
        sqlite3_bind_text(s, 2, flt->text, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 3, flt ? flt->since_unix_ns : 0);
}

int mgr_store_count(struct mgr_store *st, const struct mgr_store_filter *flt, int64_t *n,
                    struct iof_diag *diag)
{
    sqlite3_stmt *s;
    int rc;

    if (sqlite3_prepare_v2(st->db, count_sql, -1, &s, NULL) != SQLITE_OK)
        return store_err(st, diag, "cannot count the runs");
    list_bind(s, flt);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : store_err(st, diag, "cannot count the runs");
}

static void fmt_time(int64_t ns, char *buf, size_t cap, bool iso)
{
    time_t t = (time_t)(ns / 1000000000);
    struct tm tm;

    if (ns <= 0 || !gmtime_r(&t, &tm)) {
        snprintf(buf, cap, "-");
        return;
    }
    strftime(buf, cap, iso ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S", &tm);
}

void mgr_store_json_time(struct iof_buf *b, int64_t unix_ns)
{
    char s[32];

    if (unix_ns <= 0) {
        iof_json_null(b);
        return;
    }
    fmt_time(unix_ns, s, sizeof(s), true);
    iof_json_str(b, s);
}

static void json_str(FILE *f, const char *s)
{
    iof_json_fput(f, s, IOF_JSON_TEXT);
}

int mgr_store_list(struct mgr_store *st, const struct mgr_store_filter *flt, bool json, FILE *f,
                   struct iof_diag *diag)
{
    sqlite3_stmt *s;
    int rc;
    bool first = true;

    if (sqlite3_prepare_v2(st->db, list_sql, -1, &s, NULL) != SQLITE_OK)
        return store_err(st, diag, "cannot list the runs");
    list_bind(s, flt);
    sqlite3_bind_int64(s, 4, flt && flt->limit > 0 ? flt->limit : -1);
    sqlite3_bind_int64(s, 5, flt ? flt->offset : 0);
    if (json)
        fputc('[', f);
    else
        fprintf(f, "%6s  %-19s  %-20s  %-14s %5s %7s %12s %10s  %s\n", "id", "start (UTC)", "plan",
                "tag", "nodes", "tests", "iops", "p99_ms", "exit");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        const char *plan = (const char *)sqlite3_column_text(s, 2);
        const char *tag = (const char *)sqlite3_column_text(s, 3);
        int nodes = sqlite3_column_int(s, 4), tests = sqlite3_column_int(s, 5);
        int planned = sqlite3_column_int(s, 6);
        bool has_iops = sqlite3_column_type(s, 7) != SQLITE_NULL;
        bool has_p99 = sqlite3_column_type(s, 8) != SQLITE_NULL;
        bool has_exit = sqlite3_column_type(s, 9) != SQLITE_NULL;
        int exit_code = sqlite3_column_int(s, 9);
        char when[40], tests_s[32];

        fmt_time(sqlite3_column_int64(s, 1), when, sizeof(when), json);
        if (json) {
            fprintf(f, "%s\n{\"id\":%" PRId64 ",\"start_time\":", first ? "" : ",", id);
            if (when[0] == '-')
                fputs("null", f);
            else
                json_str(f, when);
            fputs(",\"plan\":", f);
            json_str(f, plan);
            fputs(",\"tag\":", f);
            json_str(f, tag);
            fprintf(f, ",\"nodes\":%d,\"tests\":%d,\"tests_planned\":", nodes, tests);
            if (planned)
                fprintf(f, "%d", planned);
            else
                fputs("null", f);
            fputs(",\"iops\":", f);
            if (has_iops)
                fprintf(f, "%.17g", sqlite3_column_double(s, 7));
            else
                fputs("null", f);
            fputs(",\"p99_lat_ms\":", f);
            if (has_p99)
                fprintf(f, "%.17g", sqlite3_column_double(s, 8));
            else
                fputs("null", f);
            fputs(",\"exit_code\":", f);
            if (has_exit)
                fprintf(f, "%d", exit_code);
            else
                fputs("null", f);
            fputs(",\"status\":", f);
            json_str(f, mgr_store_status_name(has_exit, exit_code));
            fputc('}', f);
        } else {
            char iops[32] = "-", p99[32] = "-", ex[32];
            if (planned)
                snprintf(tests_s, sizeof(tests_s), "%d/%d", tests, planned);
            else
                snprintf(tests_s, sizeof(tests_s), "%d", tests);
            if (has_iops)
                snprintf(iops, sizeof(iops), "%.0f", sqlite3_column_double(s, 7));
            if (has_p99)
                snprintf(p99, sizeof(p99), "%.3f", sqlite3_column_double(s, 8));
            if (has_exit)
                snprintf(ex, sizeof(ex), "%d %s", exit_code,
                         mgr_store_status_name(true, exit_code));
            else
                snprintf(ex, sizeof(ex), "- %s", mgr_store_status_name(false, 0));
            /* Names and tags as safe terminal text: a row written before
             * the text policy (common/text.h), or imported, may hold an
             * escape sequence. Cut to the column, never inside an escape. */
            char plan_s[21], tag_s[15];
            iof_text_escape(plan_s, sizeof(plan_s), plan ? plan : "-");
            iof_text_escape(tag_s, sizeof(tag_s), tag ? tag : "-");
            fprintf(f, "%6" PRId64 "  %-19s  %-20s  %-14s %5d %7s %12s %10s  %s\n", id, when,
                    plan_s, tag_s, nodes, tests_s, iops, p99, ex);
        }
        first = false;
    }
    sqlite3_finalize(s);
    if (json)
        fputs(first ? "]\n" : "\n]\n", f);
    if (rc != SQLITE_DONE)
        return store_err(st, diag, "cannot list the runs");
    return 0;
}
