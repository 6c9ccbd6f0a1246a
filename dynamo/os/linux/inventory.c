/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/linux/inventory.c - the storage an agent describes in its hello
 * on Linux: each --allow entry and the workdir's filesystem (see
 * dynamo/inventory.h). Reads sysfs, /proc/self/mountinfo, statfs and
 * libblkid; writes nothing. */
#include "dynamo/inventory.h"
#include "dynamo/os/os.h"

#include <blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* One line of a sysfs file, trailing newline and blanks removed (sysfs pads
 * model names); "" when it cannot be read. */
static void read_sys_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    char raw[512] = "";

    buf[0] = '\0';
    if (!f)
        return;
    if (fgets(raw, (int)sizeof(raw), f))
        raw[strcspn(raw, "\n")] = '\0';
    fclose(f);
    for (size_t n = strlen(raw); n && raw[n - 1] == ' '; n--)
        raw[n - 1] = '\0';
    dyn_inventory_clean(buf, cap, raw);
}

/* The kernel's name of block device `dev` ("vda1"): the last component of
 * /sys/dev/block/M:m. false when it has none (tmpfs, overlay: major 0). */
static bool dev_name(dev_t dev, char *buf, size_t cap)
{
    char link[64], target[512];
    ssize_t n;

    snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(dev), minor(dev));
    n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
        return false;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    dyn_inventory_clean(buf, cap, base ? base + 1 : target);
    return buf[0] != '\0';
}

/* Reads /sys/dev/block/M:m/FILE, or for a partition its disk's
 * (/sys/dev/block/M:m/../FILE). */
static void read_dev_attr(dev_t dev, const char *file, char *buf, size_t cap)
{
    char path[160];

    snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", major(dev), minor(dev), file);
    read_sys_line(path, buf, cap);
    if (buf[0])
        return;
    snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../%s", major(dev), minor(dev), file);
    read_sys_line(path, buf, cap);
}

static uint32_t block_size_attr(dev_t dev, const char *file)
{
    char line[32];
    unsigned long v;

    read_dev_attr(dev, file, line, sizeof(line));
    v = strtoul(line, NULL, 10);
    if (v < 512 || v > 65536 || (v & (v - 1)))
        return 0;
    return (uint32_t)v;
}

static const struct {
    unsigned long magic;
    const char *name;
} g_fstypes[] = {
    {0xEF53, "ext4"},         {0x58465342, "xfs"},      {0x9123683E, "btrfs"},
    {0x01021994, "tmpfs"},    {0x858458f6, "ramfs"},    {0x794c7630, "overlay"},
    {0x6969, "nfs"},          {0xF2F52010, "f2fs"},     {0x65735546, "fuse"},
    {0x2fc12fc1, "zfs"},      {0xFF534D42, "cifs"},     {0xFE534D42, "smb2"},
    {0x00c36400, "ceph"},     {0x73717368, "squashfs"}, {0xca451a4e, "bcachefs"},
    {0x4d44, "vfat"},         {0x5346544e, "ntfs"},     {0x3153464a, "jfs"},
    {0x52654973, "reiserfs"}, {0x6e736673, "nsfs"},     {0x9fa0, "proc"},
    {0x62656572, "sysfs"},    {0x47504653, "gpfs"},     {0x0BD00BD0, "lustre"},
};

const char *dyn_fstype_name(unsigned long f_type)
{
    f_type &= 0xffffffffUL;
    for (size_t i = 0; i < sizeof(g_fstypes) / sizeof(g_fstypes[0]); i++)
        if (g_fstypes[i].magic == f_type)
            return g_fstypes[i].name;
    return NULL;
}

static bool fs_in_ram(unsigned long f_type)
{
    f_type &= 0xffffffffUL;
    return f_type == 0x01021994 || f_type == 0x858458f6;
}

static int dev_ram_backed_depth(dev_t dev, int depth)
{
    char name[64], path[160], backing[PROTO_PATH_MAX + 1];
    struct statfs fs;
    struct stat st;

    if (!dev_name(dev, name, sizeof(name)))
        return -1;
    if (!strncmp(name, "zram", 4) || (!strncmp(name, "ram", 3) && name[3] >= '0' && name[3] <= '9'))
        return 1;
    if (strncmp(name, "loop", 4) != 0)
        return 0;
    snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
    read_sys_line(path, backing, sizeof(backing));
    if (!backing[0])
        return -1;
    /* The kernel appends " (deleted)" to a backing file that was unlinked. */
    size_t n = strlen(backing);
    if (n > 10 && !strcmp(backing + n - 10, " (deleted)"))
        backing[n - 10] = '\0';
    if (statfs(backing, &fs) == 0 && fs_in_ram((unsigned long)fs.f_type))
        return 1;
    if (depth > 0 && stat(backing, &st) == 0)
        return dev_ram_backed_depth(st.st_dev, depth - 1);
    return -1;
}

int dyn_dev_ram_backed(dev_t dev)
{
    return dev_ram_backed_depth(dev, 4);
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape_mount(char *s)
{
    char *o = s;

    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

/* The devices to look for in the mount table: `dev` and, for a disk, its
 * partitions (/sys/dev/block/M:m/NAME/dev). */
static size_t dev_and_partitions(dev_t dev, const char *name, dev_t *out, size_t cap)
{
    char dir[96], path[256], line[32];
    size_t n = 0;

    out[n++] = dev;
    snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", major(dev), minor(dev));
    for (unsigned i = 1; i < 129 && n < cap; i++) {
        unsigned ma, mi;
        /* nvme0n1 → nvme0n1p1, sda → sda1, loop0 → loop0p1, mmcblk0 → mmcblk0p1 */
        size_t len = strlen(name);
        bool p = len && name[len - 1] >= '0' && name[len - 1] <= '9';
        snprintf(path, sizeof(path), "%s/%s%s%u/dev", dir, name, p ? "p" : "", i);
        read_sys_line(path, line, sizeof(line));
        if (!line[0])
            break;
        if (sscanf(line, "%u:%u", &ma, &mi) == 2)
            out[n++] = makedev(ma, mi);
    }
    return n;
}

/* Where `dev` or one of its partitions is mounted (the first in the mount
 * table) into buf; false when none is. */
static bool mounted_at(dev_t dev, const char *name, char *buf, size_t cap)
{
    dev_t devs[130];
    size_t nd = dev_and_partitions(dev, name, devs, sizeof(devs) / sizeof(devs[0]));
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char *line = NULL;
    size_t lcap = 0;
    bool found = false;

    if (!f)
        return false;
    while (!found && getline(&line, &lcap, f) > 0) {
        unsigned ma, mi;
        char *save = NULL, *tok = strtok_r(line, " ", &save);
        char *mp = NULL;
        for (int field = 0; tok && field < 5; field++, tok = strtok_r(NULL, " ", &save)) {
            if (field == 2 && sscanf(tok, "%u:%u", &ma, &mi) != 2)
                break;
            if (field == 4)
                mp = tok;
        }
        if (!mp)
            continue;
        for (size_t i = 0; i < nd; i++)
            if (devs[i] == makedev(ma, mi)) {
                unescape_mount(mp);
                dyn_inventory_clean(buf, cap, mp);
                found = true;
                break;
            }
    }
    free(line);
    fclose(f);
    return found;
}

/* Whether anything is stacked on the device (device-mapper, md, bcache):
 * /sys/dev/block/M:m/holders is not empty. */
static bool has_holders(dev_t dev)
{
    char path[96];
    bool any = false;

    snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders", major(dev), minor(dev));
    DIR *d = opendir(path);
    if (!d)
        return false;
    for (struct dirent *e; !any && (e = readdir(d));)
        any = e->d_name[0] != '.';
    closedir(d);
    return any;
}

/* Whether the device is active swap (/proc/swaps names it). */
static bool is_swap(dev_t dev)
{
    FILE *f = fopen("/proc/swaps", "re");
    char line[PROTO_PATH_MAX + 64], name[PROTO_PATH_MAX + 1];
    struct stat st;
    bool found = false;

    if (!f)
        return false;
    while (!found && fgets(line, sizeof(line), f))
        if (sscanf(line, "%4095s", name) == 1 && name[0] == '/' && stat(name, &st) == 0 &&
            S_ISBLK(st.st_mode) && st.st_rdev == dev)
            found = true;
    fclose(f);
    return found;
}

/* The partition table or filesystem type libblkid finds on the device open
 * as `fd`, e.g. "gpt" or "ext4"; "" when none; false when probing failed. */
static bool probe_signature(int fd, char *buf, size_t cap)
{
    blkid_probe pr = blkid_new_probe();
    const char *v = NULL;
    bool ok = false;

    buf[0] = '\0';
    if (!pr)
        return false;
    if (blkid_probe_set_device(pr, fd, 0, 0) == 0) {
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
        int r = blkid_do_safeprobe(pr);
        if (r == 0 && (blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL) == 0 ||
                       blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0))
            dyn_inventory_clean(buf, cap, v);
        else if (r == -2)
            dyn_inventory_clean(buf, cap, "ambivalent");
        ok = r >= 0 || r == -2;
    }
    blkid_free_probe(pr);
    /* The probe read through the page cache: not left there for the test. */
    dyn_os_drop_cache(fd);
    return ok;
}

static void inventory_block(const char *path, const struct stat *st, struct proto_target_info *ti,
                            struct dyn_inv_strings *s)
{
    dev_t dev = st->st_rdev;
    char line[16];
    int fd;

    ti->kind = "block";
    if (dev_name(dev, s->device, sizeof(s->device)))
        ti->device = s->device;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
        int lbs = 0;
        unsigned int pbs = 0;
        uint64_t size = 0;
        if (ioctl(fd, BLKGETSIZE64, &size) == 0)
            ti->size = size;
        if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs >= 512 && lbs <= 65536)
            ti->logical_block_size = (uint32_t)lbs;
        if (ioctl(fd, BLKPBSZGET, &pbs) == 0 && pbs >= 512 && pbs <= 65536 && !(pbs & (pbs - 1)))
            ti->physical_block_size = pbs;
        if (probe_signature(fd, s->signature, sizeof(s->signature)) && s->signature[0])
            ti->signature = s->signature;
        close(fd);
    }
    read_dev_attr(dev, "queue/rotational", line, sizeof(line));
    if (line[0])
        ti->rotational = line[0] == '1';
    read_dev_attr(dev, "device/model", s->model, sizeof(s->model));
    if (s->model[0])
        ti->model = s->model;
    if (ti->device && mounted_at(dev, s->device, s->mountpoint, sizeof(s->mountpoint)))
        ti->mountpoint = s->mountpoint;
    /* Not probed with O_EXCL: that would make a concurrent mkfs or mount
     * fail for a moment. */
    ti->in_use = ti->mountpoint || has_holders(dev) || is_swap(dev);
    ti->ram_backed = dyn_dev_ram_backed(dev);
}

/* Describes the device a file or directory lives on: its name, block sizes,
 * rotational and model, and whether the filesystem keeps it in RAM. */
static void inventory_on_fs(const char *path, const struct stat *st, struct proto_target_info *ti,
                            struct dyn_inv_strings *s)
{
    struct statfs fs;
    char line[16];
    uint32_t bs;

    if (dev_name(st->st_dev, s->device, sizeof(s->device))) {
        ti->device = s->device;
        if ((bs = block_size_attr(st->st_dev, "queue/logical_block_size")))
            ti->logical_block_size = bs;
        ti->physical_block_size = block_size_attr(st->st_dev, "queue/physical_block_size");
        read_dev_attr(st->st_dev, "queue/rotational", line, sizeof(line));
        if (line[0])
            ti->rotational = line[0] == '1';
        read_dev_attr(st->st_dev, "device/model", s->model, sizeof(s->model));
        if (s->model[0])
            ti->model = s->model;
    }
    if (statfs(path, &fs) == 0 && fs_in_ram((unsigned long)fs.f_type))
        ti->ram_backed = 1;
    else
        ti->ram_backed = ti->device ? dyn_dev_ram_backed(st->st_dev) : -1;
}

void dyn_inventory_target(const char *path, struct proto_target_info *ti, struct dyn_inv_strings *s)
{
    struct stat st;

    memset(ti, 0, sizeof(*ti));
    ti->path = path;
    ti->logical_block_size = 512;
    ti->rotational = -1;
    ti->in_use = -1;
    ti->ram_backed = -1;
    if (stat(path, &st) < 0) {
        ti->kind = "missing";
        return;
    }
    if (S_ISBLK(st.st_mode)) {
        inventory_block(path, &st, ti, s);
    } else if (S_ISREG(st.st_mode)) {
        ti->kind = "file";
        ti->size = (uint64_t)st.st_size;
        inventory_on_fs(path, &st, ti, s);
    } else if (S_ISDIR(st.st_mode)) {
        ti->kind = "directory";
        inventory_on_fs(path, &st, ti, s);
    } else {
        ti->kind = "other";
    }
}

void dyn_inventory_workdir(const char *path, struct proto_workdir_info *wi,
                           struct dyn_inv_strings *s)
{
    char probe[PATH_MAX];
    struct statvfs vfs;
    struct statfs fs;
    struct stat st;

    memset(wi, 0, sizeof(*wi));
    wi->ram_backed = -1;
    if (!realpath(path, probe))
        snprintf(probe, sizeof(probe), "%s", path);
    /* Probed as it is; sent escaped (the hello's text policy). */
    dyn_inventory_clean(s->path, sizeof(s->path), probe);
    wi->path = s->path;
    /* Not created yet: describe the filesystem it will be created on. */
    while (stat(probe, &st) < 0) {
        char *slash = strrchr(probe, '/');
        if (!slash || !strcmp(probe, "/"))
            return;
        slash[slash == probe] = '\0'; /* "/a" becomes "/", "/a/b" becomes "/a" */
    }
    if (statvfs(probe, &vfs) == 0) {
        wi->size = (uint64_t)vfs.f_blocks * vfs.f_frsize;
        wi->free = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    }
    if (statfs(probe, &fs) == 0) {
        const char *name = dyn_fstype_name((unsigned long)fs.f_type);
        if (name)
            dyn_inventory_clean(s->fstype, sizeof(s->fstype), name);
        else
            snprintf(s->fstype, sizeof(s->fstype), "0x%lx",
                     (unsigned long)fs.f_type & 0xffffffffUL);
        wi->fstype = s->fstype;
        if (fs_in_ram((unsigned long)fs.f_type))
            wi->ram_backed = 1;
    }
    if (dev_name(st.st_dev, s->device, sizeof(s->device)))
        wi->device = s->device;
    if (wi->ram_backed < 0)
        wi->ram_backed = wi->device ? dyn_dev_ram_backed(st.st_dev) : -1;
}

int dyn_inventory_place(int fd, const struct stat *st, char *device, size_t cap, char *fstype,
                        size_t fcap)
{
    struct statfs fs;
    int ram = -1;

    device[0] = fstype[0] = '\0';
    if (S_ISBLK(st->st_mode)) {
        dev_name(st->st_rdev, device, cap);
        return dyn_dev_ram_backed(st->st_rdev);
    }
    if (fstatfs(fd, &fs) == 0) {
        const char *name = dyn_fstype_name((unsigned long)fs.f_type);
        if (name)
            dyn_inventory_clean(fstype, fcap, name);
        else
            snprintf(fstype, fcap, "0x%lx", (unsigned long)fs.f_type & 0xffffffffUL);
        if (fs_in_ram((unsigned long)fs.f_type))
            ram = 1;
    }
    if (dev_name(st->st_dev, device, cap) && ram < 0)
        ram = dyn_dev_ram_backed(st->st_dev);
    return ram;
}
