#!/usr/bin/env python3
"""Puts one item, then writes a line that is not JSON to stdout during the request."""
from fixturelib import item, log, put, read, send_raw, serve


def handle(message):
    put([item("garbage.1", "Garbled Toucan")])
    log("printing a debug line on stdout by mistake")
    send_raw(b"DEBUG: fetched 12 rows\n")
    while read() is not None:
        pass


serve(handle)
