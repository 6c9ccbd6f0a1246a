/* SPDX-License-Identifier: Apache-2.0 */
/* manager/sinks/http_page.h - the live view's page (`/` of `iofleet run
 * --http`): the HTML with the run's state rendered in it, so a page that
 * never gets the event stream (a screenshot, a text browser) shows the
 * run, then kept current by its script from /events. */
#ifndef IOF_MANAGER_SINKS_HTTP_PAGE_H
#define IOF_MANAGER_SINKS_HTTP_PAGE_H

#include <stdint.h>

#include "common/buf.h"
#include "manager/sinks/http_view.h"

/* Lock held (mgr_view_lock): appends the whole page for v at now_wall_ns to
 * b; every name from the plan or an agent is HTML-escaped. */
void mgr_http_page(const struct mgr_view *v, uint64_t now_wall_ns, struct iof_buf *b);

/* The page's Content-Security-Policy: its own script (by its SHA-256) and
 * its origin's event stream, no other script, inline or not. Static; any
 * thread. */
const char *mgr_http_page_csp(void);

#endif
