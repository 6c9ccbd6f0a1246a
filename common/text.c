/* SPDX-License-Identifier: Apache-2.0 */
/* common/text.c - the text policy (which characters a name may hold) and
 * the terminal and Markdown escapers built on the same classification, so
 * what is refused on input is exactly what is escaped on output. */
#include "common/text.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Decodes the UTF-8 character at s: its length in *len and the code point,
 * or -1 (with *len 1) for a byte that does not start a valid, shortest-form
 * character of at most U+10FFFF outside the surrogates. */
static int32_t utf8_next(const unsigned char *s, size_t *len)
{
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;

    *len = 1;
    if (c < 0x80)
        return c;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return -1;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return -1;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return -1;
    *len = n;
    return (int32_t)cp;
}

/* True for a code point the policy refuses. */
static bool text_refused(int32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape of a refused character (cp -1: the byte b) into buf[8]. */
static size_t text_shown(char buf[8], int32_t cp, unsigned char b)
{
    static const char hex[] = "0123456789abcdef";

    if (cp < 0 || cp < 0x80) {
        unsigned v = cp < 0 ? b : (unsigned)cp;
        buf[0] = '\\', buf[1] = 'x', buf[2] = hex[v >> 4], buf[3] = hex[v & 15], buf[4] = '\0';
        return 4;
    }
    buf[0] = '\\', buf[1] = 'u';
    for (int i = 0; i < 4; i++)
        buf[2 + i] = hex[((uint32_t)cp >> (12 - 4 * i)) & 15];
    buf[6] = '\0';
    return 6;
}

int iof_text_check(const char *s, struct iof_text_fault *fault)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, len;

    while (u[i]) {
        int32_t cp = utf8_next(u + i, &len);
        if (text_refused(cp)) {
            if (fault) {
                fault->offset = i;
                text_shown(fault->shown, cp, u[i]);
            }
            return -EINVAL;
        }
        i += len;
    }
    return 0;
}

char *iof_text_fault_str(char *buf, size_t cap, const struct iof_text_fault *fault)
{
    const char *what = fault->shown[1] == 'u' && strcmp(fault->shown, "\\u00a0") < 0
                           ? "a C1 control character"
                       : fault->shown[1] == 'u'             ? "a bidirectional control character"
                       : strcmp(fault->shown, "\\x80") >= 0 ? "a byte that is not UTF-8"
                                                            : "a control character";

    snprintf(buf, cap, "%s (%s) at byte %zu", fault->shown, what, fault->offset);
    return buf;
}

size_t iof_text_escape(char *out, size_t cap, const char *in)
{
    const unsigned char *u = (const unsigned char *)in;
    size_t o = 0, len;

    if (!cap)
        return 0;
    while (*u) {
        int32_t cp = utf8_next(u, &len);
        if (text_refused(cp)) {
            char e[8];
            size_t n = text_shown(e, cp, *u);
            if (o + n >= cap) /* an escape is never cut in half */
                break;
            memcpy(out + o, e, n);
            o += n;
        } else {
            if (o + len >= cap) /* nor a character */
                break;
            memcpy(out + o, u, len);
            o += len;
        }
        u += len;
    }
    out[o] = '\0';
    return o;
}

size_t iof_text_escaped_len(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = 0, len;

    while (*u) {
        char e[8];
        int32_t cp = utf8_next(u, &len);
        n += text_refused(cp) ? text_shown(e, cp, *u) : len;
        u += len;
    }
    return n;
}

/* Writes s to f with each refused character escaped; a character in punct
 * (ASCII, or NULL for none) is preceded by a backslash. */
static void text_fput_escaped(FILE *f, const char *s, const char *punct)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len;

    while (*u) {
        int32_t cp = utf8_next(u, &len);
        if (text_refused(cp)) {
            char e[8];
            text_shown(e, cp, *u);
            fputs(e, f);
        } else {
            if (punct && len == 1 && strchr(punct, *u))
                fputc('\\', f);
            fwrite(u, 1, len, f);
        }
        u += len;
    }
}

void iof_text_fput(FILE *f, const char *s)
{
    if (!s) {
        fputc('-', f);
        return;
    }
    text_fput_escaped(f, s, NULL);
}

void iof_text_fput_md(FILE *f, const char *s)
{
    if (s)
        text_fput_escaped(f, s, "\\`*_[]()<>&!~|#");
}

/* HTML's entity for c, or NULL when c stands for itself. */
static const char *html_entity(unsigned char c)
{
    switch (c) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return "&quot;";
    case '\'':
        return "&#39;";
    default:
        return NULL;
    }
}

/* Hands s as HTML text to put(ctx, bytes, n), piece by piece. */
static void text_html(const char *s, void (*put)(void *, const char *, size_t), void *ctx)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len;

    while (u && *u) {
        int32_t cp = utf8_next(u, &len);
        const char *ent = len == 1 ? html_entity(*u) : NULL;
        if (text_refused(cp)) {
            char e[8];
            text_shown(e, cp, *u);
            put(ctx, e, strlen(e));
        } else if (ent) {
            put(ctx, ent, strlen(ent));
        } else {
            put(ctx, (const char *)u, len);
        }
        u += len;
    }
}

static void html_to_file(void *ctx, const char *p, size_t n)
{
    fwrite(p, 1, n, (FILE *)ctx);
}

static void html_to_buf(void *ctx, const char *p, size_t n)
{
    iof_buf_add((struct iof_buf *)ctx, p, n);
}

void iof_text_fput_html(FILE *f, const char *s)
{
    text_html(s, html_to_file, f);
}

void iof_text_add_html(struct iof_buf *b, const char *s)
{
    text_html(s, html_to_buf, b);
}

int32_t iof_text_utf8_next(const unsigned char *s, size_t *len)
{
    return utf8_next(s, len);
}

bool iof_text_refused(int32_t cp)
{
    return text_refused(cp);
}
