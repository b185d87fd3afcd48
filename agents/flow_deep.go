package agents

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/deep"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the deep flow.
const (
	leadDesc           = "Plans a pricing study with a todo list and delegates each part through its task tool."
	marketResearchDesc = "Finds what competitors charge."
	pricingDesc        = "Turns competitor prices and costs into a price recommendation."
	// DeepAnswer is pricing_lead's final answer.
	DeepAnswer = "Charge $9.99 a month for Pro: below Notion ($10) and Evernote ($14.99), above Obsidian Sync ($8), at a 76% gross margin."
)

func init() {
	register(Flow{
		Name:  "deep",
		Title: "Deep agent: a todo list in the session, sub-agents through the task tool",
		Group: GroupAgentTool,
		Plain: "A lead keeps a todo list and gives each task to a helper that sees only that task.",
		Description: "eino's prebuilt deep agent (adk/prebuilt/deep): pricing_lead is a ChatModelAgent with two " +
			"tools eino adds. write_todos keeps its plan in the session (deep_agent_session_key_todos), and task " +
			"runs a sub-agent, named by subagent_type, as an AgentTool: market_researcher and pricing_analyst each " +
			"get only the task's description, in a history of their own. Look at the session's todo list move from " +
			"pending to completed, and at the two sub-agents inside task's AgentTool frames.",
		DefaultInput: "What should we charge for the Pro plan of our note-taking app?",
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "pricing_lead", Description: leadDesc, Kind: traces.AgentChatModel, Tools: []string{"write_todos", "task"}},
			{Name: "market_researcher", Description: marketResearchDesc, Kind: traces.AgentChatModel, Parent: "pricing_lead",
				Relation: traces.RelationAgentTool, Tools: []string{"search_prices"}},
			{Name: "pricing_analyst", Description: pricingDesc, Kind: traces.AgentChatModel, Parent: "pricing_lead",
				Relation: traces.RelationAgentTool, Tools: []string{"margin_at"}},
		},
		Scripts: map[string]Script{
			"pricing_lead": NewScript(
				Do(writeTodos("in_progress", "pending")),
				SayAndDo("First, what the competitors charge.", delegate("market_researcher",
					"List the monthly price of the Pro plans of Notion, Evernote and Obsidian Sync.")),
				Do(writeTodos("completed", "in_progress")),
				SayAndDo("Now a price from those and our costs.", delegate("pricing_analyst",
					"Competitors charge $10, $14.99 and $8 a month. Our cost is $2.40 per Pro user a month. Recommend a price.")),
				Do(writeTodos("completed", "completed")),
				Say(DeepAnswer),
			),
			"market_researcher": NewScript(
				Do(Call("search_prices", productArg{Product: "Pro plans of Notion, Evernote, Obsidian Sync"})),
				QuoteToolResult("Competitor prices: %s"),
			),
			"pricing_analyst": NewScript(
				Do(Call("margin_at", priceArg{Price: 9.99, Cost: 2.40})),
				QuoteToolResult("At $9.99 we undercut two of three competitors and keep %s."),
			),
		},
		Build: buildDeep,
	})
}

// deepTodos are the pricing lead's todo items, in order.
var deepTodos = [2]struct{ content, active string }{
	{"Find competitors' Pro prices", "Finding competitors' Pro prices"},
	{"Recommend a Pro price", "Recommending a Pro price"},
}

// writeTodos is the call of the deep agent's write_todos tool with the two items at these
// statuses.
func writeTodos(first, second string) ToolCall {
	return Call("write_todos", map[string][]deep.TODO{"todos": {
		{Content: deepTodos[0].content, ActiveForm: deepTodos[0].active, Status: first},
		{Content: deepTodos[1].content, ActiveForm: deepTodos[1].active, Status: second},
	}})
}

// delegate is the call of the deep agent's task tool, which runs sub-agent agent on description.
func delegate(agent, description string) ToolCall {
	return Call("task", map[string]string{"subagent_type": agent, "description": description})
}

// buildDeep builds the deep flow anew.
func buildDeep(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var mt, pt toolBox
	addTool(&mt, "search_prices", "Look up what products cost per month.", func(context.Context, productArg) (string, error) {
		return "Notion Plus $10, Evernote Personal $14.99, Obsidian Sync $8 (monthly, billed monthly).", nil
	})
	addTool(&pt, "margin_at", "Gross margin of a price given the cost per user.", func(_ context.Context, in priceArg) (string, error) {
		if in.Price <= 0 {
			return "", fmt.Errorf("margin_at: price must be positive, not %v", in.Price)
		}
		return fmt.Sprintf("a %.0f%% gross margin", (in.Price-in.Cost)/in.Price*100), nil
	})
	if err := errors.Join(mt.err, pt.err); err != nil {
		return nil, err
	}
	subs, err := newChatAgents(ctx, models, adk.ChatModelAgentConfig{
		Name: "market_researcher", Description: marketResearchDesc, ToolsConfig: mt.toolsConfig(),
		Instruction: "You find competitors' prices with search_prices.",
	}, adk.ChatModelAgentConfig{
		Name: "pricing_analyst", Description: pricingDesc, ToolsConfig: pt.toolsConfig(),
		Instruction: "You recommend prices; check the margin with margin_at.",
	})
	if err != nil {
		return nil, err
	}
	lead, err := models("pricing_lead")
	if err != nil {
		return nil, fmt.Errorf("model for agent pricing_lead: %w", err)
	}
	root, err := deep.New(ctx, &deep.Config{
		Name: "pricing_lead", Description: leadDesc, ChatModel: lead, SubAgents: subs,
		Instruction: "You lead pricing studies: plan with write_todos, delegate each part with task.",
		// eino's general-purpose sub-agent would share pricing_lead's model; this flow has none.
		WithoutGeneralSubAgent: true,
		MaxIteration:           20,
	})
	if err != nil {
		return nil, fmt.Errorf("build deep agent pricing_lead: %w", err)
	}
	return root, nil
}

// priceArg is margin_at's argument.
type priceArg struct {
	Price float64 `json:"price" jsonschema:"description=the monthly price in dollars"`
	Cost  float64 `json:"cost" jsonschema:"description=the monthly cost per user in dollars"`
}
