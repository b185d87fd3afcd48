package attach_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

// TestLoopIterationsAreVisits runs a loop of writer and critic that the critic breaks in its
// third iteration: every iteration of each agent is a visit of its own (numbered, started once,
// finished once, in order), the loop ends after its steps, and breakloop counts the iterations
// that ran. The critic's tool stores the approved draft: the value is credited to the critic,
// though it equals the writer's last reply.
func TestLoopIterationsAreVisits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	approve, err := utils.InferTool("approve", "Approves the draft and ends the loop.", func(ctx context.Context, _ struct{}) (string, error) {
		adk.AddSessionValue(ctx, "approved", "Draft 3.") // equal to writer's last reply, set by critic
		return "approved", adk.SendToolGenAction(ctx, "approve", adk.NewBreakLoopAction("critic"))
	})
	if err != nil {
		t.Fatal(err)
	}
	writer, err := agents.NewChatAgent(ctx, attachtest.Scripted("writer", nil, agents.Say("Draft 1."), agents.Say("Draft 2."), agents.Say("Draft 3.")),
		adk.ChatModelAgentConfig{Name: "writer", Description: "Writes drafts.", Instruction: "Write."})
	if err != nil {
		t.Fatal(err)
	}
	critic, err := agents.NewChatAgent(ctx, attachtest.Scripted("critic", nil, agents.Say("Too long."), agents.Say("Too vague."), agents.Do(agents.Call("approve", struct{}{}))),
		adk.ChatModelAgentConfig{Name: "critic", Description: "Reviews drafts.", Instruction: "Review.",
			ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{approve}}, ReturnDirectly: map[string]bool{"approve": true}}})
	if err != nil {
		t.Fatal(err)
	}
	loop, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "review_loop", Description: "Drafts until approved.", SubAgents: []adk.Agent{writer, critic}, MaxIterations: 5})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := attach.New(attach.Config{Dir: dir})
	attachtest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: loop}).Query(ctx, "Write a tagline.", b.Option()))
	tr := attachtest.ReadTraces(t, b, dir, 1)[0]

	var starts []string
	open := map[string]int{}
	for _, e := range tr.Events {
		switch e.Kind {
		case traces.KindAgentStarted:
			if open[e.Agent] != 0 {
				t.Errorf("event %d: %s starts again before its previous visit finished", e.Seq, e.Agent)
			}
			open[e.Agent]++
			if e.Agent != "review_loop" {
				starts = append(starts, e.Agent+"#"+string(rune('0'+e.AgentRun.Iteration)))
			}
		case traces.KindAgentFinished:
			if open[e.Agent] != 1 {
				t.Errorf("event %d: %s finishes a visit that did not start", e.Seq, e.Agent)
			}
			open[e.Agent]--
		case traces.KindSessionSet:
			if e.Session.SetBy != "critic" || e.Agent != "critic" {
				t.Errorf("%s credited to %s (recorded under %s), want critic, whose tool set it", e.Session.Key, e.Session.SetBy, e.Agent)
			}
		case traces.KindBreakLoop:
			if e.BreakLoop.Iterations != 3 || e.BreakLoop.From != "critic" {
				t.Errorf("breakloop %+v, want critic after 3 iterations", e.BreakLoop)
			}
		case traces.KindMessage:
			if open[e.Agent] != 1 {
				t.Errorf("event %d: a message of %s outside its visits", e.Seq, e.Agent)
			}
		}
	}
	want := []string{"writer#1", "critic#1", "writer#2", "critic#2", "writer#3", "critic#3"}
	if len(starts) != len(want) {
		t.Fatalf("visits %v, want %v", starts, want)
	}
	for i := range want {
		if starts[i] != want[i] {
			t.Fatalf("visits %v, want %v", starts, want)
		}
	}
	if last := tr.Events[len(tr.Events)-2]; last.Kind != traces.KindAgentFinished || last.Agent != "review_loop" {
		t.Errorf("the loop's end is not the run's last agent event: %s %s", last.Kind, last.Agent)
	}
}
