/* SPDX-License-Identifier: Apache-2.0 */
/* common/cliopt.c - getopt_long driven by an option table that also writes
 * the --help text, and "did you mean" suggestions for mistyped names. Used
 * by every iofleet subcommand and by dynamo. */
#include "common/cliopt.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#define HELP_WIDTH 80     /* lines stay below it: 79 columns at most */
#define HELP_COL 26       /* where option descriptions start */
#define OPT_VAL_BASE 1000 /* getopt val of option i: OPT_VAL_BASE + i */

int iof_opt_init(struct iof_opt_parser *p, const struct iof_cmd *cmd, int argc, char **argv)
{
    struct option *lo;
    size_t s = 0;

    memset(p, 0, sizeof(*p));
    lo = calloc(cmd->nopts + 1, sizeof(*lo));
    if (!lo)
        return -ENOMEM;
    /* '-': positionals come back in order (as 1); ':': a missing value is
     * reported as ':' rather than '?'. */
    p->shorts[s++] = '-';
    p->shorts[s++] = ':';
    for (size_t i = 0; i < cmd->nopts; i++) {
        const struct iof_opt *o = &cmd->opts[i];
        lo[i].name = o->name;
        lo[i].has_arg = o->arg == IOF_OPT_NONE       ? no_argument
                        : o->arg == IOF_OPT_REQUIRED ? required_argument
                                                     : optional_argument;
        lo[i].val = OPT_VAL_BASE + (int)i;
        if (o->short_name && s + 3 < sizeof(p->shorts)) {
            p->shorts[s++] = o->short_name;
            if (o->arg == IOF_OPT_REQUIRED)
                p->shorts[s++] = ':';
        }
    }
    p->shorts[s] = '\0';
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->longopts = lo;
    optind = 0; /* glibc: 0 re-initialises the scanner for a new argv */
    opterr = 0;
    return 0;
}

void iof_opt_free(struct iof_opt_parser *p)
{
    free(p->longopts);
    p->longopts = NULL;
}

/* Index of the option getopt returned as `c`, or -1. */
static int opt_index(const struct iof_cmd *cmd, int c)
{
    if (c >= OPT_VAL_BASE && (size_t)(c - OPT_VAL_BASE) < cmd->nopts)
        return c - OPT_VAL_BASE;
    for (size_t i = 0; c > 0 && c < 128 && i < cmd->nopts; i++)
        if (cmd->opts[i].short_name == c)
            return (int)i;
    return -1;
}

/* "--name" or "-x" for messages. */
static void opt_label(const struct iof_opt *o, char *buf, size_t cap)
{
    snprintf(buf, cap, "--%s", o->name);
}

/* Reports the unknown option `arg` ("--name[=value]"), or optopt's. */
static int opt_unknown(struct iof_opt_parser *p, const char *arg)
{
    const struct iof_cmd *cmd = p->cmd;
    const char *names[128];
    char word[128];
    size_t n = 0, len;
    const char *best;

    if (optopt > 0 && optopt < 128)
        return iof_opt_usage_error(cmd, "unknown option '-%c'", optopt);
    if (optopt >= OPT_VAL_BASE) {
        int i = opt_index(cmd, optopt);
        char l[80];
        opt_label(&cmd->opts[i], l, sizeof(l));
        return iof_opt_usage_error(cmd, "option '%s' takes no value, got '%s'", l, arg);
    }
    /* A long option getopt did not take: unknown or an ambiguous prefix. */
    len = strcspn(arg + 2, "=");
    snprintf(word, sizeof(word), "%.*s", (int)len, arg + 2);
    for (size_t i = 0; i < cmd->nopts && n < sizeof(names) / sizeof(names[0]); i++)
        if (len && !strncmp(cmd->opts[i].name, word, len))
            names[n++] = cmd->opts[i].name;
    /* Abbreviations are not taken (a script's --a would change meaning the
     * day a second option starts with it), but they make the best hints. */
    if (n == 1)
        return iof_opt_usage_error(cmd, "unknown option '--%s'; did you mean '--%s'?", word,
                                   names[0]);
    if (n > 1) {
        char list[512];
        size_t o = 0;
        list[0] = '\0';
        for (size_t i = 0; i < n && o < sizeof(list); i++)
            o += (size_t)snprintf(list + o, sizeof(list) - o, "%s'--%s'", i ? ", " : "", names[i]);
        return iof_opt_usage_error(cmd, "unknown option '--%s'; did you mean one of %s?", word,
                                   list);
    }
    n = 0;
    for (size_t i = 0; i < cmd->nopts && n < sizeof(names) / sizeof(names[0]); i++)
        names[n++] = cmd->opts[i].name;
    best = iof_opt_suggest(word, names, n);
    if (best)
        return iof_opt_usage_error(cmd, "unknown option '--%s'; did you mean '--%s'?", word, best);
    return iof_opt_usage_error(cmd, "unknown option '--%s'", word);
}

int iof_opt_next(struct iof_opt_parser *p, const char **val)
{
    const struct iof_cmd *cmd = p->cmd;
    int c, i, at, li = -1;

    *val = NULL;
    if (p->dashdash) {
        if (p->next >= p->argc)
            return IOF_OPT_END;
        *val = p->argv[p->next++];
        return IOF_OPT_POSITIONAL;
    }
    at = optind ? optind : 1; /* the element a long option comes from */
    c = getopt_long(p->argc, p->argv, p->shorts, p->longopts, &li);
    if (c == -1) {
        /* Only "--" (or the end) stops a return-in-order scan. */
        p->dashdash = true;
        p->next = optind;
        return iof_opt_next(p, val);
    }
    if (c == 1) {
        *val = optarg;
        return IOF_OPT_POSITIONAL;
    }
    if (c == ':') {
        char l[80];
        i = opt_index(cmd, optopt);
        if (i < 0) {
            iof_opt_usage_error(cmd, "an option needs a value");
            return IOF_OPT_ERROR;
        }
        /* BSD's getopt_long (mingw-w64's) also answers ':' when a flag is given
         * a value (--quiet=1), where glibc answers '?'. */
        if (cmd->opts[i].arg == IOF_OPT_NONE) {
            opt_unknown(p, optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "");
            return IOF_OPT_ERROR;
        }
        if (optopt < OPT_VAL_BASE)
            snprintf(l, sizeof(l), "-%c", optopt);
        else
            opt_label(&cmd->opts[i], l, sizeof(l));
        iof_opt_usage_error(cmd, "%s needs a value (%s)", l,
                            cmd->opts[i].metavar ? cmd->opts[i].metavar : "VALUE");
        return IOF_OPT_ERROR;
    }
    i = opt_index(cmd, c);
    if (c == '?' || i < 0) {
        opt_unknown(p, optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "");
        return IOF_OPT_ERROR;
    }
    if (li >= 0 && at < p->argc) {
        /* getopt_long takes unique prefixes; only whole names are options. */
        const char *e = p->argv[at];
        size_t n = strlen(cmd->opts[i].name);
        if (strncmp(e, "--", 2) || strncmp(e + 2, cmd->opts[i].name, n) ||
            (e[2 + n] && e[2 + n] != '=')) {
            opt_unknown(p, e);
            return IOF_OPT_ERROR;
        }
    }
    if (!strcmp(cmd->opts[i].name, "help")) {
        iof_opt_help(cmd, stdout);
        return IOF_OPT_HELP;
    }
    *val = optarg;
    if (cmd->opts[i].arg == IOF_OPT_OPTIONAL && !optarg && optind < p->argc &&
        p->argv[optind][0] != '-' && cmd->takes_next &&
        cmd->takes_next(cmd->opts[i].id, p->argv[optind]))
        *val = p->argv[optind++];
    return cmd->opts[i].id;
}

/* Writes `text` wrapped at HELP_WIDTH, every line indented by `indent`
 * except the first, which starts at column `col` (already written). A
 * newline in `text` forces a break. */
static void help_wrap(FILE *f, const char *text, int indent, int col)
{
    const char *s = text;

    while (*s) {
        size_t word = strcspn(s, " \n");
        if (col > indent && col + 1 + (int)word >= HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fwrite(s, 1, word, f);
        col += (int)word;
        s += word;
        if (*s == '\n') {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            s++;
        }
        while (*s == ' ')
            s++;
    }
    fputc('\n', f);
}

void iof_opt_help(const struct iof_cmd *cmd, FILE *f)
{
    fprintf(f, "usage: %s %s\n", cmd->prog, cmd->synopsis);
    if (cmd->about) {
        fputc('\n', f);
        help_wrap(f, cmd->about, 0, 0);
    }
    fputs("\noptions:\n", f);
    for (size_t i = 0; i < cmd->nopts; i++) {
        const struct iof_opt *o = &cmd->opts[i];
        char left[160];
        int n;
        if (o->short_name)
            n = snprintf(left, sizeof(left), "  -%c, --%s", o->short_name, o->name);
        else
            n = snprintf(left, sizeof(left), "      --%s", o->name);
        if (o->arg == IOF_OPT_REQUIRED)
            n += snprintf(left + n, sizeof(left) - (size_t)n, "=%s", o->metavar);
        else if (o->arg == IOF_OPT_OPTIONAL)
            n += snprintf(left + n, sizeof(left) - (size_t)n, "[=%s]", o->metavar);
        fputs(left, f);
        if (n + 2 > HELP_COL) {
            fprintf(f, "\n%*s", HELP_COL, "");
            n = HELP_COL;
        } else {
            fprintf(f, "%*s", HELP_COL - n, "");
            n = HELP_COL;
        }
        help_wrap(f, o->help, HELP_COL, n);
    }
    if (cmd->epilog) {
        fputc('\n', f);
        fputs(cmd->epilog, f);
    }
}

int iof_opt_usage_error(const struct iof_cmd *cmd, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* the error through the log (escaped: it quotes what was typed), then usage */
    IOF_USER("%s: %s", cmd->prog, msg);
    fprintf(stderr, "usage: %s %s\ntry '%s --help' for more information\n", cmd->prog,
            cmd->synopsis, cmd->prog);
    return 2;
}

/* Optimal string alignment distance (Levenshtein plus adjacent
 * transpositions), capped: names here are short. */
static size_t osa_distance(const char *a, const char *b)
{
    enum { MAXL = 64 };
    size_t la = strlen(a), lb = strlen(b);
    size_t d[MAXL + 1][MAXL + 1];

    if (la > MAXL || lb > MAXL)
        return SIZE_MAX;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

const char *iof_opt_suggest(const char *word, const char *const *candidates, size_t n)
{
    size_t len = strlen(word), limit = len / 3, best_d = SIZE_MAX;
    const char *best = NULL;

    if (limit < 1)
        limit = 1;
    if (limit > 3)
        limit = 3;
    for (size_t i = 0; i < n; i++) {
        size_t d = osa_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best_d <= limit ? best : NULL;
}
