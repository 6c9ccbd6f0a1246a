/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/cpustat.h - node CPU utilisation from /proc/stat and the agent's
 * own CPU time, sampled at two moments and compared (as Iometer reports
 * "% CPU Utilization", "% User Time" and "% Privileged Time"). */
#ifndef IOF_DYNAMO_CPUSTAT_H
#define IOF_DYNAMO_CPUSTAT_H

#include <stdbool.h>
#include <stdint.h>

struct dyn_cpu_sample {
    uint64_t user, system, idle, total; /* clock ticks, all CPUs */
    uint64_t self_ns;                   /* this process's user+system CPU time */
    uint64_t mono_ns;                   /* when it was taken (CLOCK_MONOTONIC) */
    bool valid;
};

/* Percentages of all CPUs of the node over a window. */
struct dyn_cpu_usage {
    double busy_pct;  /* everything but idle and iowait */
    double user_pct;  /* user + nice */
    double sys_pct;   /* system + irq + softirq */
    double agent_pct; /* this process: its CPU time over elapsed time x online CPUs */
};

/* Reads /proc/stat and this process's CPU time; s->valid false on failure. */
void dyn_cpu_sample(struct dyn_cpu_sample *s);

/* Usage between two samples (zeros when either is invalid or no time passed).
 * busy, user and sys are shares of the /proc/stat ticks that passed; the
 * agent's share is over the elapsed time x online CPUs, as the tick total can
 * cover much less than the elapsed time on a busy VM (stolen, lost ticks). */
void dyn_cpu_usage(const struct dyn_cpu_sample *a, const struct dyn_cpu_sample *b,
                   struct dyn_cpu_usage *out);

#endif
