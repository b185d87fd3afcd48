#!/usr/bin/env bash
# Runs Baton's whole test suite: gofmt, staticcheck (the version go.mod pins), the client modules' unit
# tests (static/test, Node's own test runner), then go test -race over every package. It first
# installs from Debian what the tests need when it is missing: chromium, which the browser tests
# drive, Node.js, and PostgreSQL's server, of which the PostgreSQL store's tests start a throwaway
# cluster of their own. Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")"

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
# Debian keeps initdb off the PATH, under /usr/lib/postgresql/N/bin.
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "test.sh: installing ${missing[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "test.sh: gofmt, staticcheck" >&2
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "test.sh: gofmt -w these files: $unformatted" >&2
	exit 1
fi
go tool staticcheck ./...

echo "test.sh: node --test static/test" >&2
node --test --test-reporter=spec static/test/*.test.js

# The browser and PostgreSQL tests skip when chromium or PostgreSQL is missing, except here, where
# they were just installed.
echo "test.sh: go test -race" >&2
BATON_REQUIRE_BROWSER=1 BATON_REQUIRE_POSTGRES=1 go test -race -count=1 -timeout 30m ./... "$@"
