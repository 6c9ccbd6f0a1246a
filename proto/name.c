/* SPDX-License-Identifier: Apache-2.0 */
/* proto/name.c - the one rule for a node's name (proto/name.h): its length,
 * its characters and the reserved names, with one message per reason. */
#include "proto/name.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proto/msg.h"

static const char *const name_reserved[] = {"ALL", "ca", "manager"};

int proto_node_name_check(const char *what, const char *name, struct iof_diag *diag)
{
    struct iof_diag d;
    char shown[40];
    size_t n = name ? strlen(name) : 0, i = 0;

    for (; i < n && i < 32; i++)
        shown[i] = (name[i] >= 0x20 && name[i] < 0x7f) ? name[i] : '?';
    snprintf(shown + i, sizeof(shown) - i, "%s", i < n ? "..." : "");
    if (n > PROTO_NODE_NAME_MAX)
        return iof_diag_set(diag, -EINVAL,
                            "%s '%s': longer than %d bytes (the limit of a certificate's "
                            "common name)",
                            what, shown, PROTO_NODE_NAME_MAX);
    if (proto_name_check(name, &d)) {
        const char *why = strncmp(d.msg, "name: ", 6) ? d.msg : d.msg + 6;
        return iof_diag_set(diag, -EINVAL, "%s '%s': %s", what, shown, why);
    }
    if (name[0] == '.')
        return iof_diag_set(diag, -EINVAL, "%s '%s': must not start with '.'", what, shown);
    for (i = 0; i < sizeof(name_reserved) / sizeof(name_reserved[0]); i++)
        if (!strcasecmp(name, name_reserved[i]))
            return iof_diag_set(diag, -EINVAL,
                                "%s '%s': reserved (ALL names the cluster's rows in the result "
                                "files; ca and manager are iofleet pki's own files)",
                                what, shown);
    if (n >= 4 && !strcasecmp(name + n - 4, "-key"))
        return iof_diag_set(diag, -EINVAL,
                            "%s '%s': must not end in '-key' (its certificate file would clash "
                            "with another name's key file)",
                            what, shown);
    return 0;
}
