/* SPDX-License-Identifier: Apache-2.0 */
/* common/hist.c - log-linear latency histogram; layout and contracts in hist.h.
 *
 * Wire format (all fields unsigned LEB128, at most 10 bytes each - the sum
 * at most 19, as it is 128 bits - minimal length so that every histogram has
 * exactly one encoding):
 *
 *   count sum min max n  (delta count){n}
 *
 * n is the number of non-empty buckets. The first delta is the bucket index
 * itself, every later one the distance from the previous index, so it is >= 1.
 * An empty histogram is encoded with its reset values: 0 0 UINT64_MAX 0 0.
 */
#include "common/hist.h"

#include <stdbool.h>

#include "common/err.h"
#include "common/varint.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define HIST_VARINT_MAX 10    /* ceil(64 / 7) */
#define HIST_VARINT128_MAX 19 /* ceil(128 / 7) */

char *iof_u128_str(iof_u128 v, char *buf)
{
    char tmp[IOF_U128_DIGITS + 1];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (unsigned)(v % 10));
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return buf;
}

void iof_hist_reset(struct iof_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

void iof_hist_clear(struct iof_hist *h)
{
    memset(&h->buckets[iof_hist_lo(h)], 0, (iof_hist_hi(h) - iof_hist_lo(h)) * sizeof(uint64_t));
    h->count = 0;
    h->sum_ns = 0;
    h->min_ns = UINT64_MAX;
    h->max_ns = 0;
}

/* Buckets below 2*SUB hold one value each. Above, index = shift*SUB + m with
 * m = v >> shift in [SUB, 2*SUB), so shift = idx/SUB - 1 and the bucket spans
 * [m << shift, (m + 1) << shift). The last bucket also collects every value at
 * or above 2^(MAX_BITS+1); its low and width describe its nominal range only.
 * Out-of-range indices return 0. */
uint64_t iof_hist_bucket_low(unsigned idx)
{
    unsigned shift;
    if (idx >= IOF_HIST_BUCKETS)
        return 0;
    if (idx < 2 * IOF_HIST_SUB)
        return idx;
    shift = (idx >> IOF_HIST_SUB_BITS) - 1;
    return (uint64_t)((idx & (IOF_HIST_SUB - 1)) + IOF_HIST_SUB) << shift;
}

uint64_t iof_hist_bucket_width(unsigned idx)
{
    if (idx >= IOF_HIST_BUCKETS)
        return 0;
    if (idx < 2 * IOF_HIST_SUB)
        return 1;
    return (uint64_t)1 << ((idx >> IOF_HIST_SUB_BITS) - 1);
}

/* dst's count, sum, min and max += src's (the buckets are the caller's). */
static inline void hist_summary_add(struct iof_hist *dst, const struct iof_hist *src)
{
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

void iof_hist_merge(struct iof_hist *dst, const struct iof_hist *src)
{
    unsigned i, hi;

    if (src->count == 0)
        return;
    /* Every recorded value lies in [min, max], so only the buckets between
     * theirs can be non-empty (recording, merging and decoding keep this):
     * a few hundred instead of all 2432 for a typical latency spread. */
    hi = iof_hist_index(src->max_ns);
    for (i = iof_hist_index(src->min_ns); i <= hi; i++)
        dst->buckets[i] += src->buckets[i];
    hist_summary_add(dst, src);
}

/* Rank is ceil(q*count) in [1, count], computed without libm. q*count is
 * below 2^64 for q < 1, so the conversion is defined. */
static uint64_t hist_rank(double q, uint64_t count)
{
    double r = q * (double)count;
    uint64_t rank = (uint64_t)r;

    if ((double)rank < r)
        rank++;
    if (rank < 1)
        rank = 1;
    if (rank > count)
        rank = count;
    return rank;
}

/* As iof_hist_percentile of the histograms merged, for ascending qs, in one
 * pass. A histogram adds only the buckets from its min's to its max's, as
 * iof_hist_merge does. NaN is treated as 0. If the buckets hold fewer than
 * count values (a corrupted histogram; decode never produces one) the
 * result is max. */
void iof_hist_percentiles(const struct iof_hist *const *hs, unsigned n, const double *qs,
                          unsigned nq, uint64_t *out)
{
    unsigned lo[IOF_HIST_PCT_MAX_HISTS], hi[IOF_HIST_PCT_MAX_HISTS], used = 0, first = UINT_MAX;
    const struct iof_hist *h[IOF_HIST_PCT_MAX_HISTS];
    uint64_t count = 0, min = UINT64_MAX, max = 0, seen = 0;
    unsigned i, k = 0;

    for (unsigned j = 0; j < n && j < IOF_HIST_PCT_MAX_HISTS; j++) {
        if (!hs[j]->count)
            continue;
        h[used] = hs[j];
        lo[used] = iof_hist_index(hs[j]->min_ns);
        hi[used] = iof_hist_index(hs[j]->max_ns);
        if (lo[used] < first)
            first = lo[used];
        count += hs[j]->count;
        if (hs[j]->min_ns < min)
            min = hs[j]->min_ns;
        if (hs[j]->max_ns > max)
            max = hs[j]->max_ns;
        used++;
    }
    /* Leading quantiles that need no buckets. */
    for (; k < nq; k++) {
        if (count == 0)
            out[k] = 0;
        else if (!(qs[k] > 0.0))
            out[k] = min;
        else if (qs[k] >= 1.0)
            out[k] = max;
        else
            break;
    }
    if (k == nq)
        return;
    /* From min's bucket: none below it holds a value. */
    uint64_t rank = hist_rank(qs[k], count);
    for (i = first; i < IOF_HIST_BUCKETS && k < nq; i++) {
        for (unsigned j = 0; j < used; j++)
            if (i >= lo[j] && i <= hi[j])
                seen += h[j]->buckets[i];
        while (k < nq && seen >= rank) {
            uint64_t mid = iof_hist_bucket_low(i) + iof_hist_bucket_width(i) / 2;
            if (mid < min)
                mid = min;
            if (mid > max)
                mid = max;
            out[k++] = mid;
            if (k < nq && qs[k] >= 1.0) {
                for (; k < nq; k++)
                    out[k] = max;
            } else if (k < nq) {
                rank = hist_rank(qs[k], count);
            }
        }
    }
    for (; k < nq; k++)
        out[k] = max;
}

uint64_t iof_hist_percentile(const struct iof_hist *h, double q)
{
    uint64_t v;

    iof_hist_percentiles(&h, 1, &q, 1, &v);
    return v;
}

void iof_hist_count_above(const struct iof_hist *h, uint64_t v, uint64_t *surely, uint64_t *maybe)
{
    unsigned j = iof_hist_index(v), lo = iof_hist_lo(h), hi = iof_hist_hi(h);
    uint64_t n = 0;

    *surely = *maybe = 0;
    if (!h->count || h->max_ns <= v)
        return;
    if (h->min_ns > v) {
        *surely = *maybe = h->count;
        return;
    }
    /* Bucket j holds v; every later one starts above it, and j itself may
     * hold values above v unless v is its last. */
    for (unsigned i = j + 1 > lo ? j + 1 : lo; i < hi; i++)
        n += h->buckets[i];
    *surely = n;
    if (j >= lo && j < hi &&
        (j == IOF_HIST_BUCKETS - 1 || v + 1 < iof_hist_bucket_low(j) + iof_hist_bucket_width(j)))
        n += h->buckets[j]; /* the last bucket also holds every value past its end */
    *maybe = n;
}

double iof_hist_mean(const struct iof_hist *h)
{
    if (h->count == 0)
        return 0.0;
    return (double)h->sum_ns / (double)h->count;
}

static size_t varint128_len(iof_u128 v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint8_t *varint128_put(uint8_t *p, iof_u128 v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Caller guarantees room for varint_len(v) bytes. Returns the byte after. */
static uint8_t *varint_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

struct hist_reader {
    const uint8_t *p;
    const uint8_t *end;
};

/* Reads one varint. Rejects truncation, more than 10 bytes, values above
 * 64 bits and non-minimal encodings (a final 0x00 after a continuation). */
static int varint_get_long(struct hist_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    unsigned n;

    for (n = 0; n < HIST_VARINT_MAX; n++) {
        uint8_t b;
        if (r->p == r->end)
            return IOF_EPROTO;
        b = *r->p++;
        if (n == HIST_VARINT_MAX - 1 && b > 1)
            return IOF_EPROTO;
        v |= (uint64_t)(b & 0x7f) << (7 * n);
        if (!(b & 0x80)) {
            if (b == 0 && n > 0)
                return IOF_EPROTO;
            *out = v;
            return 0;
        }
    }
    return IOF_EPROTO;
}

/* varint_get_long inline for the one-byte varints (most bucket counts and
 * gaps) anywhere, and those of up to 9 bytes when 9 bytes are left
 * (iof_varint9_get): the manager decodes some 500 varints per agent per
 * interval. Anything else, valid or not, is left to varint_get_long. */
static inline int varint_get(struct hist_reader *r, uint64_t *out)
{
    const uint8_t *p = r->p;
    unsigned n;

    if (p != r->end && p[0] < 0x80) {
        *out = p[0];
        r->p = p + 1;
        return 0;
    }
    if (r->end - p >= 9 && (n = iof_varint9_get(p, out))) {
        r->p = p + n;
        return 0;
    }
    return varint_get_long(r, out);
}

/* As varint_get_long, for up to 128 bits. */
static int varint128_get_long(struct hist_reader *r, iof_u128 *out)
{
    iof_u128 v = 0;
    unsigned n;

    for (n = 0; n < HIST_VARINT128_MAX; n++) {
        uint8_t b;
        if (r->p == r->end)
            return IOF_EPROTO;
        b = *r->p++;
        if (n == HIST_VARINT128_MAX - 1 && b > 3) /* 18 * 7 = 126 bits before it */
            return IOF_EPROTO;
        v |= (iof_u128)(b & 0x7f) << (7 * n);
        if (!(b & 0x80)) {
            if (b == 0 && n > 0)
                return IOF_EPROTO;
            *out = v;
            return 0;
        }
    }
    return IOF_EPROTO;
}

/* varint128_get_long with the values of up to 9 bytes (below 2^63: a sum of
 * latencies short of 292 years) read in 64-bit arithmetic; longer ones, and
 * anything not valid, are left to varint128_get_long. */
static inline int varint128_get(struct hist_reader *r, iof_u128 *out)
{
    const uint8_t *p = r->p;
    uint64_t v;
    unsigned n;

    if (r->end - p >= 9 && (n = iof_varint9_get(p, &v))) {
        *out = v;
        r->p = p + n;
        return 0;
    }
    return varint128_get_long(r, out);
}

/* The bytes of the count, sum, min and max both forms start with. */
static size_t hist_summary_len(const struct iof_hist *h)
{
    return varint_len(h->count) + varint128_len(h->sum_ns) + varint_len(h->min_ns) +
           varint_len(h->max_ns);
}

/* Exact length iof_hist_encode produces for h (so also its upper bound). */
size_t iof_hist_encoded_max(const struct iof_hist *h)
{
    size_t len = hist_summary_len(h), nnz = 0;
    unsigned i, prev = 0, hi = iof_hist_hi(h);

    for (i = iof_hist_lo(h); i < hi; i++) {
        if (!h->buckets[i])
            continue;
        len += varint_len(i - prev) + varint_len(h->buckets[i]);
        prev = i;
        nnz++;
    }
    return len + varint_len(nnz);
}

/* Nothing is written when cap is too small. h is encoded as is; an
 * inconsistent h (bucket sum != count) encodes but will not decode. */
long iof_hist_encode(const struct iof_hist *h, uint8_t *buf, size_t cap)
{
    size_t need = iof_hist_encoded_max(h), nnz = 0;
    uint8_t *p = buf;
    unsigned i, prev = 0, lo = iof_hist_lo(h), hi = iof_hist_hi(h);

    if (cap < need)
        return -ENOBUFS;
    for (i = lo; i < hi; i++)
        nnz += h->buckets[i] != 0;

    p = varint_put(p, h->count);
    p = varint128_put(p, h->sum_ns);
    p = varint_put(p, h->min_ns);
    p = varint_put(p, h->max_ns);
    p = varint_put(p, nnz);
    for (i = lo; i < hi; i++) {
        if (!h->buckets[i])
            continue;
        p = varint_put(p, i - prev);
        p = varint_put(p, h->buckets[i]);
        prev = i;
    }
    return (long)(p - buf);
}

/* The end of a decode whose buckets are in h: the summary stored, or
 * merged (add), and given to *one. */
static int hist_finish(struct iof_hist *h, bool add, struct iof_hist_summary *one, uint64_t count,
                       iof_u128 sum, uint64_t min, uint64_t max)
{
    if (one)
        *one = (struct iof_hist_summary){count, sum, min, max};
    if (add) {
        if (count) {
            h->count += count;
            h->sum_ns += sum;
            if (min < h->min_ns)
                h->min_ns = min;
            if (max > h->max_ns)
                h->max_ns = max;
        }
        return 0;
    }
    h->count = count;
    h->sum_ns = sum;
    h->min_ns = min;
    h->max_ns = max;
    return 0;
}

/* Reads a summary (count, sum, min, max) and checks that it holds together:
 * an empty one carries exactly the reset values; every value lies in
 * [min, max], so does the mean. (128-bit products of 64-bit values never
 * overflow.) */
static int summary_read(struct hist_reader *r, struct iof_hist_summary *s)
{
    if (varint_get(r, &s->count) || varint128_get(r, &s->sum_ns) || varint_get(r, &s->min_ns) ||
        varint_get(r, &s->max_ns))
        return IOF_EPROTO;
    if (s->count == 0)
        return s->sum_ns != 0 || s->min_ns != UINT64_MAX || s->max_ns != 0 ? IOF_EPROTO : 0;
    if (s->min_ns > s->max_ns || (iof_u128)s->count * s->min_ns > s->sum_ns ||
        s->sum_ns > (iof_u128)s->count * s->max_ns)
        return IOF_EPROTO;
    return 0;
}

/* Reads the summary both forms start with and the number of entries that
 * follow (at most nmax; none in an empty histogram). */
static int hist_get_summary(struct hist_reader *r, uint64_t nmax, uint64_t *count, iof_u128 *sum,
                            uint64_t *min, uint64_t *max, uint64_t *n)
{
    struct iof_hist_summary s;

    if (summary_read(r, &s) || varint_get(r, n) || *n > nmax || (s.count == 0 && *n != 0))
        return IOF_EPROTO;
    *count = s.count;
    *sum = s.sum_ns;
    *min = s.min_ns;
    *max = s.max_ns;
    return 0;
}

uint8_t *iof_hist_summary_put(uint8_t *p, const struct iof_hist_summary *s)
{
    p = varint_put(p, s->count);
    p = varint128_put(p, s->sum_ns);
    p = varint_put(p, s->min_ns);
    return varint_put(p, s->max_ns);
}

int iof_hist_summary_get(const uint8_t **p, const uint8_t *end, struct iof_hist_summary *s)
{
    struct hist_reader r = {*p, end};

    if (summary_read(&r, s))
        return IOF_EPROTO;
    *p = r.p;
    return 0;
}

/* Beyond the checks listed in hist.h, an empty histogram must carry exactly
 * the reset values, and a non-empty one must have min in its first non-empty
 * bucket and max in its last, as recording and merging guarantee; percentile
 * clamping relies on that. Any violation yields IOF_EPROTO with h reset. */
/* add: merge the decoded histogram into h instead of storing it. */
static int hist_decode(struct iof_hist *h, struct hist_reader *r, bool add,
                       struct iof_hist_summary *one)
{
    uint64_t count, min, max, nnz, total = 0, k;
    iof_u128 sum;
    unsigned idx = 0, first = 0;

    if (hist_get_summary(r, IOF_HIST_BUCKETS, &count, &sum, &min, &max, &nnz))
        return IOF_EPROTO;

    for (k = 0; k < nnz; k++) {
        uint64_t delta, c;
        if (varint_get(r, &delta) || varint_get(r, &c))
            return IOF_EPROTO;
        if (k > 0 && delta == 0)
            return IOF_EPROTO;
        if (delta > IOF_HIST_BUCKETS - 1 - idx)
            return IOF_EPROTO;
        idx += (unsigned)delta;
        if (c == 0 || __builtin_add_overflow(total, c, &total))
            return IOF_EPROTO;
        if (k == 0)
            first = idx;
        if (add)
            h->buckets[idx] += c;
        else
            h->buckets[idx] = c;
    }
    if (total != count || r->p != r->end)
        return IOF_EPROTO;
    if (count != 0 && (iof_hist_index(min) != first || iof_hist_index(max) != idx))
        return IOF_EPROTO;
    return hist_finish(h, add, one, count, sum, min, max);
}

int iof_hist_decode(struct iof_hist *h, const uint8_t *buf, size_t len)
{
    struct hist_reader r = {buf, buf ? buf + len : buf};
    int err;

    iof_hist_reset(h);
    err = hist_decode(h, &r, false, NULL);
    if (err)
        iof_hist_reset(h);
    return err;
}

int iof_hist_decode_add(struct iof_hist *dst, const uint8_t *buf, size_t len)
{
    struct hist_reader r = {buf, buf ? buf + len : buf};
    return hist_decode(dst, &r, true, NULL);
}

int iof_hist_decode_add_summary(struct iof_hist *dst, const uint8_t *buf, size_t len,
                                struct iof_hist_summary *one)
{
    struct hist_reader r = {buf, buf ? buf + len : buf};
    return hist_decode(dst, &r, true, one);
}

/* ---- run form ------------------------------------------------------------
 * As the sparse form, with the buckets as runs of consecutive non-empty ones:
 *
 *   count sum min max r  (gap len c_1 .. c_len){r}
 *
 * The first gap is the first run's first index; every later one the number
 * of empty buckets between two runs (>= 1: runs are maximal, so a histogram
 * has one encoding); len >= 1, every count >= 1. A bucket next to the last
 * costs its count alone, where the sparse form also spends a delta: about
 * half the bytes for a latency spread of a few hundred buckets. Only the
 * buckets from min's to max's are scanned (recording, merging and decoding
 * keep every other one empty). */

/* The bytes of h's runs (gaps, lengths, counts), and their number. */
static size_t hist_runs_len(const struct iof_hist *h, size_t *nruns)
{
    size_t len = 0, n = 0;
    unsigned i, hi = iof_hist_hi(h), pos = 0;

    for (i = iof_hist_lo(h); i < hi; i++) {
        unsigned start;
        if (!h->buckets[i])
            continue;
        start = i;
        while (i < hi && h->buckets[i])
            len += varint_len(h->buckets[i++]);
        len += varint_len(start - pos) + varint_len(i - start);
        pos = i;
        n++;
    }
    *nruns = n;
    return len;
}

size_t iof_hist_runs_encoded_len(const struct iof_hist *h)
{
    size_t nruns, len = hist_runs_len(h, &nruns);
    return hist_summary_len(h) + varint_len(nruns) + len;
}

long iof_hist_encode_runs(const struct iof_hist *h, uint8_t *buf, size_t cap)
{
    size_t nruns, need = hist_runs_len(h, &nruns);
    uint8_t *p = buf;
    unsigned i, hi = iof_hist_hi(h), pos = 0;

    need += hist_summary_len(h) + varint_len(nruns);
    if (cap < need)
        return -ENOBUFS;
    p = varint_put(p, h->count);
    p = varint128_put(p, h->sum_ns);
    p = varint_put(p, h->min_ns);
    p = varint_put(p, h->max_ns);
    p = varint_put(p, nruns);
    for (i = iof_hist_lo(h); i < hi; i++) {
        unsigned end;
        if (!h->buckets[i])
            continue;
        for (end = i; end < hi && h->buckets[end]; end++)
            ;
        p = varint_put(p, i - pos);
        p = varint_put(p, end - i);
        for (; i < end; i++)
            p = varint_put(p, h->buckets[i]);
        pos = end;
    }
    return (long)(p - buf);
}

/* The checks of hist_decode, for the run form. Inlined into each caller so
 * that `add` is a constant there. The counts are added up in 128 bits (at
 * most 2432 of 64 bits cannot wrap), so a total past 2^64 differs from the
 * 64-bit count like any other wrong total; a count of 0 is remembered and
 * refused at the end. */
static inline __attribute__((always_inline)) int
hist_decode_runs(struct iof_hist *h, struct hist_reader *r, bool add, struct iof_hist_summary *one)
{
    uint64_t count, min, max, nruns, k;
    iof_u128 sum, total = 0;
    unsigned pos = 0, first = 0;
    bool zero = false;

    if (hist_get_summary(r, (IOF_HIST_BUCKETS + 1) / 2, &count, &sum, &min, &max, &nruns))
        return IOF_EPROTO;

    for (k = 0; k < nruns; k++) {
        uint64_t gap, len, *b, *bend;
        const uint8_t *p;
        if (varint_get(r, &gap) || varint_get(r, &len))
            return IOF_EPROTO;
        if ((k > 0 && gap == 0) || len == 0)
            return IOF_EPROTO;
        if (gap > IOF_HIST_BUCKETS - pos || len > IOF_HIST_BUCKETS - pos - gap)
            return IOF_EPROTO;
        pos += (unsigned)gap;
        if (k == 0)
            first = pos;
        /* varint_get, with the reader's pointer in a register. */
        p = r->p;
        for (b = &h->buckets[pos], bend = b + len; b != bend; b++) {
            uint64_t c;
            if (p != r->end && p[0] < 0x80) {
                c = *p++;
            } else if (r->end - p >= 2 && p[1] < 0x80 && p[1]) {
                c = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
                p += 2;
            } else {
                r->p = p;
                if (varint_get_long(r, &c))
                    return IOF_EPROTO;
                p = r->p;
            }
            zero |= c == 0;
            total += c;
            if (add)
                *b += c;
            else
                *b = c;
        }
        r->p = p;
        pos += (unsigned)len;
    }
    if (zero || total != count || r->p != r->end)
        return IOF_EPROTO;
    if (count != 0 && (iof_hist_index(min) != first || iof_hist_index(max) != pos - 1))
        return IOF_EPROTO;
    return hist_finish(h, add, one, count, sum, min, max);
}

int iof_hist_decode_runs(struct iof_hist *h, const uint8_t *buf, size_t len)
{
    struct hist_reader r = {buf, buf ? buf + len : buf};
    int err;

    iof_hist_reset(h);
    err = hist_decode_runs(h, &r, false, NULL);
    if (err)
        iof_hist_reset(h);
    return err;
}

int iof_hist_decode_runs_add_summary(struct iof_hist *dst, const uint8_t *buf, size_t len,
                                     struct iof_hist_summary *one)
{
    struct hist_reader r = {buf, buf ? buf + len : buf};
    return hist_decode_runs(dst, &r, true, one);
}

bool iof_hist_has_buckets(const struct iof_hist *h)
{
    uint64_t n = 0;
    if (h->count == 0)
        return true;
    for (unsigned i = iof_hist_lo(h); i < iof_hist_hi(h) && n < h->count; i++)
        n += h->buckets[i];
    return n == h->count;
}

/* Makes sp hold h's buckets [hlo, hhi) as well, in 64 bits when `wide`:
 * copies its counts to a new array when that widens its span or its
 * counts. 0, or -ENOMEM with sp unchanged. */
static int hist_span_fit(struct iof_hist_span *sp, unsigned hlo, unsigned hhi, bool wide)
{
    unsigned lo = hlo, hi = hhi;
    void *c;

    if (sp->n) {
        lo = sp->lo < hlo ? sp->lo : hlo;
        hi = sp->lo + sp->n > hhi ? sp->lo + sp->n : hhi;
        wide |= sp->c64 != NULL;
        if (lo == sp->lo && hi - lo == sp->n && wide == (sp->c64 != NULL))
            return 0;
    }
    if (!(c = calloc(hi - lo, wide ? sizeof(uint64_t) : sizeof(uint32_t))))
        return -ENOMEM;
    if (wide) {
        uint64_t *to = (uint64_t *)c + (sp->lo - lo);
        for (unsigned i = 0; i < sp->n; i++)
            to[i] = sp->c64 ? sp->c64[i] : sp->c32[i];
    } else if (sp->n) {
        memcpy((uint32_t *)c + (sp->lo - lo), sp->c32, sp->n * sizeof(uint32_t));
    }
    free(sp->c32);
    free(sp->c64);
    sp->c32 = wide ? NULL : c;
    sp->c64 = wide ? c : NULL;
    sp->lo = lo;
    sp->n = hi - lo;
    return 0;
}

static void hist_span_summary_add(struct iof_hist_span *sp, const struct iof_hist *h)
{
    struct iof_hist_summary one = {h->count, h->sum_ns, h->min_ns, h->max_ns};

    if (!sp->s.count)
        sp->s = one;
    else
        iof_hist_summary_merge(&sp->s, &one);
}

int iof_hist_span_add(struct iof_hist_span *sp, const struct iof_hist *h)
{
    return iof_hist_span_add_merge(sp, NULL, h);
}

/* The span's counts are cold (one node's, touched once an interval), dst's
 * and h's warm: one pass reads h's buckets once for both. No bucket holds
 * more than its span's count, so while that fits 32 bits every bucket
 * does. */
int iof_hist_span_add_merge(struct iof_hist_span *sp, struct iof_hist *dst,
                            const struct iof_hist *h)
{
    unsigned lo = iof_hist_lo(h), hi = iof_hist_hi(h);
    bool wide = h->count > UINT32_MAX || sp->s.count > UINT32_MAX - h->count;
    const uint64_t *src = h->buckets + lo;
    uint64_t *d = dst ? dst->buckets + lo : NULL;

    if (!h->count)
        return 0;
    if (hist_span_fit(sp, lo, hi, wide)) {
        if (dst)
            iof_hist_merge(dst, h);
        return -ENOMEM;
    }
    if (sp->c64 && d) {
        uint64_t *restrict c = sp->c64 + (lo - sp->lo), *restrict dd = d;
        for (unsigned i = 0; i < hi - lo; i++) {
            c[i] += src[i];
            dd[i] += src[i];
        }
    } else if (sp->c64) {
        uint64_t *restrict c = sp->c64 + (lo - sp->lo);
        for (unsigned i = 0; i < hi - lo; i++)
            c[i] += src[i];
    } else if (d) {
        uint32_t *c = sp->c32 + (lo - sp->lo);
        for (unsigned i = 0; i < hi - lo; i++) {
            c[i] += (uint32_t)src[i];
            d[i] += src[i];
        }
    } else {
        uint32_t *c = sp->c32 + (lo - sp->lo);
        for (unsigned i = 0; i < hi - lo; i++)
            c[i] += (uint32_t)src[i];
    }
    if (dst)
        hist_summary_add(dst, h);
    hist_span_summary_add(sp, h);
    return 0;
}

void iof_hist_span_get(const struct iof_hist_span *sp, struct iof_hist *h)
{
    if (!sp->s.count)
        return;
    for (unsigned i = 0; i < sp->n; i++)
        h->buckets[sp->lo + i] = sp->c64 ? sp->c64[i] : sp->c32[i];
    h->count = sp->s.count;
    h->sum_ns = sp->s.sum_ns;
    h->min_ns = sp->s.min_ns;
    h->max_ns = sp->s.max_ns;
}

void iof_hist_span_free(struct iof_hist_span *sp)
{
    free(sp->c32);
    free(sp->c64);
    memset(sp, 0, sizeof(*sp));
}
