#!/usr/bin/env bash
# The main job, on a fresh clone: build the host and the example extensions, bundle them into a
# private extensions directory, reindex each through the host, and run the README's example
# queries against the result, failing when one finds nothing.
# Everything the host and the extensions write stays in .demo/ (your own index, extensions, data
# and logs are not touched): the index, the XDG data, state, cache and config directories (so
# each bundle's REINDEX_DATA_DIR and its log), TMPDIR and even HOME point into it, and the demo
# fails if anything was written to that HOME, where a default would have put it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
swift build
demo="$PWD/.demo"
rm -rf "$demo"
mkdir -p "$demo/extensions" "$demo/home" "$demo/tmp"
swift package bundle-extension --product ColleaguesIndexer --output "$demo/extensions"
swift package bundle-extension --product ShowTimesIndexer --output "$demo/extensions"
cp -R Examples/python/bookshelf "$demo/extensions/"
# Installed as a user would: the Python SDK vendored into the bundle (the sandbox lets an extension
# read its own bundle, not this checkout).
cp -R SDKs/python/reindex_extension "$demo/extensions/bookshelf/"

export REINDEX_INDEX="$demo/index.sqlite" REINDEX_EXTENSIONS_PATH="$demo/extensions"
export HOME="$demo/home" TMPDIR="$demo/tmp"
export XDG_DATA_HOME="$demo/data" XDG_STATE_HOME="$demo/state" XDG_CACHE_HOME="$demo/cache"
export XDG_CONFIG_HOME="$demo/config" XDG_DATA_DIRS="$demo/system" XDG_RUNTIME_DIR="$demo/runtime"
reindex() { echo "\$ reindex $*" >&2; "$PWD/.build/debug/reindex" "$@"; }
fail() { echo "demo: $*" >&2; exit 1; }

# The README's examples ("Using the host"), each of which must find something.
finds() {
    local count
    count=$("$PWD/.build/debug/reindex" search "$1" --count)
    [ "$count" -gt 0 ] || fail "the README's query '$1' found nothing"
}

reindex paths
reindex list
reindex run com.example.colleagues.indexer
reindex run com.example.showtimes.indexer
reindex run com.example.bookshelf.indexer
reindex search staff eng
finds "staff eng"
reindex search 'rating >= 4 && contentType == "public.movie"' --sort rating:desc --limit 5
finds 'rating >= 4 && contentType == "public.movie"'
reindex search 'authors == "le guin"cdw' --fields title,authors --json
finds 'authors == "le guin"cdw'
reindex search 'harbour' --count; reindex search 'harbour' --facet contentType
finds harbour
reindex search dune
finds dune
reindex show com.example.colleagues.indexer employee.42 >/dev/null || fail "the README's 'reindex show … employee.42' found nothing"
reindex items com.example.colleagues.indexer --limit 5
reindex status

# Nothing went where a default would have put it: every location is under .demo/, and the HOME
# the host and the extensions were given is still empty.
for location in $("$PWD/.build/debug/reindex" paths --json | grep -o '"\(directory\|index\|logs\|data\)":"[^"]*"' | cut -d'"' -f4); do
    case "$location" in "$demo"/*) ;; *) fail "reindex paths names $location, outside $demo" ;; esac
done
[ -z "$(ls -A "$demo/home")" ] || fail "something was written to HOME: $(ls -A "$demo/home" | tr '\n' ' ')"
echo "demo: every README query found something; everything written is under $demo" >&2
