#!/usr/bin/env python3
"""Books with custom attributes, for the tests of manifest-declared attributes. The test's
manifest declares: isbn (string), pages (number), published (date), inPrint (bool), genres
(strings, searchable) and blurb (string, searchable by default); "shelf" is not declared.

reindexAll puts b.1, b.2, b.3 and b.bad (pages "many": rejected for the wrong type).
reindexItems puts b.4 whatever it is asked for."""
from fixturelib import put, send, serve, success

BOOKS = [
    {"uniqueIdentifier": "b.1", "attributes": {
        "title": "Salt and Dune", "isbn": "978-1", "pages": 320, "published": "2019-01-01T00:00:00Z", "inPrint": True,
        "genres": ["science fiction", "desert"], "blurb": "A water engineer crosses the sands", "shelf": "A"}},
    {"uniqueIdentifier": "b.2", "attributes": {
        "title": "Harbour Lights", "isbn": "978-2", "pages": 120, "published": "2021-06-01T00:00:00Z", "inPrint": False,
        "genres": ["mystery"], "blurb": "The lighthouse keeper vanishes"}},
    {"uniqueIdentifier": "b.3", "attributes": {
        "title": "Quiet Orchard", "isbn": "978-3", "pages": 540, "genres": ["literary"], "blurb": "Apples and grief"}},
    {"uniqueIdentifier": "b.bad", "attributes": {"title": "Bad pages", "pages": "many"}},
]


def handle(message):
    request_id = message["id"]
    if message["method"] == "reindexAll":
        put(BOOKS)
    else:
        put([{"uniqueIdentifier": "b.4", "attributes": {
            "title": "Fourth", "pages": 80, "genres": ["poetry"], "blurb": "Verses about the tide"}}])
    send(success(request_id))


serve(handle)
