/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_api_session.c - manager/api_auth.c, the session
 * table of the console's sign-in (serve --http-tokens): ids are 64 random
 * hex digits and differ, a session finds its token until it expires, a
 * wrong, truncated or upper-case id finds nothing, sign-out removes only
 * its session, a full table drops the oldest, and sign-in through
 * mgr_api_auth_signin() counts a wrong token as a failure and makes a
 * session mgr_api_auth_check() then accepts with its token's scope. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "manager/api_auth.h"
#include "tmpdir.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct mgr_api_token tok_op = {
    .scope = MGR_API_SCOPE_OPERATOR, .name = "alice", .hash = {1}};
static const struct mgr_api_token tok_view = {
    .scope = MGR_API_SCOPE_VIEWER, .name = "bob", .hash = {2}};

/* Whether the session id finds want's token hash (want NULL: nothing). */
static bool found(struct mgr_api_sessions *s, const char *id, int64_t now,
                  const struct mgr_api_token *want)
{
    unsigned char h[32] = {0};
    bool hit = mgr_api_session_find(s, id, now, h);

    return want ? hit && !memcmp(h, want->hash, 32) : !hit;
}

static void test_new_find_expire(void **state)
{
    struct mgr_api_sessions *s = calloc(1, sizeof(*s));
    char a[MGR_API_SESSION_ID_LEN + 1], b[MGR_API_SESSION_ID_LEN + 1], bad[80];

    (void)state;
    assert_non_null(s);
    assert_int_equal(mgr_api_session_new(s, tok_op.hash, 1000, a), 0);
    assert_int_equal(mgr_api_session_new(s, tok_view.hash, 1001, b), 0);
    assert_int_equal(strlen(a), MGR_API_SESSION_ID_LEN);
    for (size_t i = 0; i < MGR_API_SESSION_ID_LEN; i++)
        assert_true(isxdigit((unsigned char)a[i]) && !isupper((unsigned char)a[i]));
    assert_string_not_equal(a, b);
    assert_true(found(s, a, 1000, &tok_op));
    assert_true(found(s, b, 1000, &tok_view));
    assert_int_equal(mgr_api_session_count(s, 1000), 2);

    /* wrong ids: NULL, empty, truncated, longer, upper case, one digit changed */
    assert_true(found(s, NULL, 1000, NULL));
    assert_true(found(s, "", 1000, NULL));
    snprintf(bad, sizeof(bad), "%.63s", a);
    assert_true(found(s, bad, 1000, NULL));
    snprintf(bad, sizeof(bad), "%s0", a);
    assert_true(found(s, bad, 1000, NULL));
    snprintf(bad, sizeof(bad), "%s", a);
    for (size_t i = 0; i < MGR_API_SESSION_ID_LEN; i++)
        bad[i] = (char)toupper((unsigned char)bad[i]);
    if (strcmp(bad, a))
        assert_true(found(s, bad, 1000, NULL));
    snprintf(bad, sizeof(bad), "%s", a);
    bad[10] = bad[10] == '0' ? '1' : '0';
    assert_true(found(s, bad, 1000, NULL));

    /* a live session until MGR_API_SESSION_S after sign-in, then gone */
    assert_true(found(s, a, 1000 + MGR_API_SESSION_S - 1, &tok_op));
    assert_true(found(s, a, 1000 + MGR_API_SESSION_S, NULL));
    assert_true(found(s, a, 1000, NULL)); /* removed when found expired */
    assert_true(found(s, b, 1000, &tok_view));

    /* sign-out removes that session only, once */
    assert_int_equal(mgr_api_session_new(s, tok_op.hash, 1002, a), 0);
    assert_true(mgr_api_session_end(s, a));
    assert_false(mgr_api_session_end(s, a));
    assert_true(found(s, a, 1002, NULL));
    assert_true(found(s, b, 1002, &tok_view));
    assert_false(mgr_api_session_end(s, "nope"));
    free(s);
}

static void test_full_drops_oldest(void **state)
{
    struct mgr_api_sessions *s = calloc(1, sizeof(*s));
    char(*ids)[MGR_API_SESSION_ID_LEN + 1] = calloc(MGR_API_SESSIONS_MAX + 2, sizeof(*ids));

    (void)state;
    assert_non_null(s);
    assert_non_null(ids);
    for (int i = 0; i < MGR_API_SESSIONS_MAX; i++)
        assert_int_equal(mgr_api_session_new(s, tok_view.hash, 100 + i, ids[i]), 0);
    assert_int_equal(mgr_api_session_count(s, 500), MGR_API_SESSIONS_MAX);
    /* one more: the first (oldest) is dropped, the second still there */
    assert_int_equal(mgr_api_session_new(s, tok_op.hash, 1000, ids[MGR_API_SESSIONS_MAX]), 0);
    assert_int_equal(mgr_api_session_count(s, 1000), MGR_API_SESSIONS_MAX);
    assert_true(found(s, ids[0], 1000, NULL));
    assert_true(found(s, ids[1], 1000, &tok_view));
    assert_true(found(s, ids[MGR_API_SESSIONS_MAX], 1000, &tok_op));
    /* and then the next oldest */
    assert_int_equal(mgr_api_session_new(s, tok_op.hash, 1001, ids[MGR_API_SESSIONS_MAX + 1]), 0);
    assert_true(found(s, ids[1], 1001, NULL));
    assert_true(found(s, ids[2], 1001, &tok_view));
    free(ids);
    free(s);
}

static void test_signin_and_check(void **state)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], op[MGR_API_TOKEN_LEN + 1], view[MGR_API_TOKEN_LEN + 1];
    char id_op[MGR_API_SESSION_ID_LEN + 1], id_view[MGR_API_SESSION_ID_LEN + 1];
    struct iof_diag d = {{0}};
    struct mgr_api_auth *a;
    struct mgr_api_token tok;
    struct sockaddr_in p1 = {.sin_family = AF_INET};
    const struct sockaddr *s1 = (const void *)&p1;

    (void)state;
    inet_pton(AF_INET, "198.18.0.1", &p1.sin_addr);
    assert_int_equal(test_tmpdir_make(dir, "test_api_session"), 0);
    snprintf(path, sizeof(path), "%s/tokens", dir);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_OPERATOR, "alice", op, &d), 0);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_VIEWER, "bob", view, &d), 0);
    assert_int_equal(mgr_api_auth_new(path, &a, &d), 0);

    assert_int_equal(mgr_api_auth_signin(a, "nope", 4, s1, 100, "/s", &tok, id_op),
                     MGR_API_AUTH_WRONG);
    assert_string_equal(id_op, "");
    assert_int_equal(mgr_api_auth_signin(a, "", 0, s1, 100, "/s", &tok, id_op), MGR_API_AUTH_WRONG);
    assert_int_equal(mgr_api_auth_signin(a, op, strlen(op), s1, 100, "/s", &tok, id_op),
                     MGR_API_AUTH_OK);
    assert_string_equal(tok.name, "alice");
    assert_int_equal(mgr_api_auth_signin(a, view, strlen(view), s1, 100, "/s", &tok, id_view),
                     MGR_API_AUTH_OK);
    assert_true(mgr_api_auth_session_live(a, id_op, 100));
    assert_false(mgr_api_auth_session_live(a, NULL, 100));

    /* the cookie acts with its token's scope */
    assert_int_equal(mgr_api_auth_check(a, NULL, id_op, true, s1, 101, "POST", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_string_equal(tok.name, "alice");
    assert_int_equal(mgr_api_auth_check(a, NULL, id_view, false, s1, 101, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_int_equal(mgr_api_auth_check(a, NULL, id_view, true, s1, 101, "POST", "/", &tok),
                     MGR_API_AUTH_SCOPE);
    /* a forged cookie is a wrong credential; a Bearer header goes first */
    assert_int_equal(mgr_api_auth_check(a, NULL, "forged", false, s1, 101, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);
    assert_int_equal(mgr_api_auth_check(a, "Bearer nope", id_op, false, s1, 101, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);
    /* sign-out, then the cookie is refused */
    assert_true(mgr_api_auth_signout(a, id_op));
    assert_false(mgr_api_auth_signout(a, id_op));
    assert_int_equal(mgr_api_auth_check(a, NULL, id_op, false, s1, 102, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);
    /* 5 failures so far: the sign-in shares the bound on failures */
    for (int i = 0; i < MGR_API_FAIL_MAX - 5; i++)
        assert_int_equal(mgr_api_auth_signin(a, "nope", 4, s1, 103, "/s", &tok, id_op),
                         MGR_API_AUTH_WRONG);
    assert_int_equal(mgr_api_auth_signin(a, op, strlen(op), s1, 103, "/s", &tok, id_op),
                     MGR_API_AUTH_THROTTLED);
    assert_int_equal(mgr_api_auth_check(a, NULL, id_view, false, s1, 103, "GET", "/", &tok),
                     MGR_API_AUTH_THROTTLED);
    mgr_api_auth_free(a);
    test_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_find_expire),
        cmocka_unit_test(test_full_drops_oldest),
        cmocka_unit_test(test_signin_and_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
