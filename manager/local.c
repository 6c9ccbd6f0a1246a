#include "manager/local.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "dynamo/engine.h"
#include "dynamo/run.h"
#include "dynamo/target.h"
#include "manager/report.h"

/* Lead time between starting the threads and the common start. */
#define LOCAL_START_DELAY_NS (100ULL * IOF_NS_PER_MS)
#define LOCAL_NODE "local"

static volatile sig_atomic_t local_interrupted;

static void local_on_signal(int sig)
{
    (void)sig;
    local_interrupted = 1;
}

static bool local_node_selected(const struct iof_worker_cfg *g, const char *host)
{
    if (g->nnodes == 0)
        return true;
    for (size_t i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i], "*") || !strcmp(g->nodes[i], LOCAL_NODE) ||
            !strcmp(g->nodes[i], host))
            return true;
    return false;
}

static void local_progress(void *arg, const char *path, uint64_t done, uint64_t total)
{
    const struct mgr_local_opts *o = arg;
    if (!o->quiet)
        fprintf(stderr, "preparing %s: %" PRIu64 " / %" PRIu64 " MiB\n", path, done >> 20,
                total >> 20);
}

/* Creates or checks every test file the plan names, before any test runs. */
static int local_prepare(const struct iof_plan *p, const struct mgr_local_opts *o)
{
    struct iof_diag d = {{0}};

    if (mkdir(o->workdir, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "iofleet: workdir '%s': %s\n", o->workdir, strerror(errno));
        return -errno;
    }
    for (size_t g = 0; g < p->nworkers; g++) {
        const struct io_engine *eng = dyn_engine_find(p->workers[g].engine);
        if (!eng || !eng->touches_files)
            continue;
        for (size_t i = 0; i < p->workers[g].ntargets; i++) {
            int r = dyn_target_prepare(&p->workers[g].targets[i], o->workdir,
                                       p->workers[g].pattern, local_progress, (void *)o, &d);
            if (r) {
                fprintf(stderr, "iofleet: node %s: %s\n", LOCAL_NODE, d.msg);
                return r;
            }
        }
    }
    return 0;
}

/* Sums one worker's per-target stats. */
static void sum_targets(const struct iof_stats *per, size_t n, struct iof_stats *out)
{
    iof_stats_reset(out);
    for (size_t i = 0; i < n; i++)
        iof_stats_merge(out, &per[i]);
}

struct local_test {
    const struct iof_plan *plan;
    const struct iof_test *test;
    size_t ntests;
    struct dyn_test *dt;
    struct iof_stats *agg; /* scratch for one interval */
    uint64_t measured_ns;
    bool interrupted;
};

/* Collects intervals as they are published until the test ends. */
static void local_follow(struct local_test *lt, const struct mgr_local_opts *o,
                         uint64_t start_ns)
{
    struct mgr_live live;
    struct dyn_test *dt = lt->dt;
    const struct iof_run_cfg *run = &lt->plan->run;
    uint64_t k = 0, nint = dyn_test_nintervals(dt);
    uint64_t poll = run->interval_ns / 20;
    uint64_t measure_start = start_ns + run->ramp_ns;
    size_t nw = dyn_test_nworkers(dt);
    bool stopped = false;

    if (poll < IOF_NS_PER_MS)
        poll = IOF_NS_PER_MS;
    if (poll > 50 * IOF_NS_PER_MS)
        poll = 50 * IOF_NS_PER_MS;
    mgr_live_init(&live, o->quiet);
    while (k < nint) {
        size_t ready = 0, gone = 0;
        if (local_interrupted && !stopped) {
            dyn_test_stop(dt);
            stopped = true;
            lt->interrupted = true;
        }
        for (size_t w = 0; w < nw; w++) {
            const struct iof_stats *s;
            int r = dyn_test_interval(dt, w, k, &s);
            if (r == 0)
                break;
            ready++;
            if (r == -ENOENT)
                gone++;
        }
        if (ready < nw) {
            iof_sleep_until(iof_now_ns() + poll);
            continue;
        }
        if (gone == nw)
            break;
        iof_stats_reset(lt->agg);
        for (size_t w = 0; w < nw; w++) {
            const struct iof_stats *s;
            if (dyn_test_interval(dt, w, k, &s) == 1) {
                struct iof_stats sum;
                sum_targets(s, dyn_test_ntargets(dt, w), &sum);
                iof_stats_merge(lt->agg, &sum);
            } else {
                IOF_WARN("worker %zu: interval %" PRIu64 " lost for the live view", w, k);
            }
            dyn_test_interval_release(dt, w, k);
        }
        {
            struct mgr_metrics m;
            uint64_t iv_start = k * run->interval_ns;
            uint64_t iv_end = (k + 1) * run->interval_ns;
            uint64_t now_rel = iof_now_ns() - measure_start;
            if (iv_end > run->duration_ns)
                iv_end = run->duration_ns;
            if (gone && now_rel < iv_end)
                iv_end = now_rel; /* stopped inside this interval */
            mgr_metrics_compute(lt->agg, iv_end - iv_start, &m);
            mgr_live_line(&live, "run", lt->test->index + 1, (unsigned)lt->ntests,
                          (double)iv_end / 1e9, (double)run->duration_ns / 1e9, &m, 1, 1);
        }
        k++;
    }
    mgr_live_done(&live);
    while (!dyn_test_finished(dt))
        iof_sleep_until(iof_now_ns() + poll);
    {
        uint64_t stop_ns = iof_now_ns();
        uint64_t end = measure_start + run->duration_ns;
        if (lt->interrupted && stop_ns < end)
            lt->measured_ns = stop_ns > measure_start ? stop_ns - measure_start : 0;
        else
            lt->measured_ns = run->duration_ns;
    }
}

static void local_print(struct local_test *lt, const char *cycle, const char *note)
{
    struct dyn_test *dt = lt->dt;
    size_t nw = dyn_test_nworkers(dt);
    struct iof_stats *all = calloc(1, sizeof(*all));
    struct iof_stats *wsum = calloc(1, sizeof(*wsum));
    struct mgr_metrics m;
    char name[64 + IOF_PATH_MAX];

    if (!all || !wsum) {
        free(all);
        free(wsum);
        IOF_ERROR("out of memory printing results");
        return;
    }
    iof_stats_reset(all);
    for (size_t w = 0; w < nw; w++) {
        sum_targets(dyn_test_totals(dt, w), dyn_test_ntargets(dt, w), wsum);
        iof_stats_merge(all, wsum);
    }
    mgr_table_header(stdout, lt->test->index + 1, (unsigned)lt->ntests,
                     lt->plan->specs[lt->test->spec_index].name, cycle,
                     (double)lt->measured_ns / 1e9, note);
    mgr_metrics_compute(all, lt->measured_ns, &m);
    mgr_table_row(stdout, "ALL", "*", &m);
    mgr_table_row(stdout, "NODE", LOCAL_NODE, &m);
    for (size_t w = 0; w < nw; w++) {
        const struct iof_stats *per = dyn_test_totals(dt, w);
        size_t nt = dyn_test_ntargets(dt, w);
        sum_targets(per, nt, wsum);
        mgr_metrics_compute(wsum, lt->measured_ns, &m);
        snprintf(name, sizeof(name), "w%zu", w);
        mgr_table_row(stdout, "WORKER", name, &m);
        for (size_t i = 0; i < nt; i++) {
            mgr_metrics_compute(&per[i], lt->measured_ns, &m);
            snprintf(name, sizeof(name), "w%zu:%s", w, dyn_test_target_cfg(dt, w, i)->path);
            mgr_table_row(stdout, "TARGET", name, &m);
            if (per[i].first_error)
                fprintf(stdout, "  first error on %s at offset %" PRIu64 ": %s\n",
                        dyn_test_target_cfg(dt, w, i)->path, per[i].first_error_offset,
                        iof_strerror(per[i].first_error));
        }
    }
    fflush(stdout);
    free(all);
    free(wsum);
}

static bool local_had_errors(const struct dyn_test *dt)
{
    for (size_t w = 0; w < dyn_test_nworkers(dt); w++)
        for (size_t i = 0; i < dyn_test_ntargets(dt, w); i++) {
            const struct iof_stats *s = &dyn_test_totals(dt, w)[i];
            if (s->rd.errors || s->wr.errors)
                return true;
        }
    return false;
}

int mgr_local_run(const struct iof_plan *p, const struct mgr_local_opts *o)
{
    struct sigaction sa = {.sa_handler = local_on_signal}, old_int, old_term;
    struct iof_test *tests;
    struct iof_worker_cfg *groups = NULL;
    struct local_test lt = {.plan = p};
    char host[256] = "";
    int rc = 0;

    gethostname(host, sizeof(host) - 1);
    for (size_t g = 0; g < p->nworkers; g++) {
        if (!local_node_selected(&p->workers[g], host)) {
            fprintf(stderr,
                    "iofleet: workers[%zu]: node '%s' does not exist: without agents only "
                    "the local node (\"*\", \"%s\" or \"%s\") can run\n",
                    g, p->workers[g].nodes[0], LOCAL_NODE, host);
            return 2;
        }
    }
    tests = iof_plan_expand(p, &lt.ntests);
    groups = calloc(p->nworkers ? p->nworkers : 1, sizeof(*groups));
    lt.agg = calloc(1, sizeof(*lt.agg));
    if (!tests || !groups || !lt.agg) {
        fprintf(stderr, "iofleet: out of memory\n");
        rc = 1;
        goto out;
    }
    if (local_prepare(p, o) < 0) {
        rc = 1;
        goto out;
    }
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    local_interrupted = 0;

    for (size_t ti = 0; ti < lt.ntests && !local_interrupted; ti++) {
        struct dyn_test_params dp = {0};
        struct iof_diag d = {{0}};
        char cycle[64], note[sizeof(d.msg) + 32] = "";
        int r;

        lt.test = &tests[ti];
        for (size_t g = 0; g < p->nworkers; g++)
            groups[g] = iof_test_worker(p, &tests[ti], g);
        iof_test_cycle_label(&tests[ti], cycle, sizeof(cycle));
        dp.spec = &p->specs[tests[ti].spec_index];
        dp.groups = groups;
        dp.ngroups = p->nworkers;
        dp.workdir = o->workdir;
        dp.ramp_ns = p->run.ramp_ns;
        dp.duration_ns = p->run.duration_ns;
        dp.interval_ns = p->run.interval_ns;
        dp.seed = iof_wall_ns();
        dp.start_ns = iof_now_ns() + LOCAL_START_DELAY_NS;
        r = dyn_test_start(&dp, &lt.dt, &d);
        if (r) {
            fprintf(stderr, "iofleet: test %zu (%s): node %s: %s\n", ti + 1, dp.spec->name,
                    LOCAL_NODE, d.msg);
            rc = 1;
            continue;
        }
        lt.interrupted = false;
        local_follow(&lt, o, dp.start_ns);
        r = dyn_test_join(lt.dt, &d);
        if (r) {
            snprintf(note, sizeof(note), "FAILED: %s", d.msg);
            fprintf(stderr, "iofleet: test %zu (%s): node %s: %s\n", ti + 1, dp.spec->name,
                    LOCAL_NODE, d.msg);
            rc = 1;
        } else if (lt.interrupted) {
            snprintf(note, sizeof(note), "INTERRUPTED");
        }
        local_print(&lt, cycle, note);
        if (local_had_errors(lt.dt) && rc == 0)
            rc = 1;
        dyn_test_free(lt.dt);
        lt.dt = NULL;
    }
    if (local_interrupted)
        rc = 130;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
out:
    free(tests);
    free(groups);
    free(lt.agg);
    return rc;
}
