/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_out_iometer.c - manager/sinks/iometer_csv.c, the --iometer-csv
 * writer: Iometer 1.1.0's results.csv layout.
 *
 * Each test drives the sink through its ops as manager/run.c does (open,
 * run_begin, test_begin, rows, test_end, run_end, close) with synthetic
 * stats, then reads the file back with a strict reader: CRLF lines, the
 * comment-line structure, the exact results header, 80 fields per data row,
 * sums across levels, ms units, latency bins and row order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/hist.h"
#include "common/stats.h"
#include "manager/aggregate.h"
#include "manager/sink.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Iometer 1.1.0, src/ManagerList.cpp, ManagerList::SaveResults (repository
 * oberstet/iometer at e6739d8d, src/IOVersion.h "1.1.0"; the same in
 * iometer-org/iometer src/ManagerList.cpp at 7243b4da). Hard-coded here on
 * purpose: the writer must not be its own reference. */
static const char expected_header[] =
    "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read "
    "IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read "
    "MBps (Decimal),Write MBps (Decimal),Transactions per Second,Connections per Second,Average "
    "Response Time,Average Read Response Time,Average Write Response Time,Average Transaction "
    "Time,Average Connection Time,Maximum Response Time,Maximum Read Response Time,Maximum Write "
    "Response Time,Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write "
    "Errors,Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per "
    "Connection,Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction "
    "Time,Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response "
    "Time,Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,Starting "
    "Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,% Privileged Time,% DPC "
    "Time,% Interrupt Time,Processor Speed,Interrupts per Second,CPU Effectiveness,Packets/"
    "Second,Packet Errors,Segments Retransmitted/Second,0 to 50 uS,50 to 100 uS,100 to 200 "
    "uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to "
    "30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 "
    "s,4.7 to 5 s,5 to 10 s, >= 10 s";

#define NCOLS 80
#define NPROC 59 /* fields of a PROCESSOR row (Manager::SaveResults) */
#define NBINS 21
#define BIN0 59 /* 0-based column of "0 to 50 uS" */

/* 0-based columns used below. */
enum {
    C_TYPE = 0,
    C_NAME = 1,
    C_SPEC = 2,
    C_MANAGERS = 3,
    C_WORKERS = 4,
    C_DISKS = 5,
    C_IOPS = 6,
    C_RIOPS = 7,
    C_WIOPS = 8,
    C_MIBPS = 9,
    C_MBPS = 12,
    C_TPS = 15,
    C_AVG = 17,
    C_AVG_R = 18,
    C_AVG_W = 19,
    C_MAX = 22,
    C_MAX_R = 23,
    C_MAX_W = 24,
    C_ERRORS = 27,
    C_BYTES_R = 30,
    C_BYTES_W = 31,
    C_RIOS = 32,
    C_WIOS = 33,
    C_TPC = 35,
    C_RAW_R = 36,
    C_RAW_W = 37,
    C_RAW_RUN = 44,
    C_START = 45,
    C_SIZE = 46,
    C_QD = 47,
    C_CPU = 48,
    C_USER = 49,
    C_PRIV = 50,
    C_DPC = 51,
    C_SPEED = 53,
    C_IRQS = 54,
    C_EFF = 55,
    C_PKTS = 56,
    C_RETRANS = 58,
};

#define TICKS_PER_S 10000000ull /* Windows Iometer's 10 MHz timer */
#define NS_PER_TICK 100

/* ---- fixtures -------------------------------------------------------------------------- */

static struct iof_line lines0[] = {
    {.size = 4096, .share = 60, .read_pct = 70, .random_pct = 100, .align = 0, .burst = 1},
    {.size = 65536,
     .share = 40,
     .read_pct = 100,
     .random_pct = 0,
     .align = 4096,
     .delay_ns = 2000000,
     .burst = 4},
};
static struct iof_spec specs[] = {
    {.name = "4k, mixed", .lines = lines0, .nlines = 2},
};
static struct iof_plan plan = {.name = "unit plan", .specs = specs, .nspecs = 1};
static struct iof_test test0 = {.index = 0, .spec_index = 0};
static struct mgr_test_info tinfo = {
    .test = &test0, .ntests = 1, .spec = "4k, mixed", .cycle = "", .start_wall_ns = 1};

static char *tmp_path(void)
{
    const char *dir = getenv("IOF_TEST_TMPDIR");
    char *p = test_malloc(4096);
    int fd;
    if (!dir)
        dir = "/tmp";
    (void)mkdir(dir, 0755);
    snprintf(p, 4096, "%s/iomXXXXXX", dir);
    fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    return p;
}

static struct iof_stats *stats_new(void)
{
    struct iof_stats *s = test_malloc(sizeof(*s));
    iof_stats_reset(s);
    return s;
}

static void add_io(struct iof_stats *s, bool rd, uint64_t lat_ns, uint64_t bytes)
{
    struct iof_dirstats *d = rd ? &s->rd : &s->wr;
    d->ios++;
    d->bytes += bytes;
    iof_hist_record(&d->lat, lat_ns);
}

static struct mgr_sink *sink_open(const char *path)
{
    const struct mgr_sink_ops *ops = mgr_sink_for_option("--iometer-csv");
    struct mgr_sink *s = NULL;
    struct iof_diag d = {{0}};
    struct mgr_run_info ri = {.plan = &plan, .plan_text = "{}", .start_wall_ns = 1};

    assert_non_null(ops);
    assert_ptr_equal(ops, &mgr_sink_iometer);
    assert_int_equal(mgr_sink_open(ops, path, IOF_OUTFILE_FORCE, &s, &d), 0);
    s->ops->run_begin(s, &ri);
    return s;
}

/* ---- reading the file back ------------------------------------------------------------- */

struct file {
    char **lines;
    size_t n;
};

/* Splits on CRLF; every line must end with CRLF and hold no other CR/LF. */
static struct file read_file_crlf(const char *path)
{
    struct file f = {0};
    FILE *fp = fopen(path, "rb");
    char *buf, *p;
    long len;

    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    len = ftell(fp);
    rewind(fp);
    buf = test_malloc((size_t)len + 1);
    assert_int_equal(fread(buf, 1, (size_t)len, fp), (size_t)len);
    buf[len] = 0;
    fclose(fp);
    f.lines = test_malloc(sizeof(char *) * ((size_t)len + 1));
    for (p = buf; *p;) {
        char *e = strstr(p, "\r\n");
        assert_non_null(e); /* the last line is terminated too */
        *e = 0;
        assert_null(strchr(p, '\n'));
        assert_null(strchr(p, '\r'));
        f.lines[f.n] = test_malloc(strlen(p) + 1);
        strcpy(f.lines[f.n++], p);
        p = e + 2;
    }
    test_free(buf);
    return f;
}

static void file_free(struct file *f)
{
    for (size_t i = 0; i < f->n; i++)
        test_free(f->lines[i]);
    test_free(f->lines);
}

struct row {
    char *f[NCOLS + 1];
    char *mem;
};

/* Splits a data row on commas: exactly NCOLS fields (NPROC for a
 * PROCESSOR row). */
static void split_row(const char *line, struct row *r)
{
    size_t n = 0, want = strncmp(line, "PROCESSOR,", 10) ? NCOLS : NPROC;
    char *p;
    r->mem = test_malloc(strlen(line) + 1);
    strcpy(r->mem, line);
    p = r->mem;
    for (;;) {
        char *c = strchr(p, ',');
        assert_true(n < NCOLS);
        r->f[n++] = p;
        if (!c)
            break;
        *c = 0;
        p = c + 1;
    }
    if (n != want)
        fail_msg("row has %zu fields, want %zu: %s", n, want, line);
}

static uint64_t u64(const char *s)
{
    char *end;
    uint64_t v;
    assert_true(*s);
    errno = 0;
    v = strtoull(s, &end, 10);
    assert_int_equal(errno, 0);
    assert_true(*end == 0);
    return v;
}

static double dbl(const char *s)
{
    char *end;
    double v;
    assert_true(*s);
    v = strtod(s, &end);
    assert_true(*end == 0);
    /* Iometer's stream: fixed, 6 decimals */
    assert_non_null(strchr(s, '.'));
    assert_int_equal(strlen(strchr(s, '.') + 1), 6);
    return v;
}

static uint64_t row_ios(const struct row *r)
{
    return u64(r->f[C_RIOS]) + u64(r->f[C_WIOS]);
}

static uint64_t row_bins_sum(const struct row *r)
{
    uint64_t sum = 0;
    for (int k = 0; k < NBINS; k++)
        sum += u64(r->f[BIN0 + k]);
    return sum;
}

/* Index of the first line equal to s at or after from; fails when missing. */
static size_t find_line(const struct file *f, size_t from, const char *s)
{
    for (size_t i = from; i < f->n; i++)
        if (!strcmp(f->lines[i], s))
            return i;
    fail_msg("line '%s' not found", s);
    return 0;
}

static bool is_timestamp(const char *s)
{
    int y, mo, d, h, mi, se, ms, n = 0;
    return sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d:%3d%n", &y, &mo, &d, &h, &mi, &se, &ms, &n) == 7 &&
           n == 23 && strlen(s) == 23;
}

/* ---- a synthetic 2-node run ------------------------------------------------------------ */

/* Node "alpha": 2 workers x 2 targets; node "beta": 1 worker x 1 target.
 * Every target gets a different mix of reads and writes. */
struct run {
    struct iof_stats *t[5], *w[3], *n[2], *all;
    struct proto_cpu cpu[2];
    /* Each CPU of a node (protocol 1.7), ncpus[i] of them; none: unknown */
    const struct proto_cpu_one *cpus[2];
    size_t ncpus[2];
    /* The ALL row's CPU when all_cpu_set; else the aggregate's of cpu[] */
    bool all_cpu_set;
    struct proto_cpu all_cpu;
};

static void build_run(struct run *r)
{
    static const unsigned nreads[5] = {10, 0, 7, 3, 20}, nwrites[5] = {5, 4, 0, 9, 1};
    memset(r, 0, sizeof(*r));
    r->all = stats_new();
    for (int i = 0; i < 2; i++)
        r->n[i] = stats_new();
    for (int i = 0; i < 3; i++)
        r->w[i] = stats_new();
    for (int i = 0; i < 5; i++) {
        int wk = i < 2 ? 0 : i < 4 ? 1 : 2, node = i < 4 ? 0 : 1;
        r->t[i] = stats_new();
        for (unsigned k = 0; k < nreads[i]; k++)
            add_io(r->t[i], true, 30000 + 1000 * k + 77777 * (uint64_t)i, 4096);
        for (unsigned k = 0; k < nwrites[i]; k++)
            add_io(r->t[i], false, 900000 + 50000 * k * (uint64_t)(i + 1), 8192);
        iof_stats_merge(r->w[wk], r->t[i]);
        iof_stats_merge(r->n[node], r->t[i]);
        iof_stats_merge(r->all, r->t[i]);
    }
    r->t[4]->rd.errors = 2;
    r->w[2]->rd.errors = 2;
    r->n[1]->rd.errors = 2;
    r->all->rd.errors = 2;
    r->cpu[0] = (struct proto_cpu){.valid = true, .busy_pct = 40, .user_pct = 10, .sys_pct = 30};
    r->cpu[1] = (struct proto_cpu){.valid = true, .busy_pct = 20, .user_pct = 5, .sys_pct = 15};
}

static void free_run(struct run *r)
{
    for (int i = 0; i < 5; i++)
        test_free(r->t[i]);
    for (int i = 0; i < 3; i++)
        test_free(r->w[i]);
    for (int i = 0; i < 2; i++)
        test_free(r->n[i]);
    test_free(r->all);
}

#define NS (2 * 1000000000ull) /* a 2 s measured window */

/* A row's or interval's metrics, computed once before every sink gets it, as
 * manager/aggregate.c does for a run. */
static const struct mgr_metrics *metrics_of(const struct iof_stats *s, uint64_t ns,
                                            struct mgr_metrics *m)
{
    mgr_metrics_compute(s, ns, m);
    return m;
}

/* Hands row to the sink with its metrics, as manager/aggregate.c does. */
static void emit_row(struct mgr_sink *s, struct mgr_row *row)
{
    struct mgr_metrics m;

    row->m = metrics_of(row->stats, row->ns, &m);
    s->ops->row(s, &tinfo, row);
}

static void emit_target(struct mgr_sink *s, const char *node, const char *worker, const char *path,
                        const struct iof_stats *st, uint64_t offset)
{
    struct mgr_row row = {.type = MGR_ROW_TARGET,
                          .node = node,
                          .worker = worker,
                          .target = path,
                          .stats = st,
                          .ns = NS,
                          .queue_depth = 8,
                          .nodes = 1,
                          .workers = 1,
                          .targets = 1,
                          .range_offset = offset,
                          .range_size = 1 << 20};
    emit_row(s, &row);
}

static void emit_worker(struct mgr_sink *s, const char *node, const char *worker,
                        const struct iof_stats *st, uint32_t ntargets)
{
    struct mgr_row row = {.type = MGR_ROW_WORKER,
                          .node = node,
                          .worker = worker,
                          .stats = st,
                          .ns = NS,
                          .queue_depth = 8,
                          .nodes = 1,
                          .workers = 1,
                          .targets = ntargets};
    emit_row(s, &row);
}

static void emit_node_cpus(struct mgr_sink *s, const char *node, const struct iof_stats *st,
                           uint32_t nworkers, uint32_t ntargets, const struct proto_cpu *cpu,
                           const struct proto_cpu_one *cpus, size_t ncpus)
{
    struct mgr_row row = {.type = MGR_ROW_NODE,
                          .node = node,
                          .stats = st,
                          .ns = NS,
                          .nodes = 1,
                          .workers = nworkers,
                          .targets = ntargets,
                          .cpu = cpu,
                          .cpu_busy_pct = cpu ? cpu->busy_pct : 0,
                          .cpus = cpus,
                          .ncpus = ncpus};
    emit_row(s, &row);
}

static void emit_node(struct mgr_sink *s, const char *node, const struct iof_stats *st,
                      uint32_t nworkers, uint32_t ntargets, const struct proto_cpu *cpu)
{
    emit_node_cpus(s, node, st, nworkers, ntargets, cpu, NULL, 0);
}

/* The ALL row's CPU as manager/aggregate.c hands it to every sink: its one
 * rule over the nodes' CPU (those measured). */
static struct proto_cpu all_cpu_of(const struct proto_cpu *cpu, size_t n)
{
    struct mgr_agg_cpu a = {0};
    for (size_t i = 0; i < n; i++)
        if (cpu[i].valid)
            mgr_agg_cpu_add(&a, &cpu[i]);
    return mgr_agg_cpu_mean(&a);
}

static void emit_end(struct mgr_sink *s, const struct iof_stats *all, const struct proto_cpu *cpu,
                     int exit_code)
{
    struct mgr_row arow = {.type = MGR_ROW_ALL,
                           .stats = all,
                           .ns = NS,
                           .queue_depth = 8,
                           .nodes = 2,
                           .workers = 3,
                           .targets = 5,
                           .cpu = cpu && cpu->valid ? cpu : NULL,
                           .cpu_busy_pct = cpu && cpu->valid ? cpu->busy_pct : 0};
    struct mgr_test_end te = {.test = &tinfo, .all = &arow, .nodes = 2};
    struct mgr_metrics m;
    arow.m = metrics_of(arow.stats, arow.ns, &m);
    s->ops->test_end(s, &te);
    s->ops->run_end(s, exit_code);
}

/* Writes the run; interleaved: beta's rows arrive between alpha's. */
static char *write_run(struct run *r, bool interleaved, int exit_code)
{
    char *path = tmp_path();
    struct mgr_sink *s = sink_open(path);

    s->ops->test_begin(s, &tinfo);
    emit_target(s, "alpha", "w0", "/dev/sdb", r->t[0], 0);
    emit_target(s, "alpha", "w0", "/dev/sdc", r->t[1], 0);
    emit_worker(s, "alpha", "w0", r->w[0], 2);
    if (interleaved) {
        emit_target(s, "beta", "w0", "data,1.dat", r->t[4], 512 * 100);
        emit_worker(s, "beta", "w0", r->w[2], 1);
    }
    emit_target(s, "alpha", "w1", "/dev/sdd", r->t[2], 0);
    emit_target(s, "alpha", "w1", "/dev/sde", r->t[3], 0);
    emit_worker(s, "alpha", "w1", r->w[1], 2);
    emit_node_cpus(s, "alpha", r->n[0], 2, 4, &r->cpu[0], r->cpus[0], r->ncpus[0]);
    if (!interleaved) {
        emit_target(s, "beta", "w0", "data,1.dat", r->t[4], 512 * 100);
        emit_worker(s, "beta", "w0", r->w[2], 1);
    }
    emit_node_cpus(s, "beta", r->n[1], 1, 1, &r->cpu[1], r->cpus[1], r->ncpus[1]);
    {
        struct proto_cpu all = r->all_cpu_set ? r->all_cpu : all_cpu_of(r->cpu, 2);
        emit_end(s, r->all, &all, exit_code);
    }
    assert_int_equal(mgr_sink_close(s), 0);
    return path;
}

/* The data rows of the first results section: the PROCESSOR rows when
 * processor, else the others. */
static size_t select_rows(const struct file *f, struct row *rows, size_t cap, bool processor)
{
    size_t h = find_line(f, 0, "'Results"), n = 0;
    assert_string_equal(f->lines[h + 1], expected_header);
    for (size_t i = h + 2; i < f->n && f->lines[i][0] != '\''; i++) {
        if (!strncmp(f->lines[i], "PROCESSOR,", 10) != processor)
            continue;
        assert_true(n < cap);
        split_row(f->lines[i], &rows[n++]);
    }
    return n;
}

static size_t data_rows(const struct file *f, struct row *rows, size_t cap)
{
    return select_rows(f, rows, cap, false);
}

static void free_rows(struct row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        test_free(rows[i].mem);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_header_exact(void **state)
{
    struct run r;
    char *path;
    struct file f;
    size_t h;
    unsigned commas = 0;
    (void)state;

    for (const char *p = expected_header; *p; p++)
        commas += *p == ',';
    assert_int_equal(commas + 1, NCOLS);

    build_run(&r);
    path = write_run(&r, false, 0);
    f = read_file_crlf(path); /* also checks every line ends CRLF */
    h = find_line(&f, 0, "'Results");
    assert_string_equal(f.lines[h + 1], expected_header);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

/* The comment lines, in Iometer's order. */
static void test_file_structure(void **state)
{
    struct run r;
    char *path;
    struct file f;
    size_t i = 0;
    (void)state;

    build_run(&r);
    path = write_run(&r, false, 0);
    f = read_file_crlf(path);
    assert_string_equal(f.lines[i++], "'Test Type,Test Description");
    assert_string_equal(f.lines[i++], "0,unit plan");
    assert_string_equal(f.lines[i++], "'Version");
    assert_string_equal(f.lines[i++], "1.1.0");
    assert_string_equal(f.lines[i++], "'Time Stamp");
    assert_true(is_timestamp(f.lines[i++]));
    assert_string_equal(f.lines[i++], "'Access specifications");
    assert_string_equal(f.lines[i++], "'Access specification name,default assignment");
    /* the comma became a space; default assignment 0 (AssignNone) */
    assert_string_equal(f.lines[i++], "4k  mixed,0");
    assert_string_equal(f.lines[i++], "'size,% of size,% reads,% random,delay,burst,align,reply");
    /* align 0 ("the transfer size") is written as the size; delay in ms;
     * a comma after the reply, as AccessSpecList::SaveResults writes */
    assert_string_equal(f.lines[i++], "4096,60,70,100,0,1,4096,0,");
    assert_string_equal(f.lines[i++], "65536,40,100,0,2,4,4096,0,");
    assert_string_equal(f.lines[i++], "'End access specifications");
    assert_string_equal(f.lines[i++], "'Results");
    assert_string_equal(f.lines[i++], expected_header);
    i += 1 + 2 + 2 + 5 + 3; /* ALL, 2 MANAGER, 2 PROCESSOR, 5 DISK, 3 WORKER */
    assert_string_equal(f.lines[i++], "'Time Stamp");
    assert_true(is_timestamp(f.lines[i++]));
    assert_string_equal(f.lines[i++], "'End Test");
    assert_int_equal(i, f.n);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

/* Row order whatever the arrival order; 80 fields; sums across levels. */
static void check_run_rows(bool interleaved)
{
    static const char *const want[][2] = {
        {"ALL", "All"},       {"MANAGER", "alpha"},   {"WORKER", "Worker 1"}, {"DISK", "/dev/sdb"},
        {"DISK", "/dev/sdc"}, {"WORKER", "Worker 2"}, {"DISK", "/dev/sdd"},   {"DISK", "/dev/sde"},
        {"MANAGER", "beta"},  {"WORKER", "Worker 1"}, {"DISK", "data 1.dat"},
    };
    struct run r;
    struct row rows[16];
    char *path;
    struct file f;
    size_t n;
    uint64_t all = 0, mgr = 0, wkr = 0, dsk = 0;
    double all_iops = 0, mgr_iops = 0;

    build_run(&r);
    path = write_run(&r, interleaved, 0);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 16);
    assert_int_equal(n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(rows[i].f[C_TYPE], want[i][0]);
        assert_string_equal(rows[i].f[C_NAME], want[i][1]);
        /* bins of every row sum to its I/Os (reads + writes) */
        assert_int_equal(row_bins_sum(&rows[i]), row_ios(&rows[i]));
        if (!strcmp(want[i][0], "ALL")) {
            all += row_ios(&rows[i]);
            all_iops += dbl(rows[i].f[C_IOPS]);
        } else if (!strcmp(want[i][0], "MANAGER")) {
            mgr += row_ios(&rows[i]);
            mgr_iops += dbl(rows[i].f[C_IOPS]);
        } else if (!strcmp(want[i][0], "WORKER"))
            wkr += row_ios(&rows[i]);
        else
            dsk += row_ios(&rows[i]);
    }
    assert_int_equal(all, r.all->rd.ios + r.all->wr.ios);
    assert_int_equal(all, mgr);
    assert_int_equal(all, wkr);
    assert_int_equal(all, dsk);
    /* every node ok: ALL IOps = the sum of the MANAGER IOps, and no status line */
    assert_float_equal(all_iops, mgr_iops, 1e-5);
    for (size_t i = 0; i < f.n; i++)
        assert_null(strstr(f.lines[i], "'Status"));
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

static void test_rows_order_and_sums(void **state)
{
    (void)state;
    check_run_rows(false);
}

static void test_rows_order_interleaved(void **state)
{
    (void)state;
    check_run_rows(true);
}

/* What each kind of row fills and leaves empty, as Iometer does. */
static void test_row_columns(void **state)
{
    struct run r;
    struct row rows[16];
    char *path;
    struct file f;
    size_t n;
    (void)state;

    build_run(&r);
    path = write_run(&r, false, 0);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 16);

    /* ALL: counts, no raw block, no Processor Speed, CPU = mean of nodes */
    assert_string_equal(rows[0].f[C_SPEC], "4k  mixed");
    assert_int_equal(u64(rows[0].f[C_MANAGERS]), 2);
    assert_int_equal(u64(rows[0].f[C_WORKERS]), 3);
    assert_int_equal(u64(rows[0].f[C_DISKS]), 5);
    assert_string_equal(rows[0].f[C_RAW_R], "");
    assert_string_equal(rows[0].f[C_RAW_RUN], "");
    assert_string_equal(rows[0].f[C_SPEED], "");
    assert_true(dbl(rows[0].f[C_CPU]) == 30.0);
    assert_true(dbl(rows[0].f[C_USER]) == 7.5);
    assert_true(dbl(rows[0].f[C_PRIV]) == 22.5);
    assert_string_equal(rows[0].f[C_DPC], "");
    assert_float_equal(dbl(rows[0].f[C_EFF]), dbl(rows[0].f[C_IOPS]) / 30.0, 1e-6);
    assert_int_equal(u64(rows[0].f[C_ERRORS]), 2);
    assert_string_equal(rows[0].f[C_TPC], "-1");
    /* targets differ in start sector: ambiguous (-1) above DISK */
    assert_string_equal(rows[0].f[C_START], "-1");
    assert_int_equal(u64(rows[0].f[C_SIZE]), 2048);
    assert_int_equal(u64(rows[0].f[C_QD]), 8);

    /* MANAGER alpha */
    assert_string_equal(rows[1].f[C_MANAGERS], "");
    assert_int_equal(u64(rows[1].f[C_WORKERS]), 2);
    assert_int_equal(u64(rows[1].f[C_DISKS]), 4);
    assert_true(dbl(rows[1].f[C_CPU]) == 40.0);
    /* raw times in Windows Iometer's 10 MHz ticks, Processor Speed their rate */
    assert_true(dbl(rows[1].f[C_SPEED]) == (double)TICKS_PER_S);
    assert_int_equal(u64(rows[1].f[C_START]), 0);
    assert_int_equal(u64(rows[1].f[C_RAW_RUN]), NS / NS_PER_TICK);
    assert_int_equal(u64(rows[1].f[C_RAW_R]), r.n[0]->rd.lat.sum_ns / NS_PER_TICK);
    assert_float_equal((double)u64(rows[1].f[C_RAW_RUN]) / dbl(rows[1].f[C_SPEED]), 2.0, 1e-12);

    /* WORKER: # Disks only, no CPU */
    assert_string_equal(rows[2].f[C_MANAGERS], "");
    assert_string_equal(rows[2].f[C_WORKERS], "");
    assert_int_equal(u64(rows[2].f[C_DISKS]), 2);
    assert_string_equal(rows[2].f[C_CPU], "");
    assert_string_equal(rows[2].f[C_EFF], "");
    assert_string_equal(rows[2].f[C_SPEC], "4k  mixed");

    /* DISK: no spec, no counts, its own range in sectors */
    assert_string_equal(rows[10].f[C_SPEC], "");
    assert_string_equal(rows[10].f[C_DISKS], "");
    assert_int_equal(u64(rows[10].f[C_START]), 100);
    assert_int_equal(u64(rows[10].f[C_SIZE]), 2048);
    assert_int_equal(u64(rows[10].f[C_QD]), 8);
    assert_int_equal(u64(rows[10].f[C_ERRORS]), 2);
    assert_int_equal(u64(rows[10].f[C_BYTES_R]), 20 * 4096);
    assert_int_equal(u64(rows[10].f[C_BYTES_W]), 1 * 8192);

    /* rates from counts and the 2 s window */
    for (size_t i = 0; i < n; i++) {
        double ios = (double)row_ios(&rows[i]);
        double bytes = (double)(u64(rows[i].f[C_BYTES_R]) + u64(rows[i].f[C_BYTES_W]));
        assert_float_equal(dbl(rows[i].f[C_IOPS]), ios / 2.0, 1e-6);
        assert_float_equal(dbl(rows[i].f[C_IOPS]),
                           dbl(rows[i].f[C_RIOPS]) + dbl(rows[i].f[C_WIOPS]), 2e-6);
        assert_float_equal(dbl(rows[i].f[C_TPS]), ios / 2.0, 1e-6);
        assert_float_equal(dbl(rows[i].f[C_MIBPS]), bytes / 1048576.0 / 2.0, 1e-6);
        assert_float_equal(dbl(rows[i].f[C_MBPS]), bytes / 1e6 / 2.0, 1e-6);
    }
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

/* One node, one worker, one target whose I/Os are given; returns the file. */
static char *write_single(const struct iof_stats *st, const struct proto_cpu *cpu)
{
    char *path = tmp_path();
    struct mgr_sink *s = sink_open(path);
    struct mgr_row arow = {.type = MGR_ROW_ALL,
                           .stats = st,
                           .ns = NS,
                           .queue_depth = 1,
                           .nodes = 1,
                           .workers = 1,
                           .targets = 1};
    struct mgr_test_end te = {.test = &tinfo, .all = &arow, .nodes = 1};
    struct mgr_metrics m;
    struct proto_cpu all = all_cpu_of(cpu ? cpu : &(struct proto_cpu){0}, 1);

    arow.cpu = all.valid ? &all : NULL;
    arow.cpu_busy_pct = all.busy_pct;
    arow.m = metrics_of(arow.stats, arow.ns, &m);
    s->ops->test_begin(s, &tinfo);
    emit_target(s, "n", "w0", "t", st, 0);
    emit_worker(s, "n", "w0", st, 1);
    emit_node(s, "n", st, 1, 1, cpu);
    s->ops->test_end(s, &te);
    s->ops->run_end(s, 0);
    assert_int_equal(mgr_sink_close(s), 0);
    return path;
}

/* Times are in ms; raw times in 100 ns ticks (Processor Speed 1e7 ticks/s). */
static void test_values_in_ms(void **state)
{
    struct iof_stats *st = stats_new();
    struct row rows[4];
    struct file f;
    char *path;
    size_t n;
    (void)state;

    add_io(st, true, 2000000, 4096);  /* 2 ms */
    add_io(st, true, 4000000, 4096);  /* 4 ms */
    add_io(st, false, 500000, 4096);  /* 0.5 ms */
    add_io(st, false, 1500000, 4096); /* 1.5 ms */
    path = write_single(st, NULL);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 4);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(rows[i].f[C_AVG], "2.000000");
        assert_string_equal(rows[i].f[C_AVG_R], "3.000000");
        assert_string_equal(rows[i].f[C_AVG_W], "1.000000");
        assert_string_equal(rows[i].f[C_MAX], "4.000000");
        assert_string_equal(rows[i].f[C_MAX_R], "4.000000");
        assert_string_equal(rows[i].f[C_MAX_W], "1.500000");
        if (i == 0)
            continue;
        assert_int_equal(u64(rows[i].f[C_RAW_R]), 60000);
        assert_int_equal(u64(rows[i].f[C_RAW_W]), 20000);
    }
    /* no CPU measured: empty, never a made-up 0 */
    assert_string_equal(rows[1].f[C_CPU], "");
    assert_string_equal(rows[1].f[C_EFF], "");
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    test_free(st);
}

/* Bins of a target whose I/Os all have latency v. */
static void single_value_bins(uint64_t v, uint64_t count, uint64_t bins[NBINS])
{
    struct iof_stats *st = stats_new();
    struct row rows[4];
    struct file f;
    char *path;
    size_t n;

    for (uint64_t i = 0; i < count; i++)
        add_io(st, i % 2 == 0, v, 512);
    path = write_single(st, NULL);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 4);
    assert_int_equal(n, 4);
    for (int k = 0; k < NBINS; k++) {
        bins[k] = u64(rows[3].f[BIN0 + k]);
        for (size_t i = 0; i < 3; i++) /* every level says the same */
            assert_int_equal(u64(rows[i].f[BIN0 + k]), bins[k]);
    }
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    test_free(st);
}

/* Iometer's edges (src/IOGrunt.cpp, Grunt_Thread_Wrapper) at a 10 MHz
 * timer, as integer ns thresholds: bin k holds edge[k] <= t < edge[k+1]; R/67
 * and R/33 of a second rounded up to whole 100 ns ticks. */
static const uint64_t edges[NBINS] = {
    0,         50000,     100000,     200000,     500000,     1000000,    2000000,
    5000000,   10000000,  14925400,   20000000,   30303100,   50000000,   100000000,
    200000000, 500000000, 1000000000, 2000000000, 4000000000, 5000000000, 10000000000};

static void expect_only(const uint64_t bins[NBINS], int k, uint64_t count, uint64_t v)
{
    for (int i = 0; i < NBINS; i++)
        if (bins[i] != (i == k ? count : 0))
            fail_msg("value %" PRIu64 " ns: bin %d holds %" PRIu64 ", want %" PRIu64, v, i, bins[i],
                     i == k ? count : 0);
}

/* A value exactly on an edge lands in the bin the edge opens; one ns below
 * in the bin before. Also the last bin, which Iometer never filled. */
static void test_bin_edges(void **state)
{
    uint64_t bins[NBINS];
    (void)state;

    single_value_bins(0, 3, bins);
    expect_only(bins, 0, 3, 0);
    for (int k = 1; k < NBINS; k++) {
        single_value_bins(edges[k], 5, bins);
        expect_only(bins, k, 5, edges[k]);
        single_value_bins(edges[k] - 1, 5, bins);
        expect_only(bins, k - 1, 5, edges[k] - 1);
    }
    single_value_bins(3600ull * 1000000000ull, 2, bins); /* an hour: >= 10 s */
    expect_only(bins, NBINS - 1, 2, 0);
}

/* One I/O per bin, each well inside its bin: every bin holds exactly 1. */
static void test_bins_spread(void **state)
{
    static const uint64_t v[NBINS] = {
        25000,     75000,     150000,     300000,     700000,     1500000,    3000000,
        7000000,   12000000,  17000000,   25000000,   40000000,   70000000,   150000000,
        300000000, 700000000, 1500000000, 3000000000, 4500000000, 7000000000, 20000000000};
    struct iof_stats *st = stats_new();
    struct row rows[4];
    struct file f;
    char *path;
    size_t n;
    (void)state;

    for (int k = 0; k < NBINS; k++)
        add_io(st, k % 3 != 0, v[k], 4096);
    path = write_single(st, NULL);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 4);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < NBINS; k++)
            assert_int_equal(u64(rows[i].f[BIN0 + k]), 1);
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    test_free(st);
}

/* Many values around an edge: the straddling bucket is split, the bins
 * stay whole and sum to the I/O count, and only values within one bucket
 * (<= 1/64) of the edge can move. */
static void test_bins_straddle(void **state)
{
    struct iof_stats *st = stats_new();
    struct row rows[4];
    struct file f;
    char *path;
    size_t n;
    uint64_t below = 0, total = 0;
    (void)state;

    for (uint64_t t = 40000; t < 60000; t += 7) {
        add_io(st, t % 2, t, 4096);
        below += t < 50000;
        total++;
    }
    path = write_single(st, NULL);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 4);
    for (size_t i = 0; i < n; i++) {
        uint64_t b0 = u64(rows[i].f[BIN0]), b1 = u64(rows[i].f[BIN0 + 1]);
        assert_int_equal(b0 + b1, total);
        assert_int_equal(row_bins_sum(&rows[i]), row_ios(&rows[i]));
        /* values in [50000 - 50000/64, 50000 + 50000/64) number < 230 */
        assert_true(b0 + 230 >= below && b0 <= below + 230);
    }
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    test_free(st);
}

/* An interrupted run keeps its rows but gets no 'End Test. */
static void test_interrupted_no_end_test(void **state)
{
    struct run r;
    char *path;
    struct file f;
    (void)state;

    build_run(&r);
    path = write_run(&r, false, 130);
    f = read_file_crlf(path);
    assert_string_equal(f.lines[f.n - 2], "'Time Stamp");
    for (size_t i = 0; i < f.n; i++)
        assert_string_not_equal(f.lines[i], "'End Test");
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

/* Rows of a test that never got its test_end are still written, under a
 * results header, and a queue-depth cycle is Iometer test type 6. */
static void test_orphan_rows_and_cycle(void **state)
{
    struct run r;
    char *path = tmp_path();
    struct mgr_sink *s;
    struct file f;
    struct row rows[4];
    size_t n;
    (void)state;

    plan.cycle.param = IOF_CYCLE_QUEUE_DEPTH;
    build_run(&r);
    s = sink_open(path);
    plan.cycle.param = IOF_CYCLE_NONE;
    s->ops->test_begin(s, &tinfo);
    emit_target(s, "alpha", "w0", "/dev/sdb", r.t[0], 0);
    emit_worker(s, "alpha", "w0", r.t[0], 1);
    s->ops->run_end(s, 130);
    assert_int_equal(mgr_sink_close(s), 0);
    f = read_file_crlf(path);
    assert_string_equal(f.lines[1], "6,unit plan");
    n = data_rows(&f, rows, 4);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].f[C_TYPE], "WORKER");
    assert_string_equal(rows[1].f[C_TYPE], "DISK");
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

/* Any row, with its own window and status (the helpers above: ok, NS). */
static void emit_status_row(struct mgr_sink *s, enum mgr_row_type type, const char *node,
                            const char *worker, const char *path, const struct iof_stats *st,
                            uint64_t ns, enum mgr_row_status status)
{
    struct mgr_row row = {.type = type,
                          .node = node,
                          .worker = worker,
                          .target = path,
                          .stats = st,
                          .ns = ns,
                          .status = status,
                          .window_end_ns = ns,
                          .queue_depth = 8,
                          .nodes = 1,
                          .workers = type == MGR_ROW_NODE && ns ? 1 : 0,
                          .targets = ns ? 1 : 0};
    emit_row(s, &row);
}

/* Index of the first line starting with prefix, or f->n. */
static size_t find_prefix(const struct file *f, const char *prefix)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strncmp(f->lines[i], prefix, strlen(prefix)))
            return i;
    return f->n;
}

/* A node lost half-way (partial), one lost before its first interval and
 * one absent: Iometer's layout has no status column, so comment lines
 * before 'Results give each status in the other files' words; the partial
 * node's rows are rated over its own 1 s, as in --csv and --json, and ALL
 * over the whole 2 s window. */
static void test_lost_node_status(void **state)
{
    struct run r;
    struct row rows[16];
    char *path = tmp_path();
    struct mgr_sink *s;
    struct iof_stats *none = stats_new();
    struct mgr_metrics beta_m, all_m;
    struct file f;
    size_t n, res, beta = SIZE_MAX;
    double mgr_iops = 0;
    (void)state;

    build_run(&r);
    s = sink_open(path);
    s->ops->test_begin(s, &tinfo);
    emit_target(s, "alpha", "w0", "/dev/sdb", r.t[0], 0);
    emit_worker(s, "alpha", "w0", r.t[0], 1);
    emit_node(s, "alpha", r.t[0], 1, 1, &r.cpu[0]);
    emit_status_row(s, MGR_ROW_TARGET, "beta", "w0", "data,1.dat", r.t[4], NS / 2,
                    MGR_STATUS_PARTIAL);
    emit_status_row(s, MGR_ROW_WORKER, "beta", "w0", NULL, r.t[4], NS / 2, MGR_STATUS_PARTIAL);
    emit_status_row(s, MGR_ROW_NODE, "beta", NULL, NULL, r.t[4], NS / 2, MGR_STATUS_PARTIAL);
    emit_status_row(s, MGR_ROW_NODE, "gamma", NULL, NULL, none, 0, MGR_STATUS_LOST_BEFORE_START);
    emit_status_row(s, MGR_ROW_NODE, "delta", NULL, NULL, none, 0, MGR_STATUS_ABSENT);
    {
        struct iof_stats *all = stats_new();
        struct mgr_row arow = {.type = MGR_ROW_ALL,
                               .stats = all,
                               .ns = NS,
                               .status = MGR_STATUS_PARTIAL,
                               .window_end_ns = NS,
                               .queue_depth = 8,
                               .nodes = 2,
                               .workers = 2,
                               .targets = 2};
        struct mgr_test_end te = {.test = &tinfo, .all = &arow, .nodes = 1, .lost = 2};
        iof_stats_merge(all, r.t[0]);
        iof_stats_merge(all, r.t[4]);
        arow.m = metrics_of(all, NS, &all_m);
        s->ops->test_end(s, &te);
        s->ops->run_end(s, 1);
        test_free(all);
    }
    assert_int_equal(mgr_sink_close(s), 0);
    metrics_of(r.t[4], NS / 2, &beta_m);

    f = read_file_crlf(path);
    res = find_line(&f, 0, "'Results");
    assert_true(find_prefix(&f, "'Status: ALL All partial: a node was lost during the test") < res);
    assert_true(find_line(&f, 0,
                          "'Status: MANAGER beta partial: lost during the test: its rows hold the "
                          "1.000 s of the 2.000 s window whose intervals arrived (0.000 s to "
                          "1.000 s) and their rates are over those 1.000 s") < res);
    assert_true(find_line(&f, 0,
                          "'Status: MANAGER gamma lost-before-start: lost before any of its "
                          "intervals arrived: no I/O and no rates") < res);
    assert_true(find_line(&f, 0,
                          "'Status: MANAGER delta absent: not in this test: no I/O and no "
                          "window") < res);
    n = data_rows(&f, rows, 16);
    assert_int_equal(n, 7); /* ALL; alpha, its worker and disk; beta's three */
    for (size_t i = 0; i < n; i++) {
        assert_string_not_equal(rows[i].f[C_NAME], "gamma");
        assert_string_not_equal(rows[i].f[C_NAME], "delta");
        if (!strcmp(rows[i].f[C_TYPE], "MANAGER"))
            mgr_iops += dbl(rows[i].f[C_IOPS]);
        if (!strcmp(rows[i].f[C_TYPE], "MANAGER") && !strcmp(rows[i].f[C_NAME], "beta"))
            beta = i;
    }
    assert_true(beta != SIZE_MAX);
    /* beta over its own 1 s: the figure --csv and --json print */
    assert_float_equal(dbl(rows[beta].f[C_IOPS]), beta_m.iops, 1e-6);
    assert_float_equal(dbl(rows[beta].f[C_IOPS]), (double)row_ios(&rows[beta]) / 1.0, 1e-6);
    assert_int_equal(u64(rows[beta].f[C_RAW_RUN]), NS / 2 / NS_PER_TICK);
    /* ALL over the whole 2 s: less than the sum of the MANAGER rows */
    assert_float_equal(dbl(rows[0].f[C_IOPS]), all_m.iops, 1e-6);
    assert_float_equal(dbl(rows[0].f[C_IOPS]), (double)row_ios(&rows[0]) / 2.0, 1e-6);
    assert_true(dbl(rows[0].f[C_IOPS]) < mgr_iops);
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    test_free(none);
    free_run(&r);
}

/* What does not apply is empty, never 0 (docs/results.md): the read
 * latencies of a row without reads, the rates of a row without a window. */
static void test_empty_not_zero(void **state)
{
    struct iof_stats *st = stats_new();
    struct row rows[4];
    struct file f;
    char *path;
    size_t n;
    (void)state;

    add_io(st, false, 2000000, 4096); /* writes only */
    path = write_single(st, NULL);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 4);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(rows[i].f[C_AVG_R], "");
        assert_string_equal(rows[i].f[C_MAX_R], "");
        assert_true(dbl(rows[i].f[C_AVG_W]) == 2.0);
        assert_true(dbl(rows[i].f[C_AVG]) == 2.0);
    }
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);

    /* a test that measured no window: the ALL row has no rates */
    path = tmp_path();
    {
        struct mgr_sink *s = sink_open(path);
        struct iof_stats *none = stats_new();
        struct mgr_row arow = {.type = MGR_ROW_ALL, .stats = none, .ns = 0};
        struct mgr_test_end te = {.test = &tinfo, .all = &arow};
        struct mgr_metrics m;
        arow.m = metrics_of(none, 0, &m);
        s->ops->test_begin(s, &tinfo);
        s->ops->test_end(s, &te);
        s->ops->run_end(s, 1);
        assert_int_equal(mgr_sink_close(s), 0);
        test_free(none);
    }
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 4);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].f[C_IOPS], "");
    assert_string_equal(rows[0].f[C_MIBPS], "");
    assert_string_equal(rows[0].f[C_MBPS], "");
    assert_string_equal(rows[0].f[C_TPS], "");
    assert_string_equal(rows[0].f[C_AVG], "");
    assert_string_equal(rows[0].f[C_MAX], "");
    assert_int_equal(u64(rows[0].f[C_RIOS]), 0);
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    test_free(st);
}

/* The node figures (protocol 1.6): on MANAGER and PROCESSOR rows where the
 * node sent them, empty where it did not; on ALL the means, only when
 * every node that measured CPU had them. */
static void node_columns_of(bool both, struct row *all, struct row *alpha, struct row *beta,
                            struct row *proc, struct row *rows, struct row *cpus, size_t *n,
                            size_t *np, struct file *f, char **path, struct run *r)
{
    build_run(r);
    r->cpu[0].node_valid = true;
    r->cpu[0].dpc_pct = 3.5;
    r->cpu[0].irq_pct = 1.25;
    r->cpu[0].intr_per_s = 4000;
    r->cpu[0].packets_per_s = 120;
    r->cpu[0].packet_errors = 2;
    r->cpu[0].retrans_per_s = 0.5;
    if (both)
        r->cpu[1] = (struct proto_cpu){.valid = true,
                                       .busy_pct = 20,
                                       .user_pct = 5,
                                       .sys_pct = 15,
                                       .node_valid = true,
                                       .dpc_pct = 1.5,
                                       .irq_pct = 0.75,
                                       .intr_per_s = 2000,
                                       .packets_per_s = 80,
                                       .packet_errors = 0,
                                       .retrans_per_s = 1.5};
    *path = write_run(r, false, 0);
    *f = read_file_crlf(*path);
    *n = data_rows(f, rows, 16);
    *np = select_rows(f, cpus, 4, true);
    *all = rows[0];
    for (size_t i = 0; i < *n; i++) {
        if (!strcmp(rows[i].f[C_TYPE], "MANAGER") && !strcmp(rows[i].f[C_NAME], "alpha"))
            *alpha = rows[i];
        if (!strcmp(rows[i].f[C_TYPE], "MANAGER") && !strcmp(rows[i].f[C_NAME], "beta"))
            *beta = rows[i];
    }
    *proc = cpus[0];
}

static void test_node_columns(void **state)
{
    struct run r;
    struct row rows[16], cpus[4], all, alpha, beta, proc;
    char *path;
    struct file f;
    size_t n, np;
    (void)state;

    /* alpha sent them, beta (an older agent) did not */
    node_columns_of(false, &all, &alpha, &beta, &proc, rows, cpus, &n, &np, &f, &path, &r);
    assert_true(dbl(alpha.f[C_DPC]) == 3.5);
    assert_true(dbl(alpha.f[C_DPC + 1]) == 1.25);
    assert_true(dbl(alpha.f[C_IRQS]) == 4000);
    assert_true(dbl(alpha.f[C_PKTS]) == 120);
    assert_true(dbl(alpha.f[C_PKTS + 1]) == 2);
    assert_true(dbl(alpha.f[C_RETRANS]) == 0.5);
    assert_true(dbl(proc.f[C_DPC]) == 3.5 && dbl(proc.f[C_DPC + 1]) == 1.25 &&
                dbl(proc.f[C_IRQS]) == 4000);
    assert_string_equal(proc.f[C_PKTS], ""); /* Iometer's PROCESSOR rows have no network */
    for (int c = C_DPC; c <= C_RETRANS; c++)
        if (c != C_SPEED && c != C_EFF) {
            assert_string_equal(beta.f[c], "");
            assert_string_equal(all.f[c], "");
        }
    assert_true(dbl(beta.f[C_CPU]) == 20.0);
    free_rows(rows, n);
    free_rows(cpus, np);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);

    /* both sent them: ALL has their means */
    node_columns_of(true, &all, &alpha, &beta, &proc, rows, cpus, &n, &np, &f, &path, &r);
    assert_true(dbl(beta.f[C_DPC]) == 1.5 && dbl(beta.f[C_RETRANS]) == 1.5);
    assert_true(dbl(all.f[C_DPC]) == 2.5);
    assert_true(dbl(all.f[C_DPC + 1]) == 1.0);
    assert_true(dbl(all.f[C_IRQS]) == 3000);
    assert_true(dbl(all.f[C_PKTS]) == 100);
    assert_true(dbl(all.f[C_PKTS + 1]) == 1);
    assert_true(dbl(all.f[C_RETRANS]) == 1.0);
    free_rows(rows, n);
    free_rows(cpus, np);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

/* After each MANAGER row whose node measured CPU, a PROCESSOR row in
 * Iometer's 59-field layout holding that node's CPU; none for a node
 * without CPU figures. */
static void test_processor_rows(void **state)
{
    struct run r;
    struct row rows[16], cpus[4];
    char *path;
    struct file f;
    size_t n, np, k = 0;
    (void)state;

    build_run(&r);
    path = write_run(&r, false, 0);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 16);
    np = select_rows(&f, cpus, 4, true);
    assert_int_equal(np, 2);
    for (k = 0; k < np; k++) {
        const struct proto_cpu *c = &r.cpu[k];
        assert_string_equal(cpus[k].f[C_TYPE], "PROCESSOR");
        assert_string_equal(cpus[k].f[C_NAME], "All CPUs");
        for (int i = 2; i < C_CPU; i++)
            assert_string_equal(cpus[k].f[i], "");
        assert_true(dbl(cpus[k].f[C_CPU]) == c->busy_pct);
        assert_true(dbl(cpus[k].f[C_USER]) == c->user_pct);
        assert_true(dbl(cpus[k].f[C_PRIV]) == c->sys_pct);
        assert_true(dbl(cpus[k].f[C_SPEED]) == (double)TICKS_PER_S);
        assert_string_equal(cpus[k].f[C_IRQS], "");
        assert_string_equal(cpus[k].f[C_EFF], "");
        assert_string_equal(cpus[k].f[C_PKTS], "");
        assert_string_equal(cpus[k].f[C_RETRANS], "");
    }
    /* each right after its node's MANAGER row */
    k = 0;
    for (size_t i = 1; i < f.n; i++)
        if (!strncmp(f.lines[i], "PROCESSOR,", 10)) {
            const char *mgr = k++ ? "MANAGER,beta," : "MANAGER,alpha,";
            assert_true(!strncmp(f.lines[i - 1], mgr, strlen(mgr)));
        }
    assert_int_equal(k, 2);
    free_rows(rows, n);
    free_rows(cpus, np);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);

    /* no CPU measured: no PROCESSOR row */
    {
        struct iof_stats *st = stats_new();
        add_io(st, true, 1000000, 4096);
        path = write_single(st, NULL);
        f = read_file_crlf(path);
        assert_int_equal(select_rows(&f, cpus, 4, true), 0);
        file_free(&f);
        unlink(path);
        test_free(path);
        test_free(st);
    }
}

/* The ALL row's CPU columns are the aggregate's figures (the ALL row's
 * mgr_row.cpu, as in --iometer-instant and every other file), never a mean
 * restated from the MANAGER rows; none when the aggregate has none. */
static void test_all_cpu_from_aggregate(void **state)
{
    struct run r;
    struct row rows[16];
    char *path;
    struct file f;
    size_t n;
    (void)state;

    build_run(&r);
    r.all_cpu_set = true;
    r.all_cpu = (struct proto_cpu){.valid = true,
                                   .busy_pct = 33.25,
                                   .user_pct = 11.5,
                                   .sys_pct = 21.75,
                                   .node_valid = true,
                                   .dpc_pct = 2.125,
                                   .irq_pct = 0.5,
                                   .intr_per_s = 2500,
                                   .packets_per_s = 64,
                                   .packet_errors = 1,
                                   .retrans_per_s = 0.25};
    path = write_run(&r, false, 0);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 16);
    assert_string_equal(rows[0].f[C_TYPE], "ALL");
    assert_true(dbl(rows[0].f[C_CPU]) == 33.25);
    assert_true(dbl(rows[0].f[C_USER]) == 11.5);
    assert_true(dbl(rows[0].f[C_PRIV]) == 21.75);
    assert_true(dbl(rows[0].f[C_DPC]) == 2.125 && dbl(rows[0].f[C_DPC + 1]) == 0.5);
    assert_true(dbl(rows[0].f[C_IRQS]) == 2500 && dbl(rows[0].f[C_PKTS]) == 64);
    assert_true(dbl(rows[0].f[C_PKTS + 1]) == 1 && dbl(rows[0].f[C_RETRANS]) == 0.25);
    assert_float_equal(dbl(rows[0].f[C_EFF]), dbl(rows[0].f[C_IOPS]) / 33.25, 1e-6);
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);

    /* the aggregate has no CPU for ALL: empty, whatever the nodes had */
    r.all_cpu = (struct proto_cpu){0};
    path = write_run(&r, false, 0);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 16);
    assert_string_equal(rows[0].f[C_CPU], "");
    assert_string_equal(rows[0].f[C_EFF], "");
    assert_true(dbl(rows[1].f[C_CPU]) == 40.0); /* MANAGER alpha keeps its own */
    free_rows(rows, n);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

/* From an agent of protocol 1.7 a PROCESSOR row per CPU after its MANAGER
 * row, "CPU <id>" as Iometer names them (ids with their gaps), each with
 * that CPU's figures and no Interrupts per Second; from an older agent
 * (beta) the node-wide row stays. */
static void test_processor_rows_per_cpu(void **state)
{
    static const struct proto_cpu_one each[3] = {
        {.id = 0, .busy_pct = 55.5, .user_pct = 30, .sys_pct = 25.5, .dpc_pct = 4, .irq_pct = 1.5},
        {.id = 1, .busy_pct = 20, .user_pct = 10, .sys_pct = 10, .dpc_pct = 0.25, .irq_pct = 0},
        {.id = 3, .busy_pct = 44.5, .user_pct = 0, .sys_pct = 44.5, .dpc_pct = 40, .irq_pct = 4.5},
    };
    static const char *const names[4] = {"CPU 0", "CPU 1", "CPU 3", "All CPUs"};
    struct run r;
    struct row rows[16], cpus[8];
    char *path;
    struct file f;
    size_t n, np, k = 0;
    (void)state;

    build_run(&r);
    r.cpus[0] = each;
    r.ncpus[0] = 3;
    path = write_run(&r, false, 0);
    f = read_file_crlf(path);
    n = data_rows(&f, rows, 16);
    np = select_rows(&f, cpus, 8, true);
    assert_int_equal(np, 4);
    for (k = 0; k < np; k++) {
        assert_string_equal(cpus[k].f[C_TYPE], "PROCESSOR");
        assert_string_equal(cpus[k].f[C_NAME], names[k]);
        for (int i = 2; i < C_CPU; i++)
            assert_string_equal(cpus[k].f[i], "");
        assert_true(dbl(cpus[k].f[C_SPEED]) == (double)TICKS_PER_S);
        assert_string_equal(cpus[k].f[C_EFF], "");
        assert_string_equal(cpus[k].f[C_PKTS], "");
        assert_string_equal(cpus[k].f[C_RETRANS], "");
        if (k < 3) {
            assert_true(dbl(cpus[k].f[C_CPU]) == each[k].busy_pct);
            assert_true(dbl(cpus[k].f[C_USER]) == each[k].user_pct);
            assert_true(dbl(cpus[k].f[C_PRIV]) == each[k].sys_pct);
            assert_true(dbl(cpus[k].f[C_DPC]) == each[k].dpc_pct);
            assert_true(dbl(cpus[k].f[C_DPC + 1]) == each[k].irq_pct);
            assert_string_equal(cpus[k].f[C_IRQS], ""); /* not counted per CPU */
        } else {                                        /* beta: the node as a whole */
            assert_true(dbl(cpus[k].f[C_CPU]) == r.cpu[1].busy_pct);
            assert_string_equal(cpus[k].f[C_DPC], "");
        }
    }
    /* alpha's three right after its MANAGER row, beta's one after its own */
    k = 0;
    for (size_t i = 1; i < f.n; i++)
        if (!strncmp(f.lines[i], "MANAGER,alpha,", 14)) {
            for (int j = 1; j <= 3; j++)
                assert_true(!strncmp(f.lines[i + (size_t)j], "PROCESSOR,CPU ", 14));
            assert_true(!strncmp(f.lines[i + 4], "WORKER,", 7));
            k++;
        } else if (!strncmp(f.lines[i], "MANAGER,beta,", 13)) {
            assert_true(!strncmp(f.lines[i + 1], "PROCESSOR,All CPUs,", 19));
            k++;
        }
    assert_int_equal(k, 2);
    free_rows(rows, n);
    free_rows(cpus, np);
    file_free(&f);
    unlink(path);
    test_free(path);
    free_run(&r);
}

/* Our align 512 is Iometer's 0 ("on the disk's sectors"): O_DIRECT only
 * runs 512-byte alignment on 512-byte sectors. */
static void test_align_sector(void **state)
{
    static struct iof_line l[] = {
        {.size = 4096, .share = 100, .read_pct = 0, .random_pct = 100, .align = 512, .burst = 1},
    };
    static struct iof_spec sp[] = {{.name = "4k sector aligned", .lines = l, .nlines = 1}};
    struct iof_spec *saved = plan.specs;
    struct iof_stats *st = stats_new();
    struct file f;
    char *path;
    (void)state;

    plan.specs = sp;
    add_io(st, false, 1000000, 4096);
    path = write_single(st, NULL);
    plan.specs = saved;
    f = read_file_crlf(path);
    find_line(&f, 0, "4096,100,0,100,0,1,0,0,");
    file_free(&f);
    unlink(path);
    test_free(path);
    test_free(st);
}

static void test_unwritable_path(void **state)
{
    struct mgr_sink *s = NULL;
    struct iof_diag d = {{0}};
    (void)state;

    assert_true(mgr_sink_open(&mgr_sink_iometer, "/nonexistent-dir/x.csv", 0, &s, &d) < 0);
    assert_null(s);
    assert_non_null(strstr(d.msg, "/nonexistent-dir/x.csv"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_exact),
        cmocka_unit_test(test_file_structure),
        cmocka_unit_test(test_rows_order_and_sums),
        cmocka_unit_test(test_rows_order_interleaved),
        cmocka_unit_test(test_row_columns),
        cmocka_unit_test(test_values_in_ms),
        cmocka_unit_test(test_bin_edges),
        cmocka_unit_test(test_bins_spread),
        cmocka_unit_test(test_bins_straddle),
        cmocka_unit_test(test_interrupted_no_end_test),
        cmocka_unit_test(test_orphan_rows_and_cycle),
        cmocka_unit_test(test_lost_node_status),
        cmocka_unit_test(test_empty_not_zero),
        cmocka_unit_test(test_processor_rows),
        cmocka_unit_test(test_processor_rows_per_cpu),
        cmocka_unit_test(test_node_columns),
        cmocka_unit_test(test_all_cpu_from_aggregate),
        cmocka_unit_test(test_align_sector),
        cmocka_unit_test(test_unwritable_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
