/* SPDX-License-Identifier: Apache-2.0 */
/* tests/windows/ctrl_event.c - win_ctrl_event.exe, for tests/windows/agent_stop.sh: runs
 * PROGRAM as its child (standard handles inherited) and, once the file TRIGGER exists,
 * sends the child the console control event TRIGGER names ("c", "break" or "close") the
 * way Windows' console does it: a thread started in the child at CtrlRoutine, the
 * routine that calls the process's SetConsoleCtrlHandler handlers, with the event as its
 * argument. Wine's GenerateConsoleCtrlEvent delivers Ctrl-C only (its server answers
 * STATUS_NOT_IMPLEMENTED for the others), hence this way, which Wine's kernelbase exports.
 * Exits with the child's exit code (or 120 and up when it cannot do its part).
 *     win_ctrl_event.exe TRIGGER PROGRAM [ARG...] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

/* Appends arg to cmd (cap wide characters) as CommandLineToArgvW reads it back. */
static int quote(wchar_t *cmd, size_t cap, const wchar_t *arg)
{
    size_t n = wcslen(cmd);
    unsigned slashes = 0;

    if (n + 4 >= cap)
        return -1;
    if (n)
        cmd[n++] = L' ';
    cmd[n++] = L'"';
    for (const wchar_t *p = arg; *p; p++) {
        unsigned extra = *p == L'"' ? slashes + 1 : 0;
        if (n + extra + 3 >= cap)
            return -1;
        for (unsigned i = 0; i < extra; i++)
            cmd[n++] = L'\\';
        slashes = *p == L'\\' ? slashes + 1 : 0;
        cmd[n++] = *p;
    }
    if (n + slashes + 3 >= cap)
        return -1;
    for (unsigned i = 0; i < slashes; i++)
        cmd[n++] = L'\\';
    cmd[n++] = L'"';
    cmd[n] = L'\0';
    return 0;
}

typedef DWORD(WINAPI *ctrl_routine_fn)(void *);

int wmain(int argc, wchar_t **argv); /* -municode: the entry point with wide arguments */

int wmain(int argc, wchar_t **argv)
{
    static wchar_t cmd[32768];
    STARTUPINFOW si = {.cb = sizeof(si)};
    PROCESS_INFORMATION pi;
    ctrl_routine_fn routine = NULL;
    const char *names[] = {"c", "break", "close"};
    const DWORD events[] = {CTRL_C_EVENT, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT};
    DWORD code = 0, event = MAXDWORD;
    char what[16] = "";
    HANDLE t;
    FILE *f;

    if (argc < 3) {
        fprintf(stderr, "usage: win_ctrl_event.exe TRIGGER PROGRAM [ARG...]\n");
        return 120;
    }
    for (int i = 2; i < argc; i++)
        if (quote(cmd, sizeof(cmd) / sizeof(cmd[0]), argv[i]) < 0) {
            fprintf(stderr, "win_ctrl_event: command line too long\n");
            return 120;
        }
    /* The address is the same in the child: kernelbase is mapped at one address in every
     * process of a session (Windows and Wine alike). */
    for (const wchar_t *dll = L"kernelbase.dll"; dll && !routine;
         dll = wcscmp(dll, L"kernelbase.dll") ? NULL : L"kernel32.dll") {
        HMODULE h = GetModuleHandleW(dll);
        if (h)
            routine = (ctrl_routine_fn)(void (*)(void))GetProcAddress(h, "CtrlRoutine");
    }
    if (!routine) {
        fprintf(stderr, "win_ctrl_event: no CtrlRoutine in kernelbase or kernel32\n");
        return 121;
    }
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
    si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    if (!CreateProcessW(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
        fprintf(stderr, "win_ctrl_event: cannot start %ls (error %lu)\n", argv[2],
                (unsigned long)GetLastError());
        return 122;
    }
    CloseHandle(pi.hThread);
    printf("win_ctrl_event: started process %lu\n", (unsigned long)pi.dwProcessId);
    fflush(stdout);
    /* Until TRIGGER names an event, or the child ends. */
    while (event == MAXDWORD && WaitForSingleObject(pi.hProcess, 10) == WAIT_TIMEOUT) {
        if (!(f = _wfopen(argv[1], L"r")))
            continue;
        if (fgets(what, sizeof(what), f))
            what[strcspn(what, "\r\n")] = '\0';
        fclose(f);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (!strcmp(what, names[i]))
                event = events[i];
    }
    if (event != MAXDWORD) {
        t = CreateRemoteThread(pi.hProcess, NULL, 0, (LPTHREAD_START_ROUTINE)routine,
                               (void *)(uintptr_t)event, 0, NULL);
        if (!t) {
            fprintf(stderr, "win_ctrl_event: CreateRemoteThread failed (error %lu)\n",
                    (unsigned long)GetLastError());
            TerminateProcess(pi.hProcess, 1);
            return 123;
        }
        printf("win_ctrl_event: sent %s to process %lu\n", what, (unsigned long)pi.dwProcessId);
        fflush(stdout);
        CloseHandle(t);
    }
    WaitForSingleObject(pi.hProcess, INFINITE);
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hProcess);
    printf("win_ctrl_event: process %lu exited with %lu\n", (unsigned long)pi.dwProcessId,
           (unsigned long)code);
    return (int)code;
}
