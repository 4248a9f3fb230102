#!/bin/sh
# Writes its environment (`env`) to the file named by FIXTURE_DUMP and its working directory to
# cwd.txt, both relative to the working directory; logs a line to stderr; puts one item and
# acknowledges its first request; exits 0 at end of input. (A shell script, so no interpreter
# launcher adds variables of its own.)
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"env-dump","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
env > "${FIXTURE_DUMP:-env.txt}"
pwd -P > cwd.txt
echo "env_dump: wrote the environment to ${FIXTURE_DUMP:-env.txt}; this line goes to the log" >&2
printf '%s\n' '{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"env.1","attributes":{"title":"Environmental Egret"}}]}}'
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
while IFS= read -r line; do :; done
exit 0
