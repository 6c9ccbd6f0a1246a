/* SPDX-License-Identifier: Apache-2.0 */
/* manager/agents.c - `iofleet agents`: asks each agent for its hello and
 * prints its inventory as a table or JSON (manager/agents.h). */
#include "manager/agents.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"

/* "12.3 GiB", binary units, 3 significant digits. */
static const char *fmt_bytes(char *buf, size_t cap, uint64_t v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double d = (double)v;
    size_t u = 0;

    while (d >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        d /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%" PRIu64 " B", v);
    else
        snprintf(buf, cap, "%.*f %s", d < 10 ? 2 : d < 100 ? 1 : 0, d, units[u]);
    return buf;
}

static const char *tri(int v)
{
    return v < 0 ? "?" : v ? "yes" : "no";
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

/* A budget figure, or "no limit" for UINT64_MAX. */
static const char *fmt_limit(char *buf, size_t cap, uint64_t v, bool bytes)
{
    if (v == UINT64_MAX)
        snprintf(buf, cap, "no limit");
    else if (bytes)
        fmt_bytes(buf, cap, v);
    else
        snprintf(buf, cap, "%" PRIu64, v);
    return buf;
}

void mgr_agents_print(const char *endpoint, const struct proto_hello *h, FILE *out)
{
    const struct proto_inventory *inv = &h->inventory;
    const struct proto_workdir_info *wd = &inv->workdir;
    char b1[32], b2[32], b3[32], b4[32];
    int wpath = 4;

    fprintf(out, "%s  %s  dynamo %s, protocol %u.%u, host %s, kernel %s, %u CPUs, %s memory\n",
            h->name, endpoint, or_dash(h->software), h->major, h->minor, or_dash(inv->hostname),
            or_dash(inv->kernel), inv->cpus, fmt_bytes(b1, sizeof(b1), inv->memory_bytes));
    if (inv->has_budget)
        fprintf(out, "  budget: %s workers, %s of I/O buffers, %s AIO events, %s descriptors\n",
                fmt_limit(b1, sizeof(b1), inv->budget.workers, false),
                fmt_limit(b2, sizeof(b2), inv->budget.buffer_mem, true),
                fmt_limit(b3, sizeof(b3), inv->budget.aio_events, false),
                fmt_limit(b4, sizeof(b4), inv->budget.fds, false));
    if (wd->path) {
        fprintf(out, "  workdir %s: %s%s%s, %s free of %s%s\n", wd->path, or_dash(wd->fstype),
                wd->device ? " on " : "", wd->device ? wd->device : "",
                fmt_bytes(b1, sizeof(b1), wd->free), fmt_bytes(b2, sizeof(b2), wd->size),
                wd->ram_backed == 1 ? ", in RAM" : "");
        if (wd->ram_backed == 1)
            fprintf(out,
                    "  warning: the workdir is RAM-backed (%s): test files there measure "
                    "memory, not storage\n",
                    or_dash(wd->fstype));
    }
    if (!inv->ntargets) {
        fprintf(out, "  no --allow entries: test files in the workdir only\n");
        return;
    }
    for (size_t i = 0; i < inv->ntargets; i++) {
        int n = (int)strlen(inv->targets[i].path);
        wpath = n > wpath ? n : wpath;
    }
    fprintf(out, "  %-*s  %-9s  %-10s  %10s  %5s  %5s  %-3s  %-8s  %-7s  %-10s  %-3s  %s\n", wpath,
            "PATH", "KIND", "DEVICE", "SIZE", "LBS", "PBS", "ROT", "IN USE", "SIGNAT.", "MOUNTED",
            "RAM", "MODEL");
    for (size_t i = 0; i < inv->ntargets; i++) {
        const struct proto_target_info *t = &inv->targets[i];
        char pbs[16];
        snprintf(pbs, sizeof(pbs), "%" PRIu32, t->physical_block_size);
        fprintf(out,
                "  %-*s  %-9s  %-10s  %10s  %5" PRIu32 "  %5s  %-3s  %-8s  %-7s  %-10s  %-3s  %s\n",
                wpath, t->path, or_dash(t->kind), or_dash(t->device),
                fmt_bytes(b1, sizeof(b1), t->size), t->logical_block_size,
                t->physical_block_size ? pbs : "?", tri(t->rotational), tri(t->in_use),
                or_dash(t->signature), or_dash(t->mountpoint), tri(t->ram_backed),
                or_dash(t->model));
    }
    for (size_t i = 0; i < inv->ntargets; i++)
        if (inv->targets[i].ram_backed == 1)
            fprintf(out,
                    "  warning: %s is RAM-backed: its numbers are memory numbers, not storage "
                    "numbers\n",
                    inv->targets[i].path);
}

int mgr_agents_list(const char *const *endpoints, size_t n, const struct mgr_probe_opts *base,
                    bool json, FILE *out)
{
    int rc = 0;

    if (json)
        fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        struct mgr_probe_opts o = *base;
        struct proto_hello h;
        struct iof_diag d = {{0}};
        bool ok;

        o.endpoint = endpoints[i];
        ok = mgr_probe_hello(&o, &h, &d) == 0;
        if (!ok)
            rc = 3;
        if (json) {
            char *text = proto_agent_report_json(endpoints[i], ok ? &h : NULL, d.msg);
            if (!text) {
                IOF_USER("iofleet agents: %s: out of memory", endpoints[i]);
                rc = 1;
            } else {
                fprintf(out, "%s%s\n", i ? "," : "", text);
                free(text);
            }
        } else if (ok) {
            if (i)
                fputc('\n', out);
            mgr_agents_print(endpoints[i], &h, out);
        } else {
            IOF_USER("iofleet agents: %s", d.msg);
        }
        if (ok)
            proto_hello_free(&h);
    }
    if (json)
        fputs("]\n", out);
    if (fflush(out) || ferror(out))
        rc = 1;
    return rc;
}
