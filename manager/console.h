/* SPDX-License-Identifier: Apache-2.0 */
/* manager/console.h - the human-readable output of `iofleet run` on the
 * terminal: live lines and final tables. */
#ifndef IOF_MANAGER_CONSOLE_H
#define IOF_MANAGER_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "common/spec.h"
#include "common/stats.h"
#include "manager/metrics.h"
#include "manager/sink.h"

/* Live line for one interval, on stderr; redrawn in place on a TTY, where
 * it fits the terminal's width (the least needed figures left out first). */
struct mgr_live {
    bool tty;
    bool utf8; /* latencies in µs, else us (manager/term.h) */
    bool quiet;
    bool dirty;              /* a redrawn line is on screen */
    unsigned long ramp_left; /* whole seconds of ramp the ramp line shows left */
    /* The run's tests (borrowed), for the whole run's ETA; NULL: none shown. */
    const struct iof_plan *plan;
    const struct iof_test *tests;
    size_t ntests;
};
void mgr_live_init(struct mgr_live *l, bool quiet);
/* Gives the live line the run's tests (borrowed until the run ends), so it
 * shows the whole run's ETA: the planned ramp + duration left. */
void mgr_live_plan(struct mgr_live *l, const struct iof_plan *p, const struct iof_test *tests,
                   size_t ntests);
/* A line as test `test` (1-based) starts ramping for ramp_s seconds. */
void mgr_live_ramp(struct mgr_live *l, unsigned test, unsigned ntests, double ramp_s);
/* During the ramp (left_s of ramp_s to go): on a terminal, the ramp line
 * counts down once a second; otherwise nothing. */
void mgr_live_ramp_tick(struct mgr_live *l, unsigned test, unsigned ntests, double ramp_s,
                        double left_s);
/* The line of one interval ending elapsed_s into the test's total_s of
 * measurement; `last`: the test's last interval (the line says so, and the
 * test adds nothing more to the ETA). */
void mgr_live_line(struct mgr_live *l, const char *phase, unsigned test, unsigned ntests,
                   double elapsed_s, double total_s, bool last, const struct mgr_metrics *m,
                   unsigned alive, unsigned total);
/* The connect phase's wait: `ready` of `total` agents connected, `who` (an
 * endpoint) not yet because of `why`, `more` others not either, `left_s`
 * to wait. Redrawn in place on a terminal, a plain line otherwise; the
 * caller calls it once a second. */
void mgr_live_wait(struct mgr_live *l, unsigned ready, unsigned total, const char *who,
                   const char *why, unsigned more, double left_s);
/* Ends a redrawn line so normal output can follow. */
void mgr_live_done(struct mgr_live *l);

/* Final table: mgr_table_init, the header, rows one by one, mgr_table_end.
 * On a terminal (width > 0) it fits the width: p50, p99.9 and the
 * read/write split are left out, then names longer than 24 are cut in the
 * middle, then max, MiB/s and p99 go, then names down to 8 (IOPS, avg and
 * errors always stay), and mgr_table_end
 * says what was left out and where the full rows are. width 0 (not a
 * terminal): every column, as scripts read it. Latencies carry their units
 * (manager/term.h). docs/results.md, "The terminal". */
struct mgr_table {
    FILE *f;           /* borrowed */
    unsigned width;    /* columns to fit; 0: no limit */
    unsigned rows;     /* MGR_TABLE_ROWS_*: the rows shown besides ALL and NODE */
    bool utf8;         /* "µs", else "us" */
    size_t name_len;   /* the longest name to print */
    size_t name_w;     /* the name column's width */
    unsigned shown;    /* the columns shown, a bit each */
    const char *files; /* borrowed: the result files, comma separated; NULL: none */
};
/* name_len: the longest name the rows will have (bytes). */
void mgr_table_init(struct mgr_table *t, FILE *f, unsigned width, bool utf8, size_t name_len,
                    const char *files);
void mgr_table_header(struct mgr_table *t, unsigned test, unsigned ntests, const char *spec,
                      const char *cycle, double seconds, const char *note);
void mgr_table_row(struct mgr_table *t, const char *row_type, const char *name,
                   const struct mgr_metrics *m);
/* The line saying which columns were left out (nothing when none were). */
void mgr_table_end(struct mgr_table *t);

/* The rows the final table shows besides ALL and NODE (`iofleet run --rows
 * LIST`), a bit each; the result files keep every row whatever this says. */
enum {
    MGR_TABLE_ROWS_GROUP = 1u << 0,
    MGR_TABLE_ROWS_WORKER = 1u << 1,
    MGR_TABLE_ROWS_TARGET = 1u << 2,
    MGR_TABLE_ROWS_ALL = (1u << 3) - 1,
};
/* The terminal's default: ALL and NODE only. */
#define MGR_TABLE_ROWS_DEFAULT 0u
/* Parses LIST, comma separated: group, worker, target, or all (every row).
 * Returns 0, or -EINVAL with diag naming the word and the words accepted. */
int mgr_table_rows_parse(const char *list, unsigned *rows, struct iof_diag *diag);
/* One line under a table saying which row types (`hidden`, MGR_TABLE_ROWS_*
 * bits) it left out and how to see them: --rows, or t->files. */
void mgr_table_rows_hint(const struct mgr_table *t, unsigned hidden);

/* A fleet's final table: above MGR_TABLE_MAX_NODES nodes or
 * MGR_TABLE_MAX_ROWS rows below ALL as t->rows selects them (NODE, and
 * WORKER, TARGET when shown), the terminal shows ALL, then
 * only the MGR_TABLE_EXTREMES slowest and fastest nodes by IOPS (all nodes
 * when they fit), says how many nodes and rows it hides and which result
 * files hold every row (docs/results.md, "A fleet's table"). */
#define MGR_TABLE_MAX_NODES 32
#define MGR_TABLE_MAX_ROWS 200
#define MGR_TABLE_EXTREMES 5
struct mgr_table_node {
    const char *name; /* as the NODE row names it (status included) */
    const struct mgr_metrics *m;
};
/* True when nnodes nodes with nrows rows (NODE, and the WORKER and TARGET
 * rows shown) are printed in full. */
bool mgr_table_fits(size_t nnodes, size_t nrows);
/* The summary of n nodes (nrows rows in all) in place of their rows,
 * naming t->files as where every row is. Returns the number of nodes
 * shown, or -1 out of memory (then none). */
int mgr_table_summary(struct mgr_table *t, const struct mgr_table_node *nodes, size_t n,
                      size_t nrows);

/* The run's summary: one line per test that ended (its ALL row), printed
 * after the last test of a run of several, on stdout like the tables
 * (docs/results.md, "The run's summary"). */
struct mgr_summary_test {
    unsigned test; /* 1-based */
    char *name;    /* "spec  [cycle]" (owned) */
    struct mgr_metrics m;
    double read_p99_ms, write_p99_ms; /* < 0: unknown (no such I/O, no buckets) */
    enum mgr_test_status status;
};
struct mgr_summary {
    struct mgr_summary_test *tests;
    size_t n, cap;
};
/* Adds a test (spec and cycle copied). 0, or -ENOMEM (then the summary
 * lacks it). */
int mgr_summary_add(struct mgr_summary *s, unsigned test, const char *spec, const char *cycle,
                    const struct mgr_metrics *m, double read_p99_ms, double write_p99_ms,
                    enum mgr_test_status status);
/* Prints the summary to f, fitted to `width` columns (0: no limit, every
 * column and whole names), and, when fewer than `planned` tests ran, says
 * so. Nothing when s is empty. */
void mgr_summary_print(const struct mgr_summary *s, FILE *f, unsigned width, bool utf8,
                       size_t planned);
void mgr_summary_free(struct mgr_summary *s);

#endif
