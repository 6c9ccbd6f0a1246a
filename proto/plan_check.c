/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_check.c - checks across plan members, run after each member
 * has been read: every test has an end, transfer sizes fit O_DIRECT, the
 * targets and the dedupe unit, one test file has one size, and a node's
 * share of a test fits what one stats message carries. */
#include "proto/plan_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Every test needs an end: a spec without a duration of its own takes
 * run.duration, and one without either needs an io_limit (it then stops
 * at the latest after IOF_IO_LIMIT_MAX_DURATION_NS). run.interval must fit
 * every spec's window. */
int plan_run_check(struct pctx *c, const cJSON *root, const struct iof_plan *p)
{
    char d[32], g[96];

    for (size_t i = 0; i < p->nspecs; i++) {
        const struct iof_spec *s = &p->specs[i];
        uint64_t dur = s->has_duration ? s->duration_ns : p->run.duration_ns;
        if (!dur && !s->io_limit) {
            plan_path_key(c, "run");
            plan_path_key(c, "duration");
            return fail(c,
                        "required but missing (specs[%zu] has neither a duration nor an "
                        "io_limit of its own)",
                        i);
        }
        if (!dur)
            dur = IOF_IO_LIMIT_MAX_DURATION_NS;
        if (p->run.interval_ns > dur) {
            const cJSON *js = cJSON_GetArrayItem(plan_member(root, "specs"), (int)i);
            plan_path_key(c, "specs");
            plan_path_index(c, i);
            plan_path_key(c, "duration");
            proto_plan_format_duration(p->run.interval_ns, d, sizeof(d));
            return fail(c, "must be at least run.interval (%s), got %s", d,
                        plan_got(g, sizeof(g), plan_member(js, "duration")));
        }
    }
    return 0;
}

/* Points the path at specs[s].lines[l].size (cross-checks run after the walk). */
static void path_line_size(struct pctx *c, size_t s, size_t l)
{
    plan_path_pop(c, 0);
    plan_path_add(c, "specs[%zu].lines[%zu].size", s, l);
}

static void path_target_size(struct pctx *c, size_t g, size_t i)
{
    plan_path_pop(c, 0);
    plan_path_add(c, "workers[%zu].targets[%zu].size", g, i);
}

struct test_file {
    const struct iof_target_cfg *t;
    const char *path; /* t's path, or one of its per-node map's */
    size_t g, i;      /* workers[g].targets[i] */
};

/* Calls fn(arg, path) for every path target t names: its plain path, or
 * each entry of its per-node map. */
static void target_paths(const struct iof_target_cfg *t, void (*fn)(void *, const char *),
                         void *arg)
{
    if (t->path[0])
        fn(arg, t->path);
    for (size_t i = 0; i < t->nnode_paths; i++)
        fn(arg, t->node_paths[i].path);
}

struct file_walk {
    struct test_file *files;
    size_t n;
    const struct iof_target_cfg *t;
    size_t g, i;
};

static void count_file(void *arg, const char *path)
{
    struct file_walk *fw = arg;
    if (path[0] != '/')
        fw->n++;
}

static void add_file(void *arg, const char *path)
{
    struct file_walk *fw = arg;
    if (path[0] != '/')
        fw->files[fw->n++] = (struct test_file){fw->t, path, fw->g, fw->i};
}

static int test_file_cmp(const void *a, const void *b)
{
    const struct test_file *x = a, *y = b;
    int r = strcmp(x->path, y->path);

    if (r)
        return r;
    if (x->g != y->g)
        return x->g < y->g ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Checks that need more than one member: O_DIRECT alignment of transfer
 * sizes, lines that cannot fit a target region, one test file given two
 * sizes. */
int plan_cross_check(struct pctx *c, const struct iof_plan *p)
{
    const struct iof_target_cfg *small = NULL;
    size_t small_g = 0, small_i = 0, direct_g = SIZE_MAX, nfiles = 0;
    uint64_t small_len = UINT64_MAX;
    struct file_walk fw = {0};
    struct test_file *files;
    char a[32], b[32], q[96];

    for (size_t g = 0; g < p->nworkers; g++) {
        const struct iof_worker_cfg *w = &p->workers[g];
        if (direct_g == SIZE_MAX && plan_engine_direct(w->engine))
            direct_g = g;
        for (size_t i = 0; i < w->ntargets; i++) {
            const struct iof_target_cfg *t = &w->targets[i];
            uint64_t len;
            target_paths(t, count_file, &fw);
            if (!t->size)
                continue;
            if (t->range_offset_pct || t->range_size_pct) {
                uint64_t st, en;
                if (iof_target_range(t, t->size, DIRECT_IO_ALIGN, &st, &en))
                    continue;
                len = en - st;
            } else {
                len = t->range_size ? t->range_size : t->size - t->range_offset;
            }
            if (len < small_len) {
                small_len = len;
                small = t;
                small_g = g;
                small_i = i;
            }
        }
    }
    for (size_t s = 0; s < p->nspecs; s++) {
        for (size_t l = 0; l < p->specs[s].nlines; l++) {
            uint64_t size = p->specs[s].lines[l].size;
            proto_plan_format_size(size, a, sizeof(a));
            if (direct_g != SIZE_MAX && size % DIRECT_IO_ALIGN) {
                path_line_size(c, s, l);
                return fail(c,
                            "size not aligned for O_DIRECT: %s is not a multiple of 512 "
                            "(workers[%zu] uses engine %s)",
                            a, direct_g, p->workers[direct_g].engine);
            }
            for (size_t g = 0; g < p->nworkers; g++) {
                if (p->workers[g].verify.algo == IOF_VERIFY_NONE || size % 512 == 0)
                    continue;
                path_line_size(c, s, l);
                return fail(c,
                            "%s is not a multiple of 512 (workers[%zu] verifies: every block "
                            "carries a header and a tag per 512-byte sector)",
                            a, g);
            }
            for (size_t g = 0; g < p->nworkers; g++) {
                const struct iof_data_cfg *d = &p->workers[g].data;
                if (!d->enabled || p->specs[s].lines[l].read_pct >= 100 || size % d->unit == 0)
                    continue;
                path_line_size(c, s, l);
                proto_plan_format_size(d->unit, b, sizeof(b));
                return fail(c,
                            "writes of %s are not a whole number of dedupe units (workers[%zu] "
                            "has data.dedupe_unit %s)",
                            a, g, b);
            }
            if (small && size > small_len) {
                path_line_size(c, s, l);
                proto_plan_format_size(small_len, b, sizeof(b));
                return fail(c, "%s does not fit workers[%zu].targets[%zu] (%s, %s usable)", a,
                            small_g, small_i,
                            plan_quote(q, sizeof(q),
                                       small->path[0] || !small->nnode_paths
                                           ? small->path
                                           : small->node_paths[0].path),
                            b);
            }
        }
    }

    /* A relative path is one test file per agent: every mention must agree
     * on its size (every entry of a per-node map counts, on whichever node it
     * is). Sort (path, group, index) and compare neighbours. */
    nfiles = fw.n;
    if (!nfiles)
        return 0;
    files = malloc(nfiles * sizeof(*files));
    if (!files)
        return plan_nomem(c);
    fw.files = files;
    fw.n = 0;
    for (size_t g = 0; g < p->nworkers; g++)
        for (size_t i = 0; i < p->workers[g].ntargets; i++) {
            fw.t = &p->workers[g].targets[i];
            fw.g = g;
            fw.i = i;
            target_paths(fw.t, add_file, &fw);
        }

    qsort(files, nfiles, sizeof(*files), test_file_cmp);
    for (size_t i = 1; i < nfiles; i++) {
        const struct test_file *x = &files[i - 1], *y = &files[i];
        if (strcmp(x->path, y->path) == 0 && x->t->size != y->t->size) {
            struct test_file first = *x, dup = *y;
            free(files);
            path_target_size(c, dup.g, dup.i);
            proto_plan_format_size(first.t->size, a, sizeof(a));
            proto_plan_format_size(dup.t->size, b, sizeof(b));
            return fail(c,
                        "test file %s is %s in workers[%zu].targets[%zu]; one file cannot have "
                        "two sizes, got %s",
                        plan_quote(q, sizeof(q), dup.path), a, first.g, first.i, b);
        }
    }
    free(files);
    return 0;
}

struct node_group {
    const char *name;
    size_t g;
};

static int node_group_cmp(const void *a, const void *b)
{
    const struct node_group *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    return r ? r : (x->g > y->g) - (x->g < y->g);
}

/* A node's share of any test - the workers, and the workers x targets, of
 * every group selecting it - must fit one stats message (IOF_NODE_MAX_*):
 * what validates must run and report. A group naming no node or "*" selects
 * every node. Each group's share is taken at its largest over the cycle
 * (workers and targets cycles grow every group alike, so the sums of those
 * maxima are reached in one test). */
int plan_node_check(struct pctx *c, const struct iof_plan *p)
{
    size_t ntests = 0, npairs = 0, k = 0;
    struct iof_test *tests = iof_plan_expand(p, &ntests);
    uint64_t *wmax = calloc(p->nworkers ? p->nworkers : 1, sizeof(*wmax));
    uint64_t *tmax = calloc(p->nworkers ? p->nworkers : 1, sizeof(*tmax));
    uint64_t star_w = 0, star_t = 0;
    struct node_group *pairs = NULL;
    const char *tname = NULL, *wname = NULL; /* the nodes with the most targets, workers */
    char q[96];
    uint64_t most_w = 0, most_t = 0;
    int rc = 0;

    if (!tests || !wmax || !tmax) {
        rc = fail(c, "out of memory");
        goto out;
    }
    for (size_t g = 0; g < p->nworkers; g++) {
        bool star = p->workers[g].nnodes == 0;
        for (size_t t = 0; t < ntests; t++) {
            struct iof_worker_cfg w = iof_test_worker(p, &tests[t], g);
            if (w.count > wmax[g])
                wmax[g] = w.count;
            if ((uint64_t)w.count * w.ntargets > tmax[g])
                tmax[g] = (uint64_t)w.count * w.ntargets;
        }
        for (size_t i = 0; i < p->workers[g].nnodes; i++)
            star |= !strcmp(p->workers[g].nodes[i], "*");
        if (star) {
            star_w += wmax[g];
            star_t += tmax[g];
        } else {
            npairs += p->workers[g].nnodes;
        }
    }
    most_w = star_w;
    most_t = star_t;
    if (npairs && !(pairs = malloc(npairs * sizeof(*pairs)))) {
        rc = fail(c, "out of memory");
        goto out;
    }
    for (size_t g = 0; g < p->nworkers && pairs; g++) {
        bool star = false;
        for (size_t i = 0; i < p->workers[g].nnodes; i++)
            star |= !strcmp(p->workers[g].nodes[i], "*");
        for (size_t i = 0; !star && i < p->workers[g].nnodes; i++)
            pairs[k++] = (struct node_group){p->workers[g].nodes[i], g};
    }
    if (k)
        qsort(pairs, k, sizeof(*pairs), node_group_cmp);
    for (size_t i = 0, j; i < k; i = j) {
        uint64_t w = star_w, t = star_t;
        for (j = i; j < k && !strcmp(pairs[j].name, pairs[i].name); j++)
            if (j == i || pairs[j].g != pairs[j - 1].g) {
                w += wmax[pairs[j].g];
                t += tmax[pairs[j].g];
            }
        if (t > most_t) {
            tname = pairs[i].name;
            most_t = t;
        }
        if (w > most_w) {
            wname = pairs[i].name;
            most_w = w;
        }
    }
    plan_path_pop(c, 0);
    plan_path_add(c, "workers");
    if (most_t > IOF_NODE_MAX_TARGETS)
        rc = fail(c,
                  "%s%s would run %" PRIu64 " targets in one test (the workers x targets of "
                  "the groups that select it), at most %d, what one node's stats carry",
                  tname ? "node " : "every node", tname ? plan_quote(q, sizeof(q), tname) : "",
                  most_t, IOF_NODE_MAX_TARGETS);
    else if (most_w > IOF_NODE_MAX_WORKERS)
        rc = fail(c, "%s%s would run %" PRIu64 " workers in one test, at most %d",
                  wname ? "node " : "every node", wname ? plan_quote(q, sizeof(q), wname) : "",
                  most_w, IOF_NODE_MAX_WORKERS);
    else
        plan_path_pop(c, 0);
out:
    free(tests);
    free(wmax);
    free(tmax);
    free(pairs);
    return rc;
}
