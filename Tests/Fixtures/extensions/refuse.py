#!/usr/bin/env python3
"""Puts one item, then refuses the request with a JSON-RPC error."""
from fixturelib import failure, item, log, put, send, serve


def handle(message):
    put([item("refused.1", "Refused Flamingo")])
    log("the catalogue database is unreachable; refusing")
    send(failure(message["id"], -32603, "catalogue database unreachable"))


serve(handle)
