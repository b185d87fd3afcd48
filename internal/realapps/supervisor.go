package realapps

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/supervisor"

	"github.com/baton-dev/baton/agents"
)

// supervisorExit is eino's prebuilt supervisor, streaming: it hands work to a researcher and a
// calculator, which come back by themselves, and ends the run with exit; two questions on one
// Runner.
var supervisorExit = App{
	Name: "supervisor",
	Queries: []string{
		"Find the 2024 GDP of the US and of New York state. What share of the US was New York?",
		"What is 2.297 times 2?",
	},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		research := researcher(ctx, t)
		math := calculator(ctx, t, "math_agent", agents.Do(agents.Call("divide", pair{A: 2.297, B: 29.18})),
			agents.QuoteToolResult("2.297 / 29.18 = %s"),
			agents.Do(agents.Call("multiply", pair{A: 2.297, B: 2})),
			agents.QuoteToolResult("2.297 * 2 = %s"),
		)
		boss := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "supervisor", Description: "Supervises research and math.", Instruction: "Assign work; do none yourself.",
			Model: scripted(t, "supervisor",
				agents.Do(agents.Transfer("research_agent")),
				agents.Do(agents.Transfer("math_agent")),
				agents.Do(agents.Exit("New York state was about 7.9% of US GDP in 2024.")),
				agents.Do(agents.Transfer("math_agent")),
				agents.Do(agents.Exit("2.297 times 2 is 4.594.")),
			),
			Exit: &adk.ExitTool{},
		})
		root, err := supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: []adk.Agent{research, math}})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true}), nil
	},
}

// layeredSupervisor is a prebuilt supervisor one of whose sub-agents is itself a prebuilt
// supervisor, streaming: the inner one hands work to its own specialist, answers, and is sent
// back to the outer one, which exits.
var layeredSupervisor = App{
	Name:    "layered-supervisor",
	Queries: []string{"Find the 2024 GDP of the US and of New York state. What share of the US was New York?"},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		research := researcher(ctx, t)
		divider := calculator(ctx, t, "divide_agent",
			agents.Do(agents.Call("divide", pair{A: 2.297, B: 29.18})),
			agents.QuoteToolResult("2.297 / 29.18 = %s"),
		)
		mathLead := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "math_agent", Description: "Supervises math specialists.", Instruction: "Assign math to your specialists.",
			Model: scripted(t, "math_agent",
				agents.Do(agents.Transfer("divide_agent")),
				agents.Say("New York's share: 0.0787."),
			),
		})
		mathTeam, err := supervisor.New(ctx, &supervisor.Config{Supervisor: mathLead, SubAgents: []adk.Agent{divider}})
		if err != nil {
			return nil, err
		}
		boss := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "supervisor", Description: "Supervises research and math.", Instruction: "Assign work; do none yourself.",
			Model: scripted(t, "supervisor",
				agents.Do(agents.Transfer("research_agent")),
				agents.Do(agents.Transfer("math_agent")),
				agents.Do(agents.Exit("New York state was about 7.9% of US GDP in 2024.")),
			),
			Exit: &adk.ExitTool{},
		})
		root, err := supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: []adk.Agent{research, mathTeam}})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true}), nil
	},
}

// researcher is a specialist that searches once per question.
func researcher(ctx context.Context, t *tally) adk.Agent {
	search := mustTool(t, "search", "Searches the web.", func(_ context.Context, in args) (string, error) {
		return "In 2024 the US GDP was $29.18 trillion and New York state's $2.297 trillion.", nil
	})
	return mustChatAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "research_agent", Description: "Searches for facts.", Instruction: "Research; do no math.",
		Model: scripted(t, "research_agent",
			agents.Do(agents.Call("search", args{Query: "2024 GDP US and New York state"})),
			agents.QuoteToolResult("%s"),
		),
		ToolsConfig: toolsOf(search),
	})
}

// pair is the argument of the calculators' tools.
type pair struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// calculator is a specialist named name that answers steps with divide and multiply tools.
func calculator(ctx context.Context, t *tally, name string, steps ...agents.Step) adk.Agent {
	divide := mustTool(t, "divide", "Divides a by b.", func(_ context.Context, in pair) (string, error) {
		return fmt.Sprintf("%.4f", in.A/in.B), nil
	})
	multiply := mustTool(t, "multiply", "Multiplies a by b.", func(_ context.Context, in pair) (string, error) {
		return fmt.Sprintf("%.4f", in.A*in.B), nil
	})
	return mustChatAgent(ctx, &adk.ChatModelAgentConfig{
		Name: name, Description: "Does arithmetic.", Instruction: "Compute with your tools.",
		Model: scripted(t, name, steps...), ToolsConfig: toolsOf(divide, multiply),
	})
}
