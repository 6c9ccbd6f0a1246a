/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_cpustat.c - node and agent CPU between two samples
 * (dynamo/cpustat.h): the agent's share is over elapsed time x CPUs, not
 * over the /proc/stat ticks that happened to pass. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <unistd.h>

#include "dynamo/cpustat.h"

/* A busy VM: the tick total covers only 86 % of the elapsed 10 s. The agent
 * used 22.6 % of elapsed x CPUs,
 * whatever the ticks say (the tick total would give 26.3 %). */
static void test_agent_pct_over_elapsed(void **state)
{
    long hz = sysconf(_SC_CLK_TCK), ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    struct dyn_cpu_sample a = {.valid = true}, b = {.valid = true};
    struct dyn_cpu_usage u;
    const double elapsed_s = 10.0, covered = 0.86, agent_share = 0.226;
    uint64_t ticks;
    (void)state;

    assert_true(hz > 0 && ncpu > 0);
    ticks = (uint64_t)(elapsed_s * covered * (double)hz * (double)ncpu);
    a.mono_ns = 1000000000ULL;
    b.mono_ns = a.mono_ns + (uint64_t)(elapsed_s * 1e9);
    a.self_ns = 5000;
    b.self_ns = a.self_ns + (uint64_t)(agent_share * elapsed_s * 1e9 * (double)ncpu);
    b.user = ticks / 4;
    b.system = ticks / 4;
    b.idle = ticks - b.user - b.system;
    b.total = ticks;
    dyn_cpu_usage(&a, &b, &u);
    assert_true(fabs(u.agent_pct - 100 * agent_share) < 1e-6);
    assert_true(fabs(u.busy_pct - 100.0 * (double)(b.user + b.system) / (double)ticks) < 1e-9);
    assert_true(fabs(u.user_pct - 100.0 * (double)b.user / (double)ticks) < 1e-9);

    /* No elapsed time or no ticks: nothing is made up. */
    b.mono_ns = a.mono_ns;
    dyn_cpu_usage(&a, &b, &u);
    assert_true(u.agent_pct == 0);
    b.total = a.total;
    dyn_cpu_usage(&a, &b, &u);
    assert_true(u.busy_pct == 0 && u.agent_pct == 0);
}

/* Real samples: the agent's share of a busy loop on one thread is at most
 * 100 / CPUs and close to it. */
static void test_agent_pct_real(void **state)
{
    struct dyn_cpu_sample a, b;
    struct dyn_cpu_usage u;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    volatile uint64_t x = 0;
    (void)state;

    dyn_cpu_sample(&a);
    if (!a.valid)
        skip();
    do {
        for (int i = 0; i < 1000000; i++)
            x += (uint64_t)i;
        dyn_cpu_sample(&b);
    } while (b.mono_ns - a.mono_ns < 300000000ULL || b.total == a.total);
    assert_true(x > 0); /* the busy loop ran (and x is read: clang -O3 warns otherwise) */
    dyn_cpu_usage(&a, &b, &u);
    assert_true(u.agent_pct > 0);
    assert_true(u.agent_pct <= 100.0 / (double)ncpu * 1.05);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agent_pct_over_elapsed),
        cmocka_unit_test(test_agent_pct_real),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
