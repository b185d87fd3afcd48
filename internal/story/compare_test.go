package story_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/internal/webtest"
)

// desk is a small app recorded for real: front_desk looks the order up, then hands the case to
// the agent route names; rewrite, when set, is the target's history rewriter.
func desk(t *testing.T, route, lookupResult string, rewrite adk.HistoryRewriter) story.Story {
	t.Helper()
	lookup, err := utils.InferTool("lookup", "Looks an order up.", func(context.Context, struct{}) (string, error) { return lookupResult, nil })
	if err != nil {
		t.Fatal(err)
	}
	flow := agents.Flow{Name: "desk", DefaultInput: "Order 7 was charged twice.", Scripts: map[string]agents.Script{
		"front_desk":    agents.NewScript(agents.Do(agents.Call("lookup", struct{}{})), agents.SayAndDo("Over to the right desk.", agents.Transfer(route))),
		"billing_agent": agents.NewScript(agents.Say("Refunded.")),
		"tech_agent":    agents.NewScript(agents.Say("Reset.")),
	}, Build: func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
		conf := func(name string, tools ...tool.BaseTool) adk.ChatModelAgentConfig {
			c := adk.ChatModelAgentConfig{Name: name, Description: "The " + name + ".", Instruction: "Help."}
			if len(tools) > 0 {
				c.ToolsConfig = adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}}
			}
			return c
		}
		front, err := agents.NewChatAgent(ctx, models, conf("front_desk", lookup))
		if err != nil {
			return nil, err
		}
		var subs []adk.Agent
		for _, name := range []string{"billing_agent", "tech_agent"} {
			a, err := agents.NewChatAgent(ctx, models, conf(name))
			if err != nil {
				return nil, err
			}
			if rewrite != nil {
				subs = append(subs, adk.AgentWithOptions(ctx, a, adk.WithHistoryRewriter(rewrite)))
			} else {
				subs = append(subs, a)
			}
		}
		return adk.SetSubAgents(ctx, front, subs)
	}}
	return story.Of(agentstest.Record(t, flow, flow.DefaultInput, agents.Options{}))
}

func TestIdenticalRunsDiffEmpty(t *testing.T) {
	c := story.Compare(desk(t, "billing_agent", "order 7: two charges", nil), desk(t, "billing_agent", "order 7: two charges", nil))
	if !c.Same() || len(c.Pairs) != 2 {
		t.Fatalf("identical runs: first divergence %+v, %d turns", c.First, len(c.Pairs))
	}
	for _, p := range c.Pairs {
		if len(p.Differences) > 0 || p.A == nil || p.B == nil {
			t.Errorf("turn %v differs: %+v", p.Turn, p.Differences)
		}
	}
}

func TestDiffNamesTheFirstDivergence(t *testing.T) {
	base := desk(t, "billing_agent", "order 7: two charges", nil)
	forgetOthers := func(_ context.Context, entries []*adk.HistoryEntry) ([]adk.Message, error) {
		var kept []adk.Message
		for _, e := range entries {
			if e.IsUserInput {
				kept = append(kept, e.Message)
			}
		}
		return kept, nil
	}
	for _, tc := range []struct {
		name    string
		other   story.Story
		what    string
		turn    int
		a, b    string // what the divergence says of each run
		pairs   int
		changed bool // the route changed: a turn only B has
	}{
		{"a changed route", desk(t, "tech_agent", "order 7: two charges", nil), "routing decision", 1,
			"hands off to billing_agent (llm)", "hands off to tech_agent (llm)", 3, true},
		{"a changed tool result", desk(t, "billing_agent", "order 7: one charge", nil), "tool result", 1,
			"order 7: two charges", "order 7: one charge", 2, false},
		{"a dropped For context: message", desk(t, "billing_agent", "order 7: two charges", forgetOthers), "model input", 2,
			"other agents (For context:): For context: [front_desk]", "lacks other agents (For context:): For context: [front_desk]", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := story.Compare(base, tc.other)
			f := c.First
			if f == nil {
				t.Fatal("no divergence found")
			}
			if f.What != tc.what || f.Turn != [2]int{tc.turn, tc.turn} || !strings.Contains(f.A, tc.a) || !strings.Contains(f.B, tc.b) || f.Seq[0] == 0 || f.Seq[1] == 0 {
				t.Errorf("first divergence = %+v, want %s in turn %d, %q against %q", *f, tc.what, tc.turn, tc.a, tc.b)
			}
			if len(c.Pairs) != tc.pairs || (tc.changed && (c.Pairs[1].A == nil || c.Pairs[2].A != nil)) {
				t.Errorf("%d aligned turns, want %d", len(c.Pairs), tc.pairs)
			}
		})
	}
}

// TestDiffMarksTokens: two runs whose turns match in text but not in what their calls used (more
// tokens, or the same tokens of another model, which costs otherwise) differ in "tokens" at
// those turns, never in their text; a difference in what they did comes first.
func TestDiffMarksTokens(t *testing.T) {
	run := func(id string, helper ...webtest.ModelUse) story.Story {
		return story.Of(webtest.Handoff(id, "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 100}}, helper))
	}
	a := run("a", webtest.ModelUse{Model: "big", Prompt: 200, Completion: 20})
	for _, tc := range []struct {
		name string
		b    story.Story
		a, w string // what the difference says of each
	}{
		{"more tokens", run("b", webtest.ModelUse{Model: "big", Prompt: 250, Completion: 20}),
			"220 tok (prompt 200, completion 20)", "270 tok (prompt 250, completion 20)"},
		{"another model", run("b", webtest.ModelUse{Model: "small", Prompt: 200, Completion: 20}),
			"220 tok (prompt 200, completion 20) by model: big 200+20", "220 tok (prompt 200, completion 20) by model: small 200+20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := story.Compare(a, tc.b)
			if len(c.Pairs) != 2 || len(c.Pairs[0].Differences) != 0 {
				t.Fatalf("pairs %+v: want two, the first the same", c.Pairs)
			}
			want := []story.Divergence{{What: "tokens", Turn: [2]int{2, 2}, Seq: [2]int64{c.Pairs[1].A.Seq, c.Pairs[1].B.Seq}, A: tc.a, B: tc.w}}
			if got := c.Pairs[1].Differences; !slices.Equal(got, want) {
				t.Errorf("the helper's differences %+v, want %+v", got, want)
			}
			if c.Same() || c.First == nil || *c.First != want[0] {
				t.Errorf("first divergence %+v, want the tokens", c.First)
			}
		})
	}
	// What the runs did differs too: that comes first, the tokens after it in their turn.
	other := story.Of(webtest.Handoff("c", "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 90}},
		[]webtest.ModelUse{{Model: "big", Prompt: 200, Completion: 20}}))
	other.Status = "failed"
	c := story.Compare(a, other)
	if c.First == nil || c.First.What != "outcome" || len(c.Pairs[0].Differences) != 1 || c.Pairs[0].Differences[0].What != "tokens" {
		t.Errorf("first %+v, root's differences %+v: want the outcome first, the root's tokens marked", c.First, c.Pairs[0].Differences)
	}
}
