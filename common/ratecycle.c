/* SPDX-License-Identifier: Apache-2.0 */
/* common/ratecycle.c - rate curve steps and the find_max search: a
 * bisection of rated steps, close ones repeated, the answer confirmed (see
 * common/ratecycle.h). */
#include "common/ratecycle.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t iof_rate_cycle_steps(const struct iof_rate_cycle *rc)
{
    return rc->find_max ? IOF_FIND_MAX_TESTS : 1 + rc->npct;
}

bool iof_rate_cycle_planned(const struct iof_rate_cycle *rc, size_t step)
{
    return !rc->find_max || step < IOF_FIND_MAX_SHORTEST;
}

double iof_rate_curve_frac(const struct iof_rate_cycle *rc, size_t step)
{
    if (step == 0 || step > rc->npct)
        return 0;
    return rc->pct[step - 1] / 100.0;
}

void iof_knee_init(struct iof_knee *k)
{
    *k = (struct iof_knee){.hi = 1};
}

/* Opens the next entry of the log at frac; returns frac. */
static double knee_open(struct iof_knee *k, double frac, bool confirm)
{
    k->step[k->nsteps++] = (struct iof_knee_step){.frac = frac, .confirm = confirm};
    return frac;
}

static double knee_end(struct iof_knee *k)
{
    k->phase = IOF_KNEE_DONE;
    k->done = true;
    return 0;
}

static size_t knee_search_steps(const struct iof_knee *k)
{
    size_t n = 0;
    for (size_t i = 0; i < k->nsteps; i++)
        n += !k->step[i].confirm;
    return n;
}

/* After a failed confirmation at frac: the highest search step met below
 * it, or half of it when there is none. */
static double knee_step_down(const struct iof_knee *k, double frac)
{
    double best = 0;
    for (size_t i = 0; i < k->nsteps; i++) {
        const struct iof_knee_step *s = &k->step[i];
        if (!s->confirm && s->decided && s->met && s->frac < frac && s->frac > best)
            best = s->frac;
    }
    return best > 0 ? best : frac / 2;
}

/* The search is over: confirm the highest fraction met, if any. */
static double knee_settled(struct iof_knee *k)
{
    if (k->lo <= 0)
        return knee_end(k);
    k->phase = IOF_KNEE_CONFIRM;
    return knee_open(k, k->lo, true);
}

static void knee_note_miss(struct iof_knee *k, double frac, double iops, double lat_ns)
{
    if (k->low_frac <= 0 || frac <= k->low_frac) {
        k->low_frac = frac;
        k->low_iops = iops;
        k->low_lat_ns = lat_ns;
    }
}

/* The answer: the confirmation that met, with every run at its fraction. */
static double knee_answer(struct iof_knee *k, const struct iof_knee_step *c)
{
    k->frac = c->frac;
    k->best_iops = c->iops[0];
    k->best_lat_ns = c->lat_ns[0];
    k->runs = k->runs_met = 0;
    for (size_t i = 0; i < k->nsteps; i++)
        if (k->step[i].frac == c->frac) {
            k->runs += k->step[i].runs;
            k->runs_met += k->step[i].nmet;
        }
    return knee_end(k);
}

double iof_knee_feed(struct iof_knee *k, const struct iof_rate_cycle *rc, double frac, double iops,
                     double lat_ns)
{
    double target = (double)rc->target_ns;
    struct iof_knee_step *s;
    bool met, close;

    if (k->done)
        return 0;
    k->tests++;
    if (k->phase == IOF_KNEE_BASE) {
        /* The ceiling, not a candidate (closed-loop latency). */
        k->base_iops = iops;
        if (frac > 0 || iops <= 0)
            return knee_end(k);
        k->phase = IOF_KNEE_SEARCH;
        return knee_open(k, 0.5, false);
    }
    s = &k->step[k->nsteps - 1];
    (void)frac; /* the caller offered s->frac */
    met = lat_ns <= target && iops >= IOF_FIND_MAX_KEEP_UP * s->frac * k->base_iops;
    close = fabs(lat_ns - target) <= IOF_FIND_MAX_BAND * target;
    s->iops[s->runs] = iops;
    s->lat_ns[s->runs] = lat_ns;
    s->runs++;
    s->nmet += met;
    if (!met)
        knee_note_miss(k, s->frac, iops, lat_ns);
    if (s->confirm) {
        s->decided = true;
        s->met = met;
        k->confirms++;
        if (met)
            return knee_answer(k, s);
        if (k->confirms >= IOF_FIND_MAX_CONFIRMS || k->tests >= IOF_FIND_MAX_TESTS)
            return knee_end(k);
        return knee_open(k, knee_step_down(k, s->frac), true);
    }
    /* A miss decides a step; a met run decides it when it was clear of the
     * target or when every run of the step has met. */
    if (met && close && s->runs < IOF_FIND_MAX_RUNS && k->tests < IOF_FIND_MAX_TESTS)
        return s->frac;
    s->decided = true;
    s->met = met;
    if (met)
        k->lo = s->frac;
    else
        k->hi = s->frac;
    if (k->hi - k->lo <= IOF_FIND_MAX_PRECISION + 1e-9 ||
        knee_search_steps(k) >= IOF_FIND_MAX_STEPS || k->tests >= IOF_FIND_MAX_TESTS)
        return knee_settled(k);
    return knee_open(k, (k->lo + k->hi) / 2, false);
}

static void knee_num(double v, char *buf, size_t cap)
{
    if (v >= 1e6)
        snprintf(buf, cap, "%.3g M", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, cap, "%.3g k", v / 1e3);
    else
        snprintf(buf, cap, "%.3g", v);
}

static void knee_time(double ns, char *buf, size_t cap)
{
    if (ns >= 1e9)
        snprintf(buf, cap, "%.3g s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, cap, "%.3g ms", ns / 1e6);
    else
        snprintf(buf, cap, "%.3g us", ns / 1e3);
}

void iof_knee_progress(const struct iof_knee *k, const struct iof_rate_cycle *rc, char *buf,
                       size_t cap)
{
    const struct iof_knee_step *s = NULL;
    const char *m = iof_knee_metric_name(rc->metric);
    char n[32], l[32], t[64], what[96];
    size_t idx = 0;

    if (!cap)
        return;
    buf[0] = '\0';
    if (k->tests == 0)
        return;
    if (k->tests == 1) {
        knee_num(k->base_iops, n, sizeof(n));
        snprintf(buf, cap, "unthrottled: %s IOPS, the ceiling (not judged)", n);
        return;
    }
    /* The entry the last run went to: the current one, or the one before
     * when the run decided it and the next is open and empty. */
    for (size_t i = k->nsteps; i-- > 0;)
        if (k->step[i].runs) {
            s = &k->step[i];
            idx = i;
            break;
        }
    if (!s)
        return;
    knee_num(s->frac * k->base_iops, n, sizeof(n));
    knee_time(s->lat_ns[s->runs - 1], l, sizeof(l));
    knee_time((double)rc->target_ns, t, sizeof(t));
    if (s->iops[s->runs - 1] < IOF_FIND_MAX_KEEP_UP * s->frac * k->base_iops) {
        /* Within the latency target, perhaps, but behind the rate. */
        size_t o = strlen(t);
        snprintf(t + o, sizeof(t) - o, "; achieved %.0f %% of the rate",
                 100 * s->iops[s->runs - 1] / (s->frac * k->base_iops));
    }
    if (!s->decided)
        snprintf(what, sizeof(what), "met, within %.0f %% of the target: run %u of at most %d next",
                 IOF_FIND_MAX_BAND * 100, s->runs + 1, IOF_FIND_MAX_RUNS);
    else
        snprintf(what, sizeof(what), "%s (%u of %u run%s met)", s->met ? "met" : "missed", s->nmet,
                 s->runs, s->runs == 1 ? "" : "s");
    if (s->confirm)
        snprintf(buf, cap, "confirmation %zu, %.4g %% (%s IOPS offered): %s %s (<= %s): %s",
                 idx + 1 - knee_search_steps(k), s->frac * 100, n, m, l, t,
                 s->met ? "confirmed" : "missed, stepping down");
    else
        snprintf(buf, cap, "step %zu, %.4g %% (%s IOPS offered): %s %s (<= %s): %s", idx + 1,
                 s->frac * 100, n, m, l, t, what);
}

void iof_knee_headline(const struct iof_knee *k, const struct iof_rate_cycle *rc, char *buf,
                       size_t cap)
{
    char n[32], t[32], l[32];
    const char *m = iof_knee_metric_name(rc->metric);
    bool confirmed_none = k->confirms > 0;

    knee_time((double)rc->target_ns, t, sizeof(t));
    if (k->best_iops > 0) {
        knee_num(k->best_iops, n, sizeof(n));
        knee_time(k->best_lat_ns, l, sizeof(l));
        snprintf(buf, cap,
                 "max %s IOPS at %s <= %s (confirmed: %s %s at %.4g %% of the unthrottled; %u of "
                 "%u run%s met; %zu tests)",
                 n, m, t, m, l, k->frac * 100, k->runs_met, k->runs, k->runs == 1 ? "" : "s",
                 k->tests);
        return;
    }
    if (k->low_frac <= 0) {
        snprintf(buf, cap,
                 "no rate met %s <= %s: the unthrottled test achieved no I/O (%zu test%s)", m, t,
                 k->tests, k->tests == 1 ? "" : "s");
        return;
    }
    knee_num(k->low_iops, n, sizeof(n));
    knee_time(k->low_lat_ns, l, sizeof(l));
    snprintf(buf, cap,
             "no rate met %s <= %s%s: the lowest step tried, %s IOPS, had %s %s (%zu tests)", m, t,
             confirmed_none ? " in a confirmation run" : "", n, m, l, k->tests);
}
