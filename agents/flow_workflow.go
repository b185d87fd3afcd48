package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions and session key of the workflow flow.
const (
	launchDesc     = "Prepares a product launch: scouting, then drafting until approved, then the announcement."
	scoutingDesc   = "Runs both scouts side by side."
	marketDesc     = "Finds what competitors charge."
	specsDesc      = "Reads the product's specifications."
	draftingDesc   = "Drafts and reviews, round after round, until the critic approves."
	copywriterDesc = "Writes the launch announcement."
	criticDesc     = "Reviews each draft; approves one that has everything."
	announcerDesc  = "Publishes the approved announcement."
	approvedKey    = "approved_draft" // set by approve_draft, read by announcer's instruction
	maxDrafts      = 5                // the loop's MaxIterations: the critic approves before
)

func init() {
	register(Flow{
		Name:  "workflow",
		Title: "Workflow: parallel scouts, a draft loop ended by BreakLoop, then a last step",
		Group: GroupWorkflow,
		Plain: "Two scouts work side by side, a writer and a critic go round until the critic approves, then an announcer publishes.",
		Description: "Workflow agents, which emit nothing of their own: a sequential agent (launch) runs a parallel " +
			"agent (scouting: market_scout and tech_scout side by side, in branches of their own), then a loop " +
			"agent (drafting: copywriter, then critic, again and again), then announcer. The loop runs up to 5 " +
			"times; in the third round the critic's approve_draft tool sends adk.NewBreakLoopAction through " +
			"adk.SendToolGenAction, the loop stops after 3 iterations and the sequence goes on. Each round the " +
			"agents are fed all earlier rounds as \"For context:\" messages.",
		DefaultInput: "Draft the launch announcement for the Aurora e-bike",
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "launch", Description: launchDesc, Kind: traces.AgentSequential},
			{Name: "scouting", Description: scoutingDesc, Kind: traces.AgentParallel, Parent: "launch", Relation: traces.RelationSubAgent},
			{Name: "market_scout", Description: marketDesc, Kind: traces.AgentChatModel, Parent: "scouting",
				Relation: traces.RelationSubAgent, Tools: []string{"search_market"}},
			{Name: "tech_scout", Description: specsDesc, Kind: traces.AgentChatModel, Parent: "scouting",
				Relation: traces.RelationSubAgent, Tools: []string{"read_specs"}},
			{Name: "drafting", Description: draftingDesc, Kind: traces.AgentLoop, Parent: "launch", Relation: traces.RelationSubAgent},
			{Name: "copywriter", Description: copywriterDesc, Kind: traces.AgentChatModel, Parent: "drafting",
				Relation: traces.RelationSubAgent},
			{Name: "critic", Description: criticDesc, Kind: traces.AgentChatModel, Parent: "drafting",
				Relation: traces.RelationSubAgent, Tools: []string{"review_draft", "approve_draft"}},
			{Name: "announcer", Description: announcerDesc, Kind: traces.AgentChatModel, Parent: "launch",
				Relation: traces.RelationSubAgent},
		},
		Scripts: map[string]Script{
			"market_scout": NewScript(
				Do(Call("search_market", searchArg{Query: "premium e-bike prices 2025"})),
				QuoteToolResult("Competitors: %s"),
			),
			"tech_scout": NewScript(
				Do(Call("read_specs", productArg{Product: "Aurora"})),
				QuoteToolResult("Specifications: %s"),
			),
			"copywriter": NewScript(
				Say("Meet Aurora, the e-bike that goes the distance."),
				Say("Meet Aurora: 120 km on one charge, for €2,490."),
				Say("Meet Aurora: 120 km on one charge, for €2,490. In shops on 12 May."),
			),
			// Each round takes two moves (review, then verdict); the last round's verdict ends the loop.
			"critic": NewScript(slices.Repeat([]Step{Computed(criticMove)}, 6)...),
			"announcer": NewScript(
				Computed(func(input []*schema.Message) Reply {
					_, draft, _ := strings.Cut(systemPromptText(input), "Approved announcement: ")
					return Reply{Text: "Published: " + draft}
				}),
			),
		},
		Build: buildWorkflow,
	})
}

// buildWorkflow builds the workflow flow anew.
func buildWorkflow(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var mt, tt, ct toolBox
	addTool(&mt, "search_market", "Search market data.", searchMarket)
	addTool(&tt, "read_specs", "Read a product's specifications.", readSpecs)
	addTool(&ct, "review_draft", "List what a draft announcement still lacks.", reviewDraft)
	addTool(&ct, "approve_draft", "Approve the draft: ends the drafting rounds.", approveDraft)
	if err := errors.Join(mt.err, tt.err, ct.err); err != nil {
		return nil, err
	}
	criticTools := ct.toolsConfig()
	// Without ReturnDirectly the critic's model would be asked again after the break.
	criticTools.ReturnDirectly = map[string]bool{"approve_draft": true}
	confs := []adk.ChatModelAgentConfig{
		{Name: "market_scout", Description: marketDesc, ToolsConfig: mt.toolsConfig(),
			Instruction: "You find competitors' prices with search_market and report them in one line."},
		{Name: "tech_scout", Description: specsDesc, ToolsConfig: tt.toolsConfig(),
			Instruction: "You read the product's specifications with read_specs and report the key figures."},
		{Name: "copywriter", Description: copywriterDesc,
			Instruction: "You write a short launch announcement, improving it after each review."},
		{Name: "critic", Description: criticDesc, ToolsConfig: criticTools,
			Instruction: "You review the latest draft with review_draft. When it lacks nothing, approve it with approve_draft."},
		// eino's prompt builder fills {approved_draft} from the session.
		{Name: "announcer", Description: announcerDesc,
			Instruction: "You publish the announcement as approved. Approved announcement: {" + approvedKey + "}"},
	}
	built, err := newChatAgents(ctx, models, confs...)
	if err != nil {
		return nil, err
	}
	agent := map[string]adk.Agent{}
	for i, c := range confs {
		agent[c.Name] = built[i]
	}
	scouting, err := adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: "scouting", Description: scoutingDesc,
		SubAgents: []adk.Agent{agent["market_scout"], agent["tech_scout"]}})
	if err != nil {
		return nil, fmt.Errorf("build scouting: %w", err)
	}
	drafting, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "drafting", Description: draftingDesc,
		SubAgents: []adk.Agent{agent["copywriter"], agent["critic"]}, MaxIterations: maxDrafts})
	if err != nil {
		return nil, fmt.Errorf("build drafting: %w", err)
	}
	launch, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "launch", Description: launchDesc,
		SubAgents: []adk.Agent{scouting, drafting, agent["announcer"]}})
	if err != nil {
		return nil, fmt.Errorf("build launch: %w", err)
	}
	return launch, nil
}

// searchMarket answers canned competitor prices, whatever the query.
func searchMarket(_ context.Context, _ searchArg) (string, error) {
	return "Vela One €2,690 (100 km); Strada E €2,350 (80 km); Nimbus S €2,990 (130 km).", nil
}

// productArg is read_specs's argument.
type productArg struct {
	Product string `json:"product" jsonschema:"description=the product's name"`
}

// readSpecs answers the canned specifications of the Aurora.
func readSpecs(_ context.Context, in productArg) (string, error) {
	if !strings.EqualFold(in.Product, "aurora") {
		return fmt.Sprintf("No specifications for %q.", in.Product), nil
	}
	return "Aurora: 120 km range, 21 kg, price €2,490, in shops on 12 May.", nil
}

// draftArg is the argument of the critic's tools.
type draftArg struct {
	Draft string `json:"draft" jsonschema:"description=the draft announcement"`
}

// draftNeeds is what review_draft looks for in a draft, and what it says when it is missing.
var draftNeeds = []struct{ mark, missing string }{
	{"km", "the range"},
	{"€", "the price"},
	{"May", "the date it is in shops"},
}

// noIssues is review_draft's answer to a draft that lacks nothing.
const noIssues = "Nothing is missing."

// reviewDraft lists what the draft lacks.
func reviewDraft(_ context.Context, in draftArg) (string, error) {
	var missing []string
	for _, n := range draftNeeds {
		if !strings.Contains(in.Draft, n.mark) {
			missing = append(missing, n.missing)
		}
	}
	if len(missing) == 0 {
		return noIssues, nil
	}
	return "Missing: " + strings.Join(missing, ", ") + ".", nil
}

// approveDraft stores the approved draft in the session and ends the enclosing loop.
func approveDraft(ctx context.Context, in draftArg) (string, error) {
	adk.AddSessionValue(ctx, approvedKey, in.Draft)
	if err := adk.SendToolGenAction(ctx, "approve_draft", adk.NewBreakLoopAction("critic")); err != nil {
		return "", fmt.Errorf("approve_draft: %w", err)
	}
	return "Approved.", nil
}

// criticMove is each of the critic's moves: review a new draft, then approve it or say what it
// lacks, as the last message of its input asks.
func criticMove(input []*schema.Message) Reply {
	last := input[len(input)-1]
	draft := latestDraft(input)
	switch {
	case last.Role == schema.Tool && last.Content == noIssues:
		return Reply{ToolCalls: []ToolCall{Call("approve_draft", draftArg{Draft: draft})}}
	case last.Role == schema.Tool:
		return Reply{Text: "Not yet. " + last.Content}
	}
	return Reply{ToolCalls: []ToolCall{Call("review_draft", draftArg{Draft: draft})}}
}

// latestDraft is the copywriter's newest draft, as eino hands it to the critic ("For context:
// [copywriter] said: ...").
func latestDraft(input []*schema.Message) string {
	const said = "For context: [copywriter] said: "
	for i := len(input) - 1; i >= 0; i-- {
		if text, ok := strings.CutPrefix(input[i].Content, said); ok {
			return strings.TrimSuffix(text, ".")
		}
	}
	return ""
}
