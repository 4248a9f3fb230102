#!/bin/sh
# Ignores SIGTERM, acknowledges its first request, then never exits, even at end of input:
# only SIGKILL ends it.
trap '' TERM
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"stubborn","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
printf '%s\n' '{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"stubborn.1","attributes":{"title":"Stubborn Mule"}}]}}'
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
echo "ignore_sigterm: acknowledged request $id; now ignoring SIGTERM and end of input" >&2
exec sleep 1000
