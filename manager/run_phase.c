/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run_phase.c - the run's phases and the tests in sequence: connect
 * (until every agent is up, or --min-agents), prepare, and per test the set-up,
 * clock probes, one start time for every node and the end of the test, then
 * the next; each phase moves on when the agents taking part are done with it.
 */
#include "manager/run_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "proto/link.h"
#include "proto/plan.h"
#include "proto/version.h"

#include "manager/session.h"

#define CL_PROBES 8          /* clock probes per agent and test */
#define CL_START_LEAD_MS 300 /* start this long after the last probe */
#define CL_CLOCK_WAIT_S 10   /* for every agent's clock probes */

static void cl_next_test(struct mgr_run *c);

/* --- test sequencing ------------------------------------------------------------------- */

void mgr_run_send_all(struct mgr_run *c, const struct proto_msg *m)
{
    for (size_t i = 0; i < c->f->nagents; i++)
        if (mgr_session_is_up(mgr_agent_state(&c->f->agents[i])))
            proto_link_send(c->f->agents[i].link, m);
}

void mgr_run_end_test(struct mgr_run *c)
{
    uint64_t now = iof_now_ns(), measured = c->run.duration_ns;
    struct mgr_agg_node **nodes = calloc(c->f->nagents ? c->f->nagents : 1, sizeof(*nodes));
    size_t n = 0;

    mgr_run_publish_ready(c, true);
    /* Nothing measured is dropped: a node lost in the test keeps the
     * intervals that arrived; an agent of the run not in it is named. */
    for (size_t i = 0; i < c->f->nagents; i++)
        if (c->f->agents[i].agg.role == MGR_AGG_LOST &&
            mgr_agg_lost(&c->agg, &c->f->agents[i].agg) && c->rc < 1)
            c->rc = 1;
    for (size_t i = 0; i < c->f->nagents; i++)
        if (mgr_run_absent(c, &c->f->agents[i]))
            mgr_agg_absent(&c->agg, &c->f->agents[i].agg,
                           c->f->agents[i].why[0] ? c->f->agents[i].why : "not back yet");
    if ((c->rc == 130 || c->ended_early) && now < c->end) {
        /* Stopped early (interrupted, or every worker reached its
         * io_limit): the ALL row covers the longest window an agent
         * measured (one agent: exactly its NODE row). */
        measured = 0;
        for (size_t i = 0; i < c->f->nagents; i++)
            if (c->f->agents[i].agg.role == MGR_AGG_RESULT &&
                c->f->agents[i].agg.measured_ns > measured)
                measured = c->f->agents[i].agg.measured_ns;
        if (!measured)
            measured = now > c->measure_start ? now - c->measure_start : 0;
    }
    /* An agent's own window may have been shorter (stopped): the ALL row
     * uses the window as the manager saw it; per-agent rows their own. */
    for (size_t i = 0; nodes && i < c->f->nagents; i++)
        nodes[n++] = &c->f->agents[i].agg;
    {
        struct mgr_agg_end e = {
            .nodes = nodes, .nnodes = n, .measured_ns = measured, .interrupted = c->rc == 130};
        mgr_agg_test_end(&c->agg, &e);
    }
    free(nodes);
    if (c->rc == 130 || mgr_run_live(c) == 0) {
        mgr_run_finish(c);
        return;
    }
    mgr_run_rate_after(c);
    c->cur++;
    cl_next_test(c);
}

void mgr_run_check_results(struct mgr_run *c)
{
    for (size_t i = 0; i < c->f->nagents; i++)
        if (mgr_run_part(c, &c->f->agents[i]) &&
            mgr_agent_state(&c->f->agents[i]) != MGR_SESSION_RESULTED)
            return;
    mgr_run_end_test(c);
}

void mgr_run_start_test(struct mgr_run *c)
{
    struct proto_msg m;
    uint64_t max_rtt = 0;

    for (size_t i = 0; i < c->f->nagents; i++)
        if (mgr_run_part(c, &c->f->agents[i]) && c->f->agents[i].best_rtt > max_rtt)
            max_rtt = c->f->agents[i].best_rtt;
    c->run = iof_test_run(c->p, &c->tests[c->cur]);
    c->ended_early = false;
    /* What the sinks wrote of the tests before goes to disk now, not in
     * this test's window (the run history: manager/sinks/db.c). */
    MGR_RUN_SINKS(c, if (s_->ops->quiesce) s_->ops->quiesce(s_));
    c->start_at = iof_now_ns() + CL_START_LEAD_MS * IOF_NS_PER_MS + max_rtt;
    c->measure_start = c->start_at + c->run.ramp_ns;
    c->end = c->measure_start + c->run.duration_ns;
    mgr_agg_test_begin(&c->agg, c->cur, &c->run, c->measure_start);
    if (c->run.ramp_ns)
        mgr_live_ramp(&c->live, (unsigned)c->cur + 1, (unsigned)c->ntests,
                      (double)c->run.ramp_ns / 1e9);
    mgr_run_set_phase(c, MGR_PH_RUN);
    c->live_cache = mgr_run_live(c);
    c->deadline = c->end + mgr_run_result_grace_ns();
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        if (!mgr_run_part(c, a))
            continue;
        mgr_agent_fire(a, MGR_SESSION_EV_START);
        proto_msg_init(&m, PROTO_MSG_START);
        m.u.start.test = (uint32_t)c->cur;
        m.u.start.start_at_ns = c->start_at;
        m.u.start.offset_ns = a->offset;
        m.u.start.rates = a->rates;
        m.u.start.nrates = a->nrates;
        proto_link_send(a->link, &m);
    }
}

/* Every agent taking part in the test is set up and knows its clock
 * offset: the start may go. */
static bool cl_all_synced(const struct mgr_run *c)
{
    for (size_t i = 0; i < c->f->nagents; i++) {
        enum mgr_session_state st = mgr_agent_state(&c->f->agents[i]);
        if (mgr_run_part(c, &c->f->agents[i]) &&
            (st == MGR_SESSION_PROBING || st == MGR_SESSION_SETUP))
            return false;
    }
    return true;
}

static void cl_send_probe(struct mgr_agent *a)
{
    struct proto_msg m;
    proto_msg_init(&m, PROTO_MSG_CLOCK_PROBE);
    m.u.clock_probe.seq = a->probes;
    m.u.clock_probe.t0_ns = iof_now_ns();
    proto_link_send(a->link, &m);
}

void mgr_run_on_clock_reply(void *run, struct mgr_agent *a, const struct proto_clock_reply *r)
{
    struct mgr_run *c = run;
    uint64_t t1 = iof_now_ns(), rtt;

    if (c->phase != MGR_PH_CLOCK || mgr_agent_state(a) != MGR_SESSION_PROBING ||
        r->seq != a->probes || r->t0_ns > t1)
        return;
    rtt = t1 - r->t0_ns;
    /* The sample with the smallest round trip bounds the offset best. */
    if (!a->probes || rtt < a->best_rtt) {
        int64_t off;
        /* agent_ns comes from the wire: an offset that does not fit is no
         * clock at all. */
        if (r->agent_ns > (uint64_t)INT64_MAX ||
            __builtin_sub_overflow((int64_t)r->agent_ns, (int64_t)(r->t0_ns + rtt / 2), &off)) {
            mgr_agent_fail(a, MGR_SESSION_EV_LOST, 1,
                           "clock reply with agent_ns %" PRIu64 " off any clock", r->agent_ns);
            return;
        }
        a->best_rtt = rtt;
        a->offset = off;
    }
    if (++a->probes < CL_PROBES) {
        cl_send_probe(a);
        return;
    }
    mgr_agent_fire(a, MGR_SESSION_EV_CLOCK_DONE);
    if (cl_all_synced(c))
        mgr_run_start_test(c);
}

void mgr_run_on_ready(void *run, struct mgr_agent *a, const struct proto_ready *r)
{
    struct mgr_run *c = run;

    if (c->phase != MGR_PH_CLOCK || mgr_agent_state(a) != MGR_SESSION_SETUP || r->test != c->cur)
        return;
    mgr_agent_fire(a, MGR_SESSION_EV_READY);
    a->probes = 0;
    cl_send_probe(a);
}

/* Sends the plan and the prepare request to every ready agent that has not
 * had them on its current connection (all of them at the start; an agent
 * that came back later). Returns how many were sent. */
static unsigned cl_send_plan(struct mgr_run *c)
{
    struct proto_msg plan, prep;
    bool maps = proto_plan_has_target_maps(c->p);
    unsigned n = 0;

    proto_msg_init(&plan, PROTO_MSG_PLAN);
    plan.u.plan.text = c->wire_text;
    plan.u.plan.len = strlen(c->wire_text);
    proto_msg_init(&prep, PROTO_MSG_PREPARE);
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        if (mgr_agent_state(a) != MGR_SESSION_READY || !mgr_run_rate_agent_ok(a))
            continue;
        /* run.cleanup travels in the prepare, from protocol 1.2 on. */
        prep.u.prepare.cleanup = c->p->run.cleanup && proto_clean_ok(a->info.minor);
        if (c->p->run.cleanup && !prep.u.prepare.cleanup)
            IOF_WARN("agent %s (%s) speaks protocol %u.%u: it keeps the test files it creates "
                     "(run.cleanup needs 1.2)",
                     a->name, a->endpoint, a->info.major, a->info.minor);
        if (maps) {
            /* Each agent receives the plan with its own paths. */
            struct iof_diag d = {{0}};
            char *own = proto_plan_node_text(c->wire_text, a->name, &d);
            if (!own) {
                mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 2, "%s", d.msg);
                continue;
            }
            plan.u.plan.text = own;
            plan.u.plan.len = strlen(own);
            proto_link_send(a->link, &plan);
            free(own);
        } else {
            proto_link_send(a->link, &plan);
        }
        proto_link_send(a->link, &prep);
        mgr_agent_fire(a, MGR_SESSION_EV_PLAN_SENT);
        n++;
    }
    return n;
}

static void cl_next_test(struct mgr_run *c)
{
    unsigned ready = 0;

    if (c->cur >= c->ntests) {
        mgr_run_finish(c);
        return;
    }
    /* An agent that came back prepares before it takes part. */
    for (size_t i = 0; i < c->f->nagents; i++) {
        if (mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_RESULTED)
            mgr_agent_fire(&c->f->agents[i], MGR_SESSION_EV_TEST_END);
        mgr_agg_node_clear_role(&c->f->agents[i].agg);
    }
    if (cl_send_plan(c)) {
        mgr_run_set_phase(c, MGR_PH_PREPARE);
        c->deadline = 0;
        return;
    }
    for (size_t i = 0; i < c->f->nagents; i++)
        ready += mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_PREPARED;
    if (ready == 0) {
        mgr_run_finish(c);
        return;
    }
    mgr_run_set_phase(c, MGR_PH_CLOCK);
    c->setup_refused = false;
    c->deadline = iof_now_ns() + CL_CLOCK_WAIT_S * IOF_NS_PER_S;
    /* An agent of 1.4 or later sets the test up first (setup, ready),
     * then its clock is probed; an older one sets up inside the start's
     * lead. */
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        if (mgr_agent_state(a) != MGR_SESSION_PREPARED)
            continue;
        mgr_agent_fire(a, proto_setup_ok(a->info.minor) ? MGR_SESSION_EV_SETUP_SENT
                                                        : MGR_SESSION_EV_TEST_BEGIN);
        mgr_agg_node_take_part(&a->agg);
        a->probes = 0;
    }
    mgr_run_rate_plan(c);
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        struct proto_msg m;
        if (mgr_agent_state(a) == MGR_SESSION_PROBING) {
            cl_send_probe(a);
            continue;
        }
        if (mgr_agent_state(a) != MGR_SESSION_SETUP)
            continue;
        c->deadline = iof_now_ns() + MGR_RUN_SETUP_WAIT_S * IOF_NS_PER_S;
        proto_msg_init(&m, PROTO_MSG_SETUP);
        m.u.setup.test = (uint32_t)c->cur;
        m.u.setup.rates = a->rates;
        m.u.setup.nrates = a->nrates;
        proto_link_send(a->link, &m);
    }
}

void mgr_run_check_prepared(struct mgr_run *c)
{
    for (size_t i = 0; i < c->f->nagents; i++)
        if (mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_READY ||
            mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_PREPARING)
            return;
    mgr_live_done(&c->live);
    if (mgr_run_count_up(c) == 0) {
        mgr_run_finish(c);
        return;
    }
    cl_next_test(c);
}

void mgr_run_warn_line(void *arg, const char *msg)
{
    (void)arg;
    IOF_USER("iofleet: warning: %s", msg);
}

/* Per-node target maps: every node a group runs on has its path. */
static int cl_check_maps(struct mgr_run *c)
{
    const char **names = calloc(c->f->nagents ? c->f->nagents : 1, sizeof(*names));
    struct iof_diag d = {{0}};
    size_t n = 0;
    int r;

    if (!proto_plan_has_target_maps(c->p)) {
        free(names);
        return 0;
    }
    if (!names) {
        IOF_USER("iofleet: out of memory");
        return 1;
    }
    for (size_t k = 0; k < c->f->nagents; k++)
        if (mgr_session_is_up(mgr_agent_state(&c->f->agents[k])))
            names[n++] = c->f->agents[k].name;
    r = proto_plan_map_check(c->plan_text, names, n, mgr_run_warn_line, NULL, &d);
    free(names);
    if (r) {
        IOF_USER("iofleet: %s", d.msg);
        return 2;
    }
    return 0;
}

/* Every plan node name must be one of the agents. */
static int cl_check_nodes(struct mgr_run *c)
{
    for (size_t g = 0; g < c->p->nworkers; g++) {
        const struct iof_worker_cfg *gc = &c->p->workers[g];
        for (size_t i = 0; i < gc->nnodes; i++) {
            bool found = !strcmp(gc->nodes[i], "*");
            for (size_t k = 0; k < c->f->nagents && !found; k++)
                found = mgr_session_is_up(mgr_agent_state(&c->f->agents[k])) &&
                        !strcmp(c->f->agents[k].name, gc->nodes[i]);
            if (!found) {
                struct iof_buf names = IOF_BUF_INIT;
                for (size_t k = 0; k < c->f->nagents; k++)
                    if (mgr_session_is_up(mgr_agent_state(&c->f->agents[k])))
                        iof_buf_printf(&names, "%s%s", names.len ? ", " : "", c->f->agents[k].name);
                IOF_USER("iofleet: workers[%zu].nodes: node '%s' does not exist (agents: %s)", g,
                         gc->nodes[i], iof_buf_str(&names));
                iof_buf_free(&names);
                return 2;
            }
        }
    }
    return cl_check_maps(c);
}

void mgr_run_begin(struct mgr_run *c)
{
    unsigned ready = mgr_run_live(c);
    int r;

    if (ready == 0) {
        IOF_USER("iofleet: no agent to run on");
        if (c->rc < 3)
            c->rc = 3;
        mgr_run_finish(c);
        return;
    }
    r = cl_check_nodes(c);
    if (r) {
        c->rc = r;
        mgr_run_finish(c);
        return;
    }
    if (!c->o->quiet) {
        struct iof_buf line = IOF_BUF_INIT;
        for (size_t i = 0; i < c->f->nagents; i++)
            if (mgr_session_is_up(mgr_agent_state(&c->f->agents[i])))
                iof_buf_printf(&line, " %s", c->f->agents[i].name);
        IOF_USER("iofleet: %u agent%s ready:%s", ready, ready == 1 ? "" : "s", iof_buf_str(&line));
        iof_buf_free(&line);
    }
    mgr_run_sinks_run_begin(c);
    mgr_run_set_phase(c, MGR_PH_PREPARE);
    c->deadline = 0; /* preparation takes as long as writing the files takes */
    c->cur = 0;
    cl_send_plan(c);
}

void mgr_run_check_connected(struct mgr_run *c)
{
    unsigned ready = mgr_run_live(c), pending = 0;
    if (c->phase == MGR_PH_PREPARE) {
        /* Back while the others prepare for the next test: it prepares too
         * (mgr_run_check_prepared waits for every ready agent). */
        cl_send_plan(c);
        return;
    }
    if (c->phase != MGR_PH_CONNECT)
        return;
    /* Both checks only wait: the cheap one first (it is called for every
     * agent welcomed, and a walk of all agents each time was quadratic in a
     * fleet's connect). */
    if ((c->listener || c->embedded) && ready < c->expect)
        return;
    /* An accepted connection that has not said hello yet is not an agent:
     * it holds up nothing (a port probe must not delay or fail the run). */
    if (mgr_session_tally_count(&c->f->tally, mgr_session_connecting, false))
        for (size_t i = 0; i < c->f->nagents; i++) {
            enum mgr_session_state st = mgr_agent_state(&c->f->agents[i]);
            pending += mgr_session_connecting(st) &&
                       (mgr_agent_dialled(&c->f->agents[i]) || st == MGR_SESSION_HELLO);
        }
    if (pending)
        return;
    if (mgr_run_count_failed(c) && mgr_run_enough(c, ready))
        mgr_run_leave_out(c, ready);
    if (mgr_run_count_failed(c)) {
        if (c->rc < 3)
            c->rc = 3;
        mgr_run_finish(c);
        return;
    }
    mgr_run_begin(c);
}

/* Moves the current phase on if the agents still taking part are all done
 * with it (after one of them failed or vanished). */
void mgr_run_progress(struct mgr_run *c)
{
    bool all = true;

    c->live_cache = mgr_run_live(c);
    switch (c->phase) {
    case MGR_PH_CONNECT:
        mgr_run_check_connected(c);
        return;
    case MGR_PH_PREPARE:
        mgr_run_check_prepared(c);
        return;
    case MGR_PH_CLOCK:
        all = cl_all_synced(c);
        if (all && (mgr_run_live(c) || c->setup_refused)) {
            mgr_run_start_test(c);
            if (!mgr_run_live(c)) /* every agent refused it: the test ends with no results */
                mgr_run_check_results(c);
        } else if (!mgr_run_live(c))
            mgr_run_finish(c);
        return;
    case MGR_PH_RUN:
        mgr_run_publish_ready(c, false);
        mgr_run_check_results(c);
        return;
    default:
        return;
    }
}
