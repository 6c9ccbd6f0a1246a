/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_devguard_mark.c - iofleet's marker record and the state
 * of a device's ends (dynamo/devguard_mark.c), the one copy both systems'
 * device guards use, so it runs in the Linux build and under Wine: the
 * record's bytes as dynamo/devguard.h lays them out (checked against a hash
 * computed here), accepted for its size only, refused when any byte of it
 * changes; ends zero, marked (both copies), or holding data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "dynamo/devguard.h"

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void test_record_layout(void **state)
{
    uint8_t m[DYN_MARK_SIZE];
    uint64_t h = 0xcbf29ce484222325ull;

    (void)state;
    dyn_mark_record(m, 1ull << 40, 1700000000123456789ull, 0x0123456789abcdefull, "vm1");
    assert_memory_equal(m, "IOFLEET-TESTDATA", 16);
    assert_int_equal(m[16], 1);
    for (int i = 17; i < 24; i++)
        assert_int_equal(m[i], 0);
    assert_int_equal(le64(m + 24), 1ull << 40);
    assert_int_equal(le64(m + 32), 1700000000123456789ull);
    assert_int_equal(le64(m + 40), 0x0123456789abcdefull);
    assert_string_equal((const char *)m + 48, "vm1");
    for (int i = 51; i < 496; i++)
        assert_int_equal(m[i], 0);
    for (int i = 0; i < 496; i++) {
        h ^= m[i];
        h *= 0x100000001b3ull;
    }
    assert_int_equal(le64(m + 496), h);
    for (int i = 504; i < DYN_MARK_SIZE; i++)
        assert_int_equal(m[i], 0);
    assert_true(dyn_mark_valid(m, 1ull << 40));
    assert_false(dyn_mark_valid(m, (1ull << 40) - 512));
    /* Any byte changed: refused (the hash, the reserved bytes, the hash itself). */
    for (int i = 0; i < DYN_MARK_SIZE; i += 7) {
        m[i] ^= 0x40;
        assert_false(dyn_mark_valid(m, 1ull << 40));
        m[i] ^= 0x40;
    }
    assert_true(dyn_mark_valid(m, 1ull << 40));

    /* A host name longer than its 64 bytes is cut there. */
    dyn_mark_record(m, 4096, 1, 2,
                    "a-very-long-host-name-that-goes-on-and-on-past-the-sixty-four-bytes-of-room");
    assert_memory_equal(m + 48, "a-very-long-host-name-that-goes-on-and-on-past-the-sixty-four-by",
                        64);
    assert_true(dyn_mark_valid(m, 4096));
}

static void test_ends_state(void **state)
{
    static uint8_t head[4096], tail[4096];
    struct dyn_dev_ends e, e2;

    (void)state;
    memset(head, 0, sizeof(head));
    memset(tail, 0, sizeof(tail));
    dyn_guard_ends_state(head, tail, sizeof(head), 1 << 20, &e);
    assert_true(e.zero);
    assert_false(e.marked);

    dyn_mark_record(head, 1 << 20, 5, 6, "h");
    memcpy(tail + sizeof(tail) - DYN_MARK_SIZE, head, DYN_MARK_SIZE);
    dyn_guard_ends_state(head, tail, sizeof(head), 1 << 20, &e2);
    assert_false(e2.zero);
    assert_true(e2.marked);
    assert_true(e2.hash != e.hash);
    /* The copies must agree, and be for this size. */
    tail[sizeof(tail) - 1] = 1;
    dyn_guard_ends_state(head, tail, sizeof(head), 1 << 20, &e);
    assert_false(e.marked);
    tail[sizeof(tail) - 1] = 0;
    dyn_guard_ends_state(head, tail, sizeof(head), 2 << 20, &e);
    assert_false(e.marked);
    assert_int_equal(e.hash, e2.hash);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_layout),
        cmocka_unit_test(test_ends_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
