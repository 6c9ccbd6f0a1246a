/* manager/cli.h - the `iofleet` command line: subcommand dispatch. */
#ifndef IOF_MANAGER_CLI_H
#define IOF_MANAGER_CLI_H

/* Runs `iofleet ARGS...`; returns the process exit code (see product brief:
 * 0 clean, 1 I/O errors or lost agents, 2 usage/plan error, 3 agents refused,
 * 130 interrupted). */
int mgr_cli_main(int argc, char **argv);

#endif
