/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/acl.h - who may change the agent's workdir on Windows:
 * its owner and DACL judged as the Linux agent judges the workdir's owner
 * (dynamo/os/linux/scope.c), and the private DACL the agent gives a
 * directory it makes with mode 0700 (mkdir in dynamo/os/windows/posix.c).
 * Windows only. */
#ifndef IOF_DYNAMO_OS_WINDOWS_ACL_H
#define IOF_DYNAMO_OS_WINDOWS_ACL_H

#ifdef _WIN32
#include <stddef.h>
#include <windows.h>

#include "common/err.h"

/* The rights that let an account change what a directory holds or who may:
 * any of them granted to anyone but SYSTEM, BUILTIN\Administrators, the
 * agent's own account or CREATOR OWNER (who becomes the agent on what the
 * agent makes) refuses the directory. */
#define DYN_WIN_DIR_WRITE_RIGHTS                                                                   \
    (GENERIC_ALL | GENERIC_WRITE | FILE_WRITE_DATA | FILE_APPEND_DATA | DELETE |                   \
     FILE_DELETE_CHILD | WRITE_DAC | WRITE_OWNER)

/* Judges the security descriptor `sd` of the directory `path` (named in the
 * message; `what` is "workdir" or the like), `self` the agent's account:
 * 0 when its owner is SYSTEM, BUILTIN\Administrators or `self` and no
 * allowing ACE (also one only inherited by what the directory holds) grants
 * one of DYN_WIN_DIR_WRITE_RIGHTS to another account; else IOF_EDENIED with
 * diag naming the path, the account and the right, e.g. "workdir
 * 'C:\iofleet': BUILTIN\Users may write data (add files) in it: only SYSTEM,
 * Administrators and the agent's account (HOST\agent) may; ...". A missing
 * DACL lets anyone do anything: refused too. Deny ACEs are not weighed (an
 * allow the directory does not need is refused even when a deny masks it). */
int dyn_win_dir_sd_check(PSECURITY_DESCRIPTOR sd, PSID self, const char *what, const char *path,
                         struct iof_diag *diag);

/* dyn_win_dir_sd_check() on the directory `path` (its owner and DACL read
 * from a handle opened without following a reparse point) for the agent's
 * account (its process token's user). */
int dyn_win_dir_check(const char *what, const char *path, struct iof_diag *diag);

/* The agent's account (its process token's user) into `buf` (cap bytes,
 * SECURITY_MAX_SID_SIZE is enough): 0 or a negative errno. */
int dyn_win_self_sid(PSID buf, DWORD cap);

/* A new security descriptor (LocalFree it) for a directory only SYSTEM,
 * BUILTIN\Administrators and the agent's account may use, inherited by what
 * it will hold and not from its parent: what mode 0700 means on Linux.
 * NULL on failure (GetLastError). */
PSECURITY_DESCRIPTOR dyn_win_private_dir_sd(void);

#endif
#endif
