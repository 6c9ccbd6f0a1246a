/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_engine_facts.c - common/engine_facts.h and dynamo's engine
 * registry: every registered engine has all its ops and is exactly one row
 * of the facts table (and every row is registered); the plan's checks, the
 * budget and the fio importer decide by those facts for every engine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/budget.h"
#include "common/buf.h"
#include "common/engine_facts.h"
#include "common/err.h"
#include "common/spec.h"
#include "dynamo/engine.h"
#include "dynamo/os/os.h"
#include "proto/import.h"
#include "proto/plan.h"

static void test_registry_matches_the_table(void **state)
{
    bool seen[IOF_ENGINE_COUNT] = {false};
    size_t here = 0;

    (void)state;
    for (size_t r = 0; r < IOF_ENGINE_COUNT; r++)
        here += iof_engine_facts[r].os == IOF_ENGINE_OS_ANY ||
                iof_engine_facts[r].os == IOF_ENGINE_THIS_OS;
    assert_int_equal(dyn_engine_count(), here);
    assert_null(dyn_engine_at(dyn_engine_count()));
    for (size_t i = 0; i < dyn_engine_count(); i++) {
        const struct dyn_engine_ops *e = dyn_engine_at(i);
        assert_non_null(e);
        assert_non_null(e->facts);
        /* Its facts are a row of the table, not a copy of one. */
        assert_true(e->facts >= iof_engine_facts && e->facts < iof_engine_facts + IOF_ENGINE_COUNT);
        size_t row = (size_t)(e->facts - iof_engine_facts);
        print_message("%-8s direct=%d touches_files=%d ring_fd=%d hipri=%d aio_events=%d "
                      "submit_batch=%u\n",
                      e->facts->name, e->facts->direct, e->facts->touches_files, e->facts->ring_fd,
                      e->facts->hipri, e->facts->aio_events, e->facts->submit_batch);
        assert_false(seen[row]);
        seen[row] = true;
        assert_non_null(e->open);
        assert_non_null(e->close);
        assert_non_null(e->submit);
        assert_non_null(e->reap);
        assert_ptr_equal(dyn_engine_find(e->facts->name), e);
    }
    for (size_t r = 0; r < IOF_ENGINE_COUNT; r++) {
        const struct iof_engine_facts *f = &iof_engine_facts[r];
        /* Registered exactly on the system whose agents have it. */
        assert_int_equal(seen[r], f->os == IOF_ENGINE_OS_ANY || f->os == IOF_ENGINE_THIS_OS);
        assert_non_null(f->name);
        assert_non_null(f->fio);
        assert_ptr_equal(iof_engine_facts_find_fio(f->fio), f);
        assert_true(strlen(f->name) < IOF_ENGINE_NAME_MAX);
        assert_ptr_equal(iof_engine_facts_find(f->name), f);
        assert_true(f->submit_batch >= 1);
        /* What a ring, polling or AIO events imply. */
        assert_true(!f->ring_fd || f->touches_files);
        assert_true(!f->aio_events || f->touches_files);
        assert_true(!f->direct || f->touches_files);
    }
    assert_null(iof_engine_facts_find("posixaio"));
    assert_null(dyn_engine_find("posixaio"));
}

/* An engine of the other system is refused by name, with the agent's
 * system and engines; an unknown name as unknown. */
static void test_other_systems_engine_refused(void **state)
{
    struct iof_diag d = {{0}};

    (void)state;
    assert_non_null(dyn_engine_lookup("sync", &d));
#ifdef _WIN32
    assert_null(dyn_engine_lookup("libaio", &d));
    assert_string_equal(d.msg, "engine libaio is not available on this node: it is an engine of "
                               "Linux agents, and this one runs Windows (its engines: windows, "
                               "sync, null)");
#else
    assert_null(dyn_engine_lookup("windows", &d));
    assert_string_equal(d.msg, "engine windows is not available on this node: it is an engine of "
                               "Windows agents, and this one runs Linux (its engines: libaio, "
                               "io_uring, sync, null)");
#endif
    assert_null(dyn_engine_lookup("posixaio", &d));
    assert_true(strstr(d.msg, "unknown engine 'posixaio' (this node's engines: "));
}

static int parse(const char *text, struct iof_plan *p, struct iof_diag *d)
{
    return proto_plan_parse("plan.json", text, strlen(text), NULL, 0, p, d);
}

/* The plan accepts every engine of the table by name, hipri exactly where the
 * table says, verify exactly on engines that do I/O, and asks 512-byte
 * multiples of exactly the O_DIRECT engines. */
static void test_plan_checks_follow_the_facts(void **state)
{
    char text[1024];

    (void)state;
    for (size_t r = 0; r < IOF_ENGINE_COUNT; r++) {
        const struct iof_engine_facts *f = &iof_engine_facts[r];
        struct iof_plan p;
        struct iof_diag d = {{0}};
        int rc;

        snprintf(text, sizeof(text),
                 "{\"name\":\"p\",\"run\":{\"duration\":\"5s\"},\"specs\":[{\"name\":\"a\","
                 "\"lines\":[{\"size\":\"4k\"}]}],\"workers\":[{\"engine\":\"%s\","
                 "\"targets\":[{\"path\":\"f.dat\",\"size\":\"1m\"}]}]}",
                 f->name);
        rc = parse(text, &p, &d);
        assert_int_equal(rc, 0);
        assert_string_equal(p.workers[0].engine, f->name);
        iof_plan_free(&p);

        snprintf(text, sizeof(text),
                 "{\"name\":\"p\",\"run\":{\"duration\":\"5s\"},\"specs\":[{\"name\":\"a\","
                 "\"lines\":[{\"size\":\"4k\"}]}],\"workers\":[{\"engine\":\"%s\",\"hipri\":true,"
                 "\"targets\":[{\"path\":\"f.dat\",\"size\":\"1m\"}]}]}",
                 f->name);
        rc = parse(text, &p, &d);
        print_message("%-8s hipri: %s\n", f->name, rc ? d.msg : "accepted");
        assert_int_equal(rc, f->hipri ? 0 : IOF_EPLAN);
        iof_plan_free(&p);

        snprintf(text, sizeof(text),
                 "{\"name\":\"p\",\"run\":{\"duration\":\"5s\"},\"specs\":[{\"name\":\"a\","
                 "\"lines\":[{\"size\":\"4k\",\"read\":0}]}],\"workers\":[{\"engine\":\"%s\","
                 "\"verify\":\"crc32c\",\"targets\":[{\"path\":\"f.dat\",\"size\":\"1m\"}]}]}",
                 f->name);
        rc = parse(text, &p, &d);
        print_message("%-8s verify: %s\n", f->name, rc ? d.msg : "accepted");
        assert_int_equal(rc, f->touches_files ? 0 : IOF_EPLAN);
        iof_plan_free(&p);

        snprintf(text, sizeof(text),
                 "{\"name\":\"p\",\"run\":{\"duration\":\"5s\"},\"specs\":[{\"name\":\"a\","
                 "\"lines\":[{\"size\":\"4k\"}]}],\"workers\":[{\"engine\":\"%s\","
                 "\"targets\":[{\"path\":\"f.dat\",\"size\":\"1m\"}]}],"
                 "\"cycle\":{\"size\":[\"4k\",\"1000\"]}}",
                 f->name);
        rc = parse(text, &p, &d);
        print_message("%-8s cycle size 1000: %s\n", f->name, rc ? d.msg : "accepted");
        assert_int_equal(rc, f->direct ? IOF_EPLAN : 0);
        iof_plan_free(&p);
    }
}

/* A group without an engine is marked so (each agent runs its own default,
 * which the manager names from the agent's system, not this build's); one
 * that names an engine keeps it, also the default's name. The system of an
 * agent comes from the kernel its hello names: this agent's own (dyn_os_machine)
 * is this build's system, and its default engine IOF_ENGINE_DEFAULT. */
static void test_default_engine_per_system(void **state)
{
    static const char text[] =
        "{\"name\":\"p\",\"run\":{\"duration\":\"5s\"},\"specs\":[{\"name\":\"a\","
        "\"lines\":[{\"size\":\"4k\"}]}],\"workers\":[{\"targets\":[{\"path\":\"f\","
        "\"size\":\"1m\"}]},{\"engine\":\"libaio\",\"targets\":[{\"path\":\"g\","
        "\"size\":\"1m\"}]},{\"engine\":\"windows\",\"targets\":[{\"path\":\"h\","
        "\"size\":\"1m\"}]}]}";
    struct dyn_os_machine m;
    struct iof_diag d = {{0}};
    struct iof_plan p;

    (void)state;
    assert_int_equal(parse(text, &p, &d), 0);
    assert_false(p.workers[0].engine_given);
    assert_string_equal(p.workers[0].engine, iof_engine_facts[IOF_ENGINE_DEFAULT].name);
    assert_true(p.workers[1].engine_given);
    assert_string_equal(p.workers[1].engine, "libaio");
    assert_true(p.workers[2].engine_given);
    assert_string_equal(p.workers[2].engine, "windows");
    iof_plan_free(&p);

    assert_int_equal(iof_engine_os_of_kernel("Windows NT 10.0 build 19045"), IOF_ENGINE_OS_WINDOWS);
    assert_int_equal(iof_engine_os_of_kernel("Windows NT 6.1 build 7601 on Wine 8.0"),
                     IOF_ENGINE_OS_WINDOWS);
    assert_int_equal(iof_engine_os_of_kernel("Wine 8.0"), IOF_ENGINE_OS_WINDOWS);
    assert_int_equal(iof_engine_os_of_kernel("6.1.0-18-amd64"), IOF_ENGINE_OS_LINUX);
    assert_int_equal(iof_engine_os_of_kernel(""), IOF_ENGINE_OS_LINUX);
    assert_int_equal(iof_engine_os_of_kernel(NULL), IOF_ENGINE_OS_LINUX);
    assert_int_equal(iof_engine_default_of(IOF_ENGINE_OS_WINDOWS), IOF_ENGINE_WINDOWS);
    assert_int_equal(iof_engine_default_of(IOF_ENGINE_OS_LINUX), IOF_ENGINE_LIBAIO);

    dyn_os_machine(&m);
    print_message("this agent's kernel: %s\n", m.kernel);
    assert_int_equal(iof_engine_os_of_kernel(m.kernel), IOF_ENGINE_THIS_OS);
    assert_int_equal(iof_engine_default_of(IOF_ENGINE_THIS_OS), IOF_ENGINE_DEFAULT);
}

/* A node's need counts AIO events, target descriptors and ring descriptors
 * exactly as each engine's facts say. */
static void test_budget_follows_the_facts(void **state)
{
    struct iof_line line = {.size = 4096, .share = 100, .read_pct = 100, .burst = 1};
    struct iof_spec spec = {.name = "s", .lines = &line, .nlines = 1};
    const struct iof_spec *specs[] = {&spec};

    (void)state;
    for (size_t r = 0; r < IOF_ENGINE_COUNT; r++) {
        const struct iof_engine_facts *f = &iof_engine_facts[r];
        struct iof_worker_cfg g = {.count = 3, .queue_depth = 8, .ntargets = 2};
        struct iof_budget_need n = {0};

        snprintf(g.engine, sizeof(g.engine), "%s", f->name);
        iof_budget_need_add(&n, specs, &g, 1);
        print_message("%-8s aio_events=%llu fds=%llu\n", f->name, (unsigned long long)n.aio_events,
                      (unsigned long long)n.fds);
        assert_int_equal(n.workers, 3);
        assert_int_equal(n.aio_events, f->aio_events ? 3 * 2 * 8 : 0);
        assert_int_equal(n.fds, (f->touches_files ? 2 : 0) + (f->ring_fd ? 3 : 0));
    }
}

/* fio's direct=0 maps to iofleet's engine (by fio's name of it: windowsaio
 * is windows) as is only where that engine is not O_DIRECT; without
 * --approximate an O_DIRECT engine refuses it. */
static void test_fio_import_follows_the_facts(void **state)
{
    char text[256];

    (void)state;
    for (size_t r = 0; r < IOF_ENGINE_COUNT; r++) {
        const struct iof_engine_facts *f = &iof_engine_facts[r];
        struct iof_buf json, msgs;
        struct iof_diag d = {{0}};
        int rc;

        if (r == IOF_ENGINE_SYNC) /* fio's sync family: mapped apart (import_fio.c) */
            continue;
        snprintf(text, sizeof(text),
                 "[j]\nioengine=%s\ndirect=0\nrw=randread\nbs=4k\nsize=1m\nfilename=f.dat\n"
                 "runtime=5s\ntime_based\n",
                 f->fio);
        iof_buf_init(&json, 0);
        iof_buf_init(&msgs, 0);
        rc = proto_import_fio("j.fio", text, strlen(text), 0, &json, &msgs, &d);
        print_message("%-8s direct=0: %s\n", f->name, rc ? d.msg : "imported");
        assert_int_equal(rc != 0, f->direct);
        iof_buf_free(&json);
        iof_buf_free(&msgs);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_matches_the_table),
        cmocka_unit_test(test_other_systems_engine_refused),
        cmocka_unit_test(test_plan_checks_follow_the_facts),
        cmocka_unit_test(test_budget_follows_the_facts),
        cmocka_unit_test(test_default_engine_per_system),
        cmocka_unit_test(test_fio_import_follows_the_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
