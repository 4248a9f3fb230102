#!/usr/bin/env python3
"""The crash-consistency loop's extension (Scripts/crash-consistency.py, CrashConsistencyTests).

Self-contained (no fixturelib) and fast: items are formatted from a template, several hundred per
`index/put` line. Every item is stamped with the run's *generation*, read at the start of each
request from the file `crashloop-generation` in the working directory (the bundle directory):
the stamp is the word `g<N>z` in the title and the first keyword, so a search for it finds
exactly the items of that generation (the trailing `z` keeps `g1z` from being a prefix of
`g12z`).

Options (manifest `arguments`):
  --items N               the universe is item.0 … item.<N-1>                  (default 1000)
  --shift M               with M > 0, item.n exists in generation G only when (n + G) % M != 0,
                          so the set of identifiers changes from one generation to the next
  --put-size P            items per index/put message                          (default 500)
  --commit-every C        reindexAll: batch/commit every C items with the client state
                          "next=<k>", and resume from it (0 = never commit)     (default 0)
  --items-commit-every C  reindexItems: batch/commit every C identifiers       (default 0)

Chosen stopping points, for tests (files in the bundle directory, read when a request starts):
  crashloop-pause         holds POINT: stop there and wait for end of input (the host's death):
                            all-commit-<k>   after the batch/commit of a reindexAll that saved
                                             "next=<k*C>" (so a resumed attempt never stops
                                             there again)
                            all-before-ack   after the last put of a reindexAll, before the reply
                            items-commit-<k> after the k-th batch/commit of a reindexItems
                            items-before-ack after the last put/delete of a reindexItems
                          The stop is logged as "crashloop: paused at POINT (request R)".
                          hold-POINT (e.g. hold-all-commit-1) stops at POINT the same way but
                          goes on once the file crashloop-pause is removed (logged as "crashloop:
                          holding at POINT" and "crashloop: going on after POINT").
  crashloop-linger        holds S: at end of input, wait S seconds before exiting (inside the
                          host's 5 s grace), so a test can kill the host after the
                          acknowledgement, while it waits for the extension to exit.

reindexItems puts each requested identifier that exists in the generation and deletes each one
that does not, in the order given. End of input at any point, or a broken pipe, ends the process
with status 0.
"""
import base64
import json
import os
import select
import sys
import time

OUT = sys.stdout.buffer


def log(text):
    try:
        sys.stderr.write("crashloop: %s\n" % text)
        sys.stderr.flush()
    except Exception:
        pass


def options():
    values = {"items": 1000, "shift": 0, "put-size": 500, "commit-every": 0, "items-commit-every": 0}
    args = sys.argv[1:]
    i = 0
    while i < len(args):
        key = args[i][2:]
        if key not in values or i + 1 >= len(args):
            log("unknown or incomplete option %r" % args[i])
            sys.exit(2)
        raw = args[i + 1]
        values[key] = int(raw)
        i += 2
    return values


OPTS = options()


def finish():
    """End of input (or a broken pipe): the host is gone or done with us."""
    linger = LINGER[0]
    if linger > 0:
        log("end of input; lingering %.1f s" % linger)
        time.sleep(linger)
    log("end of input; exiting")
    os._exit(0)


def send(data):
    try:
        OUT.write(data)
        OUT.flush()
    except (BrokenPipeError, OSError):
        finish()


_buffer = bytearray()


def read_message():
    """The next non-empty line from the host as a parsed message; exits at end of input."""
    global _buffer
    while True:
        newline = _buffer.find(b"\n")
        if newline >= 0:
            raw = bytes(_buffer[:newline]).strip()
            del _buffer[:newline + 1]
            if raw:
                return json.loads(raw.decode("utf-8"))
            continue
        try:
            chunk = os.read(0, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            finish()
        _buffer += chunk


def wait_for_end(point, request_id):
    """The chosen pause: tell the log, then read (and ignore) input until it ends."""
    log("paused at %s (request %s)" % (point, request_id))
    while True:
        try:
            ready, _, _ = select.select([0], [], [], 60)
        except InterruptedError:
            continue
        if ready:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                finish()


PAUSE = [None]
LINGER = [0.0]


def read_test_files():
    try:
        with open("crashloop-pause") as f:
            PAUSE[0] = f.read().strip() or None
    except OSError:
        PAUSE[0] = None
    try:
        with open("crashloop-linger") as f:
            LINGER[0] = float(f.read().strip() or "0")
    except (OSError, ValueError):
        LINGER[0] = 0.0


def hold(point, request_id):
    """Waits until the pause file is removed (or input ends), then goes on."""
    log("holding at %s (request %s)" % (point, request_id))
    while os.path.exists("crashloop-pause"):
        ready, _, _ = select.select([0], [], [], 0.02)
        if ready:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                finish()
            _buffer.extend(chunk)
    log("going on after %s" % point)


def maybe_pause(point, request_id):
    if PAUSE[0] == point:
        wait_for_end(point, request_id)
    elif PAUSE[0] == "hold-" + point:
        hold(point, request_id)


def generation():
    try:
        with open("crashloop-generation") as f:
            return int(f.read().strip() or "0")
    except (OSError, ValueError):
        return 0


def exists(n, gen):
    shift = OPTS["shift"]
    return shift <= 0 or (n + gen) % shift != 0


TEMPLATE = ('{"uniqueIdentifier":"item.%d","domainIdentifier":"crashloop.d%d","attributes":'
            '{"title":"Item %d g%dz","keywords":["g%dz","crashloop"],'
            '"contentDescription":"crash consistency item %d of generation %d"}}')


def encoded(n, gen):
    return TEMPLATE % (n, n % 4, n, gen, gen, n, gen)


def put_line(numbers, gen):
    return ('{"jsonrpc":"2.0","method":"index/put","params":{"items":[' +
            ",".join(encoded(n, gen) for n in numbers) + "]}}\n").encode("utf-8")


def delete_line(identifiers):
    return (json.dumps({"jsonrpc": "2.0", "method": "index/delete", "params": {"identifiers": identifiers}},
                       separators=(",", ":")) + "\n").encode("utf-8")


_own_id = [1]


def commit(request_id, state):
    """batch/commit with `state` (bytes or None); returns the host's reply."""
    own = _own_id[0]
    _own_id[0] += 1
    params = {"requestId": request_id}
    if state is not None:
        params["clientState"] = base64.b64encode(state).decode("ascii")
    send((json.dumps({"jsonrpc": "2.0", "id": own, "method": "batch/commit", "params": params},
                     separators=(",", ":")) + "\n").encode("utf-8"))
    while True:
        message = read_message()
        if "method" not in message and message.get("id") == own:
            if "error" in message:
                log("batch/commit refused: %s" % message["error"])
            return message


def reply(request_id, result=None, error=None):
    message = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        message["error"] = error
    else:
        message["result"] = result if result is not None else {}
    send((json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8"))


def reindex_all(request_id, params):
    read_test_files()
    gen = generation()
    start = 0
    state = params.get("clientState")
    if state:
        text = base64.b64decode(state).decode("ascii")
        if text.startswith("next="):
            start = int(text[5:])
    total = OPTS["items"]
    log("reindexAll request %s generation %d start %d of %d" % (request_id, gen, start, total))
    every = OPTS["commit-every"]
    size = OPTS["put-size"]
    n = start
    while n < total:
        end = min(total, n + every) if every > 0 else total
        batch = []
        for k in range(n, end):
            if exists(k, gen):
                batch.append(k)
                if len(batch) >= size:
                    send(put_line(batch, gen))
                    batch = []
        if batch:
            send(put_line(batch, gen))
        n = end
        if every > 0 and n < total:
            commit(request_id, ("next=%d" % n).encode("ascii"))
            maybe_pause("all-commit-%d" % (n // every), request_id)
    maybe_pause("all-before-ack", request_id)
    reply(request_id)
    log("reindexAll request %s acknowledged" % request_id)


def reindex_items(request_id, params):
    read_test_files()
    gen = generation()
    identifiers = params.get("identifiers") or []
    log("reindexItems request %s generation %d for %d identifier(s)" % (request_id, gen, len(identifiers)))
    every = OPTS["items-commit-every"]
    size = OPTS["put-size"]
    commits = 0
    puts, deletes = [], []

    def flush():
        if puts:
            send(put_line(puts, gen))
            del puts[:]
        if deletes:
            send(delete_line(deletes))
            del deletes[:]

    for position, identifier in enumerate(identifiers, 1):
        number = None
        if identifier.startswith("item."):
            try:
                number = int(identifier[5:])
            except ValueError:
                number = None
        if number is not None and 0 <= number < OPTS["items"] and exists(number, gen):
            puts.append(number)
        else:
            deletes.append(identifier)
        if len(puts) >= size or len(deletes) >= size:
            flush()
        if every > 0 and position % every == 0 and position < len(identifiers):
            flush()
            commit(request_id, None)
            commits += 1
            maybe_pause("items-commit-%d" % commits, request_id)
    flush()
    maybe_pause("items-before-ack", request_id)
    reply(request_id)
    log("reindexItems request %s acknowledged" % request_id)


def main():
    message = read_message()
    if message.get("method") != "initialize":
        log("expected initialize, got %r" % message)
        os._exit(3)
    reply(0, {"protocolVersion": 1, "extension": {"name": "crashloop", "version": "1"}, "capabilities": {}})
    while True:
        message = read_message()
        if "method" not in message or "id" not in message:
            continue
        method, request_id, params = message["method"], message["id"], message.get("params") or {}
        if method == "reindexAll":
            reindex_all(request_id, params)
        elif method == "reindexItems":
            reindex_items(request_id, params)
        else:
            reply(request_id, error={"code": -32601, "message": "unknown method %r" % method})


if __name__ == "__main__":
    main()
