/* SPDX-License-Identifier: Apache-2.0 */
/* manager/serve_live.h - the console's state of `iofleet serve` and its
 * event stream (docs/api.md, GET /api/v1/events and /api/v1/runs/last): the
 * agents list, and the last run (under way or ended) with each interval's
 * figures (ALL and per node, read and write apart) and each ended test's
 * final ALL and NODE figures, kept until the next run begins. The loop
 * thread only records into it under its lock (a sink, and the agents list
 * serve publishes); HTTP threads render it. Events are kept in a ring of
 * MGR_LIVE_EVENTS: a stream that falls further behind skips the oldest
 * (counted) and is told to resynchronise, so no client ever stalls the loop.
 */
#ifndef IOF_MANAGER_SERVE_LIVE_H
#define IOF_MANAGER_SERVE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "manager/api.h"

#define MGR_LIVE_EVENTS 1024  /* events a stream may lag behind */
#define MGR_LIVE_POINTS 16384 /* ALL and node intervals kept for the charts (~7 MB of JSON) */

struct mgr_sink;
struct mgr_serve_live;
struct MHD_Response;

/* 0 and a new state in *out, or -errno. */
int mgr_serve_live_new(struct mgr_serve_live **out);
/* After every stream has ended (the API is closed); NULL is fine. */
void mgr_serve_live_free(struct mgr_serve_live *l);

/* The body of GET /api/v1/agents changed (json: len bytes, copied), with
 * the console page's fleet rows (html, escaped, copied; NULL: none): an
 * "agents" event. Any thread. */
void mgr_serve_live_agents(struct mgr_serve_live *l, const char *json, size_t len,
                           const char *html);
/* A sink recording run id into l (new: mgr_sink_close frees it; l
 * borrowed). Its run_begin drops the previous run's state. NULL: no memory. */
struct mgr_sink *mgr_serve_live_sink(struct mgr_serve_live *l, int64_t id);
/* The run under way was asked to stop. */
void mgr_serve_live_stopping(struct mgr_serve_live *l);
/* Every stream ends (serve stops). */
void mgr_serve_live_close(struct mgr_serve_live *l);

/* GET /api/v1/runs/last: 200 and the JSON appended to b, or 404 (msg). */
unsigned mgr_serve_live_last(struct mgr_serve_live *l, struct iof_buf *b, char *msg, size_t cap);
/* The JSON of /api/v1/runs/last (lock held by the call), "null" before any
 * run, then the agents list, into b; *seq: the last event they include. */
void mgr_serve_live_snapshot(struct mgr_serve_live *l, struct iof_buf *run, struct iof_buf *agents,
                             uint64_t *seq);
/* GET /api/v1/events: a new stream response sending the events after
 * `after` (a Last-Event-ID or ?after=; NULL or not a number: from now), or
 * NULL without memory. */
struct MHD_Response *mgr_serve_live_events(struct mgr_serve_live *l, const char *after,
                                           const struct mgr_api_gate *gate);

/* One event stream's reader, as the response of mgr_serve_live_events
 * calls it (and the unit test): new (NULL without memory; gate as
 * mgr_api_console_ops.events takes it, may be NULL), then read (waits up to
 * 10 s for an event, else sends a keep-alive comment): bytes > 0, or
 * libmicrohttpd's MHD_CONTENT_READER_END_OF_STREAM once l is closed or the
 * gate says no (asked before each event and at least once a second),
 * MHD_CONTENT_READER_END_WITH_ERROR without memory. */
struct mgr_serve_live_stream;
struct mgr_serve_live_stream *mgr_serve_live_stream_new(struct mgr_serve_live *l, const char *after,
                                                        const struct mgr_api_gate *gate);
ssize_t mgr_serve_live_stream_read(struct mgr_serve_live_stream *c, char *buf, size_t max);
void mgr_serve_live_stream_free(struct mgr_serve_live_stream *c);

struct mgr_serve_live_stats {
    uint64_t events;  /* events recorded */
    uint64_t skipped; /* events streams skipped, being too far behind */
};
void mgr_serve_live_stats(struct mgr_serve_live *l, struct mgr_serve_live_stats *st);

#endif
