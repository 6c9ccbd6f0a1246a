/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_out_json.c - manager/sinks/json.c, the --json result document.
 *
 * The sink is driven through its ops with synthetic events shaped like
 * manager/run.c's (2 tests, 2 nodes x 2 workers x 2 targets, real
 * histograms from a fixed-seed generator; node, spec, target and plan names
 * with quotes, backslashes, control characters, UTF-8 and invalid UTF-8), and
 * the file is read back strictly after every rewrite: cJSON must consume the
 * whole file, every byte is well-formed UTF-8 with no raw control character,
 * no object repeats a key, and every object has exactly the documented keys in
 * the documented order (docs/results.md).
 *
 * Checked: ALL = sum of NODE = sum of WORKER = sum of TARGET per test (ios,
 * bytes, errors); iops = read_iops + write_iops; mibps from bytes and
 * duration; each sparse histogram is the recorded one bit for bit and its
 * counts sum to the row's ios; the NODE histograms re-merged give the ALL
 * histogram exactly; p99 recomputed from the sparse buckets by the documented
 * rule equals p99_lat_ms; percentiles are monotone; rows come ALL, then per
 * node NODE, WORKER, its TARGETs; intervals by interval, ALL first; the file
 * is valid after open, after run_begin, in the middle of a test, after test 1
 * (holding test 1 only) and at the end; a test cut short keeps what arrived;
 * an unwritable path fails at open with a diag naming it.
 *
 * Streaming: each test is appended to the same file (same inode, the earlier
 * bytes unchanged), never a whole-document rewrite, except when the run
 * object outgrows its room (find_max answers), which rewrites it keeping
 * every test; TARGET rows drop their histograms past the size
 * run.target_histograms allows (mgr_target_hists, counted from the plan). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "common/hist.h"
#include "common/spec.h"
#include "common/stats.h"
#include "manager/sink.h"
#include "proto/msg.h"
#include "proto/plan.h"
#include "tmpdir.h"

#include <cjson/cJSON.h>

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NTESTS 2
#define NNODES 2
#define NWORKERS 2
#define NTARGETS 2
#define NINTERVALS 3
#define ROWS_PER_TEST (1 + NNODES * (1 + NWORKERS * (1 + NTARGETS)))
#define MIB (1024.0 * 1024.0)

static char g_dir[PATH_MAX];

/* name inside the test's temp dir */
static void path_in(char *buf, size_t cap, const char *name)
{
    int n = snprintf(buf, cap, "%s/%s", g_dir, name);
    assert_true(n > 0 && (size_t)n < cap);
}

/* ---- data ---------------------------------------------------------------- */

static const char *const node_names[NNODES] = {
    "node \"A\" \\ tab\there\x01\x1f nl\n",
    "n\xc5\x93ud-\xce\xb2-\xe6\x97\xa5\xe6\x9c\xac-\xf0\x9f\x98\x80",
};
static const char *const worker_names[NWORKERS] = {"w0", "w1"};
static const char *const target_names[NTARGETS] = {
    "/dev/disk/by-id/\"x\"\\y",
    "file, with comma \xc3\xa9 \x7f.dat",
};
static const char *const spec_names[NTESTS] = {
    "4K \"70/30\" \\ random",
    "16K \xc3\xbc seq",
};
static const char *const cycles[NTESTS] = {"", "queue_depth=4"};
static const char plan_text[] = "{\"name\":\"q\\\"uote\\\\d \\u00e9 \xe2\x82\xac\",\"run\":"
                                "{\"ramp\":\"0s\",\"duration\":\"3s\",\"interval\":\"1s\"},"
                                "\"specs\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"n\":[1,2.5,null]}";

struct rng {
    uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Log-uniform latencies from 20 ns to ~100 ms, so exact and log buckets both
 * fill, plus the odd outlier beyond the histogram's top. */
static void fill_dir(struct rng *r, struct iof_dirstats *d, unsigned n, uint64_t bs)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t v = 20 + (rng_next(r) % 64);
        v <<= rng_next(r) % 22;
        if (rng_next(r) % 5000 == 0)
            v = ((uint64_t)1 << 44) + 7;
        iof_hist_record(&d->lat, v);
    }
    d->ios = n;
    d->bytes = n * bs;
    d->errors = rng_next(r) % 3;
}

static struct iof_stats *stats_new(void)
{
    struct iof_stats *s = malloc(sizeof(*s));
    assert_non_null(s);
    iof_stats_reset(s);
    return s;
}

static void stats_random(struct rng *r, struct iof_stats *s, unsigned scale)
{
    iof_stats_reset(s);
    fill_dir(r, &s->rd, 200 * scale + (unsigned)(rng_next(r) % 300), 4096);
    fill_dir(r, &s->wr, 100 * scale + (unsigned)(rng_next(r) % 200), 4096);
}

struct run_data {
    struct iof_stats *tgt[NTESTS][NNODES][NWORKERS][NTARGETS];
    struct iof_stats *wrk[NTESTS][NNODES][NWORKERS];
    struct iof_stats *node[NTESTS][NNODES];
    struct iof_stats *all[NTESTS];
    struct iof_stats *iv[NTESTS][NINTERVALS][NNODES];
    struct iof_stats *iv_all[NTESTS][NINTERVALS];
};

static void data_make(struct run_data *d)
{
    struct rng r = {42};
    for (int t = 0; t < NTESTS; t++) {
        d->all[t] = stats_new();
        for (int n = 0; n < NNODES; n++) {
            d->node[t][n] = stats_new();
            for (int w = 0; w < NWORKERS; w++) {
                d->wrk[t][n][w] = stats_new();
                for (int x = 0; x < NTARGETS; x++) {
                    struct iof_stats *s = d->tgt[t][n][w][x] = stats_new();
                    stats_random(&r, s, (unsigned)(1 + t + x));
                    if (t == 1 && n == 1 && w == 0 && x == 1) {
                        s->first_error = -EIO;
                        s->first_error_offset = 1234567;
                    }
                    iof_stats_merge(d->wrk[t][n][w], s);
                }
                iof_stats_merge(d->node[t][n], d->wrk[t][n][w]);
            }
            iof_stats_merge(d->all[t], d->node[t][n]);
        }
        for (int k = 0; k < NINTERVALS; k++) {
            d->iv_all[t][k] = stats_new();
            for (int n = 0; n < NNODES; n++) {
                d->iv[t][k][n] = stats_new();
                stats_random(&r, d->iv[t][k][n], 1);
                iof_stats_merge(d->iv_all[t][k], d->iv[t][k][n]);
            }
        }
    }
}

static void data_free(struct run_data *d)
{
    for (int t = 0; t < NTESTS; t++) {
        free(d->all[t]);
        for (int n = 0; n < NNODES; n++) {
            free(d->node[t][n]);
            for (int w = 0; w < NWORKERS; w++) {
                free(d->wrk[t][n][w]);
                for (int x = 0; x < NTARGETS; x++)
                    free(d->tgt[t][n][w][x]);
            }
        }
        for (int k = 0; k < NINTERVALS; k++) {
            free(d->iv_all[t][k]);
            for (int n = 0; n < NNODES; n++)
                free(d->iv[t][k][n]);
        }
    }
}

/* Node 0 measured its CPU, node 1 did not: the cluster's mean (ALL) is
 * node 0's. */
static const struct proto_cpu cpu_a = {.valid = true,
                                       .busy_pct = 37.5,
                                       .user_pct = 12.25,
                                       .sys_pct = 25.25,
                                       .agent_pct = 3.5,
                                       .node_valid = true,
                                       .dpc_pct = 4.5,
                                       .irq_pct = 1.25,
                                       .intr_per_s = 12000,
                                       .packets_per_s = 350.5,
                                       .packet_errors = 3,
                                       .retrans_per_s = 0.75};

/* ---- strict reading ------------------------------------------------------ */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f)
        fail_msg("%s: %s", path, strerror(errno));
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* RFC 8259: UTF-8 only, and no raw control character anywhere (strings must
 * escape them; the writer emits no whitespace but the final newline). */
static void check_bytes(const unsigned char *p, size_t len)
{
    assert_true(len > 0 && p[len - 1] == '\n');
    for (size_t i = 0; i < len - 1;) {
        unsigned char c = p[i];
        size_t n, k;
        if (c < 0x20)
            fail_msg("raw control byte 0x%02x at offset %zu", c, i);
        if (c < 0x80) {
            i++;
            continue;
        }
        n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (c < 0xC2 || c > 0xF4 || i + n > len - 1)
            fail_msg("bad UTF-8 lead byte 0x%02x at offset %zu", c, i);
        for (k = 1; k < n; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                fail_msg("bad UTF-8 continuation at offset %zu", i + k);
        i += n;
    }
}

static void check_no_dup_keys(const cJSON *j)
{
    for (const cJSON *a = j ? j->child : NULL; a; a = a->next) {
        if (cJSON_IsObject(j))
            for (const cJSON *b = a->next; b; b = b->next)
                if (!strcmp(a->string, b->string))
                    fail_msg("duplicate key \"%s\"", a->string);
        check_no_dup_keys(a);
    }
}

/* Parses the whole file or fails; also checks no PATH.tmp-* is left. */
static cJSON *load(const char *path)
{
    size_t len;
    char *buf = slurp(path, &len);
    const char *end = NULL;
    char tmp[PATH_MAX + 8];
    glob_t g;
    cJSON *j;

    check_bytes((const unsigned char *)buf, len);
    /* the terminating NUL counts: cJSON must reach it, nothing may follow */
    j = cJSON_ParseWithLengthOpts(buf, len + 1, &end, true);
    if (!j)
        fail_msg("%s: not JSON near offset %td: %.60s", path, end ? end - buf : -1, end ? end : "");
    assert_ptr_equal(end, buf + len);
    free(buf);
    assert_true(cJSON_IsObject(j));
    check_no_dup_keys(j);
    snprintf(tmp, sizeof(tmp), "%s.tmp-*", path);
    assert_int_equal(glob(tmp, 0, NULL, &g), GLOB_NOMATCH);
    return j;
}

/* obj has exactly these keys, in this order (NULL-terminated). */
static void check_keys(const cJSON *obj, const char *const *keys)
{
    const cJSON *c = obj->child;
    assert_true(cJSON_IsObject(obj));
    for (size_t i = 0; keys[i]; i++, c = c->next) {
        if (!c)
            fail_msg("missing key \"%s\"", keys[i]);
        if (strcmp(c->string, keys[i]))
            fail_msg("key \"%s\" where \"%s\" was expected", c->string, keys[i]);
    }
    if (c)
        fail_msg("unexpected key \"%s\"", c->string);
}

static const cJSON *get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        fail_msg("no \"%s\"", key);
    return v;
}

static uint64_t get_u64(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble))
        fail_msg("\"%s\" is not a non-negative integer", key);
    return (uint64_t)v->valuedouble;
}

static double get_num(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("\"%s\" is not a number", key);
    return v->valuedouble;
}

static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    if (!cJSON_IsString(v))
        fail_msg("\"%s\" is not a string", key);
    return v->valuestring;
}

static void assert_near(double a, double b)
{
    if (fabs(a - b) > 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b))))
        fail_msg("%.17g != %.17g", a, b);
}

static const char *const top_keys[] = {"iofleet",          "run",   "plan", "agents",
                                       "histogram_layout", "tests", NULL};
static const char *const run_keys[] = {"start_time",  "start_unix_ns", "finished",      "exit_code",
                                       "interrupted", "tests_planned", "tests_written", NULL};
static const char *const test_keys[] = {
    "index",         "spec",        "cycle",       "cycle_param",   "cycle_value", "start_time",
    "start_unix_ns", "end_time",    "end_unix_ns", "start_skew_ms", "nodes",       "lost",
    "absent",        "interrupted", "complete",    "intervals",     "results",     NULL};
#define METRIC_KEYS_HEAD                                                                           \
    "duration_s", "iops", "read_iops", "write_iops", "mibps", "read_mibps", "write_mibps",         \
        "avg_lat_ms", "avg_read_lat_ms", "avg_write_lat_ms", "p50_lat_ms", "p90_lat_ms",           \
        "p95_lat_ms", "p99_lat_ms", "p999_lat_ms", "p9999_lat_ms", "max_lat_ms", "avg_svc_lat_ms", \
        "max_svc_lat_ms", "late_ios"
#define METRIC_KEYS_TAIL                                                                           \
    "read_ios", "write_ios", "bytes_read", "bytes_written", "errors", "read_errors",               \
        "write_errors", "verify_errors", "verify_bad_reads", "verify_overlaid", "cpu_pct",         \
        "cpu_effectiveness", "cpu"
/* Final rows have the lateness beside late_ios; intervals do not. */
#define METRIC_KEYS METRIC_KEYS_HEAD, METRIC_KEYS_TAIL
#define ROW_METRIC_KEYS METRIC_KEYS_HEAD, "lateness", METRIC_KEYS_TAIL
static const char *const row_keys[] = {
    "test",          "spec",       "cycle",        "row_type",       "node",
    "worker",        "target",     "group",        "queue_depth",    "nodes",
    "workers",       "targets",    "range_offset", "range_size",     "device",
    "fstype",        "ram_backed", "status",       "window_start_s", "window_end_s",
    ROW_METRIC_KEYS, "cpus",       "first_error",  "latency",        NULL};
static const char *const iv_keys[] = {"interval", "time_s", "row_type",  "node", "reported",
                                      "lost",     "late",   METRIC_KEYS, NULL};
static const char *const hist_keys[] = {"count", "sum_ns", "min_ns", "max_ns", "buckets", NULL};
static const char *const cpu_keys[] = {
    "busy_pct",   "user_pct",      "sys_pct",       "agent_pct",     "dpc_pct", "irq_pct",
    "intr_per_s", "packets_per_s", "packet_errors", "retrans_per_s", NULL};
/* The node figures of the cpu object (protocol 1.6), as in cpu_a. */
static const char *const cpus_keys[] = {"id",      "busy_pct", "user_pct", "sys_pct",
                                        "dpc_pct", "irq_pct",  NULL};
/* Node 0's CPUs (protocol 1.7): ids with a gap, as Linux numbers them. */
static const struct proto_cpu_one cpus_a[2] = {
    {.id = 0, .busy_pct = 50.25, .user_pct = 20, .sys_pct = 30.25, .dpc_pct = 6, .irq_pct = 2},
    {.id = 2, .busy_pct = 24.75, .user_pct = 4.5, .sys_pct = 20.25, .dpc_pct = 3, .irq_pct = 0.5}};
static const char *const cpu_node_keys[] = {"dpc_pct",       "irq_pct",       "intr_per_s",
                                            "packets_per_s", "packet_errors", "retrans_per_s"};
static const char *const agent_keys[] = {"name", "endpoint",     "software", "protocol", "hostname",
                                         "cpus", "memory_bytes", "kernel",   "budget",   "targets",
                                         NULL};
static const char *const budget_keys[] = {"workers", "buffer_mem", "aio_events", "fds", NULL};
static const char *const inv_keys[] = {"path",       "size",  "logical_block_size",
                                       "rotational", "model", NULL};

/* A sparse histogram back into an iof_hist, checking each bucket's low and
 * width against the layout and the ascending order. */
static void hist_parse(const cJSON *j, struct iof_hist *h)
{
    const cJSON *b;
    long last = -1;

    check_keys(j, hist_keys);
    iof_hist_reset(h);
    h->count = get_u64(j, "count");
    h->sum_ns = get_u64(j, "sum_ns");
    if (h->count) {
        h->min_ns = get_u64(j, "min_ns");
        h->max_ns = get_u64(j, "max_ns");
    } else {
        assert_true(cJSON_IsNull(get(j, "min_ns")) && cJSON_IsNull(get(j, "max_ns")));
    }
    cJSON_ArrayForEach(b, get(j, "buckets"))
    {
        uint64_t low, width, count;
        unsigned idx;
        assert_int_equal(cJSON_GetArraySize(b), 3);
        low = (uint64_t)cJSON_GetArrayItem(b, 0)->valuedouble;
        width = (uint64_t)cJSON_GetArrayItem(b, 1)->valuedouble;
        count = (uint64_t)cJSON_GetArrayItem(b, 2)->valuedouble;
        idx = iof_hist_index(low);
        assert_int_equal(iof_hist_bucket_low(idx), low);
        assert_int_equal(iof_hist_bucket_width(idx), width);
        assert_true((long)idx > last);
        assert_true(count > 0);
        last = idx;
        h->buckets[idx] = count;
    }
}

static void assert_hist_equal(const struct iof_hist *a, const struct iof_hist *b)
{
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->sum_ns, b->sum_ns);
    if (a->count) {
        assert_int_equal(a->min_ns, b->min_ns);
        assert_int_equal(a->max_ns, b->max_ns);
    }
    assert_memory_equal(a->buckets, b->buckets, sizeof(a->buckets));
}

/* The percentile rule docs/results.md gives, over read and write merged. */
static double doc_percentile_ms(const struct iof_hist *rd, const struct iof_hist *wr, double q)
{
    uint64_t count = rd->count + wr->count, rank, seen = 0, min, max;
    min = rd->min_ns < wr->min_ns ? rd->min_ns : wr->min_ns;
    max = rd->max_ns > wr->max_ns ? rd->max_ns : wr->max_ns;
    rank = (uint64_t)ceil(q * (double)count);
    for (unsigned i = 0; i < IOF_HIST_BUCKETS; i++) {
        seen += rd->buckets[i] + wr->buckets[i];
        if (seen >= rank) {
            uint64_t mid = iof_hist_bucket_low(i) + iof_hist_bucket_width(i) / 2;
            mid = mid < min ? min : mid > max ? max : mid;
            return (double)mid / 1e6;
        }
    }
    fail_msg("rank %" PRIu64 " beyond the buckets", rank);
    return 0;
}

/* Everything a row or an interval says about its stats. */
static void check_figures(const cJSON *o, const struct iof_stats *want, bool with_hist)
{
    double sec = get_num(o, "duration_s");
    static const char *const pcts[] = {"p50_lat_ms",  "p90_lat_ms",   "p95_lat_ms", "p99_lat_ms",
                                       "p999_lat_ms", "p9999_lat_ms", "max_lat_ms"};
    double prev = 0;

    assert_int_equal(get_u64(o, "read_ios"), want->rd.ios);
    assert_int_equal(get_u64(o, "write_ios"), want->wr.ios);
    assert_int_equal(get_u64(o, "bytes_read"), want->rd.bytes);
    assert_int_equal(get_u64(o, "bytes_written"), want->wr.bytes);
    assert_int_equal(get_u64(o, "errors"), want->rd.errors + want->wr.errors);
    assert_int_equal(get_u64(o, "read_errors"), want->rd.errors);
    assert_int_equal(get_u64(o, "write_errors"), want->wr.errors);
    assert_true(sec > 0);
    assert_near(get_num(o, "iops"), get_num(o, "read_iops") + get_num(o, "write_iops"));
    assert_near(get_num(o, "read_iops"), (double)want->rd.ios / sec);
    assert_near(get_num(o, "mibps"),
                (double)(get_u64(o, "bytes_read") + get_u64(o, "bytes_written")) / MIB / sec);
    assert_near(get_num(o, "mibps"), get_num(o, "read_mibps") + get_num(o, "write_mibps"));
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
        double v = get_num(o, pcts[i]);
        if (v < prev)
            fail_msg("%s %.17g below the previous percentile %.17g", pcts[i], v, prev);
        prev = v;
    }
    assert_true(get_num(o, "avg_lat_ms") <= get_num(o, "max_lat_ms"));
    if (with_hist) {
        const cJSON *lat = get(o, "latency");
        struct iof_hist *rd = malloc(sizeof(*rd)), *wr = malloc(sizeof(*wr));
        uint64_t sum = 0;
        assert_non_null(rd);
        assert_non_null(wr);
        hist_parse(get(lat, "read"), rd);
        hist_parse(get(lat, "write"), wr);
        assert_hist_equal(rd, &want->rd.lat);
        assert_hist_equal(wr, &want->wr.lat);
        for (unsigned i = 0; i < IOF_HIST_BUCKETS; i++)
            sum += rd->buckets[i];
        assert_int_equal(sum, get_u64(o, "read_ios"));
        assert_true(get_num(o, "p99_lat_ms") == doc_percentile_ms(rd, wr, 0.99));
        assert_true(get_num(o, "p50_lat_ms") == doc_percentile_ms(rd, wr, 0.50));
        free(rd);
        free(wr);
    }
}

/* ---- driving the sink ---------------------------------------------------- */

struct fixture {
    char path[PATH_MAX];
    struct mgr_sink *sink;
    struct run_data d;
    struct iof_test tests[NTESTS];
    struct mgr_test_info ti; /* reused for every test, as run.c does */
    struct iof_plan plan;
    struct proto_target_info inv[2];
    struct proto_hello hello[NNODES];
    struct mgr_agent_info agents[NNODES];
};

static void fixture_init(struct fixture *f, const char *name)
{
    struct iof_diag diag = {{0}};

    memset(f, 0, sizeof(*f));
    path_in(f->path, sizeof(f->path), name);
    unlink(f->path);
    data_make(&f->d);
    for (unsigned t = 0; t < NTESTS; t++)
        f->tests[t] = (struct iof_test){.index = t, .spec_index = t};
    f->tests[1].cycle_param = IOF_CYCLE_QUEUE_DEPTH;
    f->tests[1].cycle_value = 4;
    f->plan.nspecs = NTESTS;
    f->inv[0] = (struct proto_target_info){.path = "/dev/sdb",
                                           .size = (uint64_t)1 << 40,
                                           .logical_block_size = 4096,
                                           .rotational = 1,
                                           .model = "Samsung \"EVO\" bad\xff\xc0"
                                                    "end"};
    f->inv[1] = (struct proto_target_info){
        .path = "/data/t\xc3\xa9st", .size = 0, .logical_block_size = 512, .rotational = -1};
    for (int n = 0; n < NNODES; n++) {
        f->hello[n] = (struct proto_hello){.role = PROTO_ROLE_AGENT,
                                           .name = node_names[n],
                                           .major = 1,
                                           .minor = n,
                                           .software = "0.1.0",
                                           .heartbeat_ms = 1000};
        f->hello[n].inventory = (struct proto_inventory){.hostname = node_names[n],
                                                         .cpus = 8,
                                                         .memory_bytes = 17179869184ull,
                                                         .kernel = "6.1.0-18-amd64",
                                                         .ntargets = n == 0 ? 2 : 0,
                                                         .targets = f->inv,
                                                         .has_budget = n == 0,
                                                         .budget = {16, 1ull << 30, 57344, 900}};
        f->agents[n] = (struct mgr_agent_info){.name = node_names[n],
                                               .endpoint = n ? "[::1]:7066" : "10.0.0.1:7066",
                                               .hello = &f->hello[n]};
    }
    assert_int_equal(mgr_sink_open(mgr_sink_for_option("--json"), f->path, 0, &f->sink, &diag), 0);
}

static void fixture_free(struct fixture *f)
{
    assert_int_equal(mgr_sink_close(f->sink), 0);
    data_free(&f->d);
    unlink(f->path);
}

static void run_begin(struct fixture *f)
{
    struct mgr_run_info ri = {.plan = &f->plan,
                              .plan_text = plan_text,
                              .agents = f->agents,
                              .nagents = NNODES,
                              .start_wall_ns = 1714564800123456789ull};
    f->sink->ops->run_begin(f->sink, &ri);
}

static void test_begin(struct fixture *f, int t)
{
    f->ti = (struct mgr_test_info){.test = &f->tests[t],
                                   .ntests = NTESTS,
                                   .spec = spec_names[t],
                                   .cycle = cycles[t],
                                   .start_wall_ns = 1714564801000000000ull + (uint64_t)t};
    f->sink->ops->test_begin(f->sink, &f->ti);
}

/* A row's or interval's metrics, computed once before every sink gets it, as
 * manager/aggregate.c does for a run. */
static const struct mgr_metrics *metrics_of(const struct iof_stats *s, uint64_t ns,
                                            struct mgr_metrics *m)
{
    mgr_metrics_compute(s, ns, m);
    return m;
}

/* Intervals as run.c emits them: each node's as it reports (node 1
 * first here), then the merged ALL. */
static void intervals(struct fixture *f, int t)
{
    for (int k = 0; k < NINTERVALS; k++) {
        for (int n = NNODES - 1; n >= 0; n--) {
            struct mgr_interval iv = {.test = &f->ti,
                                      .k = (uint64_t)k,
                                      .time_s = 1.0 + k,
                                      .node = node_names[n],
                                      .stats = f->d.iv[t][k][n],
                                      .ns = 1000000000ull,
                                      .reported = 1,
                                      .cpu = n == 0 ? &cpu_a : NULL,
                                      .cpu_busy_pct = n == 0 ? cpu_a.busy_pct : 0};
            struct mgr_metrics m;
            iv.m = metrics_of(iv.stats, iv.ns, &m);
            f->sink->ops->interval(f->sink, &iv);
        }
        {
            struct mgr_interval iv = {.test = &f->ti,
                                      .k = (uint64_t)k,
                                      .time_s = 1.0 + k,
                                      .stats = f->d.iv_all[t][k],
                                      .ns = 1000000000ull,
                                      .reported = NNODES,
                                      /* the mean over the nodes that measured */
                                      .cpu = &cpu_a,
                                      .cpu_busy_pct = cpu_a.busy_pct};
            struct mgr_metrics m;
            iv.m = metrics_of(iv.stats, iv.ns, &m);
            f->sink->ops->interval(f->sink, &iv);
        }
    }
}

/* One node's rows as cl_on_result emits them: per worker its targets, then
 * the worker; the node last. */
static void node_rows(struct fixture *f, int t, int n)
{
    const struct mgr_test_info *ti = &f->ti;
    for (int w = 0; w < NWORKERS; w++) {
        for (int x = 0; x < NTARGETS; x++) {
            struct mgr_row r = {.type = MGR_ROW_TARGET,
                                .node = node_names[n],
                                .worker = worker_names[w],
                                .target = target_names[x],
                                .stats = f->d.tgt[t][n][w][x],
                                .ns = 3000000000ull,
                                .queue_depth = 8,
                                .nodes = 1,
                                .workers = 1,
                                .targets = 1,
                                .range_offset = (uint64_t)x << 20,
                                .range_size = 0};
            struct mgr_metrics m;
            r.m = metrics_of(r.stats, r.ns, &m);
            f->sink->ops->row(f->sink, ti, &r);
        }
        {
            struct mgr_row r = {.type = MGR_ROW_WORKER,
                                .node = node_names[n],
                                .worker = worker_names[w],
                                .stats = f->d.wrk[t][n][w],
                                .ns = 3000000000ull,
                                .queue_depth = 8,
                                .nodes = 1,
                                .workers = 1,
                                .targets = NTARGETS};
            struct mgr_metrics m;
            r.m = metrics_of(r.stats, r.ns, &m);
            f->sink->ops->row(f->sink, ti, &r);
        }
    }
    {
        struct mgr_row r = {.type = MGR_ROW_NODE,
                            .node = node_names[n],
                            .stats = f->d.node[t][n],
                            .ns = 3000000000ull,
                            .nodes = 1,
                            .workers = NWORKERS,
                            .targets = NWORKERS * NTARGETS,
                            .cpu = n == 0 ? &cpu_a : NULL,
                            .cpu_busy_pct = n == 0 ? cpu_a.busy_pct : 0,
                            .cpus = n == 0 ? cpus_a : NULL,
                            .ncpus = n == 0 ? 2 : 0};
        struct mgr_metrics m;
        r.m = metrics_of(r.stats, r.ns, &m);
        f->sink->ops->row(f->sink, ti, &r);
    }
}

static void test_end(struct fixture *f, int t)
{
    struct mgr_row all = {.type = MGR_ROW_ALL,
                          .stats = f->d.all[t],
                          .ns = 3000000000ull,
                          .queue_depth = 8,
                          .nodes = NNODES,
                          .workers = NNODES * NWORKERS,
                          .targets = NNODES * NWORKERS * NTARGETS,
                          .cpu = &cpu_a, /* the mean over the nodes that measured */
                          .cpu_busy_pct = cpu_a.busy_pct};
    struct mgr_test_end te = {.test = &f->ti,
                              .end_wall_ns = 1714564804000000007ull + (uint64_t)t,
                              .all = &all,
                              .start_skew_ms = 0.25 + t,
                              .nodes = NNODES,
                              .lost = 0,
                              .interrupted = false};
    struct mgr_metrics m;
    all.m = metrics_of(all.stats, all.ns, &m);
    f->sink->ops->test_end(f->sink, &te);
}

/* ---- checks of the document ---------------------------------------------- */

static void check_head(const cJSON *doc, bool begun)
{
    const cJSON *v, *agents, *a;
    cJSON *plan;

    check_keys(doc, top_keys);
    v = get(doc, "iofleet");
    assert_string_equal(get_str(v, "version"), IOF_VERSION);
    assert_int_equal(get_u64(v, "format"), 2);
    check_keys(get(doc, "run"), run_keys);
    v = get(doc, "histogram_layout");
    assert_int_equal(get_u64(v, "exact_below_ns"), 2 * IOF_HIST_SUB);
    assert_int_equal(get_u64(v, "buckets"), IOF_HIST_BUCKETS);
    assert_int_equal(get_u64(v, "overflow_from_ns"), (uint64_t)1 << (IOF_HIST_MAX_BITS + 1));
    if (!begun) {
        assert_true(cJSON_IsNull(get(doc, "plan")));
        assert_int_equal(cJSON_GetArraySize(get(doc, "agents")), 0);
        assert_true(cJSON_IsNull(get(get(doc, "run"), "start_time")));
        return;
    }
    assert_string_equal(get_str(get(doc, "run"), "start_time"), "2024-05-01T12:00:00.123456789Z");
    assert_int_equal(get_u64(get(doc, "run"), "tests_planned"), NTESTS);
    plan = cJSON_Parse(plan_text);
    assert_non_null(plan);
    assert_true(cJSON_Compare(plan, get(doc, "plan"), true));
    cJSON_Delete(plan);
    agents = get(doc, "agents");
    assert_int_equal(cJSON_GetArraySize(agents), NNODES);
    for (int n = 0; n < NNODES; n++) {
        a = cJSON_GetArrayItem(agents, n);
        check_keys(a, agent_keys);
        assert_string_equal(get_str(a, "name"), node_names[n]);
        assert_string_equal(get_str(a, "hostname"), node_names[n]);
        assert_string_equal(get_str(a, "protocol"), n ? "1.1" : "1.0");
        assert_int_equal(get_u64(a, "memory_bytes"), 17179869184ull);
        assert_int_equal(cJSON_GetArraySize(get(a, "targets")), n == 0 ? 2 : 0);
        if (n) { /* an agent that sent no budget */
            assert_true(cJSON_IsNull(get(a, "budget")));
            continue;
        }
        check_keys(get(a, "budget"), budget_keys);
        assert_int_equal(get_u64(get(a, "budget"), "workers"), 16);
        assert_int_equal(get_u64(get(a, "budget"), "buffer_mem"), 1ull << 30);
        assert_int_equal(get_u64(get(a, "budget"), "aio_events"), 57344);
        assert_int_equal(get_u64(get(a, "budget"), "fds"), 900);
    }
    a = get(cJSON_GetArrayItem(agents, 0), "targets");
    check_keys(cJSON_GetArrayItem(a, 0), inv_keys);
    check_keys(cJSON_GetArrayItem(a, 1), inv_keys);
    assert_true(cJSON_IsTrue(get(cJSON_GetArrayItem(a, 0), "rotational")));
    assert_true(cJSON_IsNull(get(cJSON_GetArrayItem(a, 1), "rotational")));
    assert_true(cJSON_IsNull(get(cJSON_GetArrayItem(a, 1), "model")));
    /* invalid UTF-8 became U+FFFD, one per bad byte */
    assert_string_equal(get_str(cJSON_GetArrayItem(a, 0), "model"),
                        "Samsung \"EVO\" bad\xef\xbf\xbd\xef\xbf\xbd"
                        "end");
    assert_string_equal(get_str(cJSON_GetArrayItem(a, 1), "path"), "/data/t\xc3\xa9st");
}

static bool str_or_null_is(const cJSON *v, const char *want)
{
    if (!want)
        return cJSON_IsNull(v);
    return cJSON_IsString(v) && !strcmp(v->valuestring, want);
}

static void check_row_names(const cJSON *r, const char *type, int n, int w, int x)
{
    assert_string_equal(get_str(r, "row_type"), type);
    assert_true(str_or_null_is(get(r, "node"), n < 0 ? NULL : node_names[n]));
    assert_true(str_or_null_is(get(r, "worker"), w < 0 ? NULL : worker_names[w]));
    assert_true(str_or_null_is(get(r, "target"), x < 0 ? NULL : target_names[x]));
}

static void check_cpu(const cJSON *r, bool measured)
{
    const cJSON *cpu = get(r, "cpu");
    if (!measured) {
        assert_true(cJSON_IsNull(get(r, "cpu_pct")));
        assert_true(cJSON_IsNull(get(r, "cpu_effectiveness")));
        assert_true(cJSON_IsNull(cpu));
        return;
    }
    /* the mean over the nodes that measured CPU: node 0 only */
    assert_true(get_num(r, "cpu_pct") == cpu_a.busy_pct);
    assert_near(get_num(r, "cpu_effectiveness"), get_num(r, "iops") / cpu_a.busy_pct);
    check_keys(cpu, cpu_keys);
    assert_true(get_num(cpu, "busy_pct") == cpu_a.busy_pct);
    assert_true(get_num(cpu, "user_pct") == cpu_a.user_pct);
    assert_true(get_num(cpu, "sys_pct") == cpu_a.sys_pct);
    assert_true(get_num(cpu, "agent_pct") == cpu_a.agent_pct);
    {
        const double v[] = {cpu_a.dpc_pct,       cpu_a.irq_pct,       cpu_a.intr_per_s,
                            cpu_a.packets_per_s, cpu_a.packet_errors, cpu_a.retrans_per_s};
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
            assert_true(get_num(cpu, cpu_node_keys[i]) == v[i]);
    }
}

/* A NODE row's cpus: node 0's two CPUs; null elsewhere. */
static void check_cpus(const cJSON *r, bool measured)
{
    const cJSON *a = get(r, "cpus");
    if (!measured) {
        assert_true(cJSON_IsNull(a));
        return;
    }
    assert_true(cJSON_IsArray(a));
    assert_int_equal(cJSON_GetArraySize(a), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *c = cJSON_GetArrayItem(a, i);
        check_keys(c, cpus_keys);
        assert_int_equal(get_u64(c, "id"), cpus_a[i].id);
        assert_true(get_num(c, "busy_pct") == cpus_a[i].busy_pct);
        assert_true(get_num(c, "user_pct") == cpus_a[i].user_pct);
        assert_true(get_num(c, "sys_pct") == cpus_a[i].sys_pct);
        assert_true(get_num(c, "dpc_pct") == cpus_a[i].dpc_pct);
        assert_true(get_num(c, "irq_pct") == cpus_a[i].irq_pct);
    }
}

static void check_test(const cJSON *test, const struct run_data *d, int t)
{
    const cJSON *rows = get(test, "results"), *ivs = get(test, "intervals");
    struct iof_stats *sum_node = stats_new(), *sum_worker = stats_new();
    struct iof_hist *merged = malloc(sizeof(*merged)), *h = malloc(sizeof(*h)),
                    *all_rd = malloc(sizeof(*all_rd));
    int i = 0;

    assert_non_null(merged);
    assert_non_null(h);
    assert_non_null(all_rd);
    check_keys(test, test_keys);
    assert_int_equal(get_u64(test, "index"), (uint64_t)t + 1);
    assert_string_equal(get_str(test, "spec"), spec_names[t]);
    assert_string_equal(get_str(test, "cycle"), cycles[t]);
    if (t == 1) {
        assert_string_equal(get_str(test, "cycle_param"), "queue_depth");
        assert_int_equal(get_u64(test, "cycle_value"), 4);
    } else {
        assert_true(cJSON_IsNull(get(test, "cycle_param")));
    }
    assert_true(get_num(test, "start_skew_ms") == 0.25 + t);
    assert_string_equal(get_str(test, "start_time"),
                        t ? "2024-05-01T12:00:01.000000001Z" : "2024-05-01T12:00:01.000000000Z");
    assert_string_equal(get_str(test, "end_time"),
                        t ? "2024-05-01T12:00:04.000000008Z" : "2024-05-01T12:00:04.000000007Z");
    assert_true(cJSON_IsTrue(get(test, "complete")));
    assert_true(cJSON_IsFalse(get(test, "interrupted")));

    /* rows: ALL, then per node NODE, WORKER, its TARGETs */
    assert_int_equal(cJSON_GetArraySize(rows), ROWS_PER_TEST);
    {
        const cJSON *r = cJSON_GetArrayItem(rows, i++);
        check_keys(r, row_keys);
        check_row_names(r, "ALL", -1, -1, -1);
        check_figures(r, d->all[t], true);
        check_cpu(r, true);
        check_cpus(r, false);
        assert_int_equal(get_u64(r, "targets"), NNODES * NWORKERS * NTARGETS);
        hist_parse(get(get(r, "latency"), "read"), all_rd);
    }
    iof_hist_reset(merged);
    for (int n = 0; n < NNODES; n++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i++);
        check_keys(r, row_keys);
        check_row_names(r, "NODE", n, -1, -1);
        check_figures(r, d->node[t][n], true);
        check_cpu(r, n == 0);
        check_cpus(r, n == 0);
        assert_true(cJSON_IsNull(get(r, "queue_depth")));
        assert_int_equal(get_u64(r, "test"), (uint64_t)t + 1);
        assert_string_equal(get_str(r, "spec"), spec_names[t]);
        hist_parse(get(get(r, "latency"), "read"), h);
        iof_hist_merge(merged, h);
        iof_stats_merge(sum_node, d->node[t][n]);
        for (int w = 0; w < NWORKERS; w++) {
            r = cJSON_GetArrayItem(rows, i++);
            check_keys(r, row_keys);
            check_row_names(r, "WORKER", n, w, -1);
            check_figures(r, d->wrk[t][n][w], true);
            check_cpu(r, false);
            check_cpus(r, false);
            assert_int_equal(get_u64(r, "queue_depth"), 8);
            iof_stats_merge(sum_worker, d->wrk[t][n][w]);
            for (int x = 0; x < NTARGETS; x++) {
                const struct iof_stats *ts = d->tgt[t][n][w][x];
                r = cJSON_GetArrayItem(rows, i++);
                check_keys(r, row_keys);
                check_row_names(r, "TARGET", n, w, x);
                check_figures(r, ts, true);
                check_cpu(r, false);
                assert_int_equal(get_u64(r, "range_offset"), (uint64_t)x << 20);
                if (ts->first_error) {
                    const cJSON *e = get(r, "first_error");
                    assert_string_equal(get_str(e, "code"), "EIO");
                    assert_int_equal(get_u64(e, "offset"), 1234567);
                } else {
                    assert_true(cJSON_IsNull(get(r, "first_error")));
                }
            }
        }
    }
    /* ALL = sum of NODE = sum of WORKER, and the NODE histograms re-merged
     * are the ALL histogram exactly (check_figures compared each row with
     * the stats it was made from). */
    assert_int_equal(sum_node->rd.ios, d->all[t]->rd.ios);
    assert_int_equal(sum_worker->wr.bytes, d->all[t]->wr.bytes);
    assert_int_equal(sum_worker->rd.errors + sum_worker->wr.errors,
                     d->all[t]->rd.errors + d->all[t]->wr.errors);
    assert_hist_equal(merged, all_rd);
    {
        uint64_t rios = 0, wbytes = 0, errs = 0, nrios = 0;
        const cJSON *r;
        cJSON_ArrayForEach(r, rows)
        {
            const char *type = get_str(r, "row_type");
            if (!strcmp(type, "WORKER")) {
                rios += get_u64(r, "read_ios");
                wbytes += get_u64(r, "bytes_written");
                errs += get_u64(r, "errors");
            } else if (!strcmp(type, "NODE")) {
                nrios += get_u64(r, "read_ios");
            }
        }
        r = cJSON_GetArrayItem(rows, 0);
        assert_int_equal(rios, get_u64(r, "read_ios"));
        assert_int_equal(nrios, get_u64(r, "read_ios"));
        assert_int_equal(wbytes, get_u64(r, "bytes_written"));
        assert_int_equal(errs, get_u64(r, "errors"));
    }

    /* intervals: by interval, ALL first, then nodes as they reported */
    assert_int_equal(cJSON_GetArraySize(ivs), NINTERVALS * (1 + NNODES));
    i = 0;
    for (int k = 0; k < NINTERVALS; k++) {
        const cJSON *iv = cJSON_GetArrayItem(ivs, i++);
        uint64_t sum = 0;
        check_keys(iv, iv_keys);
        assert_int_equal(get_u64(iv, "interval"), (uint64_t)k + 1);
        assert_string_equal(get_str(iv, "row_type"), "ALL");
        assert_string_equal(get_str(iv, "node"), "ALL");
        assert_int_equal(get_u64(iv, "reported"), NNODES);
        check_figures(iv, d->iv_all[t][k], false);
        check_cpu(iv, true);
        for (int n = NNODES - 1; n >= 0; n--) {
            const cJSON *nv = cJSON_GetArrayItem(ivs, i++);
            check_keys(nv, iv_keys);
            assert_int_equal(get_u64(nv, "interval"), (uint64_t)k + 1);
            assert_string_equal(get_str(nv, "row_type"), "NODE");
            assert_string_equal(get_str(nv, "node"), node_names[n]);
            check_figures(nv, d->iv[t][k][n], false);
            check_cpu(nv, n == 0);
            sum += get_u64(nv, "write_ios");
        }
        assert_int_equal(sum, get_u64(iv, "write_ios"));
    }
    free(sum_node);
    free(sum_worker);
    free(merged);
    free(h);
    free(all_rd);
}

static int ntests_in(const cJSON *doc)
{
    return cJSON_GetArraySize(get(doc, "tests"));
}

/* ---- tests --------------------------------------------------------------- */

static void test_registry(void **state)
{
    (void)state;
    assert_ptr_equal(mgr_sink_for_option("--json"), &mgr_sink_json);
    assert_string_equal(mgr_sink_json.name, "json");
}

static void test_full_run(void **state)
{
    struct fixture *f = malloc(sizeof(*f));
    cJSON *doc;
    (void)state;

    assert_non_null(f);
    fixture_init(f, "full.json");

    /* open: a valid (empty) document under a temporary name beside the
     * file's; run_begin puts the document in place */
    {
        char pattern[PATH_MAX + 8];
        glob_t g;
        snprintf(pattern, sizeof(pattern), "%s.tmp-*", f->path);
        assert_int_equal(access(f->path, F_OK), -1);
        assert_int_equal(glob(pattern, 0, NULL, &g), 0);
        assert_int_equal(g.gl_pathc, 1);
        doc = load(g.gl_pathv[0]);
        globfree(&g);
    }
    check_head(doc, false);
    assert_int_equal(ntests_in(doc), 0);
    cJSON_Delete(doc);

    run_begin(f);
    doc = load(f->path);
    check_head(doc, true);
    assert_int_equal(ntests_in(doc), 0);
    assert_true(cJSON_IsNull(get(get(doc, "run"), "exit_code")));
    assert_true(cJSON_IsFalse(get(get(doc, "run"), "finished")));
    cJSON_Delete(doc);

    for (int t = 0; t < NTESTS; t++) {
        test_begin(f, t);
        intervals(f, t);
        node_rows(f, t, 0);
        /* mid-test: still the document of the finished tests only */
        doc = load(f->path);
        assert_int_equal(ntests_in(doc), t);
        cJSON_Delete(doc);
        node_rows(f, t, 1);
        test_end(f, t);
        doc = load(f->path);
        check_head(doc, true);
        assert_int_equal(ntests_in(doc), t + 1);
        assert_int_equal(get_u64(get(doc, "run"), "tests_written"), (uint64_t)t + 1);
        for (int u = 0; u <= t; u++)
            check_test(cJSON_GetArrayItem(get(doc, "tests"), u), &f->d, u);
        cJSON_Delete(doc);
    }

    f->sink->ops->run_end(f->sink, 1);
    doc = load(f->path);
    check_head(doc, true);
    assert_int_equal(ntests_in(doc), NTESTS);
    assert_true(cJSON_IsTrue(get(get(doc, "run"), "finished")));
    assert_int_equal(get_u64(get(doc, "run"), "exit_code"), 1);
    assert_true(cJSON_IsFalse(get(get(doc, "run"), "interrupted")));
    for (int t = 0; t < NTESTS; t++)
        check_test(cJSON_GetArrayItem(get(doc, "tests"), t), &f->d, t);
    cJSON_Delete(doc);
    fixture_free(f);
    free(f);
}

/* A second Ctrl-C ends the run inside a test: what arrived is kept. */
static void test_cut_short(void **state)
{
    struct fixture *f = malloc(sizeof(*f));
    cJSON *doc;
    const cJSON *t1, *t2;
    (void)state;

    assert_non_null(f);
    fixture_init(f, "cut.json");
    run_begin(f);
    test_begin(f, 0);
    intervals(f, 0);
    node_rows(f, 0, 0);
    node_rows(f, 0, 1);
    test_end(f, 0);
    test_begin(f, 1);
    intervals(f, 1);
    node_rows(f, 1, 1);
    f->sink->ops->run_end(f->sink, 130);
    f->sink->ops->run_end(f->sink, 0); /* a second call changes nothing */
    doc = load(f->path);
    check_head(doc, true);
    assert_int_equal(get_u64(get(doc, "run"), "exit_code"), 130);
    assert_true(cJSON_IsTrue(get(get(doc, "run"), "interrupted")));
    assert_int_equal(ntests_in(doc), 2);
    t1 = cJSON_GetArrayItem(get(doc, "tests"), 0);
    check_test(t1, &f->d, 0);
    t2 = cJSON_GetArrayItem(get(doc, "tests"), 1);
    check_keys(t2, test_keys);
    assert_true(cJSON_IsFalse(get(t2, "complete")));
    assert_true(cJSON_IsTrue(get(t2, "interrupted")));
    assert_true(cJSON_IsNull(get(t2, "nodes")));
    assert_true(cJSON_IsNull(get(t2, "end_time")));
    assert_int_equal(cJSON_GetArraySize(get(t2, "intervals")), NINTERVALS * (1 + NNODES));
    /* node 1's rows, in order, without an ALL row */
    assert_int_equal(cJSON_GetArraySize(get(t2, "results")), 1 + NWORKERS * (1 + NTARGETS));
    check_row_names(cJSON_GetArrayItem(get(t2, "results"), 0), "NODE", 1, -1, -1);
    check_row_names(cJSON_GetArrayItem(get(t2, "results"), 1), "WORKER", 1, 0, -1);
    check_row_names(cJSON_GetArrayItem(get(t2, "results"), 2), "TARGET", 1, 0, 0);
    check_figures(cJSON_GetArrayItem(get(t2, "results"), 2), f->d.tgt[1][1][0][0], true);
    cJSON_Delete(doc);
    fixture_free(f);
    free(f);
}

/* No agent delivered a result: the test has its ALL row of zeros, latencies
 * null (not a made-up 0), empty histograms. */
static void test_empty_test(void **state)
{
    struct fixture *f = malloc(sizeof(*f));
    struct iof_stats *zero = stats_new();
    struct mgr_row all = {.type = MGR_ROW_ALL, .stats = zero, .ns = 3000000000ull};
    struct mgr_test_end te = {.test = &f->ti, .all = &all, .lost = 2};
    struct mgr_metrics m;
    const cJSON *t, *r;
    cJSON *doc;
    (void)state;

    all.m = metrics_of(all.stats, all.ns, &m);
    assert_non_null(f);
    fixture_init(f, "empty.json");
    run_begin(f);
    test_begin(f, 0);
    f->sink->ops->test_end(f->sink, &te);
    f->sink->ops->run_end(f->sink, 1);
    doc = load(f->path);
    t = cJSON_GetArrayItem(get(doc, "tests"), 0);
    check_keys(t, test_keys);
    assert_int_equal(get_u64(t, "lost"), 2);
    assert_int_equal(cJSON_GetArraySize(get(t, "intervals")), 0);
    assert_int_equal(cJSON_GetArraySize(get(t, "results")), 1);
    r = cJSON_GetArrayItem(get(t, "results"), 0);
    check_keys(r, row_keys);
    check_row_names(r, "ALL", -1, -1, -1);
    assert_true(get_num(r, "iops") == 0);
    assert_true(cJSON_IsNull(get(r, "avg_lat_ms")));
    assert_true(cJSON_IsNull(get(r, "p99_lat_ms")));
    assert_true(cJSON_IsNull(get(r, "max_lat_ms")));
    assert_true(cJSON_IsNull(get(r, "queue_depth"))); /* groups with different depths */
    check_cpu(r, false);
    {
        struct iof_hist *h = malloc(sizeof(*h));
        assert_non_null(h);
        hist_parse(get(get(r, "latency"), "write"), h);
        assert_hist_equal(h, &zero->wr.lat);
        free(h);
    }
    cJSON_Delete(doc);
    free(zero);
    fixture_free(f);
    free(f);
}

/* A node whose agent measured its CPU but sent no node figures (protocol
 * 1.5, Windows): its cpu object and ALL's have them null, never 0. */
static void test_cpu_node_unknown(void **state)
{
    struct fixture *f = malloc(sizeof(*f));
    struct iof_stats *st = stats_new();
    struct proto_cpu cpu = cpu_a;
    struct mgr_row node = {.type = MGR_ROW_NODE,
                           .node = node_names[0],
                           .stats = st,
                           .ns = 3000000000ull,
                           .nodes = 1,
                           .cpu = &cpu,
                           .cpu_busy_pct = cpu_a.busy_pct};
    struct mgr_row all = {.type = MGR_ROW_ALL,
                          .stats = st,
                          .ns = 3000000000ull,
                          .nodes = 1,
                          .cpu = &cpu,
                          .cpu_busy_pct = cpu_a.busy_pct};
    struct mgr_test_end te = {.test = &f->ti, .all = &all, .nodes = 1};
    struct mgr_metrics m;
    const cJSON *rows;
    cJSON *doc;
    (void)state;

    assert_non_null(f);
    cpu.node_valid = false;
    node.m = metrics_of(node.stats, node.ns, &m);
    all.m = node.m;
    fixture_init(f, "cpu-node.json");
    run_begin(f);
    test_begin(f, 0);
    f->sink->ops->row(f->sink, &f->ti, &node);
    f->sink->ops->test_end(f->sink, &te);
    f->sink->ops->run_end(f->sink, 0);
    doc = load(f->path);
    rows = get(cJSON_GetArrayItem(get(doc, "tests"), 0), "results");
    assert_int_equal(cJSON_GetArraySize(rows), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *c = get(cJSON_GetArrayItem(rows, i), "cpu");
        check_keys(c, cpu_keys);
        assert_true(get_num(c, "busy_pct") == cpu_a.busy_pct);
        for (size_t k = 0; k < sizeof(cpu_node_keys) / sizeof(cpu_node_keys[0]); k++)
            assert_true(cJSON_IsNull(get(c, cpu_node_keys[k])));
    }
    cJSON_Delete(doc);
    free(st);
    fixture_free(f);
    free(f);
}

/* Agents unreachable: run_end without run_begin still leaves a document. */
static void test_no_run(void **state)
{
    char path[PATH_MAX];
    struct mgr_sink *s = NULL;
    struct iof_diag diag = {{0}};
    cJSON *doc;
    (void)state;

    path_in(path, sizeof(path), "none.json");
    assert_int_equal(mgr_sink_open(&mgr_sink_json, path, 0, &s, &diag), 0);
    s->ops->run_end(s, 3);
    assert_int_equal(mgr_sink_close(s), 0);
    doc = load(path);
    check_head(doc, false);
    assert_int_equal(get_u64(get(doc, "run"), "exit_code"), 3);
    assert_int_equal(ntests_in(doc), 0);
    cJSON_Delete(doc);
    unlink(path);
}

static void expect_open_fails(const char *path)
{
    struct mgr_sink *s = NULL;
    struct iof_diag diag = {{0}};
    int r = mgr_sink_open(&mgr_sink_json, path, 0, &s, &diag);
    if (r == 0)
        fail_msg("%s: opened", path);
    assert_true(r < 0);
    assert_null(s);
    if (!strstr(diag.msg, path))
        fail_msg("diag \"%s\" does not name %s", diag.msg, path);
}

static void test_unwritable(void **state)
{
    char path[PATH_MAX];
    (void)state;

    path_in(path, sizeof(path), "no/such/dir/out.json");
    expect_open_fails(path);
    path_in(path, sizeof(path), "full.json.d");
    assert_int_equal(mkdir(path, 0755), 0);
    expect_open_fails(path); /* a directory is not replaced */
    rmdir(path);
    expect_open_fails("/dev/null"); /* nor a device */
}

/* A symbolic link is never followed: refused without --force (its target
 * is not created), replaced by the document with it (its target untouched). */
static void test_symlink(void **state)
{
    char link[PATH_MAX], target[PATH_MAX];
    struct mgr_sink *s = NULL;
    struct iof_diag diag = {{0}};
    struct stat st;
    cJSON *doc;
    (void)state;

    path_in(link, sizeof(link), "link.json");
    path_in(target, sizeof(target), "target.json");
    unlink(link);
    assert_int_equal(symlink("target.json", link), 0);
    assert_int_equal(mgr_sink_open(&mgr_sink_json, link, 0, &s, &diag), -EEXIST);
    assert_non_null(strstr(diag.msg, "symbolic link"));
    assert_int_equal(lstat(target, &st), -1);
    assert_int_equal(mgr_sink_open(&mgr_sink_json, link, IOF_OUTFILE_FORCE, &s, &diag), 0);
    s->ops->run_end(s, 0);
    assert_int_equal(mgr_sink_close(s), 0);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(lstat(target, &st), -1);
    doc = load(link);
    assert_int_equal(get_u64(get(doc, "run"), "exit_code"), 0);
    cJSON_Delete(doc);
    unlink(link);
}

/* A link planted at PATH.tmp is replaced, never written through. */
static void test_planted_tmp(void **state)
{
    char path[PATH_MAX], tmp[PATH_MAX], victim[PATH_MAX];
    struct mgr_sink *s = NULL;
    struct iof_diag diag = {{0}};
    struct stat st;
    FILE *f;
    cJSON *doc;
    (void)state;

    path_in(path, sizeof(path), "planted.json");
    path_in(tmp, sizeof(tmp), "planted.json.tmp");
    path_in(victim, sizeof(victim), "victim");
    f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    assert_int_equal(symlink(victim, tmp), 0);
    assert_int_equal(mgr_sink_open(&mgr_sink_json, path, 0, &s, &diag), 0);
    s->ops->run_end(s, 0);
    assert_int_equal(mgr_sink_close(s), 0);
    assert_int_equal(stat(victim, &st), 0);
    assert_int_equal(st.st_size, 9);
    doc = load(path);
    cJSON_Delete(doc);
    unlink(path);
    unlink(victim);
}

/* The file from `,"plan":` on, without its closing "]}\n". */
static char *doc_body(const char *path, size_t *len)
{
    size_t n;
    char *all = slurp(path, &n), *plan;

    assert_non_null(all);
    plan = strstr(all, ",\"plan\":");
    assert_non_null(plan);
    assert_true(n >= 3 && !memcmp(all + n - 3, "]}\n", 3));
    *len = (size_t)(all + n - 3 - plan);
    memmove(all, plan, *len);
    return all;
}

/* Tests are appended to the one file: the inode stays, the bytes before
 * each new test stay as they were. */
static void test_appended(void **state)
{
    struct fixture *f = malloc(sizeof(*f));
    struct stat st0, st;
    char *before = NULL, *after;
    size_t nbefore = 0, nafter;
    (void)state;

    assert_non_null(f);
    fixture_init(f, "append.json");
    run_begin(f);
    assert_int_equal(stat(f->path, &st0), 0);
    for (int t = 0; t < NTESTS; t++) {
        test_begin(f, t);
        intervals(f, t);
        node_rows(f, t, 0);
        node_rows(f, t, 1);
        test_end(f, t);
        assert_int_equal(stat(f->path, &st), 0);
        assert_true(st.st_ino == st0.st_ino && st.st_dev == st0.st_dev);
        after = doc_body(f->path, &nafter);
        if (before) {
            assert_true(nafter > nbefore);
            assert_memory_equal(after, before, nbefore);
        }
        free(before);
        before = after;
        nbefore = nafter;
    }
    f->sink->ops->run_end(f->sink, 0);
    assert_int_equal(stat(f->path, &st), 0);
    assert_true(st.st_ino == st0.st_ino);
    after = doc_body(f->path, &nafter);
    assert_int_equal(nafter, nbefore);
    assert_memory_equal(after, before, nbefore);
    free(after);
    free(before);
    fixture_free(f);
    free(f);
}

/* find_max answers past the run object's room: the document is rewritten
 * once with more room, keeping every test, and stays valid. */
static void test_run_outgrows_room(void **state)
{
    struct fixture *f = malloc(sizeof(*f));
    static struct iof_knee log;
    char headline[300];
    struct stat st0, st;
    cJSON *doc;
    (void)state;

    assert_non_null(f);
    fixture_init(f, "grow.json");
    run_begin(f);
    assert_int_equal(stat(f->path, &st0), 0);
    test_begin(f, 0);
    intervals(f, 0);
    node_rows(f, 0, 0);
    node_rows(f, 0, 1);
    test_end(f, 0);
    memset(headline, 'h', sizeof(headline) - 1);
    headline[sizeof(headline) - 1] = '\0';
    /* The first answer carries its search: a close step met in 2 runs,
     * a miss, a failed confirmation, the confirmation at the step met. */
    log.nsteps = 4;
    log.step[0] = (struct iof_knee_step){.frac = 0.5,
                                         .decided = true,
                                         .met = true,
                                         .runs = 2,
                                         .nmet = 2,
                                         .iops = {500, 499.5},
                                         .lat_ns = {1.6e6, 1.7e6}};
    log.step[1] = (struct iof_knee_step){
        .frac = 0.75, .decided = true, .runs = 1, .iops = {700}, .lat_ns = {9e6}};
    log.step[2] = (struct iof_knee_step){.frac = 0.625,
                                         .confirm = true,
                                         .decided = true,
                                         .runs = 1,
                                         .iops = {620},
                                         .lat_ns = {2.5e6}};
    log.step[3] = (struct iof_knee_step){.frac = 0.5,
                                         .confirm = true,
                                         .decided = true,
                                         .met = true,
                                         .runs = 1,
                                         .nmet = 1,
                                         .iops = {1000},
                                         .lat_ns = {1.5e6}};
    for (int k = 0; k < 8; k++) {
        struct mgr_knee_info knee = {.spec = spec_names[0],
                                     .metric = "p99",
                                     .target_ns = 2000000,
                                     .iops = 1000.0 * (k + 1),
                                     .lat_ns = 1.5e6,
                                     .offered_iops = 1000,
                                     .base_iops = 2000,
                                     .runs_met = 3,
                                     .runs = 3,
                                     .steps = 7,
                                     .knee = k ? NULL : &log,
                                     .headline = headline};
        f->sink->ops->knee(f->sink, &knee);
    }
    test_begin(f, 1);
    intervals(f, 1);
    node_rows(f, 1, 0);
    node_rows(f, 1, 1);
    test_end(f, 1);
    assert_int_equal(stat(f->path, &st), 0);
    assert_true(st.st_ino != st0.st_ino); /* rewritten (renamed over) */
    doc = load(f->path);
    assert_int_equal(get_u64(get(doc, "run"), "tests_written"), NTESTS);
    assert_int_equal(cJSON_GetArraySize(get(get(doc, "run"), "find_max")), 8);
    {
        const cJSON *k0 = cJSON_GetArrayItem(get(get(doc, "run"), "find_max"), 0), *srch, *c;
        assert_true(get_num(k0, "max_iops") == 1000 && get_num(k0, "offered_iops") == 1000);
        assert_true(get_num(k0, "base_iops") == 2000 && get_num(k0, "latency_ms") == 1.5);
        assert_int_equal(get_u64(get(k0, "confidence"), "runs_met"), 3);
        assert_int_equal(get_u64(get(k0, "confidence"), "runs"), 3);
        /* The confirmation that stood: the last one run. */
        c = get(k0, "confirmation");
        assert_string_equal(get_str(c, "kind"), "confirm");
        assert_true(get_num(c, "rate_pct") == 50 && cJSON_IsTrue(get(c, "met")));
        assert_true(cJSON_GetArrayItem(get(c, "iops"), 0)->valuedouble == 1000);
        assert_true(cJSON_GetArrayItem(get(c, "latency_ms"), 0)->valuedouble == 1.5);
        srch = get(k0, "search");
        assert_int_equal(cJSON_GetArraySize(srch), 4);
        c = cJSON_GetArrayItem(srch, 0);
        assert_string_equal(get_str(c, "kind"), "step");
        assert_int_equal(get_u64(c, "runs"), 2);
        assert_int_equal(get_u64(c, "runs_met"), 2);
        assert_true(cJSON_GetArrayItem(get(c, "latency_ms"), 1)->valuedouble == 1.7);
        assert_true(cJSON_GetArrayItem(get(c, "iops"), 1)->valuedouble == 499.5);
        assert_true(cJSON_IsFalse(get(cJSON_GetArrayItem(srch, 2), "met")));
        /* Without a log: an empty search and no confirmation. */
        k0 = cJSON_GetArrayItem(get(get(doc, "run"), "find_max"), 1);
        assert_int_equal(cJSON_GetArraySize(get(k0, "search")), 0);
        assert_true(cJSON_IsNull(get(k0, "confirmation")));
    }
    assert_int_equal(ntests_in(doc), NTESTS);
    for (int t = 0; t < NTESTS; t++)
        check_test(cJSON_GetArrayItem(get(doc, "tests"), t), &f->d, t);
    cJSON_Delete(doc);
    f->sink->ops->run_end(f->sink, 0);
    doc = load(f->path);
    assert_int_equal(ntests_in(doc), NTESTS);
    assert_true(cJSON_IsTrue(get(get(doc, "run"), "finished")));
    cJSON_Delete(doc);
    fixture_free(f);
    free(f);
}

/* run.target_histograms false: TARGET rows have "latency": null, every other
 * row keeps its histograms and every figure. */
static void test_no_target_hists(void **state)
{
    struct fixture *f = malloc(sizeof(*f));
    const cJSON *r;
    cJSON *doc;
    int targets = 0;
    (void)state;

    assert_non_null(f);
    fixture_init(f, "notgt.json");
    f->plan.run.target_hists = IOF_TARGET_HISTS_NEVER;
    run_begin(f);
    test_begin(f, 0);
    intervals(f, 0);
    node_rows(f, 0, 0);
    node_rows(f, 0, 1);
    test_end(f, 0);
    doc = load(f->path);
    cJSON_ArrayForEach(r, get(cJSON_GetArrayItem(get(doc, "tests"), 0), "results"))
    {
        check_keys(r, row_keys);
        if (!strcmp(get_str(r, "row_type"), "TARGET")) {
            assert_true(cJSON_IsNull(get(r, "latency")));
            assert_true(cJSON_IsNumber(get(r, "p99_lat_ms")));
            targets++;
        } else {
            assert_true(cJSON_IsObject(get(r, "latency")));
        }
    }
    assert_int_equal(targets, NNODES * NWORKERS * NTARGETS);
    cJSON_Delete(doc);
    fixture_free(f);
    free(f);
}

/* The size rule: TARGET rows over the run's agents, from the plan's groups
 * (count x targets x the agents a group runs on); up to
 * IOF_TARGET_HISTS_AUTO_MAX keeps the histograms; the plan key overrides. */
static void test_target_hists_rule(void **state)
{
    static const char plan8[] =
        "{\"name\":\"p\",\"run\":{\"duration\":\"1s\"%s},\"specs\":[{\"name\":\"a\",\"lines\":[{"
        "\"size\":\"4k\"}]}],\"workers\":[{\"count\":8,%s\"engine\":\"null\",\"targets\":["
        "{\"path\":\"t0\",\"size\":\"1m\"},{\"path\":\"t1\",\"size\":\"1m\"},{\"path\":\"t2\","
        "\"size\":\"1m\"},{\"path\":\"t3\",\"size\":\"1m\"},{\"path\":\"t4\",\"size\":\"1m\"},{"
        "\"path\":\"t5\",\"size\":\"1m\"},{\"path\":\"t6\",\"size\":\"1m\"},{\"path\":\"t7\","
        "\"size\":\"1m\"}]}]}";
    static char names[20][16];
    struct mgr_agent_info agents[20];
    struct iof_test t0 = {0};
    struct iof_plan p;
    struct iof_diag d = {{0}};
    char text[2048];
    (void)state;

    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof(names[i]), "n%d", i);
        agents[i] = (struct mgr_agent_info){.name = names[i]};
    }
    assert_int_equal(IOF_TARGET_HISTS_AUTO_MAX, 1024); /* docs/results.md says 1024 */
    snprintf(text, sizeof(text), plan8, "", "");
    assert_int_equal(proto_plan_parse("p", text, strlen(text), NULL, 0, &p, &d), 0);
    /* 8 workers x 8 targets = 64 rows per agent: 16 agents = 1024 keep, 17 drop */
    assert_true(mgr_target_hists(&p, agents, 16, &t0));
    assert_false(mgr_target_hists(&p, agents, 17, &t0));
    assert_true(mgr_target_hists(&p, agents, 17, NULL));
    iof_plan_free(&p);
    /* a group on named nodes counts only those */
    snprintf(text, sizeof(text), plan8, "", "\"nodes\":[\"n1\",\"n2\"],");
    assert_int_equal(proto_plan_parse("p", text, strlen(text), NULL, 0, &p, &d), 0);
    assert_true(mgr_target_hists(&p, agents, 20, &t0));
    iof_plan_free(&p);
    snprintf(text, sizeof(text), plan8, ",\"target_histograms\":true", "");
    assert_int_equal(proto_plan_parse("p", text, strlen(text), NULL, 0, &p, &d), 0);
    assert_true(mgr_target_hists(&p, agents, 20, &t0));
    iof_plan_free(&p);
    snprintf(text, sizeof(text), plan8, ",\"target_histograms\":false", "");
    assert_int_equal(proto_plan_parse("p", text, strlen(text), NULL, 0, &p, &d), 0);
    assert_false(mgr_target_hists(&p, agents, 1, &t0));
    iof_plan_free(&p);
}

static int group_setup(void **state)
{
    (void)state;
    if (test_tmpdir_make(g_dir, "test_out_json") < 0)
        return -1;
    return 0;
}

/* Removes whatever a case left behind, also after a failed one. */
static int group_teardown(void **state)
{
    (void)state;
    test_tmpdir_remove(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),          cmocka_unit_test(test_full_run),
        cmocka_unit_test(test_cut_short),         cmocka_unit_test(test_empty_test),
        cmocka_unit_test(test_cpu_node_unknown),  cmocka_unit_test(test_no_run),
        cmocka_unit_test(test_unwritable),        cmocka_unit_test(test_symlink),
        cmocka_unit_test(test_planted_tmp),       cmocka_unit_test(test_appended),
        cmocka_unit_test(test_run_outgrows_room), cmocka_unit_test(test_no_target_hists),
        cmocka_unit_test(test_target_hists_rule),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
