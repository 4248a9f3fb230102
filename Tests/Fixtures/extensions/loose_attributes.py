#!/usr/bin/env python3
"""Mistakes a hand-written extension makes with attributes, in one reindexAll:

- numbers JSON cannot spell, as Python's json.dumps writes them by default: n.nan (rating NaN),
  n.inf (rankingHint Infinity), n.neginf (a custom score -Infinity, nested) and, written by
  hand, n.huge (latitude 1e999, too large for a double). Each is to be rejected with its reason.
- misspelt attribute names: `keyword` (for keywords) and `titel` (for title) on every good
  item, `directer` (for the declared `director`, when the test's manifest declares it); `shelf`
  is far from every name. The items are accepted; each misspelling is warned about once.
- a member an item does not have: good.2 carries `contentDescription` beside `uniqueIdentifier`
  instead of inside `attributes` (ignored, with a warning).

reindexItems puts one good item with `keyword` again."""
from fixturelib import notify, send, send_raw, serve, success


def good(n):
    item = {"uniqueIdentifier": "good.%d" % n, "attributes": {
        "title": "Good %d" % n, "keyword": ["typo"], "titel": "Typo", "directer": "Lang", "shelf": "B"}}
    if n == 2:
        item["contentDescription"] = "outside attributes"
    return item


def handle(message):
    request_id = message["id"]
    if message["method"] == "reindexAll":
        notify("index/put", {"items": [good(1), good(2),
                                       {"uniqueIdentifier": "n.nan", "attributes": {"title": "NaN", "rating": float("nan")}},
                                       {"uniqueIdentifier": "n.inf", "attributes": {"title": "Inf", "rankingHint": float("inf")}},
                                       {"uniqueIdentifier": "n.neginf", "attributes": {"title": "-Inf", "scores": {"all": [1, float("-inf")]}}},
                                       good(3)]})
        send_raw(b'{"jsonrpc":"2.0","method":"index/put","params":{"items":['
                 b'{"uniqueIdentifier":"n.huge","attributes":{"title":"Huge","latitude":1e999}}]}}\n')
    else:
        notify("index/put", {"items": [good(4)]})
    send(success(request_id))


serve(handle)
