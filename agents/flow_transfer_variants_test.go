package agents_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// requireFailure fails the test unless the run failed with one error event, by agent, whose
// message (the run's error) contains each of words.
func (f facts) requireFailure(agent string, words ...string) {
	f.t.Helper()
	f.requireStatus(traces.StatusFailed)
	errs := f.of(traces.KindError, "")
	if len(errs) != 1 || errs[0].Agent != agent || errs[0].Error.Message != f.tr.Run.Error {
		f.t.Fatalf("error events %+v, want one by %s with the run's error %q", errs, agent, f.tr.Run.Error)
	}
	for _, w := range words {
		if !strings.Contains(f.tr.Run.Error, w) {
			f.t.Errorf("the run's error %q does not say %q", f.tr.Run.Error, w)
		}
	}
}

// TestTransferUnknownFlow: eino fails a transfer to an agent that does not exist, and one to a
// sibling, with its own error naming the agent; the target never starts.
func TestTransferUnknownFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "transfer-unknown", streaming)
		f.requireFailure("helpdesk", "transfer failed: agent 'refunds_agent' not found when transferring from 'helpdesk'")
		assertEqual(t, "transfers", f.transfers(), []string{"helpdesk -> refunds_agent (llm)"})
		assertEqual(t, "agent starts", f.starts(), []string{"helpdesk via run"})

		f = recordInputFacts(t, "transfer-unknown", "I forgot my password, and I was charged twice", streaming)
		f.requireFailure("tech_agent", "transfer failed: agent 'billing_agent' not found when transferring from 'tech_agent'")
		assertEqual(t, "transfers", f.transfers(), []string{"helpdesk -> tech_agent (llm)", "tech_agent -> billing_agent (llm)"})
		assertEqual(t, "agent starts", f.starts(), []string{"helpdesk via run", "tech_agent via transfer"})
		// billing_agent exists, but tech_agent's model was never offered it.
		if system := f.modelInputs("tech_agent")[0][0].Content; strings.Contains(system, "Agent name: billing_agent") {
			t.Errorf("tech_agent's instruction lists its sibling: %q", system)
		}
	})
}

// TestTransferNoReturnFlow: the child built WithDisallowTransferToParent gets no transfer tool and
// no list of agents, so the run ends with it; its sibling can go back.
func TestTransferNoReturnFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "transfer-noreturn", streaming)
		f.requireStatus(traces.StatusCompleted)
		assertEqual(t, "transfers", f.transfers(), []string{"intake -> legal_agent (llm)"})
		for _, e := range f.of(traces.KindModelStarted, "legal_agent") {
			assertEqual(t, "legal_agent's tools", e.Model.Tools, []string{"read_contract"})
			if strings.Contains(e.Model.Input[0].Content, "Available other agents") {
				t.Errorf("legal_agent's instruction lists agents to transfer to: %q", e.Model.Input[0].Content)
			}
		}
		if ends := f.of(traces.KindAgentFinished, ""); ends[len(ends)-1].Agent != "legal_agent" {
			t.Errorf("the run ended with %s, want legal_agent", ends[len(ends)-1].Agent)
		}

		f = recordInputFacts(t, "transfer-noreturn", "What is your pricing for the business plan?", streaming)
		f.requireStatus(traces.StatusCompleted)
		assertEqual(t, "transfers", f.transfers(), []string{"intake -> sales_agent (llm)", "sales_agent -> intake (llm)"})
		sales := f.of(traces.KindModelStarted, "sales_agent")[0].Model
		assertEqual(t, "sales_agent's tools", sales.Tools, []string{"get_pricing", "transfer_to_agent"})
		if !strings.Contains(sales.Input[0].Content, "Agent name: intake") {
			t.Errorf("sales_agent's instruction does not list its parent: %q", sales.Input[0].Content)
		}
	})
}
