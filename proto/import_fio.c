/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_fio.c - `iofleet import JOB.fio`: a fio job file as plan JSON.
 *
 * fio's model: [global] sections set defaults for the jobs after them; each
 * other section is a job, cloned numjobs times; a job with stonewall (or
 * wait_for_previous) waits for every job before it. iofleet's model: tests
 * run in sequence, every worker group runs the test's spec. So a stonewall
 * starts a new test; the jobs between stonewalls run concurrently and become
 * worker groups. A file maps when every test has the same worker groups (one
 * job per test on the same file, as fio's "four corners" files do); jobs that
 * run at once with different workloads get per-group specs. Steps with other
 * groups are refused with the reason.
 *
 * Units as fio reads them with its default kb_base=1024: sizes take k/m/g/t/p
 * with an optional trailing b, powers of 1024 ("4k", "4kb"); "kib" etc. are
 * powers of 1000 (fio's compatibility inversion); times are seconds unless
 * suffixed (us, ms, s, m, h, d); thinktime is in microseconds. Defaults are
 * fio's: rw=read, bs=4k, iodepth=1, numjobs=1, rwmixread=50, direct=0,
 * ioengine psync. */
#include "proto/import.h"
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

#include "common/jsonw.h"
#include "common/engine_facts.h"

#define FIO_MAX_SPLIT 64 /* bssplit entries (a spec's lines) */
#define FIO_MAX_FILES 64 /* colon-separated filenames */
#define FIO_STR 1024     /* bytes kept of a string value */

struct fio_kv {
    const char *key; /* NUL-terminated, inside the line copy */
    const char *val; /* "" for a bare flag */
    unsigned line;
    bool reported; /* a message was given for it (global options once) */
};

struct fio_section {
    char name[65];
    unsigned line;
    bool global;
    size_t first, count; /* its options in the kv array */
};

struct fio_split {
    uint64_t size;
    unsigned pct;
};

struct fio_job {
    char name[65];
    unsigned line;
    int rw; /* FIO_RW_* */
    unsigned rw_line;
    int read_pct; /* from rwmixread/rwmixwrite; -1 unset */
    int random_pct;
    uint64_t bs;
    struct fio_split split[FIO_MAX_SPLIT];
    size_t nsplit;
    uint64_t align;
    unsigned iodepth, numjobs;
    char filename[FIO_STR], directory[FIO_STR];
    unsigned filename_line;
    uint64_t size, filesize, offset, io_size;
    char size_pct[8], offset_pct[8], offset_inc[32];
    uint64_t runtime_ns, ramp_ns;
    bool time_based, stonewall;
    char rate[64];
    char rate_dir[2][96]; /* rate/rate_iops R,W as given ("" none) */
    bool rate_iops;
    unsigned rate_line;
    char dist[128];
    char engine[16];
    bool engine_sync;
    bool direct, poisson;
    unsigned direct_line; /* 0: fio's default direct=0 */
    const char *pattern;
    uint64_t thinktime_ns;
    unsigned thinktime_blocks;
    bool exitall;
    unsigned exitall_line;
    bool norandommap; /* fio's random map is off */
    bool random_once; /* fio's random map is on: the plan's random_map once_per_pass */
    unsigned rw_random_line;
    char startdelay[32];
    unsigned startdelay_line;
    unsigned loops;
    uint64_t number_ios;
    unsigned number_ios_line;
    const char *verify; /* the plan's checksum, NULL none */
    unsigned verify_line;
    bool verify_stop, do_verify;
    int dedupe_pct, compress_pct; /* -1 unset */
    unsigned data_line;
};

enum { FIO_RW_READ, FIO_RW_WRITE, FIO_RW_RANDREAD, FIO_RW_RANDWRITE, FIO_RW_RW, FIO_RW_RANDRW };

struct fio_ctx {
    const char *name;
    struct iof_buf *msgs;
    bool failed;
    bool approximate;     /* IOF_IMPORT_APPROXIMATE */
    struct iof_buf notes; /* the plan's "notes": JSON strings, comma-separated */
    size_t nnotes;
    uint64_t run_dur_ns, run_ramp_ns; /* every job's runtime/ramp_time: the run's (0: none) */
    struct fio_kv *kv;
    size_t nkv, capkv;
    struct fio_section *sec;
    size_t nsec, capsec;
    char **owned; /* lines rewritten by ${VAR} expansion or arithmetic */
    size_t nowned, capowned;
};

static void fio_msg(struct fio_ctx *c, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One message; a note is also kept in the
 * plan's notes ("j.fio:7: note: ..."), the last one saying when there were
 * more than a plan keeps. */
static void fio_msg(struct fio_ctx *c, unsigned line, const char *fmt, ...)
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
static const char *fio_show(const char *v, char *buf, size_t cap)
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
static int fio_size(const char *s, uint64_t *out)
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
static int fio_time(const char *s, uint64_t unit_ns, uint64_t *out_ns)
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

static int fio_uint(const char *s, unsigned max, unsigned *out)
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

static void fio_copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src);
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

static bool fio_is_ignored(const char *k)
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
                fio_msg(c, lineno, "error: an environment variable name longer than %zu bytes",
                        sizeof(var) - 1);
                iof_buf_free(&b);
                return NULL;
            }
            memcpy(var, p + 2, (size_t)(close - p - 2));
            var[close - p - 2] = 0;
            if (!(val = getenv(var))) {
                char show[96];
                fio_msg(c, lineno,
                        "error: ${%s} is not set in the environment (fio takes it from there)",
                        fio_show(var, show, sizeof(show)));
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
            fio_msg(c, lineno, "error: line longer than %u bytes after ${VAR} expansion",
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
static int fio_parse(struct fio_ctx *c, char *text)
{
    unsigned lineno = 0;
    char *p = text;

    while (*p) {
        char *nl = strchr(p, '\n'), *line = p, *eq, *k, *v, *e;
        size_t n;

        if (nl)
            *nl = 0;
        p = nl ? nl + 1 : p + strlen(p);
        if (++lineno > IOF_IMPORT_MAX_LINES) {
            fio_msg(c, lineno, "error: more than %u lines", IOF_IMPORT_MAX_LINES);
            return 0;
        }
        n = strlen(line);
        if (n > IOF_IMPORT_MAX_LINE) {
            fio_msg(c, lineno, "error: line longer than %u bytes", IOF_IMPORT_MAX_LINE);
            continue;
        }
        /* fio ends a line at its first ';' or '#', wherever they are
         * (strip_blank_end() in fio's parse.c): "bs=4k ; note" is bs=4k. */
        if ((e = strpbrk(line, ";#")))
            *e = 0;
        n = strlen(line);
        if (strstr(line, "${")) {
            if (!(line = fio_own(c, fio_expand_env(c, lineno, line)))) {
                if (!c->failed)
                    return -ENOMEM;
                continue;
            }
            n = strlen(line);
        }
        while (n && isspace((unsigned char)line[n - 1]))
            line[--n] = 0;
        while (isspace((unsigned char)*line))
            line++;
        if (!*line)
            continue;
        if (*line == '[') {
            char *close = strchr(line, ']');
            struct fio_section *s;

            if (!close || close == line + 1 || close[1] || (size_t)(close - line - 1) > 64) {
                fio_msg(c, lineno,
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
                fio_msg(c, lineno, "error: a '/' in a section name");
                continue;
            }
            if (c->nsec >= IOF_IMPORT_MAX_JOBS) {
                fio_msg(c, lineno, "error: more than %u sections", IOF_IMPORT_MAX_JOBS);
                return 0;
            }
            if (iof_array_grow((void **)&c->sec, &c->capsec, c->nsec + 1, sizeof(*c->sec)))
                return -ENOMEM;
            s = &c->sec[c->nsec++];
            memset(s, 0, sizeof(*s));
            *close = 0;
            fio_copy(s->name, sizeof(s->name), line + 1);
            s->line = lineno;
            s->global = !strcmp(s->name, "global");
            s->first = c->nkv;
            continue;
        }
        if (!strncmp(line, "include", 7) && isspace((unsigned char)line[7])) {
            fio_msg(c, lineno,
                    "error: cannot map include: import the included file's content "
                    "in place");
            continue;
        }
        if (!c->nsec) {
            fio_msg(c, lineno,
                    "error: option outside a section (expected [global] or [JOB] "
                    "first)");
            continue;
        }
        if (c->nkv >= IOF_IMPORT_MAX_OPTIONS) {
            fio_msg(c, lineno, "error: more than %d options", IOF_IMPORT_MAX_OPTIONS);
            return 0;
        }
        k = line;
        eq = strchr(line, '=');
        v = (char *)"";
        if (eq) {
            *eq = 0;
            v = eq + 1;
            while (isspace((unsigned char)*v))
                v++;
        }
        e = k + strlen(k);
        while (e > k && isspace((unsigned char)e[-1]))
            *--e = 0;
        if (!*k) {
            fio_msg(c, lineno, "error: '=' without an option name");
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
            const char *kw = fio_is_ignored(k) ? NULL : fio_keyword(v), *why = NULL;
            if (kw) {
                fio_msg(c, lineno,
                        "error: cannot map %s=%s: %s is a value of the machine that runs the "
                        "job, which the manager cannot know: write the number",
                        k, fio_show(v, show, sizeof(show)), kw);
                continue;
            }
            if (*v == '(') {
                char *dup;
                if (!fio_arith(v, num, sizeof(num), &why)) {
                    fio_msg(c, lineno, "error: cannot map %s=%s: %s", k,
                            fio_show(v, show, sizeof(show)), why);
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

static void fio_job_defaults(struct fio_job *j)
{
    memset(j, 0, sizeof(*j));
    j->rw = FIO_RW_READ;
    j->read_pct = -1;
    j->random_pct = 100;
    j->bs = 4096;
    j->iodepth = 1;
    j->numjobs = 1;
    fio_copy(j->engine, sizeof(j->engine), "sync");
    j->engine_sync = true;
    j->pattern = "pseudo";
    j->thinktime_blocks = 1;
    j->loops = 1;
    j->do_verify = true;
    j->dedupe_pct = j->compress_pct = -1;
}

/* bs=R[,W[,T]]: the size the job's directions use; false when they differ. */
static bool fio_bs(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv)
{
    char tmp[128], show[96];
    uint64_t rd = 4096, wr = 4096;
    char *comma, *second;

    fio_copy(tmp, sizeof(tmp), kv->val);
    comma = strchr(tmp, ',');
    second = comma ? comma + 1 : NULL;
    if (comma) {
        *comma = 0;
        if ((comma = strchr(second, ',')))
            *comma = 0;
    }
    if ((tmp[0] && fio_size(tmp, &rd)) || (second && *second && fio_size(second, &wr))) {
        fio_msg(c, kv->line, "error: cannot map %s=%s: not a size", kv->key,
                fio_show(kv->val, show, sizeof(show)));
        return false;
    }
    if (!second)
        wr = rd;
    j->bs = (j->rw == FIO_RW_WRITE || j->rw == FIO_RW_RANDWRITE) ? wr : rd;
    if (rd != wr && (j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW)) {
        fio_msg(c, kv->line,
                "error: cannot map %s=%s: reads and writes of different sizes in one mix "
                "(a line has one size and a read %%; use bssplit with one size per line)",
                kv->key, fio_show(kv->val, show, sizeof(show)));
        return false;
    }
    j->nsplit = 0;
    return true;
}

/* bssplit=SIZE/PCT:SIZE/PCT... (a PCT left empty shares what is left). */
static bool fio_bssplit(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv)
{
    char tmp[FIO_STR], show[96];
    char *save = NULL, *tok, *comma;
    unsigned total = 0, nempty = 0;
    bool empty[FIO_MAX_SPLIT] = {false};

    fio_copy(tmp, sizeof(tmp), kv->val);
    if ((comma = strchr(tmp, ','))) {
        *comma = 0;
        if (comma[1] && strcmp(tmp, comma + 1)) {
            fio_msg(c, kv->line,
                    "error: cannot map bssplit=%s: different splits for reads and writes",
                    fio_show(kv->val, show, sizeof(show)));
            return false;
        }
    }
    j->nsplit = 0;
    for (tok = strtok_r(tmp, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
        char *slash = strchr(tok, '/');
        struct fio_split *s;

        if (j->nsplit >= FIO_MAX_SPLIT) {
            fio_msg(c, kv->line, "error: cannot map bssplit: more than %d sizes", FIO_MAX_SPLIT);
            return false;
        }
        s = &j->split[j->nsplit];
        if (slash)
            *slash = 0;
        if (fio_size(tok, &s->size) || !s->size ||
            (slash && slash[1] && fio_uint(slash + 1, 100, &s->pct))) {
            fio_msg(c, kv->line, "error: cannot map bssplit=%s: expected SIZE/PERCENT:...",
                    fio_show(kv->val, show, sizeof(show)));
            return false;
        }
        if (!slash || !slash[1]) {
            s->pct = 0;
            empty[j->nsplit] = true;
            nempty++;
        }
        total += s->pct;
        j->nsplit++;
    }
    if (!j->nsplit || total > 100 || (!nempty && total != 100)) {
        fio_msg(c, kv->line, "error: cannot map bssplit=%s: the percentages must sum to 100",
                fio_show(kv->val, show, sizeof(show)));
        return false;
    }
    for (size_t i = 0, seen = 0; i < j->nsplit && nempty; i++)
        if (empty[i]) {
            unsigned left = 100 - total, share = left / nempty;
            j->split[i].pct = ++seen == nempty ? share + left % nempty : share;
        }
    return true;
}

static bool fio_rw(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv)
{
    static const char *const names[] = {"read", "write", "randread", "randwrite", "rw", "randrw"};
    char tmp[64], show[96], *colon;

    fio_copy(tmp, sizeof(tmp), kv->val);
    if ((colon = strchr(tmp, ':'))) {
        *colon = 0;
        /* fio: a sequential job skips that much after each I/O (holes), a
         * random one takes that many sequential I/Os per random offset. */
        if (strcmp(colon + 1, "0")) {
            fio_msg(c, kv->line,
                    "error: cannot map the ':%s' of %s=%s: %s; the plan has no such pattern",
                    colon + 1, kv->key, fio_show(kv->val, show, sizeof(show)),
                    tmp[0] == 'r' && tmp[1] == 'a'
                        ? "runs of sequential I/Os between random offsets"
                        : "sequential I/O with holes");
            return false;
        }
    }
    if (!strcmp(tmp, "readwrite"))
        fio_copy(tmp, sizeof(tmp), "rw");
    for (int i = 0; i < 6; i++)
        if (!strcmp(tmp, names[i])) {
            j->rw = i;
            j->rw_line = kv->line;
            return true;
        }
    fio_msg(c, kv->line,
            "error: cannot map %s=%s: iofleet issues reads and writes only (read, "
            "write, randread, randwrite, rw, randrw)",
            kv->key, fio_show(kv->val, show, sizeof(show)));
    return false;
}

/* Whether iofleet's engine `name` always opens its targets with O_DIRECT. */
static bool fio_engine_direct(const char *name)
{
    const struct iof_engine_facts *f = iof_engine_facts_find(name);
    return f && f->direct;
}

static bool fio_engine(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv, bool was)
{
    static const char *const sync_engines[] = {"sync", "psync", "vsync", "pvsync", "pvsync2"};
    const struct iof_engine_facts *f;
    char show[96];

    j->engine_sync = false;
    /* fio's own engines of iofleet's names but sync (fio's sync family is below). */
    f = iof_engine_facts_find(kv->val);
    if (f && f != &iof_engine_facts[IOF_ENGINE_SYNC]) {
        fio_copy(j->engine, sizeof(j->engine), f->name);
        return true;
    }
    for (size_t i = 0; i < sizeof(sync_engines) / sizeof(sync_engines[0]); i++)
        if (!strcmp(kv->val, sync_engines[i])) {
            fio_copy(j->engine, sizeof(j->engine), "sync");
            j->engine_sync = true;
            return true;
        }
    /* net, rdma, http, nfs, cpuio, exec, external:..., mmap, posixaio...: a
     * different load (or none on the storage) as local files would change it. */
    if (!was)
        fio_msg(c, kv->line,
                "error: cannot map ioengine=%s: iofleet's engines are libaio, io_uring, null "
                "and sync (fio's sync, psync, vsync, pvsync, pvsync2)",
                fio_show(kv->val, show, sizeof(show)));
    c->failed = true;
    return false;
}

/* Applies one option to the job; false on an essential failure. */
static bool fio_apply(struct fio_ctx *c, struct fio_job *j, struct fio_kv *kv)
{
    const char *k = kv->key, *v = kv->val;
    char show[96];
    unsigned u;
    uint64_t sz;
    bool was = kv->reported;

    kv->reported = true;
#define BAD(why)                                                                                   \
    do {                                                                                           \
        fio_msg(c, kv->line, "error: cannot map %s=%s: %s", k, fio_show(v, show, sizeof(show)),    \
                why);                                                                              \
        return false;                                                                              \
    } while (0)
    if (!strcmp(k, "rw") || !strcmp(k, "readwrite"))
        return fio_rw(c, j, kv);
    if (!strcmp(k, "norandommap"))
        j->norandommap = !(v[0] == '0' && !v[1]);
    if (!strcmp(k, "rwmixread") || !strcmp(k, "rwmixwrite")) {
        if (fio_uint(v, 100, &u))
            BAD("expected 0..100");
        j->read_pct = k[5] == 'r' ? (int)u : 100 - (int)u;
        return true;
    }
    if (!strcmp(k, "percentage_random")) {
        if (fio_uint(v, 100, &u))
            BAD("expected 0..100 (one value for reads and writes)");
        j->random_pct = (int)u;
        return true;
    }
    if (!strcmp(k, "bs") || !strcmp(k, "blocksize") || !strcmp(k, "bssplit"))
        return true; /* after rw, by proto_import_fio() */
    if (!strcmp(k, "blockalign") || !strcmp(k, "ba")) {
        if (fio_size(v, &sz) || strchr(v, ','))
            BAD("expected one size");
        j->align = sz;
        return true;
    }
    if (!strcmp(k, "iodepth") || !strcmp(k, "numjobs")) {
        if (fio_uint(v, 1u << 20, &u) || !u)
            BAD("expected a whole number >= 1");
        *(k[0] == 'i' ? &j->iodepth : &j->numjobs) = u;
        return true;
    }
    if (!strcmp(k, "filename")) {
        fio_copy(j->filename, sizeof(j->filename), v);
        j->filename_line = kv->line;
        return true;
    }
    if (!strcmp(k, "directory")) {
        fio_copy(j->directory, sizeof(j->directory), v);
        return true;
    }
    if (!strcmp(k, "size") || !strcmp(k, "filesize") || !strcmp(k, "io_size") ||
        !strcmp(k, "io_limit") || !strcmp(k, "offset")) {
        size_t n = strlen(v);
        if (n && v[n - 1] == '%' && (!strcmp(k, "size") || !strcmp(k, "offset"))) {
            char num[8];
            fio_copy(num, sizeof(num), v);
            num[n < sizeof(num) ? n - 1 : 0] = 0;
            if (n > 4 || fio_uint(num, 100, &u))
                BAD("expected a percentage 0..100");
            fio_copy(k[0] == 's' ? j->size_pct : j->offset_pct, sizeof(j->size_pct), v);
            return true;
        }
        if (n > 1 && isdigit((unsigned char)v[n - 2]) && tolower((unsigned char)v[n - 1]) == 'z')
            BAD("zones (a zoned device's zone size) have no size iofleet knows");
        if (fio_size(v, &sz))
            BAD("not a size (a range is not mapped)");
        if (!strcmp(k, "size"))
            j->size = sz;
        else if (!strcmp(k, "filesize"))
            j->filesize = sz;
        else if (!strcmp(k, "offset"))
            j->offset = sz;
        else
            j->io_size = sz;
        return true;
    }
    if (!strcmp(k, "offset_increment")) {
        size_t n = strlen(v);
        if (n && v[n - 1] == '%') {
            char num[8];
            fio_copy(num, sizeof(num), v);
            num[n < sizeof(num) ? n - 1 : 0] = 0;
            if (n > 4 || fio_uint(num, 100, &u))
                BAD("expected a size or a percentage");
            snprintf(j->offset_inc, sizeof(j->offset_inc), "%u%%", u);
        } else {
            if (fio_size(v, &sz))
                BAD("expected a size or a percentage");
            snprintf(j->offset_inc, sizeof(j->offset_inc), "%" PRIu64, sz);
        }
        return true;
    }
    if (!strcmp(k, "runtime") || !strcmp(k, "timeout") || !strcmp(k, "ramp_time")) {
        if (fio_time(v, 1000000000ull, k[0] == 'r' && k[1] == 'a' ? &j->ramp_ns : &j->runtime_ns))
            BAD("not a time");
        return true;
    }
    if (!strcmp(k, "time_based")) {
        j->time_based = !(v[0] == '0' && !v[1]);
        return true;
    }
    if (!strcmp(k, "stonewall") || !strcmp(k, "wait_for_previous")) {
        j->stonewall = !(v[0] == '0' && !v[1]);
        return true;
    }
    if (!strcmp(k, "rate_iops") || !strcmp(k, "rate")) {
        /* R[,W[,T]]: fio caps each direction by its own value; one value
         * caps both; an empty one leaves that direction free. Which counts
         * is decided with rw (fio_rate()). */
        char tmp[96], *parts[3] = {tmp, NULL, NULL};
        bool iops = k[4] == '_';
        fio_copy(tmp, sizeof(tmp), v);
        for (int i = 1; i < 3 && parts[i - 1]; i++)
            if ((parts[i] = strchr(parts[i - 1], ',')))
                *parts[i]++ = 0;
        for (int i = 0; i < 2; i++) {
            const char *d = i == 1 && !parts[1] ? parts[0] : parts[i] ? parts[i] : "";
            if (*d && (iops ? fio_uint(d, 10000000, &u) || !u : fio_size(d, &sz) || !sz))
                BAD(iops ? "expected whole numbers of I/Os per second"
                         : "expected sizes (bytes "
                           "per second)");
            fio_copy(j->rate_dir[i], sizeof(j->rate_dir[i]), d);
        }
        j->rate_iops = iops;
        j->rate_line = kv->line;
        return true;
    }
    if (!strcmp(k, "rate_process")) {
        if (strcmp(v, "linear") && strcmp(v, "poisson"))
            BAD("expected linear or poisson");
        j->poisson = v[0] == 'p';
        return true;
    }
    if (!strcmp(k, "random_distribution")) {
        size_t n = strlen(v);
        if (!strcmp(v, "random"))
            fio_copy(j->dist, sizeof(j->dist), "uniform");
        else if (n + 4 >= sizeof(j->dist))
            BAD("too long");
        else
            fio_copy(j->dist, sizeof(j->dist), v);
        /* zoned: a last zone without a size takes the rest of the range */
        if (!strncmp(v, "zoned:", 6) && n && v[n - 1] == '/') {
            unsigned sum = 0, a, r;
            for (const char *q = v + 6; *q;) {
                int used = 0;
                if (sscanf(q, "%u/%u%n", &a, &r, &used) == 2 && used) {
                    sum += r;
                    q += used;
                } else {
                    q += strcspn(q, ":");
                }
                if (*q == ':')
                    q++;
            }
            if (sum >= 100)
                BAD("the zones before the last take the whole range");
            snprintf(j->dist + n, sizeof(j->dist) - n, "%u", 100 - sum);
        }
        return true;
    }
    if (!strcmp(k, "ioengine"))
        return fio_engine(c, j, kv, was);
    if (!strcmp(k, "direct") || !strcmp(k, "buffered")) {
        bool on = !(v[0] == '0' && !v[1]);
        j->direct = k[0] == 'd' ? on : !on;
        j->direct_line = kv->line;
        return true;
    }
    if (!strcmp(k, "thinktime")) {
        if (fio_time(v, 1000, &j->thinktime_ns))
            BAD("not a time");
        if (j->thinktime_ns % 1000000 && !c->approximate)
            BAD("a plan's delay is in whole milliseconds (import with --approximate to round it "
                "up)");
        if (j->thinktime_ns % 1000000 && !was)
            fio_msg(c, kv->line,
                    "note: thinktime=%s: rounded up to %" PRIu64 "ms (a plan's delay is in "
                    "milliseconds; --approximate)",
                    fio_show(v, show, sizeof(show)),
                    (uint64_t)((j->thinktime_ns + 999999) / 1000000));
        return true;
    }
    if (!strcmp(k, "thinktime_blocks")) {
        if (fio_uint(v, 1u << 20, &u) || !u)
            BAD("expected a whole number >= 1");
        j->thinktime_blocks = u;
        return true;
    }
    if (!strcmp(k, "refill_buffers")) {
        j->pattern = "random";
        return true;
    }
    if (!strcmp(k, "zero_buffers") || !strcmp(k, "scramble_buffers")) {
        if (k[0] == 'z' && !c->approximate) {
            fio_msg(c, kv->line,
                    "error: cannot map zero_buffers: iofleet writes no all-zero data (import with "
                    "--approximate to write one repeated byte pattern)");
            return false;
        }
        if (k[0] == 'z' && !was)
            fio_msg(c, kv->line,
                    "note: zero_buffers: iofleet writes no all-zero data; mapped as pattern repeat "
                    "(one repeated byte pattern; --approximate)");
        if (k[0] == 'z')
            j->pattern = "repeat";
        else if (!was)
            fio_msg(c, kv->line, "ignored: scramble_buffers (iofleet's pattern decides)");
        return true;
    }
    if (!strcmp(k, "trim") || !strncmp(k, "trim_", 5))
        BAD("iofleet issues reads and writes only");
    if (!strcmp(k, "exitall")) {
        j->exitall = !(v[0] == '0' && !v[1]);
        j->exitall_line = kv->line;
        return true;
    }
    if (!strcmp(k, "startdelay")) {
        uint64_t ns;
        if (strchr(v, '-'))
            BAD("a random start delay in a range: the plan starts every worker group together");
        if (fio_time(v, 1000000000ull, &ns))
            BAD("not a time");
        snprintf(j->startdelay, sizeof(j->startdelay), "%" PRIu64, ns);
        j->startdelay_line = kv->line;
        return true;
    }
    if (!strcmp(k, "loops")) {
        if (fio_uint(v, 1u << 20, &u) || !u)
            BAD("expected a whole number >= 1");
        j->loops = u;
        return true;
    }
    if (!strcmp(k, "number_ios")) {
        if (fio_size(v, &sz))
            BAD("expected a whole number");
        j->number_ios = sz;
        j->number_ios_line = kv->line;
        return true;
    }
    if (!strcmp(k, "wait_for"))
        BAD("a job waiting for one named job while others run has no plan equivalent (the plan's "
            "tests wait for every job before them: stonewall)");
    if (!strcmp(k, "verify")) {
        j->verify_line = kv->line;
        if (!strcmp(v, "0") || !strcmp(v, "null")) {
            j->verify = NULL;
            return true;
        }
        if (!strcmp(v, "crc32c") || !strcmp(v, "crc32c-intel")) {
            j->verify = "crc32c";
            return true;
        }
        if (!c->approximate)
            BAD("the plan verifies with crc32c or xxh64 (import with --approximate to check with "
                "crc32c instead)");
        if (!was)
            fio_msg(c, kv->line, "note: verify=%s: checked with crc32c (--approximate)",
                    fio_show(v, show, sizeof(show)));
        j->verify = "crc32c";
        return true;
    }
    if (!strcmp(k, "do_verify")) {
        j->do_verify = !(v[0] == '0' && !v[1]);
        return true;
    }
    if (!strcmp(k, "verify_fatal")) {
        j->verify_stop = !(v[0] == '0' && !v[1]);
        return true;
    }
    if (!strcmp(k, "dedupe_percentage") || !strcmp(k, "buffer_compress_percentage")) {
        if (fio_uint(v, 100, &u))
            BAD("expected 0..100");
        *(k[0] == 'd' ? &j->dedupe_pct : &j->compress_pct) = (int)u;
        j->data_line = kv->line;
        return true;
    }
    if (fio_is_ignored(k)) {
        if (!was)
            fio_msg(c, kv->line, "ignored: %s (does not change the load)", k);
        return true;
    }
    /* Anything else could change the load: refused by name. */
    fio_msg(c, kv->line, "error: cannot map %s%s%s: no such setting in iofleet's plan", k,
            v[0] ? "=" : "", fio_show(v, show, sizeof(show)));
    return false;
#undef BAD
}

static void fio_dur_str(uint64_t ns, char *buf, size_t cap)
{
    if (ns % 1000000000ull == 0)
        snprintf(buf, cap, "%" PRIu64 "s", (uint64_t)(ns / 1000000000u));
    else
        snprintf(buf, cap, "%" PRIu64 "ms", (uint64_t)((ns + 999999) / 1000000u));
}

/* The job's spec (lines and its own end) as JSON; false when it has no end. */
static bool fio_spec_json(struct fio_ctx *c, const struct fio_job *j, struct iof_buf *b)
{
    char s[32];
    int read = j->rw == FIO_RW_READ || j->rw == FIO_RW_RANDREAD     ? 100
               : j->rw == FIO_RW_WRITE || j->rw == FIO_RW_RANDWRITE ? 0
               : j->read_pct >= 0                                   ? j->read_pct
                                                                    : 50;
    bool rnd = j->rw == FIO_RW_RANDREAD || j->rw == FIO_RW_RANDWRITE || j->rw == FIO_RW_RANDRW;
    int random = rnd ? j->random_pct : 0;
    struct fio_split one = {j->bs, 100};
    const struct fio_split *sp = j->nsplit ? j->split : &one;
    size_t n = j->nsplit ? j->nsplit : 1;
    uint64_t limit = 0, align = j->align;

    /* fio aligns the offsets of every bssplit size to the smallest one
     * (blockalign's default is the minimum block size). */
    for (size_t i = 0; !j->align && j->nsplit && i < n; i++)
        if (!i || sp[i].size < align)
            align = sp[i].size;
    iof_buf_addstr(b, "\"lines\": [");
    for (size_t i = 0; i < n; i++) {
        proto_plan_format_size(sp[i].size, s, sizeof(s));
        iof_buf_printf(b, "%s{\"size\": \"%s\"", i ? ", " : "", s);
        if (n > 1)
            iof_buf_printf(b, ", \"share\": %u", sp[i].pct);
        iof_buf_printf(b, ", \"read\": %d, \"random\": %d", read, random);
        if (align) {
            proto_plan_format_size(align, s, sizeof(s));
            iof_buf_printf(b, ", \"align\": \"%s\"", s);
        }
        if (j->thinktime_ns) {
            fio_dur_str(j->thinktime_ns, s, sizeof(s));
            iof_buf_printf(b, ", \"delay\": \"%s\", \"burst\": %u", s, j->thinktime_blocks);
        }
        if (j->dist[0] && random) {
            iof_buf_addstr(b, ", \"distribution\": ");
            iof_json_escape(b, j->dist, IOF_JSON_TEXT);
        }
        if (j->random_once && random)
            iof_buf_addstr(b, ", \"random_map\": \"once_per_pass\"");
        iof_buf_addc(b, '}');
    }
    iof_buf_addc(b, ']');
    if (j->ramp_ns && !c->run_ramp_ns) {
        fio_dur_str(j->ramp_ns, s, sizeof(s));
        iof_buf_printf(b, ", \"ramp\": \"%s\"", s);
    }
    if (j->runtime_ns && !c->run_dur_ns) {
        fio_dur_str(j->runtime_ns, s, sizeof(s));
        iof_buf_printf(b, ", \"duration\": \"%s\"", s);
    }
    if (!j->time_based) {
        /* fio stops a job after io_size (default size, capped at the files' size). */
        uint64_t files = j->filesize;
        limit = j->io_size ? j->io_size : j->size;
        if (!j->io_size && files && (!limit || limit > files))
            limit = files;
        /* loops repeats the job that many times */
        if (limit && j->loops > 1)
            limit = limit > UINT64_MAX / j->loops ? UINT64_MAX : limit * j->loops;
    }
    if (j->number_ios) {
        /* fio stops after that many I/Os, if nothing stopped it before */
        if (j->nsplit) {
            fio_msg(c, j->number_ios_line,
                    "error: cannot map number_ios with bssplit: a number of I/Os of mixed sizes is "
                    "no amount of bytes (the plan's io_limit)");
            return false;
        }
        uint64_t bytes = j->number_ios > UINT64_MAX / j->bs ? UINT64_MAX : j->number_ios * j->bs;
        if (!limit || bytes < limit)
            limit = bytes;
    }
    {
        if (limit) {
            proto_plan_format_size(limit, s, sizeof(s));
            iof_buf_printf(b, ", \"io_limit\": \"%s\"", s);
        }
    }
    if (!j->runtime_ns && !limit) {
        fio_msg(c, j->line,
                "error: job '%s' has no end iofleet knows (set runtime with time_based, or "
                "size/io_size)",
                j->name);
        return false;
    }
    return true;
}

/* One target per colon-separated filename ("\:" keeps a colon). */
static bool fio_targets_json(struct fio_ctx *c, const struct fio_job *j, struct iof_buf *b)
{
    char files[FIO_MAX_FILES][FIO_STR / 4];
    size_t nf = 0, k = 0;
    char s[32], s2[32];
    unsigned line = j->filename_line ? j->filename_line : j->line;

    if (!j->filename[0]) {
        snprintf(files[0], sizeof(files[0]), "%s.0.0", j->name);
        nf = 1;
        if (j->numjobs > 1 && !c->approximate) {
            fio_msg(c, j->line,
                    "error: job '%s' has no filename: fio gives each of its %u jobs a file of its "
                    "own, a plan's workers share their targets (set filename, or import with "
                    "--approximate to share one test file)",
                    j->name, j->numjobs);
            return false;
        }
        if (j->numjobs > 1)
            fio_msg(c, j->line,
                    "note: job '%s' has no filename: fio gives each of its %u jobs a file of its "
                    "own; the plan's %u workers share the test file '%s' (--approximate)",
                    j->name, j->numjobs, j->numjobs, files[0]);
    } else {
        for (const char *p = j->filename;; p++) {
            if (*p == '\\' && p[1] == ':') {
                p++;
            } else if (*p == ':' || !*p) {
                if (k) {
                    files[nf][k] = 0;
                    if (++nf >= FIO_MAX_FILES) {
                        fio_msg(c, line, "error: more than %d filenames", FIO_MAX_FILES - 1);
                        return false;
                    }
                }
                k = 0;
                if (!*p)
                    break;
                continue;
            }
            if (k + 1 >= sizeof(files[0])) {
                fio_msg(c, line, "error: a filename longer than %zu bytes", sizeof(files[0]) - 1);
                return false;
            }
            files[nf][k++] = *p;
        }
    }
    if (!nf) {
        fio_msg(c, line, "error: empty filename");
        return false;
    }
    iof_buf_addstr(b, "\"targets\": [");
    for (size_t i = 0; i < nf; i++) {
        char path[FIO_STR + FIO_STR / 4 + 2];
        /* fio: a file's region is [offset, offset + size per file) and the
         * file is extended to its end; with filesize, the file is that size
         * and the region runs from the offset to its end. */
        uint64_t region = j->filesize ? 0 : j->size / nf;
        uint64_t fsize = j->filesize                                  ? j->filesize
                         : region && j->offset <= UINT64_MAX - region ? j->offset + region
                                                                      : 0;
        const char *base;

        if (j->directory[0] && files[i][0] != '/')
            snprintf(path, sizeof(path), "%s/%.255s", j->directory, files[i]);
        else
            snprintf(path, sizeof(path), "%.255s", files[i]);
        iof_buf_addstr(b, i ? ", {\"path\": " : "{\"path\": ");
        if (!strncmp(path, "/dev/", 5)) {
            iof_json_escape(b, path, IOF_JSON_TEXT);
            if (j->offset || j->offset_pct[0] || j->size || j->size_pct[0]) {
                iof_buf_addstr(b, ", \"range\": {");
                if (j->offset_pct[0])
                    iof_buf_printf(b, "\"offset\": \"%s\"", j->offset_pct);
                else {
                    proto_plan_format_size(j->offset, s, sizeof(s));
                    iof_buf_printf(b, "\"offset\": \"%s\"", s);
                }
                if (j->size_pct[0])
                    iof_buf_printf(b, ", \"size\": \"%s\"", j->size_pct);
                else if (j->size) {
                    proto_plan_format_size(j->size / nf, s, sizeof(s));
                    iof_buf_printf(b, ", \"size\": \"%s\"", s);
                }
                iof_buf_addc(b, '}');
            }
            iof_buf_addc(b, '}');
            continue;
        }
        if (j->size_pct[0] || j->offset_pct[0]) {
            fio_msg(c, line,
                    "error: cannot map a size or offset in %% for the test file '%s' (only for a "
                    "device)",
                    path);
            return false;
        }
        if (!fsize) {
            fio_msg(c, line, "error: test file '%s' has no size (set size or filesize)", path);
            return false;
        }
        base = path;
        if (path[0] == '/') {
            base = strrchr(path, '/') + 1;
            if (!*base) {
                fio_msg(c, line, "error: cannot map filename '%s': a directory", path);
                return false;
            }
            fio_msg(c, line,
                    "note: %s is a test file '%s' in the agent's workdir (dynamo --workdir, "
                    "iofleet run --workdir, puts it on the same filesystem)",
                    path, base);
        }
        iof_json_escape(b, base, IOF_JSON_TEXT);
        proto_plan_format_size(fsize, s, sizeof(s));
        iof_buf_printf(b, ", \"size\": \"%s\"", s);
        if (j->offset) {
            if (j->offset >= fsize) {
                fio_msg(c, line, "error: offset is past the end of the test file '%s'", base);
                return false;
            }
            proto_plan_format_size(j->offset, s, sizeof(s));
            proto_plan_format_size(region ? region : fsize - j->offset, s2, sizeof(s2));
            iof_buf_printf(b, ", \"range\": {\"offset\": \"%s\", \"size\": \"%s\"}", s, s2);
        }
        iof_buf_addc(b, '}');
    }
    iof_buf_addc(b, ']');
    return true;
}

/* fio's random map: a random job with the uniform distribution and the
 * default alignment touches every block once per pass unless norandommap
 * (fio's init.c turns the map off for other distributions and blockalign):
 * the plan's random_map "once_per_pass" for one block size. fio's map of a
 * bssplit job counts blocks of the smallest size, which the plan's per-line
 * passes do not: refused, or with --approximate drawn with replacement. */
static bool fio_random_map(struct fio_ctx *c, struct fio_job *j)
{
    bool rnd = j->rw == FIO_RW_RANDREAD || j->rw == FIO_RW_RANDWRITE || j->rw == FIO_RW_RANDRW;
    uint64_t min = j->bs;

    for (size_t i = 0; i < j->nsplit; i++)
        if (!i || j->split[i].size < min)
            min = j->split[i].size;
    if (!rnd || !j->random_pct || j->norandommap || (j->dist[0] && strcmp(j->dist, "uniform")) ||
        (j->align && j->align != min) || !strcmp(j->engine, "null"))
        return true;
    if (!j->nsplit) {
        j->random_once = true;
        return true;
    }
    if (!c->approximate) {
        fio_msg(c, j->rw_line ? j->rw_line : j->line,
                "error: job '%s' is random with bssplit and without norandommap: fio's random "
                "map touches every block of the smallest size once per pass, which the plan's "
                "random_map cannot for several sizes (add norandommap, or import with "
                "--approximate)",
                j->name);
        return false;
    }
    fio_msg(c, j->rw_line ? j->rw_line : j->line,
            "note: job '%s' is random with bssplit and without norandommap: fio touches every "
            "block once per pass, the plan draws offsets with replacement (--approximate)",
            j->name);
    return true;
}

/* The rate that counts for the job's direction(s), as the plan's: fio caps
 * reads and writes separately, so a mixed job maps only when neither is
 * capped; rate_iops with bssplit paces in bytes of the smallest size (fio
 * turns IOPS into bytes with the minimum block size), which is mibps. */
static bool fio_rate(struct fio_ctx *c, struct fio_job *j)
{
    bool rd = j->rw == FIO_RW_READ || j->rw == FIO_RW_RANDREAD ||
              ((j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW) && j->read_pct == 100);
    bool wr = j->rw == FIO_RW_WRITE || j->rw == FIO_RW_RANDWRITE ||
              ((j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW) && j->read_pct == 0);
    const char *d;
    uint64_t v = 0;
    unsigned u = 0;

    j->rate[0] = 0;
    if (!j->rate_dir[0][0] && !j->rate_dir[1][0])
        return true;
    if (!rd && !wr) {
        fio_msg(c, j->rate_line,
                "error: cannot map %s=%s%s%s of job '%s': fio caps a mixed job's reads and writes "
                "separately; a plan's rate is one for all of a worker's I/Os",
                j->rate_iops ? "rate_iops" : "rate", j->rate_dir[0],
                strcmp(j->rate_dir[0], j->rate_dir[1]) ? "," : "",
                strcmp(j->rate_dir[0], j->rate_dir[1]) ? j->rate_dir[1] : "", j->name);
        return false;
    }
    d = j->rate_dir[rd ? 0 : 1];
    if (!*d) /* only the other direction is capped */
        return true;
    if (j->rate_iops) {
        uint64_t min = j->bs;
        fio_uint(d, 10000000, &u);
        for (size_t i = 0; i < j->nsplit; i++)
            if (!i || j->split[i].size < min)
                min = j->split[i].size;
        if (j->nsplit)
            snprintf(j->rate, sizeof(j->rate), "{\"mibps\": %.10g",
                     (double)u * (double)min / 1048576.0);
        else
            snprintf(j->rate, sizeof(j->rate), "{\"iops\": %u", u);
    } else {
        fio_size(d, &v);
        snprintf(j->rate, sizeof(j->rate), "{\"mibps\": %.10g", (double)v / 1048576.0);
    }
    return true;
}

static bool fio_group_json(struct fio_ctx *c, const struct fio_job *j, struct iof_buf *b)
{
    unsigned qd = j->iodepth;

    if (j->engine_sync && qd > 1) {
        fio_msg(c, j->line,
                "note: job '%s' uses a synchronous engine: fio keeps 1 I/O in flight per job "
                "whatever iodepth says; mapped as queue_depth 1",
                j->name);
        qd = 1;
    }
    iof_buf_printf(b,
                   "{\"nodes\": [\"*\"], \"count\": %u, \"engine\": \"%s\", "
                   "\"queue_depth\": %u, ",
                   j->numjobs, j->engine, qd);
    if (!fio_targets_json(c, j, b))
        return false;
    if (j->dedupe_pct >= 0 || j->compress_pct >= 0) {
        char unit[32];
        proto_plan_format_size(j->nsplit ? j->split[0].size : j->bs, unit, sizeof(unit));
        for (size_t i = 0; i < j->nsplit; i++)
            if (j->split[i].size < (j->nsplit ? j->split[0].size : j->bs))
                proto_plan_format_size(j->split[i].size, unit, sizeof(unit));
        if (j->verify) {
            fio_msg(c, j->data_line,
                    "error: cannot map dedupe_percentage/buffer_compress_percentage with verify: a "
                    "verified block carries a header, which the plan's data cannot hold");
            return false;
        }
        if (j->nsplit && j->dedupe_pct > 0) {
            fio_msg(c, j->data_line,
                    "error: cannot map dedupe_percentage with bssplit: fio dedupes whole write "
                    "buffers of each size, the plan fixed units");
            return false;
        }
        iof_buf_printf(b,
                       ", \"data\": {\"dedupe\": \"%d%%\", \"compress\": \"%d%%\", "
                       "\"dedupe_unit\": \"%s\"}",
                       j->dedupe_pct > 0 ? j->dedupe_pct : 0,
                       j->compress_pct > 0 ? j->compress_pct : 0, unit);
    } else {
        iof_buf_printf(b, ", \"pattern\": \"%s\"", j->pattern);
    }
    if (j->verify) {
        bool rd = j->rw == FIO_RW_READ || j->rw == FIO_RW_RANDREAD;
        bool wr = j->rw == FIO_RW_WRITE || j->rw == FIO_RW_RANDWRITE;
        if (!rd && !wr) {
            fio_msg(c, j->verify_line,
                    "error: cannot map verify in job '%s': fio verifies a mixed job's reads "
                    "against what it wrote itself; the plan verifies a write test after it "
                    "(verify_mode after) or a read test inline",
                    j->name);
            return false;
        }
        /* fio reads a write job's blocks back after writing (do_verify) */
        iof_buf_printf(b, ", \"verify\": \"%s\", \"verify_mode\": \"%s\"", j->verify,
                       wr && j->do_verify ? "after" : "inline");
        if (j->verify_stop)
            iof_buf_addstr(b, ", \"verify_stop\": true");
    }
    if (j->offset_inc[0]) {
        iof_buf_addstr(b, ", \"offset_increment\": ");
        iof_json_escape(b, j->offset_inc, IOF_JSON_TEXT);
    }
    if (j->rate[0])
        iof_buf_printf(b, ", \"rate\": %s%s}", j->rate,
                       j->poisson ? ", \"arrival\": \"poisson\"" : "");
    iof_buf_addc(b, '}');
    return true;
}

static void fio_spec_name(const struct fio_job *j, char *buf, size_t cap)
{
    char s[32];
    const char *how =
        j->rw == FIO_RW_RANDREAD || j->rw == FIO_RW_RANDWRITE || j->rw == FIO_RW_RANDRW
            ? "random"
            : "sequential";
    int read = j->read_pct >= 0 ? j->read_pct : 50;

    if (j->nsplit)
        snprintf(s, sizeof(s), "bssplit");
    else
        proto_plan_format_size(j->bs, s, sizeof(s));
    if (j->rw == FIO_RW_RW || j->rw == FIO_RW_RANDRW)
        snprintf(buf, cap, "%s (%s %s %d%% read)", j->name, s, how, read);
    else
        snprintf(buf, cap, "%s (%s %s %s)", j->name, s, how,
                 j->rw == FIO_RW_READ || j->rw == FIO_RW_RANDREAD ? "read" : "write");
}

/* One job as the plan sees it: its spec (the lines and the end) and its
 * worker group, and the test (stonewall-separated step) it belongs to. */
struct fio_unit {
    struct iof_buf spec, group;
    char spec_name[200]; /* the spec's name in the plan (shared by equal specs) */
    size_t test;
    const struct fio_job *job;
    bool listed; /* its spec is one of the plan's (not its test's first job's) */
};

/* A group name from a job name: letters, digits, '.', '_' and '-' kept,
 * anything else '-', unique among names[0..n) (a "-2", "-3" ... suffix). */
static void fio_group_name(const char *job, char (*names)[65], size_t n, char *out)
{
    char base[56];
    size_t k = 0;

    for (const char *p = job; *p && k + 1 < sizeof(base); p++)
        base[k++] = isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-' ? *p : '-';
    base[k] = 0;
    if (!k)
        snprintf(base, sizeof(base), "job");
    snprintf(out, 65, "%s", base);
    for (unsigned suffix = 2;; suffix++) {
        size_t i = 0;
        while (i < n && strcmp(names[i], out))
            i++;
        if (i == n)
            return;
        snprintf(out, 65, "%s-%u", base, suffix);
    }
}

/* The plan: one test per stonewall-separated step. The jobs of a step run
 * at once as worker groups; every step must have the same groups (fio
 * jobs in the same order with the same workers, engine, depth, files and
 * rate). When the jobs of a step share one workload the plan's specs are
 * the steps' workloads; otherwise every group lists its own (`specs`:
 * the i-th entry runs in test i), which is how a plan runs different
 * workloads at once. */
static int fio_emit(struct fio_ctx *c, struct fio_job *jobs, size_t njobs, struct iof_buf *json)
{
    struct fio_unit *u = calloc(njobs, sizeof(*u));
    char(*gnames)[65] = calloc(njobs, sizeof(*gnames));
    size_t nt = 0, per = 0; /* tests, jobs per test */
    bool same = true;       /* every test's jobs share one spec */
    int rc = 0;

    if (!u || !gnames) {
        free(u);
        free(gnames);
        return -ENOMEM;
    }
    /* A runtime and ramp_time every job shares (a [global] one, usually)
     * are the run's, so `--set run.duration=...` changes them. A runtime
     * under the run's interval (1s) stays the spec's. */
    c->run_dur_ns = jobs[0].runtime_ns >= 1000000000ull ? jobs[0].runtime_ns : 0;
    c->run_ramp_ns = jobs[0].ramp_ns;
    for (size_t i = 1; i < njobs; i++) {
        if (jobs[i].runtime_ns != c->run_dur_ns)
            c->run_dur_ns = 0;
        if (jobs[i].ramp_ns != c->run_ramp_ns)
            c->run_ramp_ns = 0;
    }
    /* exitall ends every job when the first ends: the same as the plan
     * only when every job runs for one time and nothing else ends it. */
    for (size_t i = 0; i < njobs && !c->failed; i++) {
        if (!jobs[i].exitall)
            continue;
        for (size_t k = 0; k < njobs; k++)
            if (!jobs[k].time_based || !jobs[k].runtime_ns ||
                jobs[k].runtime_ns != jobs[0].runtime_ns || jobs[k].number_ios) {
                fio_msg(c, jobs[i].exitall_line,
                        "error: cannot map exitall: job '%s' %s, so the first job to end would "
                        "stop the others; a plan's test runs every worker to its own end",
                        jobs[k].name,
                        jobs[k].time_based && jobs[k].runtime_ns ? "runs for another time or "
                                                                   "number of I/Os"
                                                                 : "is not time_based");
                break;
            }
        break;
    }
    /* startdelay: the same for every job is a pause before the test. */
    for (size_t i = 1; i < njobs && !c->failed; i++)
        if (strcmp(jobs[i].startdelay, jobs[0].startdelay)) {
            const struct fio_job *d = jobs[i].startdelay_line ? &jobs[i] : &jobs[0];
            fio_msg(c, d->startdelay_line,
                    "error: cannot map startdelay: jobs '%s' and '%s' start at different times; "
                    "a plan's worker groups start together",
                    jobs[0].name, jobs[i].name);
        }
    if (!c->failed && jobs[0].startdelay[0] && strcmp(jobs[0].startdelay, "0"))
        fio_msg(c, jobs[0].startdelay_line,
                "ignored: startdelay (every job waits the same before it starts: no change to the "
                "load)");
    for (size_t i = 0; i < njobs && !c->failed; i++) {
        struct fio_job *j = &jobs[i];
        if (!i || j->stonewall)
            nt++;
        u[i].test = nt - 1;
        u[i].job = j;
        iof_buf_init(&u[i].spec, 0);
        iof_buf_init(&u[i].group, 0);
        /* iofleet's sync engine is buffered (fio's psync, direct=0), libaio
         * and io_uring always O_DIRECT. fio's synchronous engines with
         * direct=1 keep one O_DIRECT I/O in flight per job: libaio at
         * queue depth 1 (engine_sync keeps the depth at 1). */
        if (j->direct && j->engine_sync)
            fio_copy(j->engine, sizeof(j->engine), "libaio");
        else if (!j->direct && !j->engine_sync && fio_engine_direct(j->engine)) {
            unsigned dl = j->direct_line ? j->direct_line : j->line;
            const char *how = j->direct_line ? "" : " (fio's default)";
            if (!c->approximate) {
                fio_msg(c, dl,
                        "error: cannot map direct=0%s of job '%s': buffered I/O, and iofleet's "
                        "%s engine always uses O_DIRECT (set direct=1, use ioengine=psync: "
                        "iofleet's sync engine is buffered, or import with --approximate)",
                        how, j->name, j->engine);
                break;
            }
            fio_msg(c, dl,
                    "note: job '%s' has direct=0%s (buffered I/O): run with O_DIRECT, as "
                    "iofleet's %s engine always does (--approximate)",
                    j->name, how, j->engine);
        }
        if (!fio_random_map(c, j) || !fio_rate(c, j) || !fio_spec_json(c, j, &u[i].spec) ||
            !fio_group_json(c, j, &u[i].group))
            break;
        if (u[i].spec.err || u[i].group.err) {
            rc = -ENOMEM;
            break;
        }
        fio_spec_name(j, u[i].spec_name, sizeof(u[i].spec_name));
        if (u[i].test == 0)
            per++;
    }
    /* Step t's k-th job must be step 0's k-th group. */
    for (size_t i = 0, k = 0; i < njobs && !c->failed && !rc; i++, k++) {
        if (i && u[i].test != u[i - 1].test)
            k = 0;
        if (k >= per || strcmp(u[i].group.p, u[k].group.p)) {
            const struct fio_unit *first = &u[i - k]; /* this step's first job */
            fio_msg(c, first->job->line,
                    "error: job '%s' and the jobs after it up to the next stonewall run with "
                    "other workers, engine, queue depth, files or rate than the jobs from '%s' "
                    "(line %u): a plan's worker groups are the same in every test",
                    first->job->name, u[0].job->name, u[0].job->line);
            break;
        }
        if (k + 1 < per && (i + 1 == njobs || u[i + 1].test != u[i].test)) {
            fio_msg(c, u[i - k].job->line,
                    "error: the step from job '%s' runs %zu job%s at once where the first runs "
                    "%zu: a plan's worker groups are the same in every test",
                    u[i - k].job->name, k + 1, k ? "s" : "", per);
            break;
        }
        if (k && strcmp(u[i].spec.p, u[i - 1].spec.p))
            same = false;
    }
    /* The specs the plan lists: each test's when its jobs share one, else
     * every job's; names made unique with the job's name and a number. */
    for (size_t i = 0; i < njobs && !c->failed && !rc; i++) {
        u[i].listed = !(same && i && u[i].test == u[i - 1].test);
        for (unsigned n = 2; u[i].listed; n++) {
            size_t d = 0;
            while (d < i && !(u[d].listed && !strcmp(u[d].spec_name, u[i].spec_name)))
                d++;
            if (d == i)
                break;
            snprintf(u[i].spec_name, sizeof(u[i].spec_name), "%.180s #%u", u[i].job->name, n);
        }
    }
    if (!c->failed && !rc) {
        iof_buf_addstr(json, "{\n  \"name\": ");
        iof_json_escape(json, c->name, IOF_JSON_TEXT);
        if (c->nnotes) {
            iof_buf_addstr(json, ",\n  \"notes\": [");
            iof_buf_addstr(json, c->notes.p);
            iof_buf_addc(json, ']');
        }
        if (c->notes.err)
            rc = c->notes.err;
        iof_buf_addstr(json, ",\n  \"run\": {");
        if (c->run_ramp_ns) {
            char d[32];
            fio_dur_str(c->run_ramp_ns, d, sizeof(d));
            iof_buf_printf(json, "\"ramp\": \"%s\", ", d);
        }
        if (c->run_dur_ns) {
            char d[32];
            fio_dur_str(c->run_dur_ns, d, sizeof(d));
            iof_buf_printf(json, "\"duration\": \"%s\", ", d);
        }
        iof_buf_addstr(json, "\"interval\": \"1s\"},\n  \"specs\": [\n");
        for (size_t i = 0, first = 1; i < njobs; i++) {
            if (!u[i].listed)
                continue;
            iof_buf_printf(json, "%s    {\"name\": ", first ? "" : ",\n");
            iof_json_escape(json, u[i].spec_name, IOF_JSON_TEXT);
            iof_buf_printf(json, ", %s}", u[i].spec.p);
            first = 0;
        }
        iof_buf_addstr(json, "\n  ],\n  \"workers\": [");
        for (size_t k = 0; k < per; k++) {
            const char *g = u[k].group.p;
            iof_buf_addstr(json, k ? ", " : "");
            if (!same) {
                fio_group_name(u[k].job->name, gnames, k, gnames[k]);
                iof_buf_addstr(json, "{\"name\": ");
                iof_json_escape(json, gnames[k], IOF_JSON_TEXT);
                iof_buf_addstr(json, ", \"specs\": [");
                for (size_t t = 0; t < nt; t++) {
                    iof_buf_addstr(json, t ? ", " : "");
                    iof_json_escape(json, u[t * per + k].spec_name, IOF_JSON_TEXT);
                }
                iof_buf_addstr(json, "], ");
                g++; /* past its '{' */
            }
            iof_buf_addstr(json, g);
        }
        iof_buf_addstr(json, "]\n}\n");
        if (json->err)
            rc = json->err;
    }
    for (size_t i = 0; i < njobs; i++) {
        iof_buf_free(&u[i].spec);
        iof_buf_free(&u[i].group);
    }
    free(u);
    free(gnames);
    return rc;
}

int proto_import_fio(const char *name, const char *text, size_t len, unsigned flags,
                     struct iof_buf *json, struct iof_buf *msgs, struct iof_diag *diag)
{
    struct fio_ctx c = {
        .name = name, .msgs = msgs, .approximate = (flags & IOF_IMPORT_APPROXIMATE) != 0};
    struct fio_job *jobs = NULL;
    size_t njobs = 0;
    char *copy;
    int rc;

    if (len > IOF_IMPORT_MAX_TEXT)
        return iof_diag_set(diag, IOF_EPLAN, "%s: larger than %u bytes", name, IOF_IMPORT_MAX_TEXT);
    if (memchr(text, 0, len))
        return iof_diag_set(diag, IOF_EPLAN, "%s: a NUL byte: not a fio job file", name);
    copy = malloc(len + 1);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, text, len);
    copy[len] = 0;
    rc = fio_parse(&c, copy);
    if (!rc && !c.failed) {
        size_t nreal = 0;
        for (size_t s = 0; s < c.nsec; s++)
            nreal += !c.sec[s].global;
        if (!nreal) {
            fio_msg(&c, 1, "error: no job section (only [global] or nothing)");
        } else if (!(jobs = calloc(nreal, sizeof(*jobs)))) {
            rc = -ENOMEM;
        }
        for (size_t s = 0; jobs && s < c.nsec && !c.failed; s++) {
            struct fio_job *j;
            if (c.sec[s].global)
                continue;
            j = &jobs[njobs++];
            fio_job_defaults(j);
            fio_copy(j->name, sizeof(j->name), c.sec[s].name);
            j->line = c.sec[s].line;
            /* The engine first: an engine iofleet does not have is the
             * reason a job cannot be imported, whatever its other options
             * (nfs_url, hostname...) would say. */
            {
                struct fio_kv *eng = NULL;
                for (size_t g = 0; g <= s; g++)
                    for (size_t o = 0; (g == s || c.sec[g].global) && o < c.sec[g].count; o++)
                        if (!strcmp(c.kv[c.sec[g].first + o].key, "ioengine"))
                            eng = &c.kv[c.sec[g].first + o];
                if (eng && !fio_engine(&c, j, eng, eng->reported)) {
                    eng->reported = true;
                    break;
                }
            }
            /* Every [global] before the job, then the job's own options. */
            for (size_t g = 0; g < s; g++)
                for (size_t o = 0; c.sec[g].global && o < c.sec[g].count; o++)
                    fio_apply(&c, j, &c.kv[c.sec[g].first + o]);
            for (size_t o = 0; o < c.sec[s].count; o++)
                fio_apply(&c, j, &c.kv[c.sec[s].first + o]);
            /* rw decides which of bs=R,W counts: read bs again after rw. */
            for (size_t g = 0; g <= s; g++)
                for (size_t o = 0; (g == s || c.sec[g].global) && o < c.sec[g].count; o++) {
                    struct fio_kv *kv = &c.kv[c.sec[g].first + o];
                    if ((!strcmp(kv->key, "bs") || !strcmp(kv->key, "blocksize")) && !c.failed)
                        fio_bs(&c, j, kv);
                    else if (!strcmp(kv->key, "bssplit") && !c.failed)
                        fio_bssplit(&c, j, kv);
                }
        }
        if (!rc && !c.failed)
            rc = fio_emit(&c, jobs, njobs, json);
    }
    if (!rc && msgs->err)
        rc = msgs->err;
    if (!rc && c.failed)
        rc = iof_diag_set(diag, IOF_EPLAN, "%s: cannot be imported (the reasons are above)", name);
    free(jobs);
    free(c.kv);
    free(c.sec);
    for (size_t i = 0; i < c.nowned; i++)
        free(c.owned[i]);
    iof_buf_free(&c.notes);
    free(c.owned);
    free(copy);
    return rc;
}
