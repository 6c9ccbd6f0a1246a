/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/cpustat.h - node CPU utilisation from /proc/stat and the agent's
 * own CPU time, sampled at two moments and compared (as Iometer reports
 * "% CPU Utilization", "% User Time" and "% Privileged Time"), and the
 * node figures of Iometer's other CPU and network columns (% DPC Time, %
 * Interrupt Time, Interrupts per Second, Packets/Second, Packet Errors,
 * Segments Retransmitted/Second) where the platform has them; and each CPU's
 * own figures (Iometer's PROCESSOR rows, one per CPU). */
#ifndef IOF_DYNAMO_CPUSTAT_H
#define IOF_DYNAMO_CPUSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most CPUs whose own figures a sample keeps (PROTO_CPUS_MAX): a node
 * with more has its node-wide figures only. */
#define DYN_CPUS_MAX 1024

/* One CPU's ticks (a cpuN line of /proc/stat): id is N, the kernel's number
 * (offline CPUs have no line, so ids can have gaps: cpu0, cpu2). */
struct dyn_cpu_ticks {
    uint32_t id;
    uint64_t user, system, idle, total, irq, softirq;
};

struct dyn_cpu_sample {
    uint64_t user, system, idle, total; /* clock ticks, all CPUs */
    uint64_t self_ns;                   /* this process's user+system CPU time */
    uint64_t mono_ns;                   /* when it was taken (CLOCK_MONOTONIC) */
    bool valid;
    /* The node counters (node_valid: all of them were read). Linux: irq and
     * softirq ticks (part of system), the interrupt total ("intr" of
     * /proc/stat), packets and errors received and sent by the interfaces
     * other than loopback (/proc/net/dev), Tcp RetransSegs (/proc/net/snmp). */
    uint64_t irq, softirq, intr, packets, packet_errors, retrans;
    bool node_valid;
    /* Each CPU's ticks, in the file's order (ncpus 0: unknown - more than
     * DYN_CPUS_MAX, a line not as Linux writes it, or no such lines). */
    size_t ncpus;
    struct dyn_cpu_ticks cpus[DYN_CPUS_MAX];
};

/* One CPU over a window, in % of its ticks (as dyn_cpu_usage's node-wide
 * figures): Iometer's per-processor % CPU Utilization, % User Time, %
 * Privileged Time, % DPC Time (softirq) and % Interrupt Time (irq). */
struct dyn_cpu_one {
    uint32_t id;
    double busy_pct, user_pct, sys_pct, dpc_pct, irq_pct;
};

/* Percentages of all CPUs of the node over a window. */
struct dyn_cpu_usage {
    double busy_pct;  /* everything but idle and iowait */
    double user_pct;  /* user + nice */
    double sys_pct;   /* system + irq + softirq */
    double agent_pct; /* this process: its CPU time over elapsed time x online CPUs */
    /* node_valid: both samples had the node counters and none went back. */
    bool node_valid;
    double dpc_pct, irq_pct;          /* softirq, irq: shares of the ticks, as busy */
    double intr_per_s, packets_per_s; /* over the elapsed time */
    double packet_errors;             /* in the window */
    double retrans_per_s;             /* TCP segments retransmitted */
};

/* Reads /proc/stat and this process's CPU time; s->valid false on failure
 * (s->node_valid false when the node counters could not all be read). */
void dyn_cpu_sample(struct dyn_cpu_sample *s);

/* /proc/stat's text into s (zeroed by the caller): the "cpu" line (false
 * without one), each "cpuN" line (s->ncpus and s->cpus; none at all when a
 * line is not as Linux writes it, with user .. softirq, or there are more
 * than DYN_CPUS_MAX) and the interrupt total (s->intr). *node: the cpu line
 * has irq and softirq and the intr line is there. */
bool dyn_cpu_parse_stat(const char *text, struct dyn_cpu_sample *s, bool *node);

/* The node counters of /proc/net/dev's text (packets and errors, received
 * and sent, of every interface but lo) and of /proc/net/snmp's (Tcp
 * RetransSegs); false when the text is not what Linux writes. */
bool dyn_cpu_parse_netdev(const char *text, uint64_t *packets, uint64_t *errors);
bool dyn_cpu_parse_snmp(const char *text, uint64_t *retrans);

/* Usage between two samples (zeros when either is invalid or no time passed).
 * busy, user and sys are shares of the /proc/stat ticks that passed; the
 * agent's share is over the elapsed time x online CPUs, as the tick total can
 * cover much less than the elapsed time on a busy VM (stolen, lost ticks). */
void dyn_cpu_usage(const struct dyn_cpu_sample *a, const struct dyn_cpu_sample *b,
                   struct dyn_cpu_usage *out);

/* Each CPU between two samples (dynamo/cpustat.c, every platform): the CPUs
 * of both samples, matched by id, in b's order, as shares of each CPU's own
 * ticks; at most cap in out. 0 (unknown) when either sample has no per-CPU
 * figures, or a CPU's ticks went back or did not move (a CPU taken offline
 * and back during the window: its counters restart). */
size_t dyn_cpu_usage_each(const struct dyn_cpu_sample *a, const struct dyn_cpu_sample *b,
                          struct dyn_cpu_one *out, size_t cap);

#endif
