/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/test_win_keyacl.c - a private key's ACL on Windows
 * (iof_os_key_exposed, iof_os_dacl_exposed: common/os/win.c), under Wine: a
 * DACL that lets Everyone, Authenticated Users or BUILTIN\Users read is named
 * exposed, with the group; one that lets only SYSTEM or the owner read is not,
 * nor one that denies; no DACL at all is open to anyone; a key file given to
 * Everyone is found exposed through its path. Wine keeps a file's DACL only
 * where it can (extended attributes), so the finer cases are judged on DACLs
 * built in memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>
/* after windows.h, whose types it uses */
#include <aclapi.h>

#include "common/os/os.h"

/* A DACL of one ACE: `type` is granted (or denied) `mask`. LocalFree it. */
static PACL one_ace(WELL_KNOWN_SID_TYPE type, DWORD mask, bool deny)
{
    BYTE sidbuf[SECURITY_MAX_SID_SIZE];
    DWORD sidlen = sizeof(sidbuf);
    EXPLICIT_ACCESS_A ea;
    PACL acl = NULL;

    assert_true(CreateWellKnownSid(type, NULL, sidbuf, &sidlen));
    memset(&ea, 0, sizeof(ea));
    ea.grfAccessPermissions = mask;
    ea.grfAccessMode = deny ? DENY_ACCESS : SET_ACCESS;
    ea.grfInheritance = NO_INHERITANCE;
    ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
    ea.Trustee.ptstrName = (char *)sidbuf;
    assert_int_equal(SetEntriesInAclA(1, &ea, NULL, &acl), ERROR_SUCCESS);
    return acl;
}

static int judged(WELL_KNOWN_SID_TYPE type, DWORD mask, bool deny, char *who, size_t cap)
{
    PACL acl = one_ace(type, mask, deny);
    int r = iof_os_dacl_exposed(acl, who, cap);
    LocalFree(acl);
    return r;
}

static void test_dacls(void **state)
{
    char who[64];

    (void)state;
    assert_int_equal(judged(WinWorldSid, GENERIC_READ, false, who, sizeof(who)), 1);
    assert_string_equal(who, "Everyone");
    assert_int_equal(judged(WinBuiltinUsersSid, FILE_READ_DATA, false, who, sizeof(who)), 1);
    assert_string_equal(who, "BUILTIN\\Users");
    assert_int_equal(judged(WinAuthenticatedUserSid, GENERIC_ALL, false, who, sizeof(who)), 1);
    assert_string_equal(who, "Authenticated Users");
    assert_int_equal(judged(WinLocalSystemSid, GENERIC_ALL, false, who, sizeof(who)), 0);
    assert_int_equal(judged(WinBuiltinAdministratorsSid, GENERIC_READ, false, who, sizeof(who)), 0);
    assert_int_equal(judged(WinWorldSid, GENERIC_READ, true, who, sizeof(who)), 0);
    assert_int_equal(judged(WinWorldSid, FILE_READ_ATTRIBUTES, false, who, sizeof(who)), 0);
    assert_int_equal(iof_os_dacl_exposed(NULL, who, sizeof(who)), 1);
    assert_non_null(strstr(who, "no DACL"));
}

static void test_key_file(void **state)
{
    char tmp[MAX_PATH], key[MAX_PATH + 32], who[64];
    PACL acl = one_ace(WinWorldSid, GENERIC_READ | GENERIC_WRITE | DELETE, false);
    FILE *f;

    (void)state;
    assert_true(GetTempPathA(sizeof(tmp), tmp) > 0);
    snprintf(key, sizeof(key), "%siofleet-key-%lu.pem", tmp, GetCurrentProcessId());
    f = fopen(key, "wb");
    assert_non_null(f);
    fputs("-----BEGIN PRIVATE KEY-----\n", f);
    fclose(f);
    assert_int_equal(
        SetNamedSecurityInfoA(key, SE_FILE_OBJECT,
                              DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION, NULL,
                              NULL, acl, NULL),
        ERROR_SUCCESS);
    LocalFree(acl);
    assert_int_equal(iof_os_key_exposed(key, who, sizeof(who)), 1);
    assert_string_equal(who, "Everyone");
    assert_true(DeleteFileA(key));
    assert_true(iof_os_key_exposed("C:\\no\\such\\key.pem", who, sizeof(who)) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dacls),
        cmocka_unit_test(test_key_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
