package realapps

import (
	"context"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
)

// sequential is a Sequential root of two streaming chat agents: the first stores its draft in
// the session (OutputKey), the second edits it.
var sequential = App{
	Name:    "sequential",
	Queries: []string{"Write a two-line note announcing Friday's office move."},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		writer := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "writer", Description: "Drafts short notes.", Instruction: "Draft the note.",
			Model:     scripted(t, "writer", agents.Say("We move on Friday. Pack your desks by Thursday noon.")),
			OutputKey: "draft",
		})
		editor := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "editor", Description: "Edits drafts.", Instruction: "Edit the draft you are given.",
			Model: scripted(t, "editor", agents.Say("Office move on Friday: please pack your desk by Thursday, 12:00.")),
		})
		root, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{
			Name: "note_pipeline", Description: "Drafts, then edits a note.", SubAgents: []adk.Agent{writer, editor},
		})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true}), nil
	},
}

// loop is a reflection Loop root: a main agent answers, a critic reviews, and on the second
// round the critic's tool breaks the loop (ReturnDirectly, as eino's examples do).
var loop = App{
	Name:    "loop",
	Queries: []string{"Explain in one sentence what an embedding is."},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		finish := mustTool(t, "exit_and_summarize", "Ends the loop with a final summary.",
			func(ctx context.Context, in struct {
				Summary string `json:"summary"`
			}) (string, error) {
				if err := adk.SendToolGenAction(ctx, "exit_and_summarize", adk.NewBreakLoopAction("critic")); err != nil {
					return "", err
				}
				return in.Summary, nil
			})
		author := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "author", Description: "Answers the task.", Instruction: "Answer the task.",
			Model: scripted(t, "author",
				agents.Say("An embedding is a list of numbers."),
				agents.Say("An embedding is a vector of numbers that places similar things close together."),
			),
		})
		critic := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "critic", Description: "Reviews the answer.", Instruction: "Review; when it is good, call exit_and_summarize.",
			Model: scripted(t, "critic",
				agents.Say("Too vague: say what the numbers are for."),
				agents.Do(agents.Call("exit_and_summarize", map[string]string{
					"summary": "Good: an embedding is a vector that places similar things close together."})),
			),
			ToolsConfig: adk.ToolsConfig{
				ToolsNodeConfig: toolsOf(finish).ToolsNodeConfig,
				ReturnDirectly:  map[string]bool{"exit_and_summarize": true},
			},
		})
		root, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{
			Name: "reflection", Description: "Answers and reviews until the answer is good.",
			SubAgents: []adk.Agent{author, critic}, MaxIterations: 5,
		})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true}), nil
	},
}

// parallel is a Parallel root of three streaming chat agents, one with a tool, whose events
// interleave.
var parallel = App{
	Name:    "parallel",
	Queries: []string{"Plan a weekend in Lisbon."},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		flights := mustTool(t, "search_flights", "Finds flights.", func(_ context.Context, in args) (string, error) {
			return "TP 541, Friday 18:05, €120 return", nil
		})
		agentsOf := []adk.Agent{
			mustChatAgent(ctx, &adk.ChatModelAgentConfig{
				Name: "flight_finder", Description: "Finds flights.", Instruction: "Find a flight.",
				Model: scripted(t, "flight_finder",
					agents.Do(agents.Call("search_flights", args{Query: "Lisbon, Friday to Sunday"})),
					agents.QuoteToolResult("Flight: %s."),
				),
				ToolsConfig: toolsOf(flights),
			}),
			mustChatAgent(ctx, &adk.ChatModelAgentConfig{
				Name: "hotel_finder", Description: "Finds hotels.", Instruction: "Find a hotel.",
				Model: scripted(t, "hotel_finder", agents.Say("Hotel: Casa do Largo, Alfama, €95 a night.")),
			}),
			mustChatAgent(ctx, &adk.ChatModelAgentConfig{
				Name: "guide", Description: "Suggests sights.", Instruction: "Suggest what to see.",
				Model: scripted(t, "guide", agents.Say("See: Belém tower on Saturday, LX Factory on Sunday.")),
			}),
		}
		root, err := adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{
			Name: "weekend_planner", Description: "Plans a weekend, all parts at once.", SubAgents: agentsOf,
		})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true}), nil
	},
}
