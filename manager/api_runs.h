/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_runs.h - the run history's endpoints of `iofleet serve`'s API
 * (docs/api.md), rendered from the database at db into a buffer: any
 * thread, each call with its own connection. */
#ifndef IOF_MANAGER_API_RUNS_H
#define IOF_MANAGER_API_RUNS_H

#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

/* GET /api/v1/runs: {"runs": [the array `iofleet runs --json` prints]}.
 * 0, or an error with diag (the database cannot be read). */
int mgr_api_runs_list(const char *db, struct iof_buf *b, struct iof_diag *diag);

/* GET /api/v1/runs/ID: the run's summary, and per test its final rows
 * (the figures `iofleet report` shows). -ENOENT with diag when there is no
 * such run. */
int mgr_api_runs_get(const char *db, int64_t id, struct iof_buf *b, struct iof_diag *diag);

#endif
