/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/files.c - what dynamo asks of an opened file or device on
 * Windows (dynamo/os/os.h): a disk's or volume's geometry
 * (IOCTL_DISK_GET_LENGTH_INFO; the logical sector from
 * IOCTL_STORAGE_QUERY_PROPERTY's StorageAccessAlignmentProperty, else
 * IOCTL_DISK_GET_DRIVE_GEOMETRY_EX), a file's identity for the workdir's
 * ledger (volume serial, file id, links, creation time), and whether an
 * opened test file is the agent's (dynamo/os/windows/acl.c). A dyn_os_handle
 * here is the C runtime's descriptor, as on Linux: its HANDLE is
 * _get_osfhandle's. */
#ifdef _WIN32
#include "dynamo/os/os.h"

#include <errno.h>
#include <windows.h>
#include <winioctl.h>

#include "common/err.h"
#include "common/os/os.h"

int dyn_os_blockdev_geometry(dyn_os_handle fd, uint64_t *size, uint64_t *lbs)
{
    HANDLE h = (HANDLE)_get_osfhandle((int)fd);
    GET_LENGTH_INFORMATION len;
    STORAGE_PROPERTY_QUERY q = {.PropertyId = StorageAccessAlignmentProperty,
                                .QueryType = PropertyStandardQuery};
    STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR al;
    DISK_GEOMETRY_EX geo;
    DWORD n;

    if (h == INVALID_HANDLE_VALUE)
        return -EBADF;
    if (!DeviceIoControl(h, IOCTL_DISK_GET_LENGTH_INFO, NULL, 0, &len, sizeof(len), &n, NULL))
        return iof_os_win_errno(GetLastError());
    *size = (uint64_t)len.Length.QuadPart;
    if (DeviceIoControl(h, IOCTL_STORAGE_QUERY_PROPERTY, &q, sizeof(q), &al, sizeof(al), &n,
                        NULL) &&
        n >= sizeof(al) && al.BytesPerLogicalSector)
        *lbs = al.BytesPerLogicalSector;
    else if (DeviceIoControl(h, IOCTL_DISK_GET_DRIVE_GEOMETRY_EX, NULL, 0, &geo, sizeof(geo), &n,
                             NULL) &&
             geo.Geometry.BytesPerSector)
        *lbs = geo.Geometry.BytesPerSector;
    else
        *lbs = 512;
    return 0;
}

int dyn_os_file_id(int dirfd, const char *base, struct dyn_os_file_id *out)
{
    struct stat st;

    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    out->regular = S_ISREG(st.st_mode);
    out->mine = st.st_uid == geteuid(); /* its owner and DACL: posix.h */
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    out->size = st.st_size;
    out->btime = (uint64_t)st.st_ctime * 1000000000u; /* creation time, whole seconds */
    out->nlink = st.st_nlink;
    return 0;
}

int dyn_os_file_check(int fd, const char *what, const char *name, struct iof_diag *diag)
{
    intptr_t h = _get_osfhandle(fd);

    if (h == -1 || h == -2)
        return iof_diag_set(diag, -EBADF, "%s '%s': %s", what, name, strerror(EBADF));
    return dyn_win_file_handle_check((HANDLE)h, what, name, diag);
}

void dyn_os_drop_cache(int fd)
{
    (void)fd;
}
#endif
