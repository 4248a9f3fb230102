#!/usr/bin/env python3
"""Writes at a trickle: for each request, puts COUNT items (argument 2, default 8) one at a time,
INTERVAL seconds apart (argument 1, default 0.3), each followed by a $/progress, then
acknowledges. A thread watches stdin so the fixture exits promptly at end of input, as the
contract asks, even in the middle of a request."""
import os
import sys
import threading
import time
from fixturelib import item, notify, put, read, send, handshake, success

INTERVAL = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 8

handshake()
requests = []
ready = threading.Condition()


def watch_stdin():
    while True:
        message = read()
        if message is None:
            os._exit(0)
        if "method" in message and "id" in message:
            with ready:
                requests.append(message)
                ready.notify()


threading.Thread(target=watch_stdin, daemon=True).start()
while True:
    with ready:
        while not requests:
            ready.wait()
        message = requests.pop(0)
    for n in range(1, COUNT + 1):
        time.sleep(INTERVAL)
        put([item("trickle.%d" % n, "Trickling Tern %d" % n)])
        notify("$/progress", {"requestId": message["id"], "completed": n, "total": COUNT})
    send(success(message["id"]))
