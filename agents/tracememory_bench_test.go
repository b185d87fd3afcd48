package agents_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/agents/agentstest"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkTraceMemory compares what a run keeps in memory recorded live with what the same run
// keeps read back from its trace file, at about 1k, 10k and 100k events: the live heap after a
// collection, the run recorded and then its file read, in turns within one process, each
// iteration a round. It reports the ratio imported/recorded (min / median / max over the rounds)
// and the median MB of each.
//
//	go test ./agents -run x -bench BenchmarkTraceMemory -benchtime 3x
func BenchmarkTraceMemory(b *testing.B) {
	for _, ticks := range []int{300, 3000, 30000} {
		flow := agentstest.Long(ticks)
		b.Run(fmt.Sprintf("ticks=%d", ticks), func(b *testing.B) {
			var ratio, recorded, imported []float64
			for b.Loop() {
				before := heapInUse()
				rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name, StartedAt: time.Now()}, flow.Agents, 0)
				drainLong(b, flow, agents.NewPace(0), rec)
				kept := heapInUse() - before
				data, err := traces.Marshal(rec.Snapshot())
				if err != nil {
					b.Fatal(err)
				}
				rec = nil // only the file stays
				before = heapInUse()
				tr, err := traces.Unmarshal(data)
				if err != nil {
					b.Fatal(err)
				}
				read := heapInUse() - before
				runtime.KeepAlive(tr)
				runtime.KeepAlive(data)
				ratio = append(ratio, float64(read)/float64(kept))
				recorded, imported = append(recorded, float64(kept)/1e6), append(imported, float64(read)/1e6)
			}
			reportSpread(b, "imported/recorded", ratio)
			b.ReportMetric(median(recorded), "recorded-MB")
			b.ReportMetric(median(imported), "imported-MB")
		})
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	slices.Sort(s)
	return s[len(s)/2]
}
