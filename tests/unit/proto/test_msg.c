/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/proto/test_msg.c - proto/msg: the type table, encode/decode round
 * trips of every message with a body, forward compatibility (unknown fields
 * ignored), and the exact diag of every refused field.
 *
 * cJSON is used here only to delete fields from valid messages. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/err.h"
#include "proto/frame.h"
#include "proto/msg.h"
#include "proto/version.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_INT_MAX ((UINT64_C(1) << 53) - 1)

/* ---- helpers ----------------------------------------------------------- */

static int decode_str(const char *json, struct proto_msg *msg, struct iof_diag *d)
{
    return proto_msg_decode(json, strlen(json), msg, d);
}

/* Decodes `json`, expects rc and exactly `want` as diag; frees. */
static void expect_refused(const char *json, int want_rc, const char *want)
{
    struct proto_msg m;
    struct iof_diag d = {{0}};
    int rc = decode_str(json, &m, &d);
    if (rc != want_rc || strcmp(d.msg, want) != 0)
        fail_msg("%s\n  rc %d (want %d)\n  diag \"%s\"\n  want \"%s\"", json, rc, want_rc, d.msg,
                 want);
    proto_msg_clear(&m);
}

/* in → JSON → frame → decoder → JSON → out: the whole path a message takes. */
static void round_trip(const struct proto_msg *in, struct proto_msg *out)
{
    struct iof_diag d = {{0}};
    uint8_t *frame;
    size_t n;
    int rc = proto_msg_encode_frame(in, PROTO_FRAME_MAX_PREAUTH, &frame, &n, &d);
    if (rc)
        fail_msg("encode %s: %d %s", proto_msg_type_name(in->type), rc, d.msg);
    struct proto_decoder dec;
    assert_int_equal(proto_decoder_init(&dec, PROTO_FRAME_MAX_PREAUTH), 0);
    const uint8_t *p = frame;
    struct proto_frame f;
    assert_int_equal(proto_decoder_next(&dec, &p, &n, &f), 1);
    assert_int_equal(n, 0);
    rc = proto_msg_decode(f.payload, f.len, out, &d);
    if (rc)
        fail_msg("decode %.*s: %d %s", (int)f.len, (const char *)f.payload, rc, d.msg);
    assert_int_equal(out->type, in->type);
    proto_decoder_free(&dec);
    free(frame);
}

static char *encode_text(const struct proto_msg *m)
{
    char *text;
    size_t len;
    struct iof_diag d = {{0}};
    int rc = proto_msg_encode(m, &text, &len, &d);
    if (rc)
        fail_msg("encode: %d %s", rc, d.msg);
    assert_int_equal(strlen(text), len);
    return text;
}

/* A string of n copies of c (test_free it). */
static char *repeat(char c, size_t n)
{
    char *s = test_malloc(n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* Valid messages the table tests below take apart. */
static const char *const AGENT_HELLO =
    "{\"type\":\"hello\",\"v\":[1,0],\"role\":\"agent\",\"name\":\"node-1\","
    "\"software\":\"0.1.0\",\"heartbeat_ms\":1000,"
    "\"inventory\":{\"hostname\":\"node-1.lab\",\"cpus\":16,\"memory_bytes\":68719476736,"
    "\"kernel\":\"6.1.0-18-amd64\",\"targets\":["
    "{\"path\":\"/dev/sdb\",\"size\":1000204886016,\"logical_block_size\":512,"
    "\"rotational\":true,\"model\":\"ST1000NM0033\"},"
    "{\"path\":\"/dev/nvme0n1\",\"size\":2000398934016,\"logical_block_size\":4096,"
    "\"rotational\":false,\"model\":\"Samsung SSD 980 PRO 2TB\"},"
    "{\"path\":\"/srv/iofleet\",\"size\":0,\"logical_block_size\":512,"
    "\"rotational\":null,\"model\":null}]}}";

/* ---- the type table ---------------------------------------------------- */

static void test_type_table(void **state)
{
    (void)state;
    assert_int_equal(PROTO_MSG_COUNT, 19);
    for (int t = 0; t < PROTO_MSG_COUNT; t++) {
        const char *name = proto_msg_type_name(t);
        assert_true(strlen(name) > 0);
        assert_true(strlen(proto_msg_type_desc(t)) > 10);
        assert_int_equal(proto_msg_type_from_name(name), t);
        for (int u = 0; u < t; u++)
            assert_string_not_equal(name, proto_msg_type_name(u));
    }
    assert_int_equal(proto_msg_type_from_name("frobnicate"), -ENOENT);
    assert_int_equal(proto_msg_type_from_name(""), -ENOENT);
    assert_string_equal(proto_msg_type_name(PROTO_MSG_COUNT), "?");
    assert_string_equal(proto_msg_type_name(PROTO_MSG_CLOCK_REPLY), "clock_reply");
    assert_string_equal(proto_msg_type_name(PROTO_MSG_PREPARE_PROGRESS), "prepare_progress");

    assert_int_equal(proto_msg_type_dir(PROTO_MSG_HELLO), PROTO_DIR_BOTH);
    assert_int_equal(proto_msg_type_dir(PROTO_MSG_PLAN), PROTO_DIR_MANAGER_TO_AGENT);
    assert_int_equal(proto_msg_type_dir(PROTO_MSG_STATS), PROTO_DIR_AGENT_TO_MANAGER);
    assert_true(proto_msg_may_send(PROTO_MSG_START, PROTO_ROLE_MANAGER));
    assert_false(proto_msg_may_send(PROTO_MSG_START, PROTO_ROLE_AGENT));
    assert_true(proto_msg_may_send(PROTO_MSG_RESULT, PROTO_ROLE_AGENT));
    assert_false(proto_msg_may_send(PROTO_MSG_RESULT, PROTO_ROLE_MANAGER));
    assert_true(proto_msg_may_send(PROTO_MSG_HEARTBEAT, PROTO_ROLE_AGENT));
    assert_true(proto_msg_may_send(PROTO_MSG_HEARTBEAT, PROTO_ROLE_MANAGER));
    assert_false(proto_msg_may_send(PROTO_MSG_HEARTBEAT, (enum proto_role)0));
    assert_false(proto_msg_may_send(PROTO_MSG_COUNT, PROTO_ROLE_AGENT));
    assert_string_equal(proto_role_name(PROTO_ROLE_AGENT), "agent");
    assert_true(proto_msg_may_send(PROTO_MSG_SETUP, PROTO_ROLE_MANAGER));
    assert_false(proto_msg_may_send(PROTO_MSG_SETUP, PROTO_ROLE_AGENT));
    assert_true(proto_msg_may_send(PROTO_MSG_READY, PROTO_ROLE_AGENT));
    assert_false(proto_msg_may_send(PROTO_MSG_READY, PROTO_ROLE_MANAGER));
    assert_true(proto_msg_may_send(PROTO_MSG_CLEAN, PROTO_ROLE_MANAGER));
    assert_false(proto_msg_may_send(PROTO_MSG_CLEAN, PROTO_ROLE_AGENT));
    assert_true(proto_msg_may_send(PROTO_MSG_CLEANED, PROTO_ROLE_AGENT));
    assert_false(proto_msg_may_send(PROTO_MSG_CLEANED, PROTO_ROLE_MANAGER));
}

/* prepare's optional cleanup (1.2), clean and cleaned. */
static void test_clean_messages(void **state)
{
    (void)state;
    struct proto_msg in, out;
    struct iof_diag d = {{0}};
    const char *names[] = {"a.dat", "sub/b.dat"};
    char *text;

    /* Sent only between peers of 1.2 or later (this build announces its own
     * minor unless IOF_PROTO_MINOR says otherwise). */
    if (!getenv("IOF_PROTO_MINOR")) {
        assert_false(proto_clean_ok(0));
        assert_false(proto_clean_ok(1));
        assert_true(proto_clean_ok(PROTO_MINOR_CLEAN));
    }
    /* A find_max plan: only the peer's minor counts (this build's layout
     * is the new one whatever it announces). */
    assert_false(proto_find_max_ok(PROTO_MINOR_FIND_MAX - 1));
    assert_true(proto_find_max_ok(PROTO_MINOR_FIND_MAX));
    assert_true(proto_find_max_ok(PROTO_MINOR_FIND_MAX + 5));

    proto_msg_init(&in, PROTO_MSG_PREPARE);
    text = encode_text(&in);
    assert_string_equal(text, "{\"type\":\"prepare\"}"); /* the 1.0 message */
    free(text);
    in.u.prepare.cleanup = true;
    text = encode_text(&in);
    assert_string_equal(text, "{\"type\":\"prepare\",\"cleanup\":true}");
    free(text);
    round_trip(&in, &out);
    assert_true(out.u.prepare.cleanup);
    proto_msg_clear(&out);
    assert_int_equal(decode_str("{\"type\":\"prepare\"}", &out, &d), 0);
    assert_false(out.u.prepare.cleanup);
    proto_msg_clear(&out);
    expect_refused("{\"type\":\"prepare\",\"cleanup\":1}", IOF_EPROTO,
                   "prepare.cleanup: must be true or false");

    proto_msg_init(&in, PROTO_MSG_CLEAN);
    text = encode_text(&in);
    assert_string_equal(text, "{\"type\":\"clean\"}");
    free(text);

    proto_msg_init(&in, PROTO_MSG_CLEANED);
    in.u.cleaned = (struct proto_cleaned){.workdir = "/var/lib/iofleet",
                                          .files = 3,
                                          .bytes = 3221225472,
                                          .failed = 1,
                                          .nremoved = 2,
                                          .removed = names};
    round_trip(&in, &out);
    assert_string_equal(out.u.cleaned.workdir, "/var/lib/iofleet");
    assert_true(out.u.cleaned.files == 3 && out.u.cleaned.bytes == 3221225472 &&
                out.u.cleaned.failed == 1);
    assert_int_equal(out.u.cleaned.nremoved, 2);
    assert_string_equal(out.u.cleaned.removed[1], "sub/b.dat");
    proto_msg_clear(&out);
    /* More names than files removed, or than the cap, is refused both ways. */
    in.u.cleaned.files = 1;
    assert_int_equal(proto_msg_encode(&in, &text, &(size_t){0}, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "cleaned.removed: 2 names"));
    expect_refused("{\"type\":\"cleaned\",\"workdir\":\"/w\",\"files\":1,\"bytes\":1,"
                   "\"failed\":0,\"removed\":[\"a\",\"b\"]}",
                   IOF_EPROTO, "cleaned.removed: 2 names, at most 256 and no more than files");
    expect_refused("{\"type\":\"cleaned\",\"workdir\":\"/w\",\"files\":1,\"bytes\":1,"
                   "\"failed\":0,\"removed\":[7]}",
                   IOF_EPROTO, "cleaned.removed[0]: must be a string");
    expect_refused("{\"type\":\"cleaned\",\"files\":1,\"bytes\":1,\"failed\":0,"
                   "\"removed\":[]}",
                   IOF_EPROTO, "cleaned.workdir: required field missing");
}

/* ---- round trips ------------------------------------------------------- */

/* 1.5: hello.heartbeat_offer_ms is optional (absent: 0, and not written
 * when 0), round-trips, and is range-checked as heartbeat_ms is. */
static void test_hello_heartbeat_offer(void **state)
{
    (void)state;
    struct proto_msg in, out;
    struct iof_diag d = {{0}};
    char *text;

    proto_msg_init_hello(&in, PROTO_ROLE_MANAGER, "m");
    text = encode_text(&in);
    assert_null(strstr(text, "heartbeat_offer_ms"));
    free(text);
    round_trip(&in, &out);
    assert_int_equal(out.u.hello.heartbeat_offer_ms, 0);
    proto_msg_clear(&out);

    in.u.hello.heartbeat_offer_ms = PROTO_HEARTBEAT_MS_OFFER;
    text = encode_text(&in);
    assert_non_null(strstr(text, "\"heartbeat_offer_ms\":3000"));
    free(text);
    round_trip(&in, &out);
    assert_int_equal(out.u.hello.heartbeat_offer_ms, PROTO_HEARTBEAT_MS_OFFER);
    assert_int_equal(out.u.hello.heartbeat_ms, PROTO_HEARTBEAT_MS_DEFAULT);
    proto_msg_clear(&out);

    assert_int_equal(decode_str("{\"type\":\"hello\",\"v\":[1,5],\"role\":\"manager\","
                                "\"name\":\"m\",\"software\":\"x\",\"heartbeat_ms\":1000,"
                                "\"heartbeat_offer_ms\":2500}",
                                &out, &d),
                     0);
    assert_int_equal(out.u.hello.heartbeat_offer_ms, 2500);
    proto_msg_clear(&out);
    expect_refused("{\"type\":\"hello\",\"v\":[1,5],\"role\":\"manager\",\"name\":\"m\","
                   "\"software\":\"x\",\"heartbeat_ms\":1000,\"heartbeat_offer_ms\":60001}",
                   IOF_EPROTO, "hello.heartbeat_offer_ms: must be 100..60000, got 60001");
    expect_refused("{\"type\":\"hello\",\"v\":[1,5],\"role\":\"manager\",\"name\":\"m\","
                   "\"software\":\"x\",\"heartbeat_ms\":1000,\"heartbeat_offer_ms\":\"3s\"}",
                   IOF_EPROTO, "hello.heartbeat_offer_ms: must be an integer in 100..60000");
}

/* 1.8: hello.heartbeat_sparse_ms and heartbeat_limit_ms come together,
 * the limit 2 to 3 periods; welcome.heartbeat_limit_ms needs its
 * heartbeat_ms and the same range. */
#define HELLO_18                                                                                   \
    "{\"type\":\"hello\",\"v\":[1,8],\"role\":\"manager\",\"name\":\"m\",\"software\":\"x\","      \
    "\"heartbeat_ms\":1000"
static void test_heartbeat_limit_fields(void **state)
{
    (void)state;
    struct proto_msg in, out;
    char *text;

    proto_msg_init_hello(&in, PROTO_ROLE_MANAGER, "m");
    text = encode_text(&in);
    assert_null(strstr(text, "heartbeat_limit_ms"));
    free(text);
    in.u.hello.heartbeat_sparse_ms = PROTO_HEARTBEAT_MS_SPARSE;
    in.u.hello.heartbeat_limit_ms = PROTO_HEARTBEAT_LIMIT_MS_SPARSE;
    text = encode_text(&in);
    assert_non_null(strstr(text, "\"heartbeat_sparse_ms\":4000,\"heartbeat_limit_ms\":9000"));
    free(text);
    round_trip(&in, &out);
    assert_int_equal(out.u.hello.heartbeat_sparse_ms, 4000);
    assert_int_equal(out.u.hello.heartbeat_limit_ms, 9000);
    proto_msg_clear(&out);

    expect_refused(HELLO_18 ",\"heartbeat_sparse_ms\":4000}", IOF_EPROTO,
                   "hello: heartbeat_limit_ms needs heartbeat_sparse_ms and the other way round");
    expect_refused(HELLO_18 ",\"heartbeat_limit_ms\":9000}", IOF_EPROTO,
                   "hello: heartbeat_limit_ms needs heartbeat_sparse_ms and the other way round");
    expect_refused(HELLO_18 ",\"heartbeat_sparse_ms\":4000,\"heartbeat_limit_ms\":13000}",
                   IOF_EPROTO,
                   "hello.heartbeat_limit_ms: 13000 ms, must be 2 to 3 heartbeat periods (8000 "
                   "to 12000 ms)");
    expect_refused(HELLO_18 ",\"heartbeat_sparse_ms\":4000,\"heartbeat_limit_ms\":7999}",
                   IOF_EPROTO,
                   "hello.heartbeat_limit_ms: 7999 ms, must be 2 to 3 heartbeat periods (8000 "
                   "to 12000 ms)");

    proto_msg_init(&in, PROTO_MSG_WELCOME);
    in.u.welcome.heartbeat_ms = 4000;
    in.u.welcome.heartbeat_limit_ms = 9000;
    round_trip(&in, &out);
    assert_int_equal(out.u.welcome.heartbeat_ms, 4000);
    assert_int_equal(out.u.welcome.heartbeat_limit_ms, 9000);
    proto_msg_clear(&out);
    in.u.welcome.heartbeat_limit_ms = 0;
    text = encode_text(&in);
    assert_null(strstr(text, "heartbeat_limit_ms"));
    free(text);
    expect_refused("{\"type\":\"welcome\",\"heartbeat_limit_ms\":9000}", IOF_EPROTO,
                   "welcome: heartbeat_limit_ms needs heartbeat_ms and the other way round");
    expect_refused("{\"type\":\"welcome\",\"heartbeat_ms\":1000,\"heartbeat_limit_ms\":9000}",
                   IOF_EPROTO,
                   "welcome.heartbeat_limit_ms: 9000 ms, must be 2 to 3 heartbeat periods (2000 "
                   "to 3000 ms)");
}

static void test_hello_manager_round_trip(void **state)
{
    (void)state;
    struct proto_msg in, out;
    proto_msg_init_hello(&in, PROTO_ROLE_MANAGER, "mgr.lab-1");
    round_trip(&in, &out);
    const struct proto_hello *h = &out.u.hello;
    assert_int_equal(h->role, PROTO_ROLE_MANAGER);
    assert_string_equal(h->name, "mgr.lab-1");
    assert_int_equal(h->major, PROTO_VERSION_MAJOR);
    assert_int_equal(h->minor, PROTO_VERSION_MINOR);
    assert_string_equal(h->software, IOF_VERSION);
    assert_int_equal(h->heartbeat_ms, PROTO_HEARTBEAT_MS_DEFAULT);
    assert_int_equal(h->inventory.ntargets, 0);
    assert_null(h->inventory.hostname);
    proto_msg_clear(&out);

    /* No inventory on the wire for a manager. */
    char *text = encode_text(&in);
    assert_null(strstr(text, "inventory"));
    free(text);
}

static void test_hello_agent_round_trip(void **state)
{
    (void)state;
    struct proto_target_info targets[] = {
        {.path = "/dev/sdb",
         .size = 1000204886016,
         .logical_block_size = 512,
         .rotational = 1,
         .model = "ST1000NM0033"},
        {.path = "/dev/disk/by-id/nvme-eui.0025388b",
         .size = UINT64_MAX, /* above 2^53: travels as a string */
         .logical_block_size = 4096,
         .rotational = 0,
         .model = "Disque \xc3\xa9volu\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x92\xbe"},
        {.path = "iofleet.dat", .size = 0, .logical_block_size = 65536, .rotational = -1},
    };
    struct proto_msg in, out;
    proto_msg_init_hello(&in, PROTO_ROLE_AGENT, "node_07");
    in.u.hello.heartbeat_ms = PROTO_HEARTBEAT_MS_MIN;
    in.u.hello.inventory = (struct proto_inventory){
        .hostname = "node07.example.com",
        .cpus = 64,
        .memory_bytes = (uint64_t)512 << 30,
        .kernel = "6.1.0-18-amd64",
        .ntargets = 3,
        .targets = targets,
        .has_budget = true,
        .budget = {.workers = 512, .buffer_mem = 1ull << 40, .aio_events = UINT64_MAX, .fds = 0},
    };
    round_trip(&in, &out);
    const struct proto_hello *h = &out.u.hello;
    assert_int_equal(h->role, PROTO_ROLE_AGENT);
    assert_string_equal(h->name, "node_07");
    assert_int_equal(h->heartbeat_ms, PROTO_HEARTBEAT_MS_MIN);
    assert_string_equal(h->inventory.hostname, "node07.example.com");
    assert_int_equal(h->inventory.cpus, 64);
    assert_int_equal(h->inventory.memory_bytes, (uint64_t)512 << 30);
    assert_string_equal(h->inventory.kernel, "6.1.0-18-amd64");
    assert_true(h->inventory.has_budget);
    assert_int_equal(h->inventory.budget.workers, 512);
    assert_true(h->inventory.budget.buffer_mem == 1ull << 40);
    assert_true(h->inventory.budget.aio_events == UINT64_MAX);
    assert_int_equal(h->inventory.budget.fds, 0);
    assert_int_equal(h->inventory.ntargets, 3);
    for (int i = 0; i < 3; i++) {
        const struct proto_target_info *a = &targets[i], *b = &h->inventory.targets[i];
        assert_string_equal(a->path, b->path);
        assert_true(a->size == b->size);
        assert_int_equal(a->logical_block_size, b->logical_block_size);
        assert_int_equal(a->rotational, b->rotational);
        if (a->model)
            assert_string_equal(a->model, b->model);
        else
            assert_null(b->model);
    }
    proto_msg_clear(&out);

    char *text = encode_text(&in);
    assert_non_null(strstr(text, "\"size\":\"18446744073709551615\""));
    assert_non_null(strstr(text, "\"budget\":{\"workers\":512,\"buffer_mem\":1099511627776,"
                                 "\"aio_events\":\"18446744073709551615\",\"fds\":0}"));
    assert_non_null(strstr(text, "\"size\":1000204886016"));
    assert_non_null(strstr(text, "\"rotational\":null,\"model\":null"));
    free(text);

    /* An agent with no targets (yet) is fine. */
    in.u.hello.inventory.ntargets = 0;
    in.u.hello.inventory.targets = NULL;
    round_trip(&in, &out);
    assert_int_equal(out.u.hello.inventory.ntargets, 0);
    assert_null(out.u.hello.inventory.targets);
    proto_msg_clear(&out);
}

/* The storage details of an inventory (`iofleet agents`): every field
 * travels; a hello without them (an older agent) reads as unknown. */
static void test_hello_inventory_details(void **state)
{
    (void)state;
    struct proto_target_info targets[] = {
        {.path = "/dev/nvme0n1",
         .size = 2000398934016,
         .logical_block_size = 512,
         .rotational = 0,
         .kind = "block",
         .physical_block_size = 4096,
         .device = "nvme0n1",
         .mountpoint = "/srv/data dir",
         .signature = "gpt",
         .in_use = 1,
         .ram_backed = 0},
        {.path = "/srv/iofleet",
         .logical_block_size = 512,
         .rotational = -1,
         .kind = "directory",
         .in_use = -1,
         .ram_backed = 1},
    };
    struct proto_msg in, out;
    proto_msg_init_hello(&in, PROTO_ROLE_AGENT, "node_07");
    in.u.hello.inventory = (struct proto_inventory){
        .hostname = "node07",
        .cpus = 4,
        .kernel = "6.1.0",
        .ntargets = 2,
        .targets = targets,
        .workdir = {.path = "/var/lib/iofleet",
                    .fstype = "xfs",
                    .device = "sda3",
                    .size = 1ull << 40,
                    .free = 3ull << 30,
                    .ram_backed = 0},
    };
    round_trip(&in, &out);
    const struct proto_inventory *inv = &out.u.hello.inventory;
    const struct proto_target_info *t = inv->targets;
    assert_string_equal(t[0].kind, "block");
    assert_int_equal(t[0].physical_block_size, 4096);
    assert_string_equal(t[0].device, "nvme0n1");
    assert_string_equal(t[0].mountpoint, "/srv/data dir");
    assert_string_equal(t[0].signature, "gpt");
    assert_int_equal(t[0].in_use, 1);
    assert_int_equal(t[0].ram_backed, 0);
    assert_string_equal(t[1].kind, "directory");
    assert_int_equal(t[1].physical_block_size, 0);
    assert_null(t[1].device);
    assert_null(t[1].mountpoint);
    assert_null(t[1].signature);
    assert_int_equal(t[1].in_use, -1);
    assert_int_equal(t[1].ram_backed, 1);
    assert_string_equal(inv->workdir.path, "/var/lib/iofleet");
    assert_string_equal(inv->workdir.fstype, "xfs");
    assert_string_equal(inv->workdir.device, "sda3");
    assert_true(inv->workdir.size == 1ull << 40 && inv->workdir.free == 3ull << 30);
    assert_int_equal(inv->workdir.ram_backed, 0);

    /* A deep copy keeps every string. */
    struct proto_hello copy;
    assert_int_equal(proto_hello_copy(&copy, &out.u.hello), 0);
    proto_msg_clear(&out);
    assert_string_equal(copy.inventory.targets[0].mountpoint, "/srv/data dir");
    assert_string_equal(copy.inventory.workdir.fstype, "xfs");

    /* `iofleet agents --json`: the endpoint, and the hello without "type". */
    char *json = proto_agent_report_json("unix:/run/dynamo.sock", &copy, NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "{\"endpoint\":\"unix:/run/dynamo.sock\",\"reachable\":true,"
                                 "\"hello\":{\"v\":[1,"));
    assert_non_null(strstr(json, "\"workdir\":{\"path\":\"/var/lib/iofleet\",\"fstype\":\"xfs\""));
    assert_null(strstr(json, "\"type\""));
    free(json);
    proto_hello_free(&copy);
    json = proto_agent_report_json("10.0.0.1:7066", NULL, "10.0.0.1:7066: connection \"refused\"");
    assert_string_equal(json, "{\"endpoint\":\"10.0.0.1:7066\",\"reachable\":false,"
                              "\"error\":\"10.0.0.1:7066: connection \\\"refused\\\"\"}");
    free(json);

    /* An older agent's hello: all unknown. */
    struct iof_diag d = {{0}};
    assert_int_equal(decode_str(AGENT_HELLO, &out, &d), 0);
    inv = &out.u.hello.inventory;
    for (size_t i = 0; i < inv->ntargets; i++) {
        assert_null(inv->targets[i].kind);
        assert_int_equal(inv->targets[i].physical_block_size, 0);
        assert_int_equal(inv->targets[i].in_use, -1);
        assert_int_equal(inv->targets[i].ram_backed, -1);
    }
    assert_null(inv->workdir.path);
    assert_int_equal(inv->workdir.ram_backed, -1);
    proto_msg_clear(&out);

    /* A physical block size that is no block size is refused, naming it. */
    targets[0].physical_block_size = 3000;
    char *text = NULL;
    size_t len;
    in.u.hello.inventory.ntargets = 1;
    assert_int_not_equal(proto_msg_encode(&in, &text, &len, &d), 0);
    assert_null(text);
    assert_non_null(strstr(d.msg, "hello.inventory.targets[0].physical_block_size"));
}

static void test_small_messages_round_trip(void **state)
{
    (void)state;
    struct proto_msg in, out;
    const uint64_t values[] = {0, 1, JSON_INT_MAX, JSON_INT_MAX + 1, UINT64_MAX};

    proto_msg_init(&in, PROTO_MSG_WELCOME);
    round_trip(&in, &out);
    proto_msg_clear(&out);

    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        uint64_t v = values[i], w = values[(i + 1) % 5];

        proto_msg_init(&in, PROTO_MSG_HEARTBEAT);
        in.u.heartbeat = (struct proto_heartbeat){.seq = v, .sent_ns = w};
        round_trip(&in, &out);
        assert_true(out.u.heartbeat.seq == v && out.u.heartbeat.sent_ns == w);
        proto_msg_clear(&out);

        proto_msg_init(&in, PROTO_MSG_CLOCK_PROBE);
        in.u.clock_probe = (struct proto_clock_probe){.seq = w, .t0_ns = v};
        round_trip(&in, &out);
        assert_true(out.u.clock_probe.seq == w && out.u.clock_probe.t0_ns == v);
        proto_msg_clear(&out);

        proto_msg_init(&in, PROTO_MSG_CLOCK_REPLY);
        in.u.clock_reply = (struct proto_clock_reply){.seq = i, .t0_ns = v, .agent_ns = w};
        round_trip(&in, &out);
        assert_true(out.u.clock_reply.seq == i && out.u.clock_reply.t0_ns == v &&
                    out.u.clock_reply.agent_ns == w);
        proto_msg_clear(&out);

        proto_msg_init(&in, PROTO_MSG_START);
        in.u.start =
            (struct proto_start){.test = (uint32_t)(i ? UINT32_MAX / i : 0), .start_at_ns = v};
        round_trip(&in, &out);
        assert_int_equal(out.u.start.test, in.u.start.test);
        assert_true(out.u.start.start_at_ns == v);
        proto_msg_clear(&out);

        proto_msg_init(&in, PROTO_MSG_SETUP);
        in.u.setup = (struct proto_start){.test = (uint32_t)(i ? UINT32_MAX / i : 0)};
        round_trip(&in, &out);
        assert_int_equal(out.u.setup.test, in.u.setup.test);
        proto_msg_clear(&out);

        proto_msg_init(&in, PROTO_MSG_READY);
        in.u.ready.test = (uint32_t)(i ? UINT32_MAX / i : 0);
        round_trip(&in, &out);
        assert_int_equal(out.u.ready.test, in.u.ready.test);
        proto_msg_clear(&out);
    }

    proto_msg_init(&in, PROTO_MSG_ERROR);
    in.u.error = (struct proto_error){.code = IOF_EBUSY,
                                      .message = "busy with manager mgr-a since 12:00:01"};
    round_trip(&in, &out);
    assert_int_equal(out.u.error.code, IOF_EBUSY);
    assert_string_equal(out.u.error.code_name, "IOF_EBUSY");
    assert_string_equal(out.u.error.message, "busy with manager mgr-a since 12:00:01");
    proto_msg_clear(&out);

    in.u.error = (struct proto_error){.code = -ENOENT, .message = "/dev/sdz: no such device"};
    round_trip(&in, &out);
    assert_int_equal(out.u.error.code, -ENOENT);
    assert_string_equal(out.u.error.code_name, "ENOENT");
    proto_msg_clear(&out);

    proto_msg_init(&in, PROTO_MSG_BYE);
    in.u.bye.reason = "run complete";
    round_trip(&in, &out);
    assert_string_equal(out.u.bye.reason, "run complete");
    proto_msg_clear(&out);

    proto_msg_init(&in, PROTO_MSG_STOP);
    in.u.stop.reason = "interrupted by the user (SIGINT)";
    round_trip(&in, &out);
    assert_string_equal(out.u.stop.reason, "interrupted by the user (SIGINT)");
    proto_msg_clear(&out);
}

/* Numbers stay numbers while a double holds them exactly; above, strings.
 * Both forms decode, and nothing inexact is accepted. */
static void test_u64_forms(void **state)
{
    (void)state;
    struct proto_msg m;
    proto_msg_init(&m, PROTO_MSG_HEARTBEAT);
    m.u.heartbeat.seq = JSON_INT_MAX;
    m.u.heartbeat.sent_ns = JSON_INT_MAX + 1;
    char *text = encode_text(&m);
    assert_string_equal(text, "{\"type\":\"heartbeat\",\"seq\":9007199254740991,"
                              "\"sent_ns\":\"9007199254740992\"}");
    free(text);

    struct {
        const char *seq;
        uint64_t want;
    } ok[] = {
        {"0", 0},
        {"1e3", 1000},
        {"9007199254740991", JSON_INT_MAX},
        {"\"9007199254740993\"", JSON_INT_MAX + 2},
        {"\"18446744073709551615\"", UINT64_MAX},
        {"\"0\"", 0},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char json[128];
        snprintf(json, sizeof(json), "{\"type\":\"heartbeat\",\"seq\":%s,\"sent_ns\":5}",
                 ok[i].seq);
        struct iof_diag d = {{0}};
        if (decode_str(json, &m, &d))
            fail_msg("%s: %s", json, d.msg);
        assert_true(m.u.heartbeat.seq == ok[i].want);
        proto_msg_clear(&m);
    }

    const char *bad[] = {
        "9007199254740992", /* 2^53: a double cannot tell it from 2^53+1 */
        "1e300",
        "-1",
        "1.5",
        "true",
        "null",
        "[1]",
        "\"\"",
        "\"-1\"",
        "\"+1\"",
        "\" 1\"",
        "\"1 \"",
        "\"0x10\"",
        "\"18446744073709551616\"",
        "\"000000000000000000001\"",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char json[128];
        snprintf(json, sizeof(json), "{\"type\":\"heartbeat\",\"seq\":%s,\"sent_ns\":5}", bad[i]);
        expect_refused(json, IOF_EPROTO, "heartbeat.seq: must be a non-negative integer");
    }
}

/* ---- forward compatibility --------------------------------------------- */

static void test_unknown_fields_ignored(void **state)
{
    (void)state;
    struct proto_msg m;
    struct iof_diag d = {{0}};
    /* A 1.9 peer with fields this build has never heard of, at every level. */
    const char *json =
        "{\"type\":\"hello\",\"v\":[1,9],\"role\":\"agent\",\"name\":\"n1\",\"software\":\"9.9\","
        "\"heartbeat_ms\":500,\"compression\":[\"zstd\"],\"features\":{\"x\":{\"y\":[null]}},"
        "\"inventory\":{\"hostname\":\"h\",\"cpus\":1,\"memory_bytes\":1,\"kernel\":\"k\","
        "\"numa_nodes\":2,\"targets\":[{\"path\":\"/dev/sda\",\"size\":1,"
        "\"logical_block_size\":512,\"serial\":\"S123\",\"zoned\":true}]}}";
    if (decode_str(json, &m, &d))
        fail_msg("%s", d.msg);
    assert_int_equal(m.u.hello.minor, 9);
    assert_int_equal(m.u.hello.inventory.ntargets, 1);
    assert_int_equal(m.u.hello.inventory.targets[0].rotational, -1); /* absent = unknown */
    assert_null(m.u.hello.inventory.targets[0].model);
    proto_msg_clear(&m);

    /* A manager's hello with an inventory: ignored, not validated. */
    assert_int_equal(decode_str("{\"type\":\"hello\",\"v\":[1,0],\"role\":\"manager\","
                                "\"name\":\"m\",\"software\":\"x\",\"heartbeat_ms\":1000,"
                                "\"inventory\":42}",
                                &m, &d),
                     0);
    proto_msg_clear(&m);

    /* "v" outside hello is just another unknown field. */
    assert_int_equal(decode_str("{\"v\":[7,7],\"reason\":\"x\",\"type\":\"bye\",\"t\":1}", &m, &d),
                     0);
    assert_string_equal(m.u.bye.reason, "x");
    proto_msg_clear(&m);

    assert_int_equal(decode_str(" {\"type\":\"welcome\",\"session\":\"abc\"} \r\n", &m, &d), 0);
    assert_int_equal(m.type, PROTO_MSG_WELCOME);
    proto_msg_clear(&m);
}

/* ---- the envelope ------------------------------------------------------ */

static void test_envelope_refused(void **state)
{
    (void)state;
    expect_refused("{\"type\":\"frobnicate\"}", IOF_EPROTO, "unknown message type \"frobnicate\"");
    expect_refused("{\"type\":\"HELLO\"}", IOF_EPROTO, "unknown message type \"HELLO\"");
    expect_refused("{\"type\":\"a\\nb\\u0001xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
                   IOF_EPROTO, "unknown message type \"a?b?xxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
    expect_refused("{}", IOF_EPROTO, "type: required field missing");
    expect_refused("{\"type\":7}", IOF_EPROTO, "type: must be a string");
    expect_refused("[{\"type\":\"bye\"}]", IOF_EPROTO, "message is not a JSON object");
    expect_refused("\"bye\"", IOF_EPROTO, "message is not a JSON object");
    expect_refused("{\"type\":\"bye\",\"reason\":\"x\"", IOF_EPROTO,
                   "message is not valid JSON (error at byte 25 of 26)");
    expect_refused("{\"type\":\"bye\",\"reason\":\"x\"}{}", IOF_EPROTO,
                   "message has data after the JSON value (byte 27 of 29)");
    expect_refused("", IOF_EPROTO, "message is empty");
    expect_refused("{\"type\":\"plan\",\"tests\":[]}", IOF_EPROTO,
                   "plan.plan: required field missing");

    struct proto_msg m;
    struct iof_diag d = {{0}};
    const char nul[] = "{\"type\":\"bye\",\"reason\":\"a\0b\"}";
    assert_int_equal(proto_msg_decode(nul, sizeof(nul) - 1, &m, &d), IOF_EPROTO);
    assert_string_equal(d.msg, "message contains a NUL byte (byte 25 of 29)");
    proto_msg_clear(&m);

    expect_refused("{\"type\":\"bye\",\"reason\":\"a\\u0000b\"}", IOF_EPROTO,
                   "message contains a \\u0000 escape (byte 25 of 34)");
    /* An escaped backslash followed by "u0000" is plain text. */
    assert_int_equal(decode_str("{\"type\":\"bye\",\"reason\":\"a\\\\u0000b\"}", &m, &d), 0);
    assert_string_equal(m.u.bye.reason, "a\\u0000b");
    proto_msg_clear(&m);
}

/* ---- every required field ---------------------------------------------- */

/* Deletes the field at a dotted path ("inventory.targets.2.size") from the
 * JSON text; returns new text (free()). */
static char *json_without(const char *json, const char *dotted)
{
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    char path[128];
    snprintf(path, sizeof(path), "%s", dotted);
    cJSON *parent = root;
    char *key = path, *dot;
    while ((dot = strchr(key, '.'))) {
        *dot = '\0';
        parent = cJSON_IsArray(parent) ? cJSON_GetArrayItem(parent, atoi(key))
                                       : cJSON_GetObjectItemCaseSensitive(parent, key);
        assert_non_null(parent);
        key = dot + 1;
    }
    assert_non_null(cJSON_GetObjectItemCaseSensitive(parent, key));
    cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static void test_required_fields(void **state)
{
    (void)state;
    static const char *const HEARTBEAT = "{\"type\":\"heartbeat\",\"seq\":1,\"sent_ns\":2}";
    static const char *const ERROR =
        "{\"type\":\"error\",\"code\":\"IOF_EBUSY\",\"message\":\"busy\"}";
    static const char *const BYE = "{\"type\":\"bye\",\"reason\":\"done\"}";
    static const char *const PROBE = "{\"type\":\"clock_probe\",\"seq\":1,\"t0_ns\":2}";
    static const char *const REPLY =
        "{\"type\":\"clock_reply\",\"seq\":1,\"t0_ns\":2,\"agent_ns\":3}";
    static const char *const START = "{\"type\":\"start\",\"test\":0,\"start_at_ns\":5}";
    static const char *const STOP = "{\"type\":\"stop\",\"reason\":\"abort\"}";
    const struct {
        const char *json;
        const char *field;
        const char *want;
    } cases[] = {
        {AGENT_HELLO, "v", "hello.v: required field missing"},
        {AGENT_HELLO, "role", "hello.role: required field missing"},
        {AGENT_HELLO, "name", "hello.name: required field missing"},
        {AGENT_HELLO, "software", "hello.software: required field missing"},
        {AGENT_HELLO, "heartbeat_ms", "hello.heartbeat_ms: required field missing"},
        {AGENT_HELLO, "inventory", "hello.inventory: required field missing"},
        {AGENT_HELLO, "inventory.hostname", "hello.inventory.hostname: required field missing"},
        {AGENT_HELLO, "inventory.cpus", "hello.inventory.cpus: required field missing"},
        {AGENT_HELLO, "inventory.memory_bytes",
         "hello.inventory.memory_bytes: required field missing"},
        {AGENT_HELLO, "inventory.kernel", "hello.inventory.kernel: required field missing"},
        {AGENT_HELLO, "inventory.targets", "hello.inventory.targets: required field missing"},
        {AGENT_HELLO, "inventory.targets.2.path",
         "hello.inventory.targets[2].path: required field missing"},
        {AGENT_HELLO, "inventory.targets.2.size",
         "hello.inventory.targets[2].size: required field missing"},
        {AGENT_HELLO, "inventory.targets.1.logical_block_size",
         "hello.inventory.targets[1].logical_block_size: required field missing"},
        {HEARTBEAT, "seq", "heartbeat.seq: required field missing"},
        {HEARTBEAT, "sent_ns", "heartbeat.sent_ns: required field missing"},
        {ERROR, "code", "error.code: required field missing"},
        {ERROR, "message", "error.message: required field missing"},
        {BYE, "reason", "bye.reason: required field missing"},
        {PROBE, "seq", "clock_probe.seq: required field missing"},
        {PROBE, "t0_ns", "clock_probe.t0_ns: required field missing"},
        {REPLY, "seq", "clock_reply.seq: required field missing"},
        {REPLY, "t0_ns", "clock_reply.t0_ns: required field missing"},
        {REPLY, "agent_ns", "clock_reply.agent_ns: required field missing"},
        {START, "test", "start.test: required field missing"},
        {START, "start_at_ns", "start.start_at_ns: required field missing"},
        {STOP, "reason", "stop.reason: required field missing"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct proto_msg m;
        struct iof_diag d = {{0}};
        /* The intact message decodes... */
        if (decode_str(cases[i].json, &m, &d))
            fail_msg("%s: %s", cases[i].json, d.msg);
        proto_msg_clear(&m);
        /* ...and without the field it is refused, naming the field. */
        char *text = json_without(cases[i].json, cases[i].field);
        expect_refused(text, IOF_EPROTO, cases[i].want);
        free(text);
    }

    /* rotational and model are optional: absent means unknown. */
    char *text = json_without(AGENT_HELLO, "inventory.targets.0.rotational");
    char *text2 = json_without(text, "inventory.targets.0.model");
    struct proto_msg m;
    assert_int_equal(decode_str(text2, &m, NULL), 0);
    assert_int_equal(m.u.hello.inventory.targets[0].rotational, -1);
    assert_null(m.u.hello.inventory.targets[0].model);
    assert_int_equal(m.u.hello.inventory.targets[1].rotational, 0);
    proto_msg_clear(&m);
    free(text);
    free(text2);
}

/* ---- wrong types and values -------------------------------------------- */

/* AGENT_HELLO with its first occurrence of `from` replaced by `to`. */
static char *hello_with(const char *from, const char *to)
{
    const char *at = strstr(AGENT_HELLO, from);
    assert_non_null(at);
    size_t head = (size_t)(at - AGENT_HELLO);
    char *s = test_malloc(strlen(AGENT_HELLO) + strlen(to) + 1);
    memcpy(s, AGENT_HELLO, head);
    strcpy(s + head, to);
    strcat(s, at + strlen(from));
    return s;
}

static void test_wrong_values(void **state)
{
    (void)state;
    const char *T2 = "{\"path\":\"/srv/iofleet\",\"size\":0,";
    const struct {
        const char *from, *to, *want;
    } hello_cases[] = {
        {"\"v\":[1,0]", "\"v\":\"1.0\"", "hello.v: must be [major, minor] with integers 0..65535"},
        {"\"v\":[1,0]", "\"v\":[1]", "hello.v: must be [major, minor] with integers 0..65535"},
        {"\"v\":[1,0]", "\"v\":[1,0,0]", "hello.v: must be [major, minor] with integers 0..65535"},
        {"\"v\":[1,0]", "\"v\":[1,-1]", "hello.v: must be [major, minor] with integers 0..65535"},
        {"\"v\":[1,0]", "\"v\":[1,65536]",
         "hello.v: must be [major, minor] with integers 0..65535"},
        {"\"v\":[1,0]", "\"v\":[\"1\",0]",
         "hello.v: must be [major, minor] with integers 0..65535"},
        {"\"agent\"", "\"boss\"", "hello.role: must be \"manager\" or \"agent\""},
        {"\"agent\"", "1", "hello.role: must be \"manager\" or \"agent\""},
        {"\"node-1\"", "5", "hello.name: must be a string"},
        {"\"node-1\"", "\"\"", "hello.name: must not be empty"},
        {"\"node-1\"", "\"node 1\"",
         "hello.name: byte 4 (0x20) is not allowed: use ASCII letters, digits, '.', '_' and '-'"},
        {"\"node-1\"", "\"n\\u00e9\"",
         "hello.name: byte 1 (0xc3) is not allowed: use ASCII letters, digits, '.', '_' and '-'"},
        {"\"node-1\"", "\"../../etc\"",
         "hello.name: byte 2 (0x2f) is not allowed: use ASCII letters, digits, '.', '_' and '-'"},
        {"\"0.1.0\"", "null", "hello.software: must be a string"},
        {"1000", "50", "hello.heartbeat_ms: must be 100..60000, got 50"},
        {"1000", "60001", "hello.heartbeat_ms: must be 100..60000, got 60001"},
        {"1000", "\"fast\"", "hello.heartbeat_ms: must be an integer in 100..60000"},
        {"\"inventory\":{", "\"inventory\":[],\"x\":{", "hello.inventory: must be an object"},
        {"\"cpus\":16", "\"cpus\":0", "hello.inventory.cpus: must be 1..65536, got 0"},
        {"\"cpus\":16", "\"cpus\":1.5", "hello.inventory.cpus: must be an integer in 1..65536"},
        {"68719476736", "-1", "hello.inventory.memory_bytes: must be a non-negative integer"},
        {"\"targets\":[", "\"budget\":[],\"targets\":[",
         "hello.inventory.budget: must be an object"},
        {"\"targets\":[",
         "\"budget\":{\"workers\":-1,\"buffer_mem\":1,\"aio_events\":1,\"fds\":1},\"targets\":[",
         "hello.inventory.budget.workers: must be a non-negative integer"},
        {"\"targets\":[",
         "\"budget\":{\"workers\":1,\"buffer_mem\":1,\"aio_events\":1},\"targets\":[",
         "hello.inventory.budget.fds: required field missing"},
        {"\"6.1.0-18-amd64\"", "\"6.1\\t0\"",
         "hello.inventory.kernel: contains a control character (byte 3)"},
        {"\"targets\":[", "\"targets\":{},\"x\":[", "hello.inventory.targets: must be an array"},
        {"\"targets\":[", "\"targets\":[7,", "hello.inventory.targets[0]: must be an object"},
        {"\"/dev/sdb\"", "[\"/dev/sdb\"]", "hello.inventory.targets[0].path: must be a string"},
        {"\"/dev/sdb\"", "\"/dev/\\u001b[31m\"",
         "hello.inventory.targets[0].path: contains a control character (byte 5)"},
        {T2, "{\"path\":\"/srv/iofleet\",\"size\":-5,",
         "hello.inventory.targets[2].size: must be a non-negative integer"},
        {T2, "{\"path\":\"/srv/iofleet\",\"size\":\"abc\",",
         "hello.inventory.targets[2].size: must be a non-negative integer"},
        {T2, "{\"path\":\"/srv/iofleet\",\"size\":0.5,",
         "hello.inventory.targets[2].size: must be a non-negative integer"},
        {T2, "{\"path\":\"/srv/iofleet\",\"size\":true,",
         "hello.inventory.targets[2].size: must be a non-negative integer"},
        {"\"logical_block_size\":4096", "\"logical_block_size\":1000",
         "hello.inventory.targets[1].logical_block_size: must be a power of two in 512..65536, "
         "got 1000"},
        {"\"logical_block_size\":4096", "\"logical_block_size\":131072",
         "hello.inventory.targets[1].logical_block_size: must be a power of two in 512..65536, "
         "got 131072"},
        {"\"rotational\":true", "\"rotational\":\"yes\"",
         "hello.inventory.targets[0].rotational: must be true, false or null"},
        {"\"rotational\":true", "\"rotational\":1",
         "hello.inventory.targets[0].rotational: must be true, false or null"},
        {"\"ST1000NM0033\"", "42", "hello.inventory.targets[0].model: must be a string or null"},
        {"\"ST1000NM0033\"", "\"ST\xff\"",
         "hello.inventory.targets[0].model: not valid UTF-8 (byte 2)"},
        {"\"ST1000NM0033\"", "\"\xed\xa0\x80\"",
         "hello.inventory.targets[0].model: not valid UTF-8 (byte 0)"},
        {"\"ST1000NM0033\"", "\"\xc0\xaf\"",
         "hello.inventory.targets[0].model: not valid UTF-8 (byte 0)"},
        /* 3- and 4-byte overlongs, above U+10FFFF, a lone continuation, a cut end */
        {"\"ST1000NM0033\"", "\"\xe0\x80\xaf\"",
         "hello.inventory.targets[0].model: not valid UTF-8 (byte 0)"},
        {"\"ST1000NM0033\"", "\"\xf0\x8f\xbf\xbf\"",
         "hello.inventory.targets[0].model: not valid UTF-8 (byte 0)"},
        {"\"ST1000NM0033\"", "\"\xf4\x90\x80\x80\"",
         "hello.inventory.targets[0].model: not valid UTF-8 (byte 0)"},
        {"\"ST1000NM0033\"", "\"ST\x80\"",
         "hello.inventory.targets[0].model: not valid UTF-8 (byte 2)"},
        {"\"ST1000NM0033\"", "\"ST\xe6\x97\"",
         "hello.inventory.targets[0].model: not valid UTF-8 (byte 2)"},
        {"\"ST1000NM0033\"",
         "\"ST\xc2\x9b"
         "2J\"",
         "hello.inventory.targets[0].model: contains \\u009b (a C1 control character) at byte "
         "2"},
        {"\"6.1.0-18-amd64\"",
         "\"6.1\xe2\x80\xae"
         "x\"",
         "hello.inventory.kernel: contains \\u202e (a bidirectional control character) at byte "
         "3"},
    };
    for (size_t i = 0; i < sizeof(hello_cases) / sizeof(hello_cases[0]); i++) {
        char *json = hello_with(hello_cases[i].from, hello_cases[i].to);
        expect_refused(json, IOF_EPROTO, hello_cases[i].want);
        test_free(json);
    }

    expect_refused("{\"type\":\"error\",\"code\":\"iof_ebusy\",\"message\":\"x\"}", IOF_EPROTO,
                   "error.code: must be an error code name like IOF_EBUSY");
    expect_refused("{\"type\":\"error\",\"code\":\"IOF_EBUSY\",\"message\":\"\"}", IOF_EPROTO,
                   "error.message: must not be empty");
    expect_refused("{\"type\":\"bye\",\"reason\":\"line1\\nline2\"}", IOF_EPROTO,
                   "bye.reason: contains a control character (byte 5)");
    expect_refused("{\"type\":\"stop\",\"reason\":{}}", IOF_EPROTO,
                   "stop.reason: must be a string");
    expect_refused("{\"type\":\"start\",\"test\":4294967296,\"start_at_ns\":1}", IOF_EPROTO,
                   "start.test: must be 0..4294967295, got 4294967296");
    expect_refused("{\"type\":\"start\",\"test\":-1,\"start_at_ns\":1}", IOF_EPROTO,
                   "start.test: must be an integer in 0..4294967295");
    expect_refused("{\"type\":\"clock_reply\",\"seq\":1,\"t0_ns\":2,\"agent_ns\":\"12a\"}",
                   IOF_EPROTO, "clock_reply.agent_ns: must be a non-negative integer");
}

static void test_length_caps(void **state)
{
    (void)state;
    struct proto_msg m;
    struct iof_diag d = {{0}};
    char *s, *json;

    /* name: 255 bytes fit, 256 do not. */
    for (size_t n = PROTO_NAME_MAX; n <= PROTO_NAME_MAX + 1; n++) {
        s = repeat('n', n);
        json = test_malloc(n + 200);
        sprintf(json,
                "{\"type\":\"hello\",\"v\":[1,0],\"role\":\"manager\",\"name\":\"%s\","
                "\"software\":\"x\",\"heartbeat_ms\":1000}",
                s);
        int rc = decode_str(json, &m, &d);
        assert_int_equal(rc, n == PROTO_NAME_MAX ? 0 : IOF_EPROTO);
        if (rc)
            assert_string_equal(d.msg, "hello.name: longer than 255 bytes");
        proto_msg_clear(&m);
        test_free(json);
        test_free(s);
    }

    /* reason: 1023 / 1024. */
    for (size_t n = PROTO_TEXT_MAX; n <= PROTO_TEXT_MAX + 1; n++) {
        s = repeat('r', n);
        json = test_malloc(n + 64);
        sprintf(json, "{\"type\":\"bye\",\"reason\":\"%s\"}", s);
        int rc = decode_str(json, &m, &d);
        assert_int_equal(rc, n == PROTO_TEXT_MAX ? 0 : IOF_EPROTO);
        if (rc)
            assert_string_equal(d.msg, "bye.reason: longer than 1023 bytes");
        proto_msg_clear(&m);
        test_free(json);
        test_free(s);
    }

    /* path: 4095 / 4096, on the encode side too. */
    struct proto_target_info t = {.size = 1, .logical_block_size = 512, .rotational = -1};
    proto_msg_init_hello(&m, PROTO_ROLE_AGENT, "a");
    m.u.hello.inventory = (struct proto_inventory){
        .hostname = "h", .cpus = 1, .kernel = "k", .ntargets = 1, .targets = &t};
    for (size_t n = PROTO_PATH_MAX; n <= PROTO_PATH_MAX + 1; n++) {
        s = repeat('p', n);
        t.path = s;
        char *text;
        size_t len;
        int rc = proto_msg_encode(&m, &text, &len, &d);
        assert_int_equal(rc, n == PROTO_PATH_MAX ? 0 : -EINVAL);
        if (rc) {
            assert_string_equal(d.msg, "hello.inventory.targets[0].path: longer than 4095 bytes");
        } else {
            struct proto_msg out;
            assert_int_equal(proto_msg_decode(text, len, &out, &d), 0);
            assert_int_equal(strlen(out.u.hello.inventory.targets[0].path), n);
            proto_msg_clear(&out);
            free(text);
        }
        test_free(s);
    }
}

static void test_target_count_cap(void **state)
{
    (void)state;
    for (size_t n = PROTO_TARGETS_MAX; n <= PROTO_TARGETS_MAX + 1; n++) {
        size_t cap = 300 + n * 64;
        char *json = test_malloc(cap);
        size_t len = (size_t)sprintf(json, "{\"type\":\"hello\",\"v\":[1,0],\"role\":\"agent\","
                                           "\"name\":\"a\",\"software\":\"x\",\"heartbeat_ms\":"
                                           "1000,\"inventory\":{\"hostname\":\"h\",\"cpus\":1,"
                                           "\"memory_bytes\":1,\"kernel\":\"k\",\"targets\":[");
        for (size_t i = 0; i < n; i++)
            len += (size_t)sprintf(json + len,
                                   "%s{\"path\":\"/d/%zu\",\"size\":1,\"logical_block_size\":512}",
                                   i ? "," : "", i);
        strcpy(json + len, "]}}");
        struct proto_msg m;
        struct iof_diag d = {{0}};
        int rc = decode_str(json, &m, &d);
        if (n == PROTO_TARGETS_MAX) {
            assert_int_equal(rc, 0);
            assert_int_equal(m.u.hello.inventory.ntargets, n);
            assert_string_equal(m.u.hello.inventory.targets[n - 1].path, "/d/255");
        } else {
            assert_int_equal(rc, IOF_EPROTO);
            assert_string_equal(d.msg, "hello.inventory.targets: 257 targets, at most 256 allowed");
        }
        proto_msg_clear(&m);
        test_free(json);
    }
}

/* ---- versions ---------------------------------------------------------- */

static void test_version_compatible(void **state)
{
    (void)state;
    struct iof_diag d = {{0}};
    char want[256];
    assert_int_equal(proto_version_compatible(PROTO_VERSION_MAJOR, PROTO_VERSION_MINOR, &d), 0);
    assert_int_equal(proto_version_compatible(PROTO_VERSION_MAJOR, PROTO_VERSION_MINOR + 7, &d), 0);
    assert_int_equal(proto_version_compatible(PROTO_VERSION_MAJOR, 0, NULL), 0);

    assert_int_equal(proto_version_compatible(PROTO_VERSION_MAJOR + 1, 0, &d), IOF_EVERSION);
    snprintf(want, sizeof(want),
             "protocol %d.0 is not compatible with this build's %d.%d (the peer is newer: "
             "upgrade this side)",
             PROTO_VERSION_MAJOR + 1, PROTO_VERSION_MAJOR, PROTO_VERSION_MINOR);
    assert_string_equal(d.msg, want);

    assert_int_equal(proto_version_compatible(PROTO_VERSION_MAJOR - 1, 9, &d), IOF_EVERSION);
    snprintf(want, sizeof(want),
             "protocol %d.9 is not compatible with this build's %d.%d (the peer is older: "
             "upgrade it)",
             PROTO_VERSION_MAJOR - 1, PROTO_VERSION_MAJOR, PROTO_VERSION_MINOR);
    assert_string_equal(d.msg, want);
}

static void test_hello_version_negotiation(void **state)
{
    (void)state;
    struct proto_msg m;
    struct iof_diag d = {{0}};

    /* Same major, any minor: accepted, the peer's minor reported. */
    char *json = hello_with("\"v\":[1,0]", "\"v\":[1,42]");
    assert_int_equal(decode_str(json, &m, &d), 0);
    assert_int_equal(m.u.hello.major, 1);
    assert_int_equal(m.u.hello.minor, 42);
    proto_msg_clear(&m);
    test_free(json);

    /* Another major: IOF_EVERSION with both versions, even though the rest of
     * this 2.x hello looks nothing like ours; role and name are kept. */
    assert_int_equal(decode_str("{\"type\":\"hello\",\"v\":[2,3],\"role\":\"agent\","
                                "\"name\":\"node-9\",\"caps\":{\"hb\":1}}",
                                &m, &d),
                     IOF_EVERSION);
    assert_non_null(strstr(d.msg, "protocol 2.3 is not compatible with this build's 1.8"));
    assert_int_equal(m.type, PROTO_MSG_HELLO);
    assert_int_equal(m.u.hello.major, 2);
    assert_int_equal(m.u.hello.minor, 3);
    assert_int_equal(m.u.hello.role, PROTO_ROLE_AGENT);
    assert_string_equal(m.u.hello.name, "node-9");
    proto_msg_clear(&m);

    /* ...and when even those are unreadable, the version error still wins. */
    assert_int_equal(decode_str("{\"type\":\"hello\",\"v\":[0,1],\"name\":\"bad name\"}", &m, &d),
                     IOF_EVERSION);
    assert_non_null(strstr(d.msg, "protocol 0.1 is not compatible with this build's 1.8"));
    assert_null(m.u.hello.name);
    assert_int_equal(m.u.hello.role, 0);
    proto_msg_clear(&m);

    /* Encoding a hello from another version (a simulated peer) works. */
    proto_msg_init_hello(&m, PROTO_ROLE_MANAGER, "m");
    m.u.hello.major = 3;
    m.u.hello.minor = 1;
    char *text;
    size_t len;
    assert_int_equal(proto_msg_encode(&m, &text, &len, &d), 0);
    assert_non_null(strstr(text, "\"v\":[3,1]"));
    struct proto_msg out;
    assert_int_equal(proto_msg_decode(text, len, &out, &d), IOF_EVERSION);
    proto_msg_clear(&out);
    free(text);
}

/* ---- error codes ------------------------------------------------------- */

static void test_error_codes(void **state)
{
    (void)state;
    const struct {
        const char *name;
        int code;
    } cases[] = {
        {"IOF_EBUSY", IOF_EBUSY},
        {"IOF_EVERSION", IOF_EVERSION},
        {"IOF_EINTERNAL", IOF_EINTERNAL},
        {"ENOENT", -ENOENT},
        {"EACCES", -EACCES},
        {"IOF_EFROMTHEFUTURE", IOF_EINTERNAL},
        {"EUNKNOWN", IOF_EINTERNAL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char json[128];
        snprintf(json, sizeof(json), "{\"type\":\"error\",\"code\":\"%s\",\"message\":\"m\"}",
                 cases[i].name);
        struct proto_msg m;
        assert_int_equal(decode_str(json, &m, NULL), 0);
        assert_int_equal(m.u.error.code, cases[i].code);
        assert_string_equal(m.u.error.code_name, cases[i].name);
        proto_msg_clear(&m);
    }
}

/* ---- encoder validation ------------------------------------------------ */

static void expect_encode_refused(const struct proto_msg *m, int want_rc, const char *want)
{
    char *text = (char *)"sentinel";
    size_t len = 1;
    struct iof_diag d = {{0}};
    int rc = proto_msg_encode(m, &text, &len, &d);
    if (rc != want_rc || strcmp(d.msg, want) != 0)
        fail_msg("rc %d (want %d)\n  diag \"%s\"\n  want \"%s\"", rc, want_rc, d.msg, want);
    assert_null(text);
    assert_int_equal(len, 0);
}

static void test_encode_refused(void **state)
{
    (void)state;
    struct proto_msg m;
    struct proto_target_info t = {.path = "/dev/sda", .logical_block_size = 512};

    proto_msg_init_hello(&m, PROTO_ROLE_MANAGER, "white space");
    expect_encode_refused(&m, -EINVAL,
                          "hello.name: byte 5 (0x20) is not allowed: use ASCII letters, digits, "
                          "'.', '_' and '-'");
    proto_msg_init_hello(&m, PROTO_ROLE_MANAGER, NULL);
    expect_encode_refused(&m, -EINVAL, "hello.name: required field missing");
    proto_msg_init_hello(&m, (enum proto_role)0, "m");
    expect_encode_refused(&m, -EINVAL,
                          "hello.role: must be PROTO_ROLE_MANAGER or PROTO_ROLE_AGENT");
    proto_msg_init_hello(&m, PROTO_ROLE_MANAGER, "m");
    m.u.hello.heartbeat_ms = 0;
    expect_encode_refused(&m, -EINVAL, "hello.heartbeat_ms: must be 100..60000, got 0");

    proto_msg_init_hello(&m, PROTO_ROLE_AGENT, "a");
    expect_encode_refused(&m, -EINVAL, "hello.inventory.hostname: required field missing");
    m.u.hello.inventory = (struct proto_inventory){
        .hostname = "h", .cpus = 1, .kernel = "k", .ntargets = 1, .targets = &t};
    t.logical_block_size = 768;
    expect_encode_refused(&m, -EINVAL,
                          "hello.inventory.targets[0].logical_block_size: must be a power of two "
                          "in 512..65536, got 768");
    t.logical_block_size = 512;
    t.rotational = 2;
    expect_encode_refused(&m, -EINVAL,
                          "hello.inventory.targets[0].rotational: must be 1, 0 or -1 (unknown), "
                          "got 2");
    t.rotational = 0;
    m.u.hello.inventory.ntargets = PROTO_TARGETS_MAX + 1;
    expect_encode_refused(&m, -EINVAL,
                          "hello.inventory.targets: 257 targets, at most 256 fit in a hello");

    proto_msg_init(&m, PROTO_MSG_ERROR);
    m.u.error.message = "x";
    expect_encode_refused(&m, -EINVAL, "error.code: must be a negative error code, got 0");
    proto_msg_init(&m, PROTO_MSG_BYE);
    expect_encode_refused(&m, -EINVAL, "bye.reason: required field missing");
    m.u.bye.reason = "two\nlines";
    expect_encode_refused(&m, -EINVAL, "bye.reason: contains a control character (byte 3)");

    proto_msg_init(&m, PROTO_MSG_PLAN);
    expect_encode_refused(&m, -EINVAL, "plan.plan: required field missing");
    m.u.plan.text = "[1]";
    m.u.plan.len = 3;
    expect_encode_refused(&m, -EINVAL, "plan.plan: must be the text of a JSON object");
    proto_msg_init(&m, PROTO_MSG_COUNT);
    expect_encode_refused(&m, -EINVAL, "message type 19 does not exist");
}

/* An agent's hello must fit the pre-authentication frame limit. */
static void test_hello_frame_limit(void **state)
{
    (void)state;
    struct proto_target_info *t = test_calloc(PROTO_TARGETS_MAX, sizeof(*t));
    char *path = repeat('p', 1000);
    for (int i = 0; i < PROTO_TARGETS_MAX; i++)
        t[i] = (struct proto_target_info){
            .path = path, .size = 1, .logical_block_size = 512, .rotational = -1};
    struct proto_msg m;
    proto_msg_init_hello(&m, PROTO_ROLE_AGENT, "a");
    m.u.hello.inventory = (struct proto_inventory){
        .hostname = "h", .cpus = 1, .kernel = "k", .ntargets = PROTO_TARGETS_MAX, .targets = t};
    uint8_t *frame = (uint8_t *)"sentinel";
    size_t n;
    struct iof_diag d = {{0}};
    assert_int_equal(proto_msg_encode_frame(&m, PROTO_FRAME_MAX_PREAUTH, &frame, &n, &d),
                     IOF_ETOOBIG);
    assert_null(frame);
    assert_non_null(strstr(d.msg, "hello message of "));
    assert_non_null(strstr(d.msg, " bytes exceeds the frame limit of 65536"));
    assert_int_equal(proto_msg_encode_frame(&m, PROTO_FRAME_MAX_DEFAULT, &frame, &n, &d), 0);
    free(frame);
    test_free(path);
    test_free(t);
}

static void test_name_check(void **state)
{
    (void)state;
    struct iof_diag d = {{0}};
    assert_int_equal(proto_name_check("node-01.rack_3", &d), 0);
    assert_int_equal(proto_name_check("", &d), -EINVAL);
    assert_string_equal(d.msg, "name: must not be empty");
    assert_int_equal(proto_name_check(NULL, &d), -EINVAL);
    assert_int_equal(proto_name_check("a/b", &d), -EINVAL);
    assert_string_equal(
        d.msg, "name: byte 1 (0x2f) is not allowed: use ASCII letters, digits, '.', '_' and '-'");
}

/* The examples of docs/protocol.md, byte for byte: they must decode, and
 * re-encoding the decoded message must give the same text. */
static void test_doc_examples(void **state)
{
    (void)state;
    const char *const examples[] = {
        "{\"type\":\"hello\",\"v\":[1,0],\"role\":\"manager\",\"name\":\"mgr-1\","
        "\"software\":\"0.1.0\",\"heartbeat_ms\":1000}",
        "{\"type\":\"hello\",\"v\":[1,0],\"role\":\"agent\",\"name\":\"node-1\","
        "\"software\":\"0.1.0\",\"heartbeat_ms\":1000,\"inventory\":{\"hostname\":\"node-1.lab\","
        "\"cpus\":16,\"memory_bytes\":68719476736,\"kernel\":\"6.1.0-18-amd64\",\"targets\":["
        "{\"path\":\"/dev/nvme0n1\",\"size\":2000398934016,\"logical_block_size\":512,"
        "\"rotational\":false,\"model\":\"Samsung SSD 980 PRO 2TB\"},"
        "{\"path\":\"/srv/iofleet\",\"size\":0,\"logical_block_size\":4096,"
        "\"rotational\":null,\"model\":null}]}}",
        "{\"type\":\"welcome\"}",
        "{\"type\":\"heartbeat\",\"seq\":41,\"sent_ns\":\"31536000123456789\"}",
        "{\"type\":\"clock_probe\",\"seq\":3,\"t0_ns\":86400000000000}",
        "{\"type\":\"clock_reply\",\"seq\":3,\"t0_ns\":86400000000000,\"agent_ns\":1234567890123}",
        "{\"type\":\"start\",\"test\":0,\"start_at_ns\":86400250000000}",
        "{\"type\":\"stop\",\"reason\":\"interrupted by the user (SIGINT)\"}",
        "{\"type\":\"error\",\"code\":\"IOF_EBUSY\",\"message\":\"busy with manager mgr-2\"}",
        "{\"type\":\"bye\",\"reason\":\"run complete\"}",
    };
    for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
        struct proto_msg m;
        struct iof_diag d = {{0}};
        if (decode_str(examples[i], &m, &d))
            fail_msg("%s: %s", examples[i], d.msg);
        char *text = encode_text(&m);
        assert_string_equal(text, examples[i]);
        free(text);
        proto_msg_clear(&m);
    }
}

/* proto_msg_peek_type: what this encoder writes is recognised from its first
 * bytes; anything it cannot be sure of is -1, never a wrong type. */
static void test_peek_type(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int type;
    } cases[] = {
        {"{\"type\":\"result\",\"test\":0}", PROTO_MSG_RESULT},
        {"{\"type\":\"stats\"}", PROTO_MSG_STATS},
        {"{\"type\":\"prepare_progress\",\"done\":1}", PROTO_MSG_PREPARE_PROGRESS},
        {"{\"type\":\"heartbeat\",\"seq\":1}", PROTO_MSG_HEARTBEAT},
        {"\x01\x03", PROTO_MSG_STATS},  /* the binary stats body's tag */
        {"{\"type\":\"results\"}", -1}, /* no such type */
        {"{\"type\":\"resul\"}", -1},
        {"{\"type\":\"result", -1},     /* cut before the closing quote */
        {"{\"type\": \"result\"}", -1}, /* a space: only the decoder can say */
        {"{\"test\":0,\"type\":\"result\"}", -1},
        {" {\"type\":\"result\"}", -1},
        {"{\"type\":\"\"}", -1},
        {"{\"type\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", -1},
        {"{\"typ", -1},
        {"", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (proto_msg_peek_type(cases[i].text, strlen(cases[i].text)) != cases[i].type)
            fail_msg("%s: %d, not %d", cases[i].text,
                     proto_msg_peek_type(cases[i].text, strlen(cases[i].text)), cases[i].type);

    /* Every type as this encoder writes it. */
    const enum proto_msg_type types[] = {PROTO_MSG_WELCOME, PROTO_MSG_STOP, PROTO_MSG_BYE,
                                         PROTO_MSG_HEARTBEAT, PROTO_MSG_ERROR};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        struct proto_msg m;
        proto_msg_init(&m, types[i]);
        if (types[i] == PROTO_MSG_STOP)
            m.u.stop.reason = "why";
        if (types[i] == PROTO_MSG_BYE)
            m.u.bye.reason = "why";
        if (types[i] == PROTO_MSG_ERROR) {
            m.u.error.code = IOF_EBUSY;
            m.u.error.message = "busy";
        }
        char *text = encode_text(&m);
        assert_int_equal(proto_msg_peek_type(text, strlen(text)), (int)types[i]);
        free(text);
    }
}

/* prepare_progress: the optional stage, as docs/protocol.md shows it; an
 * unknown stage is refused by name. */
static void test_progress_stage(void **state)
{
    (void)state;
    const char *const ok[] = {
        "{\"type\":\"prepare_progress\",\"path\":\"iofleet-quickstart.dat\",\"done\":33554432,"
        "\"total\":67108864}",
        "{\"type\":\"prepare_progress\",\"path\":\"/dev/sdb\",\"done\":851443712,"
        "\"total\":4294967296,\"stage\":\"verify\"}",
    };
    struct proto_msg m;
    struct iof_diag d = {{0}};

    for (size_t i = 0; i < 2; i++) {
        if (decode_str(ok[i], &m, &d))
            fail_msg("%s: %s", ok[i], d.msg);
        assert_int_equal(m.u.prepare_progress.verify, i == 1);
        char *text = encode_text(&m);
        assert_string_equal(text, ok[i]);
        free(text);
        proto_msg_clear(&m);
    }
    assert_int_equal(decode_str("{\"type\":\"prepare_progress\",\"path\":\"a\",\"done\":1,"
                                "\"total\":2,\"stage\":\"prepare\"}",
                                &m, &d),
                     0);
    assert_false(m.u.prepare_progress.verify);
    proto_msg_clear(&m);
    assert_int_not_equal(decode_str("{\"type\":\"prepare_progress\",\"path\":\"a\",\"done\":1,"
                                    "\"total\":2,\"stage\":\"read\"}",
                                    &m, &d),
                         0);
    assert_string_equal(d.msg, "prepare_progress.stage: 'read' is not \"prepare\" or \"verify\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_stage),
        cmocka_unit_test(test_type_table),
        cmocka_unit_test(test_hello_manager_round_trip),
        cmocka_unit_test(test_hello_heartbeat_offer),
        cmocka_unit_test(test_heartbeat_limit_fields),
        cmocka_unit_test(test_hello_agent_round_trip),
        cmocka_unit_test(test_hello_inventory_details),
        cmocka_unit_test(test_small_messages_round_trip),
        cmocka_unit_test(test_clean_messages),
        cmocka_unit_test(test_u64_forms),
        cmocka_unit_test(test_unknown_fields_ignored),
        cmocka_unit_test(test_envelope_refused),
        cmocka_unit_test(test_required_fields),
        cmocka_unit_test(test_wrong_values),
        cmocka_unit_test(test_length_caps),
        cmocka_unit_test(test_target_count_cap),
        cmocka_unit_test(test_version_compatible),
        cmocka_unit_test(test_hello_version_negotiation),
        cmocka_unit_test(test_error_codes),
        cmocka_unit_test(test_encode_refused),
        cmocka_unit_test(test_hello_frame_limit),
        cmocka_unit_test(test_name_check),
        cmocka_unit_test(test_doc_examples),
        cmocka_unit_test(test_peek_type),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
