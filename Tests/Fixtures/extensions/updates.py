#!/usr/bin/env python3
"""Partial updates (`"isUpdate": true`) for the tests.

reindexAll, the first time (no file at FIXTURE_COUNTER yet): puts u.1 (title "Original one",
rating 1, contentDescription "first of all", keywords ["alpha"]) and u.2 (title "Original two",
rating 2), then updates u.1 within the same request (rating 4, contentDescription removed) and
updates u.9, which does not exist (ignored). Every later reindexAll sends only an update of u.2
(title "Renamed two"): it merges into the live u.2, and u.1, not put, goes.

reindexItems reads each identifier as a command:
  u.N        update u.N: title "Updated N", rating removed, keywords ["beta"]
  gone.N     delete u.N, then update it (ignored: this request deleted it)
  staged.N   put u.N whole (title "Staged N", rating 7), then update it (keywords ["gamma"])
  bad        an item whose isUpdate is "yes" (rejected with its reason)
Before acknowledging it creates FIXTURE_READY (if set) and waits for FIXTURE_RELEASE (if set,
at most 120 s), so a test can search while the request is open."""
import os
import time
from fixturelib import log, notify, put, send, serve, success


def update(uid, **attributes):
    return {"uniqueIdentifier": uid, "isUpdate": True, "attributes": attributes}


def handle(message):
    request_id = message["id"]
    params = message.get("params") or {}
    if message["method"] == "reindexAll":
        counter = os.environ["FIXTURE_COUNTER"]
        if not os.path.exists(counter):
            open(counter, "w").close()
            put([
                {"uniqueIdentifier": "u.1", "attributes": {"title": "Original one", "rating": 1,
                                                           "contentDescription": "first of all", "keywords": ["alpha"]}},
                {"uniqueIdentifier": "u.2", "domainIdentifier": "com.example.updates.two",
                 "attributes": {"title": "Original two", "rating": 2}},
            ])
            put([update("u.1", rating=4, contentDescription=None), update("u.9", title="Nobody")])
        else:
            put([update("u.2", title="Renamed two")])
    else:
        for command in params.get("identifiers", []):
            kind, _, n = command.partition(".")
            if kind == "u":
                put([update(command, title="Updated %s" % n, rating=None, keywords=["beta"])])
            elif kind == "gone":
                notify("index/delete", {"identifiers": ["u." + n]})
                put([update("u." + n, title="Should not exist")])
            elif kind == "staged":
                put([{"uniqueIdentifier": "u." + n, "attributes": {"title": "Staged %s" % n, "rating": 7}}])
                put([update("u." + n, keywords=["gamma"])])
            elif command == "bad":
                put([{"uniqueIdentifier": "u.bad", "isUpdate": "yes", "attributes": {"title": "Bad"}}])
        ready = os.environ.get("FIXTURE_READY")
        if ready:
            open(ready, "w").close()
        release = os.environ.get("FIXTURE_RELEASE")
        deadline = time.time() + 120
        while release and not os.path.exists(release) and time.time() < deadline:
            time.sleep(0.02)
        log("released")
    send(success(request_id))


serve(handle)
