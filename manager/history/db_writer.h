/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/db_writer.h - the run history's writer thread (manager/history/db_writer.c)
 * and the records the loop hands it (manager/sinks/db.c makes them): each
 * event of a run with its figures copied, so the writer needs nothing of
 * the loop's but the plan text and the agents' infos of run_begin, which
 * stay valid until run_end: the sink's run_end waits for the writer to
 * finish every record.
 */
#ifndef IOF_MANAGER_HISTORY_DB_WRITER_H
#define IOF_MANAGER_HISTORY_DB_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "common/err.h"
#include "common/hist.h"
#include "manager/history/db_queue.h"
#include "manager/sink.h"
#include "manager/history/store.h"

enum mgr_dbw_kind {
    MGR_DBW_RUN,
    MGR_DBW_TEST,
    MGR_DBW_INTERVAL,
    MGR_DBW_ROW,
    MGR_DBW_END,
    MGR_DBW_RUN_END,
    MGR_DBW_FLUSH
};

/* A latency histogram as the writer needs it: its summary, and (buckets)
 * its buckets in the run form of iof_hist_encode_runs, in the record's
 * tail at off. */
struct mgr_dbw_hist {
    uint64_t count;
    iof_u128 sum_ns;
    uint64_t min_ns, max_ns;
    bool buckets;
    uint32_t off, len;
};

/* The figures of an interval or a row, copied on the loop. */
struct mgr_dbw_fig {
    struct mgr_metrics m;
    struct mgr_dbw_hist rd, wr;
    bool known;   /* counts and rates known (false: a lost interval) */
    bool latency; /* the latency object is stored (else NULL) */
    bool cpu_valid;
    double cpu_pct;
    /* Schema 3 (MGR_STORE_MORE): the rest of what the result files print */
    uint64_t ns; /* the row's or interval's window */
    bool interrupted;
    uint64_t rd_errors, wr_errors, verify_errors, verify_bad_reads, verify_overlaid;
    int first_error;
    uint64_t first_error_offset;
    uint64_t svc_ios;     /* rated I/Os with a service latency */
    struct proto_cpu cpu; /* valid false: unknown */
};

struct mgr_dbw_row {
    enum mgr_row_type type;
    enum mgr_row_status status;
    const char *node, *worker, *target; /* in the tail, NULL where they do not apply */
    uint32_t queue_depth, nodes, workers, targets;
    uint64_t window_start_ns, window_end_ns;
    /* Schema 3 (MGR_STORE_ROW_MORE), in the tail, NULL where they do not apply */
    const char *group, *device, *fstype;
    uint64_t range_offset, range_size;
    int ram_backed;            /* 1, 0, -1 unknown, -2 no place */
    const unsigned char *cpus; /* ncpus x MGR_STORE_CPU_BYTES */
    size_t ncpus;
};

/* One event for the writer, allocated as one block with its tail (names,
 * histograms). Borrowed pointers (MGR_DBW_RUN) stay valid until the sink's
 * run_end, which waits for the writer. */
struct mgr_dbw_rec {
    struct mgr_dbq_item q;
    enum mgr_dbw_kind kind;
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
            double rate_frac, rate_target; /* the test's (struct iof_test) */
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
    struct mgr_dbw_row row; /* MGR_DBW_ROW, and MGR_DBW_END's ALL row */
    struct mgr_dbw_fig fig; /* MGR_DBW_INTERVAL, MGR_DBW_ROW, MGR_DBW_END's ALL row */
    unsigned char tail[];
};

enum mgr_dbw_stmt { MGR_DBW_STMT_INTERVAL, MGR_DBW_STMT_ROW, MGR_DBW_NSTMT };

/* The writer's state: the loop fills it before the thread starts and reads
 * it after the join; between the two only the writer touches it. */
struct mgr_dbw {
    struct mgr_store *st; /* borrowed from the sink */
    const char *tag;      /* borrowed, may be NULL */
    int64_t run_id;
    struct mgr_dbq *queue;
    sqlite3_stmt *stmt[MGR_DBW_NSTMT];
    int64_t test_id; /* the running test, 0 when none */
    int64_t row_seq, iv_seq;
    bool ended;
    unsigned batch; /* intervals and rows in the open transaction; 0: none open */
    int error;      /* the first failure (-EIO), first_error says what */
    char first_error[256];
    uint64_t written;       /* intervals and rows inserted */
    int64_t synced_changes; /* sqlite3_total_changes at the last db_sync */
    uint64_t cpu_ns;        /* the writer thread's CPU time */
};

/* Prepares the statements kept for the whole run on st. 0, or -EIO with
 * diag "PATH: REASON". */
int mgr_dbw_init(struct mgr_dbw *w, struct mgr_store *st, struct iof_diag *diag);
/* Finalizes them (after the join); accepts a zeroed w. */
void mgr_dbw_fini(struct mgr_dbw *w);

/* The thread's function (arg: the struct mgr_dbw): applies every record of
 * w->queue in order, freeing each, until the queue is closed and empty;
 * commits what is open and returns NULL. */
void *mgr_dbw_main(void *arg);

#endif
