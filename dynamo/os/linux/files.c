/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/linux/files.c - what dynamo asks of an opened file or device on
 * Linux (dynamo/os/os.h): a block device's geometry (BLKGETSIZE64,
 * BLKSSZGET) and a file's identity for the workdir's ledger (statx). */
#include "dynamo/os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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
