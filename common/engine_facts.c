/* SPDX-License-Identifier: Apache-2.0 */
/* common/engine_facts.c - the one table of engine facts (common/engine_facts.h). */
#include "common/engine_facts.h"

#include <string.h>

/* Most I/Os the worker hands an engine in one submit call. Linux plugs the
 * block queue for an io_submit of more than 2 iocbs (AIO_PLUG_THRESHOLD) and
 * dispatches nothing until the last one is set up, which idles the device
 * at high queue depth; pairs avoid the plug and still halve the syscalls
 * (measured in docs/performance.md). */
#define ENGINE_SUBMIT_BATCH 2u
/* A whole refill in one call: for io_uring, whose engine hands the first SQE
 * to an idle device alone itself and the rest in one enter
 * (dynamo/engines/uring.c). */
#define ENGINE_SUBMIT_ALL 4096u

const struct iof_engine_facts iof_engine_facts[IOF_ENGINE_COUNT] = {
    [IOF_ENGINE_LIBAIO] = {.name = "libaio",
                           .fio = "libaio",
                           .os = IOF_ENGINE_OS_LINUX,
                           .direct = true,
                           .touches_files = true,
                           .aio_events = true,
                           .submit_batch = ENGINE_SUBMIT_BATCH},
    [IOF_ENGINE_URING] = {.name = "io_uring",
                          .fio = "io_uring",
                          .os = IOF_ENGINE_OS_LINUX,
                          .direct = true,
                          .touches_files = true,
                          .ring_fd = true,
                          .hipri = true,
                          .submit_batch = ENGINE_SUBMIT_ALL},
    [IOF_ENGINE_SYNC] = {.name = "sync",
                         .fio = "sync",
                         .touches_files = true,
                         .submit_batch = ENGINE_SUBMIT_BATCH},
    [IOF_ENGINE_NULL] = {.name = "null", .fio = "null", .submit_batch = ENGINE_SUBMIT_BATCH},
    /* Overlapped ReadFile/WriteFile on an I/O completion port
     * (dynamo/engines/windows.c), targets opened with FILE_FLAG_NO_BUFFERING:
     * offsets, sizes and buffers sector-aligned, as O_DIRECT's. */
    [IOF_ENGINE_WINDOWS] = {.name = "windows",
                            .fio = "windowsaio",
                            .os = IOF_ENGINE_OS_WINDOWS,
                            .direct = true,
                            .touches_files = true,
                            .submit_batch = ENGINE_SUBMIT_BATCH},
};

const struct iof_engine_facts *iof_engine_facts_find(const char *name)
{
    for (size_t i = 0; i < IOF_ENGINE_COUNT; i++)
        if (!strcmp(iof_engine_facts[i].name, name))
            return &iof_engine_facts[i];
    return NULL;
}

const struct iof_engine_facts *iof_engine_facts_find_fio(const char *fio_name)
{
    for (size_t i = 0; i < IOF_ENGINE_COUNT; i++)
        if (!strcmp(iof_engine_facts[i].fio, fio_name))
            return &iof_engine_facts[i];
    return NULL;
}

const char *iof_engine_os_name(enum iof_engine_os os)
{
    switch (os) {
    case IOF_ENGINE_OS_LINUX:
        return "Linux";
    case IOF_ENGINE_OS_WINDOWS:
        return "Windows";
    case IOF_ENGINE_OS_ANY:
        break;
    }
    return "any system";
}

enum iof_engine_os iof_engine_os_of_kernel(const char *kernel)
{
    if (kernel && (!strncmp(kernel, "Windows ", 8) || !strncmp(kernel, "Wine ", 5)))
        return IOF_ENGINE_OS_WINDOWS;
    return IOF_ENGINE_OS_LINUX;
}

enum iof_engine_id iof_engine_default_of(enum iof_engine_os os)
{
    return os == IOF_ENGINE_OS_WINDOWS ? IOF_ENGINE_WINDOWS : IOF_ENGINE_LIBAIO;
}
