#!/usr/bin/env python3
"""Reports on stderr which descriptors above 2 it inherited ("inherited descriptors: [...]"),
then acknowledges its request."""
import os
from fixturelib import log, send, serve, success

inherited = []
for fd in range(3, 1024):
    try:
        os.fstat(fd)
    except OSError:
        continue
    try:
        target = os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        target = "?"
    inherited.append("%d -> %s" % (fd, target))
log("inherited descriptors: %s" % inherited)


def handle(message):
    send(success(message["id"]))


serve(handle)
