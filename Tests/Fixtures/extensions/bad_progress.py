#!/usr/bin/env python3
"""reindexAll reports $/progress with completed = argument 1 (e.g. -5) and total = argument 2
(if given), then puts one item and acknowledges."""
import sys
from fixturelib import item, notify, put, send, serve, success

COMPLETED = int(sys.argv[1]) if len(sys.argv) > 1 else -5
TOTAL = int(sys.argv[2]) if len(sys.argv) > 2 else None


def handle(message):
    request_id = message["id"]
    params = {"requestId": request_id, "completed": COMPLETED}
    if TOTAL is not None:
        params["total"] = TOTAL
    notify("$/progress", params)
    put([item("progress.1", "Progress Pelican")])
    send(success(request_id))


serve(handle)
