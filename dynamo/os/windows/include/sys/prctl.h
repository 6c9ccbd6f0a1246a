/* SPDX-License-Identifier: Apache-2.0 */
/* <sys/prctl.h> for the agent's Windows build: the timer slack a Linux
 * worker sets has no Windows counterpart (its sleeps are waitable timers,
 * common/os/win.c); prctl does nothing there. */
#ifndef IOF_DYNAMO_WIN_SYS_PRCTL_H
#define IOF_DYNAMO_WIN_SYS_PRCTL_H

#define PR_SET_TIMERSLACK 29
static inline int prctl(int option, ...)
{
    (void)option;
    return 0;
}

#endif
