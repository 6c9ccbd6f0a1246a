/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_sink_file.c - how the result files are opened and
 * closed (manager/sink.c, shared by the CSV, time series, Iometer CSV and
 * Iometer instant writers): every refusal names the file and the reason and
 * returns its own code, leaves nothing behind and what was at the name
 * untouched; an accepted file appears whole at close, --force replaces a
 * link (never its target), and a write error at close is returned.
 *
 * Each test works in its own mkdtemp directory under $IOF_TEST_TMPDIR
 * (created if missing; /tmp otherwise), removed at its end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "manager/sink.h"
#include "tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char dir[PATH_MAX];

/* The stdio writers, which all open and close through manager/sink.c. */
static const struct mgr_sink_ops *const writers[] = {
    &mgr_sink_csv,
    &mgr_sink_timeseries,
    &mgr_sink_iometer,
    &mgr_sink_iometer_instant,
};
#define NWRITERS (sizeof(writers) / sizeof(writers[0]))

static void at(char *out, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < PATH_MAX);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The file's text ("" when there is none). */
static const char *get(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    size_t n = 0;

    if (f) {
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

/* How many entries the directory holds (temporary files included). */
static int entries(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* Every writer refuses path with code err and the message "PATH: why",
 * leaving the directory as it was (n entries). */
static void refused(const char *path, unsigned flags, int err, const char *why, int n)
{
    char want[PATH_MAX + 256];
    int len = snprintf(want, sizeof(want), "%s: %s", path, why);

    assert_true(len > 0 && (size_t)len < sizeof(want));
    for (size_t i = 0; i < NWRITERS; i++) {
        struct mgr_sink *s = NULL;
        struct iof_diag d = {{0}};
        errno = 0;
        assert_int_equal(mgr_sink_open(writers[i], path, flags, &s, &d), err);
        assert_null(s);
        assert_string_equal(d.msg, want);
        assert_int_equal(entries(), n);
    }
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir_make(dir, "iof-sinkfile");
}

static int teardown(void **state)
{
    (void)state;
    test_tmpdir_remove(dir);
    return 0;
}

static void test_refuses_an_existing_file(void **state)
{
    char p[PATH_MAX];

    (void)state;
    at(p, "old.csv");
    put(p, "keep\n");
    refused(p, 0, -EEXIST, "the file exists; give --force to replace it, or another name", 1);
    assert_string_equal(get(p), "keep\n");
    unlink(p);
}

static void test_refuses_a_symbolic_link(void **state)
{
    char p[PATH_MAX], target[PATH_MAX], dangling[PATH_MAX];
    struct stat st;

    (void)state;
    at(p, "link.csv");
    at(target, "target");
    at(dangling, "dangling.csv");
    put(target, "theirs\n");
    assert_int_equal(symlink(target, p), 0);
    assert_int_equal(symlink("nowhere", dangling), 0);
    refused(p, 0, -EEXIST,
            "exists as a symbolic link, which is never followed; give --force to replace the "
            "link, or another name",
            3);
    refused(dangling, 0, -EEXIST,
            "exists as a symbolic link, which is never followed; give --force to replace the "
            "link, or another name",
            3);
    assert_string_equal(get(target), "theirs\n");
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(access(dangling, F_OK), -1); /* its target was not created */
    unlink(p);
    unlink(dangling);
    unlink(target);
}

static void test_refuses_a_directory(void **state)
{
    char p[PATH_MAX], slash[PATH_MAX + 1];

    (void)state;
    at(p, "d.csv");
    assert_int_equal(mkdir(p, 0755), 0);
    refused(p, IOF_OUTFILE_FORCE, -EISDIR, "is a directory, not a file", 1);
    rmdir(p);
    assert_true(snprintf(slash, sizeof(slash), "%s/", p) < (int)sizeof(slash));
    refused(slash, 0, -EISDIR, "names a directory, not a file", 0);
}

static void test_refuses_a_socket(void **state)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    (void)state;
    assert_true(fd >= 0);
    if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s.csv", dir) >= (int)sizeof(sa.sun_path)) {
        close(fd);
        skip(); /* $IOF_TEST_TMPDIR too deep for a socket's name */
    }
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    refused(sa.sun_path, IOF_OUTFILE_FORCE, -EINVAL, "is a socket, not a file", 1);
    close(fd);
    unlink(sa.sun_path);
}

static void test_refuses_a_missing_directory(void **state)
{
    char p[PATH_MAX];

    (void)state;
    at(p, "none/r.csv");
    refused(p, 0, -ENOENT, "cannot create: No such file or directory", 0);
}

/* Accepted: under a temporary name until the run begins or the sink
 * closes, then at the name, whole; aborted: nothing left. */
static void test_writes_through_a_temporary_name(void **state)
{
    char p[PATH_MAX];

    (void)state;
    at(p, "r.csv");
    for (size_t i = 0; i < NWRITERS; i++) {
        struct mgr_sink *s = NULL;
        struct iof_diag d = {{0}};
        assert_int_equal(mgr_sink_open(writers[i], p, 0, &s, &d), 0);
        assert_non_null(s);
        assert_non_null(s->priv);
        assert_int_equal(access(p, F_OK), -1);
        assert_int_equal(entries(), 1); /* the temporary file */
        assert_int_equal(mgr_sink_close(s), 0);
        assert_int_equal(entries(), 1);
        assert_int_equal(access(p, F_OK), 0);
        unlink(p);

        s = NULL;
        assert_int_equal(mgr_sink_open(writers[i], p, 0, &s, &d), 0);
        mgr_sink_abort(s);
        assert_int_equal(entries(), 0);
    }
}

/* --force replaces the link itself, never what it points to. */
static void test_force_replaces_the_link(void **state)
{
    char p[PATH_MAX], target[PATH_MAX];
    struct mgr_sink *s = NULL;
    struct iof_diag d = {{0}};
    struct stat st;

    (void)state;
    at(p, "link.csv");
    at(target, "target");
    put(target, "theirs\n");
    assert_int_equal(symlink(target, p), 0);
    assert_int_equal(mgr_sink_open(&mgr_sink_csv, p, IOF_OUTFILE_FORCE, &s, &d), 0);
    assert_int_equal(mgr_sink_close(s), 0);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_true(strncmp(get(p), "test,spec,", 10) == 0);
    assert_string_equal(get(target), "theirs\n");
    unlink(p);
    unlink(target);
}

/* A write that fails (a full device) is returned by the close. */
static void test_close_returns_a_write_error(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK))
        skip();
    for (size_t i = 0; i < NWRITERS; i++) {
        struct mgr_sink *s = NULL;
        struct iof_diag d = {{0}};
        struct mgr_run_info ri = {0};
        assert_int_equal(mgr_sink_open(writers[i], "/dev/full", 0, &s, &d), 0);
        s->ops->run_begin(s, &ri);
        assert_int_equal(mgr_sink_close(s), -ENOSPC);
    }
}

/* The helper itself: the writer's state as sink->priv, its stream in
 * sink->out.f; closing frees the state. */
static void test_writer_state(void **state)
{
    char p[PATH_MAX];
    struct mgr_sink s = {.out = IOF_OUTFILE_INIT};
    struct iof_diag d = {{0}};

    (void)state;
    at(p, "w.csv");
    snprintf(s.path, sizeof(s.path), "%s", p);
    assert_int_equal(mgr_sink_open_writer(&s, 64, &d), 0);
    assert_non_null(s.priv);
    assert_non_null(s.out.f);
    assert_int_equal(((const char *)s.priv)[63], 0);
    fputs("x\n", s.out.f);
    assert_int_equal(mgr_sink_close_writer(&s), 0);
    assert_null(s.priv);
    assert_string_equal(get(p), "x\n");
    unlink(p);

    put(p, "keep\n");
    assert_int_equal(mgr_sink_open_writer(&s, 64, &d), -EEXIST);
    assert_null(s.priv);
    assert_int_equal(mgr_sink_close_writer(&s), 0); /* nothing open: nothing to do */
    unlink(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refuses_an_existing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_a_symbolic_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_a_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_a_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_a_missing_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes_through_a_temporary_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_replaces_the_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_returns_a_write_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_state, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
