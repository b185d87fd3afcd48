package attach_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/attach/attachtest"
	"github.com/baton-dev/baton/traces"
)

// TestTransferToAnUnknownAgent has a model transfer to an agent that does not exist. eino says so
// only on the Runner's stream; the wrapper records its error, and the option, which sees only
// callbacks, records that the target never started. Either way the run failed.
func TestTransferToAnUnknownAgent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	build := func() *adk.Runner {
		router, err := agents.NewChatAgent(ctx, attachtest.Scripted("router", nil, agents.Do(agents.Transfer("ghost_agent"))),
			adk.ChatModelAgentConfig{Name: "router", Description: "Routes.", Instruction: "Route."})
		if err != nil {
			t.Fatal(err)
		}
		helper, err := agents.NewChatAgent(ctx, attachtest.Scripted("helper", nil, agents.Say("hi")),
			adk.ChatModelAgentConfig{Name: "helper", Description: "Helps.", Instruction: "Help."})
		if err != nil {
			t.Fatal(err)
		}
		root, err := adk.SetSubAgents(ctx, router, []adk.Agent{helper})
		if err != nil {
			t.Fatal(err)
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root})
	}
	dir := t.TempDir()
	b := attach.New(attach.Config{Dir: dir})
	attachtest.Drain(t, build().Query(ctx, "help me", b.Option()))
	attachtest.Drain(t, b.Run(ctx, build(), []adk.Message{schema.UserMessage("help me")}))
	for _, tr := range attachtest.ReadTraces(t, b, dir, 2) {
		var errs []string
		for _, e := range tr.Events {
			if e.Kind == traces.KindError {
				errs = append(errs, e.Agent+": "+e.Error.Message)
			}
		}
		if tr.Run.Status != traces.StatusFailed || len(errs) != 1 || !strings.Contains(errs[0], "ghost_agent") || !strings.HasPrefix(errs[0], "router: ") {
			t.Errorf("run %s: status %s, errors %q: want failed, with one error of router naming ghost_agent", tr.Run.ID, tr.Run.Status, errs)
		}
	}
}
