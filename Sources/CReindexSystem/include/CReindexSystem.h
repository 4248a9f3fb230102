#ifndef REINDEX_SYSTEM_H
#define REINDEX_SYSTEM_H

#include <sys/types.h>

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
} reindex_spawn_config;

/// Forks and execs. On success returns 0, stores the child's pid and a read end of a
/// close-on-exec status pipe: reading it yields EOF once exec succeeded, or two ints
/// (stage, errno) when the child failed before exec. Stage 1 = chdir, 2 = exec, 3 = fd setup, 4 = resource limits.
/// On failure to fork returns -1 with errno set.
int reindex_spawn(const reindex_spawn_config *config, pid_t *pid_out, int *status_fd_out);

/// pipe2(O_CLOEXEC).
int reindex_pipe_cloexec(int fds[2]);

/// Marks the calling process as traceable by any process (Linux Yama); no-op elsewhere.
int reindex_allow_any_tracer(void);

/// Makes the calling process the child subreaper of its descendants (Linux): an orphaned
/// descendant is re-parented to it instead of to init. -1 with ENOSYS elsewhere.
int reindex_become_child_subreaper(void);

/// 1 when a debugger traces the calling process, 0 when not, -1 when unknown.
int reindex_is_traced(void);

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
