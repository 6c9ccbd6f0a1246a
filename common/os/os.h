/* SPDX-License-Identifier: Apache-2.0 */
/* common/os/os.h - the portability layer of common/: what common/ needs
 * that the C library of the other system does not give the same way. On
 * Linux it declares nothing; on Windows (mingw-w64) it declares what
 * common/os/win.c implements with the Win32 API. */
#ifndef IOF_COMMON_OS_OS_H
#define IOF_COMMON_OS_OS_H

#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
/* The Windows build force-includes this header (cmake/windows.cmake), so
 * what follows stands in for the C library's gaps without an #include or an
 * #ifdef in the files that use them. */

/* POSIX strndup, which msvcrt lacks. */
char *strndup(const char *s, size_t n);

/* The symbolic name of errno value e ("ENOENT"), or NULL: what glibc's
 * strerrorname_np gives common/err.c on Linux. Errors cross the wire by
 * name, since Windows' numbers differ from Linux's past ERANGE. */
const char *iof_os_errname(int e);

/* The negative errno for a Win32 error code (GetLastError()): -ENOENT for
 * ERROR_FILE_NOT_FOUND, -EACCES for ERROR_ACCESS_DENIED, ...; -EIO for one
 * without a closer meaning. */
int iof_os_win_errno(unsigned long err);

/* Monotonic time in ns from QueryPerformanceCounter (the frequency read
 * once). mingw-w64's clock_gettime(CLOCK_MONOTONIC) reads the same counter
 * but asks for the frequency on every call. */
uint64_t iof_os_now_ns(void);

/* POSIX uid_t, which mingw-w64 lacks: common/net.h names a unix-domain
 * peer's user with it (never known on Windows: common/os/net_win.c). */
typedef unsigned int uid_t;

/* Whether the file at path (a private key) may be read by a group as wide as
 * Everyone, Authenticated Users, Users, Guests or Anonymous, or has no DACL at
 * all (anyone may): 1 with the group's name in who (cap bytes), 0 when not,
 * or a negative errno when its ACL cannot be read. What mode bits tell on
 * Linux (common/tls.c warns of such a key). */
int iof_os_key_exposed(const char *path, char *who, size_t cap);
/* The same judgement of a DACL (a PACL; NULL: none), for the tests. */
int iof_os_dacl_exposed(const void *dacl, char *who, size_t cap);

/* Windows' stat has no group or other permission bits (msvcrt copies the
 * owner's into them, so testing them would condemn every file): who may read
 * a key there is its ACL's business (iof_os_key_exposed). Zero makes such
 * tests false. */
#include <sys/stat.h>
#undef S_IRWXG
#undef S_IRWXO
#undef S_IRGRP
#undef S_IROTH
#define S_IRWXG 0
#define S_IRWXO 0
#define S_IRGRP 0
#define S_IROTH 0
#else
/* Linux: the mode bits common/tls.c reads say it all. */
static inline int iof_os_key_exposed(const char *path, char *who, size_t cap)
{
    (void)path, (void)who, (void)cap;
    return 0;
}
#endif

#endif
