#define _GNU_SOURCE
#include "CReindexSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <time.h>
#if defined(__linux__)
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#endif
#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/proc.h>
#endif

int reindex_is_traced(void);

static void child_fail(int status_fd, int stage) {
    int payload[2] = { stage, errno };
    ssize_t ignored = write(status_fd, payload, sizeof payload);
    (void)ignored;
    _exit(127);
}

static void close_from(int lowfd) {
#if defined(__linux__) && defined(SYS_close_range)
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (int fd = lowfd; fd < max; fd++) close(fd);
}

int reindex_pipe_cloexec(int fds[2]) {
#if defined(__linux__)
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

int reindex_spawn(const reindex_spawn_config *config, pid_t *pid_out, int *status_fd_out) {
    int status_pipe[2];
    if (reindex_pipe_cloexec(status_pipe) != 0) return -1;

    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(status_pipe[0]);
        close(status_pipe[1]);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        /* Child: only async-signal-safe calls from here on. */
        int status_fd = status_pipe[1];
        setpgid(0, 0);

        /* Signals: default dispositions and an empty mask, whatever the host had. */
        sigset_t empty;
        sigemptyset(&empty);
        sigprocmask(SIG_SETMASK, &empty, NULL);
        for (int sig = 1; sig < 32; sig++) {
            if (sig == SIGKILL || sig == SIGSTOP) continue;
            signal(sig, SIG_DFL);
        }

        /* Move everything we need above the standard descriptors, then place it. */
        int in = fcntl(config->stdin_fd, F_DUPFD, 10);
        int out = fcntl(config->stdout_fd, F_DUPFD, 10);
        int err = fcntl(config->stderr_fd, F_DUPFD, 10);
        int st = fcntl(status_fd, F_DUPFD, 10);
        if (in < 0 || out < 0 || err < 0 || st < 0) child_fail(status_fd, 3);
        status_fd = st;
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) child_fail(status_fd, 3);
        if (dup2(status_fd, 3) < 0) child_fail(status_fd, 3);
        status_fd = 3;
        fcntl(status_fd, F_SETFD, FD_CLOEXEC);
        close_from(4);

        if (config->cwd != NULL && chdir(config->cwd) != 0) child_fail(status_fd, 1);
        if (config->rlimit_as_bytes > 0) {
            struct rlimit limit = { (rlim_t)config->rlimit_as_bytes, (rlim_t)config->rlimit_as_bytes };
            if (setrlimit(RLIMIT_AS, &limit) != 0) child_fail(status_fd, 4);
        }
        if (config->rlimit_cpu_seconds > 0) {
            struct rlimit limit = { (rlim_t)config->rlimit_cpu_seconds, (rlim_t)config->rlimit_cpu_seconds + 2 };
            if (setrlimit(RLIMIT_CPU, &limit) != 0) child_fail(status_fd, 4);
        }
        if (config->wait_for_tracer >= 0) {
            /* Debug mode for extensions without a gate of their own: wait, before exec, until a
               debugger traces us (it then follows the exec), or the time is up. */
#if defined(__linux__) && defined(PR_SET_PTRACER)
            prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
            struct timespec start, now, pause = { 0, 50 * 1000 * 1000 };
            clock_gettime(CLOCK_MONOTONIC, &start);
            while (reindex_is_traced() != 1) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (config->wait_for_tracer > 0 && now.tv_sec - start.tv_sec >= config->wait_for_tracer) break;
                nanosleep(&pause, NULL);
            }
        }
        execve(config->path, config->argv, config->envp);
        child_fail(status_fd, 2);
    }
    /* Parent. Setting the group here too closes the race with an early kill(-pid). */
    setpgid(pid, pid);
    close(status_pipe[1]);
    *pid_out = pid;
    *status_fd_out = status_pipe[0];
    return 0;
}

int reindex_allow_any_tracer(void) {
#if defined(__linux__) && defined(PR_SET_PTRACER)
    return prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#else
    return 0;
#endif
}

int reindex_become_child_subreaper(void) {
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int reindex_is_traced(void) {
#if defined(__linux__)
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[4096];
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return -1;
    buffer[n] = 0;
    char *line = strstr(buffer, "TracerPid:");
    if (line == NULL) return -1;
    line += strlen("TracerPid:");
    while (*line == ' ' || *line == '\t') line++;
    return (*line != '0') ? 1 : 0;
#elif defined(__APPLE__)
    int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_PID, getpid() };
    struct kinfo_proc info;
    size_t size = sizeof info;
    memset(&info, 0, sizeof info);
    if (sysctl(mib, 4, &info, &size, NULL, 0) != 0) return -1;
    return (info.kp_proc.p_flag & P_TRACED) != 0 ? 1 : 0;
#else
    return -1;
#endif
}

int reindex_set_nonblocking(int fd, int on) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
    return fcntl(fd, F_SETFL, flags);
}

int reindex_wifexited(int status) { return WIFEXITED(status); }
int reindex_wexitstatus(int status) { return WEXITSTATUS(status); }
int reindex_wifsignaled(int status) { return WIFSIGNALED(status); }
int reindex_wtermsig(int status) { return WTERMSIG(status); }
int reindex_wifstopped(int status) { return WIFSTOPPED(status); }

int reindex_contains(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length) != NULL ? 1 : 0;
}

int reindex_watch_init(void) {
#if defined(__linux__)
    return inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
#else
    return -1;
#endif
}

int reindex_watch_add(int fd, const char *path) {
#if defined(__linux__)
    return inotify_add_watch(fd, path, IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                             IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
#else
    (void)fd; (void)path;
    return -1;
#endif
}
