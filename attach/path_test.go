package attach_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/supervisor"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

// chat builds a chat model agent answering with steps.
func chat(t *testing.T, name string, steps ...agents.Step) *adk.ChatModelAgent {
	t.Helper()
	a, err := agents.NewChatAgent(context.Background(), attachtest.Scripted(name, nil, steps...),
		adk.ChatModelAgentConfig{Name: name, Description: name + " helps.", Instruction: "Help."})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// recordWrapped runs root on input through the iterator wrapper and returns the trace and the run
// paths the Runner's stream put on each agent's events ("agent [a>b]").
func recordWrapped(t *testing.T, root adk.Agent, input string) (traces.Trace, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	b := attach.New(attach.Config{Dir: dir})
	iter := b.Run(ctx, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}), []adk.Message{schema.UserMessage(input)})
	lines, _ := attachtest.Drain(t, iter)
	var paths []string
	for _, l := range lines {
		agent, rest, _ := strings.Cut(l, " ")
		path, _, _ := strings.Cut(rest, " ")
		if p := agent + " [" + path + "]"; agent != "" && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return attachtest.ReadTraces(t, b, dir, 1)[0], paths
}

// visitPaths checks that every event of each visit carries the run path of its agent.started (or,
// for the way out of a wrapped team, which eino sends from the wrapper, the wrapper's: the same
// path less its last step, the team's first agent, of the wrapper's name), and returns those
// paths in start order ("agent [a>b]").
func visitPaths(t *testing.T, tr traces.Trace) []string {
	t.Helper()
	var starts []string
	open := map[string][]string{} // agent -> the path of each visit of it still open, innermost last
	for _, e := range tr.Events {
		path := strings.Join(e.RunPath, ">")
		switch e.Kind {
		case traces.KindAgentStarted:
			open[e.Agent] = append(open[e.Agent], path)
			starts = append(starts, e.Agent+" ["+path+"]")
			continue
		case traces.KindSessionSet, traces.KindAgentToolEnter, traces.KindAgentToolExit, traces.KindRunStarted, traces.KindRunFinished:
			continue // recorded under another agent's visit, or none
		}
		visits := open[e.Agent]
		if len(visits) == 0 {
			t.Errorf("event %d (%s of %s) outside any visit of its agent", e.Seq, e.Kind, e.Agent)
			continue
		}
		if cur := visits[len(visits)-1]; path != cur && cur != path+">"+e.Agent {
			t.Errorf("event %d (%s of %s) carries [%s], its visit started at [%s]", e.Seq, e.Kind, e.Agent, path, cur)
		}
		if e.Kind == traces.KindAgentFinished {
			open[e.Agent] = visits[:len(visits)-1]
		}
	}
	return starts
}

// TestOneRunPathPerVisit runs a sequence and eino's prebuilt supervisor: each visit's events all
// carry the run path eino puts on that agent's events, from agent.started on (not the call stack
// of the sequence, nor the supervisor's container alone).
func TestOneRunPathPerVisit(t *testing.T) {
	ctx := context.Background()
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "seq", Description: "Plans, then writes.",
		SubAgents: []adk.Agent{chat(t, "planner", agents.Say("Plan.")), chat(t, "writer", agents.Say("Text."))}})
	if err != nil {
		t.Fatal(err)
	}
	boss, err := supervisor.New(ctx, &supervisor.Config{
		Supervisor: chat(t, "boss", agents.Do(agents.Transfer("worker")), agents.Say("Done.")),
		SubAgents:  []adk.Agent{chat(t, "worker", agents.Say("Worked."))},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		root adk.Agent
		want []string
	}{
		{seq, []string{"seq [seq]", "planner [seq>planner]", "writer [seq>planner>writer]"}},
		{boss, []string{"boss [boss>boss]", "worker [boss>boss>worker]", "boss [boss>boss>worker>boss]"}},
	} {
		tr, stream := recordWrapped(t, tc.root, "Go.")
		starts := visitPaths(t, tr)
		if !slices.Equal(starts, tc.want) {
			t.Errorf("visits start at %q, want %q", starts, tc.want)
		}
		for _, s := range starts {
			if !slices.Contains(stream, s) && !strings.HasPrefix(s, "seq ") {
				t.Errorf("visit %s: the Runner's stream carries no such path (%q)", s, stream)
			}
		}
	}
}

// TestTransferOutOfAWrappedTeam chains collector, by a deterministic transfer, to a team (lead
// and checker transfer to each other by model) that a deterministic transfer wraps and sends on
// to publisher. The team's way out is recorded, publisher starts after it, and the team's lead
// starts with what eino fed it: a wrapped team runs in a session of its own, so the user's words
// alone, without collector's messages.
func TestTransferOutOfAWrappedTeam(t *testing.T) {
	ctx := context.Background()
	team, err := adk.SetSubAgents(ctx, chat(t, "lead", agents.Do(agents.Transfer("checker")), agents.Say("Approved.")),
		[]adk.Agent{chat(t, "checker", agents.Do(agents.Transfer("lead")))})
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := adk.SetSubAgents(ctx, adk.AgentWithDeterministicTransferTo(ctx, &adk.DeterministicTransferConfig{Agent: team, ToAgentNames: []string{"publisher"}}),
		[]adk.Agent{chat(t, "publisher", agents.Say("Published."))})
	if err != nil {
		t.Fatal(err)
	}
	collector := adk.AgentWithDeterministicTransferTo(ctx, &adk.DeterministicTransferConfig{Agent: chat(t, "collector", agents.Say("Collected.")), ToAgentNames: []string{"lead"}})
	root, err := adk.SetSubAgents(ctx, collector, []adk.Agent{wrapped})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := recordWrapped(t, root, "Ship it.")
	if tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("run %s (%s)", tr.Run.Status, tr.Run.Error)
	}
	var transfers []string
	leadInput := []traces.Message(nil)
	for _, e := range tr.Events {
		switch {
		case e.Transfer != nil:
			transfers = append(transfers, e.Transfer.From+" -> "+e.Transfer.To+" ("+e.Transfer.Mode+")")
			if e.Transfer.To == "publisher" && !slices.Equal(e.RunPath, []string{"collector", "lead"}) {
				// eino sends the team's way out from its wrapper, at the wrapper's path.
				t.Errorf("the team's way out carries %q, want the wrapper's [collector lead]", e.RunPath)
			}
		case e.Kind == traces.KindAgentStarted && e.Agent == "lead" && leadInput == nil:
			leadInput = e.AgentRun.Input
		case e.Kind == traces.KindAgentStarted && e.Agent == "publisher":
			if n := len(transfers); n == 0 || transfers[n-1] != "lead -> publisher (deterministic)" {
				t.Errorf("publisher started after %q, not after the team's transfer to it", transfers)
			}
		}
	}
	want := []string{"collector -> lead (deterministic)", "lead -> checker (llm)", "checker -> lead (llm)", "lead -> publisher (deterministic)"}
	if !slices.Equal(transfers, want) {
		t.Errorf("transfers %q, want %q", transfers, want)
	}
	if attachtest.HasContext(leadInput, "collector") || len(leadInput) != 1 || leadInput[0].Content != "Ship it." {
		t.Errorf("lead's agent.started input %+v, want the user's words alone", leadInput)
	}
	visitPaths(t, tr)
}
