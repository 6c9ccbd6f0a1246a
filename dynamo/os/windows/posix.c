/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/posix.c - the POSIX file calls of dynamo/os/windows/posix.h
 * and its <sys/...> headers with Win32: names resolved from a directory's
 * handle, reparse points refused at the last component, positioned I/O
 * with an OVERLAPPED offset (also on handles opened overlapped for the
 * windows engine, without a completion packet), file mappings, aligned
 * memory that free() releases. */
#ifdef _WIN32
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "common/os/os.h"
#include <sys/mman.h>
#include <sys/statvfs.h>

#define PATH_W_MAX 32768

static int set_errno(int neg)
{
    errno = -neg;
    return -1;
}

static int fd_handle(int fd, HANDLE *h)
{
    intptr_t x = _get_osfhandle(fd);

    if (x == -1 || x == -2)
        return -EBADF;
    *h = (HANDLE)x;
    return 0;
}

static int utf8_to_wide(const char *s, wchar_t *out, size_t cap)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, out, (int)cap);
    return n > 0 ? 0 : -EILSEQ;
}

static int wide_to_utf8(const wchar_t *w, char *out, size_t cap)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)cap, NULL, NULL);
    return n > 0 ? 0 : -ENAMETOOLONG;
}

/* The final path of h, without the \\?\ prefix of a drive path. */
static int handle_path_w(HANDLE h, wchar_t *out, size_t cap)
{
    DWORD n = GetFinalPathNameByHandleW(h, out, (DWORD)cap, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);

    if (n == 0)
        return iof_os_win_errno(GetLastError());
    if (n >= cap)
        return -ENAMETOOLONG;
    if (!wcsncmp(out, L"\\\\?\\", 4) && out[4] && out[5] == L':')
        memmove(out, out + 4, (wcslen(out + 4) + 1) * sizeof(*out));
    return 0;
}

int dyn_win_fd_path(int fd, char *buf, size_t cap)
{
    static _Thread_local wchar_t w[PATH_W_MAX];
    HANDLE h;
    int r = fd_handle(fd, &h);

    if (!r)
        r = handle_path_w(h, w, PATH_W_MAX);
    return r ? r : wide_to_utf8(w, buf, cap);
}

/* name (one component, or "." for the directory itself) beneath the
 * directory open as dirfd, or name alone with AT_FDCWD, as a wide path. */
static int at_path(int dirfd, const char *name, wchar_t *out, size_t cap)
{
    HANDLE h;
    size_t n;
    int r;

    if (dirfd == AT_FDCWD)
        return utf8_to_wide(name, out, cap);
    if (!*name || strchr(name, '/') || strchr(name, '\\') || strchr(name, ':') ||
        !strcmp(name, ".."))
        return -EINVAL;
    if ((r = fd_handle(dirfd, &h)) < 0 || (r = handle_path_w(h, out, cap)) < 0)
        return r;
    if (!strcmp(name, "."))
        return 0;
    n = wcslen(out);
    if (n + 2 >= cap)
        return -ENAMETOOLONG;
    if (n && out[n - 1] != L'\\')
        out[n++] = L'\\';
    return utf8_to_wide(name, out + n, cap - n);
}

/* Opens name beneath dirfd. The last component is never followed when it is
 * a reparse point: refused (-ELOOP) unless link_ok (then the link itself). */
static int at_open(int dirfd, const char *name, int flags, bool link_ok, HANDLE *out)
{
    static _Thread_local wchar_t path[PATH_W_MAX];
    DWORD access = 0, disp = OPEN_EXISTING, fl = FILE_FLAG_BACKUP_SEMANTICS;
    BY_HANDLE_FILE_INFORMATION bi;
    HANDLE h;
    int r;

    if ((r = at_path(dirfd, name, path, PATH_W_MAX)) < 0)
        return r;
    if (!(flags & O_PATH)) {
        int acc = flags & (O_RDONLY | O_WRONLY | O_RDWR);
        access = acc == O_WRONLY ? GENERIC_WRITE
                 : acc == O_RDWR ? GENERIC_READ | GENERIC_WRITE
                                 : GENERIC_READ;
    } else {
        access = FILE_READ_ATTRIBUTES | READ_CONTROL; /* READ_CONTROL: the owner, for fstat */
    }
    if ((flags & O_CREAT) && (flags & O_EXCL))
        disp = CREATE_NEW;
    else if ((flags & O_CREAT) && (flags & O_TRUNC))
        disp = CREATE_ALWAYS;
    else if (flags & O_CREAT)
        disp = OPEN_ALWAYS;
    else if (flags & O_TRUNC)
        disp = TRUNCATE_EXISTING;
    if (dirfd != AT_FDCWD || (flags & O_NOFOLLOW) || link_ok)
        fl |= FILE_FLAG_OPEN_REPARSE_POINT;
    if (flags & O_DIRECT)
        fl |= FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH;
    h = CreateFileW(path, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                    disp, fl | FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return iof_os_win_errno(GetLastError());
    if (GetFileInformationByHandle(h, &bi)) {
        if ((bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) && !link_ok &&
            (fl & FILE_FLAG_OPEN_REPARSE_POINT)) {
            CloseHandle(h);
            return -ELOOP;
        }
        if ((flags & O_DIRECTORY) && !(bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
            CloseHandle(h);
            return -ENOTDIR;
        }
    }
    *out = h;
    return 0;
}

static int handle_fd(HANDLE h, int flags)
{
    int fd = _open_osfhandle((intptr_t)h, (flags & (O_WRONLY | O_RDWR | O_APPEND)) | _O_BINARY);

    if (fd < 0) {
        CloseHandle(h);
        return -EMFILE;
    }
    return fd;
}

int dyn_win_openat(int dirfd, const char *name, int flags, ...)
{
    HANDLE h;
    int r = at_open(dirfd, name, flags, false, &h);

    if (r < 0)
        return set_errno(r);
    r = handle_fd(h, flags);
    return r < 0 ? set_errno(r) : r;
}

static time_t ft_time(FILETIME ft)
{
    uint64_t t = ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
    return t < 116444736000000000ull ? 0 : (time_t)((t - 116444736000000000ull) / 10000000u);
}

static int handle_stat(HANDLE h, struct dyn_win_stat *st)
{
    BY_HANDLE_FILE_INFORMATION bi;
    FILE_STANDARD_INFO si;
    DWORD type = GetFileType(h);

    memset(st, 0, sizeof(*st));
    if (!GetFileInformationByHandle(h, &bi)) {
        /* A disk or a volume opened as a device has no file information. */
        if (type != FILE_TYPE_DISK)
            return iof_os_win_errno(GetLastError());
        st->st_mode = S_IFBLK | 0600;
        st->st_nlink = 1;
        return 0;
    }
    st->st_dev = bi.dwVolumeSerialNumber;
    st->st_ino = ((uint64_t)bi.nFileIndexHigh << 32) | bi.nFileIndexLow;
    st->st_nlink = bi.nNumberOfLinks;
    st->st_size = ((uint64_t)bi.nFileSizeHigh << 32) | bi.nFileSizeLow;
    if (bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
        st->st_mode = S_IFLNK | 0777;
    else if (bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
        st->st_mode = S_IFDIR | 0700;
    else if (type == FILE_TYPE_CHAR)
        st->st_mode = S_IFCHR | 0600;
    else if (type == FILE_TYPE_PIPE)
        st->st_mode = S_IFIFO | 0600;
    else
        st->st_mode = S_IFREG | 0600;
    /* The agent's own file (what st_uid == geteuid() asks): posix.h. */
    if (S_ISREG(st->st_mode) && dyn_win_file_handle_check(h, "file", "", NULL))
        st->st_uid = 1;
    st->st_blocks = GetFileInformationByHandleEx(h, FileStandardInfo, &si, sizeof(si))
                        ? (uint64_t)si.AllocationSize.QuadPart / 512
                        : (st->st_size + 511) / 512;
    st->st_atime = ft_time(bi.ftLastAccessTime);
    st->st_mtime = ft_time(bi.ftLastWriteTime);
    st->st_ctime = ft_time(bi.ftCreationTime);
    return 0;
}

int dyn_win_fstat(int fd, struct dyn_win_stat *st)
{
    HANDLE h;
    int r = fd_handle(fd, &h);

    if (!r)
        r = handle_stat(h, st);
    return r < 0 ? set_errno(r) : 0;
}

int dyn_win_fstatat(int dirfd, const char *name, struct dyn_win_stat *st, int flags)
{
    HANDLE h;
    int r = at_open(dirfd, name, O_PATH, (flags & AT_SYMLINK_NOFOLLOW) != 0, &h);

    if (r < 0)
        return set_errno(r);
    r = handle_stat(h, st);
    CloseHandle(h);
    return r < 0 ? set_errno(r) : 0;
}

int dyn_win_unlinkat(int dirfd, const char *name, int flags)
{
    static _Thread_local wchar_t path[PATH_W_MAX];
    int r = at_path(dirfd, name, path, PATH_W_MAX);

    (void)flags;
    if (r < 0)
        return set_errno(r);
    return DeleteFileW(path) ? 0 : set_errno(iof_os_win_errno(GetLastError()));
}

DIR *dyn_win_fdopendir(int fd)
{
    char path[4 * MAX_PATH];
    DIR *d;
    int r = dyn_win_fd_path(fd, path, sizeof(path));

    if (r < 0) {
        errno = -r;
        return NULL;
    }
    d = opendir(path);
    if (d)
        close(fd); /* the stream stands for it from now on, as POSIX's does */
    return d;
}

/* ReadFile/WriteFile at off. The event's low bit set: no completion packet
 * goes to a port the handle may be bound to (the windows engine's). */
static ssize_t pio(int fd, void *buf, size_t len, int64_t off, bool write)
{
    OVERLAPPED ov = {0};
    HANDLE h, ev;
    DWORD n = 0, e;
    BOOL ok;
    int r = fd_handle(fd, &h);

    if (r < 0)
        return set_errno(r);
    if (len > 0x40000000u)
        len = 0x40000000u;
    ev = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!ev)
        return set_errno(-ENOMEM);
    ov.Offset = (DWORD)(uint64_t)off;
    ov.OffsetHigh = (DWORD)((uint64_t)off >> 32);
    ov.hEvent = (HANDLE)((uintptr_t)ev | 1);
    ok = write ? WriteFile(h, buf, (DWORD)len, &n, &ov) : ReadFile(h, buf, (DWORD)len, &n, &ov);
    e = ok ? 0 : GetLastError();
    if (!ok && e == ERROR_IO_PENDING) {
        ok = GetOverlappedResult(h, &ov, &n, TRUE);
        e = ok ? 0 : GetLastError();
    }
    CloseHandle(ev);
    if (!ok && e == ERROR_HANDLE_EOF)
        return 0;
    if (!ok)
        return set_errno(iof_os_win_errno(e));
    return (ssize_t)n;
}

ssize_t dyn_win_pread(int fd, void *buf, size_t len, int64_t off)
{
    return pio(fd, buf, len, off, false);
}

ssize_t dyn_win_pwrite(int fd, const void *buf, size_t len, int64_t off)
{
    return pio(fd, (void *)(uintptr_t)buf, len, off, true);
}

int dyn_win_fsync(int fd)
{
    HANDLE h;
    int r = fd_handle(fd, &h);

    if (r < 0)
        return set_errno(r);
    return FlushFileBuffers(h) ? 0 : set_errno(iof_os_win_errno(GetLastError()));
}

unsigned dyn_win_geteuid(void)
{
    return 0;
}

char *dyn_win_realpath(const char *path, char *resolved)
{
    /* resolved, when given, has PATH_MAX bytes, as POSIX's realpath assumes. */
    char *r = _fullpath(resolved, path, PATH_MAX);

    if (r && GetFileAttributesA(r) == INVALID_FILE_ATTRIBUTES) {
        if (!resolved)
            free(r);
        errno = ENOENT;
        return NULL;
    }
    return r;
}

int dyn_win_mkdir(const char *path, unsigned mode)
{
    wchar_t w[MAX_PATH * 4];
    int r = utf8_to_wide(path, w, sizeof(w) / sizeof(w[0]));
    SECURITY_ATTRIBUTES sa = {.nLength = sizeof(sa)};
    BOOL ok;

    if (r < 0)
        return set_errno(r);
    if (!(mode & 077) && !(sa.lpSecurityDescriptor = dyn_win_private_dir_sd()))
        return set_errno(iof_os_win_errno(GetLastError()));
    ok = CreateDirectoryW(w, sa.lpSecurityDescriptor ? &sa : NULL);
    r = ok ? 0 : iof_os_win_errno(GetLastError());
    LocalFree(sa.lpSecurityDescriptor);
    return r ? set_errno(r) : 0;
}

/* ---- aligned memory that free() releases ---- */

#define ALIGNED_MAX 256

static SRWLOCK aligned_lock = SRWLOCK_INIT;
static void *aligned_blocks[ALIGNED_MAX];
static volatile LONG aligned_count;

int dyn_win_posix_memalign(void **p, size_t align, size_t size)
{
    void *m = _aligned_malloc(size ? size : 1, align);
    bool noted = false;

    if (!m)
        return ENOMEM;
    AcquireSRWLockExclusive(&aligned_lock);
    for (size_t i = 0; i < ALIGNED_MAX && !noted; i++)
        if (!aligned_blocks[i]) {
            aligned_blocks[i] = m;
            noted = true;
        }
    if (noted)
        InterlockedIncrement(&aligned_count);
    ReleaseSRWLockExclusive(&aligned_lock);
    if (!noted) {
        _aligned_free(m);
        return ENOMEM;
    }
    *p = m;
    return 0;
}

#undef free
void dyn_win_free(void *p)
{
    bool aligned = false;

    if (!p)
        return;
    if (InterlockedCompareExchange(&aligned_count, 0, 0) > 0) {
        AcquireSRWLockExclusive(&aligned_lock);
        for (size_t i = 0; i < ALIGNED_MAX && !aligned; i++)
            if (aligned_blocks[i] == p) {
                aligned_blocks[i] = NULL;
                aligned = true;
            }
        if (aligned)
            InterlockedDecrement(&aligned_count);
        ReleaseSRWLockExclusive(&aligned_lock);
    }
    if (aligned)
        _aligned_free(p);
    else
        free(p);
}

/* ---- <sys/statvfs.h>, <sys/mman.h> ---- */

int dyn_win_fstatvfs(int fd, struct statvfs *out)
{
    static _Thread_local wchar_t path[PATH_W_MAX];
    ULARGE_INTEGER avail, total, freeb;
    HANDLE h;
    int r = fd_handle(fd, &h);

    if (!r)
        r = handle_path_w(h, path, PATH_W_MAX);
    if (r < 0)
        return set_errno(r);
    if (!GetDiskFreeSpaceExW(path, &avail, &total, &freeb))
        return set_errno(iof_os_win_errno(GetLastError()));
    memset(out, 0, sizeof(*out));
    out->f_bsize = out->f_frsize = 1;
    out->f_blocks = total.QuadPart;
    out->f_bfree = freeb.QuadPart;
    out->f_bavail = avail.QuadPart;
    return 0;
}

void *dyn_win_mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t off)
{
    HANDLE h, map;
    void *p;
    int r = fd_handle(fd, &h);

    (void)addr, (void)flags;
    if (r < 0 || off != 0 || !(prot & PROT_WRITE)) {
        errno = r < 0 ? -r : EINVAL;
        return MAP_FAILED;
    }
    map =
        CreateFileMappingW(h, NULL, PAGE_READWRITE, (DWORD)((uint64_t)len >> 32), (DWORD)len, NULL);
    if (!map) {
        errno = -iof_os_win_errno(GetLastError());
        return MAP_FAILED;
    }
    p = MapViewOfFile(map, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, len);
    if (!p)
        errno = -iof_os_win_errno(GetLastError());
    CloseHandle(map); /* the view keeps the mapping */
    return p ? p : MAP_FAILED;
}

int dyn_win_munmap(void *addr, size_t len)
{
    (void)len;
    return UnmapViewOfFile(addr) ? 0 : set_errno(iof_os_win_errno(GetLastError()));
}
#endif
