/* SPDX-License-Identifier: Apache-2.0 */
/* proto/statsbin.c - the binary stats body: encoder and validating decoder;
 * the layout is in docs/protocol.md ("Binary stats body") and the contracts
 * in statsbin.h. Garbage from the network is the normal case here: every
 * length, count and varint is checked before it is used. */
#include "proto/statsbin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/varint.h"
#include "proto/frame.h"

#define SB_VARINT_MAX 10 /* LEB128 of 64 bits */
/* A histogram's encoding: count, sum (19), min, max, n and a pair per
 * bucket. Its length prefix therefore fits 3 varint bytes. */
#define SB_HIST_MAX (4 * SB_VARINT_MAX + 19 + (size_t)IOF_HIST_BUCKETS * 2 * SB_VARINT_MAX)
#define SB_HLEN_BYTES 3
_Static_assert(PROTO_STATS_MAX_TARGETS <= UINT16_MAX, "a worker's target count fits 16 bits");
_Static_assert(PROTO_STATS_MAX_WORKERS <= UINT32_MAX, "the worker count fits 32 bits");
_Static_assert(SB_HIST_MAX < (1u << 21), "a histogram's length prefix fits 3 varint bytes");

/* ---- writing ------------------------------------------------------------ */

static uint8_t *put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Room a histogram needs at most: its length prefix and its run form, whose
 * non-empty buckets all lie between those of min and max (at most 20 bytes
 * a bucket: alternating runs of one cost 30 bytes per two buckets). */
static size_t hist_room(const struct iof_hist *h)
{
    size_t span = iof_hist_hi(h) - iof_hist_lo(h);
    return SB_HLEN_BYTES + 4 * SB_VARINT_MAX + 19 + span * 2 * SB_VARINT_MAX;
}

static size_t target_room(const struct iof_stats *ts)
{
    return 1 + 2 * (2 * SB_VARINT_MAX) + hist_room(&ts->rd.lat) + hist_room(&ts->wr.lat) +
           5 * SB_VARINT_MAX + SB_VARINT_MAX + 1 + PROTO_CODE_MAX + SB_VARINT_MAX;
}

static bool dir_present(const struct iof_dirstats *d)
{
    return d->ios || d->errors || d->bytes || d->lat.count;
}

/* A histogram's length and run form. */
static uint8_t *hist_put(uint8_t *p, const struct iof_hist *lat)
{
    uint8_t *h = p + SB_HLEN_BYTES;
    long n = iof_hist_encode_runs(lat, h, hist_room(lat) - SB_HLEN_BYTES);

    if (n < 0)
        return NULL; /* not reached: hist_room() bounds it */
    p = put_varint(p, (uint64_t)n);
    memmove(p, h, (size_t)n);
    return p + n;
}

/* bytes, errors, then the histogram's length and histogram (layouts 1, 2)
 * or its summary alone (layout 3). */
static uint8_t *dir_put(uint8_t *p, const struct iof_dirstats *d, bool node_hist)
{
    p = put_varint(p, d->bytes);
    p = put_varint(p, d->errors);
    if (node_hist) {
        struct iof_hist_summary hs = {d->lat.count, d->lat.sum_ns, d->lat.min_ns, d->lat.max_ns};
        return iof_hist_summary_put(p, &hs);
    }
    return hist_put(p, &d->lat);
}

static int enc_fail(struct iof_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int enc_fail(struct iof_diag *diag, const char *fmt, ...)
{
    char msg[sizeof(diag->msg)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return iof_diag_set(diag, -EINVAL, "%s", msg);
}

static uint16_t cpu_hundredths(double v)
{
    /* As the JSON form rounds it: two decimals, 0..100. */
    return !(v > 0) ? 0 : v > 100 ? PROTO_STATSBIN_CPU_MAX : (uint16_t)(int64_t)(v * 100 + 0.5);
}

/* A node rate or count in hundredths, as the JSON form rounds it. */
static uint64_t node_hundredths(double v)
{
    return !(v > 0)                  ? 0
           : v >= PROTO_CPU_NODE_MAX ? PROTO_STATSBIN_NODE_MAX
                                     : (uint64_t)(v * 100 + 0.5);
}

/* Checks what the JSON encoder checks, and sizes the body. */
static int enc_check(const struct proto_stats *st, size_t *room, struct iof_diag *diag)
{
    size_t total = 0, n = PROTO_STATSBIN_HEADER + 2 * st->nworkers;

    if (st->nworkers > PROTO_STATS_MAX_WORKERS)
        return enc_fail(diag, "stats.workers: %zu workers, at most %d", st->nworkers,
                        PROTO_STATS_MAX_WORKERS);
    for (size_t w = 0; w < st->nworkers; w++) {
        const struct proto_worker_stats *ws = &st->workers[w];
        if (ws->ntargets > PROTO_STATS_MAX_TARGETS)
            return enc_fail(diag, "stats.workers[%zu]: %zu targets, at most %d", w, ws->ntargets,
                            PROTO_STATS_MAX_TARGETS);
        total += ws->ntargets;
        if (total > PROTO_STATS_MAX_TOTAL_TARGETS)
            return enc_fail(diag, "stats.workers: more than %d targets in all",
                            PROTO_STATS_MAX_TOTAL_TARGETS);
        for (size_t t = 0; t < ws->ntargets; t++) {
            const struct iof_stats *ts = &ws->targets[t];
            const struct iof_rated *r = &ts->rated;
            if (ts->rd.lat.count != ts->rd.ios)
                return enc_fail(
                    diag, "stats.workers[%zu][%zu].r: %" PRIu64 " latencies for %" PRIu64 " I/Os",
                    w, t, ts->rd.lat.count, ts->rd.ios);
            if (ts->wr.lat.count != ts->wr.ios)
                return enc_fail(
                    diag, "stats.workers[%zu][%zu].w: %" PRIu64 " latencies for %" PRIu64 " I/Os",
                    w, t, ts->wr.lat.count, ts->wr.ios);
            if ((r->svc.count || r->late) && (r->svc.sum_ns > UINT64_MAX || r->late > r->svc.count))
                return enc_fail(diag,
                                "stats.workers[%zu][%zu].rated: inconsistent service latency "
                                "summary",
                                w, t);
            if (ts->first_error > 0)
                return enc_fail(diag,
                                "stats.workers[%zu][%zu].first_error.code: must be a negative "
                                "error code, got %d",
                                w, t, ts->first_error);
            if (ts->first_error) {
                const char *name = iof_errname(ts->first_error);
                if (!proto_code_name_ok(name, strlen(name)))
                    return enc_fail(diag,
                                    "stats.workers[%zu][%zu].first_error.code: must be an error "
                                    "code name like IOF_EBUSY",
                                    w, t);
            }
            n += target_room(ts);
        }
    }
    *room = n;
    return 0;
}

/* Layout 3's node histograms: every target's, merged per direction (new,
 * free() it; NULL when out of memory). */
static struct iof_hist *node_hists(const struct proto_stats *st)
{
    struct iof_hist *h = malloc(2 * sizeof(*h));

    if (!h)
        return NULL;
    iof_hist_reset(&h[0]);
    iof_hist_reset(&h[1]);
    for (size_t w = 0; w < st->nworkers; w++)
        for (size_t t = 0; t < st->workers[w].ntargets; t++) {
            iof_hist_merge(&h[0], &st->workers[w].targets[t].rd.lat);
            iof_hist_merge(&h[1], &st->workers[w].targets[t].wr.lat);
        }
    return h;
}

int proto_statsbin_encode_frame(const struct proto_stats *st, int layout, size_t max_payload,
                                uint8_t **out, size_t *out_len, struct iof_diag *diag)
{
    bool node_hist = layout == PROTO_STATSBIN_LAYOUT_NODE;
    struct iof_hist *node = NULL;
    size_t room = 0, len;
    uint8_t *buf, *p;
    unsigned flags = 0;
    int r;

    *out = NULL;
    *out_len = 0;
    if (layout != PROTO_STATSBIN_LAYOUT_RUNS && !node_hist)
        return enc_fail(diag, "stats.layout: %d cannot be sent (%d or %d)", layout,
                        PROTO_STATSBIN_LAYOUT_RUNS, PROTO_STATSBIN_LAYOUT_NODE);
    r = enc_check(st, &room, diag);
    if (r)
        return r;
    if (st->cpu.valid && st->cpu.node_valid)
        room += PROTO_STATSBIN_NODE_BYTES;
    if (node_hist && st->nworkers) {
        if (!(node = node_hists(st)))
            return iof_diag_set(diag, -ENOMEM, "out of memory");
        room += hist_room(&node[0]) + hist_room(&node[1]);
    }
    buf = malloc(PROTO_FRAME_HEADER_SIZE + room);
    if (!buf) {
        free(node);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    p = buf + PROTO_FRAME_HEADER_SIZE;
    if (st->lost)
        flags |= PROTO_STATSBIN_LOST;
    if (st->cpu.valid)
        flags |= PROTO_STATSBIN_CPU;
    if (st->cpu.valid && st->cpu.node_valid)
        flags |= PROTO_STATSBIN_NODE;
    *p++ = PROTO_STATSBIN_TAG;
    *p++ = (uint8_t)layout;
    p = put_le(p, flags, 2);
    p = put_le(p, st->test, 4);
    p = put_le(p, st->interval, 8);
    p = put_le(p, st->duration_ns, 8);
    p = put_le(p, st->cpu.valid ? cpu_hundredths(st->cpu.busy_pct) : 0, 2);
    p = put_le(p, st->cpu.valid ? cpu_hundredths(st->cpu.user_pct) : 0, 2);
    p = put_le(p, st->cpu.valid ? cpu_hundredths(st->cpu.sys_pct) : 0, 2);
    p = put_le(p, st->cpu.valid ? cpu_hundredths(st->cpu.agent_pct) : 0, 2);
    p = put_le(p, st->nworkers, 4);
    if (flags & PROTO_STATSBIN_NODE) {
        p = put_le(p, cpu_hundredths(st->cpu.dpc_pct), 2);
        p = put_le(p, cpu_hundredths(st->cpu.irq_pct), 2);
        p = put_le(p, node_hundredths(st->cpu.intr_per_s), 8);
        p = put_le(p, node_hundredths(st->cpu.packets_per_s), 8);
        p = put_le(p, node_hundredths(st->cpu.packet_errors), 8);
        p = put_le(p, node_hundredths(st->cpu.retrans_per_s), 8);
    }
    for (size_t w = 0; w < st->nworkers; w++)
        p = put_le(p, st->workers[w].ntargets, 2);
    for (size_t w = 0; w < st->nworkers && p; w++) {
        for (size_t t = 0; t < st->workers[w].ntargets && p; t++) {
            const struct iof_stats *ts = &st->workers[w].targets[t];
            const struct iof_rated *rt = &ts->rated;
            unsigned tf = (dir_present(&ts->rd) ? PROTO_STATSBIN_T_READ : 0) |
                          (dir_present(&ts->wr) ? PROTO_STATSBIN_T_WRITE : 0) |
                          (rt->svc.count || rt->late ? PROTO_STATSBIN_T_RATED : 0) |
                          (ts->verify_errors ? PROTO_STATSBIN_T_VERIFY : 0) |
                          (ts->first_error ? PROTO_STATSBIN_T_ERROR : 0);
            *p++ = (uint8_t)tf;
            if (tf & PROTO_STATSBIN_T_READ)
                p = dir_put(p, &ts->rd, node_hist);
            if (p && (tf & PROTO_STATSBIN_T_WRITE))
                p = dir_put(p, &ts->wr, node_hist);
            if (p && (tf & PROTO_STATSBIN_T_RATED)) {
                p = put_varint(p, rt->svc.count);
                p = put_varint(p, (uint64_t)rt->svc.sum_ns);
                p = put_varint(p, rt->svc.min_ns);
                p = put_varint(p, rt->svc.max_ns);
                p = put_varint(p, rt->late);
            }
            if (p && (tf & PROTO_STATSBIN_T_VERIFY))
                p = put_varint(p, ts->verify_errors);
            if (p && (tf & PROTO_STATSBIN_T_ERROR)) {
                const char *name = iof_errname(ts->first_error);
                size_t nl = strlen(name);
                *p++ = (uint8_t)nl;
                memcpy(p, name, nl);
                p = put_varint(p + nl, ts->first_error_offset);
            }
        }
    }
    if (p && node) {
        p = hist_put(p, &node[0]);
        if (p)
            p = hist_put(p, &node[1]);
    }
    free(node);
    if (!p) {
        free(buf);
        return iof_diag_set(diag, -EINVAL, "stats: a histogram does not encode");
    }
    len = (size_t)(p - buf) - PROTO_FRAME_HEADER_SIZE;
    r = proto_frame_header_encode(buf, len, max_payload, diag);
    if (r) {
        free(buf);
        if (r == IOF_ETOOBIG)
            iof_diag_set(diag, r, "stats message of %zu bytes exceeds the frame limit of %zu", len,
                         max_payload);
        return r;
    }
    *out = buf;
    *out_len = PROTO_FRAME_HEADER_SIZE + len;
    return 0;
}

/* ---- reading ------------------------------------------------------------ */

struct rd {
    const uint8_t *p, *end;
    bool runs; /* layouts 2 and 3: histograms in the run form, else the sparse form */
    bool node; /* layout 3: summaries per target, a histogram per direction at the end */
    struct iof_diag *diag;
    size_t w, t;    /* the target record being read, when in_target */
    bool in_target; /* else the header or the node histograms */
    char path[64];  /* rpath()'s */
    /* Layout 3: the targets' latency summaries added up, per direction. */
    struct iof_hist_summary node_sum[2];
};

/* "stats.workers[w][t]" of the record being read, or "stats": made only for
 * an error message. */
static const char *rpath(struct rd *r)
{
    if (!r->in_target)
        return "stats";
    snprintf(r->path, sizeof(r->path), "stats.workers[%zu][%zu]", r->w, r->t);
    return r->path;
}

static int bad(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct rd *r, const char *fmt, ...)
{
    char msg[sizeof(r->diag->msg)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return iof_diag_set(r->diag, IOF_EPROTO, "%s", msg);
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* One unsigned LEB128 varint of at most 64 bits in its shortest form (each
 * value has one encoding). `what` names the field for the error. */
static int get_varint_long(struct rd *r, const char *what, uint64_t *out)
{
    uint64_t v = 0;
    unsigned shift = 0;

    for (size_t i = 0; i < SB_VARINT_MAX; i++, shift += 7) {
        uint8_t b;
        if (r->p >= r->end)
            return bad(r, "%s.%s: truncated (the body ends inside it)", rpath(r), what);
        b = *r->p++;
        if (i == SB_VARINT_MAX - 1 && b > 1)
            return bad(r, "%s.%s: varint above 64 bits", rpath(r), what);
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (i > 0 && b == 0)
                return bad(r, "%s.%s: varint not in its shortest form", rpath(r), what);
            *out = v;
            return 0;
        }
    }
    return bad(r, "%s.%s: varint longer than 10 bytes", rpath(r), what);
}

/* get_varint_long inline for what is valid and up to 9 bytes long, with 9
 * bytes left (iof_varint9_get); anything else, and every error, is left to
 * it. */
static inline int get_varint(struct rd *r, const char *what, uint64_t *out)
{
    unsigned n;

    if (r->end - r->p >= 9 && (n = iof_varint9_get(r->p, out))) {
        r->p += n;
        return 0;
    }
    return get_varint_long(r, what, out);
}

static int add_u64(struct rd *r, const char *what, uint64_t *dst, uint64_t v)
{
    if (__builtin_add_overflow(*dst, v, dst))
        return bad(r, "%s.%s: the message's sum overflows 64 bits", rpath(r), what);
    return 0;
}

/* Layout 3, summed only: one direction's bytes, errors and latency summary;
 * the summary is added up in r->node_sum for the node histogram to match. */
static int dir_get_summary(struct rd *r, char key, struct iof_dirstats *d,
                           struct iof_dircounts *one)
{
    struct iof_hist_summary hs, *ns = &r->node_sum[key == 'w'];
    char f_bytes[] = "?.bytes", f_errors[] = "?.errors";
    uint64_t bytes, errors;

    f_bytes[0] = f_errors[0] = key;
    if (get_varint(r, f_bytes, &bytes) || get_varint(r, f_errors, &errors))
        return IOF_EPROTO;
    if (iof_hist_summary_get(&r->p, r->end, &hs))
        return bad(r, "%s.%c.lat: not a valid latency summary", rpath(r), key);
    if (ns->count + hs.count < ns->count || ns->sum_ns + hs.sum_ns < ns->sum_ns)
        return bad(r, "%s.%c.lat: the message's latency count overflows 64 bits", rpath(r), key);
    iof_hist_summary_merge(ns, &hs); /* an empty summary's min and max change nothing */
    if (add_u64(r, key == 'r' ? "r.bytes" : "w.bytes", &d->bytes, bytes) ||
        add_u64(r, key == 'r' ? "r.errors" : "w.errors", &d->errors, errors))
        return IOF_EPROTO;
    if (one)
        *one = iof_dircounts_of(bytes, errors, &hs);
    return 0;
}

/* Layout 3: the node's histogram of one direction, after the last target,
 * added into d; it must hold what the targets' summaries add up to. */
static int node_hist_get(struct rd *r, char key, struct iof_dirstats *d)
{
    const struct iof_hist_summary *ns = &r->node_sum[key == 'w'];
    struct iof_hist_summary hs;
    char f_len[] = "?.lat_len";
    uint64_t hlen;

    f_len[0] = key;
    if (get_varint(r, f_len, &hlen))
        return IOF_EPROTO;
    if (hlen > (uint64_t)(r->end - r->p))
        return bad(r, "stats.%c.lat_len: %" PRIu64 " bytes, only %zu left in the body", key, hlen,
                   (size_t)(r->end - r->p));
    if (hlen > SB_HIST_MAX)
        return bad(r, "stats.%c.lat_len: %" PRIu64 " bytes, at most %zu", key, hlen,
                   (size_t)SB_HIST_MAX);
    if (iof_hist_decode_runs_add_summary(&d->lat, r->p, (size_t)hlen, &hs))
        return bad(r, "stats.%c.lat: not a valid histogram", key);
    r->p += hlen;
    if (hs.count != ns->count || hs.sum_ns != ns->sum_ns || hs.min_ns != ns->min_ns ||
        hs.max_ns != ns->max_ns)
        return bad(r,
                   "stats.%c.lat: the node histogram (%" PRIu64
                   " latencies) is not its targets' summaries added up (%" PRIu64 ")",
                   key, hs.count, ns->count);
    d->ios = d->lat.count;
    return 0;
}

/* One direction of a target ('r' or 'w'): into d, or added into d when
 * summing (one: that target's own counters). */
static int dir_get(struct rd *r, char key, struct iof_dirstats *d, bool sum,
                   struct iof_dircounts *one)
{
    struct iof_hist_summary hs = {0, 0, UINT64_MAX, 0};
    char f_bytes[] = "?.bytes", f_errors[] = "?.errors", f_len[] = "?.lat_len";
    uint64_t bytes, errors, hlen, before = sum ? d->lat.count : 0;
    int e;

    f_bytes[0] = f_errors[0] = f_len[0] = key;
    if (r->node)
        return dir_get_summary(r, key, d, one);
    if (get_varint(r, f_bytes, &bytes) || get_varint(r, f_errors, &errors) ||
        get_varint(r, f_len, &hlen))
        return IOF_EPROTO;
    if (hlen > (uint64_t)(r->end - r->p))
        return bad(r, "%s.%c.lat_len: %" PRIu64 " bytes, only %zu left in the body", rpath(r), key,
                   hlen, (size_t)(r->end - r->p));
    if (hlen > SB_HIST_MAX)
        return bad(r, "%s.%c.lat_len: %" PRIu64 " bytes, at most %zu", rpath(r), key, hlen,
                   (size_t)SB_HIST_MAX);
    if (r->runs)
        e = sum ? iof_hist_decode_runs_add_summary(&d->lat, r->p, (size_t)hlen, &hs)
                : iof_hist_decode_runs(&d->lat, r->p, (size_t)hlen);
    else
        e = sum ? iof_hist_decode_add_summary(&d->lat, r->p, (size_t)hlen, &hs)
                : iof_hist_decode(&d->lat, r->p, (size_t)hlen);
    if (e)
        return bad(r, "%s.%c.lat: not a valid histogram", rpath(r), key);
    r->p += hlen;
    if (!sum) {
        d->ios = d->lat.count;
        d->bytes = bytes;
        d->errors = errors;
        return 0;
    }
    if (d->lat.count < before)
        return bad(r, "%s.%c.lat: the message's latency count overflows 64 bits", rpath(r), key);
    if (add_u64(r, key == 'r' ? "r.bytes" : "w.bytes", &d->bytes, bytes) ||
        add_u64(r, key == 'r' ? "r.errors" : "w.errors", &d->errors, errors))
        return IOF_EPROTO;
    d->ios = d->lat.count;
    if (one)
        *one = iof_dircounts_of(bytes, errors, &hs);
    return 0;
}

static int rated_get(struct rd *r, struct iof_rated *one)
{
    uint64_t n, sum, min, max, late;

    if (get_varint(r, "rated.n", &n) || get_varint(r, "rated.sum", &sum) ||
        get_varint(r, "rated.min", &min) || get_varint(r, "rated.max", &max) ||
        get_varint(r, "rated.late", &late))
        return IOF_EPROTO;
    /* As the JSON form: count x min <= sum <= count x max, late <= count. */
    if (late > n || (n && (min > max || (iof_u128)min * n > sum || (iof_u128)max * n < sum)) ||
        (!n && sum))
        return bad(r, "%s.rated: inconsistent service latency summary", rpath(r));
    iof_rated_reset(one);
    if (n)
        one->svc = (struct iof_hist_summary){n, sum, min, max};
    one->late = late;
    return 0;
}

static int error_get(struct rd *r, int *code, uint64_t *offset)
{
    char name[PROTO_CODE_MAX + 1];
    size_t n;

    if (r->p >= r->end)
        return bad(r, "%s.first_error.code: truncated (the body ends inside it)", rpath(r));
    n = *r->p++;
    if (n > (size_t)(r->end - r->p))
        return bad(r, "%s.first_error.code: %zu bytes, only %zu left in the body", rpath(r), n,
                   (size_t)(r->end - r->p));
    if (!proto_code_name_ok((const char *)r->p, n))
        return bad(r, "%s.first_error.code: must be an error code name like IOF_EBUSY", rpath(r));
    memcpy(name, r->p, n);
    name[n] = '\0';
    r->p += n;
    if (get_varint(r, "first_error.offset", offset))
        return IOF_EPROTO;
    *code = proto_err_from_name(name);
    return 0;
}

/* One target record into ts (or added into the sum; `one` gets its own
 * counters then). */
static int target_get(struct rd *r, struct iof_stats *ts, bool sum, struct iof_counts *one)
{
    struct iof_rated rt;
    uint64_t ve = 0, off = 0;
    unsigned tf;
    int code = 0;

    if (r->p >= r->end)
        return bad(r, "%s: truncated (the body ends before this target)", rpath(r));
    tf = *r->p++;
    if (tf & ~(PROTO_STATSBIN_T_READ | PROTO_STATSBIN_T_WRITE | PROTO_STATSBIN_T_RATED |
               PROTO_STATSBIN_T_VERIFY | PROTO_STATSBIN_T_ERROR))
        return bad(r, "%s.flags: reserved bits set (0x%02x)", rpath(r), tf);
    if (one)
        *one = (struct iof_counts){.rd.lat_min_ns = UINT64_MAX, .wr.lat_min_ns = UINT64_MAX};
    if (!sum) {
        /* Absent: nothing happened in that direction. */
        ts->rd.ios = ts->rd.bytes = ts->rd.errors = 0;
        ts->wr.ios = ts->wr.bytes = ts->wr.errors = 0;
        iof_hist_reset(&ts->rd.lat);
        iof_hist_reset(&ts->wr.lat);
        ts->verify_errors = 0;
        ts->verify_bad_reads = 0; /* only in a result (JSON) */
        ts->verify_overlaid = 0;
        ts->first_error = 0;
        ts->first_error_offset = 0;
    }
    if ((tf & PROTO_STATSBIN_T_READ) && dir_get(r, 'r', &ts->rd, sum, one ? &one->rd : NULL))
        return IOF_EPROTO;
    if ((tf & PROTO_STATSBIN_T_WRITE) && dir_get(r, 'w', &ts->wr, sum, one ? &one->wr : NULL))
        return IOF_EPROTO;
    iof_rated_reset(&rt);
    if ((tf & PROTO_STATSBIN_T_RATED) && rated_get(r, &rt))
        return IOF_EPROTO;
    if ((tf & PROTO_STATSBIN_T_VERIFY) && get_varint(r, "verify_errors", &ve))
        return IOF_EPROTO;
    if ((tf & PROTO_STATSBIN_T_ERROR) && error_get(r, &code, &off))
        return IOF_EPROTO;
    if (sum) {
        iof_rated_merge(&ts->rated, &rt);
        if (add_u64(r, "verify_errors", &ts->verify_errors, ve))
            return IOF_EPROTO;
        if (code && !ts->first_error) { /* the first target's error stands */
            ts->first_error = code;
            ts->first_error_offset = off;
        }
    } else {
        ts->rated = rt;
        ts->verify_errors = ve;
        ts->first_error = code;
        ts->first_error_offset = off;
    }
    if (one) {
        one->rated = rt;
        one->verify_errors = ve;
        one->first_error = code;
        one->first_error_offset = off;
    }
    return 0;
}

/* The last summed decoding's sum, cleared, kept for the next one of this
 * thread: a manager decodes one per agent per interval, and allocating and
 * resetting 39 KiB each time was a tenth of its decoding. */
static _Thread_local struct iof_stats *sb_spare;

static struct iof_stats *sum_new(void)
{
    struct iof_stats *s = sb_spare;

    if (s) {
        sb_spare = NULL;
        return s;
    }
    if ((s = malloc(sizeof(*s))))
        iof_stats_reset(s);
    return s;
}

void proto_statsbin_sum_free(struct iof_stats *sum, bool valid)
{
    if (!sum)
        return;
    if (!valid || sb_spare) {
        free(sum);
        return;
    }
    iof_stats_clear(sum);
    sb_spare = sum;
}

static int oom(struct rd *r)
{
    return iof_diag_set(r->diag, -ENOMEM, "out of memory");
}

int proto_statsbin_decode(const uint8_t *p, size_t len, struct proto_stats *st, bool sum,
                          struct iof_diag *diag)
{
    struct rd r = {.p = p, .end = p + len, .diag = diag};
    const uint8_t *wt;
    unsigned flags, cpu[4];
    size_t nw, total = 0, k = 0, hdr = PROTO_STATSBIN_HEADER;

    memset(st, 0, sizeof(*st));
    if (len < PROTO_STATSBIN_HEADER)
        return bad(&r, "stats: binary body of %zu bytes, its header alone is %d", len,
                   PROTO_STATSBIN_HEADER);
    if (p[0] != PROTO_STATSBIN_TAG)
        return bad(&r, "stats.tag: 0x%02x is not a binary stats body", p[0]);
    if (p[1] < PROTO_STATSBIN_LAYOUT_SPARSE || p[1] > PROTO_STATSBIN_LAYOUT_NODE)
        return bad(&r, "stats.layout: %u is not known to this build (it reads %d to %d)", p[1],
                   PROTO_STATSBIN_LAYOUT_SPARSE, PROTO_STATSBIN_LAYOUT_NODE);
    r.runs = p[1] != PROTO_STATSBIN_LAYOUT_SPARSE;
    r.node = p[1] == PROTO_STATSBIN_LAYOUT_NODE;
    if (r.node && !sum)
        return bad(&r, "stats.layout: 3 has one histogram per node, not per target: it is read "
                       "only summed");
    r.node_sum[0] = r.node_sum[1] = (struct iof_hist_summary){0, 0, UINT64_MAX, 0};
    flags = (unsigned)get_le(p + 2, 2);
    if (flags & ~(PROTO_STATSBIN_LOST | PROTO_STATSBIN_CPU | PROTO_STATSBIN_NODE))
        return bad(&r, "stats.flags: reserved bits set (0x%04x)", flags);
    if ((flags & PROTO_STATSBIN_NODE) && !(flags & PROTO_STATSBIN_CPU))
        return bad(&r, "stats.flags: the node flag without the cpu flag (0x%04x)", flags);
    if (flags & PROTO_STATSBIN_NODE)
        hdr += PROTO_STATSBIN_NODE_BYTES;
    if (len < hdr)
        return bad(&r, "stats: binary body of %zu bytes, its header alone is %zu", len, hdr);
    st->test = (uint32_t)get_le(p + 4, 4);
    st->interval = get_le(p + 8, 8);
    st->duration_ns = get_le(p + 16, 8);
    st->lost = flags & PROTO_STATSBIN_LOST;
    for (unsigned i = 0; i < 4; i++) {
        static const char *const names[] = {"busy", "user", "sys", "agent"};
        cpu[i] = (unsigned)get_le(p + 24 + 2 * i, 2);
        if (cpu[i] > PROTO_STATSBIN_CPU_MAX || (cpu[i] && !(flags & PROTO_STATSBIN_CPU)))
            return bad(&r, "stats.cpu.%s: %u, must be 0..%d (0 when the cpu flag is clear)",
                       names[i], cpu[i], PROTO_STATSBIN_CPU_MAX);
    }
    if (flags & PROTO_STATSBIN_CPU)
        st->cpu = (struct proto_cpu){.valid = true,
                                     .busy_pct = (double)cpu[0] / 100,
                                     .user_pct = (double)cpu[1] / 100,
                                     .sys_pct = (double)cpu[2] / 100,
                                     .agent_pct = (double)cpu[3] / 100};
    if (flags & PROTO_STATSBIN_NODE) {
        static const char *const names[] = {"dpc", "irq"};
        const uint8_t *q = p + PROTO_STATSBIN_HEADER;
        uint64_t v[4];
        for (unsigned i = 0; i < 2; i++) {
            cpu[i] = (unsigned)get_le(q + 2 * i, 2);
            if (cpu[i] > PROTO_STATSBIN_CPU_MAX)
                return bad(&r, "stats.cpu.%s: %u, must be 0..%d", names[i], cpu[i],
                           PROTO_STATSBIN_CPU_MAX);
        }
        for (unsigned i = 0; i < 4; i++) {
            static const char *const vn[] = {"intr_s", "packets_s", "packet_errors", "retrans_s"};
            v[i] = get_le(q + 4 + 8 * i, 8);
            if (v[i] > PROTO_STATSBIN_NODE_READ_MAX)
                return bad(&r, "stats.cpu.%s: %" PRIu64 " hundredths, at most %llu", vn[i], v[i],
                           PROTO_STATSBIN_NODE_READ_MAX);
            if (v[i] > PROTO_STATSBIN_NODE_MAX)
                v[i] = PROTO_STATSBIN_NODE_MAX;
        }
        st->cpu.node_valid = true;
        st->cpu.dpc_pct = (double)cpu[0] / 100;
        st->cpu.irq_pct = (double)cpu[1] / 100;
        st->cpu.intr_per_s = (double)v[0] / 100;
        st->cpu.packets_per_s = (double)v[1] / 100;
        st->cpu.packet_errors = (double)v[2] / 100;
        st->cpu.retrans_per_s = (double)v[3] / 100;
    }
    nw = (size_t)get_le(p + 32, 4);
    if (nw > PROTO_STATS_MAX_WORKERS)
        return bad(&r, "stats.workers: %zu workers, at most %d", nw, PROTO_STATS_MAX_WORKERS);
    if (len - hdr < 2 * nw)
        return bad(&r, "stats.workers: a table of %zu workers does not fit the %zu-byte body", nw,
                   len);
    wt = p + hdr;
    for (size_t w = 0; w < nw; w++) {
        size_t nt = (size_t)get_le(wt + 2 * w, 2);
        if (nt > PROTO_STATS_MAX_TARGETS)
            return bad(&r, "stats.workers[%zu]: %zu targets, at most %d", w, nt,
                       PROTO_STATS_MAX_TARGETS);
        total += nt;
        if (total > PROTO_STATS_MAX_TOTAL_TARGETS)
            return bad(&r, "stats.workers: more than %d targets in all",
                       PROTO_STATS_MAX_TOTAL_TARGETS);
    }
    /* Each target takes at least its flags byte: a count the body cannot
     * hold is refused before anything is allocated for it. */
    if (total > len - hdr - 2 * nw)
        return bad(&r, "stats.workers: %zu targets cannot fit the %zu bytes left", total,
                   len - hdr - 2 * nw);
    r.p = wt + 2 * nw;
    if (!nw) {
        if (r.p != r.end)
            return bad(&r, "stats: %zu bytes after the last target", (size_t)(r.end - r.p));
        return 0;
    }
    st->workers = calloc(nw, sizeof(*st->workers));
    if (!st->workers)
        return oom(&r);
    st->nworkers = nw;
    if (sum) {
        st->sum = sum_new();
        st->counts = calloc(total ? total : 1, sizeof(*st->counts));
        if (!st->sum || !st->counts)
            return oom(&r);
    }
    for (size_t w = 0; w < nw; w++) {
        struct proto_worker_stats *ws = &st->workers[w];
        size_t nt = (size_t)get_le(wt + 2 * w, 2);
        /* Not zeroed: target_get sets every field (39 KiB each). */
        ws->targets = nt && !sum ? malloc(nt * sizeof(*ws->targets)) : NULL;
        if (nt && !sum && !ws->targets)
            return oom(&r);
        ws->ntargets = nt;
        for (size_t t = 0; t < nt; t++, k++) {
            r.w = w;
            r.t = t;
            r.in_target = true;
            if (target_get(&r, sum ? st->sum : &ws->targets[t], sum, sum ? &st->counts[k] : NULL))
                return IOF_EPROTO;
        }
    }
    r.in_target = false;
    if (r.node && (node_hist_get(&r, 'r', &st->sum->rd) || node_hist_get(&r, 'w', &st->sum->wr)))
        return IOF_EPROTO;
    if (r.p != r.end)
        return bad(&r, "stats: %zu bytes after the last target", (size_t)(r.end - r.p));
    st->sum_valid = sum;
    return 0;
}
