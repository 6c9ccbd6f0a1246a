/* SPDX-License-Identifier: Apache-2.0 */
/* common/log.h - the one logging channel: leveled logging to stderr and
 * user-facing error lines, thread-safe (one write per line).
 * A message never spans lines: control bytes in it (a newline in a quoted
 * path, an escape sequence) are written as \xNN. */
#ifndef IOF_COMMON_LOG_H
#define IOF_COMMON_LOG_H

#include <stddef.h>

enum iof_log_level { IOF_LOG_ERROR, IOF_LOG_WARN, IOF_LOG_INFO, IOF_LOG_DEBUG };

/* Sets the threshold (default INFO) and the program name printed as prefix. */
void iof_log_init(const char *prog, enum iof_log_level level);
/* Copies `in` to `out` (cap bytes, always NUL-terminated) with what
 * common/text.h escapes for a terminal (control bytes as \xNN, C1 and
 * bidirectional controls as \uNNNN, bytes that are not UTF-8 as \xNN), cut
 * before an escape that would not fit. Returns the length written. */
size_t iof_log_escape(char *out, size_t cap, const char *in);

void iof_log(enum iof_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line for the person at the command line (a usage or configuration
 * error, a plan diagnostic), written as given: no program name or level word
 * is added (the text carries its own, e.g. "iofleet pki: ..."), and it is
 * printed whatever the level. Same single write and escaping as iof_log. */
void iof_log_user(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define IOF_ERROR(...) iof_log(IOF_LOG_ERROR, __VA_ARGS__)
#define IOF_WARN(...) iof_log(IOF_LOG_WARN, __VA_ARGS__)
#define IOF_INFO(...) iof_log(IOF_LOG_INFO, __VA_ARGS__)
#define IOF_DEBUG(...) iof_log(IOF_LOG_DEBUG, __VA_ARGS__)
#define IOF_USER(...) iof_log_user(__VA_ARGS__)

#endif
