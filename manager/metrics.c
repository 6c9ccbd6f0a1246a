/* SPDX-License-Identifier: Apache-2.0 */
/* manager/metrics.c - a row's figures (IOPS, MiB/s, mean, percentiles,
 * service latency) from its counters and merged histograms. */
#include "manager/metrics.h"

#include <string.h>

#define MIB (1024.0 * 1024.0)

static double ns_to_ms(double ns)
{
    return ns / 1e6;
}

/* The percentiles of a row, ascending (mgr_metrics' p50_ms..p9999_ms). */
static const double report_qs[] = {0.50, 0.90, 0.95, 0.99, 0.999, 0.9999};

void mgr_metrics_compute(const struct iof_stats *s, uint64_t ns, struct mgr_metrics *m)
{
    const struct iof_hist *both[] = {&s->rd.lat, &s->wr.lat};
    uint64_t pct[sizeof(report_qs) / sizeof(report_qs[0])], n, max;
    double sec = (double)ns / 1e9;

    memset(m, 0, sizeof(*m));
    m->seconds = sec;
    m->read_ios = s->rd.ios;
    m->write_ios = s->wr.ios;
    m->bytes_read = s->rd.bytes;
    m->bytes_written = s->wr.bytes;
    m->errors = s->rd.errors + s->wr.errors;
    m->rates = sec > 0;
    m->percentiles = iof_hist_has_buckets(&s->rd.lat) && iof_hist_has_buckets(&s->wr.lat);
    if (sec > 0) {
        m->read_iops = (double)s->rd.ios / sec;
        m->write_iops = (double)s->wr.ios / sec;
        m->iops = (double)(s->rd.ios + s->wr.ios) / sec;
        m->read_mibps = (double)s->rd.bytes / MIB / sec;
        m->write_mibps = (double)s->wr.bytes / MIB / sec;
        m->mibps = (double)(s->rd.bytes + s->wr.bytes) / MIB / sec;
    }
    /* Both directions' latencies together, as merged (iof_stats_lat_all),
     * without a merged copy. */
    n = s->rd.lat.count + s->wr.lat.count;
    if (n)
        m->avg_ms = ns_to_ms((double)(s->rd.lat.sum_ns + s->wr.lat.sum_ns) / (double)n);
    m->avg_read_ms = ns_to_ms(iof_hist_mean(&s->rd.lat));
    m->avg_write_ms = ns_to_ms(iof_hist_mean(&s->wr.lat));
    iof_hist_percentiles(both, 2, report_qs, sizeof(pct) / sizeof(pct[0]), pct);
    m->p50_ms = ns_to_ms((double)pct[0]);
    m->p90_ms = ns_to_ms((double)pct[1]);
    m->p95_ms = ns_to_ms((double)pct[2]);
    m->p99_ms = ns_to_ms((double)pct[3]);
    m->p999_ms = ns_to_ms((double)pct[4]);
    m->p9999_ms = ns_to_ms((double)pct[5]);
    max = s->rd.lat.count ? s->rd.lat.max_ns : 0;
    if (s->wr.lat.count && s->wr.lat.max_ns > max)
        max = s->wr.lat.max_ns;
    m->max_ms = ns_to_ms((double)max);
    m->rated = s->rated.svc.count > 0 || s->rated.late > 0;
    m->late_ios = s->rated.late;
    if (s->rated.svc.count) {
        m->avg_svc_ms = ns_to_ms((double)s->rated.svc.sum_ns / (double)s->rated.svc.count);
        m->max_svc_ms = ns_to_ms((double)s->rated.svc.max_ns);
    }
}

void mgr_lateness_compute(const struct iof_hist *h, uint64_t over_20us, struct mgr_lateness *out)
{
    static const double qs[] = {0.50, 0.99, 0.999};
    const struct iof_hist *one[] = {h};
    uint64_t pct[3] = {0};

    memset(out, 0, sizeof(*out));
    out->known = true;
    out->count = h->count;
    out->over_20us = over_20us;
    if (!h->count)
        return;
    out->over_20us_pct = 100.0 * (double)over_20us / (double)h->count;
    iof_hist_percentiles(one, 1, qs, 3, pct);
    out->avg_us = iof_hist_mean(h) / 1e3;
    out->p50_us = (double)pct[0] / 1e3;
    out->p99_us = (double)pct[1] / 1e3;
    out->p999_us = (double)pct[2] / 1e3;
    out->max_us = (double)h->max_ns / 1e3;
}
