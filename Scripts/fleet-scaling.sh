#!/usr/bin/env bash
# Fleet scaling on one PostgreSQL index: N bundles whose extension waits HOLD seconds per request
# (a connector waiting on a remote API), each queued once (a new bundle's reindexAll); the time
# until every request is done with 1 worker and with W workers (each `reindex serve
# --concurrency 1`), and a check that no request ran twice.
# Usage: Scripts/fleet-scaling.sh INDEX [N=100] [W=4] [HOLD=0.2]   (INDEX: a PostgreSQL connection string)
set -euo pipefail
cd "$(dirname "$0")/.."
INDEX="$1"; N="${2:-100}"; W="${3:-4}"; HOLD="${4:-0.2}"
BIN="${REINDEX_BIN:-.build/debug/reindex}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for n in $(seq 1 "$N"); do
    d="$work/ext/b$n"; mkdir -p "$d"
    cp Tests/Fixtures/extensions/serve_recorder.py Tests/Fixtures/extensions/fixturelib.py "$d/"
    chmod 755 "$d/serve_recorder.py"
    printf '{"manifestVersion":1,"bundleIdentifier":"com.example.fleet%d","executable":"serve_recorder.py","sandbox":false,"environment":{"FIXTURE_HOLD":"%s","FIXTURE_COUNT":"2"}}\n' "$n" "$HOLD" > "$d/manifest.json"
done
measure() {
    local workers="$1" schema="fleet_$1_$$" pids=() start end
    export REINDEX_PG_SCHEMA="$schema" REINDEX_EXTENSIONS_PATH="$work/ext" REINDEX_INDEX="$INDEX"
    export XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data"
    start=$(date +%s.%N)
    for _ in $(seq 1 "$workers"); do "$BIN" serve --concurrency 1 --rescan 3600 2>>"$work/serve.log" & pids+=($!); done
    # Polled with psql, not `reindex status`, so the measurement does not compete for the CPU.
    local conn; conn="$(python3 -c 'import sys; print(sys.argv[1])' "$INDEX")"
    until [ "$(psql -X -q -t -A -d "$conn" -c "SELECT count(*) FILTER (WHERE state = 'done') = $N AND count(*) = $N FROM \"$schema\".requests" 2>/dev/null)" = t ]; do sleep 0.1; done
    end=$(date +%s.%N)
    kill -TERM "${pids[@]}"; wait "${pids[@]}" || true
    twice=$(psql -X -q -t -A -d "$conn" -c "SELECT count(*) FROM (SELECT request_id FROM \"$schema\".runs WHERE outcome = 'acknowledged' GROUP BY request_id HAVING count(*) > 1) t" 2>/dev/null || echo "?")
    echo "$workers worker(s): $N requests in $(python3 -c "print(round($end - $start, 2))") s; requests run twice: $twice"
    python3 -c "print($end - $start)" > "$work/t$workers"
}
measure 1
measure "$W"
python3 -c "a=float(open('$work/t1').read()); b=float(open('$work/t$W').read()); print('speed-up with $W workers: %.2fx' % (a / b))"
