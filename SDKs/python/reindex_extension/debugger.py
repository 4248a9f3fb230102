"""The wait-for-debugger gate of debug mode (`reindex debug --wait-for-debugger`)."""
from __future__ import annotations

import importlib
import json
import os
import sys
import threading
import time
from typing import Any, Mapping, Optional, Tuple

from .connection import log

__all__ = ["wait_for_debugger", "is_traced", "allow_any_tracer", "debugpy_port_override", "vscode_attach_configuration",
           "DEFAULT_DEBUGPY_ADDRESS", "INSTALL_DEBUGPY"]

#: Where the gate lets debugpy listen unless the extension says otherwise.
DEFAULT_DEBUGPY_ADDRESS: Tuple[str, int] = ("127.0.0.1", 5678)


def is_traced() -> Optional[bool]:
    """Whether a native debugger (gdb, lldb, strace…) traces this process; None where this cannot
    be told (only Linux's /proc/self/status is read)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"TracerPid:"):
                    return line.split(b":", 1)[1].strip() not in (b"", b"0")
    except OSError:
        return None
    return None


def allow_any_tracer() -> None:
    """Lets any process of the same user attach with ptrace (Linux Yama's `ptrace_scope` 1
    otherwise allows only ancestors): `prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY)`, as the Swift
    SDK's gate does. Does nothing elsewhere or when it fails."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_ptracer = 0x59616D61
        pr_set_ptracer_any = ctypes.c_ulong(-1 & ((1 << (8 * ctypes.sizeof(ctypes.c_ulong))) - 1))
        libc.prctl(ctypes.c_int(pr_set_ptracer), pr_set_ptracer_any, ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0))
    except Exception:  # pragma: no cover (no libc or no prctl)
        pass


def debugpy_port_override(environ: Optional[Mapping[str, str]] = None) -> Optional[int]:
    """The port `REINDEX_DEBUGPY_PORT` names (0 lets the system pick one), or None when it is
    not set or not a port number (which is logged)."""
    env = os.environ if environ is None else environ
    value = env.get("REINDEX_DEBUGPY_PORT")
    if not value:
        return None
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        log("REINDEX_DEBUGPY_PORT=%r is not a port number; using the extension's own" % value)
        return None
    return port


def vscode_attach_configuration(host: str, port: int) -> str:
    """The `configurations` entry of VS Code's launch.json that attaches to debugpy there."""
    return json.dumps({"type": "debugpy", "request": "attach", "connect": {"host": host, "port": port}},
                      separators=(",", ":"))


#: What the gate says when debugpy cannot be imported.
INSTALL_DEBUGPY = "python3 -m pip install debugpy"


def wait_for_debugger(debugpy_address: Optional[Tuple[str, int]] = DEFAULT_DEBUGPY_ADDRESS,
                      environ: Optional[Mapping[str, str]] = None) -> bool:
    """When `REINDEX_WAIT_FOR_DEBUGGER` is set (debug mode only), waits until a debugger is
    attached or that many seconds pass (0 waits forever); does nothing otherwise.

    A debugger is attached when a native debugger traces the process (`gdb -p PID`; the gate
    first lets any process of the user attach, for Yama) or, when the `debugpy` module is
    importable and `debugpy_address` is not None, when a debugpy client (VS Code) has attached
    to `debugpy.listen(debugpy_address)` and finished its configuration, breakpoints included
    (what `debugpy.wait_for_client()` waits for). `REINDEX_DEBUGPY_PORT` in the environment
    replaces the port of `debugpy_address`. The PID and the exact ways to attach are printed to
    stderr. Nothing is read from stdin or written to stdout meanwhile. Returns whether a
    debugger attached.
    """
    env = os.environ if environ is None else environ
    value = env.get("REINDEX_WAIT_FOR_DEBUGGER")
    if value is None:
        return False
    try:
        seconds = float(value)
    except ValueError:
        log("REINDEX_WAIT_FOR_DEBUGGER=%r is not a number of seconds; not waiting" % value)
        return False
    allow_any_tracer()
    pid = os.getpid()
    if is_traced():
        log("debugger attached to pid %d; continuing" % pid)
        return True

    client_ready: Optional[threading.Event] = None
    debugpy: Any = None
    missing = False
    where: Optional[Tuple[str, int]] = None
    if debugpy_address is not None:
        port = debugpy_port_override(env)
        if port is not None:
            debugpy_address = (debugpy_address[0], port)
        # pydevd's warning that frozen standard modules may miss breakpoints is about the
        # standard library, not the extension's code: it is noise in the extension's log.
        os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        try:
            debugpy = importlib.import_module("debugpy")
        except ImportError:
            debugpy, missing = None, True
    if debugpy is not None and debugpy_address is not None:
        host, port = debugpy_address
        try:
            listening = debugpy.listen((host, port))
        except Exception as error:  # already listening, port taken, no network in the sandbox, …
            log("debugpy cannot listen on %s:%s (%s); waiting for a native debugger only" % (host, port, error))
            debugpy = None
        else:
            if isinstance(listening, tuple) and len(listening) == 2:
                host, port = listening
            where = (str(host), int(port))
            client_ready = threading.Event()
            event = client_ready

            def wait_for_client() -> None:
                try:
                    debugpy.wait_for_client()
                except Exception:  # pragma: no cover (cancelled)
                    return
                event.set()

            threading.Thread(target=wait_for_client, name="reindex-debugpy-wait", daemon=True).start()

    limit = " (at most %d s)" % int(seconds) if seconds > 0 else ""
    how = "gdb -p %d" % pid
    if where is not None:
        how += ", or attach a debugpy client to %s:%d" % where
    log("pid %d is waiting for a debugger to attach%s: %s" % (pid, limit, how))
    if where is not None:
        log("VS Code launch.json configuration: %s" % vscode_attach_configuration(*where))
    elif missing:
        log("debugpy is not importable by %s, so only a native debugger can attach; to debug the Python code, "
            "install it: %s (where the host's sandbox can read it: the interpreter's own site-packages, "
            "or a directory the manifest declares in sandbox.read)" % (sys.executable, INSTALL_DEBUGPY))
    start = time.monotonic()
    while True:
        if is_traced() or (client_ready is not None and client_ready.is_set()):
            log("debugger attached to pid %d; continuing" % pid)
            return True
        if seconds > 0 and time.monotonic() - start >= seconds:
            log("no debugger attached within %d s; continuing without one" % int(seconds))
            if debugpy is not None:
                cancel = getattr(debugpy.wait_for_client, "cancel", None)
                if cancel is not None:
                    try:
                        cancel()
                    except Exception:  # pragma: no cover
                        pass
            return False
        time.sleep(0.02)
