/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_outfile.c - common/outfile: a file a user named is written
 * under a temporary name and renamed over it, never through a symbolic link:
 * dangling links, links to files, existing files with and without force, a
 * missing directory, what readers see before the rename, FIFOs and stdout.
 * Files live in a mkdtemp directory under $IOF_TEST_TMPDIR (or /tmp). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/outfile.h"
#include "tmpdir.h"

#include <dirent.h>
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
static char g_a[PATH_MAX + 16], g_b[PATH_MAX + 16];

static int group_setup(void **state)
{
    (void)state;
    if (test_tmpdir_make(g_dir, "test_outfile"))
        return -1;
    snprintf(g_a, sizeof(g_a), "%s/out.csv", g_dir);
    snprintf(g_b, sizeof(g_b), "%s/victim", g_dir);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    test_tmpdir_remove(g_dir);
    return 0;
}

/* Each case starts with an empty directory. */
static int case_setup(void **state)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    char p[PATH_MAX + 300];

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof(p), "%s/%s", g_dir, e->d_name);
        test_tmpdir_remove(p);
    }
    closedir(d);
    return 0;
}

static size_t entries(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    size_t n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void put(const char *p, const char *text)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void assert_content(const char *p, const char *text)
{
    char buf[256] = "";
    int fd = open(p, O_RDONLY | O_NOFOLLOW);
    ssize_t n;

    assert_true(fd >= 0);
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    assert_true(n >= 0);
    buf[n] = '\0';
    assert_string_equal(buf, text);
}

static void assert_regular(const char *p)
{
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
}

static void test_dangling_link_refused(void **state)
{
    struct iof_diag d = {{0}};
    struct stat st;

    (void)state;
    assert_int_equal(symlink(g_b, g_a), 0);
    assert_int_equal(iof_outfile_write(g_a, 0, 0, "new\n", 4, &d), -EEXIST);
    assert_non_null(strstr(d.msg, g_a));
    assert_non_null(strstr(d.msg, "symbolic link"));
    assert_int_equal(iof_outfile_check(g_a, 0, NULL), -EEXIST);
    assert_int_equal(lstat(g_b, &st), -1); /* the target was not created */
    assert_int_equal(lstat(g_a, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(entries(), 1); /* the link, no temporary file */
}

static void test_dangling_link_forced(void **state)
{
    struct iof_diag d = {{0}};
    struct stat st;

    (void)state;
    assert_int_equal(symlink(g_b, g_a), 0);
    assert_int_equal(iof_outfile_write(g_a, 0, IOF_OUTFILE_FORCE, "new\n", 4, &d), 0);
    assert_int_equal(lstat(g_b, &st), -1); /* the link was replaced, not followed */
    assert_regular(g_a);
    assert_content(g_a, "new\n");
    assert_int_equal(entries(), 1);
}

static void test_link_to_file(void **state)
{
    struct iof_diag d = {{0}};
    struct stat st;

    (void)state;
    put(g_b, "precious\n");
    assert_int_equal(symlink(g_b, g_a), 0);
    assert_int_equal(iof_outfile_write(g_a, 0, 0, "new\n", 4, &d), -EEXIST);
    assert_content(g_b, "precious\n");
    assert_int_equal(lstat(g_a, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(iof_outfile_write(g_a, 0, IOF_OUTFILE_FORCE, "new\n", 4, &d), 0);
    assert_content(g_b, "precious\n"); /* never written through */
    assert_regular(g_a);
    assert_content(g_a, "new\n");
    assert_int_equal(entries(), 2);
}

static void test_existing_file(void **state)
{
    struct iof_diag d = {{0}};
    struct stat before, after;

    (void)state;
    put(g_a, "old\n");
    assert_int_equal(lstat(g_a, &before), 0);
    assert_int_equal(iof_outfile_write(g_a, 0, 0, "new\n", 4, &d), -EEXIST);
    assert_non_null(strstr(d.msg, "--force"));
    assert_content(g_a, "old\n");
    assert_int_equal(iof_outfile_write(g_a, 0, IOF_OUTFILE_FORCE, "new\n", 4, &d), 0);
    assert_content(g_a, "new\n");
    assert_int_equal(lstat(g_a, &after), 0);
    assert_true(after.st_ino != before.st_ino); /* a new file renamed over the name */
    assert_int_equal(entries(), 1);
}

static void test_missing_directory(void **state)
{
    struct iof_diag d = {{0}};
    char p[PATH_MAX + 32];

    (void)state;
    snprintf(p, sizeof(p), "%s/nodir/out.csv", g_dir);
    assert_int_equal(iof_outfile_write(p, 0, 0, "x", 1, &d), -ENOENT);
    assert_non_null(strstr(d.msg, p));
    assert_int_equal(entries(), 0);
    snprintf(p, sizeof(p), "%s", g_dir);
    assert_int_equal(iof_outfile_write(p, 0, IOF_OUTFILE_FORCE, "x", 1, &d), -EISDIR);
    assert_non_null(strstr(d.msg, "directory"));
}

/* Until the rename, the name holds the old file (or nothing); after it, the
 * whole new one. An abort leaves the old file and no temporary file. */
static void test_rename_atomicity(void **state)
{
    struct iof_outfile o = IOF_OUTFILE_INIT;
    struct iof_diag d = {{0}};
    FILE *f;

    (void)state;
    put(g_a, "old\n");
    assert_int_equal(iof_outfile_open(&o, g_a, 0, IOF_OUTFILE_FORCE, &d), 0);
    assert_non_null(o.tmp);
    assert_non_null(strstr(o.tmp, "out.csv.tmp-"));
    f = iof_outfile_stdio(&o);
    assert_non_null(f);
    fputs("half", f);
    fflush(f);
    assert_content(g_a, "old\n");
    assert_int_equal(entries(), 2);
    iof_outfile_abort(&o);
    assert_content(g_a, "old\n");
    assert_int_equal(entries(), 1);

    assert_int_equal(iof_outfile_open(&o, g_a, 0, IOF_OUTFILE_FORCE, &d), 0);
    f = iof_outfile_stdio(&o);
    fputs("first ", f);
    assert_content(g_a, "old\n");
    assert_int_equal(iof_outfile_publish(&o, &d), 0); /* a streaming file, published early */
    assert_null(o.tmp);
    assert_content(g_a, "first ");
    fputs("second\n", f);
    assert_int_equal(iof_outfile_close(&o, true, &d), 0);
    assert_content(g_a, "first second\n");
    assert_int_equal(entries(), 1);
}

/* A dangling link planted at the name after the check and before the
 * rename: without force the rename refuses it (the link survives, the
 * output stays in the temporary file when asked to keep it). */
static void test_planted_during_write(void **state)
{
    struct iof_outfile o = IOF_OUTFILE_INIT;
    struct iof_diag d = {{0}};
    struct stat st;
    char tmp[PATH_MAX + 64];

    (void)state;
    assert_int_equal(iof_outfile_open(&o, g_a, 0, 0, &d), 0);
    assert_int_equal(write(o.fd, "data\n", 5), 5);
    snprintf(tmp, sizeof(tmp), "%s", o.tmp);
    assert_int_equal(symlink(g_b, g_a), 0);
    assert_int_equal(iof_outfile_close(&o, true, &d), -EEXIST);
    assert_non_null(strstr(d.msg, tmp));
    assert_int_equal(lstat(g_a, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(g_b, &st), -1);
    assert_content(tmp, "data\n");
    unlink(tmp);
    unlink(g_a);
    /* without keep, the temporary file goes */
    assert_int_equal(iof_outfile_open(&o, g_a, 0, 0, &d), 0);
    assert_int_equal(symlink(g_b, g_a), 0);
    assert_int_equal(iof_outfile_close(&o, false, &d), -EEXIST);
    assert_int_equal(entries(), 1);
}

static void test_modes(void **state)
{
    struct iof_diag d = {{0}};
    struct stat st;
    mode_t old = umask(022);

    (void)state;
    assert_int_equal(iof_outfile_write(g_a, 0, 0, "x", 1, &d), 0);
    assert_int_equal(lstat(g_a, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(iof_outfile_write(g_b, 0600, 0, "x", 1, &d), 0);
    assert_int_equal(lstat(g_b, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    umask(old);
}

/* A FIFO at the name is written as it is; a rewritten-in-place file must be
 * a regular one; "-" is standard output. */
static void test_special_files(void **state)
{
    struct iof_outfile o = IOF_OUTFILE_INIT;
    struct iof_diag d = {{0}};
    char buf[16] = "";
    int rd;

    (void)state;
    assert_int_equal(mkfifo(g_a, 0600), 0);
    rd = open(g_a, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    assert_int_equal(iof_outfile_write(g_a, 0, 0, "fifo", 4, &d), 0);
    assert_int_equal(read(rd, buf, sizeof(buf)), 4);
    assert_memory_equal(buf, "fifo", 4);
    close(rd);
    assert_int_equal(iof_outfile_check(g_a, IOF_OUTFILE_SEEKABLE, &d), -EINVAL);
    assert_int_equal(iof_outfile_check("-", IOF_OUTFILE_SEEKABLE, &d), -EINVAL);
    assert_int_equal(iof_outfile_open(&o, "-", 0, 0, &d), 0);
    assert_true(o.special);
    assert_null(o.tmp);
    assert_int_equal(iof_outfile_close(&o, false, &d), 0);
    assert_int_equal(entries(), 1);
}

/* Appending: the file at the name grows, what it held stays byte for byte
 * and keeps its inode; a missing file is created; a link (dangling or not,
 * with or without force) and a file with another hard link are refused and
 * nothing is written through them; a second appender is refused while the
 * first holds the file; an aborted append leaves no new empty file. */
static void test_append(void **state)
{
    struct iof_diag d = {{0}};
    struct iof_outfile o, o2;
    struct stat before, after, st;
    char c[PATH_MAX + 16];

    (void)state;
    assert_int_equal(iof_outfile_write(g_a, 0, IOF_OUTFILE_APPEND, "one\n", 4, &d), 0);
    assert_content(g_a, "one\n");
    assert_int_equal(lstat(g_a, &before), 0);
    assert_int_equal(iof_outfile_check(g_a, IOF_OUTFILE_APPEND, &d), 0);
    assert_int_equal(iof_outfile_write(g_a, 0, IOF_OUTFILE_APPEND, "two\n", 4, &d), 0);
    assert_content(g_a, "one\ntwo\n");
    assert_int_equal(lstat(g_a, &after), 0);
    assert_true(after.st_ino == before.st_ino); /* the same file, added to */
    assert_int_equal(entries(), 1);

    /* another run appending holds it */
    assert_int_equal(iof_outfile_open(&o, g_a, 0, IOF_OUTFILE_APPEND, &d), 0);
    assert_int_equal(iof_outfile_open(&o2, g_a, 0, IOF_OUTFILE_APPEND, &d), -EBUSY);
    assert_non_null(strstr(d.msg, "another run is appending to it"));
    assert_int_equal(iof_outfile_close(&o, false, &d), 0);
    assert_content(g_a, "one\ntwo\n");

    /* a link to it, or a dangling one: refused, force or not */
    snprintf(c, sizeof(c), "%s/link.csv", g_dir);
    assert_int_equal(symlink(g_a, c), 0);
    for (unsigned f = 0; f < 2; f++) {
        unsigned flags = IOF_OUTFILE_APPEND | (f ? IOF_OUTFILE_FORCE : 0);
        assert_int_equal(iof_outfile_check(c, flags, &d), -ELOOP);
        assert_non_null(strstr(d.msg, "symbolic link, which is never followed"));
        assert_int_equal(iof_outfile_write(c, 0, flags, "x\n", 2, &d), -ELOOP);
    }
    assert_content(g_a, "one\ntwo\n");
    unlink(c);
    assert_int_equal(symlink(g_b, c), 0);
    assert_int_equal(iof_outfile_write(c, 0, IOF_OUTFILE_APPEND, "x\n", 2, &d), -ELOOP);
    assert_int_equal(lstat(g_b, &st), -1); /* the dangling link's target not created */
    unlink(c);

    /* a second hard link: refused */
    assert_int_equal(link(g_a, c), 0);
    assert_int_equal(iof_outfile_write(c, 0, IOF_OUTFILE_APPEND, "x\n", 2, &d), -EMLINK);
    assert_non_null(strstr(d.msg, "hard links"));
    assert_content(g_a, "one\ntwo\n");
    unlink(c);

    /* aborted before anything was written: no empty file left */
    assert_int_equal(iof_outfile_open(&o, c, 0, IOF_OUTFILE_APPEND, &d), 0);
    assert_true(o.created);
    iof_outfile_abort(&o);
    assert_int_equal(lstat(c, &st), -1);
    /* an existing file aborted: kept */
    assert_int_equal(iof_outfile_open(&o, g_a, 0, IOF_OUTFILE_APPEND, &d), 0);
    assert_false(o.created);
    iof_outfile_abort(&o);
    assert_content(g_a, "one\ntwo\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_dangling_link_refused, case_setup),
        cmocka_unit_test_setup(test_dangling_link_forced, case_setup),
        cmocka_unit_test_setup(test_link_to_file, case_setup),
        cmocka_unit_test_setup(test_existing_file, case_setup),
        cmocka_unit_test_setup(test_missing_directory, case_setup),
        cmocka_unit_test_setup(test_rename_atomicity, case_setup),
        cmocka_unit_test_setup(test_planted_during_write, case_setup),
        cmocka_unit_test_setup(test_modes, case_setup),
        cmocka_unit_test_setup(test_special_files, case_setup),
        cmocka_unit_test_setup(test_append, case_setup),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
