/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/devguard.c - may a disk or volume be written, and
 * iofleet's marker (dynamo/devguard.h) on Windows: the partition table from
 * IOCTL_DISK_GET_DRIVE_LAYOUT_EX (a disk holding partitions, so volumes,
 * is refused) and a volume's file system (refused: a volume is written only
 * with --allow-destructive, locked and dismounted, dynamo/os/windows/
 * scope.c) stand in for libblkid's probes; the ends and the marker are the
 * same bytes as on Linux. */
#ifdef _WIN32
#include "dynamo/devguard.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <winioctl.h>

#include "dynamo/os/os.h"

/* What a refusal tells the user to do (dyn_devguard_set_remedy). */
static const char *g_remedy = "start the agent with --allow-destructive";

void dyn_devguard_set_remedy(const char *remedy)
{
    g_remedy = remedy ? remedy : "start the agent with --allow-destructive";
}

static int read_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, buf + done, n - done, (int64_t)(off + done));
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        done += (size_t)r;
    }
    return 0;
}

int dyn_devguard_ends(int fd, uint64_t size, struct dyn_dev_ends *ends, struct iof_diag *diag)
{
    size_t n = size < DYN_GUARD_END_BYTES ? (size_t)size : DYN_GUARD_END_BYTES;
    uint8_t *head = NULL, *tail = NULL;
    int r;

    memset(ends, 0, sizeof(*ends));
    /* Sector-aligned buffers: a disk's handle may be unbuffered. */
    if (posix_memalign((void **)&head, 4096, n ? n : 1) ||
        posix_memalign((void **)&tail, 4096, n ? n : 1)) {
        free(head);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    r = read_full(fd, head, n, 0);
    if (!r)
        r = read_full(fd, tail, n, size - n);
    if (r) {
        free(head);
        free(tail);
        return iof_diag_set(diag, r, "cannot read the ends of the device: %s", strerror(-r));
    }
    dyn_guard_ends_state(head, tail, n, size, ends);
    free(head);
    free(tail);
    return 0;
}

/* Partitions of the disk open as fd (with a length), or -1 when it is not a
 * disk (a volume: it holds a file system, or had one). */
static int disk_partitions(int fd)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    DWORD cap = sizeof(DRIVE_LAYOUT_INFORMATION_EX) + 128 * sizeof(PARTITION_INFORMATION_EX), n;
    DRIVE_LAYOUT_INFORMATION_EX *l = malloc(cap);
    int parts = 0;

    if (!l)
        return 0;
    if (!DeviceIoControl(h, IOCTL_DISK_GET_DRIVE_LAYOUT_EX, NULL, 0, l, cap, &n, NULL)) {
        free(l);
        return -1;
    }
    for (DWORD i = 0; i < l->PartitionCount; i++)
        if (l->PartitionEntry[i].PartitionLength.QuadPart > 0 &&
            (l->PartitionStyle != PARTITION_STYLE_MBR ||
             l->PartitionEntry[i].Mbr.PartitionType != PARTITION_ENTRY_UNUSED))
            parts++;
    free(l);
    return parts;
}

int dyn_devguard_check(int fd, const char *path, uint64_t size, bool destructive,
                       struct dyn_dev_ends *ends, struct iof_diag *diag)
{
    int r = dyn_devguard_ends(fd, size, ends, diag), parts;

    if (r || destructive)
        return r;
    parts = disk_partitions(fd);
    if (parts < 0)
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': refusing to write: a volume holds a file system (or "
                            "held one); %s to overwrite it",
                            path, g_remedy);
    if (parts > 0)
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': refusing to write: it holds a partition table with %d "
                            "partition%s (volumes); %s to overwrite it",
                            path, parts, parts == 1 ? "" : "s", g_remedy);
    if (!ends->zero && !ends->marked)
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': refusing to write: its first or last MiB holds data "
                            "and no iofleet marker (something else wrote it); %s to overwrite it",
                            path, g_remedy);
    return 0;
}

int dyn_devguard_mark(int fd, uint64_t size)
{
    uint8_t *m = NULL;
    uint64_t id = 0, now;
    FILETIME ft;
    char host[65] = {0};
    DWORD hlen = sizeof(host) - 1;
    int r = 0;

    if (size < 2 * DYN_MARK_SIZE)
        return -EINVAL;
    if (posix_memalign((void **)&m, 4096, DYN_MARK_SIZE))
        return -ENOMEM;
    GetSystemTimeAsFileTime(&ft);
    now = ((((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime) - 116444736000000000ull) * 100;
    if (dyn_os_random(&id, sizeof(id)))
        id = now ^ ((uint64_t)GetCurrentProcessId() << 32);
    GetComputerNameA(host, &hlen);
    dyn_mark_record(m, size, now, id, host);
    if (pwrite(fd, m, DYN_MARK_SIZE, 0) != (ssize_t)DYN_MARK_SIZE ||
        pwrite(fd, m, DYN_MARK_SIZE, (int64_t)(size - DYN_MARK_SIZE)) != (ssize_t)DYN_MARK_SIZE ||
        fsync(fd))
        r = -errno;
    free(m);
    return r;
}
#endif
