#!/usr/bin/env python3
"""The benchmark's plain Python extension (no SDK, standard library only), as most authors write
one: reindexAll reads the items (one JSON item per line) from BENCH_ITEMS_FILE and sends them in
index/put notifications of BENCH_BATCH items, then acknowledges."""
import json
import os
import sys

out = sys.stdout


def send(message):
    out.write(json.dumps(message, separators=(",", ":")) + "\n")


for raw in sys.stdin:
    if not raw.strip():
        continue
    message = json.loads(raw)
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": 1, "extension": {"name": "bench_indexer.py", "version": "1"}, "capabilities": {}}})
    elif method == "reindexAll":
        batch_size = int(os.environ.get("BENCH_BATCH", "2000"))
        batch = []
        with open(os.environ["BENCH_ITEMS_FILE"], encoding="utf-8") as items:
            for line in items:
                batch.append(json.loads(line))
                if len(batch) == batch_size:
                    send({"jsonrpc": "2.0", "method": "index/put", "params": {"items": batch}})
                    batch = []
        if batch:
            send({"jsonrpc": "2.0", "method": "index/put", "params": {"items": batch}})
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif request_id is not None:
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    out.flush()
