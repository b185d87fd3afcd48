package agents

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions and session keys of the pipeline flow.
const (
	collectorDesc   = "Collects the changes merged since the last release."
	writerDesc      = "Drafts the release notes from the changes."
	editorDesc      = "Leads the review team: has the draft checked, then publishes it."
	factCheckerDesc = "Checks each change against its pull request."
	changesKey      = "changes"          // collector's answer (OutputKey), read by writer's instruction
	draftKey        = "draft"            // writer's answer (OutputKey), read by editor's instruction
	verifiedKey     = "verified_changes" // set by verify_prs, read by publish_notes
	releaseVersion  = "v2.4.0"
)

func init() {
	register(Flow{
		Name:       "pipeline",
		Title:      "Pipeline: deterministic hand-offs into a team with a session of its own",
		OwnHistory: "its team runs with a session of its own, whose first agent is fed the team's input, not the pipeline's history",
		Group:      GroupDeterministic,
		Plain:      "Three stages hand the work on in a fixed order, no model choosing, the last into a review team that works in a session of its own.",
		Description: "Three stages chained with adk.AgentWithDeterministicTransferTo: collector hands on to writer, " +
			"writer to the review team, without any model choosing (dashed edges). writer, a plain stage, is fed " +
			"collector's messages as \"For context:\". The review team is a multi-agent (editor and fact_checker " +
			"transfer to each other by model), and eino runs a wrapped multi-agent in a session of its own: " +
			"editor's model input holds only the user's request, none of the earlier stages' messages. Session " +
			"values stay shared across that boundary: collector's answer (changes) fills writer's instruction, " +
			"writer's (draft) fills editor's, and fact_checker's verified_changes is what publish_notes publishes.",
		DefaultInput: "Write the release notes for " + releaseVersion,
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "collector", Description: collectorDesc, Kind: traces.AgentChatModel,
				Tools: []string{"list_merged_prs"}, OutputKey: changesKey},
			{Name: "writer", Description: writerDesc, Kind: traces.AgentChatModel, Parent: "collector",
				Relation: traces.RelationSubAgent, OutputKey: draftKey},
			{Name: "editor", Description: editorDesc, Kind: traces.AgentChatModel, Parent: "writer",
				Relation: traces.RelationSubAgent, Tools: []string{"publish_notes", "transfer_to_agent"}},
			{Name: "fact_checker", Description: factCheckerDesc, Kind: traces.AgentChatModel, Parent: "editor",
				Relation: traces.RelationSubAgent, Tools: []string{"verify_prs", "transfer_to_agent"}},
		},
		Scripts: map[string]Script{
			"collector": NewScript(
				Do(Call("list_merged_prs", releaseArg{Since: "v2.3.0"})),
				Say("Merged since v2.3.0: #412 rate limiting per API key; #418 faster JSON encoding; #421 fix for the "+
					"timezone bug in reports."),
			),
			"writer": NewScript(
				Say("## " + releaseVersion + "\n- Rate limiting per API key (#412)\n- Faster JSON encoding (#418)\n" +
					"- Reports no longer shift by an hour across time zones (#421)"),
			),
			"editor": NewScript(
				SayAndDo("Before this goes out, fact_checker checks the three changes against their pull requests.",
					Transfer("fact_checker")),
				Computed(publishDraft),
				QuoteToolResult("The release notes for "+releaseVersion+" are out: %s"),
			),
			"fact_checker": NewScript(
				Do(Call("verify_prs", prsArg{Numbers: []int{412, 418, 421}})),
				Computed(func(input []*schema.Message) Reply {
					return Reply{Text: "Checked: " + LastToolResult(input), ToolCalls: []ToolCall{Transfer("editor")}}
				}),
			),
		},
		Build: buildPipeline,
	})
}

// buildPipeline builds the pipeline flow anew: collector -> writer -> [editor <-> fact_checker],
// each arrow between stages a deterministic transfer.
func buildPipeline(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var ct, et, ft toolBox
	addTool(&ct, "list_merged_prs", "List the pull requests merged since a release.", listMergedPRs)
	addTool(&et, "publish_notes", "Publish release notes, keeping only verified changes.", publishNotes)
	addTool(&ft, "verify_prs", "Check that pull requests are merged and match their description.", verifyPRs)
	if err := errors.Join(ct.err, et.err, ft.err); err != nil {
		return nil, err
	}
	confs := []adk.ChatModelAgentConfig{{
		Name: "collector", Description: collectorDesc,
		Instruction: "You collect the changes merged since the last release with list_merged_prs and list them briefly.",
		ToolsConfig: ct.toolsConfig(), OutputKey: changesKey,
	}, {
		// eino's prompt builder fills {changes} and {draft} from the session.
		Name: "writer", Description: writerDesc, OutputKey: draftKey,
		Instruction: "You draft release notes in Markdown from these changes:\n{" + changesKey + "}",
	}, {
		Name: "editor", Description: editorDesc, ToolsConfig: et.toolsConfig(),
		Instruction: "You review release notes: have fact_checker check the changes, then publish this draft:\n{" + draftKey + "}\n",
	}, {
		Name: "fact_checker", Description: factCheckerDesc, ToolsConfig: ft.toolsConfig(),
		Instruction: "You check changes against their pull requests with verify_prs, then hand back to editor.",
	}}
	stage, err := newChatAgents(ctx, models, confs...)
	if err != nil {
		return nil, err
	}
	team, err := adk.SetSubAgents(ctx, stage[2], []adk.Agent{stage[3]})
	if err != nil {
		return nil, fmt.Errorf("set sub-agents of editor: %w", err)
	}
	// Wrapping a multi-agent, not a single agent, is what gives it a session of its own. The team is
	// the last stage, so it hands on to no one.
	isolated := adk.AgentWithDeterministicTransferTo(ctx, &adk.DeterministicTransferConfig{Agent: team})
	next := []adk.Agent{isolated}
	for i := 1; i >= 0; i-- {
		name := confs[i+1].Name
		wrapped := adk.AgentWithDeterministicTransferTo(ctx, &adk.DeterministicTransferConfig{Agent: stage[i], ToAgentNames: []string{name}})
		chained, err := adk.SetSubAgents(ctx, wrapped, next)
		if err != nil {
			return nil, fmt.Errorf("chain %s to %s: %w", confs[i].Name, name, err)
		}
		next = []adk.Agent{chained}
	}
	return next[0], nil
}

// releaseArg is list_merged_prs's argument.
type releaseArg struct {
	Since string `json:"since" jsonschema:"description=the previous release's tag"`
}

// mergedPRs is the canned repository: pull request number -> title.
var mergedPRs = map[int]string{
	412: "Rate limiting per API key",
	418: "Faster JSON encoding (2.1x on large payloads)",
	421: "Fix reports shifted by one hour across time zones",
}

// listMergedPRs answers the canned merged pull requests, in order.
func listMergedPRs(_ context.Context, in releaseArg) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Merged since %s:", in.Since)
	for _, n := range []int{412, 418, 421} {
		fmt.Fprintf(&b, "\n#%d %s", n, mergedPRs[n])
	}
	return b.String(), nil
}

// prsArg is verify_prs's argument.
type prsArg struct {
	Numbers []int `json:"numbers" jsonschema:"description=the pull request numbers"`
}

// verifyPRs checks each number against the repository and stores the verified list in the
// session, where the next stage reads it.
func verifyPRs(ctx context.Context, in prsArg) (string, error) {
	var ok []string
	for _, n := range in.Numbers {
		if title, found := mergedPRs[n]; found {
			ok = append(ok, fmt.Sprintf("#%d %s", n, title))
		}
	}
	adk.AddSessionValue(ctx, verifiedKey, strings.Join(ok, "; "))
	return fmt.Sprintf("%d of %d changes verified: %s", len(ok), len(in.Numbers), strings.Join(ok, "; ")), nil
}

// notesArg is publish_notes's argument.
type notesArg struct {
	Version string `json:"version" jsonschema:"description=the release"`
	Notes   string `json:"notes" jsonschema:"description=the release notes, in Markdown"`
}

// publishNotes "publishes" the lines of the notes that name a change fact_checker verified (read
// from the session) and answers their address.
func publishNotes(ctx context.Context, in notesArg) (string, error) {
	verified, _ := adk.GetSessionValue(ctx, verifiedKey)
	list, _ := verified.(string)
	if list == "" {
		return "", errors.New("publish_notes: nothing was verified; run verify_prs first")
	}
	kept := 0
	for _, line := range strings.Split(in.Notes, "\n") {
		if n := strings.Index(line, "(#"); n >= 0 && strings.Contains(list, line[n+1:len(line)-1]) {
			kept++
		}
	}
	return fmt.Sprintf("https://example.com/releases/%s (%d verified changes)", in.Version, kept), nil
}

// publishDraft is editor's move once the changes are checked: publish the draft its instruction
// holds (filled from the session).
func publishDraft(input []*schema.Message) Reply {
	system := systemPromptText(input)
	_, draft, _ := strings.Cut(system, "publish this draft:\n")
	draft, _, _ = strings.Cut(draft, "\n\n")
	if draft == "" {
		return Reply{Text: "I have no draft to publish."}
	}
	return Reply{ToolCalls: []ToolCall{Call("publish_notes", notesArg{Version: releaseVersion, Notes: draft})}}
}
