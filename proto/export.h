/* SPDX-License-Identifier: Apache-2.0 */
/* proto/export.h - a plan written in another tool's format: an Iometer
 * configuration file (proto/export_icf.c). */
#ifndef IOF_PROTO_EXPORT_H
#define IOF_PROTO_EXPORT_H

#include "common/buf.h"
#include "common/err.h"
#include "common/spec.h"

/* Writes the validated plan `p` as an Iometer configuration file (Version
 * 1.1.0) into `out`; notes and errors go to `msgs`, one line each ("note: ...",
 * "error: PLAN.KEY: why"). Returns 0, IOF_EPLAN when Iometer cannot express
 * something the plan says (nothing usable in `out`), or -ENOMEM. */
int proto_export_icf(const struct iof_plan *p, struct iof_buf *out, struct iof_buf *msgs,
                     struct iof_diag *diag);

#endif
