package record_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/record"
)

// TestSessionIsReadInPlace pins what the recorder relies on in eino v0.9.21 to look at a run's
// session after every tool call without copying it: inside a tool, the session's values and
// their lock are found in eino's run context, and hold what the tool just set. Should eino change
// them, the recorder falls back on adk.GetSessionValues, and this test says so.
func TestSessionIsReadInPlace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var seen map[string]any
	var inPlace bool
	note, err := utils.InferTool("note", "Notes a value.", func(ctx context.Context, _ struct{}) (string, error) {
		adk.AddSessionValue(ctx, "noted", "yes")
		seen, inPlace = record.SessionInPlace(ctx)
		return "noted", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := agents.NewChatAgent(ctx, attachtest.Scripted("noter", nil, agents.Do(agents.Call("note", struct{}{})), agents.Say("Done.")),
		adk.ChatModelAgentConfig{Name: "noter", Description: "Notes.", Instruction: "Note.",
			ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{note}}}})
	if err != nil {
		t.Fatal(err)
	}
	attachtest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Note it.", adk.WithSessionValues(map[string]any{"given": 1})))
	if !inPlace {
		t.Error("the session is not found in eino's run context: the recorder copies it after every tool call")
	}
	if seen["noted"] != "yes" || seen["given"] != 1 {
		t.Errorf("session read in the tool = %v, want noted=yes and given=1", seen)
	}
}
