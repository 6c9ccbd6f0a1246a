/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_lines.c - the importers' one line reader (proto/import_lines.h):
 * numbered, bounded lines with comments cut and blanks trimmed, so the fio and
 * vdbench readers read a file alike and refuse an oversized one alike. */
#include "proto/import_lines.h"

#include <ctype.h>
#include <string.h>

#include "proto/import.h"

void proto_import_lines_init(struct proto_import_lines *r, char *text)
{
    r->p = text;
    r->lineno = 0;
}

char *proto_import_trim(char *s)
{
    size_t n;

    while (isspace((unsigned char)*s))
        s++;
    n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

int proto_import_lines_next(struct proto_import_lines *r, char **line)
{
    while (*r->p) {
        char *nl = strchr(r->p, '\n'), *l = r->p, *e;
        size_t n;

        if (nl)
            *nl = 0;
        r->p = nl ? nl + 1 : r->p + strlen(r->p);
        if (++r->lineno > IOF_IMPORT_MAX_LINES) {
            proto_import_msg(r->msgs, r->name, r->lineno, "error: more than %u lines",
                             IOF_IMPORT_MAX_LINES);
            r->p += strlen(r->p); /* nothing more is read */
            return PROTO_LINES_STOP;
        }
        n = strlen(l);
        if (n > IOF_IMPORT_MAX_LINE) {
            proto_import_msg(r->msgs, r->name, r->lineno, "error: line longer than %u bytes",
                             IOF_IMPORT_MAX_LINE);
            return PROTO_LINES_BAD;
        }
        if (n && l[n - 1] == '\r') /* a Windows line end */
            l[n - 1] = 0;
        if (r->check_text && proto_import_text_bad(r->msgs, r->name, r->lineno, "line", l))
            return PROTO_LINES_BAD;
        /* fio ends a line at its first ';' or '#', wherever they are
         * (strip_blank_end() in fio's parse.c): "bs=4k ; note" is bs=4k. */
        if (r->cut && (e = strpbrk(l, r->cut)))
            *e = 0;
        l = proto_import_trim(l);
        if (!*l || (r->comment && strchr(r->comment, *l)))
            continue;
        *line = l;
        return PROTO_LINES_LINE;
    }
    return PROTO_LINES_END;
}
