/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/agent_test.c - running a test on the loop: interval stats and results
 * sent as the workers publish them, starting a test on a libuv worker thread,
 * and tearing a stopped one down off the loop. */
#include "dynamo/agent_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- running a test ------------------------------------------------------------ */

static void session_fill_workers(struct session *s, const struct dyn_test *dt,
                                 const struct iof_stats *(*get)(struct session *, size_t, void *),
                                 void *ctx, struct proto_stats *out)
{
    size_t nw = dyn_test_nworkers(dt);
    out->nworkers = nw;
    for (size_t w = 0; w < nw; w++) {
        out->workers[w].ntargets = dyn_test_ntargets(dt, w);
        out->workers[w].targets = (struct iof_stats *)get(s, w, ctx);
    }
}

/* Interval k of the test, to send: lost when a worker had to reuse its slot
 * (the agent fell behind), then every worker's counters are sent as zeros
 * and the message says so. */
struct interval_ctx {
    uint64_t k;
    bool lost;
};

static const struct iof_stats *get_interval(struct session *s, size_t w, void *ctx)
{
    const struct interval_ctx *ic = ctx;
    const struct iof_stats *st = NULL;

    if (!ic->lost && dyn_test_interval(s->dt, w, ic->k, &st) == 1)
        return st;
    /* Lost, or the worker ended early (it counted nothing more): zeros. */
    return s->zeros;
}

static const struct iof_stats *get_totals(struct session *s, size_t w, void *ctx)
{
    (void)ctx;
    return dyn_test_totals(s->dt, w);
}

/* End of interval k of the running test on the local clock. */
static uint64_t session_interval_end(const struct session *s, const struct dyn_test *dt, uint64_t k)
{
    uint64_t iv = s->plan.run.interval_ns;
    uint64_t e = k + 1 < dyn_test_nintervals(dt) ? s->measure_start + (k + 1) * iv : s->end;
    return e < s->end ? e : s->end;
}

/* --- tearing a test down, off the loop ------------------------------------ */

struct reap {
    uv_work_t work;
    struct agent *a;
    struct dyn_test *dt;
};

/* The node CPU of a window as the manager gets it: the node figures only
 * to a manager of protocol 1.6 or later (older ones refuse the binary
 * body's node flag) and when both samples had them. */
static struct proto_cpu session_cpu(const struct session *s, bool valid,
                                    const struct dyn_cpu_usage *u)
{
    struct proto_cpu c = {.valid = valid,
                          .busy_pct = u->busy_pct,
                          .user_pct = u->user_pct,
                          .sys_pct = u->sys_pct,
                          .agent_pct = u->agent_pct};

    if (valid && u->node_valid && proto_cpu_node_ok(s->mgr_minor)) {
        c.node_valid = true;
        c.dpc_pct = u->dpc_pct;
        c.irq_pct = u->irq_pct;
        c.intr_per_s = u->intr_per_s;
        c.packets_per_s = u->packets_per_s;
        c.packet_errors = u->packet_errors;
        c.retrans_per_s = u->retrans_per_s;
    }
    return c;
}

_Static_assert(DYN_CPUS_MAX <= PROTO_CPUS_MAX, "every CPU the sampler keeps fits a result");

/* Each CPU of the node over the test's measured window (the window of its
 * result's cpu): how many, in *out (new, free() it); 0 when unknown. */
static size_t session_cpus(const struct session *s, struct proto_cpu_one **out)
{
    struct dyn_cpu_one *one = malloc(DYN_CPUS_MAX * sizeof(*one));
    struct proto_cpu_one *p = NULL;
    size_t n = one ? dyn_cpu_usage_each(&s->cpu_start, &s->cpu_last, one, DYN_CPUS_MAX) : 0;

    if (n && (p = malloc(n * sizeof(*p))) != NULL) {
        for (size_t i = 0; i < n; i++)
            p[i] = (struct proto_cpu_one){.id = one[i].id,
                                          .busy_pct = one[i].busy_pct,
                                          .user_pct = one[i].user_pct,
                                          .sys_pct = one[i].sys_pct,
                                          .dpc_pct = one[i].dpc_pct,
                                          .irq_pct = one[i].irq_pct};
    }
    free(one);
    *out = p;
    return p ? n : 0;
}

/* On a worker thread: waits for the workers (a drain may take up to 30 s,
 * io_destroy waits on the kernel) and frees the test. */
static void reap_work(uv_work_t *w)
{
    struct reap *r = w->data;

    dyn_test_join(r->dt, NULL);
    dyn_test_free(r->dt);
    /* A test's buffers and interval rings (hundreds of KiB per worker,
     * sized by the test's queue depth) are gone: give the memory back,
     * so a long campaign does not keep the largest test's footprint. */
    dyn_os_trim_memory();
    atomic_fetch_sub(&r->a->reaping_live, 1);
}

static void reap_after(uv_work_t *w, int status)
{
    struct reap *r = w->data;
    (void)status;
    r->a->reaping--;
    IOF_DEBUG("a stopped test's threads are joined and its memory freed");
    free(r);
}

/* Stops dt at once and hands it to a worker thread to join and free: the
 * loop never waits for I/O to drain. Takes dt. */
static void agent_reap_test(struct agent *a, struct dyn_test *dt)
{
    struct reap *r = calloc(1, sizeof(*r));

    dyn_test_stop(dt);
    if (r) {
        r->a = a;
        r->dt = dt;
        r->work.data = r;
        a->reaping++;
        atomic_fetch_add(&a->reaping_live, 1);
        if (uv_queue_work(a->loop, &r->work, reap_work, reap_after) == 0)
            return;
        a->reaping--;
        atomic_fetch_sub(&a->reaping_live, 1);
        free(r);
    }
    IOF_WARN("cannot hand a stopped test to a worker thread: joining it on the event loop");
    dyn_test_join(dt, NULL);
    dyn_test_free(dt);
}

/* Sends a stats or result message. A send that fails is never ignored: the
 * manager is told why and the test is stopped, as the manager cannot count
 * what it will not receive. A connection already closing is its close's to
 * handle: dyn_session_on_close, this loop turn or the next (uv_close), stops the
 * test and says the manager was lost. Returns whether the message went out. */
static bool session_send_stats(struct session *s, const struct proto_msg *m)
{
    int r = proto_link_send(s->link, m);
    if (!r)
        return true;
    if (r == -ENOTCONN)
        return false;
    dyn_session_send_error(s, r, "%s: test %u: cannot send its %s: %s", s->a->name, s->test + 1,
                           proto_msg_type_name(m->type), iof_strerror(r));
    if (m->type == PROTO_MSG_STATS)
        dyn_session_abort_test(s);
    return false;
}

/* The real length of interval k when a stop cut it short (0: not cut). */
static uint64_t session_cut_ns(const struct session *s, uint64_t k)
{
    uint64_t start = s->measure_start + k * s->plan.run.interval_ns;
    uint64_t end = start + s->plan.run.interval_ns;

    if (end > s->end)
        end = s->end;
    if (!s->stop_ns || s->stop_ns >= end)
        return 0;
    return s->stop_ns > start ? s->stop_ns - start : 1;
}

/* One verification mismatch as the manager shows it: where, what kind,
 * what was expected there and what the header found says. The path is
 * sanitised (control bytes as '?') so the line stays one line. */
static void agent_verify_line(const char *node, const struct dyn_test *dt,
                              const struct dyn_verify_report *v, char *buf, size_t cap)
{
    char path[128], gen[40], found[160];
    const char *p = dyn_test_target_cfg(dt, v->worker, v->target)->path;
    size_t i = 0;

    for (; p[i] && i + 1 < sizeof(path); i++)
        path[i] = (unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i];
    path[i] = '\0';
    if (v->e_generation)
        snprintf(gen, sizeof(gen), " generation %" PRIu64, v->e_generation);
    else
        gen[0] = '\0';
    if (!v->f_none)
        snprintf(found, sizeof(found),
                 "found offset %" PRIu64 " length %" PRIu32 " writer %016" PRIx64 "/w%" PRIu32
                 " generation %" PRIu64,
                 v->f_offset, v->f_length, v->f_node, v->f_worker, v->f_generation);
    else
        snprintf(found, sizeof(found), "found no verify header");
    snprintf(buf, cap,
             "node %s target '%s' offset %" PRIu64 ": %s (expected offset %" PRIu64 "%s; %s)", node,
             path, v->offset, dyn_verify_class_name((enum dyn_verify_class)v->cls), v->offset, gen,
             found);
}

/* Sends every interval all workers have published; then, once the test is
 * over, joins it and sends the result. */
/* While workers read back what a verify_mode "after" test wrote, the
 * manager hears of it every AGENT_VERIFY_PROGRESS_MS (first at once): it
 * waits for the result as long as these come. */
static void session_verify_progress(struct session *s, const struct dyn_test *dt)
{
    struct proto_msg m;
    uint64_t done, total, now = iof_now_ns();

    if (!dyn_test_verify_progress(dt, &done, &total))
        return;
    if (s->vprog_ns && now - s->vprog_ns < AGENT_VERIFY_PROGRESS_MS * IOF_NS_PER_MS)
        return;
    s->vprog_ns = now;
    proto_msg_init(&m, PROTO_MSG_PREPARE_PROGRESS);
    m.u.prepare_progress.path = dyn_test_target_cfg(dt, 0, 0)->path;
    m.u.prepare_progress.done = done;
    m.u.prepare_progress.total = total;
    m.u.prepare_progress.verify = true;
    proto_link_send(s->link, &m);
}

static void session_poll(uv_timer_t *t)
{
    struct session *s = t->data;
    struct dyn_test *dt = s->dt;
    size_t nw;
    struct proto_msg m;
    struct proto_worker_stats *ws;

    if (!dt)
        return;
    nw = dyn_test_nworkers(dt);
    ws = calloc(nw ? nw : 1, sizeof(*ws));
    if (!ws)
        return;
    if (!s->cpu_start.valid && iof_now_ns() >= s->measure_start) {
        dyn_cpu_sample(&s->cpu_start);
        s->cpu_last = s->cpu_start;
    }
    while (s->next_interval < dyn_test_nintervals(dt)) {
        size_t ready = 0, gone = 0;
        /* A node without workers in this test has nothing to wait for: its
         * (empty) intervals go out as the clock reaches their end, never
         * all at once. */
        if (nw == 0 && iof_now_ns() < session_interval_end(s, dt, s->next_interval))
            break;
        for (size_t w = 0; w < nw; w++) {
            const struct iof_stats *st;
            int r = dyn_test_interval(dt, w, s->next_interval, &st);
            if (r != 0)
                ready++;
            if (r == -ENOENT)
                gone++;
        }
        if (ready < nw || (gone == nw && nw))
            break;
        if (nw) {
            uint64_t e = dyn_test_ended_ns(dt);
            if (s->stop_requested && !s->ended_early) {
                /* Stopped: the window ends where the last worker stopped
                 * counting, not when the stop arrived. A worker that read
                 * the clock just before an interval's end and saw the stop
                 * after it cuts that interval and never begins the next
                 * one; one that crossed an end before seeing the stop has
                 * counted past the stop's time. So no interval goes out
                 * after a stop until every worker has ended. */
                if (!e)
                    break;
                s->stop_ns = e;
            } else if (!s->stop_ns && e && e < s->end) {
                /* Every worker ended on its io_limit: the window ends with
                 * the last one, and this interval may be cut there. */
                s->stop_ns = e;
                s->ended_early = true;
            }
        }
        proto_msg_init(&m, PROTO_MSG_STATS);
        m.u.stats.test = s->test;
        m.u.stats.interval = s->next_interval;
        {
            struct dyn_cpu_sample now;
            struct dyn_cpu_usage u;
            dyn_cpu_sample(&now);
            dyn_cpu_usage(&s->cpu_last, &now, &u);
            s->cpu_last = now;
            m.u.stats.cpu = session_cpu(s, now.valid && s->cpu_start.valid, &u);
        }
        m.u.stats.workers = ws;
        {
            struct interval_ctx ic = {.k = s->next_interval};
            for (size_t w = 0; w < nw; w++) {
                const struct iof_stats *st;
                ic.lost |= dyn_test_interval(dt, w, s->next_interval, &st) == -EOVERFLOW;
            }
            m.u.stats.lost = ic.lost;
            m.u.stats.duration_ns = session_cut_ns(s, s->next_interval);
            session_fill_workers(s, dt, get_interval, &ic, &m.u.stats);
            if (!session_send_stats(s, &m)) {
                free(ws);
                return;
            }
        }
        for (size_t w = 0; w < nw; w++)
            dyn_test_interval_release(dt, w, s->next_interval);
        s->next_interval++;
    }
    if (nw && !dyn_test_finished(dt))
        session_verify_progress(s, dt);
    if (nw ? dyn_test_finished(dt) : s->stop_requested || iof_now_ns() >= s->end) {
        /* Every interval the workers reached has been sent above. */
        struct iof_diag d = {{0}};
        struct iof_hist *late = NULL;
        struct proto_cpu_one *cpus = NULL;
        uint64_t first, last, now = iof_now_ns();
        int r = dyn_test_join(dt, &d);
        bool complete = s->next_interval >= dyn_test_nintervals(dt);

        dyn_test_start_spread(dt, &first, &last);
        proto_msg_init(&m, PROTO_MSG_RESULT);
        m.u.result.test = s->test;
        m.u.result.interrupted = !complete && !s->ended_early;
        /* Cut short: the window ends when the stop came (as its last
         * interval does), not when the workers were joined. */
        if (s->stop_ns && s->stop_ns < now)
            now = s->stop_ns;
        m.u.result.measured_ns = complete ? s->end - s->measure_start
                                 : now > s->measure_start
                                     ? (now < s->end ? now : s->end) - s->measure_start
                                     : 0;
        m.u.result.cpu_ns = dyn_test_cpu_ns(dt);
        m.u.result.started_first_ns = first;
        m.u.result.started_last_ns = last;
        m.u.result.error = r ? d.msg : NULL;
        {
            struct dyn_cpu_usage u;
            /* The window ends at the last interval's sample. */
            dyn_cpu_usage(&s->cpu_start, &s->cpu_last, &u);
            m.u.result.cpu = session_cpu(s,
                                         s->cpu_start.valid && s->cpu_last.valid &&
                                             s->cpu_last.total > s->cpu_start.total,
                                         &u);
        }
        /* Each CPU over the same window, to a manager that reads it (1.7). */
        if (m.u.result.cpu.valid && proto_cpus_ok(s->mgr_minor))
            m.u.result.ncpus = session_cpus(s, &cpus);
        m.u.result.cpus = cpus;
        m.u.result.workers = ws;
        session_fill_workers(s, dt, get_totals, NULL, &m.u.result);
        /* The rated I/Os' lateness, to a manager that reads it (1.6). */
        if (proto_lateness_ok(s->mgr_minor) && (late = malloc(sizeof(*late)))) {
            iof_hist_reset(late);
            if (dyn_test_lateness(dt, late, &m.u.result.lateness_over_20us))
                m.u.result.lateness = late;
        }
        {
            const struct dyn_verify_report *vr;
            size_t nv = dyn_test_verify_reports(dt, &vr);
            char lines[DYN_VERIFY_REPORTS][PROTO_TEXT_MAX + 1];
            const char *vl[DYN_VERIFY_REPORTS];
            for (size_t i = 0; i < nv && i < PROTO_VERIFY_REPORTS_MAX; i++) {
                agent_verify_line(s->a->name, dt, &vr[i], lines[i], sizeof(lines[i]));
                IOF_WARN("test %u: %s", s->test + 1, lines[i]);
                vl[i] = lines[i];
            }
            m.u.result.verify_reports = vl;
            m.u.result.nverify_reports =
                nv < PROTO_VERIFY_REPORTS_MAX ? nv : PROTO_VERIFY_REPORTS_MAX;
            session_send_stats(s, &m);
        }
        free(late);
        free(cpus);
        s->dt = NULL;
        uv_timer_stop(&s->poll);
        agent_reap_test(s->a, dt);
        IOF_INFO("test %u done%s", s->test + 1, complete ? "" : " (stopped early)");
    }
    free(ws);
}

/* What the groups this node runs in test t need, against the agent's budget
 * as the host stands now. */
int dyn_session_check_budget(struct session *s, const struct iof_test *t, struct iof_diag *d)
{
    struct iof_budget_need need = {0};
    struct dyn_budget_limits lim;

    for (size_t g = 0; g < s->ngroups; g++) {
        s->gcfg[g] = iof_test_worker(&s->plan, t, s->groups[g]);
        s->gspec[g] = iof_test_spec(&s->plan, t, s->groups[g]);
    }
    iof_budget_need_add(&need, s->gspec, s->gcfg, s->ngroups);
    dyn_budget_limits(&s->a->budget, &lim);
    return dyn_budget_check(&need, &lim, &s->a->budget, d);
}

/* On a worker thread: waits until the previous test is freed (its targets
 * and AIO events are back), then opens targets, allocates buffers and
 * starts the worker threads. */
static void start_work(uv_work_t *w)
{
    struct session *s = w->data;

    while (atomic_load(&s->a->reaping_live) && !atomic_load(&s->start_cancel))
        iof_sleep_until(iof_now_ns() + 10 * IOF_NS_PER_MS);
    s->start_dt = NULL;
    if (atomic_load(&s->start_cancel)) {
        s->start_err = -ECANCELED;
        return;
    }
    s->start_err = s->setup_only ? dyn_test_setup(&s->start_p, &s->start_dt, &s->start_diag)
                                 : dyn_test_start(&s->start_p, &s->start_dt, &s->start_diag);
}

/* Hands a started test to the poll timer. */
static void session_run_test(struct session *s, struct dyn_test *dt)
{
    struct agent *a = s->a;
    size_t most = 1;

    for (size_t wk = 0; wk < dyn_test_nworkers(dt); wk++)
        if (dyn_test_ntargets(dt, wk) > most)
            most = dyn_test_ntargets(dt, wk);
    free(s->zeros);
    s->zeros = calloc(most, sizeof(*s->zeros));
    if (!s->zeros) {
        agent_reap_test(a, dt);
        dyn_session_send_error(s, -ENOMEM, "%s: test %u: out of memory", a->name, s->test + 1);
        return;
    }
    for (size_t i = 0; i < most; i++)
        iof_stats_reset(&s->zeros[i]);
    s->dt = dt;
    if (s->stop_requested) /* a stop arrived while the test was starting */
        dyn_test_stop(dt);
    uv_timer_start(&s->poll, session_poll, AGENT_POLL_MS, AGENT_POLL_MS);
}

/* Frees a test set up for a start that will not come. */
void dyn_session_drop_ready(struct session *s)
{
    if (!s->ready_dt)
        return;
    agent_reap_test(s->a, s->ready_dt);
    s->ready_dt = NULL;
}

static void start_after(uv_work_t *w, int status)
{
    struct session *s = w->data;
    struct agent *a = s->a;
    struct dyn_test *dt = s->start_dt;

    s->starting = false;
    s->start_dt = NULL;
    if (s->gone || a->stopping) {
        if (dt)
            agent_reap_test(a, dt);
        if (s->gone) {
            a->draining--;
            dyn_session_maybe_free(s);
        }
        return;
    }
    if (status < 0 || s->start_err) {
        dyn_session_send_error(s, s->start_err ? s->start_err : status, "%s: test %u: %s", a->name,
                               s->test + 1, s->start_err ? s->start_diag.msg : uv_strerror(status));
        return;
    }
    if (s->setup_only) {
        struct proto_msg m;
        if (s->stop_requested || atomic_load(&s->start_cancel)) {
            agent_reap_test(a, dt);
            return;
        }
        s->ready_dt = dt;
        s->ready_test = s->test;
        proto_msg_init(&m, PROTO_MSG_READY);
        m.u.ready.test = s->test;
        proto_link_send(s->link, &m);
        return;
    }
    session_run_test(s, dt);
}

/* FNV-1a of the node name: the node's part of the identity of what it writes. */
static uint64_t agent_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *name; name++)
        h = (h ^ (uint8_t)*name) * 0x100000001b3ULL;
    return h;
}

/* The checks a test's setup or start passes before anything is opened or
 * allocated, and its parameters but the start time (in s->start_p). Sends
 * the error and returns false when one fails. */
static bool session_test_params(struct session *s, uint32_t test, const double *rates,
                                size_t nrates, const char *what)
{
    struct dyn_test_params *p = &s->start_p;
    struct iof_diag d = {{0}};
    struct iof_run_cfg run;
    const struct iof_test *t;
    int r;

    if (!s->have_plan) {
        dyn_session_send_error(s, IOF_EPROTO, "%s: %s before any plan", s->a->name, what);
        return false;
    }
    if (!s->prepared && !s->preparing && !s->dt) {
        dyn_session_send_error(s, IOF_EPROTO,
                               "%s: %s of test %u without a successful prepare of this plan",
                               s->a->name, what, test + 1);
        return false;
    }
    if (s->dt || s->starting || s->preparing) {
        dyn_session_send_error(s, IOF_EBUSY, "%s: %s of test %u while %s", s->a->name, what,
                               test + 1, s->preparing ? "preparing" : "a test is running");
        return false;
    }
    if (test >= s->ntests) {
        dyn_session_send_error(s, IOF_EPROTO, "%s: %s of test %u, the plan has %zu", s->a->name,
                               what, test + 1, s->ntests);
        return false;
    }
    t = &s->tests[test];
    /* The host may have changed since prepare: check again, still before
     * anything is opened or allocated. */
    r = dyn_session_check_budget(s, t, &d);
    if (r) {
        dyn_session_send_error(s, r, "%s: test %u: %s", s->a->name, test + 1, d.msg);
        return false;
    }
    free(s->rates);
    s->rates = NULL;
    if (nrates) {
        size_t nw = 0;
        for (size_t g = 0; g < s->ngroups; g++)
            nw += s->gcfg[g].count;
        if (nrates != nw) {
            dyn_session_send_error(s, IOF_EPROTO, "%s: test %u: %s gives %zu rates for %zu workers",
                                   s->a->name, test + 1, what, nrates, nw);
            return false;
        }
        s->rates = malloc(nw * sizeof(*s->rates));
        if (!s->rates) {
            dyn_session_send_error(s, -ENOMEM, "%s: test %u: out of memory", s->a->name, test + 1);
            return false;
        }
        memcpy(s->rates, rates, nw * sizeof(*s->rates));
    }
    memset(p, 0, sizeof(*p));
    run = iof_test_run(&s->plan, t);
    p->spec = t->spec_index < s->plan.nspecs ? &s->plan.specs[t->spec_index] : NULL;
    p->groups = s->gcfg; /* filled by dyn_session_check_budget */
    p->worker_iops = s->rates;
    p->group_specs = s->gspec;
    p->ngroups = s->ngroups;
    p->scope = s->a->scope;
    p->ramp_ns = run.ramp_ns;
    p->duration_ns = run.duration_ns;
    p->interval_ns = run.interval_ns;
    p->seed = iof_wall_ns();
    p->node_id = agent_name_hash(s->a->name);
    if (dyn_os_random(&p->run_nonce, sizeof(p->run_nonce)))
        p->run_nonce = p->seed ^ ((uint64_t)getpid() << 32);
    p->allow_destructive = s->a->o->allow_destructive;
    s->test = test;
    return true;
}

/* The start time of `start` on this node's clock, in s->start_p.start_ns,
 * and the window it opens; false (the error sent) for a start time too far
 * off. */
static bool session_test_arm(struct session *s, const struct proto_start *st)
{
    struct dyn_test_params *p = &s->start_p;
    struct iof_diag d = {{0}};
    uint64_t now = iof_now_ns();
    int r;

    r = dyn_budget_start_time(st->start_at_ns, st->offset_ns, p->ramp_ns, now, &p->start_ns, &d);
    if (r) {
        dyn_session_send_error(s, r, "%s: test %u: %s", s->a->name, st->test + 1, d.msg);
        return false;
    }
    if (p->start_ns < now)
        IOF_WARN("test %u: start time already passed by %.3f ms; starting now (in the ramp)",
                 st->test + 1, (double)(now - p->start_ns) / 1e6);
    if (s->ngroups == 0)
        IOF_INFO("test %u: no worker group selects node '%s': idle until the test ends, "
                 "reporting no I/O",
                 st->test + 1, s->a->name);
    s->next_interval = 0;
    memset(&s->cpu_start, 0, sizeof(s->cpu_start));
    memset(&s->cpu_last, 0, sizeof(s->cpu_last));
    s->stop_requested = false;
    s->stop_ns = 0;
    s->vprog_ns = 0;
    s->ended_early = false;
    s->measure_start = p->start_ns + p->ramp_ns;
    s->end = s->measure_start + p->duration_ns;
    return true;
}

/* Queues the set-up (and, for a start, the start) of the test in
 * s->start_p on a worker thread. */
static void session_queue_start(struct session *s, bool setup_only)
{
    int r;

    atomic_store(&s->start_cancel, false);
    s->start_work.data = s;
    s->setup_only = setup_only;
    s->starting = true;
    r = uv_queue_work(s->a->loop, &s->start_work, start_work, start_after);
    if (r < 0) {
        s->starting = false;
        dyn_session_send_error(s, r, "%s: test %u: cannot %s: %s", s->a->name, s->test + 1,
                               setup_only ? "set up" : "start", uv_strerror(r));
    }
}

/* setup (protocol 1.4): the test is set up now - targets opened, buffers
 * allocated and filled, engines opened - and `ready` sent, so that its
 * start time is not spent on it. */
void dyn_session_setup_test(struct session *s, const struct proto_start *su)
{
    dyn_session_drop_ready(s);
    if (!session_test_params(s, su->test, su->rates, su->nrates, "setup"))
        return; /* a stop pending for a test still starting stays pending */
    s->stop_requested = false;
    session_queue_start(s, true);
}

void dyn_session_start_test(struct session *s, const struct proto_start *st)
{
    if (s->ready_dt && s->ready_test == st->test && !s->dt && !s->starting) {
        /* Set up by its setup: only the start time is left. The setup's
         * rates hold (a start's are the same). */
        struct dyn_test *dt = s->ready_dt;
        struct iof_diag d = {{0}};
        int r;
        s->ready_dt = NULL;
        if (!session_test_arm(s, st)) {
            agent_reap_test(s->a, dt);
            return;
        }
        r = dyn_test_go(dt, s->start_p.start_ns, &d);
        if (r) {
            agent_reap_test(s->a, dt);
            dyn_session_send_error(s, r, "%s: test %u: %s", s->a->name, st->test + 1, d.msg);
            return;
        }
        session_run_test(s, dt);
        return;
    }
    /* A manager before 1.4 (no setup): set up now, inside the start's
     * lead; a worker that leaves the barrier late fails the test. */
    dyn_session_drop_ready(s);
    if (!session_test_params(s, st->test, st->rates, st->nrates, "start") ||
        !session_test_arm(s, st))
        return;
    session_queue_start(s, false);
}

/* Stops I/O at once: the dead-man rule and session teardown. The workers
 * are joined and freed on a worker thread; a test still starting is
 * stopped as soon as its start returns. */
void dyn_session_abort_test(struct session *s)
{
    dyn_session_drop_ready(s);
    if (s->starting) {
        s->stop_requested = true;
        atomic_store(&s->start_cancel, true);
    }
    if (!s->dt)
        return;
    uv_timer_stop(&s->poll);
    agent_reap_test(s->a, s->dt);
    s->dt = NULL;
}
