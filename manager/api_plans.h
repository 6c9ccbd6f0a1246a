/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_plans.h - the plan endpoints of `iofleet serve`'s API
 * (docs/api.md, Plans) that manager/api.c routes: POST /api/v1/plans/import
 * (a fio, Iometer or vdbench file as a plan, through the driver `iofleet
 * import` uses: manager/import_drive.h) and POST /api/v1/plans/export (a
 * plan as `iofleet export` writes it). Called from HTTP threads; they
 * touch no shared state.
 *
 * Errors: -EINVAL (400: a parameter or the file is refused, diag says why
 * and names the line), IOF_EPLAN (400: the plan loader's message), -ENOMEM.
 */
#ifndef IOF_MANAGER_API_PLANS_H
#define IOF_MANAGER_API_PLANS_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

/* The query of POST /api/v1/plans/import, gathered a parameter at a time. */
struct mgr_api_import;

/* A new query (NULL without memory); free with mgr_api_import_free(). */
struct mgr_api_import *mgr_api_import_new(void);
void mgr_api_import_free(struct mgr_api_import *q);

/* One query parameter (key and value borrowed until mgr_api_import_run):
 * name=FILE (the file's name: messages and the format), format=auto|fio|
 * icf|vdbench, map=NAME=PATH and var=NAME=VALUE (repeatable),
 * sector-size=512|4096 (or sector=), approximate=1|0 (or approx=). Each as
 * `iofleet import`'s option of the same name; 0 or -EINVAL with diag. */
int mgr_api_import_param(struct mgr_api_import *q, const char *key, const char *value,
                         struct iof_diag *diag);

/* Imports body (len bytes, borrowed) with q's options and appends
 * {"name", "format", "plan": "TEXT", "notes": [{"line", "message"}...]} to
 * out: TEXT the bytes `iofleet import` writes, notes what it prints on
 * stderr. 0 or an error as above. */
int mgr_api_import_run(struct mgr_api_import *q, const char *body, size_t len, struct iof_buf *out,
                       struct iof_diag *diag);

/* POST /api/v1/plans/export?format=icf: the plan in body (len bytes,
 * borrowed) checked by the plan loader, then appended to out as the Iometer
 * configuration file `iofleet export` writes. format NULL is icf. 0 or an
 * error as above. */
int mgr_api_plans_export(const char *format, const char *body, size_t len, struct iof_buf *out,
                         struct iof_diag *diag);

#endif
