#!/usr/bin/env python3
"""Bookshelf: an example reindex extension written with the Python SDK (SDKs/python).

The SDK speaks the protocol (docs/PROTOCOL.md); this file only says what the books are. The
same extension without the SDK is ../bookshelf-nosdk/bookshelf.py. Logs go to stderr, which
the host captures. The books come from books.json beside this file; a book's item identifier
is "book.<id>".
"""
import json
import os
import sys


def find_sdk():
    """Makes the `reindex_extension` package importable. It is looked for, in this order, in
    $REINDEX_PYTHON_SDK (set it in the manifest's "environment": the host passes no other
    variables), in a copy beside this file (vendor SDKs/python/reindex_extension into the
    bundle to ship it), in SDKs/python of a source tree this bundle is inside (the repository,
    or a copy of the bundle under it, as Scripts/demo.sh makes), in SDKs/python of the source
    tree the running host was built in (found from $REINDEX_HOST_PID on Linux), and among
    installed packages (pip install SDKs/python)."""
    def trees(directory):
        while True:
            yield os.path.join(directory, "SDKs", "python")
            parent = os.path.dirname(directory)
            if parent == directory:
                return
            directory = parent

    here = os.path.dirname(os.path.realpath(__file__))
    candidates = [os.environ.get("REINDEX_PYTHON_SDK"), here, *trees(here)]
    try:
        host = os.path.realpath("/proc/%s/exe" % os.environ["REINDEX_HOST_PID"])
        candidates.extend(trees(os.path.dirname(host)))
    except (KeyError, OSError):
        pass
    unreadable = []
    for candidate in candidates:
        init = os.path.join(candidate or "", "reindex_extension", "__init__.py")
        if candidate and os.path.isfile(init):
            try:  # the sandbox lets anyone see that a file exists, not read it
                with open(init, "rb"):
                    pass
            except OSError:
                unreadable.append(candidate)
                continue
            sys.path.insert(0, candidate)
            return
    try:
        import reindex_extension  # noqa: F401 (installed)
    except ImportError:
        if unreadable:
            sys.exit("bookshelf: the Python SDK (reindex_extension) is in %s, but the sandbox does not let the "
                     "extension read it: declare that directory in the manifest's \"sandbox\": {\"read\": [...]}, "
                     "or copy SDKs/python/reindex_extension beside bookshelf.py" % unreadable[0])
        sys.exit("bookshelf: cannot find the Python SDK (reindex_extension): install it with "
                 "'pip install SDKs/python', copy SDKs/python/reindex_extension beside bookshelf.py, "
                 "or set REINDEX_PYTHON_SDK in the manifest's environment")


find_sdk()
from reindex_extension import Extension, Item  # noqa: E402

BATCH_SIZE = 5  # books per index/put, and per batch/commit during reindexAll
DOMAIN_PREFIX = "com.example.bookshelf.book."
BOOKS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "books.json")


def log(*args):
    print("bookshelf:", *args, file=sys.stderr, flush=True)


def load_books():
    with open(BOOKS_FILE, encoding="utf-8") as f:
        return json.load(f)


def to_item(book):
    """One book as an item."""
    return Item(
        "book.%d" % book["id"],
        domain_identifier=DOMAIN_PREFIX + book["genre"].lower().replace(" ", "-"),
        attributes={
            "title": book["title"],
            "authors": book["authors"],
            "contentDescription": book["description"],
            "keywords": book["keywords"],
            "contentCreationDate": "%04d-01-01T00:00:00Z" % int(book["year"]),  # RFC 3339
        },
    )


class Bookshelf(Extension):
    # The name and version reported to the host ("Bookshelf", "1.0.0") come from manifest.json.

    def reindex_all(self, index):
        """Puts every book. The host removes whatever this request did not put, when it returns."""
        books = load_books()
        start = 0
        if index.client_state:  # an earlier attempt committed books[:start] before it stopped
            try:
                start = int(json.loads(index.client_state)["next"])
                log("resuming at book %d of %d" % (start, len(books)))
            except (ValueError, KeyError, TypeError):
                log("unreadable clientState; starting from the beginning")
        log("reindexAll (reason: %s)" % index.reason)  # unknown reasons are treated alike
        for first in range(start, len(books), BATCH_SIZE):
            batch = books[first:first + BATCH_SIZE]
            index.put([to_item(book) for book in batch])
            done = first + len(batch)
            index.progress(done, len(books), "%d of %d books" % (done, len(books)))
            if done < len(books):  # returning commits the last batch
                state = json.dumps({"next": done}, separators=(",", ":")).encode("utf-8")
                log("host committed", index.commit_batch(state), "operations")
        # Returning acknowledges; an exception (an unreadable books.json, say) refuses, and the
        # host retries later from the last committed state. A $/cancel makes index calls raise.

    def reindex_items(self, identifiers, index):
        """Re-indexes exactly the identifiers asked for: puts those that exist, deletes the rest."""
        books = {"book.%d" % book["id"]: book for book in load_books()}
        found = [books[i] for i in identifiers if i in books]
        gone = [i for i in identifiers if i not in books]
        for first in range(0, len(found), BATCH_SIZE):
            index.put([to_item(book) for book in found[first:first + BATCH_SIZE]])
        if gone:
            index.delete(gone)

    def shutdown(self):
        log("stdin closed, exiting")


if __name__ == "__main__":
    Bookshelf.main()
