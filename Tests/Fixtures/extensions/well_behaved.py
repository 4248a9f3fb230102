#!/usr/bin/env python3
"""A well-behaved extension. reindexAll puts COUNT items "item.1"…"item.COUNT" (titles
"<PREFIX> Item n"); with BATCH > 0 it commits every BATCH items with the client state
"next=<n>", then acknowledges. reindexItems puts each identifier asked for with the title
"Refreshed <id>" and acknowledges. Arguments: [COUNT [BATCH ["invalid"]]]; with "invalid", the
first index/put of reindexAll also carries an invalid item "bad.1" (its title is a number).
FIXTURE_PREFIX sets the prefix."""
import sys
from fixturelib import commit, log, put, item, send, serve, success, notify
import os

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 3
BATCH = int(sys.argv[2]) if len(sys.argv) > 2 else 0
INVALID = len(sys.argv) > 3 and sys.argv[3] == "invalid"
PREFIX = os.environ.get("FIXTURE_PREFIX", "Gadget")


def handle(message):
    request_id, params = message["id"], message.get("params") or {}
    if message["method"] == "reindexAll":
        log("reindexAll reason=%s clientState=%s" % (params.get("reason"), params.get("clientState")))
        for n in range(1, COUNT + 1):
            bad = [{"uniqueIdentifier": "bad.1", "attributes": {"title": 42}}] if INVALID and n == 1 else []
            put(bad + [item("item.%d" % n, "%s Item %d" % (PREFIX, n), "number %d of %d" % (n, COUNT))])
            if BATCH and n % BATCH == 0 and n < COUNT:
                reply = commit(request_id, ("next=%d" % (n + 1)).encode())
                log("commit reply", reply)
        notify("$/progress", {"requestId": request_id, "completed": COUNT, "total": COUNT})
        send(success(request_id))
    elif message["method"] == "reindexItems":
        identifiers = params.get("identifiers") or []
        log("reindexItems", identifiers)
        put([item(uid, "Refreshed %s" % uid) for uid in identifiers])
        send(success(request_id))
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no such method"}})


serve(handle)
