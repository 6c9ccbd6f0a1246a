/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_clean.c - the workdir's own bookkeeping (dynamo/clean.c,
 * dynamo/target.c, dynamo/scope.c): a target named like the ledger or a
 * verify state file is refused by the agent, whatever the plan loader did,
 * clean removes only files with a single link that it made, and a test file
 * another user planted is never reused nor replaced.
 * The workdir is a mkdtemp directory under $IOF_TEST_TMPDIR (or /tmp). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "dynamo/clean.h"
#include "dynamo/scope.h"
#include "dynamo/target.h"
#include "tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[PATH_MAX];

/* A fresh, empty workdir for each case. */
static int case_setup(void **state)
{
    (void)state;
    return test_tmpdir_make(g_dir, "test_clean");
}

static int case_teardown(void **state)
{
    (void)state;
    test_tmpdir_remove(g_dir);
    return 0;
}

static void in_dir(char *out, size_t cap, const char *name)
{
    assert_true(snprintf(out, cap, "%s/%s", g_dir, name) < (int)cap);
}

static char *slurp(const char *name)
{
    char p[PATH_MAX + 64];
    static char buf[4096];
    int fd;
    ssize_t n;

    in_dir(p, sizeof(p), name);
    fd = open(p, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    assert_true(n >= 0);
    buf[n] = '\0';
    return buf;
}

static struct dyn_scope *scope_new(void)
{
    struct dyn_scope *s = NULL;
    struct iof_diag d = {{0}};

    assert_int_equal(dyn_scope_new(g_dir, NULL, 0, &s, &d), 0);
    return s;
}

static int prepare(struct dyn_scope *s, const char *path, struct iof_diag *d)
{
    struct iof_target_cfg cfg = {.size = 8192};

    snprintf(cfg.path, sizeof(cfg.path), "%s", path);
    return dyn_target_prepare(&cfg, s, IOF_PATTERN_REPEAT, NULL, NULL, d);
}

/* A target named like the ledger (or any '.iofleet-' name, in any
 * directory) is refused when it would be created and when it is opened;
 * the ledger stays as it was and keeps naming the real test file. */
static void test_reserved_names(void **state)
{
    struct dyn_scope *s = scope_new();
    struct iof_diag d = {{0}};
    char before[4096];
    const char *now;

    (void)state;
    assert_int_equal(prepare(s, "a.dat", &d), 0);
    now = slurp(DYN_LEDGER_NAME);
    assert_non_null(now);
    assert_non_null(strstr(now, " a.dat\n"));
    snprintf(before, sizeof(before), "%s", now);

    assert_int_equal(prepare(s, DYN_LEDGER_NAME, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "'.iofleet-testfiles'"));
    assert_non_null(strstr(d.msg, "reserved for the agent's own files"));
    assert_string_equal(slurp(DYN_LEDGER_NAME), before);
    {
        char dir[PATH_MAX + 8];
        in_dir(dir, sizeof(dir), "d");
        assert_int_equal(mkdir(dir, 0700), 0);
    }
    assert_int_equal(prepare(s, "d/.iofleet-verify-0.gen", &d), IOF_EDENIED);
    assert_null(slurp("d/.iofleet-verify-0.gen"));
    /* opening (a test's start, the agent's check of a plan) */
    assert_int_equal(dyn_scope_open(s, DYN_LEDGER_NAME, O_RDWR, NULL, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "reserved"));
    assert_string_equal(slurp(DYN_LEDGER_NAME), before);
    /* a name merely containing the prefix is an ordinary test file */
    assert_int_equal(prepare(s, "x.iofleet-testfiles", &d), 0);
    dyn_scope_free(s);
}

/* clean removes a test file it made only while it has one link; one given a
 * second name since stays (and stays in the ledger) until that name goes.
 * A verify state file with a second name is left alone too. */
static void test_clean_single_link(void **state)
{
    struct dyn_scope *s = scope_new();
    struct dyn_clean_report r = {0};
    struct iof_diag d = {{0}};
    char a[PATH_MAX + 64], b[PATH_MAX + 64], gen[PATH_MAX + 64], keep[PATH_MAX + 64];
    struct stat st;
    int fd;

    (void)state;
    assert_int_equal(prepare(s, "b.dat", &d), 0);
    in_dir(a, sizeof(a), "b.dat");
    in_dir(b, sizeof(b), "other-name");
    assert_int_equal(link(a, b), 0);
    in_dir(gen, sizeof(gen), ".iofleet-verify-0123456789abcdef.gen");
    in_dir(keep, sizeof(keep), "keep.gen");
    fd = open(gen, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(link(gen, keep), 0);

    assert_int_equal(dyn_clean_workdir(s, &r, &d), 0);
    assert_int_equal(r.files, 0);
    assert_int_equal(r.failed, 1); /* ours, not removed: said, and kept in the ledger */
    assert_int_equal(lstat(a, &st), 0);
    assert_int_equal(lstat(gen, &st), 0);
    assert_non_null(slurp(DYN_LEDGER_NAME));
    assert_non_null(strstr(slurp(DYN_LEDGER_NAME), " b.dat\n"));
    dyn_clean_report_free(&r);

    /* the second names gone, both are the agent's own again */
    assert_int_equal(unlink(b), 0);
    assert_int_equal(unlink(keep), 0);
    memset(&r, 0, sizeof(r));
    assert_int_equal(dyn_clean_workdir(s, &r, &d), 0);
    assert_int_equal(r.files, 1);
    assert_int_equal(lstat(a, &st), -1);
    assert_int_equal(lstat(gen, &st), -1);
    assert_null(slurp(DYN_LEDGER_NAME));
    dyn_clean_report_free(&r);
    dyn_scope_free(s);
}

/* A test file planted in the workdir by another user is neither reused nor
 * replaced: refused, naming it and its owner (as root only: chown). */
static void test_reuse_foreign_owner(void **state)
{
    struct dyn_scope *s = scope_new();
    struct iof_diag d = {{0}};
    char p[PATH_MAX + 64];
    struct stat st;
    int fd;

    (void)state;
    if (geteuid() != 0) {
        dyn_scope_free(s);
        skip();
    }
    in_dir(p, sizeof(p), "p.dat");
    fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 8192), 0);
    assert_int_equal(pwrite(fd, "x", 1, 0), 1);
    close(fd);
    assert_int_equal(chown(p, 65534, 65534), 0);
    assert_int_equal(prepare(s, "p.dat", &d), IOF_EDENIED);
    assert_non_null(
        strstr(d.msg, "target 'p.dat': not a plain file of the agent's user: owned by "));
    assert_non_null(strstr(d.msg, "uid 65534), not by the agent's ("));
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_size, 8192);
    /* a size to fill anew: not removed and made again either */
    {
        struct iof_target_cfg cfg = {.size = 16384};
        snprintf(cfg.path, sizeof(cfg.path), "p.dat");
        assert_int_equal(dyn_target_prepare(&cfg, s, IOF_PATTERN_REPEAT, NULL, NULL, &d),
                         IOF_EDENIED);
    }
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_null(slurp(DYN_LEDGER_NAME));
    dyn_scope_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reserved_names, case_setup, case_teardown),
        cmocka_unit_test_setup_teardown(test_clean_single_link, case_setup, case_teardown),
        cmocka_unit_test_setup_teardown(test_reuse_foreign_owner, case_setup, case_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
