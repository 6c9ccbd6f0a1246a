/* SPDX-License-Identifier: Apache-2.0 */
/* tests/bench/rate/ratebench.c - rate accuracy of one rated worker, through
 * the dyn_test API the agent drives (dynamo/run.h): achieved IOPS over the
 * target, the coefficient of variation of the gaps between the I/Os as
 * scheduled and as actually submitted (traced from the worker), late I/Os,
 * and mean latency from the scheduled time vs service latency.
 *
 *   iof_ratebench ENGINE IOPS uniform|poisson SECONDS WORKDIR|DEVICE [QD]
 *
 * One worker, 4 KiB random reads, 1 s ramp, on a block DEVICE or a 64 MiB
 * test file in WORKDIR (created once; O_DIRECT for libaio, so WORKDIR must
 * be on a filesystem that takes it). Prints one line:
 *   engine arrival target achieved ratio vs_sched cv_sched cv_sent late_pct lat_us svc_us
 *   over20_pct lateness_p50_us lateness_p99_us lateness_p999_us cpu_pct
 * vs_sched: I/Os counted over the I/Os the schedule put in the window (the
 * same schedule, replayed: for Poisson the realised count, not the mean).
 * The lateness of an I/O is its submission time less its scheduled time, from
 * the trace of the measured window's I/Os; over20_pct is the share of them
 * submitted more than 20 us late. cpu_pct is the process's CPU time (user +
 * system) over the test's wall time, ramp included, in % of one core.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/spec.h"
#include "dynamo/run.h"
#include "dynamo/sched.h"
#include "dynamo/scope.h"
#include "dynamo/target.h"

static double cv_of_gaps(const uint64_t *trace, size_t n, size_t which)
{
    double sum = 0, sum2 = 0, mean;

    if (n < 3)
        return 0;
    for (size_t i = 1; i < n; i++) {
        double g = (double)(trace[2 * i + which] - trace[2 * (i - 1) + which]);
        sum += g;
        sum2 += g * g;
    }
    mean = sum / (double)(n - 1);
    return mean > 0 ? sqrt(sum2 / (double)(n - 1) - mean * mean) / mean : 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* The lateness of the traced I/Os scheduled at or after `from`: the share over
 * 20 us and three percentiles (us) into out[0..3]. Sorts a copy. */
static void lateness_of(const uint64_t *trace, size_t n, uint64_t from, double out[4])
{
    uint64_t *l = malloc((n ? n : 1) * sizeof(*l));
    size_t k = 0, over = 0;

    out[0] = out[1] = out[2] = out[3] = 0;
    if (!l)
        return;
    for (size_t i = 0; i < n; i++) {
        if (trace[2 * i] < from)
            continue;
        l[k] = trace[2 * i + 1] > trace[2 * i] ? trace[2 * i + 1] - trace[2 * i] : 0;
        over += l[k] > 20 * IOF_NS_PER_US;
        k++;
    }
    if (k) {
        qsort(l, k, sizeof(*l), cmp_u64);
        out[0] = 100.0 * (double)over / (double)k;
        out[1] = (double)l[k / 2] / 1e3;
        out[2] = (double)l[k * 99 / 100] / 1e3;
        out[3] = (double)l[k * 999 / 1000] / 1e3;
    }
    free(l);
}

int main(int argc, char **argv)
{
    struct iof_line line = {
        .size = 4096, .share = 100, .read_pct = 100, .random_pct = 100, .burst = 1};
    struct iof_spec spec = {.name = "4k random read", .lines = &line, .nlines = 1};
    struct iof_target_cfg tgt = {.path = "ratebench.dat", .size = 64ull << 20};
    struct iof_worker_cfg grp = {
        .count = 1, .targets = &tgt, .ntargets = 1, .pattern = IOF_PATTERN_PSEUDO};
    struct dyn_test_params p = {0};
    struct dyn_scope *scope = NULL;
    struct dyn_test *t = NULL;
    struct iof_diag d = {{0}};
    struct iof_stats all;
    const char *allow[1];
    uint64_t *trace, ios, ntrace, due = 0;
    double iops, secs, achieved, late[4], cpu;
    struct rusage ru0, ru1;
    size_t traced = 0;

    if (argc < 6) {
        fprintf(stderr, "usage: %s ENGINE IOPS uniform|poisson SECONDS WORKDIR [QD]\n", argv[0]);
        return 2;
    }
    snprintf(grp.engine, sizeof(grp.engine), "%s", argv[1]);
    iops = atof(argv[2]);
    grp.rate = (struct iof_rate){IOF_RATE_IOPS, iops,
                                 strcmp(argv[3], "poisson") == 0 ? IOF_ARRIVAL_POISSON
                                                                 : IOF_ARRIVAL_UNIFORM};
    secs = atof(argv[4]);
    grp.queue_depth = argc > 6 ? (uint32_t)atoi(argv[6]) : 32;
    allow[0] = argv[5];
    {
        struct stat st;
        if (stat(argv[5], &st) == 0 && S_ISBLK(st.st_mode)) {
            snprintf(tgt.path, sizeof(tgt.path), "%s", argv[5]);
            tgt.size = 0;
        }
    }
    if (dyn_scope_new(tgt.size ? argv[5] : "/tmp", allow, 1, &scope, &d) ||
        dyn_target_prepare(&tgt, scope, IOF_PATTERN_PSEUDO, NULL, NULL, &d)) {
        fprintf(stderr, "ratebench: %s\n", d.msg);
        return 1;
    }
    /* Trace the measured window's I/Os (and the ramp's: the gaps are the same). */
    ntrace = (uint64_t)(iops * (secs + 1) * 1.1) + 1000;
    if (ntrace > 20000000)
        ntrace = 20000000;
    trace = calloc(2 * ntrace, sizeof(*trace));
    if (!trace)
        return 1;
    p.spec = &spec;
    p.groups = &grp;
    p.ngroups = 1;
    p.ramp_ns = IOF_NS_PER_S;
    p.duration_ns = (uint64_t)(secs * 1e9);
    p.interval_ns = p.duration_ns;
    p.seed = 1;
    p.scope = scope;
    p.trace = trace;
    p.ntrace = ntrace;
    p.start_ns = iof_now_ns() + 20 * IOF_NS_PER_MS;
    getrusage(RUSAGE_SELF, &ru0);
    if (dyn_test_start(&p, &t, &d)) {
        fprintf(stderr, "ratebench: %s\n", d.msg);
        return 1;
    }
    while (!dyn_test_finished(t))
        iof_sleep_until(iof_now_ns() + 20 * IOF_NS_PER_MS);
    if (dyn_test_join(t, &d)) {
        fprintf(stderr, "ratebench: %s\n", d.msg);
        return 1;
    }
    getrusage(RUSAGE_SELF, &ru1);
    cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec -
                   ru0.ru_stime.tv_sec) +
          (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec -
                   ru0.ru_stime.tv_usec) /
              1e6;
    iof_stats_reset(&all);
    iof_stats_merge(&all, dyn_test_totals(t, 0));
    ios = all.rd.ios + all.wr.ios;
    achieved = (double)ios / secs;
    while (traced < ntrace && trace[2 * traced])
        traced++;
    {
        /* The worker's schedule, replayed (run.c seeds it with the test's
         * seed plus the worker's index, 0 here): the I/Os due in the window. */
        struct dyn_sched sc;
        uint64_t ms = p.start_ns + p.ramp_ns, end = ms + p.duration_ns;
        dyn_sched_init(&sc, &grp.rate, p.start_ns, p.seed + 0);
        while (dyn_sched_due(&sc) < end) {
            if (dyn_sched_take(&sc, line.size) >= ms)
                due++;
        }
    }
    lateness_of(trace, traced, p.start_ns + p.ramp_ns, late);
    printf("%s %s %.0f %.1f %.4f %.4f %.3f %.3f %.2f %.1f %.1f %.2f %.1f %.1f %.1f %.1f\n", argv[1],
           argv[3], iops, achieved, achieved / iops, due ? (double)ios / (double)due : 0.0,
           cv_of_gaps(trace, traced, 0), cv_of_gaps(trace, traced, 1),
           ios ? 100.0 * (double)all.rated.late / (double)ios : 0.0,
           ios ? (double)(all.rd.lat.sum_ns + all.wr.lat.sum_ns) / (double)ios / 1e3 : 0.0,
           all.rated.svc.count ? (double)all.rated.svc.sum_ns / (double)all.rated.svc.count / 1e3
                               : 0.0,
           late[0], late[1], late[2], late[3], 100.0 * cpu / (secs + 1));
    dyn_test_free(t);
    dyn_scope_free(scope);
    free(trace);
    return all.rd.errors + all.wr.errors ? 1 : 0;
}
