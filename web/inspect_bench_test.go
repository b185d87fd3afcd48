package web_test

import (
	"testing"

	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// longTrace records a run of agentstest.Long(n): one agent whose prompt grows with every call.
func longTrace(b *testing.B, n int) traces.Trace {
	b.Helper()
	flow := agentstest.Long(n)
	rec := traces.NewRecording(traces.Run{ID: "r-long", Flow: flow.Name, Input: flow.DefaultInput}, flow.Agents)
	if status := agentsRun(flow, rec); status != traces.StatusCompleted {
		b.Fatalf("long run ended %s", status)
	}
	web.CountTokens("load the tokenizer before timing") // once per process, ~0.1-0.3 s
	tr := rec.Snapshot()
	b.Logf("%d events", len(tr.Events))
	return tr
}

// BenchmarkInspectLastModelCall: the inspector of the last model call of a long run, whose input
// is the whole history: origins classified against the trace, tokens counted by origin.
func BenchmarkInspectLastModelCall(b *testing.B) {
	tr := longTrace(b, 1000)
	var last int64
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted {
			last = e.Seq
		}
	}
	for b.Loop() {
		if _, err := web.NewInspection(tr, last); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAgentSummaryLong: the summary of the long run's agent, every call's prompt counted.
func BenchmarkAgentSummaryLong(b *testing.B) {
	tr := longTrace(b, 1000)
	for b.Loop() {
		if _, err := web.NewAgentSummary(tr, "long_agent"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkComparison4: the comparison of the four mechanisms' runs of one task.
func BenchmarkComparison4(b *testing.B) {
	var trs []traces.Trace
	for _, f := range []string{"supervisor-agenttool", "supervisor", "transfer", "pipeline"} {
		trs = append(trs, runFlow(b, f, "Find US and NY GDP in 2024. What % of US GDP was NY?"))
	}
	for b.Loop() {
		web.NewComparison(trs)
	}
}

// BenchmarkTimelineLong: every timeline row of the long run (3,307 events), search text
// included. It reports the search text's size against what it would be if each input carried
// its whole history (which repeats all earlier messages: quadratic in the run's length).
func BenchmarkTimelineLong(b *testing.B) {
	tr := longTrace(b, 1000)
	var rows []web.Row
	for b.Loop() {
		rows = web.NewTimeline(tr, 0)
	}
	search, whole := 0, 0
	for i, r := range rows {
		search += len(r.Search)
		e := tr.Events[i]
		whole += len(r.Search)
		if e.Model != nil && e.Kind == traces.KindModelStarted {
			for _, m := range e.Model.Input {
				whole += len(m.Content)
				for _, c := range m.ToolCalls {
					whole += len(c.Name) + len(c.Arguments)
				}
			}
		}
	}
	b.ReportMetric(float64(search)/1e6, "MB-search")
	b.ReportMetric(float64(whole)/1e6, "MB-whole-inputs")
}
