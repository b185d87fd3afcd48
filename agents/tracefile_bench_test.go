package agents_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
)

// The trace file's benchmarks: long runs of agentstest.Long of about 1k, 10k and 100k events (one
// agent whose every model call is fed the whole history so far), recorded for real.

// recordLong records a run of agentstest.Long(ticks) at zero pace and returns its recording. The
// flow is built here and unreachable once it returns, so that a caller measuring the heap
// counts what the recording keeps of it (the tool calls' arguments, which the scripted model
// hands out as its script holds them) as the recording's, as it would count a real model's.
func recordLong(b *testing.B, ticks int) *traces.Recording {
	b.Helper()
	flow := agentstest.Long(ticks)
	rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name, StartedAt: time.Now()}, flow.Agents)
	drainLong(b, flow, agents.NewPace(0), rec)
	return rec
}

// BenchmarkTraceFile measures writing a recorded run to a trace file (export) and reading that
// back (import), interleaved, with the file's size.
func BenchmarkTraceFile(b *testing.B) {
	for _, ticks := range []int{300, 3000, 30000} {
		tr := recordLong(b, ticks).Snapshot()
		b.Run(fmt.Sprintf("events=%d", len(tr.Events)), func(b *testing.B) { benchmarkTraceFile(b, tr) })
	}
}

func benchmarkTraceFile(b *testing.B, tr traces.Trace) {
	var export, imports, exportCPU, importCPU []float64
	var size int
	for b.Loop() {
		start, cpu := time.Now(), cpuTime()
		data, err := traces.Marshal(tr)
		if err != nil {
			b.Fatal(err)
		}
		export, exportCPU = append(export, time.Since(start).Seconds()), append(exportCPU, cpuTime()-cpu)
		start, cpu = time.Now(), cpuTime()
		if _, err := traces.Unmarshal(data); err != nil {
			b.Fatal(err)
		}
		imports, importCPU = append(imports, time.Since(start).Seconds()), append(importCPU, cpuTime()-cpu)
		size = len(data)
	}
	reportSpread(b, "export-s", export)
	reportSpread(b, "import-s", imports)
	// CPU seconds of the whole process (the collector's included): what a loaded machine's
	// waiting adds to the times above does not count here.
	reportSpread(b, "export-cpu-s", exportCPU)
	reportSpread(b, "import-cpu-s", importCPU)
	b.ReportMetric(float64(size)/1e6, "MB")
	b.ReportMetric(float64(size)/float64(len(tr.Events)), "bytes/event")
}

// BenchmarkTraceMemory compares what a run keeps in memory recorded live with what the same run
// keeps read back: from its trace file (traces.Unmarshal), and row by row as a store reads it
// (traces.EventDecoder). Each is the live heap after a collection; the run is recorded, then read
// back both ways, in turns within one process, each iteration a round. The recorded side is
// everything the recording keeps reachable, whoever allocated it (see recordLong); a side read
// back everything its events keep. It reports the ratios imported/recorded and rows/recorded
// (min / median / max over the rounds) and the median MB of each.
//
//	go test ./agents -run '^$' -bench BenchmarkTraceMemory -benchtime 3x
func BenchmarkTraceMemory(b *testing.B) {
	for _, ticks := range []int{300, 3000, 30000} {
		b.Run(fmt.Sprintf("ticks=%d", ticks), func(b *testing.B) {
			var fileRatio, rowsRatio, recorded, imported, rowsRead []float64
			for b.Loop() {
				before := heapInUse()
				rec := recordLong(b, ticks)
				kept := heapInUse() - before
				tr := rec.Snapshot()
				data, err := traces.Marshal(tr)
				if err != nil {
					b.Fatal(err)
				}
				rows := encodeRows(b, tr.Events)
				rec, tr = nil, traces.Trace{} // only the file and the rows stay
				before = heapInUse()
				read, err := traces.Unmarshal(data)
				if err != nil {
					b.Fatal(err)
				}
				fromFile := heapInUse() - before
				runtime.KeepAlive(read)
				read = traces.Trace{}
				before = heapInUse()
				events := decodeRows(b, rows)
				fromRows := heapInUse() - before
				runtime.KeepAlive(events)
				runtime.KeepAlive(data)
				runtime.KeepAlive(rows)
				fileRatio, rowsRatio = append(fileRatio, float64(fromFile)/float64(kept)), append(rowsRatio, float64(fromRows)/float64(kept))
				recorded = append(recorded, float64(kept)/1e6)
				imported, rowsRead = append(imported, float64(fromFile)/1e6), append(rowsRead, float64(fromRows)/1e6)
			}
			reportSpread(b, "imported/recorded", fileRatio)
			reportSpread(b, "rows/recorded", rowsRatio)
			b.ReportMetric(median(recorded), "recorded-MB")
			b.ReportMetric(median(imported), "imported-MB")
			b.ReportMetric(median(rowsRead), "rows-MB")
		})
	}
}

// encodeRows encodes events one row each, as a store keeps them.
func encodeRows(b *testing.B, events []traces.Event) [][]byte {
	var enc traces.EventEncoder
	rows := make([][]byte, len(events))
	for i, e := range events {
		var err error
		if rows[i], err = enc.AppendEvent(nil, e); err != nil {
			b.Fatal(err)
		}
	}
	return rows
}

// decodeRows reads rows back as a store reads a run.
func decodeRows(b *testing.B, rows [][]byte) []traces.Event {
	dec := traces.NewEventDecoder()
	events := make([]traces.Event, len(rows))
	for i, row := range rows {
		var err error
		if events[i], err = dec.Decode(row); err != nil {
			b.Fatal(err)
		}
	}
	return events
}

// heapInUse is the size of the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
