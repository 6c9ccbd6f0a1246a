/* SPDX-License-Identifier: Apache-2.0 */
/* manager/agent_rates.c - one agent's rates in a rate cycle: its workers'
 * unthrottled IOPS, and the rates a step offers them (manager/run.c decides
 * which step and which agents). */
#include "manager/agent_rates.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/spec.h"

void mgr_agent_rates_base(struct mgr_agent *a, const struct proto_stats *st)
{
    double secs = (double)st->measured_ns / 1e9;

    free(a->base_iops);
    a->nbase = 0;
    a->base_iops = calloc(st->nworkers ? st->nworkers : 1, sizeof(*a->base_iops));
    if (!a->base_iops)
        return;
    a->nbase = st->nworkers;
    for (size_t w = 0; w < st->nworkers; w++) {
        uint64_t ios = 0;
        for (size_t t = 0; t < st->workers[w].ntargets; t++)
            ios += st->workers[w].targets[t].rd.ios + st->workers[w].targets[t].wr.ios;
        a->base_iops[w] = secs > 0 ? (double)ios / secs : 0;
    }
}

void mgr_agent_rates_clear(struct mgr_agent *a, bool new_spec)
{
    if (new_spec)
        a->nbase = 0;
    free(a->rates);
    a->rates = NULL;
    a->nrates = 0;
}

double mgr_agent_rates_set(struct mgr_agent *a, double frac)
{
    double total = 0;

    if (!a->nbase)
        return 0;
    a->rates = calloc(a->nbase, sizeof(*a->rates));
    if (!a->rates)
        return 0;
    a->nrates = a->nbase;
    for (size_t w = 0; w < a->nbase; w++) {
        /* Rounded to 1/1000 IOPS: short on the wire. */
        double r = round(frac * a->base_iops[w] * 1000) / 1000;
        if (r < IOF_RATE_MIN)
            r = IOF_RATE_MIN;
        if (r > IOF_RATE_MAX_IOPS)
            r = IOF_RATE_MAX_IOPS;
        a->rates[w] = r;
        total += r;
    }
    return total;
}
