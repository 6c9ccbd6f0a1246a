/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run.c - `iofleet run` as a sequence of phases: connect (dial
 * --agent, accept on --listen, or start the embedded agent), prepare, and
 * per test clock probes, one start time for every node, intervals and
 * results, then the end. Each agent's connection reports to the run through
 * callbacks (manager/agent_conn.h), and its state is a session
 * (manager/session.c); the run makes every cross-agent and phase decision,
 * admission included. The figures of a test are the aggregate's
 * (manager/aggregate.c).
 */
#include "manager/run.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/stats.h"
#include "proto/link.h"
#include "proto/plan.h"
#include "proto/version.h"

#include "manager/agent_conn.h"
#include "manager/agent_rates.h"
#include "manager/aggregate.h"
#include "manager/local_agent.h"
#include "manager/console.h"
#include "manager/sink.h"
#include "manager/session.h"
#include "manager/term.h"

#define CL_PROBES 8          /* clock probes per agent and test */
#define CL_START_LEAD_MS 300 /* start this long after the last probe */
#define CL_CLOCK_WAIT_S 10   /* for every agent's clock probes */
#define CL_SETUP_WAIT_S 60   /* for every agent's test set-up (and clock probes) */
#define CL_RESULT_GRACE_NS (30ULL * IOF_NS_PER_S) /* after the end, for results */
#define CL_CHILD_GRACE_MS 10000 /* the embedded agent's own end, before a SIGTERM */
/* TLS handshakes the --listen manager runs at once; more connections wait
 * their turn, unread, newest first (iof_listener_set_admission;
 * docs/scaling.md). */
#define MGR_HANDSHAKES_AT_ONCE 256

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
    unsigned live_cache; /* cl_live(), refreshed on every change of the agent set */
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

static struct mgr_run *cl_of(const struct mgr_agent *a)
{
    return a->f->run;
}

/* The phase, and the stage the agents' connections see of it. */
static void cl_set_phase(struct mgr_run *c, enum mgr_run_phase ph)
{
    c->phase = ph;
    c->f->stage = ph == MGR_PH_CONNECT ? MGR_FLEET_CONNECT
                  : ph == MGR_PH_DONE  ? MGR_FLEET_OVER
                                       : MGR_FLEET_STARTED;
}

static void cl_next_test(struct mgr_run *c);
static void cl_check_connected(struct mgr_run *c);
static void cl_check_prepared(struct mgr_run *c);
static void cl_check_results(struct mgr_run *c);
static void cl_progress(struct mgr_run *c);
static void cl_finish(struct mgr_run *c);
static void cl_close_handle(struct mgr_run *c, uv_handle_t *h);

/* How long after a test's end (or after an agent's last read-back progress,
 * verify_mode "after") the results may take: CL_RESULT_GRACE_NS, or
 * IOF_RESULT_GRACE_MS from the environment (docs/reliability.md: tests use
 * it to reach the limit in seconds). */
static uint64_t cl_result_grace_ns(void)
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

/* Agents whose session is up (welcomed, connected). */
static unsigned cl_count_up(const struct mgr_run *c)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->f->nagents; i++)
        n += mgr_session_is_up(mgr_agent_state(&c->f->agents[i]));
    return n;
}

/* Failed agents the run does not go on without (--min-agents leaves some out). */
static unsigned cl_count_failed(const struct mgr_run *c)
{
    unsigned n = c->f->tally.n[MGR_SESSION_FAILED];
    for (size_t i = 0; i < c->f->nagents && n; i++)
        n -= c->f->agents[i].left_out && mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_FAILED;
    return n;
}

/* --min-agents: enough agents connected to start without the others. */
static bool cl_enough(const struct mgr_run *c, unsigned ready)
{
    return c->o->min_agents && ready >= c->o->min_agents;
}

/* --min-agents: the run goes on without the agents that failed to connect
 * (each was named with its reason as it failed): one line names them. */
#define CL_LEFT_OUT_NAMED 8

static void cl_leave_out(struct mgr_run *c, unsigned ready)
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

/* --- result files --------------------------------------------------------------------- */

#define CL_SINKS(c, call)                                                                          \
    do {                                                                                           \
        for (size_t si_ = 0; si_ < (c)->o->nsinks; si_++) {                                        \
            struct mgr_sink *s_ = (c)->o->sinks[si_];                                              \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

/* A stats or result body must have the shape the plan gives the agent:
 * anything else is a protocol error that drops it. */
static bool cl_shape_ok(struct mgr_agent *a, const struct proto_stats *st)
{
    struct iof_diag d = {{0}};
    if (!mgr_agg_check_shape(&cl_of(a)->agg, &a->agg, st, &d))
        return true;
    mgr_agent_fail(a, MGR_SESSION_EV_LOST, 1, "%s", d.msg);
    return false;
}

static void cl_sinks_run_begin(struct mgr_run *c)
{
    struct mgr_run_info ri = {
        .plan = c->p, .plan_text = c->plan_text, .start_wall_ns = c->run_wall_ns};
    size_t n = 0;

    if (!c->o->nsinks)
        return;
    c->infos = calloc(c->f->nagents ? c->f->nagents : 1, sizeof(*c->infos));
    for (size_t i = 0; c->infos && i < c->f->nagents; i++) {
        if (!mgr_session_is_up(mgr_agent_state(&c->f->agents[i])))
            continue;
        c->infos[n].name = c->f->agents[i].name;
        c->infos[n].endpoint = c->f->agents[i].endpoint;
        c->infos[n].hello = &c->f->agents[i].info;
        n++;
    }
    ri.agents = c->infos;
    ri.nagents = n;
    CL_SINKS(c, s_->ops->run_begin(s_, &ri));
}

/* --- interval aggregation ---------------------------------------------------------- */

/* Ready agents taking part in what is going on: during a test's clock and
 * run phases only those that started it; otherwise every ready agent. */
static bool (*cl_part_state(const struct mgr_run *c))(enum mgr_session_state)
{
    return c->phase != MGR_PH_CLOCK && c->phase != MGR_PH_RUN ? mgr_session_is_up
                                                              : mgr_session_in_test;
}

static bool cl_part(const struct mgr_run *c, const struct mgr_agent *a)
{
    return cl_part_state(c)(mgr_agent_state(a));
}

/* Agents of the run: welcomed at some point and not superseded. */
static bool cl_not_gone(enum mgr_session_state st)
{
    return st != MGR_SESSION_GONE;
}

static unsigned cl_members(const struct mgr_run *c)
{
    return mgr_session_tally_count(&c->f->tally, cl_not_gone, true);
}

/* As many as cl_part() is true for. */
static unsigned cl_live(const struct mgr_run *c)
{
    return mgr_session_tally_count(&c->f->tally, cl_part_state(c), false);
}

static unsigned cl_live_hook(void *arg)
{
    return cl_live(arg);
}

static unsigned cl_members_hook(void *arg)
{
    return cl_members(arg);
}

/* live_cache: counting the agents per message would cost O(N^2) per
 * interval; it is refreshed whenever an agent drops out. */
static void cl_publish_ready(struct mgr_run *c, bool force)
{
    mgr_agg_publish_ready(&c->agg, c->live_cache, force);
}

static void cl_on_stats(void *run, struct mgr_agent *a, const struct proto_stats *st)
{
    struct mgr_run *c = run;
    struct iof_diag d = {{0}};

    if (c->phase != MGR_PH_RUN || st->test != c->cur ||
        (mgr_agent_state(a) != MGR_SESSION_RUNNING && mgr_agent_state(a) != MGR_SESSION_RESULTED))
        return;
    if (mgr_agg_stats(&c->agg, &a->agg, st, &d)) {
        mgr_agent_fail(a, MGR_SESSION_EV_LOST, 1, "%s", d.msg);
        return;
    }
    cl_publish_ready(c, false);
}

/* --- final results ---------------------------------------------------------------------- */

static void cl_on_verify_progress(void *run, struct mgr_agent *a,
                                  const struct proto_prepare_progress *p)
{
    struct mgr_run *c = run;
    uint64_t until;

    if (c->phase != MGR_PH_RUN || c->rc == 130 || mgr_agent_state(a) != MGR_SESSION_RUNNING)
        return;
    /* The test's window is over and this agent is still reading back what
     * it wrote: the wait for its result starts again from now. */
    until = iof_now_ns() + cl_result_grace_ns();
    if (c->deadline && until > c->deadline)
        c->deadline = until;
    if (!c->o->quiet) {
        mgr_live_done(&c->live);
        IOF_USER("%s: test %zu: verifying what it wrote: %" PRIu64 " / %" PRIu64 " MiB read back",
                 a->name, c->cur + 1, p->done >> 20, p->total >> 20);
    }
}

static void cl_take_result(struct mgr_run *c, struct mgr_agent *a, const struct proto_stats *st)
{
    uint64_t first, last;

    if (c->phase != MGR_PH_RUN || st->test != c->cur || mgr_agent_state(a) != MGR_SESSION_RUNNING ||
        !cl_shape_ok(a, st))
        return;
    mgr_agent_fire(a, MGR_SESSION_EV_RESULT);
    if (!st->interrupted && st->measured_ns < c->run.duration_ns)
        c->ended_early = true; /* its workers reached their io_limit */
    /* Agent clock -> ours; a time off the clock (hostile or broken) is
     * unknown (0), never an overflow. */
    if (!st->started_first_ns || a->offset == INT64_MIN ||
        iof_time_add_offset(st->started_first_ns, -a->offset, &first))
        first = 0;
    if (!st->started_last_ns || a->offset == INT64_MIN ||
        iof_time_add_offset(st->started_last_ns, -a->offset, &last))
        last = 0;
    if (mgr_agg_result(&c->agg, &a->agg, st, first, last) && c->rc < 1)
        c->rc = 1;
    if (c->tests[c->cur].cycle_param == IOF_CYCLE_RATE && c->tests[c->cur].cycle_value == 0)
        mgr_agent_rates_base(a, st);
}

/* --- rate cycles (common/ratecycle.h) ------------------------------------------------- */

/* The fraction of the unthrottled IOPS the current test offers (0: none). */
static double cl_rate_frac(const struct mgr_run *c)
{
    const struct iof_test *t = &c->tests[c->cur];

    if (t->cycle_param != IOF_CYCLE_RATE || t->cycle_value == 0)
        return 0;
    return c->p->cycle.rate.find_max ? c->next_frac
                                     : iof_rate_curve_frac(&c->p->cycle.rate, t->cycle_value);
}

/* Each taking part agent's rates for the current test, and the test's
 * target (set before the test begins: its label carries them). */
static void cl_rate_plan(struct mgr_run *c)
{
    struct iof_test *t = &c->tests[c->cur];
    double frac = cl_rate_frac(c), total = 0;

    t->rate_frac = frac;
    t->rate_target = 0;
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        mgr_agent_rates_clear(a, t->cycle_param == IOF_CYCLE_RATE && t->cycle_value == 0);
        if (frac <= 0 || !cl_part(c, a))
            continue;
        if (!a->nbase) {
            IOF_WARN("test %zu: %s has no unthrottled result to scale: it runs unthrottled",
                     c->cur + 1, a->name);
            continue;
        }
        total += mgr_agent_rates_set(a, frac);
    }
    t->rate_target = total;
}

/* After a rate test: a find_max search takes the test's figures and picks
 * the next rate (a new step, the same again, or a confirmation), each run
 * printed as it is judged; when it is over, the headline, and the spec's
 * remaining planned tests (IOF_FIND_MAX_TESTS, a bound) are skipped. */
static void cl_rate_after(struct mgr_run *c)
{
    const struct iof_test *t = &c->tests[c->cur];
    const struct iof_rate_cycle *rc = &c->p->cycle.rate;
    const struct mgr_metrics *m = &c->agg.last_all;
    size_t steps = iof_rate_cycle_steps(rc), last = (c->cur / steps) * steps + steps - 1;
    double lat, next;
    char line[256], spec[160];

    if (t->cycle_param != IOF_CYCLE_RATE || !rc->find_max)
        return;
    if (t->cycle_value == 0)
        iof_knee_init(&c->knee);
    iof_test_spec_label(c->p, t, spec, sizeof(spec));
    lat = rc->metric == IOF_KNEE_P99    ? m->p99_ms
          : rc->metric == IOF_KNEE_P999 ? m->p999_ms
                                        : m->avg_ms;
    next = iof_knee_feed(&c->knee, rc, t->rate_frac, m->iops, lat * 1e6);
    if (!c->o->quiet) {
        iof_knee_progress(&c->knee, rc, line, sizeof(line));
        printf("\nspec '%s': find_max %s\n", spec, line);
        fflush(stdout);
    }
    /* The search ends within the spec's planned tests (IOF_FIND_MAX_TESTS
     * bounds it); the last one ends it whatever it found. */
    if (!c->knee.done && c->cur < last) {
        c->next_frac = next;
        return;
    }
    iof_knee_headline(&c->knee, rc, line, sizeof(line));
    printf("\nspec '%s': %s\n", spec, line);
    fflush(stdout);
    mgr_agg_headline(&c->agg, &c->knee, line);
    /* Jump to the last test of this spec: cl_end_test moves past it. */
    c->cur = last;
}

/* A find_max plan runs only with agents that lay its tests out as this
 * manager does (proto_find_max_ok); an older one fails here, before it has
 * the plan, rather than run another test than the one started. */
static bool cl_rate_agent_ok(struct mgr_agent *a)
{
    const struct iof_rate_cycle *rc = &cl_of(a)->p->cycle.rate;

    if (cl_of(a)->p->cycle.param != IOF_CYCLE_RATE || !rc->find_max ||
        proto_find_max_ok(a->info.minor))
        return true;
    mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3,
                   "speaks protocol %u.%u: a find_max plan needs 1.%d on both sides (its search "
                   "lays out its tests otherwise): upgrade the agent",
                   a->info.major, a->info.minor, PROTO_MINOR_FIND_MAX);
    return false;
}

/* Agents of the run that take no part in the current test (one entry per
 * name: an agent back in another slot, or lost in the test, is not). */
static bool cl_absent(const struct mgr_run *c, const struct mgr_agent *a)
{
    if (!a->s.member || mgr_agent_state(a) == MGR_SESSION_GONE || a->agg.role != MGR_AGG_NONE)
        return false;
    for (size_t i = 0; i < c->f->nagents; i++) {
        const struct mgr_agent *o = &c->f->agents[i];
        if (o == a || strcmp(o->name, a->name))
            continue;
        if (o->agg.role != MGR_AGG_NONE ||
            (o->s.member && mgr_agent_state(o) != MGR_SESSION_GONE && o < a))
            return false;
    }
    return true;
}

/* --- test sequencing ------------------------------------------------------------------- */

static void cl_send_all(struct mgr_run *c, const struct proto_msg *m)
{
    for (size_t i = 0; i < c->f->nagents; i++)
        if (mgr_session_is_up(mgr_agent_state(&c->f->agents[i])))
            proto_link_send(c->f->agents[i].link, m);
}

static void cl_end_test(struct mgr_run *c)
{
    uint64_t now = iof_now_ns(), measured = c->run.duration_ns;
    struct mgr_agg_node **nodes = calloc(c->f->nagents ? c->f->nagents : 1, sizeof(*nodes));
    size_t n = 0;

    cl_publish_ready(c, true);
    /* Nothing measured is dropped: a node lost in the test keeps the
     * intervals that arrived; an agent of the run not in it is named. */
    for (size_t i = 0; i < c->f->nagents; i++)
        if (c->f->agents[i].agg.role == MGR_AGG_LOST &&
            mgr_agg_lost(&c->agg, &c->f->agents[i].agg) && c->rc < 1)
            c->rc = 1;
    for (size_t i = 0; i < c->f->nagents; i++)
        if (cl_absent(c, &c->f->agents[i]))
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
    if (c->rc == 130 || cl_live(c) == 0) {
        cl_finish(c);
        return;
    }
    cl_rate_after(c);
    c->cur++;
    cl_next_test(c);
}

static void cl_check_results(struct mgr_run *c)
{
    for (size_t i = 0; i < c->f->nagents; i++)
        if (cl_part(c, &c->f->agents[i]) &&
            mgr_agent_state(&c->f->agents[i]) != MGR_SESSION_RESULTED)
            return;
    cl_end_test(c);
}

static void cl_start_test(struct mgr_run *c)
{
    struct proto_msg m;
    uint64_t max_rtt = 0;

    for (size_t i = 0; i < c->f->nagents; i++)
        if (cl_part(c, &c->f->agents[i]) && c->f->agents[i].best_rtt > max_rtt)
            max_rtt = c->f->agents[i].best_rtt;
    c->run = iof_test_run(c->p, &c->tests[c->cur]);
    c->ended_early = false;
    c->start_at = iof_now_ns() + CL_START_LEAD_MS * IOF_NS_PER_MS + max_rtt;
    c->measure_start = c->start_at + c->run.ramp_ns;
    c->end = c->measure_start + c->run.duration_ns;
    mgr_agg_test_begin(&c->agg, c->cur, &c->run, c->measure_start);
    if (c->run.ramp_ns)
        mgr_live_ramp(&c->live, (unsigned)c->cur + 1, (unsigned)c->ntests,
                      (double)c->run.ramp_ns / 1e9);
    cl_set_phase(c, MGR_PH_RUN);
    c->live_cache = cl_live(c);
    c->deadline = c->end + cl_result_grace_ns();
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        if (!cl_part(c, a))
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
        if (cl_part(c, &c->f->agents[i]) && (st == MGR_SESSION_PROBING || st == MGR_SESSION_SETUP))
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

static void cl_on_clock_reply(void *run, struct mgr_agent *a, const struct proto_clock_reply *r)
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
        cl_start_test(c);
}

static void cl_on_ready(void *run, struct mgr_agent *a, const struct proto_ready *r)
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
    unsigned n = 0;

    proto_msg_init(&plan, PROTO_MSG_PLAN);
    plan.u.plan.text = c->wire_text;
    plan.u.plan.len = strlen(c->wire_text);
    proto_msg_init(&prep, PROTO_MSG_PREPARE);
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        if (mgr_agent_state(a) != MGR_SESSION_READY || !cl_rate_agent_ok(a))
            continue;
        /* run.cleanup travels in the prepare, from protocol 1.2 on. */
        prep.u.prepare.cleanup = c->p->run.cleanup && proto_clean_ok(a->info.minor);
        if (c->p->run.cleanup && !prep.u.prepare.cleanup)
            IOF_WARN("agent %s (%s) speaks protocol %u.%u: it keeps the test files it creates "
                     "(run.cleanup needs 1.2)",
                     a->name, a->endpoint, a->info.major, a->info.minor);
        proto_link_send(a->link, &plan);
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
        cl_finish(c);
        return;
    }
    /* An agent that came back prepares before it takes part. */
    for (size_t i = 0; i < c->f->nagents; i++) {
        if (mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_RESULTED)
            mgr_agent_fire(&c->f->agents[i], MGR_SESSION_EV_TEST_END);
        mgr_agg_node_clear_role(&c->f->agents[i].agg);
    }
    if (cl_send_plan(c)) {
        cl_set_phase(c, MGR_PH_PREPARE);
        c->deadline = 0;
        return;
    }
    for (size_t i = 0; i < c->f->nagents; i++)
        ready += mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_PREPARED;
    if (ready == 0) {
        cl_finish(c);
        return;
    }
    cl_set_phase(c, MGR_PH_CLOCK);
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
    cl_rate_plan(c);
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        struct proto_msg m;
        if (mgr_agent_state(a) == MGR_SESSION_PROBING) {
            cl_send_probe(a);
            continue;
        }
        if (mgr_agent_state(a) != MGR_SESSION_SETUP)
            continue;
        c->deadline = iof_now_ns() + CL_SETUP_WAIT_S * IOF_NS_PER_S;
        proto_msg_init(&m, PROTO_MSG_SETUP);
        m.u.setup.test = (uint32_t)c->cur;
        m.u.setup.rates = a->rates;
        m.u.setup.nrates = a->nrates;
        proto_link_send(a->link, &m);
    }
}

static void cl_check_prepared(struct mgr_run *c)
{
    for (size_t i = 0; i < c->f->nagents; i++)
        if (mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_READY ||
            mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_PREPARING)
            return;
    mgr_live_done(&c->live);
    if (cl_count_up(c) == 0) {
        cl_finish(c);
        return;
    }
    cl_next_test(c);
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
    return 0;
}

static void cl_begin(struct mgr_run *c)
{
    unsigned ready = cl_live(c);
    int r;

    if (ready == 0) {
        IOF_USER("iofleet: no agent to run on");
        if (c->rc < 3)
            c->rc = 3;
        cl_finish(c);
        return;
    }
    r = cl_check_nodes(c);
    if (r) {
        c->rc = r;
        cl_finish(c);
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
    cl_sinks_run_begin(c);
    cl_set_phase(c, MGR_PH_PREPARE);
    c->deadline = 0; /* preparation takes as long as writing the files takes */
    c->cur = 0;
    cl_send_plan(c);
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

static void cl_check_connected(struct mgr_run *c)
{
    unsigned ready = cl_live(c), pending = 0;
    if (c->phase == MGR_PH_PREPARE) {
        /* Back while the others prepare for the next test: it prepares too
         * (cl_check_prepared waits for every ready agent). */
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
    if (cl_count_failed(c) && cl_enough(c, ready))
        cl_leave_out(c, ready);
    if (cl_count_failed(c)) {
        if (c->rc < 3)
            c->rc = 3;
        cl_finish(c);
        return;
    }
    cl_begin(c);
}

/* Moves the current phase on if the agents still taking part are all done
 * with it (after one of them failed or vanished). */
static void cl_progress(struct mgr_run *c)
{
    bool all = true;

    c->live_cache = cl_live(c);
    switch (c->phase) {
    case MGR_PH_CONNECT:
        cl_check_connected(c);
        return;
    case MGR_PH_PREPARE:
        cl_check_prepared(c);
        return;
    case MGR_PH_CLOCK:
        all = cl_all_synced(c);
        if (all && (cl_live(c) || c->setup_refused)) {
            cl_start_test(c);
            if (!cl_live(c)) /* every agent refused it: the test ends with no results */
                cl_check_results(c);
        } else if (!cl_live(c))
            cl_finish(c);
        return;
    case MGR_PH_RUN:
        cl_publish_ready(c, false);
        cl_check_results(c);
        return;
    default:
        return;
    }
}

/* --- what the agents' connections report (struct mgr_agent_ops) ---------------------- */

static void cl_on_result(void *run, struct mgr_agent *a, const struct proto_stats *st)
{
    struct mgr_run *c = run;
    cl_take_result(c, a, st);
    if (c->phase == MGR_PH_RUN)
        cl_check_results(c);
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
    cl_check_connected(c);
}

static void cl_on_error(void *run, struct mgr_agent *a, const struct proto_error *e)
{
    struct mgr_run *c = run;
    enum mgr_session_state st = mgr_agent_state(a);

    if (c->phase == MGR_PH_CONNECT || mgr_session_connecting(st)) {
        mgr_agent_fail(a, MGR_SESSION_EV_FAIL, 3, "refused: %s", e->message);
        cl_check_connected(c);
        return;
    }
    if (st == MGR_SESSION_SETUP)
        c->setup_refused = true;
    mgr_agent_fail(a, MGR_SESSION_EV_FAIL, e->code == IOF_EPLAN ? 2 : 1, "%s", e->message);
    if (c->phase == MGR_PH_PREPARE)
        cl_check_prepared(c);
    else if (c->phase == MGR_PH_RUN)
        cl_check_results(c);
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
        cl_check_prepared(c);
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
    cl_check_connected(run);
}

static void cl_on_lost(void *run, struct mgr_agent *a)
{
    (void)a;
    cl_progress(run);
}

static const struct mgr_agent_ops cl_agent_ops = {
    .admit = cl_admit,
    .on_hello = cl_on_hello,
    .on_welcome = cl_on_welcome,
    .on_error = cl_on_error,
    .on_prepared = cl_on_prepared,
    .on_ready = cl_on_ready,
    .on_clock_reply = cl_on_clock_reply,
    .on_stats = cl_on_stats,
    .on_result = cl_on_result,
    .on_verify_progress = cl_on_verify_progress,
    .on_unanswered = cl_on_unanswered,
    .on_unreachable = cl_on_unreachable,
    .on_lost = cl_on_lost,
};

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
            cl_finish(c);
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
    mgr_live_wait(&c->live, cl_live(c), c->listener ? c->expect : (unsigned)c->o->nagents,
                  first->endpoint, first->why, more, (double)left);
}

static void cl_on_tick(uv_timer_t *t)
{
    struct mgr_run *c = t->data;
    uint64_t now = iof_now_ns();

    c->live_cache = cl_live(c);
    CL_SINKS(c, if (s_->ops->flush) s_->ops->flush(s_));
    if (c->phase == MGR_PH_RUN && c->run.ramp_ns && now < c->measure_start)
        mgr_live_ramp_tick(&c->live, (unsigned)c->cur + 1, (unsigned)c->ntests,
                           (double)c->run.ramp_ns / 1e9, (double)(c->measure_start - now) / 1e9);
    if (c->phase == MGR_PH_RUN)
        cl_publish_ready(c, false);
    if (c->phase == MGR_PH_CONNECT && c->deadline > now)
        cl_wait_tick(c, now);
    if (!c->deadline || now < c->deadline)
        return;
    switch (c->phase) {
    case MGR_PH_CONNECT: {
        unsigned ready = cl_live(c);
        /* With --min-agents met, those not connected are left out, which
         * does not make the run fail (cl_check_connected). */
        int rc = cl_enough(c, ready) ? 0 : 3;
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
        if (rc && ready && !c->listener && cl_count_failed(c))
            IOF_USER("iofleet: %u of %zu agents connected; --min-agents %u would go on without "
                     "the others",
                     ready, c->o->nagents, ready);
        if (c->listener && ready < c->expect && cl_enough(c, ready)) {
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
            cl_finish(c);
            return;
        }
        cl_check_connected(c);
        return;
    }
    case MGR_PH_CLOCK:
        for (size_t i = 0; i < c->f->nagents; i++) {
            if (!cl_part(c, &c->f->agents[i]))
                continue;
            if (mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_PROBING)
                mgr_agent_fail(&c->f->agents[i], MGR_SESSION_EV_LOST, 1, "no clock reply");
            else if (mgr_agent_state(&c->f->agents[i]) == MGR_SESSION_SETUP)
                mgr_agent_fail(&c->f->agents[i], MGR_SESSION_EV_LOST, 1,
                               "test %zu not set up within %d s", c->cur + 1, CL_SETUP_WAIT_S);
        }
        if (cl_live(c))
            cl_start_test(c);
        else
            cl_finish(c);
        return;
    case MGR_PH_RUN: {
        size_t cur = c->cur;
        /* Results received but not handled yet (proto_link_set_deferred)
         * came within the grace: handled first, which may end the test. */
        for (size_t i = 0; i < c->f->nagents && c->phase == MGR_PH_RUN && c->cur == cur; i++)
            if (cl_part(c, &c->f->agents[i]) && c->f->agents[i].link)
                proto_link_flush_deferred(c->f->agents[i].link);
        if (c->phase != MGR_PH_RUN || c->cur != cur)
            return;
        for (size_t i = 0; i < c->f->nagents; i++)
            if (cl_part(c, &c->f->agents[i]) &&
                mgr_agent_state(&c->f->agents[i]) != MGR_SESSION_RESULTED)
                mgr_agent_fail(&c->f->agents[i], MGR_SESSION_EV_LOST, 1, "no result for test %zu",
                               c->cur + 1);
        cl_end_test(c);
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
        cl_finish(c);
        return;
    }
    c->rc = 130;
    mgr_agg_interrupt(&c->agg);
    mgr_live_done(&c->live);
    IOF_USER("iofleet: interrupted: stopping the agents and collecting results");
    if (c->phase != MGR_PH_RUN) {
        cl_finish(c);
        return;
    }
    proto_msg_init(&m, PROTO_MSG_STOP);
    m.u.stop.reason = "interrupted";
    cl_send_all(c, &m);
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

/* Ctrl-Z in a run with the embedded agent: that agent is in a session of
 * its own (cl_spawn_local), out of the terminal's reach, so it is
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
    CL_SINKS(c, s_->ops->run_end(s_, rc));
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

static void cl_finish(struct mgr_run *c)
{
    if (c->phase == MGR_PH_DONE)
        return;
    cl_set_phase(c, MGR_PH_DONE);
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
    cl_set_phase(c, MGR_PH_CONNECT);
    c->run_wall_ns = iof_wall_ns();
    c->run_mono_ns = iof_now_ns();
    {
        struct mgr_agg_hooks hooks = {.live = cl_live_hook, .members = cl_members_hook, .arg = c};
        mgr_agg_init(&c->agg, p, c->tests, c->ntests, o->sinks, o->nsinks, &c->live, &hooks,
                     o->verbose, c->run_mono_ns);
        c->agg.rows = o->rows;
    }
    c->deadline = iof_now_ns() + o->wait_ms * IOF_NS_PER_MS;
    c->f->ops = &cl_agent_ops;
    c->f->run = c;
    c->f->live = &c->live;
    c->f->rc = &c->rc;
    if (env->fleet) {
        /* Connected already: the run begins with the agents that are up. */
        cl_begin(c);
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
            cl_finish(c);
        }
    } else if (o->listen) {
        char host[256] = "127.0.0.1";
        if (iof_addr_parse(o->listen, host, sizeof(host), IOF_DEFAULT_PORT, &port, &d)) {
            IOF_USER("iofleet: --listen %s: %s", o->listen, d.msg);
            c->rc = 2;
            cl_finish(c);
        } else if (c->tls_server ? iof_listener_start_tls(c->loop, host, port, c->tls_server,
                                                          mgr_agent_on_accept, mgr_agent_on_reject,
                                                          c->f, &c->listener, &d)
                                 : iof_listener_start(c->loop, host, port, mgr_agent_on_accept,
                                                      c->f, &c->listener, &d)) {
            IOF_USER("iofleet: %s", d.msg);
            c->rc = 3;
            cl_finish(c);
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
                cl_finish(c);
                break;
            }
            a->unix_path = upath;
            snprintf(a->host, sizeof(a->host), "unix");
        } else if (iof_addr_parse(o->agents[i], a->host, sizeof(a->host), IOF_DEFAULT_PORT,
                                  &a->port, &d)) {
            IOF_USER("iofleet: --agent %s: %s", o->agents[i], d.msg);
            c->rc = 2;
            cl_finish(c);
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
    uv_run(env.loop, UV_RUN_DEFAULT);
    uv_loop_close(env.loop);
    mgr_run_free(r);
    return rc;
}
