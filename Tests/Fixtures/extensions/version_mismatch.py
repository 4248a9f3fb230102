#!/usr/bin/env python3
"""Speaks only protocol versions 2 and 3: answers initialize with -32602 and both lists; with
the argument "chooses-2", answers with success but chooses version 2 anyway."""
import sys
from fixturelib import failure, log, read, send, success

SUPPORTED = [2, 3]
message = read()
requested = (message.get("params") or {}).get("protocolVersions") or []
log("host requested", requested, "but only", SUPPORTED, "are supported")
if len(sys.argv) > 1 and sys.argv[1] == "chooses-2":
    send(success(0, {"protocolVersion": 2, "extension": {"name": "future", "version": "2.0"}, "capabilities": {}}))
else:
    send(failure(0, -32602, "no common protocol version", {"supported": SUPPORTED, "requested": requested}))
while read() is not None:
    pass
sys.exit(0)
