package web

import (
	"fmt"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// AgentSummary is the inspector for one agent: how it was reached, what it did, and what each of
// its model calls was fed, by origin.
type AgentSummary struct {
	Name        string
	Colour      int
	Kind        traces.AgentKind
	Description string
	Parent      string
	Relation    traces.Relation
	State       State
	Starts      []Ref // each agent.started, labelled with how control reached the agent
	Handoffs    []Ref // transfers and AgentTool calls to and from the agent
	ModelCalls  int
	ToolCalls   int
	Tokens      int    // total tokens its model reported
	Cost        string // what they cost, as Stats.Cost
	Calls       []PromptCall
	Chart       PromptChart
	Breaks      []BreakHere // the breakpoints its node offers
}

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
	return summaryOf(tr, treeOf(tr), name, pricingOf(tr.Run, opts))
}

// AgentSummary is NewAgentSummary of the events the state took in, on the tree it already has.
func (v *ViewState) AgentSummary(name string) (AgentSummary, error) {
	return summaryOf(v.Trace(), v.a.tree, name, v.a.pricing)
}

// summaryOf returns the inspector of agent name of tr, whose tree is t, or an error with
// traces.CodeNotFound.
func summaryOf(tr traces.Trace, t *treeState, name string, pricing prices.Run) (AgentSummary, error) {
	out := agentSummaries(tr, t, []string{name}, pricing)
	if len(out) == 0 {
		return AgentSummary{}, traces.Errorf(traces.CodeNotFound, "run %s has no agent %q", tr.Run.ID, name)
	}
	return out[0], nil
}

// agentSummaries returns the inspectors of the agents names that tr's tree t has, in that order,
// in one pass over its events for all of them: a report summarises every agent, and a pass per
// agent would grow with agents times events. Their model calls cost rate.
func agentSummaries(tr traces.Trace, t *treeState, names []string, pricing prices.Run) []AgentSummary {
	out := make([]AgentSummary, 0, len(names))
	at := make(map[string]int, len(names))
	for _, name := range names {
		m := t.roster.byName[name]
		if m == nil {
			continue
		}
		x := t.stateOf(name)
		at[name] = len(out)
		out = append(out, AgentSummary{
			Name: name, Colour: m.colour, Kind: m.Kind, Description: m.Description, Parent: m.Parent, Relation: m.Relation,
			State: x.state, ModelCalls: x.modelCalls, ToolCalls: x.toolCalls, Tokens: x.tokens,
			Breaks: agentBreaks(name),
		})
	}
	// of returns the summaries of the agents a and b (once when they are one), those summarised.
	of := func(a, b string) []*AgentSummary {
		var ss []*AgentSummary
		if k, ok := at[a]; ok {
			ss = append(ss, &out[k])
		}
		if k, ok := at[b]; ok && b != a {
			ss = append(ss, &out[k])
		}
		return ss
	}
	finished := map[[2]string]*traces.Event{} // model.finished by agent and call id
	cost := make([]prices.Sum, len(out))
	for k := range cost {
		cost[k] = pricing.Sum()
	}
	for i := range tr.Events {
		if e := &tr.Events[i]; e.Kind == traces.KindModelFinished && e.Model != nil {
			finished[[2]string{e.Agent, e.Model.ID}] = e
			if k, ok := at[e.Agent]; ok {
				addCost(&cost[k], pricing, e.Model)
			}
		}
	}
	tokens, index := tokenCache{}, newSourceIndex()
	for i := range tr.Events {
		e := &tr.Events[i]
		switch {
		case e.Kind == traces.KindAgentStarted && e.AgentRun != nil:
			for _, s := range of(e.Agent, e.Agent) {
				run := *e.AgentRun
				run.Via = firstNonEmpty(run.Via, "run")
				s.Starts = append(s.Starts, Ref{Label: startedHow(&run), Seq: e.Seq})
			}
		case e.Kind == traces.KindTransfer && e.Transfer != nil:
			for _, s := range of(e.Transfer.From, e.Transfer.To) {
				s.Handoffs = append(s.Handoffs, Ref{Label: fmt.Sprintf("transfer %s → %s (%s)", e.Transfer.From, e.Transfer.To, e.Transfer.Mode), Seq: e.Seq})
			}
		case e.Kind == traces.KindAgentToolEnter && e.AgentTool != nil:
			for _, s := range of(e.AgentTool.Caller, e.AgentTool.Callee) {
				s.Handoffs = append(s.Handoffs, Ref{Label: fmt.Sprintf("AgentTool %s → %s", e.AgentTool.Caller, e.AgentTool.Callee), Seq: e.Seq})
			}
		case e.Kind == traces.KindModelStarted && e.Model != nil:
			for _, s := range of(e.Agent, e.Agent) {
				s.Calls = append(s.Calls, promptCall(tr, i, len(s.Starts), finished[[2]string{e.Agent, e.Model.ID}], tokens, index))
			}
		}
	}
	for k := range out {
		out[k].Chart = newPromptChart(out[k].Calls)
		out[k].Cost = cost[k].Text()
	}
	return out
}

// promptCall counts the prompt of the model call started at index i; tokens and index may be
// shared by the calls of one trace, taken in trace order.
func promptCall(tr traces.Trace, i, visit int, fin *traces.Event, tokens tokenCache, index *sourceIndex) PromptCall {
	e := &tr.Events[i]
	c := PromptCall{Seq: e.Seq, Visit: visit}
	if fin != nil {
		c.Finished = fin.Seq
		if fin.Model.Usage != nil {
			c.Reported, c.Known = fin.Model.Usage.PromptTokens, true
		}
	}
	counts := index.promptTokens(tr, i, e.Agent, e.Model.Input, tokens)
	for k, o := range Origins {
		if n := counts[k]; n > 0 {
			c.ByOrigin = append(c.ByOrigin, OriginTokens{Origin: o, Tokens: n})
			c.Estimate += n
		}
	}
	return c
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

func newPromptChart(calls []PromptCall) PromptChart {
	ch := PromptChart{Width: chartWidth, Height: chartHeight, Top: chartTop, Bottom: chartBottom, Calls: len(calls), Per: 1}
	for _, c := range calls {
		ch.Max = max(ch.Max, c.Estimate)
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
		group := calls[k*ch.Per : min(len(calls), (k+1)*ch.Per)]
		top, sum := 0, 0
		for i, c := range group {
			sum += c.Estimate
			if c.Estimate > group[top].Estimate {
				top = i
			}
		}
		c := group[top]
		first, last := k*ch.Per+1, k*ch.Per+len(group)
		x := chartLeft + slot*float64(k) + (slot-w)/2
		bar := ChartBar{X: x, W: w, Seq: c.Seq, Total: c.Estimate, First: first, Last: last, Mean: sum / len(group)}
		if k%labelEvery == 0 {
			bar.Label = fmt.Sprint(first)
			if last > first {
				bar.Label += "–" + fmt.Sprint(last)
			}
		}
		y := float64(chartBottom)
		for _, o := range c.ByOrigin {
			h := float64(o.Tokens) * scale
			y -= h
			bar.Segs = append(bar.Segs, ChartSeg{Origin: o.Origin, Y: y, H: h, Tokens: o.Tokens})
		}
		ch.Bars = append(ch.Bars, bar)
		if v := group[len(group)-1].Visit; k > 0 && v != calls[k*ch.Per-1].Visit { // a visit begins in the bar
			ch.Visits = append(ch.Visits, ChartMark{X: chartLeft + slot*float64(k), Visit: v})
		}
	}
	if len(ch.Visits) > chartMaxLabels { // a line per visit would hide the bars: none
		ch.Visits = nil
	}
	return ch
}
