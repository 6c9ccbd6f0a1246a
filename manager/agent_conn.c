/* SPDX-License-Identifier: Apache-2.0 */
/* manager/agent_conn.c - the connection side of the manager's agents: a
 * dialled, accepted or embedded agent's connection, its hello and welcome,
 * the messages it sends (handed to the run through its callbacks,
 * manager/agent_conn.h), its loss and its redial.
 */
#include "manager/agent_conn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "common/tls.h"
#include "proto/frame.h"
#include "proto/link.h"
#include "proto/version.h"

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
    mgr_live_done(a->f->live);
    if (a->name[0])
        IOF_USER("iofleet: agent %s (%s): %s", a->name, a->endpoint, a->why);
    else
        IOF_USER("iofleet: agent at %s: %s", a->endpoint, a->why);
    if (*a->f->rc < rc)
        *a->f->rc = rc;
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
    mgr_live_done(a->f->live);
    IOF_WARN("connection from %s dropped: %s", a->endpoint, why);
    mgr_agent_fire(a, MGR_SESSION_EV_DROP);
    if (a->link)
        proto_link_close(a->link, IOF_EPROTO, NULL);
}

void mgr_agent_refuse(struct mgr_agent *a, int code, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    proto_link_send_error(a->link, code, "%s", why);
    mgr_agent_fire(a, MGR_SESSION_EV_DROP);
    proto_link_close(a->link, code, "not part of this run");
}

static void sess_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg)
{
    struct mgr_agent *a = arg;
    struct mgr_fleet *f = a->f;
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
        if (!f->ops->admit(f->run, a))
            return;
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
        {
            char why[256];
            if (f->ops->on_hello(f->run, a, why, sizeof(why))) {
                mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "%s", why);
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
            if (f->verbose)
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
            proto_link_set_deadline(a->link, 0, NULL);
            /* The period the agent decided (proto/link.h). */
            proto_link_set_established(
                a->link,
                proto_link_heartbeat_ms(f->heartbeat_ms, a->info.heartbeat_ms,
                                        m->u.welcome.heartbeat_ms),
                m->u.welcome.heartbeat_limit_ms); /* decoded only with heartbeat_ms */
            /* An agent's stats and results are as large as the plan allows. */
            proto_link_set_recv_limit(a->link, PROTO_STATS_FRAME_MAX);
            f->ops->on_welcome(f->run, a, back);
        }
        return;
    case PROTO_MSG_ERROR:
        f->ops->on_error(f->run, a, &m->u.error);
        return;
    case PROTO_MSG_PREPARE_PROGRESS:
        if (m->u.prepare_progress.verify) {
            f->ops->on_verify_progress(f->run, a, &m->u.prepare_progress);
            return;
        }
        if (!f->quiet) {
            mgr_live_done(f->live);
            IOF_USER("%s: preparing %s: %" PRIu64 " / %" PRIu64 " MiB", a->name,
                     m->u.prepare_progress.path, m->u.prepare_progress.done >> 20,
                     m->u.prepare_progress.total >> 20);
        }
        return;
    case PROTO_MSG_PREPARED:
        f->ops->on_prepared(f->run, a, &m->u.prepared);
        return;
    case PROTO_MSG_READY:
        f->ops->on_ready(f->run, a, &m->u.ready);
        return;
    case PROTO_MSG_CLOCK_REPLY:
        f->ops->on_clock_reply(f->run, a, &m->u.clock_reply);
        return;
    case PROTO_MSG_STATS:
        f->ops->on_stats(f->run, a, &m->u.stats);
        return;
    case PROTO_MSG_RESULT:
        f->ops->on_result(f->run, a, &m->u.result);
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
    if (a->f->stage == MGR_FLEET_OVER || mgr_agent_state(a) != MGR_SESSION_REJOINING)
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
    struct mgr_fleet *f = a->f;
    enum mgr_session_state st = mgr_agent_state(a);

    if (!a->name[0] && proto_link_refused_name(l))
        snprintf(a->name, sizeof(a->name), "%s", proto_link_refused_name(l));
    a->link = NULL;
    /* A TLS agent answered the plain manager's hello with an alert. */
    if (err == IOF_EPROTO && !strncmp(why, PROTO_WHY_EXPECTS_TLS, strlen(PROTO_WHY_EXPECTS_TLS)))
        why = "the agent expects TLS: configure TLS on the manager (--tls-ca, --tls-cert, "
              "--tls-key) or pass --insecure to both";
    if (f->stage == MGR_FLEET_OVER)
        return;
    if (mgr_agent_dialled(a) && mgr_agent_coming_back(a)) {
        /* Still not back: keep trying quietly. */
        sess_schedule_redial(a);
        return;
    }
    if (mgr_session_is_up(st)) {
        if (f->stage == MGR_FLEET_CONNECT)
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
            mgr_live_done(f->live);
            IOF_WARN("connection from %s dropped before its hello: %s", a->endpoint, why);
        } else if (f->verbose) {
            IOF_INFO("connection from %s closed before its hello", a->endpoint);
        }
    } else if (mgr_session_connecting(st)) {
        if (err == IOF_EVERSION || err == IOF_EPROTO) {
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "%s", why);
        } else if (mgr_agent_dialled(a) && f->stage == MGR_FLEET_CONNECT &&
                   iof_now_ns() < f->wait_until) {
            /* Not up yet: try again until the wait deadline. */
            snprintf(a->why, sizeof(a->why), "%s", why);
            mgr_agent_fire(a, MGR_SESSION_EV_RETRY);
            uv_timer_start(&a->retry, sess_on_retry, SESS_RETRY_MS, 0);
            return;
        } else {
            mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "%s", why);
        }
    }
    f->ops->on_lost(f->run, a);
}

void mgr_agent_attach(struct mgr_agent *a, struct iof_conn *conn)
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
    if (!iof_conn_is_unix(conn) && !iof_conn_is_tls(conn) && !a->f->insecure) {
        /* Not reached: plain TCP without --insecure is refused at start. */
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3,
                       "refusing plain TCP: use TLS (--tls-ca, --tls-cert, --tls-key), a unix "
                       "socket (--agent unix:PATH) or --insecure on both sides");
        iof_conn_close(conn, IOF_EDENIED);
        return;
    }
    if (iof_conn_is_tls(conn) && a->f->verbose)
        IOF_INFO("TLS session with %s: %s handshake", iof_conn_peer(conn),
                 iof_conn_tls_resumed(conn) ? "resumed" : "full");
    a->link = proto_link_new(a->f->loop, conn, &cbs, a);
    if (!a->link) {
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "out of memory");
        return;
    }
    proto_link_set_decode_flags(a->link, PROTO_DECODE_SUM_STATS);
    mgr_agent_fire(a, MGR_SESSION_EV_LINK_UP);
    proto_link_set_deadline(a->link, 10000, "hello and welcome from the agent");
    proto_msg_init_hello(&m, PROTO_ROLE_MANAGER, SESS_MANAGER_NAME);
    /* With no period set, 1 s to an agent of 1.4 or older and the longer
     * offer to a newer one, which decides (its welcome): the manager does
     * not know the agent's minor yet. */
    if (a->f->heartbeat_ms)
        m.u.hello.heartbeat_ms = a->f->heartbeat_ms;
    else if (proto_version_minor() >= PROTO_MINOR_HEARTBEAT_OFFER)
        m.u.hello.heartbeat_offer_ms = PROTO_HEARTBEAT_MS_OFFER;
    /* And, from 1.8, the sparse one, which an agent of 1.8 takes instead. */
    if (!a->f->heartbeat_ms && proto_version_minor() >= PROTO_MINOR_HEARTBEAT_LIMIT) {
        m.u.hello.heartbeat_sparse_ms = PROTO_HEARTBEAT_MS_SPARSE;
        m.u.hello.heartbeat_limit_ms = PROTO_HEARTBEAT_LIMIT_MS_SPARSE;
    }
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
    mgr_agent_attach(a, conn);
}

static void sess_on_dial_close(struct iof_conn *conn, int err, void *arg)
{
    struct mgr_agent *a = arg;
    struct mgr_fleet *f = a->f;
    /* Authentication failures do not heal by retrying. */
    bool transient = err != -EACCES && err != IOF_EPROTO && err != IOF_ETOOBIG;
    (void)conn;
    if (a->link || mgr_agent_state(a) != MGR_SESSION_DIALLING)
        return; /* the link owns it now */
    if (mgr_agent_coming_back(a)) {
        /* A lost agent being redialled was reported lost already (exit 1);
         * a redial still in flight when the run ends is not "unreachable". */
        if (f->stage != MGR_FLEET_OVER)
            sess_schedule_redial(a);
        else
            mgr_agent_fire(a, MGR_SESSION_EV_LOST);
        return;
    }
    if (f->stage == MGR_FLEET_CONNECT && transient) {
        /* Past the wait, the wait's end fails it, or leaves it out with
         * --min-agents (manager/run.c, its tick): one message either way. */
        if (iof_now_ns() < f->wait_until) {
            f->ops->on_unanswered(f->run, a, err);
            uv_timer_start(&a->retry, sess_on_retry, SESS_RETRY_MS, 0);
        }
        return;
    }
    mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "%s%s", transient ? "unreachable: " : "",
                   a->why[0] ? a->why : iof_strerror(err));
    f->ops->on_unreachable(f->run, a);
}

void mgr_agent_dial(struct mgr_agent *a)
{
    static const struct iof_conn_cbs cbs = {.on_connect = sess_on_connect,
                                            .on_close = sess_on_dial_close};
    struct iof_conn *conn;
    struct mgr_fleet *f = a->f;
    int r = a->unix_path ? iof_conn_connect_unix(f->loop, a->unix_path, &cbs, a, &conn)
            : f->tls_client
                ? iof_conn_connect_tls(f->loop, a->host, a->port, f->tls_client, &cbs, a, &conn)
                : iof_conn_connect(f->loop, a->host, a->port, &cbs, a, &conn);
    if (r < 0)
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "cannot dial: %s", uv_strerror(r));
}

struct mgr_agent *mgr_agent_add(struct mgr_fleet *c, const char *endpoint)
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
    a->f = c;
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
    struct mgr_fleet *f = arg;
    (void)l;
    mgr_live_done(f->live);
    IOF_WARN("refused a connection from %s: %s", iof_conn_peer(conn),
             iof_conn_error(conn)[0] ? iof_conn_error(conn) : iof_strerror(err));
}

void mgr_agent_on_accept(struct iof_listener *l, struct iof_conn *conn, void *arg)
{
    struct mgr_fleet *c = arg;
    struct mgr_agent *a;
    (void)l;
    if (c->stage == MGR_FLEET_OVER) {
        iof_conn_close(conn, IOF_EBUSY);
        return;
    }
    if (!(a = mgr_agent_add(c, iof_conn_peer(conn)))) {
        mgr_live_done(c->live);
        IOF_WARN("connection from %s dropped: all %zu agent slots are taken (agents of the "
                 "run, lost ones until their test ends, connections waiting for their hello)",
                 iof_conn_peer(conn), c->capagents);
        iof_conn_close(conn, IOF_EBUSY);
        return;
    }
    /* After the connect phase only an agent that was lost may come back
     * (checked at its hello). */
    a->s.origin = c->stage != MGR_FLEET_CONNECT ? MGR_SESSION_RETURNED : MGR_SESSION_ACCEPTED;
    mgr_agent_attach(a, conn);
}
