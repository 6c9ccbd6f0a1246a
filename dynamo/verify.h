/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/verify.h - end-to-end data verification: the header every written
 * block carries when a worker group sets "verify", its checksums, and how a
 * block read back is judged.
 *
 * A verify block is one write (its whole length). It starts with a 64-byte
 * header: magic, the block's own offset and length, the writer (node hash
 * and worker), a generation (unique per write: run, worker and a counter),
 * and a checksum of the whole block with the checksum field taken as zero.
 * Every further 512-byte sector starts with an 8-byte tag derived from the
 * generation, so a block that is part one write and part another ("torn")
 * is told apart from one whose bytes were changed ("corrupt").
 *
 * Judging a block read at offset `off`:
 *   no magic (2+ bytes differ)    -> not a verify block (not checked)
 *   header fields inconsistent    -> corrupt (a garbage header: never trusted)
 *   magic with one byte changed   -> corrupt (a block whose first bytes were hit)
 *   header offset != off          -> misplaced (the block belongs elsewhere)
 *   checksum wrong, sector tags of
 *     another write (2+ bytes of
 *     a tag differ)               -> torn
 *   checksum wrong, a sector tag
 *     of this write with one byte
 *     changed                     -> corrupt
 *   checksum wrong, the other
 *     sectors each in a sound
 *     block of a later write that
 *     starts inside (a smaller
 *     write into this block) or
 *     carrying this write's tag
 *     exactly                     -> overlaid: *consumed stops at the first
 *                                    later block, which the caller judges at
 *                                    its own offset (stale or not); the rest
 *                                    of this block was checked by its tags
 *                                    only (its payload, sector 0's past the
 *                                    header included, is not checked)
 *   checksum wrong otherwise      -> corrupt
 * So one changed byte anywhere in a block read whole is always "corrupt",
 * but in an overlaid block's payload (outside its tags) it is not seen.
 *   checksum right, generation
 *     not the one expected        -> stale (when the caller knows what to expect)
 * Everything here is pure: bytes in, a verdict out; never trusts a length
 * or offset from the block itself beyond the buffer it was given.
 */
#ifndef IOF_DYNAMO_VERIFY_H
#define IOF_DYNAMO_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DYN_VERIFY_MAGIC 0x6b6c6279666f69ULL /* "iofybkl" + NUL, little-endian */
#define DYN_VERIFY_HDR 64u
#define DYN_VERIFY_SECTOR 512u
#define DYN_VERIFY_MIN_BLOCK 512u

enum dyn_verify_algo {
    DYN_VERIFY_NONE = 0,
    DYN_VERIFY_CRC32C = 1,
    DYN_VERIFY_XXH64 = 2,
};

enum dyn_verify_class {
    DYN_VERIFY_OK = 0,
    DYN_VERIFY_NO_HEADER, /* not a verify block: skipped, not an error */
    DYN_VERIFY_TORN,
    DYN_VERIFY_STALE,
    DYN_VERIFY_MISPLACED,
    DYN_VERIFY_CORRUPT,
    DYN_VERIFY_OVERLAID, /* partly replaced by later writes: not an error,
                            the rest checked by its sector tags only */
};

/* The header as fields (its layout on disk is dyn_verify_hdr_put's). */
struct dyn_verify_hdr {
    uint64_t magic;
    uint64_t offset;
    uint32_t length;
    uint8_t algo;
    uint32_t worker;
    uint64_t node;       /* hash of the writer's node name */
    uint64_t generation; /* unique per write */
    uint64_t sum;        /* checksum of the block, this field as zero */
};

/* "ok", "no-header", "torn", "stale", "misplaced", "corrupt", "overlaid". */
const char *dyn_verify_class_name(enum dyn_verify_class c);
/* "crc32c", "xxh64" ("none" for 0). */
const char *dyn_verify_algo_name(enum dyn_verify_algo a);

/* Checksums of len bytes (any alignment). */
uint32_t dyn_crc32c(uint32_t crc, const void *buf, size_t len);
uint64_t dyn_xxh64(const void *buf, size_t len, uint64_t seed);

/* The tag sectors after the first carry for a generation. */
uint64_t dyn_verify_tag(uint64_t generation);

/* Writes the header and sector tags into block (len bytes, a multiple of
 * 512, at least 512) and then its checksum. h->sum is ignored. */
void dyn_verify_seal(uint8_t *block, uint32_t len, const struct dyn_verify_hdr *h);

/* Reads the header fields of block (at least DYN_VERIFY_HDR bytes). */
void dyn_verify_hdr_get(const uint8_t *block, struct dyn_verify_hdr *h);

/* Judges the verify block that starts at `block`, read from offset off, with
 * len bytes of the read left from there (see above). `found` receives the
 * header as read (zeroed without magic); *consumed how far the next block
 * starts: the header's length for a whole block, the first later block
 * inside it for an overlaid one, else one sector (no header, a garbage
 * header) or all of len (a block longer than what is
 * left: not checked, NO_HEADER). expected_gen: the generation that should
 * be there, 0 when unknown (the caller passes one only for blocks it alone
 * writes). Never writes to block. */
enum dyn_verify_class dyn_verify_check(const uint8_t *block, uint32_t len, uint64_t off,
                                       uint64_t expected_gen, struct dyn_verify_hdr *found,
                                       uint32_t *consumed);

#endif
