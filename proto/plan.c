/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan.c - the plan loader: JSON text -> struct iof_plan.
 *
 * Pipeline: bounded read -> refuse NUL bytes and \u0000 escapes (C strings
 * cannot carry them; a path cut at a NUL would name another file) -> cJSON
 * parse -> apply --set overrides to the tree -> validate field by field while
 * filling the struct -> cross-field checks. The tree is freed on every path
 * out of proto_plan_parse(); on error the half-filled plan is freed too.
 *
 * Messages: "<name>: <json path>: <reason>". The path is tracked in a small
 * stack (struct pctx) pushed and popped around each member; on failure it is
 * left in place so the message (and --set provenance) can use it.
 */
#include "proto/plan.h"
#include "proto/json.h"
#include "proto/name.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/ratecycle.h"
#include "common/text.h"

#include "common/buf.h"
#include "common/clock.h"
#include "common/engine_facts.h"

/* The generator's line table is IOF_PLAN_MAX_LINES long (dynamo/gen.h). */
_Static_assert(PROTO_PLAN_MAX_IO_SIZE <= UINT32_MAX, "dyn_io_desc.size is 32-bit");

#define JSON_MAX_EXACT 9007199254740992.0   /* 2^53: larger JSON numbers lose precision */
#define DIRECT_IO_ALIGN 512u                /* O_DIRECT granule that holds on every device */
#define TEST_FILE_ALIGN 4096u               /* test files: whole 4 KiB blocks */
#define NS_PER_MS ((uint64_t)IOF_NS_PER_MS) /* uint64_t, for PRIu64 */
#define NS_PER_S ((uint64_t)IOF_NS_PER_S)
#define NS_PER_MIN (60 * NS_PER_S)
#define NS_PER_HOUR (3600 * NS_PER_S)

/* ---- schema: which keys exist where (validation and --set share it) ---- */

enum shape { SH_VALUE, SH_OBJECT, SH_ARRAY };

struct objdef;
struct field {
    const char *name;
    enum shape shape;
    const struct objdef *def; /* the object, or an array's element object; NULL: values */
};

struct objdef {
    const struct field *fields;
    size_t nfields;
};

#define OBJDEF(var, arr) static const struct objdef var = {arr, sizeof(arr) / sizeof(arr[0])}

static const struct field range_fields[] = {{"offset"}, {"size"}};
OBJDEF(range_def, range_fields);
static const struct field target_fields[] = {{"path"}, {"size"}, {"range", SH_OBJECT, &range_def}};
OBJDEF(target_def, target_fields);
static const struct field rate_fields[] = {{"iops"}, {"mibps"}, {"arrival"}};
OBJDEF(rate_def, rate_fields);
static const struct field data_fields[] = {{"dedupe"}, {"compress"}, {"dedupe_unit"}};
OBJDEF(data_def, data_fields);
static const struct field worker_fields[] = {{"name"},
                                             {"specs", SH_ARRAY, NULL},
                                             {"nodes", SH_ARRAY, NULL},
                                             {"count"},
                                             {"engine"},
                                             {"queue_depth"},
                                             {"targets", SH_ARRAY, &target_def},
                                             {"pattern"},
                                             {"seed"},
                                             {"offset_increment"},
                                             {"hipri"},
                                             {"rate", SH_OBJECT, &rate_def},
                                             {"data", SH_OBJECT, &data_def},
                                             {"verify"},
                                             {"verify_mode"},
                                             {"verify_stop"}};
OBJDEF(worker_def, worker_fields);
static const struct field line_fields[] = {{"size"},  {"share"}, {"read"},  {"random"},
                                           {"align"}, {"delay"}, {"burst"}, {"distribution"}};
OBJDEF(line_def, line_fields);
static const struct field spec_fields[] = {
    {"name"}, {"lines", SH_ARRAY, &line_def}, {"duration"}, {"ramp"}, {"io_limit"}};
OBJDEF(spec_def, spec_fields);
static const struct field run_fields[] = {
    {"ramp"},    {"duration"},          {"interval"},
    {"cleanup"}, {"target_histograms"}, {"interval_histograms"}};
OBJDEF(run_def, run_fields);
static const struct field cycle_param_fields[] = {{"from"}, {"to"}, {"step"}};
OBJDEF(cycle_param_def, cycle_param_fields);
static const struct field find_max_fields[] = {{"p99"}, {"p999"}, {"avg"}};
OBJDEF(find_max_def, find_max_fields);
static const struct field rate_cycle_fields[] = {{"curve", SH_ARRAY, NULL},
                                                 {"find_max", SH_OBJECT, &find_max_def}};
OBJDEF(rate_cycle_def, rate_cycle_fields);
static const struct field cycle_fields[] = {{"rate", SH_OBJECT, &rate_cycle_def},
                                            {"queue_depth", SH_OBJECT, &cycle_param_def},
                                            {"workers", SH_OBJECT, &cycle_param_def},
                                            {"targets", SH_OBJECT, &cycle_param_def},
                                            {"size", SH_ARRAY, NULL},
                                            {"read", SH_ARRAY, NULL},
                                            {"random", SH_ARRAY, NULL}};
OBJDEF(cycle_def, cycle_fields);
static const struct field root_fields[] = {{"name"},
                                           {"run", SH_OBJECT, &run_def},
                                           {"specs", SH_ARRAY, &spec_def},
                                           {"workers", SH_ARRAY, &worker_def},
                                           {"cycle", SH_OBJECT, &cycle_def},
                                           {"notes", SH_ARRAY, NULL}};
OBJDEF(root_def, root_fields);

static int spec_axis_of(const char *key);

/* The facts of a group's engine (common/engine_facts.h); the name was
 * checked when the group was read, so never NULL after that. */
static const struct iof_engine_facts *engine_facts(const char *name)
{
    const struct iof_engine_facts *f = iof_engine_facts_find(name);
    return f ? f : &iof_engine_facts[IOF_ENGINE_NULL];
}

/* Engines that open targets with O_DIRECT (sizes must be 512-byte multiples). */
static bool engine_direct(const char *name)
{
    return engine_facts(name)->direct;
}
static const char *const pattern_names[] = {"repeat", "pseudo", "random"};
static const char *const arrival_names[] = {"uniform", "poisson"};
_Static_assert(IOF_PATTERN_REPEAT == 0 && IOF_PATTERN_PSEUDO == 1 && IOF_PATTERN_RANDOM == 2,
               "pattern_names follows enum iof_pattern");

static const struct field *find_field(const struct objdef *def, const char *name)
{
    for (size_t i = 0; i < def->nfields; i++)
        if (strcmp(def->fields[i].name, name) == 0)
            return &def->fields[i];
    return NULL;
}

/* ---- message helpers ---- */

/* Copies s for a message, escaped as for a terminal (common/text.h), cut
 * to fit with "...". */
static char *sanitize(char *buf, size_t cap, const char *s)
{
    if (cap < 4 || iof_text_escaped_len(s) < cap) {
        iof_text_escape(buf, cap, s);
        return buf;
    }
    memcpy(buf + iof_text_escape(buf, cap - 3, s), "...", 4);
    return buf;
}

/* 'text', sanitized, for a user string inside a message. */
static char *quote(char *buf, size_t cap, const char *s)
{
    char tmp[80];

    snprintf(buf, cap, "'%s'", sanitize(tmp, sizeof(tmp), s));
    return buf;
}

static const char *jtype(const cJSON *it)
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
static const char *got(char *buf, size_t cap, const cJSON *it)
{
    if (cJSON_IsNumber(it))
        snprintf(buf, cap, "%.15g", it->valuedouble);
    else if (cJSON_IsString(it))
        quote(buf, cap, it->valuestring);
    else
        snprintf(buf, cap, "%s", jtype(it));
    return buf;
}

void proto_plan_format_size(uint64_t bytes, char *buf, size_t cap)
{
    static const char units[] = "tgmk";

    if (!cap)
        return;
    for (int i = 0; i < 4; i++) {
        uint64_t u = 1ull << (10 * (4 - i));
        if (bytes && bytes % u == 0) {
            snprintf(buf, cap, "%" PRIu64 "%c", bytes / u, units[i]);
            return;
        }
    }
    snprintf(buf, cap, "%" PRIu64, bytes);
}

void proto_plan_format_duration(uint64_t ns, char *buf, size_t cap)
{
    if (!cap)
        return;
    if (ns == 0)
        snprintf(buf, cap, "0s");
    else if (ns % NS_PER_HOUR == 0)
        snprintf(buf, cap, "%" PRIu64 "h", ns / NS_PER_HOUR);
    else if (ns % NS_PER_MIN == 0)
        snprintf(buf, cap, "%" PRIu64 "m", ns / NS_PER_MIN);
    else if (ns % NS_PER_S == 0 && ns < NS_PER_MIN)
        snprintf(buf, cap, "%" PRIu64 "s", ns / NS_PER_S);
    else if (ns % NS_PER_S == 0) {
        uint64_t s = ns / NS_PER_S, h = s / 3600, m = s / 60 % 60;
        if (h)
            snprintf(buf, cap, "%" PRIu64 "h%" PRIu64 "m%" PRIu64 "s", h, m, s % 60);
        else
            snprintf(buf, cap, "%" PRIu64 "m%" PRIu64 "s", m, s % 60);
    } else if (ns % NS_PER_MS == 0)
        snprintf(buf, cap, "%" PRIu64 "ms", ns / NS_PER_MS);
    else
        snprintf(buf, cap, "%" PRIu64 "ns", ns);
}

/* ---- unit parsing ---- */

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static char lower(char ch)
{
    return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Leading decimal digits of s into *v; *end after them. -EINVAL with *why
 * for a missing number, -ERANGE when it does not fit 64 bits. */
static int parse_digits(const char *s, uint64_t *v, const char **end, const char **why)
{
    uint64_t x = 0;

    if (*s == '\0') {
        *why = "empty";
        return -EINVAL;
    }
    if (*s == '-') {
        *why = "must not be negative";
        return -EINVAL;
    }
    if (!is_digit(*s)) {
        *why = "must start with a digit";
        return -EINVAL;
    }
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10) {
            *why = "too large";
            return -ERANGE;
        }
        x = x * 10 + d;
    }
    if (*s == '.' || *s == ',') {
        *why = "fractions are not allowed; use a smaller unit";
        return -EINVAL;
    }
    *v = x;
    *end = s;
    return 0;
}

/* Sizes take fio's and Iometer's unit spellings, all powers of 1024 (iofleet
 * has no kb_base): k, kb, kib, in any case ("4k", "4K", "4kb", "4KiB"); the
 * same for m, g and t; b or nothing is bytes. */
static int parse_size(const char *s, uint64_t *out, const char **why)
{
    static const char units[] = "kmgt";
    const char *end, *u;
    uint64_t v, mult = 1;
    int rc = parse_digits(s, &v, &end, why);

    if (rc)
        return rc;
    if (*end && (u = strchr(units, lower(*end))) != NULL) {
        const char *rest = end + 1;
        mult = 1ull << (10 * (u - units + 1));
        if (lower(*rest) == 'i')
            rest++;
        if (lower(*rest) == 'b')
            rest++;
        if (*rest)
            end = NULL;
    } else if (lower(*end) == 'b' && !end[1]) {
        mult = 1;
    } else if (*end) {
        end = NULL;
    }
    if (!end) {
        *why = "unknown unit (use k, m, g or t, also written kb or KiB: powers of 1024)";
        return -EINVAL;
    }
    if (v > UINT64_MAX / mult) {
        *why = "too large";
        return -ERANGE;
    }
    *out = v * mult;
    return 0;
}

static int parse_duration(const char *s, uint64_t *out, const char **why)
{
    const char *end;
    uint64_t v, mult;
    int rc = parse_digits(s, &v, &end, why);

    if (rc)
        return rc;
    if (*end == '\0') {
        *why = "missing unit (ms, s, m or h)";
        return -EINVAL;
    }
    if (lower(end[0]) == 'm' && lower(end[1]) == 's' && !end[2])
        mult = IOF_NS_PER_MS;
    else if (lower(end[0]) == 's' && !end[1])
        mult = IOF_NS_PER_S;
    else if (lower(end[0]) == 'm' && !end[1])
        mult = NS_PER_MIN;
    else if (lower(end[0]) == 'h' && !end[1])
        mult = NS_PER_HOUR;
    else {
        *why = "unknown unit (use ms, s, m or h)";
        return -EINVAL;
    }
    if (v > UINT64_MAX / mult) {
        *why = "too large";
        return -ERANGE;
    }
    *out = v * mult;
    return 0;
}

int proto_plan_parse_size(const char *s, uint64_t *out)
{
    const char *why;

    return parse_size(s, out, &why);
}

int proto_plan_parse_duration(const char *s, uint64_t *out_ns)
{
    const char *why;

    return parse_duration(s, out_ns, &why);
}

/* ---- validation context ---- */

struct pctx {
    const char *name; /* file name for messages */
    struct iof_diag *diag;
    char path[256]; /* JSON path of the member being checked */
    size_t plen;
};

static size_t path_add(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static size_t path_add(struct pctx *c, const char *fmt, ...)
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

static size_t path_key(struct pctx *c, const char *key)
{
    return path_add(c, "%s%s", c->plen ? "." : "", key);
}

static size_t path_index(struct pctx *c, size_t i)
{
    return path_add(c, "[%zu]", i);
}

static void path_pop(struct pctx *c, size_t old)
{
    c->plen = old;
    c->path[old] = '\0';
}

static void fail_msg(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail_msg(struct pctx *c, const char *fmt, ...)
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

/* Records why the plan is invalid and evaluates to IOF_EPLAN. A macro, so that the compiler
 * sees the non-zero result at each call site: a parser's out-parameters are set only when it
 * returns 0, and gcc -O3 (Release) cannot otherwise prove the caller never reads them after
 * `if ((rc = parse_x(c, ..., &out))) return rc;` (it warned -Wmaybe-uninitialized). */
#define fail(c, ...) (fail_msg((c), __VA_ARGS__), IOF_EPLAN)

static int nomem(struct pctx *c)
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
static void unknown_key_msg(char *buf, size_t cap, const struct objdef *def, const char *key)
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
    quote(q, sizeof(q), key);
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
static int check_keys(struct pctx *c, const cJSON *obj, const struct objdef *def)
{
    char msg[300], q[96];

    for (const cJSON *it = obj->child; it; it = it->next) {
        const char *k = it->string ? it->string : "";
        if (!find_field(def, k)) {
            unknown_key_msg(msg, sizeof(msg), def, k);
            return fail(c, "%s", msg);
        }
        for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
            if (strcmp(prev->string, k) == 0)
                return fail(c, "duplicate key %s", quote(q, sizeof(q), k));
    }
    return 0;
}

static const cJSON *member(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* "must be 1..64m", "must be at least 100ms", "must be at most 1h". */
static int range_fail(struct pctx *c, const char *lo, const char *hi, bool has_lo, bool has_hi,
                      const cJSON *it)
{
    char g[96];

    got(g, sizeof(g), it);
    if (has_lo && has_hi)
        return fail(c, "must be %s..%s, got %s", lo, hi, g);
    if (has_lo)
        return fail(c, "must be at least %s, got %s", lo, g);
    return fail(c, "must be at most %s, got %s", hi, g);
}

/* A JSON number holding an integer; its range is the caller's. */
static int json_integer(struct pctx *c, const cJSON *it, const char *what, double *d)
{
    char g[96];

    if (!cJSON_IsNumber(it))
        return fail(c, "must be %s, got %s", what, jtype(it));
    *d = it->valuedouble;
    if (!isfinite(*d) || *d != trunc(*d))
        return fail(c, "must be %s, got %s", what, got(g, sizeof(g), it));
    return 0;
}

static int json_uint(struct pctx *c, const cJSON *it, uint64_t min, uint64_t max, uint64_t *out)
{
    char lo[32], hi[32];
    double d;
    int rc = json_integer(c, it, "an integer", &d);

    if (rc)
        return rc;
    if (d < (double)min || d > (double)max || d > JSON_MAX_EXACT) {
        snprintf(lo, sizeof(lo), "%" PRIu64, min);
        snprintf(hi, sizeof(hi), "%" PRIu64, max);
        return range_fail(c, lo, hi, true, true, it);
    }
    *out = (uint64_t)d;
    return 0;
}

/* Integer member `key` in min..max; def == NULL means required. */
static int int_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                     uint64_t min, uint64_t max, uint64_t *out)
{
    const cJSON *it = member(obj, key);
    size_t o = path_key(c, key);

    if (!it) {
        if (!def)
            return fail(c, "required but missing");
        *out = *def;
    } else {
        int rc = json_uint(c, it, min, max, out);
        if (rc)
            return rc;
    }
    path_pop(c, o);
    return 0;
}

static int json_size(struct pctx *c, const cJSON *it, uint64_t *out)
{
    char g[96];
    const char *why;

    if (cJSON_IsNumber(it)) {
        double d;
        int rc = json_integer(c, it, "a whole number of bytes", &d);
        if (rc)
            return rc;
        if (d < 0)
            return fail(c, "must not be negative, got %s", got(g, sizeof(g), it));
        if (d > JSON_MAX_EXACT)
            return fail(c, "too large for a JSON number, got %s; write it as a string like \"16t\"",
                        got(g, sizeof(g), it));
        *out = (uint64_t)d;
        return 0;
    }
    if (!cJSON_IsString(it))
        return fail(c, "must be a size (bytes, or a string like \"4k\"), got %s", jtype(it));
    if (parse_size(it->valuestring, out, &why))
        return fail(c, "invalid size %s: %s", got(g, sizeof(g), it), why);
    return 0;
}

/* Size member `key` in min..max (max UINT64_MAX: no upper bound). */
static int size_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                      uint64_t min, uint64_t max, uint64_t *out)
{
    const cJSON *it = member(obj, key);
    size_t o = path_key(c, key);
    char lo[32], hi[32];

    if (!it) {
        if (!def)
            return fail(c, "required but missing");
        *out = *def;
    } else {
        int rc = json_size(c, it, out);
        if (rc)
            return rc;
        if (*out < min || *out > max) {
            proto_plan_format_size(min, lo, sizeof(lo));
            proto_plan_format_size(max, hi, sizeof(hi));
            return range_fail(c, lo, hi, true, max != UINT64_MAX, it);
        }
    }
    path_pop(c, o);
    return 0;
}

static int json_duration(struct pctx *c, const cJSON *it, uint64_t *out)
{
    char g[96];
    const char *why;

    if (cJSON_IsNumber(it)) {
        double d;
        int rc = json_integer(c, it, "a whole number of seconds", &d);
        if (rc)
            return rc;
        if (d < 0)
            return fail(c, "must not be negative, got %s", got(g, sizeof(g), it));
        if (d > (double)(UINT64_MAX / IOF_NS_PER_S))
            return fail(c, "too large, got %s", got(g, sizeof(g), it));
        *out = (uint64_t)d * IOF_NS_PER_S;
        return 0;
    }
    if (!cJSON_IsString(it))
        return fail(c, "must be a duration (a string like \"10s\", or seconds), got %s", jtype(it));
    if (parse_duration(it->valuestring, out, &why)) {
        const char *v = it->valuestring;
        /* A bare number: seconds is what fio and most people mean. */
        if (*v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 24)
            return fail(c, "invalid duration %s: %s; did you mean \"%ss\"?", got(g, sizeof(g), it),
                        why, v);
        return fail(c, "invalid duration %s: %s", got(g, sizeof(g), it), why);
    }
    return 0;
}

/* Duration member `key` at most max (UINT64_MAX: unbounded). */
static int dur_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                     uint64_t max, uint64_t *out)
{
    const cJSON *it = member(obj, key);
    size_t o = path_key(c, key);
    char hi[32];

    if (!it) {
        if (!def)
            return fail(c, "required but missing");
        *out = *def;
    } else {
        int rc = json_duration(c, it, out);
        if (rc)
            return rc;
        if (*out > max) {
            proto_plan_format_duration(max, hi, sizeof(hi));
            return range_fail(c, NULL, hi, false, true, it);
        }
    }
    path_pop(c, o);
    return 0;
}

/* String value: non-empty, at most maxlen bytes. *out borrows from the tree. */
static int json_string(struct pctx *c, const cJSON *it, size_t maxlen, const char **out)
{
    struct iof_text_fault tf;
    size_t n;

    if (!cJSON_IsString(it))
        return fail(c, "must be a string, got %s", jtype(it));
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
                    quote(q, sizeof(q), it->valuestring));
    }
    *out = it->valuestring;
    return 0;
}

static int str_field(struct pctx *c, const cJSON *obj, const char *key, const char *def,
                     size_t maxlen, const char **out)
{
    const cJSON *it = member(obj, key);
    size_t o = path_key(c, key);

    if (!it) {
        if (!def)
            return fail(c, "required but missing");
        *out = def;
    } else {
        int rc = json_string(c, it, maxlen, out);
        if (rc)
            return rc;
    }
    path_pop(c, o);
    return 0;
}

static int enum_field(struct pctx *c, const cJSON *obj, const char *key, size_t def,
                      const char *const *names, size_t n, size_t *out)
{
    const cJSON *it = member(obj, key);
    size_t o = path_key(c, key);
    char list[128], g[96];
    size_t l = 0;

    if (!it) {
        *out = def;
        path_pop(c, o);
        return 0;
    }
    if (!cJSON_IsString(it))
        return fail(c, "must be a string, got %s", jtype(it));
    for (size_t i = 0; i < n; i++) {
        if (strcmp(it->valuestring, names[i]) == 0) {
            *out = i;
            path_pop(c, o);
            return 0;
        }
    }
    list[0] = '\0';
    for (size_t i = 0; i < n && l < sizeof(list); i++)
        l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", names[i]);
    return fail(c, "must be one of %s, got %s", list, got(g, sizeof(g), it));
}

/* Boolean member `key` (true or false), def when absent. */
static int bool_field(struct pctx *c, const cJSON *obj, const char *key, bool def, bool *out)
{
    const cJSON *it = member(obj, key);
    size_t o = path_key(c, key);

    if (!it) {
        *out = def;
    } else {
        if (!cJSON_IsBool(it))
            return fail(c, "must be true or false, got %s", jtype(it));
        *out = cJSON_IsTrue(it);
    }
    path_pop(c, o);
    return 0;
}

static int check_object(struct pctx *c, const cJSON *it)
{
    if (!cJSON_IsObject(it))
        return fail(c, "must be an object, got %s", jtype(it));
    return 0;
}

/* An array of min..max entries; *n its length. */
static int check_array(struct pctx *c, const cJSON *it, size_t min, size_t max, size_t *n)
{
    size_t k = 0;

    if (!cJSON_IsArray(it))
        return fail(c, "must be an array, got %s", jtype(it));
    for (const cJSON *e = it->child; e; e = e->next)
        k++;
    if (k < min)
        return fail(c, "must not be empty");
    if (k > max)
        return fail(c, "has %zu entries, the maximum is %zu", k, max);
    *n = k;
    return 0;
}

/* ---- the plan, member by member ---- */

static const uint64_t ZERO = 0, ONE = 1, HUNDRED = 100, ONE_SECOND = IOF_NS_PER_S;

static int parse_run(struct pctx *c, const cJSON *root, struct iof_run_cfg *r)
{
    const cJSON *run = member(root, "run");
    size_t o = path_key(c, "run"), o2;
    char d[32], g[96];
    int rc;

    if (!run)
        return fail(c, "required but missing");
    if ((rc = check_object(c, run)) || (rc = check_keys(c, run, &run_def)))
        return rc;
    if ((rc = dur_field(c, run, "ramp", &ZERO, PROTO_PLAN_MAX_RAMP_NS, &r->ramp_ns)) ||
        (rc = dur_field(c, run, "duration", &ZERO, PROTO_PLAN_MAX_DURATION_NS, &r->duration_ns)) ||
        (rc = dur_field(c, run, "interval", &ONE_SECOND, UINT64_MAX, &r->interval_ns)) ||
        (rc = bool_field(c, run, "cleanup", false, &r->cleanup)))
        return rc;
    if (member(run, "target_histograms")) {
        bool keep;
        if ((rc = bool_field(c, run, "target_histograms", false, &keep)))
            return rc;
        r->target_hists = keep ? IOF_TARGET_HISTS_ALWAYS : IOF_TARGET_HISTS_NEVER;
    }
    if (member(run, "interval_histograms")) {
        bool keep;
        if ((rc = bool_field(c, run, "interval_histograms", false, &keep)))
            return rc;
        r->interval_hists = keep ? IOF_TARGET_HISTS_ALWAYS : IOF_TARGET_HISTS_NEVER;
    }
    /* run.duration may be left out when every spec has a duration or an
     * io_limit of its own (run_check); given, it must be positive. */
    if (member(run, "duration") && r->duration_ns == 0) {
        path_key(c, "duration");
        return fail(c, "must be greater than 0");
    }
    if (r->interval_ns < PROTO_PLAN_MIN_INTERVAL_NS) {
        path_key(c, "interval");
        return fail(c, "must be at least 100ms, got %s",
                    got(g, sizeof(g), member(run, "interval")));
    }
    if (r->duration_ns && r->interval_ns > r->duration_ns) {
        o2 = path_key(c, "interval");
        proto_plan_format_duration(r->duration_ns, d, sizeof(d));
        if (member(run, "interval"))
            return fail(c, "must not exceed run.duration (%s), got %s", d,
                        got(g, sizeof(g), member(run, "interval")));
        path_pop(c, o2);
        path_key(c, "duration");
        return fail(c, "must be at least run.interval (1s when not given), got %s",
                    got(g, sizeof(g), member(run, "duration")));
    }
    path_pop(c, o);
    return 0;
}

static int parse_line(struct pctx *c, const cJSON *jl, struct iof_line *l, size_t nlines)
{
    const char *dist;
    uint64_t v;
    char g[96], why[160];
    int rc;

    if ((rc = check_object(c, jl)) || (rc = check_keys(c, jl, &line_def)))
        return rc;
    if ((rc = size_field(c, jl, "size", NULL, 1, PROTO_PLAN_MAX_IO_SIZE, &l->size)))
        return rc;
    if (nlines > 1 && !member(jl, "share")) {
        path_key(c, "share");
        return fail(c, "required when a spec has more than one line");
    }
    if ((rc = int_field(c, jl, "share", &HUNDRED, 0, 100, &v)))
        return rc;
    l->share = (uint32_t)v;
    if ((rc = int_field(c, jl, "read", &HUNDRED, 0, 100, &v)))
        return rc;
    l->read_pct = (uint32_t)v;
    if ((rc = int_field(c, jl, "random", &HUNDRED, 0, 100, &v)))
        return rc;
    l->random_pct = (uint32_t)v;
    if ((rc = size_field(c, jl, "align", &ZERO, 0, UINT64_MAX, &l->align)))
        return rc;
    if (l->align % DIRECT_IO_ALIGN) {
        path_key(c, "align");
        return fail(
            c, "must be 0 (automatic: aligned to the transfer size) or a multiple of 512, got %s",
            got(g, sizeof(g), member(jl, "align")));
    }
    if ((rc = dur_field(c, jl, "delay", &ZERO, PROTO_PLAN_MAX_DELAY_NS, &l->delay_ns)))
        return rc;
    if ((rc = int_field(c, jl, "burst", &ONE, 1, PROTO_PLAN_MAX_BURST, &v)))
        return rc;
    l->burst = (uint32_t)v;
    if ((rc = str_field(c, jl, "distribution", "uniform", IOF_DIST_LABEL_MAX, &dist)))
        return rc;
    if (iof_dist_parse(dist, &l->dist, why, sizeof(why))) {
        path_key(c, "distribution");
        return fail(c, "%s, got %s", why, got(g, sizeof(g), member(jl, "distribution")));
    }
    return 0;
}

static int parse_spec(struct pctx *c, const cJSON *js, struct iof_spec *s)
{
    const cJSON *lines, *jl;
    const char *name;
    uint64_t sum = 0;
    size_t n, k = 0, o;
    int rc;

    if ((rc = check_object(c, js)) || (rc = check_keys(c, js, &spec_def)))
        return rc;
    if ((rc = str_field(c, js, "name", NULL, IOF_NAME_MAX - 1, &name)))
        return rc;
    snprintf(s->name, sizeof(s->name), "%s", name);
    lines = member(js, "lines");
    o = path_key(c, "lines");
    if (!lines)
        return fail(c, "required but missing");
    if ((rc = check_array(c, lines, 1, PROTO_PLAN_MAX_LINES, &n)))
        return rc;
    s->lines = calloc(n, sizeof(*s->lines));
    if (!s->lines)
        return nomem(c);
    s->nlines = n;
    cJSON_ArrayForEach(jl, lines)
    {
        size_t oi = path_index(c, k);
        if ((rc = parse_line(c, jl, &s->lines[k], n)))
            return rc;
        sum += s->lines[k].share;
        path_pop(c, oi);
        k++;
    }
    if (sum != 100)
        return fail(c, "shares must add up to 100, got %" PRIu64, sum);
    path_pop(c, o);
    s->has_duration = member(js, "duration") != NULL;
    s->has_ramp = member(js, "ramp") != NULL;
    if ((rc = dur_field(c, js, "duration", &ZERO, PROTO_PLAN_MAX_DURATION_NS, &s->duration_ns)) ||
        (rc = dur_field(c, js, "ramp", &ZERO, PROTO_PLAN_MAX_RAMP_NS, &s->ramp_ns)) ||
        (rc = size_field(c, js, "io_limit", &ZERO, 0, PROTO_PLAN_MAX_IO_LIMIT, &s->io_limit)))
        return rc;
    if (s->has_duration && s->duration_ns == 0) {
        path_key(c, "duration");
        return fail(c, "must be greater than 0");
    }
    if (member(js, "io_limit") && s->io_limit == 0) {
        path_key(c, "io_limit");
        return fail(c, "must be greater than 0 (leave it out for no limit)");
    }
    return 0;
}

/* Every test needs an end: a spec without a duration of its own takes
 * run.duration, and one without either needs an io_limit (it then stops
 * at the latest after IOF_IO_LIMIT_MAX_DURATION_NS). run.interval must fit
 * every spec's window. */
static int run_check(struct pctx *c, const cJSON *root, const struct iof_plan *p)
{
    char d[32], g[96];

    for (size_t i = 0; i < p->nspecs; i++) {
        const struct iof_spec *s = &p->specs[i];
        uint64_t dur = s->has_duration ? s->duration_ns : p->run.duration_ns;
        if (!dur && !s->io_limit) {
            path_key(c, "run");
            path_key(c, "duration");
            return fail(c,
                        "required but missing (specs[%zu] has neither a duration nor an "
                        "io_limit of its own)",
                        i);
        }
        if (!dur)
            dur = IOF_IO_LIMIT_MAX_DURATION_NS;
        if (p->run.interval_ns > dur) {
            const cJSON *js = cJSON_GetArrayItem(member(root, "specs"), (int)i);
            path_key(c, "specs");
            path_index(c, i);
            path_key(c, "duration");
            proto_plan_format_duration(p->run.interval_ns, d, sizeof(d));
            return fail(c, "must be at least run.interval (%s), got %s", d,
                        got(g, sizeof(g), member(js, "duration")));
        }
    }
    return 0;
}

static int parse_specs(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *arr = member(root, "specs"), *js;
    size_t o = path_key(c, "specs"), n, i = 0;
    char q[96];
    int rc;

    if (!arr)
        return fail(c, "required but missing");
    if ((rc = check_array(c, arr, 1, PROTO_PLAN_MAX_SPECS, &n)))
        return rc;
    p->specs = calloc(n, sizeof(*p->specs));
    if (!p->specs)
        return nomem(c);
    p->nspecs = n;
    cJSON_ArrayForEach(js, arr)
    {
        size_t oi = path_index(c, i);
        if ((rc = parse_spec(c, js, &p->specs[i])))
            return rc;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p->specs[j].name, p->specs[i].name) == 0) {
                path_key(c, "name");
                return fail(c, "duplicate spec name %s (also specs[%zu])",
                            quote(q, sizeof(q), p->specs[i].name), j);
            }
        }
        path_pop(c, oi);
        i++;
    }
    path_pop(c, o);
    return 0;
}

struct named {
    const char *s;
    size_t i;
};

static int named_cmp(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int r = strcmp(x->s, y->s);

    if (r)
        return r;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int parse_nodes(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *arr = member(jw, "nodes"), *e;
    size_t o = path_key(c, "nodes"), n, i = 0;
    struct named *sorted;
    char q[96];
    int rc;

    if (!arr) {
        w->nodes = calloc(1, sizeof(*w->nodes));
        if (!w->nodes)
            return nomem(c);
        w->nnodes = 1;
        w->nodes[0] = strdup("*");
        if (!w->nodes[0])
            return nomem(c);
        path_pop(c, o);
        return 0;
    }
    if ((rc = check_array(c, arr, 1, PROTO_PLAN_MAX_NODES, &n)))
        return rc;
    w->nodes = calloc(n, sizeof(*w->nodes));
    if (!w->nodes)
        return nomem(c);
    w->nnodes = n;
    cJSON_ArrayForEach(e, arr)
    {
        const char *s;
        struct iof_diag d;
        size_t oi = path_index(c, i);
        if ((rc = json_string(c, e, IOF_NAME_MAX - 1, &s)))
            return rc;
        /* The one rule of node names (proto/name.h); "*" is every agent. */
        if (strcmp(s, "*") && proto_node_name_check("node name", s, &d))
            return fail(c, "%s", d.msg);
        w->nodes[i] = strdup(s);
        if (!w->nodes[i])
            return nomem(c);
        path_pop(c, oi);
        i++;
    }
    /* Duplicates: sort (name, index) pairs and compare neighbours. */
    sorted = malloc(n * sizeof(*sorted));
    if (!sorted)
        return nomem(c);
    for (i = 0; i < n; i++)
        sorted[i] = (struct named){w->nodes[i], i};
    qsort(sorted, n, sizeof(*sorted), named_cmp);
    for (i = 1; i < n; i++) {
        if (strcmp(sorted[i - 1].s, sorted[i].s) == 0) {
            size_t first = sorted[i - 1].i, dup = sorted[i].i;
            free(sorted);
            path_index(c, dup);
            return fail(c, "duplicate node %s (also nodes[%zu])",
                        quote(q, sizeof(q), w->nodes[dup]), first);
        }
    }
    free(sorted);
    path_pop(c, o);
    return 0;
}

/* True when the path has a ".." component. */
static bool has_dotdot(const char *p)
{
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return true;
        s += n;
        while (*s == '/')
            s++;
    }
    return false;
}

/* "N%": a whole percentage 0..100 in *pct (true); anything else false. */
static bool range_pct_string(const cJSON *it, uint64_t *pct)
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

/* range.offset / range.size: a size, or "N%" of the target (offset 0%..99%,
 * size 1%..100%). */
static int range_member(struct pctx *c, const cJSON *r, const char *key, uint64_t min_pct,
                        uint64_t max_pct, uint64_t *v, bool *pct)
{
    const cJSON *it = member(r, key);
    char g[96];
    size_t o;

    if (!it || !cJSON_IsString(it) || !strchr(it->valuestring, '%'))
        return size_field(c, r, key, &ZERO, 0, UINT64_MAX, v);
    o = path_key(c, key);
    if (!range_pct_string(it, v) || *v < min_pct || *v > max_pct)
        return fail(c,
                    "must be a whole percentage %" PRIu64 "%%..%" PRIu64 "%% of the target, got %s",
                    min_pct, max_pct, got(g, sizeof(g), it));
    *pct = true;
    path_pop(c, o);
    return 0;
}

static int parse_range(struct pctx *c, const cJSON *jt, struct iof_target_cfg *t)
{
    const cJSON *r = member(jt, "range");
    size_t o = path_key(c, "range");
    char a[32], b[32], s[32], g[96];
    uint64_t start, end;
    int rc;

    if (!r) {
        path_pop(c, o);
        return 0;
    }
    if ((rc = check_object(c, r)) || (rc = check_keys(c, r, &range_def)))
        return rc;
    if ((rc = range_member(c, r, "offset", 0, 99, &t->range_offset, &t->range_offset_pct)) ||
        (rc = range_member(c, r, "size", 1, 100, &t->range_size, &t->range_size_pct)))
        return rc;
    if (!t->range_offset_pct && t->range_offset % DIRECT_IO_ALIGN) {
        path_key(c, "offset");
        return fail(c, "must be a multiple of 512, got %s", got(g, sizeof(g), member(r, "offset")));
    }
    if (!t->range_size_pct && t->range_size % DIRECT_IO_ALIGN) {
        path_key(c, "size");
        return fail(c, "must be a multiple of 512, got %s", got(g, sizeof(g), member(r, "size")));
    }
    if (t->range_offset_pct || t->range_size_pct) {
        iof_target_range_label(t->range_offset, t->range_offset_pct, a, sizeof(a));
        iof_target_range_label(t->range_size, t->range_size_pct, b, sizeof(b));
        if (t->range_offset_pct && t->range_size_pct && t->range_offset + t->range_size > 100)
            return fail(c, "offset %s + size %s is more than 100%% of the target", a, b);
        if (!t->range_offset_pct)
            proto_plan_format_size(t->range_offset, a, sizeof(a));
        if (!t->range_size_pct)
            proto_plan_format_size(t->range_size, b, sizeof(b));
        proto_plan_format_size(t->size, s, sizeof(s));
        /* With a size the region is known now; otherwise the agent resolves
         * it against the file or device it opens. */
        if (t->size && iof_target_range(t, t->size, DIRECT_IO_ALIGN, &start, &end))
            return fail(c, "offset %s + size %s does not fit the target (size %s)", a, b, s);
        path_pop(c, o);
        return 0;
    }
    proto_plan_format_size(t->range_offset, a, sizeof(a));
    proto_plan_format_size(t->range_size, b, sizeof(b));
    proto_plan_format_size(t->size, s, sizeof(s));
    if (t->range_size > UINT64_MAX - t->range_offset)
        return fail(c, "offset %s + size %s overflows", a, b);
    if (t->size && t->range_offset >= t->size)
        return fail(c, "offset %s is not inside the target (size %s)", a, s);
    if (t->size && t->range_offset + t->range_size > t->size)
        return fail(c, "offset %s + size %s goes past the end of the target (size %s)", a, b, s);
    path_pop(c, o);
    return 0;
}

static int parse_target(struct pctx *c, const cJSON *jt, struct iof_target_cfg *t)
{
    const char *path;
    char g[96];
    int rc;

    if ((rc = check_object(c, jt)) || (rc = check_keys(c, jt, &target_def)))
        return rc;
    if ((rc = str_field(c, jt, "path", NULL, IOF_PATH_MAX - 1, &path)))
        return rc;
    snprintf(t->path, sizeof(t->path), "%s", path);
    /* The agent enforces its own limits; refusing ".." here keeps a plan
     * from even asking (a relative path must stay inside the workdir, an
     * absolute one is compared with the --allow list as written). */
    if (has_dotdot(path)) {
        path_key(c, "path");
        return fail(c, "must not contain a '..' component");
    }
    /* The agent's own files in its workdir (ledger, verify state): a target
     * of that name would overwrite them and orphan the test files. */
    if (iof_target_name_reserved(path)) {
        char q[96];
        path_key(c, "path");
        return fail(c,
                    "%s: names starting with '" IOF_RESERVED_PREFIX
                    "' are reserved for the agent's own files (its test-file ledger and verify "
                    "state)",
                    quote(q, sizeof(q), path));
    }
    /* `iofleet import` writes an Iometer target it could not map this way. */
    if (!strncmp(path, "iometer:", 8)) {
        char q[96];
        path_key(c, "path");
        return fail(c,
                    "%s is an Iometer target placeholder: map it with iofleet import --map "
                    "'NAME=PATH' or --set",
                    quote(q, sizeof(q), path));
    }
    if ((rc = size_field(c, jt, "size", &ZERO, 0, UINT64_MAX, &t->size)))
        return rc;
    if (t->size % TEST_FILE_ALIGN) {
        path_key(c, "size");
        return fail(c, "must be a multiple of 4096, got %s", got(g, sizeof(g), member(jt, "size")));
    }
    if (path[0] != '/' && t->size == 0) {
        path_key(c, "size");
        return fail(c, "a relative path is a test file to create: give it a size greater than 0");
    }
    return parse_range(c, jt, t);
}

/* ---- target path templates: "vmdk{0..9}.dat" -> vmdk0.dat .. vmdk9.dat ---- */

#define TEMPLATE_MAX_DIGITS 9

struct path_template {
    size_t at, len; /* where "{A..B}" sits in the path */
    uint64_t from, to;
    int width; /* zero-padded width (bash's {00..09}); 0: none */
};

/* Digits of s[0..n): false unless 1..TEMPLATE_MAX_DIGITS of them. */
static bool template_number(const char *s, size_t n, uint64_t *v)
{
    if (n == 0 || n > TEMPLATE_MAX_DIGITS)
        return false;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
        *v = *v * 10 + (uint64_t)(s[i] - '0');
    }
    return true;
}

enum template_why { TPL_OK, TPL_MANY, TPL_MALFORMED, TPL_DOWN, TPL_HUGE };

/* Finds the one "{A..B}" of a path without reporting: true when there is
 * one. A brace group holding ".." is a range and must be well-formed;
 * other braces are plain characters. *why says what is wrong with it. */
static bool template_scan(const char *path, struct path_template *pt, enum template_why *why)
{
    bool found = false;

    *why = TPL_OK;
    for (const char *b = strchr(path, '{'); b; b = strchr(b + 1, '{')) {
        const char *e = strchr(b + 1, '}'), *dots;
        size_t na, nb;
        if (!e)
            break;
        dots = strstr(b + 1, "..");
        if (!dots || dots > e)
            continue;
        if (found) {
            *why = TPL_MANY;
            return true;
        }
        found = true;
        pt->at = (size_t)(b - path);
        pt->len = (size_t)(e - b + 1);
        na = (size_t)(dots - b - 1);
        nb = (size_t)(e - dots - 2);
        if (!template_number(b + 1, na, &pt->from) || !template_number(dots + 2, nb, &pt->to))
            *why = TPL_MALFORMED;
        else if (pt->from > pt->to)
            *why = TPL_DOWN;
        else if (pt->to - pt->from + 1 > PROTO_PLAN_MAX_TARGETS)
            *why = TPL_HUGE;
        pt->width =
            (na > 1 && b[1] == '0') || (nb > 1 && dots[2] == '0') ? (int)(na > nb ? na : nb) : 0;
    }
    return found;
}

/* How many targets the path names (1 without a template, or when it is bad:
 * path_template_find() reports that). */
static size_t template_count(const char *path)
{
    struct path_template pt;
    enum template_why why;

    if (template_scan(path, &pt, &why) && why == TPL_OK)
        return (size_t)(pt.to - pt.from + 1);
    return 1;
}

/* The path's template in *pt and *found, or a plan error at targets[i].path. */
static int path_template_find(struct pctx *c, const char *path, struct path_template *pt,
                              bool *found)
{
    enum template_why why;
    char q[96], r[96], raw[96];

    *found = template_scan(path, pt, &why);
    if (!*found || why == TPL_OK)
        return 0;
    path_key(c, "path");
    snprintf(raw, sizeof(raw), "%.*s", (int)pt->len, path + pt->at);
    quote(r, sizeof(r), raw);
    switch (why) {
    case TPL_MANY:
        return fail(c, "may hold one {A..B} range, got more in %s", quote(q, sizeof(q), path));
    case TPL_DOWN:
        return fail(c, "range %s counts down: write {%" PRIu64 "..%" PRIu64 "}", r, pt->to,
                    pt->from);
    case TPL_HUGE:
        return fail(c, "range %s names %" PRIu64 " targets, the maximum is %u", r,
                    pt->to - pt->from + 1, PROTO_PLAN_MAX_TARGETS);
    default:
        return fail(c,
                    "range %s must be {A..B} with whole numbers of at most %d digits, as in "
                    "{0..9}",
                    r, TEMPLATE_MAX_DIGITS);
    }
}

/* Writes the n targets of template pt into out[0..n), copies of *t with the
 * range replaced by each number. */
static int path_template_expand(struct pctx *c, const struct iof_target_cfg *t,
                                const struct path_template *pt, struct iof_target_cfg *out)
{
    for (uint64_t v = pt->from; v <= pt->to; v++) {
        struct iof_target_cfg *o = &out[v - pt->from];
        int n;
        *o = *t;
        n = snprintf(o->path, sizeof(o->path), "%.*s%0*" PRIu64 "%s", (int)pt->at, t->path,
                     pt->width, v, t->path + pt->at + pt->len);
        if (n < 0 || (size_t)n >= sizeof(o->path)) {
            path_key(c, "path");
            return fail(c, "is too long once its range is expanded (the maximum is %d bytes)",
                        IOF_PATH_MAX - 1);
        }
    }
    return 0;
}

/* "offset_increment": a size (a multiple of 512) or "N%" of the range. */
static int parse_offset_increment(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *it = member(jw, "offset_increment");
    size_t o = path_key(c, "offset_increment");
    char g[96];
    int rc;

    if (!it) {
        path_pop(c, o);
        return 0;
    }
    if (cJSON_IsString(it) && it->valuestring[0] &&
        it->valuestring[strlen(it->valuestring) - 1] == '%') {
        const char *s = it->valuestring;
        uint64_t v = 0;
        size_t n = strlen(s) - 1;
        if (n == 0 || n > 3)
            return fail(c, "must be a whole percentage 0%%..100%%, got %s", got(g, sizeof(g), it));
        for (size_t i = 0; i < n; i++) {
            if (s[i] < '0' || s[i] > '9')
                return fail(c, "must be a whole percentage 0%%..100%%, got %s",
                            got(g, sizeof(g), it));
            v = v * 10 + (uint64_t)(s[i] - '0');
        }
        if (v > 100)
            return fail(c, "must be a whole percentage 0%%..100%%, got %s", got(g, sizeof(g), it));
        w->offset_increment = v;
        w->offset_increment_pct = true;
        path_pop(c, o);
        return 0;
    }
    if (!cJSON_IsString(it) && !cJSON_IsNumber(it))
        return fail(c, "must be a size (\"64m\") or a percentage of the range (\"25%%\"), got %s",
                    jtype(it));
    if ((rc = json_size(c, it, &w->offset_increment)))
        return rc;
    if (w->offset_increment % DIRECT_IO_ALIGN)
        return fail(c, "must be a multiple of 512, got %s", got(g, sizeof(g), it));
    path_pop(c, o);
    return 0;
}

/* A whole percentage, "N%" or the number N, 0..100. */
static int pct_field(struct pctx *c, const cJSON *obj, const char *key, uint32_t *out)
{
    const cJSON *it = member(obj, key);
    size_t o = path_key(c, key);
    uint64_t v = 0;
    char g[96];

    if (!it) {
        *out = 0;
        path_pop(c, o);
        return 0;
    }
    if (cJSON_IsString(it)) {
        if (!range_pct_string(it, &v))
            return fail(c, "must be a whole percentage 0%%..100%%, got %s", got(g, sizeof(g), it));
    } else {
        int rc = json_uint(c, it, 0, 100, &v);
        if (rc)
            return rc;
    }
    *out = (uint32_t)v;
    path_pop(c, o);
    return 0;
}

/* "data": {"dedupe": "50%", "compress": "60%", "dedupe_unit": "4k"}. */
static int parse_data(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *jd = member(jw, "data");
    size_t o = path_key(c, "data");
    const uint64_t def_unit = IOF_DATA_UNIT_DEFAULT;
    uint64_t unit;
    char g[96];
    int rc;

    if (!jd) {
        path_pop(c, o);
        return 0;
    }
    if ((rc = check_object(c, jd)) || (rc = check_keys(c, jd, &data_def)))
        return rc;
    if (member(jw, "pattern")) {
        path_pop(c, o);
        path_key(c, "pattern");
        return fail(c, "cannot be given with \"data\" (the data content replaces the pattern)");
    }
    if ((rc = pct_field(c, jd, "dedupe", &w->data.dedupe_pct)) ||
        (rc = pct_field(c, jd, "compress", &w->data.compress_pct)) ||
        (rc = size_field(c, jd, "dedupe_unit", &def_unit, IOF_DATA_UNIT_MIN, IOF_DATA_UNIT_MAX,
                         &unit)))
        return rc;
    if (unit & (unit - 1)) {
        path_key(c, "dedupe_unit");
        return fail(c, "must be a power of two, got %s",
                    got(g, sizeof(g), member(jd, "dedupe_unit")));
    }
    w->data.unit = (uint32_t)unit;
    w->data.enabled = true;
    path_pop(c, o);
    return 0;
}

static const char *const verify_names[] = {"none", "crc32c", "xxh64"};
_Static_assert(IOF_VERIFY_NONE == 0 && IOF_VERIFY_CRC32C == 1 && IOF_VERIFY_XXH64 == 2,
               "verify_names follows enum iof_verify_algo");
static const char *const verify_mode_names[] = {"inline", "after"};

/* "verify": "crc32c" | "xxh64" | "none" (or true: the default checksum,
 * false: none), "verify_mode", "verify_stop". */
static int parse_verify(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *it = member(jw, "verify");
    size_t idx;
    int rc;

    if (it && cJSON_IsBool(it)) {
        w->verify.algo = cJSON_IsTrue(it) ? IOF_VERIFY_DEFAULT : IOF_VERIFY_NONE;
    } else {
        if ((rc = enum_field(c, jw, "verify", IOF_VERIFY_NONE, verify_names, 3, &idx)))
            return rc;
        w->verify.algo = (enum iof_verify_algo)idx;
    }
    if ((rc = enum_field(c, jw, "verify_mode", IOF_VERIFY_INLINE, verify_mode_names, 2, &idx)))
        return rc;
    w->verify.mode = (enum iof_verify_mode)idx;
    if ((rc = bool_field(c, jw, "verify_stop", false, &w->verify.stop)))
        return rc;
    if (w->verify.algo == IOF_VERIFY_NONE) {
        const char *k = member(jw, "verify_mode")   ? "verify_mode"
                        : member(jw, "verify_stop") ? "verify_stop"
                                                    : NULL;
        if (k) {
            path_key(c, k);
            return fail(c, "needs \"verify\" (a checksum: crc32c or xxh64)");
        }
        return 0;
    }
    if (w->data.enabled) {
        path_key(c, "verify");
        return fail(c, "cannot be combined with \"data\" (a verified block carries a header that "
                       "makes it unique and less compressible)");
    }
    if (!engine_facts(w->engine)->touches_files) {
        path_key(c, "verify");
        return fail(c, "needs an engine that does I/O (this group uses %s)", w->engine);
    }
    return 0;
}

/* The n entries of "targets", each path template expanded in place (the
 * group's targets are the expansion, in order). */
static int parse_targets(struct pctx *c, const cJSON *arr, size_t n, struct iof_worker_cfg *w)
{
    const cJSON *jt, *jp;
    size_t total = 0, i = 0, k = 0;
    int rc;

    cJSON_ArrayForEach(jt, arr)
    {
        jp = cJSON_IsObject(jt) ? cJSON_GetObjectItemCaseSensitive(jt, "path") : NULL;
        total += cJSON_IsString(jp) ? template_count(jp->valuestring) : 1;
    }
    if (total > PROTO_PLAN_MAX_TARGETS)
        return fail(c,
                    "%zu entries name %zu targets once their {A..B} ranges are expanded, the "
                    "maximum is %u",
                    n, total, PROTO_PLAN_MAX_TARGETS);
    w->targets = calloc(total, sizeof(*w->targets));
    if (!w->targets)
        return nomem(c);
    cJSON_ArrayForEach(jt, arr)
    {
        size_t oi = path_index(c, i);
        struct path_template pt;
        bool found;
        if ((rc = parse_target(c, jt, &w->targets[k])) ||
            (rc = path_template_find(c, w->targets[k].path, &pt, &found)))
            return rc;
        if (found) {
            struct iof_target_cfg t = w->targets[k];
            if ((rc = path_template_expand(c, &t, &pt, &w->targets[k])))
                return rc;
            k += (size_t)(pt.to - pt.from + 1);
        } else {
            k++;
        }
        w->ntargets = k;
        path_pop(c, oi);
        i++;
    }
    return 0;
}

/* "rate": {"iops": N} or {"mibps": N}, "arrival": "uniform" | "poisson". */
static int parse_rate(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *r = member(jw, "rate"), *iops, *mibps, *it;
    size_t o = path_key(c, "rate"), o2, idx;
    double max;
    char g[96];
    int rc;

    if (!r) {
        path_pop(c, o);
        return 0;
    }
    if ((rc = check_object(c, r)) || (rc = check_keys(c, r, &rate_def)))
        return rc;
    iops = member(r, "iops");
    mibps = member(r, "mibps");
    if (iops && mibps)
        return fail(c, "give one of iops and mibps, not both");
    if (!iops && !mibps)
        return fail(c, "needs iops or mibps");
    it = iops ? iops : mibps;
    max = iops ? IOF_RATE_MAX_IOPS : IOF_RATE_MAX_MIBPS;
    o2 = path_key(c, iops ? "iops" : "mibps");
    if (!cJSON_IsNumber(it))
        return fail(c, "must be a number, got %s", jtype(it));
    if (!isfinite(it->valuedouble) || it->valuedouble < IOF_RATE_MIN || it->valuedouble > max)
        return fail(c, "must be %g..%.0f per worker, got %s", IOF_RATE_MIN, max,
                    got(g, sizeof(g), it));
    path_pop(c, o2);
    w->rate.unit = iops ? IOF_RATE_IOPS : IOF_RATE_MIBPS;
    w->rate.value = it->valuedouble;
    if ((rc = enum_field(c, r, "arrival", IOF_ARRIVAL_UNIFORM, arrival_names, 2, &idx)))
        return rc;
    w->rate.arrival = (enum iof_arrival)idx;
    path_pop(c, o);
    return 0;
}

/* A group's own specs (Iometer's per-worker assignment): names of the
 * plan's specs, resolved to indices; a spec cycle later replaces each by
 * its expansion (spec_cycle_regroup). */
static int parse_group_specs(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w,
                             const struct iof_plan *p)
{
    const cJSON *arr = member(jw, "specs"), *e;
    size_t o, n, i = 0;
    char q[96];
    int rc;

    if (!arr)
        return 0;
    o = path_key(c, "specs");
    if ((rc = check_array(c, arr, 1, PROTO_PLAN_MAX_SPECS, &n)))
        return rc;
    w->specs = calloc(n, sizeof(*w->specs));
    if (!w->specs)
        return nomem(c);
    w->nspecs = n;
    w->has_specs = true;
    cJSON_ArrayForEach(e, arr)
    {
        const char *name;
        size_t oi = path_index(c, i), k = 0;
        if ((rc = json_string(c, e, IOF_NAME_MAX - 1, &name)))
            return rc;
        while (k < p->nspecs && strcmp(p->specs[k].name, name) != 0)
            k++;
        if (k == p->nspecs)
            return fail(c, "names no spec of the plan's specs, got %s", quote(q, sizeof(q), name));
        w->specs[i++] = (unsigned)k;
        path_pop(c, oi);
    }
    path_pop(c, o);
    return 0;
}

static int parse_worker(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w,
                        const struct iof_plan *p, size_t gi)
{
    const cJSON *arr;
    const char *engines[IOF_ENGINE_COUNT];
    const char *name;
    size_t n, idx, o;
    uint64_t v;
    int rc;

    if ((rc = check_object(c, jw)) || (rc = check_keys(c, jw, &worker_def)))
        return rc;
    if (member(jw, "name")) {
        if ((rc = str_field(c, jw, "name", NULL, IOF_NAME_MAX - 1, &name)))
            return rc;
        if (!*name) {
            path_key(c, "name");
            return fail(c, "must not be empty");
        }
        snprintf(w->name, sizeof(w->name), "%s", name);
    } else {
        snprintf(w->name, sizeof(w->name), "workers[%zu]", gi);
    }
    if ((rc = parse_group_specs(c, jw, w, p)))
        return rc;
    if ((rc = parse_nodes(c, jw, w)))
        return rc;
    if ((rc = int_field(c, jw, "count", &ONE, 1, PROTO_PLAN_MAX_COUNT, &v)))
        return rc;
    w->count = (uint32_t)v;
    for (size_t e = 0; e < IOF_ENGINE_COUNT; e++)
        engines[e] = iof_engine_facts[e].name;
    if ((rc = enum_field(c, jw, "engine", IOF_ENGINE_LIBAIO, engines, IOF_ENGINE_COUNT, &idx)))
        return rc;
    snprintf(w->engine, sizeof(w->engine), "%s", engines[idx]);
    if ((rc = int_field(c, jw, "queue_depth", &ONE, 1, PROTO_PLAN_MAX_QD, &v)))
        return rc;
    w->queue_depth = (uint32_t)v;

    arr = member(jw, "targets");
    o = path_key(c, "targets");
    if (!arr)
        return fail(c, "required but missing");
    if ((rc = check_array(c, arr, 1, PROTO_PLAN_MAX_TARGETS, &n)))
        return rc;
    if ((rc = parse_targets(c, arr, n, w)))
        return rc;
    path_pop(c, o);

    if ((rc = enum_field(c, jw, "pattern", IOF_PATTERN_RANDOM, pattern_names, 3, &idx)))
        return rc;
    w->pattern = (enum iof_pattern)idx;
    if (member(jw, "seed")) {
        if ((rc = int_field(c, jw, "seed", NULL, 0, (uint64_t)JSON_MAX_EXACT, &w->seed)))
            return rc;
        w->has_seed = true;
    }
    if ((rc = parse_offset_increment(c, jw, w)))
        return rc;
    if ((rc = bool_field(c, jw, "hipri", false, &w->hipri)))
        return rc;
    if (w->hipri && !engine_facts(w->engine)->hipri) {
        path_key(c, "hipri");
        return fail(c, "polled completion needs engine io_uring (this group uses %s)", w->engine);
    }
    if ((rc = parse_rate(c, jw, w)) || (rc = parse_data(c, jw, w)) || (rc = parse_verify(c, jw, w)))
        return rc;
    return 0;
}

static int parse_workers(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *arr = member(root, "workers"), *jw;
    size_t o = path_key(c, "workers"), n, i = 0;
    int rc;

    if (!arr)
        return fail(c, "required but missing");
    if ((rc = check_array(c, arr, 1, PROTO_PLAN_MAX_GROUPS, &n)))
        return rc;
    p->workers = calloc(n, sizeof(*p->workers));
    if (!p->workers)
        return nomem(c);
    p->nworkers = n;
    cJSON_ArrayForEach(jw, arr)
    {
        size_t oi = path_index(c, i);
        if ((rc = parse_worker(c, jw, &p->workers[i], p, i)))
            return rc;
        path_pop(c, oi);
        i++;
    }
    /* Group names key the per-group result rows: unique. */
    for (i = 1; i < n; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p->workers[i].name, p->workers[j].name) == 0) {
                char q[96];
                path_index(c, i);
                path_key(c, "name");
                return fail(c, "duplicate group name %s (also workers[%zu])",
                            quote(q, sizeof(q), p->workers[i].name), j);
            }
        }
    }
    path_pop(c, o);
    return 0;
}

/* "+N" (N >= 1) or "xN" (N >= 2). */
static int parse_step(struct pctx *c, const cJSON *pc, struct iof_cycle *cy)
{
    const cJSON *it = member(pc, "step");
    const char *s, *end, *why;
    size_t o = path_key(c, "step");
    char g[96];
    uint64_t n;
    int rc;

    if (!it)
        return fail(c, "required but missing");
    if ((rc = json_string(c, it, 32, &s)))
        return rc;
    got(g, sizeof(g), it);
    if ((s[0] != '+' && s[0] != 'x' && s[0] != 'X') || !is_digit(s[1]) ||
        parse_digits(s + 1, &n, &end, &why) || *end)
        return fail(c, "must be \"+N\" (linear) or \"xN\" (exponential), got %s", g);
    cy->exponential = s[0] != '+';
    if (!cy->exponential && n < 1)
        return fail(c, "a linear step must be at least +1, got %s", g);
    if (cy->exponential && n < 2)
        return fail(c, "an exponential step must be at least x2, got %s", g);
    cy->step = n;
    path_pop(c, o);
    return 0;
}

/* cycle.rate: {"curve": [PCT, ...]} or {"find_max": {"p99"|"p999"|"avg": DURATION}}. */
static int parse_rate_cycle(struct pctx *c, const cJSON *pc, struct iof_plan *p)
{
    struct iof_rate_cycle *rc = &p->cycle.rate;
    const cJSON *curve = member(pc, "curve"), *fm = member(pc, "find_max"), *el, *m = NULL;
    size_t o = path_key(c, "rate"), o2, n, i = 0;
    char g[96];
    int r;

    if ((r = check_object(c, pc)) || (r = check_keys(c, pc, &rate_cycle_def)))
        return r;
    if (!curve == !fm)
        return fail(c, "must name one of curve, find_max");
    for (size_t w = 0; w < p->nworkers; w++) {
        if (p->workers[w].rate.unit != IOF_RATE_NONE) {
            path_pop(c, 0);
            path_add(c, "workers[%zu].rate", w);
            return fail(c, "a rate cycle sets every worker's rate: drop this or cycle.rate");
        }
    }
    p->cycle.param = IOF_CYCLE_RATE;
    if (curve) {
        o2 = path_key(c, "curve");
        if ((r = check_array(c, curve, 1, IOF_RATE_CURVE_MAX, &n)))
            return r;
        rc->npct = n;
        cJSON_ArrayForEach(el, curve)
        {
            size_t oi = path_index(c, i);
            uint64_t v;
            if ((r = json_uint(c, el, 1, 100, &v)))
                return r;
            for (size_t j = 0; j < i; j++)
                if (rc->pct[j] == v)
                    return fail(c, "repeats curve[%zu], got %s", j, got(g, sizeof(g), el));
            rc->pct[i++] = (uint8_t)v;
            path_pop(c, oi);
        }
        path_pop(c, o2);
        path_pop(c, o);
        return 0;
    }
    rc->find_max = true;
    o2 = path_key(c, "find_max");
    if ((r = check_object(c, fm)) || (r = check_keys(c, fm, &find_max_def)))
        return r;
    for (const cJSON *it = fm->child; it; it = it->next) {
        if (m)
            return fail(c, "names both '%s' and '%s': one latency target", m->string, it->string);
        m = it;
    }
    if (!m)
        return fail(c, "must name one of p99, p999, avg");
    rc->metric = strcmp(m->string, "p99") == 0    ? IOF_KNEE_P99
                 : strcmp(m->string, "p999") == 0 ? IOF_KNEE_P999
                                                  : IOF_KNEE_AVG;
    if ((r = dur_field(c, fm, m->string, NULL, PROTO_PLAN_MAX_RAMP_NS, &rc->target_ns)))
        return r;
    if (rc->target_ns == 0) {
        path_key(c, m->string);
        return fail(c, "must be more than 0, got %s", got(g, sizeof(g), m));
    }
    path_pop(c, o2);
    path_pop(c, o);
    return 0;
}

static int parse_cycle(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *cy = member(root, "cycle"), *pc;
    size_t o = path_key(c, "cycle"), o2, min_targets = SIZE_MAX, min_group = 0;
    struct iof_cycle *out = &p->cycle;
    uint64_t limit;
    int rc;

    out->param = IOF_CYCLE_NONE;
    if (!cy) {
        path_pop(c, o);
        return 0;
    }
    if ((rc = check_object(c, cy)) || (rc = check_keys(c, cy, &cycle_def)))
        return rc;
    /* The spec axes (size, read, random) are parse_spec_cycle()'s; at most
     * one worker parameter here. */
    pc = NULL;
    for (const cJSON *it = cy->child; it; it = it->next) {
        if (spec_axis_of(it->string) >= 0)
            continue;
        if (pc)
            return fail(c, "names both '%s' and '%s': cycle one parameter at a time", pc->string,
                        it->string);
        pc = it;
    }
    if (!pc && !cy->child)
        return fail(c, "must name one of rate, queue_depth, workers, targets, size, read, random");
    if (!pc) {
        path_pop(c, o);
        return 0;
    }
    if (strcmp(pc->string, "rate") == 0) {
        if ((rc = parse_rate_cycle(c, pc, p)))
            return rc;
        path_pop(c, o);
        return 0;
    }
    for (size_t g = 0; g < p->nworkers; g++) {
        if (p->workers[g].ntargets < min_targets) {
            min_targets = p->workers[g].ntargets;
            min_group = g;
        }
    }
    if (strcmp(pc->string, "queue_depth") == 0) {
        out->param = IOF_CYCLE_QUEUE_DEPTH;
        limit = PROTO_PLAN_MAX_QD;
    } else if (strcmp(pc->string, "workers") == 0) {
        out->param = IOF_CYCLE_WORKERS;
        limit = PROTO_PLAN_MAX_COUNT;
    } else {
        out->param = IOF_CYCLE_TARGETS;
        limit = PROTO_PLAN_MAX_TARGETS;
    }
    o2 = path_key(c, pc->string);
    if ((rc = check_object(c, pc)) || (rc = check_keys(c, pc, &cycle_param_def)))
        return rc;
    if ((rc = int_field(c, pc, "from", NULL, 1, limit, &out->from)) ||
        (rc = int_field(c, pc, "to", NULL, 1, limit, &out->to)))
        return rc;
    if (out->to < out->from) {
        path_key(c, "to");
        return fail(c, "must not be less than from (%" PRIu64 "), got %" PRIu64, out->from,
                    out->to);
    }
    if (out->param == IOF_CYCLE_TARGETS && out->to > min_targets) {
        path_key(c, "to");
        return fail(c, "must be at most %zu: workers[%zu] has only %zu target%s, got %" PRIu64,
                    min_targets, min_group, min_targets, min_targets == 1 ? "" : "s", out->to);
    }
    if ((rc = parse_step(c, pc, out)))
        return rc;
    path_pop(c, o2);
    path_pop(c, o);
    return 0;
}

/* Points the path at specs[s].lines[l].size (cross-checks run after the walk). */
static void path_line_size(struct pctx *c, size_t s, size_t l)
{
    path_pop(c, 0);
    path_add(c, "specs[%zu].lines[%zu].size", s, l);
}

static void path_target_size(struct pctx *c, size_t g, size_t i)
{
    path_pop(c, 0);
    path_add(c, "workers[%zu].targets[%zu].size", g, i);
}

struct test_file {
    const struct iof_target_cfg *t;
    size_t g, i; /* workers[g].targets[i] */
};

static int test_file_cmp(const void *a, const void *b)
{
    const struct test_file *x = a, *y = b;
    int r = strcmp(x->t->path, y->t->path);

    if (r)
        return r;
    if (x->g != y->g)
        return x->g < y->g ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Checks that need more than one member: O_DIRECT alignment of transfer
 * sizes, lines that cannot fit a target region, one test file given two
 * sizes. */
static int cross_check(struct pctx *c, const struct iof_plan *p)
{
    const struct iof_target_cfg *small = NULL;
    size_t small_g = 0, small_i = 0, direct_g = SIZE_MAX, nfiles = 0, k = 0;
    uint64_t small_len = UINT64_MAX;
    struct test_file *files;
    char a[32], b[32], q[96];

    for (size_t g = 0; g < p->nworkers; g++) {
        const struct iof_worker_cfg *w = &p->workers[g];
        if (direct_g == SIZE_MAX && engine_direct(w->engine))
            direct_g = g;
        for (size_t i = 0; i < w->ntargets; i++) {
            const struct iof_target_cfg *t = &w->targets[i];
            uint64_t len;
            if (t->path[0] != '/')
                nfiles++;
            if (!t->size)
                continue;
            if (t->range_offset_pct || t->range_size_pct) {
                uint64_t st, en;
                if (iof_target_range(t, t->size, DIRECT_IO_ALIGN, &st, &en))
                    continue;
                len = en - st;
            } else {
                len = t->range_size ? t->range_size : t->size - t->range_offset;
            }
            if (len < small_len) {
                small_len = len;
                small = t;
                small_g = g;
                small_i = i;
            }
        }
    }
    for (size_t s = 0; s < p->nspecs; s++) {
        for (size_t l = 0; l < p->specs[s].nlines; l++) {
            uint64_t size = p->specs[s].lines[l].size;
            proto_plan_format_size(size, a, sizeof(a));
            if (direct_g != SIZE_MAX && size % DIRECT_IO_ALIGN) {
                path_line_size(c, s, l);
                return fail(c,
                            "size not aligned for O_DIRECT: %s is not a multiple of 512 "
                            "(workers[%zu] uses engine %s)",
                            a, direct_g, p->workers[direct_g].engine);
            }
            for (size_t g = 0; g < p->nworkers; g++) {
                if (p->workers[g].verify.algo == IOF_VERIFY_NONE || size % 512 == 0)
                    continue;
                path_line_size(c, s, l);
                return fail(c,
                            "%s is not a multiple of 512 (workers[%zu] verifies: every block "
                            "carries a header and a tag per 512-byte sector)",
                            a, g);
            }
            for (size_t g = 0; g < p->nworkers; g++) {
                const struct iof_data_cfg *d = &p->workers[g].data;
                if (!d->enabled || p->specs[s].lines[l].read_pct >= 100 || size % d->unit == 0)
                    continue;
                path_line_size(c, s, l);
                proto_plan_format_size(d->unit, b, sizeof(b));
                return fail(c,
                            "writes of %s are not a whole number of dedupe units (workers[%zu] "
                            "has data.dedupe_unit %s)",
                            a, g, b);
            }
            if (small && size > small_len) {
                path_line_size(c, s, l);
                proto_plan_format_size(small_len, b, sizeof(b));
                return fail(c, "%s does not fit workers[%zu].targets[%zu] (%s, %s usable)", a,
                            small_g, small_i, quote(q, sizeof(q), small->path), b);
            }
        }
    }

    /* A relative path is one test file per agent: every mention must agree
     * on its size. Sort (path, group, index) and compare neighbours. */
    if (!nfiles)
        return 0;
    files = malloc(nfiles * sizeof(*files));
    if (!files)
        return nomem(c);
    for (size_t g = 0; g < p->nworkers; g++)
        for (size_t i = 0; i < p->workers[g].ntargets; i++)
            if (p->workers[g].targets[i].path[0] != '/')
                files[k++] = (struct test_file){&p->workers[g].targets[i], g, i};
    qsort(files, nfiles, sizeof(*files), test_file_cmp);
    for (size_t i = 1; i < nfiles; i++) {
        const struct test_file *x = &files[i - 1], *y = &files[i];
        if (strcmp(x->t->path, y->t->path) == 0 && x->t->size != y->t->size) {
            struct test_file first = *x, dup = *y;
            free(files);
            path_target_size(c, dup.g, dup.i);
            proto_plan_format_size(first.t->size, a, sizeof(a));
            proto_plan_format_size(dup.t->size, b, sizeof(b));
            return fail(c,
                        "test file %s is %s in workers[%zu].targets[%zu]; one file cannot have "
                        "two sizes, got %s",
                        quote(q, sizeof(q), dup.t->path), a, first.g, first.i, b);
        }
    }
    free(files);
    return 0;
}

struct node_group {
    const char *name;
    size_t g;
};

static int node_group_cmp(const void *a, const void *b)
{
    const struct node_group *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    return r ? r : (x->g > y->g) - (x->g < y->g);
}

/* A node's share of any test - the workers, and the workers x targets, of
 * every group selecting it - must fit one stats message (IOF_NODE_MAX_*):
 * what validates must run and report. A group naming no node or "*" selects
 * every node. Each group's share is taken at its largest over the cycle
 * (workers and targets cycles grow every group alike, so the sums of those
 * maxima are reached in one test). */
static int node_check(struct pctx *c, const struct iof_plan *p)
{
    size_t ntests = 0, npairs = 0, k = 0;
    struct iof_test *tests = iof_plan_expand(p, &ntests);
    uint64_t *wmax = calloc(p->nworkers ? p->nworkers : 1, sizeof(*wmax));
    uint64_t *tmax = calloc(p->nworkers ? p->nworkers : 1, sizeof(*tmax));
    uint64_t star_w = 0, star_t = 0;
    struct node_group *pairs = NULL;
    const char *tname = NULL, *wname = NULL; /* the nodes with the most targets, workers */
    char q[96];
    uint64_t most_w = 0, most_t = 0;
    int rc = 0;

    if (!tests || !wmax || !tmax) {
        rc = fail(c, "out of memory");
        goto out;
    }
    for (size_t g = 0; g < p->nworkers; g++) {
        bool star = p->workers[g].nnodes == 0;
        for (size_t t = 0; t < ntests; t++) {
            struct iof_worker_cfg w = iof_test_worker(p, &tests[t], g);
            if (w.count > wmax[g])
                wmax[g] = w.count;
            if ((uint64_t)w.count * w.ntargets > tmax[g])
                tmax[g] = (uint64_t)w.count * w.ntargets;
        }
        for (size_t i = 0; i < p->workers[g].nnodes; i++)
            star |= !strcmp(p->workers[g].nodes[i], "*");
        if (star) {
            star_w += wmax[g];
            star_t += tmax[g];
        } else {
            npairs += p->workers[g].nnodes;
        }
    }
    most_w = star_w;
    most_t = star_t;
    if (npairs && !(pairs = malloc(npairs * sizeof(*pairs)))) {
        rc = fail(c, "out of memory");
        goto out;
    }
    for (size_t g = 0; g < p->nworkers && pairs; g++) {
        bool star = false;
        for (size_t i = 0; i < p->workers[g].nnodes; i++)
            star |= !strcmp(p->workers[g].nodes[i], "*");
        for (size_t i = 0; !star && i < p->workers[g].nnodes; i++)
            pairs[k++] = (struct node_group){p->workers[g].nodes[i], g};
    }
    if (k)
        qsort(pairs, k, sizeof(*pairs), node_group_cmp);
    for (size_t i = 0, j; i < k; i = j) {
        uint64_t w = star_w, t = star_t;
        for (j = i; j < k && !strcmp(pairs[j].name, pairs[i].name); j++)
            if (j == i || pairs[j].g != pairs[j - 1].g) {
                w += wmax[pairs[j].g];
                t += tmax[pairs[j].g];
            }
        if (t > most_t) {
            tname = pairs[i].name;
            most_t = t;
        }
        if (w > most_w) {
            wname = pairs[i].name;
            most_w = w;
        }
    }
    path_pop(c, 0);
    path_add(c, "workers");
    if (most_t > IOF_NODE_MAX_TARGETS)
        rc = fail(c,
                  "%s%s would run %" PRIu64 " targets in one test (the workers x targets of "
                  "the groups that select it), at most %d, what one node's stats carry",
                  tname ? "node " : "every node", tname ? quote(q, sizeof(q), tname) : "", most_t,
                  IOF_NODE_MAX_TARGETS);
    else if (most_w > IOF_NODE_MAX_WORKERS)
        rc = fail(c, "%s%s would run %" PRIu64 " workers in one test, at most %d",
                  wname ? "node " : "every node", wname ? quote(q, sizeof(q), wname) : "", most_w,
                  IOF_NODE_MAX_WORKERS);
    else
        path_pop(c, 0);
out:
    free(tests);
    free(wmax);
    free(tmax);
    free(pairs);
    return rc;
}

/* ---- cycling the spec itself: "cycle": {"size": [...], "read": [...], "random": [...]} ---- */

static const char *const spec_axis_names[IOF_SPEC_AXES] = {"size", "read", "random"};

/* The axis a cycle key names, or -1. */
static int spec_axis_of(const char *key)
{
    for (int i = 0; i < IOF_SPEC_AXES; i++)
        if (strcmp(key, spec_axis_names[i]) == 0)
            return i;
    return -1;
}

/* "4k 70% read 50% random": what a line does, as the expanded specs are named. */
static void spec_cycle_label(const struct iof_line *l, char *buf, size_t cap)
{
    char a[32];

    proto_plan_format_size(l->size, a, sizeof(a));
    snprintf(buf, cap, "%s %" PRIu32 "%% read %" PRIu32 "%% random", a, l->read_pct, l->random_pct);
}

/* "LABEL", or "SPEC: LABEL" when several specs are expanded (the spec's
 * name cut so the label always shows). */
static void spec_cycle_name(char *buf, size_t cap, const char *spec, const char *label)
{
    size_t nl = strlen(label), ns = spec ? strlen(spec) : 0, k = 0;

    if (spec) {
        if (ns + 2 + nl >= cap)
            ns = nl + 2 < cap ? cap - 1 - nl - 2 : 0;
        memcpy(buf, spec, ns);
        memcpy(buf + ns, ": ", 2);
        k = ns + 2;
    }
    if (k + nl >= cap)
        nl = cap - 1 - k;
    memcpy(buf + k, label, nl);
    buf[k + nl] = '\0';
}

/* One axis's list of values at cycle.<key>: sizes 1..64m, or 0..100. */
static int parse_spec_axis(struct pctx *c, const cJSON *it, struct iof_spec_cycle *ax)
{
    const cJSON *el;
    size_t o = path_key(c, it->string), n, i = 0;
    char a[32], g[96];
    int rc;

    if ((rc = check_array(c, it, 1, IOF_SPEC_AXIS_MAX_VALUES, &n)))
        return rc;
    ax->nvalues = n;
    cJSON_ArrayForEach(el, it)
    {
        size_t oi = path_index(c, i);
        uint64_t *v = &ax->values[i];
        if (ax->axis == IOF_SPEC_AXIS_SIZE) {
            if ((rc = json_size(c, el, v)))
                return rc;
            if (*v < 1 || *v > PROTO_PLAN_MAX_IO_SIZE) {
                proto_plan_format_size(PROTO_PLAN_MAX_IO_SIZE, a, sizeof(a));
                return fail(c, "must be 1..%s, got %s", a, got(g, sizeof(g), el));
            }
        } else if ((rc = json_uint(c, el, 0, 100, v))) {
            return rc;
        }
        for (size_t j = 0; j < i; j++)
            if (ax->values[j] == *v)
                return fail(c, "repeats %s[%zu], got %s", it->string, j, got(g, sizeof(g), el));
        path_pop(c, oi);
        i++;
    }
    path_pop(c, o);
    return 0;
}

/* Cycle transfer sizes must pass what cross_check() asks of spec lines:
 * O_DIRECT alignment and fitting the smallest target region. */
static int spec_cycle_sizes_check(struct pctx *c, const struct iof_plan *p,
                                  const struct iof_spec_cycle *ax)
{
    char a[32], b[32], q[96];

    for (size_t k = 0; k < ax->nvalues; k++) {
        uint64_t size = ax->values[k];
        proto_plan_format_size(size, a, sizeof(a));
        for (size_t g = 0; g < p->nworkers; g++) {
            const struct iof_worker_cfg *w = &p->workers[g];
            if (engine_direct(w->engine) && size % DIRECT_IO_ALIGN) {
                path_pop(c, 0);
                path_add(c, "cycle.size[%zu]", k);
                return fail(c,
                            "size not aligned for O_DIRECT: %s is not a multiple of 512 "
                            "(workers[%zu] uses engine %s)",
                            a, g, w->engine);
            }
            for (size_t i = 0; i < w->ntargets; i++) {
                const struct iof_target_cfg *t = &w->targets[i];
                uint64_t st, en;
                if (!t->size || iof_target_range(t, t->size, DIRECT_IO_ALIGN, &st, &en) ||
                    size <= en - st)
                    continue;
                path_pop(c, 0);
                path_add(c, "cycle.size[%zu]", k);
                proto_plan_format_size(en - st, b, sizeof(b));
                return fail(c, "%s does not fit workers[%zu].targets[%zu] (%s, %s usable)", a, g, i,
                            quote(q, sizeof(q), t->path), b);
            }
        }
    }
    return 0;
}

/* Replaces every single-line spec by the cross product of the axes (first
 * axis outermost), named after what each line does; specs with more lines
 * stay as written. Runs after cross_check(), so specs[i] in its messages is
 * still the i-th spec of the file. */
/* After a spec cycle: each group's own list names the plan's specs as
 * written; a spec the cycle expanded stands for its expansions, in order
 * (spec s became specs first[s] .. first[s+1]-1). So groups that list
 * different cycled specs run them side by side, step by step. */
static int spec_cycle_regroup(struct pctx *c, struct iof_plan *p, const size_t *first)
{
    for (size_t g = 0; g < p->nworkers; g++) {
        struct iof_worker_cfg *w = &p->workers[g];
        size_t n = 0, k = 0;
        unsigned *list;
        if (!w->has_specs)
            continue;
        for (size_t i = 0; i < w->nspecs; i++)
            n += first[w->specs[i] + 1] - first[w->specs[i]];
        if (n > PROTO_PLAN_MAX_SPECS) {
            path_pop(c, 0); /* the message names the group's list, not the cycle */
            path_key(c, "workers");
            path_index(c, g);
            path_key(c, "specs");
            return fail(c, "the spec cycle expands this list to %zu specs, the maximum is %u", n,
                        PROTO_PLAN_MAX_SPECS);
        }
        list = calloc(n, sizeof(*list));
        if (!list)
            return nomem(c);
        for (size_t i = 0; i < w->nspecs; i++)
            for (size_t e = first[w->specs[i]]; e < first[w->specs[i] + 1]; e++)
                list[k++] = (unsigned)e;
        free(w->specs);
        w->specs = list;
        w->nspecs = n;
    }
    return 0;
}

static int parse_spec_cycle(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *cy = member(root, "cycle");
    size_t o = path_key(c, "cycle"), prod = 1, nsingle = 0, total, k = 0, *first;
    struct iof_spec *out;
    char label[IOF_NAME_MAX];
    int rc;

    if (!cy) {
        path_pop(c, o);
        return 0;
    }
    for (const cJSON *it = cy->child; it; it = it->next) {
        int a = spec_axis_of(it->string);
        struct iof_spec_cycle *ax;
        if (a < 0)
            continue;
        ax = &p->spec_cycle[p->nspec_cycle++];
        ax->axis = (enum iof_spec_axis)a;
        if ((rc = parse_spec_axis(c, it, ax)))
            return rc;
        prod *= ax->nvalues;
    }
    if (!p->nspec_cycle) {
        path_pop(c, o);
        return 0;
    }
    for (size_t s = 0; s < p->nspecs; s++)
        nsingle += p->specs[s].nlines == 1;
    if (!nsingle)
        return fail(c,
                    "%s: no spec has a single line to cycle (a spec with several lines keeps "
                    "its mix)",
                    spec_axis_names[p->spec_cycle[0].axis]);
    total = p->nspecs - nsingle + nsingle * prod;
    if (total > PROTO_PLAN_MAX_SPECS)
        return fail(c, "expands %zu single-line spec%s into %zu specs, the maximum is %u", nsingle,
                    nsingle == 1 ? "" : "s", total, PROTO_PLAN_MAX_SPECS);
    for (size_t a = 0; a < p->nspec_cycle; a++)
        if (p->spec_cycle[a].axis == IOF_SPEC_AXIS_SIZE &&
            (rc = spec_cycle_sizes_check(c, p, &p->spec_cycle[a])))
            return rc;
    out = calloc(total, sizeof(*out));
    first = calloc(p->nspecs + 1, sizeof(*first));
    if (!out || !first) {
        free(out);
        free(first);
        return nomem(c);
    }
    for (size_t s = 0; s < p->nspecs; s++) {
        struct iof_spec *sp = &p->specs[s];
        first[s] = k;
        if (sp->nlines != 1) {
            out[k++] = *sp;
            sp->lines = NULL;
            continue;
        }
        for (size_t n = 0; n < prod; n++) {
            struct iof_spec *e = &out[k++];
            size_t rest = n;
            e->lines = malloc(sizeof(*e->lines));
            if (!e->lines) {
                for (size_t j = 0; j < k; j++)
                    free(out[j].lines);
                free(out);
                free(first);
                return nomem(c);
            }
            e->nlines = 1;
            e->lines[0] = sp->lines[0];
            e->duration_ns = sp->duration_ns;
            e->ramp_ns = sp->ramp_ns;
            e->has_duration = sp->has_duration;
            e->has_ramp = sp->has_ramp;
            e->io_limit = sp->io_limit;
            /* Odometer: the last axis turns fastest. */
            for (size_t a = p->nspec_cycle; a-- > 0;) {
                const struct iof_spec_cycle *ax = &p->spec_cycle[a];
                uint64_t v = ax->values[rest % ax->nvalues];
                rest /= ax->nvalues;
                if (ax->axis == IOF_SPEC_AXIS_SIZE)
                    e->lines[0].size = v;
                else if (ax->axis == IOF_SPEC_AXIS_READ)
                    e->lines[0].read_pct = (uint32_t)v;
                else
                    e->lines[0].random_pct = (uint32_t)v;
            }
            spec_cycle_label(&e->lines[0], label, sizeof(label));
            spec_cycle_name(e->name, sizeof(e->name), nsingle == 1 ? NULL : sp->name, label);
        }
    }
    first[p->nspecs] = k;
    for (size_t s = 0; s < p->nspecs; s++)
        free(p->specs[s].lines);
    free(p->specs);
    p->specs = out;
    p->nspecs = total;
    p->nspecs_cycled = nsingle;
    rc = spec_cycle_regroup(c, p, first);
    free(first);
    if (rc)
        return rc;
    /* A kept multi-line spec may already carry an expanded name. */
    for (size_t i = 0; i < total; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p->specs[i].name, p->specs[j].name) == 0) {
                char q[96];
                return fail(c, "expands to the spec name %s twice: rename the spec that has it",
                            quote(q, sizeof(q), p->specs[i].name));
            }
        }
    }
    path_pop(c, o);
    return 0;
}

/* "notes": what an import approximated, kept with the plan and shown by
 * validate; no effect on the run (the agents never see them). */
static int parse_notes(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *arr = member(root, "notes"), *e;
    size_t o = path_key(c, "notes"), n, i = 0;
    int rc;

    if (!arr) {
        path_pop(c, o);
        return 0;
    }
    if ((rc = check_array(c, arr, 0, PROTO_PLAN_MAX_NOTES, &n)))
        return rc;
    if (n && !(p->notes = calloc(n, sizeof(*p->notes))))
        return nomem(c);
    cJSON_ArrayForEach(e, arr)
    {
        const char *s;
        size_t oi = path_index(c, i);
        if ((rc = json_string(c, e, PROTO_PLAN_MAX_NOTE, &s)))
            return rc;
        if (!(p->notes[i] = strdup(s)))
            return nomem(c);
        p->nnotes = ++i;
        path_pop(c, oi);
    }
    path_pop(c, o);
    return 0;
}

static int parse_root(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const char *name;
    int rc;

    if ((rc = check_keys(c, root, &root_def)))
        return rc;
    if ((rc = str_field(c, root, "name", NULL, IOF_NAME_MAX - 1, &name)))
        return rc;
    snprintf(p->name, sizeof(p->name), "%s", name);
    if ((rc = parse_notes(c, root, p)))
        return rc;
    if ((rc = parse_run(c, root, &p->run)) || (rc = parse_specs(c, root, p)) ||
        (rc = parse_workers(c, root, p)) || (rc = parse_cycle(c, root, p)))
        return rc;
    if ((rc = run_check(c, root, p)) || (rc = cross_check(c, p)) ||
        (rc = parse_spec_cycle(c, root, p)))
        return rc;
    return node_check(c, p);
}

/* ---- text checks ---- */

static void line_col(const char *text, size_t off, size_t *line, size_t *col)
{
    size_t l = 1, bol = 0;

    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            l++;
            bol = i + 1;
        }
    }
    *line = l;
    *col = off - bol + 1;
}

/* Offset of the first raw NUL byte or \u0000 escape inside a string, or
 * SIZE_MAX. Outside strings a backslash is a JSON syntax error anyway. */
static size_t find_nul(const char *t, size_t len, bool *escape)
{
    bool in_str = false;

    for (size_t i = 0; i < len; i++) {
        if (t[i] == '\0') {
            *escape = false;
            return i;
        }
        if (!in_str) {
            in_str = t[i] == '"';
        } else if (t[i] == '\\') {
            if (i + 5 < len && t[i + 1] == 'u' && memcmp(t + i + 2, "0000", 4) == 0) {
                *escape = true;
                return i;
            }
            i++; /* the escaped character, possibly a quote */
        } else if (t[i] == '"') {
            in_str = false;
        }
    }
    return SIZE_MAX;
}

/* ---- --set overrides ---- */

#define OV_MAX_STEPS 16

struct ov_step {
    bool is_index;
    size_t index;
    char name[64];
};

static int set_fail(struct iof_diag *diag, const char *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_fail(struct iof_diag *diag, const char *arg, const char *fmt, ...)
{
    char why[400], a[96];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return iof_diag_set(diag, IOF_EPLAN, "--%s %s: %s", strchr(arg, '=') ? "set" : "unset",
                        sanitize(a, sizeof(a), arg), why);
}

static bool is_ident(char ch, bool first)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
           (!first && is_digit(ch));
}

/* KEY (klen bytes) into steps; canon gets the path as validation prints it. */
static int ov_parse_key(const char *key, size_t klen, struct ov_step *st, size_t *nst, char *canon,
                        size_t ccap, const char **why)
{
    size_t i = 0, n = 0, co = 0;

    canon[0] = '\0';
    /* The canonical form is never longer than the key, so it fits canon. */
    if (klen >= ccap) {
        *why = "key is too long";
        return -EINVAL;
    }
    while (i < klen) {
        size_t start = i;
        bool dot = false;
        if (n == OV_MAX_STEPS) {
            *why = "key is too deep";
            return -EINVAL;
        }
        if (n && key[i] != '[') {
            if (key[i] != '.') {
                *why = "expected '.' or '[' between keys";
                return -EINVAL;
            }
            start = ++i;
            dot = true;
        }
        if (!dot && key[i] == '[') {
            uint64_t idx = 0;
            if (n == 0) {
                *why = "must start with a key name";
                return -EINVAL;
            }
            for (i++; i < klen && is_digit(key[i]); i++) {
                if (idx > 1000000) {
                    *why = "index too large";
                    return -EINVAL;
                }
                idx = idx * 10 + (uint64_t)(key[i] - '0');
            }
            if (i == start + 1 || i >= klen || key[i] != ']') {
                *why = "expected an index like [0]";
                return -EINVAL;
            }
            i++;
            st[n].is_index = true;
            st[n].index = (size_t)idx;
            co += (size_t)snprintf(canon + co, ccap - co, "[%zu]", (size_t)idx);
        } else {
            while (i < klen && is_ident(key[i], i == start))
                i++;
            if (i == start) {
                *why = "expected a key name";
                return -EINVAL;
            }
            if (i - start >= sizeof(st[n].name)) {
                *why = "key name too long";
                return -EINVAL;
            }
            st[n].is_index = false;
            memcpy(st[n].name, key + start, i - start);
            st[n].name[i - start] = '\0';
            co += (size_t)snprintf(canon + co, ccap - co, "%s%s", n ? "." : "", st[n].name);
        }
        n++;
    }
    if (n == 0) {
        *why = "empty key";
        return -EINVAL;
    }
    *nst = n;
    return 0;
}

/* The value of --set: JSON when VALUE parses as JSON, else a bare string.
 * JSON null is the string "null" too: a bare word is always a value (the
 * null engine), removing a key is --unset's job. Returns NULL on ENOMEM or
 * (with *nul set) when a JSON string holds \u0000. */
static cJSON *ov_value(const char *value, bool *nul)
{
    const char *end = NULL;
    size_t len = strlen(value);
    bool esc;
    cJSON *v;

    *nul = false;
    v = cJSON_ParseWithLengthOpts(value, len, &end, 0);
    if (v && end) {
        while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
            end++;
        if (*end) {
            cJSON_Delete(v);
            v = NULL;
        }
    }
    if (v && cJSON_IsNull(v)) {
        cJSON_Delete(v);
        v = NULL;
    }
    if (v && find_nul(value, len, &esc) != SIZE_MAX) {
        cJSON_Delete(v);
        *nul = true;
        return NULL;
    }
    if (!v)
        v = cJSON_CreateString(value);
    return v;
}

/* Where the walk stands, for messages: the canonical prefix so far. */
static void ov_prefix(const struct ov_step *st, size_t n, char *buf, size_t cap)
{
    size_t o = 0;

    buf[0] = '\0';
    for (size_t k = 0; k < n && o < cap; k++) {
        if (st[k].is_index)
            o += (size_t)snprintf(buf + o, cap - o, "[%zu]", st[k].index);
        else
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", k ? "." : "", st[k].name);
    }
}

static int ov_apply(cJSON *root, const char *arg, char *canon, size_t ccap, struct iof_diag *diag)
{
    struct ov_step st[OV_MAX_STEPS];
    const struct objdef *def = &root_def;
    enum shape shape = SH_OBJECT;
    const char *eq = strchr(arg, '='), *why;
    bool unset = !eq; /* "KEY" alone: --unset KEY */
    char pre[256], msg[300];
    size_t nst;
    cJSON *cur = root, *v = NULL;
    bool nul;

    if (ov_parse_key(arg, unset ? strlen(arg) : (size_t)(eq - arg), st, &nst, canon, ccap, &why))
        return set_fail(diag, arg, "invalid key: %s", why);
    if (!unset) {
        v = ov_value(eq + 1, &nul);
        if (!v && nul)
            return set_fail(diag, arg, "\\u0000 (NUL) is not allowed in strings");
        if (!v)
            return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
    }

    for (size_t k = 0; k < nst; k++) {
        bool last = k + 1 == nst, ok;
        cJSON *child;
        ov_prefix(st, k, pre, sizeof(pre));
        if (!st[k].is_index) {
            const struct field *f;
            if (shape == SH_ARRAY) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' is an array: index it like %s[0]", pre, pre);
            }
            if (shape == SH_VALUE || !def) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' is a single value, it has no keys", pre);
            }
            if (!cJSON_IsObject(cur)) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' must be an object, the plan has %s", pre,
                                jtype(cur));
            }
            f = find_field(def, st[k].name);
            if (!f) {
                cJSON_Delete(v);
                unknown_key_msg(msg, sizeof(msg), def, st[k].name);
                return set_fail(diag, arg, "%s", msg);
            }
            child = cJSON_GetObjectItemCaseSensitive(cur, st[k].name);
            if (last && unset) {
                cJSON_DeleteItemFromObjectCaseSensitive(cur, st[k].name);
                return 0;
            }
            if (unset && !child)
                return 0; /* nothing there to remove */
            if (last) {
                ok = child ? cJSON_ReplaceItemInObjectCaseSensitive(cur, st[k].name, v)
                           : cJSON_AddItemToObject(cur, st[k].name, v);
                if (!ok) {
                    cJSON_Delete(v);
                    return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
                }
                return 0;
            }
            if (!child && f->shape != SH_VALUE) {
                child = f->shape == SH_OBJECT ? cJSON_CreateObject() : cJSON_CreateArray();
                if (!child || !cJSON_AddItemToObject(cur, st[k].name, child)) {
                    cJSON_Delete(child);
                    cJSON_Delete(v);
                    return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
                }
            }
            cur = child;
            shape = f->shape;
            def = f->def;
        } else {
            size_t size;
            if (shape != SH_ARRAY) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' is not an array", pre);
            }
            if (!cJSON_IsArray(cur)) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' must be an array, the plan has %s", pre,
                                jtype(cur));
            }
            size = (size_t)cJSON_GetArraySize(cur);
            if (st[k].index > size) {
                cJSON_Delete(v);
                return set_fail(diag, arg,
                                "index %zu is out of range: '%s' has %zu entr%s (%zu appends)",
                                st[k].index, pre, size, size == 1 ? "y" : "ies", size);
            }
            if (unset && st[k].index == size) {
                if (!last)
                    return 0; /* nothing there to remove */
                return set_fail(diag, arg, "index %zu is out of range: '%s' has %zu entr%s",
                                st[k].index, pre, size, size == 1 ? "y" : "ies");
            }
            if (last && unset) {
                cJSON_DeleteItemFromArray(cur, (int)st[k].index);
                return 0;
            }
            if (last) {
                ok = st[k].index == size ? cJSON_AddItemToArray(cur, v)
                                         : cJSON_ReplaceItemInArray(cur, (int)st[k].index, v);
                if (!ok) {
                    cJSON_Delete(v);
                    return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
                }
                return 0;
            }
            if (st[k].index == size) {
                if (!def) {
                    cJSON_Delete(v);
                    return set_fail(diag, arg, "'%s' entries are single values, they have no keys",
                                    pre);
                }
                child = cJSON_CreateObject();
                if (!child || !cJSON_AddItemToArray(cur, child)) {
                    cJSON_Delete(child);
                    cJSON_Delete(v);
                    return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
                }
            } else {
                child = cJSON_GetArrayItem(cur, (int)st[k].index);
            }
            cur = child;
            shape = def ? SH_OBJECT : SH_VALUE;
        }
    }
    cJSON_Delete(v); /* not reached: the last step returns */
    return 0;
}

/* True when one path is the other or contains it ("a.b" and "a.b[0].c"). */
static bool path_related(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;
    char next;

    if (!la || !lb || strncmp(a, b, n) != 0)
        return false;
    next = la > lb ? a[n] : b[n];
    return next == '\0' || next == '.' || next == '[';
}

#define OV_CANON_MAX 256

static int plan_parse_impl(const char *name, const char *text, size_t len,
                           const char *const *overrides, size_t noverrides, struct iof_plan *out,
                           char **canonical, struct iof_diag *diag)
{
    struct pctx c = {.name = name ? name : "plan", .diag = diag};
    char(*canon)[OV_CANON_MAX] = NULL;
    const char *end = text;
    size_t off, line, col;
    cJSON *root = NULL;
    bool esc;
    int rc;

    memset(out, 0, sizeof(*out));
    if (diag)
        diag->msg[0] = '\0';
    if (len > PROTO_PLAN_MAX_FILE)
        return fail(&c, "is too large: %zu bytes, the maximum is %u", len, PROTO_PLAN_MAX_FILE);
    off = find_nul(text, len, &esc);
    if (off != SIZE_MAX) {
        line_col(text, off, &line, &col);
        return fail(&c, "line %zu, column %zu: %s", line, col,
                    esc ? "\\u0000 (NUL) is not allowed in strings" : "NUL byte in the text");
    }
    root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        struct proto_json_fault jf;
        char tok[64];
        if (proto_json_find_error(text, len, &jf)) {
            line_col(text, jf.offset, &line, &col);
            return fail(&c, "invalid JSON at line %zu, column %zu, at %s: %s", line, col,
                        sanitize(tok, sizeof(tok), jf.token), jf.cause);
        }
        off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        line_col(text, off, &line, &col);
        return fail(&c, "invalid JSON near line %zu, column %zu", line, col);
    }
    off = (size_t)(end - text);
    while (off < len &&
           (text[off] == ' ' || text[off] == '\t' || text[off] == '\n' || text[off] == '\r'))
        off++;
    if (off < len) {
        line_col(text, off, &line, &col);
        rc = fail(&c, "invalid JSON at line %zu, column %zu: unexpected text after the plan", line,
                  col);
        goto out;
    }
    if (!cJSON_IsObject(root)) {
        rc = fail(&c, "must be a JSON object, got %s", jtype(root));
        goto out;
    }
    if (noverrides) {
        canon = calloc(noverrides, sizeof(*canon));
        if (!canon) {
            rc = nomem(&c);
            goto out;
        }
    }
    for (size_t i = 0; i < noverrides; i++) {
        rc = ov_apply(root, overrides[i], canon[i], sizeof(canon[i]), diag);
        if (rc)
            goto out;
    }
    rc = parse_root(&c, root, out);
    if (rc == IOF_EPLAN && diag) {
        /* Blame the last override that touched the failing member. */
        for (size_t i = noverrides; i-- > 0;) {
            if (path_related(c.path, canon[i])) {
                char a[96];
                size_t l = strlen(diag->msg);
                snprintf(diag->msg + l, sizeof(diag->msg) - l, " (after --%s %s)",
                         strchr(overrides[i], '=') ? "set" : "unset",
                         sanitize(a, sizeof(a), overrides[i]));
                break;
            }
        }
    }
    if (rc == 0 && canonical) {
        *canonical = proto_json_print_exact(root);
        if (!*canonical)
            rc = nomem(&c);
    }
out:
    cJSON_Delete(root);
    free(canon);
    if (rc)
        iof_plan_free(out);
    return rc;
}

int proto_plan_parse(const char *name, const char *text, size_t len, const char *const *overrides,
                     size_t noverrides, struct iof_plan *out, struct iof_diag *diag)
{
    return plan_parse_impl(name, text, len, overrides, noverrides, out, NULL, diag);
}

int proto_plan_parse_canonical(const char *name, const char *text, size_t len,
                               const char *const *overrides, size_t noverrides,
                               struct iof_plan *out, char **canonical, struct iof_diag *diag)
{
    return plan_parse_impl(name, text, len, overrides, noverrides, out, canonical, diag);
}

char *proto_plan_text_indented(const char *canonical)
{
    cJSON *root = cJSON_Parse(canonical);
    char *text = NULL, *out = NULL;
    size_t n;

    if (root && proto_json_make_exact(root) == 0)
        text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return NULL;
    n = strlen(text);
    out = realloc(text, n + 2);
    if (!out) {
        free(text);
        return NULL;
    }
    out[n] = '\n';
    out[n + 1] = '\0';
    return out;
}

char *proto_plan_wire_text(const char *canonical)
{
    cJSON *root = cJSON_Parse(canonical), *run;
    char *text;

    if (!root)
        return NULL;
    run = cJSON_GetObjectItemCaseSensitive(root, "run");
    if (cJSON_IsObject(run)) {
        cJSON_DeleteItemFromObjectCaseSensitive(run, "cleanup");
        cJSON_DeleteItemFromObjectCaseSensitive(run, "target_histograms"); /* the manager's */
        cJSON_DeleteItemFromObjectCaseSensitive(run, "interval_histograms");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "notes"); /* the manager's */
    text = proto_json_print_exact(root);
    cJSON_Delete(root);
    return text;
}

int proto_plan_load(const char *path, const char *const *overrides, size_t noverrides,
                    struct iof_plan *out, struct iof_diag *diag)
{
    return proto_plan_load_canonical(path, overrides, noverrides, out, NULL, diag);
}

int proto_plan_load_canonical(const char *path, const char *const *overrides, size_t noverrides,
                              struct iof_plan *out, char **canonical, struct iof_diag *diag)
{
    struct iof_buf text = IOF_BUF_INIT;
    FILE *f;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!strcmp(path, "-")) {
        /* "-" is standard input, named "stdin" in messages; not closed. */
        f = stdin;
        path = "stdin";
    } else {
        f = fopen(path, "rb");
    }
    if (!f)
        return iof_diag_set(diag, IOF_EPLAN, "%s: cannot open: %s", path, strerror(errno));
    /* Read past the limit, so "too large" is exact. */
    while (text.len <= PROTO_PLAN_MAX_FILE) {
        size_t n;
        if (iof_buf_reserve(&text, 64 * 1024)) {
            rc = iof_diag_set(diag, -ENOMEM, "%s: out of memory", path);
            goto out;
        }
        n = fread(text.p + text.len, 1, text.cap - text.len - 1, f);
        iof_buf_commit(&text, n);
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        rc = iof_diag_set(diag, IOF_EPLAN, "%s: cannot read: %s", path, strerror(errno));
        goto out;
    }
    if (text.len > PROTO_PLAN_MAX_FILE) {
        rc = iof_diag_set(diag, IOF_EPLAN, "%s: is too large: the maximum is %u bytes", path,
                          PROTO_PLAN_MAX_FILE);
        goto out;
    }
    rc = plan_parse_impl(path, text.p, text.len, overrides, noverrides, out, canonical, diag);
out:
    iof_buf_free(&text);
    if (f != stdin)
        fclose(f);
    return rc;
}

/* ---- iofleet validate ---- */

/* s in full, escaped as for a terminal (names and paths are not cut here). */
static void print_raw(FILE *f, const char *s)
{
    iof_text_fput(f, s);
}

static void print_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    print_raw(f, s);
    fputc('\'', f);
}

static void print_nodes(FILE *f, const struct iof_worker_cfg *w)
{
    for (size_t i = 0; i < w->nnodes && i < 8; i++) {
        if (i)
            fputc(',', f);
        print_raw(f, w->nodes[i]);
    }
    if (w->nnodes > 8)
        fprintf(f, ",... (%zu nodes)", w->nnodes);
}

static void print_group(FILE *f, const struct iof_worker_cfg *w)
{
    fprintf(f, "nodes ");
    print_nodes(f, w);
    fprintf(f, ", %" PRIu32 " worker%s, %s, qd %" PRIu32 ", %zu target%s:", w->count,
            w->count == 1 ? "" : "s", w->engine, w->queue_depth, w->ntargets,
            w->ntargets == 1 ? "" : "s");
    for (size_t i = 0; i < w->ntargets && i < 4; i++) {
        fputc(' ', f);
        print_quoted(f, w->targets[i].path);
    }
    if (w->ntargets > 4)
        fprintf(f, " ...");
    if (w->data.enabled) {
        char b[32];
        proto_plan_format_size(w->data.unit, b, sizeof(b));
        fprintf(f, ", data dedupe %" PRIu32 "%% compress %" PRIu32 "%% per %s", w->data.dedupe_pct,
                w->data.compress_pct, b);
    } else {
        fprintf(f, ", pattern %s", iof_pattern_name(w->pattern));
    }
    if (w->verify.algo != IOF_VERIFY_NONE)
        fprintf(f, ", verify %s %s%s", verify_names[w->verify.algo],
                verify_mode_names[w->verify.mode],
                w->verify.stop ? ", stop at the first mismatch" : "");
    if (w->has_seed)
        fprintf(f, ", seed %" PRIu64, w->seed);
    if (w->offset_increment && w->offset_increment_pct) {
        fprintf(f, ", offset increment %" PRIu64 "%%", w->offset_increment);
    } else if (w->offset_increment) {
        char b[32];
        proto_plan_format_size(w->offset_increment, b, sizeof(b));
        fprintf(f, ", offset increment %s", b);
    }
    if (w->hipri)
        fprintf(f, ", polled completion (hipri)");
    if (w->rate.unit != IOF_RATE_NONE)
        fprintf(f, ", rate %g %s per worker (%s)", w->rate.value,
                w->rate.unit == IOF_RATE_IOPS ? "IOPS" : "MiB/s",
                iof_arrival_name(w->rate.arrival));
    fprintf(f, "\n");
}

static bool plan_has_io_limit(const struct iof_plan *p)
{
    for (size_t s = 0; s < p->nspecs; s++)
        if (p->specs[s].io_limit)
            return true;
    return false;
}

void proto_plan_print(const struct iof_plan *p, FILE *f)
{
    char a[32], b[32], d[32], dl[IOF_DIST_LABEL_MAX];
    size_t steps = iof_plan_cycle_steps(p), ntests = 0, npos = iof_plan_positions(p);
    bool own = false; /* some group runs its own specs */
    struct iof_test *tests;
    uint64_t per, total;

    for (size_t g = 0; g < p->nworkers; g++)
        own = own || p->workers[g].has_specs;
    proto_plan_format_duration(p->run.ramp_ns, a, sizeof(a));
    if (p->run.duration_ns)
        proto_plan_format_duration(p->run.duration_ns, b, sizeof(b));
    else
        snprintf(b, sizeof(b), "per spec");
    proto_plan_format_duration(p->run.interval_ns, d, sizeof(d));
    fprintf(f, "plan ");
    print_quoted(f, p->name);
    fprintf(f, "\n");
    fprintf(f, "run: ramp %s, duration %s, interval %s%s\n", a, b, d,
            p->run.cleanup ? ", cleanup (test files made by the run are removed at its end)" : "");
    for (size_t i = 0; i < p->nnotes; i++) {
        fprintf(f, "%s", i ? "       " : "notes: ");
        print_raw(f, p->notes[i]);
        fprintf(f, "\n");
    }
    if (p->nspec_cycle) {
        fprintf(f, "spec cycle:");
        for (size_t i = 0; i < p->nspec_cycle; i++) {
            const struct iof_spec_cycle *ax = &p->spec_cycle[i];
            fprintf(f, "%s %s", i ? " x" : "", spec_axis_names[ax->axis]);
            for (size_t v = 0; v < ax->nvalues; v++) {
                if (ax->axis == IOF_SPEC_AXIS_SIZE)
                    proto_plan_format_size(ax->values[v], a, sizeof(a));
                else
                    snprintf(a, sizeof(a), "%" PRIu64 "%%", ax->values[v]);
                fprintf(f, "%s%s", v ? ", " : " ", a);
            }
        }
        fprintf(f, " (%zu single-line spec%s expanded)\n", p->nspecs_cycled,
                p->nspecs_cycled == 1 ? "" : "s");
    }
    if (p->cycle.param == IOF_CYCLE_NONE) {
        if (!p->nspec_cycle)
            fprintf(f, "cycle: none\n");
    } else if (p->cycle.param == IOF_CYCLE_RATE && p->cycle.rate.find_max) {
        proto_plan_format_duration(p->cycle.rate.target_ns, a, sizeof(a));
        fprintf(f,
                "cycle: rate find_max %s <= %s (unthrottled for the ceiling, then at most %d "
                "rated steps of up to %d runs and %d confirmation runs; %zu tests per spec at "
                "most)\n",
                iof_knee_metric_name(p->cycle.rate.metric), a, IOF_FIND_MAX_STEPS,
                IOF_FIND_MAX_RUNS, IOF_FIND_MAX_CONFIRMS, steps);
    } else if (p->cycle.param == IOF_CYCLE_RATE) {
        fprintf(f, "cycle: rate curve unthrottled");
        for (size_t i = 0; i < p->cycle.rate.npct; i++)
            fprintf(f, ", %u%%", p->cycle.rate.pct[i]);
        fprintf(f, " of the unthrottled IOPS (%zu steps)\n", steps);
    } else {
        fprintf(f, "cycle: %s %" PRIu64 "..%" PRIu64 " step %c%" PRIu64 " (%zu step%s)\n",
                iof_cycle_param_name(p->cycle.param), p->cycle.from, p->cycle.to,
                p->cycle.exponential ? 'x' : '+', p->cycle.step, steps, steps == 1 ? "" : "s");
    }
    /* At most, per spec position (an io_limit may end a test sooner). */
    total = 0;
    for (size_t s = 0; s < npos; s++) {
        struct iof_test t1 = {.spec_index = (unsigned)s};
        struct iof_run_cfg r = iof_test_run(p, &t1);
        per = r.ramp_ns + r.duration_ns;
        total = total > UINT64_MAX - per ? UINT64_MAX : total + per;
    }
    total = total && steps > UINT64_MAX / total ? UINT64_MAX : total * steps;
    proto_plan_format_duration(total, a, sizeof(a));
    fprintf(f, "tests: %zu (%zu spec%s%s x %zu cycle step%s), %s%s of ramp and measurement\n",
            npos * steps, npos, npos == 1 ? "" : "s", own ? " per group" : "", steps,
            steps == 1 ? "" : "s", a,
            plan_has_io_limit(p) || (p->cycle.param == IOF_CYCLE_RATE && p->cycle.rate.find_max)
                ? " at most"
                : "");

    for (size_t s = 0; s < p->nspecs; s++) {
        const struct iof_spec *sp = &p->specs[s];
        fprintf(f, "\nspec %zu ", s);
        print_quoted(f, sp->name);
        if (sp->has_duration) {
            proto_plan_format_duration(sp->duration_ns, a, sizeof(a));
            fprintf(f, ", duration %s", a);
        }
        if (sp->has_ramp) {
            proto_plan_format_duration(sp->ramp_ns, a, sizeof(a));
            fprintf(f, ", ramp %s", a);
        }
        if (sp->io_limit) {
            proto_plan_format_size(sp->io_limit, a, sizeof(a));
            fprintf(f, ", io_limit %s per worker", a);
        }
        fprintf(f, "\n");
        fprintf(f, "  %4s %8s %6s %5s %7s %8s %8s %6s  %s\n", "line", "size", "share", "read",
                "random", "align", "delay", "burst", "distribution");
        for (size_t l = 0; l < sp->nlines; l++) {
            const struct iof_line *ln = &sp->lines[l];
            proto_plan_format_size(ln->size, a, sizeof(a));
            if (ln->align)
                proto_plan_format_size(ln->align, b, sizeof(b));
            else
                snprintf(b, sizeof(b), "auto");
            proto_plan_format_duration(ln->delay_ns, d, sizeof(d));
            iof_dist_label(&ln->dist, dl, sizeof(dl));
            fprintf(f,
                    "  %4zu %8s %5" PRIu32 "%% %4" PRIu32 "%% %6" PRIu32 "%% %8s %8s %6" PRIu32
                    "  %s\n",
                    l, a, ln->share, ln->read_pct, ln->random_pct, b, d, ln->burst, dl);
        }
    }

    fprintf(f, "\n");
    for (size_t g = 0; g < p->nworkers; g++) {
        const struct iof_worker_cfg *w = &p->workers[g];
        fprintf(f, "workers[%zu]: ", g);
        print_group(f, w);
        if (own) {
            fprintf(f, "  group ");
            print_quoted(f, w->name);
            fprintf(f, ", specs:");
            if (!w->has_specs)
                fprintf(f, " the plan's");
            for (size_t i = 0; w->has_specs && i < w->nspecs; i++) {
                fprintf(f, "%s ", i ? "," : "");
                print_quoted(f, p->specs[w->specs[i]].name);
            }
            fprintf(f, "\n");
        }
        for (size_t i = 0; i < w->ntargets; i++) {
            const struct iof_target_cfg *t = &w->targets[i];
            fprintf(f, "  target ");
            print_quoted(f, t->path);
            if (t->size) {
                proto_plan_format_size(t->size, a, sizeof(a));
                fprintf(f, " size %s", a);
            } else {
                fprintf(f, " (existing size)");
            }
            if (t->range_offset || t->range_size || t->range_size_pct) {
                if (t->range_offset_pct)
                    iof_target_range_label(t->range_offset, true, a, sizeof(a));
                else
                    proto_plan_format_size(t->range_offset, a, sizeof(a));
                if (t->range_size_pct)
                    iof_target_range_label(t->range_size, true, b, sizeof(b));
                else if (t->range_size)
                    proto_plan_format_size(t->range_size, b, sizeof(b));
                else
                    snprintf(b, sizeof(b), "rest");
                fprintf(f, " range offset %s size %s", a, b);
            }
            fprintf(f, "\n");
        }
    }

    tests = iof_plan_expand(p, &ntests);
    if (!tests) {
        fprintf(f, "\n(out of memory listing the tests)\n");
        return;
    }
    for (size_t i = 0; i < ntests; i++) {
        const struct iof_test *t = &tests[i];
        char label[64];
        iof_test_cycle_label(t, label, sizeof(label));
        if (own) {
            fprintf(f, "\ntest %zu/%zu: spec position %u%s%s\n", i + 1, ntests, t->spec_index,
                    label[0] ? ", " : "", label);
        } else {
            fprintf(f, "\ntest %zu/%zu: spec %u ", i + 1, ntests, t->spec_index);
            print_quoted(f, p->specs[t->spec_index].name);
            fprintf(f, "%s%s\n", label[0] ? ", " : "", label);
        }
        for (size_t g = 0; g < p->nworkers; g++) {
            struct iof_worker_cfg w = iof_test_worker(p, t, g);
            const struct iof_spec *sp = iof_test_spec(p, t, g);
            fprintf(f, "  workers[%zu]: ", g);
            if (own) {
                print_quoted(f, w.name);
                if (!sp) {
                    fprintf(f, " idle\n");
                    continue;
                }
                fprintf(f, " runs ");
                print_quoted(f, sp->name);
                fprintf(f, ": ");
            }
            print_group(f, &w);
        }
    }
    free(tests);
}
