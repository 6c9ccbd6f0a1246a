/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/devguard.h - may this block device be written, and iofleet's own
 * marker on the devices it wrote (docs/security.md, "Paths and devices").
 *
 * Without --allow-destructive a device is written only when nothing but
 * iofleet has written it: its first and last MiB are all zero, or carry the
 * marker; libblkid, probing the open descriptor, finds no partition table
 * (GPT forced, so a zeroed protective MBR or a lone backup GPT still
 * counts) and no superblock of any type it knows (filesystems, swap, LVM,
 * RAID, bcache...; a bad checksum still counts) from byte 0, nor where a
 * partition may start: 63 sectors and each power of two from 1 MiB and,
 * on a device whose ends are zero (no marker), also every MiB below 1 GiB,
 * where the first 128 KiB must moreover be all zero (data there is refused
 * even when libblkid names nothing).
 *
 * The marker: after a write test that wrote to the device, when it changed
 * the first or last MiB and left data there, or found both zero and left
 * them so (it wrote only between them: its data in the first GiB would
 * otherwise refuse the next test), the agent stamps the first and the last
 * 512 bytes of the device with the same 512-byte record: "IOFLEET-TESTDATA"
 * (16 bytes), version 1 (u32), 0 (u32), the device size in bytes (u64), the
 * time written (ns since the epoch, u64), a random id (u64), the writer's
 * hostname (64 bytes, NUL padded), zeros, and at byte 496 the FNV-1a 64-bit
 * hash of bytes 0..495, all little-endian; bytes 504..511 stay zero (never
 * an MBR's 0x55AA).
 * Both copies must be intact and agree, and the size must be the device's:
 * anything that overwrote either end loses it.
 */
#ifndef IOF_DYNAMO_DEVGUARD_H
#define IOF_DYNAMO_DEVGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define DYN_MARK_MAGIC "IOFLEET-TESTDATA"
#define DYN_MARK_SIZE 512
/* The ends that must be zero (or marked) to be written without
 * --allow-destructive. */
#define DYN_GUARD_END_BYTES (1u << 20)
/* On a device whose ends are zero, every MiB boundary below this is a
 * place a partition may start; past it, and on any other device
 * everywhere, every power of two (docs/security.md, "Devices"). */
#define DYN_GUARD_SCAN_BYTES (1ull << 30)
/* The bytes read at each such place: every superblock libblkid knows a
 * volume to keep in its first 128 KiB (ext2/3/4 at 1 KiB, XFS, LVM label,
 * md 1.1/1.2, bcache, swap, btrfs and ReiserFS at 64 KiB...). */
#define DYN_GUARD_AREA_BYTES (128u << 10)
/* libblkid probes each such place as a volume of this size (or up to the
 * device's end): superblocks kept relative to a volume's end are found by
 * the probe of the whole device from 0, and a window keeps each of the
 * ~1,000 probes of a large device to the reads near its start. */
#define DYN_GUARD_PROBE_BYTES (1u << 20)

/* The state of both ends of a device: a hash of the first and last MiB. */
struct dyn_dev_ends {
    uint64_t hash;
    bool zero;   /* both all zero */
    bool marked; /* both carry a valid marker */
};

/* Reads both ends of the device open as `fd` (size bytes) into *ends. */
int dyn_devguard_ends(int fd, uint64_t size, struct dyn_dev_ends *ends, struct iof_diag *diag);

/* Whether the device open as `fd` (read access is enough; `path` for
 * messages) may be written: 0, or IOF_EDENIED naming the partition table,
 * the signature and its offset, or the data at its ends. `destructive`
 * skips every check. *ends receives the state of its ends. */
int dyn_devguard_check(int fd, const char *path, uint64_t size, bool destructive,
                       struct dyn_dev_ends *ends, struct iof_diag *diag);

/* What a refusal's message tells the user to do, e.g. "run `iofleet run`
 * with --allow-destructive" for an agent started by a local run; NULL
 * restores the default ("start the agent with --allow-destructive"). The
 * string is borrowed for the life of the process. */
void dyn_devguard_set_remedy(const char *remedy);

/* Writes the marker at both ends of the device (fd open for writing) and
 * syncs it. */
int dyn_devguard_mark(int fd, uint64_t size);

/* ---- shared by both systems' guards (dynamo/devguard_mark.c) ---- */

#define DYN_GUARD_HASH_INIT 0xcbf29ce484222325ull
/* FNV-1a 64-bit over p[0..n), from h (DYN_GUARD_HASH_INIT to start). */
uint64_t dyn_guard_hash(uint64_t h, const uint8_t *p, size_t n);
bool dyn_guard_all_zero(const uint8_t *p, size_t n);
/* Fills m (DYN_MARK_SIZE bytes) with the marker record of a device of
 * `size` bytes, written at now_ns (since the epoch) with the random `id` by
 * `host` (at most 64 bytes kept). */
void dyn_mark_record(uint8_t *m, uint64_t size, uint64_t now_ns, uint64_t id, const char *host);
/* Whether m holds a valid marker record for a device of `size` bytes. */
bool dyn_mark_valid(const uint8_t *m, uint64_t size);
/* *ends from the first and last n bytes of a device of `size` bytes. */
void dyn_guard_ends_state(const uint8_t *head, const uint8_t *tail, size_t n, uint64_t size,
                          struct dyn_dev_ends *ends);

#endif
