/*
 * Child processes for the tests (see child_process.h).
 */
#include "child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum { POLL_MS = 2 };

int start_program(const char *const *argv, const char *input_path, const char *out_path,
                  const char *err_path, int address_space_mb) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int in = open(input_path ? input_path : "/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = STDERR_FILENO;
        if (err_path && strcmp(err_path, out_path) == 0) err = out;
        else if (err_path) err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0) _exit(126);
        dup2(in, STDIN_FILENO);
        dup2(out, STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        close(in);
        close(out);
        if (err != out && err != STDERR_FILENO) close(err);
        if (address_space_mb > 0) {
            struct rlimit limit = {(rlim_t)address_space_mb << 20,
                                   (rlim_t)address_space_mb << 20};
            if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(126);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return (int)pid;
}

int wait_program(int pid, const char *name, int timeout_seconds) {
    int wstatus = 0;
    struct timespec pause = {0, POLL_MS * 1000000L};
    for (long waited = 0;; ++waited) {
        pid_t got = waitpid((pid_t)pid, &wstatus, WNOHANG);
        if (got == pid) break;
        assert_true(got == 0 || errno == EINTR);
        if (timeout_seconds > 0 && waited > timeout_seconds * (1000L / POLL_MS)) {
            kill((pid_t)pid, SIGKILL);
            waitpid((pid_t)pid, &wstatus, 0);
            fail_msg("%s did not finish within %d s", name, timeout_seconds);
        }
        nanosleep(&pause, NULL);
    }
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

int run_program(const char *const *argv, const char *input_path, const char *out_path,
                const char *err_path, int timeout_seconds) {
    int pid = start_program(argv, input_path, out_path, err_path, 0);
    return wait_program(pid, argv[0], timeout_seconds);
}
