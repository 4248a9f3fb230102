"""Shared plumbing for the Python test fixtures: a tiny, strict implementation of the extension
side of reindex protocol version 1 (one JSON-RPC 2.0 message per line on stdin/stdout).

Each fixture script imports this module from its own directory (tests copy both into the
bundle). Logs go to stderr, which the host captures in the bundle's log file.
"""
import base64
import json
import os
import sys

NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]
_out = sys.stdout.buffer
_in = sys.stdin.buffer


def log(*args):
    print(NAME + ":", *args, file=sys.stderr, flush=True)


def line(message):
    """One message as the bytes of one protocol line."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def send_raw(data):
    """Writes bytes to stdout in one write and flushes (several lines in one write arrive together)."""
    _out.write(data)
    _out.flush()


def send(message):
    send_raw(line(message))


def notification(method, params):
    return {"jsonrpc": "2.0", "method": method, "params": params}


def notify(method, params):
    send(notification(method, params))


def success(request_id, result=None):
    return {"jsonrpc": "2.0", "id": request_id, "result": {} if result is None else result}


def failure(request_id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def read():
    """The next message from the host, or None at end of input."""
    while True:
        raw = _in.readline()
        if not raw:
            return None
        raw = raw.strip()
        if raw:
            return json.loads(raw.decode("utf-8"))


def initialize_reply(name=None):
    return success(0, {"protocolVersion": 1, "extension": {"name": name or NAME, "version": "1.0"}, "capabilities": {}})


def handshake():
    """Reads initialize and answers it (declining, as the contract says, when version 1 is not
    offered); returns the initialize params."""
    message = read()
    if message is None:
        sys.exit(0)
    assert message.get("method") == "initialize", message
    offered = (message.get("params") or {}).get("protocolVersions") or []
    if 1 not in offered:
        send(failure(0, -32602, "no common protocol version", {"supported": [1], "requested": offered}))
        sys.exit(0)
    send(initialize_reply())
    return message.get("params") or {}


def item(uid, title, description=None, domain=None, **extra):
    attributes = {"title": title}
    if description is not None:
        attributes["contentDescription"] = description
    attributes.update(extra)
    result = {"uniqueIdentifier": uid, "attributes": attributes}
    if domain is not None:
        result["domainIdentifier"] = domain
    return result


def put(items):
    notify("index/put", {"items": items})


_next_own_id = [1000]


def commit(request_id, state_bytes):
    """Sends batch/commit with `state_bytes` (base64-encoded here) and returns the host's reply."""
    own_id = _next_own_id[0]
    _next_own_id[0] += 1
    state = base64.b64encode(state_bytes).decode("ascii")
    send({"jsonrpc": "2.0", "id": own_id, "method": "batch/commit",
          "params": {"requestId": request_id, "clientState": state}})
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if "method" not in message and message.get("id") == own_id:
            return message


def serve(handle):
    """Answers initialize, then calls handle(message) for each host request until stdin closes;
    exits 0 at end of input, as the contract asks."""
    handshake()
    while True:
        message = read()
        if message is None:
            log("stdin closed, exiting")
            sys.exit(0)
        if "method" in message and "id" in message:
            handle(message)


def sleep_forever():
    import time
    while True:
        time.sleep(1000)
