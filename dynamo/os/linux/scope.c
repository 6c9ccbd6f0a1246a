/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/linux/scope.c - the agent's workdir and --allow entries as descriptors,
 * and the one way a plan target is opened: resolved beneath them, then
 * judged by what fstat says was opened (dynamo/scope.h has the rules). */
#include "dynamo/scope.h"
#include "dynamo/devguard.h"
#include "common/spec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct scope_entry {
    const char *given; /* as on the command line (borrowed) */
    size_t glen;       /* without trailing '/' */
    char real[PATH_MAX];
    size_t rlen; /* without trailing '/'; 0 with real "" when missing */
    int fd;      /* O_PATH of real; -1 when missing */
    struct stat st;
};

/* An exclusive claim on a block device written by the running test. */
struct scope_hold {
    dev_t rdev;
    int fd; /* O_RDWR | O_EXCL */
    unsigned refs;
    uint64_t size;
    struct dyn_dev_ends before; /* its ends when claimed */
    bool wrote;                 /* a claimant released has written to it */
};

struct dyn_scope {
    char workdir[PATH_MAX]; /* canonical */
    int wfd;                /* O_PATH | O_DIRECTORY */
    struct scope_entry *e;
    size_t n;
    pthread_mutex_t lock; /* holds: claimed and released by whichever thread opens the test */
    struct scope_hold *holds;
    size_t nholds;
};

/* -1 unknown, 0 the kernel has no openat2, 1 it has. */
static atomic_int g_openat2 = -1;

void dyn_scope_force_fallback(bool on)
{
    atomic_store(&g_openat2, on ? 0 : -1);
}

static int sys_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
    struct open_how how = {.flags = (uint64_t)flags, .resolve = resolve};
    if (flags & O_CREAT)
        how.mode = 0600;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

static bool has_dotdot(const char *p)
{
    for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2)
        if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
            return true;
    return false;
}

/* The fallback of open_beneath: each directory opened O_PATH|O_NOFOLLOW from
 * the previous one, the last component with O_NOFOLLOW. A symbolic link
 * anywhere fails with ELOOP (or ENOTDIR), ".." never gets here. */
static int open_beneath_walk(int dirfd, const char *rel, int flags)
{
    char buf[PATH_MAX], *p, *slash;
    int cur = -1, fd, e;

    if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
        return -ENAMETOOLONG;
    p = buf;
    while (*p == '/')
        p++;
    for (;;) {
        slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        if (!slash || slash[1 + strspn(slash + 1, "/")] == '\0') {
            /* the last component ("" or "." name the directory itself) */
            const char *name = (*p && strcmp(p, ".")) ? p : ".";
            fd = openat(cur >= 0 ? cur : dirfd, name, flags | O_NOFOLLOW);
            e = errno;
            if (cur >= 0)
                close(cur);
            return fd < 0 ? -e : fd;
        }
        if (*p && strcmp(p, ".")) {
            fd = openat(cur >= 0 ? cur : dirfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            e = errno;
            if (cur >= 0)
                close(cur);
            if (fd < 0)
                return -(e == ENOTDIR ? ELOOP : e);
            cur = fd;
        }
        p = slash + 1;
        while (*p == '/')
            p++;
    }
}

/* O_PATH | O_NOFOLLOW opens a trailing symbolic link itself: refused too. */
static int no_link(int fd)
{
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
        close(fd);
        return -ELOOP;
    }
    return fd;
}

/* `rel` beneath dirfd: no symbolic link, magic link or ".." on the way. */
static int open_beneath(int dirfd, const char *rel, int flags)
{
    int fd;

    if (has_dotdot(rel))
        return -EXDEV;
    if (!*rel)
        rel = ".";
    if (atomic_load(&g_openat2) != 0) {
        fd = sys_openat2(dirfd, rel, flags,
                         RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (fd >= 0 || errno != ENOSYS) {
            atomic_store(&g_openat2, 1);
            return fd >= 0 ? no_link(fd) : -errno;
        }
        atomic_store(&g_openat2, 0);
    }
    return no_link(open_beneath_walk(dirfd, rel, flags));
}

/* An absolute path that must reach an object --allow names itself: ordinary
 * symbolic links are followed (a /dev/disk/by-* link), /proc magic links are
 * not where openat2 exists (elsewhere the identity check alone decides). */
static int open_identity(const char *path, int flags)
{
    int fd;

    if (atomic_load(&g_openat2) != 0) {
        fd = sys_openat2(AT_FDCWD, path, flags, RESOLVE_NO_MAGICLINKS);
        if (fd >= 0 || errno != ENOSYS) {
            atomic_store(&g_openat2, 1);
            return fd >= 0 ? fd : -errno;
        }
        atomic_store(&g_openat2, 0);
    }
    fd = open(path, flags);
    return fd >= 0 ? fd : -errno;
}

/* --- the scope ------------------------------------------------------------------ */

static size_t trimmed_len(const char *p)
{
    size_t n = strlen(p);
    while (n > 0 && p[n - 1] == '/')
        n--;
    return n;
}

static void entry_close(struct scope_entry *e)
{
    if (e->fd >= 0)
        close(e->fd);
    e->fd = -1;
    e->real[0] = '\0';
    e->rlen = 0;
}

int dyn_scope_refresh(struct dyn_scope *s, struct iof_diag *diag)
{
    struct stat st;
    int fd;

    /* The workdir: made by the agent, never a symbolic link, the agent's own. */
    if (mkdir(s->workdir, 0700) < 0 && errno != EEXIST)
        return iof_diag_set(diag, -errno, "workdir '%s': %s", s->workdir, strerror(errno));
    fd = open(s->workdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return iof_diag_set(diag, -errno, "workdir '%s': %s", s->workdir,
                            errno == ENOTDIR ? "not a directory (or a symbolic link)"
                                             : strerror(errno));
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
        close(fd);
        return iof_diag_set(diag, IOF_EDENIED,
                            "workdir '%s': belongs to uid %u, not to the agent's user (%u)",
                            s->workdir, (unsigned)st.st_uid, (unsigned)geteuid());
    }
    if (s->wfd >= 0)
        close(s->wfd);
    s->wfd = fd;

    for (size_t i = 0; i < s->n; i++) {
        struct scope_entry *e = &s->e[i];
        entry_close(e);
        if (!realpath(e->given, e->real)) {
            e->real[0] = '\0';
            continue; /* a device may appear later; until then nothing under it opens */
        }
        e->fd = open(e->real, O_PATH | O_CLOEXEC);
        if (e->fd < 0 || fstat(e->fd, &e->st) < 0) {
            entry_close(e);
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
    int r;

    *out = NULL;
    if (!s)
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    s->wfd = -1;
    /* Whether openat2 works here, asked once with a lookup that cannot be
     * refused otherwise: a container's seccomp filter may answer EPERM
     * rather than ENOSYS for a system call it does not know. */
    if (atomic_load(&g_openat2) == -1) {
        int fd = sys_openat2(AT_FDCWD, "/", O_PATH | O_CLOEXEC, 0);
        if (fd >= 0)
            close(fd);
        atomic_store(&g_openat2, fd >= 0 || (errno != ENOSYS && errno != EPERM) ? 1 : 0);
    }
    pthread_mutex_init(&s->lock, NULL);
    s->e = calloc(nallow ? nallow : 1, sizeof(*s->e));
    if (!s->e) {
        pthread_mutex_destroy(&s->lock);
        free(s);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    if ((mkdir(workdir, 0700) < 0 && errno != EEXIST) || !realpath(workdir, s->workdir)) {
        r = iof_diag_set(diag, -errno, "workdir '%s': %s", workdir, strerror(errno));
        dyn_scope_free(s);
        return r;
    }
    for (size_t i = 0; i < nallow; i++) {
        if (allow[i][0] != '/') {
            dyn_scope_free(s);
            return iof_diag_set(diag, -EINVAL, "--allow '%s': must be an absolute path", allow[i]);
        }
        s->e[i].given = allow[i];
        s->e[i].glen = trimmed_len(allow[i]);
        s->e[i].fd = -1;
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
    for (size_t i = 0; i < s->n; i++)
        entry_close(&s->e[i]);
    if (s->wfd >= 0)
        close(s->wfd);
    for (size_t i = 0; i < s->nholds; i++)
        close(s->holds[i].fd);
    free(s->holds);
    pthread_mutex_destroy(&s->lock);
    free(s->e);
    free(s);
}

/* --- resolving a target ------------------------------------------------------------ */

enum reach {
    REACH_WORKDIR,  /* a test file, beneath the workdir */
    REACH_BENEATH,  /* beneath an --allow directory */
    REACH_IDENTITY, /* must be an object an --allow entry names */
};

/* Rest of `path` when it lies under the directory `dir` (n bytes, no
 * trailing '/'), else NULL. */
static const char *under(const char *path, const char *dir, size_t n)
{
    if (strncmp(path, dir, n) || path[n] != '/')
        return NULL;
    path += n;
    while (*path == '/')
        path++;
    return path;
}

static int reach_open(struct dyn_scope *s, enum reach how, int root, const char *rest,
                      const char *path, int flags)
{
    (void)s;
    if (how == REACH_IDENTITY)
        return open_identity(path, flags);
    return open_beneath(root, rest, flags | O_NOFOLLOW);
}

static bool dev_allowed(const struct dyn_scope *s, dev_t rdev)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].fd >= 0 && S_ISBLK(s->e[i].st.st_mode) && s->e[i].st.st_rdev == rdev)
            return true;
    return false;
}

static bool file_allowed(const struct dyn_scope *s, const struct stat *st)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].fd >= 0 && S_ISREG(s->e[i].st.st_mode) && s->e[i].st.st_dev == st->st_dev &&
            s->e[i].st.st_ino == st->st_ino)
            return true;
    return false;
}

static int open_error(const char *path, enum reach how, int e, struct iof_diag *diag)
{
    if (how == REACH_IDENTITY && (e == ELOOP || e == EXDEV))
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s' is not inside this agent's --allow paths (it leads "
                            "through a /proc magic link)",
                            path);
    if (e == ELOOP)
        return iof_diag_set(
            diag, IOF_EDENIED, "target '%s': a symbolic link on the way; links are not followed %s",
            path, how == REACH_WORKDIR ? "in the workdir" : "under an --allow directory");
    if (e == EXDEV)
        return iof_diag_set(diag, IOF_EDENIED, "target '%s': leads outside %s", path,
                            how == REACH_WORKDIR ? "the workdir" : "its --allow directory");
    return iof_diag_set(diag, -e, "target '%s': %s", path, strerror(e));
}

/* Whether the object in *st may be a target reached `how`. */
static int judge(const struct dyn_scope *s, const char *path, enum reach how, const struct stat *st,
                 struct iof_diag *diag)
{
    if (S_ISREG(st->st_mode)) {
        if (how == REACH_IDENTITY && !file_allowed(s, st))
            return iof_diag_set(diag, IOF_EDENIED,
                                "target '%s' is not inside this agent's --allow paths", path);
        if (st->st_nlink != 1)
            return iof_diag_set(diag, IOF_EDENIED,
                                "target '%s': has %ju links; a file with more than one name "
                                "could be one outside the allowed paths",
                                path, (uintmax_t)st->st_nlink);
        return 0;
    }
    if (how == REACH_WORKDIR)
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s': not a regular file; test files in the workdir must be",
                            path);
    if (S_ISBLK(st->st_mode)) {
        if (!dev_allowed(s, st->st_rdev))
            return iof_diag_set(diag, IOF_EDENIED,
                                "target '%s': block device %u:%u is not one this agent's "
                                "--allow names",
                                path, major(st->st_rdev), minor(st->st_rdev));
        return 0;
    }
    if (how == REACH_IDENTITY)
        return iof_diag_set(diag, IOF_EDENIED,
                            "target '%s' is not inside this agent's --allow paths", path);
    return iof_diag_set(diag, IOF_ETARGET, "target '%s': not a regular file or block device", path);
}

static bool same_object(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
           (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT) && a->st_rdev == b->st_rdev;
}

int dyn_scope_open(struct dyn_scope *s, const char *path, int flags, struct stat *st_out,
                   struct iof_diag *diag)
{
    enum reach how = REACH_IDENTITY;
    const char *rest = NULL;
    int root = -1, pfd, fd, r, fl;
    struct stat st, st2;

    r = dyn_scope_check_name(path, diag);
    if (r)
        return r;
    if (path[0] != '/') {
        how = REACH_WORKDIR;
        root = s->wfd;
        rest = path;
    } else {
        if (has_dotdot(path))
            return iof_diag_set(diag, IOF_EDENIED, "target '%s': '..' is not allowed", path);
        for (size_t i = 0; i < s->n && !rest; i++) {
            const struct scope_entry *e = &s->e[i];
            if (e->fd < 0 || !S_ISDIR(e->st.st_mode))
                continue;
            rest = under(path, e->given, e->glen);
            if (!rest)
                rest = under(path, e->real, e->rlen);
            if (rest) {
                how = REACH_BENEATH;
                root = e->fd;
            }
        }
    }
    if (how != REACH_IDENTITY && root < 0)
        return iof_diag_set(diag, -EBADF, "target '%s': the workdir is not open", path);

    /* First look without opening for I/O (no side effect of opening a
     * device), judge what is there, then open it for real and make sure it
     * is still the same object. */
    pfd = reach_open(s, how, root, rest, path, O_PATH | O_CLOEXEC);
    if (pfd < 0)
        return open_error(path, how, -pfd, diag);
    if (fstat(pfd, &st) < 0) {
        r = -errno;
        close(pfd);
        return iof_diag_set(diag, r, "target '%s': %s", path, strerror(-r));
    }
    r = judge(s, path, how, &st, diag);
    if (r || (flags & O_PATH)) {
        if (r)
            close(pfd);
        else if (st_out)
            *st_out = st;
        return r ? r : pfd;
    }
    close(pfd);
    fl = flags | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
    if (!S_ISBLK(st.st_mode))
        fl &= ~O_EXCL;
    fd = reach_open(s, how, root, rest, path, fl);
    if (fd < 0)
        return -fd == EBUSY ? iof_diag_set(diag, -EBUSY,
                                           "target '%s': refusing to write: the device is in use "
                                           "(mounted, or holds a mounted partition or a "
                                           "device-mapper, md or swap member)",
                                           path)
                            : open_error(path, how, -fd, diag);
    if (fstat(fd, &st2) < 0 || !same_object(&st, &st2)) {
        close(fd);
        return iof_diag_set(diag, IOF_EDENIED, "target '%s': changed while it was being opened",
                            path);
    }
    /* O_NONBLOCK only kept a FIFO swapped in from blocking the open. */
    if (fcntl(fd, F_SETFL, (flags & O_DIRECT)) < 0) {
        r = -errno;
        close(fd);
        return iof_diag_set(diag, r, "target '%s': %s", path, strerror(-r));
    }
    if (st_out)
        *st_out = st2;
    return fd;
}

int dyn_scope_open_parent(struct dyn_scope *s, const char *path, const char **base,
                          struct iof_diag *diag)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int fd;

    *base = slash ? slash + 1 : path;
    if (path[0] == '/' || has_dotdot(path) || !**base)
        return iof_diag_set(diag, IOF_EDENIED, "target '%s': not a test-file name", path);
    if (slash) {
        if ((size_t)(slash - path) >= sizeof(dir))
            return iof_diag_set(diag, -ENAMETOOLONG, "target '%s': path too long", path);
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    } else {
        snprintf(dir, sizeof(dir), ".");
    }
    /* Not O_DIRECTORY: a symbolic link in its place must read as one (ELOOP). */
    fd = open_beneath(s->wfd, dir, O_PATH | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
            close(fd);
            fd = -ENOTDIR;
        }
    }
    if (fd < 0)
        return open_error(path, REACH_WORKDIR, -fd, diag);
    return fd;
}

/* --- exclusive claims on written devices ------------------------------------------ */

static struct scope_hold *hold_find(struct dyn_scope *s, dev_t rdev)
{
    for (size_t i = 0; i < s->nholds; i++)
        if (s->holds[i].rdev == rdev)
            return &s->holds[i];
    return NULL;
}

int dyn_scope_hold(struct dyn_scope *s, const char *path, dev_t rdev, bool destructive,
                   struct iof_diag *diag)
{
    struct scope_hold h = {.rdev = rdev, .refs = 1}, *grown, *have;
    struct stat st;
    int r = 0;

    pthread_mutex_lock(&s->lock);
    have = hold_find(s, rdev);
    if (have) {
        have->refs++;
        goto out;
    }
    h.fd = dyn_scope_open(s, path, O_RDWR | O_EXCL, &st, diag);
    if (h.fd < 0) {
        r = h.fd;
        goto out;
    }
    if (!S_ISBLK(st.st_mode) || st.st_rdev != rdev)
        r = iof_diag_set(diag, IOF_EDENIED, "target '%s': changed while it was being opened", path);
    else if (ioctl(h.fd, BLKGETSIZE64, &h.size) < 0)
        r = iof_diag_set(diag, -errno, "target '%s': cannot read the device size: %s", path,
                         strerror(errno));
    else
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
    pthread_mutex_unlock(&s->lock);
    return r;
}

void dyn_scope_release(struct dyn_scope *s, dev_t rdev, bool wrote)
{
    struct scope_hold *h;
    struct dyn_dev_ends now;

    pthread_mutex_lock(&s->lock);
    h = hold_find(s, rdev);
    if (h)
        h->wrote |= wrote;
    if (h && --h->refs == 0) {
        /* Stamp what this test wrote, so the next run knows the data is
         * iofleet's: at the ends, or, on a device whose ends were zero,
         * anywhere (the next test's check reads every MiB of its first GiB,
         * and would take unmarked data there for someone else's). Ends
         * that held data and are as they were keep what they hold: the
         * marker already there, or what --allow-destructive let the test
         * write around. A test that wrote nothing leaves the device as it
         * found it. */
        if (h->wrote && dyn_devguard_ends(h->fd, h->size, &now, NULL) == 0 &&
            (now.hash != h->before.hash ? !now.zero : h->before.zero))
            dyn_devguard_mark(h->fd, h->size);
        close(h->fd);
        *h = s->holds[--s->nholds];
    }
    pthread_mutex_unlock(&s->lock);
}
