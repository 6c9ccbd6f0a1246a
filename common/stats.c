/* SPDX-License-Identifier: Apache-2.0 */
/* common/stats.c - I/O counters of one entity, merged by addition. */
#include "common/stats.h"

#include <stdint.h>

static void dirstats_reset(struct iof_dirstats *d, bool whole)
{
    d->ios = 0;
    d->bytes = 0;
    d->errors = 0;
    if (whole)
        iof_hist_reset(&d->lat);
    else
        iof_hist_clear(&d->lat);
}

static void dirstats_merge_counts(struct iof_dirstats *dst, const struct iof_dirstats *src)
{
    dst->ios += src->ios;
    dst->bytes += src->bytes;
    dst->errors += src->errors;
}

static void stats_reset(struct iof_stats *s, bool whole)
{
    iof_rated_reset(&s->rated);
    dirstats_reset(&s->rd, whole);
    dirstats_reset(&s->wr, whole);
    s->first_error = 0;
    s->first_error_offset = 0;
    s->verify_errors = 0;
    s->verify_bad_reads = 0;
    s->verify_overlaid = 0;
}

void iof_stats_reset(struct iof_stats *s)
{
    stats_reset(s, true);
}

void iof_stats_clear(struct iof_stats *s)
{
    stats_reset(s, false);
}

/* dst += src but for the latency histograms: the caller's. */
static void stats_merge_counts(struct iof_stats *dst, const struct iof_stats *src)
{
    dirstats_merge_counts(&dst->rd, &src->rd);
    dirstats_merge_counts(&dst->wr, &src->wr);
    iof_rated_merge(&dst->rated, &src->rated);
    dst->verify_errors += src->verify_errors;
    dst->verify_bad_reads += src->verify_bad_reads;
    dst->verify_overlaid += src->verify_overlaid;
    if (!dst->first_error && src->first_error) {
        dst->first_error = src->first_error;
        dst->first_error_offset = src->first_error_offset;
    }
}

void iof_stats_merge(struct iof_stats *dst, const struct iof_stats *src)
{
    iof_hist_merge(&dst->rd.lat, &src->rd.lat);
    iof_hist_merge(&dst->wr.lat, &src->wr.lat);
    stats_merge_counts(dst, src);
}

int iof_stats_merge_keep(struct iof_stats *dst, const struct iof_stats *src,
                         struct iof_hist_span keep[2])
{
    int rc = iof_hist_span_add_merge(&keep[0], dst ? &dst->rd.lat : NULL, &src->rd.lat);
    int wc = iof_hist_span_add_merge(&keep[1], dst ? &dst->wr.lat : NULL, &src->wr.lat);

    if (dst)
        stats_merge_counts(dst, src);
    return rc ? rc : wc;
}

void iof_stats_lat_all(const struct iof_stats *s, struct iof_hist *out)
{
    iof_hist_reset(out);
    iof_hist_merge(out, &s->rd.lat);
    iof_hist_merge(out, &s->wr.lat);
}

static void dircounts_reset(struct iof_dircounts *d)
{
    d->ios = d->bytes = d->errors = d->lat_sum_ns = d->lat_max_ns = 0;
    d->lat_min_ns = UINT64_MAX;
}

void iof_counts_reset(struct iof_counts *c)
{
    iof_rated_reset(&c->rated);
    dircounts_reset(&c->rd);
    dircounts_reset(&c->wr);
    c->first_error = 0;
    c->first_error_offset = 0;
    c->verify_errors = 0;
    c->verify_bad_reads = 0;
    c->verify_overlaid = 0;
}

static void dircounts_merge(struct iof_dircounts *dst, const struct iof_dircounts *src)
{
    dst->ios += src->ios;
    dst->bytes += src->bytes;
    dst->errors += src->errors;
    dst->lat_sum_ns += src->lat_sum_ns;
    if (src->lat_min_ns < dst->lat_min_ns)
        dst->lat_min_ns = src->lat_min_ns;
    if (src->lat_max_ns > dst->lat_max_ns)
        dst->lat_max_ns = src->lat_max_ns;
}

void iof_counts_merge(struct iof_counts *dst, const struct iof_counts *src)
{
    dircounts_merge(&dst->rd, &src->rd);
    dircounts_merge(&dst->wr, &src->wr);
    iof_rated_merge(&dst->rated, &src->rated);
    dst->verify_errors += src->verify_errors;
    dst->verify_bad_reads += src->verify_bad_reads;
    dst->verify_overlaid += src->verify_overlaid;
    if (!dst->first_error && src->first_error) {
        dst->first_error = src->first_error;
        dst->first_error_offset = src->first_error_offset;
    }
}

static void dircounts_from(struct iof_dircounts *d, const struct iof_dirstats *s)
{
    d->ios = s->ios;
    d->bytes = s->bytes;
    d->errors = s->errors;
    d->lat_sum_ns = s->lat.sum_ns;
    d->lat_min_ns = s->lat.min_ns;
    d->lat_max_ns = s->lat.max_ns;
}

void iof_counts_from_stats(struct iof_counts *dst, const struct iof_stats *s)
{
    dircounts_from(&dst->rd, &s->rd);
    dircounts_from(&dst->wr, &s->wr);
    dst->rated = s->rated;
    dst->first_error = s->first_error;
    dst->first_error_offset = s->first_error_offset;
    dst->verify_errors = s->verify_errors;
    dst->verify_bad_reads = s->verify_bad_reads;
    dst->verify_overlaid = s->verify_overlaid;
}

static void dircounts_to(const struct iof_dircounts *d, struct iof_dirstats *s)
{
    s->ios = d->ios;
    s->bytes = d->bytes;
    s->errors = d->errors;
    iof_hist_reset(&s->lat);
    s->lat.count = d->ios;
    s->lat.sum_ns = d->lat_sum_ns;
    s->lat.min_ns = d->lat_min_ns;
    s->lat.max_ns = d->lat_max_ns;
}

void iof_counts_to_stats(const struct iof_counts *c, struct iof_stats *s)
{
    dircounts_to(&c->rd, &s->rd);
    dircounts_to(&c->wr, &s->wr);
    s->rated = c->rated;
    s->first_error = c->first_error;
    s->first_error_offset = c->first_error_offset;
    s->verify_errors = c->verify_errors;
    s->verify_bad_reads = c->verify_bad_reads;
    s->verify_overlaid = c->verify_overlaid;
}
