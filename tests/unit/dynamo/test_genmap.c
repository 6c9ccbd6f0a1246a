/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_genmap.c - dynamo/genmap: the expected generation of each
 * block of a verified test file: set by completed writes only, unknown
 * while a write is in flight (a crash leaves it unknown), ambiguous when
 * writes overlap, kept in the workdir across opens, reset when the file is
 * another one or forgotten; reads judged only when calm and quiet. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dynamo/genmap.h"
#include "dynamo/scope.h"
#include "tmpdir.h"

static char g_dir[PATH_MAX];
static struct dyn_scope *g_scope;

static int setup(void **state)
{
    struct iof_diag d = {{0}};

    (void)state;
    if (test_tmpdir_make(g_dir, "genmap") < 0)
        return -1;
    return dyn_scope_new(g_dir, NULL, 0, &g_scope, &d);
}

static int teardown(void **state)
{
    (void)state;
    dyn_scope_free(g_scope);
    test_tmpdir_remove(g_dir);
    return 0;
}

static struct dyn_genmap *open_map(const char *path, ino_t ino)
{
    struct dyn_genmap *m = NULL;
    struct iof_diag d = {{0}};

    assert_int_equal(dyn_genmap_open(g_scope, path, 1, ino, 1 << 20, &m, &d), 0);
    assert_non_null(m);
    return m;
}

static void test_writes(void **state)
{
    (void)state;
    struct dyn_genmap *m = open_map("a.dat", 7);

    assert_int_equal(m->n, 256);
    assert_true(dyn_genmap_expected(m, 8192) == 0);
    dyn_genmap_write_start(m, 8192, 16384);
    assert_true(dyn_genmap_expected(m, 8192) == 0); /* in flight: unknown */
    dyn_genmap_write_done(m, 8192, 16384, 100, true);
    assert_true(dyn_genmap_expected(m, 8192) == 100);
    assert_true(dyn_genmap_expected(m, 12288) == 0); /* inside the block */
    assert_true(dyn_genmap_expected(m, 8193) == 0);  /* not a block start */
    /* A failed write: unknown. */
    dyn_genmap_write_start(m, 8192, 4096);
    dyn_genmap_write_done(m, 8192, 4096, 101, false);
    assert_true(dyn_genmap_expected(m, 8192) == 0);
    /* Two overlapping in flight: neither can be judged, until a write alone. */
    dyn_genmap_write_start(m, 0, 4096);
    dyn_genmap_write_start(m, 0, 4096);
    dyn_genmap_write_done(m, 0, 4096, 5, true);
    dyn_genmap_write_done(m, 0, 4096, 6, true);
    assert_true(dyn_genmap_expected(m, 0) == 0);
    dyn_genmap_write_start(m, 0, 4096);
    dyn_genmap_write_done(m, 0, 4096, 7, true);
    assert_true(dyn_genmap_expected(m, 0) == 7);
    /* Past the end: ignored. */
    dyn_genmap_write_start(m, 1 << 20, 4096);
    dyn_genmap_write_done(m, 1 << 20, 4096, 9, true);
    assert_true(dyn_genmap_expected(m, 1 << 20) == 0);
    dyn_genmap_close(m);

    /* Kept: the same file opens to the same entries; another inode resets. */
    m = open_map("a.dat", 7);
    assert_true(dyn_genmap_expected(m, 8192) == 0);
    assert_true(dyn_genmap_expected(m, 0) == 7);
    dyn_genmap_close(m);
    m = open_map("a.dat", 8);
    assert_true(dyn_genmap_expected(m, 0) == 0);
    dyn_genmap_close(m);
}

/* Forgotten (the file made anew, or written without verify): the same file
 * opens with nothing expected; forgetting what has no state is no error. */
static void test_forget(void **state)
{
    (void)state;
    struct iof_diag d = {{0}};
    struct dyn_genmap *m = open_map("b.dat", 9);

    dyn_genmap_write_start(m, 0, 4096);
    dyn_genmap_write_done(m, 0, 4096, 11, true);
    dyn_genmap_close(m);
    m = open_map("b.dat", 9);
    assert_true(dyn_genmap_expected(m, 0) == 11);
    dyn_genmap_close(m);
    assert_int_equal(dyn_genmap_forget(g_scope, "b.dat", &d), 0);
    m = open_map("b.dat", 9);
    assert_true(dyn_genmap_expected(m, 0) == 0);
    dyn_genmap_close(m);
    assert_int_equal(dyn_genmap_forget(g_scope, "b.dat", &d), 0);
    assert_int_equal(dyn_genmap_forget(g_scope, "b.dat", &d), 0);
}

static void test_reads(void **state)
{
    (void)state;
    struct dyn_genmap *m = open_map("b.dat", 1);
    struct dyn_genmap_ticket tk;

    dyn_genmap_read_start(m, 0, 65536, &tk);
    assert_true(dyn_genmap_read_quiet(m, 0, 65536, &tk));
    /* A write completed meanwhile, elsewhere: calm, not quiet. */
    dyn_genmap_write_start(m, 1 << 19, 4096);
    dyn_genmap_write_done(m, 1 << 19, 4096, 3, true);
    assert_true(dyn_genmap_read_calm(m, 0, 65536, &tk));
    assert_false(dyn_genmap_read_quiet(m, 0, 65536, &tk));
    /* A write in flight on its blocks when it was issued or completes. */
    dyn_genmap_write_start(m, 4096, 4096);
    dyn_genmap_read_start(m, 0, 65536, &tk);
    assert_false(dyn_genmap_read_calm(m, 0, 65536, &tk));
    dyn_genmap_write_done(m, 4096, 4096, 4, true);
    assert_false(dyn_genmap_read_calm(m, 0, 65536, &tk));
    dyn_genmap_read_start(m, 0, 65536, &tk);
    dyn_genmap_write_start(m, 61440, 4096);
    assert_false(dyn_genmap_read_calm(m, 0, 65536, &tk));
    dyn_genmap_write_done(m, 61440, 4096, 5, true);
    /* Elsewhere in flight: still calm. */
    dyn_genmap_read_start(m, 0, 65536, &tk);
    dyn_genmap_write_start(m, 65536, 4096);
    assert_true(dyn_genmap_read_calm(m, 0, 65536, &tk));
    dyn_genmap_write_done(m, 65536, 4096, 6, true);
    dyn_genmap_close(m);
    dyn_genmap_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes),
        cmocka_unit_test(test_forget),
        cmocka_unit_test(test_reads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
