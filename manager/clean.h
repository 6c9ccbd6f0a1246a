/* SPDX-License-Identifier: Apache-2.0 */
/* manager/clean.h - `iofleet clean`: asks each agent to remove the test
 * files it made in its workdir (dynamo/clean.h says which: only those its
 * ledger names and that are still the files it made), and prints what
 * went. */
#ifndef IOF_MANAGER_CLEAN_H
#define IOF_MANAGER_CLEAN_H

#include <stddef.h>
#include <stdio.h>

#include "manager/probe.h"

/* Cleans every endpoint in turn (with `base`'s TLS and wait settings) and
 * prints one line per agent, then the names removed, to `out`; an agent
 * that cannot be reached or refuses is named on stderr. Returns 0 when
 * every agent cleaned, 1 when one could not remove a file of its own (or
 * `out` failed), 3 when one could not be reached, refused or is busy. */
int mgr_clean_agents(const char *const *endpoints, size_t n, const struct mgr_probe_opts *base,
                     FILE *out);

#endif
