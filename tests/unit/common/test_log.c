/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_log.c - common/log.c: a quoted newline or escape sequence
 * can neither forge a second log line nor reach the terminal raw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

static void test_escape_control_bytes(void **state)
{
    char out[64];

    (void)state;
    assert_int_equal(iof_log_escape(out, sizeof(out), "plain text"), 10);
    assert_string_equal(out, "plain text");
    iof_log_escape(out, sizeof(out), "a\nb\r\tc\x1b[2J\x7f");
    assert_string_equal(out, "a\\x0ab\\x0d\\x09c\\x1b[2J\\x7f");
}

static void test_escape_never_cut_in_half(void **state)
{
    char out[6];

    (void)state;
    /* "ab" fits, "\x0a" (4 bytes) would not: cut before it. */
    assert_int_equal(iof_log_escape(out, sizeof(out), "ab\ncd"), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(iof_log_escape(out, 1, "abc"), 0);
    assert_string_equal(out, "");
}

/* What the log writes to stderr for one call: IOF_WARN of a target, or
 * with `user` IOF_USER of an agents-file line. */
static void capture_of(char *buf, size_t cap, const char *path, bool user)
{
    int p[2], saved;
    ssize_t n;

    assert_int_equal(pipe(p), 0);
    saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(p[1], STDERR_FILENO) >= 0);
    if (user)
        IOF_USER("iofleet: %s:%u: one HOST[:PORT] per line", path, 3u);
    else
        IOF_WARN("target '%s': permission denied", path);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    close(p[1]);
    n = read(p[0], buf, cap - 1);
    close(p[0]);
    assert_true(n >= 0);
    buf[n] = '\0';
}

static void capture(char *buf, size_t cap, const char *path)
{
    capture_of(buf, cap, path, false);
}

static void test_log_line_stays_one_line(void **state)
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

/* A user-facing line: as given (no program name or level added), printed
 * at any level, escaped and whole like every log line. */
static void test_user_line_as_given(void **state)
{
    char got[4096], path[3000];

    (void)state;
    iof_log_init("iofleet", IOF_LOG_ERROR); /* warnings are not printed */
    capture(got, sizeof(got), "quiet");
    assert_string_equal(got, "");
    capture_of(got, sizeof(got), "agents\n.txt", true);
    assert_string_equal(got, "iofleet: agents\\x0a.txt:3: one HOST[:PORT] per line\n");
    /* a path of thousands of bytes is not cut (lines were at 1 KiB) */
    memset(path, 'p', sizeof(path) - 1);
    path[sizeof(path) - 1] = '\0';
    capture_of(got, sizeof(got), path, true);
    assert_int_equal(strlen(got), strlen("iofleet: :3: one HOST[:PORT] per line\n") + 2999);
    iof_log_init("iofleet", IOF_LOG_INFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_control_bytes),
        cmocka_unit_test(test_escape_never_cut_in_half),
        cmocka_unit_test(test_log_line_stays_one_line),
        cmocka_unit_test(test_user_line_as_given),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
