/* SPDX-License-Identifier: Apache-2.0 */
/* proto/msg_test.c - the messages that prepare and run tests: plan, prepare,
 * prepare_progress, prepared, setup, start, ready, stop, and clean's answer
 * cleaned.
 */
#include "proto/json.h"
#include "proto/msg_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- start, setup, ready ----------------------------------------------- */

/* start, and setup (protocol 1.4): the same fields but the start time. */
static int start_or_setup_encode(struct ctx *c, cJSON *root, const struct proto_start *st,
                                 bool start)
{
    msgj_put_u64(c, root, "test", st->test);
    if (start) {
        msgj_put_u64(c, root, "start_at_ns", st->start_at_ns);
        if (st->offset_ns)
            msgj_put_i64(c, root, "offset_ns", st->offset_ns);
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
        msgj_put_item(c, root, "rates", arr);
    }
    return c->err;
}

static int start_or_setup_decode(struct ctx *c, const cJSON *root, struct proto_start *st,
                                 bool start)
{
    const char *name = start ? "start" : "setup";
    uint64_t test = 0;
    msgj_get_uint(c, root, name, "test", 0, UINT32_MAX, &test);
    st->test = (uint32_t)test;
    if (start) {
        msgj_get_u64(c, root, name, "start_at_ns", &st->start_at_ns);
        /* Optional (0 when absent): a manager that measured no offset. */
        if (msgj_field(root, "offset_ns"))
            msgj_get_i64(c, root, name, "offset_ns", &st->offset_ns);
    }
    /* Optional: per-worker IOPS of a rate cycle's step. */
    if (msgj_field(root, "rates")) {
        const cJSON *arr = msgj_get_array(c, root, name, "rates"), *it;
        size_t n = 0, i = 0;
        if (!arr)
            return c->err;
        cJSON_ArrayForEach(it, arr) n++;
        if (n == 0 || n > PROTO_START_MAX_RATES)
            return msgj_ctx_fail(c, "%s.rates: must hold 1..%u entries, got %zu", name,
                                 (unsigned)PROTO_START_MAX_RATES, n);
        st->rates = calloc(n, sizeof(double));
        if (!st->rates)
            return msgj_ctx_oom(c);
        st->nrates = n;
        cJSON_ArrayForEach(it, arr)
        {
            double v = cJSON_IsNumber(it) ? it->valuedouble : -1;
            if (!(v == 0 || (v >= IOF_RATE_MIN && v <= IOF_RATE_MAX_IOPS)))
                return msgj_ctx_fail(c, "%s.rates[%zu]: must be 0 or %g..%g IOPS", name, i,
                                     IOF_RATE_MIN, IOF_RATE_MAX_IOPS);
            st->rates[i++] = v;
        }
    }
    return c->err;
}

int msg_start_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    return start_or_setup_encode(c, root, &msg->u.start, true);
}

int msg_start_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    return start_or_setup_decode(c, root, &msg->u.start, true);
}

int msg_setup_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    return start_or_setup_encode(c, root, &msg->u.setup, false);
}

int msg_setup_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    return start_or_setup_decode(c, root, &msg->u.setup, false);
}

int msg_ready_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    msgj_put_u64(c, root, "test", msg->u.ready.test);
    return c->err;
}

int msg_ready_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    uint64_t test = 0;
    msgj_get_uint(c, root, "ready", "test", 0, UINT32_MAX, &test);
    msg->u.ready.test = (uint32_t)test;
    return c->err;
}

/* ---- plan ------------------------------------------------------------- */

int msg_plan_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_plan *p = &msg->u.plan;
    cJSON *obj;
    if (!p->text)
        return msgj_ctx_fail(c, "plan.plan: required field missing");
    {
        const char *end = NULL;
        obj = cJSON_ParseWithLengthOpts(p->text, p->len, &end, 0);
        while (obj && end < p->text + p->len &&
               (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
            end++;
        if (!obj || !cJSON_IsObject(obj) || end != p->text + p->len) {
            cJSON_Delete(obj);
            return msgj_ctx_fail(c, "plan.plan: must be the text of a JSON object");
        }
    }
    if (proto_json_make_exact(obj)) {
        cJSON_Delete(obj);
        return msgj_ctx_oom(c);
    }
    msgj_put_item(c, root, "plan", obj);
    return c->err;
}

/* The plan is kept as text: the agent validates it with the plan loader,
 * field by field, exactly as `iofleet validate` does. */
int msg_plan_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    const cJSON *obj = msgj_get_object(c, root, "plan", "plan");
    char *text;
    if (!obj)
        return c->err;
    text = proto_json_print_exact(obj);
    if (!text)
        return msgj_ctx_oom(c);
    msg->u.plan.text = text;
    msg->u.plan.len = strlen(text);
    return c->err;
}

/* ---- prepared: where each target lives (optional) ---------------------- */

int msg_prepared_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_prepared *pr = &msg->u.prepared;
    cJSON *ja;

    if (!pr->nplaces)
        return c->err;
    if (pr->nplaces > PROTO_PLACES_MAX || !pr->places)
        return msgj_ctx_fail(c, "prepared.targets: %zu entries, at most %d", pr->nplaces,
                             PROTO_PLACES_MAX);
    ja = msgj_put_container(c, root, "targets", cJSON_CreateArray());
    for (size_t i = 0; ja && i < pr->nplaces && !c->err; i++) {
        const struct proto_target_place *t = &pr->places[i];
        char prefix[PATH_BUF];
        cJSON *jt = cJSON_CreateObject();
        snprintf(prefix, sizeof(prefix), "prepared.targets[%zu]", i);
        if (!jt || !cJSON_AddItemToArray(ja, jt)) {
            cJSON_Delete(jt);
            return msgj_ctx_oom(c);
        }
        msgj_put_u64(c, jt, "group", t->group);
        msgj_put_u64(c, jt, "target", t->target);
        if (t->device)
            msgj_put_str(c, jt, prefix, "device", t->device, STR_LABEL, 0);
        if (t->fstype)
            msgj_put_str(c, jt, prefix, "fstype", t->fstype, STR_LABEL, 0);
        msgj_put_tristate(c, jt, prefix, "ram_backed", t->ram_backed);
    }
    return c->err;
}

int msg_prepared_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_prepared *pr = &msg->u.prepared;
    const cJSON *ja = msgj_get_item(c, root, "prepared.targets", "targets", OPTIONAL | NULLABLE),
                *jt;
    size_t n = 0;

    if (!ja)
        return c->err;
    if (!cJSON_IsArray(ja))
        return msgj_ctx_fail(c, "prepared.targets: must be an array");
    cJSON_ArrayForEach(jt, ja) n++;
    if (n > PROTO_PLACES_MAX)
        return msgj_ctx_fail(c, "prepared.targets: %zu entries, at most %d", n, PROTO_PLACES_MAX);
    if (!n)
        return c->err;
    pr->places = calloc(n, sizeof(*pr->places));
    if (!pr->places)
        return msgj_ctx_oom(c);
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
            return msgj_ctx_fail(c, "%s: must be an object", prefix);
        msgj_get_uint(c, jt, prefix, "group", 0, IOF_PLAN_MAX_GROUPS - 1, &v);
        t->group = (uint32_t)v;
        msgj_get_uint(c, jt, prefix, "target", 0, IOF_PLAN_MAX_TARGETS - 1, &v);
        t->target = (uint32_t)v;
        msgj_get_str(c, jt, prefix, "device", STR_LABEL, OPTIONAL | NULLABLE, &t->device);
        msgj_get_str(c, jt, prefix, "fstype", STR_LABEL, OPTIONAL | NULLABLE, &t->fstype);
        msgj_get_tristate(c, jt, prefix, "ram_backed", &t->ram_backed);
        if (c->err)
            return c->err;
    }
    return c->err;
}

int msg_progress_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_prepare_progress *p = &msg->u.prepare_progress;
    msgj_put_str(c, root, "prepare_progress", "path", p->path, STR_PATH, 0);
    msgj_put_u64(c, root, "done", p->done);
    msgj_put_u64(c, root, "total", p->total);
    if (p->verify)
        msgj_put_str(c, root, "prepare_progress", "stage", "verify", STR_LABEL, 0);
    return c->err;
}

int msg_progress_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_prepare_progress *p = &msg->u.prepare_progress;
    msgj_get_str(c, root, "prepare_progress", "path", STR_PATH, 0, &p->path);
    msgj_get_u64(c, root, "prepare_progress", "done", &p->done);
    msgj_get_u64(c, root, "prepare_progress", "total", &p->total);
    {
        const char *stage = NULL;
        msgj_get_str(c, root, "prepare_progress", "stage", STR_LABEL, OPTIONAL | NULLABLE, &stage);
        if (!c->err && stage && strcmp(stage, "verify") == 0)
            p->verify = true;
        else if (!c->err && stage && strcmp(stage, "prepare") != 0)
            msgj_ctx_fail(c, "prepare_progress.stage: '%s' is not \"prepare\" or \"verify\"",
                          stage);
        free((void *)stage);
    }
    if (!c->err && p->done > p->total)
        msgj_ctx_fail(c, "prepare_progress.done: %" PRIu64 " exceeds total %" PRIu64, p->done,
                      p->total);
    return c->err;
}

/* ---- stop, prepare, cleaned -------------------------------------------- */

int msg_stop_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    msgj_put_str(c, root, "stop", "reason", msg->u.stop.reason, STR_TEXT, 0);
    return c->err;
}

int msg_stop_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    msgj_get_str(c, root, "stop", "reason", STR_TEXT, 0, &msg->u.stop.reason);
    return c->err;
}

int msg_prepare_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    /* Only when asked: a prepare without it is the 1.0 message. */
    if (msg->u.prepare.cleanup && !c->err)
        msgj_put_item(c, root, "cleanup", cJSON_CreateBool(true));
    return c->err;
}

int msg_prepare_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    const cJSON *it = msgj_get_item(c, root, "prepare.cleanup", "cleanup", OPTIONAL);
    if (it && !cJSON_IsBool(it))
        return msgj_ctx_fail(c, "prepare.cleanup: must be true or false");
    msg->u.prepare.cleanup = it && cJSON_IsTrue(it);
    return c->err;
}

int msg_cleaned_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_cleaned *k = &msg->u.cleaned;
    cJSON *jr;

    msgj_put_str(c, root, "cleaned", "workdir", k->workdir, STR_PATH, 0);
    msgj_put_u64(c, root, "files", k->files);
    msgj_put_u64(c, root, "bytes", k->bytes);
    msgj_put_u64(c, root, "failed", k->failed);
    if (k->nremoved > PROTO_CLEANED_NAMES_MAX || k->nremoved > k->files)
        return msgj_ctx_fail(c, "cleaned.removed: %zu names, at most %d and no more than files",
                             k->nremoved, PROTO_CLEANED_NAMES_MAX);
    jr = msgj_put_container(c, root, "removed", cJSON_CreateArray());
    for (size_t i = 0; jr && i < k->nremoved && !c->err; i++) {
        cJSON *e;
        msgj_check_str(c, "cleaned.removed[]", k->removed[i], STR_PATH);
        e = c->err ? NULL : cJSON_CreateString(k->removed[i]);
        if (!c->err && (!e || !cJSON_AddItemToArray(jr, e))) {
            cJSON_Delete(e);
            return msgj_ctx_oom(c);
        }
    }
    return c->err;
}

int msg_cleaned_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_cleaned *k = &msg->u.cleaned;
    const cJSON *jr, *e;
    size_t n = 0;

    msgj_get_str(c, root, "cleaned", "workdir", STR_PATH, 0, &k->workdir);
    msgj_get_u64(c, root, "cleaned", "files", &k->files);
    msgj_get_u64(c, root, "cleaned", "bytes", &k->bytes);
    msgj_get_u64(c, root, "cleaned", "failed", &k->failed);
    jr = msgj_get_array(c, root, "cleaned", "removed");
    if (c->err)
        return c->err;
    cJSON_ArrayForEach(e, jr) n++;
    if (n > PROTO_CLEANED_NAMES_MAX || n > k->files)
        return msgj_ctx_fail(c, "cleaned.removed: %zu names, at most %d and no more than files", n,
                             PROTO_CLEANED_NAMES_MAX);
    k->removed = calloc(n ? n : 1, sizeof(*k->removed));
    if (!k->removed)
        return msgj_ctx_oom(c);
    cJSON_ArrayForEach(e, jr)
    {
        char *copy;
        if (!cJSON_IsString(e) || !e->valuestring)
            return msgj_ctx_fail(c, "cleaned.removed[%zu]: must be a string", k->nremoved);
        if (msgj_check_str(c, "cleaned.removed[]", e->valuestring, STR_PATH))
            return c->err;
        copy = strdup(e->valuestring);
        if (!copy)
            return msgj_ctx_oom(c);
        k->removed[k->nremoved++] = copy;
    }
    return c->err;
}
