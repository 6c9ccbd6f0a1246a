/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/data.c - data content of writes (data.h): a pool of duplicate units
 * shared by the cluster, unique units as an xor of a random slice and a fresh
 * key, every unit's compressible tail left as zeros from setup. */
#include "dynamo/data.h"

#include <string.h>

uint32_t dyn_data_rand_len(const struct iof_data_cfg *cfg)
{
    uint64_t keep = (uint64_t)cfg->unit * (100 - cfg->compress_pct) / 100;

    /* Rounded to the key's 32 bytes (a unit is a multiple of 512). */
    keep = (keep + 16) / 32 * 32;
    if (keep < DYN_DATA_MIN_RAND)
        keep = DYN_DATA_MIN_RAND;
    if (keep > cfg->unit)
        keep = cfg->unit;
    return (uint32_t)keep;
}

size_t dyn_data_area_size(const struct iof_data_cfg *cfg)
{
    return iof_data_area_size(cfg);
}

static void data_random(struct dyn_rng *r, uint8_t *p, size_t len)
{
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t v = dyn_rng_next(r);
        memcpy(p + i, &v, 8);
    }
}

void dyn_data_init(struct dyn_data *d, const struct iof_data_cfg *cfg, uint8_t *area,
                   uint64_t pool_seed, uint64_t unique_seed)
{
    struct dyn_rng pr;
    uint8_t *pool = area, *src = area + (size_t)DYN_DATA_POOL * cfg->unit;

    d->unit = cfg->unit;
    d->rand_len = dyn_data_rand_len(cfg);
    d->dedupe = cfg->dedupe_pct == 0     ? DYN_CHANCE_NEVER
                : cfg->dedupe_pct >= 100 ? DYN_CHANCE_ALWAYS
                                         : DYN_CHANCE_DRAW;
    d->dedupe_thr = d->dedupe == DYN_CHANCE_DRAW ? dyn_gen_threshold(cfg->dedupe_pct) : 0;
    /* Slices start in [0, DYN_DATA_SPAN) and run at most one unit past it. */
    d->span_mask = (DYN_DATA_SPAN - 1) & ~(DYN_DATA_SLICE_ALIGN - 1);

    /* The pool depends on the layout too: groups that ask for different
     * compression share no duplicates. */
    dyn_rng_seed(&pr, pool_seed ^ ((uint64_t)d->unit << 32) ^ d->rand_len);
    memset(pool, 0, (size_t)DYN_DATA_POOL * d->unit);
    for (uint32_t i = 0; i < DYN_DATA_POOL; i++)
        data_random(&pr, pool + (size_t)i * d->unit, d->rand_len);
    dyn_rng_seed(&d->rng, unique_seed);
    data_random(&d->rng, src, DYN_DATA_SPAN + d->unit);
    d->pool = pool;
    d->src = src;
}

void dyn_data_prepare(const struct dyn_data *d, uint8_t *buf, size_t len)
{
    for (size_t off = 0; off < len; off += d->unit)
        memset(buf + off + d->rand_len, 0, d->unit - d->rand_len);
}

/* dst[0, n) = src[0, n) xor the 32-byte key repeated (n a multiple of 32):
 * the one pass over a unique unit, bound by memory bandwidth. Written with
 * vectors of 32 bytes and built for AVX-512, AVX2 and baseline x86-64 (the
 * loader picks the best the CPU has), which is what keeps a 4 KiB unit
 * around 50 ns. */
typedef uint64_t data_v4 __attribute__((vector_size(32)));

/* Not under ThreadSanitizer: the clones' resolver runs before its runtime is up. Not
 * on Windows: the clones need the ELF loader's ifunc. */
#if defined(__x86_64__) && defined(__has_attribute) && !defined(__SANITIZE_THREAD__) &&            \
    !defined(_WIN32)
#if __has_attribute(target_clones)
#define DATA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef DATA_CLONES
#define DATA_CLONES
#endif

DATA_CLONES
static void data_xor(uint8_t *restrict dst, const uint8_t *restrict src, const uint64_t key[4],
                     uint32_t n)
{
    data_v4 k, v;

    memcpy(&k, key, sizeof(k));
    for (uint32_t i = 0; i < n; i += 32) {
        memcpy(&v, src + i, sizeof(v));
        v ^= k;
        memcpy(dst + i, &v, sizeof(v));
    }
}

static inline int data_is_dup(struct dyn_data *d)
{
    if (d->dedupe != DYN_CHANCE_DRAW)
        return d->dedupe == DYN_CHANCE_ALWAYS;
    return dyn_rng_next(&d->rng) < d->dedupe_thr;
}

const uint8_t *dyn_data_fill(struct dyn_data *d, uint8_t *buf, uint32_t len)
{
    for (uint32_t off = 0; off < len; off += d->unit) {
        if (data_is_dup(d)) {
            const uint8_t *p =
                d->pool + (size_t)(dyn_rng_next(&d->rng) & (DYN_DATA_POOL - 1)) * d->unit;
            if (len == d->unit)
                return p;
            memcpy(buf + off, p, d->rand_len);
        } else {
            uint64_t key[4];
            uint64_t at = dyn_rng_next(&d->rng) & d->span_mask;
            for (int i = 0; i < 4; i++)
                key[i] = dyn_rng_next(&d->rng);
            data_xor(buf + off, d->src + at, key, d->rand_len);
        }
    }
    return buf;
}
