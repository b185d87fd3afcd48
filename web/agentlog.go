package web

import (
	"maps"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// agentLogs is the agent summaries' part of the inspector's piece (inspectIndex): for each agent,
// the events its summary lists (its starts, the transfers and AgentTool calls it was in, its model
// calls and the ends paired with them) and what its calls cost, kept as the events come, so that a
// summary reads the agent's own events, never the run's. What each call's prompt holds by origin
// is counted when a summary first asks, then kept: tokenizing every prompt as the run goes would
// weigh on every run for the few agents anyone inspects.
//
// Events are kept as their index in the run's events, an int32: a run of 2^31 events would hold
// some 800 GB.
type agentLogs struct {
	pricing prices.Run
	agents  map[string]*agentLog
	// requests holds each AgentTool request by its callee and text (requestKey), with the seq of
	// the first agenttool.entered that sent it; requested each callee's agenttool.entered seqs, in
	// order. A user message an agent received is the request it was sent when one was sent before.
	requests  map[msgKey]int64
	requested requestSeqs
}

// agentLog is what the events say of one agent's summary.
type agentLog struct {
	starts   []int32 // its agent.started events
	handoffs []int32 // the transfers and AgentTool calls it was in, as caller, callee, from or to
	calls    []int32 // its model.started events
	ends     []callEnd
	open     map[string]int32 // the calls not ended yet, by call id: their number in calls
	cost     prices.Sum       // what its model.finished events reported, priced

	// counted is the prompts of its first calls by origin, counted as summaries asked; chain the
	// input counted last, to go on from.
	counted [][numOrigins]int
	chain   promptChain
}

// callEnd pairs a model call (its number in calls) with the model.finished that ended it.
type callEnd struct{ call, end int32 }

// promptChain is the input of an agent's model call last counted (at seq before), with the tokens
// by origin of its first k messages in cum[k]: the next call's input, a growing conversation,
// counts only what it adds.
type promptChain struct {
	msgs   []traces.Message
	cum    [][numOrigins]int
	before int64
}

func newAgentLogs(pricing prices.Run) *agentLogs {
	return &agentLogs{pricing: pricing, agents: make(map[string]*agentLog), requests: make(map[msgKey]int64), requested: requestSeqs{}}
}

// of returns agent name's log, made when it has none; nil for no agent.
func (l *agentLogs) of(name string) *agentLog {
	if name == "" {
		return nil
	}
	g := l.agents[name]
	if g == nil {
		g = &agentLog{open: make(map[string]int32), cost: l.pricing.Sum()}
		l.agents[name] = g
	}
	return g
}

// add takes in event i of ev.
func (l *agentLogs) add(ev []traces.Event, i int) {
	e, at := &ev[i], int32(i)
	switch {
	case e.Kind == traces.KindAgentStarted && e.AgentRun != nil:
		if g := l.of(e.Agent); g != nil {
			g.starts = append(g.starts, at)
		}
	case e.Kind == traces.KindTransfer && e.Transfer != nil:
		l.handoff(e.Transfer.From, e.Transfer.To, at)
	case e.Kind == traces.KindAgentToolEnter && e.AgentTool != nil:
		c := e.AgentTool
		l.handoff(c.Caller, c.Callee, at)
		if k := requestKey(c.Callee, c.Request); l.requests[k] == 0 {
			l.requests[k] = e.Seq
		}
		l.requested[c.Callee] = append(l.requested[c.Callee], e.Seq)
	case e.Kind == traces.KindModelStarted && e.Model != nil:
		if g := l.of(e.Agent); g != nil {
			g.open[e.Model.ID] = int32(len(g.calls))
			g.calls = append(g.calls, at)
		}
	case e.Kind == traces.KindModelFinished && e.Model != nil:
		if g := l.of(e.Agent); g != nil {
			// A call id may come again (a run resumed into a call): an end closes the newest call
			// of its id not ended yet.
			if k, ok := g.open[e.Model.ID]; ok {
				g.ends = append(g.ends, callEnd{call: k, end: at})
				delete(g.open, e.Model.ID)
			}
			addCost(&g.cost, l.pricing, e.Model)
		}
	}
}

// handoff logs event at for agents a and b, once when they are one.
func (l *agentLogs) handoff(a, b string, at int32) {
	if g := l.of(a); g != nil {
		g.handoffs = append(g.handoffs, at)
	}
	if g := l.of(b); g != nil && b != a {
		g.handoffs = append(g.handoffs, at)
	}
}

// clone returns a copy of l that shares nothing a later add changes (the logs only grow: the copy
// shares them capped). The prompts counted are a memo the copy starts anew.
func (l *agentLogs) clone() *agentLogs {
	c := &agentLogs{pricing: l.pricing, agents: make(map[string]*agentLog, len(l.agents)), requests: maps.Clone(l.requests),
		requested: l.requested.clone()}
	for k, g := range l.agents {
		c.agents[k] = &agentLog{starts: capped(g.starts), handoffs: capped(g.handoffs), calls: capped(g.calls), ends: capped(g.ends),
			open: maps.Clone(g.open), cost: g.cost}
	}
	return c
}

// prompts returns the newest SummaryShown of agent name's model calls with their prompts by
// origin, and the chart of them all, counting with tokens the prompts no summary counted yet. ev
// are the run's events the logs took in.
func (l *agentLogs) prompts(name string, ev []traces.Event, tokens tokenCache) ([]PromptCall, PromptChart) {
	g := l.agents[name]
	if g == nil || len(g.calls) == 0 {
		return nil, newPromptChart(nil, nil)
	}
	for k := len(g.counted); k < len(g.calls); k++ {
		g.counted = append(g.counted, l.count(g, name, &ev[g.calls[k]], tokens))
	}
	charted := make([]chartCall, len(g.calls))
	visit := 0
	for k, i := range g.calls {
		for visit < len(g.starts) && g.starts[visit] < i { // its visit: the starts before it
			visit++
		}
		charted[k] = chartCall{seq: ev[i].Seq, visit: visit, estimate: promptSize(g.counted[k])}
	}
	first := len(g.calls) - min(len(g.calls), SummaryShown)
	out := make([]PromptCall, len(g.calls)-first)
	for k := range out {
		c := charted[first+k]
		out[k] = PromptCall{Seq: c.seq, Visit: c.visit, Estimate: c.estimate}
		out[k].ByOrigin, _ = byOrigin(g.counted[first+k])
	}
	for _, x := range g.ends {
		if k := int(x.call) - first; k >= 0 {
			c, m := &out[k], ev[x.end].Model
			c.Finished = ev[x.end].Seq
			if m.Usage != nil {
				c.Reported, c.Known = m.Usage.PromptTokens, true
			}
		}
	}
	return out, newPromptChart(charted, func(k int) []OriginTokens {
		by, _ := byOrigin(g.counted[k])
		return by
	})
}

// promptSize returns the tokens of a prompt, all origins together.
func promptSize(counts [numOrigins]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// count returns the tokens by origin of the prompt of model call e, agent name's next call not
// counted yet, going on from the input counted before it where they begin alike.
func (l *agentLogs) count(g *agentLog, name string, e *traces.Event, tokens tokenCache) [numOrigins]int {
	msgs, c := e.Model.Input, &g.chain
	shared := sharedMessages(c.msgs, msgs)
	if l.requested.between(name, c.before, e.Seq) {
		shared = 0 // a message counted as the user's may be a request sent since
	}
	if len(c.cum) == 0 {
		c.cum = append(c.cum, [numOrigins]int{})
	}
	c.cum = c.cum[:shared+1]
	for _, m := range msgs[shared:] {
		sum := c.cum[len(c.cum)-1]
		o := textOrigin(m)
		if o == "" {
			o = OriginUserInput
			if first, ok := l.requests[requestKey(name, m.Content)]; ok && first < e.Seq {
				o = OriginAgentToolRequest
			}
		}
		tokens.add(&sum, o, m)
		c.cum = append(c.cum, sum)
	}
	c.msgs, c.before = msgs, e.Seq
	return c.cum[len(msgs)]
}

// byOrigin returns a prompt's tokens by origin (counts, in Origins' order), the origins present
// only, and their sum.
func byOrigin(counts [numOrigins]int) ([]OriginTokens, int) {
	var out []OriginTokens
	sum := 0
	for k, o := range Origins {
		if n := counts[k]; n > 0 {
			out = append(out, OriginTokens{Origin: o, Tokens: n})
			sum += n
		}
	}
	return out, sum
}
