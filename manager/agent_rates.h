/* SPDX-License-Identifier: Apache-2.0 */
/* manager/agent_rates.h - one agent's rates in a rate cycle
 * (common/ratecycle.h): the IOPS each of its workers did in the spec's
 * unthrottled step, and the rates a later step offers it. Internal to the
 * manager; loop thread only.
 */
#ifndef IOF_MANAGER_AGENT_RATES_H
#define IOF_MANAGER_AGENT_RATES_H

#include <stdbool.h>

#include "manager/agent_conn.h"
#include "proto/msg.h"

/* Keeps the unthrottled step's result st: the IOPS each worker did. */
void mgr_agent_rates_base(struct mgr_agent *a, const struct proto_stats *st);
/* Forgets a's rates; with new_spec, also its unthrottled result (only a
 * spec's own unthrottled step counts). */
void mgr_agent_rates_clear(struct mgr_agent *a, bool new_spec);
/* Sets a's rates to frac of its unthrottled IOPS per worker, each rounded
 * to 1/1000 IOPS and kept within the rate limits. Returns their sum (0
 * when a has no unthrottled result, or out of memory: no rates). */
double mgr_agent_rates_set(struct mgr_agent *a, double frac);

#endif
