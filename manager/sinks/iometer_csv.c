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
 *     PROCESSOR row per CPU (59 fields: see iom_processor; "CPU 0", "CPU 1",
 *     ... from an agent of protocol 1.7, which sends each CPU's figures; from
 *     an older or Windows agent one row, "All CPUs", when the node measured
 *     its CPU), then its workers; src/Worker.cpp, Worker::SaveResults: the WORKER
 *     row, then one DISK row per active target.
 *   - src/GalileoView.cpp, CGalileoView::TestDone: 'End Test when all tests
 *     completed; CGalileoView::SaveResults: doubles as fixed with 6 decimals.
 *   - src/IOGrunt.cpp, Grunt_Thread_Wrapper and Grunt::Record_IO: the latency
 *     bins (see iom_edge_ns in manager/sinks/iometer_row.c, which formats the
 *     rows of this file and of --iometer-instant).
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
 *     measured CPU, as the aggregate hands it: mgr_row.cpu of the ALL row,
 *     the one rule every file shows), CPU Effectiveness = IOps / % CPU Utilization. From an
 *     agent of protocol 1.6 on Linux (proto_cpu's node figures): % DPC Time
 *     = softirq, % Interrupt Time = irq (shares of the ticks, as % CPU),
 *     Interrupts per Second (/proc/stat intr), Packets/Second and Packet
 *     Errors (a count in the row's window) of the interfaces but lo, Segments
 *     Retransmitted/Second (Tcp RetransSegs); ALL: the means, known only when
 *     every node that measured CPU had them. What is not known is empty,
 *     never a made-up 0: those of an older or Windows agent, and the CPU
 *     columns of a node without CPU data.
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
#include "manager/sinks/iometer.h"

struct iom_node {
    char *name;
    struct iom_common start, size, qd;
    struct proto_cpu cpu; /* the node's, once a row brought it (valid: known) */
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
    int r = mgr_sink_open_writer(s, sizeof(struct iom_writer), diag);

    (void)path; /* s->path */
    if (!r)
        ((struct iom_writer *)s->priv)->f = s->out.f;
    return r;
}

static void iom_free_specs(struct iom_writer *w)
{
    for (size_t i = 0; i < w->nspecs; i++)
        free(w->specs[i].lines);
    free(w->specs);
    w->specs = NULL;
    w->nspecs = 0;
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
    iom_run_head(w->f, p, ri->start_wall_ns ? ri->start_wall_ns : iof_wall_ns());
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

    iom_spec_block(w->f, sp, w->spec);
    if (te && te->interrupted)
        fprintf(w->f,
                "'Interrupted: the test was stopped before the end of its measured window "
                "(%.3f s measured)" IOM_EOL,
                te->all ? (double)te->all->ns / 1e9 : 0.0);
    iom_status_lines(w, te);
    fputs("'Results" IOM_EOL IOM_HEADER IOM_EOL, w->f);
}

/* wall_ns: the test's end (mgr_test_end.end_wall_ns, so a run written
 * again from the history has the same stamp); 0: now. */
static void iom_test_tail(struct mgr_sink *s, uint64_t wall_ns)
{
    struct iom_writer *w = s->priv;

    iom_write_recs(w);
    fputs("'Time Stamp" IOM_EOL, w->f);
    iom_timestamp(w->f, wall_ns ? wall_ns : iof_wall_ns());
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
    iom_test_tail(s, 0);
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
            iom_common_add(sets[i][0], st);
            iom_common_add(sets[i][1], sz);
            iom_common_add(sets[i][2], r->queue_depth);
        }
        g.type = "DISK";
        g.spec = NULL;
        rec.rank = 2;
        iom_f_str(&b, g.type);
        iom_f_str(&b, r->target);
        break;
    }
    case MGR_ROW_WORKER:
        g.type = "WORKER";
        g.disks = r->targets;
        g.start = &w->workers[worker].start;
        g.size = &w->workers[worker].size;
        g.qd = &w->workers[worker].qd;
        if (!g.qd->any) { /* no DISK row came: the row's own figure */
            iom_common_add(&qd, r->queue_depth);
            g.qd = &qd;
        }
        rec.rank = 1;
        iom_f_str(&b, g.type);
        iom_f_worker_name(&b, r->worker);
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
        if (r->cpu && r->cpu->valid)
            n->cpu = *r->cpu;
        iom_fig_cpu(&g, &n->cpu);
        rec.rank = 0;
        iom_f_str(&b, g.type);
        iom_f_str(&b, r->node);
        break;
    }
    }
    iom_fields(&b, &g, r->stats, r->ns, r->m);
    /* Its PROCESSOR rows: one per CPU as Iometer's, or (per-CPU figures
     * unknown: an agent before protocol 1.7, Windows) one for the node. */
    if (r->type == MGR_ROW_NODE && g.cpu_known && r->ncpus)
        for (size_t i = 0; i < r->ncpus; i++)
            iom_processor_cpu(&b, &r->cpus[i]);
    else if (r->type == MGR_ROW_NODE && g.cpu_known)
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

        if (!w->qd.any && all->queue_depth) {
            iom_common_add(&qd, all->queue_depth);
            g.qd = &qd;
        }
        /* The aggregate's one rule (mgr_agg_cpu_mean): the means over the
         * nodes that measured, the node figures only when every one of them
         * had them; never restated here. */
        iom_fig_cpu(&g, all->cpu);
        iom_f_str(&b, "ALL");
        iom_f_str(&b, "All");
        iom_fields(&b, &g, all->stats, all->ns, all->m);
        if (b.t.err)
            iom_nomem(s);
        else
            fputs(iof_buf_str(&b.t), w->f);
        iof_buf_free(&b.t);
    }
    iom_test_tail(s, te->end_wall_ns);
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
    iom_clear_test(w);
    free(w->nodes);
    free(w->workers);
    free(w->recs);
    free(w->status);
    iom_free_specs(w);
    mgr_sink_close_writer(s);
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
