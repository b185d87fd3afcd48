package attach_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach/attachtest"
	"github.com/baton-dev/baton/traces"
)

// TestOutputKeyIsSetInItsStepsVisit runs a sequence whose first step, writer, answers into the
// session key draft: eino stores the answer during writer's own run, so the value is recorded
// inside writer's visit, before its agent.finished, not in the next step's.
func TestOutputKeyIsSetInItsStepsVisit(t *testing.T) {
	seq := func(t *testing.T) adk.Agent {
		ctx := context.Background()
		writer, err := agents.NewChatAgent(ctx, attachtest.Scripted("writer", nil, agents.Say("A tagline: ship it.")),
			adk.ChatModelAgentConfig{Name: "writer", Description: "Writes.", Instruction: "Write.", OutputKey: "draft"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "desk", Description: "Writes, then edits.",
			SubAgents: []adk.Agent{writer, chat(t, "editor", agents.Say("Edited."))}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	recordEachWay(t, seq, "Write a tagline.", func(t *testing.T, tr traces.Trace, _ []string) {
		checkSetInVisit(t, tr, "draft", "writer", `"A tagline: ship it."`)
	})
}

// checkSetInVisit checks that key is set once, to value, by agent, inside agent's visit: after its
// agent.started and before its agent.finished.
func checkSetInVisit(t *testing.T, tr traces.Trace, key, agent, value string) {
	t.Helper()
	open, sets := false, 0
	for _, e := range tr.Events {
		switch {
		case e.Agent == agent && e.Kind == traces.KindAgentStarted:
			open = true
		case e.Agent == agent && e.Kind == traces.KindAgentFinished:
			open = false
		case e.Kind == traces.KindSessionSet && e.Session.Key == key:
			sets++
			if !open || e.Session.SetBy != agent || e.Agent != agent || string(e.Session.Value) != value {
				t.Errorf("event %d sets %s to %s by %s (recorded under %s), inside %s's visit: %v; want %s by %s inside its visit:\n%s",
					e.Seq, key, e.Session.Value, e.Session.SetBy, e.Agent, agent, open, value, agent, attachtest.Story(tr))
			}
		}
	}
	if sets != 1 {
		t.Errorf("%s set %d times, want once:\n%s", key, sets, attachtest.Story(tr))
	}
}
