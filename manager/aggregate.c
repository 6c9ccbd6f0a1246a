/* SPDX-License-Identifier: Apache-2.0 */
/* manager/aggregate.c - a test's figures as the agents send them: merges
 * intervals across nodes and publishes them in order, keeps each node's
 * intervals for the case it is lost before its result, builds the final
 * rows with their metrics computed once for every sink and the table.
 */
#include "manager/aggregate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "manager/term.h"

#define AGG_SINKS(g, call)                                                                         \
    do {                                                                                           \
        for (size_t si_ = 0; si_ < (g)->nsinks; si_++) {                                           \
            struct mgr_sink *s_ = (g)->sinks[si_];                                                 \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

void mgr_agg_init(struct mgr_agg *g, const struct iof_plan *p, const struct iof_test *tests,
                  size_t ntests, struct mgr_sink *const *sinks, size_t nsinks,
                  struct mgr_live *live, const struct mgr_agg_hooks *hooks, bool verbose,
                  uint64_t run_mono_ns)
{
    memset(g, 0, sizeof(*g));
    g->p = p;
    g->tests = tests;
    g->ntests = ntests;
    g->sinks = sinks;
    g->nsinks = nsinks;
    g->live = live;
    g->hooks = *hooks;
    g->verbose = verbose;
    g->run_mono_ns = run_mono_ns;
    /* GROUP rows only with several groups (one group's row would repeat
     * ALL's); without memory for them, none. */
    if (p->nworkers > 1)
        g->groups = calloc(p->nworkers, sizeof(*g->groups));
}

void mgr_agg_free(struct mgr_agg *g)
{
    free(g->groups);
    g->groups = NULL;
    mgr_summary_free(&g->summary);
}

static uint64_t agg_nintervals(const struct mgr_agg *g)
{
    return (g->run.duration_ns + g->run.interval_ns - 1) / g->run.interval_ns;
}

void mgr_agg_test_begin(struct mgr_agg *g, size_t cur, const struct iof_run_cfg *run,
                        uint64_t measure_start)
{
    const struct iof_test *test = &g->tests[cur];

    g->cur = cur;
    g->run = *run;
    g->measure_start = measure_start;
    g->next_publish = 0;
    g->test_failed = false;
    memset(g->win, 0, sizeof(g->win));
    iof_stats_reset(&g->all);
    iof_hist_reset(&g->late_all);
    g->late_all_over = 0;
    g->late_any = false;
    g->all_nodes = g->all_workers = g->all_targets = 0;
    for (size_t k = 0; g->groups && k < g->p->nworkers; k++) {
        iof_stats_reset(&g->groups[k].stats);
        g->groups[k].nodes = g->groups[k].workers = g->groups[k].targets = 0;
        g->groups[k].last = NULL;
        g->groups[k].lost = false;
    }
    iof_test_cycle_label(test, g->cycle, sizeof(g->cycle));
    iof_test_spec_label(g->p, test, g->spec_label, sizeof(g->spec_label));
    g->ti = (struct mgr_test_info){.test = test,
                                   .ntests = g->ntests,
                                   .spec = g->spec_label,
                                   .cycle = g->cycle,
                                   .start_wall_ns = iof_wall_ns()};
    AGG_SINKS(g, s_->ops->test_begin(s_, &g->ti));
}

bool mgr_agg_worker_group(const struct mgr_agg *g, const char *name, size_t w,
                          struct iof_worker_cfg *out, size_t *gi)
{
    const struct iof_test *test = &g->tests[g->cur];
    size_t seen = 0;
    for (size_t k = 0; k < g->p->nworkers; k++) {
        struct iof_worker_cfg gc = iof_test_worker(g->p, test, k);
        bool here = gc.nnodes == 0;
        for (size_t i = 0; i < gc.nnodes; i++)
            here |= !strcmp(gc.nodes[i], "*") || !strcmp(gc.nodes[i], name);
        if (!here || !iof_test_spec(g->p, test, k)) /* idle groups have no workers */
            continue;
        if (w < seen + gc.count) {
            *out = gc;
            if (gi)
                *gi = k;
            return true;
        }
        seen += gc.count;
    }
    return false;
}

/* A stats or result body must have exactly the workers and targets the plan
 * gives this node in the current test: anything else is a protocol error.
 * The shape accepted last is kept: every later report of the test has it,
 * and matches it in a comparison per worker instead of a walk of the plan's
 * groups per worker (twice per report). */
int mgr_agg_check_shape(const struct mgr_agg *g, struct mgr_agg_node *n,
                        const struct proto_stats *st, struct iof_diag *diag)
{
    size_t expect = 0, *nt;
    struct iof_worker_cfg gc;

    if (n->shape_test == g->cur + 1 && n->shape_nw == st->nworkers) {
        size_t w = 0;
        while (w < st->nworkers && st->workers[w].ntargets == n->shape_nt[w])
            w++;
        if (w == st->nworkers)
            return 0;
    }
    while (mgr_agg_worker_group(g, n->name, expect, &gc, NULL))
        expect++;
    if (st->nworkers != expect)
        return iof_diag_set(diag, IOF_EPROTO, "sent %zu workers for test %u, the plan gives it %zu",
                            st->nworkers, st->test + 1, expect);
    for (size_t w = 0; w < st->nworkers; w++) {
        mgr_agg_worker_group(g, n->name, w, &gc, NULL);
        if (st->workers[w].ntargets != gc.ntargets)
            return iof_diag_set(diag, IOF_EPROTO,
                                "sent %zu targets for worker %zu, the plan gives %zu",
                                st->workers[w].ntargets, w, gc.ntargets);
    }
    /* Accepted: kept for the next report (not kept when out of memory). */
    if ((nt = realloc(n->shape_nt, (st->nworkers ? st->nworkers : 1) * sizeof(*nt)))) {
        for (size_t w = 0; w < st->nworkers; w++)
            nt[w] = st->workers[w].ntargets;
        n->shape_nt = nt;
        n->shape_nw = st->nworkers;
        n->shape_test = g->cur + 1;
    }
    return 0;
}

void mgr_agg_cpu_add(struct mgr_agg_cpu *a, const struct proto_cpu *c)
{
    struct proto_cpu *sum = &a->sum;

    a->nodes++;
    sum->busy_pct += c->busy_pct;
    sum->user_pct += c->user_pct;
    sum->sys_pct += c->sys_pct;
    sum->agent_pct += c->agent_pct;
    if (!c->node_valid)
        return;
    a->with_node++;
    sum->dpc_pct += c->dpc_pct;
    sum->irq_pct += c->irq_pct;
    sum->intr_per_s += c->intr_per_s;
    sum->packets_per_s += c->packets_per_s;
    sum->packet_errors += c->packet_errors;
    sum->retrans_per_s += c->retrans_per_s;
}

struct proto_cpu mgr_agg_cpu_mean(const struct mgr_agg_cpu *a)
{
    const struct proto_cpu *sum = &a->sum;
    unsigned n = a->nodes;
    struct proto_cpu m = {0};
    if (!n)
        return m;
    m.valid = true;
    m.busy_pct = sum->busy_pct / n;
    m.user_pct = sum->user_pct / n;
    m.sys_pct = sum->sys_pct / n;
    m.agent_pct = sum->agent_pct / n;
    if (a->with_node == n) {
        m.node_valid = true;
        m.dpc_pct = sum->dpc_pct / n;
        m.irq_pct = sum->irq_pct / n;
        m.intr_per_s = sum->intr_per_s / n;
        m.packets_per_s = sum->packets_per_s / n;
        m.packet_errors = sum->packet_errors / n;
        m.retrans_per_s = sum->retrans_per_s / n;
    }
    return m;
}

/* Node-level sum of one stats or result message. */
static void agg_sum_message(const struct proto_stats *st, struct iof_stats *out)
{
    iof_stats_reset(out);
    for (size_t w = 0; w < st->nworkers; w++)
        for (size_t t = 0; t < st->workers[w].ntargets; t++)
            iof_stats_merge(out, &st->workers[w].targets[t]);
}

static double agg_interval_end_s(const struct mgr_agg *g, uint64_t k, uint64_t *len_ns)
{
    const struct iof_run_cfg *run = &g->run;
    uint64_t end = (k + 1) * run->interval_ns;
    if (end > run->duration_ns)
        end = run->duration_ns;
    *len_ns = end - k * run->interval_ns;
    return (double)(g->measure_start + end - g->run_mono_ns) / 1e9;
}

/* The length of interval k as reported: a cut interval's real length. */
static uint64_t agg_interval_ns(const struct mgr_agg *g, uint64_t k, uint64_t reported_ns)
{
    uint64_t len;
    (void)agg_interval_end_s(g, k, &len);
    return reported_ns && reported_ns < len ? reported_ns : len;
}

/* Hands interval mi (stats and length set) to every sink, its metrics
 * computed here once. */
static void agg_sinks_interval(struct mgr_agg *g, struct mgr_interval *mi, uint64_t len,
                               const struct mgr_metrics *m)
{
    if (!g->nsinks)
        return;
    mi->time_s = agg_interval_end_s(g, mi->k, &mi->ns);
    mi->time_s -= (double)(mi->ns - len) / 1e9;
    mi->ns = len;
    mi->m = m;
    AGG_SINKS(g, s_->ops->interval(s_, mi));
}

static void agg_publish(struct mgr_agg *g, struct mgr_agg_interval *iv)
{
    const struct iof_run_cfg *run = &g->run;
    uint64_t end = (iv->k + 1) * run->interval_ns, len;
    struct mgr_metrics m;

    if (end > run->duration_ns)
        end = run->duration_ns;
    len = agg_interval_ns(g, iv->k, iv->cut_ns);
    mgr_metrics_compute(&iv->sum, len, &m);
    if (g->nsinks) {
        struct mgr_interval mi = {.test = &g->ti,
                                  .k = iv->k,
                                  .stats = &iv->sum,
                                  .reported = iv->reported,
                                  .lost = iv->lost,
                                  .interrupted = g->interrupted && iv->cut,
                                  .cpu_busy_pct = 0};
        struct proto_cpu mean = mgr_agg_cpu_mean(&iv->cpu);
        mi.cpu = mean.valid ? &mean : NULL;
        mi.cpu_busy_pct = mean.busy_pct;
        agg_sinks_interval(g, &mi, len, &m);
    }
    mgr_live_line(g->live, "run", (unsigned)g->cur + 1, (unsigned)g->ntests, (double)end / 1e9,
                  (double)run->duration_ns / 1e9, iv->k + 1 == agg_nintervals(g), &m,
                  g->hooks.live(g->hooks.arg), g->hooks.members(g->hooks.arg));
    iv->open = false;
    g->next_publish = iv->k + 1;
    if (g->verbose)
        IOF_INFO("test %zu interval %" PRIu64 ": %u of %u agents, published %.3f ms after the "
                 "last report",
                 g->cur + 1, iv->k, iv->reported, g->hooks.live(g->hooks.arg),
                 (double)(iof_now_ns() - iv->last_report_ns) / 1e6);
}

void mgr_agg_publish_ready(struct mgr_agg *g, unsigned expect, bool force)
{
    uint64_t now = iof_now_ns();
    uint64_t nint = agg_nintervals(g);

    while (g->next_publish < nint) {
        struct mgr_agg_interval *iv = &g->win[g->next_publish % MGR_AGG_WINDOW];
        uint64_t due = g->measure_start + (g->next_publish + 2) * g->run.interval_ns;
        /* The test's last interval has no deadline of its own: it waits for
         * every live node's report or for the test's end (every result in,
         * the result deadline, a stop). At a test's end an agent host's last
         * reports can queue behind its results; published without them, they
         * would only come as late entries. */
        bool wait = now < due || g->next_publish + 1 == nint;
        if (!iv->open || iv->k != g->next_publish) {
            if (!force && wait)
                return;
            g->next_publish++; /* nobody reported it (all lost or stopped) */
            continue;
        }
        if (!force && wait && iv->reported + iv->lost < expect)
            return;
        agg_publish(g, iv);
    }
}

/* Keeps one interval of node a (node counters and per-target counters) for
 * the rows it gets if it is lost before its result. Returns whether its
 * latencies are to be kept too (a->acc_lat, by the caller, in the pass that
 * adds them to the interval's sum): when it was not lost and kept. */
static bool agg_keep_interval(struct mgr_agg *g, struct mgr_agg_node *a,
                              const struct proto_stats *st, const struct iof_stats *node,
                              uint64_t len)
{
    size_t n = 0;
    uint64_t end;

    for (size_t w = 0; w < st->nworkers; w++)
        n += st->workers[w].ntargets;
    if (n && n != a->ntacc) {
        struct iof_counts *t = realloc(a->tacc, n * sizeof(*t));
        if (!t)
            return false;
        a->tacc = t;
        a->ntacc = n;
        for (size_t i = 0; i < n; i++)
            iof_counts_reset(&a->tacc[i]);
    }
    a->acc_n++;
    end = st->interval * g->run.interval_ns + len;
    if (end > a->acc_end_ns)
        a->acc_end_ns = end;
    if (st->lost)
        return false;
    a->acc_ns += len;
    {
        struct iof_counts one;
        iof_counts_from_stats(&one, node);
        iof_counts_merge(&a->acc_node, &one);
    }
    if (st->counts)
        for (size_t i = 0; i < n; i++)
            iof_counts_merge(&a->tacc[i], &st->counts[i]);
    else
        for (size_t w = 0, i = 0; w < st->nworkers; w++)
            for (size_t t = 0; t < st->workers[w].ntargets && st->workers[w].targets; t++, i++) {
                struct iof_counts one;
                iof_counts_from_stats(&one, &st->workers[w].targets[t]);
                iof_counts_merge(&a->tacc[i], &one);
            }
    return true;
}

void mgr_agg_node_take_part(struct mgr_agg_node *a)
{
    a->role = MGR_AGG_IN_TEST;
    iof_counts_reset(&a->acc_node);
    for (int d = 0; d < 2; d++)
        iof_hist_span_free(&a->acc_lat[d]);
    for (size_t i = 0; i < a->ntacc; i++)
        iof_counts_reset(&a->tacc[i]);
    a->acc_ns = a->acc_end_ns = a->acc_n = 0;
}

void mgr_agg_node_clear_role(struct mgr_agg_node *n)
{
    n->role = MGR_AGG_NONE;
}

static void agg_clear_rows(struct mgr_agg_node *a)
{
    for (size_t i = 0; i < a->nrows; i++)
        free(a->rows[i].label);
    a->nrows = 0;
}

static void agg_places_free(struct mgr_agg_node *a)
{
    for (size_t i = 0; i < a->nplaces; i++) {
        free(a->places[i].device);
        free(a->places[i].fstype);
    }
    free(a->places);
    a->places = NULL;
    a->nplaces = 0;
}

void mgr_agg_node_places(struct mgr_agg *g, struct mgr_agg_node *n, const struct proto_prepared *pr)
{
    agg_places_free(n);
    n->places = calloc(pr->nplaces ? pr->nplaces : 1, sizeof(*n->places));
    for (size_t i = 0; n->places && i < pr->nplaces; i++) {
        const struct proto_target_place *t = &pr->places[i];
        if (t->group >= g->p->nworkers || t->target >= g->p->workers[t->group].ntargets)
            continue;
        /* A copy that fails leaves that name unknown (null), nothing else. */
        n->places[n->nplaces++] = (struct mgr_place){
            .path = iof_target_path(&g->p->workers[t->group].targets[t->target], n->name),
            .device = t->device ? strdup(t->device) : NULL,
            .fstype = t->fstype ? strdup(t->fstype) : NULL,
            .ram_backed = t->ram_backed};
    }
}

const struct mgr_place *mgr_agg_node_place(const struct mgr_agg_node *n, const char *path)
{
    for (size_t i = 0; i < n->nplaces; i++)
        if (!strcmp(n->places[i].path, path))
            return &n->places[i];
    return NULL;
}

void mgr_agg_node_free(struct mgr_agg_node *a)
{
    if (!a)
        return;
    agg_places_free(a);
    agg_clear_rows(a);
    free(a->rows);
    iof_hist_span_free(&a->acc_lat[0]);
    iof_hist_span_free(&a->acc_lat[1]);
    free(a->tacc);
    free(a->shape_nt);
    memset(a, 0, sizeof(*a));
}

int mgr_agg_stats(struct mgr_agg *g, struct mgr_agg_node *a, const struct proto_stats *st,
                  struct iof_diag *diag)
{
    struct mgr_agg_interval *iv = NULL;
    struct iof_stats *node;
    uint64_t len;
    int r;
    bool late, keep;

    if ((r = mgr_agg_check_shape(g, a, st, diag)))
        return r;
    if (st->interval >= agg_nintervals(g))
        return iof_diag_set(diag, IOF_EPROTO,
                            "sent interval %" PRIu64 " of test %u, which has no such",
                            st->interval + 1, st->test + 1);
    len = agg_interval_ns(g, st->interval, st->duration_ns);
    /* The link decodes intervals summed (PROTO_DECODE_SUM_STATS). */
    node = st->sum ? st->sum : malloc(sizeof(*node));
    if (!node)
        return 0;
    if (!st->sum)
        agg_sum_message(st, node);
    keep = agg_keep_interval(g, a, st, node, len);
    /* Too late for its ALL row (already written) or beyond the window. */
    late = st->interval < g->next_publish || st->interval >= g->next_publish + MGR_AGG_WINDOW;
    if (g->nsinks) {
        struct mgr_interval mi = {.test = &g->ti,
                                  .k = st->interval,
                                  .node = a->name,
                                  .stats = node,
                                  .reported = 1,
                                  .lost = st->lost,
                                  .interrupted = g->interrupted && st->duration_ns,
                                  .cpu = st->cpu.valid ? &st->cpu : NULL,
                                  .cpu_busy_pct = st->cpu.busy_pct};
        struct mgr_metrics m;
        mgr_metrics_compute(node, len, &m);
        agg_sinks_interval(g, &mi, len, &m);
        /* A late one gets an ALL row of its own, so the time series still
         * adds up. */
        if (late && !st->lost) {
            struct mgr_interval all = {.test = &g->ti,
                                       .k = st->interval,
                                       .stats = node,
                                       .reported = 1,
                                       .late = true,
                                       .cpu = NULL};
            agg_sinks_interval(g, &all, len, &m);
        }
    }
    if (!late) {
        iv = &g->win[st->interval % MGR_AGG_WINDOW];
        if (!iv->open || iv->k != st->interval) {
            iv->open = true;
            iv->k = st->interval;
            iv->reported = 0;
            iv->lost = 0;
            iv->cut_ns = 0;
            iv->cut = false;
            memset(&iv->cpu, 0, sizeof(iv->cpu));
            iof_stats_reset(&iv->sum);
        }
    }
    /* The node's latencies go to the interval's sum and to those kept for
     * it in one pass over their buckets. Out of memory leaves a kept span
     * short of this interval: its NODE row then shows no percentiles (its
     * buckets no longer hold its count), never wrong ones. */
    if (keep)
        (void)iof_stats_merge_keep(iv ? &iv->sum : NULL, node, a->acc_lat);
    else if (iv && !st->lost)
        iof_stats_merge(&iv->sum, node);
    if (!st->sum)
        free(node);
    if (!iv)
        return 0;
    if (st->lost) {
        iv->lost++;
    } else {
        iv->reported++;
        if (len > iv->cut_ns)
            iv->cut_ns = len;
        /* cut_ns is a full length when the report was not cut: whether
         * one was is its own fact. */
        iv->cut |= st->duration_ns != 0;
    }
    if (st->cpu.valid)
        mgr_agg_cpu_add(&iv->cpu, &st->cpu);
    iv->last_report_ns = iof_now_ns();
    return 0;
}

/* --- final rows ------------------------------------------------------------------------- */

/* Computes r's metrics once (with its lateness when late is not NULL),
 * hands the row to every sink and keeps its label and metrics for the
 * table. */
static void agg_emit_row(struct mgr_agg *g, struct mgr_agg_node *a, struct mgr_row *r,
                         const char *label, const struct mgr_lateness *late)
{
    struct mgr_metrics m;

    mgr_metrics_compute(r->stats, r->ns, &m);
    if (late)
        m.lateness = *late;
    r->m = &m;
    AGG_SINKS(g, s_->ops->row(s_, &g->ti, r));
    if (iof_array_grow((void **)&a->rows, &a->caprows, a->nrows + 1, sizeof(*a->rows)))
        return;
    if (!(a->rows[a->nrows].label = strdup(label)))
        return;
    a->rows[a->nrows].type = r->type;
    a->rows[a->nrows].m = m;
    a->nrows++;
}

/* Where one node's rows come from: its result message, or (lost before
 * its result) the intervals that arrived. */
struct agg_src {
    const struct proto_stats *msg; /* the result, or NULL */
    struct iof_stats *tmp;         /* scratch for a kept target */
    const struct iof_stats *node;  /* NODE stats when not the sum of the workers */
    enum mgr_row_status status;
    uint64_t ns, win_end_ns;
    const struct proto_cpu *cpu;
    const struct proto_cpu_one *cpus; /* the result's per CPU (ncpus of them), or NULL */
    size_t ncpus;
    const struct iof_hist *late; /* the result's lateness, or NULL: unknown */
    uint64_t late_over;
};

static size_t agg_src_nworkers(const struct mgr_agg *g, const struct mgr_agg_node *a,
                               const struct agg_src *src)
{
    struct iof_worker_cfg gc;
    size_t n = 0;
    if (src->msg)
        return src->msg->nworkers;
    while (mgr_agg_worker_group(g, a->name, n, &gc, NULL))
        n++;
    return n;
}

static size_t agg_src_ntargets(const struct mgr_agg *g, const struct mgr_agg_node *a,
                               const struct agg_src *src, size_t w)
{
    struct iof_worker_cfg gc;
    if (src->msg)
        return src->msg->workers[w].ntargets;
    return mgr_agg_worker_group(g, a->name, w, &gc, NULL) ? gc.ntargets : 0;
}

/* Target t of worker w (flat index i among the node's targets). */
static const struct iof_stats *agg_src_target(const struct mgr_agg_node *a,
                                              const struct agg_src *src, size_t w, size_t t,
                                              size_t i)
{
    if (src->msg)
        return &src->msg->workers[w].targets[t];
    if (i < a->ntacc)
        iof_counts_to_stats(&a->tacc[i], src->tmp);
    else
        iof_stats_reset(src->tmp);
    return src->tmp;
}

/* Node a was lost in the test: every group it runs is partial. */
static void agg_groups_lost(struct mgr_agg *g, const struct mgr_agg_node *a)
{
    struct iof_worker_cfg gc;
    size_t gi = 0;

    for (size_t w = 0; g->groups && mgr_agg_worker_group(g, a->name, w, &gc, &gi); w++)
        g->groups[gi].lost = true;
}

/* The GROUP row of group k in the current test, or false when it has none:
 * idle in the test, or none of its workers measured anything (its nodes
 * absent, or lost before their first interval). Its status is partial when
 * a node running it was lost in the test, as ALL's is for any node. The
 * table and every sink take the row from here. */
static bool agg_group_row(struct mgr_agg *g, size_t k, uint64_t measured_ns, struct mgr_row *row,
                          struct mgr_metrics *m)
{
    const struct mgr_agg_group *grp;

    if (!g->groups || !iof_test_spec(g->p, &g->tests[g->cur], k) || !g->groups[k].nodes)
        return false;
    grp = &g->groups[k];
    mgr_metrics_compute(&grp->stats, measured_ns, m);
    *row = (struct mgr_row){.type = MGR_ROW_GROUP,
                            .group = g->p->workers[k].name,
                            .stats = &grp->stats,
                            .m = m,
                            .ns = measured_ns,
                            .queue_depth = iof_test_worker(g->p, &g->tests[g->cur], k).queue_depth,
                            .window_end_ns = measured_ns,
                            .status = grp->lost ? MGR_STATUS_PARTIAL : MGR_STATUS_OK,
                            .nodes = grp->nodes,
                            .workers = grp->workers,
                            .targets = grp->targets};
    return true;
}

/* Writes one node's NODE, WORKER and TARGET rows to the sinks and keeps
 * them for the table; adds the node to the test's ALL row. Returns the
 * node's I/O errors. */
static uint64_t agg_node_rows(struct mgr_agg *g, struct mgr_agg_node *a, const struct agg_src *src)
{
    struct iof_stats *node = calloc(1, sizeof(*node)), *wsum = calloc(1, sizeof(*wsum));
    char label[64 + PROTO_NAME_MAX + IOF_PATH_MAX], wl[64 + PROTO_NAME_MAX], wshort[32];
    uint32_t ntargets_node = 0;
    size_t nw = agg_src_nworkers(g, a, src), flat = 0;
    bool detail = src->status == MGR_STATUS_OK || src->status == MGR_STATUS_PARTIAL;
    /* As the JSON and the table say it: the run was interrupted by the time
     * the test's results came. */
    g->ti.interrupted = g->interrupted;

    if (!node || !wsum) {
        free(node);
        free(wsum);
        return 0;
    }
    agg_clear_rows(a);
    a->status = src->status;
    iof_stats_reset(node);
    if (src->status == MGR_STATUS_PARTIAL || src->status == MGR_STATUS_LOST_BEFORE_START)
        agg_groups_lost(g, a);
    for (size_t w = 0; w < nw && detail; w++) {
        struct iof_worker_cfg gc = {0};
        size_t gi = 0;
        bool known = mgr_agg_worker_group(g, a->name, w, &gc, &gi);
        const char *gname = known ? g->p->workers[gi].name : NULL;
        size_t nt = agg_src_ntargets(g, a, src, w);
        iof_stats_reset(wsum);
        snprintf(wl, sizeof(wl), "%s/w%zu", a->name, w);
        snprintf(wshort, sizeof(wshort), "w%zu", w);
        for (size_t t = 0; t < nt; t++, flat++) {
            const struct iof_stats *ts = agg_src_target(a, src, w, t, flat);
            const struct iof_target_cfg *tc = known && t < gc.ntargets ? &gc.targets[t] : NULL;
            /* The node's own path: a per-node map's entry for it. */
            const char *path = tc ? iof_target_path(tc, a->name) : "?";
            struct mgr_row row = {.type = MGR_ROW_TARGET,
                                  .node = a->name,
                                  .worker = wshort,
                                  .target = path,
                                  .group = gname,
                                  .stats = ts,
                                  .ns = src->ns,
                                  .status = src->status,
                                  .window_end_ns = src->win_end_ns,
                                  .queue_depth = gc.queue_depth,
                                  .nodes = 1,
                                  .workers = 1,
                                  .targets = 1,
                                  .range_offset = tc ? tc->range_offset : 0,
                                  .range_size = tc ? tc->range_size : 0,
                                  .place = tc ? mgr_agg_node_place(a, path) : NULL};
            iof_stats_merge(wsum, ts);
            snprintf(label, sizeof(label), "%s:%s", wl, path);
            agg_emit_row(g, a, &row, label, NULL);
            if (ts->verify_errors) {
                mgr_live_done(g->live);
                IOF_USER("iofleet: node %s: target %s: %" PRIu64
                         " blocks failed verification (%" PRIu64 " reads of them)",
                         a->name, path, ts->verify_errors, ts->verify_bad_reads);
            }
            if (ts->first_error) {
                mgr_live_done(g->live);
                IOF_USER("iofleet: node %s: target %s: %" PRIu64
                         " I/O errors, first at offset %" PRIu64 ": %s",
                         a->name, path, ts->rd.errors + ts->wr.errors, ts->first_error_offset,
                         iof_strerror(ts->first_error));
            }
        }
        {
            struct mgr_row row = {.type = MGR_ROW_WORKER,
                                  .node = a->name,
                                  .worker = wshort,
                                  .group = gname,
                                  .stats = wsum,
                                  .ns = src->ns,
                                  .status = src->status,
                                  .window_end_ns = src->win_end_ns,
                                  .queue_depth = gc.queue_depth,
                                  .nodes = 1,
                                  .workers = 1,
                                  .targets = (uint32_t)nt};
            agg_emit_row(g, a, &row, wl, NULL);
        }
        ntargets_node += (uint32_t)nt;
        if (known && g->groups) {
            struct mgr_agg_group *grp = &g->groups[gi];
            iof_stats_merge(&grp->stats, wsum);
            grp->workers++;
            grp->targets += (uint32_t)nt;
            if (grp->last != a) {
                grp->last = a;
                grp->nodes++;
            }
        }
        iof_stats_merge(node, wsum);
    }
    if (src->node) {
        iof_stats_reset(node);
        iof_stats_merge(node, src->node);
    }
    {
        struct mgr_row row = {.type = MGR_ROW_NODE,
                              .node = a->name,
                              .stats = node,
                              .ns = src->ns,
                              .status = src->status,
                              .window_end_ns = src->win_end_ns,
                              .nodes = 1,
                              .workers = detail ? (uint32_t)nw : 0,
                              .targets = ntargets_node,
                              .cpu = src->cpu && src->cpu->valid ? src->cpu : NULL,
                              .cpu_busy_pct = src->cpu ? src->cpu->busy_pct : 0};
        if (row.cpu && src->ncpus) {
            row.cpus = src->cpus;
            row.ncpus = src->ncpus;
        }
        struct mgr_lateness late;
        if (src->late) {
            /* Kept as figures; the histogram goes into the test's one. */
            mgr_lateness_compute(src->late, src->late_over, &late);
            iof_hist_merge(&g->late_all, src->late);
            g->late_all_over += src->late_over;
            g->late_any = true;
        }
        agg_emit_row(g, a, &row, a->name, src->late ? &late : NULL);
    }
    if (detail) {
        g->all_nodes++;
        g->all_workers += (uint32_t)nw;
        g->all_targets += ntargets_node;
    }
    a->errors = node->rd.errors + node->wr.errors + node->verify_errors;
    iof_stats_merge(&g->all, node);
    free(node);
    free(wsum);
    return a->errors;
}

bool mgr_agg_result(struct mgr_agg *g, struct mgr_agg_node *a, const struct proto_stats *st,
                    uint64_t started_first, uint64_t started_last)
{
    struct agg_src src = {0};
    bool bad;

    a->role = MGR_AGG_RESULT;
    a->cpu = st->cpu;
    a->measured_ns = st->measured_ns;
    a->started_first = started_first;
    a->started_last = started_last;
    src.msg = st;
    src.status = MGR_STATUS_OK;
    src.ns = st->measured_ns;
    src.win_end_ns = st->measured_ns;
    src.cpu = &st->cpu;
    src.cpus = st->cpus;
    src.ncpus = st->ncpus;
    src.late = st->lateness;
    src.late_over = st->lateness_over_20us;
    bad = agg_node_rows(g, a, &src) != 0;
    for (size_t i = 0; i < st->nverify_reports; i++) {
        mgr_live_done(g->live);
        IOF_USER("iofleet: test %zu: verify: %s", g->cur + 1, st->verify_reports[i]);
        bad = true;
    }
    if (st->error) {
        mgr_live_done(g->live);
        IOF_USER("iofleet: node %s: test %zu: %s", a->name, g->cur + 1, st->error);
        bad = true;
    }
    g->test_failed |= bad;
    return bad;
}

void mgr_agg_mark_lost(struct mgr_agg_node *a, const char *why)
{
    a->role = MGR_AGG_LOST;
    snprintf(a->why, sizeof(a->why), "%s", why);
}

bool mgr_agg_lost(struct mgr_agg *g, struct mgr_agg_node *a)
{
    struct agg_src src = {0};
    struct iof_stats *tmp = malloc(sizeof(*tmp)), *empty = malloc(sizeof(*empty));
    bool bad;
    if (!tmp || !empty) {
        free(tmp);
        free(empty);
        return false;
    }
    iof_stats_reset(empty);
    src.tmp = tmp;
    if (a->acc_n) {
        struct iof_hist *lat[2] = {&empty->rd.lat, &empty->wr.lat};
        /* The node as kept: its counters, and its histograms decoded. */
        iof_counts_to_stats(&a->acc_node, empty);
        for (int d = 0; d < 2; d++)
            iof_hist_span_get(&a->acc_lat[d], lat[d]);
        for (int d = 0; d < 2; d++)
            if (lat[d]->count != (d ? a->acc_node.wr.ios : a->acc_node.rd.ios)) {
                /* short of an interval (out of memory): counters stand, no buckets */
                struct iof_counts only = a->acc_node;
                struct iof_stats *t = tmp;
                iof_counts_to_stats(&only, t);
                *lat[d] = d ? t->wr.lat : t->rd.lat;
            }
        src.status = MGR_STATUS_PARTIAL;
        src.node = empty;
        src.ns = a->acc_ns;
        src.win_end_ns = a->acc_end_ns;
    } else {
        src.status = MGR_STATUS_LOST_BEFORE_START;
        src.node = empty;
    }
    bad = agg_node_rows(g, a, &src) != 0;
    g->test_failed |= bad;
    free(tmp);
    free(empty);
    return bad;
}

void mgr_agg_absent(struct mgr_agg *g, struct mgr_agg_node *a, const char *why)
{
    struct iof_stats *empty = malloc(sizeof(*empty));
    struct agg_src src = {.status = MGR_STATUS_ABSENT, .node = empty};

    a->role = MGR_AGG_ABSENT;
    snprintf(a->why, sizeof(a->why), "%s", why);
    if (!empty)
        return;
    iof_stats_reset(empty);
    agg_node_rows(g, a, &src);
    free(empty);
}

/* --- the end of a test ------------------------------------------------------------------- */

/* A node with rows in the final table (a result, or lost with what arrived). */
static bool agg_table_node(const struct mgr_agg_node *a)
{
    return (a->role == MGR_AGG_RESULT || a->role == MGR_AGG_LOST) && a->nrows;
}

/* A row's name in the table: one whose status is not ok says so in it. */
static void agg_status_name(const char *label, enum mgr_row_status st, char *name, size_t len)
{
    snprintf(name, len, "%s%s%s%s", label, st == MGR_STATUS_OK ? "" : "(",
             st == MGR_STATUS_OK ? "" : mgr_row_status_name(st), st == MGR_STATUS_OK ? "" : ")");
}

/* Its NODE row's name: a node that was lost says so in its name. */
static void agg_node_name(const struct mgr_agg_node *a, char *name, size_t len)
{
    agg_status_name(a->rows[a->nrows - 1].label, a->status, name, len);
}

/* Whether the table shows a row of type `type` (ALL and NODE always). */
static bool agg_table_shows(const struct mgr_agg *g, enum mgr_row_type type)
{
    switch (type) {
    case MGR_ROW_GROUP:
        return g->rows & MGR_TABLE_ROWS_GROUP;
    case MGR_ROW_WORKER:
        return g->rows & MGR_TABLE_ROWS_WORKER;
    case MGR_ROW_TARGET:
        return g->rows & MGR_TABLE_ROWS_TARGET;
    default:
        return true;
    }
}

/* The rows of node a the table shows. */
static size_t agg_table_nrows(const struct mgr_agg *g, const struct mgr_agg_node *a)
{
    size_t n = 0;
    for (size_t r = 0; r < a->nrows; r++)
        n += agg_table_shows(g, a->rows[r].type);
    return n;
}

static bool agg_table_fits(const struct mgr_agg *g, const struct mgr_agg_end *e)
{
    size_t nodes = 0, rows = 0;
    for (size_t i = 0; i < e->nnodes; i++)
        if (agg_table_node(e->nodes[i])) {
            nodes++;
            rows += agg_table_nrows(g, e->nodes[i]);
        }
    return mgr_table_fits(nodes, rows);
}

/* A fleet's table (manager/console.h): the slowest and fastest nodes and
 * where every row is. 0, or -1 out of memory (then the caller prints all). */
static int agg_print_summary(const struct mgr_agg *g, struct mgr_table *t,
                             const struct mgr_agg_end *e)
{
    enum { NAME_LEN = PROTO_NAME_MAX + 32 };
    struct mgr_table_node *nodes = calloc(e->nnodes ? e->nnodes : 1, sizeof(*nodes));
    char *names = malloc((e->nnodes ? e->nnodes : 1) * NAME_LEN);
    size_t n = 0, rows = 0;
    int r = -1;

    if (nodes && names) {
        for (size_t i = 0; i < e->nnodes; i++) {
            const struct mgr_agg_node *a = e->nodes[i];
            if (!agg_table_node(a))
                continue;
            agg_node_name(a, names + n * NAME_LEN, NAME_LEN);
            nodes[n].name = names + n * NAME_LEN;
            nodes[n].m = &a->rows[a->nrows - 1].m;
            rows += agg_table_nrows(g, a);
            n++;
        }
        r = mgr_table_summary(t, nodes, n, rows) < 0 ? -1 : 0;
    }
    free(names);
    free(nodes);
    return r;
}

static size_t agg_max(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* The longest name the table's rows will have. */
static size_t agg_table_name_len(const struct mgr_agg *g, const struct mgr_agg_end *e)
{
    char name[PROTO_NAME_MAX + 32];
    size_t len = 1; /* ALL's "*" */

    for (size_t k = 0; g->groups && agg_table_shows(g, MGR_ROW_GROUP) && k < g->p->nworkers; k++)
        if (iof_test_spec(g->p, &g->tests[g->cur], k))
            len = agg_max(len, strlen(g->p->workers[k].name) +
                                   (g->groups[k].lost ? strlen("(partial)") : 0));
    for (size_t i = 0; i < e->nnodes; i++) {
        const struct mgr_agg_node *a = e->nodes[i];
        if (!agg_table_node(a))
            continue;
        agg_node_name(a, name, sizeof(name));
        len = agg_max(len, strlen(name));
        for (size_t r = 0; r + 1 < a->nrows; r++)
            if (agg_table_shows(g, a->rows[r].type))
                len = agg_max(len, strlen(a->rows[r].label));
    }
    return len;
}

/* A note under the table, wrapped to the terminal. */
static void agg_table_note(const struct mgr_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void agg_table_note(const struct mgr_table *t, const char *fmt, ...)
{
    struct iof_buf line = IOF_BUF_INIT;
    va_list ap;

    va_start(ap, fmt);
    iof_buf_vprintf(&line, fmt, ap);
    va_end(ap);
    mgr_term_wrap(t->f, t->width, 4, iof_buf_str(&line));
    iof_buf_free(&line);
}

static void agg_print_table(struct mgr_agg *g, const struct mgr_agg_end *e,
                            const struct mgr_metrics *all, double skew_ms, unsigned nodes,
                            unsigned lost, unsigned absent)
{
    struct iof_buf note = IOF_BUF_INIT, files = IOF_BUF_INIT;
    char name[PROTO_NAME_MAX + 32];
    struct mgr_table t;
    unsigned hidden = 0; /* row types the test has and the table leaves out */

    iof_buf_printf(&note, "%u node%s, start skew %.3f ms%s%s", nodes, nodes == 1 ? "" : "s",
                   skew_ms, lost ? ", agents lost: " : "", lost ? "yes" : "");
    if (absent)
        iof_buf_printf(&note, ", absent: %u", absent);
    if (e->interrupted)
        iof_buf_addstr(&note, ", INTERRUPTED");
    for (size_t k = 0; k < g->nsinks; k++)
        if (g->sinks[k]->path[0])
            iof_buf_printf(&files, "%s%s", files.len ? ", " : "", g->sinks[k]->path);
    mgr_live_done(g->live);
    mgr_table_init(&t, stdout, mgr_term_width(STDOUT_FILENO), g->live->utf8,
                   agg_table_name_len(g, e), iof_buf_str(&files));
    t.rows = g->rows;
    mgr_table_header(&t, (unsigned)g->cur + 1, (unsigned)g->ntests, g->ti.spec, g->cycle,
                     (double)e->measured_ns / 1e9, iof_buf_str(&note));
    iof_buf_free(&note);
    if (nodes == 0 && lost == 0)
        printf("  no results: no agent completed this test\n");
    else
        mgr_table_row(&t, "ALL", "*", all);
    for (size_t k = 0; g->groups && (nodes || lost) && k < g->p->nworkers; k++) {
        struct mgr_metrics m;
        struct mgr_row row;
        if (!agg_group_row(g, k, e->measured_ns, &row, &m))
            continue;
        if (!agg_table_shows(g, MGR_ROW_GROUP)) {
            hidden |= MGR_TABLE_ROWS_GROUP;
            continue;
        }
        agg_status_name(row.group, row.status, name, sizeof(name));
        mgr_table_row(&t, "GROUP", name, &m);
    }
    for (size_t i = 0; i < e->nnodes; i++)
        for (size_t r = 0; agg_table_node(e->nodes[i]) && r < e->nodes[i]->nrows; r++)
            if (!agg_table_shows(g, e->nodes[i]->rows[r].type))
                hidden |= e->nodes[i]->rows[r].type == MGR_ROW_WORKER ? MGR_TABLE_ROWS_WORKER
                                                                      : MGR_TABLE_ROWS_TARGET;
    if (!agg_table_fits(g, e) && agg_print_summary(g, &t, e) == 0)
        goto notes;
    for (size_t i = 0; i < e->nnodes; i++) {
        const struct mgr_agg_node *a = e->nodes[i];
        const struct mgr_agg_row *nr;
        if (!agg_table_node(a))
            continue;
        /* NODE first, then its workers each followed by its targets; a
         * node that was lost says so in its name. */
        nr = &a->rows[a->nrows - 1];
        agg_node_name(a, name, sizeof(name));
        mgr_table_row(&t, mgr_row_type_name(nr->type), name, &nr->m);
        for (size_t r = 0, start = 0; r + 1 < a->nrows; r++) {
            if (a->rows[r].type != MGR_ROW_WORKER)
                continue;
            if (agg_table_shows(g, MGR_ROW_WORKER))
                mgr_table_row(&t, "WORKER", a->rows[r].label, &a->rows[r].m);
            for (size_t tr = start; tr < r && agg_table_shows(g, MGR_ROW_TARGET); tr++)
                mgr_table_row(&t, "TARGET", a->rows[tr].label, &a->rows[tr].m);
            start = r + 1;
        }
    }
notes:
    mgr_table_end(&t);
    if (hidden && !g->rows_hinted) {
        mgr_table_rows_hint(&t, hidden);
        g->rows_hinted = true;
    }
    for (size_t i = 0; i < e->nnodes; i++) {
        const struct mgr_agg_node *a = e->nodes[i];
        if (a->role != MGR_AGG_LOST)
            continue;
        if (a->status == MGR_STATUS_PARTIAL)
            agg_table_note(&t,
                           "  node %s: no result (%s): its rows hold the %.3f s of the window "
                           "whose intervals arrived",
                           a->name, a->why, (double)a->acc_ns / 1e9);
        else
            agg_table_note(&t, "  node %s: no result (%s): lost before any interval arrived",
                           a->name, a->why);
    }
    for (size_t i = 0; i < e->nnodes; i++)
        if (e->nodes[i]->role == MGR_AGG_ABSENT)
            agg_table_note(&t, "  node %s: absent (not in this test: %s)", e->nodes[i]->name,
                           e->nodes[i]->why);
    iof_buf_free(&files);
    fflush(stdout);
}

void mgr_agg_interrupt(struct mgr_agg *g)
{
    g->interrupted = true;
}

/* How the test ended (enum mgr_test_status): nodes delivered results, lost
 * were lost during it, nabsent agents of the run were not in it. */
static enum mgr_test_status agg_test_status(const struct mgr_agg *g, const struct mgr_agg_end *e,
                                            unsigned nodes, unsigned lost, size_t nabsent)
{
    if (e->interrupted)
        return MGR_TEST_INTERRUPTED;
    if ((nodes == 0 && lost == 0) || g->test_failed)
        return MGR_TEST_FAILED;
    if (lost || nabsent)
        return MGR_TEST_PARTIAL;
    return MGR_TEST_OK;
}

/* The p99 of one direction of the ALL row in ms; -1 without such I/O or
 * buckets. */
static double agg_p99_ms(const struct iof_hist *h)
{
    if (!h->count || !iof_hist_has_buckets(h))
        return -1;
    return (double)iof_hist_percentile(h, 0.99) / 1e6;
}

void mgr_agg_test_end(struct mgr_agg *g, const struct mgr_agg_end *e)
{
    uint64_t first = UINT64_MAX, last = 0;
    unsigned nodes = 0, lost = 0;
    struct mgr_agg_cpu cpu_sum = {0};
    struct proto_cpu cpu_mean;
    const char **absent = calloc(e->nnodes ? e->nnodes : 1, sizeof(*absent));
    size_t nabsent = 0;

    g->ti.interrupted = e->interrupted; /* for the rows and test_end below */
    struct mgr_metrics m;
    double skew_ms;
    enum mgr_test_status status;
    /* One queue depth for ALL when every group has the same; else 0. */
    uint32_t qd = g->p->nworkers ? iof_test_worker(g->p, &g->tests[g->cur], 0).queue_depth : 0;

    for (size_t k = 1; k < g->p->nworkers; k++)
        if (iof_test_worker(g->p, &g->tests[g->cur], k).queue_depth != qd)
            qd = 0;
    for (size_t i = 0; i < e->nnodes; i++) {
        const struct mgr_agg_node *a = e->nodes[i];
        if (a->role == MGR_AGG_LOST)
            lost++;
        if (a->role == MGR_AGG_ABSENT) {
            if (absent)
                absent[nabsent] = a->name;
            nabsent++;
        }
        if (a->role != MGR_AGG_RESULT)
            continue;
        nodes++;
        if (a->cpu.valid)
            mgr_agg_cpu_add(&cpu_sum, &a->cpu);
        if (a->started_first && a->started_first < first)
            first = a->started_first;
        if (a->started_last > last)
            last = a->started_last;
    }
    skew_ms = first != UINT64_MAX && last >= first ? (double)(last - first) / 1e6 : 0.0;
    mgr_metrics_compute(&g->all, e->measured_ns, &m);
    /* Known when the nodes' lateness covers every rated I/O of the test:
     * not when a node with rated I/O sent none (protocol 1.5, or lost). */
    if (g->late_any && g->late_all.count == g->all.rated.svc.count)
        mgr_lateness_compute(&g->late_all, g->late_all_over, &m.lateness);
    g->last_all = m;
    status = agg_test_status(g, e, nodes, lost, nabsent);
    agg_print_table(g, e, &m, skew_ms, nodes, lost, (unsigned)nabsent);
    if (mgr_summary_add(&g->summary, (unsigned)g->cur + 1, g->ti.spec, g->cycle, &m,
                        agg_p99_ms(&g->all.rd.lat), agg_p99_ms(&g->all.wr.lat), status))
        IOF_WARN("test %zu: out of memory: the run's summary leaves it out", g->cur + 1);
    if (g->nsinks) {
        struct mgr_row all = {.type = MGR_ROW_ALL,
                              .stats = &g->all,
                              .m = &m,
                              .ns = e->measured_ns,
                              .queue_depth = qd,
                              .window_end_ns = e->measured_ns,
                              .status = lost ? MGR_STATUS_PARTIAL : MGR_STATUS_OK,
                              .nodes = g->all_nodes,
                              .workers = g->all_workers,
                              .targets = g->all_targets,
                              .cpu = NULL};
        for (size_t k = 0; g->groups && k < g->p->nworkers; k++) {
            struct mgr_metrics gm;
            struct mgr_row row;
            if (agg_group_row(g, k, e->measured_ns, &row, &gm))
                AGG_SINKS(g, s_->ops->row(s_, &g->ti, &row));
        }
        cpu_mean = mgr_agg_cpu_mean(&cpu_sum);
        all.cpu = cpu_mean.valid ? &cpu_mean : NULL;
        all.cpu_busy_pct = cpu_mean.busy_pct;
        struct mgr_test_end te = {.test = &g->ti,
                                  .status = status,
                                  .absent = absent,
                                  .nabsent = absent ? nabsent : 0,
                                  .end_wall_ns = iof_wall_ns(),
                                  .all = &all,
                                  .start_skew_ms = skew_ms,
                                  .nodes = nodes,
                                  .lost = lost,
                                  .interrupted = e->interrupted};
        AGG_SINKS(g, s_->ops->test_end(s_, &te));
    }
    free(absent);
}

void mgr_agg_headline(struct mgr_agg *g, const struct iof_knee *k, const char *headline)
{
    const struct iof_rate_cycle *rc = &g->p->cycle.rate;
    struct mgr_knee_info ki = {.spec = g->ti.spec,
                               .metric = iof_knee_metric_name(rc->metric),
                               .target_ns = rc->target_ns,
                               .iops = k->best_iops,
                               .lat_ns = k->best_iops > 0 ? k->best_lat_ns : k->low_lat_ns,
                               .offered_iops = k->best_iops > 0 ? k->frac * k->base_iops : 0,
                               .base_iops = k->base_iops,
                               .runs_met = k->runs_met,
                               .runs = k->runs,
                               .steps = k->tests,
                               .knee = k,
                               .headline = headline};

    for (size_t i = 0; i < g->nsinks; i++)
        if (g->sinks[i]->ops->knee)
            g->sinks[i]->ops->knee(g->sinks[i], &ki);
}
