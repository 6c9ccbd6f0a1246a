/* SPDX-License-Identifier: Apache-2.0 */
/* windows engine: overlapped ReadFile/WriteFile on targets opened with
 * FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH,
 * one I/O completion port per instance (so per worker), completions reaped in
 * batches with GetQueuedCompletionStatusEx. The slot model is libaio's: each
 * slot owns one OVERLAPPED (its priv), an I/O is in flight from submit until
 * its completion is reaped, so at most `depth` are outstanding.
 *
 * Every I/O goes through the port, also one that completes at once (no
 * FILE_SKIP_COMPLETION_PORT_ON_SUCCESS): one path for results. An I/O that
 * Windows refuses at the call (ReadFile/WriteFile false and not
 * ERROR_IO_PENDING) posts no completion; the engine posts one itself with
 * the result already set, so the caller still reaps it. Out-of-resource
 * refusals instead end the submit early (the caller reaps and retries).
 *
 * Before submitting, the engine checks the NO_BUFFERING rule itself (offset,
 * length and buffer multiples of the target's sector size): Windows would
 * fail such an I/O with ERROR_INVALID_PARAMETER, but Wine performs it, and a
 * test run under Wine must refuse what Windows would. A refused I/O completes
 * with IOF_EALIGN; the first reason is kept (dyn_win_refusal) and logged.
 *
 * Latency: the worker stamps submit_ns with iof_now_ns, which is
 * QueryPerformanceCounter on Windows (common/clock.h).
 */
#ifdef _WIN32
#include <errno.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/engine_facts.h"
#include "common/err.h"
#include "common/log.h"
#include "dynamo/engines/windows.h"

#define WIN_KEY_IO 1     /* a completion of ReadFile/WriteFile */
#define WIN_KEY_POSTED 2 /* posted by the engine, result already set */

struct win_slot {
    OVERLAPPED ov; /* first: the completion's lpOverlapped is the slot */
    struct dyn_io *io;
    HANDLE h;
    uint32_t sector;
};

struct dyn_engine {
    HANDLE port;
    unsigned depth;
    struct win_slot *slots;
    OVERLAPPED_ENTRY *entries; /* scratch for GetQueuedCompletionStatusEx */
    bool refused;
    struct iof_diag refusal;
};

int dyn_win_check_align(const struct dyn_io *io, uint32_t sector, struct iof_diag *diag)
{
    uint64_t mask = (uint64_t)sector - 1;

    if (sector == 0 || (sector & (sector - 1)))
        return iof_diag_set(diag, IOF_EALIGN,
                            "windows engine: sector size %u is not a power of two", sector);
    if (io->len == 0)
        return iof_diag_set(diag, IOF_EALIGN, "windows engine: %s of 0 bytes at offset %llu",
                            io->write ? "write" : "read", (unsigned long long)io->offset);
    if (io->offset & mask)
        return iof_diag_set(diag, IOF_EALIGN,
                            "windows engine: %s at offset %llu refused: not a multiple of the "
                            "target's %u-byte sector (FILE_FLAG_NO_BUFFERING)",
                            io->write ? "write" : "read", (unsigned long long)io->offset, sector);
    if (io->len & mask)
        return iof_diag_set(diag, IOF_EALIGN,
                            "windows engine: %s of %u bytes at offset %llu refused: length not a "
                            "multiple of the target's %u-byte sector (FILE_FLAG_NO_BUFFERING)",
                            io->write ? "write" : "read", io->len, (unsigned long long)io->offset,
                            sector);
    if ((uintptr_t)io->buf & mask)
        return iof_diag_set(diag, IOF_EALIGN,
                            "windows engine: %s at offset %llu refused: buffer %p not aligned to "
                            "the target's %u-byte sector (FILE_FLAG_NO_BUFFERING)",
                            io->write ? "write" : "read", (unsigned long long)io->offset, io->buf,
                            sector);
    return 0;
}

uint32_t dyn_win_sector_size(HANDLE h)
{
    FILE_STORAGE_INFO si;

    if (GetFileInformationByHandleEx(h, FileStorageInfo, &si, sizeof(si)) &&
        si.LogicalBytesPerSector >= 512 &&
        !(si.LogicalBytesPerSector & (si.LogicalBytesPerSector - 1)))
        return (uint32_t)si.LogicalBytesPerSector;
    return 512;
}

void *dyn_win_alloc_buf(size_t len)
{
    return len ? VirtualAlloc(NULL, len, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE) : NULL;
}

void dyn_win_free_buf(void *p)
{
    if (p)
        VirtualFree(p, 0, MEM_RELEASE);
}

const char *dyn_win_refusal(const struct dyn_engine *e)
{
    return e && e->refused ? e->refusal.msg : NULL;
}

/* A Win32 error as the -errno the run loop records. */
static int win_errno(DWORD err)
{
    switch (err) {
    case ERROR_INVALID_PARAMETER:
    case ERROR_INVALID_USER_BUFFER:
        return -EINVAL;
    case ERROR_ACCESS_DENIED:
        return -EACCES;
    case ERROR_WRITE_PROTECT:
        return -EROFS;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
        return -ENOSPC;
    case ERROR_OPERATION_ABORTED:
        return -ECANCELED;
    case ERROR_INVALID_HANDLE:
        return -EBADF;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
        return -ENOMEM;
    case ERROR_NOT_READY:
    case ERROR_DEVICE_NOT_CONNECTED:
        return -ENODEV;
    default:
        return -EIO;
    }
}

/* Refusals that mean "not now": the kernel is out of resources for more
 * outstanding I/O, as libaio's EAGAIN. */
static bool win_transient(DWORD err)
{
    return err == ERROR_NO_SYSTEM_RESOURCES || err == ERROR_NOT_ENOUGH_QUOTA ||
           err == ERROR_WORKING_SET_QUOTA || err == ERROR_NONPAGED_SYSTEM_RESOURCES ||
           err == ERROR_PAGED_SYSTEM_RESOURCES || err == ERROR_INVALID_USER_BUFFER;
}

static void win_close(struct dyn_engine *e)
{
    if (!e)
        return;
    if (e->port)
        CloseHandle(e->port);
    free(e->slots);
    free(e->entries);
    free(e);
}

static int win_open(struct dyn_engine **out, struct dyn_io *slots, unsigned depth,
                    const struct dyn_engine_opts *opts, struct iof_diag *diag)
{
    struct dyn_engine *e;
    (void)opts;

    if (depth == 0)
        return iof_diag_set(diag, -EINVAL, "windows engine: queue depth 0");
    e = calloc(1, sizeof(*e));
    if (!e)
        return iof_diag_set(diag, -ENOMEM, "windows engine: out of memory");
    e->depth = depth;
    e->slots = calloc(depth, sizeof(*e->slots));
    e->entries = calloc(depth, sizeof(*e->entries));
    if (!e->slots || !e->entries) {
        win_close(e);
        return iof_diag_set(diag, -ENOMEM, "windows engine: out of memory");
    }
    e->port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (!e->port) {
        DWORD err = GetLastError();
        e->port = NULL;
        win_close(e);
        return iof_diag_set(diag, win_errno(err),
                            "windows engine: CreateIoCompletionPort failed (error %lu)", err);
    }
    for (unsigned i = 0; i < depth; i++) {
        struct win_slot *s = &e->slots[i];
        HANDLE h = (HANDLE)_get_osfhandle(slots[i].fd);
        bool seen = false;

        if (h == INVALID_HANDLE_VALUE) {
            win_close(e);
            return iof_diag_set(diag, -EBADF,
                                "windows engine: slot %u: descriptor %d has no handle", i,
                                slots[i].fd);
        }
        s->io = &slots[i];
        s->h = h;
        slots[i].priv = s;
        for (unsigned j = 0; j < i && !seen; j++)
            if (e->slots[j].h == h) {
                seen = true;
                s->sector = e->slots[j].sector;
            }
        if (seen)
            continue;
        /* A handle belongs to one port for its whole life: a second worker
         * sharing it would fail here, hence one handle per worker. */
        if (CreateIoCompletionPort(h, e->port, WIN_KEY_IO, 0) != e->port) {
            DWORD err = GetLastError();
            win_close(e);
            return iof_diag_set(diag, win_errno(err),
                                "windows engine: target of descriptor %d cannot join the "
                                "worker's completion port (error %lu; opened without "
                                "FILE_FLAG_OVERLAPPED, or shared with another worker?)",
                                slots[i].fd, err);
        }
        s->sector = dyn_win_sector_size(h);
    }
    *out = e;
    return 0;
}

/* Completes slot s with result r through the port. */
static int win_post(struct dyn_engine *e, struct win_slot *s, int64_t r)
{
    s->io->result = r;
    if (!PostQueuedCompletionStatus(e->port, 0, WIN_KEY_POSTED, &s->ov))
        return win_errno(GetLastError());
    return 0;
}

static int win_submit(struct dyn_engine *e, struct dyn_io **ios, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct dyn_io *io = ios[i];
        struct win_slot *s = io->priv;
        struct iof_diag why;
        DWORD err;
        BOOL ok;
        int r;

        r = dyn_win_check_align(io, s->sector, &why);
        if (r < 0) {
            if (!e->refused) {
                e->refused = true;
                e->refusal = why;
                IOF_WARN("%s", why.msg);
            }
            r = win_post(e, s, r);
            if (r < 0)
                return i ? (int)i : r;
            continue;
        }
        memset(&s->ov, 0, sizeof(s->ov));
        s->ov.Offset = (DWORD)io->offset;
        s->ov.OffsetHigh = (DWORD)(io->offset >> 32);
        if (io->write)
            ok = WriteFile(s->h, io->buf, io->len, NULL, &s->ov);
        else
            ok = ReadFile(s->h, io->buf, io->len, NULL, &s->ov);
        if (ok)
            continue; /* done already; its completion is queued on the port */
        err = GetLastError();
        if (err == ERROR_IO_PENDING)
            continue;
        if (win_transient(err))
            return (int)i;
        /* End of file on a read transfers 0 bytes, as pread would. */
        r = win_post(e, s, err == ERROR_HANDLE_EOF ? 0 : win_errno(err));
        if (r < 0)
            return i ? (int)i : r;
    }
    return (int)n;
}

static int win_reap(struct dyn_engine *e, unsigned min, unsigned max, uint64_t timeout_ns,
                    struct dyn_io **done)
{
    ULONGLONG deadline = 0;
    DWORD wait_ms;
    unsigned got = 0;

    if (max > e->depth)
        max = e->depth;
    if (min > max)
        min = max;
    /* Round up, so a short timeout still waits rather than spins. */
    if (min == 0 || timeout_ns == 0)
        wait_ms = 0;
    else if (timeout_ns / IOF_NS_PER_MS >= INFINITE - 1)
        wait_ms = INFINITE - 1;
    else
        wait_ms = (DWORD)((timeout_ns + IOF_NS_PER_MS - 1) / IOF_NS_PER_MS);
    deadline = GetTickCount64() + wait_ms;
    while (got < max) {
        ULONG n = 0;
        DWORD err;

        if (!GetQueuedCompletionStatusEx(e->port, e->entries, (ULONG)(max - got), &n, wait_ms,
                                         FALSE)) {
            err = GetLastError();
            if (err == WAIT_TIMEOUT)
                break;
            return got ? (int)got : win_errno(err);
        }
        for (ULONG k = 0; k < n; k++) {
            struct win_slot *s = (struct win_slot *)e->entries[k].lpOverlapped;
            struct dyn_io *io = s->io;

            if (e->entries[k].lpCompletionKey == WIN_KEY_IO) {
                DWORD bytes = 0;
                if (GetOverlappedResult(s->h, &s->ov, &bytes, FALSE))
                    io->result = (int64_t)bytes;
                else if ((err = GetLastError()) == ERROR_HANDLE_EOF)
                    io->result = 0;
                else
                    io->result = win_errno(err);
            }
            done[got++] = io;
        }
        if (got >= min) {
            /* Take what is already there without waiting, then return. */
            if (got < max && wait_ms) {
                wait_ms = 0;
                continue;
            }
            break;
        }
        {
            ULONGLONG now = GetTickCount64();
            if (now >= deadline)
                break;
            wait_ms = (DWORD)(deadline - now);
        }
    }
    return (int)got;
}

const struct dyn_engine_ops dyn_engine_windows = {
    .facts = &iof_engine_facts[IOF_ENGINE_WINDOWS],
    .open = win_open,
    .close = win_close,
    .submit = win_submit,
    .reap = win_reap,
};
#endif
