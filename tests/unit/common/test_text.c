/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_text.c - common/text.c: which characters the name policy
 * refuses (C0, DEL, C1 as UTF-8, bytes that are not UTF-8, bidirectional
 * controls) and how they are shown, the terminal escaper built on the same
 * classes, and the Markdown escaper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/text.h"

static void expect_fault(const char *s, size_t offset, const char *shown, const char *str)
{
    struct iof_text_fault f;
    char buf[96];

    assert_int_equal(iof_text_check(s, &f), -EINVAL);
    assert_int_equal(f.offset, offset);
    assert_string_equal(f.shown, shown);
    assert_string_equal(iof_text_fault_str(buf, sizeof(buf), &f), str);
}

static void test_check_policy(void **state)
{
    (void)state;
    assert_int_equal(iof_text_check("", NULL), 0);
    assert_int_equal(iof_text_check("4K 70% read, 100% random [x] \\ | * _", NULL), 0);
    /* UTF-8 letters, symbols and a no-break space are text. */
    assert_int_equal(iof_text_check("d\xc3\xa9"
                                    "bit \xe6\x97\xa5 \xc2\xb5s \xc2\xa0 \xf0\x9f\x92\xbe",
                                    NULL),
                     0);
    expect_fault("a\x1b[2J", 1, "\\x1b", "\\x1b (a control character) at byte 1");
    expect_fault("\x07", 0, "\\x07", "\\x07 (a control character) at byte 0");
    expect_fault("a\nb", 1, "\\x0a", "\\x0a (a control character) at byte 1");
    expect_fault("tab\there", 3, "\\x09", "\\x09 (a control character) at byte 3");
    expect_fault("x\x7f", 1, "\\x7f", "\\x7f (a control character) at byte 1");
    /* C1 as UTF-8 (U+009B is CSI to many terminals), first and last. */
    expect_fault("ab\xc2\x9b"
                 "2J",
                 2, "\\u009b", "\\u009b (a C1 control character) at byte 2");
    expect_fault("\xc2\x80", 0, "\\u0080", "\\u0080 (a C1 control character) at byte 0");
    expect_fault("\xc2\x9f", 0, "\\u009f", "\\u009f (a C1 control character) at byte 0");
    /* Bytes that are not UTF-8: a lone 8-bit CSI, a cut sequence, an
     * overlong ESC, a surrogate, past U+10FFFF. */
    expect_fault("a\x9b"
                 "2J",
                 1, "\\x9b", "\\x9b (a byte that is not UTF-8) at byte 1");
    expect_fault("ab\xe6\x97", 2, "\\xe6", "\\xe6 (a byte that is not UTF-8) at byte 2");
    expect_fault("\xc0\x9b", 0, "\\xc0", "\\xc0 (a byte that is not UTF-8) at byte 0");
    expect_fault("\xed\xa0\x80", 0, "\\xed", "\\xed (a byte that is not UTF-8) at byte 0");
    expect_fault("\xf4\x90\x80\x80", 0, "\\xf4", "\\xf4 (a byte that is not UTF-8) at byte 0");
    /* Bidirectional overrides and isolates ("Trojan Source"). */
    expect_fault("ok\xe2\x80\xae"
                 "evil",
                 2, "\\u202e", "\\u202e (a bidirectional control character) at byte 2");
    expect_fault("\xe2\x81\xa6", 0, "\\u2066",
                 "\\u2066 (a bidirectional control character) at byte 0");
    assert_int_equal(iof_text_check("\xe2\x80\xa9", NULL), 0); /* U+2029: not a control */
}

static void test_escape_for_terminal(void **state)
{
    char out[64];

    (void)state;
    assert_int_equal(iof_text_escape(out, sizeof(out), "plain \xc3\xa9"), 8);
    assert_string_equal(out, "plain \xc3\xa9");
    iof_text_escape(out, sizeof(out),
                    "\x1b]0;t\x07|\xc2\x9b"
                    "2J|\x9b|\xe2\x80\xae|\x7f");
    assert_string_equal(out, "\\x1b]0;t\\x07|\\u009b2J|\\x9b|\\u202e|\\x7f");
    assert_int_equal(iof_text_escaped_len("\x1b]0;t\x07|\xc2\x9b"
                                          "2J|\x9b|\xe2\x80\xae|\x7f"),
                     strlen(out));
    /* Never cut in half: an escape or a UTF-8 character that does not fit
     * is left out whole. */
    assert_int_equal(iof_text_escape(out, 6, "ab\x1b"), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(iof_text_escape(out, 4, "ab\xc3\xa9"), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(iof_text_escape(out, 1, "abc"), 0);
    assert_string_equal(out, "");
}

/* What fn writes to a FILE for s. */
static char *written(void (*fn)(FILE *, const char *), const char *s)
{
    static char buf[256];
    FILE *f;

    memset(buf, 0, sizeof(buf));
    f = fmemopen(buf, sizeof(buf), "w");

    assert_non_null(f);
    fn(f, s);
    fclose(f);
    return buf;
}

static void test_fput_terminal(void **state)
{
    (void)state;
    assert_string_equal(written(iof_text_fput, "run\x1b]2;owned\x07"), "run\\x1b]2;owned\\x07");
    assert_string_equal(written(iof_text_fput, NULL), "-");
}

static void json_plain(FILE *f, const char *s)
{
    iof_json_fput(f, s, IOF_JSON_TEXT);
}

static void json_script(FILE *f, const char *s)
{
    iof_json_fput(f, s, IOF_JSON_TEXT | IOF_JSON_SCRIPT);
}

static void test_fput_json(void **state)
{
    (void)state;
    assert_string_equal(written(json_plain, "a\"b\\c d\xc3\xa9"), "\"a\\\"b\\\\c d\xc3\xa9\"");
    assert_string_equal(written(json_plain, "\x1b]0;x\x07\x7f|\xc2\x9b|\xe2\x80\xae|\xff"),
                        "\"\\u001b]0;x\\u0007\\u007f|\\u009b|\\u202e|\\ufffd\"");
    assert_string_equal(written(json_plain, "</script>"), "\"</script>\"");
    assert_string_equal(written(json_script, "</script><!--&"),
                        "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
    assert_string_equal(written(json_plain, NULL), "null");
}

static void test_fput_markdown(void **state)
{
    (void)state;
    assert_string_equal(written(iof_text_fput_md, "4K 70% read"), "4K 70% read");
    assert_string_equal(written(iof_text_fput_md, "a|b *c* _d_ `e` [f](g) <h> &i; !j ~k #l \\m"),
                        "a\\|b \\*c\\* \\_d\\_ \\`e\\` \\[f\\]\\(g\\) \\<h\\> \\&i; \\!j \\~k "
                        "\\#l \\\\m");
    assert_string_equal(written(iof_text_fput_md, "x\ny\x1b[2J"), "x\\x0ay\\x1b\\[2J");
    assert_string_equal(written(iof_text_fput_md, "d\xc3\xa9"
                                                  "bit"),
                        "d\xc3\xa9"
                        "bit");
    assert_string_equal(written(iof_text_fput_md, NULL), "");
}

/* HTML: one escaper for the live page and the report; file and buffer
 * forms write the same bytes. */
static void test_html_text(void **state)
{
    static const char *const cases[][2] = {
        {"4K 70% read", "4K 70% read"},
        {"<script>alert('x')</script>", "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"},
        {"a&b \"c\"", "a&amp;b &quot;c&quot;"},
        {"x\ny\x1b[2J\xe2\x80\xae", "x\\x0ay\\x1b[2J\\u202e"},
        {"d\xc3\xa9"
         "but",
         "d\xc3\xa9"
         "but"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct iof_buf b = {0};
        iof_text_add_html(&b, cases[i][0]);
        assert_int_equal(b.err, 0);
        assert_non_null(b.p);
        assert_string_equal(b.p, cases[i][1]);
        assert_string_equal(written(iof_text_fput_html, cases[i][0]), cases[i][1]);
        iof_buf_free(&b);
    }
    assert_string_equal(written(iof_text_fput_html, NULL), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_policy),  cmocka_unit_test(test_escape_for_terminal),
        cmocka_unit_test(test_fput_terminal), cmocka_unit_test(test_fput_json),
        cmocka_unit_test(test_fput_markdown), cmocka_unit_test(test_html_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
