/* SPDX-License-Identifier: Apache-2.0 */
/* manager/cli.c - the `iofleet` command line: one option table per subcommand
 * (run, validate, pki init) that drives getopt_long and writes the --help,
 * then dispatch to the run, the plan printer or the PKI. */
#include "manager/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cliopt.h"
#include "common/log.h"
#include "common/outfile.h"
#include "common/text.h"
#include "manager/run.h"
#include "manager/sinks/http.h"
#include "manager/pki.h"
#include "manager/agents.h"
#include "manager/clean.h"
#include "manager/console.h"
#include "manager/probe.h"
#include "proto/quick.h"
#include "manager/sink.h"
#include "manager/history/store.h"
#include "proto/plan.h"
#include "proto/version.h"

#define CLI_MAX_SET 256
#define CLI_MAX_AGENTS 100000
#define CLI_MAX_SINKS 8 /* result files */

/* Option ids; shared by the run, validate and pki init tables. */
enum cli_opt_id {
    OPT_HELP = 1,
    OPT_AGENT,
    OPT_AGENTS_FILE,
    OPT_LISTEN,
    OPT_EXPECT,
    OPT_SET,
    OPT_UNSET,
    OPT_WORKDIR,
    OPT_CSV,
    OPT_IOMETER_CSV,
    OPT_IOMETER_CSV_APPEND,
    OPT_IOMETER_INSTANT,
    OPT_TIMESERIES,
    OPT_JSON,
    OPT_FORCE,
    OPT_TLS_CA,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_INSECURE,
    OPT_PKI,
    OPT_WAIT,
    OPT_MIN_AGENTS,
    OPT_HEARTBEAT_MS,
    OPT_QUIET,
    OPT_VERBOSE,
    OPT_MANAGER_NAME,
    OPT_DAYS,
    OPT_ALLOW_DESTRUCTIVE,
    OPT_JSON_STDOUT,
    OPT_DB,
    OPT_NO_DB,
    OPT_TAG,
    OPT_HTTP,
    OPT_HTTP_LINGER,
    OPT_SPEC,
    OPT_TARGET,
    OPT_QUEUE_DEPTH,
    OPT_WORKERS,
    OPT_ENGINE,
    OPT_DURATION,
    OPT_RAMP,
    OPT_PRINT_PLAN,
    OPT_ROWS,
    OPT_CLEANUP,
};

#define CLI_OPT_HELP                                                                               \
    {                                                                                              \
        "help", 'h', IOF_OPT_NONE, NULL, "print this help and exit", OPT_HELP                      \
    }
#define CLI_OPT_SET                                                                                \
    {                                                                                              \
        "set", 0, IOF_OPT_REQUIRED, "KEY=VALUE",                                                   \
            "override a plan value before validation (repeatable, later ones win), e.g. "          \
            "run.duration=5s or workers[0].queue_depth=32; VALUE is JSON when it parses as JSON, " \
            "else a string, and a bare word is always a value (engine=null is the null engine)",   \
            OPT_SET                                                                                \
    }
#define CLI_OPT_UNSET                                                                              \
    {                                                                                              \
        "unset", 0, IOF_OPT_REQUIRED, "KEY",                                                       \
            "remove a plan key or array entry before validation, so its default applies "          \
            "(repeatable, in order with --set)",                                                   \
            OPT_UNSET                                                                              \
    }
#define CLI_OPT_TLS                                                                                \
    {"tls-ca",                                                                                     \
     0,                                                                                            \
     IOF_OPT_REQUIRED,                                                                             \
     "F",                                                                                          \
     "the CA certificate (from iofleet pki init); with --tls-cert and --tls-key: TLS 1.3 "         \
     "with mutual authentication, each agent's name must be its certificate's",                    \
     OPT_TLS_CA},                                                                                  \
        {"tls-cert", 0, IOF_OPT_REQUIRED, "F", "the manager's certificate", OPT_TLS_CERT},         \
        {"tls-key", 0, IOF_OPT_REQUIRED, "F", "the manager's private key", OPT_TLS_KEY},           \
        {"pki",                                                                                    \
         0,                                                                                        \
         IOF_OPT_REQUIRED,                                                                         \
         "DIR",                                                                                    \
         "the directory iofleet pki init wrote: --tls-ca DIR/ca.pem --tls-cert DIR/manager.pem "   \
         "--tls-key DIR/manager-key.pem, each --tls-* given still wins (default: $IOFLEET_PKI, "   \
         "when agents are dialled or accepted and no --insecure or --tls-* is given)",             \
         OPT_PKI},                                                                                 \
    {                                                                                              \
        "insecure", 0, IOF_OPT_NONE, NULL,                                                         \
            "allow plain TCP without authentication (loopback included: any local user could "     \
            "pose as an agent); the agents need it too",                                           \
            OPT_INSECURE                                                                           \
    }
/* The quick form: a plan from the command line (proto/quick.h). */
#define CLI_OPT_QUICK                                                                                \
    {"spec",                                                                                         \
     0,                                                                                              \
     IOF_OPT_REQUIRED,                                                                               \
     "SIZE[,read=PCT][,random=PCT][,align=A]",                                                       \
     "without a plan file: one test of this access specification (repeatable, one test each; "       \
     "read and random default to 100, e.g. 4k,read=70 or 64k,random=0)",                             \
     OPT_SPEC},                                                                                      \
        {"target",                                                                                   \
         0,                                                                                          \
         IOF_OPT_REQUIRED,                                                                           \
         "PATH[:SIZE]",                                                                              \
         "with --spec: a target of the workers (repeatable): a device, or a test file with its "     \
         "size (default " PROTO_QUICK_TARGET ":" PROTO_QUICK_TARGET_SIZE " in the workdir)",         \
         OPT_TARGET},                                                                                \
        {"queue-depth",                                                                              \
         0,                                                                                          \
         IOF_OPT_REQUIRED,                                                                           \
         "N",                                                                                        \
         "with --spec: outstanding I/Os per worker (default 1)",                                     \
         OPT_QUEUE_DEPTH},                                                                           \
        {"workers",  0, IOF_OPT_REQUIRED, "N", "with --spec: workers per agent (default 1)",         \
         OPT_WORKERS},                                                                               \
        {"engine",                                                                                   \
         0,                                                                                          \
         IOF_OPT_REQUIRED,                                                                           \
         "E",                                                                                        \
         "with --spec: libaio, io_uring, sync, null, windows (default: each agent's own, libaio "    \
         "on Linux, windows on Windows)",                                                            \
         OPT_ENGINE},                                                                                \
        {"duration",                                                                                 \
         0,                                                                                          \
         IOF_OPT_REQUIRED,                                                                           \
         "T",                                                                                        \
         "with --spec: measured time per test (default " PROTO_QUICK_DURATION ")",                   \
         OPT_DURATION},                                                                              \
        {"ramp",  0, IOF_OPT_REQUIRED, "T", "with --spec: unmeasured warm-up per test (default 0s)", \
         OPT_RAMP},                                                                                  \
    {                                                                                                \
        "print-plan", 0, IOF_OPT_NONE, NULL,                                                         \
            "print the plan the run would use as JSON (built from --spec or read from the file, "    \
            "every --set and --unset applied) and exit: the quick form teaches the file form",       \
            OPT_PRINT_PLAN                                                                           \
    }
#define CLI_OPT_WAIT                                                                               \
    {                                                                                              \
        "wait", 0, IOF_OPT_REQUIRED, "SECONDS",                                                    \
            "how long to wait for agents to connect, 1..86400 (default 15)", OPT_WAIT              \
    }

static const struct iof_opt cli_run_opts[] = {
    CLI_OPT_HELP,
    {"agent", 0, IOF_OPT_REQUIRED, "unix:PATH|HOST[:PORT]",
     "dial a dynamo started with --listen (repeatable): unix:PATH is its unix socket (no "
     "certificates; only root or the agent's own user), HOST[:PORT] is TCP (default port "
     "7066; TLS or --insecure)",
     OPT_AGENT},
    {"agents-file", 0, IOF_OPT_REQUIRED, "F",
     "dial every agent listed in F: one unix:PATH or HOST[:PORT] per line, '#' comments",
     OPT_AGENTS_FILE},
    {"listen", 0, IOF_OPT_OPTIONAL, "[ADDR][:PORT]",
     "accept dynamo agents started with --manager (default all addresses, port 7066) and wait "
     "for --expect of them",
     OPT_LISTEN},
    {"expect", 0, IOF_OPT_REQUIRED, "N", "how many agents --listen waits for", OPT_EXPECT},
    CLI_OPT_SET,
    CLI_OPT_UNSET,
    CLI_OPT_QUICK,
    {"workdir", 0, IOF_OPT_REQUIRED, "DIR",
     "test-file directory of the local agent (default ./iofleet-work)", OPT_WORKDIR},
    {"cleanup", 0, IOF_OPT_NONE, NULL,
     "at the end of the run (interrupted or lost included), every agent removes the test "
     "files this run created in its workdir, and their verify state; files it reused are kept "
     "(the plan key run.cleanup; iofleet clean removes them all)",
     OPT_CLEANUP},
    {"allow-destructive", 0, IOF_OPT_NONE, NULL,
     "let the local agent write block devices that hold data (a partition table, a "
     "filesystem signature, or ends iofleet did not write), as dynamo --allow-destructive; "
     "mounted or busy devices are refused always. Remote agents decide for themselves",
     OPT_ALLOW_DESTRUCTIVE},
    {"csv", 0, IOF_OPT_REQUIRED, "F",
     "write the results as CSV: one row per test and ALL/NODE/WORKER/TARGET", OPT_CSV},
    {"iometer-csv", 0, IOF_OPT_REQUIRED, "F",
     "write the results in Iometer 1.1.0's results.csv layout", OPT_IOMETER_CSV},
    {"iometer-csv-append", 0, IOF_OPT_REQUIRED, "F",
     "append the results to F in Iometer 1.1.0's results.csv layout, as Iometer adds each run "
     "to its results file: what F holds is never rewritten (created when missing; a symbolic "
     "link or a file with other hard links is refused, --force does not apply)",
     OPT_IOMETER_CSV_APPEND},
    {"iometer-instant", 0, IOF_OPT_REQUIRED, "F",
     "write Iometer's instantaneous results file: TimeStamp first, then the results.csv "
     "columns, one MANAGER row per node per interval and each test's WORKER and ALL rows",
     OPT_IOMETER_INSTANT},
    {"timeseries", 0, IOF_OPT_REQUIRED, "F", "write one CSV row per interval per node, plus ALL",
     OPT_TIMESERIES},
    {"json", 0, IOF_OPT_REQUIRED, "F",
     "write everything as JSON: plan, agents, intervals, results, histograms", OPT_JSON},
    {"http", 0, IOF_OPT_REQUIRED, "[ADDR:]PORT",
     "serve a live view while the run lasts: a page (/), Server-Sent Events (/events), "
     "Prometheus metrics (/metrics) and JSON (/api/run); ADDR defaults to 127.0.0.1, any other "
     "address is served without authentication (docs/monitoring.md); PORT 0 picks a free one",
     OPT_HTTP},
    {"http-linger", 0, IOF_OPT_REQUIRED, "SECONDS",
     "with --http: keep serving the final figures this long after the run, 0..3600 (default "
     "0), so a scraper sees them",
     OPT_HTTP_LINGER},
    {"force", 'f', IOF_OPT_NONE, NULL,
     "replace existing result files; without it an existing file is refused before anything "
     "runs. Result file names may hold {date} (the run's start, UTC) and {run} (its id in the "
     "history, or a counter with --no-db): a new name for each run",
     OPT_FORCE},
    {"db", 0, IOF_OPT_REQUIRED, "PATH",
     "record the run in this history database (default $XDG_DATA_HOME/iofleet/runs.db, else "
     "~/.local/share/iofleet/runs.db; see iofleet runs)",
     OPT_DB},
    {"no-db", 0, IOF_OPT_NONE, NULL, "do not record the run in the history", OPT_NO_DB},
    {"tag", 0, IOF_OPT_REQUIRED, "NAME",
     "tag the recorded run (iofleet report NAME finds the newest run with it)", OPT_TAG},
    CLI_OPT_TLS,
    CLI_OPT_WAIT,
    {"min-agents", 0, IOF_OPT_REQUIRED, "N",
     "when the --wait ends, go on with the agents connected if there are at least N, naming "
     "each one left out and why (default: every --agent, or --expect)",
     OPT_MIN_AGENTS},
    {"heartbeat-ms", 0, IOF_OPT_REQUIRED, "N",
     "the manager's heartbeat period, 100..60000 ms, offered to each agent (default: 3000 to an "
     "agent of protocol 1.5 or later, 1000 to an older one); a session uses the larger of both "
     "peers' periods, capped by the agent (5000 ms unless its own --heartbeat-ms is larger). "
     "Three missed heartbeats mean the peer is lost: the agent stops its I/O, the manager "
     "counts the agent lost",
     OPT_HEARTBEAT_MS},
    {"rows", 0, IOF_OPT_REQUIRED, "LIST",
     "the rows each test's table shows besides ALL and NODE: a comma separated list of group, "
     "worker, target, or all (default none; the result files keep every row)",
     OPT_ROWS},
    {"quiet", 'q', IOF_OPT_NONE, NULL, "no live interval lines, no summary of the run's tests",
     OPT_QUIET},
    {"verbose", 'v', IOF_OPT_NONE, NULL,
     "log when each interval is merged and how long after the last report", OPT_VERBOSE},
};

static const struct iof_opt cli_validate_opts[] = {
    CLI_OPT_HELP,
    {"agent", 0, IOF_OPT_REQUIRED, "unix:PATH|HOST[:PORT]",
     "also ask this agent (repeatable) for its budget and --allow list and check the plan "
     "against what it accepts there; exit 1 when an agent would refuse the plan",
     OPT_AGENT},
    {"agents-file", 0, IOF_OPT_REQUIRED, "F",
     "ask every agent listed in F as with --agent: one unix:PATH or HOST[:PORT] per line, '#' "
     "comments (the file iofleet run takes)",
     OPT_AGENTS_FILE},
    CLI_OPT_SET,
    CLI_OPT_UNSET,
    CLI_OPT_QUICK,
    CLI_OPT_TLS,
    CLI_OPT_WAIT,
};

static const struct iof_opt cli_agents_opts[] = {
    CLI_OPT_HELP,
    {"agent", 0, IOF_OPT_REQUIRED, "unix:PATH|HOST[:PORT]",
     "ask this agent, started with --listen (repeatable)", OPT_AGENT},
    {"agents-file", 0, IOF_OPT_REQUIRED, "F",
     "ask every agent listed in F: one unix:PATH or HOST[:PORT] per line, '#' comments",
     OPT_AGENTS_FILE},
    {"json", 0, IOF_OPT_NONE, NULL,
     "print one JSON array instead of tables: per agent its endpoint, whether it answered, and "
     "its hello (inventory, budget) or the reason",
     OPT_JSON_STDOUT},
    CLI_OPT_TLS,
    CLI_OPT_WAIT,
};

static const struct iof_opt cli_clean_opts[] = {
    CLI_OPT_HELP,
    {"agent", 0, IOF_OPT_REQUIRED, "unix:PATH|HOST[:PORT]",
     "clean this agent, started with --listen (repeatable)", OPT_AGENT},
    {"agents-file", 0, IOF_OPT_REQUIRED, "F",
     "clean every agent listed in F: one unix:PATH or HOST[:PORT] per line, '#' comments",
     OPT_AGENTS_FILE},
    CLI_OPT_TLS,
    CLI_OPT_WAIT,
};

static const struct iof_opt cli_pki_opts[] = {
    CLI_OPT_HELP,
    {"agent", 0, IOF_OPT_REQUIRED, "NAME",
     "make a certificate for this node name, as given to dynamo --name: ASCII letters, digits, "
     "'.', '_' and '-' (repeatable)",
     OPT_AGENT},
    {"manager-name", 0, IOF_OPT_REQUIRED, "NAME",
     "the manager's certificate name (default " MGR_PKI_MANAGER_NAME ")", OPT_MANAGER_NAME},
    {"days", 0, IOF_OPT_REQUIRED, "N",
     "lifetime of the manager and agent certificates, 1..3650 (default 825; the CA lives "
     "3650 days)",
     OPT_DAYS},
    {"force", 'f', IOF_OPT_NONE, NULL,
     "replace existing manager and agent files (never the CA: a new CA needs a new directory)",
     OPT_FORCE},
};

#define CLI_EXIT_CODES                                                                             \
    "exit codes: 0 clean, 1 I/O errors, failed or lost agents, 2 usage or plan\n"                  \
    "            error, 3 agents unreachable or refused, 130 interrupted\n"

static bool cli_listen_takes(int id, const char *next)
{
    /* "--listen ADDR": the address is optional, a plan is not an address. */
    return id == OPT_LISTEN && !strstr(next, ".json");
}

static const struct iof_cmd cli_run_cmd = {
    .prog = "iofleet run",
    .synopsis = "PLAN.json|- [OPTION]...",
    .about = "Runs every test of the plan (- reads it from stdin) and prints a result table per "
             "test. Without --agent, --agents-file or --listen, a local agent is started, "
             "connected by a socketpair (no port).",
    .opts = cli_run_opts,
    .nopts = sizeof(cli_run_opts) / sizeof(cli_run_opts[0]),
    .epilog = CLI_EXIT_CODES,
    .takes_next = cli_listen_takes,
};

static const struct iof_cmd cli_validate_cmd = {
    .prog = "iofleet validate",
    .synopsis = "PLAN.json|- [OPTION]...",
    .about = "Prints the expanded list of tests with every override applied, or the plan's "
             "error (- reads the plan from stdin). Runs nothing.",
    .opts = cli_validate_opts,
    .nopts = sizeof(cli_validate_opts) / sizeof(cli_validate_opts[0]),
    .epilog = "exit codes: 0 valid, 1 an agent would refuse it, 2 usage or plan error,\n"
              "            3 agents unreachable\n",
};

static const struct iof_cmd cli_agents_cmd = {
    .prog = "iofleet agents",
    .synopsis = "--agent ENDPOINT... | --agents-file F [OPTION]...",
    .about = "Lists what each agent is and may use, from the hello it sends on connection: "
             "version, CPUs, memory, kernel, budget, its workdir's filesystem and free space, "
             "and every --allow entry (kind, device, size, logical and physical block size, "
             "rotational, in use, signature, mount point, RAM-backed, model). Runs nothing and "
             "starts no session: the agent stays free.",
    .opts = cli_agents_opts,
    .nopts = sizeof(cli_agents_opts) / sizeof(cli_agents_opts[0]),
    .epilog = "exit codes: 0 every agent answered, 1 output error, 2 usage error,\n"
              "            3 an agent could not be reached (named on stderr)\n",
};

static const struct iof_cmd cli_clean_cmd = {
    .prog = "iofleet clean",
    .synopsis = "--agent ENDPOINT... | --agents-file F [OPTION]...",
    .about = "Asks each agent to remove the test files it made in its workdir, and their "
             "verify state: only the files its ledger names that are still the files it "
             "created, never a device, an --allow path or anything outside the workdir. An "
             "agent busy with a run refuses. Agents of protocols before 1.2 cannot clean.",
    .opts = cli_clean_opts,
    .nopts = sizeof(cli_clean_opts) / sizeof(cli_clean_opts[0]),
    .epilog = "exit codes: 0 every agent cleaned, 1 a file could not be removed or output\n"
              "            error, 2 usage error, 3 an agent could not be reached, refused\n"
              "            or was busy (named on stderr)\n",
};

static const struct iof_cmd cli_pki_cmd = {
    .prog = "iofleet pki init",
    .synopsis = "DIR [OPTION]...",
    .about = "Writes DIR/ca.pem, DIR/ca-key.pem, DIR/manager.pem, DIR/manager-key.pem and "
             "DIR/NAME.pem, DIR/NAME-key.pem per agent: ECDSA P-256 keys (unencrypted PKCS#8), "
             "files mode 0600, DIR mode 0700. When DIR/ca.pem exists, the agents are added, "
             "signed by that CA, and the manager's files are written only if missing.",
    .opts = cli_pki_opts,
    .nopts = sizeof(cli_pki_opts) / sizeof(cli_pki_opts[0]),
    .epilog = "exit codes: 0 written, 1 I/O error or existing file, 2 usage error\n",
};

/* The subcommands, for dispatch, the overview and suggestions. */
static const char *const cli_commands[] = {"run",   "validate", "agents", "clean",
                                           "runs",  "report",   "import", "export",
                                           "serve", "pki",      "help"};

static const char cli_synopsis[] = "COMMAND [OPTION]...";

static void cli_overview(FILE *f)
{
    fprintf(f, "usage: iofleet run PLAN.json|- [OPTION]...\n"
               "       iofleet validate PLAN.json|- [OPTION]...\n"
               "       iofleet agents --agent ENDPOINT...|--agents-file F [OPTION]...\n"
               "       iofleet clean --agent ENDPOINT...|--agents-file F [OPTION]...\n"
               "       iofleet runs [rm ID|import RESULT.json] [OPTION]...\n"
               "       iofleet report RUN... -o FILE [OPTION]...\n"
               "       iofleet import JOB.fio [-o PLAN.json] [OPTION]...\n"
               "       iofleet export PLAN.json|- [-o F.icf] [OPTION]...\n"
               "       iofleet serve [--http [ADDR:]PORT] [--listen [ADDR][:PORT]] [OPTION]...\n"
               "       iofleet pki init DIR [OPTION]...\n"
               "       iofleet help [COMMAND]\n"
               "       iofleet --version\n"
               "\n"
               "commands:\n"
               "  run        run every test of a plan and print a result table per test\n"
               "  validate   print the expanded list of tests, or the plan's error\n"
               "  agents     list each agent's CPUs, memory, devices and workdir\n"
               "  clean      make agents remove the test files they made in their workdir\n"
               "  runs       list, remove or import runs of the run history\n"
               "  report     write an HTML or Markdown report of runs (2 or more: a comparison)\n"
               "  import     write a plan from a fio job file\n"
               "  export     write a plan as an Iometer configuration file (.icf)\n"
               "  serve      a long-running manager: agents dial in, a JSON API answers\n"
               "  pki init   make a CA and the TLS certificates of the manager and the agents\n"
               "  help       print a command's help (the same as iofleet COMMAND --help)\n"
               "\n"
               "options:\n"
               "  -h, --help     print this overview and exit\n"
               "      --version  print the version and the protocol version and exit\n"
               "\n"
               "A plan of - is read from standard input. 'iofleet COMMAND --help' lists a\n"
               "command's options.\n"
               "\n" CLI_EXIT_CODES);
}

struct cli_args {
    const char *plan;
    const char *sets[CLI_MAX_SET];
    size_t nsets;
    const char *workdir;
    bool quiet;
    unsigned rows; /* --rows: MGR_TABLE_ROWS_* */
    bool verbose;
    bool json_stdout; /* agents --json */
    bool print_plan;
    struct proto_quick quick; /* its arrays point into quick_specs/quick_targets */
    const char **quick_specs, **quick_targets;
    const char **agents; /* owned array of borrowed or owned strings */
    size_t nagents, capagents;
    char **owned; /* agent strings read from --agents-file */
    size_t nowned;
    const char *listen;
    unsigned expect;
    unsigned min_agents; /* --min-agents, 0: all */
    bool insecure;
    const char *tls_ca, *tls_cert, *tls_key;
    const char *pki;                /* --pki DIR */
    char pki_path[3][IOF_PATH_MAX]; /* ca, cert, key from --pki or $IOFLEET_PKI */
    uint64_t wait_ms;
    uint32_t heartbeat_ms;
    const char *sink_opt[CLI_MAX_SINKS]; /* "--csv" ... */
    const char *sink_path[CLI_MAX_SINKS];
    char sink_name[CLI_MAX_SINKS][IOF_PATH_MAX]; /* sink_path with {date} and {run} replaced */
    size_t nsinks;
    const char *http;       /* --http [ADDR:]PORT, or NULL */
    unsigned http_linger;   /* --http-linger seconds */
    bool force;             /* replace existing result files */
    bool allow_destructive; /* the local agent's --allow-destructive */
    const char *db;         /* --db PATH, NULL: the default */
    bool no_db;
    const char *tag;
};

static void cli_args_free(struct cli_args *a)
{
    free(a->quick_specs);
    free(a->quick_targets);
    for (size_t i = 0; i < a->nowned; i++)
        free(a->owned[i]);
    free(a->owned);
    free(a->agents);
}

static int cli_add_agent(struct cli_args *a, const char *ep, bool own)
{
    if (a->nagents == CLI_MAX_AGENTS) {
        IOF_USER("iofleet: too many agents (max %d)", CLI_MAX_AGENTS);
        return 2;
    }
    if (a->nagents == a->capagents) {
        size_t cap = a->capagents ? a->capagents * 2 : 16;
        const char **n = realloc(a->agents, cap * sizeof(*n));
        if (!n)
            return 2;
        a->agents = n;
        a->capagents = cap;
    }
    if (own) {
        char **o = realloc(a->owned, (a->nowned + 1) * sizeof(*o));
        char *dup = strdup(ep);
        if (!o || !dup) {
            free(dup);
            if (o)
                a->owned = o;
            return 2;
        }
        a->owned = o;
        a->owned[a->nowned++] = dup;
        ep = dup;
    }
    a->agents[a->nagents++] = ep;
    return 0;
}

static int cli_agents_file(struct cli_args *a, const char *path)
{
    char line[512];
    unsigned n = 0;
    FILE *f = fopen(path, "r");

    if (!f) {
        IOF_USER("iofleet: --agents-file %s: %s", path, strerror(errno));
        return 2;
    }
    while (fgets(line, sizeof(line), f)) {
        char *s = line, *e;
        n++;
        s[strcspn(s, "#\r\n")] = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
            e[-1] = '\0';
        if (!*s)
            continue;
        if (strchr(s, ' ') || strchr(s, '\t')) {
            IOF_USER("iofleet: %s:%u: one HOST[:PORT] per line, got '%s'", path, n, s);
            fclose(f);
            return 2;
        }
        if (cli_add_agent(a, s, true)) {
            fclose(f);
            return 2;
        }
    }
    fclose(f);
    return 0;
}

int mgr_cli_tag_check(const struct iof_cmd *cmd, const char *tag)
{
    struct iof_text_fault tf;
    char why[64];

    if (!iof_text_check(tag, &tf))
        return 0;
    return iof_opt_usage_error(cmd, "--tag must not contain control characters, got %s",
                               iof_text_fault_str(why, sizeof(why), &tf));
}

static int cli_number(const struct iof_cmd *cmd, const char *opt, const char *val,
                      unsigned long min, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    *out = strtoul(val, &end, 10);
    if (!*val || *val == '-' || *end || errno || *out < min || *out > max)
        return iof_opt_usage_error(cmd, "%s must be a number %lu..%lu, got '%s'", opt, min, max,
                                   val);
    return 0;
}

static int cli_add_override(const struct iof_cmd *cmd, struct cli_args *a, int id, const char *val)
{
    if (a->nsets == CLI_MAX_SET)
        return iof_opt_usage_error(cmd, "too many --set and --unset options (max %d)", CLI_MAX_SET);
    /* The plan loader reads an override without '=' as a removal. */
    if (id == OPT_SET && !strchr(val, '='))
        return iof_opt_usage_error(cmd, "--set %s: expected KEY=VALUE (--unset KEY removes a key)",
                                   val);
    if (id == OPT_UNSET && (!*val || strchr(val, '=')))
        return iof_opt_usage_error(cmd, "--unset takes a KEY, got '%s' (--set KEY=VALUE sets one)",
                                   val);
    a->sets[a->nsets++] = val;
    return 0;
}

/* Result files: "--csv" ... by option id. */
static const char *cli_sink_option(int id)
{
    switch (id) {
    case OPT_CSV:
        return "--csv";
    case OPT_IOMETER_CSV:
        return "--iometer-csv";
    case OPT_IOMETER_CSV_APPEND:
        return "--iometer-csv-append";
    case OPT_IOMETER_INSTANT:
        return "--iometer-instant";
    case OPT_TIMESERIES:
        return "--timeseries";
    case OPT_JSON:
        return "--json";
    default:
        return NULL;
    }
}

/* The manager's TLS files from a directory `iofleet pki init` wrote: --pki
 * DIR, else $IOFLEET_PKI when the command dials or accepts agents and was
 * given neither --insecure nor any --tls-* option. Each --tls-* given wins
 * over its file from the directory. 0, or 2 after naming a missing file. */
static int cli_pki_dir(const struct iof_cmd *cmd, struct cli_args *a)
{
    static const char *const base[3] = {"ca.pem", "manager.pem", "manager-key.pem"};
    const char **set[3] = {&a->tls_ca, &a->tls_cert, &a->tls_key};
    const char *dir = a->pki, *from = "--pki";

    if (!dir && !a->insecure && !a->tls_ca && !a->tls_cert && !a->tls_key &&
        (a->nagents || a->listen)) {
        dir = getenv("IOFLEET_PKI");
        from = "IOFLEET_PKI";
        if (dir && !*dir)
            dir = NULL;
    }
    if (!dir)
        return 0;
    for (int i = 0; i < 3; i++) {
        struct stat st;
        if (*set[i])
            continue; /* given explicitly */
        if (snprintf(a->pki_path[i], sizeof(a->pki_path[i]), "%s/%s", dir, base[i]) >=
            (int)sizeof(a->pki_path[i])) {
            IOF_USER("%s: %s %s: path too long", cmd->prog, from, dir);
            return 2;
        }
        if (stat(a->pki_path[i], &st) < 0) {
            IOF_USER("%s: %s%s%s: %s: %s (iofleet pki init %s writes it)", cmd->prog, from,
                     from[0] == '-' ? " " : "=", dir, a->pki_path[i], strerror(errno), dir);
            return 2;
        }
        *set[i] = a->pki_path[i];
    }
    return 0;
}

/* Parses run's or validate's options from argv[1..] (argv[1] is the
 * subcommand); 0, or the exit code (2 for a usage error, 0 after --help). */
static int cli_parse(int argc, char **argv, const struct iof_cmd *cmd, struct cli_args *a)
{
    struct iof_opt_parser p;
    const char *val;
    int id, rc = 0;

    memset(a, 0, sizeof(*a));
    a->workdir = "iofleet-work";
    a->wait_ms = 15000;
    if (iof_opt_init(&p, cmd, argc - 1, argv + 1)) {
        IOF_USER("%s: out of memory", cmd->prog);
        return 2;
    }
    while (rc == 0 && (id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        unsigned long num;
        const char *sink = cli_sink_option(id);
        switch (id) {
        case IOF_OPT_ERROR:
            rc = 2;
            break;
        case IOF_OPT_HELP:
            rc = -1; /* exit 0 */
            break;
        case IOF_OPT_POSITIONAL:
            if (cmd == &cli_agents_cmd || cmd == &cli_clean_cmd)
                rc = iof_opt_usage_error(cmd, "takes no plan, got '%s'", val);
            else if (a->plan)
                rc = iof_opt_usage_error(cmd, "one plan only, got '%s' and '%s'", a->plan, val);
            else
                a->plan = val;
            break;
        case OPT_SET:
        case OPT_UNSET:
            rc = cli_add_override(cmd, a, id, val);
            break;
        case OPT_WORKDIR:
            a->workdir = val;
            break;
        case OPT_AGENT:
            rc = cli_add_agent(a, val, false);
            break;
        case OPT_AGENTS_FILE:
            rc = cli_agents_file(a, val);
            break;
        case OPT_LISTEN:
            a->listen = val ? val : ""; /* alone: all addresses, port 7066 */
            break;
        case OPT_EXPECT:
            rc = cli_number(cmd, "--expect", val, 1, CLI_MAX_AGENTS, &num);
            a->expect = (unsigned)num;
            break;
        case OPT_WAIT:
            rc = cli_number(cmd, "--wait", val, 1, 86400, &num);
            a->wait_ms = (uint64_t)num * 1000;
            break;
        case OPT_MIN_AGENTS:
            rc = cli_number(cmd, "--min-agents", val, 1, CLI_MAX_AGENTS, &num);
            a->min_agents = (unsigned)num;
            break;
        case OPT_HEARTBEAT_MS:
            rc = cli_number(cmd, "--heartbeat-ms", val, 100, 60000, &num);
            a->heartbeat_ms = (uint32_t)num;
            break;
        case OPT_CSV:
        case OPT_IOMETER_CSV:
        case OPT_IOMETER_CSV_APPEND:
        case OPT_IOMETER_INSTANT:
        case OPT_TIMESERIES:
        case OPT_JSON:
            for (size_t k = 0; k < a->nsinks && !rc; k++)
                if (!strcmp(a->sink_opt[k], sink))
                    rc = iof_opt_usage_error(cmd, "%s given twice", sink);
            if (!rc) {
                a->sink_opt[a->nsinks] = sink;
                a->sink_path[a->nsinks++] = val;
            }
            break;
        case OPT_HTTP: {
            char host[64];
            uint16_t port;
            struct iof_diag d = {{0}};
            if (mgr_http_parse(val, host, sizeof(host), &port, &d)) {
                IOF_USER("%s: --http %s", cmd->prog, d.msg); /* one line, like a busy port */
                rc = 2;
            }
            a->http = val;
            break;
        }
        case OPT_HTTP_LINGER:
            rc = cli_number(cmd, "--http-linger", val, 0, 3600, &num);
            a->http_linger = (unsigned)num;
            break;
        case OPT_FORCE:
            a->force = true;
            break;
        case OPT_ALLOW_DESTRUCTIVE:
            a->allow_destructive = true;
            break;
        case OPT_CLEANUP:
            rc = cli_add_override(cmd, a, OPT_SET, "run.cleanup=true");
            break;
        case OPT_DB:
            a->db = val;
            break;
        case OPT_NO_DB:
            a->no_db = true;
            break;
        case OPT_TAG:
            if (!*val || strspn(val, "0123456789") == strlen(val))
                rc = iof_opt_usage_error(cmd,
                                         "--tag needs a name that is not a number (numbers "
                                         "are run ids), got '%s'",
                                         val);
            else if (mgr_cli_tag_check(cmd, val))
                rc = 2;
            a->tag = val;
            break;
        case OPT_TLS_CA:
            a->tls_ca = val;
            break;
        case OPT_TLS_CERT:
            a->tls_cert = val;
            break;
        case OPT_TLS_KEY:
            a->tls_key = val;
            break;
        case OPT_INSECURE:
            a->insecure = true;
            break;
        case OPT_PKI:
            a->pki = val;
            break;
        case OPT_QUIET:
            a->quiet = true;
            break;
        case OPT_ROWS: {
            struct iof_diag d = {{0}};
            if (mgr_table_rows_parse(val, &a->rows, &d))
                rc = iof_opt_usage_error(cmd, "--rows: %s", d.msg);
            break;
        }
        case OPT_VERBOSE:
            a->verbose = true;
            break;
        case OPT_JSON_STDOUT:
            a->json_stdout = true;
            break;
        case OPT_SPEC:
        case OPT_TARGET: {
            const char ***arr = id == OPT_SPEC ? &a->quick_specs : &a->quick_targets;
            size_t *n = id == OPT_SPEC ? &a->quick.nspecs : &a->quick.ntargets;
            const char **grown = realloc(*arr, (*n + 1) * sizeof(**arr));
            if (!grown) {
                rc = iof_opt_usage_error(cmd, "out of memory");
                break;
            }
            grown[(*n)++] = val;
            *arr = grown;
            a->quick.specs = a->quick_specs;
            a->quick.targets = a->quick_targets;
            break;
        }
        case OPT_QUEUE_DEPTH:
            a->quick.queue_depth = val;
            break;
        case OPT_WORKERS:
            a->quick.workers = val;
            break;
        case OPT_ENGINE:
            a->quick.engine = val;
            break;
        case OPT_DURATION:
            a->quick.duration = val;
            break;
        case OPT_RAMP:
            a->quick.ramp = val;
            break;
        case OPT_PRINT_PLAN:
            a->print_plan = true;
            break;
        default:
            rc = iof_opt_usage_error(cmd, "option not handled");
            break;
        }
    }
    iof_opt_free(&p);
    if (rc)
        return rc < 0 ? -1 : rc;
    if ((cmd == &cli_agents_cmd || cmd == &cli_clean_cmd) && !a->nagents)
        return iof_opt_usage_error(cmd, "needs --agent or --agents-file");
    if (a->plan && proto_quick_given(&a->quick))
        return iof_opt_usage_error(cmd, "give a PLAN.json or --spec and its options, not both "
                                        "(--set and --unset change a plan file)");
    if (!a->plan && cmd != &cli_agents_cmd && cmd != &cli_clean_cmd &&
        !proto_quick_given(&a->quick))
        return iof_opt_usage_error(cmd, "needs a PLAN.json (or - for stdin), or --spec SIZE...");
    if (cli_pki_dir(cmd, a))
        return 2;
    if (!!a->tls_ca + !!a->tls_cert + !!a->tls_key != 0 &&
        !!a->tls_ca + !!a->tls_cert + !!a->tls_key != 3)
        return iof_opt_usage_error(cmd, "TLS needs all of --tls-ca, --tls-cert and --tls-key");
    if (a->listen && !a->expect)
        return iof_opt_usage_error(cmd, "--listen needs --expect N (how many agents to wait for)");
    if (a->expect && !a->listen)
        return iof_opt_usage_error(cmd, "--expect only makes sense with --listen");
    if (a->min_agents && !a->nagents && !a->listen)
        return iof_opt_usage_error(cmd, "--min-agents needs --agent, --agents-file or --listen");
    if (a->min_agents > (a->listen ? a->expect : a->nagents))
        return iof_opt_usage_error(cmd, "--min-agents %u: more than the %zu agents %s",
                                   a->min_agents, a->listen ? (size_t)a->expect : a->nagents,
                                   a->listen ? "--expect waits for" : "given");
    if (a->no_db && (a->db || a->tag))
        return iof_opt_usage_error(cmd, "--no-db and %s contradict each other",
                                   a->db ? "--db" : "--tag");
    return 0;
}

/* A --set of run.duration or run.ramp that every spec overrides with its own
 * changes nothing: said, not silent. */
static void cli_warn_overridden(const struct cli_args *a, const struct iof_plan *p)
{
    for (size_t i = 0; i < a->nsets; i++) {
        bool dur = !strncmp(a->sets[i], "run.duration=", 13);
        bool all = p->nspecs > 0;
        if (!dur && strncmp(a->sets[i], "run.ramp=", 9))
            continue;
        for (size_t s = 0; s < p->nspecs && all; s++)
            all = dur ? p->specs[s].has_duration : p->specs[s].has_ramp;
        if (all)
            IOF_USER("iofleet: warning: --set %s changes nothing: every spec has its own %s "
                     "(specs[].%s overrides run's)",
                     a->sets[i], dur ? "duration" : "ramp", dur ? "duration" : "ramp");
    }
}

/* Loads the plan file, or builds the plan of the quick options. With
 * --print-plan, prints the plan's JSON instead and returns -1 (exit 0). */
static int cli_load(const struct cli_args *a, struct iof_plan *p, char **text)
{
    struct iof_diag d = {{0}};
    char *json = NULL, *canon = NULL;
    int rc;

    if (proto_quick_given(&a->quick)) {
        if (proto_quick_plan(&a->quick, &json, &d)) {
            IOF_USER("iofleet: %s", d.msg);
            return 2;
        }
        rc = proto_plan_parse_canonical(PROTO_QUICK_NAME, json, strlen(json), a->sets, a->nsets, p,
                                        &canon, &d);
    } else {
        rc = proto_plan_load_canonical(a->plan, a->sets, a->nsets, p, &canon, &d);
    }
    if (rc) {
        /* The plan as built, so a quick form's error can be read against it. */
        if (json && a->print_plan)
            fputs(json, stdout);
        free(json);
        IOF_USER("%s", d.msg);
        return 2;
    }
    cli_warn_overridden(a, p);
    if (a->print_plan) {
        /* The plan the run would use, --set and --unset applied: a quick
         * plan indented as the quick form writes it, a file as the loader
         * keeps it. */
        char *shown = json ? proto_plan_text_indented(canon) : NULL;
        free(json);
        iof_plan_free(p);
        if (json && !shown) {
            free(canon);
            IOF_USER("iofleet: out of memory for the plan");
            return 1;
        }
        if (shown)
            fputs(shown, stdout);
        else
            printf("%s\n", canon);
        free(shown);
        free(canon);
        return fflush(stdout) ? 1 : -1;
    }
    free(json);
    if (text)
        *text = canon;
    else
        free(canon);
    return 0;
}

/* validate without agents: says what only the agents can check. */
static void cli_validate_unchecked(const struct iof_plan *p)
{
    const char *abs = NULL;
    for (size_t i = 0; i < p->nworkers && !abs; i++)
        for (size_t k = 0; k < p->workers[i].ntargets && !abs; k++)
            if (p->workers[i].targets[k].path[0] == '/')
                abs = p->workers[i].targets[k].path;
    IOF_USER("iofleet validate: not checked without --agent or --agents-file: the agents' "
             "budgets%s%s%s",
             abs ? " and whether their --allow lists admit the plan's absolute paths (" : "",
             abs ? abs : "", abs ? "...)" : "");
}

static int cli_validate(int argc, char **argv)
{
    struct cli_args a;
    struct iof_plan p;
    struct iof_diag d = {{0}};
    char *canon = NULL;
    int rc = cli_parse(argc, argv, &cli_validate_cmd, &a);

    if (rc < 0) {
        cli_args_free(&a);
        return 0; /* --help */
    }
    if (rc == 0)
        rc = cli_load(&a, &p, &canon);
    if (rc < 0) { /* --print-plan */
        cli_args_free(&a);
        return 0;
    }
    /* Per-node target maps: the keys of groups naming their nodes (a "*" group's at run). */
    if (rc == 0 && proto_plan_map_check(canon, NULL, 0, mgr_run_warn_line, NULL, &d)) {
        IOF_USER("iofleet validate: %s", d.msg);
        rc = 2;
    }
    free(canon);
    if (rc == 0) {
        proto_plan_print(&p, stdout);
        if (!a.nagents)
            cli_validate_unchecked(&p);
        for (size_t i = 0; i < a.nagents; i++) {
            struct mgr_probe_opts po = {.endpoint = a.agents[i],
                                        .tls_ca = a.tls_ca,
                                        .tls_cert = a.tls_cert,
                                        .tls_key = a.tls_key,
                                        .insecure = a.insecure,
                                        .wait_ms = a.wait_ms};
            int r = mgr_probe_budget(&p, &po, stdout);
            rc = r > rc ? r : rc;
        }
        iof_plan_free(&p);
        if (fflush(stdout) && !rc)
            rc = 1;
    }
    cli_args_free(&a);
    return rc;
}

static int cli_agents(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_parse(argc, argv, &cli_agents_cmd, &a);

    if (rc == 0) {
        struct mgr_probe_opts po = {.tls_ca = a.tls_ca,
                                    .tls_cert = a.tls_cert,
                                    .tls_key = a.tls_key,
                                    .insecure = a.insecure,
                                    .wait_ms = a.wait_ms};
        rc = mgr_agents_list(a.agents, a.nagents, &po, a.json_stdout, stdout);
    }
    cli_args_free(&a);
    return rc < 0 ? 0 : rc;
}

static int cli_clean(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_parse(argc, argv, &cli_clean_cmd, &a);

    if (rc == 0) {
        struct mgr_probe_opts po = {.tls_ca = a.tls_ca,
                                    .tls_cert = a.tls_cert,
                                    .tls_key = a.tls_key,
                                    .insecure = a.insecure,
                                    .wait_ms = a.wait_ms};
        rc = mgr_clean_agents(a.agents, a.nagents, &po, stdout);
    }
    cli_args_free(&a);
    return rc < 0 ? 0 : rc;
}

/* Result file names: "{date}" (the run's start, UTC, "20261201T201530Z")
 * and "{run}" (the run's id in the history, or with no history the first
 * number that makes every name new) give each run its own files. */
#define CLI_PH_DATE "{date}"
#define CLI_PH_RUN "{run}"

/* Refuses a '{' that starts neither placeholder: a typo is not a file name. */
static int cli_check_placeholders(const struct cli_args *a)
{
    for (size_t i = 0; i < a->nsinks; i++)
        for (const char *p = strchr(a->sink_path[i], '{'); p; p = strchr(p + 1, '{'))
            if (strncmp(p, CLI_PH_DATE, strlen(CLI_PH_DATE)) &&
                strncmp(p, CLI_PH_RUN, strlen(CLI_PH_RUN))) {
                IOF_USER("iofleet run: %s %s: unknown placeholder at '%.16s' (the names may hold "
                         "{date} and {run})",
                         a->sink_opt[i], a->sink_path[i], p);
                return 2;
            }
    return 0;
}

/* path with every placeholder replaced into out (IOF_PATH_MAX); -ENAMETOOLONG. */
static int cli_expand_one(const char *path, const char *date, const char *run, char *out)
{
    size_t o = 0;

    for (const char *p = path; *p;) {
        const char *put = NULL;
        size_t skip = 1, n;
        if (!strncmp(p, CLI_PH_DATE, strlen(CLI_PH_DATE))) {
            put = date;
            skip = strlen(CLI_PH_DATE);
        } else if (!strncmp(p, CLI_PH_RUN, strlen(CLI_PH_RUN))) {
            put = run;
            skip = strlen(CLI_PH_RUN);
        }
        n = put ? strlen(put) : 1;
        if (o + n >= IOF_PATH_MAX)
            return -ENAMETOOLONG;
        memcpy(out + o, put ? put : p, n);
        o += n;
        p += skip;
    }
    out[o] = '\0';
    return 0;
}

/* Fills a->sink_name: {date} from now, {run} from the history's id (reserved
 * in db, when there is one) or the first counter that names no existing
 * file. The names used are said on stderr unless quiet. 0 or 2. */
static int cli_expand_names(struct cli_args *a, struct mgr_sink *db)
{
    char date[32], run[32] = "";
    bool has_run = false, has_any = false;
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%Y%m%dT%H%M%SZ", &tm);
    for (size_t i = 0; i < a->nsinks; i++) {
        has_run = has_run || strstr(a->sink_path[i], CLI_PH_RUN);
        has_any = has_any || strchr(a->sink_path[i], '{');
    }
    if (has_run && db) {
        struct iof_diag d = {{0}};
        int64_t id = mgr_db_sink_reserve(db, &d);
        if (id > 0)
            snprintf(run, sizeof(run), "%" PRId64, id);
        else
            IOF_WARN("run history: %s: {run} counts files instead", d.msg);
    }
    for (unsigned long n = 1; has_run && !run[0] && n <= 1000000; n++) {
        bool taken = false;
        char num[32], name[IOF_PATH_MAX];
        struct stat st;
        snprintf(num, sizeof(num), "%lu", n);
        for (size_t i = 0; i < a->nsinks && !taken; i++)
            taken = strstr(a->sink_path[i], CLI_PH_RUN) &&
                    cli_expand_one(a->sink_path[i], date, num, name) == 0 && lstat(name, &st) == 0;
        if (!taken)
            snprintf(run, sizeof(run), "%s", num);
    }
    for (size_t i = 0; i < a->nsinks; i++) {
        if (cli_expand_one(a->sink_path[i], date, run, a->sink_name[i])) {
            IOF_USER("iofleet run: %s %s: the name is too long once expanded", a->sink_opt[i],
                     a->sink_path[i]);
            return 2;
        }
        if (strcmp(a->sink_name[i], a->sink_path[i]) && !a->quiet)
            IOF_USER("iofleet: %s %s", a->sink_opt[i], a->sink_name[i]);
        a->sink_path[i] = a->sink_name[i];
    }
    (void)has_any;
    return 0;
}

/* IOF_OUTFILE_* for the result file of option opt. */
static unsigned cli_sink_flags(const struct cli_args *a, const char *opt)
{
    if (!strcmp(opt, "--iometer-csv-append"))
        return IOF_OUTFILE_APPEND; /* never replaced: added to */
    return (a->force ? IOF_OUTFILE_FORCE : 0) | (!strcmp(opt, "--json") ? IOF_OUTFILE_SEEKABLE : 0);
}

/* Refuses result files whose name is taken (a file, or a symbolic link,
 * dangling or not, judged without following it) unless --force: a rerun
 * does not silently replace last night's results, and a link planted by
 * someone else is never written through. Checked before the plan is loaded
 * and before any file is created, so nothing has run or been written when
 * it refuses. FIFOs, character devices and /dev/stdout are written as they
 * are. */
static int cli_results_exist(const struct cli_args *a)
{
    for (size_t i = 0; i < a->nsinks; i++) {
        struct iof_diag d = {{0}};
        if (iof_outfile_check(a->sink_path[i], cli_sink_flags(a, a->sink_opt[i]), &d)) {
            IOF_USER("iofleet run: %s %s", a->sink_opt[i], d.msg);
            return 2;
        }
    }
    return 0;
}

/* The dynamo binary installed next to this iofleet. */
static void cli_dynamo_path(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    char *slash;
    if (n <= 0) {
        snprintf(buf, cap, "dynamo");
        return;
    }
    buf[n] = '\0';
    slash = strrchr(buf, '/');
    snprintf(slash + 1, cap - (size_t)(slash + 1 - buf), "dynamo");
}

static int cli_run(int argc, char **argv)
{
    struct cli_args a;
    struct iof_plan p;
    struct mgr_run_opts o = {0};
    /* result files, + the run history and the live view */
    struct mgr_sink *sinks[CLI_MAX_SINKS + 2], *db_sink = NULL;
    size_t nsinks = 0;
    char dynamo[PATH_MAX];
    char *text = NULL;
    int rc = cli_parse(argc, argv, &cli_run_cmd, &a);

    if (rc < 0) {
        cli_args_free(&a);
        return 0; /* --help */
    }
    if (rc == 0 && !a.print_plan)
        rc = cli_check_placeholders(&a);
    if (rc == 0)
        rc = cli_load(&a, &p, &text);
    if (rc) {
        cli_args_free(&a);
        return rc < 0 ? 0 : rc; /* < 0: --print-plan */
    }
    if (!a.no_db) {
        char dbpath[IOF_PATH_MAX];
        struct iof_diag d = {{0}};
        if (a.db)
            snprintf(dbpath, sizeof(dbpath), "%s", a.db);
        /* An explicit --db must work, like a result file; the default
         * history is a convenience a read-only home must not block. */
        if ((!a.db && mgr_store_default_path(dbpath, sizeof(dbpath), &d)) ||
            mgr_db_sink_open(dbpath, a.tag, &db_sink, &d)) {
            db_sink = NULL;
            if (a.db || a.tag) {
                IOF_USER("iofleet: run history: %s (--no-db runs without it)", d.msg);
                rc = 2;
            } else {
                IOF_WARN("run history: %s: this run is not recorded (--db PATH records it "
                         "elsewhere, --no-db says so)",
                         d.msg);
            }
        }
    }
    /* Names with {date} or {run} become this run's; then no result file
     * may exist (unless --force) before anything is created. */
    if (rc == 0)
        rc = cli_expand_names(&a, db_sink);
    if (rc == 0)
        rc = cli_results_exist(&a);
    /* The live view binds first: a port in use fails before any result
     * file is created. */
    if (a.http && rc == 0) {
        struct iof_diag d = {{0}};
        if (mgr_http_open(a.http, a.http_linger, &sinks[nsinks], &d)) {
            IOF_USER("iofleet run: --http %s", d.msg);
            rc = 2;
        } else {
            nsinks++;
        }
    }
    /* Result files are created before anything runs: a path that cannot be
     * written fails now, not after an hour of measurement. */
    for (size_t i = 0; rc == 0 && i < a.nsinks; i++) {
        const struct mgr_sink_ops *ops = mgr_sink_for_option(a.sink_opt[i]);
        struct iof_diag d = {{0}};
        if (!ops) {
            IOF_USER("iofleet: %s is not available in this build", a.sink_opt[i]);
            rc = 2;
            break;
        }
        if (mgr_sink_open(ops, a.sink_path[i], cli_sink_flags(&a, a.sink_opt[i]), &sinks[nsinks],
                          &d)) {
            IOF_USER("iofleet: %s %s", a.sink_opt[i], d.msg);
            rc = 2;
            break;
        }
        nsinks++;
    }
    if (db_sink) /* last: as before, the history records what the files do */
        sinks[nsinks++] = db_sink;
    if (rc) { /* refused before it began: no result file is left */
        for (size_t i = 0; i < nsinks; i++)
            mgr_sink_abort(sinks[i]);
        free(text);
        iof_plan_free(&p);
        cli_args_free(&a);
        return rc;
    }
    if (db_sink && a.verbose)
        mgr_db_sink_verbose(db_sink);
    cli_dynamo_path(dynamo, sizeof(dynamo));
    o.agents = a.agents;
    o.nagents = a.nagents;
    o.listen = a.listen;
    o.expect = a.expect;
    o.min_agents = a.min_agents;
    o.workdir = a.workdir;
    o.dynamo = dynamo;
    o.allow_destructive = a.allow_destructive;
    o.quiet = a.quiet;
    o.rows = a.rows;
    o.verbose = a.verbose;
    o.insecure = a.insecure;
    o.tls_ca = a.tls_ca;
    o.tls_cert = a.tls_cert;
    o.tls_key = a.tls_key;
    o.wait_ms = a.wait_ms;
    o.heartbeat_ms = a.heartbeat_ms;
    o.sinks = sinks;
    o.nsinks = nsinks;
    rc = mgr_run_plan(&p, text, &o);
    if (db_sink && mgr_db_sink_run_id(db_sink) && !a.quiet)
        IOF_USER("iofleet: recorded as run %" PRId64 " in %s", mgr_db_sink_run_id(db_sink),
                 db_sink->path);
    /* Last opened first: the live view (sinks[0]) lingers, if asked, after
     * every file is complete. */
    for (size_t i = nsinks; i-- > 0;)
        if (mgr_sink_close(sinks[i]) && rc == 0)
            rc = 1; /* results that could not be written are not a clean run */
    free(text);
    iof_plan_free(&p);
    cli_args_free(&a);
    return rc;
}

/* `iofleet pki init DIR ...`: argv[1] is "pki". */
static int cli_pki(int argc, char **argv)
{
    static const char *const sub[] = {"init"};
    struct mgr_pki_opts o = {0};
    struct iof_diag diag = {{0}};
    struct iof_opt_parser p;
    const char **agents = NULL;
    const char *val, *best;
    int id, rc = 0;

    if (argc < 3) {
        IOF_USER("iofleet pki: needs a command: init");
        fprintf(stderr, "usage: %s %s\ntry 'iofleet pki init --help' for more information\n",
                cli_pki_cmd.prog, cli_pki_cmd.synopsis);
        return 2;
    }
    if (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h") || !strcmp(argv[2], "help")) {
        iof_opt_help(&cli_pki_cmd, stdout);
        return 0;
    }
    if (strcmp(argv[2], "init")) {
        best = iof_opt_suggest(argv[2], sub, 1);
        IOF_USER("iofleet pki: unknown command '%s'%s%s%s", argv[2], best ? "; did you mean '" : "",
                 best ? best : "", best ? "'?" : "");
        fprintf(stderr, "usage: %s %s\ntry 'iofleet pki init --help' for more information\n",
                cli_pki_cmd.prog, cli_pki_cmd.synopsis);
        return 2;
    }
    if (!(agents = calloc((size_t)argc, sizeof(*agents))) ||
        iof_opt_init(&p, &cli_pki_cmd, argc - 2, argv + 2)) {
        free(agents);
        IOF_USER("iofleet pki: %s", strerror(ENOMEM));
        return 1;
    }
    o.agents = agents;
    while (rc == 0 && (id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        unsigned long num;
        switch (id) {
        case IOF_OPT_ERROR:
            rc = 2;
            break;
        case IOF_OPT_HELP:
            rc = -1;
            break;
        case IOF_OPT_POSITIONAL:
            if (o.dir)
                rc = iof_opt_usage_error(&cli_pki_cmd, "one directory only, got '%s' and '%s'",
                                         o.dir, val);
            o.dir = val;
            break;
        case OPT_AGENT:
            agents[o.nagents++] = val;
            break;
        case OPT_MANAGER_NAME:
            o.manager_name = val;
            break;
        case OPT_DAYS:
            rc = cli_number(&cli_pki_cmd, "--days", val, 1, MGR_PKI_MAX_DAYS, &num);
            o.days = (unsigned)num;
            break;
        case OPT_FORCE:
            o.force = true;
            break;
        default:
            rc = iof_opt_usage_error(&cli_pki_cmd, "option not handled");
            break;
        }
    }
    iof_opt_free(&p);
    if (rc == 0 && !o.dir)
        rc = iof_opt_usage_error(&cli_pki_cmd, "needs a directory");
    if (rc) {
        free(agents);
        return rc < 0 ? 0 : rc;
    }
    rc = mgr_pki_init(&o, stdout, &diag);
    free(agents);
    fflush(stdout);
    if (!rc)
        return 0;
    IOF_USER("iofleet pki: %s", diag.msg[0] ? diag.msg : iof_strerror(rc));
    return rc == IOF_EUSAGE ? 2 : 1;
}

/* The command named `name`'s help on f; false when there is no such command. */
static bool cli_command_help(const char *name, FILE *f)
{
    if (!strcmp(name, "run"))
        iof_opt_help(&cli_run_cmd, f);
    else if (!strcmp(name, "validate"))
        iof_opt_help(&cli_validate_cmd, f);
    else if (!strcmp(name, "pki"))
        iof_opt_help(&cli_pki_cmd, f);
    else if (!strcmp(name, "agents"))
        iof_opt_help(&cli_agents_cmd, f);
    else if (!strcmp(name, "clean"))
        iof_opt_help(&cli_clean_cmd, f);
    else if (!strcmp(name, "runs") || !strcmp(name, "report"))
        mgr_cli_history_help(name, f);
    else if (!strcmp(name, "import"))
        mgr_cli_import_help(f);
    else if (!strcmp(name, "export"))
        mgr_cli_export_help(f);
    else if (!strcmp(name, "serve"))
        mgr_cli_serve_help(f);
    else if (!strcmp(name, "help"))
        cli_overview(f);
    else
        return false;
    return true;
}

static int cli_unknown_command(const char *what, const char *name)
{
    const char *best =
        iof_opt_suggest(name, cli_commands, sizeof(cli_commands) / sizeof(cli_commands[0]));

    if (best)
        IOF_USER("iofleet: unknown %s '%s'; did you mean '%s'?", what, name, best);
    else
        IOF_USER("iofleet: unknown %s '%s'", what, name);
    fprintf(stderr,
            "usage: iofleet %s (commands: run, validate, agents, clean, runs, report, import, "
            "serve, pki init, help)\n"
            "try 'iofleet --help' for more information\n",
            cli_synopsis);
    return 2;
}

int mgr_cli_main(int argc, char **argv)
{
    iof_log_init("iofleet", IOF_LOG_INFO);
    if (argc < 2) {
        fprintf(stderr,
                "usage: iofleet %s (commands: run, validate, agents, clean, runs, report, import, "
                "serve, pki init, help)\n"
                "try 'iofleet --help' for more information\n",
                cli_synopsis);
        return 2;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("iofleet %s (protocol %s)\n", IOF_VERSION, proto_version_string());
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        cli_overview(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "help")) {
        if (argc < 3 || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
            cli_overview(stdout);
            return 0;
        }
        return cli_command_help(argv[2], stdout) ? 0 : cli_unknown_command("command", argv[2]);
    }
    if (!strcmp(argv[1], "run"))
        return cli_run(argc, argv);
    if (!strcmp(argv[1], "validate"))
        return cli_validate(argc, argv);
    if (!strcmp(argv[1], "pki"))
        return cli_pki(argc, argv);
    if (!strcmp(argv[1], "agents"))
        return cli_agents(argc, argv);
    if (!strcmp(argv[1], "clean"))
        return cli_clean(argc, argv);
    if (!strcmp(argv[1], "runs"))
        return mgr_cli_runs(argc - 1, argv + 1);
    if (!strcmp(argv[1], "report"))
        return mgr_cli_report(argc - 1, argv + 1);
    if (!strcmp(argv[1], "import"))
        return mgr_cli_import(argc - 1, argv + 1);
    if (!strcmp(argv[1], "export"))
        return mgr_cli_export(argc - 1, argv + 1);
    if (!strcmp(argv[1], "serve"))
        return mgr_cli_serve(argc - 1, argv + 1);
    if (argv[1][0] == '-' && argv[1][1]) {
        static const char *const top[] = {"--help", "--version"};
        const char *best = iof_opt_suggest(argv[1], top, 2);
        IOF_USER("iofleet: unknown option '%s'%s%s%s", argv[1], best ? "; did you mean '" : "",
                 best ? best : "", best ? "'?" : "");
        fprintf(stderr,
                "usage: iofleet %s (commands: run, validate, agents, clean, runs, report, import, "
                "serve, pki init, help)\n"
                "try 'iofleet --help' for more information\n",
                cli_synopsis);
        return 2;
    }
    return cli_unknown_command("command", argv[1]);
}
