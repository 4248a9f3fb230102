#!/usr/bin/env bash
# Installs the system packages the build and tests need, only those missing: SQLite's headers
# (found via pkg-config), libpq's headers (the PostgreSQL store), and the PostgreSQL server with
# its contrib modules (`unaccent`), which the PostgreSQL tests start themselves; libsystemd's
# headers (sd-bus, desktop search) with dbus-daemon and gdbus for its tests; the TypeScript compiler
# (node-typescript), which builds SDKs/typescript and checks its types and the template's build.
# Debian/Ubuntu: apt-get; macOS: the SDK ships SQLite, and Homebrew's libpq/postgresql are used.
set -euo pipefail
if [ "$(uname)" = "Darwin" ]; then exit 0; fi
missing=()
if ! command -v pkg-config >/dev/null 2>&1; then missing+=(pkg-config); fi
if ! [ -f /usr/include/sqlite3.h ]; then missing+=(libsqlite3-dev); fi
if ! [ -f /usr/include/postgresql/libpq-fe.h ]; then missing+=(libpq-dev); fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then missing+=(postgresql); fi
if ! ls /usr/share/postgresql/*/extension/unaccent.control >/dev/null 2>&1; then missing+=(postgresql-contrib); fi
# Desktop search: sd-bus's headers (libsystemd), and for its tests a private bus and a client.
if ! [ -f /usr/include/systemd/sd-bus.h ]; then missing+=(libsystemd-dev); fi
if ! command -v dbus-daemon >/dev/null 2>&1; then missing+=(dbus-daemon); fi
if ! command -v gdbus >/dev/null 2>&1; then missing+=(libglib2.0-bin); fi
if ! command -v busctl >/dev/null 2>&1; then missing+=(systemd); fi
# The TypeScript SDK and template: tsc (Debian's is 4.8; the SDK uses nothing newer).
if ! command -v tsc >/dev/null 2>&1; then missing+=(node-typescript); fi
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing ${missing[*]} (needed to build and to run the SQLite, PostgreSQL, desktop and TypeScript tests)…" >&2
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
