#include "manager/cli.h"

#include <stdio.h>
#include <string.h>

#include "proto/version.h"

static void cli_usage(FILE *f)
{
    fputs("usage: iofleet run PLAN.json [--set KEY=VALUE]... [--quiet]\n"
          "       iofleet validate PLAN.json [--set KEY=VALUE]...\n"
          "       iofleet --version\n",
          f);
}

int mgr_cli_main(int argc, char **argv)
{
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
    fprintf(stderr, "iofleet: unknown command '%s'\n", argv[1]);
    cli_usage(stderr);
    return 2;
}
