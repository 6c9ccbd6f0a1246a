/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run_agents.c - the agents as the run sees them: how many are up or
 * failed, --min-agents, and what their connections report
 * (struct mgr_agent_ops: admission, one name per agent, welcome, errors,
 * preparation, waiting for an agent that does not answer, loss).
 */
#include "manager/run_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"

#include "manager/session.h"

/* Agents whose session is up (welcomed, connected). */
unsigned mgr_run_count_up(const struct mgr_run *c)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->f->nagents; i++)
        n += mgr_session_is_up(mgr_agent_state(&c->f->agents[i]));
    return n;
}

/* Failed agents the run does not go on without (--min-agents leaves some out). */
unsigned mgr_run_count_failed(const struct mgr_run *c)
{
    unsigned n = c->f->tally.n[MGR_SESSION_FAILED];
    for (size_t i = 0; i < c->f->nagents && n; i++)
        n -= c->f->agents[i].left_out && mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_FAILED;
    return n;
}

/* --min-agents: enough agents connected to start without the others. */
bool mgr_run_enough(const struct mgr_run *c, unsigned ready)
{
    return c->o->min_agents && ready >= c->o->min_agents;
}

/* --min-agents: the run goes on without the agents that failed to connect
 * (each was named with its reason as it failed): one line names them. */
#define CL_LEFT_OUT_NAMED 8

void mgr_run_leave_out(struct mgr_run *c, unsigned ready)
{
    unsigned total = c->listener ? c->expect : (unsigned)c->o->nagents, n = 0;
    struct iof_buf who = IOF_BUF_INIT;

    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        if (a->left_out || mgr_agent_state(a) != MGR_SESSION_FAILED)
            continue;
        a->left_out = true;
        if (n++ < CL_LEFT_OUT_NAMED)
            iof_buf_printf(&who, "%s%s%s%s", n > 1 ? ", " : "", a->name[0] ? a->name : "",
                           a->name[0] ? " at " : "", a->endpoint);
    }
    if (n > CL_LEFT_OUT_NAMED)
        iof_buf_printf(&who, " and %u more", n - CL_LEFT_OUT_NAMED);
    mgr_live_done(&c->live);
    IOF_USER("iofleet: going on without %u agent%s (--min-agents %u: %u of %u connected): %s", n,
             n == 1 ? "" : "s", c->o->min_agents, ready, total, iof_buf_str(&who));
    iof_buf_free(&who);
}

/* --- what the agents' connections report (struct mgr_agent_ops) ---------------------- */

static void cl_on_result(void *run, struct mgr_agent *a, const struct proto_stats *st)
{
    struct mgr_run *c = run;
    mgr_run_take_result(c, a, st);
    if (c->phase == MGR_PH_RUN)
        mgr_run_check_results(c);
}

/* Accepted on --listen after the start: only a lost node may come back, in
 * a new slot; its old one stays lost. */
static bool cl_admit(void *run, struct mgr_agent *a)
{
    struct mgr_run *c = run;
    bool was_lost = false;

    if (c->phase == MGR_PH_CONNECT || mgr_agent_dialled(a))
        return true;
    for (size_t i = 0; i < c->f->nagents; i++)
        was_lost |= &c->f->agents[i] != a && mgr_agent_lost(&c->f->agents[i]) &&
                    !strcmp(c->f->agents[i].name, a->name);
    if (!was_lost) {
        mgr_agent_refuse(a, IOF_EBUSY, "this run started without agent %s; it takes no new agents",
                         a->name);
        return false;
    }
    for (size_t i = 0; i < c->f->nagents; i++)
        if (&c->f->agents[i] != a && mgr_agent_lost(&c->f->agents[i]) &&
            !strcmp(c->f->agents[i].name, a->name))
            mgr_agent_fire(&c->f->agents[i], MGR_SESSION_EV_DROP); /* superseded by this slot */
    return true;
}

/* One name per agent of the run. */
static int cl_on_hello(void *run, struct mgr_agent *a, char *why, size_t cap)
{
    struct mgr_run *c = run;
    for (size_t i = 0; i < c->f->nagents; i++) {
        enum mgr_session_state o = mgr_agent_state(&c->f->agents[i]);
        if (&c->f->agents[i] != a && (o == MGR_SESSION_HELLO || mgr_session_is_up(o)) &&
            !strcmp(c->f->agents[i].name, a->name)) {
            snprintf(why, cap, "another agent already uses the name '%s'", a->name);
            return -1;
        }
    }
    return 0;
}

static void cl_on_welcome(void *run, struct mgr_agent *a, bool back)
{
    struct mgr_run *c = run;
    if (c->env.fleet && !back && c->phase != MGR_PH_CONNECT) {
        /* It connected to the fleet's owner as the run started: not one of
         * the run's agents (its link closes; it dials again). */
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 0,
                       "a run started as it connected; it takes no "
                       "part in it");
        return;
    }
    if (a->wait_told && c->phase == MGR_PH_CONNECT) {
        mgr_live_done(&c->live);
        IOF_USER("iofleet: agent %s (%s) connected", a->name, a->endpoint);
        a->wait_told = false;
    }
    if (back) {
        mgr_live_done(&c->live);
        /* During a test it can join the next one; between tests
         * (preparing) the one about to start. */
        bool next = c->phase == MGR_PH_RUN || c->phase == MGR_PH_CLOCK ? c->cur + 1 < c->ntests
                                                                       : c->cur < c->ntests;
        if (next)
            IOF_USER("iofleet: agent %s (%s) is back; it takes part from the next test", a->name,
                     a->endpoint);
        else
            IOF_USER("iofleet: agent %s (%s) is back, but no test is left for it to take part in",
                     a->name, a->endpoint);
    }
    mgr_run_check_connected(c);
}

static void cl_on_error(void *run, struct mgr_agent *a, const struct proto_error *e)
{
    struct mgr_run *c = run;
    enum mgr_session_state st = mgr_agent_state(a);

    if (c->phase == MGR_PH_CONNECT || mgr_session_connecting(st)) {
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "refused: %s", e->message);
        mgr_run_check_connected(c);
        return;
    }
    if (st == MGR_SESSION_SETUP)
        c->setup_refused = true;
    mgr_agent_fail(a, MGR_SESSION_EV_FAIL, e->code == IOF_EPLAN ? 2 : 1, "%s", e->message);
    if (c->phase == MGR_PH_PREPARE)
        mgr_run_check_prepared(c);
    else if (c->phase == MGR_PH_RUN)
        mgr_run_check_results(c);
}

/* A target in RAM measures memory, not storage: say so while the run goes
 * on, once per target and preparation (the JSON rows keep ram_backed). */
static void cl_warn_ram(struct mgr_run *c, struct mgr_agent *a)
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

static void cl_on_prepared(void *run, struct mgr_agent *a, const struct proto_prepared *p)
{
    struct mgr_run *c = run;
    mgr_agg_node_places(&c->agg, &a->agg, p);
    cl_warn_ram(c, a);
    if (mgr_agent_state(a) == MGR_SESSION_PREPARING)
        mgr_agent_fire(a, MGR_SESSION_EV_PREPARED);
    if (c->phase == MGR_PH_PREPARE)
        mgr_run_check_prepared(c);
}

/* Agents named one by one as they fail to answer; past them, one line says
 * the countdown counts the others (a fleet's connect storm is not a page of
 * lines). */
#define CL_WAIT_TOLD_MAX 8

/* The first time a dialled agent does not answer in the connect phase: who
 * is waited for, why, what usually fixes it, and how long the wait lasts
 * (the countdown follows: mgr_live_wait). */
static void cl_on_unanswered(void *run, struct mgr_agent *a, int err)
{
    struct mgr_run *c = run;
    const struct mgr_run_opts *o = c->o;
    char hint[640] = "";

    if (a->wait_told)
        return;
    a->wait_told = true;
    if (++c->wait_told > CL_WAIT_TOLD_MAX) {
        if (c->wait_told == CL_WAIT_TOLD_MAX + 1) {
            mgr_live_done(&c->live);
            IOF_USER("iofleet: more agents do not answer yet; the wait line counts them");
        }
        return;
    }
    if (err == -ECONNREFUSED || (err == -ENOENT && a->unix_path))
        snprintf(hint, sizeof(hint),
                 ": is dynamo running there? (`systemctl start dynamo`, or `dynamo --listen "
                 "%s%s`)",
                 a->unix_path ? "unix:" : "", a->unix_path ? a->unix_path : a->endpoint);
    mgr_live_done(&c->live);
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

static void cl_on_unreachable(void *run, struct mgr_agent *a)
{
    (void)a;
    mgr_run_check_connected(run);
}

static void cl_on_lost(void *run, struct mgr_agent *a)
{
    (void)a;
    mgr_run_progress(run);
}

const struct mgr_agent_ops mgr_run_agent_ops = {
    .admit = cl_admit,
    .on_hello = cl_on_hello,
    .on_welcome = cl_on_welcome,
    .on_error = cl_on_error,
    .on_prepared = cl_on_prepared,
    .on_ready = mgr_run_on_ready,
    .on_clock_reply = mgr_run_on_clock_reply,
    .on_stats = mgr_run_on_stats,
    .on_result = cl_on_result,
    .on_verify_progress = mgr_run_on_verify_progress,
    .on_unanswered = cl_on_unanswered,
    .on_unreachable = cl_on_unreachable,
    .on_lost = cl_on_lost,
};
