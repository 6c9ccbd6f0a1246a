/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_frame.c - proto/frame: encoding, and the incremental
 * decoder on split, merged, truncated, oversized and foreign input.
 *
 * Random data comes from a fixed-seed splitmix64 so every run feeds the
 * same stream and the same chunk boundaries. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "proto/frame.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct rng {
    uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(struct rng *r, size_t n)
{
    return (size_t)(rng_next(r) % n);
}

/* ---- a stream of frames and what a decoder made of it ------------------ */

#define NFRAMES 1000

struct stream {
    uint8_t *bytes;
    size_t len;
    size_t off[NFRAMES]; /* payload offset of frame i in bytes */
    size_t plen[NFRAMES];
};

/* 1000 frames with random payload sizes: mostly small, some empty, some
 * near the 64 KiB test limit, so both decoder paths and the buffer
 * release are exercised. */
static void stream_make(struct stream *st, uint64_t seed, size_t limit)
{
    struct rng r = {seed};
    size_t cap = 0;
    for (int i = 0; i < NFRAMES; i++) {
        size_t kind = rng_below(&r, 100);
        st->plen[i] = kind < 5 ? 0 : kind < 95 ? rng_below(&r, 2048) : rng_below(&r, limit + 1);
        cap += PROTO_FRAME_HEADER_SIZE + st->plen[i];
    }
    st->bytes = test_malloc(cap);
    st->len = 0;
    for (int i = 0; i < NFRAMES; i++) {
        uint8_t *payload = test_malloc(st->plen[i] ? st->plen[i] : 1);
        for (size_t k = 0; k < st->plen[i]; k++)
            payload[k] = (uint8_t)rng_next(&r);
        size_t n;
        assert_int_equal(proto_frame_encode(payload, st->plen[i], limit, st->bytes + st->len,
                                            cap - st->len, &n, NULL),
                         0);
        assert_int_equal(n, PROTO_FRAME_HEADER_SIZE + st->plen[i]);
        st->off[i] = st->len + PROTO_FRAME_HEADER_SIZE;
        st->len += n;
        test_free(payload);
    }
    assert_int_equal(st->len, cap);
}

static void stream_free(struct stream *st)
{
    test_free(st->bytes);
}

struct sink {
    const struct stream *st;
    int got;
};

static void sink_check(struct sink *s, const struct proto_frame *f)
{
    assert_true(s->got < NFRAMES);
    assert_int_equal(f->len, s->st->plen[s->got]);
    assert_non_null(f->payload);
    if (f->len)
        assert_memory_equal(f->payload, s->st->bytes + s->st->off[s->got], f->len);
    s->got++;
}

static int sink_cb(void *ctx, const struct proto_frame *f)
{
    sink_check(ctx, f);
    return 0;
}

enum chunking { ONE_BYTE, RANDOM_SPLITS, SMALL_SPLITS, ALL_AT_ONCE };

/* Feeds the stream in the given chunking, through the pull API
 * (proto_decoder_next) or the callback API (proto_decoder_feed). */
static void stream_decode(const struct stream *st, size_t limit, enum chunking how, uint64_t seed,
                          bool use_feed)
{
    struct proto_decoder dec;
    struct sink sink = {.st = st};
    struct rng r = {seed};
    assert_int_equal(proto_decoder_init(&dec, limit), 0);
    size_t pos = 0;
    while (pos < st->len) {
        size_t n;
        switch (how) {
        case ONE_BYTE:
            n = 1;
            break;
        case RANDOM_SPLITS:
            n = 1 + rng_below(&r, 3 * 4096);
            break;
        case SMALL_SPLITS:
            n = 1 + rng_below(&r, 16);
            break;
        default:
            n = st->len;
            break;
        }
        if (n > st->len - pos)
            n = st->len - pos;
        if (use_feed) {
            assert_int_equal(proto_decoder_feed(&dec, st->bytes + pos, n, sink_cb, &sink), 0);
        } else {
            const uint8_t *p = st->bytes + pos;
            size_t left = n;
            struct proto_frame f;
            int rc;
            while ((rc = proto_decoder_next(&dec, &p, &left, &f)) == 1)
                sink_check(&sink, &f);
            assert_int_equal(rc, 0);
            assert_int_equal(left, 0);
        }
        pos += n;
    }
    assert_int_equal(sink.got, NFRAMES);
    assert_int_equal(proto_decoder_pending(&dec), 0);
    assert_string_equal(proto_decoder_error(&dec), "");
    proto_decoder_free(&dec);
}

static void test_stream_every_chunking(void **state)
{
    (void)state;
    const size_t limit = 64 << 10;
    struct stream st;
    stream_make(&st, 42, limit);
    for (int use_feed = 0; use_feed <= 1; use_feed++) {
        stream_decode(&st, limit, ALL_AT_ONCE, 0, use_feed);
        stream_decode(&st, limit, ONE_BYTE, 0, use_feed);
        for (uint64_t seed = 1; seed <= 5; seed++) {
            stream_decode(&st, limit, RANDOM_SPLITS, seed, use_feed);
            stream_decode(&st, limit, SMALL_SPLITS, seed, use_feed);
        }
    }
    stream_free(&st);
}

/* ---- encoding ---------------------------------------------------------- */

static void test_header_layout(void **state)
{
    (void)state;
    uint8_t h[PROTO_FRAME_HEADER_SIZE];
    assert_int_equal(proto_frame_header_encode(h, 0x01020304, PROTO_FRAME_MAX_LIMIT, NULL), 0);
    const uint8_t want[] = {'I', 'F', 1, 0, 0x01, 0x02, 0x03, 0x04};
    assert_memory_equal(h, want, sizeof(want));

    struct iof_diag d = {{0}};
    assert_int_equal(proto_frame_header_encode(h, 1025, 1024, &d), IOF_ETOOBIG);
    assert_string_equal(d.msg, "frame of 1025 bytes exceeds the limit of 1024");
    assert_int_equal(proto_frame_header_encode(h, 1024, 1024, &d), 0);
}

static void test_encode_round_trip(void **state)
{
    (void)state;
    const char *json = "{\"type\":\"heartbeat\",\"seq\":1,\"sent_ns\":2}";
    size_t len = strlen(json), n = 0;
    uint8_t small[16];
    struct iof_diag d = {{0}};
    assert_int_equal(proto_frame_encode(json, len, 1024, small, sizeof(small), &n, &d), -ENOBUFS);
    assert_int_equal(n, PROTO_FRAME_HEADER_SIZE + len);

    uint8_t *frame = NULL;
    assert_int_equal(proto_frame_encode_alloc(json, len, 1024, &frame, &n, NULL), 0);
    assert_int_equal(n, PROTO_FRAME_HEADER_SIZE + len);
    assert_int_equal(frame[7], len);

    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_PREAUTH), 0);
    const uint8_t *p = frame;
    size_t left = n;
    struct proto_frame f;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
    assert_int_equal(left, 0);
    assert_int_equal(f.len, len);
    assert_memory_equal(f.payload, json, len);
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 0);
    proto_decoder_free(&dec);
    free(frame);

    assert_int_equal(proto_frame_encode_alloc(json, len, 8, &frame, &n, &d), IOF_ETOOBIG);
    assert_null(frame);
}

static void test_empty_payload(void **state)
{
    (void)state;
    uint8_t buf[3 * PROTO_FRAME_HEADER_SIZE];
    size_t n;
    for (int i = 0; i < 3; i++)
        assert_int_equal(proto_frame_encode(NULL, 0, 1, buf + i * PROTO_FRAME_HEADER_SIZE,
                                            PROTO_FRAME_HEADER_SIZE, &n, NULL),
                         0);
    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, 1), 0);
    const uint8_t *p = buf;
    size_t left = sizeof(buf);
    struct proto_frame f;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
        assert_int_equal(f.len, 0);
        assert_non_null(f.payload);
    }
    assert_int_equal(left, 0);
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 0);
    /* The same, split inside the header. */
    p = buf;
    left = 5;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 0);
    left = 3;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
    assert_int_equal(f.len, 0);
    proto_decoder_free(&dec);
}

/* ---- truncation -------------------------------------------------------- */

static void test_truncated_waits(void **state)
{
    (void)state;
    const char payload[] = "{\"type\":\"bye\",\"reason\":\"done\"}";
    size_t len = sizeof(payload) - 1, n;
    uint8_t frame[64];
    assert_int_equal(proto_frame_encode(payload, len, 1024, frame, sizeof(frame), &n, NULL), 0);

    /* Every proper prefix: no frame, no error, everything consumed and
     * held; the rest completes the frame. */
    for (size_t cut = 0; cut < n; cut++) {
        struct proto_decoder dec;
        assert_int_equal(proto_decoder_init(&dec, 1024), 0);
        const uint8_t *p = frame;
        size_t left = cut;
        struct proto_frame f;
        assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 0);
        assert_int_equal(left, 0);
        assert_int_equal(proto_decoder_pending(&dec), cut);
        assert_string_equal(proto_decoder_error(&dec), "");
        left = n - cut;
        assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
        assert_int_equal(f.len, len);
        assert_memory_equal(f.payload, payload, len);
        assert_int_equal(proto_decoder_pending(&dec), 0);
        proto_decoder_free(&dec);
    }
}

/* ---- limits ------------------------------------------------------------ */

static int expect_error(struct proto_decoder *dec, const uint8_t *bytes, size_t n)
{
    const uint8_t *p = bytes;
    size_t left = n;
    struct proto_frame f;
    int rc;
    while ((rc = proto_decoder_next(dec, &p, &left, &f)) == 1)
        ;
    return rc;
}

static void test_oversized_refused_before_allocation(void **state)
{
    (void)state;
    /* A header announcing 4 GiB - 1 and no payload at all: refused from the
     * header alone, with nothing allocated. */
    const uint8_t hdr[] = {'I', 'F', 1, 0, 0xff, 0xff, 0xff, 0xff};
    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_DEFAULT), 0);
    assert_int_equal(expect_error(&dec, hdr, sizeof(hdr)), IOF_ETOOBIG);
    assert_string_equal(proto_decoder_error(&dec),
                        "frame of 4294967295 bytes exceeds the limit of 1048576");
    assert_null(dec.buf);
    assert_int_equal(dec.cap, 0);

    /* The same header fed a byte at a time. */
    proto_decoder_free(&dec);
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_DEFAULT), 0);
    int rc = 0;
    for (size_t i = 0; i < sizeof(hdr) && rc == 0; i++)
        rc = expect_error(&dec, hdr + i, 1);
    assert_int_equal(rc, IOF_ETOOBIG);
    assert_null(dec.buf);

    /* Sticky: a valid frame afterwards is refused with the same error. */
    const uint8_t ok[] = {'I', 'F', 1, 0, 0, 0, 0, 2, '{', '}'};
    assert_int_equal(expect_error(&dec, ok, sizeof(ok)), IOF_ETOOBIG);
    assert_string_equal(proto_decoder_error(&dec),
                        "frame of 4294967295 bytes exceeds the limit of 1048576");
    proto_decoder_free(&dec);

    /* 123456789 bytes against the default limit: the brief's example. */
    const uint8_t big[] = {'I', 'F', 1, 0, 0x07, 0x5b, 0xcd, 0x15};
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_DEFAULT), 0);
    assert_int_equal(expect_error(&dec, big, sizeof(big)), IOF_ETOOBIG);
    assert_string_equal(proto_decoder_error(&dec),
                        "frame of 123456789 bytes exceeds the limit of 1048576");
    proto_decoder_free(&dec);
}

static void frame_of(size_t len, uint8_t **out, size_t *out_len)
{
    uint8_t *payload = test_calloc(1, len + 1);
    memset(payload, 'x', len);
    assert_int_equal(
        proto_frame_encode_alloc(payload, len, PROTO_FRAME_MAX_LIMIT, out, out_len, NULL), 0);
    test_free(payload);
}

static void test_limit_exact(void **state)
{
    (void)state;
    const size_t limit = 16 << 10;
    uint8_t *frame;
    size_t n;
    struct proto_decoder dec;
    struct proto_frame f;

    frame_of(limit, &frame, &n);
    for (int split = 0; split <= 1; split++) {
        assert_int_equal(proto_decoder_init(&dec, limit), 0);
        const uint8_t *p = frame;
        size_t left = split ? 100 : n;
        int rc = proto_decoder_next(&dec, &p, &left, &f);
        if (split) {
            assert_int_equal(rc, 0);
            left = n - 100;
            rc = proto_decoder_next(&dec, &p, &left, &f);
        }
        assert_int_equal(rc, 1);
        assert_int_equal(f.len, limit);
        proto_decoder_free(&dec);
    }
    free(frame);

    frame_of(limit + 1, &frame, &n);
    assert_int_equal(proto_decoder_init(&dec, limit), 0);
    assert_int_equal(expect_error(&dec, frame, n), IOF_ETOOBIG);
    assert_string_equal(proto_decoder_error(&dec),
                        "frame of 16385 bytes exceeds the limit of 16384");
    proto_decoder_free(&dec);

    /* Raising the limit after authentication lets the same frame in. */
    assert_int_equal(proto_decoder_init(&dec, limit), 0);
    assert_int_equal(proto_decoder_set_limit(&dec, PROTO_FRAME_MAX_DEFAULT), 0);
    const uint8_t *p = frame;
    size_t left = n;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
    assert_int_equal(f.len, limit + 1);
    proto_decoder_free(&dec);
    free(frame);
}

static void test_limit_bounds(void **state)
{
    (void)state;
    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, 0), -EINVAL);
    proto_decoder_free(&dec);
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_LIMIT + 1), -EINVAL);
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_LIMIT), 0);
    assert_int_equal(proto_decoder_set_limit(&dec, 0), -EINVAL);
    assert_int_equal(dec.limit, PROTO_FRAME_MAX_LIMIT);
    proto_decoder_free(&dec);
    proto_decoder_free(NULL);
}

/* A big frame's buffer is released once handed out; small ones are kept. */
static void test_buffer_release(void **state)
{
    (void)state;
    uint8_t *big, *small;
    size_t nbig, nsmall;
    frame_of(200 << 10, &big, &nbig);
    frame_of(100, &small, &nsmall);
    struct proto_decoder dec;
    struct proto_frame f;
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_DEFAULT), 0);
    const uint8_t *p = big;
    size_t left = 10;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 0);
    left = nbig - 10;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
    assert_int_equal(f.len, 200 << 10);
    assert_true(dec.cap >= 200 << 10);
    p = small;
    left = 10;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 0);
    assert_true(dec.cap < 200 << 10);
    left = nsmall - 10;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
    assert_int_equal(f.len, 100);
    proto_decoder_free(&dec);
    free(big);
    free(small);
}

/* ---- strangers on the port --------------------------------------------- */

static void check_refused(const void *bytes, size_t n, int want_rc, const char *want_msg)
{
    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_PREAUTH), 0);
    assert_int_equal(expect_error(&dec, bytes, n), want_rc);
    assert_string_equal(proto_decoder_error(&dec), want_msg);
    assert_null(dec.buf);
    proto_decoder_free(&dec);
}

static void test_bad_magic(void **state)
{
    (void)state;
    const char *http = "GET / HTTP/1.1\r\nHost: node1:7066\r\n\r\n";
    check_refused(http, strlen(http), IOF_EPROTO,
                  "bad frame magic 0x4745 (not an iofleet peer? HTTP?)");
    /* Refused on the second byte: no need to wait for a whole header. */
    check_refused("GE", 2, IOF_EPROTO, "bad frame magic 0x4745 (not an iofleet peer? HTTP?)");
    check_refused("SSH-2.0-OpenSSH_9.2\r\n", 21, IOF_EPROTO,
                  "bad frame magic 0x5353 (not an iofleet peer? SSH?)");
    const uint8_t noise[] = {0x00, 0x01, 1, 0, 0, 0, 0, 0};
    check_refused(noise, sizeof(noise), IOF_EPROTO,
                  "bad frame magic 0x0001 (not an iofleet peer?)");
    const uint8_t half[] = {'I', 'G'};
    check_refused(half, sizeof(half), IOF_EPROTO, "bad frame magic 0x4947 (not an iofleet peer?)");

    /* One byte is not enough to judge. */
    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, 64), 0);
    assert_int_equal(expect_error(&dec, (const uint8_t *)"G", 1), 0);
    assert_int_equal(expect_error(&dec, (const uint8_t *)"E", 1), IOF_EPROTO);
    proto_decoder_free(&dec);
}

static void test_tls_detected(void **state)
{
    (void)state;
    /* The start of a TLS 1.3 ClientHello record. */
    const uint8_t hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03};
    check_refused(hello, sizeof(hello), IOF_EPROTO,
                  "TLS handshake received on a plain connection (the peer uses TLS: configure "
                  "TLS on this side, or pass --insecure to both)");
    const uint8_t alert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28};
    check_refused(alert, sizeof(alert), IOF_EPROTO,
                  "TLS alert received on a plain connection: the peer expects TLS (configure "
                  "TLS on this side, or pass --insecure to both)");
    const uint8_t data[] = {0x17, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28};
    check_refused(data, sizeof(data), IOF_EPROTO,
                  "TLS record (content type 0x17) received on a plain connection");

    assert_int_equal(proto_frame_sniff(hello, 1), PROTO_SNIFF_MORE);
    assert_int_equal(proto_frame_sniff(hello, sizeof(hello)), PROTO_SNIFF_TLS);
    assert_int_equal(proto_frame_sniff((const uint8_t *)"IF", 2), PROTO_SNIFF_IOFLEET);
    assert_int_equal(proto_frame_sniff((const uint8_t *)"GET", 3), PROTO_SNIFF_OTHER);
}

static void test_bad_version_and_flags(void **state)
{
    (void)state;
    const uint8_t v2[] = {'I', 'F', 2, 0, 0, 0, 0, 2, '{', '}'};
    check_refused(v2, sizeof(v2), IOF_EVERSION,
                  "unsupported frame version 2 (this build speaks frame version 1)");
    const uint8_t flags[] = {'I', 'F', 1, 0x80, 0, 0, 0, 2, '{', '}'};
    check_refused(flags, sizeof(flags), IOF_EPROTO,
                  "reserved frame flags 0x80 set (must be 0 in frame version 1)");
}

/* A bad frame after good ones: the good ones come out, then the error. */
static void test_error_after_good_frames(void **state)
{
    (void)state;
    uint8_t buf[64];
    size_t n, len = 0;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(proto_frame_encode("{}", 2, 64, buf + len, sizeof(buf) - len, &n, NULL),
                         0);
        len += n;
    }
    memcpy(buf + len, "GET /", 5);
    len += 5;
    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, 64), 0);
    const uint8_t *p = buf;
    size_t left = len;
    struct proto_frame f;
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), 1);
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), IOF_EPROTO);
    assert_int_equal(proto_decoder_next(&dec, &p, &left, &f), IOF_EPROTO);
    proto_decoder_free(&dec);
}

static int stop_after_one(void *ctx, const struct proto_frame *f)
{
    (void)f;
    int *count = ctx;
    return ++*count == 1 ? IOF_ELOST : 0;
}

static void test_feed_stops_on_callback(void **state)
{
    (void)state;
    uint8_t buf[64];
    size_t n, len = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(proto_frame_encode("{}", 2, 64, buf + len, sizeof(buf) - len, &n, NULL),
                         0);
        len += n;
    }
    struct proto_decoder dec;
    int count = 0;
    assert_int_equal(proto_decoder_init(&dec, 64), 0);
    assert_int_equal(proto_decoder_feed(&dec, buf, len, stop_after_one, &count), IOF_ELOST);
    assert_int_equal(count, 1);
    assert_int_equal(proto_decoder_feed(&dec, buf, len, stop_after_one, &count), IOF_ELOST);
    assert_int_equal(count, 1);
    assert_string_equal(proto_decoder_error(&dec), "frame handler stopped the stream: peer lost");
    proto_decoder_free(&dec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_layout),
        cmocka_unit_test(test_encode_round_trip),
        cmocka_unit_test(test_empty_payload),
        cmocka_unit_test(test_stream_every_chunking),
        cmocka_unit_test(test_truncated_waits),
        cmocka_unit_test(test_oversized_refused_before_allocation),
        cmocka_unit_test(test_limit_exact),
        cmocka_unit_test(test_limit_bounds),
        cmocka_unit_test(test_buffer_release),
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_tls_detected),
        cmocka_unit_test(test_bad_version_and_flags),
        cmocka_unit_test(test_error_after_good_frames),
        cmocka_unit_test(test_feed_stops_on_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
