package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/supervisor"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the supervisor flow; eino shows them to the supervisor's model in its
// "Available other agents" block, and Baton in the tree.
const (
	supervisorDesc = "Coordinates the specialists: hands each part of the task to the right one and writes the final answer."
	researchDesc   = "Finds facts and figures with a web search."
	mathDesc       = "Does arithmetic exactly with calculator tools."
	// supervisorInput is the job of the supervisor and supervisor-agenttool flows.
	supervisorInput = "Find US and NY GDP in 2024. What % of US GDP was NY?"
)

func init() {
	register(Flow{
		Name:  "supervisor",
		Title: "Supervisor: research, then math",
		Group: GroupTransfer,
		Plain: "A supervisor hands a question to a researcher, then to a calculator, and answers with what they found. Each specialist hands control back when it is done: four handoffs, each with why it happened and what the next agent was fed.",
		Description: "eino's prebuilt supervisor (adk/prebuilt/supervisor). Underneath it is agent transfer, " +
			"not AgentTool: SetSubAgents gives the supervisor a transfer_to_agent tool, and each specialist is " +
			"wrapped with AgentWithDeterministicTransferTo, so when it finishes eino itself emits a transfer back " +
			"to the supervisor. All agents share one history; a specialist sees the others' messages as " +
			"\"For context:\" user messages.",
		DefaultInput: supervisorInput,
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "supervisor", Description: supervisorDesc, Kind: traces.AgentSupervisor, Tools: []string{"transfer_to_agent"}},
			// The deterministic-transfer wrapper hides the specialists from SetSubAgents, so eino
			// gives them no transfer_to_agent tool: going back is not their choice.
			{Name: "research_agent", Description: researchDesc, Kind: traces.AgentChatModel, Parent: "supervisor",
				Relation: traces.RelationSubAgent, Tools: []string{"search"}},
			{Name: "math_agent", Description: mathDesc, Kind: traces.AgentChatModel, Parent: "supervisor",
				Relation: traces.RelationSubAgent, Tools: []string{"add", "multiply", "divide"}},
		},
		Scripts: map[string]Script{
			"supervisor": NewScript(
				SayAndDo("I need both GDP figures first, so I'm handing this to research_agent.", Transfer("research_agent")),
				SayAndDo("Got the figures: US $29.18T and New York $2.297T. math_agent will work out the share.", Transfer("math_agent")),
				Say("In 2024 the US GDP was about $29.18 trillion and New York State's about $2.297 trillion, "+
					"so New York produced roughly 7.87% of US GDP."),
			),
			"research_agent": researchScript,
			"math_agent":     mathScript,
		},
		Build: buildSupervisor,
	})
}

// The specialists' scripts, shared by the supervisor and supervisor-agenttool flows.
var (
	researchScript = NewScript(
		Do(Call("search", map[string]string{"query": "US GDP 2024"}),
			Call("search", map[string]string{"query": "New York state GDP 2024"})),
		Say("US GDP in 2024: 29.18 trillion USD (current dollars, BEA). "+
			"New York State GDP in 2024: 2.297 trillion USD (BEA)."),
	)
	mathScript = NewScript(
		Do(Call("divide", map[string]float64{"a": 2.297, "b": 29.18})),
		Computed(percentOfLastResult),
		QuoteToolResult("2.297 / 29.18 = 0.078718, and 0.078718 × 100 = %s. "+
			"New York's GDP was about 7.87%% of US GDP in 2024."),
	)
)

// buildSupervisor builds the supervisor flow anew.
func buildSupervisor(ctx context.Context, models ModelFor) (adk.Agent, error) {
	boss, err := NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "supervisor",
		Description: supervisorDesc,
		Instruction: "You are a supervisor managing two agents: research_agent for looking facts up and " +
			"math_agent for calculations. Assign work to one agent at a time and do no work yourself. " +
			"When you have everything, answer the user.",
	})
	if err != nil {
		return nil, err
	}
	research, err := newResearchAgent(ctx, models)
	if err != nil {
		return nil, err
	}
	calc, err := newMathAgent(ctx, models)
	if err != nil {
		return nil, err
	}
	root, err := supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: []adk.Agent{research, calc}})
	if err != nil {
		return nil, fmt.Errorf("build supervisor: %w", err)
	}
	return root, nil
}

// newResearchAgent builds research_agent with its search tool.
func newResearchAgent(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var box toolBox
	addTool(&box, "search", "Search the web and return the most relevant snippets.", searchEconomy)
	if box.err != nil {
		return nil, box.err
	}
	return NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "research_agent",
		Description: researchDesc,
		Instruction: "You are a research agent. Use the search tool to find facts, then report them with their sources. " +
			"Do not do calculations.",
		ToolsConfig: box.toolsConfig(),
	})
}

// newMathAgent builds math_agent with calculator tools.
func newMathAgent(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var box toolBox
	addTool(&box, "add", "Add two numbers: a + b.", func(_ context.Context, in operands) (string, error) {
		return formatNumber(in.A + in.B), nil
	})
	addTool(&box, "multiply", "Multiply two numbers: a × b.", func(_ context.Context, in operands) (string, error) {
		return formatNumber(in.A * in.B), nil
	})
	addTool(&box, "divide", "Divide a by b.", func(_ context.Context, in operands) (string, error) {
		if in.B == 0 {
			return "", errors.New("division by zero")
		}
		return formatNumber(in.A / in.B), nil
	})
	if box.err != nil {
		return nil, box.err
	}
	return NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "math_agent",
		Description: mathDesc,
		Instruction: "You are a math agent. Use your tools for every calculation and show the steps.",
		ToolsConfig: box.toolsConfig(),
	})
}

// operands are a calculator tool's arguments.
type operands struct {
	A float64 `json:"a" jsonschema:"description=the first operand"`
	B float64 `json:"b" jsonschema:"description=the second operand"`
}

// formatNumber rounds to 6 decimals, as a calculator display would, so results read well.
func formatNumber(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'f', -1, 64)
}

// searchQuery is the search tool's argument.
type searchQuery struct {
	Query string `json:"query" jsonschema:"description=what to search for"`
}

// searchEconomy answers the best match in economyCorpus.
func searchEconomy(_ context.Context, q searchQuery) (string, error) {
	if found := economyCorpus.search(q.Query, 1); len(found) > 0 {
		return found[0], nil
	}
	return fmt.Sprintf("No results for %q.", q.Query), nil
}

// percentOfLastResult is math_agent's second move: multiply the quotient its divide call
// returned by 100. Reading the real tool result keeps the script honest if the tool changes.
func percentOfLastResult(input []*schema.Message) Reply {
	var quotient float64
	if err := json.Unmarshal([]byte(LastToolResult(input)), &quotient); err != nil {
		return Reply{Text: "I could not read the quotient: " + err.Error()}
	}
	return Reply{ToolCalls: []ToolCall{Call("multiply", map[string]float64{"a": quotient, "b": 100})}}
}
