/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/verify.c - verify block headers (verify.h): layout, sealing, the
 * crc32c (SSE4.2 when the CPU has it, a table otherwise) and xxh64 checksums,
 * and the judgement of a block read back. */
#include "dynamo/verify.h"

#include <string.h>

/* Header layout (little-endian):
 *   0 magic u64 | 8 offset u64 | 16 length u32 | 20 algo u8, 3 zero bytes |
 *  24 worker u32 | 28 zero u32 | 32 node u64 | 40 generation u64 |
 *  48 sum u64 | 56 header crc32c of bytes [0, 48) u32 | 60 zero u32
 * The sum covers bytes [56, length) seeded with a hash of [0, 48): the
 * whole block but the sum itself, in one pass and without a copy. */
#define HDR_SUM 48u
#define HDR_HCRC 56u
#define HDR_FIELDS 48u
#define MAX_BLOCK (64u << 20)

static uint64_t ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void st64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static void st32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

const char *dyn_verify_class_name(enum dyn_verify_class c)
{
    static const char *const names[] = {"ok",        "no-header", "torn",    "stale",
                                        "misplaced", "corrupt",   "overlaid"};
    return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

const char *dyn_verify_algo_name(enum dyn_verify_algo a)
{
    return a == DYN_VERIFY_CRC32C ? "crc32c" : a == DYN_VERIFY_XXH64 ? "xxh64" : "none";
}

/* ---- crc32c (Castagnoli, reflected 0x82f63b78) ---- */

static uint32_t crc_table[8][256];
static int crc_hw = -1; /* -1 unknown, 0 table, 1 SSE4.2 */

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
#if defined(__x86_64__)
    __builtin_cpu_init();
    crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
    crc_hw = 0;
#endif
}

/* Slicing-by-8: eight table look-ups per 8 bytes. */
static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint64_t v = ld64(p) ^ c;
        c = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^
            crc_table[5][(v >> 16) & 0xff] ^ crc_table[4][(v >> 24) & 0xff] ^
            crc_table[3][(v >> 32) & 0xff] ^ crc_table[2][(v >> 40) & 0xff] ^
            crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
    return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t c, const uint8_t *p, size_t n)
{
    uint64_t c64 = c;
    while (n >= 8) {
        c64 = __builtin_ia32_crc32di(c64, ld64(p));
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
    while (n--)
        c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}
#endif

uint32_t dyn_crc32c(uint32_t crc, const void *buf, size_t len)
{
    uint32_t c = ~crc;

    if (crc_hw < 0)
        crc_init();
#if defined(__x86_64__)
    if (crc_hw)
        return ~crc_sse42(c, buf, len);
#endif
    return ~crc_sw(c, buf, len);
}

/* ---- xxh64 (the public XXH64 algorithm) ---- */

#define P1 11400714785074694791ULL
#define P2 14029467366897019727ULL
#define P3 1609587929392839161ULL
#define P4 9650029242287828579ULL
#define P5 2870177450012600261ULL

static uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t xxh_round(uint64_t acc, uint64_t in)
{
    acc += in * P2;
    acc = rotl64(acc, 31);
    return acc * P1;
}

static uint64_t xxh_merge(uint64_t acc, uint64_t v)
{
    acc ^= xxh_round(0, v);
    return acc * P1 + P4;
}

uint64_t dyn_xxh64(const void *buf, size_t len, uint64_t seed)
{
    const uint8_t *p = buf, *end = p + len;
    uint64_t h;

    if (len >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        do {
            v1 = xxh_round(v1, ld64(p));
            v2 = xxh_round(v2, ld64(p + 8));
            v3 = xxh_round(v3, ld64(p + 16));
            v4 = xxh_round(v4, ld64(p + 24));
            p += 32;
        } while (end - p >= 32);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xxh_merge(h, v1);
        h = xxh_merge(h, v2);
        h = xxh_merge(h, v3);
        h = xxh_merge(h, v4);
    } else {
        h = seed + P5;
    }
    h += len;
    while (end - p >= 8) {
        h ^= xxh_round(0, ld64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8;
    }
    if (end - p >= 4) {
        h ^= (uint64_t)ld32(p) * P1;
        h = rotl64(h, 23) * P2 + P3;
        p += 4;
    }
    while (p < end) {
        h ^= *p++ * P5;
        h = rotl64(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* ---- blocks ---- */

uint64_t dyn_verify_tag(uint64_t generation)
{
    uint64_t z = generation + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t block_sum(const uint8_t *b, uint32_t len, uint8_t algo)
{
    if (algo == DYN_VERIFY_XXH64)
        return dyn_xxh64(b + HDR_HCRC, len - HDR_HCRC, dyn_xxh64(b, HDR_FIELDS, 0));
    return dyn_crc32c(dyn_crc32c(0, b, HDR_FIELDS), b + HDR_HCRC, len - HDR_HCRC);
}

void dyn_verify_seal(uint8_t *b, uint32_t len, const struct dyn_verify_hdr *h)
{
    uint64_t tag = dyn_verify_tag(h->generation);

    memset(b, 0, DYN_VERIFY_HDR);
    st64(b, DYN_VERIFY_MAGIC);
    st64(b + 8, h->offset);
    st32(b + 16, len);
    b[20] = h->algo;
    st32(b + 24, h->worker);
    st64(b + 32, h->node);
    st64(b + 40, h->generation);
    st32(b + HDR_HCRC, dyn_crc32c(0, b, HDR_FIELDS));
    for (uint32_t s = DYN_VERIFY_SECTOR; s < len; s += DYN_VERIFY_SECTOR)
        st64(b + s, tag);
    st64(b + HDR_SUM, block_sum(b, len, h->algo));
}

void dyn_verify_hdr_get(const uint8_t *b, struct dyn_verify_hdr *h)
{
    h->magic = ld64(b);
    h->offset = ld64(b + 8);
    h->length = ld32(b + 16);
    h->algo = b[20];
    h->worker = ld32(b + 24);
    h->node = ld64(b + 32);
    h->generation = ld64(b + 40);
    h->sum = ld64(b + HDR_SUM);
}

/* Whether the header's own fields hold together: its crc, the zero bytes,
 * a known checksum and a sane length. */
static bool hdr_sane(const uint8_t *b, const struct dyn_verify_hdr *h)
{
    return ld32(b + HDR_HCRC) == dyn_crc32c(0, b, HDR_FIELDS) && !b[21] && !b[22] && !b[23] &&
           !ld32(b + 28) && !ld32(b + 60) &&
           (h->algo == DYN_VERIFY_CRC32C || h->algo == DYN_VERIFY_XXH64) &&
           h->length >= DYN_VERIFY_MIN_BLOCK && h->length <= MAX_BLOCK &&
           h->length % DYN_VERIFY_SECTOR == 0;
}

/* How many of the 8 bytes of a and b differ. */
static unsigned bytes_differ(uint64_t a, uint64_t b)
{
    uint64_t x = a ^ b;
    unsigned n = 0;

    for (; x; x >>= 8)
        n += (x & 0xff) != 0;
    return n;
}

/* Whether a sound verify block of a later write than generation `gen`
 * starts at p (a sector boundary inside a block read at off - s), read at
 * `off`, with `avail` bytes of the read from there: its header whole and
 * at its own offset, and the block itself sound when it lies whole in the
 * read, else every sector of it there carrying its tag exactly. Returns how
 * many bytes of the read it explains (its length, at most avail), 0 if
 * none. The caller still judges it at its own offset (stale or not). */
static uint32_t later_block(const uint8_t *p, uint32_t avail, uint64_t off, uint64_t gen)
{
    struct dyn_verify_hdr h;
    uint64_t tag;

    if (avail < DYN_VERIFY_HDR || ld64(p) != DYN_VERIFY_MAGIC)
        return 0;
    dyn_verify_hdr_get(p, &h);
    if (!hdr_sane(p, &h) || h.offset != off || h.generation <= gen)
        return 0;
    if (h.length <= avail)
        return block_sum(p, h.length, h.algo) == h.sum ? h.length : 0;
    tag = dyn_verify_tag(h.generation);
    for (uint32_t s = DYN_VERIFY_SECTOR; s < avail; s += DYN_VERIFY_SECTOR)
        if (ld64(p + s) != tag)
            return 0;
    return avail;
}

enum dyn_verify_class dyn_verify_check(const uint8_t *b, uint32_t len, uint64_t off,
                                       uint64_t expected_gen, struct dyn_verify_hdr *found,
                                       uint32_t *consumed)
{
    uint8_t fixed[DYN_VERIFY_HDR];
    const uint8_t *hdr = b;
    uint64_t tag;
    bool hit = false;

    *consumed = len < DYN_VERIFY_SECTOR ? len : DYN_VERIFY_SECTOR;
    if (len < DYN_VERIFY_HDR || bytes_differ(ld64(b), DYN_VERIFY_MAGIC) > 1) {
        memset(found, 0, sizeof(*found));
        return DYN_VERIFY_NO_HEADER;
    }
    /* A magic with one byte changed is a verify block whose first bytes
     * were hit (any other data so close to it is ~2^-53 likely): judged
     * with the magic put back, and corrupt whatever else holds. */
    if (ld64(b) != DYN_VERIFY_MAGIC) {
        memcpy(fixed, b, DYN_VERIFY_HDR);
        st64(fixed, DYN_VERIFY_MAGIC);
        hdr = fixed;
        hit = true;
    }
    dyn_verify_hdr_get(hdr, found);
    if (!hdr_sane(hdr, found))
        return DYN_VERIFY_CORRUPT;
    if (found->length > len) {
        /* Only part of the block was read: nothing to check it with. */
        *consumed = len;
        return DYN_VERIFY_NO_HEADER;
    }
    *consumed = found->length;
    if (hit)
        return DYN_VERIFY_CORRUPT;
    if (found->offset != off)
        return DYN_VERIFY_MISPLACED;
    if (block_sum(b, found->length, found->algo) != found->sum) {
        /* Torn when a sector carries another write's tag or none; a tag
         * with one byte changed is this write's, hit: corrupt. Sectors
         * that a sound block of a later write starts in and covers were
         * legitimately replaced (a smaller write inside this block): the
         * caller judges those blocks at their own offsets (*consumed stops
         * at the first), and the rest of this block, which its sum can no
         * longer cover, is judged by its sector tags only, exactly:
         * "overlaid", not ok. */
        bool bent = false;
        uint32_t first = 0;
        tag = dyn_verify_tag(found->generation);
        for (uint32_t s = DYN_VERIFY_SECTOR; s < found->length;) {
            uint64_t t = ld64(b + s);
            uint32_t n;
            if (t == tag) {
                s += DYN_VERIFY_SECTOR;
                continue;
            }
            n = later_block(b + s, len - s, off + s, found->generation);
            if (n) {
                if (!first)
                    first = s;
                s += n;
                continue;
            }
            if (bytes_differ(t, tag) > 1)
                return DYN_VERIFY_TORN;
            bent = true;
            s += DYN_VERIFY_SECTOR;
        }
        if (bent || !first)
            return DYN_VERIFY_CORRUPT;
        *consumed = first;
        if (expected_gen && found->generation != expected_gen)
            return DYN_VERIFY_STALE;
        return DYN_VERIFY_OVERLAID;
    }
    if (expected_gen && found->generation != expected_gen)
        return DYN_VERIFY_STALE;
    return DYN_VERIFY_OK;
}
