/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/cpustat.c - node CPU from GetSystemTimes and the
 * agent's own CPU time from GetProcessTimes, as percentages between two
 * samples (dynamo/cpustat.h). Ticks are 100 ns units; the kernel time
 * GetSystemTimes reports includes the idle time. */
#ifdef _WIN32
#include "dynamo/cpustat.h"

#include <string.h>
#include <windows.h>

#include "common/clock.h"
#include "dynamo/os/os.h"

static uint64_t ft_u64(FILETIME ft)
{
    return ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
}

void dyn_cpu_sample(struct dyn_cpu_sample *s)
{
    FILETIME idle, kernel, user, created, exited, pkernel, puser;

    memset(s, 0, sizeof(*s));
    if (!GetSystemTimes(&idle, &kernel, &user))
        return;
    s->user = ft_u64(user);
    s->idle = ft_u64(idle);
    s->system = ft_u64(kernel) > s->idle ? ft_u64(kernel) - s->idle : 0;
    s->total = s->user + s->system + s->idle;
    if (GetProcessTimes(GetCurrentProcess(), &created, &exited, &pkernel, &puser))
        s->self_ns = (ft_u64(pkernel) + ft_u64(puser)) * 100;
    s->mono_ns = iof_now_ns();
    s->valid = true;
}

void dyn_cpu_usage(const struct dyn_cpu_sample *a, const struct dyn_cpu_sample *b,
                   struct dyn_cpu_usage *out)
{
    double total;
    unsigned ncpu = dyn_os_ncpus();

    memset(out, 0, sizeof(*out));
    if (!a->valid || !b->valid || b->total <= a->total)
        return;
    total = (double)(b->total - a->total);
    out->user_pct = 100.0 * (double)(b->user - a->user) / total;
    out->sys_pct = 100.0 * (double)(b->system - a->system) / total;
    out->busy_pct = 100.0 - 100.0 * (double)(b->idle - a->idle) / total;
    if (b->mono_ns > a->mono_ns && b->self_ns >= a->self_ns) {
        /* The window in CPU-nanoseconds across all CPUs: elapsed x CPUs. */
        double window_ns = (double)(b->mono_ns - a->mono_ns) * (double)ncpu;
        out->agent_pct = 100.0 * (double)(b->self_ns - a->self_ns) / window_ns;
    }
    if (out->busy_pct < 0)
        out->busy_pct = 0;
}
#endif
