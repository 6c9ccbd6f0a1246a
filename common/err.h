/* SPDX-License-Identifier: Apache-2.0 */
/* common/err.h - the one error convention of iofleet.
 *
 * Functions return 0 on success or a negative code: either -errno or one of the
 * project codes below (all below -4000, so they never collide with errno).
 * iof_strerror() turns any of them into a short message. Human detail (a JSON
 * path, a peer name, a device) travels separately in a struct iof_diag.
 */
#ifndef IOF_COMMON_ERR_H
#define IOF_COMMON_ERR_H

#include <stddef.h>

/* X(name, value, message) */
#define IOF_ERR_TABLE(X)                                                                           \
    X(IOF_EPLAN, -4001, "invalid plan")                                                            \
    X(IOF_EPROTO, -4002, "protocol error")                                                         \
    X(IOF_EVERSION, -4003, "incompatible protocol version")                                        \
    X(IOF_ETOOBIG, -4004, "message too large")                                                     \
    X(IOF_EALIGN, -4005, "misaligned I/O for the target")                                          \
    X(IOF_ETARGET, -4006, "target not usable")                                                     \
    X(IOF_EENGINE, -4007, "unknown or unavailable I/O engine")                                     \
    X(IOF_EUSAGE, -4008, "usage error")                                                            \
    X(IOF_EDENIED, -4009, "refused by agent policy")                                               \
    X(IOF_EBUSY, -4010, "agent busy with another manager")                                         \
    X(IOF_ELOST, -4011, "peer lost")                                                               \
    X(IOF_ETIMEOUT, -4012, "timed out")                                                            \
    X(IOF_EINTERNAL, -4013, "internal error")

enum iof_err {
#define IOF_ERR_ENUM(name, value, msg) name = (value),
    IOF_ERR_TABLE(IOF_ERR_ENUM)
#undef IOF_ERR_ENUM
};

/* Message for 0, -errno or an IOF_E* code. Never NULL; static storage. */
const char *iof_strerror(int err);

/* Symbolic name ("IOF_EPLAN", "ENOENT") for logs and JSON; static storage. */
const char *iof_errname(int err);

/* Optional human detail for an error, filled by the function that detects it.
 * Callers may pass NULL when they do not need it. */
struct iof_diag {
    char msg[512];
};

/* printf-style: replaces diag->msg. No-op when diag is NULL. Returns err, so
 * callers can write `return iof_diag_set(d, -EINVAL, "...")`. */
int iof_diag_set(struct iof_diag *diag, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
