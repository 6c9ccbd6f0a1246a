/* SPDX-License-Identifier: Apache-2.0 */
/* manager/import_drive.h - the import driver `iofleet import` (manager/
 * cli_import.c) and serve's POST /api/v1/plans/import (manager/api_plans.c)
 * share: the options' rules, the format told from the name or the text, the
 * importer of that format (proto/import.h) and the plan loader's check of
 * what it wrote. Both give the same plan for the same file and options.
 */
#ifndef IOF_MANAGER_IMPORT_DRIVE_H
#define IOF_MANAGER_IMPORT_DRIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

#define MGR_IMPORT_MAX_MAPS 256
#define MGR_IMPORT_MAX_VARS 256

/* The import's options: the CLI's --format, --map, --var, --sector-size and
 * --approximate (the API's query parameters of the same names). Every string
 * is borrowed. */
struct mgr_import_opts {
    const char *format; /* "fio", "icf", "vdbench", or NULL: told from the name or text */
    const char *maps[MGR_IMPORT_MAX_MAPS];
    size_t nmaps;
    const char *vars[MGR_IMPORT_MAX_VARS];
    size_t nvars;
    unsigned flags;  /* IOF_IMPORT_APPROXIMATE */
    unsigned sector; /* 0, 512 or 4096 */
};

enum mgr_import_opt {
    MGR_IMPORT_OPT_MAP,    /* "NAME=PATH" */
    MGR_IMPORT_OPT_VAR,    /* "NAME=VALUE" */
    MGR_IMPORT_OPT_SECTOR, /* "512" or "4096" */
};

/* Adds one option's value (borrowed) to o, checked by the option's own rule.
 * 0, or -EINVAL with diag "DASHmap takes NAME=PATH (at most 256), got 'x'"
 * (dash: "--" as the CLI spells options, "" as the API's parameters). */
int mgr_import_opt_add(struct mgr_import_opts *o, enum mgr_import_opt opt, const char *val,
                       const char *dash, struct iof_diag *diag);

/* 0 when o->format is NULL or a known format, else -EINVAL with diag. */
int mgr_import_format_check(const struct mgr_import_opts *o, const char *dash,
                            struct iof_diag *diag);

/* The format of the file `path` (its name tells: .fio, .ini, .job, .icf,
 * .vdb, vdb-*) unless o->format says it; else a text whose first definition
 * is vdbench's; else NULL. text NULL: not read. Static strings. */
const char *mgr_import_format(const struct mgr_import_opts *o, const char *path, const char *text,
                              size_t len);

/* The rules between the options and the format fmt (--map is for Iometer
 * files...): 0 or -EINVAL with diag. */
int mgr_import_format_rules(const struct mgr_import_opts *o, const char *fmt, const char *dash,
                            struct iof_diag *diag);

/* Imports text (len bytes, borrowed) of format fmt as the file `name`
 * (messages name it); dir (borrowed, NULL: include= refused) is where
 * vdbench's include= files are read. The importer's messages go to msgs
 * ("NAME:LINE: ..." lines, proto/import.h), the plan JSON to json. Then the
 * plan loader checks it: a plan whose only fault is an Iometer target
 * placeholder is kept, with the loader's message in note (cap bytes, else
 * ""). Returns 0; IOF_EPLAN with diag the importer's summary or "the
 * imported plan is not valid: WHY"; or -ENOMEM. */
int mgr_import_text(const struct mgr_import_opts *o, const char *fmt, const char *name,
                    const char *text, size_t len, const char *dir, struct iof_buf *json,
                    struct iof_buf *msgs, char *note, size_t cap, struct iof_diag *diag);

#endif
