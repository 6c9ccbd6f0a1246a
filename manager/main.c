/* SPDX-License-Identifier: Apache-2.0 */
/* manager/main.c - the `iofleet` executable: heap tuning, then the command
 * line (manager/cli.c). */
#include <malloc.h>
#include <signal.h>

#include "common/net.h"
#include "manager/cli.h"

int main(int argc, char **argv)
{
    /* A peer that closes while we write (an agent refusing the manager
     * races its bye) is an EPIPE to report, not a silent death by SIGPIPE:
     * every command, before any connection. */
    signal(SIGPIPE, SIG_IGN);
    /* Decoding every agent's interval allocates and frees histograms of a
     * few hundred KiB per message; keep that memory in the heap instead of
     * trimming it back to the kernel and faulting it in again each time
     * (measured: tens of thousands of page faults per second at 1000
     * agents). */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    /* One descriptor per agent: a soft limit of 1024 would cap a --listen
     * manager near 1,000 agents (docs/scaling.md). Unchanged if it fails. */
    (void)iof_net_raise_fd_limit(NULL, NULL);
    return mgr_cli_main(argc, argv);
}
