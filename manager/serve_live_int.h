/* SPDX-License-Identifier: Apache-2.0 */
/* manager/serve_live_int.h - the inside of manager/serve_live.h's state,
 * shared by its recorder and stream (serve_live.c) and the console page
 * that renders it (console_page.c). Every field is guarded by mu.
 */
#ifndef IOF_MANAGER_SERVE_LIVE_INT_H
#define IOF_MANAGER_SERVE_LIVE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/spec.h"
#include "manager/serve_live.h"
#include "manager/sink.h"

/* Figures of one interval or one final row; NAN: unknown. */
enum {
    LF_IOPS,
    LF_READ_IOPS,
    LF_WRITE_IOPS,
    LF_MIBPS,
    LF_READ_MIBPS,
    LF_WRITE_MIBPS,
    LF_AVG_MS,
    LF_READ_AVG_MS,
    LF_WRITE_AVG_MS,
    LF_P99_MS,
    LF_READ_P99_MS,
    LF_WRITE_P99_MS,
    LF_N
};

struct live_figs {
    double v[LF_N];
};

/* One interval of ALL (node 0) or of node i (node i + 1). */
struct live_point {
    uint32_t node;
    uint32_t test; /* 1-based */
    uint64_t k;
    double t; /* end of the interval, seconds since the run began */
    struct live_figs f;
};

/* A NODE row of an ended test. */
struct live_row {
    uint32_t node; /* as in struct live_point */
    enum mgr_row_status status;
    struct live_figs f;
};

struct live_spec {
    char spec[IOF_NAME_MAX], cycle[64];
};

struct live_test {
    size_t index; /* 1-based */
    char spec[IOF_NAME_MAX], cycle[64];
    enum mgr_test_status status;
    unsigned nodes, lost;
    struct live_figs all;
    struct live_row *rows;
    size_t nrows, caprows;
};

enum live_ev_type { LEV_AGENTS, LEV_RUN, LEV_INTERVAL, LEV_TEST, LEV_END };

struct live_ev {
    enum live_ev_type type;
    int64_t run;
    uint64_t pt_first; /* INTERVAL: its points (absolute indices) */
    uint32_t npt;
    size_t test; /* TEST: 0-based in tests */
    int exit_code;
};

struct mgr_serve_live {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* broadcast on every event and at close (CLOCK_MONOTONIC) */
    bool closed;
    uint64_t seq; /* the last event's; 0 before the first */
    struct live_ev ev[MGR_LIVE_EVENTS];
    uint64_t skipped;
    char *agents; /* GET /api/v1/agents, and the page's fleet rows */
    size_t agents_len;
    char *agents_html;
    char *chartjs; /* Chart.js for the page, NULL without it */
    size_t chartjs_len;
    char chartjs_version[32];
    /* The last run; id 0 before the first began. */
    int64_t id;
    char plan[IOF_NAME_MAX];
    bool running, stopping;
    int exit_code;
    uint64_t start_wall_ns, end_wall_ns;
    size_t ntests;
    size_t cur; /* 1-based current (or last) test, 0 before the first */
    char spec[IOF_NAME_MAX], cycle[64];
    struct live_spec *specs; /* each test begun: its spec and cycle */
    size_t nspecs, capspecs;
    char (*names)[IOF_NAME_MAX]; /* its nodes, in the order they appeared */
    size_t nnames, capnames;
    struct live_point *pts; /* a ring of MGR_LIVE_POINTS */
    uint64_t npts;          /* points ever recorded */
    uint64_t run_pt0;       /* the run's first point */
    uint64_t pending;       /* the first point not in an interval event yet */
    struct live_test *tests;
    size_t ndone, capdone;
    struct live_test row_test; /* the rows of the test ending */
};

extern const char *const mgr_live_fig_names[LF_N];

/* Lock held: the JSON of GET /api/v1/runs/last into b. */
void mgr_live_json_run(struct iof_buf *b, const struct mgr_serve_live *l);

#endif
