#!/usr/bin/env python3
"""Resumable reindexAll. Without a client state: puts resume.1 and resume.2, commits them with
the state "next=3", then exits with status 2 (an unfinished attempt). With a client state: logs
it, puts resume.3 and resume.4 and acknowledges."""
import base64
import os
import sys
from fixturelib import commit, item, log, put, send, serve, success


def handle(message):
    request_id, params = message["id"], message.get("params") or {}
    state = params.get("clientState")
    if not state:
        put([item("resume.1", "Resumable Osprey"), item("resume.2", "Resumable Kestrel")])
        reply = commit(request_id, b"next=3")
        log("first batch committed:", reply.get("result"), "- now exiting before the end")
        sys.stderr.flush()
        os._exit(2)
    log("resuming from clientState %s" % base64.b64decode(state).decode())
    put([item("resume.3", "Resumable Harrier"), item("resume.4", "Resumable Merlin")])
    send(success(request_id))


serve(handle)
