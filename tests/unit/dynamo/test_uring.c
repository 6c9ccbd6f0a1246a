/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_uring.c - the io_uring engine (dynamo/engines/uring.c) on
 * temporary files: through its ops table (data written is read back equal,
 * with and without registered buffers and files; errors come back per I/O) and
 * through the dyn_test API (statistics as libaio keeps them), plus the refusal
 * when the kernel has no io_uring (a seccomp filter makes io_uring_setup fail
 * in a child process, as on a kernel without it or with it disabled).
 *
 * Files live in a mkdtemp directory under $IOF_TEST_TMPDIR (/tmp otherwise).
 * Every case skips and says why when io_uring is unavailable here or the
 * directory's filesystem refuses O_DIRECT. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/spec.h"
#include "common/stats.h"
#include "dynamo/engine.h"
#include "dynamo/run.h"
#include "dynamo/scope.h"
#include "dynamo/target.h"
#include "tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define KIB ((uint64_t)1024)
#define MIB (1024 * KIB)
#define MS IOF_NS_PER_MS
#define BS 4096u

static char g_dir[PATH_MAX];
static struct dyn_scope *g_scope; /* g_dir as the workdir, and allowed */
static const struct dyn_engine_ops *g_eng;
static bool g_ok;
static char g_why[PATH_MAX + 1024];

/* --- fixtures ---------------------------------------------------------------- */

static void path_in_dir(char *out, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", g_dir, name);
    assert_true(n > 0 && n < PATH_MAX);
}

/* Can io_uring run here, on files in g_dir opened with O_DIRECT? */
static void probe(void)
{
    struct iof_diag diag = {{0}};
    char path[PATH_MAX + 32];
    void *buf = NULL;
    int fd = -1, r;

    g_eng = dyn_engine_find("io_uring");
    if (!g_eng) {
        snprintf(g_why, sizeof(g_why), "no io_uring engine registered");
        return;
    }
    r = g_eng->probe(&diag);
    if (r) {
        snprintf(g_why, sizeof(g_why), "io_uring unavailable: %s", diag.msg);
        return;
    }
    snprintf(path, sizeof(path), "%s/direct.probe", g_dir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    if (fd < 0 || posix_memalign(&buf, BS, BS) || pwrite(fd, memset(buf, 0, BS), BS, 0) != BS) {
        snprintf(g_why, sizeof(g_why), "O_DIRECT not usable in %s (%s)", g_dir, strerror(errno));
        goto out;
    }
    g_ok = true;
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    unlink(path);
}

static int group_setup(void **state)
{
    (void)state;
    if (test_tmpdir_make(g_dir, "test_uring"))
        return -1;
    {
        const char *allow[] = {g_dir};
        struct iof_diag d = {{0}};
        if (dyn_scope_new(g_dir, allow, 1, &g_scope, &d)) {
            fprintf(stderr, "%s\n", d.msg);
            return -1;
        }
    }
    probe();
    if (!g_ok)
        print_message("io_uring cases will skip: %s\n", g_why);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    dyn_scope_free(g_scope);
    test_tmpdir_remove(g_dir); /* also what a failed case left */
    return 0;
}

#define REQUIRE_URING()                                                                            \
    do {                                                                                           \
        if (!g_ok) {                                                                               \
            print_message("skipping: %s\n", g_why);                                                \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* A file of `size` bytes opened O_RDWR|O_DIRECT (flags added), unlinked at once. */
static int temp_direct(const char *name, uint64_t size, int extra)
{
    char path[PATH_MAX];
    int fd;

    path_in_dir(path, name);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | extra, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    unlink(path);
    return fd;
}

/* Submits every slot and reaps until all are back; returns completions seen. */
static unsigned run_all(struct dyn_engine *e, struct dyn_io *slots, unsigned n)
{
    struct dyn_io *ios[64], *done[64];
    unsigned got = 0;
    int r;

    assert_true(n <= 64);
    for (unsigned i = 0; i < n; i++)
        ios[i] = &slots[i];
    r = g_eng->submit(e, ios, n);
    assert_int_equal(r, (int)n);
    while (got < n) {
        r = g_eng->reap(e, 1, 64, 5 * IOF_NS_PER_S, done + got);
        assert_true(r > 0);
        for (int i = 0; i < r; i++)
            assert_true(done[got + (unsigned)i] >= slots && done[got + (unsigned)i] < slots + n);
        got += (unsigned)r;
    }
    /* Nothing more: an empty reap with a zero timeout returns 0. */
    assert_int_equal(g_eng->reap(e, 0, 64, 0, done), 0);
    return got;
}

/* --- the ops table ----------------------------------------------------------- */

/* `key` ("UserFiles", "UserBufs") from the fdinfo of this process's one
 * io_uring fd: how many files or buffers the kernel holds registered. */
static long ring_registered(const char *key)
{
    char link[64], target[64], line[256];
    size_t klen = strlen(key);
    long v = -1;

    for (int fd = 0; fd < 1024 && v < 0; fd++) {
        ssize_t n;
        FILE *f;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, "anon_inode:[io_uring]"))
            continue;
        snprintf(link, sizeof(link), "/proc/self/fdinfo/%d", fd);
        f = fopen(link, "r");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
            if (!strncmp(line, key, klen) && line[klen] == ':')
                v = strtol(line + klen + 1, NULL, 10);
        fclose(f);
    }
    return v;
}

/* Writes 16 distinct blocks with QD 16, reads them back into other buffers,
 * compares. `reg`: pass the buffers for registration (fixed buffers) or not;
 * `misplace`: register an area that does not hold the read buffers, so
 * reads take the plain path while writes use the fixed one. */
static void roundtrip(bool reg, bool misplace)
{
    enum { N = 16 };
    struct dyn_io slots[N];
    struct dyn_engine *e = NULL;
    struct iof_diag diag = {{0}};
    uint8_t *wbuf = NULL, *rbuf = NULL, *other = NULL;
    struct iovec iov[2];
    struct dyn_engine_opts opts = {0};
    int fd;

    REQUIRE_URING();
    fd = temp_direct("rt.dat", N * BS, 0);
    assert_int_equal(posix_memalign((void **)&wbuf, BS, N * BS), 0);
    assert_int_equal(posix_memalign((void **)&rbuf, BS, N * BS), 0);
    assert_int_equal(posix_memalign((void **)&other, BS, BS), 0);
    for (unsigned i = 0; i < N * BS; i++)
        wbuf[i] = (uint8_t)(i * 7 + i / BS);
    memset(rbuf, 0xee, N * BS);
    iov[0] = (struct iovec){wbuf, N * BS};
    iov[1] = (struct iovec){misplace ? other : rbuf, misplace ? BS : N * BS};
    opts.bufs = iov;
    opts.nbufs = 2;
    memset(slots, 0, sizeof(slots));
    for (unsigned i = 0; i < N; i++)
        slots[i].fd = fd;
    assert_int_equal(g_eng->open(&e, slots, N, reg ? &opts : NULL, &diag), 0);
    /* One distinct fd: one registered file; the buffer areas when given. */
    assert_int_equal(ring_registered("UserFiles"), 1);
    assert_int_equal(ring_registered("UserBufs"), reg ? 2 : 0);

    /* Reverse order, so offsets and buffers are not both ascending. */
    for (unsigned i = 0; i < N; i++) {
        slots[i].write = true;
        slots[i].offset = (uint64_t)(N - 1 - i) * BS;
        slots[i].buf = wbuf + (size_t)(N - 1 - i) * BS;
        slots[i].len = BS;
        slots[i].result = -1;
    }
    assert_int_equal(run_all(e, slots, N), N);
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(slots[i].result, BS);
    for (unsigned i = 0; i < N; i++) {
        slots[i].write = false;
        slots[i].buf = rbuf + (size_t)slots[i].offset;
        slots[i].result = -1;
    }
    assert_int_equal(run_all(e, slots, N), N);
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(slots[i].result, BS);
    assert_memory_equal(wbuf, rbuf, N * BS);
    g_eng->close(e);
    close(fd);
    free(wbuf);
    free(rbuf);
    free(other);
}

static void test_roundtrip_registered(void **state)
{
    (void)state;
    roundtrip(true, false);
}

static void test_roundtrip_plain(void **state)
{
    (void)state;
    roundtrip(false, false);
}

static void test_roundtrip_mixed(void **state)
{
    (void)state;
    roundtrip(true, true);
}

/* Slots 0..n-1 read block i of fd into block i of buf; ios[i] is slot i. */
static void read_slots(struct dyn_io *slots, struct dyn_io **ios, unsigned n, int fd, uint8_t *buf)
{
    for (unsigned i = 0; i < n; i++) {
        slots[i].fd = fd;
        slots[i].offset = (uint64_t)i * BS;
        slots[i].buf = buf + (size_t)i * BS;
        slots[i].len = BS;
        slots[i].result = -1;
        ios[i] = &slots[i];
    }
}

/* A submit call hands its SQEs to the kernel before it returns, not with
 * the reap's enter that then waits for them: after one submit of 8 into an
 * idle ring the kernel has consumed all 8 (the fdinfo's SqHead), in a worker
 * up to 64 deep (whose first SQE goes alone) and in a deeper one (`deep`,
 * all in one enter). */
static void submit_eagerly(bool deep)
{
    enum { N = 8, DEEP = 128 };
    struct dyn_io slots[DEEP], *ios[N];
    struct dyn_engine *e = NULL;
    struct iof_diag diag = {{0}};
    uint8_t *buf = NULL;
    int fd;

    REQUIRE_URING();
    fd = temp_direct("eager.dat", N * BS, 0);
    assert_int_equal(posix_memalign((void **)&buf, BS, N * BS), 0);
    memset(slots, 0, sizeof(slots));
    for (unsigned i = 0; i < DEEP; i++)
        slots[i].fd = fd;
    read_slots(slots, ios, N, fd, buf);
    assert_int_equal(g_eng->open(&e, slots, deep ? DEEP : N, NULL, &diag), 0);
    assert_int_equal(g_eng->submit(e, ios, N), N);
    assert_int_equal(ring_registered("SqHead"), N);
    {
        struct dyn_io *done[N];
        unsigned got = 0;
        while (got < N) {
            int r = g_eng->reap(e, 1, N, 5 * IOF_NS_PER_S, done + got);
            assert_true(r > 0);
            got += (unsigned)r;
        }
    }
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(slots[i].result, BS);
    g_eng->close(e);
    close(fd);
    free(buf);
}

static void test_submit_first_alone(void **state)
{
    (void)state;
    submit_eagerly(false);
}

static void test_submit_deep_batched(void **state)
{
    (void)state;
    submit_eagerly(true);
}

/* A submit of one SQE (a worker at QD 1) hands it to the kernel at once,
 * not in the enter that waits: SqHead 1 after it, 2 after a second while
 * the first is still in flight. */
static void test_submit_lone_now(void **state)
{
    enum { N = 2 };
    struct dyn_io slots[N], *ios[N], *done[N];
    struct dyn_engine *e = NULL;
    struct iof_diag diag = {{0}};
    uint8_t *buf = NULL;
    unsigned got = 0;
    int fd;

    (void)state;
    REQUIRE_URING();
    fd = temp_direct("lone.dat", N * BS, 0);
    assert_int_equal(posix_memalign((void **)&buf, BS, N * BS), 0);
    memset(slots, 0, sizeof(slots));
    read_slots(slots, ios, N, fd, buf);
    assert_int_equal(g_eng->open(&e, slots, N, NULL, &diag), 0);
    assert_int_equal(g_eng->submit(e, ios, 1), 1);
    assert_int_equal(ring_registered("SqHead"), 1);
    assert_int_equal(g_eng->submit(e, ios + 1, 1), 1);
    assert_int_equal(ring_registered("SqHead"), 2);
    while (got < N) {
        int r = g_eng->reap(e, 1, N, 5 * IOF_NS_PER_S, done + got);
        assert_true(r > 0);
        got += (unsigned)r;
    }
    assert_int_equal(ring_registered("SqHead"), 2);
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(slots[i].result, BS);
    g_eng->close(e);
    close(fd);
    free(buf);
}

/* Per-I/O errors come back in result, the engine keeps working: a read from
 * a directory (-EISDIR), a write to a read-only fd (-EBADF), a read past the
 * end (0 bytes: a short transfer), then a good read. */
static void test_errors_per_io(void **state)
{
    struct dyn_io slots[4];
    struct dyn_engine *e = NULL;
    struct iof_diag diag = {{0}};
    char path[PATH_MAX];
    uint8_t *buf = NULL;
    int fd, rofd, dirfd;

    (void)state;
    REQUIRE_URING();
    dirfd = open(g_dir, O_RDONLY | O_DIRECTORY);
    assert_true(dirfd >= 0);
    fd = temp_direct("err.dat", 4 * BS, 0);
    path_in_dir(path, "err-ro.dat");
    rofd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    assert_true(rofd >= 0);
    assert_int_equal(ftruncate(rofd, 4 * BS), 0);
    close(rofd);
    rofd = open(path, O_RDONLY | O_DIRECT);
    assert_true(rofd >= 0);
    unlink(path);
    assert_int_equal(posix_memalign((void **)&buf, BS, 4 * BS), 0);
    memset(buf, 1, 4 * BS);
    memset(slots, 0, sizeof(slots));
    slots[0] = (struct dyn_io){.fd = dirfd, .buf = buf, .offset = 0, .len = BS};
    slots[1] = (struct dyn_io){.fd = rofd, .buf = buf + BS, .offset = 0, .len = BS, .write = true};
    slots[2] = (struct dyn_io){.fd = fd, .buf = buf + 2 * BS, .offset = 64 * BS, .len = BS};
    slots[3] = (struct dyn_io){.fd = fd, .buf = buf + 3 * BS, .offset = BS, .len = BS};
    assert_int_equal(g_eng->open(&e, slots, 4, NULL, &diag), 0);
    assert_int_equal(run_all(e, slots, 4), 4);
    assert_int_equal(slots[0].result, -EISDIR);
    assert_int_equal(slots[1].result, -EBADF);
    assert_int_equal(slots[2].result, 0);
    assert_int_equal(slots[3].result, BS);
    g_eng->close(e);
    close(fd);
    close(rofd);
    close(dirfd);
    free(buf);
}

/* --- through dyn_test -------------------------------------------------------- */

struct setup {
    struct iof_line line;
    struct iof_spec spec;
    struct iof_target_cfg tgt;
    struct iof_worker_cfg grp;
    struct dyn_test_params p;
};

static void setup_mk(struct setup *s, uint32_t workers, uint32_t qd, uint32_t read_pct)
{
    memset(s, 0, sizeof(*s));
    s->line = (struct iof_line){
        .size = 4 * KIB, .share = 100, .read_pct = read_pct, .random_pct = 100, .burst = 1};
    snprintf(s->spec.name, sizeof(s->spec.name), "4k %u%% read", read_pct);
    s->spec.lines = &s->line;
    s->spec.nlines = 1;
    snprintf(s->tgt.path, sizeof(s->tgt.path), "run.dat");
    s->tgt.size = 8 * MIB;
    s->grp.count = workers;
    snprintf(s->grp.engine, sizeof(s->grp.engine), "io_uring");
    s->grp.queue_depth = qd;
    s->grp.targets = &s->tgt;
    s->grp.ntargets = 1;
    s->grp.pattern = IOF_PATTERN_RANDOM;
    s->p.spec = &s->spec;
    s->p.groups = &s->grp;
    s->p.ngroups = 1;
    s->p.scope = g_scope;
    s->p.ramp_ns = 50 * MS;
    s->p.duration_ns = 300 * MS;
    s->p.interval_ns = 100 * MS;
    s->p.seed = 7;
}

/* Runs s to the end, releasing intervals as they come; totals of all workers. */
static int run_plan(struct setup *s, struct iof_stats *all, struct iof_diag *diag)
{
    struct dyn_test *t = NULL;
    uint64_t next[8] = {0};
    int r;

    s->p.start_ns = iof_now_ns() + 10 * MS;
    r = dyn_test_start(&s->p, &t, diag);
    if (r)
        return r;
    assert_true(dyn_test_nworkers(t) <= 8);
    while (!dyn_test_finished(t)) {
        for (size_t w = 0; w < dyn_test_nworkers(t); w++) {
            const struct iof_stats *st;
            while (dyn_test_interval(t, w, next[w], &st) == 1)
                dyn_test_interval_release(t, w, next[w]++);
        }
        iof_sleep_until(iof_now_ns() + 5 * MS);
    }
    r = dyn_test_join(t, diag);
    iof_stats_reset(all);
    for (size_t w = 0; w < dyn_test_nworkers(t); w++)
        iof_stats_merge(all, &dyn_test_totals(t, w)[0]);
    dyn_test_free(t);
    return r;
}

static void prepare(struct setup *s)
{
    struct iof_diag diag = {{0}};
    int r = dyn_target_prepare(&s->tgt, g_scope, IOF_PATTERN_PSEUDO, NULL, NULL, &diag);
    if (r)
        print_message("prepare: %s\n", diag.msg);
    assert_int_equal(r, 0);
}

static void remove_target(void)
{
    char path[PATH_MAX];
    path_in_dir(path, "run.dat");
    unlink(path);
}

/* Mixed reads and writes, 2 workers at QD 8: every I/O counted once, with its
 * bytes and a latency, no errors, the read share near the spec's. */
static void test_run_stats(void **state)
{
    struct setup s;
    struct iof_stats all;
    struct iof_diag diag = {{0}};
    uint64_t ios;
    int r;

    (void)state;
    REQUIRE_URING();
    setup_mk(&s, 2, 8, 50);
    prepare(&s);
    r = run_plan(&s, &all, &diag);
    if (r)
        print_message("run: %s (%s)\n", iof_strerror(r), diag.msg);
    assert_int_equal(r, 0);
    ios = all.rd.ios + all.wr.ios;
    print_message("io_uring: %" PRIu64 " ios in 0.3 s, mean read latency %.1f us\n", ios,
                  all.rd.ios ? (double)all.rd.lat.sum_ns / (double)all.rd.ios / 1e3 : 0.0);
    assert_true(ios > 100);
    assert_int_equal(all.rd.errors + all.wr.errors, 0);
    assert_int_equal(all.first_error, 0);
    assert_int_equal(all.rd.bytes, all.rd.ios * 4 * KIB);
    assert_int_equal(all.wr.bytes, all.wr.ios * 4 * KIB);
    assert_int_equal(all.rd.lat.count, all.rd.ios);
    assert_int_equal(all.wr.lat.count, all.wr.ios);
    assert_true(all.rd.lat.min_ns > 0);
    assert_true(all.rd.ios * 10 > ios * 3 && all.rd.ios * 10 < ios * 7);
    remove_target();
}

/* Reads past the end of the range cannot happen; a misaligned range with
 * O_DIRECT is refused at start, as with libaio. */
static void test_run_misaligned(void **state)
{
    struct setup s;
    struct iof_stats all;
    struct iof_diag diag = {{0}};

    (void)state;
    REQUIRE_URING();
    setup_mk(&s, 1, 4, 100);
    prepare(&s);
    s.tgt.range_offset = 100;
    assert_int_equal(run_plan(&s, &all, &diag), IOF_EALIGN);
    assert_non_null(strstr(diag.msg, "run.dat"));
    remove_target();
}

/* I/O errors are counted per direction with the first error kept: the
 * target file shrinks under the run (after preparing), so reads beyond the
 * new end come back short. */
static void test_run_counts_errors(void **state)
{
    struct setup s;
    struct iof_stats all;
    struct iof_diag diag = {{0}};
    struct dyn_test *t = NULL;
    char path[PATH_MAX];

    (void)state;
    REQUIRE_URING();
    setup_mk(&s, 1, 8, 100);
    prepare(&s);
    path_in_dir(path, "run.dat");
    s.p.start_ns = iof_now_ns() + 10 * MS;
    assert_int_equal(dyn_test_start(&s.p, &t, &diag), 0);
    assert_int_equal(truncate(path, (off_t)(1 * MIB)), 0); /* 7/8 of reads now short */
    while (!dyn_test_finished(t))
        iof_sleep_until(iof_now_ns() + 5 * MS);
    assert_int_equal(dyn_test_join(t, &diag), 0);
    iof_stats_reset(&all);
    iof_stats_merge(&all, &dyn_test_totals(t, 0)[0]);
    dyn_test_free(t);
    print_message("short reads: %" PRIu64 " errors, %" PRIu64 " good\n", all.rd.errors, all.rd.ios);
    assert_true(all.rd.errors > 0);
    assert_true(all.rd.errors > all.rd.ios); /* 7 in 8 offsets are past the end */
    assert_int_equal(all.first_error, -EIO); /* a short transfer */
    assert_true(all.first_error_offset >= 1 * MIB);
    assert_int_equal(all.rd.lat.count, all.rd.ios);
    remove_target();
}

/* hipri: a polled ring. A target on a block device that cannot poll
 * (queue/io_poll 0: files on this disk, loop devices) is refused when the
 * test starts, naming the device; where polling is possible, or cannot be
 * told, the run goes ahead and any I/O the kernel still refuses comes back
 * as an EOPNOTSUPP error, counted. Mixing the two, or losing I/Os, is not. */
static void test_run_hipri(void **state)
{
    struct setup s;
    struct iof_stats all;
    struct iof_diag diag = {{0}};
    int r;

    (void)state;
    REQUIRE_URING();
    setup_mk(&s, 1, 8, 100);
    s.grp.hipri = true;
    prepare(&s);
    r = run_plan(&s, &all, &diag);
    if (r == -EOPNOTSUPP) {
        print_message("hipri refused: %s\n", diag.msg);
        assert_non_null(strstr(diag.msg, "cannot poll for completions"));
        assert_non_null(strstr(diag.msg, "queue/io_poll is 0"));
        remove_target();
        return;
    }
    if (r)
        print_message("run: %s (%s)\n", iof_strerror(r), diag.msg);
    assert_int_equal(r, 0);
    print_message("hipri on a file: %" PRIu64 " reads, %" PRIu64 " errors (first %s)\n", all.rd.ios,
                  all.rd.errors, all.first_error ? strerror(-all.first_error) : "none");
    if (all.rd.errors) {
        assert_int_equal(all.rd.ios, 0);
        assert_int_equal(all.first_error, -EOPNOTSUPP);
    } else {
        assert_true(all.rd.ios > 100);
        assert_int_equal(all.rd.lat.count, all.rd.ios);
    }
    remove_target();
}

/* --- a kernel without io_uring -------------------------------------------------- */

/* In a child: io_uring_setup fails with `err` (seccomp), as on a kernel
 * without io_uring (ENOSYS) or with it disabled (EPERM). The child checks
 * the probe's and open's messages and exits 0 when they are right. */
static int child_without_uring(int err, const char *want)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
    struct iof_diag d1 = {{0}}, d2 = {{0}};
    struct dyn_io slot = {.fd = -1};
    struct dyn_engine *e = NULL;

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
        return 3;
    if (g_eng->probe(&d1) != -err || !strstr(d1.msg, want)) {
        fprintf(stderr, "probe: %s\n", d1.msg);
        return 1;
    }
    if (g_eng->open(&e, &slot, 1, NULL, &d2) != -err || !strstr(d2.msg, want)) {
        fprintf(stderr, "open: %s\n", d2.msg);
        return 2;
    }
    printf("  without io_uring: %s\n", d1.msg);
    fflush(stdout);
    return 0;
}

static void expect_child(int err, const char *want)
{
    int status;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_without_uring(err, want));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 3) {
        print_message("seccomp filters unavailable here; cannot simulate a kernel without "
                      "io_uring\n");
        skip();
    }
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_kernel_without_uring(void **state)
{
    (void)state;
    if (!g_eng)
        skip();
    expect_child(ENOSYS,
                 "io_uring_setup failed: Function not implemented (the kernel has no io_uring)");
    expect_child(EPERM, "io_uring_setup failed: Operation not permitted (");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_registered),
        cmocka_unit_test(test_roundtrip_plain),
        cmocka_unit_test(test_roundtrip_mixed),
        cmocka_unit_test(test_errors_per_io),
        cmocka_unit_test(test_submit_first_alone),
        cmocka_unit_test(test_submit_deep_batched),
        cmocka_unit_test(test_submit_lone_now),
        cmocka_unit_test(test_run_stats),
        cmocka_unit_test(test_run_misaligned),
        cmocka_unit_test(test_run_counts_errors),
        cmocka_unit_test(test_run_hipri),
        cmocka_unit_test(test_kernel_without_uring),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
