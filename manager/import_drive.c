/* SPDX-License-Identifier: Apache-2.0 */
/* manager/import_drive.c - the import driver shared by `iofleet import` and
 * serve's POST /api/v1/plans/import (manager/import_drive.h): option rules,
 * the format, the importer and the plan loader's check. */
#include "manager/import_drive.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/import.h"
#include "proto/plan.h"

int mgr_import_opt_add(struct mgr_import_opts *o, enum mgr_import_opt opt, const char *val,
                       const char *dash, struct iof_diag *diag)
{
    size_t n;

    switch (opt) {
    case MGR_IMPORT_OPT_SECTOR:
        if (strcmp(val, "512") && strcmp(val, "4096"))
            return iof_diag_set(diag, -EINVAL, "%ssector-size takes 512 or 4096 (bytes), got '%s'",
                                dash, val);
        o->sector = (unsigned)atoi(val);
        return 0;
    case MGR_IMPORT_OPT_MAP:
        if (!strchr(val, '=') || val[0] == '=' || o->nmaps >= MGR_IMPORT_MAX_MAPS)
            return iof_diag_set(diag, -EINVAL, "%smap takes NAME=PATH (at most %d), got '%s'", dash,
                                MGR_IMPORT_MAX_MAPS, val);
        o->maps[o->nmaps++] = val;
        return 0;
    default:
        n = strcspn(val, "=");
        if (!proto_import_vdbench_var_ok(val) || o->nvars >= MGR_IMPORT_MAX_VARS)
            return iof_diag_set(diag, -EINVAL,
                                "%svar takes NAME=VALUE, NAME letters, digits and '_' (at most "
                                "%d), got '%s'",
                                dash, MGR_IMPORT_MAX_VARS, val);
        for (size_t i = 0; i < o->nvars; i++)
            if (!strncmp(o->vars[i], val, n + 1))
                return iof_diag_set(diag, -EINVAL, "%svar %.*s is given twice", dash, (int)n, val);
        o->vars[o->nvars++] = val;
        return 0;
    }
}

int mgr_import_format_check(const struct mgr_import_opts *o, const char *dash,
                            struct iof_diag *diag)
{
    const char *f = o->format;

    if (f && strcmp(f, "fio") && strcmp(f, "icf") && strcmp(f, "vdbench"))
        return iof_diag_set(diag, -EINVAL, "unknown %sformat '%s' (expected fio, icf or vdbench)",
                            dash, f);
    return 0;
}

const char *mgr_import_format(const struct mgr_import_opts *o, const char *path, const char *text,
                              size_t len)
{
    const char *dot = strrchr(path, '.');
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

    if (o->format)
        return o->format;
    if (dot && (!strcmp(dot, ".fio") || !strcmp(dot, ".ini") || !strcmp(dot, ".job")))
        return "fio";
    if (dot && !strcasecmp(dot, ".icf"))
        return "icf";
    if ((dot && !strcasecmp(dot, ".vdb")) || !strncmp(base, "vdb-", 4))
        return "vdbench";
    if (text && proto_import_vdbench_detect(text, len))
        return "vdbench";
    return NULL;
}

int mgr_import_format_rules(const struct mgr_import_opts *o, const char *fmt, const char *dash,
                            struct iof_diag *diag)
{
    if (o->nmaps && strcmp(fmt, "icf"))
        return iof_diag_set(diag, -EINVAL, "%smap is for Iometer configuration files", dash);
    if (o->sector && strcmp(fmt, "icf"))
        return iof_diag_set(diag, -EINVAL, "%ssector-size is for Iometer configuration files",
                            dash);
    if (o->nvars && strcmp(fmt, "vdbench"))
        return iof_diag_set(diag, -EINVAL, "%svar is for vdbench parameter files", dash);
    if (o->flags && !strcmp(fmt, "icf"))
        return iof_diag_set(diag, -EINVAL,
                            "%sapproximate is for fio job files and vdbench parameter files", dash);
    return 0;
}

int mgr_import_text(const struct mgr_import_opts *o, const char *fmt, const char *name,
                    const char *text, size_t len, const char *dir, struct iof_buf *json,
                    struct iof_buf *msgs, char *note, size_t cap, struct iof_diag *diag)
{
    struct iof_plan plan = {0};
    int rc;

    if (cap)
        note[0] = '\0';
    if (!strcmp(fmt, "vdbench"))
        rc = proto_import_vdbench(name, text, len, o->flags, dir, o->vars, o->nvars, json, msgs,
                                  diag);
    else if (!strcmp(fmt, "fio"))
        rc = proto_import_fio(name, text, len, o->flags, json, msgs, diag);
    else
        rc = proto_import_icf(name, text, len, o->maps, o->nmaps, o->sector, json, msgs, diag);
    if (rc) {
        if (!diag->msg[0])
            iof_diag_set(diag, rc, "%s", iof_strerror(rc));
        return rc;
    }
    rc = proto_plan_parse(name, json->p, json->len, NULL, 0, &plan, diag);
    iof_plan_free(&plan);
    if (rc && strstr(diag->msg, "Iometer target placeholder")) {
        /* Kept all the same: the user maps it with --set, or imports again. */
        snprintf(note, cap, "%s", diag->msg);
        diag->msg[0] = '\0';
        return 0;
    }
    if (rc) {
        char why[sizeof(diag->msg)];
        snprintf(why, sizeof(why), "%s", diag->msg[0] ? diag->msg : iof_strerror(rc));
        return iof_diag_set(diag, IOF_EPLAN, "the imported plan is not valid: %s", why);
    }
    return 0;
}
