/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_statsbin.c - proto/statsbin: the binary stats body, as a
 * manager decodes it from an agent that negotiated protocol 1.1.
 *
 * Input: a payload, raw; one that does not start with PROTO_STATSBIN_TAG
 * gets it put in front, so mutations are spent on the body. Both decodings
 * run: per target and summed (the manager's). A refused payload must come
 * with IOF_EPROTO or -ENOMEM and a one-line diag. What the summing decoder
 * accepts the per-target one accepts too, with the same I/O counts in all.
 * An accepted payload must encode again (the encoder applies the decoder's
 * rules), and that encoding must be a fixed point: it decodes and encodes
 * to identical bytes. The JSON form of the same message must decode to the
 * same sum, and its layout 3 (a histogram per node) to the same sum bit for
 * bit. An input of layout 3 must be refused per target, and what the summing
 * decoder accepts must add up to its targets' counters.
 */
#include "fuzz.h"

#include "common/err.h"
#include "proto/frame.h"
#include "proto/msg.h"
#include "proto/statsbin.h"

#include <errno.h>
#include <string.h>

static int decode(const uint8_t *p, size_t len, unsigned flags, struct proto_msg *m)
{
    struct iof_diag diag = {{0}};
    int rc = proto_msg_decode_flags(p, len, m, flags | PROTO_DECODE_STATS_BINARY, &diag);

    if (rc) {
        FUZZ_CHECK(rc == IOF_EPROTO || rc == -ENOMEM, "decode returned %d (%s)", rc, diag.msg);
        FUZZ_CHECK(diag.msg[0] != '\0' && !strchr(diag.msg, '\n'),
                   "refused (%d) without a one-line message: \"%s\"", rc, diag.msg);
    } else {
        FUZZ_CHECK(m->type == PROTO_MSG_STATS, "decoded type %d", (int)m->type);
    }
    return rc;
}

static uint8_t *encode(const struct proto_msg *m, unsigned flags, size_t *len)
{
    struct iof_diag diag = {{0}};
    uint8_t *frame = NULL;
    int rc = proto_msg_encode_frame_flags(m, PROTO_FRAME_MAX_LIMIT, flags, &frame, len, &diag);

    FUZZ_CHECK(rc == 0 && frame, "a decoded message does not encode: %d %s", rc, diag.msg);
    return frame;
}

/* A message without workers has no sum (as in the JSON form). */
static uint64_t ios_of(const struct iof_stats *s)
{
    return s ? s->rd.ios + s->wr.ios : 0;
}

static uint64_t bytes_of(const struct iof_stats *s)
{
    return s ? s->rd.bytes + s->wr.bytes : 0;
}

/* FUZZ_SEEDS_VALID set: every input must decode (checks the seeds). */
/* The I/Os of every target's counters (a summed decoding's). */
static uint64_t counts_ios(const struct proto_stats *st)
{
    uint64_t n = 0, k = 0;
    for (size_t w = 0; w < st->nworkers; w++)
        for (size_t t = 0; t < st->workers[w].ntargets; t++, k++)
            n += st->counts[k].rd.ios + st->counts[k].wr.ios;
    return n;
}

static bool hist_same(const struct iof_hist *a, const struct iof_hist *b)
{
    return a->count == b->count && a->sum_ns == b->sum_ns && a->min_ns == b->min_ns &&
           a->max_ns == b->max_ns && !memcmp(a->buckets, b->buckets, sizeof(a->buckets));
}

/* Layout 3 (a histogram per node) is read only summed: what it holds must
 * add up, as the targets' counters say. */
static void check_node(const uint8_t *p, size_t len)
{
    struct proto_msg one, sum;
    int rs = decode(p, len, PROTO_DECODE_SUM_STATS, &sum);

    FUZZ_CHECK(decode(p, len, 0, &one) != 0, "layout 3 decoded per target");
    if (!rs && sum.u.stats.sum)
        FUZZ_CHECK(counts_ios(&sum.u.stats) == ios_of(sum.u.stats.sum),
                   "the sum holds %llu I/Os, the targets' counters %llu",
                   (unsigned long long)ios_of(sum.u.stats.sum),
                   (unsigned long long)counts_ios(&sum.u.stats));
    proto_msg_clear(&one);
    proto_msg_clear(&sum);
}

static void check(const uint8_t *p, size_t len)
{
    struct proto_msg one, sum, again, json, node;
    size_t l1, l2, lj, ln;
    uint8_t *f1, *f2, *fj, *fn;
    int rs, ro;

    if (len > 1 && p[1] == PROTO_STATSBIN_LAYOUT_NODE) {
        check_node(p, len);
        return;
    }
    rs = decode(p, len, PROTO_DECODE_SUM_STATS, &sum);
    ro = decode(p, len, 0, &one);
    FUZZ_CHECK(rs != 0 || ro == 0, "summing accepted what the per-target decoder refused");
    FUZZ_CHECK(ro == 0 || !getenv("FUZZ_SEEDS_VALID"), "refused with FUZZ_SEEDS_VALID set");
    if (ro) {
        proto_msg_clear(&one);
        proto_msg_clear(&sum);
        return;
    }
    if (!rs) {
        uint64_t n = 0;
        for (size_t w = 0; w < one.u.stats.nworkers; w++)
            for (size_t t = 0; t < one.u.stats.workers[w].ntargets; t++)
                n += ios_of(&one.u.stats.workers[w].targets[t]);
        FUZZ_CHECK(n == ios_of(sum.u.stats.sum), "the sum holds %llu I/Os, the targets %llu",
                   (unsigned long long)ios_of(sum.u.stats.sum), (unsigned long long)n);
    }

    f1 = encode(&one, PROTO_ENCODE_STATS_BINARY, &l1);
    FUZZ_CHECK(decode(f1 + PROTO_FRAME_HEADER_SIZE, l1 - PROTO_FRAME_HEADER_SIZE, 0, &again) == 0,
               "our own encoding does not decode");
    f2 = encode(&again, PROTO_ENCODE_STATS_BINARY, &l2);
    FUZZ_CHECK(l1 == l2 && memcmp(f1, f2, l1) == 0, "the binary encoding is not a fixed point");

    /* Layout 3 of the same message sums to exactly the same. */
    fn = encode(&one, PROTO_ENCODE_STATS_BINARY | PROTO_ENCODE_STATS_NODE_HIST, &ln);
    if (!rs) {
        FUZZ_CHECK(decode(fn + PROTO_FRAME_HEADER_SIZE, ln - PROTO_FRAME_HEADER_SIZE,
                          PROTO_DECODE_SUM_STATS, &node) == 0,
                   "layout 3 of an accepted message does not decode");
        FUZZ_CHECK(!sum.u.stats.sum == !node.u.stats.sum, "layout 3 and layout 2 sums differ");
        if (sum.u.stats.sum)
            FUZZ_CHECK(hist_same(&sum.u.stats.sum->rd.lat, &node.u.stats.sum->rd.lat) &&
                           hist_same(&sum.u.stats.sum->wr.lat, &node.u.stats.sum->wr.lat) &&
                           bytes_of(sum.u.stats.sum) == bytes_of(node.u.stats.sum) &&
                           counts_ios(&node.u.stats) == ios_of(node.u.stats.sum),
                       "layout 3 and layout 2 sums differ");
        proto_msg_clear(&node);
    }
    free(fn);

    /* The JSON form of the same message sums to the same I/O. */
    fj = encode(&one, 0, &lj);
    if (!rs) {
        FUZZ_CHECK(decode(fj + PROTO_FRAME_HEADER_SIZE, lj - PROTO_FRAME_HEADER_SIZE,
                          PROTO_DECODE_SUM_STATS, &json) == 0,
                   "the JSON form does not decode");
        FUZZ_CHECK(ios_of(json.u.stats.sum) == ios_of(sum.u.stats.sum) &&
                       bytes_of(json.u.stats.sum) == bytes_of(sum.u.stats.sum),
                   "JSON and binary sums differ");
        proto_msg_clear(&json);
    }
    free(f1);
    free(f2);
    free(fj);
    proto_msg_clear(&again);
    proto_msg_clear(&one);
    proto_msg_clear(&sum);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf;

    if (size > 0 && data[0] == PROTO_STATSBIN_TAG) {
        check(data, size);
        return 0;
    }
    buf = malloc(size + 1);
    FUZZ_CHECK(buf != NULL, "out of memory");
    buf[0] = PROTO_STATSBIN_TAG;
    if (size)
        memcpy(buf + 1, data, size);
    check(buf, size + 1);
    free(buf);
    return 0;
}
