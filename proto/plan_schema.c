/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_schema.c - the one table of plan keys: for each key of each
 * object its kind, where its value goes, its range, its default and a line of
 * help. The member readers, the unknown-key check and "did you mean", --set,
 * the key listing and the man page check (tests/unit/proto/test_plan_keys.c) all
 * read it. A key is added here, read in its object's parse function (in table
 * order, which is also the order of its checks) and documented in
 * man/iofleet-plan.5. */
#include "proto/plan_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/engine_facts.h"
#include "common/ratecycle.h"

/* The engines' names, in the order of enum iof_engine_id (their facts,
 * common/engine_facts.h, say what each one is). */
const char *const plan_engine_names[] = {
    [IOF_ENGINE_LIBAIO] = "libaio", [IOF_ENGINE_URING] = "io_uring",  [IOF_ENGINE_SYNC] = "sync",
    [IOF_ENGINE_NULL] = "null",     [IOF_ENGINE_WINDOWS] = "windows",
};
_Static_assert(sizeof(plan_engine_names) / sizeof(plan_engine_names[0]) == IOF_ENGINE_COUNT,
               "plan_engine_names names every engine of common/engine_facts.h");

const struct iof_engine_facts *plan_engine_facts(const char *name)
{
    const struct iof_engine_facts *f = iof_engine_facts_find(name);
    return f ? f : &iof_engine_facts[IOF_ENGINE_NULL];
}

/* Engines that open targets with O_DIRECT (sizes must be 512-byte multiples). */
bool plan_engine_direct(const char *name)
{
    return plan_engine_facts(name)->direct;
}
const char *const plan_pattern_names[] = {"repeat", "pseudo", "random"};
_Static_assert(IOF_PATTERN_REPEAT == 0 && IOF_PATTERN_PSEUDO == 1 && IOF_PATTERN_RANDOM == 2,
               "plan_pattern_names follows enum iof_pattern");
const char *const plan_arrival_names[] = {"uniform", "poisson"};
const char *const plan_random_map_names[] = {"none", "once_per_pass"};
_Static_assert(IOF_ARRIVAL_UNIFORM == 0 && IOF_ARRIVAL_POISSON == 1,
               "plan_arrival_names follows enum iof_arrival");
const char *const plan_verify_names[] = {"none", "crc32c", "xxh64"};
_Static_assert(IOF_VERIFY_NONE == 0 && IOF_VERIFY_CRC32C == 1 && IOF_VERIFY_XXH64 == 2,
               "plan_verify_names follows enum iof_verify_algo");
const char *const plan_verify_mode_names[] = {"inline", "after"};
_Static_assert(IOF_VERIFY_INLINE == 0 && IOF_VERIFY_AFTER == 1,
               "plan_verify_mode_names follows enum iof_verify_mode");

#define NAMES(a) .names = (a), .nnames = sizeof(a) / sizeof((a)[0])
/* The value's place in the struct its object fills, or a variable of the
 * caller's (plan_read_to(): uint64_t for numbers, bool, const char * for
 * strings). */
#define AT(type, member) .off = offsetof(type, member), .width = sizeof(((type *)0)->member)
#define VAR_U64 .off = PLAN_NO_OFF, .width = sizeof(uint64_t)
#define VAR_BOOL .off = PLAN_NO_OFF, .width = sizeof(bool)
#define VAR_STR .off = PLAN_NO_OFF, .width = sizeof(const char *)
#define OBJDEF(var, arr) const struct objdef plan_##var = {(arr), sizeof(arr) / sizeof((arr)[0])}

static const struct field range_fields[] = {
    {"offset", PK_SIZE, VAR_U64, .max = UINT64_MAX,
     .help = "start of the region used: a size (a multiple of 512) or \"N%\" of the target, "
             "0%..99%; default 0"},
    {"size", PK_SIZE, VAR_U64, .max = UINT64_MAX,
     .help = "size of the region: a size (a multiple of 512) or \"N%\" of the target, 1%..100%; "
             "default the rest of the target"},
};
OBJDEF(range_def, range_fields);

static const struct field target_fields[] = {
    {"path", PK_STRING, AT(struct iof_target_cfg, path), .max = IOF_PATH_MAX - 1,
     .flags = PF_REQUIRED,
     .help = "absolute: a file or device; relative: a test file the agent creates in its "
             "workdir; may hold one {A..B} range; or a per-node map of agent names (and \"*\") "
             "to such paths"},
    {"size", PK_SIZE, AT(struct iof_target_cfg, size), .max = UINT64_MAX,
     .help = "test-file size, or the part of an existing file or device used (a multiple of "
             "4096); 0: all of it"},
    {"range", PK_OBJECT, .sub = &plan_range_def,
     .help = "the region of the target the I/O goes to"},
};
OBJDEF(target_def, target_fields);

static const struct field rate_fields[] = {
    {"iops", PK_NUMBER, .help = "I/Os per second per worker, 0.001..10000000"},
    {"mibps", PK_NUMBER, .help = "MiB per second per worker, 0.001..1048576"},
    {"arrival", PK_ENUM, VAR_U64, .def = IOF_ARRIVAL_UNIFORM, NAMES(plan_arrival_names),
     .help = "evenly spaced I/Os or exponential gaps of the same mean"},
};
OBJDEF(rate_def, rate_fields);

static const struct field data_fields[] = {
    {"dedupe", PK_PCT, AT(struct iof_data_cfg, dedupe_pct), .max = 100,
     .help = "share of written blocks that repeat blocks of a small shared pool"},
    {"compress", PK_PCT, AT(struct iof_data_cfg, compress_pct), .max = 100,
     .help = "how much each written block compresses"},
    {"dedupe_unit", PK_SIZE, VAR_U64, .min = IOF_DATA_UNIT_MIN, .max = IOF_DATA_UNIT_MAX,
     .def = IOF_DATA_UNIT_DEFAULT, .help = "block of deduplication, a power of two"},
};
OBJDEF(data_def, data_fields);

static const struct field worker_fields[] = {
    {"name", PK_STRING, AT(struct iof_worker_cfg, name), .max = IOF_NAME_MAX - 1,
     .help = "the group's name in results, unique; default \"workers[i]\""},
    {"specs", PK_ARRAY, .min = 1, .max = PROTO_PLAN_MAX_SPECS,
     .help = "names of the plan's specs this group runs, in test order; default the plan's"},
    {"nodes", PK_ARRAY, .min = 1, .max = PROTO_PLAN_MAX_NODES,
     .help = "agent names the group runs on, \"*\" for every agent; default [\"*\"]"},
    {"count", PK_INT, AT(struct iof_worker_cfg, count), .min = 1, .max = PROTO_PLAN_MAX_COUNT,
     .def = 1, .help = "worker threads per node"},
    {"engine", PK_ENUM, VAR_U64, .def = IOF_ENGINE_DEFAULT, NAMES(plan_engine_names),
     .help =
         "how the workers do I/O; default: each agent's own, libaio on Linux, windows on Windows"},
    {"queue_depth", PK_INT, AT(struct iof_worker_cfg, queue_depth), .min = 1,
     .max = PROTO_PLAN_MAX_QD, .def = 1, .help = "outstanding I/Os per worker and target"},
    {"targets", PK_ARRAY, .sub = &plan_target_def, .min = 1, .max = PROTO_PLAN_MAX_TARGETS,
     .flags = PF_REQUIRED, .help = "the files and devices each worker drives"},
    {"pattern", PK_ENUM, AT(struct iof_worker_cfg, pattern), .def = IOF_PATTERN_RANDOM,
     NAMES(plan_pattern_names), .help = "the data written"},
    {"seed", PK_INT, AT(struct iof_worker_cfg, seed), .max = (uint64_t)PROTO_JSON_EXACT_MAX,
     .flags = PF_REQUIRED, .help = "seed of the offset generator, for repeatable offsets"},
    {"offset_increment", PK_SIZE, VAR_U64, .max = UINT64_MAX,
     .help = "where worker i starts in each range: i times a size (a multiple of 512) or "
             "\"N%\" of the range; default 0"},
    {"hipri", PK_BOOL, AT(struct iof_worker_cfg, hipri), .help = "io_uring: poll for completions"},
    {"rate", PK_OBJECT, .sub = &plan_rate_def,
     .help = "a fixed offered load per worker: iops or mibps"},
    {"data", PK_OBJECT, .sub = &plan_data_def,
     .help = "dedupable and compressible data instead of a pattern"},
    {"verify", PK_ENUM, VAR_U64, .def = IOF_VERIFY_NONE, NAMES(plan_verify_names),
     .help = "checksum of every written block, read back and checked (true: crc32c, false: "
             "none)"},
    {"verify_mode", PK_ENUM, AT(struct iof_worker_cfg, verify.mode), .def = IOF_VERIFY_INLINE,
     NAMES(plan_verify_mode_names),
     .help = "check blocks as they are read, or read everything back after the test"},
    {"verify_stop", PK_BOOL, AT(struct iof_worker_cfg, verify.stop),
     .help = "end the test at the first mismatch"},
};
OBJDEF(worker_def, worker_fields);

static const struct field line_fields[] = {
    {"size", PK_SIZE, AT(struct iof_line, size), .min = 1, .max = PROTO_PLAN_MAX_IO_SIZE,
     .flags = PF_REQUIRED, .help = "transfer size"},
    {"share", PK_INT, AT(struct iof_line, share), .max = 100, .def = 100,
     .help = "% of the bursts this line issues; the lines' shares add up to 100"},
    {"read", PK_INT, AT(struct iof_line, read_pct), .max = 100, .def = 100,
     .help = "% of I/Os that are reads"},
    {"random", PK_INT, AT(struct iof_line, random_pct), .max = 100, .def = 100,
     .help = "% of I/Os at a random offset"},
    {"align", PK_SIZE, AT(struct iof_line, align), .max = UINT64_MAX,
     .help = "alignment of random offsets, a multiple of 512; 0: the transfer size"},
    {"delay", PK_DURATION, AT(struct iof_line, delay_ns), .max = PROTO_PLAN_MAX_DELAY_NS,
     .help = "pause between bursts"},
    {"burst", PK_INT, AT(struct iof_line, burst), .min = 1, .max = PROTO_PLAN_MAX_BURST, .def = 1,
     .help = "I/Os per burst"},
    {"distribution", PK_STRING, VAR_STR, .max = IOF_DIST_LABEL_MAX, .def_str = "uniform",
     .help = "of random offsets: uniform, zipf:THETA, pareto:H, normal:SIGMA_PCT or "
             "zoned:ACCESS/RANGE:..."},
    {"random_map", PK_ENUM, VAR_U64, .def = 0, NAMES(plan_random_map_names),
     .help = "once_per_pass: random offsets touch every slot once per pass, as fio's random map"},
};
OBJDEF(line_def, line_fields);

static const struct field spec_fields[] = {
    {"name", PK_STRING, AT(struct iof_spec, name), .max = IOF_NAME_MAX - 1, .flags = PF_REQUIRED,
     .help = "the spec's name in results, unique"},
    {"lines", PK_ARRAY, .sub = &plan_line_def, .min = 1, .max = PROTO_PLAN_MAX_LINES,
     .flags = PF_REQUIRED, .help = "the I/O mix: one line per transfer size"},
    {"duration", PK_DURATION, AT(struct iof_spec, duration_ns), .max = PROTO_PLAN_MAX_DURATION_NS,
     .help = "this spec's measured window; default run.duration"},
    {"ramp", PK_DURATION, AT(struct iof_spec, ramp_ns), .max = PROTO_PLAN_MAX_RAMP_NS,
     .help = "this spec's ramp; default run.ramp"},
    {"io_limit", PK_SIZE, AT(struct iof_spec, io_limit), .max = PROTO_PLAN_MAX_IO_LIMIT,
     .help = "bytes a worker issues in the measured window before it stops; default no limit"},
};
OBJDEF(spec_def, spec_fields);

static const struct field run_fields[] = {
    {"ramp", PK_DURATION, AT(struct iof_run_cfg, ramp_ns), .max = PROTO_PLAN_MAX_RAMP_NS,
     .help = "I/O before each test's measured window, not counted"},
    {"duration", PK_DURATION, AT(struct iof_run_cfg, duration_ns),
     .max = PROTO_PLAN_MAX_DURATION_NS,
     .help = "each test's measured window; required unless every spec has a duration or an "
             "io_limit"},
    {"interval", PK_DURATION, AT(struct iof_run_cfg, interval_ns), .max = UINT64_MAX,
     .def = IOF_NS_PER_S, .help = "results interval, at least 100ms"},
    {"cleanup", PK_BOOL, AT(struct iof_run_cfg, cleanup),
     .help = "agents remove the test files the run created, at its end"},
    {"target_histograms", PK_BOOL, VAR_BOOL,
     .help = "result files keep every target's latency histogram; default: in small tests"},
    {"interval_histograms", PK_BOOL, VAR_BOOL,
     .help = "the run history keeps every node's interval histograms; default: in small runs"},
};
OBJDEF(run_def, run_fields);

static const struct field cycle_param_fields[] = {
    {"from", PK_INT, VAR_U64, .min = 1, .flags = PF_REQUIRED,
     .help = "first value (at most the parameter's own limit)"},
    {"to", PK_INT, VAR_U64, .min = 1, .flags = PF_REQUIRED, .help = "last value, at least from"},
    {"step", PK_STRING, VAR_STR, .max = 32, .flags = PF_REQUIRED,
     .help = "\"+N\" (linear) or \"xN\" (exponential)"},
};
OBJDEF(cycle_param_def, cycle_param_fields);

static const struct field find_max_fields[] = {
    {"p99", PK_DURATION, VAR_U64, .max = PROTO_PLAN_MAX_RAMP_NS, .flags = PF_REQUIRED,
     .help = "the highest rate whose 99th percentile latency stays within this"},
    {"p999", PK_DURATION, VAR_U64, .max = PROTO_PLAN_MAX_RAMP_NS, .flags = PF_REQUIRED,
     .help = "the highest rate whose 99.9th percentile latency stays within this"},
    {"avg", PK_DURATION, VAR_U64, .max = PROTO_PLAN_MAX_RAMP_NS, .flags = PF_REQUIRED,
     .help = "the highest rate whose average latency stays within this"},
};
OBJDEF(find_max_def, find_max_fields);

static const struct field rate_cycle_fields[] = {
    {"curve", PK_ARRAY, .min = 1, .max = IOF_RATE_CURVE_MAX,
     .help = "rates as distinct percentages 1..100 of the unthrottled IOPS"},
    {"find_max", PK_OBJECT, .sub = &plan_find_max_def,
     .help = "search the highest rate that meets one latency target"},
};
OBJDEF(rate_cycle_def, rate_cycle_fields);

static const struct field cycle_fields[] = {
    {"rate", PK_OBJECT, .sub = &plan_rate_cycle_def,
     .help = "a rate cycle: a curve or a find_max search"},
    {"queue_depth", PK_OBJECT, .sub = &plan_cycle_param_def,
     .help = "every group's queue_depth from..to"},
    {"workers", PK_OBJECT, .sub = &plan_cycle_param_def, .help = "every group's count from..to"},
    {"targets", PK_OBJECT, .sub = &plan_cycle_param_def,
     .help = "the first N targets of each group, N from..to"},
    {"size", PK_ARRAY, .min = 1, .max = IOF_SPEC_AXIS_MAX_VALUES,
     .help = "transfer sizes a single-line spec is run at"},
    {"read", PK_ARRAY, .min = 1, .max = IOF_SPEC_AXIS_MAX_VALUES,
     .help = "read percentages a single-line spec is run at"},
    {"random", PK_ARRAY, .min = 1, .max = IOF_SPEC_AXIS_MAX_VALUES,
     .help = "random percentages a single-line spec is run at"},
};
OBJDEF(cycle_def, cycle_fields);

static const struct field root_fields[] = {
    {"name", PK_STRING, AT(struct iof_plan, name), .max = IOF_NAME_MAX - 1, .flags = PF_REQUIRED,
     .help = "the plan's name"},
    {"run", PK_OBJECT, .sub = &plan_run_def, .flags = PF_REQUIRED, .help = "timing of every test"},
    {"specs", PK_ARRAY, .sub = &plan_spec_def, .min = 1, .max = PROTO_PLAN_MAX_SPECS,
     .flags = PF_REQUIRED, .help = "access specifications, one test each"},
    {"workers", PK_ARRAY, .sub = &plan_worker_def, .min = 1, .max = PROTO_PLAN_MAX_GROUPS,
     .flags = PF_REQUIRED, .help = "worker groups"},
    {"cycle", PK_OBJECT, .sub = &plan_cycle_def,
     .help = "multiplies the tests: one parameter or spec axes stepped"},
    {"notes", PK_ARRAY, .max = PROTO_PLAN_MAX_NOTES,
     .help = "what an import approximated; shown by validate, no effect on the run"},
};
OBJDEF(root_def, root_fields);

const struct field *plan_find_field(const struct objdef *def, const char *name)
{
    for (size_t i = 0; i < def->nfields; i++)
        if (strcmp(def->fields[i].name, name) == 0)
            return &def->fields[i];
    return NULL;
}

enum shape plan_field_shape(const struct field *f)
{
    return f->kind == PK_OBJECT ? SH_OBJECT : f->kind == PK_ARRAY ? SH_ARRAY : SH_VALUE;
}

static const char *const kind_names[] = {
    [PK_INT] = "integer",       [PK_NUMBER] = "number",  [PK_SIZE] = "size",
    [PK_DURATION] = "duration", [PK_PCT] = "percentage", [PK_STRING] = "string",
    [PK_ENUM] = "one of",       [PK_BOOL] = "boolean",   [PK_OBJECT] = "object",
    [PK_ARRAY] = "array",
};

/* Walks def into path (its length len): every key, then the keys inside it.
 * A cycle parameter's keys are one set shared by three objects. */
static int keys_walk(const struct objdef *def, char *path, size_t cap, size_t len,
                     int (*fn)(void *arg, const struct proto_plan_key *k), void *arg)
{
    for (size_t i = 0; i < def->nfields; i++) {
        const struct field *f = &def->fields[i];
        struct proto_plan_key k = {path, kind_names[f->kind], f->help};
        int n = snprintf(path + len, cap - len, "%s%s", len ? "." : "", f->name), rc;
        size_t l2;
        if (n < 0 || (size_t)n >= cap - len)
            return -ENAMETOOLONG;
        if ((rc = fn(arg, &k)))
            return rc;
        l2 = len + (size_t)n;
        if (f->sub && f->kind == PK_ARRAY) {
            if (l2 + 2 >= cap)
                return -ENAMETOOLONG;
            memcpy(path + l2, "[]", 3);
            l2 += 2;
        }
        if (f->sub && (rc = keys_walk(f->sub, path, cap, l2, fn, arg)))
            return rc;
        path[len] = '\0';
    }
    return 0;
}

int proto_plan_keys(int (*fn)(void *arg, const struct proto_plan_key *k), void *arg)
{
    char path[256] = "";

    return keys_walk(&plan_root_def, path, sizeof(path), 0, fn, arg);
}
