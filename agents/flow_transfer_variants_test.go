package agents_test

import (
	"reflect"
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

// TestTransferSkipFlow: with WithSkipTransferMessages the target is fed the others' messages but
// not the transfer, nor the text of the message that called it.
func TestTransferSkipFlow(t *testing.T) {
	flow := mustFlow(t, "transfer-skip")
	plain := flow
	plain.RunOptions = nil
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "transfer-skip", streaming)
		f.requireStatus(traces.StatusCompleted)
		assertEqual(t, "transfers", f.transfers(), []string{"reception -> housekeeping (llm)"})
		in := f.modelInputs("housekeeping")[0][1:] // after the system prompt, which names the transfer tool
		if !hasContent(in, "`find_booking` tool returned result") || hasContent(in, "transfer_to_agent") || hasContent(in, "You are in room 412") {
			t.Errorf("housekeeping should get the lookup and nothing of the transfer message:%s", joined(in))
		}
		if start := f.of(traces.KindAgentStarted, "housekeeping")[0]; hasContent(start.AgentRun.Input, "transfer_to_agent") {
			t.Errorf("agent.started shows transfer messages housekeeping was not fed:%s", joined(start.AgentRun.Input))
		}
		if got := f.toolResult("schedule_cleaning"); got != "room 412 will be cleaned at 14:00." {
			t.Errorf("schedule_cleaning returned %q", got)
		}

		without := facts{t: t, tr: recordRun(t, plain, streaming)}
		in = without.modelInputs("housekeeping")[0]
		if !hasContent(in, "called tool: `transfer_to_agent`") || !hasContent(in, "You are in room 412") {
			t.Errorf("without the option housekeeping should be fed the transfer message:%s", joined(in))
		}
	})
}

// TestTransferRewriterFlow: the target's history rewriter decides what it is fed.
func TestTransferRewriterFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "transfer-rewriter", streaming)
		f.requireStatus(traces.StatusCompleted)
		assertEqual(t, "transfers", f.transfers(), []string{"reception -> housekeeping (llm)"})
		in := f.modelInputs("housekeeping")[0]
		var roles []string
		for _, m := range in {
			roles = append(roles, m.Role)
		}
		assertEqual(t, "housekeeping's input roles", roles, []string{"system", "user", "user"})
		if in[1].Content != mustFlow(t, "transfer-rewriter").DefaultInput ||
			in[2].Content != "Handoff note: [reception] Booking B-2291: Ana Lima, room 412, 3 nights from 14 March." {
			t.Errorf("housekeeping was not fed the user's request and the handoff note:%s", joined(in))
		}
		start := f.of(traces.KindAgentStarted, "housekeeping")[0]
		if !reflect.DeepEqual(start.AgentRun.Input, in[1:]) {
			t.Errorf("agent.started shows another input than the rewritten one:%s", joined(start.AgentRun.Input))
		}
	})
}

// TestFailingFlow: a tool's error fails the run with that error, drawn on the tool call, the
// agent's end and the run.
func TestFailingFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "failing", streaming)
		f.requireFailure("db_agent", "run_migrations", `column "plan" of relation "accounts" already exists`)
		var failed []string
		for _, e := range f.of(traces.KindToolFinished, "") {
			if e.Tool.Error != "" {
				failed = append(failed, e.Agent+" "+e.Tool.Name)
				if !strings.Contains(e.Tool.Error, `column "plan" of relation "accounts" already exists`) {
					t.Errorf("the failed call's error %q is not the tool's", e.Tool.Error)
				}
			}
		}
		assertEqual(t, "failed tool calls", failed, []string{"db_agent run_migrations"})
		ends := f.of(traces.KindAgentFinished, "db_agent")
		if len(ends) != 1 || ends[0].AgentRun.Error != f.tr.Run.Error {
			t.Errorf("db_agent's end %+v does not carry the run's error", ends)
		}
		if got := f.of(traces.KindModelStarted, "db_agent"); len(got) != 2 {
			t.Errorf("db_agent's model was called %d times, want 2: the error is not handed back to it", len(got))
		}
	})
}
