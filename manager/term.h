/* SPDX-License-Identifier: Apache-2.0 */
/* manager/term.h - what a person's terminal can show: its width, whether it
 * takes UTF-8, latencies in auto-scaled units and prose wrapped to the width
 * (the final table and the live line of `iofleet run` fit with these). */
#ifndef IOF_MANAGER_TERM_H
#define IOF_MANAGER_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The width of the terminal on fd in columns: TIOCGWINSZ, else $COLUMNS,
 * else 80; 0 when fd is not a terminal (no limit: a file or a pipe). */
unsigned mgr_term_width(int fd);

/* True when the locale ($LC_ALL, else $LC_CTYPE, else $LANG) names UTF-8,
 * so "µs" can be printed; else the units are plain ASCII ("us"). */
bool mgr_term_utf8(void);

/* Columns that s takes on screen: its UTF-8 characters (all one column wide
 * in what iofleet prints). */
size_t mgr_term_cols(const char *s);

/* ns as 3 significant digits with a unit chosen so the figure is below
 * 1000 (fio's style): "812ns", "1.10µs", "12.3ms", "123ms", "1.23s"; "ns"
 * figures are whole, and seconds go on past 999 ("1234s"). "us" in place of
 * "µs" unless utf8. A negative or NaN ns writes "-". Returns buf. */
#define MGR_LAT_LEN 16 /* room for any figure */
char *mgr_term_lat(char *buf, size_t cap, double ns, bool utf8);
/* The same from milliseconds (struct mgr_metrics keeps ms). */
char *mgr_term_lat_ms(char *buf, size_t cap, double ms, bool utf8);

/* Writes s, then pads it with spaces to `cols` columns (left aligned) or
 * before it (right aligned); a longer s is written whole. */
void mgr_term_pad(FILE *f, const char *s, size_t cols, bool right);

/* Writes text and a newline; with width > 0 a line longer than width is
 * broken at spaces, continuation lines indented by `indent` spaces (a word
 * longer than the line stays whole). */
void mgr_term_wrap(FILE *f, unsigned width, unsigned indent, const char *text);

#endif
