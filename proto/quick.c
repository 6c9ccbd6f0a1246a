/* SPDX-License-Identifier: Apache-2.0 */
/* proto/quick.c - the JSON plan of `iofleet run/validate --spec ...` (see
 * proto/quick.h): one spec per --spec, one worker group over every --target. */
#include "proto/quick.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/plan.h"

bool proto_quick_given(const struct proto_quick *q)
{
    return q->nspecs || q->ntargets || q->queue_depth || q->workers || q->engine || q->duration ||
           q->ramp;
}

/* A whole non-negative decimal number. */
static bool parse_count(const char *s, double *out)
{
    char *end;
    unsigned long long v;

    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || v > (1ull << 53))
        return false;
    *out = (double)v;
    return true;
}

/* One line from "SIZE[,read=PCT][,random=PCT][,align=A]"; names the spec
 * ("4k 70% read 100% random") in *name. Percentages go in as numbers when
 * they are numbers, else as the text (the loader then names the bad value). */
static int spec_line(const char *arg, cJSON *line, char *name, size_t cap, struct iof_diag *diag)
{
    char buf[256], *save = NULL, *tok;
    const char *read = "100", *random = "100";
    size_t n = strlen(arg);

    if (n == 0 || n >= sizeof(buf))
        return iof_diag_set(diag, IOF_EUSAGE,
                            "--spec '%s': give SIZE[,read=PCT][,random=PCT]"
                            "[,align=A], e.g. 4k,read=70,random=100",
                            n ? "..." : "");
    memcpy(buf, arg, n + 1);
    tok = strtok_r(buf, ",", &save);
    if (!tok || strchr(tok, '='))
        return iof_diag_set(diag, IOF_EUSAGE,
                            "--spec '%s': starts with the I/O size (e.g. 4k), then KEY=VALUE", arg);
    if (!cJSON_AddStringToObject(line, "size", tok))
        return -ENOMEM;
    snprintf(name, cap, "%s", tok);
    while ((tok = strtok_r(NULL, ",", &save))) {
        char *eq = strchr(tok, '=');
        double num;
        if (!eq || eq == tok || !eq[1])
            return iof_diag_set(diag, IOF_EUSAGE, "--spec '%s': '%s' is not KEY=VALUE", arg, tok);
        *eq++ = '\0';
        if (strcmp(tok, "read") && strcmp(tok, "random") && strcmp(tok, "align") &&
            strcmp(tok, "distribution"))
            return iof_diag_set(diag, IOF_EUSAGE,
                                "--spec '%s': unknown key '%s' (read, random, align, distribution)",
                                arg, tok);
        if (cJSON_GetObjectItemCaseSensitive(line, tok))
            return iof_diag_set(diag, IOF_EUSAGE, "--spec '%s': '%s' given twice", arg, tok);
        if (!strcmp(tok, "read"))
            read = eq;
        else if (!strcmp(tok, "random"))
            random = eq;
        if ((!strcmp(tok, "read") || !strcmp(tok, "random")) && parse_count(eq, &num)) {
            if (!cJSON_AddNumberToObject(line, tok, num))
                return -ENOMEM;
        } else if (!cJSON_AddStringToObject(line, tok, eq)) {
            return -ENOMEM;
        }
    }
    snprintf(name + strlen(name), cap - strlen(name), " %s%% read %s%% random", read, random);
    return 0;
}

/* {"path": PATH, "size": SIZE} from "PATH[:SIZE]": the part after the last
 * ':' is a size when it reads as one (device and file names rarely end in
 * ":64g"). */
static int target_obj(const char *arg, cJSON *t)
{
    const char *colon = strrchr(arg, ':');
    uint64_t size;

    if (colon && colon != arg && proto_plan_parse_size(colon + 1, &size) == 0) {
        char *path = strndup(arg, (size_t)(colon - arg));
        bool ok = path && cJSON_AddStringToObject(t, "path", path) &&
                  cJSON_AddStringToObject(t, "size", colon + 1);
        free(path);
        return ok ? 0 : -ENOMEM;
    }
    return cJSON_AddStringToObject(t, "path", arg) ? 0 : -ENOMEM;
}

/* Adds KEY: the number in `val` (an integer option), or fails naming OPT. */
static int add_count(cJSON *obj, const char *key, const char *opt, const char *val,
                     struct iof_diag *diag)
{
    double num;

    if (!val)
        return 0;
    if (!parse_count(val, &num))
        return iof_diag_set(diag, IOF_EUSAGE, "%s must be a whole number, got '%s'", opt, val);
    return cJSON_AddNumberToObject(obj, key, num) ? 0 : -ENOMEM;
}

static int build(const struct proto_quick *q, cJSON *root, struct iof_diag *diag)
{
    cJSON *run, *specs, *workers, *w, *targets;
    int rc;

    if (!q->nspecs)
        return iof_diag_set(diag, IOF_EUSAGE,
                            "a plan from the command line needs --spec SIZE[,read=PCT]"
                            "[,random=PCT][,align=A] (one test each)");
    if (!cJSON_AddStringToObject(root, "name", "quick") ||
        !(run = cJSON_AddObjectToObject(root, "run")) ||
        (q->ramp && !cJSON_AddStringToObject(run, "ramp", q->ramp)) ||
        !cJSON_AddStringToObject(run, "duration",
                                 q->duration ? q->duration : PROTO_QUICK_DURATION) ||
        !(specs = cJSON_AddArrayToObject(root, "specs")))
        return -ENOMEM;
    for (size_t i = 0; i < q->nspecs; i++) {
        cJSON *spec, *lines, *line = cJSON_CreateObject();
        char name[160];
        if (!line)
            return -ENOMEM;
        if ((rc = spec_line(q->specs[i], line, name, sizeof(name), diag))) {
            cJSON_Delete(line);
            return rc;
        }
        spec = cJSON_CreateObject();
        if (!spec || !cJSON_AddItemToArray(specs, spec)) {
            cJSON_Delete(spec);
            cJSON_Delete(line);
            return -ENOMEM;
        }
        if (!cJSON_AddStringToObject(spec, "name", name) ||
            !(lines = cJSON_AddArrayToObject(spec, "lines")) ||
            !cJSON_AddItemToArray(lines, line)) {
            cJSON_Delete(line);
            return -ENOMEM;
        }
    }
    if (!(workers = cJSON_AddArrayToObject(root, "workers")) || !(w = cJSON_CreateObject()) ||
        !cJSON_AddItemToArray(workers, w))
        return -ENOMEM;
    if ((rc = add_count(w, "count", "--workers", q->workers, diag)))
        return rc;
    if (q->engine && !cJSON_AddStringToObject(w, "engine", q->engine))
        return -ENOMEM;
    if ((rc = add_count(w, "queue_depth", "--queue-depth", q->queue_depth, diag)))
        return rc;
    if (!(targets = cJSON_AddArrayToObject(w, "targets")))
        return -ENOMEM;
    for (size_t i = 0; i < (q->ntargets ? q->ntargets : 1); i++) {
        cJSON *t = cJSON_CreateObject();
        if (!t || !cJSON_AddItemToArray(targets, t)) {
            cJSON_Delete(t);
            return -ENOMEM;
        }
        if (q->ntargets)
            rc = target_obj(q->targets[i], t);
        else
            rc = cJSON_AddStringToObject(t, "path", PROTO_QUICK_TARGET) &&
                         cJSON_AddStringToObject(t, "size", PROTO_QUICK_TARGET_SIZE)
                     ? 0
                     : -ENOMEM;
        if (rc)
            return rc;
    }
    return 0;
}

int proto_quick_plan(const struct proto_quick *q, char **json, struct iof_diag *diag)
{
    cJSON *root = cJSON_CreateObject();
    int rc = root ? build(q, root, diag) : -ENOMEM;
    char *text = NULL;

    *json = NULL;
    if (rc == 0 && !(text = cJSON_Print(root)))
        rc = -ENOMEM;
    cJSON_Delete(root);
    if (rc == -ENOMEM)
        return iof_diag_set(diag, -ENOMEM, "out of memory for the plan");
    if (rc) {
        free(text);
        return rc;
    }
    size_t n = strlen(text);
    char *out = realloc(text, n + 2);
    if (!out) {
        free(text);
        return iof_diag_set(diag, -ENOMEM, "out of memory for the plan");
    }
    out[n] = '\n';
    out[n + 1] = '\0';
    *json = out;
    return 0;
}
