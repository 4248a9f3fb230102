"""Shared helpers of the SDK's tests: paths, a fake host that drives an extension over pipes,
bundles in temporary directories, and the `reindex` binary."""
from __future__ import annotations

import json
import os
import queue
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Any, Dict, List, Optional, Sequence

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
SDK_DIR = os.path.dirname(TESTS_DIR)                       # SDKs/python
REPO_ROOT = os.path.dirname(os.path.dirname(SDK_DIR))      # the repository
EXTENSIONS_DIR = os.path.join(TESTS_DIR, "extensions")     # extension scripts the tests run
EXAMPLES_DIR = os.path.join(REPO_ROOT, "Examples", "python")

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersions": [1], "host": {"name": "reindex", "version": "0.1.0"},
                         "bundleIdentifier": "com.example.test", "debug": False}}


def base_environment(**extra: str) -> Dict[str, str]:
    """An environment like the host's: a few variables of ours, the SDK's location, `extra`."""
    env = {key: value for key, value in os.environ.items()
           if key in ("PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR") or key.startswith("LC_")}
    env["REINDEX_PYTHON_SDK"] = SDK_DIR
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


class FakeHost:
    """Runs an extension script with pipes and plays the host: writes lines, reads lines."""

    def __init__(self, script: str, arguments: Sequence[str] = (), cwd: Optional[str] = None,
                 env: Optional[Dict[str, str]] = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, script, *arguments], cwd=cwd or os.path.dirname(script),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env if env is not None else base_environment())
        self.lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self._stderr: List[bytes] = []
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                self.lines.put(line)
        except (OSError, ValueError):  # the test closed it
            pass
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Dict[str, Any]) -> None:
        self.send_raw((json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8"))

    def request(self, request_id: Any, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def reply(self, request_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def recv_raw(self, timeout: float = 10) -> Optional[bytes]:
        """The next stdout line as bytes, or None at end of output."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no message from the extension within %s s; its stderr:\n%s" % (timeout, self.stderr))

    def recv(self, timeout: float = 10) -> Dict[str, Any]:
        """The next message; fails at end of output or on a line that is not one JSON object."""
        line = self.recv_raw(timeout)
        if line is None:
            raise AssertionError("the extension closed stdout; its stderr:\n%s" % self.stderr)
        assert line.endswith(b"\n"), line
        message = json.loads(line.decode("utf-8"))
        assert isinstance(message, dict), line
        assert message.get("jsonrpc") == "2.0", line
        return message

    def recv_until_reply(self, request_id: Any, timeout: float = 10) -> List[Dict[str, Any]]:
        """Messages up to and including the reply to `request_id` (which comes last)."""
        messages = []
        deadline = time.monotonic() + timeout
        while True:
            message = self.recv(max(0.1, deadline - time.monotonic()))
            messages.append(message)
            if "method" not in message and message.get("id") == request_id:
                return messages

    def initialize(self) -> Dict[str, Any]:
        self.send(INITIALIZE)
        return self.recv()

    def close(self, timeout: float = 10) -> int:
        """Closes the extension's stdin and returns its exit status."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("the extension did not exit within %s s of end of input; its stderr:\n%s"
                                 % (timeout, self.stderr))
        for thread in self._threads:
            thread.join(5)
        return status

    def remaining(self) -> List[bytes]:
        """Every stdout line not read yet (after `close`)."""
        lines = []
        while True:
            try:
                line = self.lines.get(timeout=5)
            except queue.Empty:
                break
            if line is None:
                break
            lines.append(line)
        return lines

    def kill(self) -> None:
        """Ends the process if it still runs and closes the pipes (a test's cleanup)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for thread in self._threads:
            thread.join(5)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except (OSError, ValueError):
                pass


def scripted(name: str = "scripted.py") -> str:
    return os.path.join(EXTENSIONS_DIR, name)


# MARK: Bundles and the host


def declare_sandbox(manifest: Dict[str, Any], read: Sequence[str] = (), write: Sequence[str] = ()) -> Dict[str, Any]:
    """`manifest` with `read` and `write` added to its `sandbox` grants (after what it already
    declares; a sandbox turned off stays off). The host runs every extension sandboxed: it may
    read the system, its own bundle and its interpreter, and write its REINDEX_DATA_DIR and
    TMPDIR; anything else it uses, such as this SDK imported from the checkout, it must declare.
    A write grant must not be a directory holding the index: use a subdirectory of its own."""
    sandbox = manifest.get("sandbox")
    if sandbox is False:
        return manifest
    sandbox = dict(sandbox or {})
    for key, paths in (("read", read), ("write", write)):
        declared = list(sandbox.get(key, []))
        declared.extend(path for path in paths if path not in declared)
        if declared:
            sandbox[key] = declared
    manifest["sandbox"] = sandbox
    return manifest


def make_bundle(directory: str, identifier: str, script: str, arguments: Sequence[str] = (),
                manifest: Optional[Dict[str, Any]] = None, interpreter: Optional[str] = None,
                mention_gate: bool = False) -> str:
    """A bundle in `directory`: `script` copied as its executable (started by this interpreter)
    and a manifest that points `REINDEX_PYTHON_SDK` at this SDK and declares it in
    `sandbox.read` (merged with a `sandbox` in `manifest`). `mention_gate` adds a comment naming
    REINDEX_WAIT_FOR_DEBUGGER, by which the host knows the executable waits by itself."""
    os.makedirs(directory, exist_ok=True)
    with open(script, encoding="utf-8") as source:
        body = source.read()
    lines = body.split("\n")
    if lines[0].startswith("#!"):
        lines = lines[1:]
    executable = os.path.join(directory, os.path.basename(script))
    with open(executable, "w", encoding="utf-8") as target:
        target.write("#!%s\n" % (interpreter or sys.executable))
        if mention_gate:
            target.write("# Under reindex debug --wait-for-debugger the SDK waits (REINDEX_WAIT_FOR_DEBUGGER).\n")
        target.write("\n".join(lines))
    os.chmod(executable, 0o755)
    content: Dict[str, Any] = {
        "manifestVersion": 1, "bundleIdentifier": identifier, "displayName": "Test " + identifier.split(".")[-1],
        "version": "2.5.0", "executable": os.path.basename(script), "arguments": list(arguments),
        "environment": {"REINDEX_PYTHON_SDK": SDK_DIR, "PYTHONDONTWRITEBYTECODE": "1"},
        "timeouts": {"startupSeconds": 20, "idleSeconds": 20, "requestSeconds": 60},
        "retry": {"maxAttempts": 3},
    }
    content.update(manifest or {})
    declare_sandbox(content, read=[SDK_DIR])
    path = os.path.join(directory, "manifest.json")
    with open(path, "w", encoding="utf-8") as file:
        json.dump(content, file, indent=2)
    os.chmod(path, 0o644)
    return directory


def copy_bundle(source: str, target: str) -> str:
    """A copy of a bundle directory with the permissions the host accepts."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    for root, directories, files in os.walk(target):
        for name in directories:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            path = os.path.join(root, name)
            executable = os.stat(path).st_mode & stat.S_IXUSR
            os.chmod(path, 0o755 if executable else 0o644)
    return target


def reindex_binary() -> Optional[str]:
    """The `reindex` to test through: $REINDEX_BIN (relative to the current directory or to the
    repository root), else the repository's .build/debug/reindex; None when there is none."""
    value = os.environ.get("REINDEX_BIN")
    if value:
        for candidate in (value, os.path.join(REPO_ROOT, value)):
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return os.path.abspath(candidate)
        raise RuntimeError("REINDEX_BIN=%s is not an executable file (looked in %s and %s)"
                           % (value, os.getcwd(), REPO_ROOT))
    candidate = os.path.join(REPO_ROOT, ".build", "debug", "reindex")
    if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
        return candidate
    return None


class HostTestCase(unittest.TestCase):
    """A test that runs the real `reindex` against a scratch index and extensions directory."""

    binary: str

    @classmethod
    def setUpClass(cls) -> None:
        binary = reindex_binary()
        if binary is None:
            raise unittest.SkipTest("no reindex binary: set REINDEX_BIN (or build .build/debug/reindex)")
        cls.binary = binary

    def setUp(self) -> None:
        self.scratch = tempfile.mkdtemp(prefix="reindex-python-sdk-")
        self.addCleanup(shutil.rmtree, self.scratch, True)
        self.extensions = os.path.join(self.scratch, "extensions")
        self.index = os.path.join(self.scratch, "index", "index.sqlite")
        os.makedirs(self.extensions)
        os.makedirs(os.path.dirname(self.index))
        os.makedirs(os.path.join(self.scratch, "tmp"))

    def environment(self) -> Dict[str, str]:
        env = {key: value for key, value in os.environ.items()
               if key in ("PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ") or key.startswith("LC_")}
        env["TMPDIR"] = os.path.join(self.scratch, "tmp")
        env["XDG_DATA_HOME"] = os.path.join(self.scratch, "xdg-data")
        env["XDG_DATA_DIRS"] = os.path.join(self.scratch, "xdg-dirs")
        env["XDG_STATE_HOME"] = os.path.join(self.scratch, "xdg-state")
        env["XDG_CACHE_HOME"] = os.path.join(self.scratch, "xdg-cache")
        return env

    def command(self, *arguments: str) -> List[str]:
        return [self.binary, "--index", self.index, "--extensions-path", self.extensions, *arguments]

    def reindex(self, *arguments: str, timeout: float = 90) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*arguments), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=self.environment(), timeout=timeout,
                              universal_newlines=True)

    def reindex_json(self, *arguments: str, status: int = 0) -> Any:
        result = self.reindex(*arguments, "--json")
        self.assertEqual(result.returncode, status, "reindex %s: %s" % (" ".join(arguments), result))
        return json.loads(result.stdout)

    def bundle(self, identifier: str, arguments: Sequence[str] = (), name: Optional[str] = None,
               manifest: Optional[Dict[str, Any]] = None, mention_gate: bool = False) -> str:
        return make_bundle(os.path.join(self.extensions, name or identifier.split(".")[-1]), identifier,
                           scripted(), arguments, manifest, mention_gate=mention_gate)

    def log(self, identifier: str) -> str:
        path = os.path.join(os.path.dirname(self.index), "logs", identifier + ".log")
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                return file.read()
        except OSError:
            return ""

    def search(self, word: str) -> List[str]:
        return sorted(result["uniqueIdentifier"] for result in self.reindex_json("search", word)["results"])

    def identifiers(self, identifier: str) -> List[str]:
        listed = self.reindex_json("items", identifier, "--limit", "1000")
        return sorted(item["uniqueIdentifier"] for item in listed["results"])
