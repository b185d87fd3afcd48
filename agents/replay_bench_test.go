package agents_test

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkReplay compares a recorded run of the supervisor flow with its replay, sub-benchmarks
// interleaved in one process: what answering from a trace costs next to the scripted model.
func BenchmarkReplay(b *testing.B) {
	flow, err := agents.Lookup("supervisor")
	if err != nil {
		b.Fatal(err)
	}
	runOnce := func(b *testing.B, m *agents.Model) traces.Trace {
		rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name}, flow.Agents, 0)
		if st := agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Model: m}, rec); st != traces.StatusCompleted {
			b.Fatalf("run ended %s", st)
		}
		return rec.Snapshot()
	}
	replay, err := agents.ReplayOf(runOnce(b, agents.Scripted()))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    *agents.Model
	}{{"scripted", agents.Scripted()}, {"replay", replay}} {
		b.Run("model="+c.name, func(b *testing.B) {
			for b.Loop() {
				runOnce(b, c.m)
			}
		})
	}
}
