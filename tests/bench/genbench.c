/* SPDX-License-Identifier: Apache-2.0 */
/* tests/bench/genbench.c - nanoseconds per dyn_gen_next() for one line of
 * a given distribution (the access-spec generator's per-I/O cost, without
 * an engine): the best of several rounds of 10^7 draws, so a busy machine
 * only makes the figure higher. Usage: iof_genbench [DISTRIBUTION [ROUNDS]]
 * (default "uniform", 7 rounds); 4k random reads over a 64 GiB range. */
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "dynamo/gen.h"

int main(int argc, char **argv)
{
    struct iof_line line = {.size = 4096, .share = 100, .read_pct = 70, .random_pct = 100};
    struct iof_spec spec = {.name = "bench", .lines = &line, .nlines = 1};
    const char *dist = argc > 1 ? argv[1] : "uniform";
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    const uint64_t n = 10000000;
    double best = 1e30;
    uint64_t sink = 0;

    if (iof_dist_parse(dist, &line.dist, NULL, 0) != 0) {
        fprintf(stderr, "genbench: bad distribution '%s'\n", dist);
        return 2;
    }
    for (int r = 0; r < rounds; r++) {
        struct dyn_gen g;
        struct dyn_gen_region reg;
        struct dyn_io_desc d;
        uint64_t t0, t1;
        dyn_gen_init(&g, &spec, 42 + (uint64_t)r);
        dyn_gen_region_init(&reg, &g, 0, 64ull << 30, 512);
        t0 = iof_now_ns();
        for (uint64_t i = 0; i < n; i++) {
            dyn_gen_next(&g, &reg, &d);
            sink += d.offset;
        }
        t1 = iof_now_ns();
        if ((double)(t1 - t0) / (double)n < best)
            best = (double)(t1 - t0) / (double)n;
    }
    printf("%s: %.2f ns per I/O (best of %d x %llu)%s\n", dist, best, rounds, (unsigned long long)n,
           sink == 1 ? " " : "");
    return 0;
}
