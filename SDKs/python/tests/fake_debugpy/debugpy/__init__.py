"""A stand-in for debugpy in the SDK's tests (put its parent directory on PYTHONPATH).

`listen` records the address and returns it; `wait_for_client` returns once the file named by
$FAKE_DEBUGPY_CLIENT exists (the test "attaches" by creating it) and can be cancelled.
"""
import os
import threading
import time

_cancelled = threading.Event()


def listen(address):
    host, port = address
    return (host, port)


def wait_for_client():
    path = os.environ.get("FAKE_DEBUGPY_CLIENT", "")
    while not _cancelled.is_set():
        if path and os.path.exists(path):
            return
        time.sleep(0.02)


wait_for_client.cancel = _cancelled.set  # type: ignore[attr-defined]


def is_client_connected():
    path = os.environ.get("FAKE_DEBUGPY_CLIENT", "")
    return bool(path) and os.path.exists(path)
