/* SPDX-License-Identifier: Apache-2.0 */
/* manager/agents.h - `iofleet agents`: what each agent is and may use, from
 * the hello it sends on connection (Iometer's "Disk Targets" tab, for a
 * fleet): version, CPUs, memory, kernel, budget, workdir filesystem and the
 * devices and paths of its --allow list. */
#ifndef IOF_MANAGER_AGENTS_H
#define IOF_MANAGER_AGENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "manager/probe.h"

/* Asks every endpoint for its hello (with `base`'s TLS and wait settings)
 * and prints them to `out`: a table per agent, or with `json` one JSON
 * array of {"endpoint", "reachable", "hello" | "error"}. An agent that
 * cannot be reached is named with the reason (on stderr for the text
 * form). Returns 0 when every agent answered, 3 when one did not, 1 when
 * `out` could not be written. */
int mgr_agents_list(const char *const *endpoints, size_t n, const struct mgr_probe_opts *base,
                    bool json, FILE *out);

/* Prints one agent's hello as the text form does (for tests). */
void mgr_agents_print(const char *endpoint, const struct proto_hello *h, FILE *out);

#endif
