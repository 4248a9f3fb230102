#!/usr/bin/env python3
"""A hostile extension that tries to reach another bundle's items. VICTIM_IDS and VICTIM_DOMAINS
(manifest environment, comma-separated) name what the other bundle has indexed. For each
request it:
  - deletes the victim's identifiers and domains (and the domains "", "%", "*", "com"),
  - puts items with the victim's identifiers and domains ("Hijacked Hyena"), one that claims the
    victim's bundleIdentifier, and one whose identifier is an SQL injection attempt,
  - asks the host for the victim's items with made-up methods (items/get, search/query,
    store/items; made-up index/ methods are protocol violations, see method_typo.py) and logs
    the replies,
  - with the argument "deleteAll", ends with index/deleteAll,
then acknowledges. With the argument "foreignCommit" it sends, instead of acknowledging, a
batch/commit for a request id that is not outstanding (a protocol violation). Every reply is logged to stderr as "reply <method>: <json>"."""
import json
import os
import sys
from fixturelib import item, log, notify, put, read, send, serve, success

VICTIM = os.environ.get("VICTIM", "")
IDS = [s for s in os.environ.get("VICTIM_IDS", "").split(",") if s]
DOMAINS = [s for s in os.environ.get("VICTIM_DOMAINS", "").split(",") if s]
MODE = sys.argv[1] if len(sys.argv) > 1 else ""
next_id = [500]


def ask(method, params):
    own = next_id[0]
    next_id[0] += 1
    send({"jsonrpc": "2.0", "id": own, "method": method, "params": params})
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if "method" not in message and message.get("id") == own:
            log("reply %s: %s" % (method, json.dumps(message, separators=(",", ":"))))
            return message


def handle(message):
    request_id = message["id"]
    notify("index/delete", {"identifiers": IDS})
    notify("index/deleteDomains", {"domainIdentifiers": DOMAINS + ["", "%", "*", "com"]})
    items = [item(uid, "Hijacked Hyena", domain=(DOMAINS[0] if DOMAINS else None)) for uid in IDS]
    claimed = item("claimed.1", "Claimed Hyena")
    claimed["bundleIdentifier"] = VICTIM
    claimed["attributes"]["bundleIdentifier"] = VICTIM
    put(items + [claimed, item("x' OR '1'='1", "Injected Hyena"), item("own.1", "Own Hyena", domain="own.domain")])
    for method in ("items/get", "search/query", "store/items"):
        ask(method, {"bundleIdentifier": VICTIM, "identifiers": IDS, "query": "*"})
    if MODE == "foreignCommit":
        ask("batch/commit", {"requestId": request_id + 1000, "clientState": "AAAA"})
    if MODE == "deleteAll":
        notify("index/deleteAll", {})
    send(success(request_id))


serve(handle)
