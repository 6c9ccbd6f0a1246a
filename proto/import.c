/* proto/import.c - what the importers share (proto/import.h): the one
 * message writer, so fio and Iometer messages look alike. */
#include "proto/import.h"

#include <string.h>

bool proto_import_vmsg(struct iof_buf *msgs, const char *name, size_t line, const char *fmt,
                       va_list ap)
{
    size_t start = msgs->len;

    iof_buf_printf(msgs, "%s:%zu: ", name, line);
    iof_buf_vprintf(msgs, fmt, ap);
    /* One printable line whatever the file held (names, paths, keys). */
    for (size_t i = start; !msgs->err && i < msgs->len; i++)
        if ((unsigned char)msgs->p[i] < 0x20 || msgs->p[i] == 0x7f)
            msgs->p[i] = '?';
    iof_buf_addc(msgs, '\n');
    return !strncmp(fmt, "error:", 6);
}
