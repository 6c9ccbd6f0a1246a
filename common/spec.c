/* SPDX-License-Identifier: Apache-2.0 */
/* common/spec.c - plan structs: freeing, cycle arithmetic and expansion into
 * tests. Pure functions over struct iof_plan; no I/O, no cJSON. */
#include "common/spec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ratecycle.h"

void iof_plan_free(struct iof_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nspecs && p->specs; i++)
        free(p->specs[i].lines);
    free(p->specs);
    for (size_t g = 0; g < p->nworkers && p->workers; g++) {
        struct iof_worker_cfg *w = &p->workers[g];
        for (size_t i = 0; i < w->nnodes && w->nodes; i++)
            free(w->nodes[i]);
        free(w->nodes);
        free(w->specs);
        for (size_t i = 0; i < w->ntargets && w->targets; i++) {
            struct iof_target_cfg *t = &w->targets[i];
            for (size_t k = 0; k < t->nnode_paths; k++) {
                free(t->node_paths[k].node);
                free(t->node_paths[k].path);
            }
            free(t->node_paths);
        }
        free(w->targets);
    }
    free(p->workers);
    for (size_t i = 0; i < p->nnotes && p->notes; i++)
        free(p->notes[i]);
    free(p->notes);
    memset(p, 0, sizeof(*p));
}

const char *iof_target_path(const struct iof_target_cfg *t, const char *node)
{
    for (size_t i = 0; node && i < t->nnode_paths; i++)
        if (!strcmp(t->node_paths[i].node, node))
            return t->node_paths[i].path;
    return t->path;
}

/* The value of cycle step k (k < iof_plan_cycle_steps()). */
static uint64_t cycle_value(const struct iof_cycle *c, size_t k)
{
    uint64_t v = c->from;

    if (!c->exponential)
        return c->from + (uint64_t)k * c->step;
    while (k--)
        v *= c->step;
    return v;
}

size_t iof_plan_cycle_steps(const struct iof_plan *p)
{
    const struct iof_cycle *c = &p->cycle;
    size_t n = 0;

    if (c->param == IOF_CYCLE_NONE)
        return 1;
    if (c->param == IOF_CYCLE_RATE)
        return iof_rate_cycle_steps(&c->rate);
    if (c->from > c->to)
        return 0;
    if (!c->exponential) {
        /* A zero step would never advance: treat it as a single step. */
        if (c->step == 0)
            return 1;
        return (size_t)((c->to - c->from) / c->step) + 1;
    }
    if (c->step < 2 || c->from == 0)
        return 1;
    for (uint64_t v = c->from; v <= c->to; v *= c->step) {
        n++;
        if (v > c->to / c->step)
            break; /* next value would exceed `to` (or overflow) */
    }
    return n;
}

size_t iof_plan_positions(const struct iof_plan *p)
{
    size_t n = p->nworkers ? 0 : p->nspecs;

    for (size_t g = 0; g < p->nworkers; g++) {
        size_t len = p->workers[g].has_specs ? p->workers[g].nspecs : p->nspecs;
        if (len > n)
            n = len;
    }
    return n;
}

const struct iof_spec *iof_test_spec(const struct iof_plan *p, const struct iof_test *t, size_t g)
{
    const struct iof_worker_cfg *w;
    size_t i = t->spec_index;

    if (g >= p->nworkers)
        return NULL;
    w = &p->workers[g];
    if (w->has_specs)
        return i < w->nspecs && w->specs[i] < p->nspecs ? &p->specs[w->specs[i]] : NULL;
    return i < p->nspecs ? &p->specs[i] : NULL;
}

void iof_test_spec_label(const struct iof_plan *p, const struct iof_test *t, char *buf, size_t cap)
{
    size_t o = 0, shown = 0;

    if (!cap)
        return;
    buf[0] = '\0';
    for (size_t g = 0; g < p->nworkers; g++) {
        const struct iof_spec *s = iof_test_spec(p, t, g);
        bool seen = false;
        if (!s)
            continue;
        for (size_t h = 0; h < g && !seen; h++)
            seen = iof_test_spec(p, t, h) == s;
        if (seen)
            continue;
        if (o < cap)
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", shown ? " + " : "", s->name);
        shown++;
    }
    if (!shown)
        snprintf(buf, cap, "(idle)");
}

struct iof_test *iof_plan_expand(const struct iof_plan *p, size_t *n)
{
    size_t steps = iof_plan_cycle_steps(p), npos = iof_plan_positions(p);
    size_t total, k = 0;
    struct iof_test *t;

    *n = 0;
    if (steps && npos > SIZE_MAX / sizeof(*t) / steps)
        return NULL;
    total = npos * steps;
    /* calloc(0) may return NULL; always return a real (possibly unused)
     * allocation so NULL means only ENOMEM. */
    t = calloc(total ? total : 1, sizeof(*t));
    if (!t)
        return NULL;
    for (size_t s = 0; s < npos; s++) {
        for (size_t c = 0; c < steps; c++, k++) {
            t[k].index = (unsigned)k;
            t[k].spec_index = (unsigned)s;
            t[k].cycle_param = p->cycle.param;
            if (p->cycle.param == IOF_CYCLE_RATE) {
                t[k].cycle_value = c;
                t[k].rate_frac = iof_rate_curve_frac(&p->cycle.rate, c);
            } else {
                t[k].cycle_value = p->cycle.param == IOF_CYCLE_NONE ? 0 : cycle_value(&p->cycle, c);
            }
        }
    }
    *n = total;
    return t;
}

struct iof_worker_cfg iof_test_worker(const struct iof_plan *p, const struct iof_test *t, size_t g)
{
    struct iof_worker_cfg w;
    uint64_t v = t->cycle_value > UINT32_MAX ? UINT32_MAX : t->cycle_value;

    if (g >= p->nworkers) {
        memset(&w, 0, sizeof(w));
        return w;
    }
    w = p->workers[g];
    switch (t->cycle_param) {
    case IOF_CYCLE_QUEUE_DEPTH:
        w.queue_depth = (uint32_t)v;
        break;
    case IOF_CYCLE_WORKERS:
        w.count = (uint32_t)v;
        break;
    case IOF_CYCLE_TARGETS:
        if (v < w.ntargets)
            w.ntargets = (size_t)v;
        break;
    case IOF_CYCLE_RATE:
        /* Unthrottled unless the test's start gives the workers rates. */
        w.rate.unit = IOF_RATE_NONE;
        break;
    case IOF_CYCLE_NONE:
        break;
    }
    return w;
}

void iof_test_cycle_label(const struct iof_test *t, char *buf, size_t cap)
{
    if (!cap)
        return;
    if (t->cycle_param == IOF_CYCLE_NONE) {
        buf[0] = '\0';
        return;
    }
    if (t->cycle_param == IOF_CYCLE_RATE) {
        if (t->rate_frac <= 0 && t->cycle_value == 0)
            snprintf(buf, cap, "rate=unthrottled");
        else if (t->rate_frac <= 0)
            snprintf(buf, cap, "rate=step%" PRIu64, t->cycle_value);
        else if (t->rate_target <= 0)
            snprintf(buf, cap, "rate=%.4g%%", t->rate_frac * 100);
        else
            snprintf(buf, cap, "rate=%.4g%%:%.0f", t->rate_frac * 100, t->rate_target);
        return;
    }
    snprintf(buf, cap, "%s=%" PRIu64, iof_cycle_param_name(t->cycle_param), t->cycle_value);
}

bool iof_test_planned(const struct iof_plan *p, const struct iof_test *t)
{
    return t->cycle_param != IOF_CYCLE_RATE ||
           iof_rate_cycle_planned(&p->cycle.rate, t->cycle_value);
}

struct iof_run_cfg iof_test_run(const struct iof_plan *p, const struct iof_test *t)
{
    struct iof_run_cfg r = p->run;
    bool any = false;

    /* Groups that run different specs at once share one window: the
     * longest ramp and duration any of them asks for (no duration: until
     * its io_limit, so the longest possible). */
    for (size_t g = 0; g < p->nworkers; g++) {
        const struct iof_spec *s = iof_test_spec(p, t, g);
        uint64_t d, ramp;
        if (!s)
            continue;
        d = s->has_duration ? s->duration_ns : p->run.duration_ns;
        ramp = s->has_ramp ? s->ramp_ns : p->run.ramp_ns;
        if (!d)
            d = IOF_IO_LIMIT_MAX_DURATION_NS;
        if (!any || d > r.duration_ns)
            r.duration_ns = d;
        if (!any || ramp > r.ramp_ns)
            r.ramp_ns = ramp;
        any = true;
    }
    if (!r.duration_ns)
        r.duration_ns = IOF_IO_LIMIT_MAX_DURATION_NS;
    return r;
}

const char *iof_arrival_name(enum iof_arrival a)
{
    return a == IOF_ARRIVAL_POISSON ? "poisson" : "uniform";
}

const char *iof_pattern_name(enum iof_pattern p)
{
    switch (p) {
    case IOF_PATTERN_REPEAT:
        return "repeat";
    case IOF_PATTERN_PSEUDO:
        return "pseudo";
    case IOF_PATTERN_RANDOM:
        return "random";
    }
    return "unknown";
}

const char *iof_cycle_param_name(enum iof_cycle_param c)
{
    switch (c) {
    case IOF_CYCLE_NONE:
        return "none";
    case IOF_CYCLE_QUEUE_DEPTH:
        return "queue_depth";
    case IOF_CYCLE_WORKERS:
        return "workers";
    case IOF_CYCLE_TARGETS:
        return "targets";
    case IOF_CYCLE_RATE:
        return "rate";
    }
    return "unknown";
}

/* floor(size x pct / 100) without overflow, rounded down to align. */
static uint64_t pct_of(uint64_t size, uint64_t pct, uint64_t align)
{
    uint64_t v = size / 100 * pct + size % 100 * pct / 100;

    return align ? v - v % align : v;
}

bool iof_target_name_reserved(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;

    return !strncmp(base, IOF_RESERVED_PREFIX, sizeof(IOF_RESERVED_PREFIX) - 1);
}

int iof_target_range(const struct iof_target_cfg *t, uint64_t size, uint64_t align, uint64_t *start,
                     uint64_t *end)
{
    uint64_t off = t->range_offset_pct ? pct_of(size, t->range_offset, align) : t->range_offset;
    uint64_t len = t->range_size_pct ? pct_of(size, t->range_size, align) : t->range_size;

    *start = off;
    if (t->range_size == 0 && !t->range_size_pct)
        *end = size;
    else
        *end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
    if (*end > size || *start >= *end)
        return -ERANGE;
    return 0;
}

void iof_target_range_label(uint64_t v, bool pct, char *buf, size_t cap)
{
    snprintf(buf, cap, pct ? "%" PRIu64 "%%" : "%" PRIu64, v);
}

/* ---- distributions (fio's random_distribution syntax) ---- */

static void dist_err(char *err, size_t cap, const char *msg)
{
    if (err && cap)
        snprintf(err, cap, "%s", msg);
}

/* A plain decimal number ("1.2", "20", ".5"): digits with at most one point;
 * no sign, exponent, hex, inf or nan. Returns the end of it, or NULL. */
static const char *dist_number(const char *s, double *v)
{
    const char *p = s;
    bool digit = false, point = false;
    char tmp[32];

    for (; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digit = true;
        else if (*p == '.' && !point)
            point = true;
        else
            break;
    }
    if (!digit || (size_t)(p - s) >= sizeof(tmp))
        return NULL;
    memcpy(tmp, s, (size_t)(p - s));
    tmp[p - s] = '\0';
    *v = strtod(tmp, NULL);
    return p;
}

/* A whole percentage 0..100 of at most three digits; the end, or NULL. */
static const char *dist_pct(const char *s, unsigned *v)
{
    const char *p = s;

    *v = 0;
    while (*p >= '0' && *p <= '9' && p - s < 3)
        *v = *v * 10 + (unsigned)(*p++ - '0');
    return p == s || (*p >= '0' && *p <= '9') ? NULL : p;
}

static int dist_parse_zones(const char *s, struct iof_dist_cfg *d, char *err, size_t cap)
{
    unsigned sum_a = 0, sum_r = 0;
    char m[160];

    if (strchr(s, ','))
        return dist_err(err, cap, "per-direction zones (fio's ',' form) are not supported"),
               -EINVAL;
    while (*s) {
        unsigned a, r;
        const char *p = dist_pct(s, &a);
        size_t z = d->nzones;
        if (z == IOF_DIST_MAX_ZONES) {
            snprintf(m, sizeof(m), "more than %d zones", IOF_DIST_MAX_ZONES);
            return dist_err(err, cap, m), -EINVAL;
        }
        if (p && *p == '/')
            p = dist_pct(p + 1, &r);
        else
            p = NULL;
        if (!p || (*p && *p != ':')) {
            snprintf(m, sizeof(m),
                     "zone %zu must be ACCESS_PCT/RANGE_PCT in whole percentages (e.g. \"60/10\")",
                     z);
            return dist_err(err, cap, m), -EINVAL;
        }
        if (a > 100 || r < 1 || r > 100) {
            snprintf(m, sizeof(m), "zone %zu: access must be 0..100 %% and range 1..100 %%", z);
            return dist_err(err, cap, m), -EINVAL;
        }
        d->access[z] = (uint8_t)a;
        d->range[z] = (uint8_t)r;
        d->nzones++;
        sum_a += a;
        sum_r += r;
        s = *p ? p + 1 : p;
        if (*p && !*s)
            return dist_err(err, cap, "ends with ':' (a zone is missing)"), -EINVAL;
    }
    if (sum_a != 100 || sum_r != 100) {
        snprintf(m, sizeof(m), "zones' %s percentages add up to %u, not 100",
                 sum_a != 100 ? "access" : "range", sum_a != 100 ? sum_a : sum_r);
        return dist_err(err, cap, m), -EINVAL;
    }
    return 0;
}

int iof_dist_parse(const char *text, struct iof_dist_cfg *d, char *err, size_t cap)
{
    static const struct {
        const char *prefix;
        enum iof_dist kind;
        double lo, hi; /* param in (lo, hi], or (lo, hi) for pareto */
        const char *what;
    } kinds[] = {
        {"zipf:", IOF_DIST_ZIPF, 0.0, IOF_DIST_MAX_THETA,
         "zipf theta must be a number > 0 and <= 10 (e.g. \"zipf:1.2\")"},
        {"pareto:", IOF_DIST_PARETO, 0.0, 1.0,
         "pareto h must be a number > 0 and < 1 (e.g. \"pareto:0.2\")"},
        {"normal:", IOF_DIST_NORMAL, 0.0, 100.0,
         "normal sigma must be a percentage of the range > 0 and <= 100 (e.g. \"normal:10\")"},
    };

    memset(d, 0, sizeof(*d));
    if (strcmp(text, "uniform") == 0)
        return 0;
    if (strncmp(text, "zoned:", 6) == 0) {
        d->kind = IOF_DIST_ZONED;
        return dist_parse_zones(text + 6, d, err, cap);
    }
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t n = strlen(kinds[i].prefix);
        const char *end;
        double v;
        if (strncmp(text, kinds[i].prefix, n) != 0)
            continue;
        end = dist_number(text + n, &v);
        if (end && *end == ':')
            return dist_err(err, cap, "a center (fio's third field) is not supported"), -EINVAL;
        if (!end || *end || !(v > kinds[i].lo) || v > kinds[i].hi ||
            (kinds[i].kind == IOF_DIST_PARETO && v >= kinds[i].hi))
            return dist_err(err, cap, kinds[i].what), -EINVAL;
        d->kind = kinds[i].kind;
        d->param = v;
        return 0;
    }
    dist_err(err, cap,
             "must be \"uniform\", \"zipf:THETA\", \"pareto:H\", \"normal:SIGMA_PCT\" or "
             "\"zoned:ACCESS_PCT/RANGE_PCT:...\"");
    return -EINVAL;
}

void iof_dist_label(const struct iof_dist_cfg *d, char *buf, size_t cap)
{
    size_t o;

    switch (d->kind) {
    case IOF_DIST_ZIPF:
        snprintf(buf, cap, "zipf:%g", d->param);
        return;
    case IOF_DIST_PARETO:
        snprintf(buf, cap, "pareto:%g", d->param);
        return;
    case IOF_DIST_NORMAL:
        snprintf(buf, cap, "normal:%g", d->param);
        return;
    case IOF_DIST_ZONED:
        o = (size_t)snprintf(buf, cap, "zoned");
        for (size_t i = 0; i < d->nzones && o < cap; i++)
            o += (size_t)snprintf(buf + o, cap - o, ":%u/%u", d->access[i], d->range[i]);
        return;
    case IOF_DIST_UNIFORM:
    default:
        snprintf(buf, cap, "uniform");
        return;
    }
}

const char *iof_knee_metric_name(enum iof_knee_metric m)
{
    switch (m) {
    case IOF_KNEE_P99:
        return "p99";
    case IOF_KNEE_P999:
        return "p999";
    case IOF_KNEE_AVG:
        return "avg";
    }
    return "unknown";
}
