#!/bin/sh
# Leaves children behind: for its first request it starts a background process (with its
# standard descriptors pointed at /dev/null, so no pipe keeps the run alive) and writes its pid
# to leftover.pid in the bundle directory; with the argument "setsid" the child also starts a new
# session (so it is no longer in the extension's process group), and the extension waits until
# it has (until then the child is still in the group, and the host would stop it as part of the
# group rather than as an escaped process). With the argument "daemon" the child is a daemon that
# hides every mark of where it came from: started from a subshell that exits at once (so its
# parent is gone while the extension still runs), in a new session, with an empty environment
# (env -i: no REINDEX_BUNDLE_IDENTIFIER, no REINDEX_HOST_PID). Then it puts one item,
# acknowledges and exits 0 at once, without waiting for end of input.
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"forker","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
mode=$1
if [ "$mode" = "setsid" ] || [ "$mode" = "daemon" ]; then
    if [ "$mode" = "daemon" ]; then
        child=$( (setsid env -i sleep 1000 </dev/null >/dev/null 2>&1 & echo $!) )
    else
        setsid sleep 1000 </dev/null >/dev/null 2>&1 &
        child=$!
    fi
    # Field 6 of /proc/PID/stat is the session: the child's own pid once setsid has run (and, for
    # the daemon, its name is sleep once env has cleared the environment and run it).
    tries=0
    while [ $tries -lt 1000 ] && [ -r "/proc/$child/stat" ]; do
        set -- $(cat "/proc/$child/stat" 2>/dev/null)
        [ "$6" = "$child" ] && { [ "$mode" = "setsid" ] || [ "$(cat "/proc/$child/comm" 2>/dev/null)" = sleep ]; } && break
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
