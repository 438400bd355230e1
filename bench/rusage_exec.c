/* rusage_exec OUT CMD [ARGS...]: run CMD, wait4() it, write its rusage to OUT, exit with its code.
 *
 * Why not os.wait4 straight from Python: at execve() Linux folds the high-water RSS of the
 * *old* address space into the child's ru_maxrss. A child forked (or vforked) from the
 * Python benchmark inherits Python's ~17 MiB, so every tool would report at least that.
 * Forking from this tiny (static when possible) launcher lowers that floor to its own
 * RSS; record.py measures the floor with /bin/true and prints it.
 *
 * OUT gets one line: "rc utime_s stime_s maxrss_kib wall_s". Built by bench/record.py
 * with `cc -O2 [-static]`. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUT CMD [ARGS...]\n", argv[0]);
        return 2;
    }
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("rusage_exec: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror("rusage_exec: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("rusage_exec: wait4");
        return 2;
    }
    double wall = now() - t0;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror("rusage_exec: open OUT");
        return 2;
    }
    fprintf(f, "%d %ld.%06ld %ld.%06ld %ld %.6f\n", rc, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
            (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, ru.ru_maxrss, wall);
    fclose(f);
    return rc;
}
