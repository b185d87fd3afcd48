package e2e_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/flows"
)

// helpdesk is a flow of a user's own, declared with package flows as a user declares one: a desk
// agent hands the request to billing, which answers.
func helpdesk() flows.Flow {
	return flows.Flow{
		Name:         "helpdesk",
		Description:  "A desk agent hands each request to billing or tech.",
		DefaultInput: "I was charged twice this month.",
		Build: func(ctx context.Context, models flows.Models) (adk.Agent, error) {
			agent := func(name, desc string) (adk.Agent, error) {
				m, err := models(name)
				if err != nil {
					return nil, err
				}
				return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: name, Description: desc, Instruction: "You are " + name + ".", Model: m})
			}
			desk, err := agent("desk", "Routes each request.")
			if err != nil {
				return nil, err
			}
			billing, err := agent("billing", "Invoices and refunds.")
			if err != nil {
				return nil, err
			}
			tech, err := agent("tech", "Technical problems.")
			if err != nil {
				return nil, err
			}
			return adk.SetSubAgents(ctx, desk, []adk.Agent{billing, tech})
		},
		Script: map[string][]flows.Reply{
			"desk":    {{ToolCalls: []flows.ToolCall{flows.Transfer("billing")}}},
			"billing": {{Text: "You were charged twice: I refunded one."}},
		},
	}
}

// TestUserFlowOnThePage: a flow registered as command.Main registers it (agents.Registered,
// beside the built-in flows) is offered on the index under "Your flows"; its Run button starts
// it, and the run page draws the agents it met and its transfer, and ends completed.
func TestUserFlowOnThePage(t *testing.T) {
	t.Parallel()
	registered, err := agents.Registered([]flows.Flow{helpdesk()})
	if err != nil {
		t.Fatal(err)
	}
	b := startBaton(t, registered...)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/")
	if g := evalJS[string](t, tb, `document.querySelector('[data-testid=flow-group]')?.dataset.group || ''`); g != agents.GroupRegistered {
		t.Errorf("the index's first group is %q, want %q", g, agents.GroupRegistered)
	}
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=flow-group][data-group=`+jsString(agents.GroupRegistered)+`] [data-testid=flow-helpdesk]').length`); n != 1 {
		t.Fatalf("the index shows the flow %d times under %q, want once", n, agents.GroupRegistered)
	}
	runFromIndex(t, tb, b, "helpdesk", 0)
	tb.waitStatus(t, "completed")
	tb.waitFor(t, "the transfer from desk to billing drawn",
		`Array.from(document.querySelectorAll('[data-testid=transfer-edge]')).some(e => e.dataset.from === 'desk' && e.dataset.to === 'billing')`)
	st := tb.state(t)
	if got := edgeStrings(st.Edges); !slices.Equal(got, []string{"1 llm desk->billing"}) {
		t.Errorf("the page draws the transfers %q, want desk's to billing", got)
	}
	for _, a := range []string{"desk", "billing"} {
		if _, ok := st.Nodes[a]; !ok {
			t.Errorf("the page draws no node for %s; it draws %v", a, slices.Sorted(maps.Keys(st.Nodes)))
		}
	}
}
