/* SPDX-License-Identifier: Apache-2.0 */
/* proto/msg_session.c - the messages of a session's life: hello (with an
 * agent's inventory), welcome, heartbeat (and its frame written without
 * cJSON), clock probes and replies, error, bye; copying a hello.
 */
#include "proto/msg_int.h"
#include "proto/statsbin.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hello ------------------------------------------------------------- */

/* 1.8: a dead-man limit must lie between 2 and 3 periods (its sender
 * writes at least every 1.5 periods: proto/link.c), and needs a period. */
static int heartbeat_limit_check(struct ctx *c, const char *what, const char *period_field,
                                 uint32_t period_ms, uint32_t limit_ms)
{
    if (!period_ms || !limit_ms)
        return msgj_ctx_fail(c, "%s: heartbeat_limit_ms needs %s and the other way round", what,
                             period_field);
    if (limit_ms < 2 * (uint64_t)period_ms || limit_ms > 3 * (uint64_t)period_ms)
        return msgj_ctx_fail(c,
                             "%s.heartbeat_limit_ms: %u ms, must be 2 to 3 heartbeat periods "
                             "(%u to %u ms)",
                             what, limit_ms, 2 * period_ms, 3 * period_ms);
    return 0;
}

int msg_hello_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_hello *h = &msg->u.hello;
    if (h->major > UINT16_MAX || h->minor > UINT16_MAX)
        return msgj_ctx_fail(c, "hello.v: must be [major, minor] with integers 0..65535");
    cJSON *v = msgj_put_container(c, root, "v", cJSON_CreateArray());
    if (v) {
        char text[8];
        for (int i = 0; i < 2 && !c->err; i++) {
            snprintf(text, sizeof(text), "%u", i ? h->minor : h->major);
            cJSON *num = cJSON_CreateRaw(text);
            if (!num || !cJSON_AddItemToArray(v, num)) {
                cJSON_Delete(num);
                msgj_ctx_oom(c);
            }
        }
    }
    if (!c->err && h->role != PROTO_ROLE_MANAGER && h->role != PROTO_ROLE_AGENT)
        return msgj_ctx_fail(c, "hello.role: must be PROTO_ROLE_MANAGER or PROTO_ROLE_AGENT");
    if (!c->err)
        msgj_put_item(c, root, "role", cJSON_CreateString(proto_role_name(h->role)));
    msgj_put_str(c, root, "hello", "name", h->name, STR_NAME, 0);
    msgj_put_str(c, root, "hello", "software", h->software, STR_LABEL, 0);
    msgj_put_uint(c, root, "hello", "heartbeat_ms", h->heartbeat_ms, PROTO_HEARTBEAT_MS_MIN,
                  PROTO_HEARTBEAT_MS_MAX);
    if (h->heartbeat_offer_ms)
        msgj_put_uint(c, root, "hello", "heartbeat_offer_ms", h->heartbeat_offer_ms,
                      PROTO_HEARTBEAT_MS_MIN, PROTO_HEARTBEAT_MS_MAX);
    if (!c->err && (h->heartbeat_sparse_ms || h->heartbeat_limit_ms)) {
        if (heartbeat_limit_check(c, "hello", "heartbeat_sparse_ms", h->heartbeat_sparse_ms,
                                  h->heartbeat_limit_ms))
            return c->err;
        msgj_put_uint(c, root, "hello", "heartbeat_sparse_ms", h->heartbeat_sparse_ms,
                      PROTO_HEARTBEAT_MS_MIN, PROTO_HEARTBEAT_MS_MAX);
        msgj_put_uint(c, root, "hello", "heartbeat_limit_ms", h->heartbeat_limit_ms,
                      2 * PROTO_HEARTBEAT_MS_MIN, 3 * PROTO_HEARTBEAT_MS_MAX);
    }
    if (c->err || h->role != PROTO_ROLE_AGENT)
        return c->err;

    const struct proto_inventory *inv = &h->inventory;
    cJSON *jinv = msgj_put_container(c, root, "inventory", cJSON_CreateObject());
    if (!jinv)
        return c->err;
    msgj_put_str(c, jinv, "hello.inventory", "hostname", inv->hostname, STR_LABEL, 0);
    msgj_put_uint(c, jinv, "hello.inventory", "cpus", inv->cpus, 1, 65536);
    msgj_put_u64(c, jinv, "memory_bytes", inv->memory_bytes);
    msgj_put_str(c, jinv, "hello.inventory", "kernel", inv->kernel, STR_LABEL, 0);
    if (inv->has_budget) {
        cJSON *jb = msgj_put_container(c, jinv, "budget", cJSON_CreateObject());
        if (jb) {
            msgj_put_u64(c, jb, "workers", inv->budget.workers);
            msgj_put_u64(c, jb, "buffer_mem", inv->budget.buffer_mem);
            msgj_put_u64(c, jb, "aio_events", inv->budget.aio_events);
            msgj_put_u64(c, jb, "fds", inv->budget.fds);
        }
    }
    if (!c->err && inv->ntargets > PROTO_TARGETS_MAX)
        return msgj_ctx_fail(c, "hello.inventory.targets: %zu targets, at most %d fit in a hello",
                             inv->ntargets, PROTO_TARGETS_MAX);
    if (!c->err && inv->ntargets && !inv->targets)
        return msgj_ctx_fail(c, "hello.inventory.targets: NULL with ntargets %zu", inv->ntargets);
    cJSON *jtargets = msgj_put_container(c, jinv, "targets", cJSON_CreateArray());
    for (size_t i = 0; jtargets && i < inv->ntargets && !c->err; i++) {
        const struct proto_target_info *t = &inv->targets[i];
        char prefix[PATH_BUF], path[PATH_BUF];
        snprintf(prefix, sizeof(prefix), "hello.inventory.targets[%zu]", i);
        cJSON *jt = cJSON_CreateObject();
        if (!jt || !cJSON_AddItemToArray(jtargets, jt)) {
            cJSON_Delete(jt);
            return msgj_ctx_oom(c);
        }
        msgj_put_str(c, jt, prefix, "path", t->path, STR_PATH, 0);
        msgj_put_u64(c, jt, "size", t->size);
        msgj_mkpath(path, prefix, "logical_block_size");
        msgj_check_block_size(c, path, t->logical_block_size);
        msgj_put_u64(c, jt, "logical_block_size", t->logical_block_size);
        msgj_put_tristate(c, jt, prefix, "rotational", t->rotational);
        msgj_put_str(c, jt, prefix, "model", t->model, STR_LABEL, NULLABLE);
        if (t->kind)
            msgj_put_str(c, jt, prefix, "kind", t->kind, STR_LABEL, 0);
        if (t->physical_block_size) {
            msgj_mkpath(path, prefix, "physical_block_size");
            msgj_check_block_size(c, path, t->physical_block_size);
            msgj_put_u64(c, jt, "physical_block_size", t->physical_block_size);
        }
        /* The storage details are written only when known (older agents
         * send none of them; a missing one reads as unknown). */
        if (t->device)
            msgj_put_str(c, jt, prefix, "device", t->device, STR_LABEL, 0);
        if (t->mountpoint)
            msgj_put_str(c, jt, prefix, "mountpoint", t->mountpoint, STR_PATH, 0);
        if (t->signature)
            msgj_put_str(c, jt, prefix, "signature", t->signature, STR_LABEL, 0);
        if (t->in_use >= 0)
            msgj_put_tristate(c, jt, prefix, "in_use", t->in_use);
        if (t->ram_backed >= 0)
            msgj_put_tristate(c, jt, prefix, "ram_backed", t->ram_backed);
    }
    if (!c->err && inv->workdir.path) {
        const struct proto_workdir_info *w = &inv->workdir;
        const char *pw = "hello.inventory.workdir";
        cJSON *jw = msgj_put_container(c, jinv, "workdir", cJSON_CreateObject());
        if (jw) {
            msgj_put_str(c, jw, pw, "path", w->path, STR_PATH, 0);
            if (w->fstype)
                msgj_put_str(c, jw, pw, "fstype", w->fstype, STR_LABEL, 0);
            if (w->device)
                msgj_put_str(c, jw, pw, "device", w->device, STR_LABEL, 0);
            msgj_put_u64(c, jw, "size", w->size);
            msgj_put_u64(c, jw, "free", w->free);
            if (w->ram_backed >= 0)
                msgj_put_tristate(c, jw, pw, "ram_backed", w->ram_backed);
        }
    }
    return c->err;
}

static int workdir_decode(struct ctx *c, const cJSON *jinv, struct proto_workdir_info *w)
{
    const char *pw = "hello.inventory.workdir";
    const cJSON *jw = msgj_get_item(c, jinv, pw, "workdir", OPTIONAL | NULLABLE);

    w->ram_backed = -1;
    if (!jw)
        return c->err;
    if (!cJSON_IsObject(jw))
        return msgj_ctx_fail(c, "%s: must be an object", pw);
    msgj_get_str(c, jw, pw, "path", STR_PATH, 0, &w->path);
    msgj_get_str(c, jw, pw, "fstype", STR_LABEL, OPTIONAL | NULLABLE, &w->fstype);
    msgj_get_str(c, jw, pw, "device", STR_LABEL, OPTIONAL | NULLABLE, &w->device);
    msgj_get_u64_opt(c, jw, pw, "size", &w->size);
    msgj_get_u64_opt(c, jw, pw, "free", &w->free);
    msgj_get_tristate(c, jw, pw, "ram_backed", &w->ram_backed);
    return c->err;
}

static int inventory_decode(struct ctx *c, const cJSON *root, struct proto_inventory *inv)
{
    const char *p = "hello.inventory";
    const cJSON *jinv = msgj_get_object(c, root, "hello", "inventory");
    uint64_t v = 0;
    msgj_get_str(c, jinv, p, "hostname", STR_LABEL, 0, &inv->hostname);
    msgj_get_uint(c, jinv, p, "cpus", 1, 65536, &v);
    inv->cpus = (uint32_t)v;
    msgj_get_u64(c, jinv, p, "memory_bytes", &inv->memory_bytes);
    msgj_get_str(c, jinv, p, "kernel", STR_LABEL, 0, &inv->kernel);
    const cJSON *jb = msgj_get_item(c, jinv, "hello.inventory.budget", "budget", OPTIONAL);
    if (jb) {
        const char *pb = "hello.inventory.budget";
        if (!cJSON_IsObject(jb))
            return msgj_ctx_fail(c, "%s: must be an object", pb);
        msgj_get_u64(c, jb, pb, "workers", &inv->budget.workers);
        msgj_get_u64(c, jb, pb, "buffer_mem", &inv->budget.buffer_mem);
        msgj_get_u64(c, jb, pb, "aio_events", &inv->budget.aio_events);
        msgj_get_u64(c, jb, pb, "fds", &inv->budget.fds);
        inv->has_budget = !c->err;
    }
    const cJSON *jtargets = msgj_get_array(c, jinv, p, "targets");
    if (c->err)
        return c->err;

    size_t n = 0;
    const cJSON *jt;
    cJSON_ArrayForEach(jt, jtargets) n++;
    if (n > PROTO_TARGETS_MAX)
        return msgj_ctx_fail(c, "hello.inventory.targets: %zu targets, at most %d allowed", n,
                             PROTO_TARGETS_MAX);
    if (n == 0)
        return workdir_decode(c, jinv, &inv->workdir);
    inv->targets = calloc(n, sizeof(*inv->targets));
    if (!inv->targets)
        return msgj_ctx_oom(c);
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
            return msgj_ctx_fail(c, "%s: must be an object", prefix);
        msgj_get_str(c, jt, prefix, "path", STR_PATH, 0, &t->path);
        msgj_get_u64(c, jt, prefix, "size", &t->size);
        msgj_get_u64(c, jt, prefix, "logical_block_size", &v);
        msgj_mkpath(path, prefix, "logical_block_size");
        msgj_check_block_size(c, path, v);
        t->logical_block_size = (uint32_t)v;
        msgj_get_tristate(c, jt, prefix, "rotational", &t->rotational);
        msgj_get_str(c, jt, prefix, "model", STR_LABEL, OPTIONAL | NULLABLE, &t->model);
        msgj_get_str(c, jt, prefix, "kind", STR_LABEL, OPTIONAL | NULLABLE, &t->kind);
        v = 0;
        msgj_get_u64_opt(c, jt, prefix, "physical_block_size", &v);
        if (v) {
            msgj_mkpath(path, prefix, "physical_block_size");
            msgj_check_block_size(c, path, v);
            t->physical_block_size = (uint32_t)v;
        }
        msgj_get_str(c, jt, prefix, "device", STR_LABEL, OPTIONAL | NULLABLE, &t->device);
        msgj_get_str(c, jt, prefix, "mountpoint", STR_PATH, OPTIONAL | NULLABLE, &t->mountpoint);
        msgj_get_str(c, jt, prefix, "signature", STR_LABEL, OPTIONAL | NULLABLE, &t->signature);
        msgj_get_tristate(c, jt, prefix, "in_use", &t->in_use);
        msgj_get_tristate(c, jt, prefix, "ram_backed", &t->ram_backed);
        if (c->err)
            return c->err;
    }
    return workdir_decode(c, jinv, &inv->workdir);
}

static int get_role(struct ctx *c, const cJSON *root, enum proto_role *role)
{
    const cJSON *it = msgj_get_item(c, root, "hello.role", "role", 0);
    if (!it)
        return c->err;
    if (cJSON_IsString(it) && strcmp(it->valuestring, "manager") == 0)
        *role = PROTO_ROLE_MANAGER;
    else if (cJSON_IsString(it) && strcmp(it->valuestring, "agent") == 0)
        *role = PROTO_ROLE_AGENT;
    else
        msgj_ctx_fail(c, "hello.role: must be \"manager\" or \"agent\"");
    return c->err;
}

int msg_hello_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_hello *h = &msg->u.hello;
    const cJSON *v = msgj_get_item(c, root, "hello.v", "v", 0);
    if (!v)
        return c->err;
    const cJSON *jmajor = cJSON_IsArray(v) ? v->child : NULL;
    const cJSON *jminor = jmajor ? jmajor->next : NULL;
    uint64_t major, minor;
    if (!jminor || jminor->next || !cJSON_IsNumber(jmajor) || !cJSON_IsNumber(jminor) ||
        !msgj_json_u64(jmajor, &major) || !msgj_json_u64(jminor, &minor) || major > UINT16_MAX ||
        minor > UINT16_MAX)
        return msgj_ctx_fail(c, "hello.v: must be [major, minor] with integers 0..65535");
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
        msgj_get_str(&quiet, root, "hello", "name", STR_NAME, 0, &h->name);
        c->err = rc;
        return c->err;
    }

    get_role(c, root, &h->role);
    msgj_get_str(c, root, "hello", "name", STR_NAME, 0, &h->name);
    msgj_get_str(c, root, "hello", "software", STR_LABEL, 0, &h->software);
    uint64_t hb = 0;
    msgj_get_uint(c, root, "hello", "heartbeat_ms", PROTO_HEARTBEAT_MS_MIN, PROTO_HEARTBEAT_MS_MAX,
                  &hb);
    h->heartbeat_ms = (uint32_t)hb;
    /* 1.5: optional; a peer that does not read it ignores it as any
     * unknown field. */
    hb = 0;
    if (msgj_field(root, "heartbeat_offer_ms"))
        msgj_get_uint(c, root, "hello", "heartbeat_offer_ms", PROTO_HEARTBEAT_MS_MIN,
                      PROTO_HEARTBEAT_MS_MAX, &hb);
    h->heartbeat_offer_ms = (uint32_t)hb;
    /* 1.8: optional, both or neither. */
    if (!c->err &&
        (msgj_field(root, "heartbeat_sparse_ms") || msgj_field(root, "heartbeat_limit_ms"))) {
        uint64_t lim = 0;
        hb = 0;
        if (msgj_field(root, "heartbeat_sparse_ms"))
            msgj_get_uint(c, root, "hello", "heartbeat_sparse_ms", PROTO_HEARTBEAT_MS_MIN,
                          PROTO_HEARTBEAT_MS_MAX, &hb);
        if (!c->err && msgj_field(root, "heartbeat_limit_ms"))
            msgj_get_uint(c, root, "hello", "heartbeat_limit_ms", 2 * PROTO_HEARTBEAT_MS_MIN,
                          3 * PROTO_HEARTBEAT_MS_MAX, &lim);
        if (!c->err && !heartbeat_limit_check(c, "hello", "heartbeat_sparse_ms", (uint32_t)hb,
                                              (uint32_t)lim)) {
            h->heartbeat_sparse_ms = (uint32_t)hb;
            h->heartbeat_limit_ms = (uint32_t)lim;
        }
    }
    /* A manager's hello has no inventory; one sent anyway is ignored like
     * any unknown field. */
    if (!c->err && h->role == PROTO_ROLE_AGENT)
        inventory_decode(c, root, &h->inventory);
    return c->err;
}

/* ---- welcome: the agreed heartbeat period (optional) ------------------- */

int msg_welcome_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_welcome *w = &msg->u.welcome;

    if (w->heartbeat_ms)
        msgj_put_uint(c, root, "welcome", "heartbeat_ms", w->heartbeat_ms, PROTO_HEARTBEAT_MS_MIN,
                      PROTO_HEARTBEAT_MS_MAX);
    if (!c->err && w->heartbeat_limit_ms &&
        !heartbeat_limit_check(c, "welcome", "heartbeat_ms", w->heartbeat_ms,
                               w->heartbeat_limit_ms))
        msgj_put_uint(c, root, "welcome", "heartbeat_limit_ms", w->heartbeat_limit_ms,
                      2 * PROTO_HEARTBEAT_MS_MIN, 3 * PROTO_HEARTBEAT_MS_MAX);
    return c->err;
}

int msg_welcome_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    uint64_t hb = 0;
    if (msgj_field(root, "heartbeat_ms"))
        msgj_get_uint(c, root, "welcome", "heartbeat_ms", PROTO_HEARTBEAT_MS_MIN,
                      PROTO_HEARTBEAT_MS_MAX, &hb);
    msg->u.welcome.heartbeat_ms = (uint32_t)hb;
    /* 1.8: optional; needs heartbeat_ms. */
    if (!c->err && msgj_field(root, "heartbeat_limit_ms")) {
        uint64_t lim = 0;
        msgj_get_uint(c, root, "welcome", "heartbeat_limit_ms", 2 * PROTO_HEARTBEAT_MS_MIN,
                      3 * PROTO_HEARTBEAT_MS_MAX, &lim);
        if (!c->err &&
            !heartbeat_limit_check(c, "welcome", "heartbeat_ms", (uint32_t)hb, (uint32_t)lim))
            msg->u.welcome.heartbeat_limit_ms = (uint32_t)lim;
    }
    return c->err;
}

/* ---- heartbeat, clock probes ------------------------------------------- */

int msg_heartbeat_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    msgj_put_u64(c, root, "seq", msg->u.heartbeat.seq);
    msgj_put_u64(c, root, "sent_ns", msg->u.heartbeat.sent_ns);
    return c->err;
}

int msg_heartbeat_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    msgj_get_u64(c, root, "heartbeat", "seq", &msg->u.heartbeat.seq);
    msgj_get_u64(c, root, "heartbeat", "sent_ns", &msg->u.heartbeat.sent_ns);
    return c->err;
}

int msg_clock_probe_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    msgj_put_u64(c, root, "seq", msg->u.clock_probe.seq);
    msgj_put_u64(c, root, "t0_ns", msg->u.clock_probe.t0_ns);
    return c->err;
}

int msg_clock_probe_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    msgj_get_u64(c, root, "clock_probe", "seq", &msg->u.clock_probe.seq);
    msgj_get_u64(c, root, "clock_probe", "t0_ns", &msg->u.clock_probe.t0_ns);
    return c->err;
}

int msg_clock_reply_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    msgj_put_u64(c, root, "seq", msg->u.clock_reply.seq);
    msgj_put_u64(c, root, "t0_ns", msg->u.clock_reply.t0_ns);
    msgj_put_u64(c, root, "agent_ns", msg->u.clock_reply.agent_ns);
    return c->err;
}

int msg_clock_reply_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    msgj_get_u64(c, root, "clock_reply", "seq", &msg->u.clock_reply.seq);
    msgj_get_u64(c, root, "clock_reply", "t0_ns", &msg->u.clock_reply.t0_ns);
    msgj_get_u64(c, root, "clock_reply", "agent_ns", &msg->u.clock_reply.agent_ns);
    return c->err;
}

/* ---- error, bye -------------------------------------------------------- */

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

int msg_error_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_error *e = &msg->u.error;
    if (e->code >= 0)
        return msgj_ctx_fail(c, "error.code: must be a negative error code, got %d", e->code);
    msgj_put_str(c, root, "error", "code", iof_errname(e->code), STR_CODE, 0);
    msgj_put_str(c, root, "error", "message", e->message, STR_TEXT, 0);
    return c->err;
}

int msg_error_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_error *e = &msg->u.error;
    msgj_get_str(c, root, "error", "code", STR_CODE, 0, &e->code_name);
    msgj_get_str(c, root, "error", "message", STR_TEXT, 0, &e->message);
    if (!c->err)
        e->code = proto_err_from_name(e->code_name);
    return c->err;
}

int msg_bye_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    msgj_put_str(c, root, "bye", "reason", msg->u.bye.reason, STR_TEXT, 0);
    return c->err;
}

int msg_bye_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    msgj_get_str(c, root, "bye", "reason", STR_TEXT, 0, &msg->u.bye.reason);
    return c->err;
}

/* ---- a hello kept beyond its message ----------------------------------- */

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
    dst->heartbeat_sparse_ms = src->heartbeat_sparse_ms;
    dst->heartbeat_limit_ms = src->heartbeat_limit_ms;
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

/* ---- heartbeat frames without cJSON ------------------------------------ */

/* v as msg_heartbeat_encode() writes a 64-bit number (a JSON number up to
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

/* The same text msg_heartbeat_encode() produces, written without cJSON or
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
