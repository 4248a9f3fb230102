#!/usr/bin/env python3
"""reindexAll writes its index/put indented over several lines (json.dumps with indent=2), as a
first-time author might, then acknowledges on one line."""
import json
import sys
from fixturelib import item, send, send_raw, serve, success


def handle(message):
    request_id = message["id"]
    put = {"jsonrpc": "2.0", "method": "index/put", "params": {"items": [item("pretty.1", "Pretty Parrot")]}}
    send_raw((json.dumps(put, indent=2) + "\n").encode("utf-8"))
    send(success(request_id))


serve(handle)
