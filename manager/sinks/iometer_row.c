/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/iometer_row.c - what the two Iometer writers share
 * (manager/sinks/iometer.h): one row's fields, the latency bins, the run's
 * and a test's comment blocks, all as Iometer 1.1.0 writes them. Where each
 * rule comes from is in manager/sinks/iometer_csv.c's comment. */
#include "manager/sinks/iometer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

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

void iom_f_str(struct iom_buf *b, const char *s)
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

void iom_common_add(struct iom_common *c, uint64_t v)
{
    if (!c->any) {
        c->any = true;
        c->v = v;
    } else if (c->v != v) {
        c->mixed = true;
    }
}

/* "Worker N" for our "wN-1"; any other name as it is. */
void iom_f_worker_name(struct iom_buf *b, const char *w)
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
void iom_timestamp(FILE *f, uint64_t wall_ns)
{
    time_t t = (time_t)(wall_ns / IOF_NS_PER_S);
    unsigned ms = (unsigned)(wall_ns / IOF_NS_PER_MS % 1000);
    struct tm tm;

    if (!localtime_r(&t, &tm))
        memset(&tm, 0, sizeof(tm));
    fprintf(f, "%04d-%02d-%02d %02d:%02d:%02d:%03u" IOM_EOL, tm.tm_year + 1900, tm.tm_mon + 1,
            tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void iom_fputname(FILE *f, const char *s)
{
    for (; s && *s; s++)
        fputc(strchr(",\r\n", *s) ? ' ' : *s, f);
}

/* "YYYY-MM-DD hh:mm:ss:mmm," in local time: the TimeStamp field that leads
 * a row of the instantaneous file. */
static void iom_fmt_time(char *buf, size_t cap, uint64_t wall_ns)
{
    time_t t = (time_t)(wall_ns / IOF_NS_PER_S);
    unsigned ms = (unsigned)(wall_ns / IOF_NS_PER_MS % 1000);
    struct tm tm;

    if (!localtime_r(&t, &tm))
        memset(&tm, 0, sizeof(tm));
    snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d:%03u", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void iom_f_timestamp(struct iom_buf *b, uint64_t wall_ns)
{
    char ts[64];

    iom_fmt_time(ts, sizeof(ts), wall_ns);
    fld(b);
    iof_buf_addstr(&b->t, ts);
}

void iom_timestamp_field(FILE *f, uint64_t wall_ns)
{
    char ts[64];

    iom_fmt_time(ts, sizeof(ts), wall_ns);
    fprintf(f, "%s,", ts);
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

static void f_count(struct iom_buf *b, int64_t v)
{
    if (v < 0)
        f_empty(b);
    else
        f_i64(b, v);
}

/* Appends the fields after the name: 78 of the 80. */
void iom_fields(struct iom_buf *b, const struct iom_fig *g, const struct iof_stats *s, uint64_t ns,
                const struct mgr_metrics *mm)
{
    const struct mgr_metrics m = *mm;
    struct iof_hist *all = malloc(sizeof(*all));
    uint64_t bins[IOM_NBINS];
    double sec = (double)ns / 1e9;
    double max_ms, rd_max_ms, wr_max_ms;
    bool rd = s->rd.lat.count > 0, wr = s->wr.lat.count > 0, any = rd || wr, node;

    if (!all) {
        b->t.err = -ENOMEM;
        return;
    }
    iof_stats_lat_all(s, all);
    max_ms = (double)all->max_ns / 1e6;
    rd_max_ms = (double)s->rd.lat.max_ns / 1e6;
    wr_max_ms = (double)s->wr.lat.max_ns / 1e6;

    if (g->spec)
        iom_f_str(b, g->spec);
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
    node = g->cpu && g->cpu_known && g->node_known;
    f_dbl_if(b, node, g->dpc); /* % DPC Time: softirq */
    f_dbl_if(b, node, g->irq); /* % Interrupt Time: irq */
    if (g->raw)
        f_dbl(b, IOM_TICKS_PER_S); /* Processor Speed: the raw times' ticks per second */
    else
        f_empty(b);
    f_dbl_if(b, node, g->intr_s); /* Interrupts per Second */
    if (g->cpu && g->cpu_known && m.rates && g->busy > 0)
        f_dbl(b, m.iops / g->busy); /* CPU Effectiveness */
    else
        f_empty(b);
    f_dbl_if(b, node, g->packets_s);
    f_dbl_if(b, node, g->packet_errors);
    f_dbl_if(b, node, g->retrans_s);
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

void iom_fig_cpu(struct iom_fig *g, const struct proto_cpu *c)
{
    g->cpu_known = c && c->valid;
    g->node_known = g->cpu_known && c->node_valid;
    g->busy = g->cpu_known ? c->busy_pct : 0;
    g->user = g->cpu_known ? c->user_pct : 0;
    g->sys = g->cpu_known ? c->sys_pct : 0;
    g->dpc = g->node_known ? c->dpc_pct : 0;
    g->irq = g->node_known ? c->irq_pct : 0;
    g->intr_s = g->node_known ? c->intr_per_s : 0;
    g->packets_s = g->node_known ? c->packets_per_s : 0;
    g->packet_errors = g->node_known ? c->packet_errors : 0;
    g->retrans_s = g->node_known ? c->retrans_per_s : 0;
}

/* Iometer's PROCESSOR row after a MANAGER row (Manager::SaveResults):
 * "PROCESSOR,CPU n", 46 empty fields, the five CPU figures, the timer
 * resolution, interrupts per second, and empty CPU Effectiveness and
 * network fields: 59 fields, no latency bins. Iometer writes one per
 * processor, as iom_processor_cpu does from an agent of protocol 1.7; from
 * an older one (or a Windows agent) the node as a whole is one row, named
 * IOM_CPU_NAME, holding the node's figures (the mean of its CPUs). */
static void iom_processor_line(struct iom_buf *b, const char *name, const double v[5], bool node,
                               bool intr, double intr_s)
{
    b->nf = 0;
    iom_f_str(b, "PROCESSOR");
    iom_f_str(b, name);
    for (int i = 0; i < IOM_CPU_GAP; i++)
        f_empty(b);
    f_dbl(b, v[0]);
    f_dbl(b, v[1]);
    f_dbl(b, v[2]);
    f_dbl_if(b, node, v[3]);
    f_dbl_if(b, node, v[4]);
    f_dbl(b, IOM_TICKS_PER_S); /* Processor Speed */
    f_dbl_if(b, intr, intr_s);
    f_empty(b); /* CPU Effectiveness: Iometer leaves it empty here */
    for (int i = 0; i < 3; i++)
        f_empty(b); /* Packets/Second, Packet Errors, Segments Retransmitted/Second */
    iof_buf_addstr(&b->t, IOM_EOL);
}

void iom_processor(struct iom_buf *b, const struct iom_fig *g)
{
    const double v[5] = {g->busy, g->user, g->sys, g->dpc, g->irq};
    iom_processor_line(b, IOM_CPU_NAME, v, g->node_known, g->node_known, g->intr_s);
}

void iom_processor_cpu(struct iom_buf *b, const struct proto_cpu_one *c)
{
    const double v[5] = {c->busy_pct, c->user_pct, c->sys_pct, c->dpc_pct, c->irq_pct};
    char name[32];
    snprintf(name, sizeof(name), "CPU %" PRIu32, c->id);
    iom_processor_line(b, name, v, true, false, 0);
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

void iom_run_head(FILE *f, const struct iof_plan *p, uint64_t wall_ns)
{
    fputs("'Test Type,Test Description" IOM_EOL, f);
    fprintf(f, "%d,", iom_test_type(p ? p->cycle.param : IOF_CYCLE_NONE));
    iom_fputname(f, p ? p->name : "");
    fputs(IOM_EOL "'Version" IOM_EOL IOM_VERSION IOM_EOL "'Time Stamp" IOM_EOL, f);
    iom_timestamp(f, wall_ns);
}

void iom_spec_block(FILE *f, const struct iof_spec *sp, const char *name)
{
    fputs("'Access specifications" IOM_EOL, f);
    fputs("'Access specification name,default assignment" IOM_EOL, f);
    iom_fputname(f, sp ? sp->name : name);
    fprintf(f, ",%d" IOM_EOL, IOM_ASSIGN_NONE);
    fputs("'size,% of size,% reads,% random,delay,burst,align,reply" IOM_EOL, f);
    for (size_t i = 0; sp && i < sp->nlines; i++) {
        const struct iof_line *l = &sp->lines[i];
        fprintf(f, "%" PRIu64 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",", l->size, l->share,
                l->read_pct, l->random_pct);
        if (l->delay_ns % IOF_NS_PER_MS == 0)
            fprintf(f, "%" PRIu64, (uint64_t)(l->delay_ns / IOF_NS_PER_MS));
        else
            fprintf(f, "%.6f", (double)l->delay_ns / 1e6);
        fprintf(f, ",%" PRIu32 ",%" PRIu64 ",0," IOM_EOL, l->burst,
                l->align == IOM_SECTOR ? 0
                : l->align             ? l->align
                                       : l->size);
    }
    fputs("'End access specifications" IOM_EOL, f);
}
