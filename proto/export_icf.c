/* SPDX-License-Identifier: Apache-2.0 */
/* proto/export_icf.c - `iofleet export PLAN.json -o F.icf`: a plan as an
 * Iometer configuration file ("Version 1.1.0", the layout Iometer's "Save
 * Configuration" writes and proto/import_icf.c reads back), for users who
 * still drive Iometer somewhere.
 *
 * What maps: run duration and ramp (whole seconds), one access specification
 * per spec (size, share, read, random, delay in whole ms, burst, align), a
 * queue-depth, worker-count or target-count cycle, and per worker group
 * `count` Iometer workers with its outstanding I/Os, seed, data pattern,
 * targets and their region in 512-byte sectors. Nodes become managers ("*"
 * alone: one manager named "iofleet"). What Iometer cannot express is an
 * error with the plan key: a spec's own duration, ramp or io_limit, skewed
 * distributions, rates, offset_increment, percentages in ranges, size/read/
 * random cycles. Target paths are written as they are; Iometer names
 * targets as Windows shows them, which the user edits there. */
#include "proto/export.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool exp_fail(struct iof_buf *msgs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static bool exp_fail(struct iof_buf *msgs, const char *fmt, ...)
{
    va_list ap;

    iof_buf_addstr(msgs, "error: ");
    va_start(ap, fmt);
    iof_buf_vprintf(msgs, fmt, ap);
    va_end(ap);
    iof_buf_addc(msgs, '\n');
    return false;
}

static void exp_note(struct iof_buf *msgs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void exp_note(struct iof_buf *msgs, const char *fmt, ...)
{
    va_list ap;

    iof_buf_addstr(msgs, "note: ");
    va_start(ap, fmt);
    iof_buf_vprintf(msgs, fmt, ap);
    va_end(ap);
    iof_buf_addc(msgs, '\n');
}

/* A name as one Iometer value line: no line breaks, no commas in spec names. */
static void exp_name(struct iof_buf *b, const char *s, bool no_comma)
{
    for (; *s; s++)
        iof_buf_addc(b, (unsigned char)*s < 0x20 || (no_comma && *s == ',') ? ' ' : *s);
}

static bool exp_check(const struct iof_plan *p, struct iof_buf *msgs)
{
    bool ok = true;

    if (p->run.duration_ns % 1000000000u || p->run.ramp_ns % 1000000000u)
        ok = exp_fail(msgs, "run.duration and run.ramp: Iometer takes whole seconds");
    if (!p->run.duration_ns)
        ok = exp_fail(msgs, "run.duration: Iometer needs a run time for every test");
    if (p->nspec_cycle)
        ok = exp_fail(msgs, "cycle.size/read/random: Iometer has no such cycle (list the specs)");
    for (size_t s = 0; s < p->nspecs; s++) {
        const struct iof_spec *sp = &p->specs[s];
        if (sp->has_duration || sp->has_ramp || sp->io_limit)
            ok = exp_fail(msgs,
                          "specs[%zu]: a spec's own duration, ramp or io_limit: Iometer runs every "
                          "test for the same time",
                          s);
        for (size_t l = 0; l < sp->nlines; l++) {
            const struct iof_line *ln = &sp->lines[l];
            if (ln->dist.kind != IOF_DIST_UNIFORM)
                ok = exp_fail(msgs,
                              "specs[%zu].lines[%zu].distribution: Iometer's random offsets "
                              "are uniform",
                              s, l);
            if (ln->random_once)
                ok = exp_fail(msgs,
                              "specs[%zu].lines[%zu].random_map: Iometer draws random offsets "
                              "with replacement",
                              s, l);
            if (ln->delay_ns % 1000000u)
                ok = exp_fail(msgs, "specs[%zu].lines[%zu].delay: Iometer takes whole milliseconds",
                              s, l);
        }
    }
    for (size_t g = 0; g < p->nworkers; g++) {
        const struct iof_worker_cfg *w = &p->workers[g];
        if (w->rate.unit != IOF_RATE_NONE)
            ok = exp_fail(msgs, "workers[%zu].rate: Iometer has no offered-load rate", g);
        if (w->offset_increment)
            ok = exp_fail(msgs,
                          "workers[%zu].offset_increment: Iometer's workers all start at "
                          "the starting sector",
                          g);
        for (size_t t = 0; t < w->ntargets; t++) {
            const struct iof_target_cfg *tc = &w->targets[t];
            if (tc->range_offset_pct || tc->range_size_pct)
                ok = exp_fail(msgs,
                              "workers[%zu].targets[%zu].range: Iometer takes sectors, not "
                              "percentages",
                              g, t);
            if (tc->nnode_paths || !tc->path[0])
                ok = exp_fail(msgs,
                              "workers[%zu].targets[%zu].path: a per-node map has no Iometer "
                              "form (one target name per worker): give each node a group",
                              g, t);
            if (tc->range_offset % 512 || tc->range_size % 512)
                ok = exp_fail(msgs, "workers[%zu].targets[%zu].range: not whole 512-byte sectors",
                              g, t);
        }
        if (w->ntargets > 1)
            for (size_t t = 1; t < w->ntargets; t++)
                if (w->targets[t].range_offset != w->targets[0].range_offset ||
                    w->targets[t].range_size != w->targets[0].range_size ||
                    w->targets[t].size != w->targets[0].size)
                    ok = exp_fail(msgs,
                                  "workers[%zu].targets: Iometer has one maximum disk size and "
                                  "starting sector per worker, the targets differ",
                                  g);
        if (strcmp(w->engine, "libaio"))
            exp_note(msgs, "workers[%zu].engine %s: Iometer uses its own asynchronous I/O", g,
                     w->engine);
    }
    return ok;
}

/* The Iometer worker blocks of group g. */
static void exp_group(const struct iof_plan *p, const struct iof_worker_cfg *w, unsigned *wid,
                      struct iof_buf *b)
{
    const struct iof_target_cfg *t0 = &w->targets[0];
    uint64_t sectors = (t0->range_size ? t0->range_size : t0->size) / 512;
    int pattern = w->pattern == IOF_PATTERN_REPEAT ? 0 : w->pattern == IOF_PATTERN_PSEUDO ? 1 : 2;

    for (uint32_t k = 0; k < w->count; k++) {
        iof_buf_printf(b,
                       "'Worker\n\tWorker %u\n'Worker type\n\tDISK\n"
                       "'Default target settings for worker\n"
                       "'Number of outstanding IOs,test connection rate,transactions per "
                       "connection,use fixed seed,fixed seed value\n"
                       "\t%u,DISABLED,1,%s,%" PRIu64 "\n"
                       "'Disk maximum size,starting sector,Data pattern\n"
                       "\t%" PRIu64 ",%" PRIu64 ",%d\n"
                       "'End default target settings for worker\n'Assigned access specs\n",
                       ++*wid, w->queue_depth, w->has_seed ? "ENABLED" : "DISABLED",
                       w->has_seed ? w->seed : 0, sectors, t0->range_offset / 512, pattern);
        for (size_t s = 0; s < p->nspecs; s++) {
            iof_buf_addc(b, '\t');
            exp_name(b, p->specs[s].name, true);
            iof_buf_addc(b, '\n');
        }
        iof_buf_addstr(b, "'End assigned access specs\n'Target assignments\n");
        for (size_t t = 0; t < w->ntargets; t++) {
            iof_buf_addstr(b, "'Target\n\t");
            exp_name(b, w->targets[t].path, false);
            iof_buf_addstr(b, "\n'Target type\n\tDISK\n'End target\n");
        }
        iof_buf_addstr(b, "'End target assignments\n'End worker\n");
    }
}

static bool exp_has_node(const struct iof_worker_cfg *w, const char *node)
{
    for (size_t n = 0; n < w->nnodes; n++)
        if (!strcmp(w->nodes[n], node) || !strcmp(w->nodes[n], "*"))
            return true;
    return false;
}

int proto_export_icf(const struct iof_plan *p, struct iof_buf *out, struct iof_buf *msgs,
                     struct iof_diag *diag)
{
    uint64_t run_s = p->run.duration_ns / 1000000000u;
    const char *managers[IOF_PLAN_MAX_NODES * 2];
    size_t nmanagers = 0;
    const char *type = "NORMAL";
    bool star_only = false;
    unsigned wid;

    if (!exp_check(p, msgs))
        return msgs->err ? msgs->err
                         : iof_diag_set(diag, IOF_EPLAN,
                                        "the plan cannot be written as an Iometer file (the "
                                        "reasons are above)");
    if (p->cycle.param == IOF_CYCLE_QUEUE_DEPTH)
        type = "CYCLE_OUTSTANDING_IOS";
    else if (p->cycle.param == IOF_CYCLE_WORKERS)
        type = "CYCLE_WORKERS";
    else if (p->cycle.param == IOF_CYCLE_TARGETS)
        type = "CYCLE_TARGETS";
    if (p->cycle.param == IOF_CYCLE_WORKERS || p->cycle.param == IOF_CYCLE_TARGETS)
        exp_note(msgs, "cycle: Iometer cycles from 'from' by 'step' up to every worker or target "
                       "it has; 'to' is not written");
    iof_buf_printf(
        out, "Version 1.1.0 \n"
             "'TEST SETUP ===================================================================="
             "\n'Test Description\n\t");
    exp_name(out, p->name, false);
    iof_buf_printf(
        out,
        "\n'Run Time\n'\thours      minutes    seconds\n\t%-11" PRIu64 "%-11" PRIu64 "%" PRIu64
        "\n'Ramp Up Time (s)\n\t%" PRIu64 "\n"
        "'Default Disk Workers to Spawn\n\t0\n'Default Network Workers to Spawn\n\t0\n"
        "'Record Results\n\tALL\n"
        "'Worker Cycling\n'\tstart      step       step type\n\t%-11" PRIu64 "%-11" PRIu64 "%s\n"
        "'Disk Cycling\n'\tstart      step       step type\n\t%-11" PRIu64 "%-11" PRIu64 "%s\n"
        "'Queue Depth Cycling\n'\tstart      end        step       step type\n\t%-11" PRIu64
        "%-11" PRIu64 "%-11" PRIu64 "%s\n'Test Type\n\t%s\n'END test setup\n",
        run_s / 3600, run_s / 60 % 60, run_s % 60, p->run.ramp_ns / 1000000000u,
        p->cycle.param == IOF_CYCLE_WORKERS ? p->cycle.from : 1,
        p->cycle.param == IOF_CYCLE_WORKERS ? p->cycle.step : 1,
        p->cycle.param == IOF_CYCLE_WORKERS && p->cycle.exponential ? "EXPONENTIAL" : "LINEAR",
        p->cycle.param == IOF_CYCLE_TARGETS ? p->cycle.from : 1,
        p->cycle.param == IOF_CYCLE_TARGETS ? p->cycle.step : 1,
        p->cycle.param == IOF_CYCLE_TARGETS && p->cycle.exponential ? "EXPONENTIAL" : "LINEAR",
        p->cycle.param == IOF_CYCLE_QUEUE_DEPTH ? p->cycle.from : 1,
        p->cycle.param == IOF_CYCLE_QUEUE_DEPTH ? p->cycle.to : 32,
        p->cycle.param == IOF_CYCLE_QUEUE_DEPTH ? p->cycle.step : 2,
        p->cycle.param != IOF_CYCLE_QUEUE_DEPTH || p->cycle.exponential ? "EXPONENTIAL" : "LINEAR",
        type);
    iof_buf_addstr(out, "'ACCESS SPECIFICATIONS ========================================="
                        "================\n");
    for (size_t s = 0; s < p->nspecs; s++) {
        const struct iof_spec *sp = &p->specs[s];
        iof_buf_addstr(out, "'Access specification name,default assignment\n\t");
        exp_name(out, sp->name, true);
        iof_buf_addstr(out, ",NONE\n'size,% of size,% reads,% random,delay,burst,align,reply\n");
        for (size_t l = 0; l < sp->nlines; l++) {
            const struct iof_line *ln = &sp->lines[l];
            iof_buf_printf(out, "\t%" PRIu64 ",%u,%u,%u,%" PRIu64 ",%u,%" PRIu64 ",0\n", ln->size,
                           ln->share, ln->read_pct, ln->random_pct, ln->delay_ns / 1000000u,
                           ln->burst, ln->align ? ln->align : ln->size);
        }
    }
    iof_buf_addstr(out, "'END access specifications\n'MANAGER LIST ================================"
                        "==================================\n");
    /* Managers: every named node, in order; "*" alone is one manager. */
    for (size_t g = 0; g < p->nworkers; g++)
        for (size_t n = 0; n < p->workers[g].nnodes; n++) {
            const char *node = p->workers[g].nodes[n];
            bool seen = !strcmp(node, "*");
            for (size_t m = 0; m < nmanagers && !seen; m++)
                seen = !strcmp(managers[m], node);
            if (!seen && nmanagers < sizeof(managers) / sizeof(managers[0]))
                managers[nmanagers++] = node;
        }
    if (!nmanagers) {
        managers[nmanagers++] = "iofleet";
        star_only = true;
        exp_note(msgs, "the plan runs on every agent: one manager 'iofleet' is written; Iometer "
                       "adds a manager per Dynamo that logs in");
    }
    for (size_t m = 0; m < nmanagers; m++) {
        iof_buf_printf(out, "'Manager ID, manager name\n\t%zu,", m + 1);
        exp_name(out, managers[m], false);
        iof_buf_addstr(out, "\n'Manager network address\n\t\n");
        wid = 0;
        for (size_t g = 0; g < p->nworkers; g++)
            if (star_only || exp_has_node(&p->workers[g], managers[m]))
                exp_group(p, &p->workers[g], &wid, out);
        iof_buf_addstr(out, "'End manager\n");
    }
    iof_buf_addstr(out, "'END manager list\nVersion 1.1.0 \n");
    exp_note(msgs, "target paths are written as they are: in Iometer, targets carry the names "
                   "Windows shows (PHYSICALDRIVE:1, C: \"label\")");
    if (out->err || msgs->err)
        return out->err ? out->err : msgs->err;
    return 0;
}
