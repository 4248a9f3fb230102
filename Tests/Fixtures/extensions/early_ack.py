#!/usr/bin/env python3
"""The ordinary mistakes that would empty a bundle. Arguments: MODE [COUNT].
MODE "full": reindexAll puts COUNT items "item.1"… and acknowledges (the good run).
MODE "thread": reindexAll starts a thread that puts the COUNT items 0.3 s later and returns at
once (a thread not joined): the acknowledgement comes before any put.
MODE "nothing": reindexAll acknowledges without putting anything.
MODE "empty": reindexAll puts nothing and acknowledges with {"allowEmpty": true}.
MODE "invalid": reindexAll puts COUNT items, every one invalid (its title is a number).
reindexItems always puts each identifier asked for."""
import sys
import threading
import time
from fixturelib import item, put, send, serve, success

MODE = sys.argv[1] if len(sys.argv) > 1 else "full"
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def put_all():
    put([item("item.%d" % n, "Gadget Item %d" % n) for n in range(1, COUNT + 1)])


def late_puts():
    time.sleep(0.3)
    put_all()


def handle(message):
    request_id = message["id"]
    if message["method"] == "reindexAll":
        if MODE == "full":
            put_all()
        elif MODE == "thread":
            threading.Thread(target=late_puts).start()
        elif MODE == "invalid":
            put([{"uniqueIdentifier": "bad.%d" % n, "attributes": {"title": n}} for n in range(1, COUNT + 1)])
        send(success(request_id, {"allowEmpty": True} if MODE == "empty" else None))
    elif message["method"] == "reindexItems":
        put([item(uid, "Refreshed %s" % uid) for uid in message["params"]["identifiers"]])
        send(success(request_id))
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no such method"}})


serve(handle)
