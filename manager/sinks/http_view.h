/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http_view.h - the state of a running `iofleet run` as the live
 * view serves it (manager/sinks/http.c): the loop thread updates it from the
 * sink callbacks, HTTP threads render it (JSON, Prometheus text) under its
 * lock. Every function here takes the lock itself except the renderers,
 * which the caller calls with mgr_view_lock held.
 */
#ifndef IOF_MANAGER_SINKS_HTTP_VIEW_H
#define IOF_MANAGER_SINKS_HTTP_VIEW_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/spec.h"
#include "manager/metrics.h"
#include "manager/sink.h"

enum mgr_view_state { MGR_VIEW_WAITING, MGR_VIEW_RUNNING, MGR_VIEW_DONE };

/* A node's and ALL's figures are those of the last interval published in the
 * run: a test's start does not clear them, so /metrics keeps every series
 * from one test to the next (docs/monitoring.md). */
struct mgr_view_node {
    char name[IOF_NAME_MAX];
    bool up;              /* reported in one of the last two published intervals */
    bool lost;            /* its last test row said partial / lost-before-start */
    uint64_t seen_at;     /* view->published when it last reported */
    bool have;            /* m holds an interval */
    struct mgr_metrics m; /* its last interval */
    /* Counters over the whole run: the sum of its intervals. */
    uint64_t read_ios, write_ios, bytes_read, bytes_written, errors, intervals;
    iof_u128 lat_sum_ns; /* latencies of those read_ios + write_ios */
};

/* A test that ended, kept with its final figures (the ALL row). */
struct mgr_view_test {
    size_t index; /* 1-based */
    char spec[IOF_NAME_MAX], cycle[64];
    enum mgr_test_status status;
    unsigned nodes, lost; /* agents that delivered a result, lost during it */
    struct mgr_metrics all;
};

struct mgr_view {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* broadcast when seq changes or stopping is set (CLOCK_MONOTONIC) */
    uint64_t seq;      /* bumped on every change worth an event */
    bool stopping;     /* the server is shutting down */
    enum mgr_view_state state;
    int exit_code;
    char plan[IOF_NAME_MAX];
    /* Planned seconds (ramp + duration) of every test, and ramps. */
    double *test_s, *ramp_s;
    size_t ntests;
    size_t cur; /* 0-based current (or last) test; meaningful once started */
    bool started;
    char spec[IOF_NAME_MAX], cycle[64];
    uint64_t run_wall_ns, test_wall_ns, end_wall_ns;
    uint64_t published; /* ALL intervals published in the run */
    uint64_t k;         /* the last published interval of the current test */
    bool have_all;
    struct mgr_metrics all; /* the last published ALL interval */
    size_t all_test;        /* 1-based test of that interval, 0 before the first */
    unsigned reported, lost;
    struct mgr_view_node *nodes;
    size_t nnodes, cap;
    struct mgr_view_test *done; /* the tests that ended, in order */
    size_t ndone, capdone;
};

/* What /api/run and the page say of the run at a time, computed once for
 * both (mgr_view_state). */
struct mgr_view_now {
    const char *state;   /* "waiting", "running", "done" */
    char state_text[64]; /* "waiting for agents", "running", "done", "interrupted", ... */
    const char *phase;   /* "ramp", "measure", or "" before the first test and after the run */
    double elapsed_s;    /* since the run began; frozen at its end (-1 before it began) */
    double test_elapsed_s;
    double progress; /* 0..1, -1 unknown */
    double eta_s;    /* planned time left, 0 once the run is over, -1 unknown */
    /* What the figures of the last interval are, when not the current
     * test's: "" or a sentence. */
    char figures[160];
};

/* 0 or -errno. */
int mgr_view_init(struct mgr_view *v);
void mgr_view_destroy(struct mgr_view *v);
void mgr_view_lock(struct mgr_view *v);
void mgr_view_unlock(struct mgr_view *v);

/* Sink events (loop thread). */
void mgr_view_run_begin(struct mgr_view *v, const struct mgr_run_info *ri);
void mgr_view_test_begin(struct mgr_view *v, const struct mgr_test_info *ti);
void mgr_view_interval(struct mgr_view *v, const struct mgr_interval *iv);
void mgr_view_row(struct mgr_view *v, const struct mgr_row *r);
void mgr_view_test_end(struct mgr_view *v, const struct mgr_test_end *te);
void mgr_view_run_end(struct mgr_view *v, int exit_code);
/* Sets stopping and wakes every waiter. */
void mgr_view_stop(struct mgr_view *v);

/* Renderers: lock held; append to b (b->err tells a failure). now_wall_ns
 * is CLOCK_REALTIME, for elapsed time and ETA. */
void mgr_view_json(const struct mgr_view *v, uint64_t now_wall_ns, struct iof_buf *b);
void mgr_view_metrics(const struct mgr_view *v, uint64_t now_wall_ns, struct iof_buf *b);

/* Whole-run progress: planned seconds done (0..total) and left. */
void mgr_view_progress(const struct mgr_view *v, uint64_t now_wall_ns, double *done_s,
                       double *total_s);
/* Lock held: the run's state at now_wall_ns, as every rendering says it. */
void mgr_view_state(const struct mgr_view *v, uint64_t now_wall_ns, struct mgr_view_now *st);
/* Lock held: ALL as a node: its last interval and the run's counters (the
 * sum of the nodes'). */
void mgr_view_all(const struct mgr_view *v, struct mgr_view_node *all);
/* The first of the ended tests a rendering lists (the last
 * MGR_VIEW_DONE_SHOWN of them). */
#define MGR_VIEW_DONE_SHOWN 500
size_t mgr_view_done_first(const struct mgr_view *v);

#endif
