/* SPDX-License-Identifier: Apache-2.0 */
/* proto/frame.c - frame header encoding and the incremental decoder. */
#include "proto/frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Buffers up to this size are kept between frames; a larger one (a rare big
 * message) is released once its frame has been handed out, so an idle
 * connection never pins a megabyte. */
#define DECODER_KEEP_BYTES ((size_t)64 << 10)

static const uint8_t empty_payload[1];

enum proto_sniff proto_frame_sniff(const uint8_t *bytes, size_t n)
{
    if (n < 2)
        return PROTO_SNIFF_MORE;
    if (bytes[0] == PROTO_FRAME_MAGIC0 && bytes[1] == PROTO_FRAME_MAGIC1)
        return PROTO_SNIFF_IOFLEET;
    /* TLS record: content type 20..23 (change_cipher_spec, alert,
     * handshake, application_data), then major version 3. */
    if (bytes[0] >= 0x14 && bytes[0] <= 0x17 && bytes[1] == 0x03)
        return PROTO_SNIFF_TLS;
    return PROTO_SNIFF_OTHER;
}

static int too_big(struct iof_diag *diag, size_t len, size_t limit)
{
    return iof_diag_set(diag, IOF_ETOOBIG, "frame of %zu bytes exceeds the limit of %zu", len,
                        limit);
}

int proto_frame_header_encode(uint8_t hdr[PROTO_FRAME_HEADER_SIZE], size_t payload_len,
                              size_t max_payload, struct iof_diag *diag)
{
    if (payload_len > max_payload || payload_len > UINT32_MAX)
        return too_big(diag, payload_len, max_payload < UINT32_MAX ? max_payload : UINT32_MAX);
    hdr[0] = PROTO_FRAME_MAGIC0;
    hdr[1] = PROTO_FRAME_MAGIC1;
    hdr[2] = PROTO_FRAME_VERSION;
    hdr[3] = 0;
    hdr[4] = (uint8_t)(payload_len >> 24);
    hdr[5] = (uint8_t)(payload_len >> 16);
    hdr[6] = (uint8_t)(payload_len >> 8);
    hdr[7] = (uint8_t)payload_len;
    return 0;
}

int proto_frame_encode(const void *payload, size_t len, size_t max_payload, uint8_t *out,
                       size_t out_cap, size_t *out_len, struct iof_diag *diag)
{
    uint8_t hdr[PROTO_FRAME_HEADER_SIZE] = {0};
    int rc = proto_frame_header_encode(hdr, len, max_payload, diag);
    if (rc)
        return rc;
    *out_len = PROTO_FRAME_HEADER_SIZE + len;
    if (out_cap < *out_len)
        return iof_diag_set(diag, -ENOBUFS, "frame of %zu bytes does not fit in a %zu-byte buffer",
                            *out_len, out_cap);
    memcpy(out, hdr, sizeof(hdr));
    if (len)
        memcpy(out + PROTO_FRAME_HEADER_SIZE, payload, len);
    return 0;
}

int proto_frame_encode_alloc(const void *payload, size_t len, size_t max_payload, uint8_t **out,
                             size_t *out_len, struct iof_diag *diag)
{
    uint8_t hdr[PROTO_FRAME_HEADER_SIZE] = {0};
    *out = NULL;
    int rc = proto_frame_header_encode(hdr, len, max_payload, diag);
    if (rc)
        return rc;
    uint8_t *buf = malloc(PROTO_FRAME_HEADER_SIZE + len);
    if (!buf)
        return iof_diag_set(diag, -ENOMEM, "out of memory for a frame of %zu bytes", len);
    memcpy(buf, hdr, sizeof(hdr));
    if (len)
        memcpy(buf + PROTO_FRAME_HEADER_SIZE, payload, len);
    *out = buf;
    *out_len = PROTO_FRAME_HEADER_SIZE + len;
    return 0;
}

static bool limit_valid(size_t max_payload)
{
    return max_payload >= 1 && max_payload <= PROTO_FRAME_MAX_LIMIT;
}

int proto_decoder_init(struct proto_decoder *dec, size_t max_payload)
{
    memset(dec, 0, sizeof(*dec));
    if (!limit_valid(max_payload)) {
        dec->err = iof_diag_set(&dec->diag, -EINVAL, "frame limit %zu outside 1..%zu", max_payload,
                                PROTO_FRAME_MAX_LIMIT);
        return dec->err;
    }
    dec->limit = max_payload;
    return 0;
}

int proto_decoder_set_limit(struct proto_decoder *dec, size_t max_payload)
{
    if (!limit_valid(max_payload))
        return -EINVAL;
    dec->limit = max_payload;
    return 0;
}

void proto_decoder_free(struct proto_decoder *dec)
{
    if (!dec)
        return;
    free(dec->buf);
    dec->buf = NULL;
    dec->cap = 0;
    dec->need = dec->have = dec->hdr_have = 0;
    dec->handed_out = false;
}

const char *proto_decoder_error(const struct proto_decoder *dec)
{
    return dec->err ? dec->diag.msg : "";
}

size_t proto_decoder_pending(const struct proto_decoder *dec)
{
    return dec->handed_out ? 0 : dec->hdr_have + dec->have;
}

/* Makes the error sticky. The buffer is released at once: a failed stream
 * holds no memory until it is freed. */
static int fail(struct proto_decoder *dec, int err)
{
    dec->err = err;
    free(dec->buf);
    dec->buf = NULL;
    dec->cap = 0;
    return err;
}

static bool looks_like_http(const uint8_t *h)
{
    static const char *const starts[] = {"GE", "PO", "PU", "HE", "DE",
                                         "OP", "PA", "CO", "TR", "HT"};
    for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
        if (h[0] == (uint8_t)starts[i][0] && h[1] == (uint8_t)starts[i][1])
            return true;
    return false;
}

/* Checks the first n (<= 8) header bytes as soon as each is known, so a
 * stranger is refused on its second byte. With all 8, stores the payload
 * length in *plen after checking it against the limit. */
static int header_check(struct proto_decoder *dec, const uint8_t *h, size_t n, size_t *plen)
{
    switch (proto_frame_sniff(h, n)) {
    case PROTO_SNIFF_MORE:
        return 0;
    case PROTO_SNIFF_IOFLEET:
        break;
    case PROTO_SNIFF_TLS:
        if (h[0] == 0x16)
            iof_diag_set(&dec->diag, IOF_EPROTO,
                         "TLS handshake received on a plain connection (the peer uses TLS: "
                         "configure TLS on this side, or pass --insecure to both)");
        else if (h[0] == 0x15)
            iof_diag_set(&dec->diag, IOF_EPROTO,
                         PROTO_WHY_EXPECTS_TLS
                         " (configure TLS on this side, or pass --insecure to both)");
        else
            iof_diag_set(&dec->diag, IOF_EPROTO,
                         "TLS record (content type 0x%02x) received on a plain connection", h[0]);
        return fail(dec, IOF_EPROTO);
    case PROTO_SNIFF_OTHER:
        iof_diag_set(&dec->diag, IOF_EPROTO, "bad frame magic 0x%02x%02x (not an iofleet peer?%s)",
                     h[0], h[1],
                     looks_like_http(h)             ? " HTTP?"
                     : (h[0] == 'S' && h[1] == 'S') ? " SSH?"
                                                    : "");
        return fail(dec, IOF_EPROTO);
    }
    if (n >= 3 && h[2] != PROTO_FRAME_VERSION) {
        iof_diag_set(&dec->diag, IOF_EVERSION,
                     "unsupported frame version %u (this build speaks frame version %d)", h[2],
                     PROTO_FRAME_VERSION);
        return fail(dec, IOF_EVERSION);
    }
    if (n >= 4 && h[3] != 0) {
        iof_diag_set(&dec->diag, IOF_EPROTO,
                     "reserved frame flags 0x%02x set (must be 0 in frame version %d)", h[3],
                     PROTO_FRAME_VERSION);
        return fail(dec, IOF_EPROTO);
    }
    if (n < PROTO_FRAME_HEADER_SIZE)
        return 0;
    size_t len = (size_t)h[4] << 24 | (size_t)h[5] << 16 | (size_t)h[6] << 8 | (size_t)h[7];
    if (len > dec->limit) {
        too_big(&dec->diag, len, dec->limit);
        return fail(dec, IOF_ETOOBIG);
    }
    *plen = len;
    return 0;
}

/* Called only after header_check() accepted the length. */
static int reserve(struct proto_decoder *dec, size_t len)
{
    if (dec->cap >= len)
        return 0;
    free(dec->buf);
    dec->buf = malloc(len);
    dec->cap = dec->buf ? len : 0;
    if (!dec->buf) {
        iof_diag_set(&dec->diag, -ENOMEM, "out of memory for a frame of %zu bytes", len);
        return fail(dec, -ENOMEM);
    }
    return 0;
}

static void advance(const uint8_t **data, size_t *len, size_t n)
{
    *data += n;
    *len -= n;
}

int proto_decoder_next(struct proto_decoder *dec, const uint8_t **data, size_t *len,
                       struct proto_frame *frame)
{
    if (dec->err)
        return dec->err;
    if (dec->handed_out) {
        dec->handed_out = false;
        dec->hdr_have = dec->have = dec->need = 0;
        if (dec->cap > DECODER_KEEP_BYTES) {
            free(dec->buf);
            dec->buf = NULL;
            dec->cap = 0;
        }
    }

    if (dec->hdr_have < PROTO_FRAME_HEADER_SIZE) {
        size_t plen = 0;
        int rc;
        /* Fast path: a whole frame in the caller's bytes is handed out in
         * place, without a copy. */
        if (dec->hdr_have == 0 && *len >= PROTO_FRAME_HEADER_SIZE) {
            rc = header_check(dec, *data, PROTO_FRAME_HEADER_SIZE, &plen);
            if (rc)
                return rc;
            if (*len - PROTO_FRAME_HEADER_SIZE >= plen) {
                frame->payload = plen ? *data + PROTO_FRAME_HEADER_SIZE : empty_payload;
                frame->len = plen;
                advance(data, len, PROTO_FRAME_HEADER_SIZE + plen);
                return 1;
            }
        }
        if (*len == 0)
            return 0;
        size_t n = PROTO_FRAME_HEADER_SIZE - dec->hdr_have;
        if (n > *len)
            n = *len;
        memcpy(dec->hdr + dec->hdr_have, *data, n);
        advance(data, len, n);
        dec->hdr_have += n;
        rc = header_check(dec, dec->hdr, dec->hdr_have, &plen);
        if (rc)
            return rc;
        if (dec->hdr_have < PROTO_FRAME_HEADER_SIZE)
            return 0;
        rc = reserve(dec, plen);
        if (rc)
            return rc;
        dec->need = plen;
        dec->have = 0;
    }

    if (dec->have < dec->need) {
        size_t n = dec->need - dec->have;
        if (n > *len)
            n = *len;
        if (n) {
            memcpy(dec->buf + dec->have, *data, n);
            advance(data, len, n);
            dec->have += n;
        }
        if (dec->have < dec->need)
            return 0;
    }
    frame->payload = dec->need ? dec->buf : empty_payload;
    frame->len = dec->need;
    dec->handed_out = true;
    return 1;
}

int proto_decoder_feed(struct proto_decoder *dec, const void *data, size_t len, proto_frame_cb cb,
                       void *ctx)
{
    const uint8_t *p = data;
    struct proto_frame frame;
    int rc;
    while ((rc = proto_decoder_next(dec, &p, &len, &frame)) == 1) {
        int stop = cb(ctx, &frame);
        if (stop) {
            iof_diag_set(&dec->diag, stop, "frame handler stopped the stream: %s",
                         iof_strerror(stop));
            return fail(dec, stop);
        }
    }
    return rc;
}
