/* manager/cli_history.c - `iofleet runs` (list, rm, import of the run
 * history) and `iofleet report` (HTML or Markdown of one or more runs), each
 * with its option table (common/cliopt.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cliopt.h"
#include "common/log.h"
#include "common/outfile.h"
#include "common/text.h"
#include "manager/cli.h"
#include "manager/report_html.h"
#include "manager/store.h"

enum hist_opt_id {
    HOPT_HELP = 1,
    HOPT_DB,
    HOPT_JSON,
    HOPT_TAG,
    HOPT_OUT,
    HOPT_FORMAT,
    HOPT_FORCE,
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
    {"tag", 0, IOF_OPT_REQUIRED, "NAME", "import: tag the imported run", HOPT_TAG},
};

static const struct iof_cmd runs_cmd = {
    .prog = "iofleet runs",
    .synopsis = "[rm ID...|import RESULT.json] [OPTION]...",
    .about = "Lists the recorded runs (id, start time, plan, tag, nodes, finished/planned tests, "
             "the IOPS and p99 latency in ms of the run's fastest test, exit code and status); "
             "'rm ID...' removes runs; 'import RESULT.json' records a document written by "
             "iofleet run --json. A run a killed manager left is listed as unfinished with the "
             "tests it finished.",
    .opts = runs_opts,
    .nopts = sizeof(runs_opts) / sizeof(runs_opts[0]),
    .epilog = "exit codes: 0 done, 1 database error or no such run, 2 usage error\n",
};

static const struct iof_opt report_opts[] = {
    HOPT_HELP_ENTRY,
    {"output", 'o', IOF_OPT_REQUIRED, "FILE", "write the report here (- for stdout)", HOPT_OUT},
    {"format", 0, IOF_OPT_REQUIRED, "html|md",
     "html (default): one self-contained page with charts; md: the tables as Markdown",
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

static bool parse_id(const char *s, int64_t *id)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v <= 0)
        return false;
    *id = v;
    return true;
}

int mgr_cli_runs(int argc, char **argv)
{
    struct iof_opt_parser p;
    struct mgr_store *st = NULL;
    struct iof_diag d = {{0}};
    const char *db = NULL, *tag = NULL, *val, *sub = NULL;
    const char **args = calloc((size_t)argc + 1, sizeof(*args));
    size_t nargs = 0;
    bool json = false;
    int id, rc = 0;

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
        default:
            rc = iof_opt_usage_error(&runs_cmd, "option not handled");
        }
    }
    iof_opt_free(&p);
    if (!rc && sub && strcmp(sub, "rm") && strcmp(sub, "import")) {
        static const char *const subs[] = {"rm", "import"};
        const char *best = iof_opt_suggest(sub, subs, 2);
        rc =
            iof_opt_usage_error(&runs_cmd, "unknown command '%s'%s%s%s", sub,
                                best ? "; did you mean '" : "", best ? best : "", best ? "'?" : "");
    }
    if (!rc && sub && !nargs)
        rc = iof_opt_usage_error(&runs_cmd, "%s needs %s", sub,
                                 !strcmp(sub, "rm") ? "a run id" : "a RESULT.json file");
    if (!rc && (!sub || strcmp(sub, "import")) && tag)
        rc = iof_opt_usage_error(&runs_cmd, "--tag goes with import");
    if (!rc && tag && parse_id(tag, &(int64_t){0}))
        rc = iof_opt_usage_error(&runs_cmd, "a tag cannot be a number (numbers are run ids)");
    if (!rc && tag && mgr_cli_tag_check(&runs_cmd, tag))
        rc = 2;
    for (size_t i = 0; !rc && sub && !strcmp(sub, "rm") && i < nargs; i++)
        if (!parse_id(args[i], &(int64_t){0}))
            rc = iof_opt_usage_error(&runs_cmd, "rm takes run ids, got '%s'", args[i]);
    if (!rc)
        rc = open_store("iofleet runs", db, &st);
    if (rc) {
        free(args);
        return rc < 0 ? 0 : rc;
    }
    if (!sub) {
        if (mgr_store_list(st, json, stdout, &d)) {
            IOF_USER("iofleet runs: %s", d.msg);
            rc = 1;
        }
    } else if (!strcmp(sub, "rm")) {
        for (size_t i = 0; i < nargs; i++) {
            int64_t run = 0;
            if (!parse_id(args[i], &run)) { /* checked above; kept for the compiler */
                IOF_USER("iofleet runs rm: '%s' is not a run id", args[i]);
                rc = 2;
            } else if (mgr_store_rm(st, run, &d)) {
                IOF_USER("iofleet runs rm: %s", d.msg);
                rc = 1;
            } else {
                printf("removed run %" PRId64 "\n", run);
            }
        }
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
            else
                rc = iof_opt_usage_error(&report_cmd, "--format is html or md, got '%s'", val);
            break;
        default:
            rc = iof_opt_usage_error(&report_cmd, "option not handled");
        }
    }
    iof_opt_free(&p);
    if (!rc && !nrefs)
        rc = iof_opt_usage_error(&report_cmd, "needs a RUN (an id, a tag or a RESULT.json)");
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
