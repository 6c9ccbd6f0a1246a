/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sink.c - what the result-file writers share: the registry of
 * writers by option, file creation, CSV quoting and durable syncs. */
#include "manager/sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

/* Writers that exist, by the option that selects them. */
static const struct {
    const char *option;
    const struct mgr_sink_ops *ops;
} sink_registry[] = {
    {"--csv", &mgr_sink_csv},
    {"--timeseries", &mgr_sink_timeseries},
    {"--json", &mgr_sink_json},
    {"--iometer-csv", &mgr_sink_iometer},
    {"--iometer-csv-append", &mgr_sink_iometer},
    {"--iometer-instant", &mgr_sink_iometer_instant},
    {NULL, NULL},
};

const struct mgr_sink_ops *mgr_sink_for_option(const char *option)
{
    for (size_t i = 0; i < sizeof(sink_registry) / sizeof(sink_registry[0]); i++)
        if (sink_registry[i].option && !strcmp(sink_registry[i].option, option))
            return sink_registry[i].ops;
    return NULL;
}

int mgr_sink_open_writer(struct mgr_sink *sink, size_t size, struct iof_diag *diag)
{
    void *w = calloc(1, size);
    int r;

    if (!w)
        return iof_diag_set(diag, -ENOMEM, "%s: out of memory", sink->path);
    r = iof_outfile_open(&sink->out, sink->path, 0, sink->flags, diag);
    if (!r && !iof_outfile_stdio(&sink->out)) {
        r = -(errno ? errno : ENOMEM);
        iof_diag_set(diag, r, "%s: cannot create: %s", sink->path, strerror(-r));
        iof_outfile_abort(&sink->out);
    }
    if (r) {
        free(w);
        return r;
    }
    sink->priv = w;
    return 0;
}

void mgr_sink_publish(struct mgr_sink *sink)
{
    struct iof_diag d = {{0}};

    if (sink->out.fd >= 0 && iof_outfile_publish(&sink->out, &d))
        IOF_WARN("%s (tried again when the run ends)", d.msg);
}

void mgr_csv_field(struct iof_buf *b, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        iof_buf_addstr(b, s);
        return;
    }
    iof_buf_addc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            iof_buf_addc(b, '"');
        iof_buf_addc(b, *s);
    }
    iof_buf_addc(b, '"');
}

void mgr_sink_sync(struct mgr_sink *sink, FILE *f, bool durable)
{
    if (fflush(f) != 0 || ferror(f)) {
        if (!sink->write_error)
            sink->write_error = -(errno ? errno : EIO);
        return;
    }
    if (durable && fsync(fileno(f)) != 0 && errno != EINVAL && !sink->write_error)
        sink->write_error = -errno;
}

void mgr_sink_publish_begin(struct mgr_sink *sink, const struct mgr_run_info *ri)
{
    (void)ri;
    mgr_sink_publish(sink);
}

int mgr_sink_close_writer(struct mgr_sink *sink)
{
    struct iof_diag d = {{0}};
    FILE *f = sink->out.f;
    int r;

    free(sink->priv);
    sink->priv = NULL;
    if (!f)
        return sink->write_error;
    mgr_sink_sync(sink, f, true);
    if (sink->aborted) {
        iof_outfile_abort(&sink->out);
        return sink->write_error;
    }
    /* Measured data: a failed rename keeps the temporary file, named. */
    r = iof_outfile_close(&sink->out, true, &d);
    if (sink->write_error)
        IOF_ERROR("%s: write failed: %s", sink->path, strerror(-sink->write_error));
    else if (r)
        IOF_ERROR("%s", d.msg);
    if (!sink->write_error)
        sink->write_error = r;
    return sink->write_error;
}

/* Agents of the run that group gc runs on. */
static size_t group_agents(const struct iof_worker_cfg *gc, const struct mgr_agent_info *agents,
                           size_t nagents)
{
    size_t n = 0;

    if (!gc->nnodes)
        return nagents;
    for (size_t a = 0; a < nagents; a++) {
        bool here = false;
        for (size_t i = 0; i < gc->nnodes && !here; i++)
            here = !strcmp(gc->nodes[i], "*") ||
                   (agents[a].name && !strcmp(gc->nodes[i], agents[a].name));
        n += here;
    }
    return n;
}

bool mgr_target_hists(const struct iof_plan *p, const struct mgr_agent_info *agents, size_t nagents,
                      const struct iof_test *t)
{
    uint64_t rows = 0;

    if (!p || !t || p->run.target_hists == IOF_TARGET_HISTS_ALWAYS)
        return true;
    if (p->run.target_hists == IOF_TARGET_HISTS_NEVER)
        return false;
    for (size_t g = 0; g < p->nworkers; g++) {
        struct iof_worker_cfg gc;
        if (!iof_test_spec(p, t, g)) /* idle in this test */
            continue;
        gc = iof_test_worker(p, t, g);
        rows += (uint64_t)group_agents(&gc, agents, nagents) * gc.count * gc.ntargets;
        if (rows > IOF_TARGET_HISTS_AUTO_MAX)
            return false;
    }
    return true;
}

bool mgr_interval_hists(const struct iof_plan *p, size_t nagents)
{
    if (!p || p->run.interval_hists == IOF_TARGET_HISTS_ALWAYS)
        return true;
    if (p->run.interval_hists == IOF_TARGET_HISTS_NEVER)
        return false;
    return nagents <= IOF_INTERVAL_HISTS_AUTO_MAX;
}

const char *mgr_row_type_name(enum mgr_row_type t)
{
    static const char *const names[] = {"ALL", "NODE", "WORKER", "TARGET", "GROUP"};
    return (unsigned)t < 5 ? names[t] : "?";
}

const char *mgr_row_status_name(enum mgr_row_status st)
{
    static const char *const names[] = {"ok", "partial", "lost-before-start", "absent"};
    return (unsigned)st < 4 ? names[st] : "?";
}

const char *mgr_test_status_name(enum mgr_test_status st)
{
    static const char *const names[] = {"ok", "partial", "interrupted", "failed"};
    return (unsigned)st < 4 ? names[st] : "?";
}

int mgr_row_status_parse(const char *s)
{
    for (int st = MGR_STATUS_OK; s && st <= MGR_STATUS_ABSENT; st++)
        if (!strcmp(s, mgr_row_status_name((enum mgr_row_status)st)))
            return st;
    return -1;
}

const char *mgr_status_note(char *buf, size_t cap, enum mgr_row_type type, enum mgr_row_status st,
                            double row_s, double from_s, double to_s, double test_s)
{
    bool whole = type == MGR_ROW_ALL || type == MGR_ROW_GROUP;

    switch (st) {
    case MGR_STATUS_PARTIAL:
        if (whole)
            snprintf(buf, cap,
                     "%s was lost during the test: it adds the I/O of its intervals that arrived "
                     "and the rates are over the whole %.3f s window (below the sum of the node "
                     "rates)",
                     type == MGR_ROW_ALL ? "a node" : "a node of the group", test_s);
        else if (test_s > 0)
            snprintf(buf, cap,
                     "lost during the test: its rows hold the %.3f s of the %.3f s window whose "
                     "intervals arrived (%.3f s to %.3f s) and their rates are over those %.3f s",
                     row_s, test_s, from_s, to_s, row_s);
        else
            snprintf(buf, cap,
                     "lost during the test: its rows hold the %.3f s of the window whose "
                     "intervals arrived (%.3f s to %.3f s) and their rates are over those %.3f s",
                     row_s, from_s, to_s, row_s);
        break;
    case MGR_STATUS_LOST_BEFORE_START:
        snprintf(buf, cap, "lost before any of its intervals arrived: no I/O and no rates");
        break;
    case MGR_STATUS_ABSENT:
        snprintf(buf, cap, "not in this test: no I/O and no window");
        break;
    default:
        if (cap)
            buf[0] = '\0';
    }
    return buf;
}

int mgr_sink_open(const struct mgr_sink_ops *ops, const char *path, unsigned flags,
                  struct mgr_sink **out, struct iof_diag *diag)
{
    struct mgr_sink *s = calloc(1, sizeof(*s));
    int r;

    if (!s)
        return iof_diag_set(diag, -ENOMEM, "%s: out of memory", path);
    s->ops = ops;
    s->flags = flags;
    s->out = (struct iof_outfile)IOF_OUTFILE_INIT;
    snprintf(s->path, sizeof(s->path), "%s", path);
    r = ops->open(s, path, diag);
    if (r) {
        free(s);
        return r;
    }
    *out = s;
    return 0;
}

int mgr_sink_close(struct mgr_sink *s)
{
    int r;
    if (!s)
        return 0;
    s->ops->close(s);
    r = s->write_error;
    free(s);
    return r;
}

void mgr_sink_abort(struct mgr_sink *s)
{
    if (!s)
        return;
    s->aborted = true;
    mgr_sink_close(s);
}
