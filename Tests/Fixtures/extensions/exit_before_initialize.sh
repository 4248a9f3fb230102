#!/bin/sh
# Fails at startup: complains on stderr and exits with status 1 before answering initialize.
echo "exit_before_initialize: missing configuration file settings.ini" >&2
exit 1
