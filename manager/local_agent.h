/* SPDX-License-Identifier: Apache-2.0 */
/* manager/local_agent.h - starting the embedded agent of `iofleet run`
 * (manager/local_agent.c). Internal to the manager; loop thread only.
 */
#ifndef IOF_MANAGER_LOCAL_AGENT_H
#define IOF_MANAGER_LOCAL_AGENT_H

#include <stdbool.h>
#include <uv.h>

#include "common/net.h"
#include "common/spec.h"
#include "manager/run.h"

/* Starts o->dynamo for plan p as child (on_exit: its end; child->data is
 * the caller's), connected by a socketpair whose manager end is *conn.
 * *running is set once the process is started. 0, or an error (logged). */
int mgr_local_agent_spawn(uv_loop_t *loop, const struct mgr_run_opts *o, const struct iof_plan *p,
                          uv_process_t *child, uv_exit_cb on_exit, bool *running,
                          struct iof_conn **conn);

#endif
