/* SPDX-License-Identifier: Apache-2.0 */
/* common/os/outfile_win.c - common/outfile.h on Windows: the file is written
 * under a temporary name created with CREATE_NEW beside the name, then moved
 * over it with MoveFileExW (MOVEFILE_WRITE_THROUGH; with IOF_OUTFILE_FORCE
 * also MOVEFILE_REPLACE_EXISTING). A reparse point at the name (a symbolic
 * link, a junction, a mount point) is always refused, with or without force:
 * nothing is written through one, and none is replaced. Paths are UTF-8,
 * turned into UTF-16 for the wide Win32 calls. Built for Windows only
 * (cmake/windows.cmake), in place of common/outfile.c. */
#ifdef _WIN32
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <windows.h>

#include "common/clock.h"
#include "common/os/os.h"
#include "common/outfile.h"

/* The longest part of the name the temporary name keeps. */
#define OUTFILE_BASE_MAX 200

static int outfile_std_fd(const char *path)
{
    if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
        return 1;
    if (!strcmp(path, "/dev/stderr"))
        return 2;
    return -1;
}

/* path (UTF-8) as a new UTF-16 string, NULL when it is not UTF-8 or out
 * of memory (errno EILSEQ or ENOMEM). */
static wchar_t *outfile_wide(const char *path)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    wchar_t *w;

    if (n <= 0) {
        errno = EILSEQ;
        return NULL;
    }
    w = malloc((size_t)n * sizeof(*w));
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n);
    return w;
}

static bool outfile_is_sep(char c)
{
    return c == '/' || c == '\\';
}

/* What is at path, by its attributes (a reparse point is not followed):
 * 0 when it may be written with flags. */
static int outfile_judge(const char *path, DWORD attr, unsigned flags, struct iof_diag *diag)
{
    if (attr & FILE_ATTRIBUTE_REPARSE_POINT)
        return iof_diag_set(diag, -EEXIST,
                            "%s: exists as a reparse point (a symbolic link or junction), which "
                            "is never followed nor replaced: remove it, or give another name",
                            path);
    if (attr & FILE_ATTRIBUTE_DIRECTORY)
        return iof_diag_set(diag, -EISDIR, "%s: is a directory, not a file", path);
    if (!(flags & IOF_OUTFILE_FORCE))
        return iof_diag_set(diag, -EEXIST,
                            "%s: the file exists; give --force to replace it, or another name",
                            path);
    return 0;
}

/* Reads path's attributes into *attr: 1 when something is there, 0 when
 * nothing, or an error with diag. */
static int outfile_stat(const char *path, DWORD *attr, struct iof_diag *diag)
{
    wchar_t *w = outfile_wide(path);
    DWORD e;

    if (!w)
        return iof_diag_set(diag, -errno, "%s: %s", path,
                            errno == EILSEQ ? "the name is not valid UTF-8" : "out of memory");
    *attr = GetFileAttributesW(w);
    e = GetLastError();
    free(w);
    if (*attr != INVALID_FILE_ATTRIBUTES)
        return 1;
    if (e == ERROR_FILE_NOT_FOUND)
        return 0;
    if (e == ERROR_PATH_NOT_FOUND)
        return 0; /* the directory is missing: creating the file says so */
    return iof_diag_set(diag, iof_os_win_errno(e), "%s: %s", path,
                        iof_strerror(iof_os_win_errno(e)));
}

int iof_outfile_check(const char *path, unsigned flags, struct iof_diag *diag)
{
    DWORD attr;
    int r;

    if (!path || !*path)
        return iof_diag_set(diag, -EINVAL, "empty file name");
    if (outfile_std_fd(path) >= 0)
        return (flags & IOF_OUTFILE_SEEKABLE)
                   ? iof_diag_set(diag, -EINVAL,
                                  "%s: this file is rewritten in place, so it must be a regular "
                                  "file, not standard output",
                                  path)
                   : 0;
    if (outfile_is_sep(path[strlen(path) - 1]))
        return iof_diag_set(diag, -EISDIR, "%s: names a directory, not a file", path);
    r = outfile_stat(path, &attr, diag);
    if (r <= 0)
        return r;
    return outfile_judge(path, attr, flags, diag);
}

/* "DIR\" + at most OUTFILE_BASE_MAX bytes of the last component + ".tmp-",
 * and room for the suffix. */
static char *outfile_tmp_prefix(const char *path)
{
    size_t dirlen = strlen(path), baselen;
    char *t;

    while (dirlen && !outfile_is_sep(path[dirlen - 1]) && path[dirlen - 1] != ':')
        dirlen--;
    baselen = strlen(path) - dirlen;
    if (baselen > OUTFILE_BASE_MAX)
        baselen = OUTFILE_BASE_MAX;
    t = malloc(dirlen + baselen + sizeof(".tmp-XXXXXX"));
    if (!t)
        return NULL;
    memcpy(t, path, dirlen + baselen);
    strcpy(t + dirlen + baselen, ".tmp-");
    return t;
}

/* Creates the temporary file beside the name: CREATE_NEW, so a name that
 * exists (a file, a link, anything) is never opened; shared for deletion, so
 * that it can be moved over the name while open. */
static int outfile_create_tmp(struct iof_outfile *o, struct iof_diag *diag)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    char *t = outfile_tmp_prefix(o->path);
    DWORD e = ERROR_FILE_EXISTS;
    size_t at;

    if (!t)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    at = strlen(t);
    for (int tries = 0; tries < 100; tries++) {
        uint64_t r = iof_now_ns() ^ ((uint64_t)GetCurrentProcessId() << 32) ^
                     ((uint64_t)tries * 0x9e3779b97f4a7c15ull);
        wchar_t *w;
        HANDLE h;

        for (int i = 0; i < 6; i++, r /= sizeof(digits) - 1)
            t[at + i] = digits[r % (sizeof(digits) - 1)];
        t[at + 6] = '\0';
        if (!(w = outfile_wide(t))) {
            e = ERROR_INVALID_NAME;
            break;
        }
        h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL,
                        CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
        e = GetLastError();
        free(w);
        if (h != INVALID_HANDLE_VALUE) {
            o->fd = _open_osfhandle((intptr_t)h, _O_RDWR | _O_BINARY);
            if (o->fd < 0) {
                CloseHandle(h);
                e = ERROR_TOO_MANY_OPEN_FILES;
                break;
            }
            o->tmp = t;
            return 0;
        }
        if (e != ERROR_FILE_EXISTS && e != ERROR_ALREADY_EXISTS)
            break;
    }
    free(t);
    return iof_diag_set(diag, iof_os_win_errno(e), "%s: cannot create: %s", o->path,
                        iof_strerror(iof_os_win_errno(e)));
}

int iof_outfile_open(struct iof_outfile *o, const char *path, mode_t mode, unsigned flags,
                     struct iof_diag *diag)
{
    int std, r;

    (void)mode; /* who may read it is the directory's ACL's business */
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
        o->fd = _dup(std);
        o->special = true;
        if (o->fd < 0)
            r = iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
        else
            _setmode(o->fd, _O_BINARY);
    } else {
        r = outfile_create_tmp(o, diag);
    }
    if (r)
        iof_outfile_abort(o);
    return r;
}

FILE *iof_outfile_stdio(struct iof_outfile *o)
{
    if (!o->f && o->fd >= 0) {
        o->f = fdopen(o->fd, "wb");
        if (o->f)
            setvbuf(o->f, NULL, _IOFBF, 1 << 16);
    }
    return o->f;
}

/* Moves tmp over path. Without force MoveFileExW fails when anything is at
 * the name (judged atomically by the file system); with it an existing file
 * is replaced, but never a reparse point (checked just before: a link
 * planted in that instant is replaced itself, not followed). */
static int outfile_move(const struct iof_outfile *o, struct iof_diag *diag)
{
    DWORD flags = MOVEFILE_WRITE_THROUGH, attr, e;
    wchar_t *wt, *wp;
    int r;

    if (o->flags & IOF_OUTFILE_FORCE) {
        r = outfile_stat(o->path, &attr, diag);
        if (r < 0)
            return r;
        if (r > 0 && (attr & (FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY)))
            return outfile_judge(o->path, attr, o->flags, diag);
        flags |= MOVEFILE_REPLACE_EXISTING;
    }
    wt = outfile_wide(o->tmp);
    wp = outfile_wide(o->path);
    if (!wt || !wp) {
        free(wt);
        free(wp);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    r = MoveFileExW(wt, wp, flags) ? 0 : -1;
    e = GetLastError();
    free(wt);
    free(wp);
    if (r == 0)
        return 0;
    if (e == ERROR_ALREADY_EXISTS || e == ERROR_FILE_EXISTS)
        return iof_diag_set(diag, -EEXIST,
                            "%s: appeared while it was being written; give --force to replace "
                            "it (the output is in %s)",
                            o->path, o->tmp);
    return iof_diag_set(diag, iof_os_win_errno(e),
                        "%s: cannot put in place: %s (the output is in %s)", o->path,
                        iof_strerror(iof_os_win_errno(e)), o->tmp);
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
    if (!FlushFileBuffers((HANDLE)_get_osfhandle(o->fd)))
        return iof_diag_set(diag, iof_os_win_errno(GetLastError()), "%s: cannot write: %s", o->path,
                            iof_strerror(iof_os_win_errno(GetLastError())));
    r = outfile_move(o, diag);
    if (r)
        return r;
    free(o->tmp);
    o->tmp = NULL;
    return 0;
}

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

/* Removes the temporary file (closed first: Windows removes an open file
 * only when its last handle closes). */
static void outfile_unlink_tmp(struct iof_outfile *o)
{
    wchar_t *w;

    if (!o->tmp || !(w = outfile_wide(o->tmp)))
        return;
    DeleteFileW(w);
    free(w);
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
    if (r && !keep_on_failure)
        outfile_unlink_tmp(o);
    outfile_free(o);
    return r;
}

void iof_outfile_abort(struct iof_outfile *o)
{
    outfile_close_fd(o);
    outfile_unlink_tmp(o);
    outfile_free(o);
}

int iof_outfile_write(const char *path, mode_t mode, unsigned flags, const void *data, size_t len,
                      struct iof_diag *diag)
{
    struct iof_outfile o;
    const char *p = data;
    int r = iof_outfile_open(&o, path, mode, flags, diag);

    while (!r && len) {
        unsigned chunk = len > (1u << 30) ? 1u << 30 : (unsigned)len;
        int n = _write(o.fd, p, chunk);
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
#endif
