"""The SDK in-process: items and JSON, `serve` over os.pipe(), and the README's API reference."""
from __future__ import annotations

import datetime
import json
import os
import re
import sys
import threading
import unittest

from support import SDK_DIR

sys.path.insert(0, SDK_DIR)
import reindex_extension  # noqa: E402
from reindex_extension import (  # noqa: E402
    ClientStateTooLarge, Extension, Item, Reason, RequestError, SearchableIndex, rfc3339, serve)
from reindex_extension.items import encode_json  # noqa: E402


class ItemTests(unittest.TestCase):
    def test_the_wire_shape_leaves_out_what_is_not_set(self):
        self.assertEqual(Item("a.1").to_json(), {"uniqueIdentifier": "a.1", "attributes": {}})
        self.assertEqual(
            Item("a.2", {"title": "T"}, domain_identifier="com.example.d", expiration_date="2030-01-01T00:00:00Z",
                 is_update=True).to_json(),
            {"uniqueIdentifier": "a.2", "domainIdentifier": "com.example.d", "expirationDate": "2030-01-01T00:00:00Z",
             "isUpdate": True, "attributes": {"title": "T"}})

    def test_rfc3339(self):
        utc = datetime.timezone.utc
        self.assertEqual(rfc3339(datetime.datetime(2026, 5, 4, 3, 2, 1, tzinfo=utc)), "2026-05-04T03:02:01Z")
        self.assertEqual(rfc3339(datetime.datetime(2026, 5, 4, 3, 2, 1, 250000)), "2026-05-04T03:02:01.25Z")
        self.assertEqual(rfc3339(datetime.datetime(2026, 5, 4, 1, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))),
                         "2026-05-04T06:00:00Z")
        self.assertEqual(rfc3339(datetime.date(2026, 5, 4)), "2026-05-04T00:00:00Z")
        self.assertEqual(rfc3339("2026-05-04T00:00:00+02:00"), "2026-05-04T00:00:00+02:00")
        with self.assertRaises(TypeError):
            rfc3339(12)  # type: ignore[arg-type]

    def test_encode_json_is_one_compact_line(self):
        line = encode_json({"text": "two\nlines \u2028 é", "items": [Item("x")], "when": datetime.date(2026, 1, 2),
                            "thumbnailData": b"\x00\xff", "keywords": {"b", "a"}})
        self.assertNotIn(b"\n", line)
        self.assertEqual(json.loads(line), {"text": "two\nlines \u2028 é", "items": [{"uniqueIdentifier": "x", "attributes": {}}],
                                            "when": "2026-01-02T00:00:00Z", "thumbnailData": "AP8=", "keywords": ["a", "b"]})

    def test_nan_and_unknown_objects_are_refused(self):
        with self.assertRaises(ValueError):
            encode_json({"rating": float("nan")})
        with self.assertRaises(TypeError):
            encode_json({"x": object()})

    def test_reasons(self):
        self.assertEqual([Reason.FORCED, Reason.INDEX_LOST, Reason.BUNDLE_CHANGED, Reason.EXPIRING, Reason.RETRY],
                         ["forced", "indexLost", "bundleChanged", "expiring", "retry"])


class Recorder(Extension):
    extension_name = "Recorder"
    extension_version = "1.2.3"

    def __init__(self):
        self.seen = []

    def reindex_all(self, index):
        self.seen.append(("all", index.reason, index.client_state))
        index.put({"uniqueIdentifier": "r.1", "attributes": {"title": "Recorded"}})
        try:
            index.commit_batch(b"x" * 251)
        except ClientStateTooLarge:
            self.seen.append("too large")
        for bad in (["not an item"], {"attributes": {}}):
            try:
                index.put(bad)
            except TypeError:
                self.seen.append("refused %r" % (bad,))

    def reindex_items(self, identifiers, index):
        self.seen.append(("items", identifiers, index.client_state, isinstance(index, SearchableIndex)))
        raise RequestError("nope", code=-32042)


class ServeTests(unittest.TestCase):
    def test_serve_over_pipes_in_process(self):
        to_extension_read, to_extension_write = os.pipe()
        from_extension_read, from_extension_write = os.pipe()
        extension = Recorder()
        thread = threading.Thread(target=serve, args=(extension, to_extension_read, from_extension_write), daemon=True)
        thread.start()
        lines = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersions": [1]}},
            {"jsonrpc": "2.0", "id": 1, "method": "reindexAll", "params": {"reason": "retry", "clientState": "YWJj"}},
            {"jsonrpc": "2.0", "id": 2, "method": "reindexItems", "params": {"identifiers": ["a", "b"], "reason": "forced"}},
        ]
        os.write(to_extension_write, b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        os.close(to_extension_write)
        thread.join(20)
        self.assertFalse(thread.is_alive())
        os.close(from_extension_write)
        with os.fdopen(from_extension_read, "rb") as output:
            replies = [json.loads(line) for line in output]
        os.close(to_extension_read)
        self.assertEqual(replies, [
            {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "extension": {"name": "Recorder", "version": "1.2.3"},
                                                   "capabilities": {}}},
            {"jsonrpc": "2.0", "method": "index/put", "params": {"items": [{"uniqueIdentifier": "r.1", "attributes": {"title": "Recorded"}}]}},
            {"jsonrpc": "2.0", "id": 1, "result": {}},
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32042, "message": "nope"}},
        ])
        self.assertEqual(extension.seen, [("all", "retry", b"abc"), "too large", "refused ['not an item']",
                                          "refused {'attributes': {}}", ("items", ["a", "b"], None, True)])
        self.assertEqual(extension.host.protocol_version, 1)


class DocumentationTests(unittest.TestCase):
    def test_the_readme_documents_every_public_name(self):
        with open(os.path.join(SDK_DIR, "README.md"), encoding="utf-8") as file:
            readme = file.read()
        reference = readme[readme.index("## API reference"):readme.index("## Cancellation")]
        missing = [name for name in reindex_extension.__all__
                   if not re.search(r"`[^`\n]*\b%s\b" % re.escape(name), reference)]
        self.assertEqual(missing, [])
        for name in ("put", "delete", "delete_domains", "delete_all", "commit_batch", "progress", "cancelled",
                     "check_cancelled", "reason", "client_state", "request_id", "method"):
            self.assertTrue(hasattr(SearchableIndex, name) or name in SearchableIndex.__init__.__code__.co_names, name)
            self.assertIn("`%s" % name, reference)
        for name in ("reindex_all", "reindex_items", "shutdown", "main", "extension_name", "extension_version",
                     "debugpy_address", "host"):
            self.assertTrue(hasattr(Extension, name), name)
            self.assertIn("`%s" % name, reference)


if __name__ == "__main__":
    unittest.main()
