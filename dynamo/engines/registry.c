/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/engines/registry.c - the table of I/O engines, found by name. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"

#include "dynamo/engine.h"
#ifdef _WIN32
#include "dynamo/engines/windows.h"
#endif

/* The engines of this system's build: Linux's own interfaces there, the
 * windows engine (the first, the default) on Windows (docs/windows.md). */
static const struct dyn_engine_ops *const engine_registry[] = {
#ifdef _WIN32
    &dyn_engine_windows,
#else
    &dyn_engine_libaio,
    &dyn_engine_uring,
#endif
    &dyn_engine_sync,
    &dyn_engine_null,
};

#define ENGINE_COUNT (sizeof(engine_registry) / sizeof(engine_registry[0]))

const struct dyn_engine_ops *dyn_engine_find(const char *name)
{
    for (size_t i = 0; i < ENGINE_COUNT; i++)
        if (!strcmp(engine_registry[i]->facts->name, name))
            return engine_registry[i];
    return NULL;
}

const struct dyn_engine_ops *dyn_engine_lookup(const char *name, struct iof_diag *diag)
{
    const struct dyn_engine_ops *e = dyn_engine_find(name);
    const struct iof_engine_facts *f;
    char have[64] = "";
    size_t n = 0;

    if (e)
        return e;
    for (size_t i = 0; i < ENGINE_COUNT && n < sizeof(have); i++)
        n += (size_t)snprintf(have + n, sizeof(have) - n, "%s%s", i ? ", " : "",
                              engine_registry[i]->facts->name);
    f = iof_engine_facts_find(name);
    if (f && f->os != IOF_ENGINE_OS_ANY && f->os != IOF_ENGINE_THIS_OS)
        iof_diag_set(diag, IOF_EENGINE,
                     "engine %s is not available on this node: it is an engine of %s agents, and "
                     "this one runs %s (its engines: %s)",
                     name, iof_engine_os_name(f->os), iof_engine_os_name(IOF_ENGINE_THIS_OS), have);
    else
        iof_diag_set(diag, IOF_EENGINE, "unknown engine '%s' (this node's engines: %s)", name,
                     have);
    return NULL;
}

size_t dyn_engine_count(void)
{
    return ENGINE_COUNT;
}

const struct dyn_engine_ops *dyn_engine_at(size_t i)
{
    return i < ENGINE_COUNT ? engine_registry[i] : NULL;
}
