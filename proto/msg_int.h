/* SPDX-License-Identifier: Apache-2.0 */
/* proto/msg_int.h - internal to the message codecs (proto/msg*.c), never
 * included from elsewhere: the validation context, the JSON field readers
 * and writers of proto/msg_json.c (msgj_*), and the encoder and decoder of
 * each message type (msg_<type>_encode/decode), listed in proto/msg.c's table.
 *
 * Encoders and decoders share one validation vocabulary (msgj_check_*), so a
 * message this build sends is always one it would accept. Both run with a
 * `struct ctx` that records the first failure and turns every later step into
 * a no-op: a codec reads as a plain list of fields, and the diag always names
 * the first bad field.
 */
#ifndef IOF_PROTO_MSG_INT_H
#define IOF_PROTO_MSG_INT_H

#include "proto/msg.h"

#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest integer sent as a JSON number: every integer up to it is exact in
 * the double cJSON (and JavaScript, Python's float...) parses numbers into.
 * Larger 64-bit values travel as decimal strings. */
#define JSON_INT_MAX ((UINT64_C(1) << 53) - 1)

struct ctx {
    unsigned flags;        /* PROTO_DECODE_* */
    int err;               /* first failure, 0 while all is well */
    int bad;               /* code for invalid content: IOF_EPROTO or -EINVAL */
    struct iof_diag *diag; /* may be NULL */
};

/* Field paths in diags: "hello.inventory.targets[2].size". Prefixes are
 * short (the deepest is "hello.inventory.targets[255]"), keys are ours. */
#define PATH_BUF 96

enum str_kind {
    STR_NAME,  /* node/manager name: [A-Za-z0-9._-], PROTO_NAME_MAX */
    STR_LABEL, /* short free text (hostname, kernel, model), PROTO_NAME_MAX */
    STR_PATH,  /* a file or device path, PROTO_PATH_MAX */
    STR_TEXT,  /* a sentence (error message, reason), PROTO_TEXT_MAX */
    STR_CODE,  /* an error code name: [A-Z0-9_], PROTO_CODE_MAX */
};

enum {
    OPTIONAL = 1, /* a missing field leaves the default */
    NULLABLE = 2, /* JSON null leaves the default */
};

/* ---- validation (msg_json.c) ---- */

/* Record the first failure (the code is c->bad) with its message; every
 * later failure is ignored. Return c->err. */
__attribute__((format(printf, 2, 3))) int msgj_ctx_fail(struct ctx *c, const char *fmt, ...);
int msgj_ctx_oom(struct ctx *c);
/* "prefix.key" into path, cut to PATH_BUF. */
void msgj_mkpath(char path[PATH_BUF], const char *prefix, const char *key);
/* s non-empty, within its kind's cap, of its kind's characters, valid UTF-8,
 * under common/text.h's policy. */
int msgj_check_str(struct ctx *c, const char *path, const char *s, enum str_kind kind);
/* A power of two in 512..65536. */
int msgj_check_block_size(struct ctx *c, const char *path, uint64_t v);

/* ---- JSON reading (msg_json.c): on failure each names the field ---- */

const cJSON *msgj_field(const cJSON *obj, const char *key);
/* An exact integer JSON number in 0..JSON_INT_MAX, or a decimal string that
 * fits 64 bits. */
bool msgj_json_u64(const cJSON *it, uint64_t *out);
/* obj's key (NULL when absent and OPTIONAL, or null and NULLABLE); path
 * names it in the diag. */
const cJSON *msgj_get_item(struct ctx *c, const cJSON *obj, const char *path, const char *key,
                           unsigned flags);
int msgj_get_u64(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                 uint64_t *out);
int msgj_get_uint(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                  uint64_t min, uint64_t max, uint64_t *out);
/* *out is a copy the message owns. */
int msgj_get_str(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                 enum str_kind kind, unsigned flags, const char **out);
/* true/false → 1/0; null or missing → -1. */
int msgj_get_tristate(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                      int *out);
const cJSON *msgj_get_object(struct ctx *c, const cJSON *obj, const char *prefix, const char *key);
const cJSON *msgj_get_array(struct ctx *c, const cJSON *obj, const char *prefix, const char *key);
/* Optional: *out keeps its value when the field is missing or null. */
int msgj_get_u64_opt(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                     uint64_t *out);
/* A signed 64-bit integer as a decimal string ("-1234"). */
int msgj_get_i64(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                 int64_t *out);

/* ---- JSON writing (msg_json.c): item is taken, also on failure ---- */

int msgj_put_item(struct ctx *c, cJSON *obj, const char *key, cJSON *item);
int msgj_put_u64(struct ctx *c, cJSON *obj, const char *key, uint64_t v);
int msgj_put_uint(struct ctx *c, cJSON *obj, const char *prefix, const char *key, uint64_t v,
                  uint64_t min, uint64_t max);
/* NULL is written as JSON null when `flags` has NULLABLE, refused otherwise. */
int msgj_put_str(struct ctx *c, cJSON *obj, const char *prefix, const char *key, const char *s,
                 enum str_kind kind, unsigned flags);
int msgj_put_tristate(struct ctx *c, cJSON *obj, const char *prefix, const char *key, int v);
/* item, once added at key; NULL after a failure. */
cJSON *msgj_put_container(struct ctx *c, cJSON *obj, const char *key, cJSON *item);
int msgj_put_i64(struct ctx *c, cJSON *obj, const char *key, int64_t v);

/* ---- the body of each message type, dispatched by proto/msg.c ---- */

/* msg_session.c: a session's life */
int msg_hello_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_hello_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_welcome_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_welcome_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_heartbeat_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_heartbeat_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_clock_probe_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_clock_probe_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_clock_reply_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_clock_reply_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_error_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_error_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_bye_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_bye_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);

/* msg_test.c: plans, preparation and the running of tests */
int msg_plan_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_plan_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_prepare_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_prepare_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_progress_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_progress_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_prepared_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_prepared_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_setup_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_setup_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_start_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_start_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_ready_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_ready_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_stop_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_stop_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_cleaned_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_cleaned_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);

/* msg_stats.c: the JSON stats and result bodies */
int msg_stats_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_stats_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);
int msg_result_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg);
int msg_result_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg);

#endif
