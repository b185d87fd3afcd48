package agents_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkReplay compares a run of the supervisor flow on the scripted model with a replay of
// its trace. Each iteration runs both, one after the other, so that the noise of a shared machine
// falls on both alike; it reports each one's time per run and replay/scripted, the ratio.
func BenchmarkReplay(b *testing.B) {
	flow, err := agents.Lookup("supervisor")
	if err != nil {
		b.Fatal(err)
	}
	runOnce := func(m *agents.Model) traces.Trace {
		rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name}, flow.Agents)
		if st := agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Model: m}, rec); st != traces.StatusCompleted {
			b.Fatalf("run ended %s", st)
		}
		return rec.Snapshot()
	}
	scripted := agents.Scripted()
	replay, err := agents.ReplayOf(runOnce(scripted))
	if err != nil {
		b.Fatal(err)
	}
	var took [2]time.Duration
	for b.Loop() {
		for i, m := range []*agents.Model{scripted, replay} {
			start := time.Now()
			runOnce(m)
			took[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(took[0].Microseconds())/float64(b.N), "µs/scripted-run")
	b.ReportMetric(float64(took[1].Microseconds())/float64(b.N), "µs/replay-run")
	b.ReportMetric(float64(took[1])/float64(took[0]), "replay/scripted")
}
