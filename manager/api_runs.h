/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_runs.h - the run history's endpoints of `iofleet serve`'s API
 * (docs/api.md), rendered from the database at db into a buffer: any
 * thread, each call with its own connection. */
#ifndef IOF_MANAGER_API_RUNS_H
#define IOF_MANAGER_API_RUNS_H

#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "manager/history/store.h"

/* The most runs one GET /api/v1/runs answers with (?limit=). */
#define MGR_API_RUNS_LIMIT_MAX 10000

/* The query of GET /api/v1/runs: tag, q, since, limit, offset. */
struct mgr_api_runs_query {
    struct mgr_store_filter f; /* points into tag and text */
    char tag[256], text[256];
    unsigned seen; /* the parameters given, one bit each */
};

/* An empty query: every run. */
void mgr_api_runs_query_init(struct mgr_api_runs_query *q);

/* Takes one parameter of the query string, key=value (value NULL when it
 * came without '='); since is relative to now_ns. 0, or -EINVAL with diag
 * naming the parameter and why: unknown, given twice, or a value the
 * matching `iofleet runs` option would refuse. */
int mgr_api_runs_param(struct mgr_api_runs_query *q, const char *key, const char *value,
                       int64_t now_ns, struct iof_diag *diag);

/* GET /api/v1/runs: {"runs": [the array `iofleet runs --json` prints, of
 * the runs q picks], "total": N, "offset": M, "limit": L or null}, total
 * counting every run q picks, limit and offset aside. 0, or an error with
 * diag (the database cannot be read). */
int mgr_api_runs_list(const char *db, const struct mgr_api_runs_query *q, struct iof_buf *b,
                      struct iof_diag *diag);

/* GET /api/v1/runs/ID: the run's summary, and per test its final rows
 * (the figures `iofleet report` shows). -ENOENT with diag when there is no
 * such run. */
int mgr_api_runs_get(const char *db, int64_t id, struct iof_buf *b, struct iof_diag *diag);

#endif
