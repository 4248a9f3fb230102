#!/usr/bin/env python3
"""Puts one valid item, then sends an index/put line holding bytes that are not UTF-8."""
from fixturelib import item, log, put, read, send_raw, serve


def handle(message):
    put([item("valid.1", "Valid Vulture")])
    log("sending a line with invalid UTF-8")
    send_raw(b'{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"bad.\xff","attributes":{"title":"Bad \xc3\x28 Bytes"}}]}}\n')
    while read() is not None:
        pass


serve(handle)
