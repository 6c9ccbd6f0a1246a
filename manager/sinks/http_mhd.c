/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http_mhd.c - the connection guard as libmicrohttpd callbacks
 * (http_mhd.h), shared by the live view and serve's API. */
#include "manager/sinks/http_mhd.h"

#include <netinet/in.h>
#include <sys/socket.h>

enum MHD_Result mgr_http_mhd_accept(void *guard, const struct sockaddr *sa, socklen_t len)
{
    return mgr_http_guard_admit(guard, sa, len) ? MHD_YES : MHD_NO;
}

void mgr_http_mhd_notify(void *guard, struct MHD_Connection *conn, void **socket_ctx,
                         enum MHD_ConnectionNotificationCode what)
{
    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ad =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ad ? ad->client_addr : NULL;
        socklen_t len = sa && sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                        : sizeof(struct sockaddr_in);

        *socket_ctx = fd ? mgr_http_guard_opened(guard, sa, len, fd->connect_fd) : NULL;
        if (!*socket_ctx && fd) /* no slot: end it before it is read */
            shutdown(fd->connect_fd, SHUT_RDWR);
    } else if (what == MHD_CONNECTION_NOTIFY_CLOSED && *socket_ctx) {
        mgr_http_guard_closed(guard, *socket_ctx);
        *socket_ctx = NULL;
    }
}

struct mgr_http_conn *mgr_http_mhd_conn(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

unsigned mgr_http_mhd_tls(const char *cert, const char *key, const char *prio,
                          struct MHD_OptionItem items[4])
{
    size_t n = 0;

    if (cert && key) {
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert};
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key};
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)prio};
    }
    items[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return n ? MHD_USE_TLS : 0;
}

bool mgr_http_mhd_is_tls(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    return ci && ci->tls_session;
}
