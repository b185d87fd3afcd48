package batontest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/batontest"
	"github.com/baton-dev/baton/examples/golden"
	"github.com/baton-dev/baton/traces"
)

// TestRunTellsTheHandoffStory: a recorded run of the helpdesk says who handed what to whom.
func TestRunTellsTheHandoffStory(t *testing.T) {
	runner, err := golden.New(context.Background(), golden.Instructed)
	if err != nil {
		t.Fatal(err)
	}
	run := batontest.Record(t, runner, "I forgot my password.")
	if got := run.Route(); got != "triage>tech_agent" {
		t.Errorf("Route = %q, want triage>tech_agent", got)
	}
	if tr := run.Transfers(); len(tr) != 1 || tr[0].From != "triage" || tr[0].To != "tech_agent" || tr[0].Mode != traces.TransferLLM {
		t.Errorf("Transfers = %+v, want one llm transfer from triage to tech_agent", tr)
	}
	fed := run.Fed("tech_agent")
	if !slices.ContainsFunc(fed, func(m traces.Message) bool { return m.Content == "I forgot my password." }) ||
		!slices.ContainsFunc(fed, func(m traces.Message) bool { return strings.HasPrefix(m.Content, "For context: [triage]") }) {
		t.Errorf("Fed(tech_agent) = %+v, want the request and triage's words for context", fed)
	}
	if got := run.ToolCalls("triage"); !slices.Equal(got, []string{adk.TransferToAgentToolName}) {
		t.Errorf("ToolCalls(triage) = %v", got)
	}
	if author, text := run.Answer(); author != "tech_agent" || text != "tech_agent here: it is taken care of." {
		t.Errorf("Answer = %s %q", author, text)
	}
	if status, _ := run.Status(); status != traces.StatusCompleted {
		t.Errorf("Status = %s", status)
	}
	if got := run.Findings("info"); len(got) != 0 {
		t.Errorf("Findings on a healthy run: %v", got)
	}
	story := run.Story()
	for _, want := range []string{"route: triage > tech_agent", "1. triage, as the root, fed 1 from the user", "   hands off to tech_agent (llm)",
		"2. tech_agent, by transfer from triage, fed 1 from the user, 2 from other agents (For context:)", `answer by tech_agent: "tech_agent here: it is taken care of."`} {
		if !strings.Contains(story, want+"\n") {
			t.Errorf("the story lacks %q:\n%s", want, story)
		}
	}
}

// TestFindingsNameHandoffBugs: the linter's findings reach a test: here a transfer eino refused.
func TestFindingsNameHandoffBugs(t *testing.T) {
	flow, err := agents.Lookup("transfer-unknown")
	if err != nil {
		t.Fatal(err)
	}
	root, err := flow.Build(context.Background(), flow.ScriptedModels(nil))
	if err != nil {
		t.Fatal(err)
	}
	run := batontest.Record(t, adk.NewRunner(context.Background(), adk.RunnerConfig{Agent: root}), flow.DefaultInput)
	got := run.Findings("warning")
	if len(got) != 1 || !strings.Contains(got[0], "warning refused-transfer: eino refused helpdesk's transfer to refunds_agent") {
		t.Errorf("Findings = %q, want the refused transfer", got)
	}
	if status, _ := run.Status(); status != traces.StatusFailed || !strings.Contains(run.Story(), "hands off to refunds_agent (llm), refused") {
		t.Errorf("the story of a refused transfer:\n%s", run.Story())
	}
}
