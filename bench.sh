#!/usr/bin/env bash
# Prints, in one run, the figures that say whether Baton keeps up with a fast run: the recorder's
# own cost per event against a plain run, a no-op observer and an OpenTelemetry-style peer, alone
# and as the server records a run (its events written to a store beside it); trace files written
# and read back (size, time, memory against the live recording); event-to-frame p50 and p99 on
# both live sockets with ten viewers at event 100 and 100,000; a zero-latency 100k-event run
# reaching ten viewers without a drop; and clients that announce a body they never send, without
# the token. Each benchmark interleaves what it compares in one process and reports min / median
# / max over its rounds. Extra arguments go to every `go test` (-count 3, say).
set -euo pipefail
cd "$(dirname "$0")"

go test ./agents -run '^$' -bench 'BenchmarkRecorder$|BenchmarkRecorderCost|BenchmarkTraceFile|BenchmarkTraceMemory' -benchtime 5x "$@"
go test ./server -run '^$' -bench 'EventToFrame/route=(events|live)/(viewers=10|window=2ms)/(at=|viewers=10)' -benchtime 1000x "$@"
go test ./server -run TestMeasureRefusalFlood -v -bench FastRun -benchtime 1x "$@"
