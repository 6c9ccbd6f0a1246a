/* tests/unit/test_net_local.c - unix-domain connections of common/net.c:
 * the peer's credentials of a socketpair (what the embedded agent and its
 * manager check), the local-peer rule, a descriptor that is no unix stream
 * socket refused, and the unix listener's file handling: created 0600, a
 * live socket and a regular file refused, a stale socket replaced, the
 * socket removed at close; a dialled unix connection carries the server's
 * credentials.
 *
 * Files live in a mkdtemp directory under $IOF_TEST_TMPDIR (created if
 * missing; /tmp otherwise), removed at the end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char g_dir[200];

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

int main(void)
{
    const char *base = getenv("IOF_TEST_TMPDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_socketpair_cred),  cmocka_unit_test(test_write_direct_then_queued),
        cmocka_unit_test(test_open_fd_not_unix), cmocka_unit_test(test_addr_is_unix),
        cmocka_unit_test(test_unix_listener),
    };
    int rc;

    if (!base || !*base)
        base = "/tmp";
    mkdir(base, 0755);
    snprintf(g_dir, sizeof(g_dir), "%s/net.XXXXXX", base);
    if (!mkdtemp(g_dir)) {
        perror(g_dir);
        return 1;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(g_dir);
    return rc;
}
