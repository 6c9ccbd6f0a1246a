/* SPDX-License-Identifier: Apache-2.0 */
/* common/os/net_win.c - the Windows part of common/net.h: what Linux does
 * with unix-domain sockets and SO_PEERCRED (the local control socket, a
 * socketpair from a parent) is refused here with the reason, since an agent
 * on Windows is reached over TCP (TLS); small writes are never batched (no
 * io_uring: each is an ordinary write). TCP and TLS are common/net.c. */
#ifdef _WIN32
#include <errno.h>
#include <stdio.h>

#include "common/net_int.h"

#define NET_WIN_NO_UNIX                                                                            \
    "unix-domain sockets are not available in iofleet on Windows: use a TCP address "              \
    "(e.g. 127.0.0.1:7066), with TLS"

void iof_net_batch_send(void) {}

void iof_conn_batch_begin(void) {}

void iof_conn_batch_end(void) {}

int iof_conn_batch_state(void)
{
    return -1;
}

int iof_conn_write_batched(struct iof_conn *c, const void *buf, size_t len)
{
    return iof_conn_write(c, buf, len);
}

void iof_net_os_accepted(struct iof_listener *l, struct iof_conn *c)
{
    (void)l;
    snprintf(c->peer, sizeof(c->peer), "unix:?");
}

void iof_net_os_listener_unlink(struct iof_listener *l)
{
    (void)l;
}

void iof_net_os_listener_closed(struct iof_listener *l)
{
    (void)l;
}

int iof_listener_start_unix(uv_loop_t *loop, const char *path, iof_accept_fn on_accept, void *arg,
                            struct iof_listener **out, struct iof_diag *diag)
{
    (void)loop, (void)on_accept, (void)arg, (void)out;
    return iof_diag_set(diag, -ENOTSUP, "cannot listen on unix:%s: " NET_WIN_NO_UNIX,
                        path ? path : "");
}

int iof_conn_connect_unix(uv_loop_t *loop, const char *path, const struct iof_conn_cbs *cbs,
                          void *arg, struct iof_conn **out)
{
    (void)loop, (void)path, (void)cbs, (void)arg, (void)out;
    return -ENOTSUP;
}

int iof_conn_open_fd(uv_loop_t *loop, int fd, const char *name, const struct iof_conn_cbs *cbs,
                     void *arg, struct iof_conn **out)
{
    (void)loop, (void)fd, (void)name, (void)cbs, (void)arg, (void)out;
    return -ENOTSUP;
}

int iof_conn_peer_cred(const struct iof_conn *c, uid_t *uid, pid_t *pid)
{
    (void)c, (void)uid, (void)pid;
    return -ENOTSUP;
}

int iof_conn_check_local_peer(const struct iof_conn *c, struct iof_diag *diag)
{
    if (!c->unix_sock)
        return iof_diag_set(diag, -EACCES, "%s is a network connection: its user cannot be known",
                            c->peer);
    return iof_diag_set(diag, -EACCES, "%s: " NET_WIN_NO_UNIX, c->peer);
}

int iof_net_raise_fd_limit(unsigned long long *was, unsigned long long *now)
{
    if (was)
        *was = 0;
    if (now)
        *now = 0;
    return 0;
}
#endif
