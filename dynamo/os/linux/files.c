/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/linux/files.c - what dynamo asks of an opened file or device on
 * Linux (dynamo/os/os.h): a block device's geometry (BLKGETSIZE64,
 * BLKSSZGET), a file's identity for the workdir's ledger (statx), and
 * whether an opened test file is the agent's (fstat). */
#include "dynamo/os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/err.h"

int dyn_os_blockdev_geometry(dyn_os_handle h, uint64_t *size, uint64_t *lbs)
{
    int fd = (int)h, sector = 512;

    if (ioctl(fd, BLKGETSIZE64, size) < 0 || ioctl(fd, BLKSSZGET, &sector) < 0)
        return -errno;
    *lbs = (uint64_t)sector;
    return 0;
}

int dyn_os_file_id(int dirfd, const char *base, struct dyn_os_file_id *out)
{
    struct statx sx;

    if (statx(dirfd, base, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS | STATX_BTIME,
              &sx) < 0)
        return -errno;
    out->regular = S_ISREG(sx.stx_mode);
    out->mine = sx.stx_uid == geteuid();
    out->dev = (uint64_t)makedev(sx.stx_dev_major, sx.stx_dev_minor);
    out->ino = sx.stx_ino;
    out->size = sx.stx_size;
    out->btime = (sx.stx_mask & STATX_BTIME)
                     ? (uint64_t)sx.stx_btime.tv_sec * 1000000000u + sx.stx_btime.tv_nsec
                     : 0;
    out->nlink = sx.stx_nlink;
    return 0;
}

/* "nobody (uid 65534)", or "uid 65534" when it has no name here. */
static void user_name(uid_t uid, char *out, size_t cap)
{
    struct passwd pw, *res = NULL;
    char buf[1024];

    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
        snprintf(out, cap, "%s (uid %ju)", res->pw_name, (uintmax_t)uid);
    else
        snprintf(out, cap, "uid %ju", (uintmax_t)uid);
}

int dyn_os_file_check(int fd, const char *what, const char *name, struct iof_diag *diag)
{
    struct stat st;
    char owner[160], self[160];

    if (fstat(fd, &st) < 0)
        return iof_diag_set(diag, -errno, "%s '%s': %s", what, name, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return iof_diag_set(diag, IOF_EDENIED,
                            "%s '%s': not a regular file; test files in the workdir must be", what,
                            name);
    if (st.st_nlink != 1)
        return iof_diag_set(diag, IOF_EDENIED,
                            "%s '%s': has %ju links; a file with more than one name could be one "
                            "outside the allowed paths",
                            what, name, (uintmax_t)st.st_nlink);
    if (st.st_uid != geteuid()) {
        user_name(st.st_uid, owner, sizeof(owner));
        user_name(geteuid(), self, sizeof(self));
        return iof_diag_set(diag, IOF_EDENIED,
                            "%s '%s': not a plain file of the agent's user: owned by %s, not by "
                            "the agent's (%s); remove it and let the agent make it again",
                            what, name, owner, self);
    }
    return 0;
}

void dyn_os_drop_cache(int fd)
{
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}
