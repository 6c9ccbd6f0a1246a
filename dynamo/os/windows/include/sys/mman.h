/* SPDX-License-Identifier: Apache-2.0 */
/* <sys/mman.h> for the agent's Windows build (dynamo/os/windows/posix.h):
 * a shared read-write mapping of a whole file (CreateFileMappingW,
 * MapViewOfFile), all the verify state file needs. */
#ifndef IOF_DYNAMO_WIN_SYS_MMAN_H
#define IOF_DYNAMO_WIN_SYS_MMAN_H

#include <stddef.h>
#include <stdint.h>

#define PROT_READ 0x1
#define PROT_WRITE 0x2
#define MAP_SHARED 0x1
#define MAP_FAILED ((void *)-1)

#define mmap dyn_win_mmap
#define munmap dyn_win_munmap
void *dyn_win_mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t off);
int dyn_win_munmap(void *addr, size_t len);

#endif
