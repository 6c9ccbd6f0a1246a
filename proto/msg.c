/* SPDX-License-Identifier: Apache-2.0 */
/* proto/msg.c - message types, JSON encoding and validating decoders.
 *
 * Encoders and decoders share one validation vocabulary (check_*), so a
 * message this build sends is always one it would accept. Both run with a
 * `struct ctx` that records the first failure and turns every later step into
 * a no-op: a codec reads as a plain list of fields, and the diag always names
 * the first bad field.
 */
#include "proto/msg.h"
#include "proto/json.h"
#include "proto/statsbin.h"
#include "proto/version.h"

#include "common/text.h"

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef IOF_VERSION
#define IOF_VERSION "unknown"
#endif

/* Largest integer sent as a JSON number: every integer up to it is exact in
 * the double cJSON (and JavaScript, Python's float...) parses numbers into.
 * Larger 64-bit values travel as decimal strings. */
#define JSON_INT_MAX ((UINT64_C(1) << 53) - 1)

static const struct {
    const char *name;
    enum proto_msg_dir dir;
    const char *desc;
} msg_types[PROTO_MSG_COUNT] = {
#define PROTO_MSG_ROW(id, name, dir, desc) [PROTO_MSG_##id] = {name, PROTO_DIR_##dir, desc},
    PROTO_MSG_TABLE(PROTO_MSG_ROW)
#undef PROTO_MSG_ROW
};

const char *proto_msg_type_name(enum proto_msg_type type)
{
    return (unsigned)type < PROTO_MSG_COUNT ? msg_types[type].name : "?";
}

int proto_msg_peek_type(const void *payload, size_t len)
{
    static const char prefix[] = "{\"type\":\"";
    const char *p = payload;
    char name[32]; /* longer than any type name */
    size_t n;
    int t;

    if (len && *(const uint8_t *)payload == PROTO_STATSBIN_TAG)
        return PROTO_MSG_STATS;
    if (len < sizeof(prefix) - 1 || memcmp(p, prefix, sizeof(prefix) - 1))
        return -1;
    p += sizeof(prefix) - 1;
    len -= sizeof(prefix) - 1;
    for (n = 0; n < len && n < sizeof(name) && p[n] != '"'; n++)
        name[n] = p[n];
    if (n == len || n == sizeof(name))
        return -1;
    name[n] = '\0';
    t = proto_msg_type_from_name(name);
    return t < 0 ? -1 : t;
}

const char *proto_msg_type_desc(enum proto_msg_type type)
{
    return (unsigned)type < PROTO_MSG_COUNT ? msg_types[type].desc : "";
}

enum proto_msg_dir proto_msg_type_dir(enum proto_msg_type type)
{
    return (unsigned)type < PROTO_MSG_COUNT ? msg_types[type].dir : PROTO_DIR_BOTH;
}

int proto_msg_type_from_name(const char *name)
{
    for (int t = 0; t < PROTO_MSG_COUNT; t++)
        if (strcmp(msg_types[t].name, name) == 0)
            return t;
    return -ENOENT;
}

bool proto_msg_may_send(enum proto_msg_type type, enum proto_role sender)
{
    if ((unsigned)type >= PROTO_MSG_COUNT)
        return false;
    switch (msg_types[type].dir) {
    case PROTO_DIR_BOTH:
        return sender == PROTO_ROLE_MANAGER || sender == PROTO_ROLE_AGENT;
    case PROTO_DIR_MANAGER_TO_AGENT:
        return sender == PROTO_ROLE_MANAGER;
    case PROTO_DIR_AGENT_TO_MANAGER:
        return sender == PROTO_ROLE_AGENT;
    }
    return false;
}

const char *proto_role_name(enum proto_role role)
{
    switch (role) {
    case PROTO_ROLE_MANAGER:
        return "manager";
    case PROTO_ROLE_AGENT:
        return "agent";
    }
    return "?";
}

int proto_version_compatible(unsigned major, unsigned minor, struct iof_diag *diag)
{
    if (major == PROTO_VERSION_MAJOR)
        return 0;
    return iof_diag_set(diag, IOF_EVERSION,
                        "protocol %u.%u is not compatible with this build's %d.%d (%s)", major,
                        minor, PROTO_VERSION_MAJOR, PROTO_VERSION_MINOR,
                        major > PROTO_VERSION_MAJOR ? "the peer is newer: upgrade this side"
                                                    : "the peer is older: upgrade it");
}

/* ---- shared validation ------------------------------------------------- */

struct ctx {
    unsigned flags;        /* PROTO_DECODE_* */
    int err;               /* first failure, 0 while all is well */
    int bad;               /* code for invalid content: IOF_EPROTO or -EINVAL */
    struct iof_diag *diag; /* may be NULL */
};

__attribute__((format(printf, 2, 3))) static int ctx_fail(struct ctx *c, const char *fmt, ...)
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

static int ctx_oom(struct ctx *c)
{
    if (c->err)
        return c->err;
    c->err = iof_diag_set(c->diag, -ENOMEM, "out of memory");
    return c->err;
}

/* Field paths in diags: "hello.inventory.targets[2].size". Prefixes are
 * short (the deepest is "hello.inventory.targets[255]"), keys are ours. */
#define PATH_BUF 96

static void mkpath(char path[PATH_BUF], const char *prefix, const char *key)
{
    /* A cut path only shortens a diag; using the result keeps
     * -Wformat-truncation quiet. */
    if (snprintf(path, PATH_BUF, "%s.%s", prefix, key) >= PATH_BUF)
        path[PATH_BUF - 1] = '\0';
}

enum str_kind {
    STR_NAME,  /* node/manager name: [A-Za-z0-9._-], PROTO_NAME_MAX */
    STR_LABEL, /* short free text (hostname, kernel, model), PROTO_NAME_MAX */
    STR_PATH,  /* a file or device path, PROTO_PATH_MAX */
    STR_TEXT,  /* a sentence (error message, reason), PROTO_TEXT_MAX */
    STR_CODE,  /* an error code name: [A-Z0-9_], PROTO_CODE_MAX */
};

/* Offset of the first byte that breaks UTF-8 (overlongs, surrogates and
 * code points above U+10FFFF included), or n when s is valid. */
static size_t utf8_bad_offset(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return i;
        }
        if (n - i < len)
            return i;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
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

static int check_str(struct ctx *c, const char *path, const char *s, enum str_kind kind)
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
        return ctx_fail(c, "%s: must not be empty", path);
    if (n > max[kind])
        return ctx_fail(c, "%s: longer than %zu bytes", path, max[kind]);
    for (size_t i = 0; i < n; i++) {
        if (kind == STR_NAME && !name_char(u[i]))
            return ctx_fail(c,
                            "%s: byte %zu (0x%02x) is not allowed: use ASCII letters, digits, "
                            "'.', '_' and '-'",
                            path, i, u[i]);
        if (kind == STR_CODE && !code_char(u[i]))
            return ctx_fail(c, "%s: must be an error code name like IOF_EBUSY", path);
        if (u[i] < 0x20 || u[i] == 0x7f)
            return ctx_fail(c, "%s: contains a control character (byte %zu)", path, i);
    }
    size_t bad = utf8_bad_offset(u, n);
    if (bad != n)
        return ctx_fail(c, "%s: not valid UTF-8 (byte %zu)", path, bad);
    /* What is left of common/text.h's policy: C1 and bidirectional controls
     * (an agent's model or kernel string reaches the manager's terminal). */
    struct iof_text_fault tf;
    if (iof_text_check(s, &tf)) {
        char why[64];
        ctx_fail(c, "%s: contains %s", path, iof_text_fault_str(why, sizeof(why), &tf));
    }
    return c->err;
}

static int check_range(struct ctx *c, const char *path, uint64_t v, uint64_t min, uint64_t max)
{
    if (!c->err && (v < min || v > max))
        ctx_fail(c, "%s: must be %" PRIu64 "..%" PRIu64 ", got %" PRIu64, path, min, max, v);
    return c->err;
}

static int check_block_size(struct ctx *c, const char *path, uint64_t v)
{
    if (!c->err && (v < 512 || v > 65536 || (v & (v - 1)) != 0))
        ctx_fail(c, "%s: must be a power of two in 512..65536, got %" PRIu64, path, v);
    return c->err;
}

int proto_name_check(const char *name, struct iof_diag *diag)
{
    struct ctx c = {.bad = -EINVAL, .diag = diag};
    check_str(&c, "name", name ? name : "", STR_NAME);
    return c.err;
}

/* Copies s for a diag: printable ASCII only, at most 32 bytes. */
static const char *printable(char dst[40], const char *s)
{
    size_t i = 0;
    for (; s[i] && i < 32; i++)
        dst[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (s[i])
        dst[i++] = '.', dst[i++] = '.', dst[i++] = '.';
    dst[i] = '\0';
    return dst;
}

/* ---- JSON reading ------------------------------------------------------ */

enum {
    OPTIONAL = 1, /* a missing field leaves the default */
    NULLABLE = 2, /* JSON null leaves the default */
};

static const cJSON *field(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Integers: a JSON number that is an exact integer in 0..2^53-1, or a string
 * of 1..20 decimal digits that fits in 64 bits. */
static bool json_u64(const cJSON *it, uint64_t *out)
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

static const cJSON *get_item(struct ctx *c, const cJSON *obj, const char *path, const char *key,
                             unsigned flags)
{
    if (c->err)
        return NULL;
    const cJSON *it = field(obj, key);
    if (!it && !(flags & OPTIONAL))
        ctx_fail(c, "%s: required field missing", path);
    if (it && (flags & NULLABLE) && cJSON_IsNull(it))
        return NULL;
    return it;
}

static int get_u64(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                   uint64_t *out)
{
    char path[PATH_BUF];
    if (c->err)
        return c->err;
    const cJSON *it = field(obj, key);
    if (it && json_u64(it, out))
        return 0; /* the common case builds no path string */
    mkpath(path, prefix, key);
    if (!it)
        return ctx_fail(c, "%s: required field missing", path);
    return ctx_fail(c, "%s: must be a non-negative integer", path);
}

static int get_uint(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                    uint64_t min, uint64_t max, uint64_t *out)
{
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    const cJSON *it = get_item(c, obj, path, key, 0);
    if (!it)
        return c->err;
    if (!json_u64(it, out))
        return ctx_fail(c, "%s: must be an integer in %" PRIu64 "..%" PRIu64, path, min, max);
    check_range(c, path, *out, min, max);
    return c->err;
}

/* The string is copied: the message owns it. */
static int get_str(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                   enum str_kind kind, unsigned flags, const char **out)
{
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    const cJSON *it = get_item(c, obj, path, key, flags);
    if (!it)
        return c->err;
    if (!cJSON_IsString(it) || !it->valuestring)
        return ctx_fail(
            c, (flags & NULLABLE) ? "%s: must be a string or null" : "%s: must be a string", path);
    check_str(c, path, it->valuestring, kind);
    if (c->err)
        return c->err;
    char *copy = strdup(it->valuestring);
    if (!copy)
        return ctx_oom(c);
    *out = copy;
    return c->err;
}

/* true/false → 1/0; null or missing → -1. */
static int get_tristate(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                        int *out)
{
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    *out = -1;
    const cJSON *it = get_item(c, obj, path, key, OPTIONAL | NULLABLE);
    if (!it)
        return c->err;
    if (!cJSON_IsBool(it))
        return ctx_fail(c, "%s: must be true, false or null", path);
    *out = cJSON_IsTrue(it) ? 1 : 0;
    return c->err;
}

static const cJSON *get_object(struct ctx *c, const cJSON *obj, const char *prefix, const char *key)
{
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    const cJSON *it = get_item(c, obj, path, key, 0);
    if (it && !cJSON_IsObject(it)) {
        ctx_fail(c, "%s: must be an object", path);
        return NULL;
    }
    return it;
}

static const cJSON *get_array(struct ctx *c, const cJSON *obj, const char *prefix, const char *key)
{
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    const cJSON *it = get_item(c, obj, path, key, 0);
    if (it && !cJSON_IsArray(it)) {
        ctx_fail(c, "%s: must be an array", path);
        return NULL;
    }
    return it;
}

/* ---- JSON writing ------------------------------------------------------ */

static int put_item(struct ctx *c, cJSON *obj, const char *key, cJSON *item)
{
    if (!item || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        ctx_oom(c);
    }
    return c->err;
}

static int put_u64(struct ctx *c, cJSON *obj, const char *key, uint64_t v)
{
    if (c->err)
        return c->err;
    char text[24];
    snprintf(text, sizeof(text), "%" PRIu64, v);
    /* A raw number keeps its exact digits (cJSON would print 1e+15). */
    put_item(c, obj, key, v <= JSON_INT_MAX ? cJSON_CreateRaw(text) : cJSON_CreateString(text));
    return c->err;
}

static int put_uint(struct ctx *c, cJSON *obj, const char *prefix, const char *key, uint64_t v,
                    uint64_t min, uint64_t max)
{
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    check_range(c, path, v, min, max);
    put_u64(c, obj, key, v);
    return c->err;
}

/* NULL is written as JSON null when `flags` has NULLABLE, refused otherwise. */
static int put_str(struct ctx *c, cJSON *obj, const char *prefix, const char *key, const char *s,
                   enum str_kind kind, unsigned flags)
{
    if (c->err)
        return c->err;
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    if (!s) {
        if (flags & NULLABLE)
            return put_item(c, obj, key, cJSON_CreateNull());
        return ctx_fail(c, "%s: required field missing", path);
    }
    check_str(c, path, s, kind);
    if (!c->err)
        put_item(c, obj, key, cJSON_CreateString(s));
    return c->err;
}

static int put_tristate(struct ctx *c, cJSON *obj, const char *prefix, const char *key, int v)
{
    if (c->err)
        return c->err;
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    if (v < -1 || v > 1)
        return ctx_fail(c, "%s: must be 1, 0 or -1 (unknown), got %d", path, v);
    put_item(c, obj, key, v < 0 ? cJSON_CreateNull() : cJSON_CreateBool(v));
    return c->err;
}

static cJSON *put_container(struct ctx *c, cJSON *obj, const char *key, cJSON *item)
{
    if (c->err) {
        cJSON_Delete(item);
        return NULL;
    }
    put_item(c, obj, key, item);
    return c->err ? NULL : item;
}

/* ---- hello ------------------------------------------------------------- */

static int hello_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_hello *h = &msg->u.hello;
    if (h->major > UINT16_MAX || h->minor > UINT16_MAX)
        return ctx_fail(c, "hello.v: must be [major, minor] with integers 0..65535");
    cJSON *v = put_container(c, root, "v", cJSON_CreateArray());
    if (v) {
        char text[8];
        for (int i = 0; i < 2 && !c->err; i++) {
            snprintf(text, sizeof(text), "%u", i ? h->minor : h->major);
            cJSON *num = cJSON_CreateRaw(text);
            if (!num || !cJSON_AddItemToArray(v, num)) {
                cJSON_Delete(num);
                ctx_oom(c);
            }
        }
    }
    if (!c->err && h->role != PROTO_ROLE_MANAGER && h->role != PROTO_ROLE_AGENT)
        return ctx_fail(c, "hello.role: must be PROTO_ROLE_MANAGER or PROTO_ROLE_AGENT");
    if (!c->err)
        put_item(c, root, "role", cJSON_CreateString(proto_role_name(h->role)));
    put_str(c, root, "hello", "name", h->name, STR_NAME, 0);
    put_str(c, root, "hello", "software", h->software, STR_LABEL, 0);
    put_uint(c, root, "hello", "heartbeat_ms", h->heartbeat_ms, PROTO_HEARTBEAT_MS_MIN,
             PROTO_HEARTBEAT_MS_MAX);
    if (h->heartbeat_offer_ms)
        put_uint(c, root, "hello", "heartbeat_offer_ms", h->heartbeat_offer_ms,
                 PROTO_HEARTBEAT_MS_MIN, PROTO_HEARTBEAT_MS_MAX);
    if (c->err || h->role != PROTO_ROLE_AGENT)
        return c->err;

    const struct proto_inventory *inv = &h->inventory;
    cJSON *jinv = put_container(c, root, "inventory", cJSON_CreateObject());
    if (!jinv)
        return c->err;
    put_str(c, jinv, "hello.inventory", "hostname", inv->hostname, STR_LABEL, 0);
    put_uint(c, jinv, "hello.inventory", "cpus", inv->cpus, 1, 65536);
    put_u64(c, jinv, "memory_bytes", inv->memory_bytes);
    put_str(c, jinv, "hello.inventory", "kernel", inv->kernel, STR_LABEL, 0);
    if (inv->has_budget) {
        cJSON *jb = put_container(c, jinv, "budget", cJSON_CreateObject());
        if (jb) {
            put_u64(c, jb, "workers", inv->budget.workers);
            put_u64(c, jb, "buffer_mem", inv->budget.buffer_mem);
            put_u64(c, jb, "aio_events", inv->budget.aio_events);
            put_u64(c, jb, "fds", inv->budget.fds);
        }
    }
    if (!c->err && inv->ntargets > PROTO_TARGETS_MAX)
        return ctx_fail(c, "hello.inventory.targets: %zu targets, at most %d fit in a hello",
                        inv->ntargets, PROTO_TARGETS_MAX);
    if (!c->err && inv->ntargets && !inv->targets)
        return ctx_fail(c, "hello.inventory.targets: NULL with ntargets %zu", inv->ntargets);
    cJSON *jtargets = put_container(c, jinv, "targets", cJSON_CreateArray());
    for (size_t i = 0; jtargets && i < inv->ntargets && !c->err; i++) {
        const struct proto_target_info *t = &inv->targets[i];
        char prefix[PATH_BUF], path[PATH_BUF];
        snprintf(prefix, sizeof(prefix), "hello.inventory.targets[%zu]", i);
        cJSON *jt = cJSON_CreateObject();
        if (!jt || !cJSON_AddItemToArray(jtargets, jt)) {
            cJSON_Delete(jt);
            return ctx_oom(c);
        }
        put_str(c, jt, prefix, "path", t->path, STR_PATH, 0);
        put_u64(c, jt, "size", t->size);
        mkpath(path, prefix, "logical_block_size");
        check_block_size(c, path, t->logical_block_size);
        put_u64(c, jt, "logical_block_size", t->logical_block_size);
        put_tristate(c, jt, prefix, "rotational", t->rotational);
        put_str(c, jt, prefix, "model", t->model, STR_LABEL, NULLABLE);
        if (t->kind)
            put_str(c, jt, prefix, "kind", t->kind, STR_LABEL, 0);
        if (t->physical_block_size) {
            mkpath(path, prefix, "physical_block_size");
            check_block_size(c, path, t->physical_block_size);
            put_u64(c, jt, "physical_block_size", t->physical_block_size);
        }
        /* The storage details are written only when known (older agents
         * send none of them; a missing one reads as unknown). */
        if (t->device)
            put_str(c, jt, prefix, "device", t->device, STR_LABEL, 0);
        if (t->mountpoint)
            put_str(c, jt, prefix, "mountpoint", t->mountpoint, STR_PATH, 0);
        if (t->signature)
            put_str(c, jt, prefix, "signature", t->signature, STR_LABEL, 0);
        if (t->in_use >= 0)
            put_tristate(c, jt, prefix, "in_use", t->in_use);
        if (t->ram_backed >= 0)
            put_tristate(c, jt, prefix, "ram_backed", t->ram_backed);
    }
    if (!c->err && inv->workdir.path) {
        const struct proto_workdir_info *w = &inv->workdir;
        const char *pw = "hello.inventory.workdir";
        cJSON *jw = put_container(c, jinv, "workdir", cJSON_CreateObject());
        if (jw) {
            put_str(c, jw, pw, "path", w->path, STR_PATH, 0);
            if (w->fstype)
                put_str(c, jw, pw, "fstype", w->fstype, STR_LABEL, 0);
            if (w->device)
                put_str(c, jw, pw, "device", w->device, STR_LABEL, 0);
            put_u64(c, jw, "size", w->size);
            put_u64(c, jw, "free", w->free);
            if (w->ram_backed >= 0)
                put_tristate(c, jw, pw, "ram_backed", w->ram_backed);
        }
    }
    return c->err;
}

/* An optional non-negative integer: *out keeps its value when the field is
 * missing or null. */
static int get_u64_opt(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                       uint64_t *out)
{
    char path[PATH_BUF];
    mkpath(path, prefix, key);
    const cJSON *it = get_item(c, obj, path, key, OPTIONAL | NULLABLE);
    if (it && !json_u64(it, out))
        return ctx_fail(c, "%s: must be a non-negative integer", path);
    return c->err;
}

static int workdir_decode(struct ctx *c, const cJSON *jinv, struct proto_workdir_info *w)
{
    const char *pw = "hello.inventory.workdir";
    const cJSON *jw = get_item(c, jinv, pw, "workdir", OPTIONAL | NULLABLE);

    w->ram_backed = -1;
    if (!jw)
        return c->err;
    if (!cJSON_IsObject(jw))
        return ctx_fail(c, "%s: must be an object", pw);
    get_str(c, jw, pw, "path", STR_PATH, 0, &w->path);
    get_str(c, jw, pw, "fstype", STR_LABEL, OPTIONAL | NULLABLE, &w->fstype);
    get_str(c, jw, pw, "device", STR_LABEL, OPTIONAL | NULLABLE, &w->device);
    get_u64_opt(c, jw, pw, "size", &w->size);
    get_u64_opt(c, jw, pw, "free", &w->free);
    get_tristate(c, jw, pw, "ram_backed", &w->ram_backed);
    return c->err;
}

static int inventory_decode(struct ctx *c, const cJSON *root, struct proto_inventory *inv)
{
    const char *p = "hello.inventory";
    const cJSON *jinv = get_object(c, root, "hello", "inventory");
    uint64_t v = 0;
    get_str(c, jinv, p, "hostname", STR_LABEL, 0, &inv->hostname);
    get_uint(c, jinv, p, "cpus", 1, 65536, &v);
    inv->cpus = (uint32_t)v;
    get_u64(c, jinv, p, "memory_bytes", &inv->memory_bytes);
    get_str(c, jinv, p, "kernel", STR_LABEL, 0, &inv->kernel);
    const cJSON *jb = get_item(c, jinv, "hello.inventory.budget", "budget", OPTIONAL);
    if (jb) {
        const char *pb = "hello.inventory.budget";
        if (!cJSON_IsObject(jb))
            return ctx_fail(c, "%s: must be an object", pb);
        get_u64(c, jb, pb, "workers", &inv->budget.workers);
        get_u64(c, jb, pb, "buffer_mem", &inv->budget.buffer_mem);
        get_u64(c, jb, pb, "aio_events", &inv->budget.aio_events);
        get_u64(c, jb, pb, "fds", &inv->budget.fds);
        inv->has_budget = !c->err;
    }
    const cJSON *jtargets = get_array(c, jinv, p, "targets");
    if (c->err)
        return c->err;

    size_t n = 0;
    const cJSON *jt;
    cJSON_ArrayForEach(jt, jtargets) n++;
    if (n > PROTO_TARGETS_MAX)
        return ctx_fail(c, "hello.inventory.targets: %zu targets, at most %d allowed", n,
                        PROTO_TARGETS_MAX);
    if (n == 0)
        return workdir_decode(c, jinv, &inv->workdir);
    inv->targets = calloc(n, sizeof(*inv->targets));
    if (!inv->targets)
        return ctx_oom(c);
    inv->ntargets = n; /* from here on, proto_msg_clear() frees partial entries */

    size_t i = 0;
    cJSON_ArrayForEach(jt, jtargets)
    {
        struct proto_target_info *t = &inv->targets[i];
        char prefix[PATH_BUF], path[PATH_BUF];
        snprintf(prefix, sizeof(prefix), "hello.inventory.targets[%zu]", i++);
        t->rotational = -1;
        t->in_use = -1;
        t->ram_backed = -1;
        if (!cJSON_IsObject(jt))
            return ctx_fail(c, "%s: must be an object", prefix);
        get_str(c, jt, prefix, "path", STR_PATH, 0, &t->path);
        get_u64(c, jt, prefix, "size", &t->size);
        get_u64(c, jt, prefix, "logical_block_size", &v);
        mkpath(path, prefix, "logical_block_size");
        check_block_size(c, path, v);
        t->logical_block_size = (uint32_t)v;
        get_tristate(c, jt, prefix, "rotational", &t->rotational);
        get_str(c, jt, prefix, "model", STR_LABEL, OPTIONAL | NULLABLE, &t->model);
        get_str(c, jt, prefix, "kind", STR_LABEL, OPTIONAL | NULLABLE, &t->kind);
        v = 0;
        get_u64_opt(c, jt, prefix, "physical_block_size", &v);
        if (v) {
            mkpath(path, prefix, "physical_block_size");
            check_block_size(c, path, v);
            t->physical_block_size = (uint32_t)v;
        }
        get_str(c, jt, prefix, "device", STR_LABEL, OPTIONAL | NULLABLE, &t->device);
        get_str(c, jt, prefix, "mountpoint", STR_PATH, OPTIONAL | NULLABLE, &t->mountpoint);
        get_str(c, jt, prefix, "signature", STR_LABEL, OPTIONAL | NULLABLE, &t->signature);
        get_tristate(c, jt, prefix, "in_use", &t->in_use);
        get_tristate(c, jt, prefix, "ram_backed", &t->ram_backed);
        if (c->err)
            return c->err;
    }
    return workdir_decode(c, jinv, &inv->workdir);
}

static int get_role(struct ctx *c, const cJSON *root, enum proto_role *role)
{
    const cJSON *it = get_item(c, root, "hello.role", "role", 0);
    if (!it)
        return c->err;
    if (cJSON_IsString(it) && strcmp(it->valuestring, "manager") == 0)
        *role = PROTO_ROLE_MANAGER;
    else if (cJSON_IsString(it) && strcmp(it->valuestring, "agent") == 0)
        *role = PROTO_ROLE_AGENT;
    else
        ctx_fail(c, "hello.role: must be \"manager\" or \"agent\"");
    return c->err;
}

static int hello_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_hello *h = &msg->u.hello;
    const cJSON *v = get_item(c, root, "hello.v", "v", 0);
    if (!v)
        return c->err;
    const cJSON *jmajor = cJSON_IsArray(v) ? v->child : NULL;
    const cJSON *jminor = jmajor ? jmajor->next : NULL;
    uint64_t major, minor;
    if (!jminor || jminor->next || !cJSON_IsNumber(jmajor) || !cJSON_IsNumber(jminor) ||
        !json_u64(jmajor, &major) || !json_u64(jminor, &minor) || major > UINT16_MAX ||
        minor > UINT16_MAX)
        return ctx_fail(c, "hello.v: must be [major, minor] with integers 0..65535");
    h->major = (unsigned)major;
    h->minor = (unsigned)minor;

    /* Before anything else: a peer of another major may lay out the rest of
     * its hello differently, and "protocol 2.0 is not compatible" is what
     * the user must read, not a missing field. Role and name are kept when
     * readable (they are frozen across majors) to name the peer. */
    int rc = proto_version_compatible(h->major, h->minor, c->diag);
    if (rc) {
        struct ctx quiet = {.bad = IOF_EPROTO};
        get_role(&quiet, root, &h->role);
        quiet.err = 0;
        get_str(&quiet, root, "hello", "name", STR_NAME, 0, &h->name);
        c->err = rc;
        return c->err;
    }

    get_role(c, root, &h->role);
    get_str(c, root, "hello", "name", STR_NAME, 0, &h->name);
    get_str(c, root, "hello", "software", STR_LABEL, 0, &h->software);
    uint64_t hb = 0;
    get_uint(c, root, "hello", "heartbeat_ms", PROTO_HEARTBEAT_MS_MIN, PROTO_HEARTBEAT_MS_MAX, &hb);
    h->heartbeat_ms = (uint32_t)hb;
    /* 1.5: optional; a peer that does not read it ignores it as any
     * unknown field. */
    hb = 0;
    if (field(root, "heartbeat_offer_ms"))
        get_uint(c, root, "hello", "heartbeat_offer_ms", PROTO_HEARTBEAT_MS_MIN,
                 PROTO_HEARTBEAT_MS_MAX, &hb);
    h->heartbeat_offer_ms = (uint32_t)hb;
    /* A manager's hello has no inventory; one sent anyway is ignored like
     * any unknown field. */
    if (!c->err && h->role == PROTO_ROLE_AGENT)
        inventory_decode(c, root, &h->inventory);
    return c->err;
}

/* ---- welcome: the agreed heartbeat period (optional) ------------------- */

static int welcome_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    if (msg->u.welcome.heartbeat_ms)
        put_uint(c, root, "welcome", "heartbeat_ms", msg->u.welcome.heartbeat_ms,
                 PROTO_HEARTBEAT_MS_MIN, PROTO_HEARTBEAT_MS_MAX);
    return c->err;
}

static int welcome_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    uint64_t hb = 0;
    if (field(root, "heartbeat_ms"))
        get_uint(c, root, "welcome", "heartbeat_ms", PROTO_HEARTBEAT_MS_MIN, PROTO_HEARTBEAT_MS_MAX,
                 &hb);
    msg->u.welcome.heartbeat_ms = (uint32_t)hb;
    return c->err;
}

/* ---- heartbeat, clock probes, start ------------------------------------ */

static int heartbeat_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    put_u64(c, root, "seq", msg->u.heartbeat.seq);
    put_u64(c, root, "sent_ns", msg->u.heartbeat.sent_ns);
    return c->err;
}

static int heartbeat_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    get_u64(c, root, "heartbeat", "seq", &msg->u.heartbeat.seq);
    get_u64(c, root, "heartbeat", "sent_ns", &msg->u.heartbeat.sent_ns);
    return c->err;
}

static int clock_probe_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    put_u64(c, root, "seq", msg->u.clock_probe.seq);
    put_u64(c, root, "t0_ns", msg->u.clock_probe.t0_ns);
    return c->err;
}

static int clock_probe_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    get_u64(c, root, "clock_probe", "seq", &msg->u.clock_probe.seq);
    get_u64(c, root, "clock_probe", "t0_ns", &msg->u.clock_probe.t0_ns);
    return c->err;
}

static int clock_reply_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    put_u64(c, root, "seq", msg->u.clock_reply.seq);
    put_u64(c, root, "t0_ns", msg->u.clock_reply.t0_ns);
    put_u64(c, root, "agent_ns", msg->u.clock_reply.agent_ns);
    return c->err;
}

static int clock_reply_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    get_u64(c, root, "clock_reply", "seq", &msg->u.clock_reply.seq);
    get_u64(c, root, "clock_reply", "t0_ns", &msg->u.clock_reply.t0_ns);
    get_u64(c, root, "clock_reply", "agent_ns", &msg->u.clock_reply.agent_ns);
    return c->err;
}

/* Signed 64-bit values travel as decimal strings ("-1234"): exact, and
 * free of the 2^53 limit of JSON numbers in cJSON. */
static int put_i64(struct ctx *c, cJSON *obj, const char *key, int64_t v)
{
    char text[24];
    if (c->err)
        return c->err;
    snprintf(text, sizeof(text), "%" PRId64, v);
    return put_item(c, obj, key, cJSON_CreateString(text));
}

static int get_i64(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                   int64_t *out)
{
    char path[PATH_BUF], *end;
    long long v;
    mkpath(path, prefix, key);
    const cJSON *it = get_item(c, obj, path, key, 0);
    if (!it)
        return c->err;
    if (!cJSON_IsString(it) || !it->valuestring || !it->valuestring[0] ||
        strlen(it->valuestring) > 20)
        return ctx_fail(c, "%s: must be a signed integer as a decimal string", path);
    /* Digits with an optional minus: no blanks, no plus, nothing after. */
    if (strspn(it->valuestring + (it->valuestring[0] == '-'), "0123456789") !=
            strlen(it->valuestring + (it->valuestring[0] == '-')) ||
        !it->valuestring[it->valuestring[0] == '-'])
        return ctx_fail(c, "%s: must be a signed 64-bit integer as a decimal string", path);
    errno = 0;
    v = strtoll(it->valuestring, &end, 10);
    if (*end || errno)
        return ctx_fail(c, "%s: must be a signed 64-bit integer as a decimal string", path);
    *out = v;
    return c->err;
}

/* start, and setup (protocol 1.4): the same fields but the start time. */
static int start_or_setup_encode(struct ctx *c, cJSON *root, const struct proto_start *st,
                                 bool start)
{
    put_u64(c, root, "test", st->test);
    if (start) {
        put_u64(c, root, "start_at_ns", st->start_at_ns);
        if (st->offset_ns)
            put_i64(c, root, "offset_ns", st->offset_ns);
    }
    if (st->nrates && !c->err) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; arr && i < st->nrates; i++) {
            cJSON *n = cJSON_CreateNumber(st->rates[i]);
            if (!n || !cJSON_AddItemToArray(arr, n)) {
                cJSON_Delete(n);
                cJSON_Delete(arr);
                arr = NULL;
            }
        }
        put_item(c, root, "rates", arr);
    }
    return c->err;
}

static int start_or_setup_decode(struct ctx *c, const cJSON *root, struct proto_start *st,
                                 bool start)
{
    const char *name = start ? "start" : "setup";
    uint64_t test = 0;
    get_uint(c, root, name, "test", 0, UINT32_MAX, &test);
    st->test = (uint32_t)test;
    if (start) {
        get_u64(c, root, name, "start_at_ns", &st->start_at_ns);
        /* Optional (0 when absent): a manager that measured no offset. */
        if (field(root, "offset_ns"))
            get_i64(c, root, name, "offset_ns", &st->offset_ns);
    }
    /* Optional: per-worker IOPS of a rate cycle's step. */
    if (field(root, "rates")) {
        const cJSON *arr = get_array(c, root, name, "rates"), *it;
        size_t n = 0, i = 0;
        if (!arr)
            return c->err;
        cJSON_ArrayForEach(it, arr) n++;
        if (n == 0 || n > PROTO_START_MAX_RATES)
            return ctx_fail(c, "%s.rates: must hold 1..%u entries, got %zu", name,
                            (unsigned)PROTO_START_MAX_RATES, n);
        st->rates = calloc(n, sizeof(double));
        if (!st->rates)
            return ctx_oom(c);
        st->nrates = n;
        cJSON_ArrayForEach(it, arr)
        {
            double v = cJSON_IsNumber(it) ? it->valuedouble : -1;
            if (!(v == 0 || (v >= IOF_RATE_MIN && v <= IOF_RATE_MAX_IOPS)))
                return ctx_fail(c, "%s.rates[%zu]: must be 0 or %g..%g IOPS", name, i, IOF_RATE_MIN,
                                IOF_RATE_MAX_IOPS);
            st->rates[i++] = v;
        }
    }
    return c->err;
}

static int start_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    return start_or_setup_encode(c, root, &msg->u.start, true);
}

static int start_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    return start_or_setup_decode(c, root, &msg->u.start, true);
}

static int setup_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    return start_or_setup_encode(c, root, &msg->u.setup, false);
}

static int setup_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    return start_or_setup_decode(c, root, &msg->u.setup, false);
}

static int ready_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    put_u64(c, root, "test", msg->u.ready.test);
    return c->err;
}

static int ready_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    uint64_t test = 0;
    get_uint(c, root, "ready", "test", 0, UINT32_MAX, &test);
    msg->u.ready.test = (uint32_t)test;
    return c->err;
}

/* ---- plan, prepare, prepare_progress, prepared ------------------------- */

static int plan_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_plan *p = &msg->u.plan;
    cJSON *obj;
    if (!p->text)
        return ctx_fail(c, "plan.plan: required field missing");
    {
        const char *end = NULL;
        obj = cJSON_ParseWithLengthOpts(p->text, p->len, &end, 0);
        while (obj && end < p->text + p->len &&
               (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
            end++;
        if (!obj || !cJSON_IsObject(obj) || end != p->text + p->len) {
            cJSON_Delete(obj);
            return ctx_fail(c, "plan.plan: must be the text of a JSON object");
        }
    }
    if (proto_json_make_exact(obj)) {
        cJSON_Delete(obj);
        return ctx_oom(c);
    }
    put_item(c, root, "plan", obj);
    return c->err;
}

/* The plan is kept as text: the agent validates it with the plan loader,
 * field by field, exactly as `iofleet validate` does. */
static int plan_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    const cJSON *obj = get_object(c, root, "plan", "plan");
    char *text;
    if (!obj)
        return c->err;
    text = proto_json_print_exact(obj);
    if (!text)
        return ctx_oom(c);
    msg->u.plan.text = text;
    msg->u.plan.len = strlen(text);
    return c->err;
}

static int empty_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    (void)root, (void)msg;
    return c->err;
}

static int empty_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    (void)root, (void)msg;
    return c->err;
}

/* ---- prepared: where each target lives (optional) ---------------------- */

static int prepared_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_prepared *pr = &msg->u.prepared;
    cJSON *ja;

    if (!pr->nplaces)
        return c->err;
    if (pr->nplaces > PROTO_PLACES_MAX || !pr->places)
        return ctx_fail(c, "prepared.targets: %zu entries, at most %d", pr->nplaces,
                        PROTO_PLACES_MAX);
    ja = put_container(c, root, "targets", cJSON_CreateArray());
    for (size_t i = 0; ja && i < pr->nplaces && !c->err; i++) {
        const struct proto_target_place *t = &pr->places[i];
        char prefix[PATH_BUF];
        cJSON *jt = cJSON_CreateObject();
        snprintf(prefix, sizeof(prefix), "prepared.targets[%zu]", i);
        if (!jt || !cJSON_AddItemToArray(ja, jt)) {
            cJSON_Delete(jt);
            return ctx_oom(c);
        }
        put_u64(c, jt, "group", t->group);
        put_u64(c, jt, "target", t->target);
        if (t->device)
            put_str(c, jt, prefix, "device", t->device, STR_LABEL, 0);
        if (t->fstype)
            put_str(c, jt, prefix, "fstype", t->fstype, STR_LABEL, 0);
        put_tristate(c, jt, prefix, "ram_backed", t->ram_backed);
    }
    return c->err;
}

static int prepared_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_prepared *pr = &msg->u.prepared;
    const cJSON *ja = get_item(c, root, "prepared.targets", "targets", OPTIONAL | NULLABLE), *jt;
    size_t n = 0;

    if (!ja)
        return c->err;
    if (!cJSON_IsArray(ja))
        return ctx_fail(c, "prepared.targets: must be an array");
    cJSON_ArrayForEach(jt, ja) n++;
    if (n > PROTO_PLACES_MAX)
        return ctx_fail(c, "prepared.targets: %zu entries, at most %d", n, PROTO_PLACES_MAX);
    if (!n)
        return c->err;
    pr->places = calloc(n, sizeof(*pr->places));
    if (!pr->places)
        return ctx_oom(c);
    pr->nplaces = n; /* from here on, proto_msg_clear() frees partial entries */
    size_t i = 0;
    cJSON_ArrayForEach(jt, ja)
    {
        struct proto_target_place *t = &pr->places[i];
        char prefix[PATH_BUF];
        uint64_t v = 0;
        snprintf(prefix, sizeof(prefix), "prepared.targets[%zu]", i++);
        t->ram_backed = -1;
        if (!cJSON_IsObject(jt))
            return ctx_fail(c, "%s: must be an object", prefix);
        get_uint(c, jt, prefix, "group", 0, IOF_PLAN_MAX_GROUPS - 1, &v);
        t->group = (uint32_t)v;
        get_uint(c, jt, prefix, "target", 0, IOF_PLAN_MAX_TARGETS - 1, &v);
        t->target = (uint32_t)v;
        get_str(c, jt, prefix, "device", STR_LABEL, OPTIONAL | NULLABLE, &t->device);
        get_str(c, jt, prefix, "fstype", STR_LABEL, OPTIONAL | NULLABLE, &t->fstype);
        get_tristate(c, jt, prefix, "ram_backed", &t->ram_backed);
        if (c->err)
            return c->err;
    }
    return c->err;
}

static int progress_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_prepare_progress *p = &msg->u.prepare_progress;
    put_str(c, root, "prepare_progress", "path", p->path, STR_PATH, 0);
    put_u64(c, root, "done", p->done);
    put_u64(c, root, "total", p->total);
    if (p->verify)
        put_str(c, root, "prepare_progress", "stage", "verify", STR_LABEL, 0);
    return c->err;
}

static int progress_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_prepare_progress *p = &msg->u.prepare_progress;
    get_str(c, root, "prepare_progress", "path", STR_PATH, 0, &p->path);
    get_u64(c, root, "prepare_progress", "done", &p->done);
    get_u64(c, root, "prepare_progress", "total", &p->total);
    {
        const char *stage = NULL;
        get_str(c, root, "prepare_progress", "stage", STR_LABEL, OPTIONAL | NULLABLE, &stage);
        if (!c->err && stage && strcmp(stage, "verify") == 0)
            p->verify = true;
        else if (!c->err && stage && strcmp(stage, "prepare") != 0)
            ctx_fail(c, "prepare_progress.stage: '%s' is not \"prepare\" or \"verify\"", stage);
        free((void *)stage);
    }
    if (!c->err && p->done > p->total)
        ctx_fail(c, "prepare_progress.done: %" PRIu64 " exceeds total %" PRIu64, p->done, p->total);
    return c->err;
}

/* ---- stats and result -------------------------------------------------- */

/* Puts h at key of j as base64 of its sparse wire form (iof_hist_encode):
 * the histograms of a JSON stats or result body. */
static int hist_put_b64(struct ctx *c, cJSON *j, const char *key, const struct iof_hist *h)
{
    size_t cap = iof_hist_encoded_max(h);
    uint8_t *raw = malloc(cap);
    long n = raw ? iof_hist_encode(h, raw, cap) : -ENOMEM;
    char *b64 = n >= 0 ? malloc(4 * (((size_t)n + 2) / 3) + 1) : NULL;

    if (!b64) {
        free(raw);
        return ctx_oom(c);
    }
    EVP_EncodeBlock((unsigned char *)b64, raw, (int)n);
    free(raw);
    put_item(c, j, key, cJSON_CreateString(b64));
    free(b64);
    return c->err;
}

/* The bytes of the base64 histogram `it` at path, into stack (cap bytes)
 * when they fit, else into a buffer *raw the caller frees when it is not
 * stack; *len their count. 0, or a ctx failure naming path. */
static int hist_get_b64(struct ctx *c, const cJSON *it, const char *path, uint8_t *stack,
                        size_t cap, uint8_t **raw, size_t *len)
{
    size_t blen, pad = 0;
    int n;

    *raw = NULL;
    if (!cJSON_IsString(it) || !it->valuestring)
        return ctx_fail(c, "%s: must be a base64 string", path);
    blen = strlen(it->valuestring);
    if (blen % 4 || blen > 4 * 65536)
        return ctx_fail(c, "%s: bad base64 length %zu", path, blen);
    *raw = blen / 4 * 3 + 1 <= cap ? stack : malloc(blen / 4 * 3 + 1);
    if (!*raw)
        return ctx_oom(c);
    n = EVP_DecodeBlock(*raw, (const unsigned char *)it->valuestring, (int)blen);
    if (blen >= 1 && it->valuestring[blen - 1] == '=')
        pad++;
    if (blen >= 2 && it->valuestring[blen - 2] == '=')
        pad++;
    if (n < 0 || (size_t)n < pad)
        return ctx_fail(c, "%s: not a valid histogram", path);
    *len = (size_t)n - pad;
    return 0;
}

/* One direction: {"ios":n,"bytes":n,"errors":n,"lat":"<base64 of the sparse
 * histogram>"}; left out entirely when nothing happened. */
static int dir_encode(struct ctx *c, cJSON *obj, const char *prefix, const char *key,
                      const struct iof_dirstats *d)
{
    cJSON *j;

    if (c->err || (!d->ios && !d->errors && !d->bytes && !d->lat.count))
        return c->err;
    if (d->lat.count != d->ios)
        return ctx_fail(c, "%s.%s: %" PRIu64 " latencies for %" PRIu64 " I/Os", prefix, key,
                        d->lat.count, d->ios);
    j = put_container(c, obj, key, cJSON_CreateObject());
    if (!j)
        return c->err;
    put_u64(c, j, "ios", d->ios);
    put_u64(c, j, "bytes", d->bytes);
    put_u64(c, j, "errors", d->errors);
    return hist_put_b64(c, j, "lat", &d->lat);
}

/* Decodes one direction into d, or - with `add` - adds it to d (the sum of
 * a whole message, see PROTO_DECODE_SUM_STATS). */
static int dir_decode(struct ctx *c, const cJSON *obj, const char *prefix, const char *key,
                      struct iof_dirstats *d, bool add, struct iof_dircounts *one)
{
    struct iof_hist_summary hs = {0, 0, UINT64_MAX, 0};
    char path[PATH_BUF], lpath[PATH_BUF];
    const cJSON *j, *lat;
    uint64_t ios = 0, bytes = 0, errors = 0, before = add ? d->lat.count : 0;
    size_t len = 0;
    uint8_t stackbuf[4096], *raw;
    int r;

    mkpath(path, prefix, key);
    j = get_item(c, obj, path, key, OPTIONAL);
    if (one)
        *one = (struct iof_dircounts){.lat_min_ns = UINT64_MAX};
    if (!j || c->err) {
        /* Absent: nothing happened in this direction. (A present one is
         * reset by iof_hist_decode: each histogram is zeroed once.) */
        if (!add) {
            d->ios = d->bytes = d->errors = 0;
            iof_hist_reset(&d->lat);
        }
        return c->err;
    }
    if (!cJSON_IsObject(j))
        return ctx_fail(c, "%s: must be an object", path);
    get_u64(c, j, path, "ios", &ios);
    get_u64(c, j, path, "bytes", &bytes);
    get_u64(c, j, path, "errors", &errors);
    lat = c->err ? NULL : field(j, "lat");
    if (!c->err && !lat) {
        mkpath(lpath, path, "lat");
        return ctx_fail(c, "%s: required field missing", lpath);
    }
    if (c->err)
        return c->err;
    /* Typical histograms are a few hundred bytes: decode on the stack. */
    mkpath(lpath, path, "lat");
    if (hist_get_b64(c, lat, lpath, stackbuf, sizeof(stackbuf), &raw, &len)) {
        if (raw != stackbuf)
            free(raw);
        return c->err;
    }
    r = add ? iof_hist_decode_add_summary(&d->lat, raw, len, &hs)
            : iof_hist_decode(&d->lat, raw, len);
    if (raw != stackbuf)
        free(raw);
    if (r)
        return ctx_fail(c, "%s: not a valid histogram", lpath);
    if (d->lat.count - before != ios)
        return ctx_fail(c, "%s: %" PRIu64 " latencies for %" PRIu64 " I/Os", path,
                        d->lat.count - before, ios);
    if (add) {
        d->ios += ios;
        d->bytes += bytes;
        d->errors += errors;
        if (one)
            *one = iof_dircounts_of(bytes, errors, &hs); /* hs.count == ios, checked above */
    } else {
        d->ios = ios;
        d->bytes = bytes;
        d->errors = errors;
    }
    return c->err;
}

/* A rated worker's target: {"n":n,"sum":ns,"min":ns,"max":ns,"late":n}, the
 * service latency summary and the late count; left out when the worker is
 * not rated (nothing recorded). A target's sum fits 64 bits: each of its
 * at most IOF_PLAN_MAX_QD slots is in service at most the whole window. */
static int rated_encode(struct ctx *c, cJSON *obj, const char *prefix, const struct iof_rated *r)
{
    cJSON *j;

    if (c->err || (!r->svc.count && !r->late))
        return c->err;
    if (r->svc.sum_ns > UINT64_MAX || r->late > r->svc.count)
        return ctx_fail(c, "%s.rated: inconsistent service latency summary", prefix);
    j = put_container(c, obj, "rated", cJSON_CreateObject());
    if (!j)
        return c->err;
    put_u64(c, j, "n", r->svc.count);
    put_u64(c, j, "sum", (uint64_t)r->svc.sum_ns);
    put_u64(c, j, "min", r->svc.min_ns);
    put_u64(c, j, "max", r->svc.max_ns);
    put_u64(c, j, "late", r->late);
    return c->err;
}

/* Decodes "rated" of a target into *one (overwritten), checked like a
 * histogram's summary: count x min <= sum <= count x max, late <= count. */
static int rated_decode(struct ctx *c, const cJSON *obj, const char *prefix, struct iof_rated *one)
{
    char path[PATH_BUF];
    const cJSON *j;
    uint64_t n = 0, sum = 0, min = 0, max = 0, late = 0;

    iof_rated_reset(one);
    mkpath(path, prefix, "rated");
    j = get_item(c, obj, path, "rated", OPTIONAL);
    if (!j || c->err)
        return c->err;
    if (!cJSON_IsObject(j))
        return ctx_fail(c, "%s: must be an object", path);
    get_u64(c, j, path, "n", &n);
    get_u64(c, j, path, "sum", &sum);
    get_u64(c, j, path, "min", &min);
    get_u64(c, j, path, "max", &max);
    get_u64(c, j, path, "late", &late);
    if (c->err)
        return c->err;
    if (late > n || (n && (min > max || (iof_u128)min * n > sum || (iof_u128)max * n < sum)) ||
        (!n && sum))
        return ctx_fail(c, "%s: inconsistent service latency summary", path);
    if (n) {
        one->svc = (struct iof_hist_summary){n, sum, min, max};
    }
    one->late = late;
    return c->err;
}

/* The cpu's node figures (protocol 1.6): all present or none; the first
 * two are percentages, the others counts or rates. */
static const char *const cpu_node_keys[] = {"dpc",       "irq",           "intr_s",
                                            "packets_s", "packet_errors", "retrans_s"};
#define CPU_NODE_MAX 1e15 /* far above any rate or count a window can have */

static void cpu_node_ptrs(struct proto_cpu *cpu, double **v)
{
    v[0] = &cpu->dpc_pct;
    v[1] = &cpu->irq_pct;
    v[2] = &cpu->intr_per_s;
    v[3] = &cpu->packets_per_s;
    v[4] = &cpu->packet_errors;
    v[5] = &cpu->retrans_per_s;
}

static int cpu_encode(struct ctx *c, cJSON *root, const struct proto_cpu *cpu)
{
    static const char *const keys[] = {"busy", "user", "sys", "agent"};
    const double v[] = {cpu->busy_pct, cpu->user_pct, cpu->sys_pct, cpu->agent_pct};
    cJSON *j;

    if (!cpu->valid || c->err)
        return c->err;
    j = put_container(c, root, "cpu", cJSON_CreateObject());
    for (size_t i = 0; j && i < 4; i++) {
        /* Two decimals are plenty, and keep the text short. */
        double r = !(v[i] > 0) ? 0 : v[i] > 100 ? 100 : (double)(int64_t)(v[i] * 100 + 0.5) / 100;
        put_item(c, j, keys[i], cJSON_CreateNumber(r));
    }
    if (cpu->node_valid) {
        struct proto_cpu copy = *cpu;
        double *nv[6];
        cpu_node_ptrs(&copy, nv);
        for (size_t i = 0; j && i < 6; i++) {
            double max = i < 2 ? 100 : CPU_NODE_MAX, x = *nv[i];
            double r = !(x > 0) ? 0 : x > max ? max : (double)(int64_t)(x * 100 + 0.5) / 100;
            put_item(c, j, cpu_node_keys[i], cJSON_CreateNumber(r));
        }
    }
    return c->err;
}

static int cpu_decode(struct ctx *c, const cJSON *root, const char *name, struct proto_cpu *cpu)
{
    static const char *const keys[] = {"busy", "user", "sys", "agent"};
    double *v[] = {&cpu->busy_pct, &cpu->user_pct, &cpu->sys_pct, &cpu->agent_pct};
    char prefix[PATH_BUF];
    const cJSON *j;

    mkpath(prefix, name, "cpu");
    j = get_item(c, root, prefix, "cpu", OPTIONAL | NULLABLE);
    if (!j || c->err)
        return c->err;
    if (!cJSON_IsObject(j))
        return ctx_fail(c, "%s: must be an object", prefix);
    for (size_t i = 0; i < 4; i++) {
        char path[PATH_BUF];
        const cJSON *it;
        mkpath(path, prefix, keys[i]);
        it = get_item(c, j, path, keys[i], 0);
        if (c->err)
            return c->err;
        if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= 100))
            return ctx_fail(c, "%s: must be a number 0..100", path);
        *v[i] = it->valuedouble;
    }
    cpu->valid = true;
    /* 1.6's node figures: all or none (an older agent sends none: unknown). */
    if (get_item(c, j, prefix, cpu_node_keys[0], OPTIONAL)) {
        double *nv[6];
        cpu_node_ptrs(cpu, nv);
        for (size_t i = 0; i < 6; i++) {
            char path[PATH_BUF];
            const cJSON *it;
            double max = i < 2 ? 100 : CPU_NODE_MAX;
            mkpath(path, prefix, cpu_node_keys[i]);
            it = get_item(c, j, path, cpu_node_keys[i], 0);
            if (c->err)
                return c->err;
            if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= max))
                return ctx_fail(c, "%s: must be a number 0..%g", path, max);
            *nv[i] = it->valuedouble;
        }
        cpu->node_valid = true;
    }
    return c->err;
}

static int stats_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_stats *st = &msg->u.stats;
    bool result = msg->type == PROTO_MSG_RESULT;
    size_t total = 0;
    cJSON *jw;

    if (st->nworkers > PROTO_STATS_MAX_WORKERS)
        return ctx_fail(c, "%s.workers: %zu workers, at most %d", msg_types[msg->type].name,
                        st->nworkers, PROTO_STATS_MAX_WORKERS);
    put_u64(c, root, "test", st->test);
    if (result) {
        put_u64(c, root, "measured_ns", st->measured_ns);
        put_u64(c, root, "cpu_ns", st->cpu_ns);
        put_u64(c, root, "started_first_ns", st->started_first_ns);
        put_u64(c, root, "started_last_ns", st->started_last_ns);
        if (!c->err)
            put_item(c, root, "interrupted", cJSON_CreateBool(st->interrupted));
        put_str(c, root, "result", "error", st->error, STR_TEXT, NULLABLE);
        if (st->nverify_reports > PROTO_VERIFY_REPORTS_MAX)
            return ctx_fail(c, "result.verify_reports: %zu entries, at most %d",
                            st->nverify_reports, PROTO_VERIFY_REPORTS_MAX);
        if (st->nverify_reports && !c->err) {
            cJSON *jr = put_container(c, root, "verify_reports", cJSON_CreateArray());
            for (size_t i = 0; jr && i < st->nverify_reports && !c->err; i++) {
                cJSON *s;
                check_str(c, "result.verify_reports[]", st->verify_reports[i], STR_TEXT);
                s = c->err ? NULL : cJSON_CreateString(st->verify_reports[i]);
                if (!c->err && (!s || !cJSON_AddItemToArray(jr, s))) {
                    cJSON_Delete(s);
                    return ctx_oom(c);
                }
            }
        }
    } else {
        put_u64(c, root, "interval", st->interval);
        if (st->lost && !c->err)
            put_item(c, root, "lost", cJSON_CreateBool(true));
        if (st->duration_ns)
            put_u64(c, root, "duration_ns", st->duration_ns);
    }
    cpu_encode(c, root, &st->cpu);
    jw = put_container(c, root, "workers", cJSON_CreateArray());
    for (size_t w = 0; jw && w < st->nworkers && !c->err; w++) {
        const struct proto_worker_stats *ws = &st->workers[w];
        cJSON *jt = cJSON_CreateArray();
        if (!jt || !cJSON_AddItemToArray(jw, jt)) {
            cJSON_Delete(jt);
            return ctx_oom(c);
        }
        if (ws->ntargets > PROTO_STATS_MAX_TARGETS)
            return ctx_fail(c, "%s.workers[%zu]: %zu targets, at most %d",
                            msg_types[msg->type].name, w, ws->ntargets, PROTO_STATS_MAX_TARGETS);
        total += ws->ntargets;
        if (total > PROTO_STATS_MAX_TOTAL_TARGETS)
            return ctx_fail(c, "%s.workers: more than %d targets in all", msg_types[msg->type].name,
                            PROTO_STATS_MAX_TOTAL_TARGETS);
        for (size_t t = 0; t < ws->ntargets && !c->err; t++) {
            const struct iof_stats *ts = &ws->targets[t];
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(jt, o)) {
                cJSON_Delete(o);
                return ctx_oom(c);
            }
            {
                char prefix[PATH_BUF];
                snprintf(prefix, sizeof(prefix), "%s.workers[%zu][%zu]", msg_types[msg->type].name,
                         w, t);
                dir_encode(c, o, prefix, "r", &ts->rd);
                dir_encode(c, o, prefix, "w", &ts->wr);
                rated_encode(c, o, prefix, &ts->rated);
            }
            if (ts->verify_errors)
                put_u64(c, o, "verify_errors", ts->verify_errors);
            if (ts->verify_bad_reads)
                put_u64(c, o, "verify_bad_reads", ts->verify_bad_reads);
            if (ts->verify_overlaid)
                put_u64(c, o, "verify_overlaid", ts->verify_overlaid);
            if (ts->first_error > 0)
                return ctx_fail(c,
                                "%s.workers[%zu][%zu].first_error.code: must be a negative "
                                "error code, got %d",
                                msg_types[msg->type].name, w, t, ts->first_error);
            if (ts->first_error && !c->err) {
                cJSON *fe = put_container(c, o, "first_error", cJSON_CreateObject());
                if (fe) {
                    put_str(c, fe, "first_error", "code", iof_errname(ts->first_error), STR_CODE,
                            0);
                    put_u64(c, fe, "offset", ts->first_error_offset);
                }
            }
        }
    }
    return c->err;
}

static int stats_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_stats *st = &msg->u.stats;
    bool result = msg->type == PROTO_MSG_RESULT;
    const char *name = msg_types[msg->type].name;
    const cJSON *jw, *jt;
    struct iof_stats *sum = NULL;
    uint64_t v = 0;
    size_t n = 0, w = 0, total = 0;

    get_uint(c, root, name, "test", 0, UINT32_MAX, &v);
    st->test = (uint32_t)v;
    if (result) {
        const cJSON *it;
        get_u64(c, root, name, "measured_ns", &st->measured_ns);
        get_u64(c, root, name, "cpu_ns", &st->cpu_ns);
        get_u64(c, root, name, "started_first_ns", &st->started_first_ns);
        get_u64(c, root, name, "started_last_ns", &st->started_last_ns);
        it = get_item(c, root, "result.interrupted", "interrupted", 0);
        if (it && !cJSON_IsBool(it))
            return ctx_fail(c, "result.interrupted: must be true or false");
        st->interrupted = it && cJSON_IsTrue(it);
        get_str(c, root, name, "error", STR_TEXT, OPTIONAL | NULLABLE, &st->error);
        if (field(root, "verify_reports")) {
            const cJSON *jr = get_array(c, root, name, "verify_reports"), *e;
            size_t k = 0;
            if (c->err)
                return c->err;
            cJSON_ArrayForEach(e, jr) k++;
            if (k > PROTO_VERIFY_REPORTS_MAX)
                return ctx_fail(c, "result.verify_reports: %zu entries, at most %d", k,
                                PROTO_VERIFY_REPORTS_MAX);
            st->verify_reports = calloc(k ? k : 1, sizeof(*st->verify_reports));
            if (!st->verify_reports)
                return ctx_oom(c);
            cJSON_ArrayForEach(e, jr)
            {
                char *copy;
                if (!cJSON_IsString(e) || !e->valuestring)
                    return ctx_fail(c, "result.verify_reports[%zu]: must be a string",
                                    st->nverify_reports);
                if (check_str(c, "result.verify_reports[]", e->valuestring, STR_TEXT))
                    return c->err;
                copy = strdup(e->valuestring);
                if (!copy)
                    return ctx_oom(c);
                st->verify_reports[st->nverify_reports++] = copy;
            }
        }
    } else {
        const cJSON *it;
        get_u64(c, root, name, "interval", &st->interval);
        it = get_item(c, root, "stats.lost", "lost", OPTIONAL);
        if (it && !cJSON_IsBool(it))
            return ctx_fail(c, "stats.lost: must be true or false");
        st->lost = it && cJSON_IsTrue(it);
        if (field(root, "duration_ns"))
            get_u64(c, root, name, "duration_ns", &st->duration_ns);
    }
    cpu_decode(c, root, name, &st->cpu);
    jw = get_array(c, root, name, "workers");
    if (c->err)
        return c->err;
    cJSON_ArrayForEach(jt, jw) n++;
    if (n > PROTO_STATS_MAX_WORKERS)
        return ctx_fail(c, "%s.workers: %zu workers, at most %d", name, n, PROTO_STATS_MAX_WORKERS);
    if (!n)
        return c->err;
    st->workers = calloc(n, sizeof(*st->workers));
    if (!st->workers)
        return ctx_oom(c);
    st->nworkers = n;
    if (!result && (c->flags & PROTO_DECODE_SUM_STATS)) {
        st->sum = malloc(sizeof(*st->sum));
        if (!st->sum)
            return ctx_oom(c);
        iof_stats_reset(st->sum);
        sum = st->sum;
    }
    if (sum) {
        /* Counted before anything is decoded, for one allocation. */
        size_t all = 0;
        const cJSON *jo;
        cJSON_ArrayForEach(jt, jw)
        {
            if (cJSON_IsArray(jt))
                cJSON_ArrayForEach(jo, jt) all++;
        }
        if (all > PROTO_STATS_MAX_TOTAL_TARGETS)
            return ctx_fail(c, "%s.workers: more than %d targets in all", name,
                            PROTO_STATS_MAX_TOTAL_TARGETS);
        st->counts = calloc(all ? all : 1, sizeof(*st->counts));
        if (!st->counts)
            return ctx_oom(c);
    }
    cJSON_ArrayForEach(jt, jw)
    {
        struct proto_worker_stats *ws = &st->workers[w];
        const cJSON *jo;
        size_t nt = 0, t = 0;
        char prefix[PATH_BUF];
        if (!cJSON_IsArray(jt))
            return ctx_fail(c, "%s.workers[%zu]: must be an array of targets", name, w);
        cJSON_ArrayForEach(jo, jt) nt++;
        if (nt > PROTO_STATS_MAX_TARGETS)
            return ctx_fail(c, "%s.workers[%zu]: %zu targets, at most %d", name, w, nt,
                            PROTO_STATS_MAX_TARGETS);
        /* Each target costs a whole histogram in memory: bound the sum
         * before allocating, whatever the frame size allows. */
        total += nt;
        if (total > PROTO_STATS_MAX_TOTAL_TARGETS)
            return ctx_fail(c, "%s.workers: more than %d targets in all", name,
                            PROTO_STATS_MAX_TOTAL_TARGETS);
        /* Not zeroed here: every field of a target is set below before it
         * is read (39 KiB each; zeroing them three times was the largest
         * single cost of decoding stats at scale). Summing: no per-target
         * storage at all. */
        ws->targets = nt && !sum ? malloc(nt * sizeof(*ws->targets)) : NULL;
        if (nt && !sum && !ws->targets)
            return ctx_oom(c);
        ws->ntargets = nt;
        cJSON_ArrayForEach(jo, jt)
        {
            struct iof_stats *ts = sum ? sum : &ws->targets[t];
            struct iof_counts *one = sum ? &st->counts[total - nt + t] : NULL;
            const cJSON *fe;
            if (!sum) {
                ts->first_error = 0;
                ts->first_error_offset = 0;
            }
            snprintf(prefix, sizeof(prefix), "%s.workers[%zu][%zu]", name, w, t++);
            if (!cJSON_IsObject(jo))
                return ctx_fail(c, "%s: must be an object", prefix);
            dir_decode(c, jo, prefix, "r", &ts->rd, sum != NULL, one ? &one->rd : NULL);
            dir_decode(c, jo, prefix, "w", &ts->wr, sum != NULL, one ? &one->wr : NULL);
            {
                struct iof_rated rt;
                rated_decode(c, jo, prefix, &rt);
                if (sum)
                    iof_rated_merge(&ts->rated, &rt);
                else
                    ts->rated = rt;
                if (one)
                    one->rated = rt;
            }
            if (field(jo, "verify_errors")) {
                uint64_t ve = 0;
                get_u64(c, jo, prefix, "verify_errors", &ve);
                if (sum)
                    ts->verify_errors += ve;
                else
                    ts->verify_errors = ve;
                if (one)
                    one->verify_errors = ve;
            } else if (!sum) {
                ts->verify_errors = 0;
            }
            /* Optional (protocol 1.4): the failing reads, verify_errors
             * counting the distinct blocks. */
            if (field(jo, "verify_bad_reads")) {
                uint64_t vr = 0;
                get_u64(c, jo, prefix, "verify_bad_reads", &vr);
                if (sum)
                    ts->verify_bad_reads += vr;
                else
                    ts->verify_bad_reads = vr;
                if (one)
                    one->verify_bad_reads = vr;
            } else if (!sum) {
                ts->verify_bad_reads = 0;
            }
            /* Optional: the reads of blocks partly replaced by later
             * writes, checked by their sector tags only. */
            if (field(jo, "verify_overlaid")) {
                uint64_t vo = 0;
                get_u64(c, jo, prefix, "verify_overlaid", &vo);
                if (sum)
                    ts->verify_overlaid += vo;
                else
                    ts->verify_overlaid = vo;
                if (one)
                    one->verify_overlaid = vo;
            } else if (!sum) {
                ts->verify_overlaid = 0;
            }
            fe = get_item(c, jo, prefix, "first_error", OPTIONAL | NULLABLE);
            if (fe && !c->err) {
                const char *code = NULL;
                char fp[PATH_BUF];
                mkpath(fp, prefix, "first_error");
                if (!cJSON_IsObject(fe))
                    return ctx_fail(c, "%s: must be an object", fp);
                uint64_t off = 0;
                get_str(c, fe, fp, "code", STR_CODE, 0, &code);
                get_u64(c, fe, fp, "offset", &off);
                if (code) {
                    /* Summing: the first target's error stands. */
                    if (!ts->first_error) {
                        ts->first_error = proto_err_from_name(code);
                        ts->first_error_offset = off;
                    }
                    if (one) {
                        one->first_error = proto_err_from_name(code);
                        one->first_error_offset = off;
                    }
                    free((void *)code);
                }
            }
            if (c->err)
                return c->err;
        }
        w++;
    }
    return c->err;
}

/* result.lateness (1.6): {"hist": base64 of the sparse histogram,
 * "over_20us": n}, checked against the body: one value per rated I/O (the
 * targets' rated.n added up), and over_20us within what its buckets allow. */
static int lateness_check(struct ctx *c, const struct proto_stats *st)
{
    const struct iof_hist *h = st->lateness;
    uint64_t rated = 0, surely, maybe;

    for (size_t w = 0; w < st->nworkers; w++)
        for (size_t t = 0; t < st->workers[w].ntargets; t++)
            rated += st->workers[w].targets[t].rated.svc.count;
    if (h->count != rated)
        return ctx_fail(
            c, "result.lateness.hist: %" PRIu64 " lateness values for %" PRIu64 " rated I/Os",
            h->count, rated);
    iof_hist_count_above(h, IOF_RATE_ONTIME_NS, &surely, &maybe);
    if (st->lateness_over_20us < surely || st->lateness_over_20us > maybe)
        return ctx_fail(c,
                        "result.lateness.over_20us: %" PRIu64 ", but the histogram has %" PRIu64
                        "..%" PRIu64 " values above 20000 ns",
                        st->lateness_over_20us, surely, maybe);
    return 0;
}

static int lateness_encode(struct ctx *c, cJSON *root, const struct proto_stats *st)
{
    cJSON *j;

    if (c->err || !st->lateness || lateness_check(c, st))
        return c->err;
    j = put_container(c, root, "lateness", cJSON_CreateObject());
    if (j && !hist_put_b64(c, j, "hist", st->lateness))
        put_u64(c, j, "over_20us", st->lateness_over_20us);
    return c->err;
}

static int lateness_decode(struct ctx *c, const cJSON *root, struct proto_stats *st)
{
    const cJSON *j = get_item(c, root, "result.lateness", "lateness", OPTIONAL | NULLABLE), *hs;
    uint8_t *raw;
    size_t len = 0;
    int r;

    if (!j || c->err)
        return c->err;
    if (!cJSON_IsObject(j))
        return ctx_fail(c, "result.lateness: must be an object");
    hs = get_item(c, j, "result.lateness.hist", "hist", 0);
    if (c->err)
        return c->err;
    if (hist_get_b64(c, hs, "result.lateness.hist", NULL, 0, &raw, &len)) {
        free(raw);
        return c->err;
    }
    get_u64(c, j, "result.lateness", "over_20us", &st->lateness_over_20us);
    st->lateness = c->err ? NULL : malloc(sizeof(*st->lateness));
    if (!c->err && !st->lateness) {
        free(raw);
        return ctx_oom(c);
    }
    r = c->err ? 0 : iof_hist_decode(st->lateness, raw, len);
    free(raw);
    if (c->err)
        return c->err;
    if (r)
        return ctx_fail(c, "result.lateness.hist: not a valid histogram");
    return lateness_check(c, st);
}

/* A result is the stats body with the lateness after its workers. */
static int result_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    stats_encode(c, root, msg);
    return lateness_encode(c, root, &msg->u.result);
}

static int result_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    stats_decode(c, root, msg);
    return lateness_decode(c, root, &msg->u.result);
}

/* ---- error, bye, stop -------------------------------------------------- */

/* IOF_E* names first, then errno names ("ENOENT"); IOF_EINTERNAL for a name
 * this build does not know (a newer peer's code): the name is still shown. */
int proto_err_from_name(const char *name)
{
#define PROTO_ERR_MATCH(n, value, m)                                                               \
    if (strcmp(name, #n) == 0)                                                                     \
        return value;
    IOF_ERR_TABLE(PROTO_ERR_MATCH)
#undef PROTO_ERR_MATCH
    if (strcmp(name, "EUNKNOWN") != 0)
        for (int e = 1; e < 256; e++)
            if (strcmp(iof_errname(-e), name) == 0)
                return -e;
    return IOF_EINTERNAL;
}

static int error_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_error *e = &msg->u.error;
    if (e->code >= 0)
        return ctx_fail(c, "error.code: must be a negative error code, got %d", e->code);
    put_str(c, root, "error", "code", iof_errname(e->code), STR_CODE, 0);
    put_str(c, root, "error", "message", e->message, STR_TEXT, 0);
    return c->err;
}

static int error_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_error *e = &msg->u.error;
    get_str(c, root, "error", "code", STR_CODE, 0, &e->code_name);
    get_str(c, root, "error", "message", STR_TEXT, 0, &e->message);
    if (!c->err)
        e->code = proto_err_from_name(e->code_name);
    return c->err;
}

static int bye_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    put_str(c, root, "bye", "reason", msg->u.bye.reason, STR_TEXT, 0);
    return c->err;
}

static int bye_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    get_str(c, root, "bye", "reason", STR_TEXT, 0, &msg->u.bye.reason);
    return c->err;
}

static int stop_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    put_str(c, root, "stop", "reason", msg->u.stop.reason, STR_TEXT, 0);
    return c->err;
}

static int stop_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    get_str(c, root, "stop", "reason", STR_TEXT, 0, &msg->u.stop.reason);
    return c->err;
}

static int prepare_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    /* Only when asked: a prepare without it is the 1.0 message. */
    if (msg->u.prepare.cleanup && !c->err)
        put_item(c, root, "cleanup", cJSON_CreateBool(true));
    return c->err;
}

static int prepare_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    const cJSON *it = get_item(c, root, "prepare.cleanup", "cleanup", OPTIONAL);
    if (it && !cJSON_IsBool(it))
        return ctx_fail(c, "prepare.cleanup: must be true or false");
    msg->u.prepare.cleanup = it && cJSON_IsTrue(it);
    return c->err;
}

static int cleaned_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_cleaned *k = &msg->u.cleaned;
    cJSON *jr;

    put_str(c, root, "cleaned", "workdir", k->workdir, STR_PATH, 0);
    put_u64(c, root, "files", k->files);
    put_u64(c, root, "bytes", k->bytes);
    put_u64(c, root, "failed", k->failed);
    if (k->nremoved > PROTO_CLEANED_NAMES_MAX || k->nremoved > k->files)
        return ctx_fail(c, "cleaned.removed: %zu names, at most %d and no more than files",
                        k->nremoved, PROTO_CLEANED_NAMES_MAX);
    jr = put_container(c, root, "removed", cJSON_CreateArray());
    for (size_t i = 0; jr && i < k->nremoved && !c->err; i++) {
        cJSON *e;
        check_str(c, "cleaned.removed[]", k->removed[i], STR_PATH);
        e = c->err ? NULL : cJSON_CreateString(k->removed[i]);
        if (!c->err && (!e || !cJSON_AddItemToArray(jr, e))) {
            cJSON_Delete(e);
            return ctx_oom(c);
        }
    }
    return c->err;
}

static int cleaned_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_cleaned *k = &msg->u.cleaned;
    const cJSON *jr, *e;
    size_t n = 0;

    get_str(c, root, "cleaned", "workdir", STR_PATH, 0, &k->workdir);
    get_u64(c, root, "cleaned", "files", &k->files);
    get_u64(c, root, "cleaned", "bytes", &k->bytes);
    get_u64(c, root, "cleaned", "failed", &k->failed);
    jr = get_array(c, root, "cleaned", "removed");
    if (c->err)
        return c->err;
    cJSON_ArrayForEach(e, jr) n++;
    if (n > PROTO_CLEANED_NAMES_MAX || n > k->files)
        return ctx_fail(c, "cleaned.removed: %zu names, at most %d and no more than files", n,
                        PROTO_CLEANED_NAMES_MAX);
    k->removed = calloc(n ? n : 1, sizeof(*k->removed));
    if (!k->removed)
        return ctx_oom(c);
    cJSON_ArrayForEach(e, jr)
    {
        char *copy;
        if (!cJSON_IsString(e) || !e->valuestring)
            return ctx_fail(c, "cleaned.removed[%zu]: must be a string", k->nremoved);
        if (check_str(c, "cleaned.removed[]", e->valuestring, STR_PATH))
            return c->err;
        copy = strdup(e->valuestring);
        if (!copy)
            return ctx_oom(c);
        k->removed[k->nremoved++] = copy;
    }
    return c->err;
}

/* ---- dispatch ---------------------------------------------------------- */

/* Bodies by type. */
static const struct {
    int (*encode)(struct ctx *c, cJSON *root, const struct proto_msg *msg);
    int (*decode)(struct ctx *c, const cJSON *root, struct proto_msg *msg);
} codecs[PROTO_MSG_COUNT] = {
    [PROTO_MSG_HELLO] = {hello_encode, hello_decode},
    [PROTO_MSG_WELCOME] = {welcome_encode, welcome_decode},
    [PROTO_MSG_CLOCK_PROBE] = {clock_probe_encode, clock_probe_decode},
    [PROTO_MSG_CLOCK_REPLY] = {clock_reply_encode, clock_reply_decode},
    [PROTO_MSG_START] = {start_encode, start_decode},
    [PROTO_MSG_SETUP] = {setup_encode, setup_decode},
    [PROTO_MSG_READY] = {ready_encode, ready_decode},
    [PROTO_MSG_STOP] = {stop_encode, stop_decode},
    [PROTO_MSG_ERROR] = {error_encode, error_decode},
    [PROTO_MSG_HEARTBEAT] = {heartbeat_encode, heartbeat_decode},
    [PROTO_MSG_BYE] = {bye_encode, bye_decode},
    [PROTO_MSG_PLAN] = {plan_encode, plan_decode},
    [PROTO_MSG_PREPARE] = {prepare_encode, prepare_decode},
    [PROTO_MSG_PREPARE_PROGRESS] = {progress_encode, progress_decode},
    [PROTO_MSG_PREPARED] = {prepared_encode, prepared_decode},
    [PROTO_MSG_STATS] = {stats_encode, stats_decode},
    [PROTO_MSG_RESULT] = {result_encode, result_decode},
    [PROTO_MSG_CLEAN] = {empty_encode, empty_decode},
    [PROTO_MSG_CLEANED] = {cleaned_encode, cleaned_decode},
};

void proto_msg_init(struct proto_msg *msg, enum proto_msg_type type)
{
    memset(msg, 0, sizeof(*msg));
    msg->type = type;
}

void proto_msg_init_hello(struct proto_msg *msg, enum proto_role role, const char *name)
{
    proto_msg_init(msg, PROTO_MSG_HELLO);
    msg->u.hello.role = role;
    msg->u.hello.name = name;
    msg->u.hello.major = PROTO_VERSION_MAJOR;
    msg->u.hello.minor = proto_version_minor();
    msg->u.hello.software = IOF_VERSION;
    msg->u.hello.heartbeat_ms = PROTO_HEARTBEAT_MS_DEFAULT;
}

int proto_msg_encode(const struct proto_msg *msg, char **out, size_t *out_len,
                     struct iof_diag *diag)
{
    *out = NULL;
    *out_len = 0;
    if ((unsigned)msg->type >= PROTO_MSG_COUNT)
        return iof_diag_set(diag, -EINVAL, "message type %d does not exist", (int)msg->type);
    if (!codecs[msg->type].encode)
        return iof_diag_set(diag, -ENOTSUP, "message type \"%s\" has no body in protocol %d.%d yet",
                            msg_types[msg->type].name, PROTO_VERSION_MAJOR, PROTO_VERSION_MINOR);

    struct ctx c = {.bad = -EINVAL, .diag = diag};
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    put_item(&c, root, "type", cJSON_CreateString(msg_types[msg->type].name));
    if (!c.err)
        codecs[msg->type].encode(&c, root, msg);
    char *text = c.err ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (c.err)
        return c.err;
    if (!text)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    *out = text;
    *out_len = strlen(text);
    return 0;
}

char *proto_agent_report_json(const char *endpoint, const struct proto_hello *h, const char *error)
{
    cJSON *obj = cJSON_CreateObject(), *hello = NULL;
    char *text = NULL;
    bool ok = obj && cJSON_AddStringToObject(obj, "endpoint", endpoint);

    if (ok && h) {
        struct proto_msg m = {.type = PROTO_MSG_HELLO, .u.hello = *h};
        size_t len;
        struct iof_diag d = {{0}};
        ok = proto_msg_encode(&m, &text, &len, &d) == 0 && (hello = cJSON_Parse(text)) != NULL;
        free(text);
        text = NULL;
        if (ok) {
            cJSON_DeleteItemFromObjectCaseSensitive(hello, "type");
            ok = cJSON_AddTrueToObject(obj, "reachable") &&
                 cJSON_AddItemToObject(obj, "hello", hello);
            if (!ok)
                cJSON_Delete(hello);
        }
    } else if (ok) {
        ok = cJSON_AddFalseToObject(obj, "reachable") &&
             cJSON_AddStringToObject(obj, "error", error ? error : "unreachable");
    }
    if (ok)
        text = cJSON_PrintUnformatted(obj);
    cJSON_Delete(obj);
    return text;
}

int proto_msg_encode_frame(const struct proto_msg *msg, size_t max_payload, uint8_t **out,
                           size_t *out_len, struct iof_diag *diag)
{
    return proto_msg_encode_frame_flags(msg, max_payload, 0, out, out_len, diag);
}

int proto_msg_encode_frame_flags(const struct proto_msg *msg, size_t max_payload, unsigned flags,
                                 uint8_t **out, size_t *out_len, struct iof_diag *diag)
{
    char *text;
    size_t len;
    *out = NULL;
    *out_len = 0;
    if (msg->type == PROTO_MSG_STATS && (flags & PROTO_ENCODE_STATS_BINARY))
        return proto_statsbin_encode_frame(&msg->u.stats,
                                           flags & PROTO_ENCODE_STATS_NODE_HIST
                                               ? PROTO_STATSBIN_LAYOUT_NODE
                                               : PROTO_STATSBIN_LAYOUT_RUNS,
                                           max_payload, out, out_len, diag);
    int rc = proto_msg_encode(msg, &text, &len, diag);
    if (rc)
        return rc;
    rc = proto_frame_encode_alloc(text, len, max_payload, out, out_len, diag);
    if (rc == IOF_ETOOBIG)
        iof_diag_set(diag, rc, "%s message of %zu bytes exceeds the frame limit of %zu",
                     msg_types[msg->type].name, len, max_payload);
    free(text);
    return rc;
}

int proto_msg_decode(const void *payload, size_t len, struct proto_msg *msg, struct iof_diag *diag)
{
    return proto_msg_decode_flags(payload, len, msg, 0, diag);
}

int proto_msg_decode_flags(const void *payload, size_t len, struct proto_msg *msg, unsigned flags,
                           struct iof_diag *diag)
{
    memset(msg, 0, sizeof(*msg));
    const char *text = payload;
    if (len == 0)
        return iof_diag_set(diag, IOF_EPROTO, "message is empty");
    if (*(const uint8_t *)payload == PROTO_STATSBIN_TAG) {
        int rc;
        /* What a peer of protocol 1.0 would make of it: not JSON. */
        if (!(flags & PROTO_DECODE_STATS_BINARY))
            return iof_diag_set(diag, IOF_EPROTO,
                                "message is a binary stats body, which this session did not "
                                "negotiate (protocol minor %d or later on both sides)",
                                PROTO_MINOR_STATS_BINARY);
        msg->type = PROTO_MSG_STATS;
        rc = proto_statsbin_decode(payload, len, &msg->u.stats, flags & PROTO_DECODE_SUM_STATS,
                                   diag);
        if (rc)
            proto_msg_clear(msg);
        return rc;
    }
    /* cJSON strings are C strings: a NUL, raw or escaped, would silently cut
     * one short. Backslashes occur only inside JSON strings, so a linear
     * scan that skips each escaped character finds every \u0000. */
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return iof_diag_set(diag, IOF_EPROTO, "message contains a NUL byte (byte %zu of %zu)",
                            (size_t)(nul - text), len);
    for (const char *bs = memchr(text, '\\', len); bs; bs = memchr(bs, '\\', text + len - bs)) {
        size_t i = (size_t)(bs - text);
        if (i + 1 >= len)
            break;
        if (text[i + 1] == 'u' && len - i >= 6 && memcmp(text + i + 2, "0000", 4) == 0)
            return iof_diag_set(diag, IOF_EPROTO,
                                "message contains a \\u0000 escape (byte %zu of %zu)", i, len);
        bs += 2; /* skip the escaped character */
        if (bs >= text + len)
            break;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root)
        return iof_diag_set(diag, IOF_EPROTO,
                            "message is not valid JSON (error at byte %zu of %zu)",
                            end ? (size_t)(end - text) : 0, len);
    int rc = 0;
    while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
        end++;
    if (end != text + len) {
        rc = iof_diag_set(diag, IOF_EPROTO,
                          "message has data after the JSON value (byte %zu of %zu)",
                          (size_t)(end - text), len);
        goto out;
    }
    if (!cJSON_IsObject(root)) {
        rc = iof_diag_set(diag, IOF_EPROTO, "message is not a JSON object");
        goto out;
    }
    const cJSON *jtype = field(root, "type");
    if (!jtype) {
        rc = iof_diag_set(diag, IOF_EPROTO, "type: required field missing");
        goto out;
    }
    if (!cJSON_IsString(jtype) || !jtype->valuestring) {
        rc = iof_diag_set(diag, IOF_EPROTO, "type: must be a string");
        goto out;
    }
    int type = proto_msg_type_from_name(jtype->valuestring);
    if (type < 0) {
        char shown[40];
        rc = iof_diag_set(diag, IOF_EPROTO, "unknown message type \"%s\"",
                          printable(shown, jtype->valuestring));
        goto out;
    }
    if (!codecs[type].decode) {
        rc = iof_diag_set(diag, IOF_EPROTO,
                          "message type \"%s\" is not supported by this build (protocol %d.%d)",
                          msg_types[type].name, PROTO_VERSION_MAJOR, PROTO_VERSION_MINOR);
        goto out;
    }
    msg->type = (enum proto_msg_type)type;
    struct ctx c = {.flags = flags, .bad = IOF_EPROTO, .diag = diag};
    codecs[type].decode(&c, root, msg);
    rc = c.err;
out:
    cJSON_Delete(root);
    if (rc && rc != IOF_EVERSION)
        proto_msg_clear(msg);
    return rc;
}

static void target_info_free(struct proto_target_info *t)
{
    free((void *)t->path);
    free((void *)t->model);
    free((void *)t->kind);
    free((void *)t->device);
    free((void *)t->mountpoint);
    free((void *)t->signature);
}

static void workdir_info_free(struct proto_workdir_info *w)
{
    free((void *)w->path);
    free((void *)w->fstype);
    free((void *)w->device);
}

void proto_msg_clear(struct proto_msg *msg)
{
    if (!msg)
        return;
    switch (msg->type) {
    case PROTO_MSG_HELLO: {
        struct proto_hello *h = &msg->u.hello;
        free((void *)h->name);
        free((void *)h->software);
        free((void *)h->inventory.hostname);
        free((void *)h->inventory.kernel);
        for (size_t i = 0; i < h->inventory.ntargets; i++)
            target_info_free(&h->inventory.targets[i]);
        free(h->inventory.targets);
        workdir_info_free(&h->inventory.workdir);
        break;
    }
    case PROTO_MSG_ERROR:
        free((void *)msg->u.error.code_name);
        free((void *)msg->u.error.message);
        break;
    case PROTO_MSG_BYE:
        free((void *)msg->u.bye.reason);
        break;
    case PROTO_MSG_STOP:
        free((void *)msg->u.stop.reason);
        break;
    case PROTO_MSG_START:
        free(msg->u.start.rates);
        break;
    case PROTO_MSG_SETUP:
        free(msg->u.setup.rates);
        break;
    case PROTO_MSG_PLAN:
        free((void *)msg->u.plan.text);
        break;
    case PROTO_MSG_PREPARE_PROGRESS:
        free((void *)msg->u.prepare_progress.path);
        break;
    case PROTO_MSG_PREPARED:
        for (size_t i = 0; i < msg->u.prepared.nplaces; i++) {
            free((void *)msg->u.prepared.places[i].device);
            free((void *)msg->u.prepared.places[i].fstype);
        }
        free(msg->u.prepared.places);
        break;
    case PROTO_MSG_CLEANED:
        free((void *)msg->u.cleaned.workdir);
        for (size_t i = 0; i < msg->u.cleaned.nremoved; i++)
            free((void *)msg->u.cleaned.removed[i]);
        free(msg->u.cleaned.removed);
        break;
    case PROTO_MSG_STATS:
    case PROTO_MSG_RESULT:
        for (size_t i = 0; i < msg->u.stats.nworkers; i++)
            free(msg->u.stats.workers[i].targets);
        free(msg->u.stats.workers);
        proto_statsbin_sum_free(msg->u.stats.sum, msg->u.stats.sum_valid);
        free(msg->u.stats.counts);
        free((void *)msg->u.stats.error);
        for (size_t i = 0; i < msg->u.stats.nverify_reports; i++)
            free((void *)msg->u.stats.verify_reports[i]);
        free(msg->u.stats.verify_reports);
        free(msg->u.stats.lateness);
        break;
    default:
        break;
    }
    memset(msg, 0, sizeof(*msg));
}

static int dup_str(const char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = strdup(src);
    return *dst ? 0 : -ENOMEM;
}

void proto_hello_free(struct proto_hello *h)
{
    struct proto_msg m;
    if (!h)
        return;
    proto_msg_init(&m, PROTO_MSG_HELLO);
    m.u.hello = *h;
    proto_msg_clear(&m);
    memset(h, 0, sizeof(*h));
}

int proto_hello_copy(struct proto_hello *dst, const struct proto_hello *src)
{
    const struct proto_inventory *si = &src->inventory;
    struct proto_inventory *di = &dst->inventory;
    int r = 0;

    memset(dst, 0, sizeof(*dst));
    dst->role = src->role;
    dst->major = src->major;
    dst->minor = src->minor;
    dst->heartbeat_ms = src->heartbeat_ms;
    dst->heartbeat_offer_ms = src->heartbeat_offer_ms;
    di->cpus = si->cpus;
    di->memory_bytes = si->memory_bytes;
    di->has_budget = si->has_budget;
    di->budget = si->budget;
    r |= dup_str(&dst->name, src->name);
    r |= dup_str(&dst->software, src->software);
    r |= dup_str(&di->hostname, si->hostname);
    r |= dup_str(&di->kernel, si->kernel);
    if (si->ntargets) {
        di->targets = calloc(si->ntargets, sizeof(*di->targets));
        if (!di->targets)
            r = -ENOMEM;
        else
            di->ntargets = si->ntargets;
        for (size_t i = 0; di->targets && i < si->ntargets; i++) {
            di->targets[i] = si->targets[i];
            r |= dup_str(&di->targets[i].path, si->targets[i].path);
            r |= dup_str(&di->targets[i].model, si->targets[i].model);
            r |= dup_str(&di->targets[i].kind, si->targets[i].kind);
            r |= dup_str(&di->targets[i].device, si->targets[i].device);
            r |= dup_str(&di->targets[i].mountpoint, si->targets[i].mountpoint);
            r |= dup_str(&di->targets[i].signature, si->targets[i].signature);
        }
    }
    di->workdir = si->workdir;
    r |= dup_str(&di->workdir.path, si->workdir.path);
    r |= dup_str(&di->workdir.fstype, si->workdir.fstype);
    r |= dup_str(&di->workdir.device, si->workdir.device);
    if (r) {
        proto_hello_free(dst);
        return -ENOMEM;
    }
    return 0;
}

/* v as heartbeat_encode() writes a 64-bit number (a JSON number up to
 * JSON_INT_MAX, above it a decimal string) at p, at most 22 bytes; returns
 * the byte after. */
static char *hb_put_u64(char *p, uint64_t v)
{
    char d[20];
    size_t n = 0;
    bool quoted = v > JSON_INT_MAX;

    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (quoted)
        *p++ = '"';
    while (n)
        *p++ = d[--n];
    if (quoted)
        *p++ = '"';
    return p;
}

/* The same text heartbeat_encode() produces, written without cJSON or
 * snprintf: a manager sends one per agent per second (test_msg_run checks
 * the bytes against the codec's). */
int proto_msg_heartbeat_frame(uint64_t seq, uint64_t sent_ns, uint8_t *buf, size_t cap, size_t *len)
{
    static const char head[] = "{\"type\":\"heartbeat\",\"seq\":", mid[] = ",\"sent_ns\":";
    char body[sizeof(head) + sizeof(mid) + 2 * 22], *p = body;
    size_t n;

    if (cap < PROTO_FRAME_HEADER_SIZE)
        return -ENOBUFS;
    memcpy(p, head, sizeof(head) - 1);
    p = hb_put_u64(p + sizeof(head) - 1, seq);
    memcpy(p, mid, sizeof(mid) - 1);
    p = hb_put_u64(p + sizeof(mid) - 1, sent_ns);
    *p++ = '}';
    n = (size_t)(p - body);
    /* As snprintf's: room for a terminating NUL too. */
    if (n >= cap - PROTO_FRAME_HEADER_SIZE)
        return -ENOBUFS;
    if (proto_frame_header_encode(buf, n, PROTO_FRAME_MAX_DEFAULT, NULL))
        return -EINVAL;
    memcpy(buf + PROTO_FRAME_HEADER_SIZE, body, n);
    *len = PROTO_FRAME_HEADER_SIZE + n;
    return 0;
}
