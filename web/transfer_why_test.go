package web_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestTransferWhyRecordedSupervisor checks, on a trace the recorder wrote for a real eino run of
// the supervisor flow, that every transfer's inspector finds the call that made it and what its
// target received, and that each deciding model call links back to its transfer.
func TestTransferWhyRecordedSupervisor(t *testing.T) {
	tr := webtest.RecordedSupervisor(t)
	llm := 0
	for _, e := range tr.Events {
		if e.Kind != traces.KindTransfer {
			continue
		}
		x := e.Transfer
		in, err := web.NewInspection(tr, e.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if in.Decision == 0 {
			t.Errorf("transfer #%d %s → %s: no deciding call", e.Seq, x.From, x.To)
			continue
		}
		d := tr.Events[in.Decision-1]
		if d.Agent != x.From || d.Seq >= e.Seq {
			t.Errorf("transfer #%d: deciding event #%d is %s's, want an earlier one of %s", e.Seq, d.Seq, d.Agent, x.From)
		}
		switch x.Mode {
		case traces.TransferLLM:
			llm++
			if d.Kind != traces.KindModelFinished || !callsTransfer(*d.Model.Output, x.CallID) {
				t.Errorf("transfer #%d: deciding event #%d %s does not call transfer %s", e.Seq, d.Seq, d.Kind, x.CallID)
			}
			if !hasBlock(in, "the model said") || !hasBlock(in, "its transfer_to_agent arguments") {
				t.Errorf("transfer #%d: blocks %+v lack the model's text or arguments", e.Seq, in.Blocks)
			}
			back, err := web.NewInspection(tr, d.Seq)
			if err != nil {
				t.Fatal(err)
			}
			if !hasLink(back, e.Seq) {
				t.Errorf("model call #%d does not link to its transfer #%d: %+v", d.Seq, e.Seq, back.Links)
			}
		default:
			if d.Kind != traces.KindMessage || !callsTransfer(*d.Message, x.CallID) {
				t.Errorf("transfer #%d: deciding event #%d %s is not the wrapper's call", e.Seq, d.Seq, d.Kind)
			}
			if !strings.Contains(in.DecisionText, "deterministic wrapper around "+x.From) {
				t.Errorf("transfer #%d: decision text %q", e.Seq, in.DecisionText)
			}
		}
		r := tr.Events[in.Received-1]
		if in.Received == 0 || r.Kind != traces.KindAgentStarted || r.Agent != x.To || !hasLink(in, r.Seq) {
			t.Errorf("transfer #%d: received = #%d %s %s", e.Seq, in.Received, r.Kind, r.Agent)
		}
		if len(in.Messages) != len(r.AgentRun.Input) {
			t.Errorf("transfer #%d: %d messages shown, %s received %d", e.Seq, len(in.Messages), x.To, len(r.AgentRun.Input))
		}
		context := 0
		for _, m := range in.Messages {
			if m.Origin == web.OriginContext && m.Source > 0 {
				context++
			}
		}
		if context == 0 {
			t.Errorf("transfer #%d: no received message labelled and linked as context: %+v", e.Seq, in.Messages)
		}
	}
	if llm != 2 {
		t.Errorf("%d llm transfers checked, want 2", llm)
	}
}

// TestTransferWhyFailed checks that a transfer eino refused shows its error, whose words these
// are (eino's, or Baton's and why eino's were out of its reach), and no receiver.
func TestTransferWhyFailed(t *testing.T) {
	for _, tc := range []struct {
		by, msg, words string // words: in the fact saying whose words, "" for no such fact
	}{
		{traces.ErrorByEino, "transfer failed: agent 'ghost' not found when transferring from 'planner'", "eino: its own error"},
		{traces.ErrorByRecorder, `transfer to "ghost" refused: eino found no agent "ghost" reachable from "planner"`, "only on the Runner's event stream"},
		{"", "transfer failed: agent 'ghost' not found when transferring from 'planner'", ""},
	} {
		tr := refusedTransfer(tc.msg, tc.by)
		in, err := web.NewInspection(tr, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !in.Failed || in.Decision != 2 || in.Received != 0 || !hasBlockText(in, tc.msg) {
			t.Errorf("error by %q: failed transfer: %+v", tc.by, in)
		}
		words := ""
		for _, f := range in.Facts {
			if f.Label == web.ErrorWordsLabel {
				words = f.Value
			}
		}
		if tc.words == "" && words != "" || !strings.Contains(words, tc.words) {
			t.Errorf("error by %q: the inspector says %q of its words, want %q in it", tc.by, words, tc.words)
		}
	}
}

// refusedTransfer is a run whose planner transfers to ghost, refused with msg in the words of by.
func refusedTransfer(msg, by string) traces.Trace {
	return traces.Trace{Run: traces.Run{ID: "r", Status: traces.StatusFailed}, Events: []traces.Event{
		{Seq: 1, Kind: traces.KindAgentStarted, Agent: "planner", AgentRun: &traces.AgentRun{Via: "run"}},
		{Seq: 2, Kind: traces.KindModelFinished, Agent: "planner", Model: &traces.ModelCall{ID: "m1",
			Output: &traces.Message{Role: "assistant", Content: "ghost knows", ToolCalls: []traces.ToolCallSpec{{ID: "c1", Name: "transfer_to_agent", Arguments: `{"agent_name":"ghost"}`}}}}},
		{Seq: 3, Kind: traces.KindTransfer, Agent: "planner", Transfer: &traces.Transfer{From: "planner", To: "ghost", Mode: traces.TransferLLM, CallID: "c1",
			Outcome: traces.TransferFailed, Error: msg, ErrorBy: by}},
	}}
}

func callsTransfer(m traces.Message, id string) bool {
	for _, c := range m.ToolCalls {
		if c.Name == web.TransferTool && c.ID == id {
			return true
		}
	}
	return false
}

func hasBlock(in web.Inspection, label string) bool {
	for _, b := range in.Blocks {
		if b.Label == label {
			return true
		}
	}
	return false
}

func hasBlockText(in web.Inspection, text string) bool {
	for _, b := range in.Blocks {
		if strings.Contains(b.Text, text) {
			return true
		}
	}
	return false
}

func hasLink(in web.Inspection, seq int64) bool {
	for _, l := range in.Links {
		if l.Seq == seq {
			return true
		}
	}
	return false
}

// TestTransferWhyCatalogue runs the catalogue's transfer flows on real eino agents and checks
// that every transfer finds the call that made it and, when its target then ran, what it received.
func TestTransferWhyCatalogue(t *testing.T) {
	for _, name := range []string{"supervisor", "transfer", "transfer-noreturn", "transfer-skip", "transfer-rewriter", "pipeline"} {
		t.Run(name, func(t *testing.T) {
			tr := runFlow(t, name, "")
			n := 0
			for _, e := range tr.Events {
				if e.Kind != traces.KindTransfer {
					continue
				}
				n++
				in, err := web.NewInspection(tr, e.Seq)
				if err != nil {
					t.Fatal(err)
				}
				want := traces.KindMessage
				if e.Transfer.Mode == traces.TransferLLM {
					want = traces.KindModelFinished
				}
				if in.Decision == 0 || tr.Events[in.Decision-1].Kind != want {
					t.Errorf("%s transfer #%d %s → %s: decision #%d, want a %s", e.Transfer.Mode, e.Seq, e.Transfer.From, e.Transfer.To, in.Decision, want)
				}
				if in.Received == 0 || tr.Events[in.Received-1].Agent != e.Transfer.To {
					t.Errorf("transfer #%d → %s: received #%d", e.Seq, e.Transfer.To, in.Received)
				}
			}
			if n == 0 {
				t.Errorf("%s made no transfer", name)
			}
		})
	}
}
