/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/timeseries.c - the --timeseries writer: one CSV row per
 * interval per node as each agent reports it, then the cluster's ALL row
 * (node "ALL") once the interval is merged.
 *
 * Columns: TS_HEADER. The contract's 14 first, then extras: cycle, reported
 * (ALL: agents in the merge; node rows: 1), duration_s (the interval's
 * length: the last one of a test may be shorter) and the exact counts
 * read_ios, write_ios, bytes_read, bytes_written, so a script can sum
 * intervals without going through rounded rates; lost (node: 1 when the
 * agent could not keep the interval - its figures are then empty, not 0;
 * ALL: how many nodes lost it) and late (1 on an extra ALL row holding one
 * node's report that arrived after the interval's ALL row was written);
 * interrupted (1 on the interval the run's interruption cut short: its
 * duration_s is what was measured of it); dpc_pct, irq_pct, intr_per_s,
 * packets_per_s, packet_errors, retrans_per_s: the node figures of the
 * interval (proto_cpu's; ALL: the means of the nodes, known only when every
 * node that measured CPU had them), empty when unknown.
 * The ALL rows of a test add up exactly to its final ALL counts, but for
 * lost intervals.
 *
 * `interval` is 1-based, like `test`: interval n of a test covers the
 * measured window's (n-1)*I .. n*I and time_s is its end, in seconds since
 * the run started (so time_s - duration_s is its start). Rows of one test are
 * in arrival order, not necessarily sorted by interval.
 *
 * Quoting is RFC 4180 with LF line ends, as the --csv file. Latencies are
 * empty for an interval without I/O; cpu_pct is empty for a node that did not
 * measure CPU, and on ALL rows until a node of the test reported CPU (ALL's
 * value is the mean the run reports). Numbers are the interval's metrics,
 * computed once by manager/aggregate.c (mgr_metrics_compute() over merged
 * histograms): rates and % with %.3f, ms with %.6f, time_s %.3f.
 *
 * Durability: every row is flushed (not fsynced) as it is written; the file
 * is fsynced at test_end, run_end and close.
 */
#include "manager/sink.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "manager/metrics.h"

#define TS_HEADER                                                                                  \
    "time_s,test,spec,interval,node,iops,read_iops,write_iops,mibps,avg_lat_ms,p99_lat_ms,"        \
    "max_lat_ms,errors,cpu_pct,cycle,reported,duration_s,read_ios,write_ios,bytes_read,"           \
    "bytes_written,lost,late,interrupted,dpc_pct,irq_pct,intr_per_s,packets_per_s,packet_errors,"  \
    "retrans_per_s"

struct ts_writer {
    FILE *f;
    struct iof_buf line; /* the row being formatted, written whole */
    bool cpu_seen;       /* a node of the current test reported CPU */
};

static void ts_f(struct iof_buf *b, const char *lead, bool known, double v, int prec)
{
    iof_buf_addstr(b, lead);
    if (known)
        iof_buf_printf(b, "%.*f", prec, v);
}

static void ts_u64(struct iof_buf *b, bool known, uint64_t v)
{
    iof_buf_addc(b, ',');
    if (known)
        iof_buf_printf(b, "%" PRIu64, v);
}

static int ts_open(struct mgr_sink *s, const char *path, struct iof_diag *diag)
{
    int r = mgr_sink_open_writer(s, sizeof(struct ts_writer), diag);
    struct ts_writer *w = s->priv;

    (void)path; /* s->path */
    if (r)
        return r;
    w->f = s->out.f;
    fputs(TS_HEADER "\n", w->f);
    return 0;
}

static void ts_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    struct ts_writer *w = s->priv;

    (void)ti;
    w->cpu_seen = false;
}

static void ts_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct ts_writer *w = s->priv;
    const struct mgr_test_info *ti = iv->test;
    const struct iof_stats *st = iv->stats;
    struct iof_buf *b = &w->line;
    const struct mgr_metrics m = *iv->m;
    bool any = st->rd.ios + st->wr.ios > 0, cpu;
    /* A node's lost interval: its figures are unknown, not zeros. */
    bool known = !(iv->node && iv->lost), rates;

    if (iv->node)
        cpu = iv->cpu != NULL;
    else
        cpu = w->cpu_seen;
    w->cpu_seen |= iv->node && iv->cpu;
    rates = known && m.rates;
    any &= known;
    iof_buf_reset(b);
    iof_buf_printf(b, "%.3f,", iv->time_s);
    if (ti && ti->test)
        iof_buf_printf(b, "%u", ti->test->index + 1);
    iof_buf_addc(b, ',');
    mgr_csv_field(b, ti ? ti->spec : NULL);
    iof_buf_printf(b, ",%" PRIu64 ",", iv->k + 1);
    mgr_csv_field(b, iv->node ? iv->node : "ALL");
    ts_f(b, ",", rates, m.iops, 3);
    ts_f(b, ",", rates, m.read_iops, 3);
    ts_f(b, ",", rates, m.write_iops, 3);
    ts_f(b, ",", rates, m.mibps, 3);
    ts_f(b, ",", any, m.avg_ms, 6);
    ts_f(b, ",", any && m.percentiles, m.p99_ms, 6);
    ts_f(b, ",", any, m.max_ms, 6);
    ts_u64(b, known, m.errors);
    ts_f(b, ",", cpu, iv->cpu_busy_pct, 3);
    iof_buf_addc(b, ',');
    mgr_csv_field(b, ti ? ti->cycle : NULL);
    iof_buf_printf(b, ",%u", iv->reported);
    ts_f(b, ",", true, m.seconds, 6);
    ts_u64(b, known, m.read_ios);
    ts_u64(b, known, m.write_ios);
    ts_u64(b, known, m.bytes_read);
    ts_u64(b, known, m.bytes_written);
    iof_buf_printf(b, ",%u,%d,%d", iv->lost, iv->late ? 1 : 0, iv->interrupted ? 1 : 0);
    {
        /* The node figures: the node's, ALL's the aggregate's means (known
         * only when every node that measured CPU had them). */
        const struct proto_cpu *c = iv->cpu;
        bool node = known && c && c->valid && c->node_valid;
        double v[PROTO_CPU_NODE_N] = {0};
        if (node)
            proto_cpu_node_values(c, v);
        for (size_t i = 0; i < PROTO_CPU_NODE_N; i++)
            ts_f(b, ",", node, v[i], 3);
    }
    iof_buf_addc(b, '\n');
    if (b->err) {
        if (!s->write_error)
            s->write_error = b->err;
        return;
    }
    fwrite(b->p, 1, b->len, w->f);
    mgr_sink_sync(s, w->f, false);
}

static void ts_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    (void)s;
    (void)ti;
    (void)r;
}

static void ts_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    struct ts_writer *w = s->priv;

    (void)te;
    mgr_sink_sync(s, w->f, true);
}

static void ts_run_end(struct mgr_sink *s, int exit_code)
{
    struct ts_writer *w = s->priv;

    (void)exit_code;
    mgr_sink_sync(s, w->f, true);
}

static void ts_close(struct mgr_sink *s)
{
    struct ts_writer *w = s->priv;

    if (!w)
        return;
    iof_buf_free(&w->line);
    mgr_sink_close_writer(s);
}

const struct mgr_sink_ops mgr_sink_timeseries = {
    .name = "timeseries",
    .open = ts_open,
    .run_begin = mgr_sink_publish_begin,
    .test_begin = ts_test_begin,
    .interval = ts_interval,
    .row = ts_row,
    .test_end = ts_test_end,
    .run_end = ts_run_end,
    .close = ts_close,
};
