/* tests/unit/test_ratecycle.c - rate cycles (plan "cycle": {"rate": ...}):
 * the loader's keys and one-line errors, the curve's steps, the find_max
 * bisection against synthetic latency-against-rate responses (a sharp knee
 * anywhere in (0, 1] and a queueing curve: the answer lies within one final
 * step, IOF_FIND_MAX_PRECISION of the unthrottled IOPS, below the true knee,
 * in at most 1 + IOF_FIND_MAX_STEPS tests), and the start message's
 * per-worker rates. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ratecycle.h"
#include "common/spec.h"
#include "proto/msg.h"
#include "proto/plan.h"

#define PLAN_FMT                                                                                   \
    "{\"name\": \"r\", \"run\": {\"duration\": \"1s\"},"                                           \
    " \"specs\": [{\"name\": \"a\", \"lines\": [{\"size\": \"4k\"}]},"                             \
    "            {\"name\": \"b\", \"lines\": [{\"size\": \"8k\"}]}],"                             \
    " \"workers\": [{\"engine\": \"null\", \"count\": 2, \"targets\": [{\"path\": \"f\", "         \
    "\"size\": "                                                                                   \
    "\"1m\"}]%s}],"                                                                                \
    " \"cycle\": %s}"

static int load(const char *workers_extra, const char *cycle, struct iof_plan *p,
                struct iof_diag *d)
{
    char text[2048];

    snprintf(text, sizeof(text), PLAN_FMT, workers_extra, cycle);
    memset(p, 0, sizeof(*p));
    return proto_plan_parse("plan.json", text, strlen(text), NULL, 0, p, d);
}

static void test_curve_steps(void **state)
{
    struct iof_plan p;
    struct iof_diag d = {{0}};
    struct iof_test *t;
    size_t n;
    char label[64];

    (void)state;
    /* Unsorted is fine: the steps run in the plan's order. */
    assert_int_equal(load("", "{\"rate\": {\"curve\": [10, 90, 50]}}", &p, &d), 0);
    assert_int_equal(p.cycle.param, IOF_CYCLE_RATE);
    assert_int_equal(iof_plan_cycle_steps(&p), 4);
    t = iof_plan_expand(&p, &n);
    assert_non_null(t);
    assert_int_equal(n, 8); /* 2 specs x (unthrottled + 3) */
    for (size_t i = 0; i < n; i++) {
        static const double want[] = {0, 0.10, 0.90, 0.50};
        assert_int_equal(t[i].spec_index, i / 4);
        assert_int_equal(t[i].cycle_value, i % 4);
        assert_true(fabs(t[i].rate_frac - want[i % 4]) < 1e-12);
        /* Unthrottled in the plan: the manager sends the step's rates. */
        assert_int_equal(iof_test_worker(&p, &t[i], 0).rate.unit, IOF_RATE_NONE);
    }
    iof_test_cycle_label(&t[0], label, sizeof(label));
    assert_string_equal(label, "rate=unthrottled");
    iof_test_cycle_label(&t[2], label, sizeof(label));
    assert_string_equal(label, "rate=90%");
    t[2].rate_target = 12345.4;
    iof_test_cycle_label(&t[2], label, sizeof(label));
    assert_string_equal(label, "rate=90%:12345");
    free(t);
    iof_plan_free(&p);

    assert_int_equal(load("", "{\"rate\": {\"find_max\": {\"p999\": \"5ms\"}}}", &p, &d), 0);
    assert_true(p.cycle.rate.find_max);
    assert_int_equal(p.cycle.rate.metric, IOF_KNEE_P999);
    assert_int_equal(p.cycle.rate.target_ns, 5000000);
    assert_int_equal(iof_plan_cycle_steps(&p), 1 + IOF_FIND_MAX_STEPS);
    iof_plan_free(&p);
}

static void test_bad_keys(void **state)
{
    static const struct {
        const char *extra, *cycle, *msg;
    } cases[] = {
        {"", "{\"rate\": {\"curve\": [10, 0]}}", "plan.json: cycle.rate.curve[1]: must be 1..100"},
        {"", "{\"rate\": {\"curve\": [101]}}", "plan.json: cycle.rate.curve[0]: must be 1..100"},
        {"", "{\"rate\": {\"curve\": [\"50\"]}}", "plan.json: cycle.rate.curve[0]:"},
        {"", "{\"rate\": {\"curve\": []}}", "plan.json: cycle.rate.curve:"},
        {"", "{\"rate\": {\"curve\": [50, 50]}}",
         "plan.json: cycle.rate.curve[1]: repeats curve[0]"},
        {"", "{\"rate\": {}}", "plan.json: cycle.rate: must name one of curve, find_max"},
        {"", "{\"rate\": {\"curve\": [5], \"find_max\": {\"p99\": \"1ms\"}}}",
         "plan.json: cycle.rate: must name one of curve, find_max"},
        {"", "{\"rate\": {\"find_max\": {}}}",
         "plan.json: cycle.rate.find_max: must name one of p99, p999, avg"},
        {"", "{\"rate\": {\"find_max\": {\"p95\": \"1ms\"}}}",
         "plan.json: cycle.rate.find_max: unknown key 'p95'"},
        {"", "{\"rate\": {\"find_max\": {\"p99\": \"1ms\", \"avg\": \"1ms\"}}}",
         "plan.json: cycle.rate.find_max: names both 'p99' and 'avg'"},
        {"", "{\"rate\": {\"find_max\": {\"p99\": \"0ms\"}}}",
         "plan.json: cycle.rate.find_max.p99: must be more than 0"},
        {"", "{\"rate\": {\"find_max\": {\"avg\": \"fast\"}}}",
         "plan.json: cycle.rate.find_max.avg: invalid duration"},
        {"",
         "{\"rate\": {\"curve\": [5]}, \"queue_depth\": {\"from\": 1, \"to\": 2, \"step\": "
         "\"+1\"}}",
         "plan.json: cycle: names both 'rate' and 'queue_depth'"},
        {", \"rate\": {\"iops\": 100}", "{\"rate\": {\"curve\": [5]}}",
         "plan.json: workers[0].rate: a rate cycle sets every worker's rate"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct iof_plan p;
        struct iof_diag d = {{0}};
        assert_int_equal(load(cases[i].extra, cases[i].cycle, &p, &d), IOF_EPLAN);
        printf("  %s\n", d.msg);
        assert_non_null(strstr(d.msg, cases[i].msg));
        assert_null(strchr(d.msg, '\n'));
        iof_plan_free(&p);
    }
}

/* A synthetic device: capacity `base` IOPS; offered fraction f achieves
 * min(f, 1) x base; latency from lat(f). Returns the search's answer. */
typedef double (*lat_fn)(double f, double knee);

static double sharp(double f, double knee)
{
    return f <= knee ? 1e6 : 40e6; /* 1 ms within the knee, 40 ms past it */
}

/* Queueing: service 0.5 ms x 1 / (1 - rho), rho = 0.999 f: p99 <= 2 ms
 * holds up to rho = 0.75. */
static double queue(double f, double knee)
{
    (void)knee;
    return 0.5e6 / (1 - 0.999 * f);
}

static struct iof_knee search(const struct iof_rate_cycle *rc, lat_fn lat, double knee, double base)
{
    struct iof_knee k;
    double f = 0;

    iof_knee_init(&k);
    for (size_t step = 0; step < 100; step++) {
        double got = (f > 0 ? f : 1) * base;
        f = iof_knee_feed(&k, rc, f, got, lat(f > 0 ? f : 1, knee));
        if (k.done)
            break;
        assert_true(f > 0 && f < 1);
    }
    assert_true(k.done);
    assert_true(k.steps <= 1 + IOF_FIND_MAX_STEPS);
    return k;
}

static void test_find_max_sharp(void **state)
{
    const struct iof_rate_cycle rc = {
        .find_max = true, .metric = IOF_KNEE_P99, .target_ns = 2000000};
    const double base = 400000;
    size_t met = 0, missed = 0;
    char line[256];

    (void)state;
    /* Knees all over (0, 1): 0.001 .. 0.999. */
    for (double knee = 0.001; knee < 1; knee += 0.00731) {
        struct iof_knee k = search(&rc, sharp, knee, base);
        if (k.best_iops > 0) {
            double found = k.best_iops / base;
            /* At or below the knee, within one final step. */
            assert_true(found <= knee + 1e-12);
            assert_true(knee - found <= IOF_FIND_MAX_PRECISION + 1e-12);
            met++;
        } else {
            /* Only a knee below the lowest step tried is missed. */
            assert_true(knee < 1.0 / 64);
            iof_knee_headline(&k, &rc, line, sizeof(line));
            assert_non_null(strstr(line, "no rate met p99 <= 2 ms"));
            missed++;
        }
    }
    printf("  sharp knees: %zu found within %.0f %% of the unthrottled IOPS, %zu below 1/64\n", met,
           IOF_FIND_MAX_PRECISION * 100, missed);
    assert_true(met > 100 && missed >= 1);
}

static void test_find_max_queueing(void **state)
{
    const struct iof_rate_cycle rc = {
        .find_max = true, .metric = IOF_KNEE_AVG, .target_ns = 2000000};
    const double base = 100000, knee = (1 - 0.5 / 2.0) / 0.999; /* where lat = 2 ms */
    struct iof_knee k;
    char line[256];

    (void)state;
    k = search(&rc, queue, 0, base);
    printf("  queueing: knee %.4f, found %.4f in %zu steps\n", knee, k.best_iops / base, k.steps);
    assert_true(k.best_iops / base <= knee);
    assert_true(knee - k.best_iops / base <= IOF_FIND_MAX_PRECISION);
    assert_int_equal(k.steps, 1 + IOF_FIND_MAX_STEPS);
    iof_knee_headline(&k, &rc, line, sizeof(line));
    assert_non_null(strstr(line, "max 75 k IOPS at avg <= 2 ms"));
}

static void test_find_max_unthrottled_meets(void **state)
{
    const struct iof_rate_cycle rc = {
        .find_max = true, .metric = IOF_KNEE_P99, .target_ns = 2000000};
    struct iof_knee k;
    char line[256];

    (void)state;
    iof_knee_init(&k);
    assert_true(iof_knee_feed(&k, &rc, 0, 412000, 1.5e6) == 0);
    assert_true(k.done);
    assert_int_equal(k.steps, 1);
    iof_knee_headline(&k, &rc, line, sizeof(line));
    assert_non_null(strstr(line, "max 412 k IOPS at p99 <= 2 ms"));
    assert_non_null(strstr(line, "unthrottled"));
}

static void test_start_rates(void **state)
{
    double rates[3] = {1000.5, 0, 250};
    struct proto_msg m, back;
    struct iof_diag d = {{0}};
    char *text;
    size_t len;
    static const char *const bad[] = {
        "{\"type\":\"start\",\"test\":0,\"start_at_ns\":1,\"rates\":[]}",
        "{\"type\":\"start\",\"test\":0,\"start_at_ns\":1,\"rates\":[-1]}",
        "{\"type\":\"start\",\"test\":0,\"start_at_ns\":1,\"rates\":[1e9]}",
        "{\"type\":\"start\",\"test\":0,\"start_at_ns\":1,\"rates\":[\"5\"]}",
        "{\"type\":\"start\",\"test\":0,\"start_at_ns\":1,\"rates\":5}",
    };

    (void)state;
    proto_msg_init(&m, PROTO_MSG_START);
    m.u.start.test = 3;
    m.u.start.start_at_ns = 99;
    m.u.start.rates = rates;
    m.u.start.nrates = 3;
    assert_int_equal(proto_msg_encode(&m, &text, &len, NULL), 0);
    assert_int_equal(proto_msg_decode(text, len, &back, &d), 0);
    assert_int_equal(back.u.start.nrates, 3);
    for (size_t i = 0; i < 3; i++)
        assert_true(back.u.start.rates[i] == rates[i]);
    proto_msg_clear(&back);
    free(text);
    /* Absent: no rates (an older manager's start). */
    m.u.start.nrates = 0;
    assert_int_equal(proto_msg_encode(&m, &text, &len, NULL), 0);
    assert_null(strstr(text, "rates"));
    assert_int_equal(proto_msg_decode(text, len, &back, &d), 0);
    assert_int_equal(back.u.start.nrates, 0);
    proto_msg_clear(&back);
    free(text);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_not_equal(proto_msg_decode(bad[i], strlen(bad[i]), &back, &d), 0);
        printf("  %s\n", d.msg);
        assert_non_null(strstr(d.msg, "start.rates"));
        proto_msg_clear(&back);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_curve_steps),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_find_max_sharp),
        cmocka_unit_test(test_find_max_queueing),
        cmocka_unit_test(test_find_max_unthrottled_meets),
        cmocka_unit_test(test_start_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
