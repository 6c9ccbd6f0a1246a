/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_buf.c - common/buf.c: appends of every kind, growth past
 * the first allocation, the limit, size overflow, an allocation failure
 * (realloc is wrapped, see tests/CMakeLists.txt) kept as a sticky error,
 * reset and take. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

/* realloc as seen by common/buf.c: fails while fail_realloc is set. */
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
static bool fail_realloc;
static unsigned realloc_calls;

void *__wrap_realloc(void *p, size_t n)
{
    realloc_calls++;
    if (fail_realloc)
        return NULL;
    return __real_realloc(p, n);
}

static void test_appends_build_text(void **state)
{
    struct iof_buf b = IOF_BUF_INIT;

    (void)state;
    assert_string_equal(iof_buf_str(&b), "");
    assert_int_equal(iof_buf_addstr(&b, "ab"), 0);
    assert_int_equal(iof_buf_addc(&b, ','), 0);
    assert_int_equal(iof_buf_add(&b, "xyz", 2), 0);
    assert_int_equal(iof_buf_printf(&b, "|%d|%.3f|%s", -7, 1.5, "end"), 0);
    assert_int_equal(iof_buf_addstr(&b, NULL), 0);
    assert_int_equal(iof_buf_add(&b, NULL, 0), 0);
    assert_string_equal(iof_buf_str(&b), "ab,xy|-7|1.500|end");
    assert_int_equal(b.len, strlen("ab,xy|-7|1.500|end"));
    assert_int_equal(b.err, 0);
    iof_buf_free(&b);
    assert_null(b.p);
    assert_int_equal(b.len, 0);
    iof_buf_free(NULL);
}

/* Many small appends and one printf longer than any capacity so far. */
static void test_grows_past_first_allocation(void **state)
{
    struct iof_buf b = IOF_BUF_INIT;
    char big[5001];

    (void)state;
    for (unsigned i = 0; i < 10000; i++)
        assert_int_equal(iof_buf_addc(&b, (char)('a' + i % 26)), 0);
    assert_int_equal(b.len, 10000);
    for (unsigned i = 0; i < 10000; i++)
        assert_int_equal(b.p[i], 'a' + i % 26);
    assert_int_equal(b.p[10000], '\0');
    assert_true(b.cap > b.len);

    iof_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(iof_buf_str(&b), "");
    memset(big, 'q', 5000);
    big[5000] = '\0';
    assert_int_equal(iof_buf_printf(&b, "<%s>", big), 0);
    assert_int_equal(b.len, 5002);
    assert_int_equal(b.p[0], '<');
    assert_int_equal(b.p[5001], '>');
    assert_int_equal(b.p[5002], '\0');
    /* a printf into a buffer with no memory yet */
    iof_buf_free(&b);
    assert_int_equal(iof_buf_printf(&b, "%s", ""), 0);
    assert_string_equal(iof_buf_str(&b), "");
    assert_int_equal(iof_buf_printf(&b, "%u", 42u), 0);
    assert_string_equal(iof_buf_str(&b), "42");
    iof_buf_free(&b);
}

/* Past the limit nothing more is appended, the error sticks until reset. */
static void test_limit_is_sticky(void **state)
{
    struct iof_buf b;

    (void)state;
    iof_buf_init(&b, 10);
    assert_int_equal(iof_buf_addstr(&b, "12345678"), 0);
    assert_int_equal(iof_buf_addstr(&b, "abc"), -E2BIG);
    assert_int_equal(iof_buf_addc(&b, 'x'), -E2BIG); /* would fit, but sticky */
    assert_int_equal(iof_buf_printf(&b, "%d", 1), -E2BIG);
    assert_string_equal(iof_buf_str(&b), "12345678");
    assert_true(b.cap <= 11);
    assert_null(iof_buf_take(&b, NULL)); /* an incomplete text is not handed out */
    assert_null(b.p);

    iof_buf_init(&b, 10);
    assert_int_equal(iof_buf_addstr(&b, "1234567"), 0);
    /* a printf that fits the allocation but not the limit */
    assert_int_equal(iof_buf_printf(&b, "%s", "abcd"), -E2BIG);
    assert_string_equal(iof_buf_str(&b), "1234567");
    iof_buf_reset(&b);
    assert_int_equal(b.err, 0);
    assert_int_equal(iof_buf_addstr(&b, "0123456789"), 0);
    assert_string_equal(iof_buf_str(&b), "0123456789");
    iof_buf_free(&b);
}

/* A size that would wrap size_t fails before any allocation. */
static void test_size_overflow_is_refused(void **state)
{
    struct iof_buf b = IOF_BUF_INIT;
    void *arr = NULL;
    size_t cap = 0;

    (void)state;
    assert_int_equal(iof_buf_addstr(&b, "abc"), 0);
    realloc_calls = 0;
    assert_int_equal(iof_buf_reserve(&b, SIZE_MAX), -E2BIG);
    assert_int_equal(iof_buf_reserve(&b, 1), -E2BIG);
    iof_buf_reset(&b);
    assert_int_equal(iof_buf_addstr(&b, "abc"), 0);
    /* len + more + the NUL would be SIZE_MAX + 1 */
    assert_int_equal(iof_buf_reserve(&b, SIZE_MAX - 3), -E2BIG);
    assert_int_equal(realloc_calls, 0);
    assert_string_equal(iof_buf_str(&b), "abc");
    iof_buf_free(&b);

    assert_int_equal(iof_array_grow(&arr, &cap, SIZE_MAX / 8 + 1, 8), -E2BIG);
    assert_int_equal(iof_array_grow(&arr, &cap, 1, 0), -E2BIG);
    assert_int_equal(realloc_calls, 0);
    assert_null(arr);
    assert_int_equal(cap, 0);
}

/* realloc failing: the append reports -ENOMEM, the text so far is intact,
 * the error sticks, take hands out nothing. */
static void test_allocation_failure_is_reported(void **state)
{
    struct iof_buf b = IOF_BUF_INIT;
    size_t len = 99;
    int *arr = NULL;
    size_t cap = 0;

    (void)state;
    assert_int_equal(iof_buf_addstr(&b, "kept"), 0);
    fail_realloc = true;
    assert_int_equal(iof_buf_printf(&b, "%0200d", 1), -ENOMEM);
    assert_string_equal(iof_buf_str(&b), "kept");
    fail_realloc = false;
    assert_int_equal(iof_buf_addc(&b, 'x'), -ENOMEM);
    assert_null(iof_buf_take(&b, &len));
    assert_int_equal(len, 0);
    assert_null(b.p);

    fail_realloc = true;
    assert_int_equal(iof_buf_addc(&b, 'x'), -ENOMEM); /* the first allocation */
    assert_null(b.p);
    fail_realloc = false;
    iof_buf_reset(&b);
    assert_int_equal(iof_buf_addc(&b, 'y'), 0);
    assert_string_equal(iof_buf_str(&b), "y");
    iof_buf_free(&b);

    assert_int_equal(iof_array_grow((void **)&arr, &cap, 3, sizeof(*arr)), 0);
    assert_true(cap >= 3);
    arr[2] = 7;
    fail_realloc = true;
    assert_int_equal(iof_array_grow((void **)&arr, &cap, cap + 1, sizeof(*arr)), -ENOMEM);
    fail_realloc = false;
    assert_non_null(arr);
    assert_int_equal(arr[2], 7);
    free(arr);
}

static void test_take_hands_over(void **state)
{
    struct iof_buf b = IOF_BUF_INIT;
    size_t len = 99;
    char *s;

    (void)state;
    s = iof_buf_take(&b, &len); /* empty: "" */
    assert_non_null(s);
    assert_string_equal(s, "");
    assert_int_equal(len, 0);
    free(s);
    assert_int_equal(iof_buf_printf(&b, "row %u", 3u), 0);
    s = iof_buf_take(&b, &len);
    assert_string_equal(s, "row 3");
    assert_int_equal(len, 5);
    assert_null(b.p);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    free(s);
    /* usable again */
    assert_int_equal(iof_buf_addstr(&b, "next"), 0);
    assert_string_equal(iof_buf_str(&b), "next");
    iof_buf_free(&b);
}

/* reserve + commit: bytes written in place by the caller. */
static void test_reserve_then_commit(void **state)
{
    struct iof_buf b = IOF_BUF_INIT;

    (void)state;
    assert_int_equal(iof_buf_addstr(&b, "ab"), 0);
    assert_int_equal(iof_buf_reserve(&b, 100), 0);
    assert_true(b.cap - b.len >= 101);
    memcpy(b.p + b.len, "cdef", 4);
    iof_buf_commit(&b, 4);
    assert_string_equal(iof_buf_str(&b), "abcdef");
    assert_int_equal(b.len, 6);
    iof_buf_free(&b);
}

/* A text read out in pieces: each piece at most max, in order, then 0. */
static void test_read_in_pieces(void **state)
{
    struct iof_buf b = IOF_BUF_INIT;
    char out[8];
    size_t off = 0, n;

    (void)state;
    assert_int_equal(iof_buf_read(&b, &off, out, sizeof(out)), 0);
    iof_buf_addstr(&b, "data: 12345\n\n");
    n = iof_buf_read(&b, &off, out, 5);
    assert_int_equal(n, 5);
    assert_memory_equal(out, "data:", 5);
    n = iof_buf_read(&b, &off, out, sizeof(out));
    assert_int_equal(n, 8);
    assert_memory_equal(out, " 12345\n\n", 8);
    assert_int_equal(off, b.len);
    assert_int_equal(iof_buf_read(&b, &off, out, sizeof(out)), 0);
    assert_int_equal(off, b.len);
    iof_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appends_build_text),
        cmocka_unit_test(test_grows_past_first_allocation),
        cmocka_unit_test(test_limit_is_sticky),
        cmocka_unit_test(test_size_overflow_is_refused),
        cmocka_unit_test(test_allocation_failure_is_reported),
        cmocka_unit_test(test_take_hands_over),
        cmocka_unit_test(test_reserve_then_commit),
        cmocka_unit_test(test_read_in_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
