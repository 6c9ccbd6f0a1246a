/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/test_win_engine.c - the windows engine (dynamo/engines/windows.c)
 * on a file target, run under Wine by scripts/windows test: the alignment rule
 * it enforces itself (Wine does not), data written and read back, N I/Os at
 * queue depth 8 all completing with the right counts, and Little's law
 * (IOPS x mean latency >= 0.9 x QD). Only correctness and invariants: Wine
 * says nothing of Windows' speed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <io.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "common/clock.h"
#include "common/err.h"
#include "dynamo/engines/windows.h"

#define QD 8
#define BS 4096u
#define FILE_BYTES (4u << 20)
#define N_IOS 4000u

struct fixture {
    char path[MAX_PATH];
    int fd;
    struct dyn_io slots[QD];
    struct dyn_engine *e;
};

/* A 4 MiB test file, filled once with plain buffered writes (like Iometer's
 * iobw.tst), then opened again as a target: DYN_WIN_FILE_FLAGS. */
static int setup(void **state)
{
    static struct fixture f;
    char dir[MAX_PATH];
    static char chunk[65536];
    struct iof_diag diag = {{0}};
    HANDLE h;
    DWORD n;

    memset(&f, 0, sizeof(f));
    assert_true(GetTempPathA(sizeof(dir), dir) > 0);
    snprintf(f.path, sizeof(f.path), "%siofleet-win-engine-%lu.tst", dir, GetCurrentProcessId());
    h = CreateFileA(f.path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    assert_true(h != INVALID_HANDLE_VALUE);
    memset(chunk, 0x5a, sizeof(chunk));
    for (unsigned off = 0; off < FILE_BYTES; off += sizeof(chunk))
        assert_true(WriteFile(h, chunk, sizeof(chunk), &n, NULL) && n == sizeof(chunk));
    CloseHandle(h);

    h = CreateFileA(f.path, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                    OPEN_EXISTING, DYN_WIN_FILE_FLAGS, NULL);
    assert_true(h != INVALID_HANDLE_VALUE);
    f.fd = _open_osfhandle((intptr_t)h, 0);
    assert_true(f.fd >= 0);
    for (unsigned i = 0; i < QD; i++) {
        f.slots[i].fd = f.fd;
        f.slots[i].buf = dyn_win_alloc_buf(BS);
        assert_non_null(f.slots[i].buf);
        assert_int_equal((uintptr_t)f.slots[i].buf % 4096, 0);
        f.slots[i].len = BS;
    }
    assert_int_equal(dyn_engine_windows.open(&f.e, f.slots, QD, NULL, &diag), 0);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    dyn_engine_windows.close(f->e);
    for (unsigned i = 0; i < QD; i++)
        dyn_win_free_buf(f->slots[i].buf);
    _close(f->fd);
    DeleteFileA(f->path);
    return 0;
}

/* Submits ios and reaps until all n have completed (5 s at most). */
static void run_batch(struct dyn_engine *e, struct dyn_io **ios, unsigned n)
{
    struct dyn_io *done[QD];
    unsigned got = 0;
    uint64_t t0 = iof_now_ns();

    assert_int_equal(dyn_engine_windows.submit(e, ios, n), (int)n);
    while (got < n) {
        int r = dyn_engine_windows.reap(e, 1, QD, 100 * IOF_NS_PER_MS, done);
        assert_true(r >= 0);
        got += (unsigned)r;
        assert_true(iof_now_ns() - t0 < 5 * IOF_NS_PER_S);
    }
    assert_int_equal(got, n);
}

static void test_align_rule(void **state)
{
    static char mem[8192] __attribute__((aligned(4096)));
    struct dyn_io io = {.buf = mem, .offset = 8192, .len = 4096};
    struct iof_diag diag = {{0}};
    (void)state;

    assert_int_equal(dyn_win_check_align(&io, 512, &diag), 0);
    assert_int_equal(dyn_win_check_align(&io, 4096, &diag), 0);
    io.offset = 4097;
    assert_int_equal(dyn_win_check_align(&io, 512, &diag), IOF_EALIGN);
    assert_non_null(strstr(diag.msg, "offset 4097"));
    assert_non_null(strstr(diag.msg, "512-byte sector"));
    io.offset = 512; /* fine for 512-byte sectors, not for 4Kn */
    assert_int_equal(dyn_win_check_align(&io, 512, &diag), 0);
    assert_int_equal(dyn_win_check_align(&io, 4096, &diag), IOF_EALIGN);
    assert_non_null(strstr(diag.msg, "4096-byte sector"));
    io.offset = 0;
    io.len = 1000;
    io.write = true;
    assert_int_equal(dyn_win_check_align(&io, 512, &diag), IOF_EALIGN);
    assert_non_null(strstr(diag.msg, "write of 1000 bytes"));
    io.len = 512;
    io.buf = mem + 8;
    assert_int_equal(dyn_win_check_align(&io, 512, &diag), IOF_EALIGN);
    assert_non_null(strstr(diag.msg, "buffer"));
    io.buf = mem;
    io.len = 0;
    assert_int_equal(dyn_win_check_align(&io, 512, &diag), IOF_EALIGN);
    io.len = 512;
    assert_int_equal(dyn_win_check_align(&io, 768, &diag), IOF_EALIGN);
    assert_non_null(strstr(diag.msg, "power of two"));
}

/* Wine would perform these; the engine refuses them, each completing with
 * IOF_EALIGN through the port, the first reason kept. */
static void test_unaligned_refused(void **state)
{
    struct fixture *f = *state;
    struct dyn_io *ios[3] = {&f->slots[0], &f->slots[1], &f->slots[2]};
    struct dyn_io *done[QD];
    char *buf2 = f->slots[2].buf;
    int got = 0;

    assert_null(dyn_win_refusal(f->e));
    f->slots[0].offset = 4097;
    f->slots[0].write = false;
    f->slots[1].offset = 0;
    f->slots[1].len = 100;
    f->slots[1].write = true;
    f->slots[2].offset = 8192;
    f->slots[2].buf = buf2 + 16;
    f->slots[2].write = false;
    assert_int_equal(dyn_engine_windows.submit(f->e, ios, 3), 3);
    while (got < 3) {
        int r = dyn_engine_windows.reap(f->e, 1, QD, IOF_NS_PER_S, done + got);
        assert_true(r > 0);
        got += r;
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(done[i]->result, IOF_EALIGN);
    assert_non_null(dyn_win_refusal(f->e));
    assert_non_null(strstr(dyn_win_refusal(f->e), "read at offset 4097 refused"));
    f->slots[1].len = BS;
    f->slots[2].buf = buf2;
    /* Nothing else is queued. */
    assert_int_equal(dyn_engine_windows.reap(f->e, 0, QD, 0, done), 0);
}

/* What is written through the engine is read back through it. */
static void test_write_read_back(void **state)
{
    struct fixture *f = *state;
    struct dyn_io *ios[QD];

    for (unsigned i = 0; i < QD; i++) {
        f->slots[i].offset = (uint64_t)i * 3 * BS;
        f->slots[i].write = true;
        memset(f->slots[i].buf, 'a' + (int)i, BS);
        ios[i] = &f->slots[i];
    }
    run_batch(f->e, ios, QD);
    for (unsigned i = 0; i < QD; i++) {
        assert_int_equal(f->slots[i].result, BS);
        memset(f->slots[i].buf, 0, BS);
        f->slots[i].write = false;
    }
    run_batch(f->e, ios, QD);
    for (unsigned i = 0; i < QD; i++) {
        const unsigned char *b = f->slots[i].buf;
        assert_int_equal(f->slots[i].result, BS);
        assert_int_equal(b[0], 'a' + i);
        assert_int_equal(b[BS - 1], 'a' + i);
    }
    /* A read past the end of the file transfers nothing, as pread would. */
    f->slots[0].offset = FILE_BYTES + 64 * BS;
    run_batch(f->e, ios, 1);
    assert_int_equal(f->slots[0].result, 0);
}

/* N_IOS random 4 KiB I/Os (70 % reads) kept at QD 8 until all complete: every
 * one completes once with the full length, the counts add up, and the queue
 * stays full (Little's law). */
static void test_qd8_littles_law(void **state)
{
    struct fixture *f = *state;
    struct dyn_io *ios[QD], *done[QD];
    unsigned submitted = 0, completed = 0, reads = 0, writes = 0, want_reads = 0;
    unsigned completions_of[QD] = {0};
    uint64_t lat_sum = 0, t0, elapsed, rnd = 88172645463325252ULL;
    double iops, mean_lat, little;

    for (unsigned i = 0; i < QD; i++)
        ios[i] = &f->slots[i];
    t0 = iof_now_ns();
    /* Fill the queue, then put each completed slot straight back. */
    for (unsigned i = 0; i < QD; i++) {
        rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
        f->slots[i].offset = rnd % (FILE_BYTES / BS) * BS;
        f->slots[i].write = rnd % 10 >= 7;
        want_reads += !f->slots[i].write;
        f->slots[i].submit_ns = iof_now_ns();
    }
    assert_int_equal(dyn_engine_windows.submit(f->e, ios, QD), QD);
    submitted = QD;
    while (completed < N_IOS) {
        int r = dyn_engine_windows.reap(f->e, 1, QD, IOF_NS_PER_S, done);
        uint64_t now = iof_now_ns();
        unsigned again = 0;

        assert_true(r > 0);
        for (int k = 0; k < r; k++) {
            struct dyn_io *io = done[k];
            assert_int_equal(io->result, BS);
            completions_of[io - f->slots]++;
            lat_sum += now - io->submit_ns;
            completed++;
            io->write ? writes++ : reads++;
            if (submitted < N_IOS) {
                rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
                io->offset = rnd % (FILE_BYTES / BS) * BS;
                io->write = rnd % 10 >= 7;
                want_reads += !io->write;
                io->submit_ns = iof_now_ns();
                ios[again++] = io;
                submitted++;
            }
        }
        if (again)
            assert_int_equal(dyn_engine_windows.submit(f->e, ios, again), (int)again);
        assert_true(completed <= submitted);
    }
    elapsed = iof_now_ns() - t0;
    assert_int_equal(completed, N_IOS);
    assert_int_equal(reads + writes, N_IOS);
    assert_int_equal(reads, want_reads);
    assert_true(reads > N_IOS / 2 && writes > N_IOS / 5);
    for (unsigned i = 0; i < QD; i++)
        assert_true(completions_of[i] > 0);
    assert_int_equal(dyn_engine_windows.reap(f->e, 0, QD, 0, done), 0);
    iops = (double)N_IOS / ((double)elapsed / 1e9);
    mean_lat = (double)lat_sum / N_IOS / 1e9;
    little = iops * mean_lat;
    print_message("windows engine under Wine: %u I/Os, %.0f IOPS, mean %.1f us, "
                  "IOPS x latency = %.2f (QD %d)\n",
                  N_IOS, iops, mean_lat * 1e6, little, QD);
    assert_true(little >= 0.9 * QD);
    assert_true(little <= QD + 0.01);
}

/* A handle opened without FILE_FLAG_OVERLAPPED cannot join a port: open
 * says so rather than failing every I/O later. */
static void test_open_needs_overlapped(void **state)
{
    struct fixture *f = *state;
    struct dyn_io slot = {.len = BS};
    struct dyn_engine *e = NULL;
    struct iof_diag diag = {{0}};
    HANDLE h = CreateFileA(f->path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    int fd, r;

    assert_true(h != INVALID_HANDLE_VALUE);
    fd = _open_osfhandle((intptr_t)h, 0);
    slot.fd = fd;
    r = dyn_engine_windows.open(&e, &slot, 1, NULL, &diag);
    if (r == 0) {
        /* Wine lets a synchronous handle join a port; Windows does not. */
        dyn_engine_windows.close(e);
    } else {
        assert_non_null(strstr(diag.msg, "completion port"));
    }
    _close(fd);
    slot.fd = -1;
    assert_int_equal(dyn_engine_windows.open(&e, &slot, 1, NULL, &diag), -EBADF);
    assert_non_null(strstr(diag.msg, "no handle"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_align_rule),
        cmocka_unit_test(test_unaligned_refused),
        cmocka_unit_test(test_write_read_back),
        cmocka_unit_test(test_qd8_littles_law),
        cmocka_unit_test(test_open_needs_overlapped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
