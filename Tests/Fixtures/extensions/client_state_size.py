#!/usr/bin/env python3
"""Puts one item, asks to commit it with a client state of SIZE bytes (argument, default 251),
logs the host's reply, then exits with status 3 without acknowledging, so only what the host
committed survives."""
import os
import sys
from fixturelib import commit, item, log, put, serve

SIZE = int(sys.argv[1]) if len(sys.argv) > 1 else 251


def handle(message):
    put([item("state.1", "Stateful Starling")])
    reply = commit(message["id"], b"s" * SIZE)
    if "error" in reply:
        log("commit refused:", reply["error"].get("message"))
    else:
        log("commit accepted:", reply.get("result"))
    sys.stderr.flush()
    os._exit(3)


serve(handle)
