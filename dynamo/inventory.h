/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/inventory.h - what an agent tells a manager about the storage it
 * may use: each --allow entry (kind, size, block sizes, model, device,
 * mount point, signature, in use, RAM-backed) and its workdir's filesystem
 * (type, device, size, free space). Sent in the hello; `iofleet agents`
 * prints it (docs/cli.md).
 *
 * Nothing here writes or holds anything: a device is opened read-only, and
 * O_EXCL only to ask whether another program holds it (closed at once).
 * Every field that cannot be read stays unknown (0, NULL, -1).
 */
#ifndef IOF_DYNAMO_INVENTORY_H
#define IOF_DYNAMO_INVENTORY_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proto/msg.h"

/* The strings a struct proto_target_info or proto_workdir_info points to. */
struct dyn_inv_strings {
    char model[PROTO_NAME_MAX + 1];
    char device[64];
    char mountpoint[PROTO_PATH_MAX + 1];
    char signature[64];
    char fstype[32];
    char path[PROTO_PATH_MAX + 1];
};

/* Copies s (sysfs, mountinfo or path text) into buf (cap bytes, always
 * terminated) valid under common/text.h's policy, as the hello's encoder
 * requires: every character it refuses (C0 and C1 controls, bidirectional
 * overrides, bytes that are not UTF-8, a character cut short) written as
 * its escape ("\u202e"), and never cut inside a character. */
void dyn_inventory_clean(char *buf, size_t cap, const char *s);

/* Fills *ti for `path` (an --allow entry); its strings point into *s. */
void dyn_inventory_target(const char *path, struct proto_target_info *ti,
                          struct dyn_inv_strings *s);

/* Fills *wi for the directory `path` (the workdir; it need not exist yet:
 * its nearest existing parent is described). */
void dyn_inventory_workdir(const char *path, struct proto_workdir_info *wi,
                           struct dyn_inv_strings *s);

/* Where the target opened as `fd` (O_PATH is enough; *st its fstat) lives:
 * for a block device its own kernel name; for a file the filesystem's type
 * and the device under it. device[cap] and fstype[fcap] are "" when
 * unknown or none (tmpfs has no device). Returns 1 when it keeps its data
 * in RAM, 0 when not, -1 when that cannot be read. */
int dyn_inventory_place(int fd, const struct stat *st, char *device, size_t cap, char *fstype,
                        size_t fcap);

/* The name of a filesystem type from statfs(2)'s f_type ("ext4" for the
 * ext2/3/4 magic, "tmpfs", ...), or NULL when it is not one we name. */
const char *dyn_fstype_name(unsigned long f_type);

/* Whether the block device `dev` keeps its data in RAM: zram, brd (ramN),
 * or a loop device whose backing file is on tmpfs or ramfs. 1, 0, or -1
 * when that cannot be read. */
int dyn_dev_ram_backed(dev_t dev);

/* The agent's inventory, kept up to date in the background: a refresh runs
 * on a thread of its own, so a device that hangs never stalls the agent's
 * loop (it only leaves the previous inventory in place). */
struct dyn_inv_cache;

/* Takes the first inventory of `paths` (copied) and `workdir` now. NULL when
 * out of memory. */
struct dyn_inv_cache *dyn_inv_cache_new(const char *workdir, char *const *paths, size_t n);

/* Starts a refresh unless one runs; `done(arg)` is called from the refresh
 * thread when the new inventory is in place (not after dyn_inv_cache_close;
 * it must be safe from any thread, e.g. uv_async_send). true when started. */
bool dyn_inv_cache_refresh(struct dyn_inv_cache *c, void (*done)(void *arg), void *arg);

/* Points inv->targets, ntargets and workdir at the newest inventory and
 * returns what keeps it alive until dyn_inv_cache_release(). */
void *dyn_inv_cache_fill(struct dyn_inv_cache *c, struct proto_inventory *inv);
void dyn_inv_cache_release(void *hold);

/* Lets go of the cache: after it returns, `done` is never called again; a
 * refresh still running frees the cache when it ends. */
void dyn_inv_cache_close(struct dyn_inv_cache *c);

#endif
