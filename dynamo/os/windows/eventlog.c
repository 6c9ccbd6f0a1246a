/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/eventlog.c - the service's log in the Windows event log
 * (declared in dynamo/os/windows/posix.h): descriptor 2 becomes a pipe whose lines a
 * thread reports with ReportEventW, so every message of common/log.c (one
 * write per line) is one event, its type from its level word. */
#ifdef _WIN32
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "common/err.h"
#include "common/os/os.h"

#define EVENT_LINE_MAX 4400 /* common/log.c's line, and a little */

static struct {
    HANDLE source, thread;
    int rfd, saved;
    unsigned reported, failed;
} ev = {.rfd = -1, .saved = -1};

unsigned short dyn_win_event_type(const char *line)
{
    /* "dynamo: warning: ...": the word after the program's name. */
    const char *p = strstr(line, ": ");

    p = p ? p + 2 : line;
    if (!strncmp(p, "error: ", 7) || !strncmp(line, "error: ", 7))
        return EVENTLOG_ERROR_TYPE;
    if (!strncmp(p, "warning: ", 9) || !strncmp(line, "warning: ", 9))
        return EVENTLOG_WARNING_TYPE;
    return EVENTLOG_INFORMATION_TYPE;
}

static void report(const char *line)
{
    wchar_t w[EVENT_LINE_MAX];
    LPCWSTR strs[1] = {w};

    if (!line[0])
        return;
    if (MultiByteToWideChar(CP_UTF8, 0, line, -1, w, EVENT_LINE_MAX) <= 0)
        return;
    if (ReportEventW(ev.source, dyn_win_event_type(line), 0, 1, NULL, 1, 0, strs, NULL))
        ev.reported++;
    else
        ev.failed++;
}

/* Reads the pipe until its last writer closes it, one event per line. */
static DWORD WINAPI reader(void *arg)
{
    char buf[EVENT_LINE_MAX];
    size_t have = 0;
    int n;

    (void)arg;
    for (;;) {
        n = _read(ev.rfd, buf + have, (unsigned)(sizeof(buf) - 1 - have));
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
            *nl = '\0';
            if (nl > start && nl[-1] == '\r')
                nl[-1] = '\0';
            report(start);
            start = nl + 1;
        }
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
        if (have == sizeof(buf) - 1) { /* a line longer than any of common/log.c's */
            buf[have] = '\0';
            report(buf);
            have = 0;
        }
    }
    buf[have] = '\0';
    report(buf);
    return 0;
}

int dyn_win_eventlog_start(const wchar_t *source, struct iof_diag *diag)
{
    int fds[2], r;

    ev.source = RegisterEventSourceW(NULL, source);
    if (!ev.source) {
        r = iof_os_win_errno(GetLastError());
        return iof_diag_set(diag, r, "event log: cannot register the source '%ls': %s", source,
                            strerror(-r));
    }
    if (_pipe(fds, 65536, _O_BINARY | _O_NOINHERIT) < 0) {
        r = -errno;
        DeregisterEventSource(ev.source);
        ev.source = NULL;
        return iof_diag_set(diag, r, "event log: pipe: %s", strerror(-r));
    }
    fflush(stderr);
    ev.saved = _dup(2);
    ev.rfd = fds[0];
    ev.reported = ev.failed = 0;
    if (_dup2(fds[1], 2) < 0) {
        r = -errno;
        _close(fds[0]);
        _close(fds[1]);
        if (ev.saved >= 0)
            _close(ev.saved);
        ev.saved = ev.rfd = -1;
        DeregisterEventSource(ev.source);
        ev.source = NULL;
        return iof_diag_set(diag, r, "event log: stderr: %s", strerror(-r));
    }
    _close(fds[1]);
    ev.thread = CreateThread(NULL, 0, reader, NULL, 0, NULL);
    if (!ev.thread) {
        r = iof_os_win_errno(GetLastError());
        dyn_win_eventlog_stop(NULL, NULL);
        return iof_diag_set(diag, r, "event log: thread: %s", strerror(-r));
    }
    return 0;
}

void dyn_win_eventlog_stop(unsigned *reported, unsigned *failed)
{
    fflush(stderr);
    /* Descriptor 2 back (or closed): the pipe's last writer is gone. */
    if (ev.saved >= 0) {
        _dup2(ev.saved, 2);
        _close(ev.saved);
    } else {
        _close(2);
    }
    ev.saved = -1;
    if (ev.thread) {
        WaitForSingleObject(ev.thread, INFINITE);
        CloseHandle(ev.thread);
        ev.thread = NULL;
    }
    if (ev.rfd >= 0)
        _close(ev.rfd);
    ev.rfd = -1;
    if (ev.source)
        DeregisterEventSource(ev.source);
    ev.source = NULL;
    if (reported)
        *reported = ev.reported;
    if (failed)
        *failed = ev.failed;
}
#endif
