package lint_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/traces"
)

// Each rule is held to a real eino run of a small app that has the problem: the run gives exactly
// that finding, pointing at the events that show it, and nothing else.

// record runs f on its default input under the recorder and returns the trace.
func record(t *testing.T, f agents.Flow) traces.Trace {
	t.Helper()
	return agentstest.Record(t, f, f.DefaultInput, agents.Options{})
}

// only checks that findings are exactly one of rule, whose events are of kinds, in order, and
// returns it.
func only(t *testing.T, tr traces.Trace, findings []lint.Finding, rule string, kinds ...traces.Kind) lint.Finding {
	t.Helper()
	if len(findings) != 1 || findings[0].Rule != rule {
		t.Fatalf("findings = %s, want one %s", describe(findings), rule)
	}
	f := findings[0]
	var got []traces.Kind
	for _, seq := range f.Seqs {
		got = append(got, tr.Events[seq-1].Kind)
	}
	if !slices.Equal(got, kinds) {
		t.Errorf("%s points at %v (%v), want events of kinds %v", rule, f.Seqs, got, kinds)
	}
	return f
}

// check is lint.Check, held to the reference: the rules as they were before they shared one
// index of the run must find exactly the same.
func check(t *testing.T, tr traces.Trace, cfg lint.Config) []lint.Finding {
	t.Helper()
	got := lint.Check(tr, cfg)
	if want := lint.ReferenceCheck(tr, cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("findings differ from the reference's:\n got %s\nwant %s", describe(got), describe(want))
	}
	return got
}

func describe(findings []lint.Finding) string {
	var b strings.Builder
	for _, f := range findings {
		fmt.Fprintf(&b, "\n  %s %s %v: %s", f.Rule, f.Severity, f.Seqs, f.Message)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// chatFlow is a flow whose root agent has sub-agents, all chat model agents run by scripts.
func chatFlow(name, input string, scripts map[string]agents.Script, build func(ctx context.Context, models agents.ModelFor) (adk.Agent, error)) agents.Flow {
	return agents.Flow{Name: name, DefaultInput: input, Scripts: scripts, Build: build}
}

// withSubAgents builds the chat agents confs (the first the root) and sets the others as its
// sub-agents; wrap, when set, wraps each sub-agent.
func withSubAgents(wrap func(context.Context, adk.Agent) adk.Agent, confs ...adk.ChatModelAgentConfig) func(context.Context, agents.ModelFor) (adk.Agent, error) {
	return func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
		var built []adk.Agent
		for _, c := range confs {
			a, err := agents.NewChatAgent(ctx, models, c)
			if err != nil {
				return nil, err
			}
			built = append(built, a)
		}
		subs := built[1:]
		if wrap != nil {
			for i, s := range subs {
				subs[i] = wrap(ctx, s)
			}
		}
		return adk.SetSubAgents(ctx, built[0], subs)
	}
}

func agent(name, instruction string, tools ...tool.BaseTool) adk.ChatModelAgentConfig {
	c := adk.ChatModelAgentConfig{Name: name, Description: "The " + name + ".", Instruction: instruction}
	if len(tools) > 0 {
		c.ToolsConfig = adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}}
	}
	return c
}

func TestPingPong(t *testing.T) {
	bounce := agents.Do(agents.Transfer("back_office"))
	tr := record(t, chatFlow("bounce", "Where is my parcel?", map[string]agents.Script{
		"front_desk":  agents.NewScript(bounce, bounce, bounce, agents.Say("It arrives tomorrow.")),
		"back_office": agents.NewScript(agents.Do(agents.Transfer("front_desk")), agents.Do(agents.Transfer("front_desk")), agents.Do(agents.Transfer("front_desk"))),
	}, withSubAgents(nil, agent("front_desk", "Answer."), agent("back_office", "Answer."))))
	f := only(t, tr, check(t, tr, lint.Config{}), "ping-pong",
		traces.KindTransfer, traces.KindTransfer, traces.KindTransfer, traces.KindTransfer, traces.KindTransfer, traces.KindTransfer)
	if f.Severity != lint.Warning || !slices.Equal(f.Agents, []string{"front_desk", "back_office"}) || f.Tokens == 0 {
		t.Errorf("ping-pong = %+v, want a warning naming both agents and the tokens the bouncing cost", f)
	}
	if got := check(t, tr, lint.Config{PingPongHops: 7}); len(got) != 0 {
		t.Errorf("with 7 hops allowed: %s, want none", describe(got))
	}
}

func TestLostRequest(t *testing.T) {
	// The target's history rewriter keeps the other agents' words and drops the user's.
	dropUser := func(ctx context.Context, a adk.Agent) adk.Agent {
		return adk.AgentWithOptions(ctx, a, adk.WithHistoryRewriter(func(_ context.Context, entries []*adk.HistoryEntry) ([]adk.Message, error) {
			var kept []adk.Message
			for _, e := range entries {
				if !e.IsUserInput {
					kept = append(kept, e.Message)
				}
			}
			return kept, nil
		}))
	}
	tr := record(t, chatFlow("rewritten", "Please clean room 12 before noon.", map[string]agents.Script{
		"reception":    agents.NewScript(agents.SayAndDo("Housekeeping will see to it.", agents.Transfer("housekeeping"))),
		"housekeeping": agents.NewScript(agents.Say("On it.")),
	}, withSubAgents(dropUser, agent("reception", "Route."), agent("housekeeping", "Clean."))))
	only(t, tr, check(t, tr, lint.Config{}), "lost-request", traces.KindAgentStarted, traces.KindTransfer)
}

// TestLostRequestInNestedAgentTools: inside AgentTool calls that nest, a transfer's request is
// the innermost call's, every time (the open calls were a map, and which of two enclosing calls
// gave the request was the map's order's).
func TestLostRequestInNestedAgentTools(t *testing.T) {
	tr := traces.Trace{
		Run: traces.Run{ID: "nested", Flow: "nested", Input: "Fix the invoice."},
		Agents: []traces.Agent{
			{Name: "desk", Kind: traces.AgentChatModel},
			{Name: "planner", Kind: traces.AgentChatModel, Parent: "desk", Relation: traces.RelationAgentTool},
			{Name: "critic", Kind: traces.AgentChatModel, Parent: "planner", Relation: traces.RelationAgentTool},
			{Name: "reviewer", Kind: traces.AgentChatModel, Parent: "critic", Relation: traces.RelationSubAgent},
		},
	}
	add := func(e traces.Event) {
		e.Seq = int64(len(tr.Events) + 1)
		tr.Events = append(tr.Events, e)
	}
	started := func(agent string, input ...string) traces.Event {
		run := &traces.AgentRun{}
		for _, in := range input {
			run.Input = append(run.Input, traces.Message{Role: "user", Content: in})
		}
		return traces.Event{Kind: traces.KindAgentStarted, Agent: agent, AgentRun: run}
	}
	call := func(caller, callee, request string) traces.Event {
		return traces.Event{Kind: traces.KindAgentToolEnter, Agent: caller,
			AgentTool: &traces.AgentToolCall{Caller: caller, Callee: callee, CallID: "call-" + callee, Request: request, InputMode: traces.AgentToolInputRequest}}
	}
	add(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Input: "Fix the invoice."}})
	add(started("desk", "Fix the invoice."))
	add(call("desk", "planner", "Plan the fix."))
	add(started("planner", "Plan the fix."))
	add(call("planner", "critic", "Critique the plan."))
	add(started("critic", "Critique the plan."))
	add(traces.Event{Kind: traces.KindTransfer, Agent: "critic", Transfer: &traces.Transfer{From: "critic", To: "reviewer", Mode: traces.TransferLLM}})
	add(started("reviewer", "Plan the fix.")) // the planner's request, not the critic's
	for range 20 {
		f := only(t, tr, check(t, tr, lint.Config{}), "lost-request", traces.KindAgentStarted, traces.KindTransfer)
		if !strings.Contains(f.Message, "Critique the plan.") {
			t.Fatalf("lost-request = %q, want the innermost call's request", f.Message)
		}
	}
}

func TestContextGrowth(t *testing.T) {
	manual := strings.Repeat("Check every clause of the contract against the policy handbook. ", 120)
	tr := record(t, chatFlow("growth", "Review my contract.", map[string]agents.Script{
		"intake":  agents.NewScript(agents.Do(agents.Transfer("analyst"))),
		"analyst": agents.NewScript(agents.Say("Reviewed.")),
	}, withSubAgents(nil, agent("intake", "Route."), agent("analyst", manual))))
	f := only(t, tr, check(t, tr, lint.Config{}), "context-growth", traces.KindModelStarted, traces.KindTransfer, traces.KindModelStarted)
	if !strings.Contains(f.Message, "from instructions") {
		t.Errorf("message %q does not say the instructions made the prompt grow", f.Message)
	}
	if got := check(t, tr, lint.Config{ContextGrowth: 1000}); len(got) != 0 {
		t.Errorf("with growth up to 1000× allowed: %s, want none", describe(got))
	}
}

func TestSaidNotDone(t *testing.T) {
	tr := record(t, chatFlow("said", "I was charged twice.", map[string]agents.Script{
		"front_desk":    agents.NewScript(agents.Say("I'll hand this over to billing_agent right away.")),
		"billing_agent": agents.NewScript(agents.Say("Refunded.")),
	}, withSubAgents(nil, agent("front_desk", "Route."), agent("billing_agent", "Refund."))))
	only(t, tr, check(t, tr, lint.Config{}), "said-not-done", traces.KindModelFinished)
}

func TestRepeatedCall(t *testing.T) {
	lookup, err := utils.InferTool("lookup", "Looks an order up.", func(_ context.Context, in struct {
		Order string `json:"order"`
	}) (string, error) {
		return "order " + in.Order + " shipped", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	call := agents.Do(agents.Call("lookup", map[string]string{"order": "7"}))
	tr := record(t, chatFlow("repeat", "Where is order 7?", map[string]agents.Script{
		"clerk": agents.NewScript(call, call, agents.Say("Shipped.")),
	}, withSubAgents(nil, agent("clerk", "Look orders up.", lookup))))
	only(t, tr, check(t, tr, lint.Config{}), "repeated-call", traces.KindToolStarted, traces.KindToolStarted)
}

func TestOverwrittenSession(t *testing.T) {
	note := func(name, value string) tool.BaseTool {
		tl, err := utils.InferTool(name, "Notes a summary.", func(ctx context.Context, _ struct{}) (string, error) {
			adk.AddSessionValue(ctx, "summary", value)
			return "noted", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	flow := agents.Flow{Name: "overwrite", DefaultInput: "Summarise the case.", Scripts: map[string]agents.Script{
		"researcher": agents.NewScript(agents.Do(agents.Call("note_research", struct{}{})), agents.Say("Done.")),
		"writer":     agents.NewScript(agents.Do(agents.Call("note_draft", struct{}{})), agents.Say("Done.")),
	}, Build: func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
		researcher, err := agents.NewChatAgent(ctx, models, agent("researcher", "Research.", note("note_research", "the customer was charged twice on May 3")))
		if err != nil {
			return nil, err
		}
		writer, err := agents.NewChatAgent(ctx, models, agent("writer", "Write.", note("note_draft", "draft pending")))
		if err != nil {
			return nil, err
		}
		return adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "case", Description: "Research, then write.", SubAgents: []adk.Agent{researcher, writer}})
	}}
	tr := record(t, flow)
	f := only(t, tr, check(t, tr, lint.Config{}), "overwritten-session", traces.KindSessionSet, traces.KindSessionSet)
	if !slices.Equal(f.Agents, []string{"writer", "researcher"}) {
		t.Errorf("agents = %v, want the overwriter, then the one overwritten", f.Agents)
	}
}

func TestUnreachableAgent(t *testing.T) {
	tr := record(t, chatFlow("unreachable", "My invoice is wrong.", map[string]agents.Script{
		"hub":           agents.NewScript(agents.Do(agents.Transfer("triage"))),
		"triage":        agents.NewScript(agents.Say("Let me look at it myself.")),
		"billing_agent": agents.NewScript(agents.Say("Fixed.")),
	}, withSubAgents(nil, agent("hub", "Route."), agent("triage", "Send invoice problems to billing_agent."), agent("billing_agent", "Fix invoices."))))
	f := only(t, tr, check(t, tr, lint.Config{}), "unreachable-agent", traces.KindModelStarted)
	if !slices.Equal(f.Agents, []string{"triage", "billing_agent"}) {
		t.Errorf("agents = %v, want triage and the agent it cannot reach", f.Agents)
	}
}

// The catalogue's flows give only the findings they exist to show, and say so in their
// descriptions.
func TestCatalogueShowsOnlyWhatItMeansTo(t *testing.T) {
	shows := map[string][]string{
		"agenttool-exit":   {"swallowed-action"},
		"approval":         {"stalled-interrupt"},
		"transfer-unknown": {"refused-transfer"},
	}
	points := map[string][]traces.Kind{
		"swallowed-action":  {traces.KindExit, traces.KindAgentToolExit, traces.KindModelStarted},
		"stalled-interrupt": {traces.KindInterrupted, traces.KindRunFinished},
		"refused-transfer":  {traces.KindTransfer},
	}
	for _, f := range agents.Catalogue() {
		t.Run(f.Name, func(t *testing.T) {
			tr := record(t, f)
			findings := check(t, tr, lint.Config{})
			want := shows[f.Name]
			if len(want) == 0 {
				if len(findings) > 0 {
					t.Errorf("findings on a healthy flow: %s", describe(findings))
				}
				return
			}
			for _, rule := range want {
				only(t, tr, findings, rule, points[rule]...)
				if !strings.Contains(f.Description, rule) {
					t.Errorf("the description does not say the flow shows %s: %q", rule, f.Description)
				}
			}
		})
	}
}

// TestDocsListTheRules: the rules table of docs/cli.md ("baton lint") names each rule with its
// severity.
func TestDocsListTheRules(t *testing.T) {
	readme, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lint.Rules() {
		if row := fmt.Sprintf("| `%s` | %s |", r.ID, r.Severity); !strings.Contains(string(readme), row) {
			t.Errorf("docs/cli.md's rules table lacks %q", row)
		}
	}
}
