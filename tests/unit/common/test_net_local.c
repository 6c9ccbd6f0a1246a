/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_net_local.c - unix-domain connections of common/net.c:
 * the peer's credentials of a socketpair (what the embedded agent and its
 * manager check), the local-peer rule, a descriptor that is no unix stream
 * socket refused, and the unix listener's file handling: created 0600, a
 * live socket and a regular file refused, a stale socket replaced, the
 * socket removed at close; a dialled unix connection carries the server's
 * credentials. The socket's directory: one others can write, one owned by
 * another user, or a symbolic link is refused; a missing one is reported as
 * missing (created by root); the socket's mode comes from bind() alone,
 * never a chmod() by name that a swapped-in symlink would redirect.
 *
 * Files live in a mkdtemp directory under $IOF_TEST_TMPDIR (created if
 * missing; /tmp otherwise), removed at the end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/net.h"
#include "tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char g_dir[200]; /* short: unix socket paths are made in it */

/* chmod() of this program (linked with --wrap=chmod): when g_victim is set,
 * it first replaces what is at path with a symlink to g_victim, as a user
 * owning the socket's directory could between bind() and a chmod() by name. */
int __real_chmod(const char *path, mode_t mode);
int __wrap_chmod(const char *path, mode_t mode);
static const char *g_victim;

int __wrap_chmod(const char *path, mode_t mode)
{
    if (g_victim && unlink(path) == 0 && symlink(g_victim, path) < 0)
        return -1;
    return __real_chmod(path, mode);
}

static void on_close_count(struct iof_conn *c, int err, void *arg)
{
    (void)c;
    (void)err;
    (*(int *)arg)++;
}

static void test_socketpair_cred(void **state)
{
    static const struct iof_conn_cbs cbs = {.on_close = on_close_count};
    struct iof_diag d = {{0}};
    struct iof_conn *c;
    uv_loop_t loop;
    int sv[2], closed = 0;
    uid_t uid = (uid_t)-1;
    pid_t pid = 0;
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    assert_int_equal(iof_conn_open_fd(&loop, sv[0], "the pair", &cbs, &closed, &c), 0);
    assert_true(iof_conn_is_unix(c));
    assert_int_equal(iof_conn_peer_cred(c, &uid, &pid), 0);
    assert_int_equal(uid, geteuid());
    assert_int_equal(pid, getpid());
    assert_int_equal(iof_conn_check_local_peer(c, &d), 0);
    assert_non_null(strstr(iof_conn_peer(c), "the pair (pid "));
    iof_conn_close(c, 0);
    close(sv[1]);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(closed, 1);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* A write to an idle connection goes to the socket at once: nothing is
 * queued and the peer can read it before the loop runs. Once the socket is
 * full, writes queue, and everything still arrives in order. */
static void test_write_direct_then_queued(void **state)
{
    static const struct iof_conn_cbs cbs = {.on_close = on_close_count};
    enum { CHUNK = 65536 };
    static uint8_t chunk[CHUNK], got[CHUNK];
    struct iof_conn *c;
    uv_loop_t loop;
    int sv[2], closed = 0, sndbuf = 65536;
    uint64_t sent = 0, seen = 0;
    unsigned k = 0;
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
    assert_int_equal(iof_conn_open_fd(&loop, sv[0], "the pair", &cbs, &closed, &c), 0);
    assert_int_equal(iof_conn_write(c, "heartbeat", 9), 0);
    assert_int_equal(iof_conn_queued(c), 0);
    assert_int_equal(recv(sv[1], got, sizeof(got), MSG_DONTWAIT), 9);
    assert_memory_equal(got, "heartbeat", 9);
    /* Fill the socket: each chunk numbered by its bytes. */
    while (iof_conn_queued(c) == 0 && k < 1000) {
        memset(chunk, (int)(k++ & 0xff), sizeof(chunk));
        assert_int_equal(iof_conn_write(c, chunk, sizeof(chunk)), 0);
        sent += CHUNK;
    }
    assert_true(iof_conn_queued(c) > 0);
    for (unsigned i = 0; i < 3; i++, k++) {
        memset(chunk, (int)(k & 0xff), sizeof(chunk));
        assert_int_equal(iof_conn_write(c, chunk, sizeof(chunk)), 0);
        sent += CHUNK;
    }
    /* Read it all while the loop writes the rest. */
    while (seen < sent) {
        ssize_t n;
        uv_run(&loop, UV_RUN_NOWAIT);
        while ((n = recv(sv[1], got, sizeof(got), MSG_DONTWAIT)) > 0)
            for (ssize_t i = 0; i < n; i++, seen++)
                assert_int_equal(got[i], (uint8_t)((seen / CHUNK) & 0xff));
    }
    assert_true(seen == sent);
    assert_int_equal(iof_conn_queued(c), 0);
    iof_conn_close(c, 0);
    close(sv[1]);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(closed, 1);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_open_fd_not_unix(void **state)
{
    struct iof_conn *c = NULL;
    uv_loop_t loop;
    int p[2], s;
    (void)state;

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(pipe(p), 0);
    assert_int_equal(iof_conn_open_fd(&loop, p[0], NULL, NULL, NULL, &c), -ENOTSOCK);
    s = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s >= 0);
    assert_int_equal(iof_conn_open_fd(&loop, s, NULL, NULL, NULL, &c), -ENOTSOCK);
    assert_null(c);
    close(p[0]);
    close(p[1]);
    close(s);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_addr_is_unix(void **state)
{
    const char *path = NULL;
    (void)state;
    assert_true(iof_addr_is_unix("unix:/run/a.sock", &path));
    assert_string_equal(path, "/run/a.sock");
    assert_false(iof_addr_is_unix("127.0.0.1:7066", &path));
    assert_false(iof_addr_is_unix("unixhost:7066", NULL));
    assert_false(iof_addr_is_unix(NULL, NULL));
}

struct lis {
    int accepted;
    int connected;
    uid_t server_uid;
    struct iof_conn *client;
};

static void lis_on_accept(struct iof_listener *l, struct iof_conn *c, void *arg)
{
    struct lis *s = arg;
    struct iof_diag d = {{0}};
    (void)l;
    s->accepted++;
    assert_true(iof_conn_is_unix(c));
    assert_int_equal(iof_conn_check_local_peer(c, &d), 0);
    assert_non_null(strstr(iof_conn_peer(c), " on unix:"));
    iof_conn_close(c, 0);
}

static void cli_on_connect(struct iof_conn *c, int err, void *arg)
{
    struct lis *s = arg;
    assert_int_equal(err, 0);
    s->connected++;
    assert_int_equal(iof_conn_peer_cred(c, &s->server_uid, NULL), 0);
    iof_conn_close(c, 0);
}

/* A socket file at path that nobody listens on (an agent that was killed). */
static void make_stale_socket(const char *path)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_true(strlen(path) < sizeof(sun.sun_path));
    memcpy(sun.sun_path, path, strlen(path) + 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
    close(fd);
}

static void test_unix_listener(void **state)
{
    static const struct iof_conn_cbs ccbs = {.on_connect = cli_on_connect};
    struct iof_listener *l = NULL, *l2 = NULL;
    struct iof_diag d = {{0}};
    struct lis s = {0};
    struct iof_conn *c;
    char path[300], file[300];
    struct stat st;
    uv_loop_t loop;
    FILE *f;
    (void)state;

    snprintf(path, sizeof(path), "%s/a.sock", g_dir);
    snprintf(file, sizeof(file), "%s/file", g_dir);
    assert_int_equal(uv_loop_init(&loop), 0);

    /* A stale socket is replaced; the new one is 0600. */
    make_stale_socket(path);
    assert_int_equal(iof_listener_start_unix(&loop, path, lis_on_accept, &s, &l, &d), 0);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);

    /* A live one is refused, and left alone. */
    assert_int_equal(iof_listener_start_unix(&loop, path, lis_on_accept, &s, &l2, &d), -EADDRINUSE);
    assert_non_null(strstr(d.msg, "another process is listening on it"));
    assert_int_equal(lstat(path, &st), 0);

    /* A regular file is refused and not touched; a relative path too. */
    f = fopen(file, "w");
    assert_non_null(f);
    fputs("keep", f);
    fclose(f);
    assert_int_equal(iof_listener_start_unix(&loop, file, lis_on_accept, &s, &l2, &d), -EEXIST);
    assert_int_equal(lstat(file, &st), 0);
    assert_int_equal(st.st_size, 4);
    assert_int_equal(iof_listener_start_unix(&loop, "rel.sock", lis_on_accept, &s, &l2, &d),
                     -EINVAL);

    /* A client gets through; each side knows the other is us. */
    assert_int_equal(iof_conn_connect_unix(&loop, path, &ccbs, &s, &c), 0);
    while (!(s.accepted && s.connected))
        assert_int_not_equal(uv_run(&loop, UV_RUN_ONCE), 0);
    assert_int_equal(s.server_uid, geteuid());

    /* Closing removes the socket file. */
    iof_listener_close(l);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(lstat(path, &st), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(uv_loop_close(&loop), 0);
    unlink(file);
}

/* The race of a chmod() by name after bind(): the victim keeps its mode. */
static void test_unix_no_chmod_by_name(void **state)
{
    struct iof_listener *l = NULL;
    struct iof_diag d = {{0}};
    struct lis s = {0};
    char path[300], victim[300];
    struct stat st;
    uv_loop_t loop;
    mode_t old;
    int fd;
    (void)state;

    snprintf(path, sizeof(path), "%s/race.sock", g_dir);
    snprintf(victim, sizeof(victim), "%s/victim", g_dir);
    fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    assert_int_equal(fchmod(fd, 0644), 0);
    close(fd);
    assert_int_equal(uv_loop_init(&loop), 0);
    g_victim = victim;
    old = umask(0); /* the mode must not depend on the caller's umask */
    assert_int_equal(iof_listener_start_unix(&loop, path, lis_on_accept, &s, &l, &d), 0);
    umask(old);
    g_victim = NULL;
    assert_int_equal(lstat(victim, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    iof_listener_close(l);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(lstat(path, &st), -1);
    unlink(victim);
}

/* Starts a listener on DIR/a.sock that must be refused with want, its
 * message holding each of the NULL-terminated texts; nothing is created. */
static void expect_unix_refused(const char *dir, int want, ...)
{
    struct iof_listener *l = NULL;
    struct iof_diag d = {{0}};
    struct lis s = {0};
    char path[300];
    struct stat st;
    uv_loop_t loop;
    const char *text;
    va_list ap;

    snprintf(path, sizeof(path), "%s/a.sock", dir);
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(iof_listener_start_unix(&loop, path, lis_on_accept, &s, &l, &d), want);
    assert_null(l);
    va_start(ap, want);
    while ((text = va_arg(ap, const char *)))
        if (!strstr(d.msg, text))
            fail_msg("'%s' not in '%s'", text, d.msg);
    va_end(ap);
    assert_int_equal(lstat(path, &st), -1);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_unix_dir_checks(void **state)
{
    char open_dir[300], sticky[300], other[300], real[300], link[300], missing[300];
    char run[300], path[320];
    struct iof_listener *l = NULL;
    struct iof_diag d = {{0}};
    struct lis s = {0};
    struct stat st;
    uv_loop_t loop;
    (void)state;

    /* Writable by others (sticky or not): refused, naming mode and owner. */
    snprintf(open_dir, sizeof(open_dir), "%s/open", g_dir);
    assert_int_equal(mkdir(open_dir, 0700), 0);
    assert_int_equal(chmod(open_dir, 0777), 0);
    expect_unix_refused(open_dir, -EPERM, open_dir, "mode 0777", "can be written by others", NULL);
    snprintf(sticky, sizeof(sticky), "%s/sticky", g_dir);
    assert_int_equal(mkdir(sticky, 0700), 0);
    assert_int_equal(chmod(sticky, 01777), 0);
    expect_unix_refused(sticky, -EPERM, sticky, "mode 1777", NULL);
    assert_int_equal(chmod(open_dir, 0770), 0);
    expect_unix_refused(open_dir, -EPERM, "mode 0770", NULL);

    /* Owned by another user (only root can make one). */
    snprintf(other, sizeof(other), "%s/other", g_dir);
    assert_int_equal(mkdir(other, 0755), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(other, 65534, 65534), 0);
        expect_unix_refused(other, -EPERM, other, "owner uid 65534", NULL);
    }

    /* A symbolic link as the directory: refused, nothing made behind it. */
    snprintf(real, sizeof(real), "%s/real", g_dir);
    snprintf(link, sizeof(link), "%s/link", g_dir);
    assert_int_equal(mkdir(real, 0700), 0);
    assert_int_equal(symlink(real, link), 0);
    expect_unix_refused(link, -ELOOP, link, "symbolic link", NULL);

    /* A directory whose parent is missing: "does not exist", not EACCES. */
    snprintf(missing, sizeof(missing), "%s/no/such", g_dir);
    expect_unix_refused(missing, -ENOENT, missing, "does not exist", NULL);

    /* The runtime directory itself missing: root creates it (0755, root's);
     * another user is told it is missing. */
    snprintf(run, sizeof(run), "%s/run", g_dir);
    snprintf(path, sizeof(path), "%s/a.sock", run);
    if (geteuid() == 0) {
        mode_t old = umask(077);
        assert_int_equal(uv_loop_init(&loop), 0);
        assert_int_equal(iof_listener_start_unix(&loop, path, lis_on_accept, &s, &l, &d), 0);
        umask(old);
        assert_int_equal(lstat(run, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0755);
        assert_int_equal(st.st_uid, 0);
        assert_int_equal(st.st_gid, 0);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
        iof_listener_close(l);
        assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
        assert_int_equal(uv_loop_close(&loop), 0);
        assert_int_equal(rmdir(run), 0);
    } else {
        expect_unix_refused(run, -ENOENT, run, "does not exist", NULL);
    }

    assert_int_equal(unlink(link), 0);
    assert_int_equal(rmdir(real), 0);
    assert_int_equal(rmdir(other), 0);
    assert_int_equal(rmdir(sticky), 0);
    assert_int_equal(rmdir(open_dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_socketpair_cred),  cmocka_unit_test(test_write_direct_then_queued),
        cmocka_unit_test(test_open_fd_not_unix), cmocka_unit_test(test_addr_is_unix),
        cmocka_unit_test(test_unix_listener),    cmocka_unit_test(test_unix_no_chmod_by_name),
        cmocka_unit_test(test_unix_dir_checks),
    };
    char dir[PATH_MAX];
    int rc;

    if (test_tmpdir_make(dir, "net") < 0)
        return 1;
    if (strlen(dir) >= sizeof(g_dir)) {
        fprintf(stderr, "temp dir %s: too long for unix socket paths\n", dir);
        test_tmpdir_remove(dir);
        return 1;
    }
    memcpy(g_dir, dir, strlen(dir) + 1);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_tmpdir_remove(dir);
    return rc;
}
