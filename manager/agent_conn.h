/* SPDX-License-Identifier: Apache-2.0 */
/* manager/agent_conn.h - the connection side of the manager's agents: each
 * agent's record (struct mgr_agent: its session, link, hello, clock and
 * figures), dialling, accepting and redialling it, its hello and welcome,
 * and the messages it sends, handed to the run through a table of callbacks
 * (struct mgr_agent_ops). It never calls into the run: the run
 * (manager/run.c) makes every cross-agent and phase decision, and tells
 * this side only the stage it is in. Internal to the manager; loop thread
 * only.
 */
#ifndef IOF_MANAGER_AGENT_CONN_H
#define IOF_MANAGER_AGENT_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/net.h"
#include "common/tls.h"
#include "manager/aggregate.h"
#include "manager/console.h"
#include "manager/session.h"
#include "proto/link.h"
#include "proto/msg.h"

struct mgr_fleet;

struct mgr_agent {
    struct mgr_fleet *f;
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

/* What the run hears from its agents' connections (run: mgr_fleet.run).
 * Each is called once the session's own part is done; none may be NULL. */
struct mgr_agent_ops {
    /* The agent's hello, before its identity is checked: false refuses it
     * (a run that takes no new agents); the connection is then dropped. */
    bool (*admit)(void *run, struct mgr_agent *a);
    /* Its hello is kept (a->info): 0, or -1 with why (len cap) filled to
     * fail the agent (exit 3). */
    int (*on_hello)(void *run, struct mgr_agent *a, char *why, size_t cap);
    /* Welcomed; back: a lost agent coming back into the run. */
    void (*on_welcome)(void *run, struct mgr_agent *a, bool back);
    void (*on_error)(void *run, struct mgr_agent *a, const struct proto_error *e);
    void (*on_prepared)(void *run, struct mgr_agent *a, const struct proto_prepared *p);
    void (*on_ready)(void *run, struct mgr_agent *a, const struct proto_ready *r);
    void (*on_clock_reply)(void *run, struct mgr_agent *a, const struct proto_clock_reply *r);
    void (*on_stats)(void *run, struct mgr_agent *a, const struct proto_stats *st);
    void (*on_result)(void *run, struct mgr_agent *a, const struct proto_stats *st);
    /* Read-back progress of a verify_mode "after" test. */
    void (*on_verify_progress)(void *run, struct mgr_agent *a,
                               const struct proto_prepare_progress *p);
    /* A dialled agent did not answer in the connect stage (err: why); it is
     * dialled again. */
    void (*on_unanswered)(void *run, struct mgr_agent *a, int err);
    /* A dialled agent could not be reached and was failed. */
    void (*on_unreachable)(void *run, struct mgr_agent *a);
    /* Its link closed (the agent is lost, failed or gone). */
    void (*on_lost)(void *run, struct mgr_agent *a);
};

/* Where the run is, as far as its agents' connections need to know. */
enum mgr_fleet_stage {
    MGR_FLEET_CONNECT, /* waiting for the agents: a dialled one is retried */
    MGR_FLEET_STARTED, /* started: only a lost agent may come back */
    MGR_FLEET_OVER,    /* finished: nothing is dialled or accepted */
};

/* The agents of a run and what their connections need; owned by the run. */
struct mgr_fleet {
    uv_loop_t *loop;
    struct iof_tls_ctx *tls_client; /* for --agent; NULL: plain TCP */
    const struct mgr_agent_ops *ops;
    void *run;
    struct mgr_live *live; /* its line is ended before anything is printed */
    int *rc;               /* the run's exit code, raised by a failed agent */
    uint32_t heartbeat_ms; /* 0: default */
    bool insecure, verbose, quiet;
    enum mgr_fleet_stage stage;
    uint64_t wait_until; /* the end of the connect stage's wait */
    struct mgr_agent *agents;
    size_t nagents, capagents;
    struct mgr_session_tally tally; /* every agent's session, counted by state */
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
/* Refuses a that the run does not admit: tells it why (code, the message),
 * drops it and closes its link. */
void mgr_agent_refuse(struct mgr_agent *a, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A new agent slot (or a reused one of a connection that was not an agent);
 * NULL when all are taken. */
struct mgr_agent *mgr_agent_add(struct mgr_fleet *f, const char *endpoint);
/* Dials a (--agent). */
void mgr_agent_dial(struct mgr_agent *a);
/* Makes conn a's link: checks the peer, sends our hello. */
void mgr_agent_attach(struct mgr_agent *a, struct iof_conn *conn);
/* The listener's callbacks (--listen); arg is the fleet. */
void mgr_agent_on_accept(struct iof_listener *l, struct iof_conn *conn, void *arg);
void mgr_agent_on_reject(struct iof_listener *l, struct iof_conn *conn, int err, void *arg);

#endif
