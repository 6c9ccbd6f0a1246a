/* SPDX-License-Identifier: Apache-2.0 */
/* common/clock.h - the one time source: CLOCK_MONOTONIC in nanoseconds. */
#ifndef IOF_COMMON_CLOCK_H
#define IOF_COMMON_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#define IOF_NS_PER_US 1000ULL
#define IOF_NS_PER_MS 1000000ULL
#define IOF_NS_PER_S 1000000000ULL

/* Monotonic time in ns. Cheap (vDSO; QueryPerformanceCounter on Windows,
 * common/os/os.h); safe from any thread. */
#ifdef _WIN32
#include "common/os/os.h"
static inline uint64_t iof_now_ns(void)
{
    return iof_os_now_ns();
}
#else
static inline uint64_t iof_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * IOF_NS_PER_S + (uint64_t)ts.tv_nsec;
}
#endif

/* Wall-clock time in ns since the epoch (for result timestamps only). */
static inline uint64_t iof_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * IOF_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* t + off as a time (both may come from the wire): 0 and *out, or -ERANGE
 * when the sum is negative or past INT64_MAX (never signed overflow). */
static inline int iof_time_add_offset(uint64_t t, int64_t off, uint64_t *out)
{
    int64_t r;
    if (t > (uint64_t)INT64_MAX || __builtin_add_overflow((int64_t)t, off, &r) || r < 0)
        return -ERANGE;
    *out = (uint64_t)r;
    return 0;
}

/* Sleeps until monotonic time `deadline_ns` (absolute); returns early never. */
void iof_sleep_until(uint64_t deadline_ns);

#endif
