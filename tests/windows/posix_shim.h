/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/posix_shim.h - the few POSIX calls the portable unit tests use
 * to capture output (open_memstream, fmemopen) or set the environment
 * (setenv, unsetenv), which Windows' C library lacks. Force-included into the
 * test programs of the Windows build only (cmake/windows.cmake), never into
 * iofleet's own code: a stream is a temporary file whose content is copied
 * out when the test closes it, which is all the tests need. */
#ifndef IOF_TESTS_WINDOWS_POSIX_SHIM_H
#define IOF_TESTS_WINDOWS_POSIX_SHIM_H
#ifdef _WIN32

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct shim_stream {
    FILE *f;
    char **dyn;     /* open_memstream: *dyn gets a malloc'd copy */
    size_t *dynlen; /* and its length */
    char *fixed;    /* fmemopen: the caller's buffer */
    size_t size;
};

static struct shim_stream shim_streams[16];

static inline FILE *shim_register(FILE *f, char **dyn, size_t *dynlen, char *fixed, size_t size)
{
    if (!f)
        return NULL;
    for (size_t i = 0; i < sizeof(shim_streams) / sizeof(shim_streams[0]); i++)
        if (!shim_streams[i].f) {
            shim_streams[i] = (struct shim_stream){f, dyn, dynlen, fixed, size};
            return f;
        }
    fclose(f);
    return NULL;
}

static inline FILE *open_memstream(char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    return shim_register(tmpfile(), buf, len, NULL, 0);
}

/* Write modes only, the way the tests use it. */
static inline FILE *fmemopen(void *buf, size_t size, const char *mode)
{
    if (!mode || mode[0] != 'w' || !size)
        return NULL;
    memset(buf, 0, size);
    return shim_register(tmpfile(), NULL, NULL, buf, size);
}

static inline int shim_fclose(FILE *f)
{
    for (size_t i = 0; i < sizeof(shim_streams) / sizeof(shim_streams[0]); i++) {
        struct shim_stream *s = &shim_streams[i];
        long n;

        if (!f || s->f != f)
            continue;
        fflush(f);
        n = ftell(f);
        rewind(f);
        if (s->dyn) {
            *s->dyn = calloc(1, n > 0 ? (size_t)n + 1 : 1);
            if (*s->dyn && n > 0)
                *s->dynlen = fread(*s->dyn, 1, (size_t)n, f);
        } else if (n > 0) {
            size_t keep = (size_t)n < s->size ? (size_t)n : s->size - 1;
            keep = fread(s->fixed, 1, keep, f);
            s->fixed[keep] = '\0';
        }
        s->f = NULL;
        break;
    }
    return fclose(f);
}
#define fclose(f) shim_fclose(f)

static inline int setenv(const char *name, const char *value, int overwrite)
{
    if (!overwrite && getenv(name))
        return 0;
    return _putenv_s(name, value) ? -1 : 0;
}

static inline int unsetenv(const char *name)
{
    return _putenv_s(name, "") ? -1 : 0;
}

#endif
#endif
