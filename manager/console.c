/* SPDX-License-Identifier: Apache-2.0 */
/* manager/console.c - what `iofleet run` prints on the terminal: the live
 * line (intervals, ramp, the connect wait) and the final tables fitted to
 * the terminal's width. */
#include "manager/console.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "manager/term.h"

void mgr_live_init(struct mgr_live *l, bool quiet)
{
    l->tty = isatty(STDERR_FILENO);
    l->utf8 = mgr_term_utf8();
    l->quiet = quiet;
    l->dirty = false;
    l->ramp_left = 0;
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
 * the run's tests. Setup between tests is not planned, so not counted, nor
 * a find_max search's tests past its shortest path (iof_test_planned). */
static void live_eta(const struct mgr_live *l, unsigned test, double left_s, char *buf, size_t cap)
{
    unsigned long s;

    buf[0] = '\0';
    if (!l->plan || !l->tests)
        return;
    for (size_t i = test; i < l->ntests; i++) {
        struct iof_run_cfg rc = iof_test_run(l->plan, &l->tests[i]);
        if (iof_test_planned(l->plan, &l->tests[i]))
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

/* A line of pieces for a terminal `width` columns wide (0: no limit):
 * while it is too wide, the piece with the highest `drop` goes first (0:
 * never); what still does not fit is cut at the width. One column stays
 * free so a line redrawn with \r never wraps. */
struct live_piece {
    char s[96];
    int drop;
};

static void live_print(const struct mgr_live *l, struct live_piece *pc, size_t n, unsigned width)
{
    char line[1024];
    size_t len = 0, cols = 0;

    for (;;) {
        size_t worst = n;
        cols = 0;
        for (size_t i = 0; i < n; i++)
            cols += pc[i].drop >= 0 ? mgr_term_cols(pc[i].s) : 0;
        if (!width || cols < width)
            break;
        for (size_t i = 0; i < n; i++)
            if (pc[i].drop > 0 && (worst == n || pc[i].drop > pc[worst].drop))
                worst = i;
        if (worst == n)
            break;
        pc[worst].drop = -1; /* left out */
    }
    line[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (pc[i].drop >= 0 && len < sizeof(line))
            len += (size_t)snprintf(line + len, sizeof(line) - len, "%s", pc[i].s);
    if (width && cols >= width) { /* cut at width - 1 columns, on a character */
        size_t c = 0, i = 0;
        for (; line[i]; i++) {
            if (((unsigned char)line[i] & 0xc0) != 0x80 && ++c == width)
                break;
        }
        line[i] = '\0';
    }
    fprintf(stderr, "%s%s%s", l->tty ? "\r\033[K" : "", line, l->tty ? "" : "\n");
    fflush(stderr);
}

/* The ramp line, ramp_left_s of ramp_s still to go. */
static void live_ramp(struct mgr_live *l, unsigned test, unsigned ntests, double ramp_s,
                      double ramp_left_s)
{
    char eta[32];
    struct live_piece pc[4];
    double left_s = ramp_left_s;

    if (l->plan && l->tests && test >= 1 && test <= l->ntests) {
        struct iof_run_cfg rc = iof_test_run(l->plan, &l->tests[test - 1]);
        left_s += (double)rc.duration_ns / 1e9;
    }
    live_eta(l, test, left_s, eta, sizeof(eta));
    snprintf(pc[0].s, sizeof(pc[0].s), "[ramp] test %u/%u ramping up for %.1fs", test, ntests,
             ramp_s);
    pc[0].drop = 0;
    snprintf(pc[1].s, sizeof(pc[1].s), ", %.0fs left", ramp_left_s);
    pc[1].drop = ramp_left_s < ramp_s ? 0 : -1; /* -1: not at the start */
    snprintf(pc[2].s, sizeof(pc[2].s), ", not measured");
    pc[2].drop = 3;
    snprintf(pc[3].s, sizeof(pc[3].s), "%s%s", eta[0] ? "  " : "", eta);
    pc[3].drop = 1;
    live_print(l, pc, 4, l->tty ? mgr_term_width(STDERR_FILENO) : 0);
    l->dirty = l->tty;
}

void mgr_live_ramp(struct mgr_live *l, unsigned test, unsigned ntests, double ramp_s)
{
    if (l->quiet)
        return;
    l->ramp_left = (unsigned long)ramp_s;
    live_ramp(l, test, ntests, ramp_s, ramp_s);
}

void mgr_live_ramp_tick(struct mgr_live *l, unsigned test, unsigned ntests, double ramp_s,
                        double left_s)
{
    unsigned long whole = left_s > 0 ? (unsigned long)(left_s + 0.999) : 0;

    /* Redrawn once a second on a terminal; plain lines stay one per ramp. */
    if (l->quiet || !l->tty || whole >= l->ramp_left || !whole)
        return;
    l->ramp_left = whole;
    live_ramp(l, test, ntests, ramp_s, (double)whole);
}

void mgr_live_line(struct mgr_live *l, const char *phase, unsigned test, unsigned ntests,
                   double elapsed_s, double total_s, bool last, const struct mgr_metrics *m,
                   unsigned alive, unsigned total)
{
    char eta[32], avg[MGR_LAT_LEN], p99[MGR_LAT_LEN];
    struct live_piece pc[9];
    size_t n = 0;

    if (l->quiet)
        return;
    live_eta(l, test, last ? 0 : total_s - elapsed_s, eta, sizeof(eta));
    mgr_term_lat_ms(avg, sizeof(avg), m->avg_ms, l->utf8);
    mgr_term_lat_ms(p99, sizeof(p99), m->p99_ms, l->utf8);
    /* Left out first on a narrow terminal: the read/write split, MiB/s,
     * the agents while all are alive, p99, the ETA, "last interval". */
    snprintf(pc[n].s, sizeof(pc[n].s), "[%s] test %u/%u %6.1f/%.1fs", phase, test, ntests,
             elapsed_s, total_s);
    pc[n++].drop = 0;
    snprintf(pc[n].s, sizeof(pc[n].s), " last interval");
    pc[n++].drop = last ? 1 : -1; /* -1: not the last */
    snprintf(pc[n].s, sizeof(pc[n].s), "  IOPS %10.1f", m->iops);
    pc[n++].drop = 0;
    snprintf(pc[n].s, sizeof(pc[n].s), " (r %.1f / w %.1f)", m->read_iops, m->write_iops);
    pc[n++].drop = 6;
    snprintf(pc[n].s, sizeof(pc[n].s), "  MiB/s %9.2f", m->mibps);
    pc[n++].drop = 5;
    snprintf(pc[n].s, sizeof(pc[n].s), "  avg %s", avg);
    pc[n++].drop = 0;
    snprintf(pc[n].s, sizeof(pc[n].s), "  p99 %s", m->percentiles ? p99 : "-");
    pc[n++].drop = 3;
    snprintf(pc[n].s, sizeof(pc[n].s), "%s%s", eta[0] ? "  " : "", eta);
    pc[n++].drop = 2;
    snprintf(pc[n].s, sizeof(pc[n].s), "  agents %u/%u", alive, total);
    pc[n++].drop = alive < total ? 0 : 4;
    live_print(l, pc, n, l->tty ? mgr_term_width(STDERR_FILENO) : 0);
    l->dirty = l->tty;
}

void mgr_live_wait(struct mgr_live *l, unsigned ready, unsigned total, const char *who,
                   const char *why, unsigned more, double left_s)
{
    struct live_piece pc[5];

    if (l->quiet)
        return;
    snprintf(pc[0].s, sizeof(pc[0].s), "[wait] agents %u/%u", ready, total);
    pc[0].drop = 0;
    snprintf(pc[1].s, sizeof(pc[1].s), "  waiting for %.40s", who);
    pc[1].drop = 0;
    snprintf(pc[2].s, sizeof(pc[2].s), " (%.40s)", why);
    pc[2].drop = 1;
    snprintf(pc[3].s, sizeof(pc[3].s), " and %u more", more);
    pc[3].drop = more ? 0 : -1;
    snprintf(pc[4].s, sizeof(pc[4].s), "  retrying, %.0fs left", left_s);
    pc[4].drop = 0;
    live_print(l, pc, 5, l->tty ? mgr_term_width(STDERR_FILENO) : 0);
    l->dirty = l->tty;
}

void mgr_live_done(struct mgr_live *l)
{
    if (l->dirty)
        fputc('\n', stderr);
    l->dirty = false;
}

/* The final table's columns after row and name, in print order. */
enum table_col {
    COL_IOPS,
    COL_READ_IOPS,
    COL_WRITE_IOPS,
    COL_MIBPS,
    COL_AVG,
    COL_P50,
    COL_P99,
    COL_P999,
    COL_MAX,
    COL_ERRORS,
    COL_COUNT
};
#define COL(c) (1u << (c))
#define COL_ALL (COL(COL_COUNT) - 1)

static const struct {
    const char *head;
    size_t width;
} table_cols[COL_COUNT] = {
    [COL_IOPS] = {"IOPS", 12},
    [COL_READ_IOPS] = {"read_IOPS", 12},
    [COL_WRITE_IOPS] = {"write_IOPS", 12},
    [COL_MIBPS] = {"MiB/s", 10},
    [COL_AVG] = {"avg", 7},
    [COL_P50] = {"p50", 7},
    [COL_P99] = {"p99", 7},
    [COL_P999] = {"p99.9", 7},
    [COL_MAX] = {"max", 7},
    [COL_ERRORS] = {"errors", 8},
};

/* What a narrow terminal loses first, step by step: these columns, then
 * the name column's width down to TABLE_NAME_W, then table_drop_late, then
 * names down to TABLE_NAME_MIN. IOPS, avg and errors always stay. */
static const unsigned table_drop_early[] = {
    COL(COL_P50),
    COL(COL_P999),
    COL(COL_READ_IOPS) | COL(COL_WRITE_IOPS),
};
static const unsigned table_drop_late[] = {COL(COL_MAX), COL(COL_MIBPS), COL(COL_P99)};

#define TABLE_ROW_W 7    /* "TARGET " and the like */
#define TABLE_NAME_W 24  /* the name column when every column is shown */
#define TABLE_NAME_MIN 8 /* a narrow terminal cuts names down to this */

static size_t table_line_cols(const struct mgr_table *t)
{
    size_t w = TABLE_ROW_W + 1 + t->name_w;
    for (int c = 0; c < COL_COUNT; c++)
        if (t->shown & COL(c))
            w += 1 + table_cols[c].width;
    return w;
}

/* Leaves out the columns of drop[] one step at a time until the table
 * fits, then narrows the name column down to name_min at most. */
static void table_fit(struct mgr_table *t, const unsigned *drop, size_t ndrop, size_t name_min)
{
    size_t w;

    for (size_t i = 0; i < ndrop && table_line_cols(t) > t->width; i++)
        t->shown &= ~drop[i];
    w = table_line_cols(t);
    if (w > t->width && t->name_w > name_min)
        t->name_w = t->name_w - name_min > w - t->width ? t->name_w - (w - t->width) : name_min;
}

static void table_refill(struct mgr_table *t, const unsigned *drop, size_t ndrop)
{
    for (size_t i = ndrop; i-- > 0;) {
        unsigned was = t->shown;
        if (t->shown & drop[i])
            continue;
        t->shown |= drop[i];
        if (table_line_cols(t) > t->width)
            t->shown = was;
    }
}

void mgr_table_init(struct mgr_table *t, FILE *f, unsigned width, bool utf8, size_t name_len,
                    const char *files)
{
    t->f = f;
    t->width = width;
    t->utf8 = utf8;
    t->files = files && *files ? files : NULL;
    t->shown = COL_ALL;
    t->rows = MGR_TABLE_ROWS_ALL;
    t->name_len = name_len;
    if (!width) {
        t->name_w = TABLE_NAME_W;
        return;
    }
    t->name_w = name_len > 4 ? name_len : 4;
    table_fit(t, table_drop_early, sizeof(table_drop_early) / sizeof(table_drop_early[0]),
              TABLE_NAME_W);
    table_fit(t, table_drop_late, sizeof(table_drop_late) / sizeof(table_drop_late[0]),
              TABLE_NAME_MIN);
    /* Back what still fits in the room left, the most wanted first. */
    table_refill(t, table_drop_late, sizeof(table_drop_late) / sizeof(table_drop_late[0]));
    table_refill(t, table_drop_early, sizeof(table_drop_early) / sizeof(table_drop_early[0]));
}

void mgr_table_header(struct mgr_table *t, unsigned test, unsigned ntests, const char *spec,
                      const char *cycle, double seconds, const char *note)
{
    struct iof_buf line = IOF_BUF_INIT;

    iof_buf_printf(&line, "== test %u/%u: %s%s%s%s  measured %.3f s%s%s", test, ntests, spec,
                   cycle && *cycle ? "  [" : "", cycle && *cycle ? cycle : "",
                   cycle && *cycle ? "]" : "", seconds, note && *note ? "  " : "",
                   note ? note : "");
    fputc('\n', t->f);
    mgr_term_wrap(t->f, t->width, 3, iof_buf_str(&line));
    iof_buf_free(&line);
    fprintf(t->f, "%-*s %-*s", TABLE_ROW_W, "row", (int)t->name_w, "name");
    for (int c = 0; c < COL_COUNT; c++)
        if (t->shown & COL(c))
            fprintf(t->f, " %*s", (int)table_cols[c].width, table_cols[c].head);
    fputc('\n', t->f);
}

/* name in the name column; on a terminal a longer one loses its middle
 * to a '~' (its node and its file's name stay). */
static void table_name(const struct mgr_table *t, const char *name)
{
    size_t len = strlen(name), head, tail;

    if (!t->width || mgr_term_cols(name) <= t->name_w) {
        mgr_term_pad(t->f, name, t->name_w, false);
        return;
    }
    head = (t->name_w - 1) / 2;
    tail = len - (t->name_w - 1 - head);
    while (head > 0 && ((unsigned char)name[head] & 0xc0) == 0x80)
        head--;
    while (name[tail] && ((unsigned char)name[tail] & 0xc0) == 0x80)
        tail++;
    fprintf(t->f, "%.*s~%s", (int)head, name, name + tail);
}

/* One cell, right aligned in its column: the figure or "-" when unknown. */
static void table_cell(const struct mgr_table *t, int c, bool known, int prec, double v)
{
    char s[MGR_LAT_LEN + 16];

    if (!known)
        snprintf(s, sizeof(s), "-");
    else if (prec >= 0)
        snprintf(s, sizeof(s), "%.*f", prec, v);
    else
        mgr_term_lat_ms(s, sizeof(s), v, t->utf8);
    fputc(' ', t->f);
    mgr_term_pad(t->f, s, table_cols[c].width, true);
}

/* A line under a row: under its figures when the terminal has the room. */
static void table_under(const struct mgr_table *t, const char *text)
{
    size_t indent = TABLE_ROW_W + 1 + t->name_w + 1;

    if (t->width && indent + mgr_term_cols(text) > t->width)
        indent = TABLE_ROW_W + 1;
    fprintf(t->f, "%*s", (int)indent, "");
    mgr_term_wrap(t->f, t->width ? t->width - (unsigned)indent : 0, 0, text);
}

void mgr_table_row(struct mgr_table *t, const char *row_type, const char *name,
                   const struct mgr_metrics *m)
{
    const struct {
        bool known;
        int prec; /* decimals; -1: a latency in ms */
        double v;
    } cells[COL_COUNT] = {
        [COL_IOPS] = {m->rates, 1, m->iops},
        [COL_READ_IOPS] = {m->rates, 1, m->read_iops},
        [COL_WRITE_IOPS] = {m->rates, 1, m->write_iops},
        [COL_MIBPS] = {m->rates, 2, m->mibps},
        [COL_AVG] = {true, -1, m->avg_ms},
        [COL_P50] = {m->percentiles, -1, m->p50_ms},
        [COL_P99] = {m->percentiles, -1, m->p99_ms},
        [COL_P999] = {m->percentiles, -1, m->p999_ms},
        [COL_MAX] = {true, -1, m->max_ms},
        [COL_ERRORS] = {true, 0, (double)m->errors},
    };

    fprintf(t->f, "%-*s ", TABLE_ROW_W, row_type);
    table_name(t, name);
    for (int c = 0; c < COL_COUNT; c++)
        if (t->shown & COL(c))
            table_cell(t, c, cells[c].known, cells[c].prec, cells[c].v);
    fputc('\n', t->f);
    if (m->rated) {
        /* Latency above is from the scheduled time; the service part under
         * it, and how late the I/Os went out (ALL and NODE rows). */
        char avg[MGR_LAT_LEN], max[MGR_LAT_LEN], p50[MGR_LAT_LEN], p99[MGR_LAT_LEN],
            p999[MGR_LAT_LEN];
        const struct mgr_lateness *l = &m->lateness;
        struct iof_buf line = IOF_BUF_INIT;
        iof_buf_printf(&line, "service (from submit): avg %s  max %s  late > 1 ms: %llu",
                       mgr_term_lat_ms(avg, sizeof(avg), m->avg_svc_ms, t->utf8),
                       mgr_term_lat_ms(max, sizeof(max), m->max_svc_ms, t->utf8),
                       (unsigned long long)m->late_ios);
        table_under(t, iof_buf_str(&line));
        if (l->known && l->count) {
            iof_buf_reset(&line);
            iof_buf_printf(&line,
                           "lateness (submit - scheduled): p50 %s  p99 %s  p99.9 %s  max %s  "
                           "> 20 us: %llu (%.2f %%)",
                           mgr_term_lat_ms(p50, sizeof(p50), l->p50_us / 1e3, t->utf8),
                           mgr_term_lat_ms(p99, sizeof(p99), l->p99_us / 1e3, t->utf8),
                           mgr_term_lat_ms(p999, sizeof(p999), l->p999_us / 1e3, t->utf8),
                           mgr_term_lat_ms(max, sizeof(max), l->max_us / 1e3, t->utf8),
                           (unsigned long long)l->over_20us, l->over_20us_pct);
            table_under(t, iof_buf_str(&line));
        }
        iof_buf_free(&line);
    }
}

void mgr_table_end(struct mgr_table *t)
{
    struct iof_buf line = IOF_BUF_INIT;
    const char *sep = "";

    if (!t->width || (t->shown == COL_ALL && t->name_w >= t->name_len))
        return;
    iof_buf_printf(&line, "  left out to fit %u columns: ", t->width);
    if (t->shown != COL_ALL)
        for (int c = 0; c < COL_COUNT; c++)
            if (!(t->shown & COL(c))) {
                iof_buf_printf(&line, "%s%s", sep, table_cols[c].head);
                sep = ", ";
            }
    if (t->name_w < t->name_len)
        iof_buf_printf(&line, "%slong names cut with '~'", sep);
    if (t->files)
        iof_buf_printf(&line, "; every column and row is in %s", t->files);
    else
        iof_buf_addstr(&line, "; --csv FILE or --json FILE keeps every column");
    mgr_term_wrap(t->f, t->width, 4, iof_buf_str(&line));
    iof_buf_free(&line);
}

static const struct {
    const char *word, *type; /* in --rows LIST; as the table names the row */
    unsigned bit;
} table_rows[] = {
    {"group", "GROUP", MGR_TABLE_ROWS_GROUP},
    {"worker", "WORKER", MGR_TABLE_ROWS_WORKER},
    {"target", "TARGET", MGR_TABLE_ROWS_TARGET},
    {"all", NULL, MGR_TABLE_ROWS_ALL},
};
#define TABLE_NROWS (sizeof(table_rows) / sizeof(table_rows[0]))

int mgr_table_rows_parse(const char *list, unsigned *rows, struct iof_diag *diag)
{
    const char *p = list;

    *rows = MGR_TABLE_ROWS_DEFAULT;
    do {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < TABLE_NROWS &&
               (strlen(table_rows[i].word) != len || strncmp(p, table_rows[i].word, len)))
            i++;
        if (i == TABLE_NROWS)
            return iof_diag_set(diag, -EINVAL,
                                "'%.*s' is not a row type: a comma separated list of group, "
                                "worker, target, or all (ALL and NODE rows are always shown)",
                                (int)(len > 64 ? 64 : len), p);
        *rows |= table_rows[i].bit;
        p += len;
    } while (*p++ == ',');
    return 0;
}

void mgr_table_rows_hint(const struct mgr_table *t, unsigned hidden)
{
    struct iof_buf line = IOF_BUF_INIT;
    size_t n = 0, k = 0;

    for (size_t i = 0; i + 1 < TABLE_NROWS; i++)
        n += !!(hidden & table_rows[i].bit);
    if (!n)
        return;
    /* Not led by a row type: scripts pick rows by their first word. */
    iof_buf_addstr(&line, "  not shown: ");
    for (size_t i = 0; i + 1 < TABLE_NROWS; i++)
        if (hidden & table_rows[i].bit)
            iof_buf_printf(&line, "%s%s", k++ ? (k == n ? " and " : ", ") : "", table_rows[i].type);
    iof_buf_printf(&line, " rows (--rows ");
    k = 0;
    for (size_t i = 0; i + 1 < TABLE_NROWS; i++)
        if (hidden & table_rows[i].bit)
            iof_buf_printf(&line, "%s%s", k++ ? "," : "", table_rows[i].word);
    iof_buf_addstr(&line, " or --rows all shows them)");
    if (t->files)
        iof_buf_printf(&line, "; every row is in %s", t->files);
    mgr_term_wrap(t->f, t->width, 4, iof_buf_str(&line));
    iof_buf_free(&line);
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

int mgr_table_summary(struct mgr_table *t, const struct mgr_table_node *nodes, size_t n,
                      size_t nrows)
{
    struct iof_buf line = IOF_BUF_INIT;
    const struct mgr_table_node **order = malloc((n ? n : 1) * sizeof(*order));
    size_t shown;

    if (!order)
        return -1;
    for (size_t i = 0; i < n; i++)
        order[i] = &nodes[i];
    qsort(order, n, sizeof(*order), table_node_cmp);
    if (n <= 2 * MGR_TABLE_EXTREMES) {
        for (size_t i = 0; i < n; i++)
            mgr_table_row(t, "NODE", order[i]->name, order[i]->m);
        shown = n;
    } else {
        fprintf(t->f, "  the %d slowest nodes (by IOPS):\n", MGR_TABLE_EXTREMES);
        for (size_t i = 0; i < MGR_TABLE_EXTREMES; i++)
            mgr_table_row(t, "NODE", order[i]->name, order[i]->m);
        fprintf(t->f, "  the %d fastest nodes:\n", MGR_TABLE_EXTREMES);
        for (size_t i = n; i-- > n - MGR_TABLE_EXTREMES;)
            mgr_table_row(t, "NODE", order[i]->name, order[i]->m);
        shown = 2 * MGR_TABLE_EXTREMES;
    }
    iof_buf_printf(&line,
                   "  %zu of %zu nodes shown and %zu of %zu NODE%s%s rows hidden (more than %d "
                   "nodes or %d rows); ",
                   shown, n, nrows - shown, nrows, t->rows & MGR_TABLE_ROWS_WORKER ? "/WORKER" : "",
                   t->rows & MGR_TABLE_ROWS_TARGET ? "/TARGET" : "", MGR_TABLE_MAX_NODES,
                   MGR_TABLE_MAX_ROWS);
    if (t->files)
        iof_buf_printf(&line, "every row is in %s", t->files);
    else
        iof_buf_addstr(&line, "--csv FILE or --json FILE keeps every row");
    mgr_term_wrap(t->f, t->width, 4, iof_buf_str(&line));
    iof_buf_free(&line);
    free(order);
    return (int)shown;
}

/* --- the run's summary ------------------------------------------------------------------ */

int mgr_summary_add(struct mgr_summary *s, unsigned test, const char *spec, const char *cycle,
                    const struct mgr_metrics *m, double read_p99_ms, double write_p99_ms,
                    enum mgr_test_status status)
{
    struct iof_buf name = IOF_BUF_INIT;
    struct mgr_summary_test *t;
    size_t len;

    if (iof_array_grow((void **)&s->tests, &s->cap, s->n + 1, sizeof(*s->tests)))
        return -ENOMEM;
    iof_buf_printf(&name, "%s%s%s%s", spec, cycle && *cycle ? "  [" : "", cycle ? cycle : "",
                   cycle && *cycle ? "]" : "");
    t = &s->tests[s->n];
    if (!(t->name = iof_buf_take(&name, &len)))
        return -ENOMEM;
    t->test = test;
    t->m = *m;
    t->read_p99_ms = read_p99_ms;
    t->write_p99_ms = write_p99_ms;
    t->status = status;
    s->n++;
    return 0;
}

void mgr_summary_free(struct mgr_summary *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->tests[i].name);
    free(s->tests);
    memset(s, 0, sizeof(*s));
}

/* The summary's columns after test and spec, in print order; status last. */
enum sum_col { SUM_IOPS, SUM_MIBPS, SUM_R_AVG, SUM_R_P99, SUM_W_AVG, SUM_W_P99, SUM_COUNT };

static const struct {
    const char *head;
    int width;
} sum_cols[SUM_COUNT] = {
    [SUM_IOPS] = {"IOPS", 12},  [SUM_MIBPS] = {"MiB/s", 10}, [SUM_R_AVG] = {"r_avg", 8},
    [SUM_R_P99] = {"r_p99", 8}, [SUM_W_AVG] = {"w_avg", 8},  [SUM_W_P99] = {"w_p99", 8},
};

/* What a narrow terminal loses, step by step (then long specs are cut). */
static const unsigned sum_drop[] = {COL(SUM_MIBPS), COL(SUM_R_P99) | COL(SUM_W_P99)};

#define SUM_TEST_W 4    /* "test" */
#define SUM_STATUS_W 11 /* "interrupted" */
#define SUM_NAME_MIN 12 /* a spec is cut no shorter than this */

static size_t sum_line_cols(unsigned shown, size_t name_w)
{
    size_t w = SUM_TEST_W + 1 + name_w + 2 + SUM_STATUS_W;
    for (int c = 0; c < SUM_COUNT; c++)
        if (shown & COL(c))
            w += 1 + (size_t)sum_cols[c].width;
    return w;
}

/* One latency cell: "-" when unknown. */
static void sum_lat(FILE *f, int c, bool known, double ms, bool utf8)
{
    char s[MGR_LAT_LEN];

    if (known)
        mgr_term_lat_ms(s, sizeof(s), ms, utf8);
    else
        snprintf(s, sizeof(s), "-");
    fputc(' ', f);
    mgr_term_pad(f, s, (size_t)sum_cols[c].width, true);
}

void mgr_summary_print(const struct mgr_summary *s, FILE *f, unsigned width, bool utf8,
                       size_t planned)
{
    struct mgr_table names = {.f = f, .width = width};
    unsigned shown = COL(SUM_COUNT) - 1;
    size_t name_len = 4; /* "spec" */
    char cell[32];

    if (!s->n)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (mgr_term_cols(s->tests[i].name) > name_len)
            name_len = mgr_term_cols(s->tests[i].name);
    names.name_w = name_len;
    if (width) {
        size_t min = name_len < SUM_NAME_MIN ? name_len : SUM_NAME_MIN;
        for (size_t i = 0;
             i < sizeof(sum_drop) / sizeof(sum_drop[0]) && sum_line_cols(shown, min) > width; i++)
            shown &= ~sum_drop[i];
        while (names.name_w > min && sum_line_cols(shown, names.name_w) > width)
            names.name_w--;
    }
    fprintf(f, "\n== summary: %zu test%s\n", s->n, s->n == 1 ? "" : "s");
    fprintf(f, "%-*s %-*s", SUM_TEST_W, "test", (int)names.name_w, "spec");
    for (int c = 0; c < SUM_COUNT; c++)
        if (shown & COL(c))
            fprintf(f, " %*s", sum_cols[c].width, sum_cols[c].head);
    fprintf(f, "  %s\n", "status");
    for (size_t i = 0; i < s->n; i++) {
        const struct mgr_summary_test *t = &s->tests[i];
        const struct mgr_metrics *m = &t->m;
        fprintf(f, "%-*u ", SUM_TEST_W, t->test);
        table_name(&names, t->name);
        if (m->rates)
            snprintf(cell, sizeof(cell), "%.1f", m->iops);
        else
            snprintf(cell, sizeof(cell), "-");
        fputc(' ', f);
        mgr_term_pad(f, cell, (size_t)sum_cols[SUM_IOPS].width, true);
        if (shown & COL(SUM_MIBPS)) {
            if (m->rates)
                snprintf(cell, sizeof(cell), "%.2f", m->mibps);
            fputc(' ', f);
            mgr_term_pad(f, cell, (size_t)sum_cols[SUM_MIBPS].width, true);
        }
        sum_lat(f, SUM_R_AVG, m->read_ios > 0, m->avg_read_ms, utf8);
        if (shown & COL(SUM_R_P99))
            sum_lat(f, SUM_R_P99, t->read_p99_ms >= 0, t->read_p99_ms, utf8);
        sum_lat(f, SUM_W_AVG, m->write_ios > 0, m->avg_write_ms, utf8);
        if (shown & COL(SUM_W_P99))
            sum_lat(f, SUM_W_P99, t->write_p99_ms >= 0, t->write_p99_ms, utf8);
        fprintf(f, "  %s\n", mgr_test_status_name(t->status));
    }
    if (shown != COL(SUM_COUNT) - 1 || names.name_w < name_len) {
        struct iof_buf line = IOF_BUF_INIT;
        const char *sep = "";
        iof_buf_printf(&line, "  left out to fit %u columns: ", width);
        for (int c = 0; c < SUM_COUNT; c++)
            if (!(shown & COL(c))) {
                iof_buf_printf(&line, "%s%s", sep, sum_cols[c].head);
                sep = ", ";
            }
        if (names.name_w < name_len)
            iof_buf_printf(&line, "%slong specs cut with '~'", sep);
        mgr_term_wrap(f, width, 4, iof_buf_str(&line));
        iof_buf_free(&line);
    }
    if (s->n < planned)
        fprintf(f, "  %zu of the plan's %zu tests ran\n", s->n, planned);
    fflush(f);
}
