/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/inventory.c - the probes of dynamo/inventory.h on
 * Windows: a disk or volume an --allow entry names (size and sector sizes
 * from IOCTL_DISK_GET_LENGTH_INFO and IOCTL_STORAGE_QUERY_PROPERTY, model
 * and bus from its StorageDeviceProperty, whether it spins, the partition table
 * from IOCTL_DISK_GET_DRIVE_LAYOUT_EX), a file or directory, and the workdir's
 * volume (GetVolumeInformationW: its file system; GetDiskFreeSpaceExW). */
#ifdef _WIN32
#include "dynamo/inventory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <winioctl.h>

#include "dynamo/os/os.h"

const char *dyn_fstype_name(unsigned long f_type)
{
    (void)f_type; /* Windows names its file systems itself (GetVolumeInformation) */
    return NULL;
}

int dyn_dev_ram_backed(dev_t dev)
{
    (void)dev;
    return -1;
}

static HANDLE open_w(const char *path, DWORD access, DWORD flags)
{
    wchar_t w[1024];

    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, 1024) <= 0)
        return INVALID_HANDLE_VALUE;
    return CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                       OPEN_EXISTING, flags, NULL);
}

static const char *bus_name(STORAGE_BUS_TYPE b)
{
    switch (b) {
    case BusTypeScsi:
        return "scsi";
    case BusTypeAtapi:
        return "atapi";
    case BusTypeAta:
        return "ata";
    case BusTypeSas:
        return "sas";
    case BusTypeSata:
        return "sata";
    case BusTypeiScsi:
        return "iscsi";
    case BusTypeUsb:
        return "usb";
    case BusTypeNvme:
        return "nvme";
    case BusTypeVirtual:
        return "virtual";
    case BusTypeFileBackedVirtual:
        return "file-backed";
    default:
        return NULL;
    }
}

/* Model ("VENDOR PRODUCT (bus)") and whether it spins, from the device's
 * descriptor. */
static void device_identity(HANDLE h, struct proto_target_info *ti, struct dyn_inv_strings *s)
{
    STORAGE_PROPERTY_QUERY q = {.PropertyId = StorageDeviceProperty,
                                .QueryType = PropertyStandardQuery};
    STORAGE_PROPERTY_QUERY sq = {.PropertyId = StorageDeviceSeekPenaltyProperty,
                                 .QueryType = PropertyStandardQuery};
    DEVICE_SEEK_PENALTY_DESCRIPTOR sp;
    uint8_t buf[1024];
    const STORAGE_DEVICE_DESCRIPTOR *d = (const STORAGE_DEVICE_DESCRIPTOR *)buf;
    char model[PROTO_NAME_MAX + 1] = "";
    const char *bus;
    DWORD n;

    if (DeviceIoControl(h, IOCTL_STORAGE_QUERY_PROPERTY, &q, sizeof(q), buf, sizeof(buf), &n,
                        NULL) &&
        n >= sizeof(*d)) {
        size_t used = 0;
        DWORD offs[2] = {d->VendorIdOffset, d->ProductIdOffset};
        for (int i = 0; i < 2; i++)
            if (offs[i] && offs[i] < n && used < sizeof(model) - 1)
                used += (size_t)snprintf(
                    model + used, sizeof(model) - used, "%s%.*s", used ? " " : "",
                    (int)strnlen((char *)buf + offs[i], n - offs[i]), (char *)buf + offs[i]);
        while (used && model[used - 1] == ' ')
            model[--used] = '\0';
        if (used) {
            dyn_inventory_clean(s->model, sizeof(s->model), model);
            ti->model = s->model;
        }
        /* The bus joins the model: the hello has no field of its own for it. */
        bus = bus_name(d->BusType);
        if (bus && used && used + strlen(bus) + 3 < sizeof(model)) {
            snprintf(model + used, sizeof(model) - used, " (%s)", bus);
            dyn_inventory_clean(s->model, sizeof(s->model), model);
        }
    }
    if (DeviceIoControl(h, IOCTL_STORAGE_QUERY_PROPERTY, &sq, sizeof(sq), &sp, sizeof(sp), &n,
                        NULL) &&
        n >= sizeof(sp))
        ti->rotational = sp.IncursSeekPenalty ? 1 : 0;
}

/* A disk or volume: sizes, sectors, identity, partition table. */
static void inventory_device(const char *path, struct proto_target_info *ti,
                             struct dyn_inv_strings *s)
{
    HANDLE h = open_w(path, 0, 0); /* no access: a query does not claim it */
    GET_LENGTH_INFORMATION len;
    STORAGE_PROPERTY_QUERY q = {.PropertyId = StorageAccessAlignmentProperty,
                                .QueryType = PropertyStandardQuery};
    STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR al;
    DWORD cap = sizeof(DRIVE_LAYOUT_INFORMATION_EX) + 128 * sizeof(PARTITION_INFORMATION_EX), n;
    DRIVE_LAYOUT_INFORMATION_EX *l;

    if (h == INVALID_HANDLE_VALUE) {
        ti->kind = "missing";
        return;
    }
    ti->kind = "block";
    dyn_inventory_clean(s->device, sizeof(s->device), path + 4); /* "PhysicalDrive1", "E:" */
    ti->device = s->device;
    if (DeviceIoControl(h, IOCTL_DISK_GET_LENGTH_INFO, NULL, 0, &len, sizeof(len), &n, NULL))
        ti->size = (uint64_t)len.Length.QuadPart;
    if (DeviceIoControl(h, IOCTL_STORAGE_QUERY_PROPERTY, &q, sizeof(q), &al, sizeof(al), &n,
                        NULL) &&
        n >= sizeof(al)) {
        if (al.BytesPerLogicalSector)
            ti->logical_block_size = al.BytesPerLogicalSector;
        ti->physical_block_size = al.BytesPerPhysicalSector;
    }
    device_identity(h, ti, s);
    l = malloc(cap);
    if (l && DeviceIoControl(h, IOCTL_DISK_GET_DRIVE_LAYOUT_EX, NULL, 0, l, cap, &n, NULL)) {
        const char *sig = l->PartitionStyle == PARTITION_STYLE_GPT   ? "gpt"
                          : l->PartitionStyle == PARTITION_STYLE_MBR ? "dos"
                                                                     : NULL;
        unsigned parts = 0;
        for (DWORD i = 0; i < l->PartitionCount; i++)
            parts += l->PartitionEntry[i].PartitionLength.QuadPart > 0;
        if (sig && parts) {
            dyn_inventory_clean(s->signature, sizeof(s->signature), sig);
            ti->signature = s->signature;
        }
        ti->in_use = parts > 0;
    }
    free(l);
    CloseHandle(h);
}

void dyn_inventory_target(const char *path, struct proto_target_info *ti, struct dyn_inv_strings *s)
{
    DWORD attr;
    WIN32_FILE_ATTRIBUTE_DATA fa;
    wchar_t w[1024];

    memset(ti, 0, sizeof(*ti));
    ti->path = path;
    ti->logical_block_size = 512;
    ti->rotational = -1;
    ti->in_use = -1;
    ti->ram_backed = -1;
    if (!strncmp(path, "\\\\.\\", 4) || !strncmp(path, "//./", 4)) {
        inventory_device(path, ti, s);
        return;
    }
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, 1024) <= 0 ||
        !GetFileAttributesExW(w, GetFileExInfoStandard, &fa)) {
        ti->kind = "missing";
        return;
    }
    attr = fa.dwFileAttributes;
    if (attr & FILE_ATTRIBUTE_DIRECTORY) {
        ti->kind = "directory";
    } else {
        ti->kind = "file";
        ti->size = ((uint64_t)fa.nFileSizeHigh << 32) | fa.nFileSizeLow;
    }
}

/* The root of the volume path lies on ("C:\"), its file system's name and
 * its sizes. */
static void volume_of(const wchar_t *path, struct proto_workdir_info *wi, struct dyn_inv_strings *s)
{
    wchar_t root[MAX_PATH + 1], fsname[MAX_PATH + 1];
    ULARGE_INTEGER avail, total, freeb;
    char name[MAX_PATH * 3];

    if (GetDiskFreeSpaceExW(path, &avail, &total, &freeb)) {
        wi->size = total.QuadPart;
        wi->free = avail.QuadPart;
    }
    if (GetVolumePathNameW(path, root, MAX_PATH + 1) &&
        GetVolumeInformationW(root, NULL, 0, NULL, NULL, NULL, fsname, MAX_PATH + 1) &&
        WideCharToMultiByte(CP_UTF8, 0, fsname, -1, name, sizeof(name), NULL, NULL) > 0) {
        for (char *p = name; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        dyn_inventory_clean(s->fstype, sizeof(s->fstype), name);
        wi->fstype = s->fstype;
    }
    if (WideCharToMultiByte(CP_UTF8, 0, root, -1, name, sizeof(name), NULL, NULL) > 0 && name[0]) {
        dyn_inventory_clean(s->device, sizeof(s->device), name);
        wi->device = s->device;
    }
}

void dyn_inventory_workdir(const char *path, struct proto_workdir_info *wi,
                           struct dyn_inv_strings *s)
{
    wchar_t w[1024], full[1024];

    memset(wi, 0, sizeof(*wi));
    wi->ram_backed = -1;
    dyn_inventory_clean(s->path, sizeof(s->path), path);
    wi->path = s->path;
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, 1024) <= 0 ||
        !GetFullPathNameW(w, 1024, full, NULL))
        return;
    /* Not created yet: the volume it will be created on. */
    while (GetFileAttributesW(full) == INVALID_FILE_ATTRIBUTES) {
        wchar_t *sep = wcsrchr(full, L'\\');
        if (!sep || sep <= full + 2)
            break;
        *sep = L'\0';
    }
    volume_of(full, wi, s);
}

int dyn_inventory_place(int fd, const struct stat *st, char *device, size_t cap, char *fstype,
                        size_t fcap)
{
    struct dyn_inv_strings s;
    struct proto_workdir_info wi;
    char path[1024];
    wchar_t w[1024];

    device[0] = fstype[0] = '\0';
    if (S_ISBLK(st->st_mode) || dyn_win_fd_path(fd, path, sizeof(path)) < 0 ||
        MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, 1024) <= 0)
        return -1;
    memset(&wi, 0, sizeof(wi));
    volume_of(w, &wi, &s);
    if (wi.device)
        snprintf(device, cap, "%s", wi.device);
    if (wi.fstype)
        snprintf(fstype, fcap, "%s", wi.fstype);
    return -1;
}
#endif
