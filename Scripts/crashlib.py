"""What Scripts/crash-consistency.py and Scripts/full-disk.py share: where the fixture lives, a
host's environment and running it, a read-only look at the index, the index checks, and
finding and stopping extension processes a run left.
Standard library only; imported from the scripts' own directory."""
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(REPO, "Tests", "Fixtures", "extensions", "crashloop_indexer.py")


def log(text):
    print(text, flush=True)


def host_environment(scratch, index, extensions):
    """The environment the scripts run `reindex` in: nothing of the caller's but PATH, every
    directory the host looks in kept inside `scratch`."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": os.path.join(scratch, "home"),
        "XDG_DATA_HOME": os.path.join(scratch, "xdg-data"),
        "XDG_STATE_HOME": os.path.join(scratch, "xdg-state"),
        "XDG_DATA_DIRS": os.path.join(scratch, "xdg-system"),
        "LANG": "C.UTF-8",
        "REINDEX_INDEX": index,
        "REINDEX_EXTENSIONS_PATH": extensions,
    }


def run_host(reindex, env, cwd, args, timeout=300, preexec_fn=None):
    """Runs `reindex ARGS` to completion; returns (status, stdout, stderr)."""
    done = subprocess.run([reindex] + list(args), env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, preexec_fn=preexec_fn)
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def read_only(index):
    """A read-only connection to the index, closed when the `with` block ends."""
    return contextlib.closing(sqlite3.connect("file:%s?mode=ro" % index, uri=True, timeout=30))


def extension_processes(token):
    """Live (not zombie) processes carrying CRASHLOOP_TOKEN=token in their environment. Reaps every
    exited child first (the orphaned extensions the caller adopted as subreaper), so call it only
    when no host the caller started is running."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    marker = ("CRASHLOOP_TOKEN=" + token).encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                if marker not in f.read().split(b"\0"):
                    continue
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2:].split()[0] not in ("Z", "X"):
            found.append(int(name))
    return found


def extensions_left(token, seconds):
    """The extension processes (see extension_processes) still running after waiting up to
    `seconds` for them to go; [] as soon as there are none."""
    deadline = time.monotonic() + seconds
    alive = extension_processes(token)
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = extension_processes(token)
    return alive


def kill_all(pids):
    """SIGKILL each process, with its process group unless that is the caller's own."""
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group != os.getpgrp():
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def index_problems(index, host, full=True):
    """What is wrong with the index, as `reindex check --json` finds it (`host` runs `reindex ARGS`
    and returns (status, stdout, stderr)): SQLite's integrity check, every item with its full-text
    row and back, full-text titles that match the items', live generations, and invisible rows
    that no running or resumable writer owns. Without `full`, `--quick` skips the slow FTS5
    integrity-check. Leftovers of a killed writer (swept by the next run) are not problems. []
    when healthy."""
    status, out, err = host("check", "--json", *([] if full else ["--quick"]))
    try:
        report = json.loads(out)
    except ValueError:
        return ["reindex check: exit %d: %s %s" % (status, out.strip(), err.strip())]
    problems = list(report.get("problems") or [])
    if report.get("lostReason"):
        problems.append("the index was lost: %s" % report["lostReason"])
    if status != 0 or not report.get("healthy"):
        problems.append("reindex check: exit %d, healthy %s: %s" % (status, report.get("healthy"), err.strip()))
    return problems
