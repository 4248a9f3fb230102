#!/usr/bin/env python3
"""A resumable reindexAll whose first attempt never finishes, as a connector stuck on a remote
API (or a worker killed mid-request) would. Without a client state: puts slow.1 and slow.2,
commits them with the state "next=3", writes FIXTURE_READY (when set) and then waits forever.
With a client state: logs it, puts slow.3 and slow.4 and acknowledges. With FIXTURE_GO set, the
first attempt waits only until that file exists, then puts slow.late and acknowledges (a worker
that was frozen and wakes up)."""
import base64
import os
import time
from fixturelib import commit, item, log, put, send, serve, success


def handle(message):
    request_id, params = message["id"], message.get("params") or {}
    state = params.get("clientState")
    if not state:
        put([item("slow.1", "Patient Osprey"), item("slow.2", "Patient Kestrel")])
        commit(request_id, b"next=3")
        ready = os.environ.get("FIXTURE_READY")
        if ready:
            with open(ready, "w") as f:
                f.write(str(os.getpid()))
        go = os.environ.get("FIXTURE_GO")
        while not (go and os.path.exists(go)):
            time.sleep(0.05)
        put([item("slow.late", "Late Lapwing")])
        send(success(request_id))
        return
    log("resuming from clientState %s" % base64.b64decode(state).decode())
    put([item("slow.3", "Patient Harrier"), item("slow.4", "Patient Merlin")])
    send(success(request_id))


serve(handle)
