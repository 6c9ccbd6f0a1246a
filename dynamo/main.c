/* dynamo/main.c - the agent's command line: options into struct
 * dyn_agent_opts, the descriptor limit raised, then dyn_agent_main(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "common/log.h"
#include "dynamo/agent.h"
#include "proto/plan.h"
#include "proto/version.h"

#define MAX_ALLOW 256

static void usage(FILE *f)
{
    fputs(
        "usage: dynamo --listen unix:PATH | --listen [ADDR][:PORT] | --manager HOST[:PORT]\n"
        "              [--name NODE] [--allow PATH]... [--workdir DIR]\n"
        "              [--tls-ca F --tls-cert F --tls-key F] [--manager-name NAME]\n"
        "              [--insecure] [--allow-destructive] [--heartbeat-ms N] [--quiet|--verbose]\n"
        "              [--max-workers N] [--max-buffer-mem SIZE] [--max-aio-events N]\n"
        "\n"
        "  --listen     wait for a manager to connect: on a unix socket (only root and\n"
        "               the agent's own user may connect; no certificates needed), or\n"
        "               on TCP (default port 7066) with TLS or --insecure\n"
        "  --manager    dial out to a manager (TCP, TLS or --insecure), reconnecting\n"
        "               with backoff\n"
        "  --name       node name used in plans and results (default: hostname)\n"
        "  --allow      a file or block device (or directory) the manager may use;\n"
        "               repeatable; test files in the workdir are always allowed\n"
        "  --workdir    directory for test files (default ./dynamo-work)\n"
        "  --tls-ca, --tls-cert, --tls-key\n"
        "               TLS 1.3 with mutual authentication (iofleet pki init makes the\n"
        "               files); the node name is the certificate's; the manager must\n"
        "               present a certificate for iofleet-manager (or --manager-name)\n"
        "  --insecure   allow plain TCP without authentication: anyone who can reach\n"
        "               the port, any local user included, can drive the agent; the\n"
        "               manager must say --insecure too\n"
        "  --manager-fd N  (used by iofleet run) the manager is connected on descriptor\n"
        "               N, a unix socketpair; one session, then exit\n"
        "  --max-workers N, --max-buffer-mem SIZE, --max-aio-events N\n"
        "               this agent's budget: a plan needing more worker threads\n"
        "               (default 8 x online CPUs), I/O buffer memory (default half\n"
        "               of MemAvailable and of the cgroup's room) or AIO events\n"
        "               (default aio-max-nr - aio-nr, less 1/8 kept for the host)\n"
        "               is refused before anything starts\n",
        f);
}

/* Raises the soft descriptor limit to the hard one (systemd's default soft
 * limit is 1024): connections, targets and a flood's worth of pending
 * handshakes all need descriptors. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
        return;
    rlim_t was = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        IOF_WARN("cannot raise the descriptor limit from %llu to %llu: %s", (unsigned long long)was,
                 (unsigned long long)rl.rlim_max, strerror(errno));
    else
        IOF_INFO("descriptor limit raised from %llu to %llu", (unsigned long long)was,
                 (unsigned long long)rl.rlim_max);
}

int main(int argc, char **argv)
{
    struct dyn_agent_opts o = {.workdir = "dynamo-work"};
    const char *allow[MAX_ALLOW];
    enum iof_log_level level = IOF_LOG_INFO;

    o.allow = allow;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("dynamo %s (protocol %s)\n", IOF_VERSION, proto_version_string());
            return 0;
        } else if (!strcmp(a, "--listen")) {
            /* The address is optional: "--listen" alone means all addresses, port 7066. */
            o.listen = has_val && argv[i + 1][0] != '-' ? argv[++i] : "";
        } else if (!strcmp(a, "--manager-fd") && has_val) {
            char *end;
            long fd = strtol(argv[++i], &end, 10);
            if (*end || fd < 3 || fd > 1 << 20) {
                fprintf(stderr, "dynamo: --manager-fd must be a descriptor number >= 3\n");
                return 2;
            }
            o.use_manager_fd = true;
            o.manager_fd = (int)fd;
        } else if (!strcmp(a, "--manager") && has_val) {
            o.manager = argv[++i];
        } else if (!strcmp(a, "--name") && has_val) {
            o.name = argv[++i];
        } else if (!strcmp(a, "--workdir") && has_val) {
            o.workdir = argv[++i];
        } else if (!strcmp(a, "--allow") && has_val) {
            if (o.nallow == MAX_ALLOW) {
                fprintf(stderr, "dynamo: too many --allow (max %d)\n", MAX_ALLOW);
                return 2;
            }
            allow[o.nallow++] = argv[++i];
        } else if (!strcmp(a, "--heartbeat-ms") && has_val) {
            o.heartbeat_ms = (uint32_t)strtoul(argv[++i], NULL, 10);
            if (o.heartbeat_ms < 100 || o.heartbeat_ms > 60000) {
                fprintf(stderr, "dynamo: --heartbeat-ms must be 100..60000\n");
                return 2;
            }
        } else if ((!strcmp(a, "--max-workers") || !strcmp(a, "--max-aio-events")) && has_val) {
            char *end;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (argv[i][0] < '1' || argv[i][0] > '9' || *end || v > 1000000000ull) {
                fprintf(stderr, "dynamo: %s must be 1..1000000000, got '%s'\n", a, argv[i]);
                return 2;
            }
            if (!strcmp(a, "--max-workers"))
                o.max_workers = v;
            else
                o.max_aio_events = v;
        } else if (!strcmp(a, "--max-buffer-mem") && has_val) {
            if (proto_plan_parse_size(argv[++i], &o.max_buffer_mem) || !o.max_buffer_mem) {
                fprintf(stderr,
                        "dynamo: --max-buffer-mem must be a size like 512m or 4g, got '%s'\n",
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--tls-ca") && has_val) {
            o.tls_ca = argv[++i];
        } else if (!strcmp(a, "--tls-cert") && has_val) {
            o.tls_cert = argv[++i];
        } else if (!strcmp(a, "--tls-key") && has_val) {
            o.tls_key = argv[++i];
        } else if (!strcmp(a, "--manager-name") && has_val) {
            o.manager_name = argv[++i];
        } else if (!strcmp(a, "--insecure")) {
            o.insecure = true;
        } else if (!strcmp(a, "--allow-destructive")) {
            o.allow_destructive = true;
        } else if (!strcmp(a, "--once")) {
            o.once = true;
        } else if (!strcmp(a, "--verbose")) {
            level = IOF_LOG_DEBUG;
        } else if (!strcmp(a, "--quiet")) {
            level = IOF_LOG_ERROR;
        } else {
            fprintf(stderr, "dynamo: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (o.name && !strcasecmp(o.name, "ALL")) {
        /* Result files use ALL for the cluster rows. */
        fprintf(stderr, "dynamo: --name ALL is reserved\n");
        return 2;
    }
    iof_log_init("dynamo", level);
    raise_fd_limit();
    return dyn_agent_main(&o);
}
