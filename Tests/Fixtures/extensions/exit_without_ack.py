#!/usr/bin/env python3
"""Puts one item for its first request, then exits with status 0 without acknowledging."""
import sys
from fixturelib import item, log, put, serve


def handle(message):
    put([item("unacked.1", "Unacknowledged Albatross")])
    log("leaving without acknowledging request", message["id"])
    sys.stdout.flush()
    sys.exit(0)


serve(handle)
