/* SPDX-License-Identifier: Apache-2.0 */
/* manager/api_plans.c - serve's plan endpoints (manager/api_plans.h,
 * docs/api.md, Plans): import and export through the code `iofleet import`
 * and `iofleet export` run; the plan library's files. */
#include "manager/api_plans.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonw.h"
#include "common/outfile.h"
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
    return -EINVAL; /* diag already holds the importer's message */
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

/* --- the library ------------------------------------------------------------------------- */

static bool plans_name_ok(const char *name)
{
    size_t n = strlen(name);

    if (!n || n > 64 || name[0] == '.' || !strcmp(name, "check") || !strcmp(name, "import") ||
        !strcmp(name, "export"))
        return false;
    return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

int mgr_api_plans_name_check(const char *name, struct iof_diag *diag)
{
    if (plans_name_ok(name))
        return 0;
    return iof_diag_set(diag, -EINVAL,
                        "plan name '%.100s': 1 to 64 letters, digits, '.', '_' or '-', not "
                        "starting with '.' (check, import and export are the API's own paths)",
                        name);
}

/* DIR/NAME.json in path; false when it does not fit. */
static bool plans_path(char *path, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(path, cap, "%s/%s.json", dir, name);

    return n > 0 && (size_t)n < cap;
}

/* The regular file at path (never through a link), at most
 * PROTO_PLAN_MAX_FILE bytes, appended to out; mtime in *mtime. */
static int plans_read(const char *path, struct iof_buf *out, time_t *mtime, struct iof_diag *diag)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), rc = 0;
    struct stat st;

    if (fd < 0)
        return iof_diag_set(diag, errno == ELOOP ? -ELOOP : -errno, "%s: %s", path,
                            errno == ELOOP ? "is a symbolic link: not read" : strerror(errno));
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (off_t)PROTO_PLAN_MAX_FILE) {
        close(fd);
        return iof_diag_set(diag, -ELOOP,
                            "%s: not a plan file (a regular file of at most %u bytes)", path,
                            PROTO_PLAN_MAX_FILE);
    }
    if (mtime)
        *mtime = st.st_mtime;
    for (;;) {
        ssize_t n;
        if (iof_buf_reserve(out, 65536)) {
            rc = iof_diag_set(diag, -ENOMEM, "out of memory");
            break;
        }
        n = read(fd, out->p + out->len, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
            break;
        }
        if (!n)
            break;
        iof_buf_commit(out, (size_t)n);
    }
    close(fd);
    return rc;
}

/* The plan's test count (-1: the loader refuses it, why in err) and its own
 * name (new, or NULL). */
static long plans_tests(const char *name, const char *text, size_t len, char **title, char *err,
                        size_t cap)
{
    struct iof_diag d = {{0}};
    struct iof_plan p;
    struct iof_test *t;
    size_t n = 0;

    *title = NULL;
    if (proto_plan_parse(name, text, len, NULL, 0, &p, &d)) {
        snprintf(err, cap, "%s", d.msg);
        return -1;
    }
    if (p.name[0])
        *title = strdup(p.name);
    t = iof_plan_expand(&p, &n);
    free(t);
    iof_plan_free(&p);
    return (long)n;
}

static int plans_filter(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    char name[72];

    if (n <= 5 || n - 5 >= sizeof(name) || strcmp(e->d_name + n - 5, ".json"))
        return 0;
    memcpy(name, e->d_name, n - 5);
    name[n - 5] = '\0';
    return plans_name_ok(name);
}

/* Every plan of dir appended to out as list entries of source. */
static void plans_list_dir(const char *dir, const char *source, struct iof_buf *out)
{
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, plans_filter, alphasort);

    for (int i = 0; i < n; i++) {
        struct iof_diag d = {{0}};
        struct iof_buf text = IOF_BUF_INIT;
        char path[4200], name[72], err[512] = "", when[32] = "", *title = NULL;
        size_t len = strlen(ents[i]->d_name) - 5;
        time_t mtime = 0;
        struct tm tm;
        long tests = -1;

        memcpy(name, ents[i]->d_name, len);
        name[len] = '\0';
        free(ents[i]);
        if (!plans_path(path, sizeof(path), dir, name) || plans_read(path, &text, &mtime, &d)) {
            iof_buf_free(&text);
            continue; /* a link or not a file: not a plan of the library */
        }
        tests = plans_tests(name, text.p ? text.p : "", text.len, &title, err, sizeof(err));
        iof_buf_free(&text);
        if (gmtime_r(&mtime, &tm))
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        iof_json_open(out, '{');
        iof_json_key(out, "name");
        iof_json_str(out, name);
        iof_json_key(out, "source");
        iof_json_str(out, source);
        iof_json_key(out, "description");
        iof_json_escape(out, title, IOF_JSON_TEXT);
        iof_json_key(out, "tests");
        if (tests >= 0)
            iof_json_u64(out, (uint64_t)tests);
        else
            iof_json_null(out);
        if (tests < 0) {
            iof_json_key(out, "error");
            iof_json_escape(out, err, IOF_JSON_TEXT);
        }
        iof_json_key(out, "modified");
        iof_json_str(out, when);
        iof_json_close(out, '}');
        free(title);
    }
    free(ents);
}

int mgr_api_plans_list(const struct mgr_api_plans_dirs *d, struct iof_buf *out,
                       struct iof_diag *diag)
{
    iof_json_open(out, '[');
    if (d->shipped[0])
        plans_list_dir(d->shipped, "shipped", out);
    plans_list_dir(d->user, "user", out);
    iof_json_close(out, ']');
    iof_buf_addstr(out, "\n");
    return out->err ? iof_diag_set(diag, -ENOMEM, "out of memory") : 0;
}

int mgr_api_plans_get(const struct mgr_api_plans_dirs *d, const char *name, const char *source,
                      struct iof_buf *out, struct iof_diag *diag)
{
    char path[4200];
    int rc;

    if ((rc = mgr_api_plans_name_check(name, diag)))
        return rc;
    if (source && strcmp(source, "user") && strcmp(source, "shipped"))
        return iof_diag_set(diag, -EINVAL, "source takes user or shipped, got '%.100s'", source);
    if (!source || !strcmp(source, "user")) {
        if (!plans_path(path, sizeof(path), d->user, name))
            return iof_diag_set(diag, -ENAMETOOLONG, "%s: the name is too long", d->user);
        rc = plans_read(path, out, NULL, diag);
        if (rc != -ENOENT || source)
            return rc == -ENOENT ? iof_diag_set(diag, rc, "no user plan named '%s'", name) : rc;
    }
    if (!d->shipped[0] || !plans_path(path, sizeof(path), d->shipped, name))
        return iof_diag_set(diag, -ENOENT, "no plan named '%s'", name);
    rc = plans_read(path, out, NULL, diag);
    if (rc == -ENOENT)
        return iof_diag_set(diag, rc, source ? "no shipped plan named '%s'" : "no plan named '%s'",
                            name);
    return rc;
}

int mgr_api_plans_put(const struct mgr_api_plans_dirs *d, const char *name, const char *body,
                      size_t len, struct iof_buf *out, bool *created, struct iof_diag *diag)
{
    struct iof_test *t;
    struct iof_plan p;
    struct stat st;
    char path[4200];
    size_t n = 0;
    int rc;

    if ((rc = mgr_api_plans_name_check(name, diag)))
        return rc;
    /* The loader of plans/check, with its messages ("plan: KEY: why"). */
    if ((rc = proto_plan_parse("plan", body, len, NULL, 0, &p, diag)))
        return rc == -ENOMEM ? rc : IOF_EPLAN;
    t = iof_plan_expand(&p, &n);
    iof_plan_free(&p);
    free(t);
    if (!t)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    if (!plans_path(path, sizeof(path), d->user, name))
        return iof_diag_set(diag, -ENAMETOOLONG, "%s: the name is too long", d->user);
    /* Never written through a link: one planted here is refused, and the
     * file goes in under a temporary name renamed over the name itself. */
    *created = lstat(path, &st) != 0;
    if (*created && errno != ENOENT)
        return iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    if (!*created && !S_ISREG(st.st_mode))
        return iof_diag_set(diag, -ELOOP, "%s: is %s, not a plan file: not replaced", path,
                            S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
    if ((rc = iof_outfile_write(path, 0600, IOF_OUTFILE_FORCE, body, len, diag)))
        return rc;
    iof_json_open(out, '{');
    iof_json_key(out, "name");
    iof_json_str(out, name);
    iof_json_key(out, "source");
    iof_json_str(out, "user");
    iof_json_key(out, "tests");
    iof_json_u64(out, n);
    iof_json_key(out, "created");
    iof_json_bool(out, *created);
    iof_json_close(out, '}');
    iof_buf_addstr(out, "\n");
    return out->err ? iof_diag_set(diag, -ENOMEM, "out of memory") : 0;
}

int mgr_api_plans_delete(const struct mgr_api_plans_dirs *d, const char *name, struct iof_buf *out,
                         struct iof_diag *diag)
{
    char path[4200];
    struct stat st;
    int rc;

    if ((rc = mgr_api_plans_name_check(name, diag)))
        return rc;
    if (!plans_path(path, sizeof(path), d->user, name))
        return iof_diag_set(diag, -ENAMETOOLONG, "%s: the name is too long", d->user);
    if (lstat(path, &st)) {
        char shipped[4200];
        if (errno == ENOENT && d->shipped[0] &&
            plans_path(shipped, sizeof(shipped), d->shipped, name) && !lstat(shipped, &st))
            return iof_diag_set(diag, -EPERM,
                                "'%s' is a shipped plan: shipped plans are read-only (PUT a "
                                "copy under another name to change it)",
                                name);
        if (errno == ENOENT)
            return iof_diag_set(diag, -ENOENT, "no user plan named '%s'", name);
        return iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return iof_diag_set(diag, -ELOOP, "%s: is %s, not a plan file: not removed", path,
                            S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
    if (unlink(path))
        return iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    iof_json_open(out, '{');
    iof_json_key(out, "name");
    iof_json_str(out, name);
    iof_json_key(out, "deleted");
    iof_json_bool(out, true);
    iof_json_close(out, '}');
    iof_buf_addstr(out, "\n");
    return out->err ? iof_diag_set(diag, -ENOMEM, "out of memory") : 0;
}
