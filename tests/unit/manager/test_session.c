/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_session.c - manager/session: the state machine of an agent
 * session driven through its transition table. Every legal transition moves
 * the state as the table says; every other (state, event) pair is refused
 * and leaves the state alone; a whole run of an agent (connect, prepare, two
 * tests, a loss and its return) is a path through the table; and the
 * heartbeat period both peers settle on (proto/link.c); and the tally of
 * sessions by state, against a count of the sessions themselves. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "manager/session.h"
#include "proto/link.h"
#include "proto/msg.h"

static struct mgr_session session_in(enum mgr_session_state st)
{
    return (struct mgr_session){.state = st, .name = "node-1", .endpoint = "127.0.0.1:7066"};
}

/* Each row of the table, fired from its state, lands where it says. */
static void test_legal(void **state)
{
    (void)state;
    assert_true(mgr_session_table_len > 0);
    for (size_t i = 0; i < mgr_session_table_len; i++) {
        const struct mgr_session_transition *t = &mgr_session_table[i];
        struct mgr_session s = session_in(t->from);
        enum mgr_session_state to;
        assert_true(mgr_session_next(t->from, t->event, &to));
        assert_int_equal(to, t->to);
        assert_int_equal(mgr_session_fire(&s, t->event), 0);
        assert_int_equal(s.state, t->to);
    }
}

/* No (state, event) pair appears twice: the machine is deterministic. */
static void test_deterministic(void **state)
{
    (void)state;
    for (size_t i = 0; i < mgr_session_table_len; i++)
        for (size_t j = i + 1; j < mgr_session_table_len; j++)
            assert_false(mgr_session_table[i].from == mgr_session_table[j].from &&
                         mgr_session_table[i].event == mgr_session_table[j].event);
}

static bool in_table(enum mgr_session_state from, enum mgr_session_event ev)
{
    for (size_t i = 0; i < mgr_session_table_len; i++)
        if (mgr_session_table[i].from == from && mgr_session_table[i].event == ev)
            return true;
    return false;
}

/* Every pair the table does not list is refused: -EINVAL, state kept. */
static void test_illegal(void **state)
{
    unsigned refused = 0;
    (void)state;
    for (int st = 0; st < MGR_SESSION_NSTATES; st++)
        for (int ev = 0; ev < MGR_SESSION_NEVENTS; ev++) {
            struct mgr_session s = session_in((enum mgr_session_state)st);
            enum mgr_session_state to = MGR_SESSION_GONE;
            if (in_table((enum mgr_session_state)st, (enum mgr_session_event)ev))
                continue;
            assert_false(
                mgr_session_next((enum mgr_session_state)st, (enum mgr_session_event)ev, &to));
            assert_int_equal(mgr_session_fire(&s, (enum mgr_session_event)ev), -EINVAL);
            assert_int_equal(s.state, st);
            refused++;
        }
    assert_int_equal(refused, MGR_SESSION_NSTATES * MGR_SESSION_NEVENTS - mgr_session_table_len);
    /* A few that would hide bugs if they were allowed. */
    assert_false(in_table(MGR_SESSION_CONNECTED, MGR_SESSION_EV_WELCOME)); /* before hello */
    assert_false(in_table(MGR_SESSION_READY, MGR_SESSION_EV_TEST_BEGIN));  /* not prepared */
    assert_false(in_table(MGR_SESSION_PROBING, MGR_SESSION_EV_START));     /* clock unknown */
    assert_false(in_table(MGR_SESSION_SETUP, MGR_SESSION_EV_START));       /* not set up */
    assert_false(in_table(MGR_SESSION_SETUP, MGR_SESSION_EV_CLOCK_DONE));  /* not probed */
    assert_false(in_table(MGR_SESSION_RESULTED, MGR_SESSION_EV_RESULT));   /* twice */
    assert_false(in_table(MGR_SESSION_FAILED, MGR_SESSION_EV_REDIAL));     /* failed stays */
    /* ...but its slot can be freed for a new connection (iofleet serve). */
    assert_true(in_table(MGR_SESSION_FAILED, MGR_SESSION_EV_DROP));
    assert_false(in_table(MGR_SESSION_GONE, MGR_SESSION_EV_LINK_UP));
}

/* Every state but the first is reached by some transition, and every state
 * and event has a distinct name. */
static void test_reachable_and_named(void **state)
{
    (void)state;
    for (int st = 1; st < MGR_SESSION_NSTATES; st++) {
        bool reached = false;
        for (size_t i = 0; i < mgr_session_table_len; i++)
            reached |= mgr_session_table[i].to == (enum mgr_session_state)st;
        assert_true(reached);
    }
    for (int a = 0; a < MGR_SESSION_NSTATES; a++)
        for (int b = a + 1; b < MGR_SESSION_NSTATES; b++)
            assert_string_not_equal(mgr_session_state_name((enum mgr_session_state)a),
                                    mgr_session_state_name((enum mgr_session_state)b));
    for (int a = 0; a < MGR_SESSION_NEVENTS; a++)
        for (int b = a + 1; b < MGR_SESSION_NEVENTS; b++)
            assert_string_not_equal(mgr_session_event_name((enum mgr_session_event)a),
                                    mgr_session_event_name((enum mgr_session_event)b));
    assert_string_equal(mgr_session_state_name(MGR_SESSION_NSTATES), "?");
}

/* A dialled agent through a run: connect, prepare, test 1, lost in test 2,
 * dialled again, back for test 3. */
static void test_run_path(void **state)
{
    static const struct {
        enum mgr_session_event ev;
        enum mgr_session_state to;
    } path[] = {
        {MGR_SESSION_EV_LINK_UP, MGR_SESSION_CONNECTED},
        {MGR_SESSION_EV_HELLO, MGR_SESSION_HELLO},
        {MGR_SESSION_EV_WELCOME, MGR_SESSION_READY},
        {MGR_SESSION_EV_PLAN_SENT, MGR_SESSION_PREPARING},
        {MGR_SESSION_EV_PREPARED, MGR_SESSION_PREPARED},
        {MGR_SESSION_EV_TEST_BEGIN, MGR_SESSION_PROBING},
        {MGR_SESSION_EV_CLOCK_DONE, MGR_SESSION_SYNCED},
        {MGR_SESSION_EV_START, MGR_SESSION_RUNNING},
        {MGR_SESSION_EV_RESULT, MGR_SESSION_RESULTED},
        {MGR_SESSION_EV_TEST_END, MGR_SESSION_PREPARED},
        {MGR_SESSION_EV_SETUP_SENT, MGR_SESSION_SETUP}, /* protocol 1.4: set up first */
        {MGR_SESSION_EV_READY, MGR_SESSION_PROBING},
        {MGR_SESSION_EV_CLOCK_DONE, MGR_SESSION_SYNCED},
        {MGR_SESSION_EV_START, MGR_SESSION_RUNNING},
        {MGR_SESSION_EV_RESULT, MGR_SESSION_RESULTED},
        {MGR_SESSION_EV_TEST_END, MGR_SESSION_PREPARED},
        {MGR_SESSION_EV_TEST_BEGIN, MGR_SESSION_PROBING},
        {MGR_SESSION_EV_CLOCK_DONE, MGR_SESSION_SYNCED},
        {MGR_SESSION_EV_START, MGR_SESSION_RUNNING},
        {MGR_SESSION_EV_LOST, MGR_SESSION_LOST},
        {MGR_SESSION_EV_REDIAL, MGR_SESSION_REJOINING},
        {MGR_SESSION_EV_REDIAL_NOW, MGR_SESSION_DIALLING},
        {MGR_SESSION_EV_REDIAL, MGR_SESSION_REJOINING}, /* not up yet */
        {MGR_SESSION_EV_REDIAL_NOW, MGR_SESSION_DIALLING},
        {MGR_SESSION_EV_LINK_UP, MGR_SESSION_CONNECTED},
        {MGR_SESSION_EV_HELLO, MGR_SESSION_HELLO},
        {MGR_SESSION_EV_WELCOME, MGR_SESSION_READY},
        {MGR_SESSION_EV_PLAN_SENT, MGR_SESSION_PREPARING},
        {MGR_SESSION_EV_PREPARED, MGR_SESSION_PREPARED},
        {MGR_SESSION_EV_TEST_BEGIN, MGR_SESSION_PROBING},
    };
    struct mgr_session s = session_in(MGR_SESSION_DIALLING);
    (void)state;
    for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
        assert_int_equal(mgr_session_fire(&s, path[i].ev), 0);
        assert_int_equal(s.state, path[i].to);
    }
    /* the predicates the run's phases use */
    assert_true(mgr_session_in_test(s.state));
    assert_true(mgr_session_is_up(s.state));
    assert_false(mgr_session_connecting(s.state));
    assert_true(mgr_session_connecting(MGR_SESSION_HELLO));
    assert_false(mgr_session_is_up(MGR_SESSION_LOST));
    assert_false(mgr_session_in_test(MGR_SESSION_PREPARED));
}

/* The period both peers use: the agent's decision when it sent one, else the
 * larger of both, our 0 meaning the default. */
static void test_heartbeat(void **state)
{
    (void)state;
    assert_int_equal(proto_link_heartbeat_ms(0, 0, 0), PROTO_HEARTBEAT_MS_DEFAULT);
    assert_int_equal(proto_link_heartbeat_ms(500, 2000, 0), 2000);
    assert_int_equal(proto_link_heartbeat_ms(3000, 2000, 0), 3000);
    assert_int_equal(proto_link_heartbeat_ms(0, PROTO_HEARTBEAT_MS_DEFAULT + 1, 0),
                     PROTO_HEARTBEAT_MS_DEFAULT + 1);
    assert_int_equal(proto_link_heartbeat_ms(3000, 2000, 5000), 5000); /* the agent decided */
    assert_int_equal(proto_link_heartbeat_ms(9000, 0, 5000), 5000);    /* capped by it */
}

/* docs/architecture.md draws the machine: its Mermaid diagram has exactly
 * the table's transitions ("FROM --> TO: event"), nothing more. */
static void test_diagram(void **state)
{
    const char *src = __FILE__, *tail = strstr(src, "tests/unit/manager/test_session.c");
    char path[4096], line[512];
    bool in = false;
    size_t edges = 0;
    FILE *f;
    (void)state;

    if (!tail || src[0] != '/')
        skip(); /* built without an absolute source path: the doc is not at hand */
    snprintf(path, sizeof(path), "%.*sdocs/architecture.md", (int)(tail - src), src);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        char from[64], to[64], ev[64];
        if (!strncmp(line, "stateDiagram-v2", 15)) {
            in = true;
            continue;
        }
        if (in && !strncmp(line, "```", 3))
            break;
        if (!in || strstr(line, "[*]"))
            continue;
        if (sscanf(line, " %63s --> %63[^:]: %63s", from, to, ev) != 3)
            continue;
        edges++;
        {
            bool found = false;
            for (size_t i = 0; i < mgr_session_table_len; i++) {
                const struct mgr_session_transition *t = &mgr_session_table[i];
                char want_from[64], want_to[64];
                size_t n;
                snprintf(want_from, sizeof(want_from), "%s", mgr_session_state_name(t->from));
                snprintf(want_to, sizeof(want_to), "%s", mgr_session_state_name(t->to));
                for (n = 0; want_from[n]; n++)
                    want_from[n] =
                        (char)(want_from[n] - 32 * (want_from[n] >= 'a' && want_from[n] <= 'z'));
                for (n = 0; want_to[n]; n++)
                    want_to[n] = (char)(want_to[n] - 32 * (want_to[n] >= 'a' && want_to[n] <= 'z'));
                found |= !strcmp(from, want_from) && !strcmp(to, want_to) &&
                         !strcmp(ev, mgr_session_event_name(t->event));
            }
            if (!found)
                fail_msg("docs/architecture.md: %s --> %s: %s is not in the table", from, to, ev);
        }
    }
    fclose(f);
    assert_true(in);
    assert_int_equal(edges, mgr_session_table_len);
}

/* Counts of states by scanning, to check the tally against. */
static unsigned scan(const struct mgr_session *s, size_t n, bool (*pred)(enum mgr_session_state),
                     bool members)
{
    unsigned k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i].tally && pred(s[i].state) && (!members || s[i].member);
    return k;
}

static bool any_state(enum mgr_session_state st)
{
    (void)st;
    return true;
}

static bool not_gone(enum mgr_session_state st)
{
    return st != MGR_SESSION_GONE;
}

/* The tally equals a scan of the sessions after every step of a random walk
 * over the table's transitions, with refused events, new members, sessions
 * taken out and reset (as a reused agent slot is) and put back. */
static void test_tally(void **state)
{
    enum { N = 64, STEPS = 20000 };
    static struct mgr_session s[N];
    struct mgr_session_tally t = {0};
    bool (*preds[])(enum mgr_session_state) = {any_state, not_gone, mgr_session_is_up,
                                               mgr_session_in_test, mgr_session_connecting};
    unsigned seed = 12345;
    (void)state;

    iof_log_init("test_session", IOF_LOG_ERROR); /* refused events are logged as warnings */
    for (size_t i = 0; i < N; i++) {
        s[i] = (struct mgr_session){.name = "a", .endpoint = "e"};
        mgr_session_attach(&s[i], &t);
    }
    for (unsigned step = 0; step < STEPS; step++) {
        struct mgr_session *x = &s[(seed = seed * 1103515245u + 12345u) >> 16 & (N - 1)];
        unsigned r = (seed = seed * 1103515245u + 12345u) >> 16;
        if (r % 50 == 0) {
            mgr_session_detach(x);
            mgr_session_detach(x); /* twice: no effect */
            *x = (struct mgr_session){.name = "a", .endpoint = "e"};
            mgr_session_attach(x, &t);
        } else if (r % 17 == 0) {
            mgr_session_set_member(x);
        } else {
            (void)mgr_session_fire(x, (enum mgr_session_event)(r % MGR_SESSION_NEVENTS));
        }
        for (size_t p = 0; p < sizeof(preds) / sizeof(preds[0]); p++) {
            assert_int_equal(mgr_session_tally_count(&t, preds[p], false),
                             scan(s, N, preds[p], false));
            assert_int_equal(mgr_session_tally_count(&t, preds[p], true),
                             scan(s, N, preds[p], true));
        }
    }
    assert_int_equal(mgr_session_tally_count(&t, any_state, false), N);
    for (size_t i = 0; i < N; i++)
        mgr_session_detach(&s[i]);
    for (int st = 0; st < MGR_SESSION_NSTATES; st++) {
        assert_int_equal(t.n[st], 0);
        assert_int_equal(t.members[st], 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legal),    cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_illegal),  cmocka_unit_test(test_reachable_and_named),
        cmocka_unit_test(test_run_path), cmocka_unit_test(test_heartbeat),
        cmocka_unit_test(test_diagram),  cmocka_unit_test(test_tally),
    };
    /* refusals are logged as warnings: keep the test's output to failures */
    iof_log_init("test_session", IOF_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
