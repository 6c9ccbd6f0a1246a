/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/report_html.h - `iofleet report`: runs from the history (or from
 * --json result files) loaded into a small model (report_data.c) and written
 * as one self-contained HTML page with Chart.js inlined, or as Markdown
 * tables (report_html.c). */
#ifndef IOF_MANAGER_HISTORY_REPORT_HTML_H
#define IOF_MANAGER_HISTORY_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/err.h"
#include "manager/history/store.h"

enum mgr_report_format { MGR_REPORT_HTML, MGR_REPORT_MD, MGR_REPORT_JSON };

struct mgr_report_opts {
    const char *const *refs; /* run ids, tags, or result files */
    size_t nrefs;
    const char *db;  /* the history; NULL: the default */
    const char *out; /* "-": stdout; else written with common/outfile.h */
    bool force;      /* replace an existing out (a link is replaced, never followed) */
    enum mgr_report_format format;
    bool history_only; /* refs are ids or tags only, never files (serve) */
};

/* The report of o's refs (o->out aside) written on f. 0, or an error with
 * diag: -ENOENT for a run that is not there, -EIO for Chart.js that cannot
 * be read or a write that failed ("write failed"). */
int mgr_report_emit(const struct mgr_report_opts *o, FILE *f, struct iof_diag *diag);

/* Writes the report; returns the exit code (0, 1 run/database/write error,
 * with the message on stderr). */
int mgr_report_write(const struct mgr_report_opts *o);

/* --- the model --------------------------------------------------------------------------- */

/* The figures a report shows, in its column order. */
#define MGR_RPT_METRICS(X)                                                                         \
    X(IOPS, iops, "IOPS", true)                                                                    \
    X(MIBPS, mibps, "MiB/s", true)                                                                 \
    X(AVG, avg_lat_ms, "avg ms", false)                                                            \
    X(P50, p50_lat_ms, "p50 ms", false)                                                            \
    X(P99, p99_lat_ms, "p99 ms", false)                                                            \
    X(P999, p999_lat_ms, "p99.9 ms", false)                                                        \
    X(MAX, max_lat_ms, "max ms", false)                                                            \
    X(ERRORS, errors, "errors", false)

enum mgr_rpt_metric {
#define MGR_RPT_ENUM(id, col, label, higher_better) MGR_RPT_##id,
    MGR_RPT_METRICS(MGR_RPT_ENUM)
#undef MGR_RPT_ENUM
        MGR_RPT_NMETRICS
};

struct mgr_rpt_fig {
    double v[MGR_RPT_NMETRICS];
    bool have[MGR_RPT_NMETRICS];
};

/* The read/write split of a row's figures (a comparison shows it). */
#define MGR_RPT_SPLIT(X)                                                                           \
    X(READ_IOPS, read_iops)                                                                        \
    X(WRITE_IOPS, write_iops)                                                                      \
    X(READ_MIBPS, read_mibps)                                                                      \
    X(WRITE_MIBPS, write_mibps)                                                                    \
    X(READ_LAT, avg_read_lat_ms)                                                                   \
    X(WRITE_LAT, avg_write_lat_ms)

enum mgr_rpt_split {
#define MGR_RPT_SPLIT_ENUM(id, col) MGR_RPT_##id,
    MGR_RPT_SPLIT(MGR_RPT_SPLIT_ENUM)
#undef MGR_RPT_SPLIT_ENUM
        MGR_RPT_NSPLIT
};

struct mgr_rpt_row {
    char *type, *node, *worker, *target, *status;
    double split[MGR_RPT_NSPLIT]; /* valid where have_split */
    bool have_split[MGR_RPT_NSPLIT];
    /* Its own window (duration_s) and the part of the test's measured
     * window it covers; < 0 unknown (an absent node has none). */
    double duration_s, window_start_s, window_end_s;
    struct mgr_rpt_fig f;
};

struct mgr_rpt_iv {
    int64_t k;
    double time_s, duration_s;
    char *node; /* "ALL" or a node */
    bool lost, late;
    struct mgr_rpt_fig f;
};

struct mgr_rpt_bucket {
    double low_ns, width_ns, count;
};

struct mgr_rpt_test {
    int idx;
    char *name;         /* spec, or "spec [cycle]": what runs are matched by */
    char *spec, *cycle; /* the parts ("" without a cycle) */
    bool complete, interrupted;
    double start_s;         /* since the run's start */
    double measure_start_s; /* first interval's start (end of the ramp); < 0 unknown */
    struct mgr_rpt_row *rows;
    size_t nrows;
    const struct mgr_rpt_row *all; /* into rows, or NULL */
    struct mgr_rpt_iv *ivs;
    size_t nivs;
    struct mgr_rpt_bucket *hist; /* the ALL row's read+write histogram, ascending */
    size_t nhist;
};

/* An agent as it introduced itself in the run. */
struct mgr_rpt_agent {
    char *name, *hostname, *kernel, *software, *targets; /* targets: "path (size), ..." */
    int64_t cpus, memory_bytes;
};

struct mgr_rpt_run {
    int64_t id;  /* in its store (0 for a file) */
    char *label; /* "run 12", "run 12 (nvme)" or the file name */
    char *plan_name, *tag, *plan, *agents, *version, *source;
    int64_t start_unix_ns;
    bool has_exit;
    int exit_code;
    struct mgr_rpt_test *tests;
    size_t ntests;
    struct mgr_rpt_agent *agentv;
    size_t nagents;
};

/* Loads run `id` of st into r (zeroed first). 0, or an error with diag. */
int mgr_rpt_load(struct mgr_store *st, int64_t id, struct mgr_rpt_run *r, struct iof_diag *diag);
void mgr_rpt_free(struct mgr_rpt_run *r);

/* The report of runs[0..n) on f (one run: a report; more: a comparison). */
int mgr_rpt_html(FILE *f, const struct mgr_rpt_run *runs, size_t n, const char *chartjs,
                 const char *chartjs_version);
int mgr_rpt_md(FILE *f, const struct mgr_rpt_run *runs, size_t n);

/* The comparison of runs[0..n) (n >= 2) as one JSON document, what
 * `iofleet report --format json` writes and GET /api/v1/runs/compare
 * answers (docs/history.md): the runs, what changed in each plan from the
 * first's, and per test (matched by name) each run's figures and their
 * ratios over the first run's. 0, or an error with diag. */
int mgr_rpt_json(struct iof_buf *b, const struct mgr_rpt_run *runs, size_t n,
                 struct iof_diag *diag);

/* The metrics a comparison puts side by side, in their order. */
extern const enum mgr_rpt_metric mgr_rpt_cmp_metrics[];
extern const size_t mgr_rpt_ncmp;

/* A metric's name as a JSON member or column ("iops", "p99_lat_ms"). */
const char *mgr_rpt_metric_key(enum mgr_rpt_metric m);

/* B/A of metric m, and whether B is better (1), worse (-1) or the same
 * within 0.5% (0): more IOPS or MiB/s, less latency is better. false when
 * either figure is missing or A is 0. */
bool mgr_rpt_ratio(const struct mgr_rpt_fig *a, const struct mgr_rpt_fig *b, enum mgr_rpt_metric m,
                   double *r, int *better);

/* Every test name of the runs, in order of first appearance, into *out
 * (new array of borrowed names; NULL and 0 when out of memory). */
size_t mgr_rpt_test_names(const struct mgr_rpt_run *runs, size_t n, const char ***out);

/* The ALL row's figures of t, or NULL (no t, no ALL row). */
const struct mgr_rpt_fig *mgr_rpt_all_fig(const struct mgr_rpt_test *t);

/* Where the figures of row r of test t come from when its status is not
 * ok (mgr_status_note's words, as in --iometer-csv), into buf; "" for ok.
 * Returns buf. */
const char *mgr_rpt_status_note(const struct mgr_rpt_test *t, const struct mgr_rpt_row *r,
                                char *buf, size_t cap);

/* The test of r named name, or NULL. */
const struct mgr_rpt_test *mgr_rpt_find(const struct mgr_rpt_run *r, const char *name);

#endif
