/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/scope.h - what an agent may open: its workdir and its --allow
 * entries, held as descriptors, and how a plan's target path is resolved
 * against them. A target is judged by the object that was opened, never by
 * its name (docs/security.md, "Paths and devices"):
 *
 * - a relative path (a test file) is resolved beneath the workdir's
 *   descriptor, an absolute one beneath the descriptor of the --allow
 *   directory it names, with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *   RESOLVE_NO_MAGICLINKS) (or, where the kernel lacks openat2, one
 *   component at a time with O_NOFOLLOW): no symbolic link, `..` or
 *   /proc/PID/root on the way;
 * - an absolute path naming no --allow directory must reach one of the
 *   objects --allow names itself: a block device with the same device
 *   number, or the same regular file (device and inode);
 * - what was opened must be a regular file with exactly one link, or a
 *   block device whose number an --allow entry names (a device node made
 *   with mknod elsewhere opens nothing new); in the workdir, only regular
 *   files.
 *
 * The descriptors of the --allow entries are taken again at each plan
 * (dyn_scope_refresh), so an allowed /dev/disk/by-* link follows its device.
 */
#ifndef IOF_DYNAMO_SCOPE_H
#define IOF_DYNAMO_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "common/err.h"

struct dyn_scope;

/* A new scope for `workdir` (created mode 0700 when missing; it must be a
 * directory owned by the agent's user) and the `nallow` absolute paths in
 * `allow` (borrowed: they must outlive the scope). Entries that do not exist
 * yet are kept and looked up again at each refresh. Returns 0, or an error
 * with a message naming the workdir or entry. */
int dyn_scope_new(const char *workdir, const char *const *allow, size_t nallow,
                  struct dyn_scope **out, struct iof_diag *diag);

/* Takes new descriptors of the workdir and of every --allow entry, as they
 * are now (a by-id link re-resolved to its device). Called for each plan,
 * never while a test or preparation runs. */
int dyn_scope_refresh(struct dyn_scope *s, struct iof_diag *diag);

/* The canonical workdir path (for messages). */
const char *dyn_scope_workdir(const struct dyn_scope *s);

/* 0, or IOF_EDENIED with a message when the last component of the plan
 * target `path` is reserved for the agent's own files (IOF_RESERVED_PREFIX,
 * common/spec.h). dyn_scope_open() and test-file creation check it. */
int dyn_scope_check_name(const char *path, struct iof_diag *diag);

/* Opens the plan target `path` (relative: a test file in the workdir) with
 * open(2) `flags`, checking it as described above; O_PATH in `flags` only
 * looks it up. O_NOCTTY and O_CLOEXEC are always added; O_EXCL is passed on
 * only for block devices (an exclusive claim). Returns the descriptor, or a
 * negative error with a message naming `path` and the reason; *st (may be
 * NULL) receives what was opened. */
int dyn_scope_open(struct dyn_scope *s, const char *path, int flags, struct stat *st,
                   struct iof_diag *diag);

/* Opens the directory that holds the test file `path` (relative), beneath
 * the workdir, as an O_PATH descriptor, and points *base at the file's own
 * name inside `path`. Returns the descriptor or a negative error. */
int dyn_scope_open_parent(struct dyn_scope *s, const char *path, const char **base,
                          struct iof_diag *diag);

/* Claims the block device `path` (number `rdev`, already opened through
 * the scope) for a write test: an exclusive open (O_EXCL: mount, mkfs and
 * swapon get EBUSY while it is held) that must pass dyn_devguard_check
 * unless `destructive`. Claims are counted: targets of one test on the same
 * device share one. Returns 0 or an error naming `path` and the reason. */
int dyn_scope_hold(struct dyn_scope *s, const char *path, dev_t rdev, bool destructive,
                   struct iof_diag *diag);

/* Drops one claim on `rdev`; `wrote`: the claimant wrote to the device.
 * The last one stamps iofleet's marker (dynamo/devguard.h) when any of them
 * wrote and either the device's first or last MiB changed, or both were zero
 * when it was claimed and still are (a test that wrote only between them),
 * then closes the device. */
void dyn_scope_release(struct dyn_scope *s, dev_t rdev, bool wrote);

/* For tests: resolve without openat2 (the component-by-component fallback),
 * as on kernels older than 5.6. */
void dyn_scope_force_fallback(bool on);

void dyn_scope_free(struct dyn_scope *s);

#endif
