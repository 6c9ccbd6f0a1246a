/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/agent_int.h - internal to the agent (dynamo/agent*.c): its limits, the
 * agent and session structures, and the calls its files make into each other
 * (dyn_agent_*, dyn_session_*, dyn_prep_*: internal, never called from
 * outside the agent).
 * Everything runs on the agent's loop thread, except what can block (writing
 * test files, starting a test's threads and buffers, joining and freeing a
 * stopped test): that runs on libuv worker threads, so the loop keeps
 * heartbeats and new connections flowing while a device hangs. */
#ifndef IOF_DYNAMO_AGENT_INT_H
#define IOF_DYNAMO_AGENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "dynamo/agent.h"
#include "dynamo/budget.h"
#include "dynamo/clean.h"
#include "dynamo/cpustat.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "common/tls.h"
#include "dynamo/engine.h"
#include "dynamo/inventory.h"
#include "dynamo/os/os.h"
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
    uint32_t hello_heartbeat_offer_ms;
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
    uv_async_t stop_async; /* dyn_agent_request_stop(), from any thread */
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

/* listening and dialling (dynamo/agent.c) */
void dyn_agent_on_reconnect(uv_timer_t *t);
void dyn_agent_close_stop(struct agent *a);
int dyn_agent_check_target(const struct agent *a, const struct iof_target_cfg *cfg,
                           struct iof_diag *d);

/* sending (dynamo/agent_send.c) */
void dyn_session_send_error(struct session *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void dyn_session_send_hello(struct session *s);
void dyn_agent_on_inventory(uv_async_t *h);
void dyn_session_hello_soon(struct session *s);

/* running a test and tearing it down (dynamo/agent_test.c) */
int dyn_session_check_budget(struct session *s, const struct iof_test *t, struct iof_diag *d);
void dyn_session_drop_ready(struct session *s);
void dyn_session_setup_test(struct session *s, const struct proto_start *su);
void dyn_session_start_test(struct session *s, const struct proto_start *st);
void dyn_session_abort_test(struct session *s);

/* preparation and the plan (dynamo/agent_prep.c) */
void dyn_prep_on_async(uv_async_t *h);
void dyn_session_prepare(struct session *s, const struct proto_prepare *pm);
void dyn_session_drop_plan(struct session *s);
void dyn_session_take_plan(struct session *s, const struct proto_plan *pm);

/* session lifecycle (dynamo/agent_session.c) */
void dyn_session_maybe_free(struct session *s);
void dyn_agent_close_inventory(struct agent *a);
void dyn_agent_shutdown(struct agent *a);
void dyn_session_on_close(struct proto_link *l, int err, const char *why, void *arg);
struct session *dyn_session_new(struct agent *a, struct iof_conn *c);

#endif
