/* dynamo/devguard.c - the signature and data checks a block device passes
 * before a write test without --allow-destructive, and the marker a write
 * test leaves behind (the rules and the marker layout: dynamo/devguard.h). */
#include "dynamo/devguard.h"

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

/* Where a partition's filesystem usually starts: DOS cylinder alignment (63
 * sectors) and the MiB alignments of current partitioning tools. A signature
 * there survives a wiped partition table. */
static const uint64_t g_part_starts[] = {63 * 512, 1u << 20, 2u << 20,
                                         4u << 20, 8u << 20, 16u << 20};

/* What a refusal tells the user to do: a standalone agent's operator restarts
 * it with the flag; a local run's user passes it to `iofleet run`. */
static const char *g_remedy = "start the agent with --allow-destructive";

void dyn_devguard_set_remedy(const char *remedy)
{
    g_remedy = remedy ? remedy : "start the agent with --allow-destructive";
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* A valid marker record for a device of `size` bytes. */
static bool mark_valid(const uint8_t *m, uint64_t size)
{
    return !memcmp(m, DYN_MARK_MAGIC, 16) && m[16] == 1 && !m[17] && !m[18] && !m[19] &&
           get64(m + 24) == size && get64(m + 496) == fnv1a(0xcbf29ce484222325ull, m, 496) &&
           all_zero(m + 504, 8);
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
     * this descriptor's page cache still holds from before. */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    r = read_full(fd, head, n, 0);
    if (!r)
        r = read_full(fd, tail, n, size - n);
    if (r) {
        free(head);
        free(tail);
        return iof_diag_set(diag, r, "cannot read the ends of the device: %s", strerror(-r));
    }
    ends->hash = fnv1a(fnv1a(0xcbf29ce484222325ull, head, n), tail, n);
    ends->zero = all_zero(head, n) && all_zero(tail, n);
    ends->marked = n >= DYN_MARK_SIZE && mark_valid(head, size) &&
                   !memcmp(head, tail + n - DYN_MARK_SIZE, DYN_MARK_SIZE);
    free(head);
    free(tail);
    return 0;
}

/* First signature libblkid finds in the device from `off` on: partition
 * tables only at 0 (GPT forced: found without a protective MBR, and from
 * the backup header alone). Returns 1 with *what and a copy of the type in
 * `type`, 0 for none, -2 for ambivalent results, -1 when probing failed. */
static int probe_at(blkid_probe pr, int fd, uint64_t off, uint64_t size, const char **what,
                    char *type, size_t cap)
{
    const char *v = NULL;
    int rc;

    if (blkid_probe_set_device(pr, fd, (blkid_loff_t)off, (blkid_loff_t)(size - off)))
        return -1;
    blkid_probe_enable_partitions(pr, off == 0);
    if (off == 0)
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_FORCE_GPT);
    blkid_probe_enable_superblocks(pr, 1);
    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
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

int dyn_devguard_check(int fd, const char *path, uint64_t size, bool destructive,
                       struct dyn_dev_ends *ends, struct iof_diag *diag)
{
    blkid_probe pr;
    char type[64];
    const char *what = NULL;
    int r;

    r = dyn_devguard_ends(fd, size, ends, diag);
    if (r || destructive)
        return r;
    pr = blkid_new_probe();
    if (!pr)
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': refusing to write: cannot probe it for partition "
                            "tables or filesystems",
                            path);
    for (size_t i = 0; i <= sizeof(g_part_starts) / sizeof(g_part_starts[0]); i++) {
        uint64_t off = i ? g_part_starts[i - 1] : 0;
        if (off >= size)
            break;
        r = probe_at(pr, fd, off, size, &what, type, sizeof(type));
        if (r == 1) {
            blkid_free_probe(pr);
            if (off == 0)
                return iof_diag_set(diag, IOF_EDENIED,
                                    "target '%s': refusing to write: it holds a %s (%s); %s to "
                                    "overwrite it",
                                    path, what, type, g_remedy);
            return iof_diag_set(diag, IOF_EDENIED,
                                "target '%s': refusing to write: it holds a %s (%s) at byte "
                                "%" PRIu64 " (a partition whose table is gone); %s to overwrite it",
                                path, what, type, off, g_remedy);
        }
        if (r < 0) {
            blkid_free_probe(pr);
            return iof_diag_set(diag, IOF_EDENIED,
                                "target '%s': refusing to write: %s; %s to overwrite it", path,
                                r == -2 ? "ambivalent signatures found"
                                        : "probing for partition tables and filesystems failed",
                                g_remedy);
        }
    }
    blkid_free_probe(pr);
    if (!ends->zero && !ends->marked)
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': refusing to write: its first or last MiB holds data "
                            "and no iofleet marker (something else wrote it); %s to overwrite it",
                            path, g_remedy);
    return 0;
}

int dyn_devguard_mark(int fd, uint64_t size)
{
    uint8_t m[DYN_MARK_SIZE] = {0};
    struct timespec ts;
    uint64_t id = 0;
    char host[65] = {0};

    if (size < 2 * DYN_MARK_SIZE)
        return -EINVAL;
    memcpy(m, DYN_MARK_MAGIC, 16);
    m[16] = 1;
    put64(m + 24, size);
    clock_gettime(CLOCK_REALTIME, &ts);
    put64(m + 32, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
        id = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    put64(m + 40, id);
    gethostname(host, sizeof(host) - 1);
    memcpy(m + 48, host, strlen(host));
    put64(m + 496, fnv1a(0xcbf29ce484222325ull, m, 496));
    if (pwrite(fd, m, sizeof(m), 0) != (ssize_t)sizeof(m) ||
        pwrite(fd, m, sizeof(m), (off_t)(size - sizeof(m))) != (ssize_t)sizeof(m) || fsync(fd))
        return -errno;
    return 0;
}
