package agents_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// TestBreakpointSessionValueEdited: held at research_agent's write of research_notes (the stop
// carries the value written), continued with another value: the trace records continued saying
// what changed, then a session.set with the new value, and code_agent's instruction, which eino
// fills from the session, is built from it.
func TestBreakpointSessionValueEdited(t *testing.T) {
	r := debugRun(t, "agenttool", false, "session:research_notes")
	s, _ := r.next(t)
	if len(s.Value) == 0 {
		t.Fatalf("held at %+v; want the value written", s)
	}
	const notes = "EDITED: GDP figures withheld"
	value, _ := json.Marshal(notes)
	r.d.SetBreakpoints(nil)
	r.resume(t, agents.Resume{Action: traces.ActionContinue, By: "test", Value: value})
	st, tr := r.end(t)
	if st != traces.StatusCompleted {
		t.Fatalf("status %s", st)
	}
	c := kinds(tr, traces.KindContinued)
	if len(c) != 1 || string(c[0].Pause.Value) != string(value) || !strings.HasPrefix(c[0].Pause.Edited, "session value research_notes: ") || strings.Contains(c[0].Pause.Edited, "not written") {
		t.Fatalf("continued = %+v", c[0].Pause)
	}
	var sets []traces.Event
	for _, e := range kinds(tr, traces.KindSessionSet) {
		if e.Session.Key == "research_notes" {
			sets = append(sets, e)
		}
	}
	if n := len(sets); n < 2 || sets[n-1].Seq != c[0].Seq+1 || string(sets[n-1].Session.Value) != string(value) {
		t.Fatalf("research_notes sets %+v; want the edited value right after continued #%d", sets, c[0].Seq)
	}
	coded := false
	for _, e := range kinds(tr, traces.KindModelStarted) {
		if e.Agent == "code_agent" {
			coded = true
			if !strings.Contains(e.Model.Input[0].Content, notes) {
				t.Fatalf("code_agent's instruction %q is not built from the edited value", e.Model.Input[0].Content)
			}
		}
	}
	if !coded {
		t.Fatal("code_agent never called its model")
	}
}

// TestBreakpointSessionValueRefused: a value that is no JSON, or given where no session value
// was written, is refused.
func TestBreakpointSessionValueRefused(t *testing.T) {
	r := debugRun(t, "agenttool", false, "session:research_notes")
	r.next(t)
	if err := r.d.Continue(agents.Resume{Value: json.RawMessage(`{not json`)}); traces.ErrorCode(err) != traces.CodeInvalid {
		t.Fatalf("value that is no JSON: %v; want invalid", err)
	}
	r.d.SetBreakpoints(nil)
	r.resume(t, agents.Resume{})
	r.end(t)

	r = debugRun(t, "supervisor", false, "tool:multiply")
	r.next(t)
	if err := r.d.Continue(agents.Resume{Value: json.RawMessage(`"x"`)}); traces.ErrorCode(err) != traces.CodeInvalid {
		t.Fatalf("value at a tool breakpoint: %v; want invalid", err)
	}
	r.d.SetBreakpoints(nil)
	r.resume(t, agents.Resume{})
	r.end(t)
}
