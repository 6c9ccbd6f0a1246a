/* SPDX-License-Identifier: Apache-2.0 */
/* proto/msg.c - the message layer's entry points: the table of message types
 * (names, directions), the codec of each type (proto/msg_session.c,
 * msg_test.c, msg_stats.c) found by type, encoding into frames, decoding
 * with the checks every message shares, and freeing a decoded message.
 */
#include "proto/msg.h"
#include "proto/msg_int.h"
#include "proto/statsbin.h"
#include "proto/version.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef IOF_VERSION
#define IOF_VERSION "unknown"
#endif

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

/* ---- dispatch ---------------------------------------------------------- */

/* Bodies by type. */
static const struct {
    int (*encode)(struct ctx *c, cJSON *root, const struct proto_msg *msg);
    int (*decode)(struct ctx *c, const cJSON *root, struct proto_msg *msg);
} codecs[PROTO_MSG_COUNT] = {
    [PROTO_MSG_HELLO] = {msg_hello_encode, msg_hello_decode},
    [PROTO_MSG_WELCOME] = {msg_welcome_encode, msg_welcome_decode},
    [PROTO_MSG_CLOCK_PROBE] = {msg_clock_probe_encode, msg_clock_probe_decode},
    [PROTO_MSG_CLOCK_REPLY] = {msg_clock_reply_encode, msg_clock_reply_decode},
    [PROTO_MSG_START] = {msg_start_encode, msg_start_decode},
    [PROTO_MSG_SETUP] = {msg_setup_encode, msg_setup_decode},
    [PROTO_MSG_READY] = {msg_ready_encode, msg_ready_decode},
    [PROTO_MSG_STOP] = {msg_stop_encode, msg_stop_decode},
    [PROTO_MSG_ERROR] = {msg_error_encode, msg_error_decode},
    [PROTO_MSG_HEARTBEAT] = {msg_heartbeat_encode, msg_heartbeat_decode},
    [PROTO_MSG_BYE] = {msg_bye_encode, msg_bye_decode},
    [PROTO_MSG_PLAN] = {msg_plan_encode, msg_plan_decode},
    [PROTO_MSG_PREPARE] = {msg_prepare_encode, msg_prepare_decode},
    [PROTO_MSG_PREPARE_PROGRESS] = {msg_progress_encode, msg_progress_decode},
    [PROTO_MSG_PREPARED] = {msg_prepared_encode, msg_prepared_decode},
    [PROTO_MSG_STATS] = {msg_stats_encode, msg_stats_decode},
    [PROTO_MSG_RESULT] = {msg_result_encode, msg_result_decode},
    [PROTO_MSG_CLEAN] = {empty_encode, empty_decode},
    [PROTO_MSG_CLEANED] = {msg_cleaned_encode, msg_cleaned_decode},
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
                            proto_msg_type_name(msg->type), PROTO_VERSION_MAJOR,
                            PROTO_VERSION_MINOR);

    struct ctx c = {.bad = -EINVAL, .diag = diag};
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    msgj_put_item(&c, root, "type", cJSON_CreateString(proto_msg_type_name(msg->type)));
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
                     proto_msg_type_name(msg->type), len, max_payload);
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
    const cJSON *jtype = msgj_field(root, "type");
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
        free(msg->u.stats.cpus);
        break;
    default:
        break;
    }
    memset(msg, 0, sizeof(*msg));
}
