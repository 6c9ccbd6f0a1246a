/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_statsbin.c - proto/statsbin: the binary stats body.
 *
 * Round trips (struct -> binary frame -> decoder -> struct) come back bit
 * for bit; the same stats decoded from JSON and from the binary body are
 * identical, per target and summed as the manager decodes them, and so are
 * the manager's interval and ALL/NODE/WORKER/TARGET rows built from either
 * (manager/aggregate.c); a payload not negotiated is refused as a 1.0 peer
 * would; every malformed field is refused with a one-line diag naming it,
 * and every truncation and byte flip of a valid body fails cleanly. The
 * wire size of the bench's shape (8 workers x 1 target) is printed for both
 * forms. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/clock.h"
#include "common/hist.h"
#include "common/stats.h"
#include "manager/aggregate.h"
#include "manager/sink.h"
#include "proto/frame.h"
#include "proto/msg.h"
#include "proto/plan.h"
#include "proto/statsbin.h"
#include "proto/version.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ----------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* Storage-like latencies: some exact sub-128 ns values, mostly 8 us..16 ms,
 * rare stalls of seconds and a rare one beyond the last bucket. */
static uint64_t random_latency(uint64_t *rng)
{
    uint64_t r = rng_next(rng) % 1000;
    if (r < 20)
        return rng_next(rng) % 128;
    if (r < 990) {
        unsigned octave = 13 + (unsigned)(rng_next(rng) % 11);
        return (UINT64_C(1) << octave) + rng_next(rng) % (UINT64_C(1) << octave);
    }
    if (r < 999)
        return UINT64_C(1000000000) + rng_next(rng) % UINT64_C(30000000000);
    return (UINT64_C(1) << (IOF_HIST_MAX_BITS + 1)) + rng_next(rng) % (UINT64_C(1) << 44);
}

static void fill_dir(struct iof_dirstats *d, uint64_t *rng, uint64_t n, uint64_t bs)
{
    for (uint64_t i = 0; i < n; i++)
        iof_hist_record(&d->lat, random_latency(rng));
    d->ios += n;
    d->bytes += n * bs;
}

static struct iof_stats *stats_new(size_t n)
{
    struct iof_stats *s = calloc(n, sizeof(*s));
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        iof_stats_reset(&s[i]);
    return s;
}

static bool dir_same(const struct iof_dirstats *a, const struct iof_dirstats *b)
{
    return a->ios == b->ios && a->bytes == b->bytes && a->errors == b->errors &&
           a->lat.count == b->lat.count && a->lat.sum_ns == b->lat.sum_ns &&
           a->lat.min_ns == b->lat.min_ns && a->lat.max_ns == b->lat.max_ns &&
           memcmp(a->lat.buckets, b->lat.buckets, sizeof(a->lat.buckets)) == 0;
}

static bool rated_same(const struct iof_rated *a, const struct iof_rated *b)
{
    return a->late == b->late && a->svc.count == b->svc.count && a->svc.sum_ns == b->svc.sum_ns &&
           a->svc.min_ns == b->svc.min_ns && a->svc.max_ns == b->svc.max_ns;
}

static void assert_stats_identical(const struct iof_stats *a, const struct iof_stats *b,
                                   const char *where)
{
    if (dir_same(&a->rd, &b->rd) && dir_same(&a->wr, &b->wr) && rated_same(&a->rated, &b->rated) &&
        a->first_error == b->first_error && a->first_error_offset == b->first_error_offset &&
        a->verify_errors == b->verify_errors)
        return;
    fail_msg("%s differs: rd %" PRIu64 "/%" PRIu64 "/%" PRIu64 " vs %" PRIu64 "/%" PRIu64
             "/%" PRIu64 "; wr ios %" PRIu64 " vs %" PRIu64 "; first_error %d vs %d",
             where, a->rd.ios, a->rd.bytes, a->rd.errors, b->rd.ios, b->rd.bytes, b->rd.errors,
             a->wr.ios, b->wr.ios, a->first_error, b->first_error);
}

static bool dircounts_same(const struct iof_dircounts *a, const struct iof_dircounts *b)
{
    return a->ios == b->ios && a->bytes == b->bytes && a->errors == b->errors &&
           a->lat_sum_ns == b->lat_sum_ns && a->lat_min_ns == b->lat_min_ns &&
           a->lat_max_ns == b->lat_max_ns;
}

static void assert_counts_identical(const struct iof_counts *a, const struct iof_counts *b,
                                    size_t i)
{
    if (!dircounts_same(&a->rd, &b->rd) || !dircounts_same(&a->wr, &b->wr) ||
        !rated_same(&a->rated, &b->rated) || a->first_error != b->first_error ||
        a->first_error_offset != b->first_error_offset || a->verify_errors != b->verify_errors)
        fail_msg("counts[%zu] differ", i);
}

/* Three workers of 1, 3 and 2 targets covering every shape a target takes:
 * mixed I/O with a rated summary, an idle target, verification errors, an
 * error with no latency, first errors, counters past 2^53. */
struct sample {
    struct iof_stats *t;
    struct proto_worker_stats w[3];
};

static void sample_build(struct sample *s, uint64_t seed)
{
    uint64_t rng = seed;
    s->t = stats_new(6);
    fill_dir(&s->t[0].rd, &rng, 5000 + seed % 97, 4096);
    fill_dir(&s->t[0].wr, &rng, 2143, 4096);
    s->t[0].rated.svc = (struct iof_hist_summary){100, 100 * 5000 + 77, 4000, 90000};
    s->t[0].rated.late = 3;
    fill_dir(&s->t[2].rd, &rng, 3000, 65536);
    s->t[2].verify_errors = 12;
    fill_dir(&s->t[3].wr, &rng, 1000, 131072);
    s->t[3].wr.errors = 7;
    s->t[3].first_error = -EIO;
    s->t[3].first_error_offset = (UINT64_C(1) << 53) + 512;
    s->t[4].rd.errors = 3;
    s->t[4].first_error = IOF_ETIMEOUT;
    fill_dir(&s->t[5].rd, &rng, 2000, 1u << 20);
    fill_dir(&s->t[5].wr, &rng, 2000, 1u << 20);
    s->t[5].rd.bytes = UINT64_MAX / 4;
    s->t[5].wr.errors = (UINT64_C(1) << 53) + 2;
    s->w[0] = (struct proto_worker_stats){1, &s->t[0]};
    s->w[1] = (struct proto_worker_stats){3, &s->t[1]};
    s->w[2] = (struct proto_worker_stats){2, &s->t[4]};
}

static void sample_msg(struct proto_msg *m, struct sample *s)
{
    proto_msg_init(m, PROTO_MSG_STATS);
    m->u.stats.test = 4;
    m->u.stats.interval = 9;
    m->u.stats.duration_ns = 0;
    m->u.stats.cpu = (struct proto_cpu){
        .valid = true, .busy_pct = 37.25, .user_pct = 20.5, .sys_pct = 16.754, .agent_pct = 1.5};
    m->u.stats.nworkers = 3;
    m->u.stats.workers = s->w;
}

/* The binary frame of m: *payload points after the frame header. Free the
 * returned frame. */
static uint8_t *bin_frame_flags(const struct proto_msg *m, unsigned flags, const uint8_t **payload,
                                size_t *len)
{
    struct iof_diag d = {{0}};
    uint8_t *frame = NULL;
    size_t flen = 0;
    int rc = proto_msg_encode_frame_flags(m, PROTO_STATS_FRAME_MAX, flags, &frame, &flen, &d);
    if (rc)
        fail_msg("binary encode: %d %s", rc, d.msg);
    assert_true(flen > PROTO_FRAME_HEADER_SIZE);
    /* The frame header announces exactly the body. */
    assert_int_equal(
        ((size_t)frame[4] << 24 | (size_t)frame[5] << 16 | (size_t)frame[6] << 8 | frame[7]),
        flen - PROTO_FRAME_HEADER_SIZE);
    assert_int_equal(frame[PROTO_FRAME_HEADER_SIZE], PROTO_STATSBIN_TAG);
    *payload = frame + PROTO_FRAME_HEADER_SIZE;
    *len = flen - PROTO_FRAME_HEADER_SIZE;
    return frame;
}

/* Layout 2, a histogram per target. */
static uint8_t *bin_frame(const struct proto_msg *m, const uint8_t **payload, size_t *len)
{
    return bin_frame_flags(m, PROTO_ENCODE_STATS_BINARY, payload, len);
}

/* Layout 3, a histogram per node. */
#define ENC_NODE (PROTO_ENCODE_STATS_BINARY | PROTO_ENCODE_STATS_NODE_HIST)

static uint8_t *json_frame(const struct proto_msg *m, const uint8_t **payload, size_t *len)
{
    struct iof_diag d = {{0}};
    uint8_t *frame = NULL;
    size_t flen = 0;
    int rc = proto_msg_encode_frame(m, PROTO_STATS_FRAME_MAX, &frame, &flen, &d);
    if (rc)
        fail_msg("JSON encode: %d %s", rc, d.msg);
    *payload = frame + PROTO_FRAME_HEADER_SIZE;
    *len = flen - PROTO_FRAME_HEADER_SIZE;
    return frame;
}

static void decode_ok(const uint8_t *p, size_t len, unsigned flags, struct proto_msg *out)
{
    struct iof_diag d = {{0}};
    int rc = proto_msg_decode_flags(p, len, out, flags | PROTO_DECODE_STATS_BINARY, &d);
    if (rc)
        fail_msg("decode: %d %s", rc, d.msg);
}

static void assert_workers_identical(const struct proto_stats *a, const struct proto_stats *b)
{
    assert_int_equal(a->nworkers, b->nworkers);
    for (size_t w = 0; w < a->nworkers; w++) {
        assert_int_equal(a->workers[w].ntargets, b->workers[w].ntargets);
        for (size_t t = 0; t < a->workers[w].ntargets; t++) {
            char where[64];
            snprintf(where, sizeof(where), "workers[%zu][%zu]", w, t);
            assert_stats_identical(&a->workers[w].targets[t], &b->workers[w].targets[t], where);
        }
    }
}

static void assert_cpu_identical(const struct proto_cpu *a, const struct proto_cpu *b)
{
    assert_int_equal(a->valid, b->valid);
    assert_memory_equal(&a->busy_pct, &b->busy_pct, sizeof(double));
    assert_memory_equal(&a->user_pct, &b->user_pct, sizeof(double));
    assert_memory_equal(&a->sys_pct, &b->sys_pct, sizeof(double));
    assert_memory_equal(&a->agent_pct, &b->agent_pct, sizeof(double));
}

static size_t put_varint(uint8_t *buf, size_t n, uint64_t v);

/* ---- round trip and equivalence with JSON ------------------------------- */

static void test_round_trip(void **state)
{
    (void)state;
    struct sample s;
    struct proto_msg in, out;
    const uint8_t *p;
    size_t len;
    uint8_t *frame;

    sample_build(&s, 0x5eed);
    sample_msg(&in, &s);
    in.u.stats.lost = true;
    in.u.stats.duration_ns = 123456789;
    in.u.stats.test = UINT32_MAX;
    in.u.stats.interval = UINT64_MAX;
    frame = bin_frame(&in, &p, &len);
    decode_ok(p, len, 0, &out);
    assert_int_equal(out.u.stats.test, UINT32_MAX);
    assert_true(out.u.stats.interval == UINT64_MAX);
    assert_true(out.u.stats.lost);
    assert_true(out.u.stats.duration_ns == 123456789);
    assert_true(out.u.stats.cpu.valid && out.u.stats.cpu.busy_pct == 37.25 &&
                out.u.stats.cpu.sys_pct == 16.75);
    assert_null(out.u.stats.sum);
    assert_workers_identical(&in.u.stats, &out.u.stats);
    proto_msg_clear(&out);
    free(frame);

    /* No CPU, no workers. */
    proto_msg_init(&in, PROTO_MSG_STATS);
    frame = bin_frame(&in, &p, &len);
    assert_int_equal(len, PROTO_STATSBIN_HEADER);
    decode_ok(p, len, PROTO_DECODE_SUM_STATS, &out);
    assert_false(out.u.stats.cpu.valid);
    assert_false(out.u.stats.lost);
    assert_int_equal(out.u.stats.nworkers, 0);
    proto_msg_clear(&out);
    free(frame);
    free(s.t);
}

/* The same stats through JSON and through the binary body decode to the
 * same thing, per target and summed (with each target's counters). */
static void test_same_as_json(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct sample s;
        struct proto_msg in, j, b;
        const uint8_t *jp, *bp;
        size_t jlen, blen;
        uint8_t *jf, *bf;

        sample_build(&s, seed * 7919);
        sample_msg(&in, &s);
        in.u.stats.cpu.valid = seed != 2;
        in.u.stats.lost = seed == 3;
        jf = json_frame(&in, &jp, &jlen);
        bf = bin_frame(&in, &bp, &blen);
        assert_true(blen < jlen);

        decode_ok(jp, jlen, 0, &j);
        decode_ok(bp, blen, 0, &b);
        assert_workers_identical(&j.u.stats, &b.u.stats);
        assert_workers_identical(&in.u.stats, &b.u.stats);
        assert_cpu_identical(&j.u.stats.cpu, &b.u.stats.cpu);
        assert_int_equal(j.u.stats.lost, b.u.stats.lost);
        proto_msg_clear(&j);
        proto_msg_clear(&b);

        decode_ok(jp, jlen, PROTO_DECODE_SUM_STATS, &j);
        decode_ok(bp, blen, PROTO_DECODE_SUM_STATS, &b);
        assert_non_null(j.u.stats.sum);
        assert_non_null(b.u.stats.sum);
        assert_stats_identical(j.u.stats.sum, b.u.stats.sum, "sum");
        for (size_t i = 0; i < 6; i++)
            assert_counts_identical(&j.u.stats.counts[i], &b.u.stats.counts[i], i);
        for (size_t w = 0; w < 3; w++) {
            assert_int_equal(j.u.stats.workers[w].ntargets, b.u.stats.workers[w].ntargets);
            assert_null(b.u.stats.workers[w].targets);
        }
        assert_cpu_identical(&j.u.stats.cpu, &b.u.stats.cpu);
        proto_msg_clear(&j);
        proto_msg_clear(&b);
        free(jf);
        free(bf);
        free(s.t);
    }
}

/* Layout 1 (sparse histograms, the first layout) still decodes, to the same
 * stats as layout 2 (runs, what is sent). */
static void test_layout_sparse(void **state)
{
    (void)state;
    struct sample s;
    struct proto_msg in, a, b;
    const uint8_t *p;
    size_t len, n = 0;
    uint8_t *frame, *old;

    sample_build(&s, 21);
    sample_msg(&in, &s);
    frame = bin_frame(&in, &p, &len);
    assert_int_equal(p[1], PROTO_STATSBIN_LAYOUT_RUNS);
    /* The same body in layout 1, written here field by field. */
    old = malloc(4 * len + 4096);
    assert_non_null(old);
    memcpy(old, p, PROTO_STATSBIN_HEADER + 2 * 3);
    old[1] = PROTO_STATSBIN_LAYOUT_SPARSE;
    n = PROTO_STATSBIN_HEADER + 2 * 3;
    for (size_t i = 0; i < 6; i++) {
        const struct iof_stats *t = &s.t[i];
        const struct iof_dirstats *d[2] = {&t->rd, &t->wr};
        uint8_t flags = (uint8_t)((t->rd.ios || t->rd.errors || t->rd.bytes ? 1 : 0) |
                                  (t->wr.ios || t->wr.errors || t->wr.bytes ? 2 : 0) |
                                  (t->rated.svc.count || t->rated.late ? 4 : 0) |
                                  (t->verify_errors ? 8 : 0) | (t->first_error ? 16 : 0));
        old[n++] = flags;
        for (int k = 0; k < 2; k++) {
            long hl;
            if (!(flags & (1 << k)))
                continue;
            n = put_varint(old, n, d[k]->bytes);
            n = put_varint(old, n, d[k]->errors);
            hl = iof_hist_encode(&d[k]->lat, old + n + 3, 4 * len);
            assert_true(hl > 0);
            {
                uint8_t lb[4];
                size_t ln = put_varint(lb, 0, (uint64_t)hl);
                memmove(old + n + ln, old + n + 3, (size_t)hl);
                memcpy(old + n, lb, ln);
                n += ln + (size_t)hl;
            }
        }
        if (flags & 4) {
            n = put_varint(old, n, t->rated.svc.count);
            n = put_varint(old, n, (uint64_t)t->rated.svc.sum_ns);
            n = put_varint(old, n, t->rated.svc.min_ns);
            n = put_varint(old, n, t->rated.svc.max_ns);
            n = put_varint(old, n, t->rated.late);
        }
        if (flags & 8)
            n = put_varint(old, n, t->verify_errors);
        if (flags & 16) {
            const char *name = iof_errname(t->first_error);
            old[n++] = (uint8_t)strlen(name);
            memcpy(old + n, name, strlen(name));
            n += strlen(name);
            n = put_varint(old, n, t->first_error_offset);
        }
    }
    assert_true(n > len); /* the sparse form is the larger */
    decode_ok(old, n, 0, &a);
    decode_ok(p, len, 0, &b);
    assert_workers_identical(&a.u.stats, &b.u.stats);
    assert_workers_identical(&in.u.stats, &a.u.stats);
    proto_msg_clear(&a);
    proto_msg_clear(&b);
    decode_ok(old, n, PROTO_DECODE_SUM_STATS, &a);
    decode_ok(p, len, PROTO_DECODE_SUM_STATS, &b);
    assert_stats_identical(a.u.stats.sum, b.u.stats.sum, "sum");
    for (size_t i = 0; i < 6; i++)
        assert_counts_identical(&a.u.stats.counts[i], &b.u.stats.counts[i], i);
    proto_msg_clear(&a);
    proto_msg_clear(&b);
    free(old);
    free(frame);
    free(s.t);
}

/* Without PROTO_DECODE_STATS_BINARY (a session that did not negotiate
 * 1.1), a binary body is refused as a 1.0 peer would refuse it. */
static void test_not_negotiated(void **state)
{
    (void)state;
    struct sample s;
    struct proto_msg in, out;
    struct iof_diag d = {{0}};
    const uint8_t *p;
    size_t len;
    uint8_t *frame;

    sample_build(&s, 3);
    sample_msg(&in, &s);
    frame = bin_frame(&in, &p, &len);
    assert_int_equal(proto_msg_decode_flags(p, len, &out, PROTO_DECODE_SUM_STATS, &d), IOF_EPROTO);
    assert_non_null(strstr(d.msg, "binary stats body"));
    assert_non_null(strstr(d.msg, "did not negotiate"));
    proto_msg_clear(&out);
    /* The plain decoder (fuzz_msg, tools) never takes it. */
    assert_int_equal(proto_msg_decode(p, len, &out, &d), IOF_EPROTO);
    proto_msg_clear(&out);
    /* Flag without stats: other messages stay JSON. */
    {
        struct proto_msg bye;
        uint8_t *f = NULL;
        size_t flen = 0;
        proto_msg_init(&bye, PROTO_MSG_BYE);
        bye.u.bye.reason = "done";
        assert_int_equal(proto_msg_encode_frame_flags(&bye, PROTO_FRAME_MAX_DEFAULT,
                                                      PROTO_ENCODE_STATS_BINARY, &f, &flen, &d),
                         0);
        assert_int_equal(f[PROTO_FRAME_HEADER_SIZE], '{');
        free(f);
    }
    free(frame);
    free(s.t);
}

static void test_version_rules(void **state)
{
    (void)state;
    /* This build announces 1.8 (IOF_PROTO_MINOR is not set under ctest). */
    if (getenv("IOF_PROTO_MINOR"))
        skip();
    assert_int_equal(proto_version_minor(), PROTO_VERSION_MINOR);
    assert_true(PROTO_VERSION_MINOR >= PROTO_MINOR_STATS_BINARY);
    assert_false(proto_stats_binary_ok(0));
    assert_true(proto_stats_binary_ok(1));
    assert_true(proto_stats_binary_ok(9));
    assert_string_equal(proto_version_string(), "1.8");
    /* The heartbeat offer (1.5) counts only with a peer of 1.5 or later. */
    assert_false(proto_heartbeat_offer_ok(4));
    assert_true(proto_heartbeat_offer_ok(5));
    /* The result's lateness (1.6) only to a peer of 1.6 or later. */
    assert_false(proto_lateness_ok(5));
    assert_true(proto_lateness_ok(6));
    /* The cpu's node figures (1.6) go only to a peer of 1.6 or later. */
    assert_false(proto_cpu_node_ok(5));
    assert_true(proto_cpu_node_ok(6));
    /* Each CPU's figures (1.7) only to a peer of 1.7 or later. */
    assert_false(proto_cpus_ok(6));
    assert_true(proto_cpus_ok(7));
    /* The sparse heartbeat's limit (1.8) only with a peer of 1.8 or later. */
    assert_false(proto_heartbeat_limit_ok(7));
    assert_true(proto_heartbeat_limit_ok(8));
    {
        struct proto_msg h;
        proto_msg_init_hello(&h, PROTO_ROLE_AGENT, "a");
        assert_int_equal(h.u.hello.minor, PROTO_VERSION_MINOR);
    }
}

/* Layout 3 (a histogram per node, from protocol 1.3) sums to exactly what
 * layout 2 sums to, each target's counters included, in fewer bytes; it is
 * not read per target. */
static void test_layout_node(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct sample s;
        struct proto_msg in, a, b, one;
        struct iof_diag d = {{0}};
        const uint8_t *ap, *bp;
        size_t alen, blen;
        uint8_t *af, *bf;

        sample_build(&s, seed * 104729);
        sample_msg(&in, &s);
        in.u.stats.cpu.valid = seed != 2;
        in.u.stats.lost = seed == 3;
        in.u.stats.interval = seed;
        af = bin_frame(&in, &ap, &alen);
        bf = bin_frame_flags(&in, ENC_NODE, &bp, &blen);
        assert_int_equal(ap[1], PROTO_STATSBIN_LAYOUT_RUNS);
        assert_int_equal(bp[1], PROTO_STATSBIN_LAYOUT_NODE);
        assert_true(blen < alen);
        decode_ok(ap, alen, PROTO_DECODE_SUM_STATS, &a);
        decode_ok(bp, blen, PROTO_DECODE_SUM_STATS, &b);
        assert_non_null(b.u.stats.sum);
        assert_stats_identical(a.u.stats.sum, b.u.stats.sum, "sum");
        for (size_t i = 0; i < 6; i++)
            assert_counts_identical(&a.u.stats.counts[i], &b.u.stats.counts[i], i);
        assert_cpu_identical(&a.u.stats.cpu, &b.u.stats.cpu);
        assert_int_equal(a.u.stats.lost, b.u.stats.lost);
        assert_true(b.u.stats.interval == seed);
        assert_int_equal(b.u.stats.nworkers, 3);
        proto_msg_clear(&a);
        proto_msg_clear(&b);
        assert_int_equal(proto_msg_decode_flags(bp, blen, &one, PROTO_DECODE_STATS_BINARY, &d),
                         IOF_EPROTO);
        assert_non_null(strstr(d.msg, "stats.layout: 3 has one histogram per node, not per "
                                      "target: it is read only summed"));
        proto_msg_clear(&one);
        free(af);
        free(bf);
        free(s.t);
    }
}

/* A hand-made layout 3 body: one worker with one target that read `count`
 * latencies adding up to `sum` (min, max), and the node's read histogram
 * holding the nvals values of vals (its write histogram empty). */
static size_t node_body(uint8_t *buf, uint64_t count, uint64_t sum, uint64_t min, uint64_t max,
                        const uint64_t *vals, size_t nvals)
{
    struct iof_hist *h = malloc(sizeof(*h));
    uint8_t tmp[256];
    size_t n = PROTO_STATSBIN_HEADER;
    long l;

    assert_non_null(h);
    memset(buf, 0, PROTO_STATSBIN_HEADER);
    buf[0] = PROTO_STATSBIN_TAG;
    buf[1] = PROTO_STATSBIN_LAYOUT_NODE;
    buf[32] = 1;  /* one worker */
    buf[n++] = 1; /* with one target */
    buf[n++] = 0;
    buf[n++] = PROTO_STATSBIN_T_READ;
    n = put_varint(buf, n, 4096 * count); /* bytes */
    n = put_varint(buf, n, 0);            /* errors */
    n = put_varint(buf, n, count);
    n = put_varint(buf, n, sum);
    n = put_varint(buf, n, min);
    n = put_varint(buf, n, max);
    for (int dir = 0; dir < 2; dir++) {
        iof_hist_reset(h);
        for (size_t i = 0; !dir && i < nvals; i++)
            iof_hist_record(h, vals[i]);
        l = iof_hist_encode_runs(h, tmp, sizeof(tmp));
        assert_true(l > 0);
        n = put_varint(buf, n, (uint64_t)l);
        memcpy(buf + n, tmp, (size_t)l);
        n += (size_t)l;
    }
    free(h);
    return n;
}

static void expect_bad_node(const uint8_t *p, size_t len, const char *want)
{
    struct proto_msg out;
    struct iof_diag d = {{0}};
    int rc = proto_msg_decode_flags(p, len, &out,
                                    PROTO_DECODE_STATS_BINARY | PROTO_DECODE_SUM_STATS, &d);
    if (rc != IOF_EPROTO || !strstr(d.msg, want) || strchr(d.msg, '\n'))
        fail_msg("expected IOF_EPROTO with \"%s\", got %d \"%s\"", want, rc, d.msg);
    proto_msg_clear(&out);
}

/* Layout 3's node histogram must hold exactly what its targets' summaries
 * add up to, and each summary must hold together. */
static void test_layout_node_refused(void **state)
{
    static const uint64_t two[] = {100, 200}, one[] = {100}, other[] = {100, 201};
    uint8_t buf[512];
    struct proto_msg out;
    size_t n;
    (void)state;

    n = node_body(buf, 2, 300, 100, 200, two, 2);
    decode_ok(buf, n, PROTO_DECODE_SUM_STATS, &out);
    assert_true(out.u.stats.sum->rd.ios == 2 && out.u.stats.sum->rd.lat.count == 2);
    assert_true(out.u.stats.sum->rd.bytes == 8192 && out.u.stats.sum->wr.ios == 0);
    assert_true(out.u.stats.counts[0].rd.ios == 2 && out.u.stats.counts[0].rd.lat_sum_ns == 300 &&
                out.u.stats.counts[0].rd.lat_max_ns == 200);
    assert_true(iof_hist_percentile(&out.u.stats.sum->rd.lat, 1.0) == 200);
    proto_msg_clear(&out);

    n = node_body(buf, 2, 300, 100, 200, one, 1);
    expect_bad_node(buf, n,
                    "stats.r.lat: the node histogram (1 latencies) is not its targets' summaries "
                    "added up (2)");
    n = node_body(buf, 2, 300, 100, 200, other, 2);
    expect_bad_node(buf, n, "stats.r.lat: the node histogram (2 latencies) is not its targets'");
    n = node_body(buf, 0, 5, UINT64_MAX, 0, NULL, 0);
    expect_bad_node(buf, n, "stats.workers[0][0].r.lat: not a valid latency summary");
    n = node_body(buf, 2, 300, 200, 100, two, 2);
    expect_bad_node(buf, n, "stats.workers[0][0].r.lat: not a valid latency summary");
    n = node_body(buf, 2, 300, 100, 200, two, 2);
    expect_bad_node(buf, n - 1, "stats.w.lat");
    expect_bad_node(buf, n - 3, "stats.w.lat_len");
}

/* The summed decoder reuses the last sum it handed out, cleared: every
 * decoding still starts from an empty sum, also after one that failed
 * halfway through a histogram (whose sum is not reused). */
static void test_sum_reused_clean(void **state)
{
    static const uint64_t two[] = {100, 200}, three[] = {100, 200, 5000};
    struct iof_hist *want = malloc(sizeof(*want));
    uint8_t buf[512];
    struct proto_msg out;
    struct iof_diag d = {{0}};
    size_t n;
    (void)state;

    assert_non_null(want);
    for (int round = 0; round < 3; round++) {
        n = node_body(buf, 3, 5300, 100, 5000, three, 3);
        decode_ok(buf, n, PROTO_DECODE_SUM_STATS, &out);
        assert_true(out.u.stats.sum->rd.lat.count == 3);
        proto_msg_clear(&out);
        /* A histogram whose counts add up to more than its count: refused
         * after its buckets were added. */
        n = node_body(buf, 2, 300, 100, 200, two, 2);
        assert_int_equal(buf[n - 16], 1); /* the read histogram's last count */
        buf[n - 16] = 2;
        assert_int_equal(proto_msg_decode_flags(
                             buf, n, &out, PROTO_DECODE_STATS_BINARY | PROTO_DECODE_SUM_STATS, &d),
                         IOF_EPROTO);
        assert_non_null(strstr(d.msg, "stats.r.lat: not a valid histogram"));
        proto_msg_clear(&out);
        n = node_body(buf, 2, 300, 100, 200, two, 2);
        decode_ok(buf, n, PROTO_DECODE_SUM_STATS, &out);
        iof_hist_reset(want);
        iof_hist_record(want, 100);
        iof_hist_record(want, 200);
        assert_true(out.u.stats.sum->rd.lat.count == 2 && out.u.stats.sum->rd.lat.max_ns == 200);
        assert_memory_equal(out.u.stats.sum->rd.lat.buckets, want->buckets, sizeof(want->buckets));
        assert_true(out.u.stats.sum->wr.lat.count == 0 && out.u.stats.sum->rd.bytes == 8192);
        proto_msg_clear(&out);
    }
    free(want);
}

/* ---- the cpu's node figures (1.6) --------------------------------------- */

static void expect_bad(const uint8_t *p, size_t len, size_t off, const void *bytes, size_t n,
                       size_t newlen, const char *want);

/* JSON and the binary body carry them alike; absent they are unknown, and
 * the binary body then has no node bytes; a node flag without the cpu flag,
 * or a body too short for its node bytes, is refused. */
static void test_cpu_node(void **state)
{
    struct sample s;
    struct proto_msg in, out;
    const uint8_t *p;
    size_t len, plain;
    uint8_t *frame, flag[2] = {PROTO_STATSBIN_NODE, 0};
    (void)state;

    sample_build(&s, 0xc9);
    sample_msg(&in, &s);
    frame = bin_frame(&in, &p, &plain);
    free(frame);
    in.u.stats.cpu.node_valid = true;
    in.u.stats.cpu.dpc_pct = 3.25;
    in.u.stats.cpu.irq_pct = 0.5;
    in.u.stats.cpu.intr_per_s = 12345.67;
    in.u.stats.cpu.packets_per_s = 2000.5;
    in.u.stats.cpu.packet_errors = 3;
    in.u.stats.cpu.retrans_per_s = 0.254;
    for (int bin = 0; bin < 2; bin++) {
        frame = bin ? bin_frame(&in, &p, &len) : json_frame(&in, &p, &len);
        if (bin)
            assert_int_equal(len, plain + PROTO_STATSBIN_NODE_BYTES);
        decode_ok(p, len, 0, &out);
        assert_true(out.u.stats.cpu.valid && out.u.stats.cpu.node_valid);
        assert_true(out.u.stats.cpu.dpc_pct == 3.25 && out.u.stats.cpu.irq_pct == 0.5 &&
                    out.u.stats.cpu.intr_per_s == 12345.67 &&
                    out.u.stats.cpu.packets_per_s == 2000.5 && out.u.stats.cpu.packet_errors == 3 &&
                    out.u.stats.cpu.retrans_per_s == 0.25);
        assert_workers_identical(&in.u.stats, &out.u.stats);
        proto_msg_clear(&out);
        free(frame);
    }
    /* A result (always JSON) the same. */
    in.type = PROTO_MSG_RESULT;
    frame = json_frame(&in, &p, &len);
    decode_ok(p, len, 0, &out);
    assert_true(out.u.result.cpu.node_valid && out.u.result.cpu.intr_per_s == 12345.67);
    proto_msg_clear(&out);
    free(frame);
    in.type = PROTO_MSG_STATS;
    /* Without them (an older agent's): unknown, in both forms. */
    in.u.stats.cpu.node_valid = false;
    for (int bin = 0; bin < 2; bin++) {
        frame = bin ? bin_frame(&in, &p, &len) : json_frame(&in, &p, &len);
        decode_ok(p, len, 0, &out);
        assert_true(out.u.stats.cpu.valid);
        assert_false(out.u.stats.cpu.node_valid);
        proto_msg_clear(&out);
        free(frame);
    }
    /* The node flag on a body without the cpu flag or without its bytes. */
    in.u.stats.cpu = (struct proto_cpu){0};
    frame = bin_frame(&in, &p, &len);
    expect_bad(p, len, 2, flag, 2, len, "stats.flags: the node flag without the cpu flag");
    free(frame);
    in.u.stats.cpu = (struct proto_cpu){.valid = true, .busy_pct = 1};
    in.u.stats.nworkers = 0;
    frame = bin_frame(&in, &p, &len);
    flag[0] = PROTO_STATSBIN_NODE | PROTO_STATSBIN_CPU;
    expect_bad(p, len, 2, flag, 2, len, "its header alone is 72");
    free(frame);
    free(s.t);
}

/* The node figure retrans_s of a body with node figures (its last 8 bytes). */
#define RETRANS_AT (PROTO_STATSBIN_HEADER + 4 + 8 * 3)

static void set_le64(uint8_t *at, uint64_t v)
{
    for (unsigned b = 0; b < 8; b++)
        at[b] = (uint8_t)(v >> (8 * b));
}

/* Node counts and rates travel as hundredths; up to the largest sent, one
 * decoded from the wire encodes to the same hundredths (the fuzzer's fixed
 * point: 0x1d01 << 40 | 0xbd came back as ...be and then ...c0 when 10^17
 * was sent). Above it, up to the bound of earlier builds, a figure is read
 * as the largest; more is refused. */
static void test_cpu_node_exact(void **state)
{
    struct proto_msg in = {.type = PROTO_MSG_STATS}, out;
    const uint8_t *p;
    uint8_t *frame, buf[PROTO_STATSBIN_HEADER + PROTO_STATSBIN_NODE_BYTES];
    size_t len;
    uint64_t x = 0x9e3779b97f4a7c15ull, v;
    (void)state;

    in.u.stats.cpu = (struct proto_cpu){.valid = true, .busy_pct = 1, .node_valid = true};
    frame = bin_frame(&in, &p, &len);
    assert_int_equal(len, sizeof(buf));
    memcpy(buf, p, len);
    free(frame);
    for (int i = 0; i <= 4000; i++) {
        const uint8_t *q;
        size_t qlen;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* The bound, the values just below it, then any size at all. */
        v = i == 0   ? PROTO_STATSBIN_NODE_MAX
            : i < 64 ? PROTO_STATSBIN_NODE_MAX - (uint64_t)i
                     : (x >> (x % 64)) % (PROTO_STATSBIN_NODE_MAX + 1);
        set_le64(buf + RETRANS_AT, v);
        decode_ok(buf, len, 0, &out);
        frame = bin_frame(&out, &q, &qlen);
        if (qlen != len || memcmp(q, buf, len))
            fail_msg("%" PRIu64 " hundredths did not come back the same", v);
        free(frame);
        proto_msg_clear(&out);
    }
    /* Above it, up to the earlier bound: read as the bound; then refused. */
    for (int i = 0; i < 2; i++) {
        set_le64(buf + RETRANS_AT, i ? PROTO_STATSBIN_NODE_READ_MAX : PROTO_STATSBIN_NODE_MAX + 1);
        decode_ok(buf, len, 0, &out);
        assert_true(out.u.stats.cpu.retrans_per_s == PROTO_CPU_NODE_MAX);
        proto_msg_clear(&out);
    }
    set_le64(buf + RETRANS_AT, PROTO_STATSBIN_NODE_READ_MAX + 1);
    expect_bad(buf, len, 0, NULL, 0, len, "stats.cpu.retrans_s: 100000000000000001 hundredths");
    /* A figure past the bound goes as the bound, in both forms. */
    in.u.stats.cpu.intr_per_s = 5e13;
    for (int bin = 0; bin < 2; bin++) {
        frame = bin ? bin_frame(&in, &p, &len) : json_frame(&in, &p, &len);
        decode_ok(p, len, 0, &out);
        assert_true(out.u.stats.cpu.intr_per_s == PROTO_CPU_NODE_MAX);
        proto_msg_clear(&out);
        free(frame);
    }
}

/* A JSON payload (p, len) with the text `from` replaced by `to`: new, its
 * length in *n. */
static char *json_replaced(const uint8_t *p, size_t len, const char *from, const char *to,
                           size_t *n)
{
    const char *text = (const char *)p, *at = memmem(text, len, from, strlen(from));
    size_t head, tail, lt = strlen(to);
    char *q;

    assert_non_null(at);
    head = (size_t)(at - text);
    tail = len - head - strlen(from);
    q = malloc(head + lt + tail + 1);
    assert_non_null(q);
    memcpy(q, text, head);
    memcpy(q + head, to, lt);
    memcpy(q + head + lt, at + strlen(from), tail);
    q[head + lt + tail] = '\0';
    *n = head + lt + tail;
    return q;
}

/* The JSON form of the node figures: the largest two-decimal figure comes
 * back the same; one up to the bound of earlier builds is read as the
 * bound; more is refused. */
static void test_cpu_node_exact_json(void **state)
{
    struct proto_msg in = {.type = PROTO_MSG_STATS}, out;
    const uint8_t *p;
    uint8_t *frame;
    char *q;
    size_t len, n;
    (void)state;

    in.u.stats.cpu = (struct proto_cpu){.valid = true, .busy_pct = 1, .node_valid = true};
    in.u.stats.cpu.packets_per_s = 9999999999999.99;
    frame = json_frame(&in, &p, &len);
    decode_ok(p, len, 0, &out);
    assert_true(out.u.stats.cpu.packets_per_s == 9999999999999.99);
    proto_msg_clear(&out);
    free(frame);

    in.u.stats.cpu.packets_per_s = 123.25;
    frame = json_frame(&in, &p, &len);
    q = json_replaced(p, len, "\"packets_s\":123.25", "\"packets_s\":500000000000000", &n);
    decode_ok((const uint8_t *)q, n, 0, &out);
    assert_true(out.u.stats.cpu.packets_per_s == PROTO_CPU_NODE_MAX);
    proto_msg_clear(&out);
    free(q);
    q = json_replaced(p, len, "\"packets_s\":123.25", "\"packets_s\":1000000000000001", &n);
    expect_bad((const uint8_t *)q, n, 0, NULL, 0, n,
               "stats.cpu.packets_s: must be a number 0..1e+15");
    free(q);
    free(frame);
}

/* ---- refusals ----------------------------------------------------------- */

/* A copy of the valid body `p` with `n` bytes at `off` replaced. */
static void expect_bad(const uint8_t *p, size_t len, size_t off, const void *bytes, size_t n,
                       size_t newlen, const char *want)
{
    uint8_t *q = malloc(len + 64);
    struct proto_msg out;
    struct iof_diag d = {{0}};
    int rc;

    assert_non_null(q);
    memcpy(q, p, len);
    if (n)
        memcpy(q + off, bytes, n);
    rc = proto_msg_decode_flags(q, newlen, &out, PROTO_DECODE_STATS_BINARY, &d);
    if (rc != IOF_EPROTO || !strstr(d.msg, want) || strchr(d.msg, '\n'))
        fail_msg("expected IOF_EPROTO with \"%s\", got %d \"%s\"", want, rc, d.msg);
    proto_msg_clear(&out);
    rc = proto_msg_decode_flags(q, newlen, &out, PROTO_DECODE_STATS_BINARY | PROTO_DECODE_SUM_STATS,
                                &d);
    if (rc != IOF_EPROTO || !strstr(d.msg, want))
        fail_msg("summing: expected IOF_EPROTO with \"%s\", got %d \"%s\"", want, rc, d.msg);
    proto_msg_clear(&out);
    free(q);
}

static size_t put_varint(uint8_t *buf, size_t n, uint64_t v)
{
    while (v >= 0x80) {
        buf[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (uint8_t)v;
    return n;
}

/* A body built by hand: header, worker table, then `rec` (n bytes); layout
 * 1, the first one, still read: histograms in the sparse form. */
static size_t hand_body(uint8_t *buf, unsigned nworkers, const uint16_t *nt, const uint8_t *rec,
                        size_t n)
{
    memset(buf, 0, PROTO_STATSBIN_HEADER);
    buf[0] = PROTO_STATSBIN_TAG;
    buf[1] = PROTO_STATSBIN_LAYOUT_SPARSE; /* histograms in the sparse form */
    buf[32] = (uint8_t)nworkers;
    buf[33] = (uint8_t)(nworkers >> 8);
    buf[34] = (uint8_t)(nworkers >> 16);
    for (unsigned w = 0; w < nworkers; w++) {
        buf[PROTO_STATSBIN_HEADER + 2 * w] = (uint8_t)nt[w];
        buf[PROTO_STATSBIN_HEADER + 2 * w + 1] = (uint8_t)(nt[w] >> 8);
    }
    memcpy(buf + PROTO_STATSBIN_HEADER + 2 * nworkers, rec, n);
    return PROTO_STATSBIN_HEADER + 2 * nworkers + n;
}

static void expect_hand(unsigned nworkers, const uint16_t *nt, const uint8_t *rec, size_t n,
                        const char *want)
{
    static uint8_t buf[PROTO_STATSBIN_HEADER + 2 * 300 + 256];
    size_t len = hand_body(buf, nworkers, nt, rec, n);
    expect_bad(buf, len, 0, NULL, 0, len, want);
}

static void test_refused(void **state)
{
    (void)state;
    struct sample s;
    struct proto_msg in;
    const uint8_t *p;
    size_t len;
    uint8_t *frame;
    static const uint16_t one[] = {1}, two[] = {2};

    sample_build(&s, 11);
    sample_msg(&in, &s);
    frame = bin_frame(&in, &p, &len);

    expect_bad(p, len, 0, NULL, 0, 20, "stats: binary body of 20 bytes, its header alone is 36");
    expect_bad(p, len, 1, "\x04", 1, len,
               "stats.layout: 4 is not known to this build (it reads 1 to 3)");
    expect_bad(p, len, 1, "\x00", 1, len, "stats.layout: 0 is not known to this build");
    expect_bad(p, len, 2, "\x08\x00", 2, len, "stats.flags: reserved bits set (0x0008)");
    expect_bad(p, len, 24, "\x11\x27", 2, len, "stats.cpu.busy: 10001, must be 0..10000");
    expect_bad(p, len, 2, "\x00", 1, len, "stats.cpu.busy: 3725, must be 0..10000 (0 when");
    expect_bad(p, len, 32, "\x01\x00\x01\x00", 4, len, "stats.workers: 65537 workers, at most");
    expect_bad(p, len, 0, NULL, 0, PROTO_STATSBIN_HEADER + 3,
               "stats.workers: a table of 3 workers does not fit the 39-byte body");
    expect_bad(p, len, PROTO_STATSBIN_HEADER, "\xff\xff", 2, len,
               "stats.workers[0]: 65535 targets, at most");
    expect_bad(p, len, 0, NULL, 0, len - 1, "stats.workers[2][1].w.lat_len: ");
    expect_bad(p, len, PROTO_STATSBIN_HEADER + 6, "\x20", 1, len,
               "stats.workers[0][0].flags: reserved bits set (0x20)");
    {
        /* Trailing bytes. */
        uint8_t *q = malloc(len + 2);
        memcpy(q, p, len);
        q[len] = q[len + 1] = 0;
        expect_bad(q, len + 2, 0, NULL, 0, len + 2, "stats: 2 bytes after the last target");
        free(q);
    }
    /* Records by hand: flags, then the fields. */
    expect_hand(1, one, (const uint8_t *)"", 0,
                "stats.workers: 1 targets cannot fit the 0 bytes left");
    expect_hand(1, one, (const uint8_t *)"\x01\x80", 2,
                "stats.workers[0][0].r.bytes: truncated (the body ends inside it)");
    expect_hand(1, one, (const uint8_t *)"\x01\x80\x00\x00\x00", 5,
                "stats.workers[0][0].r.bytes: varint not in its shortest form");
    expect_hand(1, one, (const uint8_t *)"\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02\x00\x00", 13,
                "stats.workers[0][0].r.bytes: varint above 64 bits");
    expect_hand(1, one, (const uint8_t *)"\x02\x00\x00\x09\x00", 5,
                "stats.workers[0][0].w.lat_len: 9 bytes, only 1 left in the body");
    /* A histogram of count 1 with no bucket. */
    expect_hand(1, one, (const uint8_t *)"\x01\x00\x00\x05\x01\x05\x05\x05\x00", 9,
                "stats.workers[0][0].r.lat: not a valid histogram");
    /* Rated: late > n. */
    expect_hand(1, one, (const uint8_t *)"\x04\x01\x05\x05\x05\x02", 6,
                "stats.workers[0][0].rated: inconsistent service latency summary");
    expect_hand(1, one,
                (const uint8_t *)"\x10\x03"
                                 "EI!\x00",
                6, "stats.workers[0][0].first_error.code: must be an error code name");
    expect_hand(1, one,
                (const uint8_t *)"\x10\x09"
                                 "EIO",
                5, "stats.workers[0][0].first_error.code: 9 bytes, only 3 left in the body");
    expect_hand(1, one, (const uint8_t *)"\x10\x00\x00", 3,
                "stats.workers[0][0].first_error.code: must be an error code name");
    expect_hand(1, one, (const uint8_t *)"\x08", 1, "stats.workers[0][0].verify_errors: truncated");
    /* Two targets whose bytes together pass 2^64, summed. */
    {
        static uint8_t rec[64], buf[256];
        struct iof_hist empty;
        struct proto_msg out;
        struct iof_diag d = {{0}};
        size_t n = 0;
        long hl;
        iof_hist_reset(&empty);
        for (int t = 0; t < 2; t++) {
            rec[n++] = PROTO_STATSBIN_T_READ;
            n = put_varint(rec, n, UINT64_MAX); /* bytes */
            n = put_varint(rec, n, 0);          /* errors */
            hl = iof_hist_encode(&empty, rec + n + 1, sizeof(rec) - n - 1);
            assert_true(hl > 0 && hl < 128);
            rec[n] = (uint8_t)hl;
            n += 1 + (size_t)hl;
        }
        n = hand_body(buf, 1, two, rec, n);
        int rc = proto_msg_decode_flags(buf, n, &out,
                                        PROTO_DECODE_STATS_BINARY | PROTO_DECODE_SUM_STATS, &d);
        assert_int_equal(rc, IOF_EPROTO);
        assert_string_equal(d.msg, "stats.workers[0][1].r.bytes: the message's sum overflows 64 "
                                   "bits");
        proto_msg_clear(&out);
        /* Not summed, each target's own bytes are fine. */
        rc = proto_msg_decode_flags(buf, n, &out, PROTO_DECODE_STATS_BINARY, &d);
        if (rc)
            fail_msg("%s", d.msg);
        assert_true(out.u.stats.workers[0].targets[1].rd.bytes == UINT64_MAX);
        proto_msg_clear(&out);
    }
    free(frame);
    free(s.t);
}

/* Every prefix of a valid body and every single-byte change either decodes
 * to something the encoder accepts again or fails with IOF_EPROTO and a
 * one-line diag (ASan checks the reads). */
static void test_truncations_and_flips(void **state)
{
    (void)state;
    struct sample s;
    struct proto_msg in, out;
    struct iof_diag d = {{0}};
    const uint8_t *p;
    size_t len;
    uint8_t *frame, *q;
    uint64_t rng = 99;

    sample_build(&s, 5);
    for (size_t i = 0; i < 6; i++) { /* smaller histograms: a quicker sweep */
        iof_hist_reset(&s.t[i].rd.lat);
        iof_hist_reset(&s.t[i].wr.lat);
        s.t[i].rd.ios = s.t[i].wr.ios = 0;
        fill_dir(&s.t[i].rd, &rng, 20, 4096);
    }
    sample_msg(&in, &s);
    frame = bin_frame(&in, &p, &len);
    for (size_t n = 0; n < len; n++) {
        int rc = proto_msg_decode_flags(p, n, &out, PROTO_DECODE_STATS_BINARY, &d);
        if (rc != IOF_EPROTO || !d.msg[0] || strchr(d.msg, '\n'))
            fail_msg("prefix of %zu bytes: %d \"%s\"", n, rc, d.msg);
        proto_msg_clear(&out);
    }
    q = malloc(len);
    assert_non_null(q);
    for (size_t i = 0; i < len; i++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            memcpy(q, p, len);
            q[i] ^= (uint8_t)(1u << bit);
            for (unsigned sum = 0; sum < 2; sum++) {
                int rc = proto_msg_decode_flags(
                    q, len, &out, PROTO_DECODE_STATS_BINARY | (sum ? PROTO_DECODE_SUM_STATS : 0),
                    &d);
                if (rc == 0 && !sum) {
                    uint8_t *f2 = NULL;
                    size_t l2;
                    rc = proto_msg_encode_frame_flags(&out, PROTO_STATS_FRAME_MAX,
                                                      PROTO_ENCODE_STATS_BINARY, &f2, &l2, &d);
                    if (rc)
                        fail_msg("byte %zu bit %u: decoded but does not encode: %s", i, bit, d.msg);
                    free(f2);
                } else if (rc && (rc != IOF_EPROTO || !d.msg[0] || strchr(d.msg, '\n'))) {
                    fail_msg("byte %zu bit %u: %d \"%s\"", i, bit, rc, d.msg);
                }
                proto_msg_clear(&out);
            }
        }
    }
    free(q);
    free(frame);
    free(s.t);
}

/* The encoder applies the JSON encoder's rules. */
static void test_encode_refused(void **state)
{
    (void)state;
    struct sample s;
    struct proto_msg in;
    struct iof_diag d = {{0}};
    uint8_t *f = NULL;
    size_t flen;

    sample_build(&s, 8);
    sample_msg(&in, &s);
    s.t[0].rd.ios++;
    assert_int_equal(proto_msg_encode_frame_flags(&in, PROTO_STATS_FRAME_MAX,
                                                  PROTO_ENCODE_STATS_BINARY, &f, &flen, &d),
                     -EINVAL);
    assert_non_null(strstr(d.msg, "stats.workers[0][0].r: "));
    s.t[0].rd.ios--;
    s.t[4].first_error = 5;
    assert_int_equal(proto_msg_encode_frame_flags(&in, PROTO_STATS_FRAME_MAX,
                                                  PROTO_ENCODE_STATS_BINARY, &f, &flen, &d),
                     -EINVAL);
    assert_non_null(strstr(d.msg, "stats.workers[2][0].first_error.code: must be a negative"));
    s.t[4].first_error = -EIO;
    assert_int_equal(
        proto_msg_encode_frame_flags(&in, 100, PROTO_ENCODE_STATS_BINARY, &f, &flen, &d),
        IOF_ETOOBIG);
    assert_null(f);
    free(s.t);
}

/* ---- the bench's shape -------------------------------------------------- */

/* 8 workers x 1 target, 70/30 4 KiB, log-normal latencies as
 * tests/bench/simagent.c records them: bytes on the wire per interval. */
static void test_wire_size(void **state)
{
    (void)state;
    struct iof_stats *t = stats_new(8);
    struct proto_worker_stats w[8];
    struct proto_msg in;
    const uint8_t *p;
    size_t jlen, blen, nlen;
    uint8_t *jf, *bf, *nf;
    uint64_t rng = 42;

    for (size_t i = 0; i < 8; i++) {
        for (int dir = 0; dir < 2; dir++) {
            struct iof_dirstats *d = dir ? &t[i].wr : &t[i].rd;
            double median = dir ? 320000.0 : 180000.0;
            for (int k = 0; k < 2000; k++) {
                /* Box-Muller on two uniforms in (0, 1). */
                double u1 = ((double)(rng_next(&rng) >> 11) + 0.5) / 9007199254740992.0;
                double u2 = ((double)(rng_next(&rng) >> 11) + 0.5) / 9007199254740992.0;
                double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
                iof_hist_record(&d->lat, (uint64_t)(median * exp(0.30 * z)));
            }
            d->ios = 2000;
            d->bytes = 2000 * 4096;
        }
        w[i] = (struct proto_worker_stats){1, &t[i]};
    }
    proto_msg_init(&in, PROTO_MSG_STATS);
    in.u.stats.nworkers = 8;
    in.u.stats.workers = w;
    in.u.stats.cpu = (struct proto_cpu){.valid = true, .busy_pct = 12.5};
    jf = json_frame(&in, &p, &jlen);
    bf = bin_frame(&in, &p, &blen);
    nf = bin_frame_flags(&in, ENC_NODE, &p, &nlen);
    print_message(
        "8 workers x 1 target, 2000 I/Os per direction: JSON %zu bytes, binary %zu bytes, "
        "binary per node %zu bytes (frames: +%d each)\n",
        jlen, blen, nlen, PROTO_FRAME_HEADER_SIZE);
    assert_true(blen < jlen);
    assert_true(nlen < blen);
    {
        /* The manager's decoding (summed) of each form: CPU per message,
         * printed for docs/performance.md, not asserted (a shared machine). */
        const uint8_t *fp[3] = {jf + PROTO_FRAME_HEADER_SIZE, bf + PROTO_FRAME_HEADER_SIZE,
                                nf + PROTO_FRAME_HEADER_SIZE};
        size_t fl[3] = {jlen, blen, nlen};
        double us[3];
        for (int form = 0; form < 3; form++) {
            struct timespec a, b;
            const int rounds = 300;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
            for (int i = 0; i < rounds; i++) {
                struct proto_msg out;
                decode_ok(fp[form], fl[form], PROTO_DECODE_SUM_STATS, &out);
                proto_msg_clear(&out);
            }
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
            us[form] = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
                       rounds / 1e3;
        }
        print_message(
            "summed decode, CPU per message: JSON %.1f us, binary %.1f us, per node %.1f us\n",
            us[0], us[1], us[2]);
    }
    free(jf);
    free(bf);
    free(nf);
    free(t);
}

/* ---- the manager's rows from either form -------------------------------- */

/* Everything the sinks are handed, serialised: metrics bit for bit, stats
 * with their histograms in the wire encoding. */
struct capture {
    struct iof_buf log;
};

static void cap_stats(struct iof_buf *b, const struct iof_stats *s)
{
    const struct iof_dirstats *d[2] = {&s->rd, &s->wr};
    for (int k = 0; k < 2; k++) {
        uint8_t h[IOF_HIST_BUCKETS * 20 + 64];
        long n = iof_hist_encode(&d[k]->lat, h, sizeof(h));
        assert_true(n > 0);
        iof_buf_printf(b, " %" PRIu64 "/%" PRIu64 "/%" PRIu64 " h%ld:", d[k]->ios, d[k]->bytes,
                       d[k]->errors, n);
        for (long i = 0; i < n; i++)
            iof_buf_printf(b, "%02x", h[i]);
    }
    iof_buf_printf(b, " fe %d@%" PRIu64 " ve %" PRIu64 " rated %" PRIu64 "/%" PRIu64,
                   s->first_error, s->first_error_offset, s->verify_errors, s->rated.svc.count,
                   s->rated.late);
}

static void cap_metrics(struct iof_buf *b, const struct mgr_metrics *m)
{
    const double v[] = {m->seconds,     m->iops,         m->read_iops,   m->write_iops,
                        m->mibps,       m->read_mibps,   m->write_mibps, m->avg_ms,
                        m->avg_read_ms, m->avg_write_ms, m->p50_ms,      m->p90_ms,
                        m->p95_ms,      m->p99_ms,       m->p999_ms,     m->p9999_ms,
                        m->max_ms,      m->avg_svc_ms,   m->max_svc_ms};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        iof_buf_printf(b, " %a", v[i]);
    iof_buf_printf(b,
                   " %d%d%d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
                   m->rates, m->percentiles, m->rated, m->read_ios, m->write_ios, m->bytes_read,
                   m->bytes_written, m->errors, m->late_ios);
}

static void cap_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct capture *c = s->priv;
    iof_buf_printf(&c->log, "\ninterval %" PRIu64 " %s %u %u", iv->k, iv->node ? iv->node : "ALL",
                   iv->reported, iv->lost);
    cap_stats(&c->log, iv->stats);
    cap_metrics(&c->log, iv->m);
    if (iv->cpu)
        iof_buf_printf(&c->log, " cpu %a", iv->cpu->busy_pct);
}

static void cap_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    struct capture *c = s->priv;
    (void)ti;
    iof_buf_printf(&c->log, "\nrow %s %s %s %s %d", mgr_row_type_name(r->type),
                   r->node ? r->node : "-", r->worker ? r->worker : "-",
                   r->target ? r->target : "-", (int)r->status);
    cap_stats(&c->log, r->stats);
    cap_metrics(&c->log, r->m);
}

static void cap_nop_test(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    (void)s;
    (void)ti;
}

static void cap_nop_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    struct capture *c = s->priv;
    iof_buf_printf(&c->log, "\nend %u %u", te->nodes, te->lost);
    cap_metrics(&c->log, te->all->m);
}

static const struct mgr_sink_ops cap_ops = {
    .name = "capture",
    .test_begin = cap_nop_test,
    .interval = cap_interval,
    .row = cap_row,
    .test_end = cap_nop_end,
};

static unsigned hook_two(void *arg)
{
    (void)arg;
    return 2;
}

static const char AGG_PLAN[] =
    "{\"name\": \"exact\", \"run\": {\"ramp\": \"0s\", \"duration\": \"3s\", \"interval\": \"1s\"},"
    " \"specs\": [{\"name\": \"mix\", \"lines\": [{\"size\": \"4k\", \"read\": 70}]}],"
    " \"workers\": [{\"nodes\": [\"*\"], \"count\": 3, \"engine\": \"null\", \"queue_depth\": 4,"
    "  \"targets\": [{\"path\": \"a\", \"size\": \"64m\"}, {\"path\": \"b\", \"size\": "
    "\"64m\"}]}]}";

/* An aggregate of AGG_PLAN's first test with two nodes taking part, into
 * one sink; the measured window starts at t0. */
struct agg_fix {
    struct iof_plan plan;
    struct iof_test *tests;
    size_t ntests;
    struct mgr_agg g;
    struct mgr_live live;
    struct mgr_sink *sinks[1];
    struct mgr_agg_node nodes[2];
    struct iof_run_cfg run;
};

static void agg_fix_begin(struct agg_fix *f, struct mgr_sink *sink, const char *a, const char *b,
                          uint64_t t0)
{
    static const struct mgr_agg_hooks hooks = {.live = hook_two, .members = hook_two};
    struct iof_diag d = {{0}};

    memset(f, 0, sizeof(*f));
    if (proto_plan_parse("plan", AGG_PLAN, strlen(AGG_PLAN), NULL, 0, &f->plan, &d))
        fail_msg("plan: %s", d.msg);
    f->tests = iof_plan_expand(&f->plan, &f->ntests);
    assert_non_null(f->tests);
    f->sinks[0] = sink;
    f->nodes[0].name = a;
    f->nodes[1].name = b;
    mgr_live_init(&f->live, true);
    mgr_agg_init(&f->g, &f->plan, f->tests, f->ntests, f->sinks, 1, &f->live, &hooks, false,
                 t0 - 1000000000);
    f->run = iof_test_run(&f->plan, &f->tests[0]);
    mgr_agg_test_begin(&f->g, 0, &f->run, t0);
    for (int n = 0; n < 2; n++)
        mgr_agg_node_take_part(&f->nodes[n]);
}

static void agg_fix_end(struct agg_fix *f)
{
    for (int n = 0; n < 2; n++)
        mgr_agg_node_free(&f->nodes[n]);
    mgr_agg_free(&f->g);
    free(f->tests);
    iof_plan_free(&f->plan);
}

/* Hands stats message `in` to the aggregate as node n's, through the wire
 * (the binary body encoded with `enc`, PROTO_ENCODE_*, or JSON when 0) and
 * the manager's summing decoder. */
static void agg_fix_stats(struct agg_fix *f, int n, const struct proto_msg *in, unsigned enc)
{
    struct iof_diag d = {{0}};
    struct proto_msg out;
    const uint8_t *p;
    size_t plen;
    uint8_t *frame = enc ? bin_frame_flags(in, enc, &p, &plen) : json_frame(in, &p, &plen);

    decode_ok(p, plen, PROTO_DECODE_SUM_STATS, &out);
    if (mgr_agg_stats(&f->g, &f->nodes[n], &out.u.stats, &d))
        fail_msg("mgr_agg_stats: %s", d.msg);
    proto_msg_clear(&out);
    free(frame);
}

/* One run of the aggregate: node-a reports 3 intervals and its result,
 * node-b 2 intervals and is lost; every stats message travels as `enc`
 * says. Returns what the sinks saw. */
static char *agg_run(unsigned enc, size_t *len)
{
    struct capture cap = {IOF_BUF_INIT};
    struct mgr_sink sink = {.ops = &cap_ops, .priv = &cap};
    struct agg_fix f;
    const uint64_t t0 = UINT64_C(1000) * 1000000000;

    agg_fix_begin(&f, &sink, "node-a", "node-b", t0);
    for (uint64_t k = 0; k < 3; k++) {
        for (int n = 0; n < 2 && !(n == 1 && k == 2); n++) {
            /* (node-b is lost before its third interval) */
            struct iof_stats *t = stats_new(6);
            struct proto_worker_stats w[3];
            struct proto_msg in, out;
            uint64_t rng = 1000 * k + (uint64_t)n + 1;
            const uint8_t *p;
            size_t plen;
            uint8_t *frame;

            for (size_t i = 0; i < 6; i++) {
                fill_dir(&t[i].rd, &rng, 300 + 10 * i + k, 4096);
                fill_dir(&t[i].wr, &rng, 100 + i, 4096);
            }
            t[1].rated.svc = (struct iof_hist_summary){10, 10 * 7000 + (unsigned)k, 7000, 9000};
            t[2].verify_errors = k + 1;
            t[3].wr.errors = 2;
            t[3].first_error = -EIO;
            t[3].first_error_offset = 4096 * (k + 1);
            for (size_t i = 0; i < 3; i++)
                w[i] = (struct proto_worker_stats){2, &t[2 * i]};
            proto_msg_init(&in, PROTO_MSG_STATS);
            in.u.stats.interval = k;
            in.u.stats.nworkers = 3;
            in.u.stats.workers = w;
            in.u.stats.cpu = (struct proto_cpu){.valid = true, .busy_pct = 10.0 + (double)k / 3};
            agg_fix_stats(&f, n, &in, enc);
            if (n == 0 && k == 2) {
                /* node-a's result: JSON in both runs (its body is not binary). */
                proto_msg_init(&in, PROTO_MSG_RESULT);
                in.u.result.measured_ns = f.run.duration_ns;
                in.u.result.nworkers = 3;
                in.u.result.workers = w;
                frame = json_frame(&in, &p, &plen);
                decode_ok(p, plen, 0, &out);
                mgr_agg_result(&f.g, &f.nodes[0], &out.u.result, t0, t0);
                proto_msg_clear(&out);
                free(frame);
            }
            free(t);
        }
        mgr_agg_publish_ready(&f.g, 2, false);
    }
    mgr_agg_mark_lost(&f.nodes[1], "lost in the test");
    mgr_agg_publish_ready(&f.g, 1, true);
    mgr_agg_lost(&f.g, &f.nodes[1]);
    {
        struct mgr_agg_node *np[] = {&f.nodes[0], &f.nodes[1]};
        struct mgr_agg_end e = {.nodes = np, .nnodes = 2, .measured_ns = f.run.duration_ns};
        mgr_agg_test_end(&f.g, &e);
    }
    agg_fix_end(&f);
    {
        char *text = iof_buf_take(&cap.log, len);
        assert_non_null(text);
        return text;
    }
}

/* Which intervals the sinks were told were cut short by the interruption. */
static void cut_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct capture *c = s->priv;
    iof_buf_printf(&c->log, "%s%" PRIu64 "%s=%d", c->log.len ? " " : "", iv->k,
                   iv->node ? iv->node : "ALL", iv->interrupted);
}

static void cut_nop_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    (void)s, (void)ti, (void)r;
}

static void cut_nop_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    (void)s, (void)te;
}

/* A sink that logs the intervals it is handed (and nothing else). */
static const struct mgr_sink_ops cut_ops = {.name = "cut",
                                            .test_begin = cap_nop_test,
                                            .interval = cut_interval,
                                            .row = cut_nop_row,
                                            .test_end = cut_nop_end};

/* Node n's report of interval k, through the JSON body, of a run cut
 * duration_ns into the interval (0: a full one). */
static void agg_report(struct agg_fix *f, int n, uint64_t k, uint64_t duration_ns)
{
    struct iof_stats *t = stats_new(6);
    struct proto_worker_stats w[3];
    struct proto_msg in;
    uint64_t rng = 77 * k + (uint64_t)n + 1;

    for (size_t i = 0; i < 6; i++)
        fill_dir(&t[i].rd, &rng, 50 + i, 4096);
    for (size_t i = 0; i < 3; i++)
        w[i] = (struct proto_worker_stats){2, &t[2 * i]};
    proto_msg_init(&in, PROTO_MSG_STATS);
    in.u.stats.interval = k;
    in.u.stats.nworkers = 3;
    in.u.stats.workers = w;
    in.u.stats.duration_ns = duration_ns;
    agg_fix_stats(f, n, &in, 0);
    free(t);
}

/* An interval that both nodes completed, published after the run was
 * interrupted (the stop came between its end and its publication), is not
 * "interrupted"; the one the stop cut short is, for ALL and per node. */
static void test_agg_interrupted_interval(void **state)
{
    struct capture cap = {IOF_BUF_INIT};
    struct mgr_sink sink = {.ops = &cut_ops, .priv = &cap};
    struct agg_fix f;
    (void)state;

    /* Now: an interval is published when both nodes reported, not at a
     * deadline long past. */
    agg_fix_begin(&f, &sink, "a", "b", iof_now_ns());
    for (uint64_t k = 0; k < 3; k++) {
        for (int n = 0; n < 2; n++) {
            /* The stop cuts interval 2 after 0.25 s on both nodes. */
            agg_report(&f, n, k, k == 2 ? 250000000 : 0);
            /* The interruption: after both full reports of interval 1 came,
             * before the interval was published. */
            if (k == 1 && n == 1)
                mgr_agg_interrupt(&f.g);
        }
        mgr_agg_publish_ready(&f.g, 2, false);
    }
    agg_fix_end(&f);
    size_t len;
    char *text = iof_buf_take(&cap.log, &len);
    assert_non_null(text);
    assert_string_equal(text, "0a=0 0b=0 0ALL=0 1a=0 1b=0 1ALL=0 2a=1 2b=1 2ALL=1");
    free(text);
}

/* What the sinks were handed: interval, node (or ALL with how many reports it
 * merged, and whether it came late). */
static void seen_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct capture *c = s->priv;
    iof_buf_printf(&c->log, "%s%" PRIu64 "%s", c->log.len ? " " : "", iv->k,
                   iv->node ? iv->node : "ALL");
    if (!iv->node)
        iof_buf_printf(&c->log, "/%u%s", iv->reported, iv->late ? "late" : "");
}

static const struct mgr_sink_ops seen_ops = {.name = "seen",
                                             .test_begin = cap_nop_test,
                                             .interval = seen_interval,
                                             .row = cut_nop_row,
                                             .test_end = cut_nop_end};

/* Every interval's deadline long past: an interval nobody has reported yet is
 * skipped on the next look, and a report of it then comes as a late entry;
 * the test's last interval is not skipped. It waits for both nodes' reports,
 * or, when b never sends its report, for the test's end (force). */
static void test_agg_last_interval_waits(void **state)
{
    static const char *const want[2] = {"0a 0b 1a 1b 0ALL/2 1ALL/2 2a 2b 2ALL/2",
                                        "0a 0b 1a 1b 0ALL/2 1ALL/2 2a | 2ALL/1"};
    (void)state;

    for (int silent = 0; silent < 2; silent++) {
        struct capture cap = {IOF_BUF_INIT};
        struct mgr_sink sink = {.ops = &seen_ops, .priv = &cap};
        struct agg_fix f;
        size_t len;
        char *text;

        agg_fix_begin(&f, &sink, "a", "b", iof_now_ns() - 10 * IOF_NS_PER_S);
        for (uint64_t k = 0; k < 2; k++)
            for (int n = 0; n < 2; n++)
                agg_report(&f, n, k, 0);
        mgr_agg_publish_ready(&f.g, 2, false);
        agg_report(&f, 0, 2, 0);
        mgr_agg_publish_ready(&f.g, 2, false);
        if (!silent) {
            agg_report(&f, 1, 2, 0);
            mgr_agg_publish_ready(&f.g, 2, false);
        } else {
            iof_buf_printf(&cap.log, " |");
            mgr_agg_publish_ready(&f.g, 2, true);
        }
        agg_fix_end(&f);
        text = iof_buf_take(&cap.log, &len);
        assert_non_null(text);
        assert_string_equal(text, want[silent]);
        free(text);
    }
}

static void test_agg_same_rows(void **state)
{
    (void)state;
    size_t jlen, blen, nlen;
    char *j, *b, *nh;
    int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);

    /* The table each run prints is not what is compared: keep it quiet. */
    assert_true(saved >= 0 && null >= 0);
    fflush(stdout);
    dup2(null, STDOUT_FILENO);
    j = agg_run(0, &jlen);
    b = agg_run(PROTO_ENCODE_STATS_BINARY, &blen);
    nh = agg_run(ENC_NODE, &nlen);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(null);
    /* Intervals (ALL and per node), and the rows: ALL, NODE, WORKER,
     * TARGET of the node with a result and of the lost one. */
    assert_non_null(strstr(j, "\ninterval 2 ALL"));
    assert_non_null(strstr(j, "\nrow TARGET node-b w2 b 1"));
    assert_non_null(strstr(j, "\nrow WORKER node-a w1"));
    assert_non_null(strstr(j, "\nrow NODE node-b"));
    assert_non_null(strstr(j, "\nend 1 1"));
    assert_int_equal(jlen, blen);
    assert_memory_equal(j, b, jlen);
    assert_int_equal(jlen, nlen);
    assert_memory_equal(j, nh, jlen);
    free(j);
    free(b);
    free(nh);
}

/* What the sinks get of an interval's ALL rows (on time) and of node-b's
 * NODE row, kept whole for comparison. */
struct keep_cap {
    struct iof_stats *all[3];
    unsigned all_reported[3], all_lost[3];
    struct iof_stats *node_b;
};

static struct iof_stats *stats_copy(const struct iof_stats *s)
{
    struct iof_stats *c = malloc(sizeof(*c));
    assert_non_null(c);
    *c = *s;
    return c;
}

static void keep_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct keep_cap *c = s->priv;
    if (iv->node || iv->late)
        return;
    assert_true(iv->k < 3 && !c->all[iv->k]);
    c->all[iv->k] = stats_copy(iv->stats);
    c->all_reported[iv->k] = iv->reported;
    c->all_lost[iv->k] = iv->lost;
}

static void keep_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    struct keep_cap *c = s->priv;
    (void)ti;
    if (r->type == MGR_ROW_NODE && !strcmp(r->node, "node-b")) {
        assert_null(c->node_b);
        c->node_b = stats_copy(r->stats);
    }
}

static const struct mgr_sink_ops keep_ops = {.name = "keep",
                                             .test_begin = cap_nop_test,
                                             .interval = keep_interval,
                                             .row = keep_row,
                                             .test_end = cut_nop_end};

static bool stats_same(const struct iof_stats *a, const struct iof_stats *b)
{
    return dir_same(&a->rd, &b->rd) && dir_same(&a->wr, &b->wr) &&
           a->verify_errors == b->verify_errors && a->first_error == b->first_error &&
           a->first_error_offset == b->first_error_offset &&
           a->rated.svc.count == b->rated.svc.count && a->rated.late == b->rated.late;
}

/* The interval sums and a lost node's kept latencies are added in one pass
 * over each report's buckets (iof_stats_merge_keep): they must be exactly
 * the plain merges of the reports, also with a report that comes after its
 * interval was published (kept for the node, not in that ALL row) and one
 * that says its interval was lost (in neither). node-a reports intervals
 * 0-2; node-b 0 late, 1, 2 as lost, then is lost itself. */
static void test_agg_keep_exact(void **state)
{
    struct keep_cap cap = {0};
    struct mgr_sink sink = {.ops = &keep_ops, .priv = &cap};
    struct iof_stats *want_all[3], *want_b = stats_new(1);
    struct agg_fix f;
    int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
    (void)state;

    assert_true(saved >= 0 && null >= 0);
    fflush(stdout);
    dup2(null, STDOUT_FILENO);
    /* Now: an interval is published when its reports are in, not at a
     * deadline long past. */
    agg_fix_begin(&f, &sink, "node-a", "node-b", iof_now_ns());
    for (uint64_t k = 0; k < 3; k++) {
        want_all[k] = stats_new(1);
        for (int n = 0; n < 2; n++) {
            struct iof_stats *t = stats_new(6), *sum = stats_new(1);
            struct proto_worker_stats w[3];
            struct proto_msg in;
            uint64_t rng = 31 * k + (uint64_t)n + 5;
            bool lost = n == 1 && k == 2;

            for (size_t i = 0; i < 6; i++) {
                /* node-b's latencies reach further up each interval: its
                 * kept span widens. */
                fill_dir(&t[i].rd, &rng, 200 + 7 * i + 50 * k * (uint64_t)n, 4096);
                fill_dir(&t[i].wr, &rng, 90 + i, 8192);
                iof_hist_record(&t[i].wr.lat, (UINT64_C(1) << (20 + k + (uint64_t)n)) + i);
                t[i].wr.ios++;
                iof_stats_merge(sum, &t[i]);
            }
            t[4].rd.errors = k + 1;
            t[5].verify_errors = 2 * k + (uint64_t)n;
            sum->rd.errors += k + 1;
            sum->verify_errors += 2 * k + (uint64_t)n;
            for (size_t i = 0; i < 3; i++)
                w[i] = (struct proto_worker_stats){2, &t[2 * i]};
            proto_msg_init(&in, PROTO_MSG_STATS);
            in.u.stats.interval = k;
            in.u.stats.nworkers = 3;
            in.u.stats.workers = w;
            in.u.stats.lost = lost;
            if (n == 1 && k == 0) /* node-b's first report, late */
                mgr_agg_publish_ready(&f.g, 1, false);
            agg_fix_stats(&f, n, &in, ENC_NODE);
            if (!lost && !(n == 1 && k == 0))
                iof_stats_merge(want_all[k], sum);
            if (n == 1 && !lost)
                iof_stats_merge(want_b, sum);
            free(sum);
            free(t);
        }
        mgr_agg_publish_ready(&f.g, 2, false);
    }
    mgr_agg_mark_lost(&f.nodes[1], "lost in the test");
    mgr_agg_publish_ready(&f.g, 1, true);
    mgr_agg_lost(&f.g, &f.nodes[1]);
    agg_fix_end(&f);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(null);
    for (int k = 0; k < 3; k++) {
        if (!cap.all[k])
            fail_msg("no ALL row for interval %d", k);
        assert_true(stats_same(cap.all[k], want_all[k]));
        assert_int_equal(cap.all_reported[k], k == 0 ? 1 : k == 1 ? 2 : 1);
        assert_int_equal(cap.all_lost[k], k == 2);
        free(cap.all[k]);
        free(want_all[k]);
    }
    assert_non_null(cap.node_b);
    assert_true(want_b->rd.lat.count > 0 && want_b->wr.lat.count > 0);
    assert_true(stats_same(cap.node_b, want_b));
    free(cap.node_b);
    free(want_b);
}

/* Every report's shape is checked, also once one was accepted (and kept):
 * a report with another one later in the test is refused by name. */
static void test_agg_shape_each_report(void **state)
{
    struct capture cap = {IOF_BUF_INIT};
    struct mgr_sink sink = {.ops = &cut_ops, .priv = &cap};
    struct proto_worker_stats w[4] = {{2, NULL}, {2, NULL}, {2, NULL}, {2, NULL}};
    struct proto_stats st = {.workers = w, .nworkers = 3};
    struct iof_diag d = {{0}};
    struct agg_fix f;
    (void)state;

    agg_fix_begin(&f, &sink, "a", "b", iof_now_ns());
    assert_int_equal(mgr_agg_check_shape(&f.g, &f.nodes[0], &st, &d), 0);
    assert_int_equal(mgr_agg_check_shape(&f.g, &f.nodes[0], &st, &d), 0);
    w[2].ntargets = 1;
    assert_int_equal(mgr_agg_check_shape(&f.g, &f.nodes[0], &st, &d), IOF_EPROTO);
    assert_string_equal(d.msg, "sent 1 targets for worker 2, the plan gives 2");
    w[2].ntargets = 2;
    st.nworkers = 4;
    assert_int_equal(mgr_agg_check_shape(&f.g, &f.nodes[0], &st, &d), IOF_EPROTO);
    assert_string_equal(d.msg, "sent 4 workers for test 1, the plan gives it 3");
    st.nworkers = 2;
    assert_int_equal(mgr_agg_check_shape(&f.g, &f.nodes[0], &st, &d), IOF_EPROTO);
    assert_string_equal(d.msg, "sent 2 workers for test 1, the plan gives it 3");
    st.nworkers = 3;
    assert_int_equal(mgr_agg_check_shape(&f.g, &f.nodes[0], &st, &d), 0);
    /* The other node: its own check. */
    w[0].ntargets = 3;
    assert_int_equal(mgr_agg_check_shape(&f.g, &f.nodes[1], &st, &d), IOF_EPROTO);
    assert_string_equal(d.msg, "sent 3 targets for worker 0, the plan gives 2");
    agg_fix_end(&f);
    iof_buf_free(&cap.log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_cpu_node),
        cmocka_unit_test(test_cpu_node_exact),
        cmocka_unit_test(test_cpu_node_exact_json),
        cmocka_unit_test(test_same_as_json),
        cmocka_unit_test(test_layout_sparse),
        cmocka_unit_test(test_layout_node),
        cmocka_unit_test(test_layout_node_refused),
        cmocka_unit_test(test_sum_reused_clean),
        cmocka_unit_test(test_not_negotiated),
        cmocka_unit_test(test_version_rules),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_truncations_and_flips),
        cmocka_unit_test(test_encode_refused),
        cmocka_unit_test(test_wire_size),
        cmocka_unit_test(test_agg_same_rows),
        cmocka_unit_test(test_agg_keep_exact),
        cmocka_unit_test(test_agg_interrupted_interval),
        cmocka_unit_test(test_agg_last_interval_waits),
        cmocka_unit_test(test_agg_shape_each_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
