package agents_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// TestApprovalFlow: the refund tool inside billing_agent's AgentTool pauses the whole run for a
// person's decision, saved in eino's checkpoint store; the decision resumes it in the same trace
// (interrupted, run.finished interrupted, resumed), and only the remaining steps run: the refund
// happens after Approve, and not after Reject, whose comment reaches the answer.
func TestApprovalFlow(t *testing.T) {
	f := mustFlow(t, "approval")
	cases := []struct {
		name     string
		decision agents.Decision
		refund   string // issue_refund's result after the decision, in part
		answer   string // support_agent's final answer, in part
	}{
		{"approve", agents.Decision{Approve: true, Comment: "duplicate confirmed"},
			"Refunded €49.00 for order 7731 to the card ending 4242 (approved: duplicate confirmed).", "Refunded €49.00"},
		{"reject", agents.Decision{Comment: "the second charge is a separate order"},
			"the refund was rejected by the reviewer: the second charge is a separate order", "I could not refund order 7731"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			modes(t, func(t *testing.T, streaming bool) {
				tr := recordDecided(t, f, f.DefaultInput, streaming, tc.decision)
				checkTrace(t, tr, traces.StatusCompleted)
				fs := facts{t: t, tr: tr}

				// One run: interrupted once (eino's one interrupt, where it arose, though it crossed
				// the AgentTool), then resumed naming the same interrupt.
				var kinds []string
				for _, e := range tr.Events {
					if e.Kind == traces.KindInterrupted || e.Kind == traces.KindResumed || e.Kind == traces.KindRunFinished {
						kinds = append(kinds, string(e.Kind))
					}
				}
				assertEqual(t, "interrupt and run ends", kinds, []string{"interrupted", "run.finished", "resumed", "run.finished"})
				cause := fs.of(traces.KindInterrupted, "billing_agent")
				resumed := fs.of(traces.KindResumed, "")
				if len(cause) != 1 || cause[0].Interrupt.Info != agents.ApprovalQuestion || !strings.Contains(cause[0].Interrupt.Address, "issue_refund") {
					t.Fatalf("billing_agent's interrupt = %+v, want the approval question at issue_refund", cause)
				}
				if resumed[0].Interrupt == nil || resumed[0].Interrupt.ID != cause[0].Interrupt.ID {
					t.Errorf("resumed %+v, want interrupt %s", resumed[0].Interrupt, cause[0].Interrupt.ID)
				}

				// issue_refund paused (not failed), then answered the decision; the models that
				// had already answered were not asked again.
				var refunds []traces.ToolCall
				for _, e := range fs.of(traces.KindToolFinished, "billing_agent") {
					if e.Tool.Name == "issue_refund" {
						refunds = append(refunds, *e.Tool)
					}
				}
				if len(refunds) != 2 || !refunds[0].Interrupted || refunds[0].Error != "" || refunds[1].Interrupted || refunds[1].Result != tc.refund {
					t.Fatalf("issue_refund calls = %+v, want one interrupted, then %q", refunds, tc.refund)
				}
				if n := len(fs.of(traces.KindModelStarted, "billing_agent")); n != 3 {
					t.Errorf("billing_agent's model was called %d times, want 3 (2 before the pause, 1 after)", n)
				}
				if got := fs.lastReply("support_agent"); !strings.Contains(got, tc.answer) {
					t.Errorf("support_agent's answer %q, want %q in it", got, tc.answer)
				}
			})
		})
	}
}
