/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/commands.c - `iofleet runs` (list, rm, import of the run
 * history) and `iofleet report` (HTML or Markdown of one or more runs), each
 * with its option table (common/cliopt.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "common/cliopt.h"
#include "common/log.h"
#include "common/outfile.h"
#include "common/text.h"
#include "manager/cli.h"
#include "manager/history/export.h"
#include "manager/history/query.h"
#include "manager/history/report_html.h"
#include "manager/history/store.h"

enum hist_opt_id {
    HOPT_HELP = 1,
    HOPT_DB,
    HOPT_JSON,
    HOPT_TAG,
    HOPT_OUT,
    HOPT_FORMAT,
    HOPT_FORCE,
    HOPT_OLDER_THAN,
    HOPT_KEEP,
    HOPT_DRY_RUN,
    HOPT_CSV,
    HOPT_IOMETER_CSV,
    HOPT_TIMESERIES,
    HOPT_JSON_FILE,
};

#define HOPT_HELP_ENTRY                                                                            \
    {                                                                                              \
        "help", 'h', IOF_OPT_NONE, NULL, "print this help and exit", HOPT_HELP                     \
    }
#define HOPT_DB_ENTRY                                                                              \
    {                                                                                              \
        "db", 0, IOF_OPT_REQUIRED, "PATH",                                                         \
            "the history database (default $XDG_DATA_HOME/iofleet/runs.db, else "                  \
            "~/.local/share/iofleet/runs.db)",                                                     \
            HOPT_DB                                                                                \
    }

static const struct iof_opt runs_opts[] = {
    HOPT_HELP_ENTRY,
    HOPT_DB_ENTRY,
    {"json", 0, IOF_OPT_NONE, NULL,
     "list as one JSON array (id, start_time, plan, tag, nodes, tests, tests_planned, iops, "
     "p99_lat_ms, exit_code, status)",
     HOPT_JSON},
    {"tag", 0, IOF_OPT_REQUIRED, "NAME",
     "import: tag the imported run; rm and prune: only runs with this tag", HOPT_TAG},
    {"older-than", 0, IOF_OPT_REQUIRED, "DURATION",
     "prune: remove runs started longer ago than DURATION (a number and s, m, h, d or w: 30d)",
     HOPT_OLDER_THAN},
    {"keep", 0, IOF_OPT_REQUIRED, "N",
     "prune: keep the newest N runs (of the --tag, when given), remove the others; with "
     "--older-than, only runs both older and not among the newest N go",
     HOPT_KEEP},
    {"dry-run", 'n', IOF_OPT_NONE, NULL, "rm and prune: list the runs that would go, remove none",
     HOPT_DRY_RUN},
};

static const struct iof_cmd runs_cmd = {
    .prog = "iofleet runs",
    .synopsis = "[rm ID|FROM-TO...|prune|tag ID NAME|import RESULT.json] [OPTION]...",
    .about = "Lists the recorded runs (id, start time, plan, tag, nodes, finished/planned tests, "
             "the IOPS and p99 latency in ms of the run's fastest test, exit code and status); "
             "'rm ID|FROM-TO...' removes runs (3-7: ids 3 to 7; with --tag alone: every run "
             "with the tag); 'prune' removes by --older-than and --keep; rm and prune then "
             "compact the file (VACUUM); 'tag ID NAME' sets a run's tag ('' removes it); "
             "'import RESULT.json' records a document written by "
             "iofleet run --json ('iofleet runs export' writes a recorded run's result files). "
             "A run a killed manager left is listed as unfinished with the "
             "tests it finished.",
    .opts = runs_opts,
    .nopts = sizeof(runs_opts) / sizeof(runs_opts[0]),
    .epilog = "exit codes: 0 done, 1 database error or no such run, 2 usage error\n",
};

static const struct iof_opt export_opts[] = {
    HOPT_HELP_ENTRY,
    {"csv", 0, IOF_OPT_REQUIRED, "FILE", "the run's --csv file (- for stdout)", HOPT_CSV},
    {"iometer-csv", 0, IOF_OPT_REQUIRED, "FILE", "the run's --iometer-csv file (- for stdout)",
     HOPT_IOMETER_CSV},
    {"timeseries", 0, IOF_OPT_REQUIRED, "FILE", "the run's --timeseries file (- for stdout)",
     HOPT_TIMESERIES},
    {"json", 0, IOF_OPT_REQUIRED, "FILE", "the run's --json document", HOPT_JSON_FILE},
    HOPT_DB_ENTRY,
    {"force", 'f', IOF_OPT_NONE, NULL, "replace existing files", HOPT_FORCE},
};

static const struct iof_cmd export_cmd = {
    .prog = "iofleet runs export",
    .synopsis = "RUN [--csv FILE] [--iometer-csv FILE] [--timeseries FILE] [--json FILE] "
                "[OPTION]...",
    .about = "Writes a recorded run's result files again, byte for byte as iofleet run wrote "
             "them, from the history: RUN is a run id or a tag (its newest run). A run without "
             "an exit code (still running, or its manager was killed) is refused, and so is an "
             "existing file unless --force. A run recorded before this iofleet kept every "
             "figure (schema 3) leaves the columns it lacks empty or 0, and says so.",
    .opts = export_opts,
    .nopts = sizeof(export_opts) / sizeof(export_opts[0]),
    .epilog = "exit codes: 0 written, 1 no such run, unfinished run, database or write error, 2 "
              "usage error\n",
};

static const struct iof_opt report_opts[] = {
    HOPT_HELP_ENTRY,
    {"output", 'o', IOF_OPT_REQUIRED, "FILE", "write the report here (- for stdout)", HOPT_OUT},
    {"format", 0, IOF_OPT_REQUIRED, "html|md|json",
     "html (default): one self-contained page with charts; md: the tables as Markdown; json: "
     "the comparison of two or more runs as one JSON document (what GET /api/v1/runs/compare "
     "answers)",
     HOPT_FORMAT},
    HOPT_DB_ENTRY,
    {"force", 'f', IOF_OPT_NONE, NULL, "replace an existing output file", HOPT_FORCE},
};

static const struct iof_cmd report_cmd = {
    .prog = "iofleet report",
    .synopsis = "RUN... -o FILE [OPTION]...",
    .about = "Writes a report of the runs: RUN is a run id or tag of the history, or a result "
             "file of iofleet run --json. One run: per-test bars of IOPS, MiB/s and latency, "
             "time series (ALL and per node, the ramp shaded), the latency percentile curve, "
             "latency against IOPS for a cycle, "
             "node and worker tables, the plan and the agents. Two or more: a comparison, the "
             "tests matched by spec name, with B/A ratio columns. The HTML page needs no "
             "network: Chart.js (Debian libjs-chart.js) is inlined.",
    .opts = report_opts,
    .nopts = sizeof(report_opts) / sizeof(report_opts[0]),
    .epilog = "exit codes: 0 written, 1 no such run, database or write error, 2 usage error\n",
};

void mgr_cli_history_help(const char *name, FILE *f)
{
    iof_opt_help(!strcmp(name, "runs") ? &runs_cmd : &report_cmd, f);
}

static int open_store(const char *prog, const char *db, struct mgr_store **st)
{
    char path[IOF_PATH_MAX];
    struct iof_diag d = {{0}};

    if (db)
        snprintf(path, sizeof(path), "%s", db);
    if ((!db && mgr_store_default_path(path, sizeof(path), &d)) || mgr_store_open(path, st, &d)) {
        IOF_USER("%s: %s", prog, d.msg);
        return 1;
    }
    return 0;
}

/* --- housekeeping: rm of ranges and tags, prune, tag ---------------------------------- */

/* "3" or "3-7": ids from..to; false for anything else. */
static bool parse_range(const char *s, int64_t *from, int64_t *to)
{
    char buf[64];
    char *dash;

    if (mgr_query_id(s, from)) {
        *to = *from;
        return true;
    }
    if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf) || !(dash = strchr(buf, '-')))
        return false;
    *dash = '\0';
    return mgr_query_id(buf, from) && mgr_query_id(dash + 1, to) && *from <= *to;
}

/* Removes the n runs of ids (or lists them with dry_run), then compacts the
 * file and says how much it gave back. 0, or 1 after a database error. */
static int runs_remove(const char *prog, struct mgr_store *st, const int64_t *ids, size_t n,
                       bool dry_run)
{
    struct iof_diag d = {{0}};
    struct mgr_store_removal out;

    for (size_t i = 0; i < n; i++)
        printf("%s run %" PRId64 "\n", dry_run ? "would remove" : "removed", ids[i]);
    if (dry_run || !n)
        return 0;
    if (mgr_store_remove(st, ids, n, &out, &d)) {
        IOF_USER("%s: %s", prog, d.msg);
        return 1;
    }
    if (!out.compacted) {
        /* The runs are gone; only the file stays as large as it was. */
        IOF_WARN("%s", out.not_compacted);
        return 0;
    }
    printf("%s: compacted to %.1f KiB, was %.1f KiB\n", st->path, (double)out.bytes_after / 1024.0,
           (double)out.bytes_before / 1024.0);
    return 0;
}

/* runs rm ID|FROM-TO... [--tag NAME]: every id must name a run (of the tag),
 * a range at least one. */
static int runs_rm(struct mgr_store *st, const char *const *args, size_t nargs, const char *tag,
                   bool dry_run)
{
    struct iof_diag d = {{0}};
    int64_t *all = NULL;
    size_t nall = 0;
    int rc = 0;

    for (size_t i = 0; i < nargs || (!nargs && i == 0); i++) {
        struct mgr_store_sel sel = {.tag = tag, .keep = -1};
        int64_t *ids, *grown;
        size_t n;
        if (nargs && !parse_range(args[i], &sel.from, &sel.to))
            continue; /* checked by the caller */
        if (mgr_store_select(st, &sel, &ids, &n, &d)) {
            IOF_USER("iofleet runs rm: %s", d.msg);
            free(all);
            return 1;
        }
        if (!n) {
            IOF_USER("iofleet runs rm: %s: no run %s%s%s%s", st->path,
                     nargs && strchr(args[i], '-') ? "in " : "", nargs ? args[i] : "",
                     tag ? (nargs ? " with tag " : "with tag ") : "", tag ? tag : "");
            rc = 1;
        }
        grown = n ? realloc(all, (nall + n) * sizeof(*all)) : all;
        if (!grown) {
            free(ids);
            free(all);
            IOF_USER("iofleet runs rm: out of memory");
            return 1;
        }
        all = grown;
        for (size_t k = 0; k < n; k++) {
            bool dup = false;
            for (size_t j = 0; j < nall && !dup; j++)
                dup = all[j] == ids[k];
            if (!dup)
                all[nall++] = ids[k];
        }
        free(ids);
    }
    if (runs_remove("iofleet runs rm", st, all, nall, dry_run))
        rc = 1;
    free(all);
    return rc;
}

/* runs prune --older-than D | --keep N [--tag NAME]. */
static int runs_prune(struct mgr_store *st, int64_t older_ns, long keep, const char *tag,
                      bool dry_run)
{
    struct mgr_store_sel sel = {.tag = tag, .keep = keep};
    struct iof_diag d = {{0}};
    int64_t *ids;
    size_t n;
    int rc;

    if (older_ns)
        sel.before_unix_ns = (int64_t)iof_wall_ns() - older_ns;
    if (mgr_store_select(st, &sel, &ids, &n, &d)) {
        IOF_USER("iofleet runs prune: %s", d.msg);
        return 1;
    }
    if (!n)
        printf("no run to prune\n");
    rc = runs_remove("iofleet runs prune", st, ids, n, dry_run);
    free(ids);
    return rc;
}

/* runs tag ID NAME: NAME "" removes the tag. */
static int runs_tag(struct mgr_store *st, const char *const *args)
{
    struct iof_diag d = {{0}};
    int64_t run = 0;

    if (!mgr_query_id(args[0], &run) || mgr_store_set_tag(st, run, args[1], &d)) {
        IOF_USER("iofleet runs tag: %s", run ? d.msg : "not a run id");
        return 1;
    }
    if (args[1][0])
        printf("run %" PRId64 " tagged %s\n", run, args[1]);
    else
        printf("run %" PRId64 " untagged\n", run);
    return 0;
}

/* The usage checks of rm, prune and tag; 0 or 2 after the message. */
static int runs_check_housekeeping(const char *sub, const char *const *args, size_t nargs,
                                   const char *tag, const char *older, const char *keep,
                                   int64_t *older_ns, long *nkeep, bool dry_run)
{
    struct iof_diag d = {{0}};
    int64_t a, b;
    char *end;

    if ((older || keep) && strcmp(sub ? sub : "", "prune"))
        return iof_opt_usage_error(&runs_cmd, "%s goes with prune",
                                   older ? "--older-than" : "--keep");
    if (dry_run && strcmp(sub ? sub : "", "prune") && strcmp(sub ? sub : "", "rm"))
        return iof_opt_usage_error(&runs_cmd, "--dry-run goes with rm or prune");
    if (!sub)
        return 0;
    if (!strcmp(sub, "rm")) {
        if (!nargs && !tag)
            return iof_opt_usage_error(&runs_cmd, "rm needs run ids (3, 3-7) or --tag NAME");
        for (size_t i = 0; i < nargs; i++)
            if (!parse_range(args[i], &a, &b))
                return iof_opt_usage_error(
                    &runs_cmd, "rm takes run ids and ranges (3, 3-7), got '%s'", args[i]);
    } else if (!strcmp(sub, "prune")) {
        if (nargs)
            return iof_opt_usage_error(&runs_cmd, "prune takes no ids, got '%s'", args[0]);
        if (!older && !keep)
            return iof_opt_usage_error(&runs_cmd, "prune needs --older-than DURATION or --keep N");
        if (older && mgr_query_age(older, older_ns, &d))
            return iof_opt_usage_error(&runs_cmd, "--older-than %s", d.msg);
        if (keep) {
            errno = 0;
            *nkeep = strtol(keep, &end, 10);
            if (!*keep || *end || errno || *nkeep < 0)
                return iof_opt_usage_error(&runs_cmd, "--keep must be a count >= 0, got '%s'",
                                           keep);
        }
    } else if (!strcmp(sub, "tag")) {
        if (nargs != 2)
            return iof_opt_usage_error(&runs_cmd, "tag takes a run id and a name, got %zu word%s",
                                       nargs, nargs == 1 ? "" : "s");
        if (!mgr_query_id(args[0], &a))
            return iof_opt_usage_error(&runs_cmd, "tag takes a run id first, got '%s'", args[0]);
        if (mgr_query_id(args[1], &a))
            return iof_opt_usage_error(&runs_cmd,
                                       "a tag cannot be a number (numbers are run "
                                       "ids), got '%s'",
                                       args[1]);
        if (tag)
            return iof_opt_usage_error(&runs_cmd,
                                       "tag takes the name as its second word, not --tag");
        if (mgr_cli_tag_check(&runs_cmd, args[1]))
            return 2;
    }
    return 0;
}

/* --- export ------------------------------------------------------------------------------ */

/* `iofleet runs export RUN --csv F ...` (argv[0] is "export"). */
static int runs_export(int argc, char **argv)
{
    static const char *const options[] = {"--csv", "--iometer-csv", "--timeseries", "--json"};
    const char *paths[4] = {NULL, NULL, NULL, NULL}, *ref = NULL, *db = NULL, *val;
    struct mgr_sink *sinks[4];
    struct iof_opt_parser p;
    struct mgr_store *st = NULL;
    struct iof_diag d = {{0}};
    size_t n = 0;
    bool force = false, old = false;
    int64_t run;
    int id, rc = 0;

    if (iof_opt_init(&p, &export_cmd, argc, argv)) {
        IOF_USER("iofleet runs export: out of memory");
        return 1;
    }
    while (rc == 0 && (id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        switch (id) {
        case IOF_OPT_ERROR:
            rc = 2;
            break;
        case IOF_OPT_HELP:
            rc = -1;
            break;
        case IOF_OPT_POSITIONAL:
            if (ref)
                rc = iof_opt_usage_error(&export_cmd, "exports one RUN, got '%s' too", val);
            ref = val;
            break;
        case HOPT_CSV:
        case HOPT_IOMETER_CSV:
        case HOPT_TIMESERIES:
        case HOPT_JSON_FILE:
            paths[id - HOPT_CSV] = val;
            break;
        case HOPT_DB:
            db = val;
            break;
        case HOPT_FORCE:
            force = true;
            break;
        default:
            rc = iof_opt_usage_error(&export_cmd, "option not handled");
        }
    }
    iof_opt_free(&p);
    if (!rc && !ref)
        rc = iof_opt_usage_error(&export_cmd, "needs a RUN (a run id or a tag)");
    if (!rc && !paths[0] && !paths[1] && !paths[2] && !paths[3])
        rc = iof_opt_usage_error(&export_cmd,
                                 "needs a file to write: --csv, --iometer-csv, --timeseries or "
                                 "--json");
    if (!rc)
        rc = open_store("iofleet runs export", db, &st);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (mgr_store_resolve(st, ref, &run, &d) || mgr_export_check(st, run, &d)) {
        IOF_USER("iofleet runs export: %s", d.msg);
        mgr_store_close(st);
        return 1;
    }
    /* Every file is created (under a temporary name) before any is
     * written: a refused name leaves nothing behind. */
    for (size_t i = 0; i < 4; i++) {
        if (!paths[i])
            continue;
        if (mgr_sink_open(mgr_sink_for_option(options[i]), paths[i], force ? IOF_OUTFILE_FORCE : 0,
                          &sinks[n], &d)) {
            IOF_USER("iofleet runs export: %s", d.msg);
            for (size_t k = 0; k < n; k++)
                mgr_sink_abort(sinks[k]);
            mgr_store_close(st);
            return 2;
        }
        n++;
    }
    if (mgr_export_write(st, run, sinks, n, &old, &d)) {
        IOF_USER("iofleet runs export: %s", d.msg);
        rc = 1;
    } else if (old) {
        IOF_WARN("run %" PRId64 " was recorded before the history kept every figure of the "
                 "result files (schema 3): its CPU breakdown, error split, verify, rated and "
                 "lateness columns, groups, places and per-CPU figures are written empty or 0",
                 run);
    }
    mgr_store_close(st);
    return rc;
}

int mgr_cli_runs(int argc, char **argv)
{
    struct iof_opt_parser p;
    struct mgr_store *st = NULL;
    struct iof_diag d = {{0}};
    const char *db = NULL, *tag = NULL, *val, *sub = NULL, *older = NULL, *keep = NULL;
    const char **args = calloc((size_t)argc + 1, sizeof(*args));
    size_t nargs = 0;
    bool json = false, dry_run = false;
    int64_t older_ns = 0;
    long nkeep = -1;
    int id, rc = 0;

    if (argc > 1 && !strcmp(argv[1], "export")) {
        free(args);
        return runs_export(argc - 1, argv + 1);
    }
    if (!args || iof_opt_init(&p, &runs_cmd, argc, argv)) {
        free(args);
        IOF_USER("iofleet runs: out of memory");
        return 1;
    }
    while (rc == 0 && (id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        switch (id) {
        case IOF_OPT_ERROR:
            rc = 2;
            break;
        case IOF_OPT_HELP:
            rc = -1;
            break;
        case IOF_OPT_POSITIONAL:
            if (!sub)
                sub = val;
            else
                args[nargs++] = val;
            break;
        case HOPT_DB:
            db = val;
            break;
        case HOPT_JSON:
            json = true;
            break;
        case HOPT_TAG:
            tag = val;
            break;
        case HOPT_OLDER_THAN:
            older = val;
            break;
        case HOPT_KEEP:
            keep = val;
            break;
        case HOPT_DRY_RUN:
            dry_run = true;
            break;
        default:
            rc = iof_opt_usage_error(&runs_cmd, "option not handled");
        }
    }
    iof_opt_free(&p);
    if (!rc && sub && !strcmp(sub, "export"))
        rc = iof_opt_usage_error(&runs_cmd, "export comes first: iofleet runs export RUN ...");
    if (!rc && sub && strcmp(sub, "rm") && strcmp(sub, "import") && strcmp(sub, "prune") &&
        strcmp(sub, "tag")) {
        static const char *const subs[] = {"rm", "import", "prune", "tag", "export"};
        const char *best = iof_opt_suggest(sub, subs, 5);
        rc =
            iof_opt_usage_error(&runs_cmd, "unknown command '%s'%s%s%s", sub,
                                best ? "; did you mean '" : "", best ? best : "", best ? "'?" : "");
    }
    if (!rc && sub && !strcmp(sub, "import") && !nargs)
        rc = iof_opt_usage_error(&runs_cmd, "%s needs %s", sub, "a RESULT.json file");
    if (!rc && (!sub || !strcmp(sub, "tag")) && tag)
        rc = iof_opt_usage_error(&runs_cmd, "--tag goes with import, rm or prune");
    if (!rc && tag && mgr_query_id(tag, &(int64_t){0}))
        rc = iof_opt_usage_error(&runs_cmd, "a tag cannot be a number (numbers are run ids)");
    if (!rc && tag && mgr_cli_tag_check(&runs_cmd, tag))
        rc = 2;
    if (!rc)
        rc =
            runs_check_housekeeping(sub, args, nargs, tag, older, keep, &older_ns, &nkeep, dry_run);
    if (!rc)
        rc = open_store("iofleet runs", db, &st);
    if (rc) {
        free(args);
        return rc < 0 ? 0 : rc;
    }
    if (!sub) {
        if (mgr_store_list(st, NULL, json, stdout, &d)) {
            IOF_USER("iofleet runs: %s", d.msg);
            rc = 1;
        }
    } else if (!strcmp(sub, "rm")) {
        rc = runs_rm(st, args, nargs, tag, dry_run);
    } else if (!strcmp(sub, "prune")) {
        rc = runs_prune(st, older_ns, nkeep, tag, dry_run);
    } else if (!strcmp(sub, "tag")) {
        rc = runs_tag(st, args);
    } else {
        for (size_t i = 0; i < nargs; i++) {
            int64_t run;
            if (mgr_store_import(st, args[i], tag, &run, &d)) {
                IOF_USER("iofleet runs import: %s", d.msg);
                rc = 1;
            } else {
                fputs("imported ", stdout);
                iof_text_fput(stdout, args[i]);
                printf(" as run %" PRId64 "\n", run);
            }
        }
    }
    if (fflush(stdout) && !rc)
        rc = 1;
    mgr_store_close(st);
    free(args);
    return rc;
}

int mgr_cli_report(int argc, char **argv)
{
    struct iof_opt_parser p;
    struct mgr_report_opts o = {.format = MGR_REPORT_HTML};
    const char *val, *out = NULL, *db = NULL;
    const char **refs = calloc((size_t)argc + 1, sizeof(*refs));
    size_t nrefs = 0;
    bool force = false;
    int id, rc = 0;

    if (!refs || iof_opt_init(&p, &report_cmd, argc, argv)) {
        free(refs);
        IOF_USER("iofleet report: out of memory");
        return 1;
    }
    while (rc == 0 && (id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        switch (id) {
        case IOF_OPT_ERROR:
            rc = 2;
            break;
        case IOF_OPT_HELP:
            rc = -1;
            break;
        case IOF_OPT_POSITIONAL:
            refs[nrefs++] = val;
            break;
        case HOPT_OUT:
            out = val;
            break;
        case HOPT_DB:
            db = val;
            break;
        case HOPT_FORCE:
            force = true;
            break;
        case HOPT_FORMAT:
            if (!strcmp(val, "html"))
                o.format = MGR_REPORT_HTML;
            else if (!strcmp(val, "md"))
                o.format = MGR_REPORT_MD;
            else if (!strcmp(val, "json"))
                o.format = MGR_REPORT_JSON;
            else
                rc =
                    iof_opt_usage_error(&report_cmd, "--format is html, md or json, got '%s'", val);
            break;
        default:
            rc = iof_opt_usage_error(&report_cmd, "option not handled");
        }
    }
    iof_opt_free(&p);
    if (!rc && !nrefs)
        rc = iof_opt_usage_error(&report_cmd, "needs a RUN (an id, a tag or a RESULT.json)");
    if (!rc && o.format == MGR_REPORT_JSON && nrefs < 2)
        rc = iof_opt_usage_error(&report_cmd,
                                 "--format json is a comparison: it needs two or more RUNs, got 1");
    if (!rc && !out)
        rc = iof_opt_usage_error(&report_cmd, "needs -o FILE (- for stdout)");
    if (!rc) {
        struct iof_diag od = {{0}};
        if (iof_outfile_check(out, force ? IOF_OUTFILE_FORCE : 0, &od)) {
            IOF_USER("iofleet report: %s", od.msg);
            rc = 2;
        }
    }
    if (rc) {
        free(refs);
        return rc < 0 ? 0 : rc;
    }
    o.refs = refs;
    o.nrefs = nrefs;
    o.db = db;
    o.out = out;
    o.force = force;
    rc = mgr_report_write(&o);
    free(refs);
    return rc;
}
