/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/acl.c - who may change the agent's workdir and its test
 * files on Windows (declared in dynamo/os/windows/posix.h): their owner and
 * DACL judged against SYSTEM, BUILTIN\Administrators and the agent's own
 * account, as the Linux agent judges their owner (dynamo/os/linux/scope.c,
 * files.c), and the private DACL of a directory the agent makes itself with
 * mode 0700. */
#ifdef _WIN32
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>
/* after windows.h, whose types they use */
#include <aclapi.h>
#include <sddl.h>

#include "common/err.h"
#include "common/os/os.h"

/* The rights that let an account change what a directory holds or who may. */
#define DIR_WRITE_RIGHTS                                                                           \
    (GENERIC_ALL | GENERIC_WRITE | FILE_WRITE_DATA | FILE_APPEND_DATA | DELETE |                   \
     FILE_DELETE_CHILD | WRITE_DAC | WRITE_OWNER)
/* The same for a file: FILE_DELETE_CHILD means nothing there. */
#define FILE_WRITE_RIGHTS (DIR_WRITE_RIGHTS & ~(DWORD)FILE_DELETE_CHILD)
#define ACL_NAME_MAX 160
#define ACL_SID_MAX 192

static void wide_to_utf8(const wchar_t *w, char *out, size_t cap)
{
    if (!cap)
        return;
    if (WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)cap, NULL, NULL) <= 0)
        out[0] = '\0';
}

/* "S-1-5-32-545" */
static void sid_string(PSID sid, char *out, size_t cap)
{
    LPWSTR s = NULL;

    if (ConvertSidToStringSidW(sid, &s)) {
        wide_to_utf8(s, out, cap);
        LocalFree(s);
    } else {
        snprintf(out, cap, "an unreadable SID");
    }
}

/* "BUILTIN\Users", "Everyone", "HOST\agent"; the SID string when the
 * account has no name here. */
static void sid_name(PSID sid, char *out, size_t cap)
{
    wchar_t name[ACL_NAME_MAX], dom[ACL_NAME_MAX];
    DWORD nl = ACL_NAME_MAX, dl = ACL_NAME_MAX;
    SID_NAME_USE use;
    char n8[ACL_NAME_MAX * 2], d8[ACL_NAME_MAX * 2];

    if (!LookupAccountSidW(NULL, sid, name, &nl, dom, &dl, &use) || !name[0]) {
        sid_string(sid, out, cap);
        return;
    }
    wide_to_utf8(name, n8, sizeof(n8));
    wide_to_utf8(dom, d8, sizeof(d8));
    if (d8[0])
        snprintf(out, cap, "%s\\%s", d8, n8);
    else
        snprintf(out, cap, "%s", n8);
}

/* SYSTEM, BUILTIN\Administrators or the agent itself. */
static bool trusted(PSID sid, PSID self)
{
    return IsWellKnownSid(sid, WinLocalSystemSid) ||
           IsWellKnownSid(sid, WinBuiltinAdministratorsSid) || (self && EqualSid(sid, self));
}

/* What `mask` lets its holder do to a file, the widest first. */
static const char *file_right_name(DWORD mask)
{
    if ((mask & GENERIC_ALL) || (mask & FILE_ALL_ACCESS) == FILE_ALL_ACCESS)
        return "take full control of it";
    if (mask & GENERIC_WRITE)
        return "write it";
    if (mask & FILE_WRITE_DATA)
        return "write its data";
    if (mask & FILE_APPEND_DATA)
        return "append data to it";
    if (mask & DELETE)
        return "delete it";
    if (mask & WRITE_DAC)
        return "change its permissions";
    return "take ownership of it";
}

/* What `mask` lets its holder do to a directory, the widest first. */
static const char *right_name(DWORD mask)
{
    if ((mask & GENERIC_ALL) || (mask & FILE_ALL_ACCESS) == FILE_ALL_ACCESS)
        return "take full control of it";
    if (mask & GENERIC_WRITE)
        return "write in it";
    if (mask & FILE_WRITE_DATA)
        return "write data (add files) in it";
    if (mask & FILE_APPEND_DATA)
        return "append data (add subdirectories) in it";
    if (mask & DELETE)
        return "delete it";
    if (mask & FILE_DELETE_CHILD)
        return "delete what it holds";
    if (mask & WRITE_DAC)
        return "change its permissions";
    return "take ownership of it";
}

/* The agent's account's name and SID string, for a message (ACL_NAME_MAX and
 * ACL_SID_MAX bytes). */
static void self_names(PSID self, char *name, char *sid)
{
    if (self) {
        sid_name(self, name, ACL_NAME_MAX);
        sid_string(self, sid, ACL_SID_MAX);
    } else {
        snprintf(name, ACL_NAME_MAX, "unknown");
        snprintf(sid, ACL_SID_MAX, "S-1-5-18");
    }
}

/* The judgement of dyn_win_dir_sd_check (file false) and
 * dyn_win_file_sd_check (file true): one owner rule and one set of rights for
 * both; a file's messages say what a test file is not, and its fix is to
 * remove it (the agent makes it again). An ACE only inherited by what an
 * object holds does not apply to a file. */
static int sd_check(void *sd, void *self, bool file, const char *what, const char *path,
                    struct iof_diag *diag)
{
    PSID owner = NULL;
    PACL dacl = NULL;
    BOOL defaulted = FALSE, present = FALSE;
    char selfname[ACL_NAME_MAX], selfsid[ACL_SID_MAX], who[ACL_NAME_MAX], whosid[ACL_SID_MAX];
    const char *lead = file ? "not a plain file of the agent's user: " : "";

    if (!GetSecurityDescriptorOwner(sd, &owner, &defaulted) ||
        !GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted))
        return iof_diag_set(diag, IOF_EDENIED, "%s '%s': its security descriptor cannot be read",
                            what, path);
    if (!owner || !trusted(owner, self)) {
        self_names(self, selfname, selfsid);
        if (owner)
            sid_name(owner, who, sizeof(who));
        else
            snprintf(who, sizeof(who), "no one");
        if (file)
            return iof_diag_set(diag, IOF_EDENIED,
                                "%s '%s': %sowned by %s, not by SYSTEM, Administrators or the "
                                "agent's account (%s): its owner may give anyone access; remove "
                                "it and let the agent make it again",
                                what, path, lead, who, selfname);
        return iof_diag_set(diag, IOF_EDENIED,
                            "%s '%s': owned by %s, not by SYSTEM, Administrators or the agent's "
                            "account (%s): its owner may give anyone access; fix it with: icacls "
                            "\"%s\" /setowner *%s",
                            what, path, who, selfname, path, selfsid);
    }
    if (!present || !dacl) {
        self_names(self, selfname, selfsid);
        return iof_diag_set(diag, IOF_EDENIED,
                            "%s '%s': %shas no DACL, so anyone may write %s: only SYSTEM, "
                            "Administrators and the agent's account (%s) may; remove it and let "
                            "the agent make it%s",
                            what, path, lead, file ? "it" : "in it", selfname,
                            file ? " again" : "");
    }
    for (DWORD i = 0; i < dacl->AceCount; i++) {
        ACE_HEADER *h;
        ACCESS_ALLOWED_ACE *a;
        PSID sid;

        if (!GetAce(dacl, i, (void **)&h))
            continue;
        /* The callback kind has the same layout up to the SID. */
        if (h->AceType != ACCESS_ALLOWED_ACE_TYPE && h->AceType != ACCESS_ALLOWED_CALLBACK_ACE_TYPE)
            continue;
        if (file && (h->AceFlags & INHERIT_ONLY_ACE))
            continue;
        a = (ACCESS_ALLOWED_ACE *)h;
        sid = (PSID)&a->SidStart;
        if (!(a->Mask & (file ? FILE_WRITE_RIGHTS : DIR_WRITE_RIGHTS)) || trusted(sid, self) ||
            IsWellKnownSid(sid, WinCreatorOwnerSid))
            continue;
        sid_name(sid, who, sizeof(who));
        self_names(self, selfname, selfsid);
        if (file)
            return iof_diag_set(diag, IOF_EDENIED,
                                "%s '%s': %s%s may %s: only SYSTEM, Administrators and the "
                                "agent's account (%s) may; remove it and let the agent make it "
                                "again",
                                what, path, lead, who, file_right_name(a->Mask), selfname);
        sid_string(sid, whosid, sizeof(whosid));
        return iof_diag_set(
            diag, IOF_EDENIED,
            "%s '%s': %s may %s%s: only SYSTEM, Administrators and the agent's account (%s) may; "
            "remove it and let the agent make it, or fix it with: icacls \"%s\" /inheritance:r "
            "/remove:g *%s /grant:r *S-1-5-18:(OI)(CI)F *S-1-5-32-544:(OI)(CI)F *%s:(OI)(CI)F",
            what, path, who, right_name(a->Mask),
            (h->AceFlags & INHERIT_ONLY_ACE) ? " (an ACE for what it holds)" : "", selfname, path,
            whosid, selfsid);
    }
    return 0;
}

int dyn_win_dir_sd_check(void *sd, void *self, const char *what, const char *path,
                         struct iof_diag *diag)
{
    return sd_check(sd, self, false, what, path, diag);
}

int dyn_win_file_sd_check(void *sd, void *self, const char *what, const char *path,
                          struct iof_diag *diag)
{
    return sd_check(sd, self, true, what, path, diag);
}

int dyn_win_self_sid(void *buf, unsigned long cap)
{
    HANDLE tok;
    union {
        TOKEN_USER u;
        BYTE b[sizeof(TOKEN_USER) + SECURITY_MAX_SID_SIZE];
    } tu;
    DWORD len = 0;
    bool ok;

    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
        return iof_os_win_errno(GetLastError());
    ok = GetTokenInformation(tok, TokenUser, &tu, sizeof(tu), &len) &&
         CopySid((DWORD)cap, buf, tu.u.User.Sid);
    CloseHandle(tok);
    return ok ? 0 : iof_os_win_errno(GetLastError());
}

int dyn_win_dir_check(const char *what, const char *path, struct iof_diag *diag)
{
    BYTE self[SECURITY_MAX_SID_SIZE];
    wchar_t w[MAX_PATH * 4];
    PSECURITY_DESCRIPTOR sd = NULL;
    HANDLE h;
    DWORD e;
    int r;

    if ((r = dyn_win_self_sid((PSID)self, sizeof(self))))
        return iof_diag_set(diag, r, "%s '%s': the agent's account cannot be read: %s", what, path,
                            strerror(-r));
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, MAX_PATH * 4) <= 0)
        return iof_diag_set(diag, -EINVAL, "%s '%s': not a valid UTF-8 path", what, path);
    h = CreateFileW(w, READ_CONTROL, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                    OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        r = iof_os_win_errno(GetLastError());
        return iof_diag_set(diag, r, "%s '%s': cannot read its permissions: %s", what, path,
                            strerror(-r));
    }
    e = GetSecurityInfo(h, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                        NULL, NULL, NULL, NULL, &sd);
    CloseHandle(h);
    if (e != ERROR_SUCCESS) {
        r = iof_os_win_errno(e);
        return iof_diag_set(diag, r, "%s '%s': cannot read its permissions: %s", what, path,
                            strerror(-r));
    }
    r = dyn_win_dir_sd_check(sd, (PSID)self, what, path, diag);
    LocalFree(sd);
    return r;
}

/* The agent's account, read once: a test file is judged at each fstat. */
static BYTE self_sid[SECURITY_MAX_SID_SIZE];
static INIT_ONCE self_once = INIT_ONCE_STATIC_INIT;
static int self_err;

static BOOL CALLBACK self_init(PINIT_ONCE once, void *arg, void **ctx)
{
    (void)once, (void)arg, (void)ctx;
    self_err = dyn_win_self_sid((PSID)self_sid, sizeof(self_sid));
    return TRUE;
}

int dyn_win_file_handle_check(void *handle, const char *what, const char *path,
                              struct iof_diag *diag)
{
    HANDLE h = handle;
    BY_HANDLE_FILE_INFORMATION bi;
    PSECURITY_DESCRIPTOR sd = NULL;
    DWORD e;
    int r;

    if (!GetFileInformationByHandle(h, &bi)) {
        r = iof_os_win_errno(GetLastError());
        return iof_diag_set(diag, r, "%s '%s': %s", what, path, strerror(-r));
    }
    if (bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
        return iof_diag_set(diag, IOF_EDENIED,
                            "%s '%s': a symbolic link or junction; reparse points are not "
                            "followed in the workdir",
                            what, path);
    if ((bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) || GetFileType(h) != FILE_TYPE_DISK)
        return iof_diag_set(diag, IOF_EDENIED,
                            "%s '%s': not a regular file; test files in the workdir must be", what,
                            path);
    if (bi.nNumberOfLinks != 1)
        return iof_diag_set(diag, IOF_EDENIED,
                            "%s '%s': has %lu links; a file with more than one name could be one "
                            "outside the allowed paths",
                            what, path, (unsigned long)bi.nNumberOfLinks);
    InitOnceExecuteOnce(&self_once, self_init, NULL, NULL);
    if (self_err)
        return iof_diag_set(diag, self_err, "%s '%s': the agent's account cannot be read: %s", what,
                            path, strerror(-self_err));
    e = GetSecurityInfo(h, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                        NULL, NULL, NULL, NULL, &sd);
    if (e != ERROR_SUCCESS) {
        r = iof_os_win_errno(e);
        return iof_diag_set(diag, r, "%s '%s': cannot read its owner and permissions: %s", what,
                            path, strerror(-r));
    }
    r = sd_check(sd, (PSID)self_sid, true, what, path, diag);
    LocalFree(sd);
    return r;
}

void *dyn_win_private_dir_sd(void)
{
    static const wchar_t head[] = L"D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FA;;;";
    BYTE self[SECURITY_MAX_SID_SIZE];
    wchar_t sddl[sizeof(head) / sizeof(head[0]) + ACL_SID_MAX];
    PSECURITY_DESCRIPTOR sd = NULL;
    LPWSTR sid = NULL;

    if (dyn_win_self_sid((PSID)self, sizeof(self)) || !ConvertSidToStringSidW((PSID)self, &sid))
        return NULL;
    /* P: not inherited from the parent; OICI: inherited by what it holds. */
    if (wcslen(sid) + 2 > ACL_SID_MAX) {
        LocalFree(sid);
        SetLastError(ERROR_INVALID_SID);
        return NULL;
    }
    wcscpy(sddl, head);
    wcscat(sddl, sid);
    wcscat(sddl, L")");
    LocalFree(sid);
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd, NULL))
        return NULL;
    return sd;
}
#endif
