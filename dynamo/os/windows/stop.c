/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/stop.c - the ways Windows asks the agent to stop: the
 * console's control events (Ctrl-C, Ctrl-Break, the console window closed),
 * taken by a SetConsoleCtrlHandler handler, and the service's stop
 * (service.c). Each goes through dyn_win_stop_request(), which calls
 * dyn_agent_request_stop(): the running test's workers see their stop flag
 * within a wait slice (50 ms), what is in flight is reaped, and every
 * connection closes, as SIGINT or SIGTERM make it on Linux. The time of the
 * first request is kept, and dyn_os_agent_stopped() logs how long the agent
 * took to end its I/O and stop (docs/windows.md, "Stopping the agent"). */
#ifdef _WIN32
#include <stdatomic.h>
#include <stdint.h>
#include <windows.h>

#include "common/clock.h"
#include "common/log.h"
#include "dynamo/agent.h"
#include "dynamo/os/os.h"

static _Atomic uint64_t stop_at_ns; /* the first request (iof_now_ns()); 0: none */
static const char *_Atomic stop_what;

int dyn_win_stop_request(const char *what)
{
    uint64_t none = 0;

    if (atomic_compare_exchange_strong(&stop_at_ns, &none, iof_now_ns()))
        atomic_store(&stop_what, what);
    return dyn_agent_request_stop();
}

/* Runs on a thread of its own, which Windows starts for each event. Ctrl-C
 * and Ctrl-Break stop the agent (TRUE: the default handler, which would end
 * the process at once, is not called). For the console's close Windows ends
 * the process when the handler returns (or 5 s later): it waits instead,
 * while the agent stops and main() returns. Logoff and shutdown reach only
 * services, which take them from the service manager (service.c); FALSE
 * leaves them, and any event that comes while no agent runs, to the next
 * handler. */
static BOOL WINAPI stop_console_ctrl(DWORD type)
{
    const char *what = type == CTRL_C_EVENT       ? "Ctrl-C"
                       : type == CTRL_BREAK_EVENT ? "Ctrl-Break"
                       : type == CTRL_CLOSE_EVENT ? "the console's close"
                                                  : NULL;

    if (!what || dyn_win_stop_request(what) < 0)
        return FALSE;
    IOF_INFO("%s: stopping all I/O and shutting down", what);
    if (type == CTRL_CLOSE_EVENT)
        Sleep(INFINITE);
    return TRUE;
}

void dyn_win_stop_console_init(void)
{
    /* Again at each call: the handler goes first in the process's list,
     * ahead of libuv's (uv_default_loop() adds it), which would take
     * Ctrl-C as SIGINT and leave Ctrl-Break and the close to Windows'
     * default, the process ended in the middle of its I/O. */
    SetConsoleCtrlHandler(stop_console_ctrl, FALSE);
    SetConsoleCtrlHandler(stop_console_ctrl, TRUE);
}

void dyn_os_agent_stopped(void)
{
    uint64_t at = atomic_load(&stop_at_ns);

    if (at)
        IOF_INFO("stopped %.0f ms after %s: every test's I/O ended, every connection closed",
                 (double)(iof_now_ns() - at) / 1e6, atomic_load(&stop_what));
}
#endif
