"""The extension's side of the wire: framing, the reader thread, replies to the SDK's own requests
and cancellation. Internal to the SDK; `serve` and `run` are the public ways in."""
from __future__ import annotations

import json
import os
import queue
import sys
import threading
from typing import TYPE_CHECKING, Any, Dict, Hashable, List, Optional

from .errors import CommitRefused, Disconnected, ErrorCode
from .items import encode_json

if TYPE_CHECKING:  # pragma: no cover
    from .index import SearchableIndex

#: The longest line the host accepts; the SDK refuses to write a longer one.
MAX_LINE_BYTES = 16 << 20


def log(message: str) -> None:
    """Writes one line of the SDK's own to stderr (the host captures it)."""
    try:
        sys.stderr.write("reindex-extension: %s\n" % message)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def id_key(value: Any) -> Hashable:
    """A request id as a dictionary key that keeps 1, 1.0, True and "1" apart as JSON does."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    return ("other", repr(value))


class _Pending:
    """A request of the SDK's own (batch/commit) waiting for the host's reply."""

    __slots__ = ("event", "reply")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reply: Optional[Dict[str, Any]] = None


class Connection:
    """One protocol session over a pair of file descriptors.

    A reader thread reads the host's lines: replies are matched to the SDK's waiting requests,
    `$/cancel` marks the running request cancelled at once, and the host's requests are queued for
    the thread that called `serve` (the main thread under `run`), which runs the handlers.
    """

    def __init__(self, input_fd: int, output_fd: int) -> None:
        self.input_fd = input_fd
        self.output_fd = output_fd
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._next_id = 1
        self._waiting: Dict[Hashable, _Pending] = {}
        # Replies that came before the SDK asked (a person driving the extension by hand can
        # type them ahead); a real host never does this.
        self._unclaimed: Dict[Hashable, Dict[str, Any]] = {}
        self._inbox: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()
        self._queued: Dict[Hashable, bool] = {}  # queued host requests -> cancelled before start
        self._running: Dict[Hashable, "SearchableIndex"] = {}
        self._closed = False   # end of input
        self._broken = False   # stdout cannot be written

    # MARK: Writing

    @property
    def closed(self) -> bool:
        """Whether the host closed its side (end of input)."""
        return self._closed

    def write_line(self, payload: bytes) -> None:
        """Writes one message (without its newline) as one line. Raises `Disconnected`."""
        if len(payload) + 1 > MAX_LINE_BYTES:
            raise ValueError("a protocol message of %d bytes is longer than the host accepts (16 MiB)" % len(payload))
        if b"\n" in payload:  # encode_json never produces one; a caller's raw bytes might
            raise ValueError("a protocol message may not contain a raw newline")
        data = memoryview(payload + b"\n")
        with self._write_lock:
            if self._broken:
                raise Disconnected()
            while data:
                try:
                    written = os.write(self.output_fd, data)
                except InterruptedError:  # pragma: no cover (retried by Python itself)
                    continue
                except OSError as error:
                    self._broken = True
                    raise Disconnected("cannot write to the host: %s" % error) from error
                data = data[written:]

    def send(self, message: Dict[str, Any]) -> None:
        self.write_line(encode_json(message))

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def reply(self, request_id: Any, result: Any) -> None:
        """Sends a success reply; a broken connection is ignored (nobody is left to tell)."""
        try:
            self.send({"jsonrpc": "2.0", "id": request_id, "result": result})
        except Disconnected:
            pass

    def reply_error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: Dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        try:
            self.send({"jsonrpc": "2.0", "id": request_id, "error": error})
        except Disconnected:
            pass

    # MARK: The SDK's own requests

    def request(self, method: str, params: Any, index: "SearchableIndex") -> Any:
        """Sends a request of the SDK's own for `index`'s request and waits for the reply.

        Raises `Cancelled` when the host cancels that request meanwhile, `Disconnected` when
        the input ends first, and `CommitRefused` for an error reply.
        """
        pending = _Pending()
        with self._lock:
            own_id = self._next_id
            self._next_id += 1
            key = id_key(own_id)
            early = self._unclaimed.pop(key, None)
            if early is None:
                if self._closed:
                    raise Disconnected()
                self._waiting[key] = pending
                index._waiter = pending
        try:
            index._send_request({"jsonrpc": "2.0", "id": own_id, "method": method, "params": params})
            if early is not None:
                pending.reply = early
            else:
                index._raise_if_cancelled()
                pending.event.wait()
        finally:
            with self._lock:
                self._waiting.pop(key, None)
                if index._waiter is pending:
                    index._waiter = None
        reply = pending.reply
        if reply is None:
            index._raise_if_cancelled()
            raise Disconnected()
        if "error" in reply:
            error = reply.get("error")
            if not isinstance(error, dict):
                error = {}
            code = error.get("code")
            raise CommitRefused(str(error.get("message", "")), code if isinstance(code, int) else ErrorCode.INTERNAL_ERROR,
                                error.get("data"))
        return reply.get("result")

    # MARK: Host requests, for the serving thread

    def next_request(self) -> Optional[Dict[str, Any]]:
        """The next request from the host, or None once the input has ended and all are handled."""
        return self._inbox.get()

    def begin(self, request_id: Any, index: "SearchableIndex") -> bool:
        """Marks a request as running. False when the host cancelled it before it started."""
        key = id_key(request_id)
        with self._lock:
            if self._queued.pop(key, False):
                return False
            self._running[key] = index
            return True

    def forget(self, request_id: Any) -> None:
        """A queued request that is answered without running (initialize, an unknown method)."""
        with self._lock:
            self._queued.pop(id_key(request_id), None)

    def end(self, request_id: Any) -> None:
        with self._lock:
            self._running.pop(id_key(request_id), None)

    # MARK: Reading

    def read_loop(self) -> None:
        """Reads the host's lines until end of input (run on the reader thread)."""
        buffer = bytearray()
        discarding = False
        try:
            while True:
                try:
                    chunk = os.read(self.input_fd, 1 << 16)
                except InterruptedError:  # pragma: no cover
                    continue
                except OSError as error:
                    log("cannot read from the host: %s" % error)
                    break
                if not chunk:
                    break
                buffer += chunk
                if b"\n" not in chunk:
                    if len(buffer) > MAX_LINE_BYTES:
                        if not discarding:
                            log("ignored a line from the host longer than 16 MiB")
                        discarding = True
                        buffer.clear()
                    continue
                lines = buffer.split(b"\n")
                buffer = bytearray(lines.pop())
                for line in lines:
                    if discarding:
                        discarding = False
                        continue
                    self.handle_line(bytes(line))
            if buffer.strip() and not discarding:
                self.handle_line(bytes(buffer))  # a last line without its newline
        finally:
            self._end_of_input()

    def handle_line(self, line: bytes) -> None:
        text = line.strip()
        if not text:
            return  # empty lines are ignored
        try:
            message = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            log("ignored an unreadable line from the host (%s): %.80r" % (error, text))
            return
        if not isinstance(message, dict):
            log("ignored a line from the host that is not a JSON-RPC message: %.80r" % text)
            return
        method = message.get("method")
        if isinstance(method, str):
            if message.get("id") is not None:
                with self._lock:
                    self._queued[id_key(message["id"])] = False
                self._inbox.put(message)
            elif method == "$/cancel":
                params = message.get("params")
                if isinstance(params, dict) and "id" in params:
                    self.cancel(params["id"])
            # any other notification is ignored
        elif "id" in message and ("result" in message or "error" in message):
            self._reply_arrived(message)
        else:
            log("ignored a message from the host that is neither a request nor a reply: %.80r" % text)

    def cancel(self, request_id: Any) -> None:
        """The host's `$/cancel`: the running request is cancelled at once; a queued one when it
        would start. A cancel for a request already answered is ignored."""
        key = id_key(request_id)
        with self._lock:
            index = self._running.get(key)
            if index is None and key in self._queued:
                self._queued[key] = True
        if index is not None:
            index._cancel()

    def _reply_arrived(self, message: Dict[str, Any]) -> None:
        request_id = message.get("id")
        if request_id is None:
            error = message.get("error")
            text = error.get("message") if isinstance(error, dict) else error
            log("the host reported an error: %s" % text)
            return
        key = id_key(request_id)
        with self._lock:
            pending = self._waiting.pop(key, None)
            if pending is None:
                # Late (a commit abandoned by a cancel) or early (typed ahead by hand).
                self._unclaimed[key] = message
                return
            pending.reply = message
        pending.event.set()

    def _end_of_input(self) -> None:
        with self._lock:
            self._closed = True
            waiting: List[_Pending] = list(self._waiting.values())
            self._waiting.clear()
        for pending in waiting:
            pending.event.set()
        self._inbox.put(None)
