#!/usr/bin/env bash
# Checks that SDKs/typescript/dist — the compiled SDK, committed so that extensions run without a
# TypeScript compiler — is exactly what `tsc` makes of SDKs/typescript/src: compiles into a
# temporary directory and compares. CI runs it. After a change to src/, rebuild with
# `tsc -p SDKs/typescript` (or `npm run build` there) and commit dist/ with it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sdk="$root/SDKs/typescript"
if ! command -v tsc >/dev/null 2>&1; then
    echo "error: tsc is not installed (Debian: apt-get install node-typescript; Scripts/ensure-system-packages.sh does it)" >&2
    exit 1
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/reindex-ts-sdk-XXXXXX")"
trap 'rm -rf "$work"' EXIT
tsc -p "$sdk" --outDir "$work/dist"
if ! diff -r "$sdk/dist" "$work/dist" >"$work/diff"; then
    head -60 "$work/diff" >&2
    echo "error: SDKs/typescript/dist is not what tsc $(tsc --version | sed 's/Version //') makes of src/: run 'tsc -p SDKs/typescript' and commit dist/" >&2
    exit 1
fi
echo "check-typescript-sdk: dist/ matches src/ (tsc $(tsc --version | sed 's/Version //'))"
