/* SPDX-License-Identifier: Apache-2.0 */
/* <sys/uio.h> for the agent's Windows build: struct iovec, with which a
 * worker hands its engine its buffers (dynamo/engine.h). */
#ifndef IOF_DYNAMO_WIN_SYS_UIO_H
#define IOF_DYNAMO_WIN_SYS_UIO_H

#include <stddef.h>

struct iovec {
    void *iov_base;
    size_t iov_len;
};

#endif
