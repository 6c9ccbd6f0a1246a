/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/engines/windows.h - the Windows I/O engine (windows.c, built only for
 * Windows) and what a caller needs to feed it: how targets are opened, where
 * buffers come from, and the alignment rule it enforces before it submits.
 *
 * Targets are opened with CreateFileW(..., DYN_WIN_FILE_FLAGS, ...) and handed
 * to the engine as C runtime descriptors (_open_osfhandle), so struct dyn_io's
 * `fd` is the same field as on Linux; the engine takes the HANDLE back with
 * _get_osfhandle. A handle is bound to one worker's completion port, so every
 * worker opens its own handles, as every Linux worker opens its own fds.
 */
#ifndef IOF_DYNAMO_ENGINES_WINDOWS_H
#define IOF_DYNAMO_ENGINES_WINDOWS_H

#ifdef _WIN32
#include <stddef.h>
#include <stdint.h>
#include <windows.h>

#include "dynamo/engine.h"

/* What Iometer uses: no cache on the way (the I/O must be sector-aligned in
 * offset, length and buffer address) and writes acknowledged by the device. */
#define DYN_WIN_FILE_FLAGS (FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH)

extern const struct dyn_engine_ops dyn_engine_windows;

/* 0 when io may be submitted to a target of `sector`-byte sectors opened
 * with FILE_FLAG_NO_BUFFERING: offset, length and buffer address all
 * multiples of sector (a power of two), length not 0. Else IOF_EALIGN with
 * the offending value named in diag. Windows fails such an I/O with
 * ERROR_INVALID_PARAMETER; Wine performs it, so the engine checks first. */
int dyn_win_check_align(const struct dyn_io *io, uint32_t sector, struct iof_diag *diag);

/* The logical sector size of the file or device behind h (FileStorageInfo),
 * or 512 when the system cannot tell (Wine, old file systems). */
uint32_t dyn_win_sector_size(HANDLE h);

/* len bytes of zeroed, page-aligned (so sector-aligned) memory from
 * VirtualAlloc, or NULL; freed with dyn_win_free_buf. */
void *dyn_win_alloc_buf(size_t len);
void dyn_win_free_buf(void *p);

/* The reason the engine gave for the first I/O it refused (see
 * dyn_win_check_align), or NULL when it refused none. */
const char *dyn_win_refusal(const struct dyn_engine *e);
#endif

#endif
