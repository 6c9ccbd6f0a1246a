/* SPDX-License-Identifier: Apache-2.0 */
/* common/text.h - the one policy for text a person gives iofleet (plan,
 * spec, group and run names, tags, names and paths read by the importers),
 * and the escapers for text iofleet prints to a terminal or into Markdown.
 *
 * Refused (iof_text_check()), and escaped on output (iof_text_escape()):
 *   - C0 controls 0x00-0x1f (ESC, BEL, newline, tab...) and DEL 0x7f;
 *   - C1 controls U+0080-U+009F written as UTF-8 (a terminal may take
 *     U+009B as CSI, so they drive it like ESC [);
 *   - bytes that are not UTF-8 (a lone 0x9b is CSI to a terminal in an
 *     8-bit locale; JSON output cannot carry them);
 *   - the bidirectional overrides and isolates U+202A-U+202E and
 *     U+2066-U+2069, which make a terminal or a page show text in another
 *     order than it is ("Trojan Source").
 * Any other UTF-8 character is allowed. docs/security.md, "Text". */
#ifndef IOF_COMMON_TEXT_H
#define IOF_COMMON_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"

/* Where a string breaks the policy: its byte offset and the offending
 * character as it is shown in messages ("\x1b", "\u009b", "\u202e"; a byte
 * that is not UTF-8 as "\xff"). */
struct iof_text_fault {
    size_t offset;
    char shown[8];
};

/* 0 when s (NUL-terminated) holds no character the policy refuses; else
 * -EINVAL with the first offending character in *fault (may be NULL). */
int iof_text_check(const char *s, struct iof_text_fault *fault);

/* The fault for a message, "\x1b (a control character) at byte 3", in buf
 * (cap bytes, always terminated); the callers say what held it. Returns buf.
 * Messages read "WHAT: must not contain control characters, got " this. */
char *iof_text_fault_str(char *buf, size_t cap, const struct iof_text_fault *fault);

/* Copies in to out (cap bytes, always NUL-terminated) with every character
 * the policy refuses written as its escape ("\x1b", "\u009b", "\u202e",
 * "\xff"), so the copy is safe to print on a terminal. Cut before an escape
 * or a UTF-8 character that would not fit. Returns the length written. */
size_t iof_text_escape(char *out, size_t cap, const char *in);

/* The length of s escaped in full by iof_text_escape(). */
size_t iof_text_escaped_len(const char *s);

/* Writes s to f escaped as iof_text_escape() does, whole; NULL as "-". */
void iof_text_fput(FILE *f, const char *s);

/* Writes s to f as Markdown inline text (a table cell or a heading): the
 * policy's characters escaped as above, and the characters Markdown gives a
 * meaning inside a line (\ ` * _ [ ] ( ) < > & ! ~ | #) behind a
 * backslash, so a name is shown as written and never becomes a link, an
 * image, HTML, emphasis or another table column. NULL writes nothing. */
void iof_text_fput_md(FILE *f, const char *s);

/* s as HTML text (an element's content or a quoted attribute): the policy's
 * characters escaped as above, then & < > " ' as entities, so a name from a
 * plan, an agent or an old run is shown as written and never becomes markup
 * or reorders the page's text. NULL writes nothing. The one HTML escaper of
 * the project (tests/integration/layering.sh). */
void iof_text_fput_html(FILE *f, const char *s);
void iof_text_add_html(struct iof_buf *b, const char *s);

/* Decodes the UTF-8 character at s (NUL-terminated): its length in *len
 * and the code point, or -1 (with *len 1) for a byte that does not start a
 * valid, shortest-form character. */
int32_t iof_text_utf8_next(const unsigned char *s, size_t *len);

/* True for a code point the policy refuses (-1, not UTF-8, included). JSON
 * strings escape these with common/jsonw.h's IOF_JSON_TEXT. */
bool iof_text_refused(int32_t cp);

#endif
