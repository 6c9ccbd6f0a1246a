/* SPDX-License-Identifier: Apache-2.0 */
/* proto/import_lines.h - the importers' one line reader: the text split
 * into numbered lines, each bounded (IOF_IMPORT_MAX_LINE bytes,
 * IOF_IMPORT_MAX_LINES lines), a Windows line end dropped, comments cut and
 * blanks trimmed, blank and comment lines skipped; what is refused is one
 * "NAME:LINE: error: ..." message. For the fio and vdbench readers
 * (proto/import_fio_parse.c, proto/import_vdbench_parse.c). */
#ifndef IOF_PROTO_IMPORT_LINES_H
#define IOF_PROTO_IMPORT_LINES_H

#include <stdbool.h>

#include "common/buf.h"

struct proto_import_lines {
    /* set by the caller: */
    const char *name;     /* the file, in messages (borrowed) */
    struct iof_buf *msgs; /* where refusals go (proto/import.h's messages) */
    const char *cut;      /* characters that end a line wherever they are (fio's ";#"), or NULL */
    const char *comment;  /* a line starting (after blanks) with one of these is a comment
                           * (vdbench's "*" "/" "#"), or NULL */
    bool check_text;      /* refuse a line with a control character (common/text.h's policy) */
    /* the reader's: */
    char *p;         /* the text not read yet (modified in place) */
    unsigned lineno; /* the number of the line last read, from 1 */
};

enum {
    PROTO_LINES_END = 0,   /* no more lines */
    PROTO_LINES_LINE = 1,  /* a line */
    PROTO_LINES_BAD = -1,  /* a line refused (message given): the import fails, reading goes on */
    PROTO_LINES_STOP = -2, /* more lines than an import reads (message given): stop */
};

/* Starts reading text (NUL-terminated, modified in place: each line is cut
 * out of it, so the lines stay valid as long as text does). */
void proto_import_lines_init(struct proto_import_lines *r, char *text);

/* The next line that is not blank or a comment, its comment cut and its
 * blanks trimmed, into *line; r->lineno is its number. */
int proto_import_lines_next(struct proto_import_lines *r, char **line);

/* Trims blanks (isspace) from both ends of s, in place; returns the start. */
char *proto_import_trim(char *s);

#endif
