/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/store.h - the run history: an SQLite database of every `iofleet
 * run` (plan, agents' inventory, every test's rows, intervals and merged
 * histograms), written as the run goes by the "db" sink (manager/sinks/db.c),
 * listed and pruned by `iofleet runs`, read by `iofleet report`.
 *
 * The file is shared: WAL mode and a busy timeout let several managers (and
 * readers) use one database at once; every write is one short transaction.
 * The schema is versioned with PRAGMA user_version and migrated forward when
 * opened (docs/history.md lists the versions); a newer file is refused.
 */
#ifndef IOF_MANAGER_HISTORY_STORE_H
#define IOF_MANAGER_HISTORY_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "common/err.h"
#include "manager/sink.h"

/* The schema version this build writes (PRAGMA user_version). */
#define MGR_STORE_SCHEMA 3

/* How long a writer waits for another one's transaction (ms). */
#define MGR_STORE_BUSY_MS 15000

/* The figures of a row or an interval, named as the CSV columns and the
 * JSON document's keys (docs/results.md): X(name, kind), kind REAL or INT. */
#define MGR_STORE_METRICS(X)                                                                       \
    X(duration_s, REAL)                                                                            \
    X(iops, REAL)                                                                                  \
    X(read_iops, REAL)                                                                             \
    X(write_iops, REAL)                                                                            \
    X(mibps, REAL)                                                                                 \
    X(read_mibps, REAL)                                                                            \
    X(write_mibps, REAL)                                                                           \
    X(avg_lat_ms, REAL)                                                                            \
    X(avg_read_lat_ms, REAL)                                                                       \
    X(avg_write_lat_ms, REAL)                                                                      \
    X(p50_lat_ms, REAL)                                                                            \
    X(p90_lat_ms, REAL)                                                                            \
    X(p95_lat_ms, REAL)                                                                            \
    X(p99_lat_ms, REAL)                                                                            \
    X(p999_lat_ms, REAL)                                                                           \
    X(p9999_lat_ms, REAL)                                                                          \
    X(max_lat_ms, REAL)                                                                            \
    X(read_ios, INT)                                                                               \
    X(write_ios, INT)                                                                              \
    X(bytes_read, INT)                                                                             \
    X(bytes_written, INT)                                                                          \
    X(errors, INT)                                                                                 \
    X(cpu_pct, REAL)

/* Schema 3: what a row or an interval holds beyond MGR_STORE_METRICS, so
 * `iofleet runs export` writes the result files the run wrote
 * (manager/history/export.c): X(name, kind), NULL where the files print an
 * empty field or null (cpu figures unmeasured, no rated I/O, lateness
 * unknown). */
#define MGR_STORE_MORE(X)                                                                          \
    X(window_ns, INTEGER)                                                                          \
    X(interrupted, INTEGER)                                                                        \
    X(read_errors, INTEGER)                                                                        \
    X(write_errors, INTEGER)                                                                       \
    X(verify_errors, INTEGER)                                                                      \
    X(verify_bad_reads, INTEGER)                                                                   \
    X(verify_overlaid, INTEGER)                                                                    \
    X(first_error, INTEGER)                                                                        \
    X(first_error_offset, INTEGER)                                                                 \
    X(user_pct, REAL)                                                                              \
    X(sys_pct, REAL)                                                                               \
    X(agent_cpu_pct, REAL)                                                                         \
    X(dpc_pct, REAL)                                                                               \
    X(irq_pct, REAL)                                                                               \
    X(intr_per_s, REAL)                                                                            \
    X(packets_per_s, REAL)                                                                         \
    X(packet_errors, REAL)                                                                         \
    X(retrans_per_s, REAL)                                                                         \
    X(svc_ios, INTEGER)                                                                            \
    X(avg_svc_lat_ms, REAL)                                                                        \
    X(max_svc_lat_ms, REAL)                                                                        \
    X(late_ios, INTEGER)                                                                           \
    X(lateness_count, INTEGER)                                                                     \
    X(lateness_over_20us, INTEGER)                                                                 \
    X(lateness_over_20us_pct, REAL)                                                                \
    X(lateness_avg_us, REAL)                                                                       \
    X(lateness_p50_us, REAL)                                                                       \
    X(lateness_p99_us, REAL)                                                                       \
    X(lateness_p999_us, REAL)                                                                      \
    X(lateness_max_us, REAL)

/* Schema 3, rows only: the worker group, a target's region and place, and
 * a node's CPUs (MGR_STORE_CPU_BYTES each: id, then busy, user, sys, dpc,
 * irq as IEEE doubles, little-endian). */
#define MGR_STORE_ROW_MORE(X)                                                                      \
    X(group_name, TEXT)                                                                            \
    X(range_offset, INTEGER)                                                                       \
    X(range_size, INTEGER)                                                                         \
    X(device, TEXT)                                                                                \
    X(fstype, TEXT)                                                                                \
    X(ram_backed, INTEGER)                                                                         \
    X(cpus, BLOB)
#define MGR_STORE_CPU_BYTES (4 + 5 * 8)

struct mgr_store {
    sqlite3 *db;
    char path[IOF_PATH_MAX];
};

/* The default database: $XDG_DATA_HOME/iofleet/runs.db, else
 * $HOME/.local/share/iofleet/runs.db. 0, or -ENOENT with diag when neither
 * variable is set. */
int mgr_store_default_path(char *buf, size_t cap, struct iof_diag *diag);

/* Opens (creating the file and its directory, mode 0700, when missing) and
 * migrates the database at path; ":memory:" is a private in-memory one.
 * Returns 0 and a new store in *out, or an error with diag
 * "PATH: REASON". */
int mgr_store_open(const char *path, struct mgr_store **out, struct iof_diag *diag);
/* Closes and frees; accepts NULL. */
void mgr_store_close(struct mgr_store *st);

/* Runs one statement list (no results) in a write transaction. 0 or
 * -EIO with diag holding SQLite's message. */
int mgr_store_exec(struct mgr_store *st, const char *sql, struct iof_diag *diag);

/* The run named by ref: a decimal id, or a tag (the newest run with it).
 * 0 with *id, -ENOENT with diag when there is none. */
int mgr_store_resolve(struct mgr_store *st, const char *ref, int64_t *id, struct iof_diag *diag);

/* Deletes a run and everything recorded of it. -ENOENT when absent. */
int mgr_store_rm(struct mgr_store *st, int64_t id, struct iof_diag *diag);

/* Which runs mgr_store_select() picks: every condition given must hold. */
struct mgr_store_sel {
    const char *tag;        /* with this tag; NULL: any */
    int64_t from, to;       /* ids from..to, inclusive; 0: no bound */
    int64_t before_unix_ns; /* started before this time; 0: any */
    long keep; /* not among the newest `keep` runs (of the tag, when given); < 0: any */
};

/* The ids of the runs sel picks, oldest first: a new array in *ids (free()
 * it; NULL when none) and its length in *n. 0 or -EIO with diag. */
int mgr_store_select(struct mgr_store *st, const struct mgr_store_sel *sel, int64_t **ids,
                     size_t *n, struct iof_diag *diag);

/* Deletes the n runs of ids and everything recorded of them in one
 * transaction (ids that are not there are skipped); *removed (may be NULL)
 * is how many were. 0 or -EIO with diag (nothing deleted). */
int mgr_store_rm_many(struct mgr_store *st, const int64_t *ids, size_t n, size_t *removed,
                      struct iof_diag *diag);

/* What mgr_store_remove() did. */
struct mgr_store_removal {
    size_t removed;          /* runs deleted */
    int64_t bytes_before;    /* the file and its WAL before, in bytes */
    int64_t bytes_after;     /* and after */
    bool compacted;          /* false: nothing removed, or compaction skipped */
    char not_compacted[512]; /* why it was skipped ("" when it was not) */
};

/* Deletes the n runs of ids as mgr_store_rm_many() (none when n is 0),
 * then gives their space back as mgr_store_vacuum(); a compaction another
 * connection holds up is skipped with its reason in out, the runs deleted
 * all the same. 0, or an error with diag (nothing deleted). The removal of
 * `iofleet runs rm`, `runs prune` and serve's API. */
int mgr_store_remove(struct mgr_store *st, const int64_t *ids, size_t n,
                     struct mgr_store_removal *out, struct iof_diag *diag);

/* Sets run id's tag (NULL or "": none). -ENOENT when there is no such run. */
int mgr_store_set_tag(struct mgr_store *st, int64_t id, const char *tag, struct iof_diag *diag);

/* Gives the space of deleted runs back to the file system: VACUUM, then a
 * WAL checkpoint that truncates the log. Waits MGR_STORE_BUSY_MS for other
 * connections; -EBUSY with diag when one still holds the database (the
 * data is intact, only the file stays large), else 0 or -EIO. */
int mgr_store_vacuum(struct mgr_store *st, struct iof_diag *diag);

/* Records the result document at path (an `iofleet run --json` file) as a
 * new run; tag may be NULL. 0 with *id, or an error with diag naming the
 * file. */
int mgr_store_import(struct mgr_store *st, const char *path, const char *tag, int64_t *id,
                     struct iof_diag *diag);

/* Which runs the list shows, oldest first: every condition given must hold. */
struct mgr_store_filter {
    const char *tag;       /* with this tag; NULL: any */
    const char *text;      /* in the plan name or the tag, ASCII case folded; NULL: any */
    int64_t since_unix_ns; /* started at or after this time; 0: any */
    long limit;            /* at most this many; 0: all */
    long offset;           /* past the first `offset` the other conditions pick */
};

/* Writes the run list of the runs flt picks (NULL: all) to f: a table, or
 * (json) one JSON array of objects {id, start_time, plan, tag, nodes, tests,
 * tests_planned, iops, p99_lat_ms, exit_code, status}. The headline IOPS and
 * p99 are the ALL row of the test with the highest IOPS. */
int mgr_store_list(struct mgr_store *st, const struct mgr_store_filter *flt, bool json, FILE *f,
                   struct iof_diag *diag);

/* How many runs flt picks, limit and offset aside: *n. 0 or -EIO. */
int mgr_store_count(struct mgr_store *st, const struct mgr_store_filter *flt, int64_t *n,
                    struct iof_diag *diag);

/* "finished" (exit 0), "failed" (another exit code), "interrupted" (130),
 * "unfinished" (no exit code: running, or the manager was killed). */
const char *mgr_store_status_name(bool has_exit, int exit_code);

/* A run's time (ns since the epoch) in JSON as `runs --json` writes it,
 * "2026-12-06T14:40:00Z", or null for 0 and before. */
void mgr_store_json_time(struct iof_buf *b, int64_t unix_ns);

/* The history sink (manager/sinks/db.c): opens the database at path and
 * records the run into it as events arrive, tagged with tag (may be NULL),
 * from a writer thread of its own that owns the connection from run_begin
 * until close: the sink's calls copy the figures and never wait for the
 * database. Each test is committed when the writer reaches its end, its
 * intervals in batches as they arrive. */
int mgr_db_sink_open(const char *path, const char *tag, struct mgr_sink **out,
                     struct iof_diag *diag);
/* The run id the sink created at run_begin (0 before), or reserved. */
int64_t mgr_db_sink_run_id(const struct mgr_sink *s);

/* Takes the run's id now, before the run begins (a {run} result file name
 * needs it before the files are created): a row in runs that run_begin
 * fills, removed at close if the run never began. Returns the id (> 0) or
 * a negative error with diag. */
int64_t mgr_db_sink_reserve(struct mgr_sink *s, struct iof_diag *diag);

/* Makes close say (on stderr, info) how many intervals and rows the writer
 * recorded, its CPU time per row and the queue's peak (--verbose). */
void mgr_db_sink_verbose(struct mgr_sink *s);

/* Waits until the writer has handled (not necessarily committed) every
 * event handed to the sink so far; at once when it does not run. For tests. */
void mgr_db_sink_sync(struct mgr_sink *s);
/* Sets the bound of the writer's queue in bytes (default 256 MiB): past it,
 * intervals and rows are not recorded, and close reports how many. For
 * tests. */
void mgr_db_sink_queue_max(struct mgr_sink *s, size_t bytes);

#endif
