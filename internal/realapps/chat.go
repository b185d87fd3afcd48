package realapps

import (
	"context"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
)

// streamingChat is the most common shape: one ChatModelAgent with a tool, streaming its replies,
// the app reading each streamed message itself, two questions on one Runner.
var streamingChat = App{
	Name:    "streaming-chat",
	Queries: []string{"What is the weather in Paris?", "And in Oslo?"},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		weather := mustTool(t, "get_weather", "Current weather of a city.", func(_ context.Context, in args) (string, error) {
			return map[string]string{"Paris": "18°C, light rain", "Oslo": "4°C, clear"}[in.Query], nil
		})
		forecaster := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "forecaster", Description: "Answers weather questions.", Instruction: "Answer with the current weather.",
			Model: scripted(t, "forecaster",
				agents.SayAndDo("Let me look Paris up.", agents.Call("get_weather", args{Query: "Paris"})),
				agents.QuoteToolResult("Paris: %s. Take an umbrella."),
				agents.Do(agents.Call("get_weather", args{Query: "Oslo"})),
				agents.QuoteToolResult("Oslo: %s."),
			),
			ToolsConfig: toolsOf(weather),
		})
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: forecaster, EnableStreaming: true}), nil
	},
}

// chat is a non-streaming ChatModelAgent root that looks things up with a tool and hands some
// questions to a sub-agent its model chooses (transfer_to_agent), two questions on one Runner.
var chat = App{
	Name:    "chat",
	Queries: []string{"Do you have Dune in stock?", "Can I return a book I bought last week?"},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		stock := mustTool(t, "search_stock", "Finds a book in stock.", func(_ context.Context, in args) (string, error) {
			return in.Query + ": 3 copies, shelf B4", nil
		})
		returns := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "returns_agent", Description: "Handles returns and refunds.", Instruction: "Explain the return policy.",
			Model: scripted(t, "returns_agent", agents.Say("Yes: books can be returned within 30 days with the receipt.")),
		})
		clerk := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "clerk", Description: "Answers customers of a bookshop.", Instruction: "Help the customer.",
			Model: scripted(t, "clerk",
				agents.Do(agents.Call("search_stock", args{Query: "Dune"})),
				agents.QuoteToolResult("We have it. %s."),
				agents.Do(agents.Transfer("returns_agent")),
			),
			ToolsConfig: toolsOf(stock),
		})
		root, err := adk.SetSubAgents(ctx, clerk, []adk.Agent{returns})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}), nil
	},
}
