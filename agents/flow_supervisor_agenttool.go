package agents

import (
	"context"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"

	"github.com/baton-dev/baton/traces"
)

func init() {
	register(Flow{
		Name:  "supervisor-agenttool",
		Title: "Supervisor with AgentTool: the supervisor flow's job, without transfers",
		Group: GroupAgentTool,
		Plain: "The supervisor's job done by calling the specialists as tools instead of handing off: control never leaves the supervisor. Compare it with supervisor.",
		Description: "The supervisor flow's job (same input, same specialists, same tools), with the specialists " +
			"called through adk.NewAgentTool instead of transfers. Compare the two runs: here there are no " +
			"transfer edges but AgentTool frames, control never leaves the supervisor, and each specialist is fed " +
			"only its request, with no \"For context:\" message: math_agent never sees research_agent's work, " +
			"only the numbers the supervisor passes on.",
		DefaultInput: supervisorInput,
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "supervisor", Description: supervisorDesc, Kind: traces.AgentChatModel, Tools: []string{"research_agent", "math_agent"}},
			{Name: "research_agent", Description: researchDesc, Kind: traces.AgentChatModel, Parent: "supervisor",
				Relation: traces.RelationAgentTool, Tools: []string{"search"}},
			{Name: "math_agent", Description: mathDesc, Kind: traces.AgentChatModel, Parent: "supervisor",
				Relation: traces.RelationAgentTool, Tools: []string{"add", "multiply", "divide"}},
		},
		Scripts: map[string]Script{
			"supervisor": NewScript(
				SayAndDo("I need both GDP figures first.", Ask("research_agent", "Find the GDP of the US and of New York State in 2024.")),
				SayAndDo("Got the figures: US $29.18T and New York $2.297T.",
					Ask("math_agent", "What percentage of 29.18 trillion is 2.297 trillion?")),
				Say("In 2024 the US GDP was about $29.18 trillion and New York State's about $2.297 trillion, "+
					"so New York produced roughly 7.87% of US GDP."),
			),
			"research_agent": researchScript,
			"math_agent":     mathScript,
		},
		Build: buildSupervisorAgentTool,
	})
}

// buildSupervisorAgentTool builds the supervisor-agenttool flow anew.
func buildSupervisorAgentTool(ctx context.Context, models ModelFor) (adk.Agent, error) {
	research, err := newResearchAgent(ctx, models)
	if err != nil {
		return nil, err
	}
	calc, err := newMathAgent(ctx, models)
	if err != nil {
		return nil, err
	}
	var conf adk.ToolsConfig
	conf.Tools = []tool.BaseTool{adk.NewAgentTool(ctx, research), adk.NewAgentTool(ctx, calc)}
	conf.EmitInternalEvents = true
	return NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "supervisor",
		Description: supervisorDesc,
		Instruction: "You are a supervisor with two agent tools: research_agent for looking facts up and " +
			"math_agent for calculations. Give each the part of the task it can do and do no work yourself. " +
			"When you have everything, answer the user.",
		ToolsConfig: conf,
	})
}
