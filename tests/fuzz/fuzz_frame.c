/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_frame.c - proto/frame: the incremental frame decoder.
 *
 * Input: byte 0 picks the payload limit the decoder starts with and the one
 * it switches to after the first frame (as a connection raises it once the
 * peer's hello is accepted); byte 1 seeds where the stream is cut; the rest
 * is the byte stream.
 *
 * The stream is decoded three ways: in one proto_decoder_feed() call, pulled
 * with proto_decoder_next() from chunks cut at a few data-derived points,
 * and one byte at a time. Each way must agree with a plain reading of the
 * stream: frame i is the header at the end of frame i-1 followed by exactly
 * its payload bytes, never longer than the limit in force, so the frames
 * never hold more bytes than the input; the decoder stops with the error
 * that the first bad header byte calls for (magic on byte 2, version on 3,
 * flags on 4, the length against the limit on 8), or, without error, holds
 * the incomplete rest as pending. Errors are sticky.
 */
#include "fuzz.h"

#include "common/err.h"
#include "proto/frame.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static const size_t limits[] = {
    1, 8, 100, 4096, PROTO_FRAME_MAX_PREAUTH, PROTO_FRAME_MAX_DEFAULT, PROTO_FRAME_MAX_LIMIT};
#define NLIMITS (sizeof(limits) / sizeof(limits[0]))

struct run {
    const uint8_t *stream; /* the whole input stream, for comparison */
    size_t len;
    size_t limit0, limit1; /* before and after the first frame */
    size_t frames;         /* frames seen so far */
    size_t consumed;       /* header + payload bytes of those frames */
    struct proto_decoder *dec;
};

/* The error a header prefix of m (<= 8) bytes calls for, 0 if none yet. */
static int header_verdict(const uint8_t *h, size_t m, size_t limit)
{
    if (m >= 2 && (h[0] != PROTO_FRAME_MAGIC0 || h[1] != PROTO_FRAME_MAGIC1))
        return IOF_EPROTO;
    if (m >= 3 && h[2] != PROTO_FRAME_VERSION)
        return IOF_EVERSION;
    if (m >= 4 && h[3] != 0)
        return IOF_EPROTO;
    if (m == PROTO_FRAME_HEADER_SIZE) {
        size_t len = (size_t)h[4] << 24 | (size_t)h[5] << 16 | (size_t)h[6] << 8 | h[7];
        if (len > limit)
            return IOF_ETOOBIG;
    }
    return 0;
}

/* Checks one frame against the stream and advances the expectation. */
static void frame_check(struct run *r, const struct proto_frame *f)
{
    size_t limit = r->frames ? r->limit1 : r->limit0;
    size_t at = r->consumed;
    uint8_t hdr[PROTO_FRAME_HEADER_SIZE];

    FUZZ_CHECK(f->len <= limit, "frame %zu of %zu bytes over the limit %zu", r->frames, f->len,
               limit);
    FUZZ_CHECK(f->payload != NULL, "frame %zu has a NULL payload", r->frames);
    FUZZ_CHECK(at + PROTO_FRAME_HEADER_SIZE + f->len <= r->len,
               "frames hold more than the %zu input bytes", r->len);
    FUZZ_CHECK(proto_frame_header_encode(hdr, f->len, limit, NULL) == 0,
               "the header of an accepted frame does not encode");
    FUZZ_CHECK(memcmp(hdr, r->stream + at, sizeof(hdr)) == 0,
               "frame %zu (%zu bytes) is not the header at stream byte %zu", r->frames, f->len, at);
    FUZZ_CHECK(memcmp(f->payload, r->stream + at + PROTO_FRAME_HEADER_SIZE, f->len) == 0,
               "frame %zu payload differs from the stream", r->frames);
    r->consumed += PROTO_FRAME_HEADER_SIZE + f->len;
    if (r->frames++ == 0)
        FUZZ_CHECK(proto_decoder_set_limit(r->dec, r->limit1) == 0, "set_limit(%zu) failed",
                   r->limit1);
}

/* Checks how the stream ended: rc is the decoder's last return value. */
static void end_check(struct run *r, int rc)
{
    size_t rest = r->len - r->consumed;
    size_t m = rest < PROTO_FRAME_HEADER_SIZE ? rest : PROTO_FRAME_HEADER_SIZE;
    size_t limit = r->frames ? r->limit1 : r->limit0;
    int want = header_verdict(r->stream + r->consumed, m, limit);

    FUZZ_CHECK(rc == want, "decoder ended with %d after %zu frames, the stream calls for %d", rc,
               r->frames, want);
    if (rc) {
        FUZZ_CHECK(proto_decoder_error(r->dec)[0] != '\0', "error %d without a message", rc);
        const uint8_t *p = r->stream;
        size_t n = r->len;
        struct proto_frame f;
        FUZZ_CHECK(proto_decoder_next(r->dec, &p, &n, &f) == rc, "error %d is not sticky", rc);
        return;
    }
    FUZZ_CHECK(proto_decoder_error(r->dec)[0] == '\0', "a healthy decoder reports an error");
    FUZZ_CHECK(proto_decoder_pending(r->dec) == rest, "pending %zu, %zu bytes after the frames",
               proto_decoder_pending(r->dec), rest);
    if (rest >= PROTO_FRAME_HEADER_SIZE) {
        const uint8_t *h = r->stream + r->consumed;
        size_t len = (size_t)h[4] << 24 | (size_t)h[5] << 16 | (size_t)h[6] << 8 | h[7];
        FUZZ_CHECK(len > rest - PROTO_FRAME_HEADER_SIZE,
                   "a complete frame of %zu bytes was not handed out", len);
    }
}

static void run_init(struct run *r, struct proto_decoder *dec, const uint8_t *s, size_t n,
                     size_t limit0, size_t limit1)
{
    *r = (struct run){.stream = s, .len = n, .limit0 = limit0, .limit1 = limit1, .dec = dec};
    FUZZ_CHECK(proto_decoder_init(dec, limit0) == 0, "init(%zu) failed", limit0);
}

static int feed_cb(void *ctx, const struct proto_frame *f)
{
    frame_check(ctx, f);
    return 0;
}

/* Pulls every frame out of one chunk; returns the last result (0 or error). */
static int pull(struct run *r, const uint8_t *chunk, size_t n)
{
    struct proto_frame f;
    int rc;

    while ((rc = proto_decoder_next(r->dec, &chunk, &n, &f)) == 1)
        frame_check(r, &f);
    FUZZ_CHECK(rc != 0 || n == 0, "decoder returned 0 with %zu bytes left", n);
    return rc;
}

static uint32_t xorshift(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct proto_decoder dec;
    struct run r;
    int rc;

    if (size < 2)
        return 0;
    size_t limit0 = limits[data[0] % NLIMITS], limit1 = limits[data[0] / NLIMITS % NLIMITS];
    const uint8_t *s = data + 2;
    size_t n = size - 2;

    /* Limits outside 1..PROTO_FRAME_MAX_LIMIT are refused, and stay so. */
    FUZZ_CHECK(proto_decoder_init(&dec, 0) == -EINVAL, "limit 0 accepted");
    FUZZ_CHECK(proto_decoder_set_limit(&dec, PROTO_FRAME_MAX_LIMIT + 1) == -EINVAL,
               "limit over PROTO_FRAME_MAX_LIMIT accepted");
    proto_decoder_free(&dec);

    /* 1. The whole stream in one feed. */
    run_init(&r, &dec, s, n, limit0, limit1);
    rc = proto_decoder_feed(&dec, s, n, feed_cb, &r);
    end_check(&r, rc);
    proto_decoder_free(&dec);

    /* 2. Cut at up to 4 points derived from byte 1 and the length. */
    size_t cuts[6] = {0};
    size_t ncuts = 1 + data[1] % 4;
    uint32_t seed = (uint32_t)data[1] << 16 ^ (uint32_t)n ^ 0x9e3779b9u;
    for (size_t i = 1; i <= ncuts; i++)
        cuts[i] = xorshift(&seed) % (n + 1);
    cuts[ncuts + 1] = n;
    qsort(cuts + 1, ncuts, sizeof(cuts[0]), cmp_size);
    run_init(&r, &dec, s, n, limit0, limit1);
    rc = 0;
    for (size_t i = 0; i <= ncuts && rc == 0; i++)
        rc = pull(&r, s + cuts[i], cuts[i + 1] - cuts[i]);
    end_check(&r, rc);
    proto_decoder_free(&dec);

    /* 3. One byte at a time. */
    run_init(&r, &dec, s, n, limit0, limit1);
    rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = pull(&r, s + i, 1);
    end_check(&r, rc);
    proto_decoder_free(&dec);
    return 0;
}
