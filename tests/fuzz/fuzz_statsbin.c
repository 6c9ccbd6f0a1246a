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
 * same sum.
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
static void check(const uint8_t *p, size_t len)
{
    struct proto_msg one, sum, again, json;
    size_t l1, l2, lj;
    uint8_t *f1, *f2, *fj;
    int rs = decode(p, len, PROTO_DECODE_SUM_STATS, &sum);
    int ro = decode(p, len, 0, &one);

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
