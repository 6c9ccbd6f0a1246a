/* SPDX-License-Identifier: Apache-2.0 */
/* tests/unit/dynamo/test_os_buf.c - a worker's I/O buffers (dynamo/os/os.h,
 * dyn_os_io_buf_alloc): aligned for direct I/O, and from 2 MiB up asked to
 * be backed by transparent huge pages, which the kernel's own view of the
 * mapping (/proc/self/smaps: THPeligible) confirms wherever the host has
 * them in "madvise" or "always" mode. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/budget.h"
#include "dynamo/os/os.h"

/* The host's THP mode as the kernel names it ("always", "madvise",
 * "never"), or "" when it has none. */
static const char *thp_mode(char *buf, size_t cap)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128], *a, *b;

    buf[0] = 0;
    if (!f)
        return buf;
    if (fgets(line, sizeof(line), f) && (a = strchr(line, '[')) && (b = strchr(a, ']'))) {
        *b = 0;
        snprintf(buf, cap, "%s", a + 1);
    }
    fclose(f);
    return buf;
}

/* THPeligible of the mapping that holds p: 1, 0, or -1 when not found. */
static int thp_eligible(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool inside = false;
    int v = -1;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (inside && sscanf(line, "THPeligible: %d", &v) == 1)
            break;
    }
    fclose(f);
    return v;
}

static void test_small_buffer_aligned(void **state)
{
    uint8_t *p = dyn_os_io_buf_alloc(64 * 1024);
    (void)state;

    assert_non_null(p);
    assert_int_equal((uintptr_t)p % IOF_IO_BUF_ALIGN, 0);
    memset(p, 0xa5, 64 * 1024);
    dyn_os_io_buf_free(p);
}

/* 4 x QD 64 x 512 KiB is 32 MiB per worker: such a buffer is 2 MiB aligned
 * and eligible for huge pages. */
static void test_large_buffer_huge(void **state)
{
    const size_t len = 32u << 20;
    char mode[32];
    uint8_t *p = dyn_os_io_buf_alloc(len);
    (void)state;

    assert_non_null(p);
    assert_int_equal((uintptr_t)p % (2u << 20), 0);
    memset(p, 0x5a, len);
    thp_mode(mode, sizeof(mode));
    if (!strcmp(mode, "madvise") || !strcmp(mode, "always"))
        assert_int_equal(thp_eligible(p + len / 2), 1);
    else
        print_message("transparent huge pages are '%s' here: eligibility not checked\n", mode);
    dyn_os_io_buf_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_buffer_aligned),
        cmocka_unit_test(test_large_buffer_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
