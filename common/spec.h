/* SPDX-License-Identifier: Apache-2.0 */
/* common/spec.h - a plan as plain C structs: access specifications, workers,
 * targets, run timing and cycling. Produced by the plan loader
 * (proto/plan.c), consumed by the dynamo engine (dynamo/run.h) and, later,
 * carried in plan-assignment messages. No cJSON here.
 */
#ifndef IOF_COMMON_SPEC_H
#define IOF_COMMON_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IOF_NAME_MAX 128
#define IOF_PATH_MAX 4096
#define IOF_ENGINE_NAME_MAX 16

/* The limits of a plan: one set, used by the plan's validation (proto/plan.c,
 * `iofleet validate`), the messages (proto/msg.c) and the agent (the access
 * spec generator, its stats), so a plan that validates can also run and
 * report. */
#define IOF_PLAN_MAX_SPECS 1024
#define IOF_PLAN_MAX_LINES 64 /* per spec: the generator's table */
#define IOF_PLAN_MAX_GROUPS 256
#define IOF_PLAN_MAX_NODES 10000 /* names per worker group */
#define IOF_PLAN_MAX_TARGETS 256 /* per worker group, so per worker */
#define IOF_PLAN_MAX_COUNT 1024  /* workers per group and node */
#define IOF_PLAN_MAX_QD 4096
#define IOF_PLAN_MAX_IO_SIZE (64ull << 20)
#define IOF_PLAN_MAX_BURST 65535
/* One node in one test, over every group that selects it: what one stats
 * or result message carries (each target is a histogram in memory on the
 * way in, so the total is bounded before anything is allocated). */
#define IOF_NODE_MAX_WORKERS 65536
#define IOF_NODE_MAX_TARGETS                                                                       \
    512 /* sum over its workers of their targets: the largest                                      \
         * stats message then fits its frame (proto/msg.h) */

/* Where a line's random offsets fall (fio's random_distribution), over the
 * line's aligned slots in a target's range. See docs/workloads.md. */
enum iof_dist {
    IOF_DIST_UNIFORM, /* every slot alike (the default) */
    IOF_DIST_ZIPF,    /* slot of rank k hit with probability ~ k^-theta */
    IOF_DIST_PARETO,  /* rank = floor(N u^(log h / log(1-h))): h of the slots get 1-h of hits */
    IOF_DIST_NORMAL,  /* rank ~ normal around N/2, sigma = param % of N, cut to [0, N) */
    IOF_DIST_ZONED,   /* zone i: access[i] % of hits, uniform over the next range[i] % */
};
#define IOF_DIST_MAX_ZONES 32
#define IOF_DIST_MAX_THETA 10.0
/* Text of the longest distribution the plan accepts: "zoned:" plus
 * IOF_DIST_MAX_ZONES "100/100:" (for iof_line_dist_label buffers). */
#define IOF_DIST_LABEL_MAX (8 + 8 * IOF_DIST_MAX_ZONES)

struct iof_dist_cfg {
    enum iof_dist kind;
    double param; /* zipf theta, pareto h, normal sigma in % of the range */
    uint8_t nzones;
    uint8_t access[IOF_DIST_MAX_ZONES]; /* % of the accesses, sum 100 */
    uint8_t range[IOF_DIST_MAX_ZONES];  /* % of the range, each >= 1, sum 100 */
};

/* One line of an access specification (Iometer's "access spec" row). */
struct iof_line {
    uint64_t size;            /* transfer size in bytes, > 0 */
    uint32_t share;           /* % of spec: probability this line is picked for a burst */
    uint32_t read_pct;        /* 0..100: probability an I/O is a read */
    uint32_t random_pct;      /* 0..100: probability an I/O goes to a random offset */
    uint64_t align;           /* offset alignment in bytes; 0 = the transfer size (as fio; Iometer
                               * users wanting sector alignment set the block size) */
    uint64_t delay_ns;        /* pause between bursts (submission only; reaping goes on) */
    uint32_t burst;           /* I/Os per burst, >= 1 */
    struct iof_dist_cfg dist; /* of the random offsets; zeroed = uniform */
    bool random_once;         /* random_map "once_per_pass": each slot once per pass (fio's map) */
};

struct iof_spec {
    char name[IOF_NAME_MAX];
    struct iof_line *lines; /* owned */
    size_t nlines;
    /* How long a test of this spec runs (iof_test_run): its own "duration"
     * and "ramp" when has_duration / has_ramp, else the plan's run. */
    uint64_t duration_ns, ramp_ns;
    bool has_duration, has_ramp;
    /* "io_limit" (fio's io_size): a worker stops after issuing this many
     * bytes in the measured window; the test ends when every worker has
     * stopped or the duration has passed. 0: no limit. */
    uint64_t io_limit;
};

enum iof_pattern {
    IOF_PATTERN_REPEAT, /* one repeating byte pattern (highly compressible) */
    IOF_PATTERN_PSEUDO, /* pseudo-random buffer generated once, reused */
    IOF_PATTERN_RANDOM, /* fresh random data for every write (incompressible) */
};

/* One node's own path for a target whose plan `path` is a per-node map
 * ({"node1": "/dev/sdb", "*": "/dev/sdc"}). */
struct iof_target_node_path {
    char *node; /* owned: an agent's name */
    char *path; /* owned */
};

struct iof_target_cfg {
    /* relative: test file in the workdir; absolute: file or device. With a
     * per-node map: its "*" entry, "" when the map has none (then only the
     * nodes it names have a path: iof_target_path()). */
    char path[IOF_PATH_MAX];
    uint64_t size;         /* test-file size; on an existing file or device the part
                            * used (Iometer's maximum disk size); 0 = all of it */
    uint64_t range_offset; /* start of the region used (Iometer's starting sector) */
    uint64_t range_size;   /* size of the region; 0 = to the end */
    /* When set, range_offset / range_size is a whole percentage (0..100) of
     * the target's size, resolved by iof_target_range() where that size is
     * known (on the agent, after opening the target). */
    bool range_offset_pct;
    bool range_size_pct;
    /* The map's other entries, owned (iof_plan_free); none for a plain path.
     * The manager resolves the map per agent: agents never receive one. */
    struct iof_target_node_path *node_paths;
    size_t nnode_paths;
};

/* The path target t has on node `node`: its map's entry for that node, else
 * t->path ("" when the map has neither that node nor "*"). Borrowed. */
const char *iof_target_path(const struct iof_target_cfg *t, const char *node);

/* workers[].rate: a worker issues its I/Os on a schedule instead of as
 * fast as its slots free up (fio rate_iops / rate with rate_process). */
enum iof_rate_unit {
    IOF_RATE_NONE, /* unthrottled */
    IOF_RATE_IOPS,
    IOF_RATE_MIBPS, /* MiB (2^20 bytes) per second */
};
enum iof_arrival {
    IOF_ARRIVAL_UNIFORM, /* evenly spaced */
    IOF_ARRIVAL_POISSON, /* exponential gaps of the same mean */
};
#define IOF_RATE_MIN 0.001         /* IOPS or MiB/s: one I/O per 1000 s at the slowest */
#define IOF_RATE_MAX_IOPS 1e7      /* per worker */
#define IOF_RATE_MAX_MIBPS 1048576 /* per worker: 1 TiB/s */
/* A rated I/O submitted later than this after its scheduled time is late. */
#define IOF_RATE_LATE_NS 1000000u
/* The timing a rated worker aims for: an I/O submitted within this of its
 * scheduled time is on time; a test's result counts the others
 * (lateness.over_20us, docs/results.md). */
#define IOF_RATE_ONTIME_NS 20000u

struct iof_rate {
    enum iof_rate_unit unit;
    double value; /* per worker, in the unit; > 0 when unit is not NONE */
    enum iof_arrival arrival;
};
/* What a worker group writes when "data" is set (dynamo/data.h): instead of
 * a pattern, blocks of `unit` bytes of which dedupe_pct % repeat blocks of a
 * small pool shared by every worker and node, the rest unique; every block
 * compresses by about compress_pct %. */
struct iof_data_cfg {
    bool enabled;
    uint32_t dedupe_pct;   /* 0..100 */
    uint32_t compress_pct; /* 0..100 */
    uint32_t unit;         /* dedupe_unit: a power of two, 512..1 MiB; divides every write */
};
#define IOF_DATA_UNIT_MIN 512u
#define IOF_DATA_UNIT_MAX (1u << 20)
#define IOF_DATA_UNIT_DEFAULT 4096u
/* Units in the pool of duplicates every worker and node shares, and the
 * random buffer unique units are cut from (dynamo/data.h). */
#define IOF_DATA_POOL 64u
#define IOF_DATA_SPAN (64u << 10)
/* Bytes of a worker's data area: the pool, then the random buffer (one unit
 * longer than IOF_DATA_SPAN). */
static inline size_t iof_data_area_size(const struct iof_data_cfg *cfg)
{
    return (size_t)IOF_DATA_POOL * cfg->unit + IOF_DATA_SPAN + cfg->unit;
}

/* End-to-end verification ("verify"): every write carries a header and a
 * checksum (dynamo/verify.h); reads check the blocks they return. A
 * verified test file also has a map of the generation each granule of
 * 2^IOF_GENMAP_SHIFT bytes should hold (dynamo/genmap.h): IOF_GENMAP_BYTES
 * per granule, for files of at most IOF_GENMAP_MAX granules (larger ones
 * get none). */
#define IOF_GENMAP_SHIFT 12u
#define IOF_GENMAP_MAX ((uint64_t)1 << 24)
#define IOF_GENMAP_BYTES 10u /* 8 in the mapped state file, 2 in memory */
enum iof_verify_algo {
    IOF_VERIFY_NONE,
    IOF_VERIFY_CRC32C,
    IOF_VERIFY_XXH64,
};
enum iof_verify_mode {
    IOF_VERIFY_INLINE, /* every read of the test checks what it returns */
    IOF_VERIFY_AFTER,  /* and after the test, the whole range is read back and checked */
};
/* The checksum `"verify": true` means: xxh64, measured faster than
 * crc32c here (docs/dependencies.md). */
#define IOF_VERIFY_DEFAULT IOF_VERIFY_XXH64
struct iof_verify_cfg {
    enum iof_verify_algo algo; /* IOF_VERIFY_NONE: off */
    enum iof_verify_mode mode;
    bool stop; /* stop the test at the first mismatch */
};

/* A worker group: `count` identical worker threads on every selected node. */
struct iof_worker_cfg {
    char name[IOF_NAME_MAX]; /* unique in the plan; default "workers[i]" */
    /* Iometer's per-worker assignment: when has_specs, the group's own specs
     * in test order (indices into plan->specs, owned): in test position i it
     * runs specs[i], and idles when i >= nspecs. Otherwise it runs the
     * plan's i-th spec (idle past the plan's last). */
    unsigned *specs;
    size_t nspecs;
    bool has_specs;
    char **nodes; /* owned; node names or "*" */
    size_t nnodes;
    uint32_t count;
    char engine[IOF_ENGINE_NAME_MAX]; /* "libaio", "io_uring", "sync", "null", "windows" */
    bool engine_given;                /* the plan names it; else each agent runs its own
                                       * default and engine is this build's
                                       * (IOF_ENGINE_DEFAULT) */
    uint32_t queue_depth;             /* outstanding I/Os per target */
    struct iof_target_cfg *targets;   /* owned */
    size_t ntargets;
    enum iof_pattern pattern;
    uint64_t seed; /* meaningful when has_seed */
    bool has_seed;
    /* Where worker i (of this group on a node) starts its sequential stream
     * in each target's range: i x offset_increment bytes, or i x
     * offset_increment percent of the range when offset_increment_pct,
     * wrapping in the range. 0 (default, Iometer's): all at the start. */
    uint64_t offset_increment;
    bool offset_increment_pct;
    bool hipri;               /* io_uring: poll for completions (IORING_SETUP_IOPOLL) */
    struct iof_rate rate;     /* unit NONE: unthrottled */
    struct iof_data_cfg data; /* replaces `pattern` for writes when enabled */
    struct iof_verify_cfg verify;
};

/* run.target_histograms: whether the result files (--json, the run
 * history) keep the latency histogram of every TARGET row. AUTO (the key
 * left out): only in tests with at most IOF_TARGET_HISTS_AUTO_MAX TARGET
 * rows (docs/results.md says why that many). */
enum iof_target_hists { IOF_TARGET_HISTS_AUTO, IOF_TARGET_HISTS_ALWAYS, IOF_TARGET_HISTS_NEVER };
#define IOF_TARGET_HISTS_AUTO_MAX 1024

/* run.interval_histograms (the same three values): whether the run history
 * keeps the latency histograms of every node's intervals (the ALL
 * interval's are always kept). AUTO: only in runs of at most
 * IOF_INTERVAL_HISTS_AUTO_MAX agents (docs/history.md says why). */
#define IOF_INTERVAL_HISTS_AUTO_MAX 1024

struct iof_run_cfg {
    uint64_t ramp_ns;
    uint64_t duration_ns;
    uint64_t interval_ns;
    bool cleanup; /* run.cleanup: agents remove the test files the run created, at its end */
    enum iof_target_hists target_hists;
    enum iof_target_hists interval_hists;
};

enum iof_cycle_param {
    IOF_CYCLE_NONE,
    IOF_CYCLE_QUEUE_DEPTH,
    IOF_CYCLE_WORKERS, /* worker count of every group */
    IOF_CYCLE_TARGETS, /* first N targets of every group */
    IOF_CYCLE_RATE,    /* cycle.rate: a curve or a find_max search (see below) */
};

/* cycle.rate (vdbench iorate=curve, and the knee search): step 0 runs
 * unthrottled; every later step runs each worker at a rate the manager
 * derives from what the worker did unthrottled (common/ratecycle.h), sent
 * with the test's start. */
enum iof_knee_metric { IOF_KNEE_P99, IOF_KNEE_P999, IOF_KNEE_AVG };
#define IOF_RATE_CURVE_MAX 64
struct iof_rate_cycle {
    bool find_max;                   /* else a curve */
    uint8_t pct[IOF_RATE_CURVE_MAX]; /* curve: percentages 1..100, in the plan's order */
    size_t npct;
    enum iof_knee_metric metric; /* find_max: the latency that must stay within target_ns */
    uint64_t target_ns;
};

struct iof_cycle {
    enum iof_cycle_param param;
    uint64_t from, to, step; /* step: addend, or factor when exponential */
    bool exponential;
    struct iof_rate_cycle rate; /* IOF_CYCLE_RATE */
};

/* Cycling the spec itself (vdbench forxfersize/forrdpct/forseekpct): the
 * plan loader has already expanded every single-line spec into the cross
 * product of the axes (first axis outermost); kept for printing. */
enum iof_spec_axis {
    IOF_SPEC_AXIS_SIZE,
    IOF_SPEC_AXIS_READ,
    IOF_SPEC_AXIS_RANDOM,
};
#define IOF_SPEC_AXES 3
#define IOF_SPEC_AXIS_MAX_VALUES 64

struct iof_spec_cycle {
    enum iof_spec_axis axis;
    uint64_t values[IOF_SPEC_AXIS_MAX_VALUES]; /* bytes, or percentages */
    size_t nvalues;
};

struct iof_plan {
    char name[IOF_NAME_MAX];
    struct iof_run_cfg run;
    struct iof_spec *specs; /* owned */
    size_t nspecs;
    struct iof_worker_cfg *workers; /* owned */
    size_t nworkers;
    struct iof_cycle cycle;
    struct iof_spec_cycle spec_cycle[IOF_SPEC_AXES]; /* in the plan's order */
    size_t nspec_cycle;
    size_t nspecs_cycled; /* single-line specs the spec cycle expanded */
    char **notes;         /* owned: what an import approximated (plan "notes") */
    size_t nnotes;
};

/* One expanded test: a spec position at one cycle step. */
struct iof_test {
    unsigned index;      /* 0-based position in the run */
    unsigned spec_index; /* the spec position: the plan's spec of that index for groups
                          * without their own list (iof_test_spec); may be past
                          * plan->nspecs when a group's list is longer */
    enum iof_cycle_param cycle_param;
    uint64_t cycle_value; /* meaningful when cycle_param != IOF_CYCLE_NONE; RATE: the step
                           * (0: unthrottled) */
    /* RATE: set by the manager before the test starts (the agents never
     * see them): the fraction of the unthrottled IOPS offered (0: unthrottled)
     * and the cluster's target IOPS. */
    double rate_frac;
    double rate_target;
};

/* Frees everything the plan owns (not p itself). Accepts NULL. */
void iof_plan_free(struct iof_plan *p);

/* Number of cycle steps (1 when there is no cycle). */
size_t iof_plan_cycle_steps(const struct iof_plan *p);

/* Number of spec positions: the longest list any group runs (its own, or
 * the plan's specs for a group without one); each position runs once per
 * cycle step. */
size_t iof_plan_positions(const struct iof_plan *p);

/* Expands the plan into tests: position-major, cycle-minor (every cycle step
 * of spec position 0, then of position 1, ...), Iometer's order. Returns a
 * new array (caller frees) and its length in *n, or NULL on ENOMEM. */
struct iof_test *iof_plan_expand(const struct iof_plan *p, size_t *n);

/* The spec group g runs in test t (borrowed from p), or NULL when the group
 * idles in that test (its list, or the plan's specs, ended). */
const struct iof_spec *iof_test_spec(const struct iof_plan *p, const struct iof_test *t, size_t g);

/* What test t runs, for headings and the `spec` column: the one spec's name
 * when every group that runs uses the same spec, else the distinct names in
 * group order joined by " + "; "(idle)" when no group runs. Cut to cap. */
void iof_test_spec_label(const struct iof_plan *p, const struct iof_test *t, char *buf, size_t cap);

/* The worker group `g` as it runs in `t` (cycle overrides applied) - a
 * shallow copy whose pointers borrow from the plan. */
struct iof_worker_cfg iof_test_worker(const struct iof_plan *p, const struct iof_test *t, size_t g);

/* The timing of test t: the plan's run with its spec's duration and ramp
 * when it has them. A spec with an io_limit and no duration anywhere (the
 * plan's run.duration is 0 then) runs at most IOF_IO_LIMIT_MAX_DURATION_NS.
 * When groups run different specs at once, they share one window: the
 * longest ramp and the longest duration of those specs. */
#define IOF_IO_LIMIT_MAX_DURATION_NS (3600ull * 1000000000ull) /* 1 h */
struct iof_run_cfg iof_test_run(const struct iof_plan *p, const struct iof_test *t);

/* Whether test t counts in the run's planned time (the live ETA and
 * progress): every test but a find_max search's beyond its shortest path
 * (iof_rate_cycle_planned), which run only when a step is run again or a
 * confirmation steps down. */
bool iof_test_planned(const struct iof_plan *p, const struct iof_test *t);

/* "queue_depth=8", "workers=4", "targets=2" or "" for the test's cycle step;
 * a rate step "rate=unthrottled", "rate=50%:61234" (percent of the
 * unthrottled IOPS, then the target IOPS of the cluster). */
void iof_test_cycle_label(const struct iof_test *t, char *buf, size_t cap);

/* The region [*start, *end) of a target of `size` bytes that t->range
 * selects. Percentages take floor(size x pct / 100) rounded down to a
 * multiple of `align` (a power of two, the target's alignment granule), so a
 * percentage region is always aligned; byte values are taken as written.
 * Returns 0, or -ERANGE when the region is empty or does not fit in size
 * (*start and *end are still set, for the message). */
int iof_target_range(const struct iof_target_cfg *t, uint64_t size, uint64_t align, uint64_t *start,
                     uint64_t *end);

/* Names an agent keeps for its own bookkeeping in its workdir (the test-file
 * ledger, verify state): no target may have a last component starting with
 * it, wherever it is, so a plan can never overwrite or open them. */
#define IOF_RESERVED_PREFIX ".iofleet-"

/* Whether the last component of path starts with IOF_RESERVED_PREFIX. */
bool iof_target_name_reserved(const char *path);

/* "10%" or "1048576" (bytes): how range_offset / range_size was given. */
void iof_target_range_label(uint64_t v, bool pct, char *buf, size_t cap);

/* Parses a distribution in fio's syntax ("uniform", "zipf:THETA",
 * "pareto:H", "normal:SIGMA_PCT", "zoned:A/R:A/R...") into *d. Returns 0, or
 * -EINVAL with a one-line reason in err (cap bytes; may be NULL) that does
 * not repeat the text. */
int iof_dist_parse(const char *text, struct iof_dist_cfg *d, char *err, size_t cap);

/* The canonical text of d ("zipf:1.2", "zoned:60/10:40/90"), at most
 * IOF_DIST_LABEL_MAX bytes with the NUL. */
void iof_dist_label(const struct iof_dist_cfg *d, char *buf, size_t cap);

const char *iof_pattern_name(enum iof_pattern p);
const char *iof_arrival_name(enum iof_arrival a);
const char *iof_cycle_param_name(enum iof_cycle_param c);
const char *iof_knee_metric_name(enum iof_knee_metric m);

#endif
