/* SPDX-License-Identifier: Apache-2.0 */
/* common/cliopt.h - command-line options from one table per command: the
 * table drives getopt_long (glibc) and generates the --help text, so an
 * option cannot exist undocumented; unknown commands and options get a
 * "did you mean" from the known names (edit distance).
 *
 * Conventions every iofleet and dynamo command follows:
 *   --opt VALUE and --opt=VALUE both work; -h/--help prints the help to
 *   stdout (exit 0); a usage error prints one message, a suggestion when one
 *   is close, the short usage line and "try '... --help'" to stderr (exit 2).
 */
#ifndef IOF_COMMON_CLIOPT_H
#define IOF_COMMON_CLIOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum iof_opt_arg {
    IOF_OPT_NONE,     /* a flag */
    IOF_OPT_REQUIRED, /* --opt VALUE or --opt=VALUE */
    /* --opt, --opt=VALUE, or --opt VALUE when the next argument does not
     * start with '-' and the command's `takes_next` accepts it. */
    IOF_OPT_OPTIONAL,
};

struct iof_opt {
    const char *name;     /* long name without "--" */
    char short_name;      /* 'h', or 0 for none */
    enum iof_opt_arg arg; /* whether it takes a value */
    const char *metavar;  /* the value's name in the help ("F", "HOST[:PORT]") */
    const char *help;     /* what it does; wrapped to the help's width */
    int id;               /* returned by iof_opt_next(); > 0 */
};

struct iof_cmd {
    const char *prog;     /* "iofleet run": starts every message */
    const char *synopsis; /* "PLAN.json|- [OPTION]..." (after prog) */
    const char *about;    /* paragraph after the usage line; may be NULL */
    const struct iof_opt *opts;
    size_t nopts;
    const char *epilog; /* printed verbatim at the end (exit codes); may be NULL */
    /* For IOF_OPT_OPTIONAL given as "--opt VALUE": true when `next` is the
     * option's value rather than a positional argument. NULL: never. */
    bool (*takes_next)(int id, const char *next);
};

/* Parser state over argv[0..argc); argv[0] is the command word ("run"), not
 * parsed. Positional arguments are returned in order as IOF_OPT_POSITIONAL
 * (everything after "--" too; "-" alone is positional). */
struct iof_opt_parser {
    const struct iof_cmd *cmd;
    int argc;
    char **argv;
    void *longopts;  /* owned: struct option[nopts + 1] */
    char shorts[96]; /* getopt optstring */
    bool dashdash;   /* "--" seen: the rest is positional */
    int next;        /* index into argv once "--" was seen */
};

#define IOF_OPT_END 0         /* no more arguments */
#define IOF_OPT_POSITIONAL -1 /* *val is the argument */
#define IOF_OPT_ERROR -2      /* reported on stderr with the usage line: exit 2 */
#define IOF_OPT_HELP -3       /* -h/--help: the help was printed to stdout: exit 0 */

/* Prepares to parse; 0 or -ENOMEM. The table must hold "help". */
int iof_opt_init(struct iof_opt_parser *p, const struct iof_cmd *cmd, int argc, char **argv);
/* The next option's id (with *val its value or NULL), or one of the
 * IOF_OPT_* codes above. */
int iof_opt_next(struct iof_opt_parser *p, const char **val);
/* Releases the parser (accepts a zeroed one). */
void iof_opt_free(struct iof_opt_parser *p);

/* The full help of `cmd`: usage line, about, one entry per option, epilog. */
void iof_opt_help(const struct iof_cmd *cmd, FILE *f);
/* Reports a usage error: "PROG: MESSAGE", the usage line and the --help hint,
 * on stderr. Returns 2 (the exit code). */
int iof_opt_usage_error(const struct iof_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The candidate closest to `word` when it is close enough to be a likely
 * typo (optimal string alignment distance, at most a third of the length,
 * at least 1 and at most 3), else NULL. */
const char *iof_opt_suggest(const char *word, const char *const *candidates, size_t n);

#endif
