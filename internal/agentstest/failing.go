package agentstest

import (
	"context"
	"errors"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// ErrFlaky is the error FailingTool's flaky_api tool returns; eino wraps it, so the run's error
// message contains it.
var ErrFlaky = errors.New("upstream timed out (HTTP 504)")

// CrashPanic is the value FailingTool's crash tool panics with.
const CrashPanic = "crash tool: simulated bug"

// FailingTool returns a flow that fails in a tool. Its agent, fragile_agent, first calls ping
// (which works), then flaky_api and crash in one message. eino runs the two calls in parallel:
// flaky_api returns ErrFlaky, crash panics and eino's tools node recovers the panic into an
// error. eino reports only the first failed call in message order, so the run ends with one error
// event naming flaky_api and ErrFlaky; the process goes on. crash's tool callbacks get a start
// and never an end or error.
func FailingTool() agents.Flow {
	return agents.Flow{
		Name:         "failing_tool",
		Title:        "A tool error and a tool panic",
		Description:  "One agent whose second round of tool calls fails: one tool returns an error, one panics.",
		DefaultInput: "Check the upstream service",
		Agents: []traces.Agent{{Name: "fragile_agent", Description: "Checks services with tools that break.",
			Kind: traces.AgentChatModel, Tools: []string{"ping", "flaky_api", "crash"}}},
		Scripts: map[string]agents.Script{"fragile_agent": agents.NewScript(
			agents.Do(agents.Call("ping", hostArg{Host: "api.internal"})),
			agents.SayAndDo("Ping works; now the API itself.",
				agents.Call("flaky_api", hostArg{Host: "api.internal"}),
				agents.Call("crash", hostArg{Host: "api.internal"})),
			agents.Say("This is never said: the tools failed."),
		)},
		Build: buildFailingTool,
	}
}

// hostArg is the argument of FailingTool's tools.
type hostArg struct {
	Host string `json:"host"`
}

func buildFailingTool(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
	ping, err := utils.InferTool("ping", "Check that a host answers.", func(_ context.Context, in hostArg) (string, error) {
		return in.Host + " answered in 3 ms", nil
	})
	if err != nil {
		return nil, err
	}
	flaky, err := utils.InferTool("flaky_api", "Call the upstream API.", func(context.Context, hostArg) (string, error) {
		return "", ErrFlaky
	})
	if err != nil {
		return nil, err
	}
	crash, err := utils.InferTool("crash", "A tool with a bug.", func(context.Context, hostArg) (string, error) {
		panic(CrashPanic)
	})
	if err != nil {
		return nil, err
	}
	// Default (parallel) execution on purpose: crash runs in its own goroutine, whose panic eino
	// recovers, and flaky_api's error is the one reported, so the outcome is deterministic.
	var conf adk.ToolsConfig
	conf.Tools = []tool.BaseTool{ping, flaky, crash}
	return agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "fragile_agent",
		Description: "Checks services with tools that break.",
		Instruction: "Check the service the user names with your tools.",
		ToolsConfig: conf,
	})
}
