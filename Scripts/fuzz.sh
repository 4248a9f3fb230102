#!/usr/bin/env bash
# Fuzzes the protocol library (Sources/ReindexProtocol) and the query language
# (Sources/ReindexStore/Query) with libFuzzer.
#
#   Scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 60)
#
# Builds four fuzz targets into .fuzz/bin (AddressSanitizer + libFuzzer; the protocol targets
# get the library and the shared harness Tests/ReindexProtocolTests/FuzzHarness.swift, the query
# target the query language's sources, ReindexSystem and Tests/ReindexStoreTests/
# QueryFuzzHarness.swift), then runs
# each for SECONDS_PER_TARGET seconds on its working corpus .fuzz/corpus/<target> (seeded from
# Fuzz/corpus/<target>; what libFuzzer adds stays there for the next run). A crashing input is
# kept in .fuzz/crashes/<target>/. Installs nothing; needs swiftc and ld.lld (as in the Swift
# toolchain for Linux). Ends with one line per target:
#
#   fuzz: <target>: <N> executions in <S> s, <K> crashes
#
# and exits non-zero if any target crashed (or could not be built or run).
set -uo pipefail

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: Scripts/fuzz.sh [SECONDS_PER_TARGET]   (a whole number of seconds, default 60)" >&2
    exit 2
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# target name : directory under Fuzz/ : -max_len
targets=(
    "line-decoder:LineDecoder:65536"
    "manifest:Manifest:16384"
    "item-validator:ItemValidator:16384"
    "query:Query:20000"
)

swiftc="$(command -v swiftc || true)"
if [ -z "$swiftc" ]; then
    echo "fuzz: error: swiftc is not on PATH" >&2
    exit 2
fi
if ! command -v ld.lld >/dev/null 2>&1 && [ ! -x "$(dirname "$swiftc")/ld.lld" ]; then
    echo "fuzz: error: ld.lld (LLVM's linker) was not found on PATH or next to $swiftc." >&2
    echo "fuzz: error: swiftc -sanitize=fuzzer links only with -use-ld=lld on Linux; use a Swift toolchain that ships lld, or install lld." >&2
    exit 2
fi

out=.fuzz
obj="$out/obj"
mkdir -p "$out/bin" "$obj" "$out/logs"

common=(-O -wmo -parse-as-library -swift-version 6)
harness=Tests/ReindexProtocolTests/FuzzHarness.swift
library_sources=(Sources/ReindexProtocol/*.swift)

# True when $1 is missing or older than any of the remaining files.
stale() {
    local target="$1"; shift
    [ -e "$target" ] || return 0
    local f
    for f in "$@"; do [ "$f" -nt "$target" ] && return 0; done
    return 1
}

# Inputs libFuzzer saved for a failure (crash, timeout, out-of-memory, leak) in directory $1.
count_failures() {
    find "$1" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l
}

build_start=$(date +%s)
if stale "$obj/ReindexProtocol.o" "${library_sources[@]}" "$0"; then
    echo "fuzz: building ReindexProtocol (with coverage for libFuzzer and AddressSanitizer)"
    if ! swiftc "${common[@]}" -sanitize=fuzzer,address -module-name ReindexProtocol \
        -emit-module -emit-module-path "$obj/ReindexProtocol.swiftmodule" \
        -c "${library_sources[@]}" -o "$obj/ReindexProtocol.o"; then
        echo "fuzz: error: building ReindexProtocol failed" >&2
        exit 2
    fi
fi
# The query language stands on ReindexSystem (a C part and Swift) and ReindexProtocol; its own
# sources get libFuzzer's coverage, the harness is compiled with them (one module, as the tests
# see it through @testable import).
system_sources=(Sources/ReindexSystem/*.swift)
query_sources=(Sources/ReindexStore/Query/QueryParser.swift Sources/ReindexStore/Query/CheckedQuery.swift Sources/ReindexStore/Query/QueryPlan.swift Sources/ReindexStore/Query/Folding.swift)
query_harness=Tests/ReindexStoreTests/QueryFuzzHarness.swift
if stale "$obj/ReindexSystem.o" "${system_sources[@]}" Sources/CReindexSystem/system.c Sources/CReindexSystem/include/CReindexSystem.h "$0"; then
    echo "fuzz: building ReindexSystem (for the query target)"
    mkdir -p "$obj/CReindexSystem"
    printf 'module CReindexSystem {\n    umbrella header "%s"\n    export *\n}\n' "$root/Sources/CReindexSystem/include/CReindexSystem.h" \
        >"$obj/CReindexSystem/module.modulemap"
    if ! "$(dirname "$swiftc")/clang" -O2 -fPIC -fsanitize=address -I Sources/CReindexSystem/include \
            -c Sources/CReindexSystem/system.c -o "$obj/CReindexSystemC.o" \
        || ! swiftc "${common[@]}" -package-name reindex -sanitize=address -module-name ReindexSystem -I "$obj/CReindexSystem" \
            -emit-module -emit-module-path "$obj/ReindexSystem.swiftmodule" \
            -c "${system_sources[@]}" -o "$obj/ReindexSystem.o"; then
        echo "fuzz: error: building ReindexSystem failed" >&2
        exit 2
    fi
fi
for spec in "${targets[@]}"; do
    IFS=: read -r name dir _ <<<"$spec"
    binary="$out/bin/$name"
    if [ "$name" = query ]; then
        if stale "$binary" "Fuzz/$dir/main.swift" "$query_harness" "${query_sources[@]}" "$obj/ReindexSystem.o" "$obj/ReindexProtocol.o" "$0"; then
            echo "fuzz: building $name"
            if ! swiftc "${common[@]}" -package-name reindex -D QUERY_FUZZ_TARGET -sanitize=fuzzer,address -warnings-as-errors -I "$obj" -I "$obj/CReindexSystem" -module-name ReindexStore \
                    -c "Fuzz/$dir/main.swift" "${query_sources[@]}" "$query_harness" -o "$obj/$name.o" \
                || ! swiftc -sanitize=fuzzer,address -use-ld=lld "$obj/$name.o" "$obj/ReindexSystem.o" "$obj/CReindexSystemC.o" \
                    "$obj/ReindexProtocol.o" -o "$binary"; then
                echo "fuzz: error: building $name failed" >&2
                exit 2
            fi
        fi
        continue
    fi
    if stale "$binary" "Fuzz/$dir/main.swift" "$harness" "$obj/ReindexProtocol.o" "$0"; then
        echo "fuzz: building $name"
        # The harness gets AddressSanitizer but no coverage: only the library's own code
        # should guide libFuzzer (and the harness runs faster without the counters).
        if ! swiftc "${common[@]}" -sanitize=address -warnings-as-errors -I "$obj" -module-name "Fuzz$dir" \
                -c "Fuzz/$dir/main.swift" "$harness" -o "$obj/$name.o" \
            || ! swiftc -sanitize=fuzzer,address -use-ld=lld "$obj/$name.o" "$obj/ReindexProtocol.o" -o "$binary"; then
            echo "fuzz: error: building $name failed" >&2
            exit 2
        fi
    fi
done
echo "fuzz: built in $(( $(date +%s) - build_start )) s"

summaries=()
failed=0
for spec in "${targets[@]}"; do
    IFS=: read -r name dir max_len <<<"$spec"
    corpus="$out/corpus/$name"
    crashes="$out/crashes/$name"
    log="$out/logs/$name.log"
    mkdir -p "$corpus" "$crashes"
    cp -n Fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null || true
    before=$(count_failures "$crashes")

    dict=Fuzz/protocol.dict
    [ "$name" = query ] && dict=Fuzz/query.dict
    echo "fuzz: running $name for $seconds s (log: $log)"
    start=$(date +%s)
    # No leak checks (the Swift runtime's caches live until exit), and no Swift backtracer (its
    # memory reader trips AddressSanitizer; libFuzzer prints the stack of a trap itself).
    # -timeout and -rss_limit_mb make hangs and runaway memory failures too.
    ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" SWIFT_BACKTRACE=enable=no \
        "$out/bin/$name" "$corpus" \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=25 -rss_limit_mb=2048 \
        -dict="$dict" -artifact_prefix="$crashes/" -print_final_stats=1 \
        >"$log" 2>&1
    status=$?
    elapsed=$(( $(date +%s) - start ))

    runs="" secs=""
    if done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1); then
        runs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1/' <<<"$done_line")
        secs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\2/' <<<"$done_line")
    fi
    if [ -z "$runs" ]; then
        # No "Done" line: libFuzzer stopped on a failure; its final stats still count the runs.
        runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
        secs=$elapsed
    fi
    after=$(count_failures "$crashes")
    found=$(( after - before ))
    if [ "$status" -ne 0 ] && [ "$found" -eq 0 ]; then
        found=1  # failed without saving an input (should not happen): still a failure
    fi
    if [ -z "$runs" ]; then
        echo "fuzz: error: $name did not run; the end of its log:" >&2
        tail -n 20 "$log" >&2
        runs=0
        failed=1
    fi
    if [ "$found" -gt 0 ]; then
        failed=1
        echo "fuzz: $name FAILED; the end of its log:" >&2
        grep -E 'Fatal error|ERROR: (libFuzzer|AddressSanitizer)|SUMMARY' "$log" | head -n 5 >&2
        tail -n 25 "$log" >&2
        echo "fuzz: inputs kept in $crashes/; reproduce with: $out/bin/$name <input>" >&2
        echo "fuzz: then fix, copy the input to Tests/Fixtures/fuzz-regressions/$name/ and run FuzzRegressionTests" >&2
    fi
    summaries+=("fuzz: $name: $runs executions in $secs s, $found crashes")
done

printf '%s\n' "${summaries[@]}"
exit "$failed"
