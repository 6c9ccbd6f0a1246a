/* SPDX-License-Identifier: Apache-2.0 */
/* proto/frame.h - the frame layer of the iofleet wire protocol.
 *
 * A frame is an 8-byte header followed by the payload (docs/protocol.md):
 *
 *   byte 0-1  magic 'I' 'F'
 *   byte 2    frame version (PROTO_FRAME_VERSION)
 *   byte 3    flags (0; every bit is reserved and refused when set)
 *   byte 4-7  payload length, unsigned 32-bit big-endian
 *
 * The payload is a UTF-8 JSON object (see proto/msg.h); this layer does not
 * look inside it. Everything here is pure: bytes in, frames out, no I/O, no
 * clock, no libuv, so it can be unit-tested and fuzzed. The length is
 * checked against the receiver's limit before anything is allocated.
 */
#ifndef IOF_PROTO_FRAME_H
#define IOF_PROTO_FRAME_H

#include "common/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_FRAME_HEADER_SIZE 8
#define PROTO_FRAME_MAGIC0 'I'
#define PROTO_FRAME_MAGIC1 'F'
#define PROTO_FRAME_VERSION 1

/* Payload limits. A receiver uses PROTO_FRAME_MAX_PREAUTH until the peer is
 * authenticated (its hello accepted), then PROTO_FRAME_MAX_DEFAULT: an
 * unauthenticated peer can make us buffer at most 64 KiB. An agent's hello,
 * inventory included, must therefore fit in PROTO_FRAME_MAX_PREAUTH.
 * No limit may exceed PROTO_FRAME_MAX_LIMIT. */
#define PROTO_FRAME_MAX_PREAUTH ((size_t)64 << 10)
#define PROTO_FRAME_MAX_DEFAULT ((size_t)1 << 20)
#define PROTO_FRAME_MAX_LIMIT ((size_t)64 << 20)

/* The start of the decoder's error for a TLS alert on a plain connection:
 * a TLS peer (server) answered our plain bytes; the manager and the agent
 * say which of them expects TLS instead (manager/agent_conn.c, dynamo/agent.c). */
#define PROTO_WHY_EXPECTS_TLS "TLS alert received on a plain connection: the peer expects TLS"

/* What the first bytes of a stream look like. */
enum proto_sniff {
    PROTO_SNIFF_MORE,    /* fewer than 2 bytes: cannot tell yet */
    PROTO_SNIFF_IOFLEET, /* 'I' 'F': a plain iofleet frame */
    PROTO_SNIFF_TLS,     /* a TLS record (0x14..0x17 0x03) */
    PROTO_SNIFF_OTHER,   /* anything else (HTTP, SSH, noise) */
};

/* Classifies the start of a stream: a TLS port uses it to tell a plain
 * iofleet peer from a TLS ClientHello, the decoder to name what it got.
 * Borrows `bytes` (n may be 0). */
enum proto_sniff proto_frame_sniff(const uint8_t *bytes, size_t n);

/* Writes the header of a frame carrying `payload_len` bytes into `hdr`.
 * Returns 0, or IOF_ETOOBIG (diag: "frame of N bytes exceeds the limit of M")
 * when payload_len > max_payload or does not fit in 32 bits. */
int proto_frame_header_encode(uint8_t hdr[PROTO_FRAME_HEADER_SIZE], size_t payload_len,
                              size_t max_payload, struct iof_diag *diag);

/* Writes header + payload into the caller's buffer `out` of `out_cap` bytes;
 * *out_len receives the frame size (PROTO_FRAME_HEADER_SIZE + len), also when
 * the buffer is too small. Borrows payload and out. Returns 0, IOF_ETOOBIG
 * (as above) or -ENOBUFS when out_cap < *out_len. */
int proto_frame_encode(const void *payload, size_t len, size_t max_payload, uint8_t *out,
                       size_t out_cap, size_t *out_len, struct iof_diag *diag);

/* Like proto_frame_encode() into a new buffer: *out is new, free() it.
 * Returns 0, IOF_ETOOBIG or -ENOMEM (then *out is NULL). */
int proto_frame_encode_alloc(const void *payload, size_t len, size_t max_payload, uint8_t **out,
                             size_t *out_len, struct iof_diag *diag);

/* One complete frame handed out by the decoder. `payload` is borrowed: it
 * points into the bytes the caller fed or into the decoder's buffer, is NOT
 * NUL-terminated, and stays valid until the next call on the decoder (and,
 * for the first case, while the caller's bytes are unchanged). */
struct proto_frame {
    const uint8_t *payload;
    size_t len;
};

/* Incremental frame decoder for one byte stream. Caller-owned (embed it in
 * a connection); all fields are private. It accepts the stream cut into any
 * chunks (one byte at a time, many frames at once, a frame split anywhere).
 * Errors are sticky: after the first one, every call returns it again and
 * proto_decoder_error() explains it; the connection must be closed. */
struct proto_decoder {
    size_t limit;                         /* max payload bytes */
    uint8_t hdr[PROTO_FRAME_HEADER_SIZE]; /* header being assembled */
    size_t hdr_have;                      /* header bytes in hdr */
    size_t need;                          /* payload length of the current frame */
    size_t have;                          /* payload bytes in buf */
    uint8_t *buf;                         /* payload assembly buffer, owned */
    size_t cap;                           /* allocated size of buf */
    bool handed_out;                      /* the last call returned a frame */
    int err;                              /* sticky error, 0 when healthy */
    struct iof_diag diag;                 /* detail of err */
};

/* Prepares `dec` with a payload limit (1..PROTO_FRAME_MAX_LIMIT). Allocates
 * nothing. Returns 0 or -EINVAL (dec is then still safe to free). */
int proto_decoder_init(struct proto_decoder *dec, size_t max_payload);

/* Changes the limit for frames whose header is not complete yet (raise it
 * once the peer is authenticated). Returns 0 or -EINVAL (limit unchanged). */
int proto_decoder_set_limit(struct proto_decoder *dec, size_t max_payload);

/* Frees the decoder's buffer. Accepts NULL and an initialised or failed
 * decoder; dec may be initialised again afterwards. */
void proto_decoder_free(struct proto_decoder *dec);

/* Decodes at most one frame from the bytes at *data, advancing *data and
 * *len past what it consumed. Returns 1 with *frame filled when a frame is
 * complete (more bytes may remain: call again), 0 when every byte was
 * consumed without completing one (a partial frame is kept), or the sticky
 * error: IOF_EPROTO (bad magic, TLS or other non-iofleet peer, reserved
 * flags), IOF_EVERSION (frame version), IOF_ETOOBIG (length over the limit;
 * refused from the header alone, before any allocation) or -ENOMEM. */
int proto_decoder_next(struct proto_decoder *dec, const uint8_t **data, size_t *len,
                       struct proto_frame *frame);

/* Called by proto_decoder_feed() for each frame; frame is borrowed for the
 * call. Return 0 to go on; anything else stops the feed and is returned. */
typedef int (*proto_frame_cb)(void *ctx, const struct proto_frame *frame);

/* Feeds one chunk and calls `cb` for every frame it completes, in order.
 * Borrows data. Returns 0 when the whole chunk was consumed, the decoder's
 * sticky error, or the first non-zero value of cb; the rest of the chunk is
 * then dropped and the decoder fails with that value (the stream is out of
 * sync, so it must be closed). */
int proto_decoder_feed(struct proto_decoder *dec, const void *data, size_t len, proto_frame_cb cb,
                       void *ctx);

/* The sticky error's detail ("bad frame magic 0x4745 (not an iofleet peer?
 * HTTP?)"), or "" while healthy. Borrowed from dec. */
const char *proto_decoder_error(const struct proto_decoder *dec);

/* Bytes of an incomplete frame held by the decoder (0 between frames): lets
 * a connection tell a clean EOF from a truncated frame. */
size_t proto_decoder_pending(const struct proto_decoder *dec);

#endif
