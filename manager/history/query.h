/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/query.h - the words the run history's commands take (a run
 * id, an age, a time, a tag), parsed once for `iofleet runs` and for `iofleet
 * serve`'s API, so that both accept and refuse the same text with the same
 * reasons. Each parser returns 0, or -EINVAL with diag naming what was given
 * and why it is refused (the caller prefixes the option or parameter). */
#ifndef IOF_MANAGER_HISTORY_QUERY_H
#define IOF_MANAGER_HISTORY_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"

/* A run id: a decimal number from 1. */
bool mgr_query_id(const char *s, int64_t *id);

/* An age, "30d", "12h", "90m", "45s", "2w": nanoseconds. */
int mgr_query_age(const char *s, int64_t *ns, struct iof_diag *diag);

/* A point in time: an age as mgr_query_age() takes it (that long before
 * now_ns), or a UTC time as the run list prints it, "2026-12-06T14:40:00Z",
 * or a day, "2026-12-06" (its midnight UTC). Nanoseconds since the epoch. */
int mgr_query_time(const char *s, int64_t now_ns, int64_t *unix_ns, struct iof_diag *diag);

/* A tag to set or select by: not a number (numbers are run ids), no
 * control characters (common/text.h); "" only when empty_ok. */
int mgr_query_tag(const char *s, bool empty_ok, struct iof_diag *diag);

/* A count from min to max. */
int mgr_query_count(const char *s, long min, long max, long *n, struct iof_diag *diag);

/* Called per member of a JSON object: its key, its type ("null", "true",
 * "false", "integer", "real", "text", "array" or "object") and its value as
 * text (the string, the number's digits; NULL for null, arrays and objects
 * as JSON). Non-zero stops the walk and is returned. */
typedef int (*mgr_query_member_fn)(void *arg, const char *key, const char *type, const char *text,
                                   struct iof_diag *diag);

/* Walks the members of body (len bytes), which must be one JSON object (a
 * request body), with SQLite's JSON functions, the history's one JSON
 * reader (as for `runs import`). 0, cb's error, or -EINVAL with diag when
 * body is not a JSON object, -ENOMEM. */
int mgr_query_json_members(const char *body, size_t len, mgr_query_member_fn cb, void *arg,
                           struct iof_diag *diag);

#endif
