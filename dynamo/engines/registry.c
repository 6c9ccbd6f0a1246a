/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/engines/registry.c - the table of I/O engines, found by name. */
#include <stddef.h>
#include <string.h>

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

size_t dyn_engine_count(void)
{
    return ENGINE_COUNT;
}

const struct dyn_engine_ops *dyn_engine_at(size_t i)
{
    return i < ENGINE_COUNT ? engine_registry[i] : NULL;
}
