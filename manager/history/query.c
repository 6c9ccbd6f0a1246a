/* SPDX-License-Identifier: Apache-2.0 */
/* manager/history/query.c - parsing of the run history's words (ids, ages,
 * times, tags, counts), shared by `iofleet runs` and serve's API
 * (manager/history/query.h). */
#include "manager/history/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "common/text.h"

bool mgr_query_id(const char *s, int64_t *id)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (!*s || *s == '+' || *s == '-' || *s == ' ' || *end || errno || v <= 0)
        return false;
    *id = v;
    return true;
}

int mgr_query_age(const char *s, int64_t *ns, struct iof_diag *diag)
{
    static const struct {
        char unit;
        int64_t s;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}};
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (end != s && *s >= '0' && *s <= '9' && !errno && v >= 0 && end[0] && !end[1])
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (*end == units[i].unit) {
                if (v > INT64_MAX / 1000000000 / units[i].s)
                    return iof_diag_set(diag, -EINVAL, "'%.64s' is too long ago", s);
                *ns = (int64_t)v * units[i].s * 1000000000;
                return 0;
            }
    return iof_diag_set(diag, -EINVAL, "must be a number and s, m, h, d or w (30d), got '%.64s'",
                        s);
}

int mgr_query_time(const char *s, int64_t now_ns, int64_t *unix_ns, struct iof_diag *diag)
{
    struct tm tm;
    const char *end;
    int64_t age;
    time_t t;

    if (*s >= '0' && *s <= '9' && strlen(s) <= 8 && !mgr_query_age(s, &age, NULL)) {
        *unix_ns = now_ns - age;
        return 0;
    }
    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end) {
        memset(&tm, 0, sizeof(tm));
        end = strptime(s, "%Y-%m-%d", &tm);
    }
    if (!end || *end || strlen(s) < 10 || (t = timegm(&tm)) == (time_t)-1 || t < 0)
        return iof_diag_set(diag, -EINVAL,
                            "must be an age (30d: a number and s, m, h, d or w), a UTC time "
                            "(2026-12-06T14:40:00Z) or a day (2026-12-06), got '%.64s'",
                            s);
    *unix_ns = (int64_t)t * 1000000000;
    return 0;
}

int mgr_query_tag(const char *s, bool empty_ok, struct iof_diag *diag)
{
    struct iof_text_fault tf;
    char why[64];
    int64_t id;

    if (!*s && !empty_ok)
        return iof_diag_set(diag, -EINVAL, "must not be empty");
    if (mgr_query_id(s, &id))
        return iof_diag_set(diag, -EINVAL,
                            "a tag cannot be a number (numbers are run ids), got '%.64s'", s);
    if (iof_text_check(s, &tf))
        return iof_diag_set(diag, -EINVAL, "must not contain control characters, got %s",
                            iof_text_fault_str(why, sizeof(why), &tf));
    return 0;
}

int mgr_query_count(const char *s, long min, long max, long *n, struct iof_diag *diag)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (!*s || *s < '0' || *s > '9' || *end || errno || v < min || v > max)
        return iof_diag_set(diag, -EINVAL, "must be a number %ld..%ld, got '%.64s'", min, max, s);
    *n = v;
    return 0;
}

int mgr_query_json_members(const char *body, size_t len, mgr_query_member_fn cb, void *arg,
                           struct iof_diag *diag)
{
    static const char sql[] = "SELECT key, type, CASE WHEN type IN ('array', 'object') THEN "
                              "value ELSE atom END FROM json_each(?1) WHERE json_valid(?1) AND "
                              "json_type(?1) = 'object' ORDER BY id";
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    int rc = 0, step = SQLITE_DONE;

    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_text(s, 1, body, (int)len, SQLITE_STATIC) != SQLITE_OK) {
        sqlite3_finalize(s);
        sqlite3_close(db);
        return iof_diag_set(diag, -ENOMEM, "out of memory");
    }
    if (memchr(body, '\0', len))
        rc = iof_diag_set(diag, -EINVAL, "the body is not a JSON object: it holds a NUL byte");
    else {
        sqlite3_stmt *v;
        /* An object with no member and a body that is none look alike to
         * json_each: tell them apart first. */
        if (sqlite3_prepare_v2(
                db, "SELECT CASE WHEN json_valid(?1) THEN json_type(?1) = 'object' ELSE 0 END", -1,
                &v, NULL) == SQLITE_OK &&
            sqlite3_bind_text(v, 1, body, (int)len, SQLITE_STATIC) == SQLITE_OK &&
            sqlite3_step(v) == SQLITE_ROW && !sqlite3_column_int(v, 0))
            rc = iof_diag_set(diag, -EINVAL,
                              "the body is not a JSON object (send {} with the members "
                              "docs/api.md names)");
        sqlite3_finalize(v);
    }
    while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW)
        rc = cb(arg, (const char *)sqlite3_column_text(s, 0),
                (const char *)sqlite3_column_text(s, 1), (const char *)sqlite3_column_text(s, 2),
                diag);
    if (!rc && step != SQLITE_DONE)
        rc = iof_diag_set(diag, -EINVAL, "the body is not a JSON object: %s", sqlite3_errmsg(db));
    sqlite3_finalize(s);
    sqlite3_close(db);
    return rc;
}
