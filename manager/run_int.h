/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run_int.h - internal to the run (manager/run*.c): the phases, the
 * run's structure and the calls its files make into each other (mgr_run_*
 * besides the ones of manager/run.h: internal, never called from outside the
 * run). Not for other modules: they use manager/run.h.
 * Each agent's connection reports to the run through callbacks
 * (manager/agent_conn.h), and its state is a session (manager/session.c);
 * the run makes every cross-agent and phase decision, admission included.
 * The figures of a test are the aggregate's (manager/aggregate.c).
 */
#ifndef IOF_MANAGER_RUN_INT_H
#define IOF_MANAGER_RUN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/spec.h"
#include "common/tls.h"
#include "proto/msg.h"
#include "manager/agent_conn.h"
#include "manager/aggregate.h"
#include "manager/console.h"
#include "manager/run.h"
#include "manager/sink.h"

#define MGR_RUN_SETUP_WAIT_S 60 /* for every agent's test set-up (and clock probes) */

enum mgr_run_phase {
    MGR_PH_CONNECT,
    MGR_PH_PREPARE,
    MGR_PH_CLOCK,
    MGR_PH_RUN,
    MGR_PH_DONE,
};

struct mgr_run {
    uv_loop_t *loop;
    const struct iof_plan *p;
    const char *plan_text;
    char *wire_text; /* plan_text as agents receive it (proto_plan_wire_text), owned */
    const struct mgr_run_opts *o;
    struct mgr_run_env env;
    struct mgr_fleet *f;  /* the agents, and what their connections need: own or borrowed */
    struct mgr_fleet own; /* f when the run has agents of its own */
    /* A borrowed fleet's callbacks and stage, handed back at the end. */
    struct mgr_fleet lent;
    unsigned closing; /* handles of the run still closing (cl_close_handle) */
    bool completed;   /* done called */
    unsigned expect;
    struct iof_listener *listener;
    struct iof_tls_ctx *tls_server; /* for --listen */
    enum mgr_run_phase phase;
    int rc;
    uv_timer_t tick;
    unsigned live_cache; /* mgr_run_live(), refreshed on every change of the agent set */
    uv_signal_t sigint, sigterm;
    uv_signal_t sigtstp;     /* the embedded agent's run only: cl_on_stop */
    uint64_t deadline;       /* of the current phase */
    unsigned long wait_left; /* whole seconds of the connect wait the wait line shows left */
    unsigned wait_told;      /* agents named as waited for (a fleet's first few only) */
    struct iof_test *tests;
    size_t ntests, cur;
    struct iof_run_cfg run; /* the current test's timing (iof_test_run) */
    bool ended_early;       /* an agent's workers all reached their io_limit */
    /* An agent refused the current test's setup: the test is still run (and
     * reported, with no results when no agent is left), as a refused start
     * is. */
    bool setup_refused;
    uint64_t start_at, measure_start, end;
    struct mgr_agg agg;
    struct iof_knee knee; /* find_max: the current spec's search */
    double next_frac;     /* find_max: what the next step offers */
    struct mgr_live live;
    uint64_t run_wall_ns, run_mono_ns;
    struct mgr_agent_info *infos;
    /* embedded agent */
    uv_process_t child;
    bool child_running;
    uv_timer_t child_kill; /* SIGTERM if it has not ended this long after the run */
    bool child_kill_on;    /* child_kill is open */
    bool embedded;
};

static inline struct mgr_run *mgr_run_of(const struct mgr_agent *a)
{
    return a->f->run;
}

/* Runs CALL once per result sink of the run, the sink as s_. */
#define MGR_RUN_SINKS(c, call)                                                                     \
    do {                                                                                           \
        for (size_t si_ = 0; si_ < (c)->o->nsinks; si_++) {                                        \
            struct mgr_sink *s_ = (c)->o->sinks[si_];                                              \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

/* run.c: the run object */
void mgr_run_set_phase(struct mgr_run *c, enum mgr_run_phase ph);
uint64_t mgr_run_result_grace_ns(void);
void mgr_run_finish(struct mgr_run *c);

/* run_phase.c: the phases */
void mgr_run_send_all(struct mgr_run *c, const struct proto_msg *m);
void mgr_run_end_test(struct mgr_run *c);
void mgr_run_check_results(struct mgr_run *c);
void mgr_run_start_test(struct mgr_run *c);
void mgr_run_on_clock_reply(void *run, struct mgr_agent *a, const struct proto_clock_reply *r);
void mgr_run_on_ready(void *run, struct mgr_agent *a, const struct proto_ready *r);
void mgr_run_check_prepared(struct mgr_run *c);
void mgr_run_begin(struct mgr_run *c);
void mgr_run_check_connected(struct mgr_run *c);
void mgr_run_progress(struct mgr_run *c);

/* run_test.c: a test's figures and decisions */
void mgr_run_sinks_run_begin(struct mgr_run *c);
bool mgr_run_part(const struct mgr_run *c, const struct mgr_agent *a);
unsigned mgr_run_live(const struct mgr_run *c);
unsigned mgr_run_live_hook(void *arg);
unsigned mgr_run_members_hook(void *arg);
void mgr_run_publish_ready(struct mgr_run *c, bool force);
void mgr_run_on_stats(void *run, struct mgr_agent *a, const struct proto_stats *st);
void mgr_run_on_verify_progress(void *run, struct mgr_agent *a,
                                const struct proto_prepare_progress *p);
void mgr_run_take_result(struct mgr_run *c, struct mgr_agent *a, const struct proto_stats *st);
void mgr_run_rate_plan(struct mgr_run *c);
void mgr_run_rate_after(struct mgr_run *c);
bool mgr_run_rate_agent_ok(struct mgr_agent *a);
bool mgr_run_absent(const struct mgr_run *c, const struct mgr_agent *a);

/* run_agents.c: the agents and their reports */
unsigned mgr_run_count_up(const struct mgr_run *c);
unsigned mgr_run_count_failed(const struct mgr_run *c);
bool mgr_run_enough(const struct mgr_run *c, unsigned ready);
void mgr_run_leave_out(struct mgr_run *c, unsigned ready);
extern const struct mgr_agent_ops mgr_run_agent_ops;

#endif
