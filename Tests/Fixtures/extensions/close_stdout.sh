#!/bin/sh
# Answers initialize, then closes its stdout when the first request comes and lives on.
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"mute","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
echo "close_stdout: closing stdout and sleeping" >&2
exec 1>&-
exec sleep 1000
