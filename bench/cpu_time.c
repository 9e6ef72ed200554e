/*
 * Runs a command with its output discarded and prints the CPU time (user +
 * system, in seconds, to the microsecond) it used, then its exit status:
 *
 *   cpu_time COMMAND [ARGS...]      ->  "0.004213 0"
 *
 * bench/time_cli.sh times whole solver processes with it: unlike timing a
 * shell that starts the command, it counts only the command's own process
 * (start-up, reading, solving, writing), which is what differs between two
 * solvers on small graphs.
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: cpu_time COMMAND [ARGS...]\n");
        return 2;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("cpu_time: fork");
        return 2;
    }
    if (child == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(child, &status, 0, &usage) < 0) {
        perror("cpu_time: wait4");
        return 2;
    }
    double seconds = (double)usage.ru_utime.tv_sec + 1e-6 * (double)usage.ru_utime.tv_usec +
                     (double)usage.ru_stime.tv_sec + 1e-6 * (double)usage.ru_stime.tv_usec;
    printf("%.6f %d\n", seconds, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
