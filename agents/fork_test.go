package agents_test

import (
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	handoffs "github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

// runWith records flow on input with model (nil: scripted).
func runWith(t *testing.T, flow agents.Flow, input string, model *agents.Model) traces.Trace {
	t.Helper()
	return agentstest.Record(t, flow, input, agents.Options{Model: model})
}

// TestForkAtAHandoff: a supervisor run forked at its first routing call, sent to math_agent instead
// of research_agent, replays what came before (the same events), then takes the other route on
// the flow's scripts; the diff names the fork point as the first divergence.
func TestForkAtAHandoff(t *testing.T) {
	flow, err := agents.Lookup("supervisor")
	if err != nil {
		t.Fatal(err)
	}
	original := runWith(t, flow, flow.DefaultInput, nil)
	var at int64
	for _, e := range original.Events {
		if e.Kind == traces.KindModelStarted && e.Agent == "supervisor" {
			at = e.Seq
			break
		}
	}
	m, err := agents.ForkOf(original, agents.Fork{At: at, Reply: agents.Reply{Text: "Straight to the numbers.",
		ToolCalls: []agents.ToolCall{agents.Transfer("math_agent")}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	forked := runWith(t, flow, original.Run.Input, m)
	for i := range at {
		a, b := original.Events[i], forked.Events[i]
		if a.Kind != b.Kind || a.Agent != b.Agent {
			t.Fatalf("event #%d: the fork has %s %s, the original %s %s: the events before the fork differ", i+1, b.Kind, b.Agent, a.Kind, a.Agent)
		}
	}
	c := handoffs.Compare(handoffs.Of(original), handoffs.Of(forked))
	if f := c.First; f == nil || f.What != "reply" || f.Turn != [2]int{1, 1} || f.Seq != [2]int64{at + 1, at + 1} || f.B != `says "Straight to the numbers."` {
		t.Errorf("first divergence = %+v, want the forked call's reply (#%d) in turn 1", f, at+1)
	}
	// The forked call's answer was given, not generated: it reported no tokens, which differ too.
	if ds := c.Pairs[0].Differences; len(ds) != 3 || ds[1].What != "routing decision" ||
		ds[1].A != "hands off to research_agent (llm)" || ds[1].B != "hands off to math_agent (llm)" || ds[2].What != "tokens" {
		t.Errorf("turn 1's differences = %+v, want the reply, then the handoff, then the tokens", ds)
	}
	if got := handoffs.Of(forked).Route; len(got) < 2 || got[1] != "math_agent" {
		t.Errorf("the fork's route = %v, want math_agent second", got)
	}

	if _, err := agents.ForkOf(original, agents.Fork{At: 1}, nil); err == nil || traces.ErrorMessage(err) != "event #1 of run "+original.Run.ID+" is no model call (model.started): a fork changes what a model answered" {
		t.Errorf("a fork at run.started: %v", err)
	}
}
