#include "manager/cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "manager/local.h"
#include "proto/plan.h"
#include "proto/version.h"

#define CLI_MAX_SET 256

static void cli_usage(FILE *f)
{
    fputs("usage: iofleet run PLAN.json [--set KEY=VALUE]... [--workdir DIR] [--quiet]\n"
          "       iofleet validate PLAN.json [--set KEY=VALUE]...\n"
          "       iofleet --version\n"
          "\n"
          "  run       run every test of the plan and print a result table per test\n"
          "  validate  print the expanded list of tests, or every error of the plan\n"
          "  --set     override a plan value before validation, e.g. --set run.duration=5s,\n"
          "            --set workers[0].queue_depth=32\n"
          "  --workdir directory for test files (default ./iofleet-work)\n"
          "  --quiet   no live interval lines\n"
          "\n"
          "exit codes: 0 clean, 1 I/O errors or failed tests, 2 usage or plan error,\n"
          "            3 agents unreachable or refused, 130 interrupted\n",
          f);
}

struct cli_args {
    const char *plan;
    const char *sets[CLI_MAX_SET];
    size_t nsets;
    const char *workdir;
    bool quiet;
};

/* Parses the options shared by run and validate; 0 or exit code 2. */
static int cli_parse(int argc, char **argv, bool is_run, struct cli_args *a)
{
    memset(a, 0, sizeof(*a));
    a->workdir = "iofleet-work";
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = NULL;
        bool takes = !strcmp(arg, "--set") || (is_run && !strcmp(arg, "--workdir"));
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
        } else if (is_run && !strcmp(arg, "--workdir")) {
            a->workdir = val;
        } else if (is_run && !strcmp(arg, "--quiet")) {
            a->quiet = true;
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
    return 0;
}

static int cli_load(const struct cli_args *a, struct iof_plan *p)
{
    struct iof_diag d = {{0}};
    if (proto_plan_load(a->plan, a->sets, a->nsets, p, &d)) {
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

    if (rc)
        return rc;
    rc = cli_load(&a, &p);
    if (rc)
        return rc;
    proto_plan_print(&p, stdout);
    iof_plan_free(&p);
    return fflush(stdout) ? 1 : 0;
}

static int cli_run(int argc, char **argv)
{
    struct cli_args a;
    struct iof_plan p;
    struct mgr_local_opts o;
    int rc = cli_parse(argc, argv, true, &a);

    if (rc)
        return rc;
    rc = cli_load(&a, &p);
    if (rc)
        return rc;
    o.workdir = a.workdir;
    o.quiet = a.quiet;
    rc = mgr_local_run(&p, &o);
    iof_plan_free(&p);
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
    fprintf(stderr, "iofleet: unknown command '%s'\n", argv[1]);
    cli_usage(stderr);
    return 2;
}
