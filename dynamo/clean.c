/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/clean.c - the ledger of test files made in the workdir, and their
 * removal (dynamo/clean.h). */
#include "dynamo/clean.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "dynamo/genmap.h"
#include "dynamo/os/os.h"
#include "dynamo/scope.h"

/* The longest ledger read: far more entries than any workdir holds. */
#define LEDGER_MAX ((off_t)64 << 20)

static int ledger_open(struct dyn_scope *s, int flags, struct iof_diag *diag)
{
    const char *base;
    int dirfd = dyn_scope_open_parent(s, DYN_LEDGER_NAME, &base, diag);
    int fd, r;

    if (dirfd < 0)
        return dirfd;
    fd = openat(dirfd, base, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
    r = fd < 0 ? -errno : 0;
    close(dirfd);
    if (r)
        return r == -ENOENT && !(flags & O_CREAT)
                   ? r
                   : iof_diag_set(diag, r, "test-file ledger '%s' in the workdir: %s",
                                  DYN_LEDGER_NAME, strerror(-r));
    r = dyn_os_file_check(fd, "test-file ledger", DYN_LEDGER_NAME, diag);
    if (r) {
        close(fd);
        return r;
    }
    return fd;
}

/* dyn_clean_identify() whatever the number of links, which goes to *nlink. */
static int clean_identify_links(int dirfd, const char *base, struct dyn_created *f, uint64_t *nlink)
{
    struct dyn_os_file_id id;
    int r = dyn_os_file_id(dirfd, base, &id);

    if (r)
        return r;
    if (!id.regular || !id.mine)
        return -EPERM;
    f->dev = id.dev;
    f->ino = id.ino;
    f->size = id.size;
    f->btime_ns = id.btime;
    *nlink = id.nlink;
    return 0;
}

int dyn_clean_identify(int dirfd, const char *base, struct dyn_created *f)
{
    uint64_t nlink;
    int r = clean_identify_links(dirfd, base, f, &nlink);

    return r ? r : nlink != 1 ? -EPERM : 0;
}

/* Whether now (read with clean_identify_links) is the object f noted. */
static bool same_file(const struct dyn_created *now, const struct dyn_created *f)
{
    return now->dev == f->dev && now->ino == f->ino && now->size == f->size &&
           now->btime_ns == f->btime_ns;
}

int dyn_clean_note(struct dyn_scope *s, const struct dyn_created *f, struct iof_diag *diag)
{
    char line[IOF_PATH_MAX + 64];
    int fd, n, r = 0;

    if (f->path[0] == '/' || strchr(f->path, '\n'))
        return iof_diag_set(diag, -EINVAL, "target '%s': not a test-file name", f->path);
    fd = ledger_open(s, O_WRONLY | O_APPEND | O_CREAT, diag);
    if (fd < 0)
        return fd;
    n = snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n", f->dev,
                 f->ino, f->size, f->btime_ns, f->path);
    /* One write: an O_APPEND line is never interleaved. */
    if (n < 0 || (size_t)n >= sizeof(line) || write(fd, line, (size_t)n) != n)
        r = iof_diag_set(diag, n > 0 && (size_t)n < sizeof(line) ? -errno : -ENAMETOOLONG,
                         "test-file ledger '%s': cannot note '%s'", DYN_LEDGER_NAME, f->path);
    close(fd);
    return r;
}

static void report_name(struct dyn_clean_report *r, const char *path)
{
    if (r->nremoved < DYN_CLEAN_NAMES_MAX) {
        char *dup = strdup(path);
        if (dup)
            r->removed[r->nremoved++] = dup;
    }
}

/* The verify state of `path`: a plain file of ours in the workdir. */
static void remove_state(struct dyn_scope *s, const char *path)
{
    char name[DYN_GENMAP_STATE_NAME_MAX];
    const char *base;
    struct iof_diag d = {{0}};
    struct stat st;
    int dirfd;

    dyn_genmap_state_name(path, name, sizeof(name));
    dirfd = dyn_scope_open_parent(s, name, &base, &d);
    if (dirfd < 0)
        return;
    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_nlink == 1 && st.st_uid == geteuid())
        unlinkat(dirfd, base, 0);
    close(dirfd);
}

/* The test file `base` in dirfd judged on its opened descriptor before it
 * is removed (dyn_os_file_check); a refusal is logged: 0 or its error. */
static int judge_open(int dirfd, const char *base, const char *path)
{
    struct iof_diag d = {{0}};
    int fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int r = fd < 0 ? iof_diag_set(&d, -errno, "test file '%s': %s", path, strerror(errno))
                   : dyn_os_file_check(fd, "test file", path, &d);

    if (fd >= 0)
        close(fd);
    if (r)
        IOF_WARN("%s; left in place", d.msg);
    return r;
}

/* 1 removed, 0 left alone (gone, or no longer the object noted), or a
 * negative error (ours, but it could not be removed). */
static int remove_one(struct dyn_scope *s, const struct dyn_created *f, struct dyn_clean_report *r)
{
    const char *base;
    struct iof_diag d = {{0}};
    struct dyn_created now;
    uint64_t nlink;
    int dirfd, rc = 0;

    if (f->path[0] == '/' || !f->path[0])
        return 0;
    dirfd = dyn_scope_open_parent(s, f->path, &base, &d);
    if (dirfd < 0)
        return 0; /* its directory is gone or leads elsewhere: nothing of ours there */
    if (clean_identify_links(dirfd, base, &now, &nlink) == 0 && same_file(&now, f)) {
        /* A second name made since could be anywhere (another user's file
         * by then): the agent removes only a file that is its one name. */
        if (nlink != 1) {
            rc = -EMLINK;
            r->failed++;
            IOF_WARN("test file '%s': has %" PRIu64 " links; left in place (remove the other "
                     "names, then clean again)",
                     f->path, nlink);
        } else if ((rc = judge_open(dirfd, base, f->path)) < 0) {
            r->failed++;
        } else if (unlinkat(dirfd, base, 0) == 0) {
            r->files++;
            r->bytes += now.size;
            report_name(r, f->path);
            rc = 1;
        } else {
            rc = -errno;
            r->failed++;
            IOF_WARN("test file '%s': cannot remove: %s", f->path, strerror(errno));
        }
    }
    close(dirfd);
    if (rc == 1)
        remove_state(s, f->path);
    return rc;
}

static int ledger_walk(struct dyn_scope *s, bool clean, struct dyn_clean_report *r,
                       struct iof_diag *diag);

void dyn_clean_files(struct dyn_scope *s, const struct dyn_created *f, size_t n,
                     struct dyn_clean_report *r)
{
    struct iof_diag d = {{0}};

    for (size_t i = 0; i < n; i++)
        remove_one(s, &f[i], r);
    /* Their lines go from the ledger (an unreadable one stays as it is). */
    if (r->files)
        ledger_walk(s, false, r, &d);
}

/* Parses one ledger line ("DEV INO SIZE BTIME PATH", no newline) into *f. */
static bool ledger_parse(const char *line, struct dyn_created *f)
{
    char *end;
    const char *p = line;

    errno = 0;
    f->dev = strtoull(p, &end, 10);
    if (end == p || *end != ' ' || errno)
        return false;
    p = end + 1;
    f->ino = strtoull(p, &end, 10);
    if (end == p || *end != ' ' || errno)
        return false;
    p = end + 1;
    f->size = strtoull(p, &end, 10);
    if (end == p || *end != ' ' || errno)
        return false;
    p = end + 1;
    f->btime_ns = strtoull(p, &end, 10);
    if (end == p || *end != ' ' || errno)
        return false;
    p = end + 1;
    if (!*p || *p == '/' || strlen(p) >= sizeof(f->path))
        return false;
    memcpy(f->path, p, strlen(p) + 1);
    return true;
}

/* Every verify state file in the workdir's top directory (".iofleet-
 * verify-*.gen", a plain file of ours) but those of the test files still
 * named in the ledger (`keep`, nkeep bytes of ledger lines). */
static void remove_states(struct dyn_scope *s, const char *keep, size_t nkeep)
{
    static const char pre[] = ".iofleet-verify-", suf[] = ".gen";
    struct iof_diag d = {{0}};
    const char *base;
    struct dirent *e;
    DIR *dir;
    int pfd = dyn_scope_open_parent(s, DYN_LEDGER_NAME, &base, &d), fd;

    if (pfd < 0)
        return;
    fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        close(pfd);
        return;
    }
    while ((e = readdir(dir)) != NULL) {
        size_t l = strlen(e->d_name);
        struct stat st;
        bool kept = false;
        if (l <= sizeof(pre) - 1 + sizeof(suf) - 1 || strncmp(e->d_name, pre, sizeof(pre) - 1) ||
            strcmp(e->d_name + l - (sizeof(suf) - 1), suf))
            continue;
        for (const char *line = keep; line < keep + nkeep;) {
            const char *nl = memchr(line, '\n', (size_t)(keep + nkeep - line));
            char one[IOF_PATH_MAX + 128], name[DYN_GENMAP_STATE_NAME_MAX];
            struct dyn_created f;
            size_t n = (size_t)((nl ? nl : keep + nkeep) - line);
            if (n < sizeof(one)) {
                memcpy(one, line, n);
                one[n] = '\0';
                if (ledger_parse(one, &f)) {
                    dyn_genmap_state_name(f.path, name, sizeof(name));
                    kept = kept || !strcmp(name, e->d_name);
                }
            }
            line = nl ? nl + 1 : keep + nkeep;
        }
        if (!kept && fstatat(pfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_uid == geteuid())
            unlinkat(pfd, e->d_name, 0);
    }
    closedir(dir);
    close(pfd);
}

/* Whether the file f names is still the object noted. */
static bool still_there(struct dyn_scope *s, const struct dyn_created *f)
{
    struct iof_diag d = {{0}};
    struct dyn_created now;
    const char *base;
    uint64_t nlink;
    bool same;
    int dirfd = dyn_scope_open_parent(s, f->path, &base, &d);

    if (dirfd < 0)
        return false;
    same = clean_identify_links(dirfd, base, &now, &nlink) == 0 && same_file(&now, f);
    close(dirfd);
    return same;
}

/* Goes through the ledger: `clean` removes every file it names (keeping
 * the lines of those that could not be removed, and removing the verify
 * state of the others); otherwise only the lines of files no longer there
 * are dropped. An empty ledger is removed. */
static int ledger_walk(struct dyn_scope *s, bool clean, struct dyn_clean_report *r,
                       struct iof_diag *diag)
{
    struct stat st;
    char *buf, *line, *next, *keep;
    size_t nkeep = 0;
    ssize_t got;
    int fd = ledger_open(s, O_RDWR, diag);

    if (fd == -ENOENT)
        return 0;
    if (fd < 0)
        return fd;
    if (fstat(fd, &st) < 0 || st.st_size > LEDGER_MAX) {
        close(fd);
        return iof_diag_set(diag, -EFBIG, "test-file ledger '%s': larger than %jd bytes",
                            DYN_LEDGER_NAME, (intmax_t)LEDGER_MAX);
    }
    buf = malloc((size_t)st.st_size + 1);
    keep = malloc((size_t)st.st_size + 1);
    got = buf ? pread(fd, buf, (size_t)st.st_size, 0) : -1;
    if (!buf || !keep || got < 0) {
        int e = !buf || !keep ? ENOMEM : errno;
        free(buf);
        free(keep);
        close(fd);
        return iof_diag_set(diag, -e, "test-file ledger '%s': %s", DYN_LEDGER_NAME, strerror(e));
    }
    buf[got] = '\0';
    for (line = buf; line && *line; line = next) {
        struct dyn_created f;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!ledger_parse(line, &f))
            continue; /* not a line of ours: dropped */
        if (clean ? remove_one(s, &f, r) < 0 : still_there(s, &f)) {
            size_t l = strlen(line);
            memcpy(keep + nkeep, line, l);
            keep[nkeep + l] = '\n';
            nkeep += l + 1;
        }
    }
    if (clean)
        remove_states(s, keep, nkeep);
    if (nkeep == 0) {
        const char *base;
        int dirfd = dyn_scope_open_parent(s, DYN_LEDGER_NAME, &base, diag);
        if (dirfd >= 0) {
            unlinkat(dirfd, base, 0);
            close(dirfd);
        }
    } else if (ftruncate(fd, 0) < 0 || pwrite(fd, keep, nkeep, 0) != (ssize_t)nkeep) {
        IOF_WARN("test-file ledger '%s': cannot rewrite: %s", DYN_LEDGER_NAME, strerror(errno));
    }
    free(buf);
    free(keep);
    close(fd);
    return 0;
}

void dyn_clean_report_free(struct dyn_clean_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nremoved; i++)
        free(r->removed[i]);
    r->nremoved = 0;
}

int dyn_clean_workdir(struct dyn_scope *s, struct dyn_clean_report *r, struct iof_diag *diag)
{
    return ledger_walk(s, true, r, diag);
}
