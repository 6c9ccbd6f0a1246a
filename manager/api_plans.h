/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_plans.h - the plan endpoints of `iofleet serve`'s API
 * (docs/api.md, Plans) that manager/api.c routes: POST /api/v1/plans/import
 * (a fio, Iometer or vdbench file as a plan, through the driver `iofleet
 * import` uses: manager/import_drive.h), POST /api/v1/plans/export (a
 * plan as `iofleet export` writes it), and the plan library: the shipped
 * configs (read-only) and the user's plans, NAME.json files of serve's
 * --plans folder. Called from HTTP threads; they share no state but the
 * files (each written whole under a temporary name, then renamed).
 *
 * Errors: -EINVAL (400: a parameter, a name or the file is refused, diag
 * says why and names the line), IOF_EPLAN (400: the plan loader's message),
 * -ENOENT (404), -EPERM (403: a shipped plan), -ELOOP (409: a symbolic link
 * or other non-file at the name), -ENOMEM and other -errno (500).
 */
#ifndef IOF_MANAGER_API_PLANS_H
#define IOF_MANAGER_API_PLANS_H

#include <stdbool.h>
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

/* The library's folders (copied; each may be missing: no plans there). */
struct mgr_api_plans_dirs {
    char user[4096];    /* serve --plans: NAME.json files, mode 0600 */
    char shipped[4096]; /* the installed configs (share/iofleet/configs) */
};

/* A library name: [A-Za-z0-9._-]{1,64}, no leading dot, none of the API's
 * own paths (check, import, export). 0, or -EINVAL with diag saying so. */
int mgr_api_plans_name_check(const char *name, struct iof_diag *diag);

/* GET /api/v1/plans: [{"name", "source", "description", "tests", "modified"}]
 * appended to out, shipped plans then the user's, each by name. */
int mgr_api_plans_list(const struct mgr_api_plans_dirs *d, struct iof_buf *out,
                       struct iof_diag *diag);

/* GET /api/v1/plans/NAME?source=user|shipped (NULL: the user's, else the
 * shipped one): the file's text appended to out. */
int mgr_api_plans_get(const struct mgr_api_plans_dirs *d, const char *name, const char *source,
                      struct iof_buf *out, struct iof_diag *diag);

/* PUT /api/v1/plans/NAME: body (borrowed) checked as plans/check checks a
 * plan, then written as the user's NAME.json (mode 0600); a symbolic link
 * or anything but a file at that name is refused. {"name", "source",
 * "tests", "created"} appended to out; *created true when it is new. */
int mgr_api_plans_put(const struct mgr_api_plans_dirs *d, const char *name, const char *body,
                      size_t len, struct iof_buf *out, bool *created, struct iof_diag *diag);

/* DELETE /api/v1/plans/NAME: the user's plan removed ({"name", "deleted":
 * true} appended to out); a shipped one is -EPERM. */
int mgr_api_plans_delete(const struct mgr_api_plans_dirs *d, const char *name, struct iof_buf *out,
                         struct iof_diag *diag);

#endif
