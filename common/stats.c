#include "common/stats.h"

static void dirstats_reset(struct iof_dirstats *d)
{
    d->ios = 0;
    d->bytes = 0;
    d->errors = 0;
    iof_hist_reset(&d->lat);
}

static void dirstats_merge(struct iof_dirstats *dst, const struct iof_dirstats *src)
{
    dst->ios += src->ios;
    dst->bytes += src->bytes;
    dst->errors += src->errors;
    iof_hist_merge(&dst->lat, &src->lat);
}

void iof_stats_reset(struct iof_stats *s)
{
    dirstats_reset(&s->rd);
    dirstats_reset(&s->wr);
    s->first_error = 0;
    s->first_error_offset = 0;
}

void iof_stats_merge(struct iof_stats *dst, const struct iof_stats *src)
{
    dirstats_merge(&dst->rd, &src->rd);
    dirstats_merge(&dst->wr, &src->wr);
    if (!dst->first_error && src->first_error) {
        dst->first_error = src->first_error;
        dst->first_error_offset = src->first_error_offset;
    }
}

void iof_stats_lat_all(const struct iof_stats *s, struct iof_hist *out)
{
    iof_hist_reset(out);
    iof_hist_merge(out, &s->rd.lat);
    iof_hist_merge(out, &s->wr.lat);
}
