/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_fio_parse.c - reading a fio job file for `iofleet import`:
 * lines (fio's ';' and '#' comments), [sections], options, fio's units
 * (sizes, times), ${VAR} expansion and fio's arithmetic expressions. The
 * mapper, proto/import_fio.c, turns what this reads into plan JSON. */
#include "proto/import_fio.h"
#include "proto/import.h"
#include "proto/import_lines.h"
#include "proto/plan.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/jsonw.h"

void proto_fio_msg(struct fio_ctx *c, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One message; a note is also kept in the
 * plan's notes ("j.fio:7: note: ..."), the last one saying when there were
 * more than a plan keeps. */
void proto_fio_msg(struct fio_ctx *c, unsigned line, const char *fmt, ...)
{
    char text[2 * IOF_IMPORT_MAX_LINE], note[sizeof(text) + 256];
    size_t n;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    proto_import_msg(c->msgs, c->name, line, "%s", text);
    if (!strncmp(text, "error:", 6))
        c->failed = true;
    if (c->failed || !strncmp(text, "ignored:", 8) || c->nnotes >= PROTO_PLAN_MAX_NOTES)
        return;
    if (c->nnotes + 1 == PROTO_PLAN_MAX_NOTES)
        snprintf(note, sizeof(note),
                 "%.200s: more notes than a plan keeps: see the import's messages", c->name);
    else
        snprintf(note, sizeof(note), "%.200s:%u: %s", c->name, line, text);
    /* Cut to what a plan keeps, never inside a UTF-8 character. */
    if ((n = strlen(note)) > PROTO_PLAN_MAX_NOTE) {
        n = PROTO_PLAN_MAX_NOTE;
        while (n && ((unsigned char)note[n] & 0xc0) == 0x80)
            n--;
        note[n] = 0;
    }
    iof_buf_addstr(&c->notes, c->nnotes++ ? ", " : "");
    iof_json_escape(&c->notes, note, IOF_JSON_TEXT);
}

/* A value as printed in a message: bounded, control characters replaced. */
const char *proto_fio_show(const char *v, char *buf, size_t cap)
{
    size_t i = 0;

    for (; v[i] && i + 4 < cap && i < 80; i++)
        buf[i] = (unsigned char)v[i] < 0x20 || v[i] == 0x7f ? '?' : v[i];
    if (v[i]) {
        memcpy(buf + i, "...", 3);
        i += 3;
    }
    buf[i] = 0;
    return buf;
}

/* The power of a fio size suffix: 1 for k, 2 for m, ... 5 for p (either
 * case); 0 for anything else. */
static int fio_unit_power(char c)
{
    static const char units[] = "kmgtp";
    const char *u = c ? strchr(units, tolower((unsigned char)c)) : NULL;

    return u ? (int)(u - units) + 1 : 0;
}

/* fio's size: digits (or 0x hex) with an optional k/m/g/t/p [b] suffix
 * (powers of 1024) or ki/mi/... [b] (powers of 1000). 0 or -EINVAL/-ERANGE. */
int proto_fio_size(const char *s, uint64_t *out)
{
    char *end;
    uint64_t v, mul = 1;
    int base = 1024, shift = 0;

    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
    if (errno)
        return -ERANGE;
    shift = fio_unit_power(*end);
    if (*end && !shift && tolower((unsigned char)*end) != 'b')
        return -EINVAL;
    if (*end && tolower((unsigned char)*end) != 'b') {
        end++;
        if (tolower((unsigned char)*end) == 'i') {
            base = 1000;
            end++;
        }
    }
    if (tolower((unsigned char)*end) == 'b')
        end++;
    if (*end)
        return -EINVAL;
    while (shift--)
        mul *= (uint64_t)base;
    if (v && mul > UINT64_MAX / v)
        return -ERANGE;
    *out = v * mul;
    return 0;
}

/* fio's time: a number in `unit_ns` unless suffixed (us, ms, s, m, h, d). */
int proto_fio_time(const char *s, uint64_t unit_ns, uint64_t *out_ns)
{
    char *end;
    uint64_t v, mul = unit_ns;

    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno)
        return -ERANGE;
    if (!strcasecmp(end, "us") || !strcasecmp(end, "usec"))
        mul = 1000;
    else if (!strcasecmp(end, "ms") || !strcasecmp(end, "msec"))
        mul = 1000000;
    else if (!strcasecmp(end, "s") || !strcasecmp(end, "sec"))
        mul = 1000000000ull;
    else if (!strcasecmp(end, "m") || !strcasecmp(end, "min"))
        mul = 60000000000ull;
    else if (!strcasecmp(end, "h"))
        mul = 3600000000000ull;
    else if (!strcasecmp(end, "d"))
        mul = 86400000000000ull;
    else if (*end)
        return -EINVAL;
    if (v && mul > UINT64_MAX / v)
        return -ERANGE;
    *out_ns = v * mul;
    return 0;
}

int proto_fio_uint(const char *s, unsigned max, unsigned *out)
{
    char *end;
    unsigned long v;

    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || v > max)
        return -EINVAL;
    *out = (unsigned)v;
    return 0;
}

/* Options that do not change the load: reporting, logging, bookkeeping. */
static const char *const fio_ignored[] = {
    "group_reporting",
    "norandommap",
    "randrepeat",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "per_job_logs",
    "description",
    "name",
    "new_group",
    "thread",
    "invalidate",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "unified_rw_reporting",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "gtod_reduce",
    "log_offset",
    "log_compression",
    "random_generator",
    "allrandrepeat",
    "randseed",
    "kb_base",
    "unit_base",
    "fallocate",
    "create_serialize",
    "overwrite",
    "iodepth_batch",
    "iodepth_batch_submit",
    "iodepth_batch_complete",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "clocksource",
    "significant_figures",
    "eta",
    "output-format",
};

bool proto_fio_is_ignored(const char *k)
{
    for (size_t i = 0; i < sizeof(fio_ignored) / sizeof(fio_ignored[0]); i++)
        if (!strcmp(k, fio_ignored[i]))
            return true;
    return false;
}

/* Keeps a rewritten line until the import ends (options point into it). */
static char *fio_own(struct fio_ctx *c, char *line)
{
    if (!line ||
        iof_array_grow((void **)&c->owned, &c->capowned, c->nowned + 1, sizeof(*c->owned))) {
        free(line);
        return NULL;
    }
    c->owned[c->nowned++] = line;
    return line;
}

/* fio's ${VAR}: replaced by the environment's value where the job file is
 * read (fio's option_dup_subs()). fio puts nothing for an unset variable; the
 * import refuses it by name. NULL (message given) or the expanded copy. */
static char *fio_expand_env(struct fio_ctx *c, unsigned lineno, const char *line)
{
    struct iof_buf b;
    const char *p = line;

    iof_buf_init(&b, 0);
    while (*p) {
        const char *close;
        if (p[0] == '$' && p[1] == '{' && (close = strchr(p + 2, '}')) && close > p + 2) {
            char var[256];
            const char *val;
            if ((size_t)(close - p - 2) >= sizeof(var)) {
                proto_fio_msg(c, lineno,
                              "error: an environment variable name longer than %zu bytes",
                              sizeof(var) - 1);
                iof_buf_free(&b);
                return NULL;
            }
            memcpy(var, p + 2, (size_t)(close - p - 2));
            var[close - p - 2] = 0;
            if (!(val = getenv(var))) {
                char show[96];
                proto_fio_msg(
                    c, lineno,
                    "error: ${%s} is not set in the environment (fio takes it from there)",
                    proto_fio_show(var, show, sizeof(show)));
                iof_buf_free(&b);
                return NULL;
            }
            iof_buf_addstr(&b, val);
            p = close + 1;
            continue;
        }
        iof_buf_addc(&b, *p++);
    }
    if (b.err || b.len > IOF_IMPORT_MAX_LINE) {
        if (!b.err)
            proto_fio_msg(c, lineno, "error: line longer than %u bytes after ${VAR} expansion",
                          IOF_IMPORT_MAX_LINE);
        iof_buf_free(&b);
        return NULL;
    }
    if (!b.p) /* an empty result */
        iof_buf_addstr(&b, "");
    return b.p;
}

/* fio's arithmetic in a value "(...)": + - * / % ^ and parentheses over
 * whole numbers with fio's size suffixes (k, m, g, t, p: powers of 1024),
 * as fio's expression parser reads a size. */
struct fio_expr {
    const char *p;
    const char *err;
};

static bool fio_expr_sum(struct fio_expr *e, long double *out);

static void fio_expr_space(struct fio_expr *e)
{
    while (*e->p == ' ' || *e->p == '\t')
        e->p++;
}

static bool fio_expr_atom(struct fio_expr *e, long double *out)
{
    fio_expr_space(e);
    if (*e->p == '(') {
        e->p++;
        if (!fio_expr_sum(e, out))
            return false;
        fio_expr_space(e);
        if (*e->p != ')') {
            e->err = "unbalanced parentheses";
            return false;
        }
        e->p++;
        return true;
    }
    if (*e->p == '-') {
        e->p++;
        if (!fio_expr_atom(e, out))
            return false;
        *out = -*out;
        return true;
    }
    if (isdigit((unsigned char)*e->p)) {
        char *end;
        int shift = 0;
        *out = strtold(e->p, &end);
        e->p = end;
        shift = fio_unit_power(*e->p);
        if (shift) {
            e->p++;
            if (tolower((unsigned char)*e->p) == 'b')
                e->p++;
        }
        while (shift--)
            *out *= 1024;
        return true;
    }
    e->err = "expected a number or '(' in the arithmetic";
    return false;
}

static bool fio_expr_pow(struct fio_expr *e, long double *out)
{
    long double r;

    if (!fio_expr_atom(e, out))
        return false;
    fio_expr_space(e);
    if (*e->p != '^')
        return true;
    e->p++;
    if (!fio_expr_pow(e, &r))
        return false;
    if (r < 0 || r > 64 || r != (long double)(unsigned)r) {
        e->err = "an exponent that is not a whole number 0..64";
        return false;
    }
    for (long double b = *out, i = 1; i < r; i++)
        *out *= b;
    if (r == 0)
        *out = 1;
    return true;
}

static bool fio_expr_prod(struct fio_expr *e, long double *out)
{
    if (!fio_expr_pow(e, out))
        return false;
    for (;;) {
        long double r;
        char op;
        fio_expr_space(e);
        op = *e->p;
        if (op != '*' && op != '/' && op != '%')
            return true;
        e->p++;
        if (!fio_expr_pow(e, &r))
            return false;
        if (op == '*') {
            *out *= r;
        } else if (r == 0) {
            e->err = "division by zero";
            return false;
        } else if (op == '/') {
            *out /= r;
        } else {
            if (*out != (long double)(long long)*out || r != (long double)(long long)r) {
                e->err = "% of a number that is not whole";
                return false;
            }
            *out = (long double)((long long)*out % (long long)r);
        }
    }
}

static bool fio_expr_sum(struct fio_expr *e, long double *out)
{
    if (!fio_expr_prod(e, out))
        return false;
    for (;;) {
        long double r;
        char op;
        fio_expr_space(e);
        op = *e->p;
        if (op != '+' && op != '-')
            return true;
        e->p++;
        if (!fio_expr_prod(e, &r))
            return false;
        *out = op == '+' ? *out + r : *out - r;
    }
}

/* A value "(...)" evaluated to a whole number written in decimal into buf;
 * fio keeps the whole part of a size. NULL with *why on failure. */
static const char *fio_arith(const char *v, char *buf, size_t cap, const char **why)
{
    struct fio_expr e = {.p = v, .err = NULL};
    long double r;

    if (!fio_expr_atom(&e, &r) || (fio_expr_space(&e), *e.p)) {
        *why = e.err ? e.err : "text after the arithmetic (write the whole value in parentheses)";
        return NULL;
    }
    if (r < 0 || r >= 18446744073709551616.0L) {
        *why = "the result is negative or too large";
        return NULL;
    }
    snprintf(buf, cap, "%" PRIu64, (uint64_t)r);
    return buf;
}

/* fio's keywords for the machine that runs the job. */
static const char *fio_keyword(const char *v)
{
    static const char *const words[] = {"$ncpus", "$mb_memory", "$pagesize"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strstr(v, words[i]))
            return words[i];
    return NULL;
}

/* Splits `text` into sections and options (bounded, messages for garbage). */
int proto_fio_parse(struct fio_ctx *c, char *text)
{
    /* fio ends a line at its first ';' or '#', wherever they are. */
    struct proto_import_lines r = {.name = c->name, .msgs = c->msgs, .cut = ";#"};
    char *line;
    int got;

    proto_import_lines_init(&r, text);
    while ((got = proto_import_lines_next(&r, &line)) != PROTO_LINES_END) {
        unsigned lineno = r.lineno;
        char *eq, *k, *v;

        if (got != PROTO_LINES_LINE) {
            c->failed = true;
            if (got == PROTO_LINES_STOP)
                return 0;
            continue;
        }
        if (strstr(line, "${")) {
            if (!(line = fio_own(c, fio_expand_env(c, lineno, line)))) {
                if (!c->failed)
                    return -ENOMEM;
                continue;
            }
            line = proto_import_trim(line);
            if (!*line)
                continue;
        }
        if (*line == '[') {
            char *close = strchr(line, ']');
            struct fio_section *s;

            if (!close || close == line + 1 || close[1] || (size_t)(close - line - 1) > 64) {
                proto_fio_msg(c, lineno,
                              "error: malformed section header (expected [NAME], at most "
                              "64 bytes)");
                continue;
            }
            *close = 0;
            if (proto_import_text_bad(c->msgs, c->name, lineno, "section name", line + 1)) {
                c->failed = true;
                continue;
            }
            if (strchr(line + 1, '/')) {
                proto_fio_msg(c, lineno, "error: a '/' in a section name");
                continue;
            }
            if (c->nsec >= IOF_IMPORT_MAX_JOBS) {
                proto_fio_msg(c, lineno, "error: more than %u sections", IOF_IMPORT_MAX_JOBS);
                return 0;
            }
            if (iof_array_grow((void **)&c->sec, &c->capsec, c->nsec + 1, sizeof(*c->sec)))
                return -ENOMEM;
            s = &c->sec[c->nsec++];
            memset(s, 0, sizeof(*s));
            fio_copy(s->name, sizeof(s->name), line + 1);
            s->line = lineno;
            s->global = !strcmp(s->name, "global");
            s->first = c->nkv;
            continue;
        }
        if (!strncmp(line, "include", 7) && isspace((unsigned char)line[7])) {
            proto_fio_msg(c, lineno,
                          "error: cannot map include: import the included file's content "
                          "in place");
            continue;
        }
        if (!c->nsec) {
            proto_fio_msg(c, lineno,
                          "error: option outside a section (expected [global] or [JOB] "
                          "first)");
            continue;
        }
        if (c->nkv >= IOF_IMPORT_MAX_OPTIONS) {
            proto_fio_msg(c, lineno, "error: more than %d options", IOF_IMPORT_MAX_OPTIONS);
            return 0;
        }
        eq = strchr(line, '=');
        v = (char *)"";
        if (eq) {
            *eq = 0;
            v = proto_import_trim(eq + 1);
        }
        k = proto_import_trim(line);
        if (!*k) {
            proto_fio_msg(c, lineno, "error: '=' without an option name");
            continue;
        }
        /* Values become names and paths of the plan (name, filename,
         * directory...): none needs a control character. */
        if (proto_import_text_bad(c->msgs, c->name, lineno, "option name", k) ||
            proto_import_text_bad(c->msgs, c->name, lineno, k, v)) {
            c->failed = true;
            continue;
        }
        {
            char show[96], num[32];
            const char *kw = proto_fio_is_ignored(k) ? NULL : fio_keyword(v), *why = NULL;
            if (kw) {
                proto_fio_msg(c, lineno,
                              "error: cannot map %s=%s: %s is a value of the machine that runs the "
                              "job, which the manager cannot know: write the number",
                              k, proto_fio_show(v, show, sizeof(show)), kw);
                continue;
            }
            if (*v == '(') {
                char *dup;
                if (!fio_arith(v, num, sizeof(num), &why)) {
                    proto_fio_msg(c, lineno, "error: cannot map %s=%s: %s", k,
                                  proto_fio_show(v, show, sizeof(show)), why);
                    continue;
                }
                if (!(dup = fio_own(c, strdup(num))))
                    return -ENOMEM;
                v = dup;
            }
        }
        if (iof_array_grow((void **)&c->kv, &c->capkv, c->nkv + 1, sizeof(*c->kv)))
            return -ENOMEM;
        c->kv[c->nkv++] = (struct fio_kv){.key = k, .val = v, .line = lineno};
        c->sec[c->nsec - 1].count++;
    }
    return 0;
}
