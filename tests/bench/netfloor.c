/* SPDX-License-Identifier: Apache-2.0 */
/* tests/bench/netfloor.c - iof_netfloor: the CPU that the sockets alone of
 * a manager with N agents cost on this host (tests/bench/net-floor), with no
 * protocol at all: the floor under `iofleet run --listen`'s own CPU.
 *
 * usage: iof_netfloor [--agents N] [--bytes B] [--heartbeat H] [--heartbeat-every P]
 *                     [--duration S] [--warmup S] [--send write|uring]
 *                     [--recv epoll|uring]
 *
 * The process forks: the parent is the "server" (the manager's bare minimum),
 * the child the "client" (N agents), over N loopback TCP connections
 * (127.0.0.1, an ephemeral port, TCP_NODELAY as common/net.c sets it). On a
 * timeline shared through CLOCK_MONOTONIC, with t = 0 once all N are
 * connected:
 *   - the client writes one B-byte message on every connection at
 *     t = k + 0.5 s, all at once (a report per agent per interval);
 *   - the server writes one H-byte heartbeat per connection every P
 *     seconds (1, or 3 as a protocol 1.5 manager offers its agents), spread
 *     over 32 slots as proto/link.c does: at t = (j + 0.5) * P / 32 s,
 *     slot j writes to connections [s * N / 32, (s + 1) * N / 32), s = j % 32,
 *     one write() each (--send write) or as one batch of IORING_OP_SEND per
 *     slot, one io_uring_enter (--send uring);
 *   - both read with one level-triggered epoll loop as libuv's: one
 *     epoll_wait for up to 1024 events, then one read() per readable socket
 *     into a 64 KiB buffer. With --recv uring the server reads instead
 *     with one multishot receive per connection into a ring of provided
 *     buffers and waits in io_uring_enter: no read() or epoll_wait per
 *     message, what a manager that left libuv's reading could do.
 * The measured window is [W, W + D) s: it holds D sends of every connection
 * and D / P * 32 heartbeat slots exactly (W and D are multiples of P). Each side samples its own
 * getrusage(RUSAGE_SELF) at both ends. The messages of the window are counted by what they are,
 * not by when they were read: every message on a connection has the same size, so the bytes
 * read so far tell which send a message came from, and a reader that wakes late on a loaded
 * host neither gains nor loses a message at the window's edges. After the window both sides read on
 * until every connection got all it was sent (at most 2 s more); the client
 * closes its end only once the server is done.
 *
 * Prints one machine-readable line and one human line:
 *   netfloor n=N b=B h=H send=MODE seconds=D server_cpu_pct=X client_cpu_pct=Y
 *     server_us_per_agent_s=Z msgs=M msgs_expected=M hb=K hb_expected=K ...
 *     complete=0|1 ok=0|1
 * msgs is how many of the messages sent in the window the server read (whenever
 * it read them), hb the same of the client's heartbeats, server_reads and
 * client_reads the reads that ended one of them; ok=1 when msgs and hb are exactly as expected,
 * every connection got all its bytes over the whole run and no write failed. Exit status: 0 when
 * ok, 1 otherwise, 2 on usage or setup errors. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nofile.h"

#define NF_SLOTS 32
#define NF_EVENTS 1024 /* libuv's uv__io_poll */
#define NF_RBUF (64u << 10)
#define NF_SEC 1000000000ull
#define NF_MAX_AGENTS 100000
#define NF_MAX_BYTES 65536
#define NF_CONNECT_S 60 /* connecting all N, each side */
#define NF_DRAIN_NS (2 * NF_SEC)

enum nf_send { NF_SEND_WRITE, NF_SEND_URING };
enum nf_recv { NF_RECV_EPOLL, NF_RECV_URING };

#define NF_RBUFS 16384 /* provided receive buffers (a power of two) */
#define NF_RBUF_LEN 2048
#define NF_RCQ 65536 /* completion queue of the receive ring */

struct nf_opts {
    unsigned n, b, h, duration, warmup;
    unsigned every; /* seconds between a connection's heartbeats */
    enum nf_send send;
    enum nf_recv recv;
};

/* What one side measured; the client sends its own to the server whole. */
struct nf_result {
    double cpu_s, wall_s;  /* utime + stime and monotonic time over the window */
    uint64_t win_bytes;    /* bytes of the messages sent in the window */
    uint64_t win_reads;    /* reads that ended one of those messages */
    uint64_t win_wakeups;  /* epoll_wait returns with events, in the window */
    uint64_t total_bytes;  /* bytes read over the whole run */
    uint64_t complete;     /* connections that got every byte sent to them */
    uint64_t write_errors; /* short or failed writes (sends), whole run */
    uint64_t eof;          /* connections closed by the peer before complete */
    int failed;            /* a setup or loop error (reported on stderr) */
};

/* One side: N sockets, its epoll set and counters. */
struct nf_side {
    const struct nf_opts *o;
    bool server;
    int ep;
    int *fd;
    uint64_t *got; /* bytes read per connection */
    uint64_t t0;   /* t = 0, CLOCK_MONOTONIC ns */
    uint64_t bytes, reads, wakeups, write_errors, eof;
    /* What this side reads: messages of msg_size bytes; those with index
     * [win_lo, win_hi) on a connection were sent in the window. */
    uint64_t msg_size, win_lo, win_hi;
    uint64_t win_msgs, win_msg_reads; /* the window's messages, and the reads ending them */
    struct io_uring ring;
    bool ring_up;
    unsigned ring_entries;
    struct io_uring rring; /* --recv uring: the server's receive ring */
    bool rring_up;
    struct io_uring_buf_ring *br;
    char *rbufs;
    const char *out; /* what this side writes: a message or a heartbeat */
    size_t out_len;
};

static uint64_t nf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NF_SEC + (uint64_t)ts.tv_nsec;
}

static double nf_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static const char *nf_who(const struct nf_side *s)
{
    return s->server ? "server" : "client";
}

/* Full write or read of a small control record over a pipe; 0 or -1. */
static int nf_pipe_write(int fd, const void *p, size_t len)
{
    const char *c = p;
    while (len) {
        ssize_t r = write(fd, c, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        len -= (size_t)r;
    }
    return 0;
}

/* Reads len bytes within timeout_ms; 0 or -1. */
static int nf_pipe_read(int fd, void *p, size_t len, int timeout_ms)
{
    char *c = p;
    uint64_t end = nf_now() + (uint64_t)timeout_ms * 1000000u;
    while (len) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        uint64_t now = nf_now();
        if (now >= end || poll(&pfd, 1, (int)((end - now) / 1000000u) + 1) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (!(pfd.revents & (POLLIN | POLLHUP)))
            continue;
        ssize_t r = read(fd, c, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        len -= (size_t)r;
    }
    return 0;
}

static int nf_sock_setup(int fd)
{
    int one = 1;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
        return -errno;
    return 0;
}

/* The server's side of the connect: accepts n connections on lfd, unless
 * the client's end of the pipe cfd closes first (it failed). */
static int nf_accept_all(struct nf_side *s, int lfd, int cfd)
{
    uint64_t end = nf_now() + NF_CONNECT_S * NF_SEC;
    unsigned have = 0;

    while (have < s->o->n) {
        struct pollfd pfd[2] = {{.fd = lfd, .events = POLLIN}, {.fd = cfd}};
        if (nf_now() >= end) {
            fprintf(stderr, "iof_netfloor: server: %u of %u connections in %d s\n", have, s->o->n,
                    NF_CONNECT_S);
            return -ETIMEDOUT;
        }
        if (poll(pfd, 2, 100) <= 0)
            continue;
        if (pfd[1].revents & (POLLHUP | POLLERR))
            return -ECHILD;
        for (;;) {
            int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
                    break;
                fprintf(stderr, "iof_netfloor: server: accept: %s\n", strerror(errno));
                return -errno;
            }
            if (have == s->o->n || nf_sock_setup(fd) < 0) {
                close(fd);
                fprintf(stderr, "iof_netfloor: server: unexpected or unusable connection\n");
                return -EPROTO;
            }
            s->fd[have++] = fd;
            if (have == s->o->n)
                break;
        }
    }
    return 0;
}

/* The client's side: n blocking connects to port, then non-blocking. */
static int nf_connect_all(struct nf_side *s, uint16_t port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    for (unsigned i = 0; i < s->o->n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            nf_sock_setup(fd) < 0) {
            fprintf(stderr, "iof_netfloor: client: connection %u: %s\n", i, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        s->fd[i] = fd;
    }
    return 0;
}

static int nf_epoll_setup(struct nf_side *s)
{
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    if (s->ep < 0)
        return -errno;
    for (unsigned i = 0; i < s->o->n; i++) {
        /* Level-triggered, like libuv's. */
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->fd[i], &ev) < 0)
            return -errno;
    }
    return 0;
}

/* Writes this side's record to connections [lo, hi): one write() each, or
 * one io_uring_enter per batch of up to ring_entries sends. */
static void nf_send_range(struct nf_side *s, unsigned lo, unsigned hi)
{
    if (!s->ring_up) {
        for (unsigned i = lo; i < hi; i++) {
            ssize_t r = write(s->fd[i], s->out, s->out_len);
            if (r != (ssize_t)s->out_len)
                s->write_errors++;
        }
        return;
    }
    while (lo < hi) {
        unsigned batch = 0;
        for (; lo < hi && batch < s->ring_entries; lo++, batch++) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
            io_uring_prep_send(sqe, s->fd[lo], s->out, s->out_len, MSG_DONTWAIT);
        }
        int r = io_uring_submit_and_wait(&s->ring, batch);
        if (r < 0) {
            s->write_errors += batch;
            fprintf(stderr, "iof_netfloor: %s: io_uring_submit: %s\n", nf_who(s), strerror(-r));
            continue;
        }
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&s->ring, head, cqe)
        {
            if (cqe->res != (int)s->out_len)
                s->write_errors++;
            seen++;
        }
        io_uring_cq_advance(&s->ring, seen);
        if (seen != batch)
            s->write_errors += batch > seen ? batch - seen : 0;
    }
}

/* One read() on connection i, as libuv reads a readable stream once per
 * event. */
/* r more bytes read on connection i: counts the messages they complete that
 * were sent in the window. */
static void nf_got(struct nf_side *s, unsigned i, uint64_t r)
{
    uint64_t done0 = s->msg_size ? s->got[i] / s->msg_size : 0;
    s->got[i] += r;
    s->bytes += r;
    if (!s->msg_size)
        return;
    uint64_t done1 = s->got[i] / s->msg_size;
    uint64_t a = done0 > s->win_lo ? done0 : s->win_lo, z = done1 < s->win_hi ? done1 : s->win_hi;
    if (z > a) {
        s->win_msgs += z - a;
        s->win_msg_reads++;
    }
}

static void nf_read_one(struct nf_side *s, unsigned i, char *buf, uint64_t expect)
{
    ssize_t r = read(s->fd[i], buf, NF_RBUF);
    s->reads++;
    if (r > 0) {
        nf_got(s, i, (uint64_t)r);
    } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        /* The peer is gone (it stops once it has all it was sent). */
        if (s->got[i] != expect)
            s->eof++;
        epoll_ctl(s->ep, EPOLL_CTL_DEL, s->fd[i], NULL);
    }
}

/* --recv uring: one multishot receive on connection i, its buffers from
 * group 0; user_data is i. Returns 0 or -errno (no SQE left after a submit). */
static int nf_arm_recv(struct nf_side *s, unsigned i)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&s->rring);
    if (!sqe) {
        io_uring_submit(&s->rring);
        sqe = io_uring_get_sqe(&s->rring);
        if (!sqe)
            return -EBUSY;
    }
    io_uring_prep_recv_multishot(sqe, s->fd[i], NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    io_uring_sqe_set_data64(sqe, i);
    return 0;
}

static int nf_uring_recv_setup(struct nf_side *s)
{
    struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE, .cq_entries = NF_RCQ};
    struct io_uring_buf_reg reg = {.ring_entries = NF_RBUFS, .bgid = 0};
    size_t ring_bytes = NF_RBUFS * sizeof(struct io_uring_buf);
    int r = io_uring_queue_init_params(4096, &s->rring, &p);

    if (r < 0) {
        fprintf(stderr, "iof_netfloor: receive ring: %s\n", strerror(-r));
        return r;
    }
    s->rring_up = true;
    if (posix_memalign((void **)&s->br, 4096, ring_bytes) ||
        posix_memalign((void **)&s->rbufs, 4096, (size_t)NF_RBUFS * NF_RBUF_LEN))
        return -ENOMEM;
    reg.ring_addr = (uint64_t)(uintptr_t)s->br;
    io_uring_buf_ring_init(s->br);
    if ((r = io_uring_register_buf_ring(&s->rring, &reg, 0)) < 0) {
        fprintf(stderr, "iof_netfloor: provided buffers: %s\n", strerror(-r));
        return r;
    }
    for (unsigned b = 0; b < NF_RBUFS; b++)
        io_uring_buf_ring_add(s->br, s->rbufs + (size_t)b * NF_RBUF_LEN, NF_RBUF_LEN,
                              (unsigned short)b, io_uring_buf_ring_mask(NF_RBUFS), (int)b);
    io_uring_buf_ring_advance(s->br, NF_RBUFS);
    for (unsigned i = 0; i < s->o->n; i++)
        if ((r = nf_arm_recv(s, i)) < 0)
            return r;
    r = io_uring_submit(&s->rring);
    return r < 0 ? r : 0;
}

/* --recv uring: waits up to timeout_ms for receive completions and takes
 * them all; returns how many, or -errno. */
static int nf_uring_wait(struct nf_side *s, int timeout_ms, uint64_t expect)
{
    struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
                                   .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0, bufs = 0;
    int r = io_uring_submit_and_wait_timeout(&s->rring, &cqe, 1, &ts, NULL);

    if (r < 0 && r != -ETIME && r != -EINTR)
        return r;
    io_uring_for_each_cqe(&s->rring, head, cqe)
    {
        unsigned i = (unsigned)cqe->user_data;
        seen++;
        s->reads++;
        if (cqe->res > 0)
            nf_got(s, i, (uint64_t)cqe->res);
        if (cqe->flags & IORING_CQE_F_BUFFER) {
            unsigned short bid = (unsigned short)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
            io_uring_buf_ring_add(s->br, s->rbufs + (size_t)bid * NF_RBUF_LEN, NF_RBUF_LEN, bid,
                                  io_uring_buf_ring_mask(NF_RBUFS), (int)bufs++);
        }
        if (!(cqe->flags & IORING_CQE_F_MORE)) {
            if (cqe->res > 0 || cqe->res == -ENOBUFS)
                nf_arm_recv(s, i); /* re-armed: the next submit sends it */
            else if (s->got[i] != expect)
                s->eof++; /* the peer closed early, or an error */
        }
    }
    io_uring_buf_ring_advance(s->br, (int)bufs);
    io_uring_cq_advance(&s->rring, seen);
    return (int)seen;
}

/* The loop of one side from t0 to the end of the drain; fills res. */
static void nf_run(struct nf_side *s, struct nf_result *res)
{
    const struct nf_opts *o = s->o;
    uint64_t secs = (uint64_t)o->warmup + o->duration;
    uint64_t w0 = s->t0 + o->warmup * NF_SEC, w1 = s->t0 + secs * NF_SEC;
    /* What this side reads per connection over the run. */
    uint64_t expect = s->server ? secs * o->b : secs / o->every * o->h;
    uint64_t expect_all = expect * o->n;
    /* The server reads one message a second per connection, the client one
     * heartbeat every P s. */
    s->msg_size = s->server ? o->b : o->h;
    s->win_lo = s->server ? o->warmup : o->warmup / o->every;
    s->win_hi = s->server ? secs : secs / o->every;
    /* What it sends: the client at k + 0.5 s, the server in 32 slots per
     * heartbeat period. */
    uint64_t nsend = s->out_len ? (s->server ? secs / o->every * NF_SLOTS : secs) : 0, k = 0;
    uint64_t period = s->server ? o->every * NF_SEC / NF_SLOTS : NF_SEC;
    uint64_t win_wake0 = 0, cpu_t0 = 0;
    double cpu0 = 0;
    bool in_window = false, window_done = false;
    static char buf[NF_RBUF];
    struct epoll_event ev[NF_EVENTS];

    for (;;) {
        uint64_t now = nf_now();
        if (!in_window && !window_done && now >= w0) {
            in_window = true;
            cpu0 = nf_cpu_s();
            cpu_t0 = nf_now();
            win_wake0 = s->wakeups;
        }
        while (k < nsend && now >= s->t0 + k * period + period / 2) {
            if (s->server) {
                unsigned slot = (unsigned)(k % NF_SLOTS);
                nf_send_range(s, (unsigned)((uint64_t)slot * o->n / NF_SLOTS),
                              (unsigned)((uint64_t)(slot + 1) * o->n / NF_SLOTS));
            } else {
                nf_send_range(s, 0, o->n);
            }
            k++;
            now = nf_now();
        }
        if (in_window && now >= w1) {
            in_window = false;
            window_done = true;
            res->cpu_s = nf_cpu_s() - cpu0;
            res->wall_s = (double)(nf_now() - cpu_t0) / 1e9;
            res->win_wakeups = s->wakeups - win_wake0;
        }
        if (window_done && (s->bytes >= expect_all || now >= w1 + NF_DRAIN_NS))
            break;
        uint64_t next = w1 + NF_DRAIN_NS;
        if (!in_window && !window_done)
            next = w0;
        else if (!window_done)
            next = w1;
        if (k < nsend && s->t0 + k * period + period / 2 < next)
            next = s->t0 + k * period + period / 2;
        now = nf_now();
        /* epoll_wait's milliseconds, rounded up as libuv's timers are. */
        int timeout = next > now ? (int)((next - now + 999999) / 1000000) : 0;
        int n;
        if (s->rring_up) {
            n = nf_uring_wait(s, timeout, expect);
            if (n < 0) {
                fprintf(stderr, "iof_netfloor: %s: receive ring: %s\n", nf_who(s), strerror(-n));
                res->failed = 1;
                break;
            }
            if (n > 0)
                s->wakeups++;
            continue;
        }
        n = epoll_wait(s->ep, ev, NF_EVENTS, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "iof_netfloor: %s: epoll_wait: %s\n", nf_who(s), strerror(errno));
            res->failed = 1;
            break;
        }
        if (n > 0)
            s->wakeups++;
        for (int i = 0; i < n; i++)
            nf_read_one(s, ev[i].data.u32, buf, expect);
    }
    res->win_bytes = s->win_msgs * s->msg_size;
    res->win_reads = s->win_msg_reads;
    res->total_bytes = s->bytes;
    for (unsigned i = 0; i < o->n; i++)
        res->complete += s->got[i] == expect;
    res->write_errors = s->write_errors;
    res->eof = s->eof;
}

static int nf_side_init(struct nf_side *s, const struct nf_opts *o, bool server)
{
    static char msg[NF_MAX_BYTES];

    memset(msg, 'r', sizeof(msg));
    *s = (struct nf_side){.o = o, .server = server, .ep = -1, .out = msg};
    s->out_len = server ? o->h : o->b;
    s->fd = malloc(o->n * sizeof(*s->fd));
    s->got = calloc(o->n, sizeof(*s->got));
    if (!s->fd || !s->got)
        return -ENOMEM;
    for (unsigned i = 0; i < o->n; i++)
        s->fd[i] = -1;
    if (server && o->send == NF_SEND_URING) {
        unsigned per_slot = (o->n + NF_SLOTS - 1) / NF_SLOTS, e = 8;
        while (e < per_slot && e < 4096)
            e <<= 1;
        int r = io_uring_queue_init(e, &s->ring, 0);
        if (r < 0) {
            fprintf(stderr, "iof_netfloor: io_uring_queue_init: %s\n", strerror(-r));
            return r;
        }
        s->ring_up = true;
        s->ring_entries = e;
    }
    return 0;
}

static void nf_side_free(struct nf_side *s)
{
    if (s->fd)
        for (unsigned i = 0; i < s->o->n; i++)
            if (s->fd[i] >= 0)
                close(s->fd[i]);
    if (s->ep >= 0)
        close(s->ep);
    if (s->ring_up)
        io_uring_queue_exit(&s->ring);
    if (s->rring_up)
        io_uring_queue_exit(&s->rring);
    free(s->br);
    free(s->rbufs);
    free(s->fd);
    free(s->got);
}

/* The child: connects, waits for t0, runs, sends its result on wfd. */
static int nf_client(const struct nf_opts *o, uint16_t port, int rfd, int wfd)
{
    struct nf_side s;
    struct nf_result res = {0};
    char ready = 'r';

    /* On a setup failure it writes nothing: the server sees the pipe close. */
    if (nf_side_init(&s, o, false) < 0 || nf_connect_all(&s, port) < 0 || nf_epoll_setup(&s) < 0 ||
        nf_pipe_write(wfd, &ready, 1) < 0 ||
        nf_pipe_read(rfd, &s.t0, sizeof(s.t0), NF_CONNECT_S * 1000 + 5000) < 0) {
        fprintf(stderr, "iof_netfloor: client: setup failed\n");
        nf_side_free(&s);
        return 1;
    }
    nf_run(&s, &res);
    nf_pipe_write(wfd, &res, sizeof(res));
    /* Close only once the server is done with its window: the EOFs it would
     * read otherwise are no part of what it measures. */
    nf_pipe_read(rfd, &ready, 1, 10000);
    nf_side_free(&s);
    return res.failed ? 1 : 0;
}

static void nf_usage(FILE *f)
{
    fputs("usage: iof_netfloor [--agents N] [--bytes B] [--heartbeat H] [--heartbeat-every P]\n"
          "                    [--duration S] [--warmup S] [--send write|uring]\n"
          "                    [--recv epoll|uring]\n"
          "\n"
          "  --agents     connections, one per simulated agent (default 10000)\n"
          "  --bytes      bytes each agent writes per second (default 917; 0: none)\n"
          "  --heartbeat  bytes the server writes per agent per heartbeat period, in 32\n"
          "               slots (default 24; 0: none)\n"
          "  --heartbeat-every  the heartbeat period in seconds (default 1; a protocol\n"
          "               1.5 manager offers 3); --duration and --warmup are multiples\n"
          "  --duration   measured seconds (default 20)\n"
          "  --warmup     seconds before the measured window (default 3)\n"
          "  --send       the server's heartbeat writes: write (one write() each, the\n"
          "               default) or uring (one IORING_OP_SEND batch per slot)\n"
          "  --recv       the server's reads: epoll (level-triggered epoll_wait and\n"
          "               one read() per readable socket, as libuv; the default) or\n"
          "               uring (a multishot receive per connection, provided buffers)\n",
          f);
}

static bool nf_parse_uint(const char *s, unsigned max, unsigned *out)
{
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end || errno || v > max)
        return false;
    *out = (unsigned)v;
    return true;
}

static int nf_parse(int argc, char **argv, struct nf_opts *o)
{
    /* Every option takes a value: a pair at a time. */
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            nf_usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--agents")) {
            ok = ok && nf_parse_uint(v, NF_MAX_AGENTS, &o->n) && o->n > 0;
        } else if (!strcmp(a, "--bytes")) {
            ok = ok && nf_parse_uint(v, NF_MAX_BYTES, &o->b);
        } else if (!strcmp(a, "--heartbeat")) {
            ok = ok && nf_parse_uint(v, NF_MAX_BYTES, &o->h);
        } else if (!strcmp(a, "--heartbeat-every")) {
            ok = ok && nf_parse_uint(v, 60, &o->every) && o->every > 0;
        } else if (!strcmp(a, "--duration")) {
            ok = ok && nf_parse_uint(v, 3600, &o->duration) && o->duration > 0;
        } else if (!strcmp(a, "--warmup")) {
            ok = ok && nf_parse_uint(v, 3600, &o->warmup);
        } else if (!strcmp(a, "--send")) {
            ok = ok && (!strcmp(v, "write") || !strcmp(v, "uring"));
            if (ok)
                o->send = !strcmp(v, "uring") ? NF_SEND_URING : NF_SEND_WRITE;
        } else if (!strcmp(a, "--recv")) {
            ok = ok && (!strcmp(v, "epoll") || !strcmp(v, "uring"));
            if (ok)
                o->recv = !strcmp(v, "uring") ? NF_RECV_URING : NF_RECV_EPOLL;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "iof_netfloor: unknown, incomplete or invalid option '%s'\n", a);
            nf_usage(stderr);
            return -EINVAL;
        }
    }
    if (o->duration % o->every || o->warmup % o->every) {
        fprintf(stderr,
                "iof_netfloor: --duration %u and --warmup %u must be multiples of "
                "--heartbeat-every %u (whole heartbeat periods in the window)\n",
                o->duration, o->warmup, o->every);
        return -EINVAL;
    }
    return 0;
}

static int nf_listen(uint16_t *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 65535) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        fprintf(stderr, "iof_netfloor: listen on 127.0.0.1: %s\n", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static const char *nf_send_name(enum nf_send m)
{
    return m == NF_SEND_URING ? "uring" : "write";
}

static int nf_report(const struct nf_opts *o, const struct nf_result *sr,
                     const struct nf_result *cr)
{
    uint64_t want_msgs = o->b ? (uint64_t)o->n * o->duration : 0;
    uint64_t want_hb = o->h ? (uint64_t)o->n * (o->duration / o->every) : 0;
    uint64_t msgs = o->b ? sr->win_bytes / o->b : 0, hb = o->h ? cr->win_bytes / o->h : 0;
    bool exact = sr->win_bytes == want_msgs * o->b && cr->win_bytes == want_hb * o->h;
    bool complete = sr->complete == o->n && cr->complete == o->n;
    bool ok =
        !sr->failed && !cr->failed && exact && complete && !sr->write_errors && !cr->write_errors;
    double spct = sr->wall_s > 0 ? 100 * sr->cpu_s / sr->wall_s : 0;
    double cpct = cr->wall_s > 0 ? 100 * cr->cpu_s / cr->wall_s : 0;
    /* CPU per agent per second: the window's CPU over N agents and its seconds. */
    double us = sr->wall_s > 0 ? 1e6 * sr->cpu_s / sr->wall_s / o->n : 0;

    printf("netfloor n=%u b=%u h=%u every=%u send=%s recv=%s seconds=%u server_cpu_pct=%.2f "
           "client_cpu_pct=%.2f server_us_per_agent_s=%.3f msgs=%" PRIu64 " msgs_expected=%" PRIu64
           " hb=%" PRIu64 " hb_expected=%" PRIu64 " server_bytes=%" PRIu64 " server_reads=%" PRIu64
           " server_wakeups=%" PRIu64 " client_reads=%" PRIu64 " write_errors=%" PRIu64
           " complete=%d ok=%d\n",
           o->n, o->b, o->h, o->every, nf_send_name(o->send), o->recv ? "uring" : "epoll",
           o->duration, spct, cpct, us, msgs, want_msgs, hb, want_hb, sr->win_bytes, sr->win_reads,
           sr->win_wakeups, cr->win_reads, sr->write_errors + cr->write_errors, complete, ok);
    printf("%u agents, %u-byte messages, %u-byte heartbeats every %u s (%s), %u s: server %.2f %% "
           "of a core (%.2f us per agent per second), client %.2f %%; %" PRIu64 "/%" PRIu64
           " messages, %" PRIu64 "/%" PRIu64 " heartbeats%s\n",
           o->n, o->b, o->h, o->every, nf_send_name(o->send), o->duration, spct, us, cpct, msgs,
           want_msgs, hb, want_hb, ok ? "" : " - INCOMPLETE OR FAILED");
    if (!complete || sr->eof || cr->eof)
        fprintf(stderr,
                "iof_netfloor: connections complete: server %" PRIu64 "/%u, client %" PRIu64
                "/%u; closed early: %" PRIu64 "/%" PRIu64 "\n",
                sr->complete, o->n, cr->complete, o->n, sr->eof, cr->eof);
    fflush(stdout);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct nf_opts o = {.n = 10000, .b = 917, .h = 24, .duration = 20, .warmup = 3, .every = 1};
    struct nf_side s;
    struct nf_result sr = {0}, cr = {0};
    int c2p[2], p2c[2], lfd, status, rc;
    uint16_t port;
    pid_t pid;
    char ready;

    if (nf_parse(argc, argv, &o) < 0)
        return 2;
    if (bench_raise_nofile("iof_netfloor", o.n) < 0)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    /* A bound on everything, in both processes (the default action ends them). */
    alarm(2 * NF_CONNECT_S + o.warmup + o.duration + 30);
    if ((lfd = nf_listen(&port)) < 0 || pipe2(c2p, O_CLOEXEC) < 0 || pipe2(p2c, O_CLOEXEC) < 0)
        return 2;
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "iof_netfloor: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        close(lfd);
        close(c2p[0]);
        close(p2c[1]);
        _exit(nf_client(&o, port, p2c[0], c2p[1]));
    }
    close(c2p[1]);
    close(p2c[0]);
    rc = nf_side_init(&s, &o, true);
    if (rc == 0)
        rc = nf_accept_all(&s, lfd, c2p[0]);
    close(lfd);
    if (rc == 0)
        rc = o.recv == NF_RECV_URING ? nf_uring_recv_setup(&s) : nf_epoll_setup(&s);
    if (rc == 0 && nf_pipe_read(c2p[0], &ready, 1, NF_CONNECT_S * 1000) < 0)
        rc = -EPROTO;
    if (rc == 0) {
        /* t = 0 a little ahead, so the client has it before it comes. */
        s.t0 = nf_now() + NF_SEC / 5;
        if (nf_pipe_write(p2c[1], &s.t0, sizeof(s.t0)) < 0)
            rc = -EPIPE;
    }
    if (rc == 0) {
        nf_run(&s, &sr);
        nf_pipe_write(p2c[1], &ready, 1); /* the client may close now */
    }
    if (rc == 0 && nf_pipe_read(c2p[0], &cr, sizeof(cr), 10000) < 0) {
        fprintf(stderr, "iof_netfloor: no result from the client\n");
        rc = -EPROTO;
    }
    nf_side_free(&s);
    if (rc < 0)
        kill(pid, SIGKILL); /* our own child; it may already have exited */
    if (waitpid(pid, &status, 0) == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        cr.failed = 1;
    if (rc < 0) {
        fprintf(stderr, "iof_netfloor: setup failed: %s\n", strerror(-rc));
        return 2;
    }
    return nf_report(&o, &sr, &cr);
}
