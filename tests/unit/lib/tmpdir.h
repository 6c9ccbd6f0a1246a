/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/lib/tmpdir.h - the temporary directory a unit test works in: made
 * fresh with mkdtemp under $IOF_TEST_TMPDIR (or /tmp; created with its parents), removed with all
 * it holds at the end. Header-only, for the unit test programs. */
#ifndef IOF_TESTS_UNIT_TMPDIR_H
#define IOF_TESTS_UNIT_TMPDIR_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Makes <$IOF_TEST_TMPDIR or /tmp>/<name>.XXXXXX (the base created when
 * missing) and puts its real path in dir. 0, or -1 with the reason on
 * stderr. */
static inline int test_tmpdir_make(char dir[PATH_MAX], const char *name)
{
    const char *base = getenv("IOF_TEST_TMPDIR");
    char tmpl[PATH_MAX];

    if (!base || !*base)
        base = "/tmp";
    /* the base and its missing parents */
    snprintf(tmpl, sizeof(tmpl), "%s", base);
    for (char *s = tmpl + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        mkdir(tmpl, 0755);
        *s = '/';
    }
    mkdir(tmpl, 0755);
    snprintf(tmpl, sizeof(tmpl), "%s/%s.XXXXXX", base, name);
    if (!mkdtemp(tmpl) || !realpath(tmpl, dir)) {
        fprintf(stderr, "cannot create a temp dir under %s: %s\n", base, strerror(errno));
        return -1;
    }
    return 0;
}

static inline int test_tmpdir_rm_entry(const char *p, const struct stat *st, int type,
                                       struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(p);
}

/* Removes path and everything below it, never following a symbolic link. */
static inline void test_tmpdir_remove(const char *path)
{
    nftw(path, test_tmpdir_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
