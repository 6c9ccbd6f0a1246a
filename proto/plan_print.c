/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_print.c - `iofleet validate`: the plan as a person reads it,
 * run timing, cycle, specs, worker groups, then every expanded test. */
#include "proto/plan_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/ratecycle.h"
#include "common/text.h"

/* s in full, escaped as for a terminal (names and paths are not cut here). */
static void print_raw(FILE *f, const char *s)
{
    iof_text_fput(f, s);
}

static void print_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    print_raw(f, s);
    fputc('\'', f);
}

/* A target's path, quoted; a per-node map as {node 'path', ..., * 'path'}. */
static void print_target_path(FILE *f, const struct iof_target_cfg *t)
{
    if (!t->nnode_paths) {
        print_quoted(f, t->path);
        return;
    }
    fputc('{', f);
    for (size_t i = 0; i < t->nnode_paths; i++) {
        if (i)
            fprintf(f, ", ");
        print_raw(f, t->node_paths[i].node);
        fputc(' ', f);
        print_quoted(f, t->node_paths[i].path);
    }
    if (t->path[0]) {
        fprintf(f, ", * ");
        print_quoted(f, t->path);
    }
    fputc('}', f);
}

static void print_nodes(FILE *f, const struct iof_worker_cfg *w)
{
    for (size_t i = 0; i < w->nnodes && i < 8; i++) {
        if (i)
            fputc(',', f);
        print_raw(f, w->nodes[i]);
    }
    if (w->nnodes > 8)
        fprintf(f, ",... (%zu nodes)", w->nnodes);
}

static void print_group(FILE *f, const struct iof_worker_cfg *w)
{
    fprintf(f, "nodes ");
    print_nodes(f, w);
    /* Without an engine in the plan each agent runs its own default, which
     * the plan cannot say: not this build's. */
    fprintf(f, ", %" PRIu32 " worker%s, %s, qd %" PRIu32 ", %zu target%s:", w->count,
            w->count == 1 ? "" : "s",
            w->engine_given ? w->engine
                            : "each agent's default engine (libaio on Linux, windows on Windows)",
            w->queue_depth, w->ntargets, w->ntargets == 1 ? "" : "s");
    for (size_t i = 0; i < w->ntargets && i < 4; i++) {
        fputc(' ', f);
        print_target_path(f, &w->targets[i]);
    }
    if (w->ntargets > 4)
        fprintf(f, " ...");
    if (w->data.enabled) {
        char b[32];
        proto_plan_format_size(w->data.unit, b, sizeof(b));
        fprintf(f, ", data dedupe %" PRIu32 "%% compress %" PRIu32 "%% per %s", w->data.dedupe_pct,
                w->data.compress_pct, b);
    } else {
        fprintf(f, ", pattern %s", iof_pattern_name(w->pattern));
    }
    if (w->verify.algo != IOF_VERIFY_NONE)
        fprintf(f, ", verify %s %s%s", plan_verify_names[w->verify.algo],
                plan_verify_mode_names[w->verify.mode],
                w->verify.stop ? ", stop at the first mismatch" : "");
    if (w->has_seed)
        fprintf(f, ", seed %" PRIu64, w->seed);
    if (w->offset_increment && w->offset_increment_pct) {
        fprintf(f, ", offset increment %" PRIu64 "%%", w->offset_increment);
    } else if (w->offset_increment) {
        char b[32];
        proto_plan_format_size(w->offset_increment, b, sizeof(b));
        fprintf(f, ", offset increment %s", b);
    }
    if (w->hipri)
        fprintf(f, ", polled completion (hipri)");
    if (w->rate.unit != IOF_RATE_NONE)
        fprintf(f, ", rate %g %s per worker (%s)", w->rate.value,
                w->rate.unit == IOF_RATE_IOPS ? "IOPS" : "MiB/s",
                iof_arrival_name(w->rate.arrival));
    fprintf(f, "\n");
}

static bool plan_has_io_limit(const struct iof_plan *p)
{
    for (size_t s = 0; s < p->nspecs; s++)
        if (p->specs[s].io_limit)
            return true;
    return false;
}

void proto_plan_print(const struct iof_plan *p, FILE *f)
{
    char a[32], b[32], d[32], dl[IOF_DIST_LABEL_MAX];
    size_t steps = iof_plan_cycle_steps(p), ntests = 0, npos = iof_plan_positions(p);
    bool own = false; /* some group runs its own specs */
    struct iof_test *tests;
    uint64_t per, total;

    for (size_t g = 0; g < p->nworkers; g++)
        own = own || p->workers[g].has_specs;
    proto_plan_format_duration(p->run.ramp_ns, a, sizeof(a));
    if (p->run.duration_ns)
        proto_plan_format_duration(p->run.duration_ns, b, sizeof(b));
    else
        snprintf(b, sizeof(b), "per spec");
    proto_plan_format_duration(p->run.interval_ns, d, sizeof(d));
    fprintf(f, "plan ");
    print_quoted(f, p->name);
    fprintf(f, "\n");
    fprintf(f, "run: ramp %s, duration %s, interval %s%s\n", a, b, d,
            p->run.cleanup ? ", cleanup (test files made by the run are removed at its end)" : "");
    for (size_t i = 0; i < p->nnotes; i++) {
        fprintf(f, "%s", i ? "       " : "notes: ");
        print_raw(f, p->notes[i]);
        fprintf(f, "\n");
    }
    if (p->nspec_cycle) {
        fprintf(f, "spec cycle:");
        for (size_t i = 0; i < p->nspec_cycle; i++) {
            const struct iof_spec_cycle *ax = &p->spec_cycle[i];
            fprintf(f, "%s %s", i ? " x" : "", plan_spec_axis_names[ax->axis]);
            for (size_t v = 0; v < ax->nvalues; v++) {
                if (ax->axis == IOF_SPEC_AXIS_SIZE)
                    proto_plan_format_size(ax->values[v], a, sizeof(a));
                else
                    snprintf(a, sizeof(a), "%" PRIu64 "%%", ax->values[v]);
                fprintf(f, "%s%s", v ? ", " : " ", a);
            }
        }
        fprintf(f, " (%zu single-line spec%s expanded)\n", p->nspecs_cycled,
                p->nspecs_cycled == 1 ? "" : "s");
    }
    if (p->cycle.param == IOF_CYCLE_NONE) {
        if (!p->nspec_cycle)
            fprintf(f, "cycle: none\n");
    } else if (p->cycle.param == IOF_CYCLE_RATE && p->cycle.rate.find_max) {
        proto_plan_format_duration(p->cycle.rate.target_ns, a, sizeof(a));
        fprintf(f,
                "cycle: rate find_max %s <= %s (unthrottled for the ceiling, then at most %d "
                "rated steps of up to %d runs and %d confirmation runs; %zu tests per spec at "
                "most)\n",
                iof_knee_metric_name(p->cycle.rate.metric), a, IOF_FIND_MAX_STEPS,
                IOF_FIND_MAX_RUNS, IOF_FIND_MAX_CONFIRMS, steps);
    } else if (p->cycle.param == IOF_CYCLE_RATE) {
        fprintf(f, "cycle: rate curve unthrottled");
        for (size_t i = 0; i < p->cycle.rate.npct; i++)
            fprintf(f, ", %u%%", p->cycle.rate.pct[i]);
        fprintf(f, " of the unthrottled IOPS (%zu steps)\n", steps);
    } else {
        fprintf(f, "cycle: %s %" PRIu64 "..%" PRIu64 " step %c%" PRIu64 " (%zu step%s)\n",
                iof_cycle_param_name(p->cycle.param), p->cycle.from, p->cycle.to,
                p->cycle.exponential ? 'x' : '+', p->cycle.step, steps, steps == 1 ? "" : "s");
    }
    /* At most, per spec position (an io_limit may end a test sooner). */
    total = 0;
    for (size_t s = 0; s < npos; s++) {
        struct iof_test t1 = {.spec_index = (unsigned)s};
        struct iof_run_cfg r = iof_test_run(p, &t1);
        per = r.ramp_ns + r.duration_ns;
        total = total > UINT64_MAX - per ? UINT64_MAX : total + per;
    }
    total = total && steps > UINT64_MAX / total ? UINT64_MAX : total * steps;
    proto_plan_format_duration(total, a, sizeof(a));
    fprintf(f, "tests: %zu (%zu spec%s%s x %zu cycle step%s), %s%s of ramp and measurement\n",
            npos * steps, npos, npos == 1 ? "" : "s", own ? " per group" : "", steps,
            steps == 1 ? "" : "s", a,
            plan_has_io_limit(p) || (p->cycle.param == IOF_CYCLE_RATE && p->cycle.rate.find_max)
                ? " at most"
                : "");

    for (size_t s = 0; s < p->nspecs; s++) {
        const struct iof_spec *sp = &p->specs[s];
        fprintf(f, "\nspec %zu ", s);
        print_quoted(f, sp->name);
        if (sp->has_duration) {
            proto_plan_format_duration(sp->duration_ns, a, sizeof(a));
            fprintf(f, ", duration %s", a);
        }
        if (sp->has_ramp) {
            proto_plan_format_duration(sp->ramp_ns, a, sizeof(a));
            fprintf(f, ", ramp %s", a);
        }
        if (sp->io_limit) {
            proto_plan_format_size(sp->io_limit, a, sizeof(a));
            fprintf(f, ", io_limit %s per worker", a);
        }
        fprintf(f, "\n");
        fprintf(f, "  %4s %8s %6s %5s %7s %8s %8s %6s  %s\n", "line", "size", "share", "read",
                "random", "align", "delay", "burst", "distribution");
        for (size_t l = 0; l < sp->nlines; l++) {
            const struct iof_line *ln = &sp->lines[l];
            proto_plan_format_size(ln->size, a, sizeof(a));
            if (ln->align)
                proto_plan_format_size(ln->align, b, sizeof(b));
            else
                snprintf(b, sizeof(b), "auto");
            proto_plan_format_duration(ln->delay_ns, d, sizeof(d));
            iof_dist_label(&ln->dist, dl, sizeof(dl));
            fprintf(f,
                    "  %4zu %8s %5" PRIu32 "%% %4" PRIu32 "%% %6" PRIu32 "%% %8s %8s %6" PRIu32
                    "  %s%s\n",
                    l, a, ln->share, ln->read_pct, ln->random_pct, b, d, ln->burst, dl,
                    ln->random_once ? ", once per pass" : "");
        }
    }

    fprintf(f, "\n");
    for (size_t g = 0; g < p->nworkers; g++) {
        const struct iof_worker_cfg *w = &p->workers[g];
        fprintf(f, "workers[%zu]: ", g);
        print_group(f, w);
        if (own) {
            fprintf(f, "  group ");
            print_quoted(f, w->name);
            fprintf(f, ", specs:");
            if (!w->has_specs)
                fprintf(f, " the plan's");
            for (size_t i = 0; w->has_specs && i < w->nspecs; i++) {
                fprintf(f, "%s ", i ? "," : "");
                print_quoted(f, p->specs[w->specs[i]].name);
            }
            fprintf(f, "\n");
        }
        for (size_t i = 0; i < w->ntargets; i++) {
            const struct iof_target_cfg *t = &w->targets[i];
            fprintf(f, "  target ");
            print_target_path(f, t);
            if (t->size) {
                proto_plan_format_size(t->size, a, sizeof(a));
                fprintf(f, " size %s", a);
            } else {
                fprintf(f, " (existing size)");
            }
            if (t->range_offset || t->range_size || t->range_size_pct) {
                if (t->range_offset_pct)
                    iof_target_range_label(t->range_offset, true, a, sizeof(a));
                else
                    proto_plan_format_size(t->range_offset, a, sizeof(a));
                if (t->range_size_pct)
                    iof_target_range_label(t->range_size, true, b, sizeof(b));
                else if (t->range_size)
                    proto_plan_format_size(t->range_size, b, sizeof(b));
                else
                    snprintf(b, sizeof(b), "rest");
                fprintf(f, " range offset %s size %s", a, b);
            }
            fprintf(f, "\n");
        }
    }

    tests = iof_plan_expand(p, &ntests);
    if (!tests) {
        fprintf(f, "\n(out of memory listing the tests)\n");
        return;
    }
    for (size_t i = 0; i < ntests; i++) {
        const struct iof_test *t = &tests[i];
        char label[64];
        iof_test_cycle_label(t, label, sizeof(label));
        if (own) {
            fprintf(f, "\ntest %zu/%zu: spec position %u%s%s\n", i + 1, ntests, t->spec_index,
                    label[0] ? ", " : "", label);
        } else {
            fprintf(f, "\ntest %zu/%zu: spec %u ", i + 1, ntests, t->spec_index);
            print_quoted(f, p->specs[t->spec_index].name);
            fprintf(f, "%s%s\n", label[0] ? ", " : "", label);
        }
        for (size_t g = 0; g < p->nworkers; g++) {
            struct iof_worker_cfg w = iof_test_worker(p, t, g);
            const struct iof_spec *sp = iof_test_spec(p, t, g);
            fprintf(f, "  workers[%zu]: ", g);
            if (own) {
                print_quoted(f, w.name);
                if (!sp) {
                    fprintf(f, " idle\n");
                    continue;
                }
                fprintf(f, " runs ");
                print_quoted(f, sp->name);
                fprintf(f, ": ");
            }
            print_group(f, &w);
        }
    }
    free(tests);
}
