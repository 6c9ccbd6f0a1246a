/* SPDX-License-Identifier: Apache-2.0 */
/* manager/metrics.h - the figures of one entity over one interval or test,
 * computed from counters and merged histograms (manager/metrics.c). */
#ifndef IOF_MANAGER_METRICS_H
#define IOF_MANAGER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/stats.h"

/* How late a row's rated I/Os were submitted (submission less scheduled
 * time), from their merged histogram: the ALL and NODE rows of a test whose
 * agents report it (the result's lateness, protocol 1.6). */
struct mgr_lateness {
    bool known;           /* else every figure below is unknown */
    uint64_t count;       /* the rated I/Os it covers */
    uint64_t over_20us;   /* of those, more than IOF_RATE_ONTIME_NS late (exact) */
    double over_20us_pct; /* over_20us / count in %; 0 when count is 0 */
    /* Exact mean and maximum, percentiles from the merged buckets; in us,
     * meaningful when count > 0. */
    double avg_us, p50_us, p99_us, p999_us, max_us;
};

/* Derived figures; latencies in ms. Computed from counters and merged
 * histograms only: never an average of averages. */
struct mgr_metrics {
    double seconds;
    double iops, read_iops, write_iops;
    double mibps, read_mibps, write_mibps;
    double avg_ms, avg_read_ms, avg_write_ms;
    double p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, p9999_ms, max_ms;
    bool rates;       /* a window to divide by (seconds > 0); else the rates are unknown */
    bool percentiles; /* the histograms have buckets (else p* are unknown) */
    uint64_t read_ios, write_ios, bytes_read, bytes_written, errors;
    /* Rated workers (workers[].rate): the avg_/p*_ms above run from each
     * I/O's scheduled time; these from its actual submission (service
     * latency), and late_ios were submitted > 1 ms after their time. */
    bool rated; /* the row holds rated I/O (else the three are unknown) */
    double avg_svc_ms, max_svc_ms;
    uint64_t late_ios;
    struct mgr_lateness lateness; /* not known unless set after mgr_metrics_compute */
};

/* Fills m from s measured over `ns` nanoseconds. */
void mgr_metrics_compute(const struct iof_stats *s, uint64_t ns, struct mgr_metrics *m);

/* Fills out (known) from the merged lateness histogram h and its exact
 * count over 20 us. */
void mgr_lateness_compute(const struct iof_hist *h, uint64_t over_20us, struct mgr_lateness *out);

#endif
