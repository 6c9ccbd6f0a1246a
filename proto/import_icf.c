/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_icf.c - `iofleet import FILE.icf`: an Iometer configuration
 * file as plan JSON.
 *
 * The format is the text Iometer writes with "Save Configuration" (and the
 * scripts that generate it): a "Version 1.1.0" or date-style
 * ("Version 2006.07.27") first line, then sections opened by a comment line
 * "'TEST SETUP ====", "'RESULTS DISPLAY ====", "'ACCESS SPECIFICATIONS ====",
 * "'MANAGER LIST ====" and closed by "'END ...". Inside, each comment line
 * names the value lines that follow it (a tab-indented line, or several).
 *
 * Iometer's model: every worker of every manager has a list of assigned
 * access specifications; test i runs entry i on every worker, for the run
 * time, after the ramp. A worker's "# of outstanding IOs" is per target, as
 * a plan's queue_depth. So assigned specs become the plan's specs in order,
 * disk workers become worker groups (workers of one manager with the same
 * settings and targets merge into one group with a count), managers become
 * the groups' nodes ("*" when there is one manager). Windows target names
 * ("PHYSICALDRIVE:1", "C: \"label\"") map through NAME=PATH pairs, or stay
 * as "iometer:NAME" placeholders that the plan loader refuses by name.
 * Every line not mapped is named with its number. */
#include "proto/import.h"
#include "common/jsonw.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ICF_MAX_SPECS 1024
#define ICF_MAX_LINES_PER_SPEC 64
#define ICF_MAX_WORKERS 256
#define ICF_MAX_TARGETS 256
#define ICF_NAME 256

struct icf_line {
    uint64_t size;
    unsigned share, read, random, delay_ms, burst;
    uint64_t align;
};

struct icf_spec {
    char name[ICF_NAME];
    unsigned line;
    struct icf_line lines[ICF_MAX_LINES_PER_SPEC];
    size_t nlines;
};

struct icf_worker {
    char name[ICF_NAME];
    unsigned line;
    size_t manager;
    bool disk;
    unsigned qd;
    bool has_seed;
    uint64_t seed;
    uint64_t max_sectors, start_sector; /* in the disk's sectors (icf_ctx.sector) */
    unsigned size_line;                 /* of the line giving them */
    const char *pattern;
    size_t specs[ICF_MAX_SPECS]; /* indices into the spec table */
    unsigned spec_lines[ICF_MAX_SPECS];
    size_t nspecs;
    char (*targets)[ICF_NAME];
    unsigned target_lines[ICF_MAX_TARGETS];
    size_t ntargets;
};

/* The sections of a file, in icf_sections[] order. */
enum icf_section {
    ICF_SEC_SETUP,
    ICF_SEC_DISPLAY,
    ICF_SEC_SPECS,
    ICF_SEC_MANAGERS,
    ICF_SEC_COUNT,
};

struct icf_ctx {
    const char *name;
    struct iof_buf *msgs;
    bool failed;
    unsigned sector;              /* the disks' sector size in bytes; 0: not given */
    unsigned align0_line;         /* first access spec line with align 0 */
    unsigned seen[ICF_SEC_COUNT]; /* line of each section's first header; 0: none yet */
    unsigned mgr_end_line;        /* of the first 'END manager list */
    unsigned undef_line;          /* first assignment of an undefined access spec */
    size_t undef_more;            /* and how many more */
    char undef_name[ICF_NAME];
    char **line; /* the text's lines, trimmed */
    size_t nlines, i;
    char desc[ICF_NAME];
    uint64_t run_s, ramp_s;
    bool has_run;
    unsigned run_line, type_line;
    char test_type[64];
    unsigned wc_start, wc_step, tc_start, tc_step, qc_start, qc_end, qc_step;
    bool wc_exp, tc_exp, qc_exp;
    struct icf_spec *specs;
    size_t nspecs;
    struct icf_worker *workers;
    size_t nworkers;
    char managers[64][ICF_NAME];
    size_t nmanagers;
};

static void icf_msg(struct icf_ctx *c, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void icf_msg(struct icf_ctx *c, size_t line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    c->failed |= proto_import_vmsg(c->msgs, c->name, line, fmt, ap);
    va_end(ap);
}

/* A name or path of the file checked against common/text.h's policy. */
static bool icf_text_bad(struct icf_ctx *c, size_t line, const char *what, const char *v)
{
    bool bad = proto_import_text_bad(c->msgs, c->name, line, what, v);

    c->failed |= bad;
    return bad;
}

static bool icf_is_comment(const char *l)
{
    return l[0] == '\'';
}

/* Value lines without the comment line that names them, from c->i: one
 * message for the run of them, not one per line. */
static void icf_orphans(struct icf_ctx *c)
{
    size_t from = c->i;

    while (c->i + 1 < c->nlines && c->line[c->i + 1][0] && !icf_is_comment(c->line[c->i + 1]))
        c->i++;
    if (c->i == from)
        icf_msg(c, from + 1, "cannot map this line: a value without its comment line");
    else
        icf_msg(c, from + 1, "cannot map lines %zu-%zu: values without their comment line",
                from + 1, c->i + 1);
}

/* Case-insensitive prefix match of the comment line `l` against `key`. */
static bool icf_key(const char *l, const char *key)
{
    return !strncasecmp(l, key, strlen(key));
}

/* The value line after the current key (or NULL when the next line is a
 * comment or the end); advances past it. */
static const char *icf_value(struct icf_ctx *c)
{
    if (c->i + 1 >= c->nlines || icf_is_comment(c->line[c->i + 1]))
        return NULL;
    return c->line[++c->i];
}

/* The next line when it is a column-header comment ("'\thours ...",
 * "'\tstart ..."): skipped. */
static void icf_skip_header(struct icf_ctx *c)
{
    if (c->i + 1 < c->nlines && c->line[c->i + 1][0] == '\'' &&
        (c->line[c->i + 1][1] == '\t' || c->line[c->i + 1][1] == ' '))
        c->i++;
}

static bool icf_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    errno = 0;
    v = strtoull(s, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    if (errno || *end || v > max)
        return false;
    *out = v;
    return true;
}

/* Splits `s` (modified) at commas into at most n fields; returns the count. */
static size_t icf_fields(char *s, char **f, size_t n)
{
    size_t k = 0;

    while (k < n) {
        char *comma = strchr(s, ',');
        f[k++] = s;
        if (!comma)
            break;
        *comma = 0;
        s = comma + 1;
    }
    return k;
}

/* Splits at runs of blanks ("0          10         0"). */
static size_t icf_words(char *s, char **f, size_t n)
{
    size_t k = 0;
    char *save = NULL;

    for (char *t = strtok_r(s, " \t", &save); t && k < n; t = strtok_r(NULL, " \t", &save))
        f[k++] = t;
    return k;
}

/* Copies at most cap - 1 bytes of src and terminates (a long name is cut). */
static void icf_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);

    memcpy(dst, src, n);
    dst[n] = 0;
}

/* "start step type" or "start end step type" of a cycling line. */
static bool icf_cycling(struct icf_ctx *c, bool with_end, unsigned *start, unsigned *end,
                        unsigned *step, bool *exp)
{
    char tmp[IOF_IMPORT_MAX_LINE + 1], *w[4];
    const char *v;
    size_t n, want = with_end ? 4 : 3;
    uint64_t a, b = 0, s;

    icf_skip_header(c);
    v = icf_value(c);
    if (!v)
        return false;
    icf_copy(tmp, sizeof(tmp), v);
    n = icf_words(tmp, w, 4);
    if (n != want || !icf_u64(w[0], 1u << 20, &a) || (with_end && !icf_u64(w[1], 1u << 20, &b)) ||
        !icf_u64(w[want - 2], 1u << 20, &s))
        return false;
    *start = (unsigned)a;
    if (end)
        *end = (unsigned)b;
    *step = (unsigned)s;
    *exp = !strcasecmp(w[want - 1], "EXPONENTIAL");
    return *exp || !strcasecmp(w[want - 1], "LINEAR");
}

static void icf_test_setup(struct icf_ctx *c)
{
    for (c->i++; c->i < c->nlines; c->i++) {
        const char *l = c->line[c->i], *v;
        size_t at = c->i + 1;
        char tmp[IOF_IMPORT_MAX_LINE + 1], *w[4];

        if (icf_key(l, "'END test setup"))
            return;
        if (!l[0])
            continue;
        if (!icf_is_comment(l)) {
            icf_orphans(c);
        } else if (icf_key(l, "'Test Description")) {
            if ((v = icf_value(c)) && !icf_text_bad(c, c->i + 1, "test description", v))
                icf_copy(c->desc, sizeof(c->desc), v);
        } else if (icf_key(l, "'Run Time")) {
            icf_skip_header(c);
            v = icf_value(c);
            c->run_line = (unsigned)c->i + 1;
            icf_copy(tmp, sizeof(tmp), v ? v : "");
            uint64_t h, m, s;
            if (icf_words(tmp, w, 4) != 3 || !icf_u64(w[0], 10000, &h) ||
                !icf_u64(w[1], 100000, &m) || !icf_u64(w[2], 10000000, &s))
                icf_msg(c, c->run_line,
                        "error: cannot map the run time: expected 'HOURS MINUTES "
                        "SECONDS'");
            else {
                c->run_s = h * 3600 + m * 60 + s;
                c->has_run = true;
            }
        } else if (icf_key(l, "'Ramp Up Time")) {
            v = icf_value(c);
            if (!v || !icf_u64(v, 3600, &c->ramp_s))
                icf_msg(c, at, "error: cannot map the ramp up time: expected 0..3600 seconds");
        } else if (icf_key(l, "'Worker Cycling")) {
            if (!icf_cycling(c, false, &c->wc_start, NULL, &c->wc_step, &c->wc_exp))
                icf_msg(c, at,
                        "cannot map worker cycling: expected 'START STEP LINEAR|EXPONENTIAL'");
        } else if (icf_key(l, "'Disk Cycling") || icf_key(l, "'Target Cycling")) {
            if (!icf_cycling(c, false, &c->tc_start, NULL, &c->tc_step, &c->tc_exp))
                icf_msg(c, at,
                        "cannot map target cycling: expected 'START STEP LINEAR|EXPONENTIAL'");
        } else if (icf_key(l, "'Queue Depth Cycling")) {
            if (!icf_cycling(c, true, &c->qc_start, &c->qc_end, &c->qc_step, &c->qc_exp))
                icf_msg(c, at,
                        "cannot map queue depth cycling: expected 'START END STEP "
                        "LINEAR|EXPONENTIAL'");
        } else if (icf_key(l, "'Test Type")) {
            v = icf_value(c);
            c->type_line = (unsigned)at;
            icf_copy(c->test_type, sizeof(c->test_type), v ? v : "NORMAL");
        } else if (icf_key(l, "'Default Disk Workers to Spawn") ||
                   icf_key(l, "'Default Network Workers to Spawn") ||
                   icf_key(l, "'Record Results")) {
            icf_msg(c, at, "ignored: %s (the plan names its workers; results are always kept)",
                    l + 1);
            icf_value(c);
        } else {
            icf_msg(c, at, "cannot map '%s' in the test setup", l + 1);
            while (icf_value(c))
                ;
        }
    }
    icf_msg(c, c->nlines, "error: the test setup has no 'END test setup");
}

static size_t icf_find_spec(struct icf_ctx *c, const char *name)
{
    for (size_t s = 0; s < c->nspecs; s++)
        if (!strcmp(c->specs[s].name, name))
            return s;
    return SIZE_MAX;
}

static void icf_access_specs(struct icf_ctx *c)
{
    struct icf_spec *sp = NULL;

    for (c->i++; c->i < c->nlines; c->i++) {
        const char *l = c->line[c->i], *v;
        size_t at = c->i + 1;

        if (icf_key(l, "'END access specifications"))
            return;
        if (!l[0])
            continue;
        if (icf_key(l, "'Access specification name")) {
            char tmp[ICF_NAME + 64], *comma;
            sp = NULL;
            if (!(v = icf_value(c))) {
                icf_msg(c, at, "error: an access specification without its name");
                continue;
            }
            if (c->nspecs >= ICF_MAX_SPECS) {
                icf_msg(c, at, "error: more than %d access specifications", ICF_MAX_SPECS);
                return;
            }
            icf_copy(tmp, sizeof(tmp), v);
            if ((comma = strrchr(tmp, ',')))
                *comma = 0;
            if (icf_text_bad(c, at + 1, "access specification name", tmp))
                continue;
            if (!tmp[0] || icf_find_spec(c, tmp) != SIZE_MAX) {
                icf_msg(c, at + 1, "error: access specification name '%s' is empty or given twice",
                        tmp);
                continue;
            }
            sp = &c->specs[c->nspecs++];
            memset(sp, 0, sizeof(*sp));
            icf_copy(sp->name, sizeof(sp->name), tmp);
            sp->line = (unsigned)at + 1;
            continue;
        }
        if (icf_key(l, "'size,% of size")) {
            unsigned total = 0;
            if (!sp) {
                icf_msg(c, at, "error: access specification lines without a name");
                continue;
            }
            while ((v = icf_value(c))) {
                char tmp[IOF_IMPORT_MAX_LINE + 1], *f[8];
                uint64_t x[8];
                struct icf_line *ln;
                bool ok = icf_fields((icf_copy(tmp, sizeof(tmp), v), tmp), f, 8) == 8;
                for (int k = 0; ok && k < 8; k++)
                    ok = icf_u64(f[k],
                                 k == 0   ? (64u << 20)
                                 : k == 6 ? (1ull << 40)
                                          : 1u << 30,
                                 &x[k]);
                if (!ok || x[1] > 100 || x[2] > 100 || x[3] > 100) {
                    icf_msg(c, c->i + 1,
                            "error: cannot map this access specification line: "
                            "expected size,%% of size,%% reads,%% random,delay,"
                            "burst,align,reply");
                    continue;
                }
                if (sp->nlines >= ICF_MAX_LINES_PER_SPEC) {
                    icf_msg(c, c->i + 1, "error: more than %d lines in access specification '%s'",
                            ICF_MAX_LINES_PER_SPEC, sp->name);
                    continue;
                }
                if (!x[1]) {
                    icf_msg(c, c->i + 1, "ignored: a line with 0 %% of size (Iometer discards it)");
                    continue;
                }
                if (x[7])
                    icf_msg(c, c->i + 1,
                            "cannot map reply=%" PRIu64 ": a reply size is for network "
                            "workers; ignored",
                            x[7]);
                ln = &sp->lines[sp->nlines++];
                ln->size = x[0];
                ln->share = (unsigned)x[1];
                ln->read = (unsigned)x[2];
                ln->random = (unsigned)x[3];
                ln->delay_ms = (unsigned)x[4];
                ln->burst = x[5] ? (unsigned)x[5] : 1;
                ln->align = x[6];
                if (!x[6] && !c->align0_line)
                    c->align0_line = (unsigned)c->i + 1;
                total += ln->share;
            }
            if (total != 100 && sp->nlines)
                icf_msg(c, sp->line,
                        "error: the lines of access specification '%s' make %u %% "
                        "of size, not 100",
                        sp->name, total);
            continue;
        }
        if (icf_is_comment(l))
            icf_msg(c, at, "cannot map '%s' in the access specifications", l + 1);
        else
            icf_orphans(c);
    }
    icf_msg(c, c->nlines, "error: the access specifications have no 'END access specifications");
}

static struct icf_worker *icf_new_worker(struct icf_ctx *c, const char *name, size_t at)
{
    struct icf_worker *w;

    if (c->nworkers >= ICF_MAX_WORKERS) {
        icf_msg(c, at, "error: more than %d workers", ICF_MAX_WORKERS);
        return NULL;
    }
    w = &c->workers[c->nworkers++];
    memset(w, 0, sizeof(*w));
    w->targets = calloc(ICF_MAX_TARGETS, sizeof(*w->targets));
    if (!w->targets) {
        c->nworkers--;
        return NULL;
    }
    icf_copy(w->name, sizeof(w->name), name);
    w->line = (unsigned)at;
    w->manager = c->nmanagers ? c->nmanagers - 1 : 0;
    w->disk = true;
    w->qd = 1;
    w->pattern = "repeat";
    return w;
}

static void icf_manager_list_body(struct icf_ctx *c)
{
    struct icf_worker *w = NULL;

    for (c->i++; c->i < c->nlines; c->i++) {
        const char *l = c->line[c->i], *v;
        size_t at = c->i + 1;
        char tmp[IOF_IMPORT_MAX_LINE + 1], *f[6];
        size_t n;

        if (icf_key(l, "'END manager list")) {
            c->mgr_end_line = (unsigned)at;
            return;
        }
        if (!l[0])
            continue;
        if (icf_key(l, "'Manager ID")) {
            char *comma;
            v = icf_value(c);
            if (c->nmanagers >= 64) {
                icf_msg(c, at, "error: more than 64 managers");
                return;
            }
            icf_copy(tmp, sizeof(tmp), v ? v : "");
            comma = strchr(tmp, ',');
            if (icf_text_bad(c, c->i + 1, "manager name", comma ? comma + 1 : tmp))
                continue;
            icf_copy(c->managers[c->nmanagers++], ICF_NAME, comma ? comma + 1 : tmp);
            w = NULL;
        } else if (icf_key(l, "'Manager network address")) {
            if ((v = icf_value(c)) && v[0])
                icf_msg(c, c->i + 1,
                        "ignored: manager network address %s (the agents are given "
                        "with --agent)",
                        v);
        } else if (icf_key(l, "'Worker type")) {
            v = icf_value(c);
            if (w && v && strncasecmp(v, "DISK", 4)) {
                w->disk = false;
                icf_msg(c, at + 1,
                        "cannot map worker '%s' of type %s: iofleet drives storage "
                        "only; left out",
                        w->name, v);
            }
        } else if (icf_key(l, "'Worker")) {
            v = icf_value(c);
            if (!c->nmanagers) {
                icf_msg(c, at, "error: a worker before any 'Manager ID, manager name");
                continue;
            }
            if (v && icf_text_bad(c, c->i + 1, "worker name", v))
                continue;
            w = icf_new_worker(c, v ? v : "", at);
            if (!w && !c->failed)
                return;
        } else if (icf_key(l, "'Number of outstanding IOs") ||
                   icf_key(l, "'# of outstanding IOs")) {
            uint64_t qd = 0, seed = 0;
            v = icf_value(c);
            if (!w || !v)
                continue;
            icf_copy(tmp, sizeof(tmp), v);
            n = icf_fields(tmp, f, 6);
            if (!icf_u64(f[0], 4096, &qd) || !qd) {
                icf_msg(c, c->i + 1, "error: cannot map %s outstanding I/Os: expected 1..4096",
                        f[0]);
                continue;
            }
            w->qd = (unsigned)qd;
            if (n > 1 && strcasecmp(f[1], "DISABLED"))
                icf_msg(c, c->i + 1,
                        "cannot map the test connection rate %s: iofleet does not "
                        "open and close targets during a test; ignored",
                        f[1]);
            if (n > 4 && !strcasecmp(f[3], "ENABLED")) {
                if (icf_u64(f[4], UINT64_MAX >> 11, &seed)) {
                    w->has_seed = true;
                    w->seed = seed;
                } else {
                    icf_msg(c, c->i + 1, "cannot map the fixed seed %s; ignored", f[4]);
                }
            }
        } else if (icf_key(l, "'Disk maximum size")) {
            bool random_data = strstr(l, "Use Random Data") != NULL;
            uint64_t pat = 0;
            v = icf_value(c);
            if (!w || !v)
                continue;
            icf_copy(tmp, sizeof(tmp), v);
            n = icf_fields(tmp, f, 3);
            if (n < 2 || !icf_u64(f[0], 1ull << 50, &w->max_sectors) ||
                !icf_u64(f[1], 1ull << 50, &w->start_sector) ||
                (n > 2 && (!icf_u64(f[2], 2, &pat)))) {
                icf_msg(c, c->i + 1,
                        "error: cannot map the disk size line: expected "
                        "MAXIMUM_SECTORS,STARTING_SECTOR[,PATTERN]");
                continue;
            }
            w->size_line = (unsigned)c->i + 1;
            w->pattern = random_data ? (pat ? "random" : "repeat")
                         : pat == 2  ? "random"
                         : pat == 1  ? "pseudo"
                                     : "repeat";
        } else if (icf_key(l, "'Assigned access specs")) {
            while ((v = icf_value(c))) {
                size_t s = icf_find_spec(c, v);
                if (!w)
                    continue;
                if (!strcasecmp(v, "Idle")) {
                    icf_msg(c, c->i + 1,
                            "error: cannot map the Idle specification: every worker "
                            "group of a plan runs in every test");
                    continue;
                }
                if (s == SIZE_MAX) {
                    /* One error for the file, not one per worker. */
                    if (!c->undef_line) {
                        c->undef_line = (unsigned)c->i + 1;
                        icf_copy(c->undef_name, sizeof(c->undef_name), v);
                    } else {
                        c->undef_more++;
                    }
                    continue;
                }
                if (w->nspecs >= ICF_MAX_SPECS)
                    continue;
                w->spec_lines[w->nspecs] = (unsigned)c->i + 1;
                w->specs[w->nspecs++] = s;
            }
        } else if (icf_key(l, "'Target type,target name") || icf_key(l, "'Target type") ||
                   icf_key(l, "'Target assignments") || icf_key(l, "'End target") ||
                   icf_key(l, "'Default target settings") ||
                   icf_key(l, "'End default target settings") ||
                   icf_key(l, "'End assigned access specs") || icf_key(l, "'End worker") ||
                   icf_key(l, "'End manager")) {
            bool named = icf_key(l, "'Target type,target name");
            v = icf_key(l, "'Target type") ? icf_value(c) : NULL;
            if (named && v && w) {
                const char *comma = strchr(v, ',');
                if (w->ntargets < ICF_MAX_TARGETS && comma &&
                    !icf_text_bad(c, c->i + 1, "target name", comma + 1)) {
                    w->target_lines[w->ntargets] = (unsigned)c->i + 1;
                    icf_copy(w->targets[w->ntargets++], ICF_NAME, comma + 1);
                }
            }
            if (icf_key(l, "'End worker"))
                w = NULL;
        } else if (icf_key(l, "'Target")) {
            v = icf_value(c);
            if (!w || !v || icf_text_bad(c, c->i + 1, "target name", v))
                continue;
            if (w->ntargets >= ICF_MAX_TARGETS) {
                icf_msg(c, c->i + 1, "error: more than %d targets for worker '%s'", ICF_MAX_TARGETS,
                        w->name);
                continue;
            }
            w->target_lines[w->ntargets] = (unsigned)c->i + 1;
            icf_copy(w->targets[w->ntargets++], ICF_NAME, v);
        } else if (icf_is_comment(l)) {
            icf_msg(c, at, "cannot map '%s' in the manager list", l + 1);
            while (icf_value(c))
                ;
        } else {
            icf_orphans(c);
        }
    }
    icf_msg(c, c->nlines, "error: the manager list has no 'END manager list");
}

static void icf_manager_list(struct icf_ctx *c)
{
    icf_manager_list_body(c);
    if (c->undef_line)
        icf_msg(c, c->undef_line,
                "error: access specification '%s' is not defined in the access specifications "
                "Iometer reads (the first such section)%s",
                c->undef_name, c->undef_more ? ", nor are more assigned after it" : "");
}

/* The path a target name maps to: a --map NAME=PATH whose NAME is the whole
 * target name or its first word ("C:" of "C: \"label\""), else NULL. */
static const char *icf_map(const char *target, const char *const *maps, size_t nmaps)
{
    size_t first = strcspn(target, " \t\"");

    for (size_t m = 0; m < nmaps; m++) {
        const char *eq = strchr(maps[m], '=');
        size_t n = eq ? (size_t)(eq - maps[m]) : 0;
        if (!eq)
            continue;
        if ((n == strlen(target) && !strncmp(maps[m], target, n)) ||
            (n == first && !strncmp(maps[m], target, n)))
            return eq + 1;
    }
    return NULL;
}

static void icf_group_json(struct icf_ctx *c, const struct icf_worker *w, unsigned count,
                           const char *const *maps, size_t nmaps, struct iof_buf *b)
{
    iof_buf_addstr(b, "{\"nodes\": [");
    iof_json_escape(b, c->nmanagers == 1 ? "*" : c->managers[w->manager], IOF_JSON_TEXT);
    iof_buf_printf(b, "], \"count\": %u, \"queue_depth\": %u, \"targets\": [", count, w->qd);
    for (size_t t = 0; t < w->ntargets; t++) {
        const char *path = icf_map(w->targets[t], maps, nmaps);
        char ph[ICF_NAME + 16];
        iof_buf_addstr(b, t ? ", {\"path\": " : "{\"path\": ");
        if (!path) {
            snprintf(ph, sizeof(ph), "iometer:%s", w->targets[t]);
            path = ph;
        }
        iof_json_escape(b, path, IOF_JSON_TEXT);
        /* Both counts are in the disk's sectors (icf_sector_check: known
         * whenever one is not 0). */
        if (path[0] != '/' && strncmp(path, "iometer:", 8)) {
            /* A test file: Iometer's maximum disk size is its size, a
             * multiple of 4096 in a plan. */
            if (w->max_sectors * c->sector / 4096)
                iof_buf_printf(b, ", \"size\": %" PRIu64, w->max_sectors * c->sector / 4096 * 4096);
        } else if (w->max_sectors || w->start_sector) {
            iof_buf_printf(b, ", \"range\": {\"offset\": %" PRIu64, w->start_sector * c->sector);
            if (w->max_sectors)
                iof_buf_printf(b, ", \"size\": %" PRIu64, w->max_sectors * c->sector);
            iof_buf_addc(b, '}');
        }
        iof_buf_addc(b, '}');
    }
    iof_buf_printf(b, "], \"pattern\": \"%s\"", w->pattern);
    if (w->has_seed)
        iof_buf_printf(b, ", \"seed\": %" PRIu64, w->seed);
    iof_buf_addc(b, '}');
}

/* Iometer counts the starting sector and maximum disk size in the disk's
 * own sectors (Dynamo multiplies them by the bytes per sector the disk
 * reports: 4096 on a 4Kn disk), and nothing in the file says how large
 * those are. Without --sector-size a worker with either not 0 is refused:
 * one error at the first such worker, counting the others. Align 0
 * ("sector aligned") becomes 512 then, said once: an agent refuses 512-byte
 * alignment on a disk with larger sectors, so it cannot run wrongly. */
static void icf_sector_check(struct icf_ctx *c)
{
    const struct icf_worker *first = NULL;
    size_t more = 0;

    if (c->sector)
        return;
    for (size_t k = 0; k < c->nworkers; k++) {
        const struct icf_worker *w = &c->workers[k];
        if (!w->disk || !w->ntargets || (!w->max_sectors && !w->start_sector))
            continue;
        if (first)
            more++;
        else
            first = w;
    }
    if (first) {
        char others[64] = "";
        if (more)
            snprintf(others, sizeof(others), " (and of %zu more worker%s)", more,
                     more > 1 ? "s" : "");
        icf_msg(c, first->size_line,
                "error: maximum disk size %" PRIu64 " and starting sector %" PRIu64
                " of worker '%s'%s are counted in the disk's sectors, whose size the file does not "
                "say: give --sector-size 512, or 4096 for 4Kn disks",
                first->max_sectors, first->start_sector, first->name, others);
    }
    if (c->align0_line)
        icf_msg(c, c->align0_line,
                "note: align 0 (Iometer: on the disk's sectors) is written as 512, which an agent "
                "refuses on a disk with 4096-byte sectors; give --sector-size 4096 for 4Kn disks");
}

static void icf_emit(struct icf_ctx *c, const char *const *maps, size_t nmaps, struct iof_buf *json)
{
    const struct icf_worker *first = NULL;
    struct iof_buf groups = IOF_BUF_INIT, prev = IOF_BUF_INIT, cur = IOF_BUF_INIT;
    unsigned count = 0;
    const struct icf_worker *prev_w = NULL;
    bool any = false;

    for (size_t k = 0; k < c->nworkers; k++) {
        const struct icf_worker *w = &c->workers[k];
        if (!w->disk)
            continue;
        if (!w->ntargets) {
            icf_msg(c, w->line, "note: worker '%s' has no target: it does not run", w->name);
            continue;
        }
        if (!first) {
            first = w;
            if (!w->nspecs)
                icf_msg(c, w->line, "error: worker '%s' has no assigned access specification",
                        w->name);
            continue;
        }
        if (w->nspecs != first->nspecs ||
            memcmp(w->specs, first->specs, w->nspecs * sizeof(w->specs[0])))
            icf_msg(c, w->line,
                    "error: worker '%s' has other assigned access specifications than worker "
                    "'%s' (line %u): a plan runs the same spec on every worker group in a test",
                    w->name, first->name, first->line);
    }
    if (!first)
        icf_msg(c, 1, "error: no disk worker with targets in the manager list");
    if (!c->has_run || !c->run_s)
        icf_msg(c, c->run_line ? c->run_line : 1,
                "error: no run time (Iometer runs until stopped): iofleet needs a duration; "
                "set the run time in the file");
    for (size_t k = 0; k < c->nworkers; k++)
        for (size_t u = 0; c->workers[k].disk && u < c->workers[k].ntargets; u++)
            if (!icf_map(c->workers[k].targets[u], maps, nmaps))
                icf_msg(c, c->workers[k].target_lines[u],
                        "note: target '%s' has no --map: the plan names it 'iometer:%s' until it "
                        "is mapped (--map NAME=PATH)",
                        c->workers[k].targets[u], c->workers[k].targets[u]);
    icf_sector_check(c);
    if (c->failed)
        return;

    /* Worker groups: consecutive workers of one manager with the same
     * settings and targets merge into one group with a count. */
    for (size_t k = 0; k <= c->nworkers; k++) {
        const struct icf_worker *w = k < c->nworkers ? &c->workers[k] : NULL;
        if (w && (!w->disk || !w->ntargets))
            continue;
        iof_buf_reset(&cur);
        if (w)
            icf_group_json(c, w, 1, maps, nmaps, &cur);
        if (prev_w && w && w->manager == prev_w->manager && cur.len == prev.len &&
            !strcmp(cur.p, prev.p)) {
            count++;
            continue;
        }
        if (prev_w) {
            if (any)
                iof_buf_addstr(&groups, ",\n    ");
            icf_group_json(c, prev_w, count, maps, nmaps, &groups);
            any = true;
        }
        prev_w = w;
        count = 1;
        iof_buf_reset(&prev);
        if (w)
            iof_buf_addstr(&prev, cur.p);
    }

    iof_buf_addstr(json, "{\n  \"name\": ");
    iof_json_escape(json, c->desc[0] ? c->desc : c->name, IOF_JSON_TEXT);
    iof_buf_printf(json,
                   ",\n  \"run\": {\"ramp\": %" PRIu64 ", \"duration\": %" PRIu64
                   ", \"interval\": \"1s\"},\n  \"specs\": [\n",
                   c->ramp_s, c->run_s);
    for (size_t s = 0; s < first->nspecs; s++) {
        const struct icf_spec *sp = &c->specs[first->specs[s]];
        iof_buf_addstr(json, "    {\"name\": ");
        iof_json_escape(json, sp->name, IOF_JSON_TEXT);
        iof_buf_addstr(json, ", \"lines\": [");
        for (size_t k = 0; k < sp->nlines; k++) {
            const struct icf_line *ln = &sp->lines[k];
            iof_buf_printf(json,
                           "%s{\"size\": %" PRIu64 ", \"share\": %u, \"read\": %u, \"random\": %u, "
                           "\"align\": %" PRIu64,
                           k ? ", " : "", ln->size, ln->share, ln->read, ln->random,
                           ln->align   ? ln->align
                           : c->sector ? c->sector
                                       : 512);
            if (ln->delay_ms)
                iof_buf_printf(json, ", \"delay\": \"%ums\", \"burst\": %u", ln->delay_ms,
                               ln->burst);
            iof_buf_addc(json, '}');
        }
        iof_buf_printf(json, "]}%s\n", s + 1 < first->nspecs ? "," : "");
    }
    iof_buf_printf(json, "  ],\n  \"workers\": [\n    %s\n  ]", groups.p ? groups.p : "");
    if (strcasecmp(c->test_type, "NORMAL") && c->test_type[0]) {
        const char *param = NULL;
        unsigned from = 0, to = 0, step = 0;
        bool exp = false;
        if (!strcasecmp(c->test_type, "CYCLE_OUTSTANDING_IOS")) {
            param = "queue_depth";
            from = c->qc_start, to = c->qc_end, step = c->qc_step, exp = c->qc_exp;
        } else if (!strcasecmp(c->test_type, "CYCLE_WORKERS")) {
            param = "workers";
            from = c->wc_start, step = c->wc_step, exp = c->wc_exp;
            to = 0;
            for (size_t k = 0; k < c->nworkers; k++)
                to += c->workers[k].disk && c->workers[k].ntargets;
        } else if (!strcasecmp(c->test_type, "CYCLE_TARGETS")) {
            param = "targets";
            from = c->tc_start, step = c->tc_step, exp = c->tc_exp, to = (unsigned)first->ntargets;
        }
        if (param && from && step && to >= from)
            iof_buf_printf(
                json, ",\n  \"cycle\": {\"%s\": {\"from\": %u, \"to\": %u, \"step\": \"%c%u\"}}",
                param, from, to, exp ? 'x' : '+', step);
        else
            icf_msg(c, c->type_line,
                    "error: cannot map test type %s: the plan cycles the queue depth, the workers "
                    "of each group or the targets of each group, one at a time",
                    c->test_type);
        if (param && !strcmp(param, "workers"))
            icf_msg(c, c->type_line,
                    "note: CYCLE_WORKERS: Iometer cycles the workers of each manager; the plan "
                    "cycles each group's count");
    }
    iof_buf_addstr(json, "\n}\n");
    iof_buf_free(&groups);
    iof_buf_free(&prev);
    iof_buf_free(&cur);
}

/* Iometer reads each section by skipping to the first line that starts
 * with its header and then reading up to its end marker (ICF_ifstream::
 * SkipTo, then e.g. ManagerList::LoadConfig up to "'END manager list"):
 * whatever lies outside those stretches, and a second section of a kind,
 * it never reads. */
static const struct {
    const char *head, *end, *what;
} icf_sections[ICF_SEC_COUNT] = {
    [ICF_SEC_SETUP] = {"'TEST SETUP", "'END test setup", "test setup"},
    [ICF_SEC_DISPLAY] = {"'RESULTS DISPLAY", "'END results display", "results display"},
    [ICF_SEC_SPECS] = {"'ACCESS SPECIFICATIONS", "'END access specifications",
                       "access specifications"},
    [ICF_SEC_MANAGERS] = {"'MANAGER LIST", "'END manager list", "manager list"},
};

/* The section whose header line l is, or -1. */
static int icf_section_of(const char *l)
{
    for (int k = 0; k < ICF_SEC_COUNT; k++)
        if (icf_key(l, icf_sections[k].head))
            return k;
    return -1;
}

/* The last line of the stretch that starts at c->i and runs up to the next
 * section header, less trailing blank and "Version" lines (Iometer writes
 * the version again at the end). */
static size_t icf_stretch_end(const struct icf_ctx *c)
{
    size_t j = c->i;

    while (j + 1 < c->nlines && icf_section_of(c->line[j + 1]) < 0)
        j++;
    while (j > c->i && (!c->line[j][0] || !strncmp(c->line[j], "Version ", 8)))
        j--;
    return j;
}

/* Lines outside every section, from c->i: one warning for the stretch, as
 * Iometer skips them all. Workers written after the end of the manager list
 * (a generator that appends them) are named as such: Iometer does not run
 * them either, and neither does the plan. */
static void icf_outside(struct icf_ctx *c)
{
    size_t from = c->i, to = icf_stretch_end(c);
    bool workers = false;

    for (size_t k = from; k <= to && !workers; k++)
        workers = icf_key(c->line[k], "'Worker") || icf_key(c->line[k], "'Manager ID") ||
                  icf_key(c->line[k], "'Target");
    if (workers && c->mgr_end_line)
        icf_msg(c, from + 1,
                "ignored: lines %zu-%zu, manager list entries after its 'END manager list (line "
                "%u): Iometer stops reading there, so these workers do not run in Iometer "
                "either; move them above line %u to run them",
                from + 1, to + 1, c->mgr_end_line, c->mgr_end_line);
    else
        icf_msg(c, from + 1, "ignored: lines %zu-%zu, outside every section (Iometer skips them)",
                from + 1, to + 1);
    c->i = to;
}

/* A second section of a kind, from its header at c->i to its end marker
 * (or the next section): one warning, as Iometer reads only the first. */
static void icf_repeated(struct icf_ctx *c, enum icf_section sec)
{
    size_t from = c->i, to = from;

    while (to + 1 < c->nlines && !icf_key(c->line[to], icf_sections[sec].end) &&
           icf_section_of(c->line[to + 1]) < 0)
        to++;
    icf_msg(c, from + 1,
            "ignored: lines %zu-%zu, a second %s section (the first begins at line %u): "
            "Iometer reads only the first",
            from + 1, to + 1, icf_sections[sec].what, c->seen[sec]);
    c->i = to;
}

int proto_import_icf(const char *name, const char *text, size_t len, const char *const *maps,
                     size_t nmaps, unsigned sector_size, struct iof_buf *json, struct iof_buf *msgs,
                     struct iof_diag *diag)
{
    struct icf_ctx c = {.name = name, .msgs = msgs, .sector = sector_size};
    char *copy;
    size_t cap = 0;
    int rc = 0;

    if (len > IOF_IMPORT_MAX_TEXT)
        return iof_diag_set(diag, IOF_EPLAN, "%s: larger than %u bytes", name, IOF_IMPORT_MAX_TEXT);
    if (memchr(text, 0, len))
        return iof_diag_set(diag, IOF_EPLAN, "%s: a NUL byte: not an Iometer configuration file",
                            name);
    copy = malloc(len + 1);
    c.specs = calloc(ICF_MAX_SPECS, sizeof(*c.specs));
    c.workers = calloc(ICF_MAX_WORKERS, sizeof(*c.workers));
    if (!copy || !c.specs || !c.workers) {
        rc = -ENOMEM;
        goto out;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    for (char *p = copy; *p;) {
        char *nl = strchr(p, '\n'), *l = p;
        size_t n;
        p = nl ? nl + 1 : p + strlen(p);
        if (nl)
            *nl = 0;
        if (c.nlines >= IOF_IMPORT_MAX_LINES) {
            icf_msg(&c, c.nlines + 1, "error: more than %u lines", IOF_IMPORT_MAX_LINES);
            break;
        }
        n = strlen(l);
        if (n > IOF_IMPORT_MAX_LINE) {
            icf_msg(&c, c.nlines + 1, "error: line longer than %u bytes", IOF_IMPORT_MAX_LINE);
            l[0] = 0;
            n = 0;
        }
        while (n && isspace((unsigned char)l[n - 1]))
            l[--n] = 0;
        while (*l == ' ' || *l == '\t')
            l++;
        if (iof_array_grow((void **)&c.line, &cap, c.nlines + 1, sizeof(*c.line))) {
            rc = -ENOMEM;
            goto out;
        }
        c.line[c.nlines++] = l;
    }
    if (!c.nlines || strncmp(c.line[0], "Version ", 8)) {
        icf_msg(&c, 1,
                "error: not an Iometer configuration file (the first line is not "
                "'Version ...')");
    } else {
        const char *v = c.line[0] + 8;
        unsigned y, mo, d;
        if (sscanf(v, "%4u.%2u.%2u", &y, &mo, &d) == 3 && y > 1900 &&
            y * 10000 + mo * 100 + d < 19980521)
            icf_msg(&c, 1,
                    "error: version %s: configuration files older than 1998.05.21 "
                    "(unnamed access specifications) are not mapped",
                    v);
    }
    for (c.i = 1; !c.failed && c.i < c.nlines; c.i++) {
        const char *l = c.line[c.i];
        size_t start = c.i + 1;
        int sec = icf_section_of(l);
        if (!l[0] || !strncmp(l, "Version ", 8))
            continue;
        if (sec < 0) {
            icf_outside(&c);
            continue;
        }
        if (c.seen[sec]) {
            icf_repeated(&c, (enum icf_section)sec);
            continue;
        }
        c.seen[sec] = (unsigned)start;
        if (sec == ICF_SEC_SETUP)
            icf_test_setup(&c);
        else if (sec == ICF_SEC_SPECS)
            icf_access_specs(&c);
        else if (sec == ICF_SEC_MANAGERS)
            icf_manager_list(&c);
        else {
            while (c.i + 1 < c.nlines && !icf_key(c.line[c.i], icf_sections[sec].end))
                c.i++;
            icf_msg(&c, start, "ignored: lines %zu-%zu, the results display (Iometer's screen)",
                    start, c.i + 1);
        }
    }
    if (!c.failed)
        icf_emit(&c, maps, nmaps, json);
    if (json->err || msgs->err)
        rc = -ENOMEM;
    else if (c.failed)
        rc = iof_diag_set(diag, IOF_EPLAN, "%s: cannot be imported (the reasons are above)", name);
out:
    for (size_t k = 0; c.workers && k < c.nworkers; k++)
        free(c.workers[k].targets);
    free(c.workers);
    free(c.specs);
    free(c.line);
    free(copy);
    return rc;
}
