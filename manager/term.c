/* SPDX-License-Identifier: Apache-2.0 */
/* manager/term.c - terminal width and charset, latencies in auto-scaled
 * units, prose wrapped to a width: the pieces the final table and the live
 * line use to fit what a person sees (docs/results.md, "The terminal"). */
#include "manager/term.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TERM_DEFAULT_WIDTH 80
#define TERM_MAX_WIDTH 10000

unsigned mgr_term_width(int fd)
{
    struct winsize ws;
    const char *env;
    char *end;
    unsigned long v;

    if (!isatty(fd))
        return 0;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    env = getenv("COLUMNS");
    if (env && *env) {
        v = strtoul(env, &end, 10);
        if (!*end && v > 0 && v <= TERM_MAX_WIDTH)
            return (unsigned)v;
    }
    return TERM_DEFAULT_WIDTH;
}

bool mgr_term_utf8(void)
{
    static const char *const vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v)
            continue;
        for (const char *p = v; *p; p++)
            if (!strncasecmp(p, "utf-8", 5) || !strncasecmp(p, "utf8", 4))
                return true;
        return false;
    }
    return false;
}

size_t mgr_term_cols(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80; /* not a continuation byte */
    return n;
}

char *mgr_term_lat(char *buf, size_t cap, double ns, bool utf8)
{
    static const struct {
        double div;
        const char *unit, *ascii;
    } units[] = {{1, "ns", "ns"}, {1e3, "µs", "us"}, {1e6, "ms", "ms"}, {1e9, "s", "s"}};
    enum { NUNITS = sizeof(units) / sizeof(units[0]) };
    double v = 0;
    int dec = 0;
    size_t i;

    if (!(ns >= 0)) {
        snprintf(buf, cap, "-");
        return buf;
    }
    /* The first unit whose figure, rounded to 3 digits, stays below 1000
     * (999.6 ns is "1.00µs", not "1000ns"). */
    for (i = 0; i < NUNITS; i++) {
        v = ns / units[i].div;
        dec = i == 0 ? 0 : v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
        if (i + 1 == NUNITS || v < 999.5)
            break;
    }
    snprintf(buf, cap, "%.*f%s", dec, v, utf8 ? units[i].unit : units[i].ascii);
    return buf;
}

char *mgr_term_lat_ms(char *buf, size_t cap, double ms, bool utf8)
{
    return mgr_term_lat(buf, cap, ms * 1e6, utf8);
}

void mgr_term_pad(FILE *f, const char *s, size_t cols, bool right)
{
    size_t n = mgr_term_cols(s);
    size_t pad = n < cols ? cols - n : 0;

    if (right)
        fprintf(f, "%*s%s", (int)pad, "", s);
    else
        fprintf(f, "%s%*s", s, (int)pad, "");
}

void mgr_term_wrap(FILE *f, unsigned width, unsigned indent, const char *text)
{
    const char *p = text;
    unsigned lead = 0; /* columns of this line's indent */

    if (!width || mgr_term_cols(text) <= width) {
        fprintf(f, "%s\n", text);
        return;
    }
    if (indent >= width / 2)
        indent = width / 2;
    while (*p) {
        size_t room = width - lead, cols = 0;
        const char *q = p, *brk = NULL;
        bool word = false; /* past the line's leading spaces */
        /* Longest run of words that fits in room columns. */
        for (; *q; q++) {
            if (((unsigned char)*q & 0xc0) != 0x80)
                cols++;
            if (*q != ' ')
                word = true;
            else if (word)
                brk = q; /* the line up to here fits, this space included or not */
            if (cols > room)
                break;
        }
        if (!*q) {
            fprintf(f, "%*s%s\n", (int)lead, "", p);
            return;
        }
        if (!brk) /* a word longer than the line: whole, up to its end */
            brk = strchr(q, ' ');
        if (!brk) {
            fprintf(f, "%*s%s\n", (int)lead, "", p);
            return;
        }
        fprintf(f, "%*s%.*s\n", (int)lead, "", (int)(brk - p), p);
        p = brk;
        while (*p == ' ')
            p++;
        lead = indent;
    }
}
