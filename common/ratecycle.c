/* common/ratecycle.c - rate curve steps and the find_max search (see
 * common/ratecycle.h). */
#include "common/ratecycle.h"

#include <stdio.h>

size_t iof_rate_cycle_steps(const struct iof_rate_cycle *rc)
{
    return 1 + (rc->find_max ? IOF_FIND_MAX_STEPS : rc->npct);
}

double iof_rate_curve_frac(const struct iof_rate_cycle *rc, size_t step)
{
    if (step == 0 || step > rc->npct)
        return 0;
    return rc->pct[step - 1] / 100.0;
}

void iof_knee_init(struct iof_knee *k)
{
    *k = (struct iof_knee){.hi = 1};
}

double iof_knee_feed(struct iof_knee *k, const struct iof_rate_cycle *rc, double frac, double iops,
                     double lat_ns)
{
    bool met = lat_ns <= (double)rc->target_ns;

    if (k->done)
        return 0;
    k->steps++;
    if (frac <= 0) { /* the unthrottled step */
        k->base_iops = iops;
        k->lo = 0;
        k->hi = 1;
        if (met || iops <= 0) {
            k->best_iops = met ? iops : 0;
            k->best_lat_ns = lat_ns;
            k->lo = 1;
            k->done = true;
            return 0;
        }
        k->low_iops = iops;
        k->low_lat_ns = lat_ns;
    } else if (met) {
        k->lo = frac;
        if (iops > k->best_iops) {
            k->best_iops = iops;
            k->best_lat_ns = lat_ns;
        }
    } else {
        k->hi = frac;
        k->low_iops = iops;
        k->low_lat_ns = lat_ns;
    }
    if (k->hi - k->lo <= IOF_FIND_MAX_PRECISION + 1e-9 || k->steps > IOF_FIND_MAX_STEPS) {
        k->done = true;
        return 0;
    }
    return (k->lo + k->hi) / 2;
}

static void knee_num(double v, char *buf, size_t cap)
{
    if (v >= 1e6)
        snprintf(buf, cap, "%.3g M", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, cap, "%.3g k", v / 1e3);
    else
        snprintf(buf, cap, "%.3g", v);
}

static void knee_time(double ns, char *buf, size_t cap)
{
    if (ns >= 1e9)
        snprintf(buf, cap, "%.3g s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, cap, "%.3g ms", ns / 1e6);
    else
        snprintf(buf, cap, "%.3g us", ns / 1e3);
}

void iof_knee_headline(const struct iof_knee *k, const struct iof_rate_cycle *rc, char *buf,
                       size_t cap)
{
    char n[32], t[32], l[32];
    const char *m = iof_knee_metric_name(rc->metric);

    knee_time((double)rc->target_ns, t, sizeof(t));
    if (k->best_iops > 0) {
        knee_num(k->best_iops, n, sizeof(n));
        snprintf(buf, cap, "max %s IOPS at %s <= %s (%s %s; %zu step%s%s)", n, m, t, m,
                 (knee_time(k->best_lat_ns, l, sizeof(l)), l), k->steps, k->steps == 1 ? "" : "s",
                 k->lo >= 1 ? ", unthrottled" : "");
        return;
    }
    knee_num(k->low_iops, n, sizeof(n));
    knee_time(k->low_lat_ns, l, sizeof(l));
    snprintf(buf, cap,
             "no rate met %s <= %s: the lowest step tried, %s IOPS, had %s %s (%zu step%s)", m, t,
             n, m, l, k->steps, k->steps == 1 ? "" : "s");
}
