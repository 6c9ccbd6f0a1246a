/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/test_win_filecheck.c - each test file judged on its opened
 * handle on Windows (dyn_win_file_handle_check and dyn_win_file_sd_check,
 * dynamo/os/windows/acl.c; dyn_os_file_check and fstat's st_uid through the
 * platform layer), under Wine: the agent's own file accepted; one whose
 * owner is another account, one Everyone may write, a second name (hard
 * link), a symbolic link and a directory refused, each with its message
 * naming the file, the account and the reason. Security descriptors that
 * Wine cannot keep on a file are judged from SDDL in memory too, and a case
 * Wine cannot set up on disk says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
/* after windows.h, whose types they use */
#include <aclapi.h>
#include <sddl.h>
#include <wchar.h>
#include <winioctl.h>

#include "common/err.h"
#include "dynamo/os/os.h"

#ifndef SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE
#define SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE 0x2
#endif

#define SELF "S-1-5-21-1-2-3-1000"
#define OTHER "S-1-5-21-1-2-3-1001"
#define GOOD_DACL "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;" SELF ")"

static char g_dir[MAX_PATH];

static int group_setup(void **state)
{
    char tmp[MAX_PATH];

    (void)state;
    if (!GetTempPathA(sizeof(tmp), tmp))
        return -1;
    snprintf(g_dir, sizeof(g_dir), "%siofleet-filecheck-%lu", tmp, GetCurrentProcessId());
    return mkdir(g_dir, 0700) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    char cmd[3 * MAX_PATH];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rmdir /s /q \"%s\" >NUL 2>&1", g_dir);
    system(cmd);
    return 0;
}

/* A new 4 KiB file `name` in the test's directory (made with mode 0700, so
 * as the agent makes its workdir); its path into out. */
static void make_file(const char *name, char *out, size_t cap)
{
    char buf[4096];
    DWORD n;
    HANDLE h;

    snprintf(out, cap, "%s\\%s", g_dir, name);
    h = CreateFileA(out, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
    assert_true(h != INVALID_HANDLE_VALUE);
    memset(buf, 0x5a, sizeof(buf));
    assert_true(WriteFile(h, buf, sizeof(buf), &n, NULL) && n == sizeof(buf));
    assert_true(CloseHandle(h));
}

/* dyn_win_file_handle_check on `path` opened as the agent opens a test file
 * (a reparse point not followed), named `name` in the message. */
static int judge_path(const char *path, const char *name, struct iof_diag *d)
{
    HANDLE h = CreateFileA(
        path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
        OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    int r;

    memset(d, 0, sizeof(*d));
    if (h == INVALID_HANDLE_VALUE)
        fail_msg("cannot open '%s': error %lu", path, (unsigned long)GetLastError());
    r = dyn_win_file_handle_check(h, "test file", name, d);
    CloseHandle(h);
    print_message("%-28s -> %s\n", name, r ? d->msg : "accepted");
    return r;
}

/* dyn_win_file_sd_check on the SDDL text, the agent being SELF. */
static int judge_sddl(const char *sddl, struct iof_diag *d)
{
    PSECURITY_DESCRIPTOR sd = NULL;
    PSID self = NULL;
    int r;

    memset(d, 0, sizeof(*d));
    assert_true(ConvertStringSidToSidA(SELF, &self));
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorA(sddl, SDDL_REVISION_1, &sd, NULL))
        fail_msg("SDDL '%s' refused: error %lu", sddl, (unsigned long)GetLastError());
    r = dyn_win_file_sd_check(sd, self, "test file", "a.dat", d);
    print_message("%-60s -> %s\n", sddl, r ? d->msg : "accepted");
    LocalFree(sd);
    LocalFree(self);
    return r;
}

/* The agent's own file: accepted by the handle's judgement, by the
 * platform layer's on a descriptor, and st_uid is geteuid()'s. */
static void test_own_file(void **state)
{
    char path[MAX_PATH + 32];
    struct iof_diag d;
    struct stat st;
    int fd;

    (void)state;
    make_file("own.dat", path, sizeof(path));
    assert_int_equal(judge_path(path, "own.dat", &d), 0);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(dyn_os_file_check(fd, "target", "own.dat", &d), 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_uid, geteuid());
    close(fd);
}

/* A DACL letting Everyone write the file's data, set on the file. */
static void test_everyone_may_write(void **state)
{
    char path[MAX_PATH + 32], sddl[256];
    PSECURITY_DESCRIPTOR sd = NULL;
    PACL dacl = NULL;
    BOOL present = FALSE, defaulted = FALSE;
    BYTE self[SECURITY_MAX_SID_SIZE];
    LPSTR selfs = NULL;
    struct iof_diag d;
    struct stat st;
    DWORD e;
    int fd;

    (void)state;
    make_file("open.dat", path, sizeof(path));
    assert_int_equal(dyn_win_self_sid(self, sizeof(self)), 0);
    assert_true(ConvertSidToStringSidA((PSID)self, &selfs));
    snprintf(sddl, sizeof(sddl), "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;%s)(A;;0x116;;;WD)", selfs);
    LocalFree(selfs);
    assert_true(
        ConvertStringSecurityDescriptorToSecurityDescriptorA(sddl, SDDL_REVISION_1, &sd, NULL));
    assert_true(GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted));
    e = SetNamedSecurityInfoA(path, SE_FILE_OBJECT,
                              DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION, NULL,
                              NULL, dacl, NULL);
    LocalFree(sd);
    assert_int_equal(e, ERROR_SUCCESS);
    assert_int_equal(judge_path(path, "open.dat", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "test file 'open.dat': not a plain file of the agent's user: "
                                  "Everyone may write its data: only SYSTEM, Administrators and "
                                  "the agent's account ("));
    assert_non_null(strstr(d.msg, "remove it and let the agent make it again"));
    /* The same through the platform layer, and st_uid is not the agent's. */
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(dyn_os_file_check(fd, "target", "open.dat", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "target 'open.dat': not a plain file of the agent's user: "));
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_not_equal(st.st_uid, geteuid());
    close(fd);
}

/* Another account as the file's owner: set on the file where the system
 * lets a process give its file away (Windows asks SeRestorePrivilege), and
 * judged from SDDL in any case. */
static void test_foreign_owner(void **state)
{
    char path[MAX_PATH + 32];
    PSID other = NULL;
    struct iof_diag d;
    DWORD e;

    (void)state;
    assert_int_equal(judge_sddl("O:BU" GOOD_DACL, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "test file 'a.dat': not a plain file of the agent's user: owned "
                                  "by BUILTIN\\Users, not by SYSTEM, Administrators or the agent's "
                                  "account ("));
    assert_int_equal(judge_sddl("O:" OTHER GOOD_DACL, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "owned by " OTHER ", not by SYSTEM"));
    assert_int_equal(judge_sddl("O:AN" GOOD_DACL, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "ANONYMOUS LOGON, not by SYSTEM"));

    make_file("theirs.dat", path, sizeof(path));
    assert_true(ConvertStringSidToSidA(OTHER, &other));
    e = SetNamedSecurityInfoA(path, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION, other, NULL, NULL,
                              NULL);
    LocalFree(other);
    if (e != ERROR_SUCCESS) {
        print_message("a file given to " OTHER ": not here (error %lu): judged in memory only\n",
                      (unsigned long)e);
        return;
    }
    if (judge_path(path, "theirs.dat", &d) == 0) {
        print_message("the system took the owner " OTHER " but does not keep it on the file: "
                      "judged in memory only\n");
        return;
    }
    assert_non_null(strstr(d.msg, "test file 'theirs.dat': not a plain file of the agent's user: "
                                  "owned by " OTHER ", not by SYSTEM"));
}

/* Owner and DACL from SDDL: the rights that refuse a file, those that do not. */
static void test_file_rights(void **state)
{
    struct iof_diag d;

    (void)state;
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL, &d), 0);
    assert_int_equal(judge_sddl("O:SY" GOOD_DACL, &d), 0);
    assert_int_equal(judge_sddl("O:BA" GOOD_DACL, &d), 0);
    /* Reading and executing are fine; a deny is not weighed. */
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;;FR;;;WD)(A;;FX;;;BU)(D;;FA;;;WD)", &d), 0);
    /* Delete-child means nothing on a file; an inherit-only ACE does not apply to it. */
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;;0x40;;;WD)", &d), 0);
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;OIIO;FA;;;WD)", &d), 0);

    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;;FA;;;BU)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "BUILTIN\\Users may take full control of it:"));
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;;GW;;;WD)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Everyone may write it:"));
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;;0x4;;;AU)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Authenticated Users may append data to it:"));
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;;SD;;;WD)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Everyone may delete it:"));
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;;WD;;;" OTHER ")", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, OTHER " may change its permissions:"));
    assert_int_equal(judge_sddl("O:" SELF GOOD_DACL "(A;;WO;;;BG)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Guests may take ownership of it:"));
}

/* No DACL at all (anyone may do anything), built by hand. */
static void test_null_dacl(void **state)
{
    SECURITY_DESCRIPTOR sd;
    PSID self = NULL;
    struct iof_diag d = {{0}};

    (void)state;
    assert_true(ConvertStringSidToSidA(SELF, &self));
    assert_true(InitializeSecurityDescriptor(&sd, SECURITY_DESCRIPTOR_REVISION));
    assert_true(SetSecurityDescriptorOwner(&sd, self, FALSE));
    assert_true(SetSecurityDescriptorDacl(&sd, TRUE, NULL, FALSE));
    assert_int_equal(dyn_win_file_sd_check(&sd, self, "test file", "a.dat", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "test file 'a.dat': not a plain file of the agent's user: has "
                                  "no DACL, so anyone may write it"));
    LocalFree(self);
}

/* A second name (a hard link): refused under either name. */
static void test_hard_link(void **state)
{
    char path[MAX_PATH + 32], link[MAX_PATH + 32];
    struct iof_diag d;

    (void)state;
    make_file("linked.dat", path, sizeof(path));
    snprintf(link, sizeof(link), "%s\\second-name.dat", g_dir);
    assert_true(CreateHardLinkA(link, path, NULL));
    assert_int_equal(judge_path(path, "linked.dat", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "test file 'linked.dat': has 2 links; a file with more than one "
                                  "name could be one outside the allowed paths"));
    assert_int_equal(judge_path(link, "second-name.dat", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "has 2 links"));
}

/* Makes a symbolic link at `at` to `to`: true when a reparse point is
 * really there (some Wine versions answer TRUE and make nothing). */
static bool plant_link(const char *at, const char *to)
{
    DWORD attr;

    if (!CreateSymbolicLinkA(at, to, SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE))
        return false;
    attr = GetFileAttributesA(at);
    return attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_REPARSE_POINT);
}

/* Makes the directory `at` a junction (a mount point reparse point) to the
 * directory `to` (a full path): true when a reparse point is really there. */
static bool plant_junction(const char *at, const char *to)
{
    struct {
        DWORD tag;
        WORD len, reserved;
        WORD sub_off, sub_len, print_off, print_len;
        WCHAR buf[MAX_PATH + 8];
    } rd = {0};
    WCHAR sub[MAX_PATH + 8];
    DWORD n, attr;
    HANDLE h;
    BOOL ok;
    int l;

    if (!CreateDirectoryA(at, NULL))
        return false;
    wcscpy(sub, L"\\??\\");
    if (MultiByteToWideChar(CP_ACP, 0, to, -1, sub + 4, MAX_PATH + 4) <= 0)
        return false;
    l = (int)wcslen(sub);
    rd.tag = IO_REPARSE_TAG_MOUNT_POINT;
    rd.sub_len = (WORD)(l * sizeof(WCHAR));
    rd.print_off = (WORD)(rd.sub_len + sizeof(WCHAR));
    memcpy(rd.buf, sub, rd.sub_len);
    rd.len = (WORD)(8 + rd.sub_len + sizeof(WCHAR) + sizeof(WCHAR));
    h = CreateFileA(at, GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                    FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return false;
    ok = DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, &rd, 8 + rd.len, NULL, 0, &n, NULL);
    CloseHandle(h);
    attr = GetFileAttributesA(at);
    return ok && attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_REPARSE_POINT);
}

/* A symbolic link and a junction at the name (where Wine can make them), and
 * a directory. */
static void test_link_and_directory(void **state)
{
    char path[MAX_PATH + 32], link[MAX_PATH + 32], dir[MAX_PATH + 32];
    struct iof_diag d;

    (void)state;
    make_file("target.dat", path, sizeof(path));
    snprintf(link, sizeof(link), "%s\\link.dat", g_dir);
    if (plant_link(link, path)) {
        assert_int_equal(judge_path(link, "link.dat", &d), IOF_EDENIED);
        assert_non_null(strstr(d.msg, "test file 'link.dat': a symbolic link or junction; reparse "
                                      "points are not followed in the workdir"));
    } else {
        print_message("Wine cannot make a symbolic link here (CreateSymbolicLinkA made no "
                      "reparse point): that case is not checked\n");
    }
    snprintf(link, sizeof(link), "%s\\junction.dat", g_dir);
    if (plant_junction(link, g_dir)) {
        assert_int_equal(judge_path(link, "junction.dat", &d), IOF_EDENIED);
        assert_non_null(strstr(d.msg, "test file 'junction.dat': a symbolic link or junction; "
                                      "reparse points are not followed in the workdir"));
    } else {
        print_message("Wine cannot make a junction here (FSCTL_SET_REPARSE_POINT made no "
                      "reparse point): that case is not checked\n");
    }
    snprintf(dir, sizeof(dir), "%s\\dir.dat", g_dir);
    assert_true(CreateDirectoryA(dir, NULL));
    assert_int_equal(judge_path(dir, "dir.dat", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "test file 'dir.dat': not a regular file; test files in the "
                                  "workdir must be"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_file),           cmocka_unit_test(test_everyone_may_write),
        cmocka_unit_test(test_foreign_owner),      cmocka_unit_test(test_file_rights),
        cmocka_unit_test(test_null_dacl),          cmocka_unit_test(test_hard_link),
        cmocka_unit_test(test_link_and_directory),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
