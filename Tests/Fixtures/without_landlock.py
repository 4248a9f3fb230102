#!/usr/bin/env python3
"""Runs a command as it would run on a kernel without Landlock: a seccomp filter makes the three
Landlock system calls (444, 445, 446 on x86_64 and aarch64) fail with ENOSYS, as they do where
the kernel was built without it. Everything else is allowed. Usage: without_landlock.py CMD ARG…

The tests use it to exercise the host's "sandbox unavailable" paths on a machine that has
Landlock; nothing in the host is replaced or mocked."""
import ctypes
import os
import platform
import struct
import sys

ARCHITECTURES = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
LD_ABS_W, JEQ_K, RET_K = 0x20, 0x15, 0x06
RET_ALLOW, RET_ERRNO, ENOSYS = 0x7FFF0000, 0x00050000, 38
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def filter_program(arch):
    # struct seccomp_data: nr at offset 0, arch at offset 4. Jumps count from the next instruction.
    return [
        (LD_ABS_W, 0, 0, 4),          # 0: A = arch
        (JEQ_K, 0, 4, arch),          # 1: another architecture: allow (6)
        (LD_ABS_W, 0, 0, 0),          # 2: A = syscall number
        (JEQ_K, 3, 0, 444),           # 3: landlock_create_ruleset: ENOSYS (7)
        (JEQ_K, 2, 0, 445),           # 4: landlock_add_rule
        (JEQ_K, 1, 0, 446),           # 5: landlock_restrict_self
        (RET_K, 0, 0, RET_ALLOW),     # 6
        (RET_K, 0, 0, RET_ERRNO | ENOSYS),  # 7
    ]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: without_landlock.py COMMAND [ARGUMENT…]")
    arch = ARCHITECTURES.get(platform.machine())
    if arch is None:
        sys.exit("without_landlock.py: unsupported architecture " + platform.machine())
    instructions = filter_program(arch)
    raw = b"".join(struct.pack("HBBI", *i) for i in instructions)
    buffer = ctypes.create_string_buffer(raw, len(raw))
    program = SockFprog(len(instructions), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit("without_landlock.py: prctl(PR_SET_NO_NEW_PRIVS): " + os.strerror(ctypes.get_errno()))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        sys.exit("without_landlock.py: prctl(PR_SET_SECCOMP): " + os.strerror(ctypes.get_errno()))
    os.execvp(sys.argv[1], sys.argv[1:])


main()
