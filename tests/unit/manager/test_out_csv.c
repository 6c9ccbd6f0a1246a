/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_out_csv.c - the --csv and --timeseries writers
 * (manager/sinks/csv.c, manager/sinks/timeseries.c), driven through their sink
 * ops with synthetic events, then read back with a strict RFC 4180 reader.
 *
 * The run: 2 tests on 2 nodes x 2 workers x 2 targets, with real histograms
 * (thousands of latencies per target from a fixed-seed splitmix64). Test 1 is
 * complete; test 2 is interrupted: its window is 2.5 s, node 1 never reports
 * its last (partial) interval and did not measure CPU. Node names, the spec
 * and target paths hold commas, quotes and CR LF. Test 1's rows arrive as the
 * cluster sends them (per node: TARGETs, WORKER, ..., NODE); test 2's arrive
 * interleaved across nodes, so the writer's grouping is exercised.
 *
 * Checks are made twice: from the files alone (iops = read + write, ALL = sum
 * of NODE = sum of WORKER = sum of TARGET, mibps against bytes and duration,
 * monotone percentiles, order, interval sums against the test totals) and
 * against the synthetic truth (exact counts, figures as mgr_metrics_compute
 * prints them, names round-tripping through quoting).
 *
 * Files live in a mkdtemp directory under $IOF_TEST_TMPDIR (created if
 * missing; /tmp otherwise), removed at the end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/hist.h"
#include "common/spec.h"
#include "common/stats.h"
#include "manager/aggregate.h"
#include "manager/metrics.h"
#include "manager/sink.h"
#include "tmpdir.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NN 2 /* nodes */
#define NW 2 /* workers per node */
#define NT 2 /* targets per worker */
#define NTESTS 2
#define MAXINT 5
#define MIB (1024.0 * 1024.0)
#define QD 8

#define CSV_HEADER                                                                                 \
    "test,spec,cycle,row_type,node,worker,target,queue_depth,duration_s,iops,read_iops,"           \
    "write_iops,mibps,read_mibps,write_mibps,avg_lat_ms,avg_read_lat_ms,avg_write_lat_ms,"         \
    "p50_lat_ms,p90_lat_ms,p95_lat_ms,p99_lat_ms,p999_lat_ms,p9999_lat_ms,max_lat_ms,read_ios,"    \
    "write_ios,bytes_read,bytes_written,errors,cpu_pct,read_errors,write_errors,user_pct,"         \
    "sys_pct,agent_cpu_pct,cpu_effectiveness,start_skew_ms,nodes,workers,targets,status,"          \
    "window_start_s,window_end_s,avg_svc_lat_ms,max_svc_lat_ms,late_ios,group,verify_errors,"      \
    "interrupted,verify_bad_reads,verify_overlaid,lateness_count,lateness_over_20us,"              \
    "lateness_over_20us_pct,lateness_avg_us,lateness_p50_us,lateness_p99_us,lateness_p999_us,"     \
    "lateness_max_us,dpc_pct,irq_pct,intr_per_s,packets_per_s,packet_errors,retrans_per_s"
#define TS_HEADER                                                                                  \
    "time_s,test,spec,interval,node,iops,read_iops,write_iops,mibps,avg_lat_ms,p99_lat_ms,"        \
    "max_lat_ms,errors,cpu_pct,cycle,reported,duration_s,read_ios,write_ios,bytes_read,"           \
    "bytes_written,lost,late,interrupted,dpc_pct,irq_pct,intr_per_s,packets_per_s,packet_errors,"  \
    "retrans_per_s"

static const char *const node_names[NN] = {"node,\"a\"", "b \"\"2\"\", east"};
static const char *const worker_names[NW] = {"w0", "w1"};
static const char *const target_paths[NW][NT] = {
    {"/data/t,0.dat", "/data/\"t1\".dat"},
    {"/mnt/multi\r\nline.dat", "iofleet.dat"},
};

/* ---- a strict RFC 4180 reader -------------------------------------------- */

struct rec {
    size_t n;
    char **f;
};

struct table {
    size_t n; /* records, header included */
    struct rec *r;
};

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        for (size_t j = 0; j < t->r[i].n; j++)
            free(t->r[i].f[j]);
        free(t->r[i].f);
    }
    free(t->r);
    t->n = 0;
    t->r = NULL;
}

struct sbuf {
    char *p;
    size_t n, cap;
};

static void sbuf_put(struct sbuf *b, char c)
{
    if (b->n + 2 > b->cap) {
        b->cap = b->cap ? b->cap * 2 : 32;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    b->p[b->n++] = c;
    b->p[b->n] = '\0';
}

static void rec_add(struct rec *r, struct sbuf *b)
{
    r->f = realloc(r->f, (r->n + 1) * sizeof(*r->f));
    assert_non_null(r->f);
    r->f[r->n++] = b->p ? b->p : strdup("");
    assert_non_null(r->f[r->n - 1]);
    *b = (struct sbuf){0};
}

static void table_add(struct table *t, struct rec *r)
{
    t->r = realloc(t->r, (t->n + 1) * sizeof(*t->r));
    assert_non_null(t->r);
    t->r[t->n++] = *r;
    *r = (struct rec){0};
}

/* Parses buf[0..len) into t. Records end with LF; a field is either quoted
 * (any byte but a lone quote inside, "" for a quote, closed by a quote that
 * is followed by a comma or LF) or bare (no quote, CR or LF). Every record has
 * as many fields as the first; the file ends with the last record's LF and
 * holds no NUL. Returns NULL, or what is wrong (t is then freed). */
static const char *csv_read(const char *buf, size_t len, struct table *t)
{
    static char why[128];
    struct rec r = {0};
    struct sbuf b = {0};
    size_t i = 0;

    *t = (struct table){0};
    if (len == 0 || buf[len - 1] != '\n')
        return "the file does not end with a record's LF";
    while (i < len) {
        /* one field */
        if (buf[i] == '"') {
            for (i++;; i++) {
                if (i >= len) {
                    snprintf(why, sizeof(why), "unterminated quoted field");
                    goto bad;
                }
                if (buf[i] == '\0') {
                    snprintf(why, sizeof(why), "NUL at byte %zu", i);
                    goto bad;
                }
                if (buf[i] == '"') {
                    if (i + 1 < len && buf[i + 1] == '"') {
                        sbuf_put(&b, '"');
                        i++;
                        continue;
                    }
                    i++;
                    break;
                }
                sbuf_put(&b, buf[i]);
            }
            if (buf[i] != ',' && buf[i] != '\n') {
                snprintf(why, sizeof(why), "byte %zu: 0x%02x after a closing quote", i,
                         (unsigned char)buf[i]);
                goto bad;
            }
        } else {
            for (; buf[i] != ',' && buf[i] != '\n'; i++) {
                if (buf[i] == '"' || buf[i] == '\r' || buf[i] == '\0') {
                    snprintf(why, sizeof(why), "byte %zu: 0x%02x in a bare field", i,
                             (unsigned char)buf[i]);
                    goto bad;
                }
                sbuf_put(&b, buf[i]);
            }
        }
        rec_add(&r, &b);
        if (buf[i++] == '\n') {
            if (t->n && r.n != t->r[0].n) {
                snprintf(why, sizeof(why), "record %zu has %zu fields, the header %zu", t->n, r.n,
                         t->r[0].n);
                goto bad;
            }
            table_add(t, &r);
        }
    }
    return NULL;
bad:
    free(b.p);
    for (size_t j = 0; j < r.n; j++)
        free(r.f[j]);
    free(r.f);
    table_free(t);
    return why;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;

    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    p[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* Reads path strictly; its first line must be exactly header. */
static void read_file(const char *path, const char *header, struct table *t)
{
    size_t len, hl = strlen(header);
    char *buf = slurp(path, &len);
    const char *why;

    if (len <= hl || memcmp(buf, header, hl) != 0 || buf[hl] != '\n')
        fail_msg("%s: header is not exactly\n%s\nbut\n%.*s", path, header,
                 (int)(strchr(buf, '\n') ? strchr(buf, '\n') - buf : (long)len), buf);
    why = csv_read(buf, len, t);
    if (why)
        fail_msg("%s: not strict RFC 4180: %s", path, why);
    free(buf);
}

static size_t col(const struct table *t, const char *name)
{
    for (size_t i = 0; i < t->r[0].n; i++)
        if (!strcmp(t->r[0].f[i], name))
            return i;
    fail_msg("no column %s", name);
    return 0;
}

static const char *cell(const struct table *t, size_t row, const char *name)
{
    return t->r[row].f[col(t, name)];
}

static bool empty(const struct table *t, size_t row, const char *name)
{
    return cell(t, row, name)[0] == '\0';
}

/* The whole field must be a number. */
static double num(const struct table *t, size_t row, const char *name)
{
    const char *s = cell(t, row, name);
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v))
        fail_msg("row %zu %s: \"%s\" is not a number", row, name, s);
    return v;
}

static uint64_t count(const struct table *t, size_t row, const char *name)
{
    const char *s = cell(t, row, name);
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (!*s || *end || errno || *s == '-' || *s == '+')
        fail_msg("row %zu %s: \"%s\" is not a count", row, name, s);
    return v;
}

#define assert_close(a, b, tol)                                                                    \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            fail_msg("%s = %.9f, %s = %.9f: differ by more than %g", #a, a_, #b, b_,               \
                     (double)(tol));                                                               \
    } while (0)

/* The field must print v as the writer prints it. */
static void assert_printed(const struct table *t, size_t row, const char *name, double v, int prec)
{
    char want[64];
    snprintf(want, sizeof(want), "%.*f", prec, v);
    if (strcmp(cell(t, row, name), want))
        fail_msg("row %zu %s: \"%s\", want \"%s\"", row, name, cell(t, row, name), want);
}

/* ---- the synthetic run ---------------------------------------------------- */

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

static double rng_unit(struct rng *r)
{
    return ((double)(rng_next(r) >> 11) + 0.5) * 0x1p-53;
}

/* 50 us + exponential(300 us), 1 % tail up to 20 ms; node 1 three times slower. */
static uint64_t gen_lat(struct rng *r, unsigned node)
{
    double us = 50.0 - 300.0 * log(rng_unit(r));
    if (rng_next(r) % 100 == 0)
        us += 20000.0 * rng_unit(r);
    return (uint64_t)(us * 1000.0 * (node ? 3.0 : 1.0));
}

enum rk { RK_NODE, RK_WORKER, RK_TARGET };

struct rowref {
    enum rk kind;
    unsigned n, w, t;
};

struct sim {
    struct iof_test test;
    struct mgr_test_info ti;
    const char *spec, *cycle;
    unsigned size, read_pct;
    unsigned nint;
    uint64_t iv_ns[MAXINT], ns;
    double t0; /* time_s of the measured window's start */
    bool interrupted;
    bool emit[NN][MAXINT]; /* intervals each node reports */
    bool cpu_valid[NN];
    struct proto_cpu cpu[NN];
    double skew_ms;
    struct iof_stats tgt[NN][NW][NT], wrk[NN][NW], node[NN], all;
    struct iof_stats iv[NN][MAXINT], iv_all[MAXINT];
    double iv_cpu[MAXINT];
    /* ALL's CPU as the aggregate hands it (its one rule): of the test, of
     * each interval */
    struct proto_cpu all_cpu, iv_all_cpu[MAXINT];
    unsigned iv_reported[MAXINT];
    /* arrival order of the rows */
    struct rowref arrival[NN * (1 + NW * (1 + NT))];
    size_t narrival;
};

static struct sim *g_sim[NTESTS];
static char g_dir[PATH_MAX], g_csv[PATH_MAX], g_ts[PATH_MAX];
static struct table g_csv_t, g_ts_t;

static void fmt(char *buf, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t cap, const char *f, ...)
{
    va_list ap;
    int n;
    va_start(ap, f);
    n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < cap);
}

static void record_io(struct iof_stats *a, struct iof_stats *b, bool rd, unsigned size,
                      uint64_t lat)
{
    struct iof_dirstats *d = rd ? &a->rd : &a->wr, *e = rd ? &b->rd : &b->wr;
    d->ios++;
    d->bytes += size;
    iof_hist_record(&d->lat, lat);
    e->ios++;
    e->bytes += size;
    iof_hist_record(&e->lat, lat);
}

static void sim_build(struct sim *s, unsigned index)
{
    struct rng r = {.s = 1000 + index};

    s->test = (struct iof_test){.index = index,
                                .cycle_param = index ? IOF_CYCLE_NONE : IOF_CYCLE_QUEUE_DEPTH,
                                .cycle_value = QD};
    s->ti = (struct mgr_test_info){.test = &s->test,
                                   .ntests = NTESTS,
                                   .spec = s->spec,
                                   .cycle = s->cycle,
                                   .start_wall_ns = 1700000000000000000ull + index};
    for (unsigned n = 0; n < NN; n++) {
        for (unsigned w = 0; w < NW; w++)
            for (unsigned t = 0; t < NT; t++)
                iof_stats_reset(&s->tgt[n][w][t]);
        for (unsigned k = 0; k < MAXINT; k++)
            iof_stats_reset(&s->iv[n][k]);
    }
    for (unsigned n = 0; n < NN; n++)
        for (unsigned w = 0; w < NW; w++)
            for (unsigned t = 0; t < NT; t++) {
                struct iof_stats *ts = &s->tgt[n][w][t];
                unsigned nios = 2000 + (unsigned)(rng_next(&r) % 2000);
                for (unsigned i = 0; i < nios; i++) {
                    bool rd = rng_next(&r) % 100 < s->read_pct;
                    unsigned k = (unsigned)((uint64_t)i * s->nint / nios);
                    record_io(ts, &s->iv[n][k], rd, s->size, gen_lat(&r, n));
                }
                if (n == 1 && w == 0 && t == 1) { /* a few errors, in interval 0 */
                    ts->rd.errors += 3;
                    s->iv[n][0].rd.errors += 3;
                    if (s->read_pct < 100) {
                        ts->wr.errors += 2;
                        s->iv[n][0].wr.errors += 2;
                    }
                    ts->first_error = -EIO;
                }
            }
    iof_stats_reset(&s->all);
    for (unsigned n = 0; n < NN; n++) {
        iof_stats_reset(&s->node[n]);
        for (unsigned w = 0; w < NW; w++) {
            iof_stats_reset(&s->wrk[n][w]);
            for (unsigned t = 0; t < NT; t++)
                iof_stats_merge(&s->wrk[n][w], &s->tgt[n][w][t]);
            iof_stats_merge(&s->node[n], &s->wrk[n][w]);
        }
        iof_stats_merge(&s->all, &s->node[n]);
    }
    for (unsigned k = 0; k < s->nint; k++) {
        unsigned valid = 0;
        double sum = 0;
        iof_stats_reset(&s->iv_all[k]);
        s->iv_reported[k] = 0;
        for (unsigned n = 0; n < NN; n++) {
            if (!s->emit[n][k])
                continue;
            iof_stats_merge(&s->iv_all[k], &s->iv[n][k]);
            s->iv_reported[k]++;
            if (s->cpu_valid[n]) {
                valid++;
                sum += s->cpu[n].busy_pct;
            }
        }
        s->iv_cpu[k] = valid ? sum / valid : 0;
    }
    for (unsigned k = 0; k < s->nint; k++) {
        struct mgr_agg_cpu a = {0};
        for (unsigned n = 0; n < NN; n++)
            if (s->emit[n][k] && s->cpu_valid[n])
                mgr_agg_cpu_add(&a, &s->cpu[n]);
        s->iv_all_cpu[k] = mgr_agg_cpu_mean(&a);
    }
    {
        struct mgr_agg_cpu a = {0};
        for (unsigned n = 0; n < NN; n++)
            if (s->cpu_valid[n])
                mgr_agg_cpu_add(&a, &s->cpu[n]);
        s->all_cpu = mgr_agg_cpu_mean(&a);
    }
    s->ns = 0;
    for (unsigned k = 0; k < s->nint; k++)
        s->ns += s->iv_ns[k];
}

/* Per node, the cluster's order: each worker's TARGETs then the WORKER, then the NODE. */
static size_t node_rows(unsigned n, struct rowref *out)
{
    size_t k = 0;
    for (unsigned w = 0; w < NW; w++) {
        for (unsigned t = 0; t < NT; t++)
            out[k++] = (struct rowref){RK_TARGET, n, w, t};
        out[k++] = (struct rowref){RK_WORKER, n, w, 0};
    }
    out[k++] = (struct rowref){RK_NODE, n, 0, 0};
    return k;
}

static void sim_arrival(struct sim *s, bool interleave)
{
    struct rowref per[NN][1 + NW * (1 + NT)];
    size_t len[NN];

    for (unsigned n = 0; n < NN; n++)
        len[n] = node_rows(n, per[n]);
    s->narrival = 0;
    if (!interleave) {
        for (unsigned n = 0; n < NN; n++)
            for (size_t i = 0; i < len[n]; i++)
                s->arrival[s->narrival++] = per[n][i];
        return;
    }
    /* alternate, last node first: its NODE row arrives first */
    for (size_t i = 0; i < len[0]; i++)
        for (unsigned n = NN; n-- > 0;)
            s->arrival[s->narrival++] = per[n][i];
}

static const struct iof_stats *sim_stats(const struct sim *s, const struct rowref *r)
{
    switch (r->kind) {
    case RK_NODE:
        return &s->node[r->n];
    case RK_WORKER:
        return &s->wrk[r->n][r->w];
    default:
        return &s->tgt[r->n][r->w][r->t];
    }
}

/* A row's or interval's metrics, computed once before every sink gets it, as
 * manager/aggregate.c does for a run. */
static const struct mgr_metrics *metrics_of(const struct iof_stats *s, uint64_t ns,
                                            struct mgr_metrics *m)
{
    mgr_metrics_compute(s, ns, m);
    return m;
}

static struct mgr_row sim_row(const struct sim *s, const struct rowref *r)
{
    struct mgr_row row = {.node = node_names[r->n],
                          .stats = sim_stats(s, r),
                          .ns = s->ns,
                          .queue_depth = QD,
                          .nodes = 1,
                          .workers = 1,
                          .targets = 1};
    switch (r->kind) {
    case RK_NODE:
        row.type = MGR_ROW_NODE;
        row.queue_depth = 0;
        row.workers = NW;
        row.targets = NW * NT;
        row.cpu = s->cpu_valid[r->n] ? &s->cpu[r->n] : NULL;
        row.cpu_busy_pct = s->cpu[r->n].busy_pct;
        break;
    case RK_WORKER:
        row.type = MGR_ROW_WORKER;
        row.worker = worker_names[r->w];
        row.targets = NT;
        break;
    case RK_TARGET:
        row.type = MGR_ROW_TARGET;
        row.worker = worker_names[r->w];
        row.target = target_paths[r->w][r->t];
        break;
    }
    return row;
}

static double sim_all_cpu(const struct sim *s, bool *known)
{
    unsigned valid = 0;
    double sum = 0;
    for (unsigned n = 0; n < NN; n++)
        if (s->cpu_valid[n]) {
            valid++;
            sum += s->cpu[n].busy_pct;
        }
    *known = valid > 0;
    return valid ? sum / valid : 0;
}

#define SINKS(call)                                                                                \
    do {                                                                                           \
        for (size_t si_ = 0; si_ < nsinks; si_++) {                                                \
            struct mgr_sink *s_ = sinks[si_];                                                      \
            s_->ops->call;                                                                         \
        }                                                                                          \
    } while (0)

/* Feeds one test to the sinks, as manager/run.c would. */
static void sim_feed(const struct sim *s, struct mgr_sink **sinks, size_t nsinks)
{
    double t = s->t0;
    bool known;

    SINKS(test_begin(s_, &s->ti));
    for (unsigned k = 0; k < s->nint; k++) {
        t += (double)s->iv_ns[k] / 1e9;
        for (unsigned n = 0; n < NN; n++) {
            struct mgr_interval mi = {.test = &s->ti,
                                      .k = k,
                                      .time_s = t,
                                      .node = node_names[n],
                                      .stats = &s->iv[n][k],
                                      .ns = s->iv_ns[k],
                                      .reported = 1,
                                      .cpu = s->cpu_valid[n] ? &s->cpu[n] : NULL,
                                      .cpu_busy_pct = s->cpu[n].busy_pct};
            struct mgr_metrics m;
            mi.m = metrics_of(mi.stats, mi.ns, &m);
            if (s->emit[n][k])
                SINKS(interval(s_, &mi));
        }
        {
            struct mgr_interval mi = {.test = &s->ti,
                                      .k = k,
                                      .time_s = t,
                                      .stats = &s->iv_all[k],
                                      .ns = s->iv_ns[k],
                                      .reported = s->iv_reported[k],
                                      .cpu = s->iv_all_cpu[k].valid ? &s->iv_all_cpu[k] : NULL,
                                      .cpu_busy_pct = s->iv_cpu[k]};
            struct mgr_metrics m;
            mi.m = metrics_of(mi.stats, mi.ns, &m);
            SINKS(interval(s_, &mi));
        }
    }
    for (size_t i = 0; i < s->narrival; i++) {
        struct mgr_row row = sim_row(s, &s->arrival[i]);
        struct mgr_metrics m;
        row.m = metrics_of(row.stats, row.ns, &m);
        SINKS(row(s_, &s->ti, &row));
    }
    {
        struct mgr_row all = {.type = MGR_ROW_ALL,
                              .stats = &s->all,
                              .ns = s->ns,
                              .queue_depth = QD,
                              .nodes = NN,
                              .workers = NN * NW,
                              .targets = NN * NW * NT,
                              .cpu = s->all_cpu.valid ? &s->all_cpu : NULL,
                              .cpu_busy_pct = sim_all_cpu(s, &known)};
        struct mgr_test_end te = {.test = &s->ti,
                                  .all = &all,
                                  .start_skew_ms = s->skew_ms,
                                  .nodes = NN,
                                  .interrupted = s->interrupted};
        struct mgr_metrics m;
        all.m = metrics_of(all.stats, all.ns, &m);
        SINKS(test_end(s_, &te));
    }
}

static int group_setup(void **state)
{
    struct mgr_sink *sinks[2];
    struct iof_diag d = {{0}};
    size_t nsinks = 0;
    struct mgr_run_info ri = {.start_wall_ns = 1700000000000000000ull};

    (void)state;
    if (test_tmpdir_make(g_dir, "test_out_csv") < 0)
        return -1;
    /* a comma and a quote in the file names too */
    fmt(g_csv, sizeof(g_csv), "%s/results,\"1\".csv", g_dir);
    fmt(g_ts, sizeof(g_ts), "%s/series.csv", g_dir);

    for (unsigned i = 0; i < NTESTS; i++) {
        struct sim *s = calloc(1, sizeof(*s));
        if (!s)
            return -1;
        g_sim[i] = s;
        for (unsigned n = 0; n < NN; n++) {
            s->cpu_valid[n] = true;
            s->cpu[n] = (struct proto_cpu){.valid = true,
                                           .busy_pct = 40.0 - 15.0 * n + i,
                                           .user_pct = 30.0 - 10.0 * n,
                                           .sys_pct = 10.0 - 5.0 * n + i,
                                           .agent_pct = 5.0 + n};
            /* node 0 sends the node figures, node 1 (an older agent) not */
            if (n == 0) {
                s->cpu[n].node_valid = true;
                s->cpu[n].dpc_pct = 2.5 + i;
                s->cpu[n].irq_pct = 0.625;
                s->cpu[n].intr_per_s = 15000.125;
                s->cpu[n].packets_per_s = 420.5 + i;
                s->cpu[n].packet_errors = 3;
                s->cpu[n].retrans_per_s = 1.25;
            }
        }
        if (i == 0) {
            s->spec = "4k, 70% read \"random\"";
            s->cycle = "queue_depth=8";
            s->size = 4096;
            s->read_pct = 70;
            s->nint = 5;
            for (unsigned k = 0; k < 5; k++)
                s->iv_ns[k] = 1000000000ull;
            s->t0 = 1.0;
            s->skew_ms = 0.125;
            for (unsigned n = 0; n < NN; n++)
                for (unsigned k = 0; k < 5; k++)
                    s->emit[n][k] = true;
        } else {
            /* interrupted 2.5 s into its window: node 1 never reports the last interval */
            s->spec = "64k sequential read";
            s->cycle = "";
            s->size = 65536;
            s->read_pct = 100;
            s->nint = 3;
            s->iv_ns[0] = s->iv_ns[1] = 1000000000ull;
            s->iv_ns[2] = 500000000ull;
            s->t0 = 12.0;
            s->skew_ms = 2.5;
            s->interrupted = true;
            s->cpu_valid[1] = false;
            s->cpu[1] = (struct proto_cpu){0};
            for (unsigned n = 0; n < NN; n++)
                for (unsigned k = 0; k < 3; k++)
                    s->emit[n][k] = !(n == 1 && k == 2);
        }
        sim_build(s, i);
        sim_arrival(s, i == 1);
    }

    if (mgr_sink_open(mgr_sink_for_option("--csv"), g_csv, 0, &sinks[nsinks], &d) != 0) {
        fprintf(stderr, "open %s: %s\n", g_csv, d.msg);
        return -1;
    }
    nsinks++;
    if (mgr_sink_open(mgr_sink_for_option("--timeseries"), g_ts, 0, &sinks[nsinks], &d) != 0) {
        fprintf(stderr, "open %s: %s\n", g_ts, d.msg);
        return -1;
    }
    nsinks++;
    SINKS(run_begin(s_, &ri));
    for (unsigned i = 0; i < NTESTS; i++)
        sim_feed(g_sim[i], sinks, nsinks);
    SINKS(run_end(s_, 130));
    for (size_t i = 0; i < nsinks; i++)
        if (mgr_sink_close(sinks[i]) != 0)
            return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    table_free(&g_csv_t);
    table_free(&g_ts_t);
    for (unsigned i = 0; i < NTESTS; i++)
        free(g_sim[i]);
    /* the files of every test, also when one failed before removing its own */
    {
        static const char *const extra[] = {"unfinished.csv", "noresult.csv"};
        char path[PATH_MAX];
        for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
            snprintf(path, sizeof(path), "%.*s/%s", (int)(sizeof(path) - 32), g_dir, extra[i]);
            unlink(path);
        }
    }
    test_tmpdir_remove(g_dir);
    return 0;
}

/* ---- the reader itself ----------------------------------------------------- */

static void reader_accepts(const char *text, size_t nrec, size_t nf, const char *last)
{
    struct table t;
    const char *why = csv_read(text, strlen(text), &t);
    if (why)
        fail_msg("refused %s: %s", text, why);
    assert_int_equal(t.n, nrec);
    assert_int_equal(t.r[nrec - 1].n, nf);
    assert_string_equal(t.r[nrec - 1].f[nf - 1], last);
    table_free(&t);
}

static void reader_refuses(const char *text)
{
    struct table t;
    if (!csv_read(text, strlen(text), &t))
        fail_msg("accepted %s", text);
}

static void test_reader_strict(void **state)
{
    (void)state;
    reader_accepts("a,b\n1,2\n", 2, 2, "2");
    reader_accepts("a,b\n\"x\"\"y\",\"p,\r\nq\"\n", 2, 2, "p,\r\nq");
    reader_accepts("a,b\n,\n", 2, 2, "");
    reader_accepts("a,b\n\"\",\"\"\"\"\n", 2, 2, "\"");
    reader_refuses("");
    reader_refuses("a,b\n1,2");         /* last record unterminated */
    reader_refuses("a,b\n1,2\n\n");     /* trailing empty line */
    reader_refuses("a,b\n1,2,3\n");     /* too many fields */
    reader_refuses("a,b\n1\n");         /* too few */
    reader_refuses("a,b\n1,x\"y\n");    /* quote in a bare field */
    reader_refuses("a,b\n1,\"x\"y\n");  /* garbage after a closing quote */
    reader_refuses("a,b\n1,\"x\n");     /* unterminated quote */
    reader_refuses("a,b\r\n1,2\r\n");   /* CR in a bare field */
    reader_refuses("a,b\n1,\"x\"\"\n"); /* doubled quote, then no closing one */
}

/* ---- --csv ----------------------------------------------------------------- */

static void load_csv(void)
{
    if (!g_csv_t.n)
        read_file(g_csv, CSV_HEADER, &g_csv_t);
}

static void load_ts(void)
{
    if (!g_ts_t.n)
        read_file(g_ts, TS_HEADER, &g_ts_t);
}

/* Expected output order of one test: ALL (n = NN), then per node in order of
 * its NODE row's arrival, NODE, its WORKERs (arrival), each followed by its
 * TARGETs (arrival). */
static size_t expected_order(const struct sim *s, struct rowref *out)
{
    size_t k = 0;
    out[k++] = (struct rowref){RK_NODE, NN, 0, 0}; /* ALL */
    for (size_t i = 0; i < s->narrival; i++) {
        const struct rowref *nr = &s->arrival[i];
        if (nr->kind != RK_NODE)
            continue;
        out[k++] = *nr;
        for (size_t j = 0; j < s->narrival; j++) {
            const struct rowref *wr = &s->arrival[j];
            if (wr->kind != RK_WORKER || wr->n != nr->n)
                continue;
            out[k++] = *wr;
            for (size_t l = 0; l < s->narrival; l++) {
                const struct rowref *tr = &s->arrival[l];
                if (tr->kind == RK_TARGET && tr->n == nr->n && tr->w == wr->w)
                    out[k++] = *tr;
            }
        }
    }
    return k;
}

#define ROWS_PER_TEST (1 + NN * (1 + NW * (1 + NT)))

static void test_csv_header_and_shape(void **state)
{
    (void)state;
    load_csv();
    assert_int_equal(g_csv_t.n, 1 + NTESTS * ROWS_PER_TEST);
    assert_int_equal(g_csv_t.r[0].n, 66);
}

static void test_csv_order_and_names(void **state)
{
    struct rowref want[ROWS_PER_TEST];

    (void)state;
    load_csv();
    for (unsigned i = 0; i < NTESTS; i++) {
        const struct sim *s = g_sim[i];
        size_t n = expected_order(s, want);
        assert_int_equal(n, ROWS_PER_TEST);
        for (size_t j = 0; j < n; j++) {
            size_t row = 1 + i * ROWS_PER_TEST + j;
            const struct rowref *r = &want[j];
            const char *type = j == 0                 ? "ALL"
                               : r->kind == RK_NODE   ? "NODE"
                               : r->kind == RK_WORKER ? "WORKER"
                                                      : "TARGET";
            assert_int_equal(count(&g_csv_t, row, "test"), i + 1);
            assert_string_equal(cell(&g_csv_t, row, "spec"), s->spec);
            assert_string_equal(cell(&g_csv_t, row, "cycle"), s->cycle);
            assert_string_equal(cell(&g_csv_t, row, "row_type"), type);
            assert_string_equal(cell(&g_csv_t, row, "node"), j ? node_names[r->n] : "");
            assert_string_equal(cell(&g_csv_t, row, "worker"),
                                j && r->kind != RK_NODE ? worker_names[r->w] : "");
            assert_string_equal(cell(&g_csv_t, row, "target"),
                                j && r->kind == RK_TARGET ? target_paths[r->w][r->t] : "");
        }
    }
}

/* Every figure of the row as mgr_metrics_compute() gives it, counts exact. */
static void check_row_truth(const struct table *t, size_t row, const struct iof_stats *st,
                            uint64_t ns)
{
    struct mgr_metrics m;

    mgr_metrics_compute(st, ns, &m);
    assert_printed(t, row, "duration_s", m.seconds, 6);
    assert_printed(t, row, "iops", m.iops, 3);
    assert_printed(t, row, "read_iops", m.read_iops, 3);
    assert_printed(t, row, "write_iops", m.write_iops, 3);
    assert_printed(t, row, "mibps", m.mibps, 3);
    assert_printed(t, row, "read_mibps", m.read_mibps, 3);
    assert_printed(t, row, "write_mibps", m.write_mibps, 3);
    assert_printed(t, row, "avg_lat_ms", m.avg_ms, 6);
    assert_printed(t, row, "avg_read_lat_ms", m.avg_read_ms, 6);
    if (st->wr.ios)
        assert_printed(t, row, "avg_write_lat_ms", m.avg_write_ms, 6);
    else
        assert_true(empty(t, row, "avg_write_lat_ms")); /* no writes: no write latency */
    assert_printed(t, row, "p50_lat_ms", m.p50_ms, 6);
    assert_printed(t, row, "p90_lat_ms", m.p90_ms, 6);
    assert_printed(t, row, "p95_lat_ms", m.p95_ms, 6);
    assert_printed(t, row, "p99_lat_ms", m.p99_ms, 6);
    assert_printed(t, row, "p999_lat_ms", m.p999_ms, 6);
    assert_printed(t, row, "p9999_lat_ms", m.p9999_ms, 6);
    assert_printed(t, row, "max_lat_ms", m.max_ms, 6);
    assert_int_equal(count(t, row, "read_ios"), st->rd.ios);
    assert_int_equal(count(t, row, "write_ios"), st->wr.ios);
    assert_int_equal(count(t, row, "bytes_read"), st->rd.bytes);
    assert_int_equal(count(t, row, "bytes_written"), st->wr.bytes);
    assert_int_equal(count(t, row, "errors"), st->rd.errors + st->wr.errors);
    assert_int_equal(count(t, row, "read_errors"), st->rd.errors);
    assert_int_equal(count(t, row, "write_errors"), st->wr.errors);
}

static void test_csv_figures_match_truth(void **state)
{
    struct rowref want[ROWS_PER_TEST];

    (void)state;
    load_csv();
    for (unsigned i = 0; i < NTESTS; i++) {
        const struct sim *s = g_sim[i];
        expected_order(s, want);
        for (size_t j = 0; j < ROWS_PER_TEST; j++) {
            size_t row = 1 + i * ROWS_PER_TEST + j;
            check_row_truth(&g_csv_t, row, j ? sim_stats(s, &want[j]) : &s->all, s->ns);
        }
    }
}

/* From the file alone: rates against counts and duration, percentiles. */
static void test_csv_row_consistency(void **state)
{
    static const char *const pct[] = {"p50_lat_ms",  "p90_lat_ms",   "p95_lat_ms", "p99_lat_ms",
                                      "p999_lat_ms", "p9999_lat_ms", "max_lat_ms"};
    (void)state;
    load_csv();
    for (size_t row = 1; row < g_csv_t.n; row++) {
        const struct table *t = &g_csv_t;
        double sec = num(t, row, "duration_s");
        uint64_t rd = count(t, row, "read_ios"), wr = count(t, row, "write_ios");
        uint64_t br = count(t, row, "bytes_read"), bw = count(t, row, "bytes_written");

        assert_true(sec > 0);
        /* three roundings to 0.001 */
        assert_close(num(t, row, "iops"), num(t, row, "read_iops") + num(t, row, "write_iops"),
                     0.0015 + 1e-9);
        assert_close(num(t, row, "iops"), (double)(rd + wr) / sec, 0.0005 + 1e-9);
        assert_close(num(t, row, "read_iops"), (double)rd / sec, 0.0005 + 1e-9);
        assert_close(num(t, row, "mibps"), (double)(br + bw) / MIB / sec, 0.0005 + 1e-9);
        assert_close(num(t, row, "read_mibps"), (double)br / MIB / sec, 0.0005 + 1e-9);
        assert_close(num(t, row, "write_mibps"), (double)bw / MIB / sec, 0.0005 + 1e-9);
        assert_int_equal(count(t, row, "errors"),
                         count(t, row, "read_errors") + count(t, row, "write_errors"));
        for (size_t p = 1; p < sizeof(pct) / sizeof(pct[0]); p++)
            if (num(t, row, pct[p - 1]) > num(t, row, pct[p]))
                fail_msg("row %zu: %s %s > %s %s", row, pct[p - 1], cell(t, row, pct[p - 1]),
                         pct[p], cell(t, row, pct[p]));
        assert_true(num(t, row, "avg_lat_ms") <= num(t, row, "max_lat_ms"));
        assert_true(num(t, row, "p50_lat_ms") > 0);
    }
}

/* From the file alone: ALL = sum of NODE = sum of WORKER = sum of TARGET per
 * test, and each NODE = sum of its WORKERs, each WORKER = sum of its TARGETs
 * (the rows under a row are the ones that follow it). */
static void test_csv_sums(void **state)
{
    static const char *const cols[] = {"read_ios", "write_ios",   "bytes_read",  "bytes_written",
                                       "errors",   "read_errors", "write_errors"};
    enum { NC = sizeof(cols) / sizeof(cols[0]) };
    const struct table *t = &g_csv_t;

    (void)state;
    load_csv();
    for (size_t row = 1; row < t->n;) {
        uint64_t all[NC], node[NC] = {0}, wrk[NC] = {0}, tgt[NC] = {0};
        uint64_t n1[NC], w1[NC], nsum[NC], wsum[NC];
        unsigned test = (unsigned)count(t, row, "test");

        assert_string_equal(cell(t, row, "row_type"), "ALL"); /* ALL first */
        for (size_t c = 0; c < NC; c++)
            all[c] = count(t, row, cols[c]);
        row++;
        while (row < t->n && count(t, row, "test") == test) {
            const char *type = cell(t, row, "row_type");
            assert_string_equal(type, "NODE");
            for (size_t c = 0; c < NC; c++) {
                n1[c] = count(t, row, cols[c]);
                node[c] += n1[c];
                nsum[c] = 0;
            }
            row++;
            while (row < t->n && !strcmp(cell(t, row, "row_type"), "WORKER")) {
                for (size_t c = 0; c < NC; c++) {
                    w1[c] = count(t, row, cols[c]);
                    wrk[c] += w1[c];
                    nsum[c] += w1[c];
                    wsum[c] = 0;
                }
                row++;
                while (row < t->n && !strcmp(cell(t, row, "row_type"), "TARGET")) {
                    for (size_t c = 0; c < NC; c++) {
                        tgt[c] += count(t, row, cols[c]);
                        wsum[c] += count(t, row, cols[c]);
                    }
                    row++;
                }
                for (size_t c = 0; c < NC; c++)
                    assert_int_equal(wsum[c], w1[c]);
            }
            for (size_t c = 0; c < NC; c++)
                assert_int_equal(nsum[c], n1[c]);
        }
        for (size_t c = 0; c < NC; c++) {
            if (all[c] != node[c] || node[c] != wrk[c] || wrk[c] != tgt[c])
                fail_msg("test %u %s: ALL %" PRIu64 ", NODE %" PRIu64 ", WORKER %" PRIu64
                         ", TARGET %" PRIu64,
                         test, cols[c], all[c], node[c], wrk[c], tgt[c]);
        }
        assert_true(all[0] > 10000); /* thousands of I/Os per target */
    }
}

/* The node figures of a row: c's when it has them, else empty (never 0). */
static const char *const node_cols[] = {"dpc_pct",       "irq_pct",       "intr_per_s",
                                        "packets_per_s", "packet_errors", "retrans_per_s"};

static void assert_node_cols(const struct table *t, size_t row, const struct proto_cpu *c)
{
    bool known = c && c->valid && c->node_valid;
    const double v[] = {known ? c->dpc_pct : 0,       known ? c->irq_pct : 0,
                        known ? c->intr_per_s : 0,    known ? c->packets_per_s : 0,
                        known ? c->packet_errors : 0, known ? c->retrans_per_s : 0};
    for (size_t i = 0; i < sizeof(node_cols) / sizeof(node_cols[0]); i++) {
        if (known)
            assert_printed(t, row, node_cols[i], v[i], 3);
        else if (!empty(t, row, node_cols[i]))
            fail_msg("row %zu %s: \"%s\", want empty", row, node_cols[i],
                     cell(t, row, node_cols[i]));
    }
}

/* Empty where a value does not apply; CPU and the extras. */
static void test_csv_empty_fields_and_extras(void **state)
{
    static const char *const cpu_cols[] = {"cpu_pct", "user_pct", "sys_pct", "agent_cpu_pct",
                                           "cpu_effectiveness"};
    const struct table *t = &g_csv_t;

    (void)state;
    load_csv();
    for (size_t row = 1; row < t->n; row++) {
        const char *type = cell(t, row, "row_type");
        const struct sim *s = g_sim[count(t, row, "test") - 1];
        bool is_all = !strcmp(type, "ALL"), is_node = !strcmp(type, "NODE");

        if (is_all) {
            bool known;
            double busy = sim_all_cpu(s, &known);
            unsigned valid = 0;
            double user = 0;
            for (unsigned n = 0; n < NN; n++)
                if (s->cpu_valid[n]) {
                    valid++;
                    user += s->cpu[n].user_pct;
                }
            assert_printed(t, row, "cpu_pct", busy, 3);
            assert_printed(t, row, "user_pct", user / valid, 3);
            assert_printed(t, row, "start_skew_ms", s->skew_ms, 3);
            assert_int_equal(count(t, row, "queue_depth"), QD);
            assert_int_equal(count(t, row, "nodes"), NN);
            assert_int_equal(count(t, row, "workers"), NN * NW);
            assert_int_equal(count(t, row, "targets"), NN * NW * NT);
            assert_close(num(t, row, "cpu_effectiveness"),
                         num(t, row, "iops") / num(t, row, "cpu_pct"), 0.01);
            /* ALL's node figures only when every node that measured CPU
             * had them: not in test 1 (node 1 sends none), in test 2 node
             * 0's (node 1 measured nothing). */
            assert_node_cols(t, row, &s->all_cpu);
            if (s == g_sim[0])
                assert_true(empty(t, row, "dpc_pct") && empty(t, row, "retrans_per_s"));
            else
                assert_printed(t, row, "dpc_pct", s->cpu[0].dpc_pct, 3);
            continue;
        }
        assert_true(empty(t, row, "start_skew_ms"));
        if (is_node) {
            unsigned n = !strcmp(cell(t, row, "node"), node_names[0]) ? 0 : 1;
            assert_string_equal(cell(t, row, "node"), node_names[n]);
            assert_true(empty(t, row, "queue_depth"));
            assert_int_equal(count(t, row, "workers"), NW);
            assert_int_equal(count(t, row, "targets"), NW * NT);
            if (s->cpu_valid[n]) {
                assert_printed(t, row, "cpu_pct", s->cpu[n].busy_pct, 3);
                assert_printed(t, row, "user_pct", s->cpu[n].user_pct, 3);
                assert_printed(t, row, "sys_pct", s->cpu[n].sys_pct, 3);
                assert_printed(t, row, "agent_cpu_pct", s->cpu[n].agent_pct, 3);
                assert_close(num(t, row, "cpu_effectiveness"),
                             num(t, row, "iops") / num(t, row, "cpu_pct"), 0.01);
            } else {
                for (size_t c = 0; c < sizeof(cpu_cols) / sizeof(cpu_cols[0]); c++)
                    assert_true(empty(t, row, cpu_cols[c]));
            }
            assert_node_cols(t, row, s->cpu_valid[n] ? &s->cpu[n] : NULL);
            if (n == 0)
                assert_printed(t, row, "intr_per_s", 15000.125, 3);
            continue;
        }
        assert_int_equal(count(t, row, "queue_depth"), QD);
        for (size_t c = 0; c < sizeof(cpu_cols) / sizeof(cpu_cols[0]); c++)
            assert_true(empty(t, row, cpu_cols[c]));
        assert_node_cols(t, row, NULL);
    }
}

/* ALL percentiles come from the merged histogram: not a mean of the nodes'. */
static void test_csv_all_percentiles_merged(void **state)
{
    const struct table *t = &g_csv_t;
    const struct sim *s = g_sim[0];
    struct iof_hist merged;
    double mean_p99 = 0;

    (void)state;
    load_csv();
    iof_stats_lat_all(&s->all, &merged);
    assert_printed(t, 1, "p99_lat_ms", (double)iof_hist_percentile(&merged, 0.99) / 1e6, 6);
    for (unsigned n = 0; n < NN; n++) {
        struct mgr_metrics m;
        mgr_metrics_compute(&s->node[n], s->ns, &m);
        mean_p99 += m.p99_ms / NN;
    }
    assert_true(fabs(num(t, 1, "p99_lat_ms") - mean_p99) > 0.01);
}

/* ---- --timeseries ------------------------------------------------------------ */

static int node_index(const char *name)
{
    for (int n = 0; n < NN; n++)
        if (!strcmp(name, node_names[n]))
            return n;
    return strcmp(name, "ALL") ? -2 : -1;
}

static void test_ts_rows_match_truth(void **state)
{
    const struct table *t = &g_ts_t;
    size_t row = 1;

    (void)state;
    load_ts();
    for (unsigned i = 0; i < NTESTS; i++) {
        const struct sim *s = g_sim[i];
        double end = s->t0;
        for (unsigned k = 0; k < s->nint; k++) {
            end += (double)s->iv_ns[k] / 1e9;
            /* the nodes that reported, then ALL */
            for (int n = 0; n <= NN; n++) {
                const struct iof_stats *st = n < NN ? &s->iv[n][k] : &s->iv_all[k];
                struct mgr_metrics m;
                if (n < NN && !s->emit[n][k])
                    continue;
                assert_true(row < t->n);
                mgr_metrics_compute(st, s->iv_ns[k], &m);
                assert_printed(t, row, "time_s", end, 3);
                assert_int_equal(count(t, row, "test"), i + 1);
                assert_string_equal(cell(t, row, "spec"), s->spec);
                assert_string_equal(cell(t, row, "cycle"), s->cycle);
                assert_int_equal(count(t, row, "interval"), k + 1); /* 1-based */
                assert_string_equal(cell(t, row, "node"), n < NN ? node_names[n] : "ALL");
                assert_printed(t, row, "iops", m.iops, 3);
                assert_printed(t, row, "read_iops", m.read_iops, 3);
                assert_printed(t, row, "write_iops", m.write_iops, 3);
                assert_printed(t, row, "mibps", m.mibps, 3);
                assert_printed(t, row, "avg_lat_ms", m.avg_ms, 6);
                assert_printed(t, row, "p99_lat_ms", m.p99_ms, 6);
                assert_printed(t, row, "max_lat_ms", m.max_ms, 6);
                assert_printed(t, row, "duration_s", m.seconds, 6);
                assert_int_equal(count(t, row, "errors"), m.errors);
                assert_int_equal(count(t, row, "read_ios"), st->rd.ios);
                assert_int_equal(count(t, row, "write_ios"), st->wr.ios);
                assert_int_equal(count(t, row, "bytes_read"), st->rd.bytes);
                assert_int_equal(count(t, row, "bytes_written"), st->wr.bytes);
                assert_int_equal(count(t, row, "reported"), n < NN ? 1 : s->iv_reported[k]);
                if (n < NN && s->cpu_valid[n])
                    assert_printed(t, row, "cpu_pct", s->cpu[n].busy_pct, 3);
                else if (n < NN)
                    assert_true(empty(t, row, "cpu_pct"));
                else
                    assert_printed(t, row, "cpu_pct", s->iv_cpu[k], 3);
                assert_node_cols(
                    t, row, n < NN ? (s->cpu_valid[n] ? &s->cpu[n] : NULL) : &s->iv_all_cpu[k]);
                if (n == 0)
                    assert_printed(t, row, "packets_per_s", s->cpu[0].packets_per_s, 3);
                row++;
            }
        }
    }
    assert_int_equal(row, t->n);
}

/* From the file alone: per interval ALL = sum of the node rows before it;
 * per test the intervals sum to the --csv ALL row within one interval. */
static void test_ts_sums(void **state)
{
    static const char *const cols[] = {"read_ios", "write_ios", "bytes_read", "bytes_written",
                                       "errors"};
    enum { NC = sizeof(cols) / sizeof(cols[0]) };
    const struct table *t = &g_ts_t, *c = &g_csv_t;
    uint64_t node[NC] = {0}, test_sum[NTESTS][NC] = {{0}}, biggest[NTESTS] = {0};
    double iops = 0, rdiops = 0, wriops = 0, mibps = 0, maxlat = 0, ios_from_rates[NTESTS] = {0};
    unsigned reported = 0;

    (void)state;
    load_ts();
    load_csv();
    for (size_t row = 1; row < t->n; row++) {
        int n = node_index(cell(t, row, "node"));
        unsigned test = (unsigned)count(t, row, "test");
        assert_true(n >= -1);
        assert_true(test >= 1 && test <= NTESTS);
        assert_close(num(t, row, "iops"), num(t, row, "read_iops") + num(t, row, "write_iops"),
                     0.0015 + 1e-9);
        if (n >= 0) {
            uint64_t ios = count(t, row, "read_ios") + count(t, row, "write_ios");
            for (size_t k = 0; k < NC; k++) {
                node[k] += count(t, row, cols[k]);
                test_sum[test - 1][k] += count(t, row, cols[k]);
            }
            if (ios > biggest[test - 1])
                biggest[test - 1] = ios;
            iops += num(t, row, "iops");
            rdiops += num(t, row, "read_iops");
            wriops += num(t, row, "write_iops");
            mibps += num(t, row, "mibps");
            if (num(t, row, "max_lat_ms") > maxlat)
                maxlat = num(t, row, "max_lat_ms");
            ios_from_rates[test - 1] += num(t, row, "iops") * num(t, row, "duration_s");
            reported++;
            continue;
        }
        /* ALL: the sum of the node rows since the previous ALL row */
        for (size_t k = 0; k < NC; k++)
            assert_int_equal(count(t, row, cols[k]), node[k]);
        assert_close(num(t, row, "iops"), iops, 0.0005 * (reported + 1) + 1e-9);
        assert_close(num(t, row, "read_iops"), rdiops, 0.0005 * (reported + 1) + 1e-9);
        assert_close(num(t, row, "write_iops"), wriops, 0.0005 * (reported + 1) + 1e-9);
        assert_close(num(t, row, "mibps"), mibps, 0.0005 * (reported + 1) + 1e-9);
        assert_close(num(t, row, "max_lat_ms"), maxlat, 0); /* max is exact */
        assert_int_equal(count(t, row, "reported"), reported);
        assert_true(num(t, row, "p99_lat_ms") <= num(t, row, "max_lat_ms"));
        memset(node, 0, sizeof(node));
        iops = rdiops = wriops = mibps = maxlat = 0;
        reported = 0;
    }
    assert_int_equal(reported, 0); /* every node row is followed by its ALL row */

    for (unsigned i = 0; i < NTESTS; i++) {
        size_t all = 1 + i * ROWS_PER_TEST;
        uint64_t total_ios = count(c, all, "read_ios") + count(c, all, "write_ios");
        assert_string_equal(cell(c, all, "row_type"), "ALL");
        for (size_t k = 0; k < NC; k++) {
            uint64_t total = count(c, all, cols[k]);
            assert_true(test_sum[i][k] <= total);
            if (!g_sim[i]->interrupted)
                assert_int_equal(test_sum[i][k], total); /* complete: exact */
        }
        /* within one interval: what is missing is at most one node interval */
        assert_true(total_ios - (test_sum[i][0] + test_sum[i][1]) <= biggest[i]);
        assert_close(ios_from_rates[i], (double)(test_sum[i][0] + test_sum[i][1]), 0.01);
        if (g_sim[i]->interrupted)
            assert_true(test_sum[i][0] + test_sum[i][1] < total_ios);
    }
}

/* ---- failures ---------------------------------------------------------------- */

static void test_registry(void **state)
{
    (void)state;
    assert_ptr_equal(mgr_sink_for_option("--csv"), &mgr_sink_csv);
    assert_ptr_equal(mgr_sink_for_option("--timeseries"), &mgr_sink_timeseries);
    assert_string_equal(mgr_sink_csv.name, "csv");
    assert_string_equal(mgr_sink_timeseries.name, "timeseries");
    assert_null(mgr_sink_for_option("--nope"));
}

static void test_unwritable_path(void **state)
{
    const struct mgr_sink_ops *ops[] = {&mgr_sink_csv, &mgr_sink_timeseries};
    char path[PATH_MAX];

    (void)state;
    fmt(path, sizeof(path), "%s/no such dir/out,1.csv", g_dir);
    for (size_t i = 0; i < 2; i++) {
        struct iof_diag d = {{0}};
        struct mgr_sink *s = NULL;
        assert_true(mgr_sink_open(ops[i], path, 0, &s, &d) < 0);
        assert_null(s);
        assert_non_null(strstr(d.msg, path));
        assert_non_null(strstr(d.msg, "No such file"));
        /* a directory */
        assert_true(mgr_sink_open(ops[i], g_dir, 0, &s, &d) < 0);
        assert_non_null(strstr(d.msg, g_dir));
    }
}

/* A full disk: the error is remembered and mgr_sink_close() returns it. */
static void test_write_error_at_close(void **state)
{
    const struct mgr_sink_ops *ops[] = {&mgr_sink_csv, &mgr_sink_timeseries};

    (void)state;
    if (access("/dev/full", W_OK) != 0) {
        skip(); /* no /dev/full in this container: nothing to fill */
        return;
    }
    for (size_t i = 0; i < 2; i++) {
        struct iof_diag d = {{0}};
        struct mgr_sink *s = NULL;
        struct mgr_run_info ri = {0};
        assert_int_equal(mgr_sink_open(ops[i], "/dev/full", 0, &s, &d), 0);
        s->ops->run_begin(s, &ri);
        sim_feed(g_sim[0], &s, 1);
        s->ops->run_end(s, 0);
        assert_int_equal(mgr_sink_close(s), -ENOSPC);
    }
}

/* Rows of a test that never got its test_end are still written, grouped. */
static void test_csv_unfinished_test(void **state)
{
    const struct sim *s = g_sim[1];
    struct mgr_sink *sink = NULL;
    struct iof_diag d = {{0}};
    struct rowref want[ROWS_PER_TEST];
    struct table t;
    char path[PATH_MAX];

    (void)state;
    fmt(path, sizeof(path), "%s/unfinished.csv", g_dir);
    assert_int_equal(mgr_sink_open(&mgr_sink_csv, path, 0, &sink, &d), 0);
    sink->ops->test_begin(sink, &s->ti);
    for (size_t i = 0; i < s->narrival; i++) {
        struct mgr_row row = sim_row(s, &s->arrival[i]);
        struct mgr_metrics m;
        row.m = metrics_of(row.stats, row.ns, &m);
        sink->ops->row(sink, &s->ti, &row);
    }
    assert_int_equal(mgr_sink_close(sink), 0);
    read_file(path, CSV_HEADER, &t);
    expected_order(s, want);
    assert_int_equal(t.n, ROWS_PER_TEST); /* header + all but ALL */
    for (size_t j = 1; j < ROWS_PER_TEST; j++) {
        assert_string_equal(cell(&t, j, "node"), node_names[want[j].n]);
        check_row_truth(&t, j, sim_stats(s, &want[j]), s->ns);
    }
    table_free(&t);
    unlink(path);
}

/* A test no node delivered a result for (interrupted in its ramp-up): one ALL
 * row with zero counts and empty fields for what is unknown. */
static void test_csv_test_without_results(void **state)
{
    const struct sim *s = g_sim[1];
    struct mgr_sink *sink = NULL;
    struct iof_diag d = {{0}};
    struct iof_stats *zero = calloc(1, sizeof(*zero));
    struct table t;
    char path[PATH_MAX];

    (void)state;
    assert_non_null(zero);
    iof_stats_reset(zero);
    fmt(path, sizeof(path), "%s/noresult.csv", g_dir);
    assert_int_equal(mgr_sink_open(&mgr_sink_csv, path, 0, &sink, &d), 0);
    sink->ops->test_begin(sink, &s->ti);
    {
        struct mgr_row all = {
            .type = MGR_ROW_ALL, .stats = zero, .ns = 31000000, .queue_depth = QD};
        struct mgr_test_end te = {.test = &s->ti, .all = &all, .interrupted = true};
        struct mgr_metrics m;
        all.m = metrics_of(all.stats, all.ns, &m);
        sink->ops->test_end(sink, &te);
    }
    assert_int_equal(mgr_sink_close(sink), 0);
    read_file(path, CSV_HEADER, &t);
    assert_int_equal(t.n, 2);
    assert_string_equal(cell(&t, 1, "row_type"), "ALL");
    assert_string_equal(cell(&t, 1, "duration_s"), "0.031000");
    assert_string_equal(cell(&t, 1, "iops"), "0.000");
    assert_int_equal(count(&t, 1, "read_ios"), 0);
    assert_int_equal(count(&t, 1, "nodes"), 0);
    assert_true(empty(&t, 1, "avg_lat_ms"));
    assert_true(empty(&t, 1, "p99_lat_ms"));
    assert_true(empty(&t, 1, "max_lat_ms"));
    assert_true(empty(&t, 1, "cpu_pct"));
    assert_true(empty(&t, 1, "cpu_effectiveness"));
    assert_true(empty(&t, 1, "start_skew_ms"));
    table_free(&t);
    free(zero);
    unlink(path);
}

/* The ALL row's CPU is the aggregate's (the ALL row's mgr_row.cpu, one rule
 * for every file), never a mean restated from the NODE rows it saw; none
 * when the aggregate has none. */
static void test_csv_all_cpu_from_aggregate(void **state)
{
    const struct sim *s = g_sim[0];
    const struct proto_cpu node_cpu = {
        .valid = true, .busy_pct = 40, .user_pct = 10, .sys_pct = 30, .agent_pct = 5};
    const struct proto_cpu all_cpu = {.valid = true,
                                      .busy_pct = 33.25,
                                      .user_pct = 11.5,
                                      .sys_pct = 21.75,
                                      .agent_pct = 2.5,
                                      .node_valid = true,
                                      .dpc_pct = 2.125,
                                      .irq_pct = 0.5,
                                      .intr_per_s = 2500,
                                      .packets_per_s = 64,
                                      .packet_errors = 1,
                                      .retrans_per_s = 0.25};
    struct iof_diag d = {{0}};
    char path[PATH_MAX];

    (void)state;
    fmt(path, sizeof(path), "%s/allcpu.csv", g_dir);
    for (int with = 1; with >= 0; with--) {
        struct mgr_sink *sink = NULL;
        struct table t;
        struct mgr_row node = {.type = MGR_ROW_NODE,
                               .node = "n",
                               .stats = &s->node[0],
                               .ns = s->ns,
                               .nodes = 1,
                               .cpu = &node_cpu,
                               .cpu_busy_pct = node_cpu.busy_pct};
        struct mgr_row all = {.type = MGR_ROW_ALL,
                              .stats = &s->node[0],
                              .ns = s->ns,
                              .nodes = 1,
                              .cpu = with ? &all_cpu : NULL,
                              .cpu_busy_pct = with ? all_cpu.busy_pct : 0};
        struct mgr_test_end te = {.test = &s->ti, .all = &all, .nodes = 1};
        struct mgr_metrics m;

        node.m = metrics_of(node.stats, node.ns, &m);
        all.m = node.m;
        assert_int_equal(mgr_sink_open(&mgr_sink_csv, path, IOF_OUTFILE_FORCE, &sink, &d), 0);
        sink->ops->test_begin(sink, &s->ti);
        sink->ops->row(sink, &s->ti, &node);
        sink->ops->test_end(sink, &te);
        assert_int_equal(mgr_sink_close(sink), 0);
        read_file(path, CSV_HEADER, &t);
        assert_int_equal(t.n, 3);
        assert_string_equal(cell(&t, 1, "row_type"), "ALL");
        if (with) {
            assert_printed(&t, 1, "cpu_pct", 33.25, 3);
            assert_printed(&t, 1, "user_pct", 11.5, 3);
            assert_printed(&t, 1, "sys_pct", 21.75, 3);
            assert_printed(&t, 1, "agent_cpu_pct", 2.5, 3);
            assert_node_cols(&t, 1, &all_cpu);
        } else {
            assert_true(empty(&t, 1, "cpu_pct") && empty(&t, 1, "user_pct"));
            assert_true(empty(&t, 1, "agent_cpu_pct") && empty(&t, 1, "dpc_pct"));
        }
        assert_printed(&t, 2, "user_pct", 10, 3); /* the NODE row keeps its own */
        table_free(&t);
    }
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_strict),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_csv_header_and_shape),
        cmocka_unit_test(test_csv_order_and_names),
        cmocka_unit_test(test_csv_figures_match_truth),
        cmocka_unit_test(test_csv_row_consistency),
        cmocka_unit_test(test_csv_sums),
        cmocka_unit_test(test_csv_empty_fields_and_extras),
        cmocka_unit_test(test_csv_all_percentiles_merged),
        cmocka_unit_test(test_ts_rows_match_truth),
        cmocka_unit_test(test_ts_sums),
        cmocka_unit_test(test_unwritable_path),
        cmocka_unit_test(test_write_error_at_close),
        cmocka_unit_test(test_csv_unfinished_test),
        cmocka_unit_test(test_csv_test_without_results),
        cmocka_unit_test(test_csv_all_cpu_from_aggregate),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
