#!/usr/bin/env python3
"""An extension for the `reindex serve` tests that writes down what happens to it. Everything is
set through the manifest's environment:

FIXTURE_RECORD      append one line per message from the host: "<method> <reason> <id,id,…> <t>"
                    (identifiers "-" for reindexAll; "$/cancel - <request id> <t>" for a cancel;
                    t: the time it arrived, seconds since 1970).
FIXTURE_TIMELINE    append "start <pid> <bundle> <t>" when the process starts and
                    "end <pid> <bundle> <t>" just before it exits (t: CLOCK_MONOTONIC seconds).
FIXTURE_COUNT       reindexAll puts items rec.1 … rec.COUNT (default 2), titled "<PREFIX> Record n".
FIXTURE_PREFIX      the title prefix (default "Recorded").
FIXTURE_EXPIRES_IN  when set, every item put expires this many seconds after it is put.
FIXTURE_HOLD        sleep this many seconds in every request before acknowledging it.
FIXTURE_SLOW_FILE   while this file exists, reindexAll puts one item every FIXTURE_SLOW_DELAY
                    seconds (default 0.5), titled "Slow Record n", for FIXTURE_SLOW_COUNT items
                    (default 1000), logging "put slow.n" to stderr after each; a $/cancel for it
                    is answered with error -32800 at once.

reindexItems puts each identifier asked for, titled "Refreshed <id>", and acknowledges. The
host's messages are read straight from descriptor 0 (no buffering), so a $/cancel is seen while
a slow request is still putting items.
"""
import datetime
import json
import os
import select
import sys
import time

ENV = os.environ
BUNDLE = ENV.get("REINDEX_BUNDLE_IDENTIFIER", "?")
RECORD = ENV.get("FIXTURE_RECORD")
TIMELINE = ENV.get("FIXTURE_TIMELINE")
COUNT = int(ENV.get("FIXTURE_COUNT", "2"))
PREFIX = ENV.get("FIXTURE_PREFIX", "Recorded")
EXPIRES_IN = float(ENV["FIXTURE_EXPIRES_IN"]) if ENV.get("FIXTURE_EXPIRES_IN") else None
HOLD = float(ENV.get("FIXTURE_HOLD", "0"))
SLOW_FILE = ENV.get("FIXTURE_SLOW_FILE")
SLOW_DELAY = float(ENV.get("FIXTURE_SLOW_DELAY", "0.5"))
SLOW_COUNT = int(ENV.get("FIXTURE_SLOW_COUNT", "1000"))


def log(*args):
    print("serve_recorder:", *args, file=sys.stderr, flush=True)


def append(path, text):
    if path:
        with open(path, "a") as f:
            f.write(text + "\n")


def record(text):
    append(RECORD, "%s %.3f" % (text, time.time()))


def timeline(event):
    append(TIMELINE, "%s %d %s %.6f" % (event, os.getpid(), BUNDLE, time.clock_gettime(time.CLOCK_MONOTONIC)))


def send(message):
    os.write(1, (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8"))


_pending = bytearray()


def receive(timeout=None):
    """The next message from the host; None at end of input; False when `timeout` passed first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        newline = _pending.find(b"\n")
        if newline >= 0:
            raw = bytes(_pending[:newline]).strip()
            del _pending[: newline + 1]
            if raw:
                return json.loads(raw.decode("utf-8"))
            continue
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([0], [], [], left)[0]:
                return False
        chunk = os.read(0, 65536)
        if not chunk:
            return None
        _pending.extend(chunk)


def item(uid, title):
    result = {"uniqueIdentifier": uid, "attributes": {"title": title}}
    if EXPIRES_IN is not None:
        expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=EXPIRES_IN)
        result["expirationDate"] = expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
    return result


def put(items):
    send({"jsonrpc": "2.0", "method": "index/put", "params": {"items": items}})


def exit_now(status=0):
    timeline("end")
    sys.exit(status)


def slow_reindex_all(request_id):
    """Puts items slowly, watching for $/cancel between them."""
    for n in range(1, SLOW_COUNT + 1):
        put([item("slow.%d" % n, "Slow Record %d" % n)])
        log("put slow.%d" % n)
        message = receive(timeout=SLOW_DELAY)
        if message is None:
            log("stdin closed in the middle of a slow reindexAll")
            exit_now()
        if message is False:
            continue
        if message.get("method") == "$/cancel":
            cancelled = (message.get("params") or {}).get("id")
            record("$/cancel - %s" % cancelled)
            log("cancelled after %d slow item(s)" % n)
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32800, "message": "Request cancelled"}})
            return
    send({"jsonrpc": "2.0", "id": request_id, "result": {}})


def handle(message):
    request_id, method, params = message["id"], message["method"], message.get("params") or {}
    identifiers = params.get("identifiers") or []
    record("%s %s %s" % (method, params.get("reason"), ",".join(identifiers) or "-"))
    if HOLD:
        time.sleep(HOLD)
    if method == "reindexAll":
        if SLOW_FILE and os.path.exists(SLOW_FILE):
            slow_reindex_all(request_id)
            return
        put([item("rec.%d" % n, "%s Record %d" % (PREFIX, n)) for n in range(1, COUNT + 1)])
    elif method == "reindexItems":
        put([item(uid, "Refreshed %s" % uid) for uid in identifiers])
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no such method"}})
        return
    send({"jsonrpc": "2.0", "id": request_id, "result": {}})


timeline("start")
initialize = receive()
if initialize is None:
    exit_now()
send({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "extension": {"name": "serve_recorder", "version": "1"}, "capabilities": {}}})
while True:
    message = receive()
    if message is None:
        exit_now()
    if message.get("method") == "$/cancel":
        record("$/cancel - %s" % (message.get("params") or {}).get("id"))
    elif "method" in message and "id" in message:
        handle(message)
