/* manager/report.c - a row's figures from its counters and merged
 * histograms, and what `iofleet run` prints: live lines and final tables. */
#include "manager/report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"

#define MIB (1024.0 * 1024.0)

static double ns_to_ms(double ns)
{
    return ns / 1e6;
}

void mgr_metrics_compute(const struct iof_stats *s, uint64_t ns, struct mgr_metrics *m)
{
    struct iof_hist all;
    double sec = (double)ns / 1e9;

    memset(m, 0, sizeof(*m));
    m->seconds = sec;
    m->read_ios = s->rd.ios;
    m->write_ios = s->wr.ios;
    m->bytes_read = s->rd.bytes;
    m->bytes_written = s->wr.bytes;
    m->errors = s->rd.errors + s->wr.errors;
    m->rates = sec > 0;
    m->percentiles = iof_hist_has_buckets(&s->rd.lat) && iof_hist_has_buckets(&s->wr.lat);
    if (sec > 0) {
        m->read_iops = (double)s->rd.ios / sec;
        m->write_iops = (double)s->wr.ios / sec;
        m->iops = (double)(s->rd.ios + s->wr.ios) / sec;
        m->read_mibps = (double)s->rd.bytes / MIB / sec;
        m->write_mibps = (double)s->wr.bytes / MIB / sec;
        m->mibps = (double)(s->rd.bytes + s->wr.bytes) / MIB / sec;
    }
    iof_stats_lat_all(s, &all);
    m->avg_ms = ns_to_ms(iof_hist_mean(&all));
    m->avg_read_ms = ns_to_ms(iof_hist_mean(&s->rd.lat));
    m->avg_write_ms = ns_to_ms(iof_hist_mean(&s->wr.lat));
    m->p50_ms = ns_to_ms((double)iof_hist_percentile(&all, 0.50));
    m->p90_ms = ns_to_ms((double)iof_hist_percentile(&all, 0.90));
    m->p95_ms = ns_to_ms((double)iof_hist_percentile(&all, 0.95));
    m->p99_ms = ns_to_ms((double)iof_hist_percentile(&all, 0.99));
    m->p999_ms = ns_to_ms((double)iof_hist_percentile(&all, 0.999));
    m->p9999_ms = ns_to_ms((double)iof_hist_percentile(&all, 0.9999));
    m->max_ms = ns_to_ms((double)all.max_ns);
    m->rated = s->rated.svc.count > 0 || s->rated.late > 0;
    m->late_ios = s->rated.late;
    if (s->rated.svc.count) {
        m->avg_svc_ms = ns_to_ms((double)s->rated.svc.sum_ns / (double)s->rated.svc.count);
        m->max_svc_ms = ns_to_ms((double)s->rated.svc.max_ns);
    }
}

void mgr_live_init(struct mgr_live *l, bool quiet)
{
    l->tty = isatty(STDERR_FILENO);
    l->quiet = quiet;
    l->dirty = false;
    l->plan = NULL;
    l->tests = NULL;
    l->ntests = 0;
}

void mgr_live_plan(struct mgr_live *l, const struct iof_plan *p, const struct iof_test *tests,
                   size_t ntests)
{
    l->plan = p;
    l->tests = tests;
    l->ntests = ntests;
}

/* "ETA 1h02m", "ETA 3m05s", "ETA 42s": the planned time of the rest of
 * the current test and of the tests after it (1-based `test`); "" without
 * the run's tests. Setup between tests is not planned, so not counted. */
static void live_eta(const struct mgr_live *l, unsigned test, double left_s, char *buf, size_t cap)
{
    unsigned long s;

    buf[0] = '\0';
    if (!l->plan || !l->tests)
        return;
    for (size_t i = test; i < l->ntests; i++) {
        struct iof_run_cfg rc = iof_test_run(l->plan, &l->tests[i]);
        left_s += (double)(rc.ramp_ns + rc.duration_ns) / 1e9;
    }
    s = left_s > 0 ? (unsigned long)(left_s + 0.5) : 0;
    if (s >= 3600)
        snprintf(buf, cap, "ETA %luh%02lum", s / 3600, s % 3600 / 60);
    else if (s >= 60)
        snprintf(buf, cap, "ETA %lum%02lus", s / 60, s % 60);
    else
        snprintf(buf, cap, "ETA %lus", s);
}

void mgr_live_ramp(struct mgr_live *l, unsigned test, unsigned ntests, double ramp_s)
{
    char eta[32];

    double left_s = ramp_s;

    if (l->quiet)
        return;
    if (l->plan && l->tests && test >= 1 && test <= l->ntests) {
        struct iof_run_cfg rc = iof_test_run(l->plan, &l->tests[test - 1]);
        left_s = (double)(rc.ramp_ns + rc.duration_ns) / 1e9;
    }
    live_eta(l, test, left_s, eta, sizeof(eta));
    fprintf(stderr, "%s[ramp] test %u/%u ramping up for %.1fs, not measured%s%s%s",
            l->tty ? "\r\033[K" : "", test, ntests, ramp_s, eta[0] ? "  " : "", eta,
            l->tty ? "" : "\n");
    fflush(stderr);
    l->dirty = l->tty;
}

void mgr_live_line(struct mgr_live *l, const char *phase, unsigned test, unsigned ntests,
                   double elapsed_s, double total_s, const struct mgr_metrics *m, unsigned alive,
                   unsigned total)
{
    char eta[32];

    if (l->quiet)
        return;
    live_eta(l, test, total_s - elapsed_s, eta, sizeof(eta));
    fprintf(stderr,
            "%s[%s] test %u/%u %6.1f/%.1fs  IOPS %10.1f (r %.1f / w %.1f)  MiB/s %9.2f  "
            "avg %.3f ms  p99 %.3f ms  %s%sagents %u/%u%s",
            l->tty ? "\r\033[K" : "", phase, test, ntests, elapsed_s, total_s, m->iops,
            m->read_iops, m->write_iops, m->mibps, m->avg_ms, m->p99_ms, eta, eta[0] ? "  " : "",
            alive, total, l->tty ? "" : "\n");
    fflush(stderr);
    l->dirty = l->tty;
}

void mgr_live_done(struct mgr_live *l)
{
    if (l->dirty)
        fputc('\n', stderr);
    l->dirty = false;
}

void mgr_table_header(FILE *f, unsigned test, unsigned ntests, const char *spec, const char *cycle,
                      double seconds, const char *note)
{
    fprintf(f, "\n== test %u/%u: %s%s%s%s  measured %.3f s%s%s\n", test, ntests, spec,
            cycle && *cycle ? "  [" : "", cycle && *cycle ? cycle : "", cycle && *cycle ? "]" : "",
            seconds, note && *note ? "  " : "", note ? note : "");
    fprintf(f, "%-7s %-24s %12s %12s %12s %10s %9s %9s %9s %9s %9s %8s\n", "row", "name", "IOPS",
            "read_IOPS", "write_IOPS", "MiB/s", "avg_ms", "p50_ms", "p99_ms", "p99.9_ms", "max_ms",
            "errors");
}

/* A figure, or "-" in its width when it is unknown. */
static void table_fig(FILE *f, int width, int prec, bool known, double v)
{
    if (known)
        fprintf(f, " %*.*f", width, prec, v);
    else
        fprintf(f, " %*s", width, "-");
}

void mgr_table_row(FILE *f, const char *row_type, const char *name, const struct mgr_metrics *m)
{
    fprintf(f, "%-7s %-24s", row_type, name);
    table_fig(f, 12, 1, m->rates, m->iops);
    table_fig(f, 12, 1, m->rates, m->read_iops);
    table_fig(f, 12, 1, m->rates, m->write_iops);
    table_fig(f, 10, 2, m->rates, m->mibps);
    table_fig(f, 9, 4, true, m->avg_ms);
    table_fig(f, 9, 4, m->percentiles, m->p50_ms);
    table_fig(f, 9, 4, m->percentiles, m->p99_ms);
    table_fig(f, 9, 4, m->percentiles, m->p999_ms);
    table_fig(f, 9, 4, true, m->max_ms);
    fprintf(f, " %8llu\n", (unsigned long long)m->errors);
    if (m->rated)
        /* Latency above is from the scheduled time; the service part under it. */
        fprintf(f,
                "%-7s %-24s service (from submit): avg %.4f ms  max %.4f ms  late > 1 ms: %llu\n",
                "", "", m->avg_svc_ms, m->max_svc_ms, (unsigned long long)m->late_ios);
}

bool mgr_table_fits(size_t nnodes, size_t nrows)
{
    return nnodes <= MGR_TABLE_MAX_NODES && nrows <= MGR_TABLE_MAX_ROWS;
}

/* Slowest first: by IOPS (a node without rates counts as 0), then name. */
static int table_node_cmp(const void *a, const void *b)
{
    const struct mgr_table_node *x = *(const struct mgr_table_node *const *)a;
    const struct mgr_table_node *y = *(const struct mgr_table_node *const *)b;
    double ix = x->m->rates ? x->m->iops : 0, iy = y->m->rates ? y->m->iops : 0;
    if (ix != iy)
        return ix < iy ? -1 : 1;
    return strcmp(x->name, y->name);
}

int mgr_table_summary(FILE *f, const struct mgr_table_node *nodes, size_t n, size_t nrows,
                      const char *files)
{
    const struct mgr_table_node **order = malloc((n ? n : 1) * sizeof(*order));
    size_t shown;

    if (!order)
        return -1;
    for (size_t i = 0; i < n; i++)
        order[i] = &nodes[i];
    qsort(order, n, sizeof(*order), table_node_cmp);
    if (n <= 2 * MGR_TABLE_EXTREMES) {
        for (size_t i = 0; i < n; i++)
            mgr_table_row(f, "NODE", order[i]->name, order[i]->m);
        shown = n;
    } else {
        fprintf(f, "  the %d slowest nodes (by IOPS):\n", MGR_TABLE_EXTREMES);
        for (size_t i = 0; i < MGR_TABLE_EXTREMES; i++)
            mgr_table_row(f, "NODE", order[i]->name, order[i]->m);
        fprintf(f, "  the %d fastest nodes:\n", MGR_TABLE_EXTREMES);
        for (size_t i = n; i-- > n - MGR_TABLE_EXTREMES;)
            mgr_table_row(f, "NODE", order[i]->name, order[i]->m);
        shown = 2 * MGR_TABLE_EXTREMES;
    }
    fprintf(f,
            "  %zu of %zu nodes shown and %zu of %zu NODE/WORKER/TARGET rows hidden (more than %d "
            "nodes or %d rows); ",
            shown, n, nrows - shown, nrows, MGR_TABLE_MAX_NODES, MGR_TABLE_MAX_ROWS);
    if (files && *files)
        fprintf(f, "every row is in %s\n", files);
    else
        fprintf(f, "--csv FILE or --json FILE keeps every row\n");
    free(order);
    return (int)shown;
}
