/* SPDX-License-Identifier: Apache-2.0 */
/* proto/msg_stats.c - the JSON bodies of stats and result: per worker and
 * target the counters, base64 latency histograms and rated summaries, the
 * node's cpu figures, and a result's lateness (the binary stats body is
 * proto/statsbin.c).
 */
#include "proto/msg_int.h"
#include "proto/statsbin.h"

#include <openssl/evp.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- histograms, directions, rated targets ----------------------------- */

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
        return msgj_ctx_oom(c);
    }
    EVP_EncodeBlock((unsigned char *)b64, raw, (int)n);
    free(raw);
    msgj_put_item(c, j, key, cJSON_CreateString(b64));
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
        return msgj_ctx_fail(c, "%s: must be a base64 string", path);
    blen = strlen(it->valuestring);
    if (blen % 4 || blen > 4 * 65536)
        return msgj_ctx_fail(c, "%s: bad base64 length %zu", path, blen);
    *raw = blen / 4 * 3 + 1 <= cap ? stack : malloc(blen / 4 * 3 + 1);
    if (!*raw)
        return msgj_ctx_oom(c);
    n = EVP_DecodeBlock(*raw, (const unsigned char *)it->valuestring, (int)blen);
    if (blen >= 1 && it->valuestring[blen - 1] == '=')
        pad++;
    if (blen >= 2 && it->valuestring[blen - 2] == '=')
        pad++;
    if (n < 0 || (size_t)n < pad)
        return msgj_ctx_fail(c, "%s: not a valid histogram", path);
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
        return msgj_ctx_fail(c, "%s.%s: %" PRIu64 " latencies for %" PRIu64 " I/Os", prefix, key,
                             d->lat.count, d->ios);
    j = msgj_put_container(c, obj, key, cJSON_CreateObject());
    if (!j)
        return c->err;
    msgj_put_u64(c, j, "ios", d->ios);
    msgj_put_u64(c, j, "bytes", d->bytes);
    msgj_put_u64(c, j, "errors", d->errors);
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

    msgj_mkpath(path, prefix, key);
    j = msgj_get_item(c, obj, path, key, OPTIONAL);
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
        return msgj_ctx_fail(c, "%s: must be an object", path);
    msgj_get_u64(c, j, path, "ios", &ios);
    msgj_get_u64(c, j, path, "bytes", &bytes);
    msgj_get_u64(c, j, path, "errors", &errors);
    lat = c->err ? NULL : msgj_field(j, "lat");
    if (!c->err && !lat) {
        msgj_mkpath(lpath, path, "lat");
        return msgj_ctx_fail(c, "%s: required field missing", lpath);
    }
    if (c->err)
        return c->err;
    /* Typical histograms are a few hundred bytes: decode on the stack. */
    msgj_mkpath(lpath, path, "lat");
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
        return msgj_ctx_fail(c, "%s: not a valid histogram", lpath);
    if (d->lat.count - before != ios)
        return msgj_ctx_fail(c, "%s: %" PRIu64 " latencies for %" PRIu64 " I/Os", path,
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
        return msgj_ctx_fail(c, "%s.rated: inconsistent service latency summary", prefix);
    j = msgj_put_container(c, obj, "rated", cJSON_CreateObject());
    if (!j)
        return c->err;
    msgj_put_u64(c, j, "n", r->svc.count);
    msgj_put_u64(c, j, "sum", (uint64_t)r->svc.sum_ns);
    msgj_put_u64(c, j, "min", r->svc.min_ns);
    msgj_put_u64(c, j, "max", r->svc.max_ns);
    msgj_put_u64(c, j, "late", r->late);
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
    msgj_mkpath(path, prefix, "rated");
    j = msgj_get_item(c, obj, path, "rated", OPTIONAL);
    if (!j || c->err)
        return c->err;
    if (!cJSON_IsObject(j))
        return msgj_ctx_fail(c, "%s: must be an object", path);
    msgj_get_u64(c, j, path, "n", &n);
    msgj_get_u64(c, j, path, "sum", &sum);
    msgj_get_u64(c, j, path, "min", &min);
    msgj_get_u64(c, j, path, "max", &max);
    msgj_get_u64(c, j, path, "late", &late);
    if (c->err)
        return c->err;
    if (late > n || (n && (min > max || (iof_u128)min * n > sum || (iof_u128)max * n < sum)) ||
        (!n && sum))
        return msgj_ctx_fail(c, "%s: inconsistent service latency summary", path);
    if (n) {
        one->svc = (struct iof_hist_summary){n, sum, min, max};
    }
    one->late = late;
    return c->err;
}

/* ---- cpu --------------------------------------------------------------- */

/* The cpu's node figures (protocol 1.6): all present or none; the first
 * two are percentages, the others counts or rates. */
static const char *const cpu_node_keys[] = {"dpc",       "irq",           "intr_s",
                                            "packets_s", "packet_errors", "retrans_s"};

const char *const proto_cpu_node_names[PROTO_CPU_NODE_N] = {
    "dpc_pct", "irq_pct", "intr_per_s", "packets_per_s", "packet_errors", "retrans_per_s"};

void proto_cpu_node_values(const struct proto_cpu *c, double v[PROTO_CPU_NODE_N])
{
    const double x[PROTO_CPU_NODE_N] = {c->dpc_pct,       c->irq_pct,       c->intr_per_s,
                                        c->packets_per_s, c->packet_errors, c->retrans_per_s};
    memcpy(v, x, sizeof(x));
}

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
    j = msgj_put_container(c, root, "cpu", cJSON_CreateObject());
    for (size_t i = 0; j && i < 4; i++) {
        /* Two decimals are plenty, and keep the text short. */
        double r = !(v[i] > 0) ? 0 : v[i] > 100 ? 100 : (double)(int64_t)(v[i] * 100 + 0.5) / 100;
        msgj_put_item(c, j, keys[i], cJSON_CreateNumber(r));
    }
    if (cpu->node_valid) {
        struct proto_cpu copy = *cpu;
        double *nv[6];
        cpu_node_ptrs(&copy, nv);
        for (size_t i = 0; j && i < 6; i++) {
            double max = i < 2 ? 100 : PROTO_CPU_NODE_MAX, x = *nv[i];
            double r = !(x > 0) ? 0 : x > max ? max : (double)(int64_t)(x * 100 + 0.5) / 100;
            msgj_put_item(c, j, cpu_node_keys[i], cJSON_CreateNumber(r));
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

    msgj_mkpath(prefix, name, "cpu");
    j = msgj_get_item(c, root, prefix, "cpu", OPTIONAL | NULLABLE);
    if (!j || c->err)
        return c->err;
    if (!cJSON_IsObject(j))
        return msgj_ctx_fail(c, "%s: must be an object", prefix);
    for (size_t i = 0; i < 4; i++) {
        char path[PATH_BUF];
        const cJSON *it;
        msgj_mkpath(path, prefix, keys[i]);
        it = msgj_get_item(c, j, path, keys[i], 0);
        if (c->err)
            return c->err;
        if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= 100))
            return msgj_ctx_fail(c, "%s: must be a number 0..100", path);
        *v[i] = it->valuedouble;
    }
    cpu->valid = true;
    /* 1.6's node figures: all or none (an older agent sends none: unknown). */
    if (msgj_get_item(c, j, prefix, cpu_node_keys[0], OPTIONAL)) {
        double *nv[6];
        cpu_node_ptrs(cpu, nv);
        for (size_t i = 0; i < 6; i++) {
            char path[PATH_BUF];
            const cJSON *it;
            /* Counts up to the earlier builds' bound are read as today's. */
            double max = i < 2 ? 100 : PROTO_CPU_NODE_READ_MAX;
            double keep = i < 2 ? 100 : PROTO_CPU_NODE_MAX;
            msgj_mkpath(path, prefix, cpu_node_keys[i]);
            it = msgj_get_item(c, j, path, cpu_node_keys[i], 0);
            if (c->err)
                return c->err;
            if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= max))
                return msgj_ctx_fail(c, "%s: must be a number 0..%g", path, max);
            *nv[i] = it->valuedouble > keep ? keep : it->valuedouble;
        }
        cpu->node_valid = true;
    }
    return c->err;
}

/* ---- stats: the body of both ------------------------------------------- */

int msg_stats_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    const struct proto_stats *st = &msg->u.stats;
    bool result = msg->type == PROTO_MSG_RESULT;
    size_t total = 0;
    cJSON *jw;

    if (st->nworkers > PROTO_STATS_MAX_WORKERS)
        return msgj_ctx_fail(c, "%s.workers: %zu workers, at most %d",
                             proto_msg_type_name(msg->type), st->nworkers, PROTO_STATS_MAX_WORKERS);
    msgj_put_u64(c, root, "test", st->test);
    if (result) {
        msgj_put_u64(c, root, "measured_ns", st->measured_ns);
        msgj_put_u64(c, root, "cpu_ns", st->cpu_ns);
        msgj_put_u64(c, root, "started_first_ns", st->started_first_ns);
        msgj_put_u64(c, root, "started_last_ns", st->started_last_ns);
        if (!c->err)
            msgj_put_item(c, root, "interrupted", cJSON_CreateBool(st->interrupted));
        msgj_put_str(c, root, "result", "error", st->error, STR_TEXT, NULLABLE);
        if (st->nverify_reports > PROTO_VERIFY_REPORTS_MAX)
            return msgj_ctx_fail(c, "result.verify_reports: %zu entries, at most %d",
                                 st->nverify_reports, PROTO_VERIFY_REPORTS_MAX);
        if (st->nverify_reports && !c->err) {
            cJSON *jr = msgj_put_container(c, root, "verify_reports", cJSON_CreateArray());
            for (size_t i = 0; jr && i < st->nverify_reports && !c->err; i++) {
                cJSON *s;
                msgj_check_str(c, "result.verify_reports[]", st->verify_reports[i], STR_TEXT);
                s = c->err ? NULL : cJSON_CreateString(st->verify_reports[i]);
                if (!c->err && (!s || !cJSON_AddItemToArray(jr, s))) {
                    cJSON_Delete(s);
                    return msgj_ctx_oom(c);
                }
            }
        }
    } else {
        msgj_put_u64(c, root, "interval", st->interval);
        if (st->lost && !c->err)
            msgj_put_item(c, root, "lost", cJSON_CreateBool(true));
        if (st->duration_ns)
            msgj_put_u64(c, root, "duration_ns", st->duration_ns);
    }
    cpu_encode(c, root, &st->cpu);
    jw = msgj_put_container(c, root, "workers", cJSON_CreateArray());
    for (size_t w = 0; jw && w < st->nworkers && !c->err; w++) {
        const struct proto_worker_stats *ws = &st->workers[w];
        cJSON *jt = cJSON_CreateArray();
        if (!jt || !cJSON_AddItemToArray(jw, jt)) {
            cJSON_Delete(jt);
            return msgj_ctx_oom(c);
        }
        if (ws->ntargets > PROTO_STATS_MAX_TARGETS)
            return msgj_ctx_fail(c, "%s.workers[%zu]: %zu targets, at most %d",
                                 proto_msg_type_name(msg->type), w, ws->ntargets,
                                 PROTO_STATS_MAX_TARGETS);
        total += ws->ntargets;
        if (total > PROTO_STATS_MAX_TOTAL_TARGETS)
            return msgj_ctx_fail(c, "%s.workers: more than %d targets in all",
                                 proto_msg_type_name(msg->type), PROTO_STATS_MAX_TOTAL_TARGETS);
        for (size_t t = 0; t < ws->ntargets && !c->err; t++) {
            const struct iof_stats *ts = &ws->targets[t];
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(jt, o)) {
                cJSON_Delete(o);
                return msgj_ctx_oom(c);
            }
            {
                char prefix[PATH_BUF];
                snprintf(prefix, sizeof(prefix), "%s.workers[%zu][%zu]",
                         proto_msg_type_name(msg->type), w, t);
                dir_encode(c, o, prefix, "r", &ts->rd);
                dir_encode(c, o, prefix, "w", &ts->wr);
                rated_encode(c, o, prefix, &ts->rated);
            }
            if (ts->verify_errors)
                msgj_put_u64(c, o, "verify_errors", ts->verify_errors);
            if (ts->verify_bad_reads)
                msgj_put_u64(c, o, "verify_bad_reads", ts->verify_bad_reads);
            if (ts->verify_overlaid)
                msgj_put_u64(c, o, "verify_overlaid", ts->verify_overlaid);
            if (ts->first_error > 0)
                return msgj_ctx_fail(c,
                                     "%s.workers[%zu][%zu].first_error.code: must be a negative "
                                     "error code, got %d",
                                     proto_msg_type_name(msg->type), w, t, ts->first_error);
            if (ts->first_error && !c->err) {
                cJSON *fe = msgj_put_container(c, o, "first_error", cJSON_CreateObject());
                if (fe) {
                    msgj_put_str(c, fe, "first_error", "code", iof_errname(ts->first_error),
                                 STR_CODE, 0);
                    msgj_put_u64(c, fe, "offset", ts->first_error_offset);
                }
            }
        }
    }
    return c->err;
}

int msg_stats_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    struct proto_stats *st = &msg->u.stats;
    bool result = msg->type == PROTO_MSG_RESULT;
    const char *name = proto_msg_type_name(msg->type);
    const cJSON *jw, *jt;
    struct iof_stats *sum = NULL;
    uint64_t v = 0;
    size_t n = 0, w = 0, total = 0;

    msgj_get_uint(c, root, name, "test", 0, UINT32_MAX, &v);
    st->test = (uint32_t)v;
    if (result) {
        const cJSON *it;
        msgj_get_u64(c, root, name, "measured_ns", &st->measured_ns);
        msgj_get_u64(c, root, name, "cpu_ns", &st->cpu_ns);
        msgj_get_u64(c, root, name, "started_first_ns", &st->started_first_ns);
        msgj_get_u64(c, root, name, "started_last_ns", &st->started_last_ns);
        it = msgj_get_item(c, root, "result.interrupted", "interrupted", 0);
        if (it && !cJSON_IsBool(it))
            return msgj_ctx_fail(c, "result.interrupted: must be true or false");
        st->interrupted = it && cJSON_IsTrue(it);
        msgj_get_str(c, root, name, "error", STR_TEXT, OPTIONAL | NULLABLE, &st->error);
        if (msgj_field(root, "verify_reports")) {
            const cJSON *jr = msgj_get_array(c, root, name, "verify_reports"), *e;
            size_t k = 0;
            if (c->err)
                return c->err;
            cJSON_ArrayForEach(e, jr) k++;
            if (k > PROTO_VERIFY_REPORTS_MAX)
                return msgj_ctx_fail(c, "result.verify_reports: %zu entries, at most %d", k,
                                     PROTO_VERIFY_REPORTS_MAX);
            st->verify_reports = calloc(k ? k : 1, sizeof(*st->verify_reports));
            if (!st->verify_reports)
                return msgj_ctx_oom(c);
            cJSON_ArrayForEach(e, jr)
            {
                char *copy;
                if (!cJSON_IsString(e) || !e->valuestring)
                    return msgj_ctx_fail(c, "result.verify_reports[%zu]: must be a string",
                                         st->nverify_reports);
                if (msgj_check_str(c, "result.verify_reports[]", e->valuestring, STR_TEXT))
                    return c->err;
                copy = strdup(e->valuestring);
                if (!copy)
                    return msgj_ctx_oom(c);
                st->verify_reports[st->nverify_reports++] = copy;
            }
        }
    } else {
        const cJSON *it;
        msgj_get_u64(c, root, name, "interval", &st->interval);
        it = msgj_get_item(c, root, "stats.lost", "lost", OPTIONAL);
        if (it && !cJSON_IsBool(it))
            return msgj_ctx_fail(c, "stats.lost: must be true or false");
        st->lost = it && cJSON_IsTrue(it);
        if (msgj_field(root, "duration_ns"))
            msgj_get_u64(c, root, name, "duration_ns", &st->duration_ns);
    }
    cpu_decode(c, root, name, &st->cpu);
    jw = msgj_get_array(c, root, name, "workers");
    if (c->err)
        return c->err;
    cJSON_ArrayForEach(jt, jw) n++;
    if (n > PROTO_STATS_MAX_WORKERS)
        return msgj_ctx_fail(c, "%s.workers: %zu workers, at most %d", name, n,
                             PROTO_STATS_MAX_WORKERS);
    if (!n)
        return c->err;
    st->workers = calloc(n, sizeof(*st->workers));
    if (!st->workers)
        return msgj_ctx_oom(c);
    st->nworkers = n;
    if (!result && (c->flags & PROTO_DECODE_SUM_STATS)) {
        st->sum = malloc(sizeof(*st->sum));
        if (!st->sum)
            return msgj_ctx_oom(c);
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
            return msgj_ctx_fail(c, "%s.workers: more than %d targets in all", name,
                                 PROTO_STATS_MAX_TOTAL_TARGETS);
        st->counts = calloc(all ? all : 1, sizeof(*st->counts));
        if (!st->counts)
            return msgj_ctx_oom(c);
    }
    cJSON_ArrayForEach(jt, jw)
    {
        struct proto_worker_stats *ws = &st->workers[w];
        const cJSON *jo;
        size_t nt = 0, t = 0;
        char prefix[PATH_BUF];
        if (!cJSON_IsArray(jt))
            return msgj_ctx_fail(c, "%s.workers[%zu]: must be an array of targets", name, w);
        cJSON_ArrayForEach(jo, jt) nt++;
        if (nt > PROTO_STATS_MAX_TARGETS)
            return msgj_ctx_fail(c, "%s.workers[%zu]: %zu targets, at most %d", name, w, nt,
                                 PROTO_STATS_MAX_TARGETS);
        /* Each target costs a whole histogram in memory: bound the sum
         * before allocating, whatever the frame size allows. */
        total += nt;
        if (total > PROTO_STATS_MAX_TOTAL_TARGETS)
            return msgj_ctx_fail(c, "%s.workers: more than %d targets in all", name,
                                 PROTO_STATS_MAX_TOTAL_TARGETS);
        /* Not zeroed here: every field of a target is set below before it
         * is read (39 KiB each; zeroing them three times was the largest
         * single cost of decoding stats at scale). Summing: no per-target
         * storage at all. */
        ws->targets = nt && !sum ? malloc(nt * sizeof(*ws->targets)) : NULL;
        if (nt && !sum && !ws->targets)
            return msgj_ctx_oom(c);
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
                return msgj_ctx_fail(c, "%s: must be an object", prefix);
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
            if (msgj_field(jo, "verify_errors")) {
                uint64_t ve = 0;
                msgj_get_u64(c, jo, prefix, "verify_errors", &ve);
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
            if (msgj_field(jo, "verify_bad_reads")) {
                uint64_t vr = 0;
                msgj_get_u64(c, jo, prefix, "verify_bad_reads", &vr);
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
            if (msgj_field(jo, "verify_overlaid")) {
                uint64_t vo = 0;
                msgj_get_u64(c, jo, prefix, "verify_overlaid", &vo);
                if (sum)
                    ts->verify_overlaid += vo;
                else
                    ts->verify_overlaid = vo;
                if (one)
                    one->verify_overlaid = vo;
            } else if (!sum) {
                ts->verify_overlaid = 0;
            }
            fe = msgj_get_item(c, jo, prefix, "first_error", OPTIONAL | NULLABLE);
            if (fe && !c->err) {
                const char *code = NULL;
                char fp[PATH_BUF];
                msgj_mkpath(fp, prefix, "first_error");
                if (!cJSON_IsObject(fe))
                    return msgj_ctx_fail(c, "%s: must be an object", fp);
                uint64_t off = 0;
                msgj_get_str(c, fe, fp, "code", STR_CODE, 0, &code);
                msgj_get_u64(c, fe, fp, "offset", &off);
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

/* ---- result: the stats body and the lateness --------------------------- */

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
        return msgj_ctx_fail(
            c, "result.lateness.hist: %" PRIu64 " lateness values for %" PRIu64 " rated I/Os",
            h->count, rated);
    iof_hist_count_above(h, IOF_RATE_ONTIME_NS, &surely, &maybe);
    if (st->lateness_over_20us < surely || st->lateness_over_20us > maybe)
        return msgj_ctx_fail(c,
                             "result.lateness.over_20us: %" PRIu64
                             ", but the histogram has %" PRIu64 "..%" PRIu64
                             " values above 20000 ns",
                             st->lateness_over_20us, surely, maybe);
    return 0;
}

static int lateness_encode(struct ctx *c, cJSON *root, const struct proto_stats *st)
{
    cJSON *j;

    if (c->err || !st->lateness || lateness_check(c, st))
        return c->err;
    j = msgj_put_container(c, root, "lateness", cJSON_CreateObject());
    if (j && !hist_put_b64(c, j, "hist", st->lateness))
        msgj_put_u64(c, j, "over_20us", st->lateness_over_20us);
    return c->err;
}

static int lateness_decode(struct ctx *c, const cJSON *root, struct proto_stats *st)
{
    const cJSON *j = msgj_get_item(c, root, "result.lateness", "lateness", OPTIONAL | NULLABLE),
                *hs;
    uint8_t *raw;
    size_t len = 0;
    int r;

    if (!j || c->err)
        return c->err;
    if (!cJSON_IsObject(j))
        return msgj_ctx_fail(c, "result.lateness: must be an object");
    hs = msgj_get_item(c, j, "result.lateness.hist", "hist", 0);
    if (c->err)
        return c->err;
    if (hist_get_b64(c, hs, "result.lateness.hist", NULL, 0, &raw, &len)) {
        free(raw);
        return c->err;
    }
    msgj_get_u64(c, j, "result.lateness", "over_20us", &st->lateness_over_20us);
    st->lateness = c->err ? NULL : malloc(sizeof(*st->lateness));
    if (!c->err && !st->lateness) {
        free(raw);
        return msgj_ctx_oom(c);
    }
    r = c->err ? 0 : iof_hist_decode(st->lateness, raw, len);
    free(raw);
    if (c->err)
        return c->err;
    if (r)
        return msgj_ctx_fail(c, "result.lateness.hist: not a valid histogram");
    return lateness_check(c, st);
}

/* result.cpus (1.7): [{"id", "busy", "user", "sys", "dpc", "irq"}, ...],
 * ids increasing, at most PROTO_CPUS_MAX; absent when unknown. */
static const char *const cpus_keys[] = {"busy", "user", "sys", "dpc", "irq"};

static void cpus_ptrs(struct proto_cpu_one *one, double **v)
{
    v[0] = &one->busy_pct;
    v[1] = &one->user_pct;
    v[2] = &one->sys_pct;
    v[3] = &one->dpc_pct;
    v[4] = &one->irq_pct;
}

static int cpus_encode(struct ctx *c, cJSON *root, const struct proto_stats *st)
{
    cJSON *ja;

    if (c->err || !st->ncpus)
        return c->err;
    if (st->ncpus > PROTO_CPUS_MAX)
        return msgj_ctx_fail(c, "result.cpus: %zu CPUs, at most %d", st->ncpus, PROTO_CPUS_MAX);
    ja = msgj_put_container(c, root, "cpus", cJSON_CreateArray());
    for (size_t i = 0; ja && i < st->ncpus && !c->err; i++) {
        struct proto_cpu_one one = st->cpus[i];
        cJSON *o;
        double *v[5];
        if (one.id > PROTO_CPU_ID_MAX || (i && one.id <= st->cpus[i - 1].id))
            return msgj_ctx_fail(c,
                                 "result.cpus[%zu].id: %" PRIu32 " must be above the last and at "
                                 "most %u",
                                 i, one.id, PROTO_CPU_ID_MAX);
        o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(ja, o)) {
            cJSON_Delete(o);
            return msgj_ctx_oom(c);
        }
        msgj_put_u64(c, o, "id", one.id);
        cpus_ptrs(&one, v);
        for (size_t k = 0; k < 5 && !c->err; k++) {
            double x = *v[k];
            double r = !(x > 0) ? 0 : x > 100 ? 100 : (double)(int64_t)(x * 100 + 0.5) / 100;
            msgj_put_item(c, o, cpus_keys[k], cJSON_CreateNumber(r));
        }
    }
    return c->err;
}

static int cpus_decode(struct ctx *c, const cJSON *root, struct proto_stats *st)
{
    const cJSON *ja = msgj_get_item(c, root, "result.cpus", "cpus", OPTIONAL | NULLABLE), *jo;
    size_t n = 0;

    if (!ja || c->err)
        return c->err;
    if (!cJSON_IsArray(ja))
        return msgj_ctx_fail(c, "result.cpus: must be an array");
    cJSON_ArrayForEach(jo, ja) n++;
    if (n > PROTO_CPUS_MAX)
        return msgj_ctx_fail(c, "result.cpus: %zu CPUs, at most %d", n, PROTO_CPUS_MAX);
    if (!n)
        return c->err;
    st->cpus = calloc(n, sizeof(*st->cpus));
    if (!st->cpus)
        return msgj_ctx_oom(c);
    cJSON_ArrayForEach(jo, ja)
    {
        struct proto_cpu_one *one = &st->cpus[st->ncpus];
        char prefix[PATH_BUF];
        uint64_t id = 0;
        double *v[5];
        snprintf(prefix, sizeof(prefix), "result.cpus[%zu]", st->ncpus);
        if (!cJSON_IsObject(jo))
            return msgj_ctx_fail(c, "%s: must be an object", prefix);
        if (msgj_get_uint(c, jo, prefix, "id", 0, PROTO_CPU_ID_MAX, &id))
            return c->err;
        if (st->ncpus && id <= st->cpus[st->ncpus - 1].id)
            return msgj_ctx_fail(c, "%s.id: %" PRIu64 " after %" PRIu32 ": ids must increase",
                                 prefix, id, st->cpus[st->ncpus - 1].id);
        one->id = (uint32_t)id;
        cpus_ptrs(one, v);
        for (size_t k = 0; k < 5; k++) {
            char path[PATH_BUF];
            const cJSON *it;
            msgj_mkpath(path, prefix, cpus_keys[k]);
            it = msgj_get_item(c, jo, path, cpus_keys[k], 0);
            if (c->err)
                return c->err;
            if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= 100))
                return msgj_ctx_fail(c, "%s: must be a number 0..100", path);
            *v[k] = it->valuedouble;
        }
        st->ncpus++;
    }
    return c->err;
}

/* A result is the stats body with each CPU and the lateness after its workers. */
int msg_result_encode(struct ctx *c, cJSON *root, const struct proto_msg *msg)
{
    msg_stats_encode(c, root, msg);
    cpus_encode(c, root, &msg->u.result);
    return lateness_encode(c, root, &msg->u.result);
}

int msg_result_decode(struct ctx *c, const cJSON *root, struct proto_msg *msg)
{
    msg_stats_decode(c, root, msg);
    cpus_decode(c, root, &msg->u.result);
    return lateness_decode(c, root, &msg->u.result);
}
