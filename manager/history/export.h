/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/export.h - a stored run's result files written again
 * (`iofleet runs export`, serve's /api/v1/runs/ID/results.*): the run's
 * events read back from the history and fed to the same sinks `iofleet run`
 * writes them with (manager/sink.h), so the files are the run's.
 */
#ifndef IOF_MANAGER_HISTORY_EXPORT_H
#define IOF_MANAGER_HISTORY_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "manager/history/store.h"
#include "manager/sink.h"

/* Whether run id can be exported: 0, -ENOENT when there is no such run, or
 * -EBUSY when it has no exit code (still being written, or its manager was
 * killed), each with diag saying so. */
int mgr_export_check(struct mgr_store *st, int64_t id, struct iof_diag *diag);

/* Feeds run id's stored events to the n open sinks (mgr_sink_open) and
 * closes them, which puts each file in place; takes the sinks. 0, or an
 * error with diag: a run mgr_export_check refuses or a database error
 * (every sink aborted: no file is left), or a file that could not be
 * written. A run recorded before schema 3 has no figures beyond
 * MGR_STORE_METRICS: *old is set then (old may be NULL) and those fields
 * are written empty or 0. */
int mgr_export_write(struct mgr_store *st, int64_t id, struct mgr_sink *const *sinks, size_t n,
                     bool *old, struct iof_diag *diag);

/* The file `iofleet run OPTION F` writes ("--csv", "--iometer-csv",
 * "--timeseries", "--json") of run id, as mgr_export_write writes it, in a
 * file of its own that no name points to: *fd (new, read from 0) and its
 * *size. Written in a new directory under $TMPDIR (else /tmp), removed
 * before this returns. 0, or mgr_export_write's errors. */
int mgr_export_fd(struct mgr_store *st, int64_t id, const char *option, int *fd, uint64_t *size,
                  struct iof_diag *diag);

#endif
