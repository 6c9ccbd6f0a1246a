/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_serve_live.c - manager/serve_live.c's event
 * stream: a stream reads the events after the one it names, each with its
 * id; one that fell more than MGR_LIVE_EVENTS behind skips the oldest,
 * is told so in a "resync" event and the skips are counted, while the
 * recording side never waits for it; closing ends every stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <microhttpd.h>

#include "manager/serve_live.h"

/* The next chunk of s as a string (a whole event: it fits buf). */
static const char *next_chunk(struct mgr_serve_live_stream *s, char *buf, size_t cap)
{
    ssize_t n = mgr_serve_live_stream_read(s, buf, cap - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    return buf;
}

static void agents(struct mgr_serve_live *l, unsigned i)
{
    char json[64];
    int n = snprintf(json, sizeof(json), "{\"agents\":[{\"name\":\"a%u\"}]}\n", i);
    mgr_serve_live_agents(l, json, (size_t)n, NULL);
}

static void test_resume_after(void **state)
{
    struct mgr_serve_live *l;
    struct mgr_serve_live_stream *s;
    char buf[4096];

    (void)state;
    assert_int_equal(mgr_serve_live_new(&l), 0);
    for (unsigned i = 1; i <= 3; i++)
        agents(l, i);
    assert_non_null(s = mgr_serve_live_stream_new(l, "1", NULL));
    assert_string_equal(next_chunk(s, buf, sizeof(buf)), "retry: 2000\n\n");
    assert_string_equal(next_chunk(s, buf, sizeof(buf)),
                        "id: 2\nevent: agents\ndata:{\"agents\":[{\"name\":\"a3\"}]}\n\n");
    assert_string_equal(next_chunk(s, buf, sizeof(buf)),
                        "id: 3\nevent: agents\ndata:{\"agents\":[{\"name\":\"a3\"}]}\n\n");
    mgr_serve_live_close(l);
    assert_int_equal(mgr_serve_live_stream_read(s, buf, sizeof(buf)),
                     MHD_CONTENT_READER_END_OF_STREAM);
    mgr_serve_live_stream_free(s);
    mgr_serve_live_free(l);
}

static void test_slow_stream_skips(void **state)
{
    struct mgr_serve_live *l;
    struct mgr_serve_live_stream *s;
    struct mgr_serve_live_stats st;
    char buf[4096], want[128];
    unsigned total = MGR_LIVE_EVENTS + 100;

    (void)state;
    assert_int_equal(mgr_serve_live_new(&l), 0);
    agents(l, 0);
    assert_non_null(s = mgr_serve_live_stream_new(l, NULL, NULL)); /* from now: after event 1 */
    assert_string_equal(next_chunk(s, buf, sizeof(buf)), "retry: 2000\n\n");
    /* The loop goes on recording while the stream reads nothing. */
    for (unsigned i = 1; i <= total; i++)
        agents(l, i);
    mgr_serve_live_stats(l, &st);
    assert_int_equal(st.events, total + 1);
    assert_int_equal(st.skipped, 0);
    /* Events 2 .. total+1 were recorded; the ring keeps the last MGR_LIVE_EVENTS. */
    snprintf(want, sizeof(want), "event: resync\ndata:{\"skipped\":%u}\n\n",
             total - MGR_LIVE_EVENTS);
    assert_string_equal(next_chunk(s, buf, sizeof(buf)), want);
    snprintf(want, sizeof(want), "id: %u\nevent: agents\n", total + 1 - MGR_LIVE_EVENTS + 1);
    assert_memory_equal(next_chunk(s, buf, sizeof(buf)), want, strlen(want));
    mgr_serve_live_stats(l, &st);
    assert_int_equal(st.skipped, total - MGR_LIVE_EVENTS);
    mgr_serve_live_close(l);
    mgr_serve_live_stream_free(s);
    mgr_serve_live_free(l);
}

static void test_no_run_yet(void **state)
{
    struct mgr_serve_live *l;
    struct iof_buf b;
    char msg[256];

    (void)state;
    assert_int_equal(mgr_serve_live_new(&l), 0);
    iof_buf_init(&b, 1 << 20);
    assert_int_equal(mgr_serve_live_last(l, &b, msg, sizeof(msg)), 404);
    assert_non_null(strstr(msg, "no run has begun"));
    iof_buf_free(&b);
    mgr_serve_live_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_after),
        cmocka_unit_test(test_slow_stream_skips),
        cmocka_unit_test(test_no_run_yet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
