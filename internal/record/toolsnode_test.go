package record_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// TestToolsNodeHoldsItsVisit: a tools node's start leaves its agent's visit in the node's
// context, where each tool call's start finds it a few of eino's contexts up instead of walking
// up to the agent's call, in streaming runs and not, tools run one by one or at once; and the
// tool calls are recorded as the agent's.
func TestToolsNodeHoldsItsVisit(t *testing.T) {
	for _, c := range []struct {
		name                string
		streaming, parallel bool
	}{{"invoke", false, false}, {"streaming", true, false}, {"streaming-parallel", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var mu sync.Mutex
			var held []string
			tick, err := utils.InferTool("tick", "Counts.", func(ctx context.Context, _ struct{}) (string, error) {
				mu.Lock()
				held = append(held, record.ToolsNodeVisit(ctx))
				mu.Unlock()
				return "ok", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			models := attachtest.Scripted("counter", nil,
				agents.Do(agents.Call("tick", struct{}{}), agents.Call("tick", struct{}{})),
				agents.Do(agents.Call("tick", struct{}{})), agents.Say("Done."))
			agent, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "counter", Description: "Counts.", Instruction: "Count.",
				ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{tick}, ExecuteSequentially: !c.parallel}}})
			if err != nil {
				t.Fatal(err)
			}
			rec := traces.NewRecording(traces.Run{ID: "r1", Flow: "count"}, nil)
			runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, EnableStreaming: c.streaming})
			attachtest.Drain(t, record.NewRecorder(rec, "count", nil).Run(ctx, runner, []adk.Message{schema.UserMessage("Count.")}))
			<-rec.Done()
			if len(held) != 3 {
				t.Fatalf("tick ran %d times, want 3", len(held))
			}
			for i, agent := range held {
				if agent != "counter" {
					t.Errorf("tool call %d: the tools node holds the visit of %q, want counter's", i+1, agent)
				}
			}
			tools := 0
			for _, e := range rec.Snapshot().Events {
				if e.Kind == traces.KindToolStarted || e.Kind == traces.KindToolFinished {
					tools++
					if e.Agent != "counter" {
						t.Errorf("%s recorded as %q's, want counter's", e.Kind, e.Agent)
					}
				}
			}
			if tools != 6 {
				t.Errorf("%d tool events recorded, want 6", tools)
			}
		})
	}
}
