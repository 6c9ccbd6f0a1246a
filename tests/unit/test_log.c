/* tests/unit/test_log.c - common/log.c: a quoted newline or escape sequence
 * can neither forge a second log line nor reach the terminal raw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

static void escape_control_bytes(void **state)
{
    char out[64];

    (void)state;
    assert_int_equal(iof_log_escape(out, sizeof(out), "plain text"), 10);
    assert_string_equal(out, "plain text");
    iof_log_escape(out, sizeof(out), "a\nb\r\tc\x1b[2J\x7f");
    assert_string_equal(out, "a\\x0ab\\x0d\\x09c\\x1b[2J\\x7f");
}

static void escape_never_cut_in_half(void **state)
{
    char out[6];

    (void)state;
    /* "ab" fits, "\x0a" (4 bytes) would not: cut before it. */
    assert_int_equal(iof_log_escape(out, sizeof(out), "ab\ncd"), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(iof_log_escape(out, 1, "abc"), 0);
    assert_string_equal(out, "");
}

/* What iof_log writes to stderr for one call. */
static void capture(char *buf, size_t cap, const char *path)
{
    int p[2], saved;
    ssize_t n;

    assert_int_equal(pipe(p), 0);
    saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(p[1], STDERR_FILENO) >= 0);
    IOF_WARN("target '%s': permission denied", path);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    close(p[1]);
    n = read(p[0], buf, cap - 1);
    close(p[0]);
    assert_true(n > 0);
    buf[n] = '\0';
}

static void log_line_stays_one_line(void **state)
{
    char got[512];
    const char *nl;

    (void)state;
    iof_log_init("dynamo", IOF_LOG_INFO);
    capture(got, sizeof(got), "x\ndynamo: info: test 1 done");
    assert_string_equal(got,
                        "dynamo: warning: target 'x\\x0adynamo: info: test 1 done': permission "
                        "denied\n");
    nl = strchr(got, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escape_control_bytes),
        cmocka_unit_test(escape_never_cut_in_half),
        cmocka_unit_test(log_line_stays_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
