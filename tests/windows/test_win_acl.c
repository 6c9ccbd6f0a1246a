/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/test_win_acl.c - the workdir's owner and DACL on Windows
 * (dyn_win_dir_sd_check, dynamo/os/windows/acl.c, declared in the
 * force-included posix.h), under Wine, on security descriptors built from
 * SDDL strings: SYSTEM, Administrators, the agent's account and CREATOR
 * OWNER may hold every right; anyone else granted a right to write, append,
 * delete or change permissions or the owner is refused, named with the
 * right, also through an ACE only what the directory holds inherits;
 * reading is fine, deny ACEs are not weighed, no DACL is refused, and so is
 * an owner other than the three. Then a directory the agent makes with mode
 * 0700 (mkdir: a private DACL) passes the check on the file system, read
 * back from its handle. */
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
/* after windows.h, whose types it uses */
#include <sddl.h>

#include "common/err.h"

#define SELF "S-1-5-21-1-2-3-1000"
#define GOOD_DACL "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FA;;;" SELF ")"

/* dyn_win_dir_sd_check on the SDDL text, the agent being SELF. */
static int judge(const char *sddl, struct iof_diag *d)
{
    PSECURITY_DESCRIPTOR sd = NULL;
    PSID self = NULL;
    int r;

    memset(d, 0, sizeof(*d));
    assert_true(ConvertStringSidToSidA(SELF, &self));
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorA(sddl, SDDL_REVISION_1, &sd, NULL))
        fail_msg("SDDL '%s' refused: error %lu", sddl, (unsigned long)GetLastError());
    r = dyn_win_dir_sd_check(sd, self, "workdir", "C:\\iofleet", d);
    print_message("%-70s -> %s\n", sddl, r ? d->msg : "accepted");
    LocalFree(sd);
    LocalFree(self);
    return r;
}

static void test_trusted_accounts(void **state)
{
    struct iof_diag d;

    (void)state;
    assert_int_equal(judge("O:" SELF GOOD_DACL, &d), 0);
    assert_int_equal(judge("O:SY" GOOD_DACL, &d), 0);
    assert_int_equal(judge("O:BA" GOOD_DACL, &d), 0);
    /* What the agent makes in it is the agent's. */
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;OICIIO;GA;;;CO)", &d), 0);
    /* Others may read and list. */
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;OICI;FR;;;WD)(A;OICI;FX;;;BU)", &d), 0);
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;OICI;GR;;;AU)", &d), 0);
    /* A deny is not weighed: it does not make an allow wrong. */
    assert_int_equal(judge("O:" SELF GOOD_DACL "(D;OICI;FA;;;WD)", &d), 0);
}

static void test_others_who_may_write(void **state)
{
    struct iof_diag d;

    (void)state;
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;;0x2;;;WD)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "workdir 'C:\\iofleet': Everyone may write data (add files) in "
                                  "it: only SYSTEM, Administrators and the agent's account ("));
    assert_non_null(strstr(d.msg, "icacls \"C:\\iofleet\" /inheritance:r /remove:g *S-1-1-0 "
                                  "/grant:r *S-1-5-18:(OI)(CI)F *S-1-5-32-544:(OI)(CI)F *" SELF
                                  ":(OI)(CI)F"));

    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;CI;0x4;;;BU)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "BUILTIN\\Users may append data (add subdirectories) in it:"));

    /* Windows' own C:\ hands Authenticated Users Modify on what it holds. */
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;OICIIO;0x1301bf;;;AU)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg,
                           "Authenticated Users may write data (add files) in it (an ACE for "
                           "what it holds):"));

    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;;GA;;;BU)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "BUILTIN\\Users may take full control of it:"));
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;;FA;;;BG)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Guests may take full control of it:"));
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;;GW;;;WD)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Everyone may write in it:"));
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;;SD;;;WD)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Everyone may delete it:"));
    /* FILE_DELETE_CHILD: SDDL's DC is another bit (the directory service's). */
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;;0x40;;;WD)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Everyone may delete what it holds:"));
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;;WD;;;WD)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Everyone may change its permissions:"));
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;;WO;;;AU)", &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "Authenticated Users may take ownership of it:"));

    /* Another user: named by its SID when it has no name here. */
    assert_int_equal(judge("O:" SELF GOOD_DACL "(A;OICI;FA;;;S-1-5-21-1-2-3-1001)", &d),
                     IOF_EDENIED);
    assert_non_null(strstr(d.msg, "S-1-5-21-1-2-3-1001 may take full control of it:"));
}

static void test_owner_and_no_dacl(void **state)
{
    struct iof_diag d;

    (void)state;
    assert_int_equal(judge("O:BU" GOOD_DACL, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "workdir 'C:\\iofleet': owned by BUILTIN\\Users, not by SYSTEM, "
                                  "Administrators or the agent's account ("));
    assert_non_null(strstr(d.msg, "icacls \"C:\\iofleet\" /setowner *" SELF));
    assert_int_equal(judge("O:S-1-5-21-1-2-3-1001" GOOD_DACL, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "owned by S-1-5-21-1-2-3-1001, not by SYSTEM"));
    /* An empty DACL lets no one in: fine. */
    assert_int_equal(judge("O:" SELF "D:P", &d), 0);
}

/* No DACL at all (a NULL one: anyone may do anything), built by hand: Wine's
 * SDDL parser makes D:NO_ACCESS_CONTROL an empty DACL instead. */
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
    assert_int_equal(dyn_win_dir_sd_check(&sd, self, "workdir", "C:\\iofleet", &d), IOF_EDENIED);
    print_message("NULL DACL -> %s\n", d.msg);
    assert_non_null(strstr(d.msg, "workdir 'C:\\iofleet': has no DACL, so anyone may write in it"));
    LocalFree(self);
}

/* mkdir(path, 0700) gives the directory the private DACL, which passes. */
static void test_private_dir(void **state)
{
    char tmp[MAX_PATH], path[MAX_PATH + 32];
    struct iof_diag d = {{0}};
    PSECURITY_DESCRIPTOR sd = dyn_win_private_dir_sd();
    int r;

    (void)state;
    assert_non_null(sd);
    LocalFree(sd);
    assert_true(GetTempPathA(sizeof(tmp), tmp) > 0);
    snprintf(path, sizeof(path), "%siofleet-acl-%lu", tmp, (unsigned long)GetCurrentProcessId());
    RemoveDirectoryA(path);
    assert_int_equal(mkdir(path, 0700), 0);
    r = dyn_win_dir_check("workdir", path, &d);
    print_message("mkdir 0700: %s\n", r ? d.msg : "accepted");
    RemoveDirectoryA(path);
    assert_int_equal(r, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trusted_accounts),  cmocka_unit_test(test_others_who_may_write),
        cmocka_unit_test(test_owner_and_no_dacl), cmocka_unit_test(test_null_dacl),
        cmocka_unit_test(test_private_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
