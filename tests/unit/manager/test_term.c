/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_term.c - manager/term.c: latencies in auto-scaled units
 * (3 significant digits, the unit's edges rounded the right way), columns
 * of UTF-8 text, prose wrapped to a width, the terminal width of a file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/term.h"

static void lat_is(double ns, bool utf8, const char *want)
{
    char buf[MGR_LAT_LEN];
    mgr_term_lat(buf, sizeof(buf), ns, utf8);
    if (strcmp(buf, want))
        fail_msg("%.3f ns: got '%s', want '%s'", ns, buf, want);
}

static void test_lat_units(void **state)
{
    (void)state;
    lat_is(0, true, "0ns");
    lat_is(87.4, true, "87ns");
    lat_is(812, true, "812ns");
    lat_is(999.4, true, "999ns");
    lat_is(999.6, true, "1.00µs"); /* not "1000ns" */
    lat_is(1100, true, "1.10µs");
    lat_is(1234.5, true, "1.23µs");
    lat_is(9994, true, "9.99µs");
    lat_is(9996, true, "10.0µs");
    lat_is(12345, true, "12.3µs");
    lat_is(99940, true, "99.9µs");
    lat_is(99960, true, "100µs");
    lat_is(123456, true, "123µs");
    lat_is(999600, true, "1.00ms");
    lat_is(12.3e6, true, "12.3ms");
    lat_is(123e6, true, "123ms");
    lat_is(1.234e9, true, "1.23s");
    lat_is(1234e9, true, "1234s"); /* seconds go on */
    lat_is(1234.5, false, "1.23us");
    lat_is(-1, true, "-");
    lat_is(NAN, true, "-");
    char buf[MGR_LAT_LEN];
    assert_string_equal(mgr_term_lat_ms(buf, sizeof(buf), 0.0011, true), "1.10µs");
    assert_string_equal(mgr_term_lat_ms(buf, sizeof(buf), 0.000157, true), "157ns");
}

static void test_cols(void **state)
{
    (void)state;
    assert_int_equal(mgr_term_cols(""), 0);
    assert_int_equal(mgr_term_cols("1.23µs"), 6);
    assert_int_equal(strlen("1.23µs"), 7);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    mgr_term_pad(f, "1.23µs", 8, true);
    mgr_term_pad(f, "ab", 4, false);
    mgr_term_pad(f, "toolong", 3, true);
    fclose(f);
    assert_string_equal(out, "  1.23µsab  toolong");
    free(out);
}

static char *wrap(unsigned width, unsigned indent, const char *text)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    mgr_term_wrap(f, width, indent, text);
    fclose(f);
    return out;
}

static void test_wrap(void **state)
{
    (void)state;
    const char *text = "  left out to fit 40 columns: read_IOPS, write_IOPS, p50; every column "
                       "is in a-rather-long-file-name-for-a-result.csv";
    char *out = wrap(0, 4, text);
    assert_string_equal(out,
                        "  left out to fit 40 columns: read_IOPS, write_IOPS, p50; every column "
                        "is in a-rather-long-file-name-for-a-result.csv\n");
    free(out);
    out = wrap(40, 4, text);
    assert_string_equal(out, "  left out to fit 40 columns: read_IOPS,\n"
                             "    write_IOPS, p50; every column is in\n"
                             "    a-rather-long-file-name-for-a-result.csv\n");
    free(out);
    /* Every line within the width but a word longer than it. */
    out = wrap(12, 2, "abc defghijklmnopq rs tu");
    assert_string_equal(out, "abc\n  defghijklmnopq\n  rs tu\n");
    free(out);
    out = wrap(20, 2, "short");
    assert_string_equal(out, "short\n");
    free(out);
}

static void test_width_of_a_file(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    setenv("COLUMNS", "60", 1);
    assert_int_equal(mgr_term_width(fileno(f)), 0); /* not a terminal: no limit */
    fclose(f);
}

static void test_utf8_locale(void **state)
{
    (void)state;
    unsetenv("LC_ALL");
    unsetenv("LC_CTYPE");
    setenv("LANG", "en_US.UTF-8", 1);
    assert_true(mgr_term_utf8());
    setenv("LC_CTYPE", "C", 1);
    assert_false(mgr_term_utf8());
    setenv("LC_ALL", "C.utf8", 1);
    assert_true(mgr_term_utf8());
    unsetenv("LC_ALL");
    unsetenv("LC_CTYPE");
    unsetenv("LANG");
    assert_false(mgr_term_utf8());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lat_units),   cmocka_unit_test(test_cols),
        cmocka_unit_test(test_wrap),        cmocka_unit_test(test_width_of_a_file),
        cmocka_unit_test(test_utf8_locale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
