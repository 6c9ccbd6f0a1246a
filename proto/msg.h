/* SPDX-License-Identifier: Apache-2.0 */
/* proto/msg.h - the message layer of the iofleet wire protocol.
 *
 * Every frame payload is one JSON object with a "type" string naming one of
 * the messages below - except a stats message sent in its binary body
 * (proto/statsbin.h), negotiated by protocol minor; docs/protocol.md documents each with an
 * example. The public structs are plain C: cJSON never leaves proto/.
 *
 * Rules shared by every message:
 * - Unknown fields are ignored (a peer with a higher minor version may send
 *   more); an unknown "type" is refused, naming it.
 * - The protocol version "v": [major, minor] travels in hello only.
 * - Every field is validated on decode and on encode (type, range, length,
 *   charset), so we never send what a peer of the same version refuses.
 *   Failures return IOF_EPROTO (decode) or -EINVAL (encode) with a diag that
 *   names the message and field: "hello.inventory.targets[2].size: must be
 *   a non-negative integer".
 * - 64-bit integers (sizes, sequence numbers, nanosecond times) are JSON
 *   numbers up to 2^53-1, where a double is exact, and decimal strings
 *   ("18446744073709551615") above; decoders accept both forms.
 * - Strings are UTF-8 without control characters, with the caps below.
 */
#ifndef IOF_PROTO_MSG_H
#define IOF_PROTO_MSG_H

#include "common/err.h"
#include "common/spec.h"
#include "common/stats.h"
#include "proto/frame.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(ID, name, direction, description): the one list of message types. */
#define PROTO_MSG_TABLE(X)                                                                         \
    X(HELLO, "hello", BOTH,                                                                        \
      "first message each way: role, name, protocol version, software version, heartbeat "         \
      "period; an agent's carries its inventory")                                                  \
    X(WELCOME, "welcome", AGENT_TO_MANAGER,                                                        \
      "the agent accepts the manager's session (a busy agent sends error IOF_EBUSY and bye)")      \
    X(PLAN, "plan", MANAGER_TO_AGENT,                                                              \
      "assignment: the expanded tests with this agent's workers and targets")                      \
    X(PREPARE, "prepare", MANAGER_TO_AGENT, "create or check the test files of the plan")          \
    X(PREPARE_PROGRESS, "prepare_progress", AGENT_TO_MANAGER,                                      \
      "test-file preparation progress, bytes done of total")                                       \
    X(PREPARED, "prepared", AGENT_TO_MANAGER, "every target is ready, or why one is not")          \
    X(CLOCK_PROBE, "clock_probe", MANAGER_TO_AGENT,                                                \
      "clock offset probe: sequence number and the manager's send time")                           \
    X(CLOCK_REPLY, "clock_reply", AGENT_TO_MANAGER,                                                \
      "answer to a probe: its sequence and send time echoed, the agent's clock at receipt")        \
    X(START, "start", MANAGER_TO_AGENT,                                                            \
      "start test N at a time on the manager's clock, converted by the agent with its offset")     \
    X(STATS, "stats", AGENT_TO_MANAGER,                                                            \
      "one interval of one test: counters and sparse histogram deltas per worker and target")      \
    X(RESULT, "result", AGENT_TO_MANAGER, "final totals and histograms of one test")               \
    X(STOP, "stop", MANAGER_TO_AGENT, "stop the running test now (interrupt, abort)")              \
    X(ERROR, "error", BOTH, "a refusal or failure: error code name and a message")                 \
    X(HEARTBEAT, "heartbeat", BOTH,                                                                \
      "liveness, every heartbeat_ms each way; 3 missed heartbeats mean the peer is lost")          \
    X(BYE, "bye", BOTH, "orderly close with a reason; the sender closes the connection after it")  \
    X(CLEAN, "clean", MANAGER_TO_AGENT,                                                            \
      "remove the test files the agent made in its workdir (protocol 1.2)")                        \
    X(CLEANED, "cleaned", AGENT_TO_MANAGER,                                                        \
      "the test files removed by a clean: how many, their bytes and names")                        \
    X(SETUP, "setup", MANAGER_TO_AGENT,                                                            \
      "set test N up ahead of its start: targets, buffers, engines (protocol 1.4)")                \
    X(READY, "ready", AGENT_TO_MANAGER, "test N is set up and waits for its start (protocol 1.4)")

enum proto_msg_type {
#define PROTO_MSG_ENUM(id, name, dir, desc) PROTO_MSG_##id,
    PROTO_MSG_TABLE(PROTO_MSG_ENUM)
#undef PROTO_MSG_ENUM
        PROTO_MSG_COUNT
};

enum proto_msg_dir {
    PROTO_DIR_MANAGER_TO_AGENT,
    PROTO_DIR_AGENT_TO_MANAGER,
    PROTO_DIR_BOTH,
};

/* 0 is deliberately not a role: an unset struct fails to encode. */
enum proto_role {
    PROTO_ROLE_MANAGER = 1,
    PROTO_ROLE_AGENT = 2,
};

/* String caps in bytes (without the NUL). */
#define PROTO_NAME_MAX 255 /* names, hostname, kernel, software version, model */
#define PROTO_PATH_MAX 4095
#define PROTO_TEXT_MAX 1023 /* error messages, bye and stop reasons */
#define PROTO_CODE_MAX 63   /* error code names */
#define PROTO_TARGETS_MAX 256

#define PROTO_HEARTBEAT_MS_DEFAULT 1000
#define PROTO_HEARTBEAT_MS_MIN 100
#define PROTO_HEARTBEAT_MS_MAX 60000
#define PROTO_HEARTBEAT_MISSES 3 /* silent this many periods: the peer is lost */
/* The period a manager with no --heartbeat-ms offers an agent of protocol
 * 1.5 or later (hello.heartbeat_offer_ms): its heartbeat every 3 s instead
 * of every second, and the agent's dead-man limit 3 of them, 9 s, so a
 * silent manager still stops every agent's I/O within 10 s. */
#define PROTO_HEARTBEAT_MS_OFFER 3000
/* The sparse offer of a manager with no --heartbeat-ms to an agent of 1.8
 * or later (hello.heartbeat_sparse_ms and heartbeat_limit_ms): its
 * heartbeat every 4 s with an explicit dead-man limit of 9 s in place of 3
 * periods, a quarter fewer heartbeats than the 3 s offer for the same
 * limit. A side on a limit under 3 periods writes its heartbeat at a tick
 * unless it wrote a frame in the last half period, so its peer hears from it
 * at least every 1.5 periods (6 s), 3 s within the limit. */
#define PROTO_HEARTBEAT_MS_SPARSE 4000
#define PROTO_HEARTBEAT_LIMIT_MS_SPARSE 9000

/* Static strings for a type: "hello", a one-line description. Out-of-range
 * values give "?" and "". */
const char *proto_msg_type_name(enum proto_msg_type type);
const char *proto_msg_type_desc(enum proto_msg_type type);
enum proto_msg_dir proto_msg_type_dir(enum proto_msg_type type);

/* The type named `name` (>= 0), or -ENOENT when no type has that name. */
int proto_msg_type_from_name(const char *name);

/* Whether a peer in `sender` role may send `type`. */
bool proto_msg_may_send(enum proto_msg_type type, enum proto_role sender);

/* "manager" / "agent" ("?" otherwise). */
const char *proto_role_name(enum proto_role role);

/* 0 when a peer speaking protocol major.minor can talk to this build (same
 * major; the minors may differ and the lower one is used), else
 * IOF_EVERSION with diag "protocol 2.0 is not compatible with this build's
 * 1.0 (...)". */
int proto_version_compatible(unsigned major, unsigned minor, struct iof_diag *diag);

/* Checks a node or manager name: 1..PROTO_NAME_MAX bytes of ASCII letters,
 * digits, '.', '_' and '-' (it appears in CSV rows, file names and
 * certificates). Returns 0 or -EINVAL; diag names the offending byte. */
int proto_name_check(const char *name, struct iof_diag *diag);

/* Ownership of the structs below: a message filled by proto_msg_decode()
 * owns every string and array it points to and is released with
 * proto_msg_clear(). A message built for proto_msg_encode() only borrows its
 * pointers (string literals are fine); never clear such a message. */

/* One --allow entry of an agent. The fields after `model` are optional on
 * the wire (older agents do not send them): 0, NULL or -1
 * when absent or unknown. */
struct proto_target_info {
    const char *path;             /* as allowed on the agent */
    uint64_t size;                /* bytes */
    uint32_t logical_block_size;  /* power of two, 512..65536 */
    int rotational;               /* 1, 0, or -1 unknown (JSON null) */
    const char *model;            /* NULL when unknown (JSON null) */
    const char *kind;             /* "block", "file", "directory", "missing", "other" */
    uint32_t physical_block_size; /* 0: unknown; else a power of two, 512..65536 */
    const char *device;           /* kernel name of the device ("nvme0n1", "vda1") */
    const char *mountpoint;       /* where it (or a partition of it) is mounted */
    const char *signature;        /* partition table or filesystem found ("gpt", "ext4") */
    int in_use;                   /* 1 mounted or held by another program, 0 free, -1 unknown */
    int ram_backed;               /* 1 RAM (tmpfs, ramfs, zram, brd, loop on tmpfs), 0, -1 */
};

/* The filesystem of an agent's workdir, where plan-relative test files go
 * (optional on the wire; `path` NULL when absent). */
struct proto_workdir_info {
    const char *path;   /* canonical */
    const char *fstype; /* "ext4", "xfs", "tmpfs", ... or "0x..." */
    const char *device; /* kernel name of its device, NULL when none (tmpfs) */
    uint64_t size;      /* bytes of the filesystem */
    uint64_t free;      /* bytes available to the agent */
    int ram_backed;     /* as for targets */
};

/* An agent's budget (docs/security.md, "Budget and liveness"): the most a
 * plan may take of its node, as the agent's flags and the host's free
 * resources stood when the hello was sent. UINT64_MAX: no limit known. */
struct proto_budget {
    uint64_t workers;    /* worker threads */
    uint64_t buffer_mem; /* bytes of I/O buffers */
    uint64_t aio_events; /* io_setup() events */
    uint64_t fds;        /* descriptors for targets */
};

struct proto_inventory {
    const char *hostname;
    uint32_t cpus;         /* online CPUs, >= 1 */
    uint64_t memory_bytes; /* physical memory */
    const char *kernel;    /* uname release, "6.1.0-18-amd64" */
    size_t ntargets;       /* 0..PROTO_TARGETS_MAX */
    struct proto_target_info *targets;
    bool has_budget; /* optional on the wire: agents before 1.1 do not send it */
    struct proto_budget budget;
    struct proto_workdir_info workdir; /* optional on the wire (older agents) */
};

struct proto_hello {
    enum proto_role role;
    const char *name;                 /* proto_name_check() rules */
    unsigned major, minor;            /* protocol version of the sender */
    const char *software;             /* software version, "0.1.0" */
    uint32_t heartbeat_ms;            /* the sender's heartbeat period */
    uint32_t heartbeat_offer_ms;      /* 1.5, optional (0: none): the period offered a peer
                                         of 1.5 or later in place of heartbeat_ms */
    uint32_t heartbeat_sparse_ms;     /* 1.8, optional, with heartbeat_limit_ms (0: none): */
    uint32_t heartbeat_limit_ms;      /* the period and dead-man limit offered a peer of 1.8
                                         or later in place of heartbeat_offer_ms and 3
                                         periods; 2 to 3 periods */
    struct proto_inventory inventory; /* agent only; ignored for a manager */
};

struct proto_heartbeat {
    uint64_t seq;     /* per sender, from 0 */
    uint64_t sent_ns; /* sender's monotonic clock */
};

struct proto_error {
    int code;              /* -errno or IOF_E*; IOF_EINTERNAL when unknown here */
    const char *code_name; /* decode: the name as sent ("IOF_EBUSY"); encode: unused,
                              derived from code by iof_errname() */
    const char *message;
};

struct proto_bye {
    const char *reason;
};

struct proto_clock_probe {
    uint64_t seq;
    uint64_t t0_ns; /* manager's monotonic clock at send */
};

struct proto_clock_reply {
    uint64_t seq;      /* echoed */
    uint64_t t0_ns;    /* echoed */
    uint64_t agent_ns; /* agent's monotonic clock when the probe arrived */
};

struct proto_start {
    uint32_t test;        /* index into the plan's expanded tests */
    uint64_t start_at_ns; /* on the manager's monotonic clock */
    int64_t offset_ns;    /* the agent's clock minus the manager's, as measured by
                             the manager: the agent starts at start_at_ns + offset_ns */
    /* Optional (a rate cycle's step, plan "cycle": {"rate": ...}): the IOPS
     * of each of the node's workers in this test, in the order of its
     * results; 0 runs that worker unthrottled. nrates 0: absent (the plan's
     * rates). Owned when decoded, borrowed when encoded. */
    double *rates;
    size_t nrates;
};
#define PROTO_START_MAX_RATES IOF_NODE_MAX_WORKERS

/* setup (protocol 1.4) is a struct proto_start without the start time
 * (start_at_ns and offset_ns unused); ready answers it. */
struct proto_ready {
    uint32_t test; /* the test set up */
};

/* The plan, as the canonical JSON text of its object (proto_plan_parse()
 * reads it). */
struct proto_plan {
    const char *text;
    size_t len;
};

/* Optional (protocol 1.2): when the session ends, the agent removes the
 * test files this preparation created, and their verify state (plan key
 * run.cleanup; a manager sends it only to agents of minor >= 2). */
struct proto_prepare {
    bool cleanup;
};

/* The answer to a clean: what was removed from the workdir (relative
 * names, at most PROTO_CLEANED_NAMES_MAX of them; files and bytes count
 * all), and how many the agent could not remove. */
#define PROTO_CLEANED_NAMES_MAX 256
struct proto_cleaned {
    const char *workdir; /* canonical */
    uint64_t files, bytes, failed;
    size_t nremoved;
    const char **removed;
};

/* Where one target of the plan lives on the agent, as preparation found
 * what it opened (prepared.targets, optional: older agents send none). One
 * entry per distinct path, in plan order, at most PROTO_PLACES_MAX. */
#define PROTO_PLACES_MAX 256
struct proto_target_place {
    uint32_t group;     /* index of the worker group in the plan's workers */
    uint32_t target;    /* index in that group's targets */
    const char *device; /* kernel name of the block device under it ("nvme0n1", "loop3"),
                         * NULL when none (tmpfs) or unknown */
    const char *fstype; /* the filesystem holding a file ("ext4", "tmpfs"), NULL for a
                         * block device or when unknown */
    int ram_backed;     /* 1 RAM (tmpfs, ramfs, zram, brd, loop on tmpfs), 0, -1 unknown */
};

struct proto_prepared {
    size_t nplaces;
    struct proto_target_place *places;
};

struct proto_prepare_progress {
    const char *path;
    uint64_t done, total; /* bytes */
    /* Not preparation but the read-back of a test with verify_mode "after"
     * (field "stage": "verify"; absent or "prepare" otherwise): the manager
     * waits for the result while these keep coming. */
    bool verify;
};

/* Limits on stats and result bodies: one node's share of a test, as the
 * plan's validation bounds it (common/spec.h). */
#define PROTO_STATS_MAX_WORKERS IOF_NODE_MAX_WORKERS
#define PROTO_STATS_MAX_TARGETS IOF_PLAN_MAX_TARGETS       /* per worker */
#define PROTO_STATS_MAX_TOTAL_TARGETS IOF_NODE_MAX_TARGETS /* per message */
/* The most JSON one target of a stats or result body can take: two
 * directions of three 20-digit counters and a histogram of every bucket
 * (2432 x (2-byte delta + 10-byte count) + 51 bytes, base64), and a first
 * error with a 63-byte code, and a rated worker's five-counter summary. */
#define PROTO_STATS_TARGET_JSON_MAX 78600
/* The frame limit for stats and result messages (a manager's receive limit
 * from its agents): one node's largest share of a test always fits, so a
 * plan that validates can report. Other messages keep PROTO_FRAME_MAX_DEFAULT. */
#define PROTO_STATS_FRAME_MAX ((size_t)48 << 20)
/* The most JSON one CPU of result.cpus takes (1.7): {"id":65535,"busy":12.34,
 * ...,"irq":12.34}, and its comma, is 75 bytes. */
#define PROTO_CPU_JSON_MAX 80
_Static_assert((size_t)PROTO_STATS_MAX_TOTAL_TARGETS *PROTO_STATS_TARGET_JSON_MAX +
                       (size_t)PROTO_STATS_MAX_WORKERS * 4 + 4096 +
                       (size_t)1024 * PROTO_CPU_JSON_MAX <=
                   PROTO_STATS_FRAME_MAX,
               "the largest stats or result message a plan allows must fit its frame");
_Static_assert(PROTO_STATS_FRAME_MAX <= PROTO_FRAME_MAX_LIMIT,
               "stats frames within the frame layer's limit");

#define PROTO_VERIFY_REPORTS_MAX 8

struct proto_worker_stats {
    size_t ntargets;
    struct iof_stats *targets; /* one per target of the worker, in plan order */
};

/* Node CPU over an interval or a test's measured window, in % of all CPUs. */
struct proto_cpu {
    bool valid; /* false: not measured (left out of the JSON) */
    double busy_pct, user_pct, sys_pct;
    double agent_pct; /* the agent process itself */
    /* Protocol 1.6 (PROTO_MINOR_CPU_NODE), over the same window; unknown
     * (node_valid false, absent on the wire) from older agents and where the
     * platform has no figures. What Iometer calls % DPC Time and % Interrupt
     * Time are softirq and irq time here (Linux /proc/stat); interrupts per
     * second the "intr" total; packets (received and sent) and their errors
     * those of the node's interfaces other than loopback (/proc/net/dev);
     * retransmitted TCP segments Tcp RetransSegs (/proc/net/snmp). */
    bool node_valid;
    double dpc_pct, irq_pct; /* 0..100 */
    double intr_per_s;       /* interrupts per second */
    double packets_per_s;    /* packets per second */
    double packet_errors;    /* receive and transmit errors in the window (a count) */
    double retrans_per_s;    /* TCP segments retransmitted per second */
};

/* The largest of the four counts and rates above, in either form: far above
 * any a window can have, and low enough that its hundredths (< 2^50) come
 * back exactly from a double, so a decoded message encodes to the same
 * bytes. An agent sends a larger figure as this one; a decoder reads one up
 * to PROTO_CPU_NODE_READ_MAX (what agents of the same protocol built with
 * the earlier bound may send) as this one too, and refuses more. */
#define PROTO_CPU_NODE_MAX 1e13
#define PROTO_CPU_NODE_READ_MAX 1e15

/* The node figures of struct proto_cpu in one order (dpc, irq, interrupts,
 * packets, packet errors, retransmits), and their names in the result files. */
#define PROTO_CPU_NODE_N 6
extern const char *const proto_cpu_node_names[PROTO_CPU_NODE_N];
void proto_cpu_node_values(const struct proto_cpu *c, double v[PROTO_CPU_NODE_N]);

/* Protocol 1.7 (PROTO_MINOR_CPUS): one CPU of the node over a test's
 * measured window, in % of that CPU's ticks - Iometer's figures of one
 * PROCESSOR row. id is the kernel's number of the CPU (Linux: N of /proc/stat's
 * cpuN line; offline CPUs leave gaps). In result messages only, so stats
 * frames keep their size at fleet scale. */
#define PROTO_CPUS_MAX 1024     /* CPUs of one result */
#define PROTO_CPU_ID_MAX 65535u /* far above any kernel's CPU numbers */
_Static_assert(PROTO_CPUS_MAX <= 1024 && PROTO_CPU_ID_MAX <= 65535,
               "PROTO_STATS_FRAME_MAX's assert counts 1024 CPUs of PROTO_CPU_JSON_MAX bytes");
struct proto_cpu_one {
    uint32_t id;
    double busy_pct, user_pct, sys_pct; /* as proto_cpu's */
    double dpc_pct, irq_pct;            /* softirq, irq */
};

/* stats (one interval) and result (a whole test) share this body. */
struct proto_stats {
    uint32_t test;
    uint64_t interval; /* stats: 0-based interval of the measured window */
    /* stats only: */
    bool lost;            /* the agent could not keep this interval (it fell behind):
                           * its counters are not known (sent as zeros), never an idle
                           * interval; its I/O is still in the result */
    uint64_t duration_ns; /* the interval's real length when it was cut short (a stop);
                           * 0: its full length */
    /* result only: */
    uint64_t measured_ns;      /* the agent's measured window (shorter when stopped) */
    uint64_t cpu_ns;           /* CPU time of the worker threads in the window */
    uint64_t started_first_ns; /* agent clock: first and last worker start */
    uint64_t started_last_ns;
    bool interrupted;  /* stopped before the end of the window */
    const char *error; /* a worker's fatal error, or NULL */
    /* The first verification mismatches of the test on the node, one line
     * each (offset, classification, expected and found header fields);
     * at most PROTO_VERIFY_REPORTS_MAX, absent on the wire when none. */
    size_t nverify_reports;
    const char **verify_reports;
    /* result only, 1.6 (NULL: absent - no rated worker, or an older peer):
     * the lateness (submission less scheduled time, ns) of the rated
     * workers' I/Os counted in the window, merged; its count is the sum of
     * the targets' rated.svc counts. Owned when decoded, borrowed when
     * encoded. */
    struct iof_hist *lateness;
    uint64_t lateness_over_20us; /* of those, more than IOF_RATE_ONTIME_NS late */
    struct proto_cpu cpu;
    /* result only, 1.7 (ncpus 0: absent - unknown, or an older peer): each
     * CPU over the window of cpu, ids increasing, at most PROTO_CPUS_MAX.
     * Owned when decoded, borrowed when encoded. */
    size_t ncpus;
    struct proto_cpu_one *cpus;
    size_t nworkers;
    struct proto_worker_stats *workers;
    /* Decoded with PROTO_DECODE_SUM_STATS (stats only): the sum of every
     * target, and workers[].targets are NULL (ntargets still counted). */
    struct iof_stats *sum;
    bool sum_valid; /* sum came whole from the binary decoder (proto_statsbin_sum_free) */
    /* With PROTO_DECODE_SUM_STATS also each target's counters (no buckets),
     * one per target in worker order (sum of workers[].ntargets entries). */
    struct iof_counts *counts;
};

struct proto_stop {
    const char *reason;
};

/* The heartbeat period both sides use from now on, as the agent decided it
 * (the larger of both hellos', capped at the agent's maximum); 0 when
 * absent (an older agent: the larger of both hellos'). */
struct proto_welcome {
    uint32_t heartbeat_ms;
    uint32_t heartbeat_limit_ms; /* 1.8, optional (0: 3 periods): the dead-man limit both
                                    sides use, 2 to 3 periods */
};

/* One message; clean has no fields. */
struct proto_msg {
    enum proto_msg_type type;
    union {
        struct proto_hello hello;
        struct proto_welcome welcome;
        struct proto_heartbeat heartbeat;
        struct proto_error error;
        struct proto_bye bye;
        struct proto_clock_probe clock_probe;
        struct proto_clock_reply clock_reply;
        struct proto_start start;
        struct proto_start setup; /* PROTO_MSG_SETUP */
        struct proto_ready ready;
        struct proto_stop stop;
        struct proto_plan plan;
        struct proto_prepare prepare;
        struct proto_prepared prepared;
        struct proto_cleaned cleaned;
        struct proto_prepare_progress prepare_progress;
        struct proto_stats stats;  /* PROTO_MSG_STATS */
        struct proto_stats result; /* PROTO_MSG_RESULT */
    } u;
};

/* Zeroes msg and sets type. */
void proto_msg_init(struct proto_msg *msg, enum proto_msg_type type);

/* A hello from this build: type, role, name (borrowed), this build's protocol
 * version and software version, the default heartbeat period. An agent then
 * fills u.hello.inventory. */
void proto_msg_init_hello(struct proto_msg *msg, enum proto_role role, const char *name);

/* Encodes msg (borrowed) as JSON text. *out is new and NUL-terminated, free()
 * it; *out_len excludes the NUL. Returns 0, -EINVAL (a field breaks the
 * rules; diag names it), -ENOTSUP (no body defined yet) or -ENOMEM. */
int proto_msg_encode(const struct proto_msg *msg, char **out, size_t *out_len,
                     struct iof_diag *diag);

/* One agent of `iofleet agents --json`: {"endpoint", "reachable": true,
 * "hello": the hello as on the wire (without "type")} or {"endpoint",
 * "reachable": false, "error"}. New text (free() it), NULL when out of
 * memory or the hello breaks the encoder's rules. */
char *proto_agent_report_json(const char *endpoint, const struct proto_hello *h, const char *error);

/* Encodes msg into a complete frame ready to write: *out is new, free() it.
 * Also IOF_ETOOBIG when the JSON exceeds max_payload (the peer's limit:
 * PROTO_FRAME_MAX_PREAUTH for a hello). */
int proto_msg_encode_frame(const struct proto_msg *msg, size_t max_payload, uint8_t **out,
                           size_t *out_len, struct iof_diag *diag);

/* proto_msg_encode_frame with options: PROTO_ENCODE_STATS_BINARY sends a
 * stats message as the binary body (proto/statsbin.h) instead of JSON; only
 * for a peer with which proto_stats_binary_ok() (proto/version.h) holds.
 * Other types ignore it. */
#define PROTO_ENCODE_STATS_BINARY 1u
/* With PROTO_ENCODE_STATS_BINARY: layout 3, one latency histogram per node
 * and direction instead of one per target (proto/statsbin.h); only for a
 * peer with which proto_stats_node_hist_ok() holds. */
#define PROTO_ENCODE_STATS_NODE_HIST 2u
int proto_msg_encode_frame_flags(const struct proto_msg *msg, size_t max_payload, unsigned flags,
                                 uint8_t **out, size_t *out_len, struct iof_diag *diag);

/* Decodes one payload (len bytes, no NUL needed; borrowed) into msg, which
 * then owns its strings. Returns 0, IOF_EPROTO (diag names the field),
 * IOF_EVERSION for a hello with another protocol major (diag from
 * proto_version_compatible(); u.hello then has the version and, when they
 * are valid, role and name, so the peer can be named) or -ENOMEM. Call
 * proto_msg_clear() afterwards whatever the result. */
int proto_msg_decode(const void *payload, size_t len, struct proto_msg *msg, struct iof_diag *diag);

/* proto_msg_decode with options: PROTO_DECODE_SUM_STATS decodes a stats
 * message into one summed iof_stats (u.stats.sum) instead of one per target
 * - every field is still validated - which is all a manager needs for an
 * interval and saves a histogram per target. */
#define PROTO_DECODE_SUM_STATS 1u
/* PROTO_DECODE_STATS_BINARY also accepts a stats message in the binary body
 * (a payload starting with PROTO_STATSBIN_TAG); without it such a payload
 * is refused as a peer of protocol 1.0 would. */
#define PROTO_DECODE_STATS_BINARY 2u
int proto_msg_decode_flags(const void *payload, size_t len, struct proto_msg *msg, unsigned flags,
                           struct iof_diag *diag);

/* The type of an encoded message, read from its first bytes without
 * decoding it: a binary stats body, or JSON that starts with its "type"
 * member, as this encoder writes it ({"type":"result",...}). -1 when the
 * first bytes do not say (another member first, spaces, not a message):
 * only proto_msg_decode() can tell then. A hint for scheduling; the
 * decoder still checks everything. */
int proto_msg_peek_type(const void *payload, size_t len);

/* Frees what a decoded message owns and zeroes it. Accepts NULL. */
void proto_msg_clear(struct proto_msg *msg);

/* A complete heartbeat frame in buf (cap >= 96 is always enough): the same
 * bytes proto_msg_encode_frame() would produce, without allocating.
 * 0 or -ENOBUFS. */
#define PROTO_HEARTBEAT_FRAME_MAX 96
int proto_msg_heartbeat_frame(uint64_t seq, uint64_t sent_ns, uint8_t *buf, size_t cap,
                              size_t *len);

/* Deep copy of a hello (strings, inventory) that outlives its message:
 * 0 or -ENOMEM. Release with proto_hello_free(). */
int proto_hello_copy(struct proto_hello *dst, const struct proto_hello *src);
void proto_hello_free(struct proto_hello *h);

#endif
