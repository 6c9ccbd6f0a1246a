/* SPDX-License-Identifier: Apache-2.0 */
/* manager/local_agent.c - the embedded agent of `iofleet run` with neither
 * agents nor a listen address (Iometer's "(Local)"): one dynamo started on
 * a socketpair, allowed exactly the plan's absolute paths.
 */
#include "manager/local_agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"

/* Starts the embedded agent connected to us by a socketpair (its end is
 * its descriptor 3): no port for another local user to reach, and each end
 * knows the other's user from the kernel. The agent stays in our session,
 * so the scheduler gives its workers the share of the command the user ran
 * (autogroup: a group per session), not a session's share of their own;
 * first thing, it takes a process group of its own (dyn_os_own_job), so a
 * terminal's Ctrl-C, sent to the whole foreground process group, reaches
 * only the manager, which stops the test and collects its results. The
 * agent still ends with the manager, as the socketpair's end is its --once
 * session. */
int mgr_local_agent_spawn(uv_loop_t *loop, const struct mgr_run_opts *o, const struct iof_plan *p,
                          uv_process_t *child, uv_exit_cb on_exit, bool *running,
                          struct iof_conn **conn)
{
    char **argv;
    size_t n = 0, max = 20 + 2 * 1024;
    uv_process_options_t po = {0};
    uv_stdio_container_t stdio[4];
    int sv[2], r;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        r = -errno;
        IOF_USER("iofleet: cannot start the local agent: socketpair: %s", strerror(errno));
        return r;
    }
    argv = calloc(max, sizeof(*argv));
    if (!argv) {
        close(sv[0]);
        close(sv[1]);
        return -ENOMEM;
    }
    argv[n++] = (char *)o->dynamo;
    argv[n++] = "--manager-fd";
    argv[n++] = "3";
    argv[n++] = "--name";
    argv[n++] = "local";
    argv[n++] = "--workdir";
    argv[n++] = (char *)o->workdir;
    argv[n++] = "--once";
    argv[n++] = "--quiet"; /* the manager reports what matters */
    if (o->allow_destructive)
        argv[n++] = "--allow-destructive";
    if (o->heartbeat_ms) {
        static char hb[16];
        snprintf(hb, sizeof(hb), "%u", o->heartbeat_ms);
        argv[n++] = "--heartbeat-ms";
        argv[n++] = hb;
    }
    /* Allowed: exactly the absolute paths the plan names. */
    for (size_t g = 0; g < p->nworkers; g++)
        for (size_t t = 0; t < p->workers[g].ntargets && n + 3 < max; t++) {
            const struct iof_target_cfg *tc = &p->workers[g].targets[t];
            if (tc->path[0] == '/') {
                argv[n++] = "--allow";
                argv[n++] = (char *)tc->path;
            }
            /* A per-node map: the entry of the local agent's name. */
            if (n + 3 < max && iof_target_path(tc, "local") != tc->path &&
                iof_target_path(tc, "local")[0] == '/') {
                argv[n++] = "--allow";
                argv[n++] = (char *)iof_target_path(tc, "local");
            }
        }
    argv[n] = NULL;
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_INHERIT_FD;
    stdio[1].data.fd = 2;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    stdio[3].flags = UV_INHERIT_FD;
    stdio[3].data.fd = sv[1];
    po.file = o->dynamo;
    po.args = argv;
    po.exit_cb = on_exit;
    po.stdio = stdio;
    po.stdio_count = 4;
    r = uv_spawn(loop, child, &po);
    free(argv);
    close(sv[1]); /* the child's end: it has its own copy now */
    if (r < 0) {
        close(sv[0]);
        IOF_USER("iofleet: cannot start the local agent '%s': %s", o->dynamo, uv_strerror(r));
        return r;
    }
    *running = true;
    r = iof_conn_open_fd(loop, sv[0], "the local agent", NULL, NULL, conn);
    if (r < 0) {
        IOF_USER("iofleet: cannot talk to the local agent: %s", iof_strerror(r));
        return r;
    }
    return 0;
}
