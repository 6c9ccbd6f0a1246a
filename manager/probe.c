/* SPDX-License-Identifier: Apache-2.0 */
/* manager/probe.c - one agent's hello without a session: dial, read the
 * hello the agent sends on every new connection, close with a bye. */
#include "manager/probe.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common/budget.h"
#include "common/engine_facts.h"
#include "common/log.h"
#include "common/net.h"
#include "common/tls.h"
#include "proto/link.h"
#include "proto/plan.h"
#include "proto/version.h"

struct probe {
    const struct mgr_probe_opts *o;
    uv_loop_t loop;
    uv_timer_t timer;
    struct iof_conn *conn; /* until the link takes it, or it closes */
    struct proto_link *link;
    struct proto_hello *out;
    int err;
    struct iof_diag *diag;
    bool done;
    /* mgr_probe_clean: a session that sends clean and waits for cleaned. */
    struct mgr_clean_result *clean;
    int stage; /* 0 the agent's hello, 1 its welcome, 2 its cleaned */
};

static void probe_on_timeout(uv_timer_t *t);

/* The stages of a clean after the agent's hello. */
static void clean_on_msg(struct probe *p, struct proto_link *l, const struct proto_msg *m);

static void probe_finish(struct probe *p, int err)
{
    if (p->done)
        return;
    p->done = true;
    p->err = err;
    uv_close((uv_handle_t *)&p->timer, NULL);
}

static void probe_on_msg(struct proto_link *l, const struct proto_msg *m, void *arg)
{
    struct probe *p = arg;

    if (p->done)
        return;
    if (p->clean && p->stage > 0) {
        clean_on_msg(p, l, m);
        return;
    }
    if (m->type == PROTO_MSG_ERROR) {
        iof_diag_set(p->diag, IOF_EDENIED, "%s: refused: %s", p->o->endpoint, m->u.error.message);
        probe_finish(p, IOF_EDENIED);
    } else if (m->type != PROTO_MSG_HELLO || m->u.hello.role != PROTO_ROLE_AGENT) {
        iof_diag_set(p->diag, IOF_EPROTO, "%s: expected the agent's hello, got %s", p->o->endpoint,
                     proto_msg_type_name(m->type));
        probe_finish(p, IOF_EPROTO);
    } else if (proto_hello_copy(p->out, &m->u.hello)) {
        iof_diag_set(p->diag, -ENOMEM, "out of memory");
        probe_finish(p, -ENOMEM);
    } else if (p->clean && !proto_clean_ok(m->u.hello.minor)) {
        iof_diag_set(p->diag, IOF_EVERSION,
                     "%s: agent %s speaks protocol %u.%u, which has no clean (1.2 has): "
                     "upgrade its dynamo, or remove its test files by hand",
                     p->o->endpoint, m->u.hello.name, m->u.hello.major, m->u.hello.minor);
        probe_finish(p, IOF_EVERSION);
    } else if (p->clean) {
        struct proto_msg h;
        proto_msg_init_hello(&h, PROTO_ROLE_MANAGER, MGR_PROBE_MANAGER_NAME);
        p->stage = 1;
        proto_link_send(l, &h);
        return;
    } else {
        probe_finish(p, 0);
    }
    proto_link_close(l, 0, "validate: only the agent's hello was needed");
}

static void clean_on_msg(struct probe *p, struct proto_link *l, const struct proto_msg *m)
{
    struct mgr_clean_result *r = p->clean;
    struct proto_msg bye;

    if (m->type == PROTO_MSG_HEARTBEAT)
        return;
    if (m->type == PROTO_MSG_ERROR) {
        /* Busy with a run, or the clean failed: the agent says why. */
        iof_diag_set(p->diag, m->u.error.code ? m->u.error.code : IOF_EDENIED, "%s: %s",
                     p->o->endpoint, m->u.error.message);
        probe_finish(p, m->u.error.code == IOF_EBUSY ? IOF_EBUSY : IOF_EDENIED);
        proto_link_close(l, 0, NULL);
        return;
    }
    if (p->stage == 1 && m->type == PROTO_MSG_WELCOME) {
        struct proto_msg c;
        proto_link_set_deadline(l, 0, NULL);
        proto_link_set_established(
            l, m->u.welcome.heartbeat_ms ? m->u.welcome.heartbeat_ms : PROTO_HEARTBEAT_MS_DEFAULT,
            m->u.welcome.heartbeat_limit_ms);
        proto_msg_init(&c, PROTO_MSG_CLEAN);
        proto_link_send(l, &c);
        p->stage = 2;
        /* Removing large files takes a moment on some filesystems. */
        uv_timer_start(&p->timer, probe_on_timeout, MGR_PROBE_CLEAN_WAIT_MS, 0);
        return;
    }
    if (p->stage == 2 && m->type == PROTO_MSG_CLEANED) {
        const struct proto_cleaned *k = &m->u.cleaned;
        r->files = k->files;
        r->bytes = k->bytes;
        r->failed = k->failed;
        r->workdir = strdup(k->workdir);
        r->removed = calloc(k->nremoved ? k->nremoved : 1, sizeof(*r->removed));
        if (!r->workdir || !r->removed) {
            iof_diag_set(p->diag, -ENOMEM, "out of memory");
            probe_finish(p, -ENOMEM);
        } else {
            for (size_t i = 0; i < k->nremoved; i++)
                if ((r->removed[r->nremoved] = strdup(k->removed[i])) != NULL)
                    r->nremoved++;
            probe_finish(p, 0);
        }
        proto_msg_init(&bye, PROTO_MSG_BYE);
        bye.u.bye.reason = "clean done";
        proto_link_send(l, &bye);
        proto_link_close(l, 0, NULL);
        return;
    }
    iof_diag_set(p->diag, IOF_EPROTO, "%s: expected the agent's %s, got %s", p->o->endpoint,
                 p->stage == 1 ? "welcome" : "cleaned", proto_msg_type_name(m->type));
    probe_finish(p, IOF_EPROTO);
    proto_link_close(l, IOF_EPROTO, NULL);
}

static void probe_on_link_close(struct proto_link *l, int err, const char *why, void *arg)
{
    struct probe *p = arg;
    (void)l;
    p->link = NULL;
    if (!p->done && err == -EPIPE && p->stage == 0 && !p->o->tls_ca &&
        !iof_addr_is_unix(p->o->endpoint, NULL)) {
        /* A plain agent says hello at once; one that expects TLS waits for
         * a handshake, then drops the plain connection. */
        iof_diag_set(p->diag, err,
                     "%s: %s before its hello (an agent that expects TLS closes a plain "
                     "connection at its %.0f s handshake timeout: configure TLS here "
                     "(--tls-ca, --tls-cert, --tls-key) or pass --insecure to both)",
                     p->o->endpoint, why, IOF_TLS_HANDSHAKE_MS / 1000.0);
        probe_finish(p, err);
    } else if (!p->done) {
        iof_diag_set(p->diag, err ? err : -EPIPE, "%s: %s", p->o->endpoint, why);
        probe_finish(p, err ? err : -EPIPE);
    }
}

static void probe_on_connect(struct iof_conn *c, int err, void *arg)
{
    static const struct proto_link_cbs cbs = {.on_msg = probe_on_msg,
                                              .on_close = probe_on_link_close};
    struct probe *p = arg;

    if (err) {
        iof_diag_set(p->diag, err, "%s: %s", p->o->endpoint,
                     iof_conn_error(c)[0] ? iof_conn_error(c) : uv_strerror(err));
        probe_finish(p, err);
        return; /* on_close follows */
    }
    if (p->done) {
        iof_conn_close(c, 0);
        return;
    }
    if (iof_conn_is_unix(c) ? iof_conn_check_local_peer(c, p->diag) != 0
                            : !iof_conn_is_tls(c) && !p->o->insecure) {
        /* The rule of run.c: a unix socket's agent must be root or our
         * user; plain TCP (checked before dialling too) needs --insecure. */
        if (!iof_conn_is_unix(c))
            iof_diag_set(p->diag, IOF_EDENIED, "%s: plain TCP needs --insecure", p->o->endpoint);
        probe_finish(p, IOF_EDENIED);
        iof_conn_close(c, IOF_EDENIED);
        return;
    }
    p->conn = NULL; /* the link owns it */
    p->link = proto_link_new(&p->loop, c, &cbs, p);
    if (!p->link) {
        iof_diag_set(p->diag, -ENOMEM, "out of memory");
        probe_finish(p, -ENOMEM);
    }
}

static void probe_on_conn_close(struct iof_conn *c, int err, void *arg)
{
    struct probe *p = arg;
    (void)err;
    if (p->conn == c)
        p->conn = NULL;
}

static void probe_on_timeout(uv_timer_t *t)
{
    struct probe *p = t->data;
    if (p->stage == 2)
        iof_diag_set(p->diag, IOF_ETIMEOUT, "%s: the agent did not answer the clean within %.0f s",
                     p->o->endpoint, (double)MGR_PROBE_CLEAN_WAIT_MS / 1000);
    else
        iof_diag_set(p->diag, IOF_ETIMEOUT, "%s: no %s from the agent within %.1f s",
                     p->o->endpoint, p->stage ? "welcome" : "hello", (double)p->o->wait_ms / 1000);
    probe_finish(p, IOF_ETIMEOUT);
    if (p->link)
        proto_link_close(p->link, IOF_ETIMEOUT, NULL);
    else if (p->conn)
        iof_conn_close(p->conn, IOF_ETIMEOUT);
}

static int probe_run(const struct mgr_probe_opts *o, struct proto_hello *out,
                     struct mgr_clean_result *clean, struct iof_diag *diag)
{
    static const struct iof_conn_cbs cbs = {.on_connect = probe_on_connect,
                                            .on_close = probe_on_conn_close};
    struct probe p = {.o = o, .out = out, .diag = diag, .clean = clean};
    struct iof_tls_ctx *tls = NULL;
    struct iof_conn *c;
    char host[256];
    uint16_t port;
    int r;

    const char *upath = NULL;

    memset(out, 0, sizeof(*out));
    if (iof_addr_is_unix(o->endpoint, &upath)) {
        if (upath[0] != '/')
            return iof_diag_set(diag, -EINVAL, "%s: the socket path must be absolute", o->endpoint);
    } else {
        r = iof_addr_parse(o->endpoint, host, sizeof(host), IOF_DEFAULT_PORT, &port, diag);
        if (r)
            return r;
        if (!o->tls_ca && !o->insecure)
            return iof_diag_set(diag, IOF_EDENIED,
                                "%s: plain TCP authenticates nobody (loopback included); use "
                                "TLS (--tls-ca, --tls-cert, --tls-key), a unix socket "
                                "(--agent unix:PATH), or --insecure here and on the agent",
                                o->endpoint);
    }
    if (o->tls_ca && !upath &&
        (r = iof_tls_config_load(NULL, o->tls_ca, o->tls_cert, o->tls_key, false, &tls, diag)))
        return r;
    r = uv_loop_init(&p.loop);
    if (r) {
        iof_tls_ctx_free(tls);
        return iof_diag_set(diag, r, "cannot start an event loop: %s", uv_strerror(r));
    }
    uv_timer_init(&p.loop, &p.timer);
    p.timer.data = &p;
    uv_timer_start(&p.timer, probe_on_timeout, o->wait_ms, 0);
    r = upath ? iof_conn_connect_unix(&p.loop, upath, &cbs, &p, &c)
        : tls ? iof_conn_connect_tls(&p.loop, host, port, tls, &cbs, &p, &c)
              : iof_conn_connect(&p.loop, host, port, &cbs, &p, &c);
    if (r < 0) {
        iof_diag_set(diag, r, "%s: cannot dial: %s", o->endpoint, uv_strerror(r));
        probe_finish(&p, r);
    } else {
        p.conn = c;
    }
    uv_run(&p.loop, UV_RUN_DEFAULT);
    uv_loop_close(&p.loop);
    iof_tls_ctx_free(tls);
    if (p.err)
        proto_hello_free(out);
    return p.err;
}

int mgr_probe_hello(const struct mgr_probe_opts *o, struct proto_hello *out, struct iof_diag *diag)
{
    return probe_run(o, out, NULL, diag);
}

int mgr_probe_clean(const struct mgr_probe_opts *o, struct proto_hello *out,
                    struct mgr_clean_result *r, struct iof_diag *diag)
{
    memset(r, 0, sizeof(*r));
    return probe_run(o, out, r, diag);
}

void mgr_clean_result_free(struct mgr_clean_result *r)
{
    if (!r)
        return;
    free(r->workdir);
    for (size_t i = 0; i < r->nremoved; i++)
        free(r->removed[i]);
    free(r->removed);
    memset(r, 0, sizeof(*r));
}

static bool probe_group_selects(const struct iof_worker_cfg *g, const char *name)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i], "*") || !strcmp(g->nodes[i], name))
            return true;
    return g->nnodes == 0;
}

/* The engine each of the plan's groups runs on the agent of hello h, one
 * line each: the plan's, or, where it names none, the agent's own default
 * (libaio on Linux, windows on Windows: its system from the hello's kernel).
 * Returns how many groups name an engine of the other system, which the
 * agent refuses at prepare. */
static size_t probe_engines(const struct iof_plan *p, const struct proto_hello *h, FILE *out)
{
    enum iof_engine_os os = iof_engine_os_of_kernel(h->inventory.kernel);
    size_t bad = 0;

    for (size_t g = 0; g < p->nworkers; g++) {
        const struct iof_worker_cfg *w = &p->workers[g];
        const struct iof_engine_facts *e = iof_engine_facts_find(w->engine);
        if (!probe_group_selects(w, h->name))
            continue;
        if (!w->engine_given) {
            fprintf(out, "  %s: engine %s (the agent's default: it runs %s; the plan names none)\n",
                    w->name, iof_engine_facts[iof_engine_default_of(os)].name,
                    iof_engine_os_name(os));
        } else if (e && e->os != IOF_ENGINE_OS_ANY && e->os != os) {
            fprintf(out,
                    "  %s: engine %s: REFUSED at prepare: an engine of %s agents, and this one "
                    "runs %s\n",
                    w->name, w->engine, iof_engine_os_name(e->os), iof_engine_os_name(os));
            bad++;
        } else {
            fprintf(out, "  %s: engine %s\n", w->name, w->engine);
        }
    }
    return bad;
}

/* The --allow entry of inventory inv that admits the absolute target path
 * by its name: the same path, or a path beneath an allowed directory. NULL
 * when none does: the agent refuses the path unless it is another name of
 * an allowed device or file, which only the agent can tell (dynamo/scope.h). */
static const struct proto_target_info *probe_allowed(const struct proto_inventory *inv,
                                                     const char *path)
{
    for (size_t i = 0; i < inv->ntargets; i++) {
        const struct proto_target_info *t = &inv->targets[i];
        size_t n = t->path ? strlen(t->path) : 0;
        while (n > 1 && t->path[n - 1] == '/')
            n--;
        if (!n)
            continue;
        if (!strncmp(path, t->path, n) && path[n] == '\0')
            return t;
        if (t->kind && !strcmp(t->kind, "directory") && !strncmp(path, t->path, n) &&
            (path[n] == '/' || (n == 1 && path[0] == '/')))
            return t;
    }
    return NULL;
}

/* Whether worker group g writes in some test of the plan. */
static bool probe_group_writes(const struct iof_plan *p, const struct iof_test *tests,
                               size_t ntests, size_t g)
{
    for (size_t t = 0; t < ntests; t++) {
        const struct iof_spec *s = iof_test_spec(p, &tests[t], g);
        for (size_t l = 0; s && l < s->nlines; l++)
            if (s->lines[l].read_pct < 100)
                return true;
    }
    return false;
}

/* A block device the agent will not let a write test have: mounted, or
 * held by another program (dynamo/devguard.h); its reason, or NULL. */
static const char *probe_device_busy(const struct proto_target_info *t, char *buf, size_t cap)
{
    if (!t->kind || strcmp(t->kind, "block"))
        return NULL;
    if (t->mountpoint)
        snprintf(buf, cap, "mounted at %s", t->mountpoint);
    else if (t->in_use == 1)
        snprintf(buf, cap, "in use by another program");
    else
        return NULL;
    return buf;
}

/* Checks the plan's absolute targets on node h against its --allow entries
 * (and a write test's devices against the mounted or busy ones); prints one
 * line per refused path and returns how many there are. */
static size_t probe_check_targets(const struct iof_plan *p, const struct proto_hello *h, FILE *out)
{
    size_t bad = 0, outside = 0, checked = 0, ntests = 0;
    struct iof_test *tests = iof_plan_expand(p, &ntests);

    for (size_t i = 0; i < p->nworkers; i++) {
        if (!probe_group_selects(&p->workers[i], h->name))
            continue;
        for (size_t k = 0; k < p->workers[i].ntargets; k++) {
            const char *path = iof_target_path(&p->workers[i].targets[k], h->name);
            const struct proto_target_info *t;
            bool seen = false;
            char why[300];
            if (path[0] != '/')
                continue; /* a test file in the agent's workdir */
            /* Each path once, however many groups name it. */
            for (size_t j = 0; j <= i && !seen; j++)
                for (size_t m = 0; m < (j == i ? k : p->workers[j].ntargets) && !seen; m++)
                    seen = probe_group_selects(&p->workers[j], h->name) &&
                           !strcmp(iof_target_path(&p->workers[j].targets[m], h->name), path);
            if (seen)
                continue;
            checked++;
            t = probe_allowed(&h->inventory, path);
            if (t && tests && probe_device_busy(t, why, sizeof(why)) &&
                probe_group_writes(p, tests, ntests, i)) {
                bad++;
                fprintf(out,
                        "  %s: REFUSED for the plan's writes: the device is %s (writes to a "
                        "mounted or busy device are always refused)\n",
                        path, why);
                continue;
            }
            if (t)
                continue;
            bad++;
            if (!outside++)
                fprintf(out, "  targets not in the agent's --allow list (%s):\n",
                        h->inventory.ntargets ? "paths and directories it names"
                                              : "it has none: test files in its workdir only");
            fprintf(out, "    %s: REFUSED unless it is another name of an allowed device or file\n",
                    path);
        }
    }
    if (checked && !bad)
        fprintf(out,
                "  targets: the plan's %zu absolute path%s allowed by the agent's --allow list\n",
                checked, checked == 1 ? " is" : "s are");
    free(tests);
    return bad;
}

/* For each group with a per-node map, its targets with node's own paths
 * (what the agent will open; its budget counts one file per path); NULL
 * entries for the others, NULL when the plan has no map (or out of memory:
 * the estimate then uses the plan's "*" paths). */
static struct iof_target_cfg **probe_own_targets(const struct iof_plan *p, const char *node)
{
    struct iof_target_cfg **own;

    if (!proto_plan_has_target_maps(p) || !(own = calloc(p->nworkers, sizeof(*own))))
        return NULL;
    for (size_t i = 0; i < p->nworkers; i++) {
        const struct iof_worker_cfg *w = &p->workers[i];
        bool map = false;
        for (size_t t = 0; t < w->ntargets; t++)
            map |= w->targets[t].nnode_paths || !w->targets[t].path[0];
        if (!map || !(own[i] = calloc(w->ntargets, sizeof(*own[i]))))
            continue;
        for (size_t t = 0; t < w->ntargets; t++) {
            own[i][t] = w->targets[t];
            snprintf(own[i][t].path, sizeof(own[i][t].path), "%s",
                     iof_target_path(&w->targets[t], node));
            own[i][t].node_paths = NULL;
            own[i][t].nnode_paths = 0;
        }
    }
    return own;
}

static void probe_own_free(const struct iof_plan *p, struct iof_target_cfg **own)
{
    for (size_t i = 0; own && i < p->nworkers; i++)
        free(own[i]);
    free(own);
}

int mgr_probe_budget(const struct iof_plan *p, const struct mgr_probe_opts *o, FILE *out)
{
    struct proto_hello h;
    struct iof_diag d = {{0}};
    struct iof_budget_need need = {0};
    struct iof_worker_cfg *g;
    const struct iof_spec **gs;
    struct iof_test *tests;
    struct iof_target_cfg **own;
    size_t ntests, ng = 0;
    int r = mgr_probe_hello(o, &h, &d);

    if (r) {
        IOF_USER("iofleet: agent %s", d.msg);
        return 3;
    }
    if (!h.inventory.has_budget) {
        size_t bad;
        fprintf(out, "agent %s (%s): sends no budget (an older dynamo)\n", h.name, o->endpoint);
        bad = probe_engines(p, &h, out);
        bad += probe_check_targets(p, &h, out);
        if (bad)
            fprintf(out, "  does not fit: the agent will refuse this plan at prepare\n");
        proto_hello_free(&h);
        return bad ? 1 : 0;
    }
    tests = iof_plan_expand(p, &ntests);
    g = calloc(p->nworkers ? p->nworkers : 1, sizeof(*g));
    gs = calloc(p->nworkers ? p->nworkers : 1, sizeof(*gs));
    if (!tests || !g || !gs) {
        free(tests);
        free(g);
        free(gs);
        proto_hello_free(&h);
        IOF_USER("iofleet: out of memory");
        return 2;
    }
    own = probe_own_targets(p, h.name);
    for (size_t t = 0; t < ntests; t++) {
        ng = 0;
        for (size_t i = 0; i < p->nworkers; i++)
            if (probe_group_selects(&p->workers[i], h.name)) {
                gs[ng] = iof_test_spec(p, &tests[t], i);
                g[ng] = iof_test_worker(p, &tests[t], i);
                if (own && own[i]) /* per-node maps: this agent's own paths */
                    g[ng].targets = own[i];
                /* A group without an engine runs the agent's own (no AIO events
                 * on Windows). */
                if (!g[ng].engine_given)
                    snprintf(g[ng].engine, sizeof(g[ng].engine), "%s",
                             iof_engine_facts[iof_engine_default_of(
                                                  iof_engine_os_of_kernel(h.inventory.kernel))]
                                 .name);
                ng++;
            }
        iof_budget_need_add(&need, gs, g, ng);
    }
    probe_own_free(p, own);
    free(tests);
    free(g);
    free(gs);
    {
        const struct proto_budget *b = &h.inventory.budget;
        const struct {
            const char *what;
            uint64_t need, have;
            bool bytes;
        } rows[] = {{"worker threads", need.workers, b->workers, false},
                    {"I/O buffer memory", need.buffer_mem, b->buffer_mem, true},
                    {"AIO events", need.aio_events, b->aio_events, false},
                    {"descriptors", need.fds, b->fds, false}};
        bool fits = true;
        fprintf(out, "agent %s (%s): the plan's largest test there needs, of the agent's budget:\n",
                h.name, o->endpoint);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
            char n[32], l[32];
            if (rows[i].bytes) {
                iof_budget_format_bytes(rows[i].need, n, sizeof(n));
                iof_budget_format_bytes(rows[i].have, l, sizeof(l));
            } else {
                snprintf(n, sizeof(n), "%" PRIu64, rows[i].need);
                snprintf(l, sizeof(l), "%" PRIu64, rows[i].have);
            }
            if (rows[i].have == UINT64_MAX)
                snprintf(l, sizeof(l), "no limit");
            fprintf(out, "  %-18s %12s of %-12s %s\n", rows[i].what, n, l,
                    rows[i].need > rows[i].have ? "EXCEEDS" : "ok");
            fits &= rows[i].need <= rows[i].have;
        }
        fits &= probe_engines(p, &h, out) == 0;
        fits &= probe_check_targets(p, &h, out) == 0;
        fprintf(out, "  %s\n",
                fits ? "fits (as the agent's host stands now)"
                     : "does not fit: the agent will refuse this plan at prepare");
        fprintf(out, "  not checked here: other names of allowed devices or files, and data on a "
                     "device a write test would overwrite (refused without the agent's "
                     "--allow-destructive, which its hello does not say)\n");
        proto_hello_free(&h);
        return fits ? 0 : 1;
    }
}
