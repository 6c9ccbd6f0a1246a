/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_workers.c - the plan's worker groups: nodes, engine and
 * queue depth, targets (with {A..B} path templates and ranges), offset
 * increment, rate, data content and verify. */
#include "proto/plan_internal.h"
#include "proto/name.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/ratecycle.h"

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
    const cJSON *arr = plan_member(jw, "nodes"), *e;
    size_t o = plan_path_key(c, "nodes"), n, i = 0;
    struct named *sorted;
    char q[96];
    int rc;

    if (!arr) {
        w->nodes = calloc(1, sizeof(*w->nodes));
        if (!w->nodes)
            return plan_nomem(c);
        w->nnodes = 1;
        w->nodes[0] = strdup("*");
        if (!w->nodes[0])
            return plan_nomem(c);
        plan_path_pop(c, o);
        return 0;
    }
    if ((rc = plan_check_entries(c, arr, &plan_worker_def, "nodes", &n)))
        return rc;
    w->nodes = calloc(n, sizeof(*w->nodes));
    if (!w->nodes)
        return plan_nomem(c);
    w->nnodes = n;
    cJSON_ArrayForEach(e, arr)
    {
        const char *s;
        struct iof_diag d;
        size_t oi = plan_path_index(c, i);
        if ((rc = plan_json_string(c, e, IOF_NAME_MAX - 1, &s)))
            return rc;
        /* The one rule of node names (proto/name.h); "*" is every agent. */
        if (strcmp(s, "*") && proto_node_name_check("node name", s, &d))
            return fail(c, "%s", d.msg);
        w->nodes[i] = strdup(s);
        if (!w->nodes[i])
            return plan_nomem(c);
        plan_path_pop(c, oi);
        i++;
    }
    /* Duplicates: sort (name, index) pairs and compare neighbours. */
    sorted = malloc(n * sizeof(*sorted));
    if (!sorted)
        return plan_nomem(c);
    for (i = 0; i < n; i++)
        sorted[i] = (struct named){w->nodes[i], i};
    qsort(sorted, n, sizeof(*sorted), named_cmp);
    for (i = 1; i < n; i++) {
        if (strcmp(sorted[i - 1].s, sorted[i].s) == 0) {
            size_t first = sorted[i - 1].i, dup = sorted[i].i;
            free(sorted);
            plan_path_index(c, dup);
            return fail(c, "duplicate node %s (also nodes[%zu])",
                        plan_quote(q, sizeof(q), w->nodes[dup]), first);
        }
    }
    free(sorted);
    plan_path_pop(c, o);
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

/* range.offset / range.size: a size, or "N%" of the target (offset 0%..99%,
 * size 1%..100%). */
static int range_member(struct pctx *c, const cJSON *r, const char *key, uint64_t min_pct,
                        uint64_t max_pct, uint64_t *v, bool *pct)
{
    const cJSON *it = plan_member(r, key);
    char g[96];
    size_t o;

    if (!it || !cJSON_IsString(it) || !strchr(it->valuestring, '%'))
        return plan_read_to(c, r, &plan_range_def, key, v);
    o = plan_path_key(c, key);
    if (!plan_pct_string(it, v) || *v < min_pct || *v > max_pct)
        return fail(c,
                    "must be a whole percentage %" PRIu64 "%%..%" PRIu64 "%% of the target, got %s",
                    min_pct, max_pct, plan_got(g, sizeof(g), it));
    *pct = true;
    plan_path_pop(c, o);
    return 0;
}

static int parse_range(struct pctx *c, const cJSON *jt, struct iof_target_cfg *t)
{
    const cJSON *r = plan_member(jt, "range");
    size_t o = plan_path_key(c, "range");
    char a[32], b[32], s[32], g[96];
    uint64_t start, end;
    int rc;

    if (!r) {
        plan_path_pop(c, o);
        return 0;
    }
    if ((rc = plan_check_object(c, r)) || (rc = plan_check_keys(c, r, &plan_range_def)))
        return rc;
    if ((rc = range_member(c, r, "offset", 0, 99, &t->range_offset, &t->range_offset_pct)) ||
        (rc = range_member(c, r, "size", 1, 100, &t->range_size, &t->range_size_pct)))
        return rc;
    if (!t->range_offset_pct && t->range_offset % DIRECT_IO_ALIGN) {
        plan_path_key(c, "offset");
        return fail(c, "must be a multiple of 512, got %s",
                    plan_got(g, sizeof(g), plan_member(r, "offset")));
    }
    if (!t->range_size_pct && t->range_size % DIRECT_IO_ALIGN) {
        plan_path_key(c, "size");
        return fail(c, "must be a multiple of 512, got %s",
                    plan_got(g, sizeof(g), plan_member(r, "size")));
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
        plan_path_pop(c, o);
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
    plan_path_pop(c, o);
    return 0;
}

/* The rules of one path (a plain `path`, or one value of a per-node map),
 * failing at the member the caller has pushed. */
static int path_rules(struct pctx *c, const char *path)
{
    char q[96];

    /* The agent enforces its own limits; refusing ".." here keeps a plan
     * from even asking (a relative path must stay inside the workdir, an
     * absolute one is compared with the --allow list as written). */
    if (has_dotdot(path))
        return fail(c, "must not contain a '..' component");
    /* The agent's own files in its workdir (ledger, verify state): a target
     * of that name would overwrite them and orphan the test files. */
    if (iof_target_name_reserved(path))
        return fail(c,
                    "%s: names starting with '" IOF_RESERVED_PREFIX
                    "' are reserved for the agent's own files (its test-file ledger and verify "
                    "state)",
                    plan_quote(q, sizeof(q), path));
    /* `iofleet import` writes an Iometer target it could not map this way. */
    if (!strncmp(path, "iometer:", 8))
        return fail(c,
                    "%s is an Iometer target placeholder: map it with iofleet import --map "
                    "'NAME=PATH' or --set",
                    plan_quote(q, sizeof(q), path));
    return 0;
}

/* A per-node map {"NODE": "PATH", ..., "*": "PATH"} (the path pushed):
 * keys node names or "*", each once; values paths under path_rules(); a
 * group naming its nodes needs an entry (or "*") for each of them. */
static int check_map(struct pctx *c, const cJSON *jp, const struct iof_worker_cfg *w)
{
    const cJSON *e, *e2;
    size_t n = 0;
    bool star = false;
    char q[96];
    int rc;

    cJSON_ArrayForEach(e, jp)
    {
        struct iof_diag d;
        const char *s;
        size_t o;
        if (++n > PROTO_PLAN_MAX_NODES + 1)
            return fail(c, "a per-node map has more than %u entries", PROTO_PLAN_MAX_NODES + 1);
        if (!strcmp(e->string, "*"))
            star = true;
        else if (proto_node_name_check("node name", e->string, &d))
            return fail(c, "%s (a key of a per-node map is an agent's name or \"*\")", d.msg);
        for (e2 = jp->child; e2 != e; e2 = e2->next)
            if (!strcmp(e2->string, e->string))
                return fail(c, "node %s is given twice", plan_quote(q, sizeof(q), e->string));
        o = plan_path_key(c, e->string);
        if ((rc = plan_json_string(c, e, IOF_PATH_MAX - 1, &s)) || (rc = path_rules(c, s)))
            return rc;
        plan_path_pop(c, o);
    }
    if (!n)
        return fail(c, "an empty map names no path: give {\"NODE\": \"PATH\", ...}, with \"*\" "
                       "for every other node");
    for (size_t i = 0; i < w->nnodes; i++)
        star |= !strcmp(w->nodes[i], "*"); /* every agent: checked once they are known */
    for (size_t i = 0; !star && i < w->nnodes; i++)
        if (!cJSON_GetObjectItemCaseSensitive(jp, w->nodes[i]))
            return fail(c, "no path for node %s and no \"*\" entry",
                        plan_quote(q, sizeof(q), w->nodes[i]));
    return 0;
}

static int parse_target(struct pctx *c, const cJSON *jt, struct iof_target_cfg *t,
                        const struct iof_worker_cfg *w)
{
    const char *path = t->path;
    const cJSON *jp;
    char g[96];
    size_t o;
    int rc;

    if ((rc = plan_check_object(c, jt)) || (rc = plan_check_keys(c, jt, &plan_target_def)))
        return rc;
    jp = plan_member(jt, "path");
    if (cJSON_IsObject(jp)) {
        const cJSON *star = cJSON_GetObjectItemCaseSensitive(jp, "*");
        o = plan_path_key(c, "path");
        if ((rc = check_map(c, jp, w)))
            return rc;
        plan_path_pop(c, o);
        /* The "*" entry (or nothing): the expansion fills the rest in. */
        snprintf(t->path, sizeof(t->path), "%s", cJSON_IsString(star) ? star->valuestring : "");
    } else {
        if ((rc = plan_read(c, jt, &plan_target_def, "path", t)))
            return rc;
        o = plan_path_key(c, "path");
        if ((rc = path_rules(c, path)))
            return rc;
        plan_path_pop(c, o);
    }
    if ((rc = plan_read(c, jt, &plan_target_def, "size", t)))
        return rc;
    if (t->size % TEST_FILE_ALIGN) {
        plan_path_key(c, "size");
        return fail(c, "must be a multiple of 4096, got %s",
                    plan_got(g, sizeof(g), plan_member(jt, "size")));
    }
    if (cJSON_IsObject(jp) && t->size == 0) {
        const cJSON *e;
        cJSON_ArrayForEach(e, jp)
        {
            char q[96], k[96];
            if (e->valuestring[0] == '/')
                continue;
            plan_path_key(c, "size");
            return fail(c,
                        "%s is a test file to create (the path of %s): give it a size greater "
                        "than 0",
                        plan_quote(q, sizeof(q), e->valuestring),
                        plan_quote(k, sizeof(k), e->string));
        }
    }
    if (!cJSON_IsObject(jp) && path[0] != '/' && t->size == 0) {
        plan_path_key(c, "size");
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

/* The path's template in *pt and *found, or a plan error at the member the
 * caller has pushed (the path, or a map's entry). */
static int path_template_find(struct pctx *c, const char *path, struct path_template *pt,
                              bool *found)
{
    enum template_why why;
    char q[96], r[96], raw[96];

    *found = template_scan(path, pt, &why);
    if (!*found || why == TPL_OK)
        return 0;
    snprintf(raw, sizeof(raw), "%.*s", (int)pt->len, path + pt->at);
    plan_quote(r, sizeof(r), raw);
    switch (why) {
    case TPL_MANY:
        return fail(c, "may hold one {A..B} range, got more in %s", plan_quote(q, sizeof(q), path));
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

/* Number v of template pt of path into out (the path itself when it has
 * none); false when it does not fit. */
static bool template_at(const char *path, const struct path_template *pt, bool found, uint64_t v,
                        char *out, size_t cap)
{
    int n = found ? snprintf(out, cap, "%.*s%0*" PRIu64 "%s", (int)pt->at, path, pt->width, v,
                             path + pt->at + pt->len)
                  : snprintf(out, cap, "%s", path);
    return n >= 0 && (size_t)n < cap;
}

static int template_too_long(struct pctx *c)
{
    return fail(c, "is too long once its range is expanded (the maximum is %d bytes)",
                IOF_PATH_MAX - 1);
}

/* Writes the n targets of template pt into out[0..n), copies of *t with the
 * range replaced by each number. */
static int path_template_expand(struct pctx *c, const struct iof_target_cfg *t,
                                const struct path_template *pt, struct iof_target_cfg *out)
{
    for (uint64_t v = pt->from; v <= pt->to; v++) {
        struct iof_target_cfg *o = &out[v - pt->from];
        *o = *t;
        if (!template_at(t->path, pt, true, v, o->path, sizeof(o->path))) {
            plan_path_key(c, "path");
            return template_too_long(c);
        }
    }
    return 0;
}

/* A per-node map's targets (checked by check_map; the path pushed): each
 * entry's {A..B} range expanded, all entries naming the same number of
 * targets; target j of the expansion takes every entry's j-th path. Appends
 * to w->targets from index *k (room counted by the caller). */
static int map_expand(struct pctx *c, const cJSON *jp, const struct iof_target_cfg *t,
                      struct iof_worker_cfg *w, size_t *k, size_t room)
{
    size_t n = (size_t)cJSON_GetArraySize(jp), i = 0, count = 0, nnodes = 0;
    struct path_template *pts = calloc(n, sizeof(*pts));
    bool *found = calloc(n, sizeof(*found));
    const cJSON *e, *first = NULL;
    char q[96], r[96], *buf = malloc(IOF_PATH_MAX);
    int rc = 0;

    if (!pts || !found || !buf) {
        rc = plan_nomem(c);
        goto out;
    }
    cJSON_ArrayForEach(e, jp)
    {
        size_t o = plan_path_key(c, e->string), cnt;
        if ((rc = path_template_find(c, e->valuestring, &pts[i], &found[i])))
            goto out;
        plan_path_pop(c, o);
        cnt = found[i] ? (size_t)(pts[i].to - pts[i].from + 1) : 1;
        if (!first) {
            first = e;
            count = cnt;
        } else if (cnt != count) {
            plan_quote(q, sizeof(q), first->string);
            plan_quote(r, sizeof(r), e->string);
            rc = fail(c,
                      "the entry of %s names %zu target%s and the entry of %s %zu: every entry "
                      "must name the same number of targets",
                      q, count, count == 1 ? "" : "s", r, cnt);
            goto out;
        }
        nnodes += strcmp(e->string, "*") != 0;
        i++;
    }
    if (count > room) { /* the count of the first pass was the first entry's */
        rc = fail(c, "names %zu targets, more than the group's maximum of %u", count,
                  PROTO_PLAN_MAX_TARGETS);
        goto out;
    }
    for (size_t j = 0; j < count; j++) {
        struct iof_target_cfg *o = &w->targets[*k];
        *o = *t;
        o->node_paths = calloc(nnodes ? nnodes : 1, sizeof(*o->node_paths));
        if (!o->node_paths) {
            rc = plan_nomem(c);
            goto out;
        }
        w->ntargets = ++*k; /* from here iof_plan_free() frees it */
        i = 0;
        cJSON_ArrayForEach(e, jp)
        {
            size_t o2 = plan_path_key(c, e->string);
            bool star = !strcmp(e->string, "*");
            if (!template_at(e->valuestring, &pts[i], found[i], pts[i].from + j,
                             star ? o->path : buf, star ? sizeof(o->path) : IOF_PATH_MAX)) {
                rc = template_too_long(c);
                goto out;
            }
            plan_path_pop(c, o2);
            if (!star) {
                struct iof_target_node_path *np = &o->node_paths[o->nnode_paths];
                np->node = strdup(e->string);
                np->path = strdup(buf);
                if (np->node || np->path)
                    o->nnode_paths++;
                if (!np->node || !np->path) {
                    rc = plan_nomem(c);
                    goto out;
                }
            }
            i++;
        }
    }
out:
    free(pts);
    free(found);
    free(buf);
    return rc;
}

/* "offset_increment": a size (a multiple of 512) or "N%" of the range. */
static int parse_offset_increment(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *it = plan_member(jw, "offset_increment");
    size_t o = plan_path_key(c, "offset_increment");
    char g[96];
    int rc;

    if (!it) {
        plan_path_pop(c, o);
        return 0;
    }
    if (cJSON_IsString(it) && it->valuestring[0] &&
        it->valuestring[strlen(it->valuestring) - 1] == '%') {
        const char *s = it->valuestring;
        uint64_t v = 0;
        size_t n = strlen(s) - 1;
        if (n == 0 || n > 3)
            return fail(c, "must be a whole percentage 0%%..100%%, got %s",
                        plan_got(g, sizeof(g), it));
        for (size_t i = 0; i < n; i++) {
            if (s[i] < '0' || s[i] > '9')
                return fail(c, "must be a whole percentage 0%%..100%%, got %s",
                            plan_got(g, sizeof(g), it));
            v = v * 10 + (uint64_t)(s[i] - '0');
        }
        if (v > 100)
            return fail(c, "must be a whole percentage 0%%..100%%, got %s",
                        plan_got(g, sizeof(g), it));
        w->offset_increment = v;
        w->offset_increment_pct = true;
        plan_path_pop(c, o);
        return 0;
    }
    if (!cJSON_IsString(it) && !cJSON_IsNumber(it))
        return fail(c, "must be a size (\"64m\") or a percentage of the range (\"25%%\"), got %s",
                    plan_jtype(it));
    if ((rc = plan_json_size(c, it, &w->offset_increment)))
        return rc;
    if (w->offset_increment % DIRECT_IO_ALIGN)
        return fail(c, "must be a multiple of 512, got %s", plan_got(g, sizeof(g), it));
    plan_path_pop(c, o);
    return 0;
}

/* "data": {"dedupe": "50%", "compress": "60%", "dedupe_unit": "4k"}. */
static int parse_data(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *jd = plan_member(jw, "data");
    size_t o = plan_path_key(c, "data");
    uint64_t unit;
    char g[96];
    int rc;

    if (!jd) {
        plan_path_pop(c, o);
        return 0;
    }
    if ((rc = plan_check_object(c, jd)) || (rc = plan_check_keys(c, jd, &plan_data_def)))
        return rc;
    if (plan_member(jw, "pattern")) {
        plan_path_pop(c, o);
        plan_path_key(c, "pattern");
        return fail(c, "cannot be given with \"data\" (the data content replaces the pattern)");
    }
    if ((rc = plan_read(c, jd, &plan_data_def, "dedupe", &w->data)) ||
        (rc = plan_read(c, jd, &plan_data_def, "compress", &w->data)) ||
        (rc = plan_read_to(c, jd, &plan_data_def, "dedupe_unit", &unit)))
        return rc;
    if (unit & (unit - 1)) {
        plan_path_key(c, "dedupe_unit");
        return fail(c, "must be a power of two, got %s",
                    plan_got(g, sizeof(g), plan_member(jd, "dedupe_unit")));
    }
    w->data.unit = (uint32_t)unit;
    w->data.enabled = true;
    plan_path_pop(c, o);
    return 0;
}

/* "verify": "crc32c" | "xxh64" | "none" (or true: the default checksum,
 * false: none), "verify_mode", "verify_stop". */
static int parse_verify(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *it = plan_member(jw, "verify");
    uint64_t idx;
    int rc;

    if (it && cJSON_IsBool(it)) {
        w->verify.algo = cJSON_IsTrue(it) ? IOF_VERIFY_DEFAULT : IOF_VERIFY_NONE;
    } else {
        if ((rc = plan_read_to(c, jw, &plan_worker_def, "verify", &idx)))
            return rc;
        w->verify.algo = (enum iof_verify_algo)idx;
    }
    if ((rc = plan_read(c, jw, &plan_worker_def, "verify_mode", w)) ||
        (rc = plan_read(c, jw, &plan_worker_def, "verify_stop", w)))
        return rc;
    if (w->verify.algo == IOF_VERIFY_NONE) {
        const char *k = plan_member(jw, "verify_mode")   ? "verify_mode"
                        : plan_member(jw, "verify_stop") ? "verify_stop"
                                                         : NULL;
        if (k) {
            plan_path_key(c, k);
            return fail(c, "needs \"verify\" (a checksum: crc32c or xxh64)");
        }
        return 0;
    }
    if (w->data.enabled) {
        plan_path_key(c, "verify");
        return fail(c, "cannot be combined with \"data\" (a verified block carries a header that "
                       "makes it unique and less compressible)");
    }
    if (!plan_engine_facts(w->engine)->touches_files) {
        plan_path_key(c, "verify");
        return fail(c, "needs an engine that does I/O (this group uses %s)", w->engine);
    }
    return 0;
}

/* The first path a target entry names: its path, or its per-node map's
 * first string value; NULL when it has neither. */
static const char *entry_first_path(const cJSON *jt)
{
    const cJSON *jp = cJSON_IsObject(jt) ? cJSON_GetObjectItemCaseSensitive(jt, "path") : NULL;

    if (cJSON_IsObject(jp))
        jp = jp->child;
    return cJSON_IsString(jp) ? jp->valuestring : NULL;
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
        const char *first = entry_first_path(jt);
        total += first ? template_count(first) : 1;
    }
    if (total > PROTO_PLAN_MAX_TARGETS)
        return fail(c,
                    "%zu entries name %zu targets once their {A..B} ranges are expanded, the "
                    "maximum is %u",
                    n, total, PROTO_PLAN_MAX_TARGETS);
    w->targets = calloc(total, sizeof(*w->targets));
    if (!w->targets)
        return plan_nomem(c);
    cJSON_ArrayForEach(jt, arr)
    {
        size_t oi = plan_path_index(c, i), op;
        struct iof_target_cfg t = {0};
        struct path_template pt;
        bool found;
        if ((rc = parse_target(c, jt, &t, w)))
            return rc;
        jp = plan_member(jt, "path");
        op = plan_path_key(c, "path");
        if (cJSON_IsObject(jp)) {
            /* Room: what the first pass counted for the entries after this one. */
            size_t after = 0;
            for (const cJSON *x = jt->next; x; x = x->next)
                after += entry_first_path(x) ? template_count(entry_first_path(x)) : 1;
            if ((rc = map_expand(c, jp, &t, w, &k, total - k - after)))
                return rc;
        } else {
            if ((rc = path_template_find(c, t.path, &pt, &found)))
                return rc;
            plan_path_pop(c, op);
            if (found) {
                if ((rc = path_template_expand(c, &t, &pt, &w->targets[k])))
                    return rc;
                k += (size_t)(pt.to - pt.from + 1);
            } else {
                w->targets[k++] = t;
            }
        }
        w->ntargets = k;
        plan_path_pop(c, oi);
        i++;
    }
    return 0;
}

/* "rate": {"iops": N} or {"mibps": N}, "arrival": "uniform" | "poisson". */
static int parse_rate(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w)
{
    const cJSON *r = plan_member(jw, "rate"), *iops, *mibps, *it;
    size_t o = plan_path_key(c, "rate"), o2;
    uint64_t idx;
    double max;
    char g[96];
    int rc;

    if (!r) {
        plan_path_pop(c, o);
        return 0;
    }
    if ((rc = plan_check_object(c, r)) || (rc = plan_check_keys(c, r, &plan_rate_def)))
        return rc;
    iops = plan_member(r, "iops");
    mibps = plan_member(r, "mibps");
    if (iops && mibps)
        return fail(c, "give one of iops and mibps, not both");
    if (!iops && !mibps)
        return fail(c, "needs iops or mibps");
    it = iops ? iops : mibps;
    max = iops ? IOF_RATE_MAX_IOPS : IOF_RATE_MAX_MIBPS;
    o2 = plan_path_key(c, iops ? "iops" : "mibps");
    if (!cJSON_IsNumber(it))
        return fail(c, "must be a number, got %s", plan_jtype(it));
    if (!isfinite(it->valuedouble) || it->valuedouble < IOF_RATE_MIN || it->valuedouble > max)
        return fail(c, "must be %g..%.0f per worker, got %s", IOF_RATE_MIN, max,
                    plan_got(g, sizeof(g), it));
    plan_path_pop(c, o2);
    w->rate.unit = iops ? IOF_RATE_IOPS : IOF_RATE_MIBPS;
    w->rate.value = it->valuedouble;
    if ((rc = plan_read_to(c, r, &plan_rate_def, "arrival", &idx)))
        return rc;
    w->rate.arrival = (enum iof_arrival)idx;
    plan_path_pop(c, o);
    return 0;
}

/* A group's own specs (Iometer's per-worker assignment): names of the
 * plan's specs, resolved to indices; a spec cycle later replaces each by
 * its expansion (spec_cycle_regroup). */
static int parse_group_specs(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w,
                             const struct iof_plan *p)
{
    const cJSON *arr = plan_member(jw, "specs"), *e;
    size_t o, n, i = 0;
    char q[96];
    int rc;

    if (!arr)
        return 0;
    o = plan_path_key(c, "specs");
    if ((rc = plan_check_entries(c, arr, &plan_worker_def, "specs", &n)))
        return rc;
    w->specs = calloc(n, sizeof(*w->specs));
    if (!w->specs)
        return plan_nomem(c);
    w->nspecs = n;
    w->has_specs = true;
    cJSON_ArrayForEach(e, arr)
    {
        const char *name;
        size_t oi = plan_path_index(c, i), k = 0;
        if ((rc = plan_json_string(c, e, IOF_NAME_MAX - 1, &name)))
            return rc;
        while (k < p->nspecs && strcmp(p->specs[k].name, name) != 0)
            k++;
        if (k == p->nspecs)
            return fail(c, "names no spec of the plan's specs, got %s",
                        plan_quote(q, sizeof(q), name));
        w->specs[i++] = (unsigned)k;
        plan_path_pop(c, oi);
    }
    plan_path_pop(c, o);
    return 0;
}

static int parse_worker(struct pctx *c, const cJSON *jw, struct iof_worker_cfg *w,
                        const struct iof_plan *p, size_t gi)
{
    const cJSON *arr;
    uint64_t idx;
    size_t n, o;
    int rc;

    if ((rc = plan_check_object(c, jw)) || (rc = plan_check_keys(c, jw, &plan_worker_def)))
        return rc;
    if (plan_member(jw, "name")) {
        if ((rc = plan_read(c, jw, &plan_worker_def, "name", w)))
            return rc;
    } else {
        snprintf(w->name, sizeof(w->name), "workers[%zu]", gi);
    }
    if ((rc = parse_group_specs(c, jw, w, p)))
        return rc;
    if ((rc = parse_nodes(c, jw, w)))
        return rc;
    if ((rc = plan_read(c, jw, &plan_worker_def, "count", w)) ||
        (rc = plan_read_to(c, jw, &plan_worker_def, "engine", &idx)))
        return rc;
    snprintf(w->engine, sizeof(w->engine), "%s", plan_engine_names[idx]);
    w->engine_given = plan_member(jw, "engine") != NULL;
    if ((rc = plan_read(c, jw, &plan_worker_def, "queue_depth", w)))
        return rc;

    arr = plan_member(jw, "targets");
    o = plan_path_key(c, "targets");
    if (!arr)
        return fail(c, "required but missing");
    if ((rc = plan_check_entries(c, arr, &plan_worker_def, "targets", &n)))
        return rc;
    if ((rc = parse_targets(c, arr, n, w)))
        return rc;
    plan_path_pop(c, o);

    if ((rc = plan_read(c, jw, &plan_worker_def, "pattern", w)))
        return rc;
    if (plan_member(jw, "seed")) {
        if ((rc = plan_read(c, jw, &plan_worker_def, "seed", w)))
            return rc;
        w->has_seed = true;
    }
    if ((rc = parse_offset_increment(c, jw, w)))
        return rc;
    if ((rc = plan_read(c, jw, &plan_worker_def, "hipri", w)))
        return rc;
    if (w->hipri && !plan_engine_facts(w->engine)->hipri) {
        plan_path_key(c, "hipri");
        return fail(c, "polled completion needs engine io_uring (this group uses %s)", w->engine);
    }
    if ((rc = parse_rate(c, jw, w)) || (rc = parse_data(c, jw, w)) || (rc = parse_verify(c, jw, w)))
        return rc;
    return 0;
}

int plan_parse_workers(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *arr = plan_member(root, "workers"), *jw;
    size_t o = plan_path_key(c, "workers"), n, i = 0;
    int rc;

    if (!arr)
        return fail(c, "required but missing");
    if ((rc = plan_check_entries(c, arr, &plan_root_def, "workers", &n)))
        return rc;
    p->workers = calloc(n, sizeof(*p->workers));
    if (!p->workers)
        return plan_nomem(c);
    p->nworkers = n;
    cJSON_ArrayForEach(jw, arr)
    {
        size_t oi = plan_path_index(c, i);
        if ((rc = parse_worker(c, jw, &p->workers[i], p, i)))
            return rc;
        plan_path_pop(c, oi);
        i++;
    }
    /* Group names key the per-group result rows: unique. */
    for (i = 1; i < n; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p->workers[i].name, p->workers[j].name) == 0) {
                char q[96];
                plan_path_index(c, i);
                plan_path_key(c, "name");
                return fail(c, "duplicate group name %s (also workers[%zu])",
                            plan_quote(q, sizeof(q), p->workers[i].name), j);
            }
        }
    }
    plan_path_pop(c, o);
    return 0;
}
