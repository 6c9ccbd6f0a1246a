/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_jsonw.c - common/jsonw.c: the string escaper under each
 * policy (a result document's RFC 8259 strings, the text policy, script-safe
 * strings), byte for byte, and the writer's commas and numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"

/* s escaped under flags, as a string owned by a static buffer. */
static const char *esc(const char *s, unsigned flags)
{
    static char out[512];
    struct iof_buf b = IOF_BUF_INIT;

    iof_json_escape(&b, s, flags);
    assert_true(b.len < sizeof(out));
    memcpy(out, iof_buf_str(&b), b.len + 1);
    iof_buf_free(&b);
    return out;
}

static void test_document_strings(void **state)
{
    (void)state;
    assert_string_equal(esc("a\"b\\c", 0), "\"a\\\"b\\\\c\"");
    assert_string_equal(esc("\b\f\n\r\t\x01\x1f|\x7f", 0),
                        "\"\\b\\f\\n\\r\\t\\u0001\\u001f|\x7f\"");
    /* well-formed UTF-8 as it is, C1 and bidirectional controls included */
    assert_string_equal(esc("d\xc3\xa9|\xc2\x9b|\xe2\x80\xae|\xf0\x9f\x98\x80", 0),
                        "\"d\xc3\xa9|\xc2\x9b|\xe2\x80\xae|\xf0\x9f\x98\x80\"");
    /* not UTF-8: a byte that is not, an overlong form, a surrogate, a cut
     * sequence, each byte one replacement character */
    assert_string_equal(esc("\xff|\xc0\xaf|\xed\xa0\x80|\xe2\x80", 0),
                        "\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"");
    assert_string_equal(esc("</script>", 0), "\"</script>\"");
    assert_string_equal(esc("", 0), "\"\"");
    assert_string_equal(esc(NULL, 0), "null");
}

static void test_text_policy(void **state)
{
    (void)state;
    assert_string_equal(esc("a\"b\\c d\xc3\xa9", IOF_JSON_TEXT), "\"a\\\"b\\\\c d\xc3\xa9\"");
    assert_string_equal(esc("\n\t\x1b|\x7f|\xc2\x9b|\xe2\x80\xae|\xe2\x81\xa6|\xff", IOF_JSON_TEXT),
                        "\"\\u000a\\u0009\\u001b|\\u007f|\\u009b|\\u202e|\\u2066|\\ufffd\"");
    assert_string_equal(esc("</script><!--&", IOF_JSON_TEXT), "\"</script><!--&\"");
    assert_string_equal(esc("</script><!--&", IOF_JSON_TEXT | IOF_JSON_SCRIPT),
                        "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
    assert_string_equal(esc(NULL, IOF_JSON_TEXT), "null");
}

static void test_fput_matches_escape(void **state)
{
    const char *s = "x\n\"\xff<&";
    char buf[128] = "";
    FILE *f;

    (void)state;
    for (unsigned flags = 0; flags < 4; flags++) {
        memset(buf, 0, sizeof(buf));
        f = fmemopen(buf, sizeof(buf), "w");
        assert_non_null(f);
        iof_json_fput(f, s, flags);
        fclose(f);
        assert_string_equal(buf, esc(s, flags));
    }
}

static void test_writer(void **state)
{
    struct iof_buf b = IOF_BUF_INIT;

    (void)state;
    iof_json_open(&b, '{');
    iof_json_key(&b, "a");
    iof_json_u64(&b, UINT64_MAX);
    iof_json_key(&b, "b");
    iof_json_open(&b, '[');
    iof_json_bool(&b, true);
    iof_json_null(&b);
    iof_json_str(&b, "x\n");
    iof_json_str(&b, NULL);
    iof_json_int(&b, -5);
    iof_json_dbl(&b, 0.1);
    iof_json_dbl(&b, 1.0 / 3);
    iof_json_dbl(&b, NAN);
    iof_json_dbl(&b, INFINITY);
    iof_json_close(&b, ']');
    iof_json_key(&b, "c");
    iof_json_open(&b, '{');
    iof_json_close(&b, '}');
    iof_json_key(&b, "d");
    iof_json_raw(&b, "[1,2]", 5);
    iof_json_close(&b, '}');
    assert_string_equal(iof_buf_str(&b), "{\"a\":18446744073709551615,\"b\":[true,null,\"x\\n\","
                                         "null,-5,0.1,0.3333333333333333,null,null],\"c\":{},"
                                         "\"d\":[1,2]}");
    iof_buf_free(&b);
}

/* A JSON text written as IOF_JSON_SCRIPT writes its strings: the same
 * bytes, so a document escaped either way reads back the same. */
static void test_script_safe(void **state)
{
    struct iof_buf whole = IOF_BUF_INIT, direct = IOF_BUF_INIT;
    const char *json = "{\"n\":\"</script><img onerror=x>&amp;\",\"v\":1}";

    (void)state;
    iof_json_script_safe(&whole, json, strlen(json));
    assert_string_equal(iof_buf_str(&whole), "{\"n\":\"\\u003c/script\\u003e\\u003cimg "
                                             "onerror=x\\u003e\\u0026amp;\",\"v\":1}");
    iof_buf_addstr(&direct, "{\"n\":");
    iof_json_escape(&direct, "</script><img onerror=x>&amp;", IOF_JSON_SCRIPT);
    iof_buf_addstr(&direct, ",\"v\":1}");
    assert_string_equal(iof_buf_str(&whole), iof_buf_str(&direct));
    iof_buf_free(&whole);
    iof_buf_free(&direct);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_document_strings),    cmocka_unit_test(test_text_policy),
        cmocka_unit_test(test_fput_matches_escape), cmocka_unit_test(test_writer),
        cmocka_unit_test(test_script_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
