/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/target.c - test files made in the workdir, and targets opened for a
 * test through the agent's scope (dynamo/scope.h), checked and kept open. */
#include "dynamo/target.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/log.h"
#include "dynamo/clean.h"
#include "dynamo/devguard.h"
#include "dynamo/gen.h"
#include "dynamo/genmap.h"
#include "dynamo/os/os.h"
#include "dynamo/scope.h"

#define PREP_CHUNK (1u << 20)

static bool path_has_dotdot(const char *p)
{
    const char *s = p;
    while ((s = strstr(s, "..")) != NULL) {
        bool at_start = s == p || s[-1] == '/';
        bool at_end = s[2] == '\0' || s[2] == '/';
        if (at_start && at_end)
            return true;
        s += 2;
    }
    return false;
}

int dyn_target_resolve(const struct iof_target_cfg *cfg, const char *workdir, char *out,
                       struct iof_diag *diag)
{
    int n;

    if (cfg->path[0] == '/') {
        n = snprintf(out, IOF_PATH_MAX, "%s", cfg->path);
    } else {
        if (path_has_dotdot(cfg->path))
            return iof_diag_set(diag, IOF_EDENIED,
                                "target '%s': '..' is not allowed in a test-file path", cfg->path);
        n = snprintf(out, IOF_PATH_MAX, "%s/%s", workdir ? workdir : ".", cfg->path);
    }
    if (n < 0 || n >= IOF_PATH_MAX)
        return iof_diag_set(diag, -ENAMETOOLONG, "target '%s': path too long", cfg->path);
    return 0;
}

static void fill_pattern(uint8_t *buf, size_t len, enum iof_pattern pattern, struct dyn_rng *rng)
{
    if (pattern == IOF_PATTERN_REPEAT) {
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)(i & 0xff);
        return;
    }
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t v = dyn_rng_next(rng);
        memcpy(buf + i, &v, 8);
    }
}

/* Removes the test file `base` in dirfd if it is still the object in *st
 * (a name swapped meanwhile is left alone). */
static void unlink_if_same(int dirfd, const char *base, const struct stat *st)
{
    struct stat now;
    if (fstatat(dirfd, base, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st->st_dev &&
        now.st_ino == st->st_ino)
        unlinkat(dirfd, base, 0);
}

int dyn_target_prepare(const struct iof_target_cfg *cfg, struct dyn_scope *scope,
                       enum iof_pattern pattern, dyn_progress_fn progress, void *arg,
                       struct iof_diag *diag)
{
    return dyn_target_prepare_noted(cfg, scope, pattern, progress, arg, NULL, diag);
}

int dyn_target_prepare_noted(const struct iof_target_cfg *cfg, struct dyn_scope *scope,
                             enum iof_pattern pattern, dyn_progress_fn progress, void *arg,
                             struct dyn_created *created, struct iof_diag *diag)
{
    char path[IOF_PATH_MAX];
    const char *base;
    struct stat st;
    struct statvfs vfs;
    struct dyn_rng rng;
    uint8_t *buf = NULL;
    uint64_t done = 0, have = 0;
    int dirfd, fd, r;

    if (created)
        created->path[0] = '\0';
    r = dyn_scope_check_name(cfg->path, diag);
    if (!r)
        r = dyn_target_resolve(cfg, dyn_scope_workdir(scope), path, diag);
    if (r)
        return r;
    if (cfg->path[0] == '/') {
        /* Must exist and be allowed; nothing is written to it here. */
        fd = dyn_scope_open(scope, cfg->path, O_PATH, NULL, diag);
        if (fd < 0)
            return fd;
        close(fd);
        return 0;
    }
    if (cfg->size == 0)
        return iof_diag_set(diag, IOF_ETARGET, "target '%s': a test file needs a size", cfg->path);
    /* Everything below goes through the directory's descriptor, resolved
     * once beneath the workdir: no name is looked up twice. */
    dirfd = dyn_scope_open_parent(scope, cfg->path, &base, diag);
    if (dirfd < 0)
        return dirfd;
    fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) {
        r = errno == ELOOP
                ? iof_diag_set(diag, IOF_EDENIED,
                               "target '%s': a symbolic link on the way; links are "
                               "not followed in the workdir",
                               cfg->path)
                : iof_diag_set(diag, -errno, "target '%s': %s", cfg->path, strerror(errno));
        close(dirfd);
        return r;
    }
    if (fd >= 0) {
        /* Judged on the opened file before it is reused or replaced: a
         * regular file of the agent's user with one name (dynamo/os/os.h). */
        bool reuse;
        r = dyn_os_file_check(fd, "target", cfg->path, diag);
        if (!r && fstat(fd, &st) < 0)
            r = iof_diag_set(diag, -errno, "target '%s': %s", cfg->path, strerror(errno));
        /* Reuse only a file that holds real blocks: a sparse one would read
         * zeros fast. What read it through the page cache since it was
         * filled (a copy, a backup) is not kept for the test either. */
        reuse =
            !r && (uint64_t)st.st_size == cfg->size && (uint64_t)st.st_blocks * 512 >= cfg->size;
        if (reuse)
            dyn_os_drop_cache(fd);
        close(fd);
        if (r || reuse) {
            close(dirfd);
            return r;
        }
        have = (uint64_t)st.st_blocks * 512;
    }
    if (fstatvfs(dirfd, &vfs) == 0) {
        uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
        if (avail + have < cfg->size) {
            close(dirfd);
            return iof_diag_set(diag, -ENOSPC,
                                "target '%s': needs %" PRIu64 " bytes, only %" PRIu64
                                " free in '%s'",
                                path, cfg->size, avail + have, dyn_scope_workdir(scope));
        }
    }
    if (have || fd >= 0)
        unlink_if_same(dirfd, base, &st);
    /* A new file, never an existing name or a link: O_EXCL | O_NOFOLLOW. */
    fd = openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || fstat(fd, &st) < 0) {
        r = iof_diag_set(diag, -errno, "target '%s': cannot create: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        close(dirfd);
        return r;
    }
    /* What the system made is judged before it is filled (Windows: the DACL
     * it inherits from the workdir). */
    r = dyn_os_file_check(fd, "target", cfg->path, diag);
    if (r) {
        close(fd);
        unlink_if_same(dirfd, base, &st);
        close(dirfd);
        return r;
    }
    buf = malloc(PREP_CHUNK);
    if (!buf) {
        close(fd);
        unlink_if_same(dirfd, base, &st);
        close(dirfd);
        return iof_diag_set(diag, -ENOMEM, "target '%s': out of memory", path);
    }
    dyn_rng_seed(&rng, 0x10f1ee7);
    fill_pattern(buf, PREP_CHUNK, pattern, &rng);
    r = 0;
    while (done < cfg->size) {
        size_t n = cfg->size - done < PREP_CHUNK ? (size_t)(cfg->size - done) : PREP_CHUNK;
        ssize_t w;
        if (pattern == IOF_PATTERN_RANDOM)
            fill_pattern(buf, n, pattern, &rng);
        w = pwrite(fd, buf, n, (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            r = iof_diag_set(diag, -e,
                             "target '%s': write failed at %" PRIu64 " of %" PRIu64 " bytes: %s",
                             path, done, cfg->size, strerror(e));
            break;
        }
        done += (uint64_t)w;
        if (progress && progress(arg, path, done, cfg->size)) {
            r = iof_diag_set(diag, -ECANCELED,
                             "target '%s': preparation cancelled at %" PRIu64 " of %" PRIu64
                             " bytes",
                             path, done, cfg->size);
            break;
        }
    }
    free(buf);
    if (!r) {
        int e = fsync(fd) < 0 ? errno : 0;
        if (!e)
            dyn_os_drop_cache(fd); /* the fill's pages, now clean: not kept for the test */
        if (close(fd) < 0 && !e)
            e = errno;
        fd = -1;
        /* The data never reached the storage (thin provisioning, a failing
         * device): remove the file, or the next run would reuse it as if it
         * were prepared. */
        if (e)
            r = iof_diag_set(diag, -e, "target '%s': fsync failed: %s", path, strerror(e));
    }
    if (fd >= 0)
        close(fd);
    if (r)
        unlink_if_same(dirfd, base, &st);
    if (!r) {
        /* Made here: noted in the ledger, so iofleet clean finds it; the
         * verify state of an earlier file of this name (its inode number
         * may come back) says nothing of this one. */
        struct dyn_created f = {{0}};
        struct iof_diag nd = {{0}};
        int e = dyn_clean_identify(dirfd, base, &f);
        if (dyn_genmap_forget(scope, cfg->path, &nd))
            IOF_WARN("%s", nd.msg);
        snprintf(f.path, sizeof(f.path), "%s", cfg->path);
        if (e || f.dev != (uint64_t)st.st_dev || f.ino != (uint64_t)st.st_ino) {
            IOF_WARN("test file '%s': changed as it was made: it will not be cleaned up",
                     cfg->path);
        } else {
            if (dyn_clean_note(scope, &f, &nd))
                IOF_WARN("%s: iofleet clean will not know this file", nd.msg);
            if (created)
                *created = f;
        }
    }
    close(dirfd);
    return r;
}

/* Smallest size among 512..4096 that an O_DIRECT read accepts: the alignment
 * the file's filesystem and device need. */
static uint64_t probe_dio_align(int fd, uint64_t size)
{
    void *buf;
    uint64_t a = 4096;

    if (posix_memalign(&buf, 4096, 4096))
        return 4096;
    for (uint64_t s = 512; s <= 4096; s *= 2) {
        if (s > size)
            break;
        if (pread(fd, buf, s, 0) == (ssize_t)s) {
            a = s;
            break;
        }
    }
    free(buf);
    return a;
}

int dyn_target_open(const struct iof_target_cfg *cfg, struct dyn_scope *scope, bool direct,
                    bool write, bool touch, bool destructive, struct dyn_target **out,
                    struct iof_diag *diag)
{
    struct dyn_target *t = calloc(1, sizeof(*t));
    struct stat st;
    int r, flags;

    if (!t)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    t->fd = -1;
    r = dyn_target_resolve(cfg, dyn_scope_workdir(scope), t->path, diag);
    if (r)
        goto fail;
    if (!touch) {
        t->size = cfg->size;
        if (!t->size && !cfg->range_offset_pct && !cfg->range_size_pct)
            t->size = cfg->range_offset + cfg->range_size;
        t->lbs = 512;
        if (t->size == 0) {
            r = iof_diag_set(diag, IOF_ETARGET,
                             "target '%s': the null engine needs a size or range", cfg->path);
            goto fail;
        }
    } else {
        /* Opened once, through the scope, and kept for the whole test:
         * the workers use this descriptor, nothing reopens the name. */
        flags = (write ? O_RDWR : O_RDONLY) | (direct ? O_DIRECT : 0);
        t->fd = dyn_scope_open(scope, cfg->path, flags, &st, diag);
        if (t->fd < 0) {
            r = t->fd;
            goto fail;
        }
        if (S_ISBLK(st.st_mode)) {
            t->blockdev = true;
            if (write) {
                r = dyn_scope_hold(scope, cfg->path, st.st_rdev, destructive, diag);
                if (r)
                    goto fail;
                t->held = scope;
                t->rdev = st.st_rdev;
            }
            r = dyn_os_blockdev_geometry(t->fd, &t->size, &t->lbs);
            if (r) {
                iof_diag_set(diag, r, "target '%s': cannot read device geometry: %s", t->path,
                             strerror(-r));
                goto fail;
            }
            t->dev_size = t->size;
        } else if (S_ISREG(st.st_mode)) {
            t->size = (uint64_t)st.st_size;
            t->lbs = direct ? probe_dio_align(t->fd, t->size) : 512;
        } else {
            r = iof_diag_set(diag, IOF_ETARGET, "target '%s': not a regular file or block device",
                             t->path);
            goto fail;
        }
        if (t->lbs < 512 && direct)
            t->lbs = 512;
    }
    if (touch && cfg->size) {
        /* A size on an existing file or device limits the part used, as
         * Iometer's "Maximum Disk Size" does. */
        if (cfg->size > t->size) {
            r = iof_diag_set(diag, IOF_ETARGET,
                             "target '%s': size %" PRIu64 " exceeds its actual size of %" PRIu64
                             " bytes",
                             t->path, cfg->size, t->size);
            goto fail;
        }
        t->size = cfg->size;
    }
    /* Percentages resolve here, where the size is known: rounded down to
     * the logical block size under O_DIRECT, to 512 bytes otherwise. */
    if (iof_target_range(cfg, t->size, direct && t->lbs > 512 ? t->lbs : 512, &t->start, &t->end)) {
        char o[32], n[32];
        iof_target_range_label(cfg->range_offset, cfg->range_offset_pct, o, sizeof(o));
        iof_target_range_label(cfg->range_size, cfg->range_size_pct, n, sizeof(n));
        r = iof_diag_set(diag, IOF_ETARGET,
                         "target '%s': range %s+%s does not fit its size of %" PRIu64 " bytes",
                         t->path, o, n, t->size);
        goto fail;
    }
    if (direct && (t->start % t->lbs)) {
        r = iof_diag_set(diag, IOF_EALIGN,
                         "target '%s': range offset %" PRIu64
                         " is not a multiple of the logical block size %" PRIu64
                         " (required for O_DIRECT)",
                         t->path, t->start, t->lbs);
        goto fail;
    }
    *out = t;
    return 0;
fail:
    dyn_target_close(t);
    return r;
}

bool dyn_target_skip_marker(struct dyn_target *t, uint64_t unit)
{
    uint64_t blk = t->lbs > DYN_MARK_SIZE ? t->lbs : DYN_MARK_SIZE, tail;
    bool changed = false;

    if (!t->blockdev || t->dev_size < 2 * blk)
        return false;
    if (unit < blk)
        unit = blk;
    if (unit % blk)
        unit += blk - unit % blk;
    if (t->start < DYN_MARK_SIZE) {
        t->start += unit;
        changed = true;
    }
    tail = t->dev_size - blk;
    if (t->end > tail) {
        t->end = tail;
        changed = true;
    }
    if (t->end < t->start)
        t->end = t->start; /* nothing left: the spec's check says so */
    return changed;
}

void dyn_target_close(struct dyn_target *t)
{
    if (!t)
        return;
    if (t->fd >= 0)
        close(t->fd);
    if (t->held)
        dyn_scope_release(t->held, t->rdev, t->wrote);
    free(t);
}
