/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/agent_send.c - what a session sends on its own: errors, and the hello
 * with the inventory (refreshed off the loop, waited for briefly). */
#include "dynamo/agent_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

/* --- sending ------------------------------------------------------------------ */

void dyn_session_send_error(struct session *s, int code, const char *fmt, ...)
{
    char text[PROTO_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    IOF_WARN("%s", text);
    proto_link_send_error(s->link, code, "%s", text);
}

void dyn_session_send_hello(struct session *s)
{
    struct agent *a = s->a;
    struct proto_msg m;
    struct dyn_os_machine mach;
    char kernel[PROTO_NAME_MAX + 1];
    void *hold = NULL;

    proto_msg_init_hello(&m, PROTO_ROLE_AGENT, a->name);
    if (a->o->heartbeat_ms)
        m.u.hello.heartbeat_ms = a->o->heartbeat_ms;
    dyn_os_machine(&mach);
    m.u.hello.inventory.hostname = a->host;
    m.u.hello.inventory.cpus = mach.cpus;
    m.u.hello.inventory.memory_bytes = mach.memory_bytes;
    dyn_inventory_clean(kernel, sizeof(kernel), mach.kernel);
    m.u.hello.inventory.kernel = kernel;
    {
        struct dyn_budget_limits lim;
        dyn_budget_limits(&a->budget, &lim);
        m.u.hello.inventory.has_budget = true;
        m.u.hello.inventory.budget = (struct proto_budget){.workers = lim.workers,
                                                           .buffer_mem = lim.buffer_mem,
                                                           .aio_events = lim.aio_events,
                                                           .fds = lim.fds};
    }
    if (a->inv)
        hold = dyn_inv_cache_fill(a->inv, &m.u.hello.inventory);
    s->hello_wait = false;
    int r = proto_link_send(s->link, &m);
    dyn_inv_cache_release(hold);
    /* Without its hello the manager would only see none came: say why, and
     * close (a closing connection is its close's to report). */
    if (r && r != -ENOTCONN) {
        dyn_session_send_error(s, r,
                               "%s: cannot send its hello: %s (the agent's log says which field)",
                               s->a->name, iof_strerror(r));
        proto_link_close(s->link, r, "cannot send the hello");
    }
}

/* The hellos of new sessions wait (at most AGENT_INVENTORY_WAIT_MS) for a
 * fresh inventory, so `iofleet agents` sees a device mounted a moment ago;
 * the refresh runs on its own thread (dynamo/inventory.h). */
static void agent_send_waiting_hellos(struct agent *a)
{
    uv_timer_stop(&a->inv_timer);
    for (struct session *s = a->sessions; s; s = s->next)
        if (s->hello_wait)
            dyn_session_send_hello(s);
}

void dyn_agent_on_inventory(uv_async_t *h)
{
    agent_send_waiting_hellos(h->data);
}

static void agent_on_inventory_timeout(uv_timer_t *t)
{
    agent_send_waiting_hellos(t->data);
}

/* Called on the refresh thread, with the cache's lock held. */
static void agent_inventory_done(void *arg)
{
    struct agent *a = arg;
    uv_async_send(&a->inv_async);
}

void dyn_session_hello_soon(struct session *s)
{
    struct agent *a = s->a;

    if (!a->inv || a->handles_closed || !dyn_inv_cache_refresh(a->inv, agent_inventory_done, a)) {
        dyn_session_send_hello(s);
        return;
    }
    s->hello_wait = true;
    if (!uv_is_active((uv_handle_t *)&a->inv_timer))
        uv_timer_start(&a->inv_timer, agent_on_inventory_timeout, AGENT_INVENTORY_WAIT_MS, 0);
}
