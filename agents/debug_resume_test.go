package agents_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// TestBreakpointsHoldTheResumedPart: a run held at its model calls, interrupted for approval and
// resumed, is held at the model calls of its resumed part too, by the same debugger: the paused
// events come after the resumed one, and continuing each ends the run completed.
func TestBreakpointsHoldTheResumedPart(t *testing.T) {
	flow, err := agents.Lookup("approval")
	if err != nil {
		t.Fatal(err)
	}
	bp, err := agents.ParseBreakpoint("model")
	if err != nil {
		t.Fatal(err)
	}
	stops := make(chan agents.Stop, 16)
	d := agents.NewDebugger([]agents.Breakpoint{bp}, func(s agents.Stop) { stops <- s })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: flow.DefaultInput, Status: traces.StatusRunning, StartedAt: time.Now()}, flow.Agents)
	paused := make(chan *agents.Pause, 1)
	status := make(chan traces.Status, 1)
	opts := agents.Options{Debugger: d, Paused: func(p *agents.Pause) { paused <- p }}
	go func() { status <- agents.RunFlow(ctx, flow, flow.DefaultInput, opts, rec) }()
	// continueAll continues every hold until the run part ends, and counts the holds.
	continueAll := func() (int, traces.Status) {
		held := 0
		for {
			select {
			case <-stops:
				held++
				if err := d.Continue(agents.Resume{}); err != nil {
					t.Fatal(err)
				}
			case st := <-status:
				return held, st
			case <-time.After(30 * time.Second):
				t.Fatal("the run neither held nor ended within 30s")
			}
		}
	}
	before, st := continueAll()
	if st != traces.StatusInterrupted || before == 0 {
		t.Fatalf("first part: held %d times, ended %s; want held, then interrupted", before, st)
	}
	p := <-paused
	if err := rec.Resume(); err != nil {
		t.Fatal(err)
	}
	go func() { status <- p.Resume(ctx, agents.Decision{Approve: true, Comment: "ok"}, rec) }()
	after, st := continueAll()
	if st != traces.StatusCompleted || after == 0 {
		t.Fatalf("resumed part: held %d times, ended %s; want held at its model calls, then completed", after, st)
	}
	tr := rec.Snapshot()
	resumed := kinds(tr, traces.KindResumed)
	pauses := kinds(tr, traces.KindPaused)
	if len(resumed) != 1 || len(pauses) != before+after || pauses[len(pauses)-1].Seq < resumed[0].Seq {
		t.Fatalf("%d resumed, %d paused events (the last at %d); want 1 resumed and %d paused, the last after it", len(resumed), len(pauses), pauses[len(pauses)-1].Seq, before+after)
	}
}
