/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_import_lines.c - proto/import_lines.c, the importers' one
 * line reader: line numbers, a Windows line end, fio's comments cut anywhere,
 * vdbench's comment lines, blanks trimmed, an oversized line refused and
 * reading going on, too many lines stopping the read, with one message each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "proto/import.h"
#include "proto/import_lines.h"

static void test_fio_style(void **state)
{
    char text[] = "[job] ; a job\r\n\n  bs=4k # small\n;only a comment\n\trw=read  \n";
    struct iof_buf msgs = IOF_BUF_INIT;
    struct proto_import_lines r = {.name = "j.fio", .msgs = &msgs, .cut = ";#"};
    char *line;
    (void)state;

    proto_import_lines_init(&r, text);
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_LINE);
    assert_string_equal(line, "[job]");
    assert_int_equal(r.lineno, 1);
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_LINE);
    assert_string_equal(line, "bs=4k");
    assert_int_equal(r.lineno, 3);
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_LINE);
    assert_string_equal(line, "rw=read");
    assert_int_equal(r.lineno, 5);
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_END);
    assert_int_equal(msgs.len, 0);
    iof_buf_free(&msgs);
}

static void test_vdbench_style(void **state)
{
    char text[] = "* comment\n/ comment\n  # comment\nsd=sd1,lun=/dev/sdb,\r\n  threads=8\n"
                  "sd=sd2,lun=\x1b[2J\nwd=wd1;x#y\n";
    struct iof_buf msgs = IOF_BUF_INIT;
    struct proto_import_lines r = {
        .name = "p.vdb", .msgs = &msgs, .comment = "*/#", .check_text = true};
    char *line;
    (void)state;

    proto_import_lines_init(&r, text);
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_LINE);
    assert_string_equal(line, "sd=sd1,lun=/dev/sdb,");
    assert_int_equal(r.lineno, 4);
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_LINE);
    assert_string_equal(line, "threads=8");
    /* a control character: refused with its line, and reading goes on */
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_BAD);
    assert_non_null(strstr(msgs.p, "p.vdb:6: error: line 'sd=sd2,lun="));
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_LINE);
    assert_string_equal(line, "wd=wd1;x#y"); /* no cut characters for vdbench */
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_END);
    iof_buf_free(&msgs);
}

static void test_bounds(void **state)
{
    size_t n = IOF_IMPORT_MAX_LINE + 1;
    char *text = malloc(n + 16), *line;
    struct iof_buf msgs = IOF_BUF_INIT;
    struct proto_import_lines r = {.name = "j.fio", .msgs = &msgs};
    (void)state;

    assert_non_null(text);
    memset(text, 'x', n);
    strcpy(text + n, "\nok\n");
    proto_import_lines_init(&r, text);
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_BAD);
    assert_string_equal(msgs.p, "j.fio:1: error: line longer than 4096 bytes\n");
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_LINE);
    assert_string_equal(line, "ok");
    assert_int_equal(r.lineno, 2);
    free(text);
    iof_buf_free(&msgs);

    /* More lines than an import reads: one message, and the read stops. */
    text = malloc(IOF_IMPORT_MAX_LINES + 3);
    assert_non_null(text);
    memset(text, '\n', IOF_IMPORT_MAX_LINES + 2);
    text[IOF_IMPORT_MAX_LINES + 2] = 0;
    iof_buf_init(&msgs, 0);
    proto_import_lines_init(&r, text);
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_STOP);
    assert_string_equal(msgs.p, "j.fio:100001: error: more than 100000 lines\n");
    assert_int_equal(proto_import_lines_next(&r, &line), PROTO_LINES_END);
    free(text);
    iof_buf_free(&msgs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fio_style),
        cmocka_unit_test(test_vdbench_style),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
