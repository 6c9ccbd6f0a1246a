/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/eventlog.h - the service's log in the Windows event log
 * (Application, source "iofleet-dynamo"): what the agent writes to stderr,
 * one event per line, through a pipe in place of descriptor 2 and a thread
 * that reports each line with ReportEventW. Windows only. */
#ifndef IOF_DYNAMO_OS_WINDOWS_EVENTLOG_H
#define IOF_DYNAMO_OS_WINDOWS_EVENTLOG_H

#ifdef _WIN32
#include <windows.h>

#include "common/err.h"

#define DYN_WIN_EVENT_SOURCE L"iofleet-dynamo"

/* The event type of one log line: "error:" in it (common/log.c's level
 * word) an error, "warning:" a warning, anything else information. */
WORD dyn_win_event_type(const char *line);

/* From now on, each line written to descriptor 2 (stderr) becomes an event
 * of the source `source` (DYN_WIN_EVENT_SOURCE). 0, or a negative error
 * with diag saying why (stderr is then unchanged). */
int dyn_win_eventlog_start(const wchar_t *source, struct iof_diag *diag);

/* Gives descriptor 2 back, reports what was left, and ends the thread; the
 * numbers of lines reported and of those ReportEventW refused. */
void dyn_win_eventlog_stop(unsigned *reported, unsigned *failed);

#endif
#endif
