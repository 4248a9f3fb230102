#!/usr/bin/env python3
"""Hangs. Argument: "startup" never answers initialize; "idle" answers initialize, then sends
nothing for its request; "chatty" sends $/progress every 0.2 s for its request but never
acknowledges (so only requestSeconds can end it)."""
import os
import sys
import time
from fixturelib import log, notify, read, serve, sleep_forever

MODE = sys.argv[1] if len(sys.argv) > 1 else "idle"

if MODE == "startup":
    read()
    log("read initialize; not answering")
    sleep_forever()


def handle(message):
    if MODE == "chatty":
        log("working forever on request", message["id"])
        n = 0
        while True:
            n += 1
            notify("$/progress", {"requestId": message["id"], "completed": n})
            time.sleep(0.2)
    log("hanging on request %s (pid %d)" % (message["id"], os.getpid()))
    sleep_forever()


serve(handle)
