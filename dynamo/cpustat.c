/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/cpustat.c - each CPU's figures between two samples (Iometer's one
 * PROCESSOR row per CPU), from the per-CPU ticks a platform's sampler keeps
 * (dynamo/os/linux/cpustat.c); a platform without them has none. */
#include "dynamo/cpustat.h"

/* The CPU of id in s from index *hint on (both samples list CPUs in the
 * same order unless one went offline or came back), or NULL. */
static const struct dyn_cpu_ticks *cpu_find(const struct dyn_cpu_sample *s, uint32_t id,
                                            size_t *hint)
{
    for (size_t k = 0; k < s->ncpus; k++) {
        size_t i = (*hint + k) % s->ncpus;
        if (s->cpus[i].id == id) {
            *hint = i + 1;
            return &s->cpus[i];
        }
    }
    return NULL;
}

size_t dyn_cpu_usage_each(const struct dyn_cpu_sample *a, const struct dyn_cpu_sample *b,
                          struct dyn_cpu_one *out, size_t cap)
{
    size_t n = 0, hint = 0;

    if (!a->valid || !b->valid || !a->ncpus || !b->ncpus)
        return 0;
    for (size_t i = 0; i < b->ncpus && n < cap; i++) {
        const struct dyn_cpu_ticks *y = &b->cpus[i], *x = cpu_find(a, y->id, &hint);
        double total;
        if (!x)
            continue; /* came online during the window */
        if (y->total <= x->total || y->user < x->user || y->system < x->system ||
            y->idle < x->idle || y->irq < x->irq || y->softirq < x->softirq)
            return 0; /* went offline and back: its counters are not this window's */
        total = (double)(y->total - x->total);
        out[n] = (struct dyn_cpu_one){
            .id = y->id,
            .busy_pct = 100.0 - 100.0 * (double)(y->idle - x->idle) / total,
            .user_pct = 100.0 * (double)(y->user - x->user) / total,
            .sys_pct = 100.0 * (double)(y->system - x->system) / total,
            .dpc_pct = 100.0 * (double)(y->softirq - x->softirq) / total,
            .irq_pct = 100.0 * (double)(y->irq - x->irq) / total,
        };
        if (out[n].busy_pct < 0)
            out[n].busy_pct = 0;
        n++;
    }
    return n;
}
