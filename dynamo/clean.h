/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/clean.h - removing the test files an agent made, and only those.
 *
 * Every test file dyn_target_prepare creates in the workdir is noted in the
 * workdir's ledger, DYN_LEDGER_NAME, one line per file: "DEV INO SIZE BTIME
 * PATH" (the file's device and inode numbers, its size, its birth time in
 * ns or 0 where the filesystem keeps none, its plan path relative to the
 * workdir). A file is removed only when its name, resolved beneath the
 * workdir without following links (dyn_scope_open_parent), still holds that
 * very object - a regular file of the agent's user with one link (no second
 * name made since) and that device, inode, size and birth time (an inode
 * number alone is soon reused). Anything else - a file
 * the agent did not make, one replaced since, a device, a path outside the
 * workdir - is left alone. The verify state of a removed file
 * (dynamo/genmap.h) goes with it.
 *
 * Two callers: the end of a session whose prepare asked for cleanup
 * (plan run.cleanup: the files that session created), and the clean
 * message (iofleet clean: every file the ledger names). Both run on the
 * event loop, never while a preparation or a test runs.
 */
#ifndef IOF_DYNAMO_CLEAN_H
#define IOF_DYNAMO_CLEAN_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/spec.h"

#define DYN_LEDGER_NAME ".iofleet-testfiles"

struct dyn_scope;

/* One test file the agent created. */
struct dyn_created {
    char path[IOF_PATH_MAX]; /* relative to the workdir, as the plan names it */
    uint64_t dev, ino, size;
    uint64_t btime_ns; /* 0: the filesystem keeps no birth time */
};

/* Fills f's identity (dev, ino, size, btime_ns) from the object `base`
 * names in dirfd, without following a link. 0, -ENOENT, or another error;
 * -EPERM when it is not a regular file of the agent's user with one link. */
int dyn_clean_identify(int dirfd, const char *base, struct dyn_created *f);

/* Appends f to the workdir's ledger (created mode 0600 when missing).
 * 0 or a negative error with a message naming the ledger. */
int dyn_clean_note(struct dyn_scope *s, const struct dyn_created *f, struct iof_diag *diag);

/* What a clean removed: counts of every file, the first
 * DYN_CLEAN_NAMES_MAX names (new strings). */
#define DYN_CLEAN_NAMES_MAX 256
struct dyn_clean_report {
    uint64_t files, bytes; /* removed (bytes: their sizes) */
    uint64_t failed;       /* ours, but unlink failed (kept in the ledger) */
    char *removed[DYN_CLEAN_NAMES_MAX];
    size_t nremoved;
};

/* Removes each of the n files that is still the object noted, with its
 * verify state, and drops the ledger's lines of files no longer there. */
void dyn_clean_files(struct dyn_scope *s, const struct dyn_created *f, size_t n,
                     struct dyn_clean_report *r);

/* Removes every file the ledger names (the same checks), and every verify
 * state file in the workdir but those of files it could not remove; then
 * rewrites the ledger with the entries that could not be removed (removes
 * it when none).
 * No ledger: nothing to do, 0. Returns 0 or an error reading the ledger. */
int dyn_clean_workdir(struct dyn_scope *s, struct dyn_clean_report *r, struct iof_diag *diag);

/* Frees the names. Accepts NULL. */
void dyn_clean_report_free(struct dyn_clean_report *r);

#endif
