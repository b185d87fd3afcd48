package realapps

import (
	"context"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/deep"

	"github.com/baton-dev/baton/agents"
)

// deepTask is eino's prebuilt deep agent, streaming: the lead keeps a todo list (write_todos)
// and delegates to two sub-agents through its task tool, then answers.
var deepTask = App{
	Name:    "deep",
	Queries: []string{"What should we charge for the Pro plan of our notes app?"},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		prices := mustTool(t, "search_prices", "What products cost per month.", func(_ context.Context, in args) (string, error) {
			return "Notion $10, Evernote $14.99, Obsidian Sync $8", nil
		})
		margin := mustTool(t, "margin_at", "Gross margin at a price.", func(_ context.Context, in args) (string, error) {
			return "76% at $9.99", nil
		})
		researcher := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "market_researcher", Description: "Finds competitors' prices.", Instruction: "Find prices.",
			Model: scripted(t, "market_researcher",
				agents.Do(agents.Call("search_prices", args{Query: "Pro plans of note apps"})),
				agents.QuoteToolResult("Competitors: %s."),
			),
			ToolsConfig: toolsOf(prices),
		})
		analyst := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "pricing_analyst", Description: "Recommends prices.", Instruction: "Recommend a price.",
			Model: scripted(t, "pricing_analyst",
				agents.Do(agents.Call("margin_at", args{Query: "$9.99 at $2.40 cost"})),
				agents.QuoteToolResult("Charge $9.99: %s."),
			),
			ToolsConfig: toolsOf(margin),
		})
		todos := func(first, second string) agents.ToolCall {
			return agents.Call("write_todos", map[string][]deep.TODO{"todos": {
				{Content: "Find competitors' prices", ActiveForm: "Finding competitors' prices", Status: first},
				{Content: "Recommend a price", ActiveForm: "Recommending a price", Status: second},
			}})
		}
		task := func(agent, description string) agents.ToolCall {
			return agents.Call("task", map[string]string{"subagent_type": agent, "description": description})
		}
		root, err := deep.New(ctx, &deep.Config{
			Name: "pricing_lead", Description: "Leads pricing studies.", Instruction: "Plan with write_todos; delegate with task.",
			ChatModel: scripted(t, "pricing_lead",
				agents.Do(todos("in_progress", "pending")),
				agents.SayAndDo("First, the competitors.", task("market_researcher", "List the Pro prices of Notion, Evernote, Obsidian.")),
				agents.Do(todos("completed", "in_progress")),
				agents.Do(task("pricing_analyst", "Competitors charge $8-$14.99; our cost is $2.40. Recommend a price.")),
				agents.Do(todos("completed", "completed")),
				agents.Say("Charge $9.99 a month for Pro: a 76% margin, below Notion and Evernote."),
			),
			SubAgents: []adk.Agent{researcher, analyst}, WithoutGeneralSubAgent: true, MaxIteration: 20,
		})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true}), nil
	},
}
