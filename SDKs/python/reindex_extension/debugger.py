"""The wait-for-debugger gate of debug mode (`reindex debug --wait-for-debugger`)."""
from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from typing import Any, Mapping, Optional, Tuple

from .connection import log

__all__ = ["wait_for_debugger", "is_traced", "allow_any_tracer", "DEFAULT_DEBUGPY_ADDRESS"]

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


def wait_for_debugger(debugpy_address: Optional[Tuple[str, int]] = DEFAULT_DEBUGPY_ADDRESS,
                      environ: Optional[Mapping[str, str]] = None) -> bool:
    """When `REINDEX_WAIT_FOR_DEBUGGER` is set (debug mode only), waits until a debugger is
    attached or that many seconds pass (0 waits forever); does nothing otherwise.

    A debugger is attached when a native debugger traces the process (`gdb -p PID`; the gate
    first lets any process of the user attach, for Yama) or, when the `debugpy` module is
    importable and `debugpy_address` is not None, when a debugpy client has attached to
    `debugpy.listen(debugpy_address)` (what `debugpy.wait_for_client()` waits for). The PID and
    what to attach are printed to stderr. Returns whether a debugger attached.
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
    where = ""
    if debugpy_address is not None:
        try:
            debugpy = importlib.import_module("debugpy")
        except ImportError:
            debugpy = None
    if debugpy is not None and debugpy_address is not None:
        host, port = debugpy_address
        try:
            listening = debugpy.listen((host, port))
        except Exception as error:  # already listening, port taken, …
            log("debugpy cannot listen on %s:%s (%s); waiting for a native debugger only" % (host, port, error))
            debugpy = None
        else:
            if isinstance(listening, tuple) and len(listening) == 2:
                host, port = listening
            where = "%s:%s" % (host, port)
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
    how += (", or attach a debugpy client to %s" % where) if client_ready is not None else " (install debugpy to debug the Python code)"
    log("pid %d is waiting for a debugger to attach%s: %s" % (pid, limit, how))
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
        time.sleep(0.05)
