/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_tmap.c - per-node target maps (a target's `path` given as
 * {"node1": "/dev/sdb", "*": "/dev/sdc"}) once the agents are known: the
 * check that every node a group runs on has a path (and the warning for a
 * key that names none of them), and the plan text each agent receives, with
 * every map resolved to its own path. Works on the canonical JSON, whose
 * entry indices are the plan file's. */
#include "proto/plan_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cliopt.h"

static bool name_in(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

/* Whether the group's "nodes" select node: absent, "*", or named. */
static bool json_group_selects(const cJSON *jw, const char *node, bool *star)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(jw, "nodes"), *e;
    bool named = false;

    *star = !cJSON_IsArray(nodes);
    cJSON_ArrayForEach(e, nodes)
    {
        if (!cJSON_IsString(e))
            continue;
        *star |= !strcmp(e->valuestring, "*");
        named |= node && !strcmp(e->valuestring, node);
    }
    return *star || named;
}

int proto_plan_map_check(const char *canonical, const char *const *agents, size_t nagents,
                         void (*warn)(void *arg, const char *msg), void *arg, struct iof_diag *diag)
{
    cJSON *root = cJSON_Parse(canonical);
    const cJSON *jw, *jt, *e;
    const char **sel = NULL;
    size_t g = 0;
    int rc = 0;

    if (!root)
        return iof_diag_set(diag, -EINVAL, "the plan is not JSON");
    sel = calloc(nagents + PROTO_PLAN_MAX_NODES + 1, sizeof(*sel));
    if (!sel) {
        cJSON_Delete(root);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    cJSON_ArrayForEach(jw, cJSON_GetObjectItemCaseSensitive(root, "workers"))
    {
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(jw, "nodes");
        size_t nsel = 0, t = 0;
        bool star;
        json_group_selects(jw, NULL, &star);
        /* The nodes the group runs on: every agent for "*" (unknown without
         * agents: nothing to check), else the ones it names. */
        if (star && !agents) {
            g++;
            continue;
        }
        if (star)
            for (size_t i = 0; i < nagents; i++)
                sel[nsel++] = agents[i];
        cJSON_ArrayForEach(e, nodes)
        {
            if (cJSON_IsString(e) && strcmp(e->valuestring, "*") &&
                !name_in(e->valuestring, sel, nsel))
                sel[nsel++] = e->valuestring;
        }
        cJSON_ArrayForEach(jt, cJSON_GetObjectItemCaseSensitive(jw, "targets"))
        {
            const cJSON *jp = cJSON_GetObjectItemCaseSensitive(jt, "path");
            char q[96], s[96], msg[512];
            if (!cJSON_IsObject(jp)) {
                t++;
                continue;
            }
            /* The typos first: one may be why a node has no path. */
            cJSON_ArrayForEach(e, jp)
            {
                const char *near;
                if (!strcmp(e->string, "*") || name_in(e->string, sel, nsel))
                    continue;
                near = iof_opt_suggest(e->string, agents ? (const char *const *)agents : sel,
                                       agents ? nagents : nsel);
                snprintf(msg, sizeof(msg),
                         "workers[%zu].targets[%zu].path: key %s names no node the group runs "
                         "on%s%s%s",
                         g, t, plan_quote(q, sizeof(q), e->string), near ? " (did you mean " : "",
                         near ? plan_quote(s, sizeof(s), near) : "", near ? "?)" : "");
                if (warn)
                    warn(arg, msg);
            }
            if (!cJSON_GetObjectItemCaseSensitive(jp, "*"))
                for (size_t i = 0; i < nsel; i++)
                    if (!cJSON_GetObjectItemCaseSensitive(jp, sel[i])) {
                        rc = iof_diag_set(diag, IOF_EPLAN,
                                          "workers[%zu].targets[%zu].path: no path for node %s "
                                          "and no \"*\" entry",
                                          g, t, plan_quote(q, sizeof(q), sel[i]));
                        goto out;
                    }
            t++;
        }
        g++;
    }
out:
    free(sel);
    cJSON_Delete(root);
    return rc;
}

char *proto_plan_node_text(const char *text, const char *node, struct iof_diag *diag)
{
    cJSON *root = cJSON_Parse(text), *jw, *jt;
    char *out = NULL;
    size_t g = 0;

    if (!root) {
        iof_diag_set(diag, -EINVAL, "the plan is not JSON");
        return NULL;
    }
    cJSON_ArrayForEach(jw, cJSON_GetObjectItemCaseSensitive(root, "workers"))
    {
        size_t t = 0;
        bool star, runs = json_group_selects(jw, node, &star);
        cJSON_ArrayForEach(jt, cJSON_GetObjectItemCaseSensitive(jw, "targets"))
        {
            cJSON *jp = cJSON_GetObjectItemCaseSensitive(jt, "path"), *v, *s;
            if (!cJSON_IsObject(jp)) {
                t++;
                continue;
            }
            v = cJSON_GetObjectItemCaseSensitive(jp, node);
            if (!v)
                v = cJSON_GetObjectItemCaseSensitive(jp, "*");
            /* A group the node does not run: any of the paths (the agent
             * only reads it), the first. */
            if (!v && !runs)
                v = jp->child;
            if (!cJSON_IsString(v)) {
                char q[96];
                iof_diag_set(diag, IOF_EPLAN,
                             "workers[%zu].targets[%zu].path: no path for node %s and no \"*\" "
                             "entry",
                             g, t, plan_quote(q, sizeof(q), node));
                goto out;
            }
            s = cJSON_CreateString(v->valuestring);
            if (!s || !cJSON_ReplaceItemInObjectCaseSensitive(jt, "path", s)) {
                cJSON_Delete(s);
                iof_diag_set(diag, -ENOMEM, "out of memory");
                goto out;
            }
            t++;
        }
        g++;
    }
    out = proto_json_print_exact(root);
    if (!out)
        iof_diag_set(diag, -ENOMEM, "out of memory");
out:
    cJSON_Delete(root);
    return out;
}

bool proto_plan_has_target_maps(const struct iof_plan *p)
{
    for (size_t g = 0; g < p->nworkers; g++)
        for (size_t t = 0; t < p->workers[g].ntargets; t++)
            if (p->workers[g].targets[t].nnode_paths || !p->workers[g].targets[t].path[0])
                return true;
    return false;
}
