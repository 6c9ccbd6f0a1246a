/* SPDX-License-Identifier: Apache-2.0 */
/* manager/session.c - each agent's session in the manager: the state
 * machine (the transition table, the one function that changes a session's
 * state and logs it, the names of states and events), and what moves it: a
 * dialled, accepted or embedded agent's connection, its hello and welcome,
 * the messages it sends (handed to the run's phases, manager/cluster.c),
 * its loss and its redial.
 */
#include "manager/session.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "common/tls.h"
#include "manager/run.h"
#include "proto/frame.h"
#include "proto/link.h"
#include "proto/version.h"

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

/* --- agent sessions of a run ---------------------------------------------------------- */

#define SESS_RETRY_MS 300 /* redial an --agent that refused */
#define SESS_MANAGER_NAME "iofleet"

/* ev: MGR_SESSION_EV_LOST (vanished, or broke the protocol, mid-run) or
 * MGR_SESSION_EV_FAIL (refused, errored). */
void mgr_agent_fail(struct mgr_agent *a, enum mgr_session_event ev, int rc, const char *fmt, ...)
{
    char why[sizeof(a->why)];
    va_list ap;
    enum mgr_session_state st = mgr_agent_state(a);
    if (st == MGR_SESSION_FAILED || st == MGR_SESSION_LOST || st == MGR_SESSION_REJOINING ||
        st == MGR_SESSION_GONE)
        return;
    /* Format first: the arguments may point into a->why. */
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    memcpy(a->why, why, sizeof(why));
    /* Lost in the test, or failed after some of its intervals arrived:
     * what it measured stays (partial). */
    if ((ev == MGR_SESSION_EV_LOST || a->agg.acc_n) && mgr_session_in_test(st) &&
        st != MGR_SESSION_RESULTED)
        mgr_agg_mark_lost(&a->agg, why);
    mgr_agent_fire(a, ev);
    mgr_live_done(&a->c->live);
    if (a->name[0])
        IOF_USER("iofleet: agent %s (%s): %s", a->name, a->endpoint, a->why);
    else
        IOF_USER("iofleet: agent at %s: %s", a->endpoint, a->why);
    if (a->c->rc < rc)
        a->c->rc = rc;
    if (a->link)
        proto_link_close(a->link, IOF_ELOST, NULL);
}

/* An accepted connection that is not behaving like an agent before its
 * hello: logged and closed, it takes no part and costs the run nothing. */
void mgr_agent_drop_stray(struct mgr_agent *a, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    mgr_live_done(&a->c->live);
    IOF_WARN("connection from %s dropped: %s", a->endpoint, why);
    mgr_agent_fire(a, MGR_SESSION_EV_DROP);
    if (a->link)
        proto_link_close(a->link, IOF_EPROTO, NULL);
}

/* A target in RAM measures memory, not storage: say so while the run goes
 * on, once per target and preparation (the JSON rows keep ram_backed). */
static void sess_warn_ram(struct mgr_run *c, struct mgr_agent *a)
{
    for (size_t i = 0; i < a->agg.nplaces; i++) {
        const struct mgr_place *p = &a->agg.places[i];
        if (p->ram_backed != 1)
            continue;
        char what[96] = "";
        if (p->fstype || p->device)
            snprintf(what, sizeof(what), " (%s%s%s)", p->fstype ? p->fstype : "",
                     p->fstype && p->device ? " on " : "", p->device ? p->device : "");
        mgr_live_done(&c->live);
        IOF_USER("iofleet: warning: %s: target %s is RAM-backed%s: its numbers are memory numbers, "
                 "not storage numbers",
                 a->name, p->path, what);
    }
}

static void sess_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg)
{
    struct mgr_agent *a = arg;
    struct mgr_run *c = a->c;
    enum mgr_session_state st = mgr_agent_state(a);

    switch (m->type) {
    case PROTO_MSG_HELLO:
        if (st != MGR_SESSION_CONNECTED || m->u.hello.role != PROTO_ROLE_AGENT) {
            if (!mgr_agent_dialled(a) && st == MGR_SESSION_CONNECTED) {
                mgr_agent_drop_stray(a, "its first message was the hello of a %s",
                                     proto_role_name(m->u.hello.role));
                return;
            }
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "unexpected hello (role %s)",
                           proto_role_name(m->u.hello.role));
            return;
        }
        snprintf(a->name, sizeof(a->name), "%s", m->u.hello.name);
        if (c->phase != MGR_PH_CONNECT && !mgr_agent_dialled(a)) {
            /* Accepted on --listen after the start: only a lost node may
             * come back, in a new slot; its old one stays lost. */
            bool was_lost = false;
            for (size_t i = 0; i < c->nagents; i++)
                was_lost |= &c->agents[i] != a && mgr_agent_lost(&c->agents[i]) &&
                            !strcmp(c->agents[i].name, a->name);
            if (!was_lost) {
                proto_link_send_error(l, IOF_EBUSY,
                                      "this run started without agent %s; it takes no new agents",
                                      a->name);
                mgr_agent_fire(a, MGR_SESSION_EV_DROP);
                proto_link_close(l, IOF_EBUSY, "not part of this run");
                return;
            }
            for (size_t i = 0; i < c->nagents; i++)
                if (&c->agents[i] != a && mgr_agent_lost(&c->agents[i]) &&
                    !strcmp(c->agents[i].name, a->name))
                    mgr_agent_fire(&c->agents[i],
                                   MGR_SESSION_EV_DROP); /* superseded by this slot */
        }
        if (proto_link_is_tls(l)) {
            /* An agent's identity is the name in its certificate. */
            struct iof_diag d = {{0}};
            if (proto_link_check_peer_name(l, a->name, &d)) {
                mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "calls itself '%s' but %s", a->name,
                               d.msg);
                return;
            }
        }
        proto_hello_free(&a->info);
        if (proto_hello_copy(&a->info, &m->u.hello)) {
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "out of memory");
            return;
        }
        for (size_t i = 0; i < c->nagents; i++) {
            enum mgr_session_state o = mgr_agent_state(&c->agents[i]);
            if (&c->agents[i] != a && (o == MGR_SESSION_HELLO || mgr_session_is_up(o)) &&
                !strcmp(c->agents[i].name, a->name)) {
                mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3,
                               "another agent already uses the name '%s'", a->name);
                return;
            }
        }
        /* The binary stats body only from an agent that announced it
         * (and only when we do): what a 1.0 peer sends is JSON. */
        {
            bool bin = proto_stats_binary_ok(m->u.hello.minor);
            proto_link_set_decode_flags(l, PROTO_DECODE_SUM_STATS |
                                               (bin ? PROTO_DECODE_STATS_BINARY : 0));
            /* Results are handled after the loop's reads: at a test's end
             * the last reports of every agent come with the results, and
             * must not wait behind all of them (docs/architecture.md). */
            proto_link_set_deferred(l, 1u << PROTO_MSG_RESULT);
            if (c->o->verbose)
                IOF_INFO("agent %s (%s): protocol %u.%u, stats body %s", a->name,
                         proto_link_peer(l), m->u.hello.major, m->u.hello.minor,
                         !bin ? "JSON"
                         : proto_stats_node_hist_ok(m->u.hello.minor)
                             ? "binary, a histogram per node"
                             : "binary");
        }
        mgr_agent_fire(a, MGR_SESSION_EV_HELLO);
        return;
    case PROTO_MSG_WELCOME:
        if (st != MGR_SESSION_HELLO) {
            if (mgr_session_is_up(st))
                return; /* welcomed already: nothing to do */
            if (!mgr_agent_dialled(a) && st == MGR_SESSION_CONNECTED) {
                mgr_agent_drop_stray(a, "welcome before any hello");
                return;
            }
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "welcome before hello");
            return;
        }
        {
            bool back = mgr_agent_coming_back(a);
            mgr_agent_fire(a, MGR_SESSION_EV_WELCOME);
            mgr_session_set_member(&a->s);
            if (a->wait_told && c->phase == MGR_PH_CONNECT) {
                mgr_live_done(&c->live);
                IOF_USER("iofleet: agent %s (%s) connected", a->name, a->endpoint);
                a->wait_told = false;
            }
            if (back) {
                mgr_live_done(&c->live);
                /* During a test it can join the next one; between tests
                 * (preparing) the one about to start. */
                bool next = c->phase == MGR_PH_RUN || c->phase == MGR_PH_CLOCK
                                ? c->cur + 1 < c->ntests
                                : c->cur < c->ntests;
                if (next)
                    IOF_USER("iofleet: agent %s (%s) is back; it takes part from the next test",
                             a->name, a->endpoint);
                else
                    IOF_USER("iofleet: agent %s (%s) is back, but no test is left for it to take "
                             "part in",
                             a->name, a->endpoint);
            }
        }
        proto_link_set_deadline(a->link, 0, NULL);
        /* The period the agent decided (proto/link.h). */
        proto_link_set_established(a->link,
                                   proto_link_heartbeat_ms(c->o->heartbeat_ms, a->info.heartbeat_ms,
                                                           m->u.welcome.heartbeat_ms));
        /* An agent's stats and results are as large as the plan allows. */
        proto_link_set_recv_limit(a->link, PROTO_STATS_FRAME_MAX);
        mgr_run_check_connected(c);
        return;
    case PROTO_MSG_ERROR:
        if (c->phase == MGR_PH_CONNECT || mgr_session_connecting(st)) {
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "refused: %s", m->u.error.message);
            mgr_run_check_connected(c);
        } else {
            if (st == MGR_SESSION_SETUP)
                c->setup_refused = true;
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, m->u.error.code == IOF_EPLAN ? 2 : 1, "%s",
                           m->u.error.message);
            if (c->phase == MGR_PH_PREPARE)
                mgr_run_check_prepared(c);
            else if (c->phase == MGR_PH_RUN)
                mgr_run_check_results(c);
        }
        return;
    case PROTO_MSG_PREPARE_PROGRESS:
        if (m->u.prepare_progress.verify) {
            mgr_run_on_verify_progress(a, &m->u.prepare_progress);
            return;
        }
        if (!c->o->quiet) {
            mgr_live_done(&c->live);
            IOF_USER("%s: preparing %s: %" PRIu64 " / %" PRIu64 " MiB", a->name,
                     m->u.prepare_progress.path, m->u.prepare_progress.done >> 20,
                     m->u.prepare_progress.total >> 20);
        }
        return;
    case PROTO_MSG_PREPARED:
        mgr_agg_node_places(&c->agg, &a->agg, &m->u.prepared);
        sess_warn_ram(c, a);
        if (st == MGR_SESSION_PREPARING)
            mgr_agent_fire(a, MGR_SESSION_EV_PREPARED);
        if (c->phase == MGR_PH_PREPARE)
            mgr_run_check_prepared(c);
        return;
    case PROTO_MSG_READY:
        mgr_run_on_ready(a, &m->u.ready);
        return;
    case PROTO_MSG_CLOCK_REPLY:
        mgr_run_on_clock_reply(a, &m->u.clock_reply);
        return;
    case PROTO_MSG_STATS:
        mgr_run_on_stats(a, &m->u.stats);
        return;
    case PROTO_MSG_RESULT:
        mgr_run_on_result(a, &m->u.result);
        if (c->phase == MGR_PH_RUN)
            mgr_run_check_results(c);
        return;
    case PROTO_MSG_BYE:
        return; /* the close follows */
    default:
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 1, "unexpected %s", proto_msg_type_name(m->type));
        return;
    }
}

static void sess_on_retry(uv_timer_t *t)
{
    mgr_agent_dial(t->data);
}

#define SESS_REDIAL_MS 1000

/* A lost --agent is dialled again every second until the run ends; when it
 * answers it prepares and takes part from the next test on. */
static void sess_on_redial(uv_timer_t *t)
{
    struct mgr_agent *a = t->data;
    if (a->c->phase == MGR_PH_DONE || mgr_agent_state(a) != MGR_SESSION_REJOINING)
        return;
    mgr_agent_fire(a, MGR_SESSION_EV_REDIAL_NOW);
    /* Not in the current test any more (a loss in it stays on record). */
    if (a->agg.role != MGR_AGG_LOST)
        mgr_agg_node_clear_role(&a->agg);
    proto_hello_free(&a->info);
    mgr_agent_dial(a);
}

static void sess_schedule_redial(struct mgr_agent *a)
{
    mgr_agent_fire(a, MGR_SESSION_EV_REDIAL);
    uv_timer_start(&a->retry, sess_on_redial, SESS_REDIAL_MS, 0);
}

static void sess_on_link_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct mgr_agent *a = arg;
    struct mgr_run *c = a->c;
    enum mgr_session_state st = mgr_agent_state(a);

    if (!a->name[0] && proto_link_refused_name(l))
        snprintf(a->name, sizeof(a->name), "%s", proto_link_refused_name(l));
    a->link = NULL;
    /* A TLS agent answered the plain manager's hello with an alert. */
    if (err == IOF_EPROTO && !strncmp(why, PROTO_WHY_EXPECTS_TLS, strlen(PROTO_WHY_EXPECTS_TLS)))
        why = "the agent expects TLS: configure TLS on the manager (--tls-ca, --tls-cert, "
              "--tls-key) or pass --insecure to both";
    if (c->phase == MGR_PH_DONE)
        return;
    if (mgr_agent_dialled(a) && mgr_agent_coming_back(a)) {
        /* Still not back: keep trying quietly. */
        sess_schedule_redial(a);
        return;
    }
    if (mgr_session_is_up(st)) {
        if (c->phase == MGR_PH_CONNECT)
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "%s", why);
        else
            mgr_agent_fail(a, MGR_SESSION_EV_LOST, 1, "lost: %s", why);
        if (mgr_agent_state(a) == MGR_SESSION_LOST && mgr_agent_dialled(a))
            sess_schedule_redial(a);
    } else if (st == MGR_SESSION_LOST && mgr_agent_dialled(a)) {
        /* Failed by the manager itself (no result, bad message): redial too. */
        sess_schedule_redial(a);
    } else if (st == MGR_SESSION_CONNECTED && !mgr_agent_dialled(a) && err != IOF_EVERSION) {
        /* Accepted, but never said hello (a port probe, a stray client):
         * not an agent, and it takes no slot. */
        mgr_agent_fire(a, MGR_SESSION_EV_DROP);
        if (err != -EPIPE && err != 0) {
            mgr_live_done(&c->live);
            IOF_WARN("connection from %s dropped before its hello: %s", a->endpoint, why);
        } else if (c->o->verbose) {
            IOF_INFO("connection from %s closed before its hello", a->endpoint);
        }
    } else if (mgr_session_connecting(st)) {
        if (err == IOF_EVERSION || err == IOF_EPROTO) {
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "%s", why);
        } else if (mgr_agent_dialled(a) && c->phase == MGR_PH_CONNECT &&
                   iof_now_ns() < c->deadline) {
            /* Not up yet: try again until the wait deadline. */
            snprintf(a->why, sizeof(a->why), "%s", why);
            mgr_agent_fire(a, MGR_SESSION_EV_RETRY);
            uv_timer_start(&a->retry, sess_on_retry, SESS_RETRY_MS, 0);
            return;
        } else {
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "%s", why);
        }
    }
    mgr_run_progress(c);
}

static void sess_attach(struct mgr_agent *a, struct iof_conn *conn)
{
    static const struct proto_link_cbs cbs = {.on_msg = sess_on_msg,
                                              .on_close = sess_on_link_close};
    struct proto_msg m;

    struct iof_diag d = {{0}};

    if (iof_conn_is_unix(conn) && iof_conn_check_local_peer(conn, &d)) {
        /* A unix socket proves who listens on it: root or our own user,
         * else anybody could pose as an agent and report what it likes. */
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "refusing the agent: %s", d.msg);
        iof_conn_close(conn, IOF_EDENIED);
        return;
    }
    if (!iof_conn_is_unix(conn) && !iof_conn_is_tls(conn) && !a->c->o->insecure) {
        /* Not reached: plain TCP without --insecure is refused at start. */
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3,
                       "refusing plain TCP: use TLS (--tls-ca, --tls-cert, --tls-key), a unix "
                       "socket (--agent unix:PATH) or --insecure on both sides");
        iof_conn_close(conn, IOF_EDENIED);
        return;
    }
    if (iof_conn_is_tls(conn) && a->c->o->verbose)
        IOF_INFO("TLS session with %s: %s handshake", iof_conn_peer(conn),
                 iof_conn_tls_resumed(conn) ? "resumed" : "full");
    a->link = proto_link_new(a->c->loop, conn, &cbs, a);
    if (!a->link) {
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "out of memory");
        return;
    }
    proto_link_set_decode_flags(a->link, PROTO_DECODE_SUM_STATS);
    mgr_agent_fire(a, MGR_SESSION_EV_LINK_UP);
    proto_link_set_deadline(a->link, 10000, "hello and welcome from the agent");
    proto_msg_init_hello(&m, PROTO_ROLE_MANAGER, SESS_MANAGER_NAME);
    if (a->c->o->heartbeat_ms)
        m.u.hello.heartbeat_ms = a->c->o->heartbeat_ms;
    proto_link_send(a->link, &m);
}

static void sess_on_connect(struct iof_conn *conn, int err, void *arg)
{
    struct mgr_agent *a = arg;
    if (err) {
        /* A refused or unreachable port says it in two words; TLS failures
         * need the transport's own explanation. */
        snprintf(a->why, sizeof(a->why), "%s",
                 err != -ECONNREFUSED && err != -EHOSTUNREACH && err != -ETIMEDOUT &&
                         iof_conn_error(conn)[0]
                     ? iof_conn_error(conn)
                     : uv_strerror(err));
        return; /* on_close follows, with the same err */
    }
    sess_attach(a, conn);
}

/* Agents named one by one as they fail to answer; past them, one line says
 * the countdown counts the others (a fleet's connect storm is not a page of
 * lines). */
#define SESS_WAIT_TOLD_MAX 8

/* The first time a dialled agent does not answer in the connect phase: who
 * is waited for, why, what usually fixes it, and how long the wait lasts
 * (the countdown follows: mgr_live_wait). */
static void sess_wait_tell(struct mgr_agent *a, int err)
{
    const struct mgr_run_opts *o = a->c->o;
    char hint[640] = "";

    if (a->wait_told)
        return;
    a->wait_told = true;
    if (++a->c->wait_told > SESS_WAIT_TOLD_MAX) {
        if (a->c->wait_told == SESS_WAIT_TOLD_MAX + 1) {
            mgr_live_done(&a->c->live);
            IOF_USER("iofleet: more agents do not answer yet; the wait line counts them");
        }
        return;
    }
    if (err == -ECONNREFUSED || (err == -ENOENT && a->unix_path))
        snprintf(hint, sizeof(hint),
                 ": is dynamo running there? (`systemctl start dynamo`, or `dynamo --listen "
                 "%s%s`)",
                 a->unix_path ? "unix:" : "", a->unix_path ? a->unix_path : a->endpoint);
    mgr_live_done(&a->c->live);
    if (o->min_agents)
        IOF_USER("iofleet: waiting for agent at %s: %s%s; retrying for up to %.0f s (--wait), "
                 "then going on without it if %u or more agents are connected (--min-agents)",
                 a->endpoint, a->why[0] ? a->why : iof_strerror(err), hint,
                 (double)o->wait_ms / 1000, o->min_agents);
    else
        IOF_USER("iofleet: waiting for agent at %s: %s%s; retrying for up to %.0f s (--wait)",
                 a->endpoint, a->why[0] ? a->why : iof_strerror(err), hint,
                 (double)o->wait_ms / 1000);
}

static void sess_on_dial_close(struct iof_conn *conn, int err, void *arg)
{
    struct mgr_agent *a = arg;
    struct mgr_run *c = a->c;
    /* Authentication failures do not heal by retrying. */
    bool transient = err != -EACCES && err != IOF_EPROTO && err != IOF_ETOOBIG;
    (void)conn;
    if (a->link || mgr_agent_state(a) != MGR_SESSION_DIALLING)
        return; /* the link owns it now */
    if (mgr_agent_coming_back(a)) {
        /* A lost agent being redialled was reported lost already (exit 1);
         * a redial still in flight when the run ends is not "unreachable". */
        if (c->phase != MGR_PH_DONE)
            sess_schedule_redial(a);
        else
            mgr_agent_fire(a, MGR_SESSION_EV_LOST);
        return;
    }
    if (c->phase == MGR_PH_CONNECT && transient) {
        /* Past the wait, the wait's end fails it, or leaves it out with
         * --min-agents (cluster.c, its tick): one message either way. */
        if (iof_now_ns() < c->deadline) {
            sess_wait_tell(a, err);
            uv_timer_start(&a->retry, sess_on_retry, SESS_RETRY_MS, 0);
        }
        return;
    }
    mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "%s%s", transient ? "unreachable: " : "",
                   a->why[0] ? a->why : iof_strerror(err));
    mgr_run_check_connected(c);
}

void mgr_agent_dial(struct mgr_agent *a)
{
    static const struct iof_conn_cbs cbs = {.on_connect = sess_on_connect,
                                            .on_close = sess_on_dial_close};
    struct iof_conn *conn;
    int r = a->unix_path       ? iof_conn_connect_unix(a->c->loop, a->unix_path, &cbs, a, &conn)
            : a->c->tls_client ? iof_conn_connect_tls(a->c->loop, a->host, a->port,
                                                      a->c->tls_client, &cbs, a, &conn)
                               : iof_conn_connect(a->c->loop, a->host, a->port, &cbs, a, &conn);
    if (r < 0)
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "cannot dial: %s", uv_strerror(r));
}

struct mgr_agent *mgr_agent_add(struct mgr_run *c, const char *endpoint)
{
    struct mgr_agent *a = NULL;
    /* A slot to reuse can only be a gone one: none, no scan. */
    for (size_t i = 0; i < c->nagents && !a && c->tally.n[MGR_SESSION_GONE]; i++)
        if (mgr_agent_state(&c->agents[i]) == MGR_SESSION_GONE && !c->agents[i].link &&
            c->agents[i].agg.role != MGR_AGG_LOST)
            a = &c->agents[i]; /* its retry timer stays initialised */
    if (!a) {
        if (c->nagents == c->capagents)
            return NULL;
        a = &c->agents[c->nagents++];
        memset(a, 0, sizeof(*a));
        uv_timer_init(c->loop, &a->retry);
    } else {
        uv_timer_t t = a->retry;
        mgr_session_detach(&a->s);
        proto_hello_free(&a->info);
        mgr_agg_node_free(&a->agg);
        free(a->base_iops);
        free(a->rates);
        memset(a, 0, sizeof(*a));
        a->retry = t;
    }
    a->c = c;
    a->agg.name = a->name;
    snprintf(a->endpoint, sizeof(a->endpoint), "%s", endpoint);
    a->retry.data = a;
    a->s.name = a->name;
    a->s.endpoint = a->endpoint;
    mgr_session_attach(&a->s, &c->tally);
    return a;
}

void mgr_agent_on_reject(struct iof_listener *l, struct iof_conn *conn, int err, void *arg)
{
    struct mgr_run *c = arg;
    (void)l;
    mgr_live_done(&c->live);
    IOF_WARN("refused a connection from %s: %s", iof_conn_peer(conn),
             iof_conn_error(conn)[0] ? iof_conn_error(conn) : iof_strerror(err));
}

void mgr_agent_on_accept(struct iof_listener *l, struct iof_conn *conn, void *arg)
{
    struct mgr_run *c = arg;
    struct mgr_agent *a;
    (void)l;
    if (c->phase == MGR_PH_DONE) {
        iof_conn_close(conn, IOF_EBUSY);
        return;
    }
    if (!(a = mgr_agent_add(c, iof_conn_peer(conn)))) {
        mgr_live_done(&c->live);
        IOF_WARN("connection from %s dropped: all %zu agent slots are taken (agents of the "
                 "run, lost ones until their test ends, connections waiting for their hello)",
                 iof_conn_peer(conn), c->capagents);
        iof_conn_close(conn, IOF_EBUSY);
        return;
    }
    /* After the connect phase only an agent that was lost may come back
     * (checked at its hello). */
    a->s.origin = c->phase != MGR_PH_CONNECT ? MGR_SESSION_RETURNED : MGR_SESSION_ACCEPTED;
    sess_attach(a, conn);
}

/* --- the embedded agent ------------------------------------------------------------- */

static void sess_on_child_exit(uv_process_t *p, int64_t status, int sig)
{
    struct mgr_run *c = p->data;
    c->child_running = false;
    uv_close((uv_handle_t *)p, NULL);
    if (c->child_kill_on) {
        c->child_kill_on = false;
        uv_close((uv_handle_t *)&c->child_kill, NULL);
    }
    if (c->phase != MGR_PH_DONE && (status || sig)) {
        IOF_USER("iofleet: the local agent exited (status %" PRId64 ", signal %d)", status, sig);
        if (c->phase == MGR_PH_CONNECT) {
            c->rc = 3;
            mgr_run_finish(c);
        }
    }
}

/* Starts the embedded agent connected to us by a socketpair (its end is
 * its descriptor 3): no port for another local user to reach, and each end
 * knows the other's user from the kernel. The agent runs in a session of its
 * own (UV_PROCESS_DETACHED: setsid before exec) so a terminal's Ctrl-C, sent
 * to the whole foreground process group, reaches only the manager, which
 * stops the test and collects its results; the agent still ends with the
 * manager, as the socketpair's end is its --once session. */
int mgr_agent_spawn_local(struct mgr_run *c)
{
    char **argv;
    size_t n = 0, max = 20 + 2 * 1024;
    uv_process_options_t po = {0};
    uv_stdio_container_t stdio[4];
    struct iof_conn *conn;
    struct mgr_agent *a;
    int sv[2], r;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        r = -errno;
        IOF_USER("iofleet: cannot start the local agent: socketpair: %s", strerror(errno));
        return r;
    }
    argv = calloc(max, sizeof(*argv));
    if (!argv) {
        close(sv[0]);
        close(sv[1]);
        return -ENOMEM;
    }
    argv[n++] = (char *)c->o->dynamo;
    argv[n++] = "--manager-fd";
    argv[n++] = "3";
    argv[n++] = "--name";
    argv[n++] = "local";
    argv[n++] = "--workdir";
    argv[n++] = (char *)c->o->workdir;
    argv[n++] = "--once";
    argv[n++] = "--quiet"; /* the manager reports what matters */
    if (c->o->allow_destructive)
        argv[n++] = "--allow-destructive";
    if (c->o->heartbeat_ms) {
        static char hb[16];
        snprintf(hb, sizeof(hb), "%u", c->o->heartbeat_ms);
        argv[n++] = "--heartbeat-ms";
        argv[n++] = hb;
    }
    /* Allowed: exactly the absolute paths the plan names. */
    for (size_t g = 0; g < c->p->nworkers; g++)
        for (size_t t = 0; t < c->p->workers[g].ntargets && n + 3 < max; t++)
            if (c->p->workers[g].targets[t].path[0] == '/') {
                argv[n++] = "--allow";
                argv[n++] = c->p->workers[g].targets[t].path;
            }
    argv[n] = NULL;
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = 2;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    stdio[3].flags = UV_INHERIT_FD;
    stdio[3].data.fd = sv[1];
    po.file = c->o->dynamo;
    po.args = argv;
    po.exit_cb = sess_on_child_exit;
    po.stdio = stdio;
    po.stdio_count = 4;
    po.flags = UV_PROCESS_DETACHED;
    c->child.data = c;
    r = uv_spawn(c->loop, &c->child, &po);
    free(argv);
    close(sv[1]); /* the child's end: it has its own copy now */
    if (r < 0) {
        close(sv[0]);
        IOF_USER("iofleet: cannot start the local agent '%s': %s", c->o->dynamo, uv_strerror(r));
        return r;
    }
    c->child_running = true;
    r = iof_conn_open_fd(c->loop, sv[0], "the local agent", NULL, NULL, &conn);
    if (r < 0) {
        IOF_USER("iofleet: cannot talk to the local agent: %s", iof_strerror(r));
        return r;
    }
    if (!(a = mgr_agent_add(c, "local"))) {
        iof_conn_close(conn, -ENOMEM);
        return -ENOMEM;
    }
    a->s.origin = MGR_SESSION_ACCEPTED;
    sess_attach(a, conn);
    return 0;
}
