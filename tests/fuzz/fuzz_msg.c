/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_msg.c - proto/msg: proto_msg_decode() for every type.
 *
 * Input: a frame payload, raw. An input starting with a byte below 0x09 (no
 * JSON text does) selects a template instead: byte 0 mod 3 picks hello,
 * stats or result, the deepest decoders, and the rest of the input follows
 * `{"type":"<that type>",`, so mutations are spent on their fields (with
 * the keys of tests/fuzz/msg.dict).
 *
 * A refused payload must come with IOF_EPROTO, IOF_EVERSION or -ENOMEM and
 * a diag. An accepted one must encode (the encoder applies the decoder's
 * rules, so what one build accepts it can also send), and its encoding must
 * be a fixed point: decoding it again succeeds and encodes to identical
 * text. A decoded hello's deep copy encodes the same; a plan's text goes
 * through the plan loader as the agent would take it.
 */
#include "fuzz.h"

#include "common/err.h"
#include "common/spec.h"
#include "proto/frame.h"
#include "proto/msg.h"
#include "proto/plan.h"

#include <errno.h>
#include <string.h>

static const char *const templates[] = {"hello", "stats", "result"};

/* Encodes msg; the encoding must succeed. Returns new text. */
static char *encode_ok(const struct proto_msg *msg, size_t *len, const char *what)
{
    struct iof_diag diag = {{0}};
    char *text = NULL;
    int rc = proto_msg_encode(msg, &text, len, &diag);

    FUZZ_CHECK(rc == 0 && text, "%s %s message does not encode: %d %s", what,
               proto_msg_type_name(msg->type), rc, diag.msg);
    FUZZ_CHECK(strlen(text) == *len, "encoded length %zu, text of %zu bytes", *len, strlen(text));
    return text;
}

/* What an agent does with a plan message: the plan loader on its text. */
static void plan_check(const struct proto_plan *p)
{
    struct iof_plan plan;
    struct iof_diag diag = {{0}};
    int rc = proto_plan_parse("plan", p->text, p->len, NULL, 0, &plan, &diag);

    FUZZ_CHECK(rc == 0 || rc == IOF_EPLAN || rc == -ENOMEM, "plan loader returned %d", rc);
    if (rc == 0) {
        size_t n;
        struct iof_test *tests = iof_plan_expand(&plan, &n);
        FUZZ_CHECK(tests != NULL, "iof_plan_expand failed on a valid plan");
        free(tests);
    } else {
        FUZZ_CHECK(diag.msg[0] != '\0', "plan refused (%d) without a message", rc);
    }
    iof_plan_free(&plan);
}

static void decode_check(const char *payload, size_t len)
{
    struct proto_msg m1, m2;
    struct iof_diag diag = {{0}};
    int rc = proto_msg_decode(payload, len, &m1, &diag);

    if (rc) {
        FUZZ_CHECK(rc == IOF_EPROTO || rc == IOF_EVERSION || rc == -ENOMEM,
                   "decode returned %d (%s)", rc, diag.msg);
        FUZZ_CHECK(diag.msg[0] != '\0', "decode refused (%d) without a message", rc);
        proto_msg_clear(&m1);
        return;
    }
    FUZZ_CHECK((unsigned)m1.type < PROTO_MSG_COUNT, "decoded type %d", (int)m1.type);
    (void)proto_msg_may_send(m1.type, PROTO_ROLE_MANAGER);
    (void)proto_msg_may_send(m1.type, PROTO_ROLE_AGENT);

    size_t len1, len2;
    char *text1 = encode_ok(&m1, &len1, "a decoded");
    rc = proto_msg_decode(text1, len1, &m2, &diag);
    FUZZ_CHECK(rc == 0, "re-decoding our own encoding failed: %d %s\n  text: %s", rc, diag.msg,
               text1);
    FUZZ_CHECK(m2.type == m1.type, "type changed from %d to %d", (int)m1.type, (int)m2.type);
    char *text2 = encode_ok(&m2, &len2, "a re-decoded");
    FUZZ_CHECK(len1 == len2 && memcmp(text1, text2, len1) == 0,
               "encoding is not a fixed point:\n  first:  %s\n  second: %s", text1, text2);

    if (m1.type == PROTO_MSG_HELLO) {
        struct proto_msg copy;
        size_t len3;
        proto_msg_init(&copy, PROTO_MSG_HELLO);
        FUZZ_CHECK(proto_hello_copy(&copy.u.hello, &m1.u.hello) == 0, "hello copy failed");
        char *text3 = encode_ok(&copy, &len3, "a copied");
        FUZZ_CHECK(len3 == len1 && memcmp(text3, text1, len1) == 0, "the hello copy differs");
        free(text3);
        proto_hello_free(&copy.u.hello);
    } else if (m1.type == PROTO_MSG_PLAN) {
        plan_check(&m1.u.plan);
    }

    /* Framed against the largest limit, the frame must carry the text. */
    uint8_t *frame;
    size_t flen;
    rc = proto_msg_encode_frame(&m2, PROTO_FRAME_MAX_LIMIT, &frame, &flen, &diag);
    FUZZ_CHECK(rc == 0 && flen == PROTO_FRAME_HEADER_SIZE + len2 &&
                   memcmp(frame + PROTO_FRAME_HEADER_SIZE, text2, len2) == 0,
               "encode_frame: %d %s", rc, diag.msg);
    free(frame);

    free(text1);
    free(text2);
    proto_msg_clear(&m1);
    proto_msg_clear(&m2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || data[0] >= 0x09) {
        decode_check((const char *)data, size);
        return 0;
    }
    char head[64];
    int hlen = snprintf(head, sizeof(head), "{\"type\":\"%s\",", templates[data[0] % 3]);
    char *buf = malloc((size_t)hlen + size - 1);
    FUZZ_CHECK(buf != NULL, "out of memory");
    memcpy(buf, head, (size_t)hlen);
    memcpy(buf + hlen, data + 1, size - 1);
    decode_check(buf, (size_t)hlen + size - 1);
    free(buf);
    return 0;
}
