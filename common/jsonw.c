/* SPDX-License-Identifier: Apache-2.0 */
/* common/jsonw.c - the one JSON writer and string escaper (common/jsonw.h),
 * used by the result document, the live view, the run history and the HTML
 * report. */
#include "common/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"

void iof_json_escape(struct iof_buf *b, const char *str, unsigned flags)
{
    const unsigned char *s = (const unsigned char *)str;
    bool text = flags & IOF_JSON_TEXT, script = flags & IOF_JSON_SCRIPT;
    size_t run = 0, len;

    if (!str) {
        iof_buf_addstr(b, "null");
        return;
    }
    iof_buf_add(b, "\"", 1);
    while (s[run]) {
        const unsigned char *u = s + run;
        int32_t cp = iof_text_utf8_next(u, &len);
        const char *esc = NULL;
        char tmp[12];

        if (cp < 0) {
            esc = "\\ufffd"; /* not UTF-8: the replacement character */
        } else if (*u == '"') {
            esc = "\\\"";
        } else if (*u == '\\') {
            esc = "\\\\";
        } else if ((text && iof_text_refused(cp)) ||
                   (script && (*u == '<' || *u == '>' || *u == '&'))) {
            snprintf(tmp, sizeof(tmp), "\\u%04x", (unsigned)cp);
            esc = tmp;
        } else if (cp < 0x20) {
            switch (cp) {
            case '\b':
                esc = "\\b";
                break;
            case '\f':
                esc = "\\f";
                break;
            case '\n':
                esc = "\\n";
                break;
            case '\r':
                esc = "\\r";
                break;
            case '\t':
                esc = "\\t";
                break;
            default:
                snprintf(tmp, sizeof(tmp), "\\u%04x", (unsigned)cp);
                esc = tmp;
            }
        }
        if (!esc) {
            run += len;
            continue;
        }
        iof_buf_add(b, (const char *)s, run);
        iof_buf_addstr(b, esc);
        s += run + len;
        run = 0;
    }
    iof_buf_add(b, (const char *)s, run);
    iof_buf_add(b, "\"", 1);
}

void iof_json_fput(FILE *f, const char *s, unsigned flags)
{
    struct iof_buf b = IOF_BUF_INIT;

    iof_json_escape(&b, s, flags);
    fwrite(iof_buf_str(&b), 1, b.len, f);
    iof_buf_free(&b);
}

void iof_json_sep(struct iof_buf *b)
{
    char last;
    if (!b->len)
        return;
    last = b->p[b->len - 1];
    if (last != '{' && last != '[' && last != ':')
        iof_buf_add(b, ",", 1);
}

void iof_json_open(struct iof_buf *b, char c)
{
    iof_json_sep(b);
    iof_buf_add(b, &c, 1);
}

void iof_json_close(struct iof_buf *b, char c)
{
    iof_buf_add(b, &c, 1);
}

void iof_json_str(struct iof_buf *b, const char *s)
{
    iof_json_sep(b);
    iof_json_escape(b, s, 0);
}

void iof_json_key(struct iof_buf *b, const char *key)
{
    iof_json_str(b, key);
    iof_buf_add(b, ":", 1);
}

void iof_json_u64(struct iof_buf *b, uint64_t v)
{
    iof_json_sep(b);
    iof_buf_printf(b, "%" PRIu64, v);
}

void iof_json_int(struct iof_buf *b, int v)
{
    iof_json_sep(b);
    iof_buf_printf(b, "%d", v);
}

void iof_json_null(struct iof_buf *b)
{
    iof_json_sep(b);
    iof_buf_addstr(b, "null");
}

void iof_json_bool(struct iof_buf *b, bool v)
{
    iof_json_sep(b);
    iof_buf_addstr(b, v ? "true" : "false");
}

void iof_json_dbl(struct iof_buf *b, double v)
{
    char tmp[40];

    iof_json_sep(b);
    if (!isfinite(v)) {
        iof_buf_addstr(b, "null");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    for (char *p = tmp; *p; p++)
        if (*p == ',') /* a decimal comma from an LC_NUMERIC locale */
            *p = '.';
    iof_buf_addstr(b, tmp);
}

void iof_json_raw(struct iof_buf *b, const char *text, size_t len)
{
    iof_json_sep(b);
    iof_buf_add(b, text, len);
}

void iof_json_script_safe(struct iof_buf *b, const char *json, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (json[i] == '<' || json[i] == '>' || json[i] == '&')
            iof_buf_printf(b, "\\u%04x", (unsigned)(unsigned char)json[i]);
        else
            iof_buf_addc(b, json[i]);
    }
}
