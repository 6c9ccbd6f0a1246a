/* SPDX-License-Identifier: Apache-2.0 */
/* proto/statsbin.h - the binary body of the stats message (protocol 1.1).
 *
 * The per-interval stats message is the one message sent at scale (every
 * agent, every interval), so from protocol minor PROTO_MINOR_STATS_BINARY on
 * it travels as a fixed little-endian header followed by one record per
 * target, whose latency histograms are in a varint form of common/hist.c
 * (the run form), instead of JSON with base64 histograms. docs/protocol.md ("Binary stats
 * body") gives the layout field by field. Every other message, the result
 * included, stays JSON.
 *
 * A binary payload starts with PROTO_STATSBIN_TAG, a byte no JSON text
 * starts with, so the receiver tells the two forms apart by the first byte
 * of the frame's payload; it accepts the binary form only from a peer that
 * negotiated it (proto_stats_binary_ok(), proto/version.h).
 *
 * Pure functions: bytes in, messages out; no I/O, no clock.
 */
#ifndef IOF_PROTO_STATSBIN_H
#define IOF_PROTO_STATSBIN_H

#include "proto/msg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_STATSBIN_TAG 0x01 /* payload byte 0 */
/* Payload byte 1, the layout: how the histograms are encoded. Layout 2 (the
 * run form, common/hist.h) is sent to a peer of protocol 1.1 and 1.2;
 * layout 1 (the sparse form), the first one, is still read. Layout 3 (from
 * protocol 1.3) carries each target's latency summary (count, sum, min,
 * max) without buckets, and after the last target the node's two
 * histograms (every target's merged, per direction) in the run form: the
 * manager only ever adds a node's histograms up, so sending them added up
 * saves it decoding one per target (8 workers: 2 histograms instead of 16)
 * and the wire a third of the bytes. It decodes only summed
 * (PROTO_DECODE_SUM_STATS); its sums equal layout 2's bit for bit. Everything
 * else is the same in all three. */
#define PROTO_STATSBIN_LAYOUT_SPARSE 1
#define PROTO_STATSBIN_LAYOUT_RUNS 2
#define PROTO_STATSBIN_LAYOUT_NODE 3
#define PROTO_STATSBIN_HEADER 36     /* fixed header bytes, before the worker table */
#define PROTO_STATSBIN_CPU_MAX 10000 /* CPU figures in hundredths of a percent */

/* Header flags (bytes 2-3). NODE (protocol 1.6, with CPU only): the cpu's
 * node figures follow the header, PROTO_STATSBIN_NODE_BYTES: % DPC and %
 * interrupt as u16 hundredths (0..10000), then interrupts/s, packets/s,
 * packet errors and retransmitted segments/s as u64 hundredths, at most
 * PROTO_STATSBIN_NODE_MAX (read up to PROTO_STATSBIN_NODE_READ_MAX, as the
 * bound). */
#define PROTO_STATSBIN_LOST 0x0001u
#define PROTO_STATSBIN_CPU 0x0002u
#define PROTO_STATSBIN_NODE 0x0004u
#define PROTO_STATSBIN_NODE_BYTES 36
#define PROTO_STATSBIN_NODE_MAX 1000000000000000ull        /* hundredths of PROTO_CPU_NODE_MAX */
#define PROTO_STATSBIN_NODE_READ_MAX 100000000000000000ull /* of PROTO_CPU_NODE_READ_MAX */

/* Target record flags (its first byte). */
#define PROTO_STATSBIN_T_READ 0x01u
#define PROTO_STATSBIN_T_WRITE 0x02u
#define PROTO_STATSBIN_T_RATED 0x04u
#define PROTO_STATSBIN_T_VERIFY 0x08u
#define PROTO_STATSBIN_T_ERROR 0x10u

/* Encodes st (borrowed; a stats message's body, per target) as a complete
 * frame in `layout` (PROTO_STATSBIN_LAYOUT_RUNS or _NODE): the frame header
 * and the binary body. *out is new, free() it. The same rules as the JSON
 * encoder apply (limits, latencies == I/Os, rated summaries, error codes).
 * Returns 0, -EINVAL (diag names the field), IOF_ETOOBIG (over max_payload)
 * or -ENOMEM. */
int proto_statsbin_encode_frame(const struct proto_stats *st, int layout, size_t max_payload,
                                uint8_t **out, size_t *out_len, struct iof_diag *diag);

/* Decodes a binary body (len bytes from its tag; borrowed) into st (zeroed
 * first), which then owns its arrays (proto_msg_clear() on the message
 * frees them). With `sum`, as PROTO_DECODE_SUM_STATS: every target is added
 * into st->sum, its counters into st->counts, and workers[].targets stay
 * NULL. Every field is validated: IOF_EPROTO with a one-line diag naming it
 * ("stats.workers[3][0].w.lat: not a valid histogram"), or -ENOMEM. Layout 3
 * is refused without `sum` (it has no histogram per target), and its node
 * histograms must hold exactly what the targets' summaries add up to. */
int proto_statsbin_decode(const uint8_t *p, size_t len, struct proto_stats *st, bool sum,
                          struct iof_diag *diag);

/* Frees a summed decoding's sum (proto_msg_clear does), or keeps it,
 * cleared, for this thread's next summed decoding when `valid` (it came
 * from a successful decoding, so its histograms hold their invariant). */
void proto_statsbin_sum_free(struct iof_stats *sum, bool valid);

/* Shared with proto/msg.c: an error code from its name as sent (IOF_E*
 * names, then errno names; IOF_EINTERNAL for a name this build does not
 * know), and whether a string is a valid code name (1..PROTO_CODE_MAX of
 * [A-Z0-9_]). */
int proto_err_from_name(const char *name);
bool proto_code_name_ok(const char *name, size_t len);

#endif
