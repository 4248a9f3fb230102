"""`reindex_extension.testing`: handlers run in process on a RecordingIndex, and `Item`'s checks."""
from __future__ import annotations

import datetime
import sys
import threading
import time
import unittest

from support import SDK_DIR

sys.path.insert(0, SDK_DIR)
from reindex_extension import Extension, Item, RequestEnded, RequestError  # noqa: E402
from reindex_extension.testing import RecordingIndex, run_reindex_all, run_reindex_items, suggest  # noqa: E402


class Shelf(Extension):
    """Five books in batches of two, each batch committed with the next book's index."""

    def __init__(self, titles=("One", "Two", "Three", "Four", "Five")):
        self.titles = list(titles)

    def item(self, n):
        return Item("book.%d" % (n + 1), {"title": self.titles[n], "rating": n},
                    domain_identifier="shelf." + ("even" if n % 2 == 0 else "odd"))

    def reindex_all(self, index):
        start = int(index.client_state.decode()) if index.client_state else 0
        if not self.titles:
            index.allow_empty()
        for first in range(start, len(self.titles), 2):
            end = min(first + 2, len(self.titles))
            index.put(self.item(n) for n in range(first, end))
            index.progress(end, len(self.titles))
            if end < len(self.titles):
                index.commit_batch(str(end).encode())

    def reindex_items(self, identifiers, index):
        known = {"book.%d" % (n + 1): n for n in range(len(self.titles))}
        index.put(self.item(known[uid]) for uid in identifiers if uid in known)
        index.delete([uid for uid in identifiers if uid not in known])


class Scripted(Extension):
    def __init__(self, body):
        self.body = body

    def reindex_all(self, index):
        self.body(index)

    def reindex_items(self, identifiers, index):
        self.body(index)


class RecordingTests(unittest.TestCase):
    def test_reindex_all_records_puts_commits_and_progress(self):
        index = run_reindex_all(Shelf())
        self.assertEqual(list(index.items), ["book.1", "book.2", "book.3", "book.4", "book.5"])
        self.assertEqual(index.items["book.3"]["attributes"]["title"], "Three")
        self.assertEqual(index.commits, [b"2", b"4"])
        self.assertEqual(index.progress, [(2, 5, None), (4, 5, None), (5, 5, None)])
        self.assertEqual(index.operations[1], ("progress", 2, 5, None))
        self.assertEqual(index.operations[2], ("commit", b"2"))
        self.assertEqual((index.acknowledgements, index.empty_allowed, index.rejections, index.warnings), (1, False, [], []))

    def test_reindex_all_resumes_from_a_client_state(self):
        index = run_reindex_all(Shelf(), reason="retry", client_state=b"4")
        self.assertEqual([item["uniqueIdentifier"] for item in index.puts], ["book.5"])
        self.assertEqual(index.commits, [])

    def test_reindex_items_on_an_earlier_recording_applies_deletes(self):
        index = run_reindex_all(Shelf())
        run_reindex_items(Shelf(["One", "Two"]), ["book.2", "book.4"], index)
        self.assertEqual(index.deleted, ["book.4"])
        self.assertEqual(sorted(index.items), ["book.1", "book.2", "book.3", "book.5"])
        self.assertEqual(index.acknowledgements, 2)
        self.assertIsNone(run_reindex_items(Shelf(), ["book.1"]).operations[0][1][0].get("isUpdate"))

    def test_allow_empty_domains_and_delete_all(self):
        self.assertTrue(run_reindex_all(Shelf([])).empty_allowed)
        index = run_reindex_all(Shelf())
        run_reindex_items(Scripted(lambda i: i.delete_domains("shelf.odd")), [], index)
        self.assertEqual(sorted(index.items), ["book.1", "book.3", "book.5"])
        run_reindex_items(Scripted(lambda i: i.delete_all()), [], index)
        self.assertEqual((index.items, index.delete_all_count, index.deleted_domains), ({}, 1, ["shelf.odd"]))

    def test_a_partial_update_is_merged(self):
        index = run_reindex_all(Shelf())
        run_reindex_items(Scripted(lambda i: i.put([Item("book.1", {"textContent": "new", "rating": None}, is_update=True),
                                                     Item("book.99", {"title": "absent"}, is_update=True)])), [], index)
        self.assertEqual(index.items["book.1"]["attributes"], {"title": "One", "textContent": "new"})
        self.assertNotIn("book.99", index.items)

    def test_the_handlers_exception_is_raised_as_it_is(self):
        def refuse(index):
            raise RequestError("the database is down", -32001)
        with self.assertRaises(RequestError) as raised:
            run_reindex_all(Scripted(refuse))
        self.assertEqual(raised.exception.code, -32001)

    def test_writes_after_the_answer_raise(self):
        kept = []
        run_reindex_all(Scripted(kept.append))
        with self.assertRaises(RequestEnded):
            kept[0].put(Item("late"))

    def test_a_thread_left_running_refuses_the_request(self):
        release = threading.Event()

        def start_thread(index):
            threading.Thread(target=release.wait, name="left-running").start()
        try:
            with self.assertRaises(RequestError) as raised:
                run_reindex_all(Scripted(start_thread))
            self.assertIn("left-running", str(raised.exception))
        finally:
            release.set()
            time.sleep(0.01)

    def test_items_the_host_would_reject_and_misspelt_names(self):
        index = RecordingIndex(declarations={"pages": {"type": "number"}, "director": {"type": "string"}})
        run_reindex_all(Scripted(lambda i: i.put([
            {"uniqueIdentifier": "good", "attributes": {"title": "Fine", "pages": 12, "keyword": ["k"], "shelf": "B"}},
            {"uniqueIdentifier": "bad.pages", "attributes": {"title": "Bad", "pages": "many"}},
            {"uniqueIdentifier": "bad.title", "attributes": {"title": 7}},
            {"uniqueIdentifier": "typo2", "attributes": {"title": "Again", "keyword": ["k"], "directer": "Lang"}},
        ])), index)
        self.assertEqual(sorted(index.items), ["good", "typo2"])
        self.assertEqual([uid for uid, _ in index.rejections], ["bad.pages", "bad.title"])
        self.assertIn("'pages' must be a number", index.rejections[0][1])
        self.assertIn("'title' must be a str, got int", index.rejections[1][1])
        self.assertEqual(len(index.warnings), 2, index.warnings)
        self.assertTrue(index.warnings[0].startswith("attribute 'keyword' (first in item 'good')"), index.warnings)
        self.assertTrue(index.warnings[0].endswith("did you mean 'keywords'?"), index.warnings)
        self.assertTrue(index.warnings[1].endswith("did you mean 'director'?"), index.warnings)

    def test_members_an_item_does_not_have_warn_as_the_host_does(self):
        index = RecordingIndex()
        run_reindex_all(Scripted(lambda i: i.put([
            {"uniqueIdentifier": "a", "title": "Ada Park"},
            {"uniqueIdentifier": "b", "attributeSet": {"title": "Grace"}},
            {"uniqueIdentifier": "c", "attribtes": {"title": "x"}},
            {"uniqueIdentifier": "d", "title": "no second warning"},
        ])), index)
        self.assertEqual(sorted(index.items), ["a", "b", "c", "d"])
        self.assertEqual(index.warnings, [
            "item member 'title' (first in item 'a') is not part of an item and is ignored; "
            'attributes go inside "attributes": {"uniqueIdentifier": \u2026, "attributes": {"title": \u2026}}',
            "item member 'attributeSet' (first in item 'b') is not part of an item and is ignored; "
            'Core Spotlight\'s attributeSet is "attributes" here',
            "item member 'attribtes' (first in item 'c') is not part of an item and is ignored; did you mean 'attributes'?",
        ])

    def test_a_nan_in_a_dict_item_is_refused_naming_item_and_attribute(self):
        with self.assertRaises(ValueError) as raised:
            run_reindex_all(Scripted(lambda i: i.put({"uniqueIdentifier": "n", "attributes": {"scores": [1, float("nan")]}})))
        self.assertEqual(str(raised.exception),
                         "item 'n'.attributes.scores[1] must hold finite numbers only, got nan: JSON has no NaN or infinities")

    def test_a_dict_item_that_contains_itself_is_refused_naming_it(self):
        item = {"uniqueIdentifier": "loop", "attributes": {"title": "Loop"}}
        item["attributes"]["again"] = item
        with self.assertRaises(ValueError) as raised:
            run_reindex_all(Scripted(lambda i: i.put(item)))
        self.assertEqual(str(raised.exception),
                         "item 'loop' contains itself (a dict or list inside its own value): JSON has no references")

    def test_suggest(self):
        self.assertEqual(suggest("keyword", ["title", "keywords"]), "keywords")
        self.assertEqual(suggest("titel", ["title", "keywords"]), "title")
        self.assertIsNone(suggest("shelf", ["title", "keywords"]))
        self.assertIsNone(suggest("title", ["title"]))


class ItemCheckTests(unittest.TestCase):
    def test_attributes_are_checked_when_the_item_is_made(self):
        cases = [
            ({"title": 3}, TypeError, "Item 'a': attribute 'title' must be a str, got int"),
            ({"rating": "5"}, TypeError, "Item 'a': attribute 'rating' must be a number (int or float), got str"),
            ({"rating": True}, TypeError, "Item 'a': attribute 'rating' must be a number (int or float), got bool"),
            ({"rating": float("nan")}, ValueError, "Item 'a': attribute 'rating' must be a finite number, got nan: JSON has no NaN or infinities"),
            ({"latitude": float("-inf")}, ValueError, "Item 'a': attribute 'latitude' must be a finite number, got -inf: JSON has no NaN or infinities"),
            ({"keywords": "one"}, TypeError, "Item 'a': attribute 'keywords' must be a list of str, got str"),
            ({"authors": ["x", 2]}, TypeError, "Item 'a': attribute 'authors'[1] must be a str, got int"),
            ({"supportsPhoneCall": 1}, TypeError, "Item 'a': attribute 'supportsPhoneCall' must be a bool, got int"),
            ({"startDate": "yesterday"}, ValueError, "Item 'a': attribute 'startDate' must be an RFC 3339 timestamp such as 2024-05-01T12:00:00Z, got 'yesterday'"),
            ({"endDate": 1700000000}, TypeError, "Item 'a': attribute 'endDate' must be a datetime, a date or an RFC 3339 str, got int"),
            ({"thumbnailData": "not base64!"}, ValueError, "Item 'a': attribute 'thumbnailData' must be bytes or base64 text, got 'not base64!'"),
            ({"custom": {"x": [float("inf")]}}, ValueError, "Item 'a': attribute 'custom.x[0]' must hold finite numbers only, got inf: JSON has no NaN or infinities"),
        ]
        for attributes, kind, message in cases:
            with self.assertRaises(kind, msg=attributes) as raised:
                Item("a", attributes)
            self.assertEqual(str(raised.exception), message)
        with self.assertRaises(TypeError):
            Item(5)  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            Item("")
        with self.assertRaises(ValueError):
            Item("a", expiration_date="soon")

    def test_good_values_pass_and_iterables_become_lists(self):
        item = Item("a", {"title": "T", "keywords": {"b", "a"}, "authors": (n for n in ["x"]), "rating": 4.5,
                          "startDate": datetime.date(2024, 1, 2), "endDate": "2024-01-02T03:04:05.5+02:00",
                          "thumbnailData": b"\x00", "rankingHint": None, "custom": {"any": [1, "two", None]}})
        self.assertEqual(item.to_json()["attributes"]["keywords"], ["a", "b"])
        self.assertEqual(item.to_json()["attributes"]["authors"], ["x"])

    def test_a_change_after_making_is_checked_when_sent(self):
        item = Item("a", {"rating": 1})
        item.attributes["rating"] = float("nan")
        with self.assertRaises(ValueError):
            item.to_json()


if __name__ == "__main__":
    unittest.main()
