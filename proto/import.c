/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import.c - what the importers share (proto/import.h): the one
 * message writer, so fio and Iometer messages look alike, and the one check
 * of the names and paths they read (common/text.h's policy). */
#include "proto/import.h"

#include <stdio.h>
#include <string.h>

#include "common/text.h"

bool proto_import_vmsg(struct iof_buf *msgs, const char *name, size_t line, const char *fmt,
                       va_list ap)
{
    struct iof_buf raw = IOF_BUF_INIT;
    size_t n;

    iof_buf_printf(&raw, "%s:%zu: ", name, line);
    iof_buf_vprintf(&raw, fmt, ap);
    /* One printable line whatever the file held (names, paths, keys). */
    n = iof_text_escaped_len(iof_buf_str(&raw));
    if (raw.err && !msgs->err)
        msgs->err = raw.err;
    else if (!raw.err && !iof_buf_reserve(msgs, n))
        iof_buf_commit(msgs, iof_text_escape(msgs->p + msgs->len, n + 1, iof_buf_str(&raw)));
    iof_buf_free(&raw);
    iof_buf_addc(msgs, '\n');
    return !strncmp(fmt, "error:", 6);
}

bool proto_import_text_bad(struct iof_buf *msgs, const char *name, size_t line, const char *what,
                           const char *value)
{
    struct iof_text_fault tf;
    char why[64];

    if (!iof_text_check(value, &tf))
        return false;
    proto_import_msg(msgs, name, line,
                     "error: %s '%s': must not contain control characters, got %s", what, value,
                     iof_text_fault_str(why, sizeof(why), &tf));
    return true;
}

bool proto_import_msg(struct iof_buf *msgs, const char *name, size_t line, const char *fmt, ...)
{
    va_list ap;
    bool r;

    va_start(ap, fmt);
    r = proto_import_vmsg(msgs, name, line, fmt, ap);
    va_end(ap);
    return r;
}
