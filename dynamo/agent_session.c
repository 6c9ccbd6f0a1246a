/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/agent_session.c - a manager session's lifecycle: its messages, the
 * hello held while a previous session stops, its close and its freeing. */
#include "dynamo/agent_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- session lifecycle ----------------------------------------------------------- */

static void session_on_handle_closed(uv_handle_t *h)
{
    struct session *s = h->data;
    s->open_handles--;
    dyn_session_maybe_free(s);
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

    dyn_session_drop_ready(s);
    if (s->dt || s->starting || s->preparing) {
        dyn_session_send_error(s, IOF_EBUSY,
                               "%s: cannot clean while a test or its preparation runs", s->a->name);
        return;
    }
    rc = dyn_clean_workdir(s->a->scope, &r, &d);
    if (rc) {
        dyn_clean_report_free(&r);
        dyn_session_send_error(s, rc, "%s: clean: %s", s->a->name, d.msg);
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

void dyn_session_maybe_free(struct session *s)
{
    struct agent *a = s->a;

    if (s->open_handles || s->preparing || s->starting || s->link)
        return;
    session_cleanup(s);
    free(s->created);
    free(s->places);
    free(s->place_str);
    dyn_session_drop_plan(s);
    pthread_mutex_destroy(&s->prep_lock);
    free(s->zeros);
    free(s->rates);
    free(s);
    a->allocated--;
    if (a->stopping && !a->allocated)
        dyn_agent_shutdown(a);
    /* Idle again (after a session, or a flood of bad connections): give
     * the memory back rather than keep the peak. */
    if (!a->sessions && !a->active)
        dyn_os_trim_memory();
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
    h.u.hello.heartbeat_offer_ms = s->hello_heartbeat_offer_ms;
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
    s->hello_heartbeat_offer_ms = m->u.hello.heartbeat_offer_ms;
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
        dyn_session_send_hello(s);
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
             * manager's is its offer when both speak 1.5 (a manager with
             * no period set: 1 s to an older agent, PROTO_HEARTBEAT_MS_OFFER
             * to this one). The welcome tells the manager the period agreed. */
            uint32_t mine = a->o->heartbeat_ms ? a->o->heartbeat_ms : PROTO_HEARTBEAT_MS_DEFAULT;
            uint32_t max = mine > AGENT_HEARTBEAT_MAX_MS ? mine : AGENT_HEARTBEAT_MAX_MS;
            uint32_t limit, asked;
            uint32_t hb = proto_link_heartbeat_agree(&m->u.hello, mine, max, &limit, &asked);
            struct proto_msg w;
            if (asked)
                IOF_WARN("manager '%s' asked for a heartbeat every %u ms: capped at this agent's "
                         "maximum, %u ms",
                         s->manager, asked, max);
            proto_msg_init(&w, PROTO_MSG_WELCOME);
            w.u.welcome.heartbeat_ms = hb;
            w.u.welcome.heartbeat_limit_ms = limit;
            proto_link_send(l, &w);
            proto_link_set_established(l, hb, limit);
            {
                char lim[32] = "";
                if (limit)
                    snprintf(lim, sizeof(lim), ", limit %u ms", limit);
                IOF_INFO("session with manager '%s' (%s), heartbeat %u ms%s", s->manager,
                         proto_link_peer(l), hb, lim);
            }
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
        dyn_session_take_plan(s, &m->u.plan);
        break;
    case PROTO_MSG_PREPARE:
        dyn_session_prepare(s, &m->u.prepare);
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
        dyn_session_setup_test(s, &m->u.setup);
        break;
    case PROTO_MSG_START:
        dyn_session_start_test(s, &m->u.start);
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
        dyn_session_drop_ready(s);
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
void dyn_agent_close_inventory(struct agent *a)
{
    dyn_inv_cache_close(a->inv);
    a->inv = NULL;
    uv_close((uv_handle_t *)&a->inv_timer, NULL);
    uv_close((uv_handle_t *)&a->inv_async, NULL);
}

/* Closes the agent's own handles once every session is gone: the loop then
 * ends. Idempotent. */
void dyn_agent_shutdown(struct agent *a)
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
    dyn_agent_close_stop(a);
    uv_close((uv_handle_t *)&a->reconnect, NULL);
    uv_close((uv_handle_t *)&a->hs_log_timer, NULL);
    dyn_agent_close_inventory(a);
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

void dyn_session_on_close(struct proto_link *l, int err, const char *why, void *arg)
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
        dyn_session_abort_test(s);
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
     * test files removed), in dyn_session_maybe_free. */
    if (!a->stopping && a->o->manager && !a->active) {
        uv_timer_start(&a->reconnect, dyn_agent_on_reconnect, iof_backoff_next(&a->backoff), 0);
    }
    dyn_session_maybe_free(s);
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

struct session *dyn_session_new(struct agent *a, struct iof_conn *c)
{
    static const struct proto_link_cbs cbs = {.on_msg = session_on_msg,
                                              .on_close = dyn_session_on_close};
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
    uv_async_init(a->loop, &s->prep_async, dyn_prep_on_async);
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
    dyn_session_hello_soon(s);
    return s;
}
