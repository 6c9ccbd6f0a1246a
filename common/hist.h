/* SPDX-License-Identifier: Apache-2.0 */
/* common/hist.h - log-linear latency histogram (nanoseconds).
 *
 * Layout (HDR-style): values below 2*IOF_HIST_SUB are counted exactly; above,
 * every power-of-two octave is split into IOF_HIST_SUB equal sub-buckets. A
 * bucket's width is at most 1/IOF_HIST_SUB of its lower bound, so reporting the
 * bucket midpoint is within 1/(2*IOF_HIST_SUB) = 0.78 % of any value in it.
 * Values at or above 2^(IOF_HIST_MAX_BITS+1) ns (~2.4 h) land in the last bucket;
 * exact count, sum, min and max are kept beside the buckets, so means and maxima
 * are exact whatever the bucket resolution.
 *
 * Recording is O(1) and allocation-free (hot path). Histograms with the same
 * layout merge by addition, so cluster percentiles are computed from merged
 * buckets, never by averaging percentiles.
 */
#ifndef IOF_COMMON_HIST_H
#define IOF_COMMON_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IOF_HIST_SUB_BITS 6
#define IOF_HIST_SUB (1u << IOF_HIST_SUB_BITS)
#define IOF_HIST_MAX_BITS 42
#define IOF_HIST_BUCKETS ((IOF_HIST_MAX_BITS - IOF_HIST_SUB_BITS + 2) * IOF_HIST_SUB)

/* Sums of latencies: a cluster's merge (10^4 agents x 24 h) passes 2^64 ns,
 * so they are kept in 128 bits and never wrap. Aligned like a uint64_t, so
 * the structs holding one keep their layout without padding. */
typedef unsigned __int128 iof_u128 __attribute__((aligned(8)));

/* v in decimal into buf (at least IOF_U128_DIGITS + 1 bytes); returns buf. */
#define IOF_U128_DIGITS 39
char *iof_u128_str(iof_u128 v, char *buf);

struct iof_hist {
    uint64_t count;  /* values recorded */
    iof_u128 sum_ns; /* exact sum */
    uint64_t min_ns; /* UINT64_MAX when empty */
    uint64_t max_ns; /* 0 when empty */
    uint64_t buckets[IOF_HIST_BUCKETS];
};

/* count, sum, min and max of a histogram, without its buckets. */
struct iof_hist_summary {
    uint64_t count;
    iof_u128 sum_ns;
    uint64_t min_ns, max_ns;
};

/* A summary kept on its own (no buckets): empty, one value, merge (inline:
 * the manager does them per target of every report). */
static inline void iof_hist_summary_reset(struct iof_hist_summary *s)
{
    s->count = 0;
    s->sum_ns = 0;
    s->min_ns = UINT64_MAX;
    s->max_ns = 0;
}

static inline void iof_hist_summary_merge(struct iof_hist_summary *dst,
                                          const struct iof_hist_summary *src)
{
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}
static inline void iof_hist_summary_record(struct iof_hist_summary *s, uint64_t v)
{
    s->count++;
    s->sum_ns += v;
    if (v < s->min_ns)
        s->min_ns = v;
    if (v > s->max_ns)
        s->max_ns = v;
}

/* Whether h's buckets hold its count (false for a histogram reduced to its
 * summary: its percentiles are unknown). An empty h has them. */
bool iof_hist_has_buckets(const struct iof_hist *h);

/* Empties h (count 0, min UINT64_MAX). */
void iof_hist_reset(struct iof_hist *h);
/* Empties a histogram that is already one (reset once, then recorded,
 * merged or decoded into), clearing only the buckets between its min's and
 * its max's, the only ones that can hold values: for a histogram reused per
 * message, instead of iof_hist_reset's 19 KiB memset. */
void iof_hist_clear(struct iof_hist *h);

/* Bucket index of value v (ns); always < IOF_HIST_BUCKETS. */
static inline unsigned iof_hist_index(uint64_t v)
{
    unsigned msb, shift;
    if (v < 2 * IOF_HIST_SUB)
        return (unsigned)v;
    msb = 63u - (unsigned)__builtin_clzll(v);
    if (msb > IOF_HIST_MAX_BITS)
        return IOF_HIST_BUCKETS - 1;
    shift = msb - IOF_HIST_SUB_BITS;
    return shift * IOF_HIST_SUB + (unsigned)(v >> shift);
}

/* The buckets that can hold values, [iof_hist_lo, iof_hist_hi): from min's
 * to max's (recording, merging and decoding keep every other one empty);
 * none when h is empty. Scans that only look at non-empty buckets need no
 * others. */
static inline unsigned iof_hist_lo(const struct iof_hist *h)
{
    return h->count ? iof_hist_index(h->min_ns) : 0;
}

static inline unsigned iof_hist_hi(const struct iof_hist *h)
{
    return h->count ? iof_hist_index(h->max_ns) + 1 : 0;
}

/* Records one value. O(1), no allocation, not thread-safe (one writer). */
static inline void iof_hist_record(struct iof_hist *h, uint64_t v)
{
    h->buckets[iof_hist_index(v)]++;
    h->count++;
    h->sum_ns += v;
    if (v < h->min_ns)
        h->min_ns = v;
    if (v > h->max_ns)
        h->max_ns = v;
}

/* Lowest value mapping to bucket idx, and the bucket's width. */
uint64_t iof_hist_bucket_low(unsigned idx);
uint64_t iof_hist_bucket_width(unsigned idx);

/* dst += src (buckets, count, sum; min/max combined). */
void iof_hist_merge(struct iof_hist *dst, const struct iof_hist *src);

/* Value at quantile q (0..1, e.g. 0.99): the midpoint of the bucket holding the
 * ceil(q*count)-th smallest value, clamped to [min, max]. 0 when empty. */
uint64_t iof_hist_percentile(const struct iof_hist *h, double q);

/* The values at quantiles qs[0..nq) (ascending) of histograms hs[0..n) added
 * up, each what iof_hist_percentile gives for their merge, in one pass over
 * their buckets and without a merged copy (19 KiB to clear). n is at most
 * IOF_HIST_PCT_MAX_HISTS; further histograms are ignored. */
#define IOF_HIST_PCT_MAX_HISTS 4
void iof_hist_percentiles(const struct iof_hist *const *hs, unsigned n, const double *qs,
                          unsigned nq, uint64_t *out);

/* Of h's values, how many are above v: at least *surely (their buckets lie
 * wholly above v), at most *maybe (their buckets reach above it); exact when
 * v is a bucket's last value or outside [min, max]. */
void iof_hist_count_above(const struct iof_hist *h, uint64_t v, uint64_t *surely, uint64_t *maybe);

/* Exact mean in ns (0 when empty). */
double iof_hist_mean(const struct iof_hist *h);

/* A histogram kept for long at the cost of the buckets it spans: its
 * summary and the counts from its first to its last non-empty bucket, 4
 * bytes a bucket in that span (8 once its count passes 2^32 - 1) against
 * 19 KiB for a whole histogram (a node's latencies over a test, kept for
 * each of thousands of nodes and added to every interval: out of the cache
 * by the next one, so its bytes are its cost). Zero-initialised is empty. */
struct iof_hist_span {
    struct iof_hist_summary s; /* meaningful when s.count > 0 */
    unsigned lo, n;            /* buckets [lo, lo + n) */
    /* The counts, in c32 while s.count (so every bucket's) fits 32 bits,
     * in c64 from the interval that takes it past; NULL when n is 0. */
    uint32_t *c32;
    uint64_t *c64;
};
/* span += h, touching only h's buckets (and copying the span when h
 * widens it or its counts): 0, or -ENOMEM with the span unchanged. h's
 * buckets add up to at most its count, as in every histogram recorded,
 * merged or decoded. */
int iof_hist_span_add(struct iof_hist_span *sp, const struct iof_hist *h);
/* As iof_hist_span_add, and dst (unless NULL) += h as iof_hist_merge, in
 * one pass over h's buckets; dst is merged even when the span cannot
 * widen (-ENOMEM). */
int iof_hist_span_add_merge(struct iof_hist_span *sp, struct iof_hist *dst,
                            const struct iof_hist *h);
/* h = the span's histogram; h must come reset (only the span is written). */
void iof_hist_span_get(const struct iof_hist_span *sp, struct iof_hist *h);
/* Empties the span and frees its counts. */
void iof_hist_span_free(struct iof_hist_span *sp);

/* Sparse wire encoding: count, sum, min, max and the non-empty buckets as
 * (index delta, count) pairs, all as LEB128 varints (sum up to 128 bits, the
 * others 64). Decoding also checks count*min <= sum <= count*max.
 * iof_hist_encode writes at most iof_hist_encoded_max(h) bytes into buf and
 * returns the length, or -ENOBUFS when cap is too small.
 * iof_hist_decode parses exactly len bytes into h (overwritten), validating
 * every field (indices in range and increasing, bucket sum == count, no
 * trailing bytes, min <= max); returns 0 or -IOF_EPROTO style negative code. */
/* iof_hist_decode_add: validates like iof_hist_decode and adds the decoded
 * histogram into dst (merge without a temporary). On error dst may hold a
 * part of it: discard dst. */
int iof_hist_decode_add(struct iof_hist *dst, const uint8_t *buf, size_t len);
/* As iof_hist_decode_add, and *one gets the decoded histogram's count, sum,
 * min and max (its buckets are left empty). */
int iof_hist_decode_add_summary(struct iof_hist *dst, const uint8_t *buf, size_t len,
                                struct iof_hist_summary *one);
size_t iof_hist_encoded_max(const struct iof_hist *h);
long iof_hist_encode(const struct iof_hist *h, uint8_t *buf, size_t cap);
int iof_hist_decode(struct iof_hist *h, const uint8_t *buf, size_t len);

/* Run form (the binary stats body's, docs/protocol.md): the same count, sum,
 * min, max, then the runs of consecutive non-empty buckets as (gap, length,
 * counts...), gap >= 1 between runs, so each histogram has one encoding.
 * About half the sparse form's bytes for a typical latency spread. The same
 * contracts as above: iof_hist_runs_encoded_len is the exact length,
 * iof_hist_encode_runs returns it or -ENOBUFS, and the decoders validate as
 * iof_hist_decode does (runs in range, maximal, counts >= 1 adding up). */
size_t iof_hist_runs_encoded_len(const struct iof_hist *h);
long iof_hist_encode_runs(const struct iof_hist *h, uint8_t *buf, size_t cap);
int iof_hist_decode_runs(struct iof_hist *h, const uint8_t *buf, size_t len);
int iof_hist_decode_runs_add_summary(struct iof_hist *dst, const uint8_t *buf, size_t len,
                                     struct iof_hist_summary *one);

/* A summary on its own, as both forms start (count, sum, min, max; an empty
 * one is 0, 0, 2^64-1, 0; at most IOF_HIST_SUMMARY_MAX bytes): put (returns
 * the byte after), and get, which checks it as the decoders do and returns
 * 0 with *p moved past it, or IOF_EPROTO. */
#define IOF_HIST_SUMMARY_MAX (3 * 10 + 19)
uint8_t *iof_hist_summary_put(uint8_t *p, const struct iof_hist_summary *s);
int iof_hist_summary_get(const uint8_t **p, const uint8_t *end, struct iof_hist_summary *s);

#endif
