/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_verify.c - dynamo/verify: checksum vectors (crc32c against
 * a bit-by-bit reference, xxh64 against the published empty-input value),
 * the header codec, and the classification of every kind of bad block:
 * corrupt (one changed byte anywhere), misplaced, torn, stale, no header,
 * garbage headers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dynamo/verify.h"

static uint32_t crc_ref(const uint8_t *p, size_t n)
{
    uint32_t c = ~0u;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    }
    return ~c;
}

static void test_checksums(void **state)
{
    (void)state;
    uint8_t buf[1031];

    assert_int_equal(dyn_crc32c(0, "123456789", 9), 0xe3069283u);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    for (size_t n = 0; n < sizeof(buf); n += 37)
        assert_int_equal(dyn_crc32c(0, buf + 1, n), crc_ref(buf + 1, n));
    /* Incremental equals one pass. */
    assert_int_equal(dyn_crc32c(dyn_crc32c(0, buf, 100), buf + 100, 900), dyn_crc32c(0, buf, 1000));
    assert_true(dyn_xxh64("", 0, 0) == 0xef46db3751d8e999ULL);
    /* Every length path (stripes, words, a half word, bytes) reacts to
     * every byte. */
    for (size_t n = 1; n < 80; n++) {
        uint64_t h = dyn_xxh64(buf, n, 0);
        buf[n - 1] ^= 1;
        assert_true(dyn_xxh64(buf, n, 0) != h);
        buf[n - 1] ^= 1;
        assert_true(dyn_xxh64(buf, n, 1) != h);
    }
}

static uint8_t *sealed(uint32_t len, uint64_t off, uint64_t gen, uint8_t algo)
{
    uint8_t *b = malloc(len);
    struct dyn_verify_hdr h = {
        .offset = off, .algo = algo, .worker = 3, .node = 0x1234, .generation = gen};

    assert_non_null(b);
    for (uint32_t i = 0; i < len; i++)
        b[i] = (uint8_t)(rand() & 0xff);
    dyn_verify_seal(b, len, &h);
    return b;
}

static void test_seal_check(void **state)
{
    (void)state;
    const uint8_t algos[] = {DYN_VERIFY_CRC32C, DYN_VERIFY_XXH64};

    for (size_t a = 0; a < 2; a++) {
        uint8_t *b = sealed(4096, 8192, 77, algos[a]);
        struct dyn_verify_hdr f;
        uint32_t used;

        assert_int_equal(dyn_verify_check(b, 4096, 8192, 0, &f, &used), DYN_VERIFY_OK);
        assert_int_equal(used, 4096);
        assert_true(f.magic == DYN_VERIFY_MAGIC);
        assert_int_equal(f.offset, 8192);
        assert_int_equal(f.length, 4096);
        assert_int_equal(f.worker, 3);
        assert_true(f.node == 0x1234);
        assert_int_equal(f.generation, 77);
        assert_int_equal(f.algo, algos[a]);
        /* The generation expected there, or another one: stale. */
        assert_int_equal(dyn_verify_check(b, 4096, 8192, 77, &f, &used), DYN_VERIFY_OK);
        assert_int_equal(dyn_verify_check(b, 4096, 8192, 78, &f, &used), DYN_VERIFY_STALE);
        assert_int_equal(dyn_verify_check(b, 4096, 8192, 76, &f, &used), DYN_VERIFY_STALE);
        /* Read at another offset: the block belongs elsewhere. */
        assert_int_equal(dyn_verify_check(b, 4096, 0, 0, &f, &used), DYN_VERIFY_MISPLACED);
        assert_int_equal(f.offset, 8192);
        /* One byte changed: corrupt (every byte: test_every_byte). */
        for (uint32_t at = 100; at < 4096; at += 997) {
            b[at] ^= 0x40;
            assert_int_equal(dyn_verify_check(b, 4096, 8192, 0, &f, &used), DYN_VERIFY_CORRUPT);
            b[at] ^= 0x40;
        }
        /* The sum field itself. */
        b[50] ^= 1;
        assert_int_equal(dyn_verify_check(b, 4096, 8192, 0, &f, &used), DYN_VERIFY_CORRUPT);
        b[50] ^= 1;
        free(b);
    }
}

/* One byte changed anywhere in a block - the magic, a header field, the
 * sums, a sector tag, the payload - with any value: corrupt, at the block's
 * own offset, for every position of blocks of one and of eight sectors. */
static void test_every_byte(void **state)
{
    (void)state;
    const uint8_t algos[] = {DYN_VERIFY_CRC32C, DYN_VERIFY_XXH64};
    const uint32_t lens[] = {512, 4096};

    for (size_t a = 0; a < 2; a++)
        for (size_t l = 0; l < 2; l++) {
            uint32_t len = lens[l];
            uint8_t *b = sealed(len, 65536, 9, algos[a]);
            struct dyn_verify_hdr f;
            uint32_t used;

            for (uint32_t at = 0; at < len; at++) {
                const uint8_t flips[] = {0x01, 0x80, 0xff, (uint8_t)(rand() % 255 + 1)};
                for (size_t k = 0; k < sizeof(flips); k++) {
                    b[at] ^= flips[k];
                    if (dyn_verify_check(b, len, 65536, 9, &f, &used) != DYN_VERIFY_CORRUPT)
                        fail_msg("len %u algo %u: byte %u ^ 0x%02x not judged corrupt", len,
                                 algos[a], at, flips[k]);
                    assert_true(used >= DYN_VERIFY_SECTOR && used <= len);
                    b[at] ^= flips[k];
                }
            }
            assert_int_equal(dyn_verify_check(b, len, 65536, 9, &f, &used), DYN_VERIFY_OK);
            free(b);
        }
}

/* Sectors 4..7 from another write of the same block (a newer generation):
 * torn; sectors from data without a header: torn too. */
static void test_torn(void **state)
{
    (void)state;
    uint8_t *a = sealed(4096, 0, 10, DYN_VERIFY_CRC32C),
            *b = sealed(4096, 0, 11, DYN_VERIFY_CRC32C);
    struct dyn_verify_hdr f;
    uint32_t used;

    memcpy(a + 2048, b + 2048, 2048);
    assert_int_equal(dyn_verify_check(a, 4096, 0, 0, &f, &used), DYN_VERIFY_TORN);
    assert_int_equal(f.generation, 10);
    /* The header sector of the newer write over the older one's rest. */
    memcpy(b + 512, a + 512, 512);
    assert_int_equal(dyn_verify_check(b, 4096, 0, 0, &f, &used), DYN_VERIFY_TORN);
    memset(a + 3584, 0xee, 512);
    assert_int_equal(dyn_verify_check(a, 4096, 0, 0, &f, &used), DYN_VERIFY_TORN);
    free(a);
    free(b);
}

/* A later, smaller verified write inside an earlier, larger block (a 4 KiB
 * write into a 64 KiB block of an earlier test): the larger block's header
 * still claims bytes the later write replaced, and nothing is wrong - it is
 * not reported. The later block is checked where it lies; the rest of the
 * larger one by its sector tags. A later block reaching past the larger
 * one's end, or several of them, are no fault either. What a later block
 * does not explain still is: an older block inside (a torn write over older
 * data), a damaged or misplaced one inside, a sector of neither. */
static void test_overlay(void **state)
{
    (void)state;
    const uint8_t algos[] = {DYN_VERIFY_CRC32C, DYN_VERIFY_XXH64};

    for (size_t a = 0; a < 2; a++) {
        uint8_t *big = sealed(65536, 1 << 20, 100, algos[a]);
        uint8_t *small = sealed(4096, (1 << 20) + 8192, 200, algos[a]);
        uint8_t *tail = sealed(16384, (1 << 20) + 57344, 300, algos[a]);
        uint8_t *buf = malloc(81920);
        struct dyn_verify_hdr f;
        uint32_t used;

        assert_non_null(buf);
        memcpy(buf, big, 65536);
        memcpy(buf + 65536, tail + 8192, 8192); /* what lies after the big block */
        memcpy(buf + 8192, small, 4096);
        /* Overlaid, not ok: the big block's rest was checked by its tags
         * only; the smaller block is the caller's to judge where it starts. */
        assert_int_equal(dyn_verify_check(buf, 65536, 1 << 20, 100, &f, &used),
                         DYN_VERIFY_OVERLAID);
        assert_int_equal(used, 8192);
        assert_int_equal(f.generation, 100);
        /* A second one, reaching past the big block's end (read whole, and
         * only partly: its sectors in the buffer carry its tag). */
        memcpy(buf + 57344, tail, 16384);
        assert_int_equal(dyn_verify_check(buf, 81920, 1 << 20, 0, &f, &used), DYN_VERIFY_OVERLAID);
        assert_int_equal(used, 8192);
        assert_int_equal(dyn_verify_check(buf, 65536, 1 << 20, 0, &f, &used), DYN_VERIFY_OVERLAID);
        assert_int_equal(used, 8192);
        /* The smaller block itself, where it lies. */
        assert_int_equal(dyn_verify_check(buf + 8192, 4096, (1 << 20) + 8192, 0, &f, &used),
                         DYN_VERIFY_OK);

        /* One byte of the smaller block changed: reported. */
        buf[8192 + 1000] ^= 0x10;
        assert_true(dyn_verify_check(buf, 65536, 1 << 20, 0, &f, &used) != DYN_VERIFY_OK);
        buf[8192 + 1000] ^= 0x10;
        /* The smaller block is older than the big one (a torn write of the
         * big block over older data): torn. */
        {
            uint8_t *newer = sealed(65536, 1 << 20, 250, algos[a]);
            memcpy(buf, newer, 65536);
            memcpy(buf + 8192, small, 4096);
            memcpy(buf + 57344, tail, 8192);
            assert_int_equal(dyn_verify_check(buf, 65536, 1 << 20, 0, &f, &used), DYN_VERIFY_TORN);
            memcpy(buf, big, 65536);
            memcpy(buf + 8192, small, 4096);
            memcpy(buf + 57344, tail, 8192);
            free(newer);
        }
        /* The smaller block names another offset: torn. */
        {
            uint8_t *moved = sealed(4096, (1 << 20) + 12288, 200, algos[a]);
            memcpy(buf + 8192, moved, 4096);
            assert_int_equal(dyn_verify_check(buf, 65536, 1 << 20, 0, &f, &used), DYN_VERIFY_TORN);
            memcpy(buf + 8192, small, 4096);
            free(moved);
        }
        /* A sector neither block's: torn. */
        memset(buf + 20480, 0xee, 512);
        assert_int_equal(dyn_verify_check(buf, 65536, 1 << 20, 0, &f, &used), DYN_VERIFY_TORN);
        memcpy(buf + 20480, big + 20480, 512);
        assert_int_equal(dyn_verify_check(buf, 65536, 1 << 20, 0, &f, &used), DYN_VERIFY_OVERLAID);
        free(big);
        free(small);
        free(tail);
        free(buf);
    }
}

/* What a reader makes of buf (len bytes read at off) as dynamo's
 * worker_verify_buf walks it: each block judged where it starts, with the
 * generation expected there (want: n pairs of offset and generation, 0
 * elsewhere; a missing header where one is expected is corrupt). Returns
 * the first bad verdict (its offset in *at), else overlaid if a block was,
 * else ok. */
static enum dyn_verify_class walk(const uint8_t *buf, uint32_t len, uint64_t off,
                                  const uint64_t (*want)[2], size_t n, uint64_t *at)
{
    enum dyn_verify_class res = DYN_VERIFY_OK;

    for (uint32_t pos = 0, used; pos < len; pos += used) {
        struct dyn_verify_hdr f;
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
            if (want[i][0] == off + pos)
                w = want[i][1];
        enum dyn_verify_class k = dyn_verify_check(buf + pos, len - pos, off + pos, w, &f, &used);
        if (k == DYN_VERIFY_NO_HEADER && w && f.magic != DYN_VERIFY_MAGIC)
            k = DYN_VERIFY_CORRUPT;
        if (k == DYN_VERIFY_OVERLAID)
            res = k;
        else if (k != DYN_VERIFY_OK && k != DYN_VERIFY_NO_HEADER) {
            *at = off + pos;
            return k;
        }
    }
    return res;
}

/* A block overlaid by a later, smaller write is not passed as ok whatever
 * else happened to it: a changed payload byte its checksum no longer
 * covers leaves it overlaid (checked by tags only), a tag with one byte
 * changed is corrupt, as is a header byte, and a later write lost over an intact older one in
 * the same place is stale where it starts. */
static void test_overlay_damage(void **state)
{
    (void)state;
    const uint8_t algos[] = {DYN_VERIFY_CRC32C, DYN_VERIFY_XXH64};
    const uint64_t base = 1 << 20;

    for (size_t a = 0; a < 2; a++) {
        uint8_t *big = sealed(65536, base, 5, algos[a]);
        uint8_t *g7 = sealed(4096, base + 32768, 7, algos[a]);
        uint8_t *buf = malloc(65536);
        struct dyn_verify_hdr f;
        uint32_t used;
        uint64_t at = 0;

        assert_non_null(buf);
        memcpy(buf, big, 65536);
        memcpy(buf + 32768, g7, 4096);
        /* A payload byte of sector 0, and one past the tag of another
         * sector of the rest: never ok. */
        const uint32_t hits[] = {300, 511, 2560 + 100, 40960 + 8};
        for (size_t i = 0; i < sizeof(hits) / sizeof(hits[0]); i++) {
            buf[hits[i]] ^= 0x01;
            assert_true(dyn_verify_check(buf, 65536, base, 0, &f, &used) != DYN_VERIFY_OK);
            buf[hits[i]] ^= 0x01;
        }
        /* One byte of a tag of the rest, before and after the later block:
         * corrupt, no tolerance. */
        const uint32_t tags[] = {20480 + 3, 36864, 65024 + 7, 41 /* the header */};
        for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
            buf[tags[i]] ^= 0x40;
            assert_int_equal(dyn_verify_check(buf, 65536, base, 0, &f, &used), DYN_VERIFY_CORRUPT);
            buf[tags[i]] ^= 0x40;
        }
        /* Written: the big block (5), 4 KiB at +32K (7), 4 KiB at +32K
         * again (9), which was lost: the 7 found there is stale. */
        const uint64_t lost[][2] = {{base, 5}, {base + 32768, 9}};
        assert_int_equal(walk(buf, 65536, base, lost, 2, &at), DYN_VERIFY_STALE);
        assert_int_equal(at, base + 32768);
        /* With 7 the last write there, nothing is wrong. */
        const uint64_t kept[][2] = {{base, 5}, {base + 32768, 7}};
        assert_int_equal(walk(buf, 65536, base, kept, 2, &at), DYN_VERIFY_OVERLAID);
        /* A write at +40K (8) lost whole: no header where one should be. */
        const uint64_t gone[][2] = {{base, 5}, {base + 32768, 7}, {base + 40960, 8}};
        assert_int_equal(walk(buf, 65536, base, gone, 3, &at), DYN_VERIFY_CORRUPT);
        assert_int_equal(at, base + 40960);
        free(big);
        free(g7);
        free(buf);
    }
}

/* Buffers that are not verify blocks, or whose header is garbage: judged,
 * never trusted, never read past len. */
static void test_garbage(void **state)
{
    (void)state;
    uint8_t *b = sealed(4096, 0, 1, DYN_VERIFY_XXH64);
    struct dyn_verify_hdr f;
    uint32_t used;
    uint8_t *small;

    /* No magic (two of its bytes differ): not ours, step one sector. */
    b[0] ^= 1;
    b[5] ^= 0x80;
    assert_int_equal(dyn_verify_check(b, 4096, 0, 0, &f, &used), DYN_VERIFY_NO_HEADER);
    assert_int_equal(used, 512);
    assert_true(f.magic == 0);
    b[5] ^= 0x80;
    /* One byte of it: a verify block whose magic was hit, corrupt. */
    assert_int_equal(dyn_verify_check(b, 4096, 0, 0, &f, &used), DYN_VERIFY_CORRUPT);
    assert_int_equal(used, 4096);
    assert_int_equal(f.offset, 0);
    assert_int_equal(f.generation, 1);
    /* ... and, with another header field changed too, still corrupt. */
    b[16] ^= 1;
    assert_int_equal(dyn_verify_check(b, 4096, 0, 0, &f, &used), DYN_VERIFY_CORRUPT);
    assert_int_equal(used, 512);
    b[16] ^= 1;
    /* ... read only in part: not judged yet, as for an intact magic. */
    assert_int_equal(dyn_verify_check(b, 2048, 0, 0, &f, &used), DYN_VERIFY_NO_HEADER);
    assert_true(f.magic == DYN_VERIFY_MAGIC);
    assert_int_equal(used, 2048);
    b[0] ^= 1;
    /* Magic, but a header field changed (the header's own crc): corrupt. */
    b[16] ^= 1; /* length */
    assert_int_equal(dyn_verify_check(b, 4096, 0, 0, &f, &used), DYN_VERIFY_CORRUPT);
    assert_int_equal(used, 512);
    b[16] ^= 1;
    /* A whole block longer than what was read: not checked. */
    assert_int_equal(dyn_verify_check(b, 2048, 0, 0, &f, &used), DYN_VERIFY_NO_HEADER);
    assert_int_equal(used, 2048);
    /* Random headers behind a magic, into a buffer exactly len long. */
    for (int i = 0; i < 20000; i++) {
        uint32_t len = 64 + (uint32_t)(rand() % 1024);
        enum dyn_verify_class c;
        small = malloc(len);
        assert_non_null(small);
        for (uint32_t k = 0; k < len; k++)
            small[k] = (uint8_t)rand();
        memcpy(small, &(uint64_t){DYN_VERIFY_MAGIC}, 8);
        c = dyn_verify_check(small, len, 0, 0, &f, &used);
        assert_true(c == DYN_VERIFY_CORRUPT || c == DYN_VERIFY_NO_HEADER);
        assert_true(used >= 1 && used <= len);
        free(small);
    }
    /* Shorter than a header. */
    assert_int_equal(dyn_verify_check(b, 10, 0, 0, &f, &used), DYN_VERIFY_NO_HEADER);
    assert_int_equal(used, 10);
    free(b);
    assert_string_equal(dyn_verify_class_name(DYN_VERIFY_MISPLACED), "misplaced");
    assert_string_equal(dyn_verify_algo_name(DYN_VERIFY_XXH64), "xxh64");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checksums),      cmocka_unit_test(test_seal_check),
        cmocka_unit_test(test_every_byte),     cmocka_unit_test(test_torn),
        cmocka_unit_test(test_garbage),        cmocka_unit_test(test_overlay),
        cmocka_unit_test(test_overlay_damage),
    };
    srand(1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
