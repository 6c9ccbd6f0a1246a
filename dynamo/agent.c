/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/agent.c - the agent daemon: sessions with managers, the plan as
 * assigned to this node, and the tests it runs. Everything that can block
 * (writing test files, starting a test's threads and buffers, joining and
 * freeing a stopped test) runs on libuv worker threads, so the loop keeps
 * heartbeats and new connections flowing while a device hangs. */
#include "dynamo/agent.h"
#include "dynamo/budget.h"
#include "dynamo/clean.h"
#include "dynamo/cpustat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <uv.h>

#include "common/backoff.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "common/tls.h"
#include "dynamo/engine.h"
#include "dynamo/inventory.h"
#include "dynamo/run.h"
#include "dynamo/target.h"
#include "dynamo/verify.h"
#include "proto/frame.h"
#include "proto/link.h"
#include "proto/name.h"
#include "proto/plan.h"
#include "proto/version.h"

#define AGENT_HELLO_DEADLINE_MS 10000
/* How long a new session's hello waits for a fresh inventory. */
#define AGENT_INVENTORY_WAIT_MS 1000
/* How often a running test's published intervals are collected and sent. */
#define AGENT_POLL_MS 20
#define AGENT_VERIFY_PROGRESS_MS 500
/* Connections allowed to wait for their hello at once; beyond, the oldest
 * is dropped, so a flood can neither exhaust memory nor lock the manager out. */
#define AGENT_MAX_PENDING 64
/* A manager arriving while the previous session's test or preparation is
 * still stopping waits this long for it before being told the agent is busy
 * (a teardown normally takes milliseconds; one waiting on a hung device can
 * take the 30 s drain). */
#define AGENT_BUSY_GRACE_NS (1000 * IOF_NS_PER_MS)
#define AGENT_BUSY_RETRY_MS 20
/* ... and from one source address (TCP), so one flooding host cannot push
 * out everybody else's fresh connections. */
#define AGENT_MAX_PENDING_PER_SOURCE 16
/* Descriptors kept out of reach of unauthenticated peers: the manager's
 * session, its test targets, the loop's own. */
#define AGENT_FD_RESERVE 128
/* The longest heartbeat period the agent accepts from a manager (or its own
 * --heartbeat-ms when larger): a manager asking for more gets this, so the
 * dead-man rule stops I/O within PROTO_HEARTBEAT_MISSES of them. */
#define AGENT_HEARTBEAT_MAX_MS 5000
/* Clock probes a session may send: a bucket of AGENT_PROBE_BURST refilled
 * at AGENT_PROBE_RATE per second; probes beyond are not answered. A manager
 * sends 8 per test. */
#define AGENT_PROBE_BURST 64
#define AGENT_PROBE_RATE 64
/* TLS handshakes that time out (slow or idle connections: a scan, a flood)
 * are logged at most one line per this period: the first at once, the rest
 * counted and summed up in one line at the end of the period. */
#define AGENT_HS_TIMEOUT_LOG_MS 10000

struct agent;

struct session {
    struct agent *a;
    struct session *prev, *next; /* the agent's sessions, oldest first */
    bool evicted;                /* dropped to make room for newer connections */
    char src[64];                /* the peer's address (TCP), for the per-source cap */
    double probe_tokens;         /* clock probes it may still send now */
    uint64_t probe_refill_ns;    /* when probe_tokens was last refilled */
    uint64_t probes_dropped, probe_log_ns;
    struct proto_link *link;
    bool welcomed;
    bool hello_wait; /* our hello waits for a fresh inventory */
    char manager[PROTO_NAME_MAX + 1];
    /* The plan as assigned to this node. */
    bool have_plan;
    bool prepared; /* this plan's prepare succeeded: tests may start */
    struct iof_plan plan;
    struct iof_test *tests;
    size_t ntests;
    size_t *groups; /* plan group indices that run on this node */
    size_t ngroups;
    struct iof_worker_cfg *gcfg;   /* scratch: the groups as one test runs them */
    const struct iof_spec **gspec; /* scratch: the spec each runs, NULL = idle */
    double *rates;                 /* the current test's start.rates (a rate cycle), or NULL */
    /* Preparation, on a libuv worker thread. */
    uv_work_t prep_work;
    uv_async_t prep_async;
    bool preparing;
    atomic_bool prep_cancel;
    int prep_err;
    struct iof_diag prep_diag;
    pthread_mutex_t prep_lock;
    char prep_path[IOF_PATH_MAX];
    uint64_t prep_done, prep_total;
    bool prep_dirty;
    /* The test files this session's preparations created (filled on the
     * preparation thread, read on the loop once it is done), removed when
     * the session ends if its prepare asked for cleanup (plan run.cleanup). */
    bool cleanup;
    struct dyn_created *created;
    size_t ncreated;
    /* Where the targets of the last preparation live (prepared.targets),
     * with their strings; filled on the preparation thread. */
    struct proto_target_place *places;
    struct place_str *place_str;
    size_t nplaces;
    /* A test being started, on a libuv worker thread (dyn_test_start opens
     * targets, allocates buffers and creates threads: it may block). */
    uv_work_t start_work;
    bool starting;
    atomic_bool start_cancel; /* the session ended: give up waiting */
    struct dyn_test_params start_p;
    struct dyn_test *start_dt;
    int start_err;
    struct iof_diag start_diag;
    bool setup_only; /* the work answers a setup: set up, no start time yet */
    /* A test set up by a setup (protocol 1.4), waiting for its start. */
    struct dyn_test *ready_dt;
    uint32_t ready_test;
    /* A hello held while the previous session stops (AGENT_BUSY_GRACE_NS). */
    uint64_t hello_wait_until;
    uint32_t hello_heartbeat_ms;
    unsigned hello_minor; /* of the held hello: the manager's protocol minor */
    unsigned mgr_minor;   /* the welcomed manager's protocol minor */
    /* The running test. */
    struct dyn_test *dt;
    uint32_t test;
    uint64_t next_interval;
    bool stop_requested;
    uint64_t stop_ns;  /* when the manager's stop arrived (0: none): a cut window's end */
    bool ended_early;  /* every worker reached its io_limit: stop_ns is when the last did */
    uint64_t vprog_ns; /* when read-back progress (verify_mode "after") was last sent */
    uint64_t measure_start, end;
    struct iof_stats *zeros; /* empty stats, one per target of the widest worker */
    struct dyn_cpu_sample cpu_start, cpu_last; /* at the measure start, at the last interval */
    uv_timer_t poll;
    unsigned open_handles;
    bool gone; /* the link is closed; free once the handles and work are done */
};

struct agent {
    const struct dyn_agent_opts *o;
    uv_loop_t *loop;
    char name[PROTO_NAME_MAX + 1];
    char host[PROTO_NAME_MAX + 1]; /* this machine's hostname */
    char mhost[256];               /* the manager to dial */
    uint16_t port;
    struct iof_listener *listener;
    struct session *active;
    struct session *sessions, *last; /* every open connection's session, oldest first */
    unsigned pending;                /* sessions still waiting for their hello */
    /* Sessions not freed yet, closed ones included: a closed session still
     * removes its test files (session_cleanup) when its handles are closed,
     * so the signal handlers stay until the last one is freed. */
    unsigned allocated;
    bool handles_closed;
    unsigned draining; /* ended sessions whose preparation or start thread is still stopping */
    unsigned reaping;  /* stopped tests being joined and freed on a worker thread */
    atomic_uint reaping_live; /* the same, as the worker threads see it */
    uv_timer_t reconnect;
    struct iof_backoff backoff; /* redials to the manager (common/backoff.h) */
    uv_signal_t sigint, sigterm;
    bool stopping;
    bool fd_mode;              /* the manager's socketpair (--manager-fd): one session, then exit */
    struct iof_tls_ctx *tls;   /* NULL: a unix socket, or plain TCP with --insecure */
    char **allow_real;         /* canonical --allow paths (the inventory) */
    struct dyn_inv_cache *inv; /* what the hello tells of them and of the workdir */
    uv_async_t inv_async;      /* a refresh of it finished */
    uv_timer_t inv_timer;      /* hellos stop waiting for a refresh */
    /* Handshake timeouts not logged one by one (AGENT_HS_TIMEOUT_LOG_MS). */
    uv_timer_t hs_log_timer;  /* ends the period; sums up the quiet ones */
    uint64_t hs_log_until_ns; /* timeouts before this are counted, not logged */
    uint64_t hs_quiet;        /* counted in this period */
    char hs_quiet_peer[96];   /* the last of them */
    size_t nallow;
    struct dyn_scope *scope;  /* what targets may be: workdir and --allow, as descriptors */
    struct dyn_budget budget; /* the agent's own limits, from its flags */
};

static void agent_dial(struct agent *a);

static void agent_on_reconnect(uv_timer_t *t)
{
    agent_dial(t->data);
}

/* --- targets the agent allows --------------------------------------------- */

/* 0 when cfg's path may be opened by this agent, else the reason: the
 * scope's rules (dynamo/scope.h). A test file may not exist yet; its
 * directory must. Checked again, on what is opened, when a test starts. */
static int agent_check_target(const struct agent *a, const struct iof_target_cfg *cfg,
                              struct iof_diag *d)
{
    const char *base;
    int fd;

    if (cfg->path[0] != '/') {
        fd = dyn_scope_open_parent(a->scope, cfg->path, &base, d);
        if (fd < 0)
            return fd;
        close(fd);
    }
    fd = dyn_scope_open(a->scope, cfg->path, O_PATH, NULL, d);
    if (fd == -ENOENT && cfg->path[0] != '/')
        return 0;
    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

/* --- sending ------------------------------------------------------------------ */

static void session_send_error(struct session *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void session_send_error(struct session *s, int code, const char *fmt, ...)
{
    char text[PROTO_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    IOF_WARN("%s", text);
    proto_link_send_error(s->link, code, "%s", text);
}

static void session_send_hello(struct session *s)
{
    struct agent *a = s->a;
    struct proto_msg m;
    struct utsname u;
    char kernel[PROTO_NAME_MAX + 1];
    void *hold = NULL;

    proto_msg_init_hello(&m, PROTO_ROLE_AGENT, a->name);
    if (a->o->heartbeat_ms)
        m.u.hello.heartbeat_ms = a->o->heartbeat_ms;
    uname(&u);
    m.u.hello.inventory.hostname = a->host;
    m.u.hello.inventory.cpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    m.u.hello.inventory.memory_bytes =
        (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    dyn_inventory_clean(kernel, sizeof(kernel), u.release);
    m.u.hello.inventory.kernel = kernel;
    {
        struct dyn_budget_limits lim;
        dyn_budget_limits(&a->budget, &lim);
        m.u.hello.inventory.has_budget = true;
        m.u.hello.inventory.budget = (struct proto_budget){.workers = lim.workers,
                                                           .buffer_mem = lim.buffer_mem,
                                                           .aio_events = lim.aio_events,
                                                           .fds = lim.fds};
    }
    if (a->inv)
        hold = dyn_inv_cache_fill(a->inv, &m.u.hello.inventory);
    s->hello_wait = false;
    int r = proto_link_send(s->link, &m);
    dyn_inv_cache_release(hold);
    /* Without its hello the manager would only see none came: say why, and
     * close (a closing connection is its close's to report). */
    if (r && r != -ENOTCONN) {
        session_send_error(s, r, "%s: cannot send its hello: %s (the agent's log says which field)",
                           s->a->name, iof_strerror(r));
        proto_link_close(s->link, r, "cannot send the hello");
    }
}

/* The hellos of new sessions wait (at most AGENT_INVENTORY_WAIT_MS) for a
 * fresh inventory, so `iofleet agents` sees a device mounted a moment ago;
 * the refresh runs on its own thread (dynamo/inventory.h). */
static void agent_send_waiting_hellos(struct agent *a)
{
    uv_timer_stop(&a->inv_timer);
    for (struct session *s = a->sessions; s; s = s->next)
        if (s->hello_wait)
            session_send_hello(s);
}

static void agent_on_inventory(uv_async_t *h)
{
    agent_send_waiting_hellos(h->data);
}

static void agent_on_inventory_timeout(uv_timer_t *t)
{
    agent_send_waiting_hellos(t->data);
}

/* Called on the refresh thread, with the cache's lock held. */
static void agent_inventory_done(void *arg)
{
    struct agent *a = arg;
    uv_async_send(&a->inv_async);
}

static void session_hello_soon(struct session *s)
{
    struct agent *a = s->a;

    if (!a->inv || a->handles_closed || !dyn_inv_cache_refresh(a->inv, agent_inventory_done, a)) {
        session_send_hello(s);
        return;
    }
    s->hello_wait = true;
    if (!uv_is_active((uv_handle_t *)&a->inv_timer))
        uv_timer_start(&a->inv_timer, agent_on_inventory_timeout, AGENT_INVENTORY_WAIT_MS, 0);
}

/* --- running a test ------------------------------------------------------------ */

static void session_fill_workers(struct session *s, const struct dyn_test *dt,
                                 const struct iof_stats *(*get)(struct session *, size_t, void *),
                                 void *ctx, struct proto_stats *out)
{
    size_t nw = dyn_test_nworkers(dt);
    out->nworkers = nw;
    for (size_t w = 0; w < nw; w++) {
        out->workers[w].ntargets = dyn_test_ntargets(dt, w);
        out->workers[w].targets = (struct iof_stats *)get(s, w, ctx);
    }
}

/* Interval k of the test, to send: lost when a worker had to reuse its slot
 * (the agent fell behind), then every worker's counters are sent as zeros
 * and the message says so. */
struct interval_ctx {
    uint64_t k;
    bool lost;
};

static const struct iof_stats *get_interval(struct session *s, size_t w, void *ctx)
{
    const struct interval_ctx *ic = ctx;
    const struct iof_stats *st = NULL;

    if (!ic->lost && dyn_test_interval(s->dt, w, ic->k, &st) == 1)
        return st;
    /* Lost, or the worker ended early (it counted nothing more): zeros. */
    return s->zeros;
}

static const struct iof_stats *get_totals(struct session *s, size_t w, void *ctx)
{
    (void)ctx;
    return dyn_test_totals(s->dt, w);
}

/* End of interval k of the running test on the local clock. */
static uint64_t session_interval_end(const struct session *s, const struct dyn_test *dt, uint64_t k)
{
    uint64_t iv = s->plan.run.interval_ns;
    uint64_t e = k + 1 < dyn_test_nintervals(dt) ? s->measure_start + (k + 1) * iv : s->end;
    return e < s->end ? e : s->end;
}

/* --- tearing a test down, off the loop ------------------------------------ */

struct reap {
    uv_work_t work;
    struct agent *a;
    struct dyn_test *dt;
};

/* Gives freed memory back to the system (glibc's malloc_trim). Not under
 * AddressSanitizer: its allocator replaces malloc, and glibc's trim of an
 * arena that was never set up crashed (tls_resume under ASan). */
#if defined(__SANITIZE_ADDRESS__)
#define AGENT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AGENT_ASAN 1
#endif
#endif

static void agent_trim(void)
{
#ifndef AGENT_ASAN
    malloc_trim(0);
#endif
}

/* On a worker thread: waits for the workers (a drain may take up to 30 s,
 * io_destroy waits on the kernel) and frees the test. */
static void reap_work(uv_work_t *w)
{
    struct reap *r = w->data;

    dyn_test_join(r->dt, NULL);
    dyn_test_free(r->dt);
    /* A test's buffers and interval rings (hundreds of KiB per worker,
     * sized by the test's queue depth) are gone: give the memory back,
     * so a long campaign does not keep the largest test's footprint. */
    agent_trim();
    atomic_fetch_sub(&r->a->reaping_live, 1);
}

static void reap_after(uv_work_t *w, int status)
{
    struct reap *r = w->data;
    (void)status;
    r->a->reaping--;
    IOF_DEBUG("a stopped test's threads are joined and its memory freed");
    free(r);
}

/* Stops dt at once and hands it to a worker thread to join and free: the
 * loop never waits for I/O to drain. Takes dt. */
static void agent_reap_test(struct agent *a, struct dyn_test *dt)
{
    struct reap *r = calloc(1, sizeof(*r));

    dyn_test_stop(dt);
    if (r) {
        r->a = a;
        r->dt = dt;
        r->work.data = r;
        a->reaping++;
        atomic_fetch_add(&a->reaping_live, 1);
        if (uv_queue_work(a->loop, &r->work, reap_work, reap_after) == 0)
            return;
        a->reaping--;
        atomic_fetch_sub(&a->reaping_live, 1);
        free(r);
    }
    IOF_WARN("cannot hand a stopped test to a worker thread: joining it on the event loop");
    dyn_test_join(dt, NULL);
    dyn_test_free(dt);
}

static void session_abort_test(struct session *s);

/* Sends a stats or result message. A send that fails is never ignored: the
 * manager is told why and the test is stopped, as the manager cannot count
 * what it will not receive. A connection already closing is its close's to
 * handle: session_on_close, this loop turn or the next (uv_close), stops the
 * test and says the manager was lost. Returns whether the message went out. */
static bool session_send_stats(struct session *s, const struct proto_msg *m)
{
    int r = proto_link_send(s->link, m);
    if (!r)
        return true;
    if (r == -ENOTCONN)
        return false;
    session_send_error(s, r, "%s: test %u: cannot send its %s: %s", s->a->name, s->test + 1,
                       proto_msg_type_name(m->type), iof_strerror(r));
    if (m->type == PROTO_MSG_STATS)
        session_abort_test(s);
    return false;
}

/* The real length of interval k when a stop cut it short (0: not cut). */
static uint64_t session_cut_ns(const struct session *s, uint64_t k)
{
    uint64_t start = s->measure_start + k * s->plan.run.interval_ns;
    uint64_t end = start + s->plan.run.interval_ns;

    if (end > s->end)
        end = s->end;
    if (!s->stop_ns || s->stop_ns >= end)
        return 0;
    return s->stop_ns > start ? s->stop_ns - start : 1;
}

/* One verification mismatch as the manager shows it: where, what kind,
 * what was expected there and what the header found says. The path is
 * sanitised (control bytes as '?') so the line stays one line. */
static void agent_verify_line(const char *node, const struct dyn_test *dt,
                              const struct dyn_verify_report *v, char *buf, size_t cap)
{
    char path[128], gen[40], found[160];
    const char *p = dyn_test_target_cfg(dt, v->worker, v->target)->path;
    size_t i = 0;

    for (; p[i] && i + 1 < sizeof(path); i++)
        path[i] = (unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i];
    path[i] = '\0';
    if (v->e_generation)
        snprintf(gen, sizeof(gen), " generation %" PRIu64, v->e_generation);
    else
        gen[0] = '\0';
    if (!v->f_none)
        snprintf(found, sizeof(found),
                 "found offset %" PRIu64 " length %" PRIu32 " writer %016" PRIx64 "/w%" PRIu32
                 " generation %" PRIu64,
                 v->f_offset, v->f_length, v->f_node, v->f_worker, v->f_generation);
    else
        snprintf(found, sizeof(found), "found no verify header");
    snprintf(buf, cap,
             "node %s target '%s' offset %" PRIu64 ": %s (expected offset %" PRIu64 "%s; %s)", node,
             path, v->offset, dyn_verify_class_name((enum dyn_verify_class)v->cls), v->offset, gen,
             found);
}

/* Sends every interval all workers have published; then, once the test is
 * over, joins it and sends the result. */
/* While workers read back what a verify_mode "after" test wrote, the
 * manager hears of it every AGENT_VERIFY_PROGRESS_MS (first at once): it
 * waits for the result as long as these come. */
static void session_verify_progress(struct session *s, const struct dyn_test *dt)
{
    struct proto_msg m;
    uint64_t done, total, now = iof_now_ns();

    if (!dyn_test_verify_progress(dt, &done, &total))
        return;
    if (s->vprog_ns && now - s->vprog_ns < AGENT_VERIFY_PROGRESS_MS * IOF_NS_PER_MS)
        return;
    s->vprog_ns = now;
    proto_msg_init(&m, PROTO_MSG_PREPARE_PROGRESS);
    m.u.prepare_progress.path = dyn_test_target_cfg(dt, 0, 0)->path;
    m.u.prepare_progress.done = done;
    m.u.prepare_progress.total = total;
    m.u.prepare_progress.verify = true;
    proto_link_send(s->link, &m);
}

static void session_poll(uv_timer_t *t)
{
    struct session *s = t->data;
    struct dyn_test *dt = s->dt;
    size_t nw;
    struct proto_msg m;
    struct proto_worker_stats *ws;

    if (!dt)
        return;
    nw = dyn_test_nworkers(dt);
    ws = calloc(nw ? nw : 1, sizeof(*ws));
    if (!ws)
        return;
    if (!s->cpu_start.valid && iof_now_ns() >= s->measure_start) {
        dyn_cpu_sample(&s->cpu_start);
        s->cpu_last = s->cpu_start;
    }
    while (s->next_interval < dyn_test_nintervals(dt)) {
        size_t ready = 0, gone = 0;
        /* A node without workers in this test has nothing to wait for: its
         * (empty) intervals go out as the clock reaches their end, never
         * all at once. */
        if (nw == 0 && iof_now_ns() < session_interval_end(s, dt, s->next_interval))
            break;
        for (size_t w = 0; w < nw; w++) {
            const struct iof_stats *st;
            int r = dyn_test_interval(dt, w, s->next_interval, &st);
            if (r != 0)
                ready++;
            if (r == -ENOENT)
                gone++;
        }
        if (ready < nw || (gone == nw && nw))
            break;
        if (!s->stop_ns && nw) {
            /* Every worker ended on its io_limit: the window ends with the
             * last one, and this interval may be cut there. */
            uint64_t e = dyn_test_ended_ns(dt);
            if (e && e < s->end) {
                s->stop_ns = e;
                s->ended_early = true;
            }
        }
        proto_msg_init(&m, PROTO_MSG_STATS);
        m.u.stats.test = s->test;
        m.u.stats.interval = s->next_interval;
        {
            struct dyn_cpu_sample now;
            struct dyn_cpu_usage u;
            dyn_cpu_sample(&now);
            dyn_cpu_usage(&s->cpu_last, &now, &u);
            s->cpu_last = now;
            m.u.stats.cpu = (struct proto_cpu){.valid = now.valid && s->cpu_start.valid,
                                               .busy_pct = u.busy_pct,
                                               .user_pct = u.user_pct,
                                               .sys_pct = u.sys_pct,
                                               .agent_pct = u.agent_pct};
        }
        m.u.stats.workers = ws;
        {
            struct interval_ctx ic = {.k = s->next_interval};
            for (size_t w = 0; w < nw; w++) {
                const struct iof_stats *st;
                ic.lost |= dyn_test_interval(dt, w, s->next_interval, &st) == -EOVERFLOW;
            }
            m.u.stats.lost = ic.lost;
            m.u.stats.duration_ns = session_cut_ns(s, s->next_interval);
            session_fill_workers(s, dt, get_interval, &ic, &m.u.stats);
            if (!session_send_stats(s, &m)) {
                free(ws);
                return;
            }
        }
        for (size_t w = 0; w < nw; w++)
            dyn_test_interval_release(dt, w, s->next_interval);
        s->next_interval++;
    }
    if (nw && !dyn_test_finished(dt))
        session_verify_progress(s, dt);
    if (nw ? dyn_test_finished(dt) : s->stop_requested || iof_now_ns() >= s->end) {
        /* Every interval the workers reached has been sent above. */
        struct iof_diag d = {{0}};
        uint64_t first, last, now = iof_now_ns();
        int r = dyn_test_join(dt, &d);
        bool complete = s->next_interval >= dyn_test_nintervals(dt);

        dyn_test_start_spread(dt, &first, &last);
        proto_msg_init(&m, PROTO_MSG_RESULT);
        m.u.result.test = s->test;
        m.u.result.interrupted = !complete && !s->ended_early;
        /* Cut short: the window ends when the stop came (as its last
         * interval does), not when the workers were joined. */
        if (s->stop_ns && s->stop_ns < now)
            now = s->stop_ns;
        m.u.result.measured_ns = complete ? s->end - s->measure_start
                                 : now > s->measure_start
                                     ? (now < s->end ? now : s->end) - s->measure_start
                                     : 0;
        m.u.result.cpu_ns = dyn_test_cpu_ns(dt);
        m.u.result.started_first_ns = first;
        m.u.result.started_last_ns = last;
        m.u.result.error = r ? d.msg : NULL;
        {
            struct dyn_cpu_usage u;
            /* The window ends at the last interval's sample. */
            dyn_cpu_usage(&s->cpu_start, &s->cpu_last, &u);
            m.u.result.cpu = (struct proto_cpu){.valid = s->cpu_start.valid && s->cpu_last.valid &&
                                                         s->cpu_last.total > s->cpu_start.total,
                                                .busy_pct = u.busy_pct,
                                                .user_pct = u.user_pct,
                                                .sys_pct = u.sys_pct,
                                                .agent_pct = u.agent_pct};
        }
        m.u.result.workers = ws;
        session_fill_workers(s, dt, get_totals, NULL, &m.u.result);
        {
            const struct dyn_verify_report *vr;
            size_t nv = dyn_test_verify_reports(dt, &vr);
            char lines[DYN_VERIFY_REPORTS][PROTO_TEXT_MAX + 1];
            const char *vl[DYN_VERIFY_REPORTS];
            for (size_t i = 0; i < nv && i < PROTO_VERIFY_REPORTS_MAX; i++) {
                agent_verify_line(s->a->name, dt, &vr[i], lines[i], sizeof(lines[i]));
                IOF_WARN("test %u: %s", s->test + 1, lines[i]);
                vl[i] = lines[i];
            }
            m.u.result.verify_reports = vl;
            m.u.result.nverify_reports =
                nv < PROTO_VERIFY_REPORTS_MAX ? nv : PROTO_VERIFY_REPORTS_MAX;
            session_send_stats(s, &m);
        }
        s->dt = NULL;
        uv_timer_stop(&s->poll);
        agent_reap_test(s->a, dt);
        IOF_INFO("test %u done%s", s->test + 1, complete ? "" : " (stopped early)");
    }
    free(ws);
}

static void session_abort_test(struct session *s);
static void session_maybe_free(struct session *s);
static void agent_shutdown(struct agent *a);

/* What the groups this node runs in test t need, against the agent's budget
 * as the host stands now. */
static int session_check_budget(struct session *s, const struct iof_test *t, struct iof_diag *d)
{
    struct iof_budget_need need = {0};
    struct dyn_budget_limits lim;

    for (size_t g = 0; g < s->ngroups; g++) {
        s->gcfg[g] = iof_test_worker(&s->plan, t, s->groups[g]);
        s->gspec[g] = iof_test_spec(&s->plan, t, s->groups[g]);
    }
    iof_budget_need_add(&need, s->gspec, s->gcfg, s->ngroups);
    dyn_budget_limits(&s->a->budget, &lim);
    return dyn_budget_check(&need, &lim, &s->a->budget, d);
}

/* On a worker thread: waits until the previous test is freed (its targets
 * and AIO events are back), then opens targets, allocates buffers and
 * starts the worker threads. */
static void start_work(uv_work_t *w)
{
    struct session *s = w->data;

    while (atomic_load(&s->a->reaping_live) && !atomic_load(&s->start_cancel))
        iof_sleep_until(iof_now_ns() + 10 * IOF_NS_PER_MS);
    s->start_dt = NULL;
    if (atomic_load(&s->start_cancel)) {
        s->start_err = -ECANCELED;
        return;
    }
    s->start_err = s->setup_only ? dyn_test_setup(&s->start_p, &s->start_dt, &s->start_diag)
                                 : dyn_test_start(&s->start_p, &s->start_dt, &s->start_diag);
}

/* Hands a started test to the poll timer. */
static void session_run_test(struct session *s, struct dyn_test *dt)
{
    struct agent *a = s->a;
    size_t most = 1;

    for (size_t wk = 0; wk < dyn_test_nworkers(dt); wk++)
        if (dyn_test_ntargets(dt, wk) > most)
            most = dyn_test_ntargets(dt, wk);
    free(s->zeros);
    s->zeros = calloc(most, sizeof(*s->zeros));
    if (!s->zeros) {
        agent_reap_test(a, dt);
        session_send_error(s, -ENOMEM, "%s: test %u: out of memory", a->name, s->test + 1);
        return;
    }
    for (size_t i = 0; i < most; i++)
        iof_stats_reset(&s->zeros[i]);
    s->dt = dt;
    if (s->stop_requested) /* a stop arrived while the test was starting */
        dyn_test_stop(dt);
    uv_timer_start(&s->poll, session_poll, AGENT_POLL_MS, AGENT_POLL_MS);
}

/* Frees a test set up for a start that will not come. */
static void session_drop_ready(struct session *s)
{
    if (!s->ready_dt)
        return;
    agent_reap_test(s->a, s->ready_dt);
    s->ready_dt = NULL;
}

static void start_after(uv_work_t *w, int status)
{
    struct session *s = w->data;
    struct agent *a = s->a;
    struct dyn_test *dt = s->start_dt;

    s->starting = false;
    s->start_dt = NULL;
    if (s->gone || a->stopping) {
        if (dt)
            agent_reap_test(a, dt);
        if (s->gone) {
            a->draining--;
            session_maybe_free(s);
        }
        return;
    }
    if (status < 0 || s->start_err) {
        session_send_error(s, s->start_err ? s->start_err : status, "%s: test %u: %s", a->name,
                           s->test + 1, s->start_err ? s->start_diag.msg : uv_strerror(status));
        return;
    }
    if (s->setup_only) {
        struct proto_msg m;
        if (s->stop_requested || atomic_load(&s->start_cancel)) {
            agent_reap_test(a, dt);
            return;
        }
        s->ready_dt = dt;
        s->ready_test = s->test;
        proto_msg_init(&m, PROTO_MSG_READY);
        m.u.ready.test = s->test;
        proto_link_send(s->link, &m);
        return;
    }
    session_run_test(s, dt);
}

/* FNV-1a of the node name: the node's part of the identity of what it writes. */
static uint64_t agent_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *name; name++)
        h = (h ^ (uint8_t)*name) * 0x100000001b3ULL;
    return h;
}

/* The checks a test's setup or start passes before anything is opened or
 * allocated, and its parameters but the start time (in s->start_p). Sends
 * the error and returns false when one fails. */
static bool session_test_params(struct session *s, uint32_t test, const double *rates,
                                size_t nrates, const char *what)
{
    struct dyn_test_params *p = &s->start_p;
    struct iof_diag d = {{0}};
    struct iof_run_cfg run;
    const struct iof_test *t;
    int r;

    if (!s->have_plan) {
        session_send_error(s, IOF_EPROTO, "%s: %s before any plan", s->a->name, what);
        return false;
    }
    if (!s->prepared && !s->preparing && !s->dt) {
        session_send_error(s, IOF_EPROTO,
                           "%s: %s of test %u without a successful prepare of this plan",
                           s->a->name, what, test + 1);
        return false;
    }
    if (s->dt || s->starting || s->preparing) {
        session_send_error(s, IOF_EBUSY, "%s: %s of test %u while %s", s->a->name, what, test + 1,
                           s->preparing ? "preparing" : "a test is running");
        return false;
    }
    if (test >= s->ntests) {
        session_send_error(s, IOF_EPROTO, "%s: %s of test %u, the plan has %zu", s->a->name, what,
                           test + 1, s->ntests);
        return false;
    }
    t = &s->tests[test];
    /* The host may have changed since prepare: check again, still before
     * anything is opened or allocated. */
    r = session_check_budget(s, t, &d);
    if (r) {
        session_send_error(s, r, "%s: test %u: %s", s->a->name, test + 1, d.msg);
        return false;
    }
    free(s->rates);
    s->rates = NULL;
    if (nrates) {
        size_t nw = 0;
        for (size_t g = 0; g < s->ngroups; g++)
            nw += s->gcfg[g].count;
        if (nrates != nw) {
            session_send_error(s, IOF_EPROTO, "%s: test %u: %s gives %zu rates for %zu workers",
                               s->a->name, test + 1, what, nrates, nw);
            return false;
        }
        s->rates = malloc(nw * sizeof(*s->rates));
        if (!s->rates) {
            session_send_error(s, -ENOMEM, "%s: test %u: out of memory", s->a->name, test + 1);
            return false;
        }
        memcpy(s->rates, rates, nw * sizeof(*s->rates));
    }
    memset(p, 0, sizeof(*p));
    run = iof_test_run(&s->plan, t);
    p->spec = t->spec_index < s->plan.nspecs ? &s->plan.specs[t->spec_index] : NULL;
    p->groups = s->gcfg; /* filled by session_check_budget */
    p->worker_iops = s->rates;
    p->group_specs = s->gspec;
    p->ngroups = s->ngroups;
    p->scope = s->a->scope;
    p->ramp_ns = run.ramp_ns;
    p->duration_ns = run.duration_ns;
    p->interval_ns = run.interval_ns;
    p->seed = iof_wall_ns();
    p->node_id = agent_name_hash(s->a->name);
    if (getrandom(&p->run_nonce, sizeof(p->run_nonce), 0) != sizeof(p->run_nonce))
        p->run_nonce = p->seed ^ ((uint64_t)getpid() << 32);
    p->allow_destructive = s->a->o->allow_destructive;
    s->test = test;
    return true;
}

/* The start time of `start` on this node's clock, in s->start_p.start_ns,
 * and the window it opens; false (the error sent) for a start time too far
 * off. */
static bool session_test_arm(struct session *s, const struct proto_start *st)
{
    struct dyn_test_params *p = &s->start_p;
    struct iof_diag d = {{0}};
    uint64_t now = iof_now_ns();
    int r;

    r = dyn_budget_start_time(st->start_at_ns, st->offset_ns, p->ramp_ns, now, &p->start_ns, &d);
    if (r) {
        session_send_error(s, r, "%s: test %u: %s", s->a->name, st->test + 1, d.msg);
        return false;
    }
    if (p->start_ns < now)
        IOF_WARN("test %u: start time already passed by %.3f ms; starting now (in the ramp)",
                 st->test + 1, (double)(now - p->start_ns) / 1e6);
    if (s->ngroups == 0)
        IOF_INFO("test %u: no worker group selects node '%s': idle until the test ends, "
                 "reporting no I/O",
                 st->test + 1, s->a->name);
    s->next_interval = 0;
    memset(&s->cpu_start, 0, sizeof(s->cpu_start));
    memset(&s->cpu_last, 0, sizeof(s->cpu_last));
    s->stop_requested = false;
    s->stop_ns = 0;
    s->vprog_ns = 0;
    s->ended_early = false;
    s->measure_start = p->start_ns + p->ramp_ns;
    s->end = s->measure_start + p->duration_ns;
    return true;
}

/* Queues the set-up (and, for a start, the start) of the test in
 * s->start_p on a worker thread. */
static void session_queue_start(struct session *s, bool setup_only)
{
    int r;

    atomic_store(&s->start_cancel, false);
    s->start_work.data = s;
    s->setup_only = setup_only;
    s->starting = true;
    r = uv_queue_work(s->a->loop, &s->start_work, start_work, start_after);
    if (r < 0) {
        s->starting = false;
        session_send_error(s, r, "%s: test %u: cannot %s: %s", s->a->name, s->test + 1,
                           setup_only ? "set up" : "start", uv_strerror(r));
    }
}

/* setup (protocol 1.4): the test is set up now - targets opened, buffers
 * allocated and filled, engines opened - and `ready` sent, so that its
 * start time is not spent on it. */
static void session_setup_test(struct session *s, const struct proto_start *su)
{
    session_drop_ready(s);
    if (!session_test_params(s, su->test, su->rates, su->nrates, "setup"))
        return; /* a stop pending for a test still starting stays pending */
    s->stop_requested = false;
    session_queue_start(s, true);
}

static void session_start_test(struct session *s, const struct proto_start *st)
{
    if (s->ready_dt && s->ready_test == st->test && !s->dt && !s->starting) {
        /* Set up by its setup: only the start time is left. The setup's
         * rates hold (a start's are the same). */
        struct dyn_test *dt = s->ready_dt;
        struct iof_diag d = {{0}};
        int r;
        s->ready_dt = NULL;
        if (!session_test_arm(s, st)) {
            agent_reap_test(s->a, dt);
            return;
        }
        r = dyn_test_go(dt, s->start_p.start_ns, &d);
        if (r) {
            agent_reap_test(s->a, dt);
            session_send_error(s, r, "%s: test %u: %s", s->a->name, st->test + 1, d.msg);
            return;
        }
        session_run_test(s, dt);
        return;
    }
    /* A manager before 1.4 (no setup): set up now, inside the start's
     * lead; a worker that leaves the barrier late fails the test. */
    session_drop_ready(s);
    if (!session_test_params(s, st->test, st->rates, st->nrates, "start") ||
        !session_test_arm(s, st))
        return;
    session_queue_start(s, false);
}

/* Stops I/O at once: the dead-man rule and session teardown. The workers
 * are joined and freed on a worker thread; a test still starting is
 * stopped as soon as its start returns. */
static void session_abort_test(struct session *s)
{
    session_drop_ready(s);
    if (s->starting) {
        s->stop_requested = true;
        atomic_store(&s->start_cancel, true);
    }
    if (!s->dt)
        return;
    uv_timer_stop(&s->poll);
    agent_reap_test(s->a, s->dt);
    s->dt = NULL;
}

/* --- preparation ------------------------------------------------------------- */

/* On the preparation thread, after every chunk: reports progress every
 * 64 MiB and stops at once when the session is gone (dead-man rule). */
static int prep_progress(void *arg, const char *path, uint64_t done, uint64_t total)
{
    struct session *s = arg;
    if (atomic_load(&s->prep_cancel))
        return -ECANCELED;
    if (done % (64u << 20) && done != total)
        return 0;
    pthread_mutex_lock(&s->prep_lock);
    snprintf(s->prep_path, sizeof(s->prep_path), "%s", path);
    s->prep_done = done;
    s->prep_total = total;
    s->prep_dirty = true;
    pthread_mutex_unlock(&s->prep_lock);
    uv_async_send(&s->prep_async);
    return 0;
}

struct place_str {
    char device[64], fstype[32];
};

/* Notes where target `ti` of plan group `gi` lives, once per path and up to
 * PROTO_PLACES_MAX (a plan naming more leaves the rest unknown). */
static void prep_note_place(struct session *s, size_t gi, size_t ti)
{
    const char *path = s->plan.workers[gi].targets[ti].path;
    struct iof_diag d = {{0}};
    struct stat st;
    int fd;

    for (size_t i = 0; i < s->nplaces; i++) {
        const struct proto_target_place *p = &s->places[i];
        if (!strcmp(s->plan.workers[p->group].targets[p->target].path, path))
            return;
    }
    if (s->nplaces == PROTO_PLACES_MAX)
        return;
    if (!s->places) {
        s->places = calloc(PROTO_PLACES_MAX, sizeof(*s->places));
        s->place_str = calloc(PROTO_PLACES_MAX, sizeof(*s->place_str));
        if (!s->places || !s->place_str) {
            free(s->places);
            free(s->place_str);
            s->places = NULL;
            s->place_str = NULL;
            return;
        }
    }
    fd = dyn_scope_open(s->a->scope, path, O_PATH, &st, &d);
    if (fd < 0)
        return; /* prepared a moment ago; the test's own open says why */
    struct place_str *ps = &s->place_str[s->nplaces];
    int ram = dyn_inventory_place(fd, &st, ps->device, sizeof(ps->device), ps->fstype,
                                  sizeof(ps->fstype));
    close(fd);
    s->places[s->nplaces++] = (struct proto_target_place){
        .group = (uint32_t)gi,
        .target = (uint32_t)ti,
        .device = ps->device[0] ? ps->device : NULL,
        .fstype = ps->fstype[0] ? ps->fstype : NULL,
        .ram_backed = ram,
    };
}

static void prep_work(uv_work_t *w)
{
    struct session *s = w->data;
    s->prep_err = 0;
    s->nplaces = 0;
    for (size_t g = 0; g < s->ngroups && !s->prep_err; g++) {
        const struct iof_worker_cfg *gc = &s->plan.workers[s->groups[g]];
        const struct io_engine *eng = dyn_engine_find(gc->engine);
        /* A kernel without the engine (io_uring absent or disabled by
         * sysctl) refuses the plan here, before any file is written. */
        if (eng && eng->probe && (s->prep_err = eng->probe(&s->prep_diag))) {
            char why[sizeof(s->prep_diag.msg)];
            snprintf(why, sizeof(why), "%s", s->prep_diag.msg);
            iof_diag_set(&s->prep_diag, IOF_EENGINE,
                         "workers[%zu]: engine %s is not available on this node: %s", s->groups[g],
                         gc->engine, why);
            s->prep_err = IOF_EENGINE;
            break;
        }
        if (!eng || !eng->touches_files)
            continue;
        for (size_t i = 0; i < gc->ntargets && !s->prep_err; i++) {
            struct dyn_created f;
            s->prep_err = dyn_target_prepare_noted(&gc->targets[i], s->a->scope, gc->pattern,
                                                   prep_progress, s, &f, &s->prep_diag);
            if (!s->prep_err)
                prep_note_place(s, s->groups[g], i);
            if (f.path[0]) {
                struct dyn_created *grown =
                    realloc(s->created, (s->ncreated + 1) * sizeof(*s->created));
                if (grown) {
                    s->created = grown;
                    s->created[s->ncreated++] = f;
                } else {
                    IOF_WARN("test file '%s': out of memory: not removed at the session's end",
                             f.path);
                }
            }
        }
    }
}

static void prep_on_async(uv_async_t *h)
{
    struct session *s = h->data;
    struct proto_msg m;
    char path[IOF_PATH_MAX];

    pthread_mutex_lock(&s->prep_lock);
    if (!s->prep_dirty) {
        pthread_mutex_unlock(&s->prep_lock);
        return;
    }
    s->prep_dirty = false;
    snprintf(path, sizeof(path), "%s", s->prep_path);
    proto_msg_init(&m, PROTO_MSG_PREPARE_PROGRESS);
    m.u.prepare_progress.path = path;
    m.u.prepare_progress.done = s->prep_done;
    m.u.prepare_progress.total = s->prep_total;
    pthread_mutex_unlock(&s->prep_lock);
    if (!s->gone)
        proto_link_send(s->link, &m);
}

static void prep_after(uv_work_t *w, int status)
{
    struct session *s = w->data;
    struct proto_msg m;

    s->preparing = false;
    if (s->gone) {
        s->a->draining--;
        session_maybe_free(s);
        return;
    }
    prep_on_async(&s->prep_async);
    if (status < 0 || s->prep_err) {
        session_send_error(s, s->prep_err ? s->prep_err : status, "%s: %s", s->a->name,
                           s->prep_err ? s->prep_diag.msg : uv_strerror(status));
        return;
    }
    s->prepared = true;
    proto_msg_init(&m, PROTO_MSG_PREPARED);
    m.u.prepared.places = s->places;
    m.u.prepared.nplaces = s->nplaces;
    proto_link_send(s->link, &m);
}

static void session_prepare(struct session *s, const struct proto_prepare *pm)
{
    struct iof_diag d = {{0}};
    int r;

    session_drop_ready(s);
    if (!s->have_plan || s->dt || s->starting || s->preparing) {
        session_send_error(s, IOF_EPROTO, "%s: prepare %s", s->a->name,
                           !s->have_plan ? "before any plan" : "while busy");
        return;
    }
    /* The budget: every test of the plan must fit before anything is
     * written, opened or started. */
    for (size_t i = 0; i < s->ntests; i++) {
        r = session_check_budget(s, &s->tests[i], &d);
        if (r) {
            char label[64], specs[160];
            iof_test_cycle_label(&s->tests[i], label, sizeof(label));
            iof_test_spec_label(&s->plan, &s->tests[i], specs, sizeof(specs));
            session_send_error(s, r, "%s: test %zu (spec '%s'%s%s): %s", s->a->name, i + 1, specs,
                               label[0] ? ", " : "", label, d.msg);
            return;
        }
    }
    if (mkdir(s->a->o->workdir, 0700) < 0 && errno != EEXIST) {
        session_send_error(s, -errno, "%s: workdir '%s': %s", s->a->name, s->a->o->workdir,
                           strerror(errno));
        return;
    }
    s->prep_work.data = s;
    s->prepared = false;
    s->preparing = true;
    s->cleanup = s->cleanup || pm->cleanup;
    r = uv_queue_work(s->a->loop, &s->prep_work, prep_work, prep_after);
    if (r < 0) {
        s->preparing = false;
        session_send_error(s, r, "%s: cannot start preparation: %s", s->a->name, uv_strerror(r));
    }
}

/* --- the plan ------------------------------------------------------------------ */

static bool group_selects(const struct iof_worker_cfg *g, const char *name)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i], "*") || !strcmp(g->nodes[i], name))
            return true;
    return g->nnodes == 0;
}

static void session_drop_plan(struct session *s)
{
    if (!s->have_plan)
        return;
    iof_plan_free(&s->plan);
    free(s->tests);
    free(s->groups);
    free(s->gcfg);
    free(s->gspec);
    s->tests = NULL;
    s->groups = NULL;
    s->gcfg = NULL;
    s->gspec = NULL;
    s->have_plan = false;
    s->prepared = false;
}

static void session_take_plan(struct session *s, const struct proto_plan *pm)
{
    struct iof_diag d = {{0}};
    int r;

    session_drop_ready(s);

    if (s->dt || s->starting || s->preparing) {
        session_send_error(s, IOF_EBUSY, "%s: a plan cannot change while busy", s->a->name);
        return;
    }
    session_drop_plan(s);
    /* What --allow names now: a /dev/disk/by-* link follows its device. */
    r = dyn_scope_refresh(s->a->scope, &d);
    if (r) {
        session_send_error(s, r, "%s: %s", s->a->name, d.msg);
        return;
    }
    r = proto_plan_parse("plan", pm->text, pm->len, NULL, 0, &s->plan, &d);
    if (r) {
        session_send_error(s, IOF_EPLAN, "%s: %s", s->a->name, d.msg);
        return;
    }
    /* Test indexes name tests of this side's layout: a find_max search
     * has another one before PROTO_MINOR_FIND_MAX. */
    if (s->plan.cycle.param == IOF_CYCLE_RATE && s->plan.cycle.rate.find_max &&
        !proto_find_max_ok(s->mgr_minor)) {
        iof_plan_free(&s->plan);
        session_send_error(s, IOF_EVERSION,
                           "%s: a find_max plan needs protocol 1.%d on both sides (the manager "
                           "speaks 1.%u, whose search lays out its tests otherwise): upgrade the "
                           "manager",
                           s->a->name, PROTO_MINOR_FIND_MAX, s->mgr_minor);
        return;
    }
    s->have_plan = true;
    s->tests = iof_plan_expand(&s->plan, &s->ntests);
    s->groups = calloc(s->plan.nworkers, sizeof(*s->groups));
    s->gcfg = calloc(s->plan.nworkers, sizeof(*s->gcfg));
    s->gspec = calloc(s->plan.nworkers ? s->plan.nworkers : 1, sizeof(*s->gspec));
    if (!s->tests || !s->groups || !s->gcfg || !s->gspec) {
        session_drop_plan(s);
        session_send_error(s, -ENOMEM, "%s: out of memory for the plan", s->a->name);
        return;
    }
    s->ngroups = 0;
    for (size_t g = 0; g < s->plan.nworkers; g++) {
        const struct iof_worker_cfg *gc = &s->plan.workers[g];
        if (!group_selects(gc, s->a->name))
            continue;
        for (size_t i = 0; i < gc->ntargets; i++) {
            r = agent_check_target(s->a, &gc->targets[i], &d);
            if (r) {
                session_drop_plan(s);
                session_send_error(s, r, "%s: workers[%zu].targets[%zu]: %s", s->a->name, g, i,
                                   d.msg);
                return;
            }
        }
        s->groups[s->ngroups++] = g;
    }
    IOF_INFO("plan '%s' from %s: %zu tests, %zu worker groups here", s->plan.name, s->manager,
             s->ntests, s->ngroups);
}

/* --- session lifecycle ----------------------------------------------------------- */

static void session_on_handle_closed(uv_handle_t *h)
{
    struct session *s = h->data;
    s->open_handles--;
    session_maybe_free(s);
}

/* The end of a session whose prepare asked for cleanup: the test files it
 * created go (the workers of a stopped test may still hold them open; the
 * space is freed when they close). Run once nothing prepares or starts. */
static void session_cleanup(struct session *s)
{
    struct dyn_clean_report r = {0};
    char b[32];

    if (!s->cleanup || !s->ncreated)
        return;
    dyn_clean_files(s->a->scope, s->created, s->ncreated, &r);
    iof_budget_format_bytes(r.bytes, b, sizeof(b));
    IOF_INFO("cleanup: removed %" PRIu64 " test file%s (%s) that manager '%s' had created%s",
             r.files, r.files == 1 ? "" : "s", b, s->manager,
             r.failed ? "; some could not be removed" : "");
    dyn_clean_report_free(&r);
    s->ncreated = 0;
}

/* iofleet clean: every test file the workdir's ledger names, with its
 * verify state; never while a preparation or a test runs. */
static void session_clean(struct session *s)
{
    struct dyn_clean_report r = {0};
    struct iof_diag d = {{0}};
    struct proto_msg m;
    char b[32];
    int rc;

    session_drop_ready(s);
    if (s->dt || s->starting || s->preparing) {
        session_send_error(s, IOF_EBUSY, "%s: cannot clean while a test or its preparation runs",
                           s->a->name);
        return;
    }
    rc = dyn_clean_workdir(s->a->scope, &r, &d);
    if (rc) {
        dyn_clean_report_free(&r);
        session_send_error(s, rc, "%s: clean: %s", s->a->name, d.msg);
        return;
    }
    s->prepared = false; /* the files a plan was prepared with may be gone */
    s->ncreated = 0;
    iof_budget_format_bytes(r.bytes, b, sizeof(b));
    IOF_INFO("clean (manager '%s'): removed %" PRIu64 " test file%s (%s) from %s%s", s->manager,
             r.files, r.files == 1 ? "" : "s", b, dyn_scope_workdir(s->a->scope),
             r.failed ? "; some could not be removed" : "");
    proto_msg_init(&m, PROTO_MSG_CLEANED);
    m.u.cleaned.workdir = dyn_scope_workdir(s->a->scope);
    m.u.cleaned.files = r.files;
    m.u.cleaned.bytes = r.bytes;
    m.u.cleaned.failed = r.failed;
    m.u.cleaned.nremoved = r.nremoved;
    m.u.cleaned.removed = (const char **)r.removed;
    proto_link_send(s->link, &m);
    dyn_clean_report_free(&r);
}

static void session_maybe_free(struct session *s)
{
    struct agent *a = s->a;

    if (s->open_handles || s->preparing || s->starting || s->link)
        return;
    session_cleanup(s);
    free(s->created);
    free(s->places);
    free(s->place_str);
    session_drop_plan(s);
    pthread_mutex_destroy(&s->prep_lock);
    free(s->zeros);
    free(s->rates);
    free(s);
    a->allocated--;
    if (a->stopping && !a->allocated)
        agent_shutdown(a);
    /* Idle again (after a session, or a flood of bad connections): give
     * the memory back rather than keep the peak. */
    if (!a->sessions && !a->active)
        agent_trim();
}

static void session_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg);

static void session_on_hello_retry(uv_timer_t *t)
{
    struct session *s = t->data;
    struct proto_msg h;

    if (!s->link || s->welcomed)
        return;
    proto_msg_init_hello(&h, PROTO_ROLE_MANAGER, s->manager);
    h.u.hello.heartbeat_ms = s->hello_heartbeat_ms;
    h.u.hello.minor = s->hello_minor;
    session_on_msg(s->link, &h, s);
}

/* True when the manager's hello m is held for a moment (the previous
 * session's test is still being torn down) and will be taken again from a
 * timer; false once the grace period is over. The session's poll timer is
 * free until a test starts. */
static bool session_defer_hello(struct session *s, const struct proto_msg *m)
{
    uint64_t now = iof_now_ns();

    if (!s->hello_wait_until)
        s->hello_wait_until = now + AGENT_BUSY_GRACE_NS;
    if (now >= s->hello_wait_until)
        return false;
    if (m->u.hello.name != s->manager)
        snprintf(s->manager, sizeof(s->manager), "%s", m->u.hello.name);
    s->hello_heartbeat_ms = m->u.hello.heartbeat_ms;
    s->hello_minor = m->u.hello.minor;
    uv_timer_start(&s->poll, session_on_hello_retry, AGENT_BUSY_RETRY_MS, 0);
    return true;
}

/* Token bucket for clock probes: a peer flooding probes gets no more than
 * AGENT_PROBE_RATE replies a second (each reply is queued memory while it
 * does not read them), and one log line a second says how many were
 * dropped. */
static bool session_probe_allowed(struct session *s)
{
    uint64_t now = iof_now_ns();

    s->probe_tokens += (double)(now - s->probe_refill_ns) * AGENT_PROBE_RATE / 1e9;
    if (s->probe_tokens > AGENT_PROBE_BURST)
        s->probe_tokens = AGENT_PROBE_BURST;
    s->probe_refill_ns = now;
    if (s->probe_tokens >= 1) {
        s->probe_tokens -= 1;
        return true;
    }
    s->probes_dropped++;
    if (now - s->probe_log_ns >= IOF_NS_PER_S) {
        IOF_WARN("manager '%s' (%s): clock probes over %d/s: %" PRIu64 " dropped so far",
                 s->manager, proto_link_peer(s->link), AGENT_PROBE_RATE, s->probes_dropped);
        s->probe_log_ns = now;
    }
    return false;
}

static void session_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg)
{
    struct session *s = arg;
    struct agent *a = s->a;

    if (s->hello_wait) /* ours goes first, fresh or not */
        session_send_hello(s);
    if (!s->welcomed) {
        if (m->type == PROTO_MSG_BYE) {
            /* A peer that only wanted this agent's hello (iofleet validate --agent). */
            proto_link_close(l, 0, NULL);
            return;
        }
        if (m->type != PROTO_MSG_HELLO || m->u.hello.role != PROTO_ROLE_MANAGER) {
            char why[160];
            snprintf(why, sizeof(why), "expected the manager's hello, got %s",
                     proto_msg_type_name(m->type));
            proto_link_send_error(l, IOF_EPROTO, "%s: %s", a->name, why);
            proto_link_close(l, IOF_EPROTO, why);
            return;
        }
        /* (Another protocol major never gets here: proto/link refuses it.) */
        if ((a->draining || a->reaping) && session_defer_hello(s, m))
            return;
        if (a->draining || a->reaping) {
            proto_link_send_error(l, IOF_EBUSY,
                                  "agent %s is busy: stopping the previous session's %s; try "
                                  "again in a moment",
                                  a->name,
                                  a->reaping ? "test (waiting for its I/O to drain)"
                                             : "test-file preparation or test start");
            proto_link_close(l, IOF_EBUSY, "busy");
            return;
        }
        if (a->active && a->active != s) {
            proto_link_send_error(l, IOF_EBUSY, "agent %s is busy with manager '%s' (%s)", a->name,
                                  a->active->manager, proto_link_peer(a->active->link));
            IOF_WARN("refused manager '%s' from %s: busy with '%s'", m->u.hello.name,
                     proto_link_peer(l), a->active->manager);
            proto_link_close(l, IOF_EBUSY, "busy");
            return;
        }
        if (m->u.hello.name != s->manager) /* not a held hello (session_defer_hello) */
            snprintf(s->manager, sizeof(s->manager), "%s", m->u.hello.name);
        s->welcomed = true;
        s->mgr_minor = m->u.hello.minor;
        /* Stats in the binary body to a manager that reads it (1.1 on
         * both sides); JSON to an older one. */
        proto_link_set_encode_flags(
            l, (proto_stats_binary_ok(m->u.hello.minor) ? PROTO_ENCODE_STATS_BINARY : 0) |
                   (proto_stats_node_hist_ok(m->u.hello.minor) ? PROTO_ENCODE_STATS_NODE_HIST : 0));
        if (a->pending)
            a->pending--;
        a->active = s;
        iof_backoff_reset(&a->backoff);
        proto_link_set_deadline(l, 0, NULL);
        {
            /* The larger of both periods, but never beyond the agent's own
             * maximum: the dead-man limit is the agent's to keep. The
             * welcome tells the manager the period agreed. */
            uint32_t mine = a->o->heartbeat_ms ? a->o->heartbeat_ms : PROTO_HEARTBEAT_MS_DEFAULT;
            uint32_t max = mine > AGENT_HEARTBEAT_MAX_MS ? mine : AGENT_HEARTBEAT_MAX_MS;
            uint32_t hb = m->u.hello.heartbeat_ms > mine ? m->u.hello.heartbeat_ms : mine;
            struct proto_msg w;
            if (hb > max) {
                IOF_WARN("manager '%s' asked for a heartbeat every %u ms: capped at this agent's "
                         "maximum, %u ms",
                         s->manager, hb, max);
                hb = max;
            }
            proto_msg_init(&w, PROTO_MSG_WELCOME);
            w.u.welcome.heartbeat_ms = hb;
            proto_link_send(l, &w);
            proto_link_set_established(l, hb);
            IOF_INFO("session with manager '%s' (%s), heartbeat %u ms", s->manager,
                     proto_link_peer(l), hb);
        }
        s->probe_tokens = AGENT_PROBE_BURST;
        s->probe_refill_ns = iof_now_ns();
        return;
    }
    if (!proto_msg_may_send(m->type, PROTO_ROLE_MANAGER)) {
        /* A manager never sends what only agents send: a broken or hostile
         * peer. The session ends (and any test with it). */
        char why[96];
        snprintf(why, sizeof(why), "a manager sent %s, which only agents send",
                 proto_msg_type_name(m->type));
        IOF_WARN("manager '%s' (%s): %s: closing the session", s->manager, proto_link_peer(l), why);
        proto_link_send_error(l, IOF_EPROTO, "%s: %s", a->name, why);
        proto_link_close(l, IOF_EPROTO, why);
        return;
    }
    switch (m->type) {
    case PROTO_MSG_PLAN:
        session_take_plan(s, &m->u.plan);
        break;
    case PROTO_MSG_PREPARE:
        session_prepare(s, &m->u.prepare);
        break;
    case PROTO_MSG_CLEAN:
        session_clean(s);
        break;
    case PROTO_MSG_CLOCK_PROBE: {
        struct proto_msg r;
        if (!session_probe_allowed(s))
            break;
        proto_msg_init(&r, PROTO_MSG_CLOCK_REPLY);
        r.u.clock_reply.seq = m->u.clock_probe.seq;
        r.u.clock_reply.t0_ns = m->u.clock_probe.t0_ns;
        r.u.clock_reply.agent_ns = iof_now_ns();
        proto_link_send(l, &r);
        break;
    }
    case PROTO_MSG_SETUP:
        session_setup_test(s, &m->u.setup);
        break;
    case PROTO_MSG_START:
        session_start_test(s, &m->u.start);
        break;
    case PROTO_MSG_STOP:
        if (s->dt || s->starting) {
            s->stop_requested = true; /* a starting test stops once started */
            if (!s->stop_ns)
                s->stop_ns = iof_now_ns();
        }
        if (s->dt)
            dyn_test_stop(s->dt);
        /* A test set up and not started: its start will not come; its
         * device holds, buffers and fds go now. */
        session_drop_ready(s);
        break;
    case PROTO_MSG_BYE:
        proto_link_close(l, 0, NULL);
        break;
    case PROTO_MSG_ERROR:
        IOF_WARN("manager '%s': %s", s->manager, m->u.error.message);
        break;
    default:
        proto_link_send_error(l, IOF_EPROTO, "%s: unexpected %s", a->name,
                              proto_msg_type_name(m->type));
        break;
    }
}

/* Stops the inventory refreshes: after dyn_inv_cache_close() no refresh
 * thread touches the async handle, which may then be closed. */
static void agent_close_inventory(struct agent *a)
{
    dyn_inv_cache_close(a->inv);
    a->inv = NULL;
    uv_close((uv_handle_t *)&a->inv_timer, NULL);
    uv_close((uv_handle_t *)&a->inv_async, NULL);
}

/* Closes the agent's own handles once every session is gone: the loop then
 * ends. Idempotent. */
static void agent_shutdown(struct agent *a)
{
    if (a->handles_closed)
        return;
    a->handles_closed = true;
    if (a->listener) {
        iof_listener_close(a->listener);
        a->listener = NULL;
    }
    uv_close((uv_handle_t *)&a->sigint, NULL);
    uv_close((uv_handle_t *)&a->sigterm, NULL);
    uv_close((uv_handle_t *)&a->reconnect, NULL);
    uv_close((uv_handle_t *)&a->hs_log_timer, NULL);
    agent_close_inventory(a);
}

static void session_unlink(struct session *s)
{
    struct agent *a = s->a;
    if (s->prev)
        s->prev->next = s->next;
    else if (a->sessions == s)
        a->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else if (a->last == s)
        a->last = s->prev;
    s->prev = s->next = NULL;
    if (!s->welcomed && !s->evicted && a->pending)
        a->pending--;
}

static void session_on_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct session *s = arg;
    struct agent *a = s->a;

    session_unlink(s);
    s->link = NULL;
    s->gone = true;
    /* A TLS manager (iofleet run --listen) answered our plain hello with an
     * alert. */
    if (err == IOF_EPROTO && !strncmp(why, PROTO_WHY_EXPECTS_TLS, strlen(PROTO_WHY_EXPECTS_TLS)))
        why = "the manager expects TLS: configure TLS on the agent (--tls-ca, --tls-cert, "
              "--tls-key) or pass --insecure to both";
    if (s->preparing || s->starting) {
        /* The preparation thread stops after its current chunk, a starting
         * test once started; a new manager is refused until they have. */
        atomic_store(&s->prep_cancel, true);
        atomic_store(&s->start_cancel, true);
        a->draining++;
    }
    if (a->active == s) {
        if (s->dt)
            IOF_WARN("manager '%s' lost (%s): stopping all I/O", s->manager, why);
        else
            IOF_INFO("session with manager '%s' ended (%s)", s->manager, err ? why : "closed");
        session_abort_test(s);
        a->active = NULL;
        if (a->o->once)
            a->stopping = true;
    } else if (err && err != IOF_EBUSY) {
        IOF_WARN("connection from %s dropped before its session started: %s", proto_link_peer(l),
                 why);
    }
    uv_close((uv_handle_t *)&s->poll, session_on_handle_closed);
    uv_close((uv_handle_t *)&s->prep_async, session_on_handle_closed);
    if (a->fd_mode)
        a->stopping = true; /* the socketpair was its only connection */
    /* Stopping: the agent's handles close once this session is freed (its
     * test files removed), in session_maybe_free. */
    if (!a->stopping && a->o->manager && !a->active) {
        uv_timer_start(&a->reconnect, agent_on_reconnect, iof_backoff_next(&a->backoff), 0);
    }
    session_maybe_free(s);
}

/* Drops the oldest session still waiting for its hello (from src when
 * that address already has AGENT_MAX_PENDING_PER_SOURCE waiting, else of
 * all when AGENT_MAX_PENDING are), to make room for a new connection. */
static void session_make_room(struct agent *a, const char *src)
{
    struct session *old = NULL, *oldest = NULL;
    unsigned n = 0;

    for (struct session *p = a->sessions; p; p = p->next) { /* oldest first */
        /* One already closing (its peer left) logs its own drop. */
        if (p->welcomed || p->evicted || !p->link || proto_link_is_closing(p->link))
            continue;
        if (!oldest)
            oldest = p;
        if (src[0] && !strcmp(p->src, src) && n++ == 0)
            old = p;
    }
    if (n < AGENT_MAX_PENDING_PER_SOURCE)
        old = a->pending >= AGENT_MAX_PENDING ? oldest : NULL;
    if (!old)
        return;
    IOF_WARN("%u connections waiting for their hello: dropping the oldest, from %s (%u waiting "
             "from %s)",
             a->pending, proto_link_peer(old->link), n, src[0] ? src : "this socket");
    old->evicted = true; /* no longer counted as waiting */
    a->pending--;
    proto_link_close(old->link, IOF_EBUSY, NULL);
}

static struct session *session_new(struct agent *a, struct iof_conn *c)
{
    static const struct proto_link_cbs cbs = {.on_msg = session_on_msg,
                                              .on_close = session_on_close};
    struct session *s = calloc(1, sizeof(*s));

    if (!s) {
        iof_conn_close(c, -ENOMEM);
        return NULL;
    }
    s->a = a;
    a->allocated++;
    atomic_init(&s->prep_cancel, false);
    atomic_init(&s->start_cancel, false);
    pthread_mutex_init(&s->prep_lock, NULL);
    uv_timer_init(a->loop, &s->poll);
    uv_async_init(a->loop, &s->prep_async, prep_on_async);
    s->poll.data = s;
    s->prep_async.data = s;
    s->open_handles = 2;
    s->link = proto_link_new(a->loop, c, &cbs, s);
    if (!s->link) {
        uv_close((uv_handle_t *)&s->poll, session_on_handle_closed);
        uv_close((uv_handle_t *)&s->prep_async, session_on_handle_closed);
        return NULL;
    }
    snprintf(s->src, sizeof(s->src), "%s", iof_conn_peer_addr(c));
    session_make_room(a, s->src);
    s->prev = a->last;
    if (a->last)
        a->last->next = s;
    else
        a->sessions = s;
    a->last = s;
    a->pending++;
    proto_link_set_deadline(s->link, AGENT_HELLO_DEADLINE_MS, "hello from the manager");
    session_hello_soon(s);
    return s;
}

/* --- listening and dialling --------------------------------------------------------- */

/* Tells the peer why (an error frame, so it does not retry blindly) and
 * closes c. */
static void agent_refuse(struct agent *a, struct iof_conn *c, const char *text)
{
    struct proto_msg m;
    uint8_t *frame;
    size_t len;

    (void)a;
    proto_msg_init(&m, PROTO_MSG_ERROR);
    m.u.error.code = IOF_EDENIED;
    m.u.error.message = text;
    if (proto_msg_encode_frame(&m, PROTO_FRAME_MAX_PREAUTH, &frame, &len, NULL) == 0) {
        iof_conn_write(c, frame, len);
        free(frame);
    }
    iof_conn_close(c, IOF_EDENIED);
}

/* Who may talk to the agent: over TLS a peer whose certificate names the
 * manager; over a unix socket (--listen unix:PATH, or the socketpair of
 * `iofleet run`'s embedded agent) a peer the kernel says is root or this
 * agent's own user; over plain TCP anybody, which is why plain TCP needs
 * --insecure (checked at start-up). */
static bool agent_conn_allowed(struct agent *a, struct iof_conn *c)
{
    struct iof_diag d = {{0}};
    const char *want = a->o->manager_name ? a->o->manager_name : IOF_TLS_MANAGER_NAME;
    char text[PROTO_TEXT_MAX + 1];

    if (iof_conn_is_unix(c)) {
        if (iof_conn_check_local_peer(c, &d) == 0)
            return true;
        IOF_WARN("refused connection: %s; only root or the agent's own user may drive it "
                 "without a certificate",
                 d.msg);
        snprintf(text, sizeof(text),
                 "agent %s accepts only root or its own user on its unix socket", a->name);
        agent_refuse(a, c, text);
        return false;
    }
    if (a->tls) {
        if (iof_conn_check_peer_name(c, want, &d)) {
            snprintf(text, sizeof(text), "agent %s accepts only a manager certificate for '%s': %s",
                     a->name, want, d.msg);
            IOF_WARN("refused %s: %s", iof_conn_peer(c), d.msg);
            agent_refuse(a, c, text);
            return false;
        }
        return true;
    }
    if (!a->o->insecure) { /* not reached: plain TCP is refused at start-up */
        IOF_WARN("refused plain TCP connection %s %s: use TLS or a unix socket",
                 a->o->listen ? "from" : "to", iof_conn_peer(c));
        iof_conn_close(c, IOF_EDENIED);
        return false;
    }
    return true;
}

static void agent_on_accept(struct iof_listener *l, struct iof_conn *c, void *arg)
{
    struct agent *a = arg;
    (void)l;
    if (agent_conn_allowed(a, c))
        session_new(a, c);
}

/* The end of a period of handshake-timeout lines: the ones not logged are
 * summed up, and a new period starts (a flood goes on: one line a period);
 * after a quiet period the next timeout is logged at once. */
static void agent_on_hs_log_timer(uv_timer_t *t)
{
    struct agent *a = t->data;

    if (!a->hs_quiet) {
        a->hs_log_until_ns = 0; /* whatever the clocks' rounding */
        return;
    }
    IOF_WARN("%" PRIu64 " more TLS handshakes timed out in the last %.0f s (not logged one by one; "
             "the last with %s)",
             a->hs_quiet, AGENT_HS_TIMEOUT_LOG_MS / 1000.0, a->hs_quiet_peer);
    a->hs_quiet = 0;
    a->hs_log_until_ns = uv_hrtime() + (uint64_t)AGENT_HS_TIMEOUT_LOG_MS * IOF_NS_PER_MS;
    uv_timer_start(t, agent_on_hs_log_timer, AGENT_HS_TIMEOUT_LOG_MS, 0);
}

static void agent_on_reject(struct iof_listener *l, struct iof_conn *c, int err, void *arg)
{
    struct agent *a = arg;
    (void)l;

    if (err == IOF_ETIMEOUT) {
        uint64_t now = uv_hrtime();
        if (now < a->hs_log_until_ns) {
            a->hs_quiet++;
            snprintf(a->hs_quiet_peer, sizeof(a->hs_quiet_peer), "%s", iof_conn_peer(c));
            return;
        }
        a->hs_log_until_ns = now + (uint64_t)AGENT_HS_TIMEOUT_LOG_MS * IOF_NS_PER_MS;
        uv_timer_start(&a->hs_log_timer, agent_on_hs_log_timer, AGENT_HS_TIMEOUT_LOG_MS, 0);
    }
    IOF_WARN("TLS handshake with %s failed: %s", iof_conn_peer(c),
             iof_conn_error(c)[0] ? iof_conn_error(c) : iof_strerror(err));
}

static void agent_on_connect(struct iof_conn *c, int err, void *arg)
{
    struct agent *a = arg;
    if (err) {
        uint64_t delay = iof_backoff_next(&a->backoff);
        IOF_WARN("cannot reach manager %s:%u: %s; retrying in %.1f s", a->mhost, a->port,
                 uv_strerror(err), (double)delay / 1000);
        if (iof_conn_error(c)[0] && err != -ECONNREFUSED)
            IOF_WARN("(%s)", iof_conn_error(c));
        uv_timer_start(&a->reconnect, agent_on_reconnect, delay, 0);
        return;
    }
    if (a->tls)
        IOF_INFO("TLS session with manager %s:%u: %s handshake", a->mhost, a->port,
                 iof_conn_tls_resumed(c) ? "resumed" : "full");
    if (agent_conn_allowed(a, c))
        session_new(a, c);
    else
        uv_timer_start(&a->reconnect, agent_on_reconnect, iof_backoff_next(&a->backoff), 0);
}

static void agent_conn_closed_early(struct iof_conn *c, int err, void *arg)
{
    (void)c;
    (void)err;
    (void)arg;
}

static void agent_dial(struct agent *a)
{
    static const struct iof_conn_cbs cbs = {.on_connect = agent_on_connect,
                                            .on_close = agent_conn_closed_early};
    struct iof_conn *c;
    int r;

    if (a->stopping || a->active)
        return;
    r = a->tls ? iof_conn_connect_tls(a->loop, a->mhost, a->port, a->tls, &cbs, a, &c)
               : iof_conn_connect(a->loop, a->mhost, a->port, &cbs, a, &c);
    if (r < 0) {
        IOF_WARN("cannot dial manager %s:%u: %s", a->mhost, a->port, uv_strerror(r));
        uv_timer_start(&a->reconnect, agent_on_reconnect, iof_backoff_next(&a->backoff), 0);
    }
}

static void agent_on_signal(uv_signal_t *h, int sig)
{
    struct agent *a = h->data;
    IOF_INFO("signal %d: shutting down", sig);
    a->stopping = true;
    if (a->active)
        session_abort_test(a->active);
    /* Every connection closes; the last session_on_close ends the loop. */
    for (struct session *s = a->sessions; s; s = s->next)
        if (s->link)
            proto_link_close(s->link, 0, s == a->active ? "agent shutting down" : NULL);
    if (!a->allocated)
        agent_shutdown(a);
    else if (a->listener) {
        iof_listener_close(a->listener);
        a->listener = NULL;
    }
}

static int agent_canonical_allow(struct agent *a)
{
    a->allow_real = calloc(a->o->nallow ? a->o->nallow : 1, sizeof(*a->allow_real));
    if (!a->allow_real)
        return -ENOMEM;
    for (size_t i = 0; i < a->o->nallow; i++) {
        char real[PATH_MAX];
        if (a->o->allow[i][0] != '/') {
            IOF_USER("dynamo: --allow '%s': must be an absolute path", a->o->allow[i]);
            return -EINVAL;
        }
        if (!realpath(a->o->allow[i], real)) {
            /* A device may appear later; until then nothing under it opens. */
            IOF_WARN("--allow '%s': %s; ignored", a->o->allow[i], strerror(errno));
            continue;
        }
        a->allow_real[a->nallow] = strdup(real);
        if (!a->allow_real[a->nallow])
            return -ENOMEM;
        a->nallow++;
    }
    return 0;
}

/* Unauthenticated connections may hold at most what is left of the
 * descriptor limit after AGENT_FD_RESERVE and the agent's own pre-hello
 * sessions, so a flood never takes the descriptor the manager needs. */
static void agent_set_listener_limits(struct agent *a)
{
    struct rlimit rl;
    uint64_t avail = 1u << 20, budget;
    unsigned pending = IOF_LISTENER_MAX_PENDING;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        avail = rl.rlim_cur;
    budget = avail > AGENT_FD_RESERVE + AGENT_MAX_PENDING + 16
                 ? avail - AGENT_FD_RESERVE - AGENT_MAX_PENDING - 16
                 : 8;
    if (budget < pending)
        pending = budget < 8 ? 8 : (unsigned)budget;
    iof_listener_set_limits(a->listener, pending, IOF_LISTENER_MAX_PER_SOURCE);
    IOF_INFO("descriptor limit %" PRIu64 ": at most %u unauthenticated connections (%u per "
             "address) and %u waiting for their hello; the rest is kept for the manager",
             avail, pending, IOF_LISTENER_MAX_PER_SOURCE, AGENT_MAX_PENDING);
}

int dyn_agent_main(const struct dyn_agent_opts *o)
{
    struct agent a = {.o = o,
                      .budget = {.max_workers = o->max_workers,
                                 .max_buffer_mem = o->max_buffer_mem,
                                 .max_aio_events = o->max_aio_events}};
    struct iof_diag d = {{0}};
    int rc = 0;

    const char *upath = NULL;
    bool on_unix, plain;

    if (!!o->listen + !!o->manager + !!o->use_manager_fd != 1) {
        IOF_USER("dynamo: give exactly one of --listen or --manager");
        return 2;
    }
    if (o->manager && iof_addr_is_unix(o->manager, NULL)) {
        IOF_USER("dynamo: --manager %s: an agent listens on a unix socket "
                 "(--listen unix:PATH), it does not dial one",
                 o->manager);
        return 2;
    }
    on_unix = o->use_manager_fd || (o->listen && iof_addr_is_unix(o->listen, &upath));
    if (on_unix && (o->tls_ca || o->tls_cert || o->tls_key)) {
        IOF_USER("dynamo: --tls-* do not apply to a unix socket: its peer is known by "
                 "its user (root or the agent's own)");
        return 2;
    }
    plain = !on_unix && !o->tls_ca;
    if (plain && !o->insecure) {
        IOF_USER("dynamo: %s %s: plain TCP would let anyone who can reach it, any local user "
                 "included (loopback is no identity), drive this agent; use TLS (--tls-ca, "
                 "--tls-cert, --tls-key), a unix socket (--listen unix:PATH), or --insecure "
                 "(here and on the manager) to accept that",
                 o->listen ? "--listen" : "--manager", o->listen ? o->listen : o->manager);
        return 2;
    }
    {
        /* Sent in every hello: escaped to the text policy as the inventory is. */
        char raw[256] = "";
        gethostname(raw, sizeof(raw) - 1);
        dyn_inventory_clean(a.host, sizeof(a.host), raw);
    }
    if (!!o->tls_ca + !!o->tls_cert + !!o->tls_key != 0 &&
        !!o->tls_ca + !!o->tls_cert + !!o->tls_key != 3) {
        IOF_USER("dynamo: TLS needs all of --tls-ca, --tls-cert and --tls-key");
        return 2;
    }
    if (o->tls_ca) {
        /* The listening agent is the TLS server; a dialling one the client. */
        if (iof_tls_config_load(NULL, o->tls_ca, o->tls_cert, o->tls_key, o->listen != NULL, &a.tls,
                                &d)) {
            IOF_USER("dynamo: %s", d.msg);
            return 2;
        }
        /* The agent's identity is the name in its certificate. */
        if (!iof_tls_ctx_own_name(a.tls)) {
            IOF_USER("dynamo: %s: the certificate carries no usable name", o->tls_cert);
            iof_tls_ctx_free(a.tls);
            return 2;
        }
        if (o->name && strcasecmp(o->name, iof_tls_ctx_own_name(a.tls))) {
            IOF_USER("dynamo: --name %s does not match the certificate's name '%s' (%s)", o->name,
                     iof_tls_ctx_own_name(a.tls), o->tls_cert);
            iof_tls_ctx_free(a.tls);
            return 2;
        }
    }
    snprintf(a.name, sizeof(a.name), "%s",
             a.tls     ? iof_tls_ctx_own_name(a.tls)
             : o->name ? o->name
                       : a.host);
    if (proto_node_name_check("node name", a.name, &d)) {
        IOF_USER("dynamo: %s", d.msg);
        return 2;
    }
    if (agent_canonical_allow(&a) < 0) {
        rc = 2;
        goto out;
    }
    if (dyn_scope_new(o->workdir, o->allow, o->nallow, &a.scope, &d)) {
        IOF_USER("dynamo: %s", d.msg);
        rc = 2;
        goto out;
    }
    a.loop = uv_default_loop();
    iof_backoff_init(&a.backoff, IOF_REDIAL_MIN_MS, IOF_REDIAL_MAX_MS,
                     uv_hrtime() ^ ((uint64_t)getpid() << 32));
    uv_timer_init(a.loop, &a.reconnect);
    a.reconnect.data = &a;
    uv_timer_init(a.loop, &a.hs_log_timer);
    a.hs_log_timer.data = &a;
    uv_timer_init(a.loop, &a.inv_timer);
    a.inv_timer.data = &a;
    uv_async_init(a.loop, &a.inv_async, agent_on_inventory);
    a.inv_async.data = &a;
    a.inv = dyn_inv_cache_new(o->workdir, a.allow_real, a.nallow);
    if (!a.inv)
        IOF_WARN("out of memory for the inventory: hellos carry none");
    uv_signal_init(a.loop, &a.sigint);
    uv_signal_init(a.loop, &a.sigterm);
    a.sigint.data = &a;
    a.sigterm.data = &a;
    uv_signal_start(&a.sigint, agent_on_signal, SIGINT);
    uv_signal_start(&a.sigterm, agent_on_signal, SIGTERM);
    signal(SIGPIPE, SIG_IGN);

    if (plain)
        IOF_WARN("--insecure: plain TCP, no authentication: anyone who can reach %s can drive "
                 "this agent (uid %lu) and read its results",
                 o->listen ? o->listen : o->manager, (unsigned long)geteuid());
    if (o->use_manager_fd) {
        struct iof_conn *c;
        int r = iof_conn_open_fd(a.loop, o->manager_fd, "the manager's socketpair", NULL, NULL, &c);
        a.fd_mode = true;
        if (r < 0) {
            IOF_USER("dynamo: --manager-fd %d: %s", o->manager_fd, iof_strerror(r));
            rc = 2;
            a.stopping = true;
            agent_shutdown(&a);
        } else if (agent_conn_allowed(&a, c)) {
            session_new(&a, c);
        } else {
            rc = 3;
            a.stopping = true;
            agent_shutdown(&a);
        }
    } else if (upath) {
        /* Before any thread exists (the listener sets the umask for its bind). */
        if (iof_listener_start_unix(a.loop, upath, agent_on_accept, &a, &a.listener, &d)) {
            IOF_USER("dynamo: --listen %s: %s", o->listen, d.msg);
            rc = 1;
            agent_shutdown(&a);
            uv_run(a.loop, UV_RUN_DEFAULT);
            goto out;
        }
        IOF_INFO("agent '%s' listening on unix:%s (protocol %s, root and uid %lu only)", a.name,
                 upath, proto_version_string(), (unsigned long)geteuid());
    } else if (o->listen) {
        char host[256];
        if (iof_addr_parse(o->listen, host, sizeof(host), IOF_DEFAULT_PORT, &a.port, &d) ||
            (a.tls ? iof_listener_start_tls(a.loop, host, a.port, a.tls, agent_on_accept,
                                            agent_on_reject, &a, &a.listener, &d)
                   : iof_listener_start(a.loop, host, a.port, agent_on_accept, &a, &a.listener,
                                        &d))) {
            IOF_USER("dynamo: --listen %s: %s", o->listen, d.msg);
            rc = 1;
            uv_close((uv_handle_t *)&a.sigint, NULL);
            uv_close((uv_handle_t *)&a.sigterm, NULL);
            uv_close((uv_handle_t *)&a.reconnect, NULL);
            uv_close((uv_handle_t *)&a.hs_log_timer, NULL);
            agent_close_inventory(&a);
            uv_run(a.loop, UV_RUN_DEFAULT);
            goto out;
        }
        agent_set_listener_limits(&a);
        IOF_INFO("agent '%s' listening on %s:%u (protocol %s, %s)", a.name, host[0] ? host : "*",
                 iof_listener_port(a.listener), proto_version_string(),
                 a.tls ? "TLS" : "plain TCP, --insecure");
    } else {
        if (iof_addr_parse(o->manager, a.mhost, sizeof(a.mhost), IOF_DEFAULT_PORT, &a.port, &d)) {
            IOF_USER("dynamo: --manager %s: %s", o->manager, d.msg);
            rc = 2;
            goto out;
        }
        IOF_INFO("agent '%s' dialling manager %s:%u", a.name, a.mhost, a.port);
        agent_dial(&a);
    }
    uv_run(a.loop, UV_RUN_DEFAULT);
out:
    dyn_inv_cache_close(a.inv); /* when the loop never ran */
    if (a.loop)
        uv_loop_close(a.loop);
    iof_tls_ctx_free(a.tls);
    dyn_scope_free(a.scope);
    for (size_t i = 0; i < a.nallow; i++)
        free(a.allow_real[i]);
    free(a.allow_real);
    return rc;
}
