/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_devguard.c - dynamo/devguard on image files: the state of
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

/* Changes the byte at `off` whatever it held (the marker's id and time are
 * random, so writing a fixed byte could leave it as it was). */
static void flip(int fd, uint64_t off)
{
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
    b = (uint8_t)~b;
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

    /* data in the middle, outside every probed area: the ends are still
     * zero and no partition could start there */
    poke(fd, SIZE / 2 + DYN_GUARD_AREA_BYTES);
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
    flip(fd, 100);
    assert_int_equal(dyn_devguard_ends(fd, SIZE, &e, &d), 0);
    assert_false(e.marked);
    assert_int_equal(dyn_devguard_mark(fd, SIZE), 0);
    flip(fd, SIZE - 512 + 40);
    assert_int_equal(dyn_devguard_check(fd, "img", SIZE, false, &e, &d), IOF_EDENIED);
    close(fd);
}

#define BIG (96ull << 20)

/* A sparse image of BIG bytes. */
static int big_image(void)
{
    int fd = image();

    assert_int_equal(ftruncate(fd, (off_t)BIG), 0);
    return fd;
}

/* A swap signature (mkswap's, 4 KiB pages) for a swap area at `off`. */
static void swap_at(int fd, uint64_t off)
{
    static const char magic[] = "SWAPSPACE2";
    uint8_t hdr[1024] = {0};
    uint32_t version = 1, last_page = 2047;

    memcpy(hdr, &version, 4);
    memcpy(hdr + 4, &last_page, 4);
    assert_int_equal(pwrite(fd, hdr + 0, sizeof(hdr), (off_t)(off + 1024)), (ssize_t)sizeof(hdr));
    assert_int_equal(pwrite(fd, magic, 10, (off_t)(off + 4096 - 10)), 10);
}

/* Data where a partition may start (every MiB below 1 GiB), with both
 * ends zero: refused as data, naming the offset; the same byte between
 * those places is not looked at. */
static void test_data_at_partition_start(void **state)
{
    struct dyn_dev_ends e;
    struct iof_diag d = {{0}};
    int fd = big_image();

    (void)state;
    poke(fd, (33ull << 20) + 100);
    assert_int_equal(dyn_devguard_check(fd, "img", BIG, false, &e, &d), IOF_EDENIED);
    assert_true(e.zero);
    assert_string_equal(d.msg, "target 'img': refusing to write: it holds data at byte 34603008 "
                               "(where a partition may start) and no iofleet marker; start the "
                               "agent with --allow-destructive to overwrite it");
    assert_int_equal(dyn_devguard_check(fd, "img", BIG, true, &e, &d), 0);
    close(fd);

    fd = big_image();
    poke(fd, (33ull << 20) + DYN_GUARD_AREA_BYTES + 100);
    assert_int_equal(dyn_devguard_check(fd, "img", BIG, false, &e, &d), 0);
    close(fd);
}

/* A signature libblkid knows at 32 MiB (a swap area) with both ends zero:
 * refused and named, with the ends zero and with both ends marked. */
static void test_signature_at_32m(void **state)
{
    struct dyn_dev_ends e;
    struct iof_diag d = {{0}};
    int fd = big_image();

    (void)state;
    swap_at(fd, 32ull << 20);
    assert_int_equal(dyn_devguard_check(fd, "img", BIG, false, &e, &d), IOF_EDENIED);
    assert_true(e.zero);
    assert_non_null(strstr(d.msg, "it holds a signature (swap) at byte 33554432"));
    assert_int_equal(dyn_devguard_mark(fd, BIG), 0);
    assert_int_equal(dyn_devguard_check(fd, "img", BIG, false, &e, &d), IOF_EDENIED);
    assert_true(e.marked);
    assert_non_null(strstr(d.msg, "it holds a signature (swap) at byte 33554432"));
    close(fd);

    /* past 1 GiB only powers of two are probed: 2 GiB is one */
    fd = image();
    assert_int_equal(ftruncate(fd, (off_t)(3ull << 30)), 0);
    swap_at(fd, 2ull << 30);
    assert_int_equal(dyn_devguard_check(fd, "img", 3ull << 30, false, &e, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "it holds a signature (swap) at byte 2147483648"));
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marker),
        cmocka_unit_test(test_data_at_partition_start),
        cmocka_unit_test(test_signature_at_32m),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
