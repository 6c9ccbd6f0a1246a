#include "manager/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "manager/cluster.h"
#include "manager/pki.h"
#include "manager/probe.h"
#include "manager/results.h"
#include "proto/plan.h"
#include "proto/version.h"

#define CLI_MAX_SET 256
#define CLI_MAX_AGENTS 100000
#define CLI_MAX_SINKS 8

static void cli_usage(FILE *f)
{
    fputs("usage: iofleet run PLAN.json [--agent unix:PATH|HOST[:PORT]]... [--agents-file F]\n"
          "                 [--listen [ADDR][:PORT] --expect N] [--set KEY=VALUE]...\n"
          "                 [--csv F] [--iometer-csv F] [--timeseries F] [--json F]\n"
          "                 [--tls-ca F --tls-cert F --tls-key F] [--insecure]\n"
          "                 [--workdir DIR] [--wait SECONDS] [--quiet] [--verbose]\n"
          "       iofleet validate PLAN.json [--set KEY=VALUE]... [--agent HOST[:PORT]]...\n"
          "                 [--tls-ca F --tls-cert F --tls-key F] [--insecure] [--wait SECONDS]\n"
          "       iofleet pki init DIR [--agent NAME]... [--manager-name NAME] [--days N]\n"
          "                            [--force]\n"
          "       iofleet --version\n"
          "\n"
          "  run          run every test of the plan and print a result table per test;\n"
          "               without --agent or --listen, a local agent is started, connected\n"
          "               by a socketpair (no port)\n"
          "  validate     print the expanded list of tests, or the plan's error; with\n"
          "               --agent, also each agent's budget beside what the plan needs there\n"
          "               (exit 1 when an agent would refuse it)\n"
          "  pki init     make a CA, the manager's and each agent's TLS certificate and key\n"
          "               (iofleet pki --help)\n"
          "  --agent      dial a dynamo started with --listen: unix:PATH (its unix socket;\n"
          "               no certificates: root or the agent's user only), or HOST[:PORT]\n"
          "               (TCP, default port 7066; TLS or --insecure)\n"
          "  --agents-file  one unix:PATH or HOST[:PORT] per line ('#' comments)\n"
          "  --listen     accept dynamo agents started with --manager; wait for --expect N\n"
          "  --set        override a plan value before validation, e.g. --set run.duration=5s,\n"
          "               --set workers[0].queue_depth=32\n"
          "  --workdir    test-file directory of the local agent (default ./iofleet-work)\n"
          "  --csv        results as CSV: one row per test and ALL/NODE/WORKER/TARGET\n"
          "  --iometer-csv  results in Iometer 1.1.0's results.csv layout\n"
          "  --timeseries one CSV row per interval per node, plus ALL\n"
          "  --json       everything: plan, agents, intervals, results, histograms\n"
          "  --wait       seconds to wait for agents to connect (default 15)\n"
          "  --tls-ca, --tls-cert, --tls-key\n"
          "               TLS 1.3 with mutual authentication to the agents (files from\n"
          "               iofleet pki init); each agent's name must be its certificate's\n"
          "  --insecure   allow plain TCP without authentication (loopback included: any\n"
          "               local user could pose as an agent); the agents need it too\n"
          "  --quiet      no live interval lines\n"
          "  --verbose    log when each interval is merged and how long after the last report\n"
          "\n"
          "exit codes: 0 clean, 1 I/O errors, failed or lost agents, 2 usage or plan error,\n"
          "            3 agents unreachable or refused, 130 interrupted\n",
          f);
}

struct cli_args {
    const char *plan;
    const char *sets[CLI_MAX_SET];
    size_t nsets;
    const char *workdir;
    bool quiet;
    bool verbose;
    const char **agents; /* owned array of borrowed or owned strings */
    size_t nagents, capagents;
    char **owned; /* agent strings read from --agents-file */
    size_t nowned;
    const char *listen;
    unsigned expect;
    bool insecure;
    const char *tls_ca, *tls_cert, *tls_key;
    uint64_t wait_ms;
    uint32_t heartbeat_ms;
    const char *sink_opt[CLI_MAX_SINKS]; /* "--csv" ... */
    const char *sink_path[CLI_MAX_SINKS];
    size_t nsinks;
};

static void cli_args_free(struct cli_args *a)
{
    for (size_t i = 0; i < a->nowned; i++)
        free(a->owned[i]);
    free(a->owned);
    free(a->agents);
}

static int cli_add_agent(struct cli_args *a, const char *ep, bool own)
{
    if (a->nagents == CLI_MAX_AGENTS) {
        fprintf(stderr, "iofleet: too many agents (max %d)\n", CLI_MAX_AGENTS);
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
        fprintf(stderr, "iofleet: --agents-file %s: %s\n", path, strerror(errno));
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
            fprintf(stderr, "iofleet: %s:%u: one HOST[:PORT] per line, got '%s'\n", path, n, s);
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

static int cli_number(const char *opt, const char *val, unsigned long min, unsigned long max,
                      unsigned long *out)
{
    char *end;
    errno = 0;
    *out = strtoul(val, &end, 10);
    if (!*val || *end || errno || *out < min || *out > max) {
        fprintf(stderr, "iofleet: %s must be a number %lu..%lu, got '%s'\n", opt, min, max, val);
        return 2;
    }
    return 0;
}

/* Options validate takes (run takes them all). */
static bool cli_validate_opt(const char *arg)
{
    static const char *const ok[] = {"--set",     "--agent",    "--tls-ca", "--tls-cert",
                                     "--tls-key", "--insecure", "--wait"};
    for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++)
        if (!strcmp(arg, ok[k]))
            return true;
    return false;
}

/* Parses the options shared by run and validate; 0 or exit code 2. */
static int cli_parse(int argc, char **argv, bool is_run, struct cli_args *a)
{
    static const char *const valued[] = {
        "--set",  "--workdir",      "--agent",    "--agents-file", "--expect",
        "--wait", "--heartbeat-ms", "--csv",      "--iometer-csv", "--timeseries",
        "--json", "--tls-ca",       "--tls-cert", "--tls-key"};
    memset(a, 0, sizeof(*a));
    a->workdir = "iofleet-work";
    a->wait_ms = 15000;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = NULL;
        unsigned long num;
        bool takes = false;
        for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
            takes |= !strcmp(arg, valued[k]) && (is_run || cli_validate_opt(arg));
        if (takes) {
            if (i + 1 >= argc) {
                fprintf(stderr, "iofleet: %s needs a value\n", arg);
                return 2;
            }
            val = argv[++i];
        }
        if (!strcmp(arg, "--set")) {
            if (a->nsets == CLI_MAX_SET) {
                fprintf(stderr, "iofleet: too many --set options (max %d)\n", CLI_MAX_SET);
                return 2;
            }
            a->sets[a->nsets++] = val;
        } else if (!strncmp(arg, "--set=", 6) && a->nsets < CLI_MAX_SET) {
            a->sets[a->nsets++] = arg + 6;
        } else if (!is_run && arg[0] == '-' && arg[1] && !cli_validate_opt(arg)) {
            fprintf(stderr, "iofleet: unknown option '%s'\n", arg);
            return 2;
        } else if (!strcmp(arg, "--workdir")) {
            a->workdir = val;
        } else if (!strcmp(arg, "--agent")) {
            if (cli_add_agent(a, val, false))
                return 2;
        } else if (!strcmp(arg, "--agents-file")) {
            if (cli_agents_file(a, val))
                return 2;
        } else if (!strcmp(arg, "--listen")) {
            /* The address is optional: "--listen" alone means all addresses, port 7066. */
            a->listen = i + 1 < argc && argv[i + 1][0] != '-' && !strstr(argv[i + 1], ".json")
                            ? argv[++i]
                            : "";
        } else if (!strcmp(arg, "--expect")) {
            if (cli_number(arg, val, 1, CLI_MAX_AGENTS, &num))
                return 2;
            a->expect = (unsigned)num;
        } else if (!strcmp(arg, "--wait")) {
            if (cli_number(arg, val, 1, 86400, &num))
                return 2;
            a->wait_ms = num * 1000;
        } else if (!strcmp(arg, "--heartbeat-ms")) {
            if (cli_number(arg, val, 100, 60000, &num))
                return 2;
            a->heartbeat_ms = (uint32_t)num;
        } else if (!strcmp(arg, "--csv") || !strcmp(arg, "--iometer-csv") ||
                   !strcmp(arg, "--timeseries") || !strcmp(arg, "--json")) {
            for (size_t k = 0; k < a->nsinks; k++)
                if (!strcmp(a->sink_opt[k], arg)) {
                    fprintf(stderr, "iofleet: %s given twice\n", arg);
                    return 2;
                }
            a->sink_opt[a->nsinks] = arg;
            a->sink_path[a->nsinks++] = val;
        } else if (!strcmp(arg, "--tls-ca")) {
            a->tls_ca = val;
        } else if (!strcmp(arg, "--tls-cert")) {
            a->tls_cert = val;
        } else if (!strcmp(arg, "--tls-key")) {
            a->tls_key = val;
        } else if (!strcmp(arg, "--insecure")) {
            a->insecure = true;
        } else if (!strcmp(arg, "--quiet")) {
            a->quiet = true;
        } else if (!strcmp(arg, "--verbose")) {
            a->verbose = true;
        } else if (arg[0] == '-' && arg[1]) {
            fprintf(stderr, "iofleet: unknown option '%s'\n", arg);
            return 2;
        } else if (!a->plan) {
            a->plan = arg;
        } else {
            fprintf(stderr, "iofleet: unexpected argument '%s'\n", arg);
            return 2;
        }
    }
    if (!a->plan) {
        fprintf(stderr, "iofleet: %s needs a PLAN.json\n", argv[1]);
        return 2;
    }
    if (!!a->tls_ca + !!a->tls_cert + !!a->tls_key != 0 &&
        !!a->tls_ca + !!a->tls_cert + !!a->tls_key != 3) {
        fprintf(stderr, "iofleet: TLS needs all of --tls-ca, --tls-cert and --tls-key\n");
        return 2;
    }
    if (a->listen && !a->expect) {
        fprintf(stderr, "iofleet: --listen needs --expect N (how many agents to wait for)\n");
        return 2;
    }
    if (a->expect && !a->listen) {
        fprintf(stderr, "iofleet: --expect only makes sense with --listen\n");
        return 2;
    }
    return 0;
}

static int cli_load(const struct cli_args *a, struct iof_plan *p, char **text)
{
    struct iof_diag d = {{0}};
    if (proto_plan_load_canonical(a->plan, a->sets, a->nsets, p, text, &d)) {
        fprintf(stderr, "%s\n", d.msg);
        return 2;
    }
    return 0;
}

static int cli_validate(int argc, char **argv)
{
    struct cli_args a;
    struct iof_plan p;
    int rc = cli_parse(argc, argv, false, &a);

    if (rc == 0)
        rc = cli_load(&a, &p, NULL);
    if (rc == 0) {
        proto_plan_print(&p, stdout);
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
    struct mgr_sink *sinks[CLI_MAX_SINKS];
    size_t nsinks = 0;
    char dynamo[PATH_MAX];
    char *text = NULL;
    int rc = cli_parse(argc, argv, true, &a);

    if (rc == 0)
        rc = cli_load(&a, &p, &text);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    /* Result files are created before anything runs: a path that cannot be
     * written fails now, not after an hour of measurement. */
    for (size_t i = 0; i < a.nsinks; i++) {
        const struct mgr_sink_ops *ops = mgr_sink_for_option(a.sink_opt[i]);
        struct iof_diag d = {{0}};
        if (!ops) {
            fprintf(stderr, "iofleet: %s is not available in this build\n", a.sink_opt[i]);
            rc = 2;
            break;
        }
        if (mgr_sink_open(ops, a.sink_path[i], &sinks[nsinks], &d)) {
            fprintf(stderr, "iofleet: %s %s\n", a.sink_opt[i], d.msg);
            rc = 2;
            break;
        }
        nsinks++;
    }
    if (rc) {
        for (size_t i = 0; i < nsinks; i++)
            mgr_sink_close(sinks[i]);
        free(text);
        iof_plan_free(&p);
        cli_args_free(&a);
        return rc;
    }
    cli_dynamo_path(dynamo, sizeof(dynamo));
    o.agents = a.agents;
    o.nagents = a.nagents;
    o.listen = a.listen;
    o.expect = a.expect;
    o.workdir = a.workdir;
    o.dynamo = dynamo;
    o.quiet = a.quiet;
    o.verbose = a.verbose;
    o.insecure = a.insecure;
    o.tls_ca = a.tls_ca;
    o.tls_cert = a.tls_cert;
    o.tls_key = a.tls_key;
    o.wait_ms = a.wait_ms;
    o.heartbeat_ms = a.heartbeat_ms;
    o.sinks = sinks;
    o.nsinks = nsinks;
    rc = mgr_cluster_run(&p, text, &o);
    for (size_t i = 0; i < nsinks; i++)
        if (mgr_sink_close(sinks[i]) && rc == 0)
            rc = 1; /* results that could not be written are not a clean run */
    free(text);
    iof_plan_free(&p);
    cli_args_free(&a);
    return rc;
}

int mgr_cli_main(int argc, char **argv)
{
    iof_log_init("iofleet", IOF_LOG_INFO);
    if (argc < 2) {
        cli_usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("iofleet %s (protocol %s)\n", IOF_VERSION, proto_version_string());
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        cli_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "run"))
        return cli_run(argc, argv);
    if (!strcmp(argv[1], "validate"))
        return cli_validate(argc, argv);
    if (!strcmp(argv[1], "pki"))
        return mgr_pki_main(argc, argv);
    fprintf(stderr, "iofleet: unknown command '%s'\n", argv[1]);
    cli_usage(stderr);
    return 2;
}
