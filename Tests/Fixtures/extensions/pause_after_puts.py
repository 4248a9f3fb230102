#!/usr/bin/env python3
"""Puts COUNT items "p.1"…"p.COUNT" (titles "Paused Item n") and reports its progress, then works without a word to the
host — legal, as long as the request's timeouts allow — until the file FIXTURE_RELEASE exists
(at most 120 s), then acknowledges. Once its puts are sent it creates FIXTURE_READY, so a test
knows the request is open and idle. Arguments: [COUNT]."""
import os
import sys
import time
from fixturelib import item, log, notify, put, send, serve, success

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def handle(message):
    request_id = message["id"]
    if message["method"] == "reindexAll":
        put([item("p.%d" % n, "Paused Item %d" % n) for n in range(1, COUNT + 1)])
        notify("$/progress", {"requestId": request_id, "completed": COUNT, "total": COUNT})
        ready = os.environ.get("FIXTURE_READY")
        if ready:
            open(ready, "w").close()
        release = os.environ.get("FIXTURE_RELEASE")
        deadline = time.time() + 120
        while release and not os.path.exists(release) and time.time() < deadline:
            time.sleep(0.02)
        log("released")
    send(success(request_id))


serve(handle)
