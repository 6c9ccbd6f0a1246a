/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/data.h - the content of writes when a worker group sets "data"
 * (dedupe, compress, dedupe_unit): what deduplicating and compressing
 * storage reacts to, built so that the shares hold by construction.
 *
 * A write is a whole number of units (dedupe_unit bytes). Every unit is laid
 * out the same way: `rand_len` incompressible bytes, then zeros up to the
 * unit's end, so a unit compresses by compress % with any LZ compressor
 * (the zeros shrink to a few bytes, the random bytes not at all).
 *   - With probability dedupe %, a unit is a copy of one of DYN_DATA_POOL
 *     pool units. The pool is the same on every worker and node of a run
 *     (seeded with the group's seed, not the node), so the share holds across
 *     the whole target and the cluster.
 *   - Otherwise it is unique: a random slice of a per-worker random buffer
 *     xor-ed with a fresh 32-byte key from the worker's generator (seeded
 *     with node, worker, run and test). The key makes every unique unit
 *     differ from every other in every 8-byte word, so neither a dedupe
 *     engine nor an LZ match finder ever finds it again.
 * The zeros are written once when the buffers are set up; per unit only the
 * random part is written (a single xor-copy pass), and a duplicate unit of a
 * one-unit write is not copied at all (the write points at the pool).
 * One dyn_data per worker thread; not thread-safe.
 */
#ifndef IOF_DYNAMO_DATA_H
#define IOF_DYNAMO_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "common/spec.h"
#include "dynamo/gen.h"

/* Units in the shared duplicate pool: small against any target (a 64 MiB
 * target of 4 KiB units has 16384), so the pool's own first copies move the
 * unique share by well under a point. A power of two. */
#define DYN_DATA_POOL IOF_DATA_POOL
/* The random buffer unique units are cut from, past one unit. */
#define DYN_DATA_SPAN IOF_DATA_SPAN
/* Unique units start at multiples of this in the random buffer. */
#define DYN_DATA_SLICE_ALIGN 64u
/* The fewest incompressible bytes of a unit (a unit is unique through them,
 * even at compress 100 %). */
#define DYN_DATA_MIN_RAND 32u

struct dyn_data {
    uint32_t unit;
    uint32_t rand_len;   /* incompressible bytes at the start of every unit: a multiple of 32 */
    uint8_t dedupe;      /* enum dyn_chance */
    uint64_t dedupe_thr; /* duplicate when a raw draw is below this */
    uint32_t span_mask;  /* slice offsets: draw & span_mask, a multiple of DYN_DATA_SLICE_ALIGN */
    const uint8_t *pool; /* DYN_DATA_POOL units (borrowed: inside the worker's write area) */
    const uint8_t *src;  /* DYN_DATA_SPAN + unit random bytes (borrowed, likewise) */
    struct dyn_rng rng;
};

/* Incompressible bytes at the start of each unit for cfg (see above). */
uint32_t dyn_data_rand_len(const struct iof_data_cfg *cfg);

/* Bytes of the area dyn_data_init fills: iof_data_area_size (common/spec.h). */
size_t dyn_data_area_size(const struct iof_data_cfg *cfg);

/* Prepares d for cfg (enabled). `area` (dyn_data_area_size bytes, borrowed
 * for d's life) receives the pool, built from pool_seed (the same on every
 * worker and node that should share duplicates), and the random buffer;
 * unique units come from unique_seed (different for every worker, node,
 * test and run). */
void dyn_data_init(struct dyn_data *d, const struct iof_data_cfg *cfg, uint8_t *area,
                   uint64_t pool_seed, uint64_t unique_seed);

/* Zeroes the compressible tail of every unit of buf (len: a multiple of the
 * unit): once, when a slot buffer is set up; dyn_data_fill never writes it. */
void dyn_data_prepare(const struct dyn_data *d, uint8_t *buf, size_t len);

/* The content of one write of len bytes (a multiple of the unit) into buf
 * (prepared with dyn_data_prepare). Returns what to write: buf, or a pool
 * unit (read-only) when len is one unit and it is a duplicate. */
const uint8_t *dyn_data_fill(struct dyn_data *d, uint8_t *buf, uint32_t len);

#endif
