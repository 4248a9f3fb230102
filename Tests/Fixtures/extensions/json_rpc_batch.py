#!/usr/bin/env python3
"""reindexAll sends its index/put and its acknowledgement together as a JSON-RPC 2.0 batch (a
JSON array on one line), as an author who knows JSON-RPC but not protocol version 1 might."""
import json
from fixturelib import item, notification, send_raw, serve, success


def handle(message):
    batch = [notification("index/put", {"items": [item("batch.1", "Batched Badger")]}), success(message["id"])]
    send_raw((json.dumps(batch, separators=(",", ":")) + "\n").encode("utf-8"))


serve(handle)
