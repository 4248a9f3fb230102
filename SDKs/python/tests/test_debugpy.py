"""The documented Python debugging workflow, for real: `reindex debug BUNDLE --wait-for-debugger`
starts an SDK extension through the host, the SDK's gate listens with debugpy, and a DAP client
(what VS Code is) attaches, sets a breakpoint in the handler and sees it hit.

debugpy must be importable by the interpreter the extension runs with: without it these tests
fail (they never skip), saying how to install it."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest
from typing import Any, Dict, List, Optional

from support import INITIALIZE, SDK_DIR, HostTestCase, base_environment, scripted
from test_protocol import ProtocolTestCase

#: The line of tests/extensions/scripted.py the breakpoint goes on: the first of reindex_all.
BREAKPOINT_TEXT = 'log("reindexAll mode=%s reason=%s clientState=%r"'


def require_debugpy(test: unittest.TestCase, interpreter: str = sys.executable) -> None:
    """Fails (never skips) when `interpreter` cannot import debugpy."""
    check = subprocess.run([interpreter, "-c", "import debugpy"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           universal_newlines=True)
    if check.returncode != 0:
        test.fail("debugpy is not importable by %s, and the Python debugging workflow needs it: install it with "
                  "`%s -m pip install debugpy` (python3 -m pip install debugpy)\n%s"
                  % (interpreter, interpreter, check.stderr.strip()[-300:]))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DAPClient:
    """A minimal Debug Adapter Protocol client: Content-Length framed JSON over TCP."""

    def __init__(self, host: str, port: int, deadline: float) -> None:
        self.deadline = deadline
        while True:
            try:
                self.socket = socket.create_connection((host, port), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("nothing listens on %s:%d for a debugpy client" % (host, port))
                time.sleep(0.05)
        self.socket.settimeout(1)
        self.buffer = b""
        self.seq = 0
        self.received: List[Dict[str, Any]] = []

    def close(self) -> None:
        self.socket.close()

    def send(self, command: str, arguments: Optional[Dict[str, Any]] = None) -> int:
        self.seq += 1
        body = json.dumps({"seq": self.seq, "type": "request", "command": command,
                           "arguments": arguments or {}}).encode("utf-8")
        self.socket.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def _read_message(self) -> Dict[str, Any]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, rest = self.buffer.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"Content-Length:\s*(\d+)", head, re.IGNORECASE).group(1))
        self.buffer = rest
        while len(self.buffer) < length:
            self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        message = json.loads(body.decode("utf-8"))
        self.received.append(message)
        return message

    def _fill(self) -> None:
        while True:
            if time.monotonic() > self.deadline:
                raise AssertionError("debugpy said nothing more in time; it said: %s"
                                     % json.dumps(self.received[-10:])[-2000:])
            try:
                chunk = self.socket.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise AssertionError("debugpy closed the connection; it said: %s" % json.dumps(self.received[-10:]))
            self.buffer += chunk
            return

    def wait_for(self, predicate) -> Dict[str, Any]:
        while True:
            message = self._read_message()
            if predicate(message):
                return message

    def response(self, seq: int) -> Dict[str, Any]:
        message = self.wait_for(lambda m: m.get("type") == "response" and m.get("request_seq") == seq)
        if not message.get("success"):
            raise AssertionError("debugpy refused %s: %s" % (message.get("command"), message.get("message")))
        return message

    def event(self, name: str) -> Dict[str, Any]:
        return self.wait_for(lambda m: m.get("type") == "event" and m.get("event") == name)


def breakpoint_line(script: str) -> int:
    with open(script, encoding="utf-8") as file:
        return next(n for n, text in enumerate(file, 1) if BREAKPOINT_TEXT in text)


def attach_and_hit(test: unittest.TestCase, port: int, script: str, line: int, deadline: float, said) -> None:
    """Waits for the gate to offer debugpy on `port`, attaches as VS Code does with a breakpoint
    on `line` of `script`, checks the handler stops there, then continues and disconnects.
    `said()` is what the extension (or the host) has written to stderr so far."""
    configuration = ('VS Code launch.json configuration: {"type":"debugpy","request":"attach",'
                     '"connect":{"host":"127.0.0.1","port":%d}}' % port)
    # Two lines of the gate's, each its own write: the second may come a moment after the first.
    while "attach a debugpy client to 127.0.0.1:%d" % port not in said() or configuration not in said():
        if time.monotonic() > deadline:
            test.assertIn("attach a debugpy client to 127.0.0.1:%d" % port, said(),
                          "the extension's gate never offered debugpy on 127.0.0.1:%d in time (a host that holds a "
                          "Python extension before exec, or waits for ptrace itself, keeps debugpy out)" % port)
            test.assertIn(configuration, said())
        time.sleep(0.02)
    client = DAPClient("127.0.0.1", port, deadline)
    try:
        client.response(client.send("initialize", {"clientID": "reindex-test", "adapterID": "debugpy",
                                                   "pathFormat": "path", "linesStartAt1": True,
                                                   "columnsStartAt1": True}))
        attach = client.send("attach", {"connect": {"host": "127.0.0.1", "port": port}, "justMyCode": False})
        client.event("initialized")
        breakpoints = client.response(client.send("setBreakpoints", {"source": {"path": script},
                                                                     "breakpoints": [{"line": line}]}))
        test.assertEqual([b.get("line") for b in breakpoints["body"]["breakpoints"]], [line], breakpoints)
        client.response(client.send("configurationDone"))
        client.response(attach)
        try:
            stopped = client.event("stopped")
        except AssertionError as error:
            test.fail("%s\nthe extension said:\n%s" % (error, said()))
        test.assertEqual(stopped["body"]["reason"], "breakpoint", stopped)
        thread = stopped["body"]["threadId"]
        frames = client.response(client.send("stackTrace", {"threadId": thread, "levels": 1}))["body"]["stackFrames"]
        test.assertEqual((frames[0]["name"], frames[0]["line"]), ("reindex_all", line), frames)
        test.assertEqual(os.path.realpath(frames[0]["source"]["path"]), script, frames)
        test.hit_after = time.monotonic()
        client.response(client.send("continue", {"threadId": thread}))
        client.response(client.send("disconnect", {"terminateDebuggee": False}))
    finally:
        client.close()


class DebugpyThroughTheHostTests(HostTestCase):
    def test_a_breakpoint_in_the_handler_is_hit_under_reindex_debug_wait_for_debugger(self):
        require_debugpy(self)
        port = free_port()
        # A plain SDK extension: nothing in it is about debugging. The port comes from the
        # environment (REINDEX_DEBUGPY_PORT) only so that parallel runs do not collide on 5678.
        directory = self.bundle("com.example.test.debugpy", ["catalogue"], manifest={"environment": {
            "REINDEX_PYTHON_SDK": SDK_DIR, "PYTHONDONTWRITEBYTECODE": "1", "REINDEX_DEBUGPY_PORT": str(port)}})
        script = os.path.realpath(os.path.join(directory, "scripted.py"))
        started = time.monotonic()
        command = subprocess.Popen(self.command("debug", "com.example.test.debugpy", "--wait-for-debugger",
                                                "--scratch-index"),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=self.environment())

        def stop() -> None:  # SIGTERM first: the host then stops its extension too
            if command.poll() is None:
                command.terminate()
                try:
                    command.wait(10)
                except subprocess.TimeoutExpired:
                    command.kill()
                    command.wait()

        self.addCleanup(stop)
        stderr: List[bytes] = []
        stdout: List[bytes] = []
        readers = [threading.Thread(target=lambda: stderr.extend(command.stderr), daemon=True),
                   threading.Thread(target=lambda: stdout.extend(command.stdout), daemon=True)]
        for reader in readers:
            reader.start()

        def said() -> str:
            return b"".join(stderr).decode("utf-8", "replace")

        attach_and_hit(self, port, script, breakpoint_line(script), started + 60, said)
        try:
            command.wait(60)
        except subprocess.TimeoutExpired:
            self.fail("reindex debug did not end within 60 s of the continue; it said:\n%s" % said())
        for reader in readers:
            reader.join(10)
        command.stdout.close()
        command.stderr.close()
        self.assertEqual(command.returncode, 0, said())
        self.assertIn("reindex-extension: debugger attached to pid", said())
        sys.stderr.write("\n[reindex debug to the breakpoint: %.2f s] " % (self.hit_after - started))


class DebugpyGateTests(ProtocolTestCase):
    """The same extension started as the host starts it in debug mode (its environment), with
    this test as the host: initialize is sent at once, and must not be answered before a
    debugpy client has attached."""

    def test_the_gate_holds_initialize_until_a_debugpy_client_attaches_and_the_breakpoint_is_hit(self):
        require_debugpy(self)
        port = free_port()
        script = os.path.realpath(scripted())
        started = time.monotonic()
        host = self.start(env=base_environment(
            REINDEX_BUNDLE_IDENTIFIER="com.example.test.debugpy", REINDEX_PROTOCOL_VERSIONS="1",
            REINDEX_HOST_PID=str(os.getpid()), REINDEX_DEBUG="1", REINDEX_WAIT_FOR_DEBUGGER="0",
            REINDEX_DEBUGPY_PORT=str(port)))
        host.send(INITIALIZE)
        host.request(1, "reindexAll", {"reason": "forced", "clientState": None})
        deadline = started + 60
        while "is waiting for a debugger" not in host.stderr and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        self.assertTrue(host.lines.empty(), "the extension answered before a debugger attached")
        pid = host.process.pid
        self.assertIn("reindex-extension: pid %d is waiting for a debugger to attach: gdb -p %d, or attach a debugpy "
                      "client to 127.0.0.1:%d\n" % (pid, pid, port), host.stderr)
        replies: List[Dict[str, Any]] = []
        # The breakpoint holds reindex_all: read the initialize reply while the client works.
        reader = threading.Thread(target=lambda: replies.append(host.recv(60)), daemon=True)
        reader.start()
        attach_and_hit(self, port, script, breakpoint_line(script), deadline, lambda: host.stderr)
        reader.join(60)
        self.assertEqual(replies[0]["id"], 0, replies)
        messages = host.recv_until_reply(1, timeout=30)
        self.assertEqual(messages[-1], {"jsonrpc": "2.0", "id": 1, "result": {}})
        self.assertEqual(host.close(30), 0)
        self.assertIn("reindex-extension: debugger attached to pid %d; continuing" % pid, host.stderr)
        sys.stderr.write("\n[gate start to the breakpoint: %.2f s] " % (self.hit_after - started))


if __name__ == "__main__":
    unittest.main()
