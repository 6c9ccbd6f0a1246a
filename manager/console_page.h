/* SPDX-License-Identifier: Apache-2.0 */
/* manager/console_page.h - the console page of `iofleet serve`
 * (docs/console.md) at http://127.0.0.1:PORT/: its HTML with the current
 * state rendered in it (every name escaped), its script and style
 * (manager/console/, compiled in) and Chart.js (Debian's libjs-chart.js,
 * read once when serve starts). All served from this origin only, under a
 * Content-Security-Policy without inline script (manager/api.c).
 */
#ifndef IOF_MANAGER_CONSOLE_PAGE_H
#define IOF_MANAGER_CONSOLE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "proto/msg.h"

struct mgr_serve_live;

/* Reads Chart.js (IOF_CHARTJS, else the build's IOF_CHARTJS_PATH) into l:
 * 0, or -errno and why in msg (the page then draws no chart and says so). */
int mgr_console_chartjs(struct mgr_serve_live *l, char *msg, size_t cap);

/* GET url (a path outside /api/): 200 with the body appended to b and its
 * Content-Type in *type, or 404. Any thread. */
unsigned mgr_console_get(struct mgr_serve_live *l, const char *url, struct iof_buf *b,
                         const char **type);

/* The runs the page's history lists at a time (GET /api/v1/runs?limit=). */
#define MGR_CONSOLE_HISTORY_PAGE 20

/* GET / (or /index.html): the page, with the newest MGR_CONSOLE_HISTORY_PAGE
 * runs of the history at db (NULL: the page says there is none) and, when
 * signed_in (the request came with a session cookie), a Sign out button.
 * 200 with the body appended to b and its Content-Type in *type. Any
 * thread. */
unsigned mgr_console_page(struct mgr_serve_live *l, const char *db, bool signed_in,
                          struct iof_buf *b, const char **type);

/* What serve --http-tokens answers without credentials (docs/console.md,
 * Sign-in): GET / the sign-in page (no inline script), /signin.js its
 * script, /console.css the console's style. 200 with the body appended to
 * b and its Content-Type in *type, or 404 for any other url. Any thread. */
unsigned mgr_console_signin_get(const char *url, struct iof_buf *b, const char **type);

/* One row of the fleet table, escaped, appended to b: what the page's
 * script writes from the agents list (console.js showAgents): its
 * certificate name (NULL: plain TCP) and when it was last seen (connected:
 * now, since connected_ns; else left_ns, wall clock ns). */
void mgr_console_agent_row(struct iof_buf *b, const char *name, const char *status, bool up,
                           const char *certificate, uint64_t connected_ns, uint64_t left_ns,
                           uint32_t cpus, uint64_t memory, const char *disks, const char *software,
                           const char *where);
/* The disks an agent offers, as one line (console.js disks()). */
void mgr_console_disks(const struct proto_inventory *inv, char *out, size_t cap);

#endif
