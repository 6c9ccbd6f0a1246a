/* SPDX-License-Identifier: Apache-2.0 */
/* common/budget.c - what a plan's test needs of a node (threads, I/O buffer
 * memory, AIO events, descriptors), shared by the agent's budget check and
 * the manager's `validate --agent`. */
#include "common/budget.h"
#include "common/engine_facts.h"

#include <stdio.h>
#include <string.h>

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

size_t iof_budget_slot_size(const struct iof_spec *spec)
{
    size_t max = 0;

    for (size_t i = 0; i < spec->nlines; i++)
        if (spec->lines[i].size > max)
            max = spec->lines[i].size;
    return (max + IOF_IO_BUF_ALIGN - 1) / IOF_IO_BUF_ALIGN * IOF_IO_BUF_ALIGN;
}

uint64_t iof_budget_write_bytes(const struct iof_worker_cfg *g, uint64_t depth, uint64_t slot)
{
    /* repeat/pseudo: one shared, read-only write source; random and data
     * content, or any verified write (sealed in its own slot): one per slot,
     * data also its pool and random buffer. */
    if (g->verify.algo != IOF_VERIFY_NONE)
        return depth * slot;
    if (g->data.enabled)
        return depth * slot + iof_data_area_size(&g->data);
    return g->pattern == IOF_PATTERN_RANDOM ? depth * slot : slot;
}

/* Whether test file t of group g is verified and was named by a verified
 * group before it (their generation map is one). */
static bool genmap_shared(const struct iof_spec *const *specs, const struct iof_worker_cfg *groups,
                          size_t g, size_t t)
{
    const char *path = groups[g].targets[t].path;
    for (size_t h = 0; h <= g; h++) {
        if (!specs[h] || groups[h].verify.algo == IOF_VERIFY_NONE)
            continue;
        for (size_t u = 0; u < (h == g ? t : groups[h].ntargets); u++)
            if (!strcmp(groups[h].targets[u].path, path))
                return true;
    }
    return false;
}

/* The generation maps of the verified test files (common/spec.h): one per
 * file however many groups name it; a size the plan leaves open (an
 * existing test file) is counted once the file is known, not here. */
static uint64_t genmap_bytes(const struct iof_spec *const *specs,
                             const struct iof_worker_cfg *groups, size_t ngroups)
{
    uint64_t bytes = 0;
    for (size_t g = 0; g < ngroups; g++) {
        if (!specs[g] || groups[g].verify.algo == IOF_VERIFY_NONE)
            continue;
        for (size_t t = 0; t < groups[g].ntargets; t++) {
            const struct iof_target_cfg *tc = &groups[g].targets[t];
            uint64_t n =
                (tc->size >> IOF_GENMAP_SHIFT) + ((tc->size & ((1u << IOF_GENMAP_SHIFT) - 1)) != 0);
            if (tc->path[0] == '/' || n == 0 || n > IOF_GENMAP_MAX ||
                genmap_shared(specs, groups, g, t))
                continue;
            bytes = sat_add(bytes, n * IOF_GENMAP_BYTES);
        }
    }
    return bytes;
}

void iof_budget_need_add(struct iof_budget_need *need, const struct iof_spec *const *specs,
                         const struct iof_worker_cfg *groups, size_t ngroups)
{
    uint64_t workers = 0, mem = 0, aio = 0, fds = 0;
    for (size_t g = 0; g < ngroups; g++) {
        const struct iof_worker_cfg *gc = &groups[g];
        uint64_t qd = gc->queue_depth ? gc->queue_depth : 1, maxsize;
        const struct iof_engine_facts *ef = iof_engine_facts_find(gc->engine);
        if (!specs[g])
            continue;
        maxsize = iof_budget_slot_size(specs[g]);
        uint64_t depth = sat_mul(gc->ntargets, qd);
        /* Per worker: a read buffer per slot and the write source, as
         * dyn_test_start allocates them (the plan's limits keep depth x
         * slot far below 2^64: 2^20 slots x 64 MiB). */
        uint64_t per = sat_add(sat_mul(depth, maxsize), iof_budget_write_bytes(gc, depth, maxsize));
        workers = sat_add(workers, gc->count);
        mem = sat_add(mem, sat_mul(per, gc->count));
        if (ef && ef->aio_events)
            aio = sat_add(aio, sat_mul(depth, gc->count));
        if (!ef || ef->touches_files)
            fds = sat_add(fds, gc->ntargets);
        if (ef && ef->ring_fd) /* a ring descriptor per worker */
            fds = sat_add(fds, gc->count);
    }
    mem = sat_add(mem, genmap_bytes(specs, groups, ngroups));
    need->workers = max_u64(need->workers, workers);
    need->buffer_mem = max_u64(need->buffer_mem, mem);
    need->aio_events = max_u64(need->aio_events, aio);
    need->fds = max_u64(need->fds, fds);
}

void iof_budget_format_bytes(uint64_t v, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double d = (double)v;
    size_t u = 0;

    while (d >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        d /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", d, units[u]);
}
