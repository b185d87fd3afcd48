package web_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestAgentSummaryPrompts: the supervisor's prompts, per call, split by origin and counted by
// the tokenizer, grow after each transfer back, and the chart marks each new visit.
func TestAgentSummaryPrompts(t *testing.T) {
	tr := runFlow(t, "supervisor", "")
	s, err := web.NewAgentSummary(tr, "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	starts := modelCalls(tr, "supervisor")
	if len(s.Calls) != len(starts) || len(s.Calls) != 3 {
		t.Fatalf("%d calls, want the supervisor's 3", len(s.Calls))
	}
	for k, c := range s.Calls {
		e := starts[k]
		// Independently: the tokenizer over each message's text, the system message whole.
		want := 0
		for _, m := range e.Model.Input {
			want += web.CountTokens(m.Content)
			for _, tc := range m.ToolCalls {
				want += web.CountTokens(tc.Name) + web.CountTokens(tc.Arguments)
			}
		}
		// Cutting the transfer block off the instruction may move a token boundary; nothing else.
		if c.Seq != e.Seq || c.Estimate < want-2 || c.Estimate > want+2 {
			t.Errorf("call %d: seq %d, estimate %d, want #%d and about %d", k+1, c.Seq, c.Estimate, e.Seq, want)
		}
		fin := event(t, tr, c.Finished)
		if !c.Known || fin.Kind != traces.KindModelFinished || c.Reported != fin.Model.Usage.PromptTokens {
			t.Errorf("call %d: reported %d (known %v), its model.finished %+v", k+1, c.Reported, c.Known, fin.Model)
		}
		if c.Visit != k+1 {
			t.Errorf("call %d belongs to visit %d, want %d", k+1, c.Visit, k+1)
		}
		if k > 0 && c.Estimate <= s.Calls[k-1].Estimate {
			t.Errorf("call %d's prompt (%d) did not grow after the transfer back (%d)", k+1, c.Estimate, s.Calls[k-1].Estimate)
		}
		origins := map[web.Origin]int{}
		for _, o := range c.ByOrigin {
			origins[o.Origin] = o.Tokens
		}
		if origins[web.OriginTransferInstruction] == 0 || k > 0 && origins[web.OriginContext] == 0 {
			t.Errorf("call %d by origin %+v", k+1, c.ByOrigin)
		}
	}
	ch := s.Chart
	if len(ch.Bars) != 3 || len(ch.Visits) != 2 || ch.Max != s.Calls[2].Estimate {
		t.Fatalf("chart: %d bars, %d visit marks, max %d", len(ch.Bars), len(ch.Visits), ch.Max)
	}
	last := ch.Bars[2]
	if top := last.Segs[len(last.Segs)-1].Y; top < ch.Top-0.01 || top > ch.Top+0.01 {
		t.Errorf("the largest bar's top is at %v, want %v", top, ch.Top)
	}
	if _, err := web.NewAgentSummary(tr, "nobody"); traces.ErrorCode(err) != traces.CodeNotFound || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("unknown agent: %v", err)
	}
}

// TestReportSummariesAreEachAgents: the report summarises every agent in one pass over the run;
// each summary is the one the agent's own inspector shows.
func TestReportSummariesAreEachAgents(t *testing.T) {
	for _, flow := range []string{"supervisor", "supervisor-agenttool"} {
		tr := runFlow(t, flow, "")
		r := web.NewReport(tr)
		if len(r.Agents) != len(r.View.Agents) || len(r.Agents) < 3 {
			t.Fatalf("%s: %d summaries for %d agents", flow, len(r.Agents), len(r.View.Agents))
		}
		for k, got := range r.Agents {
			want, err := web.NewAgentSummary(tr, r.View.Agents[k].Name)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the report's summary of %s differs from its inspector's:\n%+v\n%+v", flow, want.Name, got, want)
			}
		}
	}
}

// TestPromptChartAggregates: an agent of some 90 model calls gets at most 40 bars, each standing
// for the same number of consecutive calls (every call in exactly one), drawn as the largest
// prompt among them and pointing at that call, with at most 10 call numbers written under them.
func TestPromptChartAggregates(t *testing.T) {
	tr := webtest.Large(1_500)
	s, err := web.NewAgentSummary(tr, "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	ch := s.Chart
	if len(s.Calls) < 80 || ch.Calls != len(s.Calls) || len(modelCalls(tr, "supervisor")) != len(s.Calls) {
		t.Fatalf("%d calls, chart of %d: want the supervisor's ~90", len(s.Calls), ch.Calls)
	}
	if per := (len(s.Calls) + 39) / 40; ch.Per != per || len(ch.Bars) > 40 || len(ch.Bars) != (len(s.Calls)+per-1)/per {
		t.Fatalf("%d bars of %d calls each, for %d calls; want at most 40 of %d", len(ch.Bars), ch.Per, len(s.Calls), per)
	}
	labels, next := 0, 1
	for k, b := range ch.Bars {
		if b.First != next || b.Last < b.First || b.Last-b.First+1 > ch.Per {
			t.Fatalf("bar %d covers calls %d-%d, want from %d, at most %d", k, b.First, b.Last, next, ch.Per)
		}
		next = b.Last + 1
		top := s.Calls[b.First-1]
		for _, c := range s.Calls[b.First-1 : b.Last] {
			if c.Estimate > top.Estimate {
				top = c
			}
		}
		if b.Total != top.Estimate || b.Seq != top.Seq {
			t.Errorf("bar %d: %d tokens at #%d, want its largest call's %d at #%d", k, b.Total, b.Seq, top.Estimate, top.Seq)
		}
		if b.Label != "" {
			labels++
		}
	}
	if next != len(s.Calls)+1 {
		t.Errorf("the bars end at call %d of %d", next-1, len(s.Calls))
	}
	if labels == 0 || labels > 10 {
		t.Errorf("%d call numbers under %d bars, want 1 to 10", labels, len(ch.Bars))
	}
}

// TestAgentSummaryListsTheNewest: an agent of some 960 model calls, starts and 1,900 handoffs
// lists the newest SummaryShown of each, numbered among all, and charts every call.
func TestAgentSummaryListsTheNewest(t *testing.T) {
	tr := webtest.Large(15_400)
	s, err := web.NewAgentSummary(tr, "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	calls := modelCalls(tr, "supervisor")
	var starts, handoffs []int64
	for _, e := range tr.Events {
		switch {
		case e.Kind == traces.KindAgentStarted && e.Agent == "supervisor":
			starts = append(starts, e.Seq)
		case e.Kind == traces.KindTransfer && (e.Transfer.From == "supervisor" || e.Transfer.To == "supervisor"):
			handoffs = append(handoffs, e.Seq)
		}
	}
	if len(calls) < 900 || s.Chart.Calls != len(calls) || s.Chart.Bars[len(s.Chart.Bars)-1].Last != len(calls) {
		t.Fatalf("the chart draws %d calls, its last bar ending at call %d; want the supervisor's %d (~960)",
			s.Chart.Calls, s.Chart.Bars[len(s.Chart.Bars)-1].Last, len(calls))
	}
	if len(s.Calls) != web.SummaryShown || s.FirstCall() != len(calls)-web.SummaryShown+1 {
		t.Fatalf("%d calls listed from call %d, want the newest %d of %d", len(s.Calls), s.FirstCall(), web.SummaryShown, len(calls))
	}
	for k, c := range s.Calls {
		if want := calls[len(calls)-len(s.Calls)+k]; c.Seq != want.Seq || c.Finished != want.Seq+1 || c.Visit != len(starts)-len(s.Calls)+k+1 {
			t.Fatalf("listed call %d: #%d ended #%d in visit %d, want #%d ended #%d", k, c.Seq, c.Finished, c.Visit, want.Seq, want.Seq+1)
		}
	}
	refs := func(rs []web.Ref) []int64 {
		var seqs []int64
		for _, r := range rs {
			seqs = append(seqs, r.Seq)
		}
		return seqs
	}
	if s.StartCount != len(starts) || !reflect.DeepEqual(refs(s.Starts), starts[len(starts)-web.SummaryShown:]) {
		t.Errorf("%d starts of %d listed, want the newest %d of %d", len(s.Starts), s.StartCount, web.SummaryShown, len(starts))
	}
	if s.HandoffCount != len(handoffs) || !reflect.DeepEqual(refs(s.Handoffs), handoffs[len(handoffs)-web.SummaryShown:]) {
		t.Errorf("%d handoffs of %d listed, want the newest %d of %d", len(s.Handoffs), s.HandoffCount, web.SummaryShown, len(handoffs))
	}
}

// TestAgentSummaryKeepsUpWithTheState: a view state's summary of each agent, asked after every
// event as a live page asks (its calls' prompts counted at the first asking, kept for the next),
// is the summary of the trace cut there, and so is a Travel's as of that event; each call's
// prompt by origin is what that call's own inspector counts, alone and in the state's page.
func TestAgentSummaryKeepsUpWithTheState(t *testing.T) {
	for name, tr := range map[string]traces.Trace{
		"supervisor-agenttool": runFlow(t, "supervisor-agenttool", ""), "supervisor": runFlow(t, "supervisor", ""),
		"agenttool": webtest.AgentTool(), "long": webtest.Big(150), "request after input": requestAfterInput(),
	} {
		v, travel := web.NewViewState(tr.Run, tr.Agents), web.NewTravelEvery(7)
		for _, e := range tr.Events {
			v.Add(e)
			cut, at := web.Prefix(tr, e.Seq), travel.At(tr, e.Seq)
			for _, a := range tr.Agents {
				want, err := web.NewAgentSummary(cut, a.Name)
				if err != nil {
					t.Fatal(err)
				}
				got, err := v.AgentSummary(a.Name)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: the state's summary of %s after #%d (%v) differs from the trace cut there's:\n%+v\n%+v", name, a.Name, e.Seq, err, got, want)
				}
				if got, err := at.AgentSummary(a.Name); err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: the travel's summary of %s as of #%d (%v) differs from the trace cut there's", name, a.Name, e.Seq, err)
				}
			}
		}
		for _, a := range tr.Agents {
			s, err := v.AgentSummary(a.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range s.Calls {
				in, err := web.NewInspection(tr, c.Seq)
				if err != nil {
					t.Fatal(err)
				}
				if want, got := fact(in, "prompt by origin"), originsText(c.ByOrigin); want != "" && want != got {
					t.Errorf("%s: %s's call #%d counts %q, its inspector %q", name, a.Name, c.Seq, got, want)
				}
				// The page's inspector, from the state that classified every input before.
				live, err := v.Inspection(c.Seq)
				if err != nil {
					t.Fatal(err)
				}
				if want, got := fact(live, "prompt by origin"), originsText(c.ByOrigin); want != "" && want != got {
					t.Errorf("%s: %s's call #%d counts %q, the state's inspector %q", name, a.Name, c.Seq, got, want)
				}
			}
		}
	}
}

// TestAgentSummaryCountsARequestSentLater: a message an agent was fed as the user's, then sent it
// by an AgentTool call, counts as the user's input in the call before and as the request in the
// call after, though both calls were fed the same conversation.
func TestAgentSummaryCountsARequestSentLater(t *testing.T) {
	s, err := web.NewAgentSummary(requestAfterInput(), "helper")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Calls) != 2 {
		t.Fatalf("%d calls, want helper's 2", len(s.Calls))
	}
	for k, want := range []web.Origin{web.OriginUserInput, web.OriginAgentToolRequest} {
		if by := s.Calls[k].ByOrigin; len(by) != 1 || by[0].Origin != want {
			t.Errorf("call %d by origin %+v, want all %s", k+1, by, want)
		}
	}
}

// requestAfterInput is a run whose helper is fed the run's input, then sent the same text as an
// AgentTool request, and fed the same conversation again.
func requestAfterInput() traces.Trace {
	b := webtest.New("r-req", "agenttool", "check the ledger",
		traces.Agent{Name: "boss", Kind: traces.AgentChatModel},
		traces.Agent{Name: "helper", Kind: traces.AgentChatModel, Parent: "boss", Relation: traces.RelationAgentTool})
	input := []traces.Message{webtest.Msg("user", "check the ledger")}
	b.Start("helper", "run", input...)
	b.Model("helper", input, nil, webtest.Msg("assistant", "checked"), 20)
	b.Start("boss", "run", input...)
	b.Add(traces.Event{Kind: traces.KindAgentToolEnter, Agent: "boss", AgentTool: &traces.AgentToolCall{Caller: "boss", Callee: "helper", CallID: "c1", Request: "check the ledger"}})
	b.Model("helper", input, nil, webtest.Msg("assistant", "checked again"), 20)
	return b.End(traces.StatusCompleted, "")
}

// fact returns the value of in's fact label, "" when it has none.
func fact(in web.Inspection, label string) string {
	for _, f := range in.Facts {
		if f.Label == label {
			return f.Value
		}
	}
	return ""
}

// originsText writes a prompt's tokens by origin as a model call's inspector does.
func originsText(by []web.OriginTokens) string {
	parts := make([]string, len(by))
	for k, o := range by {
		parts[k] = fmt.Sprintf("%s %d", o.Origin, o.Tokens)
	}
	return strings.Join(parts, ", ") + " (" + web.Estimator + ")"
}
