/* SPDX-License-Identifier: Apache-2.0 */
/* tests/bench/nofile.h - the open-file limit of a bench program that holds
 * many connections (iof_simagent, iof_netfloor). */
#ifndef IOF_TESTS_BENCH_NOFILE_H
#define IOF_TESTS_BENCH_NOFILE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* Raises the soft limit (and the hard one, as root, when it is lower) to n
 * connections and 64 more. 0, or -errno after one line on stderr naming
 * prog, the need and the reason. */
static inline int bench_raise_nofile(const char *prog, unsigned n)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)n + 64;
    int e;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
        e = errno;
        fprintf(stderr, "%s: cannot read the open-file limit: %s\n", prog, strerror(e));
        return -e;
    }
    if (rl.rlim_cur >= need)
        return 0;
    rl.rlim_cur = need;
    if (rl.rlim_max < need)
        rl.rlim_max = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
        e = errno;
        fprintf(stderr,
                "%s: %u connections need %llu open files: %s (raise the hard limit, e.g. "
                "ulimit -Hn, as root)\n",
                prog, n, (unsigned long long)need, strerror(e));
        return -e;
    }
    return 0;
}

#endif
