/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/posix.h - the POSIX file calls the portable part of the
 * agent makes (test files, the ledger, the verify state: openat beneath a
 * directory's descriptor, fstat, pread/pwrite, mmap...), for the Windows
 * build: force-included into every file of dynamo/ there
 * (cmake/windows.cmake), as common/os/os.h is into common/, so that dynamo/
 * keeps no #ifdef. Implemented with Win32 in dynamo/os/windows/posix.c.
 *
 * A descriptor is msvcrt's (_open_osfhandle over a HANDLE); a directory's
 * descriptor holds a handle opened with FILE_FLAG_BACKUP_SEMANTICS, and a
 * name relative to it is resolved from the directory's final path
 * (GetFinalPathNameByHandleW): a name of one component, never ".." nor a
 * path. The last component is opened with FILE_FLAG_OPEN_REPARSE_POINT and
 * a reparse point (symbolic link, junction) is refused with ELOOP, as
 * O_NOFOLLOW refuses a symbolic link. `struct stat` is this file's: the
 * 64-bit file id and volume serial as st_ino and st_dev (msvcrt's st_ino is
 * 16 bits and always 0), the allocation as st_blocks. geteuid() is 0, and
 * a regular file's st_uid 0 only when dyn_win_file_handle_check passes on
 * its handle (owner SYSTEM, Administrators or the agent's account, no one
 * else may write it; 1 otherwise), so that `st.st_uid == geteuid()` means
 * on Windows what it means on Linux: the agent's own file. */
#ifndef IOF_DYNAMO_OS_WINDOWS_POSIX_H
#define IOF_DYNAMO_OS_WINDOWS_POSIX_H
#ifdef _WIN32

#include <dirent.h>
#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

/* open(2) flags msvcrt lacks, in bits it never uses. O_NONBLOCK and
 * O_NOCTTY mean nothing for files on Windows. */
#define O_NOFOLLOW 0x01000000
#define O_PATH 0x02000000
#define O_DIRECT 0x04000000 /* FILE_FLAG_NO_BUFFERING | WRITE_THROUGH | OVERLAPPED */
#define O_DIRECTORY 0x08000000
#define O_CLOEXEC _O_NOINHERIT
#define O_NONBLOCK 0
#define O_NOCTTY 0
#define AT_FDCWD (-100)
#define AT_SYMLINK_NOFOLLOW 0x100

#ifndef S_IFLNK
#define S_IFLNK 0xA000
#endif
#ifndef S_ISLNK
#define S_ISLNK(m) (((m)&S_IFMT) == S_IFLNK)
#endif
#ifndef S_IFSOCK
#define S_IFSOCK 0xC000
#endif
#ifndef S_ISSOCK
#define S_ISSOCK(m) (((m)&S_IFMT) == S_IFSOCK)
#endif

/* Device and file numbers as wide as Linux's (msvcrt's ino_t is 16 bits). */
#define dev_t uint64_t
#define ino_t uint64_t

struct dyn_win_stat {
    uint64_t st_dev;  /* the volume's serial number */
    uint64_t st_ino;  /* the file id on it */
    uint64_t st_rdev; /* a disk or volume: its device number
                         (dynamo/os/windows/scope.c) */
    uint64_t st_nlink;
    uint64_t st_size;
    uint64_t st_blocks; /* allocated bytes / 512 */
    unsigned st_mode;
    unsigned st_uid, st_gid;
    time_t st_atime, st_mtime, st_ctime;
};
#undef stat /* mingw's own, with _FILE_OFFSET_BITS=64 */
#undef fstat
#define stat dyn_win_stat
#define fstat dyn_win_fstat
#define fstatat dyn_win_fstatat
int dyn_win_fstat(int fd, struct dyn_win_stat *st);
int dyn_win_fstatat(int dirfd, const char *name, struct dyn_win_stat *st, int flags);

#define openat dyn_win_openat
int dyn_win_openat(int dirfd, const char *name, int flags, ...);
#define unlinkat dyn_win_unlinkat
int dyn_win_unlinkat(int dirfd, const char *name, int flags);
#define fdopendir dyn_win_fdopendir
DIR *dyn_win_fdopendir(int fd);

#define pread dyn_win_pread
#define pwrite dyn_win_pwrite
ssize_t dyn_win_pread(int fd, void *buf, size_t len, int64_t off);
ssize_t dyn_win_pwrite(int fd, const void *buf, size_t len, int64_t off);
#define fsync dyn_win_fsync
int dyn_win_fsync(int fd);

#define geteuid dyn_win_geteuid
unsigned dyn_win_geteuid(void);
#define realpath dyn_win_realpath
char *dyn_win_realpath(const char *path, char *resolved);
/* mkdir(path, mode): msvcrt's takes no mode. A mode that gives the group
 * and others nothing (0700) makes the directory private: a DACL of its own
 * (dyn_win_private_dir_sd: SYSTEM, Administrators, the agent's account), not
 * the one its parent passes on; any other mode takes the inherited DACL. */
#define mkdir(path, mode) dyn_win_mkdir(path, mode)
int dyn_win_mkdir(const char *path, unsigned mode);

/* Aligned memory that free() releases: blocks from posix_memalign are
 * noted (a few per worker), free() looks them up. */
#define posix_memalign dyn_win_posix_memalign
int dyn_win_posix_memalign(void **p, size_t align, size_t size);
#define free(p) dyn_win_free(p)
void dyn_win_free(void *p);

/* The handle behind a descriptor, and its final path (UTF-8, cap bytes):
 * 0 or a negative errno. */
int dyn_win_fd_path(int fd, char *buf, size_t cap);

/* ---- the layer's own Windows helpers, for its files and tests (the
 * Windows types as void *: this header includes no <windows.h>) ---- */

struct iof_diag;

/* Who may change the agent's workdir (dynamo/os/windows/acl.c). The rights
 * that let an account change what a directory holds or who may (full
 * control, write, write data, append data, delete, delete children, change
 * permissions, take ownership): any of them granted to anyone but SYSTEM,
 * BUILTIN\Administrators, the agent's own account or CREATOR OWNER (who
 * becomes the agent on what the agent makes) refuses the directory.
 *
 * dyn_win_dir_sd_check judges the security descriptor `sd` of the directory
 * `path` (named in the message; `what` is "workdir" or the like), `self` the
 * agent's account (a SID): 0 when its owner is SYSTEM, Administrators or
 * `self` and no allowing ACE (also one only inherited by what the directory
 * holds) grants one of those rights to another account; else IOF_EDENIED
 * with diag naming the path, the account and the right, e.g. "workdir
 * 'C:\iofleet': BUILTIN\Users may write data (add files) in it: only SYSTEM,
 * Administrators and the agent's account (HOST\agent) may; ...". A missing
 * DACL lets anyone do anything: refused too. Deny ACEs are not weighed (an
 * allow the directory does not need is refused even when a deny masks it). */
int dyn_win_dir_sd_check(void *sd, void *self, const char *what, const char *path,
                         struct iof_diag *diag);
/* The same judgement for a test file: its owner one of the three, no
 * allowing ACE that applies to it granting anyone else full control, write,
 * write data, append data, delete, change permissions or take ownership;
 * else IOF_EDENIED, e.g. "test file 'a.dat': not a plain file of the
 * agent's user: Everyone may write its data: only SYSTEM, Administrators and
 * the agent's account (HOST\agent) may; remove it and let the agent make it
 * again". */
int dyn_win_file_sd_check(void *sd, void *self, const char *what, const char *path,
                          struct iof_diag *diag);
/* A test file judged on its opened handle (a HANDLE with READ_CONTROL), as
 * the Linux agent judges one on its descriptor: not a reparse point, a
 * regular file, one link (nNumberOfLinks), then dyn_win_file_sd_check on its
 * owner and DACL (GetSecurityInfo) for the agent's account. 0, or
 * IOF_EDENIED (or a negative errno) with diag naming `what` 'path', the
 * owner or account, and the reason. */
int dyn_win_file_handle_check(void *h, const char *what, const char *path, struct iof_diag *diag);
/* dyn_win_dir_sd_check() on the directory `path` (its owner and DACL read
 * from a handle opened without following a reparse point) for the agent's
 * account (its process token's user). */
int dyn_win_dir_check(const char *what, const char *path, struct iof_diag *diag);
/* The agent's account (its process token's user) into `sid` (cap bytes;
 * SECURITY_MAX_SID_SIZE is enough): 0 or a negative errno. */
int dyn_win_self_sid(void *sid, unsigned long cap);
/* A new security descriptor (LocalFree it) for a directory only SYSTEM,
 * Administrators and the agent's account may use, inherited by what it will
 * hold and not from its parent: what mode 0700 means on Linux. NULL on
 * failure (GetLastError). */
void *dyn_win_private_dir_sd(void);

/* The service's log in the Windows event log (Application, source
 * DYN_WIN_EVENT_SOURCE; dynamo/os/windows/eventlog.c): what the agent
 * writes to stderr, one event per line, through a pipe in place of
 * descriptor 2 and a thread that reports each line with ReportEventW. */
#define DYN_WIN_EVENT_SOURCE L"iofleet-dynamo"
/* The event type (EVENTLOG_*_TYPE) of one log line: "error" as its level
 * word (common/log.c's) an error, "warning" a warning, else information. */
unsigned short dyn_win_event_type(const char *line);
/* From now on, each line written to descriptor 2 becomes an event of
 * `source`. 0, or a negative error with diag saying why (stderr is then
 * unchanged). */
int dyn_win_eventlog_start(const wchar_t *source, struct iof_diag *diag);
/* Gives descriptor 2 back, reports what was left, and ends the thread; the
 * numbers of lines reported and of those ReportEventW refused (either may
 * be NULL). */
void dyn_win_eventlog_stop(unsigned *reported, unsigned *failed);

/* How Windows asks the agent to stop (dynamo/os/windows/stop.c): the
 * request, kept with its time for dyn_os_agent_stopped()'s line (`what`:
 * "Ctrl-C", "the service's stop"... a static string), then
 * dyn_agent_request_stop(): its 0 or -ESRCH (no agent runs yet, or any
 * more). */
int dyn_win_stop_request(const char *what);
/* Puts the console's control handler (Ctrl-C, Ctrl-Break, the console's
 * close: dyn_win_stop_request) first in the process's list; at each
 * dyn_os_process_init(), so after libuv's too. */
void dyn_win_stop_console_init(void);

#endif
#endif
