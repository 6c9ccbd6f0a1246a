/* SPDX-License-Identifier: Apache-2.0 */
/* common/engine_facts.h - what each I/O engine is, stated once: the plan's
 * checks (proto/plan.c), the fio importer (proto/import_fio.c), the budget
 * (common/budget.c) and dynamo's engine registry (dynamo/engine.h) all read
 * this table. It lives in common/ because the budget rule does and every
 * layer may include common/; the engines' code stays in dynamo/engines/. */
#ifndef IOF_COMMON_ENGINE_FACTS_H
#define IOF_COMMON_ENGINE_FACTS_H

#include <stdbool.h>
#include <stddef.h>

enum iof_engine_id {
    IOF_ENGINE_LIBAIO,
    IOF_ENGINE_URING,
    IOF_ENGINE_SYNC,
    IOF_ENGINE_NULL,
    IOF_ENGINE_COUNT
};

struct iof_engine_facts {
    const char *name;      /* as a plan names it ("engine") */
    bool direct;           /* targets opened with O_DIRECT: sizes and offsets 512-aligned */
    bool touches_files;    /* opens its targets (false: null, which does no I/O) */
    bool ring_fd;          /* one ring descriptor per worker (io_uring) */
    bool hipri;            /* can poll for completions (plan "hipri") */
    bool aio_events;       /* takes one kernel AIO event per I/O slot (aio-max-nr) */
    unsigned submit_batch; /* I/Os the worker hands it per submit call while few are in flight */
};

/* Indexed by enum iof_engine_id, in the order the plan documents them. */
extern const struct iof_engine_facts iof_engine_facts[IOF_ENGINE_COUNT];

/* The facts of the engine called `name`, or NULL. */
const struct iof_engine_facts *iof_engine_facts_find(const char *name);

#endif
