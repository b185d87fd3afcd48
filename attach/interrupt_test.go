package attach_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// deployQuestion is what the deploy tool's interrupt asks.
const deployQuestion = "Deploy v2 to production?"

// TestInterruptInsideAnAgentToolIsRecordedOnce has ops call deployer as an AgentTool; deployer's
// deploy tool interrupts. eino's stream carries one interrupt, as ops' event, with one id and the
// address chain through the AgentTool; both agents' copies of events carry it. It is recorded
// once, where it arose (deployer's visit), with eino's id, address and question; both agents end
// interrupted, and the page draws both waiting.
func TestInterruptInsideAnAgentToolIsRecordedOnce(t *testing.T) {
	recordEachWay(t, opsDeploys, "Ship v2.", func(t *testing.T, tr traces.Trace, stream []string) {
		if tr.Run.Status != traces.StatusInterrupted {
			t.Fatalf("run %s (%s), want interrupted", tr.Run.Status, tr.Run.Error)
		}
		if n := strings.Count(strings.Join(stream, "\n"), " interrupted"); n != 1 {
			t.Fatalf("the Runner's stream carries %d interrupts, want 1: %q", n, stream)
		}
		var interrupts []traces.Event
		ended := map[string]bool{}
		for _, e := range tr.Events {
			switch e.Kind {
			case traces.KindInterrupted:
				interrupts = append(interrupts, e)
			case traces.KindAgentFinished:
				ended[e.Agent] = e.AgentRun.Interrupted
			}
		}
		if len(interrupts) != 1 {
			t.Fatalf("%d interrupted events, want 1:\n%s", len(interrupts), attachtest.Story(tr))
		}
		i := interrupts[0]
		if i.Agent != "deployer" || strings.Join(i.RunPath, ">") != "ops>deployer" || i.Interrupt.ID == "" ||
			i.Interrupt.Info != deployQuestion || !strings.Contains(i.Interrupt.Address, "agent:ops;tool:deployer:") ||
			!strings.Contains(i.Interrupt.Address, "agent:deployer;tool:deploy:") {
			t.Errorf("interrupted %s [%s] %+v, want deployer's, at ops>deployer, with eino's id, question and address chain",
				i.Agent, strings.Join(i.RunPath, ">"), *i.Interrupt)
		}
		if !ended["ops"] || !ended["deployer"] {
			t.Errorf("agents ended interrupted: %v, want ops and deployer", ended)
		}
		states := map[string]web.State{}
		for _, n := range web.NewGraph(tr).Nodes {
			states[n.Name] = n.State
		}
		if states["ops"] != web.StateInterrupted || states["deployer"] != web.StateInterrupted {
			t.Errorf("the page draws ops %q and deployer %q, want both %q", states["ops"], states["deployer"], web.StateInterrupted)
		}
		if p := web.NewStats(tr).Outcome.Paused; p == nil || p.ID != i.Interrupt.ID || p.Info != deployQuestion || p.Tool != "deploy" {
			t.Errorf("the page says the run waits at %+v, want deploy's question", p)
		}
	})
}

// opsDeploys builds ops, which calls deployer as an AgentTool; deployer's deploy tool asks for
// approval.
func opsDeploys(t *testing.T) adk.Agent {
	ctx := context.Background()
	deploy, err := utils.InferTool("deploy", "Deploys a version once a person approves.", func(ctx context.Context, _ struct{}) (string, error) {
		return "", tool.Interrupt(ctx, deployQuestion)
	})
	if err != nil {
		t.Fatal(err)
	}
	deployer, err := agents.NewChatAgent(ctx, attachtest.Scripted("deployer", nil, agents.Do(agents.Call("deploy", struct{}{}))),
		adk.ChatModelAgentConfig{Name: "deployer", Description: "Deploys.", Instruction: "Deploy.",
			ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{deploy}}}})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := agents.NewChatAgent(ctx, attachtest.Scripted("ops", nil, agents.Do(agents.Ask("deployer", "Deploy v2."))),
		adk.ChatModelAgentConfig{Name: "ops", Description: "Runs operations.", Instruction: "Operate.",
			ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{adk.NewAgentTool(ctx, deployer)}}}})
	if err != nil {
		t.Fatal(err)
	}
	return ops
}
