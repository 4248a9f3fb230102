"""The base class an extension subclasses, and the loops that serve the protocol."""
from __future__ import annotations

import base64
import binascii
import json
import os
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Dict, List, NoReturn, Optional, Tuple

from .connection import Connection, log
from .debugger import DEFAULT_DEBUGPY_ADDRESS, wait_for_debugger
from .errors import Cancelled, ErrorCode, RequestError
from .index import SearchableIndex
from .stdio import protect_stdio

__all__ = ["Extension", "HostInfo", "PROTOCOL_VERSIONS", "serve", "run"]

#: The protocol versions this SDK speaks.
PROTOCOL_VERSIONS: Tuple[int, ...] = (1,)


@dataclass(frozen=True)
class HostInfo:
    """What the host said about itself in `initialize`."""

    name: str
    version: str
    bundle_identifier: str
    #: True under `reindex debug`.
    debug: bool
    #: The version chosen for this session.
    protocol_version: int
    #: The versions the host offered.
    offered_versions: Tuple[int, ...]


class Extension:
    """Subclass this and implement `reindex_all` and `reindex_items`; then call
    `MyExtension.main()` (or `run(MyExtension())`).

    Returning from a handler acknowledges the request (the host commits what was written);
    raising refuses it with the exception's message (the host discards what was not committed
    and retries later). The handlers run one at a time on the thread that called `run`.
    """

    #: The name reported in `initialize`. None: the manifest's `displayName` (its
    #: `bundleIdentifier` when it has none), else the executable's file name.
    extension_name: Optional[str] = None
    #: The version reported in `initialize`. None: the manifest's `version`, else "0".
    extension_version: Optional[str] = None
    #: Where the debugger gate lets debugpy listen (when debugpy is importable); None: never.
    debugpy_address: Optional[Tuple[str, int]] = DEFAULT_DEBUGPY_ADDRESS
    #: What the host said in `initialize`; None before it.
    host: Optional[HostInfo] = None

    def reindex_all(self, index: SearchableIndex) -> None:
        """Index everything the extension has: every item not put by this request is removed when
        it is acknowledged. `index.reason` says why; `index.client_state` holds the state of the
        last committed batch when this resumes an interrupted attempt."""
        raise RequestError("%s does not implement reindex_all" % type(self).__name__, ErrorCode.METHOD_NOT_FOUND)

    def reindex_items(self, identifiers: List[str], index: SearchableIndex) -> None:
        """Re-index exactly these items: put the ones that exist, delete the ones that are gone."""
        raise RequestError("%s does not implement reindex_items" % type(self).__name__, ErrorCode.METHOD_NOT_FOUND)

    def shutdown(self) -> None:
        """Called once when the host has closed stdin and every request is answered, just before
        `run` exits with status 0. Does nothing by default."""

    @classmethod
    def main(cls) -> NoReturn:
        """Runs an instance of this class: `run(cls())`."""
        run(cls())


# MARK: Identity


def _manifest(directory: str = ".") -> Dict[str, Any]:
    try:
        with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as file:
            value = json.load(file)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def identity(extension: Extension) -> Tuple[str, str]:
    """The `(name, version)` the extension reports: its `extension_name` / `extension_version`,
    else the `displayName` / `version` of manifest.json in the working directory (the host
    starts an extension in its bundle directory), else the executable's name and "0"."""
    name, version = extension.extension_name, extension.extension_version
    if name is None or version is None:
        manifest = _manifest()
        if name is None:
            name = manifest.get("displayName") or manifest.get("bundleIdentifier")
            if not isinstance(name, str) or not name:
                name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "extension"
        if version is None:
            version = manifest.get("version")
            if not isinstance(version, str) or not version:
                version = "0"
    return str(name), str(version)


# MARK: Serving


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _initialize(connection: Connection, extension: Extension, request_id: Any, params: Any) -> None:
    requested = params.get("protocolVersions") if isinstance(params, dict) else None
    if not isinstance(requested, list) or not all(_is_int(v) for v in requested):
        connection.reply_error(request_id, ErrorCode.INVALID_PARAMS,
                               "initialize: protocolVersions: expected an array of integers")
        return
    common = [v for v in requested if v in PROTOCOL_VERSIONS]
    if not common:
        connection.reply_error(request_id, ErrorCode.INVALID_PARAMS, "no common protocol version",
                               {"supported": list(PROTOCOL_VERSIONS), "requested": requested})
        return
    version = max(common)
    host = params.get("host") if isinstance(params.get("host"), dict) else {}
    extension.host = HostInfo(
        name=str(host.get("name", "")), version=str(host.get("version", "")),
        bundle_identifier=str(params.get("bundleIdentifier") or os.environ.get("REINDEX_BUNDLE_IDENTIFIER", "")),
        debug=params.get("debug") is True, protocol_version=version, offered_versions=tuple(requested))
    name, extension_version = identity(extension)
    connection.reply(request_id, {"protocolVersion": version,
                                  "extension": {"name": name, "version": extension_version},
                                  "capabilities": {}})


def _request_index(connection: Connection, request_id: Any, method: str,
                   params: Any) -> Tuple[Optional[SearchableIndex], List[str], Optional[str]]:
    """The index for a reindexAll/reindexItems request and its identifiers, or an error message."""
    if not isinstance(params, dict):
        return None, [], "%s: params: expected an object" % method
    reason = params.get("reason")
    if not isinstance(reason, str):
        return None, [], "%s: reason: expected a string" % method
    if method == "reindexAll":
        state = params.get("clientState")
        client_state: Optional[bytes] = None
        if isinstance(state, str):
            try:
                client_state = base64.b64decode(state, validate=True)
            except (binascii.Error, ValueError):
                log("reindexAll: clientState is not base64; starting without it")
        elif state is not None:
            return None, [], "reindexAll: clientState: expected a base64 string or null"
        return SearchableIndex(connection, request_id, method, reason, client_state), [], None
    identifiers = params.get("identifiers")
    if not isinstance(identifiers, list) or not all(isinstance(i, str) for i in identifiers):
        return None, [], "reindexItems: identifiers: expected an array of strings"
    return SearchableIndex(connection, request_id, method, reason, None), list(identifiers), None


def _unjoined_threads(method: str, before: "set[threading.Thread]") -> Optional[Tuple[int, str, Any]]:
    """The refusal of a handler that returned while a thread it started still runs: its work is
    not done, and acknowledging would publish it half-done (a reindexAll would even remove what
    the thread has not put yet). Daemon threads are background helpers and are not counted."""
    left = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon]
    if not left:
        return None
    names = ", ".join(t.name for t in left[:3]) + (" …" if len(left) > 3 else "")
    message = ("%s returned while %d thread(s) it started still run (%s): join them before returning "
               "(or make a thread that outlives requests a daemon); the request is refused so that "
               "nothing half-done is published" % (_HANDLER_NAMES.get(method, method), len(left), names))
    log(message)
    return (ErrorCode.REFUSED, message, None)


_HANDLER_NAMES = {"reindexAll": "reindex_all", "reindexItems": "reindex_items"}


def _perform(connection: Connection, extension: Extension, request_id: Any, method: str, params: Any) -> None:
    index, identifiers, problem = _request_index(connection, request_id, method, params)
    if index is None:
        connection.forget(request_id)
        connection.reply_error(request_id, ErrorCode.INVALID_PARAMS, problem or "invalid params")
        return
    if not connection.begin(request_id, index):
        connection.reply_error(request_id, ErrorCode.REQUEST_CANCELLED, "Request cancelled")
        return
    refusal: Optional[Tuple[int, str, Any]] = None
    cancelled = False
    threads_before = set(threading.enumerate())
    try:
        if method == "reindexAll":
            extension.reindex_all(index)
        else:
            extension.reindex_items(identifiers, index)
        refusal = _unjoined_threads(method, threads_before)
    except Cancelled:  # by the host, or Disconnected: the input ended during a commit_batch
        cancelled = True
    except RequestError as error:
        refusal = (error.code, error.message, error.data)
    except Exception as error:
        if not index.cancelled:
            log("refusing %s (request %r): %s" % (method, request_id, traceback.format_exc().rstrip()))
        refusal = (ErrorCode.REFUSED, str(error) or type(error).__name__, None)
    finally:
        connection.end(request_id)
    # Nothing more is sent for this request once it is answered: _finish comes first, and waits
    # for an operation another thread is sending right now.
    cancelled = cancelled or index.cancelled  # a cancelled request gets -32800 however it ended
    index._finish("cancelled" if cancelled else "refused" if refusal is not None else "acknowledged")
    if cancelled:
        connection.reply_error(request_id, ErrorCode.REQUEST_CANCELLED, "Request cancelled")
    elif refusal is not None:
        connection.reply_error(request_id, *refusal)
    else:
        connection.reply(request_id, {"allowEmpty": True} if index.empty_allowed else {})


def serve(extension: Extension, input_fd: int = 0, output_fd: int = 1) -> None:
    """Serves the protocol on these descriptors until the input ends, then returns.

    Touches nothing else of the process: `run` is `protect_stdio`, the debugger gate, a SIGTERM
    handler, `serve`, `extension.shutdown()` and exit 0. Use `serve` to drive an extension over
    pipes of your own, in tests for example.
    """
    connection = Connection(input_fd, output_fd)
    reader = threading.Thread(target=connection.read_loop, name="reindex-protocol-reader", daemon=True)
    reader.start()
    while True:
        message = connection.next_request()
        if message is None:
            break
        request_id, method, params = message.get("id"), message.get("method"), message.get("params")
        if method in ("reindexAll", "reindexItems"):
            _perform(connection, extension, request_id, method, params)
            continue
        connection.forget(request_id)
        if method == "initialize":
            _initialize(connection, extension, request_id, params)
        else:
            connection.reply_error(request_id, ErrorCode.METHOD_NOT_FOUND, "unknown method '%s'" % method)


_shutting_down = False


def _ignore_sigterm() -> None:
    # Python restores the default action while it finalizes: a SIGTERM then (the host sends one
    # soon after a failed request) would kill the process instead of letting it exit with 0.
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except ValueError:  # pragma: no cover (not the main thread)
        pass


def _terminate(signum: int, frame: Any) -> None:
    if _shutting_down:
        return  # let shutdown() finish; the host sends SIGKILL 2 s after SIGTERM anyway
    _ignore_sigterm()
    raise SystemExit(0)


def run(extension: Extension) -> NoReturn:
    """Runs `extension` as the host's child until the host closes stdin, then exits with status 0.

    First it protects the protocol stream (`protect_stdio`: a stray `print` goes to stderr),
    then, when `REINDEX_WAIT_FOR_DEBUGGER` is set, it waits for a debugger (`wait_for_debugger`).
    SIGTERM (the host's shutdown) ends the process with status 0 (a `SystemExit` raised where the
    program is) unless the program installed a handler of its own; during `shutdown()` it is
    ignored so that the hook can finish.
    """
    input_fd, output_fd = protect_stdio()
    wait_for_debugger(extension.debugpy_address)
    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # pragma: no cover (not the main thread)
        pass
    serve(extension, input_fd, output_fd)
    global _shutting_down
    _shutting_down = True
    extension.shutdown()
    if signal.getsignal(signal.SIGTERM) is _terminate:
        _ignore_sigterm()
    try:
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    sys.exit(0)
