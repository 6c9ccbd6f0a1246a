/* SPDX-License-Identifier: Apache-2.0 */
/* common/stats.h - I/O counters of one entity (target, worker, node, cluster)
 * over one interval or one test. Merged by addition; exact. */
#ifndef IOF_COMMON_STATS_H
#define IOF_COMMON_STATS_H

#include "common/hist.h"

struct iof_dirstats {
    uint64_t ios;        /* completed successfully */
    uint64_t bytes;      /* bytes transferred by those */
    uint64_t errors;     /* completed with an error or short transfer */
    struct iof_hist lat; /* submit -> completion latency of successful I/Os */
};

/* Rated workers only (workers[].rate; zero for others): the service latency
 * of the I/Os counted in rd and wr, from their actual submission to their
 * completion (their latency in rd/wr runs from the time they were scheduled
 * for), and how many were submitted more than IOF_RATE_LATE_NS late. */
struct iof_rated {
    struct iof_hist_summary svc;
    uint64_t late;
};

struct iof_stats {
    struct iof_dirstats rd, wr;
    int first_error; /* 0 or the first I/O error seen (-errno) */
    uint64_t first_error_offset;
    struct iof_rated rated;
    uint64_t verify_errors;    /* distinct blocks that failed verification ("verify") */
    uint64_t verify_bad_reads; /* reads that returned one of them (each read of each) */
    uint64_t verify_overlaid;  /* reads of blocks partly replaced by later writes: the
                                  rest checked by its sector tags only */
};

/* Counters of one entity without the latency buckets: what a manager keeps
 * per target of every agent (a few hundred bytes instead of a histogram of
 * 39 KiB), so a lost agent's per-target figures survive. The latency count
 * of a direction is its ios. */
struct iof_dircounts {
    uint64_t ios, bytes, errors;
    iof_u128 lat_sum_ns; /* exact sum of the latencies */
    uint64_t lat_min_ns; /* UINT64_MAX when ios is 0 */
    uint64_t lat_max_ns; /* 0 when ios is 0 */
};

/* A direction's counters from its bytes, errors and latency summary (whose
 * count is its ios). */
static inline struct iof_dircounts iof_dircounts_of(uint64_t bytes, uint64_t errors,
                                                    const struct iof_hist_summary *hs)
{
    return (struct iof_dircounts){.ios = hs->count,
                                  .bytes = bytes,
                                  .errors = errors,
                                  .lat_sum_ns = hs->sum_ns,
                                  .lat_min_ns = hs->min_ns,
                                  .lat_max_ns = hs->max_ns};
}

struct iof_counts {
    struct iof_dircounts rd, wr;
    int first_error;
    uint64_t first_error_offset;
    struct iof_rated rated;
    uint64_t verify_errors;
    uint64_t verify_bad_reads;
    uint64_t verify_overlaid;
};

static inline void iof_rated_reset(struct iof_rated *r)
{
    iof_hist_summary_reset(&r->svc);
    r->late = 0;
}

static inline void iof_rated_merge(struct iof_rated *dst, const struct iof_rated *src)
{
    iof_hist_summary_merge(&dst->svc, &src->svc);
    dst->late += src->late;
}

void iof_counts_reset(struct iof_counts *c);
/* dst += src; keeps dst's first error if it has one. */
void iof_counts_merge(struct iof_counts *dst, const struct iof_counts *src);
/* The counters of s (its histograms reduced to count, sum, min, max). */
void iof_counts_from_stats(struct iof_counts *dst, const struct iof_stats *s);
/* s (overwritten) with c's counters and histograms that have count, sum, min
 * and max but no buckets: percentiles of such a histogram are unknown
 * (iof_hist_has_buckets() is false). */
void iof_counts_to_stats(const struct iof_counts *c, struct iof_stats *s);

void iof_stats_reset(struct iof_stats *s);
/* As iof_stats_reset, clearing only the histograms' buckets that can hold
 * values (iof_hist_clear): for stats whose histograms keep the recording
 * and merging invariant, at a fraction of the 39 KiB. */
void iof_stats_clear(struct iof_stats *s);
/* dst += src; keeps dst's first error if it has one. */
void iof_stats_merge(struct iof_stats *dst, const struct iof_stats *src);
/* iof_stats_merge(dst, src) unless dst is NULL, and keep[0] and keep[1]
 * += src's read and write latencies (iof_hist_span_add), in one pass over
 * src's buckets: 0, or -ENOMEM when a span could not widen (that span is
 * unchanged; dst is merged whole all the same). dst is not src. */
int iof_stats_merge_keep(struct iof_stats *dst, const struct iof_stats *src,
                         struct iof_hist_span keep[2]);
/* Read and write latency combined into out (overwritten). */
void iof_stats_lat_all(const struct iof_stats *s, struct iof_hist *out);

#endif
