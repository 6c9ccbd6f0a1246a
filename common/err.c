/* SPDX-License-Identifier: Apache-2.0 */
/* common/err.c - iof_strerror() over the one error table of err.h, and
 * filling a struct iof_diag with the human detail of an error. */
#include "common/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *iof_strerror(int err)
{
    if (err == 0)
        return "success";
    switch (err) {
#define IOF_ERR_CASE(name, value, msg)                                                             \
    case name:                                                                                     \
        return msg;
        IOF_ERR_TABLE(IOF_ERR_CASE)
#undef IOF_ERR_CASE
    default:
        break;
    }
    if (err < 0 && err > -4000)
        return strerror(-err);
    return "unknown error";
}

const char *iof_errname(int err)
{
    switch (err) {
    case 0:
        return "OK";
#define IOF_ERR_NAME(name, value, msg)                                                             \
    case name:                                                                                     \
        return #name;
        IOF_ERR_TABLE(IOF_ERR_NAME)
#undef IOF_ERR_NAME
    default:
        break;
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (err < 0 && err > -4000) {
        const char *n = strerrorname_np(-err);
        if (n)
            return n;
    }
#elif defined(_WIN32)
    if (err < 0 && err > -4000) {
        const char *n = iof_os_errname(-err); /* common/os/win.c */
        if (n)
            return n;
    }
#endif
    return "EUNKNOWN";
}

int iof_diag_set(struct iof_diag *diag, int err, const char *fmt, ...)
{
    if (diag) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
        va_end(ap);
    }
    return err;
}
