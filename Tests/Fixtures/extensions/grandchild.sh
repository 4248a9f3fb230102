#!/bin/sh
# Starts a background process that inherits stdout and stderr (and so keeps the pipes open) and
# writes its pid to grandchild.pid in the bundle directory. Then, for its first request, it
# acknowledges and exits 0 at end of input — or, with the argument "crash", dies of SIGSEGV
# before acknowledging (so the host cannot rely on end-of-file to notice).
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"parent","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
sleep 1000 &
echo $! > grandchild.pid
echo "grandchild: started sleep as pid $!" >&2
printf '%s\n' '{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"parent.1","attributes":{"title":"Parental Penguin"}}]}}'
if [ "$1" = "crash" ]; then
    echo "grandchild: crashing before acknowledging" >&2
    kill -SEGV $$
fi
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
while IFS= read -r line; do :; done
echo "grandchild: end of input, exiting" >&2
exit 0
