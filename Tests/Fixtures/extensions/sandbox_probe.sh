#!/bin/sh
# Reports what it finds about its own process and what it can reach, as items whose title is the
# finding, for its first request; then acknowledges and exits 0 at end of input.
#   probe.nice    its nice value (field 19 of /proc/PID/stat)
#   probe.io      its I/O scheduling class (ionice)
#   probe.nnp     NoNewPrivs from /proc/PID/status
#   probe.data    "ok" when it can write and read back a file in REINDEX_DATA_DIR
#   probe.read    the first line of PROBE_READ, or "denied"
#   probe.write   "ok" when it can write PROBE_WRITE, or "denied"
#   probe.denied  the first line of PROBE_DENIED, or "denied"
IFS= read -r line || exit 0
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"probe","version":"1"},"capabilities":{}}}'
IFS= read -r line || exit 0
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
set -- $(sed 's/^.*) //' "/proc/$$/stat")
nice=${17}
io=$(ionice -p $$ 2>&1 | tr -d '"')
nnp=$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' "/proc/$$/status")
data=denied
if [ -n "$REINDEX_DATA_DIR" ] && echo probe > "$REINDEX_DATA_DIR/probe.txt" 2>/dev/null && [ "$(cat "$REINDEX_DATA_DIR/probe.txt")" = probe ]; then data=ok; fi
first() { head -n 1 "$1" 2>/dev/null | tr -d '"\\' || true; }
readable=$(first "${PROBE_READ:-/nonexistent}"); [ -n "$readable" ] || readable=denied
written=denied
if [ -n "$PROBE_WRITE" ] && echo written > "$PROBE_WRITE" 2>/dev/null; then written=ok; fi
other=$(first "${PROBE_DENIED:-/nonexistent}"); [ -n "$other" ] || other=denied
echo "probe: nice $nice, io $io, no_new_privs $nnp, data $data, read $readable, write $written, denied $other" >&2
item() { printf '{"uniqueIdentifier":"probe.%s","attributes":{"title":"%s"}}' "$1" "$2"; }
printf '{"jsonrpc":"2.0","method":"index/put","params":{"items":[%s,%s,%s,%s,%s,%s,%s]}}\n' \
    "$(item nice "$nice")" "$(item io "$io")" "$(item nnp "$nnp")" "$(item data "$data")" \
    "$(item read "$readable")" "$(item write "$written")" "$(item denied "$other")"
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
while IFS= read -r line; do :; done
exit 0
