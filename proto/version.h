/* SPDX-License-Identifier: Apache-2.0 */
/* proto/version.h - protocol version of this build. Same major interoperates;
 * a higher minor only adds optional features, which are used only when both
 * peers' hellos announce them. */
#ifndef IOF_PROTO_VERSION_H
#define IOF_PROTO_VERSION_H

#include <stdbool.h>

#define PROTO_VERSION_MAJOR 1
#define PROTO_VERSION_MINOR 8

/* The minor that introduced the binary stats body (proto/statsbin.h). */
#define PROTO_MINOR_STATS_BINARY 1
/* The minor that introduced prepare.cleanup and the clean and cleaned
 * messages (test-file removal, dynamo/clean.h). */
#define PROTO_MINOR_CLEAN 2
/* The minor that introduced layout 3 of the binary stats body: one latency
 * histogram per node and direction (proto/statsbin.h). */
#define PROTO_MINOR_NODE_HIST 3
/* The minor that introduced setup and ready: a test set up before its
 * start time is fixed. */
#define PROTO_MINOR_SETUP 4

/* The minor from which a find_max rate cycle expands to IOF_FIND_MAX_TESTS
 * (22) tests per spec, confirmation runs included (common/ratecycle.h);
 * before, to 7. Both sides must agree on the layout: the start names a test
 * by its index. */
#define PROTO_MINOR_FIND_MAX 4

/* The minor that introduced hello.heartbeat_offer_ms: a manager with no
 * period of its own set offers its agents a longer one than 1.4's default
 * (PROTO_HEARTBEAT_MS_OFFER, proto/msg.h), which a peer of 1.4 or older
 * never sees used: it keeps hello.heartbeat_ms. */
#define PROTO_MINOR_HEARTBEAT_OFFER 5

/* The minor that introduced result.lateness: the lateness of a test's
 * rated I/Os, a histogram and the count over IOF_RATE_ONTIME_NS. */
#define PROTO_MINOR_LATENESS 6
/* The minor that introduced the node figures of a stats or result body's
 * cpu (proto_cpu.node_valid: softirq and irq %, interrupts, packets, packet
 * errors, TCP retransmissions): an agent sends them only to a manager of
 * this minor or later (in the binary body, a header flag an older manager
 * refuses). */
#define PROTO_MINOR_CPU_NODE 6
/* The minor that introduced result.cpus: each CPU's figures over the
 * test's window (Iometer's PROCESSOR row per CPU); an agent sends them only
 * to a manager of this minor or later. */
#define PROTO_MINOR_CPUS 7
/* The minor that introduced the sparse heartbeat: hello.heartbeat_sparse_ms
 * and heartbeat_limit_ms, and welcome.heartbeat_limit_ms, a dead-man limit
 * of its own in place of 3 periods (PROTO_HEARTBEAT_MS_SPARSE, proto/msg.h). */
#define PROTO_MINOR_HEARTBEAT_LIMIT 8

/* "1.7" */
const char *proto_version_string(void);

/* The minor this process announces in its hello: PROTO_VERSION_MINOR, or a
 * lower one when the environment variable IOF_PROTO_MINOR says so (a
 * decimal 0..PROTO_VERSION_MINOR; anything else is ignored). That makes a
 * build behave as a peer of an older minor, which the compatibility tests
 * use. Read once. */
unsigned proto_version_minor(void);

/* Whether stats go (agent) or may come (manager) in the binary body on a
 * session whose peer announced `peer_minor`: both sides at
 * PROTO_MINOR_STATS_BINARY or later. */
bool proto_stats_binary_ok(unsigned peer_minor);

/* Whether stats go (agent) in layout 3 of the binary body to a peer that
 * announced `peer_minor`: both sides at PROTO_MINOR_NODE_HIST or later. */
bool proto_stats_node_hist_ok(unsigned peer_minor);

/* Whether prepare.cleanup and clean may be sent to a peer that announced
 * `peer_minor`: both sides at PROTO_MINOR_CLEAN or later. */
bool proto_clean_ok(unsigned peer_minor);

/* Whether a plan with a find_max rate cycle may run with a peer that
 * announced `peer_minor`: PROTO_MINOR_FIND_MAX or later (an older peer lays
 * its tests out otherwise: refused, never mixed). This build's own layout
 * is the new one whatever minor it announces, so only the peer's counts. */
bool proto_find_max_ok(unsigned peer_minor);

/* Whether setup may be sent to a peer that announced `peer_minor`: both
 * sides at PROTO_MINOR_SETUP or later. */
bool proto_setup_ok(unsigned peer_minor);

/* Whether a hello's heartbeat_offer_ms counts on a session whose peer
 * announced `peer_minor`: both sides at PROTO_MINOR_HEARTBEAT_OFFER or
 * later (an agent of 1.4 reads only heartbeat_ms). */
bool proto_heartbeat_offer_ok(unsigned peer_minor);
/* Whether a hello's sparse offer and a welcome's limit count on a session
 * whose peer announced `peer_minor`: both sides at
 * PROTO_MINOR_HEARTBEAT_LIMIT or later. */
bool proto_heartbeat_limit_ok(unsigned peer_minor);

/* Whether a result carries its lateness (the agent sends it) on a session
 * whose peer announced `peer_minor`: both sides at PROTO_MINOR_LATENESS or
 * later; else the manager reports it unknown. */
bool proto_lateness_ok(unsigned peer_minor);
/* Whether the cpu's node figures go (agent) to a peer that announced
 * `peer_minor`: both sides at PROTO_MINOR_CPU_NODE or later. */
bool proto_cpu_node_ok(unsigned peer_minor);
/* Whether a result carries each CPU's figures (result.cpus) on a session
 * whose peer announced `peer_minor`: both sides at PROTO_MINOR_CPUS or
 * later. */
bool proto_cpus_ok(unsigned peer_minor);

#endif
