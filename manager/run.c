/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run.c - `iofleet run` as an object on a loop: mgr_run_start (its
 * own agents dialled, accepted on --listen or the embedded agent started, or a
 * borrowed fleet), the timers and signals, interrupting, finishing once every
 * handle is closed, and freeing. The phases are run_phase.c's, each agent's
 * reports run_agents.c's, a test's figures run_test.c's (manager/run_int.h).
 */
#include "manager/run_int.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/log.h"
#include "proto/link.h"
#include "proto/plan.h"

#include "manager/local_agent.h"
#include "manager/session.h"
#include "manager/term.h"

#define CL_RESULT_GRACE_NS (30ULL * IOF_NS_PER_S) /* after the end, for results */
#define CL_CHILD_GRACE_MS 10000 /* the embedded agent's own end, before a SIGTERM */
/* TLS handshakes the --listen manager runs at once; more connections wait
 * their turn, unread, newest first (iof_listener_set_admission;
 * docs/scaling.md). */
#define MGR_HANDSHAKES_AT_ONCE 256

static void cl_close_handle(struct mgr_run *c, uv_handle_t *h);

/* The phase, and the stage the agents' connections see of it. */
void mgr_run_set_phase(struct mgr_run *c, enum mgr_run_phase ph)
{
    c->phase = ph;
    /* Fewer wake-ups only while the reports stream: in the clock phase a
     * probe's round trip, read up to MGR_COALESCE_MS late, would put half
     * of that into the agent's clock offset. */
    iof_net_coalesce_pause(ph != MGR_PH_RUN);
    c->f->stage = ph == MGR_PH_CONNECT ? MGR_FLEET_CONNECT
                  : ph == MGR_PH_DONE  ? MGR_FLEET_OVER
                                       : MGR_FLEET_STARTED;
}

/* How long after a test's end (or after an agent's last read-back progress,
 * verify_mode "after") the results may take: CL_RESULT_GRACE_NS, or
 * IOF_RESULT_GRACE_MS from the environment (docs/reliability.md: tests use
 * it to reach the limit in seconds). */
uint64_t mgr_run_result_grace_ns(void)
{
    static uint64_t grace;
    if (!grace) {
        const char *e = getenv("IOF_RESULT_GRACE_MS");
        char *end;
        unsigned long long ms = e && *e ? strtoull(e, &end, 10) : 0;
        grace = ms && !*end && ms <= 86400000ULL ? ms * IOF_NS_PER_MS : CL_RESULT_GRACE_NS;
    }
    return grace;
}

/* --- the embedded agent ------------------------------------------------------------- */

static void cl_on_child_exit(uv_process_t *p, int64_t status, int sig)
{
    struct mgr_run *c = p->data;
    c->child_running = false;
    cl_close_handle(c, (uv_handle_t *)p);
    if (c->child_kill_on) {
        c->child_kill_on = false;
        cl_close_handle(c, (uv_handle_t *)&c->child_kill);
    }
    if (c->phase != MGR_PH_DONE && (status || sig)) {
        IOF_USER("iofleet: the local agent exited (status %" PRId64 ", signal %d)", status, sig);
        if (c->phase == MGR_PH_CONNECT) {
            c->rc = 3;
            mgr_run_finish(c);
        }
    }
}

/* Starts the embedded agent (manager/local_agent.h) and adds it. 0 or an
 * error (logged). */
static int cl_spawn_local(struct mgr_run *c)
{
    struct iof_conn *conn;
    struct mgr_agent *a;
    int r;

    c->child.data = c;
    r = mgr_local_agent_spawn(c->loop, c->o, c->p, &c->child, cl_on_child_exit, &c->child_running,
                              &conn);
    if (r < 0)
        return r;
    if (!(a = mgr_agent_add(c->f, "local"))) {
        iof_conn_close(conn, -ENOMEM);
        return -ENOMEM;
    }
    a->s.origin = MGR_SESSION_ACCEPTED;
    mgr_agent_attach(a, conn);
    return 0;
}

/* --- timers, signals, the end --------------------------------------------------------- */

/* The connect phase, once a second while a dialled agent does not answer:
 * the countdown of the wait (mgr_live_wait). */
static void cl_wait_tick(struct mgr_run *c, uint64_t now)
{
    unsigned long left = (unsigned long)((c->deadline - now + IOF_NS_PER_S - 1) / IOF_NS_PER_S);
    const struct mgr_agent *first = NULL;
    unsigned more = 0;

    if (left == c->wait_left)
        return;
    for (size_t i = 0; i < c->f->nagents; i++) {
        const struct mgr_agent *a = &c->f->agents[i];
        if (!a->wait_told || !mgr_session_connecting(mgr_agent_state(a)))
            continue;
        if (first)
            more++;
        else
            first = a;
    }
    if (!first)
        return;
    c->wait_left = left;
    mgr_live_wait(&c->live, mgr_run_live(c), c->listener ? c->expect : (unsigned)c->o->nagents,
                  first->endpoint, first->why, more, (double)left);
}

static void cl_on_tick(uv_timer_t *t)
{
    struct mgr_run *c = t->data;
    uint64_t now = iof_now_ns();

    c->live_cache = mgr_run_live(c);
    MGR_RUN_SINKS(c, if (s_->ops->flush) s_->ops->flush(s_));
    if (c->phase == MGR_PH_RUN && c->run.ramp_ns && now < c->measure_start)
        mgr_live_ramp_tick(&c->live, (unsigned)c->cur + 1, (unsigned)c->ntests,
                           (double)c->run.ramp_ns / 1e9, (double)(c->measure_start - now) / 1e9);
    if (c->phase == MGR_PH_RUN)
        mgr_run_publish_ready(c, false);
    if (c->phase == MGR_PH_CONNECT && c->deadline > now)
        cl_wait_tick(c, now);
    if (!c->deadline || now < c->deadline)
        return;
    switch (c->phase) {
    case MGR_PH_CONNECT: {
        unsigned ready = mgr_run_live(c);
        /* With --min-agents met, those not connected are left out, which
         * does not make the run fail (mgr_run_check_connected). */
        int rc = mgr_run_enough(c, ready) ? 0 : 3;
        for (size_t i = 0; i < c->f->nagents; i++) {
            struct mgr_agent *a = &c->f->agents[i];
            if (mgr_agent_state(a) == MGR_SESSION_CONNECTED && !mgr_agent_dialled(a)) {
                /* An accepted connection that never said hello: not an agent. */
                mgr_agent_drop_stray(a, "no hello within the wait");
            } else if (mgr_session_connecting(mgr_agent_state(a))) {
                uv_timer_stop(&a->retry);
                mgr_agent_fail(a, MGR_SESSION_EV_FAIL, rc, "not connected after %.1f s%s%s",
                               (double)c->o->wait_ms / 1000, a->why[0] ? ": " : "", a->why);
            }
        }
        if (rc && ready && !c->listener && mgr_run_count_failed(c))
            IOF_USER("iofleet: %u of %zu agents connected; --min-agents %u would go on without "
                     "the others",
                     ready, c->o->nagents, ready);
        if (c->listener && ready < c->expect && mgr_run_enough(c, ready)) {
            mgr_live_done(&c->live);
            IOF_USER("iofleet: going on with %u of %u expected agents (--min-agents %u)", ready,
                     c->expect, c->o->min_agents);
            c->expect = ready;
        }
        if ((c->listener || c->embedded) && ready < c->expect) {
            IOF_USER("iofleet: %u of %u expected agents connected within %.1f s", ready, c->expect,
                     (double)c->o->wait_ms / 1000);
            if (c->rc < 3)
                c->rc = 3;
            mgr_run_finish(c);
            return;
        }
        mgr_run_check_connected(c);
        return;
    }
    case MGR_PH_CLOCK:
        for (size_t i = 0; i < c->f->nagents; i++) {
            if (!mgr_run_part(c, &c->f->agents[i]))
                continue;
            if (mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_PROBING)
                mgr_agent_fail(&c->f->agents[i], MGR_SESSION_EV_LOST, 1, "no clock reply");
            else if (mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_SETUP)
                mgr_agent_fail(&c->f->agents[i], MGR_SESSION_EV_LOST, 1,
                               "test %zu not set up within %d s", c->cur + 1, MGR_RUN_SETUP_WAIT_S);
        }
        if (mgr_run_live(c))
            mgr_run_start_test(c);
        else
            mgr_run_finish(c);
        return;
    case MGR_PH_RUN: {
        size_t cur = c->cur;
        /* Results received but not handled yet (proto_link_set_deferred)
         * came within the grace: handled first, which may end the test. */
        for (size_t i = 0; i < c->f->nagents && c->phase == MGR_PH_RUN && c->cur == cur; i++)
            if (mgr_run_part(c, &c->f->agents[i]) && c->f->agents[i].link)
                proto_link_flush_deferred(c->f->agents[i].link);
        if (c->phase != MGR_PH_RUN || c->cur != cur)
            return;
        for (size_t i = 0; i < c->f->nagents; i++)
            if (mgr_run_part(c, &c->f->agents[i]) &&
                mgr_agent_state(&c->f->agents[i]) != MGR_SESSION_RESULTED)
                mgr_agent_fail(&c->f->agents[i], MGR_SESSION_EV_LOST, 1, "no result for test %zu",
                               c->cur + 1);
        mgr_run_end_test(c);
        return;
    }
    default:
        return;
    }
}

/* Stops the run as Ctrl-C does: the test under way is stopped and its
 * results collected; again: the run ends without waiting for them. */
static void cl_interrupt(struct mgr_run *c, bool again)
{
    struct proto_msg m;

    if (c->phase == MGR_PH_DONE)
        return;
    if (again) {
        IOF_USER("iofleet: interrupted again: exiting without waiting for results");
        mgr_run_finish(c);
        return;
    }
    c->rc = 130;
    mgr_agg_interrupt(&c->agg);
    mgr_live_done(&c->live);
    IOF_USER("iofleet: interrupted: stopping the agents and collecting results");
    if (c->phase != MGR_PH_RUN) {
        mgr_run_finish(c);
        return;
    }
    proto_msg_init(&m, PROTO_MSG_STOP);
    m.u.stop.reason = "interrupted";
    mgr_run_send_all(c, &m);
    c->deadline = iof_now_ns() + 10 * IOF_NS_PER_S;
}

static void cl_on_signal(uv_signal_t *h, int sig)
{
    struct mgr_run *c = h->data;
    (void)sig;
    cl_interrupt(c, c->rc == 130);
}

void mgr_run_interrupt(struct mgr_run *c, bool force)
{
    if (!c)
        return;
    if (c->rc != 130)
        cl_interrupt(c, false);
    if (force)
        cl_interrupt(c, true);
}

/* Ctrl-Z in a run with the embedded agent: that agent is in a process group
 * of its own (dyn_os_own_job), out of the terminal's reach, so it is
 * stopped with the manager and continued with it, as when both were in the
 * terminal's process group. */
static void cl_on_stop(uv_signal_t *h, int sig)
{
    struct mgr_run *c = h->data;
    (void)sig;

    mgr_live_done(&c->live);
    if (c->child_running)
        uv_process_kill(&c->child, SIGSTOP);
    raise(SIGSTOP); /* returns once continued (fg, SIGCONT) */
    if (c->child_running)
        uv_process_kill(&c->child, SIGCONT);
}

/* The embedded agent did not end within CL_CHILD_GRACE_MS of the run. */
static void cl_on_child_kill(uv_timer_t *t)
{
    struct mgr_run *c = t->data;
    if (c->child_running)
        uv_process_kill(&c->child, SIGTERM);
    c->child_kill_on = false;
    cl_close_handle(c, (uv_handle_t *)t);
}

/* A borrowed fleet goes back to its owner as it was lent, its agents
 * without the run's figures. */
static void cl_give_back(struct mgr_run *c)
{
    struct mgr_fleet *f = c->f;

    for (size_t i = 0; i < f->nagents; i++) {
        struct mgr_agent *a = &f->agents[i];
        mgr_agg_node_free(&a->agg);
        a->agg.name = a->name;
        free(a->base_iops);
        free(a->rates);
        a->base_iops = a->rates = NULL;
        a->nbase = a->nrates = 0;
    }
    f->ops = c->lent.ops;
    f->run = c->lent.run;
    f->live = c->lent.live;
    f->rc = c->lent.rc;
    f->stage = c->lent.stage;
}

/* --verbose: how the run's TLS sessions were authenticated (a resumed one
 * showed a ticket from this process instead of its certificate). */
static void cl_log_handshakes(const struct mgr_run *c)
{
    struct iof_tls_counts k;
    if (c->tls_server) {
        iof_tls_ctx_counts(c->tls_server, &k);
        IOF_INFO("TLS handshakes with agents that dialled in: %" PRIu64 " full, %" PRIu64
                 " resumed",
                 k.full, k.resumed);
    }
    if (c->f->tls_client) {
        iof_tls_ctx_counts(c->f->tls_client, &k);
        IOF_INFO("TLS handshakes with agents dialled: %" PRIu64 " full, %" PRIu64
                 " resumed (%" PRIu64 " tickets refused)",
                 k.full, k.resumed, k.refused_tickets);
    }
}

/* The run is over once it is done and every handle of its own is closed
 * (the embedded agent has exited): the summary, the result files' end, and
 * the done callback, which may free the run. */
static void cl_maybe_complete(struct mgr_run *c)
{
    int rc = c->rc;

    if (c->completed || c->phase != MGR_PH_DONE || c->closing || c->child_running ||
        c->child_kill_on)
        return;
    c->completed = true;
    if (!c->o->quiet && c->ntests > 1)
        mgr_summary_print(&c->agg.summary, stdout, mgr_term_width(STDOUT_FILENO), c->live.utf8,
                          c->ntests);
    MGR_RUN_SINKS(c, s_->ops->run_end(s_, rc));
    if (c->o->verbose)
        cl_log_handshakes(c);
    if (c->env.fleet)
        cl_give_back(c);
    if (c->env.done)
        c->env.done(c, rc, c->env.arg);
}

static void cl_on_closed(uv_handle_t *h)
{
    struct mgr_run *c = h->data;
    c->closing--;
    cl_maybe_complete(c);
}

/* Closes a handle of the run (its data the run), counted until closed. */
static void cl_close_handle(struct mgr_run *c, uv_handle_t *h)
{
    if (!h->loop || uv_is_closing(h))
        return;
    c->closing++;
    uv_close(h, cl_on_closed);
}

void mgr_run_finish(struct mgr_run *c)
{
    if (c->phase == MGR_PH_DONE)
        return;
    mgr_run_set_phase(c, MGR_PH_DONE);
    mgr_live_done(&c->live);
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        if (c->env.fleet) {
            /* A borrowed fleet's retry timers are its owner's; agents
             * connecting to the owner are not the run's. */
            if (a->link && mgr_session_is_up(mgr_agent_state(a)))
                proto_link_close(a->link, 0, "run finished");
            continue;
        }
        uv_timer_stop(&a->retry);
        if (a->retry.loop && !uv_is_closing((uv_handle_t *)&a->retry))
            uv_close((uv_handle_t *)&a->retry, NULL);
        if (a->link)
            proto_link_close(a->link, 0, "run finished");
    }
    if (c->listener) {
        iof_listener_close(c->listener);
        c->listener = NULL;
    }
    cl_close_handle(c, (uv_handle_t *)&c->tick);
    cl_close_handle(c, (uv_handle_t *)&c->sigint);
    cl_close_handle(c, (uv_handle_t *)&c->sigterm);
    cl_close_handle(c, (uv_handle_t *)&c->sigtstp);
    /* The embedded agent ends with its session (after removing the test
     * files of a --cleanup run); SIGTERM makes sure it does not outlive us
     * if the bye is lost. Not at once: a SIGTERM that comes while it is
     * shutting down, its handler already closed, would kill it in the middle
     * of its cleanup. */
    if (c->child_running) {
        uv_timer_init(c->loop, &c->child_kill);
        c->child_kill.data = c;
        uv_timer_start(&c->child_kill, cl_on_child_kill, CL_CHILD_GRACE_MS, 0);
        c->child_kill_on = true; /* its exit closes the timer (cl_on_child_exit) */
    }
}

/* Agents of a borrowed fleet the run takes: those up now. */
static unsigned cl_count_lent(const struct mgr_fleet *f)
{
    return mgr_session_tally_count(&f->tally, mgr_session_is_up, false);
}

/* Frees what mgr_run_start allocated before anything was started. */
static void cl_free_unstarted(struct mgr_run *c)
{
    iof_tls_ctx_free(c->own.tls_client);
    iof_tls_ctx_free(c->tls_server);
    free(c->own.agents);
    free(c->tests);
    free(c->wire_text);
    free(c);
}

int mgr_run_start(const struct iof_plan *p, const char *plan_text, const struct mgr_run_opts *o,
                  const struct mgr_run_env *env, struct mgr_run **out)
{
    struct mgr_run *c = calloc(1, sizeof(*c));
    struct iof_diag d = {{0}};
    uint16_t port = 0;

    *out = NULL;
    if (!c) {
        IOF_USER("iofleet: out of memory");
        return 1;
    }
    c->env = *env;
    c->loop = env->loop;
    c->f = env->fleet ? env->fleet : &c->own;
    c->p = p;
    c->plan_text = plan_text;
    c->wire_text = proto_plan_wire_text(plan_text);
    c->o = o;
    if (!c->wire_text) {
        IOF_USER("iofleet: out of memory");
        free(c);
        return 1;
    }
    if (!env->fleet && !o->tls_ca) {
        /* Plain TCP authenticates nobody, loopback included: both sides
         * must say --insecure. Unix sockets and the embedded agent's
         * socketpair know their peer's user. */
        const char *tcp = o->listen;
        for (size_t i = 0; i < o->nagents && !tcp; i++)
            if (!iof_addr_is_unix(o->agents[i], NULL))
                tcp = o->agents[i];
        if (tcp && !o->insecure) {
            IOF_USER("iofleet: %s %s: plain TCP authenticates nobody (loopback included: any "
                     "local user could pose as the agent or the manager); use TLS (--tls-ca, "
                     "--tls-cert, --tls-key), a unix socket (--agent unix:PATH), or --insecure "
                     "here and on the agents",
                     tcp == o->listen ? "--listen" : "--agent", tcp);
            free(c->wire_text);
            free(c);
            return 3; /* refused for want of authentication */
        }
        if (tcp)
            IOF_WARN("--insecure: plain TCP, no authentication: agents and results are not "
                     "verified, and anyone who can reach an agent can drive it");
    }
    if (env->fleet) {
        c->expect = cl_count_lent(env->fleet);
    } else {
        c->embedded = !o->nagents && !o->listen;
        c->expect = c->embedded ? 1 : o->expect;
        /* A lost agent keeps its slot (the rows of the test it dropped out
         * of) until that test ends, and comes back in a new one: room for
         * every agent of the run to return once within a test, plus slack
         * for stray connections on --listen (their slots are reused). Slots
         * are touched only when used: the rest of the array costs no
         * memory. */
        c->own.capagents = 2 * (o->nagents + c->expect) + 64;
        c->own.agents = calloc(c->own.capagents, sizeof(*c->own.agents));
    }
    c->tests = iof_plan_expand(p, &c->ntests);
    if ((!env->fleet && !c->own.agents) || !c->tests) {
        IOF_USER("iofleet: out of memory");
        cl_free_unstarted(c);
        return 1;
    }
    if (!env->fleet && o->tls_ca) {
        struct iof_diag td = {{0}};
        if ((o->nagents && iof_tls_config_load(NULL, o->tls_ca, o->tls_cert, o->tls_key, false,
                                               &c->own.tls_client, &td)) ||
            (o->listen && iof_tls_config_load(NULL, o->tls_ca, o->tls_cert, o->tls_key, true,
                                              &c->tls_server, &td))) {
            IOF_USER("iofleet: %s", td.msg);
            cl_free_unstarted(c);
            return 2;
        }
    }
    *out = c;
    mgr_live_init(&c->live, o->quiet);
    mgr_live_plan(&c->live, p, c->tests, c->ntests);
    signal(SIGPIPE, SIG_IGN);
    uv_timer_init(c->loop, &c->tick);
    c->tick.data = c;
    uv_timer_start(&c->tick, cl_on_tick, 50, 50);
    if (env->signals) {
        uv_signal_init(c->loop, &c->sigint);
        uv_signal_init(c->loop, &c->sigterm);
        c->sigint.data = c;
        c->sigterm.data = c;
        uv_signal_start(&c->sigint, cl_on_signal, SIGINT);
        uv_signal_start(&c->sigterm, cl_on_signal, SIGTERM);
    }
    if (env->fleet) {
        c->lent.ops = env->fleet->ops;
        c->lent.run = env->fleet->run;
        c->lent.live = env->fleet->live;
        c->lent.rc = env->fleet->rc;
        c->lent.stage = env->fleet->stage;
    }
    mgr_run_set_phase(c, MGR_PH_CONNECT);
    c->run_wall_ns = iof_wall_ns();
    c->run_mono_ns = iof_now_ns();
    {
        struct mgr_agg_hooks hooks = {
            .live = mgr_run_live_hook, .members = mgr_run_members_hook, .arg = c};
        mgr_agg_init(&c->agg, p, c->tests, c->ntests, o->sinks, o->nsinks, &c->live, &hooks,
                     o->verbose, c->run_mono_ns);
        c->agg.rows = o->rows;
    }
    c->deadline = iof_now_ns() + o->wait_ms * IOF_NS_PER_MS;
    c->f->ops = &mgr_run_agent_ops;
    c->f->run = c;
    c->f->live = &c->live;
    c->f->rc = &c->rc;
    if (env->fleet) {
        /* Connected already: the run begins with the agents that are up. */
        mgr_run_begin(c);
        return 0;
    }
    c->f->loop = c->loop;
    c->f->heartbeat_ms = o->heartbeat_ms;
    c->f->insecure = o->insecure;
    c->f->verbose = o->verbose;
    c->f->quiet = o->quiet;
    c->f->wait_until = c->deadline;

    if (c->embedded) {
        uv_signal_init(c->loop, &c->sigtstp);
        c->sigtstp.data = c;
        uv_signal_start(&c->sigtstp, cl_on_stop, SIGTSTP);
        if (cl_spawn_local(c) < 0) {
            c->rc = 3;
            mgr_run_finish(c);
        }
    } else if (o->listen) {
        char host[256] = "127.0.0.1";
        if (iof_addr_parse(o->listen, host, sizeof(host), IOF_DEFAULT_PORT, &port, &d)) {
            IOF_USER("iofleet: --listen %s: %s", o->listen, d.msg);
            c->rc = 2;
            mgr_run_finish(c);
        } else if (c->tls_server ? iof_listener_start_tls(c->loop, host, port, c->tls_server,
                                                          mgr_agent_on_accept, mgr_agent_on_reject,
                                                          c->f, &c->listener, &d)
                                 : iof_listener_start(c->loop, host, port, mgr_agent_on_accept,
                                                      c->f, &c->listener, &d)) {
            IOF_USER("iofleet: %s", d.msg);
            c->rc = 3;
            mgr_run_finish(c);
        } else if (c->tls_server) {
            iof_listener_set_admission(c->listener, MGR_HANDSHAKES_AT_ONCE);
        }
    }
    for (size_t i = 0; i < o->nagents && c->phase != MGR_PH_DONE; i++) {
        struct mgr_agent *a = mgr_agent_add(c->f, o->agents[i]);
        const char *upath;
        if (iof_addr_is_unix(o->agents[i], &upath)) {
            if (upath[0] != '/') {
                IOF_USER("iofleet: --agent %s: the socket path must be absolute", o->agents[i]);
                c->rc = 2;
                mgr_run_finish(c);
                break;
            }
            a->unix_path = upath;
            snprintf(a->host, sizeof(a->host), "unix");
        } else if (iof_addr_parse(o->agents[i], a->host, sizeof(a->host), IOF_DEFAULT_PORT,
                                  &a->port, &d)) {
            IOF_USER("iofleet: --agent %s: %s", o->agents[i], d.msg);
            c->rc = 2;
            mgr_run_finish(c);
            break;
        }
        mgr_agent_dial(a);
    }
    return 0;
}

void mgr_run_free(struct mgr_run *c)
{
    if (!c)
        return;
    free(c->infos);
    for (size_t i = 0; i < c->own.nagents; i++) {
        mgr_agg_node_free(&c->own.agents[i].agg);
        proto_hello_free(&c->own.agents[i].info);
        free(c->own.agents[i].base_iops);
        free(c->own.agents[i].rates);
    }
    mgr_agg_free(&c->agg);
    cl_free_unstarted(c);
}

static void cl_plan_done(struct mgr_run *r, int rc, void *arg)
{
    (void)r;
    *(int *)arg = rc;
}

int mgr_run_plan(const struct iof_plan *p, const char *plan_text, const struct mgr_run_opts *o)
{
    int rc = 1; /* the run never ended (not reached) */
    struct mgr_run_env env = {
        .loop = uv_default_loop(), .signals = true, .done = cl_plan_done, .arg = &rc};
    struct mgr_run *r;
    int err = mgr_run_start(p, plan_text, o, &env, &r);

    if (err)
        return err;
    iof_net_run_coalesced(env.loop, MGR_COALESCE_MS);
    uv_loop_close(env.loop);
    mgr_run_free(r);
    return rc;
}
