/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/engines/registry.c - the table of I/O engines, found by name. */
#include <stddef.h>
#include <string.h>

#include "dynamo/engine.h"

static const struct io_engine *const engine_registry[] = {
    &dyn_engine_libaio,
    &dyn_engine_uring,
    &dyn_engine_sync,
    &dyn_engine_null,
};

const struct io_engine *dyn_engine_find(const char *name)
{
    for (size_t i = 0; i < sizeof(engine_registry) / sizeof(engine_registry[0]); i++)
        if (!strcmp(engine_registry[i]->name, name))
            return engine_registry[i];
    return NULL;
}
