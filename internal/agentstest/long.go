package agentstest

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// TicksPerTurn is how many tick calls Long's agent puts in one model reply.
const TicksPerTurn = 10

// Long returns a flow for benchmarks: its agent, long_agent, calls the tick tool n times,
// TicksPerTurn calls per model reply, then answers. Its Runner stream has LongEvents(n) events
// (one per reply, one per tool result). Batching keeps the model's input, which grows with the
// history, from making the run quadratic in n. n < 1 counts as 1.
func Long(n int) agents.Flow { return LongTurns(n, TicksPerTurn) }

// LongTurns is Long with perTurn tick calls per model reply: with more per reply, the history
// each model call is fed, which the trace records whole, stays shorter for the same events.
func LongTurns(n, perTurn int) agents.Flow {
	n, perTurn = max(n, 1), max(perTurn, 1)
	var steps []agents.Step
	for first := 1; first <= n; first += perTurn {
		var calls []agents.ToolCall
		for i := first; i < first+perTurn && i <= n; i++ {
			calls = append(calls, agents.Call("tick", tickArg{N: i}))
		}
		steps = append(steps, agents.Do(calls...))
	}
	steps = append(steps, agents.Say(fmt.Sprintf("Done after %d ticks.", n)))
	return agents.Flow{
		Name:         "long",
		Title:        fmt.Sprintf("%d tool calls", n),
		Description:  "One agent that calls a cheap tool many times, for benchmarks.",
		DefaultInput: "Count",
		Agents: []traces.Agent{{Name: "long_agent", Description: "Counts with a tool.",
			Kind: traces.AgentChatModel, Tools: []string{"tick"}}},
		Scripts: map[string]agents.Script{"long_agent": agents.NewScript(steps...)},
		Build: func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
			return buildLong(ctx, models, len(steps))
		},
	}
}

// LongEvents is the number of Runner events a run of Long(n) produces.
func LongEvents(n int) int {
	n = max(n, 1)
	turns := (n + TicksPerTurn - 1) / TicksPerTurn
	return turns + n + 1
}

// tickArg is the tick tool's argument.
type tickArg struct {
	N int `json:"n"`
}

func buildLong(ctx context.Context, models agents.ModelFor, replies int) (adk.Agent, error) {
	tick, err := utils.InferTool("tick", "Count one.", func(_ context.Context, in tickArg) (string, error) {
		return strconv.Itoa(in.N), nil
	})
	if err != nil {
		return nil, err
	}
	var conf adk.ToolsConfig
	conf.Tools = []tool.BaseTool{tick}
	conf.ExecuteSequentially = true // results in call order, so runs compare equal
	return agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:          "long_agent",
		Description:   "Counts with a tool.",
		Instruction:   "Count with the tick tool until you are done.",
		ToolsConfig:   conf,
		MaxIterations: replies + 1, // eino's default of 20 would stop the run early
	})
}
