/* SPDX-License-Identifier: Apache-2.0 */
/* common/buf.c - the one growable byte buffer: doubling growth with every
 * size computation overflow-checked, a sticky first error, printf-append
 * without a size guess. */
#include "common/buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IOF_BUF_MIN 64

void iof_buf_init(struct iof_buf *b, size_t max)
{
    *b = (struct iof_buf){.max = max};
}

static int buf_fail(struct iof_buf *b, int err)
{
    if (!b->err)
        b->err = err;
    return b->err;
}

int iof_buf_reserve(struct iof_buf *b, size_t more)
{
    size_t limit = b->max ? b->max : SIZE_MAX - 1;
    size_t need, cap;
    char *n;

    if (b->err)
        return b->err;
    if (more > limit || b->len > limit - more)
        return buf_fail(b, -E2BIG);
    need = b->len + more + 1; /* cannot wrap: len + more <= SIZE_MAX - 1 */
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : IOF_BUF_MIN;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (b->max && cap > b->max + 1)
        cap = b->max + 1; /* never allocate past the limit */
    n = realloc(b->p, cap);
    if (!n)
        return buf_fail(b, -ENOMEM);
    if (!b->p)
        n[0] = '\0';
    b->p = n;
    b->cap = cap;
    return 0;
}

void iof_buf_commit(struct iof_buf *b, size_t n)
{
    if (b->err || !n)
        return;
    b->len += n;
    b->p[b->len] = '\0';
}

int iof_buf_add(struct iof_buf *b, const void *mem, size_t n)
{
    int rc = iof_buf_reserve(b, n);

    if (rc)
        return rc;
    if (n) {
        memcpy(b->p + b->len, mem, n);
        iof_buf_commit(b, n);
    }
    return 0;
}

int iof_buf_addstr(struct iof_buf *b, const char *s)
{
    return s ? iof_buf_add(b, s, strlen(s)) : b->err;
}

int iof_buf_addc(struct iof_buf *b, char c)
{
    return iof_buf_add(b, &c, 1);
}

int iof_buf_vprintf(struct iof_buf *b, const char *fmt, va_list ap)
{
    va_list again;
    int n;
    int rc;

    if (b->err)
        return b->err;
    /* First try in the room there is; a short output needs no second pass. */
    va_copy(again, ap);
    n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    if (n < 0) {
        va_end(again);
        if (b->p)
            b->p[b->len] = '\0';
        return buf_fail(b, -EINVAL);
    }
    if (b->p && (size_t)n < b->cap - b->len) {
        va_end(again);
        rc = iof_buf_reserve(b, (size_t)n); /* the limit still applies */
        if (rc) {
            b->p[b->len] = '\0';
            return rc;
        }
        iof_buf_commit(b, (size_t)n);
        return 0;
    }
    rc = iof_buf_reserve(b, (size_t)n);
    if (rc) {
        if (b->p)
            b->p[b->len] = '\0';
        va_end(again);
        return rc;
    }
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, again);
    va_end(again);
    iof_buf_commit(b, (size_t)n);
    return 0;
}

int iof_buf_printf(struct iof_buf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = iof_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void iof_buf_reset(struct iof_buf *b)
{
    b->len = 0;
    b->err = 0;
    if (b->p)
        b->p[0] = '\0';
}

char *iof_buf_take(struct iof_buf *b, size_t *len)
{
    char *p;

    if (len)
        *len = 0;
    if (b->err || iof_buf_reserve(b, 0)) { /* reserve(0): "" when empty */
        iof_buf_free(b);
        return NULL;
    }
    p = b->p;
    if (len)
        *len = b->len;
    iof_buf_init(b, b->max);
    return p;
}

void iof_buf_free(struct iof_buf *b)
{
    if (!b)
        return;
    free(b->p);
    iof_buf_init(b, b->max);
}

int iof_array_grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t n;
    void *q;

    if (need <= *cap)
        return 0;
    if (!size || need > SIZE_MAX / size)
        return -E2BIG;
    n = *cap ? *cap : 16;
    while (n < need)
        n = n > SIZE_MAX / 2 ? need : n * 2;
    if (n > SIZE_MAX / size)
        n = need;
    q = realloc(*p, n * size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

size_t iof_buf_read(const struct iof_buf *b, size_t *off, char *dst, size_t max)
{
    size_t n = *off < b->len ? b->len - *off : 0;

    if (n > max)
        n = max;
    if (n)
        memcpy(dst, b->p + *off, n);
    *off += n;
    return n;
}
