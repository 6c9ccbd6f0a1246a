/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sink.h - where a run's figures go besides the terminal: result
 * files (plain CSV, Iometer CSV, time series CSV, JSON), each a sink fed by
 * the run (manager/run.c) as figures arrive.
 *
 * Order of calls for a run:
 *   open (every sink, before anything runs: an unwritable path fails the run
 *         with exit code 2 before any I/O)
 *   run_begin
 *   per test: test_begin, then in any interleaving
 *             interval (per node as each agent reports, and ALL when merged)
 *             row (NODE, WORKER, TARGET rows as each agent's result arrives),
 *             then test_end (with the ALL row)
 *   run_end (also after Ctrl-C or lost agents), close.
 * Files: open creates the file under a temporary name beside its own
 * (common/outfile.h: no link is followed); run_begin renames it into place,
 * so a run refused before it begins (mgr_sink_abort) leaves nothing and an
 * existing file replaced with --force stays until then; close renames it if
 * run_begin did not (a run whose agents could not be reached).
 * Durability: interval rows are written and flushed as they arrive; at
 * test_end a sink writes the test's final rows, flushes and fsyncs, so an
 * interrupted or crashed manager leaves files holding every finished test.
 * Everything passed to a sink is borrowed for the duration of the call,
 * except run_begin's plan, plan text and agent infos, which stay valid until
 * close.
 */
#ifndef IOF_MANAGER_SINK_H
#define IOF_MANAGER_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/outfile.h"
#include "common/ratecycle.h"
#include "common/spec.h"
#include "common/stats.h"
#include "manager/metrics.h"
#include "proto/msg.h"

/* One agent as it introduced itself. */
struct mgr_agent_info {
    const char *name;
    const char *endpoint;            /* "HOST:PORT" */
    const struct proto_hello *hello; /* software, inventory */
};

struct mgr_run_info {
    const struct iof_plan *plan;
    const char *plan_text; /* canonical JSON of the plan */
    const struct mgr_agent_info *agents;
    size_t nagents;
    uint64_t start_wall_ns; /* CLOCK_REALTIME at run start */
};

struct mgr_test_info {
    const struct iof_test *test;
    size_t ntests;
    const char *spec;  /* spec name */
    const char *cycle; /* "queue_depth=8" or "" */
    uint64_t start_wall_ns;
    /* Rows and test_end only: the test was stopped before the end of its
     * measured window because the run was interrupted (Ctrl-C, SIGTERM). */
    bool interrupted;
};

/* GROUP: one worker group over every node (after the node rows arrived,
 * before test_end); the GROUP rows of a test add up to its ALL row. */
enum mgr_row_type { MGR_ROW_ALL, MGR_ROW_NODE, MGR_ROW_WORKER, MGR_ROW_TARGET, MGR_ROW_GROUP };

/* Where a row's figures come from (docs/results.md, `status`). */
enum mgr_row_status {
    MGR_STATUS_OK,                /* the node's result of the whole window (ALL: every row below) */
    MGR_STATUS_PARTIAL,           /* the node was lost mid-test: the intervals that had arrived */
    MGR_STATUS_LOST_BEFORE_START, /* lost in the test before any interval arrived */
    MGR_STATUS_ABSENT,            /* an agent of the run that was not in this test */
};

/* One final row of a test. Names are NULL where they do not apply (ALL has
 * none; NODE has node; WORKER node+worker; TARGET all three). */
/* Where one target path of a node lives, as its agent found it at
 * preparation (prepared.targets). */
struct mgr_place {
    const char *path; /* as in the plan (borrowed from it) */
    char *device;     /* kernel name of the block device under it, NULL unknown or none */
    char *fstype;     /* the filesystem holding a file, NULL for a device or unknown */
    int ram_backed;   /* 1, 0, -1 unknown */
};

struct mgr_row {
    enum mgr_row_type type;
    const char *node;
    const char *worker;            /* "w0" */
    const char *target;            /* the target path as in the plan */
    const char *group;             /* GROUP, WORKER, TARGET: the worker group's name */
    const struct iof_stats *stats; /* a histogram without buckets (iof_hist_has_buckets false)
                                    * has unknown percentiles: the WORKER and TARGET rows of a
                                    * partial node */
    const struct mgr_metrics *m;   /* stats over ns, computed once for every sink */
    uint64_t ns;                   /* the measured window of this row (0: none) */
    enum mgr_row_status status;
    /* The part of the test's measured window the row covers, from its start
     * (ok: 0 .. the window; partial: up to the end of its last interval). */
    uint64_t window_start_ns, window_end_ns;
    uint32_t queue_depth;             /* outstanding I/Os per target (TARGET, WORKER: per target) */
    uint32_t nodes, workers, targets; /* entities below this row (Iometer's # columns) */
    uint64_t range_offset, range_size; /* TARGET: the region used (0 size: whole) */
    const struct mgr_place *place;     /* TARGET: where it lives on its node, NULL unknown */
    /* NODE: the node's CPU; ALL: the mean over the nodes that measured it;
     * NULL when unknown. cpu_busy_pct is cpu->busy_pct (0 when NULL). */
    const struct proto_cpu *cpu;
    double cpu_busy_pct;
    /* NODE: each of its CPUs over the window of cpu (protocol 1.7, ids
     * increasing); ncpus 0 when unknown (an older or Windows agent). */
    const struct proto_cpu_one *cpus;
    size_t ncpus;
};

/* One interval of one node (node != NULL) or of the cluster (node NULL). */
struct mgr_interval {
    const struct mgr_test_info *test;
    uint64_t k;       /* 0-based interval */
    double time_s;    /* end of the interval, seconds since the run started */
    const char *node; /* NULL for ALL */
    const struct iof_stats *stats;
    const struct mgr_metrics *m; /* stats over ns, computed once for every sink */
    uint64_t ns;                 /* its length */
    unsigned reported;           /* ALL: agents that reported; node: 1 */
    unsigned lost;               /* node: 1 when the agent could not keep the interval (its
                                  * figures are unknown); ALL: the nodes whose interval was lost */
    bool late;                   /* ALL: an extra row of an interval already written, holding
                                  * one node's report that came after it */
    bool interrupted;            /* the interval was cut short by the run's interruption */
    const struct proto_cpu *cpu; /* node CPU; ALL: the mean over the nodes that measured
                                  * it; NULL when unknown */
    double cpu_busy_pct;         /* cpu->busy_pct, 0 when cpu is NULL */
};

/* How a test ended, as the terminal's run summary and the live page say it
 * (docs/results.md, "The run's summary"). */
enum mgr_test_status {
    MGR_TEST_OK,          /* every node of the run delivered its result, without errors */
    MGR_TEST_PARTIAL,     /* a node was lost during the test or absent from it */
    MGR_TEST_INTERRUPTED, /* the run was interrupted during the test */
    MGR_TEST_FAILED,      /* no node delivered figures, or I/O or verify errors, or an
                           * agent reported the test failed */
};

struct mgr_test_end {
    const struct mgr_test_info *test;
    enum mgr_test_status status;
    uint64_t end_wall_ns;      /* CLOCK_REALTIME when the test's results were complete */
    const struct mgr_row *all; /* the ALL row */
    double start_skew_ms;
    unsigned nodes; /* agents that delivered a result */
    unsigned lost;  /* agents lost during the test (their rows: partial, lost-before-start) */
    const char *const *absent; /* agents of the run that were not in the test */
    size_t nabsent;
    bool interrupted;
};

struct mgr_sink;

/* The answer of a find_max rate cycle (plan "cycle": {"rate": {"find_max":
 * ...}}) for one spec, after its last step (common/ratecycle.h). */
struct mgr_knee_info {
    const char *spec;
    const char *metric; /* "p99", "p999", "avg" */
    uint64_t target_ns;
    double iops;                 /* the answer: its confirmation run's achieved IOPS; 0: none */
    double lat_ns;               /* that run's latency (the metric); none: the lowest miss's */
    double offered_iops;         /* the answer's offered rate: its fraction x base_iops */
    double base_iops;            /* what the unthrottled test achieved */
    unsigned runs_met, runs;     /* runs at the answer's rate that met, of all there */
    size_t steps;                /* tests the search ran */
    const struct iof_knee *knee; /* borrowed: every step and confirmation */
    const char *headline;        /* "max 412 k IOPS at p99 <= 2 ms (...)" */
};

struct mgr_sink_ops {
    const char *name; /* "csv", "iometer-csv", "timeseries", "json" */
    /* Creates the file (under a temporary name, sink->flags) and writes any
     * header. */
    int (*open)(struct mgr_sink *s, const char *path, struct iof_diag *diag);
    void (*run_begin)(struct mgr_sink *s, const struct mgr_run_info *ri);
    void (*test_begin)(struct mgr_sink *s, const struct mgr_test_info *ti);
    void (*interval)(struct mgr_sink *s, const struct mgr_interval *iv);
    void (*row)(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r);
    void (*test_end)(struct mgr_sink *s, const struct mgr_test_end *te);
    void (*run_end)(struct mgr_sink *s, int exit_code);
    /* Optional (NULL: the sink keeps no headline): a find_max answer. */
    void (*knee)(struct mgr_sink *s, const struct mgr_knee_info *k);
    /* Optional (NULL: every write stands on its own): ends the batch of
     * writes handed over since the last call. Called on the run's 50 ms
     * tick, so a batch spans at most a few loop turns. */
    void (*flush)(struct mgr_sink *s);
    /* Optional (NULL: the sink writes nothing while a test is measured, or
     * is meant to be read as the run goes): called before a test's start
     * time is fixed; returns once what the sink has written is on disk, so
     * no write of it, nor the kernel's write-back, falls in the test's
     * measured window. May wait (the loop with it). */
    void (*quiesce)(struct mgr_sink *s);
    /* Flushes, fsyncs and closes the file and frees the writer state (priv);
     * mgr_sink_close() frees the sink itself. */
    void (*close)(struct mgr_sink *s);
};

struct mgr_sink {
    const struct mgr_sink_ops *ops;
    char path[IOF_PATH_MAX];
    unsigned flags;         /* IOF_OUTFILE_* for the file (FORCE from --force) */
    struct iof_outfile out; /* the file of a stdio writer (mgr_sink_open_writer) */
    bool aborted;           /* mgr_sink_abort: the run was refused, remove what open made */
    int write_error;        /* first write error (-errno); reported once at close */
    void *priv;             /* the writer's state */
};

/* Shared by the writers (manager/sink.c). */

/* The open of a stdio writer: allocates its state (size bytes, zeroed) as
 * sink->priv and creates sink->path for writing through sink->out
 * (common/outfile.h, sink->flags, mode 0666 & ~umask) as a stdio stream with
 * a large buffer, sink->out.f, owned by sink->out. 0, or the error with diag
 * "PATH: REASON" (the name refused, the file not creatable, out of memory);
 * nothing is left behind then. */
int mgr_sink_open_writer(struct mgr_sink *sink, size_t size, struct iof_diag *diag);
/* Renames the file of mgr_sink_open_writer into place (the writers'
 * run_begin); a failure is said once and tried again at close. */
void mgr_sink_publish(struct mgr_sink *sink);
/* A run_begin that only does mgr_sink_publish. */
void mgr_sink_publish_begin(struct mgr_sink *sink, const struct mgr_run_info *ri);
/* Appends s as one RFC 4180 field: quoted when it holds a comma, quote, CR
 * or LF, quotes doubled. NULL appends an empty field. Failures stay in b->err. */
void mgr_csv_field(struct iof_buf *b, const char *s);
/* fflush + fsync; remembers the first error in sink->write_error. */
void mgr_sink_sync(struct mgr_sink *sink, FILE *f, bool durable);
/* The close of a stdio writer (after it freed what its state holds): frees
 * the state (sink->priv), then a durable sync, rename into place unless done
 * (a failed rename keeps the temporary file and names it), fclose; after
 * mgr_sink_abort the file is removed instead. Reports a write error once on
 * stderr, naming the file. Returns the first error (0 when all went well). */
int mgr_sink_close_writer(struct mgr_sink *sink);
/* Whether the TARGET rows of test t keep their latency histograms in
 * --json and the run history: the plan's run.target_histograms when given,
 * else when the test gives at most IOF_TARGET_HISTS_AUTO_MAX TARGET rows
 * over the run's agents (every worker the plan gives each of them). The
 * other rows, and CSV TARGET rows, are never affected. t NULL: true. */
bool mgr_target_hists(const struct iof_plan *p, const struct mgr_agent_info *agents, size_t nagents,
                      const struct iof_test *t);
/* Whether the run history keeps the latency histograms of each node's
 * intervals in a run of nagents agents: the plan's run.interval_histograms
 * when given, else when nagents <= IOF_INTERVAL_HISTS_AUTO_MAX. p NULL:
 * true. */
bool mgr_interval_hists(const struct iof_plan *p, size_t nagents);
/* "ALL", "NODE", "WORKER", "TARGET". */
const char *mgr_row_type_name(enum mgr_row_type t);
/* "ok", "partial", "lost-before-start", "absent". */
const char *mgr_row_status_name(enum mgr_row_status st);

/* Where the figures of a row whose status is not ok come from, as one
 * sentence without commas (Iometer's readers split lines on them): the same
 * words in every file and report that prints it (--iometer-csv's comment
 * lines, `iofleet report`). row_s is the row's own window (duration_s),
 * from_s..to_s the part of the measured window it covers, test_s the test's
 * window (the ALL row's duration_s). Empty for ok. Returns buf. */
const char *mgr_status_note(char *buf, size_t cap, enum mgr_row_type type, enum mgr_row_status st,
                            double row_s, double from_s, double to_s, double test_s);
/* The status named s ("ok", "partial", ...), or -1. */
int mgr_row_status_parse(const char *s);
/* "ok", "partial", "interrupted", "failed". */
const char *mgr_test_status_name(enum mgr_test_status st);

/* The writer behind an option ("--csv", "--iometer-csv",
 * "--iometer-csv-append", "--iometer-instant", "--timeseries", "--json"), or
 * NULL. */
const struct mgr_sink_ops *mgr_sink_for_option(const char *option);
/* Allocates a sink and opens it with flags (IOF_OUTFILE_FORCE: replace an
 * existing file): 0, or an error with diag naming the path. */
int mgr_sink_open(const struct mgr_sink_ops *ops, const char *path, unsigned flags,
                  struct mgr_sink **out, struct iof_diag *diag);
/* Closes and frees (accepts NULL); returns the sink's write error. */
int mgr_sink_close(struct mgr_sink *s);
/* Closes and frees a sink of a run refused before it began: a file not yet
 * renamed into place is removed (what was at its name stays). */
void mgr_sink_abort(struct mgr_sink *s);

extern const struct mgr_sink_ops mgr_sink_csv;
extern const struct mgr_sink_ops mgr_sink_iometer;
extern const struct mgr_sink_ops mgr_sink_iometer_instant;
extern const struct mgr_sink_ops mgr_sink_timeseries;
extern const struct mgr_sink_ops mgr_sink_json;

#endif
