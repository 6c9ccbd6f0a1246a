/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/target.h - what a worker drives: a test file in the workdir, a file
 * by absolute path or a block device, and the region of it that is used. */
#ifndef IOF_DYNAMO_TARGET_H
#define IOF_DYNAMO_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/spec.h"
#include "dynamo/scope.h"

struct dyn_target {
    char path[IOF_PATH_MAX]; /* the path opened (workdir joined for test files) */
    int fd;                  /* -1 when the engine touches no file */
    bool blockdev;
    uint64_t size;     /* file or device size in bytes */
    uint64_t lbs;      /* logical block size: minimum O_DIRECT alignment */
    uint64_t start;    /* first byte of the region */
    uint64_t end;      /* one past the last byte of the region */
    uint64_t dev_size; /* a block device's whole size (size may be less: cfg size) */
    /* A block device written by the test is claimed in this scope until
     * dyn_target_close (dyn_scope_hold). */
    struct dyn_scope *held;
    dev_t rdev;
    /* Set when the test is over if a worker with writes in its spec ran on it: the claim's
     * release then stamps the marker (dyn_scope_release). */
    bool wrote;
};

/* Called during preparation after every chunk written, with bytes done out
 * of total. A non-zero return cancels the preparation (the partial file is
 * removed and dyn_target_prepare returns -ECANCELED). */
typedef int (*dyn_progress_fn)(void *arg, const char *path, uint64_t done, uint64_t total);

/* Resolves cfg->path against workdir into out (IOF_PATH_MAX). Relative paths
 * must not contain ".." components. */
int dyn_target_resolve(const struct iof_target_cfg *cfg, const char *workdir, char *out,
                       struct iof_diag *diag);

/* Makes sure a relative test file exists in the scope's workdir with
 * cfg->size bytes of real data (not sparse), filled with `pattern`: reuses
 * it when the size already matches, otherwise removes it and creates it
 * anew (O_CREAT | O_EXCL | O_NOFOLLOW, through its directory's descriptor),
 * checking free space first. A name that is not a regular file with one
 * link is refused, never replaced. Absolute paths must already exist and be
 * allowed by the scope; nothing is written to them. */
int dyn_target_prepare(const struct iof_target_cfg *cfg, struct dyn_scope *scope,
                       enum iof_pattern pattern, dyn_progress_fn progress, void *arg,
                       struct iof_diag *diag);

/* dyn_target_prepare, and when it created the file (not when it reused
 * one), its name and identity in *created (may be NULL; path "" when
 * nothing was created). Every file created is also noted in the workdir's
 * ledger (dynamo/clean.h). */
struct dyn_created;
int dyn_target_prepare_noted(const struct iof_target_cfg *cfg, struct dyn_scope *scope,
                             enum iof_pattern pattern, dyn_progress_fn progress, void *arg,
                             struct dyn_created *created, struct iof_diag *diag);

/* Opens a prepared target for a test, through the scope (dyn_scope_open:
 * resolved beneath the workdir or an --allow entry, judged by what was
 * opened); the descriptor is kept until dyn_target_close. `direct`: O_DIRECT; `write`: the spec
 * writes (otherwise the target is opened read-only); `touch`: false for the
 * null engine, which only needs the region. A block device opened for
 * writing is claimed exclusively for the whole test and must pass the
 * device guard unless `destructive` (dyn_scope_hold, dynamo/devguard.h).
 * Returns 0 and a new target in
 * *out (free with dyn_target_close), or an error with a message naming the
 * path and the reason. */
int dyn_target_open(const struct iof_target_cfg *cfg, struct dyn_scope *scope, bool direct,
                    bool write, bool touch, bool destructive, struct dyn_target **out,
                    struct iof_diag *diag);

/* Keeps a verified test off iofleet's marker (dynamo/devguard.h), which the
 * end of a write test stamps over the first and the last 512 bytes of a
 * block device it wrote: a verify block there would lose its header (the
 * first: never checked again) or its last sector (the last: reported torn).
 * On a block device whose region touches them, the region starts `unit`
 * bytes later (the spec's largest alignment or transfer size, at least a
 * logical block: every offset stays aligned as it was) and ends a logical
 * block (at least 512 bytes) before the device's end. Returns whether the
 * region changed. */
bool dyn_target_skip_marker(struct dyn_target *t, uint64_t unit);

/* Closes and frees. Accepts NULL. */
void dyn_target_close(struct dyn_target *t);

#endif
