#!/bin/sh
# Prints a log line on stdout before answering initialize: a protocol violation.
echo "Starting the indexer, please wait..."
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"chatterbox","version":"1"},"capabilities":{}}}'
while IFS= read -r line; do :; done
exit 0
