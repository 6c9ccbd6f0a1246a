/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/scope.c - the scope rules (dynamo/scope.h) both systems share, with no
 * system call: the names reserved for the agent's own files. Opening and
 * judging what a name reaches is each system's (dynamo/os/linux/scope.c,
 * dynamo/os/windows/scope.c). */
#include "dynamo/scope.h"

#include "common/spec.h"

int dyn_scope_check_name(const char *path, struct iof_diag *diag)
{
    /* The plan loader refuses these names too; the agent judges on its own
     * what it opens or creates (a manager need not run that loader). */
    if (!iof_target_name_reserved(path))
        return 0;
    return iof_diag_set(diag, IOF_EDENIED,
                        "target '%s': names starting with '" IOF_RESERVED_PREFIX
                        "' are reserved for the agent's own files (its test-file ledger and "
                        "verify state)",
                        path);
}
