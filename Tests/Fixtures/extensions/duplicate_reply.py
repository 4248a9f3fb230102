#!/usr/bin/env python3
"""Answers a request twice. Argument "same-write": both replies in one write; "later": the
second reply to request N comes once the host has sent the next request."""
import sys
from fixturelib import item, line, log, put, read, send, send_raw, serve, success

MODE = sys.argv[1] if len(sys.argv) > 1 else "same-write"
answered = []


def handle(message):
    request_id = message["id"]
    if MODE == "later" and answered:
        log("replying again to request", answered[0])
        send(success(answered[0]))
        while read() is not None:
            pass
        sys.exit(0)
    put([item("dup.%s" % request_id, "Duplicate Dodo %s" % request_id)])
    if MODE == "same-write":
        log("acknowledging request", request_id, "twice in one write")
        send_raw(line(success(request_id)) + line(success(request_id)))
    else:
        send(success(request_id))
    answered.append(request_id)


serve(handle)
