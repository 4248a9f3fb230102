#!/bin/sh
# Never reads its stdin: answers initialize blindly (without reading it), then sleeps. A large
# request (reindexItems of many identifiers) fills the pipe; the host must not block writing it,
# and its idle timeout must end the request.
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"deaf","version":"1"},"capabilities":{}}}'
echo "never_reads_stdin: answered initialize without reading anything; sleeping" >&2
sleep 1000
