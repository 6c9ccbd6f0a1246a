/* SPDX-License-Identifier: Apache-2.0 */
/* common/clock.c - sleeping until a CLOCK_MONOTONIC deadline (the clock
 * itself is inline in clock.h). */
#include "common/clock.h"

#include <errno.h>

#ifndef _WIN32 /* Windows: common/os/win.c */
void iof_sleep_until(uint64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline_ns / IOF_NS_PER_S),
                          .tv_nsec = (long)(deadline_ns % IOF_NS_PER_S)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}
#endif
