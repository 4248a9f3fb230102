#!/usr/bin/env python3
"""Floods stderr: writes MIB mebibytes (argument, default 12) of log lines, plus a 1 MiB line
with no newline in the middle, then puts one item and acknowledges. The host's log of it must
stay bounded (rotated) and the run must still succeed."""
import os
import sys
from fixturelib import item, put, send, serve, success

MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 12


def handle(message):
    line = b"stderr_flood: " + b"x" * 1009 + b"\n"  # 1 KiB a line
    err = sys.stderr.buffer
    for n in range(MIB * 1024):
        err.write(line)
        if n == 100:
            err.write(b"y" * (1 << 20))  # one very long line, no newline until the next write
    err.flush()
    put([item("flood.1", "Flooded Flamingo")])
    send(success(message["id"]))


serve(handle)
