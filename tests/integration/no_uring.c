/* SPDX-License-Identifier: Apache-2.0 */
/* tests/integration/no_uring.c - iof_no_uring ERRNO CMD [ARG...]: runs CMD with
 * io_uring_setup failing with ERRNO (ENOSYS: a kernel without io_uring; EPERM:
 * io_uring disabled by sysctl), through a seccomp filter that every child
 * inherits. Lets the integration tests see what an agent on such a kernel does
 * without changing the machine's settings. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    unsigned err;
    struct sock_filter f[4];
    struct sock_fprog prog = {.len = 4, .filter = f};

    if (argc < 3 || (strcmp(argv[1], "ENOSYS") && strcmp(argv[1], "EPERM"))) {
        fprintf(stderr, "usage: iof_no_uring ENOSYS|EPERM CMD [ARG...]\n");
        return 2;
    }
    err = strcmp(argv[1], "ENOSYS") ? EPERM : ENOSYS;
    f[0] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    f[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1);
    f[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err);
    f[3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        perror("iof_no_uring: seccomp");
        return 3;
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
