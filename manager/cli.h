/* SPDX-License-Identifier: Apache-2.0 */
/* manager/cli.h - the `iofleet` command line: subcommand dispatch. */
#ifndef IOF_MANAGER_CLI_H
#define IOF_MANAGER_CLI_H

#include <stdio.h>

/* Runs `iofleet ARGS...`; returns the process exit code (see product brief:
 * 0 clean, 1 I/O errors or lost agents, 2 usage/plan error, 3 agents refused,
 * 130 interrupted). */
int mgr_cli_main(int argc, char **argv);

/* `iofleet runs ...` and `iofleet report ...` (manager/history/commands.c);
 * argv[0] is the command word. */
int mgr_cli_runs(int argc, char **argv);
int mgr_cli_report(int argc, char **argv);
/* The help of "runs" or "report" on f. */
void mgr_cli_history_help(const char *name, FILE *f);

/* `iofleet import ...` (manager/cli_import.c); argv[0] is "import". */
int mgr_cli_import(int argc, char **argv);
void mgr_cli_import_help(FILE *f);
/* `iofleet export ...` (manager/cli_import.c); argv[0] is "export". */
int mgr_cli_export(int argc, char **argv);
void mgr_cli_export_help(FILE *f);

/* `iofleet serve ...` (manager/cli_serve.c); argv[0] is "serve". */
int mgr_cli_serve(int argc, char **argv);
void mgr_cli_serve_help(FILE *f);

struct iof_cmd;
/* A run's tag (`iofleet run --tag`, `iofleet runs import --tag`) checked
 * against common/text.h's policy: 0, or 2 after a usage error of cmd naming
 * the character ("--tag must not contain control characters, got \x1b (a
 * control character) at byte 3"). */
int mgr_cli_tag_check(const struct iof_cmd *cmd, const char *tag);

#endif
