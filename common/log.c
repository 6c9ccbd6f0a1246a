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

void iof_log(enum iof_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char line[1024];
    int n;
    va_list ap;

    if (level > log_level)
        return;
    n = snprintf(line, sizeof(line), "%s: %s: ", log_prog, names[level]);
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof(line) - 1)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    /* One write(2) per line keeps lines from different threads whole. */
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}
