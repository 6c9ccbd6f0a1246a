/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/cpustat.h - node CPU utilisation from /proc/stat and the agent's
 * own CPU time, sampled at two moments and compared (as Iometer reports
 * "% CPU Utilization", "% User Time" and "% Privileged Time"), and the
 * node figures of Iometer's other CPU and network columns (% DPC Time, %
 * Interrupt Time, Interrupts per Second, Packets/Second, Packet Errors,
 * Segments Retransmitted/Second) where the platform has them. */
#ifndef IOF_DYNAMO_CPUSTAT_H
#define IOF_DYNAMO_CPUSTAT_H

#include <stdbool.h>
#include <stdint.h>

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

#endif
