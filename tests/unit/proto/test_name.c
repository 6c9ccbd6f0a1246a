/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_name.c - proto/name.c: the one rule for a node's name
 * (dynamo --name, certificate names, a plan's nodes), one message per
 * reason, the limit exactly at 64 bytes, reserved names whole and in any
 * case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/name.h"

static void refused(const char *name, const char *want)
{
    struct iof_diag d;
    assert_int_equal(proto_node_name_check("--name", name, &d), -EINVAL);
    if (strcmp(d.msg, want))
        fail_msg("'%s': got \"%s\", want \"%s\"", name, d.msg, want);
}

static void test_accepted(void **state)
{
    (void)state;
    char n64[PROTO_NODE_NAME_MAX + 1];
    memset(n64, 'n', PROTO_NODE_NAME_MAX);
    n64[PROTO_NODE_NAME_MAX] = '\0';
    static const char *const ok[] = {"node1",    "esx-07.lab", "a_b", "allx",   "xall",
                                     "manager1", "cax",        "key", "a-keyx", "local"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (proto_node_name_check("--name", ok[i], NULL))
            fail_msg("'%s' refused", ok[i]);
    assert_int_equal(proto_node_name_check("--name", n64, NULL), 0); /* exactly 64 */
}

static void test_refused(void **state)
{
    (void)state;
    char n65[PROTO_NODE_NAME_MAX + 2];
    memset(n65, 'n', PROTO_NODE_NAME_MAX + 1);
    n65[PROTO_NODE_NAME_MAX + 1] = '\0';
    refused(n65, "--name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...': longer than 64 bytes (the limit of "
                 "a certificate's common name)");
    refused("", "--name '': must not be empty");
    refused("node 1", "--name 'node 1': byte 4 (0x20) is not allowed: use ASCII letters, digits, "
                      "'.', '_' and '-'");
    refused("n\xc3\xa9", "--name 'n?"
                         "?': byte 1 (0xc3) is not allowed: use ASCII letters, digits, "
                         "'.', '_' and '-'");
    refused(".lab", "--name '.lab': must not start with '.'");
    refused("n1-key", "--name 'n1-key': must not end in '-key' (its certificate file would clash "
                      "with another name's key file)");
    refused("n1-KEY", "--name 'n1-KEY': must not end in '-key' (its certificate file would clash "
                      "with another name's key file)");
    static const char *const reserved[] = {"ALL", "all", "All", "ca", "CA", "manager", "Manager"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
        char want[256];
        snprintf(want, sizeof(want),
                 "--name '%s': reserved (ALL names the cluster's rows in the result files; ca "
                 "and manager are iofleet pki's own files)",
                 reserved[i]);
        refused(reserved[i], want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
