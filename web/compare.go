package web

import (
	"fmt"
	"slices"
	"time"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// Comparison sets runs of one task under several mechanisms side by side. Every figure comes
// from the runs' traces, and every cell names the events it comes from.
type Comparison struct {
	Rows []Mechanism
	// SameInput is set when every run had the same input.
	SameInput bool
	// Estimated is set when some prompt size was counted by Estimator, the model having
	// reported no usage.
	Estimated bool
}

// Mechanism is one run's row of a Comparison.
type Mechanism struct {
	RunID  string
	Flow   string
	Input  string
	Status traces.Status
	// ModelCalls refs each call's model.finished (its model.started when it never finished).
	ModelCalls Cell
	// PromptTokens is the sum of every call's prompt; LargestPrompt the largest one. A call's
	// prompt is its model's reported usage, else Estimator's count of its input.
	PromptTokens, LargestPrompt Cell
	// Estimated is set when some call's prompt was counted by Estimator.
	Estimated bool
	// Cost is what the reported tokens cost at the run's model's price (as Stats.Cost; its Text
	// is "" when the model has no price), with the calls that reported usage.
	Cost Cell
	// Crossed counts the messages that crossed from one agent to another: "For context:"
	// rewrites and AgentTool requests in the history an agent started with (ref: that
	// agent.started), and AgentTool answers going back (ref: agenttool.exited).
	Crossed Cell
	// Handoffs is every handoff, and who chose it.
	Handoffs []Handoff
	// ByModel and ByCode count Handoffs by chooser.
	ByModel, ByCode int
	// Actions lists the events that carry an eino action (transfer, exit, breakloop,
	// interrupted) and whether it crossed to another agent.
	Actions []Action
	// Wall is the run's wall time, from run.started to run.finished.
	Wall Cell
}

// Cell is one figure and the events it comes from.
type Cell struct {
	N    int
	Text string
	Refs []int64
}

// Handoff is one handoff: From handed To the work, chosen by "model" or "code".
type Handoff struct {
	From, To string
	Via      string // "transfer", "agenttool" or "workflow"
	ChosenBy string
	Seq      int64
}

// Action is one event carrying an eino action. Crossed is false when the action stopped at an
// AgentTool boundary (an exit or transfer inside an agent called as a tool). Ended is set on an
// exit that ended the run: it crossed, and no agent, model or tool started after it.
type Action struct {
	Kind    traces.Kind
	Agent   string
	Crossed bool
	Ended   bool
	Seq     int64
}

// NewComparison compares the runs trs, one row each, in the order given, their model calls
// priced as opts say.
func NewComparison(trs []traces.Trace, opts ...Option) Comparison {
	c := Comparison{SameInput: true}
	for i, tr := range trs {
		m := newMechanism(tr)
		m.cost(tr, pricingOf(tr.Run, opts))
		c.Estimated = c.Estimated || m.Estimated
		c.SameInput = c.SameInput && (i == 0 || m.Input == c.Rows[0].Input)
		c.Rows = append(c.Rows, m)
	}
	return c
}

func newMechanism(tr traces.Trace) Mechanism {
	m := Mechanism{RunID: tr.Run.ID, Flow: tr.Run.Flow, Input: tr.Run.Input, Status: runStatus(tr)}
	m.modelCalls(tr)
	m.crossings(tr)
	m.routes(tr)
	m.wall(tr)
	return m
}

// modelCalls fills ModelCalls, PromptTokens and LargestPrompt.
func (m *Mechanism) modelCalls(tr traces.Trace) {
	type call struct {
		ref    int64
		input  []traces.Message // counted only when the model reports no usage
		prompt int
		est    bool
	}
	var calls []*call
	open := map[string]*call{} // by agent and call id, until finished
	estimated := false
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Model == nil {
			continue
		}
		key := e.Agent + "\x00" + e.Model.ID
		switch e.Kind {
		case traces.KindModelStarted:
			c := &call{ref: e.Seq, input: e.Model.Input, est: true}
			calls, open[key] = append(calls, c), c
		case traces.KindModelFinished:
			c := open[key]
			if c == nil { // a trace cut before the call started
				c = &call{est: true}
				calls = append(calls, c)
			}
			delete(open, key)
			c.ref = e.Seq
			if u := e.Model.Usage; u != nil {
				c.prompt, c.est = u.PromptTokens, false
			}
		}
	}
	tokens := tokenCache{}
	var largest *call
	for _, c := range calls {
		if c.est {
			for _, msg := range c.input {
				c.prompt += tokens.message(msg)
			}
		}
		m.ModelCalls.Refs = append(m.ModelCalls.Refs, c.ref)
		m.PromptTokens.N += c.prompt
		estimated = estimated || c.est
		if largest == nil || c.prompt > largest.prompt {
			largest = c
		}
	}
	m.ModelCalls.N = len(calls)
	m.ModelCalls.Text = fmt.Sprint(len(calls))
	m.Estimated = estimated
	m.PromptTokens.Text = tokenText(m.PromptTokens.N, estimated)
	m.PromptTokens.Refs = m.ModelCalls.Refs
	if largest != nil {
		m.LargestPrompt = Cell{N: largest.prompt, Text: tokenText(largest.prompt, largest.est), Refs: []int64{largest.ref}}
	} else {
		m.LargestPrompt.Text = "0"
	}
}

// cost fills Cost at rate.
func (m *Mechanism) cost(tr traces.Trace, pricing prices.Run) {
	sum := pricing.Sum()
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelFinished && e.Model != nil && e.Model.Usage != nil {
			addCost(&sum, pricing, e.Model)
			m.Cost.Refs = append(m.Cost.Refs, e.Seq)
		}
	}
	m.Cost.Text = sum.Text()
}

func tokenText(n int, estimated bool) string {
	if estimated {
		return fmt.Sprintf("%d (%s)", n, Estimator)
	}
	return fmt.Sprint(n)
}

// crossings fills Crossed.
func (m *Mechanism) crossings(tr traces.Trace) {
	index := newSourceIndex()
	for i := range tr.Events {
		e := &tr.Events[i]
		switch {
		case e.Kind == traces.KindAgentStarted && e.AgentRun != nil:
			n := 0
			for _, s := range index.sources(tr, i, e.Agent, e.AgentRun.Input) {
				if s.Origin == OriginContext || s.Origin == OriginAgentToolRequest {
					n++
				}
			}
			if n > 0 {
				m.Crossed.N += n
				m.Crossed.Refs = append(m.Crossed.Refs, e.Seq)
			}
		case e.Kind == traces.KindAgentToolExit && e.AgentTool != nil:
			m.Crossed.N++
			m.Crossed.Refs = append(m.Crossed.Refs, e.Seq)
		}
	}
	m.Crossed.Text = fmt.Sprint(m.Crossed.N)
}

// routes fills Handoffs, ByModel, ByCode and Actions.
func (m *Mechanism) routes(tr traces.Trace) {
	var frames []traces.AgentToolCall // AgentTool calls under way
	var lastWork int64                // the newest agent, model or tool start
	for i := range tr.Events {
		e := &tr.Events[i]
		switch e.Kind {
		case traces.KindAgentStarted, traces.KindModelStarted, traces.KindToolStarted:
			lastWork = e.Seq
		}
		switch {
		case e.Kind == traces.KindTransfer && e.Transfer != nil:
			by := "model"
			if e.Transfer.Mode == traces.TransferDeterministic {
				by = "code"
			}
			m.handoff(Handoff{From: e.Transfer.From, To: e.Transfer.To, Via: "transfer", ChosenBy: by, Seq: e.Seq})
		case e.Kind == traces.KindAgentToolEnter && e.AgentTool != nil:
			m.handoff(Handoff{From: e.AgentTool.Caller, To: e.AgentTool.Callee, Via: "agenttool", ChosenBy: "model", Seq: e.Seq})
			frames = append(frames, *e.AgentTool)
		case e.Kind == traces.KindAgentToolExit && e.AgentTool != nil:
			if k := slices.IndexFunc(frames, func(f traces.AgentToolCall) bool { return f.Callee == e.AgentTool.Callee }); k >= 0 {
				frames = slices.Delete(frames, k, k+1)
			}
		case e.Kind == traces.KindAgentStarted && e.AgentRun != nil && e.AgentRun.Via == "workflow":
			from := ""
			if n := len(e.RunPath); n > 1 {
				from = e.RunPath[n-2]
			}
			m.handoff(Handoff{From: from, To: e.Agent, Via: "workflow", ChosenBy: "code", Seq: e.Seq})
		}
		switch e.Kind {
		case traces.KindTransfer, traces.KindExit, traces.KindBreakLoop, traces.KindInterrupted:
			// An action inside an agent called as a tool stops at that call's boundary; an
			// interrupt crosses it.
			inside := len(frames) > 0 && e.Agent != frames[0].Caller && e.Kind != traces.KindInterrupted
			m.Actions = append(m.Actions, Action{Kind: e.Kind, Agent: e.Agent, Crossed: !inside, Seq: e.Seq})
		}
	}
	for i := range m.Actions {
		a := &m.Actions[i]
		a.Ended = a.Kind == traces.KindExit && a.Crossed && a.Seq > lastWork
	}
}

func (m *Mechanism) handoff(r Handoff) {
	m.Handoffs = append(m.Handoffs, r)
	if r.ChosenBy == "model" {
		m.ByModel++
	} else {
		m.ByCode++
	}
}

// wall fills Wall.
func (m *Mechanism) wall(tr traces.Trace) {
	var start, end *traces.Event
	for i := range tr.Events {
		switch e := &tr.Events[i]; e.Kind {
		case traces.KindRunStarted:
			if start == nil {
				start = e
			}
		case traces.KindRunFinished:
			end = e
		}
	}
	if start == nil || end == nil {
		m.Wall.Text = "unfinished"
		return
	}
	d := end.Time.Sub(start.Time)
	m.Wall = Cell{N: int(d.Milliseconds()), Text: wallText(d), Refs: []int64{end.Seq}}
}

func wallText(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// runStatus is tr's status: its last event's when that is run.finished, else the run's own.
func runStatus(tr traces.Trace) traces.Status {
	if n := len(tr.Events); n > 0 {
		if last := tr.Events[n-1]; last.Kind == traces.KindRunFinished && last.Run != nil && last.Run.Status.Valid() {
			return last.Run.Status
		}
	}
	if tr.Run.Status.Valid() {
		return tr.Run.Status
	}
	return traces.StatusRunning
}
