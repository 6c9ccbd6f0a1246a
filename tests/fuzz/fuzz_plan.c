/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz_plan.c - proto/plan: the plan loader and --set overrides.
 *
 * Input: plan text, optionally followed by a NUL byte and up to
 * MAX_OVERRIDES `--set` arguments separated by NUL or newline bytes. The
 * loader must accept or refuse with IOF_EPLAN (or -ENOMEM) and a one-line
 * message. An accepted plan must expand into tests whose spec indices and
 * worker groups are usable, print as `iofleet validate` shows it, and free.
 */
#include "fuzz.h"

#include "common/err.h"
#include "common/spec.h"
#include "proto/plan.h"

#include <errno.h>
#include <string.h>

#define MAX_OVERRIDES 8
/* Above this many (test, worker group) pairs a valid plan is not printed:
 * printing is linear in them, and a fuzzer may build a legal plan of
 * 1024 specs x 4096 cycle steps that would only time out. */
#define MAX_PRINTED_PAIRS 100000

static FILE *devnull(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    FUZZ_CHECK(f != NULL, "cannot open /dev/null");
    return f;
}

static void plan_use(const struct iof_plan *p)
{
    size_t n;
    struct iof_test *tests = iof_plan_expand(p, &n);
    char label[64];

    FUZZ_CHECK(tests != NULL, "iof_plan_expand failed on a valid plan");
    FUZZ_CHECK(n == p->nspecs * iof_plan_cycle_steps(p), "%zu tests for %zu specs x %zu steps", n,
               p->nspecs, iof_plan_cycle_steps(p));
    for (size_t t = 0; t < n; t++) {
        FUZZ_CHECK(tests[t].index == t && tests[t].spec_index < p->nspecs,
                   "test %zu: index %u, spec %u of %zu", t, tests[t].index, tests[t].spec_index,
                   p->nspecs);
        iof_test_cycle_label(&tests[t], label, sizeof(label));
        FUZZ_CHECK(memchr(label, '\0', sizeof(label)) != NULL, "cycle label not terminated");
        if (n * p->nworkers > MAX_PRINTED_PAIRS)
            continue;
        for (size_t g = 0; g < p->nworkers; g++) {
            struct iof_worker_cfg w = iof_test_worker(p, &tests[t], g);
            (void)w;
        }
    }
    free(tests);
    if (n * p->nworkers <= MAX_PRINTED_PAIRS) {
        proto_plan_print(p, devnull());
        fflush(devnull());
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const uint8_t *nul = memchr(data, '\0', size);
    size_t tlen = nul ? (size_t)(nul - data) : size;
    char *ovbuf = NULL;
    const char *ovs[MAX_OVERRIDES];
    size_t nov = 0;

    if (nul) {
        /* A NUL-terminated copy of the rest, cut into arguments in place. */
        size_t rlen = size - tlen - 1;
        ovbuf = malloc(rlen + 1);
        FUZZ_CHECK(ovbuf != NULL, "out of memory");
        memcpy(ovbuf, nul + 1, rlen);
        ovbuf[rlen] = '\0';
        char *p = ovbuf, *end = ovbuf + rlen;
        while (nov < MAX_OVERRIDES) {
            char *q = p;
            while (q < end && *q != '\0' && *q != '\n')
                q++;
            ovs[nov++] = p;
            if (q >= end)
                break;
            *q = '\0';
            p = q + 1;
        }
    }

    struct iof_plan plan;
    struct iof_diag diag = {{0}};
    int rc = proto_plan_parse("fuzz.json", text, tlen, ovs, nov, &plan, &diag);
    if (rc == 0) {
        plan_use(&plan);
    } else {
        FUZZ_CHECK(rc == IOF_EPLAN || rc == -ENOMEM, "plan loader returned %d: %s", rc, diag.msg);
        FUZZ_CHECK(diag.msg[0] != '\0', "plan refused (%d) without a message", rc);
        FUZZ_CHECK(strchr(diag.msg, '\n') == NULL, "message of more than one line: %s", diag.msg);
    }
    iof_plan_free(&plan);
    free(ovbuf);
    return 0;
}
