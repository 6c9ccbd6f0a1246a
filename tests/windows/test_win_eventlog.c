/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/test_win_eventlog.c - the service's log in the event log
 * (dynamo/os/windows/eventlog.c), under Wine: each line's event type from
 * common/log.c's level word, and the way there: with the event log started,
 * what the agent logs (IOF_WARN, IOF_INFO, IOF_ERROR, a line written in two
 * pieces, a last line without its newline) is reported one event per line
 * through RegisterEventSourceW/ReportEventW, none refused, and stderr is
 * given back afterwards. Wine keeps no event log to read back, so that the
 * events are in Windows' Application log is not checked here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <io.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "common/err.h"
#include "common/log.h"

static void test_event_types(void **state)
{
    (void)state;
    assert_int_equal(dyn_win_event_type("dynamo: error: cannot listen"), EVENTLOG_ERROR_TYPE);
    assert_int_equal(dyn_win_event_type("dynamo: warning: manager 'm' lost"),
                     EVENTLOG_WARNING_TYPE);
    assert_int_equal(dyn_win_event_type("dynamo: info: agent 'n' listening on 0.0.0.0:7066"),
                     EVENTLOG_INFORMATION_TYPE);
    /* The word counts only where the level is. */
    assert_int_equal(dyn_win_event_type("dynamo: info: a file named error: here"),
                     EVENTLOG_INFORMATION_TYPE);
    assert_int_equal(dyn_win_event_type("error: bare"), EVENTLOG_ERROR_TYPE);
    assert_int_equal(dyn_win_event_type("dynamo: service run: not started"),
                     EVENTLOG_INFORMATION_TYPE);
}

static void test_lines_become_events(void **state)
{
    struct iof_diag d = {{0}};
    unsigned reported = 99, failed = 99;
    int r;

    (void)state;
    iof_log_init("dynamo", IOF_LOG_INFO);
    r = dyn_win_eventlog_start(DYN_WIN_EVENT_SOURCE, &d);
    if (r)
        fail_msg("%s", d.msg);
    IOF_WARN("test warning %d", 1);
    IOF_INFO("test info");
    IOF_ERROR("test error");
    assert_int_equal(_write(2, "dynamo: info: in two ", 21), 21);
    assert_int_equal(_write(2, "pieces\r\n", 8), 8);
    assert_int_equal(_write(2, "\n", 1), 1); /* an empty line: no event */
    assert_int_equal(_write(2, "dynamo: info: no newline", 24), 24);
    dyn_win_eventlog_stop(&reported, &failed);
    print_message("events reported: %u, refused: %u\n", reported, failed);
    assert_int_equal(reported, 5);
    assert_int_equal(failed, 0);
    /* stderr is back: a write to it does not block or fail. */
    assert_true(_write(2, "", 0) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_types),
        cmocka_unit_test(test_lines_become_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
