/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_agent_stop.c - dyn_agent_request_stop(): a running agent
 * (listening on a unix socket in a temporary directory) asked to stop from
 * another thread, as a service manager's stop will, ends dyn_agent_main
 * with exit code 0; with no agent running the request says so (-ESRCH). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "dynamo/agent.h"
#include "tmpdir.h"

struct run {
    struct dyn_agent_opts o;
    int rc;
};

static void *agent_thread(void *arg)
{
    struct run *r = arg;
    r->rc = dyn_agent_main(&r->o);
    return NULL;
}

/* The test's directory, removed by the teardown whatever happened. */
static char g_dir[PATH_MAX];

static int remove_dir(void **state)
{
    (void)state;
    if (g_dir[0])
        test_tmpdir_remove(g_dir);
    return 0;
}

static void test_stop_request_ends_the_agent(void **state)
{
    char listen[PATH_MAX + 16], work[PATH_MAX + 16];
    struct run r = {.rc = -1};
    pthread_t th;
    struct timespec deadline;
    uint64_t t0, asked = 0;
    int rc;

    (void)state;
    assert_int_equal(dyn_agent_request_stop(), -ESRCH);
    /* The base is created when missing: this test may be the first to run. */
    assert_int_equal(test_tmpdir_make(g_dir, "agent_stop"), 0);
    snprintf(listen, sizeof(listen), "unix:%s/sock", g_dir);
    snprintf(work, sizeof(work), "%s/work", g_dir);
    r.o.listen = listen;
    r.o.workdir = work;
    assert_int_equal(pthread_create(&th, NULL, agent_thread, &r), 0);

    /* The agent takes the request once its loop is set up; until then
     * there is none to ask. */
    t0 = iof_now_ns();
    while ((rc = dyn_agent_request_stop()) == -ESRCH && iof_now_ns() - t0 < 30 * IOF_NS_PER_S)
        usleep(10000);
    assert_int_equal(rc, 0);
    asked = iof_now_ns();

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    assert_int_equal(pthread_timedjoin_np(th, NULL, &deadline), 0);
    print_message("agent stopped %.1f ms after the request\n",
                  (double)(iof_now_ns() - asked) / IOF_NS_PER_MS);
    assert_int_equal(r.rc, 0);
    /* Gone: nothing to ask any more. */
    assert_int_equal(dyn_agent_request_stop(), -ESRCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_stop_request_ends_the_agent, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
