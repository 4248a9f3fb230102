#!/usr/bin/env bash
# The main job, on a fresh clone: build the host and the example extensions, bundle them into a
# private extensions directory, reindex each through the host, and search the result.
# Everything it writes stays in .demo/ (your own index and extensions are not touched).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
swift build
demo="$PWD/.demo"
rm -rf "$demo"
mkdir -p "$demo/extensions"
swift package bundle-extension --product ColleaguesIndexer --output "$demo/extensions"
swift package bundle-extension --product ShowTimesIndexer --output "$demo/extensions"
cp -R Examples/python/bookshelf "$demo/extensions/"
# Installed as a user would: the Python SDK vendored into the bundle (the sandbox lets an extension
# read its own bundle, not this checkout).
cp -R SDKs/python/reindex_extension "$demo/extensions/bookshelf/"
export REINDEX_INDEX="$demo/index.sqlite" REINDEX_EXTENSIONS_PATH="$demo/extensions"
reindex() { echo "\$ reindex $*" >&2; "$PWD/.build/debug/reindex" "$@"; }
reindex list
reindex run com.example.colleagues.indexer
reindex run com.example.showtimes.indexer
reindex run com.example.bookshelf.indexer
reindex search "staff eng"
reindex search dune
reindex status
