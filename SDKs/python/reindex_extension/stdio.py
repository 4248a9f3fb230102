"""Stdout protection: the protocol gets private descriptors, descriptors 0 and 1 are neutralised."""
from __future__ import annotations

import os
import sys
from typing import Tuple

__all__ = ["protect_stdio"]


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

    `run` calls this first; call it yourself only when you use `serve` directly. Call it once.
    """
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
    return input_fd, output_fd
