/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_cpustat.c - node and agent CPU between two samples
 * (dynamo/cpustat.h): the agent's share is over elapsed time x CPUs, not
 * over the /proc/stat ticks that happened to pass; the node figures (softirq
 * and irq shares, interrupts, packets, errors, TCP retransmissions) from
 * /proc's text, over the same window, unknown when a counter goes back; each
 * CPU's figures from its cpuN line (gaps, refusals, the cap). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
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

/* /proc/stat as Linux writes it, CPU 1 offline (cpu0, cpu2: a gap). */
static const char stat_gap[] = "cpu  1000 10 500 8000 40 30 70 5 0 0\n"
                               "cpu0 600 10 300 3000 20 20 50 5 0 0\n"
                               "cpu2 400 0 200 5000 20 10 20 0 0 0\n"
                               "intr 123456 0 9 0 0\n"
                               "ctxt 42\n";

/* Every cpuN line, by id with its gap; the node-wide line and the interrupt
 * total as before; each CPU's figures over a window of its own ticks. */
static void test_parse_stat_each(void **state)
{
    static struct dyn_cpu_sample a, b;
    struct dyn_cpu_one one[4];
    bool node;
    (void)state;

    memset(&a, 0, sizeof(a));
    assert_true(dyn_cpu_parse_stat(stat_gap, &a, &node));
    assert_true(node);
    assert_int_equal(a.intr, 123456);
    assert_int_equal(a.user, 1010);
    assert_int_equal(a.system, 500 + 30 + 70);
    assert_int_equal(a.ncpus, 2);
    assert_int_equal(a.cpus[0].id, 0);
    assert_int_equal(a.cpus[1].id, 2);
    assert_int_equal(a.cpus[0].user, 610);
    assert_int_equal(a.cpus[0].system, 300 + 20 + 50);
    assert_int_equal(a.cpus[0].idle, 3020);
    assert_int_equal(a.cpus[0].total, 610 + 370 + 3020 + 5);
    assert_int_equal(a.cpus[1].softirq, 20);
    assert_int_equal(a.cpus[1].irq, 10);

    /* 1000 ticks later on each: CPU 0 half busy (user 300, sys 200 of which
     * softirq 50, irq 25), CPU 2 idle but for 100 ticks of irq. */
    b = a;
    b.cpus[0].user += 300;
    b.cpus[0].system += 200;
    b.cpus[0].softirq += 50;
    b.cpus[0].irq += 25;
    b.cpus[0].idle += 500;
    b.cpus[0].total += 1000;
    b.cpus[1].system += 100;
    b.cpus[1].irq += 100;
    b.cpus[1].idle += 900;
    b.cpus[1].total += 1000;
    a.valid = b.valid = true;
    assert_int_equal(dyn_cpu_usage_each(&a, &b, one, 4), 2);
    assert_int_equal(one[0].id, 0);
    assert_true(fabs(one[0].busy_pct - 50) < 1e-9 && fabs(one[0].user_pct - 30) < 1e-9);
    assert_true(fabs(one[0].sys_pct - 20) < 1e-9 && fabs(one[0].dpc_pct - 5) < 1e-9);
    assert_true(fabs(one[0].irq_pct - 2.5) < 1e-9);
    assert_int_equal(one[1].id, 2);
    assert_true(fabs(one[1].busy_pct - 10) < 1e-9 && fabs(one[1].irq_pct - 10) < 1e-9);
    assert_true(one[1].user_pct == 0 && one[1].dpc_pct == 0);
    /* cap */
    assert_int_equal(dyn_cpu_usage_each(&a, &b, one, 1), 1);

    /* CPU 1 came online during the window: left out, the others kept */
    b.cpus[2] = b.cpus[1];
    b.cpus[1] = (struct dyn_cpu_ticks){.id = 1, .user = 5, .idle = 5, .total = 10};
    b.ncpus = 3;
    assert_int_equal(dyn_cpu_usage_each(&a, &b, one, 4), 2);
    assert_true(one[0].id == 0 && one[1].id == 2);
    /* CPU 2 went offline and back: its counters restarted, nothing is known */
    b.cpus[2].idle = 1;
    assert_int_equal(dyn_cpu_usage_each(&a, &b, one, 4), 0);
    /* a sample without per-CPU figures (Windows, too many CPUs): none */
    b.cpus[2] = b.cpus[1];
    b.ncpus = 0;
    assert_int_equal(dyn_cpu_usage_each(&a, &b, one, 4), 0);
}

/* What is not as Linux writes it leaves the per-CPU figures unknown (the
 * node's stay); more CPUs than DYN_CPUS_MAX too. */
static void test_parse_stat_refused(void **state)
{
    static struct dyn_cpu_sample s;
    static char big[(DYN_CPUS_MAX + 2) * 64];
    size_t len;
    bool node;
    (void)state;

    memset(&s, 0, sizeof(s));
    assert_false(dyn_cpu_parse_stat("intr 5\n", &s, &node));
    assert_false(dyn_cpu_parse_stat("cpu 1 2\n", &s, &node));
    /* a cpu line with fewer than 8 columns: no per-CPU, no irq figures */
    memset(&s, 0, sizeof(s));
    assert_true(dyn_cpu_parse_stat("cpu  1 2 3 4\ncpu0 1 2 3 4\nintr 9\n", &s, &node));
    assert_false(node);
    assert_int_equal(s.ncpus, 0);
    assert_int_equal(s.total, 10);
    /* ids out of order or repeated */
    memset(&s, 0, sizeof(s));
    assert_true(dyn_cpu_parse_stat("cpu  2 0 2 8 0 0 0 0\ncpu1 1 0 1 4 0 0 0 0\n"
                                   "cpu1 1 0 1 4 0 0 0 0\nintr 9\n",
                                   &s, &node));
    assert_true(node);
    assert_int_equal(s.ncpus, 0);
    /* a garbled id */
    memset(&s, 0, sizeof(s));
    assert_true(
        dyn_cpu_parse_stat("cpu  2 0 2 8 0 0 0 0\ncpu0x 1 0 1 4 0 0 0 0\nintr 9\n", &s, &node));
    assert_int_equal(s.ncpus, 0);
    /* DYN_CPUS_MAX lines are kept, one more and none is */
    for (int extra = 0; extra < 2; extra++) {
        len = (size_t)snprintf(big, sizeof(big), "cpu  1 0 1 2 0 0 0 0\n");
        for (int i = 0; i < DYN_CPUS_MAX + extra; i++)
            len += (size_t)snprintf(big + len, sizeof(big) - len, "cpu%d 1 0 1 2 0 0 0 0\n", i);
        snprintf(big + len, sizeof(big) - len, "intr 7\n");
        memset(&s, 0, sizeof(s));
        assert_true(dyn_cpu_parse_stat(big, &s, &node));
        assert_true(node);
        assert_int_equal(s.intr, 7);
        assert_int_equal(s.ncpus, extra ? 0 : DYN_CPUS_MAX);
    }
}

/* This machine: one entry per online CPU, each within 0..100, their mean
 * busy share near the node's. */
static void test_each_real(void **state)
{
    static struct dyn_cpu_sample a, b;
    static struct dyn_cpu_one one[DYN_CPUS_MAX];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    struct dyn_cpu_usage u;
    double mean = 0;
    size_t n;
    (void)state;

    dyn_cpu_sample(&a);
    if (!a.valid)
        skip();
    assert_int_equal(a.ncpus, (size_t)ncpu);
    do {
        usleep(50000);
        dyn_cpu_sample(&b);
    } while (b.mono_ns - a.mono_ns < 300000000ULL);
    n = dyn_cpu_usage_each(&a, &b, one, DYN_CPUS_MAX);
    assert_int_equal(n, (size_t)ncpu);
    for (size_t i = 0; i < n; i++) {
        assert_true(one[i].busy_pct >= 0 && one[i].busy_pct <= 100);
        assert_true(one[i].dpc_pct + one[i].irq_pct <= one[i].sys_pct + 1e-9);
        mean += one[i].busy_pct / (double)n;
    }
    dyn_cpu_usage(&a, &b, &u);
    assert_true(fabs(mean - u.busy_pct) < 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_proc_net),     cmocka_unit_test(test_node_figures),
        cmocka_unit_test(test_node_real),          cmocka_unit_test(test_agent_pct_over_elapsed),
        cmocka_unit_test(test_agent_pct_real),     cmocka_unit_test(test_parse_stat_each),
        cmocka_unit_test(test_parse_stat_refused), cmocka_unit_test(test_each_real),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
