/* SPDX-License-Identifier: Apache-2.0 */
/* common/os/net_linux.c - the Linux part of common/net.h: unix-domain
 * sockets (the local control socket, socketpairs from a parent, the
 * directory checks that keep the socket safe), the peer's SO_PEERCRED, and
 * small writes batched through io_uring. The rest of the connection layer,
 * TCP and TLS over libuv, is common/net.c on every system. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "common/net_int.h"

/* Removes the listener's socket file, by its name in the directory opened at
 * start, and only the socket it bound: not one another agent bound there
 * since, nor whatever replaced it. */
void iof_net_os_listener_unlink(struct iof_listener *l)
{
    struct stat st;

    if (l->unix_path && fstatat(l->unix_dirfd, l->unix_base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISSOCK(st.st_mode) && st.st_dev == l->unix_dev && st.st_ino == l->unix_ino)
        unlinkat(l->unix_dirfd, l->unix_base, 0);
}

void iof_net_os_listener_closed(struct iof_listener *l)
{
    if (l->unix_path)
        close(l->unix_dirfd);
}

/* ---- batched small writes through io_uring ---- */

#define CONN_BATCH_MAX 256

struct conn_batch {
    struct io_uring ring;
    int state;      /* 1 usable, 0 not tried, -1 plain writes */
    unsigned depth; /* nested iof_conn_batch_begin() */
    unsigned n;
    struct {
        struct iof_conn *c;
        uint8_t len;
        int res;
        uint8_t data[IOF_CONN_BATCH_MSG_MAX + 64]; /* a TLS record: ciphertext, header, tag */
    } e[CONN_BATCH_MAX];
};

static _Thread_local struct conn_batch *conn_batch;

/* The batch relies on the kernel failing a non-blocking send to a full
 * socket at once (-EAGAIN in the CQE when io_uring_enter returns), not
 * arming a retry that would complete later, after bytes written since:
 * tried once per thread on a socket pair with its buffer filled. */
static bool conn_batch_probe(struct conn_batch *b)
{
    static const char msg[] = "probe";
    struct io_uring_cqe *cqe;
    char fill[4096];
    int sv[2], r, got[2] = {1, 1};
    unsigned head, seen = 0;
    bool ok = false;

    memset(fill, 0, sizeof(fill));
    if (io_uring_queue_init(CONN_BATCH_MAX, &b->ring, 0) < 0)
        return false;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
        io_uring_queue_exit(&b->ring);
        return false;
    }
    for (int i = 0; i < 4096 && send(sv[0], fill, sizeof(fill), MSG_DONTWAIT) > 0; i++)
        ;
    for (int i = 0; i < 2; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);
        /* 0: to the full end; 1: the other way, which has room */
        io_uring_prep_send(sqe, sv[i], msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL);
        sqe->user_data = (uint64_t)i;
    }
    r = io_uring_submit(&b->ring);
    io_uring_for_each_cqe(&b->ring, head, cqe)
    {
        if (cqe->user_data < 2)
            got[cqe->user_data] = cqe->res;
        seen++;
    }
    io_uring_cq_advance(&b->ring, seen);
    ok = r == 2 && seen == 2 && got[0] == -EAGAIN && got[1] == (int)sizeof(msg);
    close(sv[0]);
    close(sv[1]);
    if (!ok)
        io_uring_queue_exit(&b->ring); /* waits for a send still armed */
    return ok;
}

/* An entry's bytes (a TLS connection's are its ciphertext) as an ordinary
 * write: to the socket now, or queued. */
static void conn_batch_plain(struct conn_batch *b, unsigned i)
{
    struct iof_conn *c = b->e[i].c;
    int r;
    if (!c->closing && !c->write_broken &&
        (r = iof_net_conn_send(c, b->e[i].data, b->e[i].len)) < 0)
        iof_conn_close(c, r);
}

/* Sends what the batch holds: each entry's send in one io_uring_enter, then
 * what a socket refused or took in part through the ordinary path. */
static void conn_batch_flush(struct conn_batch *b)
{
    struct io_uring_cqe *cqe;
    unsigned n = b->n, prepped = 0, head, seen = 0;
    int r;

    b->n = 0;
    for (unsigned i = 0; i < n; i++)
        b->e[i].c->batched = false;
    if (b->state == 0 && n >= 2)
        b->state = conn_batch_probe(b) ? 1 : -1;
    if (b->state < 0 || n < 2) {
        for (unsigned i = 0; i < n; i++)
            conn_batch_plain(b, i);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        struct iof_conn *c = b->e[i].c;
        uv_os_fd_t fd;
        b->e[i].res = INT32_MIN; /* not sent here */
        /* Closed since, or queued behind something written since. */
        if (c->closing || c->queued || c->write_broken ||
            uv_fileno((const uv_handle_t *)&c->h.stream, &fd))
            continue;
        struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);
        io_uring_prep_send(sqe, fd, b->e[i].data, b->e[i].len, MSG_DONTWAIT | MSG_NOSIGNAL);
        sqe->user_data = i;
        prepped++;
    }
    r = prepped ? io_uring_submit(&b->ring) : 0;
    if (r < 0 || (unsigned)r != prepped) {
        /* Not expected after the probe: no more batches in this thread. */
        IOF_WARN("batched writes: io_uring_submit: %s; writing one by one from now on",
                 r < 0 ? strerror(-r) : "not every send was taken");
        io_uring_queue_exit(&b->ring);
        b->state = -1;
        for (unsigned i = 0; i < n; i++)
            conn_batch_plain(b, i);
        return;
    }
    io_uring_for_each_cqe(&b->ring, head, cqe)
    {
        if (cqe->user_data < n)
            b->e[cqe->user_data].res = cqe->res;
        seen++;
    }
    io_uring_cq_advance(&b->ring, seen);
    if (seen != prepped) {
        IOF_WARN("batched writes: %u of %u sends not complete at once; writing one by one from "
                 "now on",
                 prepped - seen, prepped);
        io_uring_queue_exit(&b->ring);
        b->state = -1;
    }
    for (unsigned i = 0; i < n; i++) {
        struct iof_conn *c = b->e[i].c;
        int res = b->e[i].res;
        if (res == (int)b->e[i].len)
            continue;
        if (res == INT32_MIN) {
            conn_batch_plain(b, i);
        } else if (res >= 0 || res == -EAGAIN) {
            size_t done = res > 0 ? (size_t)res : 0;
            if (!c->closing &&
                (r = iof_net_conn_send(c, b->e[i].data + done, b->e[i].len - done)) < 0)
                iof_conn_close(c, r);
        } else if (res == -EPIPE || res == -ECONNRESET) {
            c->write_broken = true; /* as conn_send: read out what the peer said */
        } else if (!c->closing) {
            iof_conn_close(c, res);
        }
    }
}

/* Sends this thread's batch now (a connection in it is written otherwise). */
void iof_net_batch_send(void)
{
    if (conn_batch)
        conn_batch_flush(conn_batch);
}

void iof_conn_batch_begin(void)
{
    if (!conn_batch) {
        conn_batch = calloc(1, sizeof(*conn_batch));
        if (!conn_batch)
            return;
    }
    conn_batch->depth++;
}

void iof_conn_batch_end(void)
{
    struct conn_batch *b = conn_batch;
    if (!b || !b->depth)
        return;
    if (--b->depth == 0)
        conn_batch_flush(b);
}

int iof_conn_batch_state(void)
{
    return conn_batch ? conn_batch->state : 0;
}

int iof_conn_write_batched(struct iof_conn *c, const void *buf, size_t len)
{
    struct conn_batch *b = conn_batch;

    if (!b || !b->depth || b->state < 0 || len > IOF_CONN_BATCH_MSG_MAX || c->closing ||
        c->write_broken || c->queued || (c->tls_ctx && (!c->secure || !c->tls)))
        return iof_conn_write(c, buf, len);
    if (c->batched || b->n == CONN_BATCH_MAX)
        conn_batch_flush(b);
    if (c->tls) {
        /* Encrypted now, in the session's order; the record is what waits. */
        int r = iof_net_conn_tls_encrypt(c, buf, len);
        if (r < 0)
            return r;
        if (iof_tls_sess_out_pending(c->tls) > sizeof(b->e[0].data)) {
            /* more than one small record: not batched */
            if ((r = iof_net_conn_tls_flush(c)) < 0)
                iof_conn_close(c, r);
            return r;
        }
        if (!iof_tls_sess_out_pending(c->tls))
            return 0;
        b->e[b->n].len =
            (uint8_t)iof_tls_sess_out_take(c->tls, b->e[b->n].data, sizeof(b->e[0].data));
    } else {
        b->e[b->n].len = (uint8_t)len;
        memcpy(b->e[b->n].data, buf, len);
    }
    b->e[b->n].c = c;
    b->n++;
    c->batched = true;
    return 0;
}

/* Reads the peer's credentials of a unix-domain connection (taken by the
 * kernel when the peer called connect() or socketpair(), or listen() for
 * the server's: it cannot lie about them). */
static void conn_note_cred(struct iof_conn *c)
{
    struct ucred cred;
    uv_os_fd_t fd;
    socklen_t len = sizeof(cred);

    if (uv_fileno(&c->h.handle, &fd) == 0 &&
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred)) {
        c->cred_uid = cred.uid;
        c->cred_pid = cred.pid;
        c->have_cred = true;
    }
}

/* The oldest pending handshake, of source addr when addr is not NULL, and
 * how many there are of it. */

void iof_net_os_accepted(struct iof_listener *l, struct iof_conn *c)
{
    conn_note_cred(c);
    if (c->have_cred)
        snprintf(c->peer, sizeof(c->peer), "pid %ld uid %lu on unix:%s", (long)c->cred_pid,
                 (unsigned long)c->cred_uid, l->unix_path);
    else
        snprintf(c->peer, sizeof(c->peer), "unix:%s", l->unix_path);
}

/* The directory that holds a unix socket, split from its path (absolute):
 * dir gets the directory ("/" for a socket at the root), *base the socket's
 * name within it. */
static int unix_path_split(const char *path, char *dir, size_t cap, const char **base,
                           struct iof_diag *diag)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash == path ? 1 : (size_t)(slash - path);

    *base = slash + 1;
    if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
        return iof_diag_set(diag, -EINVAL, "unix socket path '%s' names no socket file", path);
    if (n >= cap)
        return iof_diag_set(diag, -ENAMETOOLONG, "unix socket path '%s' is too long", path);
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 0;
}

/* Creates dir (its parent must exist), mode 0755 and owned by root, as
 * systemd's RuntimeDirectory= would: for an agent run as root outside
 * systemd, whose /run/iofleet went with the last reboot. The mode is set on
 * the descriptor, not by name. */
static int unix_dir_create(const char *dir, struct iof_diag *diag)
{
    char parent[PATH_MAX];
    const char *leaf;
    int pfd, fd = -1, r = 0;

    if (unix_path_split(dir, parent, sizeof(parent), &leaf, diag) < 0)
        return -ENOENT;
    pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0 && errno == ENOENT)
        return iof_diag_set(diag, -ENOENT,
                            "the socket's directory %s does not exist, nor its parent %s", dir,
                            parent);
    if (pfd < 0)
        return iof_diag_set(diag, -errno, "cannot create the socket's directory %s: %s: %s", dir,
                            parent, strerror(errno));
    if (mkdirat(pfd, leaf, 0755) < 0) {
        /* One made meanwhile is judged like any other by the caller. */
        if (errno != EEXIST)
            r = iof_diag_set(diag, -errno, "cannot create the socket's directory %s: %s", dir,
                             strerror(errno));
    } else if ((fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
               fchown(fd, 0, 0) < 0 || fchmod(fd, 0755) < 0) {
        r = iof_diag_set(diag, -errno, "%s: %s", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
    } else {
        IOF_INFO("created %s (mode 0755, owner root) for the unix socket", dir);
        close(fd);
    }
    close(pfd);
    return r;
}

/* Opens the directory of a unix socket (its last component not followed:
 * a symbolic link there is refused) and checks that nobody but root and
 * this process's user can write in it: whoever can could put a symlink or
 * their own socket in the socket's place. A missing directory is created
 * when we are root (unix_dir_create), else reported missing. */
static int unix_dir_open(const char *dir, int *out, struct iof_diag *diag)
{
    struct stat st;
    uid_t me = geteuid();
    int fd, r;

    fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if (me != 0)
            return iof_diag_set(diag, -ENOENT,
                                "the socket's directory %s does not exist: create it (writable "
                                "only by root or uid %lu), or run dynamo as root, which creates it",
                                dir, (unsigned long)me);
        if ((r = unix_dir_create(dir, diag)) < 0)
            return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        r = -errno;
        if ((r == -ELOOP || r == -ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
            return iof_diag_set(diag, -ELOOP,
                                "the socket's directory %s is a symbolic link: name the directory "
                                "it points to",
                                dir);
        return iof_diag_set(diag, r, "the socket's directory %s: %s", dir, strerror(-r));
    }
    if (fstat(fd, &st) < 0) {
        r = -errno;
        close(fd);
        return iof_diag_set(diag, r, "%s: %s", dir, strerror(-r));
    }
    if ((st.st_uid != 0 && st.st_uid != me) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        char who[48] = "root";
        if (me != 0)
            snprintf(who, sizeof(who), "root and uid %lu (this process)", (unsigned long)me);
        close(fd);
        return iof_diag_set(diag, -EPERM,
                            "the socket's directory %s (mode %04o, owner uid %lu) can be written "
                            "by others than %s, who could replace the socket: use a directory "
                            "owned by %s and not writable by group or others (chmod go-w), such "
                            "as /run/iofleet",
                            dir, (unsigned)(st.st_mode & 07777), (unsigned long)st.st_uid, who,
                            me ? "root or this user" : "root");
    }
    *out = fd;
    return 0;
}

/* What is at base in dirfd before we bind there: nothing (0), a stale
 * socket nobody listens on (removed, 0), or a reason to refuse. Never
 * removes anything but a socket, and only from dirfd. */
static int unix_path_clear(int dirfd, const char *base, const char *path, struct iof_diag *diag)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    struct stat st, again;
    int fd, r;

    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : iof_diag_set(diag, -errno, "%s: %s", path, strerror(errno));
    if (!S_ISSOCK(st.st_mode))
        return iof_diag_set(diag, -EEXIST, "%s exists and is not a socket: not replacing it", path);
    /* A socket file: is anybody listening on it? */
    memcpy(sun.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return iof_diag_set(diag, -errno, "socket: %s", strerror(errno));
    r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
    r = r < 0 ? -errno : 0;
    close(fd);
    if (r == 0)
        return iof_diag_set(diag, -EADDRINUSE, "%s: another process is listening on it", path);
    if (r != -ECONNREFUSED)
        return iof_diag_set(diag, r, "%s: %s", path, strerror(-r));
    /* Still the socket we probed (the directory is root's or ours). */
    if (fstatat(dirfd, base, &again, AT_SYMLINK_NOFOLLOW) < 0 || again.st_dev != st.st_dev ||
        again.st_ino != st.st_ino || !S_ISSOCK(again.st_mode))
        return iof_diag_set(diag, -EAGAIN, "%s changed while it was checked: not removing it",
                            path);
    if (unlinkat(dirfd, base, 0) < 0 && errno != ENOENT)
        return iof_diag_set(diag, -errno, "cannot remove the stale socket %s: %s", path,
                            strerror(errno));
    IOF_INFO("removed the stale socket %s (nobody listened on it)", path);
    return 0;
}

/* Binds a new unix stream socket to path, mode 0600 from bind() itself: no
 * chmod() by name afterwards, which a symlink swapped in meanwhile would
 * redirect to another file. The umask is process-wide: the caller runs
 * before it starts any thread (see iof_listener_start_unix). */
static int unix_bind(const char *path, int *out, struct iof_diag *diag)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    mode_t old_mask;
    int fd, r;

    memcpy(sun.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return iof_diag_set(diag, -errno, "socket: %s", strerror(errno));
    old_mask = umask(0177);
    r = bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ? -errno : 0;
    umask(old_mask);
    if (r < 0) {
        close(fd);
        return iof_diag_set(diag, r, "cannot bind unix:%s: %s", path, strerror(-r));
    }
    *out = fd;
    return 0;
}

int iof_listener_start_unix(uv_loop_t *loop, const char *path, iof_accept_fn on_accept, void *arg,
                            struct iof_listener **out, struct iof_diag *diag)
{
    struct iof_listener *l;
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    const char *base;
    struct stat st;
    int dirfd = -1, fd = -1, r;

    if (!path || path[0] != '/')
        return iof_diag_set(diag, -EINVAL, "unix socket path '%s' must be absolute",
                            path ? path : "");
    if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return iof_diag_set(diag, -ENAMETOOLONG, "unix socket path '%s' is longer than %zu bytes",
                            path, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
    if ((r = unix_path_split(path, dir, sizeof(dir), &base, diag)) < 0 ||
        (r = unix_dir_open(dir, &dirfd, diag)) < 0)
        return r;
    if ((r = unix_path_clear(dirfd, base, path, diag)) < 0 ||
        (r = unix_bind(path, &fd, diag)) < 0) {
        close(dirfd);
        return r;
    }
    /* What we bound, to remove only it at close. */
    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode)) {
        close(fd);
        close(dirfd);
        return iof_diag_set(diag, -EAGAIN, "unix:%s: the socket vanished after bind", path);
    }
    l = calloc(1, sizeof(*l));
    if (!l || !(l->unix_path = strdup(path))) {
        free(l);
        unlinkat(dirfd, base, 0);
        close(fd);
        close(dirfd);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    l->on_accept = on_accept;
    l->arg = arg;
    l->unix_dirfd = dirfd;
    l->unix_base = l->unix_path + (base - path);
    l->unix_dev = st.st_dev;
    l->unix_ino = st.st_ino;
    /* Opened, not bound, by libuv: it then never unlinks the path by name. */
    r = uv_pipe_init(loop, &l->h.pipe, 0);
    if (r < 0) {
        unlinkat(dirfd, base, 0);
        close(fd);
        close(dirfd);
        free(l->unix_path);
        free(l);
        return iof_diag_set(diag, r, "cannot create a socket: %s", uv_strerror(r));
    }
    r = uv_pipe_open(&l->h.pipe, fd);
    if (r < 0)
        close(fd);
    else
        r = uv_listen(&l->h.stream, 1024, iof_net_listener_on_conn);
    if (r < 0) {
        iof_diag_set(diag, r, "cannot listen on unix:%s: %s", path, uv_strerror(r));
        iof_net_os_listener_unlink(l);
        uv_close(&l->h.handle, iof_net_listener_on_closed);
        return r;
    }
    *out = l;
    return 0;
}

static void conn_on_pipe_connect(uv_connect_t *req, int status)
{
    struct iof_conn *c = req->data;
    if (status == 0)
        status = iof_net_conn_start_reading(c);
    if (status == 0)
        conn_note_cred(c);
    if (status < 0 && !c->closing)
        snprintf(c->err, sizeof(c->err), "cannot connect to %s: %s", c->peer, uv_strerror(status));
    if (c->cbs.on_connect)
        c->cbs.on_connect(c, status, c->arg);
    if (status < 0)
        iof_conn_close(c, status);
}

int iof_conn_connect_unix(uv_loop_t *loop, const char *path, const struct iof_conn_cbs *cbs,
                          void *arg, struct iof_conn **out)
{
    struct iof_conn *c;

    if (!path || !path[0] || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return -ENAMETOOLONG;
    c = iof_net_conn_new(loop, cbs, arg, NULL, true);
    if (!c)
        return -ENOMEM;
    c->outgoing = true;
    snprintf(c->peer, sizeof(c->peer), "unix:%s", path);
    c->creq.data = c;
    uv_pipe_connect(&c->creq, &c->h.pipe, path, conn_on_pipe_connect);
    *out = c;
    return 0;
}

int iof_conn_open_fd(uv_loop_t *loop, int fd, const char *name, const struct iof_conn_cbs *cbs,
                     void *arg, struct iof_conn **out)
{
    struct iof_conn *c;
    int type = 0, domain = 0, r;
    socklen_t len = sizeof(type), dlen = sizeof(domain);

    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) < 0)
        return -errno;
    if (type != SOCK_STREAM || domain != AF_UNIX)
        return -ENOTSOCK;
    c = iof_net_conn_new(loop, cbs, arg, NULL, true);
    if (!c)
        return -ENOMEM;
    r = uv_pipe_open(&c->h.pipe, fd);
    if (r == 0)
        r = iof_net_conn_start_reading(c);
    if (r < 0) {
        c->cbs.on_close = NULL;
        iof_conn_close(c, r);
        return r;
    }
    conn_note_cred(c);
    if (c->have_cred)
        snprintf(c->peer, sizeof(c->peer), "%s (pid %ld uid %lu)", name ? name : "socketpair",
                 (long)c->cred_pid, (unsigned long)c->cred_uid);
    else
        snprintf(c->peer, sizeof(c->peer), "%s", name ? name : "socketpair");
    *out = c;
    return 0;
}

int iof_conn_peer_cred(const struct iof_conn *c, uid_t *uid, pid_t *pid)
{
    if (!c->have_cred)
        return -ENOTSUP;
    if (uid)
        *uid = c->cred_uid;
    if (pid)
        *pid = c->cred_pid;
    return 0;
}

int iof_conn_check_local_peer(const struct iof_conn *c, struct iof_diag *diag)
{
    uid_t me = geteuid();

    if (!c->unix_sock)
        return iof_diag_set(diag, -EACCES, "%s is a network connection: its user cannot be known",
                            c->peer);
    if (!c->have_cred)
        return iof_diag_set(diag, -EACCES, "%s: the peer's credentials cannot be read", c->peer);
    if (c->cred_uid == 0 || c->cred_uid == me)
        return 0;
    return iof_diag_set(diag, -EACCES,
                        "%s: uid %lu is neither root nor this process's user (uid %lu)", c->peer,
                        (unsigned long)c->cred_uid, (unsigned long)me);
}

int iof_net_raise_fd_limit(unsigned long long *was, unsigned long long *now)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -errno;
    if (was)
        *was = rl.rlim_cur;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            return -errno;
    }
    if (now)
        *now = rl.rlim_cur;
    return 0;
}
