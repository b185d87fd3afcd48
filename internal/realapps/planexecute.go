package realapps

import (
	"context"
	"errors"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/planexecute"

	"github.com/baton-dev/baton/agents"
)

// planExecute is eino's prebuilt plan-execute, streaming: the planner plans two steps, the
// executor carries each out with a tool, the replanner replans once and then responds, which
// breaks the loop.
var planExecute = App{
	Name:    "plan-execute",
	Queries: []string{"How much is the cheapest return flight Berlin-Lisbon in US dollars?"},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		flights := mustTool(t, "search_flights", "Finds return flights.", func(_ context.Context, in args) (string, error) {
			return "€186 with TAP, 14-16 March", nil
		})
		convert := mustTool(t, "convert_currency", "Converts euros to dollars.", func(_ context.Context, in args) (string, error) {
			return "$200.88", nil
		})
		planner, err1 := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{
			ToolCallingChatModel: scripted(t, "planner", agents.Do(agents.Call("plan", map[string][]string{"steps": {
				"Find the cheapest return flight Berlin-Lisbon.", "Convert its price to US dollars.",
			}}))),
		})
		executor, err2 := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{
			Model: scripted(t, "executor",
				agents.Do(agents.Call("search_flights", args{Query: "Berlin-Lisbon return"})),
				agents.QuoteToolResult("Cheapest: %s."),
				agents.Do(agents.Call("convert_currency", args{Query: "€186"})),
				agents.QuoteToolResult("€186 is %s."),
			),
			ToolsConfig: toolsOf(flights, convert),
		})
		replanner, err3 := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{
			ChatModel: scripted(t, "replanner",
				agents.Do(agents.Call("plan", map[string][]string{"steps": {"Convert €186 to US dollars."}})),
				agents.Do(agents.Call("respond", map[string]string{"response": "The cheapest return flight costs €186, about $200.88."})),
			),
		})
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, err
		}
		root, err := planexecute.New(ctx, &planexecute.Config{Planner: planner, Executor: executor, Replanner: replanner, MaxIterations: 5})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true}), nil
	},
}
