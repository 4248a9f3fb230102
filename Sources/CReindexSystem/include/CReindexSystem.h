#ifndef REINDEX_SYSTEM_H
#define REINDEX_SYSTEM_H

#include <sys/types.h>

/// How a sandbox rule lets the extension use a path (and everything beneath it).
enum {
    REINDEX_SANDBOX_READ = 1,    /* read files, list directories, execute */
    REINDEX_SANDBOX_WRITE = 2,   /* everything Landlock can grant: read, write, create, remove, rename */
    REINDEX_SANDBOX_DEVICE = 3,  /* read, write, truncate and ioctl a device file (/dev/null) */
};

/// One path the sandboxed child may use. The host resolves paths; the child opens each with
/// O_PATH|O_NOFOLLOW (a path that vanished is skipped) and adds a Landlock rule for it.
typedef struct {
    const char *path;
    int access;                /* REINDEX_SANDBOX_READ, _WRITE or _DEVICE */
} reindex_sandbox_rule;

/// A Landlock sandbox for the child: everything on the file system not granted by a rule is
/// denied; with `deny_network` so are TCP bind and connect (ABI >= 4); signals and abstract
/// UNIX sockets are scoped to the sandbox (ABI >= 6). With it, a seccomp filter makes every
/// system call that changes a file's mode, owner or times fail with EPERM (Linux x86_64, aarch64).
typedef struct {
    int abi;                   /* the Landlock ABI the host detected (>= 1) */
    const reindex_sandbox_rule *rules;
    int rule_count;
    int deny_network;
} reindex_sandbox;

/// What the child must look like at `exec`. Every pointer must stay valid for the call.
typedef struct {
    const char *path;          /* executable to exec */
    char *const *argv;         /* NULL-terminated */
    char *const *envp;         /* NULL-terminated; the child's whole environment */
    const char *cwd;           /* working directory, or NULL */
    int stdin_fd;              /* becomes fd 0 in the child */
    int stdout_fd;             /* becomes fd 1 */
    int stderr_fd;             /* becomes fd 2 */
    int wait_for_tracer;       /* -1: exec at once; 0: wait (before exec) until traced; N: at most N seconds */
    long long rlimit_as_bytes; /* RLIMIT_AS for the child, 0 = unchanged */
    long long rlimit_cpu_seconds; /* RLIMIT_CPU for the child, 0 = unchanged */
    int nice_at_least;         /* -1: unchanged; else the child's nice value is raised to at least this */
    int io_idle;               /* 1: the idle I/O scheduling class (Linux ioprio_set) */
    int no_new_privs;          /* 1: PR_SET_NO_NEW_PRIVS (Linux) */
    const reindex_sandbox *sandbox; /* Landlock rules to enforce before exec, or NULL */
    int die_with_parent;       /* 1: SIGKILL when the host dies, even killed (Linux PR_SET_PDEATHSIG) */
    int parent_pid;            /* the host's pid, for die_with_parent */
    int reap_descendants;      /* 1: the child is the subreaper of its own descendants (Linux PR_SET_CHILD_SUBREAPER) */
} reindex_spawn_config;

/// Starts the child and execs. Without `wait_for_tracer` the child shares the host's memory
/// until exec (Linux: clone with CLONE_VM|CLONE_VFORK on a stack of its own, as posix_spawn
/// does), so the host's page tables are never copied and the calling thread resumes once the
/// child has exec'd or failed; with it, the child is forked (it may wait long before exec).
/// On success returns 0, stores the child's pid and a read end of a
/// close-on-exec status pipe: reading it yields EOF once exec succeeded, or two ints
/// (stage, errno) when the child failed before exec. Stage 1 = chdir, 2 = exec, 3 = fd setup,
/// 4 = resource limits, 5 = no_new_privs, 6 = the sandbox (Landlock), 7 = the seccomp filter.
/// The child applies, in order: descriptors, signals, working directory, rlimits, priority,
/// no_new_privs, the sandbox (Landlock, then a seccomp filter that makes chmod, chown and utimes
/// and their variants fail with EPERM), the subreaper attribute, the wait for a tracer, exec.
/// On failure to fork returns -1 with errno set.
int reindex_spawn(const reindex_spawn_config *config, pid_t *pid_out, int *status_fd_out);

/// A descriptor that polls readable once process `pid` (a child of this process) has ended
/// (Linux pidfd_open, close-on-exec), or -1 where the system has none.
int reindex_exit_fd(pid_t pid);

/// The highest Landlock ABI the kernel supports (>= 1), or -1 with errno set (ENOSYS: no
/// Landlock in this kernel; EOPNOTSUPP: built in but disabled at boot). -1/ENOSYS off Linux.
int reindex_landlock_abi(void);

/// pipe2(O_CLOEXEC).
int reindex_pipe_cloexec(int fds[2]);

/// Marks the calling process as traceable by any process (Linux Yama); no-op elsewhere.
int reindex_allow_any_tracer(void);

/// Makes the calling process the child subreaper of its descendants (Linux): an orphaned
/// descendant is re-parented to it instead of to init. -1 with ENOSYS elsewhere.
int reindex_become_child_subreaper(void);

/// 1 when a debugger traces the calling process, 0 when not, -1 when unknown.
int reindex_is_traced(void);
/// Whether process `pid` is traced: 1 yes, 0 no, -1 no such process (Linux: TracerPid; Darwin: P_TRACED).
int reindex_process_is_traced(int pid);

/// Sets a descriptor's O_NONBLOCK flag.
int reindex_set_nonblocking(int fd, int on);

/// WIFEXITED & co. as functions (they are macros in C).
int reindex_wifexited(int status);
int reindex_wexitstatus(int status);
int reindex_wifsignaled(int status);
int reindex_wtermsig(int status);
int reindex_wifstopped(int status);

/// memmem: 1 when `needle` occurs in `haystack`.
int reindex_contains(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

/// A non-blocking, close-on-exec inotify descriptor (Linux), or -1 where there is none.
int reindex_watch_init(void);
/// Watches a directory for entries created, deleted, moved, written or changed; -1 on failure.
int reindex_watch_add(int fd, const char *path);

#endif
