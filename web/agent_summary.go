package web

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// AgentSummary is the inspector for one agent: how it was reached, what it did, and what each of
// its model calls was fed, by origin. It lists the newest SummaryShown of its starts, handoffs and
// model calls, and charts every call.
type AgentSummary struct {
	Name         string
	Colour       int
	Kind         traces.AgentKind
	Description  string
	Parent       string
	Relation     traces.Relation
	State        State
	Starts       []Ref // its newest agent.started, labelled with how control reached the agent
	StartCount   int   // how many it had
	Handoffs     []Ref // the newest transfers and AgentTool calls to and from the agent
	HandoffCount int   // how many there were
	ModelCalls   int
	ToolCalls    int
	Tokens       int          // total tokens its model reported
	Cost         string       // what they cost, as Stats.Cost
	Calls        []PromptCall // its newest model calls; Chart.Calls counts them all
	Chart        PromptChart
	Breaks       []BreakHere // the breakpoints its node offers
}

// SummaryShown is how many of an agent's newest starts, handoffs and model calls its summary
// lists: an agent of a long run has tens of thousands of each, which no one reads as a list
// (its chart draws every call).
const SummaryShown = 100

// FirstCall is the number, from 1 among all the agent's calls, of the first call s lists.
func (s AgentSummary) FirstCall() int { return s.Chart.Calls - len(s.Calls) + 1 }

// PromptCall is one model call's prompt.
type PromptCall struct {
	Seq      int64 // model.started
	Finished int64 // model.finished, 0 while the call goes on
	Visit    int   // which of the agent's starts it belongs to, from 1
	// Reported is the prompt size the model reported; Known is false when it reported none.
	Reported int
	Known    bool
	// ByOrigin is the prompt's text counted by Estimator, per origin in Origins order, only
	// origins present; Estimate is their sum.
	ByOrigin []OriginTokens
	Estimate int
}

// OriginTokens is how many tokens of a prompt came from one origin.
type OriginTokens struct {
	Origin Origin
	Tokens int
}

// NewAgentSummary returns the inspector for agent name in tr, or an error with
// traces.CodeNotFound when tr has no such agent.
func NewAgentSummary(tr traces.Trace, name string, opts ...Option) (AgentSummary, error) {
	t, logs := newTreeState(tr.Agents), newAgentLogs(pricingOf(tr.Run, opts))
	for i := range tr.Events {
		t.add(tr.Events, i)
		logs.add(tr.Events, i)
	}
	return summaryOf(tr, t, logs, tokenCache{}, name)
}

// AgentSummary is NewAgentSummary of the events the state took in, read from what it kept of
// them as they came: it costs the agent's own events (its calls' prompts, counted at the first
// summary that lists them), not the run's.
func (v *ViewState) AgentSummary(name string) (AgentSummary, error) {
	a := v.a
	return summaryOf(a.tr, a.tree, a.inspect.agents, a.inspect.counts, name)
}

// summaryOf returns the inspector of agent name of tr, whose tree is t and agent logs logs, its
// prompts counted with tokens; or an error with traces.CodeNotFound.
func summaryOf(tr traces.Trace, t *treeState, logs *agentLogs, tokens tokenCache, name string) (AgentSummary, error) {
	s, ok := summarise(tr, t, logs, tokens, name)
	if !ok {
		return AgentSummary{}, traces.Errorf(traces.CodeNotFound, "run %s has no agent %q", tr.Run.ID, name)
	}
	return s, nil
}

// summarise returns the inspector of agent name, as summaryOf; ok is false when t has no such
// agent.
func summarise(tr traces.Trace, t *treeState, logs *agentLogs, tokens tokenCache, name string) (s AgentSummary, ok bool) {
	m := t.roster.byName[name]
	if m == nil {
		return AgentSummary{}, false
	}
	x := t.stateOf(name)
	s = AgentSummary{
		Name: name, Colour: m.colour, Kind: m.Kind, Description: m.Description, Parent: m.Parent, Relation: m.Relation,
		State: x.state, ModelCalls: x.modelCalls, ToolCalls: x.toolCalls, Tokens: x.tokens,
		Breaks: agentBreaks(name), Cost: logs.pricing.Sum().Text(),
	}
	g := logs.agents[name]
	if g == nil {
		s.Chart = newPromptChart(nil, nil)
		return s, true
	}
	ev := tr.Events
	s.StartCount, s.HandoffCount = len(g.starts), len(g.handoffs)
	for _, i := range newest(g.starts) {
		run := *ev[i].AgentRun
		run.Via = firstNonEmpty(run.Via, "run")
		s.Starts = append(s.Starts, Ref{Label: startedHow(&run), Seq: ev[i].Seq})
	}
	for _, i := range newest(g.handoffs) {
		s.Handoffs = append(s.Handoffs, Ref{Label: handoffLabel(&ev[i]), Seq: ev[i].Seq})
	}
	s.Calls, s.Chart = logs.prompts(name, ev, tokens)
	s.Cost = g.cost.Text()
	return s, true
}

// newest returns the last SummaryShown of events.
func newest(events []int32) []int32 { return events[len(events)-min(len(events), SummaryShown):] }

// handoffLabel names a transfer or an AgentTool call in an agent's summary.
func handoffLabel(e *traces.Event) string {
	if t := e.Transfer; t != nil {
		return fmt.Sprintf("transfer %s → %s (%s)", t.From, t.To, t.Mode)
	}
	return fmt.Sprintf("AgentTool %s → %s", e.AgentTool.Caller, e.AgentTool.Callee)
}

// agentSummaries returns the inspectors of the agents names that a's tree has, in that order.
func agentSummaries(a *analysis, names []string) []AgentSummary {
	out := make([]AgentSummary, 0, len(names))
	for _, name := range names {
		if s, ok := summarise(a.tr, a.tree, a.inspect.agents, a.inspect.counts, name); ok {
			out = append(out, s)
		}
	}
	return out
}

// PromptChart is a stacked bar chart of an agent's prompts, one bar per model call, split by
// origin; Visits mark where a new start of the agent (after a transfer back, say) begins. Sizes
// are in SVG user units.
type PromptChart struct {
	Width, Height float64
	Top, Bottom   float64 // y of the largest bar's top and of the baseline
	Max           int     // the largest prompt, in Estimator tokens
	Bars          []ChartBar
	Visits        []ChartMark
	// Calls is the number of model calls charted; Per, when over 1, the calls each bar stands
	// for: past chartMaxBars calls, each bar is a run of consecutive calls, drawn as the largest
	// prompt among them.
	Calls, Per int
}

// ChartBar is one model call's bar, or, when the chart aggregates, the bar of calls First to
// Last (numbered from 1 for the agent's first), drawn as the largest of them (its Seq and Segs).
type ChartBar struct {
	X, W        float64
	Seq         int64
	Label       string // the call's number, or "First–Last"; empty when the row has no room for it
	Total       int
	Segs        []ChartSeg
	First, Last int
	Mean        int // the calls' mean prompt, in Estimator tokens
}

// ChartSeg is one origin's part of a bar.
type ChartSeg struct {
	Origin Origin
	Y, H   float64
	Tokens int
}

// ChartMark is a vertical line before the first call of a visit.
type ChartMark struct {
	X     float64
	Visit int
}

// Chart geometry: the plot sits right of an axis label column and above a row of call numbers.
const (
	chartWidth  = 360
	chartHeight = 150
	chartLeft   = 44
	chartTop    = 14
	chartBottom = 130
	chartMaxBar = 34
	// chartMaxBars is the most bars a chart draws: past it (an agent of 960 calls) each bar
	// stands for a run of consecutive calls, so that bars stay wide enough to see and to point at.
	chartMaxBars = 40
	// chartMaxLabels is the most call numbers written under the bars.
	chartMaxLabels = 10
)

// chartCall is what a prompt chart draws of one call: its seq, visit and prompt size.
type chartCall struct {
	seq             int64
	visit, estimate int
}

// newPromptChart charts calls; byOrigin(k) returns the k-th's prompt by origin, asked of the
// calls a bar draws.
func newPromptChart(calls []chartCall, byOrigin func(k int) []OriginTokens) PromptChart {
	ch := PromptChart{Width: chartWidth, Height: chartHeight, Top: chartTop, Bottom: chartBottom, Calls: len(calls), Per: 1}
	for _, c := range calls {
		ch.Max = max(ch.Max, c.estimate)
	}
	if len(calls) == 0 || ch.Max == 0 {
		return ch
	}
	ch.Per = (len(calls) + chartMaxBars - 1) / chartMaxBars
	bars := (len(calls) + ch.Per - 1) / ch.Per
	labelEvery := (bars + chartMaxLabels - 1) / chartMaxLabels
	slot := (chartWidth - chartLeft) / float64(bars)
	w := min(chartMaxBar, slot*0.7)
	scale := (chartBottom - chartTop) / float64(ch.Max)
	for k := range bars {
		from := k * ch.Per
		group := calls[from:min(len(calls), from+ch.Per)]
		top, sum := 0, 0
		for i, c := range group {
			sum += c.estimate
			if c.estimate > group[top].estimate {
				top = i
			}
		}
		c := group[top]
		first, last := from+1, from+len(group)
		x := chartLeft + slot*float64(k) + (slot-w)/2
		bar := ChartBar{X: x, W: w, Seq: c.seq, Total: c.estimate, First: first, Last: last, Mean: sum / len(group)}
		if k%labelEvery == 0 {
			bar.Label = fmt.Sprint(first)
			if last > first {
				bar.Label += "–" + fmt.Sprint(last)
			}
		}
		y := float64(chartBottom)
		for _, o := range byOrigin(from + top) {
			h := float64(o.Tokens) * scale
			y -= h
			bar.Segs = append(bar.Segs, ChartSeg{Origin: o.Origin, Y: y, H: h, Tokens: o.Tokens})
		}
		ch.Bars = append(ch.Bars, bar)
		if v := group[len(group)-1].visit; k > 0 && v != calls[from-1].visit { // a visit begins in the bar
			ch.Visits = append(ch.Visits, ChartMark{X: chartLeft + slot*float64(k), Visit: v})
		}
	}
	if len(ch.Visits) > chartMaxLabels { // a line per visit would hide the bars: none
		ch.Visits = nil
	}
	return ch
}
