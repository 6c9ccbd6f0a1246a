/* SPDX-License-Identifier: Apache-2.0 */
/* manager/cli_import.c - `iofleet import FILE -o PLAN.json`: a fio job file
 * (proto/import_fio.c), an Iometer configuration file (proto/import_icf.c)
 * or a vdbench parameter file (proto/import_vdbench.c) as an iofleet plan, checked by the plan
 * loader before it is written; every option or line the importer ignores or cannot map is named on
 * stderr with its line. And `iofleet export PLAN.json -o F.icf`: a plan as an Iometer configuration
 * file (proto/export_icf.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/cliopt.h"
#include "common/log.h"
#include "common/outfile.h"
#include "manager/cli.h"
#include "manager/import_drive.h"
#include "proto/export.h"
#include "proto/import.h"
#include "proto/plan.h"

enum import_opt_id {
    IOPT_HELP = 1,
    IOPT_OUT,
    IOPT_FORCE,
    IOPT_FORMAT,
    IOPT_MAP,
    IOPT_APPROX,
    IOPT_SECTOR,
    IOPT_VAR,
};

static const struct iof_opt import_opts[] = {
    {"help", 'h', IOF_OPT_NONE, NULL, "print this help and exit", IOPT_HELP},
    {"output", 'o', IOF_OPT_REQUIRED, "PLAN.json", "where to write the plan (- or none: stdout)",
     IOPT_OUT},
    {"force", 'f', IOF_OPT_NONE, NULL, "replace an existing output file", IOPT_FORCE},
    {"format", 0, IOF_OPT_REQUIRED, "fio|icf|vdbench",
     "the input's format (default: from the name; .fio, .ini and .job are fio job files, .icf "
     "Iometer configuration files, .vdb and vdb-* vdbench parameter files; else a file whose "
     "first definition is sd=, wd=, rd= or hd= is a vdbench file)",
     IOPT_FORMAT},
    {"map", 0, IOF_OPT_REQUIRED, "NAME=PATH",
     "icf: the path of an Iometer target (its whole name or first word: 'PHYSICALDRIVE:1', "
     "'C:'); repeatable. An unmapped target stays as the placeholder 'iometer:NAME', which "
     "validate refuses by name",
     IOPT_MAP},
    {"sector-size", 0, IOF_OPT_REQUIRED, "BYTES",
     "icf: the disks' sector size, 512 or 4096 (4Kn), the unit of Iometer's starting sector, "
     "maximum disk size and align 0; without it a non-zero starting sector or maximum disk size "
     "is refused and align 0 is 512",
     IOPT_SECTOR},
    {"var", 0, IOF_OPT_REQUIRED, "NAME=VALUE",
     "vdbench: the value of the file's $NAME (or !NAME), as NAME=VALUE on vdbench's command "
     "line; repeatable. A $NAME without one is refused naming it and its line; one the file "
     "does not use is a warning",
     IOPT_VAR},
    {"approximate", 0, IOF_OPT_NONE, NULL,
     "fio, vdbench: accept what the plan can only approximate (buffered I/O run with O_DIRECT, "
     "fractional percentages rounded, hot bands run uniform over the band); each approximation "
     "is printed and kept in the plan's notes",
     IOPT_APPROX},
};

static const struct iof_cmd import_cmd = {
    .prog = "iofleet import",
    .synopsis = "JOB.fio|CONFIG.icf|PARAMS.vdb [-o PLAN.json] [OPTION]...",
    .about =
        "Writes an iofleet plan from a fio job file (stonewalled jobs become tests in "
        "order, numjobs the worker count, iodepth the queue depth, bs/bssplit the spec's "
        "lines) or an Iometer configuration file (assigned access specifications become the "
        "tests, disk workers the worker groups, outstanding I/Os the queue depth) or a vdbench "
        "parameter file such as HCIBench's (each rd= a test, the SDs the targets, threads "
        "the queue depth, the workloads' mix and skew the spec's lines). Each "
        "option or line that is ignored (it does not change the load) or cannot be mapped "
        "is named on stderr with FILE:LINE; the plan is validated before it is written. "
        "docs/workloads.md has the mapping tables.",
    .opts = import_opts,
    .nopts = sizeof(import_opts) / sizeof(import_opts[0]),
    .epilog = "exit codes: 0 written (notes on stderr), 1 I/O error, 2 usage error or\n"
              "            something that changes the load cannot be reproduced exactly\n",
};

void mgr_cli_import_help(FILE *f)
{
    iof_opt_help(&import_cmd, f);
}

/* Reads at most IOF_IMPORT_MAX_TEXT + 1 bytes of path into b. */
static int import_read(const char *path, struct iof_buf *b)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    for (;;) {
        ssize_t n;
        if (iof_buf_reserve(b, 65536)) {
            close(fd);
            return b->err;
        }
        n = read(fd, b->p + b->len, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = -errno;
            close(fd);
            return e;
        }
        if (!n)
            break;
        iof_buf_commit(b, (size_t)n);
        if (b->len > IOF_IMPORT_MAX_TEXT)
            break;
    }
    close(fd);
    return 0;
}

/* Writes the result to out (NULL or "-": stdout) through common/outfile.h:
 * a new file renamed into place, an existing name (a link too, never
 * followed) replaced only with force. 0 or an error with diag naming out. */
static int import_write(const char *out, bool force, const struct iof_buf *json,
                        struct iof_diag *diag)
{
    return iof_outfile_write(out ? out : "-", 0, force ? IOF_OUTFILE_FORCE : 0, json->p, json->len,
                             diag);
}

int mgr_cli_import(int argc, char **argv)
{
    struct iof_opt_parser p;
    const char *in = NULL, *out = NULL, *val, *name, *fmt;
    struct mgr_import_opts *o;
    struct iof_buf text = IOF_BUF_INIT, json = IOF_BUF_INIT, msgs = IOF_BUF_INIT;
    struct iof_diag diag = {{0}};
    char note[sizeof(diag.msg)];
    bool force = false;
    int id, rc = 0, ret = 2;

    if (!(o = calloc(1, sizeof(*o)))) {
        IOF_USER("iofleet import: out of memory");
        return 1;
    }
    if (iof_opt_init(&p, &import_cmd, argc, argv)) {
        free(o);
        return 1;
    }
    while ((id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        if (id == IOF_OPT_HELP || id == IOF_OPT_ERROR) {
            iof_opt_free(&p);
            free(o);
            return id == IOF_OPT_HELP ? 0 : 2;
        }
        rc = 0;
        if (id == IOF_OPT_POSITIONAL) {
            if (in) {
                iof_opt_free(&p);
                free(o);
                return iof_opt_usage_error(&import_cmd, "one input file only ('%s' is a second)",
                                           val);
            }
            in = val;
        } else if (id == IOPT_OUT) {
            out = val;
        } else if (id == IOPT_FORCE) {
            force = true;
        } else if (id == IOPT_FORMAT) {
            o->format = val;
        } else if (id == IOPT_APPROX) {
            o->flags |= IOF_IMPORT_APPROXIMATE;
        } else if (id == IOPT_SECTOR) {
            rc = mgr_import_opt_add(o, MGR_IMPORT_OPT_SECTOR, val, "--", &diag);
        } else if (id == IOPT_MAP) {
            rc = mgr_import_opt_add(o, MGR_IMPORT_OPT_MAP, val, "--", &diag);
        } else if (id == IOPT_VAR) {
            rc = mgr_import_opt_add(o, MGR_IMPORT_OPT_VAR, val, "--", &diag);
        }
        if (rc) {
            iof_opt_free(&p);
            free(o);
            return iof_opt_usage_error(&import_cmd, "%s", diag.msg);
        }
    }
    iof_opt_free(&p);
    if (!in) {
        free(o);
        return iof_opt_usage_error(&import_cmd, "missing the file to import");
    }
    if (mgr_import_format_check(o, "--", &diag)) {
        free(o);
        return iof_opt_usage_error(&import_cmd, "%s", diag.msg);
    }
    name = strrchr(in, '/') ? strrchr(in, '/') + 1 : in;
    rc = import_read(in, &text);
    fmt = mgr_import_format(o, in, rc ? NULL : text.p ? text.p : "", text.len);
    if (rc && fmt) {
        IOF_USER("iofleet import: %s: %s", in, strerror(-rc));
        ret = rc == -ENOMEM ? 1 : 2;
        goto out;
    }
    if (!fmt) {
        ret = iof_opt_usage_error(&import_cmd,
                                  "cannot tell the format of '%s' (.fio, .ini, .job, .icf or "
                                  ".vdb; or --format fio|icf|vdbench)",
                                  in);
        goto out;
    }
    if (mgr_import_format_rules(o, fmt, "--", &diag)) {
        ret = iof_opt_usage_error(&import_cmd, "%s", diag.msg);
        goto out;
    }
    {
        char dir[4096];
        const char *slash = strrchr(in, '/');
        snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - in) : 1, slash ? in : ".");
        if (slash == in)
            snprintf(dir, sizeof(dir), "/");
        rc = mgr_import_text(o, fmt, name, text.p ? text.p : "", text.len, dir, &json, &msgs, note,
                             sizeof(note), &diag);
    }
    for (char *line = msgs.p, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            break;
        *nl = 0;
        IOF_USER("%s", line);
    }
    if (rc) {
        IOF_USER("iofleet import: %s", diag.msg);
        ret = rc == -ENOMEM ? 1 : 2;
        goto out;
    }
    if (note[0]) /* written all the same: the user maps it with --set, or imports again */
        IOF_USER("iofleet import: note: %s", note);
    rc = import_write(out, force, &json, &diag);
    if (rc) {
        IOF_USER("iofleet import: %s", diag.msg);
        ret = rc == -EEXIST ? 2 : 1;
        goto out;
    }
    ret = 0;
out:
    free(o);
    iof_buf_free(&text);
    iof_buf_free(&json);
    iof_buf_free(&msgs);
    return ret;
}

static const struct iof_opt export_opts[] = {
    {"help", 'h', IOF_OPT_NONE, NULL, "print this help and exit", IOPT_HELP},
    {"output", 'o', IOF_OPT_REQUIRED, "F.icf",
     "where to write the Iometer file (- or none: stdout)", IOPT_OUT},
    {"force", 'f', IOF_OPT_NONE, NULL, "replace an existing output file", IOPT_FORCE},
};

static const struct iof_cmd export_cmd = {
    .prog = "iofleet export",
    .synopsis = "PLAN.json|- [-o F.icf] [OPTION]...",
    .about = "Writes the plan as an Iometer configuration file (Version 1.1.0): specs as access "
             "specifications assigned to every worker, worker groups as Iometer workers with "
             "their outstanding I/Os, run time, ramp and a queue-depth, worker or target cycle. "
             "What Iometer cannot express (a spec's own duration or io_limit, skewed "
             "distributions, rates, offset_increment, percentage ranges) is an error naming the "
             "plan key.",
    .opts = export_opts,
    .nopts = sizeof(export_opts) / sizeof(export_opts[0]),
    .epilog = "exit codes: 0 written (notes on stderr), 1 I/O error, 2 usage or plan error, or\n"
              "            something Iometer cannot express\n",
};

void mgr_cli_export_help(FILE *f)
{
    iof_opt_help(&export_cmd, f);
}

int mgr_cli_export(int argc, char **argv)
{
    struct iof_opt_parser p;
    const char *in = NULL, *out = NULL, *val;
    struct iof_buf icf = IOF_BUF_INIT, msgs = IOF_BUF_INIT;
    struct iof_diag diag = {{0}};
    struct iof_plan plan = {0};
    bool force = false;
    int id, rc, ret = 2;

    if (iof_opt_init(&p, &export_cmd, argc, argv))
        return 1;
    while ((id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        if (id == IOF_OPT_HELP || id == IOF_OPT_ERROR) {
            iof_opt_free(&p);
            return id == IOF_OPT_HELP ? 0 : 2;
        }
        if (id == IOF_OPT_POSITIONAL) {
            if (in) {
                iof_opt_free(&p);
                return iof_opt_usage_error(&export_cmd, "one plan only ('%s' is a second)", val);
            }
            in = val;
        } else if (id == IOPT_OUT) {
            out = val;
        } else if (id == IOPT_FORCE) {
            force = true;
        }
    }
    iof_opt_free(&p);
    if (!in)
        return iof_opt_usage_error(&export_cmd, "missing the plan to export");
    rc = proto_plan_load(in, NULL, 0, &plan, &diag);
    if (rc) {
        IOF_USER("iofleet export: %s", diag.msg[0] ? diag.msg : iof_strerror(rc));
        return 2;
    }
    rc = proto_export_icf(&plan, &icf, &msgs, &diag);
    iof_plan_free(&plan);
    for (char *line = msgs.p, *nl; line && *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            break;
        *nl = 0;
        IOF_USER("iofleet export: %s", line);
    }
    if (rc) {
        IOF_USER("iofleet export: %s", diag.msg[0] ? diag.msg : iof_strerror(rc));
        ret = rc == -ENOMEM ? 1 : 2;
        goto out;
    }
    rc = import_write(out, force, &icf, &diag);
    if (rc) {
        IOF_USER("iofleet export: %s", diag.msg);
        ret = rc == -EEXIST ? 2 : 1;
        goto out;
    }
    ret = 0;
out:
    iof_buf_free(&icf);
    iof_buf_free(&msgs);
    return ret;
}
