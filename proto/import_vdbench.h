/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_vdbench.h - private to the vdbench importer: what its reader
 * (proto/import_vdbench_parse.c: lines, definitions, defaults, include=,
 * the parameter tables) hands its mapper (proto/import_vdbench.c: the
 * definitions as plan JSON). Not for other modules: they use
 * proto_import_vdbench() of proto/import.h. */
#ifndef IOF_PROTO_IMPORT_VDBENCH_H
#define IOF_PROTO_IMPORT_VDBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "proto/import.h"

#define VDB_MAX_LIST 64   /* entries of one (list) */
#define VDB_MAX_INCLUDE 8 /* include= depth */
#define VDB_NAME 65       /* bytes of a definition's name */
#define VDB_CURVE_DEFAULT "(10,50,70,80,90,100)"

enum vdb_kind { VDB_GEN, VDB_HD, VDB_SD, VDB_WD, VDB_RD };

struct vdb_kv {
    char *key, *val; /* owned by the context's text copies */
    const char *file;
    unsigned line;
};

struct vdb_def {
    enum vdb_kind kind;
    char name[VDB_NAME];
    bool is_default;
    const char *file;
    unsigned line;
    size_t first, count; /* its parameters in the kv array (the first is the name) */
};

struct vdb_ctx {
    const char *name; /* the top file's, for the plan's name */
    const char *dir;  /* where include= files are (NULL: refused) */
    struct iof_buf *msgs;
    bool failed, approximate;
    struct iof_buf notes;
    size_t nnotes;
    struct vdb_kv *kv;
    size_t nkv, capkv;
    struct vdb_def *def;
    size_t ndef, capdef;
    char **owned;
    size_t nowned, capowned;
    unsigned depth;
    const char *const *vars; /* "NAME=VALUE" for $NAME and !NAME (borrowed) */
    size_t nvars;
    bool *var_used; /* nvars entries: was vars[i] substituted somewhere? */
};

/* One message "FILE:LINE: TEXT"; a "note:" is also kept in the plan's notes. */
void proto_vdb_msg(struct vdb_ctx *c, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "FILE:LINE: error: cannot map KEY=VALUE: WHY". */
void proto_vdb_bad(struct vdb_ctx *c, const struct vdb_kv *kv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Values: a size with k/m/g/t (powers of 1024), a number, a size written
 * back in its largest exact unit, "(a,b,c)" split into at most max items
 * in buf (IOF_IMPORT_MAX_LINE + 1 bytes; 0 with an error naming kv when
 * there are more). */
int proto_vdb_size(const char *s, uint64_t *out);
int proto_vdb_num(const char *s, double *out);
size_t proto_vdb_list(struct vdb_ctx *c, const struct vdb_kv *kv, const char *v, char *buf,
                      char **items, size_t max);

/* Reads text (NUL-terminated, modified in place; file names it in
 * messages) into c's definitions; 0 or -ENOMEM (errors are messages). */
int proto_vdb_parse(struct vdb_ctx *c, const char *file, char *text);
/* A definition's parameter: its own last one, else the last kind=default
 * before it that gives it; NULL when neither. */
const struct vdb_kv *proto_vdb_get(const struct vdb_ctx *c, const struct vdb_def *d,
                                   const char *key);
/* A general parameter (compratio=...), the last one given; NULL when none. */
const struct vdb_kv *proto_vdb_gen(const struct vdb_ctx *c, const char *key);
/* The definitions of kind kv's list names ("sd1", "(sd1-sd8)", "sd*"), in
 * file order, at most max; 0 with an error when a name matches none. */
size_t proto_vdb_select(struct vdb_ctx *c, const struct vdb_kv *kv, enum vdb_kind kind,
                        const struct vdb_def **out, size_t max);
/* Every parameter is one of its kind's (false with errors when not); then
 * those without a plan key refused by name or named as ignored. */
bool proto_vdb_check_keys(struct vdb_ctx *c);
void proto_vdb_refuse_unexact(struct vdb_ctx *c);

#endif
