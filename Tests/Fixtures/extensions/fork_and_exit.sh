#!/bin/sh
# Leaves children behind: for its first request it starts a background process (with its
# standard descriptors pointed at /dev/null, so no pipe keeps the run alive) and writes its pid
# to leftover.pid in the bundle directory; with the argument "setsid" the child also starts a new
# session (so it is no longer in the extension's process group), and the extension waits until
# it has (until then the child is still in the group, and the host would stop it as part of the
# group rather than as an escaped process). Then it puts one item, acknowledges and exits 0 at
# once, without waiting for end of input.
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"forker","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
if [ "$1" = "setsid" ]; then
    setsid sleep 1000 </dev/null >/dev/null 2>&1 &
    child=$!
    # Field 6 of /proc/PID/stat is the session: the child's own pid once setsid has run.
    tries=0
    while [ $tries -lt 1000 ] && [ -r "/proc/$child/stat" ]; do
        set -- $(cat "/proc/$child/stat" 2>/dev/null)
        [ "$6" = "$child" ] && break
        sleep 0.01
        tries=$((tries + 1))
    done
else
    sleep 1000 </dev/null >/dev/null 2>&1 &
    child=$!
fi
echo $child > leftover.pid
echo "fork_and_exit: left pid $child behind" >&2
printf '%s\n' '{"jsonrpc":"2.0","method":"index/put","params":{"items":[{"uniqueIdentifier":"fork.1","attributes":{"title":"Forking Ferret"}}]}}'
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
exit 0
