/* SPDX-License-Identifier: Apache-2.0 */
/* common/log.c - leveled logging to stderr: one write(2) per line, with every
 * control byte of the message escaped, so a quoted name or path can neither
 * forge a log line nor move the terminal's cursor. */
#include "common/log.h"

#include "common/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *log_prog = "iofleet";
static enum iof_log_level log_level = IOF_LOG_INFO;

void iof_log_init(const char *prog, enum iof_log_level level)
{
    if (prog)
        log_prog = prog;
    log_level = level;
}

size_t iof_log_escape(char *out, size_t cap, const char *in)
{
    return iof_text_escape(out, cap, in);
}

/* Writes prefix and the escaped message as one line with one write(2), so
 * lines from different threads stay whole. Long enough for a message naming
 * a path of IOF_PATH_MAX bytes. */
static void log_line(const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void log_line(const char *prefix, const char *fmt, va_list ap)
{
    char msg[4352], line[4352];
    size_t n;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(prefix);
    if (n >= sizeof(line) - 2)
        n = 0;
    memcpy(line, prefix, n);
    n += iof_log_escape(line + n, sizeof(line) - 1 - n, msg);
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, n) < 0)
        return;
}

void iof_log(enum iof_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char prefix[128];
    va_list ap;

    if (level > log_level)
        return;
    snprintf(prefix, sizeof(prefix), "%s: %s: ", log_prog, names[level]);
    va_start(ap, fmt);
    log_line(prefix, fmt, ap);
    va_end(ap);
}

void iof_log_user(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}
