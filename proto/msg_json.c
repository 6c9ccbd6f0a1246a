/* SPDX-License-Identifier: Apache-2.0 */
/* proto/msg_json.c - the field readers and writers every message codec is
 * written with (msgj_get_*, msgj_put_*), and the checks of names, strings and
 * ranges they apply on both sides (proto/msg_int.h).
 */
#include "proto/msg_int.h"
#include "proto/statsbin.h"

#include "common/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared validation ------------------------------------------------- */

__attribute__((format(printf, 2, 3))) int msgj_ctx_fail(struct ctx *c, const char *fmt, ...)
{
    if (c->err)
        return c->err;
    c->err = c->bad;
    if (c->diag) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->diag->msg, sizeof(c->diag->msg), fmt, ap);
        va_end(ap);
    }
    return c->err;
}

int msgj_ctx_oom(struct ctx *c)
{
    if (c->err)
        return c->err;
    c->err = iof_diag_set(c->diag, -ENOMEM, "out of memory");
    return c->err;
}

void msgj_mkpath(char path[PATH_BUF], const char *prefix, const char *key)
{
    /* A cut path only shortens a diag; using the result keeps
     * -Wformat-truncation quiet. */
    if (snprintf(path, PATH_BUF, "%s.%s", prefix, key) >= PATH_BUF)
        path[PATH_BUF - 1] = '\0';
}

/* Offset of the first byte that breaks UTF-8 (overlongs, surrogates and
 * code points above U+10FFFF included), or n when s (NUL-terminated, n its
 * length) is valid: common/text.h's decoder, the one of the text policy. */
static size_t utf8_bad_offset(const unsigned char *s, size_t n)
{
    size_t i = 0, len;
    while (i < n) {
        if (iof_text_utf8_next(s + i, &len) < 0)
            return i;
        i += len;
    }
    return n;
}

static bool name_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-';
}

static bool code_char(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

bool proto_code_name_ok(const char *name, size_t len)
{
    if (len == 0 || len > PROTO_CODE_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!code_char((unsigned char)name[i]))
            return false;
    return true;
}

int msgj_check_str(struct ctx *c, const char *path, const char *s, enum str_kind kind)
{
    if (c->err)
        return c->err;
    static const size_t max[] = {
        [STR_NAME] = PROTO_NAME_MAX, [STR_LABEL] = PROTO_NAME_MAX, [STR_PATH] = PROTO_PATH_MAX,
        [STR_TEXT] = PROTO_TEXT_MAX, [STR_CODE] = PROTO_CODE_MAX,
    };
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    if (n == 0)
        return msgj_ctx_fail(c, "%s: must not be empty", path);
    if (n > max[kind])
        return msgj_ctx_fail(c, "%s: longer than %zu bytes", path, max[kind]);
    for (size_t i = 0; i < n; i++) {
        if (kind == STR_NAME && !name_char(u[i]))
            return msgj_ctx_fail(c,
                                 "%s: byte %zu (0x%02x) is not allowed: use ASCII letters, digits, "
                                 "'.', '_' and '-'",
                                 path, i, u[i]);
        if (kind == STR_CODE && !code_char(u[i]))
            return msgj_ctx_fail(c, "%s: must be an error code name like IOF_EBUSY", path);
        if (u[i] < 0x20 || u[i] == 0x7f)
            return msgj_ctx_fail(c, "%s: contains a control character (byte %zu)", path, i);
    }
    size_t bad = utf8_bad_offset(u, n);
    if (bad != n)
        return msgj_ctx_fail(c, "%s: not valid UTF-8 (byte %zu)", path, bad);
    /* What is left of common/text.h's policy: C1 and bidirectional controls
     * (an agent's model or kernel string reaches the manager's terminal). */
    struct iof_text_fault tf;
    if (iof_text_check(s, &tf)) {
        char why[64];
        msgj_ctx_fail(c, "%s: contains %s", path, iof_text_fault_str(why, sizeof(why), &tf));
    }
    return c->err;
}

static int check_range(struct ctx *c, const char *path, uint64_t v, uint64_t min, uint64_t max)
{
    if (!c->err && (v < min || v > max))
        msgj_ctx_fail(c, "%s: must be %" PRIu64 "..%" PRIu64 ", got %" PRIu64, path, min, max, v);
    return c->err;
}

int msgj_check_block_size(struct ctx *c, const char *path, uint64_t v)
{
    if (!c->err && (v < 512 || v > 65536 || (v & (v - 1)) != 0))
        msgj_ctx_fail(c, "%s: must be a power of two in 512..65536, got %" PRIu64, path, v);
    return c->err;
}

int proto_name_check(const char *name, struct iof_diag *diag)
{
    struct ctx c = {.bad = -EINVAL, .diag = diag};
    msgj_check_str(&c, "name", name ? name : "", STR_NAME);
    return c.err;
}

/* ---- JSON reading ------------------------------------------------------ */

const cJSON *msgj_field(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Integers: a JSON number that is an exact integer in 0..2^53-1, or a string
 * of 1..20 decimal digits that fits in 64 bits. */
bool msgj_json_u64(const cJSON *it, uint64_t *out)
{
    if (cJSON_IsNumber(it)) {
        double d = it->valuedouble;
        if (!(d >= 0.0 && d <= (double)JSON_INT_MAX) || (double)(uint64_t)d != d)
            return false;
        *out = (uint64_t)d;
        return true;
    }
    if (cJSON_IsString(it) && it->valuestring) {
        const char *s = it->valuestring;
        uint64_t v = 0;
        size_t i = 0;
        for (; s[i]; i++) {
            if (s[i] < '0' || s[i] > '9' || i >= 20)
                return false;
            unsigned digit = (unsigned)(s[i] - '0');
            if (v > (UINT64_MAX - digit) / 10)
                return false;
            v = v * 10 + digit;
        }
        if (i == 0)
            return false;
        *out = v;
        return true;
    }
    return false;
}

const cJSON *msgj_get_item(struct ctx *c, const cJSON *obj, const char *path, const char *key,
                           unsigned flags)
{
    if (c->err)
        return NULL;
    const cJSON *it = msgj_field(obj, key);
    if (!it && !(flags & OPTIONAL))
        msgj_ctx_fail(c, "%s: required field missing", path);
    if (it && (flags & NULLABLE) && cJSON_IsNull(it))
        return NULL;
    return it;
}

int msgj_get_u64(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                 uint64_t *out)
{
    char path[PATH_BUF];
    if (c->err)
        return c->err;
    const cJSON *it = msgj_field(obj, key);
    if (it && msgj_json_u64(it, out))
        return 0; /* the common case builds no path string */
    msgj_mkpath(path, prefix, key);
    if (!it)
        return msgj_ctx_fail(c, "%s: required field missing", path);
    return msgj_ctx_fail(c, "%s: must be a non-negative integer", path);
}

int msgj_get_uint(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                  uint64_t min, uint64_t max, uint64_t *out)
{
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    const cJSON *it = msgj_get_item(c, obj, path, key, 0);
    if (!it)
        return c->err;
    if (!msgj_json_u64(it, out))
        return msgj_ctx_fail(c, "%s: must be an integer in %" PRIu64 "..%" PRIu64, path, min, max);
    check_range(c, path, *out, min, max);
    return c->err;
}

/* The string is copied: the message owns it. */
int msgj_get_str(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                 enum str_kind kind, unsigned flags, const char **out)
{
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    const cJSON *it = msgj_get_item(c, obj, path, key, flags);
    if (!it)
        return c->err;
    if (!cJSON_IsString(it) || !it->valuestring)
        return msgj_ctx_fail(
            c, (flags & NULLABLE) ? "%s: must be a string or null" : "%s: must be a string", path);
    msgj_check_str(c, path, it->valuestring, kind);
    if (c->err)
        return c->err;
    char *copy = strdup(it->valuestring);
    if (!copy)
        return msgj_ctx_oom(c);
    *out = copy;
    return c->err;
}

/* true/false → 1/0; null or missing → -1. */
int msgj_get_tristate(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                      int *out)
{
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    *out = -1;
    const cJSON *it = msgj_get_item(c, obj, path, key, OPTIONAL | NULLABLE);
    if (!it)
        return c->err;
    if (!cJSON_IsBool(it))
        return msgj_ctx_fail(c, "%s: must be true, false or null", path);
    *out = cJSON_IsTrue(it) ? 1 : 0;
    return c->err;
}

const cJSON *msgj_get_object(struct ctx *c, const cJSON *obj, const char *prefix, const char *key)
{
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    const cJSON *it = msgj_get_item(c, obj, path, key, 0);
    if (it && !cJSON_IsObject(it)) {
        msgj_ctx_fail(c, "%s: must be an object", path);
        return NULL;
    }
    return it;
}

const cJSON *msgj_get_array(struct ctx *c, const cJSON *obj, const char *prefix, const char *key)
{
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    const cJSON *it = msgj_get_item(c, obj, path, key, 0);
    if (it && !cJSON_IsArray(it)) {
        msgj_ctx_fail(c, "%s: must be an array", path);
        return NULL;
    }
    return it;
}

/* An optional non-negative integer: *out keeps its value when the field is
 * missing or null. */
int msgj_get_u64_opt(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                     uint64_t *out)
{
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    const cJSON *it = msgj_get_item(c, obj, path, key, OPTIONAL | NULLABLE);
    if (it && !msgj_json_u64(it, out))
        return msgj_ctx_fail(c, "%s: must be a non-negative integer", path);
    return c->err;
}

/* ---- JSON writing ------------------------------------------------------ */

int msgj_put_item(struct ctx *c, cJSON *obj, const char *key, cJSON *item)
{
    if (!item || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        msgj_ctx_oom(c);
    }
    return c->err;
}

int msgj_put_u64(struct ctx *c, cJSON *obj, const char *key, uint64_t v)
{
    if (c->err)
        return c->err;
    char text[24];
    snprintf(text, sizeof(text), "%" PRIu64, v);
    /* A raw number keeps its exact digits (cJSON would print 1e+15). */
    msgj_put_item(c, obj, key,
                  v <= JSON_INT_MAX ? cJSON_CreateRaw(text) : cJSON_CreateString(text));
    return c->err;
}

int msgj_put_uint(struct ctx *c, cJSON *obj, const char *prefix, const char *key, uint64_t v,
                  uint64_t min, uint64_t max)
{
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    check_range(c, path, v, min, max);
    msgj_put_u64(c, obj, key, v);
    return c->err;
}

/* NULL is written as JSON null when `flags` has NULLABLE, refused otherwise. */
int msgj_put_str(struct ctx *c, cJSON *obj, const char *prefix, const char *key, const char *s,
                 enum str_kind kind, unsigned flags)
{
    if (c->err)
        return c->err;
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    if (!s) {
        if (flags & NULLABLE)
            return msgj_put_item(c, obj, key, cJSON_CreateNull());
        return msgj_ctx_fail(c, "%s: required field missing", path);
    }
    msgj_check_str(c, path, s, kind);
    if (!c->err)
        msgj_put_item(c, obj, key, cJSON_CreateString(s));
    return c->err;
}

int msgj_put_tristate(struct ctx *c, cJSON *obj, const char *prefix, const char *key, int v)
{
    if (c->err)
        return c->err;
    char path[PATH_BUF];
    msgj_mkpath(path, prefix, key);
    if (v < -1 || v > 1)
        return msgj_ctx_fail(c, "%s: must be 1, 0 or -1 (unknown), got %d", path, v);
    msgj_put_item(c, obj, key, v < 0 ? cJSON_CreateNull() : cJSON_CreateBool(v));
    return c->err;
}

cJSON *msgj_put_container(struct ctx *c, cJSON *obj, const char *key, cJSON *item)
{
    if (c->err) {
        cJSON_Delete(item);
        return NULL;
    }
    msgj_put_item(c, obj, key, item);
    return c->err ? NULL : item;
}

/* ---- signed integers --------------------------------------------------- */

/* Signed 64-bit values travel as decimal strings ("-1234"): exact, and
 * free of the 2^53 limit of JSON numbers in cJSON. */
int msgj_put_i64(struct ctx *c, cJSON *obj, const char *key, int64_t v)
{
    char text[24];
    if (c->err)
        return c->err;
    snprintf(text, sizeof(text), "%" PRId64, v);
    return msgj_put_item(c, obj, key, cJSON_CreateString(text));
}

int msgj_get_i64(struct ctx *c, const cJSON *obj, const char *prefix, const char *key, int64_t *out)
{
    char path[PATH_BUF], *end;
    long long v;
    msgj_mkpath(path, prefix, key);
    const cJSON *it = msgj_get_item(c, obj, path, key, 0);
    if (!it)
        return c->err;
    if (!cJSON_IsString(it) || !it->valuestring || !it->valuestring[0] ||
        strlen(it->valuestring) > 20)
        return msgj_ctx_fail(c, "%s: must be a signed integer as a decimal string", path);
    /* Digits with an optional minus: no blanks, no plus, nothing after. */
    if (strspn(it->valuestring + (it->valuestring[0] == '-'), "0123456789") !=
            strlen(it->valuestring + (it->valuestring[0] == '-')) ||
        !it->valuestring[it->valuestring[0] == '-'])
        return msgj_ctx_fail(c, "%s: must be a signed 64-bit integer as a decimal string", path);
    errno = 0;
    v = strtoll(it->valuestring, &end, 10);
    if (*end || errno)
        return msgj_ctx_fail(c, "%s: must be a signed 64-bit integer as a decimal string", path);
    *out = v;
    return c->err;
}
