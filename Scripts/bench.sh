#!/usr/bin/env bash
# Builds in release mode and runs the benchmark; arguments go to reindex-bench
# (e.g. --quick, --items 100000,1000000, --rounds 3, --json FILE, --only throughput,ack,search,discovery,sandbox).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-system-packages.sh
swift build -c release
exec .build/release/reindex-bench "$@"
