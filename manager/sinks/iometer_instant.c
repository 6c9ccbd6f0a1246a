/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/iometer_instant.c - the --iometer-instant writer: Iometer
 * 1.1.0's instantaneous results file (what its "Record Last Update Results"
 * writes beside results.csv), so tools reading that file read this one.
 *
 * Where the layout comes from (iometer-org/iometer at 7243b4da, Iometer
 * 1.1.0):
 *   - src/GalileoView.cpp, CGalileoView::Go: the run's header lines, as in
 *     results.csv (CPageSetup::SaveResults: 'Test Type,Test Description ...
 *     'Time Stamp); CGalileoView::SaveAccessSpecs: each test's access
 *     specifications (AccessSpecList::SaveResults); CGalileoView::
 *     PrepareInstantaneousFile: then "'Results" and the header line, which
 *     starts with "TimeStamp," and names the binary rates "MBps (Binary)"
 *     (results.csv says "MiBps"), byte for byte below (INS_HEADER).
 *   - src/Worker.cpp, Worker::UpdateResults / SaveResultsInstantaneous: at
 *     each update, one row per worker target with that update's figures,
 *     led by the local time "YYYY-MM-DD hh:mm:ss:mmm". Our agents report
 *     each interval per node, so each interval gives one MANAGER row per
 *     node (Target Name the node), with that interval's figures and the
 *     node's CPU; an interval the agent could not keep is a comment line
 *     ("'Lost: ..."), its figures unknown, never zeros.
 *   - Worker::SaveResultsInstantaneousWorkerAverage and ManagerList::
 *     SaveResultsInstantaneous: at the end of a test, each worker's row over
 *     the whole test, then the ALL row, then "'Time Stamp" and the time;
 *     CGalileoView::TestDone: "'End Test" after the last test.
 * Every row's fields after the time stamp are results.csv's, filled as
 * --iometer-csv fills them (manager/sinks/iometer_row.c): 81 fields in all.
 * The time stamp of an interval row is the end of the interval (the run's
 * start plus its time), of the test's last rows the moment its results were
 * complete. Interval rows are flushed as they arrive; the file is fsynced
 * at each test end.
 */
#include "manager/sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "manager/sinks/iometer.h"

/* Iometer 1.1.0 src/GalileoView.cpp, CGalileoView::PrepareInstantaneousFile. */
#define INS_HEADER                                                                                 \
    "TimeStamp,'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,"   \
    "IOps,Read IOps,Write IOps,MBps (Binary),Read MBps (Binary),Write MBps "                       \
    "(Binary)," IOM_HEADER_TAIL

struct ins_writer {
    FILE *f;
    const struct iof_plan *plan; /* run_begin's, valid until close */
    uint64_t start_wall_ns;
    bool in_test; /* test_begin came, test_end not yet */
    /* The current test's WORKER rows, formatted without their time stamp
     * (each ends with IOM_EOL), written at test_end as Iometer does. */
    struct iof_buf workers;
    /* The targets of the worker whose TARGET rows came last (they precede
     * its WORKER row): its starting sector, size and queue depth. */
    char *cur_node, *cur_worker;
    struct iom_common start, size, qd;
};

static void ins_nomem(struct mgr_sink *s)
{
    if (!s->write_error)
        s->write_error = -ENOMEM;
}

static int ins_open(struct mgr_sink *s, const char *path, struct iof_diag *diag)
{
    int r = mgr_sink_open_writer(s, sizeof(struct ins_writer), diag);

    (void)path; /* s->path */
    if (!r)
        ((struct ins_writer *)s->priv)->f = s->out.f;
    return r;
}

static void ins_run_begin(struct mgr_sink *s, const struct mgr_run_info *ri)
{
    struct ins_writer *w = s->priv;

    w->plan = ri->plan;
    w->start_wall_ns = ri->start_wall_ns ? ri->start_wall_ns : iof_wall_ns();
    iom_run_head(w->f, ri->plan, w->start_wall_ns);
    mgr_sink_sync(s, w->f, false);
    mgr_sink_publish(s);
}

static void ins_forget_worker(struct ins_writer *w)
{
    free(w->cur_node);
    free(w->cur_worker);
    w->cur_node = w->cur_worker = NULL;
    memset(&w->start, 0, sizeof(w->start));
    memset(&w->size, 0, sizeof(w->size));
    memset(&w->qd, 0, sizeof(w->qd));
}

/* The test's end: its WORKER rows, the ALL row (when there is one) and
 * the time stamp, all at wall_ns. */
static void ins_test_tail(struct mgr_sink *s, const struct mgr_test_end *te, uint64_t wall_ns)
{
    struct ins_writer *w = s->priv;
    const char *p = iof_buf_str(&w->workers);

    for (const char *eol; p && *p; p = eol + strlen(IOM_EOL)) {
        eol = strstr(p, IOM_EOL);
        if (!eol)
            break;
        iom_timestamp_field(w->f, wall_ns);
        fwrite(p, 1, (size_t)(eol - p) + strlen(IOM_EOL), w->f);
    }
    if (te && te->all && te->all->stats) {
        const struct mgr_row *all = te->all;
        struct iom_common none = {0}, qd = {0};
        struct iom_buf b = {.t = IOF_BUF_INIT};
        struct iom_fig g = {.type = "ALL",
                            .spec = te->test ? te->test->spec : NULL,
                            .managers = all->nodes,
                            .workers = all->workers,
                            .disks = all->targets,
                            .cpu = true,
                            .start = &none,
                            .size = &none,
                            .qd = &qd};
        if (all->queue_depth)
            iom_common_add(&qd, all->queue_depth);
        iom_fig_cpu(&g, all->cpu);
        iom_f_timestamp(&b, wall_ns);
        iom_f_str(&b, "ALL");
        iom_f_str(&b, "All");
        iom_fields(&b, &g, all->stats, all->ns, all->m);
        if (b.t.err)
            ins_nomem(s);
        else
            fputs(iof_buf_str(&b.t), w->f);
        iof_buf_free(&b.t);
    }
    fputs("'Time Stamp" IOM_EOL, w->f);
    iom_timestamp(w->f, wall_ns);
    iof_buf_reset(&w->workers);
    ins_forget_worker(w);
    mgr_sink_sync(s, w->f, true);
    w->in_test = false;
}

static void ins_test_begin(struct mgr_sink *s, const struct mgr_test_info *ti)
{
    struct ins_writer *w = s->priv;
    const struct iof_spec *sp = NULL;

    if (w->in_test) /* the last test got no test_end: close it */
        ins_test_tail(s, NULL, iof_wall_ns());
    if (w->plan && ti->test && ti->test->spec_index < w->plan->nspecs)
        sp = &w->plan->specs[ti->test->spec_index];
    iom_spec_block(w->f, sp, ti->spec);
    fputs("'Results" IOM_EOL INS_HEADER IOM_EOL, w->f);
    mgr_sink_sync(s, w->f, false);
    w->in_test = true;
}

/* One node's interval: a MANAGER row led by the interval's end. The
 * cluster's merged interval has no row: Iometer's file has none. */
static void ins_interval(struct mgr_sink *s, const struct mgr_interval *iv)
{
    struct ins_writer *w = s->priv;
    struct iom_common none = {0};
    struct iom_buf b = {.t = IOF_BUF_INIT};
    struct iom_fig g = {.type = "MANAGER",
                        .spec = iv->test ? iv->test->spec : NULL,
                        .managers = -1,
                        .workers = -1,
                        .disks = -1,
                        .raw = true,
                        .cpu = true,
                        .start = &none,
                        .size = &none,
                        .qd = &none};
    uint64_t at = w->start_wall_ns + (uint64_t)(iv->time_s * 1e9);

    if (!iv->node || !w->in_test)
        return;
    if (iv->lost) {
        fputs("'Lost: MANAGER ", w->f);
        iom_fputname(w->f, iv->node);
        fprintf(w->f,
                " interval %llu: the agent could not keep it, its figures are unknown" IOM_EOL,
                (unsigned long long)iv->k + 1);
        mgr_sink_sync(s, w->f, false);
        return;
    }
    iom_fig_cpu(&g, iv->cpu);
    iom_f_timestamp(&b, at);
    iom_f_str(&b, "MANAGER");
    iom_f_str(&b, iv->node);
    iom_fields(&b, &g, iv->stats, iv->ns, iv->m);
    if (b.t.err)
        ins_nomem(s);
    else
        fputs(iof_buf_str(&b.t), w->f);
    iof_buf_free(&b.t);
    mgr_sink_sync(s, w->f, false);
}

/* WORKER rows are kept for the test's end; TARGET rows only lend their
 * region and queue depth to their worker's row. */
static void ins_row(struct mgr_sink *s, const struct mgr_test_info *ti, const struct mgr_row *r)
{
    struct ins_writer *w = s->priv;
    struct iom_common qd = {0};
    struct iom_buf b = {.t = IOF_BUF_INIT};
    struct iom_fig g = {.type = "WORKER",
                        .spec = ti ? ti->spec : NULL,
                        .managers = -1,
                        .workers = -1,
                        .disks = r->targets,
                        .raw = true,
                        .start = &w->start,
                        .size = &w->size,
                        .qd = &w->qd};
    bool same = w->cur_node && w->cur_worker && r->node && r->worker &&
                !strcmp(w->cur_node, r->node) && !strcmp(w->cur_worker, r->worker);

    if (r->status == MGR_STATUS_ABSENT || r->status == MGR_STATUS_LOST_BEFORE_START)
        return;
    if (r->type == MGR_ROW_TARGET) {
        if (!same) {
            ins_forget_worker(w);
            w->cur_node = strdup(r->node ? r->node : "");
            w->cur_worker = strdup(r->worker ? r->worker : "");
            if (!w->cur_node || !w->cur_worker) {
                ins_nomem(s);
                return;
            }
        }
        iom_common_add(&w->start, r->range_offset / IOM_SECTOR);
        iom_common_add(&w->size, r->range_size / IOM_SECTOR);
        iom_common_add(&w->qd, r->queue_depth);
        return;
    }
    if (r->type != MGR_ROW_WORKER)
        return;
    if (!same) { /* no TARGET row came: the row's own queue depth */
        ins_forget_worker(w);
        iom_common_add(&qd, r->queue_depth);
        g.start = g.size = &w->start;
        g.qd = &qd;
    }
    iom_f_str(&b, "WORKER");
    iom_f_worker_name(&b, r->worker);
    iom_fields(&b, &g, r->stats, r->ns, r->m);
    if (b.t.err || iof_buf_addstr(&w->workers, iof_buf_str(&b.t)) || w->workers.err)
        ins_nomem(s);
    iof_buf_free(&b.t);
    ins_forget_worker(w);
}

static void ins_test_end(struct mgr_sink *s, const struct mgr_test_end *te)
{
    struct ins_writer *w = s->priv;

    if (!w->in_test && te->test) { /* no test_begin came: its head first */
        ins_test_begin(s, te->test);
    }
    ins_test_tail(s, te, te->end_wall_ns ? te->end_wall_ns : iof_wall_ns());
}

static void ins_run_end(struct mgr_sink *s, int exit_code)
{
    struct ins_writer *w = s->priv;

    if (w->in_test)
        ins_test_tail(s, NULL, iof_wall_ns());
    /* As results.csv: only after a run whose tests all completed. */
    if (exit_code == 0 || exit_code == 1)
        fputs("'End Test" IOM_EOL, w->f);
    mgr_sink_sync(s, w->f, true);
}

static void ins_close(struct mgr_sink *s)
{
    struct ins_writer *w = s->priv;

    if (!w)
        return;
    if (w->f && w->in_test)
        ins_test_tail(s, NULL, iof_wall_ns());
    iof_buf_free(&w->workers);
    ins_forget_worker(w);
    mgr_sink_close_writer(s);
}

const struct mgr_sink_ops mgr_sink_iometer_instant = {
    .name = "iometer-instant",
    .open = ins_open,
    .run_begin = ins_run_begin,
    .test_begin = ins_test_begin,
    .interval = ins_interval,
    .row = ins_row,
    .test_end = ins_test_end,
    .run_end = ins_run_end,
    .close = ins_close,
};
