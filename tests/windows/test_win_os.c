/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/test_win_os.c - the agent's platform layer on Windows
 * (dynamo/os/windows/), under Wine: the machine and CPU figures, random
 * bytes, the scope (a test file opened beneath the workdir, a name leading
 * out of it or through a planted link refused, an --allow directory, a
 * file no --allow names refused), test-file identity, the workdir's volume,
 * and the device guard's ends and marker on a file standing in for a disk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "common/err.h"
#include "dynamo/cpustat.h"
#include "dynamo/devguard.h"
#include "dynamo/inventory.h"
#include "dynamo/os/os.h"
#include "dynamo/scope.h"

static char g_dir[MAX_PATH], g_work[MAX_PATH + 16], g_allow[MAX_PATH + 16];

static void put(const char *path, size_t len, int byte)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (size_t i = 0; i < len; i++)
        fputc(byte, f);
    assert_int_equal(fclose(f), 0);
}

static int group_setup(void **state)
{
    char tmp[MAX_PATH];

    (void)state;
    if (!GetTempPathA(sizeof(tmp), tmp))
        return -1;
    snprintf(g_dir, sizeof(g_dir), "%siofleet-win-os-%lu", tmp, GetCurrentProcessId());
    snprintf(g_work, sizeof(g_work), "%s\\work", g_dir);
    snprintf(g_allow, sizeof(g_allow), "%s\\allowed", g_dir);
    if (!CreateDirectoryA(g_dir, NULL) || !CreateDirectoryA(g_allow, NULL))
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    char cmd[3 * MAX_PATH];
    (void)state;
    snprintf(cmd, sizeof(cmd), "rmdir /s /q \"%s\" >NUL 2>&1", g_dir);
    system(cmd);
    return 0;
}

static void test_machine_and_cpu(void **state)
{
    struct dyn_os_machine m;
    struct dyn_os_resources r;
    struct dyn_cpu_sample a, b;
    struct dyn_cpu_usage u;
    volatile uint64_t x = 0;
    uint8_t r1[16] = {0}, r2[16] = {0};

    (void)state;
    dyn_os_machine(&m);
    assert_true(m.cpus >= 1);
    assert_int_equal(m.cpus, dyn_os_ncpus());
    assert_true(m.memory_bytes > 0);
    assert_true(strstr(m.kernel, "Windows NT") || strstr(m.kernel, "Wine"));
    print_message("machine: %u CPUs, %llu bytes, '%s'\n", m.cpus,
                  (unsigned long long)m.memory_bytes, m.kernel);
    dyn_os_resources(&r);
    assert_true(r.mem_free > 0 && r.mem_free != UINT64_MAX);
    assert_true(r.aio_max == UINT64_MAX); /* no AIO limit on Windows */
    assert_int_equal(r.fd_limit, dyn_os_fd_limit());

    dyn_cpu_sample(&a);
    assert_true(a.valid);
    for (uint64_t i = 0; i < 100000000ull; i++)
        x += i;
    Sleep(50);
    dyn_cpu_sample(&b);
    assert_true(b.valid);
    assert_true(b.total >= a.total);
    assert_true(b.self_ns > a.self_ns);
    dyn_cpu_usage(&a, &b, &u);
    assert_true(u.agent_pct > 0 && u.agent_pct <= 100.0 * 1.05);

    assert_int_equal(dyn_os_random(r1, sizeof(r1)), 0);
    assert_int_equal(dyn_os_random(r2, sizeof(r2)), 0);
    assert_memory_not_equal(r1, r2, sizeof(r1));
}

static void test_scope(void **state)
{
    const char *allow[] = {g_allow};
    struct dyn_scope *s = NULL;
    struct iof_diag d = {{0}};
    struct stat st;
    char p[2 * MAX_PATH];
    const char *base;
    struct dyn_os_file_id id;
    int fd, dfd;

    (void)state;
    assert_int_equal(dyn_scope_new(g_work, allow, 1, &s, &d), 0);
    assert_non_null(s);
    snprintf(p, sizeof(p), "%s\\t.dat", g_work);
    put(p, 8192, 0x5a);
    fd = dyn_scope_open(s, "t.dat", O_RDWR, &st, &d);
    assert_true(fd >= 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_size, 8192);
    assert_int_equal(st.st_nlink, 1);
    close(fd);

    /* Its identity for the ledger: the same through the parent's descriptor. */
    dfd = dyn_scope_open_parent(s, "t.dat", &base, &d);
    assert_true(dfd >= 0);
    assert_string_equal(base, "t.dat");
    assert_int_equal(dyn_os_file_id(dfd, base, &id), 0);
    assert_true(id.regular);
    assert_int_equal(id.size, 8192);
    assert_int_equal(id.nlink, 1);
    assert_int_equal(id.ino, st.st_ino);
    close(dfd);

    assert_true(dyn_scope_open(s, "../t.dat", O_RDONLY, NULL, &d) < 0);
    assert_non_null(strstr(d.msg, "'..' is not allowed"));
    assert_int_equal(dyn_scope_open(s, "missing.dat", O_RDONLY, NULL, &d), -ENOENT);

    /* A file in an --allow directory, by either separator; one elsewhere refused.
     */
    snprintf(p, sizeof(p), "%s\\in.dat", g_allow);
    put(p, 4096, 1);
    snprintf(p, sizeof(p), "%s/in.dat", g_allow);
    fd = dyn_scope_open(s, p, O_RDONLY, &st, &d);
    assert_true(fd >= 0);
    close(fd);
    snprintf(p, sizeof(p), "%s\\out.dat", g_dir);
    put(p, 4096, 1);
    assert_int_equal(dyn_scope_open(s, p, O_RDONLY, NULL, &d), IOF_EDENIED);
    assert_non_null(strstr(d.msg, "not inside this agent's --allow paths"));
    /* Devices only when an --allow entry names them. */
    assert_int_equal(dyn_scope_open(s, "\\\\.\\PhysicalDrive7", O_RDONLY, NULL, &d), IOF_EDENIED);

    /* A link planted in the workdir to a file outside it. */
    snprintf(p, sizeof(p), "%s\\link.dat", g_work);
    {
        char target[2 * MAX_PATH];
        snprintf(target, sizeof(target), "%s\\out.dat", g_dir);
        DWORD attr = CreateSymbolicLinkA(p, target, 0x2 /* ALLOW_UNPRIVILEGED_CREATE */)
                         ? GetFileAttributesA(p)
                         : INVALID_FILE_ATTRIBUTES;
        if (attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_REPARSE_POINT)) {
            assert_int_equal(dyn_scope_open(s, "link.dat", O_RDONLY, NULL, &d), IOF_EDENIED);
            assert_non_null(strstr(d.msg, "symbolic link or junction"));
        } else {
            print_message("Wine cannot make a symbolic link here: the planted-link case is not "
                          "run\n");
        }
    }
    dyn_scope_free(s);
}

static void test_workdir_volume(void **state)
{
    struct proto_workdir_info wi;
    struct dyn_inv_strings s;

    (void)state;
    dyn_inventory_workdir(g_work, &wi, &s);
    assert_non_null(wi.path);
    assert_true(wi.size > 0);
    assert_true(wi.free > 0 && wi.free <= wi.size);
    print_message("workdir: %s on %s (%s), %llu of %llu bytes free\n", wi.path,
                  wi.device ? wi.device : "?", wi.fstype ? wi.fstype : "?",
                  (unsigned long long)wi.free, (unsigned long long)wi.size);
}

/* The ends and the marker on a 4 MiB file standing in for a disk. */
static void test_devguard_marker(void **state)
{
    char p[2 * MAX_PATH];
    struct dyn_dev_ends e;
    struct iof_diag d = {{0}};
    HANDLE h;
    int fd;

    (void)state;
    snprintf(p, sizeof(p), "%s\\disk.img", g_dir);
    put(p, 4u << 20, 0);
    h = CreateFileA(p, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0, NULL);
    assert_true(h != INVALID_HANDLE_VALUE);
    fd = _open_osfhandle((intptr_t)h, _O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(dyn_devguard_ends(fd, 4u << 20, &e, &d), 0);
    assert_true(e.zero);
    assert_false(e.marked);
    assert_int_equal(dyn_devguard_mark(fd, 4u << 20), 0);
    assert_int_equal(dyn_devguard_ends(fd, 4u << 20, &e, &d), 0);
    assert_false(e.zero);
    assert_true(e.marked);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_machine_and_cpu),
        cmocka_unit_test(test_scope),
        cmocka_unit_test(test_workdir_volume),
        cmocka_unit_test(test_devguard_marker),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
