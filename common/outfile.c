/* SPDX-License-Identifier: Apache-2.0 */
/* common/outfile.c - writing a file a user named: a new file under a
 * temporary name (O_EXCL|O_NOFOLLOW) renamed over the name, so no link is
 * ever written through and no half file is ever seen (common/outfile.h). */
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"

/* The longest part of the name the temporary name keeps (NAME_MAX is 255:
 * room for ".tmp-XXXXXX"). */
#define OUTFILE_BASE_MAX 200

/* The descriptor a name stands for without being a file: "-" and
 * "/dev/stdout" are standard output, "/dev/stderr" standard error; else -1. */
static int outfile_std_fd(const char *path)
{
    if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
        return STDOUT_FILENO;
    if (!strcmp(path, "/dev/stderr"))
        return STDERR_FILENO;
    return -1;
}

static const char *outfile_kind(mode_t m)
{
    if (S_ISLNK(m))
        return "a symbolic link";
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    return "a file";
}

/* What is at path, judged by st (lstat). 0 when it may be written. */
static int outfile_judge(const char *path, const struct stat *st, unsigned flags,
                         struct iof_diag *diag)
{
    mode_t m = st->st_mode;

    if (S_ISDIR(m) || S_ISBLK(m) || S_ISSOCK(m))
        return iof_diag_set(diag, S_ISDIR(m) ? -EISDIR : -EINVAL, "%s: is %s, not a file", path,
                            outfile_kind(m));
    if ((flags & IOF_OUTFILE_APPEND) && S_ISLNK(m))
        return iof_diag_set(diag, -ELOOP,
                            "%s: is a symbolic link, which is never followed; appending needs the "
                            "file itself",
                            path);
    if ((flags & IOF_OUTFILE_APPEND) && S_ISREG(m) && st->st_nlink > 1)
        return iof_diag_set(diag, -EMLINK,
                            "%s: has %ju hard links; appending would change the file under its "
                            "other names too",
                            path, (uintmax_t)st->st_nlink);
    if ((flags & IOF_OUTFILE_APPEND) && S_ISREG(m))
        return 0;
    if (S_ISFIFO(m) || S_ISCHR(m)) {
        if (flags & IOF_OUTFILE_SEEKABLE)
            return iof_diag_set(diag, -EINVAL,
                                "%s: is %s; this file is rewritten in place, so it must be a "
                                "regular file",
                                path, outfile_kind(m));
        return 0;
    }
    if (!(flags & IOF_OUTFILE_FORCE) && S_ISLNK(m))
        return iof_diag_set(diag, -EEXIST,
                            "%s: exists as a symbolic link, which is never followed; give --force "
                            "to replace the link, or another name",
                            path);
    if (!(flags & IOF_OUTFILE_FORCE))
        return iof_diag_set(diag, -EEXIST,
                            "%s: the file exists; give --force to replace it, or another name",
                            path);
    return 0;
}

int iof_outfile_check(const char *path, unsigned flags, struct iof_diag *diag)
{
    struct stat st;

    if (!path || !*path)
        return iof_diag_set(diag, -EINVAL, "empty file name");
    if (outfile_std_fd(path) >= 0)
        return (flags & IOF_OUTFILE_SEEKABLE)
                   ? iof_diag_set(diag, -EINVAL,
                                  "%s: this file is rewritten in place, so it must be a regular "
                                  "file, not standard output",
                                  path)
                   : 0;
    if (path[strlen(path) - 1] == '/')
        return iof_diag_set(diag, -EISDIR, "%s: names a directory, not a file", path);
    if (lstat(path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        return iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    }
    return outfile_judge(path, &st, flags, diag);
}

/* "DIR/" + at most OUTFILE_BASE_MAX bytes of the last component + ".tmp-",
 * and room for the suffix; NULL on no memory. */
static char *outfile_tmp_prefix(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash + 1 - path) : 0;
    size_t baselen = strlen(path) - dirlen;
    char *t;

    if (baselen > OUTFILE_BASE_MAX)
        baselen = OUTFILE_BASE_MAX;
    t = malloc(dirlen + baselen + sizeof(".tmp-XXXXXX"));
    if (!t)
        return NULL;
    memcpy(t, path, dirlen + baselen);
    strcpy(t + dirlen + baselen, ".tmp-");
    return t;
}

/* Creates the temporary file beside path: a fresh name each try, created
 * only if nothing (not even a dangling link) has it. */
static int outfile_create_tmp(struct iof_outfile *o, mode_t mode, struct iof_diag *diag)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char *t = outfile_tmp_prefix(o->path);
    size_t at;

    if (!t)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    at = strlen(t);
    for (int tries = 0; tries < 100; tries++) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
            r = iof_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries;
        for (int i = 0; i < 6; i++, r /= sizeof(digits) - 1)
            t[at + i] = digits[r % (sizeof(digits) - 1)];
        t[at + 6] = '\0';
        o->fd = open(t, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                     mode ? mode : 0666);
        if (o->fd >= 0) {
            o->tmp = t;
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    {
        int e = errno;
        free(t);
        return iof_diag_set(diag, -e, "%s: cannot create: %s", o->path, strerror(e));
    }
}

/* Opens a FIFO or character device found at the name (st: its lstat) as it
 * is: no link followed, no file created, the same object as judged. */
static int outfile_open_special(struct iof_outfile *o, const struct stat *st, struct iof_diag *diag)
{
    struct stat got;

    o->fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (o->fd < 0)
        return iof_diag_set(diag, -errno, "%s: cannot open: %s", o->path, strerror(errno));
    if (fstat(o->fd, &got) < 0 || got.st_dev != st->st_dev || got.st_ino != st->st_ino ||
        (got.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
        return iof_diag_set(diag, -EAGAIN, "%s: replaced while being opened", o->path);
    o->special = true;
    return 0;
}

/* IOF_OUTFILE_APPEND: opens the regular file at the name for appending, or
 * creates it (O_EXCL first, so o->created is known), never through a link;
 * refuses what outfile_judge() refuses, judged on what was opened, and a
 * file another run holds locked. */
static int outfile_open_append(struct iof_outfile *o, mode_t mode, struct iof_diag *diag)
{
    const int base = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
    struct stat st;

    o->fd = open(o->path, base | O_CREAT | O_EXCL, mode ? mode : 0666);
    if (o->fd >= 0)
        o->created = true;
    else if (errno == EEXIST)
        o->fd = open(o->path, base);
    if (o->fd < 0 && errno == ELOOP)
        return iof_diag_set(diag, -ELOOP,
                            "%s: is a symbolic link, which is never followed; appending needs the "
                            "file itself",
                            o->path);
    if (o->fd < 0)
        return iof_diag_set(diag, -errno, "%s: cannot open: %s", o->path, strerror(errno));
    if (fstat(o->fd, &st) < 0)
        return iof_diag_set(diag, -errno, "%s: %s", o->path, strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
        int r = outfile_judge(o->path, &st, o->flags, diag);
        return r ? r : iof_diag_set(diag, -EAGAIN, "%s: replaced while being opened", o->path);
    }
    if (flock(o->fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        return iof_diag_set(diag, e == EWOULDBLOCK ? -EBUSY : -e, "%s: %s", o->path,
                            e == EWOULDBLOCK ? "another run is appending to it" : strerror(e));
    }
    return 0;
}

int iof_outfile_open(struct iof_outfile *o, const char *path, mode_t mode, unsigned flags,
                     struct iof_diag *diag)
{
    struct stat st;
    int std, r;

    *o = (struct iof_outfile)IOF_OUTFILE_INIT;
    r = iof_outfile_check(path, flags, diag);
    if (r)
        return r;
    o->flags = flags;
    o->path = strdup(path);
    if (!o->path)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    std = outfile_std_fd(path);
    if (std >= 0) {
        o->fd = fcntl(std, F_DUPFD_CLOEXEC, 3);
        o->special = true;
        if (o->fd < 0)
            r = iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    } else if (lstat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        r = outfile_open_special(o, &st, diag);
    } else if (flags & IOF_OUTFILE_APPEND) {
        r = outfile_open_append(o, mode, diag);
    } else {
        r = outfile_create_tmp(o, mode, diag);
    }
    if (r)
        iof_outfile_abort(o);
    return r;
}

FILE *iof_outfile_stdio(struct iof_outfile *o)
{
    if (!o->f && o->fd >= 0) {
        o->f = fdopen(o->fd, "w");
        if (o->f)
            setvbuf(o->f, NULL, _IOFBF, 1 << 16);
    }
    return o->f;
}

/* fsync of the directory holding path, so a rename survives a crash. */
static int outfile_sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    int fd, r = 0;

    if (!dir)
        return -ENOMEM;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return -errno;
    if (fsync(fd) < 0 && errno != EINVAL)
        r = -errno;
    close(fd);
    return r;
}

/* Renames tmp to path only if path is free (not even a dangling link):
 * RENAME_NOREPLACE, or where the filesystem lacks it a hard link (which
 * fails on any name in the way) and the temporary name's removal. */
static int outfile_rename_noreplace(const char *tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -errno;
    if (link(tmp, path) < 0)
        return -errno;
    unlink(tmp);
    return 0;
}

int iof_outfile_publish(struct iof_outfile *o, struct iof_diag *diag)
{
    int r;

    if (o->fd < 0)
        return iof_diag_set(diag, -EBADF, "%s: not open", o->path ? o->path : "?");
    if (o->f && fflush(o->f) != 0)
        return iof_diag_set(diag, -errno, "%s: cannot write: %s", o->path, strerror(errno));
    if (o->special || !o->tmp)
        return 0;
    if (fsync(o->fd) < 0 && errno != EINVAL)
        return iof_diag_set(diag, -errno, "%s: cannot write: %s", o->path, strerror(errno));
    if (o->flags & IOF_OUTFILE_FORCE)
        r = rename(o->tmp, o->path) < 0 ? -errno : 0;
    else
        r = outfile_rename_noreplace(o->tmp, o->path);
    if (r == -EEXIST)
        return iof_diag_set(diag, r,
                            "%s: appeared while it was being written; give --force to replace "
                            "it (the output is in %s)",
                            o->path, o->tmp);
    if (r)
        return iof_diag_set(diag, r, "%s: cannot put in place: %s (the output is in %s)", o->path,
                            strerror(-r), o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    r = outfile_sync_dir(o->path);
    if (r)
        return iof_diag_set(diag, r, "%s: cannot sync its directory: %s", o->path, strerror(-r));
    return 0;
}

/* Closes the descriptor (through the stream when there is one). */
static int outfile_close_fd(struct iof_outfile *o)
{
    int r = 0;

    if (o->f) {
        if (fclose(o->f) != 0)
            r = -errno;
    } else if (o->fd >= 0 && close(o->fd) != 0) {
        r = -errno;
    }
    o->f = NULL;
    o->fd = -1;
    return r;
}

static void outfile_free(struct iof_outfile *o)
{
    free(o->path);
    free(o->tmp);
    *o = (struct iof_outfile)IOF_OUTFILE_INIT;
}

int iof_outfile_close(struct iof_outfile *o, bool keep_on_failure, struct iof_diag *diag)
{
    int r, c;

    if (o->fd < 0) {
        outfile_free(o);
        return 0;
    }
    r = iof_outfile_publish(o, diag);
    if (!r && o->special && o->f && fflush(o->f) != 0)
        r = iof_diag_set(diag, -errno, "%s: cannot write: %s", o->path, strerror(errno));
    c = outfile_close_fd(o);
    if (!r && c)
        r = iof_diag_set(diag, c, "%s: cannot write: %s", o->path, strerror(-c));
    if (r && o->tmp && !keep_on_failure)
        unlink(o->tmp);
    outfile_free(o);
    return r;
}

void iof_outfile_abort(struct iof_outfile *o)
{
    struct stat mine, named;

    /* A file appending made and left empty goes, if the name still holds it. */
    if (o->created && o->fd >= 0 && (!o->f || fflush(o->f) == 0) && fstat(o->fd, &mine) == 0 &&
        mine.st_size == 0 && lstat(o->path, &named) == 0 && named.st_dev == mine.st_dev &&
        named.st_ino == mine.st_ino)
        unlink(o->path);
    outfile_close_fd(o);
    if (o->tmp)
        unlink(o->tmp);
    outfile_free(o);
}

int iof_outfile_write(const char *path, mode_t mode, unsigned flags, const void *data, size_t len,
                      struct iof_diag *diag)
{
    struct iof_outfile o;
    const char *p = data;
    int r = iof_outfile_open(&o, path, mode, flags, diag);

    while (!r && len) {
        ssize_t n = write(o.fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            r = iof_diag_set(diag, n < 0 ? -errno : -EIO, "%s: cannot write: %s", path,
                             strerror(n < 0 ? errno : EIO));
            break;
        }
        p += n;
        len -= (size_t)n;
    }
    if (r) {
        iof_outfile_abort(&o);
        return r;
    }
    return iof_outfile_close(&o, false, diag);
}
