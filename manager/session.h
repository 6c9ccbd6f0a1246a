/* SPDX-License-Identifier: Apache-2.0 */
/* manager/session.h - the state of one agent session in the manager, as one
 * explicit state machine: a state, the events that move it, and the table
 * of legal transitions (docs/architecture.md draws it).
 *
 *   DIALLING -> CONNECTED -> HELLO -> READY -> PREPARING -> PREPARED
 *   per test: PREPARED -> [SETUP ->] PROBING -> SYNCED -> RUNNING -> RESULTED
 *   -> PREPARED (SETUP with an agent of protocol 1.4 or later)
 *   LOST (mid-run) -> REJOINING -> DIALLING ... (a dialled agent comes back)
 *   FAILED (refused or errored: takes no part), GONE (not an agent, or
 *   superseded by a new session of the same agent; a failed session whose
 *   slot iofleet serve frees).
 *
 * Every change of state goes through mgr_session_fire(), which logs it at
 * debug level; an event the table does not allow in the current state is
 * refused (the state stays) and logged as a warning. Loop thread only.
 */
#ifndef IOF_MANAGER_SESSION_H
#define IOF_MANAGER_SESSION_H

#include <stdbool.h>
#include <stddef.h>

/* X(state, name, meaning) */
#define MGR_SESSION_STATES(X)                                                                      \
    X(DIALLING, "dialling", "connecting to the agent (or accepting it)")                           \
    X(CONNECTED, "connected", "link up, our hello sent, waiting for the agent's hello")            \
    X(HELLO, "hello", "the agent's hello arrived, waiting for its welcome")                        \
    X(READY, "ready", "welcomed: an agent of the run, no plan sent on this link")                  \
    X(PREPARING, "preparing", "plan and prepare sent, waiting for prepared")                       \
    X(PREPARED, "prepared", "prepared, between tests")                                             \
    X(SETUP, "setup", "in the current test: setup sent, waiting for ready")                        \
    X(PROBING, "probing", "in the current test: clock probes under way")                           \
    X(SYNCED, "synced", "in the current test: clock offset known, waiting for the start")          \
    X(RUNNING, "running", "in the current test: started, waiting for its result")                  \
    X(RESULTED, "resulted", "in the current test: its result arrived")                             \
    X(LOST, "lost", "vanished mid-run, or dropped for breaking the protocol")                      \
    X(REJOINING, "rejoining", "lost; a dialled agent is dialled again until it answers")           \
    X(FAILED, "failed", "refused or errored: takes no part")                                       \
    X(GONE, "gone", "not an agent (no hello), or superseded by a new session")

/* X(event, name, meaning) */
#define MGR_SESSION_EVENTS(X)                                                                      \
    X(LINK_UP, "link-up", "the connection is up, our hello sent")                                  \
    X(HELLO, "hello", "the agent's hello arrived and was accepted")                                \
    X(WELCOME, "welcome", "the agent's welcome arrived")                                           \
    X(RETRY, "retry", "the connection closed before the welcome: dial again")                      \
    X(PLAN_SENT, "plan-sent", "plan and prepare sent")                                             \
    X(PREPARED, "prepared", "the agent reported prepared")                                         \
    X(TEST_BEGIN, "test-begin", "it takes part in the next test: clock probes")                    \
    X(SETUP_SENT, "setup-sent", "it takes part in the next test: setup sent (protocol 1.4)")       \
    X(READY, "ready", "its test is set up: clock probes")                                          \
    X(CLOCK_DONE, "clock-done", "the last clock probe came back")                                  \
    X(START, "start", "start sent")                                                                \
    X(RESULT, "result", "its result arrived")                                                      \
    X(TEST_END, "test-end", "the test is over")                                                    \
    X(LOST, "lost", "the link went down, or the agent broke the protocol, mid-run")                \
    X(FAIL, "fail", "refused, or an error the agent reported")                                     \
    X(REDIAL, "redial", "wait, then dial the lost agent again")                                    \
    X(REDIAL_NOW, "redial-now", "the redial timer fired")                                          \
    X(DROP, "drop", "not an agent, not part of the run, or superseded")

#define MGR_SESSION_STATE_ENUM_(s, n, m) MGR_SESSION_##s,
#define MGR_SESSION_EVENT_ENUM_(e, n, m) MGR_SESSION_EV_##e,
enum mgr_session_state { MGR_SESSION_STATES(MGR_SESSION_STATE_ENUM_) MGR_SESSION_NSTATES };
enum mgr_session_event { MGR_SESSION_EVENTS(MGR_SESSION_EVENT_ENUM_) MGR_SESSION_NEVENTS };

/* How the agent came to the run. */
enum mgr_session_origin {
    MGR_SESSION_DIALLED,  /* --agent: dialled, redialled when lost */
    MGR_SESSION_ACCEPTED, /* --listen before the start, or the embedded agent */
    MGR_SESSION_RETURNED, /* --listen after the start: only a lost agent may come back */
};

/* How many sessions are in each state, and how many of those are members
 * of the run (welcomed at some point): kept up to date by every change of
 * state or membership, so that counting the agents taking part costs a
 * pass over the states, not over the agents (the run's 20 Hz tick counted
 * 10,000 agents' states, a cache miss each, and spent an eighth of the
 * manager's CPU on it). */
struct mgr_session_tally {
    unsigned n[MGR_SESSION_NSTATES];
    unsigned members[MGR_SESSION_NSTATES];
};

struct mgr_session {
    enum mgr_session_state state;
    enum mgr_session_origin origin;
    const char *name;     /* the agent's name ("" before its hello); borrowed */
    const char *endpoint; /* borrowed */
    /* Welcomed into this run at some point (counted in "agents N/M", named
     * when absent): the run's history, not the session's state. */
    bool member;
    struct mgr_session_tally *tally; /* where s is counted, or NULL */
};

/* One row of the transition table. */
struct mgr_session_transition {
    enum mgr_session_state from;
    enum mgr_session_event event;
    enum mgr_session_state to;
};

/* The table: every legal transition, once. */
extern const struct mgr_session_transition mgr_session_table[];
extern const size_t mgr_session_table_len;

/* The state event leads to from `from`; false when the table has no such
 * transition. */
bool mgr_session_next(enum mgr_session_state from, enum mgr_session_event ev,
                      enum mgr_session_state *to);

/* Performs the transition of s on ev and logs it (debug). Returns 0, or
 * -EINVAL for a transition the table does not have: refused, s unchanged,
 * logged as a warning. */
int mgr_session_fire(struct mgr_session *s, enum mgr_session_event ev);

/* Counts s (in its current state and membership) in t, which it must not be
 * counted in yet; detach takes it out again (before the session is reset
 * or freed). */
void mgr_session_attach(struct mgr_session *s, struct mgr_session_tally *t);
void mgr_session_detach(struct mgr_session *s);
/* Makes s a member of the run (once; its tally follows). */
void mgr_session_set_member(struct mgr_session *s);
/* Sessions of t whose state satisfies pred; with members, only members. */
unsigned mgr_session_tally_count(const struct mgr_session_tally *t,
                                 bool (*pred)(enum mgr_session_state), bool members);

const char *mgr_session_state_name(enum mgr_session_state st);
const char *mgr_session_event_name(enum mgr_session_event ev);

/* Welcomed and connected (READY .. RESULTED). */
bool mgr_session_is_up(enum mgr_session_state st);
/* Taking part in the current test (SETUP .. RESULTED). */
bool mgr_session_in_test(enum mgr_session_state st);
/* On the way to its welcome (DIALLING, CONNECTED, HELLO). */
bool mgr_session_connecting(enum mgr_session_state st);

#endif
