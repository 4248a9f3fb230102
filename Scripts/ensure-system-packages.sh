#!/usr/bin/env bash
# Installs the one system package the build needs (SQLite's headers, found via pkg-config),
# only when it is missing. Debian/Ubuntu: apt-get; macOS: the SDK ships SQLite.
set -euo pipefail
if [ "$(uname)" = "Darwin" ]; then exit 0; fi
if pkg-config --exists sqlite3 2>/dev/null && [ -f /usr/include/sqlite3.h ]; then exit 0; fi
echo "installing libsqlite3-dev and pkg-config (needed to build against the system SQLite)…" >&2
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libsqlite3-dev pkg-config >/dev/null
