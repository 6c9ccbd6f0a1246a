/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/common/test_cliopt.c - common/cliopt.c: option tables over getopt_long.
 *
 * Parses argument vectors against a small table and checks what comes back
 * in order (ids, values, positionals), what is refused (unknown names,
 * abbreviations, values on flags, missing values), the suggestions, and the
 * generated help. stderr and stdout are captured in files under
 * $IOF_TEST_TMPDIR (or /tmp). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cliopt.h"

enum { T_HELP = 1, T_AGENT, T_AGENTS_FILE, T_LISTEN, T_QUIET, T_SET };

static const struct iof_opt t_opts[] = {
    {"help", 'h', IOF_OPT_NONE, NULL, "print this help and exit", T_HELP},
    {"agent", 0, IOF_OPT_REQUIRED, "HOST", "an agent to dial", T_AGENT},
    {"agents-file", 0, IOF_OPT_REQUIRED, "F", "agents, one per line", T_AGENTS_FILE},
    {"listen", 0, IOF_OPT_OPTIONAL, "ADDR", "accept agents", T_LISTEN},
    {"quiet", 'q', IOF_OPT_NONE, NULL,
     "a description long enough that the help has to wrap it onto a second line at eighty "
     "columns",
     T_QUIET},
    {"set", 's', IOF_OPT_REQUIRED, "KEY=VALUE", "override", T_SET},
};

static bool t_takes(int id, const char *next)
{
    return id == T_LISTEN && !strstr(next, ".json");
}

static const struct iof_cmd t_cmd = {
    .prog = "tool run",
    .synopsis = "PLAN [OPTION]...",
    .about = "About text.",
    .opts = t_opts,
    .nopts = sizeof(t_opts) / sizeof(t_opts[0]),
    .epilog = "exit codes: 0, 2\n",
    .takes_next = t_takes,
};

static char g_err[4096], g_out[16384];

static void slurp(FILE *f, char *buf, size_t cap)
{
    size_t n;
    rewind(f);
    n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Parses ARGS (NULL-terminated, after the command word) into `got`, one
 * "id:value" or "P:value" or "E"/"H" per result, space-separated; stderr
 * and stdout captured in g_err, g_out. */
static void parse(char *got, size_t cap, ...)
{
    char *argv[32] = {"run"};
    int argc = 1, id, saved_err, saved_out;
    struct iof_opt_parser p;
    const char *val;
    FILE *fe = tmpfile(), *fo = tmpfile();
    va_list ap;
    size_t o = 0;

    assert_non_null(fe);
    assert_non_null(fo);
    va_start(ap, cap);
    for (char *a; (a = va_arg(ap, char *));)
        argv[argc++] = a;
    va_end(ap);
    fflush(stderr);
    fflush(stdout);
    saved_err = dup(STDERR_FILENO);
    saved_out = dup(STDOUT_FILENO);
    dup2(fileno(fe), STDERR_FILENO);
    dup2(fileno(fo), STDOUT_FILENO);
    got[0] = '\0';
    assert_int_equal(iof_opt_init(&p, &t_cmd, argc, argv), 0);
    while ((id = iof_opt_next(&p, &val)) != IOF_OPT_END) {
        if (id == IOF_OPT_ERROR || id == IOF_OPT_HELP) {
            o += (size_t)snprintf(got + o, cap - o, "%s%s", o ? " " : "",
                                  id == IOF_OPT_ERROR ? "E" : "H");
            break;
        }
        if (id == IOF_OPT_POSITIONAL)
            o += (size_t)snprintf(got + o, cap - o, "%sP:%s", o ? " " : "", val);
        else
            o += (size_t)snprintf(got + o, cap - o, "%s%d:%s", o ? " " : "", id, val ? val : "-");
    }
    iof_opt_free(&p);
    fflush(stderr);
    fflush(stdout);
    dup2(saved_err, STDERR_FILENO);
    dup2(saved_out, STDOUT_FILENO);
    close(saved_err);
    close(saved_out);
    slurp(fe, g_err, sizeof(g_err));
    slurp(fo, g_out, sizeof(g_out));
}

static void test_values(void **state)
{
    char got[512];
    (void)state;

    parse(got, sizeof(got), "plan.json", "--agent", "a1", "--agent=a2", "-q", "-s", "k=v",
          "--set=x=y", "-sz=1", NULL);
    assert_string_equal(got, "P:plan.json 2:a1 2:a2 5:- 6:k=v 6:x=y 6:z=1");
    assert_string_equal(g_err, "");
    /* Positionals in order wherever they are; after "--" everything is one. */
    parse(got, sizeof(got), "--quiet", "a", "-", "--", "--agent", NULL);
    assert_string_equal(got, "5:- P:a P:- P:--agent");
}

static void test_optional(void **state)
{
    char got[512];
    (void)state;

    parse(got, sizeof(got), "--listen", "10.0.0.1:7000", "p.json", NULL);
    assert_string_equal(got, "4:10.0.0.1:7000 P:p.json");
    parse(got, sizeof(got), "--listen", "p.json", NULL);
    assert_string_equal(got, "4:- P:p.json");
    parse(got, sizeof(got), "--listen", "--quiet", NULL);
    assert_string_equal(got, "4:- 5:-");
    parse(got, sizeof(got), "--listen=:7001", NULL);
    assert_string_equal(got, "4::7001");
    parse(got, sizeof(got), "--listen", NULL);
    assert_string_equal(got, "4:-");
}

static void test_refused(void **state)
{
    char got[512];
    (void)state;

    parse(got, sizeof(got), "p", "--agnet", "x", NULL);
    assert_string_equal(got, "P:p E");
    assert_string_equal(g_err, "tool run: unknown option '--agnet'; did you mean '--agent'?\n"
                               "usage: tool run PLAN [OPTION]...\n"
                               "try 'tool run --help' for more information\n");
    /* A unique prefix is not taken, only suggested. */
    parse(got, sizeof(got), "--qui", NULL);
    assert_string_equal(got, "E");
    assert_non_null(strstr(g_err, "unknown option '--qui'; did you mean '--quiet'?"));
    parse(got, sizeof(got), "--agen=x", NULL);
    assert_string_equal(got, "E");
    assert_non_null(
        strstr(g_err, "unknown option '--agen'; did you mean one of '--agent', '--agents-file'?"));
    parse(got, sizeof(got), "--frobnicate", NULL);
    assert_string_equal(got, "E");
    assert_non_null(strstr(g_err, "unknown option '--frobnicate'\n"));
    parse(got, sizeof(got), "--quiet=1", NULL);
    assert_string_equal(got, "E");
    assert_non_null(strstr(g_err, "option '--quiet' takes no value, got '--quiet=1'"));
    parse(got, sizeof(got), "--agent", NULL);
    assert_string_equal(got, "E");
    assert_non_null(strstr(g_err, "tool run: --agent needs a value (HOST)"));
    parse(got, sizeof(got), "-s", NULL);
    assert_string_equal(got, "E");
    assert_non_null(strstr(g_err, "tool run: -s needs a value (KEY=VALUE)"));
    parse(got, sizeof(got), "-x", NULL);
    assert_string_equal(got, "E");
    assert_non_null(strstr(g_err, "unknown option '-x'"));
    assert_string_equal(g_out, "");
}

static void test_help(void **state)
{
    char got[512];
    (void)state;

    parse(got, sizeof(got), "p", "-h", "--bogus", NULL);
    assert_string_equal(got, "P:p H");
    assert_string_equal(g_err, "");
    assert_string_equal(g_out, "usage: tool run PLAN [OPTION]...\n"
                               "\n"
                               "About text.\n"
                               "\n"
                               "options:\n"
                               "  -h, --help              print this help and exit\n"
                               "      --agent=HOST        an agent to dial\n"
                               "      --agents-file=F     agents, one per line\n"
                               "      --listen[=ADDR]     accept agents\n"
                               "  -q, --quiet             a description long enough that the help "
                               "has to wrap\n"
                               "                          it onto a second line at eighty columns\n"
                               "  -s, --set=KEY=VALUE     override\n"
                               "\n"
                               "exit codes: 0, 2\n");
    /* Every line of the help fits 79 columns. */
    for (const char *l = g_out; *l;) {
        size_t n = strcspn(l, "\n");
        assert_true(n < 80);
        l += n + (l[n] == '\n');
    }
}

static void test_suggest(void **state)
{
    static const char *const cmds[] = {"run", "validate", "pki", "help"};
    (void)state;

    assert_string_equal(iof_opt_suggest("valdate", cmds, 4), "validate");
    assert_string_equal(iof_opt_suggest("vaildate", cmds, 4), "validate"); /* transposition */
    assert_string_equal(iof_opt_suggest("rnu", cmds, 4), "run");
    assert_string_equal(iof_opt_suggest("hlep", cmds, 4), "help");
    assert_null(iof_opt_suggest("frobnicate", cmds, 4));
    assert_null(iof_opt_suggest("xyz", cmds, 4));
    assert_null(iof_opt_suggest("", cmds, 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),  cmocka_unit_test(test_optional),
        cmocka_unit_test(test_refused), cmocka_unit_test(test_help),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
