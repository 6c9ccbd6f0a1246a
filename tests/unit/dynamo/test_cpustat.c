/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_cpustat.c - node and agent CPU between two samples
 * (dynamo/cpustat.h): the agent's share is over elapsed time x CPUs, not
 * over the /proc/stat ticks that happened to pass; the node figures (softirq
 * and irq shares, interrupts, packets, errors, TCP retransmissions) from
 * /proc's text, over the same window, unknown when a counter goes back. */
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

/* /proc/net/dev and /proc/net/snmp as Linux writes them: lo left out. */
static void test_parse_proc_net(void **state)
{
    static const char dev[] =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
        "errs drop fifo colls carrier compressed\n"
        "    lo: 626551203 3190953    0    0    0     0          0         0 626551203 3190953 "
        "   0    0    0     0       0          0\n"
        "  eth0: 565916996   24365    2    0    0     0          0         0  1394156   18222 "
        "   5    0    0     0       0          0\n"
        "  ifb0:       0       7    0    0    0     0          0         0        0       1 "
        "   0    0    0     0       0          0\n";
    static const char snmp[] =
        "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
        "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails "
        "EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
        "Tcp: 1 200 120000 -1 232736 229244 3442 100905 0 3206148 3189787 10231 0 95807 0\n"
        "Udp: InDatagrams\nUdp: 5\n";
    uint64_t packets, errors, retrans;
    (void)state;

    assert_true(dyn_cpu_parse_netdev(dev, &packets, &errors));
    assert_int_equal(packets, 24365 + 18222 + 7 + 1);
    assert_int_equal(errors, 2 + 5);
    assert_true(dyn_cpu_parse_snmp(snmp, &retrans));
    assert_int_equal(retrans, 10231);
    assert_false(dyn_cpu_parse_netdev("Inter-|\n face |\n  eth0: 1 2 3\n", &packets, &errors));
    assert_false(dyn_cpu_parse_snmp("Tcp: RtoAlgorithm\nTcp: 1\n", &retrans));
    assert_false(dyn_cpu_parse_snmp("", &retrans));
}

/* The node figures over a window: shares of the ticks, rates over elapsed
 * time, a count of errors; none when a counter went back. */
static void test_node_figures(void **state)
{
    struct dyn_cpu_sample a = {.valid = true, .node_valid = true},
                          b = {.valid = true, .node_valid = true};
    struct dyn_cpu_usage u;
    (void)state;

    a.mono_ns = 1000000000ULL;
    b.mono_ns = a.mono_ns + 2000000000ULL; /* 2 s */
    b.total = 1000;
    b.idle = 400;
    b.user = 300;
    b.system = 300; /* of which: */
    b.softirq = 50;
    b.irq = 20;
    b.intr = a.intr + 9000;
    b.packets = a.packets + 500;
    b.packet_errors = 3;
    b.retrans = 4;
    dyn_cpu_usage(&a, &b, &u);
    assert_true(u.node_valid);
    assert_true(fabs(u.busy_pct - 60) < 1e-9 && fabs(u.sys_pct - 30) < 1e-9);
    assert_true(fabs(u.dpc_pct - 5) < 1e-9 && fabs(u.irq_pct - 2) < 1e-9);
    assert_true(u.dpc_pct + u.irq_pct <= u.sys_pct && u.sys_pct <= u.busy_pct);
    assert_true(fabs(u.intr_per_s - 4500) < 1e-9 && fabs(u.packets_per_s - 250) < 1e-9);
    assert_true(u.packet_errors == 3 && fabs(u.retrans_per_s - 2) < 1e-9);

    /* A counter that went back (an interface removed): unknown, not negative. */
    a.packets = b.packets + 1;
    dyn_cpu_usage(&a, &b, &u);
    assert_false(u.node_valid);
    assert_true(u.packets_per_s == 0 && u.busy_pct > 0);
    /* A sample without them: unknown. */
    a.packets = 0;
    b.node_valid = false;
    dyn_cpu_usage(&a, &b, &u);
    assert_false(u.node_valid);
}

/* Real samples on Linux carry the node figures, and they are consistent. */
static void test_node_real(void **state)
{
    struct dyn_cpu_sample a, b;
    struct dyn_cpu_usage u;
    (void)state;

    dyn_cpu_sample(&a);
    if (!a.valid)
        skip();
    assert_true(a.node_valid);
    do {
        usleep(20000);
        dyn_cpu_sample(&b);
    } while (b.mono_ns - a.mono_ns < 200000000ULL || b.total == a.total);
    dyn_cpu_usage(&a, &b, &u);
    assert_true(u.node_valid);
    assert_true(u.dpc_pct >= 0 && u.irq_pct >= 0 && u.intr_per_s >= 0 && u.packets_per_s >= 0 &&
                u.packet_errors >= 0 && u.retrans_per_s >= 0);
    assert_true(u.dpc_pct + u.irq_pct <= u.sys_pct + 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_proc_net), cmocka_unit_test(test_node_figures),
        cmocka_unit_test(test_node_real),      cmocka_unit_test(test_agent_pct_over_elapsed),
        cmocka_unit_test(test_agent_pct_real),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
