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
    IOF_ENGINE_WINDOWS,
    IOF_ENGINE_COUNT
};

/* The system whose agents have an engine: the build of dynamo for that
 * system registers it (dynamo/engines/registry.c); an agent of the other
 * refuses a plan naming it at prepare (dyn_engine_lookup()). */
enum iof_engine_os {
    IOF_ENGINE_OS_ANY,
    IOF_ENGINE_OS_LINUX,
    IOF_ENGINE_OS_WINDOWS,
};

/* The system this build is for, and its engine for a worker group whose
 * plan names none: libaio on Linux, windows on Windows. A plan reaches the
 * agents without its defaults filled in, so each agent applies its own; both
 * are O_DIRECT-like (sector-aligned I/O), so the manager's checks with
 * libaio's facts hold for either. */
#ifdef _WIN32
#define IOF_ENGINE_THIS_OS IOF_ENGINE_OS_WINDOWS
#define IOF_ENGINE_DEFAULT IOF_ENGINE_WINDOWS
#else
#define IOF_ENGINE_THIS_OS IOF_ENGINE_OS_LINUX
#define IOF_ENGINE_DEFAULT IOF_ENGINE_LIBAIO
#endif

struct iof_engine_facts {
    const char *name;      /* as a plan names it ("engine") */
    const char *fio;       /* fio's ioengine of the same kind (the fio importer) */
    enum iof_engine_os os; /* the system whose agents have it (ANY: every agent) */
    bool direct;           /* targets opened with O_DIRECT (Windows: FILE_FLAG_NO_BUFFERING):
                            * sizes and offsets 512-aligned */
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

/* The facts of the engine fio calls `fio_name` ("windowsaio": windows), or NULL. */
const struct iof_engine_facts *iof_engine_facts_find_fio(const char *fio_name);

/* "Linux", "Windows" ("any system" for IOF_ENGINE_OS_ANY). */
const char *iof_engine_os_name(enum iof_engine_os os);

/* The system of an agent, from the kernel its hello names: a Windows agent's is
 * "Windows NT 10.0 build 19045" (dynamo/os/windows/host.c; "... on Wine 8.0",
 * or "Wine 8.0" alone, under Wine), a Linux agent's its uname release
 * ("6.1.0-18-amd64"). NULL or "" (unknown): Linux, what every agent before
 * the Windows one was. */
enum iof_engine_os iof_engine_os_of_kernel(const char *kernel);

/* The engine an agent of system `os` runs for a worker group whose plan
 * names none: libaio on Linux, windows on Windows (IOF_ENGINE_DEFAULT of
 * that system's build). */
enum iof_engine_id iof_engine_default_of(enum iof_engine_os os);

#endif
