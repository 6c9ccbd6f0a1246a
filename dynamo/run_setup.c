/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/run_setup.c - a test's set-up and tear-down on this node: its
 * targets opened (and their verify state), each worker's slots, buffers,
 * data and engine made ready before the start time (dyn_test_setup), and
 * everything closed and freed again (dyn_test_free). The I/O loop is
 * dynamo/run.c. */
#include "dynamo/run.h"
#include "dynamo/run_int.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "common/budget.h"
#include "common/log.h"
#include "dynamo/os/os.h"

static uint64_t run_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void worker_destroy(struct run_worker *w)
{
    if (w->eng)
        w->eng->close(w->ctx);
    free(w->regions);
    free(w->slots);
    free(w->freeq);
    free(w->batch);
    free(w->done);
    dyn_os_io_buf_free(w->rbufs);
    dyn_os_io_buf_free(w->wbuf);
    free(w->ring);
    free(w->scratch);
    free(w->totals);
    free(w->lateness);
    free(w->vbusy);
    free(w->vskip);
    free(w->vgens);
    free(w->vtk);
}

/* The spec group g runs in this test, NULL when it idles. */
static const struct iof_spec *group_spec(const struct dyn_test *t, size_t g)
{
    return t->p.group_specs ? t->p.group_specs[g] : t->p.spec;
}

static int worker_setup(struct dyn_test *t, struct run_worker *w, struct iof_diag *diag)
{
    const struct iof_spec *spec = group_spec(t, w->group);
    const struct iof_worker_cfg *g = &t->p.groups[w->group];
    uint64_t seed = g->has_seed ? g->seed : t->p.seed;
    int r;

    w->test = t;
    w->eng = dyn_engine_find(g->engine);
    if (!w->eng)
        return iof_diag_set(diag, IOF_EENGINE, "unknown engine '%s'", g->engine);
    w->submit_batch = w->eng->facts->submit_batch;
    w->qd = g->queue_depth ? g->queue_depth : 1;
    w->ntargets = t->group_ntargets[w->group];
    w->targets = t->group_targets[w->group];
    w->tcfg = g->targets;
    w->pattern = g->pattern;
    w->depth = (unsigned)(w->ntargets * w->qd);
    w->maxsize = iof_budget_slot_size(spec);
    w->io_limit = spec->io_limit;
    w->io_left = UINT64_MAX;
    struct iof_rate rate = g->rate;
    if (t->p.worker_iops)
        rate = (struct iof_rate){.unit =
                                     t->p.worker_iops[w->index] > 0 ? IOF_RATE_IOPS : IOF_RATE_NONE,
                                 .value = t->p.worker_iops[w->index],
                                 .arrival = g->rate.arrival};
    w->rated = rate.unit != IOF_RATE_NONE;
    w->paced = w->rated || w->io_limit;
    w->rate = rate;
    if (w->rated) {
        w->spin_ns = RUN_SPIN_INIT_NS + RUN_SPIN_PAD_NS;
        w->lateness = malloc(sizeof(*w->lateness));
        if (!w->lateness)
            return iof_diag_set(diag, -ENOMEM, "worker %zu: out of memory", w->index);
        iof_hist_reset(w->lateness);
        if (w->index == 0 && t->p.trace) {
            w->trace = t->p.trace;
            w->trace_left = t->p.ntrace;
        }
    }

    /* Every worker gets its own stream; the same seed gives the same run. */
    r = dyn_gen_init(&w->gen, spec, seed ^ ((uint64_t)(w->index + 1) * 0x9e3779b97f4a7c15ULL));
    if (r)
        return iof_diag_set(diag, IOF_EPLAN, "spec '%s': no line with a positive share",
                            spec->name);

    w->regions = calloc(w->ntargets, sizeof(*w->regions));
    w->slots = calloc(w->depth, sizeof(*w->slots));
    w->freeq = calloc(w->depth, sizeof(*w->freeq));
    w->batch = calloc(w->depth, sizeof(*w->batch));
    w->done = calloc(RUN_REAP_CHUNK, sizeof(*w->done));
    w->ring = calloc((size_t)RUN_RING * w->ntargets, sizeof(*w->ring));
    w->scratch = calloc(w->ntargets, sizeof(*w->scratch));
    w->totals = calloc(w->ntargets, sizeof(*w->totals));
    for (size_t i = 0; i < spec->nlines; i++)
        w->may_write |= spec->lines[i].share && spec->lines[i].read_pct < 100;
    w->has_data = g->data.enabled;
    w->valgo = (uint8_t)g->verify.algo; /* the same values as enum dyn_verify_algo */
    w->vafter = w->valgo && g->verify.mode == IOF_VERIFY_AFTER;
    /* Generations increase across tests and runs of this node: the wall
     * clock at setup (ns) leaves room for a billion writes a second. */
    w->vgen = iof_wall_ns();
    if (w->valgo) {
        w->vbusy = calloc(w->depth, 1);
        w->vskip = calloc(w->depth, 1);
        w->vgens = calloc(w->depth, sizeof(*w->vgens));
        w->vtk = calloc(w->depth, sizeof(*w->vtk));
        w->vmap = t->group_gm[w->group];
        if (!w->vbusy || !w->vskip || !w->vgens || !w->vtk)
            return iof_diag_set(diag, -ENOMEM, "worker %zu: out of memory", w->index);
    }
    /* A worker whose spec never writes needs no write data: one slot, not
     * a buffer per slot filled at set-up (the budget still counts them). */
    w->wbuf_len = w->may_write || w->valgo || w->has_data
                      ? (size_t)iof_budget_write_bytes(g, w->depth, w->maxsize)
                      : w->maxsize;
    w->rbufs = dyn_os_io_buf_alloc((size_t)w->depth * w->maxsize);
    w->wbuf = dyn_os_io_buf_alloc(w->wbuf_len);
    if (!w->regions || !w->slots || !w->freeq || !w->batch || !w->done || !w->ring || !w->scratch ||
        !w->totals || !w->rbufs || !w->wbuf)
        return iof_diag_set(diag, -ENOMEM,
                            "worker %zu: out of memory for %u I/O buffers of %zu bytes", w->index,
                            w->depth, w->maxsize);
    for (size_t i = 0; i < w->ntargets; i++)
        iof_stats_reset(&w->totals[i]);
    for (size_t i = 0; i < (size_t)RUN_RING * w->ntargets; i++)
        iof_stats_reset(&w->ring[i]);

    if (w->has_data) {
        /* Duplicates shared by every worker and node of the group (its
         * seed, if any, not the per-node default); unique units from node,
         * run, test and worker. */
        size_t slots = (size_t)w->depth * w->maxsize;
        uint64_t pool_seed = run_mix((g->has_seed ? g->seed : 0) ^ 0x646174612d706f6fULL);
        uint64_t unique_seed = run_mix(run_mix(t->p.node_id ^ t->p.run_nonce) ^
                                       ((uint64_t)(w->index + 1) * 0x9e3779b97f4a7c15ULL));
        dyn_data_init(&w->data, &g->data, w->wbuf + slots, pool_seed, unique_seed);
        dyn_data_prepare(&w->data, w->wbuf, slots);
    } else if (w->pattern == IOF_PATTERN_REPEAT) {
        for (size_t i = 0; i < w->wbuf_len; i++)
            w->wbuf[i] = (uint8_t)(i & 0xff);
    } else {
        struct dyn_rng rng;
        dyn_rng_seed(&rng, seed + w->index);
        for (size_t i = 0; i + 8 <= w->wbuf_len; i += 8) {
            uint64_t v = dyn_rng_next(&rng);
            memcpy(w->wbuf + i, &v, 8);
        }
    }
    memset(w->rbufs, 0, (size_t)w->depth * w->maxsize);

    for (size_t ti = 0; ti < w->ntargets; ti++) {
        struct dyn_target *tg = w->targets[ti];
        dyn_gen_region_init(&w->regions[ti], &w->gen, tg->start, tg->end, tg->lbs);
        if (g->offset_increment)
            dyn_gen_region_seek(&w->regions[ti],
                                dyn_gen_stream_start(tg->end - tg->start, g->offset_increment,
                                                     g->offset_increment_pct, w->in_group));
    }
    /* Slots interleave the targets, so the first fill (and every fill after a
     * pause) takes them in turn. */
    for (unsigned i = 0; i < w->depth; i++) {
        struct dyn_io *io = &w->slots[i];
        size_t ti = i % w->ntargets;
        io->fd = w->targets[ti]->fd;
        io->target = (uint32_t)ti;
        freeq_push(w, io);
    }
    {
        const struct iovec bufs[] = {{w->rbufs, (size_t)w->depth * w->maxsize},
                                     {w->wbuf, w->wbuf_len}};
        const struct dyn_engine_opts eo = {.hipri = g->hipri, .bufs = bufs, .nbufs = 2};
        return w->eng->open(&w->ctx, w->slots, w->depth, &eo, diag);
    }
}

/* The largest alignment (or, without one, transfer size) of the spec's
 * lines: an offset that moves by it keeps every line's alignment. */
static uint64_t spec_unit(const struct iof_spec *s)
{
    uint64_t u = 0;
    for (size_t i = 0; i < s->nlines; i++) {
        uint64_t a = s->lines[i].align ? s->lines[i].align : s->lines[i].size;
        if (s->lines[i].share && a > u)
            u = a;
    }
    return u;
}

/* Whether a group of test t writes test file `path` without verify. */
static bool test_writes_unverified(const struct dyn_test *t, const char *path)
{
    for (size_t h = 0; h < t->p.ngroups; h++) {
        const struct iof_worker_cfg *gc = &t->p.groups[h];
        const struct iof_spec *spec = group_spec(t, h);
        if (gc->verify.algo != IOF_VERIFY_NONE || !spec || !spec_writes(spec))
            continue;
        for (size_t k = 0; k < gc->ntargets; k++)
            if (!strcmp(gc->targets[k].path, path))
                return true;
    }
    return false;
}

/* The expected generations of verified test file i of group g: the state
 * file in the workdir (genmap.h), shared with an earlier group naming the
 * same file. Devices and absolute paths have none, nor a file another
 * group of the test writes without verify (its state is removed: blocks
 * without a header where it expected one would be reported). */
static int test_open_genmap(struct dyn_test *t, size_t g, size_t i, struct iof_diag *diag)
{
    const struct iof_target_cfg *tc = &t->p.groups[g].targets[i];
    const struct dyn_target *tg = t->group_targets[g][i];
    struct stat st;

    if (tc->path[0] == '/' || tg->fd < 0 || !t->p.scope)
        return 0;
    if (test_writes_unverified(t, tc->path))
        return dyn_genmap_forget(t->p.scope, tc->path, diag);
    for (size_t h = 0; h <= g; h++)
        for (size_t k = 0; k < (h < g ? t->group_ntargets[h] : i); k++)
            if (t->group_gm[h][k] && !strcmp(t->p.groups[h].targets[k].path, tc->path)) {
                t->group_gm[g][i] = t->group_gm[h][k];
                return 0;
            }
    if (fstat(tg->fd, &st) < 0)
        return iof_diag_set(diag, -errno, "target '%s': %s", tg->path, strerror(errno));
    t->gm_own[g][i] = true;
    return dyn_genmap_open(t->p.scope, tc->path, st.st_dev, st.st_ino, tg->size, &t->group_gm[g][i],
                           diag);
}

static int test_open_targets(struct dyn_test *t, struct iof_diag *diag)
{
    t->ngroups = t->p.ngroups;
    t->group_targets = calloc(t->ngroups, sizeof(*t->group_targets));
    t->group_ntargets = calloc(t->ngroups, sizeof(*t->group_ntargets));
    t->group_gm = calloc(t->ngroups, sizeof(*t->group_gm));
    t->gm_own = calloc(t->ngroups, sizeof(*t->gm_own));
    if (!t->group_targets || !t->group_ntargets || !t->group_gm || !t->gm_own)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    for (size_t g = 0; g < t->ngroups; g++) {
        const struct iof_worker_cfg *gc = &t->p.groups[g];
        struct iof_diag why = {{0}};
        const struct dyn_engine_ops *eng = dyn_engine_lookup(gc->engine, &why);
        const struct iof_spec *spec = group_spec(t, g);
        bool writes = spec && spec_writes(spec);
        if (!eng)
            return iof_diag_set(diag, IOF_EENGINE, "workers[%zu]: %s", g, why.msg);
        t->group_targets[g] = calloc(gc->ntargets ? gc->ntargets : 1, sizeof(**t->group_targets));
        t->group_gm[g] = calloc(gc->ntargets ? gc->ntargets : 1, sizeof(**t->group_gm));
        t->gm_own[g] = calloc(gc->ntargets ? gc->ntargets : 1, sizeof(**t->gm_own));
        if (!t->group_targets[g] || !t->group_gm[g] || !t->gm_own[g])
            return iof_diag_set(diag, -ENOMEM, "out of memory");
        for (size_t i = 0; spec && i < gc->ntargets; i++) {
            struct dyn_target *tg;
            struct dyn_gen_region reg;
            int r = dyn_target_open(&gc->targets[i], t->p.scope, eng->facts->direct, writes,
                                    eng->facts->touches_files, t->p.allow_destructive, &tg, diag);
            if (r)
                return r;
            t->group_targets[g][t->group_ntargets[g]++] = tg;
            if (gc->verify.algo != IOF_VERIFY_NONE && dyn_target_skip_marker(tg, spec_unit(spec)))
                IOF_INFO("target '%s': verify leaves iofleet's marker out: bytes %" PRIu64
                         "..%" PRIu64 " of %" PRIu64 " tested",
                         tg->path, tg->start, tg->end, tg->dev_size);
            if (gc->verify.algo != IOF_VERIFY_NONE && (r = test_open_genmap(t, g, i, diag)))
                return r;
            /* Written without verify: what the state says no longer holds. */
            if (gc->verify.algo == IOF_VERIFY_NONE && writes && eng->facts->touches_files &&
                gc->targets[i].path[0] != '/' && t->p.scope &&
                (r = dyn_genmap_forget(t->p.scope, gc->targets[i].path, diag)))
                return r;
            dyn_gen_region_init(&reg, NULL, tg->start, tg->end, tg->lbs);
            r = dyn_gen_check(spec, &reg, diag);
            if (r) {
                char msg[sizeof(diag->msg)];
                if (!diag)
                    return r;
                snprintf(msg, sizeof(msg), "%s", diag->msg);
                return iof_diag_set(diag, r, "target '%s': %s", tg->path, msg);
            }
        }
    }
    return 0;
}

int dyn_test_setup(const struct dyn_test_params *p, struct dyn_test **out, struct iof_diag *diag)
{
    struct dyn_test *t = calloc(1, sizeof(*t));
    size_t w = 0;
    int r;

    if (!t)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    t->p = *p;
    if (t->p.interval_ns == 0 || t->p.duration_ns == 0) {
        free(t);
        return iof_diag_set(diag, -EINVAL, "test needs a positive duration and interval");
    }
    t->nintervals = (p->duration_ns + p->interval_ns - 1) / p->interval_ns;
    atomic_init(&t->stop, false);
    pthread_mutex_init(&t->vlock, NULL);
    t->joined = true; /* nothing to join until threads exist */

    r = test_open_targets(t, diag);
    if (r)
        goto fail;
    for (size_t g = 0; g < p->ngroups; g++)
        if (group_spec(t, g))
            t->nworkers += p->groups[g].count;
    t->workers = calloc(t->nworkers ? t->nworkers : 1, sizeof(*t->workers));
    if (!t->workers) {
        r = iof_diag_set(diag, -ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t g = 0; g < p->ngroups; g++) {
        for (uint32_t c = 0; group_spec(t, g) && c < p->groups[g].count; c++, w++) {
            t->workers[w].index = w;
            t->workers[w].group = g;
            t->workers[w].in_group = c;
            atomic_init(&t->workers[w].published, 0);
            atomic_init(&t->workers[w].released, 0);
            atomic_init(&t->workers[w].done_flag, false);
            atomic_init(&t->workers[w].ended_ns, 0);
            r = worker_setup(t, &t->workers[w], diag);
            if (r)
                goto fail;
        }
    }
    t->joined = false;
    atomic_init(&t->vafter_done, 0);
    atomic_init(&t->vafter_active, 0);
    for (w = 0; w < t->nworkers; w++)
        for (size_t ti = 0; t->workers[w].vafter && ti < t->workers[w].ntargets; ti++) {
            uint64_t pos, stop;
            run_verify_after_share(&t->workers[w], ti, &pos, &stop);
            t->vafter_total += stop > pos ? stop - pos : 0;
        }
    *out = t;
    return 0;
fail:
    dyn_test_free(t);
    return r;
}

void dyn_test_free(struct dyn_test *t)
{
    if (!t)
        return;
    if (!t->joined) {
        dyn_test_stop(t);
        dyn_test_join(t, NULL);
    }
    if (t->workers)
        for (size_t w = 0; w < t->nworkers; w++) {
            /* What the workers may have written, for the device claims'
             * markers (dyn_target_close): a worker that left the start
             * barrier with writes in its spec. Decided here, once, not on
             * the I/O path. */
            struct run_worker *wk = &t->workers[w];
            for (size_t i = 0; wk->may_write && wk->started_ns && i < wk->ntargets; i++)
                wk->targets[i]->wrote = true;
            worker_destroy(wk);
        }
    free(t->workers);
    for (size_t g = 0; g < t->ngroups && t->group_targets; g++) {
        if (!t->group_targets[g])
            continue;
        for (size_t i = 0; i < t->group_ntargets[g]; i++) {
            if (t->gm_own && t->gm_own[g] && t->gm_own[g][i])
                dyn_genmap_close(t->group_gm[g][i]);
            dyn_target_close(t->group_targets[g][i]);
        }
        free(t->group_targets[g]);
        if (t->group_gm)
            free(t->group_gm[g]);
        if (t->gm_own)
            free(t->gm_own[g]);
    }
    free(t->group_targets);
    free(t->group_ntargets);
    free(t->group_gm);
    free(t->gm_own);
    free(t->vbad);
    pthread_mutex_destroy(&t->vlock);
    free(t);
}
