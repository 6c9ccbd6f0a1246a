/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/linux/devguard.c - the signature and data checks a block device passes
 * before a write test without --allow-destructive, and the marker a write
 * test leaves behind (the rules and the marker layout: dynamo/devguard.h). */
#include "dynamo/devguard.h"
#include "dynamo/os/os.h"

#include <blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Where a partition (or a volume placed by hand) may start, beyond 0: the
 * DOS cylinder alignment (63 sectors), then each power of two from 1 MiB
 * to the end; with `dense`, every MiB below DYN_GUARD_SCAN_BYTES (where
 * partitioning tools put the first partitions: an EFI or boot partition,
 * then the next one) before the powers of two go on. Returns the next start
 * after `off`, or 0 when none is below `size`. */
static uint64_t next_start(uint64_t off, uint64_t size, bool dense)
{
    uint64_t next;

    if (off == 0)
        next = 63 * 512;
    else if (off < (1u << 20))
        next = 1u << 20;
    else if (dense && off < DYN_GUARD_SCAN_BYTES)
        next = off + (1u << 20);
    else
        next = off * 2;
    return next < size ? next : 0;
}

/* What a refusal tells the user to do: a standalone agent's operator restarts
 * it with the flag; a local run's user passes it to `iofleet run`. */
static const char *g_remedy = "start the agent with --allow-destructive";

void dyn_devguard_set_remedy(const char *remedy)
{
    g_remedy = remedy ? remedy : "start the agent with --allow-destructive";
}

static int read_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        done += (size_t)r;
    }
    return 0;
}

int dyn_devguard_ends(int fd, uint64_t size, struct dyn_dev_ends *ends, struct iof_diag *diag)
{
    size_t n = size < DYN_GUARD_END_BYTES ? (size_t)size : DYN_GUARD_END_BYTES;
    uint8_t *head = malloc(n ? n : 1), *tail = malloc(n ? n : 1);
    int r;

    memset(ends, 0, sizeof(*ends));
    if (!head || !tail) {
        free(head);
        free(tail);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    /* What the workers wrote with O_DIRECT is on the device; drop whatever
     * this descriptor's page cache still holds from before, and what these
     * reads put there (see dyn_os_drop_cache). */
    dyn_os_drop_cache(fd);
    r = read_full(fd, head, n, 0);
    if (!r)
        r = read_full(fd, tail, n, size - n);
    dyn_os_drop_cache(fd);
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

/* First signature libblkid finds in the device from `off` on (the probe is
 * on the open descriptor, never a name): every superblock type it knows
 * (filesystems, swap, LVM, md and other RAID, bcache, LUKS...), even with a
 * bad checksum, and at 0 also partition tables (GPT forced: found without a
 * protective MBR, and from the backup header alone). Returns 1 with *what
 * and a copy of the type in `type`, 0 for none, -2 for ambivalent results,
 * -1 when probing failed. */
static int probe_at(blkid_probe pr, int fd, uint64_t off, uint64_t len, const char **what,
                    char *type, size_t cap)
{
    const char *v = NULL;
    int rc;

    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)off, (blkid_loff_t)len))
        return -1;
    blkid_probe_enable_partitions(pr, off == 0);
    if (off == 0)
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_FORCE_GPT);
    blkid_probe_enable_superblocks(pr, 1);
    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
                                              BLKID_SUBLKS_BADCSUM);
    rc = blkid_do_safeprobe(pr);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    if (blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL) == 0)
        *what = "partition table";
    else if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0)
        *what = "signature";
    else
        return 0;
    snprintf(type, cap, "%s", v);
    return 1;
}

/* Releases the probe and the area buffer and returns r. */
static int check_done(blkid_probe pr, uint8_t *area, int r)
{
    if (pr)
        blkid_free_probe(pr);
    free(area);
    return r;
}

static int guard_check(int fd, const char *path, uint64_t size, bool destructive,
                       struct dyn_dev_ends *ends, struct iof_diag *diag)
{
    blkid_probe pr;
    uint8_t *area;
    uint64_t data_at = 0;
    char type[64];
    const char *what = NULL;
    int r;

    r = dyn_devguard_ends(fd, size, ends, diag);
    if (r || destructive)
        return r;
    pr = blkid_new_probe();
    area = malloc(DYN_GUARD_AREA_BYTES);
    if (!pr || !area)
        return check_done(pr, area,
                          iof_diag_set(diag, IOF_EDENIED,
                                       "target '%s': refusing to write: cannot probe it for "
                                       "partition tables or filesystems",
                                       path));
    /* The whole device from 0: partition tables, and the superblocks
     * libblkid looks for relative to either end (md 0.90/1.0 and other
     * RAID metadata at the end; LVM, swap, bcache, filesystems at the
     * start). */
    r = probe_at(pr, fd, 0, size, &what, type, sizeof(type));
    if (r == 1)
        return check_done(pr, area,
                          iof_diag_set(diag, IOF_EDENIED,
                                       "target '%s': refusing to write: it holds a %s (%s); %s "
                                       "to overwrite it",
                                       path, what, type, g_remedy));
    /* Other places a partition may start. On a device whose ends are zero,
     * every MiB of the first GiB: the area there must be zero, as a blank
     * device's is, and what is not is data, named by libblkid when it knows
     * the signature. Elsewhere (a marked device is full of iofleet's own
     * data; an unmarked one with data at its ends is refused anyway) only
     * libblkid's verdict counts, at the powers of two, which keeps the cost
     * of each test's start low. */
    for (uint64_t off = next_start(0, size, ends->zero); r == 0 && off;
         off = next_start(off, size, ends->zero)) {
        size_t n = size - off < DYN_GUARD_AREA_BYTES ? (size_t)(size - off) : DYN_GUARD_AREA_BYTES;
        if (ends->zero) {
            int rr = read_full(fd, area, n, off);
            if (rr)
                return check_done(pr, area,
                                  iof_diag_set(diag, rr,
                                               "target '%s': cannot read byte %" PRIu64 ": %s",
                                               path, off, strerror(-rr)));
            if (dyn_guard_all_zero(area, n))
                continue;
        }
        r = probe_at(pr, fd, off,
                     size - off < DYN_GUARD_PROBE_BYTES ? size - off : DYN_GUARD_PROBE_BYTES, &what,
                     type, sizeof(type));
        if (r == 1)
            return check_done(pr, area,
                              iof_diag_set(diag, IOF_EDENIED,
                                           "target '%s': refusing to write: it holds a %s (%s) "
                                           "at byte %" PRIu64 " (a partition whose table is "
                                           "gone); %s to overwrite it",
                                           path, what, type, off, g_remedy));
        if (r == 0 && ends->zero && !data_at)
            data_at = off;
    }
    if (r < 0)
        return check_done(pr, area,
                          iof_diag_set(diag, IOF_EDENIED,
                                       "target '%s': refusing to write: %s; %s to overwrite it",
                                       path,
                                       r == -2 ? "ambivalent signatures found"
                                               : "probing for partition tables and filesystems "
                                                 "failed",
                                       g_remedy));
    if (!ends->zero && !ends->marked)
        r = iof_diag_set(diag, IOF_EDENIED,
                         "target '%s': refusing to write: its first or last MiB holds data "
                         "and no iofleet marker (something else wrote it); %s to overwrite it",
                         path, g_remedy);
    else if (data_at)
        r = iof_diag_set(diag, IOF_EDENIED,
                         "target '%s': refusing to write: it holds data at byte %" PRIu64
                         " (where a partition may start) and no iofleet marker; %s to "
                         "overwrite it",
                         path, data_at, g_remedy);
    return check_done(pr, area, r);
}

int dyn_devguard_check(int fd, const char *path, uint64_t size, bool destructive,
                       struct dyn_dev_ends *ends, struct iof_diag *diag)
{
    int r = guard_check(fd, path, size, destructive, ends, diag);

    dyn_os_drop_cache(fd);
    return r;
}

int dyn_devguard_mark(int fd, uint64_t size)
{
    uint8_t m[DYN_MARK_SIZE] = {0};
    struct timespec ts;
    uint64_t id = 0;
    char host[65] = {0};

    if (size < 2 * DYN_MARK_SIZE)
        return -EINVAL;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
        id = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    gethostname(host, sizeof(host) - 1);
    dyn_mark_record(m, size, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, id, host);
    if (pwrite(fd, m, sizeof(m), 0) != (ssize_t)sizeof(m) ||
        pwrite(fd, m, sizeof(m), (off_t)(size - sizeof(m))) != (ssize_t)sizeof(m) || fsync(fd))
        return -errno;
    dyn_os_drop_cache(fd);
    return 0;
}
