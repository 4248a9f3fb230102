#!/bin/sh
# Answers initialize, sends two items for its first request, then dies of SIGSEGV
# without acknowledging.
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"crasher","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
echo "crash_mid_stream: got a request; sending two items, then crashing" >&2
printf '%s\n' '{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"crash.1","attributes":{"title":"Halfway Pelican"}}]}}'
printf '%s\n' '{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"crash.2","attributes":{"title":"Halfway Heron"}}]}}'
kill -SEGV $$
