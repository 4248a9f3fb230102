#!/usr/bin/env python3
"""A hostile extension that tries to reach another bundle's items. VICTIM_IDS and VICTIM_DOMAINS
(manifest environment, comma-separated) name what the other bundle has indexed. For each
request it:
  - deletes the victim's identifiers and domains (and the domains "", "%", "*", "com"),
  - puts items with the victim's identifiers and domains ("Hijacked Hyena"), one that claims the
    victim's bundleIdentifier, and one whose identifier is an SQL injection attempt,
  - asks the host for the victim's items with made-up methods (items/get, search/query,
    store/items; made-up index/ methods are protocol violations, see method_typo.py) and logs
    the replies,
  - with the argument "deleteAll", ends with index/deleteAll,
then acknowledges. With the argument "foreignCommit" it sends, instead of acknowledging, a
batch/commit for a request id that is not outstanding (a protocol violation). Every reply is logged to stderr as "reply <method>: <json>".

With the argument "escape" it instead tries to leave its sandbox, and reports each attempt as an
item "attempt.<name>" whose title is the outcome ("allowed", or the errno name such as "EACCES"):
open the index (ESCAPE_INDEX) for reading and writing, its -wal and -shm, list its locks, read its
own log (ESCAPE_LOGS), read another bundle's manifest and executable and run it (ESCAPE_OTHER,
ESCAPE_OTHER_EXECUTABLE), read ~/.ssh/id_ed25519 and list the home directory, write in
ESCAPE_OUTSIDE and to ESCAPE_SHARED_TMP (a file in the shared temporary directory), create a
file in its bundle directory and open its manifest for appending (without writing),
signal the host, open the host's descriptor of the index and read the host's environment through
/proc, and — with ESCAPE_PORT —
connect to that TCP port on 127.0.0.1 and bind one. Then it does what it may: writes and reads
back a file in REINDEX_DATA_DIR (counting its runs there) and one in TMPDIR ("data.write",
"tmp.write": "ok" or the errno name), all in the same reindexAll or reindexItems, and acknowledges.

With the argument "metadata" it tries to change the mode, owner, times and extended attributes of
the index (ESCAPE_INDEX) and of another bundle's manifest (ESCAPE_OTHER), which Landlock does not
mediate, and reports each as "attempt.<name>" the same way; then what an extension may still do
in REINDEX_DATA_DIR: shutil.copyfile ("data.copyfile"), shutil.copy, which copies the mode with
chmod ("data.copy"), fchmod of its own file ("data.fchmod"), and creating a file with an
executable mode ("data.create-executable": "ok" when the mode took)."""
import errno
import json
import os
import shutil
import socket
import subprocess
import sys
from fixturelib import item, log, notify, put, read, send, serve, success

VICTIM = os.environ.get("VICTIM", "")
IDS = [s for s in os.environ.get("VICTIM_IDS", "").split(",") if s]
DOMAINS = [s for s in os.environ.get("VICTIM_DOMAINS", "").split(",") if s]
MODE = sys.argv[1] if len(sys.argv) > 1 else ""
next_id = [500]


def ask(method, params):
    own = next_id[0]
    next_id[0] += 1
    send({"jsonrpc": "2.0", "id": own, "method": method, "params": params})
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if "method" not in message and message.get("id") == own:
            log("reply %s: %s" % (method, json.dumps(message, separators=(",", ":"))))
            return message


def outcome(action):
    try:
        action()
        return "allowed"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))


def read_file(path):
    with open(path, "rb") as f:
        f.read(1)


def open_fd(path, flags):
    os.close(os.open(path, flags))


def write_file(path):
    with open(path, "a") as f:
        f.write("escaped\n")


def run(path):
    subprocess.run([path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)


def open_descriptor_of(pid, path):
    """Opens the host's own descriptor of `path` through /proc/PID/fd."""
    directory = "/proc/%d/fd" % pid
    for name in os.listdir(directory):
        link = os.path.join(directory, name)
        if os.readlink(link) == path:
            open_fd(link, os.O_RDONLY)
            return
    raise OSError(errno.ENOENT, "the host has no descriptor of " + path)


def connect(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


def bind():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))


def data_round_trip(directory, name):
    if not directory:
        return "unset"
    path = os.path.join(directory, name)
    try:
        runs = 0
        if os.path.exists(path):
            with open(path) as f:
                runs = int(f.read().strip() or "0")
        with open(path, "w") as f:
            f.write(str(runs + 1))
        with open(path) as f:
            return "ok %s" % f.read().strip()
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))


def escape_attempts():
    env = os.environ
    index = env.get("ESCAPE_INDEX", "")
    other = env.get("ESCAPE_OTHER", "")
    other_exe = os.path.join(other, env.get("ESCAPE_OTHER_EXECUTABLE", "run.sh"))
    outside = env.get("ESCAPE_OUTSIDE", "/nonexistent")
    host = int(env.get("REINDEX_HOST_PID", "0"))
    attempts = [
        ("index.read", lambda: open_fd(index, os.O_RDONLY)),
        ("index.write", lambda: open_fd(index, os.O_RDWR)),
        ("index.wal.read", lambda: open_fd(index + "-wal", os.O_RDONLY)),
        ("index.wal.write", lambda: open_fd(index + "-wal", os.O_RDWR)),
        ("index.shm.write", lambda: open_fd(index + "-shm", os.O_RDWR)),
        ("index.locks.list", lambda: os.listdir(os.path.join(os.path.dirname(index), "locks"))),
        ("logs.read", lambda: read_file(os.path.join(env.get("ESCAPE_LOGS", ""), env["REINDEX_BUNDLE_IDENTIFIER"].lower() + ".log"))),
        ("other.manifest.read", lambda: read_file(os.path.join(other, "manifest.json"))),
        ("other.executable.read", lambda: read_file(other_exe)),
        ("other.executable.run", lambda: run(other_exe)),
        ("other.list", lambda: os.listdir(other)),
        ("secret.read", lambda: read_file(os.path.expanduser("~/.ssh/id_ed25519"))),
        ("home.list", lambda: os.listdir(os.path.expanduser("~"))),
        ("outside.write", lambda: write_file(os.path.join(outside, "escaped.txt"))),
        ("shared-tmp.write", lambda: write_file(env.get("ESCAPE_SHARED_TMP", "/tmp/reindex-escape-%d.txt" % os.getpid()))),
        ("bundle.create", lambda: write_file("created-by-the-extension.txt")),
        ("bundle.manifest.open-for-append", lambda: open_fd("manifest.json", os.O_WRONLY | os.O_APPEND)),
        ("host.signal", lambda: os.kill(host, 0)),
        ("host.index-descriptor.open", lambda: open_descriptor_of(host, index)),
        ("host.environ.read", lambda: read_file("/proc/%d/environ" % host)),
    ]
    if env.get("ESCAPE_PORT"):
        port = int(env["ESCAPE_PORT"])
        attempts.append(("network.connect", lambda: connect(port)))
        attempts.append(("network.bind", bind))
    results = [(name, outcome(action)) for name, action in attempts]
    results.append(("data.write", data_round_trip(env.get("REINDEX_DATA_DIR"), "runs.txt")))
    results.append(("tmp.write", data_round_trip(env.get("TMPDIR"), "scratch.txt")))
    for name, result in results:
        log("attempt %s: %s" % (name, result))
    return results


def create_executable(path):
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o755))
    if os.stat(path).st_mode & 0o100 == 0:
        raise OSError(errno.EINVAL, "the mode did not take")


def fchmod_own(path):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        os.fchmod(fd, 0o644)
    finally:
        os.close(fd)


def metadata_attempts():
    env = os.environ
    index = env.get("ESCAPE_INDEX", "")
    manifest = os.path.join(env.get("ESCAPE_OTHER", ""), "manifest.json")
    data = env.get("REINDEX_DATA_DIR", "/nonexistent")
    attempts = [
        ("index.chmod", lambda: os.chmod(index, 0o666)),
        ("index.chown", lambda: os.chown(index, -1, os.getgid())),
        ("index.utime", lambda: os.utime(index, (0, 0))),
        ("index.touch", lambda: os.utime(index)),
        ("index.setxattr", lambda: os.setxattr(index, "user.reindex.escape", b"1")),
        ("other.manifest.chmod", lambda: os.chmod(manifest, 0o666)),
        ("other.manifest.chown", lambda: os.chown(manifest, -1, os.getgid(), follow_symlinks=False)),
        ("other.manifest.utime", lambda: os.utime(manifest, (0, 0))),
        ("data.copy", lambda: shutil.copy(sys.argv[0], os.path.join(data, "copy"))),
        ("data.fchmod", lambda: fchmod_own(os.path.join(data, "own"))),
        ("data.copyfile", lambda: shutil.copyfile(sys.argv[0], os.path.join(data, "copyfile"))),
        ("data.create-executable", lambda: create_executable(os.path.join(data, "tool"))),
    ]
    results = [(name, outcome(action)) for name, action in attempts]
    for name, result in results:
        log("attempt %s: %s" % (name, result))
    return results


def handle(message):
    request_id = message["id"]
    if MODE == "metadata":
        put([item("attempt." + name, result) for name, result in metadata_attempts()])
        send(success(request_id))
        return
    if MODE == "escape":
        put([item("attempt." + name, result) for name, result in escape_attempts()])
        send(success(request_id))
        return
    notify("index/delete", {"identifiers": IDS})
    notify("index/deleteDomains", {"domainIdentifiers": DOMAINS + ["", "%", "*", "com"]})
    items = [item(uid, "Hijacked Hyena", domain=(DOMAINS[0] if DOMAINS else None)) for uid in IDS]
    claimed = item("claimed.1", "Claimed Hyena")
    claimed["bundleIdentifier"] = VICTIM
    claimed["attributes"]["bundleIdentifier"] = VICTIM
    put(items + [claimed, item("x' OR '1'='1", "Injected Hyena"), item("own.1", "Own Hyena", domain="own.domain")])
    for method in ("items/get", "search/query", "store/items"):
        ask(method, {"bundleIdentifier": VICTIM, "identifiers": IDS, "query": "*"})
    if MODE == "foreignCommit":
        ask("batch/commit", {"requestId": request_id + 1000, "clientState": "AAAA"})
    if MODE == "deleteAll":
        notify("index/deleteAll", {})
    send(success(request_id))


serve(handle)
