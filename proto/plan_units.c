/* SPDX-License-Identifier: Apache-2.0 */
/* proto/plan_units.c - the plan's units: sizes ("4k", "64MiB") and
 * durations ("500ms", "10s") parsed from plan strings and formatted for
 * `iofleet validate`. Powers of 1024; no fractions, no signs. */
#include "proto/plan_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void proto_plan_format_size(uint64_t bytes, char *buf, size_t cap)
{
    static const char units[] = "tgmk";

    if (!cap)
        return;
    for (int i = 0; i < 4; i++) {
        uint64_t u = 1ull << (10 * (4 - i));
        if (bytes && bytes % u == 0) {
            snprintf(buf, cap, "%" PRIu64 "%c", bytes / u, units[i]);
            return;
        }
    }
    snprintf(buf, cap, "%" PRIu64, bytes);
}

void proto_plan_format_duration(uint64_t ns, char *buf, size_t cap)
{
    if (!cap)
        return;
    if (ns == 0)
        snprintf(buf, cap, "0s");
    else if (ns % NS_PER_HOUR == 0)
        snprintf(buf, cap, "%" PRIu64 "h", ns / NS_PER_HOUR);
    else if (ns % NS_PER_MIN == 0)
        snprintf(buf, cap, "%" PRIu64 "m", ns / NS_PER_MIN);
    else if (ns % NS_PER_S == 0 && ns < NS_PER_MIN)
        snprintf(buf, cap, "%" PRIu64 "s", ns / NS_PER_S);
    else if (ns % NS_PER_S == 0) {
        uint64_t s = ns / NS_PER_S, h = s / 3600, m = s / 60 % 60;
        if (h)
            snprintf(buf, cap, "%" PRIu64 "h%" PRIu64 "m%" PRIu64 "s", h, m, s % 60);
        else
            snprintf(buf, cap, "%" PRIu64 "m%" PRIu64 "s", m, s % 60);
    } else if (ns % NS_PER_MS == 0)
        snprintf(buf, cap, "%" PRIu64 "ms", ns / NS_PER_MS);
    else
        snprintf(buf, cap, "%" PRIu64 "ns", ns);
}

/* ---- unit parsing ---- */

/* Leading decimal digits of s into *v; *end after them. -EINVAL with *why
 * for a missing number, -ERANGE when it does not fit 64 bits. */
int plan_parse_digits(const char *s, uint64_t *v, const char **end, const char **why)
{
    uint64_t x = 0;

    if (*s == '\0') {
        *why = "empty";
        return -EINVAL;
    }
    if (*s == '-') {
        *why = "must not be negative";
        return -EINVAL;
    }
    if (!is_digit(*s)) {
        *why = "must start with a digit";
        return -EINVAL;
    }
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10) {
            *why = "too large";
            return -ERANGE;
        }
        x = x * 10 + d;
    }
    if (*s == '.' || *s == ',') {
        *why = "fractions are not allowed; use a smaller unit";
        return -EINVAL;
    }
    *v = x;
    *end = s;
    return 0;
}

/* Sizes take fio's and Iometer's unit spellings, all powers of 1024 (iofleet
 * has no kb_base): k, kb, kib, in any case ("4k", "4K", "4kb", "4KiB"); the
 * same for m, g and t; b or nothing is bytes. */
int plan_parse_size(const char *s, uint64_t *out, const char **why)
{
    static const char units[] = "kmgt";
    const char *end, *u;
    uint64_t v, mult = 1;
    int rc = plan_parse_digits(s, &v, &end, why);

    if (rc)
        return rc;
    if (*end && (u = strchr(units, lower(*end))) != NULL) {
        const char *rest = end + 1;
        mult = 1ull << (10 * (u - units + 1));
        if (lower(*rest) == 'i')
            rest++;
        if (lower(*rest) == 'b')
            rest++;
        if (*rest)
            end = NULL;
    } else if (lower(*end) == 'b' && !end[1]) {
        mult = 1;
    } else if (*end) {
        end = NULL;
    }
    if (!end) {
        *why = "unknown unit (use k, m, g or t, also written kb or KiB: powers of 1024)";
        return -EINVAL;
    }
    if (v > UINT64_MAX / mult) {
        *why = "too large";
        return -ERANGE;
    }
    *out = v * mult;
    return 0;
}

int plan_parse_duration(const char *s, uint64_t *out, const char **why)
{
    const char *end;
    uint64_t v, mult;
    int rc = plan_parse_digits(s, &v, &end, why);

    if (rc)
        return rc;
    if (*end == '\0') {
        *why = "missing unit (ms, s, m or h)";
        return -EINVAL;
    }
    if (lower(end[0]) == 'm' && lower(end[1]) == 's' && !end[2])
        mult = IOF_NS_PER_MS;
    else if (lower(end[0]) == 's' && !end[1])
        mult = IOF_NS_PER_S;
    else if (lower(end[0]) == 'm' && !end[1])
        mult = NS_PER_MIN;
    else if (lower(end[0]) == 'h' && !end[1])
        mult = NS_PER_HOUR;
    else {
        *why = "unknown unit (use ms, s, m or h)";
        return -EINVAL;
    }
    if (v > UINT64_MAX / mult) {
        *why = "too large";
        return -ERANGE;
    }
    *out = v * mult;
    return 0;
}

int proto_plan_parse_size(const char *s, uint64_t *out)
{
    const char *why;

    return plan_parse_size(s, out, &why);
}

int proto_plan_parse_duration(const char *s, uint64_t *out_ns)
{
    const char *why;

    return plan_parse_duration(s, out_ns, &why);
}
