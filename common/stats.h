/* common/stats.h - I/O counters of one entity (target, worker, node, cluster)
 * over one interval or one test. Merged by addition; exact. */
#ifndef IOF_COMMON_STATS_H
#define IOF_COMMON_STATS_H

#include "common/hist.h"

struct iof_dirstats {
    uint64_t ios;     /* completed successfully */
    uint64_t bytes;   /* bytes transferred by those */
    uint64_t errors;  /* completed with an error or short transfer */
    struct iof_hist lat; /* submit -> completion latency of successful I/Os */
};

struct iof_stats {
    struct iof_dirstats rd, wr;
    int first_error;       /* 0 or the first I/O error seen (-errno) */
    uint64_t first_error_offset;
};

void iof_stats_reset(struct iof_stats *s);
/* dst += src; keeps dst's first error if it has one. */
void iof_stats_merge(struct iof_stats *dst, const struct iof_stats *src);
/* Read and write latency combined into out (overwritten). */
void iof_stats_lat_all(const struct iof_stats *s, struct iof_hist *out);

#endif
