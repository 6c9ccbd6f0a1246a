/* SPDX-License-Identifier: Apache-2.0 */
/* tests/integration/cached.c - iof_cached PATH: prints how many pages of the
 * file's or block device's page cache are resident (mmap and mincore over its
 * whole size; fincore(1) reads a block device's size as 0). Lets the
 * integration tests check that the agent leaves nothing of its own buffered
 * reads and writes in the cache of what it tests. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    uint64_t size = 0, resident = 0;
    struct stat st;
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *vec;
    void *map;
    size_t pages;
    int fd;

    if (argc != 2) {
        fprintf(stderr, "usage: iof_cached PATH\n");
        return 2;
    }
    fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    errno = 0;
    if (fd < 0 || fstat(fd, &st) != 0 ||
        (S_ISBLK(st.st_mode) ? ioctl(fd, BLKGETSIZE64, &size) : 0) != 0) {
        fprintf(stderr, "iof_cached: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    if (S_ISREG(st.st_mode))
        size = (uint64_t)st.st_size;
    if (size == 0) {
        printf("0\n");
        return 0;
    }
    pages = (size_t)((size + (uint64_t)page - 1) / (uint64_t)page);
    map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    vec = malloc(pages);
    if (map == MAP_FAILED || !vec || mincore(map, (size_t)size, vec) != 0) {
        fprintf(stderr, "iof_cached: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < pages; i++)
        resident += vec[i] & 1;
    printf("%llu\n", (unsigned long long)resident);
    munmap(map, (size_t)size);
    free(vec);
    close(fd);
    return 0;
}
