package web_test

import (
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

// TestPromptChartAggregates: an agent of some 960 model calls gets at most 40 bars, each standing
// for the same number of consecutive calls (every call in exactly one), drawn as the largest
// prompt among them and pointing at that call, with at most 10 call numbers written under them.
func TestPromptChartAggregates(t *testing.T) {
	tr := webtest.Large(15_400)
	s, err := web.NewAgentSummary(tr, "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	ch := s.Chart
	if len(s.Calls) < 900 || ch.Calls != len(s.Calls) {
		t.Fatalf("%d calls, chart of %d: want the supervisor's ~960", len(s.Calls), ch.Calls)
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
