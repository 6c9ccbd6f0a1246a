/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_inventory.c - dynamo/inventory: the strings an agent's
 * hello carries are valid under common/text.h's policy, so the hello always
 * encodes: C1 controls, bidirectional overrides and UTF-8 cut short (sysfs
 * models, mountpoints, the workdir's path) are escaped, never cut inside a
 * character. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "dynamo/inventory.h"
#include "proto/frame.h"
#include "proto/msg.h"

#include "tmpdir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* in → frame → decoder → out, as proto_link_send and the manager do. */
static void round_trip(const struct proto_msg *in, struct proto_msg *out)
{
    struct iof_diag d = {{0}};
    uint8_t *frame;
    size_t n;
    int rc = proto_msg_encode_frame(in, PROTO_FRAME_MAX_PREAUTH, &frame, &n, &d);
    if (rc)
        fail_msg("encode: %d %s", rc, d.msg);
    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_PREAUTH), 0);
    const uint8_t *p = frame;
    struct proto_frame f;
    assert_int_equal(proto_decoder_next(&dec, &p, &n, &f), 1);
    assert_int_equal(n, 0);
    rc = proto_msg_decode(f.payload, f.len, out, &d);
    if (rc)
        fail_msg("decode: %d %s", rc, d.msg);
    proto_decoder_free(&dec);
    free(frame);
}

/* Model and mountpoint text as sysfs and mountinfo may hold it. */
static void test_clean(void **state)
{
    (void)state;
    char buf[64];

    dyn_inventory_clean(buf, sizeof(buf), "/media/u/abc\xe2\x80\xaetxt.exe");
    assert_string_equal(buf, "/media/u/abc\\u202etxt.exe");
    dyn_inventory_clean(buf, sizeof(buf),
                        "Model\xc2\x9b"
                        "2J\x1b[0m");
    assert_string_equal(buf, "Model\\u009b2J\\x1b[0m");
    /* Cut short by a fixed-size read: the stray bytes escaped. */
    dyn_inventory_clean(buf, sizeof(buf), "Disque \xc3\xa9vo \xe2\x80");
    assert_string_equal(buf, "Disque \xc3\xa9vo \\xe2\\x80");
    /* Valid UTF-8 kept; a character that does not fit left out whole. */
    dyn_inventory_clean(buf, 10, "abcdefgh\xc3\xa9");
    assert_string_equal(buf, "abcdefgh");
    dyn_inventory_clean(buf, 11, "abcdefgh\xc3\xa9");
    assert_string_equal(buf, "abcdefgh\xc3\xa9");

    /* A hello carrying such strings encodes and decodes. */
    char model[64], mp[64];
    dyn_inventory_clean(model, sizeof(model), "X\xc2\x85Y\xe2\x80\xae");
    dyn_inventory_clean(mp, sizeof(mp), "/media/u/\xe2\x81\xa6l\xe2\x80");
    struct proto_target_info ti = {.path = "/dev/sdb",
                                   .kind = "block",
                                   .logical_block_size = 512,
                                   .rotational = 0,
                                   .in_use = 1,
                                   .ram_backed = 0,
                                   .model = model,
                                   .mountpoint = mp};
    struct proto_msg in, out;
    proto_msg_init_hello(&in, PROTO_ROLE_AGENT, "node-1");
    in.u.hello.inventory = (struct proto_inventory){.hostname = "node-1",
                                                    .cpus = 2,
                                                    .memory_bytes = 1 << 30,
                                                    .kernel = "6.1.0",
                                                    .ntargets = 1,
                                                    .targets = &ti};
    round_trip(&in, &out);
    assert_int_equal(out.u.hello.inventory.ntargets, 1);
    assert_string_equal(out.u.hello.inventory.targets[0].model, "X\\u0085Y\\u202e");
    assert_string_equal(out.u.hello.inventory.targets[0].mountpoint, "/media/u/\\u2066l\\xe2\\x80");
    proto_msg_clear(&out);
}

/* A workdir whose path holds a bidi override, a C1 control and a cut
 * character: described (its filesystem found) and sent escaped. */
static void test_workdir_path(void **state)
{
    (void)state;
    char dir[PATH_MAX], wd[PATH_MAX + 64], want[PATH_MAX + 64];

    assert_int_equal(test_tmpdir_make(dir, "iof-inventory"), 0);
    snprintf(wd, sizeof(wd),
             "%s/a\xe2\x80\xae"
             "b\xc2\x9b"
             "c\xe2\x80",
             dir);
    assert_int_equal(mkdir(wd, 0755), 0);
    snprintf(want, sizeof(want), "%s/a\\u202eb\\u009bc\\xe2\\x80", dir);

    struct dyn_inv_strings s;
    struct proto_msg in, out;
    proto_msg_init_hello(&in, PROTO_ROLE_AGENT, "node-1");
    in.u.hello.inventory = (struct proto_inventory){
        .hostname = "node-1", .cpus = 2, .memory_bytes = 1 << 30, .kernel = "6.1.0"};
    dyn_inventory_workdir(wd, &in.u.hello.inventory.workdir, &s);
    assert_string_equal(in.u.hello.inventory.workdir.path, want);
    assert_non_null(in.u.hello.inventory.workdir.fstype); /* probed at the real path */
    assert_true(in.u.hello.inventory.workdir.size > 0);
    round_trip(&in, &out);
    assert_string_equal(out.u.hello.inventory.workdir.path, want);
    proto_msg_clear(&out);
    test_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_workdir_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
