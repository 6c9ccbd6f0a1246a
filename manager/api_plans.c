/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_plans.c - serve's plan endpoints (manager/api_plans.h,
 * docs/api.md, Plans): import and export through the code `iofleet import`
 * and `iofleet export` run. */
#include "manager/api_plans.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "manager/import_drive.h"
#include "proto/export.h"
#include "proto/import.h"
#include "proto/plan.h"

struct mgr_api_import {
    struct mgr_import_opts o;
    const char *name; /* the file's name, "upload" when not given */
};

struct mgr_api_import *mgr_api_import_new(void)
{
    return calloc(1, sizeof(struct mgr_api_import));
}

void mgr_api_import_free(struct mgr_api_import *q)
{
    free(q);
}

/* The file's name as messages show it: a base name of printable ASCII. */
static bool import_name_ok(const char *v)
{
    size_t n = strlen(v);

    if (!n || n > 255 || strchr(v, '/'))
        return false;
    for (; *v; v++)
        if (*v < 0x20 || *v > 0x7e)
            return false;
    return true;
}

int mgr_api_import_param(struct mgr_api_import *q, const char *key, const char *value,
                         struct iof_diag *diag)
{
    const char *v = value ? value : "";

    if (!strcmp(key, "name")) {
        if (!import_name_ok(v))
            return iof_diag_set(diag, -EINVAL,
                                "name takes the file's name (1 to 255 printable characters, no "
                                "'/'), got '%.100s'",
                                v);
        q->name = v;
        return 0;
    }
    if (!strcmp(key, "format")) {
        q->o.format = strcmp(v, "auto") ? v : NULL;
        return mgr_import_format_check(&q->o, "", diag);
    }
    if (!strcmp(key, "approximate") || !strcmp(key, "approx")) {
        if (strcmp(v, "1") && strcmp(v, "0"))
            return iof_diag_set(diag, -EINVAL, "%s takes 1 or 0, got '%.100s'", key, v);
        q->o.flags = !strcmp(v, "1") ? IOF_IMPORT_APPROXIMATE : 0;
        return 0;
    }
    if (!strcmp(key, "map"))
        return mgr_import_opt_add(&q->o, MGR_IMPORT_OPT_MAP, v, "", diag);
    if (!strcmp(key, "var"))
        return mgr_import_opt_add(&q->o, MGR_IMPORT_OPT_VAR, v, "", diag);
    if (!strcmp(key, "sector-size") || !strcmp(key, "sector"))
        return mgr_import_opt_add(&q->o, MGR_IMPORT_OPT_SECTOR, v, "", diag);
    return iof_diag_set(diag, -EINVAL,
                        "unknown parameter '%.100s' (there are name, format, map, var, "
                        "sector-size, approximate)",
                        key);
}

/* One importer message "NAME:LINE: TEXT" as {"line": LINE, "message": TEXT};
 * a line without that prefix has "line": null. */
static void import_note(struct iof_buf *b, const char *name, const char *line)
{
    size_t n = strlen(name);
    unsigned long no = 0;
    char *end = NULL;

    if (!strncmp(line, name, n) && line[n] == ':' && line[n + 1] >= '0' && line[n + 1] <= '9') {
        no = strtoul(line + n + 1, &end, 10);
        if (end[0] == ':' && end[1] == ' ')
            line = end + 2;
        else
            no = 0;
    }
    iof_json_open(b, '{');
    iof_json_key(b, "line");
    if (no)
        iof_json_u64(b, no);
    else
        iof_json_null(b);
    iof_json_key(b, "message");
    iof_json_escape(b, line, IOF_JSON_TEXT);
    iof_json_close(b, '}');
}

/* The importer's "error:" lines of msgs joined by "; " into diag (it names
 * the file and line), else its summary as it is. */
static int import_refused(int rc, const struct iof_buf *msgs, struct iof_diag *diag)
{
    char why[sizeof(diag->msg)] = "";
    size_t at = 0;

    for (const char *line = msgs->p, *nl; line && *line && at + 1 < sizeof(why); line = nl + 1) {
        const char *e;
        if (!(nl = strchr(line, '\n')))
            break;
        e = strstr(line, ": error: ");
        if (!e || e > nl)
            continue;
        at += (size_t)snprintf(why + at, sizeof(why) - at, "%s%.*s", at ? "; " : "",
                               (int)(nl - line), line);
    }
    if (rc == -ENOMEM)
        return iof_diag_set(diag, rc, "out of memory");
    if (at)
        return iof_diag_set(diag, -EINVAL, "%s", why);
    return iof_diag_set(diag, -EINVAL, "%.*s", (int)sizeof(why) - 1, diag->msg);
}

int mgr_api_import_run(struct mgr_api_import *q, const char *body, size_t len, struct iof_buf *out,
                       struct iof_diag *diag)
{
    struct iof_buf json = IOF_BUF_INIT, msgs = IOF_BUF_INIT;
    const char *name = q->name ? q->name : "upload", *fmt;
    char note[sizeof(diag->msg)];
    int rc;

    if (len > IOF_IMPORT_MAX_TEXT)
        return iof_diag_set(diag, -EINVAL, "%s: is too large: the maximum is %u bytes", name,
                            IOF_IMPORT_MAX_TEXT);
    if (!(fmt = mgr_import_format(&q->o, name, body, len)))
        return iof_diag_set(diag, -EINVAL,
                            "cannot tell the format of '%s' (name=FILE ending in .fio, .ini, .job, "
                            ".icf or .vdb; or format=fio|icf|vdbench)",
                            name);
    if ((rc = mgr_import_format_rules(&q->o, fmt, "", diag)))
        return rc;
    /* No include= here: the files it names would be the server's. */
    rc = mgr_import_text(&q->o, fmt, name, body, len, NULL, &json, &msgs, note, sizeof(note), diag);
    if (!rc && (json.err || msgs.err))
        rc = -ENOMEM;
    if (rc) {
        rc = import_refused(rc, &msgs, diag);
        goto out;
    }
    iof_json_open(out, '{');
    iof_json_key(out, "name");
    iof_json_str(out, name);
    iof_json_key(out, "format");
    iof_json_str(out, fmt);
    iof_json_key(out, "plan");
    iof_json_str(out, json.p ? json.p : "");
    iof_json_key(out, "notes");
    iof_json_open(out, '[');
    for (char *line = msgs.p, *nl; line && *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            break;
        *nl = 0;
        import_note(out, name, line);
    }
    if (note[0]) {
        char text[sizeof(note) + 8];
        snprintf(text, sizeof(text), "note: %s", note);
        import_note(out, name, text);
    }
    iof_json_close(out, ']');
    iof_json_close(out, '}');
    iof_buf_addstr(out, "\n");
    rc = out->err ? -ENOMEM : 0;
    if (rc)
        iof_diag_set(diag, rc, "out of memory");
out:
    iof_buf_free(&json);
    iof_buf_free(&msgs);
    return rc;
}

int mgr_api_plans_export(const char *format, const char *body, size_t len, struct iof_buf *out,
                         struct iof_diag *diag)
{
    struct iof_buf msgs = IOF_BUF_INIT;
    struct iof_plan plan;
    int rc;

    if (format && strcmp(format, "icf"))
        return iof_diag_set(diag, -EINVAL, "format '%.100s': the plan exports as icf only", format);
    if ((rc = proto_plan_parse("plan", body, len, NULL, 0, &plan, diag)))
        return rc == -ENOMEM ? rc : IOF_EPLAN;
    rc = proto_export_icf(&plan, out, &msgs, diag);
    iof_plan_free(&plan);
    if (rc && rc != -ENOMEM) {
        /* The "error: PLAN.KEY: why" lines say what Iometer cannot express. */
        char why[sizeof(diag->msg)] = "";
        size_t at = 0;
        for (const char *line = msgs.p, *nl; line && *line && at + 1 < sizeof(why); line = nl + 1) {
            if (!(nl = strchr(line, '\n')))
                break;
            if (!strncmp(line, "error: ", 7))
                at += (size_t)snprintf(why + at, sizeof(why) - at, "%s%.*s", at ? "; " : "",
                                       (int)(nl - line), line);
        }
        if (at)
            iof_diag_set(diag, IOF_EPLAN, "%s", why);
        rc = IOF_EPLAN;
    }
    if (!rc && out->err)
        rc = iof_diag_set(diag, -ENOMEM, "out of memory");
    iof_buf_free(&msgs);
    return rc;
}
