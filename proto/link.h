/* SPDX-License-Identifier: Apache-2.0 */
/* proto/link.h - a framed, heartbeated message link over a connection
 * (common/net.h): decodes frames into messages, sends messages, sends a
 * heartbeat in every period in which it sent nothing else, and declares the
 * peer lost after PROTO_HEARTBEAT_MISSES silent periods (or the limit the
 * session agreed, 1.8). Used by both the manager and the
 * agent. Loop thread only.
 *
 * Ownership: proto_link_new() takes the connection. The link is freed after
 * its on_close callback returns; the callback is the last use of it.
 */
#ifndef IOF_PROTO_LINK_H
#define IOF_PROTO_LINK_H

#include <uv.h>

#include "common/net.h"
#include "proto/msg.h"

struct proto_link;

struct proto_link_cbs {
    /* One decoded message, borrowed for the call (the link clears it). */
    void (*on_msg)(struct proto_link *l, const struct proto_msg *msg, void *arg);
    /* The link is down: err (IOF_ELOST for silence, IOF_EPROTO for a bad
     * frame or message, -EPIPE when the peer closed, 0 after
     * proto_link_close) and a sentence saying why. */
    void (*on_close)(struct proto_link *l, int err, const char *why, void *arg);
};

/* Wraps conn. Frames are limited to PROTO_FRAME_MAX_PREAUTH until
 * proto_link_set_established(). Returns NULL on ENOMEM (conn is closed). */
struct proto_link *proto_link_new(uv_loop_t *loop, struct iof_conn *conn,
                                  const struct proto_link_cbs *cbs, void *arg);

/* The hello exchange is done: raises the frame limit to
 * PROTO_FRAME_MAX_DEFAULT and starts heartbeats every heartbeat_ms (the
 * larger of both peers' periods). The peer is lost after limit_ms of
 * silence: 0 (or anything outside 2 to 3 periods) is PROTO_HEARTBEAT_MISSES
 * periods; a limit under that (1.8's sparse heartbeat) also makes this end
 * write a heartbeat at every tick unless it wrote a frame in the last half
 * period, so the peer hears from it at least every 1.5 periods. */
void proto_link_set_established(struct proto_link *l, uint32_t heartbeat_ms, uint32_t limit_ms);

/* What an agent agrees to with the manager whose hello is h (the manager's
 * protocol minor in it): the period, the larger of h's (its 1.8 sparse
 * offer, else its 1.5 offer, else its heartbeat_ms) and `mine` (0:
 * PROTO_HEARTBEAT_MS_DEFAULT), capped at `max` (*asked is then the period before the cap, else 0);
 * and in *limit_ms the dead-man limit when it is the sparse offer's, else 0 (3 periods). For the
 * welcome and proto_link_set_established(). */
uint32_t proto_link_heartbeat_agree(const struct proto_hello *h, uint32_t mine, uint32_t max,
                                    uint32_t *limit_ms, uint32_t *asked);

/* The heartbeat period of an established link: the one the agent decided
 * (`agreed`, its welcome; 0 from an agent that sends none, and on the
 * agent's own side) or else the larger of both peers' periods, `mine` (0:
 * PROTO_HEARTBEAT_MS_DEFAULT) and `theirs` (the peer's hello). The agent
 * caps what it agrees to at its own maximum. */
uint32_t proto_link_heartbeat_ms(uint32_t mine, uint32_t theirs, uint32_t agreed);

/* Closes the link (IOF_ETIMEOUT, "no WHAT within the deadline") unless the
 * application cancels the deadline with ms 0 within ms (e.g. the hello
 * deadline, cancelled when the hello came). Nothing the peer sends stops
 * it by itself: heartbeats or other messages before the expected one do
 * not buy time. */
void proto_link_set_deadline(struct proto_link *l, uint64_t ms, const char *what);

/* Encodes and queues msg (borrowed). Returns 0 or a negative error; on a
 * write error the link closes. */
int proto_link_send(struct proto_link *l, const struct proto_msg *msg);

/* The application wrote a frame to the link's connection itself (one
 * encoding written to many connections): it counts as heard from us in
 * this period, as proto_link_send's do. */
void proto_link_note_sent(struct proto_link *l);

/* Sends an error message (code, formatted text), for the peer to show. */
int proto_link_send_error(struct proto_link *l, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sends bye (when reason is not NULL) and closes; on_close(l, err, why)
 * follows from the loop. Idempotent. */
void proto_link_close(struct proto_link *l, int err, const char *reason);

const char *proto_link_peer(const struct proto_link *l);
bool proto_link_is_loopback(const struct proto_link *l);
/* True once the link is closing (on_close has not run yet). */
bool proto_link_is_closing(const struct proto_link *l);
void proto_link_set_arg(struct proto_link *l, void *arg);

/* Options for decoding incoming messages (PROTO_DECODE_*, proto/msg.h). */
void proto_link_set_decode_flags(struct proto_link *l, unsigned flags);

/* Options for encoding outgoing messages (PROTO_ENCODE_*, proto/msg.h):
 * an agent sets PROTO_ENCODE_STATS_BINARY once the manager's hello shows
 * it reads the binary stats body (proto_stats_binary_ok()). */
void proto_link_set_encode_flags(struct proto_link *l, unsigned flags);

/* Messages of the types in `types` (a mask of 1u << PROTO_MSG_*) that
 * arrive are handled after the loop's reads instead of at once, a few
 * milliseconds' worth per loop turn, one message per link in turn: a
 * manager defers results, so that 10,000 of them arriving at a test's end
 * together do not hold up the last interval's reports read after them. A
 * link's messages stay in order (once one waits, every later one waits
 * behind it) and its waiting ones are handed out before on_close. The type
 * is read from a message's first bytes (proto_msg_peek_type); a message
 * whose first bytes do not say is handled at once. Bounded per link and per
 * loop: past the bounds, messages are handled as they come. 0: none (the
 * default). */
void proto_link_set_deferred(struct proto_link *l, uint32_t types);

/* Hands out l's waiting messages now, in order: before a deadline decides
 * which messages have come. */
void proto_link_flush_deferred(struct proto_link *l);

/* The largest frame accepted once established (default PROTO_FRAME_MAX_DEFAULT):
 * a manager takes PROTO_STATS_FRAME_MAX from its agents, whose stats and
 * result messages may be that large (proto/msg.h). Call after
 * proto_link_set_established(). */
void proto_link_set_recv_limit(struct proto_link *l, size_t max_payload);

/* True when the link runs over TLS (the peer's certificate was verified). */
bool proto_link_is_tls(const struct proto_link *l);

/* 0 when the peer's certificate names `expected`, else -EACCES with a
 * message naming both (see iof_conn_check_peer_name). */
int proto_link_check_peer_name(const struct proto_link *l, const char *expected,
                               struct iof_diag *diag);

/* The name in a hello refused for its protocol version (to name the peer in
 * on_close), or NULL. */
const char *proto_link_refused_name(const struct proto_link *l);

#endif
