/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan.c - the plan loader: JSON text -> struct iof_plan.
 *
 * Pipeline: bounded read -> refuse NUL bytes and \u0000 escapes (C strings
 * cannot carry them; a path cut at a NUL would name another file) -> cJSON
 * parse -> apply --set overrides to the tree -> validate field by field while
 * filling the struct -> cross-field checks. The tree is freed on every path
 * out of proto_plan_parse(); on error the half-filled plan is freed too.
 * The steps live beside it: plan_field.c (readers, schema), plan_units.c,
 * plan_workers.c, plan_check.c, plan_cycle.c, plan_set.c, plan_print.c.
 */
#include "proto/plan_internal.h"
#include "proto/json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

/* ---- the plan, member by member ---- */

static int parse_run(struct pctx *c, const cJSON *root, struct iof_run_cfg *r)
{
    const cJSON *run = plan_member(root, "run");
    size_t o = plan_path_key(c, "run"), o2;
    char d[32], g[96];
    int rc;

    if (!run)
        return fail(c, "required but missing");
    if ((rc = plan_check_object(c, run)) || (rc = plan_check_keys(c, run, &plan_run_def)))
        return rc;
    if ((rc = plan_read(c, run, &plan_run_def, "ramp", r)) ||
        (rc = plan_read(c, run, &plan_run_def, "duration", r)) ||
        (rc = plan_read(c, run, &plan_run_def, "interval", r)) ||
        (rc = plan_read(c, run, &plan_run_def, "cleanup", r)))
        return rc;
    if (plan_member(run, "target_histograms")) {
        bool keep;
        if ((rc = plan_read_to(c, run, &plan_run_def, "target_histograms", &keep)))
            return rc;
        r->target_hists = keep ? IOF_TARGET_HISTS_ALWAYS : IOF_TARGET_HISTS_NEVER;
    }
    if (plan_member(run, "interval_histograms")) {
        bool keep;
        if ((rc = plan_read_to(c, run, &plan_run_def, "interval_histograms", &keep)))
            return rc;
        r->interval_hists = keep ? IOF_TARGET_HISTS_ALWAYS : IOF_TARGET_HISTS_NEVER;
    }
    /* run.duration may be left out when every spec has a duration or an
     * io_limit of its own (plan_run_check); given, it must be positive. */
    if (plan_member(run, "duration") && r->duration_ns == 0) {
        plan_path_key(c, "duration");
        return fail(c, "must be greater than 0");
    }
    if (r->interval_ns < PROTO_PLAN_MIN_INTERVAL_NS) {
        plan_path_key(c, "interval");
        return fail(c, "must be at least 100ms, got %s",
                    plan_got(g, sizeof(g), plan_member(run, "interval")));
    }
    if (r->duration_ns && r->interval_ns > r->duration_ns) {
        o2 = plan_path_key(c, "interval");
        proto_plan_format_duration(r->duration_ns, d, sizeof(d));
        if (plan_member(run, "interval"))
            return fail(c, "must not exceed run.duration (%s), got %s", d,
                        plan_got(g, sizeof(g), plan_member(run, "interval")));
        plan_path_pop(c, o2);
        plan_path_key(c, "duration");
        return fail(c, "must be at least run.interval (1s when not given), got %s",
                    plan_got(g, sizeof(g), plan_member(run, "duration")));
    }
    plan_path_pop(c, o);
    return 0;
}

static int parse_line(struct pctx *c, const cJSON *jl, struct iof_line *l, size_t nlines)
{
    const char *dist;
    uint64_t map;
    char g[96], why[160];
    int rc;

    if ((rc = plan_check_object(c, jl)) || (rc = plan_check_keys(c, jl, &plan_line_def)))
        return rc;
    if ((rc = plan_read(c, jl, &plan_line_def, "size", l)))
        return rc;
    if (nlines > 1 && !plan_member(jl, "share")) {
        plan_path_key(c, "share");
        return fail(c, "required when a spec has more than one line");
    }
    if ((rc = plan_read(c, jl, &plan_line_def, "share", l)) ||
        (rc = plan_read(c, jl, &plan_line_def, "read", l)) ||
        (rc = plan_read(c, jl, &plan_line_def, "random", l)) ||
        (rc = plan_read(c, jl, &plan_line_def, "align", l)))
        return rc;
    if (l->align % DIRECT_IO_ALIGN) {
        plan_path_key(c, "align");
        return fail(
            c, "must be 0 (automatic: aligned to the transfer size) or a multiple of 512, got %s",
            plan_got(g, sizeof(g), plan_member(jl, "align")));
    }
    if ((rc = plan_read(c, jl, &plan_line_def, "delay", l)) ||
        (rc = plan_read(c, jl, &plan_line_def, "burst", l)) ||
        (rc = plan_read_to(c, jl, &plan_line_def, "distribution", &dist)))
        return rc;
    if (iof_dist_parse(dist, &l->dist, why, sizeof(why))) {
        plan_path_key(c, "distribution");
        return fail(c, "%s, got %s", why, plan_got(g, sizeof(g), plan_member(jl, "distribution")));
    }
    /* "random_map": "once_per_pass" walks the random slots as fio's random
     * map does, each once per pass (dynamo/gen.h); "none" draws them. */
    if ((rc = plan_read_to(c, jl, &plan_line_def, "random_map", &map)))
        return rc;
    l->random_once = map == 1;
    if (l->random_once && l->dist.kind != IOF_DIST_UNIFORM) {
        plan_path_key(c, "random_map");
        return fail(c, "once_per_pass needs the uniform distribution (a skewed one repeats slots "
                       "by design)");
    }
    return 0;
}

static int parse_spec(struct pctx *c, const cJSON *js, struct iof_spec *s)
{
    const cJSON *lines, *jl;
    uint64_t sum = 0;
    size_t n, k = 0, o;
    int rc;

    if ((rc = plan_check_object(c, js)) || (rc = plan_check_keys(c, js, &plan_spec_def)))
        return rc;
    if ((rc = plan_read(c, js, &plan_spec_def, "name", s)))
        return rc;
    lines = plan_member(js, "lines");
    o = plan_path_key(c, "lines");
    if (!lines)
        return fail(c, "required but missing");
    if ((rc = plan_check_entries(c, lines, &plan_spec_def, "lines", &n)))
        return rc;
    s->lines = calloc(n, sizeof(*s->lines));
    if (!s->lines)
        return plan_nomem(c);
    s->nlines = n;
    cJSON_ArrayForEach(jl, lines)
    {
        size_t oi = plan_path_index(c, k);
        if ((rc = parse_line(c, jl, &s->lines[k], n)))
            return rc;
        sum += s->lines[k].share;
        plan_path_pop(c, oi);
        k++;
    }
    if (sum != 100)
        return fail(c, "shares must add up to 100, got %" PRIu64, sum);
    plan_path_pop(c, o);
    s->has_duration = plan_member(js, "duration") != NULL;
    s->has_ramp = plan_member(js, "ramp") != NULL;
    if ((rc = plan_read(c, js, &plan_spec_def, "duration", s)) ||
        (rc = plan_read(c, js, &plan_spec_def, "ramp", s)) ||
        (rc = plan_read(c, js, &plan_spec_def, "io_limit", s)))
        return rc;
    if (s->has_duration && s->duration_ns == 0) {
        plan_path_key(c, "duration");
        return fail(c, "must be greater than 0");
    }
    if (plan_member(js, "io_limit") && s->io_limit == 0) {
        plan_path_key(c, "io_limit");
        return fail(c, "must be greater than 0 (leave it out for no limit)");
    }
    return 0;
}

static int parse_specs(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *arr = plan_member(root, "specs"), *js;
    size_t o = plan_path_key(c, "specs"), n, i = 0;
    char q[96];
    int rc;

    if (!arr)
        return fail(c, "required but missing");
    if ((rc = plan_check_entries(c, arr, &plan_root_def, "specs", &n)))
        return rc;
    p->specs = calloc(n, sizeof(*p->specs));
    if (!p->specs)
        return plan_nomem(c);
    p->nspecs = n;
    cJSON_ArrayForEach(js, arr)
    {
        size_t oi = plan_path_index(c, i);
        if ((rc = parse_spec(c, js, &p->specs[i])))
            return rc;
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p->specs[j].name, p->specs[i].name) == 0) {
                plan_path_key(c, "name");
                return fail(c, "duplicate spec name %s (also specs[%zu])",
                            plan_quote(q, sizeof(q), p->specs[i].name), j);
            }
        }
        plan_path_pop(c, oi);
        i++;
    }
    plan_path_pop(c, o);
    return 0;
}

/* "notes": what an import approximated, kept with the plan and shown by
 * validate; no effect on the run (the agents never see them). */
static int parse_notes(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    const cJSON *arr = plan_member(root, "notes"), *e;
    size_t o = plan_path_key(c, "notes"), n, i = 0;
    int rc;

    if (!arr) {
        plan_path_pop(c, o);
        return 0;
    }
    if ((rc = plan_check_entries(c, arr, &plan_root_def, "notes", &n)))
        return rc;
    if (n && !(p->notes = calloc(n, sizeof(*p->notes))))
        return plan_nomem(c);
    cJSON_ArrayForEach(e, arr)
    {
        const char *s;
        size_t oi = plan_path_index(c, i);
        if ((rc = plan_json_string(c, e, PROTO_PLAN_MAX_NOTE, &s)))
            return rc;
        if (!(p->notes[i] = strdup(s)))
            return plan_nomem(c);
        p->nnotes = ++i;
        plan_path_pop(c, oi);
    }
    plan_path_pop(c, o);
    return 0;
}

static int parse_root(struct pctx *c, const cJSON *root, struct iof_plan *p)
{
    int rc;

    if ((rc = plan_check_keys(c, root, &plan_root_def)) ||
        (rc = plan_read(c, root, &plan_root_def, "name", p)))
        return rc;
    if ((rc = parse_notes(c, root, p)))
        return rc;
    if ((rc = parse_run(c, root, &p->run)) || (rc = parse_specs(c, root, p)) ||
        (rc = plan_parse_workers(c, root, p)) || (rc = plan_parse_cycle(c, root, p)))
        return rc;
    if ((rc = plan_run_check(c, root, p)) || (rc = plan_cross_check(c, p)) ||
        (rc = plan_parse_spec_cycle(c, root, p)))
        return rc;
    return plan_node_check(c, p);
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
size_t plan_find_nul(const char *t, size_t len, bool *escape)
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
    off = plan_find_nul(text, len, &esc);
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
                        plan_sanitize(tok, sizeof(tok), jf.token), jf.cause);
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
        rc = fail(&c, "must be a JSON object, got %s", plan_jtype(root));
        goto out;
    }
    if (noverrides) {
        canon = calloc(noverrides, sizeof(*canon));
        if (!canon) {
            rc = plan_nomem(&c);
            goto out;
        }
    }
    for (size_t i = 0; i < noverrides; i++) {
        rc = plan_ov_apply(root, overrides[i], canon[i], sizeof(canon[i]), diag);
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
                         plan_sanitize(a, sizeof(a), overrides[i]));
                break;
            }
        }
    }
    if (rc == 0 && canonical) {
        *canonical = proto_json_print_exact(root);
        if (!*canonical)
            rc = plan_nomem(&c);
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
    cJSON *root = cJSON_Parse(canonical), *run, *w, *t;
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
    /* A per-node map of "*" alone is a plain path: no agent needs to be sent
     * one of its own (proto_plan_node_text), and every agent reads it. */
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(root, "workers"))
    {
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(w, "targets"))
        {
            cJSON *path = cJSON_GetObjectItemCaseSensitive(t, "path"), *s;
            if (!cJSON_IsObject(path) || !path->child || path->child->next ||
                strcmp(path->child->string, "*") || !cJSON_IsString(path->child))
                continue;
            s = cJSON_CreateString(path->child->valuestring);
            if (!s || !cJSON_ReplaceItemInObjectCaseSensitive(t, "path", s)) {
                cJSON_Delete(s);
                cJSON_Delete(root);
                return NULL;
            }
        }
    }
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
