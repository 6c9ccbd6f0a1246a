/* SPDX-License-Identifier: Apache-2.0 */
/* tests/bench/simagent.c - iof_simagent: N simulated dynamo agents in one
 * process and one libuv loop, for tests/bench/manager-scale.
 *
 * Each session dials the manager and speaks the real protocol through
 * proto/link.h, as dynamo/agent.c does: hello with a small inventory,
 * welcome, heartbeats (the link's), the plan (parsed and expanded with the
 * real loader to learn the run timing and this node's workers and targets),
 * "prepared" at once, clock replies, and on start one stats message at every
 * interval boundary (start_at + offset + ramp + (k+1) * interval on the local
 * clock) and a result with the totals at the end. No I/O is done: every
 * worker reports the same realistic interval, log-normal latencies recorded
 * once at startup (SIM_SAMPLES per worker and direction, about 150 non-empty
 * histogram buckets each).
 *
 * Nothing is staggered: all sessions share this machine's clock and report
 * at the same boundary, the worst case for the manager. The time each
 * interval's stats took to leave this process is logged (--verbose) and
 * summarised at exit, so a slow simulator is not mistaken for a slow manager.
 *
 * Fan-out: encoding one stats message costs about as much CPU as the manager
 * spends decoding it (5 passes over the 2432 buckets of each of 16
 * histograms), so a simulator encoding per session could never produce the
 * burst N real agents do. All sessions of a test send byte-identical stats,
 * so each interval's frame is encoded once with proto_msg_encode_frame_flags(),
 * the function proto_link_send() uses, and written to every session's
 * connection; everything else (hello, replies, heartbeats, results) goes
 * through the link. --encode-each sends every stats message through
 * proto_link_send() instead.
 *
 * Stats body: binary (protocol 1.1, proto/statsbin.h; one histogram per node,
 * layout 3, from 1.3: "binary-node") to a manager that reads it, as dynamo
 * sends it; --json-stats sends JSON instead, to compare.
 * The summary line gives the body sent and its frame size (stats_bytes: the
 * bytes on the wire per agent per interval, frame header included, over the
 * fan-out writes), and the frame size of a result (result_bytes).
 *
 * TLS (--tls-dir DIR): each session loads its own client context from
 * DIR/ca.pem, DIR/<name>.pem and DIR/<name>-key.pem (iofleet pki init DIR
 * --agent <name>...; the manager requires the hello name to be the
 * certificate's), all before the first dial, and dials with
 * iof_conn_connect_tls(): 1000 sessions are 1000 full handshakes at once.
 * Handshake failures are counted (tls_failures in the summary line) and the
 * first few logged; like refused dials, they are retried until
 * --connect-timeout (dynamo retries them too), after dynamo's delays:
 * capped exponential backoff with jitter (common/backoff.h), each session
 * with its own jitter sequence.
 *
 * Reconnects (--redial): a welcomed session whose link is lost (not ended by
 * the manager's bye) dials again after dynamo's backoff, and over TLS its
 * context offers the manager's session ticket, so the handshake is resumed
 * (common/tls.h); full and resumed handshakes are counted (tls_full,
 * tls_resumed). SIGUSR1 cuts the connection of every second welcomed
 * session (sim-00001, sim-00003, ...) at once, as a lost network would; the
 * manager declares them lost and, the run going on with the others, takes
 * them back from its next test: with --redial, a reconnect storm. SIGUSR2
 * cuts the others (sim-00002, sim-00004, ...). --prepare-ms makes every
 * preparation take that long, so a session can come back while others
 * still prepare.
 *
 * Exit status: 0 when every session was welcomed and sent the result of
 * every test it started, 1 otherwise, 2 on usage errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <uv.h>

#include "common/backoff.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "common/stats.h"
#include "common/tls.h"
#include "proto/link.h"
#include "proto/plan.h"
#include "proto/version.h"
#include "nofile.h"

#define SIM_MAX_COUNT 100000
#define SIM_DISTINCT 8   /* distinct worker histograms; more workers reuse them */
#define SIM_SAMPLES 2000 /* latencies recorded per worker and direction */
#define SIM_READ_MEDIAN_NS 180000.0
#define SIM_WRITE_MEDIAN_NS 320000.0
#define SIM_SIGMA 0.30 /* log-normal shape: about 150 non-empty buckets */
#define SIM_IO_SIZE 4096
#define SIM_HELLO_DEADLINE_MS 10000
/* Boundaries this close are one batch: sessions differ only by their clock
 * offset as the manager estimated it, a few microseconds on one host. */
#define SIM_BATCH_NS (2 * IOF_NS_PER_MS)
#define SIM_LOST_LOGGED 5     /* session losses logged one by one; the rest are counted */
#define SIM_TLS_FAIL_LOGGED 5 /* TLS handshake failures logged one by one */

enum sim_state {
    SS_DIALING, /* connecting, or waiting to retry */
    SS_HELLO,   /* link up, waiting for the manager's hello */
    SS_READY,   /* welcomed */
    SS_DONE,    /* closed for good */
};

struct sim;

struct sim_session {
    struct sim *sim;
    char name[PROTO_NAME_MAX + 1];
    enum sim_state state;
    struct proto_link *link;
    struct iof_conn *conn;      /* the link's connection, for fan-out writes */
    struct iof_tls_ctx *tls;    /* --tls-dir: this session's client context */
    uv_timer_t retry;           /* dial retries */
    uv_timer_t prep;            /* --prepare-ms: the prepared answer, later */
    struct iof_backoff backoff; /* their delays, as dynamo's (common/backoff.h) */
    bool welcomed;
    bool bye;       /* the manager ended the session: no redial */
    bool redialing; /* welcomed before, lost, dialling again (--redial) */
    unsigned enc;   /* PROTO_ENCODE_*: the stats body the manager reads (JSON with --json-stats) */
    /* The plan as assigned. */
    bool have_plan;
    struct iof_plan plan;
    struct iof_test *tests;
    size_t ntests;
    /* The running test: this node's workers and its timing (local clock). */
    bool running;
    uint32_t test;
    size_t nworkers;
    uint32_t *ntargets; /* per worker */
    uint64_t layout;    /* hash of nworkers and ntargets: sessions alike share frames */
    uint64_t start_ns, measure_start, end, interval_ns;
    uint64_t nint, next;
    unsigned started, results; /* tests started and results sent */
    unsigned aborted;          /* tests cut short by a lost link (--redial) */
};

/* Send times of one interval across sessions, relative to its boundary. */
struct sim_interval {
    unsigned sent;
    uint64_t first_ns, last_ns; /* after the boundary */
    uint64_t last_wall_ns;      /* CLOCK_REALTIME of the last send */
};

struct sim {
    uv_loop_t *loop;
    struct sim_session *sessions;
    unsigned count;
    const char *prefix;
    char host[256];
    uint16_t port;
    uint32_t heartbeat_ms;
    uint64_t connect_deadline;
    uint64_t connect_window_ns; /* --connect-timeout; a redial gets it afresh */
    /* --dials-at-once: dials (TCP + TLS handshake) in flight at once; the
     * rest wait in wait[] (a ring of count entries), oldest first. */
    unsigned max_dials, in_flight, wait_head, nwait;
    struct sim_session **wait;
    bool stopping;
    bool fanout;
    bool json_stats;       /* --json-stats: the JSON body even to a manager that reads binary */
    const char *tls_dir;   /* NULL: plain TCP */
    unsigned tls_failures; /* TLS dials that failed after TCP connected */
    unsigned tls_full, tls_resumed; /* TLS handshakes completed, by kind */
    bool redial;                    /* --redial: welcomed sessions redial when lost */
    uint64_t prepare_ms;            /* --prepare-ms: each prepare takes this long */
    unsigned redials, rewelcomed;   /* lost sessions that dialled again / were welcomed again */
    uv_signal_t sigusr1, sigusr2;
    double tls_load_s; /* loading every session's context */
    uv_signal_t sigint, sigterm;
    uv_timer_t tick;   /* the next interval boundary of any session */
    uint64_t tick_due; /* 0: not armed */
    unsigned tick_pos; /* sim_tick: the session its next chunk starts at */
    unsigned pending;  /* sessions neither welcomed nor done: new connections may appear */
    unsigned done, welcomed, lost;
    uint64_t t_begin, t_all_welcomed;
    /* Inventory strings. */
    char hostname[PROTO_NAME_MAX + 1];
    struct utsname uts;
    /* Worker stats: pool[i] is distinct for i < SIM_DISTINCT and a copy of
     * pool[i % SIM_DISTINCT] beyond, so worker w's targets are the contiguous
     * pool + w % SIM_DISTINCT whatever its target count. */
    struct iof_stats *pool, *totals;
    size_t npool;
    uint64_t totals_k;                  /* totals = pool x totals_k intervals; UINT64_MAX: stale */
    struct proto_worker_stats *scratch; /* message body, built at each send */
    size_t nscratch;
    /* The fan-out frame: stats of (test, interval, layout, body form). */
    uint8_t *frame;
    size_t frame_len;
    bool frame_valid;
    unsigned frame_enc;
    uint32_t frame_test;
    uint64_t frame_interval, frame_layout;
    /* Live TCP handles, sorted, collected once per boundary. */
    uintptr_t *live;
    size_t nlive, caplive;
    uint64_t fanout_writes, link_sends;
    uint64_t fanout_bytes; /* frames written by fan-out: bytes per agent per interval */
    size_t result_bytes;   /* the first result's frame, as the link sends it */
    /* The current test's intervals, for the send-spread report. */
    uint32_t cur_test;
    unsigned cur_started;
    struct sim_interval *ivl;
    uint64_t nivl;
    double *spreads; /* last send after the boundary, ms, one per completed interval */
    size_t nspreads, capspreads;
};

/* --- synthetic statistics ----------------------------------------------------------- */

static uint64_t sim_rand(uint64_t *state)
{
    /* splitmix64 */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double sim_gauss(uint64_t *state)
{
    /* Box-Muller; u1 in (0, 1]. */
    double u1 = ((double)(sim_rand(state) >> 11) + 1.0) / 9007199254740992.0;
    double u2 = (double)(sim_rand(state) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static void sim_fill_dir(struct iof_dirstats *d, double median_ns, uint64_t *seed)
{
    for (unsigned i = 0; i < SIM_SAMPLES; i++)
        iof_hist_record(&d->lat, (uint64_t)(median_ns * exp(SIM_SIGMA * sim_gauss(seed))));
    d->ios = d->lat.count;
    d->bytes = d->ios * SIM_IO_SIZE;
}

static unsigned sim_hist_nonempty(const struct iof_hist *h)
{
    unsigned n = 0;
    for (unsigned i = 0; i < IOF_HIST_BUCKETS; i++)
        n += h->buckets[i] != 0;
    return n;
}

/* dst = src x k (k intervals of the same traffic). */
static void sim_dir_scale(struct iof_dirstats *dst, const struct iof_dirstats *src, uint64_t k)
{
    *dst = *src;
    dst->ios *= k;
    dst->bytes *= k;
    dst->errors *= k;
    dst->lat.count *= k;
    dst->lat.sum_ns *= k;
    for (unsigned i = 0; i < IOF_HIST_BUCKETS; i++)
        dst->lat.buckets[i] *= k;
    if (!k)
        iof_hist_reset(&dst->lat);
}

/* Grows the pool to hold SIM_DISTINCT + widest - 1 entries. Returns 0 or -ENOMEM. */
static int sim_pool_ensure(struct sim *s, size_t widest)
{
    size_t need = SIM_DISTINCT + (widest ? widest : 1) - 1;
    struct iof_stats *p, *t;

    if (need <= s->npool)
        return 0;
    p = realloc(s->pool, need * sizeof(*p));
    if (!p)
        return -ENOMEM;
    s->pool = p;
    t = realloc(s->totals, need * sizeof(*t));
    if (!t)
        return -ENOMEM;
    s->totals = t;
    for (size_t i = s->npool; i < need; i++)
        p[i] = p[i % SIM_DISTINCT];
    s->npool = need;
    s->totals_k = UINT64_MAX;
    return 0;
}

static int sim_stats_init(struct sim *s, uint64_t seed, bool verbose)
{
    unsigned lo = UINT32_MAX, hi = 0;

    s->pool = calloc(SIM_DISTINCT, sizeof(*s->pool));
    s->totals = calloc(SIM_DISTINCT, sizeof(*s->totals));
    if (!s->pool || !s->totals)
        return -ENOMEM;
    s->npool = SIM_DISTINCT;
    s->totals_k = UINT64_MAX;
    for (unsigned i = 0; i < SIM_DISTINCT; i++) {
        iof_stats_reset(&s->pool[i]);
        sim_fill_dir(&s->pool[i].rd, SIM_READ_MEDIAN_NS, &seed);
        sim_fill_dir(&s->pool[i].wr, SIM_WRITE_MEDIAN_NS, &seed);
        for (unsigned d = 0; d < 2; d++) {
            unsigned n = sim_hist_nonempty(d ? &s->pool[i].wr.lat : &s->pool[i].rd.lat);
            lo = n < lo ? n : lo;
            hi = n > hi ? n : hi;
        }
    }
    if (verbose)
        IOF_INFO("worker histograms: %u latencies per direction, %u..%u non-empty buckets",
                 SIM_SAMPLES, lo, hi);
    return 0;
}

/* The message body for a session's workers: from the pool (interval) or the
 * totals of k intervals (result). */
static int sim_body(struct sim *s, const struct sim_session *ss, bool totals, uint64_t k,
                    struct proto_stats *out)
{
    if (ss->nworkers > s->nscratch) {
        struct proto_worker_stats *w = realloc(s->scratch, ss->nworkers * sizeof(*w));
        if (!w)
            return -ENOMEM;
        s->scratch = w;
        s->nscratch = ss->nworkers;
    }
    if (totals && s->totals_k != k) {
        for (size_t i = 0; i < s->npool; i++) {
            sim_dir_scale(&s->totals[i].rd, &s->pool[i].rd, k);
            sim_dir_scale(&s->totals[i].wr, &s->pool[i].wr, k);
            s->totals[i].first_error = 0;
            s->totals[i].first_error_offset = 0;
        }
        s->totals_k = k;
    }
    for (size_t w = 0; w < ss->nworkers; w++) {
        s->scratch[w].ntargets = ss->ntargets[w];
        s->scratch[w].targets = (totals ? s->totals : s->pool) + w % SIM_DISTINCT;
    }
    out->nworkers = ss->nworkers;
    out->workers = ss->nworkers ? s->scratch : NULL;
    return 0;
}

/* --- the send-spread report ---------------------------------------------------------- */

static void sim_note_interval(struct sim *s, const struct sim_session *ss, uint64_t k,
                              uint64_t boundary, uint64_t now)
{
    struct sim_interval *iv;
    uint64_t after = now > boundary ? now - boundary : 0;

    if (ss->test != s->cur_test || k >= s->nivl)
        return;
    iv = &s->ivl[k];
    if (!iv->sent || after < iv->first_ns)
        iv->first_ns = after;
    if (after > iv->last_ns)
        iv->last_ns = after;
    iv->last_wall_ns = iof_wall_ns();
    if (++iv->sent != s->cur_started)
        return;
    IOF_INFO("test %" PRIu32 " interval %" PRIu64 ": %u stats sent %.3f..%.3f ms after the "
             "boundary, last at wall %.6f",
             ss->test + 1, k, iv->sent, (double)iv->first_ns / 1e6, (double)iv->last_ns / 1e6,
             (double)iv->last_wall_ns / 1e9);
    if (s->nspreads == s->capspreads) {
        size_t cap = s->capspreads ? 2 * s->capspreads : 64;
        double *n = realloc(s->spreads, cap * sizeof(*n));
        if (!n)
            return;
        s->spreads = n;
        s->capspreads = cap;
    }
    s->spreads[s->nspreads++] = (double)iv->last_ns / 1e6;
}

/* A session starts test `test` of nint intervals. */
static void sim_note_start(struct sim *s, uint32_t test, uint64_t nint)
{
    if (s->ivl && test == s->cur_test) {
        s->cur_started++;
        return;
    }
    free(s->ivl);
    s->ivl = calloc(nint ? nint : 1, sizeof(*s->ivl));
    s->nivl = s->ivl ? nint : 0;
    s->cur_test = test;
    s->cur_started = 1;
}

static int sim_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* --- sessions ------------------------------------------------------------------------ */

static void sim_dial(struct sim_session *ss);
static void sim_check_done(struct sim *s);

static void sim_session_done(struct sim_session *ss)
{
    if (ss->state == SS_DONE)
        return;
    if (!ss->welcomed)
        ss->sim->pending--;
    ss->state = SS_DONE;
    ss->running = false;
    uv_timer_stop(&ss->retry);
    uv_timer_stop(&ss->prep);
    ss->sim->done++;
    sim_check_done(ss->sim);
}

static void sim_send_error(struct sim_session *ss, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void sim_send_error(struct sim_session *ss, int code, const char *fmt, ...)
{
    char text[PROTO_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    IOF_WARN("%s: %s", ss->name, text);
    proto_link_send_error(ss->link, code, "%s: %s", ss->name, text);
}

static void sim_send_hello(struct sim_session *ss)
{
    struct sim *s = ss->sim;
    struct proto_target_info ti = {.path = "/dev/sim0",
                                   .size = 1ull << 40,
                                   .logical_block_size = 512,
                                   .rotational = 0,
                                   .model = "iofleet simulated disk"};
    struct proto_msg m;

    proto_msg_init_hello(&m, PROTO_ROLE_AGENT, ss->name);
    if (s->heartbeat_ms)
        m.u.hello.heartbeat_ms = s->heartbeat_ms;
    m.u.hello.inventory.hostname = s->hostname;
    m.u.hello.inventory.cpus = 16;
    m.u.hello.inventory.memory_bytes = 64ull << 30;
    m.u.hello.inventory.kernel = s->uts.release;
    m.u.hello.inventory.ntargets = 1;
    m.u.hello.inventory.targets = &ti;
    proto_link_send(ss->link, &m);
}

/* What a busy 16-CPU node would report, as dynamo does (dynamo/cpustat.h). */
static const struct proto_cpu sim_cpu = {
    .valid = true, .busy_pct = 12.5, .user_pct = 4.0, .sys_pct = 8.5, .agent_pct = 0.8};

static void sim_send_result(struct sim_session *ss, bool interrupted)
{
    struct sim *s = ss->sim;
    uint64_t now = iof_now_ns();
    struct proto_msg m;

    proto_msg_init(&m, PROTO_MSG_RESULT);
    m.u.result.test = ss->test;
    m.u.result.interrupted = interrupted;
    m.u.result.measured_ns = !interrupted               ? ss->end - ss->measure_start
                             : now <= ss->measure_start ? 0
                             : now < ss->end            ? now - ss->measure_start
                                                        : ss->end - ss->measure_start;
    /* As if each worker kept a tenth of a core busy. */
    m.u.result.cpu_ns = m.u.result.measured_ns / 10 * ss->nworkers;
    m.u.result.started_first_ns = ss->start_ns;
    m.u.result.started_last_ns = ss->start_ns + 50 * IOF_NS_PER_US;
    m.u.result.cpu = sim_cpu;
    if (sim_body(s, ss, true, ss->next, &m.u.result) < 0) {
        sim_send_error(ss, -ENOMEM, "test %" PRIu32 ": out of memory", ss->test + 1);
        return;
    }
    if (!s->result_bytes) {
        struct iof_diag d = {{0}};
        uint8_t *frame;
        size_t len;
        if (proto_msg_encode_frame_flags(&m, PROTO_STATS_FRAME_MAX, 0, &frame, &len, &d) == 0) {
            s->result_bytes = len;
            free(frame);
        }
    }
    if (proto_link_send(ss->link, &m) == 0)
        ss->results++;
    ss->running = false;
}

/* End of interval k (0-based) on the local clock. */
static uint64_t sim_boundary(const struct sim_session *ss, uint64_t k)
{
    uint64_t b = ss->measure_start + (k + 1) * ss->interval_ns;
    return b < ss->end ? b : ss->end;
}

/* --- fan-out ---------------------------------------------------------------------------- */

static int sim_cmp_uintptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

static void sim_walk_tcp(uv_handle_t *h, void *arg)
{
    struct sim *s = arg;

    if (h->type != UV_TCP || uv_is_closing(h))
        return;
    if (s->nlive == s->caplive) {
        size_t cap = s->caplive ? 2 * s->caplive : 1024;
        uintptr_t *n = realloc(s->live, cap * sizeof(*n));
        if (!n)
            return; /* the handle is left out: its session falls back to the link */
        s->live = n;
        s->caplive = cap;
    }
    s->live[s->nlive++] = (uintptr_t)h;
}

/* Collects the loop's open TCP handles. A connection is freed by common/net.c
 * one loop turn before its link reports the close, so a session's conn
 * pointer alone does not prove the connection is still there; its handle
 * being open in the loop does (net.c's connection begins with its handle;
 * were it not so, nothing would match and every session would fall back to
 * proto_link_send). Called only while no connection is being made, so a freed
 * connection's address cannot belong to a new one. */
static void sim_collect_live(struct sim *s)
{
    s->nlive = 0;
    uv_walk(s->loop, sim_walk_tcp, s);
    qsort(s->live, s->nlive, sizeof(*s->live), sim_cmp_uintptr);
}

static bool sim_conn_live(const struct sim *s, const struct iof_conn *c)
{
    uintptr_t key = (uintptr_t)c;
    return c && bsearch(&key, s->live, s->nlive, sizeof(*s->live), sim_cmp_uintptr);
}

/* Sends interval k of ss's test: the shared frame written to its connection
 * when fan-out is on and the connection is live, else through the link.
 * Returns 0 or a negative error (the link then closes). */
static int sim_send_stats(struct sim *s, struct sim_session *ss, uint64_t k, bool live_known)
{
    struct iof_diag d = {{0}};
    struct proto_msg m;
    int r;

    proto_msg_init(&m, PROTO_MSG_STATS);
    m.u.stats.test = ss->test;
    m.u.stats.interval = k;
    m.u.stats.cpu = sim_cpu;
    r = sim_body(s, ss, false, 0, &m.u.stats);
    if (r < 0)
        return r;
    if (!live_known || !sim_conn_live(s, ss->conn)) {
        s->link_sends++;
        return proto_link_send(ss->link, &m);
    }
    if (!s->frame_valid || s->frame_test != ss->test || s->frame_interval != k ||
        s->frame_layout != ss->layout || s->frame_enc != ss->enc) {
        free(s->frame);
        s->frame = NULL;
        s->frame_valid = false;
        r = proto_msg_encode_frame_flags(&m, PROTO_FRAME_MAX_DEFAULT, ss->enc, &s->frame,
                                         &s->frame_len, &d);
        if (r) {
            IOF_ERROR("cannot encode stats: %s", d.msg);
            return r;
        }
        s->frame_valid = true;
        s->frame_test = ss->test;
        s->frame_interval = k;
        s->frame_layout = ss->layout;
        s->frame_enc = ss->enc;
    }
    s->fanout_writes++;
    s->fanout_bytes += s->frame_len;
    r = iof_conn_write(ss->conn, s->frame, s->frame_len);
    if (!r)
        proto_link_note_sent(ss->link); /* as proto_link_send: no heartbeat this period */
    return r;
}

/* --- interval boundaries ------------------------------------------------------------------ */

static void sim_tick(uv_timer_t *t);

/* Arms the tick for `due` (local monotonic ns) unless it fires sooner. */
static void sim_arm(struct sim *s, uint64_t due)
{
    uint64_t now = iof_now_ns(), ms;

    if (s->stopping || (s->tick_due && s->tick_due <= due))
        return;
    /* Timers have millisecond resolution and the loop's clock lags: round up;
     * sim_tick re-arms when it still fires early. Never 0: libuv before 1.45
     * runs a timer re-armed for 0 ms from its own callback again at once,
     * without ever reaching the I/O and close phases. */
    ms = due > now ? (due - now + IOF_NS_PER_MS - 1) / IOF_NS_PER_MS : 1;
    ms = ms ? ms : 1;
    s->tick_due = due;
    uv_timer_start(&s->tick, sim_tick, ms, 0);
}

/* Sessions whose reports one turn of the loop writes: between chunks the
 * loop reads and runs its timers, so a session whose report comes late in
 * a slow pass still sends its heartbeats, as an agent of its own would. */
#define SIM_TICK_CHUNK 1000

/* Sends every due interval of every running session, SIM_TICK_CHUNK
 * sessions per turn of the loop; then, in a second pass so that encoding
 * them does not hold back other sessions' last stats, the result of each
 * session past its last interval; then waits for the next boundary. */
static void sim_tick(uv_timer_t *t)
{
    struct sim *s = t->data;
    uint64_t now = iof_now_ns(), next = UINT64_MAX;
    bool live_known = false;
    unsigned end =
        s->tick_pos + SIM_TICK_CHUNK < s->count ? s->tick_pos + SIM_TICK_CHUNK : s->count;

    s->tick_due = 0;
    for (unsigned i = s->tick_pos; i < end; i++) {
        struct sim_session *ss = &s->sessions[i];
        if (!ss->running || !ss->link)
            continue;
        while (ss->next < ss->nint && now + SIM_BATCH_NS >= sim_boundary(ss, ss->next)) {
            if (!live_known && s->fanout && !s->pending) {
                sim_collect_live(s);
                live_known = true;
            }
            if (sim_send_stats(s, ss, ss->next, live_known) < 0) {
                /* The link is closing; its on_close ends the session. */
                ss->running = false;
                break;
            }
            sim_note_interval(s, ss, ss->next, sim_boundary(ss, ss->next), iof_now_ns());
            ss->next++;
        }
    }
    if (end < s->count && !s->stopping) {
        /* The next chunk at the loop's next turn (1 ms: libuv before 1.45
         * runs a 0 ms timer again before any I/O). */
        s->tick_pos = end;
        s->tick_due = now;
        uv_timer_start(&s->tick, sim_tick, 1, 0);
        return;
    }
    s->tick_pos = 0;
    for (unsigned i = 0; i < s->count; i++) {
        struct sim_session *ss = &s->sessions[i];
        if (!ss->running || !ss->link)
            continue;
        if (ss->next >= ss->nint)
            sim_send_result(ss, false);
        else if (sim_boundary(ss, ss->next) < next)
            next = sim_boundary(ss, ss->next);
    }
    if (next != UINT64_MAX)
        sim_arm(s, next);
}

static bool sim_group_selects(const struct iof_worker_cfg *g, const char *name)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i], "*") || !strcmp(g->nodes[i], name))
            return true;
    return g->nnodes == 0;
}

static void sim_drop_plan(struct sim_session *ss)
{
    if (!ss->have_plan)
        return;
    iof_plan_free(&ss->plan);
    free(ss->tests);
    ss->tests = NULL;
    ss->ntests = 0;
    ss->have_plan = false;
}

static void sim_take_plan(struct sim_session *ss, const struct proto_plan *pm)
{
    struct iof_diag d = {{0}};
    int r;

    if (ss->running) {
        sim_send_error(ss, IOF_EBUSY, "a plan cannot change while a test runs");
        return;
    }
    sim_drop_plan(ss);
    r = proto_plan_parse("plan", pm->text, pm->len, NULL, 0, &ss->plan, &d);
    if (r) {
        sim_send_error(ss, IOF_EPLAN, "%s", d.msg);
        return;
    }
    ss->have_plan = true;
    ss->tests = iof_plan_expand(&ss->plan, &ss->ntests);
    if (!ss->tests) {
        sim_drop_plan(ss);
        sim_send_error(ss, -ENOMEM, "out of memory for the plan");
    }
}

static void sim_start(struct sim_session *ss, const struct proto_start *st)
{
    struct sim *s = ss->sim;
    struct iof_run_cfg runc;
    const struct iof_run_cfg *run = &runc;
    size_t nw = 0, widest = 0, w = 0;
    uint32_t *nt;

    if (!ss->have_plan || ss->running || st->test >= ss->ntests) {
        sim_send_error(ss, IOF_EPROTO, "start of test %" PRIu32 " %s", st->test + 1,
                       !ss->have_plan ? "before any plan"
                       : ss->running  ? "while a test runs"
                                      : "beyond the plan");
        return;
    }
    /* The test's own timing: a spec may set its own duration and ramp. */
    runc = iof_test_run(&ss->plan, &ss->tests[st->test]);
    for (size_t g = 0; g < ss->plan.nworkers; g++) {
        struct iof_worker_cfg gc = iof_test_worker(&ss->plan, &ss->tests[st->test], g);
        if (!sim_group_selects(&gc, ss->name))
            continue;
        nw += gc.count;
        widest = gc.ntargets > widest ? gc.ntargets : widest;
    }
    nt = calloc(nw ? nw : 1, sizeof(*nt));
    if (!nt || sim_pool_ensure(s, widest) < 0) {
        free(nt);
        sim_send_error(ss, -ENOMEM, "test %" PRIu32 ": out of memory", st->test + 1);
        return;
    }
    for (size_t g = 0; g < ss->plan.nworkers; g++) {
        struct iof_worker_cfg gc = iof_test_worker(&ss->plan, &ss->tests[st->test], g);
        if (!sim_group_selects(&gc, ss->name))
            continue;
        for (uint32_t c = 0; c < gc.count; c++)
            nt[w++] = (uint32_t)gc.ntargets;
    }
    free(ss->ntargets);
    ss->ntargets = nt;
    ss->nworkers = nw;
    ss->test = st->test;
    ss->start_ns = (uint64_t)((int64_t)st->start_at_ns + st->offset_ns);
    ss->measure_start = ss->start_ns + run->ramp_ns;
    ss->end = ss->measure_start + run->duration_ns;
    ss->interval_ns = run->interval_ns;
    ss->nint = (run->duration_ns + run->interval_ns - 1) / run->interval_ns;
    ss->next = 0;
    ss->layout = 1469598103934665603ull; /* FNV-1a over the layout */
    for (size_t i = 0; i < nw; i++)
        ss->layout = (ss->layout ^ nt[i]) * 1099511628211ull;
    ss->layout = (ss->layout ^ nw) * 1099511628211ull;
    ss->running = true;
    ss->started++;
    sim_note_start(s, ss->test, ss->nint);
    sim_arm(s, sim_boundary(ss, 0));
}

/* --prepare-ms: the answer of a preparation that took that long (a real
 * agent writing its test files), unless the link went meanwhile. */
static void sim_on_prepared(uv_timer_t *t)
{
    struct sim_session *ss = t->data;
    struct proto_msg r;

    if (!ss->link)
        return;
    proto_msg_init(&r, PROTO_MSG_PREPARED);
    proto_link_send(ss->link, &r);
}

static void sim_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg)
{
    struct sim_session *ss = arg;
    struct sim *s = ss->sim;
    struct iof_diag d = {{0}};
    struct proto_msg r;

    if (!ss->welcomed) {
        uint32_t hb = s->heartbeat_ms ? s->heartbeat_ms : PROTO_HEARTBEAT_MS_DEFAULT;
        if (m->type != PROTO_MSG_HELLO || m->u.hello.role != PROTO_ROLE_MANAGER) {
            proto_link_send_error(l, IOF_EPROTO, "%s: expected the manager's hello, got %s",
                                  ss->name, proto_msg_type_name(m->type));
            proto_link_close(l, IOF_EPROTO, "protocol error");
            return;
        }
        if (proto_version_compatible(m->u.hello.major, m->u.hello.minor, &d)) {
            proto_link_send_error(l, IOF_EVERSION, "agent %s: %s", ss->name, d.msg);
            proto_link_close(l, IOF_EVERSION, "incompatible protocol version");
            return;
        }
        ss->welcomed = true;
        ss->state = SS_READY;
        /* As dynamo: the binary body to a manager of protocol 1.1 or later,
         * one histogram per node from 1.3 on. */
        ss->enc = s->json_stats ? 0
                  : !proto_stats_binary_ok(m->u.hello.minor)
                      ? 0
                      : PROTO_ENCODE_STATS_BINARY | (proto_stats_node_hist_ok(m->u.hello.minor)
                                                         ? PROTO_ENCODE_STATS_NODE_HIST
                                                         : 0);
        proto_link_set_encode_flags(l, ss->enc);
        s->pending--;
        if (ss->redialing) {
            ss->redialing = false;
            if (++s->rewelcomed == s->redials)
                IOF_INFO("all %u redialled sessions welcomed again", s->redials);
        }
        proto_link_set_deadline(l, 0, NULL);
        /* As dynamo: the larger of both periods, the manager's offer (the
         * sparse one of 1.8, else 1.5's) standing for its heartbeat_ms, and
         * the welcome says which, with the sparse offer's limit. */
        {
            uint32_t limit, asked;
            hb =
                proto_link_heartbeat_agree(&m->u.hello, hb, PROTO_HEARTBEAT_MS_MAX, &limit, &asked);
            proto_msg_init(&r, PROTO_MSG_WELCOME);
            r.u.welcome.heartbeat_ms = hb;
            r.u.welcome.heartbeat_limit_ms = limit;
            proto_link_send(l, &r);
            proto_link_set_established(l, hb, limit);
        }
        if (++s->welcomed == s->count) {
            s->t_all_welcomed = iof_now_ns();
            IOF_INFO("all %u sessions welcomed %.3f s after the first dial", s->count,
                     (double)(s->t_all_welcomed - s->t_begin) / 1e9);
        }
        return;
    }
    switch (m->type) {
    case PROTO_MSG_PLAN:
        sim_take_plan(ss, &m->u.plan);
        break;
    case PROTO_MSG_PREPARE:
        if (!ss->have_plan || ss->running || uv_is_active((uv_handle_t *)&ss->prep)) {
            sim_send_error(ss, IOF_EPROTO, "prepare %s",
                           !ss->have_plan ? "before any plan" : "while busy");
            break;
        }
        if (s->prepare_ms) {
            uv_timer_start(&ss->prep, sim_on_prepared, s->prepare_ms, 0);
            break;
        }
        proto_msg_init(&r, PROTO_MSG_PREPARED);
        proto_link_send(l, &r);
        break;
    case PROTO_MSG_CLOCK_PROBE:
        proto_msg_init(&r, PROTO_MSG_CLOCK_REPLY);
        r.u.clock_reply.seq = m->u.clock_probe.seq;
        r.u.clock_reply.t0_ns = m->u.clock_probe.t0_ns;
        r.u.clock_reply.agent_ns = iof_now_ns();
        proto_link_send(l, &r);
        break;
    case PROTO_MSG_SETUP:
        /* Nothing to set up: ready at once. */
        proto_msg_init(&r, PROTO_MSG_READY);
        r.u.ready.test = m->u.setup.test;
        proto_link_send(l, &r);
        break;
    case PROTO_MSG_START:
        sim_start(ss, &m->u.start);
        break;
    case PROTO_MSG_STOP:
        if (ss->running)
            sim_send_result(ss, true);
        break;
    case PROTO_MSG_BYE:
        ss->bye = true;
        proto_link_close(l, 0, NULL);
        break;
    case PROTO_MSG_ERROR:
        IOF_WARN("%s: manager: %s", ss->name, m->u.error.message);
        break;
    default:
        proto_link_send_error(l, IOF_EPROTO, "%s: unexpected %s", ss->name,
                              proto_msg_type_name(m->type));
        break;
    }
}

static void sim_on_retry(uv_timer_t *t)
{
    sim_dial(t->data);
}

/* Retries a dial that failed before any session began, until the deadline. */
static void sim_retry_or_give_up(struct sim_session *ss, const char *why)
{
    struct sim *s = ss->sim;

    if (!s->stopping && iof_now_ns() < s->connect_deadline) {
        ss->state = SS_DIALING;
        uv_timer_start(&ss->retry, sim_on_retry, iof_backoff_next(&ss->backoff), 0);
        return;
    }
    if (!s->stopping && s->lost++ < SIM_LOST_LOGGED)
        IOF_WARN("%s: cannot reach the manager %s:%u: %s", ss->name, s->host, s->port, why);
    sim_session_done(ss);
}

static void sim_on_link_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct sim_session *ss = arg;
    struct sim *s = ss->sim;
    (void)l;

    ss->link = NULL;
    ss->conn = NULL;
    uv_timer_stop(&ss->prep);
    if (!ss->welcomed) {
        /* Refused, or the manager was not ready: a real agent retries. */
        if (err == IOF_EVERSION || err == IOF_EPROTO) {
            IOF_WARN("%s: %s", ss->name, why);
            s->lost++;
            sim_session_done(ss);
            return;
        }
        sim_retry_or_give_up(ss, why);
        return;
    }
    if (s->redial && !ss->bye && !s->stopping) {
        /* A lost link: dial again, as dynamo does, with the ticket. */
        if (s->redials < SIM_LOST_LOGGED)
            IOF_WARN("%s: session ended%s: %s; redialling", ss->name,
                     ss->running ? " mid-test" : "", why);
        if (ss->running) {
            ss->running = false;
            ss->aborted++;
        }
        ss->welcomed = false;
        ss->redialing = true;
        ss->state = SS_DIALING;
        s->pending++;
        s->redials++;
        if (s->connect_deadline < iof_now_ns() + s->connect_window_ns)
            s->connect_deadline = iof_now_ns() + s->connect_window_ns;
        iof_backoff_reset(&ss->backoff);
        uv_timer_start(&ss->retry, sim_on_retry, iof_backoff_next(&ss->backoff), 0);
        return;
    }
    if ((err || ss->running) && !s->stopping && s->lost++ < SIM_LOST_LOGGED)
        IOF_WARN("%s: session ended%s: %s", ss->name, ss->running ? " mid-test" : "", why);
    sim_session_done(ss);
}

/* A dial ended (either way): the next waiting one goes. */
static void sim_dial_done(struct sim *s)
{
    if (s->in_flight)
        s->in_flight--;
    while (s->nwait && (!s->max_dials || s->in_flight < s->max_dials)) {
        struct sim_session *next = s->wait[s->wait_head];
        s->wait_head = (s->wait_head + 1) % s->count;
        s->nwait--;
        sim_dial(next);
    }
}

static void sim_on_connect(struct iof_conn *c, int err, void *arg)
{
    static const struct proto_link_cbs cbs = {.on_msg = sim_on_msg, .on_close = sim_on_link_close};
    struct sim_session *ss = arg;

    sim_dial_done(ss->sim);

    if (err && ss->tls) {
        struct sim *s = ss->sim;
        const char *why = iof_conn_error(c)[0] ? iof_conn_error(c) : iof_strerror(err);
        if (err == -ECONNREFUSED) { /* TCP: the manager is not listening yet */
            sim_retry_or_give_up(ss, why);
            return;
        }
        /* Retried whatever the cause, as dynamo does: -EACCES also covers a
         * manager that reset the connection after our Finished (e.g. its
         * handshake timeout under a storm), not only a refused certificate. */
        if (s->tls_failures++ < SIM_TLS_FAIL_LOGGED)
            IOF_WARN("%s: TLS connection failed: %s", ss->name, why);
        sim_retry_or_give_up(ss, why);
        return;
    }
    if (err) {
        sim_retry_or_give_up(ss, uv_strerror(err));
        return; /* the connection's on_close follows, and does nothing */
    }
    if (ss->sim->stopping) {
        iof_conn_close(c, 0);
        sim_session_done(ss);
        return;
    }
    if (ss->tls) {
        if (iof_conn_tls_resumed(c))
            ss->sim->tls_resumed++;
        else
            ss->sim->tls_full++;
    }
    ss->conn = c;
    ss->link = proto_link_new(ss->sim->loop, c, &cbs, ss);
    if (!ss->link) {
        IOF_ERROR("%s: out of memory", ss->name);
        ss->sim->lost++;
        sim_session_done(ss);
        return;
    }
    ss->state = SS_HELLO;
    proto_link_set_deadline(ss->link, SIM_HELLO_DEADLINE_MS, "hello from the manager");
    sim_send_hello(ss);
}

static void sim_on_dial_close(struct iof_conn *c, int err, void *arg)
{
    (void)c;
    (void)err;
    (void)arg;
}

static void sim_dial(struct sim_session *ss)
{
    static const struct iof_conn_cbs cbs = {.on_connect = sim_on_connect,
                                            .on_close = sim_on_dial_close};
    struct iof_conn *c;
    int r;

    if (ss->sim->stopping) {
        sim_session_done(ss);
        return;
    }
    ss->state = SS_DIALING;
    if (ss->sim->max_dials && ss->sim->in_flight >= ss->sim->max_dials) {
        struct sim *s = ss->sim;
        s->wait[(s->wait_head + s->nwait++) % s->count] = ss;
        return;
    }
    ss->sim->in_flight++;
    r = ss->tls ? iof_conn_connect_tls(ss->sim->loop, ss->sim->host, ss->sim->port, ss->tls, &cbs,
                                       ss, &c)
                : iof_conn_connect(ss->sim->loop, ss->sim->host, ss->sim->port, &cbs, ss, &c);
    if (r < 0) {
        ss->sim->in_flight--;
        sim_retry_or_give_up(ss, uv_strerror(r));
    }
}

/* --- the process ------------------------------------------------------------------------ */

static void sim_close_all(struct sim *s)
{
    uv_close((uv_handle_t *)&s->sigint, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    uv_close((uv_handle_t *)&s->sigusr1, NULL);
    uv_close((uv_handle_t *)&s->sigusr2, NULL);
    uv_close((uv_handle_t *)&s->tick, NULL);
    for (unsigned i = 0; i < s->count; i++) {
        uv_close((uv_handle_t *)&s->sessions[i].retry, NULL);
        uv_close((uv_handle_t *)&s->sessions[i].prep, NULL);
    }
}

static void sim_check_done(struct sim *s)
{
    if (s->done == s->count)
        sim_close_all(s);
}

static void sim_on_signal(uv_signal_t *h, int sig)
{
    struct sim *s = h->data;

    IOF_INFO("signal %d: closing %u sessions", sig, s->count - s->done);
    if (s->stopping)
        return;
    s->stopping = true;
    uv_timer_stop(&s->tick);
    for (unsigned i = 0; i < s->count; i++) {
        struct sim_session *ss = &s->sessions[i];
        if (ss->link)
            proto_link_close(ss->link, 0, "simulated agent stopping");
        else if (ss->state == SS_DIALING && uv_is_active((uv_handle_t *)&ss->retry))
            sim_session_done(ss);
    }
}

/* SIGUSR1: the connection of every second welcomed session (the 1st, 3rd,
 * ...) is cut (reset), as a lost network would; SIGUSR2 cuts the others
 * (2nd, 4th, ...). With --redial they come back. */
static void sim_on_cut(uv_signal_t *h, int sig)
{
    struct sim *s = h->data;
    unsigned n = 0;
    if (s->stopping)
        return;
    for (unsigned i = sig == SIGUSR2; i < s->count; i += 2) {
        struct sim_session *ss = &s->sessions[i];
        if (ss->link && ss->welcomed) {
            proto_link_close(ss->link, -ECONNRESET, "link cut (SIGUSR1)");
            n++;
        }
    }
    IOF_INFO("%s: cut %u sessions%s", sig == SIGUSR2 ? "SIGUSR2" : "SIGUSR1", n,
             s->redial ? "; they redial" : "");
}

/* Loads every session's client context from s->tls_dir. Returns 0 or -1
 * (reported); the caller frees what was loaded. */
static int sim_tls_load(struct sim *s)
{
    uint64_t t0 = iof_now_ns();
    size_t cap = strlen(s->tls_dir) + PROTO_NAME_MAX + 16;
    char *ca = malloc(cap), *cert = malloc(cap), *key = malloc(cap);
    int rc = -1;

    if (!ca || !cert || !key) {
        fprintf(stderr, "iof_simagent: out of memory\n");
        goto out;
    }
    snprintf(ca, cap, "%s/ca.pem", s->tls_dir);
    for (unsigned i = 0; i < s->count; i++) {
        struct sim_session *ss = &s->sessions[i];
        struct iof_diag d = {{0}};
        const char *own;

        snprintf(cert, cap, "%s/%s.pem", s->tls_dir, ss->name);
        snprintf(key, cap, "%s/%s-key.pem", s->tls_dir, ss->name);
        if (iof_tls_config_load(NULL, ca, cert, key, false, &ss->tls, &d)) {
            fprintf(stderr, "iof_simagent: --tls-dir: %s\n", d.msg);
            goto out;
        }
        own = iof_tls_ctx_own_name(ss->tls);
        if (!own || strcasecmp(own, ss->name)) {
            fprintf(stderr, "iof_simagent: %s is issued to '%s', not to %s\n", cert,
                    own ? own : "(no usable name)", ss->name);
            goto out;
        }
    }
    s->tls_load_s = (double)(iof_now_ns() - t0) / 1e9;
    IOF_INFO("loaded %u TLS client contexts from %s in %.3f s", s->count, s->tls_dir,
             s->tls_load_s);
    rc = 0;
out:
    free(ca);
    free(cert);
    free(key);
    return rc;
}

/* Drops the sessions' contexts (connections still open keep their own
 * references). */
static void sim_tls_free(struct sim *s)
{
    for (unsigned i = 0; i < s->count; i++) {
        iof_tls_ctx_free(s->sessions[i].tls);
        s->sessions[i].tls = NULL;
    }
}

static void sim_usage(FILE *f)
{
    fputs("usage: iof_simagent --manager HOST:PORT [--count N] [--name-prefix P]\n"
          "                    [--heartbeat-ms MS] [--connect-timeout S] [--dials-at-once N] "
          "[--seed N]\n"
          "                    [--tls-dir DIR] [--redial] [--prepare-ms MS] [--encode-each]\n"
          "                    [--json-stats]\n"
          "                    [--verbose|--quiet]\n"
          "\n"
          "  --manager          the manager to dial (iofleet run --listen)\n"
          "  --count            simulated agents, one session each (default 1)\n"
          "  --name-prefix      node names are PREFIX-00001... (default sim)\n"
          "  --heartbeat-ms     heartbeat period offered in hello (default 1000)\n"
          "  --connect-timeout  seconds to keep retrying refused dials (default 60)\n"
          "  --dials-at-once    dials (TCP connect and TLS handshake) in flight at once, the\n"
          "                     others waiting their turn (default 0: all at once); a real\n"
          "                     fleet has a CPU per agent, this process one loop for all\n"
          "  --seed             seed of the synthetic latencies (default 1)\n"
          "  --tls-dir          dial over TLS: DIR/ca.pem and DIR/NAME.pem, DIR/NAME-key.pem\n"
          "                     per session (iofleet pki init DIR --agent NAME...)\n"
          "  --redial           a welcomed session whose link is lost dials again (TLS: with\n"
          "                     the manager's session ticket); SIGUSR1 cuts the links of\n"
          "                     the 1st, 3rd, ... session, SIGUSR2 of the 2nd, 4th, ...\n"
          "  --prepare-ms       answer each prepare MS ms later, as an agent writing its\n"
          "                     test files (default 0: at once)\n"
          "  --encode-each      encode every stats message in its session (no fan-out)\n"
          "  --json-stats       send stats as JSON even to a manager that reads the binary\n"
          "                     body (protocol 1.1), to compare both\n"
          "  --verbose          log every interval's send spread\n",
          f);
}

static bool sim_parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return s[0] >= '0' && s[0] <= '9' && !*end && !errno && *out <= max;
}

int main(int argc, char **argv)
{
    struct sim s = {.prefix = "sim", .count = 1};
    const char *manager = NULL;
    unsigned long long v, seed = 1, connect_s = 60;
    enum iof_log_level level = IOF_LOG_INFO;
    bool verbose = false, fanout = true;
    struct iof_diag d = {{0}};
    size_t ok = 0, results = 0;
    int rc;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            sim_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--manager") && val) {
            manager = argv[++i];
        } else if (!strcmp(a, "--count") && val && sim_parse_uint(val, SIM_MAX_COUNT, &v) && v) {
            s.count = (unsigned)v;
            i++;
        } else if (!strcmp(a, "--name-prefix") && val) {
            s.prefix = argv[++i];
        } else if (!strcmp(a, "--heartbeat-ms") && val &&
                   sim_parse_uint(val, PROTO_HEARTBEAT_MS_MAX, &v) && v >= PROTO_HEARTBEAT_MS_MIN) {
            s.heartbeat_ms = (uint32_t)v;
            i++;
        } else if (!strcmp(a, "--dials-at-once") && val && sim_parse_uint(val, 1000000, &v)) {
            s.max_dials = (unsigned)v;
            i++;
        } else if (!strcmp(a, "--connect-timeout") && val && sim_parse_uint(val, 86400, &v)) {
            connect_s = v;
            i++;
        } else if (!strcmp(a, "--seed") && val && sim_parse_uint(val, UINT64_MAX, &v)) {
            seed = v;
            i++;
        } else if (!strcmp(a, "--tls-dir") && val) {
            s.tls_dir = argv[++i];
        } else if (!strcmp(a, "--redial")) {
            s.redial = true;
        } else if (!strcmp(a, "--prepare-ms") && val && sim_parse_uint(val, 3600000, &v)) {
            s.prepare_ms = v;
            i++;
        } else if (!strcmp(a, "--encode-each")) {
            fanout = false;
        } else if (!strcmp(a, "--json-stats")) {
            s.json_stats = true;
        } else if (!strcmp(a, "--verbose")) {
            verbose = true;
        } else if (!strcmp(a, "--quiet")) {
            level = IOF_LOG_ERROR;
        } else {
            fprintf(stderr, "iof_simagent: unknown, incomplete or invalid option '%s'\n", a);
            sim_usage(stderr);
            return 2;
        }
    }
    iof_log_init("iof_simagent", level);
    if (!manager) {
        fprintf(stderr, "iof_simagent: --manager HOST:PORT is required\n");
        sim_usage(stderr);
        return 2;
    }
    if (iof_addr_parse(manager, s.host, sizeof(s.host), IOF_DEFAULT_PORT, &s.port, &d)) {
        fprintf(stderr, "iof_simagent: --manager %s: %s\n", manager, d.msg);
        return 2;
    }
    {
        char probe[PROTO_NAME_MAX + 16];
        snprintf(probe, sizeof(probe), "%s-%05u", s.prefix, s.count);
        if (proto_name_check(probe, &d)) {
            fprintf(stderr, "iof_simagent: --name-prefix '%s': %s\n", s.prefix, d.msg);
            return 2;
        }
    }
    if (bench_raise_nofile("iof_simagent", s.count) < 0)
        return 1;
    s.sessions = calloc(s.count, sizeof(*s.sessions));
    s.wait = calloc(s.count, sizeof(*s.wait));
    if (!s.sessions || !s.wait || sim_stats_init(&s, seed, verbose) < 0) {
        fprintf(stderr, "iof_simagent: out of memory\n");
        return 1;
    }
    if (gethostname(s.hostname, sizeof(s.hostname) - 1) < 0 || !s.hostname[0])
        snprintf(s.hostname, sizeof(s.hostname), "localhost");
    uname(&s.uts);
    signal(SIGPIPE, SIG_IGN);
    if (!verbose && level == IOF_LOG_INFO)
        iof_log_init("iof_simagent", IOF_LOG_WARN);

    s.loop = uv_default_loop();
    s.fanout = fanout;
    s.pending = s.count;
    uv_timer_init(s.loop, &s.tick);
    s.tick.data = &s;
    uv_signal_init(s.loop, &s.sigint);
    uv_signal_init(s.loop, &s.sigterm);
    s.sigint.data = &s;
    s.sigterm.data = &s;
    uv_signal_start(&s.sigint, sim_on_signal, SIGINT);
    uv_signal_start(&s.sigterm, sim_on_signal, SIGTERM);
    uv_signal_init(s.loop, &s.sigusr1);
    s.sigusr1.data = &s;
    uv_signal_start(&s.sigusr1, sim_on_cut, SIGUSR1);
    uv_signal_init(s.loop, &s.sigusr2);
    s.sigusr2.data = &s;
    uv_signal_start(&s.sigusr2, sim_on_cut, SIGUSR2);
    for (unsigned i = 0; i < s.count; i++) {
        struct sim_session *ss = &s.sessions[i];
        ss->sim = &s;
        snprintf(ss->name, sizeof(ss->name), "%s-%05u", s.prefix, i + 1);
        uv_timer_init(s.loop, &ss->retry);
        uv_timer_init(s.loop, &ss->prep);
        ss->prep.data = ss;
        iof_backoff_init(&ss->backoff, IOF_REDIAL_MIN_MS, IOF_REDIAL_MAX_MS,
                         uv_hrtime() ^ ((uint64_t)i << 40) ^ (uint64_t)getpid());
        ss->retry.data = ss;
    }
    if (s.tls_dir && sim_tls_load(&s) < 0) {
        sim_tls_free(&s);
        return 1;
    }
    s.t_begin = iof_now_ns();
    s.connect_window_ns = connect_s * IOF_NS_PER_S;
    s.connect_deadline = s.t_begin + s.connect_window_ns;
    /* All at once, as a fleet restarting together would. */
    for (unsigned i = 0; i < s.count; i++)
        sim_dial(&s.sessions[i]);
    uv_run(s.loop, UV_RUN_DEFAULT);
    uv_loop_close(s.loop);

    for (unsigned i = 0; i < s.count; i++) {
        struct sim_session *ss = &s.sessions[i];
        ok += ss->welcomed && ss->started && ss->results + ss->aborted == ss->started &&
              ss->results > 0;
        results += ss->results;
        sim_drop_plan(ss);
        free(ss->ntargets);
    }
    {
        double med = 0, max = 0;
        if (s.nspreads) {
            qsort(s.spreads, s.nspreads, sizeof(*s.spreads), sim_cmp_double);
            med = s.nspreads % 2 ? s.spreads[s.nspreads / 2]
                                 : (s.spreads[s.nspreads / 2 - 1] + s.spreads[s.nspreads / 2]) / 2;
            max = s.spreads[s.nspreads - 1];
        }
        /* One stable line for scripts (printed whatever the log level). */
        printf("iof_simagent: sessions %u welcomed %u complete %zu results %zu lost %u "
               "connect_s %.3f intervals %zu send_spread_ms median %.3f max %.3f "
               "fanout_writes %" PRIu64 " link_sends %" PRIu64
               " stats_body %s stats_bytes %.0f result_bytes %zu\n",
               s.count, s.welcomed, ok, results, s.lost,
               s.t_all_welcomed ? (double)(s.t_all_welcomed - s.t_begin) / 1e9 : -1.0, s.nspreads,
               med, max, s.fanout_writes, s.link_sends,
               !s.frame_enc                                 ? "json"
               : s.frame_enc & PROTO_ENCODE_STATS_NODE_HIST ? "binary-node"
                                                            : "binary",
               s.fanout_writes ? (double)s.fanout_bytes / (double)s.fanout_writes : 0.0,
               s.result_bytes);
        if (s.tls_dir)
            printf("iof_simagent: tls_load_s %.3f tls_failures %u tls_full %u tls_resumed %u\n",
                   s.tls_load_s, s.tls_failures, s.tls_full, s.tls_resumed);
        if (s.redial)
            printf("iof_simagent: redials %u rewelcomed %u\n", s.redials, s.rewelcomed);
    }
    sim_tls_free(&s);
    rc = ok == s.count ? 0 : 1;
    free(s.sessions);
    free(s.wait);
    free(s.pool);
    free(s.totals);
    free(s.scratch);
    free(s.ivl);
    free(s.spreads);
    free(s.frame);
    free(s.live);
    return rc;
}
