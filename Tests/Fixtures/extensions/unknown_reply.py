#!/usr/bin/env python3
"""Puts one item, then replies to request id 99, which the host never sent."""
from fixturelib import item, log, put, read, send, serve, success


def handle(message):
    put([item("unknown.1", "Unknown Ibis")])
    log("replying to request 99")
    send(success(99))
    while read() is not None:
        pass


serve(handle)
