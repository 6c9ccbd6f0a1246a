/* SPDX-License-Identifier: Apache-2.0 */
/* manager/run_test.c - a test's figures and the decisions taken on them: the
 * result files' start, which agents take part, intervals and final results
 * into the aggregate (manager/aggregate.c), and rate cycles (each agent's
 * rates, a find_max search's next step).
 */
#include "manager/run_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "proto/version.h"

#include "manager/agent_rates.h"
#include "manager/session.h"

/* --- result files --------------------------------------------------------------------- */

/* A stats or result body must have the shape the plan gives the agent:
 * anything else is a protocol error that drops it. */
static bool cl_shape_ok(struct mgr_agent *a, const struct proto_stats *st)
{
    struct iof_diag d = {{0}};
    if (!mgr_agg_check_shape(&mgr_run_of(a)->agg, &a->agg, st, &d))
        return true;
    mgr_agent_fail(a, MGR_SESSION_EV_LOST, 1, "%s", d.msg);
    return false;
}

void mgr_run_sinks_run_begin(struct mgr_run *c)
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
    MGR_RUN_SINKS(c, s_->ops->run_begin(s_, &ri));
}

/* --- interval aggregation ---------------------------------------------------------- */

/* Ready agents taking part in what is going on: during a test's clock and
 * run phases only those that started it; otherwise every ready agent. */
static bool (*cl_part_state(const struct mgr_run *c))(enum mgr_session_state)
{
    return c->phase != MGR_PH_CLOCK && c->phase != MGR_PH_RUN ? mgr_session_is_up
                                                              : mgr_session_in_test;
}

bool mgr_run_part(const struct mgr_run *c, const struct mgr_agent *a)
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

/* As many as mgr_run_part() is true for. */
unsigned mgr_run_live(const struct mgr_run *c)
{
    return mgr_session_tally_count(&c->f->tally, cl_part_state(c), false);
}

unsigned mgr_run_live_hook(void *arg)
{
    return mgr_run_live(arg);
}

unsigned mgr_run_members_hook(void *arg)
{
    return cl_members(arg);
}

/* live_cache: counting the agents per message would cost O(N^2) per
 * interval; it is refreshed whenever an agent drops out. */
void mgr_run_publish_ready(struct mgr_run *c, bool force)
{
    mgr_agg_publish_ready(&c->agg, c->live_cache, force);
}

void mgr_run_on_stats(void *run, struct mgr_agent *a, const struct proto_stats *st)
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
    mgr_run_publish_ready(c, false);
}

/* --- final results ---------------------------------------------------------------------- */

void mgr_run_on_verify_progress(void *run, struct mgr_agent *a,
                                const struct proto_prepare_progress *p)
{
    struct mgr_run *c = run;
    uint64_t until;

    if (c->phase != MGR_PH_RUN || c->rc == 130 || mgr_agent_state(a) != MGR_SESSION_RUNNING)
        return;
    /* The test's window is over and this agent is still reading back what
     * it wrote: the wait for its result starts again from now. */
    until = iof_now_ns() + mgr_run_result_grace_ns();
    if (c->deadline && until > c->deadline)
        c->deadline = until;
    if (!c->o->quiet) {
        mgr_live_done(&c->live);
        IOF_USER("%s: test %zu: verifying what it wrote: %" PRIu64 " / %" PRIu64 " MiB read back",
                 a->name, c->cur + 1, p->done >> 20, p->total >> 20);
    }
}

void mgr_run_take_result(struct mgr_run *c, struct mgr_agent *a, const struct proto_stats *st)
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
void mgr_run_rate_plan(struct mgr_run *c)
{
    struct iof_test *t = &c->tests[c->cur];
    double frac = cl_rate_frac(c), total = 0;

    t->rate_frac = frac;
    t->rate_target = 0;
    for (size_t i = 0; i < c->f->nagents; i++) {
        struct mgr_agent *a = &c->f->agents[i];
        mgr_agent_rates_clear(a, t->cycle_param == IOF_CYCLE_RATE && t->cycle_value == 0);
        if (frac <= 0 || !mgr_run_part(c, a))
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
void mgr_run_rate_after(struct mgr_run *c)
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
    /* Jump to the last test of this spec: mgr_run_end_test moves past it. */
    c->cur = last;
}

/* A find_max plan runs only with agents that lay its tests out as this
 * manager does (proto_find_max_ok); an older one fails here, before it has
 * the plan, rather than run another test than the one started. */
bool mgr_run_rate_agent_ok(struct mgr_agent *a)
{
    const struct iof_rate_cycle *rc = &mgr_run_of(a)->p->cycle.rate;

    if (mgr_run_of(a)->p->cycle.param != IOF_CYCLE_RATE || !rc->find_max ||
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
bool mgr_run_absent(const struct mgr_run *c, const struct mgr_agent *a)
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
