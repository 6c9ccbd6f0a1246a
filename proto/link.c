/* SPDX-License-Identifier: Apache-2.0 */
/* proto/link.c - a framed, heartbeated message link over one connection:
 * frame decoding into messages, sending, heartbeats and the lost-peer rule,
 * shared by the manager and the agent.
 *
 * Heartbeat ticks: the links of a loop with the same period share
 * LINK_HB_SLOTS repeating timers (a slot per phase of the period: a link
 * joins the slot of the moment it is established), not a timer each. With
 * a timer per link, 10,000 links were 10,000 repeating timers, and libuv's
 * timer heap, reordered at each of their 10,000 firings a second, took a
 * sixth of a manager's CPU; a slot's tick walks its own list. A slot's
 * timer runs only while it has links, so a lone agent link costs one.
 * The lost-peer verdict falls at the silence limit itself: at a tick, or,
 * when the limit comes before the link's next tick, by the link's one-shot
 * silence timer (armed only then: rarely, for a live peer). */
#include "proto/link.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "proto/version.h"

/* A link's place in a circular list with a sentinel (its heartbeat slot's,
 * its loop's links with deferred messages); linked to itself when in none. */
struct link_node {
    struct link_node *prev, *next;
};

#define LINK_HB_SLOTS 32

struct hb_group;

struct hb_slot {
    uv_timer_t timer;
    struct link_node head; /* sentinel of a circular list */
    unsigned n;
    struct hb_group *g;
    uint64_t last_walk_ns; /* its last tick or catch-up (hb_catch_up) */
};

/* The links of one loop with one period. */
struct hb_group {
    uv_loop_t *loop;
    uint32_t hb_ms;
    unsigned nlinks;
    unsigned open; /* slot timers not closed yet */
    struct hb_group *next;
    struct hb_slot slot[LINK_HB_SLOTS];
};

/* Each thread's loops' groups (a loop runs in one thread). */
static _Thread_local struct hb_group *hb_groups;
/* Before this, no slot of this thread's groups can be overdue. */
static _Thread_local uint64_t hb_catch_up_ns;

struct proto_link {
    uv_loop_t *loop;
    struct iof_conn *conn;
    struct proto_link_cbs cbs;
    void *arg;
    struct proto_decoder dec;
    struct link_node hb;       /* in hb_slot's list while established */
    struct hb_slot *hb_slot;   /* heartbeat send + silence check; NULL: none */
    uv_timer_t deadline_timer; /* one-shot deadline for the next message */
    uv_timer_t silence_timer;  /* the silence verdict due before the next tick */
    char deadline_what[64];
    uint32_t hb_ms;
    uint64_t limit_ns; /* silent this long: the peer is lost (link_sparse) */
    uint64_t hb_seq;
    uint64_t last_rx_ns;
    uint64_t last_tx_ns; /* when a frame other than a tick's heartbeat was last written */
    uint64_t last_hb_ns; /* when link_on_hb last ran */
    bool hb_deferred;    /* the last tick put its silence verdict off */
    bool established;
    bool closing;
    int close_err;
    char why[sizeof(((struct iof_diag *)0)->msg)];
    unsigned open_handles;
    char peer[80];
    bool loopback;
    char hello_name[PROTO_NAME_MAX + 1]; /* of a hello refused for its version */
    unsigned decode_flags;               /* PROTO_DECODE_* */
    unsigned encode_flags;               /* PROTO_ENCODE_* */
    /* Deferred messages: the types (1u << PROTO_MSG_*), the loop's queue
     * (NULL: this link defers none), its own waiting messages in order, and
     * its place in the queue's list of links with messages waiting. */
    uint32_t defer_types;
    struct defer_queue *dq;
    struct defer_item *dq_head, *dq_tail;
    unsigned dq_count;
    struct link_node dq_node;
};

/* A message received and put off, as its frame's payload. */
struct defer_item {
    struct defer_item *next;
    size_t len;
    uint8_t payload[];
};

/* The deferring links of one loop. */
struct defer_queue {
    uv_loop_t *loop;
    uv_check_t check;      /* after the poll phase: hands out waiting messages */
    uv_idle_t idle;        /* while any wait, the poll does not block */
    unsigned nlinks;       /* links that defer */
    unsigned open;         /* handles not closed yet */
    size_t bytes;          /* waiting, on all its links */
    struct link_node head; /* links with messages waiting, in turn */
    struct defer_queue *next;
};

/* Each thread's loops' queues (a loop runs in one thread). */
static _Thread_local struct defer_queue *defer_queues;

/* How long a loop turn spends handing out deferred messages before it reads
 * again: a report read after a burst of results waits at most about this. */
#define LINK_DEFER_BUDGET_NS (5 * IOF_NS_PER_MS)
/* Bounds on what waits: messages per link, and bytes per loop (a result
 * of 8 workers is 10 KB: 10,000 agents' are 97 MiB). Past either, the
 * link's waiting messages and the new one are handled at once, in order. */
#define LINK_DEFER_LINK_MAX 4
#define LINK_DEFER_BYTES_MAX ((size_t)256 << 20)

#define HB_LINK(node) ((struct proto_link *)((char *)(node)-offsetof(struct proto_link, hb)))
#define DQ_LINK(node) ((struct proto_link *)((char *)(node)-offsetof(struct proto_link, dq_node)))

static void node_unlink(struct link_node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}

/* Puts n before `at` (at the tail when at is the sentinel). */
static void node_insert_before(struct link_node *at, struct link_node *n)
{
    n->prev = at->prev;
    n->next = at;
    at->prev->next = n;
    at->prev = n;
}

static void hb_on_group_timer_closed(uv_handle_t *h)
{
    struct hb_slot *s = h->data;
    struct hb_group *g = s->g;
    if (--g->open == 0)
        free(g);
}

static void link_hb_tick(struct proto_link *l, uint64_t now);

/* Every link in s, with a cursor after the one being handled, so links
 * leaving (any of them) or joining meanwhile leave the walk sound. */
static void hb_walk(struct hb_slot *s, void (*fn)(struct proto_link *, uint64_t), uint64_t now)
{
    struct link_node cursor;

    s->last_walk_ns = now;
    /* The slot's heartbeats leave in one system call (common/net.h). */
    iof_conn_batch_begin();
    cursor.prev = cursor.next = &cursor;
    node_insert_before(s->head.next, &cursor);
    while (cursor.next != &s->head) {
        struct link_node *n = cursor.next, *ahead;
        node_unlink(&cursor);
        node_insert_before(n->next, &cursor);
        /* The link after next is out of the cache (touched a period ago):
         * asked for now, its node and fields arrive while this one is
         * handled. */
        if (cursor.next != &s->head && (ahead = cursor.next->next) != &s->head) {
            __builtin_prefetch(ahead, 1);
            __builtin_prefetch(&HB_LINK(ahead)->last_hb_ns, 1);
            __builtin_prefetch(&HB_LINK(ahead)->conn);
        }
        fn(HB_LINK(n), now);
    }
    node_unlink(&cursor);
    iof_conn_batch_end();
}

/* A slot's tick. */
static void hb_on_slot(uv_timer_t *t)
{
    hb_walk(t->data, link_hb_tick, iof_now_ns());
}

static void link_hb_owe(struct proto_link *l, uint64_t now);

/* The loop's timers cannot run while one callback works for long (at
 * 10,000 agents, the results of a test: seconds on a loaded host), and the
 * peers would judge this end silent after three periods. So, between the
 * messages of such a burst: a slot whose tick is a slot's width overdue
 * sends the heartbeats its links owe (link_hb_owe), without the silence
 * verdicts, which wait for the tick itself, after the reads. A clock
 * comparison per message otherwise. */
static void hb_catch_up(uv_loop_t *loop, uint64_t now)
{
    uint64_t next = UINT64_MAX;

    if (now < hb_catch_up_ns)
        return;
    for (struct hb_group *g = hb_groups; g; g = g->next) {
        uint64_t period = (uint64_t)g->hb_ms * IOF_NS_PER_MS, width = period / LINK_HB_SLOTS;

        if (now + width < next)
            next = now + width;
        if (g->loop != loop)
            continue;
        for (unsigned i = 0; i < LINK_HB_SLOTS; i++) {
            struct hb_slot *s = &g->slot[i];
            if (s->n && now - s->last_walk_ns >= period + width)
                hb_walk(s, link_hb_owe, now);
        }
    }
    hb_catch_up_ns = next;
}

/* Takes l out of its slot; the group goes when its last link does. */
static void hb_leave(struct proto_link *l)
{
    struct hb_slot *s = l->hb_slot;
    struct hb_group *g;

    if (!s)
        return;
    g = s->g;
    node_unlink(&l->hb);
    l->hb_slot = NULL;
    if (--s->n == 0)
        uv_timer_stop(&s->timer);
    if (--g->nlinks)
        return;
    for (struct hb_group **pp = &hb_groups; *pp; pp = &(*pp)->next)
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    for (unsigned i = 0; i < LINK_HB_SLOTS; i++)
        uv_close((uv_handle_t *)&g->slot[i].timer, hb_on_group_timer_closed);
}

/* Puts l in the slot of this moment's phase of its period. */
static int hb_join(struct proto_link *l)
{
    struct hb_group *g;
    struct hb_slot *s;
    uint64_t phase_ms = l->hb_ms / LINK_HB_SLOTS ? l->hb_ms / LINK_HB_SLOTS : 1;

    for (g = hb_groups; g; g = g->next)
        if (g->loop == l->loop && g->hb_ms == l->hb_ms)
            break;
    if (!g) {
        if (!(g = calloc(1, sizeof(*g))))
            return -ENOMEM;
        g->loop = l->loop;
        g->hb_ms = l->hb_ms;
        for (unsigned i = 0; i < LINK_HB_SLOTS; i++) {
            s = &g->slot[i];
            uv_timer_init(l->loop, &s->timer);
            s->timer.data = s;
            s->head.prev = s->head.next = &s->head;
            s->g = g;
        }
        g->open = LINK_HB_SLOTS;
        g->next = hb_groups;
        hb_groups = g;
        /* hb_catch_up looks again at the next message: with no group it
         * had nothing to wait for. */
        hb_catch_up_ns = 0;
    }
    s = &g->slot[(iof_now_ns() / IOF_NS_PER_MS / phase_ms) % LINK_HB_SLOTS];
    node_insert_before(&s->head, &l->hb);
    l->hb_slot = s;
    g->nlinks++;
    if (s->n++ == 0) {
        s->last_walk_ns = iof_now_ns();
        uv_timer_start(&s->timer, hb_on_slot, l->hb_ms, l->hb_ms);
    }
    return 0;
}

static void link_defer_leave(struct proto_link *l);

static void link_free_if_done(struct proto_link *l)
{
    if (l->open_handles)
        return;
    /* What the peer sent before the close is handled before it. */
    proto_link_flush_deferred(l);
    if (l->cbs.on_close)
        l->cbs.on_close(l, l->close_err, l->why, l->arg);
    link_defer_leave(l);
    proto_decoder_free(&l->dec);
    free(l);
}

static void link_on_handle_closed(uv_handle_t *h)
{
    struct proto_link *l = h->data;
    l->open_handles--;
    link_free_if_done(l);
}

static void link_on_conn_close(struct iof_conn *c, int err, void *arg)
{
    struct proto_link *l = arg;
    (void)c;
    l->conn = NULL;
    if (!l->closing) {
        /* The peer went away first. */
        l->closing = true;
        l->close_err = err == -EPIPE && proto_decoder_pending(&l->dec) ? IOF_EPROTO : err;
        snprintf(l->why, sizeof(l->why), "%s",
                 err == -EPIPE ? (proto_decoder_pending(&l->dec)
                                      ? "connection closed in the middle of a frame"
                                      : "connection closed by the peer")
                               : iof_strerror(err));
        hb_leave(l);
        uv_timer_stop(&l->deadline_timer);
        uv_close((uv_handle_t *)&l->deadline_timer, link_on_handle_closed);
        uv_timer_stop(&l->silence_timer);
        uv_close((uv_handle_t *)&l->silence_timer, link_on_handle_closed);
    }
    l->open_handles--;
    link_free_if_done(l);
}

void proto_link_close(struct proto_link *l, int err, const char *reason)
{
    if (!l || l->closing)
        return;
    if (reason && l->conn) {
        struct proto_msg m;
        proto_msg_init(&m, PROTO_MSG_BYE);
        m.u.bye.reason = reason;
        proto_link_send(l, &m);
    }
    if (l->closing) /* the send failed and closed it */
        return;
    l->closing = true;
    l->close_err = err;
    snprintf(l->why, sizeof(l->why), "%s", reason ? reason : iof_strerror(err));
    hb_leave(l);
    uv_timer_stop(&l->deadline_timer);
    uv_close((uv_handle_t *)&l->deadline_timer, link_on_handle_closed);
    uv_timer_stop(&l->silence_timer);
    uv_close((uv_handle_t *)&l->silence_timer, link_on_handle_closed);
    if (l->conn)
        iof_conn_close(l->conn, err);
}

/* Closes with a reason that is not sent (the peer misbehaved or vanished).
 * On a link closing already, only a message received before the close and
 * handed out since (proto_link_set_deferred) can fail: its failure becomes
 * the close's reason, as it would have been had it been handled at once. */
static void link_fail(struct proto_link *l, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void link_fail(struct proto_link *l, int err, const char *fmt, ...)
{
    char why[sizeof(l->why)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (l->closing)
        l->close_err = err;
    else
        proto_link_close(l, err, NULL);
    snprintf(l->why, sizeof(l->why), "%s", why);
}

/* Decodes one message and hands it to the application. 0, or the error that
 * closed the link: a bad message (link_fail) or a hello of another protocol
 * version. */
static int link_deliver(struct proto_link *l, const uint8_t *payload, size_t len)
{
    struct proto_msg m;
    struct iof_diag d = {{0}};
    int r;

    r = proto_msg_decode_flags(payload, len, &m, l->decode_flags, &d);
    if (r && r != IOF_EVERSION) {
        proto_msg_clear(&m);
        link_fail(l, IOF_EPROTO, "bad message: %s", d.msg);
        return IOF_EPROTO;
    }
    if (r == IOF_EVERSION) {
        /* Tell the peer why, then name it (when its hello was readable) and
         * both versions in the reason the session reports. */
        if (m.u.hello.name)
            snprintf(l->hello_name, sizeof(l->hello_name), "%s", m.u.hello.name);
        proto_msg_clear(&m);
        proto_link_send_error(l, IOF_EVERSION, "%s", d.msg);
        proto_link_close(l, IOF_EVERSION, "incompatible protocol version");
        snprintf(l->why, sizeof(l->why), "%s", d.msg);
        return IOF_EVERSION;
    }
    if (m.type != PROTO_MSG_HEARTBEAT && l->cbs.on_msg)
        l->cbs.on_msg(l, &m, l->arg);
    proto_msg_clear(&m);
    return 0;
}

/* --- deferred messages ------------------------------------------------------------------ */

/* Takes l's first waiting message off and hands it out. After a bad one
 * the rest are dropped, as the reads after it would have been. */
static void link_deliver_first(struct proto_link *l)
{
    struct defer_item *it = l->dq_head;

    l->dq_head = it->next;
    if (!l->dq_head)
        l->dq_tail = NULL;
    l->dq_count--;
    l->dq->bytes -= it->len;
    if (link_deliver(l, it->payload, it->len)) {
        while (l->dq_head) {
            struct defer_item *next = l->dq_head->next;
            l->dq->bytes -= l->dq_head->len;
            free(l->dq_head);
            l->dq_head = next;
        }
        l->dq_tail = NULL;
        l->dq_count = 0;
    }
    free(it);
}

void proto_link_flush_deferred(struct proto_link *l)
{
    if (!l->dq)
        return;
    node_unlink(&l->dq_node);
    while (l->dq_head)
        link_deliver_first(l);
}

static void dq_on_idle(uv_idle_t *h)
{
    (void)h;
}

/* After the poll phase: the waiting messages, one per link in turn, until
 * the budget is spent; the next turn reads what came meanwhile first. */
static void dq_on_check(uv_check_t *h)
{
    struct defer_queue *q = h->data;
    uint64_t until = iof_now_ns() + LINK_DEFER_BUDGET_NS;

    while (q->head.next != &q->head) {
        struct proto_link *l = DQ_LINK(q->head.next);
        node_unlink(&l->dq_node);
        link_deliver_first(l);
        if (l->dq_head && l->dq_node.next == &l->dq_node)
            node_insert_before(&q->head, &l->dq_node); /* its next one, after the others' */
        if (iof_now_ns() >= until)
            break;
    }
    if (q->head.next == &q->head) {
        uv_idle_stop(&q->idle);
        uv_check_stop(&q->check);
    }
}

static void dq_on_closed(uv_handle_t *h)
{
    struct defer_queue *q = h->data;
    if (--q->open == 0)
        free(q);
}

static void link_defer_leave(struct proto_link *l)
{
    struct defer_queue *q = l->dq;

    if (!q)
        return;
    proto_link_flush_deferred(l);
    l->dq = NULL;
    l->defer_types = 0;
    if (--q->nlinks)
        return;
    for (struct defer_queue **pp = &defer_queues; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            break;
        }
    uv_close((uv_handle_t *)&q->check, dq_on_closed);
    uv_close((uv_handle_t *)&q->idle, dq_on_closed);
}

void proto_link_set_deferred(struct proto_link *l, uint32_t types)
{
    struct defer_queue *q;

    if (!types) {
        link_defer_leave(l);
        return;
    }
    if (l->closing)
        return;
    l->defer_types = types;
    if (l->dq)
        return;
    for (q = defer_queues; q; q = q->next)
        if (q->loop == l->loop)
            break;
    if (!q) {
        if (!(q = calloc(1, sizeof(*q)))) {
            l->defer_types = 0; /* handled as they come */
            return;
        }
        q->loop = l->loop;
        q->head.prev = q->head.next = &q->head;
        uv_check_init(l->loop, &q->check);
        uv_idle_init(l->loop, &q->idle);
        q->check.data = q->idle.data = q;
        q->open = 2;
        q->next = defer_queues;
        defer_queues = q;
    }
    q->nlinks++;
    l->dq = q;
}

/* Puts the frame's message off, or, past the bounds, hands out l's waiting
 * ones and then it. 0 or the error that closed the link. */
static int link_defer(struct proto_link *l, const struct proto_frame *f)
{
    struct defer_queue *q = l->dq;
    struct defer_item *it;

    if (l->dq_count >= LINK_DEFER_LINK_MAX || q->bytes + f->len > LINK_DEFER_BYTES_MAX ||
        !(it = malloc(sizeof(*it) + f->len))) {
        proto_link_flush_deferred(l);
        return l->closing ? 0 : link_deliver(l, f->payload, f->len);
    }
    it->next = NULL;
    it->len = f->len;
    memcpy(it->payload, f->payload, f->len);
    if (l->dq_tail)
        l->dq_tail->next = it;
    else
        l->dq_head = it;
    l->dq_tail = it;
    l->dq_count++;
    q->bytes += f->len;
    if (l->dq_node.next == &l->dq_node)
        node_insert_before(&q->head, &l->dq_node);
    if (!uv_is_active((uv_handle_t *)&q->check)) {
        uv_check_start(&q->check, dq_on_check);
        uv_idle_start(&q->idle, dq_on_idle);
    }
    return 0;
}

/* A message waits when this link defers its type, or when one already
 * waits (a link's messages stay in order). */
static bool link_defers(const struct proto_link *l, const struct proto_frame *f)
{
    int t;

    if (!l->dq)
        return false;
    if (l->dq_head)
        return true;
    t = proto_msg_peek_type(f->payload, f->len);
    return t >= 0 && (l->defer_types >> t & 1u);
}

static int link_on_frame(void *ctx, const struct proto_frame *f)
{
    struct proto_link *l = ctx;
    int r;

    if (l->closing)
        return -ECANCELED;
    l->last_rx_ns = iof_now_ns();
    hb_catch_up(l->loop, l->last_rx_ns);
    /* The deadline keeps running: only the application, having got what it
     * waited for, ends it (a peer sending heartbeats is not a hello). */
    r = link_defers(l, f) ? link_defer(l, f) : link_deliver(l, f->payload, f->len);
    if (r)
        return r;
    return l->closing ? -ECANCELED : 0;
}

static void link_on_data(struct iof_conn *c, const uint8_t *buf, size_t len, void *arg)
{
    struct proto_link *l = arg;
    int r;
    (void)c;

    if (l->closing)
        return;
    r = proto_decoder_feed(&l->dec, buf, len, link_on_frame, l);
    if (r && !l->closing)
        link_fail(l, IOF_EPROTO, "%s", proto_decoder_error(&l->dec));
}

_Static_assert(PROTO_HEARTBEAT_FRAME_MAX <= IOF_CONN_BATCH_MSG_MAX,
               "a heartbeat frame fits a batched write");

/* A heartbeat to the peer, stamped now. */
static void link_send_heartbeat(struct proto_link *l, uint64_t now)
{
    uint8_t frame[PROTO_HEARTBEAT_FRAME_MAX];
    size_t len;

    if (proto_msg_heartbeat_frame(l->hb_seq++, now, frame, sizeof(frame), &len) == 0 && l->conn)
        iof_conn_write_batched(l->conn, frame, len);
}

static void link_silence_arm(struct proto_link *l, uint64_t now);

/* A limit under 3 periods (1.8's sparse heartbeat): the tick's rule and
 * the lost message differ (link_hb_tick, link_lost). */
static bool link_sparse(const struct proto_link *l)
{
    return l->limit_ns < (uint64_t)PROTO_HEARTBEAT_MISSES * l->hb_ms * IOF_NS_PER_MS;
}

static void link_lost(struct proto_link *l, uint64_t now)
{
    if (link_sparse(l))
        link_fail(l, IOF_ELOST,
                  "no message or heartbeat for %.1f s (the limit, %.1f s, at a heartbeat every "
                  "%.1f s)",
                  (double)(now - l->last_rx_ns) / 1e9, (double)l->limit_ns / 1e9,
                  (double)l->hb_ms / 1e3);
    else
        link_fail(l, IOF_ELOST, "no message or heartbeat for %.1f s (%d heartbeats missed)",
                  (double)(now - l->last_rx_ns) / 1e9, PROTO_HEARTBEAT_MISSES);
}

/* The silence limit, reached between two ticks (link_silence_arm). */
static void link_on_silence(uv_timer_t *t)
{
    struct proto_link *l = t->data;
    uint64_t now = iof_now_ns(), period = (uint64_t)l->hb_ms * IOF_NS_PER_MS;
    uint64_t limit = l->limit_ns;

    if (l->closing || !l->established)
        return;
    if (now - l->last_rx_ns <= limit) {
        link_silence_arm(l, now); /* a frame came, or the timer's ms were short */
        return;
    }
    /* A period late, this loop itself stalled: the peer's frames of that
     * time may be waiting unread; the tick judges after the reads. */
    if (now - l->last_rx_ns - limit > period)
        return;
    link_lost(l, now);
}

/* The ticks judge the silence once a period: alone, a peer silent since
 * just after a tick would be found lost at the tick after the limit, up to
 * a period late (the dead-man rule's 3 periods would be 4). So when the
 * limit falls before the next tick, a one-shot timer judges at the limit
 * itself. Seldom armed: a live peer is heard at least every two periods. */
static void link_silence_arm(struct proto_link *l, uint64_t now)
{
    uint64_t period = (uint64_t)l->hb_ms * IOF_NS_PER_MS;
    uint64_t due = l->last_rx_ns + l->limit_ns;

    if (now >= due || due - now >= period)
        return;
    uv_timer_start(&l->silence_timer, link_on_silence, (due - now) / IOF_NS_PER_MS + 1, 0);
}

/* now: the slot's walk's clock, shared by its links. */
static void link_hb_tick(struct proto_link *l, uint64_t now)
{
    uint64_t gap = now - l->last_hb_ns;
    /* Something else went out since the last tick: the peer heard from us
     * in this period (any message counts), so no heartbeat. An agent
     * reporting every interval sends none, and its manager reads one frame
     * a second from it instead of two. The peer still hears something at
     * least every two periods, within its limit of three. */
    bool quiet = l->last_tx_ns <= l->last_hb_ns;

    /* On a limit under 3 periods, two periods between frames would come
     * too close to it: a frame in the last half period stands for this
     * tick's heartbeat, an older one does not (the peer hears from this
     * end at least every 1.5 periods). */
    if (link_sparse(l))
        quiet = now - l->last_tx_ns >= (uint64_t)l->hb_ms * IOF_NS_PER_MS / 2;

    l->last_hb_ns = now;
    /* A tick that comes two periods late means this loop itself stalled (a
     * storm of handshakes, a swap-in): the peer's messages of that time may
     * be waiting unread, as timers run before reads in a loop iteration. The
     * silence is then judged at the next tick, after the reads - once: a
     * loop late at every tick still reads between them. */
    if (gap > 2ull * l->hb_ms * IOF_NS_PER_MS && !l->hb_deferred) {
        l->hb_deferred = true;
    } else if ((l->hb_deferred = false), now - l->last_rx_ns > l->limit_ns) {
        link_lost(l, now);
        return;
    }
    link_silence_arm(l, now);
    if (quiet)
        link_send_heartbeat(l, now);
}

/* A catch-up's part (hb_catch_up): a heartbeat if the peer has heard
 * nothing from this end for a period, counted as a sent message so the
 * next tick need not repeat it. */
static void link_hb_owe(struct proto_link *l, uint64_t now)
{
    uint64_t last = l->last_tx_ns > l->last_hb_ns ? l->last_tx_ns : l->last_hb_ns;

    if (l->closing || !l->conn || now - last < (uint64_t)l->hb_ms * IOF_NS_PER_MS)
        return;
    link_send_heartbeat(l, now);
    l->last_tx_ns = now;
}

void proto_link_note_sent(struct proto_link *l)
{
    l->last_tx_ns = iof_now_ns();
}

static void link_on_deadline(uv_timer_t *t)
{
    struct proto_link *l = t->data;
    link_fail(l, IOF_ETIMEOUT, "no %s within the deadline", l->deadline_what);
}

struct proto_link *proto_link_new(uv_loop_t *loop, struct iof_conn *conn,
                                  const struct proto_link_cbs *cbs, void *arg)
{
    struct proto_link *l = calloc(1, sizeof(*l));
    static const struct iof_conn_cbs ccbs = {.on_data = link_on_data,
                                             .on_close = link_on_conn_close};

    if (!l || proto_decoder_init(&l->dec, PROTO_FRAME_MAX_PREAUTH) < 0) {
        free(l);
        iof_conn_close(conn, -ENOMEM);
        return NULL;
    }
    l->loop = loop;
    l->conn = conn;
    l->cbs = *cbs;
    l->arg = arg;
    l->last_rx_ns = iof_now_ns();
    snprintf(l->peer, sizeof(l->peer), "%s", iof_conn_peer(conn));
    l->loopback = iof_conn_is_loopback(conn);
    uv_timer_init(loop, &l->deadline_timer);
    l->deadline_timer.data = l;
    uv_timer_init(loop, &l->silence_timer);
    l->silence_timer.data = l;
    l->hb.prev = l->hb.next = &l->hb;
    l->dq_node.prev = l->dq_node.next = &l->dq_node;
    l->open_handles = 3; /* the deadline and silence timers and the connection */
    iof_conn_set_cbs(conn, &ccbs, l);
    return l;
}

uint32_t proto_link_heartbeat_agree(const struct proto_hello *h, uint32_t mine, uint32_t max,
                                    uint32_t *limit_ms, uint32_t *asked)
{
    bool sparse =
        h->heartbeat_sparse_ms && h->heartbeat_limit_ms && proto_heartbeat_limit_ok(h->minor);
    uint32_t theirs = sparse ? h->heartbeat_sparse_ms
                      : h->heartbeat_offer_ms && proto_heartbeat_offer_ok(h->minor)
                          ? h->heartbeat_offer_ms
                          : h->heartbeat_ms;
    uint32_t hb;

    if (!mine)
        mine = PROTO_HEARTBEAT_MS_DEFAULT;
    hb = theirs > mine ? theirs : mine;
    *asked = hb > max ? hb : 0;
    if (hb > max)
        hb = max;
    /* The sparse limit goes with the sparse period only: a longer period
     * of the agent's own, or a cap, keeps 3 periods. */
    *limit_ms = sparse && hb == theirs ? h->heartbeat_limit_ms : 0;
    return hb;
}

uint32_t proto_link_heartbeat_ms(uint32_t mine, uint32_t theirs, uint32_t agreed)
{
    if (!mine)
        mine = PROTO_HEARTBEAT_MS_DEFAULT;
    if (agreed)
        return agreed;
    return theirs > mine ? theirs : mine;
}

void proto_link_set_established(struct proto_link *l, uint32_t heartbeat_ms, uint32_t limit_ms)
{
    uint64_t three;

    if (l->closing)
        return;
    l->established = true;
    l->hb_ms = heartbeat_ms ? heartbeat_ms : PROTO_HEARTBEAT_MS_DEFAULT;
    three = (uint64_t)PROTO_HEARTBEAT_MISSES * l->hb_ms * IOF_NS_PER_MS;
    /* Between 2 periods and 3 (the messages' decoders refuse others). */
    l->limit_ns = (uint64_t)limit_ms * IOF_NS_PER_MS;
    if (l->limit_ns < 2ull * l->hb_ms * IOF_NS_PER_MS || l->limit_ns > three)
        l->limit_ns = three;
    proto_decoder_set_limit(&l->dec, PROTO_FRAME_MAX_DEFAULT);
    l->last_rx_ns = iof_now_ns();
    l->last_hb_ns = l->last_rx_ns;
    uv_timer_stop(&l->silence_timer);
    hb_leave(l);
    if (hb_join(l))
        link_fail(l, -ENOMEM, "out of memory for the heartbeat timer");
}

void proto_link_set_recv_limit(struct proto_link *l, size_t max_payload)
{
    if (!l->closing && l->established)
        proto_decoder_set_limit(&l->dec, max_payload);
}

void proto_link_set_deadline(struct proto_link *l, uint64_t ms, const char *what)
{
    if (l->closing)
        return;
    uv_timer_stop(&l->deadline_timer);
    if (ms) {
        snprintf(l->deadline_what, sizeof(l->deadline_what), "%s", what);
        uv_timer_start(&l->deadline_timer, link_on_deadline, ms, 0);
    }
}

int proto_link_send(struct proto_link *l, const struct proto_msg *msg)
{
    struct iof_diag d = {{0}};
    uint8_t *frame;
    size_t len;
    int r;

    if (l->closing || !l->conn)
        return -ENOTCONN;
    /* Stats and results are as large as the plan's largest node share
     * makes them (PROTO_STATS_FRAME_MAX); everything else fits the default. */
    r = proto_msg_encode_frame_flags(msg,
                                     msg->type == PROTO_MSG_STATS || msg->type == PROTO_MSG_RESULT
                                         ? PROTO_STATS_FRAME_MAX
                                         : PROTO_FRAME_MAX_DEFAULT,
                                     l->encode_flags, &frame, &len, &d);
    if (r) {
        IOF_ERROR("cannot encode %s for %s: %s", proto_msg_type_name(msg->type), l->peer, d.msg);
        return r;
    }
    r = iof_conn_write(l->conn, frame, len);
    free(frame);
    if (!r)
        proto_link_note_sent(l);
    return r;
}

int proto_link_send_error(struct proto_link *l, int code, const char *fmt, ...)
{
    struct proto_msg m;
    char text[PROTO_TEXT_MAX + 1];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    proto_msg_init(&m, PROTO_MSG_ERROR);
    m.u.error.code = code;
    m.u.error.message = text;
    return proto_link_send(l, &m);
}

const char *proto_link_peer(const struct proto_link *l)
{
    return l->peer;
}

bool proto_link_is_loopback(const struct proto_link *l)
{
    return l->loopback;
}

bool proto_link_is_closing(const struct proto_link *l)
{
    return l->closing;
}

void proto_link_set_arg(struct proto_link *l, void *arg)
{
    l->arg = arg;
}

const char *proto_link_refused_name(const struct proto_link *l)
{
    return l->hello_name[0] ? l->hello_name : NULL;
}

bool proto_link_is_tls(const struct proto_link *l)
{
    return l->conn && iof_conn_is_tls(l->conn);
}

int proto_link_check_peer_name(const struct proto_link *l, const char *expected,
                               struct iof_diag *diag)
{
    if (!l->conn)
        return iof_diag_set(diag, -ENOTCONN, "%s: connection closed", l->peer);
    return iof_conn_check_peer_name(l->conn, expected, diag);
}

void proto_link_set_decode_flags(struct proto_link *l, unsigned flags)
{
    l->decode_flags = flags;
}

void proto_link_set_encode_flags(struct proto_link *l, unsigned flags)
{
    l->encode_flags = flags;
}
