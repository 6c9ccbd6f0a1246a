/* SPDX-License-Identifier: Apache-2.0 */
/* common/budget.h - what a plan's test needs of a node: worker threads, I/O
 * buffer memory, AIO events and descriptors, by the one rule a worker
 * allocates its I/O buffers by. The agent checks it against its limits
 * (dynamo/budget.h) before anything starts; the manager shows it beside an
 * agent's limits (`iofleet validate --agent`). Both compute it here, so
 * they never disagree. */
#ifndef IOF_COMMON_BUDGET_H
#define IOF_COMMON_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "common/spec.h"

/* Alignment of every I/O buffer (O_DIRECT) and of a buffer slot's size. */
#define IOF_IO_BUF_ALIGN 4096u

/* What a plan's tests need on one node (the most any one test needs). */
struct iof_budget_need {
    uint64_t workers;
    uint64_t buffer_mem; /* bytes of I/O buffers, as dynamo/run.c allocates them, and of
                          * the generation maps of verified test files */
    uint64_t aio_events; /* io_setup() events of the libaio workers */
    uint64_t fds;        /* targets opened, and io_uring workers' rings */
};

/* A worker's I/O buffers, the one rule dyn_test_start allocates by and the
 * budget counts by: each of its `depth` slots has a read buffer of
 * iof_budget_slot_size(spec) bytes (the spec's largest transfer, rounded up
 * to IOF_IO_BUF_ALIGN); the write source is one such buffer per slot for
 * `random` pattern, `data` content (which adds its pool and random buffer,
 * iof_data_area_size) or `verify` (every write sealed in its slot), one
 * shared otherwise. */
size_t iof_budget_slot_size(const struct iof_spec *spec);
uint64_t iof_budget_write_bytes(const struct iof_worker_cfg *g, uint64_t depth, uint64_t slot);

/* Adds to *need what the worker groups `groups` (as one test runs them)
 * take, group g running specs[g] (a NULL entry: the group idles, takes
 * nothing), keeping the largest value per field. Saturates instead of
 * wrapping. */
void iof_budget_need_add(struct iof_budget_need *need, const struct iof_spec *const *specs,
                         const struct iof_worker_cfg *groups, size_t ngroups);

/* "1.0 GiB", "512.0 MiB", "4096 B": bytes in binary units, one decimal. */
void iof_budget_format_bytes(uint64_t v, char *buf, size_t cap);

#endif
