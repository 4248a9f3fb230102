#!/usr/bin/env python3
"""Sends one index/put of 20 MiB on a single line (the host accepts at most 16 MiB)."""
from fixturelib import item, line, log, notification, read, send_raw, serve


def handle(message):
    big = notification("index/put", {"items": [item("huge.1", "Enormous Manatee", textContent="x" * (20 << 20))]})
    data = line(big)
    log("sending a line of %d bytes" % len(data))
    send_raw(data)
    while read() is not None:
        pass


serve(handle)
