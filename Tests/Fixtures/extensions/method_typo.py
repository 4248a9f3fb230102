#!/usr/bin/env python3
"""reindexAll sends its items with METHOD (argument 1; default index/put) as a notification, or
as a request when argument 2 is "request", then acknowledges. With index/put it is a well-behaved
extension ("typo.1"…"typo.3"); with index/add it is an author's typo."""
import sys
from fixturelib import item, log, send, serve, success

METHOD = sys.argv[1] if len(sys.argv) > 1 else "index/put"
AS_REQUEST = len(sys.argv) > 2 and sys.argv[2] == "request"


def handle(message):
    request_id = message["id"]
    if message["method"] == "reindexAll":
        items = [item("typo.%d" % n, "Typo Tapir %d" % n) for n in range(1, 4)]
        outgoing = {"jsonrpc": "2.0", "method": METHOD, "params": {"items": items}}
        if AS_REQUEST:
            outgoing["id"] = "typo-request"
        send(outgoing)
        log("sent", METHOD)
    send(success(request_id))


serve(handle)
