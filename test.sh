#!/usr/bin/env bash
# Runs Baton's whole test suite. It first installs what the tests need when it is missing:
# Debian's chromium, which the browser tests drive. Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v chromium >/dev/null 2>&1; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "test.sh: installing chromium for the browser tests" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi

# The browser tests skip when chromium is missing, except here, where it was just installed.
BATON_REQUIRE_BROWSER=1 go test -race -count=1 -timeout 30m ./... "$@"
