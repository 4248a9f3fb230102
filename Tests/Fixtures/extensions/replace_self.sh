#!/bin/sh
# Replaced on disk during a run: for its first request, generation 1 of this script writes
# generation 2 beside itself and renames it over its own path (as an update would), then puts
# one item and acknowledges. The running process keeps its old code; the next start runs the
# new file. (The copy is made executable by cp, which creates it with its source's mode: the
# sandbox denies chmod.)
GEN=1
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"replaced","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
if [ "$GEN" = 1 ]; then
    cp "$0" "$0.new" && sed 's/^GEN=1$/GEN=2/' "$0" > "$0.new" && mv "$0.new" "$0"
    echo "replace_self: generation 1 replaced $0 with generation 2" >&2
    title="Original Ocelot"
else
    title="Successor Seahorse"
fi
printf '{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"replaced.1","attributes":{"title":"%s"}}]}}\n' "$title"
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
while IFS= read -r line; do :; done
exit 0
