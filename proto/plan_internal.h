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
#include "common/engine_facts.h"
#include "common/err.h"
#include "common/spec.h"
#include "proto/json.h"
#include "proto/plan.h"

#define DIRECT_IO_ALIGN 512u                /* O_DIRECT granule that holds on every device */
#define TEST_FILE_ALIGN 4096u               /* test files: whole 4 KiB blocks */
#define NS_PER_MS ((uint64_t)IOF_NS_PER_MS) /* uint64_t, for PRIu64 */
#define NS_PER_S ((uint64_t)IOF_NS_PER_S)
#define NS_PER_MIN (60 * NS_PER_S)
#define NS_PER_HOUR (3600 * NS_PER_S)

/* ---- schema: the one table of plan keys (plan_schema.c) ---- */

/* What a key holds: how its value is read, what --set may build under it. */
enum plan_kind {
    PK_INT,      /* JSON integer, min..max */
    PK_NUMBER,   /* JSON number; its range is its object's code */
    PK_SIZE,     /* bytes, or a string like "4k"; min..max (max UINT64_MAX: unbounded) */
    PK_DURATION, /* seconds, or a string like "10s"; at most max */
    PK_PCT,      /* a whole percentage: "N%" or N, 0..100 */
    PK_STRING,   /* non-empty text of at most max bytes */
    PK_ENUM,     /* one of names[]; def is the index of the default */
    PK_BOOL,     /* true or false; def 0 or 1 */
    PK_OBJECT,   /* an object of sub's keys */
    PK_ARRAY,    /* min..max entries: objects of sub's keys, or values when sub is NULL */
};

#define PF_REQUIRED 0x1u         /* no default: absent is an error */
#define PLAN_NO_OFF ((size_t)-1) /* read into a variable of the caller (plan_read_to) */

enum shape { SH_VALUE, SH_OBJECT, SH_ARRAY };

struct objdef;
/* One key of one object, like a row of fio's options table. A key whose
 * value needs more than its kind (a percentage or a size, a bool or a name)
 * is read by its object's parse function; the table still states it. */
struct field {
    const char *name;
    enum plan_kind kind;
    size_t off;   /* offsetof the value in the struct the object fills, or PLAN_NO_OFF */
    size_t width; /* sizeof that member: 1 (bool), 4 or 8; a char array's size */
    uint64_t min, max;
    uint64_t def;             /* when absent and not PF_REQUIRED */
    const char *def_str;      /* PK_STRING's default */
    unsigned flags;           /* PF_* */
    const char *const *names; /* PK_ENUM */
    size_t nnames;
    const struct objdef *sub; /* PK_OBJECT, or PK_ARRAY of objects */
    const char *help;         /* one line: what it is for (kind, range, default are above) */
};

struct objdef {
    const struct field *fields;
    size_t nfields;
};

extern const struct objdef plan_root_def, plan_run_def, plan_spec_def, plan_line_def,
    plan_worker_def, plan_target_def, plan_range_def, plan_rate_def, plan_data_def, plan_cycle_def,
    plan_cycle_param_def, plan_rate_cycle_def, plan_find_max_def;
extern const char *const plan_engine_names[IOF_ENGINE_COUNT];
extern const char *const plan_pattern_names[3],
    *const plan_arrival_names[2], *const plan_random_map_names[2],
                                      *const plan_verify_names[3], *const plan_verify_mode_names[2];

/* The key `name` of def, NULL when it has none. */
const struct field *plan_find_field(const struct objdef *def, const char *name);
/* SH_OBJECT, SH_ARRAY or SH_VALUE: what --set walks into. */
enum shape plan_field_shape(const struct field *f);
/* Engines that open targets with O_DIRECT (sizes must be 512-byte multiples). */
bool plan_engine_direct(const char *name);
/* The facts of a group's engine (common/engine_facts.h); the name was checked
 * when the group was read, so an unknown one (never seen) reads as null. */
const struct iof_engine_facts *plan_engine_facts(const char *name);

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
/* Member `key` of obj read as def's table says (kind, range, default) into
 * its place in base, the struct the object fills. Returns 0 or IOF_EPLAN
 * (the message set; the path left at the member). */
int plan_read(struct pctx *c, const cJSON *obj, const struct objdef *def, const char *key,
              void *base);
/* Same, into *out: a PLAN_NO_OFF key's variable (uint64_t for numbers and
 * enums, bool, const char * borrowed from the tree for strings). */
int plan_read_to(struct pctx *c, const cJSON *obj, const struct objdef *def, const char *key,
                 void *out);
/* plan_check_array() with the bounds the table gives array `key` of def. */
int plan_check_entries(struct pctx *c, const cJSON *it, const struct objdef *def, const char *key,
                       size_t *n);
/* plan_read_to() with an upper bound of the caller's (a cycle parameter's
 * own limit) in place of the table's. */
int plan_read_upto(struct pctx *c, const cJSON *obj, const struct objdef *def, const char *key,
                   uint64_t max, void *out);
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
/* "N%" of a string holding a whole percentage 0..100 into *pct (true);
 * anything else false. */
bool plan_pct_string(const cJSON *it, uint64_t *pct);
/* A whole percentage, "N%" or the number N, 0..100; 0 when absent. */
int plan_pct_field(struct pctx *c, const cJSON *obj, const char *key, uint32_t *out);
int plan_check_object(struct pctx *c, const cJSON *it);
/* An array of min..max entries; *n its length. */
int plan_check_array(struct pctx *c, const cJSON *it, size_t min, size_t max, size_t *n);

/* plan_workers.c */
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
