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

/* The query of GET /api/v1/runs/compare: a=ID&b=ID. */
struct mgr_api_runs_cmp {
    int64_t id[2]; /* a, b; 0 until given */
    unsigned seen; /* the parameters given, one bit each */
};

/* Takes one parameter of the compare query (value NULL when it came
 * without '='). 0, or -EINVAL with diag naming the parameter and why:
 * unknown, given twice, without a value or not a run id. */
int mgr_api_runs_cmp_param(struct mgr_api_runs_cmp *c, const char *key, const char *value,
                           struct iof_diag *diag);

/* After the last parameter: -EINVAL with diag naming a missing one. */
int mgr_api_runs_cmp_check(const struct mgr_api_runs_cmp *c, struct iof_diag *diag);

/* GET /api/v1/runs/compare: runs a and b compared, the document `iofleet
 * report A B --format json` writes (mgr_rpt_json), byte for byte.
 * -ENOENT with diag naming the parameter when a run does not exist. */
int mgr_api_runs_compare(const char *db, const struct mgr_api_runs_cmp *c, struct iof_buf *b,
                         struct iof_diag *diag);

/* Report and result downloads being prepared at once; one more is
 * -EAGAIN (503 with Retry-After). */
#define MGR_API_EXPORTS_MAX 2u

/* Takes one of the MGR_API_EXPORTS_MAX places (0), or -EAGAIN with diag
 * when all are taken; leave gives it back. Any thread. */
int mgr_api_runs_export_enter(struct iof_diag *diag);
void mgr_api_runs_export_leave(void);

/* GET /api/v1/runs/ID/report.html: the page `iofleet report ID` writes
 * for the stored run id, byte for byte, into *body (new, *len bytes).
 * -ENOENT with diag when there is no such run, -EIO when Chart.js cannot
 * be read, -EAGAIN when MGR_API_EXPORTS_MAX are being prepared. */
int mgr_api_runs_report(const char *db, int64_t id, char **body, size_t *len,
                        struct iof_diag *diag);

/* A result file of a stored run (GET /api/v1/runs/ID/results.csv ...): the
 * path's tail, the `iofleet run` option that writes it, its type and the
 * tail of its download name (iofleet-run-ID.csv). */
struct mgr_api_result_file {
    const char *tail;   /* "/results.csv" */
    const char *option; /* "--csv" */
    const char *content_type;
    const char *suffix; /* ".csv" */
};

/* The result file whose tail ends rest ("7/results.csv"), with the run's
 * id in *id; NULL when rest names none. */
const struct mgr_api_result_file *mgr_api_runs_result_of(const char *rest, int64_t *id);

/* GET /api/v1/runs/ID/results.csv (and .json, iometer.csv,
 * timeseries.csv): the file `iofleet runs export ID` writes with rf's
 * option, byte for byte, as *fd (new, *size bytes, no name). -ENOENT with
 * diag when there is no such run, -EBUSY when it is still being written,
 * -EAGAIN when MGR_API_EXPORTS_MAX downloads are being prepared. */
int mgr_api_runs_result(const char *db, int64_t id, const struct mgr_api_result_file *rf, int *fd,
                        uint64_t *size, struct iof_diag *diag);

/* The body of POST /api/v1/runs/ID/tag, {"tag": "NAME"} ("" or null
 * removes it): the tag into tag (cap bytes; "" to remove). 0, or -EINVAL
 * with diag naming the member and why (as `iofleet runs tag` refuses it). */
int mgr_api_runs_tag_parse(const char *body, size_t len, char *tag, size_t cap,
                           struct iof_diag *diag);

/* POST /api/v1/runs/ID/tag: sets run id's tag from body, appends {"id": N,
 * "tag": ...} to b. -EINVAL (a bad body), -ENOENT (no such run) or another
 * error, with diag. */
int mgr_api_runs_tag(const char *db, int64_t id, const char *body, size_t len, struct iof_buf *b,
                     struct iof_diag *diag);

/* DELETE /api/v1/runs/ID: removes run id as `iofleet runs rm ID` does
 * (compacting the file), appends {"id", "removed", "compacted",
 * "bytes_before", "bytes_after"} to b. -EBUSY when id is running (the run
 * serve has under way), -ENOENT when there is no such run. */
int mgr_api_runs_delete(const char *db, int64_t id, int64_t running, struct iof_buf *b,
                        struct iof_diag *diag);

/* The body of POST /api/v1/runs/prune: {"older_than": "30d", "keep": N,
 * "tag": "NAME", "dry_run": false, "runs": [ids]}, the options of `iofleet
 * runs prune` with their rules (older_than or keep needed). runs, the ids a
 * dry run listed, bounds what goes to those of them the rules still pick
 * (runs started or recorded since the dry run are never removed). */
struct mgr_api_prune {
    struct mgr_store_sel sel; /* sel.tag points into tag */
    char tag[256];
    bool dry_run;
    int64_t *only; /* runs: malloc'd, ascending; NULL when not given */
    size_t nonly;
};

/* Parses a prune body into p; older_than counts back from now_ns. 0, or
 * -EINVAL with diag naming the member and why, -ENOMEM. Release p with
 * mgr_api_runs_prune_release either way. */
int mgr_api_runs_prune_parse(const char *body, size_t len, int64_t now_ns, struct mgr_api_prune *p,
                             struct iof_diag *diag);
void mgr_api_runs_prune_release(struct mgr_api_prune *p);

/* POST /api/v1/runs/prune: removes (or with dry_run lists) the runs p
 * picks (and p->only holds), except running (the run under way, 0: none),
 * as `iofleet runs prune` does; appends {"dry_run", "runs": [ids], "skipped_running",
 * "removed", "compacted", "bytes_before", "bytes_after"} to b. */
int mgr_api_runs_prune(const char *db, const struct mgr_api_prune *p, int64_t running,
                       struct iof_buf *b, struct iof_diag *diag);

#endif
