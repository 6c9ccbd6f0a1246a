/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/agent_prep.c - the plan as assigned to this node and its preparation
 * (test files written on a libuv worker thread, progress through an async). */
#include "dynamo/agent_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- preparation ------------------------------------------------------------- */

/* On the preparation thread, after every chunk: reports progress every
 * 64 MiB and stops at once when the session is gone (dead-man rule). */
static int prep_progress(void *arg, const char *path, uint64_t done, uint64_t total)
{
    struct session *s = arg;
    if (atomic_load(&s->prep_cancel))
        return -ECANCELED;
    if (done % (64u << 20) && done != total)
        return 0;
    pthread_mutex_lock(&s->prep_lock);
    snprintf(s->prep_path, sizeof(s->prep_path), "%s", path);
    s->prep_done = done;
    s->prep_total = total;
    s->prep_dirty = true;
    pthread_mutex_unlock(&s->prep_lock);
    uv_async_send(&s->prep_async);
    return 0;
}

struct place_str {
    char device[64], fstype[32];
};

/* Notes where target `ti` of plan group `gi` lives, once per path and up to
 * PROTO_PLACES_MAX (a plan naming more leaves the rest unknown). */
static void prep_note_place(struct session *s, size_t gi, size_t ti)
{
    const char *path = s->plan.workers[gi].targets[ti].path;
    struct iof_diag d = {{0}};
    struct stat st;
    int fd;

    for (size_t i = 0; i < s->nplaces; i++) {
        const struct proto_target_place *p = &s->places[i];
        if (!strcmp(s->plan.workers[p->group].targets[p->target].path, path))
            return;
    }
    if (s->nplaces == PROTO_PLACES_MAX)
        return;
    if (!s->places) {
        s->places = calloc(PROTO_PLACES_MAX, sizeof(*s->places));
        s->place_str = calloc(PROTO_PLACES_MAX, sizeof(*s->place_str));
        if (!s->places || !s->place_str) {
            free(s->places);
            free(s->place_str);
            s->places = NULL;
            s->place_str = NULL;
            return;
        }
    }
    fd = dyn_scope_open(s->a->scope, path, O_PATH, &st, &d);
    if (fd < 0)
        return; /* prepared a moment ago; the test's own open says why */
    struct place_str *ps = &s->place_str[s->nplaces];
    int ram = dyn_inventory_place(fd, &st, ps->device, sizeof(ps->device), ps->fstype,
                                  sizeof(ps->fstype));
    close(fd);
    s->places[s->nplaces++] = (struct proto_target_place){
        .group = (uint32_t)gi,
        .target = (uint32_t)ti,
        .device = ps->device[0] ? ps->device : NULL,
        .fstype = ps->fstype[0] ? ps->fstype : NULL,
        .ram_backed = ram,
    };
}

static void prep_work(uv_work_t *w)
{
    struct session *s = w->data;
    s->prep_err = 0;
    s->nplaces = 0;
    for (size_t g = 0; g < s->ngroups && !s->prep_err; g++) {
        const struct iof_worker_cfg *gc = &s->plan.workers[s->groups[g]];
        struct iof_diag missing = {{0}};
        const struct dyn_engine_ops *eng = dyn_engine_lookup(gc->engine, &missing);
        /* An engine of the other system (windows on Linux, libaio on
         * Windows), or a kernel without it (io_uring absent or disabled by
         * sysctl), refuses the plan here, before any file is written. */
        if (!eng) {
            iof_diag_set(&s->prep_diag, IOF_EENGINE, "workers[%zu]: %s", s->groups[g], missing.msg);
            s->prep_err = IOF_EENGINE;
            break;
        }
        if (eng->probe && (s->prep_err = eng->probe(&s->prep_diag))) {
            char why[sizeof(s->prep_diag.msg)];
            snprintf(why, sizeof(why), "%s", s->prep_diag.msg);
            iof_diag_set(&s->prep_diag, IOF_EENGINE,
                         "workers[%zu]: engine %s is not available on this node: %s", s->groups[g],
                         gc->engine, why);
            s->prep_err = IOF_EENGINE;
            break;
        }
        if (!eng->facts->touches_files)
            continue;
        for (size_t i = 0; i < gc->ntargets && !s->prep_err; i++) {
            struct dyn_created f;
            s->prep_err = dyn_target_prepare_noted(&gc->targets[i], s->a->scope, gc->pattern,
                                                   prep_progress, s, &f, &s->prep_diag);
            if (!s->prep_err)
                prep_note_place(s, s->groups[g], i);
            if (f.path[0]) {
                struct dyn_created *grown =
                    realloc(s->created, (s->ncreated + 1) * sizeof(*s->created));
                if (grown) {
                    s->created = grown;
                    s->created[s->ncreated++] = f;
                } else {
                    IOF_WARN("test file '%s': out of memory: not removed at the session's end",
                             f.path);
                }
            }
        }
    }
}

void dyn_prep_on_async(uv_async_t *h)
{
    struct session *s = h->data;
    struct proto_msg m;
    char path[IOF_PATH_MAX];

    pthread_mutex_lock(&s->prep_lock);
    if (!s->prep_dirty) {
        pthread_mutex_unlock(&s->prep_lock);
        return;
    }
    s->prep_dirty = false;
    snprintf(path, sizeof(path), "%s", s->prep_path);
    proto_msg_init(&m, PROTO_MSG_PREPARE_PROGRESS);
    m.u.prepare_progress.path = path;
    m.u.prepare_progress.done = s->prep_done;
    m.u.prepare_progress.total = s->prep_total;
    pthread_mutex_unlock(&s->prep_lock);
    if (!s->gone)
        proto_link_send(s->link, &m);
}

static void prep_after(uv_work_t *w, int status)
{
    struct session *s = w->data;
    struct proto_msg m;

    s->preparing = false;
    if (s->gone) {
        s->a->draining--;
        dyn_session_maybe_free(s);
        return;
    }
    dyn_prep_on_async(&s->prep_async);
    if (status < 0 || s->prep_err) {
        dyn_session_send_error(s, s->prep_err ? s->prep_err : status, "%s: %s", s->a->name,
                               s->prep_err ? s->prep_diag.msg : uv_strerror(status));
        return;
    }
    s->prepared = true;
    proto_msg_init(&m, PROTO_MSG_PREPARED);
    m.u.prepared.places = s->places;
    m.u.prepared.nplaces = s->nplaces;
    proto_link_send(s->link, &m);
}

void dyn_session_prepare(struct session *s, const struct proto_prepare *pm)
{
    struct iof_diag d = {{0}};
    int r;

    dyn_session_drop_ready(s);
    if (!s->have_plan || s->dt || s->starting || s->preparing) {
        dyn_session_send_error(s, IOF_EPROTO, "%s: prepare %s", s->a->name,
                               !s->have_plan ? "before any plan" : "while busy");
        return;
    }
    /* The budget: every test of the plan must fit before anything is
     * written, opened or started. */
    for (size_t i = 0; i < s->ntests; i++) {
        r = dyn_session_check_budget(s, &s->tests[i], &d);
        if (r) {
            char label[64], specs[160];
            iof_test_cycle_label(&s->tests[i], label, sizeof(label));
            iof_test_spec_label(&s->plan, &s->tests[i], specs, sizeof(specs));
            dyn_session_send_error(s, r, "%s: test %zu (spec '%s'%s%s): %s", s->a->name, i + 1,
                                   specs, label[0] ? ", " : "", label, d.msg);
            return;
        }
    }
    if (mkdir(s->a->o->workdir, 0700) < 0 && errno != EEXIST) {
        dyn_session_send_error(s, -errno, "%s: workdir '%s': %s", s->a->name, s->a->o->workdir,
                               strerror(errno));
        return;
    }
    s->prep_work.data = s;
    s->prepared = false;
    s->preparing = true;
    s->cleanup = s->cleanup || pm->cleanup;
    r = uv_queue_work(s->a->loop, &s->prep_work, prep_work, prep_after);
    if (r < 0) {
        s->preparing = false;
        dyn_session_send_error(s, r, "%s: cannot start preparation: %s", s->a->name,
                               uv_strerror(r));
    }
}

/* --- the plan ------------------------------------------------------------------ */

static bool group_selects(const struct iof_worker_cfg *g, const char *name)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i], "*") || !strcmp(g->nodes[i], name))
            return true;
    return g->nnodes == 0;
}

void dyn_session_drop_plan(struct session *s)
{
    if (!s->have_plan)
        return;
    iof_plan_free(&s->plan);
    free(s->tests);
    free(s->groups);
    free(s->gcfg);
    free(s->gspec);
    s->tests = NULL;
    s->groups = NULL;
    s->gcfg = NULL;
    s->gspec = NULL;
    s->have_plan = false;
    s->prepared = false;
}

void dyn_session_take_plan(struct session *s, const struct proto_plan *pm)
{
    struct iof_diag d = {{0}};
    int r;

    dyn_session_drop_ready(s);

    if (s->dt || s->starting || s->preparing) {
        dyn_session_send_error(s, IOF_EBUSY, "%s: a plan cannot change while busy", s->a->name);
        return;
    }
    dyn_session_drop_plan(s);
    /* What --allow names now: a /dev/disk/by-* link follows its device. */
    r = dyn_scope_refresh(s->a->scope, &d);
    if (r) {
        dyn_session_send_error(s, r, "%s: %s", s->a->name, d.msg);
        return;
    }
    r = proto_plan_parse("plan", pm->text, pm->len, NULL, 0, &s->plan, &d);
    if (r) {
        dyn_session_send_error(s, IOF_EPLAN, "%s: %s", s->a->name, d.msg);
        return;
    }
    /* Test indexes name tests of this side's layout: a find_max search
     * has another one before PROTO_MINOR_FIND_MAX. */
    if (s->plan.cycle.param == IOF_CYCLE_RATE && s->plan.cycle.rate.find_max &&
        !proto_find_max_ok(s->mgr_minor)) {
        iof_plan_free(&s->plan);
        dyn_session_send_error(
            s, IOF_EVERSION,
            "%s: a find_max plan needs protocol 1.%d on both sides (the manager "
            "speaks 1.%u, whose search lays out its tests otherwise): upgrade the "
            "manager",
            s->a->name, PROTO_MINOR_FIND_MAX, s->mgr_minor);
        return;
    }
    s->have_plan = true;
    s->tests = iof_plan_expand(&s->plan, &s->ntests);
    s->groups = calloc(s->plan.nworkers, sizeof(*s->groups));
    s->gcfg = calloc(s->plan.nworkers, sizeof(*s->gcfg));
    s->gspec = calloc(s->plan.nworkers ? s->plan.nworkers : 1, sizeof(*s->gspec));
    if (!s->tests || !s->groups || !s->gcfg || !s->gspec) {
        dyn_session_drop_plan(s);
        dyn_session_send_error(s, -ENOMEM, "%s: out of memory for the plan", s->a->name);
        return;
    }
    s->ngroups = 0;
    for (size_t g = 0; g < s->plan.nworkers; g++) {
        const struct iof_worker_cfg *gc = &s->plan.workers[g];
        if (!group_selects(gc, s->a->name))
            continue;
        for (size_t i = 0; i < gc->ntargets; i++) {
            r = dyn_agent_check_target(s->a, &gc->targets[i], &d);
            if (r) {
                dyn_session_drop_plan(s);
                dyn_session_send_error(s, r, "%s: workers[%zu].targets[%zu]: %s", s->a->name, g, i,
                                       d.msg);
                return;
            }
        }
        s->groups[s->ngroups++] = g;
    }
    IOF_INFO("plan '%s' from %s: %zu tests, %zu worker groups here", s->plan.name, s->manager,
             s->ntests, s->ngroups);
}
