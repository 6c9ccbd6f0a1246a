/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/scope.c - the agent's workdir and --allow entries on
 * Windows, and the one way a plan target is opened (dynamo/scope.h): with
 * CreateFileW, the last component never followed (FILE_FLAG_OPEN_REPARSE_POINT:
 * a symbolic link or junction there is refused), then judged on the opened
 * handle: its final path (GetFinalPathNameByHandleW) must be the one the
 * name spells beneath the workdir or the --allow directory, so a reparse
 * point anywhere on the way (which changes the final path) is refused too;
 * an allowed file is the same volume and file id. Disks (\\.\PhysicalDriveN)
 * and volumes (\\.\X:) are opened only when an --allow entry names them;
 * a written one is claimed: a disk checked by dynamo/os/windows/devguard.c,
 * a volume (only with --allow-destructive) locked and dismounted
 * (FSCTL_LOCK_VOLUME, FSCTL_DISMOUNT_VOLUME) so nothing else writes it
 * while the test runs. */
#ifdef _WIN32
#include "dynamo/scope.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <winioctl.h>

#include "common/os/os.h"
#include "common/spec.h"
#include "dynamo/devguard.h"
#include "dynamo/os/os.h"

#define SCOPE_PATH_MAX 1024
/* Device numbers (st_rdev) of the disks and volumes, as the agent names them.
 */
#define SCOPE_DEV_DISK 0x10000u
#define SCOPE_DEV_VOLUME 0x20000u

struct scope_entry {
    const char *given;         /* as on the command line (borrowed) */
    char real[SCOPE_PATH_MAX]; /* its final path; "" when missing */
    size_t rlen;
    uint64_t rdev; /* a disk or volume: its number; 0 otherwise */
    struct stat st;
};

struct scope_hold {
    uint64_t rdev;
    int fd;
    unsigned refs;
    uint64_t size;
    struct dyn_dev_ends before;
    bool wrote;
};

struct dyn_scope {
    char workdir[SCOPE_PATH_MAX]; /* its final path */
    int wfd;
    struct scope_entry *e;
    size_t n;
    SRWLOCK lock;
    struct scope_hold *holds;
    size_t nholds;
};

void dyn_scope_force_fallback(bool on)
{
    (void)on; /* one way only on Windows */
}

static bool is_sep(char c)
{
    return c == '/' || c == '\\';
}

/* "X:\...", "\\server\share\..." or "\\.\device". */
static bool is_absolute(const char *p)
{
    return (isalpha((unsigned char)p[0]) && p[1] == ':' && is_sep(p[2])) ||
           (is_sep(p[0]) && is_sep(p[1]));
}

/* The number of \\.\PhysicalDriveN or \\.\X:, or 0 when path names neither. */
static uint64_t device_number(const char *p)
{
    char *end;
    unsigned long n;

    if (!is_sep(p[0]) || !is_sep(p[1]) || p[2] != '.' || !is_sep(p[3]))
        return 0;
    p += 4;
    if (!_strnicmp(p, "PhysicalDrive", 13) && isdigit((unsigned char)p[13])) {
        n = strtoul(p + 13, &end, 10);
        return *end || n > 0xffff ? 0 : SCOPE_DEV_DISK | n;
    }
    if (isalpha((unsigned char)p[0]) && p[1] == ':' && !p[2])
        return SCOPE_DEV_VOLUME | (unsigned)toupper((unsigned char)p[0]);
    return 0;
}

static bool has_dotdot(const char *p)
{
    for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2)
        if ((s == p || is_sep(s[-1])) && (s[2] == '\0' || is_sep(s[2])))
            return true;
    return false;
}

/* a and b equal as paths: case-insensitive, either separator. */
static bool path_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (!(is_sep(*a) && is_sep(*b)) && tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return !*a && !*b;
}

/* Rest of path when it lies under dir (n bytes, no trailing separator). */
static const char *under(const char *path, const char *dir, size_t n)
{
    if (!n || strlen(path) <= n || !is_sep(path[n]))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!(is_sep(path[i]) && is_sep(dir[i])) &&
            tolower((unsigned char)path[i]) != tolower((unsigned char)dir[i]))
            return NULL;
    path += n;
    while (is_sep(*path))
        path++;
    return path;
}

static size_t trimmed_len(const char *p)
{
    size_t n = strlen(p);
    while (n > 3 && is_sep(p[n - 1]))
        n--;
    return n;
}

static int to_wide(const char *s, wchar_t *w, size_t cap)
{
    return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, (int)cap) > 0 ? 0 : -EINVAL;
}

/* Opens path (UTF-8) with open(2) flags: O_PATH looks only; O_DIRECT is the
 * windows engine's unbuffered overlapped handle. The last component is not
 * followed unless follow. A CRT descriptor, or a negative errno. */
static int open_path(const char *path, int flags, bool follow, bool exclusive)
{
    wchar_t w[SCOPE_PATH_MAX];
    DWORD access, share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    DWORD fl = FILE_FLAG_BACKUP_SEMANTICS | FILE_ATTRIBUTE_NORMAL;
    int acc = flags & (O_RDONLY | O_WRONLY | O_RDWR), fd;
    HANDLE h;

    if (to_wide(path, w, SCOPE_PATH_MAX) < 0)
        return -EINVAL;
    access = (flags & O_PATH)  ? FILE_READ_ATTRIBUTES | READ_CONTROL
             : acc == O_WRONLY ? GENERIC_WRITE
             : acc == O_RDWR   ? GENERIC_READ | GENERIC_WRITE
                               : GENERIC_READ;
    if (!follow)
        fl |= FILE_FLAG_OPEN_REPARSE_POINT;
    if (flags & O_DIRECT)
        fl |= FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH;
    if (exclusive)
        share = FILE_SHARE_READ;
    h = CreateFileW(w, access, share, NULL, OPEN_EXISTING, fl, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return iof_os_win_errno(GetLastError());
    fd = _open_osfhandle((intptr_t)h, (flags & (O_WRONLY | O_RDWR)) | _O_BINARY);
    if (fd < 0) {
        CloseHandle(h);
        return -EMFILE;
    }
    return fd;
}

int dyn_scope_refresh(struct dyn_scope *s, struct iof_diag *diag)
{
    struct stat st;
    int fd, r;

    if (mkdir(s->workdir, 0700) < 0 && errno != EEXIST)
        return iof_diag_set(diag, -errno, "workdir '%s': %s", s->workdir, strerror(errno));
    fd = open_path(s->workdir, O_PATH, false, false);
    if (fd < 0)
        return iof_diag_set(diag, fd, "workdir '%s': %s", s->workdir, strerror(-fd));
    if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
        close(fd);
        return iof_diag_set(diag, IOF_EDENIED,
                            "workdir '%s': not a directory (a reparse point, or a file)",
                            s->workdir);
    }
    /* The agent's own, as on Linux: no one else owns it or may write in it. */
    if ((r = dyn_win_dir_check("workdir", s->workdir, diag))) {
        close(fd);
        return r;
    }
    if (s->wfd >= 0)
        close(s->wfd);
    s->wfd = fd;
    for (size_t i = 0; i < s->n; i++) {
        struct scope_entry *e = &s->e[i];
        e->real[0] = '\0';
        e->rlen = 0;
        if (e->rdev) {
            snprintf(e->real, sizeof(e->real), "%s", e->given);
            e->rlen = strlen(e->real);
            continue;
        }
        /* The entry itself is followed (an administrator named it), as
         * realpath() does on Linux. */
        fd = open_path(e->given, O_PATH, true, false);
        if (fd < 0)
            continue; /* may appear later */
        r = fstat(fd, &e->st) < 0 ? -errno : dyn_win_fd_path(fd, e->real, sizeof(e->real));
        close(fd);
        if (r < 0) {
            e->real[0] = '\0';
            continue;
        }
        e->rlen = trimmed_len(e->real);
    }
    return 0;
}

int dyn_scope_new(const char *workdir, const char *const *allow, size_t nallow,
                  struct dyn_scope **out, struct iof_diag *diag)
{
    struct dyn_scope *s = calloc(1, sizeof(*s));
    int fd, r;

    *out = NULL;
    if (!s)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    s->wfd = -1;
    InitializeSRWLock(&s->lock);
    s->e = calloc(nallow ? nallow : 1, sizeof(*s->e));
    if (!s->e) {
        free(s);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    if (mkdir(workdir, 0700) < 0 && errno != EEXIST) {
        r = iof_diag_set(diag, -errno, "workdir '%s': %s", workdir, strerror(errno));
        dyn_scope_free(s);
        return r;
    }
    fd = open_path(workdir, O_PATH, false, false);
    r = fd < 0 ? fd : dyn_win_fd_path(fd, s->workdir, sizeof(s->workdir));
    if (fd >= 0)
        close(fd);
    if (r < 0) {
        r = iof_diag_set(diag, r, "workdir '%s': %s", workdir, strerror(-r));
        dyn_scope_free(s);
        return r;
    }
    for (size_t i = 0; i < nallow; i++) {
        if (!is_absolute(allow[i])) {
            dyn_scope_free(s);
            return iof_diag_set(diag, -EINVAL,
                                "--allow '%s': must be an absolute path (C:\\dir, "
                                "\\\\.\\PhysicalDrive1, \\\\.\\E:)",
                                allow[i]);
        }
        s->e[i].given = allow[i];
        s->e[i].rdev = device_number(allow[i]);
        s->n++;
    }
    r = dyn_scope_refresh(s, diag);
    if (r) {
        dyn_scope_free(s);
        return r;
    }
    *out = s;
    return 0;
}

const char *dyn_scope_workdir(const struct dyn_scope *s)
{
    return s->workdir;
}

void dyn_scope_free(struct dyn_scope *s)
{
    if (!s)
        return;
    if (s->wfd >= 0)
        close(s->wfd);
    for (size_t i = 0; i < s->nholds; i++)
        close(s->holds[i].fd);
    free(s->holds);
    free(s->e);
    free(s);
}

/* Opens a disk or volume an --allow entry names. */
static int open_device(struct dyn_scope *s, const char *path, uint64_t rdev, int flags,
                       struct stat *st_out, struct iof_diag *diag)
{
    bool named = false;
    int fd;

    for (size_t i = 0; i < s->n && !named; i++)
        named = s->e[i].rdev == rdev;
    if (!named)
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': not a disk or volume this agent's --allow names", path);
    fd = open_path(path, flags & ~O_EXCL, true, (flags & O_EXCL) != 0);
    if (fd < 0)
        return fd == -EBUSY ? iof_diag_set(diag, -EBUSY,
                                           "target '%s': refusing to write: the device is in "
                                           "use (another program has it open for writing)",
                                           path)
                            : iof_diag_set(diag, fd, "target '%s': %s", path, strerror(-fd));
    if (st_out) {
        memset(st_out, 0, sizeof(*st_out));
        st_out->st_mode = S_IFBLK | 0600;
        st_out->st_rdev = rdev;
        st_out->st_nlink = 1;
    }
    return fd;
}

/* Joins dir and rest (either separator) into buf as a Windows path. */
static int join(char *buf, size_t cap, const char *dir, const char *rest)
{
    size_t n = (size_t)snprintf(buf, cap, "%s%s%s", dir, *rest ? "\\" : "", rest);

    if (n >= cap)
        return -ENAMETOOLONG;
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '\\';
    return 0;
}

int dyn_scope_open(struct dyn_scope *s, const char *path, int flags, struct stat *st_out,
                   struct iof_diag *diag)
{
    char want[SCOPE_PATH_MAX], got[SCOPE_PATH_MAX];
    const struct scope_entry *root = NULL;
    const char *rest = NULL;
    struct stat st;
    uint64_t rdev;
    int fd, r;

    r = dyn_scope_check_name(path, diag);
    if (r)
        return r;
    if (has_dotdot(path))
        return iof_diag_set(diag, IOF_EDENIED, "target '%s': '..' is not allowed", path);
    rdev = device_number(path);
    if (rdev)
        return open_device(s, path, rdev, flags, st_out, diag);
    if (!is_absolute(path)) {
        r = join(want, sizeof(want), s->workdir, path);
    } else {
        for (size_t i = 0; i < s->n && !rest; i++) {
            const struct scope_entry *e = &s->e[i];
            if (!e->rlen || !S_ISDIR(e->st.st_mode))
                continue;
            rest = under(path, e->given, trimmed_len(e->given));
            if (!rest)
                rest = under(path, e->real, e->rlen);
            if (rest)
                root = e;
        }
        r = root ? join(want, sizeof(want), root->real, rest)
                 : (snprintf(want, sizeof(want), "%s", path) >= (int)sizeof(want) ? -ENAMETOOLONG
                                                                                  : 0);
    }
    if (r)
        return iof_diag_set(diag, r, "target '%s': path too long", path);
    fd = open_path(want, flags & ~O_EXCL, !is_absolute(path) || root ? false : true, false);
    if (fd < 0)
        return iof_diag_set(diag, fd, "target '%s': %s", path, strerror(-fd));
    r = fstat(fd, &st) < 0 ? -errno : dyn_win_fd_path(fd, got, sizeof(got));
    if (r < 0) {
        close(fd);
        return iof_diag_set(diag, r, "target '%s': %s", path, strerror(-r));
    }
    if (S_ISLNK(st.st_mode) || ((!is_absolute(path) || root) && !path_eq(got, want))) {
        close(fd);
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': a symbolic link or junction on the way; reparse points "
                            "are not followed %s",
                            path, root ? "under an --allow directory" : "in the workdir");
    }
    if (is_absolute(path) && !root) {
        bool allowed = false;
        for (size_t i = 0; i < s->n && !allowed; i++)
            allowed = s->e[i].rlen && S_ISREG(s->e[i].st.st_mode) &&
                      s->e[i].st.st_dev == st.st_dev && s->e[i].st.st_ino == st.st_ino;
        if (!allowed) {
            close(fd);
            return iof_diag_set(diag, IOF_EDENIED,
                                "target '%s' is not inside this agent's --allow paths", path);
        }
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': not a regular file; test files%s must be", path,
                            root ? " under an --allow directory" : " in the workdir");
    }
    if (st.st_nlink != 1) {
        close(fd);
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': has %ju links; a file with more than one name could "
                            "be one outside the allowed paths",
                            path, (uintmax_t)st.st_nlink);
    }
    /* A test file in the workdir: the agent's own (its owner and DACL). */
    if (!is_absolute(path) && (r = dyn_os_file_check(fd, "target", path, diag)) < 0) {
        close(fd);
        return r;
    }
    if (st_out)
        *st_out = st;
    return fd;
}

int dyn_scope_open_parent(struct dyn_scope *s, const char *path, const char **base,
                          struct iof_diag *diag)
{
    char dir[SCOPE_PATH_MAX], want[SCOPE_PATH_MAX], got[SCOPE_PATH_MAX];
    const char *sep = NULL;
    struct stat st;
    int fd, r;

    for (const char *p = path; *p; p++)
        if (is_sep(*p))
            sep = p;
    *base = sep ? sep + 1 : path;
    if (is_absolute(path) || strchr(path, ':') || has_dotdot(path) || !**base)
        return iof_diag_set(diag, IOF_EDENIED, "target '%s': not a test-file name", path);
    snprintf(dir, sizeof(dir), "%.*s", sep ? (int)(sep - path) : 0, path);
    if (join(want, sizeof(want), s->workdir, dir) < 0)
        return iof_diag_set(diag, -ENAMETOOLONG, "target '%s': path too long", path);
    fd = open_path(want, O_PATH, false, false);
    if (fd < 0)
        return iof_diag_set(diag, fd, "target '%s': %s", path, strerror(-fd));
    r = fstat(fd, &st) < 0 ? -errno : dyn_win_fd_path(fd, got, sizeof(got));
    if (r < 0 || !S_ISDIR(st.st_mode) || !path_eq(got, want)) {
        close(fd);
        return iof_diag_set(diag, r < 0 ? r : IOF_EDENIED, "target '%s': %s", path,
                            r < 0 ? strerror(-r)
                                  : "a symbolic link or junction on the way; reparse points are "
                                    "not followed in the workdir");
    }
    return fd;
}

/* --- exclusive claims on written disks and volumes
 * --------------------------------- */

static struct scope_hold *hold_find(struct dyn_scope *s, uint64_t rdev)
{
    for (size_t i = 0; i < s->nholds; i++)
        if (s->holds[i].rdev == rdev)
            return &s->holds[i];
    return NULL;
}

/* A volume written by a test: locked (nothing else may open it for
 * writing) and dismounted (its file system lets go of it). */
static int volume_lock(int fd, const char *path, struct iof_diag *diag)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    DWORD n;

    if (!DeviceIoControl(h, FSCTL_LOCK_VOLUME, NULL, 0, NULL, 0, &n, NULL))
        return iof_diag_set(diag, -EBUSY,
                            "target '%s': refusing to write: the volume cannot be locked (files "
                            "on it are open): %s",
                            path, iof_strerror(iof_os_win_errno(GetLastError())));
    if (!DeviceIoControl(h, FSCTL_DISMOUNT_VOLUME, NULL, 0, NULL, 0, &n, NULL))
        return iof_diag_set(diag, -EBUSY, "target '%s': cannot dismount the volume: %s", path,
                            iof_strerror(iof_os_win_errno(GetLastError())));
    return 0;
}

int dyn_scope_hold(struct dyn_scope *s, const char *path, dev_t rdev, bool destructive,
                   struct iof_diag *diag)
{
    struct scope_hold h = {.rdev = rdev, .refs = 1, .fd = -1}, *grown, *have;
    uint64_t lbs;
    int r = 0;

    AcquireSRWLockExclusive(&s->lock);
    have = hold_find(s, rdev);
    if (have) {
        have->refs++;
        goto out;
    }
    if ((rdev & SCOPE_DEV_VOLUME) && !destructive) {
        r = iof_diag_set(diag, IOF_EDENIED,
                         "target '%s': refusing to write: a volume holds a file system; start "
                         "the agent with --allow-destructive to overwrite it",
                         path);
        goto out;
    }
    h.fd = open_device(s, path, rdev, O_RDWR | O_EXCL, NULL, diag);
    if (h.fd < 0) {
        r = h.fd;
        goto out;
    }
    if ((r = dyn_os_blockdev_geometry(h.fd, &h.size, &lbs)) < 0)
        r = iof_diag_set(diag, r, "target '%s': cannot read the device size: %s", path,
                         strerror(-r));
    else if (rdev & SCOPE_DEV_VOLUME)
        r = volume_lock(h.fd, path, diag);
    if (!r)
        r = dyn_devguard_check(h.fd, path, h.size, destructive, &h.before, diag);
    if (!r) {
        grown = realloc(s->holds, (s->nholds + 1) * sizeof(*s->holds));
        if (!grown)
            r = iof_diag_set(diag, -ENOMEM, "out of memory");
        else
            s->holds = grown;
    }
    if (r) {
        close(h.fd);
        goto out;
    }
    s->holds[s->nholds++] = h;
out:
    ReleaseSRWLockExclusive(&s->lock);
    return r;
}

void dyn_scope_release(struct dyn_scope *s, dev_t rdev, bool wrote)
{
    struct scope_hold *h;
    struct dyn_dev_ends now;

    AcquireSRWLockExclusive(&s->lock);
    h = hold_find(s, rdev);
    if (h)
        h->wrote |= wrote;
    if (h && --h->refs == 0) {
        /* As on Linux (dynamo/os/linux/scope.c): stamp what this test wrote. */
        if (h->wrote && dyn_devguard_ends(h->fd, h->size, &now, NULL) == 0 &&
            (now.hash != h->before.hash ? !now.zero : h->before.zero))
            dyn_devguard_mark(h->fd, h->size);
        close(h->fd); /* also unlocks a volume */
        *h = s->holds[--s->nholds];
    }
    ReleaseSRWLockExclusive(&s->lock);
}
#endif
