#define _GNU_SOURCE
#include "CReindexSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <pthread.h>
#include <time.h>
#if defined(__linux__)
#include <sched.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#endif
#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/proc.h>
#endif

int reindex_is_traced(void);

/* Landlock's user-space API (linux/landlock.h), written out here because the installed
   header may predate the ABI this host uses (the kernel keeps these values stable). */
#if defined(__linux__)
#define RX_LL_CREATE_RULESET_VERSION (1U << 0)
#define RX_LL_RULE_PATH_BENEATH 1
#define RX_LL_FS_EXECUTE (1ULL << 0)
#define RX_LL_FS_WRITE_FILE (1ULL << 1)
#define RX_LL_FS_READ_FILE (1ULL << 2)
#define RX_LL_FS_READ_DIR (1ULL << 3)
#define RX_LL_FS_MAKE_SYM (1ULL << 12)   /* the last right of ABI 1 */
#define RX_LL_FS_REFER (1ULL << 13)      /* ABI 2 */
#define RX_LL_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define RX_LL_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define RX_LL_NET_BIND_TCP (1ULL << 0)   /* ABI 4 */
#define RX_LL_NET_CONNECT_TCP (1ULL << 1)
#define RX_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  /* ABI 6 */
#define RX_LL_SCOPE_SIGNAL (1ULL << 1)
#define RX_LL_FILE_RIGHTS (RX_LL_FS_EXECUTE | RX_LL_FS_WRITE_FILE | RX_LL_FS_READ_FILE | RX_LL_FS_TRUNCATE | RX_LL_FS_IOCTL_DEV)

struct rx_ll_ruleset_attr {
    unsigned long long handled_access_fs;
    unsigned long long handled_access_net;
    unsigned long long scoped;
};

struct rx_ll_path_beneath_attr {
    unsigned long long allowed_access;
    int parent_fd;
} __attribute__((packed));

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

/* Every file-system right the given ABI knows. */
static unsigned long long rx_ll_fs_rights(int abi) {
    unsigned long long rights = (RX_LL_FS_MAKE_SYM << 1) - 1;
    if (abi >= 2) rights |= RX_LL_FS_REFER;
    if (abi >= 3) rights |= RX_LL_FS_TRUNCATE;
    if (abi >= 5) rights |= RX_LL_FS_IOCTL_DEV;
    return rights;
}

/* Builds and enforces the sandbox on the calling (single-threaded, forked) process. Only
   async-signal-safe calls. Returns 0, or -1 with errno set. */
static int rx_apply_sandbox(const reindex_sandbox *sandbox) {
    unsigned long long handled = rx_ll_fs_rights(sandbox->abi);
    struct rx_ll_ruleset_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.handled_access_fs = handled;
    if (sandbox->deny_network && sandbox->abi >= 4) {
        /* Handled with no port rule: every TCP bind and connect is denied. */
        attr.handled_access_net = RX_LL_NET_BIND_TCP | RX_LL_NET_CONNECT_TCP;
    }
    if (sandbox->abi >= 6) attr.scoped = RX_LL_SCOPE_ABSTRACT_UNIX_SOCKET | RX_LL_SCOPE_SIGNAL;
    /* The kernel reads the fields it knows; older ones accept the larger struct when the
       fields they do not know are zero, as they are below ABI 4 and 6. */
    size_t size = sandbox->abi >= 6 ? sizeof attr : (sandbox->abi >= 4 ? 2 * sizeof(unsigned long long) : sizeof(unsigned long long));
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0U);
    if (ruleset < 0) return -1;
    for (int i = 0; i < sandbox->rule_count; i++) {
        const reindex_sandbox_rule *rule = &sandbox->rules[i];
        int fd = open(rule->path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;  /* gone since the host looked: nothing to grant */
        struct stat st;
        if (fstat(fd, &st) != 0) { close(fd); continue; }
        unsigned long long access;
        switch (rule->access) {
        case REINDEX_SANDBOX_WRITE: access = handled; break;
        case REINDEX_SANDBOX_DEVICE: access = RX_LL_FS_READ_FILE | RX_LL_FS_WRITE_FILE | RX_LL_FS_TRUNCATE | RX_LL_FS_IOCTL_DEV; break;
        default: access = RX_LL_FS_EXECUTE | RX_LL_FS_READ_FILE | RX_LL_FS_READ_DIR; break;
        }
        /* Directory rights only on directories; a symlink (O_NOFOLLOW) gets nothing useful. */
        if (!S_ISDIR(st.st_mode)) access &= RX_LL_FILE_RIGHTS;
        access &= handled;
        if (access == 0 || S_ISLNK(st.st_mode)) { close(fd); continue; }
        struct rx_ll_path_beneath_attr beneath = { access, fd };
        long rc = syscall(SYS_landlock_add_rule, ruleset, RX_LL_RULE_PATH_BENEATH, &beneath, 0U);
        int saved = errno;
        close(fd);
        if (rc != 0) { close(ruleset); errno = saved; return -1; }
    }
    long rc = syscall(SYS_landlock_restrict_self, ruleset, 0U);
    int saved = errno;
    close(ruleset);
    errno = saved;
    return rc == 0 ? 0 : -1;
}

/* The system calls that change a file's mode, owner, times or extended attributes (an ACL in
   system.posix_acl_access is a mode too). Landlock (up to ABI 7) does not mediate them: with only
   the right to walk through a directory, a process can chmod the index or another bundle's
   manifest. They fail with EPERM in the sandbox, for every file (a seccomp filter sees numbers and
   pointers, not paths or how a descriptor was opened). */
static const int rx_metadata_calls[] = {
#ifdef __NR_chmod
    __NR_chmod,
#endif
#ifdef __NR_lchown
    __NR_lchown,
#endif
#ifdef __NR_chown
    __NR_chown,
#endif
#ifdef __NR_utime
    __NR_utime,
#endif
#ifdef __NR_utimes
    __NR_utimes,
#endif
#ifdef __NR_futimesat
    __NR_futimesat,
#endif
    __NR_fchmod, __NR_fchmodat, __NR_fchown, __NR_fchownat, __NR_utimensat,
    __NR_setxattr, __NR_lsetxattr, __NR_fsetxattr, __NR_removexattr, __NR_lremovexattr, __NR_fremovexattr,
    /* Newer calls have the same number on every architecture. */
    452,  /* fchmodat2 (Linux 6.6) */
    463,  /* setxattrat (Linux 6.13) */
    466,  /* removexattrat (Linux 6.13) */
};

#if defined(__x86_64__)
#define RX_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define RX_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* Installs the filter (no_new_privs is set). A system call of another architecture than the
   host's (i386 through int 0x80 on x86_64, whose numbers differ) kills the process: the numbers
   above would not hold for it. x32 calls (__X32_SYSCALL_BIT) fail with EPERM. */
static int rx_deny_metadata_changes(void) {
#if defined(RX_AUDIT_ARCH)
    enum { calls = sizeof rx_metadata_calls / sizeof rx_metadata_calls[0] };
    /* 0 load arch, 1 compare, 2 kill, 3 load nr, 4 x32?, 5.. one compare per call, allow, deny */
    struct sock_filter program[7 + calls];
    int n = 0;
    program[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    program[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RX_AUDIT_ARCH, 1, 0);
    program[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    program[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    program[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, calls + 1, 0);
    for (int i = 0; i < (int)calls; i++) {
        program[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)rx_metadata_calls[i], (unsigned char)(calls - i), 0);
    }
    program[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    program[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    struct sock_fprog fprog = { (unsigned short)n, program };
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) == 0 ? 0 : -1;
#else
    return 0;  /* no filter for this architecture: docs/SECURITY.md says so */
#endif
}
#endif

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

/* A sanitizer's runtime (ThreadSanitizer, AddressSanitizer) intercepts clone and takes every
   child for a fork, whose copy of its state it then updates: in a child that shares the host's
   memory that is the host's state, and ThreadSanitizer aborts. Sanitized builds fork. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define RX_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RX_SANITIZED 1
#endif

/* What the child is given: the configuration and the write end of the status pipe. */
typedef struct {
    const reindex_spawn_config *config;
    int status_fd;
} rx_child_start;

/* The child, from its start to exec: only async-signal-safe calls, no allocation and no locks
   (it may run in the host's memory, beside the host's other threads). Never returns. */
static int rx_child(void *argument) {
    const reindex_spawn_config *config = ((const rx_child_start *)argument)->config;
    int status_fd = ((const rx_child_start *)argument)->status_fd;
    setpgid(0, 0);
#if defined(__linux__)
    if (config->die_with_parent) {
        /* The extension has a process group of its own, so a host killed outright would leave
           it behind (waiting in a debugger gate, say): the kernel kills it instead. */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != config->parent_pid) _exit(127);  /* the host died before the call */
    }
#endif

    /* Signals: default dispositions, then an empty mask, whatever the host had. In that order:
       the child may share the host's memory (below), where none of its handlers may run. */
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        if (signal(sig, SIG_DFL) != SIG_ERR) continue;
#if defined(__linux__)
        /* The C library keeps its own signals (32, 33) from signal(); an ignored one would
           survive exec. The kernel's call, with the kernel's struct, resets them too. */
        struct { void (*handler)(int); unsigned long flags; void (*restorer)(void); unsigned long mask; } action = { SIG_DFL, 0, NULL, 0 };
        syscall(SYS_rt_sigaction, sig, &action, NULL, sizeof action.mask);
#endif
    }
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);

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
    /* Priority only ever goes down (a larger nice value), so it cannot fail for want of privilege. */
    if (config->nice_at_least >= 0) {
        errno = 0;
        int current = getpriority(PRIO_PROCESS, 0);
        if (errno == 0 && current < config->nice_at_least) setpriority(PRIO_PROCESS, 0, config->nice_at_least);
    }
#if defined(__linux__) && defined(SYS_ioprio_set)
    if (config->io_idle) {
        /* IOPRIO_WHO_PROCESS, this process, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0). */
        syscall(SYS_ioprio_set, 1, 0, 3 << 13);
    }
#endif
#if defined(__linux__)
    if (config->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(status_fd, 5);
    if (config->sandbox != NULL && rx_apply_sandbox(config->sandbox) != 0) child_fail(status_fd, 6);
    if (config->sandbox != NULL && rx_deny_metadata_changes() != 0) child_fail(status_fd, 7);
    if (config->reap_descendants) {
        /* What the extension's children leave behind while it runs stays below it (not the
           host's yet, where another extension's sweep could not tell whose it is); when it
           ends, all of it goes to the host, the subreaper above it, which stops it.
           Preserved across exec. */
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
#else
    if (config->sandbox != NULL) { errno = ENOSYS; child_fail(status_fd, 6); }
#endif
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
    return 127;
}

int reindex_spawn(const reindex_spawn_config *config, pid_t *pid_out, int *status_fd_out) {
    int status_pipe[2];
    if (reindex_pipe_cloexec(status_pipe) != 0) return -1;
    rx_child_start start = { config, status_pipe[1] };

    pid_t pid = -1;
    int started = 0;
#if defined(__linux__) && !defined(RX_SANITIZED)
    if (config->wait_for_tracer < 0) {
        /* The child shares the host's memory until exec and this thread waits until then, as
           posix_spawn does: a fork would copy the page tables of the host's whole image and make
           every page either process writes meanwhile a copy-on-write fault. The child runs on a
           stack of its own with every signal blocked until it has reset their handlers. */
        enum { stack_size = 256 * 1024 };
        void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack != MAP_FAILED) {
            sigset_t all, previous;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &previous);
            pid = clone(rx_child, (char *)stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
            int saved = errno;
            pthread_sigmask(SIG_SETMASK, &previous, NULL);
            munmap(stack, stack_size);
            errno = saved;
            started = 1;
        }
    }
#endif
    if (!started) {
        pid = fork();
        if (pid == 0) rx_child(&start);
    }
    if (pid < 0) {
        int saved = errno;
        close(status_pipe[0]);
        close(status_pipe[1]);
        errno = saved;
        return -1;
    }
    /* Parent. Setting the group here too closes the race with an early kill(-pid). */
    setpgid(pid, pid);
    close(status_pipe[1]);
    *pid_out = pid;
    *status_fd_out = status_pipe[0];
    return 0;
}

int reindex_exit_fd(pid_t pid) {
#if defined(__linux__)
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
    return (int)syscall(SYS_pidfd_open, pid, 0U);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int reindex_landlock_abi(void) {
#if defined(__linux__)
    return (int)syscall(SYS_landlock_create_ruleset, NULL, 0, RX_LL_CREATE_RULESET_VERSION);
#else
    errno = ENOSYS;
    return -1;
#endif
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

int reindex_process_is_traced(int pid) {
#if defined(__linux__)
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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
    int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_PID, pid };
    struct kinfo_proc info;
    size_t size = sizeof info;
    memset(&info, 0, sizeof info);
    if (sysctl(mib, 4, &info, &size, NULL, 0) != 0 || size == 0) return -1;  /* no such process */
    return (info.kp_proc.p_flag & P_TRACED) != 0 ? 1 : 0;
#else
    return -1;
#endif
}

int reindex_is_traced(void) {
    return reindex_process_is_traced(getpid());
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
