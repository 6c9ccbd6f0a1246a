/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_field.c - reading one plan member: the JSON path of messages,
 * unknown keys and "did you mean", the typed readers (integer, size,
 * duration, percentage, string, enum, boolean) with their range checks and
 * "got ..." messages, and plan_read(), which reads a key as the schema table
 * (plan_schema.c) says. */
#include "proto/plan_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"

/* ---- message helpers ---- */

/* Copies s for a message, escaped as for a terminal (common/text.h), cut
 * to fit with "...". */
char *plan_sanitize(char *buf, size_t cap, const char *s)
{
    if (cap < 4 || iof_text_escaped_len(s) < cap) {
        iof_text_escape(buf, cap, s);
        return buf;
    }
    memcpy(buf + iof_text_escape(buf, cap - 3, s), "...", 4);
    return buf;
}

/* 'text', sanitized, for a user string inside a message. */
char *plan_quote(char *buf, size_t cap, const char *s)
{
    char tmp[80];

    snprintf(buf, cap, "'%s'", plan_sanitize(tmp, sizeof(tmp), s));
    return buf;
}

const char *plan_jtype(const cJSON *it)
{
    if (cJSON_IsNull(it))
        return "null";
    if (cJSON_IsBool(it))
        return "boolean";
    if (cJSON_IsNumber(it))
        return "number";
    if (cJSON_IsString(it))
        return "string";
    if (cJSON_IsArray(it))
        return "array";
    if (cJSON_IsObject(it))
        return "object";
    return "invalid";
}

/* The value as the user wrote it, for "got ...". */
const char *plan_got(char *buf, size_t cap, const cJSON *it)
{
    if (cJSON_IsNumber(it))
        snprintf(buf, cap, "%.15g", it->valuedouble);
    else if (cJSON_IsString(it))
        plan_quote(buf, cap, it->valuestring);
    else
        snprintf(buf, cap, "%s", plan_jtype(it));
    return buf;
}

/* ---- validation context ---- */

size_t plan_path_add(struct pctx *c, const char *fmt, ...)
{
    size_t old = c->plen;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(c->path + c->plen, sizeof(c->path) - c->plen, fmt, ap);
    va_end(ap);
    if (n > 0)
        c->plen +=
            (size_t)n < sizeof(c->path) - c->plen ? (size_t)n : sizeof(c->path) - 1 - c->plen;
    return old;
}

size_t plan_path_key(struct pctx *c, const char *key)
{
    return plan_path_add(c, "%s%s", c->plen ? "." : "", key);
}

size_t plan_path_index(struct pctx *c, size_t i)
{
    return plan_path_add(c, "[%zu]", i);
}

void plan_path_pop(struct pctx *c, size_t old)
{
    c->plen = old;
    c->path[old] = '\0';
}

void plan_fail_msg(struct pctx *c, const char *fmt, ...)
{
    char why[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (c->plen)
        iof_diag_set(c->diag, IOF_EPLAN, "%s: %s: %s", c->name, c->path, why);
    else
        iof_diag_set(c->diag, IOF_EPLAN, "%s: %s", c->name, why);
}

int plan_nomem(struct pctx *c)
{
    return iof_diag_set(c->diag, -ENOMEM, "%s: out of memory", c->name);
}

/* Levenshtein distance for short keys (SIZE_MAX when either is long). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];

    if (la >= 64 || lb >= 64)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (lower(a[i - 1]) != lower(b[j - 1]));
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* "unknown key 'x' (did you mean 'y'?)" or "(expected one of: ...)" into buf. */
void plan_unknown_key_msg(char *buf, size_t cap, const struct objdef *def, const char *key)
{
    const char *best = NULL;
    size_t bestd = 3, o;
    char q[96];

    for (size_t i = 0; i < def->nfields; i++) {
        size_t d = edit_distance(key, def->fields[i].name);
        if (d < bestd && d < strlen(def->fields[i].name)) {
            bestd = d;
            best = def->fields[i].name;
        }
    }
    plan_quote(q, sizeof(q), key);
    if (best) {
        snprintf(buf, cap, "unknown key %s (did you mean '%s'?)", q, best);
        return;
    }
    o = (size_t)snprintf(buf, cap, "unknown key %s (expected one of: ", q);
    for (size_t i = 0; i < def->nfields && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", def->fields[i].name);
    if (o < cap)
        snprintf(buf + o, cap - o, ")");
}

/* Every key of obj is in def, and none appears twice. Because unknown keys
 * stop the scan, at most def->nfields earlier siblings are compared. */
int plan_check_keys(struct pctx *c, const cJSON *obj, const struct objdef *def)
{
    char msg[300], q[96];

    for (const cJSON *it = obj->child; it; it = it->next) {
        const char *k = it->string ? it->string : "";
        if (!plan_find_field(def, k)) {
            plan_unknown_key_msg(msg, sizeof(msg), def, k);
            return fail(c, "%s", msg);
        }
        for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
            if (strcmp(prev->string, k) == 0)
                return fail(c, "duplicate key %s", plan_quote(q, sizeof(q), k));
    }
    return 0;
}

const cJSON *plan_member(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* "must be 1..64m", "must be at least 100ms", "must be at most 1h". */
static int range_fail(struct pctx *c, const char *lo, const char *hi, bool has_lo, bool has_hi,
                      const cJSON *it)
{
    char g[96];

    plan_got(g, sizeof(g), it);
    if (has_lo && has_hi)
        return fail(c, "must be %s..%s, got %s", lo, hi, g);
    if (has_lo)
        return fail(c, "must be at least %s, got %s", lo, g);
    return fail(c, "must be at most %s, got %s", hi, g);
}

/* A JSON number holding an integer; its range is the caller's. */
int plan_json_integer(struct pctx *c, const cJSON *it, const char *what, double *d)
{
    char g[96];

    if (!cJSON_IsNumber(it))
        return fail(c, "must be %s, got %s", what, plan_jtype(it));
    *d = it->valuedouble;
    if (!isfinite(*d) || *d != trunc(*d))
        return fail(c, "must be %s, got %s", what, plan_got(g, sizeof(g), it));
    return 0;
}

int plan_json_uint(struct pctx *c, const cJSON *it, uint64_t min, uint64_t max, uint64_t *out)
{
    char lo[32], hi[32];
    double d;
    int rc = plan_json_integer(c, it, "an integer", &d);

    if (rc)
        return rc;
    if (d < (double)min || d > (double)max || d > PROTO_JSON_EXACT_MAX) {
        snprintf(lo, sizeof(lo), "%" PRIu64, min);
        snprintf(hi, sizeof(hi), "%" PRIu64, max);
        return range_fail(c, lo, hi, true, true, it);
    }
    *out = (uint64_t)d;
    return 0;
}

/* Integer member `key` in min..max; def == NULL means required. */
int plan_int_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                   uint64_t min, uint64_t max, uint64_t *out)
{
    const cJSON *it = plan_member(obj, key);
    size_t o = plan_path_key(c, key);

    if (!it) {
        if (!def)
            return fail(c, "required but missing");
        *out = *def;
    } else {
        int rc = plan_json_uint(c, it, min, max, out);
        if (rc)
            return rc;
    }
    plan_path_pop(c, o);
    return 0;
}

int plan_json_size(struct pctx *c, const cJSON *it, uint64_t *out)
{
    char g[96];
    const char *why;

    if (cJSON_IsNumber(it)) {
        double d;
        int rc = plan_json_integer(c, it, "a whole number of bytes", &d);
        if (rc)
            return rc;
        if (d < 0)
            return fail(c, "must not be negative, got %s", plan_got(g, sizeof(g), it));
        if (d > PROTO_JSON_EXACT_MAX)
            return fail(c, "too large for a JSON number, got %s; write it as a string like \"16t\"",
                        plan_got(g, sizeof(g), it));
        *out = (uint64_t)d;
        return 0;
    }
    if (!cJSON_IsString(it))
        return fail(c, "must be a size (bytes, or a string like \"4k\"), got %s", plan_jtype(it));
    if (plan_parse_size(it->valuestring, out, &why))
        return fail(c, "invalid size %s: %s", plan_got(g, sizeof(g), it), why);
    return 0;
}

/* Size member `key` in min..max (max UINT64_MAX: no upper bound). */
int plan_size_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                    uint64_t min, uint64_t max, uint64_t *out)
{
    const cJSON *it = plan_member(obj, key);
    size_t o = plan_path_key(c, key);
    char lo[32], hi[32];

    if (!it) {
        if (!def)
            return fail(c, "required but missing");
        *out = *def;
    } else {
        int rc = plan_json_size(c, it, out);
        if (rc)
            return rc;
        if (*out < min || *out > max) {
            proto_plan_format_size(min, lo, sizeof(lo));
            proto_plan_format_size(max, hi, sizeof(hi));
            return range_fail(c, lo, hi, true, max != UINT64_MAX, it);
        }
    }
    plan_path_pop(c, o);
    return 0;
}

int plan_json_duration(struct pctx *c, const cJSON *it, uint64_t *out)
{
    char g[96];
    const char *why;

    if (cJSON_IsNumber(it)) {
        double d;
        int rc = plan_json_integer(c, it, "a whole number of seconds", &d);
        if (rc)
            return rc;
        if (d < 0)
            return fail(c, "must not be negative, got %s", plan_got(g, sizeof(g), it));
        if (d > (double)(UINT64_MAX / IOF_NS_PER_S))
            return fail(c, "too large, got %s", plan_got(g, sizeof(g), it));
        *out = (uint64_t)d * IOF_NS_PER_S;
        return 0;
    }
    if (!cJSON_IsString(it))
        return fail(c, "must be a duration (a string like \"10s\", or seconds), got %s",
                    plan_jtype(it));
    if (plan_parse_duration(it->valuestring, out, &why)) {
        const char *v = it->valuestring;
        /* A bare number: seconds is what fio and most people mean. */
        if (*v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 24)
            return fail(c, "invalid duration %s: %s; did you mean \"%ss\"?",
                        plan_got(g, sizeof(g), it), why, v);
        return fail(c, "invalid duration %s: %s", plan_got(g, sizeof(g), it), why);
    }
    return 0;
}

/* Duration member `key` at most max (UINT64_MAX: unbounded). */
int plan_dur_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                   uint64_t max, uint64_t *out)
{
    const cJSON *it = plan_member(obj, key);
    size_t o = plan_path_key(c, key);
    char hi[32];

    if (!it) {
        if (!def)
            return fail(c, "required but missing");
        *out = *def;
    } else {
        int rc = plan_json_duration(c, it, out);
        if (rc)
            return rc;
        if (*out > max) {
            proto_plan_format_duration(max, hi, sizeof(hi));
            return range_fail(c, NULL, hi, false, true, it);
        }
    }
    plan_path_pop(c, o);
    return 0;
}

/* String value: non-empty, at most maxlen bytes. *out borrows from the tree. */
int plan_json_string(struct pctx *c, const cJSON *it, size_t maxlen, const char **out)
{
    struct iof_text_fault tf;
    size_t n;

    if (!cJSON_IsString(it))
        return fail(c, "must be a string, got %s", plan_jtype(it));
    n = strlen(it->valuestring);
    if (n == 0)
        return fail(c, "must not be empty");
    if (n > maxlen)
        return fail(c, "is too long: %zu bytes, the maximum is %zu", n, maxlen);
    /* No string of a plan (a name, a path, a label) needs a control
     * character; one would forge log lines or drive the terminal of whoever
     * lists the run (common/text.h). */
    if (iof_text_check(it->valuestring, &tf)) {
        char why[64], q[96];
        return fail(c, "must not contain control characters, got %s of %s",
                    iof_text_fault_str(why, sizeof(why), &tf),
                    plan_quote(q, sizeof(q), it->valuestring));
    }
    *out = it->valuestring;
    return 0;
}

int plan_str_field(struct pctx *c, const cJSON *obj, const char *key, const char *def,
                   size_t maxlen, const char **out)
{
    const cJSON *it = plan_member(obj, key);
    size_t o = plan_path_key(c, key);

    if (!it) {
        if (!def)
            return fail(c, "required but missing");
        *out = def;
    } else {
        int rc = plan_json_string(c, it, maxlen, out);
        if (rc)
            return rc;
    }
    plan_path_pop(c, o);
    return 0;
}

int plan_enum_field(struct pctx *c, const cJSON *obj, const char *key, size_t def,
                    const char *const *names, size_t n, size_t *out)
{
    const cJSON *it = plan_member(obj, key);
    size_t o = plan_path_key(c, key);
    char list[128], g[96];
    size_t l = 0;

    if (!it) {
        *out = def;
        plan_path_pop(c, o);
        return 0;
    }
    if (!cJSON_IsString(it))
        return fail(c, "must be a string, got %s", plan_jtype(it));
    for (size_t i = 0; i < n; i++) {
        if (strcmp(it->valuestring, names[i]) == 0) {
            *out = i;
            plan_path_pop(c, o);
            return 0;
        }
    }
    list[0] = '\0';
    for (size_t i = 0; i < n && l < sizeof(list); i++)
        l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", names[i]);
    return fail(c, "must be one of %s, got %s", list, plan_got(g, sizeof(g), it));
}

/* Boolean member `key` (true or false), def when absent. */
int plan_bool_field(struct pctx *c, const cJSON *obj, const char *key, bool def, bool *out)
{
    const cJSON *it = plan_member(obj, key);
    size_t o = plan_path_key(c, key);

    if (!it) {
        *out = def;
    } else {
        if (!cJSON_IsBool(it))
            return fail(c, "must be true or false, got %s", plan_jtype(it));
        *out = cJSON_IsTrue(it);
    }
    plan_path_pop(c, o);
    return 0;
}

int plan_check_object(struct pctx *c, const cJSON *it)
{
    if (!cJSON_IsObject(it))
        return fail(c, "must be an object, got %s", plan_jtype(it));
    return 0;
}

/* An array of min..max entries; *n its length. */
int plan_check_array(struct pctx *c, const cJSON *it, size_t min, size_t max, size_t *n)
{
    size_t k = 0;

    if (!cJSON_IsArray(it))
        return fail(c, "must be an array, got %s", plan_jtype(it));
    for (const cJSON *e = it->child; e; e = e->next)
        k++;
    if (k < min)
        return fail(c, "must not be empty");
    if (k > max)
        return fail(c, "has %zu entries, the maximum is %zu", k, max);
    *n = k;
    return 0;
}

/* ---- reading a key as the table says ---- */

/* "N%": a whole percentage 0..100 in *pct (true); anything else false. */
bool plan_pct_string(const cJSON *it, uint64_t *pct)
{
    const char *s;
    size_t n;

    if (!cJSON_IsString(it))
        return false;
    s = it->valuestring;
    n = strlen(s);
    if (n < 2 || n > 4 || s[n - 1] != '%')
        return false;
    *pct = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (!is_digit(s[i]))
            return false;
        *pct = *pct * 10 + (uint64_t)(s[i] - '0');
    }
    return *pct <= 100;
}

/* A whole percentage, "N%" or the number N, 0..100. */
int plan_pct_field(struct pctx *c, const cJSON *obj, const char *key, uint32_t *out)
{
    const cJSON *it = plan_member(obj, key);
    size_t o = plan_path_key(c, key);
    uint64_t v = 0;
    char g[96];

    if (!it) {
        *out = 0;
        plan_path_pop(c, o);
        return 0;
    }
    if (cJSON_IsString(it)) {
        if (!plan_pct_string(it, &v))
            return fail(c, "must be a whole percentage 0%%..100%%, got %s",
                        plan_got(g, sizeof(g), it));
    } else {
        int rc = plan_json_uint(c, it, 0, 100, &v);
        if (rc)
            return rc;
    }
    *out = (uint32_t)v;
    plan_path_pop(c, o);
    return 0;
}

static void store(void *out, size_t width, uint64_t v)
{
    if (width == sizeof(uint64_t)) {
        memcpy(out, &v, sizeof(v));
    } else if (width == sizeof(uint32_t)) {
        uint32_t v32 = (uint32_t)v;
        memcpy(out, &v32, sizeof(v32));
    } else {
        bool b = v != 0;
        memcpy(out, &b, sizeof(b));
    }
}

static int read_field(struct pctx *c, const cJSON *obj, const struct field *f, uint64_t max,
                      void *out)
{
    const uint64_t *def = f->flags & PF_REQUIRED ? NULL : &f->def;
    /* Set before each reader: a reader that fails leaves its output alone,
     * and v is only stored when it succeeded. */
    uint64_t v = 0;
    uint32_t v32 = 0;
    size_t idx = 0;
    bool b = false;
    const char *s;
    int rc;

    switch (f->kind) {
    case PK_INT:
        rc = plan_int_field(c, obj, f->name, def, f->min, max, &v);
        break;
    case PK_SIZE:
        rc = plan_size_field(c, obj, f->name, def, f->min, max, &v);
        break;
    case PK_DURATION:
        rc = plan_dur_field(c, obj, f->name, def, max, &v);
        break;
    case PK_PCT:
        rc = plan_pct_field(c, obj, f->name, &v32);
        v = v32;
        break;
    case PK_ENUM:
        rc = plan_enum_field(c, obj, f->name, (size_t)f->def, f->names, f->nnames, &idx);
        v = idx;
        break;
    case PK_BOOL:
        rc = plan_bool_field(c, obj, f->name, f->def != 0, &b);
        v = b;
        break;
    case PK_STRING:
        rc = plan_str_field(c, obj, f->name, f->flags & PF_REQUIRED ? NULL : f->def_str, max, &s);
        if (rc)
            return rc;
        if (f->off == PLAN_NO_OFF)
            memcpy(out, &s, sizeof(s));
        else
            snprintf(out, f->width, "%s", s);
        return 0;
    default:
        return fail(c, "internal error: %s is not read by its kind", f->name);
    }
    if (rc)
        return rc;
    store(out, f->width, v);
    return 0;
}

static const struct field *field_of(struct pctx *c, const struct objdef *def, const char *key)
{
    const struct field *f = plan_find_field(def, key);

    if (!f)
        plan_fail_msg(c, "internal error: no key %s in the schema", key);
    return f;
}

int plan_read(struct pctx *c, const cJSON *obj, const struct objdef *def, const char *key,
              void *base)
{
    const struct field *f = field_of(c, def, key);

    if (!f || f->off == PLAN_NO_OFF)
        return f ? fail(c, "internal error: %s has no place", key) : IOF_EPLAN;
    return read_field(c, obj, f, f->max, (char *)base + f->off);
}

int plan_read_to(struct pctx *c, const cJSON *obj, const struct objdef *def, const char *key,
                 void *out)
{
    const struct field *f = field_of(c, def, key);

    return f ? read_field(c, obj, f, f->max, out) : IOF_EPLAN;
}

int plan_read_upto(struct pctx *c, const cJSON *obj, const struct objdef *def, const char *key,
                   uint64_t max, void *out)
{
    const struct field *f = field_of(c, def, key);

    return f ? read_field(c, obj, f, max, out) : IOF_EPLAN;
}

int plan_check_entries(struct pctx *c, const cJSON *it, const struct objdef *def, const char *key,
                       size_t *n)
{
    const struct field *f = field_of(c, def, key);

    return f ? plan_check_array(c, it, (size_t)f->min, (size_t)f->max, n) : IOF_EPLAN;
}
