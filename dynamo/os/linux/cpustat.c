/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/linux/cpustat.c - node CPU from /proc/stat and the agent's own CPU time,
 * as percentages between two samples; the node's irq and softirq time, interrupts
 * (/proc/stat), packets (/proc/net/dev) and TCP retransmissions (/proc/net/snmp)
 * over the same window, for Iometer's columns; each CPU's ticks (its cpuN
 * line) for its own PROCESSOR row. */
#include "dynamo/cpustat.h"

#include "common/clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Reads a /proc file into buf (NUL-terminated): whole, or (head) as much of
 * its start as fits. false on failure, or when a whole file does not fit. */
static bool read_proc(const char *path, char *buf, size_t cap, bool head)
{
    FILE *f = fopen(path, "r");
    size_t n;
    bool ok;

    if (!f)
        return false;
    n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    ok = n > 0 && !ferror(f) && (head || feof(f));
    fclose(f);
    return ok;
}

bool dyn_cpu_parse_netdev(const char *text, uint64_t *packets, uint64_t *errors)
{
    const char *line = text;
    unsigned n = 0;

    *packets = *errors = 0;
    /* Two header lines, then "  NAME: rbytes rpackets rerrs rdrop rfifo
     * rframe rcompressed rmulticast tbytes tpackets terrs ...". */
    for (; *line; n++) {
        const char *nl = strchr(line, '\n'), *colon = strchr(line, ':'), *name = line;
        unsigned long long v[11];

        if (n >= 2) {
            if (!colon || (nl && colon > nl))
                return false;
            while (*name == ' ')
                name++;
            if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                       &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]) != 11)
                return false;
            if (!(colon - name == 2 && !strncmp(name, "lo", 2))) {
                *packets += v[1] + v[9];
                *errors += v[2] + v[10];
            }
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    return n >= 2;
}

bool dyn_cpu_parse_snmp(const char *text, uint64_t *retrans)
{
    const char *head = strstr(text, "\nTcp: "), *vals;

    if (!head && !strncmp(text, "Tcp: ", 5))
        head = text;
    else if (head)
        head++;
    if (!head || !(vals = strchr(head, '\n')) || strncmp(vals + 1, "Tcp: ", 5))
        return false;
    vals++;
    /* "Tcp: NAME NAME ..." then "Tcp: VALUE VALUE ...": the column of RetransSegs. */
    for (const char *h = head + 5, *v = vals + 5;;) {
        size_t hl = strcspn(h, " \n");
        char *end;
        unsigned long long x;
        if (!hl || !*v || *v == '\n')
            return false;
        x = strtoull(v, &end, 10);
        if (end == v)
            return false;
        if (hl == 11 && !strncmp(h, "RetransSegs", 11)) {
            *retrans = x;
            return true;
        }
        h += hl;
        if (*h != ' ')
            return false;
        h++;
        v = end;
        if (*v != ' ')
            return false;
        v++;
    }
}

/* The node counters of /proc/net: the interrupt total comes with /proc/stat. */
static void sample_node(struct dyn_cpu_sample *s)
{
    char buf[65536];

    if (!read_proc("/proc/net/dev", buf, sizeof(buf), false) ||
        !dyn_cpu_parse_netdev(buf, &s->packets, &s->packet_errors))
        return;
    if (!read_proc("/proc/net/snmp", buf, sizeof(buf), false) ||
        !dyn_cpu_parse_snmp(buf, &s->retrans))
        return;
    s->node_valid = true;
}

/* "user nice system idle iowait irq softirq steal" after a cpu line's name:
 * how many were read (at most 8) into v, which is zeroed first. */
static int parse_ticks(const char *p, unsigned long long v[8])
{
    memset(v, 0, 8 * sizeof(v[0]));
    return sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                  &v[5], &v[6], &v[7]);
}

static void ticks_of(const unsigned long long v[8], uint64_t *user, uint64_t *system,
                     uint64_t *idle, uint64_t *total)
{
    *user = v[0] + v[1];
    *system = v[2] + v[5] + v[6];
    *idle = v[3] + v[4];
    *total = *user + *system + *idle + v[7];
}

bool dyn_cpu_parse_stat(const char *text, struct dyn_cpu_sample *s, bool *node)
{
    unsigned long long v[8];
    const char *line, *intr;
    bool each = true;
    int n;

    *node = false;
    /* cpu  user nice system idle iowait irq softirq steal ... */
    if (strncmp(text, "cpu ", 4) || (n = parse_ticks(text + 4, v)) < 4)
        return false;
    ticks_of(v, &s->user, &s->system, &s->idle, &s->total);
    s->irq = v[5];
    s->softirq = v[6];
    /* Then one line per online CPU, "cpuN ..." (up to the steal column: a
     * kernel before 2.6.33 had no more, and then none of them is kept). */
    s->ncpus = 0;
    for (line = strchr(text, '\n'); line && !strncmp(line + 1, "cpu", 3);
         line = strchr(line, '\n')) {
        const char *p = line + 4;
        char *end;
        unsigned long id;
        struct dyn_cpu_ticks *c;
        line++;
        if (*p < '0' || *p > '9')
            break;
        id = strtoul(p, &end, 10);
        if (!each)
            continue;
        if (*end != ' ' || id > UINT32_MAX || s->ncpus == DYN_CPUS_MAX || parse_ticks(end, v) < 8 ||
            (s->ncpus && id <= s->cpus[s->ncpus - 1].id)) {
            each = false;
            continue;
        }
        c = &s->cpus[s->ncpus++];
        c->id = (uint32_t)id;
        ticks_of(v, &c->user, &c->system, &c->idle, &c->total);
        c->irq = v[5];
        c->softirq = v[6];
    }
    if (!each)
        s->ncpus = 0;
    intr = strstr(text, "\nintr ");
    if (n == 8 && intr && sscanf(intr + 6, "%llu", &v[0]) == 1) {
        s->intr = v[0];
        *node = true;
    }
    return true;
}

void dyn_cpu_sample(struct dyn_cpu_sample *s)
{
    struct timespec ts;
    /* /proc/stat's intr line lists every interrupt: on a large machine it
     * is long, so read a generous piece of its start (the cpu line, the
     * per-CPU lines, then the intr line's total come first; a longer file
     * still gives the CPU figures). The agent's loop thread only. */
    static char proc_stat[1 << 20];
    bool node;

    memset(s, 0, sizeof(*s));
    if (!read_proc("/proc/stat", proc_stat, sizeof(proc_stat), true) ||
        !dyn_cpu_parse_stat(proc_stat, s, &node))
        return;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
        s->self_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    s->mono_ns = iof_now_ns();
    s->valid = true;
    if (node)
        sample_node(s);
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
    /* Counters that went back (an interface gone, a namespace moved) make
     * the window's figures unknown rather than wrong. */
    if (a->node_valid && b->node_valid && b->mono_ns > a->mono_ns && b->irq >= a->irq &&
        b->softirq >= a->softirq && b->intr >= a->intr && b->packets >= a->packets &&
        b->packet_errors >= a->packet_errors && b->retrans >= a->retrans) {
        double s = (double)(b->mono_ns - a->mono_ns) / 1e9;
        out->node_valid = true;
        out->dpc_pct = 100.0 * (double)(b->softirq - a->softirq) / total;
        out->irq_pct = 100.0 * (double)(b->irq - a->irq) / total;
        out->intr_per_s = (double)(b->intr - a->intr) / s;
        out->packets_per_s = (double)(b->packets - a->packets) / s;
        out->packet_errors = (double)(b->packet_errors - a->packet_errors);
        out->retrans_per_s = (double)(b->retrans - a->retrans) / s;
    }
}
