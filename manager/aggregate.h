/* SPDX-License-Identifier: Apache-2.0 */
/* manager/aggregate.h - the figures of one test as they arrive: the window of
 * intervals merged across nodes (published when every live node reported or
 * when their deadline passed), what each node's intervals added up to (so a
 * node lost before its result keeps its measured I/O), and the final rows
 * (ALL, NODE, WORKER, TARGET), each row's metrics computed once and handed
 * to every result sink (manager/sink.h) and to the table on stdout.
 *
 * Loop thread only. The plan, the tests and the sinks are borrowed for the
 * life of the aggregate; a node's name is borrowed while the node exists.
 */
#ifndef IOF_MANAGER_AGGREGATE_H
#define IOF_MANAGER_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/ratecycle.h"
#include "common/spec.h"
#include "common/stats.h"
#include "manager/console.h"
#include "manager/sink.h"
#include "proto/msg.h"

#define MGR_AGG_WINDOW 16 /* intervals held open at once */

/* One interval of the cluster while nodes report it. */
/* The CPU figures of the nodes that measured them, summed: `nodes` of
 * them, `with_node` of those with the node figures (protocol 1.6). */
struct mgr_agg_cpu {
    struct proto_cpu sum;
    unsigned nodes, with_node;
};

/* Adds a node's CPU figures (c measured) to a. */
void mgr_agg_cpu_add(struct mgr_agg_cpu *a, const struct proto_cpu *c);
/* The one rule for the CPU of ALL (rows and intervals; every result file
 * shows it): the mean over the nodes that measured it, invalid when none
 * did; its node figures are the means too, known only when every one of
 * those nodes had them (a mean of some nodes would pass for all of them). */
struct proto_cpu mgr_agg_cpu_mean(const struct mgr_agg_cpu *a);

struct mgr_agg_interval {
    uint64_t k;
    bool open;
    unsigned reported;
    unsigned lost;           /* nodes whose interval was lost (not in sum) */
    uint64_t cut_ns;         /* the longest real length reported (shorter: cut) */
    bool cut;                /* some node's report was cut short by a stop */
    uint64_t last_report_ns; /* when the last node's stats for k arrived */
    struct mgr_agg_cpu cpu;  /* CPU of the reporting nodes that measured it */
    struct iof_stats sum;
};

/* One final row of a node as the table shows it. */
struct mgr_agg_row {
    enum mgr_row_type type;
    char *label; /* "node/w0:/path", "node/w0", "node" (owned) */
    struct mgr_metrics m;
};

/* What a node is in the current test's results. */
enum mgr_agg_role {
    MGR_AGG_NONE,    /* not in this test */
    MGR_AGG_IN_TEST, /* takes part: no result yet (none at all when it failed without
                      * an interval) */
    MGR_AGG_RESULT,  /* delivered its result */
    MGR_AGG_LOST,    /* lost during the test: rows from the intervals that arrived */
    MGR_AGG_ABSENT,  /* an agent of the run that was not in the test */
};

/* One node's part of the current test. Zero-initialised is empty. */
struct mgr_agg_node {
    const char *name; /* borrowed */
    enum mgr_agg_role role;
    enum mgr_row_status status; /* of its rows */
    char why[512];              /* LOST, ABSENT: the reason, for the table */
    /* The intervals as they arrived: the node's sum (with histograms) and
     * each target's counters. */
    struct iof_counts acc_node;
    struct iof_hist_span acc_lat[2]; /* read and write latencies merged: the buckets
                                      * they span, not 39 KiB, per node */
    struct iof_counts *tacc;
    size_t ntacc;
    uint64_t acc_ns;     /* total length of the kept intervals */
    uint64_t acc_end_ns; /* end of the last interval that arrived, from the window start */
    uint64_t acc_n;      /* intervals that arrived (lost ones included) */
    /* The last shape mgr_agg_check_shape accepted: for test shape_test - 1
     * (0: none), shape_nw workers with these numbers of targets. */
    size_t shape_test, shape_nw, *shape_nt;
    /* From its result (RESULT). */
    struct proto_cpu cpu;
    uint64_t measured_ns;
    uint64_t started_first, started_last; /* manager clock, 0 unknown */
    uint64_t errors;
    /* Its rows in the current test: TARGETs of a worker, then the WORKER,
     * ..., then NODE last. */
    struct mgr_agg_row *rows;
    size_t nrows, caprows;
    /* Where its targets live (from its last preparation); for TARGET rows. */
    struct mgr_place *places;
    size_t nplaces;
};

/* Called once per published interval for the live line. */
struct mgr_agg_hooks {
    unsigned (*live)(void *arg);    /* agents taking part */
    unsigned (*members)(void *arg); /* agents of the run */
    void *arg;
};

struct mgr_agg {
    const struct iof_plan *p;
    const struct iof_test *tests;
    size_t ntests, cur;
    struct mgr_sink *const *sinks;
    size_t nsinks;
    struct mgr_live *live;
    struct mgr_agg_hooks hooks;
    bool verbose;
    struct iof_run_cfg run; /* the current test's timing */
    uint64_t run_mono_ns, measure_start;
    struct mgr_test_info ti; /* the current test, for the sinks */
    char cycle[64];
    char spec_label[2 * IOF_NAME_MAX]; /* what the current test runs (iof_test_spec_label) */
    struct mgr_agg_interval win[MGR_AGG_WINDOW];
    uint64_t next_publish;
    struct iof_stats all; /* the current test's cluster totals */
    /* The lateness of the current test's rated I/Os, merged from the nodes'
     * results (one histogram per test, not per node; each NODE row keeps
     * its figures), and whether any result carried one. */
    struct iof_hist late_all;
    uint64_t late_all_over;
    bool late_any;
    uint32_t all_nodes, all_workers, all_targets;
    /* Per plan group, the current test's totals over every node (GROUP
     * rows): its workers' figures and the entities below. */
    struct mgr_agg_group {
        struct iof_stats stats;
        uint32_t nodes, workers, targets;
        const struct mgr_agg_node *last; /* the node last counted in `nodes` */
        bool lost; /* a node running the group was lost in the test (partial or
                    * lost before its first interval) */
    } * groups;
    struct mgr_metrics last_all; /* the ALL row of the last test that ended */
    bool interrupted;            /* the run was interrupted (mgr_agg_interrupt) */
    /* The table's rows besides ALL and NODE (MGR_TABLE_ROWS_*; set after
     * mgr_agg_init, default none), and whether the line saying how to see
     * the others was printed (once a run). */
    unsigned rows;
    bool rows_hinted;
    bool test_failed;           /* the current test had I/O, verify or test errors */
    struct mgr_summary summary; /* every test that ended, for the run's summary */
};

/* The run was interrupted: intervals cut short from now on are marked so. */
void mgr_agg_interrupt(struct mgr_agg *g);

/* Sets up g for a run (everything borrowed). */
void mgr_agg_init(struct mgr_agg *g, const struct iof_plan *p, const struct iof_test *tests,
                  size_t ntests, struct mgr_sink *const *sinks, size_t nsinks,
                  struct mgr_live *live, const struct mgr_agg_hooks *hooks, bool verbose,
                  uint64_t run_mono_ns);
void mgr_agg_free(struct mgr_agg *g);

/* Test cur begins with its timing run (iof_test_run; copied), measuring
 * from measure_start (manager clock): the window and the totals are cleared
 * and the sinks told. */
void mgr_agg_test_begin(struct mgr_agg *g, size_t cur, const struct iof_run_cfg *run,
                        uint64_t measure_start);

/* Worker w of node `name` in the current test: its group as it runs (and
 * its index in the plan in *gi when gi is not NULL); groups idle in the
 * test have no workers. */
bool mgr_agg_worker_group(const struct mgr_agg *g, const char *name, size_t w,
                          struct iof_worker_cfg *out, size_t *gi);

/* A node's stats for the current test. Returns 0, or IOF_EPROTO with diag
 * saying why (a shape the plan does not give the node, an interval the test
 * has not): the caller drops the node. */
int mgr_agg_stats(struct mgr_agg *g, struct mgr_agg_node *n, const struct proto_stats *st,
                  struct iof_diag *diag);
/* Checks that st has the workers and targets the plan gives node n. */
int mgr_agg_check_shape(const struct mgr_agg *g, struct mgr_agg_node *n,
                        const struct proto_stats *st, struct iof_diag *diag);

/* Publishes, in order, every interval all `expect` live nodes have reported,
 * and (force, or its deadline passed) every one still open; the test's last
 * interval has no deadline: only force publishes it short of a node. */
void mgr_agg_publish_ready(struct mgr_agg *g, unsigned expect, bool force);

/* The node's rows from its result (checked with mgr_agg_check_shape): its
 * start times already on the manager clock. Logs target I/O errors and the
 * test error the result carries; returns true when it had any. */
bool mgr_agg_result(struct mgr_agg *g, struct mgr_agg_node *n, const struct proto_stats *st,
                    uint64_t started_first, uint64_t started_last);
/* Node n was lost during the test before its result (why: the reason, for
 * the table). */
void mgr_agg_mark_lost(struct mgr_agg_node *n, const char *why);
/* The rows of a node marked lost: partial (from the intervals that arrived)
 * or lost-before-start. Returns true when they hold I/O errors. */
bool mgr_agg_lost(struct mgr_agg *g, struct mgr_agg_node *n);
/* The NODE row of an agent of the run not in the test. */
void mgr_agg_absent(struct mgr_agg *g, struct mgr_agg_node *n, const char *why);

/* The node takes part in the test about to start: what was kept of the
 * last one is forgotten. */
void mgr_agg_node_take_part(struct mgr_agg_node *n);
/* Not in any test (yet): a new test is set up (rows stay until replaced). */
void mgr_agg_node_clear_role(struct mgr_agg_node *n);
void mgr_agg_node_free(struct mgr_agg_node *n);
/* Replaces the node's places with (copies of) those of its prepared
 * message; entries naming no target of the plan are dropped. */
void mgr_agg_node_places(struct mgr_agg *g, struct mgr_agg_node *n,
                         const struct proto_prepared *pr);
/* Where `path` of node n lives, NULL when unknown. */
const struct mgr_place *mgr_agg_node_place(const struct mgr_agg_node *n, const char *path);

/* The end of the current test: prints the table (nodes in agent order) and
 * hands the ALL row to the sinks. measured_ns: the ALL row's window. */
struct mgr_agg_end {
    struct mgr_agg_node *const *nodes;
    size_t nnodes;
    uint64_t measured_ns;
    bool interrupted;
};
void mgr_agg_test_end(struct mgr_agg *g, const struct mgr_agg_end *e);

/* A find_max search of the current test's spec is over: hands its answer
 * (headline: the one-line text) to the sinks that keep it. */
void mgr_agg_headline(struct mgr_agg *g, const struct iof_knee *k, const char *headline);

#endif
