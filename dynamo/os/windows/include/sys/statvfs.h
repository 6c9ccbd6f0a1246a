/* SPDX-License-Identifier: Apache-2.0 */
/* <sys/statvfs.h> for the agent's Windows build (dynamo/os/windows/posix.h):
 * the free space of the volume a descriptor lives on (GetDiskFreeSpaceExW
 * for f_bavail, as the caller's user may use it). */
#ifndef IOF_DYNAMO_WIN_SYS_STATVFS_H
#define IOF_DYNAMO_WIN_SYS_STATVFS_H

#include <stdint.h>

struct statvfs {
    uint64_t f_bsize, f_frsize; /* 1: the counts below are bytes */
    uint64_t f_blocks, f_bfree, f_bavail;
};

#define fstatvfs dyn_win_fstatvfs
int dyn_win_fstatvfs(int fd, struct statvfs *out);

#endif
