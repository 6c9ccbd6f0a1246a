/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/inventory.c - the agent's cached inventory (dynamo/inventory.h):
 * taken by the platform layer's probes on a thread of its own, shared by the
 * hellos that send it; and the one escaper of what the probes read. */
#include "dynamo/inventory.h"

#include "common/text.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void dyn_inventory_clean(char *buf, size_t cap, const char *s)
{
    iof_text_escape(buf, cap, s);
}

/* ---- the agent's cached inventory ------------------------------------------ */

/* One inventory, shared by the hellos that send it: freed with its last
 * reference. */
struct dyn_inv_snap {
    atomic_uint refs;
    size_t n;
    struct proto_target_info *ti;
    struct dyn_inv_strings *strs; /* n + 1: the last is the workdir's */
    struct proto_workdir_info wd;
};

struct dyn_inv_cache {
    pthread_mutex_t lock;
    char *workdir;
    char **paths;
    size_t n;
    struct dyn_inv_snap *snap; /* the newest; never NULL after _new() */
    bool busy;                 /* a refresh thread runs */
    bool closed;               /* the owner let go: the thread frees the cache */
    void (*done)(void *arg);
    void *arg;
};

static void snap_unref(struct dyn_inv_snap *sn)
{
    if (!sn || atomic_fetch_sub(&sn->refs, 1) != 1)
        return;
    free(sn->ti);
    free(sn->strs);
    free(sn);
}

static struct dyn_inv_snap *snap_take(const char *workdir, char *const *paths, size_t n)
{
    struct dyn_inv_snap *sn = calloc(1, sizeof(*sn));

    if (!sn)
        return NULL;
    sn->ti = calloc(n ? n : 1, sizeof(*sn->ti));
    sn->strs = calloc(n + 1, sizeof(*sn->strs));
    if (!sn->ti || !sn->strs) {
        free(sn->ti);
        free(sn->strs);
        free(sn);
        return NULL;
    }
    atomic_init(&sn->refs, 1);
    sn->n = n;
    for (size_t i = 0; i < n; i++)
        dyn_inventory_target(paths[i], &sn->ti[i], &sn->strs[i]);
    dyn_inventory_workdir(workdir, &sn->wd, &sn->strs[n]);
    return sn;
}

static void cache_free(struct dyn_inv_cache *c)
{
    snap_unref(c->snap);
    for (size_t i = 0; i < c->n; i++)
        free(c->paths[i]);
    free(c->paths);
    free(c->workdir);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

struct dyn_inv_cache *dyn_inv_cache_new(const char *workdir, char *const *paths, size_t n)
{
    struct dyn_inv_cache *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->workdir = strdup(workdir);
    c->paths = calloc(n ? n : 1, sizeof(*c->paths));
    bool ok = c->workdir && c->paths;
    for (size_t i = 0; ok && i < n; i++, c->n++)
        ok = (c->paths[i] = strdup(paths[i])) != NULL;
    if (ok)
        c->snap = snap_take(c->workdir, c->paths, c->n);
    if (!ok || !c->snap) {
        cache_free(c);
        return NULL;
    }
    return c;
}

static void *refresh_main(void *arg)
{
    struct dyn_inv_cache *c = arg;
    struct dyn_inv_snap *sn = snap_take(c->workdir, c->paths, c->n), *old = NULL;
    bool closed;

    pthread_mutex_lock(&c->lock);
    if (sn) {
        old = c->snap;
        c->snap = sn;
    }
    c->busy = false;
    closed = c->closed;
    if (!closed && c->done)
        c->done(c->arg); /* under the lock: the owner cannot close its handle meanwhile */
    pthread_mutex_unlock(&c->lock);
    snap_unref(old);
    if (closed)
        cache_free(c);
    return NULL;
}

bool dyn_inv_cache_refresh(struct dyn_inv_cache *c, void (*done)(void *arg), void *arg)
{
    pthread_attr_t attr;
    pthread_t t;
    bool started = false;

    pthread_mutex_lock(&c->lock);
    if (!c->busy && !c->closed) {
        c->done = done;
        c->arg = arg;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        started = pthread_create(&t, &attr, refresh_main, c) == 0;
        pthread_attr_destroy(&attr);
        c->busy = started;
    }
    pthread_mutex_unlock(&c->lock);
    return started;
}

void *dyn_inv_cache_fill(struct dyn_inv_cache *c, struct proto_inventory *inv)
{
    struct dyn_inv_snap *sn;

    pthread_mutex_lock(&c->lock);
    sn = c->snap;
    atomic_fetch_add(&sn->refs, 1);
    pthread_mutex_unlock(&c->lock);
    inv->targets = sn->ti;
    inv->ntargets = sn->n < PROTO_TARGETS_MAX ? sn->n : PROTO_TARGETS_MAX;
    inv->workdir = sn->wd;
    return sn;
}

void dyn_inv_cache_release(void *hold)
{
    snap_unref(hold);
}

void dyn_inv_cache_close(struct dyn_inv_cache *c)
{
    bool busy;

    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->closed = true;
    c->done = NULL;
    busy = c->busy;
    pthread_mutex_unlock(&c->lock);
    if (!busy)
        cache_free(c);
}
