/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http.h - `iofleet run --http [ADDR:]PORT`: the live view (a page,
 * Server-Sent Events, Prometheus /metrics, /api/run JSON) served by
 * libmicrohttpd on its own threads while the run lasts. It is a result sink
 * (manager/sink.h): the run feeds it like the files, on the loop thread,
 * and the HTTP threads only read a locked snapshot (manager/sinks/http_view.h).
 */
#ifndef IOF_MANAGER_SINKS_HTTP_H
#define IOF_MANAGER_SINKS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "manager/sink.h"

/* Parses "[ADDR:]PORT" (ADDR an IPv4 or [IPv6] address; default 127.0.0.1;
 * PORT 0..65535, 0 picks a free one) into a numeric host and port. Returns 0
 * or -EINVAL with diag saying what is wrong. */
int mgr_http_parse(const char *spec, char *host, size_t cap, uint16_t *port, struct iof_diag *diag);

/* A listening socket (SOCK_CLOEXEC, backlog 64) on numeric host:port, as
 * mgr_http_parse gives them: returns the descriptor (the caller owns it),
 * its port in *bound and whether host is a loopback address in *loopback;
 * or -errno with diag ("ADDR:PORT: cannot listen: REASON"). */
int mgr_http_listen(const char *host, uint16_t port, uint16_t *bound, bool *loopback,
                    struct iof_diag *diag);

/* Binds and starts serving now (before anything runs), prints the URL, and
 * warns when the address is not loopback (there is no authentication).
 * linger_s: how long close keeps serving the final figures after the run.
 * Returns 0 and a new sink (free with mgr_sink_close), or an error with
 * diag ("ADDR:PORT: cannot listen: REASON"). */
int mgr_http_open(const char *spec, unsigned linger_s, struct mgr_sink **out,
                  struct iof_diag *diag);

#endif
