/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_cycle.c - the plan's "cycle": a worker parameter stepped
 * from..to (queue_depth, workers, targets), a rate cycle (curve or
 * find_max), and the spec axes (size, read, random) that expand single-line
 * specs into one spec per combination. */
#include "proto/plan_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/ratecycle.h"

/* ---- cycling the spec itself: "cycle": {"size": [...], "read": [...], "random": [...]} ---- */

const char *const plan_spec_axis_names[IOF_SPEC_AXES] = {"size", "read", "random"};

/* The axis a cycle key names, or -1. */
static int spec_axis_of(const char *key)
{
    for (int i = 0; i < IOF_SPEC_AXES; i++)
        if (strcmp(key, plan_spec_axis_names[i]) == 0)
            return i;
    return -1;
}

/* "4k 70% read 50% random": what a line does, as the expanded specs are named. */
static void spec_cycle_label(const struct iof_line *l, char *buf, size_t cap)
{
    char a[32];

    proto_plan_format_size(l->size, a, sizeof(a));
    snprintf(buf, cap, "%s %" PRIu32 "%% read %" PRIu32 "%% random", a, l->read_pct, l->random_pct);
}

/* "LABEL", or "SPEC: LABEL" when several specs are expanded (the spec's
 * name cut so the label always shows). */
static void spec_cycle_name(char *buf, size_t cap, const char *spec, const char *label)
{
    size_t nl = strlen(label), ns = spec ? strlen(spec) : 0, k = 0;

    if (spec) {
        if (ns + 2 + nl >= cap)
            ns = nl + 2 < cap ? cap - 1 - nl - 2 : 0;
        memcpy(buf, spec, ns);
        memcpy(buf + ns, ": ", 2);
        k = ns + 2;
    }
    if (k + nl >= cap)
        nl = cap - 1 - k;
    memcpy(buf + k, label, nl);
    buf[k + nl] = '\0';
}

/* One axis's list of values at cycle.<key>: sizes 1..64m, or 0..100. */
static int parse_spec_axis(struct pctx *c, const cJSON *it, struct iof_spec_cycle *ax)
{
    const cJSON *el;
    size_t o = plan_path_key(c, it->string), n, i = 0;
    char a[32], g[96];
    int rc;

    if ((rc = plan_check_entries(c, it, &plan_cycle_def, it->string, &n)))
        return rc;
    ax->nvalues = n;
    cJSON_ArrayForEach(el, it)
    {
        size_t oi = plan_path_index(c, i);
        uint64_t *v = &ax->values[i];
        if (ax->axis == IOF_SPEC_AXIS_SIZE) {
            if ((rc = plan_json_size(c, el, v)))
                return rc;
            if (*v < 1 || *v > PROTO_PLAN_MAX_IO_SIZE) {
                proto_plan_format_size(PROTO_PLAN_MAX_IO_SIZE, a, sizeof(a));
                return fail(c, "must be 1..%s, got %s", a, plan_got(g, sizeof(g), el));
            }
        } else if ((rc = plan_json_uint(c, el, 0, 100, v))) {
            return rc;
        }
        for (size_t j = 0; j < i; j++)
            if (ax->values[j] == *v)
                return fail(c, "repeats %s[%zu], got %s", it->string, j,
                            plan_got(g, sizeof(g), el));
        plan_path_pop(c, oi);
        i++;
    }
    plan_path_pop(c, o);
    return 0;
}

/* Cycle transfer sizes must pass what plan_cross_check() asks of spec lines:
 * O_DIRECT alignment and fitting the smallest target region. */
static int spec_cycle_sizes_check(struct pctx *c, const struct iof_plan *p,
                                  const struct iof_spec_cycle *ax)
{
    char a[32], b[32], q[96];

    for (size_t k = 0; k < ax->nvalues; k++) {
        uint64_t size = ax->values[k];
        proto_plan_format_size(size, a, sizeof(a));
        for (size_t g = 0; g < p->nworkers; g++) {
            const struct iof_worker_cfg *w = &p->workers[g];
            if (plan_engine_direct(w->engine) && size % DIRECT_IO_ALIGN) {
                plan_path_pop(c, 0);
                plan_path_add(c, "cycle.size[%zu]", k);
                return fail(c,
                            "size not aligned for O_DIRECT: %s is not a multiple of 512 "
                            "(workers[%zu] uses engine %s)",
                            a, g, w->engine);
            }
            for (size_t i = 0; i < w->ntargets; i++) {
                const struct iof_target_cfg *t = &w->targets[i];
                uint64_t st, en;
                if (!t->size || iof_target_range(t, t->size, DIRECT_IO_ALIGN, &st, &en) ||
                    size <= en - st)
                    continue;
                plan_path_pop(c, 0);
                plan_path_add(c, "cycle.size[%zu]", k);
                proto_plan_format_size(en - st, b, sizeof(b));
                return fail(c, "%s does not fit workers[%zu].targets[%zu] (%s, %s usable)", a, g, i,
                            plan_quote(q, sizeof(q), t->path), b);
            }
        }
    }
    return 0;
}

/* Replaces every single-line spec by the cross product of the axes (first
 * axis outermost), named after what each line does; specs with more lines
 * stay as written. Runs after plan_cross_check(), so specs[i] in its messages is
 * still the i-th spec of the file. */
/* After a spec cycle: each group's own list names the plan's specs as
 * written; a spec the cycle expanded stands for its expansions, in order
 * (spec s became specs first[s] .. first[s+1]-1). So groups that list
 * different cycled specs run them side by side, step by step. */
static int spec_cycle_regroup(struct pctx *c, struct iof_plan *p, const size_t *first)
{
    for (size_t g = 0; g < p->nworkers; g++) {
        struct iof_worker_cfg *w = &p->workers[g];
        size_t n = 0, k = 0;
        unsigned *list;
        if (!w->has_specs)
            continue;
        for (size_t i = 0; i < w->nspecs; i++)
            n += first[w->specs[i] + 1] - first[w->specs[i]];
        if (n > PROTO_PLAN_MAX_SPECS) {
            plan_path_pop(c, 0); /* the message names the group's list, not the cycle */
            plan_path_key(c, "workers");
            plan_path_index(c, g);
            plan_path_key(c, "specs");
            return fail(c, "the spec cycle expands this list to %zu specs, the maximum is %u", n,
                        PROTO_PLAN_MAX_SPECS);
        }
        list = calloc(n, sizeof(*list));
        if (!list)
            return plan_nomem(c);
        for (size_t i = 0; i < w->nspecs; i++)
            for (size_t e = first[w->specs[i]]; e < first[w->specs[i] + 1]; e++)
                list[k++] = (unsigned)e;
        free(w->specs);
        w->specs = list;
        w->nspecs = n;
    }
    return 0;
}

int plan_parse_spec_cycle(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *cy = plan_member(root, "cycle");
    size_t o = plan_path_key(c, "cycle"), prod = 1, nsingle = 0, total, k = 0, *first;
    struct iof_spec *out;
    char label[IOF_NAME_MAX];
    int rc;

    if (!cy) {
        plan_path_pop(c, o);
        return 0;
    }
    for (const cJSON *it = cy->child; it; it = it->next) {
        int a = spec_axis_of(it->string);
        struct iof_spec_cycle *ax;
        if (a < 0)
            continue;
        ax = &p->spec_cycle[p->nspec_cycle++];
        ax->axis = (enum iof_spec_axis)a;
        if ((rc = parse_spec_axis(c, it, ax)))
            return rc;
        prod *= ax->nvalues;
    }
    if (!p->nspec_cycle) {
        plan_path_pop(c, o);
        return 0;
    }
    for (size_t s = 0; s < p->nspecs; s++)
        nsingle += p->specs[s].nlines == 1;
    if (!nsingle)
        return fail(c,
                    "%s: no spec has a single line to cycle (a spec with several lines keeps "
                    "its mix)",
                    plan_spec_axis_names[p->spec_cycle[0].axis]);
    total = p->nspecs - nsingle + nsingle * prod;
    if (total > PROTO_PLAN_MAX_SPECS)
        return fail(c, "expands %zu single-line spec%s into %zu specs, the maximum is %u", nsingle,
                    nsingle == 1 ? "" : "s", total, PROTO_PLAN_MAX_SPECS);
    for (size_t a = 0; a < p->nspec_cycle; a++)
        if (p->spec_cycle[a].axis == IOF_SPEC_AXIS_SIZE &&
            (rc = spec_cycle_sizes_check(c, p, &p->spec_cycle[a])))
            return rc;
    out = calloc(total, sizeof(*out));
    first = calloc(p->nspecs + 1, sizeof(*first));
    if (!out || !first) {
        free(out);
        free(first);
        return plan_nomem(c);
    }
    for (size_t s = 0; s < p->nspecs; s++) {
        struct iof_spec *sp = &p->specs[s];
        first[s] = k;
        if (sp->nlines != 1) {
            out[k++] = *sp;
            sp->lines = NULL;
            continue;
        }
        for (size_t n = 0; n < prod; n++) {
            struct iof_spec *e = &out[k++];
            size_t rest = n;
            e->lines = malloc(sizeof(*e->lines));
            if (!e->lines) {
                for (size_t j = 0; j < k; j++)
                    free(out[j].lines);
                free(out);
                free(first);
                return plan_nomem(c);
            }
            e->nlines = 1;
            e->lines[0] = sp->lines[0];
            e->duration_ns = sp->duration_ns;
            e->ramp_ns = sp->ramp_ns;
            e->has_duration = sp->has_duration;
            e->has_ramp = sp->has_ramp;
            e->io_limit = sp->io_limit;
            /* Odometer: the last axis turns fastest. */
            for (size_t a = p->nspec_cycle; a-- > 0;) {
                const struct iof_spec_cycle *ax = &p->spec_cycle[a];
                uint64_t v = ax->values[rest % ax->nvalues];
                rest /= ax->nvalues;
                if (ax->axis == IOF_SPEC_AXIS_SIZE)
                    e->lines[0].size = v;
                else if (ax->axis == IOF_SPEC_AXIS_READ)
                    e->lines[0].read_pct = (uint32_t)v;
                else
                    e->lines[0].random_pct = (uint32_t)v;
            }
            spec_cycle_label(&e->lines[0], label, sizeof(label));
            spec_cycle_name(e->name, sizeof(e->name), nsingle == 1 ? NULL : sp->name, label);
        }
    }
    first[p->nspecs] = k;
    for (size_t s = 0; s < p->nspecs; s++)
        free(p->specs[s].lines);
    free(p->specs);
    p->specs = out;
    p->nspecs = total;
    p->nspecs_cycled = nsingle;
    rc = spec_cycle_regroup(c, p, first);
    free(first);
    if (rc)
        return rc;
    /* A kept multi-line spec may already carry an expanded name. */
    for (size_t i = 0; i < total; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p->specs[i].name, p->specs[j].name) == 0) {
                char q[96];
                return fail(c, "expands to the spec name %s twice: rename the spec that has it",
                            plan_quote(q, sizeof(q), p->specs[i].name));
            }
        }
    }
    plan_path_pop(c, o);
    return 0;
}

/* "+N" (N >= 1) or "xN" (N >= 2). */
static int parse_step(struct pctx *c, const cJSON *pc, struct iof_cycle *cy)
{
    const cJSON *it = plan_member(pc, "step");
    const char *s, *end, *why;
    size_t o = plan_path_key(c, "step");
    char g[96];
    uint64_t n;
    int rc;

    if (!it)
        return fail(c, "required but missing");
    if ((rc = plan_json_string(c, it, 32, &s)))
        return rc;
    plan_got(g, sizeof(g), it);
    if ((s[0] != '+' && s[0] != 'x' && s[0] != 'X') || !is_digit(s[1]) ||
        plan_parse_digits(s + 1, &n, &end, &why) || *end)
        return fail(c, "must be \"+N\" (linear) or \"xN\" (exponential), got %s", g);
    cy->exponential = s[0] != '+';
    if (!cy->exponential && n < 1)
        return fail(c, "a linear step must be at least +1, got %s", g);
    if (cy->exponential && n < 2)
        return fail(c, "an exponential step must be at least x2, got %s", g);
    cy->step = n;
    plan_path_pop(c, o);
    return 0;
}

/* cycle.rate: {"curve": [PCT, ...]} or {"find_max": {"p99"|"p999"|"avg": DURATION}}. */
static int parse_rate_cycle(struct pctx *c, const cJSON *pc, struct iof_plan *p)
{
    struct iof_rate_cycle *rc = &p->cycle.rate;
    const cJSON *curve = plan_member(pc, "curve"), *fm = plan_member(pc, "find_max"), *el,
                *m = NULL;
    size_t o = plan_path_key(c, "rate"), o2, n, i = 0;
    char g[96];
    int r;

    if ((r = plan_check_object(c, pc)) || (r = plan_check_keys(c, pc, &plan_rate_cycle_def)))
        return r;
    if (!curve == !fm)
        return fail(c, "must name one of curve, find_max");
    for (size_t w = 0; w < p->nworkers; w++) {
        if (p->workers[w].rate.unit != IOF_RATE_NONE) {
            plan_path_pop(c, 0);
            plan_path_add(c, "workers[%zu].rate", w);
            return fail(c, "a rate cycle sets every worker's rate: drop this or cycle.rate");
        }
    }
    p->cycle.param = IOF_CYCLE_RATE;
    if (curve) {
        o2 = plan_path_key(c, "curve");
        if ((r = plan_check_entries(c, curve, &plan_rate_cycle_def, "curve", &n)))
            return r;
        rc->npct = n;
        cJSON_ArrayForEach(el, curve)
        {
            size_t oi = plan_path_index(c, i);
            uint64_t v;
            if ((r = plan_json_uint(c, el, 1, 100, &v)))
                return r;
            for (size_t j = 0; j < i; j++)
                if (rc->pct[j] == v)
                    return fail(c, "repeats curve[%zu], got %s", j, plan_got(g, sizeof(g), el));
            rc->pct[i++] = (uint8_t)v;
            plan_path_pop(c, oi);
        }
        plan_path_pop(c, o2);
        plan_path_pop(c, o);
        return 0;
    }
    rc->find_max = true;
    o2 = plan_path_key(c, "find_max");
    if ((r = plan_check_object(c, fm)) || (r = plan_check_keys(c, fm, &plan_find_max_def)))
        return r;
    for (const cJSON *it = fm->child; it; it = it->next) {
        if (m)
            return fail(c, "names both '%s' and '%s': one latency target", m->string, it->string);
        m = it;
    }
    if (!m)
        return fail(c, "must name one of p99, p999, avg");
    rc->metric = strcmp(m->string, "p99") == 0    ? IOF_KNEE_P99
                 : strcmp(m->string, "p999") == 0 ? IOF_KNEE_P999
                                                  : IOF_KNEE_AVG;
    if ((r = plan_read_to(c, fm, &plan_find_max_def, m->string, &rc->target_ns)))
        return r;
    if (rc->target_ns == 0) {
        plan_path_key(c, m->string);
        return fail(c, "must be more than 0, got %s", plan_got(g, sizeof(g), m));
    }
    plan_path_pop(c, o2);
    plan_path_pop(c, o);
    return 0;
}

int plan_parse_cycle(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *cy = plan_member(root, "cycle"), *pc;
    size_t o = plan_path_key(c, "cycle"), o2, min_targets = SIZE_MAX, min_group = 0;
    struct iof_cycle *out = &p->cycle;
    uint64_t limit;
    int rc;

    out->param = IOF_CYCLE_NONE;
    if (!cy) {
        plan_path_pop(c, o);
        return 0;
    }
    if ((rc = plan_check_object(c, cy)) || (rc = plan_check_keys(c, cy, &plan_cycle_def)))
        return rc;
    /* The spec axes (size, read, random) are plan_parse_spec_cycle()'s; at most
     * one worker parameter here. */
    pc = NULL;
    for (const cJSON *it = cy->child; it; it = it->next) {
        if (spec_axis_of(it->string) >= 0)
            continue;
        if (pc)
            return fail(c, "names both '%s' and '%s': cycle one parameter at a time", pc->string,
                        it->string);
        pc = it;
    }
    if (!pc && !cy->child)
        return fail(c, "must name one of rate, queue_depth, workers, targets, size, read, random");
    if (!pc) {
        plan_path_pop(c, o);
        return 0;
    }
    if (strcmp(pc->string, "rate") == 0) {
        if ((rc = parse_rate_cycle(c, pc, p)))
            return rc;
        plan_path_pop(c, o);
        return 0;
    }
    for (size_t g = 0; g < p->nworkers; g++) {
        if (p->workers[g].ntargets < min_targets) {
            min_targets = p->workers[g].ntargets;
            min_group = g;
        }
    }
    if (strcmp(pc->string, "queue_depth") == 0) {
        out->param = IOF_CYCLE_QUEUE_DEPTH;
        limit = PROTO_PLAN_MAX_QD;
    } else if (strcmp(pc->string, "workers") == 0) {
        out->param = IOF_CYCLE_WORKERS;
        limit = PROTO_PLAN_MAX_COUNT;
    } else {
        out->param = IOF_CYCLE_TARGETS;
        limit = PROTO_PLAN_MAX_TARGETS;
    }
    o2 = plan_path_key(c, pc->string);
    if ((rc = plan_check_object(c, pc)) || (rc = plan_check_keys(c, pc, &plan_cycle_param_def)))
        return rc;
    if ((rc = plan_read_upto(c, pc, &plan_cycle_param_def, "from", limit, &out->from)) ||
        (rc = plan_read_upto(c, pc, &plan_cycle_param_def, "to", limit, &out->to)))
        return rc;
    if (out->to < out->from) {
        plan_path_key(c, "to");
        return fail(c, "must not be less than from (%" PRIu64 "), got %" PRIu64, out->from,
                    out->to);
    }
    if (out->param == IOF_CYCLE_TARGETS && out->to > min_targets) {
        plan_path_key(c, "to");
        return fail(c, "must be at most %zu: workers[%zu] has only %zu target%s, got %" PRIu64,
                    min_targets, min_group, min_targets, min_targets == 1 ? "" : "s", out->to);
    }
    if ((rc = parse_step(c, pc, out)))
        return rc;
    plan_path_pop(c, o2);
    plan_path_pop(c, o);
    return 0;
}
