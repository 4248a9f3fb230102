#!/usr/bin/env python3
"""Sends deeply nested JSON: for its first request, an index/put whose item attribute holds
DEPTH (argument, default 100000) nested arrays, on one line of about 2×DEPTH bytes. The host's
reader must refuse it without exhausting its stack."""
import sys
from fixturelib import read, send_raw, serve

DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 100000


def handle(message):
    nested = "[" * DEPTH + "]" * DEPTH
    send_raw(('{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"deep.1",'
              '"attributes":{"title":"Deep Dugong","keywords":%s}}]}}\n' % nested).encode())
    while read() is not None:
        pass
    sys.exit(0)


serve(handle)
