/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/manager/test_api_auth.c - manager/api_auth.c, the tokens of
 * `iofleet serve --http-tokens`: the file's parser (good lines, comments,
 * CRLF, and each refusal with its line and reason), SHA-256 against a known
 * vector, the lookup, the Bearer header, `serve token new` writing a hash
 * that the loader finds (mode 0600, a second name refused, a file others
 * may read or a symbolic link refused), the request check's scopes and the
 * bound on failures per peer, the address rule, and the file read again
 * when it changes or on SIGHUP (a token removed refused with its sessions,
 * a scope changed followed, a bad file closing the API until it is good). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/log.h"
#include "manager/api_auth.h"
#include "tmpdir.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* SHA-256("abc"), FIPS 180-2 appendix B.1. */
#define ABC_HEX "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define H1 "1111111111111111111111111111111111111111111111111111111111111111"

static void test_hash_vector(void **state)
{
    unsigned char h[32];
    char hex[65];

    (void)state;
    mgr_api_token_hash("abc", 3, h);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", h[i]);
    assert_string_equal(hex, ABC_HEX);
}

static void test_parse_good(void **state)
{
    static const char text[] =
        "# a comment\n"
        "\n"
        "operator alice " ABC_HEX "\r\n"
        "  viewer\tbob.x_y-1   " H1 "  \n"
        "#viewer carol " H1 "\n"
        "viewer dave 2222222222222222222222222222222222222222222222222222222222222222";
    struct iof_diag d = {{0}};
    struct mgr_api_tokens t;
    const struct mgr_api_token *e;

    (void)state;
    assert_int_equal(mgr_api_tokens_parse("F", text, strlen(text), &t, &d), 0);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.v[0].scope, MGR_API_SCOPE_OPERATOR);
    assert_string_equal(t.v[0].name, "alice");
    assert_int_equal(t.v[0].line, 3);
    assert_int_equal(t.v[1].scope, MGR_API_SCOPE_VIEWER);
    assert_string_equal(t.v[1].name, "bob.x_y-1");
    assert_string_equal(t.v[2].name, "dave");
    e = mgr_api_tokens_find(&t, "abc", 3);
    assert_non_null(e);
    assert_string_equal(e->name, "alice");
    assert_null(mgr_api_tokens_find(&t, "abd", 3));
    assert_null(mgr_api_tokens_find(&t, "", 0));
    mgr_api_tokens_free(&t);
    assert_null(t.v);
}

static void expect_refused(const char *text, const char *msg)
{
    struct iof_diag d = {{0}};
    struct mgr_api_tokens t;

    assert_int_equal(mgr_api_tokens_parse("F", text, strlen(text), &t, &d), -EINVAL);
    if (!strstr(d.msg, msg))
        fail_msg("'%s': got '%s', want '%s'", text, d.msg, msg);
    assert_null(t.v);
    assert_int_equal(t.n, 0);
}

static void test_parse_refusals(void **state)
{
    (void)state;
    expect_refused("", "F: no token in it (iofleet serve token new --http-tokens F adds one)");
    expect_refused("# only\n\n", "F: no token in it");
    expect_refused("admin alice " ABC_HEX "\n",
                   "F:1: scope 'admin' is neither viewer nor operator");
    expect_refused("\nviewer alice\n",
                   "F:2: 2 fields, not 3 (SCOPE NAME SHA256-HEX, or cert NAME SCOPE)");
    expect_refused("cert alice admin\n", "F:1: scope 'admin' is neither viewer nor operator");
    expect_refused("cert al/ice viewer\n",
                   "F:1: certificate name 'al/ice' may hold only letters, digits");
    expect_refused("cert alice viewer\ncert alice operator\n",
                   "F:2: certificate name 'alice' is on line 1 too");
    expect_refused("viewer alice " ABC_HEX " x\n", "F:1: 4 fields, not 3");
    expect_refused("viewer al/ice " ABC_HEX "\n",
                   "F:1: name 'al/ice' may hold only letters, digits, '.', '_' and '-'");
    expect_refused("viewer alice abc\n", "F:1: the hash is 3 characters, not 64 hex digits");
    /* A token pasted in, or any long field, is never quoted into the log. */
    expect_refused("iofleet_" H1 " alice " H1 "\n",
                   "F:1: scope (a token itself, not shown: the file holds tokens' SHA-256)");
    expect_refused("cert alice iofleet_" H1 "\n", "F:1: scope (a token itself, not shown");
    expect_refused("viewer iofleet_" H1 " " H1 "\n", "F:1: name (a token itself, not shown");
    expect_refused("viewer al/ice" H1 " " H1 "\n",
                   "F:1: name (70 characters, not shown) is over 64 characters");
    expect_refused("viewer alice " H1 "0\n", "F:1: the hash is 65 characters");
    expect_refused(
        "viewer alice g111111111111111111111111111111111111111111111111111111111111111\n",
        "F:1: the hash holds a character that is not a hex digit");
    expect_refused(
        "viewer alice 0000000000000000000000000000000000000000000000000000000000000000\n",
        "F:1: the hash is all zeros");
    expect_refused("viewer alice " H1 "\noperator alice " ABC_HEX "\n",
                   "F:2: name 'alice' is on line 1 too");
    expect_refused("viewer alice " H1 "\n#\noperator bob " H1 "\n",
                   "F:3: the same hash as line 1 ('alice')");
}

/* "cert NAME SCOPE" lines: found by name only, never by a token (their
 * hash is zeros), and a token may have a certificate's name. */
static void test_parse_cert_lines(void **state)
{
    static const char text[] = "cert alice operator\n"
                               "viewer alice " ABC_HEX "\n"
                               "cert node1 viewer\n";
    struct iof_diag d = {{0}};
    struct mgr_api_tokens t;
    const struct mgr_api_token *e;
    unsigned char zero[32] = {0};

    (void)state;
    assert_int_equal(mgr_api_tokens_parse("F", text, strlen(text), &t, &d), 0);
    assert_int_equal(t.n, 3);
    e = mgr_api_tokens_find_cert(&t, "alice");
    assert_non_null(e);
    assert_true(e->cert);
    assert_int_equal(e->scope, MGR_API_SCOPE_OPERATOR);
    e = mgr_api_tokens_find_cert(&t, "node1");
    assert_non_null(e);
    assert_int_equal(e->scope, MGR_API_SCOPE_VIEWER);
    assert_null(mgr_api_tokens_find_cert(&t, "bob"));
    assert_null(mgr_api_tokens_find_cert(&t, "ALICE"));
    e = mgr_api_tokens_find(&t, "abc", 3);
    assert_non_null(e);
    assert_false(e->cert);
    assert_int_equal(e->scope, MGR_API_SCOPE_VIEWER);
    assert_null(mgr_api_tokens_find_hash(&t, zero));
    mgr_api_tokens_free(&t);
}

static void test_bearer(void **state)
{
    const char *t;
    size_t n;

    (void)state;
    assert_true(mgr_api_bearer("Bearer abc", &t, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(t, "abc", 3);
    assert_true(mgr_api_bearer("  bearer \t xyz  ", &t, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(t, "xyz", 3);
    assert_true(mgr_api_bearer("Bearer ", &t, &n));
    assert_int_equal(n, 0);
    assert_false(mgr_api_bearer(NULL, &t, &n));
    assert_false(mgr_api_bearer("Basic YWxpY2U6eA==", &t, &n));
    assert_false(mgr_api_bearer("Bearerabc", &t, &n));
}

static void test_token_new_and_load(void **state)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], link[PATH_MAX + 16];
    char op[MGR_API_TOKEN_LEN + 1], view[MGR_API_TOKEN_LEN + 1], again[MGR_API_TOKEN_LEN + 1];
    struct iof_diag d = {{0}};
    struct mgr_api_tokens t;
    const struct mgr_api_token *e;
    struct stat st;

    (void)state;
    assert_int_equal(test_tmpdir_make(dir, "test_api_auth"), 0);
    snprintf(path, sizeof(path), "%s/tokens", dir);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_OPERATOR, "alice", op, &d), 0);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_VIEWER, "bob", view, &d), 0);
    assert_int_equal(strlen(op), MGR_API_TOKEN_LEN);
    assert_memory_equal(op, MGR_API_TOKEN_PREFIX, strlen(MGR_API_TOKEN_PREFIX));
    assert_string_not_equal(op, view);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);

    assert_int_equal(mgr_api_tokens_load(path, &t, &d), 0);
    assert_int_equal(t.n, 2);
    e = mgr_api_tokens_find(&t, op, strlen(op));
    assert_non_null(e);
    assert_string_equal(e->name, "alice");
    assert_int_equal(e->scope, MGR_API_SCOPE_OPERATOR);
    e = mgr_api_tokens_find(&t, view, strlen(view));
    assert_non_null(e);
    assert_int_equal(e->scope, MGR_API_SCOPE_VIEWER);
    assert_null(mgr_api_tokens_find(&t, op, strlen(op) - 1));
    mgr_api_tokens_free(&t);

    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_VIEWER, "alice", again, &d), -EEXIST);
    assert_non_null(strstr(d.msg, "already has a token of that name (line 2)"));
    assert_string_equal(again, "");
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_VIEWER, "", again, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "--name '' is empty"));

    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(mgr_api_tokens_load(path, &t, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "mode 0640 lets others than its owner read it"));
    assert_int_equal(chmod(path, 0602), 0);
    assert_int_equal(mgr_api_tokens_load(path, &t, &d), -EINVAL);
    assert_non_null(
        strstr(d.msg, "mode 0602 lets others than its owner write (add a token to) it"));
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_VIEWER, "carol", again, &d), -EINVAL);
    assert_int_equal(chmod(path, 0600), 0);

    snprintf(link, sizeof(link), "%s/link", dir);
    assert_int_equal(symlink(path, link), 0);
    assert_int_not_equal(mgr_api_tokens_load(link, &t, &d), 0);
    assert_non_null(strstr(d.msg, "a symbolic link"));
    test_tmpdir_remove(dir);
}

static struct sockaddr_in peer4(const char *a)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, a, &sa.sin_addr);
    return sa;
}

static void test_check_scopes_and_failures(void **state)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], op[MGR_API_TOKEN_LEN + 1], view[MGR_API_TOKEN_LEN + 1],
        hdr_op[MGR_API_TOKEN_LEN + 16], hdr_view[MGR_API_TOKEN_LEN + 16];
    struct iof_diag d = {{0}};
    struct mgr_api_auth *a;
    struct mgr_api_token tok;
    struct sockaddr_in p1 = peer4("198.18.0.1"), p2 = peer4("198.18.0.2");
    const struct sockaddr *s1 = (const void *)&p1, *s2 = (const void *)&p2;

    (void)state;
    assert_int_equal(test_tmpdir_make(dir, "test_api_auth"), 0);
    snprintf(path, sizeof(path), "%s/tokens", dir);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_OPERATOR, "alice", op, &d), 0);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_VIEWER, "bob", view, &d), 0);
    snprintf(hdr_op, sizeof(hdr_op), "Bearer %s", op);
    snprintf(hdr_view, sizeof(hdr_view), "Bearer %s", view);
    assert_int_equal(mgr_api_auth_new(path, &a, &d), 0);

    assert_int_equal(mgr_api_auth_check(a, hdr_view, NULL, false, s1, 100, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_string_equal(tok.name, "bob");
    assert_int_equal(mgr_api_auth_check(a, hdr_view, NULL, true, s1, 100, "POST", "/", &tok),
                     MGR_API_AUTH_SCOPE);
    assert_int_equal(mgr_api_auth_check(a, hdr_op, NULL, true, s1, 100, "POST", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_int_equal(mgr_api_auth_check(a, NULL, NULL, false, s1, 100, "GET", "/", &tok),
                     MGR_API_AUTH_MISSING);
    assert_string_equal(tok.name, "");
    /* 1 failure so far: 19 more wrong tokens, then even a good one is refused */
    for (int i = 0; i < MGR_API_FAIL_MAX - 1; i++)
        assert_int_equal(
            mgr_api_auth_check(a, "Bearer nope", NULL, false, s1, 100 + i, "GET", "/\n", &tok),
            MGR_API_AUTH_WRONG);
    assert_int_equal(mgr_api_auth_check(a, hdr_op, NULL, false, s1, 130, "GET", "/", &tok),
                     MGR_API_AUTH_THROTTLED);
    /* another peer is not affected; the window ends after MGR_API_FAIL_WINDOW_S */
    assert_int_equal(mgr_api_auth_check(a, hdr_op, NULL, false, s2, 130, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_int_equal(mgr_api_auth_check(a, hdr_op, NULL, false, s1, 100 + MGR_API_FAIL_WINDOW_S,
                                        "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    mgr_api_auth_free(a);
    test_tmpdir_remove(dir);
}

/* Writes text to path as an editor that renames into place does (mode). */
static void put_file(const char *path, const char *text, mode_t mode)
{
    char tmp[PATH_MAX + 32];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.new", path);
    assert_non_null(f = fopen(tmp, "w"));
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(tmp, mode), 0);
    assert_int_equal(rename(tmp, path), 0);
}

/* The file's line for token (scope, name). */
static void token_line(char *out, size_t cap, const char *scope, const char *name, const char *tok)
{
    unsigned char h[32];
    size_t n = (size_t)snprintf(out, cap, "%s %s ", scope, name);

    mgr_api_token_hash(tok, strlen(tok), h);
    for (int i = 0; i < 32; i++)
        n += (size_t)snprintf(out + n, cap - n, "%02x", h[i]);
    snprintf(out + n, cap - n, "\n");
}

static void test_reload(void **state)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], op[MGR_API_TOKEN_LEN + 1], view[MGR_API_TOKEN_LEN + 1],
        hop[MGR_API_TOKEN_LEN + 16], hview[MGR_API_TOKEN_LEN + 16];
    char sop[MGR_API_SESSION_ID_LEN + 1], sview[MGR_API_SESSION_ID_LEN + 1];
    char l_op[160], l_view[160], l_view_op[160], text[640], why[512];
    struct iof_diag d = {{0}};
    struct mgr_api_auth *a;
    struct mgr_api_token tok;
    struct sockaddr_in p1 = peer4("198.18.0.1");
    const struct sockaddr *s1 = (const void *)&p1;

    (void)state;
    assert_int_equal(test_tmpdir_make(dir, "test_api_auth"), 0);
    snprintf(path, sizeof(path), "%s/tokens", dir);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_OPERATOR, "alice", op, &d), 0);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_VIEWER, "bob", view, &d), 0);
    snprintf(hop, sizeof(hop), "Bearer %s", op);
    snprintf(hview, sizeof(hview), "Bearer %s", view);
    token_line(l_op, sizeof(l_op), "operator", "alice", op);
    token_line(l_view, sizeof(l_view), "viewer", "bob", view);
    token_line(l_view_op, sizeof(l_view_op), "operator", "bob", view);
    assert_int_equal(mgr_api_auth_new(path, &a, &d), 0);
    assert_int_equal(mgr_api_auth_signin(a, op, strlen(op), s1, 10, "/s", &tok, sop),
                     MGR_API_AUTH_OK);
    assert_int_equal(mgr_api_auth_signin(a, view, strlen(view), s1, 10, "/s", &tok, sview),
                     MGR_API_AUTH_OK);

    /* alice's line removed, bob made an operator: not looked at again in
     * the same second, then at once */
    snprintf(text, sizeof(text), "# edited\n%s", l_view_op);
    put_file(path, text, 0600);
    assert_int_equal(mgr_api_auth_check(a, hop, NULL, false, s1, 10, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_int_equal(mgr_api_auth_check(a, hop, NULL, false, s1, 11, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);
    assert_false(mgr_api_auth_session_live(a, sop, 11));
    assert_int_equal(mgr_api_auth_check(a, NULL, sop, false, s1, 11, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);
    assert_int_equal(mgr_api_auth_check(a, hview, NULL, true, s1, 11, "POST", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_int_equal(tok.scope, MGR_API_SCOPE_OPERATOR);
    /* bob's session follows his scope */
    assert_int_equal(mgr_api_auth_check(a, NULL, sview, true, s1, 11, "POST", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_string_equal(tok.name, "bob");
    /* alice's line back: her token again, but her session has ended */
    snprintf(text, sizeof(text), "%s%s", l_op, l_view);
    put_file(path, text, 0600);
    assert_int_equal(mgr_api_auth_check(a, hop, NULL, false, s1, 12, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_int_equal(mgr_api_auth_check(a, NULL, sop, false, s1, 12, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);
    assert_int_equal(mgr_api_auth_check(a, NULL, sview, true, s1, 12, "POST", "/", &tok),
                     MGR_API_AUTH_SCOPE);
    assert_false(mgr_api_auth_closed(a, why, sizeof(why)));

    /* a malformed file closes the API: every token and session refused, the line named */
    snprintf(text, sizeof(text), "%sviewer carol 1234\n", l_view);
    put_file(path, text, 0600);
    assert_int_equal(mgr_api_auth_check(a, hview, NULL, false, s1, 13, "GET", "/", &tok),
                     MGR_API_AUTH_CLOSED);
    assert_int_equal(mgr_api_auth_check(a, NULL, sview, false, s1, 13, "GET", "/", &tok),
                     MGR_API_AUTH_CLOSED);
    assert_int_equal(mgr_api_auth_signin(a, view, strlen(view), s1, 13, "/s", &tok, sop),
                     MGR_API_AUTH_CLOSED);
    assert_false(mgr_api_auth_session_live(a, sview, 13));
    assert_true(mgr_api_auth_closed(a, why, sizeof(why)));
    assert_non_null(strstr(why, ":2: the hash is 4 characters"));
    assert_non_null(strstr(why, path));
    /* good again: bob's session is back */
    put_file(path, l_view, 0600);
    assert_int_equal(mgr_api_auth_check(a, NULL, sview, false, s1, 14, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    /* insecure (others may read it), then missing: closed, each with its reason */
    put_file(path, l_view, 0644);
    assert_int_equal(mgr_api_auth_check(a, hview, NULL, false, s1, 15, "GET", "/", &tok),
                     MGR_API_AUTH_CLOSED);
    assert_true(mgr_api_auth_closed(a, why, sizeof(why)));
    assert_non_null(strstr(why, "mode 0644 lets others than its owner read it"));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mgr_api_auth_check(a, hview, NULL, false, s1, 16, "GET", "/", &tok),
                     MGR_API_AUTH_CLOSED);
    assert_true(mgr_api_auth_closed(a, why, sizeof(why)));
    assert_non_null(strstr(why, "No such file or directory"));
    /* a closed API counts no failure: no throttle after many refusals */
    for (int i = 0; i < 2 * MGR_API_FAIL_MAX; i++)
        assert_int_equal(mgr_api_auth_check(a, hview, NULL, false, s1, 16, "GET", "/", &tok),
                         MGR_API_AUTH_CLOSED);

    /* a file renamed into place is not looked at again in the same second */
    put_file(path, l_op, 0600);
    assert_int_equal(mgr_api_auth_check(a, hop, NULL, false, s1, 16, "GET", "/", &tok),
                     MGR_API_AUTH_CLOSED);
    assert_int_equal(mgr_api_auth_check(a, hop, NULL, false, s1, 17, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_int_equal(mgr_api_auth_check(a, hview, NULL, false, s1, 17, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);

    /* rewritten in place with its size and mtime kept: the stat rule sees
     * no change (and reads nothing), SIGHUP reads it */
    {
        struct stat st;
        struct timespec ts[2];
        FILE *f;

        token_line(text, sizeof(text), "operator", "alice", view);
        assert_int_equal(strlen(text), strlen(l_op));
        assert_int_equal(stat(path, &st), 0);
        assert_non_null(f = fopen(path, "r+"));
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
        ts[0] = st.st_atim;
        ts[1] = st.st_mtim;
        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
    }
    assert_int_equal(mgr_api_auth_check(a, hop, NULL, false, s1, 18, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_int_equal(mgr_api_auth_check(a, hop, NULL, false, s1, 19, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    mgr_api_auth_hup(a);
    assert_int_equal(mgr_api_auth_check(a, hop, NULL, false, s1, 19, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);
    assert_int_equal(mgr_api_auth_check(a, hview, NULL, false, s1, 19, "GET", "/", &tok),
                     MGR_API_AUTH_OK);
    assert_string_equal(tok.name, "alice");
    assert_int_equal(mgr_api_auth_check(a, NULL, sview, false, s1, 19, "GET", "/", &tok),
                     MGR_API_AUTH_WRONG);
    mgr_api_auth_free(a);
    test_tmpdir_remove(dir);
}

/* Threads checking tokens and sessions while the file is rewritten and
 * read again (the tsan preset runs this under ThreadSanitizer). */
struct race {
    struct mgr_api_auth *a;
    const char *hdr, *sid;
    atomic_int stop;
    atomic_uint ok; /* checks answered OK */
};

static void *race_reader(void *arg)
{
    struct race *r = arg;
    struct sockaddr_in p = peer4("198.18.0.9");
    struct mgr_api_token tok;
    int64_t now = 1000;

    while (!atomic_load(&r->stop)) {
        enum mgr_api_auth_result res;
        /* a peer of its own each time: failures never throttle the lookups */
        p.sin_addr.s_addr = htonl(0xc6120000u | (uint32_t)(now & 0xffff));
        res = mgr_api_auth_check(r->a, r->hdr, NULL, false, (const void *)&p, now++, "GET", "/",
                                 &tok);
        if (res == MGR_API_AUTH_OK)
            atomic_fetch_add(&r->ok, 1);
        else if (res != MGR_API_AUTH_WRONG && res != MGR_API_AUTH_CLOSED)
            fail_msg("a check answered %d while the file changed", (int)res);
        (void)mgr_api_auth_check(r->a, NULL, r->sid, false, (const void *)&p, now, "GET", "/",
                                 &tok);
        (void)mgr_api_auth_session_live(r->a, r->sid, now);
    }
    return NULL;
}

static void test_reload_threads(void **state)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], op[MGR_API_TOKEN_LEN + 1], view[MGR_API_TOKEN_LEN + 1],
        hop[MGR_API_TOKEN_LEN + 16], sid[MGR_API_SESSION_ID_LEN + 1], l_op[160], l_view[160],
        both[320];
    struct iof_diag d = {{0}};
    struct mgr_api_token tok;
    struct race r = {0};
    pthread_t th[3];
    struct sockaddr_in p1 = peer4("198.18.0.1");

    (void)state;
    assert_int_equal(test_tmpdir_make(dir, "test_api_auth"), 0);
    snprintf(path, sizeof(path), "%s/tokens", dir);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_OPERATOR, "alice", op, &d), 0);
    assert_int_equal(mgr_api_token_new(path, MGR_API_SCOPE_VIEWER, "bob", view, &d), 0);
    snprintf(hop, sizeof(hop), "Bearer %s", op);
    token_line(l_op, sizeof(l_op), "operator", "alice", op);
    token_line(l_view, sizeof(l_view), "viewer", "bob", view);
    snprintf(both, sizeof(both), "%s%s", l_op, l_view);
    assert_int_equal(mgr_api_auth_new(path, &r.a, &d), 0);
    iof_log_init("test_api_auth", IOF_LOG_ERROR); /* not a warning per refusal */
    assert_int_equal(
        mgr_api_auth_signin(r.a, op, strlen(op), (const void *)&p1, 10, "/s", &tok, sid),
        MGR_API_AUTH_OK);
    r.hdr = hop;
    r.sid = sid;
    atomic_init(&r.stop, 0);
    atomic_init(&r.ok, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_reader, &r), 0);
    for (int i = 0; i < 200; i++) {
        put_file(path, i % 3 == 0 ? l_view : i % 3 == 1 ? both : "viewer x 12\n", 0600);
        mgr_api_auth_hup(r.a);
        mgr_api_auth_refresh(r.a, 10, true);
    }
    atomic_store(&r.stop, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    /* r.ok: how many found alice in a table; not asserted (a loaded host may run the
     * readers late), each answer was checked by them */
    (void)atomic_load(&r.ok);
    put_file(path, both, 0600);
    mgr_api_auth_refresh(r.a, 10, true);
    assert_int_equal(
        mgr_api_auth_check(r.a, hop, NULL, false, (const void *)&p1, 11, "GET", "/", &tok),
        MGR_API_AUTH_OK);
    mgr_api_auth_free(r.a);
    iof_log_init("test_api_auth", IOF_LOG_WARN);
    test_tmpdir_remove(dir);
}

static void test_bind_rule(void **state)
{
    struct iof_diag d = {{0}};

    (void)state;
    assert_int_equal(mgr_api_bind_check("127.0.0.1:0", "127.0.0.1", true, false, false, &d), 0);
    assert_int_equal(mgr_api_bind_check("0.0.0.0:1", "0.0.0.0", false, true, true, &d), 0);
    assert_int_equal(mgr_api_bind_check("0.0.0.0:1", "0.0.0.0", false, false, false, &d), -EACCES);
    assert_non_null(strstr(d.msg, "--http 0.0.0.0:1: 0.0.0.0 is not a loopback address"));
    assert_non_null(strstr(d.msg, "add --http-tls-cert F --http-tls-key F and --http-tokens F ("));
    assert_int_equal(mgr_api_bind_check("0.0.0.0:1", "0.0.0.0", false, true, false, &d), -EACCES);
    assert_non_null(strstr(d.msg, "add --http-tokens F ("));
    assert_int_equal(mgr_api_bind_check("0.0.0.0:1", "0.0.0.0", false, false, true, &d), -EACCES);
    assert_non_null(strstr(d.msg, "add --http-tls-cert F --http-tls-key F ("));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_vector),
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_bearer),
        cmocka_unit_test(test_parse_cert_lines),
        cmocka_unit_test(test_token_new_and_load),
        cmocka_unit_test(test_check_scopes_and_failures),
        cmocka_unit_test(test_bind_rule),
        cmocka_unit_test(test_reload),
        cmocka_unit_test(test_reload_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
