/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/genmap.h - which generation each block of a verified test file
 * should hold, so a read can tell the block last written from an intact but
 * older one (a write the storage lost: "stale").
 *
 * One entry per 4 KiB granule of the file: the generation of the last write
 * that started there and completed, 0 when unknown (never written with
 * verify here, a write that failed, or inside a larger block), with
 * DYN_GENMAP_AMB set when writes to it overlapped in flight (the device may
 * hold either: not judged). The entries live in a state file in the agent's
 * workdir, mapped shared, so they carry over to later tests, runs and agent
 * restarts; the file names the test file's device and inode and is reset
 * when they change, and removed when the test file is made anew (an inode
 * number may come back) or a test writes it without verify (blocks with no
 * header where the map expects one would be reported). Devices and absolute
 * paths get no map: others may write them between runs.
 *
 * Concurrency: every worker of the node that writes the file shares its
 * map. Per granule a count of writes in flight; per map a count of writes
 * completed. A read judges staleness only when no write of this node was
 * in flight on its granules when it was issued or completed and none
 * completed meanwhile (dyn_genmap_read_*), so it never calls a race stale.
 */
#ifndef IOF_DYNAMO_GENMAP_H
#define IOF_DYNAMO_GENMAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/spec.h"

#define DYN_GENMAP_SHIFT IOF_GENMAP_SHIFT
#define DYN_GENMAP_AMB (1ULL << 63)
/* The most granules kept: a 64 GiB test file (a 128 MiB state file). The
 * budget counts the map (common/budget.c). */
#define DYN_GENMAP_MAX IOF_GENMAP_MAX

struct dyn_scope;

struct dyn_genmap {
    _Atomic uint64_t *gen;  /* n entries, in the mapped state file */
    _Atomic uint16_t *busy; /* n: writes in flight (memory only) */
    _Atomic uint64_t done;  /* writes completed */
    uint64_t n;
    void *map;
    size_t maplen;
};

/* The name of the state file of test file `path` (relative), in the
 * workdir's top directory: ".iofleet-verify-<hash of path>.gen" (cap >= 64). */
#define DYN_GENMAP_STATE_NAME_MAX 64
void dyn_genmap_state_name(const char *path, char *buf, size_t cap);

/* Opens (creating or resetting) the state file of test file `path`
 * (relative, opened as st_dev/st_ino, size bytes) in the scope's workdir.
 * Returns 0 and a new map, 0 and NULL when the file is too large to track,
 * or an error naming the state file. */
int dyn_genmap_open(struct dyn_scope *scope, const char *path, dev_t dev, ino_t ino, uint64_t size,
                    struct dyn_genmap **out, struct iof_diag *diag);

/* Removes the state file of test file `path` (relative), if any: what it
 * says no longer holds (the file was made anew, or is written without
 * verify). Returns 0, or an error naming the state file. */
int dyn_genmap_forget(struct dyn_scope *scope, const char *path, struct iof_diag *diag);

/* Unmaps (the entries stay in the state file). Accepts NULL. */
void dyn_genmap_close(struct dyn_genmap *m);

/* A write of len bytes at off is issued / has completed (ok: in full). */
void dyn_genmap_write_start(struct dyn_genmap *m, uint64_t off, uint32_t len);
void dyn_genmap_write_done(struct dyn_genmap *m, uint64_t off, uint32_t len, uint64_t gen, bool ok);

/* A read's ticket: taken when it is issued, checked when it completes. */
struct dyn_genmap_ticket {
    uint64_t done;
    bool quiet; /* no write in flight on its granules when issued */
};
void dyn_genmap_read_start(struct dyn_genmap *m, uint64_t off, uint32_t len,
                           struct dyn_genmap_ticket *tk);
/* Whether the read may be judged at all: no write of this node in flight on
 * its granules when it was issued nor when it completed (else it may see a
 * legitimate mix of writes). */
bool dyn_genmap_read_calm(struct dyn_genmap *m, uint64_t off, uint32_t len,
                          const struct dyn_genmap_ticket *tk);
/* Whether it may be judged for staleness: calm, and no write of the file
 * completed meanwhile. */
bool dyn_genmap_read_quiet(struct dyn_genmap *m, uint64_t off, uint32_t len,
                           const struct dyn_genmap_ticket *tk);

/* The generation the block starting at off should hold: 0 when unknown or
 * ambiguous (not judged). */
uint64_t dyn_genmap_expected(const struct dyn_genmap *m, uint64_t off);

#endif
