/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/test_win_outfile.c - common/outfile.h on Windows
 * (common/os/outfile_win.c), under Wine: a new file appears whole and
 * nothing is left beside it, an existing file is kept without force and
 * replaced with it, a directory is refused, a file written as it goes is
 * published early, and a symbolic link planted at the name (before the run,
 * or while the file is written) is refused and its target left alone, when
 * Wine can make one (else the test says so and skips that case). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "common/outfile.h"

#ifndef SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE
#define SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE 0x2
#endif

static char g_dir[MAX_PATH], g_out[MAX_PATH + 16], g_victim[MAX_PATH + 16];

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* The whole content of path ("" when missing). */
static const char *get(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "rb");
    size_t n = 0;

    buf[0] = '\0';
    if (f) {
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

/* How many temporary files (*.tmp-*) are left in the directory. */
static int leftovers(void)
{
    char pat[MAX_PATH + 16];
    WIN32_FIND_DATAA fd;
    HANDLE h;
    int n = 0;

    snprintf(pat, sizeof(pat), "%s\\*.tmp-*", g_dir);
    h = FindFirstFileA(pat, &fd);
    if (h == INVALID_HANDLE_VALUE)
        return 0;
    do
        n++;
    while (FindNextFileA(h, &fd));
    FindClose(h);
    return n;
}

static void empty_dir(void)
{
    char pat[MAX_PATH + 16], p[2 * MAX_PATH];
    WIN32_FIND_DATAA fd;
    HANDLE h;

    snprintf(pat, sizeof(pat), "%s\\*", g_dir);
    h = FindFirstFileA(pat, &fd);
    if (h == INVALID_HANDLE_VALUE)
        return;
    do {
        if (!strcmp(fd.cFileName, ".") || !strcmp(fd.cFileName, ".."))
            continue;
        snprintf(p, sizeof(p), "%s\\%s", g_dir, fd.cFileName);
        if (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
            RemoveDirectoryA(p);
        else
            DeleteFileA(p);
    } while (FindNextFileA(h, &fd));
    FindClose(h);
}

static int group_setup(void **state)
{
    char tmp[MAX_PATH];

    (void)state;
    if (!GetTempPathA(sizeof(tmp), tmp))
        return -1;
    snprintf(g_dir, sizeof(g_dir), "%siofleet-win-outfile-%lu", tmp, GetCurrentProcessId());
    if (!CreateDirectoryA(g_dir, NULL))
        return -1;
    snprintf(g_out, sizeof(g_out), "%s\\out.csv", g_dir);
    snprintf(g_victim, sizeof(g_victim), "%s\\victim", g_dir);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    empty_dir();
    RemoveDirectoryA(g_dir);
    return 0;
}

static int case_setup(void **state)
{
    (void)state;
    empty_dir();
    return 0;
}

static void test_new_file_whole_nothing_left(void **state)
{
    struct iof_diag d = {{0}};

    (void)state;
    assert_int_equal(iof_outfile_write(g_out, 0, 0, "a,b\r\n1,2\n", 9, &d), 0);
    assert_string_equal(get(g_out), "a,b\r\n1,2\n"); /* bytes as given: no text mode */
    assert_int_equal(leftovers(), 0);
}

static void test_existing_file_kept_or_forced(void **state)
{
    struct iof_diag d = {{0}};

    (void)state;
    put(g_out, "old");
    assert_int_equal(iof_outfile_write(g_out, 0, 0, "new", 3, &d), -EEXIST);
    assert_non_null(strstr(d.msg, "the file exists; give --force"));
    assert_string_equal(get(g_out), "old");
    assert_int_equal(leftovers(), 0);
    assert_int_equal(iof_outfile_write(g_out, 0, IOF_OUTFILE_FORCE, "new", 3, &d), 0);
    assert_string_equal(get(g_out), "new");
    assert_int_equal(leftovers(), 0);
}

static void test_directory_refused(void **state)
{
    struct iof_diag d = {{0}};

    (void)state;
    assert_true(CreateDirectoryA(g_out, NULL));
    assert_int_equal(iof_outfile_write(g_out, 0, IOF_OUTFILE_FORCE, "x", 1, &d), -EISDIR);
    assert_non_null(strstr(d.msg, "is a directory"));
    assert_int_equal(leftovers(), 0);
}

/* Nothing at the name until published; later writes land in the published
 * file; a file that appeared meanwhile is kept (no force), with the output
 * left in the temporary file named in the message. */
static void test_publish_early_and_late_arrival(void **state)
{
    struct iof_outfile o;
    struct iof_diag d = {{0}};
    FILE *f;

    (void)state;
    assert_int_equal(iof_outfile_open(&o, g_out, 0, 0, &d), 0);
    f = iof_outfile_stdio(&o);
    assert_non_null(f);
    fputs("head\n", f);
    assert_int_equal(GetFileAttributesA(g_out), INVALID_FILE_ATTRIBUTES);
    assert_int_equal(iof_outfile_publish(&o, &d), 0);
    assert_string_equal(get(g_out), "head\n");
    fputs("row\n", f);
    assert_int_equal(iof_outfile_close(&o, false, &d), 0);
    assert_string_equal(get(g_out), "head\nrow\n");

    assert_int_equal(iof_outfile_open(&o, g_victim, 0, 0, &d), 0);
    put(g_victim, "theirs");
    assert_int_equal(iof_outfile_close(&o, true, &d), -EEXIST);
    assert_non_null(strstr(d.msg, "appeared while it was being written"));
    assert_string_equal(get(g_victim), "theirs");
    assert_int_equal(leftovers(), 1); /* kept: keep_on_failure */
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

/* A symbolic link at the name: never written through, never replaced. */
static void test_planted_link_refused(void **state)
{
    struct iof_outfile o;
    struct iof_diag d = {{0}};

    (void)state;
    put(g_victim, "precious");
    if (!plant_link(g_out, g_victim)) {
        print_message("Wine cannot make a symbolic link here (CreateSymbolicLinkA made no "
                      "reparse point): the planted-link case is not run\n");
        skip();
    }
    assert_int_equal(iof_outfile_check(g_out, IOF_OUTFILE_FORCE, &d), -EEXIST);
    assert_non_null(strstr(d.msg, "reparse point"));
    assert_int_equal(iof_outfile_write(g_out, 0, IOF_OUTFILE_FORCE, "evil", 4, &d), -EEXIST);
    assert_string_equal(get(g_victim), "precious");

    /* Planted while the file is written, with force: refused at the move. */
    assert_true(DeleteFileA(g_out));
    assert_int_equal(iof_outfile_open(&o, g_out, 0, IOF_OUTFILE_FORCE, &d), 0);
    assert_true(plant_link(g_out, g_victim));
    assert_int_equal(iof_outfile_close(&o, false, &d), -EEXIST);
    assert_non_null(strstr(d.msg, "reparse point"));
    assert_string_equal(get(g_victim), "precious");
    assert_true(GetFileAttributesA(g_out) & FILE_ATTRIBUTE_REPARSE_POINT);
    assert_int_equal(leftovers(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_new_file_whole_nothing_left, case_setup),
        cmocka_unit_test_setup(test_existing_file_kept_or_forced, case_setup),
        cmocka_unit_test_setup(test_directory_refused, case_setup),
        cmocka_unit_test_setup(test_publish_early_and_late_arrival, case_setup),
        cmocka_unit_test_setup(test_planted_link_refused, case_setup),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
