/*
 * benchlaunch: run one benchmark process and report what the kernel says about it.
 *
 *   benchlaunch --result FILE [--timeout-ms T] [--mem-limit-kb K] [--guard-ms G] [--cpus LIST]
 *               -- PROGRAM ARGS...
 *
 * Why a separate launcher: on Linux a child's ru_maxrss starts from the RSS of the process that
 * forked it (the value survives exec).  Forking the benchmark from a large Python process would
 * therefore report the harness's size, not the program's.  This launcher is a few hundred KB, so
 * the peak it reports belongs to the program.
 *
 * Nothing here is sampled: wall time is CLOCK_MONOTONIC read just before fork and just after wait4
 * returns; CPU times, peak RSS, context switches and page faults come from the rusage that wait4
 * fills in.  The kernel counts a process's CPU time (user + system) exactly, but on a kernel with
 * tick-based accounting (the usual one) it splits that sum into user and system time by what it
 * finds at each timer tick, so the split is the kernel's sample, not a measurement.  The launcher wakes only to enforce the timeout and the memory guard
 * (it reads /proc/PID/statm every --guard-ms); neither feeds the measurement.
 *
 * --cpus pins the program to a CPU list (`0,2-3`): the child sets its affinity mask with
 * sched_setaffinity between fork and exec, so the program and its runtime see only those CPUs from
 * their first instruction.  A list naming a CPU this process may not use is refused before the fork.
 *
 * The result is one JSON object written to FILE.  Exit status: 0 when the result was written
 * (whatever the program did), 2 on bad usage, 3 on an internal error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t tv_ns(struct timeval tv) {
    return (int64_t)tv.tv_sec * 1000000000LL + (int64_t)tv.tv_usec * 1000LL;
}

/* Resident set size of pid in KiB from /proc/PID/statm, or -1. */
static long rss_kb(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long size = 0, resident = 0;
    int got = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    if (got != 2) return -1;
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void usage(void) {
    fprintf(stderr,
            "usage: benchlaunch --result FILE [--timeout-ms T] [--mem-limit-kb K] [--guard-ms G] [--cpus LIST] "
            "-- PROGRAM [ARGS...]\n");
    exit(2);
}

static long parse_long(const char *flag, const char *s) {
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || !end || *end || v < 0) {
        fprintf(stderr, "benchlaunch: %s needs a non-negative integer, got '%s'\n", flag, s);
        exit(2);
    }
    return v;
}

/* Parse a CPU list ("0", "0,2-3") into set; exit 2 with a message naming the value when it is not
 * one, or names a CPU that this process may not run on. */
static void parse_cpus(const char *list, cpu_set_t *set) {
    CPU_ZERO(set);
    const char *p = list;
    for (;;) {
        char *end = NULL;
        errno = 0;
        long lo = (*p >= '0' && *p <= '9') ? strtol(p, &end, 10) : -1, hi = lo;
        if (lo >= 0 && !errno && *end == '-') {
            p = end + 1;
            hi = (*p >= '0' && *p <= '9') ? strtol(p, &end, 10) : -1;
        }
        if (lo < 0 || hi < lo || errno || hi >= CPU_SETSIZE || (*end != ',' && *end != '\0')) {
            fprintf(stderr, "benchlaunch: --cpus needs a list of CPU numbers below %d such as 0,2-3, got '%s'\n",
                    CPU_SETSIZE, list);
            exit(2);
        }
        for (long cpu = lo; cpu <= hi; cpu++) CPU_SET(cpu, set);
        if (*end == '\0') break;
        p = end + 1;
    }
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("benchlaunch: sched_getaffinity");
        exit(3);
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, set) && !CPU_ISSET(cpu, &allowed)) {
            fprintf(stderr, "benchlaunch: --cpus %s: CPU %d is not one this process may run on (%d allowed)\n",
                    list, cpu, CPU_COUNT(&allowed));
            exit(2);
        }
    }
}

int main(int argc, char **argv) {
    const char *result_path = NULL;
    long timeout_ms = 0, mem_limit_kb = 0, guard_ms = 20;
    const char *cpus = NULL;
    cpu_set_t cpu_set;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) { i++; break; }
        if (i + 1 >= argc) usage();
        if (strcmp(argv[i], "--result") == 0) result_path = argv[++i];
        else if (strcmp(argv[i], "--timeout-ms") == 0) timeout_ms = parse_long(argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--mem-limit-kb") == 0) mem_limit_kb = parse_long(argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--guard-ms") == 0) guard_ms = parse_long(argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--cpus") == 0) cpus = argv[++i];
        else usage();
    }
    if (!result_path || i >= argc) usage();
    if (guard_ms < 1) guard_ms = 1;
    if (cpus) parse_cpus(cpus, &cpu_set);
    char **child_argv = &argv[i];

    /* If the harness dies (kill -9 of a notebook kernel), take the benchmark down with us. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);

    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);

    int64_t start = mono_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("benchlaunch: fork");
        return 3;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        setpgid(0, 0);
        if (cpus && sched_setaffinity(0, sizeof cpu_set, &cpu_set) != 0) {
            fprintf(stderr, "benchlaunch: cannot pin the program to CPUs %s: %s\n", cpus, strerror(errno));
            _exit(127);
        }
        execvp(child_argv[0], child_argv);
        fprintf(stderr, "benchlaunch: cannot execute %s: %s\n", child_argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);

    struct rusage ru;
    int status = 0;
    const char *killed = NULL;
    long guard_peak_kb = 0;
    int64_t end = 0;
    for (;;) {
        struct timespec wait = {guard_ms / 1000, (guard_ms % 1000) * 1000000L};
        sigtimedwait(&chld, NULL, &wait);
        pid_t r = wait4(pid, &status, WNOHANG, &ru);
        if (r == pid) {
            end = mono_ns();
            break;
        }
        if (r < 0 && errno != EINTR) {
            perror("benchlaunch: wait4");
            return 3;
        }
        if (killed) continue; /* already killed; wait for it to go */
        long rss = rss_kb(pid);
        if (rss > guard_peak_kb) guard_peak_kb = rss;
        if (mem_limit_kb > 0 && rss > mem_limit_kb) {
            killed = "memory_limit";
        } else if (timeout_ms > 0 && mono_ns() - start > (int64_t)timeout_ms * 1000000LL) {
            killed = "timeout";
        }
        if (killed) kill(-pid, SIGKILL);
    }

    int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    int term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;

    FILE *out = fopen(result_path, "w");
    if (!out) {
        fprintf(stderr, "benchlaunch: cannot write %s: %s\n", result_path, strerror(errno));
        return 3;
    }
    fprintf(out,
            "{\"wall_ns\":%lld,\"start_mono_ns\":%lld,\"end_mono_ns\":%lld,\"user_ns\":%lld,\"sys_ns\":%lld,"
            "\"maxrss_kb\":%ld,\"nvcsw\":%ld,\"nivcsw\":%ld,\"minflt\":%ld,\"majflt\":%ld,"
            "\"exit_code\":%d,\"signal\":%d,\"killed_by\":%s%s%s,\"guard_peak_rss_kb\":%ld,\"pid\":%d}\n",
            (long long)(end - start), (long long)start, (long long)end, (long long)tv_ns(ru.ru_utime),
            (long long)tv_ns(ru.ru_stime), ru.ru_maxrss, ru.ru_nvcsw, ru.ru_nivcsw, ru.ru_minflt, ru.ru_majflt,
            exit_code, term_signal, killed ? "\"" : "", killed ? killed : "null", killed ? "\"" : "",
            guard_peak_kb, (int)pid);
    if (fclose(out) != 0) {
        fprintf(stderr, "benchlaunch: cannot write %s: %s\n", result_path, strerror(errno));
        return 3;
    }
    return 0;
}
