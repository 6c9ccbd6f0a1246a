/* SPDX-License-Identifier: Apache-2.0 */
/* manager/clean.c - `iofleet clean` (manager/clean.h). */
#include "manager/clean.h"

#include <inttypes.h>

#include "common/budget.h"
#include "common/log.h"

int mgr_clean_agents(const char *const *endpoints, size_t n, const struct mgr_probe_opts *base,
                     FILE *out)
{
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        struct mgr_probe_opts o = *base;
        struct mgr_clean_result r;
        struct proto_hello h;
        struct iof_diag d = {{0}};
        char b[32];

        o.endpoint = endpoints[i];
        if (mgr_probe_clean(&o, &h, &r, &d)) {
            IOF_USER("iofleet clean: %s", d.msg);
            mgr_clean_result_free(&r);
            rc = 3;
            continue;
        }
        iof_budget_format_bytes(r.bytes, b, sizeof(b));
        fprintf(out, "%s (%s): removed %" PRIu64 " test file%s, %s, from %s\n", h.name,
                endpoints[i], r.files, r.files == 1 ? "" : "s", b, r.workdir);
        for (size_t k = 0; k < r.nremoved; k++)
            fprintf(out, "  %s\n", r.removed[k]);
        if (r.files > r.nremoved)
            fprintf(out, "  ... and %" PRIu64 " more\n", r.files - r.nremoved);
        if (r.failed) {
            fprintf(out,
                    "  %" PRIu64 " of its test files could not be removed (the agent's log "
                    "says why)\n",
                    r.failed);
            if (!rc)
                rc = 1;
        }
        mgr_clean_result_free(&r);
        proto_hello_free(&h);
    }
    if (fflush(out) && !rc)
        rc = 1;
    return rc;
}
