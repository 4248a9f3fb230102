#!/usr/bin/env python3
"""A runaway: for its first request, puts one item and then, with the argument "memory",
allocates 16 MiB blocks without end (until the address-space limit makes an allocation fail),
or with "cpu" spins without end (until the CPU-time limit stops it). It never acknowledges."""
import sys
from fixturelib import item, log, put, serve

MODE = sys.argv[1] if len(sys.argv) > 1 else "memory"


def handle(message):
    put([item("runaway.1", "Runaway Reindeer")])
    if MODE == "memory":
        log("allocating without end")
        blocks = []
        while True:
            blocks.append(bytearray(16 << 20))
    log("spinning without end")
    n = 0
    while True:
        n += 1


serve(handle)
