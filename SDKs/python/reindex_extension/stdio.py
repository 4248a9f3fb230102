"""Stdout protection: the protocol gets private descriptors, descriptors 0 and 1 are neutralised."""
from __future__ import annotations

import os
import sys
from typing import Mapping, Optional, Tuple

__all__ = ["protect_stdio", "protected_descriptors", "runs_under_host"]

#: The protocol's private `(input_fd, output_fd)` once `protect_stdio` has run in this process.
_protected: Optional[Tuple[int, int]] = None


def runs_under_host(environ: Optional[Mapping[str, str]] = None) -> bool:
    """Whether this process was started by the host as an extension: the host always sets
    `REINDEX_BUNDLE_IDENTIFIER` (and nothing else sets it)."""
    env = os.environ if environ is None else environ
    return bool(env.get("REINDEX_BUNDLE_IDENTIFIER"))


def protected_descriptors() -> Optional[Tuple[int, int]]:
    """The protocol's `(input_fd, output_fd)` if `protect_stdio` has run, else None."""
    return _protected


def _private_copy(fd: int) -> int:
    """A close-on-exec duplicate of `fd` numbered 3 or above."""
    try:
        import fcntl
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except (ImportError, AttributeError):  # pragma: no cover (no fcntl or no F_DUPFD_CLOEXEC)
        return os.dup(fd)  # not inheritable (PEP 446)


def protect_stdio() -> Tuple[int, int]:
    """Moves the protocol off descriptors 0 and 1 and returns `(input_fd, output_fd)` for it.

    - stdout: the real stdout is duplicated to a private close-on-exec descriptor for the
      protocol, descriptor 1 is pointed at stderr and `sys.stdout` is set to `sys.stderr`. A
      stray `print`, a C library writing to descriptor 1 or a child process inheriting it all
      land in the log instead of corrupting the protocol. Whatever `print` had buffered before
      the call goes to stderr too.
    - stdin: the same, with descriptor 0 pointed at /dev/null: `input()` or a library reading
      stdin sees end of file instead of swallowing the host's messages.

    Importing `reindex_extension` calls it when the process runs under the host (see
    `runs_under_host`), so that a `print` at the top of the script or in the extension's
    `__init__` cannot reach the protocol either; `run` calls it too. Only the first call moves
    anything: later calls return the same descriptors.
    """
    global _protected
    if _protected is not None:
        return _protected
    try:
        output_fd = _private_copy(1)
    except OSError:
        output_fd = 1  # no stdout at all: nothing to protect
    else:
        try:
            os.dup2(2, 1)
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
    for stream in (sys.stdout, sys.__stdout__):
        try:
            if stream is not None:
                stream.flush()  # anything printed so far now goes to descriptor 1, i.e. stderr
        except (OSError, ValueError):
            pass
    if sys.stderr is not None:
        sys.stdout = sys.stderr
    try:
        input_fd = _private_copy(0)
    except OSError:
        input_fd = 0
    else:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    _protected = (input_fd, output_fd)
    return _protected
