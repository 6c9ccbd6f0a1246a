/* SPDX-License-Identifier: Apache-2.0 */
/* common/varint.h - the fast path of reading an unsigned LEB128 varint, as
 * the histogram's run form (common/hist.c) and the binary stats body
 * (proto/statsbin.c) encode their numbers: 7 bits a byte, low first, in the
 * shortest form (a last byte of 0 after others is not minimal, so each value
 * has one encoding). Inline: the manager reads some 500 a report. */
#ifndef IOF_COMMON_VARINT_H
#define IOF_COMMON_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* The varint at p when it is valid and at most 9 bytes long (below 2^63),
 * with at least 9 bytes at p (no end to check): *v and its length. 0 for
 * anything else, valid or not (10 bytes, not minimal, not ended within 9):
 * the caller's full reader decides, and names the error. */
static inline unsigned iof_varint9_get(const uint8_t *p, uint64_t *v)
{
    uint64_t x = 0;

    for (unsigned n = 0; n < 9; n++) {
        uint8_t b = p[n];
        x |= (uint64_t)(b & 0x7f) << (7 * n);
        if (b < 0x80) {
            if (!b && n)
                return 0;
            *v = x;
            return n + 1;
        }
    }
    return 0;
}

#endif
