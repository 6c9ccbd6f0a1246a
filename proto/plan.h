/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan.h - the plan loader: a JSON plan file (plus `--set` overrides)
 * in, a validated struct iof_plan out; and the `iofleet validate` listing.
 *
 * Units accepted in plans:
 *   size      JSON integer (bytes, 0..2^53) or a string "<digits>[k|m|g|t]",
 *             suffix case-insensitive, powers of 1024 ("4k" = 4096). No
 *             fractions, signs, spaces or other suffixes ("4KB" is refused:
 *             KB is ambiguous between 1000 and 1024).
 *   duration  JSON integer (seconds) or a string "<digits>(ms|s|m|h)"; a
 *             string must carry its unit ("10" is refused, 10 is 10 s).
 *
 * Defaults (Iometer-like, safe): run.ramp 0s, run.interval 1s; a line's
 * share is 100 when the spec has one line (required otherwise), read 100,
 * random 100, align 0 (automatic, see common/spec.h: random offsets on
 * multiples of the transfer size; printed as "auto"), delay 0, burst 1;
 * a worker group's nodes ["*"], count 1, engine "libaio", queue_depth 1,
 * pattern "random", no seed, hipri false; a target's size 0 (existing file or whole
 * device; required for relative paths, which name test files to create),
 * range the whole target; no cycle.
 *
 * The cJSON tree never leaves plan.c.
 */
#ifndef IOF_PROTO_PLAN_H
#define IOF_PROTO_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "common/spec.h"

/* Limits enforced by the loader: the plan limits are common/spec.h's one
 * set (IOF_PLAN_MAX_*, IOF_NODE_MAX_*), named here as the loader uses them. */
#define PROTO_PLAN_MAX_FILE (16u << 20) /* bytes of plan text */
#define PROTO_PLAN_MAX_NOTES 256        /* notes[] entries */
#define PROTO_PLAN_MAX_NOTE 1024        /* bytes of one note */
#define PROTO_PLAN_MAX_SPECS IOF_PLAN_MAX_SPECS
#define PROTO_PLAN_MAX_LINES IOF_PLAN_MAX_LINES
#define PROTO_PLAN_MAX_GROUPS IOF_PLAN_MAX_GROUPS
#define PROTO_PLAN_MAX_NODES IOF_PLAN_MAX_NODES
#define PROTO_PLAN_MAX_TARGETS IOF_PLAN_MAX_TARGETS
#define PROTO_PLAN_MAX_COUNT IOF_PLAN_MAX_COUNT
#define PROTO_PLAN_MAX_QD IOF_PLAN_MAX_QD
#define PROTO_PLAN_MAX_IO_SIZE IOF_PLAN_MAX_IO_SIZE
#define PROTO_PLAN_MAX_BURST IOF_PLAN_MAX_BURST
#define PROTO_PLAN_MIN_INTERVAL_NS 100000000ull  /* 100 ms */
#define PROTO_PLAN_MAX_DELAY_NS 3600000000000ull /* 1 h */
/* A test's ramp and measured window: the longest sleep or run a plan can ask
 * of an agent is bounded (a ramp of 100000h is a typo, not a test). */
#define PROTO_PLAN_MAX_RAMP_NS 3600000000000ull       /* 1 h */
#define PROTO_PLAN_MAX_DURATION_NS 604800000000000ull /* 7 days (168h) */
#define PROTO_PLAN_MAX_IO_LIMIT (1ull << 60)          /* bytes per worker: 1 EiB */

/* Loads the plan file at `path` (borrowed; also the name used in messages;
 * "-" reads standard input, named "stdin" in messages), applies `overrides`
 * (borrowed, in order, later ones win: "KEY=VALUE" as given to --set, or
 * "KEY" alone as given to --unset) and validates it.
 *
 * On success returns 0 and fills *out: the caller owns its contents and
 * releases them with iof_plan_free(). On failure returns IOF_EPLAN (file
 * unreadable, too large, bad JSON, bad override or invalid plan) or -ENOMEM,
 * leaves *out zeroed (iof_plan_free() on it is harmless) and, when diag is
 * not NULL, puts one line in diag->msg:
 *   "plan.json: specs[1].lines[0].read: must be 0..100, got 170"
 *   "--set workers[0].qd=4: unknown key 'qd' (expected one of: ...)"
 * A validation error caused by an override says so at the end:
 *   "... (after --set run.duration=0s)"
 *
 * --set semantics: KEY is a dotted path with indices, e.g. run.duration,
 * workers[0].queue_depth, specs[0].lines[1].read. Every key is checked
 * against the plan schema; a known key missing from the file is created
 * (with any missing parent objects). An index may equal the array's length
 * to append. VALUE is taken as JSON when it parses as JSON (32, "4k", {...},
 * [...]), else as a bare string (5s, 64m, libaio); a bare null is the
 * string "null" too (the null engine), never a deletion.
 * --unset semantics: "KEY" (no '=') removes an object key or an array entry
 * (the later entries move up); a key or parent that is not there is not an
 * error, an index past the end is. Overrides are applied to the JSON tree
 * before validation, so bad values get the same checks as the file's. */
int proto_plan_load(const char *path, const char *const *overrides, size_t noverrides,
                    struct iof_plan *out, struct iof_diag *diag);

/* Same as proto_plan_load(), and on success *canonical (new, free()) holds
 * the plan as compact JSON with the overrides applied: the text the manager
 * sends to agents, which parse and validate it with proto_plan_parse(). */
int proto_plan_load_canonical(const char *path, const char *const *overrides, size_t noverrides,
                              struct iof_plan *out, char **canonical, struct iof_diag *diag);

/* The plan as agents receive it: `canonical` (borrowed) without the keys
 * the manager acts on for them (run.cleanup travels in the prepare message
 * instead, so that agents before protocol 1.2, which refuse unknown plan keys,
 * still take the plan) or alone (run.target_histograms, the result files'). New text (free()), NULL
 * when out of memory or not JSON. */
char *proto_plan_wire_text(const char *canonical);

/* `canonical` (borrowed) indented as the quick form writes a plan (one key
 * per line, tabs, a final newline), every number as exact as in it: what
 * `--print-plan` shows of a quick plan, overrides applied. New text
 * (free()), NULL when out of memory or not JSON. */
char *proto_plan_text_indented(const char *canonical);

/* Per-node target maps (workers[].targets[].path given as an object of
 * agent names, and "*" for any other node, to paths; proto/plan_tmap.c).
 *
 * proto_plan_map_check(): with `agents` (borrowed, the names of the nodes
 * that run the plan; NULL when unknown, as in `iofleet validate`), every
 * node a group runs on - its named nodes, or every agent for "*" - must have
 * an entry or a "*" one: else IOF_EPLAN and diag holds
 * "workers[0].targets[0].path: no path for node 'node3' and no "*" entry".
 * A key naming no node the group runs on is a typo, passed to warn(arg,
 * msg) (when not NULL) with the closest name ("did you mean ..."). A group
 * of "*" is not checked without agents. `canonical` is the plan's text.
 *
 * proto_plan_node_text(): the plan text `text` (borrowed, canonical or wire
 * text) as node `node` receives it: every map replaced by that node's path
 * (its entry, else "*"; a group it does not run takes the first entry).
 * New text (free()), or NULL with diag set (a group it runs with no path
 * for it; out of memory).
 *
 * proto_plan_has_target_maps(): whether any target of p has a map. */
int proto_plan_map_check(const char *canonical, const char *const *agents, size_t nagents,
                         void (*warn)(void *arg, const char *msg), void *arg,
                         struct iof_diag *diag);
char *proto_plan_node_text(const char *text, const char *node, struct iof_diag *diag);
bool proto_plan_has_target_maps(const struct iof_plan *p);

/* Same as proto_plan_load() for plan text in memory: `text` (borrowed, `len`
 * bytes, need not be NUL-terminated); `name` (borrowed) is used in messages
 * in place of a file name. */
int proto_plan_parse(const char *name, const char *text, size_t len, const char *const *overrides,
                     size_t noverrides, struct iof_plan *out, struct iof_diag *diag);

/* proto_plan_parse() with the canonical text of proto_plan_load_canonical(). */
int proto_plan_parse_canonical(const char *name, const char *text, size_t len,
                               const char *const *overrides, size_t noverrides,
                               struct iof_plan *out, char **canonical, struct iof_diag *diag);

/* Prints the plan as `iofleet validate` shows it: plan name, run timing,
 * cycle, specs with their lines, worker groups, then one entry per expanded
 * test with every worker group as it runs in that test. Stable text meant
 * for humans (and for diffing between plan versions). Writes nothing else;
 * errors of `f` are the caller's to check. */
void proto_plan_print(const struct iof_plan *p, FILE *f);

/* Unit parsers, as used for plan strings (see the top of this file).
 * Return 0, -EINVAL (syntax: empty, sign, fraction, unknown or missing
 * unit) or -ERANGE (does not fit 64 bits). */
int proto_plan_parse_size(const char *s, uint64_t *out);
int proto_plan_parse_duration(const char *s, uint64_t *out_ns);

/* Formatters used by proto_plan_print(): the largest exact unit ("4k", "1536",
 * "64m"; "500ms", "10s", "2m", "1h"; a duration that no single unit divides
 * is written in parts, "1m30s"). Always NUL-terminate when cap > 0. */
void proto_plan_format_size(uint64_t bytes, char *buf, size_t cap);
void proto_plan_format_duration(uint64_t ns, char *buf, size_t cap);

/* One key of the plan schema (proto/plan_schema.c, the table every reader
 * of plans uses), as iofleet-plan(5) names it: `path` is dotted with [] for
 * arrays of objects ("workers[].targets[].range.offset"; a cycle
 * parameter's keys under each of cycle.queue_depth, .workers, .targets),
 * `kind` one of "integer", "number", "size", "duration", "percentage",
 * "string", "one of", "boolean", "object", "array", `help` one line. All
 * three are borrowed and valid during the call only. */
struct proto_plan_key {
    const char *path;
    const char *kind;
    const char *help;
};

/* Calls fn(arg, key) for every key of the schema, each object's keys in
 * table order followed by the keys inside it. Stops at and returns the first
 * non-zero value fn returns; 0 otherwise. */
int proto_plan_keys(int (*fn)(void *arg, const struct proto_plan_key *key), void *arg);

#endif
