/* common/log.c - leveled logging to stderr: one write(2) per line, with every
 * control byte of the message escaped, so a quoted name or path can neither
 * forge a log line nor move the terminal's cursor. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
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
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    if (!cap)
        return 0;
    for (; *in; in++) {
        unsigned char ch = (unsigned char)*in;
        if (ch >= 0x20 && ch != 0x7f) {
            if (o + 1 >= cap)
                break;
            out[o++] = (char)ch;
            continue;
        }
        if (o + 4 >= cap) /* an escape is never cut in half */
            break;
        out[o++] = '\\';
        out[o++] = 'x';
        out[o++] = hex[ch >> 4];
        out[o++] = hex[ch & 15];
    }
    out[o] = '\0';
    return o;
}

void iof_log(enum iof_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char msg[1024], line[1024];
    int n;
    va_list ap;

    if (level > log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    n = snprintf(line, sizeof(line), "%s: %s: ", log_prog, names[level]);
    if (n < 0 || n >= (int)sizeof(line) - 2)
        n = 0;
    n += (int)iof_log_escape(line + n, sizeof(line) - 1 - (size_t)n, msg);
    line[n++] = '\n';
    /* One write(2) per line keeps lines from different threads whole. */
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}
