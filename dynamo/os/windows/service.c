/* SPDX-License-Identifier: Apache-2.0 */
/* dynamo/os/windows/service.c - `dynamo.exe service install|uninstall|start|stop`
 * and `service run`, what the Service Control Manager starts: the agent as the
 * Windows service "iofleet-dynamo" (dynamo/os/os.h, dyn_os_service). The
 * options given to install are checked, then kept in the service's command
 * line; the service runs from dynamo.exe's folder (a relative --workdir is
 * there), logs to the Windows event log (source "iofleet-dynamo",
 * dynamo/os/windows/eventlog.c) or, with `--log-file PATH` given to install,
 * to that file (relative: beside dynamo.exe), and a stop (or the machine's
 * shutdown) stops the agent as Ctrl-C does (dyn_win_stop_request): the
 * service is SERVICE_STOP_PENDING, its checkpoint moving on, until the agent
 * has ended its I/O and returned, and only then SERVICE_STOPPED. */
#ifdef _WIN32
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#include "common/err.h"
#include "common/log.h"
#include "dynamo/agent.h"
#include "dynamo/os/os.h"

#define SVC_NAME L"iofleet-dynamo"
#define SVC_DISPLAY L"iofleet agent (dynamo)"
#define SVC_WAIT_MS 30000
/* While the agent stops: the checkpoint moves on every SVC_PENDING_MS, and
 * the service manager is told to expect the next one within SVC_HINT_MS. A
 * stop takes well under a second; one that waits for in-flight I/O may take
 * up to the workers' drain bound (30 s, dynamo/run_int.h). */
#define SVC_PENDING_MS 500
#define SVC_HINT_MS 3000

static dyn_os_agent_fn svc_agent;
static int svc_argc;
static char **svc_argv;
static const char *svc_log_file; /* --log-file: NULL for the event log */
static SERVICE_STATUS_HANDLE svc_handle;
static SERVICE_STATUS svc_status = {.dwServiceType = SERVICE_WIN32_OWN_PROCESS};
static CRITICAL_SECTION svc_lock; /* svc_status: the service's thread and the stopping one */
static HANDLE svc_done;           /* set once the agent has returned */
static bool svc_stopping;         /* a stop or shutdown came (under svc_lock) */

/* Reports `state` to the service manager; nothing after SERVICE_STOPPED. */
static void svc_report(DWORD state, DWORD code)
{
    EnterCriticalSection(&svc_lock);
    if (svc_status.dwCurrentState != SERVICE_STOPPED) {
        svc_status.dwCurrentState = state;
        svc_status.dwWin32ExitCode = code ? ERROR_SERVICE_SPECIFIC_ERROR : NO_ERROR;
        svc_status.dwServiceSpecificExitCode = code;
        svc_status.dwControlsAccepted =
            state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN : 0;
        svc_status.dwCheckPoint = state == SERVICE_STOP_PENDING ? svc_status.dwCheckPoint + 1 : 0;
        svc_status.dwWaitHint = state == SERVICE_STOP_PENDING ? SVC_HINT_MS : 0;
        SetServiceStatus(svc_handle, &svc_status);
    }
    LeaveCriticalSection(&svc_lock);
}

/* The stop, on a thread of its own (the control handler must return at
 * once): the agent asked to stop, again until one takes it (a stop that
 * came while the agent was starting), and SERVICE_STOP_PENDING with the next
 * checkpoint every SVC_PENDING_MS until the agent has returned; svc_main
 * then reports SERVICE_STOPPED. */
static DWORD WINAPI svc_stop_thread(void *arg)
{
    const char *what = arg;
    bool asked = false;

    do {
        asked = asked || dyn_win_stop_request(what) == 0;
        svc_report(SERVICE_STOP_PENDING, 0);
    } while (WaitForSingleObject(svc_done, SVC_PENDING_MS) == WAIT_TIMEOUT);
    return 0;
}

static DWORD WINAPI svc_control(DWORD ctrl, DWORD type, void *data, void *ctx)
{
    const char *what =
        ctrl == SERVICE_CONTROL_STOP ? "the service's stop" : "the system's shutdown";
    bool first;
    HANDLE t;

    (void)type, (void)data, (void)ctx;
    if (ctrl != SERVICE_CONTROL_STOP && ctrl != SERVICE_CONTROL_SHUTDOWN)
        return ctrl == SERVICE_CONTROL_INTERROGATE ? NO_ERROR : ERROR_CALL_NOT_IMPLEMENTED;
    EnterCriticalSection(&svc_lock);
    first = !svc_stopping;
    svc_stopping = true;
    LeaveCriticalSection(&svc_lock);
    if (!first)
        return NO_ERROR;
    IOF_INFO("%s: stopping all I/O and shutting down", what);
    t = CreateThread(NULL, 0, svc_stop_thread, (void *)what, 0, NULL);
    if (t) {
        CloseHandle(t);
    } else {
        /* No thread: asked once, without the checkpoints. */
        svc_report(SERVICE_STOP_PENDING, 0);
        dyn_win_stop_request(what);
    }
    return NO_ERROR;
}

static void WINAPI svc_main(DWORD n, wchar_t **args)
{
    int rc;

    (void)n, (void)args;
    svc_handle = RegisterServiceCtrlHandlerExW(SVC_NAME, svc_control, NULL);
    if (!svc_handle)
        return;
    svc_report(SERVICE_RUNNING, 0);
    rc = svc_agent(svc_argc, svc_argv, false);
    /* The agent has returned: its tests' I/O ended (dyn_agent_main). */
    SetEvent(svc_done);
    svc_report(SERVICE_STOPPED, (DWORD)rc);
}

/* dynamo.exe's path, and its folder (path cut at the last '\'). */
static int svc_exe(wchar_t *path, size_t cap, wchar_t *dir)
{
    DWORD n = GetModuleFileNameW(NULL, path, (DWORD)cap);
    wchar_t *sep;

    if (n == 0 || n >= cap)
        return -ENAMETOOLONG;
    wcscpy(dir, path);
    sep = wcsrchr(dir, L'\\');
    if (sep)
        sep[1] = L'\0';
    return 0;
}

/* Takes `--log-file PATH` (or `--log-file=PATH`) out of argv[1..]: the
 * path in *file (NULL when absent); -1 when it has no value (or an option
 * where the name should be). */
static int svc_take_log_file(int *argc, char **argv, const char **file)
{
    *file = NULL;
    for (int i = 1; i < *argc; i++) {
        int n;
        if (!strncmp(argv[i], "--log-file=", 11)) {
            *file = argv[i] + 11;
            n = 1;
        } else if (!strcmp(argv[i], "--log-file")) {
            if (i + 1 >= *argc)
                return -1;
            *file = argv[i + 1];
            n = 2;
        } else {
            continue;
        }
        if (!**file || **file == '-') /* "--log-file --listen ...": no name given */
            return -1;
        memmove(argv + i, argv + i + n, (size_t)(*argc - i - n + 1) * sizeof(*argv));
        *argc -= n;
        i--;
    }
    return 0;
}

/* The service process: from dynamo.exe's folder, stderr to the event log or
 * to the --log-file. */
static int svc_run(void)
{
    static const SERVICE_TABLE_ENTRYW table[] = {{(wchar_t *)SVC_NAME, svc_main}, {NULL, NULL}};
    wchar_t exe[MAX_PATH], dir[MAX_PATH], log[MAX_PATH * 2];
    struct iof_diag d = {{0}};
    bool evlog = false;
    int fd;

    InitializeCriticalSection(&svc_lock);
    svc_done = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!svc_done) {
        IOF_USER("dynamo: service run: cannot create an event (error %lu)",
                 (unsigned long)GetLastError());
        return 1;
    }
    if (svc_exe(exe, MAX_PATH, dir) == 0)
        SetCurrentDirectoryW(dir);
    if (svc_log_file) {
        if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, svc_log_file, -1, log,
                                MAX_PATH * 2) > 0 &&
            (fd = _wopen(log, _O_WRONLY | _O_APPEND | _O_CREAT | _O_BINARY,
                         _S_IREAD | _S_IWRITE)) >= 0) {
            _dup2(fd, 2);
            _close(fd);
        }
    } else {
        evlog = dyn_win_eventlog_start(DYN_WIN_EVENT_SOURCE, &d) == 0;
    }
    if (!StartServiceCtrlDispatcherW(table)) {
        IOF_USER("dynamo: service run: not started by the Service Control Manager (error %lu): "
                 "use `dynamo.exe service start`",
                 (unsigned long)GetLastError());
        if (evlog)
            dyn_win_eventlog_stop(NULL, NULL);
        return 1;
    }
    if (evlog)
        dyn_win_eventlog_stop(NULL, NULL);
    return (int)svc_status.dwServiceSpecificExitCode;
}

/* Appends s to cmd as one argument, quoted as CommandLineToArgvW reads it. */
static int svc_quote(wchar_t *cmd, size_t cap, const char *s)
{
    size_t n = wcslen(cmd);
    wchar_t w[4096];
    unsigned slashes = 0;

    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, 4096) <= 0)
        return -EINVAL;
    if (n + 4 >= cap)
        return -E2BIG;
    cmd[n++] = L' ';
    cmd[n++] = L'"';
    for (const wchar_t *p = w; *p; p++) {
        unsigned extra = *p == L'"' ? slashes + 1 : 0;
        if (n + extra + 3 >= cap)
            return -E2BIG;
        for (unsigned i = 0; i < extra; i++)
            cmd[n++] = L'\\';
        slashes = *p == L'\\' ? slashes + 1 : 0;
        cmd[n++] = *p;
    }
    if (n + slashes + 3 >= cap)
        return -E2BIG;
    for (unsigned i = 0; i < slashes; i++)
        cmd[n++] = L'\\';
    cmd[n++] = L'"';
    cmd[n] = L'\0';
    return 0;
}

static int svc_fail(const char *what, SC_HANDLE a, SC_HANDLE b)
{
    DWORD e = GetLastError();
    char msg[256] = "";

    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0, msg,
                   sizeof(msg), NULL);
    msg[strcspn(msg, "\r\n")] = '\0';
    IOF_USER("dynamo: service %s: %s (error %lu)%s", what, msg, (unsigned long)e,
             e == ERROR_ACCESS_DENIED ? ": run it as an administrator" : "");
    if (b)
        CloseServiceHandle(b);
    if (a)
        CloseServiceHandle(a);
    return e == ERROR_SERVICE_DOES_NOT_EXIST || e == ERROR_SERVICE_EXISTS ? 2 : 1;
}

/* Waits until the service is in `want` (30 s at most). */
static bool svc_wait(SC_HANDLE s, DWORD want, SERVICE_STATUS_PROCESS *st)
{
    DWORD n;

    for (unsigned waited = 0; waited <= SVC_WAIT_MS; waited += 100) {
        if (!QueryServiceStatusEx(s, SC_STATUS_PROCESS_INFO, (BYTE *)st, sizeof(*st), &n))
            return false;
        if (st->dwCurrentState == want)
            return true;
        if (want == SERVICE_RUNNING && st->dwCurrentState == SERVICE_STOPPED)
            return false;
        Sleep(100);
    }
    return false;
}

static int svc_install(int argc, char **argv)
{
    wchar_t exe[MAX_PATH], dir[MAX_PATH], cmd[32768];
    SC_HANDLE m, s;
    const char *log_file;
    int rc;

    argv[0] = argv[-2];
    if (svc_take_log_file(&argc, argv, &log_file) < 0) {
        IOF_USER("dynamo: service install: --log-file needs a file name");
        return 2;
    }
    /* The options as the service will run them: refused now, not at its start. */
    rc = svc_agent(argc, argv, true);
    if (rc)
        return rc;
    if (svc_exe(exe, MAX_PATH, dir) < 0)
        return svc_fail("install", NULL, NULL);
    swprintf(cmd, 32768, L"\"%ls\" service run", exe);
    if (log_file &&
        (svc_quote(cmd, 32768, "--log-file") < 0 || svc_quote(cmd, 32768, log_file) < 0)) {
        IOF_USER("dynamo: service install: the --log-file name is too long or not UTF-8");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (svc_quote(cmd, 32768, argv[i]) < 0) {
            IOF_USER("dynamo: service install: the options are too long or not UTF-8");
            return 2;
        }
    m = OpenSCManagerW(NULL, NULL, SC_MANAGER_CREATE_SERVICE);
    if (!m)
        return svc_fail("install", NULL, NULL);
    s = CreateServiceW(m, SVC_NAME, SVC_DISPLAY, SERVICE_ALL_ACCESS, SERVICE_WIN32_OWN_PROCESS,
                       SERVICE_AUTO_START, SERVICE_ERROR_NORMAL, cmd, NULL, NULL, NULL, NULL, NULL);
    if (!s)
        return svc_fail("install", m, NULL);
    printf("service iofleet-dynamo installed (started at boot; now: dynamo.exe service start): "
           "%ls\n",
           cmd);
    CloseServiceHandle(s);
    CloseServiceHandle(m);
    return 0;
}

static int svc_command(const char *cmd)
{
    SERVICE_STATUS_PROCESS st;
    SERVICE_STATUS ss;
    SC_HANDLE m = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT), s;
    DWORD access = !strcmp(cmd, "start")  ? SERVICE_START | SERVICE_QUERY_STATUS
                   : !strcmp(cmd, "stop") ? SERVICE_STOP | SERVICE_QUERY_STATUS
                                          : SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE;

    if (!m)
        return svc_fail(cmd, NULL, NULL);
    s = OpenServiceW(m, SVC_NAME, access);
    if (!s)
        return svc_fail(cmd, m, NULL);
    if (!strcmp(cmd, "start")) {
        if (!StartServiceW(s, 0, NULL) || !svc_wait(s, SERVICE_RUNNING, &st))
            return svc_fail("start", m, s);
        printf("service iofleet-dynamo running (process %lu); its log: the Application event "
               "log (source iofleet-dynamo), or the --log-file given to install\n",
               (unsigned long)st.dwProcessId);
    } else {
        /* stop, and uninstall (which stops it first) */
        ULONGLONG t0 = GetTickCount64();
        bool stopped = ControlService(s, SERVICE_CONTROL_STOP, &ss);
        if (stopped && !svc_wait(s, SERVICE_STOPPED, &st))
            return svc_fail(cmd, m, s);
        if (!strcmp(cmd, "uninstall") && !DeleteService(s))
            return svc_fail("uninstall", m, s);
        if (!strcmp(cmd, "uninstall"))
            printf("service iofleet-dynamo uninstalled\n");
        else if (stopped)
            printf("service iofleet-dynamo stopped (%llu ms after the stop request)\n",
                   (unsigned long long)(GetTickCount64() - t0));
        else
            printf("service iofleet-dynamo stopped\n");
    }
    CloseServiceHandle(s);
    CloseServiceHandle(m);
    return 0;
}

int dyn_os_service(int argc, char **argv, dyn_os_agent_fn agent)
{
    const char *cmd;

    if (argc < 2 || strcmp(argv[1], "service"))
        return -1;
    svc_agent = agent;
    cmd = argc > 2 ? argv[2] : "";
    if (!strcmp(cmd, "install"))
        return svc_install(argc - 2, argv + 2);
    if (!strcmp(cmd, "run")) {
        /* argv[0] then the options: what the agent parses. */
        svc_argc = argc - 2;
        svc_argv = argv + 2;
        svc_argv[0] = argv[0];
        if (svc_take_log_file(&svc_argc, svc_argv, &svc_log_file) < 0) {
            IOF_USER("dynamo: service run: --log-file needs a file name");
            return 2;
        }
        return svc_run();
    }
    if (!strcmp(cmd, "uninstall") || !strcmp(cmd, "start") || !strcmp(cmd, "stop")) {
        if (argc > 3) {
            IOF_USER("dynamo: service %s takes no options", cmd);
            return 2;
        }
        return svc_command(cmd);
    }
    IOF_USER("dynamo: service: give install [--log-file FILE] [DYNAMO OPTIONS], uninstall, start "
             "or stop%s%s%s",
             *cmd ? " (not '" : "", cmd, *cmd ? "')" : "");
    return 2;
}
#endif
