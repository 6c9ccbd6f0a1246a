/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/main.c - the agent's command line: options into struct
 * dyn_agent_opts, then the agent run in the foreground (run_foreground:
 * logging, the descriptor limit raised, dyn_agent_main()). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cliopt.h"
#include "common/log.h"
#include "dynamo/agent.h"
#include "dynamo/devguard.h"
#include "dynamo/os/os.h"
#include "proto/name.h"
#include "proto/plan.h"
#include "proto/version.h"

#define MAX_ALLOW 256

enum dyn_opt_id {
    OPT_HELP = 1,
    OPT_VERSION,
    OPT_LISTEN,
    OPT_MANAGER,
    OPT_MANAGER_FD,
    OPT_NAME,
    OPT_ALLOW,
    OPT_WORKDIR,
    OPT_TLS_CA,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_MANAGER_NAME,
    OPT_INSECURE,
    OPT_ALLOW_DESTRUCTIVE,
    OPT_HEARTBEAT_MS,
    OPT_MAX_WORKERS,
    OPT_MAX_BUFFER_MEM,
    OPT_MAX_AIO_EVENTS,
    OPT_ONCE,
    OPT_QUIET,
    OPT_VERBOSE,
};

static const struct iof_opt dyn_opts[] = {
    {"help", 'h', IOF_OPT_NONE, NULL, "print this help and exit", OPT_HELP},
    {"version", 0, IOF_OPT_NONE, NULL, "print the version and the protocol version and exit",
     OPT_VERSION},
    {"listen", 0, IOF_OPT_OPTIONAL, "unix:PATH|[ADDR][:PORT]",
     "wait for a manager to connect: on a unix socket (only root and the agent's own user may "
     "connect; no certificates needed), or on TCP (default all addresses, port 7066) with TLS "
     "or --insecure",
     OPT_LISTEN},
    {"manager", 0, IOF_OPT_REQUIRED, "HOST[:PORT]",
     "dial out to a manager started with iofleet run --listen (TCP, default port 7066, TLS or "
     "--insecure), reconnecting with backoff",
     OPT_MANAGER},
    {"manager-fd", 0, IOF_OPT_REQUIRED, "N",
     "used by iofleet run for its local agent: the manager is connected on descriptor N "
     "(>= 3), a unix socketpair; one session, then exit",
     OPT_MANAGER_FD},
    {"name", 0, IOF_OPT_REQUIRED, "NODE",
     "node name used in plans and results (default: the hostname; with TLS, the certificate's "
     "name): 1..64 bytes of letters, digits, '.', '_', '-'; ALL, ca and manager are reserved",
     OPT_NAME},
    {"allow", 0, IOF_OPT_REQUIRED, "PATH",
     "a file, block device or directory (its regular files) the manager may use as a target "
     "(repeatable); test files in the workdir are always allowed",
     OPT_ALLOW},
    {"workdir", 0, IOF_OPT_REQUIRED, "DIR",
     "directory for the plan's relative test files, created if missing (default "
     "./dynamo-work, relative to the agent's working directory)",
     OPT_WORKDIR},
    {"tls-ca", 0, IOF_OPT_REQUIRED, "F",
     "the CA certificate (from iofleet pki init); with --tls-cert and --tls-key: TLS 1.3 with "
     "mutual authentication",
     OPT_TLS_CA},
    {"tls-cert", 0, IOF_OPT_REQUIRED, "F", "this agent's certificate; its name is the node name",
     OPT_TLS_CERT},
    {"tls-key", 0, IOF_OPT_REQUIRED, "F", "this agent's private key", OPT_TLS_KEY},
    {"manager-name", 0, IOF_OPT_REQUIRED, "NAME",
     "the name the manager's certificate must carry (default iofleet-manager, as iofleet pki "
     "init --manager-name made it)",
     OPT_MANAGER_NAME},
    {"insecure", 0, IOF_OPT_NONE, NULL,
     "allow plain TCP without authentication: anyone who can reach the port, any local user "
     "included, can drive the agent; the manager must say --insecure too",
     OPT_INSECURE},
    {"allow-destructive", 0, IOF_OPT_NONE, NULL,
     "let write tests overwrite allowed block devices that hold data: a partition table, a "
     "filesystem, RAID or LVM signature, or first or last MiB neither zero nor marked by an "
     "earlier iofleet run. Without it such devices are refused for writes (reads are fine); "
     "mounted or otherwise busy devices are refused always",
     OPT_ALLOW_DESTRUCTIVE},
    {"heartbeat-ms", 0, IOF_OPT_REQUIRED, "N",
     "this agent's heartbeat period, 100..60000 ms (default 1000); the session uses the "
     "larger of the agent's and the manager's (a manager without its own period offers "
     "3000), capped at max(5000, N); after three periods without a word from the manager "
     "the agent stops all I/O and drops the session",
     OPT_HEARTBEAT_MS},
    {"max-workers", 0, IOF_OPT_REQUIRED, "N",
     "budget: most worker threads a plan may need here, 1..1000000000 (default 8 x online "
     "CPUs); a plan needing more is refused before anything starts",
     OPT_MAX_WORKERS},
    {"max-buffer-mem", 0, IOF_OPT_REQUIRED, "SIZE",
     "budget: most I/O buffer memory, a size like 512m or 4g (default half of MemAvailable and "
     "of the cgroup's room)",
     OPT_MAX_BUFFER_MEM},
    {"max-aio-events", 0, IOF_OPT_REQUIRED, "N",
     "budget: most AIO events, 1..1000000000 (default aio-max-nr - aio-nr, less 1/8 kept for "
     "the host)",
     OPT_MAX_AIO_EVENTS},
    {"once", 0, IOF_OPT_NONE, NULL, "exit when the first manager session ends", OPT_ONCE},
    {"quiet", 'q', IOF_OPT_NONE, NULL, "log errors only", OPT_QUIET},
    {"verbose", 'v', IOF_OPT_NONE, NULL, "log debug messages too", OPT_VERBOSE},
};

static bool dyn_listen_takes(int id, const char *next)
{
    (void)next;
    return id == OPT_LISTEN; /* dynamo has no positional arguments */
}

static const struct iof_cmd dyn_cmd = {
    .prog = "dynamo",
    .synopsis = "(--listen [ADDRESS] | --manager HOST[:PORT]) [OPTION]...",
    .about = "The iofleet agent: runs the I/O a manager (iofleet run) asks for on this node's "
             "allowed files and devices and reports its measurements. It touches only its "
             "workdir and what --allow names (docs/security.md).",
    .opts = dyn_opts,
    .nopts = sizeof(dyn_opts) / sizeof(dyn_opts[0]),
    .epilog = "exit codes: 0 stopped by SIGINT or SIGTERM (or, with --once, the session\n"
              "            ended), 1 cannot listen, 2 usage error, bad certificate or\n"
              "            unusable --manager-fd, 3 the --manager-fd peer is not root or\n"
              "            this user\n",
    .takes_next = dyn_listen_takes,
};

static int dyn_count(const char *opt, const char *val, uint64_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(val, &end, 10);
    if (val[0] < '1' || val[0] > '9' || *end || errno || v > 1000000000ull)
        return iof_opt_usage_error(&dyn_cmd, "%s must be 1..1000000000, got '%s'", opt, val);
    *out = v;
    return 0;
}

/* Parses argv into *o; 0, -1 after --help/--version (exit 0), or 2. */
static int dyn_parse(int argc, char **argv, struct dyn_agent_opts *o, const char **allow,
                     enum iof_log_level *level)
{
    struct iof_opt_parser p;
    const char *val;
    int id, rc = 0;

    if (iof_opt_init(&p, &dyn_cmd, argc, argv)) {
        IOF_USER("dynamo: out of memory");
        return 2;
    }
    while (rc == 0 && (id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        char *end;
        long n;
        switch (id) {
        case IOF_OPT_ERROR:
            rc = 2;
            break;
        case IOF_OPT_HELP:
            rc = -1;
            break;
        case IOF_OPT_POSITIONAL:
            rc = iof_opt_usage_error(&dyn_cmd, "unexpected argument '%s'", val);
            break;
        case OPT_VERSION:
            printf("dynamo %s (protocol %s)\n", IOF_VERSION, proto_version_string());
            rc = -1;
            break;
        case OPT_LISTEN:
            o->listen = val ? val : ""; /* alone: all addresses, port 7066 */
            break;
        case OPT_MANAGER_FD:
            errno = 0;
            n = strtol(val, &end, 10);
            if (!*val || *end || errno || n < 3 || n > 1 << 20)
                rc = iof_opt_usage_error(&dyn_cmd, "--manager-fd must be a descriptor number >= 3");
            o->use_manager_fd = true;
            o->manager_fd = (int)n;
            /* Started by a local `iofleet run`: its user passes the flag there. */
            dyn_devguard_set_remedy("rerun `iofleet run` with --allow-destructive");
            break;
        case OPT_MANAGER:
            o->manager = val;
            break;
        case OPT_NAME:
            o->name = val;
            break;
        case OPT_WORKDIR:
            o->workdir = val;
            break;
        case OPT_ALLOW:
            if (o->nallow == MAX_ALLOW)
                rc = iof_opt_usage_error(&dyn_cmd, "too many --allow (max %d)", MAX_ALLOW);
            else
                allow[o->nallow++] = val;
            break;
        case OPT_HEARTBEAT_MS:
            errno = 0;
            n = strtol(val, &end, 10);
            if (!*val || *end || errno || n < 100 || n > 60000)
                rc = iof_opt_usage_error(&dyn_cmd, "--heartbeat-ms must be 100..60000, got '%s'",
                                         val);
            o->heartbeat_ms = (uint32_t)n;
            break;
        case OPT_MAX_WORKERS:
            rc = dyn_count("--max-workers", val, &o->max_workers);
            break;
        case OPT_MAX_AIO_EVENTS:
            rc = dyn_count("--max-aio-events", val, &o->max_aio_events);
            break;
        case OPT_MAX_BUFFER_MEM:
            if (proto_plan_parse_size(val, &o->max_buffer_mem) || !o->max_buffer_mem)
                rc = iof_opt_usage_error(
                    &dyn_cmd, "--max-buffer-mem must be a size like 512m or 4g, got '%s'", val);
            break;
        case OPT_TLS_CA:
            o->tls_ca = val;
            break;
        case OPT_TLS_CERT:
            o->tls_cert = val;
            break;
        case OPT_TLS_KEY:
            o->tls_key = val;
            break;
        case OPT_MANAGER_NAME:
            o->manager_name = val;
            break;
        case OPT_INSECURE:
            o->insecure = true;
            break;
        case OPT_ALLOW_DESTRUCTIVE:
            o->allow_destructive = true;
            break;
        case OPT_ONCE:
            o->once = true;
            break;
        case OPT_VERBOSE:
            *level = IOF_LOG_DEBUG;
            break;
        case OPT_QUIET:
            *level = IOF_LOG_ERROR;
            break;
        default:
            rc = iof_opt_usage_error(&dyn_cmd, "option not handled");
            break;
        }
    }
    iof_opt_free(&p);
    return rc;
}

/* Runs the agent in the foreground: logs to stderr, stops on SIGINT or
 * SIGTERM (Windows: Ctrl-C, Ctrl-Break, the console's close), or at the end
 * of the session with --once. The Windows service runs it too (logging
 * elsewhere, stopped through dyn_agent_request_stop()). */
static int run_foreground(const struct dyn_agent_opts *o, enum iof_log_level level)
{
    int rc;

    iof_log_init("dynamo", level);
    dyn_os_raise_fd_limit();
    rc = dyn_agent_main(o);
    dyn_os_agent_stopped();
    return rc;
}

/* Parses the options and runs the agent (dyn_os_agent_fn): in the foreground,
 * or for the system's service (dyn_os_service), which also checks options with
 * check_only before it installs them. */
static int agent_run(int argc, char **argv, bool check_only)
{
    struct dyn_agent_opts o = {.workdir = "dynamo-work"};
    const char *allow[MAX_ALLOW];
    enum iof_log_level level = IOF_LOG_INFO;
    struct iof_diag d;
    int rc;

    o.allow = allow;
    rc = dyn_parse(argc, argv, &o, allow, &level);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (o.use_manager_fd && !check_only)
        dyn_os_own_job(); /* --manager-fd given later than first (main()) */
    if (o.name && proto_node_name_check("--name", o.name, &d)) {
        IOF_USER("dynamo: %s", d.msg);
        return 2;
    }
    return check_only ? 0 : run_foreground(&o, level);
}

int main(int argc, char **argv)
{
    int rc;

    /* A manager that closes while we write is an EPIPE to handle, not a
     * death by SIGPIPE: before anything can write to a socket. */
    dyn_os_process_init();
    /* iofleet run starts its local agent as `dynamo --manager-fd 3 ...`: out
     * of the terminal's foreground group before anything else, so that a
     * Ctrl-C can reach it only between the fork and here (the exec and the
     * loader), not while its options are read. */
    if (argc > 1 && !strcmp(argv[1], "--manager-fd"))
        dyn_os_own_job();
    rc = dyn_os_service(argc, argv, agent_run);
    return rc >= 0 ? rc : agent_run(argc, argv, false);
}
