/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/linux/cpustat.c - node CPU from /proc/stat and the agent's own CPU time,
 * as percentages between two samples. */
#include "dynamo/cpustat.h"

#include "common/clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void dyn_cpu_sample(struct dyn_cpu_sample *s)
{
    unsigned long long v[8] = {0};
    struct timespec ts;
    FILE *f = fopen("/proc/stat", "r");
    int n;

    memset(s, 0, sizeof(*s));
    if (!f)
        return;
    /* cpu  user nice system idle iowait irq softirq steal ... */
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 4)
        return;
    s->user = v[0] + v[1];
    s->system = v[2] + v[5] + v[6];
    s->idle = v[3] + v[4];
    s->total = s->user + s->system + s->idle + v[7];
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
        s->self_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    s->mono_ns = iof_now_ns();
    s->valid = true;
}

void dyn_cpu_usage(const struct dyn_cpu_sample *a, const struct dyn_cpu_sample *b,
                   struct dyn_cpu_usage *out)
{
    double total;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    memset(out, 0, sizeof(*out));
    if (!a->valid || !b->valid || b->total <= a->total)
        return;
    total = (double)(b->total - a->total);
    out->user_pct = 100.0 * (double)(b->user - a->user) / total;
    out->sys_pct = 100.0 * (double)(b->system - a->system) / total;
    out->busy_pct = 100.0 - 100.0 * (double)(b->idle - a->idle) / total;
    if (ncpu > 0 && b->mono_ns > a->mono_ns && b->self_ns >= a->self_ns) {
        /* The window in CPU-nanoseconds across all CPUs: elapsed x CPUs. */
        double window_ns = (double)(b->mono_ns - a->mono_ns) * (double)ncpu;
        out->agent_pct = 100.0 * (double)(b->self_ns - a->self_ns) / window_ns;
    }
    if (out->busy_pct < 0)
        out->busy_pct = 0;
}
