package record

import (
	"bytes"
	"encoding/gob"
	"testing"

	"github.com/cloudwego/eino/adk"
)

// runStep returns eino's run step of agent name, as eino's own encoding reads it back.
func runStep(t *testing.T, name string) adk.RunStep {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(struct{ AgentName string }{name}); err != nil {
		t.Fatal(err)
	}
	var s adk.RunStep
	if err := s.GobDecode(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOwnEventsFollowTheVisitsPath: an event that carries the strings of the visit's latest own
// event is its own, again and again; once the visit folds an agent of its name (its path goes one
// deeper, the wrapper's is outer), an event of those strings is the wrapper's, and one of the new
// path the visit's own.
func TestOwnEventsFollowTheVisitsPath(t *testing.T) {
	r := &Recorder{}
	v := &visit{agent: "a"}
	r.setPath(v, place{path: []string{"a"}}, []string{"a"})
	outer := &adk.AgentEvent{AgentName: "a", RunPath: []adk.RunStep{runStep(t, "a")}}
	for i := range 2 {
		if own, out := v.ownEvent(outer); !own || out {
			t.Fatalf("event %d of the visit's path: own %v, the wrapper's %v", i, own, out)
		}
	}
	if own, _ := v.ownEvent(&adk.AgentEvent{AgentName: "b", RunPath: outer.RunPath}); own {
		t.Error("another agent's event was taken for the visit's own")
	}
	v.outer, v.outerPath = v.local, v.path
	r.setPath(v, place{path: []string{"a", "a"}}, []string{"a", "a"})
	if own, out := v.ownEvent(outer); !own || !out {
		t.Errorf("the wrapper's event once folded: own %v, the wrapper's %v", own, out)
	}
	inner := &adk.AgentEvent{AgentName: "a", RunPath: append(outer.RunPath[:1:1], runStep(t, "a"))}
	for i := range 2 {
		if own, out := v.ownEvent(inner); !own || out {
			t.Errorf("event %d of the folded agent: own %v, the wrapper's %v", i, own, out)
		}
	}
}
