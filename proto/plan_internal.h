/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_internal.h - what the files of the plan loader share, not part
 * of its API (proto/plan.h): the schema, the validation context and its
 * messages, the typed member readers, the units and the steps of the
 * pipeline. Only proto/plan*.c include it; the cJSON tree stays inside them.
 *
 * Messages: "<name>: <json path>: <reason>". The path is tracked in a small
 * stack (struct pctx) pushed and popped around each member; on failure it is
 * left in place so the message (and --set provenance) can use it.
 */
#ifndef IOF_PROTO_PLAN_INTERNAL_H
#define IOF_PROTO_PLAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/spec.h"
#include "proto/plan.h"

#define JSON_MAX_EXACT 9007199254740992.0   /* 2^53: larger JSON numbers lose precision */
#define DIRECT_IO_ALIGN 512u                /* O_DIRECT granule that holds on every device */
#define TEST_FILE_ALIGN 4096u               /* test files: whole 4 KiB blocks */
#define NS_PER_MS ((uint64_t)IOF_NS_PER_MS) /* uint64_t, for PRIu64 */
#define NS_PER_S ((uint64_t)IOF_NS_PER_S)
#define NS_PER_MIN (60 * NS_PER_S)
#define NS_PER_HOUR (3600 * NS_PER_S)

/* ---- schema: which keys exist where (validation and --set share it) ---- */

enum shape { SH_VALUE, SH_OBJECT, SH_ARRAY };

struct objdef;
struct field {
    const char *name;
    enum shape shape;
    const struct objdef *def; /* the object, or an array's element object; NULL: values */
};

struct objdef {
    const struct field *fields;
    size_t nfields;
};

extern const struct objdef plan_root_def, plan_run_def, plan_spec_def, plan_line_def,
    plan_worker_def, plan_target_def, plan_range_def, plan_rate_def, plan_data_def, plan_cycle_def,
    plan_cycle_param_def, plan_rate_cycle_def, plan_find_max_def;

/* ---- validation context ---- */

struct pctx {
    const char *name; /* file name for messages */
    struct iof_diag *diag;
    char path[256]; /* JSON path of the member being checked */
    size_t plen;
};

size_t plan_path_add(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void plan_fail_msg(struct pctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records why the plan is invalid and evaluates to IOF_EPLAN. A macro, so that the compiler
 * sees the non-zero result at each call site: a parser's out-parameters are set only when it
 * returns 0, and gcc -O3 (Release) cannot otherwise prove the caller never reads them after
 * `if ((rc = parse_x(c, ..., &out))) return rc;` (it warned -Wmaybe-uninitialized). */
#define fail(c, ...) (plan_fail_msg((c), __VA_ARGS__), IOF_EPLAN)

static inline int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static inline char lower(char ch)
{
    return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* plan_units.c */
/* Leading decimal digits of s into *v; *end after them. -EINVAL with *why
 * for a missing number, -ERANGE when it does not fit 64 bits. */
int plan_parse_digits(const char *s, uint64_t *v, const char **end, const char **why);
/* Sizes take fio's and Iometer's unit spellings, all powers of 1024 (iofleet
 * has no kb_base): k, kb, kib, in any case ("4k", "4K", "4kb", "4KiB"); the
 * same for m, g and t; b or nothing is bytes. */
int plan_parse_size(const char *s, uint64_t *out, const char **why);
int plan_parse_duration(const char *s, uint64_t *out, const char **why);

/* plan_field.c */
const struct field *plan_find_field(const struct objdef *def, const char *name);
/* Copies s for a message, escaped as for a terminal (common/text.h), cut
 * to fit with "...". */
char *plan_sanitize(char *buf, size_t cap, const char *s);
/* 'text', sanitized, for a user string inside a message. */
char *plan_quote(char *buf, size_t cap, const char *s);
const char *plan_jtype(const cJSON *it);
/* The value as the user wrote it, for "got ...". */
const char *plan_got(char *buf, size_t cap, const cJSON *it);
size_t plan_path_add(struct pctx *c, const char *fmt, ...);
size_t plan_path_key(struct pctx *c, const char *key);
size_t plan_path_index(struct pctx *c, size_t i);
void plan_path_pop(struct pctx *c, size_t old);
void plan_fail_msg(struct pctx *c, const char *fmt, ...);
int plan_nomem(struct pctx *c);
/* "unknown key 'x' (did you mean 'y'?)" or "(expected one of: ...)" into buf. */
void plan_unknown_key_msg(char *buf, size_t cap, const struct objdef *def, const char *key);
/* Every key of obj is in def, and none appears twice. Because unknown keys
 * stop the scan, at most def->nfields earlier siblings are compared. */
int plan_check_keys(struct pctx *c, const cJSON *obj, const struct objdef *def);
const cJSON *plan_member(const cJSON *obj, const char *key);
/* A JSON number holding an integer; its range is the caller's. */
int plan_json_integer(struct pctx *c, const cJSON *it, const char *what, double *d);
int plan_json_uint(struct pctx *c, const cJSON *it, uint64_t min, uint64_t max, uint64_t *out);
/* Integer member `key` in min..max; def == NULL means required. */
int plan_int_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                   uint64_t min, uint64_t max, uint64_t *out);
int plan_json_size(struct pctx *c, const cJSON *it, uint64_t *out);
/* Size member `key` in min..max (max UINT64_MAX: no upper bound). */
int plan_size_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                    uint64_t min, uint64_t max, uint64_t *out);
int plan_json_duration(struct pctx *c, const cJSON *it, uint64_t *out);
/* Duration member `key` at most max (UINT64_MAX: unbounded). */
int plan_dur_field(struct pctx *c, const cJSON *obj, const char *key, const uint64_t *def,
                   uint64_t max, uint64_t *out);
/* String value: non-empty, at most maxlen bytes. *out borrows from the tree. */
int plan_json_string(struct pctx *c, const cJSON *it, size_t maxlen, const char **out);
int plan_str_field(struct pctx *c, const cJSON *obj, const char *key, const char *def,
                   size_t maxlen, const char **out);
int plan_enum_field(struct pctx *c, const cJSON *obj, const char *key, size_t def,
                    const char *const *names, size_t n, size_t *out);
/* Boolean member `key` (true or false), def when absent. */
int plan_bool_field(struct pctx *c, const cJSON *obj, const char *key, bool def, bool *out);
int plan_check_object(struct pctx *c, const cJSON *it);
/* An array of min..max entries; *n its length. */
int plan_check_array(struct pctx *c, const cJSON *it, size_t min, size_t max, size_t *n);

/* plan_workers.c */
/* Engines that open targets with O_DIRECT (sizes must be 512-byte multiples). */
bool plan_engine_direct(const char *name);
extern const char *const plan_verify_names[];
extern const char *const plan_verify_mode_names[];
int plan_parse_workers(struct pctx *c, const cJSON *root, struct iof_plan *p);

/* plan_check.c */
/* Every test needs an end: a spec without a duration of its own takes
 * run.duration, and one without either needs an io_limit (it then stops
 * at the latest after IOF_IO_LIMIT_MAX_DURATION_NS). run.interval must fit
 * every spec's window. */
int plan_run_check(struct pctx *c, const cJSON *root, const struct iof_plan *p);
/* Checks that need more than one member: O_DIRECT alignment of transfer
 * sizes, lines that cannot fit a target region, one test file given two
 * sizes. */
int plan_cross_check(struct pctx *c, const struct iof_plan *p);
/* A node's share of any test - the workers, and the workers x targets, of
 * every group selecting it - must fit one stats message (IOF_NODE_MAX_*):
 * what validates must run and report. A group naming no node or "*" selects
 * every node. Each group's share is taken at its largest over the cycle
 * (workers and targets cycles grow every group alike, so the sums of those
 * maxima are reached in one test). */
int plan_node_check(struct pctx *c, const struct iof_plan *p);

/* plan_cycle.c */
extern const char *const plan_spec_axis_names[];
int plan_parse_spec_cycle(struct pctx *c, const cJSON *root, struct iof_plan *p);
int plan_parse_cycle(struct pctx *c, const cJSON *root, struct iof_plan *p);

/* plan_set.c */
int plan_ov_apply(cJSON *root, const char *arg, char *canon, size_t ccap, struct iof_diag *diag);

/* plan.c */
/* Offset of the first raw NUL byte or \u0000 escape inside a string, or
 * SIZE_MAX. Outside strings a backslash is a JSON syntax error anyway. */
size_t plan_find_nul(const char *t, size_t len, bool *escape);

#endif
