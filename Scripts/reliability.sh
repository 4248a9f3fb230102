#!/usr/bin/env bash
# The reliability suite: every figure of docs/RELIABILITY.md, from one command.
#
#   bash Scripts/reliability.sh [--quick] [--sanitizers]
#
#   (default)     fuzz each target 180 s, the fault-injection matrix and the isolation,
#                 crash-consistency and fuzz-regression tests, 200 host kills, the full disk
#   --quick       fuzz 20 s per target and 20 kills (what CI could afford; the figures in the
#                 doc come from a full run)
#   --sanitizers  also run the whole test suite under ASan and TSan (Scripts/sanitize.sh; long)
#
# Each part's output goes to .reliability/<part>.log; the summary lines (and the matrix as a
# Markdown table) to .reliability/summary.md, which is printed at the end. Exits non-zero when
# any part fails.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzz_seconds=180
kills=200
sanitizers=0
for argument in "$@"; do
    case "$argument" in
        --quick) fuzz_seconds=20; kills=20 ;;
        --sanitizers) sanitizers=1 ;;
        *) echo "usage: bash Scripts/reliability.sh [--quick] [--sanitizers]" >&2; exit 2 ;;
    esac
done

out=.reliability
mkdir -p "$out"
summary="$out/summary.md"
failed=()
started=$(date +%s)

bash Scripts/ensure-system-packages.sh >/dev/null || { echo "reliability: cannot install the system packages" >&2; exit 1; }

step() { echo; echo "== $1"; }

step "build (debug with tests; release reindex for the kill loop)"
swift build --build-tests >"$out/build.log" 2>&1 || { cat "$out/build.log"; echo "reliability: the build failed" >&2; exit 1; }
swift build -c release --product reindex >>"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; echo "reliability: the release build failed" >&2; exit 1; }

step "fuzzing: $fuzz_seconds s per target"
bash Scripts/fuzz.sh "$fuzz_seconds" 2>&1 | tee "$out/fuzz.log" | grep -E "^fuzz:"
fuzz_status=${PIPESTATUS[0]}
[ "$fuzz_status" -eq 0 ] || failed+=("fuzzing")

step "fault-injection matrix, isolation, crash-consistency and fuzz-regression tests"
swift test --skip-build --filter 'FaultInjectionTests|IsolationTests|CrashConsistencyTests|FuzzRegressionTests' >"$out/tests.log" 2>&1
tests_status=$?
grep -E "^fault-matrix: [0-9]+ scenarios|error:|Executed [0-9]+ tests" "$out/tests.log" | tail -8
[ "$tests_status" -eq 0 ] || failed+=("tests")

step "crash consistency: $kills host kills"
python3 Scripts/crash-consistency.py --kills "$kills" --reindex .build/release/reindex >"$out/crash-consistency.log" 2>&1
crash_status=$?
grep -E "^crash-consistency:" "$out/crash-consistency.log"
[ "$crash_status" -eq 0 ] || failed+=("crash consistency")

step "full disk"
python3 Scripts/full-disk.py --reindex .build/release/reindex >"$out/full-disk.log" 2>&1
disk_status=$?
grep -E "^full-disk:" "$out/full-disk.log"
[ "$disk_status" -eq 0 ] || failed+=("full disk")

if [ "$sanitizers" -eq 1 ]; then
    step "sanitizers (the whole suite under ASan and TSan)"
    bash Scripts/sanitize.sh all >"$out/sanitize.log" 2>&1
    sanitize_status=$?
    grep -E "^sanitize:" "$out/sanitize.log"
    [ "$sanitize_status" -eq 0 ] || failed+=("sanitizers")
fi

{
    echo "# Reliability run of $(date -u +%Y-%m-%dT%H:%MZ) ($(git rev-parse --short HEAD 2>/dev/null || echo unknown))"
    echo
    echo "Command: bash Scripts/reliability.sh $*"
    echo
    echo '```'
    grep -hE "^fuzz: [a-z-]+: [0-9]+ executions" "$out/fuzz.log"
    grep -hE "^fault-matrix: [0-9]+ scenarios" "$out/tests.log"
    grep -hE "Executed [0-9]+ tests" "$out/tests.log" | tail -1 | sed -E 's/^[[:space:]]*/tests: /'
    grep -hE "^crash-consistency:" "$out/crash-consistency.log"
    grep -hE "^(full-disk|serve|after freeing space):" "$out/full-disk.log"
    [ "$sanitizers" -eq 1 ] && grep -hE "^sanitize: [a-z]+: [0-9]+ tests" "$out/sanitize.log"
    echo '```'
    echo
    echo "| # | scenario | expected | observed | result |"
    echo "| --- | --- | --- | --- | --- |"
    grep -E "^fault-matrix: \|" "$out/tests.log" | sed -E 's/^fault-matrix: //'
    echo
    echo "Took $(( ($(date +%s) - started) / 60 )) min. Failed parts: ${failed[*]:-none}."
} >"$summary"

step "summary ($summary)"
cat "$summary"
[ ${#failed[@]} -eq 0 ]
