/* manager/local.h - runs a plan on this machine in-process: the engine of
 * dynamo/run.h driven directly, without an agent. */
#ifndef IOF_MANAGER_LOCAL_H
#define IOF_MANAGER_LOCAL_H

#include <stdbool.h>

#include "common/spec.h"

struct mgr_local_opts {
    const char *workdir; /* test files; created if missing */
    bool quiet;          /* no live lines */
};

/* Runs every test of plan p; prints live lines on stderr and one table per
 * finished test on stdout. Returns the process exit code: 0 clean, 1 I/O
 * errors or a test that could not run, 130 interrupted by SIGINT/SIGTERM
 * (the interrupted test's partial results are still printed). */
int mgr_local_run(const struct iof_plan *p, const struct mgr_local_opts *o);

#endif
