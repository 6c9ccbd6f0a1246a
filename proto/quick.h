/* SPDX-License-Identifier: Apache-2.0 */
/* proto/quick.h - a plan from the command line (`iofleet run --spec 4k
 * --target /dev/nvme0n1 ...`): the quick form writes the same JSON plan a
 * user would, so `--print-plan` shows the file form and the loader checks it
 * like any other plan (docs/workloads.md, "Quick runs").
 */
#ifndef IOF_PROTO_QUICK_H
#define IOF_PROTO_QUICK_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

/* The quick options as given (borrowed strings; NULL or 0 when not given). */
struct proto_quick {
    const char *const *specs; /* "SIZE[,read=PCT][,random=PCT][,align=A]": one test each */
    size_t nspecs;
    const char *const *targets; /* "PATH[:SIZE]" */
    size_t ntargets;
    const char *queue_depth, *workers, *engine, *duration, *ramp;
};

/* The name messages use for a plan built from the command line. */
#define PROTO_QUICK_NAME "the command line"

/* The default test file of a quick plan without --target, and its size. */
#define PROTO_QUICK_TARGET "iofleet-quick.dat"
#define PROTO_QUICK_TARGET_SIZE "1g"
/* run.duration of a quick plan without --duration. */
#define PROTO_QUICK_DURATION "10s"

/* Whether any quick option was given. */
bool proto_quick_given(const struct proto_quick *q);

/* Writes the plan the quick options describe as JSON text (new, free() it;
 * indented, ends with a newline). The values are checked by the plan loader
 * afterwards; this refuses only what cannot be written: no --spec, a --spec
 * that is not SIZE[,KEY=VALUE]... with known keys, a --queue-depth or
 * --workers that is not a number (IOF_EUSAGE, the option named in diag). */
int proto_quick_plan(const struct proto_quick *q, char **json, struct iof_diag *diag);

#endif
