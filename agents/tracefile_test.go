package agents_test

import (
	"context"
	"slices"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
)

// TestReadBackLaysInputsOutAsRecorded: a run's model inputs, each extending the one before,
// share arrays in a recording that grow by doubling; read back from the trace file, the inputs
// share arrays in the same groups (so an outgrown array is left behind at the same calls), not
// in arrays append grows by a quarter, which kept 10% more memory than the recording at 100k
// events.
func TestReadBackLaysInputsOutAsRecorded(t *testing.T) {
	flow := agentstest.Long(3000)
	rec := traces.NewRecording(traces.Run{ID: "r-inputs", Flow: flow.Name}, flow.Agents)
	agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Pace: agents.NewPace(0)}, rec)
	recorded := rec.Snapshot()
	data, err := traces.Marshal(recorded)
	if err != nil {
		t.Fatal(err)
	}
	read, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	want, got := inputArrays(recorded), inputArrays(read)
	if len(want) < 3 {
		t.Fatalf("the recording's inputs use %d arrays: want a run whose inputs outgrow theirs several times", len(want))
	}
	if !slices.EqualFunc(want, got, slices.Equal) {
		t.Errorf("model inputs (by seq) sharing an array, recorded: %v; read back: %v", want, got)
	}
}

// inputArrays groups the seqs of tr's model.started events by the array their inputs share.
func inputArrays(tr traces.Trace) [][]int64 {
	var groups [][]int64
	var last *traces.Message
	for _, e := range tr.Events {
		if e.Kind != traces.KindModelStarted || len(e.Model.Input) == 0 {
			continue
		}
		if first := &e.Model.Input[0]; first != last {
			groups, last = append(groups, nil), first
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], e.Seq)
	}
	return groups
}
