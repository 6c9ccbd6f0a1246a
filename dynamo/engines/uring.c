/* SPDX-License-Identifier: Apache-2.0 */
/* io_uring engine: Linux io_uring through liburing, with O_DIRECT. Targets are
 * registered files and the worker's buffers registered (fixed) buffers, so the
 * kernel neither looks up an fd nor pins pages per I/O. submit fills SQEs (a
 * whole refill per call) and, in a worker up to URING_EAGER_DEPTH deep with
 * nothing in flight, hands the first to the kernel alone; the rest go in one
 * io_uring_enter before submit returns, not with the enter that waits for
 * completions at the next reap. reap takes what is already in the CQ ring
 * without a syscall when that is enough. With `hipri` the ring polls for
 * completions (IORING_SETUP_IOPOLL), for NVMe devices with poll queues. */
#include <errno.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/err.h"
#include "dynamo/engine.h"

/* Deepest worker whose first SQE of a refill goes to the kernel alone when
 * the device is idle. The kernel plugs the block queue for a submission of
 * more than 2 (io_submit_state_start: need_plug = max_ios > 2) and dispatches
 * none of them until the last is set up; alone, the first I/O reaches the
 * idle device before the second is prepared. Deeper workers keep one batch
 * per enter, whose single dispatch costs less per I/O (the batch won on the
 * disk at QD 128, docs/performance.md). */
#define URING_EAGER_DEPTH 64u
/* Most I/Os in flight (those of this submit before it included) for an SQE
 * to go alone: 1, the device idle. With I/O in flight the device is busy and
 * an enter per SQE only costs CPU: one enter per SQE up to 8 in flight made
 * 1.25 enters per I/O at QD 8 and lost to fio's batched submission (0.93x
 * IOPS, 1.09x CPU per I/O on a quiet host); the batch took 0.36-0.71 enters
 * per I/O and less CPU per I/O in 7 of 7 rounds on a busy one
 * (docs/performance.md). */
#define URING_EAGER_INFLIGHT 1u
/* Largest SQ ring asked for: I/Os beyond it are flushed in several enters. */
#define URING_MAX_SQ 4096u
/* Largest CQ ring the kernel accepts (IORING_MAX_CQ_ENTRIES); deeper workers
 * rely on IORING_FEAT_NODROP for the rare overflow. */
#define URING_MAX_CQ 65536u
/* Most registered buffer areas (run.c passes read and write buffers). */
#define URING_MAX_BUFS 4u
/* The kernel refuses a registered buffer larger than this. */
#define URING_MAX_BUF_LEN (1ULL << 30)

struct uring_slot {
    int fd;    /* the slot's fd when the engine was opened */
    int fixed; /* its index in the registered file table, or -1 */
};

struct dyn_engine {
    struct io_uring ring;
    unsigned depth;
    unsigned inflight; /* I/Os accepted and not yet reaped, queued SQEs included */
    bool disabled;     /* created disabled: the submitting thread enables it */
    bool ready;        /* the submitting thread has set the ring up (uring_ready) */
    unsigned nbufs;    /* registered buffer areas, 0 when registration failed */
    uintptr_t buf_base[URING_MAX_BUFS];
    uint64_t buf_len[URING_MAX_BUFS];
    struct uring_slot *slots;
    struct io_uring_cqe **cqes; /* scratch for peek */
};

static const char *uring_disabled_note(int err)
{
    FILE *f;
    int v = -1;

    if (err != -EPERM)
        return err == -ENOSYS ? " (the kernel has no io_uring)" : "";
    f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    if (v == 2)
        return " (disabled by sysctl kernel.io_uring_disabled = 2)";
    if (v == 1)
        return " (sysctl kernel.io_uring_disabled = 1 and this process is not in "
               "kernel.io_uring_group)";
    return " (refused by the kernel's security policy)";
}

static int uring_probe(struct iof_diag *diag)
{
    static const int ops[] = {IORING_OP_READ, IORING_OP_WRITE, IORING_OP_READ_FIXED,
                              IORING_OP_WRITE_FIXED};
    static const char *const names[] = {"READ", "WRITE", "READ_FIXED", "WRITE_FIXED"};
    struct io_uring ring;
    struct io_uring_probe *p;
    int r = io_uring_queue_init(2, &ring, 0);

    if (r < 0)
        return iof_diag_set(diag, r, "io_uring_setup failed: %s%s", strerror(-r),
                            uring_disabled_note(r));
    p = io_uring_get_probe_ring(&ring);
    io_uring_queue_exit(&ring);
    if (!p)
        return iof_diag_set(diag, -ENOSYS,
                            "the kernel cannot report its io_uring operations (before Linux 5.6)");
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (!io_uring_opcode_supported(p, ops[i])) {
            io_uring_free_probe(p);
            return iof_diag_set(diag, -ENOSYS, "the kernel's io_uring lacks IORING_OP_%s",
                                names[i]);
        }
    }
    io_uring_free_probe(p);
    return 0;
}

static unsigned pow2_at_least(unsigned n)
{
    unsigned p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* Creates the ring with the best flags this kernel accepts. The ring starts
 * disabled so the worker thread that submits becomes its single issuer. */
static int uring_ring_init(struct dyn_engine *e, bool hipri, struct iof_diag *diag)
{
    static const unsigned tries[] = {
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
            IORING_SETUP_R_DISABLED,
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
        0,
    };
    unsigned sq = e->depth < URING_MAX_SQ ? e->depth : URING_MAX_SQ;
    unsigned cq = e->depth < URING_MAX_CQ ? pow2_at_least(e->depth) : URING_MAX_CQ;
    int r = -EINVAL;

    for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
        struct io_uring_params p = {0};
        p.flags = tries[i] | IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
        if (hipri)
            p.flags |= IORING_SETUP_IOPOLL;
        p.cq_entries = cq < 2 * sq ? 2 * pow2_at_least(sq) : cq;
        r = io_uring_queue_init_params(sq, &e->ring, &p);
        if (r == 0) {
            e->disabled = p.flags & IORING_SETUP_R_DISABLED;
            return 0;
        }
        if (r != -EINVAL)
            break;
    }
    return iof_diag_set(diag, r, "io_uring engine: io_uring_setup failed: %s%s (ring of %u%s)",
                        strerror(-r), uring_disabled_note(r), sq, hipri ? ", polled" : "");
}

/* Registers the slots' distinct fds; a failure only loses the speed-up. */
static void uring_register_files(struct dyn_engine *e, const struct dyn_io *slots)
{
    int *fds = malloc(e->depth * sizeof(*fds));
    unsigned n = 0;

    for (unsigned i = 0; i < e->depth; i++) {
        e->slots[i].fd = slots[i].fd;
        e->slots[i].fixed = -1;
    }
    if (!fds)
        return;
    /* Slots of one target are adjacent and share its fd: compare with the
     * previous distinct fd first, then search (targets are few). */
    for (unsigned i = 0; i < e->depth; i++) {
        int fd = slots[i].fd, k = -1;
        if (fd < 0)
            continue;
        if (n && fds[n - 1] == fd)
            k = (int)n - 1;
        for (unsigned j = 0; k < 0 && j < n; j++)
            if (fds[j] == fd)
                k = (int)j;
        if (k < 0) {
            k = (int)n;
            fds[n++] = fd;
        }
        e->slots[i].fixed = k;
    }
    if (n && io_uring_register_files(&e->ring, fds, n) < 0)
        for (unsigned i = 0; i < e->depth; i++)
            e->slots[i].fixed = -1;
    free(fds);
}

/* Registers the worker's buffer areas; a failure (too large, locked-memory
 * limit) only loses the speed-up. */
static void uring_register_bufs(struct dyn_engine *e, const struct dyn_engine_opts *opts)
{
    struct iovec iov[URING_MAX_BUFS];
    unsigned n = 0;

    if (!opts || !opts->nbufs || opts->nbufs > URING_MAX_BUFS)
        return;
    for (unsigned i = 0; i < opts->nbufs; i++) {
        if (!opts->bufs[i].iov_base || !opts->bufs[i].iov_len ||
            opts->bufs[i].iov_len > URING_MAX_BUF_LEN)
            return;
        iov[n++] = opts->bufs[i];
    }
    if (io_uring_register_buffers(&e->ring, iov, n) < 0)
        return;
    for (unsigned i = 0; i < n; i++) {
        e->buf_base[i] = (uintptr_t)iov[i].iov_base;
        e->buf_len[i] = iov[i].iov_len;
    }
    e->nbufs = n;
}

/* hipri: 0 when the block device behind fd can poll for completions or
 * cannot be told (not block-backed, no sysfs), else -EOPNOTSUPP with the
 * reason: the kernel would fail every polled I/O on it with EOPNOTSUPP. */
static int uring_can_poll(int fd, struct iof_diag *diag)
{
    char path[96];
    struct stat st;
    unsigned ma, mi;
    FILE *f;
    int v = -1;

    if (fstat(fd, &st) < 0)
        return 0;
    ma = major(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
    mi = minor(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
    snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/io_poll", ma, mi);
    if (!(f = fopen(path, "r"))) { /* a partition: its disk's queue */
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/io_poll", ma, mi);
        f = fopen(path, "r");
    }
    if (!f)
        return 0;
    if (fscanf(f, "%d", &v) != 1)
        v = -1;
    fclose(f);
    if (v != 0)
        return 0;
    return iof_diag_set(diag, -EOPNOTSUPP,
                        "io_uring engine: hipri: the %s block device %u:%u cannot poll for "
                        "completions (%s is 0; NVMe needs poll queues, nvme.poll_queues > 0)",
                        S_ISBLK(st.st_mode) ? "target's" : "target file's", ma, mi, path);
}

static void uring_close(struct dyn_engine *e);

static int uring_open(struct dyn_engine **out, struct dyn_io *slots, unsigned depth,
                      const struct dyn_engine_opts *opts, struct iof_diag *diag)
{
    struct dyn_engine *e = calloc(1, sizeof(*e));
    int r;

    if (!e)
        return iof_diag_set(diag, -ENOMEM, "io_uring engine: out of memory");
    for (unsigned i = 0; opts && opts->hipri && i < depth; i++) {
        if (slots[i].fd >= 0 && (i == 0 || slots[i].fd != slots[i - 1].fd) &&
            (r = uring_can_poll(slots[i].fd, diag))) {
            free(e);
            return r;
        }
    }
    e->depth = depth;
    e->slots = calloc(depth, sizeof(*e->slots));
    e->cqes = calloc(depth, sizeof(*e->cqes));
    if (!e->slots || !e->cqes) {
        free(e->slots);
        free(e->cqes);
        free(e);
        return iof_diag_set(diag, -ENOMEM, "io_uring engine: out of memory");
    }
    r = uring_ring_init(e, opts && opts->hipri, diag);
    if (r) {
        free(e->slots);
        free(e->cqes);
        free(e);
        return r;
    }
    uring_register_files(e, slots);
    uring_register_bufs(e, opts);
    for (unsigned i = 0; i < depth; i++)
        slots[i].priv = &e->slots[i];
    *out = e;
    return 0;
}

static void uring_close(struct dyn_engine *e)
{
    if (!e)
        return;
    io_uring_queue_exit(&e->ring);
    free(e->slots);
    free(e->cqes);
    free(e);
}

/* Index of the registered buffer holding [buf, buf + len), or -1. */
static int uring_buf_index(const struct dyn_engine *e, const void *buf, uint32_t len)
{
    for (unsigned i = 0; i < e->nbufs; i++) {
        uintptr_t off = (uintptr_t)buf - e->buf_base[i];
        if (off < e->buf_len[i] && e->buf_len[i] - off >= len)
            return (int)i;
    }
    return -1;
}

/* On the worker thread, before its first I/O: makes it the ring's single
 * issuer when it was created disabled (io_uring_enable_rings is missing from Debian 12's
 * liburing 2.3 library, hence the raw call) and registers the ring fd for this thread so each
 * io_uring_enter skips the fd lookup (a failure there only loses that). */
static int uring_ready(struct dyn_engine *e)
{
    if (e->disabled) {
        if (syscall(__NR_io_uring_register, e->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL,
                    0) < 0)
            return -errno;
        e->disabled = false;
    }
    (void)io_uring_register_ring_fd(&e->ring);
    e->ready = true;
    return 0;
}

static int uring_submit(struct dyn_engine *e, struct dyn_io **ios, unsigned n)
{
    unsigned i;

    if (!e->ready) {
        int r = uring_ready(e);
        if (r < 0)
            return r;
    }
    for (i = 0; i < n; i++) {
        struct dyn_io *io = ios[i];
        const struct uring_slot *s = io->priv;
        struct io_uring_sqe *sqe;
        int b, fd = io->fd;

        if (e->depth <= URING_EAGER_DEPTH && e->inflight + i <= URING_EAGER_INFLIGHT &&
            io_uring_sq_ready(&e->ring)) {
            /* Hand the queued SQE over before filling the next (no plug). */
            int r = io_uring_submit(&e->ring);
            if (r < 0 && r != -EAGAIN && r != -EBUSY && r != -EINTR) {
                if (!i)
                    return r;
                break; /* the I/Os before this one were accepted */
            }
        }
        sqe = io_uring_get_sqe(&e->ring);
        if (!sqe) {
            /* SQ ring full (a ring of one entry, or the kernel kept the last
             * SQEs back with EAGAIN/EBUSY): flush it. */
            int r = io_uring_submit(&e->ring);
            if (r < 0 && r != -EAGAIN && r != -EBUSY && r != -EINTR) {
                if (!i)
                    return r;
                break; /* the I/Os before this one were accepted */
            }
            sqe = io_uring_get_sqe(&e->ring);
            if (!sqe)
                break;
        }
        if (s->fixed >= 0 && s->fd == fd)
            fd = s->fixed;
        b = uring_buf_index(e, io->buf, io->len);
        if (b >= 0) {
            if (io->write)
                io_uring_prep_write_fixed(sqe, fd, io->buf, io->len, io->offset, b);
            else
                io_uring_prep_read_fixed(sqe, fd, io->buf, io->len, io->offset, b);
        } else if (io->write) {
            io_uring_prep_write(sqe, fd, io->buf, io->len, io->offset);
        } else {
            io_uring_prep_read(sqe, fd, io->buf, io->len, io->offset);
        }
        if (fd != io->fd)
            sqe->flags |= IOSQE_FIXED_FILE;
        io_uring_sqe_set_data(sqe, io);
    }
    /* The call's SQEs go to the kernel now, in an enter of their own, not
     * with the enter that then waits for completions. Issued from the enter
     * that waits, a QD 1 read on the loop device took 33-38 us against 20 us
     * handed over first, and 4 workers x QD 64 made 200-223 k IOPS against
     * 274-293 k (docs/performance.md). The worker hands a whole refill over
     * in one call (ENGINE_SUBMIT_ALL), so this is one enter per refill. */
    if (io_uring_sq_ready(&e->ring))
        (void)io_uring_submit(&e->ring); /* a failure comes back from the reap's enter */
    e->inflight += i;
    return (int)i;
}

/* Moves up to max completions from the CQ ring into done[] (no syscall). */
static unsigned uring_take(struct dyn_engine *e, unsigned max, struct dyn_io **done)
{
    unsigned n = io_uring_peek_batch_cqe(&e->ring, e->cqes, max), k = 0;

    for (unsigned i = 0; i < n; i++) {
        struct dyn_io *io = io_uring_cqe_get_data(e->cqes[i]);
        /* liburing's own timeout (kernels before 5.11 only) is not an I/O. */
        if (e->cqes[i]->user_data == LIBURING_UDATA_TIMEOUT)
            continue;
        io->result = e->cqes[i]->res;
        done[k++] = io;
    }
    io_uring_cq_advance(&e->ring, n);
    e->inflight -= k;
    return k;
}

static int uring_reap(struct dyn_engine *e, unsigned min, unsigned max, uint64_t timeout_ns,
                      struct dyn_io **done)
{
    unsigned got;
    int r;

    if (max > e->depth)
        max = e->depth;
    if (!e->ready)
        return 0; /* nothing was ever submitted */
    got = uring_take(e, max, done);
    if (got >= min) {
        /* Enough without waiting; still hand queued SQEs to the kernel. */
        if (io_uring_sq_ready(&e->ring)) {
            r = io_uring_submit(&e->ring);
            if (r < 0 && r != -EAGAIN && r != -EBUSY && r != -EINTR)
                return r;
        }
        return (int)got;
    }
    {
        struct __kernel_timespec ts = {.tv_sec = (long long)(timeout_ns / 1000000000ULL),
                                       .tv_nsec = (long long)(timeout_ns % 1000000000ULL)};
        struct io_uring_cqe *cqe = NULL;
        /* Submits what is queued and waits in one io_uring_enter. */
        r = io_uring_submit_and_wait_timeout(&e->ring, &cqe, min - got, &ts, NULL);
        if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY)
            return got ? (int)got : r;
    }
    return (int)(got + uring_take(e, max - got, done + got));
}

const struct dyn_engine_ops dyn_engine_uring = {
    .facts = &iof_engine_facts[IOF_ENGINE_URING],
    .probe = uring_probe,
    .open = uring_open,
    .close = uring_close,
    .submit = uring_submit,
    .reap = uring_reap,
};
