/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/csv.c - the --csv writer: plain CSV, one header line, one row
 * per test x entity (ALL, GROUP, NODE, WORKER, TARGET).
 *
 * Format: RFC 4180 quoting (a field holding a comma, quote, CR or LF is
 * quoted, quotes doubled), records end with LF. The columns are CSV_HEADER:
 * the product contract's 31 first, then extras. `test` is 1-based; `cycle` is
 * the cycle label ("queue_depth=8") or empty. A value that does not apply to a
 * row is an empty field, never a made-up 0: node/worker/target above the
 * row's level, CPU figures on WORKER and TARGET rows (and on NODE/ALL when the
 * node did not measure CPU), latencies of a direction without I/O,
 * queue_depth on NODE rows, start_skew_ms outside the ALL row (and on it when
 * no node delivered a result), rates of a row without a window (absent,
 * lost-before-start), percentiles of a row whose histograms have no buckets
 * (WORKER and TARGET rows of a partial node). `status` is the row's
 * mgr_row_status name, window_start_s/window_end_s the part of the test's
 * measured window it covers (empty for absent). avg_svc_lat_ms,
 * max_svc_lat_ms and late_ios are those of rated workers (empty without);
 * `group` the worker group's name (GROUP, WORKER and TARGET rows); the
 * lateness_* columns the lateness of rated I/O on ALL and NODE rows (empty
 * when unknown or on other rows; percentiles also when it counted none),
 * in us %.3f; dpc_pct, irq_pct, intr_per_s, packets_per_s, packet_errors
 * and retrans_per_s the node figures of ALL and NODE rows (proto_cpu's,
 * protocol 1.6; ALL: the aggregate's means, known only when every node that
 * measured CPU had them), empty when unknown (an older or Windows agent).
 * Counts are
 * integers; rates and percentages %.3f, times in ms %.6f, duration_s %.6f.
 * All figures come from the row's metrics (mgr_metrics_compute() over merged
 * histograms, computed once by manager/aggregate.c).
 *
 * cpu_pct is the node's busy % (ALL: the mean the run reports); user_pct,
 * sys_pct and agent_cpu_pct of ALL are means over the nodes that measured
 * CPU, as the aggregate hands them (the ALL row's mgr_row.cpu); cpu_effectiveness is iops /
 * cpu_pct, as Iometer's "CPU effectiveness".
 *
 * Order and durability: a test's NODE/WORKER/TARGET rows arrive as each
 * agent's result comes in; they are kept as formatted text (never as
 * iof_stats: a 1000-node run must not hold histograms) and written when
 * test_end brings the ALL row: ALL first, then per node (in the order NODE
 * rows arrived) the NODE row, its WORKER rows, each followed by its TARGET
 * rows; then the file is fsynced. Rows whose parent row never came follow, in
 * arrival order. Rows of a test that got no test_end (the run ended first)
 * are written in the same order without an ALL row at the next test_begin,
 * run_end or close, so nothing received is lost.
 */
#include "manager/sink.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "manager/metrics.h"

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

/* CPU figures of one row; known false prints empty fields, node false
 * the node figures' (dpc_pct .. retrans_per_s). */
struct csv_cpu {
    bool known;
    double busy, user, sys, agent;
    bool node;
    double node_v[PROTO_CPU_NODE_N]; /* proto_cpu_node_values' order */
};

/* The node figures of c (NULL, not measured or without them: unknown). */
static void csv_cpu_node(struct csv_cpu *cpu, const struct proto_cpu *c)
{
    cpu->node = cpu->known && c && c->valid && c->node_valid;
    if (!cpu->node)
        return;
    proto_cpu_node_values(c, cpu->node_v);
}

/* One buffered row: offsets into the test's text buffer. */
struct csv_rec {
    enum mgr_row_type type;
    size_t seq;          /* arrival order */
    size_t node, worker; /* NUL-terminated names ("" when absent) */
    size_t text, len;    /* the formatted CSV record, LF included */
    size_t nkey, wkey;   /* grouping keys, computed when written */
};

struct csv_writer {
    FILE *f;
    struct iof_buf line; /* the record being formatted */
    /* the current test's rows: names and records in text, offsets in recs */
    struct iof_buf text;
    struct csv_rec *recs;
    size_t nrecs, caprecs;
};

static void put_sep(struct iof_buf *b)
{
    iof_buf_addc(b, ',');
}

static void put_u64(struct iof_buf *b, uint64_t v)
{
    iof_buf_printf(b, ",%" PRIu64, v);
}

static void put_3(struct iof_buf *b, bool known, double v)
{
    if (known)
        iof_buf_printf(b, ",%.3f", v);
    else
        put_sep(b);
}

static void put_6(struct iof_buf *b, bool known, double v)
{
    if (known)
        iof_buf_printf(b, ",%.6f", v);
    else
        put_sep(b);
}

static void put_name(struct iof_buf *b, const char *s)
{
    put_sep(b);
    mgr_csv_field(b, s);
}

/* Appends one record (LF-terminated). skew is printed when non-NULL. */
static void csv_format(struct iof_buf *b, const struct mgr_test_info *ti, const struct mgr_row *r,
                       const struct csv_cpu *cpu, const double *skew_ms)
{
    const struct iof_stats *st = r->stats;
    const struct mgr_metrics m = *r->m;
    bool any, rd, wr, pct;

    rd = st->rd.ios > 0;
    wr = st->wr.ios > 0;
    any = rd || wr;
    if (ti && ti->test)
        iof_buf_printf(b, "%u", ti->test->index + 1);
    put_name(b, ti ? ti->spec : NULL);
    put_name(b, ti ? ti->cycle : NULL);
    put_name(b, mgr_row_type_name(r->type));
    put_name(b, r->type == MGR_ROW_ALL ? NULL : r->node);
    put_name(b, r->type == MGR_ROW_WORKER || r->type == MGR_ROW_TARGET ? r->worker : NULL);
    put_name(b, r->type == MGR_ROW_TARGET ? r->target : NULL);
    if (r->queue_depth && r->type != MGR_ROW_NODE)
        iof_buf_printf(b, ",%" PRIu32, r->queue_depth);
    else
        put_sep(b);
    put_6(b, true, m.seconds);
    put_3(b, m.rates, m.iops);
    put_3(b, m.rates, m.read_iops);
    put_3(b, m.rates, m.write_iops);
    put_3(b, m.rates, m.mibps);
    put_3(b, m.rates, m.read_mibps);
    put_3(b, m.rates, m.write_mibps);
    put_6(b, any, m.avg_ms);
    put_6(b, rd, m.avg_read_ms);
    put_6(b, wr, m.avg_write_ms);
    pct = any && m.percentiles;
    put_6(b, pct, m.p50_ms);
    put_6(b, pct, m.p90_ms);
    put_6(b, pct, m.p95_ms);
    put_6(b, pct, m.p99_ms);
    put_6(b, pct, m.p999_ms);
    put_6(b, pct, m.p9999_ms);
    put_6(b, any, m.max_ms);
    put_u64(b, m.read_ios);
    put_u64(b, m.write_ios);
    put_u64(b, m.bytes_read);
    put_u64(b, m.bytes_written);
    put_u64(b, m.errors);
    put_3(b, cpu->known, cpu->busy);
    put_u64(b, st->rd.errors);
    put_u64(b, st->wr.errors);
    put_3(b, cpu->known, cpu->user);
    put_3(b, cpu->known, cpu->sys);
    put_3(b, cpu->known, cpu->agent);
    put_3(b, cpu->known && cpu->busy > 0 && m.rates, cpu->busy > 0 ? m.iops / cpu->busy : 0);
    put_3(b, skew_ms != NULL, skew_ms ? *skew_ms : 0);
    put_u64(b, r->nodes);
    put_u64(b, r->workers);
    put_u64(b, r->targets);
    put_name(b, mgr_row_status_name(r->status));
    /* absent: no window at all */
    put_6(b, r->status != MGR_STATUS_ABSENT, (double)r->window_start_ns / 1e9);
    put_6(b, r->status != MGR_STATUS_ABSENT, (double)r->window_end_ns / 1e9);
    /* workers[].rate: empty for rows without rated I/O */
    put_6(b, m.rated && st->rated.svc.count, m.avg_svc_ms);
    put_6(b, m.rated && st->rated.svc.count, m.max_svc_ms);
    if (m.rated)
        put_u64(b, m.late_ios);
    else
        put_sep(b);
    put_name(b, r->type == MGR_ROW_GROUP || r->type == MGR_ROW_WORKER || r->type == MGR_ROW_TARGET
                    ? r->group
                    : NULL);
    put_u64(b, st->verify_errors);
    put_u64(b, ti && ti->interrupted);
    put_u64(b, st->verify_bad_reads);
    put_u64(b, st->verify_overlaid);
    /* The lateness of rated I/O (ALL and NODE rows whose agents report it) */
    if (m.lateness.known) {
        put_u64(b, m.lateness.count);
        put_u64(b, m.lateness.over_20us);
    } else {
        put_sep(b);
        put_sep(b);
    }
    put_3(b, m.lateness.known && m.lateness.count, m.lateness.over_20us_pct);
    put_3(b, m.lateness.known && m.lateness.count, m.lateness.avg_us);
    put_3(b, m.lateness.known && m.lateness.count, m.lateness.p50_us);
    put_3(b, m.lateness.known && m.lateness.count, m.lateness.p99_us);
    put_3(b, m.lateness.known && m.lateness.count, m.lateness.p999_us);
    put_3(b, m.lateness.known && m.lateness.count, m.lateness.max_us);
    /* The node figures (ALL and NODE rows whose agents send them) */
    for (size_t i = 0; i < PROTO_CPU_NODE_N; i++)
        put_3(b, cpu->node, cpu->node_v[i]);
    iof_buf_addc(b, '\n');
}

static void csv_fail(struct mgr_sink *s, int err)
{
    if (!s->write_error)
        s->write_error = err;
}

/* --- ordering of a test's buffered rows ------------------------------------------------ */

static int cmp_node(const void *a, const void *b, void *arg)
{
    const struct csv_writer *w = arg;
    const struct csv_rec *x = &w->recs[*(const size_t *)a], *y = &w->recs[*(const size_t *)b];
    int c = strcmp(w->text.p + x->node, w->text.p + y->node);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_worker(const void *a, const void *b, void *arg)
{
    const struct csv_writer *w = arg;
    const struct csv_rec *x = &w->recs[*(const size_t *)a], *y = &w->recs[*(const size_t *)b];
    int c = strcmp(w->text.p + x->node, w->text.p + y->node);
    if (!c)
        c = strcmp(w->text.p + x->worker, w->text.p + y->worker);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* 0 for the row that heads its group, 1 for the rows under it. */
static int csv_rank(enum mgr_row_type t, enum mgr_row_type head)
{
    return t == head ? 0 : 1;
}

static int cmp_output(const void *a, const void *b)
{
    const struct csv_rec *x = a, *y = b;
    int c;
#define CSV_CMP(u, v)                                                                              \
    if ((c = ((u) > (v)) - ((u) < (v))) != 0)                                                      \
    return c
    CSV_CMP(x->type != MGR_ROW_GROUP, y->type != MGR_ROW_GROUP); /* GROUP rows right after ALL */
    CSV_CMP(x->nkey, y->nkey);
    CSV_CMP(csv_rank(x->type, MGR_ROW_NODE), csv_rank(y->type, MGR_ROW_NODE));
    CSV_CMP(x->wkey, y->wkey);
    CSV_CMP(csv_rank(x->type, MGR_ROW_WORKER), csv_rank(y->type, MGR_ROW_WORKER));
    CSV_CMP(x->seq, y->seq);
#undef CSV_CMP
    return 0;
}

static bool csv_same_group(const struct csv_writer *w, size_t a, size_t b, bool by_worker)
{
    const struct csv_rec *x = &w->recs[a], *y = &w->recs[b];
    if (strcmp(w->text.p + x->node, w->text.p + y->node))
        return false;
    return !by_worker || !strcmp(w->text.p + x->worker, w->text.p + y->worker);
}

/* idx[0..n) is sorted by name then arrival: every record of a run of equal
 * names (node, or node+worker when by_worker) gets as key the seq of the
 * run's first `head` row, or nrecs + seq of the run's first record when it
 * has none (orphans go after every complete group, in arrival order). */
static void csv_assign_keys(struct csv_writer *w, const size_t *idx, size_t n,
                            enum mgr_row_type head, bool by_worker)
{
    for (size_t i = 0, j; i < n; i = j) {
        size_t key = w->nrecs + w->recs[idx[i]].seq;
        bool found = false;
        for (j = i; j < n && csv_same_group(w, idx[i], idx[j], by_worker); j++) {
            if (!found && w->recs[idx[j]].type == head) {
                key = w->recs[idx[j]].seq;
                found = true;
            }
        }
        for (size_t k = i; k < j; k++) {
            if (by_worker)
                w->recs[idx[k]].wkey = key;
            else
                w->recs[idx[k]].nkey = key;
        }
    }
}

/* Writes the buffered rows in output order and forgets them. */
static void csv_write_rows(struct mgr_sink *s, struct csv_writer *w)
{
    size_t *idx = NULL, n = 0;

    if (!w->nrecs)
        return;
    if ((idx = malloc(w->nrecs * sizeof(*idx))) != NULL) {
        for (size_t i = 0; i < w->nrecs; i++)
            idx[i] = i;
        qsort_r(idx, w->nrecs, sizeof(*idx), cmp_node, w);
        csv_assign_keys(w, idx, w->nrecs, MGR_ROW_NODE, false);
        for (size_t i = 0; i < w->nrecs; i++)
            if (w->recs[i].type == MGR_ROW_WORKER || w->recs[i].type == MGR_ROW_TARGET)
                idx[n++] = i;
            else
                w->recs[i].wkey = 0;
        qsort_r(idx, n, sizeof(*idx), cmp_worker, w);
        csv_assign_keys(w, idx, n, MGR_ROW_WORKER, true);
        qsort(w->recs, w->nrecs, sizeof(*w->recs), cmp_output);
    } else {
        csv_fail(s, -ENOMEM); /* still write them, in arrival order */
    }
    for (size_t i = 0; i < w->nrecs; i++)
        fwrite(w->text.p + w->recs[i].text, 1, w->recs[i].len, w->f);
    free(idx);
    iof_buf_reset(&w->text);
    w->nrecs = 0;
}

/* --- sink operations -------------------------------------------------------------------- */

static int csv_open(struct mgr_sink *s, const char *path, struct iof_diag *diag)
{
    int r = mgr_sink_open_writer(s, sizeof(struct csv_writer), diag);
    struct csv_writer *w = s->priv;

    (void)path; /* s->path */
    if (r)
        return r;
    w->f = s->out.f;
    fputs(CSV_HEADER "\n", w->f);
    return 0;
}

static void csv_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    struct csv_writer *w = s->priv;

    (void)ti;
    if (w->nrecs) { /* the previous test never ended */
        csv_write_rows(s, w);
        mgr_sink_sync(s, w->f, true);
    }
}

static void csv_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    (void)s;
    (void)iv;
}

static bool csv_reserve(struct csv_writer *w)
{
    return iof_array_grow((void **)&w->recs, &w->caprecs, w->nrecs + 1, sizeof(*w->recs)) == 0;
}

/* Appends s and its NUL to the test's text; returns its offset. */
static size_t text_put_name(struct iof_buf *text, const char *s)
{
    size_t at = text->len;
    iof_buf_addstr(text, s);
    iof_buf_add(text, "", 1);
    return at;
}

static void csv_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    struct csv_writer *w = s->priv;
    struct csv_cpu cpu = {0};
    struct csv_rec *rec;

    if (r->type == MGR_ROW_NODE && r->cpu) {
        cpu = (struct csv_cpu){.known = true,
                               .busy = r->cpu_busy_pct,
                               .user = r->cpu->user_pct,
                               .sys = r->cpu->sys_pct,
                               .agent = r->cpu->agent_pct};
        csv_cpu_node(&cpu, r->cpu);
    }
    iof_buf_reset(&w->line);
    csv_format(&w->line, ti, r, &cpu, NULL);
    if (w->line.err) {
        csv_fail(s, w->line.err);
        return;
    }
    if (!csv_reserve(w)) { /* out of memory: keep the row, out of order */
        csv_fail(s, -ENOMEM);
        fwrite(w->line.p, 1, w->line.len, w->f);
        return;
    }
    rec = &w->recs[w->nrecs];
    rec->type = r->type;
    rec->seq = w->nrecs;
    rec->node = text_put_name(&w->text, r->node);
    rec->worker = text_put_name(&w->text, r->type == MGR_ROW_NODE ? NULL : r->worker);
    rec->text = w->text.len;
    rec->len = w->line.len;
    if (iof_buf_add(&w->text, w->line.p, w->line.len)) { /* as above */
        csv_fail(s, -ENOMEM);
        fwrite(w->line.p, 1, w->line.len, w->f);
        return;
    }
    w->nrecs++;
}

static void csv_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    struct csv_writer *w = s->priv;
    struct csv_cpu cpu = {0};

    /* The aggregate's one rule (mgr_agg_cpu_mean): the means over the nodes
     * that measured CPU, the node figures only when every one of them had
     * them; never restated here. */
    if (te->all->cpu && te->all->cpu->valid)
        cpu = (struct csv_cpu){.known = true,
                               .busy = te->all->cpu_busy_pct,
                               .user = te->all->cpu->user_pct,
                               .sys = te->all->cpu->sys_pct,
                               .agent = te->all->cpu->agent_pct};
    csv_cpu_node(&cpu, te->all->cpu);
    /* no node delivered a result: the skew is unknown, not 0 */
    iof_buf_reset(&w->line);
    csv_format(&w->line, te->test, te->all, &cpu, te->nodes ? &te->start_skew_ms : NULL);
    if (w->line.err)
        csv_fail(s, w->line.err);
    else
        fwrite(w->line.p, 1, w->line.len, w->f);
    csv_write_rows(s, w);
    mgr_sink_sync(s, w->f, true);
}

static void csv_run_end(struct mgr_sink *s, int exit_code)
{
    struct csv_writer *w = s->priv;

    (void)exit_code;
    csv_write_rows(s, w);
    mgr_sink_sync(s, w->f, true);
}

static void csv_close(struct mgr_sink *s)
{
    struct csv_writer *w = s->priv;

    if (!w)
        return;
    csv_write_rows(s, w);
    iof_buf_free(&w->line);
    iof_buf_free(&w->text);
    free(w->recs);
    mgr_sink_close_writer(s);
}

const struct mgr_sink_ops mgr_sink_csv = {
    .name = "csv",
    .open = csv_open,
    .run_begin = mgr_sink_publish_begin,
    .test_begin = csv_test_begin,
    .interval = csv_interval,
    .row = csv_row,
    .test_end = csv_test_end,
    .run_end = csv_run_end,
    .close = csv_close,
};
