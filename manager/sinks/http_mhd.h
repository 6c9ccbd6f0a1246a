/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http_mhd.h - the connection guard (http_guard.h) as
 * libmicrohttpd callbacks, one copy for both HTTP servers of the manager: the
 * live view (manager/sinks/http.c) and serve's API (manager/api.c). Each
 * callback's cls is the server's struct mgr_http_guard. */
#ifndef IOF_MANAGER_SINKS_HTTP_MHD_H
#define IOF_MANAGER_SINKS_HTTP_MHD_H

#include <microhttpd.h>
#include <stdbool.h>

#include "manager/sinks/http_guard.h"

/* MHD_AcceptPolicyCallback: admits a connection or refuses it (the guard's caps). */
enum MHD_Result mgr_http_mhd_accept(void *guard, const struct sockaddr *sa, socklen_t len);
/* MHD_NotifyConnectionCallback: gives an opened connection its guard entry
 * (no entry: it is shut down before it is read) and frees it when closed. */
void mgr_http_mhd_notify(void *guard, struct MHD_Connection *conn, void **socket_ctx,
                         enum MHD_ConnectionNotificationCode what);
/* The connection's guard entry, NULL when it has none. */
struct mgr_http_conn *mgr_http_mhd_conn(struct MHD_Connection *conn);
/* HTTPS: fills items (4 of them) with the options serving PEM cert and key
 * (borrowed until the daemon stops) with GnuTLS priorities prio, ending with
 * MHD_OPTION_END, for MHD_OPTION_ARRAY; returns the MHD_USE_TLS flag. With
 * cert NULL: items is only the end, and 0 is returned. */
unsigned mgr_http_mhd_tls(const char *cert, const char *key, const char *prio,
                          struct MHD_OptionItem items[4]);
/* Whether conn is a TLS connection (it has a GnuTLS session). */
bool mgr_http_mhd_is_tls(struct MHD_Connection *conn);
/* The Strict-Transport-Security value of HTTPS answers: a year, this host
 * only (not its subdomains, which may serve other things). */
#define MGR_HTTP_HSTS "max-age=31536000"

#endif
