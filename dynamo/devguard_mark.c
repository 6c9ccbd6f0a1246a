/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/devguard_mark.c - what both systems' device guards
 * (dynamo/os/linux/devguard.c, dynamo/os/windows/devguard.c) share: iofleet's
 * marker record, its check, and the state of a device's ends from their
 * bytes (the layout: dynamo/devguard.h). Portable: no system call. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dynamo/devguard.h"

uint64_t dyn_guard_hash(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

bool dyn_guard_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

void dyn_mark_record(uint8_t *m, uint64_t size, uint64_t now_ns, uint64_t id, const char *host)
{
    size_t hl = strlen(host);

    memset(m, 0, DYN_MARK_SIZE);
    memcpy(m, DYN_MARK_MAGIC, 16);
    m[16] = 1;
    put64(m + 24, size);
    put64(m + 32, now_ns);
    put64(m + 40, id);
    memcpy(m + 48, host, hl < 64 ? hl : 64);
    put64(m + 496, dyn_guard_hash(DYN_GUARD_HASH_INIT, m, 496));
}

bool dyn_mark_valid(const uint8_t *m, uint64_t size)
{
    return !memcmp(m, DYN_MARK_MAGIC, 16) && m[16] == 1 && !m[17] && !m[18] && !m[19] &&
           get64(m + 24) == size && get64(m + 496) == dyn_guard_hash(DYN_GUARD_HASH_INIT, m, 496) &&
           dyn_guard_all_zero(m + 504, 8);
}

void dyn_guard_ends_state(const uint8_t *head, const uint8_t *tail, size_t n, uint64_t size,
                          struct dyn_dev_ends *ends)
{
    ends->hash = dyn_guard_hash(dyn_guard_hash(DYN_GUARD_HASH_INIT, head, n), tail, n);
    ends->zero = dyn_guard_all_zero(head, n) && dyn_guard_all_zero(tail, n);
    ends->marked = n >= DYN_MARK_SIZE && dyn_mark_valid(head, size) &&
                   !memcmp(head, tail + n - DYN_MARK_SIZE, DYN_MARK_SIZE);
}
