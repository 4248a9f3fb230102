#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and/or ThreadSanitizer.
#
#   Scripts/sanitize.sh [address|thread|all] [--filter F]      (default: all; thread runs first)
#
# Each sanitizer builds into its own scratch path (.build-asan, .build-tsan) and writes every
# report to .sanitize-logs/<sanitizer>/ (ignored by git). The tests start real child processes
# (the `reindex` built beside them, the Swift SDK extensions, the test executable itself), and
# they start them with a stripped environment (only PATH, HOME, XDG_*, LANG; the host passes
# extensions an allowlist too), so ASAN_OPTIONS/TSAN_OPTIONS never reach them and their reports
# would go to a stderr the tests capture into scratch files and delete. So the options, with an
# absolute log_path, are also linked into every sanitized executable as __asan_default_options /
# __tsan_default_options (a tiny C object passed with -Xlinker; nothing in Sources/ changes).
#
# The run fails (non-zero) when the build fails, when XCTest reports a failure, or when any
# sanitizer report appears, in the console output or in a child's log file, even if XCTest passed.
# At the end it prints one line per sanitizer:
#   sanitize: thread: <N> tests, <F> failures, <R> sanitizer reports
#
# Knobs (environment):
#   SANITIZE_LEAKS=0|1   LeakSanitizer with ASan (default 1; see the comment at asan_options)
#   SANITIZE_HALT=0|1    TSan halt_on_error (default 0: report every race and fail at the end;
#                        1 stops the test process at its first race)
#   SANITIZE_SHOW=N      lines of reports echoed to the console at the end (default 300)
#   REINDEX_SKIP_SLOW_TESTS is passed through untouched (no test reads it today).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

usage() { echo "usage: Scripts/sanitize.sh [address|thread|all] [--filter F]" >&2; exit 2; }

which_san=all
filter=()
while [ $# -gt 0 ]; do
    case "$1" in
        address|thread|all) which_san="$1" ;;
        --filter) [ $# -ge 2 ] || usage; filter=(--filter "$2"); shift ;;
        --filter=*) filter=(--filter "${1#--filter=}") ;;
        -h|--help) usage ;;
        *) echo "sanitize: unknown argument: $1" >&2; usage ;;
    esac
    shift
done
case "$which_san" in
    all) sanitizers=(thread address) ;;
    *) sanitizers=("$which_san") ;;
esac

# Sanitizer options are ':'-separated and cannot quote a path with a ':' or a blank in it.
case "$ROOT" in *[[:space:]:]*) echo "sanitize: the package path must not contain blanks or ':' ($ROOT)" >&2; exit 2 ;; esac

bash Scripts/ensure-system-packages.sh || exit 1

swift_bin="$(command -v swift)" || { echo "sanitize: swift not found" >&2; exit 1; }
toolchain_bin="$(dirname "$(readlink -f "$swift_bin")")"
cc="$toolchain_bin/clang"; [ -x "$cc" ] || cc="$(command -v clang || command -v cc)"
symbolizer="$toolchain_bin/llvm-symbolizer"; [ -x "$symbolizer" ] || symbolizer="$(command -v llvm-symbolizer || true)"

LOGS="$ROOT/.sanitize-logs"
mkdir -p "$LOGS"
# Anything that says a sanitizer found something (or died): the per-report headers and summaries.
REPORT_RE='(WARNING|ERROR|FATAL): *[A-Za-z]*Sanitizer|SUMMARY: *[A-Za-z]*Sanitizer|ThreadSanitizer: reported [0-9]+ warnings|Sanitizer CHECK failed|Sanitizer has encountered a fatal error'
# One per report: ASan/LSan "==PID==ERROR: …Sanitizer", TSan "WARNING: ThreadSanitizer", fatal errors.
HEADER_RE='(WARNING|ERROR|FATAL): *[A-Za-z]*Sanitizer|Sanitizer has encountered a fatal error'

asan_options() { # $1: log prefix
    # detect_leaks: LeakSanitizer (part of the ASan runtime) checks every sanitized process at
    # exit. The toolchain's own leaks are suppressed (see __lsan_default_suppressions below);
    # where a debugger is attached LSan cannot run and says so (counted as skipped, not a report).
    local o="log_path=$1:detect_leaks=${SANITIZE_LEAKS:-1}:abort_on_error=0:strict_string_checks=1"
    o="$o:detect_stack_use_after_return=1"
    [ -n "$symbolizer" ] && o="$o:external_symbolizer_path=$symbolizer"
    echo "$o"
}
tsan_options() { # $1: log prefix
    # atexit_sleep_ms: TSan sleeps 1 s at exit whenever other threads are alive, which is every
    # `reindex` and every SDK extension (decoder, Dispatch threads): each sanitized child took a
    # second longer to exit and the whole suite ~100 s longer. 50 ms is plenty.
    local o="log_path=$1:halt_on_error=${SANITIZE_HALT:-0}:second_deadlock_stack=1:history_size=4:atexit_sleep_ms=50"
    [ -n "$symbolizer" ] && o="$o:external_symbolizer_path=$symbolizer"
    echo "$o"
}

summaries=()
notes=()
status=0

run_one() { # $1: address|thread
    local san="$1" short scratch
    case "$san" in
        address) short=asan; scratch=.build-asan ;;
        thread) short=tsan; scratch=.build-tsan ;;
    esac
    local logdir="$LOGS/$san"
    rm -rf "$logdir"; mkdir -p "$logdir"
    local console="$logdir/console.log"
    local opts
    if [ "$san" = address ]; then opts="$(asan_options "$logdir/$short")"; else opts="$(tsan_options "$logdir/$short")"; fi

    # The defaults linked into every sanitized executable (children included). Named by its
    # content so a change of options changes the link line and SwiftPM relinks.
    local defaults_src="$logdir/defaults.c"
    cat > "$defaults_src" <<EOF
/* Generated by Scripts/sanitize.sh: default $san options for every sanitized process. */
const char *__${short}_default_options(void) { return "$opts"; }
EOF
    if [ "$san" = address ]; then
        # Leaks of the toolchain, not of this package (used when leaks are checked):
        # swift-foundation's FileManager.contents(atPath:)/Data(contentsOf:) never frees its
        # 4 KiB buffer when the file is empty (the tests read many empty stderr files), and
        # XCTest keeps its test tables until exit.
        cat >> "$defaults_src" <<'EOF'
const char *__lsan_default_options(void) { return "print_suppressions=0"; }
const char *__lsan_default_suppressions(void) {
    return "leak:readBytesFromFile\n"
           "leak:libXCTest.so\n";
}
EOF
    fi
    local hash; hash="$(cksum < "$defaults_src" | cut -d' ' -f1)"
    mkdir -p "$ROOT/$scratch/sanitize-defaults"
    local defaults_obj="$ROOT/$scratch/sanitize-defaults/$short-defaults-$hash.o"
    if [ ! -f "$defaults_obj" ]; then
        "$cc" -c -O1 -fPIC "$defaults_src" -o "$defaults_obj" || { echo "sanitize: cannot compile $defaults_src" >&2; return 1; }
    fi
    local swift_flags=(--sanitize="$san" --scratch-path "$scratch" -Xlinker "$defaults_obj")

    echo "== sanitize: $san: build ($scratch)"
    local t0 t1 t2; t0=$(date +%s)
    swift build --build-tests "${swift_flags[@]}" 2>&1 | tee "$logdir/build.log" | grep -Ev "warning: Cannot export local symbol '__asan_"
    local build_rc=${PIPESTATUS[0]}
    t1=$(date +%s)
    local test_rc=0
    if [ "$build_rc" -eq 0 ]; then
        echo "== sanitize: $san: test${filter[*]:+ (${filter[*]})}"
        if [ "$san" = address ]; then
            ASAN_OPTIONS="$opts${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
                swift test --skip-build "${swift_flags[@]}" "${filter[@]}" 2>&1 | tee "$console"
        else
            TSAN_OPTIONS="$opts${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
                swift test --skip-build "${swift_flags[@]}" "${filter[@]}" 2>&1 | tee "$console"
        fi
        test_rc=${PIPESTATUS[0]}
    else
        echo "sanitize: $san: the build failed (see $logdir/build.log)" >&2
        : > "$console"
    fi
    t2=$(date +%s)

    # Tests and failures: XCTest's overall line (the last "Executed …").
    local summary tests failures
    summary="$(grep -E "Executed [0-9]+ tests?, with [0-9]+ failures?" "$console" | tail -1)"
    tests="$(echo "$summary" | sed -nE 's/.*Executed ([0-9]+) tests?.*/\1/p')"
    failures="$(echo "$summary" | sed -nE 's/.*with ([0-9]+) failures?.*/\1/p')"
    : "${tests:=0}" "${failures:=0}"

    # Reports: headers in the console (a process that ignored log_path) and in every log file.
    # LeakSanitizer cannot run in a process a debugger is attached to (the gdb tests attach to
    # an SDK extension); it says so with a "fatal error" that is a skipped check, not a finding.
    local f files=() ptrace_skips=0
    for f in "$logdir/$short".*; do [ -f "$f" ] && files+=("$f"); done
    all_logs() {
        local g
        for g in "$console" "${files[@]}"; do
            if grep -q "LeakSanitizer does not work under ptrace" "$g"; then
                grep -v -e "LeakSanitizer has encountered a fatal error" -e "HINT: " "$g"
            else
                cat "$g"
            fi
        done
    }
    if [ ${#files[@]} -gt 0 ]; then
        ptrace_skips=$(cat "${files[@]}" | grep -c "LeakSanitizer does not work under ptrace")
    fi
    local reports
    reports=$(all_logs | grep -Ec "$HEADER_RE")
    # Anything report-like without a header still counts as one report.
    if [ "$reports" -eq 0 ] && all_logs | grep -Eq "$REPORT_RE"; then reports=1; fi

    if [ ${#files[@]} -gt 0 ]; then
        echo "== sanitize: $san: sanitizer output of ${#files[@]} process(es) (log files in ${logdir#$ROOT/}/):"
        local shown=0 max=${SANITIZE_SHOW:-300}
        for f in "${files[@]}"; do
            [ "$shown" -ge "$max" ] && { echo "… (more in ${logdir#$ROOT/}/)"; break; }
            echo "---- ${f#$ROOT/}"
            head -n $((max - shown)) "$f"
            shown=$((shown + $(wc -l < "$f")))
        done
        # Deduplicated one-line summaries (same kind at the same place).
        echo "---- distinct SUMMARY lines:"
        cat "${files[@]}" | grep -E "^SUMMARY: " | sort | uniq -c | sort -rn
    fi

    summaries+=("sanitize: $san: $tests tests, $failures failures, $reports sanitizer reports")
    local note="sanitize: $san: elapsed build $((t1 - t0))s, test $((t2 - t1))s, total $(( (t2 - t0) / 60 ))m$(( (t2 - t0) % 60 ))s"
    if [ "$build_rc" -ne 0 ]; then note="$note; BUILD FAILED"; fi
    if [ "$build_rc" -eq 0 ] && [ -z "$summary" ]; then note="$note; XCTest printed no summary (the test process died?)"; fi
    if [ "$build_rc" -eq 0 ] && [ "$test_rc" -ne 0 ]; then note="$note; swift test exited $test_rc"; fi
    if [ "$ptrace_skips" -gt 0 ]; then note="$note; $ptrace_skips leak check(s) skipped (process under a debugger)"; fi
    notes+=("$note")

    if [ "$build_rc" -ne 0 ] || [ "$test_rc" -ne 0 ] || [ "$failures" -ne 0 ] || [ "$reports" -ne 0 ] || [ -z "$summary" ] || [ "$tests" -eq 0 ]; then
        return 1
    fi
    return 0
}

for san in "${sanitizers[@]}"; do
    run_one "$san" || status=1
done

echo "== sanitize: summary"
for line in "${notes[@]}"; do echo "$line"; done
for line in "${summaries[@]}"; do echo "$line"; done
exit $status
