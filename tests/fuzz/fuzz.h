/* SPDX-License-Identifier: Apache-2.0 */
/* tests/fuzz/fuzz.h - what every fuzz target shares.
 *
 * Each tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput(). It is
 * linked twice: with libFuzzer (clang, IOF_FUZZ=ON) to search for inputs,
 * and with replay.c (any compiler, always) to run a checked-in corpus as a
 * CTest regression test. A target must therefore be deterministic, keep no
 * state between inputs (beyond caches that do not change results) and
 * signal a finding by crashing: FUZZ_CHECK() aborts, so it fires under
 * NDEBUG too, where assert() would not.
 */
#ifndef IOF_TESTS_FUZZ_FUZZ_H
#define IOF_TESTS_FUZZ_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The libFuzzer entry point: 0 always (a finding aborts). Borrows data. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn, format(printf, 4, 5))) static inline void
fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s:%d: check failed: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* Aborts with the condition and a printf-style explanation when cond is false. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                     \
    } while (0)

#endif
