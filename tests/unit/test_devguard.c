/* tests/unit/test_devguard.c - dynamo/devguard on image files: the state of
 * a device's ends (zero, marked, hash), the marker's round trip and what
 * breaks it, and the refusal of data at either end without the marker. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "dynamo/devguard.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIZE (8u << 20)

static int image(void)
{
    char tmpl[] = "/tmp/test_devguard.XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    unlink(tmpl);
    assert_int_equal(ftruncate(fd, SIZE), 0);
    return fd;
}

static void poke(int fd, uint64_t off)
{
    uint8_t b = 0x5a;
    assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
}

static void test_marker(void **state)
{
    struct dyn_dev_ends e;
    struct iof_diag d = {{0}};
    uint8_t head[16];
    int fd = image();
    uint64_t blank_hash;

    (void)state;
    assert_int_equal(dyn_devguard_ends(fd, SIZE, &e, &d), 0);
    assert_true(e.zero);
    assert_false(e.marked);
    blank_hash = e.hash;
    assert_int_equal(dyn_devguard_check(fd, "img", SIZE, false, &e, &d), 0);

    /* data in the middle only: the ends are still zero */
    poke(fd, SIZE / 2);
    assert_int_equal(dyn_devguard_check(fd, "img", SIZE, false, &e, &d), 0);

    /* data in the last MiB: refused, unless destructive */
    poke(fd, SIZE - 4096);
    assert_int_equal(dyn_devguard_check(fd, "img", SIZE, false, &e, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "no iofleet marker"));
    assert_int_equal(dyn_devguard_check(fd, "img", SIZE, true, &e, &d), 0);
    assert_true(e.hash != blank_hash);

    /* marked: accepted, both copies identical */
    assert_int_equal(dyn_devguard_mark(fd, SIZE), 0);
    assert_int_equal(pread(fd, head, sizeof(head), 0), (ssize_t)sizeof(head));
    assert_memory_equal(head, DYN_MARK_MAGIC, 16);
    assert_int_equal(dyn_devguard_check(fd, "img", SIZE, false, &e, &d), 0);
    assert_true(e.marked);

    /* the same record on a device of another size is not ours */
    assert_int_equal(dyn_devguard_ends(fd, SIZE - 4096, &e, &d), 0);
    assert_false(e.marked);

    /* one byte changed in either copy: no longer marked */
    poke(fd, 100);
    assert_int_equal(dyn_devguard_ends(fd, SIZE, &e, &d), 0);
    assert_false(e.marked);
    assert_int_equal(dyn_devguard_mark(fd, SIZE), 0);
    poke(fd, SIZE - 512 + 40);
    assert_int_equal(dyn_devguard_check(fd, "img", SIZE, false, &e, &d), IOF_EDENIED);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
