/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/agent.c - the agent daemon: listening and dialling, who may connect, and
 * dyn_agent_main. Sessions, preparation and tests are in the agent_*.c files
 * beside it (dynamo/agent_int.h). */
#include "dynamo/agent_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void agent_dial(struct agent *a);

void dyn_agent_on_reconnect(uv_timer_t *t)
{
    agent_dial(t->data);
}

/* --- targets the agent allows --------------------------------------------- */

/* 0 when cfg's path may be opened by this agent, else the reason: the
 * scope's rules (dynamo/scope.h). A test file may not exist yet; its
 * directory must. Checked again, on what is opened, when a test starts. */
int dyn_agent_check_target(const struct agent *a, const struct iof_target_cfg *cfg,
                           struct iof_diag *d)
{
    const char *base;
    int fd;

    if (cfg->path[0] != '/') {
        fd = dyn_scope_open_parent(a->scope, cfg->path, &base, d);
        if (fd < 0)
            return fd;
        close(fd);
    }
    fd = dyn_scope_open(a->scope, cfg->path, O_PATH, NULL, d);
    if (fd == -ENOENT && cfg->path[0] != '/')
        return 0;
    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

/* --- listening and dialling --------------------------------------------------------- */

/* Tells the peer why (an error frame, so it does not retry blindly) and
 * closes c. */
static void agent_refuse(struct agent *a, struct iof_conn *c, const char *text)
{
    struct proto_msg m;
    uint8_t *frame;
    size_t len;

    (void)a;
    proto_msg_init(&m, PROTO_MSG_ERROR);
    m.u.error.code = IOF_EDENIED;
    m.u.error.message = text;
    if (proto_msg_encode_frame(&m, PROTO_FRAME_MAX_PREAUTH, &frame, &len, NULL) == 0) {
        iof_conn_write(c, frame, len);
        free(frame);
    }
    iof_conn_close(c, IOF_EDENIED);
}

/* Who may talk to the agent: over TLS a peer whose certificate names the
 * manager; over a unix socket (--listen unix:PATH, or the socketpair of
 * `iofleet run`'s embedded agent) a peer the kernel says is root or this
 * agent's own user; over plain TCP anybody, which is why plain TCP needs
 * --insecure (checked at start-up). */
static bool agent_conn_allowed(struct agent *a, struct iof_conn *c)
{
    struct iof_diag d = {{0}};
    const char *want = a->o->manager_name ? a->o->manager_name : IOF_TLS_MANAGER_NAME;
    char text[PROTO_TEXT_MAX + 1];

    if (iof_conn_is_unix(c)) {
        if (iof_conn_check_local_peer(c, &d) == 0)
            return true;
        IOF_WARN("refused connection: %s; only root or the agent's own user may drive it "
                 "without a certificate",
                 d.msg);
        snprintf(text, sizeof(text),
                 "agent %s accepts only root or its own user on its unix socket", a->name);
        agent_refuse(a, c, text);
        return false;
    }
    if (a->tls) {
        if (iof_conn_check_peer_name(c, want, &d)) {
            snprintf(text, sizeof(text), "agent %s accepts only a manager certificate for '%s': %s",
                     a->name, want, d.msg);
            IOF_WARN("refused %s: %s", iof_conn_peer(c), d.msg);
            agent_refuse(a, c, text);
            return false;
        }
        return true;
    }
    if (!a->o->insecure) { /* not reached: plain TCP is refused at start-up */
        IOF_WARN("refused plain TCP connection %s %s: use TLS or a unix socket",
                 a->o->listen ? "from" : "to", iof_conn_peer(c));
        iof_conn_close(c, IOF_EDENIED);
        return false;
    }
    return true;
}

static void agent_on_accept(struct iof_listener *l, struct iof_conn *c, void *arg)
{
    struct agent *a = arg;
    (void)l;
    if (agent_conn_allowed(a, c))
        dyn_session_new(a, c);
}

/* The end of a period of handshake-timeout lines: the ones not logged are
 * summed up, and a new period starts (a flood goes on: one line a period);
 * after a quiet period the next timeout is logged at once. */
static void agent_on_hs_log_timer(uv_timer_t *t)
{
    struct agent *a = t->data;

    if (!a->hs_quiet) {
        a->hs_log_until_ns = 0; /* whatever the clocks' rounding */
        return;
    }
    IOF_WARN("%" PRIu64 " more TLS handshakes timed out in the last %.0f s (not logged one by one; "
             "the last with %s)",
             a->hs_quiet, AGENT_HS_TIMEOUT_LOG_MS / 1000.0, a->hs_quiet_peer);
    a->hs_quiet = 0;
    a->hs_log_until_ns = uv_hrtime() + (uint64_t)AGENT_HS_TIMEOUT_LOG_MS * IOF_NS_PER_MS;
    uv_timer_start(t, agent_on_hs_log_timer, AGENT_HS_TIMEOUT_LOG_MS, 0);
}

static void agent_on_reject(struct iof_listener *l, struct iof_conn *c, int err, void *arg)
{
    struct agent *a = arg;
    (void)l;

    if (err == IOF_ETIMEOUT) {
        uint64_t now = uv_hrtime();
        if (now < a->hs_log_until_ns) {
            a->hs_quiet++;
            snprintf(a->hs_quiet_peer, sizeof(a->hs_quiet_peer), "%s", iof_conn_peer(c));
            return;
        }
        a->hs_log_until_ns = now + (uint64_t)AGENT_HS_TIMEOUT_LOG_MS * IOF_NS_PER_MS;
        uv_timer_start(&a->hs_log_timer, agent_on_hs_log_timer, AGENT_HS_TIMEOUT_LOG_MS, 0);
    }
    IOF_WARN("TLS handshake with %s failed: %s", iof_conn_peer(c),
             iof_conn_error(c)[0] ? iof_conn_error(c) : iof_strerror(err));
}

static void agent_on_connect(struct iof_conn *c, int err, void *arg)
{
    struct agent *a = arg;
    if (err) {
        uint64_t delay = iof_backoff_next(&a->backoff);
        /* err is libuv's or, from the TLS handshake, a project code (IOF_EPROTO). */
        IOF_WARN("cannot reach manager %s:%u: %s; retrying in %.1f s", a->mhost, a->port,
                 err < -4000 && err > UV_EOF ? iof_strerror(err) : uv_strerror(err),
                 (double)delay / 1000);
        if (iof_conn_error(c)[0] && err != -ECONNREFUSED)
            IOF_WARN("(%s)", iof_conn_error(c));
        uv_timer_start(&a->reconnect, dyn_agent_on_reconnect, delay, 0);
        return;
    }
    if (a->tls)
        IOF_INFO("TLS session with manager %s:%u: %s handshake", a->mhost, a->port,
                 iof_conn_tls_resumed(c) ? "resumed" : "full");
    if (agent_conn_allowed(a, c))
        dyn_session_new(a, c);
    else
        uv_timer_start(&a->reconnect, dyn_agent_on_reconnect, iof_backoff_next(&a->backoff), 0);
}

static void agent_conn_closed_early(struct iof_conn *c, int err, void *arg)
{
    (void)c;
    (void)err;
    (void)arg;
}

static void agent_dial(struct agent *a)
{
    static const struct iof_conn_cbs cbs = {.on_connect = agent_on_connect,
                                            .on_close = agent_conn_closed_early};
    struct iof_conn *c;
    int r;

    if (a->stopping || a->active)
        return;
    r = a->tls ? iof_conn_connect_tls(a->loop, a->mhost, a->port, a->tls, &cbs, a, &c)
               : iof_conn_connect(a->loop, a->mhost, a->port, &cbs, a, &c);
    if (r < 0) {
        IOF_WARN("cannot dial manager %s:%u: %s", a->mhost, a->port, uv_strerror(r));
        uv_timer_start(&a->reconnect, dyn_agent_on_reconnect, iof_backoff_next(&a->backoff), 0);
    }
}

/* Shuts the agent down: the running test stops, every connection closes and
 * the listener with them; the loop ends once the last session is freed. What
 * a SIGINT or SIGTERM does in the foreground, and what a service manager's
 * stop will do. */
static void agent_stop(struct agent *a)
{
    a->stopping = true;
    if (a->active)
        dyn_session_abort_test(a->active);
    /* Every connection closes; the last dyn_session_on_close ends the loop. */
    for (struct session *s = a->sessions; s; s = s->next)
        if (s->link)
            proto_link_close(s->link, 0, s == a->active ? "agent shutting down" : NULL);
    if (!a->allocated)
        dyn_agent_shutdown(a);
    else if (a->listener) {
        iof_listener_close(a->listener);
        a->listener = NULL;
    }
}

static void agent_on_signal(uv_signal_t *h, int sig)
{
    IOF_INFO("signal %d: shutting down", sig);
    agent_stop(h->data);
}

/* The agent dyn_agent_request_stop() reaches: set while its stop_async is
 * open, so a request never touches a closed handle. */
static pthread_mutex_t agent_running_lock = PTHREAD_MUTEX_INITIALIZER;
static struct agent *agent_running;

static void agent_on_stop_request(uv_async_t *h)
{
    IOF_INFO("stop requested: shutting down");
    agent_stop(h->data);
}

int dyn_agent_request_stop(void)
{
    int r = -ESRCH;

    pthread_mutex_lock(&agent_running_lock);
    if (agent_running)
        r = uv_async_send(&agent_running->stop_async);
    pthread_mutex_unlock(&agent_running_lock);
    return r;
}

/* Closes the handle of dyn_agent_request_stop(), once: later requests find
 * no agent. */
void dyn_agent_close_stop(struct agent *a)
{
    pthread_mutex_lock(&agent_running_lock);
    if (agent_running == a)
        agent_running = NULL;
    pthread_mutex_unlock(&agent_running_lock);
    uv_close((uv_handle_t *)&a->stop_async, NULL);
}

static int agent_canonical_allow(struct agent *a)
{
    a->allow_real = calloc(a->o->nallow ? a->o->nallow : 1, sizeof(*a->allow_real));
    if (!a->allow_real)
        return -ENOMEM;
    for (size_t i = 0; i < a->o->nallow; i++) {
        char real[PATH_MAX];
        if (a->o->allow[i][0] != '/') {
            IOF_USER("dynamo: --allow '%s': must be an absolute path", a->o->allow[i]);
            return -EINVAL;
        }
        if (!realpath(a->o->allow[i], real)) {
            /* A device may appear later; until then nothing under it opens. */
            IOF_WARN("--allow '%s': %s; ignored", a->o->allow[i], strerror(errno));
            continue;
        }
        a->allow_real[a->nallow] = strdup(real);
        if (!a->allow_real[a->nallow])
            return -ENOMEM;
        a->nallow++;
    }
    return 0;
}

/* Unauthenticated connections may hold at most what is left of the
 * descriptor limit after AGENT_FD_RESERVE and the agent's own pre-hello
 * sessions, so a flood never takes the descriptor the manager needs. */
static void agent_set_listener_limits(struct agent *a)
{
    uint64_t avail = dyn_os_fd_limit(), budget;
    unsigned pending = IOF_LISTENER_MAX_PENDING;

    if (avail == UINT64_MAX)
        avail = 1u << 20;
    budget = avail > AGENT_FD_RESERVE + AGENT_MAX_PENDING + 16
                 ? avail - AGENT_FD_RESERVE - AGENT_MAX_PENDING - 16
                 : 8;
    if (budget < pending)
        pending = budget < 8 ? 8 : (unsigned)budget;
    iof_listener_set_limits(a->listener, pending, IOF_LISTENER_MAX_PER_SOURCE);
    IOF_INFO("descriptor limit %" PRIu64 ": at most %u unauthenticated connections (%u per "
             "address) and %u waiting for their hello; the rest is kept for the manager",
             avail, pending, IOF_LISTENER_MAX_PER_SOURCE, AGENT_MAX_PENDING);
}

/* The options that decide how the agent talks to its manager, checked
 * together: exactly one way to reach it, TLS files all or none and never on
 * a unix socket, plain TCP only with --insecure. Returns 0 and *on_unix,
 * *plain and *upath (the socket path of --listen unix:PATH, or NULL), or
 * the exit code 2 with the reason printed. */
static int agent_check_opts(const struct dyn_agent_opts *o, bool *on_unix, bool *plain,
                            const char **upath)
{
    if (!!o->listen + !!o->manager + !!o->use_manager_fd != 1) {
        IOF_USER("dynamo: give exactly one of --listen or --manager");
        return 2;
    }
    if (o->manager && iof_addr_is_unix(o->manager, NULL)) {
        IOF_USER("dynamo: --manager %s: an agent listens on a unix socket "
                 "(--listen unix:PATH), it does not dial one",
                 o->manager);
        return 2;
    }
    *on_unix = o->use_manager_fd || (o->listen && iof_addr_is_unix(o->listen, upath));
    if (*on_unix && (o->tls_ca || o->tls_cert || o->tls_key)) {
        IOF_USER("dynamo: --tls-* do not apply to a unix socket: its peer is known by "
                 "its user (root or the agent's own)");
        return 2;
    }
    *plain = !*on_unix && !o->tls_ca;
    if (*plain && !o->insecure) {
        IOF_USER("dynamo: %s %s: plain TCP would let anyone who can reach it, any local user "
                 "included (loopback is no identity), drive this agent; use TLS (--tls-ca, "
                 "--tls-cert, --tls-key), a unix socket (--listen unix:PATH), or --insecure "
                 "(here and on the manager) to accept that",
                 o->listen ? "--listen" : "--manager", o->listen ? o->listen : o->manager);
        return 2;
    }
    return 0;
}

/* Who the agent is: this machine's hostname, its TLS context (the listening
 * agent is the TLS server, a dialling one the client) and its node name,
 * the name in its certificate when it has one. 0, or the exit code 2 with
 * the reason printed (a->tls freed). */
static int agent_identity(struct agent *a)
{
    const struct dyn_agent_opts *o = a->o;
    struct iof_diag d = {{0}};

    {
        /* Sent in every hello: escaped to the text policy as the inventory is. */
        char raw[256] = "";
        gethostname(raw, sizeof(raw) - 1);
        dyn_inventory_clean(a->host, sizeof(a->host), raw);
    }
    if (!!o->tls_ca + !!o->tls_cert + !!o->tls_key != 0 &&
        !!o->tls_ca + !!o->tls_cert + !!o->tls_key != 3) {
        IOF_USER("dynamo: TLS needs all of --tls-ca, --tls-cert and --tls-key");
        return 2;
    }
    if (o->tls_ca) {
        /* The listening agent is the TLS server; a dialling one the client. */
        if (iof_tls_config_load(NULL, o->tls_ca, o->tls_cert, o->tls_key, o->listen != NULL,
                                &a->tls, &d)) {
            IOF_USER("dynamo: %s", d.msg);
            return 2;
        }
        /* The agent's identity is the name in its certificate. */
        if (!iof_tls_ctx_own_name(a->tls)) {
            IOF_USER("dynamo: %s: the certificate carries no usable name", o->tls_cert);
            iof_tls_ctx_free(a->tls);
            a->tls = NULL;
            return 2;
        }
        if (o->name && strcasecmp(o->name, iof_tls_ctx_own_name(a->tls))) {
            IOF_USER("dynamo: --name %s does not match the certificate's name '%s' (%s)", o->name,
                     iof_tls_ctx_own_name(a->tls), o->tls_cert);
            iof_tls_ctx_free(a->tls);
            a->tls = NULL;
            return 2;
        }
    }
    snprintf(a->name, sizeof(a->name), "%s",
             a->tls    ? iof_tls_ctx_own_name(a->tls)
             : o->name ? o->name
                       : a->host);
    if (proto_node_name_check("node name", a->name, &d)) {
        IOF_USER("dynamo: %s", d.msg);
        return 2;
    }
    return 0;
}

/* The loop and the handles the agent keeps for its whole life: the redial
 * timer and backoff, the handshake-log timer, the inventory cache and its
 * refresh, and SIGINT/SIGTERM and dyn_agent_request_stop(), which stop the
 * agent (agent_stop). */
static void agent_loop_init(struct agent *a)
{
    a->loop = uv_default_loop();
    iof_backoff_init(&a->backoff, IOF_REDIAL_MIN_MS, IOF_REDIAL_MAX_MS,
                     uv_hrtime() ^ ((uint64_t)getpid() << 32));
    uv_timer_init(a->loop, &a->reconnect);
    a->reconnect.data = a;
    uv_timer_init(a->loop, &a->hs_log_timer);
    a->hs_log_timer.data = a;
    uv_timer_init(a->loop, &a->inv_timer);
    a->inv_timer.data = a;
    uv_async_init(a->loop, &a->inv_async, dyn_agent_on_inventory);
    a->inv_async.data = a;
    a->inv = dyn_inv_cache_new(a->o->workdir, a->allow_real, a->nallow);
    if (!a->inv)
        IOF_WARN("out of memory for the inventory: hellos carry none");
    uv_signal_init(a->loop, &a->sigint);
    uv_signal_init(a->loop, &a->sigterm);
    a->sigint.data = a;
    a->sigterm.data = a;
    uv_signal_start(&a->sigint, agent_on_signal, SIGINT);
    uv_signal_start(&a->sigterm, agent_on_signal, SIGTERM);
    uv_async_init(a->loop, &a->stop_async, agent_on_stop_request);
    a->stop_async.data = a;
    pthread_mutex_lock(&agent_running_lock);
    agent_running = a;
    pthread_mutex_unlock(&agent_running_lock);
    dyn_os_process_init();
}

/* Reaches the manager the way the options say: the inherited socketpair,
 * a unix or TCP listener, or a dial-out. Returns 0 with the loop's work
 * started, or the exit code (1: cannot listen, 2: bad address or
 * descriptor, 3: the socketpair's peer is not allowed) with the reason
 * printed. *run_loop: the caller runs the loop (to its end, for a failure
 * whose handles are closing); false only when nothing was started. */
static int agent_connect(struct agent *a, const char *upath, bool *run_loop)
{
    const struct dyn_agent_opts *o = a->o;
    struct iof_diag d = {{0}};

    *run_loop = true;
    if (o->use_manager_fd) {
        struct iof_conn *c;
        int r =
            iof_conn_open_fd(a->loop, o->manager_fd, "the manager's socketpair", NULL, NULL, &c);
        a->fd_mode = true;
        if (r < 0) {
            IOF_USER("dynamo: --manager-fd %d: %s", o->manager_fd, iof_strerror(r));
            a->stopping = true;
            dyn_agent_shutdown(a);
            return 2;
        }
        if (agent_conn_allowed(a, c)) {
            dyn_session_new(a, c);
            return 0;
        }
        a->stopping = true;
        dyn_agent_shutdown(a);
        return 3;
    }
    if (upath) {
        /* Before any thread exists (the listener sets the umask for its bind). */
        if (iof_listener_start_unix(a->loop, upath, agent_on_accept, a, &a->listener, &d)) {
            IOF_USER("dynamo: --listen %s: %s", o->listen, d.msg);
            dyn_agent_shutdown(a);
            return 1;
        }
        IOF_INFO("agent '%s' listening on unix:%s (protocol %s, root and uid %lu only)", a->name,
                 upath, proto_version_string(), (unsigned long)geteuid());
        return 0;
    }
    if (o->listen) {
        char host[256];
        if (iof_addr_parse(o->listen, host, sizeof(host), IOF_DEFAULT_PORT, &a->port, &d) ||
            (a->tls ? iof_listener_start_tls(a->loop, host, a->port, a->tls, agent_on_accept,
                                             agent_on_reject, a, &a->listener, &d)
                    : iof_listener_start(a->loop, host, a->port, agent_on_accept, a, &a->listener,
                                         &d))) {
            IOF_USER("dynamo: --listen %s: %s", o->listen, d.msg);
            uv_close((uv_handle_t *)&a->sigint, NULL);
            uv_close((uv_handle_t *)&a->sigterm, NULL);
            dyn_agent_close_stop(a);
            uv_close((uv_handle_t *)&a->reconnect, NULL);
            uv_close((uv_handle_t *)&a->hs_log_timer, NULL);
            dyn_agent_close_inventory(a);
            return 1;
        }
        agent_set_listener_limits(a);
        IOF_INFO("agent '%s' listening on %s:%u (protocol %s, %s)", a->name, host[0] ? host : "*",
                 iof_listener_port(a->listener), proto_version_string(),
                 a->tls ? "TLS" : "plain TCP, --insecure");
        return 0;
    }
    if (iof_addr_parse(o->manager, a->mhost, sizeof(a->mhost), IOF_DEFAULT_PORT, &a->port, &d)) {
        IOF_USER("dynamo: --manager %s: %s", o->manager, d.msg);
        *run_loop = false;
        return 2;
    }
    IOF_INFO("agent '%s' dialling manager %s:%u", a->name, a->mhost, a->port);
    agent_dial(a);
    return 0;
}

/* What dyn_agent_main holds once its loop has ended (or never ran). */
static void agent_free(struct agent *a)
{
    pthread_mutex_lock(&agent_running_lock);
    if (agent_running == a) /* a loop that never ran (a bad --manager) */
        agent_running = NULL;
    pthread_mutex_unlock(&agent_running_lock);
    dyn_inv_cache_close(a->inv); /* when the loop never ran */
    if (a->loop)
        uv_loop_close(a->loop);
    iof_tls_ctx_free(a->tls);
    dyn_scope_free(a->scope);
    for (size_t i = 0; i < a->nallow; i++)
        free(a->allow_real[i]);
    free(a->allow_real);
}

int dyn_agent_main(const struct dyn_agent_opts *o)
{
    struct agent a = {.o = o,
                      .budget = {.max_workers = o->max_workers,
                                 .max_buffer_mem = o->max_buffer_mem,
                                 .max_aio_events = o->max_aio_events}};
    struct iof_diag d = {{0}};
    const char *upath = NULL;
    bool on_unix, plain, run_loop;
    int rc;

    if ((rc = agent_check_opts(o, &on_unix, &plain, &upath)) || (rc = agent_identity(&a)))
        return rc;
    if (agent_canonical_allow(&a) < 0) {
        rc = 2;
        goto out;
    }
    if (dyn_scope_new(o->workdir, o->allow, o->nallow, &a.scope, &d)) {
        IOF_USER("dynamo: %s", d.msg);
        rc = 2;
        goto out;
    }
    agent_loop_init(&a);
    if (plain)
        IOF_WARN("--insecure: plain TCP, no authentication: anyone who can reach %s can drive "
                 "this agent (uid %lu) and read its results",
                 o->listen ? o->listen : o->manager, (unsigned long)geteuid());
    rc = agent_connect(&a, upath, &run_loop);
    if (run_loop)
        uv_run(a.loop, UV_RUN_DEFAULT);
out:
    agent_free(&a);
    return rc;
}
