/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/iometer_csv.c - the --iometer-csv writer: Iometer 1.1.0's results.csv
 * layout, so spreadsheets and scripts built for Iometer read it unchanged.
 *
 * Where the layout comes from (Iometer 1.1.0 sources, as stored in the public
 * repository oberstet/iometer at e6739d8d, whose src/IOVersion.h says "1.1.0";
 * iometer-org/iometer src/ManagerList.cpp at 7243b4da writes the same header):
 *   - src/PageSetup.cpp, CPageSetup::SaveResults: once per run, the lines
 *     'Test Type,Test Description / <test type>,<description> / 'Version /
 *     <version> / 'Time Stamp / <local time "YYYY-MM-DD hh:mm:ss:mmm">.
 *   - src/AccessSpecList.cpp, AccessSpecList::SaveResults: before each test,
 *     'Access specifications, then per active spec 'Access specification
 *     name,default assignment / <name>,<assignment> / 'size,% of size,% reads,
 *     % random,delay,burst,align,reply / one line per spec line, each ending
 *     with a comma after the reply (its `<< reply << ","`), then
 *     'End access specifications.
 *   - src/ManagerList.cpp, ManagerList::SaveResults: after each test,
 *     'Results, the 80-column header (IOM_HEADER below, byte for byte), the
 *     ALL row, each manager's rows, then 'Time Stamp / <local time>.
 *   - src/Manager.cpp, Manager::SaveResults: the MANAGER row, then one
 *     PROCESSOR row per CPU (59 fields: see iom_processor; our agents measure
 *     the node as a whole, so one row, "All CPUs", when the node measured its
 *     CPU), then its workers; src/Worker.cpp, Worker::SaveResults: the WORKER
 *     row, then one DISK row per active target.
 *   - src/GalileoView.cpp, CGalileoView::TestDone: 'End Test when all tests
 *     completed; CGalileoView::SaveResults: doubles as fixed with 6 decimals.
 *   - src/IOGrunt.cpp, Grunt_Thread_Wrapper and Grunt::Record_IO: the latency
 *     bins (see iom_edge_ns).
 * Only the layout is reproduced; the code is ours.
 *
 * What goes in the columns, per row (Iometer's choices for disk workers):
 *   - Names: ALL row "All"; MANAGER the node; WORKER "Worker N" for our "wN-1"
 *     (Iometer's default names); DISK the target path. Commas, CR and LF in
 *     names become spaces, as Iometer does for target names: its readers split
 *     on commas, so no RFC 4180 quoting.
 *   - # Managers only on ALL, # Workers on ALL and MANAGER, # Disks on ALL,
 *     MANAGER and WORKER; the access spec name on all but DISK rows.
 *   - Rates and times as Iometer: IOps, MiBps (2^20 B/s), MBps (10^6 B/s),
 *     response times in ms. A disk worker's transaction is one I/O (no reply),
 *     so the Transaction columns repeat the I/O figures, as Iometer's do;
 *     connections are 0 and Transactions per Connection is -1 (Iometer's
 *     AMBIGUOUS_VALUE when connection-rate testing is off).
 *   - Raw columns in timer ticks, and Processor Speed holds the ticks per
 *     second (Manager::SaveResults writes timer_resolution there). Windows
 *     Iometer's timer is QueryPerformanceCounter (src/IOTime.cpp: TimerType
 *     TIMER_OSHPC, timer_frequency() returns oshpc_freq()), which runs at
 *     10 MHz on current Windows, so tools written for its files divide by
 *     10000000: our raw times are in 100 ns ticks (floor of ns / 100) and
 *     Processor Speed is 10000000. The ALL row leaves them empty, as Iometer
 *     does. Unlike Iometer, whose DISK rows repeat their worker's raw
 *     figures, a DISK row has its own.
 *   - Starting Sector and Maximum Size in 512-byte sectors from the target's
 *     range (0 size: the whole target), Queue Depth per target; above DISK,
 *     the value shared by every target below, or -1 (AMBIGUOUS_VALUE) when
 *     they differ.
 *   - CPU on ALL and MANAGER rows: % CPU Utilization = busy, % User Time =
 *     user, % Privileged Time = system (ALL: the mean over the nodes that
 *     measured CPU), CPU Effectiveness = IOps / % CPU Utilization. Figures we
 *     do not measure are empty, never a made-up 0: % DPC Time, % Interrupt
 *     Time, Interrupts per Second, Packets/Second, Packet Errors, Segments
 *     Retransmitted/Second, and the CPU columns of a node without CPU data.
 *   - 'Version says 1.1.0: the layout's version, which Iometer readers use to
 *     pick the columns. Lines end CRLF, as Iometer (a Windows program writing
 *     a text-mode stream) writes them.
 *   - 'Test Type is the index of Iometer's test type (PageSetup.h: 0 normal,
 *     1 cycle targets, 2 cycle workers, 6 cycle outstanding I/Os); the test
 *     description is the plan name. The default assignment of a spec is 0
 *     (AssignNone, GalileoDefs.h), what Iometer gives every spec a user makes
 *     (AccessSpecList::New: default_assignment = FALSE).
 *   - An access spec line: size, % of spec, % reads, % random, delay in ms,
 *     burst, alignment in bytes, reply 0. Iometer's align 0 means "on the
 *     disk's sectors" (Dynamo aligns to the bytes per sector the disk
 *     reports): our 512 is written as 0, since O_DIRECT refuses 512-byte
 *     alignment on any disk with larger sectors, so a plan that ran with it
 *     ran sector-aligned; our 0, "the transfer size", is written as the size.
 *
 * Latency bins: Iometer's Dynamo counts a successful I/O of latency t in bin
 * k-1 for the first k in 1..20 with t < edge[k] (t in whole ticks, the edges
 * doubles), edges computed from its timer resolution R (ticks/s, 10^7 as
 * above): 0, R/20000 (50 us), R/10000, R/5000, R/2000,
 * R/1000, R/500, R/200, R/100, R/67, R/50, R/33, R/20, R/10, R/5, R/2, R, 2R,
 * 4R, 5R, 10R. So the bin labelled "10 to 15 mS" really ends at 1/67 s
 * (14.925 ms), "20 to 30 mS" at 1/33 s (30.303 ms), and "2 to 4.7 s" at 4 s:
 * we use the edges Iometer measures with, so the counts compare with real
 * Iometer files. Iometer never counts t >= 10 s (its last bin stays 0); we
 * put those in the last bin, so a row's bins always sum to its I/Os.
 *
 * Our histogram (common/hist.h) does not put bucket edges on these bin edges
 * (a bucket at 50 us spans [49.664, 50.176) us), so the one bucket holding an
 * edge is split in proportion to the part of its range below the edge, its
 * range first narrowed to [min, max] of the histogram (exact for a single
 * value, or all values equal). Every other bucket lies wholly in one bin. So
 * only I/Os in that bucket can land in the neighbouring bin: those within one
 * bucket width (at most 1/64 of the value, 1.6 %) of an edge, and per edge at
 * most that bucket's count. Counts are cumulated below each edge and rounded
 * there, so the bins are integers summing exactly to the row's I/O count.
 *
 * Order and durability: a test's rows arrive as each agent's result comes in;
 * they are kept as formatted text (never as histograms) and written with the
 * access spec and the ALL row at test_end: ALL, then per node MANAGER, its
 * WORKERs each followed by its DISKs (nodes and workers in the order first
 * seen), then the file is fsynced. Rows of a test that got no test_end are
 * written, without an ALL row, at the next test_begin, run_end or close.
 */
#include "manager/sink.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/clock.h"
#include "manager/metrics.h"

/* Iometer 1.1.0 src/ManagerList.cpp, ManagerList::SaveResults (note the
 * space in " >= 10 s"). */
#define IOM_HEADER                                                                                 \
    "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,"        \
    "Read IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),"                \
    "MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal),Transactions per Second,"             \
    "Connections per Second,Average Response Time,Average Read Response Time,"                     \
    "Average Write Response Time,Average Transaction Time,Average Connection Time,"                \
    "Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,"                \
    "Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write Errors,"            \
    "Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per Connection,"       \
    "Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction Time,"       \
    "Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response Time,"    \
    "Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,"                 \
    "Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,"                      \
    "% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,"         \
    "CPU Effectiveness,Packets/Second,Packet Errors,Segments Retransmitted/Second,"                \
    "0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,"         \
    "5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,"       \
    "200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s"

#define IOM_EOL "\r\n"
#define IOM_VERSION "1.1.0"
#define IOM_NCOLS 80
#define IOM_NBINS 21
#define IOM_SECTOR 512
#define IOM_TICKS_PER_S 10000000 /* Windows Iometer's timer: 10 MHz (see the file comment) */
#define IOM_NS_PER_TICK 100
#define IOM_AMBIGUOUS (-1)      /* Iometer's AMBIGUOUS_VALUE (Worker.h) */
#define IOM_ASSIGN_NONE 0       /* Iometer's AssignNone (GalileoDefs.h) */
#define IOM_CPU_GAP 46          /* empty fields of a PROCESSOR row before its CPU figures */
#define IOM_CPU_NAME "All CPUs" /* Target Name of our one PROCESSOR row per node */
#define IOM_MB_DEC (1000.0 * 1000.0)

/* Iometer's bin edges at R = 10^7 ticks/s as integer ns thresholds: an I/O
 * of t ns is floor(t / 100) ticks, below edge R/k iff below ceil(R/k)
 * ticks, i.e. t < 100 * ceil(R/k) ns. Only R/67 and R/33 are not whole
 * ticks. */
static const uint64_t iom_edge_ns[IOM_NBINS] = {
    0,           /* 0 */
    50000,       /* R/20000: 50 us */
    100000,      /* R/10000: 100 us */
    200000,      /* R/5000: 200 us */
    500000,      /* R/2000: 500 us */
    1000000,     /* R/1000: 1 ms */
    2000000,     /* R/500: 2 ms */
    5000000,     /* R/200: 5 ms */
    10000000,    /* R/100: 10 ms */
    14925400,    /* R/67: 149253.7 ticks, labelled 15 ms */
    20000000,    /* R/50: 20 ms */
    30303100,    /* R/33: 303030.3 ticks, labelled 30 ms */
    50000000,    /* R/20: 50 ms */
    100000000,   /* R/10: 100 ms */
    200000000,   /* R/5: 200 ms */
    500000000,   /* R/2: 500 ms */
    1000000000,  /* R: 1 s */
    2000000000,  /* 2R: 2 s */
    4000000000,  /* 4R: 4 s, labelled 4.7 s */
    5000000000,  /* 5R: 5 s */
    10000000000, /* 10R: 10 s */
};

/* A value shared by a set of targets: none seen, one value, or several. */
struct iom_common {
    bool any, mixed;
    uint64_t v;
};

struct iom_node {
    char *name;
    struct iom_common start, size, qd;
    bool cpu_known;
    double busy, user, sys;
};

struct iom_worker {
    size_t node;
    char *name;
    struct iom_common start, size, qd;
};

/* A node of the current test whose status is not ok: a comment line says
 * so before the test's 'Results (Iometer's layout has no status column). */
struct iom_status {
    char *node;
    enum mgr_row_status status;
    uint64_t ns, from_ns, to_ns;
};

/* One buffered row of the current test. */
struct iom_rec {
    int rank;            /* 0 MANAGER, 1 WORKER, 2 DISK */
    size_t node, worker; /* indexes; worker unused for MANAGER */
    size_t seq;
    char *text; /* the whole line, EOL included */
};

/* A line being formatted; nf counts the fields written. */
struct iom_buf {
    struct iof_buf t;
    unsigned nf;
};

struct iom_writer {
    FILE *f;
    /* copied at run_begin (the plan is only borrowed for the call) */
    struct iof_spec *specs;
    size_t nspecs;
    /* the current test */
    struct iom_node *nodes;
    size_t nnodes, capnodes;
    struct iom_worker *workers;
    size_t nworkers, capworkers;
    struct iom_rec *recs;
    size_t nrecs, caprecs;
    struct iom_status *status;
    size_t nstatus, capstatus;
    struct iom_common start, size, qd; /* every target of the test */
    bool in_test;                      /* test_begin came, test_end not yet */
    unsigned spec_index;               /* of the current test */
    char spec[IOF_NAME_MAX];
};

/* --- small helpers ------------------------------------------------------------------- */

static void iom_nomem(struct mgr_sink *s)
{
    if (!s->write_error)
        s->write_error = -ENOMEM;
}

/* Grows an array of the writer to `need` elements. */
static bool iom_grow(void **p, size_t *cap, size_t need, size_t size)
{
    return iof_array_grow(p, cap, need, size) == 0;
}

/* Starts a field: the separator unless it is the first. */
static void fld(struct iom_buf *b)
{
    if (b->nf++)
        iof_buf_addc(&b->t, ',');
}

static void f_empty(struct iom_buf *b)
{
    fld(b);
}

/* A name, with commas, CR and LF turned into spaces (Iometer's way). */
static void buf_name(struct iom_buf *b, const char *s)
{
    for (; s && *s; s++)
        iof_buf_addc(&b->t, strchr(",\r\n", *s) ? ' ' : *s);
}

static void f_str(struct iom_buf *b, const char *s)
{
    fld(b);
    buf_name(b, s);
}

static void f_u64(struct iom_buf *b, uint64_t v)
{
    fld(b);
    iof_buf_printf(&b->t, "%" PRIu64, v);
}

static void f_u128(struct iom_buf *b, iof_u128 v)
{
    char buf[IOF_U128_DIGITS + 1];
    fld(b);
    iof_buf_addstr(&b->t, iof_u128_str(v, buf));
}

static void f_i64(struct iom_buf *b, int64_t v)
{
    fld(b);
    iof_buf_printf(&b->t, "%" PRId64, v);
}

/* Doubles as Iometer's stream writes them: fixed, 6 decimals. */
static void f_dbl(struct iom_buf *b, double v)
{
    fld(b);
    iof_buf_printf(&b->t, "%.6f", v);
}

/* v when known, else an empty field. */
static void f_dbl_if(struct iom_buf *b, bool known, double v)
{
    if (known)
        f_dbl(b, v);
    else
        f_empty(b);
}

static void f_u64_if(struct iom_buf *b, bool known, uint64_t v)
{
    if (known)
        f_u64(b, v);
    else
        f_empty(b);
}

static void f_common(struct iom_buf *b, const struct iom_common *c)
{
    if (!c->any)
        f_empty(b);
    else if (c->mixed)
        f_i64(b, IOM_AMBIGUOUS);
    else
        f_u64(b, c->v);
}

static void common_add(struct iom_common *c, uint64_t v)
{
    if (!c->any) {
        c->any = true;
        c->v = v;
    } else if (c->v != v) {
        c->mixed = true;
    }
}

/* "Worker N" for our "wN-1"; any other name as it is. */
static void f_worker_name(struct iom_buf *b, const char *w)
{
    unsigned long n;
    char *end;

    fld(b);
    if (w && w[0] == 'w' && w[1] >= '0' && w[1] <= '9') {
        errno = 0;
        n = strtoul(w + 1, &end, 10);
        if (!*end && !errno && n < UINT32_MAX) {
            iof_buf_printf(&b->t, "Worker %lu", n + 1);
            return;
        }
    }
    buf_name(b, w);
}

/* "YYYY-MM-DD hh:mm:ss:mmm" in local time, as Iometer's 'Time Stamp. */
static void iom_timestamp(FILE *f, uint64_t wall_ns)
{
    time_t t = (time_t)(wall_ns / IOF_NS_PER_S);
    unsigned ms = (unsigned)(wall_ns / IOF_NS_PER_MS % 1000);
    struct tm tm;

    if (!localtime_r(&t, &tm))
        memset(&tm, 0, sizeof(tm));
    fprintf(f, "%04d-%02d-%02d %02d:%02d:%02d:%03u" IOM_EOL, tm.tm_year + 1900, tm.tm_mon + 1,
            tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

static void iom_fputname(FILE *f, const char *s)
{
    for (; s && *s; s++)
        fputc(strchr(",\r\n", *s) ? ' ' : *s, f);
}

/* --- latency bins ---------------------------------------------------------------------- */

/* Splits h into Iometer's bins (see the file comment). out sums to h->count. */
static void iom_bins(const struct iof_hist *h, uint64_t out[IOM_NBINS])
{
    uint64_t full[IOM_NBINS] = {0}, prev = 0;
    double part[IOM_NBINS] = {0};

    memset(out, 0, IOM_NBINS * sizeof(out[0]));
    if (!h->count)
        return;
    for (unsigned i = 0; i < IOF_HIST_BUCKETS; i++) {
        uint64_t c = h->buckets[i], a, b;
        if (!c)
            continue;
        a = iof_hist_bucket_low(i);
        b = a + iof_hist_bucket_width(i);
        /* Narrow to [min, max]: values are integers, so max is in [a, max + 1). */
        if (h->min_ns > a && h->min_ns < b)
            a = h->min_ns;
        if (h->max_ns >= a && h->max_ns < b - 1)
            b = h->max_ns + 1;
        for (unsigned k = 1; k < IOM_NBINS; k++) {
            if (iom_edge_ns[k] >= b)
                full[k] += c;
            else if (iom_edge_ns[k] > a)
                part[k] += (double)c * (double)(iom_edge_ns[k] - a) / (double)(b - a);
        }
    }
    /* full[k] + part[k] (values below edge k) never decreases with k, and
     * full[k] is whole, so rounding keeps the cumulated counts in order. */
    for (unsigned k = 1; k < IOM_NBINS; k++) {
        uint64_t below = full[k] + (uint64_t)llround(part[k]);
        if (below > h->count)
            below = h->count;
        if (below < prev)
            below = prev;
        out[k - 1] = below - prev;
        prev = below;
    }
    out[IOM_NBINS - 1] = h->count - prev;
}

/* --- one row ------------------------------------------------------------------------------ */

/* Everything a row shows besides its stats. Counts < 0 print empty. */
struct iom_fig {
    const char *type, *spec;
    int64_t managers, workers, disks;
    bool raw; /* the raw-time columns and Processor Speed (not on ALL) */
    bool cpu; /* the CPU columns (ALL and MANAGER) */
    bool cpu_known;
    double busy, user, sys;
    const struct iom_common *start, *size, *qd;
};

static void f_count(struct iom_buf *b, int64_t v)
{
    if (v < 0)
        f_empty(b);
    else
        f_i64(b, v);
}

/* Appends the fields after the name: 78 of the 80. */
static void iom_fields(struct iom_buf *b, const struct iom_fig *g, const struct iof_stats *s,
                       uint64_t ns, const struct mgr_metrics *mm)
{
    const struct mgr_metrics m = *mm;
    struct iof_hist *all = malloc(sizeof(*all));
    uint64_t bins[IOM_NBINS];
    double sec = (double)ns / 1e9;
    double max_ms, rd_max_ms, wr_max_ms;
    bool rd = s->rd.lat.count > 0, wr = s->wr.lat.count > 0, any = rd || wr;

    if (!all) {
        b->t.err = -ENOMEM;
        return;
    }
    iof_stats_lat_all(s, all);
    max_ms = (double)all->max_ns / 1e6;
    rd_max_ms = (double)s->rd.lat.max_ns / 1e6;
    wr_max_ms = (double)s->wr.lat.max_ns / 1e6;

    if (g->spec)
        f_str(b, g->spec);
    else
        f_empty(b);
    f_count(b, g->managers);
    f_count(b, g->workers);
    f_count(b, g->disks);
    /* What does not apply is empty, never a made-up 0 (docs/results.md):
     * the rates of a row without a window, the latencies of a direction
     * without I/O. */
    f_dbl_if(b, m.rates, m.iops);
    f_dbl_if(b, m.rates, m.read_iops);
    f_dbl_if(b, m.rates, m.write_iops);
    f_dbl_if(b, m.rates, m.mibps);
    f_dbl_if(b, m.rates, m.read_mibps);
    f_dbl_if(b, m.rates, m.write_mibps);
    f_dbl_if(b, m.rates, sec > 0 ? (double)(s->rd.bytes + s->wr.bytes) / IOM_MB_DEC / sec : 0);
    f_dbl_if(b, m.rates, sec > 0 ? (double)s->rd.bytes / IOM_MB_DEC / sec : 0);
    f_dbl_if(b, m.rates, sec > 0 ? (double)s->wr.bytes / IOM_MB_DEC / sec : 0);
    f_dbl_if(b, m.rates, m.iops); /* Transactions per Second: a transaction is one I/O */
    f_dbl(b, 0);                  /* Connections per Second */
    f_dbl_if(b, any, m.avg_ms);
    f_dbl_if(b, rd, m.avg_read_ms);
    f_dbl_if(b, wr, m.avg_write_ms);
    f_dbl_if(b, any, m.avg_ms); /* Average Transaction Time */
    f_dbl(b, 0);                /* Average Connection Time */
    f_dbl_if(b, any, max_ms);
    f_dbl_if(b, rd, rd_max_ms);
    f_dbl_if(b, wr, wr_max_ms);
    f_dbl_if(b, any, max_ms); /* Maximum Transaction Time */
    f_dbl(b, 0);              /* Maximum Connection Time */
    f_u64(b, m.errors);
    f_u64(b, s->rd.errors);
    f_u64(b, s->wr.errors);
    f_u64(b, m.bytes_read);
    f_u64(b, m.bytes_written);
    f_u64(b, m.read_ios);
    f_u64(b, m.write_ios);
    f_u64(b, 0);             /* Connections */
    f_i64(b, IOM_AMBIGUOUS); /* Transactions per Connection */
    if (g->raw) {            /* in ticks of IOM_NS_PER_TICK */
        f_u128(b, s->rd.lat.sum_ns / IOM_NS_PER_TICK);
        f_u128(b, s->wr.lat.sum_ns / IOM_NS_PER_TICK);
        f_u128(b, all->sum_ns / IOM_NS_PER_TICK); /* Total Raw Transaction Time */
        f_u64(b, 0);                              /* Total Raw Connection Time */
        f_u64_if(b, rd, s->rd.lat.max_ns / IOM_NS_PER_TICK);
        f_u64_if(b, wr, s->wr.lat.max_ns / IOM_NS_PER_TICK);
        f_u64_if(b, any, all->max_ns / IOM_NS_PER_TICK); /* Maximum Raw Transaction Time */
        f_u64(b, 0);                                     /* Maximum Raw Connection Time */
        f_u64(b, ns / IOM_NS_PER_TICK);                  /* Total Raw Run Time */
    } else {
        for (int i = 0; i < 9; i++)
            f_empty(b);
    }
    f_common(b, g->start);
    f_common(b, g->size);
    f_common(b, g->qd);
    if (g->cpu && g->cpu_known) {
        f_dbl(b, g->busy);
        f_dbl(b, g->user);
        f_dbl(b, g->sys);
    } else {
        f_empty(b);
        f_empty(b);
        f_empty(b);
    }
    f_empty(b); /* % DPC Time: not measured */
    f_empty(b); /* % Interrupt Time: not measured */
    if (g->raw)
        f_dbl(b, IOM_TICKS_PER_S); /* Processor Speed: the raw times' ticks per second */
    else
        f_empty(b);
    f_empty(b); /* Interrupts per Second: not measured */
    if (g->cpu && g->cpu_known && m.rates && g->busy > 0)
        f_dbl(b, m.iops / g->busy); /* CPU Effectiveness */
    else
        f_empty(b);
    f_empty(b); /* Packets/Second */
    f_empty(b); /* Packet Errors */
    f_empty(b); /* Segments Retransmitted/Second */
    if (iof_hist_has_buckets(all)) {
        iom_bins(all, bins);
        for (int k = 0; k < IOM_NBINS; k++)
            f_u64(b, bins[k]);
    } else {
        /* kept as counters only (a partial node's WORKER and DISK rows) */
        for (int k = 0; k < IOM_NBINS; k++)
            f_empty(b);
    }
    iof_buf_addstr(&b->t, IOM_EOL);
    free(all);
}

/* Iometer's PROCESSOR row after a MANAGER row (Manager::SaveResults):
 * "PROCESSOR,CPU n", 46 empty fields, the five CPU figures, the timer
 * resolution, interrupts per second, and empty CPU Effectiveness and
 * network fields: 59 fields, no latency bins. Iometer writes one per
 * processor; our agents measure the node as a whole, so there is one row,
 * named IOM_CPU_NAME, holding the node's figures (the mean of its CPUs). */
static void iom_processor(struct iom_buf *b, const struct iom_fig *g)
{
    b->nf = 0;
    f_str(b, "PROCESSOR");
    f_str(b, IOM_CPU_NAME);
    for (int i = 0; i < IOM_CPU_GAP; i++)
        f_empty(b);
    f_dbl(b, g->busy);
    f_dbl(b, g->user);
    f_dbl(b, g->sys);
    f_empty(b);                /* % DPC Time: not measured */
    f_empty(b);                /* % Interrupt Time: not measured */
    f_dbl(b, IOM_TICKS_PER_S); /* Processor Speed */
    f_empty(b);                /* Interrupts per Second: not measured */
    f_empty(b);                /* CPU Effectiveness: Iometer leaves it empty here */
    for (int i = 0; i < 3; i++)
        f_empty(b); /* Packets/Second, Packet Errors, Segments Retransmitted/Second */
    iof_buf_addstr(&b->t, IOM_EOL);
}

/* --- the current test's entities ---------------------------------------------------------- */

static char *iom_strdup(const char *s)
{
    return strdup(s ? s : "");
}

/* Index of node `name`, added when first seen; SIZE_MAX on ENOMEM. */
static size_t iom_node(struct iom_writer *w, const char *name)
{
    struct iom_node *n;
    const char *key = name ? name : "";

    for (size_t i = w->nnodes; i-- > 0;)
        if (!strcmp(w->nodes[i].name, key))
            return i;
    if (!iom_grow((void **)&w->nodes, &w->capnodes, w->nnodes + 1, sizeof(*w->nodes)))
        return SIZE_MAX;
    n = &w->nodes[w->nnodes];
    memset(n, 0, sizeof(*n));
    if (!(n->name = iom_strdup(key)))
        return SIZE_MAX;
    return w->nnodes++;
}

static size_t iom_worker(struct iom_writer *w, size_t node, const char *name)
{
    struct iom_worker *k;
    const char *key = name ? name : "";

    for (size_t i = w->nworkers; i-- > 0;)
        if (w->workers[i].node == node && !strcmp(w->workers[i].name, key))
            return i;
    if (!iom_grow((void **)&w->workers, &w->capworkers, w->nworkers + 1, sizeof(*w->workers)))
        return SIZE_MAX;
    k = &w->workers[w->nworkers];
    memset(k, 0, sizeof(*k));
    k->node = node;
    if (!(k->name = iom_strdup(key)))
        return SIZE_MAX;
    return w->nworkers++;
}

static void iom_clear_test(struct iom_writer *w)
{
    for (size_t i = 0; i < w->nnodes; i++)
        free(w->nodes[i].name);
    for (size_t i = 0; i < w->nworkers; i++)
        free(w->workers[i].name);
    for (size_t i = 0; i < w->nrecs; i++)
        free(w->recs[i].text);
    for (size_t i = 0; i < w->nstatus; i++)
        free(w->status[i].node);
    w->nnodes = w->nworkers = w->nrecs = w->nstatus = 0;
    memset(&w->start, 0, sizeof(w->start));
    memset(&w->size, 0, sizeof(w->size));
    memset(&w->qd, 0, sizeof(w->qd));
}

static int iom_rec_cmp(const void *pa, const void *pb)
{
    const struct iom_rec *a = pa, *b = pb;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    if ((a->rank == 0) != (b->rank == 0))
        return a->rank == 0 ? -1 : 1;
    if (a->rank != 0 && a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Writes the buffered rows (MANAGER, its WORKERs each followed by its DISKs)
 * and forgets the test. */
static void iom_write_recs(struct iom_writer *w)
{
    if (w->nrecs)
        qsort(w->recs, w->nrecs, sizeof(*w->recs), iom_rec_cmp);
    for (size_t i = 0; i < w->nrecs; i++)
        fputs(w->recs[i].text, w->f);
    iom_clear_test(w);
}

/* --- sink operations ---------------------------------------------------------------------- */

static int iom_open(struct mgr_sink *s, const char *path, struct iof_diag *diag)
{
    struct iom_writer *w = calloc(1, sizeof(*w));

    (void)path; /* s->path */
    if (!w)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    w->f = mgr_sink_fopen(s, diag);
    if (!w->f) {
        int err = errno ? -errno : -EIO;
        free(w);
        return err;
    }
    s->priv = w;
    return 0;
}

static void iom_free_specs(struct iom_writer *w)
{
    for (size_t i = 0; i < w->nspecs; i++)
        free(w->specs[i].lines);
    free(w->specs);
    w->specs = NULL;
    w->nspecs = 0;
}

/* Iometer's test type (PageSetup.h) for our cycle. */
static int iom_test_type(enum iof_cycle_param c)
{
    switch (c) {
    case IOF_CYCLE_TARGETS:
        return 1; /* CyclingTargets */
    case IOF_CYCLE_WORKERS:
        return 2; /* CyclingWorkers */
    case IOF_CYCLE_QUEUE_DEPTH:
        return 6; /* CyclingQueue */
    default:
        return 0; /* normal */
    }
}

static void iom_run_begin(struct mgr_sink *s, const struct mgr_run_info *ri)
{
    struct iom_writer *w = s->priv;
    const struct iof_plan *p = ri->plan;

    iom_free_specs(w);
    if (p && p->nspecs) {
        w->specs = calloc(p->nspecs, sizeof(*w->specs));
        if (!w->specs) {
            iom_nomem(s);
        } else {
            w->nspecs = p->nspecs;
            for (size_t i = 0; i < p->nspecs; i++) {
                w->specs[i] = p->specs[i];
                w->specs[i].lines = NULL;
                w->specs[i].nlines = 0;
                if (!p->specs[i].nlines)
                    continue;
                w->specs[i].lines = malloc(p->specs[i].nlines * sizeof(struct iof_line));
                if (!w->specs[i].lines) {
                    iom_nomem(s);
                    continue;
                }
                memcpy(w->specs[i].lines, p->specs[i].lines,
                       p->specs[i].nlines * sizeof(struct iof_line));
                w->specs[i].nlines = p->specs[i].nlines;
            }
        }
    }
    fputs("'Test Type,Test Description" IOM_EOL, w->f);
    fprintf(w->f, "%d,", iom_test_type(p ? p->cycle.param : IOF_CYCLE_NONE));
    iom_fputname(w->f, p ? p->name : "");
    fputs(IOM_EOL "'Version" IOM_EOL IOM_VERSION IOM_EOL "'Time Stamp" IOM_EOL, w->f);
    iom_timestamp(w->f, ri->start_wall_ns ? ri->start_wall_ns : iof_wall_ns());
    mgr_sink_sync(s, w->f, false);
    mgr_sink_publish(s);
}

/* The status of the ALL row and of each node that is not ok, one comment
 * line each (Iometer's readers skip them):
 *   'Status: ALL All partial: a node was lost during the test: ...
 *   'Status: MANAGER beta partial: lost during the test: its rows hold ...
 * in the words every other file and report uses (mgr_status_note). */
static void iom_status_lines(struct iom_writer *w, const struct mgr_test_end *te)
{
    char note[512];
    double test_s = te && te->all ? (double)te->all->ns / 1e9 : 0;

    if (te && te->all && te->all->status != MGR_STATUS_OK)
        fprintf(w->f, "'Status: ALL All %s: %s" IOM_EOL, mgr_row_status_name(te->all->status),
                mgr_status_note(note, sizeof(note), MGR_ROW_ALL, te->all->status,
                                (double)te->all->ns / 1e9, 0, test_s, test_s));
    for (size_t i = 0; i < w->nstatus; i++) {
        const struct iom_status *st = &w->status[i];
        fputs("'Status: MANAGER ", w->f);
        iom_fputname(w->f, st->node);
        fprintf(w->f, " %s: %s" IOM_EOL, mgr_row_status_name(st->status),
                mgr_status_note(note, sizeof(note), MGR_ROW_NODE, st->status, (double)st->ns / 1e9,
                                (double)st->from_ns / 1e9, (double)st->to_ns / 1e9, test_s));
    }
}

/* Keeps the status of a NODE row that is not ok for the test's comment
 * lines. */
static void iom_note_status(struct mgr_sink *s, const struct mgr_row *r)
{
    struct iom_writer *w = s->priv;
    struct iom_status *st;

    if (r->type != MGR_ROW_NODE || r->status == MGR_STATUS_OK)
        return;
    if (!iom_grow((void **)&w->status, &w->capstatus, w->nstatus + 1, sizeof(*w->status))) {
        iom_nomem(s);
        return;
    }
    st = &w->status[w->nstatus];
    *st = (struct iom_status){
        .status = r->status, .ns = r->ns, .from_ns = r->window_start_ns, .to_ns = r->window_end_ns};
    if (!(st->node = iom_strdup(r->node))) {
        iom_nomem(s);
        return;
    }
    w->nstatus++;
}

/* The access spec of the current test, then the results header. */
/* interrupted: the test was stopped before the end of its window (a
 * comment line says so, which Iometer readers skip like the others). */
static void iom_test_head(struct iom_writer *w, const struct mgr_test_end *te)
{
    const struct iof_spec *sp = w->spec_index < w->nspecs ? &w->specs[w->spec_index] : NULL;

    fputs("'Access specifications" IOM_EOL, w->f);
    fputs("'Access specification name,default assignment" IOM_EOL, w->f);
    iom_fputname(w->f, sp ? sp->name : w->spec);
    fprintf(w->f, ",%d" IOM_EOL, IOM_ASSIGN_NONE);
    fputs("'size,% of size,% reads,% random,delay,burst,align,reply" IOM_EOL, w->f);
    for (size_t i = 0; sp && i < sp->nlines; i++) {
        const struct iof_line *l = &sp->lines[i];
        fprintf(w->f, "%" PRIu64 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",", l->size, l->share,
                l->read_pct, l->random_pct);
        if (l->delay_ns % IOF_NS_PER_MS == 0)
            fprintf(w->f, "%" PRIu64, (uint64_t)(l->delay_ns / IOF_NS_PER_MS));
        else
            fprintf(w->f, "%.6f", (double)l->delay_ns / 1e6);
        fprintf(w->f, ",%" PRIu32 ",%" PRIu64 ",0," IOM_EOL, l->burst,
                l->align == IOM_SECTOR ? 0
                : l->align             ? l->align
                                       : l->size);
    }
    fputs("'End access specifications" IOM_EOL, w->f);
    if (te && te->interrupted)
        fprintf(w->f,
                "'Interrupted: the test was stopped before the end of its measured window "
                "(%.3f s measured)" IOM_EOL,
                te->all ? (double)te->all->ns / 1e9 : 0.0);
    iom_status_lines(w, te);
    fputs("'Results" IOM_EOL IOM_HEADER IOM_EOL, w->f);
}

static void iom_test_tail(struct mgr_sink *s)
{
    struct iom_writer *w = s->priv;

    iom_write_recs(w);
    fputs("'Time Stamp" IOM_EOL, w->f);
    iom_timestamp(w->f, iof_wall_ns());
    mgr_sink_sync(s, w->f, true);
    w->in_test = false;
}

/* A test's rows came but no test_end: write them (without an ALL row) so
 * nothing received is lost. */
static void iom_flush_orphans(struct mgr_sink *s)
{
    struct iom_writer *w = s->priv;
    if (!w->nrecs && !w->nstatus)
        return;
    iom_test_head(w, NULL);
    iom_test_tail(s);
}

static void iom_note_test(struct iom_writer *w, const struct mgr_test_info *ti)
{
    w->in_test = true;
    w->spec_index = ti->test ? ti->test->spec_index : UINT32_MAX;
    snprintf(w->spec, sizeof(w->spec), "%s", ti->spec ? ti->spec : "");
}

static void iom_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    iom_flush_orphans(s);
    iom_note_test(s->priv, ti);
}

static void iom_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    (void)s; /* results.csv has no per-interval rows */
    (void)iv;
}

static void iom_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    struct iom_writer *w = s->priv;
    struct iom_buf b = {.t = IOF_BUF_INIT};
    struct iom_fig g = {.spec = ti ? ti->spec : NULL, .managers = -1, .workers = -1, .disks = -1};
    struct iom_common start = {0}, size = {0}, qd = {0};
    struct iom_rec rec = {0};
    size_t node, worker = 0;

    if (r->type == MGR_ROW_ALL || r->type == MGR_ROW_GROUP)
        return; /* the ALL row comes with test_end; Iometer's layout has no groups */
    /* Iometer's layout has no status column: a node whose status is not ok
     * is named on a comment line before 'Results. One that measured
     * nothing in the test (absent, lost before its first interval) has no
     * rows; a partial node's rows are kept, their rates over its own
     * window, as in every other file. */
    iom_note_status(s, r);
    if (r->status == MGR_STATUS_ABSENT || r->status == MGR_STATUS_LOST_BEFORE_START)
        return;
    node = iom_node(w, r->node);
    if (node == SIZE_MAX)
        goto nomem;
    if (r->type != MGR_ROW_NODE) {
        worker = iom_worker(w, node, r->worker);
        if (worker == SIZE_MAX)
            goto nomem;
    }
    g.raw = true;
    g.start = &start;
    g.size = &size;
    g.qd = &qd;
    switch (r->type) {
    case MGR_ROW_TARGET: {
        struct iom_worker *k = &w->workers[worker];
        struct iom_node *n = &w->nodes[node];
        uint64_t st = r->range_offset / IOM_SECTOR, sz = r->range_size / IOM_SECTOR;
        struct iom_common *sets[][3] = {{&start, &size, &qd},
                                        {&k->start, &k->size, &k->qd},
                                        {&n->start, &n->size, &n->qd},
                                        {&w->start, &w->size, &w->qd}};
        for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
            common_add(sets[i][0], st);
            common_add(sets[i][1], sz);
            common_add(sets[i][2], r->queue_depth);
        }
        g.type = "DISK";
        g.spec = NULL;
        rec.rank = 2;
        f_str(&b, g.type);
        f_str(&b, r->target);
        break;
    }
    case MGR_ROW_WORKER:
        g.type = "WORKER";
        g.disks = r->targets;
        g.start = &w->workers[worker].start;
        g.size = &w->workers[worker].size;
        g.qd = &w->workers[worker].qd;
        if (!g.qd->any) { /* no DISK row came: the row's own figure */
            common_add(&qd, r->queue_depth);
            g.qd = &qd;
        }
        rec.rank = 1;
        f_str(&b, g.type);
        f_worker_name(&b, r->worker);
        break;
    default: { /* NODE */
        struct iom_node *n = &w->nodes[node];
        g.type = "MANAGER";
        g.workers = r->workers;
        g.disks = r->targets;
        g.start = &n->start;
        g.size = &n->size;
        g.qd = &n->qd;
        g.cpu = true;
        if (r->cpu && r->cpu->valid) {
            n->cpu_known = true;
            n->busy = r->cpu->busy_pct;
            n->user = r->cpu->user_pct;
            n->sys = r->cpu->sys_pct;
        }
        g.cpu_known = n->cpu_known;
        g.busy = n->busy;
        g.user = n->user;
        g.sys = n->sys;
        rec.rank = 0;
        f_str(&b, g.type);
        f_str(&b, r->node);
        break;
    }
    }
    iom_fields(&b, &g, r->stats, r->ns, r->m);
    if (r->type == MGR_ROW_NODE && g.cpu_known)
        iom_processor(&b, &g);
    if (b.t.err || !iom_grow((void **)&w->recs, &w->caprecs, w->nrecs + 1, sizeof(*w->recs))) {
        iof_buf_free(&b.t);
        goto nomem;
    }
    rec.node = node;
    rec.worker = worker;
    rec.seq = w->nrecs;
    rec.text = iof_buf_take(&b.t, NULL);
    if (!rec.text)
        goto nomem;
    w->recs[w->nrecs++] = rec;
    return;
nomem:
    iom_nomem(s);
}

static void iom_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    struct iom_writer *w = s->priv;
    const struct mgr_row *all = te->all;

    if (!w->in_test && te->test) /* no test_begin came: take the spec from here */
        iom_note_test(w, te->test);
    iom_test_head(w, te);
    if (all && all->stats) {
        struct iom_buf b = {.t = IOF_BUF_INIT};
        struct iom_common qd = {0};
        struct iom_fig g = {.type = "ALL",
                            .spec = te->test ? te->test->spec : NULL,
                            .managers = all->nodes,
                            .workers = all->workers,
                            .disks = all->targets,
                            .cpu = true,
                            .start = &w->start,
                            .size = &w->size,
                            .qd = &w->qd};
        unsigned known = 0;

        if (!w->qd.any && all->queue_depth) {
            common_add(&qd, all->queue_depth);
            g.qd = &qd;
        }
        for (size_t i = 0; i < w->nnodes; i++) {
            if (!w->nodes[i].cpu_known)
                continue;
            known++;
            g.busy += w->nodes[i].busy;
            g.user += w->nodes[i].user;
            g.sys += w->nodes[i].sys;
        }
        if (known) {
            g.cpu_known = true;
            g.busy /= known;
            g.user /= known;
            g.sys /= known;
        }
        f_str(&b, "ALL");
        f_str(&b, "All");
        iom_fields(&b, &g, all->stats, all->ns, all->m);
        if (b.t.err)
            iom_nomem(s);
        else
            fputs(iof_buf_str(&b.t), w->f);
        iof_buf_free(&b.t);
    }
    iom_test_tail(s);
}

static void iom_run_end(struct mgr_sink *s, int exit_code)
{
    struct iom_writer *w = s->priv;

    iom_flush_orphans(s);
    /* Iometer marks a run whose tests all completed; I/O errors or a lost
     * agent (exit 1) still completed every test, an interrupt did not. */
    if (exit_code == 0 || exit_code == 1)
        fputs("'End Test" IOM_EOL, w->f);
    mgr_sink_sync(s, w->f, true);
}

static void iom_close(struct mgr_sink *s)
{
    struct iom_writer *w = s->priv;

    if (!w)
        return;
    if (w->f)
        iom_flush_orphans(s);
    mgr_sink_fclose(s, w->f);
    iom_clear_test(w);
    free(w->nodes);
    free(w->workers);
    free(w->recs);
    free(w->status);
    iom_free_specs(w);
    free(w);
    s->priv = NULL;
}

const struct mgr_sink_ops mgr_sink_iometer = {
    .name = "iometer-csv",
    .open = iom_open,
    .run_begin = iom_run_begin,
    .test_begin = iom_test_begin,
    .interval = iom_interval,
    .row = iom_row,
    .test_end = iom_test_end,
    .run_end = iom_run_end,
    .close = iom_close,
};
