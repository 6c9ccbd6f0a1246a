/* SPDX-License-Identifier: Apache-2.0 */
/* common/jsonw.h - the one JSON writer and string escaper of the project:
 * values appended to a common/buf.h buffer with their commas placed from
 * the previous byte (no element ever gets a stray one), numbers finite
 * (null otherwise) in their shortest round-trip form, and strings escaped
 * under one of two policies (below). cJSON stays for reading.
 */
#ifndef IOF_COMMON_JSONW_H
#define IOF_COMMON_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"

/* String policies. 0: RFC 8259 section 7 as written for a result document:
 * '"' and '\\' escaped, \b \f \n \r \t short, the other C0 bytes as \u00XX,
 * well-formed UTF-8 as it is, a byte that is not UTF-8 as \ufffd. */
enum {
    /* common/text.h's policy: every character it refuses (C0, DEL, C1,
     * bidirectional overrides; a byte that is not UTF-8 as \ufffd) as
     * \uXXXX, none short. */
    IOF_JSON_TEXT = 1u << 0,
    /* Also '<', '>' and '&' as \u escapes: safe inside an HTML <script>. */
    IOF_JSON_SCRIPT = 1u << 1,
};

/* s as a JSON string, quotes included, under policy flags; NULL as null. */
void iof_json_escape(struct iof_buf *b, const char *s, unsigned flags);
/* The same, written to f. */
void iof_json_fput(FILE *f, const char *s, unsigned flags);

/* The writer: each value call places its comma first (none after '{', '['
 * or ':'). */
void iof_json_sep(struct iof_buf *b);
void iof_json_open(struct iof_buf *b, char c); /* '{' or '[' */
void iof_json_close(struct iof_buf *b, char c);
/* A string (policy 0), or null for NULL. */
void iof_json_str(struct iof_buf *b, const char *s);
/* "key": */
void iof_json_key(struct iof_buf *b, const char *key);
void iof_json_u64(struct iof_buf *b, uint64_t v);
void iof_json_int(struct iof_buf *b, int v);
void iof_json_null(struct iof_buf *b);
void iof_json_bool(struct iof_buf *b, bool v);
/* The shortest decimal that reads back as v (a '.' whatever the locale);
 * null when v is not finite. */
void iof_json_dbl(struct iof_buf *b, double v);
/* Already-valid JSON text as one value. */
void iof_json_raw(struct iof_buf *b, const char *text, size_t len);
/* A JSON text made safe inside an HTML <script> element: its '<', '>' and
 * '&' (which a JSON text holds only in strings, where \u escapes mean the
 * same) as \u escapes, as IOF_JSON_SCRIPT writes them. */
void iof_json_script_safe(struct iof_buf *b, const char *json, size_t len);

#endif
