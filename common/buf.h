/* SPDX-License-Identifier: Apache-2.0 */
/* common/buf.h - the one growable byte buffer (in the manner of curl's
 * dynbuf): append bytes, strings and printf output, reserve, reset, take.
 *
 * The first failure (out of memory, a size that would overflow or pass the
 * buffer's limit) is kept in `err` and makes every later append a no-op that
 * returns it again, so a writer may append a whole record and check once;
 * what is in the buffer is then incomplete and must not be used as a record.
 * Once anything was appended, p is NUL-terminated (the NUL not counted in
 * len), so the text can be used as a C string. */
#ifndef IOF_COMMON_BUF_H
#define IOF_COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct iof_buf {
    char *p;    /* owned; NULL until the first growth */
    size_t len; /* bytes held, the terminating NUL not counted */
    size_t cap; /* bytes allocated */
    size_t max; /* the most len may reach; 0: no limit but memory */
    int err;    /* 0 or the first failure (-ENOMEM, -E2BIG); sticky until reset */
};

#define IOF_BUF_INIT                                                                               \
    {                                                                                              \
        0                                                                                          \
    }

/* An empty buffer holding at most max bytes (0: no limit). */
void iof_buf_init(struct iof_buf *b, size_t max);
/* Makes room for `more` bytes (and the NUL) after len. 0 or b->err. */
int iof_buf_reserve(struct iof_buf *b, size_t more);
/* Appends n bytes of mem (borrowed). 0 or b->err. */
int iof_buf_add(struct iof_buf *b, const void *mem, size_t n);
/* Appends the C string s (NULL appends nothing). 0 or b->err. */
int iof_buf_addstr(struct iof_buf *b, const char *s);
/* Appends one byte. 0 or b->err. */
int iof_buf_addc(struct iof_buf *b, char c);
/* Appends printf output. 0 or b->err (-EINVAL for an encoding error). */
int iof_buf_printf(struct iof_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int iof_buf_vprintf(struct iof_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Declares n bytes written by the caller into the room iof_buf_reserve made
 * (at p + len) as appended. n must not exceed that room. */
void iof_buf_commit(struct iof_buf *b, size_t n);
/* Empties the buffer and clears err; keeps the memory for reuse. */
void iof_buf_reset(struct iof_buf *b);
/* Hands the text over: returns it (new, NUL-terminated, "" when empty; free()
 * it) with its length in *len when len is non-NULL, and leaves the buffer
 * empty. NULL when err was set or memory ran out (the buffer is then reset
 * and its memory freed). */
char *iof_buf_take(struct iof_buf *b, size_t *len);
/* Frees the memory; the buffer is empty and usable again. Accepts NULL. */
void iof_buf_free(struct iof_buf *b);
/* Copies up to max bytes of b's text from *off into dst and moves *off on;
 * returns how many (0 when *off is at its end): a stream read in pieces. */
size_t iof_buf_read(const struct iof_buf *b, size_t *off, char *dst, size_t max);

/* The text as a C string ("" when nothing was appended). Borrowed from b. */
static inline const char *iof_buf_str(const struct iof_buf *b)
{
    return b->p ? b->p : "";
}

/* Grows the array *p (*cap elements of `size` bytes) to hold at least `need`
 * elements, doubling; the element count and byte size are overflow-checked.
 * On failure *p and *cap are unchanged. 0, -ENOMEM or -E2BIG. */
int iof_array_grow(void **p, size_t *cap, size_t need, size_t size);

#endif
