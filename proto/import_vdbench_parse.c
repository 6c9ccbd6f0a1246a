/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_vdbench_parse.c - the vdbench importer's reader
 * (proto/import_vdbench.h): comment and continuation lines, KEYWORD=VALUE
 * tokens into sd=/wd=/rd=/hd= definitions and general parameters, include=
 * read in place, kind=default inheritance, list selection ("(sd1-sd8)",
 * "sd*"), and the tables of the parameters each kind takes: refused by name,
 * ignored, or left to the mapper (proto/import_vdbench.c). */
#include "proto/import_vdbench.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "proto/import_lines.h"
#include "proto/plan.h"
#include "common/jsonw.h"

/* One message; a note is also kept in the plan's notes. */
void proto_vdb_msg(struct vdb_ctx *c, const char *file, unsigned line, const char *fmt, ...)
{
    char text[2 * IOF_IMPORT_MAX_LINE], note[sizeof(text) + 256];
    size_t n;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    proto_import_msg(c->msgs, file, line, "%s", text);
    if (!strncmp(text, "error:", 6))
        c->failed = true;
    if (c->failed || strncmp(text, "note:", 5) || c->nnotes >= PROTO_PLAN_MAX_NOTES)
        return;
    snprintf(note, sizeof(note), "%.200s:%u: %s", file, line, text);
    if ((n = strlen(note)) > PROTO_PLAN_MAX_NOTE) {
        n = PROTO_PLAN_MAX_NOTE;
        while (n && ((unsigned char)note[n] & 0xc0) == 0x80)
            n--;
        note[n] = 0;
    }
    iof_buf_addstr(&c->notes, c->nnotes++ ? ", " : "");
    iof_json_escape(&c->notes, note, IOF_JSON_TEXT);
}

static char *vdb_own(struct vdb_ctx *c, char *p)
{
    if (!p || iof_array_grow((void **)&c->owned, &c->capowned, c->nowned + 1, sizeof(*c->owned))) {
        free(p);
        return NULL;
    }
    c->owned[c->nowned++] = p;
    return p;
}

/* ---- values ---- */

/* A vdbench size: a whole number with an optional k/m/g/t (powers of 1024);
 * a fraction only where it makes whole bytes ("1.5k"). */
int proto_vdb_size(const char *s, uint64_t *out)
{
    char *end;
    long double v;
    uint64_t mul = 1;

    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtold(s, &end);
    if (errno)
        return -ERANGE;
    switch (tolower((unsigned char)*end)) {
    case 'k':
        mul = 1ull << 10;
        break;
    case 'm':
        mul = 1ull << 20;
        break;
    case 'g':
        mul = 1ull << 30;
        break;
    case 't':
        mul = 1ull << 40;
        break;
    case 0:
        break;
    default:
        return -EINVAL;
    }
    if (*end)
        end++;
    if (*end)
        return -EINVAL;
    v *= (long double)mul;
    if (v >= 18446744073709551616.0L || v != (long double)(uint64_t)v)
        return -ERANGE;
    *out = (uint64_t)v;
    return 0;
}

/* A number; *whole tells whether it has no fraction. */
int proto_vdb_num(const char *s, double *out)
{
    char *end;

    if (!isdigit((unsigned char)*s) && *s != '.')
        return -EINVAL;
    errno = 0;
    *out = strtod(s, &end);
    return errno || *end ? -EINVAL : 0;
}

/* Splits "(a,b,c)" or "a" (v, kv's value or a default) into at most max
 * items pointing into buf (at least IOF_IMPORT_MAX_LINE + 1 bytes, so a
 * value always fits); 0 with an error naming kv when there are more. */
size_t proto_vdb_list(struct vdb_ctx *c, const struct vdb_kv *kv, const char *v, char *buf,
                      char **items, size_t max)
{
    size_t n = 0, len;
    char *p;

    snprintf(buf, IOF_IMPORT_MAX_LINE + 1, "%s", v);
    p = buf;
    len = strlen(p);
    if (*p == '(' && len >= 2 && p[len - 1] == ')') {
        p[len - 1] = 0;
        p++;
    }
    for (;;) {
        char *comma = strchr(p, ',');
        if (n == max) {
            proto_vdb_msg(c, kv->file, kv->line, "error: cannot map %s=%s: more than %zu values",
                          kv->key, kv->val, max);
            return 0;
        }
        if (comma)
            *comma = 0;
        items[n++] = p;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

/* ---- parsing ---- */

static const char *const vdb_general[] = {
    "compratio",      "dedupratio", "dedupunit",      "dedupsets", "data_errors",
    "messagescan",    "report",     "histogram",      "validate",  "journal",
    "concatenatesds", "debug",      "create_anchors", "formatsds", "loop",
    "startcmd",       "endcmd",     "showlba",        "monitor",   "swat"};

static bool vdb_is_general(const char *k)
{
    for (size_t i = 0; i < sizeof(vdb_general) / sizeof(vdb_general[0]); i++)
        if (!strcasecmp(k, vdb_general[i]))
            return true;
    return false;
}

/* include=NAME: the file read in place, from the including file's directory. */
static int vdb_include(struct vdb_ctx *c, const char *file, unsigned line, const char *val)
{
    char path[4096], *buf;
    FILE *f;
    int rerr;
    size_t len = 0;

    if (!c->dir) {
        proto_vdb_msg(c, file, line, "error: cannot map include=%s: import the file from disk",
                      val);
        return 0;
    }
    if (c->depth >= VDB_MAX_INCLUDE) {
        proto_vdb_msg(c, file, line, "error: include=%s: more than %d nested includes", val,
                      VDB_MAX_INCLUDE);
        return 0;
    }
    if (val[0] == '/')
        snprintf(path, sizeof(path), "%s", val);
    else
        snprintf(path, sizeof(path), "%s/%s", c->dir, val);
    if (!(buf = vdb_own(c, malloc(IOF_IMPORT_MAX_TEXT + 1))))
        return -ENOMEM;
    /* stdio, not open(2): the importers build on Windows too. */
    f = fopen(path, "rb");
    if (!f) {
        proto_vdb_msg(c, file, line, "error: include=%s: %s", val, strerror(errno));
        return 0;
    }
    len = fread(buf, 1, IOF_IMPORT_MAX_TEXT + 1, f);
    rerr = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (rerr || len > IOF_IMPORT_MAX_TEXT || memchr(buf, 0, len)) {
        proto_vdb_msg(c, file, line, "error: include=%s: %s", val,
                      rerr ? strerror(rerr) : "not a parameter file (too large or binary)");
        return 0;
    }
    buf[len] = 0;
    {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        char *bname = vdb_own(c, strdup(base));
        int rc;
        if (!bname)
            return -ENOMEM;
        c->depth++;
        rc = proto_vdb_parse(c, bname, buf);
        c->depth--;
        return rc;
    }
}

/* Adds one "key=value" token: a new definition (sd=, wd=, rd=, hd=, or a
 * general parameter before them) or a parameter of the open one. sd= in a
 * wd= (and wd= in an rd=) names the SDs (WDs) it uses. */
static int vdb_token(struct vdb_ctx *c, const char *file, unsigned line, char *tok, bool *open)
{
    char *eq = strchr(tok, '='), *k = tok, *v;
    const struct vdb_def *last;
    bool defkey, ref;

    if (!eq || eq == tok) {
        proto_vdb_msg(c, file, line, "error: '%s' is not KEYWORD=VALUE", tok);
        return 0;
    }
    *eq = 0;
    v = eq + 1;
    if (strpbrk(k, " \t") || strpbrk(v, " \t")) {
        proto_vdb_msg(c, file, line, "error: a blank in '%s=%s' (vdbench parameters have none)", k,
                      v);
        return 0;
    }
    for (char *p = k; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (!*v) {
        proto_vdb_msg(c, file, line, "error: %s= has no value", k);
        return 0;
    }
    if (!strcmp(k, "include")) {
        *open = false;
        return vdb_include(c, file, line, v);
    }
    if (!strcmp(k, "fsd") || !strcmp(k, "fwd")) {
        proto_vdb_msg(
            c, file, line,
            "error: cannot map %s=%s: file-system workloads (fsd=, fwd=) are not iofleet's "
            "(it runs raw-I/O workloads: sd=, wd=, rd=)",
            k, v);
        return 0;
    }
    last = *open && c->ndef ? &c->def[c->ndef - 1] : NULL;
    defkey = !strcmp(k, "sd") || !strcmp(k, "wd") || !strcmp(k, "rd") || !strcmp(k, "hd");
    ref = last && ((k[0] == 's' && (last->kind == VDB_WD || last->kind == VDB_RD)) ||
                   (k[0] == 'w' && last->kind == VDB_RD));
    if ((defkey && !ref) || (vdb_is_general(k) && (!last || last->kind == VDB_GEN))) {
        struct vdb_def *d;
        if (!defkey && c->ndef && c->def[c->ndef - 1].kind != VDB_GEN) {
            proto_vdb_msg(c, file, line,
                          "error: %s= is a general parameter: it goes before sd=", k);
            return 0;
        }
        if (defkey && strlen(v) >= VDB_NAME) {
            proto_vdb_msg(c, file, line, "error: %s=%s: a name longer than %d bytes", k, v,
                          VDB_NAME - 1);
            return 0;
        }
        if (!defkey && last) /* one more general parameter on the same line */
            goto add;
        if (iof_array_grow((void **)&c->def, &c->capdef, c->ndef + 1, sizeof(*c->def)))
            return -ENOMEM;
        d = &c->def[c->ndef++];
        memset(d, 0, sizeof(*d));
        d->kind = !defkey       ? VDB_GEN
                  : k[0] == 's' ? VDB_SD
                  : k[0] == 'w' ? VDB_WD
                  : k[0] == 'r' ? VDB_RD
                                : VDB_HD;
        if (defkey)
            snprintf(d->name, sizeof(d->name), "%s", v);
        d->is_default = defkey && !strcasecmp(v, "default");
        d->file = file;
        d->line = line;
        d->first = c->nkv;
        *open = true;
    } else if (!last) {
        proto_vdb_msg(
            c, file, line,
            "error: %s=%s outside a definition (a definition starts with sd=, wd=, rd= or hd=; "
            "a line continues the one before only when that ends with ',')",
            k, v);
        return 0;
    }
add:
    if (c->nkv >= IOF_IMPORT_MAX_OPTIONS) {
        proto_vdb_msg(c, file, line, "error: more than %d parameters", IOF_IMPORT_MAX_OPTIONS);
        return 0;
    }
    if (iof_array_grow((void **)&c->kv, &c->capkv, c->nkv + 1, sizeof(*c->kv)))
        return -ENOMEM;
    c->kv[c->nkv++] = (struct vdb_kv){.key = k, .val = v, .file = file, .line = line};
    c->def[c->ndef - 1].count++;
    return 0;
}

static bool vdb_var_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

bool proto_import_vdbench_var_ok(const char *var)
{
    const char *p = var;

    while (vdb_var_char(*p))
        p++;
    return p > var && *p == '=';
}

/* vdbench's variable substitution: each $NAME or !NAME (the '!' spelling
 * keeps a shell that embeds the file from substituting it) becomes the
 * VALUE of the NAME=VALUE given on vdbench's command line, here --var. The
 * line itself when it names none; a new line owned by c; NULL with an error
 * naming the variable when it has no value (or -ENOMEM: c->failed unset). */
static char *vdb_expand(struct vdb_ctx *c, const char *file, unsigned lineno, char *line)
{
    struct iof_buf b;
    const char *p = line;

    if (!strpbrk(line, "$!"))
        return line;
    iof_buf_init(&b, 0);
    while (*p) {
        size_t n = 0, i;
        if (*p == '$' || *p == '!')
            while (vdb_var_char(p[1 + n]))
                n++;
        if (!n) {
            iof_buf_addc(&b, *p++);
            continue;
        }
        for (i = 0; i < c->nvars; i++)
            if (!strncmp(c->vars[i], p + 1, n) && c->vars[i][n] == '=')
                break;
        if (i == c->nvars) {
            proto_vdb_msg(c, file, lineno,
                          "error: %c%.*s has no value: vdbench takes it from its command line "
                          "(%.*s=VALUE); give it with --var %.*s=VALUE",
                          *p, (int)n, p + 1, (int)n, p + 1, (int)n, p + 1);
            iof_buf_free(&b);
            return NULL;
        }
        c->var_used[i] = true;
        iof_buf_addstr(&b, c->vars[i] + n + 1);
        p += 1 + n;
    }
    if (!b.err && b.len > IOF_IMPORT_MAX_LINE) {
        proto_vdb_msg(c, file, lineno, "error: line longer than %u bytes after --var substitution",
                      IOF_IMPORT_MAX_LINE);
        iof_buf_free(&b);
        return NULL;
    }
    if (!b.err && !b.p)
        iof_buf_addstr(&b, "");
    if (b.err) {
        iof_buf_free(&b);
        return NULL;
    }
    return vdb_own(c, b.p);
}

int proto_vdb_parse(struct vdb_ctx *c, const char *file, char *text)
{
    /* vdbench's comment lines start with '*', '/' or '#'. */
    struct proto_import_lines r = {
        .name = file, .msgs = c->msgs, .comment = "*/#", .check_text = true};
    bool open = false, cont = false;
    char *line;
    int got;

    proto_import_lines_init(&r, text);
    while ((got = proto_import_lines_next(&r, &line)) != PROTO_LINES_END) {
        unsigned lineno = r.lineno;
        size_t n;
        int depth = 0;
        char *tok;

        if (got != PROTO_LINES_LINE) {
            c->failed = true;
            if (got == PROTO_LINES_STOP)
                return 0;
            continue;
        }
        if (!(line = vdb_expand(c, file, lineno, line))) {
            if (!c->failed)
                return -ENOMEM;
            continue;
        }
        n = strlen(line);
        if (!n)
            continue;
        /* A new definition unless the last line ended with ','. */
        if (!cont)
            open = false;
        cont = line[n - 1] == ',';
        if (cont)
            line[--n] = 0;
        tok = line;
        for (char *q = line;; q++) {
            if (*q == '(')
                depth++;
            else if (*q == ')')
                depth--;
            if ((*q == ',' && depth == 0) || !*q) {
                bool end = !*q;
                int rc;
                *q = 0;
                tok = proto_import_trim(tok);
                if (*tok && (rc = vdb_token(c, file, lineno, tok, &open)))
                    return rc;
                if (end)
                    break;
                tok = q + 1;
            }
        }
        if (depth) {
            proto_vdb_msg(c, file, lineno, "error: unbalanced parentheses");
            continue;
        }
    }
    return 0;
}

/* ---- resolution ---- */

/* The value of key for definition d: its own (the last given), else the
 * last `kind=default` before it that gives one. */
const struct vdb_kv *proto_vdb_get(const struct vdb_ctx *c, const struct vdb_def *d,
                                   const char *key)
{
    for (size_t i = d->count; i-- > 1;)
        if (!strcmp(c->kv[d->first + i].key, key))
            return &c->kv[d->first + i];
    for (const struct vdb_def *x = d; x-- > c->def;)
        if (x->kind == d->kind && x->is_default)
            for (size_t i = x->count; i-- > 1;)
                if (!strcmp(c->kv[x->first + i].key, key))
                    return &c->kv[x->first + i];
    return NULL;
}

const struct vdb_kv *proto_vdb_gen(const struct vdb_ctx *c, const char *key)
{
    const struct vdb_kv *r = NULL;
    for (size_t i = 0; i < c->ndef; i++)
        if (c->def[i].kind == VDB_GEN)
            for (size_t k = 0; k < c->def[i].count; k++)
                if (!strcmp(c->kv[c->def[i].first + k].key, key))
                    r = &c->kv[c->def[i].first + k];
    return r;
}

/* "FILE:LINE: error: cannot map KEY=VALUE: WHY". */
void proto_vdb_bad(struct vdb_ctx *c, const struct vdb_kv *kv, const char *fmt, ...)
{
    char why[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    proto_vdb_msg(c, kv->file, kv->line, "error: cannot map %s=%s: %s", kv->key, kv->val, why);
}

/* The keys each kind takes; anything else is refused by name. */
static const char *const vdb_sd_keys[] = {"sd",    "lun",     "size",   "threads",  "openflags",
                                          "range", "hitarea", "host",   "count",    "offset",
                                          "align", "journal", "replay", "resetbus", "resetlun"};
static const char *const vdb_wd_keys[] = {
    "wd",      "sd",     "xfersize",  "rdpct", "seekpct",  "skew",   "rhpct",   "whpct", "range",
    "hotband", "iorate", "openflags", "host",  "priority", "stride", "streams", "lun",   "threads"};
static const char *const vdb_rd_keys[] = {
    "rd",           "wd",       "sd",           "iorate",    "curve",     "elapsed",
    "interval",     "warmup",   "distribution", "pause",     "threads",   "forxfersize",
    "forthreads",   "forrdpct", "forseekpct",   "forrhpct",  "forwhpct",  "forhitarea",
    "forcompratio", "xfersize", "rdpct",        "seekpct",   "rhpct",     "whpct",
    "hitarea",      "maxdata",  "openflags",    "stopcurve", "compratio", "startcmd",
    "endcmd"};
static const char *const vdb_hd_keys[] = {"hd",      "system",  "jvms",  "shell", "user",
                                          "vdbench", "clients", "mount", "rsh"};

static bool vdb_known(const char *const *keys, size_t n, const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(keys[i], k))
            return true;
    return false;
}

/* Does name match the list item (a name, "prefix*" or "name1-name9")? */
static bool vdb_match(const char *item, const char *name)
{
    size_t n = strlen(item);
    const char *dash;

    if (n && item[n - 1] == '*')
        return !strncmp(item, name, n - 1);
    if ((dash = strchr(item, '-'))) {
        size_t pl = 0;
        const char *a = item, *b = dash + 1;
        unsigned long lo, hi, v;
        char *end;
        while (a + pl < dash && !isdigit((unsigned char)a[pl]))
            pl++;
        if (pl && !strncmp(a, b, pl) && !strncmp(a, name, pl) && isdigit((unsigned char)name[pl])) {
            lo = strtoul(a + pl, &end, 10);
            if (end != dash)
                return false;
            hi = strtoul(b + pl, &end, 10);
            if (*end)
                return false;
            v = strtoul(name + pl, &end, 10);
            return !*end && v >= lo && v <= hi;
        }
    }
    return !strcmp(item, name);
}

/* The definitions of kind named by kv's list, in file order; 0 with a message when none. */
size_t proto_vdb_select(struct vdb_ctx *c, const struct vdb_kv *kv, enum vdb_kind kind,
                        const struct vdb_def **out, size_t max)
{
    char buf[IOF_IMPORT_MAX_LINE + 1], *it[VDB_MAX_LIST];
    size_t n = proto_vdb_list(c, kv, kv->val, buf, it, VDB_MAX_LIST), k = 0;

    for (size_t i = 0; i < n; i++) {
        size_t before = k;
        for (size_t d = 0; d < c->ndef; d++) {
            bool dup = false;
            if (c->def[d].kind != kind || c->def[d].is_default || !vdb_match(it[i], c->def[d].name))
                continue;
            for (size_t j = 0; j < k; j++)
                dup |= out[j] == &c->def[d];
            if (!dup && k == max) {
                proto_vdb_msg(c, kv->file, kv->line,
                              "error: cannot map %s=%s: more than %zu of them", kv->key, kv->val,
                              max);
                return 0;
            }
            if (!dup)
                out[k++] = &c->def[d];
        }
        if (k == before) {
            proto_vdb_msg(c, kv->file, kv->line, "error: %s=%s: no %s named '%s'", kv->key, kv->val,
                          kind == VDB_SD ? "sd=" : "wd=", it[i]);
            return 0;
        }
    }
    return k;
}

bool proto_vdb_check_keys(struct vdb_ctx *c)
{
    for (size_t i = 0; i < c->ndef; i++) {
        const struct vdb_def *d = &c->def[i];
        const char *const *keys = d->kind == VDB_SD   ? vdb_sd_keys
                                  : d->kind == VDB_WD ? vdb_wd_keys
                                  : d->kind == VDB_RD ? vdb_rd_keys
                                  : d->kind == VDB_HD ? vdb_hd_keys
                                                      : vdb_general;
        size_t n = d->kind == VDB_SD   ? sizeof(vdb_sd_keys) / sizeof(*keys)
                   : d->kind == VDB_WD ? sizeof(vdb_wd_keys) / sizeof(*keys)
                   : d->kind == VDB_RD ? sizeof(vdb_rd_keys) / sizeof(*keys)
                   : d->kind == VDB_HD ? sizeof(vdb_hd_keys) / sizeof(*keys)
                                       : sizeof(vdb_general) / sizeof(*keys);
        for (size_t k = 0; k < d->count; k++) {
            const struct vdb_kv *kv = &c->kv[d->first + k];
            if (!vdb_known(keys, n, kv->key))
                proto_vdb_msg(
                    c, kv->file, kv->line,
                    "error: cannot map %s=%s: not a vdbench raw-I/O parameter of %s= that "
                    "iofleet knows",
                    kv->key, kv->val,
                    d->kind == VDB_SD   ? "sd"
                    : d->kind == VDB_WD ? "wd"
                    : d->kind == VDB_RD ? "rd"
                    : d->kind == VDB_HD ? "hd"
                                        : "the general parameters");
        }
    }
    return !c->failed;
}

/* What the parameters that have no plan key ask: refused unless they ask
 * nothing (rhpct=0), or ignored when they do not change the load. */
void proto_vdb_refuse_unexact(struct vdb_ctx *c)
{
    static const char *const zero_ok[] = {"rhpct", "whpct", "forrhpct", "forwhpct"};
    static const char *const ignored[] = {
        "hitarea",        "forhitarea",  "jvms",        "shell",  "user",      "vdbench",
        "system",         "data_errors", "messagescan", "report", "histogram", "pause",
        "create_anchors", "monitor",     "rsh",         "mount"};
    static const char *const refused[][2] = {
        {"priority", "workload priorities have no plan equivalent"},
        {"stride", "strided sequential I/O has no plan equivalent"},
        {"streams", "independent sequential streams per workload have no plan equivalent"},
        {"host", "an sd= or wd= on some hosts only: the plan's worker groups run on the nodes "
                 "they name; write one plan per host set"},
        {"dedupsets", "dedup sets have no plan equivalent"},
        {"validate", "vdbench's data validation journal has no plan equivalent (the plan's "
                     "verify checks data another way)"},
        {"journal", "vdbench's data validation journal has no plan equivalent"},
        {"concatenatesds", "concatenated SDs have no plan equivalent"},
        {"debug", "debug options change vdbench's behaviour"},
        {"formatsds", "formatting SDs first has no plan equivalent"},
        {"loop", "repeating the whole parameter file has no plan equivalent"},
        {"startcmd", "iofleet runs no commands"},
        {"endcmd", "iofleet runs no commands"},
        {"showlba", "an LBA trace has no plan equivalent"},
        {"swat", "swat replay has no plan equivalent"},
        {"replay", "swat replay has no plan equivalent"},
        {"count", "sd= count cloning: write the SDs out"},
        {"offset", "an SD offset: use range=(START,END) in bytes"},
        {"align", "vdbench's align= (the plan aligns random offsets to the transfer size)"},
        {"resetbus", "iofleet resets no buses"},
        {"resetlun", "iofleet resets no luns"},
        {"stopcurve", "a curve that stops on a response time has no plan equivalent"},
        {"forcompratio", "the plan cannot cycle the compression ratio"},
        {"lun", "a wd= with its own lun"},
        {"threads", "threads= of a wd= (vdbench takes threads from the sd= or rd=)"}};

    for (size_t i = 0; i < c->ndef; i++) {
        const struct vdb_def *d = &c->def[i];
        for (size_t k = d->kind == VDB_GEN ? 0 : 1; k < d->count; k++) {
            const struct vdb_kv *kv = &c->kv[d->first + k];
            bool done = false;
            for (size_t z = 0; z < sizeof(zero_ok) / sizeof(zero_ok[0]) && !done; z++)
                if (!strcmp(kv->key, zero_ok[z])) {
                    char buf[IOF_IMPORT_MAX_LINE + 1], *it[VDB_MAX_LIST];
                    size_t n = proto_vdb_list(c, kv, kv->val, buf, it, VDB_MAX_LIST);
                    for (size_t j = 0; j < n; j++)
                        if (strcmp(it[j], "0"))
                            proto_vdb_bad(
                                c, kv,
                                "cache hit percentages: vdbench sends that share of the I/Os to "
                                "each SD's hit area "
                                "(its first hitarea=, 1m by default) and the rest beyond it; "
                                "a plan distribution places I/Os by whole percentages of the "
                                "range, not in a region of bytes, so only 0 maps");
                    done = true;
                }
            for (size_t z = 0; z < sizeof(ignored) / sizeof(ignored[0]) && !done; z++)
                if (!strcmp(kv->key, ignored[z])) {
                    proto_vdb_msg(c, kv->file, kv->line, "ignored: %s (does not change the load)",
                                  kv->key);
                    done = true;
                }
            /* lun= and threads= are the SD's (threads= the rd's too), not a wd's */
            if ((!strcmp(kv->key, "lun") || !strcmp(kv->key, "threads")) && d->kind != VDB_WD)
                done = true;
            for (size_t z = 0; z < sizeof(refused) / sizeof(refused[0]) && !done; z++)
                if (!strcmp(kv->key, refused[z][0])) {
                    proto_vdb_bad(c, kv, "%s", refused[z][1]);
                    done = true;
                }
        }
    }
}

bool proto_import_vdbench_detect(const char *text, size_t len)
{
    static const char *const first[] = {
        "sd=",         "hd=",      "wd=",          "rd=",         "compratio=",
        "dedupratio=", "include=", "data_errors=", "messagescan="};
    const char *p = text, *end = text + len;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
        while (p < e && isspace((unsigned char)*p))
            p++;
        if (p < e && *p != '*' && *p != '/' && *p != '#') {
            /* The line is not NUL-terminated: compare within it only. */
            for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
                size_t n = strlen(first[i]);
                if ((size_t)(e - p) >= n && (size_t)(e - p) > 3 && !strncasecmp(p, first[i], n))
                    return true;
            }
            return false;
        }
        p = nl ? nl + 1 : end;
    }
    return false;
}
