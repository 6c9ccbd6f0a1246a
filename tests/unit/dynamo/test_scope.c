/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_scope.c - dynamo/scope: how a plan target is resolved
 * against the workdir and --allow entries, with openat2 and with the
 * component-by-component fallback used where the kernel lacks it. Each case
 * is an object a name can lead to; the scope must judge the object. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "dynamo/scope.h"
#include "tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[PATH_MAX];
static char g_work[PATH_MAX + 8], g_allow[PATH_MAX + 8], g_file[PATH_MAX + 16];

static void path(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void path(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    assert_true(vsnprintf(out, PATH_MAX, fmt, ap) < PATH_MAX);
    va_end(ap);
}

static void touch(const char *p)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "data", 4), 4);
    close(fd);
}

static int group_setup(void **state)
{
    char p[PATH_MAX];

    (void)state;
    if (test_tmpdir_make(g_dir, "test_scope") < 0)
        return -1;
    snprintf(g_work, sizeof(g_work), "%s/w", g_dir);
    snprintf(g_allow, sizeof(g_allow), "%s/a", g_dir);
    snprintf(g_file, sizeof(g_file), "%s/f.dat", g_dir);
    if (mkdir(g_work, 0700) || mkdir(g_allow, 0755) || mkdir(strcat(strcpy(p, g_work), "/d"), 0700))
        return -1;
    touch(g_file);
    path(p, "%s/out.dat", g_dir);
    touch(p);
    path(p, "%s/t.dat", g_work);
    touch(p);
    path(p, "%s/d/t.dat", g_work);
    touch(p);
    path(p, "%s/in.dat", g_allow);
    touch(p);
    path(p, "%s/ln.dat", g_work);
    if (symlink("t.dat", p))
        return -1;
    path(p, "%s/sub", g_work);
    if (symlink(g_dir, p))
        return -1;
    path(p, "%s/link", g_allow);
    if (symlink("in.dat", p))
        return -1;
    {
        char out[PATH_MAX];
        path(out, "%s/out.dat", g_dir);
        path(p, "%s/hl.dat", g_work);
        if (link(out, p))
            return -1;
    }
    path(p, "%s/fifo", g_allow);
    if (mkfifo(p, 0600))
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    dyn_scope_force_fallback(false);
    if (g_dir[0])
        test_tmpdir_remove(g_dir);
    return 0;
}

static struct dyn_scope *scope_new(void)
{
    const char *allow[] = {g_allow, g_file};
    struct dyn_scope *s = NULL;
    struct iof_diag d = {{0}};
    int r = dyn_scope_new(g_work, allow, 2, &s, &d);
    if (r)
        print_message("dyn_scope_new: %s\n", d.msg);
    assert_int_equal(r, 0);
    return s;
}

/* Opens `p` read-write: 0 (and the descriptor closed) or the error, with
 * the message checked to contain `want` when given. */
static int try_open(struct dyn_scope *s, const char *p, const char *want)
{
    struct iof_diag d = {{0}};
    int fd = dyn_scope_open(s, p, O_RDWR, NULL, &d);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    print_message("%s: %s\n", p, d.msg);
    if (want && !strstr(d.msg, want)) {
        print_message("expected '%s' in the message\n", want);
        fail();
    }
    return fd;
}

static void check_rules(bool fallback)
{
    struct dyn_scope *s;
    char p[PATH_MAX];
    const char *base;
    struct iof_diag d = {{0}};
    int fd;

    dyn_scope_force_fallback(fallback);
    s = scope_new();
    /* test files in the workdir */
    assert_int_equal(try_open(s, "t.dat", NULL), 0);
    assert_int_equal(try_open(s, "d/t.dat", NULL), 0);
    assert_int_equal(try_open(s, "ln.dat", "a symbolic link"), IOF_EDENIED);
    assert_int_equal(try_open(s, "sub/out.dat", "a symbolic link"), IOF_EDENIED);
    assert_int_equal(try_open(s, "hl.dat", "has 2 links"), IOF_EDENIED);
    assert_true(try_open(s, "missing.dat", "No such file") == -ENOENT);
    fd = dyn_scope_open_parent(s, "sub/new.dat", &base, &d);
    assert_int_equal(fd, IOF_EDENIED);
    fd = dyn_scope_open_parent(s, "d/new.dat", &base, &d);
    assert_true(fd >= 0);
    assert_string_equal(base, "new.dat");
    close(fd);
    /* beneath an --allow directory */
    path(p, "%s/in.dat", g_allow);
    assert_int_equal(try_open(s, p, NULL), 0);
    path(p, "%s/link", g_allow);
    assert_int_equal(try_open(s, p, "a symbolic link"), IOF_EDENIED);
    path(p, "%s/../out.dat", g_allow);
    assert_int_equal(try_open(s, p, "'..'"), IOF_EDENIED);
    path(p, "%s/fifo", g_allow);
    assert_int_equal(try_open(s, p, "not a regular file or block device"), IOF_ETARGET);
    /* identity: only the objects --allow names */
    assert_int_equal(try_open(s, g_file, NULL), 0);
    path(p, "%s/out.dat", g_dir);
    assert_int_equal(try_open(s, p, "is not inside this agent's --allow paths"), IOF_EDENIED);
    path(p, "/proc/self/root%s/out.dat", g_dir);
    assert_int_equal(try_open(s, p, "is not inside this agent's --allow paths"), IOF_EDENIED);
    /* The allowed file itself through /proc/self/root: a magic link, refused
     * with openat2; the fallback follows it but finds the allowed object. */
    path(p, "/proc/self/root%s", g_file);
    assert_int_equal(try_open(s, p, "magic link"), fallback ? 0 : IOF_EDENIED);
    dyn_scope_free(s);
}

static void test_rules_openat2(void **state)
{
    (void)state;
    check_rules(false);
}

static void test_rules_fallback(void **state)
{
    (void)state;
    check_rules(true);
}

/* The workdir itself must not be a symbolic link or another user's. */
static void test_workdir(void **state)
{
    struct dyn_scope *s = NULL;
    struct iof_diag d = {{0}};
    char p[PATH_MAX];

    (void)state;
    path(p, "%s/wlink", g_dir);
    assert_int_equal(symlink(g_work, p), 0);
    /* at start-up the agent's own --workdir is canonicalised: accepted */
    assert_int_equal(dyn_scope_new(p, NULL, 0, &s, &d), 0);
    dyn_scope_free(s);
    if (geteuid() == 0) {
        path(p, "%s/other", g_dir);
        assert_int_equal(mkdir(p, 0700), 0);
        assert_int_equal(chown(p, 65534, 65534), 0);
        assert_int_equal(dyn_scope_new(p, NULL, 0, &s, &d), IOF_EDENIED);
        assert_non_null(strstr(d.msg, "belongs to uid 65534"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_openat2),
        cmocka_unit_test(test_rules_fallback),
        cmocka_unit_test(test_workdir),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
