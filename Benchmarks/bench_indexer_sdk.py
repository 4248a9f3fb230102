#!/usr/bin/env python3
"""The benchmark's Python SDK extension: reindexAll reads the items (one JSON item per line) from
BENCH_ITEMS_FILE and hands them to `index.put` as one generator, which is how the SDK's README
says to stream a large source. The SDK is found in REINDEX_PYTHON_SDK."""
import json
import os
import sys

sys.path.insert(0, os.environ["REINDEX_PYTHON_SDK"])
from reindex_extension import Extension  # noqa: E402


class BenchIndexer(Extension):
    def reindex_all(self, index):
        with open(os.environ["BENCH_ITEMS_FILE"], encoding="utf-8") as items:
            index.put(json.loads(line) for line in items)

    def reindex_items(self, identifiers, index):
        index.delete(identifiers)


if __name__ == "__main__":
    BenchIndexer.main()
