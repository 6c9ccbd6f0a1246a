/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_set.c - `--set KEY=VALUE` and `--unset KEY`: a dotted key
 * checked against the plan schema and applied to the JSON tree before
 * validation (missing parents created, an index may append). */
#include "proto/plan_internal.h"
#include "proto/name.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define OV_MAX_STEPS 16

struct ov_step {
    bool is_index;
    size_t index;
    char name[PROTO_NODE_NAME_MAX + 1]; /* a key, or a node name */
};

static int set_fail(struct iof_diag *diag, const char *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_fail(struct iof_diag *diag, const char *arg, const char *fmt, ...)
{
    char why[400], a[96];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return iof_diag_set(diag, IOF_EPLAN, "--%s %s: %s", strchr(arg, '=') ? "set" : "unset",
                        plan_sanitize(a, sizeof(a), arg), why);
}

/* A key name's characters: the schema's (letters, digits, '_'), and a node
 * name's '-' for a key of a per-node map (workers[0].targets[0].path.node-1;
 * "*" is a key of its own; a node name's '.' is taken after "path" only). */
static bool is_ident(char ch, bool first)
{
    (void)first;
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '-' ||
           is_digit(ch);
}

/* KEY (klen bytes) into steps; canon gets the path as validation prints it. */
static int ov_parse_key(const char *key, size_t klen, struct ov_step *st, size_t *nst, char *canon,
                        size_t ccap, const char **why)
{
    size_t i = 0, n = 0, co = 0;

    canon[0] = '\0';
    /* The canonical form is never longer than the key, so it fits canon. */
    if (klen >= ccap) {
        *why = "key is too long";
        return -EINVAL;
    }
    while (i < klen) {
        size_t start = i;
        bool dot = false;
        if (n == OV_MAX_STEPS) {
            *why = "key is too deep";
            return -EINVAL;
        }
        if (n && key[i] != '[') {
            if (key[i] != '.') {
                *why = "expected '.' or '[' between keys";
                return -EINVAL;
            }
            start = ++i;
            dot = true;
        }
        if (!dot && key[i] == '[') {
            uint64_t idx = 0;
            if (n == 0) {
                *why = "must start with a key name";
                return -EINVAL;
            }
            for (i++; i < klen && is_digit(key[i]); i++) {
                if (idx > 1000000) {
                    *why = "index too large";
                    return -EINVAL;
                }
                idx = idx * 10 + (uint64_t)(key[i] - '0');
            }
            if (i == start + 1 || i >= klen || key[i] != ']') {
                *why = "expected an index like [0]";
                return -EINVAL;
            }
            i++;
            st[n].is_index = true;
            st[n].index = (size_t)idx;
            co += (size_t)snprintf(canon + co, ccap - co, "[%zu]", (size_t)idx);
        } else {
            bool node = n && !st[n - 1].is_index && !strcmp(st[n - 1].name, "path");
            if (i < klen && key[i] == '*')
                i++;
            else
                /* A node name (path.NODE) may hold '.': it is the rest of
                 * the key (path.esx01.lab), as a path has no deeper keys. */
                while (i < klen && (is_ident(key[i], i == start) || (node && key[i] == '.')))
                    i++;
            if (i == start) {
                *why = "expected a key name";
                return -EINVAL;
            }
            if (i - start >= sizeof(st[n].name)) {
                *why = "key name too long";
                return -EINVAL;
            }
            st[n].is_index = false;
            memcpy(st[n].name, key + start, i - start);
            st[n].name[i - start] = '\0';
            co += (size_t)snprintf(canon + co, ccap - co, "%s%s", n ? "." : "", st[n].name);
        }
        n++;
    }
    if (n == 0) {
        *why = "empty key";
        return -EINVAL;
    }
    *nst = n;
    return 0;
}

/* The value of --set: JSON when VALUE parses as JSON, else a bare string.
 * JSON null is the string "null" too: a bare word is always a value (the
 * null engine), removing a key is --unset's job. Returns NULL on ENOMEM or
 * (with *nul set) when a JSON string holds \u0000. */
static cJSON *ov_value(const char *value, bool *nul)
{
    const char *end = NULL;
    size_t len = strlen(value);
    bool esc;
    cJSON *v;

    *nul = false;
    v = cJSON_ParseWithLengthOpts(value, len, &end, 0);
    if (v && end) {
        while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
            end++;
        if (*end) {
            cJSON_Delete(v);
            v = NULL;
        }
    }
    if (v && cJSON_IsNull(v)) {
        cJSON_Delete(v);
        v = NULL;
    }
    if (v && plan_find_nul(value, len, &esc) != SIZE_MAX) {
        cJSON_Delete(v);
        *nul = true;
        return NULL;
    }
    if (!v)
        v = cJSON_CreateString(value);
    return v;
}

/* Where the walk stands, for messages: the canonical prefix so far. */
static void ov_prefix(const struct ov_step *st, size_t n, char *buf, size_t cap)
{
    size_t o = 0;

    buf[0] = '\0';
    for (size_t k = 0; k < n && o < cap; k++) {
        if (st[k].is_index)
            o += (size_t)snprintf(buf + o, cap - o, "[%zu]", st[k].index);
        else
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", k ? "." : "", st[k].name);
    }
}

/* workers[G].targets[T].path.NODE (step k is "path" of target object cur):
 * sets or removes (v NULL) one entry of the target's per-node map. A plain
 * path there becomes the map's "*" entry; a map is made when there is none. */
static int ov_map_entry(cJSON *cur, const char *arg, const struct ov_step *st, size_t k, size_t nst,
                        cJSON *v, struct iof_diag *diag)
{
    cJSON *map;
    const char *node = st[k + 1].name;
    char pre[256];

    ov_prefix(st, k + 1, pre, sizeof(pre));
    if (k + 2 < nst) {
        cJSON_Delete(v);
        return set_fail(diag, arg, "'%s.%s' is a path, it has no keys", pre, node);
    }
    if (strcmp(node, "*")) {
        struct iof_diag nd = {{0}};
        if (proto_node_name_check("node name", node, &nd)) {
            cJSON_Delete(v);
            return set_fail(diag, arg, "%s", nd.msg);
        }
    }
    if (!cJSON_IsObject(cur)) {
        cJSON_Delete(v);
        ov_prefix(st, k, pre, sizeof(pre));
        return set_fail(diag, arg, "'%s' must be an object, the plan has %s", pre, plan_jtype(cur));
    }
    map = cJSON_GetObjectItemCaseSensitive(cur, "path");
    if (!v) { /* --unset: remove the entry, if there is a map */
        if (cJSON_IsObject(map))
            cJSON_DeleteItemFromObjectCaseSensitive(map, node);
        return 0;
    }
    if (map && !cJSON_IsObject(map)) {
        cJSON *obj = cJSON_CreateObject();
        cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(cur, "path");
        if (!obj || !cJSON_AddItemToObject(cur, "path", obj)) {
            cJSON_Delete(obj);
            cJSON_Delete(old);
            cJSON_Delete(v);
            return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
        }
        /* A plain path is every node's: it stays so as the "*" entry. */
        if (!cJSON_AddItemToObject(obj, "*", old)) {
            cJSON_Delete(old);
            cJSON_Delete(v);
            return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
        }
        map = obj;
    } else if (!map) {
        map = cJSON_AddObjectToObject(cur, "path");
        if (!map) {
            cJSON_Delete(v);
            return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
        }
    }
    if (cJSON_GetObjectItemCaseSensitive(map, node)
            ? !cJSON_ReplaceItemInObjectCaseSensitive(map, node, v)
            : !cJSON_AddItemToObject(map, node, v)) {
        cJSON_Delete(v);
        return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
    }
    return 0;
}

int plan_ov_apply(cJSON *root, const char *arg, char *canon, size_t ccap, struct iof_diag *diag)
{
    struct ov_step st[OV_MAX_STEPS];
    const struct objdef *def = &plan_root_def;
    enum shape shape = SH_OBJECT;
    const char *eq = strchr(arg, '='), *why;
    bool unset = !eq; /* "KEY" alone: --unset KEY */
    char pre[256], msg[300];
    size_t nst;
    cJSON *cur = root, *v = NULL;
    bool nul;

    if (ov_parse_key(arg, unset ? strlen(arg) : (size_t)(eq - arg), st, &nst, canon, ccap, &why))
        return set_fail(diag, arg, "invalid key: %s", why);
    if (!unset) {
        v = ov_value(eq + 1, &nul);
        if (!v && nul)
            return set_fail(diag, arg, "\\u0000 (NUL) is not allowed in strings");
        if (!v)
            return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
    }

    for (size_t k = 0; k < nst; k++) {
        bool last = k + 1 == nst, ok;
        cJSON *child;
        ov_prefix(st, k, pre, sizeof(pre));
        if (!st[k].is_index && def == &plan_target_def && k + 1 < nst && !st[k + 1].is_index &&
            !strcmp(st[k].name, "path"))
            return ov_map_entry(cur, arg, st, k, nst, v, diag);
        if (!st[k].is_index) {
            const struct field *f;
            if (shape == SH_ARRAY) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' is an array: index it like %s[0]", pre, pre);
            }
            if (shape == SH_VALUE || !def) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' is a single value, it has no keys", pre);
            }
            if (!cJSON_IsObject(cur)) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' must be an object, the plan has %s", pre,
                                plan_jtype(cur));
            }
            f = plan_find_field(def, st[k].name);
            if (!f) {
                cJSON_Delete(v);
                plan_unknown_key_msg(msg, sizeof(msg), def, st[k].name);
                return set_fail(diag, arg, "%s", msg);
            }
            child = cJSON_GetObjectItemCaseSensitive(cur, st[k].name);
            if (last && unset) {
                cJSON_DeleteItemFromObjectCaseSensitive(cur, st[k].name);
                return 0;
            }
            if (unset && !child)
                return 0; /* nothing there to remove */
            if (last) {
                ok = child ? cJSON_ReplaceItemInObjectCaseSensitive(cur, st[k].name, v)
                           : cJSON_AddItemToObject(cur, st[k].name, v);
                if (!ok) {
                    cJSON_Delete(v);
                    return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
                }
                return 0;
            }
            if (!child && plan_field_shape(f) != SH_VALUE) {
                child =
                    plan_field_shape(f) == SH_OBJECT ? cJSON_CreateObject() : cJSON_CreateArray();
                if (!child || !cJSON_AddItemToObject(cur, st[k].name, child)) {
                    cJSON_Delete(child);
                    cJSON_Delete(v);
                    return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
                }
            }
            cur = child;
            shape = plan_field_shape(f);
            def = f->sub;
        } else {
            size_t size;
            if (shape != SH_ARRAY) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' is not an array", pre);
            }
            if (!cJSON_IsArray(cur)) {
                cJSON_Delete(v);
                return set_fail(diag, arg, "'%s' must be an array, the plan has %s", pre,
                                plan_jtype(cur));
            }
            size = (size_t)cJSON_GetArraySize(cur);
            if (st[k].index > size) {
                cJSON_Delete(v);
                return set_fail(diag, arg,
                                "index %zu is out of range: '%s' has %zu entr%s (%zu appends)",
                                st[k].index, pre, size, size == 1 ? "y" : "ies", size);
            }
            if (unset && st[k].index == size) {
                if (!last)
                    return 0; /* nothing there to remove */
                return set_fail(diag, arg, "index %zu is out of range: '%s' has %zu entr%s",
                                st[k].index, pre, size, size == 1 ? "y" : "ies");
            }
            if (last && unset) {
                cJSON_DeleteItemFromArray(cur, (int)st[k].index);
                return 0;
            }
            if (last) {
                ok = st[k].index == size ? cJSON_AddItemToArray(cur, v)
                                         : cJSON_ReplaceItemInArray(cur, (int)st[k].index, v);
                if (!ok) {
                    cJSON_Delete(v);
                    return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
                }
                return 0;
            }
            if (st[k].index == size) {
                if (!def) {
                    cJSON_Delete(v);
                    return set_fail(diag, arg, "'%s' entries are single values, they have no keys",
                                    pre);
                }
                child = cJSON_CreateObject();
                if (!child || !cJSON_AddItemToArray(cur, child)) {
                    cJSON_Delete(child);
                    cJSON_Delete(v);
                    return iof_diag_set(diag, -ENOMEM, "--set: out of memory");
                }
            } else {
                child = cJSON_GetArrayItem(cur, (int)st[k].index);
            }
            cur = child;
            shape = def ? SH_OBJECT : SH_VALUE;
        }
    }
    cJSON_Delete(v); /* not reached: the last step returns */
    return 0;
}
