/* SPDX-License-Identifier: Apache-2.0 */
/* proto/version.c - the protocol version of this build as text, and the
 * minor announced to peers (with its override for compatibility tests). */
#include "proto/version.h"

#include <stdlib.h>
#include <string.h>

#define PROTO_STR2(x) #x
#define PROTO_STR(x) PROTO_STR2(x)

const char *proto_version_string(void)
{
    return PROTO_STR(PROTO_VERSION_MAJOR) "." PROTO_STR(PROTO_VERSION_MINOR);
}

unsigned proto_version_minor(void)
{
    static int minor = -1;

    if (minor < 0) {
        const char *s = getenv("IOF_PROTO_MINOR");
        char *end;
        long v = s && *s ? strtol(s, &end, 10) : -1;
        minor = v >= 0 && v <= PROTO_VERSION_MINOR && !*end ? (int)v : PROTO_VERSION_MINOR;
    }
    return (unsigned)minor;
}

bool proto_stats_binary_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_STATS_BINARY &&
           peer_minor >= PROTO_MINOR_STATS_BINARY;
}

bool proto_stats_node_hist_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_NODE_HIST && peer_minor >= PROTO_MINOR_NODE_HIST;
}

bool proto_clean_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_CLEAN && peer_minor >= PROTO_MINOR_CLEAN;
}

bool proto_find_max_ok(unsigned peer_minor)
{
    return peer_minor >= PROTO_MINOR_FIND_MAX;
}

bool proto_setup_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_SETUP && peer_minor >= PROTO_MINOR_SETUP;
}

bool proto_heartbeat_offer_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_HEARTBEAT_OFFER &&
           peer_minor >= PROTO_MINOR_HEARTBEAT_OFFER;
}

bool proto_heartbeat_limit_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_HEARTBEAT_LIMIT &&
           peer_minor >= PROTO_MINOR_HEARTBEAT_LIMIT;
}

bool proto_lateness_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_LATENESS && peer_minor >= PROTO_MINOR_LATENESS;
}

bool proto_cpu_node_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_CPU_NODE && peer_minor >= PROTO_MINOR_CPU_NODE;
}

bool proto_cpus_ok(unsigned peer_minor)
{
    return proto_version_minor() >= PROTO_MINOR_CPUS && peer_minor >= PROTO_MINOR_CPUS;
}
