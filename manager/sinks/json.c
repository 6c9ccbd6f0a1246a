/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/json.c - the --json result document (layout in docs/results.md).
 *
 * One JSON document per run, written as the run goes with memory independent
 * of its length: open and run_begin write it whole (no test yet: to PATH.tmp,
 * fsynced, renamed over PATH, the directory fsynced); every test_end appends
 * the test where the closing "]}\n" stood, writes the brackets after it,
 * fsyncs, then rewrites the run object in place (it sits near the top in a
 * room padded with spaces) and fsyncs again. So between tests PATH is always
 * a complete, valid document with every finished test, whenever the manager
 * stops; a failed append cuts the file back to the tests before it. Only a
 * run object outgrowing its room (find_max answers) rewrites the document,
 * copying the tests from the file, never from memory.
 *
 * Held in memory: the running test's rows and intervals as JSON text (each
 * rendered when its event arrives, ordered when the test ends and written
 * out in pieces of at most JS_FLUSH_BYTES), the find_max answers, nothing of
 * finished tests.
 *
 * The emitter writes RFC 8259 JSON itself (cJSON stays in proto/): strings
 * escaped, invalid UTF-8 replaced by U+FFFD, numbers finite (null otherwise)
 * in their shortest round-trip form, integers exact, commas placed by
 * iof_json_sep() from the previous byte so no element ever gets a stray one.
 */
#include "manager/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/hist.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "manager/metrics.h"

#define JSON_FORMAT 2

/* --- values beyond common/jsonw.h ------------------------------------------------------ */

/* An exact integer of up to 128 bits (a merged latency sum). */
static void jb_u128(struct iof_buf *b, iof_u128 v)
{
    char buf[IOF_U128_DIGITS + 1];
    iof_json_sep(b);
    iof_buf_printf(b, "%s", iof_u128_str(v, buf));
}

/* put(b, v) when have, else null: v is evaluated only when have (it may
 * read through a pointer that have checks). */
#define jb_or_null(b, have, put, v) ((have) ? put(b, v) : iof_json_null(b))

/* "2024-05-01T12:00:00.123456789Z" */
static void jb_time(struct iof_buf *b, uint64_t wall_ns)
{
    time_t t = (time_t)(wall_ns / 1000000000u);
    struct tm tm;
    char tmp[64];

    if (!gmtime_r(&t, &tm)) {
        iof_json_null(b);
        return;
    }
    snprintf(tmp, sizeof(tmp), "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (unsigned)(wall_ns % 1000000000u));
    iof_json_str(b, tmp);
}

/* --- document parts ----------------------------------------------------------------- */

/* {"count":..,"sum_ns":..,"min_ns":..,"max_ns":..,"buckets":[[low_ns,width_ns,count],..]} */
static void jb_hist(struct iof_buf *b, const struct iof_hist *h)
{
    iof_json_open(b, '{');
    iof_json_key(b, "count");
    iof_json_u64(b, h->count);
    iof_json_key(b, "sum_ns");
    jb_u128(b, h->sum_ns);
    iof_json_key(b, "min_ns");
    jb_or_null(b, h->count, iof_json_u64, h->min_ns);
    iof_json_key(b, "max_ns");
    jb_or_null(b, h->count, iof_json_u64, h->max_ns);
    iof_json_key(b, "buckets");
    if (!iof_hist_has_buckets(h)) {
        iof_json_null(b); /* kept as counters only: a partial node's WORKER and TARGET rows */
        iof_json_close(b, '}');
        return;
    }
    iof_json_open(b, '[');
    for (unsigned i = iof_hist_lo(h); i < iof_hist_hi(h); i++) {
        if (!h->buckets[i])
            continue;
        iof_json_open(b, '[');
        iof_json_u64(b, iof_hist_bucket_low(i));
        iof_json_u64(b, iof_hist_bucket_width(i));
        iof_json_u64(b, h->buckets[i]);
        iof_json_close(b, ']');
    }
    iof_json_close(b, ']');
    iof_json_close(b, '}');
}

static void jb_layout(struct iof_buf *b)
{
    iof_json_open(b, '{');
    iof_json_key(b, "unit");
    iof_json_str(b, "ns");
    iof_json_key(b, "bucket");
    iof_json_str(b,
                 "[low_ns, width_ns, count]: count values v with low_ns <= v < low_ns + width_ns; "
                 "only non-empty buckets, in ascending order");
    iof_json_key(b, "exact_below_ns");
    iof_json_u64(b, 2 * IOF_HIST_SUB);
    iof_json_key(b, "sub_buckets_per_octave");
    iof_json_u64(b, IOF_HIST_SUB);
    iof_json_key(b, "max_relative_error");
    iof_json_dbl(b, 1.0 / (2.0 * IOF_HIST_SUB));
    iof_json_key(b, "buckets");
    iof_json_u64(b, IOF_HIST_BUCKETS);
    iof_json_key(b, "index");
    iof_json_str(b, "v < 128: v; else with m = floor(log2(v)): (m - 6) * 64 + (v >> (m - 6))");
    iof_json_key(b, "overflow_from_ns");
    iof_json_u64(b, (uint64_t)1 << (IOF_HIST_MAX_BITS + 1));
    iof_json_key(b, "overflow");
    iof_json_str(b, "the last bucket also counts every value >= overflow_from_ns");
    iof_json_key(b, "merge");
    iof_json_str(b, "add the counts of buckets with equal low_ns (read + write, or rows)");
    iof_json_key(b, "percentile");
    iof_json_str(b, "value at quantile q: low_ns + floor(width_ns / 2) of the first bucket whose "
                    "cumulative count reaches ceil(q * count), clamped to [min_ns, max_ns]; the "
                    "*_lat_ms figures are this over read and write merged");
    iof_json_close(b, '}');
}

static void jb_cpu(struct iof_buf *b, const struct proto_cpu *cpu)
{
    if (!cpu || !cpu->valid) {
        iof_json_null(b);
        return;
    }
    iof_json_open(b, '{');
    iof_json_key(b, "busy_pct");
    iof_json_dbl(b, cpu->busy_pct);
    iof_json_key(b, "user_pct");
    iof_json_dbl(b, cpu->user_pct);
    iof_json_key(b, "sys_pct");
    iof_json_dbl(b, cpu->sys_pct);
    iof_json_key(b, "agent_pct");
    iof_json_dbl(b, cpu->agent_pct);
    /* The node figures (protocol 1.6, Linux): null when unknown, never 0. */
    {
        double v[PROTO_CPU_NODE_N];
        proto_cpu_node_values(cpu, v);
        for (size_t i = 0; i < PROTO_CPU_NODE_N; i++) {
            iof_json_key(b, proto_cpu_node_names[i]);
            jb_or_null(b, cpu->node_valid, iof_json_dbl, v[i]);
        }
    }
    iof_json_close(b, '}');
}

/* The figures shared by rows and intervals, named as the CSV columns. */
static void jb_lat(struct iof_buf *b, double ms, bool have)
{
    jb_or_null(b, have, iof_json_dbl, ms);
}

/* The lateness of a row's rated I/O: null when unknown; its mean and
 * percentiles null when it counted none. */
static void jb_lateness(struct iof_buf *b, const struct mgr_lateness *l)
{
    const char *keys[] = {"avg_us", "p50_us", "p99_us", "p999_us", "max_us"};
    const double v[] = {l->avg_us, l->p50_us, l->p99_us, l->p999_us, l->max_us};

    if (!l->known) {
        iof_json_null(b);
        return;
    }
    iof_json_open(b, '{');
    iof_json_key(b, "count");
    iof_json_u64(b, l->count);
    iof_json_key(b, "over_20us");
    iof_json_u64(b, l->over_20us);
    iof_json_key(b, "over_20us_pct");
    jb_or_null(b, l->count, iof_json_dbl, l->over_20us_pct);
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        iof_json_key(b, keys[i]);
        jb_or_null(b, l->count, iof_json_dbl, v[i]);
    }
    iof_json_close(b, '}');
}

/* known: the figures were measured (false for a lost interval: counters
 * and rates null, never a made-up 0). row: a final row (they have the
 * lateness, intervals do not). */
static void jb_metrics(struct iof_buf *b, const struct iof_stats *s, const struct mgr_metrics *mm,
                       bool known, bool row)
{
    struct mgr_metrics m = *mm;
    bool any = s->rd.lat.count + s->wr.lat.count > 0, pct;

    m.rates &= known;
    pct = any && m.percentiles;
    iof_json_key(b, "duration_s");
    iof_json_dbl(b, m.seconds);
    iof_json_key(b, "iops");
    jb_lat(b, m.iops, m.rates);
    iof_json_key(b, "read_iops");
    jb_lat(b, m.read_iops, m.rates);
    iof_json_key(b, "write_iops");
    jb_lat(b, m.write_iops, m.rates);
    iof_json_key(b, "mibps");
    jb_lat(b, m.mibps, m.rates);
    iof_json_key(b, "read_mibps");
    jb_lat(b, m.read_mibps, m.rates);
    iof_json_key(b, "write_mibps");
    jb_lat(b, m.write_mibps, m.rates);
    /* A latency of a direction without I/O is null, not a made-up 0. */
    iof_json_key(b, "avg_lat_ms");
    jb_lat(b, m.avg_ms, any);
    iof_json_key(b, "avg_read_lat_ms");
    jb_lat(b, m.avg_read_ms, s->rd.lat.count > 0);
    iof_json_key(b, "avg_write_lat_ms");
    jb_lat(b, m.avg_write_ms, s->wr.lat.count > 0);
    iof_json_key(b, "p50_lat_ms");
    jb_lat(b, m.p50_ms, pct);
    iof_json_key(b, "p90_lat_ms");
    jb_lat(b, m.p90_ms, pct);
    iof_json_key(b, "p95_lat_ms");
    jb_lat(b, m.p95_ms, pct);
    iof_json_key(b, "p99_lat_ms");
    jb_lat(b, m.p99_ms, pct);
    iof_json_key(b, "p999_lat_ms");
    jb_lat(b, m.p999_ms, pct);
    iof_json_key(b, "p9999_lat_ms");
    jb_lat(b, m.p9999_ms, pct);
    iof_json_key(b, "max_lat_ms");
    jb_lat(b, m.max_ms, any);
    /* workers[].rate: service latency and late starts; null without. */
    iof_json_key(b, "avg_svc_lat_ms");
    jb_lat(b, m.avg_svc_ms, m.rated && s->rated.svc.count);
    iof_json_key(b, "max_svc_lat_ms");
    jb_lat(b, m.max_svc_ms, m.rated && s->rated.svc.count);
    iof_json_key(b, "late_ios");
    jb_or_null(b, known && m.rated, iof_json_u64, m.late_ios);
    if (row) {
        iof_json_key(b, "lateness");
        jb_lateness(b, &m.lateness);
    }
    {
        const char *keys[] = {"read_ios",         "write_ios",      "bytes_read",   "bytes_written",
                              "errors",           "read_errors",    "write_errors", "verify_errors",
                              "verify_bad_reads", "verify_overlaid"};
        uint64_t v[] = {
            m.read_ios,   m.write_ios,  m.bytes_read,     m.bytes_written,     m.errors,
            s->rd.errors, s->wr.errors, s->verify_errors, s->verify_bad_reads, s->verify_overlaid};
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
            iof_json_key(b, keys[i]);
            jb_or_null(b, known, iof_json_u64, v[i]);
        }
    }
}

/* cpu_pct (busy %), Iometer's CPU effectiveness (IOPS per CPU %) and the
 * CPU breakdown; all null when cpu is NULL or not measured. */
static void jb_cpu_fields(struct iof_buf *b, const struct proto_cpu *cpu, const struct iof_stats *s,
                          uint64_t ns)
{
    double sec = (double)ns / 1e9;
    bool have = cpu && cpu->valid;

    iof_json_key(b, "cpu_pct");
    jb_or_null(b, have, iof_json_dbl, cpu->busy_pct);
    iof_json_key(b, "cpu_effectiveness");
    jb_or_null(b, have && cpu->busy_pct > 0 && sec > 0, iof_json_dbl,
               (double)(s->rd.ios + s->wr.ios) / sec / cpu->busy_pct);
    iof_json_key(b, "cpu");
    jb_cpu(b, cpu);
}

static void jb_agent(struct iof_buf *b, const struct mgr_agent_info *a)
{
    const struct proto_hello *h = a->hello;
    char ver[32];

    iof_json_open(b, '{');
    iof_json_key(b, "name");
    iof_json_str(b, a->name);
    iof_json_key(b, "endpoint");
    iof_json_str(b, a->endpoint);
    iof_json_key(b, "software");
    iof_json_str(b, h ? h->software : NULL);
    iof_json_key(b, "protocol");
    if (h) {
        snprintf(ver, sizeof(ver), "%u.%u", h->major, h->minor);
        iof_json_str(b, ver);
    } else {
        iof_json_null(b);
    }
    iof_json_key(b, "hostname");
    iof_json_str(b, h ? h->inventory.hostname : NULL);
    iof_json_key(b, "cpus");
    jb_or_null(b, h, iof_json_u64, h->inventory.cpus);
    iof_json_key(b, "memory_bytes");
    jb_or_null(b, h, iof_json_u64, h->inventory.memory_bytes);
    iof_json_key(b, "kernel");
    iof_json_str(b, h ? h->inventory.kernel : NULL);
    iof_json_key(b, "budget"); /* the agent's limits (docs/security.md), null when not sent */
    if (h && h->inventory.has_budget) {
        iof_json_open(b, '{');
        iof_json_key(b, "workers");
        iof_json_u64(b, h->inventory.budget.workers);
        iof_json_key(b, "buffer_mem");
        iof_json_u64(b, h->inventory.budget.buffer_mem);
        iof_json_key(b, "aio_events");
        iof_json_u64(b, h->inventory.budget.aio_events);
        iof_json_key(b, "fds");
        iof_json_u64(b, h->inventory.budget.fds);
        iof_json_close(b, '}');
    } else {
        iof_json_null(b);
    }
    iof_json_key(b, "targets");
    iof_json_open(b, '[');
    for (size_t i = 0; h && i < h->inventory.ntargets; i++) {
        const struct proto_target_info *t = &h->inventory.targets[i];
        iof_json_open(b, '{');
        iof_json_key(b, "path");
        iof_json_str(b, t->path);
        iof_json_key(b, "size");
        iof_json_u64(b, t->size);
        iof_json_key(b, "logical_block_size");
        iof_json_u64(b, t->logical_block_size);
        iof_json_key(b, "rotational");
        jb_or_null(b, t->rotational >= 0, iof_json_bool, t->rotational != 0);
        iof_json_key(b, "model");
        iof_json_str(b, t->model);
        iof_json_close(b, '}');
    }
    iof_json_close(b, ']');
    iof_json_close(b, '}');
}

/* --- writer state ------------------------------------------------------------------- */

struct jrow {
    enum mgr_row_type type;
    size_t node_rank, worker_rank, seq; /* sort key, see jt_sort_rows() */
    char *text;
    size_t len;
};

struct jiv {
    uint64_t k;
    bool all;
    size_t seq;
    char *text;
    size_t len;
};

struct jworker {
    size_t node;
    char *name;
};

/* The running test. */
struct jtest {
    bool active;
    unsigned index; /* 1-based */
    char *spec, *cycle;
    const char *cycle_param; /* static name, NULL without cycling */
    uint64_t cycle_value;
    bool rate_step; /* a rate cycle's step: rate_pct and rate_target_iops */
    double rate_pct, rate_target;
    uint64_t start_wall_ns;
    bool target_hists; /* its TARGET rows keep their histograms (mgr_target_hists) */
    struct jrow *rows;
    size_t nrows, caprows;
    struct jiv *ivs;
    size_t nivs, capivs;
    char **nodes; /* distinct node names of the rows, in arrival order */
    size_t nnodes, capnodes;
    struct jworker *workers;
    size_t nworkers, capworkers;
};

/* Room the run object keeps for growing in place, and a buffered test's
 * most bytes before they are written out. */
#define JS_RUN_ROOM 64
#define JS_KNEE_ROOM 4096 /* per spec of a find_max run (its search log) */
#define JS_FLUSH_BYTES (1u << 20)

struct json_sink {
    struct mgr_sink *sink;
    /* The document (common/outfile.h): open creates it under a temporary
     * name, run_begin renames it into place (published); a document written
     * whole again replaces it the same way. */
    struct iof_outfile out;
    bool published;
    int fd;         /* out.fd: the document, open for appending tests; -1 before it exists */
    off_t run_off;  /* where the run object starts */
    size_t run_cap; /* bytes it may take there (the rest padded with spaces) */
    off_t tail_off; /* where the closing "]}\n" starts, after the last test */
    bool begun, ended, interrupted, oom;
    int exit_code;
    uint64_t start_wall_ns;
    size_t tests_planned;        /* 0: unknown */
    size_t find_max_specs;       /* specs a find_max run searches (room for their answers) */
    size_t ntests;               /* tests in the document */
    struct iof_buf knees;        /* find_max answers, comma-separated objects */
    const struct iof_plan *plan; /* from run_begin, valid until close */
    const struct mgr_agent_info *agents;
    size_t nagents;
    struct jtest cur;
};

/* Room for element n (0-based) of an array of the sink. */
static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
    return iof_array_grow(p, cap, n + 1, size) == 0;
}

static void jt_clear(struct jtest *t)
{
    for (size_t i = 0; i < t->nrows; i++)
        free(t->rows[i].text);
    for (size_t i = 0; i < t->nivs; i++)
        free(t->ivs[i].text);
    for (size_t i = 0; i < t->nnodes; i++)
        free(t->nodes[i]);
    for (size_t i = 0; i < t->nworkers; i++)
        free(t->workers[i].name);
    free(t->rows);
    free(t->ivs);
    free(t->nodes);
    free(t->workers);
    free(t->spec);
    free(t->cycle);
    *t = (struct jtest){0};
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

static unsigned test_index(const struct json_sink *js, const struct mgr_test_info *ti)
{
    return ti && ti->test ? ti->test->index + 1 : (unsigned)js->ntests + 1;
}

static void jt_finish(struct json_sink *js, const struct mgr_test_end *te);

/* Starts the running test; one still running without its end is kept as
 * incomplete. */
static void jt_begin(struct json_sink *js, const struct mgr_test_info *ti)
{
    struct jtest *t = &js->cur;

    if (t->active)
        jt_finish(js, NULL);
    t->active = true;
    t->index = test_index(js, ti);
    t->target_hists = mgr_target_hists(js->plan, js->agents, js->nagents, ti ? ti->test : NULL);
    if (!ti)
        return;
    t->spec = dup_or_empty(ti->spec);
    t->cycle = dup_or_empty(ti->cycle);
    if (!t->spec || !t->cycle)
        js->oom = true;
    if (ti->test && ti->test->cycle_param != IOF_CYCLE_NONE) {
        t->cycle_param = iof_cycle_param_name(ti->test->cycle_param);
        t->cycle_value = ti->test->cycle_value;
        t->rate_step = ti->test->cycle_param == IOF_CYCLE_RATE;
        t->rate_pct = ti->test->rate_frac * 100;
        t->rate_target = ti->test->rate_target;
    }
    t->start_wall_ns = ti->start_wall_ns;
}

/* The running test an event belongs to, begun from the event when the sink
 * missed its test_begin. */
static struct jtest *jt_for(struct json_sink *js, const struct mgr_test_info *ti)
{
    if (!js->cur.active || (ti && test_index(js, ti) != js->cur.index))
        jt_begin(js, ti);
    return &js->cur;
}

/* Rank of name among the test's nodes (added when new; searched from the
 * newest, as one agent's rows arrive together). SIZE_MAX on ENOMEM. */
static size_t jt_node_rank(struct jtest *t, const char *name)
{
    const char *n = name ? name : "";
    for (size_t i = t->nnodes; i-- > 0;)
        if (!strcmp(t->nodes[i], n))
            return i;
    if (!grow((void **)&t->nodes, &t->capnodes, t->nnodes, sizeof(*t->nodes)))
        return SIZE_MAX;
    if (!(t->nodes[t->nnodes] = strdup(n)))
        return SIZE_MAX;
    return t->nnodes++;
}

static size_t jt_worker_rank(struct jtest *t, size_t node, const char *name)
{
    const char *n = name ? name : "";
    for (size_t i = t->nworkers; i-- > 0;)
        if (t->workers[i].node == node && !strcmp(t->workers[i].name, n))
            return i;
    if (!grow((void **)&t->workers, &t->capworkers, t->nworkers, sizeof(*t->workers)))
        return SIZE_MAX;
    if (!(t->workers[t->nworkers].name = strdup(n)))
        return SIZE_MAX;
    t->workers[t->nworkers].node = node;
    return t->nworkers++;
}

/* ALL first, then the GROUP rows (in arrival order: the plan's group order),
 * then per node (in arrival order) its NODE row, then each of its
 * workers followed by that worker's targets, as the CSV writers order them. */
static int row_cmp(const void *pa, const void *pb)
{
    const struct jrow *a = pa, *b = pb;
    int ta = a->type == MGR_ROW_ALL ? 0 : a->type == MGR_ROW_GROUP ? 1 : 2;
    int tb = b->type == MGR_ROW_ALL ? 0 : b->type == MGR_ROW_GROUP ? 1 : 2;
    size_t wa, wb;

    if (ta != tb)
        return ta - tb;
    if (a->node_rank != b->node_rank)
        return a->node_rank < b->node_rank ? -1 : 1;
    ta = a->type == MGR_ROW_NODE ? 0 : 1;
    tb = b->type == MGR_ROW_NODE ? 0 : 1;
    if (ta != tb)
        return ta - tb;
    wa = a->worker_rank;
    wb = b->worker_rank;
    if (wa != wb)
        return wa < wb ? -1 : 1;
    ta = a->type == MGR_ROW_WORKER ? 0 : 1;
    tb = b->type == MGR_ROW_WORKER ? 0 : 1;
    if (ta != tb)
        return ta - tb;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* By interval; within one, ALL first, then the nodes as they reported. */
static int iv_cmp(const void *pa, const void *pb)
{
    const struct jiv *a = pa, *b = pb;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    if (a->all != b->all)
        return a->all ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* --- the file ------------------------------------------------------------------------ */

static int write_all(int fd, const char *p, size_t n, off_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        off += w;
        n -= (size_t)w;
    }
    return 0;
}

static void js_run(struct json_sink *js, struct iof_buf *b)
{
    iof_json_open(b, '{');
    iof_json_key(b, "start_time");
    jb_or_null(b, js->begun, jb_time, js->start_wall_ns);
    iof_json_key(b, "start_unix_ns");
    jb_or_null(b, js->begun, iof_json_u64, js->start_wall_ns);
    iof_json_key(b, "finished");
    iof_json_bool(b, js->ended);
    iof_json_key(b, "exit_code");
    jb_or_null(b, js->ended, iof_json_int, js->exit_code);
    iof_json_key(b, "interrupted");
    iof_json_bool(b, js->interrupted || (js->ended && js->exit_code == 130));
    iof_json_key(b, "tests_planned");
    jb_or_null(b, js->tests_planned, iof_json_u64, js->tests_planned);
    iof_json_key(b, "tests_written");
    iof_json_u64(b, js->ntests);
    if (js->knees.len) {
        /* Only in a find_max run: one answer per spec searched. */
        iof_json_key(b, "find_max");
        iof_buf_addstr(b, "[");
        iof_buf_add(b, js->knees.p, js->knees.len);
        iof_buf_addstr(b, "]");
    }
    iof_json_close(b, '}');
}

/* Room left after the run object for it to grow in place (finished, exit
 * code, tests_written's digits; a find_max answer per spec searched). */
static size_t js_run_room(const struct json_sink *js)
{
    return JS_RUN_ROOM + js->find_max_specs * JS_KNEE_ROOM;
}

/* Copies the bytes [from, to) of the current document to fd at off. */
static int js_copy(struct json_sink *js, off_t from, off_t to, int fd, off_t off)
{
    size_t cap = JS_FLUSH_BYTES;
    char *buf = malloc(cap);
    int r = 0;

    if (!buf)
        return -ENOMEM;
    while (!r && from < to) {
        size_t want = (size_t)(to - from) < cap ? (size_t)(to - from) : cap;
        ssize_t n = pread(js->fd, buf, want, from);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            r = n < 0 ? -errno : -EIO;
            break;
        }
        r = write_all(fd, buf, (size_t)n, off);
        from += n;
        off += n;
    }
    free(buf);
    return r;
}

/* Writes the document anew: to a new file beside PATH (common/outfile.h),
 * fsynced, renamed over PATH when publish (the directory fsynced), then kept
 * open for appending. The first publication replaces an existing PATH only
 * with --force; later ones replace the sink's own document. body is
 * everything from the "plan" key to the opening bracket of "tests"; NULL:
 * the plan, agents, layout and tests of the current document, copied from it
 * (a run object outgrowing its room). 0 or an error with diag; on failure the
 * current document stays. */
static int js_create(struct json_sink *js, const struct iof_buf *body, bool publish,
                     struct iof_diag *diag)
{
    struct iof_buf pre = IOF_BUF_INIT;
    struct iof_outfile o;
    static const char tail[] = "]}\n";
    off_t off, run_at, rest = js->run_off + (off_t)js->run_cap;
    off_t old_body = body ? 0 : js->tail_off - rest;
    unsigned flags = (js->published ? IOF_OUTFILE_FORCE : js->sink->flags) | IOF_OUTFILE_SEEKABLE;
    size_t cap;
    int r = 0;

    iof_buf_addstr(&pre, "{\"iofleet\":{\"version\":");
    iof_json_str(&pre, IOF_VERSION);
    iof_buf_printf(&pre, ",\"format\":%d},\"run\":", JSON_FORMAT);
    run_at = (off_t)pre.len;
    js_run(js, &pre);
    cap = pre.len - (size_t)run_at + js_run_room(js);
    while (pre.len < (size_t)run_at + cap)
        iof_buf_addc(&pre, ' ');
    if (pre.err || (body && body->err) || js->knees.err) {
        iof_buf_free(&pre);
        return iof_diag_set(diag, -ENOMEM, "%s: out of memory", js->sink->path);
    }
    r = iof_outfile_open(&o, js->sink->path, 0, flags, diag);
    if (r) {
        iof_buf_free(&pre);
        return r;
    }
    r = write_all(o.fd, pre.p, pre.len, 0);
    off = (off_t)pre.len;
    iof_buf_free(&pre);
    if (!r && body) {
        r = write_all(o.fd, body->p, body->len, off);
        off += (off_t)body->len;
    } else if (!r) {
        r = js_copy(js, rest, js->tail_off, o.fd, off);
        off += old_body;
    }
    if (!r)
        r = write_all(o.fd, tail, sizeof(tail) - 1, off);
    if (!r && fsync(o.fd) != 0 && errno != EINVAL)
        r = -errno;
    if (r)
        iof_diag_set(diag, r, "%s: cannot write: %s", js->sink->path, iof_strerror(r));
    else if (publish)
        r = iof_outfile_publish(&o, diag);
    if (r) {
        iof_outfile_abort(&o);
        return r;
    }
    iof_outfile_abort(&js->out); /* the previous document: closed, or removed if unpublished */
    js->out = o;
    js->fd = o.fd;
    js->published = js->published || publish;
    js->run_off = run_at;
    js->run_cap = cap;
    js->tail_off = off;
    return 0;
}

/* Rewrites the run object in its room (padded with spaces, which JSON
 * allows between a value and the next comma), or the document when it has
 * outgrown it; then fsyncs. 0 or -errno. */
static int js_update_run(struct json_sink *js)
{
    struct iof_buf b = IOF_BUF_INIT;
    int r;

    js_run(js, &b);
    if (b.err) {
        iof_buf_free(&b);
        return -ENOMEM;
    }
    if (b.len > js->run_cap) {
        iof_buf_free(&b);
        return js_create(js, NULL, true, NULL);
    }
    while (b.len < js->run_cap)
        iof_buf_addc(&b, ' ');
    r = b.err ? -ENOMEM : write_all(js->fd, b.p, b.len, js->run_off);
    iof_buf_free(&b);
    if (!r && fsync(js->fd) != 0 && errno != EINVAL)
        r = -errno;
    return r;
}

/* Appending a test: its text goes where the closing "]}\n" stood, then the
 * closing brackets after it. The buffer starts with the byte before the
 * brackets ('[' before the first test, '}' after one) so iof_json_sep() places
 * the comma between tests, and is written out whenever it passes
 * JS_FLUSH_BYTES (keeping its last byte for the same reason). */
struct jw {
    struct json_sink *js;
    struct iof_buf b;
    off_t off; /* where b.p[0] goes */
    int err;
};

static void jw_flush(struct jw *w, bool all)
{
    size_t n = all ? w->b.len : w->b.len - 1;
    char last;

    if (!w->b.len || (!all && w->b.len < JS_FLUSH_BYTES))
        return;
    if (!w->err && w->b.err)
        w->err = w->b.err;
    if (!w->err)
        w->err = write_all(w->js->fd, w->b.p, n, w->off);
    w->off += (off_t)n;
    last = w->b.p[w->b.len - 1];
    iof_buf_reset(&w->b);
    if (!all)
        iof_buf_addc(&w->b, last);
}

static void jw_begin(struct jw *w, struct json_sink *js)
{
    *w = (struct jw){.js = js, .b = IOF_BUF_INIT, .off = js->tail_off - 1};
    iof_buf_addc(&w->b, js->ntests ? '}' : '[');
}

/* Closes the tests array after the test and fsyncs; on a failure the file
 * is cut back to the tests before it. 0 or -errno. */
static int jw_end(struct jw *w)
{
    struct json_sink *js = w->js;
    static const char tail[] = "]}\n";

    iof_buf_addstr(&w->b, tail);
    jw_flush(w, true);
    iof_buf_free(&w->b);
    if (!w->err && fsync(js->fd) != 0 && errno != EINVAL)
        w->err = -errno;
    if (w->err) {
        /* Best effort: the document as it was before the test. */
        if (write_all(js->fd, tail, sizeof(tail) - 1, js->tail_off) == 0 &&
            ftruncate(js->fd, js->tail_off + (off_t)sizeof(tail) - 1) == 0)
            fsync(js->fd);
        return w->err;
    }
    js->tail_off = w->off - (off_t)(sizeof(tail) - 1);
    return 0;
}

/* Remembers the first failure (reported once at close). */
static void js_fail(struct json_sink *js, int r)
{
    if (r && !js->sink->write_error)
        js->sink->write_error = r;
}

/* Appends the running test to the document (te NULL: cut short without
 * its end), updates the run object and clears the test. */
static void jt_finish(struct json_sink *js, const struct mgr_test_end *te)
{
    struct jtest *t = &js->cur;
    struct jw w;
    struct iof_buf *b = &w.b;
    int r;

    if (t->nrows)
        qsort(t->rows, t->nrows, sizeof(*t->rows), row_cmp);
    if (t->nivs)
        qsort(t->ivs, t->nivs, sizeof(*t->ivs), iv_cmp);
    jw_begin(&w, js);
    iof_json_open(b, '{');
    iof_json_key(b, "index");
    iof_json_u64(b, t->index);
    iof_json_key(b, "spec");
    iof_json_str(b, t->spec);
    iof_json_key(b, "cycle");
    iof_json_str(b, t->cycle);
    iof_json_key(b, "cycle_param");
    iof_json_str(b, t->cycle_param);
    iof_json_key(b, "cycle_value");
    jb_or_null(b, t->cycle_param, iof_json_u64, t->cycle_value);
    if (t->rate_step) {
        /* Only in a rate cycle's tests; null for its unthrottled step. */
        iof_json_key(b, "rate_pct");
        jb_or_null(b, t->rate_pct > 0, iof_json_dbl, t->rate_pct);
        iof_json_key(b, "rate_target_iops");
        jb_or_null(b, t->rate_target > 0, iof_json_dbl, t->rate_target);
    }
    iof_json_key(b, "start_time");
    jb_time(b, t->start_wall_ns);
    iof_json_key(b, "start_unix_ns");
    iof_json_u64(b, t->start_wall_ns);
    iof_json_key(b, "end_time");
    jb_or_null(b, te && te->end_wall_ns, jb_time, te->end_wall_ns);
    iof_json_key(b, "end_unix_ns");
    jb_or_null(b, te && te->end_wall_ns, iof_json_u64, te->end_wall_ns);
    iof_json_key(b, "start_skew_ms");
    jb_or_null(b, te, iof_json_dbl, te->start_skew_ms);
    iof_json_key(b, "nodes");
    jb_or_null(b, te, iof_json_u64, te->nodes);
    iof_json_key(b, "lost");
    jb_or_null(b, te, iof_json_u64, te->lost);
    iof_json_key(b, "absent");
    if (te) {
        iof_json_open(b, '[');
        for (size_t i = 0; i < te->nabsent; i++)
            iof_json_str(b, te->absent[i]);
        iof_json_close(b, ']');
    } else {
        iof_json_null(b);
    }
    iof_json_key(b, "interrupted");
    iof_json_bool(b, te ? te->interrupted : true);
    iof_json_key(b, "complete");
    iof_json_bool(b, te != NULL);
    iof_json_key(b, "intervals");
    iof_json_open(b, '[');
    for (size_t i = 0; i < t->nivs; i++) {
        iof_json_raw(b, t->ivs[i].text, t->ivs[i].len);
        jw_flush(&w, false);
    }
    iof_json_close(b, ']');
    iof_json_key(b, "results");
    iof_json_open(b, '[');
    for (size_t i = 0; i < t->nrows; i++) {
        iof_json_raw(b, t->rows[i].text, t->rows[i].len);
        jw_flush(&w, false);
    }
    iof_json_close(b, ']');
    iof_json_close(b, '}');
    if (js->oom)
        js_fail(js, -ENOMEM); /* a row or interval could not be kept */
    r = jw_end(&w);
    js_fail(js, r);
    if (!r) {
        if (!te || te->interrupted)
            js->interrupted = true;
        js->ntests++;
        js_fail(js, js_update_run(js));
    }
    jt_clear(t);
}

/* --- sink ops ------------------------------------------------------------------------ */

static void js_free(struct json_sink *js)
{
    if (!js)
        return;
    jt_clear(&js->cur);
    iof_buf_free(&js->knees);
    iof_outfile_abort(&js->out); /* an unpublished document is removed */
    free(js);
}

/* From "plan" to the opening bracket of "tests": the plan text (compact
 * JSON, embedded as it is) and agents after run_begin, else null and []. */
static void js_body(struct iof_buf *b, const struct mgr_run_info *ri)
{
    const char *text = ri ? ri->plan_text : NULL;
    size_t len = 0;

    if (text) {
        while (*text == ' ' || *text == '\n' || *text == '\r' || *text == '\t')
            text++;
        len = strlen(text);
        while (len && (text[len - 1] == ' ' || text[len - 1] == '\n' || text[len - 1] == '\r' ||
                       text[len - 1] == '\t'))
            len--;
    }
    iof_buf_addstr(b, ",\"plan\":");
    if (len)
        iof_buf_add(b, text, len);
    else
        iof_buf_addstr(b, "null");
    iof_buf_addstr(b, ",\"agents\":[");
    for (size_t i = 0; ri && i < ri->nagents; i++)
        jb_agent(b, &ri->agents[i]);
    iof_buf_addstr(b, "],\"histogram_layout\":");
    jb_layout(b);
    iof_buf_addstr(b, ",\"tests\":[");
}

static int js_open(struct mgr_sink *s, const char *path, struct iof_diag *diag)
{
    struct json_sink *js = calloc(1, sizeof(*js));
    struct iof_buf body = IOF_BUF_INIT;
    int r;

    if (!js)
        return iof_diag_set(diag, -ENOMEM, "%s: out of memory", path);
    js->sink = s;
    js->fd = -1;
    js->out = (struct iof_outfile)IOF_OUTFILE_INIT;
    /* Write the empty document now, under its temporary name: an unwritable
     * path fails before the run. */
    js_body(&body, NULL);
    r = js_create(js, &body, false, diag);
    iof_buf_free(&body);
    if (r) {
        js_free(js);
        return r;
    }
    s->priv = js;
    return 0;
}

static void js_run_begin(struct mgr_sink *s, const struct mgr_run_info *ri)
{
    struct json_sink *js = s->priv;
    struct iof_buf body = IOF_BUF_INIT;

    js->begun = true;
    js->start_wall_ns = ri->start_wall_ns;
    js->plan = ri->plan;
    js->agents = ri->agents;
    js->nagents = ri->nagents;
    if (ri->plan) {
        js->tests_planned = ri->plan->nspecs * iof_plan_cycle_steps(ri->plan);
        if (ri->plan->cycle.param == IOF_CYCLE_RATE && ri->plan->cycle.rate.find_max)
            js->find_max_specs = iof_plan_positions(ri->plan);
    }
    /* No test yet: the document is written whole, once. */
    js_body(&body, ri);
    {
        struct iof_diag d = {{0}};
        int r = js_create(js, &body, true, &d);
        if (r)
            IOF_WARN("%s", d.msg);
        js_fail(js, r);
    }
    iof_buf_free(&body);
}

static void js_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    jt_begin(s->priv, ti);
}

static void js_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct json_sink *js = s->priv;
    struct jtest *t = jt_for(js, iv->test);
    struct iof_buf b = IOF_BUF_INIT;

    if (!grow((void **)&t->ivs, &t->capivs, t->nivs, sizeof(*t->ivs))) {
        js->oom = true;
        return;
    }
    iof_json_open(&b, '{');
    iof_json_key(&b, "interval");
    iof_json_u64(&b, iv->k + 1); /* 1-based, as test and the --timeseries file */
    iof_json_key(&b, "time_s");
    iof_json_dbl(&b, iv->time_s);
    iof_json_key(&b, "row_type");
    iof_json_str(&b, iv->node ? "NODE" : "ALL");
    iof_json_key(&b, "node");
    iof_json_str(&b, iv->node ? iv->node : "ALL");
    iof_json_key(&b, "reported");
    iof_json_u64(&b, iv->reported);
    iof_json_key(&b, "lost");
    if (iv->node)
        iof_json_bool(&b, iv->lost != 0);
    else
        iof_json_u64(&b, iv->lost);
    iof_json_key(&b, "late");
    iof_json_bool(&b, iv->late);
    jb_metrics(&b, iv->stats, iv->m, !(iv->node && iv->lost), false);
    /* ALL: the mean over the nodes that measured their CPU (manager/sink.h) */
    jb_cpu_fields(&b, iv->cpu, iv->stats, iv->ns);
    iof_json_close(&b, '}');
    t->ivs[t->nivs] = (struct jiv){.k = iv->k, .all = !iv->node, .seq = t->nivs};
    t->ivs[t->nivs].text = iof_buf_take(&b, &t->ivs[t->nivs].len);
    if (!t->ivs[t->nivs].text) {
        js->oom = true;
        return;
    }
    t->nivs++;
}

/* One row object; ti names the test so a row stands alone like a CSV line. */
static void jb_row(struct iof_buf *b, const struct jtest *t, const struct mgr_row *r,
                   const struct proto_cpu *cpu)
{
    const struct iof_stats *st = r->stats;

    iof_json_open(b, '{');
    iof_json_key(b, "test");
    iof_json_u64(b, t->index);
    iof_json_key(b, "spec");
    iof_json_str(b, t->spec);
    iof_json_key(b, "cycle");
    iof_json_str(b, t->cycle);
    iof_json_key(b, "row_type");
    iof_json_str(b, mgr_row_type_name(r->type));
    iof_json_key(b, "node");
    iof_json_str(b, r->type == MGR_ROW_ALL ? NULL : r->node);
    iof_json_key(b, "worker");
    iof_json_str(b, r->type == MGR_ROW_WORKER || r->type == MGR_ROW_TARGET ? r->worker : NULL);
    iof_json_key(b, "target");
    iof_json_str(b, r->type == MGR_ROW_TARGET ? r->target : NULL);
    iof_json_key(b, "group");
    iof_json_str(b,
                 r->type == MGR_ROW_GROUP || r->type == MGR_ROW_WORKER || r->type == MGR_ROW_TARGET
                     ? r->group
                     : NULL);
    iof_json_key(b, "queue_depth");
    if (r->type == MGR_ROW_NODE || (r->type == MGR_ROW_ALL && !r->queue_depth))
        iof_json_null(b); /* NODE, and ALL unless every group has the same */
    else
        iof_json_u64(b, r->queue_depth);
    iof_json_key(b, "nodes");
    iof_json_u64(b, r->nodes);
    iof_json_key(b, "workers");
    iof_json_u64(b, r->workers);
    iof_json_key(b, "targets");
    iof_json_u64(b, r->targets);
    iof_json_key(b, "range_offset");
    jb_or_null(b, r->type == MGR_ROW_TARGET, iof_json_u64, r->range_offset);
    iof_json_key(b, "range_size");
    jb_or_null(b, r->type == MGR_ROW_TARGET, iof_json_u64, r->range_size);
    /* TARGET: where it lives on its node, as the agent found it (null when
     * unknown: an older agent, the null engine). */
    const struct mgr_place *pl = r->type == MGR_ROW_TARGET ? r->place : NULL;
    iof_json_key(b, "device");
    iof_json_str(b, pl ? pl->device : NULL);
    iof_json_key(b, "fstype");
    iof_json_str(b, pl ? pl->fstype : NULL);
    iof_json_key(b, "ram_backed");
    jb_or_null(b, pl && pl->ram_backed >= 0, iof_json_bool, pl->ram_backed == 1);
    iof_json_key(b, "status");
    iof_json_str(b, mgr_row_status_name(r->status));
    iof_json_key(b, "window_start_s");
    jb_or_null(b, r->status != MGR_STATUS_ABSENT, iof_json_dbl, (double)r->window_start_ns / 1e9);
    iof_json_key(b, "window_end_s");
    jb_or_null(b, r->status != MGR_STATUS_ABSENT, iof_json_dbl, (double)r->window_end_ns / 1e9);
    jb_metrics(b, st, r->m, true, true);
    jb_cpu_fields(b, cpu, st, r->ns);
    /* NODE: each CPU over the window of cpu (an agent of protocol 1.7);
     * null when unknown and on other rows. */
    iof_json_key(b, "cpus");
    if (r->type == MGR_ROW_NODE && cpu && cpu->valid && r->ncpus) {
        iof_json_open(b, '[');
        for (size_t i = 0; i < r->ncpus; i++) {
            const struct proto_cpu_one *c = &r->cpus[i];
            iof_json_open(b, '{');
            iof_json_key(b, "id");
            iof_json_u64(b, c->id);
            iof_json_key(b, "busy_pct");
            iof_json_dbl(b, c->busy_pct);
            iof_json_key(b, "user_pct");
            iof_json_dbl(b, c->user_pct);
            iof_json_key(b, "sys_pct");
            iof_json_dbl(b, c->sys_pct);
            iof_json_key(b, "dpc_pct");
            iof_json_dbl(b, c->dpc_pct);
            iof_json_key(b, "irq_pct");
            iof_json_dbl(b, c->irq_pct);
            iof_json_close(b, '}');
        }
        iof_json_close(b, ']');
    } else {
        iof_json_null(b);
    }
    iof_json_key(b, "first_error");
    if (st->first_error) {
        iof_json_open(b, '{');
        iof_json_key(b, "code");
        iof_json_str(b, iof_errname(st->first_error));
        iof_json_key(b, "message");
        iof_json_str(b, iof_strerror(st->first_error));
        iof_json_key(b, "offset");
        iof_json_u64(b, st->first_error_offset);
        iof_json_close(b, '}');
    } else {
        iof_json_null(b);
    }
    iof_json_key(b, "latency");
    if (r->type == MGR_ROW_TARGET && !t->target_hists) {
        iof_json_null(b); /* a test past the size run.target_histograms allows */
        iof_json_close(b, '}');
        return;
    }
    iof_json_open(b, '{');
    iof_json_key(b, "read");
    jb_hist(b, &st->rd.lat);
    iof_json_key(b, "write");
    jb_hist(b, &st->wr.lat);
    iof_json_close(b, '}');
    iof_json_close(b, '}');
}

static void js_add_row(struct json_sink *js, struct jtest *t, const struct mgr_row *r)
{
    struct iof_buf b = IOF_BUF_INIT;
    struct jrow *row;
    size_t node = 0, worker = 0;

    if (!grow((void **)&t->rows, &t->caprows, t->nrows, sizeof(*t->rows))) {
        js->oom = true;
        return;
    }
    if (r->type != MGR_ROW_ALL && r->type != MGR_ROW_GROUP) {
        node = jt_node_rank(t, r->node);
        if (node != SIZE_MAX && (r->type == MGR_ROW_WORKER || r->type == MGR_ROW_TARGET))
            worker = jt_worker_rank(t, node, r->worker);
        if (node == SIZE_MAX || worker == SIZE_MAX) {
            js->oom = true;
            return;
        }
    }
    /* CPU belongs to NODE and (as the nodes' mean) ALL rows only. */
    jb_row(&b, t, r, r->type == MGR_ROW_NODE || r->type == MGR_ROW_ALL ? r->cpu : NULL);
    row = &t->rows[t->nrows];
    *row =
        (struct jrow){.type = r->type, .node_rank = node, .worker_rank = worker, .seq = t->nrows};
    row->text = iof_buf_take(&b, &row->len);
    if (!row->text) {
        js->oom = true;
        return;
    }
    t->nrows++;
}

static void js_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    struct json_sink *js = s->priv;
    js_add_row(js, jt_for(js, ti), r);
}

static void js_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    struct json_sink *js = s->priv;
    struct jtest *t = jt_for(js, te->test);

    if (te->all)
        js_add_row(js, t, te->all);
    jt_finish(js, te);
}

/* A latency of the search in ms, to the nanosecond. */
static void jb_knee_ms(struct iof_buf *b, double ns)
{
    iof_json_dbl(b, round(ns) / 1e6);
}

/* An IOPS figure of the search, to a thousandth. */
static void jb_knee_iops(struct iof_buf *b, double iops)
{
    iof_json_dbl(b, round(iops * 1000) / 1000);
}

/* A step's figures, one per run, each written by put. */
static void jb_knee_runs(struct iof_buf *b, const double *v, unsigned runs,
                         void (*put)(struct iof_buf *, double))
{
    iof_json_open(b, '[');
    for (unsigned r = 0; r < runs; r++)
        put(b, v[r]);
    iof_json_close(b, ']');
}

/* One entry of the search's log: a step (its runs) or a confirmation. */
static void jb_knee_step(struct iof_buf *b, const struct iof_knee_step *st)
{
    iof_json_open(b, '{');
    iof_json_key(b, "kind");
    iof_json_str(b, st->confirm ? "confirm" : "step");
    iof_json_key(b, "rate_pct");
    iof_json_dbl(b, st->frac * 100);
    iof_json_key(b, "runs");
    iof_json_u64(b, st->runs);
    iof_json_key(b, "runs_met");
    iof_json_u64(b, st->nmet);
    iof_json_key(b, "met");
    jb_or_null(b, st->decided, iof_json_bool, st->met);
    iof_json_key(b, "iops");
    jb_knee_runs(b, st->iops, st->runs, jb_knee_iops);
    iof_json_key(b, "latency_ms");
    jb_knee_runs(b, st->lat_ns, st->runs, jb_knee_ms);
    iof_json_close(b, '}');
}

static void js_knee(struct mgr_sink *s, const struct mgr_knee_info *k)
{
    struct json_sink *js = s->priv;
    struct iof_buf *b = &js->knees;
    const struct iof_knee_step *conf = NULL;

    for (size_t i = 0; k->knee && i < k->knee->nsteps; i++)
        if (k->knee->step[i].confirm && k->knee->step[i].runs)
            conf = &k->knee->step[i];
    iof_json_open(b, '{'); /* comma-separated by iof_json_sep */
    iof_json_key(b, "spec");
    iof_json_str(b, k->spec);
    iof_json_key(b, "metric");
    iof_json_str(b, k->metric);
    iof_json_key(b, "target_ms");
    iof_json_dbl(b, (double)k->target_ns / 1e6);
    iof_json_key(b, "max_iops");
    jb_or_null(b, k->iops > 0, iof_json_dbl, k->iops);
    iof_json_key(b, "latency_ms");
    jb_knee_ms(b, k->lat_ns);
    iof_json_key(b, "offered_iops");
    jb_or_null(b, k->iops > 0, jb_knee_iops, k->offered_iops);
    iof_json_key(b, "base_iops");
    iof_json_dbl(b, k->base_iops);
    iof_json_key(b, "confidence");
    if (k->iops > 0) {
        iof_json_open(b, '{');
        iof_json_key(b, "runs_met");
        iof_json_u64(b, k->runs_met);
        iof_json_key(b, "runs");
        iof_json_u64(b, k->runs);
        iof_json_close(b, '}');
    } else {
        iof_json_null(b);
    }
    iof_json_key(b, "confirmation");
    if (conf)
        jb_knee_step(b, conf);
    else
        iof_json_null(b);
    iof_json_key(b, "search");
    iof_json_open(b, '[');
    for (size_t i = 0; k->knee && i < k->knee->nsteps; i++)
        if (k->knee->step[i].runs)
            jb_knee_step(b, &k->knee->step[i]);
    iof_json_close(b, ']');
    iof_json_key(b, "steps");
    iof_json_u64(b, k->steps);
    iof_json_key(b, "headline");
    iof_json_str(b, k->headline);
    iof_json_close(b, '}');
}

static void js_run_end(struct mgr_sink *s, int exit_code)
{
    struct json_sink *js = s->priv;

    if (js->ended)
        return;
    /* A test cut short without its end (a second Ctrl-C) keeps what arrived. */
    if (js->cur.active)
        jt_finish(js, NULL);
    js->ended = true;
    js->exit_code = exit_code;
    js_fail(js, js_update_run(js));
}

static void js_close(struct mgr_sink *s)
{
    struct json_sink *js = s->priv;
    struct iof_diag d = {{0}};

    if (s->write_error)
        IOF_ERROR("%s: write failed: %s", s->path, iof_strerror(s->write_error));
    /* Not yet in place (no run began): put there now, or kept and named
     * when that fails; removed when the run was refused. */
    if (js && !s->aborted && iof_outfile_close(&js->out, true, &d)) {
        IOF_ERROR("%s", d.msg);
        if (!s->write_error)
            s->write_error = -EIO;
    }
    js_free(js);
    s->priv = NULL;
}

const struct mgr_sink_ops mgr_sink_json = {
    .name = "json",
    .open = js_open,
    .run_begin = js_run_begin,
    .test_begin = js_test_begin,
    .interval = js_interval,
    .row = js_row,
    .test_end = js_test_end,
    .run_end = js_run_end,
    .knee = js_knee,
    .close = js_close,
};
