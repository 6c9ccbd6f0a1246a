#include "manager/cluster.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "common/tls.h"
#include "common/stats.h"
#include "proto/link.h"
#include "proto/version.h"
#include "manager/report.h"
#include "manager/results.h"

#define CL_PROBES 8                               /* clock probes per agent and test */
#define CL_START_LEAD_MS 300                      /* start this long after the last probe */
#define CL_RETRY_MS 300                           /* redial an --agent that refused */
#define CL_RESULT_GRACE_NS (30ULL * IOF_NS_PER_S) /* after the end, for results */
#define CL_WINDOW 16                              /* intervals held open at once */
#define CL_MANAGER_NAME "iofleet"

enum cl_phase {
    PH_CONNECT,
    PH_PREPARE,
    PH_CLOCK,
    PH_RUN,
    PH_DONE,
};

enum ag_state {
    AG_DIALING,
    AG_HELLO,
    AG_READY,
    AG_FAILED, /* refused or errored: takes no part */
    AG_LOST,   /* vanished mid-run */
    AG_GONE,   /* an accepted connection that closed before its hello: not an agent */
};

struct cl_row {
    char type[8];
    char *name; /* owned */
    struct mgr_metrics m;
};

struct cl_agent {
    struct cluster *c;
    char endpoint[256];
    char name[PROTO_NAME_MAX + 1];
    char host[PROTO_NAME_MAX + 1]; /* what to dial; "" for an accepted (or the embedded) agent */
    uint16_t port;
    const char *unix_path; /* --agent unix:PATH (borrowed from the options), else NULL */
    struct proto_link *link;
    enum ag_state state;
    bool welcomed, hello;
    struct proto_hello info; /* the agent's hello, kept for the result files */
    char why[512];
    /* run */
    bool prepared;
    bool prep_sent;    /* plan and prepare sent on the current link */
    bool in_test;      /* takes part in the current test (clock, start, results) */
    bool member;       /* was welcomed into this run (counted in "agents N/M") */
    bool rejoin;       /* lost; being redialled to take part in later tests */
    bool lost_in_test; /* lost during the current test */
    char lost_why[512];
    uint64_t best_rtt;
    int64_t offset; /* agent clock - manager clock */
    unsigned probes;
    bool clock_done;
    uint64_t next_interval;
    bool result;
    uint64_t started_first, started_last; /* manager clock */
    struct proto_cpu cpu;                 /* of the last result */
    uint64_t measured_ns;                 /* the agent's window in the last result */
    struct cl_row *rows;
    size_t nrows, caprows;
    uint64_t errors;
    /* The current test's intervals as they arrived, kept so that a node lost
     * before its result still has its measured I/O in every result file:
     * the node's sum (with histograms) and each target's counters. */
    struct iof_counts acc_node; /* the node's counters */
    uint8_t *acc_lat[2];        /* its read and write latencies merged, kept in the sparse
                                 * wire encoding: a few hundred bytes, not 39 KiB, per agent */
    size_t acc_lat_len[2];
    struct iof_counts *tacc;
    size_t ntacc;
    uint64_t acc_ns;            /* total length of the kept intervals */
    uint64_t acc_end_ns;        /* end of the last interval that arrived, from the window start */
    uint64_t acc_n;             /* intervals that arrived (lost ones included) */
    enum mgr_row_status status; /* of its rows in the current test */
    uv_timer_t retry;
    bool retry_open;
};

struct cl_interval {
    uint64_t k;
    bool open;
    unsigned reported;
    unsigned lost;           /* nodes whose interval was lost (not in sum) */
    uint64_t cut_ns;         /* the longest real length reported (shorter than the interval: cut) */
    uint64_t last_report_ns; /* when the last agent's stats for k arrived */
    struct proto_cpu cpu_sum; /* CPU of the reporting nodes that measured it, summed */
    unsigned cpu_nodes;
    struct iof_stats sum;
};

struct cluster {
    uv_loop_t *loop;
    const struct iof_plan *p;
    struct iof_run_cfg run; /* the current test's timing (iof_test_run) */
    bool ended_early;       /* an agent's workers all reached their io_limit */
    const char *plan_text;
    const struct mgr_run_opts *o;
    struct cl_agent *agents;
    size_t nagents, capagents;
    unsigned expect;
    struct iof_listener *listener;
    struct iof_tls_ctx *tls_client; /* for --agent; NULL: plain TCP */
    struct iof_tls_ctx *tls_server; /* for --listen */
    enum cl_phase phase;
    int rc;
    uv_timer_t tick;
    unsigned live_cache; /* cl_live(), refreshed on every change of the agent set */
    uv_signal_t sigint, sigterm;
    uint64_t deadline; /* of the current phase */
    struct iof_test *tests;
    size_t ntests, cur;
    uint64_t start_at, measure_start, end;
    struct cl_interval win[CL_WINDOW];
    uint64_t next_publish;
    struct iof_stats all; /* the current test's cluster totals */
    uint32_t all_nodes, all_workers, all_targets;
    struct iof_hist *scratch; /* for merging a kept latency histogram (one loop thread) */
    struct mgr_live live;
    struct mgr_test_info ti; /* the current test, for the sinks */
    char cycle[64];
    uint64_t run_wall_ns, run_mono_ns;
    struct mgr_agent_info *infos;
    /* embedded agent */
    uv_process_t child;
    bool child_running;
    bool embedded;
};

static void cl_finish(struct cluster *c);
static void cl_next_test(struct cluster *c);

static unsigned cl_count(const struct cluster *c, enum ag_state st)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->nagents; i++)
        n += c->agents[i].state == st;
    return n;
}

/* Agents lost during the current test. */
static unsigned cl_lost_in_test(const struct cluster *c)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->nagents; i++)
        n += c->agents[i].lost_in_test;
    return n;
}

static void cl_agent_fail(struct cl_agent *a, enum ag_state st, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void cl_agent_fail(struct cl_agent *a, enum ag_state st, int rc, const char *fmt, ...)
{
    char why[sizeof(a->why)];
    va_list ap;
    if (a->state == AG_FAILED || a->state == AG_LOST || a->state == AG_GONE)
        return;
    /* Format first: the arguments may point into a->why. */
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    memcpy(a->why, why, sizeof(why));
    /* Lost in the test, or failed after some of its intervals arrived:
     * what it measured stays (partial). */
    if ((st == AG_LOST || (st == AG_FAILED && a->acc_n)) && a->in_test && !a->result) {
        a->lost_in_test = true;
        snprintf(a->lost_why, sizeof(a->lost_why), "%s", why);
    }
    a->state = st;
    mgr_live_done(&a->c->live);
    if (a->name[0])
        fprintf(stderr, "iofleet: agent %s (%s): %s\n", a->name, a->endpoint, a->why);
    else
        fprintf(stderr, "iofleet: agent at %s: %s\n", a->endpoint, a->why);
    if (a->c->rc < rc)
        a->c->rc = rc;
    if (a->link)
        proto_link_close(a->link, IOF_ELOST, NULL);
}

/* An accepted connection that is not behaving like an agent before its
 * hello: logged and closed, it takes no part and costs the run nothing. */
static void cl_drop_stray(struct cl_agent *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void cl_drop_stray(struct cl_agent *a, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    mgr_live_done(&a->c->live);
    IOF_WARN("connection from %s dropped: %s", a->endpoint, why);
    a->state = AG_GONE;
    if (a->link)
        proto_link_close(a->link, IOF_EPROTO, NULL);
}

/* --- result files --------------------------------------------------------------------- */

#define CL_SINKS(c, call)                                                                          \
    do {                                                                                           \
        for (size_t si_ = 0; si_ < (c)->o->nsinks; si_++) {                                        \
            struct mgr_sink *s_ = (c)->o->sinks[si_];                                              \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

/* Worker w of agent a in the current test: its group as it runs. */
static bool cl_worker_group(const struct cluster *c, const struct cl_agent *a, size_t w,
                            struct iof_worker_cfg *out)
{
    const struct iof_test *test = &c->tests[c->cur];
    size_t seen = 0;
    for (size_t g = 0; g < c->p->nworkers; g++) {
        struct iof_worker_cfg gc = iof_test_worker(c->p, test, g);
        bool here = gc.nnodes == 0;
        for (size_t i = 0; i < gc.nnodes; i++)
            here |= !strcmp(gc.nodes[i], "*") || !strcmp(gc.nodes[i], a->name);
        if (!here)
            continue;
        if (w < seen + gc.count) {
            *out = gc;
            return true;
        }
        seen += gc.count;
    }
    return false;
}

/* A stats or result body must have exactly the workers and targets the plan
 * gives this agent in the current test: anything else is a protocol error. */
static bool cl_shape_ok(struct cl_agent *a, const struct proto_stats *st)
{
    size_t expect = 0;
    struct iof_worker_cfg gc;

    while (cl_worker_group(a->c, a, expect, &gc))
        expect++;
    if (st->nworkers != expect) {
        cl_agent_fail(a, AG_LOST, 1, "sent %zu workers for test %u, the plan gives it %zu",
                      st->nworkers, st->test + 1, expect);
        return false;
    }
    for (size_t w = 0; w < st->nworkers; w++) {
        cl_worker_group(a->c, a, w, &gc);
        if (st->workers[w].ntargets != gc.ntargets) {
            cl_agent_fail(a, AG_LOST, 1, "sent %zu targets for worker %zu, the plan gives %zu",
                          st->workers[w].ntargets, w, gc.ntargets);
            return false;
        }
    }
    return true;
}

static void cl_sinks_run_begin(struct cluster *c)
{
    struct mgr_run_info ri = {
        .plan = c->p, .plan_text = c->plan_text, .start_wall_ns = c->run_wall_ns};
    size_t n = 0;

    if (!c->o->nsinks)
        return;
    c->infos = calloc(c->nagents ? c->nagents : 1, sizeof(*c->infos));
    for (size_t i = 0; c->infos && i < c->nagents; i++) {
        if (c->agents[i].state != AG_READY)
            continue;
        c->infos[n].name = c->agents[i].name;
        c->infos[n].endpoint = c->agents[i].endpoint;
        c->infos[n].hello = &c->agents[i].info;
        n++;
    }
    ri.agents = c->infos;
    ri.nagents = n;
    CL_SINKS(c, s_->ops->run_begin(s_, &ri));
}

static void cl_cpu_add(struct proto_cpu *sum, const struct proto_cpu *c)
{
    sum->busy_pct += c->busy_pct;
    sum->user_pct += c->user_pct;
    sum->sys_pct += c->sys_pct;
    sum->agent_pct += c->agent_pct;
}

/* Mean CPU of n nodes that measured it; invalid when none did. */
static struct proto_cpu cl_cpu_mean(const struct proto_cpu *sum, unsigned n)
{
    struct proto_cpu m = {0};
    if (!n)
        return m;
    m.valid = true;
    m.busy_pct = sum->busy_pct / n;
    m.user_pct = sum->user_pct / n;
    m.sys_pct = sum->sys_pct / n;
    m.agent_pct = sum->agent_pct / n;
    return m;
}

/* Node-level sum of one stats or result message. */
static void cl_sum_message(const struct proto_stats *st, struct iof_stats *out)
{
    iof_stats_reset(out);
    for (size_t w = 0; w < st->nworkers; w++)
        for (size_t t = 0; t < st->workers[w].ntargets; t++)
            iof_stats_merge(out, &st->workers[w].targets[t]);
}

static double cl_interval_end_s(const struct cluster *c, uint64_t k, uint64_t *len_ns)
{
    const struct iof_run_cfg *run = &c->run;
    uint64_t end = (k + 1) * run->interval_ns;
    if (end > run->duration_ns)
        end = run->duration_ns;
    *len_ns = end - k * run->interval_ns;
    return (double)(c->measure_start + end - c->run_mono_ns) / 1e9;
}

/* --- interval aggregation ---------------------------------------------------------- */

/* Ready agents taking part in what is going on: during a test's clock and
 * run phases only those that started it; otherwise every ready agent. */
static bool cl_part(const struct cluster *c, const struct cl_agent *a)
{
    return a->state == AG_READY && (c->phase != PH_CLOCK && c->phase != PH_RUN ? true : a->in_test);
}

/* Agents of the run: welcomed at some point and not superseded. */
static unsigned cl_members(const struct cluster *c)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->nagents; i++)
        n += c->agents[i].member && c->agents[i].state != AG_GONE;
    return n;
}

static unsigned cl_live(const struct cluster *c)
{
    unsigned n = 0;
    for (size_t i = 0; i < c->nagents; i++)
        n += cl_part(c, &c->agents[i]);
    return n;
}

/* The length of interval k as reported: a cut interval's real length. */
static uint64_t cl_interval_ns(const struct cluster *c, uint64_t k, uint64_t reported_ns)
{
    uint64_t len;
    (void)cl_interval_end_s(c, k, &len);
    return reported_ns && reported_ns < len ? reported_ns : len;
}

static void cl_publish(struct cluster *c, struct cl_interval *iv)
{
    const struct iof_run_cfg *run = &c->run;
    uint64_t end = (iv->k + 1) * run->interval_ns, len;
    struct mgr_metrics m;

    if (end > run->duration_ns)
        end = run->duration_ns;
    len = cl_interval_ns(c, iv->k, iv->cut_ns);
    mgr_metrics_compute(&iv->sum, len, &m);
    if (c->o->nsinks) {
        struct mgr_interval mi = {.test = &c->ti,
                                  .k = iv->k,
                                  .stats = &iv->sum,
                                  .reported = iv->reported,
                                  .lost = iv->lost,
                                  .cpu_busy_pct = 0};
        struct proto_cpu mean = cl_cpu_mean(&iv->cpu_sum, iv->cpu_nodes);
        mi.cpu = mean.valid ? &mean : NULL;
        mi.cpu_busy_pct = mean.busy_pct;
        mi.time_s = cl_interval_end_s(c, iv->k, &mi.ns);
        mi.time_s -= (double)(mi.ns - len) / 1e9;
        mi.ns = len;
        CL_SINKS(c, s_->ops->interval(s_, &mi));
    }
    mgr_live_line(&c->live, "run", (unsigned)c->cur + 1, (unsigned)c->ntests, (double)end / 1e9,
                  (double)run->duration_ns / 1e9, &m, cl_live(c), cl_members(c));
    iv->open = false;
    c->next_publish = iv->k + 1;
    if (c->o->verbose)
        IOF_INFO("test %zu interval %" PRIu64 ": %u of %u agents, published %.3f ms after the "
                 "last report",
                 c->cur + 1, iv->k, iv->reported, cl_live(c),
                 (double)(iof_now_ns() - iv->last_report_ns) / 1e6);
}

/* Publishes, in order, every interval all live agents have reported, and any
 * whose deadline (its end plus one interval) has passed. */
static void cl_publish_ready(struct cluster *c, bool force)
{
    uint64_t now = iof_now_ns();
    uint64_t nint = (c->run.duration_ns + c->run.interval_ns - 1) / c->run.interval_ns;

    while (c->next_publish < nint) {
        struct cl_interval *iv = &c->win[c->next_publish % CL_WINDOW];
        uint64_t due = c->measure_start + (c->next_publish + 2) * c->run.interval_ns;
        if (!iv->open || iv->k != c->next_publish) {
            if (!force && now < due)
                return;
            c->next_publish++; /* nobody reported it (all lost or stopped) */
            continue;
        }
        /* live_cache: counting the agents per message would cost O(N^2) per
         * interval; it is refreshed whenever an agent drops out. */
        if (!force && now < due && iv->reported + iv->lost < c->live_cache)
            return;
        cl_publish(c, iv);
    }
}

/* *buf (encoded, *len bytes; none yet when 0) += add, kept encoded. A
 * failure leaves the histogram short of add: its NODE row then shows no
 * percentiles (its buckets no longer hold its count), never wrong ones. */
static void cl_keep_lat(struct cluster *c, uint8_t **buf, size_t *len, const struct iof_hist *add)
{
    struct iof_hist *h = c->scratch;
    uint8_t *n;
    size_t max;
    long r;

    if (!add->count)
        return;
    iof_hist_reset(h);
    if (*len && iof_hist_decode(h, *buf, *len))
        return;
    iof_hist_merge(h, add);
    max = iof_hist_encoded_max(h);
    if (!(n = realloc(*buf, max)))
        return;
    *buf = n;
    r = iof_hist_encode(h, n, max);
    if (r > 0)
        *len = (size_t)r;
}

/* Keeps one interval of agent a (node sum and per-target counters) for the
 * rows it gets if it is lost before its result. */
static void cl_keep_interval(struct cl_agent *a, const struct proto_stats *st,
                             const struct iof_stats *node, uint64_t len)
{
    struct cluster *c = a->c;
    size_t n = 0;
    uint64_t end;

    for (size_t w = 0; w < st->nworkers; w++)
        n += st->workers[w].ntargets;
    if (!c->scratch && !(c->scratch = malloc(sizeof(*c->scratch))))
        return;
    if (n && n != a->ntacc) {
        struct iof_counts *t = realloc(a->tacc, n * sizeof(*t));
        if (!t)
            return;
        a->tacc = t;
        a->ntacc = n;
        for (size_t i = 0; i < n; i++)
            iof_counts_reset(&a->tacc[i]);
    }
    a->acc_n++;
    end = st->interval * c->run.interval_ns + len;
    if (end > a->acc_end_ns)
        a->acc_end_ns = end;
    if (st->lost)
        return;
    a->acc_ns += len;
    {
        struct iof_counts one;
        iof_counts_from_stats(&one, node);
        iof_counts_merge(&a->acc_node, &one);
        cl_keep_lat(c, &a->acc_lat[0], &a->acc_lat_len[0], &node->rd.lat);
        cl_keep_lat(c, &a->acc_lat[1], &a->acc_lat_len[1], &node->wr.lat);
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
}

/* Forgets what was kept of the intervals (a new test begins). */
static void cl_forget_intervals(struct cl_agent *a)
{
    iof_counts_reset(&a->acc_node);
    for (int d = 0; d < 2; d++) {
        free(a->acc_lat[d]);
        a->acc_lat[d] = NULL;
        a->acc_lat_len[d] = 0;
    }
    for (size_t i = 0; i < a->ntacc; i++)
        iof_counts_reset(&a->tacc[i]);
    a->acc_ns = a->acc_end_ns = a->acc_n = 0;
}

static void cl_on_stats(struct cl_agent *a, const struct proto_stats *st)
{
    struct cluster *c = a->c;
    struct cl_interval *iv;
    struct iof_stats *node;
    uint64_t len;
    bool late;

    if (c->phase != PH_RUN || st->test != c->cur || !cl_shape_ok(a, st))
        return;
    if (st->interval >= (c->run.duration_ns + c->run.interval_ns - 1) / c->run.interval_ns) {
        cl_agent_fail(a, AG_LOST, 1, "sent interval %" PRIu64 " of test %u, which has no such",
                      st->interval + 1, st->test + 1);
        return;
    }
    a->next_interval = st->interval + 1;
    len = cl_interval_ns(c, st->interval, st->duration_ns);
    /* The link decodes intervals summed (PROTO_DECODE_SUM_STATS). */
    node = st->sum ? st->sum : malloc(sizeof(*node));
    if (!node)
        return;
    if (!st->sum)
        cl_sum_message(st, node);
    cl_keep_interval(a, st, node, len);
    if (c->o->nsinks) {
        struct mgr_interval mi = {.test = &c->ti,
                                  .k = st->interval,
                                  .node = a->name,
                                  .stats = node,
                                  .reported = 1,
                                  .lost = st->lost,
                                  .cpu = st->cpu.valid ? &st->cpu : NULL,
                                  .cpu_busy_pct = st->cpu.busy_pct};
        mi.time_s = cl_interval_end_s(c, st->interval, &mi.ns);
        mi.time_s -= (double)(mi.ns - len) / 1e9;
        mi.ns = len;
        CL_SINKS(c, s_->ops->interval(s_, &mi));
    }
    /* Too late for its ALL row (already written) or beyond the window: it
     * gets an ALL row of its own, so the time series still adds up. */
    late = st->interval < c->next_publish || st->interval >= c->next_publish + CL_WINDOW;
    if (late) {
        if (c->o->nsinks && !st->lost) {
            struct mgr_interval mi = {.test = &c->ti,
                                      .k = st->interval,
                                      .stats = node,
                                      .reported = 1,
                                      .late = true,
                                      .cpu = NULL};
            mi.time_s = cl_interval_end_s(c, st->interval, &mi.ns);
            mi.time_s -= (double)(mi.ns - len) / 1e9;
            mi.ns = len;
            CL_SINKS(c, s_->ops->interval(s_, &mi));
        }
        if (!st->sum)
            free(node);
        return;
    }
    iv = &c->win[st->interval % CL_WINDOW];
    if (!iv->open || iv->k != st->interval) {
        iv->open = true;
        iv->k = st->interval;
        iv->reported = 0;
        iv->lost = 0;
        iv->cut_ns = 0;
        memset(&iv->cpu_sum, 0, sizeof(iv->cpu_sum));
        iv->cpu_nodes = 0;
        iof_stats_reset(&iv->sum);
    }
    if (st->lost) {
        iv->lost++;
    } else {
        iof_stats_merge(&iv->sum, node);
        iv->reported++;
        if (len > iv->cut_ns)
            iv->cut_ns = len;
    }
    if (!st->sum)
        free(node);
    if (st->cpu.valid) {
        cl_cpu_add(&iv->cpu_sum, &st->cpu);
        iv->cpu_nodes++;
    }
    iv->last_report_ns = iof_now_ns();
    cl_publish_ready(c, false);
}

/* --- final results ---------------------------------------------------------------------- */

static void cl_clear_rows(struct cl_agent *a)
{
    for (size_t i = 0; i < a->nrows; i++)
        free(a->rows[i].name);
    a->nrows = 0;
}

static int cl_add_row(struct cl_agent *a, const char *type, const char *name,
                      const struct iof_stats *s, uint64_t ns)
{
    struct cl_row *r;
    char *copy = strdup(name);
    if (!copy)
        return -ENOMEM;
    if (a->nrows == a->caprows) {
        size_t cap = a->caprows ? a->caprows * 2 : 16;
        struct cl_row *n = realloc(a->rows, cap * sizeof(*n));
        if (!n) {
            free(copy);
            return -ENOMEM;
        }
        a->rows = n;
        a->caprows = cap;
    }
    r = &a->rows[a->nrows++];
    snprintf(r->type, sizeof(r->type), "%s", type);
    r->name = copy;
    mgr_metrics_compute(s, ns, &r->m);
    return 0;
}

/* Worker w of agent a: its group's index and its number within the group. */
static void cl_worker_label(const struct cluster *c, const struct cl_agent *a, size_t w, char *buf,
                            size_t cap)
{
    (void)c;
    snprintf(buf, cap, "%s/w%zu", a->name, w);
}

/* Where one node's rows come from: its result message, or (lost before
 * its result) the intervals that arrived. */
struct cl_node_src {
    const struct proto_stats *msg; /* the result, or NULL */
    const struct cl_agent *kept;   /* the intervals kept (msg NULL) */
    struct iof_stats *tmp;         /* scratch for a kept target */
    const struct iof_stats *node;  /* NODE stats when not the sum of the workers */
    enum mgr_row_status status;
    uint64_t ns, win_end_ns;
    const struct proto_cpu *cpu;
};

static size_t cl_src_nworkers(const struct cluster *c, const struct cl_agent *a,
                              const struct cl_node_src *src)
{
    struct iof_worker_cfg gc;
    size_t n = 0;
    if (src->msg)
        return src->msg->nworkers;
    while (cl_worker_group(c, a, n, &gc))
        n++;
    return n;
}

static size_t cl_src_ntargets(const struct cluster *c, const struct cl_agent *a,
                              const struct cl_node_src *src, size_t w)
{
    struct iof_worker_cfg gc;
    if (src->msg)
        return src->msg->workers[w].ntargets;
    return cl_worker_group(c, a, w, &gc) ? gc.ntargets : 0;
}

/* Target t of worker w (flat index i among the node's targets). */
static const struct iof_stats *cl_src_target(const struct cl_node_src *src, size_t w, size_t t,
                                             size_t i)
{
    if (src->msg)
        return &src->msg->workers[w].targets[t];
    if (i < src->kept->ntacc)
        iof_counts_to_stats(&src->kept->tacc[i], src->tmp);
    else
        iof_stats_reset(src->tmp);
    return src->tmp;
}

/* Writes one node's NODE, WORKER and TARGET rows to the sinks and keeps
 * them for the table; adds the node to the test's ALL row. */
static void cl_node_rows(struct cluster *c, struct cl_agent *a, const struct cl_node_src *src)
{
    struct iof_stats *node = calloc(1, sizeof(*node)), *wsum = calloc(1, sizeof(*wsum));
    char label[64 + PROTO_NAME_MAX + IOF_PATH_MAX], wl[64 + PROTO_NAME_MAX], wshort[32];
    uint32_t ntargets_node = 0;
    size_t nw = cl_src_nworkers(c, a, src), flat = 0;
    bool detail = src->status == MGR_STATUS_OK || src->status == MGR_STATUS_PARTIAL;

    if (!node || !wsum) {
        free(node);
        free(wsum);
        return;
    }
    cl_clear_rows(a);
    a->status = src->status;
    iof_stats_reset(node);
    for (size_t w = 0; w < nw && detail; w++) {
        struct iof_worker_cfg gc = {0};
        bool known = cl_worker_group(c, a, w, &gc);
        size_t nt = cl_src_ntargets(c, a, src, w);
        iof_stats_reset(wsum);
        cl_worker_label(c, a, w, wl, sizeof(wl));
        snprintf(wshort, sizeof(wshort), "w%zu", w);
        for (size_t t = 0; t < nt; t++, flat++) {
            const struct iof_stats *ts = cl_src_target(src, w, t, flat);
            const struct iof_target_cfg *tc = known && t < gc.ntargets ? &gc.targets[t] : NULL;
            const char *path = tc ? tc->path : "?";
            struct mgr_row row = {.type = MGR_ROW_TARGET,
                                  .node = a->name,
                                  .worker = wshort,
                                  .target = path,
                                  .stats = ts,
                                  .ns = src->ns,
                                  .status = src->status,
                                  .window_end_ns = src->win_end_ns,
                                  .queue_depth = gc.queue_depth,
                                  .nodes = 1,
                                  .workers = 1,
                                  .targets = 1,
                                  .range_offset = tc ? tc->range_offset : 0,
                                  .range_size = tc ? tc->range_size : 0};
            iof_stats_merge(wsum, ts);
            snprintf(label, sizeof(label), "%s:%s", wl, path);
            cl_add_row(a, "TARGET", label, ts, src->ns);
            CL_SINKS(c, s_->ops->row(s_, &c->ti, &row));
            if (ts->first_error) {
                mgr_live_done(&c->live);
                fprintf(stderr,
                        "iofleet: node %s: target %s: %" PRIu64
                        " I/O errors, first at offset %" PRIu64 ": %s\n",
                        a->name, path, ts->rd.errors + ts->wr.errors, ts->first_error_offset,
                        iof_strerror(ts->first_error));
            }
        }
        {
            struct mgr_row row = {.type = MGR_ROW_WORKER,
                                  .node = a->name,
                                  .worker = wshort,
                                  .stats = wsum,
                                  .ns = src->ns,
                                  .status = src->status,
                                  .window_end_ns = src->win_end_ns,
                                  .queue_depth = gc.queue_depth,
                                  .nodes = 1,
                                  .workers = 1,
                                  .targets = (uint32_t)nt};
            CL_SINKS(c, s_->ops->row(s_, &c->ti, &row));
        }
        ntargets_node += (uint32_t)nt;
        cl_add_row(a, "WORKER", wl, wsum, src->ns);
        iof_stats_merge(node, wsum);
    }
    if (src->node) {
        iof_stats_reset(node);
        iof_stats_merge(node, src->node);
    }
    cl_add_row(a, "NODE", a->name, node, src->ns);
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
        CL_SINKS(c, s_->ops->row(s_, &c->ti, &row));
    }
    if (detail) {
        c->all_nodes++;
        c->all_workers += (uint32_t)nw;
        c->all_targets += ntargets_node;
    }
    a->errors = node->rd.errors + node->wr.errors;
    if (a->errors && c->rc < 1)
        c->rc = 1;
    iof_stats_merge(&c->all, node);
    free(node);
    free(wsum);
}

static void cl_on_result(struct cl_agent *a, const struct proto_stats *st)
{
    struct cluster *c = a->c;
    struct cl_node_src src = {0};

    if (c->phase != PH_RUN || st->test != c->cur || a->result || !cl_shape_ok(a, st))
        return;
    a->result = true;
    a->cpu = st->cpu;
    a->measured_ns = st->measured_ns;
    if (!st->interrupted && st->measured_ns < c->run.duration_ns)
        c->ended_early = true; /* its workers reached their io_limit */
    /* Agent clock -> ours; a time off the clock (hostile or broken) is
     * unknown (0), never an overflow. */
    if (!st->started_first_ns || a->offset == INT64_MIN ||
        iof_time_add_offset(st->started_first_ns, -a->offset, &a->started_first))
        a->started_first = 0;
    if (!st->started_last_ns || a->offset == INT64_MIN ||
        iof_time_add_offset(st->started_last_ns, -a->offset, &a->started_last))
        a->started_last = 0;
    src.msg = st;
    src.status = MGR_STATUS_OK;
    src.ns = st->measured_ns;
    src.win_end_ns = st->measured_ns;
    src.cpu = &st->cpu;
    cl_node_rows(c, a, &src);
    if (st->error) {
        mgr_live_done(&c->live);
        fprintf(stderr, "iofleet: node %s: test %zu: %s\n", a->name, c->cur + 1, st->error);
        if (c->rc < 1)
            c->rc = 1;
    }
}

/* The rows of a node lost during the test, from the intervals that arrived
 * (partial), or a NODE row saying it measured nothing (lost-before-start). */
static void cl_lost_rows(struct cluster *c, struct cl_agent *a)
{
    struct cl_node_src src = {0};
    struct iof_stats *tmp = malloc(sizeof(*tmp)), *empty = malloc(sizeof(*empty));

    if (!tmp || !empty) {
        free(tmp);
        free(empty);
        return;
    }
    iof_stats_reset(empty);
    src.kept = a;
    src.tmp = tmp;
    if (a->acc_n) {
        struct iof_hist *lat[2] = {&empty->rd.lat, &empty->wr.lat};
        /* The node as kept: its counters, and its histograms decoded. */
        iof_counts_to_stats(&a->acc_node, empty);
        for (int d = 0; d < 2; d++)
            if (a->acc_lat_len[d] && iof_hist_decode(lat[d], a->acc_lat[d], a->acc_lat_len[d]))
                iof_hist_reset(lat[d]);
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
    cl_node_rows(c, a, &src);
    free(tmp);
    free(empty);
}

/* Agents of the run that take no part in the current test (one entry per
 * name: an agent back in another slot, or lost in the test, is not). */
static bool cl_absent(const struct cluster *c, const struct cl_agent *a)
{
    if (!a->member || a->state == AG_GONE || a->in_test || a->lost_in_test)
        return false;
    for (size_t i = 0; i < c->nagents; i++) {
        const struct cl_agent *o = &c->agents[i];
        if (o == a || strcmp(o->name, a->name))
            continue;
        if (o->in_test || o->lost_in_test || (o->member && o->state != AG_GONE && o < a))
            return false;
    }
    return true;
}

static void cl_print_test(struct cluster *c, uint64_t measured_ns)
{
    struct mgr_metrics m;
    char cycle[64], note[160], name[PROTO_NAME_MAX + 32];
    uint64_t first = UINT64_MAX, last = 0;
    unsigned lost = cl_lost_in_test(c), nodes = 0, absent = 0;

    for (size_t i = 0; i < c->nagents; i++) {
        struct cl_agent *a = &c->agents[i];
        absent += cl_absent(c, a);
        if (!a->result)
            continue;
        nodes++;
        if (a->started_first && a->started_first < first)
            first = a->started_first;
        if (a->started_last > last)
            last = a->started_last;
    }
    iof_test_cycle_label(&c->tests[c->cur], cycle, sizeof(cycle));
    snprintf(note, sizeof(note), "%u node%s, start skew %.3f ms%s%s", nodes, nodes == 1 ? "" : "s",
             first != UINT64_MAX && last >= first ? (double)(last - first) / 1e6 : 0.0,
             lost ? ", agents lost: " : "", lost ? "yes" : "");
    if (absent)
        snprintf(note + strlen(note), sizeof(note) - strlen(note), ", absent: %u", absent);
    if (c->rc == 130)
        snprintf(note + strlen(note), sizeof(note) - strlen(note), ", INTERRUPTED");
    mgr_live_done(&c->live);
    mgr_table_header(stdout, (unsigned)c->cur + 1, (unsigned)c->ntests,
                     c->p->specs[c->tests[c->cur].spec_index].name, cycle,
                     (double)measured_ns / 1e9, note);
    if (nodes == 0 && lost == 0) {
        printf("  no results: no agent completed this test\n");
    } else {
        mgr_metrics_compute(&c->all, measured_ns, &m);
        mgr_table_row(stdout, "ALL", "*", &m);
    }
    for (size_t i = 0; i < c->nagents; i++) {
        struct cl_agent *a = &c->agents[i];
        if ((!a->result && !a->lost_in_test) || !a->nrows)
            continue;
        /* NODE first, then its workers each followed by its targets; a
         * node that was lost says so in its name. */
        snprintf(name, sizeof(name), "%s%s%s%s", a->rows[a->nrows - 1].name,
                 a->status == MGR_STATUS_OK ? "" : "(",
                 a->status == MGR_STATUS_OK ? "" : mgr_row_status_name(a->status),
                 a->status == MGR_STATUS_OK ? "" : ")");
        mgr_table_row(stdout, a->rows[a->nrows - 1].type, name, &a->rows[a->nrows - 1].m);
        for (size_t r = 0, start = 0; r + 1 < a->nrows; r++) {
            if (strcmp(a->rows[r].type, "WORKER"))
                continue;
            mgr_table_row(stdout, "WORKER", a->rows[r].name, &a->rows[r].m);
            for (size_t t = start; t < r; t++)
                mgr_table_row(stdout, "TARGET", a->rows[t].name, &a->rows[t].m);
            start = r + 1;
        }
    }
    for (size_t i = 0; i < c->nagents; i++) {
        struct cl_agent *a = &c->agents[i];
        if (!a->lost_in_test)
            continue;
        if (a->status == MGR_STATUS_PARTIAL)
            printf("  node %s: no result (%s): its rows hold the %.3f s of the window whose "
                   "intervals arrived\n",
                   a->name, a->lost_why, (double)a->acc_ns / 1e9);
        else
            printf("  node %s: no result (%s): lost before any interval arrived\n", a->name,
                   a->lost_why);
    }
    for (size_t i = 0; i < c->nagents; i++)
        if (cl_absent(c, &c->agents[i]))
            printf("  node %s: absent (not in this test: %s)\n", c->agents[i].name,
                   c->agents[i].why[0] ? c->agents[i].why : "not back yet");
    fflush(stdout);
}

/* --- test sequencing ------------------------------------------------------------------- */

static void cl_send_all(struct cluster *c, const struct proto_msg *m)
{
    for (size_t i = 0; i < c->nagents; i++)
        if (c->agents[i].state == AG_READY)
            proto_link_send(c->agents[i].link, m);
}

static void cl_end_test(struct cluster *c)
{
    uint64_t now = iof_now_ns(), measured = c->run.duration_ns;

    cl_publish_ready(c, true);
    /* Nothing measured is dropped: a node lost in the test keeps the
     * intervals that arrived; an agent of the run not in it is named. */
    for (size_t i = 0; i < c->nagents; i++)
        if (c->agents[i].lost_in_test)
            cl_lost_rows(c, &c->agents[i]);
    for (size_t i = 0; i < c->nagents; i++)
        if (cl_absent(c, &c->agents[i])) {
            struct iof_stats *empty = malloc(sizeof(*empty));
            struct cl_node_src src = {.status = MGR_STATUS_ABSENT, .node = empty};
            if (!empty)
                continue;
            iof_stats_reset(empty);
            cl_node_rows(c, &c->agents[i], &src);
            free(empty);
        }
    if ((c->rc == 130 || c->ended_early) && now < c->end) {
        /* Stopped early (interrupted, or every worker reached its
         * io_limit): the ALL row covers the longest window an agent
         * measured (one agent: exactly its NODE row). */
        measured = 0;
        for (size_t i = 0; i < c->nagents; i++)
            if (c->agents[i].result && c->agents[i].measured_ns > measured)
                measured = c->agents[i].measured_ns;
        if (!measured)
            measured = now > c->measure_start ? now - c->measure_start : 0;
    }
    /* An agent's own window may have been shorter (stopped): use the ALL
     * row's window as the manager saw it; per-agent rows use their own. */
    cl_print_test(c, measured);
    if (c->o->nsinks) {
        uint64_t first = UINT64_MAX, last = 0;
        unsigned nodes = 0, cpu_nodes = 0;
        struct proto_cpu cpu_sum = {0}, cpu_mean;
        /* One queue depth for ALL when every group has the same; else 0. */
        uint32_t qd = c->p->nworkers ? iof_test_worker(c->p, &c->tests[c->cur], 0).queue_depth : 0;
        for (size_t g = 1; g < c->p->nworkers; g++)
            if (iof_test_worker(c->p, &c->tests[c->cur], g).queue_depth != qd)
                qd = 0;
        for (size_t i = 0; i < c->nagents; i++) {
            const struct cl_agent *a = &c->agents[i];
            if (!a->result)
                continue;
            nodes++;
            if (a->cpu.valid) {
                cl_cpu_add(&cpu_sum, &a->cpu);
                cpu_nodes++;
            }
            if (a->started_first && a->started_first < first)
                first = a->started_first;
            if (a->started_last > last)
                last = a->started_last;
        }
        {
            struct mgr_row all = {.type = MGR_ROW_ALL,
                                  .stats = &c->all,
                                  .ns = measured,
                                  .queue_depth = qd,
                                  .window_end_ns = measured,
                                  .status = cl_lost_in_test(c) ? MGR_STATUS_PARTIAL : MGR_STATUS_OK,
                                  .nodes = c->all_nodes,
                                  .workers = c->all_workers,
                                  .targets = c->all_targets,
                                  .cpu = NULL};
            const char **absent = calloc(c->nagents ? c->nagents : 1, sizeof(*absent));
            size_t nabsent = 0;
            for (size_t i = 0; absent && i < c->nagents; i++)
                if (cl_absent(c, &c->agents[i]))
                    absent[nabsent++] = c->agents[i].name;
            cpu_mean = cl_cpu_mean(&cpu_sum, cpu_nodes);
            all.cpu = cpu_mean.valid ? &cpu_mean : NULL;
            all.cpu_busy_pct = cpu_mean.busy_pct;
            struct mgr_test_end te = {.test = &c->ti,
                                      .absent = absent,
                                      .nabsent = nabsent,
                                      .end_wall_ns = iof_wall_ns(),
                                      .all = &all,
                                      .start_skew_ms = first != UINT64_MAX && last >= first
                                                           ? (double)(last - first) / 1e6
                                                           : 0,
                                      .nodes = nodes,
                                      .lost = cl_lost_in_test(c),
                                      .interrupted = c->rc == 130};
            CL_SINKS(c, s_->ops->test_end(s_, &te));
            free(absent);
        }
    }
    if (c->rc == 130 || cl_live(c) == 0) {
        cl_finish(c);
        return;
    }
    c->cur++;
    cl_next_test(c);
}

static void cl_check_results(struct cluster *c)
{
    for (size_t i = 0; i < c->nagents; i++)
        if (cl_part(c, &c->agents[i]) && !c->agents[i].result)
            return;
    cl_end_test(c);
}

static void cl_start_test(struct cluster *c)
{
    struct proto_msg m;
    uint64_t max_rtt = 0;

    for (size_t i = 0; i < c->nagents; i++)
        if (cl_part(c, &c->agents[i]) && c->agents[i].best_rtt > max_rtt)
            max_rtt = c->agents[i].best_rtt;
    c->run = iof_test_run(c->p, &c->tests[c->cur]);
    c->ended_early = false;
    c->start_at = iof_now_ns() + CL_START_LEAD_MS * IOF_NS_PER_MS + max_rtt;
    c->measure_start = c->start_at + c->run.ramp_ns;
    c->end = c->measure_start + c->run.duration_ns;
    c->next_publish = 0;
    memset(c->win, 0, sizeof(c->win));
    iof_stats_reset(&c->all);
    c->all_nodes = c->all_workers = c->all_targets = 0;
    iof_test_cycle_label(&c->tests[c->cur], c->cycle, sizeof(c->cycle));
    c->ti = (struct mgr_test_info){.test = &c->tests[c->cur],
                                   .ntests = c->ntests,
                                   .spec = c->p->specs[c->tests[c->cur].spec_index].name,
                                   .cycle = c->cycle,
                                   .start_wall_ns = iof_wall_ns()};
    CL_SINKS(c, s_->ops->test_begin(s_, &c->ti));
    c->phase = PH_RUN;
    c->live_cache = cl_live(c);
    c->deadline = c->end + CL_RESULT_GRACE_NS;
    for (size_t i = 0; i < c->nagents; i++) {
        struct cl_agent *a = &c->agents[i];
        if (!cl_part(c, a))
            continue;
        a->result = false;
        a->next_interval = 0;
        cl_forget_intervals(a);
        proto_msg_init(&m, PROTO_MSG_START);
        m.u.start.test = (uint32_t)c->cur;
        m.u.start.start_at_ns = c->start_at;
        m.u.start.offset_ns = a->offset;
        proto_link_send(a->link, &m);
    }
}

static void cl_send_probe(struct cl_agent *a)
{
    struct proto_msg m;
    proto_msg_init(&m, PROTO_MSG_CLOCK_PROBE);
    m.u.clock_probe.seq = a->probes;
    m.u.clock_probe.t0_ns = iof_now_ns();
    proto_link_send(a->link, &m);
}

static void cl_on_clock_reply(struct cl_agent *a, const struct proto_clock_reply *r)
{
    struct cluster *c = a->c;
    uint64_t t1 = iof_now_ns(), rtt;

    if (c->phase != PH_CLOCK || a->clock_done || r->seq != a->probes || r->t0_ns > t1)
        return;
    rtt = t1 - r->t0_ns;
    /* The sample with the smallest round trip bounds the offset best. */
    if (!a->probes || rtt < a->best_rtt) {
        int64_t off;
        /* agent_ns comes from the wire: an offset that does not fit is no
         * clock at all. */
        if (r->agent_ns > (uint64_t)INT64_MAX ||
            __builtin_sub_overflow((int64_t)r->agent_ns, (int64_t)(r->t0_ns + rtt / 2), &off)) {
            cl_agent_fail(a, AG_LOST, 1, "clock reply with agent_ns %" PRIu64 " off any clock",
                          r->agent_ns);
            return;
        }
        a->best_rtt = rtt;
        a->offset = off;
    }
    if (++a->probes < CL_PROBES) {
        cl_send_probe(a);
        return;
    }
    a->clock_done = true;
    for (size_t i = 0; i < c->nagents; i++)
        if (cl_part(c, &c->agents[i]) && !c->agents[i].clock_done)
            return;
    cl_start_test(c);
}

/* Sends the plan and the prepare request to every ready agent that has not
 * had them on its current connection (all of them at the start; an agent
 * that came back later). Returns how many were sent. */
static unsigned cl_send_plan(struct cluster *c)
{
    struct proto_msg plan, prep;
    unsigned n = 0;

    proto_msg_init(&plan, PROTO_MSG_PLAN);
    plan.u.plan.text = c->plan_text;
    plan.u.plan.len = strlen(c->plan_text);
    proto_msg_init(&prep, PROTO_MSG_PREPARE);
    for (size_t i = 0; i < c->nagents; i++) {
        struct cl_agent *a = &c->agents[i];
        if (a->state != AG_READY || a->prep_sent)
            continue;
        proto_link_send(a->link, &plan);
        proto_link_send(a->link, &prep);
        a->prep_sent = true;
        n++;
    }
    return n;
}

static void cl_next_test(struct cluster *c)
{
    unsigned ready = 0;

    if (c->cur >= c->ntests) {
        cl_finish(c);
        return;
    }
    /* An agent that came back prepares before it takes part. */
    for (size_t i = 0; i < c->nagents; i++)
        c->agents[i].in_test = c->agents[i].lost_in_test = c->agents[i].result = false;
    if (cl_send_plan(c)) {
        c->phase = PH_PREPARE;
        c->deadline = 0;
        return;
    }
    for (size_t i = 0; i < c->nagents; i++)
        ready += c->agents[i].state == AG_READY && c->agents[i].prepared;
    if (ready == 0) {
        cl_finish(c);
        return;
    }
    c->phase = PH_CLOCK;
    c->deadline = iof_now_ns() + 10 * IOF_NS_PER_S;
    for (size_t i = 0; i < c->nagents; i++) {
        struct cl_agent *a = &c->agents[i];
        if (a->state != AG_READY || !a->prepared)
            continue;
        a->in_test = true;
        a->probes = 0;
        a->clock_done = false;
        cl_send_probe(a);
    }
}

static void cl_check_prepared(struct cluster *c)
{
    for (size_t i = 0; i < c->nagents; i++)
        if (c->agents[i].state == AG_READY && !c->agents[i].prepared)
            return;
    mgr_live_done(&c->live);
    if (cl_count(c, AG_READY) == 0) {
        cl_finish(c);
        return;
    }
    cl_next_test(c);
}

/* Every plan node name must be one of the agents. */
static int cl_check_nodes(struct cluster *c)
{
    for (size_t g = 0; g < c->p->nworkers; g++) {
        const struct iof_worker_cfg *gc = &c->p->workers[g];
        for (size_t i = 0; i < gc->nnodes; i++) {
            bool found = !strcmp(gc->nodes[i], "*");
            for (size_t k = 0; k < c->nagents && !found; k++)
                found = c->agents[k].state == AG_READY && !strcmp(c->agents[k].name, gc->nodes[i]);
            if (!found) {
                char names[512] = "";
                for (size_t k = 0; k < c->nagents; k++)
                    if (c->agents[k].state == AG_READY)
                        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
                                 names[0] ? ", " : "", c->agents[k].name);
                fprintf(stderr,
                        "iofleet: workers[%zu].nodes: node '%s' does not exist (agents: %s)\n", g,
                        gc->nodes[i], names);
                return 2;
            }
        }
    }
    return 0;
}

static void cl_begin(struct cluster *c)
{
    unsigned ready = cl_live(c);
    int r;

    if (ready == 0) {
        fprintf(stderr, "iofleet: no agent to run on\n");
        if (c->rc < 3)
            c->rc = 3;
        cl_finish(c);
        return;
    }
    r = cl_check_nodes(c);
    if (r) {
        c->rc = r;
        cl_finish(c);
        return;
    }
    if (!c->o->quiet) {
        fprintf(stderr, "iofleet: %u agent%s ready:", ready, ready == 1 ? "" : "s");
        for (size_t i = 0; i < c->nagents; i++)
            if (c->agents[i].state == AG_READY)
                fprintf(stderr, " %s", c->agents[i].name);
        fputc('\n', stderr);
    }
    cl_sinks_run_begin(c);
    c->phase = PH_PREPARE;
    c->deadline = 0; /* preparation takes as long as writing the files takes */
    c->cur = 0;
    cl_send_plan(c);
}

static void cl_check_connected(struct cluster *c)
{
    unsigned ready = cl_live(c), pending = 0;
    if (c->phase != PH_CONNECT)
        return;
    /* An accepted connection that has not said hello yet is not an agent:
     * it holds up nothing (a port probe must not delay or fail the run). */
    for (size_t i = 0; i < c->nagents; i++)
        pending += (c->agents[i].state == AG_DIALING || c->agents[i].state == AG_HELLO) &&
                   (c->agents[i].host[0] || c->agents[i].hello);
    if (pending)
        return;
    if ((c->listener || c->embedded) && ready < c->expect)
        return;
    if (cl_count(c, AG_FAILED)) {
        if (c->rc < 3)
            c->rc = 3;
        cl_finish(c);
        return;
    }
    cl_begin(c);
}

/* --- agent links ---------------------------------------------------------------------- */

static void cl_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg)
{
    struct cl_agent *a = arg;
    struct cluster *c = a->c;

    switch (m->type) {
    case PROTO_MSG_HELLO:
        if (a->hello || m->u.hello.role != PROTO_ROLE_AGENT) {
            if (!a->host[0] && !a->hello) {
                cl_drop_stray(a, "its first message was the hello of a %s",
                              proto_role_name(m->u.hello.role));
                return;
            }
            cl_agent_fail(a, AG_FAILED, 3, "unexpected hello (role %s)",
                          proto_role_name(m->u.hello.role));
            return;
        }
        a->hello = true;
        snprintf(a->name, sizeof(a->name), "%s", m->u.hello.name);
        if (c->phase != PH_CONNECT && !a->host[0]) {
            /* Accepted on --listen after the start: only a lost node may
             * come back, in a new slot; its old one stays lost. */
            bool was_lost = false;
            for (size_t i = 0; i < c->nagents; i++)
                was_lost |= &c->agents[i] != a && c->agents[i].state == AG_LOST &&
                            !strcmp(c->agents[i].name, a->name);
            if (!was_lost) {
                proto_link_send_error(l, IOF_EBUSY,
                                      "this run started without agent %s; it takes no new agents",
                                      a->name);
                a->state = AG_GONE;
                proto_link_close(l, IOF_EBUSY, "not part of this run");
                return;
            }
            for (size_t i = 0; i < c->nagents; i++)
                if (&c->agents[i] != a && c->agents[i].state == AG_LOST &&
                    !strcmp(c->agents[i].name, a->name))
                    c->agents[i].state = AG_GONE; /* superseded by this slot */
        }
        if (proto_link_is_tls(l)) {
            /* An agent's identity is the name in its certificate. */
            struct iof_diag d = {{0}};
            if (proto_link_check_peer_name(l, a->name, &d)) {
                cl_agent_fail(a, AG_FAILED, 3, "calls itself '%s' but %s", a->name, d.msg);
                return;
            }
        }
        proto_hello_free(&a->info);
        if (proto_hello_copy(&a->info, &m->u.hello)) {
            cl_agent_fail(a, AG_FAILED, 3, "out of memory");
            return;
        }
        for (size_t i = 0; i < c->nagents; i++)
            if (&c->agents[i] != a && c->agents[i].hello &&
                (c->agents[i].state == AG_READY || c->agents[i].state == AG_HELLO) &&
                !strcmp(c->agents[i].name, a->name)) {
                cl_agent_fail(a, AG_FAILED, 3, "another agent already uses the name '%s'", a->name);
                return;
            }
        return;
    case PROTO_MSG_WELCOME:
        if (!a->hello) {
            if (!a->host[0]) {
                cl_drop_stray(a, "welcome before any hello");
                return;
            }
            cl_agent_fail(a, AG_FAILED, 3, "welcome before hello");
            return;
        }
        a->welcomed = true;
        a->member = true;
        a->state = AG_READY;
        if (a->rejoin) {
            a->rejoin = false;
            mgr_live_done(&c->live);
            /* During a test it can join the next one; between tests
             * (preparing) the one about to start. */
            bool next = c->phase == PH_RUN || c->phase == PH_CLOCK ? c->cur + 1 < c->ntests
                                                                   : c->cur < c->ntests;
            if (next)
                fprintf(stderr,
                        "iofleet: agent %s (%s) is back; it takes part from the next test\n",
                        a->name, a->endpoint);
            else
                fprintf(stderr,
                        "iofleet: agent %s (%s) is back, but no test is left for it to take "
                        "part in\n",
                        a->name, a->endpoint);
        }
        proto_link_set_deadline(a->link, 0, NULL);
        {
            /* The period the agent decided (the larger of both, capped at
             * its maximum); an older agent's welcome has none: the larger. */
            uint32_t mine = c->o->heartbeat_ms ? c->o->heartbeat_ms : PROTO_HEARTBEAT_MS_DEFAULT;
            uint32_t hb = m->u.welcome.heartbeat_ms     ? m->u.welcome.heartbeat_ms
                          : a->info.heartbeat_ms > mine ? a->info.heartbeat_ms
                                                        : mine;
            proto_link_set_established(a->link, hb);
            /* An agent's stats and results are as large as the plan allows. */
            proto_link_set_recv_limit(a->link, PROTO_STATS_FRAME_MAX);
        }
        cl_check_connected(c);
        return;
    case PROTO_MSG_ERROR:
        if (c->phase == PH_CONNECT || !a->welcomed) {
            cl_agent_fail(a, AG_FAILED, 3, "refused: %s", m->u.error.message);
            cl_check_connected(c);
        } else {
            cl_agent_fail(a, AG_FAILED, m->u.error.code == IOF_EPLAN ? 2 : 1, "%s",
                          m->u.error.message);
            if (c->phase == PH_PREPARE)
                cl_check_prepared(c);
            else if (c->phase == PH_RUN)
                cl_check_results(c);
        }
        return;
    case PROTO_MSG_PREPARE_PROGRESS:
        if (!c->o->quiet) {
            mgr_live_done(&c->live);
            fprintf(stderr, "%s: preparing %s: %" PRIu64 " / %" PRIu64 " MiB\n", a->name,
                    m->u.prepare_progress.path, m->u.prepare_progress.done >> 20,
                    m->u.prepare_progress.total >> 20);
        }
        return;
    case PROTO_MSG_PREPARED:
        a->prepared = true;
        if (c->phase == PH_PREPARE)
            cl_check_prepared(c);
        return;
    case PROTO_MSG_CLOCK_REPLY:
        cl_on_clock_reply(a, &m->u.clock_reply);
        return;
    case PROTO_MSG_STATS:
        cl_on_stats(a, &m->u.stats);
        return;
    case PROTO_MSG_RESULT:
        cl_on_result(a, &m->u.result);
        if (c->phase == PH_RUN)
            cl_check_results(c);
        return;
    case PROTO_MSG_BYE:
        return; /* the close follows */
    default:
        cl_agent_fail(a, AG_FAILED, 1, "unexpected %s", proto_msg_type_name(m->type));
        return;
    }
}

static void cl_dial(struct cl_agent *a);

static void cl_on_retry(uv_timer_t *t)
{
    cl_dial(t->data);
}

/* Moves the current phase on if the agents still taking part are all done
 * with it (after one of them failed or vanished). */
static void cl_progress(struct cluster *c)
{
    bool all = true;

    c->live_cache = cl_live(c);
    switch (c->phase) {
    case PH_CONNECT:
        cl_check_connected(c);
        return;
    case PH_PREPARE:
        cl_check_prepared(c);
        return;
    case PH_CLOCK:
        for (size_t i = 0; i < c->nagents; i++)
            all &= !cl_part(c, &c->agents[i]) || c->agents[i].clock_done;
        if (all && cl_live(c))
            cl_start_test(c);
        else if (!cl_live(c))
            cl_finish(c);
        return;
    case PH_RUN:
        cl_publish_ready(c, false);
        cl_check_results(c);
        return;
    default:
        return;
    }
}

#define CL_REDIAL_MS 1000

/* A lost --agent is dialled again every second until the run ends; when it
 * answers it prepares and takes part from the next test on. */
static void cl_on_redial(uv_timer_t *t)
{
    struct cl_agent *a = t->data;
    if (a->c->phase == PH_DONE || a->state != AG_LOST)
        return;
    a->state = AG_DIALING;
    a->hello = a->welcomed = a->prepared = a->prep_sent = a->in_test = a->result = false;
    proto_hello_free(&a->info);
    cl_dial(a);
}

static void cl_schedule_redial(struct cl_agent *a)
{
    a->state = AG_LOST;
    a->rejoin = true;
    uv_timer_start(&a->retry, cl_on_redial, CL_REDIAL_MS, 0);
}

static void cl_on_link_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct cl_agent *a = arg;
    struct cluster *c = a->c;

    if (!a->name[0] && proto_link_refused_name(l))
        snprintf(a->name, sizeof(a->name), "%s", proto_link_refused_name(l));
    a->link = NULL;
    if (c->phase == PH_DONE)
        return;
    if (a->rejoin && a->host[0] && (a->state == AG_DIALING || a->state == AG_HELLO)) {
        /* Still not back: keep trying quietly. */
        cl_schedule_redial(a);
        return;
    }
    if (a->state == AG_READY) {
        if (c->phase == PH_CONNECT)
            cl_agent_fail(a, AG_FAILED, 3, "%s", why);
        else
            cl_agent_fail(a, AG_LOST, 1, "lost: %s", why);
        if (a->state == AG_LOST && a->host[0])
            cl_schedule_redial(a);
    } else if (a->state == AG_LOST && a->host[0] && !a->rejoin) {
        /* Failed by the manager itself (no result, bad message): redial too. */
        cl_schedule_redial(a);
    } else if (a->state == AG_HELLO && !a->retry_open && !a->hello && err != IOF_EVERSION) {
        /* Accepted, but never said hello (a port probe, a stray client):
         * not an agent, and it takes no slot. */
        a->state = AG_GONE;
        if (err != -EPIPE && err != 0) {
            mgr_live_done(&c->live);
            IOF_WARN("connection from %s dropped before its hello: %s", a->endpoint, why);
        } else if (c->o->verbose) {
            IOF_INFO("connection from %s closed before its hello", a->endpoint);
        }
    } else if (a->state == AG_DIALING || a->state == AG_HELLO) {
        if (err == IOF_EVERSION || err == IOF_EPROTO) {
            cl_agent_fail(a, AG_FAILED, 3, "%s", why);
        } else if (a->retry_open && iof_now_ns() < c->deadline) {
            /* Not up yet: try again until the wait deadline. */
            snprintf(a->why, sizeof(a->why), "%s", why);
            a->state = AG_DIALING;
            a->hello = false;
            uv_timer_start(&a->retry, cl_on_retry, CL_RETRY_MS, 0);
            return;
        } else {
            cl_agent_fail(a, AG_FAILED, 3, "%s", why);
        }
    }
    cl_progress(c);
}

static void cl_attach(struct cl_agent *a, struct iof_conn *conn)
{
    static const struct proto_link_cbs cbs = {.on_msg = cl_on_msg, .on_close = cl_on_link_close};
    struct proto_msg m;

    struct iof_diag d = {{0}};

    if (iof_conn_is_unix(conn) && iof_conn_check_local_peer(conn, &d)) {
        /* A unix socket proves who listens on it: root or our own user,
         * else anybody could pose as an agent and report what it likes. */
        cl_agent_fail(a, AG_FAILED, 3, "refusing the agent: %s", d.msg);
        iof_conn_close(conn, IOF_EDENIED);
        return;
    }
    if (!iof_conn_is_unix(conn) && !iof_conn_is_tls(conn) && !a->c->o->insecure) {
        /* Not reached: plain TCP without --insecure is refused at start. */
        cl_agent_fail(a, AG_FAILED, 3,
                      "refusing plain TCP: use TLS (--tls-ca, --tls-cert, --tls-key), a unix "
                      "socket (--agent unix:PATH) or --insecure on both sides");
        iof_conn_close(conn, IOF_EDENIED);
        return;
    }
    a->link = proto_link_new(a->c->loop, conn, &cbs, a);
    if (!a->link) {
        cl_agent_fail(a, AG_FAILED, 3, "out of memory");
        return;
    }
    proto_link_set_decode_flags(a->link, PROTO_DECODE_SUM_STATS);
    a->state = AG_HELLO;
    proto_link_set_deadline(a->link, 10000, "hello and welcome from the agent");
    proto_msg_init_hello(&m, PROTO_ROLE_MANAGER, CL_MANAGER_NAME);
    if (a->c->o->heartbeat_ms)
        m.u.hello.heartbeat_ms = a->c->o->heartbeat_ms;
    proto_link_send(a->link, &m);
}

static void cl_on_connect(struct iof_conn *conn, int err, void *arg)
{
    struct cl_agent *a = arg;
    if (err) {
        /* A refused or unreachable port says it in two words; TLS failures
         * need the transport's own explanation. */
        snprintf(a->why, sizeof(a->why), "%s",
                 err != -ECONNREFUSED && err != -EHOSTUNREACH && err != -ETIMEDOUT &&
                         iof_conn_error(conn)[0]
                     ? iof_conn_error(conn)
                     : uv_strerror(err));
        /* Authentication failures do not heal by retrying. */
        if (err == -EACCES || err == IOF_EPROTO || err == IOF_ETOOBIG)
            a->retry_open = false;
        return; /* on_close follows */
    }
    cl_attach(a, conn);
}

static void cl_on_dial_close(struct iof_conn *conn, int err, void *arg)
{
    struct cl_agent *a = arg;
    struct cluster *c = a->c;
    (void)conn;
    if (a->link || a->state != AG_DIALING)
        return; /* the link owns it now */
    if (a->rejoin) {
        /* A lost agent being redialled was reported lost already (exit 1);
         * a redial still in flight when the run ends is not "unreachable". */
        if (c->phase != PH_DONE)
            cl_schedule_redial(a);
        else
            a->state = AG_LOST;
        return;
    }
    if (c->phase == PH_CONNECT && a->retry_open && iof_now_ns() < c->deadline) {
        uv_timer_start(&a->retry, cl_on_retry, CL_RETRY_MS, 0);
        return;
    }
    cl_agent_fail(a, AG_FAILED, 3, "%s%s", a->retry_open ? "unreachable: " : "",
                  a->why[0] ? a->why : iof_strerror(err));
    cl_check_connected(c);
}

static void cl_dial(struct cl_agent *a)
{
    static const struct iof_conn_cbs cbs = {.on_connect = cl_on_connect,
                                            .on_close = cl_on_dial_close};
    struct iof_conn *conn;
    int r = a->unix_path       ? iof_conn_connect_unix(a->c->loop, a->unix_path, &cbs, a, &conn)
            : a->c->tls_client ? iof_conn_connect_tls(a->c->loop, a->host, a->port,
                                                      a->c->tls_client, &cbs, a, &conn)
                               : iof_conn_connect(a->c->loop, a->host, a->port, &cbs, a, &conn);
    if (r < 0)
        cl_agent_fail(a, AG_FAILED, 3, "cannot dial: %s", uv_strerror(r));
}

static struct cl_agent *cl_agent_add(struct cluster *c, const char *endpoint)
{
    struct cl_agent *a = NULL;
    for (size_t i = 0; i < c->nagents && !a; i++)
        if (c->agents[i].state == AG_GONE && !c->agents[i].link && !c->agents[i].lost_in_test)
            a = &c->agents[i]; /* its retry timer stays initialised */
    if (!a) {
        if (c->nagents == c->capagents)
            return NULL;
        a = &c->agents[c->nagents++];
        memset(a, 0, sizeof(*a));
        uv_timer_init(c->loop, &a->retry);
    } else {
        uv_timer_t t = a->retry;
        proto_hello_free(&a->info);
        cl_clear_rows(a);
        free(a->rows);
        free(a->acc_lat[0]);
        free(a->acc_lat[1]);
        free(a->tacc);
        memset(a, 0, sizeof(*a));
        a->retry = t;
    }
    a->c = c;
    snprintf(a->endpoint, sizeof(a->endpoint), "%s", endpoint);
    a->retry.data = a;
    a->retry_open = true;
    return a;
}

static void cl_on_reject(struct iof_listener *l, struct iof_conn *conn, int err, void *arg)
{
    struct cluster *c = arg;
    (void)l;
    mgr_live_done(&c->live);
    IOF_WARN("refused a connection from %s: %s", iof_conn_peer(conn),
             iof_conn_error(conn)[0] ? iof_conn_error(conn) : iof_strerror(err));
}

static void cl_on_accept(struct iof_listener *l, struct iof_conn *conn, void *arg)
{
    struct cluster *c = arg;
    struct cl_agent *a;
    (void)l;
    if (c->phase == PH_DONE) {
        iof_conn_close(conn, IOF_EBUSY);
        return;
    }
    if (!(a = cl_agent_add(c, iof_conn_peer(conn)))) {
        mgr_live_done(&c->live);
        IOF_WARN("connection from %s dropped: %zu connections are already waiting for their "
                 "hello",
                 iof_conn_peer(conn), c->capagents);
        iof_conn_close(conn, IOF_EBUSY);
        return;
    }
    a->retry_open = false;
    /* After the connect phase only an agent that was lost may come back
     * (checked at its hello). */
    a->rejoin = c->phase != PH_CONNECT;
    cl_attach(a, conn);
}

/* --- timers, signals, the end --------------------------------------------------------- */

static void cl_on_tick(uv_timer_t *t)
{
    struct cluster *c = t->data;
    uint64_t now = iof_now_ns();

    c->live_cache = cl_live(c);
    if (c->phase == PH_RUN)
        cl_publish_ready(c, false);
    if (!c->deadline || now < c->deadline)
        return;
    switch (c->phase) {
    case PH_CONNECT: {
        unsigned ready = cl_live(c);
        for (size_t i = 0; i < c->nagents; i++) {
            struct cl_agent *a = &c->agents[i];
            a->retry_open = false;
            if (a->state == AG_HELLO && !a->host[0] && !a->hello) {
                /* An accepted connection that never said hello: not an agent. */
                cl_drop_stray(a, "no hello within the wait");
            } else if (a->state == AG_DIALING || a->state == AG_HELLO) {
                uv_timer_stop(&a->retry);
                cl_agent_fail(a, AG_FAILED, 3, "not connected after %.1f s%s%s",
                              (double)c->o->wait_ms / 1000, a->why[0] ? ": " : "", a->why);
            }
        }
        if ((c->listener || c->embedded) && ready < c->expect) {
            fprintf(stderr, "iofleet: %u of %u expected agents connected within %.1f s\n", ready,
                    c->expect, (double)c->o->wait_ms / 1000);
            if (c->rc < 3)
                c->rc = 3;
            cl_finish(c);
            return;
        }
        cl_check_connected(c);
        return;
    }
    case PH_CLOCK:
        for (size_t i = 0; i < c->nagents; i++)
            if (cl_part(c, &c->agents[i]) && !c->agents[i].clock_done)
                cl_agent_fail(&c->agents[i], AG_LOST, 1, "no clock reply");
        if (cl_live(c))
            cl_start_test(c);
        else
            cl_finish(c);
        return;
    case PH_RUN:
        for (size_t i = 0; i < c->nagents; i++)
            if (cl_part(c, &c->agents[i]) && !c->agents[i].result)
                cl_agent_fail(&c->agents[i], AG_LOST, 1, "no result for test %zu", c->cur + 1);
        cl_end_test(c);
        return;
    default:
        return;
    }
}

static void cl_on_signal(uv_signal_t *h, int sig)
{
    struct cluster *c = h->data;
    struct proto_msg m;
    (void)sig;

    if (c->rc == 130) {
        fprintf(stderr, "iofleet: interrupted again: exiting without waiting for results\n");
        cl_finish(c);
        return;
    }
    c->rc = 130;
    mgr_live_done(&c->live);
    fprintf(stderr, "iofleet: interrupted: stopping the agents and collecting results\n");
    if (c->phase != PH_RUN) {
        cl_finish(c);
        return;
    }
    proto_msg_init(&m, PROTO_MSG_STOP);
    m.u.stop.reason = "interrupted";
    cl_send_all(c, &m);
    c->deadline = iof_now_ns() + 10 * IOF_NS_PER_S;
}

static void cl_close_handle(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h))
        uv_close(h, NULL);
}

static void cl_finish(struct cluster *c)
{
    if (c->phase == PH_DONE)
        return;
    c->phase = PH_DONE;
    mgr_live_done(&c->live);
    for (size_t i = 0; i < c->nagents; i++) {
        struct cl_agent *a = &c->agents[i];
        uv_timer_stop(&a->retry);
        cl_close_handle((uv_handle_t *)&a->retry);
        if (a->link)
            proto_link_close(a->link, 0, "run finished");
    }
    if (c->listener) {
        iof_listener_close(c->listener);
        c->listener = NULL;
    }
    cl_close_handle((uv_handle_t *)&c->tick);
    cl_close_handle((uv_handle_t *)&c->sigint);
    cl_close_handle((uv_handle_t *)&c->sigterm);
    /* The embedded agent ends with its session; SIGTERM makes sure it does
     * not outlive us if the bye is lost. It stops its I/O on SIGTERM. */
    if (c->child_running)
        uv_process_kill(&c->child, SIGTERM);
}

/* --- the embedded agent ------------------------------------------------------------- */

static void cl_on_child_exit(uv_process_t *p, int64_t status, int sig)
{
    struct cluster *c = p->data;
    c->child_running = false;
    uv_close((uv_handle_t *)p, NULL);
    if (c->phase != PH_DONE && (status || sig)) {
        fprintf(stderr, "iofleet: the local agent exited (status %" PRId64 ", signal %d)\n", status,
                sig);
        if (c->phase == PH_CONNECT) {
            c->rc = 3;
            cl_finish(c);
        }
    }
}

/* Starts the embedded agent connected to us by a socketpair (its end is
 * its descriptor 3): no port for another local user to reach, and each end
 * knows the other's user from the kernel. */
static int cl_spawn_local(struct cluster *c)
{
    char **argv;
    size_t n = 0, max = 20 + 2 * 1024;
    uv_process_options_t po = {0};
    uv_stdio_container_t stdio[4];
    struct iof_conn *conn;
    struct cl_agent *a;
    int sv[2], r;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        r = -errno;
        fprintf(stderr, "iofleet: cannot start the local agent: socketpair: %s\n", strerror(errno));
        return r;
    }
    argv = calloc(max, sizeof(*argv));
    if (!argv) {
        close(sv[0]);
        close(sv[1]);
        return -ENOMEM;
    }
    argv[n++] = (char *)c->o->dynamo;
    argv[n++] = "--manager-fd";
    argv[n++] = "3";
    argv[n++] = "--name";
    argv[n++] = "local";
    argv[n++] = "--workdir";
    argv[n++] = (char *)c->o->workdir;
    argv[n++] = "--once";
    argv[n++] = "--quiet"; /* the manager reports what matters */
    if (c->o->allow_destructive)
        argv[n++] = "--allow-destructive";
    if (c->o->heartbeat_ms) {
        static char hb[16];
        snprintf(hb, sizeof(hb), "%u", c->o->heartbeat_ms);
        argv[n++] = "--heartbeat-ms";
        argv[n++] = hb;
    }
    /* Allowed: exactly the absolute paths the plan names. */
    for (size_t g = 0; g < c->p->nworkers; g++)
        for (size_t t = 0; t < c->p->workers[g].ntargets && n + 3 < max; t++)
            if (c->p->workers[g].targets[t].path[0] == '/') {
                argv[n++] = "--allow";
                argv[n++] = c->p->workers[g].targets[t].path;
            }
    argv[n] = NULL;
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = 2;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    stdio[3].flags = UV_INHERIT_FD;
    stdio[3].data.fd = sv[1];
    po.file = c->o->dynamo;
    po.args = argv;
    po.exit_cb = cl_on_child_exit;
    po.stdio = stdio;
    po.stdio_count = 4;
    c->child.data = c;
    r = uv_spawn(c->loop, &c->child, &po);
    free(argv);
    close(sv[1]); /* the child's end: it has its own copy now */
    if (r < 0) {
        close(sv[0]);
        fprintf(stderr, "iofleet: cannot start the local agent '%s': %s\n", c->o->dynamo,
                uv_strerror(r));
        return r;
    }
    c->child_running = true;
    r = iof_conn_open_fd(c->loop, sv[0], "the local agent", NULL, NULL, &conn);
    if (r < 0) {
        fprintf(stderr, "iofleet: cannot talk to the local agent: %s\n", iof_strerror(r));
        return r;
    }
    if (!(a = cl_agent_add(c, "local"))) {
        iof_conn_close(conn, -ENOMEM);
        return -ENOMEM;
    }
    a->retry_open = false;
    cl_attach(a, conn);
    return 0;
}

int mgr_cluster_run(const struct iof_plan *p, const char *plan_text, const struct mgr_run_opts *o)
{
    struct cluster *c = calloc(1, sizeof(*c));
    struct iof_diag d = {{0}};
    uint16_t port = 0;
    int rc;

    if (!c) {
        fprintf(stderr, "iofleet: out of memory\n");
        return 1;
    }
    c->p = p;
    c->plan_text = plan_text;
    c->o = o;
    if (!o->tls_ca) {
        /* Plain TCP authenticates nobody, loopback included: both sides
         * must say --insecure. Unix sockets and the embedded agent's
         * socketpair know their peer's user. */
        const char *tcp = o->listen;
        for (size_t i = 0; i < o->nagents && !tcp; i++)
            if (!iof_addr_is_unix(o->agents[i], NULL))
                tcp = o->agents[i];
        if (tcp && !o->insecure) {
            fprintf(stderr,
                    "iofleet: %s %s: plain TCP authenticates nobody (loopback included: any "
                    "local user could pose as the agent or the manager); use TLS (--tls-ca, "
                    "--tls-cert, --tls-key), a unix socket (--agent unix:PATH), or --insecure "
                    "here and on the agents\n",
                    tcp == o->listen ? "--listen" : "--agent", tcp);
            free(c);
            return 3; /* refused for want of authentication */
        }
        if (tcp)
            IOF_WARN("--insecure: plain TCP, no authentication: agents and results are not "
                     "verified, and anyone who can reach an agent can drive it");
    }
    c->embedded = !o->nagents && !o->listen;
    c->expect = c->embedded ? 1 : o->expect;
    /* Slack for stray connections on --listen; their slots are reused. */
    c->capagents = o->nagents + c->expect + 64;
    c->agents = calloc(c->capagents, sizeof(*c->agents));
    c->tests = iof_plan_expand(p, &c->ntests);
    if (!c->agents || !c->tests) {
        fprintf(stderr, "iofleet: out of memory\n");
        free(c->agents);
        free(c->tests);
        free(c);
        return 1;
    }
    if (o->tls_ca) {
        struct iof_diag td = {{0}};
        if ((o->nagents && iof_tls_config_load(NULL, o->tls_ca, o->tls_cert, o->tls_key, false,
                                               &c->tls_client, &td)) ||
            (o->listen && iof_tls_config_load(NULL, o->tls_ca, o->tls_cert, o->tls_key, true,
                                              &c->tls_server, &td))) {
            fprintf(stderr, "iofleet: %s\n", td.msg);
            iof_tls_ctx_free(c->tls_client);
            free(c->agents);
            free(c->tests);
            free(c);
            return 2;
        }
    }
    c->loop = uv_default_loop();
    mgr_live_init(&c->live, o->quiet);
    signal(SIGPIPE, SIG_IGN);
    uv_timer_init(c->loop, &c->tick);
    c->tick.data = c;
    uv_timer_start(&c->tick, cl_on_tick, 50, 50);
    uv_signal_init(c->loop, &c->sigint);
    uv_signal_init(c->loop, &c->sigterm);
    c->sigint.data = c;
    c->sigterm.data = c;
    uv_signal_start(&c->sigint, cl_on_signal, SIGINT);
    uv_signal_start(&c->sigterm, cl_on_signal, SIGTERM);
    c->phase = PH_CONNECT;
    c->run_wall_ns = iof_wall_ns();
    c->run_mono_ns = iof_now_ns();
    c->deadline = iof_now_ns() + o->wait_ms * IOF_NS_PER_MS;

    if (c->embedded) {
        if (cl_spawn_local(c) < 0) {
            c->rc = 3;
            cl_finish(c);
        }
    } else if (o->listen) {
        char host[256] = "127.0.0.1";
        if (iof_addr_parse(o->listen, host, sizeof(host), IOF_DEFAULT_PORT, &port, &d)) {
            fprintf(stderr, "iofleet: --listen %s: %s\n", o->listen, d.msg);
            c->rc = 2;
            cl_finish(c);
        } else if (c->tls_server
                       ? iof_listener_start_tls(c->loop, host, port, c->tls_server, cl_on_accept,
                                                cl_on_reject, c, &c->listener, &d)
                       : iof_listener_start(c->loop, host, port, cl_on_accept, c, &c->listener,
                                            &d)) {
            fprintf(stderr, "iofleet: %s\n", d.msg);
            c->rc = 3;
            cl_finish(c);
        }
    }
    for (size_t i = 0; i < o->nagents && c->phase != PH_DONE; i++) {
        struct cl_agent *a = cl_agent_add(c, o->agents[i]);
        const char *upath;
        if (iof_addr_is_unix(o->agents[i], &upath)) {
            if (upath[0] != '/') {
                fprintf(stderr, "iofleet: --agent %s: the socket path must be absolute\n",
                        o->agents[i]);
                c->rc = 2;
                cl_finish(c);
                break;
            }
            a->unix_path = upath;
            snprintf(a->host, sizeof(a->host), "unix");
        } else if (iof_addr_parse(o->agents[i], a->host, sizeof(a->host), IOF_DEFAULT_PORT,
                                  &a->port, &d)) {
            fprintf(stderr, "iofleet: --agent %s: %s\n", o->agents[i], d.msg);
            c->rc = 2;
            cl_finish(c);
            break;
        }
        cl_dial(a);
    }
    uv_run(c->loop, UV_RUN_DEFAULT);
    uv_loop_close(c->loop);
    rc = c->rc;
    CL_SINKS(c, s_->ops->run_end(s_, rc));
    iof_tls_ctx_free(c->tls_client);
    iof_tls_ctx_free(c->tls_server);
    free(c->infos);
    for (size_t i = 0; i < c->nagents; i++) {
        cl_clear_rows(&c->agents[i]);
        free(c->agents[i].rows);
        free(c->agents[i].acc_lat[0]);
        free(c->agents[i].acc_lat[1]);
        free(c->agents[i].tacc);
        proto_hello_free(&c->agents[i].info);
    }
    free(c->agents);
    free(c->tests);
    free(c->scratch);
    free(c);
    return rc;
}
