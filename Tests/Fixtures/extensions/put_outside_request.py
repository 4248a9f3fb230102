#!/usr/bin/env python3
"""Sends index/put when no request is outstanding. Argument "before-request": in the same
write as the initialize reply; "after-ack": in the same write as the acknowledgement."""
import sys
from fixturelib import initialize_reply, item, line, log, notification, read, send_raw, success

MODE = sys.argv[1] if len(sys.argv) > 1 else "before-request"
stray = line(notification("index/put", {"items": [item("stray.1", "Stray Cormorant")]}))

read()  # initialize
if MODE == "before-request":
    log("sending index/put right after the initialize reply")
    send_raw(line(initialize_reply()) + stray)
else:
    send_raw(line(initialize_reply()))
while True:
    message = read()
    if message is None:
        sys.exit(0)
    if "method" in message and "id" in message:
        inside = line(notification("index/put", {"items": [item("inside.1", "Proper Puffin")]}))
        log("acknowledging request", message["id"], "and sending index/put after it")
        send_raw(inside + line(success(message["id"])) + (stray if MODE == "after-ack" else b""))
