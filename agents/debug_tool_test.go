package agents_test

import (
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// TestBreakpointToolResultGiven: at a tool breakpoint, held before multiply runs (the paused
// event carries its arguments), a result given in its place is what the trace records as the
// call's result, once, after the continued event that says the tool was not run; and it is what
// math_agent's next model call receives.
func TestBreakpointToolResultGiven(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		r := debugRun(t, "supervisor", streaming, "tool:multiply")
		s, tr := r.next(t)
		if s.Args == nil || *s.Args == "" {
			t.Fatalf("held at %+v; want the call's arguments, a result may be given", s)
		}
		p := kinds(tr, traces.KindPaused)
		if p[len(p)-1].Pause.Args == nil {
			t.Fatal("the paused event does not carry the arguments")
		}
		for _, e := range kinds(tr, traces.KindToolStarted) {
			if e.Tool.Name == "multiply" {
				t.Fatal("multiply started before the hold")
			}
		}
		const given = "-1 (edited)"
		r.d.SetBreakpoints(nil)
		r.resume(t, agents.Resume{Action: traces.ActionContinue, By: "test", Result: ptr(given)})
		st, tr := r.end(t)
		if st != traces.StatusCompleted {
			t.Fatalf("status %s", st)
		}
		c := kinds(tr, traces.KindContinued)
		if len(c) != 1 || c[0].Pause.Result == nil || *c[0].Pause.Result != given || c[0].Pause.Edited != "tool result given: multiply was not run" {
			t.Fatalf("continued = %+v", c[0].Pause)
		}
		var finished []traces.Event
		for _, e := range kinds(tr, traces.KindToolFinished) {
			if e.Tool.Name == "multiply" {
				finished = append(finished, e)
			}
		}
		if len(finished) != 1 || finished[0].Tool.Result != given || finished[0].Seq < c[0].Seq {
			t.Fatalf("multiply finished %+v; want once, with %q, after continued #%d", finished, given, c[0].Seq)
		}
		seen := false
		for _, e := range kinds(tr, traces.KindModelStarted) {
			if e.Agent != "math_agent" || e.Seq < finished[0].Seq {
				continue
			}
			for _, m := range e.Model.Input {
				seen = seen || (m.Role == "tool" && m.Content == given)
			}
			break
		}
		if !seen {
			t.Fatal("math_agent's next model call did not receive the result given")
		}
	})
}

// TestBreakpointToolAbortRunsNoTool: an abort at a tool breakpoint ends the run canceled
// without running the tool: no multiply call is recorded.
func TestBreakpointToolAbortRunsNoTool(t *testing.T) {
	r := debugRun(t, "supervisor", false, "tool:multiply")
	r.next(t)
	r.resume(t, agents.Resume{Action: traces.ActionAbort, By: "test"})
	st, tr := r.end(t)
	if st != traces.StatusCanceled {
		t.Fatalf("status %s; want canceled", st)
	}
	for _, e := range kinds(tr, traces.KindToolStarted) {
		if e.Tool.Name == "multiply" {
			t.Fatal("multiply was called after the abort")
		}
	}
}

// TestBreakpointRefusesAResultWhereNoToolIsHeld: a result at a transfer breakpoint is refused.
func TestBreakpointRefusesAResultWhereNoToolIsHeld(t *testing.T) {
	r := debugRun(t, "supervisor", false, "transfer:math_agent")
	r.next(t)
	if err := r.d.Continue(agents.Resume{Result: ptr("x")}); traces.ErrorCode(err) != traces.CodeInvalid {
		t.Fatalf("result at a transfer breakpoint: %v; want invalid", err)
	}
	r.d.SetBreakpoints(nil)
	r.resume(t, agents.Resume{})
	r.end(t)
}

func ptr[T any](v T) *T { return &v }
