#!/usr/bin/env python3
"""Bookshelf (no SDK): an example reindex extension in plain Python 3 (standard library only).

The same extension as ../bookshelf/bookshelf.py, written without the Python SDK so that the
whole protocol is visible in one file.

It speaks reindex protocol version 1 (see docs/PROTOCOL.md) over stdin and stdout:
one JSON-RPC 2.0 message per line, in both directions. stdout carries protocol
messages and nothing else; every log line goes to stderr, which the host captures.
The books come from books.json beside this file; a book's item identifier is "book.<id>".
"""
import base64
import json
import os
import sys

SUPPORTED_VERSIONS = [1]  # protocol versions this extension speaks
BATCH_SIZE = 5            # books per index/put, and per batch/commit during reindexAll
DOMAIN_PREFIX = "com.example.bookshelf.book."
BOOKS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "books.json")

# The protocol is UTF-8 whatever the locale says, and every line ends in "\n".
sys.stdin.reconfigure(encoding="utf-8")
sys.stdout.reconfigure(encoding="utf-8", newline="\n")


class RPCError(Exception):
    """Raised by a handler to answer its request with a JSON-RPC error."""
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Cancelled(Exception):    # the host sent $/cancel for the request being worked on
    pass


class EndOfInput(Exception):   # the host closed our stdin: time to exit
    pass


def log(*args):
    print("bookshelf:", *args, file=sys.stderr, flush=True)


def send(message):
    # json.dumps escapes any newline inside a string, so one message is always one line.
    sys.stdout.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()  # the host must see each line now, not when a buffer fills


def notify(method, params):
    send({"jsonrpc": "2.0", "method": method, "params": params})


def reply_error(request_id, code, message, data=None):
    error = {"code": code, "message": message, **({"data": data} if data is not None else {})}
    send({"jsonrpc": "2.0", "id": request_id, "error": error})


def read_message():
    """The next message from the host, or None when stdin is closed."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            continue  # empty lines are ignored
        try:
            message = json.loads(line)
            if isinstance(message, dict):
                return message
        except ValueError:
            pass
        log("ignoring a line that is not a JSON-RPC message:", line[:80])


backlog = []        # host requests that arrived while we were busy (the host should not do that)
next_own_id = 1     # ids of our own requests (batch/commit); independent of the host's ids


def commit(request_id, state):
    """Asks the host to commit everything sent so far for request_id, with `state` as the
    client state, and waits for its reply. A $/cancel for request_id raises Cancelled."""
    global next_own_id
    own_id, next_own_id = next_own_id, next_own_id + 1
    # The client state is opaque to the host: any bytes, at most 250 once base64-decoded.
    client_state = base64.b64encode(json.dumps(state, separators=(",", ":")).encode("utf-8")).decode("ascii")
    send({"jsonrpc": "2.0", "id": own_id, "method": "batch/commit",
          "params": {"requestId": request_id, "clientState": client_state}})
    while True:
        message = read_message()
        if message is None:
            raise EndOfInput()
        if "method" not in message:                  # a reply to one of our requests
            if message.get("id") != own_id:
                continue                              # a late reply to an abandoned commit
            if "error" in message:                    # refuse the whole request (see handle)
                raise RuntimeError("batch/commit failed: " + str(message["error"].get("message")))
            log("host committed", message["result"].get("committed"), "operations")
            return
        if message["method"] == "$/cancel" and (message.get("params") or {}).get("id") == request_id:
            raise Cancelled()
        if "id" in message:
            backlog.append(message)                   # a request: handle it when we are done
        # any other notification is ignored


def load_books():
    with open(BOOKS_FILE, encoding="utf-8") as f:
        return json.load(f)


def to_item(book):
    """One book as a protocol Item."""
    return {
        "uniqueIdentifier": "book.%d" % book["id"],
        "domainIdentifier": DOMAIN_PREFIX + book["genre"].lower().replace(" ", "-"),
        "attributes": {
            "title": book["title"],
            "authors": book["authors"],
            "contentDescription": book["description"],
            "keywords": book["keywords"],
            "contentCreationDate": "%04d-01-01T00:00:00Z" % int(book["year"]),  # RFC 3339
        },
    }


def initialize(request_id, params):
    requested = params.get("protocolVersions") or []
    common = [v for v in SUPPORTED_VERSIONS if v in requested]
    if not common:
        raise RPCError(-32602, "no common protocol version",
                       {"supported": SUPPORTED_VERSIONS, "requested": requested})
    return {"protocolVersion": max(common),
            "extension": {"name": "Bookshelf (no SDK)", "version": "1.0.0"}, "capabilities": {}}


def reindex_all(request_id, params):
    """Puts every book. The host removes whatever this request did not put, when we acknowledge."""
    books = load_books()
    start = 0
    if params.get("clientState"):  # an earlier attempt committed books[:start] before it stopped
        try:
            start = int(json.loads(base64.b64decode(params["clientState"]))["next"])
            log("resuming at book %d of %d" % (start, len(books)))
        except (ValueError, KeyError, TypeError):
            log("unreadable clientState; starting from the beginning")
    log("reindexAll (reason: %s)" % params.get("reason"))  # unknown reasons are treated alike
    for first in range(start, len(books), BATCH_SIZE):
        batch = books[first:first + BATCH_SIZE]
        notify("index/put", {"items": [to_item(book) for book in batch]})
        done = first + len(batch)
        notify("$/progress", {"requestId": request_id, "completed": done, "total": len(books),
                              "message": "%d of %d books" % (done, len(books))})
        if done < len(books):  # the acknowledgement commits the last batch
            commit(request_id, {"next": done})
    return {}


def reindex_items(request_id, params):
    """Re-indexes exactly the identifiers asked for: puts those that exist, deletes the rest."""
    books = {"book.%d" % book["id"]: book for book in load_books()}
    wanted = params.get("identifiers") or []
    found = [books[i] for i in wanted if i in books]
    gone = [i for i in wanted if i not in books]
    for first in range(0, len(found), BATCH_SIZE):  # small messages stay far below 16 MiB
        notify("index/put", {"items": [to_item(book) for book in found[first:first + BATCH_SIZE]]})
    if gone:
        notify("index/delete", {"identifiers": gone})
    return {}


HANDLERS = {"initialize": initialize, "reindexAll": reindex_all, "reindexItems": reindex_items}


def handle(message):
    if "method" not in message or "id" not in message:
        return  # a late reply, a $/cancel for a request already answered, or an unknown notification
    request_id, method = message["id"], message["method"]
    handler = HANDLERS.get(method)
    if handler is None:
        reply_error(request_id, -32601, "method not found: %s" % method)
        return
    try:
        result = handler(request_id, message.get("params") or {})
        send({"jsonrpc": "2.0", "id": request_id, "result": result})  # {} acknowledges
    except Cancelled:
        reply_error(request_id, -32800, "Request cancelled")
    except RPCError as e:
        reply_error(request_id, e.code, e.message, e.data)
    except (EndOfInput, BrokenPipeError):
        raise
    except Exception as e:  # a refusal: the host discards what was not committed and retries later
        log("refusing %s: %r" % (method, e))
        reply_error(request_id, -32603, "%s: %s" % (type(e).__name__, e))


def main():
    try:
        while True:
            message = backlog.pop(0) if backlog else read_message()
            if message is None:
                break
            handle(message)
    except (EndOfInput, BrokenPipeError):
        pass
    log("stdin closed, exiting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
