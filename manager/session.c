/* SPDX-License-Identifier: Apache-2.0 */
/* manager/session.c - the state machine of one agent session in the
 * manager: the transition table, the one function that changes a session's
 * state and logs it, the tally of sessions by state, and the names of
 * states and events. It knows nothing of connections or of the run.
 */
#include "manager/session.h"

#include <errno.h>

#include "common/log.h"

#define S(x) MGR_SESSION_##x
#define E(x) MGR_SESSION_EV_##x

const struct mgr_session_transition mgr_session_table[] = {
    /* connecting: a dialled agent from DIALLING; an accepted one is in
     * DIALLING until its link is made */
    {S(DIALLING), E(LINK_UP), S(CONNECTED)},
    {S(CONNECTED), E(HELLO), S(HELLO)},
    {S(HELLO), E(WELCOME), S(READY)},
    {S(CONNECTED), E(RETRY), S(DIALLING)},
    {S(HELLO), E(RETRY), S(DIALLING)},
    /* preparing (again after a lost agent came back) */
    {S(READY), E(PLAN_SENT), S(PREPARING)},
    {S(PREPARING), E(PREPARED), S(PREPARED)},
    /* one test */
    {S(PREPARED), E(TEST_BEGIN), S(PROBING)},
    {S(PREPARED), E(SETUP_SENT), S(SETUP)},
    {S(SETUP), E(READY), S(PROBING)},
    {S(PROBING), E(CLOCK_DONE), S(SYNCED)},
    {S(SYNCED), E(START), S(RUNNING)},
    {S(RUNNING), E(RESULT), S(RESULTED)},
    {S(RESULTED), E(TEST_END), S(PREPARED)},
    /* lost mid-run: a redial still in flight when the run ends stays lost */
    {S(READY), E(LOST), S(LOST)},
    {S(PREPARING), E(LOST), S(LOST)},
    {S(PREPARED), E(LOST), S(LOST)},
    {S(SETUP), E(LOST), S(LOST)},
    {S(PROBING), E(LOST), S(LOST)},
    {S(SYNCED), E(LOST), S(LOST)},
    {S(RUNNING), E(LOST), S(LOST)},
    {S(RESULTED), E(LOST), S(LOST)},
    {S(DIALLING), E(LOST), S(LOST)},
    /* refused or errored */
    {S(DIALLING), E(FAIL), S(FAILED)},
    {S(CONNECTED), E(FAIL), S(FAILED)},
    {S(HELLO), E(FAIL), S(FAILED)},
    {S(READY), E(FAIL), S(FAILED)},
    {S(PREPARING), E(FAIL), S(FAILED)},
    {S(PREPARED), E(FAIL), S(FAILED)},
    {S(SETUP), E(FAIL), S(FAILED)},
    {S(PROBING), E(FAIL), S(FAILED)},
    {S(SYNCED), E(FAIL), S(FAILED)},
    {S(RUNNING), E(FAIL), S(FAILED)},
    {S(RESULTED), E(FAIL), S(FAILED)},
    /* a lost dialled agent is dialled again until it answers */
    {S(LOST), E(REDIAL), S(REJOINING)},
    {S(DIALLING), E(REDIAL), S(REJOINING)},
    {S(CONNECTED), E(REDIAL), S(REJOINING)},
    {S(HELLO), E(REDIAL), S(REJOINING)},
    {S(REJOINING), E(REDIAL_NOW), S(DIALLING)},
    /* not an agent, not part of the run, or superseded by a new session */
    {S(CONNECTED), E(DROP), S(GONE)},
    {S(HELLO), E(DROP), S(GONE)},
    {S(LOST), E(DROP), S(GONE)},
    {S(REJOINING), E(DROP), S(GONE)},
    /* a failed session's slot, freed for a new connection (iofleet serve) */
    {S(FAILED), E(DROP), S(GONE)},
};
const size_t mgr_session_table_len = sizeof(mgr_session_table) / sizeof(mgr_session_table[0]);

#define MGR_SESSION_NAME_(x, n, m) [MGR_SESSION_##x] = n,
static const char *const state_names[] = {MGR_SESSION_STATES(MGR_SESSION_NAME_)};
#undef MGR_SESSION_NAME_
#define MGR_SESSION_NAME_(x, n, m) [MGR_SESSION_EV_##x] = n,
static const char *const event_names[] = {MGR_SESSION_EVENTS(MGR_SESSION_NAME_)};
#undef MGR_SESSION_NAME_

const char *mgr_session_state_name(enum mgr_session_state st)
{
    return (unsigned)st < MGR_SESSION_NSTATES ? state_names[st] : "?";
}

const char *mgr_session_event_name(enum mgr_session_event ev)
{
    return (unsigned)ev < MGR_SESSION_NEVENTS ? event_names[ev] : "?";
}

bool mgr_session_next(enum mgr_session_state from, enum mgr_session_event ev,
                      enum mgr_session_state *to)
{
    for (size_t i = 0; i < mgr_session_table_len; i++)
        if (mgr_session_table[i].from == from && mgr_session_table[i].event == ev) {
            *to = mgr_session_table[i].to;
            return true;
        }
    return false;
}

int mgr_session_fire(struct mgr_session *s, enum mgr_session_event ev)
{
    enum mgr_session_state to;
    const char *who = s->name && s->name[0] ? s->name : "?";
    const char *where = s->endpoint ? s->endpoint : "?";

    if (!mgr_session_next(s->state, ev, &to)) {
        IOF_WARN("agent %s (%s): %s refused in state %s", who, where, mgr_session_event_name(ev),
                 mgr_session_state_name(s->state));
        return -EINVAL;
    }
    IOF_DEBUG("agent %s (%s): %s -> %s on %s", who, where, mgr_session_state_name(s->state),
              mgr_session_state_name(to), mgr_session_event_name(ev));
    if (s->tally) {
        s->tally->n[s->state]--;
        s->tally->n[to]++;
        if (s->member) {
            s->tally->members[s->state]--;
            s->tally->members[to]++;
        }
    }
    s->state = to;
    return 0;
}

void mgr_session_attach(struct mgr_session *s, struct mgr_session_tally *t)
{
    s->tally = t;
    t->n[s->state]++;
    if (s->member)
        t->members[s->state]++;
}

void mgr_session_detach(struct mgr_session *s)
{
    if (!s->tally)
        return;
    s->tally->n[s->state]--;
    if (s->member)
        s->tally->members[s->state]--;
    s->tally = NULL;
}

void mgr_session_set_member(struct mgr_session *s)
{
    if (s->member)
        return;
    s->member = true;
    if (s->tally)
        s->tally->members[s->state]++;
}

unsigned mgr_session_tally_count(const struct mgr_session_tally *t,
                                 bool (*pred)(enum mgr_session_state), bool members)
{
    unsigned n = 0;
    for (int st = 0; st < MGR_SESSION_NSTATES; st++)
        if (pred((enum mgr_session_state)st))
            n += members ? t->members[st] : t->n[st];
    return n;
}

bool mgr_session_is_up(enum mgr_session_state st)
{
    return st >= MGR_SESSION_READY && st <= MGR_SESSION_RESULTED;
}

bool mgr_session_in_test(enum mgr_session_state st)
{
    return st >= MGR_SESSION_SETUP && st <= MGR_SESSION_RESULTED;
}

bool mgr_session_connecting(enum mgr_session_state st)
{
    return st == MGR_SESSION_DIALLING || st == MGR_SESSION_CONNECTED || st == MGR_SESSION_HELLO;
}
