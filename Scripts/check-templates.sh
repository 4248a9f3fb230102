#!/usr/bin/env bash
# Writes a project with each template of 'reindex new' (swift, python, typescript), builds the Swift
# one and its bundle, builds the TypeScript one with tsc, runs the unit test each template ships
# (swift test, python3 -m unittest, node --test), and runs 'reindex validate DIR --run' on all
# three. Exits non-zero on the first
# failure. The Python template needs SDKs/python in this checkout or REINDEX_PYTHON_SDK; without it
# that template is skipped and said so (set REQUIRE_ALL_TEMPLATES=1 to fail instead).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
swift build --product reindex
reindex="$root/.build/debug/reindex"
work="$(mktemp -d "${TMPDIR:-/tmp}/reindex-templates-XXXXXX")"
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME="$work/xdg-data" XDG_STATE_HOME="$work/xdg-state" XDG_DATA_DIRS="$work/xdg-system"

echo "== typescript"
# Built as its README says (npm run build: link the SDK, then tsc), its unit test run, then checked.
"$reindex" new typescript TemplateCheckTS --output "$work/ts"
if ! command -v tsc >/dev/null 2>&1; then echo "error: tsc is not installed (apt-get install node-typescript)" >&2; exit 1; fi
if command -v npm >/dev/null 2>&1; then
    (cd "$work/ts" && npm run --silent build && npm test --silent)
else
    (cd "$work/ts" && node scripts/link-sdk.mjs && tsc -p . && node --test)
fi
"$reindex" validate "$work/ts" --run

echo "== python"
if [[ -d "$root/SDKs/python/reindex_extension" || -n "${REINDEX_PYTHON_SDK:-}" ]]; then
    "$reindex" new python TemplateCheckPy --output "$work/py"
    (cd "$work/py" && python3 -m unittest)
    "$reindex" validate "$work/py" --run
elif [[ -n "${REQUIRE_ALL_TEMPLATES:-}" ]]; then
    echo "error: the Python SDK is not in SDKs/python and REINDEX_PYTHON_SDK is not set" >&2; exit 1
else
    echo "skipped: the Python SDK is not in SDKs/python and REINDEX_PYTHON_SDK is not set"
fi

echo "== swift"
"$reindex" new swift TemplateCheckSwift --output "$work/swift"
(cd "$work/swift" && swift build 2>&1 | tee "$work/swift-build.log")
if grep -q "warning:" "$work/swift-build.log"; then echo "error: the Swift template builds with warnings" >&2; exit 1; fi
(cd "$work/swift" && swift test 2>&1 | tee "$work/swift-test.log")
if grep -q "warning:" "$work/swift-test.log"; then echo "error: the Swift template's tests build with warnings" >&2; exit 1; fi
"$reindex" validate "$work/swift" --run
(cd "$work/swift" && swift package bundle-extension --product TemplateCheckSwift --output "$work/bundles")
"$reindex" validate "$work/bundles/com.example.templatecheckswift.indexer" --run
echo "check-templates: all templates conform"
