/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run.h - what manager/cluster.c (the phases of a run) and
 * manager/session.c (each agent's session) share of a run: the run and
 * agent structures and the calls each side makes into the other. Internal
 * to the manager; loop thread only.
 */
#ifndef IOF_MANAGER_RUN_H
#define IOF_MANAGER_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/net.h"
#include "common/ratecycle.h"
#include "common/spec.h"
#include "common/tls.h"
#include "manager/aggregate.h"
#include "manager/cluster.h"
#include "manager/report.h"
#include "manager/session.h"
#include "proto/link.h"
#include "proto/msg.h"

enum mgr_run_phase {
    MGR_PH_CONNECT,
    MGR_PH_PREPARE,
    MGR_PH_CLOCK,
    MGR_PH_RUN,
    MGR_PH_DONE,
};

struct mgr_agent {
    struct mgr_run *c;
    struct mgr_session s; /* its state (manager/session.h) */
    char endpoint[256];
    char name[PROTO_NAME_MAX + 1];
    char host[PROTO_NAME_MAX + 1]; /* what to dial (MGR_SESSION_DIALLED) */
    uint16_t port;
    const char *unix_path; /* --agent unix:PATH (borrowed from the options), else NULL */
    struct proto_link *link;
    struct proto_hello info; /* the agent's hello, kept for the result files */
    char why[512];
    /* The connect phase's wait for a dialled agent that does not answer:
     * told (the user was told at once who is waited for and why), left out
     * (--min-agents: the run went on without it). */
    bool wait_told, left_out;
    uint64_t best_rtt;
    int64_t offset; /* agent clock - manager clock */
    unsigned probes;
    struct mgr_agg_node agg; /* its figures in the current test */
    uv_timer_t retry;
    /* A rate cycle: the IOPS each of its workers did in the spec's
     * unthrottled step (result order), and the rates sent for this test. */
    double *base_iops, *rates;
    size_t nbase, nrates;
};

struct mgr_run {
    uv_loop_t *loop;
    const struct iof_plan *p;
    const char *plan_text;
    char *wire_text; /* plan_text as agents receive it (proto_plan_wire_text), owned */
    const struct mgr_run_opts *o;
    struct mgr_agent *agents;
    size_t nagents, capagents;
    unsigned expect;
    struct iof_listener *listener;
    struct iof_tls_ctx *tls_client; /* for --agent; NULL: plain TCP */
    struct iof_tls_ctx *tls_server; /* for --listen */
    enum mgr_run_phase phase;
    int rc;
    uv_timer_t tick;
    unsigned live_cache;            /* cl_live(), refreshed on every change of the agent set */
    struct mgr_session_tally tally; /* every agent's session, counted by state */
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

static inline enum mgr_session_state mgr_agent_state(const struct mgr_agent *a)
{
    return a->s.state;
}

static inline void mgr_agent_fire(struct mgr_agent *a, enum mgr_session_event ev)
{
    (void)mgr_session_fire(&a->s, ev);
}

static inline bool mgr_agent_dialled(const struct mgr_agent *a)
{
    return a->s.origin == MGR_SESSION_DIALLED;
}

/* On its way back into the run: a lost dialled agent being dialled again,
 * or an agent accepted after the start (only a lost one may come back). */
static inline bool mgr_agent_coming_back(const struct mgr_agent *a)
{
    return mgr_session_connecting(mgr_agent_state(a)) &&
           ((mgr_agent_dialled(a) && a->s.member) || a->s.origin == MGR_SESSION_RETURNED);
}

/* Lost mid-run (and perhaps being dialled again). */
static inline bool mgr_agent_lost(const struct mgr_agent *a)
{
    return mgr_agent_state(a) == MGR_SESSION_LOST || mgr_agent_state(a) == MGR_SESSION_REJOINING;
}

/* --- manager/session.c: agent sessions ---------------------------------------------- */

/* Drops agent a: ev is MGR_SESSION_EV_LOST (vanished, or broke the protocol,
 * mid-run) or MGR_SESSION_EV_FAIL (refused, errored); logs why, raises the
 * run's exit code to at least rc and closes its link. A no-op for an agent
 * already lost, failed or gone. */
void mgr_agent_fail(struct mgr_agent *a, enum mgr_session_event ev, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An accepted connection that is not behaving like an agent before its
 * hello: logged and closed, it takes no part and costs the run nothing. */
void mgr_agent_drop_stray(struct mgr_agent *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A new agent slot (or a reused one of a connection that was not an agent);
 * NULL when all are taken. */
struct mgr_agent *mgr_agent_add(struct mgr_run *c, const char *endpoint);
/* Dials a (--agent). */
void mgr_agent_dial(struct mgr_agent *a);
/* The listener's callbacks (--listen). */
void mgr_agent_on_accept(struct iof_listener *l, struct iof_conn *conn, void *arg);
void mgr_agent_on_reject(struct iof_listener *l, struct iof_conn *conn, int err, void *arg);
/* Starts the embedded agent on a socketpair and adds it. 0 or an error (logged). */
int mgr_agent_spawn_local(struct mgr_run *c);

/* --- manager/cluster.c: the phases, as sessions move them on ------------------------- */

void mgr_run_check_connected(struct mgr_run *c);
void mgr_run_check_prepared(struct mgr_run *c);
void mgr_run_check_results(struct mgr_run *c);
/* An agent failed or vanished: moves the current phase on if the others
 * are done with it. */
void mgr_run_progress(struct mgr_run *c);
/* An agent's test is set up (protocol 1.4): its clock probes begin. */
void mgr_run_on_ready(struct mgr_agent *a, const struct proto_ready *r);
void mgr_run_on_clock_reply(struct mgr_agent *a, const struct proto_clock_reply *r);
void mgr_run_on_stats(struct mgr_agent *a, const struct proto_stats *st);
void mgr_run_on_result(struct mgr_agent *a, const struct proto_stats *st);
/* Read-back progress of a verify_mode "after" test: the wait for the
 * agent's result restarts (the agent is working, not lost). */
void mgr_run_on_verify_progress(struct mgr_agent *a, const struct proto_prepare_progress *p);
void mgr_run_finish(struct mgr_run *c);

#endif
